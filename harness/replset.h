/* replset.h -- a private primary, its replica and a Redis Sentinel: the
 * servers of the failover fault.
 *
 * dq_replset_start starts three private servers beside each other, each
 * as redis_server.h starts one (127.0.0.1, a free port, its own temporary
 * directory with an owner record, PR_SET_PDEATHSIG, its own process
 * group, registered for a forced exit; so call it from the main thread):
 *   - the primary (no persistence, diskless replication without delay);
 *   - a replica of it (`replicaof`), read-only as replicas are by default;
 *   - one Sentinel (Debian's redis-sentinel) monitoring the primary under
 *     the name DQ_REPLSET_MASTER with quorum 1, from a config file in its
 *     directory that it rewrites as it goes (Sentinel refuses to start
 *     without a writable one).
 * and returns once the replica is in sync and Sentinel sees both servers
 * as healthy.  Clients then find the primary with dq_config.sentinels =
 * rs->sentinels and .sentinel_master = DQ_REPLSET_MASTER (rconn.h).
 *
 * The failover fault (dq_replset_failover) SIGKILLs the primary and waits
 * until Sentinel has promoted the replica; with a lag (dq_replset_lag_start
 * before it) the replica is behind when the primary dies.
 * dq_replset_stop stops what is left and removes the three directories;
 * every exit path must call it (never from a signal handler: signals.h).
 *
 * Our Sentinel must never touch a server that is not ours.  After a
 * failover it remembers the killed primary as a replica to reconfigure,
 * and when a server answers at that address again it turns it into a
 * replica of ours (REPLICAOF, CONFIG REWRITE, CLIENT KILL: "+convert-to-
 * slave", after about 8 s of it claiming to be a primary).  Had another
 * process's redis-server (another test's, another user's) started on the
 * freed port, our Sentinel would take it over.  So the failover keeps the
 * port bound (not listening) until Sentinel has finished and been told
 * to forget the address (SENTINEL RESET); if that fails, Sentinel is
 * stopped.  What remains: a server started on exactly that port by a
 * process that binds it by number with SO_REUSEADDR during those few
 * seconds (redis-server itself does) still gets Sentinel's PINGs, INFO
 * and hello messages, though not a REPLICAOF.
 *
 * Sentinel tuning (a fast failover for a lab, not for production), each
 * set per monitored name in the Sentinel's config file:
 *   down-after-milliseconds DQ_REPLSET_DOWN_AFTER_MS (1000; default
 *       30000): the primary counts as down after 1 s without a valid
 *       reply.  Cost: any stall longer than that -- a slow fork, a long
 *       script, a pause-redis fault, a loaded machine -- is taken for a
 *       crash and triggers a failover of a primary that is still alive
 *       (writes its clients send it meanwhile are lost when it is turned
 *       into a replica); Sentinel also PINGs every instance every
 *       min(1000, down-after) ms.
 *   failover-timeout DQ_REPLSET_FAILOVER_TIMEOUT_MS (10000; default
 *       180000): how long a failover may take (election, promotion seen
 *       in INFO, replicas reconfigured) before Sentinel aborts it, and
 *       half the pause before it tries the same primary again (2 x 10 s).
 *       Cost: on a machine too slow to confirm the promotion within it,
 *       the failover is abandoned and the next try comes 20 s later.
 *   parallel-syncs DQ_REPLSET_PARALLEL_SYNCS (1, the default): replicas
 *       resynchronised with the new primary at once; with one replica it
 *       changes nothing (with more, a higher value resyncs them sooner but
 *       leaves fewer serving reads meanwhile).
 * Quorum 1 with one Sentinel: that Sentinel alone decides and elects
 * itself; production runs at least three on separate machines.  See
 * https://redis.io/docs/management/sentinel/ (configuration, "Sentinel
 * failover" and "Consistency under partitions").
 */
#ifndef DQ_REPLSET_H
#define DQ_REPLSET_H

#include <stddef.h>
#include <stdint.h>

#include "redis_server.h"

#define DQ_REPLSET_MASTER "dqlab"
#define DQ_REPLSET_DOWN_AFTER_MS 1000
#define DQ_REPLSET_FAILOVER_TIMEOUT_MS 10000
#define DQ_REPLSET_PARALLEL_SYNCS 1
/* How long start waits for the replica's sync and for Sentinel. */
#define DQ_REPLSET_READY_TIMEOUT_MS 15000

typedef struct dq_replset {
    dq_redis_server primary;  /* the server in the primary role: after a
                                 failover, the promoted one */
    dq_redis_server replica;  /* after a failover: the killed server (pid
                                 0) until dq_replset_rejoin replaces it */
    dq_redis_server sentinel;
    char sentinels[32];       /* "127.0.0.1:<Sentinel's port>", for
                                 dq_config.sentinels */
    char binary[512];         /* opts.binary, "" for redis-server */
    int64_t lag_since_us;     /* dq_mono_us() when dq_replset_lag_start
                                 paused the replica; 0: not lagging */
} dq_replset;

typedef struct dq_replset_opts {
    const char *binary;          /* NULL: redis-server from PATH */
    const char *sentinel_binary; /* NULL: redis-sentinel from PATH */
    int64_t down_after_ms;       /* 0: DQ_REPLSET_DOWN_AFTER_MS */
    int64_t failover_timeout_ms; /* 0: DQ_REPLSET_FAILOVER_TIMEOUT_MS */
} dq_replset_opts;

/* Starts primary, replica and Sentinel (o may be NULL: the defaults) and
 * waits (up to DQ_REPLSET_READY_TIMEOUT_MS) until the replica reports
 * master_link_status:up, the primary lists it online and WAIT counts it
 * (a replicated PUBLISH on the primary, no key written), and Sentinel's
 * SENTINEL replicas shows it with flags "slave" and link "ok" while
 * SENTINEL master shows the primary with flags "master".  Returns 0 with
 * *rs filled, or -1 with one line in err (errlen bytes): a server that did
 * not start (e.g. "redis-sentinel not found in PATH (apt-get install
 * redis-sentinel)") or did not get ready in time; nothing is left running
 * or on disk then. */
int dq_replset_start(dq_replset *rs, const dq_replset_opts *o, char *err,
                     size_t errlen);

/* What one failover took. */
typedef struct dq_failover_times {
    int64_t kill_us;     /* dq_mono_us() when the SIGKILL was sent */
    int64_t promoted_us; /* dq_mono_us() when Sentinel first named the
                            replica as the primary and it answered ROLE
                            master (polled every DQ_REPLSET_POLL_MS) */
    int64_t promotion_ms;/* promoted_us - kill_us, in ms */
    int64_t behind_bytes;/* how far the replica was behind right before
                            the kill: the primary's master_repl_offset
                            minus the replica's slave_repl_offset (what it
                            applied), bytes of replication stream; -1 when
                            either INFO failed */
    int64_t lagged_ms;   /* kill_us minus rs->lag_since_us, in ms: how
                            long the replica had been lagging; 0 without
                            a lag */
} dq_failover_times;

#define DQ_REPLSET_POLL_MS 5

/* Replica lag, as a busy or distant replica falls behind: from now on the
 * replica applies none of the primary's replication stream (and so
 * acknowledges none of it: REPLCONF ACK reports the applied offset, and a
 * WAIT for it times out), until the failover or dq_replset_lag_stop.  It
 * is CLIENT PAUSE max_ms WRITE on the replica: since Redis 6.2.6 a paused
 * replica keeps reading its primary's stream into the primary's client
 * but executes none of it and does not advance its replication offset
 * (redis/redis pull request 9448; INFO shows slave_read_repl_offset
 * growing, slave_repl_offset not), while it still answers PING and INFO,
 * so Sentinel keeps it as a healthy replica (WRITE mode blocks only
 * commands flagged write or may-replicate; PING, INFO and Sentinel's
 * hello PUBLISH are none of them: COMMAND INFO on Redis 7.0.15).
 * When the primary dies, the replica drops its primary's connection with
 * whatever it had read and not applied (a blocked primary's client is
 * freed, not cached: Redis 7.0 freeClient), so those writes are gone:
 * acknowledged with wait=0, on the primary only.  (On Redis 7.0.15: 100
 * SETs during the pause, WAIT 1 300 returned 0, slave_read_repl_offset
 * 3021 against slave_repl_offset 92; after the kill and CLIENT UNPAUSE the
 * replica held none of the 100.)
 * Why not SIGSTOP or DEBUG SLEEP of the replica: the kernel's socket
 * buffers keep what the primary sent, and the resumed replica reads and
 * applies it even after the primary died (on Redis 7.0.15, 1000 SETs
 * acknowledged during a SIGSTOP, WAIT 1 returning 0, all reached the
 * replica after a SIGKILL of the primary and a SIGCONT), so what is lost
 * would depend on the buffers' size (megabytes on loopback), not on the
 * lag.  Why not CLIENT KILL TYPE master on the replica: it keeps its
 * primary's state (replicationCacheMaster) and resumes with PSYNC within
 * about a second (replicationCron), so it is behind only until it
 * reconnects, not for MS; keeping it cut off longer would take breaking
 * replication (REPLICAOF NO ONE, which Sentinel sees as a second master).
 * max_ms (1..): the pause ends by itself after it, a safety net (a
 * replica paused for good would stall the trio); the failover ends it at
 * once.  Returns 0 with rs->lag_since_us set, or -1 with one line in err
 * (the replica refused or did not answer: no lag). */
int dq_replset_lag_start(dq_replset *rs, int64_t max_ms, char *err,
                         size_t errlen);

/* Ends a lag without a failover (CLIENT UNPAUSE): the replica applies
 * what it read meanwhile and catches up.  Returns 0 (also when there was
 * no lag), or -1 with one line in err (rs->lag_since_us is cleared either
 * way: the pause still ends after its max_ms). */
int dq_replset_lag_stop(dq_replset *rs, char *err, size_t errlen);

/* The failover fault: SIGKILLs the primary (a crash: nothing is flushed,
 * its clients see their connections reset), reaps it, then asks Sentinel
 * (SENTINEL get-master-addr-by-name) every DQ_REPLSET_POLL_MS until it
 * names the replica and the replica's ROLE is master, or timeout_ms
 * passes.  Call from the thread that started rs.  Returns 0 with *t
 * filled (t may be NULL) and the roles swapped (rs->primary the promoted
 * server, rs->replica the killed one, pid 0, its directory kept), or -1
 * with one line in err: no primary running, or no promotion within
 * timeout_ms (the kill has happened either way; the roles stay).
 * Right before the kill it reads both servers' replication offsets
 * (t->behind_bytes).  During a lag (dq_replset_lag_start) it waits after
 * the kill until the replica reports master_link_status:down -- it has
 * dropped what it had not applied -- and only then ends the pause, so
 * that none of it is applied late; no link down within timeout_ms is an
 * error too (the pause ended, the roles stay).
 *
 * Before returning it waits for Sentinel to finish (SENTINEL master shows
 * the new primary, flags "master") and sends SENTINEL RESET (above); when
 * either fails it stops Sentinel and returns -1, roles swapped.
 * Afterwards the new primary has no replica: a client with wait=1 gets
 * DQ_EREPLICA for every write (nothing is acknowledged) until one joins,
 * which is what dq_replset_rejoin does.  Sentinel learns of that replica
 * from the primary's INFO within 10 s; a second failover before that
 * finds no replica to promote. */
int dq_replset_failover(dq_replset *rs, int64_t timeout_ms,
                        dq_failover_times *t, char *err, size_t errlen);

/* After a failover: removes the killed server's directory and starts a
 * new, empty replica of the new primary (a replaced node: a free port, a
 * new directory), waiting until it is in sync and WAIT counts it (up to
 * DQ_REPLSET_READY_TIMEOUT_MS).  Sentinel learns of it from the primary's
 * INFO within 10 s; WAIT counts it as soon as it is in sync.  Call from
 * the thread that started rs.  Returns 0, or -1 with one line in err. */
int dq_replset_rejoin(dq_replset *rs, char *err, size_t errlen);

/* Stops Sentinel, replica and primary (whatever still runs: SIGTERM, then
 * SIGKILL after 3 s, redis_server.h) and removes their directories.  Safe
 * to call twice and on a zeroed struct. */
void dq_replset_stop(dq_replset *rs);

#endif
