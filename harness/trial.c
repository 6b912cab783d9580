/* trial.c -- one trial, step by step (trial.h).
 *
 *   0. Check and settle the parameters: every value in its range, what the
 *      faults need (faults.h), consumers as processes when one needs them.
 *   1. Redis strategies: a fault that runs on servers of its own starts
 *      them (a primary with a replica and Sentinel, a crashable server)
 *      and every client of the trial goes there; connect once on a bare
 *      handle (trial_redis.c); on a server that is not dqlab's claim the
 *      queue (dq:{queue}:owner, refused while another run holds it);
 *      refuse when keys dq:{queue}:* already exist (or purge them with
 *      fresh); let each fault prepare (server settings, checks).
 *   2. Open one dq_queue handle per producer and per consumer thread (all
 *      in this thread, so a bad option or connection fails before anything
 *      runs); every handle shares one dq_local for in-process strategies.
 *      Create the event log and write its headers; in process mode set up
 *      the children (trial_procs.c).
 *   3. The backlog, if any, by every producer handle at once; the first
 *      snapshot of the server (INFO commandstats, INFO cpu).
 *   4. Start: the latency sampler (trial_sampler.c), the faults that last
 *      the whole run, the consumer processes, then the producer and
 *      consumer threads (trial_workers.c).
 *   5. Wait until every task was delivered at least once (with a lease
 *      also acked, so that redeliveries after a lease ran out are seen) or
 *      the drain deadline passes, or a signal; the fault schedule
 *      (trial_faults.c) and the children are looked after on the way.
 *      The deadline (drain_deadline_ms): grace after the latest due time
 *      and the end of the fault windows; after a consumer kill, for an
 *      at-least-once strategy, the last kill + lease_ms + grace (when the
 *      killed consumer's task comes back), but never more than one
 *      lease_ms past the first deadline: a task killed again and again
 *      would otherwise hold the trial one lease per kill.  A task still
 *      leased then is pending at the end (checker.h).
 *   6. Stop and join everyone, sum the counters of every handle, record
 *      how many tasks the queue still holds (H pending_at_end, where the
 *      strategy counts them) and which its dead-letter set holds (L
 *      records), take the second snapshot, let the faults
 *      restore the server, purge the queue's keys (the log is the record
 *      of the trial) and release the claim.
 *   7. End the log with its Z record (clean, or interrupted) and run the
 *      checker on it: the numbers reported come from the log, not from
 *      here.
 *
 * A trial that fails once it has the queue (a fault refused by Redis, a
 * consumer that died unplanned, the log unwritable) stops everyone as in
 * 6, purges the queue's keys and releases the claim, so the next run finds
 * the queue as it was, and ends the log with H failed <why> and Z failed:
 * the checker then says "no verdict: the trial failed: <why>", not that
 * the writer was killed.
 *
 * Idle mode (tasks = 0, idle_ms > 0): no task is enqueued; consumers
 * claim against the empty queue for idle_ms and the trial measures what
 * that costs the server.  Backlog (backlog > 0): before step 4, the
 * producer handles enqueue `backlog` tasks "b<index>" due backlog_delay_ms
 * ahead, in parallel, so the measured tasks meet a queue of that many
 * pending tasks (keys, for expiry) that never fall due in the trial.
 *
 * Everything runs on the caller's thread apart from the workers: the
 * private redis-server and the consumer processes are forked from it, and
 * their PR_SET_PDEATHSIG is tied to it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../strategies/rconn.h"
#include "params.h"
#include "redis_server.h"
#include "redis_url.h"
#include "signals.h"
#include "trial_int.h"

#define IDLE_SETTLE_US 200000
#define PROGRESS_TTY_US 200000
#define PROGRESS_PLAIN_US 5000000

/* Everything one dq_trial_run holds. */
typedef struct run {
    dq_trial_params p;          /* the caller's, settled */
    dq_trial_result *r;
    dq_trial_state t;
    dq_trial_worker *ws;
    int nw;                     /* workers opened */
    dq_local *local;
    dq_queue admin;             /* bare handle for rconn helpers */
    redisContext *redis;        /* its connection, NULL without Redis */
    dq_trial_procs *ps;         /* process mode, else NULL */
    dq_trial_sampler *sampler;  /* the latency sampler, NULL without */
    int64_t sampler_pongs;      /* its PINGs answered */
    dq_trial_faults tf;
    dq_trial_owner owner;       /* the claim on a server not dqlab's */
    bool queue_ours;            /* the queue passed step 1: its keys are
                                   this trial's to purge */
    bool faults_finished;
    bool idle, needs_redis, all_in_one;
    dq_config cfg;
    dq_redis_target own;        /* a fault's own servers (trial_faults.c
                                   dq_trial_faults_servers), when it
                                   started some */
    dq_trial_snapshot before;
    int64_t start_us;           /* mono: the wait began */
    int64_t end_us;             /* mono: the wait ended */
    int64_t lease_ms;           /* the lease a killed consumer's task
                                   waits out; 0 without one */
    int64_t lease_end_wall_ms;  /* the last kill + lease_ms */
    int kills_seen;
    int64_t rtt_us[256];        /* ECHO round trips during the wait */
    size_t nrtt;
    char *err;
    size_t errlen;
} run;

void dq_trial_defaults(dq_trial_params *p)
{
    memset(p, 0, sizeof *p);
    dq_params_defaults(p);
}

/* Every parameter within its row's range or at its default (a default
 * may mean "off": idle_ms 0), for a caller that did not parse them. */
static bool params_valid(const dq_trial_params *p)
{
    for (const dq_param *d = dq_params; d->key != NULL; d++) {
        int64_t v, v2;
        dq_param_get(d, p, &v, &v2);
        if (d->type == DQ_PARAM_U64 || d->type == DQ_PARAM_CHOICE ||
            (v == d->def && v2 == d->def2))
            continue;
        if (v < d->min || v > d->max ||
            (d->type == DQ_PARAM_RANGE && (v2 < v || v2 > d->max)))
            return false;
    }
    return p->strategy != NULL && p->log_path != NULL &&
           p->nfaults <= DQ_MAX_FAULTS;
}

/* 0. The parameters and what they need. */
static int step_check(run *u)
{
    dq_trial_params *p = &u->p;

    if (!params_valid(p)) {
        snprintf(u->err, u->errlen, "dq_trial_run: invalid parameters");
        return -1;
    }
    if (dq_params_check(p, false, u->err, u->errlen) != 0)
        return -1;
    u->idle = p->tasks == 0;
    /* In idle mode a strategy without Redis still gets the server measured
     * when one is given: the baseline of an idle server. */
    u->needs_redis = (p->strategy->flags & DQ_G_NEEDS_REDIS) != 0 ||
                     (u->idle && p->redis != NULL);
    if (u->needs_redis && p->redis == NULL) {
        snprintf(u->err, u->errlen, "strategy '%s' needs Redis but no server "
                 "was given", p->strategy->name);
        return -1;
    }
    if (dq_faults_check(p->faults, p->nfaults, p->strategy,
                        p->server != NULL && p->server->pid > 0, p->tasks,
                        u->err, u->errlen) != 0)
        return -1;
    u->all_in_one = p->consumer_process &&
                    !(p->strategy->flags & DQ_G_NEEDS_REDIS);
    u->r->process_mode = p->consumer_process;
    return 0;
}

/* 1. The queue's name, the handles' config, the admin connection. */
static int step_connect(run *u)
{
    const dq_trial_params *p = &u->p;
    dq_trial_result *r = u->r;

    if (p->queue[0])
        snprintf(r->queue, sizeof r->queue, "%s", p->queue);
    else
        snprintf(r->queue, sizeof r->queue, "dqlab-%.40s-%" PRIu64,
                 p->strategy->name, p->seed);
    u->cfg.queue = r->queue;
    u->cfg.opts = p->opts;
    u->cfg.nopts = p->nopts;
    if (u->needs_redis) {
        const dq_fault_target *ft = &u->tf.ctx.target;
        if (dq_trial_faults_servers(&u->tf, u->err, u->errlen) != 0)
            return -1;
        dq_trial_config_redis(&u->cfg, p->redis);
        if (ft->port > 0) {
            snprintf(u->own.host, sizeof u->own.host, "127.0.0.1");
            u->own.port = ft->port;
            dq_trial_config_redis(&u->cfg, &u->own);
            snprintf(r->servers, sizeof r->servers, "the fault's own "
                     "redis-server on 127.0.0.1:%d", ft->port);
            if (ft->sentinels[0] != '\0') {
                u->cfg.sentinels = ft->sentinels;
                u->cfg.sentinel_master = ft->master;
                snprintf(r->servers, sizeof r->servers, "the fault's own "
                         "primary 127.0.0.1:%d with a replica, Sentinel %s",
                         ft->port, ft->sentinels);
            }
        }
        if (dq_trial_redis_open(&u->admin, p, &u->cfg, &u->redis,
                                p->server == NULL ? &u->owner : NULL,
                                r->redis_version, sizeof r->redis_version,
                                u->err, u->errlen) != 0)
            return -1;
        u->queue_ours = true;
        if (p->server == NULL) /* --redis: someone else's settings */
            dq_trial_redis_evict_warning(&u->admin, u->redis,
                                         p->strategy->flags, r->warning,
                                         sizeof r->warning);
    }
    u->tf.ctx.redis = u->redis;
    return dq_trial_faults_prepare(&u->tf, u->err, u->errlen);
}

/* 2. The handles (in process mode the parent opens the producers' only:
 * the consumers open theirs in their processes). */
static int step_open(run *u)
{
    const dq_trial_params *p = &u->p;
    int n = p->producers + (p->consumer_process ? 0 : p->consumers);
    size_t words = (size_t)(p->tasks + 63) / 64 + 1;

    u->local = dq_local_new();
    u->ws = calloc((size_t)n, sizeof *u->ws);
    u->t.seen = calloc(words, sizeof *u->t.seen);
    u->t.acked = calloc(words, sizeof *u->t.acked);
    if (u->local == NULL || u->ws == NULL || u->t.seen == NULL ||
        u->t.acked == NULL) {
        snprintf(u->err, u->errlen, "out of memory");
        return -1;
    }
    u->cfg.local = u->local;
    u->t.cfg = u->cfg;
    for (int i = 0; i < n; i++) {
        dq_trial_worker *w = &u->ws[i];
        bool prod = i < p->producers;
        dq_config cfg;

        w->t = &u->t;
        w->index = prod ? i : i - p->producers;
        snprintf(w->name, sizeof w->name, "%c%d", prod ? 'p' : 'c', w->index);
        if (!prod)
            dq_faults_consumer_plan(p, w->index, 0, false, &w->plan);
        else
            dq_faults_producer_plan(p, w->index, &w->plan);
        cfg = dq_trial_worker_config(w);
        if (dq_open(p->strategy, &cfg, &w->q, u->err, u->errlen) != DQ_OK)
            return -1;
        u->nw++;
    }
    u->r->nopts = u->ws[0].q->nopts;
    memcpy(u->r->opts, u->ws[0].q->opts, sizeof u->r->opts);
    return 0;
}

/* 2b. The event log and its headers; the children's side. */
static int step_log(run *u)
{
    const dq_trial_params *p = &u->p;

    /* Buffered per thread (eventlog.h): this process is never the one a
     * fault kills (consumer processes write their own records, one
     * write(2) each), and one write(2) per record was half of the CPU
     * time of a heap trial (perf, eventlog.c). */
    u->t.log = dq_eventlog_create_flags(p->log_path, DQ_LOG_BUFFERED, u->err,
                                        u->errlen);
    if (u->t.log == NULL)
        return -1;
    u->tf.ctx.log = u->t.log;
    if (dq_trial_log_headers(u->t.log, p, u->r) != 0) {
        snprintf(u->err, u->errlen, "%s: write: %s", p->log_path,
                 strerror(errno));
        return -1;
    }
    if (p->consumer_process &&
        (u->ps = dq_trial_procs_new(&u->t, u->all_in_one, u->err,
                                    u->errlen)) == NULL)
        return -1;
    dq_trial_consumers(&u->tf.consumers, &u->t, u->ps);
    return 0;
}

/* Starts fn on workers [from, to); returns how many started. */
static int start_threads(run *u, int from, int to, void *(*fn)(void *))
{
    int i;

    for (i = from; i < to; i++) {
        if (pthread_create(&u->ws[i].th, NULL, fn, &u->ws[i]) != 0) {
            dq_trial_fail(&u->t, "pthread_create: %s", strerror(errno));
            break;
        }
        u->ws[i].started = true;
    }
    return i - from;
}

static void join_threads(run *u)
{
    for (int i = 0; i < u->nw; i++)
        if (u->ws[i].started) {
            pthread_join(u->ws[i].th, NULL);
            u->ws[i].started = false;
        }
}

/* 3. The backlog, then the first snapshot of the server. */
static int step_backlog(run *u)
{
    const dq_trial_params *p = &u->p;
    int64_t b0 = dq_mono_us();

    if (p->backlog > 0) {
        start_threads(u, 0, p->producers, dq_trial_backlog);
        join_threads(u);
        u->r->backlog_s = (double)(dq_mono_us() - b0) / 1e6;
        if (atomic_load(&u->t.failed)) {
            snprintf(u->err, u->errlen, "%s", u->t.fail_msg);
            return -1;
        }
        atomic_store(&u->t.stop, false);
    }
    /* Idle mode: let the server settle after the previous trial's
     * clean-up (closing connections, deleting keys) before measuring. */
    if (u->idle && u->redis != NULL)
        dq_sleep_us(IDLE_SETTLE_US);
    if (u->redis != NULL)
        dq_trial_redis_rtt(&u->admin, u->redis, &u->r->rtt_ms);
    if (u->redis != NULL &&
        dq_trial_redis_snapshot(&u->admin, u->redis, &u->before) != DQ_OK) {
        snprintf(u->err, u->errlen, "%s", u->admin.err);
        return -1;
    }
    u->before.mono_us = dq_mono_us();
    return 0;
}

/* 4. The whole-run faults, the consumer processes (they take a moment to
 * start), then the threads. */
static void step_start(run *u)
{
    const dq_trial_params *p = &u->p;
    char err[300];
    int n;

    /* Between the two snapshots, so that its PINGs can be subtracted. */
    if (u->redis != NULL && !u->idle &&
        (u->sampler = dq_trial_sampler_start(&u->admin, err,
                                             sizeof err)) == NULL) {
        dq_trial_fail(&u->t, "%s", err);
        return;
    }
    if (dq_trial_faults_start(&u->tf, err, sizeof err) != 0) {
        dq_trial_fail(&u->t, "%s", err);
        return;
    }
    if (u->ps != NULL && dq_trial_procs_start(u->ps, err, sizeof err) != 0) {
        dq_trial_fail(&u->t, "%s", err);
        return;
    }
    atomic_store(&u->t.producers_left, u->all_in_one ? 0 : p->producers);
    if (u->all_in_one)
        return;
    n = start_threads(u, 0, p->producers, dq_trial_producer);
    if (n < p->producers) /* those will never count themselves down */
        atomic_fetch_sub(&u->t.producers_left, p->producers - n);
    else
        start_threads(u, p->producers, u->nw, dq_trial_consumer);
    /* A killed consumer's task comes back from an at-least-once strategy
     * only once its lease (option lease_ms, whatever the strategy) runs
     * out; with a lease, "every task delivered once" is not the end
     * either: a delivery whose work outlasts its lease comes back to
     * another consumer, so the trial also waits for every accepted ack
     * and the log shows the redelivery and the stale ack refused (R). */
    if (p->strategy->flags & DQ_G_AT_LEAST_ONCE)
        for (size_t i = 0; i < u->r->nopts; i++)
            if (strcmp(u->r->opts[i].key, "lease_ms") == 0)
                u->lease_ms = strtoll(u->r->opts[i].val, NULL, 10);
}

/* The children and the faults, once per wait step.  Returns false when
 * the trial failed. */
static bool wait_tend(run *u)
{
    char err[300];

    if (dq_trial_owner_lost(&u->owner, err, sizeof err)) {
        u->queue_ours = false; /* another run's keys now: left alone */
        dq_trial_fail(&u->t, "%s", err);
        return false;
    }
    if (u->ps != NULL) {
        dq_trial_procs_watch(u->ps, u->r);
        if (atomic_load(&u->t.failed))
            return false;
        if (u->lease_ms > 0 && u->r->kills != u->kills_seen) {
            u->kills_seen = u->r->kills;
            u->lease_end_wall_ms = dq_wall_us() / 1000 + u->lease_ms;
        }
    }
    if (dq_trial_faults_tick(&u->tf, err, sizeof err) != 0)
        dq_trial_fail(&u->t, "%s", err);
    return !atomic_load(&u->t.failed);
}

/* The drain deadline in wall ms (the top comment, step 5). */
static int64_t drain_deadline_ms(const run *u)
{
    int64_t from = atomic_load(&u->t.latest_due_ms), end, ext;

    if (u->tf.done_wall_ms > from)
        from = u->tf.done_wall_ms;
    end = from + u->p.grace_ms;
    if (u->lease_end_wall_ms == 0)
        return end;
    ext = u->lease_end_wall_ms + u->p.grace_ms;
    if (ext > end + u->lease_ms)
        ext = end + u->lease_ms;
    return ext > end ? ext : end;
}

/* Whether the trial is over: drained (*drained) or past its deadline. */
static bool wait_over(run *u, bool *drained)
{
    const dq_trial_params *p = &u->p;
    dq_trial_state *t = &u->t;
    int64_t now_ms = dq_wall_us() / 1000, deadline_ms;
    bool producers_done = u->all_in_one
                              ? dq_trial_procs_producers_done(u->ps)
                              : atomic_load(&t->producers_left) == 0;

    *drained = false;
    if (u->idle)
        return (*drained = dq_mono_us() - u->start_us >= p->idle_ms * 1000);
    /* A consumer stopped by a stall is resumed first: its late ack (or
     * the refusal of it) belongs to the trial. */
    if (u->ps != NULL && dq_trial_procs_stalled(u->ps))
        return false;
    deadline_ms = drain_deadline_ms(u);
    /* Failed work comes back as a retry: every task must be acked, as
     * under a lease. */
    if (atomic_load(&t->distinct) + atomic_load(&t->refused) == p->tasks &&
        ((u->lease_ms == 0 && p->fail_every == 0) ||
         atomic_load(&t->acked_distinct) + atomic_load(&t->refused) ==
             p->tasks) &&
        (u->lease_end_wall_ms == 0 ||
         now_ms > u->lease_end_wall_ms + p->grace_ms ||
         now_ms > deadline_ms))
        return (*drained = true);
    return producers_done && !dq_trial_faults_pending(&u->tf) &&
           now_ms > deadline_ms;
}

/* 5. The wait. */
static void step_wait(run *u)
{
    bool tty = isatty(STDERR_FILENO);
    int64_t step = tty ? PROGRESS_TTY_US : PROGRESS_PLAIN_US;
    int64_t next = (u->start_us = dq_mono_us()) + step;
    unsigned steps = 0;

    dq_trial_faults_schedule(&u->tf, u->start_us);
    for (;;) {
        if (dq_signals_caught()) {
            u->r->interrupted = true;
            break;
        }
        if (atomic_load(&u->t.failed) || !wait_tend(u) ||
            wait_over(u, &u->r->drained))
            break;
        if (u->p.progress && dq_mono_us() >= next) {
            dq_trial_progress(&u->t, u->start_us, tty, false);
            next += step;
        }
        /* One round trip under the trial's own load, every fifth step
         * (50 ms): not while a fault may stall the server, nor idle,
         * where it would be most of the server's work. */
        if (u->redis != NULL && !u->idle && u->p.nfaults == 0 &&
            ++steps % 5 == 0 && u->nrtt < 256 &&
            dq_trial_redis_echo(&u->admin, u->redis,
                                &u->rtt_us[u->nrtt]) == DQ_OK)
            u->nrtt++;
        dq_sleep_us(DQ_TRIAL_WAIT_STEP_US);
    }
    if (u->nrtt >= 5)
        u->r->rtt_ms = dq_trial_rtt_median(u->rtt_us, u->nrtt);
    if (u->p.progress)
        dq_trial_progress(&u->t, u->start_us, tty, true);
}

/* 6. Stop everyone. */
static int step_stop(run *u)
{
    dq_trial_result *r = u->r;
    char v[32];

    u->end_us = dq_mono_us();
    /* When the trial stopped waiting: the checker counts a task due after
     * it as pending, not lost (checker.h). */
    snprintf(v, sizeof v, "%" PRId64, dq_wall_us());
    dq_log_header(u->t.log, "end_us", v);
    atomic_store(&u->t.stop, true);
    dq_trial_faults_cut(&u->tf);
    if (dq_trial_sampler_stop(u->sampler, u->t.log, &u->sampler_pongs) != 0)
        dq_trial_fail(&u->t, "event log %s: %s", u->p.log_path,
                      strerror(errno));
    u->sampler = NULL;
    atomic_store(&u->t.outage, false);
    join_threads(u);
    if (u->ps != NULL)
        dq_trial_procs_stop(u->ps);
    dq_trial_faults_stop(&u->tf);
    r->restarts = u->tf.ctx.restarts;
    r->fault_windows = u->tf.ctx.windows;
    if (atomic_load(&u->t.failed)) {
        snprintf(u->err, u->errlen, "%s", u->t.fail_msg);
        return -1;
    }
    return 0;
}

/* The tasks the queue still holds once everyone stopped, never claimed:
 * H pending_at_end (the backlog, never due in the trial, left out), so
 * that the checker can tell a task lost from one still queued (a server
 * stalled past the deadline).  Only where the strategy counts them, on a
 * handle of this process that reaches the queue (not an in-process
 * strategy's, whose queue lived in its child). */
static void log_pending(run *u)
{
    char v[24];
    int64_t n;

    if (u->idle || u->nw == 0 || u->all_in_one ||
        !(u->p.strategy->flags & DQ_G_NEEDS_REDIS) ||
        u->p.strategy->pending == NULL || u->ws[0].q == NULL)
        return;
    n = dq_pending(u->ws[0].q);
    if (n < 0)
        return;
    n = n > u->p.backlog ? n - u->p.backlog : 0;
    snprintf(v, sizeof v, "%" PRId64, n);
    dq_log_header(u->t.log, "pending_at_end", v);
}

/* One L record (dq_dead_letter_ids's visitor; arg the log). */
static int log_dead_one(void *arg, const char *id)
{
    return dq_log_dead(arg, dq_wall_us(), id) == 0 ? 0 : -1;
}

/* The ids the strategy's dead-letter set holds once everyone stopped (L
 * records: max_attempts moved them there), so that the checker counts
 * them as dead-lettered, not lost; where the strategy has the set, on a
 * handle of this process, as log_pending. */
static void log_dead_letters(run *u)
{
    if (u->idle || u->nw == 0 || u->all_in_one || u->ws[0].q == NULL ||
        u->p.strategy->dead_letter_ids == NULL)
        return;
    if (dq_dead_letter_ids(u->ws[0].q, log_dead_one, u->t.log) != DQ_OK)
        dq_trial_error(&u->t, "dead letters: %s", dq_errstr(u->ws[0].q));
}

/* Each fault's finish hook, once.  The servers a fault started for the
 * trial are gone afterwards, and the queue's keys with them: nothing is
 * left to purge. */
static void finish_faults(run *u)
{
    dq_trial_faults_finish(&u->tf);
    u->faults_finished = true;
    if (u->own.port > 0)
        u->queue_ours = false;
}

/* 6b. The second snapshot (not when the server restarted: its counters
 * started again); then close every handle, summing what each counted
 * (its close included: a buffer given back), let the faults restore the
 * server and purge the queue's keys, in that order, so that nothing the
 * handles do on close stays in Redis or in the measurement. */
static void step_measure(run *u)
{
    dq_trial_result *r = u->r;
    dq_trial_snapshot after;
    char err[300];

    if (u->redis != NULL) {
        r->measured_s = (double)(dq_mono_us() - u->before.mono_us) / 1e6;
        if (u->tf.ctx.restarts == 0 &&
            dq_trial_redis_snapshot(&u->admin, u->redis, &after) == DQ_OK) {
            r->redis_cpu_us = after.cpu_us - u->before.cpu_us;
            r->redis_commands = (after.commands - u->before.commands) -
                                (after.info_calls - u->before.info_calls) -
                                u->sampler_pongs;
        }
    }
    log_pending(u);
    log_dead_letters(u);
    for (int i = 0; i < u->nw; i++) {
        dq_trial_worker_close(&u->ws[i]);
        dq_trial_add_counters(&r->counters, &u->ws[i].acc);
    }
    r->errors = atomic_load(&u->t.errors);
    snprintf(r->first_error, sizeof r->first_error, "%s", u->t.first_error);
    r->payload_mismatches = atomic_load(&u->t.payload_bad);
    r->retries = atomic_load(&u->t.retries);
    if (u->ps != NULL)
        dq_trial_procs_totals(u->ps, &r->counters, &r->errors,
                              &r->payload_mismatches, &r->retries,
                              r->first_error, sizeof r->first_error);
    finish_faults(u);
    if (u->queue_ours &&
        dq_trial_redis_close(&u->admin, u->redis, &u->owner, err,
                             sizeof err) != 0)
        fprintf(stderr, "dqlab: queue %s: %s\n", r->queue, err);
    u->queue_ours = false;
}

/* 7. End the log (every thread has been joined and every child reaped:
 * dq_log_end writes the buffers, then the Z record, the last line, which
 * tells the checker the log is complete) and check it. */
static int step_check_log(run *u)
{
    const dq_trial_params *p = &u->p;
    dq_trial_result *r = u->r;
    int64_t first = atomic_load(&u->t.first_e_us);
    int64_t last = atomic_load(&u->t.last_d_us);

    if (dq_log_end(u->t.log, dq_wall_us(),
                   r->interrupted ? "interrupted" : "clean") != 0) {
        snprintf(u->err, u->errlen, "event log %s: %s", p->log_path,
                 strerror(errno));
        return -1;
    }
    dq_eventlog_close(u->t.log);
    u->t.log = u->tf.ctx.log = NULL;
    if (dq_check_file(p->log_path, &r->check, u->err, u->errlen) != 0)
        return -1;
    if (r->check.end != (r->interrupted ? DQ_CHECK_END_INTERRUPTED
                                        : DQ_CHECK_END_CLEAN)) {
        const char *why = dq_check_no_verdict(&r->check);
        snprintf(u->err, u->errlen, "event log %s: %s", p->log_path,
                 why ? why : "its end record does not match the trial's "
                             "end");
        return -1;
    }
    if (u->idle)
        r->elapsed_s = (double)(u->end_us - u->start_us) / 1e6;
    else if (first > 0 && last > first)
        r->elapsed_s = (double)(last - first) / 1e6;
    else if (first > 0)
        r->elapsed_s = (double)(dq_wall_us() - first) / 1e6;
    r->tasks_per_s =
        r->elapsed_s > 0 ? (double)r->check.delivered / r->elapsed_s : 0;
    return 0;
}

/* A trial that failed once its log existed: why, as H failed (one line,
 * no TAB), then Z failed, written once no thread or child writes any more
 * (eventlog.h).  Nothing is written after a Z already there. */
static void end_log_failed(run *u, const char *why)
{
    char v[256];
    size_t i;

    snprintf(v, sizeof v, "%s", why[0] ? why : "unknown error");
    for (i = 0; v[i] != '\0'; i++)
        if (v[i] == '\t' || v[i] == '\r' || v[i] == '\n')
            v[i] = ' ';
    dq_eventlog_flush_all(u->t.log); /* so that H failed comes last */
    if (dq_log_header(u->t.log, "failed", v) == 0)
        dq_log_end(u->t.log, dq_wall_us(), "failed");
}

/* Every path: nothing left running, nothing left open; after a failure
 * (failed) the queue's keys purged and the log ended as failed (the top
 * comment). */
static void cleanup(run *u, bool failed)
{
    char why[256], err[300];

    snprintf(why, sizeof why, "%s", u->err);
    atomic_store(&u->t.stop, true);
    dq_trial_sampler_stop(u->sampler, NULL, NULL);
    u->sampler = NULL;
    if (!u->faults_finished)
        finish_faults(u);
    join_threads(u);
    if (u->ps != NULL)
        dq_trial_procs_stop(u->ps);
    for (int i = 0; i < u->nw; i++) {
        dq_close(u->ws[i].q);
        u->ws[i].q = NULL;
    }
    if (u->queue_ours &&
        dq_trial_redis_close(&u->admin, u->redis, &u->owner, err,
                             sizeof err) != 0)
        fprintf(stderr, "dqlab: queue %s: %s\n", u->r->queue, err);
    dq_trial_owner_stop(&u->owner);
    if (failed && u->t.log != NULL)
        end_log_failed(u, why);
    free(u->ws);
    dq_trial_procs_free(u->ps);
    dq_eventlog_close(u->t.log);
    if (u->local != NULL)
        dq_local_free(u->local);
    if (u->redis != NULL)
        redisFree(u->redis);
    free(u->t.seen);
    free(u->t.acked);
    dq_trial_state_free(&u->t);
}

int dq_trial_run(const dq_trial_params *p, dq_trial_result *r, char *err,
                 size_t errlen)
{
    run *u = calloc(1, sizeof *u);
    int ret = -1;

    if (u == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(r, 0, sizeof *r);
    r->redis_commands = -1;
    r->redis_cpu_us = -1;
    r->rtt_ms = -1;
    u->p = *p;
    dq_params_settle(&u->p);
    u->r = r;
    u->err = err;
    u->errlen = errlen;
    dq_trial_state_init(&u->t, &u->p);
    dq_trial_faults_init(&u->tf, &u->p, &u->admin, NULL);
    if (step_check(u) == 0 && step_connect(u) == 0 && step_open(u) == 0 &&
        step_log(u) == 0 && step_backlog(u) == 0) {
        step_start(u);
        step_wait(u);
        if (step_stop(u) == 0) {
            step_measure(u);
            if (step_check_log(u) == 0)
                ret = r->interrupted ? 1 : 0;
        }
    }
    cleanup(u, ret < 0);
    free(u);
    return ret;
}
