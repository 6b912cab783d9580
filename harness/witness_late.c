/* witness_late.c -- the lua-late-head witness (witness.h): a task enqueued
 * due before the head a sleeping lua consumer saw waits until it wakes.
 *
 * lua's claim script returns, when nothing is due, the due time of the
 * ZSet's head, and the consumer sleeps min(head - now, poll_ms): nothing
 * wakes it earlier (lua.c).  The trial, with poll_ms=LH_POLL_MS: the
 * producer adds t1 due in LH_HEAD_MS; consumer c0 (a thread) claims, its
 * script finds nothing due and c0 goes to sleep for poll_ms; the moment
 * the capture shows that script, the producer adds t2 due in LH_NEW_MS.
 * t2 is due long before c0 wakes, and is delivered only then, about
 * poll_ms - LH_NEW_MS late; t1, the head c0 did see, comes on time.
 * Certain by construction; an attempt fails only if the machine stalls so
 * long that c0 had woken before t2 was due.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "signals.h"
#include "witness_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define LH_POLL_MS 200
#define LH_HEAD_MS 300
#define LH_NEW_MS 20
#define LH_CLAIM_MS 2000

static const char *const lh_opts[] = {"poll_ms=200"};

typedef struct lh_consumer {
    wt_run *w;
    dq_queue *q;
    int rc;
    char err[256];
} lh_consumer;

/* c0: two claims (t2, then t1), each logged and acked. */
static void *lh_main(void *arg)
{
    lh_consumer *c = arg;
    dq_task t = {0};

    for (int k = 0; k < 2 && !dq_signals_caught(); k++) {
        int rc = dq_claim(c->q, LH_CLAIM_MS, &t);
        if (rc == DQ_EMPTY)
            break;
        if (rc != DQ_OK) {
            c->rc = rc;
            snprintf(c->err, sizeof c->err, "%s", dq_errstr(c->q));
            break;
        }
        dq_log_deliver(c->w->log, dq_wall_us(), t.id, "c0", t.attempt);
        if (dq_ack(c->q, &t) == DQ_OK)
            dq_log_ack(c->w->log, dq_wall_us(), t.id, "c0", t.attempt);
        dq_task_clear(&t);
    }
    return NULL;
}

/* True once c0 ran a claim script that found nothing due (it ran ZRANGE
 * for the head) after the producer's ZADD of t1. */
static bool lh_asleep(wt_cap *c, void *arg)
{
    long *sleep_line = arg;
    char who[WT_WHO_MAX];
    bool after_zadd = false;

    for (long i = 0; i < (long)c->n; i++) {
        wt_line *l = &c->lines[i];
        if (l->script)
            continue;
        dq_wt_cap_who(c, l->addr, who, sizeof who);
        if (strcmp(who, "producer") == 0 && dq_wt_is(l, "ZADD"))
            after_zadd = true;
        else if (after_zadd && strcmp(who, "c0") == 0 &&
                 dq_wt_is(l, "EVALSHA") &&
                 dq_wt_script_find(c, i, "ZRANGE", 0, NULL) >= 0) {
            *sleep_line = i;
            return true;
        }
    }
    return false;
}

static int lh_enqueue(wt_run *w, dq_queue *prod, const char *id,
                      int64_t delay_ms, char *err, size_t errlen)
{
    int64_t due = dq_wall_us() / 1000 + delay_ms;

    if (dq_enqueue(prod, id, "x", 1, due) != DQ_OK) {
        snprintf(err, errlen, "lua-late-head: enqueue %s: %s", id,
                 dq_errstr(prod));
        return -1;
    }
    return dq_log_enqueue(w->log, dq_wall_us(), id, due, "producer") ? -1 : 0;
}

/* The c0 claim scripts of the chart: the one c0 went to sleep after, the
 * one that woke it and took t2. */
typedef struct lh_lines {
    long zadd1, zadd2, sleep, wake;
} lh_lines;

/* Draws every claim script c0 ran after t1's ZADD, with its reply. */
static void lh_draw_scripts(wt_run *w, const lh_lines *L, int64_t head_ms)
{
    const wt_cap *c = &w->cap;
    wt_chart *ch = &w->chart;
    char body[800], b[40];

    for (long i = L->zadd1 + 1; i < (long)c->n; i++) {
        const wt_line *l = &c->lines[i];
        long got = dq_wt_script_find(c, i, "HMGET", 0, NULL);
        long head = dq_wt_script_find(c, i, "ZRANGE", 0, NULL);
        long find = dq_wt_script_find(c, i, "ZRANGEBYSCORE", 0, NULL);
        if (l->script || strcmp(l->who, "c0") || !dq_wt_is(l, "EVALSHA") ||
            (got < 0 && head < 0))
            continue;
        dq_wt_script_label(ch, c, i, body, sizeof body);
        dq_wt_chart_add(ch, WT_ARC, l->t_us, "c0", "redis",
                        "EVALSHA claim script, which ran:\n%s", body);
        if (got >= 0)
            dq_wt_chart_add(ch, WT_REPLY, l->t_us, "redis", "c0",
                            "%s (derived: "
                            "the log's D)", c->lines[got].argv[2]);
        else {
            int64_t now = find >= 0 && c->lines[find].argc > 3
                              ? strtoll(c->lines[find].argv[3], NULL, 10) : 0;
            int64_t nap = head_ms - now < LH_POLL_MS ? head_ms - now
                                                     : LH_POLL_MS;
            snprintf(b, sizeof b, "%" PRId64, head_ms);
            dq_wt_chart_add(ch, WT_REPLY, l->t_us, "redis", "c0",
                            "nothing due; head t1 at %s (derived): c0 "
                            "sleeps min(head - now, poll_ms) = %" PRId64
                            " ms", dq_wt_arg(ch, b, b, sizeof b), nap);
        }
    }
}

static void lh_chart(wt_run *w, const lh_lines *L, const wt_rec *e1,
                     const wt_rec *e2, const wt_rec *d2)
{
    const wt_cap *c = &w->cap;
    wt_chart *ch = &w->chart;
    char b[40];

    snprintf(ch->title, sizeof ch->title, "lua-late-head: task %s, due "
             "before the head t1 a sleeping consumer saw, waits until it "
             "wakes (%s, poll_ms=%d)", w->task_id, w->strategy, LH_POLL_MS);
    dq_wt_chart_entity(ch, "producer", "producer");
    dq_wt_chart_entity(ch, "c0", "c0");
    dq_wt_chart_entity(ch, "redis", "redis");
    dq_wt_chart_add(ch, WT_ARC, c->lines[L->zadd1].t_us, "producer", "redis",
                    "MULTI, HSET p t1, ZADD z %s t1, EXEC",
                    dq_wt_arg(ch, c->lines[L->zadd1].argv[2], b, sizeof b));
    dq_wt_chart_add(ch, WT_ARC, c->lines[L->zadd2].t_us, "producer", "redis",
                    "MULTI, HSET p t2, ZADD z %s t2, EXEC: a new head",
                    dq_wt_arg(ch, c->lines[L->zadd2].argv[2], b, sizeof b));
    lh_draw_scripts(w, L, e1->due_ms);
    dq_wt_chart_add(ch, WT_NOTE, e2->due_ms * 1000, "c0", "redis",
                    "t2 is due; "
                    "c0 sleeps on: nothing tells it");
    dq_wt_chart_add(ch, WT_NOTE, d2->t_us + 1, "c0", "redis",
                    "t2 %.1f ms late "
                    "(poll_ms %d - delay %d - %.1f ms from c0's script to the "
                    "enqueue = %.1f ms)",
                    (double)(d2->t_us - e2->due_ms * 1000) / 1000.0,
                    LH_POLL_MS, LH_NEW_MS,
                    (double)(c->lines[L->zadd2].t_us -
                          c->lines[L->sleep].t_us) / 1000.0,
                    LH_POLL_MS - LH_NEW_MS -
                     (double)(c->lines[L->zadd2].t_us -
                              c->lines[L->sleep].t_us) / 1000.0);
}

/* The first claim script of c0 after line from (one that ran a script). */
static long lh_next_script(const wt_cap *c, long from)
{
    for (long i = from + 1; i < (long)c->n; i++)
        if (!c->lines[i].script && strcmp(c->lines[i].who, "c0") == 0 &&
            dq_wt_is(&c->lines[i], "EVALSHA") &&
            dq_wt_script_find(c, i, NULL, 0, NULL) >= 0)
            return i;
    return -1;
}

static void lh_numbers(wt_run *w, const lh_lines *L, const wt_rec *e1,
                       const wt_rec *e2, const wt_rec *d1, const wt_rec *d2)
{
    const wt_cap *c = &w->cap;
    int64_t after = c->lines[L->zadd2].t_us - c->lines[L->sleep].t_us;
    int64_t late = d2->t_us - e2->due_ms * 1000;

    dq_wt_metric(w, "poll_ms", LH_POLL_MS);
    dq_wt_metric(w, "head_delay_ms", LH_HEAD_MS);
    dq_wt_metric(w, "new_delay_ms", LH_NEW_MS);
    dq_wt_metric(w, "enqueue_after_sleep_us", after);
    dq_wt_metric(w, "sleep_us",
                 c->lines[L->wake].t_us - c->lines[L->sleep].t_us);
    dq_wt_metric(w, "new_lateness_us", late);
    dq_wt_metric(w, "bound_us", (LH_POLL_MS - LH_NEW_MS) * 1000 - after);
    dq_wt_metric(w, "head_lateness_us",
                 d1 ? d1->t_us - e1->due_ms * 1000 : -1);
    snprintf(w->seen, sizeof w->seen, "c0 went to sleep for poll_ms=%d ms "
             "(head t1 due in %d ms); t2, added %.1f ms later due in %d ms, "
             "was delivered %.1f ms late, when c0 woke %.1f ms after it fell "
             "asleep; t1 came %.1f ms late", LH_POLL_MS, LH_HEAD_MS,
             (double)after / 1000.0, LH_NEW_MS, (double)late / 1000.0,
             (double)(c->lines[L->wake].t_us - c->lines[L->sleep].t_us) /
                 1000.0,
             d1 ? (double)(d1->t_us - e1->due_ms * 1000) / 1000.0 : -1.0);
}

/* 1 when c0's first script after t2's enqueue took t2 after its due time,
 * with no look at Redis in between. */
static int lh_analyse(wt_run *w, char *err, size_t errlen)
{
    const wt_cap *c = &w->cap;
    wt_rec *recs = NULL;
    size_t n = 0;
    lh_lines L;
    const wt_rec *e1, *e2, *d1, *d2;
    int ret = 0;

    L.zadd1 = dq_wt_find(c, 0, "producer", "ZADD", 3, "t1");
    L.zadd2 = dq_wt_find(c, 0, "producer", "ZADD", 3, "t2");
    if (L.zadd1 < 0 || L.zadd2 < 0)
        return 0;
    L.sleep = dq_wt_last(c, L.zadd2, "c0", "EVALSHA");
    L.wake = lh_next_script(c, L.zadd2);
    if (L.sleep < 0 || L.wake < 0 ||
        dq_wt_script_find(c, L.sleep, "ZRANGE", 0, NULL) < 0 ||
        dq_wt_script_find(c, L.wake, "HMGET", 2, "t2") < 0)
        return 0;
    snprintf(w->task_id, sizeof w->task_id, "t2");
    w->chart.t0_us = c->lines[L.zadd1].t_us;
    if (dq_wt_chart_log(w, "t2", &recs, &n, err, errlen) != 0)
        return -1;
    free(recs);
    if (dq_wt_chart_log(w, "t1", &recs, &n, err, errlen) != 0)
        return -1;
    e1 = dq_wt_rec_find(recs, n, 'E', "t1", NULL, -1);
    e2 = dq_wt_rec_find(recs, n, 'E', "t2", NULL, -1);
    d1 = dq_wt_rec_find(recs, n, 'D', "t1", "c0", -1);
    d2 = dq_wt_rec_find(recs, n, 'D', "t2", "c0", -1);
    if (e1 && e2 && d2 && e2->due_ms * 1000 < c->lines[L.wake].t_us) {
        lh_chart(w, &L, e1, e2, d2);
        lh_numbers(w, &L, e1, e2, d1, d2);
        ret = 1;
    }
    free(recs);
    return ret;
}

int dq_wt_lua_late_head(wt_run *w, char *err, size_t errlen)
{
    dq_queue *prod = NULL;
    lh_consumer cons = {w, NULL, 0, ""};
    redisContext *wc = NULL;
    pthread_t th;
    bool started = false;
    long sleep_line = -1;
    int ret = -1;

    if (dq_wt_log_begin(w, "thread", lh_opts, 1, err, errlen) != 0 ||
        dq_wt_cap_start(&w->cap, w->port, w->queue, false, err, errlen) != 0 ||
        (wc = dq_wt_connect(w->port, w->queue, "witness", err, errlen)) ==
            NULL ||
        dq_wt_open(w, "producer", lh_opts, 1, &prod, err, errlen) != DQ_OK ||
        dq_wt_open(w, "c0", lh_opts, 1, &cons.q, err, errlen) != DQ_OK ||
        lh_enqueue(w, prod, "t1", LH_HEAD_MS, err, errlen) != 0)
        goto out;
    if (pthread_create(&th, NULL, lh_main, &cons) != 0) {
        snprintf(err, errlen, "lua-late-head: thread: %s", strerror(errno));
        goto out;
    }
    started = true;
    if (dq_wt_cap_wait(&w->cap, lh_asleep, &sleep_line, LH_CLAIM_MS) &&
        lh_enqueue(w, prod, "t2", LH_NEW_MS, err, errlen) != 0)
        goto out;
    ret = 0;
out:
    if (started)
        pthread_join(th, NULL);
    if (ret == 0 && cons.rc != 0) {
        snprintf(err, errlen, "lua-late-head: c0: %s", cons.err);
        ret = -1;
    }
    dq_close(cons.q);
    dq_close(prod);
    if (ret == 0 && (dq_wt_log_finish(w, err, errlen) != 0 ||
                     dq_wt_cap_stop(&w->cap, wc, err, errlen) != 0))
        ret = -1;
    if (ret == 0)
        ret = dq_signals_caught() ? 130 : lh_analyse(w, err, errlen);
    redisFree(wc);
    return ret;
}
