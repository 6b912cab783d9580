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
 * db when non-zero, checks the server version against min_version (e.g.
 * "6.2.0", NULL for any) and sets the socket timeout to sock_timeout_ms,
 * which must exceed the longest blocking call the caller will make.
 * Returns DQ_OK with *out set, or DQ_EIO (unreachable), DQ_EAUTH (wrong
 * password: the password itself is never put in the message), DQ_EVERSION
 * or DQ_EREDIS with the message in q->err naming host:port. */
int dq_redis_connect(dq_queue *q, const char *min_version,
                     int64_t sock_timeout_ms, redisContext **out);

/* Sends argv as one command and waits for the reply (counted in
 * q->counters.round_trips).  On a transport error returns NULL with q->err
 * set ("redis 127.0.0.1:6379: Connection reset by peer") and *rc = DQ_EIO;
 * on an error reply frees it, returns NULL, q->err = "CMD: <error text>",
 * *rc = DQ_EREDIS.  Otherwise returns the reply (caller frees with
 * freeReplyObject) and *rc = DQ_OK.  argvlen may be NULL for C strings. */
redisReply *dq_redis_cmd(dq_queue *q, redisContext *c, int *rc, int argc,
                         const char **argv, const size_t *argvlen);

/* Like dq_redis_cmd, with hiredis's printf-like format.  Pass payloads
 * only through %b (pointer, size_t length), never %s. */
redisReply *dq_redis_cmdf(dq_queue *q, redisContext *c, int *rc,
                          const char *fmt, ...);

/* A Lua script loaded once with SCRIPT LOAD and called with EVALSHA,
 * falling back to SCRIPT LOAD + EVALSHA again on a NOSCRIPT error (the
 * server's script cache is empty after a restart or SCRIPT FLUSH); see
 * https://redis.io/commands/evalsha/ */
typedef struct dq_script {
    const char *src;  /* Lua source, static */
    char sha[41];     /* filled on first use */
} dq_script;

/* Runs script s with numkeys keys then args (all as binary-safe argv;
 * lens may be NULL for C strings).  Same return contract as dq_redis_cmd. */
redisReply *dq_redis_eval(dq_queue *q, redisContext *c, dq_script *s, int *rc,
                          int numkeys, int nargs, const char **args,
                          const size_t *lens);

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

/* Timeout for a blocking command (BLPOP, BZPOPMIN, BLMOVE), in seconds as
 * Redis takes it since 6.0 (a double): clamps wait_ms to [DQ_BLOCK_MIN_MS,
 * DQ_BLOCK_MAX_MS] so that a computed wait below 1 ms never reaches the
 * server as 0, which means "block forever"
 * (https://redis.io/commands/blpop/).  Writes e.g. "0.005" into buf. */
#define DQ_BLOCK_MIN_MS 5
#define DQ_BLOCK_MAX_MS 5000
void dq_block_timeout(int64_t wait_ms, char *buf, size_t buflen);

/* Parses a reply holding an integer (integer or bulk string "123") into
 * *out.  Returns true on success. */
bool dq_reply_int(const redisReply *r, int64_t *out);

#endif /* DQ_RCONN_H */
