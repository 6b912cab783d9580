/* list_reliable.c -- `list-reliable`: the Redisson-style design of list.c
 * with the "reliable queue" pattern on top: at-least-once with leases.
 *
 * How it works: enqueue and the mover are list.c's (list_mover.c: delay
 * ZSet dq:{Q}:z, payloads dq:{Q}:p, one mover per queue and process moving
 * due tasks into dq:{Q}:ready, Pub/Sub wake-ups on dq:{Q}:wake), except
 * that the payload stays in dq:{Q}:p until the ack (a redelivery needs it)
 * and the ready item "<due>:<attempt>:<idlen>:<id>[<tail>]" carries the
 * number of the delivery it makes: 1 when moved (the tail: after a nack,
 * below).  A consumer does not pop the ready
 * item but moves it, atomically, into its own processing list
 * dq:{Q}:proc:<consumer> with LMOVE / BLMOVE ready proc LEFT RIGHT
 * (https://redis.io/commands/blmove/, Redis >= 6.2) and records a lease
 * (visibility timeout) in the ZSet dq:{Q}:leases (item -> now +
 * lease_ms).  Ack removes the item from its processing list, its lease and
 * its payload, in one script.  The mover also runs a reaper
 * (list_mover.c, once per process) that puts items whose lease ran out
 * back at the tail of ready, from every processing list named in
 * dq:{Q}:procs, with the attempt one up, so a crashed or stuck consumer's
 * task is redelivered.
 *
 * Retries and dead letters (dq.h).  nack(t, delay_ms) is one script that,
 * under ack's test (below), takes the item out of the processing list (or,
 * late, out of ready) with its lease and puts the task back into the
 * delay ZSet at now + delay_ms, its payload still in dq:{Q}:p, with two
 * records the mover reads when it moves it again: dq:{Q}:a (id ->
 * deliveries made) and dq:{Q}:d (id -> original due ms).  The retry's
 * item then carries the original due time, attempt + 1 and that attempt
 * as a tail (list_mover.h): so it never equals the reaper's give-back of
 * the nacked delivery, which a late ack or nack of that delivery looks
 * for, and the nacked delivery's ack is refused.  The nack publishes the
 * retry time on dq:{Q}:wake when the task became the ZSet's head, as
 * enqueue does, so the mover wakes for it.  With max_attempts=N > 0, the
 * step that would give a task back for delivery after its Nth delivery
 * -- the reaper finding its lease run out, or the nack -- moves it
 * instead, in the same script, to the dead-letter set dq:{Q}:dead (id ->
 * ms when moved) with HSET a id N; its payload stays in p for
 * inspection.  dead_letters is ZCARD dead, dead_letter_ids ZRANGE dead
 * (dq_redis_zset_each).  Enqueue deletes an id's a
 * and d records, so a reused id starts at attempt 1 with its new due
 * time.  list pays nothing for any of this: it passes no a/d keys to the
 * shared scripts, and the mover reads a and d only for list-reliable,
 * and only when HLEN d > 0.
 *
 * Redis commands per task:
 *   enqueue: part of 1 script (1 per enqueue_many chunk);  move: part of
 *            1 script per batch of up to move_batch tasks
 *   claim:   1 script, one round trip, while tasks are waiting: LMOVE
 *            ready proc; HGET p; ZADD leases; SADD procs; LLEN ready.  A
 *            consumer that found ready empty (the script's LLEN said so,
 *            or the script found nothing) blocks in BLMOVE instead and
 *            then runs LEASE_LUA (HGET p; ZADD leases; SADD procs; LLEN):
 *            2 round trips, paid only when it had nothing to do.  BLMOVE
 *            keeps a client-side deadline as list.c's BLPOP does
 *            (dq_redis_block: one PING more when it times out on an idle
 *            server)
 *   ack:     1 script (LREM proc -- or, late, LREM ready; ZREM leases;
 *            HDEL p): one round trip
 *   nack:    1 script (LREM proc -- or, late, LREM ready; ZREM leases;
 *            HSET a; HSET d; ZADD z; ZRANGE z 0 0; PUBLISH when it is the
 *            head -- or, at max_attempts, HSET a; ZADD dead): one round
 *            trip
 *   reaper:  1 script per run for all consumers (O(tasks in flight))
 * So 2 round trips per task in a busy queue (claim, ack), plus a share of
 * the enqueue and move scripts.
 *
 * Guarantee: at-least-once.  A task is in exactly one of z, ready, a
 * processing list or dead at every moment (each step is one atomic
 * command or script), so a consumer killed between claim and ack loses
 * nothing: after lease_ms the reaper gives the task back and it is
 * delivered again with attempt + 1 (or, its max_attempts deliveries made,
 * dead-lettered).  A consumer killed between BLMOVE and its lease script
 * leaves an item without a lease; the reaper gives it one of lease_ms
 * (that delivery counts as an attempt too).  Without faults and with work
 * shorter than the lease no task is delivered twice.
 *
 * Work longer than the lease, and what it costs.  The reaper gives the
 * task back at the TAIL of ready: it counts as due again at its lease
 * expiry, behind every task already ready (at the head, the next claim of
 * any consumer took it again, so consumers whose work always outlasted
 * the lease were handed the same one or two tasks over and over while the
 * rest of the queue was never delivered).  Then:
 *   - nobody takes it before the holder acks (every other consumer busy,
 *     or tasks ahead of it in ready): the late ack finds the item in ready
 *     with the next attempt number, which nobody has taken, removes it and
 *     is accepted -- delivered once, as lua-lease accepts a late ack;
 *   - another consumer takes it first (it was idle, or reached it): the
 *     task is processed twice, concurrently, and the first holder's ack
 *     gets DQ_ENOTFOUND (neither its item nor the next attempt's is where
 *     it looks) instead of ending the new delivery's lease.  A task whose
 *     work always outlasts the lease, with a consumer idle to take it,
 *     goes round every lease_ms and is never acked: for ever with
 *     max_attempts=0 (the default), into dead after N deliveries with
 *     max_attempts=N; the rest of the queue still moves.
 * So choose lease_ms above the longest work; processing must be
 * idempotent anyway.  A redelivered task is also late by the backlog of
 * ready tasks ahead of it.  A task that is not due yet by this consumer's
 * clock (moved by a mover whose clock runs ahead) is waited for up to the
 * claim timeout; if still early it goes back, unchanged (same attempt),
 * to the head of ready with its lease undone (one more script,
 * UNLEASE_LUA, counted in putbacks) and claim returns DQ_EMPTY.
 *
 * Failure modes: the reaper only runs while some process's mover runs, so
 * a queue with no live consumer redelivers nothing (nothing would take it
 * anyway).  Lease expiry uses the claiming consumer's clock and is judged
 * by the reaping mover's clock: skew between them shortens or lengthens
 * the lease.  A processing list of a consumer that never comes back stays
 * named in dq:{Q}:procs (empty after the reaper drained it) until purge.
 * A late ack or nack of a delivery the reaper dead-lettered is refused
 * (DQ_ENOTFOUND), as lua-lease refuses one once its claim dead-lettered
 * the task.  A nack's retry time is this consumer's clock; the mover
 * moves it by its own.  A dead-lettered id stays in dead when it is
 * enqueued again (as in lua-lease and streams): dead_letters still
 * counts it.
 *
 * Options: lease_ms (visibility timeout, default 30000), max_attempts
 * (deliveries before the dead-letter set, default 0: unlimited),
 * poll_cap_ms, move_batch (as for list).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "dq.h"
#include "list_mover.h"
#include "rconn.h"

/* The claim while tasks are waiting, one round trip.  KEYS: ready proc p
 * leases procs   ARGV: lease_expiry_ms proc
 * LMOVE ready proc LEFT RIGHT, then what LEASE_LUA does, in one script.
 * Returns {0} when ready is empty, {-1, item} when the task's payload is
 * gone (purged; the item is dropped again), {-2, item} for an item whose
 * id cannot be read (it stays in proc: the reaper gives it back), else
 * {1, item, payload, tasks left in ready}. */
static const char CLAIM_LUA[] =
    "local it = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')\n"
    "if not it then return {0} end\n"
    "local c1 = string.find(it, ':', 1, true)\n"
    "local c2 = c1 and string.find(it, ':', c1 + 1, true)\n"
    "local c3 = c2 and string.find(it, ':', c2 + 1, true)\n"
    "local n = c3 and tonumber(string.sub(it, c2 + 1, c3 - 1))\n"
    "if not n then return {-2, it} end\n"
    "local v = redis.call('HGET', KEYS[3], string.sub(it, c3 + 1, c3 + n))\n"
    "if not v then\n"
    "  redis.call('LREM', KEYS[2], -1, it)\n"
    "  redis.call('ZREM', KEYS[4], it)\n"
    "  return {-1, it}\n"
    "end\n"
    "redis.call('ZADD', KEYS[4], ARGV[1], it)\n"
    "redis.call('SADD', KEYS[5], ARGV[2])\n"
    "return {1, it, v, redis.call('LLEN', KEYS[1])}\n";

/* The lease after a BLMOVE.  KEYS: p leases procs proc ready
 * ARGV: id item lease_expiry_ms proc
 * Returns {1, payload, tasks left in ready}, or {0} when the payload is
 * gone (purged): then the item is dropped from the processing list
 * again. */
static const char LEASE_LUA[] =
    "local v = redis.call('HGET', KEYS[1], ARGV[1])\n"
    "if not v then\n"
    "  redis.call('LREM', KEYS[4], -1, ARGV[2])\n"
    "  redis.call('ZREM', KEYS[2], ARGV[2])\n"
    "  return {0}\n"
    "end\n"
    "redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])\n"
    "redis.call('SADD', KEYS[3], ARGV[4])\n"
    "return {1, v, redis.call('LLEN', KEYS[5])}\n";

/* KEYS: proc leases p ready   ARGV: item next id
 * item is the delivery being acked ("<due>:<attempt>:..."), next the same
 * task one attempt up, as the reaper gives it back.  Returns 1 when
 * acked, 0 when this delivery no longer holds the task.  The item is in
 * our processing list, or -- a late ack after the reaper gave it back --
 * `next` is in ready, where LREM looks from the tail (the reaper RPUSHes
 * it): nobody has taken it again, so the work was done once and the ack
 * ends it.  Once another consumer took `next`, neither is found. */
static const char ACK_LUA[] =
    "if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 and\n"
    "   redis.call('LREM', KEYS[4], -1, ARGV[2]) == 0 then return 0 end\n"
    "redis.call('ZREM', KEYS[2], ARGV[1])\n"
    "redis.call('HDEL', KEYS[3], ARGV[3])\n"
    "return 1\n";

/* KEYS: proc ready leases z a d dead
 * ARGV: item next id due attempt retry_ms now_ms max_attempts channel
 * item and next as for ACK_LUA, due the original due time, attempt the
 * nacked delivery's number (the deliveries made).  Under ACK_LUA's test
 * (the item in our processing list, or, late, `next` in ready with nobody
 * having taken it), removes the item and its lease, and then:
 *   - with max_attempts > 0 and attempt >= max_attempts, dead-letters the
 *     task: ZADD dead now id, HSET a id attempt (its payload stays in p)
 *     and returns 2;
 *   - otherwise puts it back into the delay ZSet for its retry: HSET a id
 *     attempt, HSET d id due (the mover moves it as attempt + 1 with its
 *     original due), ZADD z retry id, PUBLISH the retry time on the wake
 *     channel when the task became the head (as enqueue does), returns 1.
 * The payload stays in p either way.  Returns 0 when this delivery no
 * longer holds the task: nothing changed. */
static const char NACK_LUA[] =
    "if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 and\n"
    "   redis.call('LREM', KEYS[2], -1, ARGV[2]) == 0 then return 0 end\n"
    "redis.call('ZREM', KEYS[3], ARGV[1])\n"
    "redis.call('HSET', KEYS[5], ARGV[3], ARGV[5])\n"
    "local max = tonumber(ARGV[8])\n"
    "if max > 0 and tonumber(ARGV[5]) >= max then\n"
    "  redis.call('HDEL', KEYS[6], ARGV[3])\n"
    "  redis.call('ZADD', KEYS[7], ARGV[7], ARGV[3])\n"
    "  return 2\n"
    "end\n"
    "redis.call('HSET', KEYS[6], ARGV[3], ARGV[4])\n"
    "redis.call('ZADD', KEYS[4], ARGV[6], ARGV[3])\n"
    "local h = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')\n"
    "if h[1] == ARGV[3] then redis.call('PUBLISH', ARGV[9], h[2]) end\n"
    "return 1\n";

/* KEYS: proc procs   ARGV: proc (the key name, as the set holds it).
 * Unregisters an empty processing list. */
static const char UNREGISTER_LUA[] =
    "if redis.call('LLEN', KEYS[1]) == 0 then\n"
    "  redis.call('SREM', KEYS[2], ARGV[1])\n"
    "end\n"
    "return 1\n";

/* Undo a lease whose task is not due by the claimer's clock before its
 * claim deadline.  KEYS: proc leases ready   ARGV: item
 * Only when the item is still in our processing list (the reaper may have
 * given it back already): remove it and its lease and push it back,
 * unchanged (its attempt was not used), at the head of ready.  Returns 1
 * or 0. */
static const char UNLEASE_LUA[] =
    "if redis.call('LREM', KEYS[1], -1, ARGV[1]) == 0 then return 0 end\n"
    "redis.call('ZREM', KEYS[2], ARGV[1])\n"
    "redis.call('LPUSH', KEYS[3], ARGV[1])\n"
    "return 1\n";

#define LR_NAME_MAX 160

typedef struct lr_state {
    dq_lm_base b; /* first member: the dq_lm_* functions take q->priv */
    char name[LR_NAME_MAX];  /* consumer name */
    char kproc[LM_KEY_MAX], kleases[LM_KEY_MAX], kprocs[LM_KEY_MAX];
    dq_script claim_s, lease_s, ack_s, unreg_s, unlease_s, nack_s;
    bool fast; /* tasks were left in ready at the last claim: try
                  CLAIM_LUA before blocking */
} lr_state;

static const dq_optdef lr_options[] = {
    DQ_OPTDEF_INT("lease_ms", "30000", 1, 86400000,
                  "visibility timeout: a claimed task not acked within it "
                  "is redelivered, ms (1..86400000)"),
    DQ_OPTDEF_INT("poll_cap_ms", "1000", 1, 3600000,
                  "longest mover sleep without a wake-up message, ms "
                  "(1..3600000)"),
    DQ_OPTDEF_INT("move_batch", "100", 1, 100000,
                  "most tasks the mover moves per script call (1..100000)"),
    DQ_OPTDEF_INT("max_attempts", "0", 0, 1000000000,
                  "deliveries before a task goes to the dead-letter set "
                  "dq:{Q}:dead instead, when its lease runs out or it is "
                  "nacked (0: unlimited)"),
    DQ_OPTDEF_END,
};

/* cfg.consumer, or "gen-<host>-<pid>-<16 hex>" when it is NULL/empty. */
static int lr_make_name(dq_queue *q, char name[LR_NAME_MAX])
{
    const char *given = q->cfg.consumer;
    if (given != NULL && given[0] != '\0') {
        if (strlen(given) >= LR_NAME_MAX)
            return dq_fail(q, DQ_EINVAL,
                           "list-reliable: consumer name longer than %d "
                           "bytes", LR_NAME_MAX - 1);
        snprintf(name, LR_NAME_MAX, "%s", given);
        return DQ_OK;
    }
    char host[64] = "host";
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "host");
    host[sizeof(host) - 1] = '\0';
    uint64_t rnd = 0;
    if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        rnd = (uint64_t)dq_mono_us() ^ ((uint64_t)(uintptr_t)q << 16);
    snprintf(name, LR_NAME_MAX, "gen-%s-%d-%016" PRIx64, host, (int)getpid(),
             rnd);
    return DQ_OK;
}

static int lr_open(dq_queue *q)
{
    lr_state *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return dq_fail(q, DQ_ENOMEM, "list-reliable: out of memory");
    int rc = lr_make_name(q, s->name);
    if (rc != DQ_OK)
        goto fail;
    char suffix[LM_KEY_MAX];
    snprintf(suffix, sizeof(suffix), "proc:%s", s->name);
    dq_redis_key(q, suffix, s->kproc, sizeof(s->kproc));
    dq_redis_key(q, "leases", s->kleases, sizeof(s->kleases));
    dq_redis_key(q, "procs", s->kprocs, sizeof(s->kprocs));
    s->claim_s.src = CLAIM_LUA;
    s->lease_s.src = LEASE_LUA;
    s->fast = true;
    s->ack_s.src = ACK_LUA;
    s->unreg_s.src = UNREGISTER_LUA;
    s->unlease_s.src = UNLEASE_LUA;
    s->nack_s.src = NACK_LUA;
    rc = dq_lm_base_open(q, &s->b, "6.2.0", true);
    if (rc != DQ_OK)
        goto fail;
    q->priv = s;
    return DQ_OK;

fail:
    free(s);
    return rc;
}

static void lr_close(dq_queue *q)
{
    lr_state *s = q->priv;
    if (s == NULL)
        return;
    /* Unregister our processing list when it is empty (best effort: close
     * never fails); items left in it are reaped when their leases run
     * out. */
    int rc;
    redisContext *c = s->b.c;
    if (c != NULL) {
        const char *args[3] = {s->kproc, s->kprocs, s->kproc};
        redisReply *r = dq_redis_eval(q, c, &s->unreg_s, &rc, 2, 3, args,
                                      NULL);
        if (r != NULL)
            freeReplyObject(r);
    }
    dq_lm_base_close(q, &s->b);
    free(s);
    q->priv = NULL;
}

/* Longest item tail (list_mover.h: "" or a decimal attempt). */
#define LR_TAIL_MAX 20

/* Fills out's payload and token, from which ack and nack rebuild the
 * item: "<attempt>", or "<attempt>:<tail>" for an item with a tail (a
 * nack's retry, list_mover.h).  DQ_EPROTO for a tail that is not 1 to
 * LR_TAIL_MAX digits (no item this strategy makes). */
static int lr_fill(dq_queue *q, const redisReply *payload, const char *tail,
                   size_t taillen, dq_task *out)
{
    if (taillen > LR_TAIL_MAX || strspn(tail, "0123456789") < taillen)
        return dq_fail(q, DQ_EPROTO, "claim: item of %s has a malformed "
                       "tail", out->id);
    out->payload = dq_reply_copy(payload, &out->payload_len);
    if (out->payload == NULL)
        return dq_fail(q, DQ_ENOMEM, "claim: out of memory");
    if (taillen == 0)
        snprintf(out->token, sizeof(out->token), "%d", out->attempt);
    else
        snprintf(out->token, sizeof(out->token), "%d:%.*s", out->attempt,
                 (int)taillen, tail);
    return DQ_OK;
}

/* Rebuilds from t (due_ms, id, and the token lr_fill made) the item of
 * its delivery into item and the one the reaper gives back for the next
 * attempt into next (LR_ITEM_MAX bytes each).  False for a token this
 * strategy did not make. */
#define LR_ITEM_MAX (LM_ITEM_HEAD_MAX + LR_TAIL_MAX + 1)
static bool lr_items(const dq_task *t, long long *attempt,
                     char item[LR_ITEM_MAX], char next[LR_ITEM_MAX])
{
    char *end;
    if (t->token[0] < '0' || t->token[0] > '9')
        return false;
    *attempt = strtoll(t->token, &end, 10);
    const char *tail = "";
    if (*end == ':') {
        tail = end + 1;
        size_t n = strlen(tail);
        if (n == 0 || n > LR_TAIL_MAX || strspn(tail, "0123456789") != n)
            return false;
    } else if (*end != '\0') {
        return false;
    }
    return *attempt >= 1 && *attempt < 1000000000 &&
           dq_lm_format_item(item, LR_ITEM_MAX, t->due_ms, *attempt, t->id,
                          tail) >= 0 &&
           dq_lm_format_item(next, LR_ITEM_MAX, t->due_ms, *attempt + 1, t->id,
                          tail) >= 0;
}

/* The lease expiry of a claim now, as text (32 bytes). */
static void lr_expiry(dq_queue *q, lr_state *s, char *buf)
{
    snprintf(buf, 32, "%" PRId64, dq_now_ms(q) + s->b.lease_ms);
}

/* Records the lease of item (in s->kproc, just BLMOVEd there) and fetches
 * the payload into *out.  DQ_OK, DQ_ENOTFOUND when the task was purged,
 * or an error.  Sets s->fast when tasks are left in ready. */
static int lr_lease(dq_queue *q, lr_state *s, const char *item,
                    size_t itemlen, dq_task *out)
{
    char expiry[32];
    lr_expiry(q, s, expiry);
    const char *args[9] = {s->b.kp, s->kleases, s->kprocs, s->kproc,
                           s->b.kready, out->id, item, expiry, s->kproc};
    size_t lens[9];
    for (int i = 0; i < 9; i++)
        lens[i] = strlen(args[i]);
    lens[6] = itemlen;
    int rc;
    redisReply *r = dq_redis_eval(q, s->b.c, &s->lease_s, &rc, 5, 9, args,
                                  lens);
    if (r == NULL)
        return rc;
    int64_t found, left = 0;
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        !dq_reply_int(r->element[0], &found)) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "claim: unexpected lease reply");
    }
    if (found == 0) {
        freeReplyObject(r);
        return DQ_ENOTFOUND;
    }
    if (r->elements != 3 || r->element[1]->type != REDIS_REPLY_STRING ||
        !dq_reply_int(r->element[2], &left)) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "claim: unexpected lease reply");
    }
    int64_t due;
    int att;
    char id[DQ_ID_MAX];
    const char *tail = "";
    size_t taillen = 0;
    if (!dq_lm_parse_item(item, itemlen, &due, &att, id, &tail, &taillen))
        rc = dq_fail(q, DQ_EPROTO, "claim: malformed item in %s",
                     s->b.kready); /* dq_lm_pop_item parsed it already */
    else
        rc = lr_fill(q, r->element[1], tail, taillen, out);
    s->fast = left > 0;
    freeReplyObject(r);
    return rc;
}

/* CLAIM_LUA: take the head of ready with its lease in one round trip.
 * Returns as dq_lm_claim_ops.take (DQ_EMPTY when ready was empty). */
static int lr_claim_script(dq_queue *q, lr_state *s, dq_task *out,
                           redisReply **reply, const char **item,
                           size_t *itemlen)
{
    char expiry[32];
    lr_expiry(q, s, expiry);
    const char *args[7] = {s->b.kready, s->kproc, s->b.kp, s->kleases,
                           s->kprocs, expiry, s->kproc};
    int rc;
    redisReply *r = dq_redis_eval(q, s->b.c, &s->claim_s, &rc, 5, 7, args,
                                  NULL);
    if (r == NULL)
        return rc;
    int64_t what, left;
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        !dq_reply_int(r->element[0], &what))
        goto unexpected;
    if (what == 0) {
        freeReplyObject(r);
        q->counters.empty_polls++;
        return DQ_EMPTY;
    }
    if (r->elements < 2 || r->element[1]->type != REDIS_REPLY_STRING)
        goto unexpected;
    if (what == -1) {
        freeReplyObject(r);
        return DQ_ENOTFOUND;
    }
    memset(out, 0, sizeof(*out));
    const char *payload;
    size_t plen;
    redisReply *it = r->element[1];
    if (what != 1 || !dq_lm_parse_item(it->str, it->len, &out->due_ms,
                                    &out->attempt, out->id, &payload,
                                    &plen)) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "claim: malformed item in %s",
                       s->b.kready);
    }
    if (r->elements != 4 || r->element[2]->type != REDIS_REPLY_STRING ||
        !dq_reply_int(r->element[3], &left))
        goto unexpected;
    q->counters.wakeups++;
    rc = lr_fill(q, r->element[2], payload, plen, out);
    if (rc != DQ_OK) {
        freeReplyObject(r);
        return rc;
    }
    s->fast = left > 0;
    *reply = r;
    *item = it->str;
    *itemlen = it->len;
    return DQ_OK;

unexpected:
    freeReplyObject(r);
    return dq_fail(q, DQ_EPROTO, "claim: unexpected claim script reply");
}

/* dq_lm_claim's take.  While tasks are waiting (the last claim left some in
 * ready), one CLAIM_LUA; when it finds ready empty, or ready was empty
 * last time, BLMOVE (blocking until a task comes or the deadline) and
 * then LEASE_LUA: two round trips, paid only by a consumer that had
 * nothing to do.  A wait too short to block looks once with CLAIM_LUA
 * and sleeps the rest. */
static int lr_take(dq_queue *q, int64_t deadline_us, dq_task *out,
                   redisReply **reply, const char **item, size_t *itemlen)
{
    lr_state *s = q->priv;
    int rc;
    *reply = NULL;
    if (s->fast ||
        deadline_us - dq_mono_us() < DQ_BLOCK_SHORTEST_MS * 1000) {
        rc = lr_claim_script(q, s, out, reply, item, itemlen);
        if (rc != DQ_EMPTY)
            return rc;
        s->fast = false;
        int64_t left_us = deadline_us - dq_mono_us();
        if (left_us < DQ_BLOCK_SHORTEST_MS * 1000) {
            dq_sleep_us(left_us);
            return DQ_EMPTY;
        }
    }
    rc = dq_lm_pop_item(q, &s->b, s->kproc, deadline_us, out, reply, item,
                     itemlen);
    if (rc != DQ_OK)
        return rc;
    rc = lr_lease(q, s, *item, *itemlen, out);
    if (rc != DQ_OK) {
        freeReplyObject(*reply);
        *reply = NULL;
    }
    return rc;
}

/* dq_lm_claim's undo: UNLEASE_LUA.  0 (the reaper gave it back already) is
 * fine too: either way the task is in ready again. */
static int lr_undo(dq_queue *q, const char *item, size_t itemlen,
                   const dq_task *out)
{
    lr_state *s = q->priv;
    (void)out;
    const char *args[4] = {s->kproc, s->kleases, s->b.kready, item};
    size_t lens[4];
    for (int i = 0; i < 4; i++)
        lens[i] = strlen(args[i]);
    lens[3] = itemlen;
    int rc;
    redisReply *r = dq_redis_eval(q, s->b.c, &s->unlease_s, &rc, 3, 4, args,
                                  lens);
    if (r == NULL)
        return rc;
    freeReplyObject(r);
    return DQ_OK;
}

static const dq_lm_claim_ops lr_claim_ops = {lr_take, lr_undo};

static int lr_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    lr_state *s = q->priv;
    return dq_lm_claim(q, &s->b, timeout_ms, out, &lr_claim_ops);
}

static int lr_ack(dq_queue *q, const dq_task *t)
{
    lr_state *s = q->priv;
    char item[LR_ITEM_MAX], next[LR_ITEM_MAX];
    long long attempt;
    if (!lr_items(t, &attempt, item, next))
        return dq_fail(q, DQ_EINVAL, "ack: task %s was not claimed here",
                       t->id);
    const char *args[7] = {s->kproc, s->kleases, s->b.kp, s->b.kready,
                           item, next, t->id};
    int64_t n;
    int rc = dq_redis_eval_int(q, s->b.c, &s->ack_s, 4, 7, args, NULL,
                               "ack: unexpected reply", &n);
    if (rc != DQ_OK)
        return rc;
    if (n == 0)
        return dq_fail(q, DQ_ENOTFOUND,
                       "ack: %s (attempt %lld) is no longer ours: its lease "
                       "ran out and the task was delivered again or "
                       "dead-lettered, or it was acked or nacked", t->id,
                       attempt);
    return DQ_OK;
}

/* nack: NACK_LUA, one round trip: the retry time (or the dead-letter
 * move, with max_attempts) is written in the same script that checks the
 * lease is ours. */
static int lr_nack(dq_queue *q, const dq_task *t, int64_t delay_ms)
{
    lr_state *s = q->priv;
    char item[LR_ITEM_MAX], next[LR_ITEM_MAX];
    char due[24], att[24], retry[24], now[24], max[24];
    long long attempt;
    if (!lr_items(t, &attempt, item, next))
        return dq_fail(q, DQ_EINVAL, "nack: task %s was not claimed here",
                       t->id);
    int64_t now_ms = dq_now_ms(q);
    snprintf(due, sizeof(due), "%" PRId64, t->due_ms);
    snprintf(att, sizeof(att), "%lld", attempt);
    snprintf(retry, sizeof(retry), "%" PRId64, now_ms + delay_ms);
    snprintf(now, sizeof(now), "%" PRId64, now_ms);
    snprintf(max, sizeof(max), "%" PRId64, s->b.max_attempts);
    const char *args[16] = {s->kproc, s->b.kready, s->kleases, s->b.kz,
                            s->b.ka, s->b.kd, s->b.kdead, item, next, t->id,
                            due, att, retry, now, max, s->b.kwake};
    int64_t n;
    int rc = dq_redis_eval_int(q, s->b.c, &s->nack_s, 7, 16, args, NULL,
                               "nack: unexpected reply", &n);
    if (rc != DQ_OK)
        return rc;
    if (n == 0)
        return dq_fail(q, DQ_ENOTFOUND,
                       "nack: %s (attempt %lld) is no longer ours: its "
                       "lease ran out and the task was delivered again or "
                       "dead-lettered, or it was acked or nacked", t->id,
                       attempt);
    return DQ_OK;
}

static int64_t lr_dead_letters(dq_queue *q)
{
    lr_state *s = q->priv;
    const char *argv[2] = {"ZCARD", s->b.kdead};
    int rc;
    redisReply *r = dq_redis_cmd(q, s->b.c, &rc, 2, argv, NULL);
    if (r == NULL)
        return rc;
    int64_t n;
    if (!dq_reply_int(r, &n))
        n = dq_fail(q, DQ_EPROTO, "dead_letters: ZCARD: expected an "
                    "integer");
    freeReplyObject(r);
    return n;
}

static int lr_dead_letter_ids(dq_queue *q, dq_id_fn fn, void *arg)
{
    lr_state *s = q->priv;

    return dq_redis_zset_each(q, s->b.c, s->b.kdead, fn, arg);
}

const dq_strategy dq_strategy_list_reliable = {
    .name = "list-reliable",
    .summary = "list + (B)LMOVE into a per-consumer processing list, "
               "leases and a reaper; at-least-once",
    .flags = DQ_G_AT_LEAST_ONCE | DQ_G_SURVIVES_CONSUMER_CRASH |
             DQ_G_NEEDS_REDIS | DQ_G_BLOCKS | DQ_G_NO_DUP_CONCURRENT |
             DQ_G_DUE_ORDER | DQ_G_SURVIVES_PROCESS_EXIT |
             DQ_G_ZSET_LAYOUT,
    .min_redis = "6.2.0",
    .options = lr_options,
    .open = lr_open,
    .enqueue = dq_lm_enqueue,
    .claim = lr_claim,
    .ack = lr_ack,
    .close = lr_close,
    .pending = dq_lm_pending,
    .purge = dq_lm_purge,
    .exists = dq_lm_exists,
    .enqueue_many = dq_lm_enqueue_many,
    .nack = lr_nack,
    .dead_letters = lr_dead_letters,
    .dead_letter_ids = lr_dead_letter_ids,
    .doc = "list's enqueue and mover (one per queue and process), plus the "
        "reliable-queue pattern: a consumer moves the ready item into its "
        "own processing list and records a lease (ZSet item -> now + "
        "lease_ms) in one script (LMOVE ...) while tasks are waiting, or, "
        "when it found none, BLMOVE (Redis 6.2) and then the lease script; "
        "ack removes the item, its lease and its payload in another.  The "
        "item carries the delivery's attempt number.  A reaper in the mover "
        "puts items whose lease ran out back at the tail of ready, behind "
        "the tasks already ready, with the attempt one up.  Per task in a "
        "busy queue: a share of an enqueue and a move script, 1 claim "
        "script, 1 ack script: two round trips.  At-least-once: a consumer "
        "killed between claim and ack loses nothing (redelivered with "
        "attempt + 1 after lease_ms).  nack (one script, while the lease is "
        "ours) puts the task back into the delay ZSet at now + delay, to "
        "come again as attempt + 1 with its original due time; "
        "max_attempts=N moves a task delivered N times to the dead-letter "
        "set dq:{Q}:dead instead (when its lease runs out, or at the nack), "
        "its payload kept.  Work that outlasts the lease: a late "
        "ack is accepted while nobody has taken the task again; once "
        "another consumer has, the task is processed twice and the late "
        "ack is refused, and a task that always outlasts its lease goes "
        "round every lease_ms, never acked (until max_attempts, when set), "
        "while the other tasks still come out.",
    .bench_one_rtt_share = 0.35,
};
