/* rconn.h -- the Redis plumbing shared by every Redis strategy.
 *
 * hiredis (Debian 12 ships 0.14.1: no redisOptions, no RESP3, no TLS) has
 * two error channels and both must be handled: a transport error sets
 * c->err and makes the context unusable, a command error arrives as a
 * REDIS_REPLY_ERROR reply (NOSCRIPT, WRONGTYPE, ...).  These helpers turn
 * both into a DQ_E* code with the message in the dq_queue handle, count
 * round trips, and keep the blocking-timeout rules in one place.
 */
#ifndef DQ_RCONN_H
#define DQ_RCONN_H

#include <hiredis/hiredis.h>

#include "dq.h"

/* Connects to cfg's Redis (TCP, connect timeout 2000 ms), AUTHs when a
 * password is given (AUTH user pass when a user is given too), SELECTs the
 * db when non-zero, names the connection (client names, below), checks
 * the server version against min_version (e.g.
 * "6.2.0", NULL for any) and sets the socket timeout to sock_timeout_ms,
 * which must exceed the longest blocking call the caller will make, and
 * records it in q->redis_sock_timeout_ms (the largest given on q) for
 * reconnects.  Returns DQ_OK with *out set, or DQ_EIO (unreachable), DQ_EAUTH (wrong
 * password: the password itself is never put in the message), DQ_EVERSION
 * or DQ_EREDIS with the message in q->err naming host:port. */
int dq_redis_connect(dq_queue *q, const char *min_version,
                     int64_t sock_timeout_ms, redisContext **out);
/* dq_redis_connect also: with cfg.sentinels, connects to the primary the
 * Sentinels name (below) instead of redis_host:redis_port, and accepts it
 * only when ROLE says master (DQ_EIO "is a slave ..." otherwise); the
 * first connection it opens on q becomes q->redis_conn, and with option
 * wait > 0 it sets q->redis_confirm (dq.h), so the dq_* wrappers wait for
 * replicas on the connection the strategy writes on.  Every strategy's
 * connections -- command connections, subscribers, list's movers --
 * are made here, so they all follow Sentinel without code of their own. */

/* Sentinel (https://redis.io/docs/management/sentinel/, "Obtaining the
 * address of the current master").  Asks the Sentinels of `sentinels`
 * ("host:port[,host:port...]", at most DQ_SENTINELS_MAX, IPv4 or names,
 * no AUTH), in order, SENTINEL get-master-addr-by-name <name>, each with
 * DQ_SENTINEL_TIMEOUT_MS to connect and to answer; the first one that
 * knows the name gives the answer.  Sentinel names the promoted replica
 * as soon as it saw it turn master, before the failover is complete.
 * Returns DQ_OK with host (hostlen bytes) and *port (1..65535); DQ_EINVAL
 * for a malformed list or a missing name; DQ_EIO when no Sentinel
 * answered or none knows the name (err says the last one's reason).  err:
 * one line, errlen bytes.  Used by the reconnects below and by the
 * harness (replset.h). */
#define DQ_SENTINELS_MAX 8
#define DQ_SENTINEL_TIMEOUT_MS 1000
int dq_sentinel_primary(const char *sentinels, const char *name, char *host,
                        size_t hostlen, int *port, char *err, size_t errlen);

/* The replica wait of option wait (dq.h, dq_redis_options): sends WAIT n
 * timeout_ms on c, which must be the connection the writes to confirm
 * were sent on (WAIT counts that connection's writes only:
 * https://redis.io/commands/wait/).  n <= 0: returns DQ_OK, sends
 * nothing.  Returns DQ_OK when at least n replicas acknowledged; else
 * DQ_EREPLICA ("<what>: 1 of 2 replicas acknowledged within 1000 ms
 * (WAIT): not confirmed") after timeout_ms (>= 1; 0 would mean "for
 * ever"); DQ_EIO when c failed since the write (a reconnected c would
 * confirm nothing) or during WAIT; DQ_EIO too when the server is a
 * replica by now (Sentinel mode).  q->err names `what`. */
int dq_redis_wait_replicas(dq_queue *q, redisContext *c, int64_t n,
                           int64_t timeout_ms, const char *what);

/* Client names.  Every connection dq_redis_connect opens, and every
 * reconnect of it, is named with CLIENT SETNAME "dqlab:<queue>:<consumer>"
 * (consumer "-" when cfg.consumer is NULL; characters a client name cannot
 * hold, and ':', become '_'), so that dqlab can tell its own connections
 * in CLIENT LIST on a server it shares: the mover-stall fault kills only
 * connections named with its queue's prefix, and expiry finds the other
 * expiry subscribers (expiry.c).  One round trip per connect.  Best
 * effort: when the server refuses CLIENT SETNAME (an ACL user with
 * -client) the connection stays unnamed and the connect still succeeds;
 * a transport error fails it.  See https://redis.io/commands/client-setname/
 * and https://redis.io/commands/client-list/. */
#define DQ_CLIENT_NAME_PREFIX "dqlab:"
#define DQ_CLIENT_NAME_MAX 256
/* "dqlab:<queue>:" into buf (buflen bytes): the prefix of every name of
 * that queue's connections. */
void dq_redis_client_prefix(const char *queue, char *buf, size_t buflen);
/* The name dq_redis_connect gives q's connections, followed by suffix
 * (NULL: none; it must hold no spaces), into buf (truncated to buflen). */
void dq_redis_client_name(const dq_queue *q, const char *suffix, char *buf,
                          size_t buflen);

/* Reconnection: a transport error (connection lost, socket timeout) makes
 * a hiredis context unusable.  Every helper below that sends a command
 * first checks c->err and, when set, reconnects the same context
 * (redisReconnect), repeats AUTH, SELECT and CLIENT SETNAME and restores the socket timeout
 * recorded in q->redis_sock_timeout_ms by dq_redis_connect (the version is
 * not checked again).  So the call that met the error returns DQ_EIO (its
 * outcome on the server is unknown), and the next call tries a fresh
 * connection; if that fails it returns DQ_EIO too.  A reconnect whose AUTH
 * or SELECT fails (transport error or error reply: DQ_EIO, DQ_EAUTH,
 * DQ_EREDIS) leaves c marked failed, so no command ever runs on a
 * connection that is unauthenticated or in the wrong db; the next call
 * tries again.
 *
 * With cfg.sentinels every reconnect first asks the Sentinels for the
 * current primary (dq_sentinel_primary) and points c there, then checks
 * ROLE after the handshake: during a failover the next calls return
 * DQ_EIO until Sentinel has promoted a replica, then reach it.  An error
 * reply saying the server is no longer the primary -- READONLY (a write
 * on a replica, e.g. a demoted primary), UNBLOCKED (a blocked command of
 * a primary that turned replica) or WAIT's "cannot be used with replica
 * instances" -- is returned as DQ_EIO (the command was refused: retry)
 * and marks c failed, so the next call rediscovers the primary.  Without
 * Sentinel such replies stay DQ_EREDIS. */

/* Sends argv as one command and waits for the reply (counted in
 * q->counters.round_trips).  On a transport error returns NULL with q->err
 * set ("redis 127.0.0.1:6379: Connection reset by peer") and *rc = DQ_EIO;
 * on an error reply frees it, returns NULL, q->err = "CMD: <error text>",
 * *rc = DQ_EREDIS.  Otherwise returns the reply (caller frees with
 * freeReplyObject) and *rc = DQ_OK.  argvlen may be NULL for C strings. */
redisReply *dq_redis_cmd(dq_queue *q, redisContext *c, int *rc, int argc,
                         const char **argv, const size_t *argvlen);

/* Writes v in decimal ("%" PRId64 as printf writes it) into buf, which
 * must hold 21 bytes, NUL-terminated; returns the length (without the
 * NUL).  For the arguments of commands on the hot paths (due times,
 * "now", counts), where snprintf's format parsing showed in profiles. */
size_t dq_redis_fmt_i64(char *buf, int64_t v);

/* Like dq_redis_cmd, with hiredis's printf-like format.  Pass payloads
 * only through %b (pointer, size_t length), never %s. */
redisReply *dq_redis_cmdf(dq_queue *q, redisContext *c, int *rc,
                          const char *fmt, ...);

/* One command of a pipeline: argc arguments, binary-safe when lens is
 * given (lens may be NULL for C strings). */
typedef struct dq_redis_argv {
    int argc;
    const char **argv;
    const size_t *lens;
} dq_redis_argv;

/* Sends n commands in one write and reads n replies: one round trip
 * (counted once).  On DQ_OK replies[0..n-1] hold every reply (caller frees
 * each with freeReplyObject); a reply may be an error reply: the caller
 * decides (use dq_reply_error() to turn it into DQ_EREDIS).  On a transport
 * error returns DQ_EIO with q->err set and every replies[i] NULL.  When a
 * command cannot be built (out of memory) returns DQ_ENOMEM with nothing
 * sent, and marks c failed (c->err) so that the commands already buffered
 * are dropped: the next helper call reconnects c first (redisReconnect
 * empties the output buffer). */
int dq_redis_pipeline(dq_queue *q, redisContext *c, size_t n,
                      const dq_redis_argv *cmds, redisReply **replies);

/* dq_redis_pipeline for commands whose error replies are failures: when
 * any reply is an error reply, frees every reply, sets q->err to
 * "<argv[0] of that command>: <error text>" and returns DQ_EREDIS.  On
 * DQ_OK replies[0..n-1] hold n non-error replies (caller frees each); on
 * any error every replies[i] is NULL. */
int dq_redis_pipeline_ok(dq_queue *q, redisContext *c, size_t n,
                         const dq_redis_argv *cmds, redisReply **replies);

/* Sends MULTI, the n commands, EXEC in one round trip and returns the EXEC
 * reply (an array of n replies, caller frees).  n must be 1..16 (the
 * helper's fixed buffer; DQ_EINVAL, nothing sent, otherwise).  Returns
 * NULL with *rc =
 * DQ_EIO on a transport error, DQ_EREDIS when a command was rejected
 * (EXECABORT) or any command inside failed at run time (q->err names it:
 * "ZADD: WRONGTYPE ..."; note the other commands of the transaction did
 * run, as Redis does not roll back: https://redis.io/docs/interact/transactions/),
 * DQ_EPROTO on an unexpected reply.  Without WATCH, EXEC never returns nil. */
redisReply *dq_redis_multi(dq_queue *q, redisContext *c, int *rc, size_t n,
                           const dq_redis_argv *cmds);

/* When r is an error reply, sets q->err to "<cmd>: <error text>" and
 * returns DQ_EREDIS; otherwise DQ_OK.  r may be NULL (returns DQ_EPROTO). */
int dq_reply_error(dq_queue *q, const redisReply *r, const char *cmd);

/* Parses a ZSet score reply (bulk string, e.g. "1700000000123" or
 * "1.7e+12") into whole milliseconds, rounding to the nearest.  Returns
 * true on success. */
bool dq_reply_score_ms(const redisReply *r, int64_t *out);

/* A Lua script loaded once with SCRIPT LOAD and called with EVALSHA,
 * falling back to SCRIPT LOAD + EVALSHA again on a NOSCRIPT error (the
 * server's script cache is empty after a restart or SCRIPT FLUSH); see
 * https://redis.io/commands/evalsha/
 * The sha is written on first use, so keep one dq_script per handle (in
 * q->priv), not one static shared by threads. */
typedef struct dq_script {
    const char *src;  /* Lua source, static */
    char sha[41];     /* filled on first use */
} dq_script;

/* Runs script s with numkeys keys then args (all as binary-safe argv;
 * lens may be NULL for C strings): args[0..numkeys-1] are the keys,
 * args[numkeys..nargs-1] the other arguments.  nargs must be 0..64 and
 * numkeys 0..nargs (else NULL, *rc = DQ_EINVAL, nothing sent).  Same
 * return contract as dq_redis_cmd. */
redisReply *dq_redis_eval(dq_queue *q, redisContext *c, dq_script *s, int *rc,
                          int numkeys, int nargs, const char **args,
                          const size_t *lens);

/* dq_redis_eval for a script whose reply is one integer: runs s and
 * parses the reply (integer, or decimal bulk string) into *out, freeing
 * the reply in every case.  Returns DQ_OK; the DQ_E* code of
 * dq_redis_eval (q->err set by it); or DQ_EPROTO with q->err = bad_reply
 * (a fixed message, e.g. "ack: unexpected reply") when the reply is not
 * an integer.  *out is written only on DQ_OK. */
int dq_redis_eval_int(dq_queue *q, redisContext *c, dq_script *s,
                      int numkeys, int nargs, const char **args,
                      const size_t *lens, const char *bad_reply,
                      int64_t *out);

/* The key "dq:{<queue>}:<suffix>" in buf (buflen bytes).  Every key of a
 * queue carries the queue name as its hash tag, so all of them map to one
 * Redis Cluster slot (https://redis.io/docs/reference/cluster-spec/). */
void dq_redis_key(const dq_queue *q, const char *suffix, char *buf,
                  size_t buflen);

/* Deletes every key matching dq:{<queue>}:* (SCAN + UNLINK).  Returns
 * DQ_OK or a DQ_E* code.  Used by purge ops. */
int dq_redis_purge(dq_queue *q, redisContext *c);
/* Returns 1 when any key matches dq:{<queue>}:*, 0 when none, or DQ_E*. */
int dq_redis_exists(dq_queue *q, redisContext *c);
/* The same, leaving out the one key dq:{<queue>}:<keep> (the harness's
 * owner key of the queue, trial_int.h). */
int dq_redis_purge_but(dq_queue *q, redisContext *c, const char *keep);
int dq_redis_exists_but(dq_queue *q, redisContext *c, const char *keep);

/* Calls fn(arg, member) for each member of the ZSet at key, lowest score
 * first, in pages of 1000 (ZRANGE key i i+999: a member added or removed
 * meanwhile may be missed or seen twice).  The dead_letter_ids op of the
 * strategies whose dead-letter set is dq:{Q}:dead (dq.h).  Returns DQ_OK,
 * fn's non-zero value when fn stopped it, or a DQ_E* code with q->err. */
int dq_redis_zset_each(dq_queue *q, redisContext *c, const char *key,
                       dq_id_fn fn, void *arg);

/* Timeout for a blocking command (BLPOP, BZPOPMIN, BLMOVE), in seconds as
 * Redis takes it since 6.0 (a double): clamps wait_ms to [DQ_BLOCK_MIN_MS,
 * DQ_BLOCK_MAX_MS] so that a computed wait below 1 ms never reaches the
 * server as 0, which means "block forever"
 * (https://redis.io/commands/blpop/).  Writes e.g. "0.005" into buf. */
#define DQ_BLOCK_MIN_MS 5
#define DQ_BLOCK_MAX_MS 5000
/* A socket timeout that outlasts any blocking call clamped as above, with
 * room for a slow reply.  Also what a reconnect uses when the handle has
 * no recorded timeout (q->redis_sock_timeout_ms 0): pass this to
 * dq_redis_connect unless you have a reason not to. */
#define DQ_SOCK_TIMEOUT_MS (DQ_BLOCK_MAX_MS + 2000)
void dq_block_timeout(int64_t wait_ms, char *buf, size_t buflen);

/* A blocking command that returns on time.
 *
 * Why it is needed (Redis 7.0 source): blockClient() (src/blocked.c)
 * enters a client with a timeout in server.clients_timeout_table, and only
 * handleBlockedClientsTimeout() (src/timeout.c) answers the ones whose
 * timeout has passed.  It is called from beforeSleep() (src/server.c),
 * that is once per turn of the event loop, and aeProcessEvents() (src/ae.c)
 * sleeps in epoll_wait until the earliest *time event* -- serverCron,
 * every 1000/hz ms, 100 ms at the default hz 10 -- or until a socket is
 * readable; the timeout table is not a time event.  So on an otherwise
 * idle server a BLPOP with a 10 ms timeout answers after up to 100 ms and
 * one of 250 ms after up to 300 ms (measured: ~100 ms and ~300 ms).
 *
 * What dq_redis_block does: it sends argv (argc <= DQ_BLOCK_MAX_ARGC, the
 * blocking command WITHOUT its timeout, e.g. {"BLPOP", key}) with a
 * server-side timeout DQ_BLOCK_EARLY_MS shorter than the time left until
 * deadline_us (a dq_mono_us() time), clamped by dq_block_timeout, and
 * waits for the reply on the socket itself.  When no reply has come by
 * the deadline it sends a PING on the same connection: reading it wakes
 * the event loop, whose beforeSleep() then finds our timeout passed and
 * answers the blocked command (nil, or the item it served just before),
 * and then the PING.  Should that PING arrive too early after all, more
 * follow 2, 4, 8 ... ms later, DQ_BLOCK_WAKE_PINGS in all; after that it
 * waits under the socket timeout as any command does.  The reply is never
 * abandoned half-way, so nothing popped is lost, and the call returns
 * about one round trip after the deadline.  The PONGs are read and
 * dropped.  Cost: one PING per blocking call that times out on an idle
 * server (counted in q->counters.round_trips).
 *
 * The server may also answer up to DQ_BLOCK_EARLY_MS before deadline_us
 * (when other traffic wakes it on time); callers then look once more
 * without blocking.  A wait shorter than DQ_BLOCK_SHORTEST_MS is not worth
 * a blocking call: callers look once without blocking (LPOP, LMOVE,
 * ZPOPMIN) and sleep the rest.
 *
 * Same return contract as dq_redis_cmd: the reply (caller frees; nil when
 * the command timed out), or NULL with *rc = DQ_EIO (transport error:
 * the context is marked failed and the next call reconnects) or DQ_EREDIS
 * (error reply), q->err set.  Redis behaviour relied on: a blocked
 * client's socket is still read, its query buffer "accumulated, and ...
 * processed when the client is unblocked" (blockClient's comment,
 * src/blocked.c), and replies on one connection come in command order.
 *
 * Why DQ_BLOCK_EARLY_MS is 2: getTimeoutFromObjectOrReply() (src/
 * timeout.c) keeps the timeout as whole ms (seconds * 1000 truncated, plus
 * mstime()) and handleBlockedClientsTimeout() unblocks only once mstime()
 * is past it, so it fires up to about 1 ms after the nominal time; 2 ms
 * makes sure the PING sent at our deadline finds it passed. */
#define DQ_BLOCK_EARLY_MS 2
#define DQ_BLOCK_SHORTEST_MS (DQ_BLOCK_MIN_MS + DQ_BLOCK_EARLY_MS)
#define DQ_BLOCK_WAKE_PINGS 4
#define DQ_BLOCK_MAX_ARGC 15
redisReply *dq_redis_block(dq_queue *q, redisContext *c, int *rc, int argc,
                           const char **argv, const size_t *argvlen,
                           int64_t deadline_us);
/* dq_redis_block for a command whose timeout sits inside it and is given
 * in whole milliseconds: XREADGROUP GROUP g c COUNT n BLOCK <ms> STREAMS
 * key id (https://redis.io/commands/xreadgroup/; BLOCK 0 means forever,
 * so the clamp to DQ_BLOCK_MIN_MS matters here too).  argv is the
 * command without the timeout; it is sent with the timeout inserted
 * before argv[timeout_at] (1 <= timeout_at <= argc; argc ==
 * timeout_at puts it last), e.g. timeout_at 7 for {"XREADGROUP",
 * "GROUP", g, c, "COUNT", n, "BLOCK", "STREAMS", key, ">"}.  Otherwise
 * exactly dq_redis_block: same deadline, PINGs and return contract;
 * DQ_EINVAL, nothing sent, for a bad argc or timeout_at.  Redis 7.0's
 * xreadCommand (src/t_stream.c) reads BLOCK with
 * getTimeoutFromObjectOrReply in milliseconds and blocks the client as
 * BLPOP does, so the late timeout and its wake-up above apply alike. */
redisReply *dq_redis_block_ms_at(dq_queue *q, redisContext *c, int *rc,
                                 int argc, const char **argv,
                                 const size_t *argvlen, int timeout_at,
                                 int64_t deadline_us);

/* A malloc'd copy of a bulk-string reply's bytes, NUL-terminated for
 * convenience (*len bytes without the NUL); any other reply type (nil, r
 * NULL) gives an empty string.  Caller frees.  NULL with *len 0 when out
 * of memory. */
unsigned char *dq_reply_copy(const redisReply *r, size_t *len);

/* Parses a reply holding an integer (integer or bulk string "123") into
 * *out.  Returns true on success. */
bool dq_reply_int(const redisReply *r, int64_t *out);

/* ---- The "ZSet of ids + hash of payloads" layout -------------------------
 * Shared by naive, lua and any strategy that keeps
 *   dq:{<queue>}:z  ZSet  member = task id, score = due time in ms
 *   dq:{<queue>}:p  hash  field = task id, value = payload bytes
 * A ms Unix timestamp (~1.7e12) is far below 2^53, so the double score
 * holds it exactly (https://redis.io/docs/data-types/sorted-sets/); the
 * wrappers reject due times beyond +-2^53 (DQ_DUE_MAX_MS). */
#define DQ_ZH_ZSET "z"
#define DQ_ZH_HASH "p"

/* MULTI; HSET p id payload; ZADD z due_ms id; EXEC in one round trip.
 * Re-adding an id replaces its payload and due time.  due_ms (ms since the
 * epoch) must lie within +-DQ_DUE_MAX_MS (2^53, exact as a double score);
 * dq_enqueue checks that, this helper does not.  DQ_OK or DQ_E*. */
int dq_zh_enqueue(dq_queue *q, redisContext *c, const char *id,
                  const void *payload, size_t payload_len, int64_t due_ms);
/* Batched enqueue: for each chunk of at most DQ_ZH_CHUNK items, one
 * round trip of MULTI; HSET p id1 pl1 id2 pl2 ...; [HDEL <clear_keys[k]>
 * id1 id2 ... for each of nclear extra hashes (lua-lease's attempt and
 * due hashes)]; ZADD z due1 id1 due2 id2 ...; EXEC (variadic HSET since
 * Redis 4.0, https://redis.io/commands/hset/; ZADD takes many score/member
 * pairs, https://redis.io/commands/zadd/).  Every chunk is atomic, so a
 * claimer never sees an id without its payload.  nclear <= 8.  DQ_OK or
 * DQ_E*; after an error, the chunks before the failing one are in the
 * queue and the failing one is in or out as a whole (unknown on DQ_EIO).
 * A NULL payload (length 0) is stored as an empty string.  Items repeating
 * an id within one call: the last one wins (one task). */
#define DQ_ZH_CHUNK 1000
int dq_zh_enqueue_many(dq_queue *q, redisContext *c,
                       const dq_enqueue_item *items, size_t n,
                       const char *const *clear_keys, size_t nclear);
/* HDEL p id (the payload of a claimed task).  DQ_OK or DQ_E*. */
int dq_zh_ack(dq_queue *q, redisContext *c, const char *id);
/* MULTI; ZREM z id; HDEL p id; EXEC.  DQ_ENOTFOUND when id was not in the
 * ZSet (already claimed or never added). */
int dq_zh_cancel(dq_queue *q, redisContext *c, const char *id);
/* MULTI; ZSCORE z id; ZADD z XX due_ms id; EXEC.  DQ_ENOTFOUND when id is
 * not in the ZSet (XX: never adds). */
int dq_zh_reschedule(dq_queue *q, redisContext *c, const char *id,
                     int64_t due_ms);
/* ZCARD z: tasks not yet claimed, or a DQ_E* code. */
int64_t dq_zh_pending(dq_queue *q, redisContext *c);

/* Ready-made dq_strategy ops for strategies on this layout whose q->priv
 * points to a struct with `redisContext *c` as its FIRST member (the same
 * first-member rule as dq_lm_base in list_mover.h; users check it with
 * DQ_ZH_PRIV_CHECK).  Each op calls the dq_zh_ / dq_redis_ helper of the
 * same name on that connection, with the contract of the dq.h op:
 *   dq_zh_op_enqueue       dq_zh_enqueue
 *   dq_zh_op_enqueue_many  dq_zh_enqueue_many, no extra hashes to clear
 *   dq_zh_op_ack           dq_zh_ack (HDEL p id)
 *   dq_zh_op_cancel        dq_zh_cancel
 *   dq_zh_op_reschedule    dq_zh_reschedule
 *   dq_zh_op_pending       dq_zh_pending (ZCARD z; no client-side buffer)
 *   dq_zh_op_purge         dq_redis_purge
 *   dq_zh_op_exists        dq_redis_exists
 * A strategy that buffers claimed tasks on the client (lua, zpopmin) must
 * write its own pending and purge. */
int dq_zh_op_enqueue(dq_queue *q, const char *id, const void *payload,
                     size_t payload_len, int64_t due_ms);
int dq_zh_op_enqueue_many(dq_queue *q, const dq_enqueue_item *items,
                          size_t n);
int dq_zh_op_ack(dq_queue *q, const dq_task *t);
int dq_zh_op_cancel(dq_queue *q, const char *id);
int dq_zh_op_reschedule(dq_queue *q, const char *id, int64_t due_ms);
int64_t dq_zh_op_pending(dq_queue *q);
int dq_zh_op_purge(dq_queue *q);
int dq_zh_op_exists(dq_queue *q);
/* Open and close for such strategies when the priv holds nothing else to
 * free (naive, naive-checked).  dq_zh_priv_open callocs `size` bytes (the
 * priv struct), connects its first member c (dq_redis_connect, any Redis
 * version) and sets q->priv; DQ_OK, or a DQ_E* code with q->err and
 * nothing allocated.  The caller fills its other fields afterwards.
 * dq_zh_op_close is the dq.h close op: redisFree(c), free(priv). */
int dq_zh_priv_open(dq_queue *q, size_t size);
void dq_zh_op_close(dq_queue *q);
/* Compile-time check that priv type T starts with `redisContext *c`. */
#define DQ_ZH_PRIV_CHECK(T)                                                  \
    _Static_assert(__builtin_offsetof(T, c) == 0 &&                          \
                       __builtin_types_compatible_p(__typeof__(((T *)0)->c), \
                                                    redisContext *),         \
                   #T " must start with redisContext *c (rconn.h)")

/* The claim steps of the find-then-remove strategies (naive, naive-checked,
 * zpopmin).  Each is one round trip; none decides whether the caller owns
 * the task -- that decision is the difference between those strategies. */

/* Find: ZRANGEBYSCORE z -inf <now_ms> WITHSCORES LIMIT 0 1, the earliest
 * task whose due time is <= now_ms (inclusive bound, lowest score first:
 * https://redis.io/commands/zrangebyscore/).  On DQ_OK *found tells
 * whether there was one; if so id (DQ_ID_MAX bytes) gets its id,
 * NUL-terminated, and *due_ms its score.  DQ_EPROTO for an empty or too
 * long member or a score that is not a number; else DQ_E* from the call. */
int dq_zh_find_due(dq_queue *q, redisContext *c, int64_t now_ms,
                   char id[DQ_ID_MAX], int64_t *due_ms, bool *found);

/* Remove + fetch: ZREM z id and HGET p id, pipelined.  On DQ_OK *removed
 * is ZREM's reply (1: this call removed id; 0: it was not in z, e.g.
 * another consumer removed it first) and *payload a malloc'd copy of the
 * hash field (caller frees; NUL-terminated for convenience, *len bytes
 * without the NUL; an absent field gives an empty payload), whatever
 * *removed is: whether to deliver it is the caller's decision.  On error
 * *payload is NULL and *len 0 (DQ_ENOMEM means the call may have removed
 * the task: at-most-once, it is lost). */
int dq_zh_remove_fetch(dq_queue *q, redisContext *c, const char *id,
                       int64_t *removed, unsigned char **payload,
                       size_t *len);

/* Take payload: HGET p id and HDEL p id, pipelined (not atomic with each
 * other; ids are unique per queue by contract).  On DQ_OK *found says
 * whether the field existed; when it did, *payload is a malloc'd copy
 * (caller frees; NUL-terminated, *len bytes without the NUL), else NULL
 * with *len 0. */
int dq_zh_take_payload(dq_queue *q, redisContext *c, const char *id,
                       unsigned char **payload, size_t *len, bool *found);

#endif /* DQ_RCONN_H */
