/* ceiling.h -- what this machine does for the bare operations a delay queue
 * is built from, measured in the same run as the strategies.
 *
 * The performance report states every strategy's throughput as a share of
 * a reference measured in the same run on the same server, so that a
 * faster or busier machine moves both alike:
 *   - the pipelined ZADD / ZPOPMIN rate through hiredis (dq_ceiling_measure:
 *     dqlab's own loop, paying the client-side cost a strategy pays too);
 *   - redis-benchmark (redis-tools), an outside yardstick that is not ours
 *     (dq_ceiling_redis_benchmark): unpipelined ZADD from 4 clients is the
 *     reference for one round trip per task, pipelined ZADD from one
 *     client (pipeline 100) the reference for batched work;
 *   - the harness's own ceiling (dq_ceiling_noop): a trial through
 *     dq_trial_run with a queue that does nothing but hand tasks over, so
 *     that its tasks/s (and events/s: E, D and A records) is what the
 *     harness itself can do, the bound no strategy can pass.
 *
 * Keys: dq:{bench-ceiling-<pid>}:z, deleted before and after; redis-
 * benchmark writes its own key "myzset" (the caller deletes it) and runs
 * only against a private server.  Pipelining:
 * https://redis.io/docs/manual/pipelining/
 */
#ifndef DQ_CEILING_H
#define DQ_CEILING_H

#include <stdint.h>
#include <stddef.h>

#include "../strategies/dq.h"
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

/* One redis-benchmark run: its arguments, and the requests per second it
 * printed per test (-1: not run or not printed). */
typedef struct dq_rb_run {
    const char *tests;     /* -t: "zadd" or "zadd,zpopmin" */
    int clients;           /* -c, >= 1 */
    int pipeline;          /* -P, >= 1 (1: one command per round trip) */
    int64_t requests;      /* -n, >= 1 */
    int64_t keyspace;      /* -r: members element:0..keyspace-1, random */
    double zadd_rps;       /* out */
    double zpopmin_rps;    /* out */
} dq_rb_run;

/* Runs `redis-benchmark -h HOST -p PORT -c clients -n requests -P
 * pipeline -r keyspace -t tests --csv -q` and parses its requests-per-
 * second figures into run->zadd_rps / zpopmin_rps.  Meant for a private
 * server only: it writes the key "myzset" (deleted by the caller) and is
 * never given a password.  redis-benchmark's ZADD test sends ZADD myzset
 * <random score> element:<random> (with -r), its ZPOPMIN test ZPOPMIN
 * myzset (redis-benchmark.c in the Redis sources).  Returns 0, 1 when
 * redis-benchmark is not installed, or -1 with a message in err when it
 * ran and failed or printed no ZADD figure. */
int dq_ceiling_redis_benchmark(const char *host, int port, dq_rb_run *run,
                               char *err, size_t errlen);

/* The harness's own ceiling: an in-process queue that is a FIFO under one
 * mutex, nothing more (no due-time order, no due check: it is run only
 * with tasks due at once, --delay-ms 0, and the checker still counts any
 * early delivery).  Enqueue copies id and payload into one malloc'd block
 * (the one allocation the dq.h contract needs: the claimer owns the
 * payload), claim takes the oldest or waits on a condition variable until
 * its timeout.  Not in the registry: `dqlab bench` runs it through
 * dq_trial_run (trial.h) beside the in-process strategies, so its tasks/s
 * is what producers, consumers, the event log and the payload checks cost
 * by themselves.  Needs cfg.local (dq.h), as the heap does. */
extern const dq_strategy dq_ceiling_noop;

#endif
