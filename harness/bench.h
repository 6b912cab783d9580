/* bench.h -- `dqlab bench`: performance and scale of every strategy.
 *
 *   dqlab bench [--smoke|--quick|--full] [--results DIR] [--redis URL]
 *               [--only PARTS] [--strategies LIST] [--keep-logs]
 *
 * Runs four measurements against one Redis server (a private one unless
 * --redis is given) and stores them under DIR/bench/<YYYYmmdd-HHMMSS[-N]>/
 * (never overwriting a run; DIR/bench/latest points at the newest complete
 * one).  `dqlab report` reads that directory into its Performance section
 * (report/section_perf.c).  Files, all CSV with a header row, no quoting
 * (no field holds a comma: options are "k=v;k=v"):
 *
 *   meta.txt        key = value: level, command, Redis version, date,
 *                   complete, unit_errors, first_error, the plan
 *                   (variants: the batched throughput variants), and the
 *                   environment of runmeta.h (dqlab_commit, hostname,
 *                   cpu_model, cores)
 *   ceiling.csv     measure,source,ops,pipeline,seconds,ops_per_s
 *                   measure: zadd | zpopmin; source: dqlab (hiredis
 *                   pipelining, ceiling.h) | redis-benchmark (seconds 0)
 *   throughput.csv  kind,strategy,options,producers,consumers,repeat,tasks,
 *                   seconds,tasks_per_s,delivered,duplicates,lost,early,
 *                   redis_commands,redis_cpu_ms,lateness_p99_ms
 *                   options: "" for the strategy's defaults, else a
 *                   batched variant, e.g. "batch=16;enqueue_batch=64"
 *                   (strategy options, then the trial's enqueue_batch;
 *                   VARIANT_FACTOR (10) times more tasks)
 *                   kind: e2e (dq_trial_run, tasks all due now, first
 *                   enqueue to last delivery, every event logged and
 *                   checked) | enqueue (one producer handle calling
 *                   dq_enqueue in a loop; consumers 0; the check columns 0,
 *                   redis_* -1)
 *   backlog.csv     strategy,options,backlog,preload_s,memory_bytes,
 *                   bytes_per_task,enqueue_us_mean,enqueue_us_p50,
 *                   enqueue_us_p99,claims,claim_us_p50,claim_us_p90,
 *                   claim_us_p99,claim_us_max,empty_claims
 *                   per strategy and backlog N: N tasks due an hour ahead
 *                   are preloaded (Redis strategies: ZADD z + HSET p
 *                   pipelined, the layout every ZSet strategy's enqueue
 *                   writes for a task never claimed; heap: dq_enqueue),
 *                   memory_bytes is INFO memory used_memory after minus
 *                   before (-1 for heap), then, in 3 rounds, backlog_claims
 *                   tasks due now are enqueued one by one with dq_enqueue
 *                   (timed: enqueue_us) and claimed one by one with
 *                   dq_claim (timed: claim_us; the ack is not timed); the
 *                   percentiles are medians of the rounds' percentiles,
 *                   claims the total, claim_us_max the largest of all
 *   lateness.csv    strategy,options,producers,consumers,offered_per_s,
 *                   seconds,enqueued,sent_per_s,delivered,delivered_per_s,
 *                   lost,duplicates,lateness_p50_ms,lateness_p99_ms,
 *                   lateness_max_ms,saturated
 *                   paced producers (open loop: each enqueues at its share
 *                   of offered_per_s, due now) for `seconds`, consumers
 *                   claim and ack, every event logged and checked
 *                   (checker.h).  saturated = 1 when the producers could
 *                   not reach 90% of the offered rate, or p99 lateness
 *                   exceeded 1000 ms, or a task was not delivered; higher
 *                   rates are then skipped for that strategy.
 *
 * Speed is never asserted: the report shows medians of repeats and ratios
 * taken in the same run.  Exit codes: 0 done (units that failed are
 * counted in meta.txt and named on stderr), 2 bad input or environment,
 * 130 interrupted (the run directory is kept, latest not moved).
 */
#ifndef DQ_BENCH_H
#define DQ_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "../strategies/dq.h"
#include "redis_url.h"

typedef enum dq_bench_level {
    DQ_BENCH_SMOKE = 0, /* seconds: for tests, well-formed files only */
    DQ_BENCH_QUICK,     /* the default: <= 5 minutes on 2 cores */
    DQ_BENCH_FULL,      /* backlog up to 1M, more repeats */
} dq_bench_level;

/* The parts, ORed (--only ceiling,throughput,backlog,lateness). */
enum {
    DQ_BENCH_CEILING = 1u << 0,
    DQ_BENCH_THROUGHPUT = 1u << 1,
    DQ_BENCH_BACKLOG = 1u << 2,
    DQ_BENCH_LATENESS = 1u << 3,
    DQ_BENCH_ALL = 0xfu,
};

#define DQ_BENCH_MAX_STRATEGIES 32

typedef struct dq_bench_opts {
    dq_bench_level level;
    unsigned parts;             /* DQ_BENCH_* bits, not 0 */
    char results[1024];         /* results root; runs go to <it>/bench/ */
    bool have_redis;            /* --redis given: use that server */
    dq_redis_target redis;
    const dq_strategy *strategies[DQ_BENCH_MAX_STRATEGIES]; /* --strategies;
                                   nstrategies 0: every registered one */
    size_t nstrategies;
    bool keep_logs;             /* keep the event logs under logs/ */
    char command[1024];         /* the command line, password redacted */
} dq_bench_opts;

/* Parses the arguments after "bench" (argv[0] is "bench") into *o.
 * Returns 0, 1 when --help was asked (usage printed on stdout), or -1 with
 * a one-line message in err naming the option and the bad value
 * ("--only: unknown part 'x' (ceiling, throughput, backlog, lateness)"). */
int dq_bench_parse_args(int argc, char **argv, dq_bench_opts *o, char *err,
                        size_t errlen);

/* `dqlab bench`: parses, runs, prints where the results went.  Returns the
 * exit code (see above). */
int dq_cmd_bench(int argc, char **argv);

#endif
