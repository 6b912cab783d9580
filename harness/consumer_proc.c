/* consumer_proc.c -- `dqlab __child`: one process of a process-mode trial,
 * the child's side (trial_procs.c is the parent's).
 *
 * In consumer mode process (trial.h) the trial forks and execs
 * /proc/self/exe with this hidden subcommand once per consumer, so that a
 * kill-consumer fault is a real SIGKILL of a real process: whatever the
 * consumer held in memory (a claimed task, a batch buffer, an in-process
 * heap) dies with it, as in production.  For an in-process strategy the
 * one child runs the producers and the consumers together: the whole
 * queue lives and dies in that process.
 *
 * The child gets everything on its command line (--key=value, built by
 * trial_procs.c; nobody types it): its role, the strategy and its options,
 * the queue, the log path, its name, slot and generation, the parameters
 * params.c marks for children (parsed by the same table, with the same
 * bounds), the fault specs, and the Redis target (the password comes in
 * the environment variable DQLAB_CHILD_REDIS_PASSWORD, never in argv,
 * which `ps` shows).  From the faults, its slot and its generation each
 * consumer computes its plan (dq_faults_consumer_plan: its clock offset,
 * where it dies or stalls) as the parent does.  It appends its D, A, R and
 * F records to the trial's log through its own O_APPEND descriptor (never the Z
 * record: the parent ends the log once every child is reaped), runs until
 * SIGTERM (the parent's stop) and prints one summary line on stdout.  Its
 * workers run as threads while the main thread reads its stdin, a socket
 * from the parent, one command a line (trial_int.h): "outage 1" stops an
 * all-in-one child's consumer threads (they close their handles while the
 * producers go on), "outage 0" starts them again (a consumer child is
 * stopped by SIGTERM instead); "clock_step <us>" sets the wall-clock
 * step its consumers' handles read (dq_config.clock_step_us: clock-step).
 *
 * It never outlives the parent: PR_SET_PDEATHSIG = SIGKILL is set by the
 * parent between fork and exec, and again here (it survives execve of a
 * non-setuid binary, prctl(2); setting it twice costs nothing).
 *
 * Exit: 0 after a clean stop, 2 on bad arguments or setup errors (one
 * line on stderr, which the parent reads from the pipe).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "commands.h"
#include "params.h"
#include "redis_url.h"
#include "trial_int.h"

#define CHILD_ERR(...)                                                       \
    (fprintf(stderr, "dqlab " DQ_CHILD_COMMAND ": " __VA_ARGS__),            \
     fputc('\n', stderr), 2)

/* What the command line gives besides dq_trial_params. */
typedef struct child_args {
    const char *role, *strategy, *log;
    dq_child_spec c;
    dq_redis_target target;
    char sentinels[64], sentinel_master[64]; /* "" without Sentinel */
} child_args;

/* An integer argument in [lo, hi]. */
static int num(const char *key, const char *v, int64_t lo, int64_t hi,
               int64_t *out)
{
    char *end;
    long long x;

    errno = 0;
    x = strtoll(v, &end, 10);
    if (errno != 0 || *end != '\0' || end == v || x < lo || x > hi)
        return CHILD_ERR("%s: bad value '%.60s'", key, v);
    *out = x;
    return 0;
}

/* One --key=val that is not a parameter of the table.  Returns 0 or 2. */
static int child_arg(child_args *a, dq_trial_params *p, const char *key,
                     const char *val)
{
    char err[512];
    int64_t v;

    if (strcmp(key, "role") == 0) {
        a->role = val;
    } else if (strcmp(key, "strategy") == 0) {
        a->strategy = val;
    } else if (strcmp(key, "queue") == 0) {
        snprintf(p->queue, sizeof p->queue, "%s", val);
    } else if (strcmp(key, "log") == 0) {
        a->log = val;
    } else if (strcmp(key, "name") == 0) {
        a->c.name = val;
    } else if (strcmp(key, "slot") == 0 || strcmp(key, "gen") == 0) {
        if (num(key, val, 0, 1 << 20, &v) != 0)
            return 2;
        *(key[0] == 's' ? &a->c.slot : &a->c.gen) = (int)v;
    } else if (strcmp(key, "host") == 0) {
        snprintf(a->target.host, sizeof a->target.host, "%s", val);
    } else if (strcmp(key, "port") == 0 || strcmp(key, "db") == 0) {
        if (num(key, val, key[0] == 'p' ? 1 : 0,
                key[0] == 'p' ? 65535 : 1 << 20, &v) != 0)
            return 2;
        *(key[0] == 'p' ? &a->target.port : &a->target.db) = (int)v;
    } else if (strcmp(key, "sentinels") == 0) {
        snprintf(a->sentinels, sizeof a->sentinels, "%s", val);
    } else if (strcmp(key, "sentinel-master") == 0) {
        snprintf(a->sentinel_master, sizeof a->sentinel_master, "%s", val);
    } else if (strcmp(key, "user") == 0) {
        snprintf(a->target.user, sizeof a->target.user, "%s", val);
    } else if (strcmp(key, "opt") == 0) {
        if (p->nopts >= DQ_MAX_OPTS ||
            dq_opt_parse(val, &p->opts[p->nopts++], err, sizeof err) != DQ_OK)
            return CHILD_ERR("opt: bad option '%.60s'", val);
    } else if (strcmp(key, "fault") == 0) {
        if (p->nfaults >= DQ_MAX_FAULTS ||
            dq_fault_parse(val, &p->faults[p->nfaults++], err, sizeof err))
            return CHILD_ERR("fault: %s", err);
    } else {
        return CHILD_ERR("unknown argument --%s", key);
    }
    return 0;
}

/* The whole command line into p and a.  Returns 0 or 2. */
static int parse_args(int argc, char **argv, dq_trial_params *p,
                      child_args *a)
{
    char err[512], flag[48];

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '=');
        const dq_param *d;
        int64_t v, v2;

        if (strncmp(arg, "--", 2) != 0 || eq == NULL ||
            (size_t)(eq - arg) >= sizeof flag)
            return CHILD_ERR("unexpected argument '%.60s' (an internal "
                             "command of process-mode trials)", arg);
        snprintf(flag, sizeof flag, "%.*s", (int)(eq - arg), arg);
        if ((d = dq_param_by_flag(flag)) == NULL) {
            if (child_arg(a, p, flag + 2, eq + 1) != 0)
                return 2;
            continue;
        }
        if (dq_param_parse(d, flag, eq + 1, &v, &v2, err, sizeof err) != 0)
            return CHILD_ERR("%s", err);
        dq_param_set(d, p, v, v2);
    }
    if (a->role == NULL || a->strategy == NULL || a->log == NULL ||
        p->queue[0] == '\0' ||
        (strcmp(a->role, "all") != 0 &&
         (strcmp(a->role, "consumer") != 0 || a->c.name == NULL)))
        return CHILD_ERR("--role, --strategy, --queue, --log (and --name for "
                         "a consumer) are required");
    a->c.all_in_one = strcmp(a->role, "all") == 0;
    p->strategy = dq_strategy_find(a->strategy);
    if (p->strategy == NULL)
        return CHILD_ERR("unknown strategy '%.60s'", a->strategy);
    return 0;
}

int dq_cmd_child(int argc, char **argv)
{
    dq_trial_params p;
    child_args a;
    const char *pw;
    char err[512];
    int rc;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        return 2; /* the parent is already gone */
    dq_trial_defaults(&p);
    memset(&a, 0, sizeof a);
    if (parse_args(argc, argv, &p, &a) != 0)
        return 2;
    if (a.target.host[0] != '\0') {
        pw = getenv("DQLAB_CHILD_REDIS_PASSWORD");
        if (pw != NULL)
            snprintf(a.target.password, sizeof a.target.password, "%s", pw);
        p.redis = &a.target;
    }
    unsetenv("DQLAB_CHILD_REDIS_PASSWORD");
    p.log_path = a.log; /* named in a failed write's message */
    a.c.log = dq_eventlog_open_append(a.log, DQ_LOG_SYNC_EACH, err,
                                      sizeof err);
    if (a.c.log == NULL)
        return CHILD_ERR("%s", err);
    a.c.sentinels = a.sentinels[0] ? a.sentinels : NULL;
    a.c.sentinel_master = a.sentinel_master;
    rc = dq_trial_child_run(&p, &a.c, err, sizeof err);
    dq_eventlog_close(a.c.log);
    if (rc != 0)
        return CHILD_ERR("%s", err);
    return 0;
}

/* ---- The child's run ----------------------------------------------------- */

/* The child's side of the parent's control socket (its stdin): commands
 * of one line each (trial_int.h, DQ_TRIAL_CTL_*), the bytes of a line
 * not yet ended kept for the next read. */
typedef struct control {
    bool open;          /* false after EOF or a read error */
    char buf[256];
    size_t len;
} control;

/* One command line. */
static void control_line(dq_trial_state *t, const char *line)
{
    const size_t ns = strlen(DQ_TRIAL_CTL_CLOCK_STEP);
    char *end;
    long long v;

    if (strcmp(line, DQ_TRIAL_CTL_OUTAGE " 1") == 0 ||
        strcmp(line, DQ_TRIAL_CTL_OUTAGE " 0") == 0) {
        atomic_store(&t->outage, line[strlen(line) - 1] == '1');
    } else if (strncmp(line, DQ_TRIAL_CTL_CLOCK_STEP " ", ns + 1) == 0) {
        errno = 0;
        v = strtoll(line + ns + 1, &end, 10);
        if (errno == 0 && *end == '\0' && end != line + ns + 1)
            atomic_store(&t->clock_step_us, (int64_t)v);
    }
}

/* Waits at most wait_us for bytes on stdin and runs the commands they
 * complete.  At EOF or on a read error ctl->open becomes false and later
 * calls just sleep. */
static void child_control(dq_trial_state *t, control *ctl, int64_t wait_us)
{
    struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
    ssize_t n;
    char *nl;

    if (!ctl->open) {
        dq_sleep_us(wait_us);
        return;
    }
    if (poll(&pfd, 1, (int)(wait_us / 1000)) <= 0)
        return;
    n = read(STDIN_FILENO, ctl->buf + ctl->len,
             sizeof ctl->buf - 1 - ctl->len);
    if (n <= 0) {
        if (n == 0 || errno != EINTR)
            ctl->open = false;
        return;
    }
    ctl->len += (size_t)n;
    ctl->buf[ctl->len] = '\0';
    while ((nl = strchr(ctl->buf, '\n')) != NULL) {
        *nl = '\0';
        control_line(t, ctl->buf);
        ctl->len -= (size_t)(nl + 1 - ctl->buf);
        memmove(ctl->buf, nl + 1, ctl->len + 1);
    }
    if (ctl->len == sizeof ctl->buf - 1)
        ctl->len = 0; /* a line longer than any command: dropped */
}

/* The handles of the child's workers: one consumer, or an in-process
 * strategy's producers and consumers.  Returns how many were opened, or
 * -1 with err. */
static int open_workers(dq_trial_state *t, const dq_child_spec *c,
                        dq_trial_worker *ws, int n, char *err, size_t errlen)
{
    const dq_trial_params *p = t->p;

    for (int i = 0; i < n; i++) {
        dq_trial_worker *w = &ws[i];
        bool prod = c->all_in_one && i < p->producers;
        dq_config cfg;

        w->t = t;
        w->index = prod ? i : (c->all_in_one ? i - p->producers : c->slot);
        if (c->all_in_one)
            snprintf(w->name, sizeof w->name, "%c%d", prod ? 'p' : 'c',
                     w->index);
        else
            snprintf(w->name, sizeof w->name, "%s", c->name);
        if (!prod)
            dq_faults_consumer_plan(p, w->index, c->gen, c->all_in_one,
                                    &w->plan);
        else
            dq_faults_producer_plan(p, w->index, &w->plan);
        cfg = dq_trial_worker_config(w);
        if (dq_open(p->strategy, &cfg, &w->q, err, errlen) != DQ_OK)
            return -1;
    }
    return n;
}

/* Every worker a thread (the first nprod producers), until SIGTERM, while
 * this thread reads the control socket. */
static void run_threads(dq_trial_state *t, dq_trial_worker *ws, int n,
                        int nprod)
{
    control ctl = {.open = true};

    atomic_store(&t->producers_left, nprod);
    for (int i = 0; i < n; i++) {
        if (pthread_create(&ws[i].th, NULL,
                           i < nprod ? dq_trial_producer : dq_trial_consumer,
                           &ws[i]) != 0) {
            dq_trial_fail(t, "pthread_create: %s", strerror(errno));
            break;
        }
        ws[i].started = true;
    }
    while (!dq_trial_should_stop(t))
        child_control(t, &ctl, DQ_TRIAL_WAIT_STEP_US);
    atomic_store(&t->stop, true);
    for (int i = 0; i < n; i++)
        if (ws[i].started)
            pthread_join(ws[i].th, NULL);
}

int dq_trial_child_run(const dq_trial_params *p, const dq_child_spec *c,
                       char *err, size_t errlen)
{
    dq_trial_state t;
    dq_local *local = dq_local_new();
    int n = c->all_in_one ? p->producers + p->consumers : 1, ret = -1;
    dq_trial_worker *ws = calloc((size_t)n, sizeof *ws);
    dq_counters total = {0};

    dq_trial_state_init(&t, p);
    t.log = c->log;
    t.cfg.queue = p->queue;
    t.cfg.opts = p->opts;
    t.cfg.nopts = p->nopts;
    t.cfg.local = local;
    if (p->redis != NULL)
        dq_trial_config_redis(&t.cfg, p->redis);
    if (c->sentinels != NULL) {
        t.cfg.sentinels = c->sentinels;
        t.cfg.sentinel_master = c->sentinel_master;
    }
    if (local == NULL || ws == NULL) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (open_workers(&t, c, ws, n, err, errlen) < 0)
        goto out;
    run_threads(&t, ws, n, c->all_in_one ? p->producers : 0);
    if (atomic_load(&t.failed)) {
        snprintf(err, errlen, "%s", t.fail_msg);
        goto out;
    }
    ret = 0;
out:
    for (int i = 0; ws != NULL && i < n; i++) {
        dq_trial_worker_close(&ws[i]);
        dq_trial_add_counters(&total, &ws[i].acc);
    }
    if (ret == 0) {
        printf("S %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
               " %" PRIuFAST64 " %" PRIuFAST64 " %" PRIuFAST64 " %s\n",
               total.round_trips, total.empty_polls, total.lost_races,
               total.wakeups, total.putbacks, atomic_load(&t.errors),
               atomic_load(&t.payload_bad), atomic_load(&t.retries),
               t.first_error);
        fflush(stdout);
    }
    free(ws);
    if (local != NULL)
        dq_local_free(local);
    dq_trial_state_free(&t);
    return ret;
}
