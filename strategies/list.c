/* list.c -- `list`: Redisson's RDelayedQueue design, at-most-once.
 *
 * How it works: tasks wait in the delay ZSet dq:{Q}:z (id -> due ms) with
 * their payloads in dq:{Q}:p; a mover thread (list_mover.c: one per
 * consumer handle, started by its first claim) moves due tasks into the
 * ready List dq:{Q}:ready with one atomic script and sleeps until the next
 * due time, woken early by a message on dq:{Q}:wake when a producer adds a
 * new earliest task.  Consumers block on the List: no blind polling of the
 * ZSet (claim C16).
 *
 * Redis commands per task:
 *   enqueue: 1 script (HSET p; ZADD z; ZRANGE z 0 0; maybe PUBLISH wake)
 *   move:    part of 1 script per batch of up to move_batch due tasks
 *            (ZRANGEBYSCORE ... LIMIT; RPUSH ready; ZREM z; ZRANGE z 0 0)
 *   claim:   BLPOP ready <timeout> (https://redis.io/commands/blpop/),
 *            then 1 script: HGET p id; HDEL p id.  2 round trips.
 *   ack:     nothing.
 * The ready item is "<due_ms>:<id>", so the task handed out carries its
 * real due time.
 *
 * Guarantee: at-most-once.  BLPOP removes the item, so a consumer that
 * dies after BLPOP loses the task (its payload stays behind in p).  No task
 * is moved twice (the move is one script) and BLPOP hands each item to one
 * client, so concurrent consumers never share a task.  Tasks are handed out
 * no earlier than their due time by the mover's clock; a consumer whose
 * clock is behind the mover's waits for the due time by its own clock, up
 * to its claim timeout; a task still early then goes back (MULTI; HSET p;
 * LPUSH ready; EXEC, counted in putbacks) to the head of ready and claim
 * returns DQ_EMPTY (lm_claim).  If that put-back fails, the task is lost
 * (at-most-once).
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
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dq.h"
#include "list_mover.h"
#include "rconn.h"

/* KEYS: p   ARGV: id.  Returns the payload (nil when gone). */
static const char TAKE_LUA[] =
    "local v = redis.call('HGET', KEYS[1], ARGV[1])\n"
    "if v then redis.call('HDEL', KEYS[1], ARGV[1]) end\n"
    "return v\n";

typedef struct list_state {
    lm_base b; /* first member: the lm_* functions take q->priv */
    dq_script take_s;
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
    int rc = lm_base_open(q, &s->b, "6.0.0", false);
    if (rc != DQ_OK) {
        free(s);
        return rc;
    }
    s->take_s.src = TAKE_LUA;
    q->priv = s;
    return DQ_OK;
}

static void list_close(dq_queue *q)
{
    list_state *s = q->priv;
    if (s == NULL)
        return;
    lm_base_close(q, &s->b);
    free(s);
    q->priv = NULL;
}

/* Takes the payload of id out of p into *out.  DQ_OK, DQ_ENOTFOUND when
 * the payload is gone (purged), or an error. */
static int list_take_payload(dq_queue *q, list_state *s, redisContext *c,
                             const char *id, dq_task *out)
{
    const char *args[2] = {s->b.kp, id};
    int rc;
    redisReply *r = dq_redis_eval(q, c, &s->take_s, &rc, 1, 2, args, NULL);
    if (r == NULL)
        return rc;
    if (r->type == REDIS_REPLY_NIL) {
        freeReplyObject(r);
        return DQ_ENOTFOUND;
    }
    if (r->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "claim: unexpected payload reply");
    }
    out->payload = dq_reply_copy(r, &out->payload_len);
    freeReplyObject(r);
    if (out->payload == NULL)
        return dq_fail(q, DQ_ENOMEM, "claim: out of memory (task lost)");
    return DQ_OK;
}

/* lm_claim's take: the payload leaves p (at-most-once from here on). */
static int list_take(dq_queue *q, const char *item, size_t itemlen,
                     dq_task *out)
{
    list_state *s = q->priv;
    (void)item;
    (void)itemlen;
    int rc = list_take_payload(q, s, s->b.c, out->id, out);
    out->attempt = 0; /* at-most-once: deliveries are not counted */
    return rc;
}

/* lm_claim's undo: MULTI; HSET p id payload; LPUSH ready item; EXEC -- the
 * task is back as it was before the BLPOP, at the head of ready. */
static int list_undo(dq_queue *q, const char *item, size_t itemlen,
                     const dq_task *out)
{
    list_state *s = q->priv;
    const char *hset[4] = {"HSET", s->b.kp, out->id,
                           out->payload ? (const char *)out->payload : ""};
    size_t hset_lens[4] = {4, strlen(s->b.kp), strlen(out->id),
                           out->payload_len};
    const char *lpush[3] = {"LPUSH", s->b.kready, item};
    size_t lpush_lens[3] = {5, strlen(s->b.kready), itemlen};
    dq_redis_argv cmds[2] = {{4, hset, hset_lens}, {3, lpush, lpush_lens}};
    int rc;
    redisReply *r = dq_redis_multi(q, s->b.c, &rc, 2, cmds);
    if (r == NULL)
        return rc;
    freeReplyObject(r);
    return DQ_OK;
}

static const lm_claim_ops list_claim_ops = {list_take, list_undo};

static int list_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    list_state *s = q->priv;
    return lm_claim(q, &s->b, NULL, timeout_ms, out, &list_claim_ops);
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
             DQ_G_SURVIVES_PROCESS_EXIT,
    .min_redis = "6.0.0",
    .options = list_options,
    .open = list_open,
    .enqueue = lm_enqueue,
    .claim = list_claim,
    .ack = list_ack,
    .close = list_close,
    .pending = lm_pending,
    .purge = lm_purge,
    .exists = lm_exists,
    .doc = "Redisson's RDelayedQueue: tasks wait in a sorted set; a mover "
        "thread per consumer handle moves due ones into the ready list "
        "dq:{Q}:ready with one atomic script and sleeps until the next due "
        "time, woken early by a PUBLISH on dq:{Q}:wake when a producer adds "
        "a new earliest task (at most poll_cap_ms without a message).  "
        "Consumers block in BLPOP instead of polling (claim C16).  Per "
        "task: 1 enqueue script, a share of a move script, BLPOP + 1 fetch "
        "script.  At-most-once: BLPOP removes the item, so a consumer that "
        "dies after it loses the task; no duplicates.  A lost wake-up "
        "message delays tasks by up to poll_cap_ms, and with no consumer "
        "running no mover runs.",
};
