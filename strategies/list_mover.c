/* list_mover.c -- the mover of the Redisson-style delay queue, shared by
 * `list` and `list-reliable`, plus their common enqueue/pending/purge.
 *
 * The design is Redisson's RDelayedQueue (org.redisson.RedissonDelayedQueue
 * with QueueTransferTask): delayed tasks wait in a ZSet scored by due time;
 * a "transfer task" moves the due ones into a plain List, and consumers
 * block on that List (BLPOP) instead of polling the ZSet.  The transfer
 * task does not poll either: it sleeps until the earliest due time, and a
 * producer whose task becomes the new earliest one publishes that due time
 * on a channel, which wakes every transfer task early.
 *
 * Enqueue, one script (1 round trip):
 *   HSET p id payload; ZADD z due id;
 *   if ZRANGE z 0 0 == id then PUBLISH wake due
 * Mover, one script per wake-up (atomic, so any number of movers in any
 * number of processes never move a task twice):
 *   ZRANGEBYSCORE z -inf now WITHSCORES LIMIT 0 move_batch;
 *   RPUSH ready "<due>:<id>"...; ZREM z id...; return the new head's due.
 *   The item carries the due time so that claim can report the real due
 *   time (dq_task.due_ms), not the time of the move.
 * The mover then waits until min(head due, now + poll_cap_ms) on its
 * SUBSCRIBEd connection; a message "<due>" on the wake channel pulls the
 * next run earlier.  poll_cap_ms bounds the damage of a lost message (the
 * subscriber was reconnecting: Pub/Sub is fire-and-forget,
 * https://redis.io/docs/interact/pubsub/ "at-most-once message delivery").
 *
 * Where movers run (design choice): one mover thread per consumer handle,
 * started by the handle's first claim (a producer-only handle runs none),
 * with its own two connections: one SUBSCRIBEd to dq:{Q}:wake, one for
 * EVALSHA.  It needs no dq_local, works the same when consumers are
 * threads or processes, and a handle's clock offset applies to its own
 * mover.  The cost: with N consumers, one publish wakes N movers and N-1 of
 * their scripts find nothing (counted as empty polls).  Redisson instead
 * runs one transfer task per client per queue.
 *
 * The mover sleeps with ppoll() on the subscribed socket (microsecond
 * timeout, so lateness is ~1 ms, not a poll interval) and reads messages
 * with redisBufferRead + redisReaderGetReply: no socket-timeout errors to
 * clear from the context.  close() stops it promptly: it sets the stop
 * flag, signals the condition the mover waits on between reconnects, and
 * shutdown()s the subscribed socket, which ends the ppoll() at once.
 *
 * list-reliable's reaper (lease_ms > 0) also runs in the mover, one script:
 * for each processing list named in dq:{Q}:procs, each item whose lease in
 * dq:{Q}:leases has run out goes back to the TAIL of ready (LREM + ZREM +
 * RPUSH), as if it fell due at its lease expiry: behind the tasks moved
 * before it, ahead of those that fall due later.  Not the head: a task
 * given back there is the next one any consumer takes, so a consumer
 * whose work outlasts the lease (its late ack refused once the task was
 * taken again) was handed the same task over and over, and with two such
 * consumers two tasks were delivered dozens of times while the rest of
 * the queue was never delivered at all.  An item with no lease at all (its
 * consumer died between BLMOVE and recording the lease) gets one of
 * lease_ms from now.  The reaper runs at the earliest lease expiry, and at
 * least every min(poll_cap_ms, lease_ms).
 *
 * REAP_LUA breaks a documented rule: it reads and writes the processing
 * lists, whose names it takes from the procs set, not from KEYS.  Redis
 * requires every key a script touches to be passed in KEYS
 * (https://redis.io/docs/interact/programmability/eval-intro/), so that a
 * cluster can route the script and check that all keys are in one slot.  It works here only because those lists
 * are all dq:{Q}:proc:<consumer>, sharing the queue's hash tag {Q} with
 * the KEYS given, so on a standalone server or in Redis Cluster they lie
 * in the one slot the script runs on; a server that enforces the rule
 * (or a proxy that routes by KEYS only and splits the tag) would refuse
 * or misroute it.
 *
 * Failure modes: a mover that loses Redis retries with backoff (50 ms ..
 * 1 s) and then moves everything due at once; while no mover runs (no
 * consumer, or every consumer gone) due tasks wait in the ZSet.  A mover
 * whose clock runs ahead moves tasks early for everybody (claim then waits
 * for the due time by its own clock, lm_wait_until_due, but not past its
 * timeout: a task still early at the claim deadline goes back to the head
 * of ready, lm_claim).  Tasks already in
 * the ready List are delivered in the order they were moved: a task that
 * arrives already due after a later-due task was moved comes after it.
 *
 * Redis behaviour relied on: scripts run atomically
 * (https://redis.io/docs/interact/programmability/eval-intro/); ZRANGEBYSCORE
 * with LIMIT (https://redis.io/commands/zrangebyscore/); PUBLISH from a
 * script; SUBSCRIBE replies and "message" arrays
 * (https://redis.io/docs/interact/pubsub/); ZSet scores are doubles, exact
 * for integers up to 2^53 (dq_enqueue rejects due times beyond that).
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

/* KEYS: z p   ARGV: id payload due channel */
static const char ENQUEUE_LUA[] =
    "redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])\n"
    "redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])\n"
    "local h = redis.call('ZRANGE', KEYS[1], 0, 0)\n"
    "if h[1] == ARGV[1] then redis.call('PUBLISH', ARGV[4], ARGV[3]) end\n"
    "return 1\n";

/* KEYS: z ready   ARGV: now_ms batch
 * Returns {moved, head due as text or ""}. */
static const char MOVE_LUA[] =
    "local r = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1],\n"
    "    'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))\n"
    "local n = #r / 2\n"
    "if n > 0 then\n"
    "  local items, ids = {}, {}\n"
    "  for i = 1, n do\n"
    "    ids[i] = r[2*i-1]\n"
    "    items[i] = string.format('%.0f', tonumber(r[2*i])) .. ':' .. r[2*i-1]\n"
    "  end\n"
    "  redis.call('RPUSH', KEYS[2], unpack(items))\n"
    "  redis.call('ZREM', KEYS[1], unpack(ids))\n"
    "end\n"
    "local h = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"
    "return {n, h[2] or ''}\n";

/* KEYS: procs leases ready   ARGV: now_ms lease_ms
 * The processing lists are named in the procs set, not passed in KEYS
 * (against the EVAL rule; works because they share the queue's hash tag,
 * so the same slot: see the top comment).  An item whose lease ran out
 * goes to the TAIL of ready, behind every task already ready (see the top
 * comment: at the head, a consumer whose work outlasts the lease would be
 * handed the same task again and again).  Returns {items put back,
 * earliest lease expiry or ""}. */
static const char REAP_LUA[] =
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
    "      redis.call('RPUSH', KEYS[3], it)\n"
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
    dq_queue mq;             /* private copy of the handle: the dq_redis_*
                                helpers write errors and counters here */
    const char *min_redis;
    int64_t poll_cap_ms, batch, lease_ms;
    char kz[LM_KEY_MAX], kready[LM_KEY_MAX], kwake[LM_KEY_MAX],
        kprocs[LM_KEY_MAX], kleases[LM_KEY_MAX];
    dq_script move_s, reap_s;
    redisContext *cmd, *sub; /* owned by the mover thread */

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

/* Runs MOVE or REAP (script s) with keys then ARGV {now_ms, arg} on the
 * mover's connection and parses its {count, head} reply. */
static int mover_script(lm_mover *m, dq_script *s, int nkeys,
                        const char **keys, int64_t now_ms, int64_t arg,
                        int64_t *count, int64_t *head)
{
    char now[32], argbuf[32];
    const char *args[5];
    snprintf(now, sizeof(now), "%" PRId64, now_ms);
    snprintf(argbuf, sizeof(argbuf), "%" PRId64, arg);
    for (int i = 0; i < nkeys; i++)
        args[i] = keys[i];
    args[nkeys] = now;
    args[nkeys + 1] = argbuf;
    int rc;
    redisReply *r = dq_redis_eval(&m->mq, m->cmd, s, &rc, nkeys, nkeys + 2,
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
    const char *keys[2] = {m->kz, m->kready};
    int rc = mover_script(m, &m->move_s, 2, keys, now_ms, m->batch, moved,
                          head);
    if (rc == DQ_OK && *moved == 0)
        m->mq.counters.empty_polls++;
    return rc;
}

static int mover_reap(lm_mover *m, int64_t now_ms, int64_t *back,
                      int64_t *head)
{
    const char *keys[3] = {m->kprocs, m->kleases, m->kready};
    return mover_script(m, &m->reap_s, 3, keys, now_ms, m->lease_ms, back,
                        head);
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
        if (dq_reply_int(r->element[2], &due))
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

static void mover_free(lm_mover *m)
{
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

int lm_mover_ensure(dq_queue *q, lm_base *b)
{
    lm_mover *m = b->mover;
    if (m != NULL) {
        pthread_mutex_lock(&m->mu);
        q->counters.round_trips += m->acc.round_trips;
        q->counters.empty_polls += m->acc.empty_polls;
        q->counters.wakeups += m->acc.wakeups;
        memset(&m->acc, 0, sizeof(m->acc));
        pthread_mutex_unlock(&m->mu);
        return DQ_OK;
    }

    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return dq_fail(q, DQ_ENOMEM, "list mover: out of memory");
    m->mq = *q;
    m->mq.cfg.opts = m->mq.opts;
    m->mq.priv = NULL;
    memset(&m->mq.counters, 0, sizeof(m->mq.counters));
    m->mq.err[0] = '\0';
    m->min_redis = b->min_redis;
    m->poll_cap_ms = b->poll_cap_ms;
    m->batch = b->move_batch;
    m->lease_ms = b->lease_ms;
    memcpy(m->kz, b->kz, sizeof(m->kz));
    memcpy(m->kready, b->kready, sizeof(m->kready));
    memcpy(m->kwake, b->kwake, sizeof(m->kwake));
    dq_redis_key(q, "procs", m->kprocs, sizeof(m->kprocs));
    dq_redis_key(q, "leases", m->kleases, sizeof(m->kleases));
    m->move_s.src = MOVE_LUA;
    m->reap_s.src = REAP_LUA;
    m->sub_fd = -1;
    if (pthread_mutex_init(&m->mu, NULL) != 0) {
        free(m);
        return dq_fail(q, DQ_ESYS, "list mover: pthread_mutex_init failed");
    }
    if (pthread_cond_init(&m->cv, NULL) != 0) {
        pthread_mutex_destroy(&m->mu);
        free(m);
        return dq_fail(q, DQ_ESYS, "list mover: pthread_cond_init failed");
    }
    int err = pthread_create(&m->th, NULL, mover_main, m);
    if (err != 0) {
        mover_free(m);
        return dq_fail(q, DQ_ESYS, "list mover: pthread_create: %s",
                       strerror(err));
    }
    b->mover = m;
    return DQ_OK;
}

/* Stops and joins the mover, folds its last counters into q. */
static void mover_stop(dq_queue *q, lm_mover *m)
{
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    if (m->sub_fd >= 0)
        shutdown(m->sub_fd, SHUT_RDWR); /* ends ppoll() at once */
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->th, NULL);
    q->counters.round_trips += m->acc.round_trips;
    q->counters.empty_polls += m->acc.empty_polls;
    q->counters.wakeups += m->acc.wakeups;
    mover_free(m);
}

/* ---- Open / close ------------------------------------------------------ */

int lm_base_open(dq_queue *q, lm_base *b, const char *min_redis,
                 bool with_lease)
{
    int rc;
    memset(b, 0, sizeof(*b));
    b->min_redis = min_redis;
    if ((rc = dq_opt_i64(q, "poll_cap_ms", &b->poll_cap_ms)) != DQ_OK ||
        (rc = dq_opt_i64(q, "move_batch", &b->move_batch)) != DQ_OK)
        return rc;
    if (with_lease && (rc = dq_opt_i64(q, "lease_ms", &b->lease_ms)) != DQ_OK)
        return rc;
    dq_redis_key(q, "z", b->kz, sizeof(b->kz));
    dq_redis_key(q, "p", b->kp, sizeof(b->kp));
    dq_redis_key(q, "ready", b->kready, sizeof(b->kready));
    dq_redis_key(q, "wake", b->kwake, sizeof(b->kwake));
    b->enqueue_s.src = ENQUEUE_LUA;
    b->pending_s.src = PENDING_LUA;
    return dq_redis_connect(q, min_redis, DQ_SOCK_TIMEOUT_MS, &b->c);
}

void lm_base_close(dq_queue *q, lm_base *b)
{
    if (b->mover != NULL) {
        mover_stop(q, b->mover);
        b->mover = NULL;
    }
    if (b->c != NULL) {
        redisFree(b->c);
        b->c = NULL;
    }
}

/* ---- Items ------------------------------------------------------------- */

bool lm_parse_item(const char *s, size_t len, int64_t *due_ms,
                   char id[DQ_ID_MAX])
{
    const char *colon = memchr(s, ':', len);
    if (colon == NULL || colon == s || (size_t)(colon - s) >= 24)
        return false;
    char num[24];
    memcpy(num, s, (size_t)(colon - s));
    num[colon - s] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(num, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    size_t idlen = len - (size_t)(colon - s) - 1;
    if (idlen == 0 || idlen >= DQ_ID_MAX || memchr(colon + 1, '\0', idlen))
        return false;
    memcpy(id, colon + 1, idlen);
    id[idlen] = '\0';
    *due_ms = v;
    return true;
}

int lm_format_item(char *buf, size_t buflen, int64_t due_ms, const char *id)
{
    int n = snprintf(buf, buflen, "%" PRId64 ":%s", due_ms, id);
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

int lm_claim(dq_queue *q, lm_base *b, const char *dst, int64_t timeout_ms,
             dq_task *out, const lm_claim_ops *ops)
{
    int rc = lm_mover_ensure(q, b);
    if (rc != DQ_OK)
        return rc;
    int64_t deadline_us = dq_deadline_us(timeout_ms);
    bool first = true;

    for (;;) {
        if (!first && deadline_us - dq_mono_us() <= 0)
            return DQ_EMPTY;
        redisReply *r;
        const char *item;
        size_t itemlen;
        rc = lm_pop_item(q, b, dst, deadline_us, out, &r, &item, &itemlen);
        first = false;
        if (rc == DQ_EMPTY)
            continue;
        if (rc != DQ_OK)
            return rc;
        rc = ops->take(q, item, itemlen, out);
        if (rc == DQ_ENOTFOUND) {
            freeReplyObject(r);
            dq_task_clear(out);
            continue; /* purged under us: not a task any more */
        }
        if (rc != DQ_OK) {
            freeReplyObject(r);
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

int lm_enqueue(dq_queue *q, const char *id, const void *payload,
               size_t payload_len, int64_t due_ms)
{
    lm_base *b = q->priv;
    /* dq_enqueue checked the id (1..DQ_ID_MAX-1 bytes) and due_ms (within
     * +-DQ_DUE_MAX_MS = 2^53, exact as a ZSet score). */
    size_t idlen = strlen(id);
    int rc;
    char due[32];
    snprintf(due, sizeof(due), "%" PRId64, due_ms);
    const char *args[6] = {b->kz, b->kp, id, payload ? payload : "", due,
                           b->kwake};
    size_t lens[6] = {strlen(b->kz), strlen(b->kp), idlen, payload_len,
                      strlen(due), strlen(b->kwake)};
    redisReply *r = dq_redis_eval(q, b->c, &b->enqueue_s, &rc, 2, 6, args,
                                  lens);
    if (r == NULL)
        return rc;
    freeReplyObject(r);
    return DQ_OK;
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
    if (!lm_parse_item(*item, *itemlen, &out->due_ms, out->id)) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "claim: malformed item in %s",
                       b->kready);
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
