/* zlua.h -- the client side of the "one Lua script claims from the ZSet"
 * design, shared by lua (lua.c, at-most-once, batch) and lua-lease
 * (lua_lease.c, at-least-once with a lease).
 *
 * Both claim scripts take ARGV[1] = "" (clock=server: "now" is Redis TIME)
 * or this handle's dq_now_ms(), and reply {n, now, head|nil, task...}: n
 * tasks claimed, the "now" the script used, and, when nothing was due, the
 * score of the ZSet's head (nil for an empty set).  What a claimed task is
 * (removed or leased) and how its fields are laid out stays in each
 * strategy; what is shared here is:
 *   - the Lua that computes "now" and answers "nothing due" (DQ_ZLUA_*),
 *   - the buffer of claimed tasks not yet handed out (dq_held),
 *   - the claim loop: hand out a held task once it is due by this handle's
 *     clock (with clock=server a task can be due by Redis's clock and not
 *     yet by ours: hold it, never return it early), else run the script,
 *     and when nothing is due sleep until the head is due, capped by
 *     poll_ms and by the time left (dq_zlua_claim).
 *
 * Redis behaviour relied on: scripts run atomically and may call TIME
 * since effects replication (Redis 5; https://redis.io/commands/time/ and
 * https://redis.io/docs/interact/programmability/eval-intro/); Lua false
 * becomes a RESP nil (https://redis.io/docs/interact/programmability/lua-api/).
 */
#ifndef DQ_ZLUA_H
#define DQ_ZLUA_H

#include <hiredis/hiredis.h>

#include "dq.h"

/* Lua: sets locals `now` (ms since the epoch, a number) and `nows` (the
 * same as a decimal string) from ARGV[1]: '' means redis.call('TIME'). */
#define DQ_ZLUA_NOW_SRC                                                      \
    "local now\n"                                                            \
    "if ARGV[1] == '' then\n"                                                \
    "  local t = redis.call('TIME')\n"                                       \
    "  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"    \
    "else\n"                                                                 \
    "  now = tonumber(ARGV[1])\n"                                            \
    "end\n"                                                                  \
    "local nows = string.format('%d', now)\n"

/* Lua: when the table `due` (a ZRANGEBYSCORE reply) is empty, returns
 * {0, nows, <score of the head of KEYS[1]> or false}. */
#define DQ_ZLUA_NONE_DUE_SRC                                                 \
    "if #due == 0 then\n"                                                    \
    "  local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"     \
    "  return {0, nows, head[2] or false}\n"                                 \
    "end\n"

/* Claimed tasks not yet handed out: tasks[head .. head+count-1] are held
 * (each owns its payload).  One per handle. */
typedef struct dq_held {
    dq_task *tasks;   /* cap slots */
    size_t cap, head, count;
} dq_held;

/* Allocates cap (>= 1) empty slots.  DQ_OK, or DQ_ENOMEM with q->err. */
int dq_held_init(dq_queue *q, dq_held *h, size_t cap);
/* Clears every held task (their payloads are freed: for at-most-once
 * strategies those tasks are lost); slots stay allocated. */
void dq_held_drop(dq_held *h);
/* dq_held_drop, then frees the slots.  Safe on a zeroed dq_held. */
void dq_held_free(dq_held *h);
/* Gives the held tasks back to a queue on the ZSet + hash layout (rconn.h)
 * as they were before the claim took them: each task's id, payload and
 * original due_ms, in one MULTI; HSET p ...; ZADD z ...; EXEC
 * (dq_zh_enqueue_many) on c, counted in q->counters.putbacks.  For the
 * graceful close of an at-most-once handle (lua, zpopmin with batch > 1),
 * whose buffer was claimed from Redis but never handed out: without this
 * a normal stop, or a consumer restarted by the harness, lost it.
 * Returns DQ_OK (also with nothing held) or the DQ_E* code of
 * dq_zh_enqueue_many with q->err (the tasks are then lost, or on DQ_EIO
 * perhaps back).  The held tasks are cleared in every case. */
int dq_held_give_back(dq_queue *q, redisContext *c, dq_held *h);

/* Opening and closing a Lua strategy's handle, the part lua and lua-lease
 * share: dq_held_init(h, cap), then a connection (dq_redis_connect, which
 * with server_clock needs Redis >= 5.0 for TIME in scripts) into *c.
 * DQ_OK, or a DQ_E* code with q->err and nothing left allocated. */
int dq_zlua_open(dq_queue *q, bool server_clock, dq_held *h, size_t cap,
                 redisContext **c);
/* Frees the held tasks (lost for at-most-once strategies; for a lease they
 * come back when it runs out) and the connection.  c may be NULL. */
void dq_zlua_close(dq_held *h, redisContext *c);

/* Copies one claimed task out of a script reply into *t (zeroed first):
 * id must be a non-empty string shorter than DQ_ID_MAX, due a score
 * (dq_reply_score_ms) and pl a string or nil (empty payload).  t->payload
 * is a malloc'd NUL-terminated copy, owned by t; attempt and token are left
 * 0 and empty.  index (the task's place in the reply, from 0) only goes
 * into the message.  DQ_OK, DQ_EPROTO (q->err: "claim script: bad task
 * <index> in reply") or DQ_ENOMEM; on error t holds no payload. */
int dq_zlua_task_copy(dq_queue *q, const redisReply *id,
                      const redisReply *due, const redisReply *pl,
                      size_t index, dq_task *t);

/* ARGV[1] for a claim script: "" with server_clock, else dq_now_ms(q) in
 * decimal.  buf: at least 32 bytes. */
void dq_zlua_now_arg(const dq_queue *q, bool server_clock, char *buf,
                     size_t buflen);

/* From a "nothing due" reply: head is element 2 (nil: empty ZSet), srv_now
 * element 1 as an integer.  Sets *wait_us to how long until the head is
 * due -- by the server's "now" with server_clock, else by dq_now_us(q) --
 * at least 0, or -1 for an empty ZSet.  DQ_OK, or DQ_EPROTO when head is
 * not a score. */
int dq_zlua_head_wait(dq_queue *q, const redisReply *head, bool server_clock,
                      int64_t srv_now_ms, int64_t *wait_us);

/* Runs one claim script call.  Called only when h->count == 0.  On DQ_OK
 * either it filled h->tasks[0 .. k-1] and set h->head = 0, h->count = k
 * (k >= 1), or it left h->count at 0 and set *wait_us as
 * dq_zlua_head_wait does (-1: empty).  Otherwise a DQ_E* code. */
typedef int (*dq_zlua_fetch_fn)(dq_queue *q, int64_t *wait_us);

/* The claim loop (dq_strategy.claim contract): returns DQ_OK with the next
 * held task moved into *out (the payload goes to the caller) once its
 * due_ms has come by dq_now_us(q); DQ_EMPTY when timeout_ms ran out first;
 * or fetch's error.  Sleeps at most min(time until due, poll_ms, time
 * left).  Counts empty_polls (fetch found nothing) and wakeups (each
 * sleep). */
int dq_zlua_claim(dq_queue *q, dq_held *h, int64_t timeout_ms,
                  int64_t poll_ms, dq_zlua_fetch_fn fetch, dq_task *out);

#endif /* DQ_ZLUA_H */
