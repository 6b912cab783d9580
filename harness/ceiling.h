/* ceiling.h -- what this Redis does for the bare commands on this machine.
 *
 * The performance report states every strategy's throughput as a fraction
 * of what the same server, on the same machine, in the same run, does for
 * the one command a delay queue cannot avoid: adding a member to a sorted
 * set (ZADD), and taking the lowest one (ZPOPMIN).  dqlab measures both
 * itself with hiredis pipelining (redisAppendCommandArgv, then the replies
 * in order: one write and one read per pipeline of `pipeline` commands), so
 * the figure includes the client-side cost a strategy also pays, and
 * optionally runs redis-benchmark (redis-tools) for the server's own view.
 *
 * Keys: dq:{bench-ceiling-<pid>}:z, deleted before and after.  Pipelining:
 * https://redis.io/docs/manual/pipelining/
 */
#ifndef DQ_CEILING_H
#define DQ_CEILING_H

#include <stdint.h>
#include <stddef.h>

#include "redis_url.h"

typedef struct dq_ceiling {
    int64_t members;       /* ZADD'ed, then ZPOPMIN'ed: this many each */
    int pipeline;          /* commands per pipeline */
    double zadd_s;         /* wall time of the ZADD phase, s */
    double zadd_per_s;     /* members added per second */
    double zpopmin_s;      /* wall time of the ZPOPMIN phase, s */
    double zpopmin_per_s;  /* members popped per second (ZPOPMIN count 1) */
} dq_ceiling;

/* Measures the pipelined ZADD and ZPOPMIN rates on the server of t:
 * members ZADDs (score i, member "m<i>") then members ZPOPMINs, each in
 * pipelines of `pipeline` commands (members >= 1, 1 <= pipeline <=
 * 100000).  Returns 0 with *out filled, or -1 with a one-line message in
 * err (connection, AUTH, an error reply, a ZPOPMIN that found the set
 * empty). */
int dq_ceiling_measure(const dq_redis_target *t, int64_t members,
                       int pipeline, dq_ceiling *out, char *err,
                       size_t errlen);

/* Runs `redis-benchmark -h HOST -p PORT -n requests -P pipeline -r 100000
 * -t zadd,zpopmin --csv -q` and parses its requests-per-second figures.
 * Meant for a private server only: it writes the key "myzset" (deleted by
 * the caller) and is never given a password.  Returns 0 with *zadd_rps and
 * *zpopmin_rps set, 1 when redis-benchmark is not installed (both set to
 * -1), or -1 with a message in err when it ran and failed. */
int dq_ceiling_redis_benchmark(const char *host, int port, int64_t requests,
                               int pipeline, double *zadd_rps,
                               double *zpopmin_rps, char *err,
                               size_t errlen);

#endif
