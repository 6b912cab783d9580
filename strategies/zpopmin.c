/* zpopmin.c -- claim by ZPOPMIN, putting back whatever is not yet due.
 *
 * How it works.  Same key layout as naive and lua, so tooling sees one
 * shape:  dq:{Q}:z is a ZSet (member = task id, score = due time in ms
 * since the epoch) and dq:{Q}:p a hash (task id -> payload bytes).
 *
 *   enqueue  MULTI; HSET p id payload; ZADD z due id; EXEC   (1 round trip,
 *            dq_zh_enqueue: a claimer never pops an id without payload)
 *   claim    ZPOPMIN z                              (1 round trip)
 *            - head due:      HGET p id ; HDEL p id (pipelined: 1 round trip)
 *            - head not due:  ZADD z due id (the put-back, counted in
 *              counters.putbacks), then sleep until about the head's due
 *              time, at most poll_ms and never past the claim timeout
 *            - set empty:     sleep poll_ms, or with bzpopmin=1 block in
 *              BZPOPMIN z <timeout> (clamped by dq_block_timeout, so a wait
 *              below 1 ms never reaches the server as 0 = block forever)
 *   ack      nothing (the task left Redis at claim)
 *   cancel   MULTI; ZREM z id; HDEL p id; EXEC       (dq_zh_cancel)
 *   reschedule  MULTI; ZSCORE z id; ZADD z XX due id; EXEC (dq_zh_reschedule)
 *   pending  ZCARD z                                (dq_zh_pending)
 *
 * Per delivered task, without contention: ZPOPMIN, HGET+HDEL = 2 round
 * trips, 3 commands.  Every early pop costs one extra ZADD.
 *
 * Guarantee: at-most-once.  ZPOPMIN is atomic (https://redis.io/commands/
 * zpopmin/: "Removes and returns up to count members with the lowest scores
 * in the sorted set"), so two consumers never pop the same member: no
 * duplicates among concurrent consumers, without faults.  With one
 * consumer, tasks come out in due order (ties by member, as ZSets order
 * equal scores lexicographically).  Nothing is delivered before its due time
 * by this handle's clock (dq_now_ms): an early pop is put back.
 *
 * Failure modes and weaknesses (claim C07 -- "ZPOPMIN pops atomically, so
 * it is a simple correct claim" -- holds only for the pop itself):
 *   - ZPOPMIN cannot filter by score: it takes the head whether due or not.
 *     Between the pop and the put-back the head is invisible to every other
 *     consumer; a second consumer then pops the next task instead (which
 *     may also be not due, and gets put back too).  So with several
 *     consumers tasks can be delayed and reordered, and each early pop is a
 *     wasted write (putbacks counter) -- under a backlog of not-yet-due
 *     tasks, consumers spin pop/put-back once per poll interval each.
 *   - A consumer that dies (or loses its connection) between the pop and
 *     the put-back loses a task that was not even due; one that dies between
 *     the pop and the end of processing loses the task it took.  Nothing
 *     brings it back: at-most-once (claim C12).
 *   - The payload is read after the pop, in a second round trip: a consumer
 *     dying in between leaves the payload behind in p (a leftover, no task).
 *   - cancel of a task that is popped-and-about-to-be-put-back deletes its
 *     payload; the put-back then re-adds a bare id, which a later claim
 *     finds without payload and drops (it was cancelled).  A reschedule in
 *     that window answers DQ_ENOTFOUND and the put-back keeps the old due.
 *   - bzpopmin=1: BZPOPMIN wakes when any task is added, due or not, so an
 *     idle consumer still pops a not-due task and puts it back; blocking
 *     only replaces the sleep while the set is empty.  The socket timeout is
 *     DQ_SOCK_TIMEOUT_MS, longer than any BZPOPMIN we send (at most
 *     DQ_BLOCK_MAX_MS; a longer claim timeout blocks several times).
 *
 * Redis behaviour relied on: ZPOPMIN (5.0+) and BZPOPMIN (5.0+; a
 * fractional timeout in seconds since 6.0, https://redis.io/commands/
 * bzpopmin/) return member and score; a double score holds an integer
 * millisecond timestamp exactly (< 2^53); commands pipelined on one
 * connection run in order (https://redis.io/docs/manual/pipelining/).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dq.h"
#include "rconn.h"

typedef struct zp_priv {
    redisContext *c;   /* rconn's helpers reconnect it after an error */
    char zkey[128];    /* dq:{Q}:z */
    int64_t poll_ms;
    int bzpopmin;      /* 0 or 1 */
} zp_priv;

static const dq_optdef zp_options[] = {
    DQ_OPTDEF_INT("poll_ms", "100", 1, 60000,
                  "sleep when the set is empty, and the longest wait for a "
                  "not-yet-due head, in ms (1..60000)"),
    DQ_OPTDEF_INT("bzpopmin", "0", 0, 1,
                  "1: block in BZPOPMIN while the set is empty instead of "
                  "sleeping poll_ms (needs Redis 6.0)"),
    DQ_OPTDEF_END,
};

/* ---- Helpers ------------------------------------------------------------ */

/* Milliseconds left until the monotonic deadline (may be <= 0). */
static int64_t zp_left_ms(int64_t deadline_us)
{
    int64_t left = deadline_us - dq_mono_us();
    return left <= 0 ? 0 : (left + 999) / 1000;
}

/* ---- Operations ---------------------------------------------------------- */

static int zp_open(dq_queue *q)
{
    zp_priv *p;
    int64_t v;
    int rc;

    p = calloc(1, sizeof *p);
    if (p == NULL)
        return dq_fail(q, DQ_ENOMEM, "zpopmin: out of memory");
    if ((rc = dq_opt_i64(q, "poll_ms", &p->poll_ms)) != DQ_OK)
        goto free_p;
    if ((rc = dq_opt_i64(q, "bzpopmin", &v)) != DQ_OK)
        goto free_p;
    p->bzpopmin = (int)v;
    dq_redis_key(q, DQ_ZH_ZSET, p->zkey, sizeof p->zkey);
    rc = dq_redis_connect(q, p->bzpopmin ? "6.0.0" : "5.0.0",
                          DQ_SOCK_TIMEOUT_MS, &p->c);
    if (rc != DQ_OK)
        goto free_p;
    q->priv = p;
    return DQ_OK;

free_p:
    free(p);
    return rc;
}

static void zp_close(dq_queue *q)
{
    zp_priv *p = q->priv;

    if (p == NULL)
        return;
    if (p->c != NULL)
        redisFree(p->c);
    free(p);
    q->priv = NULL;
}

static int zp_enqueue(dq_queue *q, const char *id, const void *payload,
                      size_t payload_len, int64_t due_ms)
{
    zp_priv *p = q->priv;

    return dq_zh_enqueue(q, p->c, id, payload, payload_len, due_ms);
}

/* Pops the head: ZPOPMIN (block_ms < 0) or BZPOPMIN with a clamped timeout.
 * Sets *got and fills id/due when a member came back. */
static int zp_pop(dq_queue *q, int64_t block_ms, bool *got,
                  char id[DQ_ID_MAX], int64_t *due_ms)
{
    zp_priv *p = q->priv;
    const redisReply *mem, *score;
    redisReply *r;
    char tmo[32];
    int rc;

    *got = false;
    if (block_ms < 0) {
        r = dq_redis_cmdf(q, p->c, &rc, "ZPOPMIN %s", p->zkey);
    } else {
        dq_block_timeout(block_ms, tmo, sizeof tmo);
        r = dq_redis_cmdf(q, p->c, &rc, "BZPOPMIN %s %s", p->zkey, tmo);
    }
    if (r == NULL)
        return rc;
    if (r->type == REDIS_REPLY_NIL ||
        (r->type == REDIS_REPLY_ARRAY && r->elements == 0))
        goto free_reply; /* empty set / timed out */
    if (r->type != REDIS_REPLY_ARRAY || r->elements != (block_ms < 0 ? 2u : 3u)) {
        rc = dq_fail(q, DQ_EPROTO, "%s: unexpected reply shape",
                     block_ms < 0 ? "ZPOPMIN" : "BZPOPMIN");
        goto free_reply;
    }
    mem = r->element[r->elements - 2];
    score = r->element[r->elements - 1];
    if (mem->type != REDIS_REPLY_STRING || mem->len == 0 ||
        mem->len >= DQ_ID_MAX || !dq_reply_score_ms(score, due_ms)) {
        rc = dq_fail(q, DQ_EPROTO, "ZPOPMIN: bad member or score");
        goto free_reply;
    }
    memcpy(id, mem->str, mem->len);
    id[mem->len] = '\0';
    *got = true;
free_reply:
    freeReplyObject(r);
    return rc;
}

static int zp_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    zp_priv *p = q->priv;
    int64_t deadline_us = dq_mono_us() + timeout_ms * 1000;
    int64_t block_ms = -1; /* < 0: ZPOPMIN; >= 0: BZPOPMIN for that long */
    char id[DQ_ID_MAX];
    int64_t due_ms = 0;
    bool got;
    int rc;

    for (;;) {
        rc = zp_pop(q, block_ms, &got, id, &due_ms);
        if (rc != DQ_OK)
            return rc;
        if (block_ms >= 0)
            q->counters.wakeups++;
        block_ms = -1;

        if (!got) {
            int64_t left = zp_left_ms(deadline_us);

            q->counters.empty_polls++;
            if (left <= 0)
                return DQ_EMPTY;
            if (p->bzpopmin) {
                block_ms = left;
            } else {
                dq_sleep_us((left < p->poll_ms ? left : p->poll_ms) * 1000);
                q->counters.wakeups++;
            }
            continue;
        }

        int64_t now_ms = dq_now_ms(q);
        if (due_ms > now_ms) {
            /* Popped early: put it back, then wait about until it is due. */
            char due[32];
            redisReply *r;
            int64_t left, wait;

            snprintf(due, sizeof due, "%lld", (long long)due_ms);
            r = dq_redis_cmdf(q, p->c, &rc, "ZADD %s %s %s", p->zkey, due, id);
            if (r == NULL) {
                char why[sizeof q->err];
                memcpy(why, q->err, sizeof why);
                return dq_fail(q, rc, "put-back of %s (task lost: popped, "
                               "not re-added): %.200s", id, why);
            }
            freeReplyObject(r);
            q->counters.putbacks++;
            q->counters.empty_polls++;
            left = zp_left_ms(deadline_us);
            if (left <= 0)
                return DQ_EMPTY;
            wait = due_ms - now_ms;
            if (wait > p->poll_ms)
                wait = p->poll_ms;
            if (wait > left)
                wait = left;
            dq_sleep_us(wait * 1000);
            q->counters.wakeups++;
            continue;
        }

        bool found;
        rc = dq_zh_take_payload(q, p->c, id, &out->payload, &out->payload_len,
                                &found);
        if (rc != DQ_OK)
            return rc;
        if (!found)
            continue; /* a bare id left by a cancel during a put-back */
        memcpy(out->id, id, strlen(id) + 1);
        out->due_ms = due_ms;
        out->attempt = 1;
        out->token[0] = '\0';
        return DQ_OK;
    }
}

static int zp_ack(dq_queue *q, const dq_task *t)
{
    (void)q;
    (void)t;
    return DQ_OK; /* at-most-once: the task left Redis when it was popped */
}

static int zp_cancel(dq_queue *q, const char *id)
{
    zp_priv *p = q->priv;

    return dq_zh_cancel(q, p->c, id);
}

static int zp_reschedule(dq_queue *q, const char *id, int64_t due_ms)
{
    zp_priv *p = q->priv;

    return dq_zh_reschedule(q, p->c, id, due_ms);
}

static int64_t zp_pending(dq_queue *q)
{
    zp_priv *p = q->priv;

    return dq_zh_pending(q, p->c);
}

static int zp_purge(dq_queue *q)
{
    zp_priv *p = q->priv;

    return dq_redis_purge(q, p->c);
}

static int zp_exists(dq_queue *q)
{
    zp_priv *p = q->priv;

    return dq_redis_exists(q, p->c);
}

const dq_strategy dq_strategy_zpopmin = {
    .name = "zpopmin",
    .summary = "ZPOPMIN the head, put it back if not due; at-most-once, "
               "early pops hide tasks from other consumers",
    .flags = DQ_G_AT_MOST_ONCE | DQ_G_NEEDS_REDIS | DQ_G_POLLS |
             DQ_G_NO_DUP_CONCURRENT | DQ_G_DUE_ORDER |
             DQ_G_SURVIVES_PROCESS_EXIT,
    .min_redis = "5.0.0",
    .options = zp_options,
    .open = zp_open,
    .enqueue = zp_enqueue,
    .claim = zp_claim,
    .ack = zp_ack,
    .close = zp_close,
    .cancel = zp_cancel,
    .reschedule = zp_reschedule,
    .pending = zp_pending,
    .purge = zp_purge,
    .exists = zp_exists,
    .doc = "ZPOPMIN z takes the head; if it is due, HGET + HDEL fetch the "
        "payload (2 round trips per task), otherwise ZADD puts it back and "
        "the consumer sleeps until about the head's due time (at most "
        "poll_ms; bzpopmin=1 blocks in BZPOPMIN while the set is empty).  "
        "The pop is atomic, so there are no duplicates, but it cannot "
        "filter by score: between pop and put-back the head is invisible "
        "to others, each early pop is a wasted write, and a consumer dying "
        "in that window loses a task that was not even due (claim C07).  "
        "At-most-once.",
};
