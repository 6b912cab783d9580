/* trial_workers.c -- the producer, backlog and consumer loops of a trial,
 * and the state they share (trial_int.h).
 *
 * The same loops run as threads of the trial (thread mode), as the one
 * consumer of a consumer process, and as the threads of an in-process
 * strategy's one process (consumer_proc.c): a producer enqueues tasks
 * "t<index>" (index = producer, producer + P, ...) in groups of
 * enqueue_batch and logs E once its group was acknowledged, paced when
 * rate > 0 (below); a consumer
 * loops claim -> log D -> sleep work_us -> ack -> log A (accepted) or R
 * (refused, failed), or, when its work failed, log G -> retry.  The
 * parent's progress (which tasks were delivered and acked) is a pair of shared atomic bitmaps over the task indices.
 *
 * Records.  The parent writes through its buffered eventlog.c handle; a
 * child process through its own (dq_eventlog_open_append,
 * DQ_LOG_SYNC_EACH: one write(2) per record on an O_APPEND descriptor), so
 * records of all processes interleave whole and a SIGKILLed child leaves
 * every record it wrote.
 *
 * Pacing (rate > 0, tasks/s over all producers).  Task i is due to be
 * sent at t0 + i/rate s, t0 the producer's start on the monotonic clock;
 * a producer sleeps until its next group's first task is due, so the
 * offered rate does not drift with the time each enqueue takes, and one
 * that fell behind (an enqueue retried through a fault) sends what is
 * overdue at once and is back on the schedule afterwards.  With P
 * producers, each sends every P-th task: rate/P each, interleaved.
 *
 * Refused enqueues.  An enqueue the server refused for want of memory
 * (OOM, under maxmemory-policy noeviction) ran no command: it is logged as
 * N (not acknowledged, not lost), never retried, and the producer goes on
 * with its next task.
 *
 * Failing work (fail_every N).  The work of every N-th claim of each
 * consumer fails, and the consumer gives the task back by the trial's
 * retry policy after its G record: readd (ack, then enqueue the task
 * again at now + retry_ms) or nack (dq_nack).  A skewed producer
 * (clock-skew:producer) logs in E the due time it meant, by the true
 * clock.
 *
 * Faults.  With faults, an enqueue whose outcome is unknown (connection
 * lost, server restarting) is retried with the same ids and due times
 * (ZADD/HSET of the same member are idempotent) and logged once
 * acknowledged; an ack, nack or re-add that met a lost connection, or
 * that Redis refused without running it (BUSY from a long script,
 * LOADING), is retried (the strategies' acks are idempotent: HDEL, or a
 * lease check); all with a backoff of 20 ms doubling to 1 s, for at most
 * 60 s.  A consumer whose plan says so SIGKILLs itself at its claim and
 * point, after writing the F begin record of the fault that planned it,
 * or stops itself (SIGSTOP) right after the D record of a planned claim,
 * to be resumed by the parent (stall-consumer).  While the trial's outage
 * flag is up, consumer threads close their handles and wait.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redis_url.h"
#include "signals.h"
#include "trial_int.h"

#define ERROR_BACKOFF_US 50000
#define RETRY_LIMIT_US 60000000LL

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "atomic_int must be lock-free");

/* ---- Shared state -------------------------------------------------------- */

void dq_trial_state_init(dq_trial_state *t, const dq_trial_params *p)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->mu, NULL);
    t->p = p;
    t->retry = p->nfaults > 0;
}

void dq_trial_state_free(dq_trial_state *t)
{
    pthread_mutex_destroy(&t->mu);
}

void dq_trial_fail(dq_trial_state *t, const char *fmt, ...)
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

void dq_trial_error(dq_trial_state *t, const char *fmt, ...)
{
    va_list ap;

    if (atomic_fetch_add(&t->errors, 1) != 0)
        return;
    pthread_mutex_lock(&t->mu);
    va_start(ap, fmt);
    vsnprintf(t->first_error, sizeof t->first_error, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&t->mu);
}

bool dq_trial_should_stop(dq_trial_state *t)
{
    return atomic_load(&t->stop) || dq_signals_caught();
}

void dq_trial_mark(_Atomic uint64_t *bits, atomic_int_fast64_t *count,
                   int64_t idx)
{
    uint64_t bit = 1ULL << (idx % 64);

    if (bits != NULL && idx >= 0 &&
        (atomic_fetch_or(&bits[idx / 64], bit) & bit) == 0)
        atomic_fetch_add(count, 1);
}

void dq_trial_atomic_min(atomic_int_fast64_t *a, int64_t v)
{
    int_fast64_t cur = atomic_load(a);
    while ((cur == 0 || v < cur) &&
           !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

void dq_trial_atomic_max(atomic_int_fast64_t *a, int64_t v)
{
    int_fast64_t cur = atomic_load(a);
    while (v > cur && !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

void dq_trial_add_counters(dq_counters *to, const dq_counters *c)
{
    to->round_trips += c->round_trips;
    to->empty_polls += c->empty_polls;
    to->lost_races += c->lost_races;
    to->wakeups += c->wakeups;
    to->putbacks += c->putbacks;
}

void dq_trial_config_redis(dq_config *cfg, const dq_redis_target *t)
{
    cfg->redis_host = t->host;
    cfg->redis_port = t->port;
    cfg->redis_user = t->user[0] ? t->user : NULL;
    cfg->redis_password = t->password[0] ? t->password : NULL;
    cfg->redis_db = t->db;
}

dq_config dq_trial_worker_config(const dq_trial_worker *w)
{
    dq_config cfg = w->t->cfg;

    cfg.consumer = w->name;
    cfg.clock_offset_us = w->plan.clock_offset_us;
    if (w->name[0] == 'c')
        cfg.clock_step_us = &w->t->clock_step_us;
    return cfg;
}

void dq_trial_worker_close(dq_trial_worker *w)
{
    dq_close_into(w->q, &w->acc);
    w->q = NULL;
}

/* A failed event-log write of task id's record ends the trial, naming
 * the file and errno's text (ENOSPC: "No space left on device"). */
static void log_failed(dq_trial_state *t, const char *id)
{
    int e = errno;

    dq_trial_fail(t, "event log %s: %s (task id '%.64s')", t->p->log_path,
                  strerror(e), id);
}

/* Backoff for retried calls: 20 ms doubling to 1 s. */
static int64_t backoff_us(int attempt)
{
    int64_t us = 20000;
    for (int i = 0; i < attempt && us < 1000000; i++)
        us *= 2;
    return us < 1000000 ? us : 1000000;
}

/* ---- Producers ----------------------------------------------------------- */

typedef struct batch {
    size_t cap, n, pb;             /* items, used, bytes per payload */
    unsigned char *buf;            /* cap payloads */
    dq_enqueue_item *items;
    char (*ids)[24];
    int64_t maxdue;
} batch;

/* Fills b with the next tasks of this producer from *i on. */
static void batch_fill(dq_trial_worker *w, batch *b, int64_t *i)
{
    const dq_trial_params *p = w->t->p;

    b->maxdue = INT64_MIN;
    for (b->n = 0; b->n < b->cap && *i < p->tasks;
         b->n++, *i += p->producers) {
        unsigned char *pl = b->buf + b->pb * b->n;
        dq_enqueue_item *it = &b->items[b->n];
        dq_trial_format_id(b->ids[b->n], 't', *i);
        dq_trial_payload(p->seed, *i, pl, (size_t)p->payload_bytes);
        it->id = b->ids[b->n];
        it->payload = pl;
        it->payload_len = (size_t)p->payload_bytes;
        it->due_ms = dq_now_ms(w->q) + dq_trial_delay_ms(p->seed, *i,
                                                         p->delay_min_ms,
                                                         p->delay_max_ms);
        if (it->due_ms > b->maxdue)
            b->maxdue = it->due_ms;
    }
}

/* True when the server refused q's last command for want of memory
 * (maxmemory reached under noeviction, or nothing left to evict): Redis
 * replies "OOM command not allowed when used memory > 'maxmemory'" before
 * it runs the command, and a MULTI whose command it refused runs none
 * (EXECABORT), so such an enqueue is refused, not of unknown outcome
 * (https://redis.io/docs/reference/eviction/). */
static bool refused_oom(int rc, const dq_queue *q)
{
    return rc == DQ_EREDIS && q != NULL &&
           strstr(dq_errstr(q), "OOM command not allowed") != NULL;
}

/* Sends b (retried with faults).  Returns DQ_OK or the last DQ_E*, with
 * *refused true when the server refused b (OOM) and no earlier attempt of
 * it may have been applied (one that failed otherwise, e.g. a lost
 * connection, leaves its outcome unknown: then an OOM is retried too). */
static int batch_send(dq_trial_worker *w, const batch *b, bool *refused)
{
    dq_trial_state *t = w->t;
    const dq_enqueue_item *it = b->items;
    int64_t first_fail_us = 0;
    int rc, attempt = 0;
    bool unknown = false;

    *refused = false;
    for (;;) {
        rc = b->n == 1 ? dq_enqueue(w->q, it->id, it->payload,
                                    it->payload_len, it->due_ms)
                       : dq_enqueue_many(w->q, it, b->n);
        if (refused_oom(rc, w->q) && !unknown) {
            *refused = true;
            return rc;
        }
        unknown |= !refused_oom(rc, w->q);
        if (rc == DQ_OK || !t->retry || rc == DQ_EINVAL ||
            dq_trial_should_stop(t))
            return rc;
        if (first_fail_us == 0)
            first_fail_us = dq_mono_us();
        else if (dq_mono_us() - first_fail_us > RETRY_LIMIT_US)
            return rc;
        atomic_fetch_add(&t->retries, 1);
        dq_sleep_us(backoff_us(attempt++));
    }
}

/* Logs b's E records with the acknowledgement time.  Returns 0 or -1
 * (the trial failed). */
static int batch_log(dq_trial_worker *w, const batch *b)
{
    dq_trial_state *t = w->t;
    int64_t now_us = dq_wall_us();

    /* The due time the producer meant, by the true clock: a skewed
     * producer (clock-skew) gave enqueue its own clock's. */
    int64_t skew_ms = w->plan.clock_offset_us / 1000;

    dq_trial_atomic_max(&t->latest_due_ms, b->maxdue);
    for (size_t j = 0; j < b->n; j++)
        if (dq_log_enqueue(t->log, now_us, b->ids[j],
                           b->items[j].due_ms - skew_ms, w->name) != 0) {
            log_failed(t, b->ids[j]);
            return -1;
        }
    dq_trial_atomic_min(&t->first_e_us, now_us);
    atomic_fetch_add(&t->enqueued, (int_fast64_t)b->n);
    return 0;
}

/* Logs b's N records (the server refused the batch: reason) and counts
 * them.  Returns 0 or -1 (the trial failed). */
static int batch_refused(dq_trial_worker *w, const batch *b,
                         const char *reason)
{
    dq_trial_state *t = w->t;
    int64_t now_us = dq_wall_us();

    for (size_t j = 0; j < b->n; j++)
        if (dq_log_enqueue_refused(t->log, now_us, b->ids[j],
                                   b->items[j].due_ms, w->name,
                                   reason) != 0) {
            log_failed(t, b->ids[j]);
            return -1;
        }
    atomic_fetch_add(&t->refused, (int_fast64_t)b->n);
    return 0;
}

/* Pacing: waits until task i is due to be sent, t0_us + i/rate s on the
 * monotonic clock (in steps of at most DQ_TRIAL_WAIT_STEP_US, so a stop
 * is seen).  Returns false when the trial stops meanwhile. */
static bool pace(dq_trial_state *t, int64_t t0_us, int64_t i)
{
    int64_t rate = t->p->rate, at_us, now;

    if (rate <= 0)
        return true;
    /* i < 1e8 and 1e6 * i < 2^63: no overflow. */
    at_us = t0_us + i * 1000000 / rate;
    while ((now = dq_mono_us()) < at_us) {
        if (dq_trial_should_stop(t))
            return false;
        dq_sleep_us(at_us - now < DQ_TRIAL_WAIT_STEP_US
                        ? at_us - now : DQ_TRIAL_WAIT_STEP_US);
    }
    return true;
}

void *dq_trial_producer(void *arg)
{
    dq_trial_worker *w = arg;
    dq_trial_state *t = w->t;
    const dq_trial_params *p = t->p;
    batch b = {.cap = p->enqueue_batch > 1 ? (size_t)p->enqueue_batch : 1,
               .pb = p->payload_bytes ? (size_t)p->payload_bytes : 1};
    int64_t t0_us = dq_mono_us();
    bool refused;
    int rc;

    b.buf = malloc(b.pb * b.cap);
    b.items = malloc(b.cap * sizeof *b.items);
    b.ids = malloc(b.cap * sizeof *b.ids);
    if (b.buf == NULL || b.items == NULL || b.ids == NULL) {
        dq_trial_fail(t, "%s: out of memory", w->name);
        goto done;
    }
    for (int64_t i = w->index; i < p->tasks && !dq_trial_should_stop(t);) {
        if (!pace(t, t0_us, i))
            break;
        batch_fill(w, &b, &i);
        rc = batch_send(w, &b, &refused);
        if (refused) {
            if (batch_refused(w, &b, "OOM") != 0)
                break;
            continue;
        }
        if (rc != DQ_OK) {
            if (!dq_trial_should_stop(t))
                dq_trial_fail(t, "%s: enqueue %s%s: %s", w->name, b.ids[0],
                              b.n > 1 ? " (and its batch)" : "",
                              dq_errstr(w->q));
            break;
        }
        if (batch_log(w, &b) != 0)
            break;
    }
done:
    free(b.buf);
    free(b.items);
    free(b.ids);
    atomic_fetch_sub(&t->producers_left, 1);
    return NULL;
}

/* This producer's share of the backlog: ids "b<index>", due
 * backlog_delay_ms ahead, not logged (only counted in a header). */
void *dq_trial_backlog(void *arg)
{
    dq_trial_worker *w = arg;
    dq_trial_state *t = w->t;
    const dq_trial_params *p = t->p;
    unsigned char *buf = malloc(p->payload_bytes ? (size_t)p->payload_bytes
                                                 : 1);

    if (buf == NULL) {
        dq_trial_fail(t, "%s: out of memory", w->name);
        return NULL;
    }
    for (int64_t i = w->index; i < p->backlog; i += p->producers) {
        char id[32];

        if (dq_trial_should_stop(t))
            break;
        dq_trial_format_id(id, 'b', i);
        dq_trial_payload(p->seed ^ 0x5bd1e995u, i, buf,
                         (size_t)p->payload_bytes);
        if (dq_enqueue(w->q, id, buf, (size_t)p->payload_bytes,
                       dq_now_ms(w->q) + p->backlog_delay_ms) != DQ_OK) {
            dq_trial_fail(t, "%s: enqueue backlog %s: %s", w->name, id,
                          dq_errstr(w->q));
            break;
        }
    }
    free(buf);
    return NULL;
}

/* ---- Consumers ----------------------------------------------------------- */

/* The consumer's planned death: one F begin record of the fault that
 * planned it, then a real SIGKILL of this process (no cleanup runs,
 * exactly as kill -9 from outside). */
static void die_now(dq_trial_worker *w, const char *id)
{
    char arg[200];

    snprintf(arg, sizeof arg, "%s:point=%s,claim=%" PRId64 ",id=%.64s",
             w->name, dq_kill_point_name(w->plan.die_point), w->claims, id);
    dq_log_fault(w->t->log, dq_wall_us(), w->plan.die_by->name, "begin",
                 arg);
    kill(getpid(), SIGKILL);
    _exit(137); /* not reached */
}

/* Dies here if the plan says so: at this claim and point (before-retry:
 * at the first failed claim from the planned one on). */
static void maybe_die(dq_trial_worker *w, dq_kill_point at, const char *id)
{
    if (w->plan.die_claim > 0 && w->plan.die_point == at &&
        (w->claims == w->plan.die_claim ||
         (at == DQ_KILL_BEFORE_RETRY && w->claims > w->plan.die_claim)))
        die_now(w, id);
}

/* Stops this process here (SIGSTOP) if the plan says so, right after the
 * D record of this claim: the F begin of the row that planned it first,
 * written before the stop, so the parent knows how long to wait before
 * it resumes it (trial_procs.c).  A GC pause or a starved CPU, from the
 * consumer's side: it holds its task meanwhile. */
static void maybe_stall(dq_trial_worker *w, const char *id)
{
    dq_consumer_plan *pl = &w->plan;
    char arg[200];

    while (pl->nstalls > 0 && pl->stall_claim[0] < w->claims) {
        memmove(pl->stall_claim, pl->stall_claim + 1,
                (size_t)(pl->nstalls - 1) * sizeof pl->stall_claim[0]);
        memmove(pl->stall_ms, pl->stall_ms + 1,
                (size_t)(pl->nstalls - 1) * sizeof pl->stall_ms[0]);
        pl->nstalls--;
    }
    if (pl->nstalls == 0 || pl->stall_claim[0] != w->claims ||
        dq_trial_should_stop(w->t))
        return;
    snprintf(arg, sizeof arg, "%s:stop_ms=%" PRId64 ",claim=%" PRId64
             ",id=%.64s", w->name, pl->stall_ms[0], w->claims, id);
    pl->stall_claim[0] = 0; /* once */
    if (dq_log_fault(w->t->log, dq_wall_us(), pl->stall_by->name, "begin",
                     arg) != 0) {
        log_failed(w->t, id);
        return;
    }
    kill(getpid(), SIGSTOP);
}

/* Subscriber outage (threads): closes the handle, waits until the outage
 * ends.  Returns false when the trial stops meanwhile. */
static bool outage_wait(dq_trial_worker *w)
{
    dq_trial_state *t = w->t;

    dq_trial_worker_close(w);
    while (atomic_load(&t->outage) && !dq_trial_should_stop(t))
        dq_sleep_us(DQ_TRIAL_WAIT_STEP_US / 2);
    return !dq_trial_should_stop(t);
}

/* Opens the consumer's handle again after an outage, with backoff. */
static bool reopen(dq_trial_worker *w)
{
    dq_trial_state *t = w->t;
    dq_config cfg = dq_trial_worker_config(w);
    char err[256];

    for (int attempt = 0; !dq_trial_should_stop(t); attempt++) {
        if (dq_open(t->p->strategy, &cfg, &w->q, err, sizeof err) == DQ_OK)
            return true;
        dq_trial_error(t, "%s: reopen: %.200s", w->name, err);
        dq_sleep_us(backoff_us(attempt));
    }
    return false;
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

/* Whether a failed call may be tried again as it is: the connection was
 * lost (DQ_EIO; the strategies' acks, nacks and re-adds are idempotent),
 * or Redis refused the command without running it because a script kept
 * it busy past busy-reply-threshold ("BUSY ...", busy-redis) or it was
 * still loading its dataset ("LOADING ...", after a restart):
 * https://redis.io/commands/script-kill/. */
static bool transient(int rc, const dq_queue *q)
{
    if (rc == DQ_EIO)
        return true;
    return rc == DQ_EREDIS && q != NULL &&
           (strstr(dq_errstr(q), "BUSY Redis is busy") != NULL ||
            strstr(dq_errstr(q), "LOADING Redis is loading") != NULL);
}

/* Counts a failed claim or ack and keeps the first message. */
static void op_error(dq_trial_worker *w, const char *op, int rc)
{
    dq_trial_error(w->t, "%s: %s: %s (%s)", w->name, op,
                   w->q ? dq_errstr(w->q) : "closed", dq_result_name(rc));
}

/* Calls op (an ack, nack or re-add of task) until it returns DQ_OK or an
 * error that is not transient, retrying transient ones with faults as an
 * ack is.  Returns its last result. */
static int call_retried(dq_trial_worker *w, const dq_task *task,
                        int (*op)(dq_trial_worker *w, const dq_task *task))
{
    dq_trial_state *t = w->t;
    int64_t first_fail_us = 0;
    int rc, attempt = 0;

    while ((rc = op(w, task)) != DQ_OK && t->retry && transient(rc, w->q) &&
           !dq_trial_should_stop(t)) {
        if (first_fail_us == 0)
            first_fail_us = dq_mono_us();
        else if (dq_mono_us() - first_fail_us > RETRY_LIMIT_US)
            break;
        atomic_fetch_add(&t->retries, 1);
        dq_sleep_us(backoff_us(attempt++));
    }
    return rc;
}

static int op_ack(dq_trial_worker *w, const dq_task *task)
{
    return dq_ack(w->q, task);
}

static int op_nack(dq_trial_worker *w, const dq_task *task)
{
    return dq_nack(w->q, task, w->t->p->retry_ms);
}

static int op_readd(dq_trial_worker *w, const dq_task *task)
{
    return dq_enqueue(w->q, task->id, task->payload, task->payload_len,
                      dq_now_ms(w->q) + w->t->p->retry_ms);
}

/* After a claim: D record, progress bit, payload check.  Returns 0 or -1
 * (the log failed). */
static int delivered(dq_trial_worker *w, const dq_task *task,
                     unsigned char *want)
{
    dq_trial_state *t = w->t;
    const dq_trial_params *p = t->p;
    int64_t now_us = dq_wall_us(), idx;

    if (dq_log_deliver(t->log, now_us, task->id, w->name,
                       task->attempt) != 0) {
        log_failed(t, task->id);
        return -1;
    }
    dq_trial_atomic_max(&t->last_d_us, now_us);
    idx = dq_trial_id_index(task->id, p->tasks);
    if (idx >= 0) {
        dq_trial_mark(t->seen, &t->distinct, idx);
        dq_trial_payload(p->seed, idx, want, (size_t)p->payload_bytes);
        if (task->payload_len != (size_t)p->payload_bytes ||
            (task->payload_len > 0 &&
             memcmp(task->payload, want, task->payload_len) != 0))
            atomic_fetch_add(&t->payload_bad, 1);
    }
    return 0;
}

/* The ack, retried with faults after a lost connection, and its record:
 * A when the strategy accepted it, R (with the code) when it refused a
 * stale one or the call failed, each against the attempt it
 * acknowledges.  A stale ack refused (DQ_ENOTFOUND: the lease had passed
 * to another delivery) is what a lease does, not an error: the checker
 * counts it from the R record. */
static void acknowledge(dq_trial_worker *w, const dq_task *task)
{
    dq_trial_state *t = w->t;
    int rc = call_retried(w, task, op_ack);

    if (rc != DQ_OK) {
        const char *code = result_code(rc);
        if (rc != DQ_ENOTFOUND)
            op_error(w, "ack", rc);
        if (dq_log_ack_refused(t->log, dq_wall_us(), task->id, w->name,
                               task->attempt, code) != 0)
            log_failed(t, task->id);
    } else if (dq_log_ack(t->log, dq_wall_us(), task->id, w->name,
                          task->attempt) != 0) {
        log_failed(t, task->id);
    } else {
        dq_trial_mark(t->acked, &t->acked_distinct,
                      dq_trial_id_index(task->id, t->p->tasks));
    }
}

/* The task's work failed (fail_every): it goes back for a retry, by the
 * trial's policy, after its G record (the intent: a call that fails is
 * counted as an error; what came of it is the task's later deliveries, or
 * none).  readd, the
 * tutorials' advice: ack the delivery (which removes the task: a lease
 * strategy deletes it, an at-most-once one removed it at the claim
 * already), then enqueue it again at now + retry_ms; a consumer dying in
 * between (kill-consumer:before-retry) loses it.  nack: dq_nack, one
 * atomic step in Redis that keeps the retry time (the kill comes before
 * it, and the lease brings the task back). */
static void give_back(dq_trial_worker *w, const dq_task *task)
{
    dq_trial_state *t = w->t;
    bool nack = t->p->retry_nack;
    int rc = DQ_OK;

    if (dq_log_giveback(t->log, dq_wall_us(), task->id, w->name,
                        task->attempt, nack ? "nack" : "readd") != 0) {
        log_failed(t, task->id);
        return;
    }
    if (!nack)
        rc = call_retried(w, task, op_ack);
    if (rc == DQ_OK) {
        maybe_die(w, DQ_KILL_BEFORE_RETRY, task->id);
        rc = call_retried(w, task, nack ? op_nack : op_readd);
    }
    /* Its outcome is in the log: a later delivery of the task, or none
     * (the lease's, for a nack refused because the lease had passed). */
    if (rc != DQ_OK && rc != DQ_ENOTFOUND)
        op_error(w, nack ? "nack" : "retry", rc);
}

/* One claim of the consumer loop.  Returns false when the loop ends. */
static bool consume_one(dq_trial_worker *w, unsigned char *want)
{
    dq_trial_state *t = w->t;
    const dq_trial_params *p = t->p;
    dq_task task;
    int rc;

    if (atomic_load(&t->outage) && !outage_wait(w))
        return false;
    if (w->q == NULL && !reopen(w))
        return false;
    memset(&task, 0, sizeof task);
    rc = dq_claim(w->q, p->claim_timeout_ms, &task);
    if (rc == DQ_EMPTY)
        return true;
    if (rc != DQ_OK) {
        op_error(w, "claim", rc);
        dq_sleep_us(ERROR_BACKOFF_US);
        return true;
    }
    w->claims++;
    maybe_die(w, DQ_KILL_AFTER_CLAIM, task.id);
    if (delivered(w, &task, want) != 0) {
        dq_task_clear(&task);
        return false;
    }
    maybe_stall(w, task.id);
    if (w->plan.die_claim > 0 && w->plan.die_claim == w->claims &&
        w->plan.die_point == DQ_KILL_DURING_WORK) {
        dq_sleep_us(p->work_us / 2);
        die_now(w, task.id);
    }
    dq_sleep_us(p->work_us);
    if (p->fail_every > 0 && w->claims % p->fail_every == 0) {
        give_back(w, &task);
        dq_task_clear(&task);
        return true;
    }
    maybe_die(w, DQ_KILL_BEFORE_ACK, task.id);
    acknowledge(w, &task);
    dq_task_clear(&task);
    return true;
}

void *dq_trial_consumer(void *arg)
{
    dq_trial_worker *w = arg;
    dq_trial_state *t = w->t;
    unsigned char *want = malloc(t->p->payload_bytes
                                     ? (size_t)t->p->payload_bytes : 1);

    if (want == NULL) {
        dq_trial_fail(t, "%s: out of memory", w->name);
        return NULL;
    }
    while (!dq_trial_should_stop(t) && consume_one(w, want))
        ;
    free(want);
    return NULL;
}
