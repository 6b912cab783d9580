/* bench_lateness.c -- part 4 of `dqlab bench`: lateness at offered rates,
 * and the rate where each strategy saturates (bench.h: lateness.csv).
 *
 * An open loop: producers are paced by the clock, not by the queue, so a
 * strategy that falls behind shows it as lateness instead of slowing its
 * producers down.  Tasks fall due at the offered rate: each is due
 * DUE_AHEAD_MS after the millisecond it is scheduled in, so what is
 * measured is the strategy's own way of waiting for a due time (the
 * heap's timed wait, list's mover, expiry's TTL and `expired` event, the
 * polling strategies' sleep until the head is due) and not a shortcut for
 * tasks already due (expiry hands those straight to its ready list), and
 * the producer's own timing does not count: a task enqueued a little late
 * within those 100 ms is still on time for its due time.  The pacing is on
 * whole milliseconds because due times are: at each millisecond boundary
 * a producer sends, in one dq_enqueue_many, every task its share of the
 * rate has come to by then.  How far after its scheduled millisecond each
 * enqueue was called is kept (enqueue_lag), so a reader can see that the
 * producers kept their schedule.  Two producers are offset by half a
 * period, so that 200 tasks/s arrive as 200 single tasks, not 100 pairs.
 *
 * Consumers claim with a 50 ms timeout and ack; the event log is buffered
 * per thread (eventlog.h) and checked at the end (checker.h), and the
 * lateness percentiles are the checker's.  Saturation and its reasons:
 * bench.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_int.h"
#include "checker.h"
#include "eventlog.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define GROUP_MAX 1000          /* tasks per dq_enqueue_many at most */
#define DUE_AHEAD_MS 100        /* due time after the scheduled ms */
#define CLAIM_TIMEOUT_MS 50
#define DRAIN_MAX_US 3000000
#define SAT_SHARE 0.95          /* sent and delivered per s vs offered */
#define SAT_P99_FACTOR 10.0     /* p99 vs the lowest rate's p99 ... */
#define SAT_P99_FLOOR_MS 10.0   /* ... and at least this */

typedef struct lat_run {
    const dq_bench *b;
    const dq_strategy *s;
    char queue[65];
    dq_local *local;
    dq_eventlog *log;
    int producers;
    double rate;               /* offered tasks/s, all producers */
    int64_t per_producer;      /* tasks each producer sends */
    int64_t start_wall_us;     /* a millisecond boundary */
    double *lags_us;           /* producers x per_producer: enqueue call
                                  - scheduled millisecond */
    atomic_int_fast64_t enqueued, delivered;
    atomic_int_fast64_t last_e_us;   /* latest enqueue acknowledged */
    atomic_int_fast64_t first_d_us;  /* first and last delivery (0: none) */
    atomic_int_fast64_t last_d_us;
    atomic_int producers_left;
    atomic_bool stop;
    atomic_int errors;
    char first_error[256];
    pthread_mutex_t mu;
} lat_run;

typedef struct lat_worker {
    lat_run *lr;
    int index;
    pthread_t th;
    bool started;
} lat_worker;

/* *a = max(*a, v), or min when want_min (0 counts as unset). */
static void atomic_extreme(atomic_int_fast64_t *a, int64_t v, bool want_min)
{
    int_fast64_t cur = atomic_load(a);

    while ((cur == 0 || (want_min ? v < cur : v > cur)) &&
           !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

static void lat_error(lat_run *lr, const char *msg)
{
    if (atomic_fetch_add(&lr->errors, 1) == 0) {
        pthread_mutex_lock(&lr->mu);
        snprintf(lr->first_error, sizeof lr->first_error, "%s", msg);
        pthread_mutex_unlock(&lr->mu);
    }
}

/* Sleeps until the wall clock reaches us (CLOCK_REALTIME, absolute). */
static void sleep_until_wall(int64_t us)
{
    struct timespec ts = {.tv_sec = (time_t)(us / 1000000),
                          .tv_nsec = (long)(us % 1000000) * 1000};

    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) ==
           EINTR)
        ;
}

/* One group: k tasks from number `sent` on, scheduled in millisecond
 * tick_ms (wall clock), due DUE_AHEAD_MS later.  Returns 0 or -1. */
static int send_group(lat_run *lr, dq_queue *q, const char *name,
                      int index, int64_t sent, int64_t k, int64_t tick_ms)
{
    static __thread dq_enqueue_item items[GROUP_MAX];
    static __thread char ids[GROUP_MAX][48];
    int64_t due = tick_ms + DUE_AHEAD_MS, call_us, ack_us;
    int rc;

    for (int64_t j = 0; j < k; j++) {
        snprintf(ids[j], sizeof ids[j], "%s-%" PRId64, name, sent + j);
        items[j] = (dq_enqueue_item){ids[j], dq_bench_payload,
                                     DQ_BENCH_PAYLOAD_BYTES, due};
    }
    call_us = dq_wall_us();
    rc = k == 1 ? dq_enqueue(q, ids[0], dq_bench_payload,
                             DQ_BENCH_PAYLOAD_BYTES, due)
                : dq_enqueue_many(q, items, (size_t)k);
    if (rc != DQ_OK) {
        lat_error(lr, dq_errstr(q));
        return -1;
    }
    ack_us = dq_wall_us();
    atomic_extreme(&lr->last_e_us, ack_us, false);
    for (int64_t j = 0; j < k; j++) {
        lr->lags_us[index * lr->per_producer + sent + j] =
            (double)(call_us - tick_ms * 1000);
        dq_log_enqueue(lr->log, ack_us, ids[j], due, name);
    }
    atomic_fetch_add(&lr->enqueued, k);
    return 0;
}

static void *lat_producer(void *arg)
{
    lat_worker *w = arg;
    lat_run *lr = w->lr;
    double each = lr->rate / lr->producers;
    int64_t first_us = lr->start_wall_us +
                       (int64_t)(w->index * 1e6 / lr->rate);
    char name[32], err[256];
    dq_config cfg;
    dq_queue *q = NULL;
    int64_t sent = 0;

    snprintf(name, sizeof name, "p%d", w->index);
    dq_bench_config(lr->b, &cfg, lr->queue, lr->local, name);
    if (dq_open(lr->s, &cfg, &q, err, sizeof err) != DQ_OK) {
        lat_error(lr, err);
        goto out;
    }
    while (sent < lr->per_producer && !atomic_load(&lr->stop)) {
        /* Task i is scheduled at first_us + i / each s; it goes at the
         * first millisecond boundary at or after that, with every other
         * task scheduled by the time the producer is awake. */
        int64_t at_us = first_us + (int64_t)((double)sent * 1e6 / each);
        int64_t tick_ms = (at_us + 999) / 1000, upto, k;

        sleep_until_wall(tick_ms * 1000);
        upto = (int64_t)((double)(dq_wall_us() - first_us) * each / 1e6) + 1;
        if (upto > lr->per_producer)
            upto = lr->per_producer;
        k = upto - sent < 1 ? 1 : upto - sent;
        if (k > GROUP_MAX)
            k = GROUP_MAX;
        if (send_group(lr, q, name, w->index, sent, k, tick_ms) != 0)
            break;
        sent += k;
    }
out:
    dq_close(q);
    atomic_fetch_sub(&lr->producers_left, 1);
    return NULL;
}

static void *lat_consumer(void *arg)
{
    lat_worker *w = arg;
    lat_run *lr = w->lr;
    char name[32], err[256];
    dq_config cfg;
    dq_queue *q = NULL;
    dq_task t;

    memset(&t, 0, sizeof t);
    snprintf(name, sizeof name, "c%d", w->index);
    dq_bench_config(lr->b, &cfg, lr->queue, lr->local, name);
    if (dq_open(lr->s, &cfg, &q, err, sizeof err) != DQ_OK) {
        lat_error(lr, err);
        return NULL;
    }
    while (!atomic_load(&lr->stop)) {
        int rc = dq_claim(q, CLAIM_TIMEOUT_MS, &t);
        if (rc == DQ_EMPTY)
            continue;
        if (rc != DQ_OK) {
            lat_error(lr, dq_errstr(q));
            dq_sleep_us(1000);
            continue;
        }
        int64_t now_us = dq_wall_us();
        dq_log_deliver(lr->log, now_us, t.id, name, t.attempt);
        atomic_extreme(&lr->first_d_us, now_us, true);
        atomic_extreme(&lr->last_d_us, now_us, false);
        if (dq_ack(q, &t) == DQ_OK)
            dq_log_ack(lr->log, dq_wall_us(), t.id, name, t.attempt);
        dq_task_clear(&t);
        atomic_fetch_add(&lr->delivered, 1);
    }
    dq_task_clear(&t);
    dq_close(q);
    return NULL;
}

/* Deletes lr's queue through a throwaway handle (before and after a
 * unit).  Returns 0, or -1 with err when the handle cannot open. */
static int lat_purge(const dq_bench *b, const dq_strategy *s, lat_run *lr,
                     char *err, size_t errlen)
{
    dq_config cfg;
    dq_queue *q = NULL;

    dq_bench_config(b, &cfg, lr->queue, lr->local, "bench-admin");
    if (lr->local == NULL || dq_open(s, &cfg, &q, err, errlen) != DQ_OK)
        return -1;
    if (q->s->purge != NULL)
        dq_purge(q);
    dq_close(q);
    return 0;
}

/* Starts n threads fn on ws[*nw..]; returns false (err set, stop asked)
 * when one cannot start. */
static bool lat_threads(lat_run *lr, lat_worker *ws, int *nw, int n,
                        void *(*fn)(void *), char *err, size_t errlen)
{
    for (int i = 0; i < n; i++, (*nw)++) {
        ws[*nw].lr = lr;
        ws[*nw].index = i;
        if (pthread_create(&ws[*nw].th, NULL, fn, &ws[*nw]) != 0) {
            snprintf(err, errlen, "pthread_create failed");
            atomic_store(&lr->stop, true);
            return false;
        }
        ws[*nw].started = true;
    }
    return true;
}

/* Production, then drain: stop DRAIN_MAX_US after the producers finished,
 * or sooner once there were as many deliveries as enqueued tasks and the
 * queue reports nothing pending (deliveries alone would stop early when a
 * strategy duplicates).  Returns when the producers finished (mono). */
static int64_t lat_drain(const dq_bench *b, const dq_strategy *s,
                         lat_run *lr)
{
    dq_config cfg;
    dq_queue *adm = NULL;
    char e2[256];
    int64_t prod_end = 0;

    dq_bench_config(b, &cfg, lr->queue, lr->local, "bench-admin");
    if (dq_open(s, &cfg, &adm, e2, sizeof e2) != DQ_OK)
        adm = NULL;
    for (;;) {
        dq_sleep_us(5000);
        if (dq_bench_stop())
            break;
        if (prod_end == 0 && atomic_load(&lr->producers_left) == 0)
            prod_end = dq_mono_us();
        if (prod_end == 0)
            continue;
        if (dq_mono_us() - prod_end > DRAIN_MAX_US)
            break;
        if (atomic_load(&lr->delivered) >= atomic_load(&lr->enqueued) &&
            (adm == NULL || adm->s->pending == NULL || dq_pending(adm) == 0))
            break;
    }
    dq_close(adm);
    return prod_end != 0 ? prod_end : dq_mono_us();
}

/* What makes a rate saturated (bench.h), as "sent+p99" into why ("" when
 * it is not); low_p99_ms < 0 at the lowest rate. */
static bool saturation(double offered, double sent, double dps, double p99,
                       double low_p99_ms, uint64_t lost, char *why,
                       size_t len)
{
    size_t off = 0;

    why[0] = '\0';
#define WHY(cond, word)                                                      \
    if (cond)                                                                \
        off += (size_t)snprintf(why + off, len - off, "%s%s",                \
                                off ? "+" : "", word)
    WHY(sent < SAT_SHARE * offered, "sent");
    WHY(dps < SAT_SHARE * offered, "delivered");
    WHY(low_p99_ms >= 0 && p99 > SAT_P99_FACTOR * low_p99_ms &&
            p99 > SAT_P99_FLOOR_MS, "p99");
    WHY(lost > 0, "lost");
#undef WHY
    return off > 0;
}

/* Tasks per second over n events from t0_us to t1_us: n events spread
 * over n intervals of 1 / rate each, the last interval after t1. */
static double per_s(uint64_t n, int64_t t0_us, int64_t t1_us, double rate)
{
    double s = (double)(t1_us - t0_us) / 1e6 + 1.0 / rate;

    return n > 0 && t1_us >= t0_us && s > 0 ? (double)n / s : 0;
}

/* The unit's lateness.csv row and record, from its checked log.  sent
 * per s: enqueued from the first scheduled time to the last enqueue's
 * acknowledgement; delivered per s: deliveries from the first to the last
 * (so a strategy's steady lateness does not count against its rate).
 * Returns 0, or -1 with err. */
static int lat_row(dq_bench *b, const dq_strategy *s, lat_run *lr,
                   const char *log, int64_t rate, int64_t prod_end,
                   int64_t start_mono_us, double low_p99_ms,
                   dq_bench_lat *out, char *err, size_t errlen)
{
    const dq_bench_plan *pl = b->pl;
    size_t noff = (size_t)lr->producers * (size_t)lr->per_producer;
    double prod_s, sent, dps, lag99;
    dq_check c;

    if (dq_check_file(log, &c, err, errlen) != 0)
        return -1;
    prod_s = (double)(prod_end - start_mono_us) / 1e6;
    sent = per_s(c.enqueued, lr->start_wall_us, atomic_load(&lr->last_e_us),
                 (double)rate);
    dps = per_s(c.delivered, atomic_load(&lr->first_d_us),
                atomic_load(&lr->last_d_us), (double)rate);
    dq_median(lr->lags_us, noff); /* sorts */
    lag99 = dq_percentile(lr->lags_us, noff, 99) / 1000.0;
    out->s = s;
    out->offered_per_s = rate;
    out->p99_ms = c.lateness.p99_ms;
    out->saturated = saturation((double)rate, sent, dps, c.lateness.p99_ms,
                                low_p99_ms, c.lost, out->why,
                                sizeof out->why);
    fprintf(b->lateness, "%s,,%d,%d,%" PRId64 ",%.3f,%" PRIu64 ",%.1f,%"
            PRIu64 ",%.1f,%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.3f,%d,%.3f,%s,"
            "%d\n", s->name, pl->lat_producers, pl->lat_consumers, rate,
            prod_s, c.enqueued, sent, c.delivered, dps, c.lost,
            c.duplicates, c.lateness.p50_ms, c.lateness.p99_ms,
            c.lateness.max_ms, out->saturated ? 1 : 0, lag99, out->why,
            out->run);
    fflush(b->lateness);
    return 0;
}

/* Consumers first (connected and waiting), then producers paced to the
 * rate from the next millisecond boundary on, the drain, the join.
 * Returns when the producers finished (mono) and *start_mono_us, or -1
 * with err. */
static int64_t lat_run_threads(lat_run *lr, int nc, int64_t *start_mono_us,
                               char *err, size_t errlen)
{
    lat_worker ws[64];
    int nw = 0;
    int64_t prod_end = -1;

    memset(ws, 0, sizeof ws);
    atomic_store(&lr->producers_left, lr->producers);
    if (lat_threads(lr, ws, &nw, nc, lat_consumer, err, errlen)) {
        dq_sleep_us(50000); /* consumers connected and waiting */
        lr->start_wall_us = (dq_wall_us() / 1000 + 2) * 1000;
        *start_mono_us = dq_mono_us() + (lr->start_wall_us - dq_wall_us());
        if (lat_threads(lr, ws, &nw, lr->producers, lat_producer, err,
                        errlen))
            prod_end = lat_drain(lr->b, lr->s, lr);
    }
    atomic_store(&lr->stop, true);
    for (int i = 0; i < nw; i++)
        if (ws[i].started)
            pthread_join(ws[i].th, NULL);
    return nw < lr->producers + nc ? -1 : prod_end;
}

/* One strategy at one offered rate for ms milliseconds.  Returns 0 with
 * *out, or -1 with err. */
static int lateness_unit(dq_bench *b, const dq_strategy *s, int64_t rate,
                         int64_t ms, double low_p99_ms, dq_bench_lat *out,
                         char *err, size_t errlen)
{
    const dq_bench_plan *pl = b->pl;
    lat_run lr;
    int64_t prod_end, start_mono_us = 0;
    char log[PATH_MAX + 64], e2[256];
    int ret = -1;

    memset(&lr, 0, sizeof lr);
    pthread_mutex_init(&lr.mu, NULL);
    lr.b = b;
    lr.s = s;
    lr.producers = pl->lat_producers;
    lr.rate = (double)rate;
    lr.per_producer = rate * ms / 1000 / lr.producers;
    if (lr.per_producer < 1)
        lr.per_producer = 1;
    dq_bench_queue_name(b, "lat", lr.queue, sizeof lr.queue);
    lr.local = dq_local_new();
    lr.lags_us = calloc((size_t)(lr.producers * lr.per_producer),
                           sizeof *lr.lags_us);
    snprintf(log, sizeof log, "%s/lat-%s-%" PRId64 ".log", b->logs, s->name,
             rate);
    unlink(log);
    if (lr.local == NULL || lr.lags_us == NULL) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if ((lr.log = dq_eventlog_create_flags(log, DQ_LOG_BUFFERED, err,
                                           errlen)) == NULL)
        goto done;
    dq_log_header(lr.log, "strategy", s->name);
    dq_log_header(lr.log, "bench", "lateness");
    if (lat_purge(b, s, &lr, err, errlen) != 0)
        goto done;
    prod_end = lat_run_threads(&lr, pl->lat_consumers, &start_mono_us, err,
                               errlen);
    if (prod_end < 0 || dq_bench_stop()) {
        if (dq_bench_stop())
            snprintf(err, errlen, "interrupted");
        goto done;
    }
    if (dq_log_end(lr.log, dq_wall_us(), "clean") != 0) {
        snprintf(err, errlen, "%s: write: %s", log, strerror(errno));
        goto done;
    }
    dq_eventlog_close(lr.log);
    lr.log = NULL;
    if (atomic_load(&lr.errors) > 0) {
        snprintf(err, errlen, "%d strategy error(s), first: %s",
                 atomic_load(&lr.errors), lr.first_error);
        goto done;
    }
    ret = lat_row(b, s, &lr, log, rate, prod_end, start_mono_us, low_p99_ms,
                  out, err, errlen);
done:
    dq_eventlog_close(lr.log);
    if (!b->o->keep_logs)
        unlink(log);
    lat_purge(b, s, &lr, e2, sizeof e2); /* best effort */
    dq_local_free(lr.local);
    free(lr.lags_us);
    pthread_mutex_destroy(&lr.mu);
    return ret;
}

/* Every rate of the plan for s, until the first saturated one. */
/* One run of s at rate i of the plan, its record kept.  Returns 0, or -1
 * (the unit failed, named on stderr). */
static int lateness_run(dq_bench *b, const dq_strategy *s, size_t i,
                        int run, double low_p99_ms, dq_bench_lat *row)
{
    const dq_bench_plan *pl = b->pl;
    int64_t rate = pl->rates[i];
    char err[512], what[128];
    dq_bench_lat *r;

    memset(row, 0, sizeof *row);
    row->run = run;
    dq_bench_say(b, "lateness: %s at %" PRId64 " tasks/s, run %d", s->name,
                 rate, run);
    snprintf(what, sizeof what, "lateness %s %" PRId64 "/s run %d", s->name,
             rate, run);
    if (lateness_unit(b, s, rate, i == 0 ? pl->lat_low_ms : pl->lat_ms,
                      low_p99_ms, row, err, sizeof err) != 0) {
        if (!dq_bench_stop())
            dq_bench_unit_error(b, what, err);
        return -1;
    }
    if ((r = dq_bench_grow((void **)&b->lats, &b->nlats, sizeof *r)))
        *r = *row;
    return 0;
}

/* Every rate of the plan for s, until the first one that two runs
 * saturate.  A rate is run once, and again when that run saturated: a
 * few ms during which another process held both cores are enough to push
 * one run's p99 past 10 ms, and that is the machine, not the strategy.
 * The lowest rate of a blocking strategy (DQ_G_BLOCKS: the ones the
 * 1 ms target at 200 tasks/s applies to) is run lat_low_runs times, and
 * its p99 is their median, for the same reason. */
static void lateness_strategy(dq_bench *b, const dq_strategy *s)
{
    const dq_bench_plan *pl = b->pl;
    double low_p99_ms = -1, p99s[8];

    for (size_t i = 0; i < pl->nrates && !dq_bench_stop(); i++) {
        int base = i == 0 && (s->flags & DQ_G_BLOCKS) ? pl->lat_low_runs : 1;
        int runs = 0, sat = 0;

        if (base > 7)
            base = 7;
        while (!dq_bench_stop() &&
               (runs < base || (sat == 1 && runs < base + 1))) {
            dq_bench_lat row;

            if (lateness_run(b, s, i, runs + 1, low_p99_ms, &row) != 0)
                return;
            p99s[runs++] = row.p99_ms;
            sat += row.saturated;
        }
        if (i == 0)
            low_p99_ms = dq_median(p99s, (size_t)runs);
        if (sat >= 2)
            return;
    }
}

void dq_bench_part_lateness(dq_bench *b)
{
    for (size_t si = 0; dq_strategies[si] && !dq_bench_stop(); si++)
        if (dq_bench_selected(b, dq_strategies[si]))
            lateness_strategy(b, dq_strategies[si]);
}
