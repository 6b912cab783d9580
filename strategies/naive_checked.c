/* naive_checked.c -- the textbook find-then-remove claim, with ZREM's reply
 * used as the claim (claim C03).
 *
 * How it works: exactly naive's commands and key layout (dq:{Q}:z ZSet
 * id -> due ms, dq:{Q}:p hash id -> payload), with one difference: the
 * task is delivered only when ZREM returned 1, i.e. when this consumer is
 * the one that removed it.
 *   enqueue  MULTI; HSET p id payload; ZADD z due id; EXEC  (1 round trip)
 *   claim    ZRANGEBYSCORE z -inf <now> WITHSCORES LIMIT 0 1   (1 round trip)
 *            nothing due: sleep min(poll_ms, time left), ask again
 *            found one: ZREM z id + HGET p id, pipelined   (1 round trip)
 *              ZREM = 1: ours, deliver it
 *              ZREM = 0: another consumer removed it between our two
 *                commands: count counters.lost_races, drop the HGET reply,
 *                and look again at once (no sleep: a lost race means tasks
 *                are due right now)
 *   ack      HDEL p id                                     (1 round trip)
 *   cancel / reschedule / pending: the shared ZSet+hash helpers (rconn.h).
 * Per delivered task: 4 round trips without contention (as naive); each
 * lost race wastes 2 more (find + remove), which is the price claim C03
 * names: under N consumers racing for the same head, up to N-1 of them
 * lose every round.
 *
 * Timeout: timeout_ms bounds the waiting for something to become due;
 * timeout_ms = 0 is one look.  A lost race is not an empty look: the claim
 * retries at once while time is left, and even past the deadline for up to
 * LOST_RACE_RETRIES lost races in one call, so that claim(0) under
 * contention does not answer "nothing due" while tasks are due.
 *
 * Guarantee: at-most-once (the task leaves the ZSet at claim; a consumer
 * that dies after ZREM loses it, and its payload stays in p as a
 * leftover until purge).  No duplicates among concurrent consumers: ZREM
 * of one member is atomic and returns 1 to exactly one caller
 * (https://redis.io/commands/zrem/: "the number of members removed").
 * Due order for one consumer: ZRANGEBYSCORE returns the lowest score first,
 * ties in member order.  Never early: the max bound of ZRANGEBYSCORE is this
 * handle's clock (dq_now_ms), inclusive, so due <= now at the query <= now at
 * delivery.  Under contention, order across consumers is only approximate.
 *
 * Failure modes: a lost connection during ZREM+HGET returns DQ_EIO; the
 * task may have been removed without being delivered (lost, at-most-once).
 * A re-enqueue of an id between a winner's claim and ack would have its
 * payload deleted by that ack (ids are unique per queue by contract).
 *
 * Redis behaviour relied on:
 *   ZRANGEBYSCORE ... WITHSCORES LIMIT, inclusive bounds:
 *     https://redis.io/commands/zrangebyscore/
 *   ZREM's integer reply counts removed members: https://redis.io/commands/zrem/
 *   MULTI/EXEC (enqueue, cancel): https://redis.io/docs/interact/transactions/
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rconn.h"

/* Lost races retried past the claim deadline, per claim call. */
#define LOST_RACE_RETRIES 8

typedef struct nc_priv {
    redisContext *c;
    int64_t poll_ms;
    char zkey[128];
    char pkey[128];
} nc_priv;

static const dq_optdef nc_options[] = {
    {"poll_ms", "100", "sleep between empty polls, ms (1..60000)"},
    {NULL, NULL, NULL},
};

static int nc_open(dq_queue *q)
{
    nc_priv *p;
    int rc;

    p = calloc(1, sizeof *p);
    if (p == NULL)
        return dq_fail(q, DQ_ENOMEM, "naive-checked: out of memory");
    if ((rc = dq_opt_int(q, "poll_ms", 1, 60000, &p->poll_ms)) != DQ_OK)
        goto free_priv;
    dq_redis_key(q, DQ_ZH_ZSET, p->zkey, sizeof p->zkey);
    dq_redis_key(q, DQ_ZH_HASH, p->pkey, sizeof p->pkey);
    if ((rc = dq_redis_connect(q, NULL, DQ_SOCK_TIMEOUT_MS, &p->c)) != DQ_OK)
        goto free_priv;
    q->priv = p;
    return DQ_OK;

free_priv:
    free(p);
    return rc;
}

static void nc_close(dq_queue *q)
{
    nc_priv *p = q->priv;

    if (p == NULL)
        return;
    redisFree(p->c);
    free(p);
    q->priv = NULL;
}

static int nc_enqueue(dq_queue *q, const char *id, const void *payload,
                      size_t payload_len, int64_t due_ms)
{
    nc_priv *p = q->priv;

    return dq_zh_enqueue(q, p->c, id, payload, payload_len, due_ms);
}

/* Step 1: the id and due time of the earliest due task, if any.  Returns
 * DQ_OK with *found set, or DQ_E*.  (Same as naive.c's find_due.) */
static int nc_find_due(dq_queue *q, char *id, int64_t *due_ms, bool *found)
{
    nc_priv *p = q->priv;
    char now[32];
    const char *argv[8] = {"ZRANGEBYSCORE", p->zkey, "-inf", now,
                           "WITHSCORES", "LIMIT", "0", "1"};
    redisReply *r;
    int rc = DQ_OK;

    *found = false;
    snprintf(now, sizeof now, "%lld", (long long)dq_now_ms(q));
    r = dq_redis_cmd(q, p->c, &rc, 8, argv, NULL);
    if (r == NULL)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY || (r->elements != 0 && r->elements != 2)) {
        rc = dq_fail(q, DQ_EPROTO, "ZRANGEBYSCORE: unexpected reply");
        goto free_reply;
    }
    if (r->elements == 0)
        goto free_reply;
    if (r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[0]->len == 0 || r->element[0]->len >= DQ_ID_MAX ||
        !dq_reply_score_ms(r->element[1], due_ms)) {
        rc = dq_fail(q, DQ_EPROTO, "ZRANGEBYSCORE: bad member or score");
        goto free_reply;
    }
    memcpy(id, r->element[0]->str, r->element[0]->len);
    id[r->element[0]->len] = '\0';
    *found = true;
free_reply:
    freeReplyObject(r);
    return rc;
}

/* Step 2: ZREM z id + HGET p id in one round trip.  *won is ZREM's verdict;
 * when won, out gets the payload (malloc'd, NUL-terminated for
 * convenience; an absent field gives an empty payload). */
static int nc_take(dq_queue *q, const char *id, bool *won, dq_task *out)
{
    nc_priv *p = q->priv;
    const char *zrem[3] = {"ZREM", p->zkey, id};
    const char *hget[3] = {"HGET", p->pkey, id};
    const dq_redis_argv cmds[2] = {{3, zrem, NULL}, {3, hget, NULL}};
    redisReply *rep[2];
    int64_t removed = 0;
    int rc;

    *won = false;
    if ((rc = dq_redis_pipeline(q, p->c, 2, cmds, rep)) != DQ_OK)
        return rc;
    if ((rc = dq_reply_error(q, rep[0], "ZREM")) != DQ_OK ||
        (rc = dq_reply_error(q, rep[1], "HGET")) != DQ_OK)
        goto free_replies;
    if (!dq_reply_int(rep[0], &removed) ||
        (rep[1]->type != REDIS_REPLY_STRING && rep[1]->type != REDIS_REPLY_NIL)) {
        rc = dq_fail(q, DQ_EPROTO, "ZREM/HGET: unexpected reply");
        goto free_replies;
    }
    if (removed != 1)
        goto free_replies; /* lost the race: not ours, deliver nothing */
    out->payload_len = rep[1]->type == REDIS_REPLY_STRING ? rep[1]->len : 0;
    out->payload = malloc(out->payload_len + 1);
    if (out->payload == NULL) {
        out->payload_len = 0;
        rc = dq_fail(q, DQ_ENOMEM, "claim %s: out of memory (task removed, "
                     "lost)", id);
        goto free_replies;
    }
    if (out->payload_len > 0)
        memcpy(out->payload, rep[1]->str, out->payload_len);
    out->payload[out->payload_len] = '\0';
    *won = true;

free_replies:
    freeReplyObject(rep[0]);
    freeReplyObject(rep[1]);
    return rc;
}

static int nc_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    nc_priv *p = q->priv;
    int64_t deadline_us = dq_mono_us() + timeout_ms * 1000;
    int lost_late = 0; /* lost races after the deadline, this call */
    char id[DQ_ID_MAX];
    int64_t due_ms = 0;
    bool found, won;
    int rc;

    for (;;) {
        int64_t left_us;

        if ((rc = nc_find_due(q, id, &due_ms, &found)) != DQ_OK)
            return rc;
        if (found) {
            if ((rc = nc_take(q, id, &won, out)) != DQ_OK)
                return rc;
            if (won)
                break;
            /* Claim C03's wasted round trips: someone else removed it. */
            q->counters.lost_races++;
            if (dq_mono_us() < deadline_us || ++lost_late <= LOST_RACE_RETRIES)
                continue;
            return DQ_EMPTY;
        }
        q->counters.empty_polls++;
        left_us = deadline_us - dq_mono_us();
        if (left_us <= 0)
            return DQ_EMPTY;
        dq_sleep_us(p->poll_ms * 1000 < left_us ? p->poll_ms * 1000 : left_us);
        q->counters.wakeups++;
    }

    snprintf(out->id, sizeof out->id, "%s", id);
    out->due_ms = due_ms;
    out->attempt = 1;
    return DQ_OK;
}

static int nc_ack(dq_queue *q, const dq_task *t)
{
    nc_priv *p = q->priv;

    return dq_zh_ack(q, p->c, t->id);
}

static int nc_cancel(dq_queue *q, const char *id)
{
    nc_priv *p = q->priv;

    return dq_zh_cancel(q, p->c, id);
}

static int nc_reschedule(dq_queue *q, const char *id, int64_t due_ms)
{
    nc_priv *p = q->priv;

    return dq_zh_reschedule(q, p->c, id, due_ms);
}

static int64_t nc_pending(dq_queue *q)
{
    nc_priv *p = q->priv;

    return dq_zh_pending(q, p->c);
}

static int nc_purge(dq_queue *q)
{
    nc_priv *p = q->priv;

    return dq_redis_purge(q, p->c);
}

static int nc_exists(dq_queue *q)
{
    nc_priv *p = q->priv;

    return dq_redis_exists(q, p->c);
}

const dq_strategy dq_strategy_naive_checked = {
    .name = "naive-checked",
    .summary = "ZRANGEBYSCORE then ZREM, delivered only if ZREM returned 1: "
               "no duplicates, lost races cost round trips",
    .flags = DQ_G_AT_MOST_ONCE | DQ_G_NEEDS_REDIS | DQ_G_POLLS |
             DQ_G_NO_DUP_CONCURRENT | DQ_G_DUE_ORDER |
             DQ_G_SURVIVES_PROCESS_EXIT,
    .min_redis = NULL,
    .options = nc_options,
    .open = nc_open,
    .enqueue = nc_enqueue,
    .claim = nc_claim,
    .ack = nc_ack,
    .close = nc_close,
    .cancel = nc_cancel,
    .reschedule = nc_reschedule,
    .pending = nc_pending,
    .purge = nc_purge,
    .exists = nc_exists,
    .doc = "naive's keys and commands (ZRANGEBYSCORE, then ZREM + HGET "
        "pipelined), but the task is delivered only when ZREM returned 1: "
        "the consumer that removed it owns it.  A lost race (ZREM = 0) is "
        "counted and retried at once.  Per task: 4 round trips like naive, "
        "plus 2 per lost race, so N consumers racing for the head waste up "
        "to N-1 claims per task (claim C03).  At-most-once, no duplicates; "
        "a consumer dying after ZREM loses the task and leaves its payload "
        "behind.  Blind polling: lateness in [0, poll_ms].",
};
