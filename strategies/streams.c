/* streams.c -- `streams`: a ZSet for the delay, a Redis Stream with one
 * consumer group for delivery, acks and leases.  At-least-once.
 *
 * Why a ZSet at all (claim C22).  A Stream orders entries by id and hands
 * out whatever is there: it has acks and a pending entries list (PEL) per
 * consumer, but no delays.  An entry added with an id in the future is
 * readable at once: on Redis 7.0.15, XADD s 99999999999999-0 and then
 * XREADGROUP ... STREAMS s > returns it immediately, and every later
 * XADD s * gets an id after it (99999999999999-1, ...), because ids only
 * grow (https://redis.io/docs/data-types/streams/, "Entry IDs").  So the
 * delay stays in a ZSet and a mover moves due tasks into the Stream.
 *
 * Keys (one hash tag per queue):
 *   dq:{Q}:z     ZSet    id -> due ms (or retry ms after a nack): tasks
 *                        not yet due, or due and not yet moved
 *   dq:{Q}:p     hash    id -> payload, while the task is in z (and after
 *                        it is dead-lettered)
 *   dq:{Q}:s     Stream  one entry per moved task: fields id, due (the
 *                        original due ms), n (deliveries made before this
 *                        entry), p (the payload), and on an entry moved
 *                        after a lease ran out: from (the old entry's id),
 *                        by (the consumer who held it); consumer group "g"
 *   dq:{Q}:a     hash    id -> deliveries made, written by nack, by the
 *                        close's give-back and by the dead-letter move
 *                        (absent: 0)
 *   dq:{Q}:d     hash    id -> original due ms of a nacked task in z
 *   dq:{Q}:r     hash    id -> stream id of the entry a lease expiry moved
 *                        the task to (for the late ack, below)
 *   dq:{Q}:dead  ZSet    id -> ms when dead-lettered (max_attempts, dq.h;
 *                        dead_letters ZCARD, dead_letter_ids ZRANGE)
 *
 * Commands per task (no contention, backlog present):
 *   enqueue  MULTI; HSET p id pl; HDEL a id; HDEL d id; HDEL r id; ZADD z
 *            due id; EXEC  (1 round trip; enqueue_many: one per 1000)
 *   claim    EVALSHA <tick> 7 z s p a d dead r now g <consumer> lease_ms
 *            batch move_batch max_attempts  (1 round trip):
 *            1. due work, in the order it fell due: ZRANGEBYSCORE z -inf
 *               now LIMIT 0 move_batch (due at their score), and, when
 *               XPENDING s g - + 1 shows the oldest lease ran out,
 *               XPENDING s g - + move_batch (each expired at delivery +
 *               lease_ms).  A task from z: HGET a/d/p, XADD s * id .. due
 *               .. n .. p .., ZREM z, HDEL p d.  An expired entry: XRANGE,
 *               XACK, XDEL, XADD s * with n + its delivery count, from,
 *               by, and HSET r id <new id>.  Either goes to dead instead
 *               once n reaches max_attempts;
 *            2. XREADGROUP GROUP g <consumer> COUNT batch STREAMS s >
 *               (in a script it never blocks);
 *            3. when it read nothing, ZRANGE z 0 0 WITHSCORES and
 *               XPENDING s g - + 1: the next time there is work, the
 *               earlier of z's head and the oldest lease's expiry.
 *            A missing group (first use, a Redis restart without
 *            persistence, a purge) is created here: XGROUP CREATE s g 0,
 *            once the stream exists.
 *            When the tick found nothing: XREADGROUP GROUP g <consumer>
 *            COUNT batch BLOCK <ms> STREAMS s >  (1 round trip), woken at
 *            once by any other consumer's mover, then tick again.
 *   ack      EVALSHA <ack> (1 round trip): XPENDING s g eid eid 1 must show
 *            this consumer and this delivery count, then XACK, XDEL, HDEL
 *            a/d/r (for the late ack see below).  Otherwise DQ_ENOTFOUND.
 *   nack     EVALSHA <nack> (1 round trip): the same test, then XRANGE for
 *            the entry's fields, XACK, XDEL, HSET p id pl, HSET a id
 *            deliveries, HSET d id due, ZADD z now+delay id.
 *   dq_task.token is "<entry id>:<delivery count>"; every delivery is an
 *   entry's first (XREADGROUP >), so attempt = n + 1.
 * So 3 round trips per task, as lua-lease; one more per empty wait.
 *
 * Why an expired lease goes to the stream's tail.  XAUTOCLAIM (Redis 6.2)
 * would hand an entry whose lease ran out straight to the claimer, ahead
 * of everything already waiting in the stream: a task whose work always
 * outlasts its lease is then handed out over and over while the tasks
 * due before its lease ran out wait -- the starvation list-reliable's
 * reaper had when it put expired tasks at the head of its list.  Here an
 * expired entry is re-added behind the entries already in the stream, and
 * within one tick merged with the due tasks of z by the time each fell
 * due (a lease at its expiry), so XREADGROUP > serves it in its turn (the
 * conformance check redelivery_order).  The PEL is read from its head
 * only: its entries are in id order, which is delivery order since every
 * delivery is an XREADGROUP > of the oldest unread entries, so the oldest
 * lease comes first and an unexpired head means nothing has expired.
 * Idle times are the server's (now - delivery time by its clock); should
 * that clock step backwards, a later entry may look older than the head
 * and wait for the head's expiry: late, not lost.
 *
 * Late ack.  A moved entry carries from = the old entry's id and by = its
 * holder.  An ack or nack whose delivery is no longer in its PEL still
 * stands when r[id] names an entry made from that delivery by that
 * consumer which nobody has read yet: nobody took the task again, the
 * work was done once (lua-lease and list-reliable keep the same
 * contract).  The ack deletes that entry; the nack moves it to z.  Once
 * some consumer read it, DQ_ENOTFOUND, and the new holder's lease is left
 * alone.
 *
 * Who runs the mover: each consumer, in its tick, before it reads.  The
 * alternative, one mover per process (list.c's design), needs a thread, a
 * Pub/Sub wake-up channel and its own failure modes (a lost message, a
 * mover that died); here a queue has movers exactly while it has
 * consumers, and nothing needs moving when nobody reads.  The price: with
 * C consumers, C movers scan the ZSet head (cheap: O(log N) when nothing
 * is due), and a due task waits until some consumer ticks.  So a consumer
 * that finds nothing waits at most until the head it saw falls due or the
 * oldest lease it saw runs out, and at most poll_ms (a producer may have
 * enqueued an earlier task since: the poll interval bounds its lateness),
 * and at most its claim timeout; it waits blocked in XREADGROUP BLOCK, so
 * a task moved by another consumer wakes it at once (before the first
 * move creates the stream there is nothing to block on: it sleeps on the
 * client instead).
 *
 * Blocking within the claim timeout (dq.h: at most one round trip more).
 * Redis 7.0 checks blocked clients' timeouts only when its event loop
 * wakes up, which an idle server does hz times a second: on an idle
 * 7.0.15 with hz 10, XREADGROUP ... BLOCK b took a median 100.5 ms for
 * every b from 1 to 50 and 200.9 ms for b = 100 and 150 (8 calls each).
 * To see it: XGROUP CREATE s g 0 MKSTREAM, then `time redis-cli
 * XREADGROUP GROUP g c COUNT 1 BLOCK 5 STREAMS s '>'`.  So the block goes
 * through dq_redis_block_ms_at (rconn.h), which blocks for the whole wait
 * and, when no reply has come by the deadline, sends a PING on the same
 * connection to wake the server's event loop, which then ends the block.
 * A wait shorter than DQ_BLOCK_SHORTEST_MS, or one before the first move
 * created the stream, is slept on the client (dq_zlua_claim's loop).
 * BLOCK 0 (forever) is never sent.
 *
 * Guarantee: at-least-once, surviving a consumer's crash and the process's
 * exit.  Each step is one script or one command, atomic in Redis: a task
 * is in z, or in the Stream (unread, or in one consumer's PEL), or dead.
 * A consumer that dies holding a task leaves the entry in its PEL; once
 * lease_ms has passed without an ack the next tick of any consumer (each
 * waits at most until the oldest lease runs out) moves it to the tail,
 * and it is delivered again with attempt + 1 (claims C12, C21).  No
 * duplicates among concurrent consumers while work is shorter than
 * lease_ms and nothing fails: XREADGROUP ">" hands each entry to one
 * consumer.  Due order for one consumer as far as moves go: the tick
 * moves in the order things fell due, a reader reads in stream order; a
 * task enqueued already due while older moved entries are still unread
 * comes after them (as in list).  Never early: the mover moves by the
 * consumer's dq_now_ms, and a task moved by a consumer whose clock runs
 * ahead is held by the reader until it is due by its own clock
 * (dq_zlua_claim), staying in its PEL.
 *
 * Failure modes: work longer than lease_ms is done twice once another
 * consumer read the moved entry (idempotent work needed); the first
 * holder's late ack then returns DQ_ENOTFOUND.  A Redis restart without
 * persistence loses everything (the ZSet, the Stream and the group); the
 * group is recreated on the next tick.  A connection lost during the tick
 * returns DQ_EIO; entries it read are in this consumer's PEL and come
 * back after lease_ms.  Tasks read in a batch (batch > 1) and held by
 * this handle age in its PEL: hold them longer than lease_ms and they are
 * moved for redelivery (the handle still hands them out: delivered
 * twice).  A graceful close gives the held ones back at once (one script
 * per 28: XACK, XDEL, and back into z at their original due time with
 * payload and deliveries so far, this unhanded read not counted); they
 * come after the entries still unread in the stream.  A crash leaves them
 * to lease_ms.  A crashed consumer's name stays in the group (XINFO
 * CONSUMERS) until purge; a handle that closes with an empty PEL deletes
 * its name (XGROUP DELCONSUMER).  Tasks handed out and not acked stay in
 * the PEL at close: they are the caller's, and come back after lease_ms.
 * cancel finds only tasks still in z (not yet due, or due and not moved):
 * a moved task cannot be found by id without a scan.  reschedule likewise
 * (ZADD XX), a nacked task waiting for its retry included.  dq_pending
 * counts z and the stream's unread entries, moved expired ones included.
 * Lateness of a task enqueued due before the head a consumer already saw:
 * up to poll_ms.
 *
 * Redis behaviour relied on (every command here exists since Redis 5.0;
 * the declared minimum stays 6.2.0, as only 7.0 is tested):
 *   XREADGROUP ">": entries never delivered to another consumer of the
 *     group, added to the reader's PEL; BLOCK ms, and not allowed from
 *     scripts ("XREADGROUP command is not allowed with BLOCK option from
 *     scripts" on 7.0.15): https://redis.io/commands/xreadgroup/
 *   XPENDING key group start end count: id, consumer, idle ms, delivery
 *     count, in id order: https://redis.io/commands/xpending/
 *   XACK removes an entry from the PEL; XDEL deletes the entry, and
 *     XREADGROUP skips deleted entries:
 *     https://redis.io/commands/xack/ https://redis.io/commands/xdel/
 *   XGROUP CREATE / DELCONSUMER: https://redis.io/commands/xgroup-create/
 *   Scripts run atomically (https://redis.io/docs/interact/
 *   programmability/eval-intro/).
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

/* Lua: field `name` of a stream entry's flat field list f, or false. */
#define ST_FIELD_SRC                                                         \
    "local function field(f, name)\n"                                        \
    "  for i = 1, #f, 2 do\n"                                                \
    "    if f[i] == name then return f[i + 1] end\n"                         \
    "  end\n"                                                                \
    "  return false\n"                                                       \
    "end\n"

/* KEYS: z s p a d dead r.  ARGV: now ms, group, consumer, lease ms, batch,
 * move_batch, max_attempts (0: unlimited).
 * 1. Due work, at most move_batch of each kind, in the order it fell due:
 *    tasks in z due by now (at their score), and entries whose lease ran
 *    out (at delivery + lease_ms, the delivery time being now - idle).
 *    A task from z is XADDed to the stream's tail (or dead-lettered with
 *    n >= max); an expired entry is XACKed, XDELed and XADDed anew at the
 *    tail with n = deliveries made, `from` = its old id and `by` = the
 *    consumer whose lease ran out, and r[id] = the new id (or it is
 *    dead-lettered with n >= max).  The PEL is looked at from its head:
 *    its entries are in id order, which is delivery order (every delivery
 *    is an XREADGROUP > of the oldest unread entries), so the oldest
 *    lease is first and an unexpired head means nothing expired.
 * 2. A missing group is created once the stream exists.
 * 3. XREADGROUP GROUP g <consumer> COUNT batch STREAMS s >.
 * 4. When nothing was read: the next time this consumer has something to
 *    do, the earlier of z's head and the oldest lease's expiry.
 * Returns {next ms|false, group ready 0|1, k,
 *          k times: entry id, task id, due, attempt, payload}. */
static const char tick_src[] =
    ST_FIELD_SRC
    "local now, g, me = tonumber(ARGV[1]), ARGV[2], ARGV[3]\n"
    "local lease, count = tonumber(ARGV[4]), tonumber(ARGV[5])\n"
    "local move, max = tonumber(ARGV[6]), tonumber(ARGV[7])\n"
    "local function dead(id, deliveries)\n"
    "  redis.call('ZADD', KEYS[6], ARGV[1], id)\n"
    "  redis.call('HSET', KEYS[4], id, deliveries)\n"
    "  redis.call('HDEL', KEYS[5], id)\n"
    "  redis.call('HDEL', KEYS[7], id)\n"
    "end\n"
    "local function move_due(id, score)\n"
    "  local n = tonumber(redis.call('HGET', KEYS[4], id) or '0')\n"
    "  redis.call('ZREM', KEYS[1], id)\n"
    "  if max > 0 and n >= max then return dead(id, n) end\n"
    "  redis.call('XADD', KEYS[2], '*', 'id', id,\n"
    "             'due', redis.call('HGET', KEYS[5], id) or score, 'n', n,\n"
    "             'p', redis.call('HGET', KEYS[3], id) or '')\n"
    "  redis.call('HDEL', KEYS[3], id)\n"
    "  redis.call('HDEL', KEYS[5], id)\n"
    "end\n"
    "local function requeue(eid, owner, cnt)\n"
    "  local e = redis.call('XRANGE', KEYS[2], eid, eid)\n"
    "  redis.call('XACK', KEYS[2], g, eid)\n"
    "  redis.call('XDEL', KEYS[2], eid)\n"
    "  if #e == 0 then return end\n"
    "  local f = e[1][2]\n"
    "  local id, pl = field(f, 'id'), field(f, 'p') or ''\n"
    "  local n = tonumber(field(f, 'n') or '0') + cnt\n"
    "  if max > 0 and n >= max then\n"
    "    redis.call('HSET', KEYS[3], id, pl)\n"
    "    return dead(id, n)\n"
    "  end\n"
    "  redis.call('HSET', KEYS[7], id, redis.call('XADD', KEYS[2], '*',\n"
    "             'id', id, 'due', field(f, 'due'), 'n', n, 'p', pl,\n"
    "             'from', eid, 'by', owner))\n"
    "end\n"
    "local ready = 1\n"
    "local pe = redis.pcall('XPENDING', KEYS[2], g, '-', '+', 1)\n"
    "if pe.err then\n"
    "  if not string.find(pe.err, 'NOGROUP', 1, true) then return pe end\n"
    "  ready, pe = 0, {}\n"
    "elseif #pe == 1 and tonumber(pe[1][3]) >= lease then\n"
    "  pe = redis.call('XPENDING', KEYS[2], g, '-', '+', move)\n"
    "end\n"
    "local jobs = {}\n"
    "for _, e in ipairs(pe) do\n"
    "  local idle = tonumber(e[3])\n"
    "  if idle >= lease then\n"
    "    jobs[#jobs + 1] = {now - idle + lease, #jobs, false, e[1], e[2],\n"
    "                       tonumber(e[4])}\n"
    "  end\n"
    "end\n"
    "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1],\n"
    "                       'WITHSCORES', 'LIMIT', 0, move)\n"
    "for i = 1, #due, 2 do\n"
    "  jobs[#jobs + 1] = {tonumber(due[i + 1]), #jobs, due[i], due[i + 1]}\n"
    "end\n"
    "table.sort(jobs, function(x, y)\n"
    "  if x[1] ~= y[1] then return x[1] < y[1] end\n"
    "  return x[2] < y[2]\n"
    "end)\n"
    "for _, j in ipairs(jobs) do\n"
    "  if j[3] then move_due(j[3], j[4]) else requeue(j[4], j[5], j[6]) end\n"
    "end\n"
    "if ready == 0 and redis.call('EXISTS', KEYS[2]) == 1 then\n"
    "  redis.call('XGROUP', 'CREATE', KEYS[2], g, '0')\n"
    "  ready = 1\n"
    "end\n"
    "local out = {}\n"
    "if ready == 1 then\n"
    "  local rd = redis.call('XREADGROUP', 'GROUP', g, me, 'COUNT', count,\n"
    "                        'STREAMS', KEYS[2], '>')\n"
    "  if rd then\n"
    "    for _, e in ipairs(rd[1][2]) do\n"
    "      local f = e[2]\n"
    "      for _, v in ipairs({e[1], field(f, 'id'), field(f, 'due'),\n"
    "                          tonumber(field(f, 'n') or '0') + 1,\n"
    "                          field(f, 'p')}) do out[#out + 1] = v end\n"
    "    end\n"
    "  end\n"
    "end\n"
    "local nxt = false\n"
    "if #out == 0 then\n"
    "  local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"
    "  if head[2] then nxt = tonumber(head[2]) end\n"
    "  pe = ready == 1 and redis.call('XPENDING', KEYS[2], g, '-', '+', 1)\n"
    "       or {}\n"
    "  if #pe == 1 then\n"
    "    local exp = now - tonumber(pe[1][3]) + lease\n"
    "    if not nxt or exp < nxt then nxt = exp end\n"
    "  end\n"
    "end\n"
    "local res = {nxt, ready, #out / 5}\n"
    "for i = 1, #out do res[#res + 1] = out[i] end\n"
    "return res\n";

/* Lua: mine(s, r, g, eid, me, cnt, id) finds the entry that holds task
 * id's delivery eid (delivery count cnt) to consumer me in group g of
 * stream s.  Returns eid, true while that delivery is still in me's PEL;
 * or, after its lease ran out and the tick moved it to the tail (r[id]
 * names the new entry, made `from` eid `by` me), the new entry's id and
 * false as long as nobody read it: nobody took the task again, so the
 * late ack or nack stands, as in lua-lease.  Otherwise false (taken
 * again, acked, nacked, or never ours). */
#define ST_MINE_SRC                                                          \
    "local function mine(s, r, g, eid, me, cnt, id)\n"                       \
    "  local pe = redis.pcall('XPENDING', s, g, eid, eid, 1)\n"              \
    "  if pe.err then return false end\n"                                    \
    "  if #pe > 0 then\n"                                                    \
    "    if pe[1][2] ~= me or tonumber(pe[1][4]) ~= tonumber(cnt) then\n"    \
    "      return false\n"                                                   \
    "    end\n"                                                              \
    "    return eid, true\n"                                                 \
    "  end\n"                                                                \
    "  local ne = redis.call('HGET', r, id)\n"                               \
    "  if not ne or #redis.call('XPENDING', s, g, ne, ne, 1) > 0 then\n"     \
    "    return false\n"                                                     \
    "  end\n"                                                                \
    "  local e = redis.call('XRANGE', s, ne, ne)\n"                          \
    "  if #e == 0 or field(e[1][2], 'from') ~= eid or\n"                     \
    "     field(e[1][2], 'by') ~= me or field(e[1][2], 'id') ~= id then\n"   \
    "    return false\n"                                                     \
    "  end\n"                                                                \
    "  return ne, false\n"                                                   \
    "end\n"

/* KEYS: s a d r.  ARGV: group, entry id, consumer, delivery count, task
 * id.  1 = acked (the entry found by mine() is gone), 0 = not ours. */
static const char ack_src[] =
    ST_FIELD_SRC
    ST_MINE_SRC
    "local e, held = mine(KEYS[1], KEYS[4], ARGV[1], ARGV[2], ARGV[3],\n"
    "                     ARGV[4], ARGV[5])\n"
    "if not e then return 0 end\n"
    "if held then redis.call('XACK', KEYS[1], ARGV[1], e) end\n"
    "redis.call('XDEL', KEYS[1], e)\n"
    "redis.call('HDEL', KEYS[2], ARGV[5])\n"
    "redis.call('HDEL', KEYS[3], ARGV[5])\n"
    "redis.call('HDEL', KEYS[4], ARGV[5])\n"
    "return 1\n";

/* KEYS: s z p a d r.  ARGV: group, entry id, consumer, delivery count,
 * task id, retry ms.  1 = the task is back in z at the retry time with
 * its payload, original due (d) and deliveries made (a: the entry's n,
 * plus this delivery while it is in our PEL; a moved entry's n counts
 * it already), 0 = not ours (mine()). */
static const char nack_src[] =
    ST_FIELD_SRC
    ST_MINE_SRC
    "local e, held = mine(KEYS[1], KEYS[6], ARGV[1], ARGV[2], ARGV[3],\n"
    "                     ARGV[4], ARGV[5])\n"
    "if not e then return 0 end\n"
    "local x = redis.call('XRANGE', KEYS[1], e, e)\n"
    "if #x == 0 or field(x[1][2], 'id') ~= ARGV[5] then return 0 end\n"
    "local f = x[1][2]\n"
    "local n = tonumber(field(f, 'n') or '0')\n"
    "if held then\n"
    "  redis.call('XACK', KEYS[1], ARGV[1], e)\n"
    "  n = n + tonumber(ARGV[4])\n"
    "end\n"
    "redis.call('XDEL', KEYS[1], e)\n"
    "redis.call('HSET', KEYS[3], ARGV[5], field(f, 'p') or '')\n"
    "redis.call('HSET', KEYS[4], ARGV[5], n)\n"
    "local due = field(f, 'due')\n"
    "if due then redis.call('HSET', KEYS[5], ARGV[5], due) end\n"
    "redis.call('HDEL', KEYS[6], ARGV[5])\n"
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

/* KEYS: s z p a d r.  ARGV: group, consumer, then pairs of entry id and
 * delivery count: entries this consumer read and never handed out.  Each
 * one still in our PEL with that delivery count goes back into z at its
 * original due time with its payload and the deliveries made before it
 * (n: this read delivered it to nobody), and leaves the stream (XACK,
 * XDEL).  Returns how many went back. */
static const char give_back_src[] =
    ST_FIELD_SRC
    "local back = 0\n"
    "for i = 3, #ARGV - 1, 2 do\n"
    "  local eid = ARGV[i]\n"
    "  local pe = redis.pcall('XPENDING', KEYS[1], ARGV[1], eid, eid, 1)\n"
    "  if not pe.err and #pe == 1 and pe[1][2] == ARGV[2] and\n"
    "     tonumber(pe[1][4]) == tonumber(ARGV[i + 1]) then\n"
    "    local e = redis.call('XRANGE', KEYS[1], eid, eid)\n"
    "    redis.call('XACK', KEYS[1], ARGV[1], eid)\n"
    "    redis.call('XDEL', KEYS[1], eid)\n"
    "    if #e == 1 then\n"
    "      local f = e[1][2]\n"
    "      local id, n = field(f, 'id'), tonumber(field(f, 'n') or '0')\n"
    "      redis.call('HSET', KEYS[3], id, field(f, 'p') or '')\n"
    "      if n > 0 then\n"
    "        redis.call('HSET', KEYS[4], id, n)\n"
    "      else\n"
    "        redis.call('HDEL', KEYS[4], id)\n"
    "      end\n"
    "      redis.call('HDEL', KEYS[5], id)\n"
    "      redis.call('HDEL', KEYS[6], id)\n"
    "      redis.call('ZADD', KEYS[2], field(f, 'due'), id)\n"
    "      back = back + 1\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return back\n";

typedef struct st_priv {
    redisContext *c;
    dq_script tick, ack, nack, cancel, pending, bye, give_back;
    int64_t lease_ms, poll_ms, batch, move_batch, max_attempts;
    int64_t deadline_us;  /* the running claim's deadline (dq_mono_us) */
    int64_t next_ms;      /* after a tick that read nothing: the earlier of
                             z's head and the oldest lease's expiry (ms, by
                             dq_now_ms); INT64_MAX: neither */
    bool group_ready;     /* the last tick found the group (XREADGROUP
                             BLOCK on a missing one is an error) */
    char me[ST_NAME_MAX]; /* this handle's consumer name in the group */
    char zkey[128], skey[128], pkey[128], akey[128], dkey[128],
        deadkey[128], rkey[128];
    dq_held held;  /* entries read (in our PEL), not yet handed out */
} st_priv;

static const dq_optdef st_options[] = {
    DQ_OPTDEF_INT("lease_ms", "30000", 1, 86400000,
                  "visibility timeout: an entry not acked this many ms "
                  "after its delivery goes back to the stream's tail "
                  "for redelivery (1..86400000)"),
    DQ_OPTDEF_INT("poll_ms", "500", 1, 60000,
                  "longest wait before this consumer runs the mover "
                  "again, ms: bounds the lateness of a task enqueued due "
                  "before the head it saw (1..60000)"),
    DQ_OPTDEF_INT("batch", "1", 1, 1000,
                  "entries read per call (COUNT)"),
    DQ_OPTDEF_INT("move_batch", "100", 1, 10000,
                  "due tasks, and separately entries whose lease ran "
                  "out, moved to the stream's tail per call"),
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
    p->give_back.src = give_back_src;
    if ((rc = st_read_options(q, p)) != DQ_OK)
        goto free_priv;
    dq_redis_key(q, DQ_ZH_ZSET, p->zkey, sizeof p->zkey);
    dq_redis_key(q, DQ_ZH_HASH, p->pkey, sizeof p->pkey);
    dq_redis_key(q, "s", p->skey, sizeof p->skey);
    dq_redis_key(q, "a", p->akey, sizeof p->akey);
    dq_redis_key(q, "d", p->dkey, sizeof p->dkey);
    dq_redis_key(q, "dead", p->deadkey, sizeof p->deadkey);
    dq_redis_key(q, "r", p->rkey, sizeof p->rkey);
    st_consumer_name(q, p->me, sizeof p->me);
    p->next_ms = INT64_MAX;
    if ((rc = dq_held_init(q, &p->held, (size_t)p->batch)) != DQ_OK)
        goto free_priv;
    /* The socket timeout outlasts the longest BLOCK (DQ_BLOCK_MAX_MS). */
    rc = dq_redis_connect(q, "6.2.0", DQ_SOCK_TIMEOUT_MS, &p->c);
    if (rc != DQ_OK)
        goto free_held;
    q->priv = p;
    return DQ_OK;

free_held:
    dq_held_free(&p->held);
free_priv:
    free(p);
    return rc;
}

static bool st_parse_token(const char *tok, char *eid, size_t elen,
                           char *cnt, size_t clen);

/* Entry/count pairs per give-back call: 6 keys + 2 + 2 per pair within
 * dq_redis_eval's 64 arguments. */
#define ST_GIVE_BACK_CHUNK 28

/* The graceful close's give-back: the entries p->held read and never
 * handed out go back into z as they were before this handle read them
 * (give_back_src), ST_GIVE_BACK_CHUNK per round trip, counted in
 * putbacks.  Without it they sat in a closed consumer's PEL until
 * lease_ms ran out (30 s by default).  Best effort, as close cannot fail:
 * after an error the rest stay in our PEL and come back after lease_ms.
 * The held tasks are cleared in every case. */
static void st_give_back(dq_queue *q, st_priv *p)
{
    char eid[ST_GIVE_BACK_CHUNK][64], cnt[ST_GIVE_BACK_CHUNK][24];
    const char *args[8 + 2 * ST_GIVE_BACK_CHUNK] = {
        p->skey, p->zkey, p->pkey, p->akey, p->dkey, p->rkey, ST_GROUP,
        p->me};
    size_t i = 0;

    while (i < p->held.count) {
        int nargs = 8, k = 0;
        int64_t back = 0;

        for (; i < p->held.count && k < ST_GIVE_BACK_CHUNK; i++) {
            const dq_task *t = &p->held.tasks[p->held.head + i];

            if (!st_parse_token(t->token, eid[k], sizeof eid[k], cnt[k],
                                sizeof cnt[k]))
                continue; /* not ours to give: only st_fill_task fills */
            args[nargs++] = eid[k];
            args[nargs++] = cnt[k++];
        }
        if (k > 0 && dq_redis_eval_int(q, p->c, &p->give_back, 6, nargs,
                                       args, NULL, "give-back script: "
                                       "unexpected reply", &back) != DQ_OK)
            break;
        q->counters.putbacks += (uint64_t)back;
    }
    dq_held_drop(&p->held);
}

static void st_close(dq_queue *q)
{
    st_priv *p = q->priv;

    if (p == NULL)
        return;
    /* Held entries go back into z now; on a failed connection they stay
     * in our PEL and come back after lease_ms (close must not
     * reconnect). */
    if (p->c != NULL && p->c->err == 0) {
        const char *args[3] = {p->skey, ST_GROUP, p->me};
        int64_t ignored;

        st_give_back(q, p);
        if (p->c->err == 0)
            dq_redis_eval_int(q, p->c, &p->bye, 1, 3, args, NULL,
                              "bye script: unexpected reply", &ignored);
    }
    dq_zlua_close(&p->held, p->c);
    free(p);
    q->priv = NULL;
}

/* enqueue and enqueue_many: dq_zh_enqueue_many also clears a, d and r,
 * which a re-used id may still have. */
static int st_enqueue_many(dq_queue *q, const dq_enqueue_item *items,
                           size_t n)
{
    st_priv *p = q->priv;
    const char *const clear[3] = {p->akey, p->dkey, p->rkey};

    return dq_zh_enqueue_many(q, p->c, items, n, clear, 3);
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

/* Parses the tick's reply into p (next_ms, group) and p->held: every
 * entry a first delivery of its stream entry (delivery count 1). */
static int st_tick_reply(dq_queue *q, st_priv *p, const redisReply *r)
{
    int64_t ready, k;
    int rc = DQ_OK;

    if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
        !dq_reply_int(r->element[1], &ready) ||
        !dq_reply_int(r->element[2], &k) || k < 0 ||
        k > (int64_t)p->held.cap || r->elements != 3 + 5 * (size_t)k)
        return dq_fail(q, DQ_EPROTO, "streams: tick script: unexpected "
                       "reply");
    p->group_ready = ready == 1;
    p->next_ms = INT64_MAX;
    if (r->element[0]->type != REDIS_REPLY_NIL &&
        !dq_reply_score_ms(r->element[0], &p->next_ms))
        return dq_fail(q, DQ_EPROTO, "streams: tick script: bad next time");
    for (size_t i = 0; i < (size_t)k && rc == DQ_OK; i++) {
        redisReply *const *e = &r->element[3 + 5 * i];
        int64_t attempt;

        if (!dq_reply_int(e[3], &attempt))
            rc = dq_fail(q, DQ_EPROTO, "streams: tick script: bad entry "
                         "%zu", i);
        else
            rc = st_fill_task(q, e[0], e[1], e[2], e[4], attempt, 1, i,
                              &p->held.tasks[i]);
        if (rc == DQ_OK)
            p->held.count = i + 1;
    }
    if (rc != DQ_OK) /* the entries stay in our PEL: moved on later */
        dq_held_drop(&p->held);
    p->held.head = 0;
    return rc;
}

/* One tick (due work moved in order, a non-blocking read). */
static int st_tick(dq_queue *q, st_priv *p)
{
    char now[32], lease[32], count[32], move[32], max[32];
    const char *args[14] = {p->zkey, p->skey, p->pkey, p->akey, p->dkey,
                            p->deadkey, p->rkey, now, ST_GROUP, p->me,
                            lease, count, move, max};
    redisReply *r;
    int rc;

    snprintf(now, sizeof now, "%lld", (long long)dq_now_ms(q));
    snprintf(lease, sizeof lease, "%lld", (long long)p->lease_ms);
    snprintf(count, sizeof count, "%lld", (long long)p->batch);
    snprintf(move, sizeof move, "%lld", (long long)p->move_batch);
    snprintf(max, sizeof max, "%lld", (long long)p->max_attempts);
    r = dq_redis_eval(q, p->c, &p->tick, &rc, 7, 14, args, NULL);
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

/* XREADGROUP ... BLOCK until until_us (a dq_mono_us() time, at least
 * DQ_BLOCK_SHORTEST_MS away): waits for an entry another consumer's mover
 * adds, and returns about one round trip after until_us at the latest
 * (dq_redis_block_ms_at).  A group deleted meanwhile (purge, restart) is
 * not an error: the next tick recreates it. */
static int st_block(dq_queue *q, st_priv *p, int64_t until_us)
{
    char count[32];
    /* BLOCK's value goes before argv[7] ("STREAMS"). */
    const char *argv[10] = {"XREADGROUP", "GROUP", ST_GROUP, p->me, "COUNT",
                            count, "BLOCK", "STREAMS", p->skey, ">"};
    redisReply *r;
    int rc;

    snprintf(count, sizeof count, "%lld", (long long)p->batch);
    r = dq_redis_block_ms_at(q, p->c, &rc, 10, argv, NULL, 7, until_us);
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
 * nothing, a wait for w = min(time left, poll_ms, next_ms - now): blocked
 * in the server when the group is there and w is at least
 * DQ_BLOCK_SHORTEST_MS (then *wait_us 0: tick again at once), else slept
 * by the caller (*wait_us = w). */
static int st_fetch(dq_queue *q, int64_t *wait_us)
{
    st_priv *p = q->priv;
    int64_t w_us;
    int rc;

    *wait_us = 0;
    if ((rc = st_tick(q, p)) != DQ_OK || p->held.count > 0)
        return rc;
    w_us = p->deadline_us - dq_mono_us();
    if (w_us > p->poll_ms * 1000)
        w_us = p->poll_ms * 1000;
    if (p->next_ms != INT64_MAX) {
        int64_t next_us = p->next_ms * 1000 - dq_now_us(q);
        if (next_us < w_us)
            w_us = next_us;
    }
    if (w_us <= 0)
        return DQ_OK;
    if (!p->group_ready || w_us < DQ_BLOCK_SHORTEST_MS * 1000) {
        *wait_us = w_us;
        return DQ_OK;
    }
    return st_block(q, p, dq_mono_us() + w_us);
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
    const char *args[9] = {p->skey, p->akey, p->dkey, p->rkey, ST_GROUP,
                           eid, p->me, cnt, t->id};
    int64_t ok = 0;
    int rc;

    if (!st_parse_token(t->token, eid, sizeof eid, cnt, sizeof cnt))
        return dq_fail(q, DQ_EINVAL, "ack %s: token '%.64s' is not a "
                       "streams token (entry:count)", t->id, t->token);
    rc = dq_redis_eval_int(q, p->c, &p->ack, 4, 9, args, NULL,
                           "ack script: unexpected reply", &ok);
    if (rc == DQ_OK && ok != 1)
        rc = dq_fail(q, DQ_ENOTFOUND, "ack %s: entry %s (delivery %s) is no "
                     "longer ours: redelivered after lease_ms, or acked or "
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
    const char *args[12] = {p->skey, p->zkey, p->pkey, p->akey, p->dkey,
                            p->rkey, ST_GROUP, eid, p->me, cnt, t->id,
                            retry};
    int64_t ok = 0;
    int rc;

    if (!st_parse_token(t->token, eid, sizeof eid, cnt, sizeof cnt))
        return dq_fail(q, DQ_EINVAL, "nack %s: token '%.64s' is not a "
                       "streams token (entry:count)", t->id, t->token);
    snprintf(retry, sizeof retry, "%lld",
             (long long)(dq_now_ms(q) + delay_ms));
    rc = dq_redis_eval_int(q, p->c, &p->nack, 6, 12, args, NULL,
                           "nack script: unexpected reply", &ok);
    if (rc == DQ_OK && ok != 1)
        rc = dq_fail(q, DQ_ENOTFOUND, "nack %s: entry %s (delivery %s) is "
                     "no longer ours: redelivered after lease_ms, or acked "
                     "or nacked", t->id, eid, cnt);
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

static int st_dead_letter_ids(dq_queue *q, dq_id_fn fn, void *arg)
{
    st_priv *p = q->priv;

    return dq_redis_zset_each(q, p->c, p->deadkey, fn, arg);
}

static int st_purge(dq_queue *q)
{
    st_priv *p = q->priv;

    dq_held_drop(&p->held);
    p->next_ms = INT64_MAX;
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
               "tasks to a Stream; XREADGROUP, XACK, an entry not acked "
               "within lease_ms re-added at the tail: at-least-once",
    .flags = DQ_G_AT_LEAST_ONCE | DQ_G_SURVIVES_CONSUMER_CRASH |
             DQ_G_NEEDS_REDIS | DQ_G_POLLS | DQ_G_NO_DUP_CONCURRENT |
             DQ_G_DUE_ORDER | DQ_G_SURVIVES_PROCESS_EXIT |
             DQ_G_ZSET_LAYOUT,
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
    .doc = "A Redis Stream has acks and a pending list per consumer, but "
        "no delays (an entry added with a future id is read at once, claim "
        "C22), so tasks wait in a ZSet and every consumer, before it reads, "
        "runs one script that moves due tasks into the Stream (ZRANGEBYSCORE, "
        "XADD, ZREM) and, merged with them in the order each fell due, "
        "re-adds entries not acked within lease_ms at the Stream's tail "
        "(XPENDING, XACK, XDEL, XADD), then reads new ones (XREADGROUP >): "
        "a task whose work outlasts its lease waits its turn instead of "
        "starving the others.  When nothing is there it blocks in "
        "XREADGROUP BLOCK until the head or the oldest lease it saw is due, "
        "at most poll_ms.  Per task: 3 round trips (enqueue, claim, ack = "
        "XACK + XDEL in a script).  At-least-once: a crashed consumer's "
        "task comes back after lease_ms with attempt + 1 (claims C12, C21); "
        "nack and max_attempts as lua-lease.  Needs Redis 6.2.",
    .enqueue_many = st_enqueue_many,
    .nack = st_nack,
    .dead_letters = st_dead_letters,
    .dead_letter_ids = st_dead_letter_ids,
};
