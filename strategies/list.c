/* list.c -- `list`: Redisson's RDelayedQueue design, at-most-once.
 *
 * How it works: tasks wait in the delay ZSet dq:{Q}:z (id -> due ms) with
 * their payloads in dq:{Q}:p; a mover thread (list_mover.c: one per queue
 * and process, shared by the process's handles, started by the first
 * claim) moves due tasks, payload and all, into the ready List
 * dq:{Q}:ready with one atomic script and sleeps until the next due time,
 * woken early by a message on dq:{Q}:wake when a producer adds a new
 * earliest task.  Consumers block on the List: no blind polling of the
 * ZSet (claim C16).
 *
 * Redis commands per task:
 *   enqueue: part of 1 script (old head: ZRANGE z 0 0; HSET p; ZADD z;
 *            new head; PUBLISH wake when it changed): 1 round trip per
 *            enqueue, or per chunk of up to LM_ENQUEUE_CHUNK with
 *            enqueue_many
 *   move:    part of 1 script per batch of up to move_batch due tasks
 *            (ZRANGEBYSCORE ... LIMIT; HMGET p; RPUSH ready; ZREM z;
 *            HDEL p; ZRANGE z 0 0), one per process per wake-up
 *   claim:   BLPOP ready <timeout> (https://redis.io/commands/blpop/):
 *            1 round trip, since the item holds the whole task
 *   ack:     nothing.
 * The ready item is "<due_ms>:0:<idlen>:<id><payload>" (list_mover.h), so
 * the task handed out carries its real due time and its payload; the id's
 * length keeps it binary-safe.  So a busy queue costs about one round
 * trip per task: the BLPOP, plus a share of an enqueue script (1/N with
 * batches of N) and of a move script (1/the tasks it moved).
 *
 * Guarantee: at-most-once.  BLPOP removes the item, so a consumer that
 * dies after BLPOP loses the task (nothing of it stays behind: the payload
 * left p when it was moved).  A process that dies takes its mover with
 * it; what that mover had moved is in the ready list, in Redis, for the
 * other consumers.  No task is moved twice (the move is one script) and
 * BLPOP hands each item to one client, so concurrent consumers never
 * share a task.  Tasks are handed out no earlier than their due time by
 * the mover's clock; a consumer whose clock is behind the mover's waits
 * for the due time by its own clock, up to its claim timeout; a task
 * still early then goes back (LPUSH ready item, counted in putbacks) to
 * the head of ready and claim returns DQ_EMPTY (dq_lm_claim).  If that
 * put-back fails, the task is lost (at-most-once).
 *
 * Blocking timeouts: Redis 7.0 answers a BLPOP whose timeout ran out only
 * when its event loop next wakes up, up to 1000/hz ms (100 ms) late on an
 * idle server, so the claim keeps its own deadline: BLPOP goes through
 * dq_redis_block (rconn.h), which asks the server for a little less than
 * the time left and, if no reply has come by the deadline, wakes the
 * server with a PING on the same connection (one more command per claim
 * that times out while nothing else talks to Redis).  The timeout sent is
 * clamped to [DQ_BLOCK_MIN_MS, DQ_BLOCK_MAX_MS] (a BLPOP timeout of 0
 * blocks forever); claim(0), and a rest shorter than
 * DQ_BLOCK_SHORTEST_MS, use one plain LPOP and then sleep.  The socket
 * timeout (DQ_SOCK_TIMEOUT_MS) exceeds the longest BLPOP.
 *
 * Options: poll_cap_ms (longest mover sleep without a wake-up, default
 * 1000), move_batch (tasks per move script, default 100).
 */
#include <stdlib.h>
#include <string.h>

#include "dq.h"
#include "list_mover.h"
#include "rconn.h"

typedef struct list_state {
    dq_lm_base b; /* first member: the dq_lm_* functions take q->priv */
} list_state;

static const dq_optdef list_options[] = {
    DQ_OPTDEF_INT("poll_cap_ms", "1000", 1, 3600000,
                  "longest mover sleep without a wake-up message, ms "
                  "(1..3600000)"),
    DQ_OPTDEF_INT("move_batch", "100", 1, 100000,
                  "most tasks the mover moves per script call (1..100000)"),
    DQ_OPTDEF_END,
};

static int list_open(dq_queue *q)
{
    list_state *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return dq_fail(q, DQ_ENOMEM, "list: out of memory");
    int rc = dq_lm_base_open(q, &s->b, "6.0.0", false);
    if (rc != DQ_OK) {
        free(s);
        return rc;
    }
    q->priv = s;
    return DQ_OK;
}

static void list_close(dq_queue *q)
{
    list_state *s = q->priv;
    if (s == NULL)
        return;
    dq_lm_base_close(q, &s->b);
    free(s);
    q->priv = NULL;
}

/* dq_lm_claim's take: BLPOP (or LPOP) of an item that holds the whole task,
 * payload included.  At-most-once from here on. */
static int list_take(dq_queue *q, int64_t deadline_us, dq_task *out,
                     redisReply **reply, const char **item, size_t *itemlen)
{
    list_state *s = q->priv;
    int rc = dq_lm_pop_item(q, &s->b, NULL, deadline_us, out, reply, item,
                         itemlen);
    out->attempt = 0; /* at-most-once: deliveries are not counted */
    return rc;
}

/* dq_lm_claim's undo: LPUSH ready item -- the task is back as it was before
 * the BLPOP, at the head of ready. */
static int list_undo(dq_queue *q, const char *item, size_t itemlen,
                     const dq_task *out)
{
    list_state *s = q->priv;
    (void)out;
    const char *lpush[3] = {"LPUSH", s->b.kready, item};
    size_t lens[3] = {5, strlen(s->b.kready), itemlen};
    int rc;
    redisReply *r = dq_redis_cmd(q, s->b.c, &rc, 3, lpush, lens);
    if (r == NULL)
        return rc;
    freeReplyObject(r);
    return DQ_OK;
}

static const dq_lm_claim_ops list_claim_ops = {list_take, list_undo};

static int list_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    list_state *s = q->priv;
    return dq_lm_claim(q, &s->b, timeout_ms, out, &list_claim_ops);
}

static int list_ack(dq_queue *q, const dq_task *t)
{
    (void)q;
    (void)t;
    return DQ_OK; /* the task left Redis when it was claimed */
}

const dq_strategy dq_strategy_list = {
    .name = "list",
    .summary = "Redisson RDelayedQueue: ZSet + mover script + ready List "
               "(BLPOP) + Pub/Sub wake-up; at-most-once",
    .flags = DQ_G_AT_MOST_ONCE | DQ_G_NEEDS_REDIS | DQ_G_BLOCKS |
             DQ_G_NO_DUP_CONCURRENT | DQ_G_DUE_ORDER |
             DQ_G_SURVIVES_PROCESS_EXIT |
             DQ_G_ZSET_LAYOUT,
    .min_redis = "6.0.0",
    .options = list_options,
    .open = list_open,
    .enqueue = dq_lm_enqueue,
    .claim = list_claim,
    .ack = list_ack,
    .close = list_close,
    .pending = dq_lm_pending,
    .purge = dq_lm_purge,
    .exists = dq_lm_exists,
    .enqueue_many = dq_lm_enqueue_many,
    .doc = "Redisson's RDelayedQueue: tasks wait in a sorted set; one mover "
        "thread per queue and process moves due ones, payload included, "
        "into the ready list dq:{Q}:ready with one atomic script and sleeps "
        "until the next due time, woken early by a PUBLISH on dq:{Q}:wake "
        "when a producer adds a new earliest task (at most poll_cap_ms "
        "without a message).  Consumers block in BLPOP instead of polling "
        "(claim C16).  Per task: a share of an enqueue script (one per "
        "batch), a share of a move script, 1 BLPOP: one round trip per "
        "claim.  At-most-once: BLPOP removes the item, so a consumer that "
        "dies after it loses the task; no duplicates.  A lost wake-up "
        "message delays tasks by up to poll_cap_ms, and with no consumer "
        "running no mover runs.",
    .bench_one_rtt_share = 0.35,
};
