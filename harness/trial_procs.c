/* trial_procs.c -- process mode, the parent's side: consumer processes
 * started, watched, replaced and stopped (trial_int.h).
 *
 * In consumer mode process each consumer is a child process, `<exe>
 * __child` (consumer_proc.c), so that a fault can SIGKILL a real process;
 * for an in-process strategy one child runs the producers and the
 * consumers together (all_in_one), since the whole queue lives in its
 * memory.  A child gets everything on its command line: the strategy, its
 * options, the queue, the Redis target (Sentinel's address and master
 * name when the trial's servers have one; the password in the environment
 * variable DQLAB_CHILD_REDIS_PASSWORD, never in argv, which `ps` shows),
 * the parameters params.c marks for children, the fault specs, and its
 * slot and generation, from which it computes its own plan
 * (dq_faults_consumer_plan: its clock offset, where it dies) exactly as
 * this side does when it reaps it.  Its stdout and stderr come back
 * through a pipe: the last line is its summary ("S ..."), any other line
 * an error message.  Every child's stdin is a socket from here, one
 * command a line (trial_int.h): "outage 1" stops an all-in-one child's
 * consumer threads (an outage), "outage 0" starts them again, "clock_step
 * <us>" steps its consumers' wall clock (the slot's total, sent again to
 * a replacement).  A socket rather than a signal: bytes sent before the
 * child reads them wait for it, where a signal arriving before its
 * handler is installed would kill it; MSG_NOSIGNAL, so a child that died
 * meanwhile costs no SIGPIPE.
 *
 * Stalls (stall-consumer): a child that writes an F begin record whose
 * arg holds stop_ms=MS stops itself (SIGSTOP) right after; the watch sees
 * the record in the log's tail and the stop (waitid WSTOPPED), sends
 * SIGCONT once MS have passed since the record, and writes the F end
 * "<consumer>:stopped_ms=M" under the same fault name.  The stop sends
 * SIGCONT with its SIGTERM, so that no stopped child outlives a trial.
 *
 * Progress: this side reads the log as it grows (D and A records mark
 * tasks delivered and acked; an all-in-one child's E records count
 * enqueues and the latest due time).
 *
 * Everything here runs on the trial's main thread: the children's
 * PR_SET_PDEATHSIG (spawn.h) is tied to the thread that forked them.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "params.h"
#include "redis_url.h"
#include "spawn.h"
#include "trial_int.h"

#define PASSWORD_ENV "DQLAB_CHILD_REDIS_PASSWORD="
#define STOP_GRACE_US 3000000      /* SIGTERM .. SIGKILL */
#define STOP_KILL_WAIT_US 2000000  /* SIGKILL .. giving up on the child */

typedef struct child {
    pid_t pid;          /* 0: not running */
    int out_fd;         /* read end of its stdout+stderr pipe, or -1 */
    int ctl_fd;         /* our end of the control socket on its stdin, or
                           -1 */
    int gen;            /* 0 for the first process of a slot */
    int64_t step_us;    /* the slot's clock step (clock-step): sent to
                           every process of the slot */
    /* A stall: the child wrote an F begin with stop_ms=MS and stops
     * itself; resumed once it is seen stopped and MS have passed. */
    bool stall, stopped;
    int64_t stall_t_us, stall_ms;
    char stall_fault[32], stall_who[24];
    bool term_sent;     /* stopped by us (outage, end of trial) */
    bool kill_sent;     /* SIGKILLed by the stop */
    char name[24];
    char out[1024];
    size_t outlen;
} child;

struct dq_trial_procs {
    dq_trial_state *t;
    bool all_in_one;
    child *ch;
    int nch;
    char exe[4096];
    char **envp;        /* environ + the password, built once */
    char pw_env[300];
    int tail_fd;        /* the log, read as it grows */
    char tail[8192];
    size_t tail_len;
    int64_t e_count;    /* all-in-one: E records seen */
    bool dead;          /* all-in-one: the child died: nothing can follow */
    dq_counters counters;
    uint64_t errors, payload_bad, retries;
    char first_error[256];
};

/* ---- Setting up ---------------------------------------------------------- */

/* The children's environment: ours without any password variable, plus
 * the target's password when it has one. */
static int make_env(dq_trial_procs *ps)
{
    extern char **environ;
    const dq_redis_target *r = ps->t->p->redis;
    size_t nenv = 0, j = 0;

    while (environ[nenv] != NULL)
        nenv++;
    ps->envp = calloc(nenv + 2, sizeof *ps->envp);
    if (ps->envp == NULL)
        return -1;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], PASSWORD_ENV, strlen(PASSWORD_ENV)) != 0)
            ps->envp[j++] = environ[i];
    if (r != NULL && r->password[0]) {
        snprintf(ps->pw_env, sizeof ps->pw_env, PASSWORD_ENV "%s",
                 r->password);
        ps->envp[j] = ps->pw_env;
    }
    return 0;
}

dq_trial_procs *dq_trial_procs_new(dq_trial_state *t, bool all_in_one,
                                   char *err, size_t errlen)
{
    const dq_trial_params *p = t->p;
    dq_trial_procs *ps = calloc(1, sizeof *ps);
    ssize_t n;

    if (ps == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    ps->t = t;
    ps->all_in_one = all_in_one;
    ps->tail_fd = -1;
    if (p->child_exe != NULL) {
        snprintf(ps->exe, sizeof ps->exe, "%s", p->child_exe);
    } else if ((n = readlink("/proc/self/exe", ps->exe,
                             sizeof ps->exe - 1)) > 0) {
        ps->exe[n] = '\0';
    } else {
        snprintf(err, errlen, "readlink /proc/self/exe: %s", strerror(errno));
        goto fail;
    }
    ps->nch = all_in_one ? 1 : p->consumers;
    ps->ch = calloc((size_t)ps->nch, sizeof *ps->ch);
    if (ps->ch == NULL || make_env(ps) != 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (int i = 0; i < ps->nch; i++)
        ps->ch[i].out_fd = ps->ch[i].ctl_fd = -1;
    ps->tail_fd = open(p->log_path, O_RDONLY | O_CLOEXEC);
    if (ps->tail_fd < 0) {
        snprintf(err, errlen, "%s: %s", p->log_path, strerror(errno));
        goto fail;
    }
    return ps;
fail:
    dq_trial_procs_free(ps);
    return NULL;
}

/* ---- Starting a child ---------------------------------------------------- */

/* A child's command line (storage in store). */
typedef struct argb {
    char *argv[96];
    int argc;
    char store[12288];
    size_t used;
    bool overflow;
} argb;

static void arg_add(argb *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void arg_add(argb *a, const char *fmt, ...)
{
    va_list ap;
    int n;
    size_t room = sizeof a->store - a->used;

    if (a->argc >= 95) {
        a->overflow = true;
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(a->store + a->used, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room) {
        a->overflow = true;
        return;
    }
    a->argv[a->argc++] = a->store + a->used;
    a->argv[a->argc] = NULL;
    a->used += (size_t)n + 1;
}

/* The command line of the process of slot `slot` (top comment). */
static void child_args(const dq_trial_procs *ps, int slot, argb *a)
{
    const dq_trial_state *t = ps->t;
    const dq_trial_params *p = t->p;
    const child *c = &ps->ch[slot];
    char kv[128];

    arg_add(a, "%s", ps->exe);
    arg_add(a, "%s", DQ_CHILD_COMMAND);
    arg_add(a, "--role=%s", ps->all_in_one ? "all" : "consumer");
    arg_add(a, "--strategy=%s", p->strategy->name);
    arg_add(a, "--queue=%s", t->cfg.queue);
    arg_add(a, "--log=%s", p->log_path);
    arg_add(a, "--name=%s", c->name);
    arg_add(a, "--slot=%d", slot);
    arg_add(a, "--gen=%d", c->gen);
    for (size_t i = 0; dq_params_child_arg(p, i, kv, sizeof kv); i++)
        arg_add(a, "%s", kv);
    for (size_t i = 0; i < p->nfaults; i++) {
        dq_fault_format(&p->faults[i], kv, sizeof kv);
        arg_add(a, "--fault=%s", kv);
    }
    if (t->cfg.redis_host != NULL) {
        arg_add(a, "--host=%s", t->cfg.redis_host);
        arg_add(a, "--port=%d", t->cfg.redis_port);
        arg_add(a, "--db=%d", t->cfg.redis_db);
        if (t->cfg.redis_user != NULL)
            arg_add(a, "--user=%s", t->cfg.redis_user);
        if (t->cfg.sentinels != NULL) {
            arg_add(a, "--sentinels=%s", t->cfg.sentinels);
            arg_add(a, "--sentinel-master=%s", t->cfg.sentinel_master);
        }
    }
    for (size_t i = 0; i < p->nopts; i++)
        arg_add(a, "--opt=%s=%s", p->opts[i].key, p->opts[i].val);
}

/* Forks and execs a's command with its output pipe and the control socket
 * on its stdin into c.  Returns 0, or -1 with err. */
static int child_exec(dq_trial_procs *ps, child *c, argb *a, char *err,
                      size_t errlen)
{
    int out[2] = {-1, -1}, ctl[2] = {-1, -1};
    pid_t pid;

    if (pipe2(out, O_CLOEXEC) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) != 0) {
        snprintf(err, errlen, "%s: %s", out[0] < 0 ? "pipe" : "socketpair",
                 strerror(errno));
        for (int i = 0; i < 2; i++)
            if (out[i] >= 0)
                close(out[i]);
        return -1;
    }
    pid = dq_spawn(ps->exe, a->argv, ps->envp, ctl[1], out[1], out[1]);
    if (pid < 0)
        snprintf(err, errlen, "fork: %s", strerror(errno));
    close(out[1]);
    if (ctl[1] >= 0)
        close(ctl[1]);
    if (pid < 0) {
        close(out[0]);
        if (ctl[0] >= 0)
            close(ctl[0]);
        return -1;
    }
    fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
    c->pid = pid;
    c->out_fd = out[0];
    c->ctl_fd = ctl[0];
    return 0;
}

/* Sends one control line (trial_int.h) to c's process, if it runs. */
static void child_send(child *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void child_send(child *c, const char *fmt, ...)
{
    char line[64];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (c->pid <= 0 || c->ctl_fd < 0 || n <= 0 || n >= (int)sizeof line - 1)
        return;
    line[n++] = '\n';
    send(c->ctl_fd, line, (size_t)n, MSG_NOSIGNAL);
}

/* Starts the process of slot `slot`, generation ch[slot].gen. */
static int child_spawn(dq_trial_procs *ps, int slot, char *err,
                       size_t errlen)
{
    child *c = &ps->ch[slot];
    argb *a = calloc(1, sizeof *a);
    int rc;

    if (a == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (c->gen == 0)
        snprintf(c->name, sizeof c->name, "c%d", slot);
    else
        snprintf(c->name, sizeof c->name, "c%d.%d", slot, c->gen);
    c->outlen = 0;
    c->out[0] = '\0';
    c->term_sent = c->kill_sent = false;
    c->stall = c->stopped = false;
    child_args(ps, slot, a);
    if (a->overflow) {
        snprintf(err, errlen, "child command line too long");
        free(a);
        return -1;
    }
    rc = child_exec(ps, c, a, err, errlen);
    free(a);
    if (rc == 0 && c->step_us != 0)
        child_send(c, DQ_TRIAL_CTL_CLOCK_STEP " %" PRId64, c->step_us);
    return rc;
}

int dq_trial_procs_start(dq_trial_procs *ps, char *err, size_t errlen)
{
    for (int i = 0; i < ps->nch; i++)
        if (child_spawn(ps, i, err, errlen) != 0)
            return -1;
    return 0;
}

/* ---- Watching them ------------------------------------------------------- */

static void child_drain(child *c)
{
    char buf[1024];
    ssize_t n;

    if (c->out_fd < 0)
        return;
    while ((n = read(c->out_fd, buf, sizeof buf)) > 0) {
        size_t room = sizeof c->out - 1 - c->outlen;
        size_t k = (size_t)n < room ? (size_t)n : room;
        memcpy(c->out + c->outlen, buf, k);
        c->outlen += k;
        c->out[c->outlen] = '\0';
    }
}

/* A child's output, past its summary line: the first other line. */
static void child_message(const child *c, char *buf, size_t len)
{
    const char *s = c->out;

    buf[0] = '\0';
    while (*s) {
        size_t n = strcspn(s, "\n");
        if (!(s[0] == 'S' && s[1] == ' ') && n > 0) {
            snprintf(buf, len, "%.*s", (int)n, s);
            return;
        }
        s += n + (s[n] == '\n');
    }
}

/* Takes a finished child's summary line into ps. */
static void child_summary(dq_trial_procs *ps, const child *c)
{
    const char *s = strstr(c->out, "S ");
    unsigned long long v[8];
    int used = 0;

    if (s == NULL || (s != c->out && s[-1] != '\n'))
        return;
    if (sscanf(s, "S %llu %llu %llu %llu %llu %llu %llu %llu %n", &v[0],
               &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &used) < 8)
        return;
    ps->counters.round_trips += v[0];
    ps->counters.empty_polls += v[1];
    ps->counters.lost_races += v[2];
    ps->counters.wakeups += v[3];
    ps->counters.putbacks += v[4];
    if (v[5] > 0 && ps->errors == 0 && used > 0)
        snprintf(ps->first_error, sizeof ps->first_error, "%.*s",
                 (int)strcspn(s + used, "\n"), s + used);
    ps->errors += v[5];
    ps->payload_bad += v[6];
    ps->retries += v[7];
}

static void child_close(child *c)
{
    if (c->out_fd >= 0)
        close(c->out_fd);
    if (c->ctl_fd >= 0)
        close(c->ctl_fd);
    c->out_fd = c->ctl_fd = -1;
    c->pid = 0;
}

/* A child's F begin record with stop_ms= in its arg (f[2] the fault, f[4]
 * "<consumer>:stop_ms=MS,..."): that child stops itself now; note it. */
static void tail_stall(dq_trial_procs *ps, char **f)
{
    const char *ms = strstr(f[4], "stop_ms="), *colon = strchr(f[4], ':');
    size_t wl = colon != NULL ? (size_t)(colon - f[4]) : 0;
    child *c = NULL;

    if (ms == NULL || wl == 0 || wl >= sizeof c->stall_who)
        return;
    for (int i = 0; i < ps->nch && c == NULL; i++)
        if (ps->ch[i].pid > 0 &&
            (ps->all_in_one || (strncmp(ps->ch[i].name, f[4], wl) == 0 &&
                                ps->ch[i].name[wl] == '\0')))
            c = &ps->ch[i];
    if (c == NULL)
        return;
    c->stall = true;
    c->stopped = false;
    c->stall_t_us = strtoll(f[1], NULL, 10);
    c->stall_ms = strtoll(ms + strlen("stop_ms="), NULL, 10);
    snprintf(c->stall_fault, sizeof c->stall_fault, "%s", f[2]);
    snprintf(c->stall_who, sizeof c->stall_who, "%.*s", (int)wl, f[4]);
}

/* One record the children appended (fields f[0..nf-1]). */
static void tail_record(dq_trial_procs *ps, char **f, int nf)
{
    dq_trial_state *t = ps->t;

    if (nf < 4 || f[0][1] != '\0')
        return;
    if (f[0][0] == 'F' && nf >= 5 && strcmp(f[3], "begin") == 0) {
        tail_stall(ps, f);
        return;
    }
    if (f[0][0] == 'D') {
        dq_trial_atomic_max(&t->last_d_us, strtoll(f[1], NULL, 10));
        dq_trial_mark(t->seen, &t->distinct,
                      dq_trial_id_index(f[2], t->p->tasks));
    } else if (f[0][0] == 'A') {
        dq_trial_mark(t->acked, &t->acked_distinct,
                      dq_trial_id_index(f[2], t->p->tasks));
    } else if (f[0][0] == 'E' && ps->all_in_one) {
        ps->e_count++;
        atomic_fetch_add(&t->enqueued, 1);
        dq_trial_atomic_min(&t->first_e_us, strtoll(f[1], NULL, 10));
        dq_trial_atomic_max(&t->latest_due_ms, strtoll(f[3], NULL, 10));
    } else if (f[0][0] == 'N' && ps->all_in_one) {
        ps->e_count++; /* refused: no more will come of it */
        atomic_fetch_add(&t->refused, 1);
    }
}

/* Reads the records appended since the last call. */
static void tail_log(dq_trial_procs *ps)
{
    ssize_t n;

    while ((n = read(ps->tail_fd, ps->tail + ps->tail_len,
                     sizeof ps->tail - 1 - ps->tail_len)) > 0) {
        char *s, *nl;
        ps->tail_len += (size_t)n;
        ps->tail[ps->tail_len] = '\0';
        for (s = ps->tail; (nl = strchr(s, '\n')) != NULL; s = nl + 1) {
            char *f[6];
            int nf = 0;
            *nl = '\0';
            for (char *q = s; nf < 6;) {
                f[nf++] = q;
                if ((q = strchr(q, '\t')) == NULL)
                    break;
                *q++ = '\0';
            }
            tail_record(ps, f, nf);
        }
        ps->tail_len -= (size_t)(s - ps->tail);
        memmove(ps->tail, s, ps->tail_len);
        if (ps->tail_len >= sizeof ps->tail - 1)
            ps->tail_len = 0; /* a line longer than the buffer: drop it */
    }
}

/* The fault row that planned the death of slot's current process (any
 * consumer thread of the all-in-one process), or NULL. */
static const dq_fault_ops *planned_by(const dq_trial_procs *ps, int slot)
{
    const dq_trial_params *p = ps->t->p;
    dq_consumer_plan plan;
    int n = ps->all_in_one ? p->consumers : 1;

    for (int i = 0; i < n; i++) {
        dq_faults_consumer_plan(p, ps->all_in_one ? i : slot,
                                ps->ch[slot].gen, ps->all_in_one, &plan);
        if (plan.die_by != NULL)
            return plan.die_by;
    }
    return NULL;
}

/* A child its plan killed: the fault's F end, and a replacement unless
 * the process held the whole queue or the trial is ending. */
static void replace_killed(dq_trial_procs *ps, int slot,
                           const dq_fault_ops *by)
{
    dq_trial_state *t = ps->t;
    child *c = &ps->ch[slot];
    char arg[160], old[24], msg[300];

    snprintf(old, sizeof old, "%s", c->name);
    if (ps->all_in_one || dq_trial_should_stop(t)) {
        ps->dead = ps->all_in_one;
        snprintf(arg, sizeof arg, "%s:replacement=none", old);
        dq_log_fault(t->log, dq_wall_us(), by->name, "end", arg);
        return;
    }
    c->gen++;
    if (child_spawn(ps, slot, msg, sizeof msg) != 0) {
        dq_trial_fail(t, "starting a replacement consumer: %s", msg);
        return;
    }
    snprintf(arg, sizeof arg, "%s:replacement=%s", old, c->name);
    dq_log_fault(t->log, dq_wall_us(), by->name, "end", arg);
}

/* Reaps slot's child if it exited; any exit we did not plan or ask for
 * fails the trial. */
static void reap_one(dq_trial_procs *ps, int slot, dq_trial_result *r)
{
    child *c = &ps->ch[slot];
    const dq_fault_ops *by;
    int status = 0;
    char msg[300];

    child_drain(c);
    if (dq_spawn_reap(c->pid, &status, false) != c->pid)
        return;
    child_drain(c);
    child_summary(ps, c);
    by = planned_by(ps, slot);
    child_close(c);
    if (c->term_sent)
        return;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && by != NULL) {
        r->kills++;
        replace_killed(ps, slot, by);
        return;
    }
    child_message(c, msg, sizeof msg);
    if (WIFEXITED(status))
        dq_trial_fail(ps->t, "consumer process %s exited with status %d%s%s",
                      c->name, WEXITSTATUS(status), msg[0] ? ": " : "", msg);
    else
        dq_trial_fail(ps->t, "consumer process %s died of signal %d%s%s",
                      c->name, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                      msg[0] ? ": " : "", msg);
}

/* Ends c's stall window (F end under its fault's name). */
static void stall_end(dq_trial_procs *ps, child *c, const char *how)
{
    char arg[96];

    snprintf(arg, sizeof arg, "%s:%s", c->stall_who, how);
    dq_log_fault(ps->t->log, dq_wall_us(), c->stall_fault, "end", arg);
    c->stall = c->stopped = false;
}

/* How long past its stop_ms a stalled child may go unseen stopped
 * (waitid WSTOPPED) before the trial fails: it wrote its F begin right
 * before its SIGSTOP, so only a lost stop report comes this far. */
#define STALL_SEEN_MS 5000

/* A stalled child: seen stopped yet?  Its time up?  Then SIGCONT. */
static void stall_tend(dq_trial_procs *ps, child *c)
{
    siginfo_t si;
    char how[48];
    int64_t now;

    if (!c->stopped) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)c->pid, &si, WSTOPPED | WNOHANG) == 0 &&
            si.si_pid == c->pid && si.si_code == CLD_STOPPED)
            c->stopped = true;
    }
    now = dq_wall_us();
    if (!c->stopped &&
        now >= c->stall_t_us + (c->stall_ms + STALL_SEEN_MS) * 1000) {
        /* Never seen stopped: the fault had no effect, and the trial
         * must not wait for it forever. */
        kill(c->pid, SIGCONT);
        stall_end(ps, c, "error=1");
        dq_trial_fail(ps->t, "%s: %s was not seen stopped within %d ms of "
                      "its stall", c->stall_fault, c->stall_who,
                      STALL_SEEN_MS);
        return;
    }
    if (!c->stopped || now < c->stall_t_us + c->stall_ms * 1000)
        return;
    kill(c->pid, SIGCONT);
    snprintf(how, sizeof how, "stopped_ms=%" PRId64,
             (now - c->stall_t_us) / 1000);
    stall_end(ps, c, how);
}

void dq_trial_procs_watch(dq_trial_procs *ps, dq_trial_result *r)
{
    tail_log(ps);
    for (int i = 0; i < ps->nch; i++)
        if (ps->ch[i].pid != 0 && ps->ch[i].stall)
            stall_tend(ps, &ps->ch[i]);
    for (int i = 0; i < ps->nch; i++)
        if (ps->ch[i].pid != 0)
            reap_one(ps, i, r);
}

bool dq_trial_procs_stalled(const dq_trial_procs *ps)
{
    for (int i = 0; ps != NULL && i < ps->nch; i++)
        if (ps->ch[i].pid > 0 && ps->ch[i].stall)
            return true;
    return false;
}

bool dq_trial_procs_producers_done(const dq_trial_procs *ps)
{
    return ps->e_count >= ps->t->p->tasks || ps->dead;
}

/* ---- Stopping them ------------------------------------------------------- */

static bool children_running(const dq_trial_procs *ps)
{
    for (int i = 0; i < ps->nch; i++)
        if (ps->ch[i].pid > 0)
            return true;
    return false;
}

/* SIGTERM to every running child (they finish the task in hand, print
 * their summary and exit), and SIGCONT, so that a stalled one does; its
 * stall window ends "interrupted=1". */
static void children_term(dq_trial_procs *ps)
{
    tail_log(ps); /* a stall just begun */
    for (int i = 0; i < ps->nch; i++)
        if (ps->ch[i].pid > 0) {
            ps->ch[i].term_sent = true;
            kill(ps->ch[i].pid, SIGTERM);
            kill(ps->ch[i].pid, SIGCONT);
            if (ps->ch[i].stall)
                stall_end(ps, &ps->ch[i], "interrupted=1");
        }
}

/* One child during the stop: reaped (its summary taken) or given up on
 * once it outlived its SIGKILL by STOP_KILL_WAIT_US.  Never blocks. */
static void stop_one(dq_trial_procs *ps, child *c, int64_t now,
                     int64_t deadline)
{
    int status;
    pid_t got;

    child_drain(c);
    kill(c->pid, SIGCONT); /* one that stopped itself after its SIGTERM */
    if (now > deadline && !c->kill_sent) {
        kill(c->pid, SIGKILL);
        c->kill_sent = true;
    }
    got = dq_spawn_reap(c->pid, &status, false);
    if (got == c->pid || got < 0) { /* < 0: not ours any more */
        child_drain(c);
        child_summary(ps, c);
        child_close(c);
    } else if (now > deadline + STOP_KILL_WAIT_US) {
        /* Not even SIGKILL ended it (uninterruptible sleep): leave it to
         * the kernel rather than hang the trial; PR_SET_PDEATHSIG still
         * holds for it. */
        dq_trial_fail(ps->t, "consumer process %s (pid %ld) did not exit "
                      "%d s after SIGKILL", c->name, (long)c->pid,
                      STOP_KILL_WAIT_US / 1000000);
        child_close(c);
    }
}

void dq_trial_procs_stop(dq_trial_procs *ps)
{
    int64_t deadline = dq_mono_us() + STOP_GRACE_US;

    children_term(ps);
    while (children_running(ps)) {
        int64_t now = dq_mono_us();
        for (int i = 0; i < ps->nch; i++)
            if (ps->ch[i].pid > 0)
                stop_one(ps, &ps->ch[i], now, deadline);
        if (children_running(ps))
            dq_sleep_us(5000);
    }
}

void dq_trial_procs_totals(const dq_trial_procs *ps, dq_counters *c,
                           uint64_t *errors, uint64_t *payload_bad,
                           uint64_t *retries, char *first_error, size_t len)
{
    dq_trial_add_counters(c, &ps->counters);
    *errors += ps->errors;
    *payload_bad += ps->payload_bad;
    *retries += ps->retries;
    if (first_error[0] == '\0')
        snprintf(first_error, len, "%s", ps->first_error);
}

void dq_trial_procs_free(dq_trial_procs *ps)
{
    if (ps == NULL)
        return;
    if (ps->ch != NULL) {
        dq_trial_procs_stop(ps);
        free(ps->ch);
    }
    free(ps->envp);
    if (ps->tail_fd >= 0)
        close(ps->tail_fd);
    free(ps);
}

/* ---- Consumers, for the faults ------------------------------------------- */

/* The all-in-one child's consumer threads: a line on its stdin. */
static void child_outage(child *c, bool on)
{
    child_send(c, DQ_TRIAL_CTL_OUTAGE " %d", on ? 1 : 0);
}

static void procs_stop(void *impl)
{
    dq_trial_procs *ps = impl;

    if (ps->all_in_one)
        child_outage(&ps->ch[0], true);
    else
        children_term(ps);
}

static int procs_start(void *impl, char *err, size_t errlen)
{
    dq_trial_procs *ps = impl;

    if (ps->all_in_one) {
        child_outage(&ps->ch[0], false);
        return 0;
    }
    if (children_running(ps))
        return 1;
    for (int s = 0; s < ps->nch; s++) {
        ps->ch[s].gen++;
        if (child_spawn(ps, s, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int procs_count(void *impl)
{
    return ((dq_trial_procs *)impl)->nch;
}

static pid_t procs_pid(void *impl, int slot)
{
    dq_trial_procs *ps = impl;
    return slot >= 0 && slot < ps->nch ? ps->ch[slot].pid : 0;
}

static int procs_ctl_fd(void *impl, int slot)
{
    dq_trial_procs *ps = impl;
    return slot >= 0 && slot < ps->nch ? ps->ch[slot].ctl_fd : -1;
}

static int procs_clock_step(void *impl, int slot, int64_t add_us)
{
    dq_trial_procs *ps = impl;
    child *c;

    if (ps->all_in_one)
        slot = 0;
    if (slot < 0 || slot >= ps->nch)
        return -1;
    c = &ps->ch[slot];
    c->step_us += add_us;
    child_send(c, DQ_TRIAL_CTL_CLOCK_STEP " %" PRId64, c->step_us);
    return 0;
}

/* Thread mode: the consumer threads watch the trial's outage flag. */
static void threads_stop(void *impl)
{
    atomic_store(&((dq_trial_state *)impl)->outage, true);
}

static int threads_start(void *impl, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    atomic_store(&((dq_trial_state *)impl)->outage, false);
    return 0;
}

static int threads_count(void *impl)
{
    (void)impl;
    return 0;
}

static pid_t threads_pid(void *impl, int slot)
{
    (void)impl, (void)slot;
    return 0;
}

static int threads_ctl_fd(void *impl, int slot)
{
    (void)impl, (void)slot;
    return -1;
}

static int threads_clock_step(void *impl, int slot, int64_t add_us)
{
    (void)impl, (void)slot, (void)add_us;
    return -1;
}

void dq_trial_consumers(dq_fault_consumers *out, dq_trial_state *t,
                        dq_trial_procs *ps)
{
    if (ps != NULL)
        *out = (dq_fault_consumers){ps, procs_stop, procs_start, procs_count,
                                    procs_pid, procs_ctl_fd,
                                    procs_clock_step};
    else
        *out = (dq_fault_consumers){t, threads_stop, threads_start,
                                    threads_count, threads_pid,
                                    threads_ctl_fd, threads_clock_step};
}
