/* list_mover.c -- the mover of the Redisson-style delay queue, shared by
 * `list` and `list-reliable`, plus their common enqueue/pending/purge.
 *
 * The design is Redisson's RDelayedQueue (org.redisson.RedissonDelayedQueue
 * with QueueTransferTask): delayed tasks wait in a ZSet scored by due time;
 * a "transfer task" moves the due ones into a plain List, and consumers
 * block on that List (BLPOP) instead of polling the ZSet.  The transfer
 * task does not poll either: it sleeps until the earliest due time, and a
 * producer whose task becomes the new earliest one publishes that due time
 * on a channel, which wakes the transfer tasks early.
 *
 * Enqueue, one script (1 round trip; enqueue_many: one EVAL per chunk of
 * up to LM_ENQUEUE_CHUNK tasks):
 *   old = ZRANGE z 0 0 WITHSCORES; HSET p id payload ...; ZADD z due id ...;
 *   if ZRANGE z 0 0 WITHSCORES differs from old then PUBLISH wake <head due>
 * Mover, one script per wake-up (atomic, so any number of movers in any
 * number of processes never move a task twice):
 *   ZRANGEBYSCORE z -inf now WITHSCORES LIMIT 0 move_batch;
 *   list: HMGET p ids..., RPUSH ready "<due>:0:<idlen>:<id><payload>"...,
 *         HDEL p ids...;
 *   list-reliable: RPUSH ready "<due>:1:<idlen>:<id>"... (attempt 1)
 *   ZREM z ids...; return the new head's due.
 * The item carries the due time so that claim can report the real due
 * time (dq_task.due_ms), not the time of the move, and for list the
 * payload, so that a claim is the one BLPOP (Redisson's queue likewise
 * moves the encoded value itself).  The id's length in the item keeps it
 * binary-safe.  The mover then waits until min(head due, now +
 * poll_cap_ms) on its SUBSCRIBEd connection; a message "<due>" on the
 * wake channel pulls the next run earlier.  poll_cap_ms bounds the damage
 * of a lost message (the subscriber was reconnecting: Pub/Sub is
 * fire-and-forget, https://redis.io/docs/interact/pubsub/ "at-most-once
 * message delivery").
 *
 * Where movers run: one mover thread per queue and process, as Redisson
 * runs one transfer task per client and queue.  The handles of a process
 * share it through the dq_local space of their config (dq_local_get under
 * a name made of the strategy, queue, server, db, user, clock offset and
 * the mover's options, so handles that would run different movers -- a
 * consumer with a skewed clock in a clock-skew trial -- do not share one);
 * a handle opened without a dq_local gets a mover of its own.  The thread
 * starts at the first claim of any handle (a producer-only process runs
 * none) and runs while a handle that claimed is open: when the last of
 * them closes, it is stopped and joined, and a later claim starts it
 * again.  It has its own handle copy (strings copied, client name
 * dqlab:<queue>:mover) and two connections: one SUBSCRIBEd to
 * dq:{Q}:wake, one for EVALSHA.  So one publish wakes one mover per
 * process, and the mover's counters go to whichever of its handles claims
 * or closes next (the sum over the handles is the total).  Before, each
 * consumer handle ran its own: with N consumers one publish woke N movers
 * and N-1 of their scripts found nothing.  A process that dies takes its
 * mover with it; the tasks it had moved are in the ready list, in Redis,
 * and the movers of other processes go on.
 *
 * The mover sleeps with ppoll() on the subscribed socket (microsecond
 * timeout, so lateness is ~1 ms, not a poll interval) and reads messages
 * with redisBufferRead + redisReaderGetReply: no socket-timeout errors to
 * clear from the context.  Stopping is prompt: the stop flag is set, the
 * condition the mover waits on between reconnects is signalled, and the
 * subscribed socket is shutdown(), which ends the ppoll() at once.
 *
 * list-reliable's reaper (lease_ms > 0) also runs in the mover, so once
 * per process too, one script: for each processing list named in
 * dq:{Q}:procs, each item whose lease in dq:{Q}:leases has run out goes
 * back to the TAIL of ready (LREM + ZREM + RPUSH), as if it fell due at
 * its lease expiry: behind the tasks moved before it, ahead of those that
 * fall due later.  Not the head: a task given back there is the next one
 * any consumer takes, so a consumer whose work outlasts the lease (its
 * late ack refused once the task was taken again) was handed the same
 * task over and over, and with two such consumers two tasks were
 * delivered dozens of times while the rest of the queue was never
 * delivered at all.  An item with no lease at all (its consumer died
 * between BLMOVE and recording the lease) gets one of lease_ms from now.
 * The reaper runs at the earliest lease expiry, and at least every
 * min(poll_cap_ms, lease_ms).
 *
 * REAP_LUA breaks a documented rule: it reads and writes the processing
 * lists, whose names it takes from the procs set, not from KEYS.  Redis
 * requires every key a script touches to be passed in KEYS
 * (https://redis.io/docs/interact/programmability/eval-intro/), so that a
 * cluster can route the script and check that all keys are in one slot.
 * It works here only because those lists are all dq:{Q}:proc:<consumer>,
 * sharing the queue's hash tag {Q} with the KEYS given, so on a standalone
 * server or in Redis Cluster they lie in the one slot the script runs on;
 * a server that enforces the rule (or a proxy that routes by KEYS only
 * and splits the tag) would refuse or misroute it.
 *
 * Failure modes: a mover that loses Redis retries with backoff (50 ms ..
 * 1 s) and then moves everything due at once; while no mover runs (no
 * consumer, or every consumer gone) due tasks wait in the ZSet.  A mover
 * whose clock runs ahead moves tasks early for everybody (claim then waits
 * for the due time by its own clock, lm_wait_until_due, but not past its
 * timeout: a task still early at the claim deadline goes back to the head
 * of ready, lm_claim).  Tasks already in the ready List are delivered in
 * the order they were moved: a task that arrives already due after a
 * later-due task was moved comes after it.  A list item holds its
 * payload, so a large payload makes every push and pop of it that large.
 *
 * Redis behaviour relied on: scripts run atomically
 * (https://redis.io/docs/interact/programmability/eval-intro/); ZRANGEBYSCORE
 * with LIMIT (https://redis.io/commands/zrangebyscore/); PUBLISH from a
 * script; SUBSCRIBE replies and "message" arrays
 * (https://redis.io/docs/interact/pubsub/); ZSet scores are doubles, exact
 * for integers up to 2^53 (dq_enqueue rejects due times beyond that), and
 * Lua's string.format('%.0f') prints them exactly; Lua strings are
 * byte strings (binary-safe payloads); Redis's Lua 5.1 unpack() takes at
 * most about 8000 values (LUAI_MAXCSTACK), so the scripts pass long
 * argument lists in slices of LUA_SLICE.
 */
#define _GNU_SOURCE
#include "list_mover.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/read.h>

/* ---- Scripts ----------------------------------------------------------- */

/* Calls redis.call(cmd, key, t[1..n]) in slices of 1000 values (unpack's
 * limit, top comment); returns the replies of the slices, concatenated
 * when they are arrays (HMGET). */
#define LUA_SLICE                                                          \
    "local function each(cmd, key, t, n)\n"                                \
    "  local out, k = {}, 0\n"                                             \
    "  for i = 1, n, 1000 do\n"                                            \
    "    local r = redis.call(cmd, key, unpack(t, i, math.min(i + 999, n)))\n" \
    "    if type(r) == 'table' then\n"                                     \
    "      for j = 1, #r do k = k + 1; out[k] = r[j] end\n"                \
    "    end\n"                                                            \
    "  end\n"                                                              \
    "  return out\n"                                                       \
    "end\n"

/* KEYS: z p   ARGV: channel, then id payload due for each task.
 * Publishes the head's due time when the earliest task changed.  Returns
 * the number of tasks. */
static const char ENQUEUE_LUA[] =
    LUA_SLICE
    "local old = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"
    "local n = (#ARGV - 1) / 3\n"
    "local h, z = {}, {}\n"
    "for i = 0, n - 1 do\n"
    "  local a = 2 + 3 * i\n"
    "  h[2*i+1] = ARGV[a]; h[2*i+2] = ARGV[a+1]\n"
    "  z[2*i+1] = ARGV[a+2]; z[2*i+2] = ARGV[a]\n"
    "end\n"
    "each('HSET', KEYS[2], h, 2 * n)\n"
    "each('ZADD', KEYS[1], z, 2 * n)\n"
    "local new = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"
    "if new[1] ~= old[1] or new[2] ~= old[2] then\n"
    "  redis.call('PUBLISH', ARGV[1], new[2])\n"
    "end\n"
    "return n\n";

/* KEYS: z ready p   ARGV: now_ms batch with_payload ("1": list) attempt
 * (the items' attempt field: "0" for list, "1" for list-reliable).
 * Returns {moved, head due as text or ""}.  A task whose payload is gone
 * (purged under us) is dropped, not moved. */
static const char MOVE_LUA[] =
    LUA_SLICE
    "local r = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1],\n"
    "    'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))\n"
    "local n = #r / 2\n"
    "if n > 0 then\n"
    "  local ids, items, k = {}, {}, 0\n"
    "  for i = 1, n do ids[i] = r[2*i-1] end\n"
    "  local pl = nil\n"
    "  if ARGV[3] == '1' then pl = each('HMGET', KEYS[3], ids, n) end\n"
    "  for i = 1, n do\n"
    "    local it = string.format('%.0f', tonumber(r[2*i])) .. ':' ..\n"
    "        ARGV[4] .. ':' .. string.len(ids[i]) .. ':' .. ids[i]\n"
    "    if pl == nil then k = k + 1; items[k] = it\n"
    "    elseif pl[i] then k = k + 1; items[k] = it .. pl[i] end\n"
    "  end\n"
    "  if k > 0 then each('RPUSH', KEYS[2], items, k) end\n"
    "  each('ZREM', KEYS[1], ids, n)\n"
    "  if pl ~= nil then each('HDEL', KEYS[3], ids, n) end\n"
    "end\n"
    "local h = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"
    "return {n, h[2] or ''}\n";

/* KEYS: procs leases ready   ARGV: now_ms lease_ms
 * The processing lists are named in the procs set, not passed in KEYS
 * (against the EVAL rule; works because they share the queue's hash tag,
 * so the same slot: see the top comment).  An item whose lease ran out
 * goes to the TAIL of ready, behind every task already ready (see the top
 * comment: at the head, a consumer whose work outlasts the lease would be
 * handed the same task again and again), with its attempt field one up:
 * the next delivery's number.  Returns {items put back, earliest lease
 * expiry or ""}. */
static const char REAP_LUA[] =
    "local function bump(it)\n"
    "  local c1 = string.find(it, ':', 1, true)\n"
    "  local c2 = c1 and string.find(it, ':', c1 + 1, true)\n"
    "  local a = c2 and tonumber(string.sub(it, c1 + 1, c2 - 1))\n"
    "  if not a then return it end\n"
    "  return string.sub(it, 1, c1) .. string.format('%.0f', a + 1) ..\n"
    "      string.sub(it, c2)\n"
    "end\n"
    "local now = tonumber(ARGV[1])\n"
    "local back = 0\n"
    "for _, pk in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n"
    "  for _, it in ipairs(redis.call('LRANGE', pk, 0, -1)) do\n"
    "    local s = redis.call('ZSCORE', KEYS[2], it)\n"
    "    if not s then\n"
    "      redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), it)\n"
    "    elseif tonumber(s) <= now then\n"
    "      redis.call('LREM', pk, 1, it)\n"
    "      redis.call('ZREM', KEYS[2], it)\n"
    "      redis.call('RPUSH', KEYS[3], bump(it))\n"
    "      back = back + 1\n"
    "    end\n"
    "  end\n"
    "end\n"
    "local h = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')\n"
    "return {back, h[2] or ''}\n";

/* KEYS: z ready */
static const char PENDING_LUA[] =
    "return redis.call('ZCARD', KEYS[1]) + redis.call('LLEN', KEYS[2])\n";

/* ---- The mover --------------------------------------------------------- */

struct lm_mover {
    /* Set when created (name: by the first mover_acquire), read-only
     * afterwards. */
    char *name;              /* its name in cfg.local (malloc'd), or NULL
                                for a private mover */
    dq_queue mq;             /* the mover's own handle: the dq_redis_*
                                helpers write errors and counters here;
                                its cfg strings are the copies below */
    char *host, *user, *password;
    const char *min_redis;
    int64_t poll_cap_ms, batch, lease_ms;
    bool payload_in_item;
    char kz[LM_KEY_MAX], kp[LM_KEY_MAX], kready[LM_KEY_MAX],
        kwake[LM_KEY_MAX], kprocs[LM_KEY_MAX], kleases[LM_KEY_MAX];
    dq_script move_s, reap_s;
    redisContext *cmd, *sub; /* owned by the running thread */

    pthread_mutex_t life;    /* guards claimers, running and th: starting
                                and stopping the thread */
    int claimers;            /* open handles that have claimed */
    bool running;
    pthread_t th;

    pthread_mutex_t mu;      /* guards the fields below */
    pthread_cond_t cv;       /* signalled by stop */
    bool stop;
    int sub_fd;              /* -1 when not subscribed */
    dq_counters acc;         /* counted by the thread, not yet folded */
    char lasterr[256];       /* last error the thread met, for debugging */
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static bool mover_stopping(lm_mover *m)
{
    pthread_mutex_lock(&m->mu);
    bool s = m->stop;
    pthread_mutex_unlock(&m->mu);
    return s;
}

/* Moves the thread's counters to m->acc and keeps the last error. */
static void mover_publish_stats(lm_mover *m)
{
    pthread_mutex_lock(&m->mu);
    m->acc.round_trips += m->mq.counters.round_trips;
    m->acc.empty_polls += m->mq.counters.empty_polls;
    m->acc.wakeups += m->mq.counters.wakeups;
    if (m->mq.err[0] != '\0')
        snprintf(m->lasterr, sizeof(m->lasterr), "%s", m->mq.err);
    pthread_mutex_unlock(&m->mu);
    memset(&m->mq.counters, 0, sizeof(m->mq.counters));
    m->mq.err[0] = '\0';
}

/* Adds the counters the thread published since the last fold to q's. */
static void mover_fold(dq_queue *q, lm_mover *m)
{
    pthread_mutex_lock(&m->mu);
    q->counters.round_trips += m->acc.round_trips;
    q->counters.empty_polls += m->acc.empty_polls;
    q->counters.wakeups += m->acc.wakeups;
    memset(&m->acc, 0, sizeof(m->acc));
    pthread_mutex_unlock(&m->mu);
}

static void mover_drop_conns(lm_mover *m)
{
    pthread_mutex_lock(&m->mu);
    m->sub_fd = -1;
    pthread_mutex_unlock(&m->mu);
    if (m->sub != NULL)
        redisFree(m->sub);
    if (m->cmd != NULL)
        redisFree(m->cmd);
    m->sub = m->cmd = NULL;
}

/* Waits ms on the condition variable unless stop is set. */
static void mover_backoff(lm_mover *m, int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&m->mu);
    while (!m->stop)
        if (pthread_cond_timedwait(&m->cv, &m->mu, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&m->mu);
}

/* Connects both contexts and subscribes.  DQ_OK or an error code. */
static int mover_connect(lm_mover *m)
{
    int rc = dq_redis_connect(&m->mq, m->min_redis, DQ_SOCK_TIMEOUT_MS,
                              &m->cmd);
    if (rc != DQ_OK)
        return rc;
    rc = dq_redis_connect(&m->mq, m->min_redis, DQ_SOCK_TIMEOUT_MS, &m->sub);
    if (rc != DQ_OK)
        goto fail;
    const char *argv[2] = {"SUBSCRIBE", m->kwake};
    redisReply *r = dq_redis_cmd(&m->mq, m->sub, &rc, 2, argv, NULL);
    if (r == NULL)
        goto fail;
    freeReplyObject(r);

    pthread_mutex_lock(&m->mu);
    bool stop = m->stop;
    if (!stop)
        m->sub_fd = m->sub->fd;
    pthread_mutex_unlock(&m->mu);
    if (stop) {
        rc = DQ_ESYS;
        goto fail;
    }
    return DQ_OK;

fail:
    mover_drop_conns(m);
    return rc;
}

/* Parses the {count, "due" or ""} reply of MOVE/REAP.  *head = -1 when
 * the set is empty. */
static int parse_count_head(lm_mover *m, redisReply *r, int64_t *count,
                            int64_t *head)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        !dq_reply_int(r->element[0], count)) {
        dq_fail(&m->mq, DQ_EPROTO, "mover: unexpected script reply");
        return DQ_EPROTO;
    }
    redisReply *h = r->element[1];
    *head = -1;
    if (h->type == REDIS_REPLY_STRING && h->len > 0 &&
        !dq_reply_score_ms(h, head)) {
        dq_fail(&m->mq, DQ_EPROTO, "mover: unexpected head score");
        return DQ_EPROTO;
    }
    return DQ_OK;
}

/* Runs MOVE or REAP (script s) with keys then ARGV {now_ms, arg,
 * extra[0..nextra-1]} on the mover's connection and parses its {count,
 * head} reply. */
static int mover_script(lm_mover *m, dq_script *s, int nkeys,
                        const char **keys, int64_t now_ms, int64_t arg,
                        int nextra, const char **extra, int64_t *count,
                        int64_t *head)
{
    char now[32], argbuf[32];
    const char *args[8];
    snprintf(now, sizeof(now), "%" PRId64, now_ms);
    snprintf(argbuf, sizeof(argbuf), "%" PRId64, arg);
    for (int i = 0; i < nkeys; i++)
        args[i] = keys[i];
    int nargs = nkeys;
    args[nargs++] = now;
    args[nargs++] = argbuf;
    for (int i = 0; i < nextra; i++)
        args[nargs++] = extra[i];
    int rc;
    redisReply *r = dq_redis_eval(&m->mq, m->cmd, s, &rc, nkeys, nargs,
                                  args, NULL);
    if (r == NULL)
        return rc;
    rc = parse_count_head(m, r, count, head);
    freeReplyObject(r);
    return rc;
}

static int mover_move(lm_mover *m, int64_t now_ms, int64_t *moved,
                      int64_t *head)
{
    const char *keys[3] = {m->kz, m->kready, m->kp};
    /* list: payload in the item, deliveries not counted (attempt 0);
     * list-reliable: the first delivery is attempt 1. */
    const char *extra[2] = {m->payload_in_item ? "1" : "0",
                            m->payload_in_item ? "0" : "1"};
    int rc = mover_script(m, &m->move_s, 3, keys, now_ms, m->batch, 2,
                          extra, moved, head);
    if (rc == DQ_OK && *moved == 0)
        m->mq.counters.empty_polls++;
    return rc;
}

static int mover_reap(lm_mover *m, int64_t now_ms, int64_t *back,
                      int64_t *head)
{
    const char *keys[3] = {m->kprocs, m->kleases, m->kready};
    return mover_script(m, &m->reap_s, 3, keys, now_ms, m->lease_ms, 0,
                        NULL, back, head);
}

/* Handles one reply read from the subscribed connection: a "message"
 * lowers *next_ms to the announced due time. */
static void mover_on_message(lm_mover *m, redisReply *r, int64_t *next_ms)
{
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
        r->element[0]->type == REDIS_REPLY_STRING &&
        strcmp(r->element[0]->str, "message") == 0) {
        int64_t due;
        m->mq.counters.wakeups++;
        if (dq_reply_score_ms(r->element[2], &due))
            *next_ms = min64(*next_ms, due);
        else
            *next_ms = INT64_MIN; /* unreadable: just run now */
    }
}

/* Waits up to wait_us on the subscribed socket.  Returns DQ_OK (timeout or
 * messages handled) or DQ_EIO (connection lost or shut down by stop). */
static int mover_wait(lm_mover *m, int64_t wait_us, int64_t *next_ms)
{
    void *reply = NULL;
    /* Replies already buffered by an earlier read come first. */
    for (;;) {
        if (redisReaderGetReply(m->sub->reader, &reply) != REDIS_OK)
            goto lost;
        if (reply == NULL)
            break;
        mover_on_message(m, reply, next_ms);
        freeReplyObject(reply);
        wait_us = 0; /* something happened: re-evaluate without sleeping */
    }
    if (wait_us <= 0)
        return DQ_OK;

    struct pollfd pfd = {.fd = m->sub->fd, .events = POLLIN};
    struct timespec ts = {.tv_sec = wait_us / 1000000,
                          .tv_nsec = (wait_us % 1000000) * 1000};
    int n = ppoll(&pfd, 1, &ts, NULL);
    if (n == 0 || (n < 0 && errno == EINTR))
        return DQ_OK;
    if (n < 0) {
        dq_fail(&m->mq, DQ_ESYS, "mover: ppoll: %s", strerror(errno));
        return DQ_ESYS;
    }
    if (redisBufferRead(m->sub) != REDIS_OK)
        goto lost;
    for (;;) {
        if (redisReaderGetReply(m->sub->reader, &reply) != REDIS_OK)
            goto lost;
        if (reply == NULL)
            break;
        mover_on_message(m, reply, next_ms);
        freeReplyObject(reply);
    }
    return DQ_OK;

lost:
    dq_fail(&m->mq, DQ_EIO, "mover: subscribed connection: %s",
            m->sub->errstr[0] ? m->sub->errstr : "protocol error");
    return DQ_EIO;
}

static void *mover_main(void *arg)
{
    lm_mover *m = arg;
    int64_t backoff_ms = 50;
    int64_t next_move = INT64_MIN, next_reap = INT64_MIN;
    int64_t reap_every = min64(m->poll_cap_ms, m->lease_ms);

    while (!mover_stopping(m)) {
        int rc = DQ_OK;
        if (m->cmd == NULL) {
            rc = mover_connect(m);
            if (rc != DQ_OK) {
                mover_publish_stats(m);
                mover_backoff(m, backoff_ms);
                backoff_ms = min64(backoff_ms * 2, 1000);
                continue;
            }
            backoff_ms = 50;
            next_move = next_reap = INT64_MIN; /* run both at once */
        }

        int64_t now = dq_now_ms(&m->mq);
        if (now >= next_move) {
            int64_t moved, head;
            rc = mover_move(m, now, &moved, &head);
            if (rc != DQ_OK)
                goto lost;
            if (moved >= m->batch)
                next_move = now; /* more may be due: go again at once */
            else if (head < 0)
                next_move = now + m->poll_cap_ms;
            else
                next_move = min64(head, now + m->poll_cap_ms);
        }
        if (m->lease_ms > 0 && now >= next_reap) {
            int64_t back, head;
            rc = mover_reap(m, now, &back, &head);
            if (rc != DQ_OK)
                goto lost;
            next_reap = now + reap_every;
            if (head >= 0)
                next_reap = min64(next_reap, head);
            if (next_reap <= now)
                next_reap = now + 1; /* not due by our clock yet */
        }
        mover_publish_stats(m);

        int64_t target = next_move;
        if (m->lease_ms > 0)
            target = min64(target, next_reap);
        /* target is at most now + poll_cap_ms, so no overflow here. */
        int64_t wait_us = target * 1000 - dq_now_us(&m->mq);
        rc = mover_wait(m, wait_us, &next_move);
        if (rc != DQ_OK)
            goto lost;
        continue;

    lost:
        mover_publish_stats(m);
        mover_drop_conns(m);
        if (!mover_stopping(m))
            mover_backoff(m, backoff_ms);
    }
    mover_drop_conns(m);
    mover_publish_stats(m);
    return NULL;
}

/* Stops and joins the thread; the caller holds m->life and m->running is
 * true. */
static void mover_stop_locked(lm_mover *m)
{
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    if (m->sub_fd >= 0)
        shutdown(m->sub_fd, SHUT_RDWR); /* ends ppoll() at once */
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->th, NULL);
    m->running = false;
}

/* The dq_local destroy callback, and the close of a private mover.  The
 * thread was stopped by the last claimer's close; a space freed with
 * handles still open (dq_local_free) stops it here. */
static void mover_destroy(void *obj)
{
    lm_mover *m = obj;
    if (m->running)
        mover_stop_locked(m);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    pthread_mutex_destroy(&m->life);
    free(m->host);
    free(m->user);
    if (m->password != NULL) {
        explicit_bzero(m->password, strlen(m->password));
        free(m->password);
    }
    free(m->name);
    free(m);
}

/* Copies s (NULL stays NULL) into *out; false when out of memory. */
static bool dup_str(const char *s, char **out)
{
    *out = NULL;
    if (s == NULL)
        return true;
    *out = strdup(s);
    return *out != NULL;
}

/* What a new mover is made from (mover_create's argument). */
typedef struct mover_seed {
    dq_queue *q;
    const lm_base *b;
} mover_seed;

/* Allocates a mover for the seed's handle, thread not started.  Also the
 * dq_local create callback (runs under the space's lock).  NULL when out
 * of memory or a mutex cannot be made. */
static void *mover_create(void *arg)
{
    const mover_seed *sd = arg;
    const dq_queue *q = sd->q;
    const lm_base *b = sd->b;
    lm_mover *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return NULL;
    if (!dup_str(q->cfg.redis_host, &m->host) ||
        !dup_str(q->cfg.redis_user, &m->user) ||
        !dup_str(q->cfg.redis_password, &m->password))
        goto fail_strings;
    /* The handle copy must not point into q, which may close first. */
    m->mq = *q;
    m->mq.cfg.queue = m->mq.queue;
    m->mq.cfg.opts = m->mq.opts;
    m->mq.cfg.redis_host = m->host;
    m->mq.cfg.redis_user = m->user;
    m->mq.cfg.redis_password = m->password;
    m->mq.cfg.consumer = "mover";
    m->mq.cfg.local = NULL;
    m->mq.priv = NULL;
    memset(&m->mq.counters, 0, sizeof(m->mq.counters));
    m->mq.err[0] = '\0';
    m->mq.redis_sock_timeout_ms = 0;
    m->min_redis = b->min_redis;
    m->poll_cap_ms = b->poll_cap_ms;
    m->batch = b->move_batch;
    m->lease_ms = b->lease_ms;
    m->payload_in_item = b->payload_in_item;
    memcpy(m->kz, b->kz, sizeof(m->kz));
    memcpy(m->kp, b->kp, sizeof(m->kp));
    memcpy(m->kready, b->kready, sizeof(m->kready));
    memcpy(m->kwake, b->kwake, sizeof(m->kwake));
    dq_redis_key(q, "procs", m->kprocs, sizeof(m->kprocs));
    dq_redis_key(q, "leases", m->kleases, sizeof(m->kleases));
    m->move_s.src = MOVE_LUA;
    m->reap_s.src = REAP_LUA;
    m->sub_fd = -1;
    if (pthread_mutex_init(&m->life, NULL) != 0)
        goto fail_strings;
    if (pthread_mutex_init(&m->mu, NULL) != 0)
        goto fail_life;
    if (pthread_cond_init(&m->cv, NULL) != 0)
        goto fail_mu;
    return m;

fail_mu:
    pthread_mutex_destroy(&m->mu);
fail_life:
    pthread_mutex_destroy(&m->life);
fail_strings:
    free(m->host);
    free(m->user);
    if (m->password != NULL) {
        explicit_bzero(m->password, strlen(m->password));
        free(m->password);
    }
    free(m);
    return NULL;
}

/* The mover's name in the dq_local: every field that makes two handles'
 * movers differ.  malloc'd, NULL when out of memory. */
static char *mover_name(const dq_queue *q, const lm_base *b)
{
    const dq_config *cfg = &q->cfg;
    char *name = NULL;
    if (asprintf(&name, "list-mover\n%s\n%s\n%s:%d/%d\n%s\n%" PRId64
                 "\n%" PRId64 "/%" PRId64 "/%" PRId64,
                 q->s->name, q->queue,
                 cfg->redis_host ? cfg->redis_host : "", cfg->redis_port,
                 cfg->redis_db, cfg->redis_user ? cfg->redis_user : "",
                 cfg->clock_offset_us, b->poll_cap_ms, b->move_batch,
                 b->lease_ms) < 0)
        return NULL;
    return name;
}

/* Takes the handle's reference on its queue's mover (b->mover). */
static int mover_acquire(dq_queue *q, lm_base *b)
{
    mover_seed sd = {q, b};
    if (q->cfg.local == NULL) {
        b->mover = mover_create(&sd);
        if (b->mover == NULL)
            return dq_fail(q, DQ_ENOMEM, "list mover: out of memory");
        return DQ_OK;
    }
    char *name = mover_name(q, b);
    if (name == NULL)
        return dq_fail(q, DQ_ENOMEM, "list mover: out of memory");
    lm_mover *m = dq_local_get(q->cfg.local, name, mover_create, &sd,
                               mover_destroy);
    if (m == NULL) {
        free(name);
        return dq_fail(q, DQ_ENOMEM, "list mover: out of memory");
    }
    /* Every handle sharing m computed the same name: the first one keeps
     * it for dq_local_put. */
    pthread_mutex_lock(&m->life);
    if (m->name == NULL) {
        m->name = name;
        name = NULL;
    }
    pthread_mutex_unlock(&m->life);
    free(name);
    b->mover = m;
    return DQ_OK;
}

/* Drops the handle's reference (mover_acquire), stopping the thread when
 * this was the last open claimer. */
static void mover_release(dq_queue *q, lm_base *b)
{
    lm_mover *m = b->mover;
    if (m == NULL)
        return;
    b->mover = NULL;
    pthread_mutex_lock(&m->life);
    if (b->claimer && --m->claimers == 0 && m->running)
        mover_stop_locked(m);
    b->claimer = false;
    pthread_mutex_unlock(&m->life);
    mover_fold(q, m);
    if (q->cfg.local == NULL) {
        mover_destroy(m);
        return;
    }
    /* m->name was set before any put and never changes.  dq_local_put
     * reads it only before it drops our reference, so another handle's put
     * freeing m afterwards is fine. */
    dq_local_put(q->cfg.local, m->name);
}

int lm_mover_ensure(dq_queue *q, lm_base *b)
{
    lm_mover *m = b->mover;
    if (!b->claimer) {
        int rc = DQ_OK;
        pthread_mutex_lock(&m->life);
        if (!m->running) {
            pthread_mutex_lock(&m->mu);
            m->stop = false;
            m->sub_fd = -1;
            pthread_mutex_unlock(&m->mu);
            int err = pthread_create(&m->th, NULL, mover_main, m);
            if (err != 0)
                rc = dq_fail(q, DQ_ESYS, "list mover: pthread_create: %s",
                             strerror(err));
            else
                m->running = true;
        }
        if (rc == DQ_OK) {
            m->claimers++;
            b->claimer = true;
        }
        pthread_mutex_unlock(&m->life);
        if (rc != DQ_OK)
            return rc;
    }
    mover_fold(q, m);
    return DQ_OK;
}

/* ---- Open / close ------------------------------------------------------ */

int lm_base_open(dq_queue *q, lm_base *b, const char *min_redis,
                 bool reliable)
{
    int rc;
    memset(b, 0, sizeof(*b));
    b->min_redis = min_redis;
    b->payload_in_item = !reliable;
    if ((rc = dq_opt_i64(q, "poll_cap_ms", &b->poll_cap_ms)) != DQ_OK ||
        (rc = dq_opt_i64(q, "move_batch", &b->move_batch)) != DQ_OK)
        return rc;
    if (reliable && (rc = dq_opt_i64(q, "lease_ms", &b->lease_ms)) != DQ_OK)
        return rc;
    dq_redis_key(q, "z", b->kz, sizeof(b->kz));
    dq_redis_key(q, "p", b->kp, sizeof(b->kp));
    dq_redis_key(q, "ready", b->kready, sizeof(b->kready));
    dq_redis_key(q, "wake", b->kwake, sizeof(b->kwake));
    b->enqueue_s.src = ENQUEUE_LUA;
    b->pending_s.src = PENDING_LUA;
    rc = dq_redis_connect(q, min_redis, DQ_SOCK_TIMEOUT_MS, &b->c);
    if (rc != DQ_OK)
        return rc;
    rc = mover_acquire(q, b);
    if (rc != DQ_OK) {
        redisFree(b->c);
        b->c = NULL;
    }
    return rc;
}

void lm_base_close(dq_queue *q, lm_base *b)
{
    mover_release(q, b);
    if (b->c != NULL) {
        redisFree(b->c);
        b->c = NULL;
    }
}

/* ---- Items ------------------------------------------------------------- */

/* Parses the decimal integer s[0..n-1] (an optional '-', then digits)
 * into *out.  False when it is empty, not a number or too long. */
static bool parse_dec(const char *s, size_t n, int64_t *out)
{
    char num[24];
    if (n == 0 || n >= sizeof(num))
        return false;
    memcpy(num, s, n);
    num[n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(num, &end, 10);
    if (errno != 0 || *end != '\0' || num[0] == '+' || num[0] == ' ')
        return false;
    *out = v;
    return true;
}

/* The next ':'-terminated decimal field of s[*at..len-1] into *out,
 * moving *at past the ':'. */
static bool next_field(const char *s, size_t len, size_t *at, int64_t *out)
{
    const char *c = memchr(s + *at, ':', len - *at);
    if (c == NULL || !parse_dec(s + *at, (size_t)(c - (s + *at)), out))
        return false;
    *at = (size_t)(c - s) + 1;
    return true;
}

bool lm_parse_item(const char *s, size_t len, int64_t *due_ms, int *attempt,
                   char id[DQ_ID_MAX], const char **payload,
                   size_t *payload_len)
{
    size_t at = 0;
    int64_t due, att, idlen;
    if (!next_field(s, len, &at, &due) || !next_field(s, len, &at, &att) ||
        !next_field(s, len, &at, &idlen))
        return false;
    if (att < 0 || idlen <= 0 || idlen >= DQ_ID_MAX ||
        (size_t)idlen > len - at || memchr(s + at, '\0', (size_t)idlen))
        return false;
    memcpy(id, s + at, (size_t)idlen);
    id[idlen] = '\0';
    *due_ms = due;
    *attempt = att > 1000000000 ? 1000000000 : (int)att;
    *payload = s + at + idlen;
    *payload_len = len - at - (size_t)idlen;
    return true;
}

int lm_format_item(char *buf, size_t buflen, int64_t due_ms, int64_t attempt,
                   const char *id)
{
    int n = snprintf(buf, buflen, "%" PRId64 ":%" PRId64 ":%zu:%s", due_ms,
                     attempt, strlen(id), id);
    return (n < 0 || (size_t)n >= buflen) ? -1 : n;
}

bool lm_wait_until_due(dq_queue *q, int64_t due_ms, int64_t deadline_us)
{
    int64_t left;
    while ((left = due_ms * 1000 - dq_now_us(q)) > 0) {
        int64_t until_deadline = deadline_us - dq_mono_us();
        if (until_deadline <= 0)
            return false;
        dq_sleep_us(left < until_deadline ? left : until_deadline);
    }
    return true;
}

int lm_claim(dq_queue *q, lm_base *b, int64_t timeout_ms, dq_task *out,
             const lm_claim_ops *ops)
{
    int rc = lm_mover_ensure(q, b);
    if (rc != DQ_OK)
        return rc;
    int64_t deadline_us = dq_deadline_us(timeout_ms);
    bool first = true;

    for (;;) {
        if (!first && deadline_us - dq_mono_us() <= 0)
            return DQ_EMPTY;
        redisReply *r = NULL;
        const char *item;
        size_t itemlen;
        rc = ops->take(q, deadline_us, out, &r, &item, &itemlen);
        first = false;
        if (rc == DQ_EMPTY)
            continue;
        if (rc == DQ_ENOTFOUND) {
            dq_task_clear(out);
            continue; /* purged under us: not a task any more */
        }
        if (rc != DQ_OK) {
            dq_task_clear(out);
            return rc;
        }
        if (!lm_wait_until_due(q, out->due_ms, deadline_us)) {
            rc = ops->undo(q, item, itemlen, out);
            freeReplyObject(r);
            dq_task_clear(out);
            if (rc != DQ_OK)
                return rc;
            q->counters.putbacks++;
            return DQ_EMPTY;
        }
        freeReplyObject(r);
        return DQ_OK;
    }
}

/* ---- Shared ops ---------------------------------------------------------- */

/* SCRIPT LOAD of s on b's connection, filling s->sha. */
static int load_script(dq_queue *q, redisContext *c, dq_script *s)
{
    const char *argv[3] = {"SCRIPT", "LOAD", s->src};
    int rc;
    redisReply *r = dq_redis_cmd(q, c, &rc, 3, argv, NULL);
    if (r == NULL)
        return rc;
    if (r->type != REDIS_REPLY_STRING || r->len != 40) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "SCRIPT LOAD: unexpected reply");
    }
    memcpy(s->sha, r->str, 40);
    s->sha[40] = '\0';
    freeReplyObject(r);
    return DQ_OK;
}

/* One EVALSHA of ENQUEUE_LUA for items[0..n-1], n <= LM_ENQUEUE_CHUNK.
 * Built here rather than with dq_redis_eval, which takes 64 arguments at
 * most; NOSCRIPT (a restarted server) loads the script again, once. */
static int enqueue_chunk(dq_queue *q, lm_base *b, const dq_enqueue_item *items,
                         size_t n)
{
    size_t argc = 6 + 3 * n; /* EVALSHA sha 2 z p channel, 3 per task */
    const char **argv = malloc(argc * sizeof(*argv));
    size_t *lens = malloc(argc * sizeof(*lens));
    char (*due)[24] = malloc(n * sizeof(*due));
    int rc = DQ_OK;
    if (argv == NULL || lens == NULL || due == NULL) {
        rc = dq_fail(q, DQ_ENOMEM, "enqueue: out of memory");
        goto out;
    }
    argv[0] = "EVALSHA";
    argv[1] = b->enqueue_s.sha;
    argv[2] = "2";
    argv[3] = b->kz;
    argv[4] = b->kp;
    argv[5] = b->kwake;
    for (size_t i = 0; i < 6; i++)
        lens[i] = strlen(argv[i]);
    for (size_t i = 0; i < n; i++) {
        size_t a = 6 + 3 * i;
        snprintf(due[i], sizeof(due[i]), "%" PRId64, items[i].due_ms);
        argv[a] = items[i].id;
        lens[a] = strlen(items[i].id);
        argv[a + 1] = items[i].payload ? items[i].payload : "";
        lens[a + 1] = items[i].payload_len;
        argv[a + 2] = due[i];
        lens[a + 2] = strlen(due[i]);
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        if (b->enqueue_s.sha[0] == '\0' &&
            (rc = load_script(q, b->c, &b->enqueue_s)) != DQ_OK)
            break;
        lens[1] = 40;
        redisReply *r = dq_redis_cmd(q, b->c, &rc, (int)argc, argv, lens);
        freeReplyObject(r);
        if (rc != DQ_EREDIS || strstr(q->err, "NOSCRIPT") == NULL)
            break;
        b->enqueue_s.sha[0] = '\0'; /* server restarted: load again */
    }
out:
    free(argv);
    free(lens);
    free(due);
    return rc;
}

int lm_enqueue(dq_queue *q, const char *id, const void *payload,
               size_t payload_len, int64_t due_ms)
{
    /* dq_enqueue checked the id (1..DQ_ID_MAX-1 bytes) and due_ms (within
     * +-DQ_DUE_MAX_MS = 2^53, exact as a ZSet score). */
    dq_enqueue_item it = {id, payload, payload_len, due_ms};
    return enqueue_chunk(q, q->priv, &it, 1);
}

int lm_enqueue_many(dq_queue *q, const dq_enqueue_item *items, size_t n)
{
    int rc = DQ_OK;
    for (size_t at = 0; at < n && rc == DQ_OK; at += LM_ENQUEUE_CHUNK) {
        size_t m = n - at < LM_ENQUEUE_CHUNK ? n - at : LM_ENQUEUE_CHUNK;
        rc = enqueue_chunk(q, q->priv, items + at, m);
    }
    return rc;
}

int lm_pop_item(dq_queue *q, lm_base *b, const char *dst, int64_t deadline_us,
                dq_task *out, redisReply **reply, const char **item,
                size_t *itemlen)
{
    redisContext *c = b->c;
    redisReply *r;
    int64_t left_us = deadline_us - dq_mono_us();
    int rc;

    *reply = NULL;
    if (left_us < DQ_BLOCK_SHORTEST_MS * 1000) {
        /* claim(0), or a wait too short for a blocking call (rconn.h):
         * look once, then sleep the rest. */
        const char *argv[5] = {dst ? "LMOVE" : "LPOP", b->kready, dst,
                               "LEFT", "RIGHT"};
        r = dq_redis_cmd(q, c, &rc, dst ? 5 : 2, argv, NULL);
        if (r != NULL && r->type == REDIS_REPLY_NIL)
            dq_sleep_us(deadline_us - dq_mono_us());
    } else {
        const char *blpop[2] = {"BLPOP", b->kready};
        const char *blmove[5] = {"BLMOVE", b->kready, dst, "LEFT", "RIGHT"};
        r = dst ? dq_redis_block(q, c, &rc, 5, blmove, NULL, deadline_us)
                : dq_redis_block(q, c, &rc, 2, blpop, NULL, deadline_us);
    }
    if (r == NULL)
        return rc;
    if (r->type == REDIS_REPLY_NIL) {
        freeReplyObject(r);
        q->counters.empty_polls++;
        return DQ_EMPTY;
    }
    if (dst == NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING) {
        *item = r->element[1]->str; /* BLPOP: {key, item} */
        *itemlen = r->element[1]->len;
    } else if (r->type == REDIS_REPLY_STRING) {
        *item = r->str;
        *itemlen = r->len;
    } else {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "claim: unexpected %s reply",
                       dst ? "BLMOVE" : "BLPOP");
    }
    q->counters.wakeups++;
    memset(out, 0, sizeof(*out));
    const char *payload;
    size_t payload_len;
    if (!lm_parse_item(*item, *itemlen, &out->due_ms, &out->attempt,
                       out->id, &payload, &payload_len)) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "claim: malformed item in %s",
                       b->kready);
    }
    if (b->payload_in_item) {
        /* NUL-terminated for convenience, as dq_reply_copy does. */
        out->payload = malloc(payload_len + 1);
        if (out->payload == NULL) {
            freeReplyObject(r);
            return dq_fail(q, DQ_ENOMEM, "claim: out of memory (task lost)");
        }
        memcpy(out->payload, payload, payload_len);
        out->payload[payload_len] = '\0';
        out->payload_len = payload_len;
    }
    *reply = r;
    return DQ_OK;
}

int64_t lm_pending(dq_queue *q)
{
    lm_base *b = q->priv;
    const char *args[2] = {b->kz, b->kready};
    int64_t n;
    int rc = dq_redis_eval_int(q, b->c, &b->pending_s, 2, 2, args, NULL,
                               "pending: unexpected reply", &n);
    return rc != DQ_OK ? rc : n;
}

int lm_purge(dq_queue *q)
{
    lm_base *b = q->priv;
    return dq_redis_purge(q, b->c);
}

int lm_exists(dq_queue *q)
{
    lm_base *b = q->priv;
    return dq_redis_exists(q, b->c);
}
