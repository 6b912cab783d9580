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
 * Option resolution_ms=1000: whole-second scores, as naive's (zscore.h):
 * tasks delivered up to 999 ms early (claim C25).
 * Per delivered task: 4 round trips without contention (as naive); each
 * lost race wastes 2 more (find + remove), which is the price claim C03
 * names: under N consumers racing for the same head, up to N-1 of them
 * lose every round.
 * Batched enqueue (enqueue_many): one MULTI; HSET p id pl ...; ZADD z due
 * id ...; EXEC per 1000 tasks (dq_zh_enqueue_many).
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
 * ties in member order.  Never early (at the default resolution_ms=1): the
 * max bound of ZRANGEBYSCORE is this handle's clock (dq_now_ms), inclusive,
 * so due <= now at the query <= now at delivery.  Under contention, order
 * across consumers is only approximate.
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
#include "zscore.h"

/* Lost races retried past the claim deadline, per claim call. */
#define LOST_RACE_RETRIES 8

typedef struct nc_priv {
    redisContext *c;
    int64_t poll_ms;
} nc_priv;
DQ_ZH_PRIV_CHECK(nc_priv);

static const dq_optdef nc_options[] = {
    DQ_OPTDEF_INT("poll_ms", "100", 1, 60000,
                  "sleep between empty polls, ms (1..60000)"),
    DQ_ZS_OPTDEF_RESOLUTION,
    DQ_OPTDEF_END,
};

static int nc_open(dq_queue *q)
{
    int64_t poll_ms;
    int rc;

    if ((rc = dq_opt_i64(q, "poll_ms", &poll_ms)) != DQ_OK ||
        (rc = dq_zh_priv_open(q, sizeof(nc_priv))) != DQ_OK)
        return rc;
    ((nc_priv *)q->priv)->poll_ms = poll_ms;
    return DQ_OK;
}

static int nc_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    nc_priv *p = q->priv;
    int64_t deadline_us = dq_deadline_us(timeout_ms);
    int lost_late = 0; /* lost races after the deadline, this call */
    char id[DQ_ID_MAX];
    int64_t due_ms = 0, removed = 0;
    bool found;
    int rc;

    for (;;) {
        int64_t left_us;

        rc = dq_zh_find_due(q, p->c, dq_now_ms(q), id, &due_ms, &found);
        if (rc != DQ_OK)
            return rc;
        if (found) {
            rc = dq_zh_remove_fetch(q, p->c, id, &removed, &out->payload,
                                    &out->payload_len);
            if (rc != DQ_OK)
                return rc;
            if (removed == 1)
                break; /* ZREM's verdict: ours */
            /* Not ours: deliver nothing. */
            free(out->payload);
            out->payload = NULL;
            out->payload_len = 0;
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

const dq_strategy dq_strategy_naive_checked = {
    .name = "naive-checked",
    .summary = "ZRANGEBYSCORE then ZREM, delivered only if ZREM returned 1: "
               "no duplicates, lost races cost round trips",
    .flags = DQ_G_AT_MOST_ONCE | DQ_G_NEEDS_REDIS | DQ_G_POLLS |
             DQ_G_NO_DUP_CONCURRENT | DQ_G_DUE_ORDER |
             DQ_G_SURVIVES_PROCESS_EXIT |
             DQ_G_ZSET_LAYOUT,
    .min_redis = NULL,
    .options = nc_options,
    .open = nc_open,
    .enqueue = dq_zs_op_enqueue,
    .claim = nc_claim,
    .ack = dq_zh_op_ack,
    .close = dq_zh_op_close,
    .cancel = dq_zh_op_cancel,
    .reschedule = dq_zs_op_reschedule,
    .pending = dq_zh_op_pending,
    .purge = dq_zh_op_purge,
    .exists = dq_zh_op_exists,
    .doc = "naive's keys and commands (ZRANGEBYSCORE, then ZREM + HGET "
        "pipelined), but the task is delivered only when ZREM returned 1: "
        "the consumer that removed it owns it.  A lost race (ZREM = 0) is "
        "counted and retried at once.  Per task: 4 round trips like naive, "
        "plus 2 per lost race, so N consumers racing for the head waste up "
        "to N-1 claims per task (claim C03).  At-most-once, no duplicates; "
        "a consumer dying after ZREM loses the task and leaves its payload "
        "behind.  Blind polling: lateness in [0, poll_ms].  "
        "resolution_ms=1000: whole-second scores, up to a second early "
        "(claim C25).",
    .enqueue_many = dq_zs_op_enqueue_many,
};
