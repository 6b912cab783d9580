/* experiment.c -- `dqlab experiment FILE`: runs the matrix of an
 * experiment file (experiment.h; the file is loaded by experiment_load.c).
 *
 * Running.  The matrix (strategy variant x fault x the list parameters x
 * repeat) runs one trial at a time through dq_trial_run() (trial.c), each
 * with seed = experiment seed + trial index and its own queue name, so no
 * trial sees another's keys.  Each trial gets its fault, the consumer mode
 * (process when the file says so or the fault needs it) and the private
 * server, which faults needing it act on (each fault's row sets and
 * resets the server's settings itself).  One private redis-server serves
 * the whole run (unless --redis names one); it is stopped on every exit
 * path, and Ctrl-C (SIGINT/SIGTERM/SIGHUP, signals.c) asks the running
 * trial to stop (dq_signals_caught, the one stop request): the trials done
 * so far stay on disk and meta.txt says complete = no.  The exit code
 * counts dq_trial_violations (fault-aware: what a fault lets the declared
 * guarantees lose or repeat is not a failure), see trial_violations().
 *
 * Results follow Jepsen's store/<test>/<time>/ layout:
 *   results/NAME/YYYYmmdd-HHMMSS[-N]/trials.csv    one row per trial
 *                                   /meta.txt      parameters, environment
 *                                   /experiment.ini  copy of the file run
 *                                   /logs/trial-NNN.log  event logs
 *   results/NAME/latest -> YYYYmmdd-HHMMSS[-N]     last complete run
 * A run directory is never reused (a suffix is added when the name
 * exists); trials.csv and meta.txt are rewritten after every trial through
 * a temporary name and rename(), so a crash leaves the last good copy; the
 * `latest` link is replaced atomically (symlink to a temporary name, then
 * rename) and only for a complete run, so `dqlab report` never picks up a
 * run cut short by Ctrl-C.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "commands.h"
#include "experiment.h"
#include "redis_server.h"
#include "redis_url.h"
#include "runmeta.h"
#include "signals.h"
#include "trialcols.h"

/* Messages and paths go into fixed buffers with snprintf and are cut short
 * when they do not fit (a path near PATH_MAX, a message past its line);
 * GCC's format-truncation warning would flag every such call. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* One finished trial, as written to trials.csv. */
typedef struct trial_row {
    dq_exp_cell cell;
    dq_trial_result r;
    size_t violations;        /* guarantees broken (trial_violations) */
} trial_row;

typedef struct run {
    const dq_experiment *e;
    char dir[PATH_MAX];       /* results/NAME/STAMP[-N] */
    char stamp[64];           /* basename of dir */
    char expdir[PATH_MAX];    /* results/NAME */
    trial_row *rows;
    size_t nrows;
    size_t ntrials;
    char redis_desc[300];     /* "private redis-server 127.0.0.1:PORT" */
    char redis_version[64];
    char started[64], finished[64];
    char command[1024];
    char error[512];          /* set when a trial failed */
    bool complete;
    /* The server the trials use. */
    const char *url;          /* --redis, or NULL: a private server */
    dq_redis_server server;
    dq_redis_target target;
    bool needs_redis;         /* a strategy of the matrix uses Redis */
    /* What the trials found, for the end. */
    char violations[4096];
    int nviol;
    uint64_t lost_total, lost_window;
    bool interrupted;
} run;

static void opts_string(const dq_exp_strategy *s, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < s->nopts && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s=%s",
                                i ? ";" : "", s->opts[i].key,
                                s->opts[i].val);
}

/* Opens the in-memory stream a run file (trials.csv, meta.txt) is
 * written to, on *buf and *len (set to NULL and 0 first).  Returns the
 * stream, or NULL with err.  run_file_close() ends it. */
static FILE *run_file_open(char **buf, size_t *len, char *err,
                           size_t errlen)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (f == NULL)
        snprintf(err, errlen, "open_memstream: %s", strerror(errno));
    return f;
}

/* Closes f (from run_file_open on buf and len), writes the text to
 * <rn->dir>/<name> atomically (dq_runmeta_write_atomic) and frees *buf.
 * Returns 0, or -1 with err ("writing <name>: out of memory" when the
 * stream failed, else the write's error). */
static int run_file_close(const run *rn, FILE *f, char **buf, size_t *len,
                          const char *name, char *err, size_t errlen)
{
    if (fclose(f) != 0) {
        free(*buf);
        snprintf(err, errlen, "writing %s: out of memory", name);
        return -1;
    }
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/%s", rn->dir, name);
    int rc = dq_runmeta_write_atomic(path, *buf, *len, err, errlen);
    free(*buf);
    return rc;
}

/* trials.csv: one row per trial, the columns of trialcols.h. */
static int write_csv(const run *rn, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    FILE *f = run_file_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    dq_trialrow_header(f);
    for (size_t i = 0; i < rn->nrows; i++) {
        const trial_row *t = &rn->rows[i];
        const dq_trial_result *r = &t->r;
        const dq_check *c = &r->check;
        const dq_counters *k = &r->counters;
        const dq_trial_params *p = &t->cell.params;
        char opts[512];
        opts_string(t->cell.strategy, opts, sizeof opts);
        dq_trialrow row = {
            .experiment = rn->e->name, .trial = i + 1,
            .strategy = t->cell.strategy->s->name, .options = opts,
            .producers = p->producers, .consumers = p->consumers,
            .tasks = p->tasks, .delay_min_ms = p->delay_min_ms,
            .delay_max_ms = p->delay_max_ms, .work_us = p->work_us,
            .repeat = t->cell.repeat, .seed = p->seed,
            .enqueued = c->enqueued, .delivered = c->delivered,
            .deliveries = c->deliveries, .duplicates = c->duplicates,
            .lost = c->lost, .early = c->early,
            .lateness_p50_ms = c->lateness.p50_ms,
            .lateness_p90_ms = c->lateness.p90_ms,
            .lateness_p99_ms = c->lateness.p99_ms,
            .lateness_p999_ms = c->lateness.p999_ms,
            .lateness_max_ms = c->lateness.max_ms,
            .tasks_per_s = r->tasks_per_s, .elapsed_s = r->elapsed_s,
            .redis_commands = r->redis_commands,
            .round_trips = k->round_trips, .empty_polls = k->empty_polls,
            .lost_races = k->lost_races, .wakeups = k->wakeups,
            .putbacks = k->putbacks, .acked = c->acked,
            .unknown = c->unknown, .backlog = p->backlog,
            .idle_ms = p->idle_ms,
            .claim_timeout_ms = p->claim_timeout_ms,
            .measured_s = r->measured_s,
            .redis_cpu_ms = r->redis_cpu_us >= 0
                                ? (double)r->redis_cpu_us / 1000.0 : -1,
            .backlog_enqueue_s = r->backlog_s, .fault = t->cell.fault_spec,
            .consumer_mode = r->process_mode ? "process" : "thread",
            .kills = r->kills, .restarts = r->restarts,
            .retries = r->retries, .redelivered = c->redelivered,
            .dup_fault = c->dup_fault, .dup_nofault = c->dup_nofault,
            .pending_end = c->pending_end, .lost_claimed = c->lost_claimed,
            .lost_nofault = c->lost_nofault, .early_fault = c->early_fault,
            .unacked = c->unacked,
            .redelivered_hidden = c->redelivered_hidden,
            .fault_windows = c->fault_windows, .violations = t->violations,
            .rate = p->rate, .enqueue_refused = c->enqueue_refused,
            .rtt_ms = r->rtt_ms,
            .fail_every = p->fail_every,
            .retry = p->fail_every > 0 ? (p->retry_nack ? "nack" : "readd")
                                       : "",
            .retried = c->retried, .lost_retry = c->lost_retry,
            .processed_twice = c->processed_twice,
            .dead_lettered = c->dead_lettered,
            .redis_stall_ms = c->redis_stall_ms,
            .ping_p99_ms = c->ping_p99_ms,
        };
        dq_trialrow_write(f, &row);
    }
    return run_file_close(rn, f, &buf, &len, "trials.csv", err, errlen);
}

/* The values of a list parameter, "1, 2, 4". */
static void join_values(char *buf, size_t len, const dq_param *d,
                        const dq_exp_values *l)
{
    size_t off = 0;
    char one[64];

    buf[0] = '\0';
    for (size_t i = 0; i < l->n && off < len; i++) {
        dq_param_text(d, l->v[i], 0, one, sizeof one);
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
                                one);
    }
}

/* Words of n strings joined by sep into buf. */
static void join_words(char *buf, size_t len, const char *words, size_t each,
                       size_t n, const char *sep)
{
    size_t off = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? sep : "",
                                words + i * each);
}

/* What the file asked for: the experiment's keys, the strategies and
 * every trial parameter (params.c's table, under its key). */
static void meta_plan(FILE *f, const dq_experiment *e)
{
    char tmp[1024], o[512];
    size_t off = 0;

    dq_runmeta_kv(f, "experiment", e->name);
    dq_runmeta_kv(f, "title", e->title);
    dq_runmeta_kv(f, "description", e->description);
    join_words(tmp, sizeof tmp, e->claims[0], sizeof e->claims[0],
               e->nclaims, " ");
    dq_runmeta_kv(f, "claims", tmp);
    join_words(tmp, sizeof tmp, e->plots[0], sizeof e->plots[0], e->nplots,
               " ");
    dq_runmeta_kv(f, "plots", tmp);
    dq_runmeta_kv(f, "file", e->path);
    dq_runmeta_kv(f, "file_copy", "experiment.ini");
    tmp[0] = '\0';
    for (size_t i = 0; i < e->nstrategies && off < sizeof tmp; i++) {
        opts_string(&e->strategies[i], o, sizeof o);
        off += (size_t)snprintf(tmp + off, sizeof tmp - off, "%s%s%s%s%s",
                                i ? ", " : "", e->strategies[i].s->name,
                                o[0] ? "(" : "", o, o[0] ? ")" : "");
    }
    dq_runmeta_kv(f, "strategies", tmp);
    for (const dq_param *d = dq_params; d->key != NULL; d++) {
        if (d->flags & DQ_PARAM_LIST)
            join_values(tmp, sizeof tmp, d, &e->lists[d - dq_params]);
        else
            dq_param_format(d, &e->params, tmp, sizeof tmp);
        dq_runmeta_kv(f, d->key, tmp);
    }
    fprintf(f, "repeats = %d\n", e->repeats);
    /* Only when the file lists faults: the report picks its loss section
     * by this key (section_loss.c). */
    if (e->faults_given) {
        join_words(tmp, sizeof tmp, e->fault_specs[0], sizeof e->fault_specs[0],
                   e->nfaults, ", ");
        dq_runmeta_kv(f, "faults", tmp);
    }
}

static int write_meta(const run *rn, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    FILE *f = run_file_open(&buf, &len, err, errlen);

    if (f == NULL)
        return -1;
    fprintf(f, "# dqlab run metadata; key = value, one per line\n");
    meta_plan(f, rn->e);
    dq_runmeta_kv(f, "command", rn->command);
    dq_runmeta_kv(f, "quick", rn->e->quick ? "yes" : "no");
    fprintf(f, "trials_planned = %zu\n", rn->ntrials);
    fprintf(f, "trials_done = %zu\n", rn->nrows);
    dq_runmeta_kv(f, "complete", rn->complete ? "yes" : "no");
    if (rn->error[0])
        dq_runmeta_kv(f, "error", rn->error);
    dq_runmeta_kv(f, "redis", rn->redis_desc);
    dq_runmeta_kv(f, "redis_version", rn->redis_version);
    dq_runmeta_kv(f, "date", rn->started);
    dq_runmeta_kv(f, "finished", rn->finished[0] ? rn->finished : "");
    dq_runmeta_env(f);
    return run_file_close(rn, f, &buf, &len, "meta.txt", err, errlen);
}

static int copy_file(const char *from, const char *to, char *err,
                     size_t errlen)
{
    FILE *in = fopen(from, "r");
    if (in == NULL) {
        snprintf(err, errlen, "%s: %s", from, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0) {
        if (len + n > cap) {
            cap = (len + n) * 2;
            char *nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                fclose(in);
                snprintf(err, errlen, "%s: out of memory", from);
                return -1;
            }
            buf = nb;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(in);
    int rc = dq_runmeta_write_atomic(to, buf ? buf : "", len, err, errlen);
    free(buf);
    return rc;
}

/* Creates results/NAME/STAMP (runmeta.h: never an existing one). */
static int make_run_dir(run *rn, const char *results, char *err,
                        size_t errlen)
{
    snprintf(rn->expdir, sizeof rn->expdir, "%s/%s", results, rn->e->name);
    return dq_runmeta_make_dir(rn->expdir, rn->stamp, sizeof rn->stamp,
                               rn->dir, sizeof rn->dir, err, errlen);
}

#define CHECK_TIMEOUT_MS 2000

/* What a failed command on c says: the server's error reply, or the
 * transport error -- a socket timeout (hiredis 0.14: REDIS_ERR_IO with
 * EAGAIN) said as such, with the timeout. */
static const char *check_error(const redisContext *c, const redisReply *r,
                               char *buf, size_t len)
{
    if (r != NULL)
        return r->str;
    if (c->err == REDIS_ERR_IO && strcmp(c->errstr, strerror(EAGAIN)) == 0) {
        snprintf(buf, len, "timed out: no reply within %d ms",
                 CHECK_TIMEOUT_MS);
        return buf;
    }
    return c->errstr;
}

/* Removes the run directory make_run_dir just created, with the files the
 * run writes before its first trial, when writing them failed: a run that
 * never started leaves nothing behind. */
static void remove_new_run_dir(const run *rn)
{
    static const char *const files[] = {"experiment.ini", "meta.txt",
                                        "trials.csv", NULL};
    char path[PATH_MAX + 32];
    for (size_t i = 0; files[i] != NULL; i++) {
        snprintf(path, sizeof path, "%s/%s", rn->dir, files[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/logs", rn->dir);
    rmdir(path);
    rmdir(rn->dir);
}

/* Checks an external server (--redis) before anything is written: connect
 * (2 s timeout), AUTH when the URL has a password, SELECT db, PING, and
 * INFO server's redis_version into version.  Returns 0, or -1 with a
 * one-line message in err (never the password). */
static int check_redis(const dq_redis_target *t, char *version, size_t vlen,
                       char *err, size_t errlen)
{
    int ret = -1;
    redisReply *r = NULL;
    char why[128];
    snprintf(version, vlen, "unknown");
    struct timeval tv = {CHECK_TIMEOUT_MS / 1000,
                         (CHECK_TIMEOUT_MS % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(t->host, t->port, tv);
    if (c == NULL || c->err) {
        snprintf(err, errlen, "cannot connect: %s",
                 c ? c->errstr : "out of memory");
        goto done;
    }
    redisSetTimeout(c, tv);
    if (t->password[0]) {
        if (t->user[0])
            r = redisCommand(c, "AUTH %s %s", t->user, t->password);
        else
            r = redisCommand(c, "AUTH %s", t->password);
        if (r == NULL || r->type == REDIS_REPLY_ERROR) {
            snprintf(err, errlen, "AUTH failed: %s",
                     check_error(c, r, why, sizeof why));
            goto done;
        }
        freeReplyObject(r);
    }
    if (t->db != 0) {
        r = redisCommand(c, "SELECT %d", t->db);
        if (r == NULL || r->type == REDIS_REPLY_ERROR) {
            snprintf(err, errlen, "SELECT %d failed: %s", t->db,
                     check_error(c, r, why, sizeof why));
            goto done;
        }
        freeReplyObject(r);
    }
    r = redisCommand(c, "PING");
    if (r == NULL || r->type == REDIS_REPLY_ERROR) {
        /* e.g. NOAUTH when the server wants a password and the URL has
         * none */
        snprintf(err, errlen, "PING failed: %s",
                 check_error(c, r, why, sizeof why));
        goto done;
    }
    freeReplyObject(r);
    r = redisCommand(c, "INFO server");
    if (r != NULL && r->type == REDIS_REPLY_STRING)
        dq_runmeta_redis_version(r->str, version, vlen);
    ret = 0;
done:
    if (r != NULL)
        freeReplyObject(r);
    if (c != NULL)
        redisFree(c);
    return ret;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: dqlab experiment FILE [--quick] [--results DIR] "
            "[--redis URL]\n"
            "  runs every trial of the experiment file and writes\n"
            "  DIR/NAME/YYYYmmdd-HHMMSS/{trials.csv,meta.txt,logs/} "
            "(DIR default: results)\n"
            "  --quick       apply the file's [quick] overrides\n"
            "  --redis URL   use this server (redis://[user:pass@]host:port"
            "[/db]) instead of a private one\n");
}

/* The guarantees trial t (run with p) broke, by dq_trial_violations
 * (trial_output.c): fault-aware, so what a fault allows the strategy's declared
 * guarantees to lose or repeat is not counted.  Two exceptions kept from
 * before faults: tasks lost in a trial without a fault are a warning of
 * the run (grace_ms too short for the machine), and tasks behind a backlog
 * not delivered by the end are the measurement (expiry-scale).  Appends
 * one line per broken guarantee to viol; returns how many. */
static size_t trial_violations(const dq_trial_params *p, const trial_row *t,
                               size_t index, char *viol, size_t len)
{
    const char *v[8];
    size_t n = dq_trial_violations(p, &t->r, v, 8), count = 0;
    size_t off = strlen(viol);
    for (size_t i = 0; i < n && i < 8; i++) {
        if (strncmp(v[i], "lost:", 5) == 0 &&
            (p->nfaults == 0 || p->backlog > 0))
            continue;
        count++;
        off += (size_t)snprintf(viol + off, len > off ? len - off : 0,
                                "dqlab experiment: %s trial %zu%s%s%s: %s\n",
                                p->strategy->name, index + 1,
                                p->nfaults ? " (fault " : "",
                                p->nfaults ? t->cell.fault_spec : "",
                                p->nfaults ? ")" : "", v[i]);
    }
    return count;
}


/* The arguments: FILE, --quick, --results DIR, --redis URL.  Returns 0,
 * or the exit code (0 after --help, 2 on an error, printed). */
static int parse_args(int argc, char **argv, const char **file,
                      const char **results, const char **url, bool *quick,
                      bool *help)
{
    char a[256], b[256];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            *quick = true;
        } else if (strcmp(argv[i], "--results") == 0 ||
                   strcmp(argv[i], "--redis") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '\0') {
                fprintf(stderr, "dqlab experiment: %s needs a value\n",
                        argv[i]);
                return 2;
            }
            *(argv[i][4] == 's' ? results : url) = argv[i + 1];
            i++;
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            *help = true;
            return 0;
        } else if (argv[i][0] == '-') {
            dq_redact_redis_urls(argv[i], a, sizeof a);
            fprintf(stderr, "dqlab experiment: unknown option %s (see dqlab "
                    "experiment --help)\n", a);
            return 2;
        } else if (*file != NULL) {
            dq_redact_redis_urls(*file, a, sizeof a);
            dq_redact_redis_urls(argv[i], b, sizeof b);
            fprintf(stderr, "dqlab experiment: one FILE only (got %s and "
                    "%s)\n", a, b);
            return 2;
        } else {
            *file = argv[i];
        }
    }
    if (*file == NULL) {
        fprintf(stderr, "dqlab experiment: missing FILE (see dqlab "
                "experiment --help)\n");
        return 2;
    }
    return 0;
}

/* What the matrix needs before anything starts: with --redis, no fault
 * that needs the private server; a note when a fault runs the consumers
 * as processes.  Returns 0, or 2 (printed). */
static int check_matrix(run *rn, const char *file)
{
    const dq_experiment *e = rn->e;
    const dq_fault *note = NULL;
    dq_exp_cell *c = malloc(sizeof *c);

    if (c == NULL) {
        fprintf(stderr, "dqlab experiment: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < rn->ntrials; i++) {
        dq_experiment_cell(e, i, c);
        if (rn->url != NULL &&
            dq_fault_needs(c->fault, DQ_FAULT_NEEDS_OWN_SERVER)) {
            fprintf(stderr, "dqlab experiment: %s: fault %s needs the "
                    "private redis-server dqlab starts itself; drop "
                    "--redis\n", file, c->fault_spec);
            free(c);
            return 2;
        }
        if (dq_fault_needs(c->fault, DQ_FAULT_NEEDS_PROCESS) &&
            !e->params.consumer_process)
            note = c->fault;
    }
    free(c);
    if (note != NULL)
        fprintf(stderr, "dqlab: note: %s trials run the consumers as "
                "processes (consumer_mode = process)\n", dq_fault_name(note));
    for (size_t i = 0; i < e->nstrategies; i++)
        if (e->strategies[i].s->flags & DQ_G_NEEDS_REDIS)
            rn->needs_redis = true;
    return 0;
}

/* The server: --redis checked before anything is written (a wrong URL or
 * password fails here, not at trial 1 with a run dir left behind), or a
 * private one started when a strategy needs Redis.  Returns 0, or 2. */
static int open_server(run *rn)
{
    char err[1024];

    snprintf(rn->redis_desc, sizeof rn->redis_desc, "none");
    snprintf(rn->redis_version, sizeof rn->redis_version, "none");
    if (rn->url != NULL) {
        if (dq_redis_url_parse(rn->url, &rn->target, err, sizeof err) != 0) {
            fprintf(stderr, "dqlab experiment: %s\n", err); /* "--redis..." */
            return 2;
        }
        dq_redis_url_redacted(&rn->target, rn->redis_desc,
                              sizeof rn->redis_desc);
        if ((rn->needs_redis || rn->e->params.tasks == 0) &&
            check_redis(&rn->target, rn->redis_version,
                        sizeof rn->redis_version, err, sizeof err) != 0) {
            fprintf(stderr, "dqlab experiment: --redis %s: %s\n",
                    rn->redis_desc, err);
            return 2;
        }
    } else if (rn->needs_redis) {
        dq_redis_server_opts so = {0};
        if (dq_redis_server_start(&rn->server, &so, err, sizeof err) != 0) {
            fprintf(stderr, "dqlab experiment: %s\n", err);
            return 2;
        }
        snprintf(rn->target.host, sizeof rn->target.host, "127.0.0.1");
        rn->target.port = rn->server.port;
        snprintf(rn->redis_desc, sizeof rn->redis_desc,
                 "private redis-server 127.0.0.1:%d", rn->server.port);
        snprintf(rn->redis_version, sizeof rn->redis_version, "%s",
                 rn->server.version);
    }
    return 0;
}

/* The run directory with the copy of the file, meta.txt and an empty
 * trials.csv; nothing is left behind when writing them fails.  Returns 0,
 * or 2. */
static int open_run_dir(run *rn, const char *file, const char *results)
{
    char err[1024], copy[PATH_MAX + 32];

    if (make_run_dir(rn, results, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab experiment: %s\n", err);
        return 2;
    }
    dq_runmeta_now_iso(rn->started, sizeof rn->started);
    snprintf(copy, sizeof copy, "%s/experiment.ini", rn->dir);
    if (copy_file(file, copy, err, sizeof err) != 0 ||
        write_meta(rn, err, sizeof err) != 0 ||
        write_csv(rn, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab experiment: %s\n", err);
        remove_new_run_dir(rn);
        return 2;
    }
    fprintf(stderr, "dqlab: %s: %zu trial%s%s, results in %s\n",
            rn->e->name, rn->ntrials, rn->ntrials == 1 ? "" : "s",
            rn->e->quick ? " (quick)" : "", rn->dir);
    return 0;
}

/* The progress label of trial i: "[3/12] lua c=2 fault=... rep 1". */
static void trial_label(const run *rn, size_t i, const trial_row *t,
                        char *label, size_t len)
{
    const dq_experiment *e = rn->e;
    const dq_trial_params *p = &t->cell.params;
    int lo = snprintf(label, len, "[%zu/%zu] %s c=%d", i + 1, rn->ntrials,
                      p->strategy->name, p->consumers);

#define MORE(...)                                                            \
    do {                                                                     \
        if (lo > 0 && (size_t)lo < len)                                      \
            lo += snprintf(label + lo, len - (size_t)lo, __VA_ARGS__);       \
    } while (0)
    if (dq_experiment_list(e, "producers")->n > 1)
        MORE(" p=%d", p->producers);
    if (dq_experiment_list(e, "work_us")->n > 1)
        MORE(" work=%" PRId64 "us", p->work_us);
    if (dq_experiment_list(e, "backlog")->n > 1)
        MORE(" backlog=%" PRId64, p->backlog);
    if (dq_experiment_list(e, "rate")->n > 1)
        MORE(" rate=%" PRId64 "/s", p->rate);
    if (e->faults_given)
        MORE(" fault=%s", t->cell.fault_spec);
    for (size_t k = 0; k < t->cell.strategy->nopts; k++)
        MORE(" %s=%s", t->cell.strategy->opts[k].key,
             t->cell.strategy->opts[k].val);
    MORE(" rep %d", t->cell.repeat);
#undef MORE
}

/* The line a finished trial prints. */
static void trial_line(const run *rn, const trial_row *t, const char *label,
                       bool tty)
{
    const dq_check *c = &t->r.check;
    const dq_trial_result *r = &t->r;
    const dq_trial_params *p = &t->cell.params;
    const char *cr = tty ? "\r\033[K" : "", *nl = tty ? "" : "\n";

    if (rn->e->params.tasks == 0)
        fprintf(stderr, "%s%s: %.0f Redis cmds/s, server CPU %.1f ms/s%s",
                cr, label,
                r->measured_s > 0 && r->redis_commands >= 0
                    ? (double)r->redis_commands / r->measured_s : -1.0,
                r->measured_s > 0 && r->redis_cpu_us >= 0
                    ? (double)r->redis_cpu_us / 1000.0 / r->measured_s
                    : -1.0, nl);
    else if (p->nfaults > 0 || p->consumer_process || p->fail_every > 0)
        fprintf(stderr, "%s%s: extra=%" PRIu64 " (retried %" PRIu64
                " + redelivered %" PRIu64 " + fault dup %" PRIu64 " + dup %"
                PRIu64 ") lost=%" PRIu64 " pending=%" PRIu64 " early=%"
                PRIu64 " refused=%" PRIu64 " kills=%d restarts=%d %s%s", cr,
                label, c->duplicates, c->retried, c->redelivered,
                c->dup_fault, c->dup_nofault, c->lost, c->pending_end,
                c->early, c->enqueue_refused, r->kills, r->restarts,
                t->violations ? "VIOLATES its guarantees" : "ok", nl);
    else
        fprintf(stderr, "%s%s: extra=%" PRIu64 " (redelivered %" PRIu64
                " + dup %" PRIu64 ") lost=%" PRIu64 " early=%" PRIu64
                " %.0f tasks/s p99 %.1f ms%s%s", cr, label, c->duplicates,
                c->redelivered, c->dup_fault + c->dup_nofault, c->lost,
                c->early, r->tasks_per_s, c->lateness.p99_ms,
                t->violations ? " VIOLATES its guarantees" : "", nl);
    fflush(stderr);
}

/* Trial i: its parameters, the run, the bookkeeping.  Returns 0 to go on,
 * -1 to stop (an error or an interrupt, recorded in rn). */
static int run_trial(run *rn, size_t i, bool tty)
{
    const dq_experiment *e = rn->e;
    trial_row *t = &rn->rows[rn->nrows];
    dq_trial_params *p = &t->cell.params;
    char label[256], logpath[PATH_MAX + 32], err[1024];
    int rc;

    dq_experiment_cell(e, i, &t->cell);
    trial_label(rn, i, t, label, sizeof label);
    if (tty) {
        fprintf(stderr, "\r\033[K%s ...", label);
        fflush(stderr);
    }
    /* Faults needing the private server act on it (NULL with --redis). */
    p->server = rn->url == NULL && rn->server.pid > 0 ? &rn->server : NULL;
    /* In idle mode every strategy gets the server, so that a strategy
     * without Redis measures the idle server's own baseline. */
    p->redis = (p->strategy->flags & DQ_G_NEEDS_REDIS) ||
                       (p->tasks == 0 && (rn->needs_redis || rn->url != NULL))
                   ? &rn->target : NULL;
    /* Unique per run and trial: the run stamp is unique per NAME. */
    snprintf(p->queue, sizeof p->queue, "x.%.24s.%s.%03zu", e->name,
             rn->stamp, i + 1);
    snprintf(logpath, sizeof logpath, "%s/logs/trial-%03zu.log", rn->dir,
             i + 1);
    p->log_path = logpath;
    rc = dq_trial_run(p, &t->r, err, sizeof err);
    p->log_path = NULL; /* the buffer goes away */
    if (rc < 0) {
        if (tty)
            fputc('\n', stderr);
        fprintf(stderr, "dqlab experiment: trial %zu (%s): %s\n", i + 1,
                p->strategy->name, err);
        snprintf(rn->error, sizeof rn->error, "trial %zu: %s", i + 1, err);
        return -1;
    }
    if (rc == 1 || dq_signals_caught()) {
        /* Cut short: not a measurement, do not keep its row. */
        rn->interrupted = true;
        return -1;
    }
    rn->nrows++;
    /* Behind a backlog the window (grace_ms after the last due time) is a
     * deliberate cut-off (expiry-scale): tasks not seen by then are the
     * measurement, not a fault of the run. */
    if (p->backlog > 0)
        rn->lost_window += t->r.check.lost;
    else if (p->nfaults == 0)
        rn->lost_total += t->r.check.lost;
    t->violations = trial_violations(p, t, i, rn->violations,
                                     sizeof rn->violations);
    if (t->violations > 0)
        rn->nviol++;
    trial_line(rn, t, label, tty);
    if (write_csv(rn, err, sizeof err) != 0 ||
        write_meta(rn, err, sizeof err) != 0) {
        if (tty)
            fputc('\n', stderr);
        fprintf(stderr, "dqlab experiment: %s\n", err);
        snprintf(rn->error, sizeof rn->error, "%s", err);
        return -1;
    }
    return 0;
}

/* The end: meta.txt complete or not, the latest link, the warnings and
 * the exit code. */
static int finish_run(run *rn)
{
    const dq_experiment *e = rn->e;
    char err[1024];

    rn->complete = rn->nrows == rn->ntrials;
    dq_runmeta_now_iso(rn->finished, sizeof rn->finished);
    if (write_meta(rn, err, sizeof err) != 0)
        fprintf(stderr, "dqlab experiment: %s\n", err);
    if (!rn->complete) {
        fprintf(stderr, "dqlab experiment: %s: run incomplete (%zu of %zu "
                "trials%s); kept in %s, %s/latest not updated\n", e->name,
                rn->nrows, rn->ntrials, rn->interrupted ? ", interrupted" : "",
                rn->dir, rn->expdir);
        return rn->interrupted && rn->error[0] == '\0' ? 130 : 2;
    }
    if (dq_runmeta_update_latest(rn->expdir, rn->stamp, err, sizeof err)) {
        fprintf(stderr, "dqlab experiment: %s\n", err);
        return 2;
    }
    fprintf(stderr, "dqlab: %s: %zu trial%s done, %s/latest -> %s\n",
            e->name, rn->nrows, rn->nrows == 1 ? "" : "s", rn->expdir,
            rn->stamp);
    if (rn->lost_total > 0)
        fprintf(stderr, "dqlab experiment: warning: %" PRIu64 " tasks lost "
                "without faults (a recipe that drops tasks, such as "
                "cleanup_horizon_ms, or grace_ms too short for this "
                "machine: the report's section says which)\n",
                rn->lost_total);
    if (rn->lost_window > 0)
        fprintf(stderr, "dqlab: %s: %" PRIu64 " tasks behind a backlog were "
                "not delivered within the observation window (grace_ms = %"
                PRId64 "): expected in this design, the report shows the "
                "fraction delivered\n", e->name, rn->lost_window,
                e->params.grace_ms);
    if (rn->nviol > 0) {
        fputs(rn->violations, stderr);
        return 1;
    }
    return 0;
}

int dq_cmd_experiment(int argc, char **argv)
{
    const char *file = NULL, *results = "results";
    bool quick = false, help = false, tty = isatty(STDERR_FILENO);
    char err[1024];
    dq_experiment *e = calloc(1, sizeof *e);
    run *rn = calloc(1, sizeof *rn);
    int ret = 2;

    if (e == NULL || rn == NULL) {
        fprintf(stderr, "dqlab experiment: out of memory\n");
        goto free_all;
    }
    ret = parse_args(argc, argv, &file, &results, &rn->url, &quick, &help);
    if (help)
        usage(stdout);
    if (ret != 0 || help)
        goto free_all;
    ret = 2;
    if (dq_experiment_load(file, quick, e, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab experiment: %s\n", err);
        goto free_all;
    }
    rn->e = e;
    rn->ntrials = dq_experiment_ntrials(e);
    rn->rows = calloc(rn->ntrials, sizeof *rn->rows);
    if (rn->rows == NULL) {
        fprintf(stderr, "dqlab experiment: out of memory\n");
        goto free_all;
    }
    dq_runmeta_command_line(argc, argv, rn->command, sizeof rn->command);
    if (check_matrix(rn, file) != 0)
        goto free_all;
    /* Ctrl-C / SIGTERM / SIGHUP: the handler (signals.c) asks the running
     * trial to stop; the loop below then keeps the trials done so far. */
    dq_signals_install();
    if (open_server(rn) != 0 || open_run_dir(rn, file, results) != 0)
        goto stop_server;
    for (size_t i = 0; i < rn->ntrials; i++) {
        if (dq_signals_caught()) {
            rn->interrupted = true;
            break;
        }
        if (run_trial(rn, i, tty) != 0)
            break;
    }
    if (tty)
        fputc('\n', stderr);
    ret = finish_run(rn);
stop_server:
    dq_redis_server_stop(&rn->server);
free_all:
    if (rn != NULL)
        free(rn->rows);
    free(rn);
    dq_experiment_free(e);
    free(e);
    return ret;
}
