/* lua_lease.c -- the Lua claim with a lease (visibility timeout) instead of
 * a delete: at-least-once.
 *
 * How it works.  The same ZSet + hash layout as naive and lua, plus two
 * hashes for tasks that have been claimed and not yet acked:
 *   dq:{Q}:z  ZSet  id -> due ms, or, while leased, the lease deadline
 *   dq:{Q}:p  hash  id -> payload
 *   dq:{Q}:a  hash  id -> attempts so far (HINCRBY at every claim)
 *   dq:{Q}:d  hash  id -> original due ms (written at the first claim,
 *                   when the score stops being the due time)
 *   dq:{Q}:dead ZSet id -> ms when dead-lettered (max_attempts, dq.h)
 *
 *   enqueue  MULTI; HSET p id payload; HDEL a id; HDEL d id; ZADD z due id;
 *            EXEC                                          (1 round trip)
 *   claim    EVALSHA <claim script> 5 z p a d dead <now|""> <lease_ms>
 *            <max_attempts> (1 round trip).  The script takes the first id
 *            with score <= now (ZRANGEBYSCORE ... LIMIT 0 1) and, instead
 *            of removing it, re-scores it to now + lease_ms (ZADD z),
 *            HINCRBY a id 1, HSETNX-style keeps the original due in d,
 *            and returns
 *            {1, now, -, id, due, attempt, deadline, payload}.  When
 *            nothing is due it returns the head's score (as lua.c does) and
 *            the client sleeps min(head - now, poll_ms, time left).
 *            With max_attempts=N > 0, a due task whose count a[id] is
 *            already N is moved to the dead-letter set instead (ZREM z,
 *            HDEL d, ZADD dead now id; payload and count stay in p and a)
 *            and the script tries the next due task.
 *   nack     EVALSHA <nack script> 2 z a <now|""> id attempt deadline delay
 *            (1 round trip): under the ack script's test (the lease is
 *            still ours), ZADD z now+delay id.  The task then waits in z
 *            like a task whose lease ran out, and comes back at its retry
 *            time with attempt + 1 and its original due_ms: the retry time
 *            lives in Redis, so a consumer that crashes right after the
 *            nack loses nothing (claim C26's "re-add with score now +
 *            retry interval", done atomically with the lease check).
 *   ack      EVALSHA <ack script> 4 z p a d id attempt deadline
 *            (1 round trip): deletes the task (ZREM z, HDEL p a d) only
 *            when the lease is still ours: ZSCORE z id == the deadline we
 *            set AND a[id] == our attempt.  Otherwise DQ_ENOTFOUND
 *            ("lease lost").  dq_task.token carries "<attempt>:<deadline>".
 *   cancel   MULTI; ZREM z id; HDEL p/a/d id; EXEC   (also a leased task)
 *   reschedule  script: ZADD XX only when id is in z and not in d (never
 *            claimed); DQ_ENOTFOUND for a leased or redeliverable task.
 *   pending  MULTI; ZCARD z; HLEN d; EXEC -> ZCARD - HLEN: tasks never
 *            claimed.  A task whose lease ran out and waits for redelivery
 *            is not counted (it is neither pending nor done).
 *   dead_letters  ZCARD dead; dead_letter_ids  ZRANGE dead, in pages.
 * Per delivered task without contention: 3 round trips (enqueue, claim,
 * ack), 4 writes more than lua (re-score, HINCRBY, HSET d, and the ack's
 * deletes).
 * Batched enqueue (enqueue_many): one MULTI; HSET p id pl ...; HDEL a ids...;
 * HDEL d ids...; ZADD z due id ...; EXEC per 1000 tasks (dq_zh_enqueue_many).
 *
 * Guarantee: at-least-once with a visibility timeout, as Sidekiq's retry
 * set and Asynq's lease do.  A task that is claimed and not acked within
 * lease_ms (the consumer crashed, hung, or was too slow) becomes due again
 * at its lease deadline and is redelivered with attempt + 1 and its
 * original due_ms (claims C12, C21).  So a consumer crash loses no task.
 * Both scripts run atomically (https://redis.io/docs/interact/
 * programmability/eval-intro/), so two consumers never hold the same lease:
 * no duplicates among concurrent consumers as long as each finishes its
 * work within lease_ms and nothing fails; after a lease expiry the same
 * task IS processed twice (the first holder may still be working) --
 * processing must be idempotent.  Due order for one consumer, counting the
 * redelivery of an expired lease at its lease deadline.  Never early with
 * clock=client: the script's "now" is this handle's dq_now_ms, and the
 * original due <= every later score <= now.
 *
 * Late ack: an ack after the lease ran out is still accepted when nobody
 * re-claimed the task meanwhile (the score is still our deadline): the
 * work was done once, and nobody else holds it.  Once another consumer has
 * re-claimed it, the deadline and attempt differ and the late ack returns
 * DQ_ENOTFOUND without touching the other consumer's lease: that task will
 * be delivered (at least) twice.
 *
 * Options: lease_ms (visibility timeout, default 30000: choose it longer
 * than the longest work time, and the trial's grace period longer than it
 * to see redeliveries), poll_ms (longest sleep when nothing is due),
 * max_attempts (deliveries before the dead-letter set, 0 = unlimited),
 * clock=client|server.  clock=server takes "now" from redis.call('TIME')
 * inside the script (allowed since scripts replicate their effects; needs
 * Redis 5.0) so every consumer uses one clock for due times AND lease
 * deadlines; a task due by the server's clock but not yet by this handle's
 * clock is held (leased) by the handle until its clock reaches the due
 * time, so dq_claim never returns it early by dq_now_ms.  No batch option:
 * one task per script call.
 *
 * Failure modes: a connection lost during the claim's EVALSHA returns
 * DQ_EIO; if the script ran, the task is leased to nobody and comes back
 * after lease_ms (not lost, only late).  A lost ack comes back the same
 * way (a duplicate delivery).  Without max_attempts (the default, 0) a
 * task that always crashes its consumer is redelivered forever, attempt
 * growing; with max_attempts=N it is dead-lettered by the claim that
 * would deliver it the N+1th time: until some claim finds it due, a task
 * that has had its N deliveries is still in z, not yet in dead.  cancel of
 * a leased task removes it; the holder's ack then gets DQ_ENOTFOUND.
 * With clock=client, consumers with skewed clocks disagree on lease
 * deadlines: a consumer whose clock runs ahead by more than lease_ms takes
 * over live leases (duplicates).
 *
 * Redis behaviour relied on:
 *   EVALSHA / NOSCRIPT: https://redis.io/commands/evalsha/
 *   Lua false -> RESP nil, Lua numbers -> integers:
 *     https://redis.io/docs/interact/programmability/lua-api/
 *   ZRANGEBYSCORE inclusive bounds, LIMIT: https://redis.io/commands/zrangebyscore/
 *   HINCRBY creates the field at 0: https://redis.io/commands/hincrby/
 *   TIME in scripts (effects replication): https://redis.io/commands/time/
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rconn.h"
#include "zlua.h"

/* KEYS: z p a d dead.  ARGV: now ms ("" = server TIME), lease ms,
 * max_attempts (0: unlimited).
 * Returns {0, now, head score|false} or
 *         {1, now, false, id, due, attempt, deadline, payload|false}.
 * A due task already delivered max_attempts times is moved to the
 * dead-letter set (ZREM z, HDEL d, ZADD dead now; payload and count stay)
 * and the next due one is tried, at most DEAD_PER_CALL per call; after
 * that the reply is "nothing due, head due now", so the client calls
 * again at once. */
#define DEAD_PER_CALL "100"
static const char claim_src[] =
    DQ_ZLUA_NOW_SRC
    "local max = tonumber(ARGV[3])\n"
    "for _ = 1, " DEAD_PER_CALL " do\n"
    "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nows,\n"
    "                       'WITHSCORES', 'LIMIT', 0, 1)\n"
    DQ_ZLUA_NONE_DUE_SRC
    "local id = due[1]\n"
    "if max > 0 and\n"
    "   tonumber(redis.call('HGET', KEYS[3], id) or '0') >= max then\n"
    "  redis.call('ZREM', KEYS[1], id)\n"
    "  redis.call('HDEL', KEYS[4], id)\n"
    "  redis.call('ZADD', KEYS[5], nows, id)\n"
    "else\n"
    "local deadline = string.format('%d', now + tonumber(ARGV[2]))\n"
    "redis.call('ZADD', KEYS[1], deadline, id)\n"
    "local attempt = redis.call('HINCRBY', KEYS[3], id, 1)\n"
    "local orig = redis.call('HGET', KEYS[4], id)\n"
    "if not orig then\n"
    "  orig = due[2]\n"
    "  redis.call('HSET', KEYS[4], id, orig)\n"
    "end\n"
    "return {1, nows, false, id, orig, attempt, deadline,\n"
    "        redis.call('HGET', KEYS[2], id)}\n"
    "end\n"
    "end\n"
    "return {0, nows, nows}\n";

/* KEYS: z p a d.  ARGV: id, attempt, deadline.  1 = acked, 0 = lease lost. */
static const char ack_src[] =
    "local s = redis.call('ZSCORE', KEYS[1], ARGV[1])\n"
    "local a = redis.call('HGET', KEYS[3], ARGV[1])\n"
    "if not s or not a or tonumber(s) ~= tonumber(ARGV[3]) or\n"
    "   tonumber(a) ~= tonumber(ARGV[2]) then\n"
    "  return 0\n"
    "end\n"
    "redis.call('ZREM', KEYS[1], ARGV[1])\n"
    "redis.call('HDEL', KEYS[2], ARGV[1])\n"
    "redis.call('HDEL', KEYS[3], ARGV[1])\n"
    "redis.call('HDEL', KEYS[4], ARGV[1])\n"
    "return 1\n";

/* KEYS: z a.  ARGV: now ms ("" = server TIME), id, attempt, deadline,
 * delay ms.  When the lease is still ours (the ack script's test), re-scores
 * the task to now + delay (one ms later if that is our lease deadline
 * itself, so that our token can never match again) and returns 1; the
 * attempt count and the original due time stay.  0 = lease lost. */
static const char nack_src[] =
    DQ_ZLUA_NOW_SRC
    "local s = redis.call('ZSCORE', KEYS[1], ARGV[2])\n"
    "local a = redis.call('HGET', KEYS[2], ARGV[2])\n"
    "if not s or not a or tonumber(s) ~= tonumber(ARGV[4]) or\n"
    "   tonumber(a) ~= tonumber(ARGV[3]) then\n"
    "  return 0\n"
    "end\n"
    "local at = now + tonumber(ARGV[5])\n"
    "if at == tonumber(ARGV[4]) then at = at + 1 end\n"
    "redis.call('ZADD', KEYS[1], string.format('%d', at), ARGV[2])\n"
    "return 1\n";

/* KEYS: z d.  ARGV: id, due.  1 = moved, 0 = not pending (absent, leased
 * or waiting for redelivery). */
static const char resched_src[] =
    "if not redis.call('ZSCORE', KEYS[1], ARGV[1]) or\n"
    "   redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then\n"
    "  return 0\n"
    "end\n"
    "redis.call('ZADD', KEYS[1], 'XX', ARGV[2], ARGV[1])\n"
    "return 1\n";

typedef struct ll_priv {
    redisContext *c;
    dq_script claim, ack, resched, nack; /* per handle: sha written on
                                            first use */
    int64_t lease_ms;
    int64_t poll_ms;
    int64_t max_attempts;  /* 0: unlimited */
    bool server_clock;
    char zkey[128], pkey[128], akey[128], dkey[128], deadkey[128];
    dq_held held;  /* one slot: the task the claim script just leased to
                      us (clock=server: due by Redis, maybe not yet by us) */
} ll_priv;

static const dq_optdef ll_options[] = {
    DQ_OPTDEF_INT("lease_ms", "30000", 1, 86400000,
                  "visibility timeout: an un-acked task comes back after "
                  "this many ms (1..86400000)"),
    DQ_OPTDEF_INT("poll_ms", "100", 1, 60000,
                  "longest sleep when nothing is due, ms (1..60000)"),
    DQ_OPTDEF_CHOICE("clock", "client", "client|server",
                     "whose clock decides due times and lease deadlines: "
                     "client (this handle) or server (Redis TIME)"),
    DQ_OPTDEF_INT("max_attempts", "0", 0, 1000000000,
                  "deliveries before a task goes to the dead-letter set "
                  "dq:{Q}:dead instead (0: unlimited)"),
    DQ_OPTDEF_END,
};

static int ll_open(dq_queue *q)
{
    ll_priv *p;
    int rc;

    p = calloc(1, sizeof *p);
    if (p == NULL)
        return dq_fail(q, DQ_ENOMEM, "lua-lease: out of memory");
    p->claim.src = claim_src;
    p->ack.src = ack_src;
    p->resched.src = resched_src;
    p->nack.src = nack_src;
    if ((rc = dq_opt_i64(q, "lease_ms", &p->lease_ms)) != DQ_OK ||
        (rc = dq_opt_i64(q, "poll_ms", &p->poll_ms)) != DQ_OK ||
        (rc = dq_opt_i64(q, "max_attempts", &p->max_attempts)) != DQ_OK)
        goto free_priv;
    /* "client" or "server": checked against ll_options by dq_open. */
    p->server_clock = strcmp(dq_opt_get(q, "clock"), "server") == 0;
    dq_redis_key(q, DQ_ZH_ZSET, p->zkey, sizeof p->zkey);
    dq_redis_key(q, DQ_ZH_HASH, p->pkey, sizeof p->pkey);
    dq_redis_key(q, "a", p->akey, sizeof p->akey);
    dq_redis_key(q, "d", p->dkey, sizeof p->dkey);
    dq_redis_key(q, "dead", p->deadkey, sizeof p->deadkey);
    rc = dq_zlua_open(q, p->server_clock, &p->held, 1, &p->c);
    if (rc != DQ_OK)
        goto free_priv;
    q->priv = p;
    return DQ_OK;

free_priv:
    free(p);
    return rc;
}

static void ll_close(dq_queue *q)
{
    ll_priv *p = q->priv;

    if (p == NULL)
        return;
    /* A held task stays leased in Redis and comes back after lease_ms. */
    dq_zlua_close(&p->held, p->c);
    free(p);
    q->priv = NULL;
}

static int ll_enqueue(dq_queue *q, const char *id, const void *payload,
                      size_t payload_len, int64_t due_ms)
{
    ll_priv *p = q->priv;
    char due[32];
    const char *hset[4] = {"HSET", p->pkey, id, payload};
    const size_t hlen[4] = {4, strlen(p->pkey), strlen(id), payload_len};
    const char *hdel_a[3] = {"HDEL", p->akey, id};
    const char *hdel_d[3] = {"HDEL", p->dkey, id};
    const char *zadd[4] = {"ZADD", p->zkey, due, id};
    const dq_redis_argv cmds[4] = {{4, hset, hlen}, {3, hdel_a, NULL},
                                   {3, hdel_d, NULL}, {4, zadd, NULL}};
    redisReply *r;
    int rc;

    snprintf(due, sizeof due, "%lld", (long long)due_ms);
    r = dq_redis_multi(q, p->c, &rc, 4, cmds);
    freeReplyObject(r);
    return rc;
}

/* Batched enqueue: one MULTI/EXEC of variadic HSET and ZADD per 1000
 * items (dq_zh_enqueue_many). */
static int ll_enqueue_many(dq_queue *q, const dq_enqueue_item *items,
                           size_t n)
{
    ll_priv *p = q->priv;
    const char *const clear[2] = {p->akey, p->dkey};

    return dq_zh_enqueue_many(q, p->c, items, n, clear, 2);
}

/* Fills *t from the claim script's reply elements 3..7. */
static int ll_fill_task(dq_queue *q, const redisReply *r, dq_task *t)
{
    int64_t attempt, deadline;
    int rc;

    /* On error the task is leased; it comes back after lease_ms. */
    rc = dq_zlua_task_copy(q, r->element[3], r->element[4], r->element[7], 0,
                           t);
    if (rc != DQ_OK)
        return rc;
    if (!dq_reply_int(r->element[5], &attempt) || attempt < 1 ||
        attempt > 1000000000 || !dq_reply_int(r->element[6], &deadline)) {
        dq_task_clear(t);
        return dq_fail(q, DQ_EPROTO, "claim script: bad task in reply");
    }
    t->attempt = (int)attempt;
    snprintf(t->token, sizeof t->token, "%lld:%lld", (long long)attempt,
             (long long)deadline);
    return DQ_OK;
}

/* One claim script call: a dq_zlua_fetch_fn (zlua.h).  A task it gets is
 * leased to us and goes into the one slot of p->held. */
static int ll_run_claim(dq_queue *q, int64_t *wait_us)
{
    ll_priv *p = q->priv;
    dq_task *t = &p->held.tasks[0];
    char now[32], lease[32], max[32];
    const char *args[8] = {p->zkey, p->pkey, p->akey, p->dkey, p->deadkey,
                           now, lease, max};
    redisReply *r;
    int64_t n, srv_now;
    int rc;

    *wait_us = -1;
    dq_zlua_now_arg(q, p->server_clock, now, sizeof now);
    snprintf(lease, sizeof lease, "%lld", (long long)p->lease_ms);
    snprintf(max, sizeof max, "%lld", (long long)p->max_attempts);
    r = dq_redis_eval(q, p->c, &p->claim, &rc, 5, 8, args, NULL);
    if (r == NULL)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
        !dq_reply_int(r->element[0], &n) || (n != 0 && n != 1) ||
        r->elements != (n ? 8u : 3u) ||
        !dq_reply_int(r->element[1], &srv_now)) {
        rc = dq_fail(q, DQ_EPROTO, "claim script: unexpected reply");
        goto free_reply;
    }
    if (n == 1) {
        if ((rc = ll_fill_task(q, r, t)) == DQ_OK) {
            p->held.head = 0;
            p->held.count = 1;
        } else {
            dq_task_clear(t);
        }
        goto free_reply;
    }
    rc = dq_zlua_head_wait(q, r->element[2], p->server_clock, srv_now,
                           wait_us);
free_reply:
    freeReplyObject(r);
    return rc;
}

static int ll_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    ll_priv *p = q->priv;

    return dq_zlua_claim(q, &p->held, timeout_ms, p->poll_ms, ll_run_claim,
                         out);
}

/* Splits "<attempt>:<deadline>" into two decimal strings. */
static bool ll_parse_token(const char *tok, char *attempt, size_t alen,
                           char *deadline, size_t dlen)
{
    const char *colon = strchr(tok, ':');
    size_t n;

    if (colon == NULL || colon == tok || colon[1] == '\0')
        return false;
    n = (size_t)(colon - tok);
    if (n >= alen || strlen(colon + 1) >= dlen)
        return false;
    for (const char *c = tok; *c; c++)
        if (c != colon && (*c < '0' || *c > '9'))
            return false;
    memcpy(attempt, tok, n);
    attempt[n] = '\0';
    snprintf(deadline, dlen, "%s", colon + 1);
    return true;
}

static int ll_ack(dq_queue *q, const dq_task *t)
{
    ll_priv *p = q->priv;
    char attempt[24], deadline[24];
    const char *args[7] = {p->zkey, p->pkey, p->akey, p->dkey, t->id,
                           attempt, deadline};
    int64_t ok = 0;
    int rc;

    if (!ll_parse_token(t->token, attempt, sizeof attempt, deadline,
                        sizeof deadline))
        return dq_fail(q, DQ_EINVAL, "ack %s: token '%.64s' is not a "
                       "lua-lease token (attempt:deadline)", t->id, t->token);
    rc = dq_redis_eval_int(q, p->c, &p->ack, 4, 7, args, NULL,
                           "ack script: unexpected reply", &ok);
    if (rc == DQ_OK && ok != 1)
        rc = dq_fail(q, DQ_ENOTFOUND, "ack %s: lease lost (attempt %s, lease "
                     "until %s ms): it expired and the task was claimed again, "
                     "or it was acked or cancelled", t->id, attempt, deadline);
    return rc;
}

/* nack: one script (nack_src) re-scores the task to now + delay_ms while
 * the lease is still ours; the task then waits in z like a lease that ran
 * out, and is redelivered with attempt + 1 and its original due time. */
static int ll_nack(dq_queue *q, const dq_task *t, int64_t delay_ms)
{
    ll_priv *p = q->priv;
    char now[32], attempt[24], deadline[24], delay[24];
    const char *args[7] = {p->zkey, p->akey, now, t->id, attempt, deadline,
                           delay};
    int64_t ok = 0;
    int rc;

    if (!ll_parse_token(t->token, attempt, sizeof attempt, deadline,
                        sizeof deadline))
        return dq_fail(q, DQ_EINVAL, "nack %s: token '%.64s' is not a "
                       "lua-lease token (attempt:deadline)", t->id, t->token);
    dq_zlua_now_arg(q, p->server_clock, now, sizeof now);
    snprintf(delay, sizeof delay, "%lld", (long long)delay_ms);
    rc = dq_redis_eval_int(q, p->c, &p->nack, 2, 7, args, NULL,
                           "nack script: unexpected reply", &ok);
    if (rc == DQ_OK && ok != 1)
        rc = dq_fail(q, DQ_ENOTFOUND, "nack %s: lease lost (attempt %s, "
                     "lease until %s ms): it expired and the task was claimed "
                     "again, or it was acked, nacked or cancelled", t->id,
                     attempt, deadline);
    return rc;
}

static int64_t ll_dead_letters(dq_queue *q)
{
    ll_priv *p = q->priv;
    const char *argv[2] = {"ZCARD", p->deadkey};
    redisReply *r;
    int64_t n;
    int rc;

    r = dq_redis_cmd(q, p->c, &rc, 2, argv, NULL);
    if (r == NULL)
        return rc;
    if (!dq_reply_int(r, &n))
        n = dq_fail(q, DQ_EPROTO, "ZCARD: expected an integer");
    freeReplyObject(r);
    return n;
}

static int ll_dead_letter_ids(dq_queue *q, dq_id_fn fn, void *arg)
{
    ll_priv *p = q->priv;

    return dq_redis_zset_each(q, p->c, p->deadkey, fn, arg);
}

static int ll_cancel(dq_queue *q, const char *id)
{
    ll_priv *p = q->priv;
    const char *zrem[3] = {"ZREM", p->zkey, id};
    const char *hdel_p[3] = {"HDEL", p->pkey, id};
    const char *hdel_a[3] = {"HDEL", p->akey, id};
    const char *hdel_d[3] = {"HDEL", p->dkey, id};
    const dq_redis_argv cmds[4] = {{3, zrem, NULL}, {3, hdel_p, NULL},
                                   {3, hdel_a, NULL}, {3, hdel_d, NULL}};
    redisReply *r;
    int64_t removed;
    int rc;

    r = dq_redis_multi(q, p->c, &rc, 4, cmds);
    if (r == NULL)
        return rc;
    if (!dq_reply_int(r->element[0], &removed))
        rc = dq_fail(q, DQ_EPROTO, "ZREM: expected an integer");
    else if (removed == 0)
        rc = dq_fail(q, DQ_ENOTFOUND, "cancel %s: no such task", id);
    freeReplyObject(r);
    return rc;
}

static int ll_reschedule(dq_queue *q, const char *id, int64_t due_ms)
{
    ll_priv *p = q->priv;
    char due[32];
    const char *args[4] = {p->zkey, p->dkey, id, due};
    int64_t ok = 0;
    int rc;

    snprintf(due, sizeof due, "%lld", (long long)due_ms);
    rc = dq_redis_eval_int(q, p->c, &p->resched, 2, 4, args, NULL,
                           "reschedule script: unexpected reply", &ok);
    if (rc == DQ_OK && ok != 1)
        rc = dq_fail(q, DQ_ENOTFOUND, "reschedule %s: no such pending task "
                     "(absent, or claimed and not acked)", id);
    return rc;
}

static int64_t ll_pending(dq_queue *q)
{
    ll_priv *p = q->priv;
    const char *zcard[2] = {"ZCARD", p->zkey};
    const char *hlen[2] = {"HLEN", p->dkey};
    const dq_redis_argv cmds[2] = {{2, zcard, NULL}, {2, hlen, NULL}};
    redisReply *r;
    int64_t all, claimed, n;
    int rc;

    r = dq_redis_multi(q, p->c, &rc, 2, cmds);
    if (r == NULL)
        return rc;
    if (!dq_reply_int(r->element[0], &all) ||
        !dq_reply_int(r->element[1], &claimed))
        n = dq_fail(q, DQ_EPROTO, "ZCARD/HLEN: expected integers");
    else
        n = all >= claimed ? all - claimed : 0;
    freeReplyObject(r);
    return n;
}

static int ll_purge(dq_queue *q)
{
    ll_priv *p = q->priv;

    dq_held_drop(&p->held);
    return dq_redis_purge(q, p->c);
}

static int ll_exists(dq_queue *q)
{
    ll_priv *p = q->priv;

    return dq_redis_exists(q, p->c);
}

const dq_strategy dq_strategy_lua_lease = {
    .name = "lua-lease",
    .summary = "Lua claim that leases instead of deleting (visibility "
               "timeout lease_ms): at-least-once, un-acked tasks come back",
    .flags = DQ_G_AT_LEAST_ONCE | DQ_G_SURVIVES_CONSUMER_CRASH |
             DQ_G_NEEDS_REDIS | DQ_G_POLLS | DQ_G_NO_DUP_CONCURRENT |
             DQ_G_DUE_ORDER | DQ_G_SURVIVES_PROCESS_EXIT |
             DQ_G_ZSET_LAYOUT,
    .min_redis = NULL, /* clock=server checks for 5.0.0 at open */
    .options = ll_options,
    .open = ll_open,
    .enqueue = ll_enqueue,
    .claim = ll_claim,
    .ack = ll_ack,
    .close = ll_close,
    .cancel = ll_cancel,
    .reschedule = ll_reschedule,
    .pending = ll_pending,
    .purge = ll_purge,
    .exists = ll_exists,
    .doc = "Like lua, but the claim script leases the task instead of "
        "deleting it: it re-scores the id to now + lease_ms, counts the "
        "attempt (HINCRBY) and keeps the original due time; ack (a second "
        "script) deletes the task only while the lease is still ours.  Per "
        "task: 3 round trips (enqueue, claim, ack).  At-least-once: a task "
        "not acked within lease_ms (consumer crashed, hung or too slow) "
        "comes back with attempt + 1, so a consumer crash loses nothing, "
        "but work that outlasts the lease is done twice and must be "
        "idempotent (claims C12, C21).  nack re-scores a claimed task to "
        "now + delay while the lease is ours (a retry time kept in Redis, "
        "C26); max_attempts=N moves a task delivered N times to the "
        "dead-letter set dq:{Q}:dead instead of delivering it again.",
    .enqueue_many = ll_enqueue_many,
    .nack = ll_nack,
    .dead_letters = ll_dead_letters,
    .dead_letter_ids = ll_dead_letter_ids,
    .witness = "lease-redelivery",
};
