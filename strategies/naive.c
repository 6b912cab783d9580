/* naive.c -- the textbook Redis delay queue, kept faithfully wrong.
 *
 * How it works (what most tutorials show):
 *   keys     dq:{Q}:z  ZSet id -> due ms;  dq:{Q}:p  hash id -> payload
 *   enqueue  MULTI; HSET p id payload; ZADD z due id; EXEC  (1 round trip)
 *   claim    ZRANGEBYSCORE z -inf <now> WITHSCORES LIMIT 0 1   (1 round trip)
 *            nothing due: sleep min(poll_ms, time left), ask again
 *              (blind polling: it does not look at when the head is due)
 *            found one: ZREM z id + HGET p id, pipelined  (1 round trip)
 *            and deliver the task WHATEVER ZREM RETURNED
 *   ack      HDEL p id                                   (1 round trip)
 * Per delivered task: 4 round trips without contention (enqueue, find,
 * remove+fetch, ack), plus one per empty poll.
 * Batched enqueue (enqueue_many): one MULTI; HSET p id pl ...;
 * ZADD z due id ...; EXEC per 1000 tasks (dq_zh_enqueue_many).
 *
 * The bug (claims C01, C13): "find" and "remove" are two commands.  Each is
 * atomic on its own, the pair is not: two consumers can both read the same
 * head id before either removes it, both send ZREM, one gets 1, the other 0,
 * and both process the task.  The textbook code ignores ZREM's reply, and
 * so does this strategy: it counts the lost race (counters.lost_races) but
 * delivers anyway, so the checker sees the duplicate.  The fix is either
 * to trust ZREM's reply (naive-checked, claim C03) or one Lua script (lua).
 * If the winner has already acked (HDEL), the loser's HGET returns nil and
 * the duplicate is delivered with an empty payload.
 * Option gap_us sleeps between find and remove to widen the race window
 * for demonstrations; 0 (default) is the plain textbook code.
 * Option resolution_ms=1000 stores scores in whole seconds, as the
 * textbook's `ZADD z <time() + delay> id` does (zscore.h): a task is then
 * delivered up to 999 ms before its due time (claim C25); the checker
 * counts those against the true due time, and `dqlab run` exits 1.
 *
 * Guarantee: at-most-once in intent (the task leaves Redis when claimed; a
 * consumer that dies after ZREM loses it), but DUPLICATES under
 * concurrency.  Due order for one consumer: the lowest score comes first.
 * Never early (with the default resolution_ms=1): ZRANGEBYSCORE's max is
 * this handle's clock (dq_now_ms), and the bound is inclusive, so the
 * score (= due) <= now at the time of the query <= now at delivery.
 *
 * Failure modes: a lost connection during ZREM+HGET returns DQ_EIO and the
 * task may be gone (removed, not delivered); the next call reconnects.
 * A claim may overrun timeout_ms by one round trip (bounded by the socket
 * timeout) when Redis is slow: a reply is never abandoned half-way, since
 * that could lose a task that the server had already removed.
 *
 * Redis behaviour relied on:
 *   ZRANGEBYSCORE ... WITHSCORES LIMIT, inclusive bounds:
 *     https://redis.io/commands/zrangebyscore/
 *   ZREM returns the number of members removed: https://redis.io/commands/zrem/
 *   MULTI/EXEC runs the queued commands without interleaving:
 *     https://redis.io/docs/interact/transactions/
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rconn.h"
#include "zscore.h"

typedef struct naive_priv {
    redisContext *c;
    int64_t poll_ms;
    int64_t gap_us;
} naive_priv;
DQ_ZH_PRIV_CHECK(naive_priv);

static const dq_optdef naive_options[] = {
    DQ_OPTDEF_INT("poll_ms", "100", 1, 60000,
                  "sleep between empty polls, ms (1..60000)"),
    DQ_OPTDEF_INT("gap_us", "0", 0, 10000000,
                  "sleep between find and remove, us, widens the race "
                  "(0..10000000)"),
    DQ_ZS_OPTDEF_RESOLUTION,
    DQ_OPTDEF_END,
};

static int naive_open(dq_queue *q)
{
    int64_t poll_ms, gap_us;
    naive_priv *p;
    int rc;

    if ((rc = dq_opt_i64(q, "poll_ms", &poll_ms)) != DQ_OK ||
        (rc = dq_opt_i64(q, "gap_us", &gap_us)) != DQ_OK ||
        (rc = dq_zh_priv_open(q, sizeof *p)) != DQ_OK)
        return rc;
    p = q->priv;
    p->poll_ms = poll_ms;
    p->gap_us = gap_us;
    return DQ_OK;
}

static int naive_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    naive_priv *p = q->priv;
    int64_t deadline_us = dq_deadline_us(timeout_ms);
    char id[DQ_ID_MAX];
    int64_t due_ms = 0, removed = 0;
    bool found;
    int rc;

    for (;;) {
        int64_t left_us;

        rc = dq_zh_find_due(q, p->c, dq_now_ms(q), id, &due_ms, &found);
        if (rc != DQ_OK)
            return rc;
        if (found)
            break;
        q->counters.empty_polls++;
        left_us = deadline_us - dq_mono_us();
        if (left_us <= 0)
            return DQ_EMPTY;
        dq_sleep_us(p->poll_ms * 1000 < left_us ? p->poll_ms * 1000 : left_us);
        q->counters.wakeups++;
    }

    dq_sleep_us(p->gap_us); /* the race window, widened on request */

    rc = dq_zh_remove_fetch(q, p->c, id, &removed, &out->payload,
                            &out->payload_len);
    if (rc != DQ_OK)
        return rc;
    /* THE TEXTBOOK BUG, on purpose: removed == 0 means another consumer
     * took this task between our ZRANGEBYSCORE and our ZREM.  Count it, and
     * deliver anyway, as the code in the tutorials does. */
    if (removed == 0)
        q->counters.lost_races++;

    snprintf(out->id, sizeof out->id, "%s", id);
    out->due_ms = due_ms;
    out->attempt = 0;
    return DQ_OK;
}

const dq_strategy dq_strategy_naive = {
    .name = "naive",
    .summary = "ZSet + ZRANGEBYSCORE then ZREM, reply ignored: the textbook "
               "race, DELIVERS DUPLICATES under concurrency (kept on purpose)",
    .flags = DQ_G_AT_MOST_ONCE | DQ_G_NEEDS_REDIS | DQ_G_POLLS |
             DQ_G_DUPLICATES | DQ_G_DUE_ORDER | DQ_G_SURVIVES_PROCESS_EXIT |
             DQ_G_ZSET_LAYOUT,
    .min_redis = NULL,
    .options = naive_options,
    .open = naive_open,
    .enqueue = dq_zs_op_enqueue,
    .claim = naive_claim,
    .ack = dq_zh_op_ack,
    .close = dq_zh_op_close,
    .cancel = dq_zh_op_cancel,
    .reschedule = dq_zs_op_reschedule,
    .pending = dq_zh_op_pending,
    .purge = dq_zh_op_purge,
    .exists = dq_zh_op_exists,
    .doc = "Tasks wait in a sorted set (id -> due ms) with payloads in a hash.  "
        "A consumer polls: ZRANGEBYSCORE z -inf now LIMIT 0 1, and when "
        "something is due, ZREM + HGET (pipelined); when nothing is due it "
        "sleeps poll_ms, blind to when the head falls due.  Per task: "
        "enqueue (MULTI HSET ZADD EXEC), find, remove+fetch, ack (HDEL) = 4 "
        "round trips, plus one per empty poll.  Meant at-most-once, but it "
        "ignores ZREM's reply, so two consumers that read the same head "
        "both deliver it: duplicates under concurrency (kept on purpose, "
        "claims C01 and C13).  Lateness lies anywhere in [0, poll_ms].  "
        "resolution_ms=1000 stores whole-second scores as the tutorials' "
        "time() does, so tasks come up to a second early (claim C25).",
    .enqueue_many = dq_zs_op_enqueue_many,
    .witness = "naive-duplicate",
};
