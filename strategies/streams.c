/* streams.c -- `streams`: a ZSet for the delay, a Redis Stream with one
 * consumer group for delivery, acks and the takeover of a crashed
 * consumer's tasks.  At-least-once.
 *
 * Why a ZSet at all (claim C22).  A Stream orders entries by id and hands
 * out whatever is there: it has acks, a pending entries list (PEL) per
 * consumer and XAUTOCLAIM, but no delays.  An entry added with an id in
 * the future is readable at once: on Redis 7.0.15, XADD s 99999999999999-0
 * and then XREADGROUP ... STREAMS s > returns it immediately, and every
 * later XADD s * gets an id after it (99999999999999-1, ...), because ids
 * only grow (https://redis.io/docs/data-types/streams/, "Entry IDs").  So
 * the delay stays in a ZSet and a mover moves due tasks into the Stream.
 *
 * Keys (one hash tag per queue):
 *   dq:{Q}:z     ZSet    id -> due ms (or retry ms after a nack): tasks
 *                        not yet due, or due and not yet moved
 *   dq:{Q}:p     hash    id -> payload, while the task is in z (and after
 *                        it is dead-lettered)
 *   dq:{Q}:s     Stream  one entry per moved task: fields id, due (the
 *                        original due ms), n (deliveries made before this
 *                        entry: nacks), p (the payload); consumer group "g"
 *   dq:{Q}:a     hash    id -> deliveries made, written by nack and by the
 *                        dead-letter move (absent: 0)
 *   dq:{Q}:d     hash    id -> original due ms of a nacked task in z
 *   dq:{Q}:dead  ZSet    id -> ms when dead-lettered (max_attempts, dq.h)
 *
 * Commands per task (no contention, backlog present):
 *   enqueue  MULTI; HSET p id pl; HDEL a id; HDEL d id; ZADD z due id;
 *            EXEC  (1 round trip; enqueue_many: one per 1000 tasks)
 *   claim    EVALSHA <tick> 6 z s p a d dead now g <consumer> lease_ms
 *            <cursor> batch move_batch max_attempts  (1 round trip):
 *            1. the mover: ZRANGEBYSCORE z -inf now LIMIT 0 move_batch;
 *               per task HGET a/d/p, XADD s * id .. due .. n .. p ..,
 *               ZREM z, HDEL p d (a task with n >= max_attempts goes to
 *               dead instead);
 *            2. takeover: XAUTOCLAIM s g <consumer> lease_ms <cursor> COUNT
 *               batch, and XPENDING s g <eid> <eid> 1 per entry taken for
 *               its delivery count (attempt = n + delivery count; a task
 *               over max_attempts is XACKed, XDELed and dead-lettered);
 *            3. when nothing was taken over: XREADGROUP GROUP g <consumer>
 *               COUNT batch STREAMS s >  (in a script it never blocks);
 *            4. ZRANGE z 0 0 WITHSCORES: the head's due time.
 *            A missing group (first use, a Redis restart without
 *            persistence, a purge) is created here: XGROUP CREATE s g 0,
 *            once the stream exists.
 *            When the tick found nothing: XREADGROUP GROUP g <consumer>
 *            COUNT batch BLOCK <ms> STREAMS s >  (1 round trip), woken at
 *            once by any other consumer's mover, then tick again.
 *   ack      EVALSHA <ack> (1 round trip): XPENDING s g eid eid 1 must show
 *            this consumer and this delivery count, then XACK, XDEL, HDEL
 *            a/d.  Otherwise DQ_ENOTFOUND (the entry was taken over).
 *   nack     EVALSHA <nack> (1 round trip): the same test, then XRANGE for
 *            the entry's fields, XACK, XDEL, HSET p id pl, HSET a id
 *            deliveries, HSET d id due, ZADD z now+delay id.
 *   dq_task.token is "<entry id>:<delivery count>".
 * So 3 round trips per task, as lua-lease; one more per empty wait.
 *
 * Who runs the mover: each consumer, in its tick, before it reads.  The
 * alternative, one mover per process (list.c's design), needs a thread, a
 * Pub/Sub wake-up channel and its own failure modes (a lost message, a
 * mover that died); here a queue has movers exactly while it has
 * consumers, and nothing needs moving when nobody reads.  The price: with
 * C consumers, C movers scan the ZSet head (cheap: O(log N) when nothing
 * is due), and a due task waits until some consumer ticks.  So a consumer
 * that finds nothing waits at most until the head it saw falls due, and at
 * most poll_ms (a producer may have enqueued an earlier task since: the
 * poll interval bounds its lateness), and at most its claim timeout; it
 * waits blocked in XREADGROUP BLOCK, so a task moved by another consumer
 * wakes it at once (before the first move creates the stream there is
 * nothing to block on: it sleeps on the client instead).
 *
 * Blocking within the claim timeout (dq.h: at most one round trip more).
 * Redis 7.0 checks blocked clients' timeouts in its cron (hz times a
 * second) unless other traffic wakes it: on an idle 7.0.15 with hz 10,
 * XREADGROUP ... BLOCK b took a median 100.5 ms for every b from 1 to 50
 * and 200.9 ms for b = 100 and 150 (8 calls each; BLPOP 0.005 and 0.05
 * likewise 100.5 ms): a block ends up to 1000/hz ms after it is due.
 * (Expired blocks are found by handleBlockedClientsTimeout, src/timeout.c,
 * run from beforeSleep, and an idle event loop sleeps until the next
 * serverCron.)  To see it: XGROUP CREATE s g 0 MKSTREAM, then
 * `time redis-cli XREADGROUP GROUP g c COUNT 1 BLOCK 5 STREAMS s '>'`.  So
 * this strategy reads the server's configured_hz at open (INFO server),
 * takes slack = 1000/hz ms, and for a wait of w ms blocks for w - slack
 * only; a wait of slack or less is slept on the client (dq_zlua_claim's
 * loop), the deadline kept on the client's monotonic clock.  The head's
 * due time is thus met by a client-side sleep, not by the server's timer.
 * BLOCK 0 (forever) is never sent.
 *
 * Guarantee: at-least-once, surviving a consumer's crash and the process's
 * exit.  Each step is one script or one command, atomic in Redis: a task
 * is in z, or in the Stream (unread, or in one consumer's PEL), or dead.
 * A consumer that dies holding a task leaves the entry in its PEL; after
 * lease_ms without an ack any consumer's tick takes it over (XAUTOCLAIM,
 * min-idle-time lease_ms) and delivers it with attempt + 1 (claims C12,
 * C21).  No duplicates among concurrent consumers while work is shorter
 * than lease_ms and nothing fails: XREADGROUP ">" hands each entry to one
 * consumer.  Due order for one consumer as far as moves go: the mover
 * moves in due order, a reader reads in stream order, taken-over entries
 * first; a task enqueued already due while older moved entries are still
 * unread comes after them (as in list).  Never early: the mover moves by
 * the consumer's dq_now_ms, and a task moved by a consumer whose clock
 * runs ahead is held by the reader until it is due by its own clock
 * (dq_zlua_claim), staying in its PEL.
 *
 * Failure modes: work longer than lease_ms is taken over and done twice
 * (idempotent work needed); a late ack after the takeover returns
 * DQ_ENOTFOUND and leaves the new holder's lease alone.  A Redis restart
 * without persistence loses everything (the ZSet, the Stream and the
 * group); the group is recreated on the next tick.  A connection lost
 * during the tick returns DQ_EIO; entries it read are in this consumer's
 * PEL and come back after lease_ms.  Tasks read in a batch (batch > 1)
 * and held by this handle age in its PEL: hold them longer than lease_ms
 * and they are taken over.  A crashed consumer's name stays in the group
 * (XINFO CONSUMERS) until purge; a handle that closes with an empty PEL
 * deletes its name (XGROUP DELCONSUMER).  cancel finds only tasks still in
 * z (not yet due, or due and not moved): a moved task cannot be found by
 * id without a scan.  reschedule likewise (ZADD XX), a nacked task waiting
 * for its retry included.  Lateness of a task enqueued due before the head
 * a consumer already saw: up to poll_ms.
 *
 * Redis behaviour relied on (Redis 6.2 for XAUTOCLAIM):
 *   XREADGROUP ">": entries never delivered to another consumer of the
 *     group, added to the reader's PEL; BLOCK ms, and not allowed from
 *     scripts ("XREADGROUP command is not allowed with BLOCK option from
 *     scripts" on 7.0.15): https://redis.io/commands/xreadgroup/
 *   XAUTOCLAIM min-idle-time start COUNT: takes over PEL entries idle that
 *     long, increments their delivery count, returns a cursor; 7.0 adds a
 *     third reply element (deleted ids), 6.2 returns nil for deleted
 *     entries: https://redis.io/commands/xautoclaim/
 *   XPENDING key group start end count: id, consumer, idle ms, delivery
 *     count: https://redis.io/commands/xpending/
 *   XACK removes an entry from the PEL; XDEL deletes the entry:
 *     https://redis.io/commands/xack/ https://redis.io/commands/xdel/
 *   XGROUP CREATE / DELCONSUMER: https://redis.io/commands/xgroup-create/
 *   Scripts run atomically (https://redis.io/docs/interact/
 *   programmability/eval-intro/); INFO server reports configured_hz.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "rconn.h"
#include "zlua.h"

#define ST_GROUP "g"
#define ST_NAME_MAX 160
/* Blocked-client timeout granularity when INFO has no configured_hz:
 * Redis's default hz 10. */
#define ST_DEFAULT_SLACK_MS 100

/* Lua: field `name` of a stream entry's flat field list f, or false. */
#define ST_FIELD_SRC                                                         \
    "local function field(f, name)\n"                                        \
    "  for i = 1, #f, 2 do\n"                                                \
    "    if f[i] == name then return f[i + 1] end\n"                         \
    "  end\n"                                                                \
    "  return false\n"                                                       \
    "end\n"

/* KEYS: z s p a d dead.  ARGV: now ms, group, consumer, lease ms, cursor,
 * batch, move_batch, max_attempts (0: unlimited).
 * Returns {cursor, head score|false, group ready 0|1, k,
 *          k times: entry id, task id, due, attempt, delivery count,
 *          payload}. */
static const char tick_src[] =
    ST_FIELD_SRC
    "local now, g, me = ARGV[1], ARGV[2], ARGV[3]\n"
    "local count, max = tonumber(ARGV[6]), tonumber(ARGV[8])\n"
    "local function dead(id, deliveries)\n"
    "  redis.call('ZADD', KEYS[6], now, id)\n"
    "  redis.call('HSET', KEYS[4], id, deliveries)\n"
    "  redis.call('HDEL', KEYS[5], id)\n"
    "end\n"
    "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now,\n"
    "                       'WITHSCORES', 'LIMIT', 0, ARGV[7])\n"
    "for i = 1, #due, 2 do\n"
    "  local id = due[i]\n"
    "  local n = tonumber(redis.call('HGET', KEYS[4], id) or '0')\n"
    "  redis.call('ZREM', KEYS[1], id)\n"
    "  if max > 0 and n >= max then\n"
    "    dead(id, n)\n"
    "  else\n"
    "    local orig = redis.call('HGET', KEYS[5], id) or due[i + 1]\n"
    "    redis.call('XADD', KEYS[2], '*', 'id', id, 'due', orig, 'n', n,\n"
    "               'p', redis.call('HGET', KEYS[3], id) or '')\n"
    "    redis.call('HDEL', KEYS[3], id)\n"
    "    redis.call('HDEL', KEYS[5], id)\n"
    "  end\n"
    "end\n"
    "local ready = 1\n"
    "local r = redis.pcall('XAUTOCLAIM', KEYS[2], g, me, ARGV[4], ARGV[5],\n"
    "                      'COUNT', count)\n"
    "if r.err then\n"
    "  if not string.find(r.err, 'NOGROUP', 1, true) then return r end\n"
    "  if redis.call('EXISTS', KEYS[2]) == 1 then\n"
    "    redis.call('XGROUP', 'CREATE', KEYS[2], g, '0')\n"
    "  else\n"
    "    ready = 0\n"
    "  end\n"
    "  r = {'0-0', {}}\n"
    "end\n"
    "local out = {}\n"
    "for _, e in ipairs(r[2]) do\n"
    "  if e then\n"
    "    local f = e[2]\n"
    "    local id = field(f, 'id')\n"
    "    local pe = redis.call('XPENDING', KEYS[2], g, e[1], e[1], 1)\n"
    "    local n = tonumber(field(f, 'n') or '0')\n"
    "    local cnt = pe[1][4]\n"
    "    if max > 0 and n + cnt > max then\n"
    "      redis.call('XACK', KEYS[2], g, e[1])\n"
    "      redis.call('XDEL', KEYS[2], e[1])\n"
    "      redis.call('HSET', KEYS[3], id, field(f, 'p') or '')\n"
    "      dead(id, n + cnt - 1)\n"
    "    else\n"
    "      for _, v in ipairs({e[1], id, field(f, 'due'), n + cnt, cnt,\n"
    "                          field(f, 'p')}) do out[#out + 1] = v end\n"
    "    end\n"
    "  end\n"
    "end\n"
    "if #out == 0 and ready == 1 then\n"
    "  local rd = redis.call('XREADGROUP', 'GROUP', g, me, 'COUNT', count,\n"
    "                        'STREAMS', KEYS[2], '>')\n"
    "  if rd then\n"
    "    for _, e in ipairs(rd[1][2]) do\n"
    "      local f = e[2]\n"
    "      for _, v in ipairs({e[1], field(f, 'id'), field(f, 'due'),\n"
    "                          tonumber(field(f, 'n') or '0') + 1, 1,\n"
    "                          field(f, 'p')}) do out[#out + 1] = v end\n"
    "    end\n"
    "  end\n"
    "end\n"
    "local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"
    "local res = {r[1], head[2] or false, ready, #out / 6}\n"
    "for i = 1, #out do res[#res + 1] = out[i] end\n"
    "return res\n";

/* Lua: returns 0 unless PEL entry ARGV[2] of group ARGV[1] on stream
 * KEYS[1] belongs to consumer ARGV[3] with delivery count ARGV[4]. */
#define ST_OURS_SRC                                                          \
    "local pe = redis.pcall('XPENDING', KEYS[1], ARGV[1], ARGV[2],\n"        \
    "                       ARGV[2], 1)\n"                                   \
    "if pe.err or #pe == 0 or pe[1][2] ~= ARGV[3] or\n"                      \
    "   tonumber(pe[1][4]) ~= tonumber(ARGV[4]) then\n"                      \
    "  return 0\n"                                                           \
    "end\n"

/* KEYS: s a d.  ARGV: group, entry id, consumer, delivery count, task id.
 * 1 = acked, 0 = not ours. */
static const char ack_src[] =
    ST_OURS_SRC
    "redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])\n"
    "redis.call('XDEL', KEYS[1], ARGV[2])\n"
    "redis.call('HDEL', KEYS[2], ARGV[5])\n"
    "redis.call('HDEL', KEYS[3], ARGV[5])\n"
    "return 1\n";

/* KEYS: s z p a d.  ARGV: group, entry id, consumer, delivery count, task
 * id, retry ms.  1 = the task is back in z at the retry time, 0 = not
 * ours (or the entry does not carry task id ARGV[5]). */
static const char nack_src[] =
    ST_FIELD_SRC
    ST_OURS_SRC
    "local e = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])\n"
    "if #e == 0 or field(e[1][2], 'id') ~= ARGV[5] then return 0 end\n"
    "local f = e[1][2]\n"
    "redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])\n"
    "redis.call('XDEL', KEYS[1], ARGV[2])\n"
    "redis.call('HSET', KEYS[3], ARGV[5], field(f, 'p') or '')\n"
    "redis.call('HSET', KEYS[4], ARGV[5],\n"
    "           tonumber(field(f, 'n') or '0') + tonumber(ARGV[4]))\n"
    "local due = field(f, 'due')\n"
    "if due then redis.call('HSET', KEYS[5], ARGV[5], due) end\n"
    "redis.call('ZADD', KEYS[2], ARGV[6], ARGV[5])\n"
    "return 1\n";

/* KEYS: z p a d.  ARGV: id.  1 = removed, 0 = not in z. */
static const char cancel_src[] =
    "if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end\n"
    "redis.call('HDEL', KEYS[2], ARGV[1])\n"
    "redis.call('HDEL', KEYS[3], ARGV[1])\n"
    "redis.call('HDEL', KEYS[4], ARGV[1])\n"
    "return 1\n";

/* KEYS: z s.  ARGV: group.  Tasks in z plus stream entries not yet read
 * by any consumer (XLEN minus the group's PEL size). */
static const char pending_src[] =
    "local n = redis.call('ZCARD', KEYS[1])\n"
    "local len = redis.call('XLEN', KEYS[2])\n"
    "if len > 0 then\n"
    "  local x = redis.pcall('XPENDING', KEYS[2], ARGV[1])\n"
    "  if x.err then return n + len end\n"
    "  len = len - x[1]\n"
    "end\n"
    "return n + len\n";

/* KEYS: s.  ARGV: group, consumer.  Deletes the consumer when its PEL is
 * empty (DELCONSUMER would drop pending entries: they must come back). */
static const char bye_src[] =
    "local pe = redis.pcall('XPENDING', KEYS[1], ARGV[1], '-', '+', 1,\n"
    "                       ARGV[2])\n"
    "if pe.err or #pe > 0 then return 0 end\n"
    "redis.pcall('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])\n"
    "return 1\n";

typedef struct st_priv {
    redisContext *c;
    dq_script tick, ack, nack, cancel, pending, bye;
    int64_t lease_ms, poll_ms, batch, move_batch, max_attempts;
    int64_t slack_ms;     /* a BLOCK may end this much after it is due */
    int64_t deadline_us;  /* the running claim's deadline (dq_mono_us) */
    int64_t head_ms;      /* z's head after the last tick; INT64_MAX: none */
    bool group_ready;     /* the last tick found the group (XREADGROUP
                             BLOCK on a missing one is an error) */
    char cursor[64];      /* XAUTOCLAIM's cursor, "0-0" to start over */
    char me[ST_NAME_MAX]; /* this handle's consumer name in the group */
    char zkey[128], skey[128], pkey[128], akey[128], dkey[128],
        deadkey[128];
    dq_held held;  /* entries read (in our PEL), not yet handed out */
} st_priv;

static const dq_optdef st_options[] = {
    DQ_OPTDEF_INT("lease_ms", "30000", 1, 86400000,
                  "visibility timeout: an entry not acked this many ms "
                  "after its delivery is taken over by XAUTOCLAIM "
                  "(1..86400000)"),
    DQ_OPTDEF_INT("poll_ms", "500", 1, 60000,
                  "longest wait before this consumer runs the mover "
                  "again, ms: bounds the lateness of a task enqueued due "
                  "before the head it saw (1..60000)"),
    DQ_OPTDEF_INT("batch", "1", 1, 1000,
                  "entries read or taken over per call (COUNT)"),
    DQ_OPTDEF_INT("move_batch", "100", 1, 10000,
                  "due tasks the mover moves per call"),
    DQ_OPTDEF_INT("max_attempts", "0", 0, 1000000000,
                  "deliveries before a task goes to the dead-letter set "
                  "dq:{Q}:dead instead (0: unlimited)"),
    DQ_OPTDEF_END,
};

/* A consumer name unique to this handle: two handles sharing a name would
 * share a PEL, and the ack test (this consumer, this delivery count) would
 * accept one another's tasks. */
static void st_consumer_name(const dq_queue *q, char *buf, size_t len)
{
    uint32_t r = 0;

    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)dq_mono_us() ^ (uint32_t)(uintptr_t)buf;
    snprintf(buf, len, "%.100s-%ld-%08x",
             q->cfg.consumer != NULL ? q->cfg.consumer : "c", (long)getpid(),
             (unsigned)r);
}

/* slack_ms from INFO server's configured_hz (else hz; else the default):
 * 1000/hz rounded up, what a blocked client's timeout may be late. */
static int st_read_slack(dq_queue *q, st_priv *p)
{
    const char *argv[2] = {"INFO", "server"};
    static const char *const keys[2] = {"configured_hz:", "\nhz:"};
    redisReply *r;
    int rc;

    p->slack_ms = ST_DEFAULT_SLACK_MS;
    r = dq_redis_cmd(q, p->c, &rc, 2, argv, NULL);
    if (r == NULL)
        return rc;
    for (size_t i = 0; r->type == REDIS_REPLY_STRING && i < 2; i++) {
        const char *at = strstr(r->str, keys[i]);
        long hz;

        if (at != NULL && sscanf(at + strlen(keys[i]), "%ld", &hz) == 1 &&
            hz >= 1 && hz <= 500) {
            p->slack_ms = (1000 + hz - 1) / hz;
            break;
        }
    }
    freeReplyObject(r);
    return DQ_OK;
}

static int st_read_options(dq_queue *q, st_priv *p)
{
    int rc;

    if ((rc = dq_opt_i64(q, "lease_ms", &p->lease_ms)) != DQ_OK ||
        (rc = dq_opt_i64(q, "poll_ms", &p->poll_ms)) != DQ_OK ||
        (rc = dq_opt_i64(q, "batch", &p->batch)) != DQ_OK ||
        (rc = dq_opt_i64(q, "move_batch", &p->move_batch)) != DQ_OK ||
        (rc = dq_opt_i64(q, "max_attempts", &p->max_attempts)) != DQ_OK)
        return rc;
    return DQ_OK;
}

static int st_open(dq_queue *q)
{
    st_priv *p;
    int rc;

    p = calloc(1, sizeof *p);
    if (p == NULL)
        return dq_fail(q, DQ_ENOMEM, "streams: out of memory");
    p->tick.src = tick_src;
    p->ack.src = ack_src;
    p->nack.src = nack_src;
    p->cancel.src = cancel_src;
    p->pending.src = pending_src;
    p->bye.src = bye_src;
    if ((rc = st_read_options(q, p)) != DQ_OK)
        goto free_priv;
    dq_redis_key(q, DQ_ZH_ZSET, p->zkey, sizeof p->zkey);
    dq_redis_key(q, DQ_ZH_HASH, p->pkey, sizeof p->pkey);
    dq_redis_key(q, "s", p->skey, sizeof p->skey);
    dq_redis_key(q, "a", p->akey, sizeof p->akey);
    dq_redis_key(q, "d", p->dkey, sizeof p->dkey);
    dq_redis_key(q, "dead", p->deadkey, sizeof p->deadkey);
    st_consumer_name(q, p->me, sizeof p->me);
    snprintf(p->cursor, sizeof p->cursor, "0-0");
    p->head_ms = INT64_MAX;
    if ((rc = dq_held_init(q, &p->held, (size_t)p->batch)) != DQ_OK)
        goto free_priv;
    /* The socket timeout outlasts the longest BLOCK (< poll_ms). */
    rc = dq_redis_connect(q, "6.2.0", p->poll_ms + DQ_SOCK_TIMEOUT_MS, &p->c);
    if (rc != DQ_OK)
        goto free_held;
    if ((rc = st_read_slack(q, p)) != DQ_OK)
        goto free_conn;
    q->priv = p;
    return DQ_OK;

free_conn:
    redisFree(p->c);
free_held:
    dq_held_free(&p->held);
free_priv:
    free(p);
    return rc;
}

static void st_close(dq_queue *q)
{
    st_priv *p = q->priv;

    if (p == NULL)
        return;
    /* Held entries stay in our PEL and are taken over after lease_ms.  On
     * a failed connection, skip the courtesy: close must not reconnect. */
    if (p->c != NULL && p->c->err == 0) {
        const char *args[3] = {p->skey, ST_GROUP, p->me};
        int64_t ignored;

        dq_redis_eval_int(q, p->c, &p->bye, 1, 3, args, NULL,
                          "bye script: unexpected reply", &ignored);
    }
    dq_zlua_close(&p->held, p->c);
    free(p);
    q->priv = NULL;
}

/* enqueue and enqueue_many: dq_zh_enqueue_many also clears a and d, which
 * a re-used id may still have. */
static int st_enqueue_many(dq_queue *q, const dq_enqueue_item *items,
                           size_t n)
{
    st_priv *p = q->priv;
    const char *const clear[2] = {p->akey, p->dkey};

    return dq_zh_enqueue_many(q, p->c, items, n, clear, 2);
}

static int st_enqueue(dq_queue *q, const char *id, const void *payload,
                      size_t payload_len, int64_t due_ms)
{
    const dq_enqueue_item item = {id, payload, payload_len, due_ms};

    return st_enqueue_many(q, &item, 1);
}

/* Fills *t from one delivered entry: its stream id eid, the replies of
 * its task id, due and payload, the attempt and the entry's delivery
 * count.  index only goes into messages. */
static int st_fill_task(dq_queue *q, const redisReply *eid,
                        const redisReply *id, const redisReply *due,
                        const redisReply *pl, int64_t attempt, int64_t cnt,
                        size_t index, dq_task *t)
{
    int rc;

    rc = dq_zlua_task_copy(q, id, due, pl, index, t);
    if (rc != DQ_OK)
        return rc;
    if (eid->type != REDIS_REPLY_STRING || eid->len == 0 || eid->len > 48 ||
        attempt < 1 || attempt > 1000000000 || cnt < 1 || cnt > attempt) {
        dq_task_clear(t);
        return dq_fail(q, DQ_EPROTO, "streams: bad entry %zu in reply",
                       index);
    }
    t->attempt = (int)attempt;
    snprintf(t->token, sizeof t->token, "%.*s:%lld", (int)eid->len,
             eid->str, (long long)cnt);
    return DQ_OK;
}

/* Parses the tick's reply into p (cursor, head, group) and p->held. */
static int st_tick_reply(dq_queue *q, st_priv *p, const redisReply *r)
{
    int64_t ready, k;
    int rc = DQ_OK;

    if (r->type != REDIS_REPLY_ARRAY || r->elements < 4 ||
        r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[0]->len >= sizeof p->cursor ||
        !dq_reply_int(r->element[2], &ready) ||
        !dq_reply_int(r->element[3], &k) || k < 0 ||
        k > (int64_t)p->held.cap || r->elements != 4 + 6 * (size_t)k)
        return dq_fail(q, DQ_EPROTO, "streams: tick script: unexpected "
                       "reply");
    memcpy(p->cursor, r->element[0]->str, r->element[0]->len);
    p->cursor[r->element[0]->len] = '\0';
    p->group_ready = ready == 1;
    p->head_ms = INT64_MAX;
    if (r->element[1]->type != REDIS_REPLY_NIL &&
        !dq_reply_score_ms(r->element[1], &p->head_ms))
        return dq_fail(q, DQ_EPROTO, "streams: tick script: bad head");
    for (size_t i = 0; i < (size_t)k && rc == DQ_OK; i++) {
        redisReply *const *e = &r->element[4 + 6 * i];
        int64_t attempt, cnt;

        if (!dq_reply_int(e[3], &attempt) || !dq_reply_int(e[4], &cnt))
            rc = dq_fail(q, DQ_EPROTO, "streams: tick script: bad entry "
                         "%zu", i);
        else
            rc = st_fill_task(q, e[0], e[1], e[2], e[5], attempt, cnt, i,
                              &p->held.tasks[i]);
        if (rc == DQ_OK)
            p->held.count = i + 1;
    }
    if (rc != DQ_OK) /* the entries stay in our PEL: taken over later */
        dq_held_drop(&p->held);
    p->held.head = 0;
    return rc;
}

/* One tick (the mover, the takeover, a non-blocking read). */
static int st_tick(dq_queue *q, st_priv *p)
{
    char now[32], lease[32], count[32], move[32], max[32];
    const char *args[14] = {p->zkey, p->skey, p->pkey, p->akey, p->dkey,
                            p->deadkey, now, ST_GROUP, p->me, lease,
                            p->cursor, count, move, max};
    redisReply *r;
    int rc;

    snprintf(now, sizeof now, "%lld", (long long)dq_now_ms(q));
    snprintf(lease, sizeof lease, "%lld", (long long)p->lease_ms);
    snprintf(count, sizeof count, "%lld", (long long)p->batch);
    snprintf(move, sizeof move, "%lld", (long long)p->move_batch);
    snprintf(max, sizeof max, "%lld", (long long)p->max_attempts);
    r = dq_redis_eval(q, p->c, &p->tick, &rc, 6, 14, args, NULL);
    if (r == NULL)
        return rc;
    rc = st_tick_reply(q, p, r);
    freeReplyObject(r);
    return rc;
}

/* Value reply of field `name` in a stream entry's field array, or NULL. */
static const redisReply *st_field(const redisReply *f, const char *name)
{
    if (f->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (size_t i = 0; i + 1 < f->elements; i += 2)
        if (f->element[i]->type == REDIS_REPLY_STRING &&
            strcmp(f->element[i]->str, name) == 0)
            return f->element[i + 1];
    return NULL;
}

/* Fills p->held from a blocking XREADGROUP's reply [[key, [[eid,
 * [field, value, ...]], ...]]]: every entry a first delivery of its
 * stream entry (delivery count 1). */
static int st_read_reply(dq_queue *q, st_priv *p, const redisReply *r)
{
    const redisReply *entries;
    int rc = DQ_OK;

    if (r->type == REDIS_REPLY_NIL)
        return DQ_OK;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
        r->element[0]->type != REDIS_REPLY_ARRAY ||
        r->element[0]->elements != 2 ||
        r->element[0]->element[1]->type != REDIS_REPLY_ARRAY ||
        r->element[0]->element[1]->elements > p->held.cap)
        return dq_fail(q, DQ_EPROTO, "XREADGROUP: unexpected reply");
    entries = r->element[0]->element[1];
    for (size_t i = 0; i < entries->elements && rc == DQ_OK; i++) {
        const redisReply *e = entries->element[i];
        const redisReply *id, *due, *pl;
        int64_t n;

        if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
            (id = st_field(e->element[1], "id")) == NULL ||
            (due = st_field(e->element[1], "due")) == NULL ||
            (pl = st_field(e->element[1], "p")) == NULL ||
            !dq_reply_int(st_field(e->element[1], "n"), &n)) {
            rc = dq_fail(q, DQ_EPROTO, "XREADGROUP: bad entry %zu", i);
            break;
        }
        rc = st_fill_task(q, e->element[0], id, due, pl, n + 1, 1, i,
                          &p->held.tasks[i]);
        if (rc == DQ_OK)
            p->held.count = i + 1;
    }
    if (rc != DQ_OK)
        dq_held_drop(&p->held);
    p->held.head = 0;
    return rc;
}

/* XREADGROUP ... BLOCK block_ms (>= 1): waits for an entry another
 * consumer's mover adds.  A group deleted meanwhile (purge, restart) is
 * not an error: the next tick recreates it. */
static int st_block(dq_queue *q, st_priv *p, int64_t block_ms)
{
    char count[32], block[32];
    const char *argv[11] = {"XREADGROUP", "GROUP", ST_GROUP, p->me, "COUNT",
                            count, "BLOCK", block, "STREAMS", p->skey, ">"};
    redisReply *r;
    int rc;

    snprintf(count, sizeof count, "%lld", (long long)p->batch);
    snprintf(block, sizeof block, "%lld", (long long)block_ms);
    r = dq_redis_cmd(q, p->c, &rc, 11, argv, NULL);
    if (r == NULL) {
        if (rc == DQ_EREDIS && (strstr(q->err, "NOGROUP") != NULL ||
                                strstr(q->err, "UNBLOCKED") != NULL)) {
            p->group_ready = false;
            return DQ_OK;
        }
        return rc;
    }
    rc = st_read_reply(q, p, r);
    freeReplyObject(r);
    return rc;
}

/* The dq_zlua_fetch_fn of the claim loop: a tick, and when it found
 * nothing, a wait for w = min(time left, poll_ms, head - now): blocked in
 * the server for w - slack_ms when that is at least 1 ms (then *wait_us
 * 0: tick again at once), else slept by the caller (*wait_us = w). */
static int st_fetch(dq_queue *q, int64_t *wait_us)
{
    st_priv *p = q->priv;
    int64_t w_us, block_ms;
    int rc;

    *wait_us = 0;
    if ((rc = st_tick(q, p)) != DQ_OK || p->held.count > 0)
        return rc;
    w_us = p->deadline_us - dq_mono_us();
    if (w_us > p->poll_ms * 1000)
        w_us = p->poll_ms * 1000;
    if (p->head_ms != INT64_MAX) {
        int64_t head_us = p->head_ms * 1000 - dq_now_us(q);
        if (head_us < w_us)
            w_us = head_us;
    }
    if (w_us <= 0)
        return DQ_OK;
    block_ms = w_us / 1000 - p->slack_ms;
    if (!p->group_ready || block_ms < 1) {
        *wait_us = w_us;
        return DQ_OK;
    }
    return st_block(q, p, block_ms);
}

static int st_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    st_priv *p = q->priv;

    p->deadline_us = dq_deadline_us(timeout_ms);
    return dq_zlua_claim(q, &p->held, timeout_ms, p->poll_ms, st_fetch, out);
}

/* Splits token "<entry id>:<delivery count>". */
static bool st_parse_token(const char *tok, char *eid, size_t elen,
                           char *cnt, size_t clen)
{
    const char *colon = strrchr(tok, ':');
    size_t n;

    if (colon == NULL || colon == tok || colon[1] == '\0')
        return false;
    n = (size_t)(colon - tok);
    if (n >= elen || strlen(colon + 1) >= clen ||
        strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
        strspn(tok, "0123456789-") != n)
        return false;
    memcpy(eid, tok, n);
    eid[n] = '\0';
    snprintf(cnt, clen, "%s", colon + 1);
    return true;
}

static int st_ack(dq_queue *q, const dq_task *t)
{
    st_priv *p = q->priv;
    char eid[64], cnt[24];
    const char *args[8] = {p->skey, p->akey, p->dkey, ST_GROUP, eid, p->me,
                           cnt, t->id};
    int64_t ok = 0;
    int rc;

    if (!st_parse_token(t->token, eid, sizeof eid, cnt, sizeof cnt))
        return dq_fail(q, DQ_EINVAL, "ack %s: token '%.64s' is not a "
                       "streams token (entry:count)", t->id, t->token);
    rc = dq_redis_eval_int(q, p->c, &p->ack, 3, 8, args, NULL,
                           "ack script: unexpected reply", &ok);
    if (rc == DQ_OK && ok != 1)
        rc = dq_fail(q, DQ_ENOTFOUND, "ack %s: entry %s (delivery %s) is no "
                     "longer ours: taken over after lease_ms, or acked or "
                     "nacked", t->id, eid, cnt);
    return rc;
}

/* nack: the task goes back into z at now + delay_ms with its payload, its
 * original due time (d) and its deliveries so far (a), atomically with the
 * check that the entry is still ours. */
static int st_nack(dq_queue *q, const dq_task *t, int64_t delay_ms)
{
    st_priv *p = q->priv;
    char eid[64], cnt[24], retry[32];
    const char *args[11] = {p->skey, p->zkey, p->pkey, p->akey, p->dkey,
                            ST_GROUP, eid, p->me, cnt, t->id, retry};
    int64_t ok = 0;
    int rc;

    if (!st_parse_token(t->token, eid, sizeof eid, cnt, sizeof cnt))
        return dq_fail(q, DQ_EINVAL, "nack %s: token '%.64s' is not a "
                       "streams token (entry:count)", t->id, t->token);
    snprintf(retry, sizeof retry, "%lld",
             (long long)(dq_now_ms(q) + delay_ms));
    rc = dq_redis_eval_int(q, p->c, &p->nack, 5, 11, args, NULL,
                           "nack script: unexpected reply", &ok);
    if (rc == DQ_OK && ok != 1)
        rc = dq_fail(q, DQ_ENOTFOUND, "nack %s: entry %s (delivery %s) is "
                     "no longer ours: taken over after lease_ms, or acked or "
                     "nacked", t->id, eid, cnt);
    return rc;
}

static int st_cancel(dq_queue *q, const char *id)
{
    st_priv *p = q->priv;
    const char *args[5] = {p->zkey, p->pkey, p->akey, p->dkey, id};
    int64_t ok = 0;
    int rc;

    rc = dq_redis_eval_int(q, p->c, &p->cancel, 4, 5, args, NULL,
                           "cancel script: unexpected reply", &ok);
    if (rc == DQ_OK && ok != 1)
        rc = dq_fail(q, DQ_ENOTFOUND, "cancel %s: no such task in the delay "
                     "set (absent, or already moved to the stream)", id);
    return rc;
}

static int st_reschedule(dq_queue *q, const char *id, int64_t due_ms)
{
    st_priv *p = q->priv;

    return dq_zh_reschedule(q, p->c, id, due_ms);
}

/* Tasks in z, stream entries nobody read yet, and entries this handle
 * read and holds. */
static int64_t st_pending(dq_queue *q)
{
    st_priv *p = q->priv;
    const char *args[3] = {p->zkey, p->skey, ST_GROUP};
    int64_t n = 0;
    int rc;

    rc = dq_redis_eval_int(q, p->c, &p->pending, 2, 3, args, NULL,
                           "pending script: unexpected reply", &n);
    if (rc != DQ_OK)
        return rc;
    return n + (int64_t)p->held.count;
}

static int64_t st_dead_letters(dq_queue *q)
{
    st_priv *p = q->priv;
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

static int st_purge(dq_queue *q)
{
    st_priv *p = q->priv;

    dq_held_drop(&p->held);
    snprintf(p->cursor, sizeof p->cursor, "0-0");
    p->head_ms = INT64_MAX;
    p->group_ready = false;
    return dq_redis_purge(q, p->c);
}

static int st_exists(dq_queue *q)
{
    st_priv *p = q->priv;

    return dq_redis_exists(q, p->c);
}

const dq_strategy dq_strategy_streams = {
    .name = "streams",
    .summary = "ZSet for the delay, each consumer's mover script XADDs due "
               "tasks to a Stream; XREADGROUP, XACK, XAUTOCLAIM after "
               "lease_ms: at-least-once",
    .flags = DQ_G_AT_LEAST_ONCE | DQ_G_SURVIVES_CONSUMER_CRASH |
             DQ_G_NEEDS_REDIS | DQ_G_POLLS | DQ_G_NO_DUP_CONCURRENT |
             DQ_G_DUE_ORDER | DQ_G_SURVIVES_PROCESS_EXIT,
    .min_redis = "6.2.0",
    .options = st_options,
    .open = st_open,
    .enqueue = st_enqueue,
    .claim = st_claim,
    .ack = st_ack,
    .close = st_close,
    .cancel = st_cancel,
    .reschedule = st_reschedule,
    .pending = st_pending,
    .purge = st_purge,
    .exists = st_exists,
    .doc = "A Redis Stream has acks and a takeover of a dead consumer's "
        "entries, but no delays (an entry added with a future id is read at "
        "once, claim C22), so tasks wait in a ZSet and every consumer, "
        "before it reads, runs a mover script (ZRANGEBYSCORE due, XADD, "
        "ZREM); in the same script it takes over entries not acked within "
        "lease_ms (XAUTOCLAIM) and reads new ones (XREADGROUP >).  When "
        "nothing is there it blocks in XREADGROUP BLOCK until the head it "
        "saw is due, at most poll_ms.  Per task: 3 round trips (enqueue, "
        "claim, ack = XACK + XDEL in a script).  At-least-once: a crashed "
        "consumer's task comes back after lease_ms with attempt + 1 "
        "(claims C12, C21); nack and max_attempts as lua-lease.  Needs "
        "Redis 6.2.",
    .enqueue_many = st_enqueue_many,
    .nack = st_nack,
    .dead_letters = st_dead_letters,
};
