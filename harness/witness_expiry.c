/* witness_expiry.c -- the expiry-loss witness (witness.h): a keyspace
 * notification nobody heard, and the task it stood for, stranded.
 *
 * The expiry strategy's timer is a shadow key with a TTL; its task is
 * claimed by whoever hears the `expired` event.  Pub/Sub is fire and
 * forget (https://redis.io/docs/manual/pubsub/): an event published while
 * no consumer is subscribed is gone.  The trial: notify-keyspace-events
 * set to "Ex" by the witness (this is its private server; consumers open
 * with config=0), a subscriber-outage window in the log from the start, a
 * producer-only handle (subscribe=0) enqueues t1 due in EX_DELAY_MS, and
 * no consumer runs.  The observer (a PSUBSCRIBE, witness_cap.c) receives
 * the event when Redis expires the key; right then the witness asks
 * PUBSUB NUMSUB of the channel: 0 subscribers.  Then consumer c0 opens
 * (SUBSCRIBE; the outage window ends) and claims for EX_CLAIM_MS: nothing
 * comes, and HEXISTS shows the payload still in Redis, never to be
 * delivered.  Certain by construction; an attempt fails only when the
 * event does not come within EX_EVENT_WAIT_MS.
 *
 * MONITOR shows neither the deletion nor the event (the active expire
 * cycle is not a client command): the chart's "keyspace events" column is
 * the observer's receipt, and the deletion is placed at it.
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

#define EX_DELAY_MS 100
#define EX_EVENT_WAIT_MS 3000
#define EX_CLAIM_MS 300
#define EX_CHANNEL "__keyevent@0__:expired"

static const char *const ex_prod_opts[] = {"subscribe=0", "config=0"};
static const char *const ex_cons_opts[] = {"config=0"};

/* What the witness itself asked and got (real replies). */
typedef struct ex_seen {
    int64_t begin_us, event_us, numsub_us, sub_us, claim_end_us, hexists_us;
    long long numsub, hexists, expired_before, expired_after;
    int claim_rc;
    int64_t due_ms;
} ex_seen;

/* A reply's integer (or -1); frees it. */
static long long reply_int(redisReply *r)
{
    long long v = -1;

    if (r && r->type == REDIS_REPLY_INTEGER)
        v = r->integer;
    else if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
             r->element[1]->type == REDIS_REPLY_INTEGER)
        v = r->element[1]->integer;   /* PUBSUB NUMSUB: {channel, n} */
    if (r)
        freeReplyObject(r);
    return v;
}

/* INFO stats expired_keys, or -1. */
static long long expired_keys(redisContext *c)
{
    redisReply *r = redisCommand(c, "INFO stats");
    long long v = -1;
    const char *p;

    if (r && r->type == REDIS_REPLY_STRING &&
        (p = strstr(r->str, "expired_keys:")) != NULL)
        v = strtoll(p + 13, NULL, 10);
    if (r)
        freeReplyObject(r);
    return v;
}

typedef struct ex_want {
    char key[160];
    int64_t t_us;
} ex_want;

static bool ex_event_seen(wt_cap *c, void *arg)
{
    ex_want *x = arg;

    for (size_t i = 0; i < c->n; i++)
        if (c->lines[i].event && c->lines[i].argc > 2 &&
            strcmp(c->lines[i].argv[2], x->key) == 0) {
            x->t_us = c->lines[i].t_us;
            return true;
        }
    return false;
}

/* Enqueues t1 with nobody subscribed and waits for its expired event.
 * 1 when it came (s filled), 0 when not, -1 with err. */
static int ex_unheard(wt_run *w, redisContext *wc, ex_seen *s, char *err,
                      size_t errlen)
{
    dq_queue *prod = NULL;
    ex_want x = {"", 0};

    if (dq_wt_open(w, "producer", ex_prod_opts, 2, &prod, err,
        errlen) != DQ_OK)
        return -1;
    s->due_ms = dq_wall_us() / 1000 + EX_DELAY_MS;
    if (dq_enqueue(prod, "t1", "x", 1, s->due_ms) != DQ_OK) {
        snprintf(err, errlen, "expiry-loss: enqueue: %s", dq_errstr(prod));
        dq_close(prod);
        return -1;
    }
    dq_log_enqueue(w->log, dq_wall_us(), "t1", s->due_ms, "producer");
    dq_close(prod);
    snprintf(x.key, sizeof x.key, "dq:{%s}:s:t1", w->queue);
    if (!dq_wt_cap_wait(&w->cap, ex_event_seen, &x, EX_EVENT_WAIT_MS))
        return 0;
    s->event_us = x.t_us;
    s->numsub_us = dq_wall_us();
    s->numsub = reply_int(redisCommand(wc, "PUBSUB NUMSUB %s", EX_CHANNEL));
    s->expired_after = expired_keys(wc);
    return 1;
}

/* c0 subscribes (the outage ends) and claims; then the payload check. */
static int ex_late_subscriber(wt_run *w, redisContext *wc, ex_seen *s,
                              char *err, size_t errlen)
{
    dq_queue *q = NULL;
    dq_task t = {0};
    char arg[48], key[160];

    if (dq_wt_open(w, "c0", ex_cons_opts, 1, &q, err, errlen) != DQ_OK)
        return -1;
    s->sub_us = dq_wall_us();
    snprintf(arg, sizeof arg, "ms=%" PRId64, (s->sub_us - s->begin_us) / 1000);
    dq_log_fault(w->log, s->sub_us, dq_fault_subscriber_outage.name, "end",
                 arg);
    s->claim_rc = dq_claim(q, EX_CLAIM_MS, &t);
    s->claim_end_us = dq_wall_us();
    if (s->claim_rc == DQ_OK) {
        dq_log_deliver(w->log, s->claim_end_us, t.id, "c0", t.attempt);
        dq_task_clear(&t);
    } else if (s->claim_rc != DQ_EMPTY) {
        snprintf(err, errlen, "expiry-loss: c0: %s", dq_errstr(q));
        dq_close(q);
        return -1;
    }
    dq_close(q);
    snprintf(key, sizeof key, "dq:{%s}:p", w->queue);
    s->hexists_us = dq_wall_us();
    s->hexists = reply_int(redisCommand(wc, "HEXISTS %s t1", key));
    snprintf(arg, sizeof arg, "%s:%" PRId64, dq_fault_subscriber_outage.name,
             (s->sub_us - s->begin_us) / 1000);
    dq_log_header(w->log, "fault", arg);
    return 0;
}

static void ex_chart(wt_run *w, const ex_seen *s)
{
    wt_chart *ch = &w->chart;
    const wt_cap *c = &w->cap;
    long enq = dq_wt_find(c, 0, "producer", "EVALSHA", 0, NULL);
    long sub = dq_wt_find(c, 0, "c0", "SUBSCRIBE", 0, NULL);
    char body[600];

    snprintf(ch->title, sizeof ch->title, "expiry-loss: task %s's shadow key "
             "expired while no consumer was subscribed; its event reached "
             "nobody and %s was never delivered (%s)", w->task_id,
             w->task_id, w->strategy);
    dq_wt_chart_entity(ch, "producer", "producer");
    dq_wt_chart_entity(ch, "c0", "c0");
    dq_wt_chart_entity(ch, "witness", "witness");
    dq_wt_chart_entity(ch, "redis", "redis");
    dq_wt_chart_entity(ch, "events", "keyspace events");
    if (enq >= 0 && dq_wt_script_find(c, enq, "SET", 0, NULL) < 0)
        enq = dq_wt_find(c, enq + 1, "producer", "EVALSHA", 0, NULL);
    if (enq < 0)
        enq = dq_wt_find(c, 0, "producer", "EVAL", 0, NULL);
    ch->t0_us = enq >= 0 ? c->lines[enq].t_us : s->begin_us;
    if (enq >= 0) {
        dq_wt_script_label(ch, c, enq, body, sizeof body);
        dq_wt_chart_add(ch, WT_ARC, c->lines[enq].t_us, "producer", "redis",
                        "%s enqueue script, which ran:\n%s",
                        c->lines[enq].argv[0], body);
    }
    dq_wt_chart_add(ch, WT_BOX, s->begin_us, "c0", NULL, "log F: %s begins: "
                    "no consumer subscribed", dq_fault_subscriber_outage.name);
    dq_wt_chart_add(ch, WT_NOTE, s->due_ms * 1000, "redis", NULL, "s:%s's TTL "
                    "runs out (deleted when the expire cycle finds it)",
                    w->task_id);
    dq_wt_chart_add(ch, WT_EVENT, s->event_us, "redis", "events", "expired "
                    "s:%s on %s (the observer's pattern subscription got it)",
                    w->task_id, EX_CHANNEL);
    dq_wt_chart_add(ch, WT_ARC, s->numsub_us, "witness", "redis",
                    "PUBSUB NUMSUB %s", EX_CHANNEL);
    dq_wt_chart_add(ch, WT_REPLY, s->numsub_us, "redis", "witness", "%lld: no "
                    "channel subscriber heard it (reply)", s->numsub);
    if (sub >= 0)
        dq_wt_chart_add(ch, WT_ARC, c->lines[sub].t_us, "c0", "redis",
                        "SUBSCRIBE %s (c0 starts: too late)", EX_CHANNEL);
    dq_wt_chart_add(ch, WT_BOX, s->claim_end_us, "c0", NULL,
                    "claim for %d ms: "
                    "%s", EX_CLAIM_MS, s->claim_rc == DQ_EMPTY
                    ? "nothing (DQ_EMPTY)" : "a task");
    dq_wt_chart_add(ch, WT_ARC, s->hexists_us, "witness", "redis",
                    "HEXISTS p %s",
                    w->task_id);
    dq_wt_chart_add(ch, WT_REPLY, s->hexists_us, "redis", "witness",
                    "%lld: the "
                    "payload is still there; no event will come again (reply)",
                    s->hexists);
}

static void ex_numbers(wt_run *w, const ex_seen *s, const dq_check *chk)
{
    dq_wt_metric(w, "delay_ms", EX_DELAY_MS);
    dq_wt_metric(w, "event_after_due_us", s->event_us - s->due_ms * 1000);
    dq_wt_metric(w, "channel_subscribers_at_event", s->numsub);
    dq_wt_metric(w, "expired_keys", s->expired_after - s->expired_before);
    dq_wt_metric(w, "subscribed_after_event_us", s->sub_us - s->event_us);
    dq_wt_metric(w, "claim_wait_ms", EX_CLAIM_MS);
    dq_wt_metric(w, "delivered", (int64_t)chk->delivered);
    dq_wt_metric(w, "payload_left", s->hexists);
    dq_wt_metric(w, "lost", (int64_t)chk->lost);
    snprintf(w->seen, sizeof w->seen, "s:%s expired %.1f ms after its due "
             "time with %lld channel subscribers; c0 subscribed %.1f ms later "
             "and waited %d ms for nothing; the payload is still in Redis "
             "(HEXISTS %lld)", w->task_id,
             (double)(s->event_us - s->due_ms * 1000) / 1000.0, s->numsub,
             (double)(s->sub_us - s->event_us) / 1000.0, EX_CLAIM_MS,
             s->hexists);
}

static int ex_analyse(wt_run *w, const ex_seen *s, char *err, size_t errlen)
{
    wt_rec *recs = NULL;
    size_t n = 0;
    dq_check chk;

    if (s->numsub != 0 || s->claim_rc != DQ_EMPTY || s->hexists != 1)
        return 0;
    snprintf(w->task_id, sizeof w->task_id, "t1");
    if (dq_check_file(w->logpath, &chk, err, errlen) != 0)
        return -1;
    ex_chart(w, s);
    if (dq_wt_chart_log(w, w->task_id, &recs, &n, err, errlen) != 0)
        return -1;
    free(recs);
    ex_numbers(w, s, &chk);
    return 1;
}

int dq_wt_expiry_loss(wt_run *w, char *err, size_t errlen)
{
    redisContext *wc = NULL;
    redisReply *r;
    ex_seen s;
    int ret = -1, heard = 0;

    memset(&s, 0, sizeof s);
    if (dq_wt_log_begin(w, "thread", ex_cons_opts, 1, err, errlen) != 0 ||
        (wc = dq_wt_connect(w->port, w->queue, "witness", err, errlen)) ==
            NULL)
        goto out;
    r = redisCommand(wc, "CONFIG SET notify-keyspace-events Ex");
    if (r == NULL || r->type == REDIS_REPLY_ERROR) {
        snprintf(err, errlen, "expiry-loss: CONFIG SET: %s",
                 r ? r->str : wc->errstr);
        if (r)
            freeReplyObject(r);
        goto out;
    }
    freeReplyObject(r);
    if (dq_wt_cap_start(&w->cap, w->port, w->queue, true, err, errlen) != 0)
        goto out;
    s.begin_us = dq_wall_us();
    s.expired_before = expired_keys(wc);
    dq_log_fault(w->log, s.begin_us, dq_fault_subscriber_outage.name, "begin",
                 "");
    heard = ex_unheard(w, wc, &s, err, errlen);
    if (heard < 0 || (heard == 1 &&
                      ex_late_subscriber(w, wc, &s, err, errlen) != 0))
        goto out;
    ret = 0;
out:
    if (ret == 0 && (dq_wt_log_finish(w, err, errlen) != 0 ||
                     dq_wt_cap_stop(&w->cap, wc, err, errlen) != 0))
        ret = -1;
    if (ret == 0 && heard == 1)
        ret = dq_signals_caught() ? 130 : ex_analyse(w, &s, err, errlen);
    redisFree(wc);
    return ret;
}
