/* witness_naive.c -- the naive-duplicate witness (witness.h): naive's
 * textbook race, caught in the act.
 *
 * naive-duplicate: consumers c0 and c1 (threads, one handle each, naive
 * with poll_ms=1: the textbook poll loop, no widened gap) poll while the
 * producer adds NV_TASKS tasks due together NV_LEAD_MS later.  When both
 * read the same head with ZRANGEBYSCORE before either ZREMs it, both
 * deliver it (naive ignores ZREM's 0).  Whether that happens depends on
 * where the two poll loops are when the tasks fall due, so an attempt may
 * show no duplicate; the seed sets the consumers' start offset and the
 * tasks' due-time jitter, and the next attempt takes the next seed.
 *
 * The chart: the producer's ZADD of the duplicated task, each consumer's
 * last ZRANGEBYSCORE before its ZREM of it, the ZREMs (the first removes
 * it: 1; the second finds nothing: 0, derived from their order), the
 * HGETs and the acks' HDELs, and the event log's D and A records.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "signals.h"
#include "witness_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define NV_TASKS 3
#define NV_LEAD_MS 40      /* enqueue to due */
#define NV_DRAIN_MS 2000   /* longest wait for the deliveries */

/* ---- naive-duplicate ----------------------------------------------------- */

typedef struct nv_consumer {
    wt_run *w;
    dq_queue *q;
    const char *name;
    int64_t start_delay_us;
    int *delivered;        /* shared count, atomic */
    int *stop;             /* atomic flag */
    int rc;
    char err[256];
} nv_consumer;

static void *nv_main(void *arg)
{
    nv_consumer *c = arg;
    dq_task t = {0};

    dq_sleep_us(c->start_delay_us);
    while (!__atomic_load_n(c->stop, __ATOMIC_ACQUIRE)) {
        int rc = dq_claim(c->q, 20, &t);
        if (rc == DQ_EMPTY)
            continue;
        if (rc != DQ_OK) {
            c->rc = rc;
            snprintf(c->err, sizeof c->err, "%s", dq_errstr(c->q));
            break;
        }
        dq_log_deliver(c->w->log, dq_wall_us(), t.id, c->name, t.attempt);
        if (dq_ack(c->q, &t) == DQ_OK)
            dq_log_ack(c->w->log, dq_wall_us(), t.id, c->name, t.attempt);
        __atomic_add_fetch(c->delivered, 1, __ATOMIC_RELEASE);
        dq_task_clear(&t);
    }
    return NULL;
}

/* Draws consumer who's find, remove, fetch and ack of id; `first` says
 * whether its ZREM ran first (reply 1) or second (0). */
static void nv_draw_consumer(wt_run *w, const char *who, long find,
                             long rem, bool first, const char *id)
{
    const wt_cap *c = &w->cap;
    wt_chart *ch = &w->chart;
    const wt_line *f = &c->lines[find], *r = &c->lines[rem];
    long get = dq_wt_find(c, rem, who, "HGET", 2, id);
    long ack = dq_wt_find(c, rem, who, "HDEL", 2, id);
    long other_del = -1;
    char b[40];

    dq_wt_chart_add(ch, WT_ARC, f->t_us, who, "redis",
                    "ZRANGEBYSCORE z -inf %s LIMIT 0 1",
                    f->argc > 3 ? dq_wt_arg(ch, f->argv[3], b, sizeof b)
                                : "now");
    dq_wt_chart_add(ch, WT_REPLY, f->t_us, "redis", who,
                    "[%s] (derived: %s's next command removes it)", id, who);
    dq_wt_chart_add(ch, WT_ARC, r->t_us, who, "redis", "ZREM z %s", id);
    dq_wt_chart_add(ch, WT_REPLY, r->t_us, "redis", who, first
                    ? "1: removed (derived: the first ZREM of %s)"
                    : "0: already gone (derived) -- %s delivers %s anyway",
                    w->strategy, id);
    for (long i = 0; get >= 0 && i < get; i++)
        if (!c->lines[i].script && dq_wt_is(&c->lines[i], "HDEL") &&
            c->lines[i].argc > 2 && strcmp(c->lines[i].argv[2], id) == 0)
            other_del = i;
    if (get >= 0) {
        dq_wt_chart_add(ch, WT_ARC, c->lines[get].t_us, who, "redis",
                        "HGET p %s", id);
        dq_wt_chart_add(ch, WT_REPLY, c->lines[get].t_us, "redis", who,
                        other_del >= 0 ? "nil (derived: the other ack's HDEL "
                                      "ran first; empty payload)"
                                    : "the payload");
    }
    if (ack >= 0)
        dq_wt_chart_add(ch, WT_ARC, c->lines[ack].t_us, who, "redis",
                        "HDEL p %s (ack)", id);
}

/* The id the log shows delivered to two consumers, or NULL. */
static const char *nv_dup_id(const wt_rec *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (r[i].type == 'D' && r[j].type == 'D' &&
                strcmp(r[i].id, r[j].id) == 0 && strcmp(r[i].who, r[j].who))
                return r[i].id;
    return NULL;
}

/* What the analysis found: the two consumers' find and ZREM lines, f the
 * one whose ZREM ran first. */
typedef struct nv_race {
    const char *who[2];
    long find[2], rem[2];
    int f, s;
} nv_race;

/* Finds each consumer's ZREM of w->task_id and its last ZRANGEBYSCORE
 * before it.  0, or -1 with err. */
static int nv_pairs(wt_run *w, nv_race *r, char *err, size_t errlen)
{
    const wt_cap *c = &w->cap;

    r->who[0] = "c0";
    r->who[1] = "c1";
    for (int i = 0; i < 2; i++) {
        r->rem[i] = dq_wt_find(c, 0, r->who[i], "ZREM", 2, w->task_id);
        r->find[i] = r->rem[i] < 0 ? -1 : dq_wt_last(c, r->rem[i], r->who[i],
                                                   "ZRANGEBYSCORE");
        if (r->find[i] < 0) {
            snprintf(err, errlen, "naive-duplicate: %s delivered %s twice "
                     "but the capture has no find/ZREM pair of %s",
                     w->queue, w->task_id, r->who[i]);
            return -1;
        }
    }
    r->f = c->lines[r->rem[0]].t_us <= c->lines[r->rem[1]].t_us ? 0 : 1;
    r->s = 1 - r->f;
    return 0;
}

static void nv_chart(wt_run *w, const nv_race *r)
{
    const wt_cap *c = &w->cap;
    wt_chart *ch = &w->chart;
    long zadd = dq_wt_find(c, 0, "producer", "ZADD", 3, w->task_id);
    char b[40];

    ch->t0_us = zadd >= 0 ? c->lines[zadd].t_us : c->lines[r->find[r->f]].t_us;
    snprintf(ch->title, sizeof ch->title, "naive-duplicate: task %s "
             "delivered to both c0 and c1 (%s, poll_ms=1, queue %s)",
             w->task_id, w->strategy, w->queue);
    dq_wt_chart_entity(ch, "producer", "producer");
    dq_wt_chart_entity(ch, "c0", "c0");
    dq_wt_chart_entity(ch, "c1", "c1");
    dq_wt_chart_entity(ch, "redis", "redis");
    if (zadd >= 0)
        dq_wt_chart_add(ch, WT_ARC, c->lines[zadd].t_us, "producer", "redis",
                        "MULTI, HSET p %s, ZADD z %s %s, EXEC", w->task_id,
                        dq_wt_arg(ch, c->lines[zadd].argv[2], b, sizeof b),
                        w->task_id);
    for (int i = 0; i < 2; i++)
        nv_draw_consumer(w, r->who[i], r->find[i], r->rem[i], i == r->f,
                         w->task_id);
    dq_wt_chart_add(ch, WT_NOTE, c->lines[r->rem[r->s]].t_us + 1, "c0", "c1",
                    "duplicate: %s read %s %.3f ms before %s removed it",
                    r->who[r->s], w->task_id,
                    (double)(c->lines[r->rem[r->f]].t_us -
                          c->lines[r->find[r->s]].t_us) / 1000.0,
                    r->who[r->f]);
}

static void nv_numbers(wt_run *w, const nv_race *r, const wt_rec *recs,
                       size_t n, const dq_check *chk)
{
    const wt_cap *c = &w->cap;
    const wt_rec *e = dq_wt_rec_find(recs, n, 'E', w->task_id, NULL, -1);
    const wt_rec *d0 = dq_wt_rec_find(recs, n, 'D', w->task_id, r->who[r->f],
                                      -1);
    const wt_rec *d1 = dq_wt_rec_find(recs, n, 'D', w->task_id, r->who[r->s],
                                      -1);
    int64_t due_us = e ? e->due_ms * 1000 : 0;
#define T(i) (c->lines[i].t_us)
    dq_wt_metric(w, "poll_ms", 1);
    dq_wt_metric(w, "tasks_per_attempt", NV_TASKS);
    dq_wt_metric(w, "first_find_to_remove_us",
                 T(r->rem[r->f]) - T(r->find[r->f]));
    dq_wt_metric(w, "second_find_to_remove_us",
                 T(r->rem[r->s]) - T(r->find[r->s]));
    dq_wt_metric(w, "second_find_before_first_remove_us",
                 T(r->rem[r->f]) - T(r->find[r->s]));
    dq_wt_metric(w, "first_delivery_after_due_us", d0 ? d0->t_us - due_us : 0);
    dq_wt_metric(w, "second_delivery_after_due_us",
                 d1 ? d1->t_us - due_us : 0);
    dq_wt_metric(w, "duplicates", (int64_t)chk->duplicates);
    snprintf(w->seen, sizeof w->seen, "c0 and c1 both read %s as the head "
             "(ZRANGEBYSCORE) before either removed it: %s read it %.3f ms "
             "before %s's ZREM; %s's own ZREM then removed nothing (0) and "
             "%s delivered %s to both", w->task_id, r->who[r->s],
             (double)(T(r->rem[r->f]) - T(r->find[r->s])) / 1000.0,
             r->who[r->f], r->who[r->s], w->strategy, w->task_id);
#undef T
}

/* 1 when the log shows a task delivered to both consumers (then chart,
 * numbers and task id are filled), 0 when not, -1 with err. */
static int nv_analyse(wt_run *w, char *err, size_t errlen)
{
    wt_rec *recs = NULL;
    size_t n = 0;
    const char *id;
    nv_race r;
    dq_check chk;

    if (dq_wt_log_read(w->logpath, &recs, &n, err, errlen) != 0)
        return -1;
    id = nv_dup_id(recs, n);
    if (id != NULL)
        snprintf(w->task_id, sizeof w->task_id, "%s", id);
    free(recs);
    if (id == NULL)
        return 0;
    if (nv_pairs(w, &r, err, errlen) != 0 ||
        dq_check_file(w->logpath, &chk, err, errlen) != 0)
        return -1;
    nv_chart(w, &r);
    if (dq_wt_chart_log(w, w->task_id, &recs, &n, err, errlen) != 0)
        return -1;
    nv_numbers(w, &r, recs, n, &chk);
    free(recs);
    return 1;
}

/* Enqueues the attempt's tasks, due together (jitter 0-1 ms, seeded). */
static int nv_enqueue(wt_run *w, dq_queue *prod, uint64_t *rng, char *err,
                      size_t errlen)
{
    int64_t due = dq_wall_us() / 1000 + NV_LEAD_MS;

    for (int k = 1; k <= NV_TASKS; k++) {
        char id[16];
        int64_t d = due + (int64_t)(dq_wt_rand(rng) % 2);
        snprintf(id, sizeof id, "t%d", k);
        if (dq_enqueue(prod, id, "x", 1, d) != DQ_OK) {
            snprintf(err, errlen, "naive-duplicate: enqueue: %s",
                     dq_errstr(prod));
            return -1;
        }
        dq_log_enqueue(w->log, dq_wall_us(), id, d, "producer");
    }
    return 0;
}

/* Waits until every task was delivered (and a little longer, for a
 * second delivery in flight) or the drain deadline. */
static void nv_wait(const int *delivered)
{
    int64_t end = dq_mono_us() + (NV_LEAD_MS + NV_DRAIN_MS) * 1000;

    while (dq_mono_us() < end && !dq_signals_caught() &&
           __atomic_load_n(delivered, __ATOMIC_ACQUIRE) < NV_TASKS)
        dq_sleep_us(2000);
    dq_sleep_us(20000);
}

int dq_wt_naive_duplicate(wt_run *w, char *err, size_t errlen)
{
    static const char *const opts[] = {"poll_ms=1"};
    uint64_t rng = w->seed;
    dq_queue *prod = NULL, *q[2] = {NULL, NULL};
    nv_consumer cons[2];
    pthread_t th[2];
    int delivered = 0, stop = 0, nth = 0, ret = -1;
    redisContext *wc = NULL;

    memset(cons, 0, sizeof cons);
    if (dq_wt_log_begin(w, "thread", opts, 1, err, errlen) != 0 ||
        dq_wt_cap_start(&w->cap, w->port, w->queue, false, err, errlen) != 0 ||
        (wc = dq_wt_connect(w->port, w->queue, "witness", err, errlen)) ==
            NULL)
        goto out;
    if (dq_wt_open(w, "producer", opts, 1, &prod, err, errlen) != DQ_OK ||
        dq_wt_open(w, "c0", opts, 1, &q[0], err, errlen) != DQ_OK ||
        dq_wt_open(w, "c1", opts, 1, &q[1], err, errlen) != DQ_OK)
        goto out;
    for (int i = 0; i < 2; i++) {
        cons[i] = (nv_consumer){w, q[i], i ? "c1" : "c0",
                                i ? (int64_t)(dq_wt_rand(&rng) % 1000) : 0,
                                &delivered, &stop, 0, ""};
        if (pthread_create(&th[i], NULL, nv_main, &cons[i]) != 0) {
            snprintf(err, errlen, "naive-duplicate: thread: %s",
                     strerror(errno));
            goto out;
        }
        nth++;
    }
    if (nv_enqueue(w, prod, &rng, err, errlen) != 0)
        goto out;
    nv_wait(&delivered);
    ret = 0;
out:
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < nth && ret == 0; i++)
        if (cons[i].rc != 0) {
            snprintf(err, errlen, "naive-duplicate: %s: %s", cons[i].name,
                     cons[i].err);
            ret = -1;
        }
    dq_close(q[0]);
    dq_close(q[1]);
    dq_close(prod);
    if (ret == 0 && (dq_wt_log_finish(w, err, errlen) != 0 ||
                     dq_wt_cap_stop(&w->cap, wc, err, errlen) != 0))
        ret = -1;
    if (ret == 0)
        ret = dq_signals_caught() ? 130 : nv_analyse(w, err, errlen);
    redisFree(wc);
    return ret;
}
