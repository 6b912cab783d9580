/* trial.c -- one trial: producers, consumers, the event log, the check
 * (trial.h).
 *
 * Shape of a trial:
 *   1. Redis strategies: connect once on a bare handle (rconn.h helpers,
 *      which give the same AUTH / version / unreachable messages as the
 *      strategies), refuse when keys dq:{queue}:* already exist (or purge
 *      them with fresh), and take INFO commandstats.
 *   2. Open one dq_queue handle per producer and per consumer (all in this
 *      thread, so a bad option or connection fails before anything runs);
 *      every handle shares one dq_local for in-process strategies.
 *   3. Producer threads enqueue tasks "t<index>" (index = producer,
 *      producer + P, ...) with due = now + a seeded delay, and log E after
 *      enqueue returns.  Consumer threads loop claim(100 ms) -> log D ->
 *      sleep work_us -> ack -> log A.
 *   4. This thread waits until every task was delivered at least once (a
 *      shared atomic bitmap over the harness's own indices) or the drain
 *      deadline (latest due + grace) passes, or an interrupt; then it stops
 *      and joins everyone, takes INFO commandstats again, purges the queue's
 *      keys (the log is the record of the trial) and runs the checker on
 *      the log: the numbers reported come from the log, not from here.
 *
 * Idle mode (tasks = 0, idle_ms > 0): no task is enqueued; consumers
 * claim against the empty queue for idle_ms and the trial measures what
 * that costs the server.  Backlog (backlog > 0): before step 3, the
 * producer handles enqueue `backlog` tasks "b<index>" due backlog_delay_ms
 * ahead, in parallel, so the measured tasks meet a queue of that many
 * pending tasks (keys, for expiry) that never fall due in the trial.
 *
 * redis_cpu_us is the delta of INFO cpu used_cpu_sys + used_cpu_user (the
 * whole server process, https://redis.io/commands/info/) between the same
 * two snapshots.
 *
 * redis_commands is the delta of the summed `calls=` of INFO commandstats
 * (https://redis.io/commands/info/) minus the delta of cmdstat_info (our
 * own INFO calls).  On a shared server it includes other clients' commands.
 *
 * Nothing here prints except the progress line (p->progress) on stderr: a
 * live "\r" line on a terminal, a plain line every 5 s otherwise.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "../strategies/rconn.h"
#include "eventlog.h"
#include "trial.h"

#define CLAIM_TIMEOUT_MS 100
#define BACKLOG_DELAY_MS 3600000
#define IDLE_SETTLE_US 200000
#define ERROR_BACKOFF_US 50000
#define WAIT_STEP_US 10000
#define PROGRESS_TTY_US 200000
#define PROGRESS_PLAIN_US 5000000

static volatile sig_atomic_t g_interrupt;

void dq_trial_interrupt(void)
{
    g_interrupt = 1;
}

bool dq_trial_interrupted(void)
{
    return g_interrupt != 0;
}

/* ---- Seeded task contents -------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void dq_trial_payload(uint64_t seed, int64_t index, unsigned char *buf,
                      size_t payload_len)
{
    static const unsigned char special[] = {0, '\n', ',', '\t', '\r', '"',
                                            '\\'};
    uint64_t s = seed ^ (0xD1B54A32D192ED03ULL * (uint64_t)(index + 1));
    uint64_t r = 0;

    for (size_t i = 0; i < payload_len; i++) {
        if (i % 8 == 0)
            r = splitmix64(&s);
        buf[i] = (unsigned char)(r >> (8 * (i % 8)));
    }
    for (size_t i = 0; i < payload_len && i < sizeof special; i++)
        buf[i] = special[i];
}

int64_t dq_trial_delay_ms(uint64_t seed, int64_t index, int64_t lo_ms,
                          int64_t hi_ms)
{
    uint64_t s = seed ^ (0xA24BAED4963EE407ULL * (uint64_t)(index + 1));
    uint64_t span = (uint64_t)(hi_ms - lo_ms) + 1;

    if (hi_ms <= lo_ms)
        return lo_ms;
    return lo_ms + (int64_t)(splitmix64(&s) % span);
}

/* ---- Shared state ------------------------------------------------------ */

typedef struct trial {
    const dq_trial_params *p;
    dq_eventlog *log;
    _Atomic uint64_t *seen;        /* bit per task index: delivered once */
    atomic_int_fast64_t distinct;  /* bits set in seen */
    atomic_int_fast64_t enqueued;
    atomic_int_fast64_t first_e_us;  /* 0 until the first enqueue */
    atomic_int_fast64_t last_d_us;
    atomic_int_fast64_t latest_due_ms;
    atomic_int producers_left;
    atomic_bool stop;
    atomic_bool failed;            /* a producer or the log failed */
    atomic_uint_fast64_t errors;
    atomic_uint_fast64_t payload_bad;
    pthread_mutex_t mu;            /* guards the two messages below */
    char fail_msg[256];
    char first_error[256];
} trial;

typedef struct worker {
    trial *t;
    dq_queue *q;
    int index;
    char name[16];                 /* "p0", "c3" */
    pthread_t th;
    bool started;
} worker;

static void atomic_min64(atomic_int_fast64_t *a, int64_t v)
{
    int_fast64_t cur = atomic_load(a);
    while ((cur == 0 || v < cur) &&
           !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

static void atomic_max64(atomic_int_fast64_t *a, int64_t v)
{
    int_fast64_t cur = atomic_load(a);
    while (v > cur && !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

/* Records a fatal problem and stops the trial (first message wins). */
static void trial_fail(trial *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void trial_fail(trial *t, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&t->mu);
    if (!atomic_load(&t->failed)) {
        va_start(ap, fmt);
        vsnprintf(t->fail_msg, sizeof t->fail_msg, fmt, ap);
        va_end(ap);
        atomic_store(&t->failed, true);
    }
    pthread_mutex_unlock(&t->mu);
    atomic_store(&t->stop, true);
}

/* Counts a failed claim/ack and keeps the first message. */
static void op_error(worker *w, const char *op, int rc)
{
    trial *t = w->t;

    if (atomic_fetch_add(&t->errors, 1) == 0) {
        pthread_mutex_lock(&t->mu);
        snprintf(t->first_error, sizeof t->first_error, "%s: %s: %s (%s)",
                 w->name, op, dq_errstr(w->q), dq_result_name(rc));
        pthread_mutex_unlock(&t->mu);
    }
}

static bool should_stop(trial *t)
{
    return atomic_load(&t->stop) || g_interrupt;
}

/* The index of a harness id "t<digits>" below tasks, or -1. */
static int64_t id_index(const char *id, int64_t tasks)
{
    int64_t v = 0;

    if (id[0] != 't' || id[1] == '\0')
        return -1;
    for (const char *s = id + 1; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v < tasks ? v : -1;
}

/* ---- Threads ----------------------------------------------------------- */

static void *producer_main(void *arg)
{
    worker *w = arg;
    trial *t = w->t;
    const dq_trial_params *p = t->p;
    unsigned char *buf = malloc(p->payload_bytes ? (size_t)p->payload_bytes : 1);

    if (buf == NULL) {
        trial_fail(t, "%s: out of memory", w->name);
        goto done;
    }
    for (int64_t i = w->index; i < p->tasks; i += p->producers) {
        char id[32];
        int64_t due_ms, now_us;
        int rc;

        if (should_stop(t))
            break;
        snprintf(id, sizeof id, "t%" PRId64, i);
        dq_trial_payload(p->seed, i, buf, (size_t)p->payload_bytes);
        due_ms = dq_now_ms(w->q) +
                 dq_trial_delay_ms(p->seed, i, p->delay_min_ms, p->delay_max_ms);
        rc = dq_enqueue(w->q, id, buf, (size_t)p->payload_bytes, due_ms);
        if (rc != DQ_OK) {
            trial_fail(t, "%s: enqueue %s: %s", w->name, id, dq_errstr(w->q));
            break;
        }
        now_us = dq_wall_us();
        atomic_max64(&t->latest_due_ms, due_ms);
        if (dq_log_enqueue(t->log, now_us, id, due_ms, w->name) != 0) {
            trial_fail(t, "event log: %s", strerror(errno));
            break;
        }
        atomic_min64(&t->first_e_us, now_us);
        atomic_fetch_add(&t->enqueued, 1);
    }
done:
    free(buf);
    atomic_fetch_sub(&t->producers_left, 1);
    return NULL;
}

/* Enqueues this producer's share of the backlog: ids "b<index>", due
 * backlog_delay_ms ahead, not logged (only counted in a header). */
static void *backlog_main(void *arg)
{
    worker *w = arg;
    trial *t = w->t;
    const dq_trial_params *p = t->p;
    unsigned char *buf = malloc(p->payload_bytes ? (size_t)p->payload_bytes : 1);

    if (buf == NULL) {
        trial_fail(t, "%s: out of memory", w->name);
        return NULL;
    }
    for (int64_t i = w->index; i < p->backlog; i += p->producers) {
        char id[32];
        int rc;

        if (should_stop(t))
            break;
        snprintf(id, sizeof id, "b%" PRId64, i);
        dq_trial_payload(p->seed ^ 0x5bd1e995u, i, buf,
                         (size_t)p->payload_bytes);
        rc = dq_enqueue(w->q, id, buf, (size_t)p->payload_bytes,
                        dq_now_ms(w->q) + p->backlog_delay_ms);
        if (rc != DQ_OK) {
            trial_fail(t, "%s: enqueue backlog %s: %s", w->name, id,
                       dq_errstr(w->q));
            break;
        }
    }
    free(buf);
    return NULL;
}

static void *consumer_main(void *arg)
{
    worker *w = arg;
    trial *t = w->t;
    const dq_trial_params *p = t->p;
    unsigned char *want = malloc(p->payload_bytes ? (size_t)p->payload_bytes : 1);

    if (want == NULL) {
        trial_fail(t, "%s: out of memory", w->name);
        return NULL;
    }
    while (!should_stop(t)) {
        dq_task task;
        int64_t now_us, idx;
        int rc;

        memset(&task, 0, sizeof task);
        rc = dq_claim(w->q, p->claim_timeout_ms, &task);
        if (rc == DQ_EMPTY)
            continue;
        if (rc != DQ_OK) {
            op_error(w, "claim", rc);
            dq_sleep_us(ERROR_BACKOFF_US);
            continue;
        }
        now_us = dq_wall_us();
        if (dq_log_deliver(t->log, now_us, task.id, w->name,
                           task.attempt) != 0) {
            trial_fail(t, "event log: %s (task id '%.64s')", strerror(errno),
                       task.id);
            dq_task_clear(&task);
            break;
        }
        atomic_max64(&t->last_d_us, now_us);
        idx = id_index(task.id, p->tasks);
        if (idx >= 0) {
            uint64_t bit = 1ULL << (idx % 64);
            if ((atomic_fetch_or(&t->seen[idx / 64], bit) & bit) == 0)
                atomic_fetch_add(&t->distinct, 1);
            dq_trial_payload(p->seed, idx, want, (size_t)p->payload_bytes);
            if (task.payload_len != (size_t)p->payload_bytes ||
                (task.payload_len > 0 &&
                 memcmp(task.payload, want, task.payload_len) != 0))
                atomic_fetch_add(&t->payload_bad, 1);
        }
        dq_sleep_us(p->work_us);
        rc = dq_ack(w->q, &task);
        if (rc != DQ_OK)
            op_error(w, "ack", rc);
        else if (dq_log_ack(t->log, dq_wall_us(), task.id, w->name) != 0)
            trial_fail(t, "event log: %s", strerror(errno));
        dq_task_clear(&task);
    }
    free(want);
    return NULL;
}

/* ---- Redis bookkeeping --------------------------------------------------- */

/* Sum of calls= over INFO commandstats into *total, and cmdstat_info's
 * into *info.  Returns DQ_OK or a DQ_E* code with q->err set. */
static int commandstats(dq_queue *q, redisContext *c, int64_t *total,
                        int64_t *info)
{
    const char *argv[2] = {"INFO", "commandstats"};
    redisReply *r;
    const char *s;
    int rc;

    *total = *info = 0;
    r = dq_redis_cmd(q, c, &rc, 2, argv, NULL);
    if (r == NULL)
        return rc;
    if (r->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "INFO commandstats: not a string");
    }
    for (s = r->str; (s = strstr(s, "cmdstat_")) != NULL; s++) {
        const char *calls = strstr(s, ":calls=");
        const char *eol = strchr(s, '\n');
        long long n;

        if (calls == NULL || (eol != NULL && calls > eol))
            continue;
        n = strtoll(calls + 7, NULL, 10);
        *total += n;
        if (strncmp(s, "cmdstat_info:", 13) == 0)
            *info += n;
    }
    freeReplyObject(r);
    return DQ_OK;
}

/* used_cpu_sys + used_cpu_user of INFO cpu, in microseconds, into *us.
 * Returns DQ_OK or a DQ_E* code with q->err set. */
static int server_cpu(dq_queue *q, redisContext *c, int64_t *us)
{
    const char *argv[2] = {"INFO", "cpu"};
    const char *keys[2] = {"used_cpu_sys:", "used_cpu_user:"};
    redisReply *r;
    int rc;

    *us = 0;
    r = dq_redis_cmd(q, c, &rc, 2, argv, NULL);
    if (r == NULL)
        return rc;
    if (r->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "INFO cpu: not a string");
    }
    for (int i = 0; i < 2; i++) {
        const char *v = strstr(r->str, keys[i]);
        if (v == NULL) {
            freeReplyObject(r);
            return dq_fail(q, DQ_EPROTO, "INFO cpu: no %s", keys[i]);
        }
        *us += (int64_t)(strtod(v + strlen(keys[i]), NULL) * 1e6 + 0.5);
    }
    freeReplyObject(r);
    return DQ_OK;
}

static void progress(trial *t, int64_t start_us, bool tty, bool final)
{
    const dq_trial_params *p = t->p;
    double el = (double)(dq_mono_us() - start_us) / 1e6;

    if (final) {
        if (tty)
            fprintf(stderr, "\r\033[K");
        return;
    }
    fprintf(stderr, "%s[%s] %.1fs enqueued %" PRIdFAST64 "/%" PRId64
            " delivered %" PRIdFAST64 " errors %" PRIuFAST64 "%s",
            tty ? "\r\033[K" : "", p->strategy->name, el,
            atomic_load(&t->enqueued), p->tasks, atomic_load(&t->distinct),
            atomic_load(&t->errors), tty ? "" : "\n");
    fflush(stderr);
}

/* ---- The trial ----------------------------------------------------------- */

void dq_trial_defaults(dq_trial_params *p)
{
    memset(p, 0, sizeof *p);
    p->producers = 1;
    p->consumers = 1;
    p->tasks = 1000;
    p->delay_min_ms = 0;
    p->delay_max_ms = 100;
    p->work_us = 0;
    p->payload_bytes = 16;
    p->grace_ms = 2000;
    p->seed = 1;
    p->claim_timeout_ms = CLAIM_TIMEOUT_MS;
    p->idle_ms = 0;
    p->backlog = 0;
    p->backlog_delay_ms = BACKLOG_DELAY_MS;
}

static int log_headers(dq_eventlog *log, const dq_trial_params *p,
                       const dq_trial_result *r)
{
    char v[160], k[48];
    int e = 0;

#define H(key, ...) \
    (snprintf(v, sizeof v, __VA_ARGS__), e |= dq_log_header(log, key, v))
    e |= dq_log_header(log, "strategy", p->strategy->name);
    e |= dq_log_header(log, "queue", r->queue);
    H("seed", "%" PRIu64, p->seed);
    H("producers", "%d", p->producers);
    H("consumers", "%d", p->consumers);
    H("tasks", "%" PRId64, p->tasks);
    H("delay_ms", "%" PRId64 ":%" PRId64, p->delay_min_ms, p->delay_max_ms);
    H("work_us", "%" PRId64, p->work_us);
    H("payload_bytes", "%" PRId64, p->payload_bytes);
    H("grace_ms", "%" PRId64, p->grace_ms);
    H("claim_timeout_ms", "%" PRId64, p->claim_timeout_ms);
    if (p->tasks == 0)
        H("idle_ms", "%" PRId64, p->idle_ms);
    if (p->backlog > 0) {
        H("backlog", "%" PRId64, p->backlog);
        H("backlog_delay_ms", "%" PRId64, p->backlog_delay_ms);
    }
    H("start_us", "%" PRId64, dq_wall_us());
    if (r->redis_version[0])
        e |= dq_log_header(log, "redis_version", r->redis_version);
    for (size_t i = 0; i < r->nopts; i++) {
        snprintf(k, sizeof k, "opt.%s", r->opts[i].key);
        e |= dq_log_header(log, k, r->opts[i].val);
    }
#undef H
    return e ? -1 : 0;
}

int dq_trial_run(const dq_trial_params *p, dq_trial_result *r, char *err,
                 size_t errlen)
{
    trial t;
    worker *ws = NULL;
    int nw = 0;
    dq_local *local = NULL;
    dq_queue admin;          /* bare handle for rconn helpers */
    redisContext *rc_ctx = NULL;
    int64_t before_total = 0, before_info = 0, before_cpu = 0;
    int64_t before_mono = 0;
    dq_config cfg;
    bool needs_redis, idle;
    int ret = -1, rc;
    int64_t start_us, next_progress_us, end_us;
    bool tty;

    memset(r, 0, sizeof *r);
    r->redis_commands = -1;
    r->redis_cpu_us = -1;
    memset(&t, 0, sizeof t);
    pthread_mutex_init(&t.mu, NULL);
    t.p = p;
    memset(&admin, 0, sizeof admin);

    if (p->strategy == NULL || p->producers < 1 || p->consumers < 1 ||
        p->tasks < 0 || p->delay_min_ms < 0 || p->delay_max_ms < p->delay_min_ms ||
        p->work_us < 0 || p->payload_bytes < 0 || p->grace_ms < 0 ||
        p->claim_timeout_ms < 0 || p->backlog < 0 ||
        p->backlog_delay_ms < 0 || (p->tasks == 0 && p->idle_ms <= 0) ||
        p->log_path == NULL) {
        snprintf(err, errlen, "dq_trial_run: invalid parameters");
        goto out;
    }
    idle = p->tasks == 0;
    /* In idle mode a strategy without Redis still gets the server measured
     * when one is given: the baseline of an idle server. */
    needs_redis = (p->strategy->flags & DQ_G_NEEDS_REDIS) != 0 ||
                  (idle && p->redis != NULL);
    if (needs_redis && p->redis == NULL) {
        snprintf(err, errlen, "strategy '%s' needs Redis but no server was "
                 "given", p->strategy->name);
        goto out;
    }
    if (p->queue[0])
        snprintf(r->queue, sizeof r->queue, "%s", p->queue);
    else
        snprintf(r->queue, sizeof r->queue, "dqlab-%.40s-%" PRIu64,
                 p->strategy->name, p->seed);

    memset(&cfg, 0, sizeof cfg);
    cfg.queue = r->queue;
    cfg.opts = p->opts;
    cfg.nopts = p->nopts;
    if (needs_redis) {
        cfg.redis_host = p->redis->host;
        cfg.redis_port = p->redis->port;
        cfg.redis_user = p->redis->user[0] ? p->redis->user : NULL;
        cfg.redis_password = p->redis->password[0] ? p->redis->password : NULL;
        cfg.redis_db = p->redis->db;
    }

    /* 1. Redis: reachable, right password, recent enough, queue unused. */
    if (needs_redis) {
        admin.s = p->strategy;
        snprintf(admin.queue, sizeof admin.queue, "%s", r->queue);
        admin.cfg = cfg;
        admin.cfg.queue = admin.queue;
        admin.cfg.consumer = "dqlab-admin";
        rc = dq_redis_connect(&admin, p->strategy->min_redis, 10000, &rc_ctx);
        if (rc != DQ_OK) {
            snprintf(err, errlen, "%s", admin.err);
            goto out;
        }
        {
            const char *argv[2] = {"INFO", "server"};
            redisReply *rep = dq_redis_cmd(&admin, rc_ctx, &rc, 2, argv, NULL);
            if (rep != NULL && rep->type == REDIS_REPLY_STRING) {
                const char *v = strstr(rep->str, "redis_version:");
                if (v != NULL)
                    snprintf(r->redis_version, sizeof r->redis_version, "%.*s",
                             (int)strcspn(v + 14, "\r\n"), v + 14);
            }
            if (rep != NULL)
                freeReplyObject(rep);
        }
        rc = dq_redis_exists(&admin, rc_ctx);
        if (rc < 0) {
            snprintf(err, errlen, "%s", admin.err);
            goto out;
        }
        if (rc == 1 && !p->fresh) {
            snprintf(err, errlen, "queue '%s' already has keys in Redis "
                     "(dq:{%s}:*); pass --fresh to delete them or choose "
                     "another queue", r->queue, r->queue);
            goto out;
        }
        if (rc == 1 && dq_redis_purge(&admin, rc_ctx) != DQ_OK) {
            snprintf(err, errlen, "%s", admin.err);
            goto out;
        }
    }

    /* 2. Handles, opened here so that any failure comes before the run. */
    local = dq_local_new();
    ws = calloc((size_t)p->producers + (size_t)p->consumers, sizeof *ws);
    t.seen = calloc((size_t)(p->tasks + 63) / 64 + 1, sizeof *t.seen);
    if (local == NULL || ws == NULL || t.seen == NULL) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    cfg.local = local;
    for (int i = 0; i < p->producers + p->consumers; i++) {
        worker *w = &ws[i];
        bool prod = i < p->producers;

        w->t = &t;
        w->index = prod ? i : i - p->producers;
        snprintf(w->name, sizeof w->name, "%c%d", prod ? 'p' : 'c', w->index);
        cfg.consumer = w->name;
        if (dq_open(p->strategy, &cfg, &w->q, err, errlen) != DQ_OK)
            goto out;
        nw++;
    }
    r->nopts = ws[0].q->nopts;
    memcpy(r->opts, ws[0].q->opts, sizeof r->opts);

    t.log = dq_eventlog_create(p->log_path, err, errlen);
    if (t.log == NULL)
        goto out;
    if (log_headers(t.log, p, r) != 0) {
        snprintf(err, errlen, "%s: write: %s", p->log_path, strerror(errno));
        goto out;
    }

    /* 2b. The backlog, by every producer handle at once. */
    if (p->backlog > 0) {
        int64_t b0 = dq_mono_us();
        int started = 0;
        for (int i = 0; i < p->producers; i++) {
            if (pthread_create(&ws[i].th, NULL, backlog_main, &ws[i]) != 0) {
                trial_fail(&t, "pthread_create: %s", strerror(errno));
                break;
            }
            started++;
        }
        for (int i = 0; i < started; i++)
            pthread_join(ws[i].th, NULL);
        r->backlog_s = (double)(dq_mono_us() - b0) / 1e6;
        if (atomic_load(&t.failed)) {
            snprintf(err, errlen, "%s", t.fail_msg);
            goto out;
        }
        atomic_store(&t.stop, false);
    }

    /* Idle mode: let the server settle after the previous trial's
     * clean-up (closing connections, deleting keys) before measuring. */
    if (idle && rc_ctx != NULL)
        dq_sleep_us(IDLE_SETTLE_US);
    if (rc_ctx != NULL &&
        (server_cpu(&admin, rc_ctx, &before_cpu) != DQ_OK ||
         commandstats(&admin, rc_ctx, &before_total, &before_info) != DQ_OK)) {
        snprintf(err, errlen, "%s", admin.err);
        goto out;
    }
    before_mono = dq_mono_us();

    /* 3. Run. */
    atomic_store(&t.producers_left, p->producers);
    for (int i = 0; i < nw; i++) {
        worker *w = &ws[i];
        if (pthread_create(&w->th, NULL,
                           i < p->producers ? producer_main : consumer_main,
                           w) != 0) {
            trial_fail(&t, "pthread_create: %s", strerror(errno));
            if (i < p->producers)  /* it will never count itself down */
                atomic_fetch_sub(&t.producers_left, p->producers - i);
            break;
        }
        w->started = true;
    }

    /* 4. Wait for the end. */
    tty = isatty(STDERR_FILENO);
    start_us = dq_mono_us();
    next_progress_us = start_us + (tty ? PROGRESS_TTY_US : PROGRESS_PLAIN_US);
    for (;;) {
        if (g_interrupt) {
            r->interrupted = true;
            break;
        }
        if (atomic_load(&t.failed))
            break;
        if (idle) {
            if (dq_mono_us() - start_us >= p->idle_ms * 1000) {
                r->drained = true;
                break;
            }
        } else if (atomic_load(&t.distinct) == p->tasks) {
            r->drained = true;
            break;
        }
        else if (atomic_load(&t.producers_left) == 0 &&
            dq_wall_us() / 1000 > atomic_load(&t.latest_due_ms) + p->grace_ms)
            break;
        if (p->progress && dq_mono_us() >= next_progress_us) {
            progress(&t, start_us, tty, false);
            next_progress_us += tty ? PROGRESS_TTY_US : PROGRESS_PLAIN_US;
        }
        dq_sleep_us(WAIT_STEP_US);
    }
    end_us = dq_mono_us();
    atomic_store(&t.stop, true);
    for (int i = 0; i < nw; i++)
        if (ws[i].started)
            pthread_join(ws[i].th, NULL);
    if (p->progress)
        progress(&t, start_us, tty, true);
    if (atomic_load(&t.failed)) {
        snprintf(err, errlen, "%s", t.fail_msg);
        goto out;
    }

    for (int i = 0; i < nw; i++) {
        const dq_counters *c = &ws[i].q->counters;
        r->counters.round_trips += c->round_trips;
        r->counters.empty_polls += c->empty_polls;
        r->counters.lost_races += c->lost_races;
        r->counters.wakeups += c->wakeups;
        r->counters.putbacks += c->putbacks;
    }
    r->errors = atomic_load(&t.errors);
    snprintf(r->first_error, sizeof r->first_error, "%s", t.first_error);
    r->payload_mismatches = atomic_load(&t.payload_bad);

    if (rc_ctx != NULL) {
        int64_t after_total, after_info, after_cpu;
        r->measured_s = (double)(dq_mono_us() - before_mono) / 1e6;
        if (server_cpu(&admin, rc_ctx, &after_cpu) == DQ_OK)
            r->redis_cpu_us = after_cpu - before_cpu;
        if (commandstats(&admin, rc_ctx, &after_total, &after_info) == DQ_OK)
            r->redis_commands = (after_total - before_total) -
                                (after_info - before_info);
        dq_redis_purge(&admin, rc_ctx); /* best effort: the log is kept */
    }

    /* 5. Check the log. */
    dq_eventlog_close(t.log);
    t.log = NULL;
    if (dq_check_file(p->log_path, &r->check, err, errlen) != 0)
        goto out;
    {
        int64_t first = atomic_load(&t.first_e_us);
        int64_t last = atomic_load(&t.last_d_us);
        if (idle)
            r->elapsed_s = (double)(end_us - start_us) / 1e6;
        else if (first > 0 && last > first)
            r->elapsed_s = (double)(last - first) / 1e6;
        else if (first > 0)
            r->elapsed_s = (double)(dq_wall_us() - first) / 1e6;
        r->tasks_per_s = r->elapsed_s > 0
                             ? (double)r->check.delivered / r->elapsed_s : 0;
    }
    ret = r->interrupted ? 1 : 0;

out:
    if (ws != NULL) {
        atomic_store(&t.stop, true);
        for (int i = 0; i < nw; i++)
            dq_close(ws[i].q);
        free(ws);
    }
    dq_eventlog_close(t.log);
    if (local != NULL)
        dq_local_free(local);
    if (rc_ctx != NULL)
        redisFree(rc_ctx);
    free(t.seen);
    pthread_mutex_destroy(&t.mu);
    return ret;
}

/* ---- Verdict and JSON ------------------------------------------------------ */

size_t dq_trial_violations(const dq_trial_params *p, const dq_trial_result *r,
                           const char **out, size_t max)
{
    const char *v[6];
    size_t n = 0;

    if (r->check.early > 0)
        v[n++] = "early: tasks were delivered before their due time";
    if (r->check.unknown > 0)
        v[n++] = "unknown: ids that were never enqueued were delivered";
    /* A strategy that declares duplicates may hand a duplicate out after
     * the winner acked and deleted the payload (naive): that is the same
     * documented bug, so it is counted but not a further violation. */
    if (r->payload_mismatches > 0 && p->strategy != NULL &&
        !(p->strategy->flags & DQ_G_DUPLICATES))
        v[n++] = "payload: delivered bytes differ from the enqueued bytes";
    if (r->check.duplicates > 0 && p->strategy != NULL &&
        (p->strategy->flags & DQ_G_NO_DUP_CONCURRENT))
        v[n++] = "duplicates: the strategy declares no-dup-concurrent";
    if (r->check.lost > 0 && !r->interrupted)
        v[n++] = "lost: tasks not delivered by the drain deadline (latest "
                 "due + grace; raise --grace-ms if consumers are just slow)";
    for (size_t i = 0; i < n && i < max; i++)
        out[i] = v[i];
    return n;
}

json_t *dq_trial_json(const dq_trial_params *p, const dq_trial_result *r)
{
    json_t *o = dq_check_json(&r->check);
    json_t *opts = json_object(), *delay = json_object(), *cnt = json_object();
    json_t *flags = json_array(), *viol = json_array();
    const char *vs[8];
    size_t nv;

    if (o == NULL || opts == NULL || delay == NULL || cnt == NULL ||
        flags == NULL || viol == NULL) {
        json_decref(o);
        json_decref(opts);
        json_decref(delay);
        json_decref(cnt);
        json_decref(flags);
        json_decref(viol);
        return NULL;
    }
    json_object_set_new(o, "strategy", json_string(p->strategy->name));
    json_object_set_new(o, "queue", json_string(r->queue));
    for (size_t i = 0; i < r->nopts; i++)
        json_object_set_new(opts, r->opts[i].key, json_string(r->opts[i].val));
    json_object_set_new(o, "options", opts);
    json_object_set_new(o, "producers", json_integer(p->producers));
    json_object_set_new(o, "consumers", json_integer(p->consumers));
    json_object_set_new(o, "tasks", json_integer(p->tasks));
    json_object_set_new(delay, "min", json_integer(p->delay_min_ms));
    json_object_set_new(delay, "max", json_integer(p->delay_max_ms));
    json_object_set_new(o, "delay_ms", delay);
    json_object_set_new(o, "work_us", json_integer(p->work_us));
    json_object_set_new(o, "payload_bytes", json_integer(p->payload_bytes));
    json_object_set_new(o, "grace_ms", json_integer(p->grace_ms));
    {
        char seed[32];
        /* As a string too: a uint64 seed may not fit a JSON integer. */
        snprintf(seed, sizeof seed, "%" PRIu64, p->seed);
        json_object_set_new(o, "seed", p->seed <= INT64_MAX
                                           ? json_integer((json_int_t)p->seed)
                                           : json_string(seed));
    }
    json_object_set_new(o, "tasks_per_s", json_real(r->tasks_per_s));
    json_object_set_new(o, "elapsed_s", json_real(r->elapsed_s));
    json_object_set_new(o, "redis_commands",
                        r->redis_commands >= 0
                            ? json_integer(r->redis_commands) : json_null());
    json_object_set_new(o, "redis_version",
                        r->redis_version[0] ? json_string(r->redis_version)
                                            : json_null());
    json_object_set_new(cnt, "round_trips",
                        json_integer((json_int_t)r->counters.round_trips));
    json_object_set_new(cnt, "empty_polls",
                        json_integer((json_int_t)r->counters.empty_polls));
    json_object_set_new(cnt, "lost_races",
                        json_integer((json_int_t)r->counters.lost_races));
    json_object_set_new(cnt, "wakeups",
                        json_integer((json_int_t)r->counters.wakeups));
    json_object_set_new(cnt, "putbacks",
                        json_integer((json_int_t)r->counters.putbacks));
    json_object_set_new(o, "counters", cnt);
    json_object_set_new(o, "errors", json_integer((json_int_t)r->errors));
    json_object_set_new(o, "first_error", r->first_error[0]
                                              ? json_string(r->first_error)
                                              : json_null());
    json_object_set_new(o, "payload_mismatches",
                        json_integer((json_int_t)r->payload_mismatches));
    json_object_set_new(o, "drained", json_boolean(r->drained));
    json_object_set_new(o, "interrupted", json_boolean(r->interrupted));
    for (unsigned b = 1; b != 0 && b <= (1u << 15); b <<= 1)
        if ((p->strategy->flags & b) && dq_flag_name(b) != NULL)
            json_array_append_new(flags, json_string(dq_flag_name(b)));
    json_object_set_new(o, "guarantees", flags);
    nv = dq_trial_violations(p, r, vs, sizeof vs / sizeof vs[0]);
    for (size_t i = 0; i < nv; i++)
        json_array_append_new(viol, json_string(vs[i]));
    json_object_set_new(o, "violations", viol);
    json_object_set_new(o, "claim_timeout_ms",
                        json_integer(p->claim_timeout_ms));
    json_object_set_new(o, "idle_ms", json_integer(p->tasks == 0 ? p->idle_ms
                                                                 : 0));
    json_object_set_new(o, "backlog", json_integer(p->backlog));
    json_object_set_new(o, "backlog_delay_ms",
                        json_integer(p->backlog_delay_ms));
    json_object_set_new(o, "measured_s", json_real(r->measured_s));
    json_object_set_new(o, "redis_cpu_ms",
                        r->redis_cpu_us >= 0
                            ? json_real((double)r->redis_cpu_us / 1000.0)
                            : json_null());
    json_object_set_new(o, "backlog_s", json_real(r->backlog_s));
    return o;
}
