/* trial_sampler.c -- the latency sampler of a trial (trial_int.h).
 *
 * A thread on a connection of its own (a copy of the admin handle, named
 * dqlab:<queue>:dqlab-sampler) sends PING every DQ_TRIAL_SAMPLER_MS while
 * the trial runs, and keeps two figures that no strategy's own numbers
 * show: how long the server kept every client waiting, and how long a
 * round trip takes when it does not.
 *
 *   redis_stall_ms     the longest time from sending an answered PING
 *                      (PONG) to the answer of the next one: about
 *                      DQ_TRIAL_SAMPLER_MS plus a round trip when the
 *                      server never stalls; at least the length of any
 *                      stall, since the server answered the first after it
 *                      was sent and before the stall began, and the next
 *                      one after the stall ended -- also when this thread
 *                      reads an answer late.  A PING
 *                      refused (BUSY: a script holds the server past
 *                      busy-reply-threshold, or LOADING) or lost (a paused
 *                      or restarting server: the socket times out after
 *                      DQ_TRIAL_SAMPLER_TIMEOUT_MS and the next PING
 *                      reconnects) is no answer, so a stall that returns
 *                      errors quickly counts as much as one that returns
 *                      nothing.
 *   redis_ping_p99_ms  the p99 (nearest rank) of the round trips of the
 *                      answered PINGs: a strategy's own large script (a
 *                      batch claim) delays everyone else's commands
 *                      queued behind it.
 *   redis_pings        PINGs answered; the trial subtracts them from the
 *                      server's command count (they ran between its two
 *                      snapshots).
 * The sampler runs only in trials with Redis and tasks: in idle mode its
 * 100 PINGs a second would be measured as the idle cost of the strategy.
 * Its CPU on the server (100 PINGs a second) is inside redis_cpu_ms.
 *
 * The schedule is fixed (PING k at start + k * DQ_TRIAL_SAMPLER_MS on the
 * monotonic clock); after a slow answer the next PING goes at once and the
 * missed slots are skipped, not sent in a burst.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "trial_int.h"

struct dq_trial_sampler {
    dq_queue q;                /* its bare handle ... */
    redisContext *c;           /* ... and its own connection */
    pthread_t th;
    atomic_bool stop;
    /* Written by the thread only, read after the join. */
    double *rtt_ms;            /* round trips of the answered PINGs */
    size_t n, cap;
    int64_t max_gap_us;        /* longest time between two answers */
    bool oom;                  /* rtt_ms could not grow: figures partial */
};

/* One PING; returns its round trip in us when it was answered PONG, else
 * -1 (refused or lost). */
static int64_t ping_once(dq_trial_sampler *s)
{
    const char *argv[1] = {"PING"};
    int64_t t0 = dq_mono_us();
    int rc;
    redisReply *r = dq_redis_cmd(&s->q, s->c, &rc, 1, argv, NULL);
    bool pong = r != NULL && r->type == REDIS_REPLY_STATUS &&
                strcmp(r->str, "PONG") == 0;

    freeReplyObject(r);
    return pong ? dq_mono_us() - t0 : -1;
}

/* Keeps one answered PING's round trip. */
static void keep(dq_trial_sampler *s, int64_t rtt_us)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        double *v = realloc(s->rtt_ms, cap * sizeof *v);
        if (v == NULL) {
            s->oom = true;
            return;
        }
        s->rtt_ms = v;
        s->cap = cap;
    }
    s->rtt_ms[s->n++] = (double)rtt_us / 1000.0;
}

static void *sampler_main(void *arg)
{
    dq_trial_sampler *s = arg;
    int64_t next = dq_mono_us(), last_sent = 0, now, sent, rtt;

    while (!atomic_load(&s->stop)) {
        now = dq_mono_us();
        if (now < next) {
            dq_sleep_us(next - now);
            continue;
        }
        sent = now;
        rtt = ping_once(s);
        now = dq_mono_us();
        /* From the sending of the last answered PING: the server answered
         * it after that, so the gap holds any stall even when this thread
         * read the answer late (descheduled on a busy machine). */
        if (rtt >= 0) {
            keep(s, rtt);
            if (last_sent > 0 && now - last_sent > s->max_gap_us)
                s->max_gap_us = now - last_sent;
            last_sent = sent;
        }
        next += DQ_TRIAL_SAMPLER_MS * 1000;
        if (next < now)
            next = now;
    }
    return NULL;
}

dq_trial_sampler *dq_trial_sampler_start(const dq_queue *admin, char *err,
                                         size_t errlen)
{
    dq_trial_sampler *s = calloc(1, sizeof *s);

    if (s == NULL) {
        snprintf(err, errlen, "latency sampler: out of memory");
        return NULL;
    }
    s->q = *admin;
    s->q.cfg.queue = s->q.queue;
    s->q.cfg.consumer = "dqlab-sampler";
    s->q.redis_conn = NULL;
    s->q.redis_confirm = NULL;
    s->q.redis_sock_timeout_ms = 0;
    if (dq_redis_connect(&s->q, NULL, DQ_TRIAL_SAMPLER_TIMEOUT_MS, &s->c) !=
        DQ_OK) {
        snprintf(err, errlen, "latency sampler: %s", s->q.err);
        goto fail;
    }
    if (pthread_create(&s->th, NULL, sampler_main, s) != 0) {
        snprintf(err, errlen, "latency sampler: pthread_create: %s",
                 strerror(errno));
        goto fail;
    }
    return s;
fail:
    if (s->c != NULL)
        redisFree(s->c);
    free(s);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int dq_trial_sampler_stop(dq_trial_sampler *s, dq_eventlog *log,
                          int64_t *pongs)
{
    char v[32];
    int e = 0;

    if (s == NULL)
        return 0;
    atomic_store(&s->stop, true);
    pthread_join(s->th, NULL);
    redisFree(s->c);
    if (pongs != NULL)
        *pongs = (int64_t)s->n;
    if (log != NULL && !s->oom) {
        if (s->n > 1)
            qsort(s->rtt_ms, s->n, sizeof *s->rtt_ms, cmp_double);
        snprintf(v, sizeof v, "%zu", s->n);
        e |= dq_log_header(log, "redis_pings", v);
        if (s->n > 0) {
            snprintf(v, sizeof v, "%.3f",
                     dq_percentile(s->rtt_ms, s->n, 99));
            e |= dq_log_header(log, "redis_ping_p99_ms", v);
        }
        if (s->n > 1) { /* a gap needs two answers */
            snprintf(v, sizeof v, "%.3f", (double)s->max_gap_us / 1000.0);
            e |= dq_log_header(log, "redis_stall_ms", v);
        }
    }
    free(s->rtt_ms);
    free(s);
    return e ? -1 : 0;
}
