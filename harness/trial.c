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
 *      sleep work_us -> ack -> log A (accepted) or R (refused, failed).
 *   4. This thread waits until every task was delivered at least once (a
 *      shared atomic bitmap over the harness's own indices; with a lease
 *      also acked, a second bitmap, so that redeliveries after a lease
 *      ran out are seen) or the drain deadline (grace after the latest
 *      due time, the end of the fault windows, and -- for an
 *      at-least-once strategy -- the last consumer kill + lease_ms, when
 *      the killed consumer's task comes back) passes, or an interrupt;
 *      then it stops and joins everyone, takes INFO commandstats again,
 *      purges the queue's keys (the log is the record of the trial), ends
 *      the log with its Z record (clean, or interrupted) and runs the
 *      checker on the log: the numbers reported come from the log, not
 *      from here.
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
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "../strategies/rconn.h"
#include "eventlog.h"
#include "faults.h"
#include "redis_server.h"
#include "runmeta.h"
#include "signals.h"
#include "spawn.h"
#include "trial.h"

#define CLAIM_TIMEOUT_MS 100
#define BACKLOG_DELAY_MS 3600000
#define IDLE_SETTLE_US 200000
#define ERROR_BACKOFF_US 50000
#define WAIT_STEP_US 10000
#define PROGRESS_TTY_US 200000
#define PROGRESS_PLAIN_US 5000000

/* Set by a signal handler on any thread, read by the worker threads: a
 * lock-free atomic (async-signal-safe and data-race free, as in signals.c). */
static atomic_int g_interrupt;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "atomic_int must be lock-free");

void dq_trial_interrupt(void)
{
    atomic_store(&g_interrupt, 1);
}

bool dq_trial_interrupted(void)
{
    return atomic_load(&g_interrupt) != 0;
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
    dq_eventlog *log;              /* parent: the log it created */
    bool retry;                    /* faults: retry enqueue / ack */
    _Atomic uint64_t *seen;        /* bit per task index: delivered once */
    atomic_int_fast64_t distinct;  /* bits set in seen */
    _Atomic uint64_t *acked;       /* bit per task index: an ack accepted
                                      (an A record) */
    atomic_int_fast64_t acked_distinct; /* bits set in acked */
    atomic_int_fast64_t enqueued;
    atomic_int_fast64_t first_e_us;  /* 0 until the first enqueue */
    atomic_int_fast64_t last_d_us;
    atomic_int_fast64_t latest_due_ms;
    atomic_int producers_left;
    atomic_bool stop;
    atomic_bool failed;            /* a producer or the log failed */
    atomic_bool outage;            /* thread mode: consumers close handles */
    atomic_uint_fast64_t errors;
    atomic_uint_fast64_t payload_bad;
    atomic_uint_fast64_t retries;
    dq_config cfg;                 /* base config, to reopen a handle */
    pthread_mutex_t mu;            /* guards the two messages below */
    char fail_msg[256];
    char first_error[256];
} trial;

typedef struct worker {
    trial *t;
    dq_queue *q;                   /* NULL while closed by an outage */
    int index;
    char name[24];                 /* "p0", "c3", "c3.1" */
    pthread_t th;
    bool started;
    int64_t offset_us;             /* clock offset of this handle */
    int64_t claims;                /* successful claims so far */
    int64_t die_claim;             /* SIGKILL itself at this claim; 0 never */
    dq_kill_point die_point;
    dq_counters acc;               /* counters of handles already closed */
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
                 w->name, op, w->q ? dq_errstr(w->q) : "closed",
                 dq_result_name(rc));
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

/* ---- Records ------------------------------------------------------------
 * The parent writes through its buffered eventlog.c handle; a child
 * process through its own (dq_eventlog_open_append, DQ_LOG_SYNC_EACH: one
 * write(2) per record on an O_APPEND descriptor), so records of all
 * processes interleave whole and a SIGKILLed child leaves every record it
 * wrote. */

static int log_E(trial *t, int64_t t_us, const char *id, int64_t due_ms,
                 const char *producer)
{
    return dq_log_enqueue(t->log, t_us, id, due_ms, producer);
}

static int log_D(trial *t, int64_t t_us, const char *id, const char *consumer,
                 int attempt)
{
    return dq_log_deliver(t->log, t_us, id, consumer, attempt);
}

static int log_A(trial *t, int64_t t_us, const char *id, const char *consumer,
                 int attempt)
{
    return dq_log_ack(t->log, t_us, id, consumer, attempt);
}

/* The DQ_* name of result rc without its prefix ("ENOTFOUND"), for the R
 * record; from dq.h's one list of codes. */
static const char *result_code(int rc)
{
    switch (rc) {
#define RESULT_CODE(name, val, text) \
    case DQ_##name:                  \
        return #name;
        DQ_RESULT_MAP(RESULT_CODE)
#undef RESULT_CODE
    }
    return "EUNKNOWN";
}

/* An ack that did not return DQ_OK: an R record (eventlog.h). */
static int log_R(trial *t, int64_t t_us, const char *id, const char *consumer,
                 int attempt, int rc)
{
    return dq_log_ack_refused(t->log, t_us, id, consumer, attempt,
                              result_code(rc));
}

/* A failed event-log write of task id's record ends the trial, naming
 * the file and errno's text (ENOSPC: "No space left on device"). */
static void log_failed(trial *t, const char *id)
{
    int e = errno;

    trial_fail(t, "event log %s: %s (task id '%.64s')", t->p->log_path,
               strerror(e), id);
}

/* Sets task index idx's bit in bits (if not yet set) and counts it. */
static void mark_task(_Atomic uint64_t *bits, atomic_int_fast64_t *count,
                      int64_t idx)
{
    uint64_t bit = 1ULL << (idx % 64);

    if (bits != NULL && idx >= 0 &&
        (atomic_fetch_or(&bits[idx / 64], bit) & bit) == 0)
        atomic_fetch_add(count, 1);
}

static int log_F(trial *t, const char *fault, const char *phase,
                 const char *arg)
{
    return dq_log_fault(t->log, dq_wall_us(), fault, phase, arg);
}

/* ---- Threads ----------------------------------------------------------- */

/* Backoff for retried calls: 20 ms doubling to 1 s. */
static int64_t backoff_us(int attempt)
{
    int64_t us = 20000;
    for (int i = 0; i < attempt && us < 1000000; i++)
        us *= 2;
    return us < 1000000 ? us : 1000000;
}

#define RETRY_LIMIT_US 60000000LL /* give up after 60 s of failures */

/* Writes prefix and the decimal digits of v (>= 0) into buf (>= 22
 * bytes), NUL-terminated; returns the length.  The producers' ids, without
 * snprintf's format parsing on the hot path. */
static size_t format_id(char *buf, char prefix, int64_t v)
{
    char tmp[20];
    size_t n = 0, len = 0;
    uint64_t u = (uint64_t)v;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    buf[len++] = prefix;
    while (n > 0)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

/* One producer: tasks w->index, w->index + producers, ... in groups of
 * enqueue_batch (dq_enqueue for a group of one, else dq_enqueue_many).
 * Each task's E record is written once its group was acknowledged, with
 * the acknowledgement time, so the log never shows an enqueue Redis did
 * not confirm.  The payload, id and item buffers are allocated once. */
static void *producer_main(void *arg)
{
    worker *w = arg;
    trial *t = w->t;
    const dq_trial_params *p = t->p;
    size_t nb = p->enqueue_batch > 1 ? (size_t)p->enqueue_batch : 1;
    size_t pb = p->payload_bytes ? (size_t)p->payload_bytes : 1;
    unsigned char *buf = malloc(pb * nb);
    dq_enqueue_item *items = malloc(nb * sizeof *items);
    char (*ids)[24] = malloc(nb * sizeof *ids);

    if (buf == NULL || items == NULL || ids == NULL) {
        trial_fail(t, "%s: out of memory", w->name);
        goto done;
    }
    for (int64_t i = w->index; i < p->tasks;) {
        int64_t now_us, first_fail_us = 0, maxdue = INT64_MIN;
        size_t k = 0;
        int rc, attempt = 0;

        if (should_stop(t))
            break;
        for (; k < nb && i < p->tasks; k++, i += p->producers) {
            unsigned char *pl = buf + pb * k;
            format_id(ids[k], 't', i);
            dq_trial_payload(p->seed, i, pl, (size_t)p->payload_bytes);
            items[k].id = ids[k];
            items[k].payload = pl;
            items[k].payload_len = (size_t)p->payload_bytes;
            items[k].due_ms = dq_now_ms(w->q) +
                              dq_trial_delay_ms(p->seed, i, p->delay_min_ms,
                                                p->delay_max_ms);
            if (items[k].due_ms > maxdue)
                maxdue = items[k].due_ms;
        }
        /* With faults, an enqueue whose outcome is unknown (connection
         * lost, server restarting) is retried with the same ids and due
         * times (ZADD/HSET of the same member are idempotent) and logged
         * once acknowledged. */
        for (;;) {
            rc = k == 1 ? dq_enqueue(w->q, items[0].id, items[0].payload,
                                     items[0].payload_len, items[0].due_ms)
                        : dq_enqueue_many(w->q, items, k);
            if (rc == DQ_OK || !t->retry || rc == DQ_EINVAL ||
                should_stop(t))
                break;
            if (first_fail_us == 0)
                first_fail_us = dq_mono_us();
            else if (dq_mono_us() - first_fail_us > RETRY_LIMIT_US)
                break;
            atomic_fetch_add(&t->retries, 1);
            dq_sleep_us(backoff_us(attempt++));
        }
        if (rc != DQ_OK) {
            if (should_stop(t))
                break;
            trial_fail(t, "%s: enqueue %s%s: %s", w->name, ids[0],
                       k > 1 ? " (and its batch)" : "", dq_errstr(w->q));
            break;
        }
        now_us = dq_wall_us();
        atomic_max64(&t->latest_due_ms, maxdue);
        for (size_t j = 0; j < k; j++)
            if (log_E(t, now_us, ids[j], items[j].due_ms, w->name) != 0) {
                log_failed(t, ids[j]);
                goto done;
            }
        atomic_min64(&t->first_e_us, now_us);
        atomic_fetch_add(&t->enqueued, (int_fast64_t)k);
    }
done:
    free(buf);
    free(items);
    free(ids);
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
        format_id(id, 'b', i);
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

static void add_counters(dq_counters *to, const dq_counters *c)
{
    to->round_trips += c->round_trips;
    to->empty_polls += c->empty_polls;
    to->lost_races += c->lost_races;
    to->wakeups += c->wakeups;
    to->putbacks += c->putbacks;
}

/* The kill-consumer fault, inside the consumer process: one F begin
 * record, then a real SIGKILL of this process (no cleanup runs, exactly
 * as kill -9 from outside). */
static void die_now(worker *w, const char *id)
{
    char arg[200];

    snprintf(arg, sizeof arg, "%s:point=%s,claim=%" PRId64 ",id=%.64s", w->name, dq_kill_point_name(w->die_point),
             w->claims, id);
    log_F(w->t, "kill-consumer", "begin", arg);
    kill(getpid(), SIGKILL);
    _exit(137); /* not reached */
}

/* Subscriber outage (thread mode): closes the handle, waits until the
 * outage ends, reopens.  Returns false when the trial stops meanwhile. */
static bool outage_wait(worker *w)
{
    trial *t = w->t;

    if (w->q != NULL) {
        add_counters(&w->acc, &w->q->counters);
        dq_close(w->q);
        w->q = NULL;
    }
    while (atomic_load(&t->outage) && !should_stop(t))
        dq_sleep_us(WAIT_STEP_US / 2);
    return !should_stop(t);
}

/* Opens the consumer's handle again after an outage, with backoff. */
static bool reopen(worker *w)
{
    trial *t = w->t;
    dq_config cfg = t->cfg;
    char err[256];

    cfg.consumer = w->name;
    cfg.clock_offset_us = w->offset_us;
    for (int attempt = 0; !should_stop(t); attempt++) {
        if (dq_open(t->p->strategy, &cfg, &w->q, err, sizeof err) == DQ_OK)
            return true;
        if (atomic_fetch_add(&t->errors, 1) == 0) {
            pthread_mutex_lock(&t->mu);
            snprintf(t->first_error, sizeof t->first_error, "%s: reopen: %.200s",
                     w->name, err);
            pthread_mutex_unlock(&t->mu);
        }
        dq_sleep_us(backoff_us(attempt));
    }
    return false;
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
        int64_t now_us, idx, first_fail_us = 0;
        int rc, attempt = 0;
        bool die;

        if (atomic_load(&t->outage) && !outage_wait(w))
            break;
        if (w->q == NULL && !reopen(w))
            break;
        memset(&task, 0, sizeof task);
        rc = dq_claim(w->q, p->claim_timeout_ms, &task);
        if (rc == DQ_EMPTY)
            continue;
        if (rc != DQ_OK) {
            op_error(w, "claim", rc);
            dq_sleep_us(ERROR_BACKOFF_US);
            continue;
        }
        w->claims++;
        die = w->die_claim > 0 && w->claims == w->die_claim;
        if (die && w->die_point == DQ_KILL_AFTER_CLAIM)
            die_now(w, task.id);
        now_us = dq_wall_us();
        if (log_D(t, now_us, task.id, w->name, task.attempt) != 0) {
            log_failed(t, task.id);
            dq_task_clear(&task);
            break;
        }
        atomic_max64(&t->last_d_us, now_us);
        idx = id_index(task.id, p->tasks);
        if (idx >= 0) {
            mark_task(t->seen, &t->distinct, idx);
            dq_trial_payload(p->seed, idx, want, (size_t)p->payload_bytes);
            if (task.payload_len != (size_t)p->payload_bytes ||
                (task.payload_len > 0 &&
                 memcmp(task.payload, want, task.payload_len) != 0))
                atomic_fetch_add(&t->payload_bad, 1);
        }
        if (die && w->die_point == DQ_KILL_DURING_WORK) {
            dq_sleep_us(p->work_us / 2);
            die_now(w, task.id);
        }
        dq_sleep_us(p->work_us);
        if (die && w->die_point == DQ_KILL_BEFORE_ACK)
            die_now(w, task.id);
        /* With faults, an ack that met a lost connection is retried (the
         * strategies' acks are idempotent: HDEL, or a lease check). */
        while ((rc = dq_ack(w->q, &task)) != DQ_OK && t->retry &&
               rc == DQ_EIO && !should_stop(t)) {
            if (first_fail_us == 0)
                first_fail_us = dq_mono_us();
            else if (dq_mono_us() - first_fail_us > RETRY_LIMIT_US)
                break;
            atomic_fetch_add(&t->retries, 1);
            dq_sleep_us(backoff_us(attempt++));
        }
        /* Every outcome is logged against the attempt it acknowledges: A
         * when the strategy accepted it, R (with the code) when it
         * refused a stale one or the call failed. */
        if (rc != DQ_OK) {
            op_error(w, "ack", rc);
            if (log_R(t, dq_wall_us(), task.id, w->name, task.attempt,
                      rc) != 0)
                log_failed(t, task.id);
        } else if (log_A(t, dq_wall_us(), task.id, w->name,
                         task.attempt) != 0) {
            log_failed(t, task.id);
        } else {
            mark_task(t->acked, &t->acked_distinct, idx);
        }
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
    p->enqueue_batch = 1;
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
    if (p->enqueue_batch > 1)
        H("enqueue_batch", "%" PRId64, p->enqueue_batch);
    if (p->backlog > 0) {
        H("backlog", "%" PRId64, p->backlog);
        H("backlog_delay_ms", "%" PRId64, p->backlog_delay_ms);
    }
    {
        bool proc = p->consumer_process;
        char specs[600] = "";
        size_t n = 0;
        for (size_t i = 0; i < p->nfaults; i++) {
            char one[64];
            proc |= dq_fault_needs_process(&p->faults[i]);
            dq_fault_format(&p->faults[i], one, sizeof one);
            n += (size_t)snprintf(specs + n, sizeof specs - n, "%s%s",
                                  i ? "," : "", one);
            if (n >= sizeof specs)
                break;
        }
        e |= dq_log_header(log, "consumer_mode", proc ? "process" : "thread");
        if (p->nfaults > 0)
            e |= dq_log_header(log, "fault", specs);
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

/* ---- Faults: schedule ------------------------------------------------------
 * Everything below runs in the trial's own (main) thread: the private
 * redis-server and the consumer processes are forked from it, and their
 * PR_SET_PDEATHSIG is tied to the thread that forked them. */

typedef struct fault_run {
    const dq_fault *f;
    size_t index;       /* position in p->faults */
    int64_t at_us;      /* mono time it starts */
    int64_t end_us;     /* mono time an active window ends */
    int phase;          /* 0 pending, 1 active, 2 done */
} fault_run;

static uint64_t fault_hash(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t s = seed ^ (0xC2B2AE3D27D4EB4FULL * (a + 1)) ^
                 (0x165667B19E3779F9ULL * (b + 7));
    return splitmix64(&s);
}

/* When fault i starts, in ms after the run starts (faults.h). */
static int64_t fault_at_ms(const dq_trial_params *p, size_t i)
{
    int64_t lo, hi;

    if (p->faults[i].at_ms >= 0)
        return p->faults[i].at_ms;
    lo = p->delay_max_ms / 5 > 50 ? p->delay_max_ms / 5 : 50;
    hi = p->delay_max_ms / 2 > lo ? p->delay_max_ms / 2 : lo;
    return lo + (int64_t)(fault_hash(p->seed, i, 1) % (uint64_t)(hi - lo + 1));
}

static const dq_fault *find_fault(const dq_trial_params *p, dq_fault_kind k)
{
    for (size_t i = 0; i < p->nfaults; i++)
        if (p->faults[i].kind == k)
            return &p->faults[i];
    return NULL;
}

/* One planned SIGKILL: consumer slot, its claim number, the point. */
typedef struct kill_plan {
    int slot;
    int64_t claim;
    dq_kill_point point;
    bool used;
} kill_plan;

/* Spreads the kills over the consumer slots (kill j -> slot j mod C) and
 * picks the claim number of each from the seed in [1, span], span =
 * tasks / (C * (N + 1)) so that the kills fall inside the trial.  Returns
 * a malloc'd array of *n plans (NULL when none). */
static kill_plan *plan_kills(const dq_trial_params *p, int *n)
{
    kill_plan *k;
    int total = 0, j = 0;

    for (size_t i = 0; i < p->nfaults; i++)
        if (p->faults[i].kind == DQ_FAULT_KILL_CONSUMER)
            total += p->faults[i].count;
    *n = 0;
    if (total == 0 || (k = calloc((size_t)total, sizeof *k)) == NULL)
        return NULL;
    for (size_t i = 0; i < p->nfaults; i++) {
        const dq_fault *f = &p->faults[i];
        int64_t span;
        if (f->kind != DQ_FAULT_KILL_CONSUMER)
            continue;
        span = p->tasks / ((int64_t)p->consumers * (f->count + 1));
        if (span < 1)
            span = 1;
        for (int c = 0; c < f->count; c++, j++) {
            k[j].slot = j % p->consumers;
            k[j].claim = 1 + (int64_t)(fault_hash(p->seed, i, 100 + (uint64_t)c) %
                                       (uint64_t)span);
            k[j].point = f->point;
        }
    }
    *n = total;
    return k;
}

/* ---- Process mode ----------------------------------------------------------- */

typedef struct child {
    pid_t pid;          /* 0: not running */
    int out_fd;         /* read end of its stdout+stderr pipe, or -1 */
    int ctl_fd;         /* all-in-one: our end of the socket on its stdin
                           (child_outage), or -1 */
    int gen;            /* 0 for the first process of a slot */
    int plan;           /* index of the kill plan it carries, or -1 */
    bool term_sent;     /* stopped by us (outage, end of trial) */
    char name[24];
    char out[1024];
    size_t outlen;
} child;

typedef struct procs {
    bool on;
    bool all_in_one;    /* in-process strategy: one child runs it all */
    child *ch;
    int nch;
    kill_plan *plans;
    int nplans;
    const char *exe;
    char **envp;        /* environ + the password, built once */
    char pw_env[300];
    int tail_fd;        /* the log, read as it grows */
    char tail[8192];
    size_t tail_len;
    int64_t e_count;    /* all-in-one: E records seen */
    bool dead;          /* all-in-one: the child died: nothing can follow */
    bool outage;        /* consumers held down */
    dq_counters counters;
    uint64_t errors, payload_bad, retries;
    char first_error[256];
    int kills;
} procs;

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
static void child_summary(procs *ps, const child *c)
{
    const char *s = strstr(c->out, "S ");
    unsigned long long v[8];
    int used = 0;

    if (s == NULL || (s != c->out && s[-1] != '\n'))
        return;
    if (sscanf(s, "S %llu %llu %llu %llu %llu %llu %llu %llu %n", &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &used) < 8)
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

/* subscriber-outage for the all-in-one child (an in-process strategy: its
 * consumers are threads of that process): one byte on the socket that is
 * its stdin, '1' to stop its consumers, '0' to start them again
 * (dq_trial_child_run reads it).  A socket rather than a signal: bytes
 * sent before the child reads them wait for it, where a signal arriving
 * before its handler is installed would kill it; MSG_NOSIGNAL, so a child
 * that died meanwhile costs no SIGPIPE.  Returns false when the child is
 * gone (nothing runs that could be stopped). */
static bool child_outage(child *c, bool on)
{
    char b = on ? '1' : '0';

    if (c->pid <= 0 || c->ctl_fd < 0)
        return false;
    return send(c->ctl_fd, &b, 1, MSG_NOSIGNAL) == 1;
}

/* Appends one argument to the child's argv (storage in `store`). */
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

/* Starts the process of consumer slot `slot` (or the all-in-one process),
 * generation c->gen.  Returns 0, or -1 with err set. */
static int child_spawn(trial *t, procs *ps, int slot, char *err, size_t errlen)
{
    const dq_trial_params *p = t->p;
    child *c = &ps->ch[slot];
    const dq_fault *skew = find_fault(p, DQ_FAULT_CLOCK_SKEW);
    argb *a = calloc(1, sizeof *a);
    int pipefd[2] = {-1, -1}, ctl[2] = {-1, -1};
    pid_t pid;
    int plan = -1;

    if (a == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < ps->nplans; i++)
        if (!ps->plans[i].used && (ps->all_in_one || ps->plans[i].slot == slot)) {
            plan = i;
            break;
        }
    c->plan = plan;
    if (c->gen == 0)
        snprintf(c->name, sizeof c->name, "c%d", slot);
    else
        snprintf(c->name, sizeof c->name, "c%d.%d", slot, c->gen);
    c->outlen = 0;
    c->out[0] = '\0';
    c->term_sent = false;

    arg_add(a, "%s", ps->exe);
    arg_add(a, "%s", DQ_CHILD_COMMAND);
    arg_add(a, "--role=%s", ps->all_in_one ? "all" : "consumer");
    arg_add(a, "--strategy=%s", p->strategy->name);
    arg_add(a, "--queue=%s", t->cfg.queue);
    arg_add(a, "--log=%s", p->log_path);
    arg_add(a, "--name=%s", c->name);
    arg_add(a, "--seed=%" PRIu64, p->seed);
    arg_add(a, "--tasks=%" PRId64, p->tasks);
    arg_add(a, "--producers=%d", p->producers);
    arg_add(a, "--consumers=%d", p->consumers);
    arg_add(a, "--delay-ms=%" PRId64 ":%" PRId64, p->delay_min_ms,
            p->delay_max_ms);
    arg_add(a, "--work-us=%" PRId64, p->work_us);
    arg_add(a, "--payload-bytes=%" PRId64, p->payload_bytes);
    arg_add(a, "--claim-timeout-ms=%" PRId64, p->claim_timeout_ms);
    if (p->enqueue_batch > 1)
        arg_add(a, "--enqueue-batch=%" PRId64, p->enqueue_batch);
    if (skew != NULL && (ps->all_in_one || slot == 0)) {
        arg_add(a, "--clock-offset-us=%" PRId64, skew->ms * 1000);
        arg_add(a, "--skew-index=0");
    }
    if (plan >= 0) {
        arg_add(a, "--die-claim=%" PRId64, ps->plans[plan].claim);
        arg_add(a, "--die-point=%s", dq_kill_point_name(ps->plans[plan].point));
        arg_add(a, "--die-index=%d", ps->plans[plan].slot);
    }
    if (t->retry)
        arg_add(a, "--retry");
    if (t->cfg.redis_host != NULL) {
        arg_add(a, "--host=%s", t->cfg.redis_host);
        arg_add(a, "--port=%d", t->cfg.redis_port);
        arg_add(a, "--db=%d", t->cfg.redis_db);
        if (t->cfg.redis_user != NULL)
            arg_add(a, "--user=%s", t->cfg.redis_user);
    }
    for (size_t i = 0; i < p->nopts; i++)
        arg_add(a, "--opt=%s=%s", p->opts[i].key, p->opts[i].val);
    if (a->overflow) {
        snprintf(err, errlen, "child command line too long");
        free(a);
        return -1;
    }
    if (pipe2(pipefd, O_CLOEXEC) != 0 ||
        (ps->all_in_one &&
         socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) != 0)) {
        snprintf(err, errlen, "%s: %s", pipefd[0] < 0 ? "pipe" : "socketpair",
                 strerror(errno));
        free(a);
        for (int i = 0; i < 2; i++)
            if (pipefd[i] >= 0)
                close(pipefd[i]);
        return -1;
    }

    pid = dq_spawn(ps->exe, a->argv, ps->envp, ctl[1], pipefd[1], pipefd[1]);
    if (pid < 0)
        snprintf(err, errlen, "fork: %s", strerror(errno));
    close(pipefd[1]);
    if (ctl[1] >= 0)
        close(ctl[1]);
    free(a);
    if (pid < 0) {
        close(pipefd[0]);
        if (ctl[0] >= 0)
            close(ctl[0]);
        return -1;
    }
    c->ctl_fd = ctl[0];
    fcntl(pipefd[0], F_SETFL, fcntl(pipefd[0], F_GETFL) | O_NONBLOCK);
    c->pid = pid;
    c->out_fd = pipefd[0];
    if (plan >= 0)
        ps->plans[plan].used = true;
    return 0;
}

/* Reads the records appended since the last call: D records mark tasks
 * delivered and A records tasks acked (the parent's view of progress), E
 * records (all-in-one) count enqueues and the latest due time. */
static void tail_log(trial *t, procs *ps)
{
    for (;;) {
        ssize_t n = read(ps->tail_fd, ps->tail + ps->tail_len,
                         sizeof ps->tail - 1 - ps->tail_len);
        char *s, *nl;

        if (n <= 0)
            return;
        ps->tail_len += (size_t)n;
        ps->tail[ps->tail_len] = '\0';
        s = ps->tail;
        while ((nl = strchr(s, '\n')) != NULL) {
            char *f[6];
            int nf = 0;
            *nl = '\0';
            for (char *q = s; nf < 6;) {
                f[nf++] = q;
                q = strchr(q, '\t');
                if (q == NULL)
                    break;
                *q++ = '\0';
            }
            if (s[0] == 'D' && s[1] == '\0' && nf >= 4) {
                int64_t idx = id_index(f[2], t->p->tasks);
                int64_t tus = strtoll(f[1], NULL, 10);
                atomic_max64(&t->last_d_us, tus);
                mark_task(t->seen, &t->distinct, idx);
            } else if (s[0] == 'A' && s[1] == '\0' && nf >= 4) {
                mark_task(t->acked, &t->acked_distinct,
                          id_index(f[2], t->p->tasks));
            } else if (ps->all_in_one && s[0] == 'E' && s[1] == '\0' &&
                       nf >= 4) {
                int64_t tus = strtoll(f[1], NULL, 10);
                ps->e_count++;
                atomic_fetch_add(&t->enqueued, 1);
                atomic_min64(&t->first_e_us, tus);
                atomic_max64(&t->latest_due_ms, strtoll(f[3], NULL, 10));
            }
            s = nl + 1;
        }
        ps->tail_len -= (size_t)(s - ps->tail);
        memmove(ps->tail, s, ps->tail_len);
        if (ps->tail_len >= sizeof ps->tail - 1)
            ps->tail_len = 0; /* a line longer than the buffer: drop it */
    }
}

/* Reaps every child that exited: a SIGKILL (the kill-consumer plan, or
 * anything else that killed it) gets a replacement and an F end record; a
 * child we stopped is just taken down; any other exit fails the trial. */
static void reap_children(trial *t, procs *ps, dq_trial_result *r)
{
    for (int i = 0; i < ps->nch; i++) {
        child *c = &ps->ch[i];
        int status = 0;
        char msg[300], arg[160], old[24];

        if (c->pid == 0)
            continue;
        child_drain(c);
        if (dq_spawn_reap(c->pid, &status, false) != c->pid)
            continue;
        child_drain(c);
        child_summary(ps, c);
        child_close(c);
        if (c->term_sent)
            continue;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
            ps->kills++;
            r->kills++;
            snprintf(old, sizeof old, "%s", c->name);
            if (ps->all_in_one || should_stop(t)) {
                ps->dead = ps->all_in_one;
                snprintf(arg, sizeof arg, "%s:replacement=none", old);
                log_F(t, "kill-consumer", "end", arg);
                continue;
            }
            c->gen++;
            if (child_spawn(t, ps, i, msg, sizeof msg) != 0) {
                trial_fail(t, "starting a replacement consumer: %s", msg);
                continue;
            }
            snprintf(arg, sizeof arg, "%s:replacement=%s", old,
                     c->name);
            log_F(t, "kill-consumer", "end", arg);
            continue;
        }
        child_message(c, msg, sizeof msg);
        if (WIFEXITED(status))
            trial_fail(t, "consumer process %s exited with status %d%s%s",
                       c->name, WEXITSTATUS(status), msg[0] ? ": " : "", msg);
        else
            trial_fail(t, "consumer process %s died of signal %d%s%s",
                       c->name, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                       msg[0] ? ": " : "", msg);
    }
}

static bool children_running(const procs *ps)
{
    for (int i = 0; i < ps->nch; i++)
        if (ps->ch[i].pid > 0)
            return true;
    return false;
}

/* SIGTERM to every running child (they finish the task in hand, print
 * their summary and exit). */
static void children_term(procs *ps)
{
    for (int i = 0; i < ps->nch; i++)
        if (ps->ch[i].pid > 0) {
            ps->ch[i].term_sent = true;
            kill(ps->ch[i].pid, SIGTERM);
        }
}

/* Stops every child: SIGTERM, up to 3 s, then SIGKILL; reaps them all and
 * takes their summaries.  Nothing is left running. */
static void children_stop(procs *ps)
{
    int64_t deadline = dq_mono_us() + 3000000;

    children_term(ps);
    while (children_running(ps)) {
        for (int i = 0; i < ps->nch; i++) {
            child *c = &ps->ch[i];
            int status;
            if (c->pid == 0)
                continue;
            child_drain(c);
            if (dq_spawn_reap(c->pid, &status, dq_mono_us() > deadline) == c->pid) {
                child_drain(c);
                child_summary(ps, c);
                child_close(c);
            } else if (dq_mono_us() > deadline) {
                kill(c->pid, SIGKILL);
            }
        }
        if (dq_mono_us() > deadline)
            for (int i = 0; i < ps->nch; i++)
                if (ps->ch[i].pid > 0)
                    kill(ps->ch[i].pid, SIGKILL);
        dq_sleep_us(5000);
    }
}

/* ---- Faults acting on Redis ------------------------------------------------ */

/* A command on the admin connection, tried twice: the first call after
 * the server restarted meets the dead connection (rconn.h reconnects on
 * the next one). */
static redisReply *admin_cmd(dq_queue *admin, redisContext *c, int argc,
                             const char **argv)
{
    int rc;
    redisReply *r = dq_redis_cmd(admin, c, &rc, argc, argv, NULL);
    if (r == NULL && rc == DQ_EIO)
        r = dq_redis_cmd(admin, c, &rc, argc, argv, NULL);
    return r;
}

/* Turns AOF on (appendfsync mode) or off at run time, and waits for the
 * AOF rewrite that CONFIG SET appendonly yes starts, so that the crash
 * meets a complete AOF (https://redis.io/docs/management/persistence/). */
static int set_persistence(dq_queue *admin, redisContext *c, const char *mode,
                           char *err, size_t errlen)
{
    bool on = strcmp(mode, "off") != 0;
    const char *a1[4] = {"CONFIG", "SET", "appendonly", on ? "yes" : "no"};
    const char *a2[4] = {"CONFIG", "SET", "appendfsync", on ? mode : "everysec"};
    const char *a3[2] = {"INFO", "persistence"};
    redisReply *r;
    int64_t deadline = dq_mono_us() + 10000000;

    if (on) {
        r = admin_cmd(admin, c, 4, a2);
        if (r == NULL)
            goto fail;
        freeReplyObject(r);
    }
    r = admin_cmd(admin, c, 4, a1);
    if (r == NULL)
        goto fail;
    freeReplyObject(r);
    while (on) {
        bool done;
        r = admin_cmd(admin, c, 2, a3);
        if (r == NULL)
            goto fail;
        done = r->type == REDIS_REPLY_STRING &&
               strstr(r->str, "aof_enabled:1") != NULL &&
               strstr(r->str, "aof_rewrite_in_progress:0") != NULL &&
               strstr(r->str, "aof_rewrite_scheduled:0") != NULL;
        freeReplyObject(r);
        if (done)
            break;
        if (dq_mono_us() > deadline) {
            snprintf(err, errlen, "restart-redis: AOF rewrite did not finish "
                     "within 10 s");
            return -1;
        }
        dq_sleep_us(10000);
    }
    return 0;
fail:
    snprintf(err, errlen, "restart-redis: setting persistence: %s", admin->err);
    return -1;
}

/* mover-stall, step 1: the ids of the trial's connections that mover-
 * stall drops.  CLIENT LIST (https://redis.io/commands/client-list/) gives
 * one line per connection, "id=7 addr=... name=dqlab:Q:c0 ... flags=P
 * ..."; a connection is ours when its name starts with the queue's prefix
 * (rconn.h client names: every connection the strategies open is named so),
 * and dropped when it is subscribed (flag P) or blocked in a command (flag
 * b: BLPOP, BLMOVE, BZPOPMIN).  Nothing else on the server is touched.
 * Fills ids (up to max) and *npubsub / *nblocked; returns how many, or -1
 * with err set when Redis refused CLIENT LIST (a user without CLIENT) or
 * the reply was not a list. */
static int stall_targets(dq_queue *admin, redisContext *c, long long *ids,
                         int max, long long *npubsub, long long *nblocked,
                         char *err, size_t errlen)
{
    const char *cl[2] = {"CLIENT", "LIST"};
    char prefix[DQ_CLIENT_NAME_MAX];
    size_t plen;
    redisReply *r;
    int n = 0;

    *npubsub = *nblocked = 0;
    dq_redis_client_prefix(admin->queue, prefix, sizeof prefix);
    plen = strlen(prefix);
    r = admin_cmd(admin, c, 2, cl);
    if (r == NULL || r->type != REDIS_REPLY_STRING) {
        const char *why = r == NULL ? admin->err : "unexpected reply";
        snprintf(err, errlen, "mover-stall: CLIENT LIST failed: %.200s%s", why,
                 strstr(why, "NOPERM") != NULL
                     ? " (the fault needs a Redis user allowed the CLIENT "
                       "command)" : "");
        if (r != NULL)
            freeReplyObject(r);
        return -1;
    }
    for (const char *s = r->str; *s;) {
        size_t len = strcspn(s, "\n");
        char line[1024], *save = NULL, *tok;
        long long id = -1;
        bool ours = false, sub = false, blocked = false;

        snprintf(line, sizeof line, "%.*s", (int)len, s);
        s += len + (s[len] == '\n');
        for (tok = strtok_r(line, " \r", &save); tok != NULL;
             tok = strtok_r(NULL, " \r", &save)) {
            if (strncmp(tok, "id=", 3) == 0)
                id = strtoll(tok + 3, NULL, 10);
            else if (strncmp(tok, "name=", 5) == 0)
                ours = strncmp(tok + 5, prefix, plen) == 0;
            else if (strncmp(tok, "flags=", 6) == 0) {
                sub = strchr(tok + 6, 'P') != NULL;
                blocked = strchr(tok + 6, 'b') != NULL;
            }
        }
        if (!ours || id < 0 || !(sub || blocked) || n >= max)
            continue;
        ids[n++] = id;
        if (sub)
            (*npubsub)++;
        else
            (*nblocked)++;
    }
    freeReplyObject(r);
    return n;
}

/* mover-stall, step 2: CLIENT KILL ID each target.  A target that closed
 * meanwhile ("No such client") is skipped; any other error reply (NOPERM:
 * the user may list but not kill) fails.  Returns the number dropped, or
 * -1 with err set. */
static int stall_kill(dq_queue *admin, redisContext *c, const long long *ids,
                      int n, char *err, size_t errlen)
{
    int killed = 0;

    for (int i = 0; i < n; i++) {
        char id[32];
        const char *kid[4] = {"CLIENT", "KILL", "ID", id};
        redisReply *k;
        int rc;

        snprintf(id, sizeof id, "%lld", ids[i]);
        k = dq_redis_cmd(admin, c, &rc, 4, kid, NULL);
        if (k != NULL) {
            killed++;
            freeReplyObject(k);
        } else if (rc != DQ_EREDIS || strstr(admin->err, "No such client") == NULL) {
            snprintf(err, errlen, "mover-stall: Redis refused CLIENT KILL ID "
                     "%s: %.200s", id, admin->err);
            return -1;
        }
    }
    return killed;
}

/* Checked before the trial starts when a mover-stall is planned: the
 * user may run CLIENT LIST (otherwise the fault could never act).
 * Returns 0, or -1 with err set. */
static int faults_preflight(const dq_trial_params *p, dq_queue *admin,
                            redisContext *c, char *err, size_t errlen)
{
    long long ids[1], np, nb;

    if (find_fault(p, DQ_FAULT_MOVER_STALL) == NULL)
        return 0;
    return stall_targets(admin, c, ids, 1, &np, &nb, err, errlen) < 0 ? -1 : 0;
}

/* mover-stall: the window is recorded only around kills that happened:
 * a refused command or nothing to drop fails the trial instead. */
static void mover_stall(trial *t, dq_queue *admin, redisContext *c,
                        dq_trial_result *r)
{
    enum { MAX_TARGETS = 4096 };
    long long *ids = malloc(MAX_TARGETS * sizeof *ids), np, nb;
    char err[300], arg[80];
    int n, killed;

    if (ids == NULL) {
        trial_fail(t, "mover-stall: out of memory");
        return;
    }
    n = stall_targets(admin, c, ids, MAX_TARGETS, &np, &nb, err, sizeof err);
    if (n == 0)
        snprintf(err, sizeof err, "mover-stall: no connection of queue '%s' "
                 "(named %s%s:...) was subscribed or blocked: nothing to drop",
                 admin->queue, DQ_CLIENT_NAME_PREFIX, admin->queue);
    if (n <= 0) {
        trial_fail(t, "%s", err);
        free(ids);
        return;
    }
    log_F(t, "mover-stall", "begin", "");
    r->fault_windows++;
    killed = stall_kill(admin, c, ids, n, err, sizeof err);
    free(ids);
    if (killed <= 0) {
        if (killed == 0)
            snprintf(err, sizeof err, "mover-stall: every connection found "
                     "had closed before CLIENT KILL: nothing dropped");
        log_F(t, "mover-stall", "end", "error=1");
        trial_fail(t, "%s", err);
        return;
    }
    snprintf(arg, sizeof arg, "pubsub=%lld,blocked=%lld", np, nb);
    log_F(t, "mover-stall", "end", arg);
}

/* Starts or ends the fault windows that are due.  Returns false after a
 * fatal error (trial_fail called). */
static void faults_tick(trial *t, procs *ps, fault_run *fr, size_t nfr,
                        dq_queue *admin, redisContext *rc_ctx,
                        dq_trial_result *r, bool *paused)
{
    const dq_trial_params *p = t->p;
    int64_t now = dq_mono_us();
    char arg[160], err[300];

    for (size_t i = 0; i < nfr; i++) {
        const dq_fault *f = fr[i].f;
        const char *name = dq_fault_name(f->kind);

        if (fr[i].phase == 0 && now >= fr[i].at_us) {
            switch (f->kind) {
            case DQ_FAULT_RESTART_REDIS:
                snprintf(arg, sizeof arg, "mode=%s", f->mode);
                log_F(t, name, "begin", arg);
                r->fault_windows++;
                if (dq_redis_server_restart(p->server,
                                            strcmp(f->mode, "off") == 0
                                                ? "no" : f->mode,
                                            err, sizeof err) != 0) {
                    trial_fail(t, "%s", err);
                    return;
                }
                r->restarts++;
                log_F(t, name, "end", arg);
                fr[i].phase = 2;
                break;
            case DQ_FAULT_PAUSE_REDIS:
                snprintf(arg, sizeof arg, "ms=%" PRId64, f->ms);
                if (kill(p->server->pid, SIGSTOP) == 0)
                    *paused = true;
                log_F(t, name, "begin", arg);
                r->fault_windows++;
                fr[i].end_us = now + f->ms * 1000;
                fr[i].phase = 1;
                break;
            case DQ_FAULT_SUBSCRIBER_OUTAGE:
                snprintf(arg, sizeof arg, "ms=%" PRId64, f->ms);
                log_F(t, name, "begin", arg);
                r->fault_windows++;
                if (ps->on && !ps->all_in_one) {
                    ps->outage = true;
                    children_term(ps);
                } else if (ps->on) {
                    child_outage(&ps->ch[0], true);
                } else {
                    atomic_store(&t->outage, true);
                }
                fr[i].end_us = now + f->ms * 1000;
                fr[i].phase = 1;
                break;
            case DQ_FAULT_MOVER_STALL:
                mover_stall(t, admin, rc_ctx, r);
                fr[i].phase = 2;
                if (atomic_load(&t->failed))
                    return;
                break;
            default:
                fr[i].phase = 2;
            }
        } else if (fr[i].phase == 1 && now >= fr[i].end_us) {
            snprintf(arg, sizeof arg, "ms=%" PRId64, f->ms);
            if (f->kind == DQ_FAULT_PAUSE_REDIS) {
                kill(p->server->pid, SIGCONT);
                *paused = false;
            } else if (f->kind == DQ_FAULT_SUBSCRIBER_OUTAGE) {
                if (ps->on && !ps->all_in_one) {
                    if (children_running(ps))
                        continue; /* still finishing their last task */
                    ps->outage = false;
                    for (int s = 0; s < ps->nch; s++) {
                        ps->ch[s].gen++;
                        if (child_spawn(t, ps, s, err, sizeof err) != 0) {
                            trial_fail(t, "restarting consumers: %s", err);
                            return;
                        }
                    }
                } else if (ps->on) {
                    child_outage(&ps->ch[0], false);
                } else {
                    atomic_store(&t->outage, false);
                }
            }
            log_F(t, name, "end", arg);
            fr[i].phase = 2;
        }
    }
}

static bool faults_pending(const fault_run *fr, size_t nfr)
{
    for (size_t i = 0; i < nfr; i++)
        if (fr[i].phase != 2)
            return true;
    return false;
}

/* The thread-mode consumer's clock offset: c0 under clock-skew. */
static int64_t skew_us(const dq_trial_params *p, int consumer_index)
{
    const dq_fault *f = find_fault(p, DQ_FAULT_CLOCK_SKEW);
    return f != NULL && consumer_index == 0 ? f->ms * 1000 : 0;
}

int dq_trial_run(const dq_trial_params *p, dq_trial_result *r, char *err,
                 size_t errlen)
{
    trial t;
    worker *ws = NULL;
    int nw = 0, nthreads;
    dq_local *local = NULL;
    dq_queue admin;          /* bare handle for rconn helpers */
    redisContext *rc_ctx = NULL;
    int64_t before_total = 0, before_info = 0, before_cpu = 0;
    int64_t before_mono = 0;
    dq_config cfg;
    bool needs_redis, idle, paused = false;
    int ret = -1, rc;
    int64_t start_us, next_progress_us, end_us, fault_end_wall_ms = 0;
    int64_t lease_ms = 0, lease_end_wall_ms = 0; /* drain after kills */
    int kills_seen = 0;
    bool tty;
    procs ps;
    fault_run fr[DQ_MAX_FAULTS];
    size_t nfr = 0;
    const dq_fault *restart = NULL, *skew = NULL;
    char exe[4096];
    extern char **environ;

    memset(r, 0, sizeof *r);
    r->redis_commands = -1;
    r->redis_cpu_us = -1;
    memset(&t, 0, sizeof t);
    pthread_mutex_init(&t.mu, NULL);
    t.p = p;
    t.retry = p->nfaults > 0;
    memset(&admin, 0, sizeof admin);
    memset(&ps, 0, sizeof ps);
    ps.tail_fd = -1;

    if (p->strategy == NULL || p->producers < 1 || p->consumers < 1 ||
        p->tasks < 0 || p->delay_min_ms < 0 || p->delay_max_ms < p->delay_min_ms ||
        p->work_us < 0 || p->payload_bytes < 0 || p->grace_ms < 0 ||
        p->claim_timeout_ms < 0 || p->backlog < 0 ||
        p->backlog_delay_ms < 0 || (p->tasks == 0 && p->idle_ms <= 0) ||
        p->log_path == NULL || p->nfaults > DQ_MAX_FAULTS ||
        p->enqueue_batch < 0 ||
        p->enqueue_batch > DQ_TRIAL_MAX_ENQUEUE_BATCH) {
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

    /* Faults: what each needs. */
    ps.on = p->consumer_process;
    for (size_t i = 0; i < p->nfaults; i++) {
        const dq_fault *f = &p->faults[i];
        char spec[64];
        dq_fault_format(f, spec, sizeof spec);
        if (idle) {
            snprintf(err, errlen, "fault %s: faults need tasks (not idle "
                     "mode)", spec);
            goto out;
        }
        if (!dq_fault_applies(f, p->strategy, err, errlen))
            goto out;
        if (dq_fault_needs_server(f) &&
            (p->server == NULL || p->server->pid <= 0)) {
            snprintf(err, errlen, "fault %s needs the private redis-server "
                     "dqlab starts itself (not --redis)", spec);
            goto out;
        }
        if (dq_fault_needs_process(f))
            ps.on = true;
        if (f->kind == DQ_FAULT_RESTART_REDIS) {
            if (restart != NULL) {
                snprintf(err, errlen, "fault %s: one restart-redis per trial",
                         spec);
                goto out;
            }
            restart = f;
        }
        if (f->kind == DQ_FAULT_CLOCK_SKEW)
            skew = f;
    }
    ps.all_in_one = ps.on && !(p->strategy->flags & DQ_G_NEEDS_REDIS);
    r->process_mode = ps.on;
    if (ps.on && idle) {
        snprintf(err, errlen, "consumer mode process needs tasks (not idle "
                 "mode)");
        goto out;
    }
    if (ps.on) {
        ssize_t n;
        size_t nenv = 0;
        if (p->child_exe != NULL) {
            snprintf(exe, sizeof exe, "%s", p->child_exe);
        } else {
            n = readlink("/proc/self/exe", exe, sizeof exe - 1);
            if (n <= 0) {
                snprintf(err, errlen, "readlink /proc/self/exe: %s",
                         strerror(errno));
                goto out;
            }
            exe[n] = '\0';
        }
        ps.exe = exe;
        while (environ[nenv] != NULL)
            nenv++;
        ps.envp = calloc(nenv + 2, sizeof *ps.envp);
        if (ps.envp == NULL) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        for (size_t i = 0, j = 0; i < nenv; i++)
            if (strncmp(environ[i], "DQLAB_CHILD_REDIS_PASSWORD=", 27) != 0)
                ps.envp[j++] = environ[i];
        if (p->redis != NULL && p->redis->password[0]) {
            size_t j = 0;
            while (ps.envp[j] != NULL)
                j++;
            snprintf(ps.pw_env, sizeof ps.pw_env,
                     "DQLAB_CHILD_REDIS_PASSWORD=%s", p->redis->password);
            ps.envp[j] = ps.pw_env;
        }
        ps.nch = ps.all_in_one ? 1 : p->consumers;
        ps.ch = calloc((size_t)ps.nch, sizeof *ps.ch);
        if (ps.ch == NULL) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        for (int i = 0; i < ps.nch; i++)
            ps.ch[i].out_fd = ps.ch[i].ctl_fd = -1;
        ps.plans = plan_kills(p, &ps.nplans);
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
            if (rep != NULL && rep->type == REDIS_REPLY_STRING)
                dq_runmeta_redis_version(rep->str, r->redis_version,
                                         sizeof r->redis_version);
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
        if (restart != NULL &&
            set_persistence(&admin, rc_ctx, restart->mode, err, errlen) != 0)
            goto out;
        if (faults_preflight(p, &admin, rc_ctx, err, errlen) != 0)
            goto out;
    }

    /* 2. Handles, opened here so that any failure comes before the run.
     * In process mode the parent opens the producers' handles only (the
     * consumers open theirs in their processes). */
    nthreads = p->producers + (ps.on ? 0 : p->consumers);
    local = dq_local_new();
    ws = calloc((size_t)nthreads, sizeof *ws);
    t.seen = calloc((size_t)(p->tasks + 63) / 64 + 1, sizeof *t.seen);
    t.acked = calloc((size_t)(p->tasks + 63) / 64 + 1, sizeof *t.acked);
    if (local == NULL || ws == NULL || t.seen == NULL || t.acked == NULL) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    cfg.local = local;
    t.cfg = cfg;
    for (int i = 0; i < nthreads; i++) {
        worker *w = &ws[i];
        bool prod = i < p->producers;

        w->t = &t;
        w->index = prod ? i : i - p->producers;
        snprintf(w->name, sizeof w->name, "%c%d", prod ? 'p' : 'c', w->index);
        w->offset_us = prod ? 0 : skew_us(p, w->index);
        cfg.consumer = w->name;
        cfg.clock_offset_us = w->offset_us;
        if (dq_open(p->strategy, &cfg, &w->q, err, errlen) != DQ_OK)
            goto out;
        nw++;
    }
    r->nopts = ws[0].q->nopts;
    memcpy(r->opts, ws[0].q->opts, sizeof r->opts);

    /* Buffered per thread (eventlog.h): this process is never the one a
     * fault kills (consumer processes write their own records, one
     * write(2) each), and one write(2) per record was half of the CPU
     * time of a heap trial (perf, eventlog.c). */
    t.log = dq_eventlog_create_flags(p->log_path, DQ_LOG_BUFFERED, err,
                                     errlen);
    if (t.log == NULL)
        goto out;
    if (log_headers(t.log, p, r) != 0) {
        snprintf(err, errlen, "%s: write: %s", p->log_path, strerror(errno));
        goto out;
    }
    if (ps.on) {
        ps.tail_fd = open(p->log_path, O_RDONLY | O_CLOEXEC);
        if (ps.tail_fd < 0) {
            snprintf(err, errlen, "%s: %s", p->log_path, strerror(errno));
            goto out;
        }
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

    /* 3. Run: consumers first in process mode (their processes take a
     * moment to start), then the threads. */
    if (skew != NULL) {
        char arg[96];
        snprintf(arg, sizeof arg, "c0:offset_ms=%+" PRId64, skew->ms);
        log_F(&t, "clock-skew", "begin", arg);
        r->fault_windows++;
    }
    if (ps.on)
        for (int i = 0; i < ps.nch; i++)
            if (child_spawn(&t, &ps, i, err, errlen) != 0) {
                trial_fail(&t, "%s", err);
                break;
            }
    atomic_store(&t.producers_left, ps.all_in_one ? 0 : p->producers);
    for (int i = 0; i < nw && !ps.all_in_one && !atomic_load(&t.failed); i++) {
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

    /* 4. Wait for the end, injecting the faults on the way. */
    tty = isatty(STDERR_FILENO);
    start_us = dq_mono_us();
    for (size_t i = 0; i < p->nfaults; i++) {
        const dq_fault *f = &p->faults[i];
        if (f->kind == DQ_FAULT_KILL_CONSUMER || f->kind == DQ_FAULT_CLOCK_SKEW)
            continue;
        fr[nfr].f = f;
        fr[nfr].index = i;
        fr[nfr].at_us = start_us + fault_at_ms(p, i) * 1000;
        fr[nfr].phase = 0;
        nfr++;
    }
    /* A killed consumer's task comes back from an at-least-once strategy
     * only once its lease (option lease_ms, whatever the strategy) runs
     * out: after each kill the drain waits until kill + lease_ms + grace,
     * so the checker sees it redelivered rather than pending at the end.
     * And with a lease, "every task delivered once" is not the end: a
     * delivery whose work outlasts its lease comes back to another
     * consumer, so the trial also waits until every task has an accepted
     * ack (an A record) -- bounded by the drain deadline -- and the log
     * shows the redelivery and the stale ack refused (R). */
    if (p->strategy->flags & DQ_G_AT_LEAST_ONCE)
        for (size_t i = 0; i < r->nopts; i++)
            if (strcmp(r->opts[i].key, "lease_ms") == 0)
                lease_ms = strtoll(r->opts[i].val, NULL, 10);
    next_progress_us = start_us + (tty ? PROGRESS_TTY_US : PROGRESS_PLAIN_US);
    for (;;) {
        bool producers_done;
        int64_t drain_from_ms;

        if (g_interrupt) {
            r->interrupted = true;
            break;
        }
        if (atomic_load(&t.failed))
            break;
        if (ps.on) {
            tail_log(&t, &ps);
            reap_children(&t, &ps, r);
            if (atomic_load(&t.failed))
                break;
            if (lease_ms > 0 && r->kills != kills_seen) {
                kills_seen = r->kills;
                lease_end_wall_ms = dq_wall_us() / 1000 + lease_ms;
            }
        }
        if (nfr > 0) {
            bool was = faults_pending(fr, nfr);
            faults_tick(&t, &ps, fr, nfr, &admin, rc_ctx, r, &paused);
            if (atomic_load(&t.failed))
                break;
            if (was && !faults_pending(fr, nfr))
                fault_end_wall_ms = dq_wall_us() / 1000;
        }
        producers_done = ps.all_in_one
                             ? (ps.e_count >= p->tasks || ps.dead)
                             : atomic_load(&t.producers_left) == 0;
        /* The drain deadline: grace after the latest due time, the end of
         * the faults and the last killed consumer's lease. */
        drain_from_ms = atomic_load(&t.latest_due_ms);
        if (fault_end_wall_ms > drain_from_ms)
            drain_from_ms = fault_end_wall_ms;
        if (lease_end_wall_ms > drain_from_ms)
            drain_from_ms = lease_end_wall_ms;
        if (idle) {
            if (dq_mono_us() - start_us >= p->idle_ms * 1000) {
                r->drained = true;
                break;
            }
        } else if (atomic_load(&t.distinct) == p->tasks &&
                   (lease_ms == 0 ||
                    atomic_load(&t.acked_distinct) == p->tasks) &&
                   (lease_end_wall_ms == 0 ||
                    dq_wall_us() / 1000 > lease_end_wall_ms + p->grace_ms)) {
            r->drained = true;
            break;
        } else if (producers_done && !faults_pending(fr, nfr) &&
                   dq_wall_us() / 1000 > drain_from_ms + p->grace_ms)
            break;
        if (p->progress && dq_mono_us() >= next_progress_us) {
            progress(&t, start_us, tty, false);
            next_progress_us += tty ? PROGRESS_TTY_US : PROGRESS_PLAIN_US;
        }
        dq_sleep_us(WAIT_STEP_US);
    }
    end_us = dq_mono_us();
    {
        /* When the trial stopped waiting: the checker counts a task due
         * after it as pending, not lost (checker.h). */
        char v[32];
        snprintf(v, sizeof v, "%" PRId64, dq_wall_us());
        dq_log_header(t.log, "end_us", v);
    }
    atomic_store(&t.stop, true);
    if (paused) {
        kill(p->server->pid, SIGCONT);
        paused = false;
        log_F(&t, "pause-redis", "end", "interrupted=1");
    }
    atomic_store(&t.outage, false);
    for (int i = 0; i < nw; i++)
        if (ws[i].started) {
            pthread_join(ws[i].th, NULL);
            ws[i].started = false; /* joined: the cleanup at out: skips it */
        }
    if (ps.on)
        children_stop(&ps);
    for (size_t i = 0; i < nfr; i++)
        if (fr[i].phase == 1) /* an outage cut short by the end */
            log_F(&t, dq_fault_name(fr[i].f->kind), "end", "interrupted=1");
    if (skew != NULL) {
        char arg[96];
        snprintf(arg, sizeof arg, "c0:offset_ms=%+" PRId64, skew->ms);
        log_F(&t, "clock-skew", "end", arg);
    }
    if (p->progress)
        progress(&t, start_us, tty, true);
    if (atomic_load(&t.failed)) {
        snprintf(err, errlen, "%s", t.fail_msg);
        goto out;
    }

    for (int i = 0; i < nw; i++) {
        if (ws[i].q != NULL)
            add_counters(&r->counters, &ws[i].q->counters);
        add_counters(&r->counters, &ws[i].acc);
    }
    add_counters(&r->counters, &ps.counters);
    r->errors = atomic_load(&t.errors) + ps.errors;
    if (t.first_error[0])
        snprintf(r->first_error, sizeof r->first_error, "%s", t.first_error);
    else
        snprintf(r->first_error, sizeof r->first_error, "%s", ps.first_error);
    r->payload_mismatches = atomic_load(&t.payload_bad) + ps.payload_bad;
    r->retries = atomic_load(&t.retries) + ps.retries;

    if (rc_ctx != NULL) {
        int64_t after_total, after_info, after_cpu;
        r->measured_s = (double)(dq_mono_us() - before_mono) / 1e6;
        if (restart != NULL) {
            /* The counters restarted with the server: not measured. */
            char e2[200];
            if (strcmp(restart->mode, "off") != 0)
                set_persistence(&admin, rc_ctx, "off", e2, sizeof e2);
        } else {
            if (server_cpu(&admin, rc_ctx, &after_cpu) == DQ_OK)
                r->redis_cpu_us = after_cpu - before_cpu;
            if (commandstats(&admin, rc_ctx, &after_total, &after_info) == DQ_OK)
                r->redis_commands = (after_total - before_total) -
                                    (after_info - before_info);
        }
        if (dq_redis_purge(&admin, rc_ctx) != DQ_OK) /* best effort */
            dq_redis_purge(&admin, rc_ctx);
    }

    /* 5. End the log (every thread has been joined and every child
     * reaped: dq_log_end writes the buffers, then the Z record, the last
     * line, which tells the checker the log is complete) and check it. */
    if (dq_log_end(t.log, dq_wall_us(),
                   r->interrupted ? "interrupted" : "clean") != 0) {
        snprintf(err, errlen, "event log %s: %s", p->log_path,
                 strerror(errno));
        goto out;
    }
    dq_eventlog_close(t.log);
    t.log = NULL;
    if (dq_check_file(p->log_path, &r->check, err, errlen) != 0)
        goto out;
    if (r->check.end != (r->interrupted ? DQ_CHECK_END_INTERRUPTED
                                        : DQ_CHECK_END_CLEAN)) {
        snprintf(err, errlen, "event log %s: %s", p->log_path,
                 dq_check_no_verdict(&r->check)
                     ? dq_check_no_verdict(&r->check)
                     : "its end record does not match the trial's end");
        goto out;
    }
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
    if (paused && p->server != NULL && p->server->pid > 0)
        kill(p->server->pid, SIGCONT);
    if (ws != NULL) {
        atomic_store(&t.stop, true);
        for (int i = 0; i < nw; i++)
            if (ws[i].started)
                pthread_join(ws[i].th, NULL);
        for (int i = 0; i < nw; i++)
            dq_close(ws[i].q);
        free(ws);
    }
    if (ps.ch != NULL) {
        children_stop(&ps);
        free(ps.ch);
    }
    free(ps.plans);
    free(ps.envp);
    if (ps.tail_fd >= 0)
        close(ps.tail_fd);
    dq_eventlog_close(t.log);
    if (local != NULL)
        dq_local_free(local);
    if (rc_ctx != NULL)
        redisFree(rc_ctx);
    free(t.seen);
    free(t.acked);
    pthread_mutex_destroy(&t.mu);
    return ret;
}

/* ---- The child side of process mode ------------------------------------------ */

/* The all-in-one child's side of child_outage: waits at most wait_us for
 * bytes on stdin and sets t->outage from the last '1' (stop the consumer
 * threads: they close their handles, outage_wait) or '0' (start them
 * again).  At EOF or on a read error *open becomes false and later calls
 * just sleep. */
static void child_control(trial *t, bool *open, int64_t wait_us)
{
    struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
    char buf[16];
    ssize_t n;

    if (!*open) {
        dq_sleep_us(wait_us);
        return;
    }
    if (poll(&pfd, 1, (int)(wait_us / 1000)) <= 0)
        return;
    n = read(STDIN_FILENO, buf, sizeof buf);
    if (n <= 0) {
        if (n == 0 || errno != EINTR)
            *open = false;
        return;
    }
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '1' || buf[i] == '0')
            atomic_store(&t->outage, buf[i] == '1');
}

int dq_trial_child_run(const dq_trial_params *p, const dq_child_spec *c,
                       char *err, size_t errlen)
{
    trial t;
    dq_config cfg;
    dq_local *local = NULL;
    worker *ws = NULL;
    int nw = 0, n, ret = -1;
    dq_counters total;

    memset(&t, 0, sizeof t);
    memset(&total, 0, sizeof total);
    pthread_mutex_init(&t.mu, NULL);
    t.p = p;
    t.log = c->log;
    t.retry = c->retry;

    memset(&cfg, 0, sizeof cfg);
    cfg.queue = p->queue;
    cfg.opts = p->opts;
    cfg.nopts = p->nopts;
    if (p->redis != NULL) {
        cfg.redis_host = p->redis->host;
        cfg.redis_port = p->redis->port;
        cfg.redis_user = p->redis->user[0] ? p->redis->user : NULL;
        cfg.redis_password = p->redis->password[0] ? p->redis->password : NULL;
        cfg.redis_db = p->redis->db;
    }
    local = dq_local_new();
    n = c->all_in_one ? p->producers + p->consumers : 1;
    ws = calloc((size_t)n, sizeof *ws);
    if (local == NULL || ws == NULL) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    cfg.local = local;
    t.cfg = cfg;
    for (int i = 0; i < n; i++) {
        worker *w = &ws[i];
        bool prod = c->all_in_one && i < p->producers;
        w->t = &t;
        w->index = prod ? i : (c->all_in_one ? i - p->producers : 0);
        if (c->all_in_one)
            snprintf(w->name, sizeof w->name, "%c%d", prod ? 'p' : 'c',
                     w->index);
        else
            snprintf(w->name, sizeof w->name, "%s", c->name);
        if (!prod && (!c->all_in_one || w->index == c->skew_index))
            w->offset_us = c->clock_offset_us;
        if (!prod && (!c->all_in_one || w->index == c->die_index)) {
            w->die_claim = c->die_claim;
            w->die_point = c->die_point;
        }
        cfg.consumer = w->name;
        cfg.clock_offset_us = w->offset_us;
        if (dq_open(p->strategy, &cfg, &w->q, err, errlen) != DQ_OK)
            goto out;
        nw++;
    }
    if (!c->all_in_one) {
        consumer_main(&ws[0]);
    } else {
        atomic_store(&t.producers_left, p->producers);
        for (int i = 0; i < nw; i++) {
            if (pthread_create(&ws[i].th, NULL,
                               i < p->producers ? producer_main
                                                : consumer_main,
                               &ws[i]) != 0) {
                trial_fail(&t, "pthread_create: %s", strerror(errno));
                break;
            }
            ws[i].started = true;
        }
        bool control = true;
        while (!should_stop(&t))
            child_control(&t, &control, WAIT_STEP_US);
        atomic_store(&t.stop, true);
        for (int i = 0; i < nw; i++)
            if (ws[i].started) {
                pthread_join(ws[i].th, NULL);
                ws[i].started = false;
            }
    }
    if (atomic_load(&t.failed)) {
        snprintf(err, errlen, "%s", t.fail_msg);
        goto out;
    }
    ret = 0;

out:
    for (int i = 0; i < nw; i++) {
        if (ws[i].q != NULL)
            add_counters(&total, &ws[i].q->counters);
        add_counters(&total, &ws[i].acc);
        dq_close(ws[i].q);
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
    pthread_mutex_destroy(&t.mu);
    return ret;
}

/* ---- Verdict and JSON ------------------------------------------------------ */

size_t dq_trial_violations(const dq_trial_params *p, const dq_trial_result *r,
                           const char **out, size_t max)
{
    /* The log-based rules (early, unknown, duplicates, redeliveries and
     * losses, each judged against the fault windows of the log) are the
     * checker's, so `dqlab run` and `dqlab check LOG` give one verdict. */
    unsigned fl = p->strategy != NULL ? p->strategy->flags : 0;
    const char *v[16];
    size_t n = dq_check_violations(&r->check, fl, r->interrupted, v, 15);

    if (n > 15)
        n = 15;
    /* Payloads are not in the log: the harness compares them itself.  A
     * strategy that declares duplicates may hand one out after the winner
     * acked and deleted the payload (naive): that is the same documented
     * bug, not a further violation; so may a redelivery after a fault. */
    if (r->payload_mismatches > 0 && !(fl & DQ_G_DUPLICATES) &&
        r->check.fault_windows == 0)
        v[n++] = "payload: delivered bytes differ from the enqueued bytes";
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
    json_object_set_new(o, "enqueue_batch",
                        json_integer(p->enqueue_batch > 1 ? p->enqueue_batch
                                                           : 1));
    json_object_set_new(o, "backlog", json_integer(p->backlog));
    json_object_set_new(o, "backlog_delay_ms",
                        json_integer(p->backlog_delay_ms));
    json_object_set_new(o, "measured_s", json_real(r->measured_s));
    json_object_set_new(o, "redis_cpu_ms",
                        r->redis_cpu_us >= 0
                            ? json_real((double)r->redis_cpu_us / 1000.0)
                            : json_null());
    json_object_set_new(o, "backlog_s", json_real(r->backlog_s));
    {
        json_t *fa = json_array();
        for (size_t i = 0; fa != NULL && i < p->nfaults; i++) {
            char spec[64];
            dq_fault_format(&p->faults[i], spec, sizeof spec);
            json_array_append_new(fa, json_string(spec));
        }
        if (fa != NULL)
            json_object_set_new(o, "faults", fa);
    }
    json_object_set_new(o, "consumer_mode",
                        json_string(r->process_mode ? "process" : "thread"));
    json_object_set_new(o, "kills", json_integer(r->kills));
    json_object_set_new(o, "restarts", json_integer(r->restarts));
    /* "fault_windows" is the checker's count from the log (F begin records of
     * the parent and of killed children alike), set by dq_check_json. */
    json_object_set_new(o, "retries", json_integer((json_int_t)r->retries));
    return o;
}
