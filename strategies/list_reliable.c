/* list_reliable.c -- `list-reliable`: the Redisson-style design of list.c
 * with the "reliable queue" pattern on top: at-least-once with leases.
 *
 * How it works: enqueue and the mover are list.c's (list_mover.c: delay
 * ZSet dq:{Q}:z, payloads dq:{Q}:p, a mover per consumer handle moving due
 * tasks into dq:{Q}:ready, Pub/Sub wake-ups on dq:{Q}:wake).  A consumer
 * does not pop the ready item but moves it, atomically, into its own
 * processing list with BLMOVE ready dq:{Q}:proc:<consumer> LEFT RIGHT
 * (https://redis.io/commands/blmove/, Redis >= 6.2), then records a lease
 * (visibility timeout) in the ZSet dq:{Q}:leases (item -> now + lease_ms)
 * and counts the delivery in dq:{Q}:a (id -> attempt).  Ack removes the
 * item from its processing list and the task's keys, in one script.  The
 * mover also runs a reaper (list_mover.c) that puts items whose lease ran
 * out back at the tail of ready, from every processing list named in
 * dq:{Q}:procs, so a crashed or stuck consumer's task is redelivered.
 *
 * Redis commands per task:
 *   enqueue: 1 script;  move: part of 1 script per batch
 *   claim:   BLMOVE, then 1 script (ZADD leases; SADD procs; HINCRBY a;
 *            HGET p) -- 2 round trips.  BLMOVE keeps a client-side
 *            deadline as list.c's BLPOP does (dq_redis_block: one PING
 *            more when it times out on an idle server)
 *   ack:     1 script (HGET a; LREM proc -- or, late, LREM ready; ZREM
 *            leases; HDEL p; HDEL a)
 *   reaper:  1 script per run for all consumers (O(tasks in flight))
 *
 * Guarantee: at-least-once.  A task is in exactly one of z, ready or a
 * processing list at every moment (each step is one atomic command or
 * script), so a consumer killed between claim and ack loses nothing: after
 * lease_ms the reaper gives the task back and it is delivered again with
 * attempt + 1.  A consumer killed between BLMOVE and its lease script
 * leaves an item without a lease; the reaper gives it one of lease_ms.
 * Without faults and with work shorter than the lease no task is
 * delivered twice.
 *
 * Work longer than the lease, and what it costs.  The reaper gives the
 * task back at the TAIL of ready: it counts as due again at its lease
 * expiry, behind every task already ready (at the head, the next claim of
 * any consumer took it again, so consumers whose work always outlasted
 * the lease were handed the same one or two tasks over and over while the
 * rest of the queue was never delivered).  Then:
 *   - nobody takes it before the holder acks (every other consumer busy,
 *     or tasks ahead of it in ready): the late ack finds the item in ready
 *     with its attempt unchanged, removes it and is accepted -- delivered
 *     once, as lua-lease accepts a late ack;
 *   - another consumer takes it first (it was idle, or reached it): the
 *     task is processed twice, concurrently, and the first holder's ack
 *     gets DQ_ENOTFOUND (the attempt in the token no longer matches)
 *     instead of ending the new delivery's lease.  A task whose work
 *     always outlasts the lease, with a consumer idle to take it, goes
 *     round every lease_ms and is never acked (there is no retry limit or
 *     dead-letter list); the rest of the queue still moves.
 * So choose lease_ms above the longest work; processing must be
 * idempotent anyway.  A redelivered task is also late by the backlog of
 * ready tasks ahead of it.  A task that is
 * not due yet by this consumer's clock (moved by a mover whose clock runs
 * ahead) is waited for up to the claim timeout; if still early it goes
 * back to the head of ready with its lease and attempt undone (one more
 * script, UNLEASE_LUA, counted in putbacks) and claim returns DQ_EMPTY.
 *
 * Failure modes: the reaper only runs while some handle's mover runs, so
 * a queue with no live consumer redelivers nothing (nothing would take it
 * anyway).  Lease expiry uses the claiming consumer's clock and is judged
 * by the reaping mover's clock: skew between them shortens or lengthens
 * the lease.  A processing list of a consumer that never comes back stays
 * named in dq:{Q}:procs (empty after the reaper drained it) until purge.
 *
 * Options: lease_ms (visibility timeout, default 30000), poll_cap_ms,
 * move_batch (as for list).
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

/* KEYS: p leases a procs proc   ARGV: id item lease_expiry_ms proc
 * Returns {attempt, payload}, or {0} when the payload is gone (purged):
 * then the item is dropped from the processing list again. */
static const char LEASE_LUA[] =
    "local v = redis.call('HGET', KEYS[1], ARGV[1])\n"
    "if not v then\n"
    "  redis.call('LREM', KEYS[5], 1, ARGV[2])\n"
    "  redis.call('ZREM', KEYS[2], ARGV[2])\n"
    "  redis.call('HDEL', KEYS[3], ARGV[1])\n"
    "  return {0}\n"
    "end\n"
    "redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])\n"
    "redis.call('SADD', KEYS[4], ARGV[4])\n"
    "local n = redis.call('HINCRBY', KEYS[3], ARGV[1], 1)\n"
    "return {n, v}\n";

/* KEYS: proc leases p a ready   ARGV: item id attempt
 * Returns 1 when acked, 0 when this delivery no longer holds the task.
 * The item is in our processing list, or -- a late ack after the reaper
 * gave it back -- in ready, where LREM looks from the tail (the reaper
 * RPUSHes it).  Found in ready with our attempt still counted, nobody has
 * taken it again: the work was done once, and the ack ends it. */
static const char ACK_LUA[] =
    "if redis.call('HGET', KEYS[4], ARGV[2]) ~= ARGV[3] then return 0 end\n"
    "if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 and\n"
    "   redis.call('LREM', KEYS[5], -1, ARGV[1]) == 0 then return 0 end\n"
    "redis.call('ZREM', KEYS[2], ARGV[1])\n"
    "redis.call('HDEL', KEYS[3], ARGV[2])\n"
    "redis.call('HDEL', KEYS[4], ARGV[2])\n"
    "return 1\n";

/* KEYS: proc procs   ARGV: proc (the key name, as the set holds it).
 * Unregisters an empty processing list. */
static const char UNREGISTER_LUA[] =
    "if redis.call('LLEN', KEYS[1]) == 0 then\n"
    "  redis.call('SREM', KEYS[2], ARGV[1])\n"
    "end\n"
    "return 1\n";

/* Undo a lease whose task is not due by the claimer's clock before its
 * claim deadline.  KEYS: proc leases a ready   ARGV: item id
 * Only when the item is still in our processing list (the reaper may have
 * given it back already): remove it and its lease, take back the attempt
 * the lease counted, and push it back at the head of ready.  Returns 1 or
 * 0. */
static const char UNLEASE_LUA[] =
    "if redis.call('LREM', KEYS[1], -1, ARGV[1]) == 0 then return 0 end\n"
    "redis.call('ZREM', KEYS[2], ARGV[1])\n"
    "if redis.call('HINCRBY', KEYS[3], ARGV[2], -1) <= 0 then\n"
    "  redis.call('HDEL', KEYS[3], ARGV[2])\n"
    "end\n"
    "redis.call('LPUSH', KEYS[4], ARGV[1])\n"
    "return 1\n";

#define LR_NAME_MAX 160

typedef struct lr_state {
    lm_base b; /* first member: the lm_* functions take q->priv */
    char name[LR_NAME_MAX];  /* consumer name */
    char kproc[LM_KEY_MAX], kleases[LM_KEY_MAX], ka[LM_KEY_MAX],
        kprocs[LM_KEY_MAX];
    dq_script lease_s, ack_s, unreg_s, unlease_s;
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
    dq_redis_key(q, "a", s->ka, sizeof(s->ka));
    dq_redis_key(q, "procs", s->kprocs, sizeof(s->kprocs));
    s->lease_s.src = LEASE_LUA;
    s->ack_s.src = ACK_LUA;
    s->unreg_s.src = UNREGISTER_LUA;
    s->unlease_s.src = UNLEASE_LUA;
    rc = lm_base_open(q, &s->b, "6.2.0", true);
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
    lm_base_close(q, &s->b);
    free(s);
    q->priv = NULL;
}

/* Records the lease of item (in s->kproc) and fetches the payload into
 * *out.  DQ_OK, DQ_ENOTFOUND when the task was purged, or an error. */
static int lr_lease(dq_queue *q, lr_state *s, redisContext *c,
                    const char *item, size_t itemlen, dq_task *out)
{
    char expiry[32];
    snprintf(expiry, sizeof(expiry), "%" PRId64,
             dq_now_ms(q) + s->b.lease_ms);
    const char *args[9] = {s->b.kp, s->kleases, s->ka, s->kprocs, s->kproc,
                           out->id, item, expiry, s->kproc};
    size_t lens[9];
    for (int i = 0; i < 9; i++)
        lens[i] = strlen(args[i]);
    lens[6] = itemlen;
    int rc;
    redisReply *r = dq_redis_eval(q, c, &s->lease_s, &rc, 5, 9, args, lens);
    if (r == NULL)
        return rc;
    int64_t attempt;
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        !dq_reply_int(r->element[0], &attempt)) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "claim: unexpected lease reply");
    }
    if (attempt == 0 || r->elements < 2 ||
        r->element[1]->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return DQ_ENOTFOUND;
    }
    redisReply *p = r->element[1];
    out->payload = dq_reply_copy(p, &out->payload_len);
    if (out->payload == NULL) {
        freeReplyObject(r);
        return dq_fail(q, DQ_ENOMEM, "claim: out of memory");
    }
    out->attempt = attempt > 1000000000 ? 1000000000 : (int)attempt;
    snprintf(out->token, sizeof(out->token), "%" PRId64, attempt);
    freeReplyObject(r);
    return DQ_OK;
}

/* lm_claim's take: record the lease and fetch the payload (lr_lease). */
static int lr_take(dq_queue *q, const char *item, size_t itemlen,
                   dq_task *out)
{
    lr_state *s = q->priv;
    return lr_lease(q, s, s->b.c, item, itemlen, out);
}

/* lm_claim's undo: UNLEASE_LUA.  0 (the reaper gave it back already) is
 * fine too: either way the task is in ready again. */
static int lr_undo(dq_queue *q, const char *item, size_t itemlen,
                   const dq_task *out)
{
    lr_state *s = q->priv;
    const char *args[6] = {s->kproc, s->kleases, s->ka, s->b.kready, item,
                           out->id};
    size_t lens[6];
    for (int i = 0; i < 6; i++)
        lens[i] = strlen(args[i]);
    lens[4] = itemlen;
    int rc;
    redisReply *r = dq_redis_eval(q, s->b.c, &s->unlease_s, &rc, 4, 6, args,
                                  lens);
    if (r == NULL)
        return rc;
    freeReplyObject(r);
    return DQ_OK;
}

static const lm_claim_ops lr_claim_ops = {lr_take, lr_undo};

static int lr_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    lr_state *s = q->priv;
    return lm_claim(q, &s->b, s->kproc, timeout_ms, out, &lr_claim_ops);
}

static int lr_ack(dq_queue *q, const dq_task *t)
{
    lr_state *s = q->priv;
    char item[DQ_ID_MAX + 32];
    if (t->token[0] == '\0' ||
        lm_format_item(item, sizeof(item), t->due_ms, t->id) < 0)
        return dq_fail(q, DQ_EINVAL, "ack: task %s was not claimed here",
                       t->id);
    const char *args[8] = {s->kproc, s->kleases, s->b.kp, s->ka,
                           s->b.kready, item, t->id, t->token};
    int64_t n;
    int rc = dq_redis_eval_int(q, s->b.c, &s->ack_s, 5, 8, args, NULL,
                               "ack: unexpected reply", &n);
    if (rc != DQ_OK)
        return rc;
    if (n == 0)
        return dq_fail(q, DQ_ENOTFOUND,
                       "ack: lease of %s (attempt %s) ran out and the task "
                       "was delivered again", t->id, t->token);
    return DQ_OK;
}

const dq_strategy dq_strategy_list_reliable = {
    .name = "list-reliable",
    .summary = "list + BLMOVE into a per-consumer processing list, leases "
               "and a reaper; at-least-once",
    .flags = DQ_G_AT_LEAST_ONCE | DQ_G_SURVIVES_CONSUMER_CRASH |
             DQ_G_NEEDS_REDIS | DQ_G_BLOCKS | DQ_G_NO_DUP_CONCURRENT |
             DQ_G_DUE_ORDER | DQ_G_SURVIVES_PROCESS_EXIT,
    .min_redis = "6.2.0",
    .options = lr_options,
    .open = lr_open,
    .enqueue = lm_enqueue,
    .claim = lr_claim,
    .ack = lr_ack,
    .close = lr_close,
    .pending = lm_pending,
    .purge = lm_purge,
    .exists = lm_exists,
    .doc = "list's enqueue and mover, plus the reliable-queue pattern: a "
        "consumer moves the ready item into its own processing list with "
        "BLMOVE (Redis 6.2), records a lease (ZSet item -> now + "
        "lease_ms) and the attempt in one script, and ack removes the item "
        "and the task's keys in another.  A reaper in the mover puts items "
        "whose lease ran out back at the tail of ready, behind the tasks "
        "already ready.  Per task: 1 enqueue script, part of a move, BLMOVE "
        "+ 1 script, 1 ack script.  At-least-once: a consumer killed "
        "between claim and ack loses nothing (redelivered with attempt + 1 "
        "after lease_ms).  Work that outlasts the lease: a late ack is "
        "accepted while nobody has taken the task again; once another "
        "consumer has, the task is processed twice and the late ack is "
        "refused, and a task that always outlasts its lease goes round "
        "every lease_ms, never acked (no dead-letter limit), while the "
        "other tasks still come out.",
};
