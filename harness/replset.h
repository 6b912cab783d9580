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
 * until Sentinel has promoted the replica.  dq_replset_stop stops what is
 * left and removes the three directories; every exit path must call it
 * (never from a signal handler: signals.h).
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
} dq_failover_times;

#define DQ_REPLSET_POLL_MS 5

/* The failover fault: SIGKILLs the primary (a crash: nothing is flushed,
 * its clients see their connections reset), reaps it, then asks Sentinel
 * (SENTINEL get-master-addr-by-name) every DQ_REPLSET_POLL_MS until it
 * names the replica and the replica's ROLE is master, or timeout_ms
 * passes.  Call from the thread that started rs.  Returns 0 with *t
 * filled (t may be NULL) and the roles swapped (rs->primary the promoted
 * server, rs->replica the killed one, pid 0, its directory kept), or -1
 * with one line in err: no primary running, or no promotion within
 * timeout_ms (the kill has happened either way; the roles stay).
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
