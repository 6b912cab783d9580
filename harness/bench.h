/* bench.h -- `dqlab bench`: performance and scale of every strategy, as
 * shares of references measured in the same run, and the targets table.
 *
 *   dqlab bench [--smoke|--quick|--full] [--results DIR] [--redis URL]
 *               [--only PARTS] [--strategies LIST] [--keep-logs]
 *
 * Runs four parts against one Redis server (a private one unless --redis
 * is given) and stores them under DIR/bench/<YYYYmmdd-HHMMSS[-N]>/ (never
 * overwriting a run; DIR/bench/latest points at the newest complete one).
 * `dqlab report` reads that directory into its Performance section.
 *
 * Files.  CSV with a header row (the DQ_BENCH_*_HEADER strings below, the
 * one definition of each), one row per line, fields as RFC 4180: a field
 * holding a comma or a double quote is quoted, '"' doubled (only text
 * fields ever are: options, commands, details).  Numbers are plain
 * decimals; -1 means "not measured / not applicable" in every numeric
 * column that cannot be negative.  Columns are only ever added at the
 * end of a header, so a reader that looks columns up by name keeps
 * working.  Medians, never means, wherever repeats are summarised.
 *
 *   meta.txt        key = value: level, command, Redis version, date,
 *                   complete, unit_errors, first_error, skipped (every
 *                   strategy a part did not run, and why: "backlog expiry
 *                   (no ZSet layout: DQ_G_ZSET_LAYOUT)"), part_seconds,
 *                   loadavg_start and loadavg_end (/proc/loadavg: how
 *                   busy a shared machine was),
 *                   the plan (consumers, tasks, repeats, target_consumers,
 *                   target_repeats, one_rtt_tasks, batched_tasks,
 *                   inproc_tasks, harness_tasks, variants, backlog,
 *                   backlog_claims, backlog_rounds, lateness_rates,
 *                   lateness_low_ms, lateness_ms, ...) and the environment
 *                   of runmeta.h (dqlab_commit, hostname, cpu_model, cores)
 *
 *   ceiling.csv     the bare commands' ceiling
 *     measure       zadd | zpopmin
 *     source        dqlab (hiredis pipelining, ceiling.h) | redis-benchmark
 *                   (-c 1 -P 100 -r 100000 -t zadd,zpopmin, the run of
 *                   references.csv whose `when` is start; seconds 0)
 *     ops,pipeline,seconds,ops_per_s
 *
 *   references.csv  every redis-benchmark run (private server only)
 *     reference     zadd-c4 (redis-benchmark -t zadd -c 4 -P 1: one
 *                   round trip per command, the reference of target
 *                   one_rtt_claim) | zadd-c1-p100 (-t zadd -c 1 -P 100:
 *                   pipelined, the reference of batched_claim)
 *     when          start | round <k>: run again right before round k of
 *                   the target trials, so that the reference and the
 *                   strategies meet the same machine state
 *     command       the command line, host and port left out
 *     clients,pipeline,requests,ops_per_s
 *     redis_cpu_us_per_op  the server's CPU time (INFO cpu, sys + user)
 *                   over the run divided by requests
 *
 *   throughput.csv  one row per trial
 *     kind          e2e (dq_trial_run, tasks all due now, first enqueue to
 *                   last delivery, every event logged and checked) |
 *                   enqueue (one producer handle calling dq_enqueue /
 *                   dq_enqueue_many in a loop; consumers 0; the check
 *                   columns 0, redis_* -1)
 *     strategy,options  options: "" for the defaults, else "k=v;k=v":
 *                   strategy options, then the trial's enqueue_batch
 *     producers,consumers,repeat,tasks,seconds,tasks_per_s,delivered,
 *     duplicates,lost,early,redis_commands,redis_cpu_ms,lateness_p99_ms
 *     block         curve (every strategy with its defaults at every
 *                   consumer count of the plan; in-process strategies run
 *                   inproc_tasks) | one_rtt (every Redis strategy with
 *                   its defaults, one claim round trip per task, and
 *                   enqueue_batch=64, at target_consumers, one_rtt_tasks)
 *                   | batched (the variants a strategy names in its
 *                   dq_strategy.bench_variants, dq.h, at every consumer
 *                   count, batched_tasks)
 *
 *   harness.csv     what the harness itself does (dq_trial_run, tasks due
 *                   now, target_consumers, harness_tasks)
 *     kind          ceiling (the no-op queue, ceiling.h: the harness's
 *                   own ceiling) | in-process (a strategy without Redis)
 *     strategy,producers,consumers,repeat,tasks,seconds,tasks_per_s
 *     events,events_per_s  records written per second: E, D and A, so
 *                   3 per task
 *     delivered,duplicates,lost,early
 *
 *   backlog.csv     per strategy and backlog N
 *     strategy,options,backlog,preload_s,memory_bytes,bytes_per_task,
 *     enqueue_us_mean,enqueue_us_p50,enqueue_us_p99,claims,claim_us_p50,
 *     claim_us_p90,claim_us_p99,claim_us_max,empty_claims
 *     preload       copy | pipeline | enqueue: how the N tasks due an hour
 *                   ahead got there.  Redis strategies with the ZSet
 *                   layout (DQ_G_ZSET_LAYOUT): ZADD z due id + HSET p id
 *                   payload, pipelined into a template queue once per N,
 *                   then COPY (Redis 6.2) into the unit's keys (pipeline:
 *                   no COPY); in-process strategies: dq_enqueue.
 *                   memory_bytes: INFO memory used_memory after the
 *                   preload minus before (-1 for in-process ones).
 *                   Then backlog_rounds rounds; in each, every backlog of
 *                   the strategy gets backlog_claims tasks due now,
 *                   enqueued one by one (timed: enqueue_us) and claimed
 *                   one by one (timed: claim_us; the ack is not), one
 *                   operation per backlog in turn, so that a busy moment
 *                   of a shared machine hits every backlog alike.  The
 *                   percentiles are medians over the rounds of each
 *                   round's percentile; claim_us_max is the largest of
 *                   all.
 *
 *   lateness.csv    per strategy and offered rate
 *     strategy,options,producers,consumers,offered_per_s,seconds,enqueued,
 *     sent_per_s,delivered,delivered_per_s,lost,duplicates,
 *     lateness_p50_ms,lateness_p99_ms,lateness_max_ms,saturated
 *     enqueue_lag_p99_ms  p99 over tasks of how long after its scheduled
 *                   millisecond its enqueue was called (the producers kept
 *                   their schedule when it is well below 100 ms)
 *     why           what made the rate saturated: sent, delivered, p99,
 *                   lost, joined with '+'; "" when it is not
 *     run           1, 2, ...: a rate is run once, and once more when
 *                   that run was saturated; the lowest rate of a blocking
 *                   strategy (DQ_G_BLOCKS) lateness_low_runs times (and
 *                   once more when exactly one of them was saturated).
 *                   A rate is where the curve stops only when two of its
 *                   runs saturate it, and the lowest rate's p99 is the
 *                   median of its runs: one busy moment of a shared
 *                   machine can push one run's p99 past 10 ms
 *     Tasks fall due at the offered rate: producers are paced on whole
 *     milliseconds (open loop); at each millisecond boundary a producer
 *     sends, in one dq_enqueue_many, the tasks its share of offered_per_s
 *     has come to by then, each due 100 ms after that millisecond, for
 *     lateness_low_ms at the lowest rate and lateness_ms at the others.
 *     So the lateness is the strategy's own way of waiting for a due time
 *     (a timed wait, a mover, a TTL, a poll), not a shortcut for tasks
 *     already due, and the producer's timing does not count.  Consumers
 *     claim (timeout 50 ms) and ack; every event is logged and checked
 *     (checker.h).
 *     sent_per_s: tasks enqueued from the first scheduled time to the last
 *     enqueue's acknowledgement; delivered_per_s: deliveries from the
 *     first to the last (a strategy's steady lateness does not lower it);
 *     both count n tasks over n periods of 1 / offered_per_s.
 *     Saturation: a rate is saturated when the producers sent less than
 *     95 % of it (sent), when fewer than 95 % of it were delivered per
 *     second (delivered), when lateness p99 exceeded 10 times the
 *     strategy's p99 at the lowest rate and 10 ms (p99), or when a task
 *     was not delivered by the end (lost).  After the first rate that two
 *     runs saturate the higher ones are not run for that strategy.
 *
 *   targets.csv     the targets table: one row per target and strategy
 *     target        one_rtt_claim: median e2e tasks/s of block one_rtt as
 *                     a share of the median zadd-c4 ops/s (every Redis
 *                     strategy; bound: >= the strategy's own
 *                     bench_one_rtt_share, dq.h, none when 0)
 *                   batched_claim: median e2e tasks/s of block batched at
 *                     target_consumers as a share of the median
 *                     zadd-c1-p100 ops/s (every variant; bound: >= the
 *                     strategy's bench_batched_share, none when 0),
 *                     Redis CPU per task beside it
 *                   harness_in_process: median tasks/s of each in-process
 *                     strategy through the harness (harness.csv), figure
 *                     >= 1,500,000, share of the harness ceiling beside it
 *                   harness_ceiling: the no-op queue's median events/s
 *                     and tasks/s (no bound: the figure is the statement)
 *                   lateness_p99_200: lateness p99 at the lowest offered
 *                     rate (200 tasks/s; the median of its runs); bound
 *                     <= 1 ms for every blocking strategy (DQ_G_BLOCKS),
 *                     none for others
 *                   saturation: the lowest offered rate that two runs
 *                     saturated (figure; -1 when no rate run did), the
 *                     highest rate sustained in the detail; met = yes
 *                     when the curve was measured
 *                   backlog_claim_p99: claim p99 at the largest backlog
 *                     (1,000,000) against the same at 1,000; bound share
 *                     <= 3 for every ZSet strategy (DQ_G_ZSET_LAYOUT),
 *                     none for in-process ones
 *     strategy,options
 *     figure,unit   the measured figure (median), in unit (tasks/s,
 *                   events/s, ms, us, tasks/s offered)
 *     reference,reference_value  what the figure is a share of (text,
 *                   value; "" and -1 when none)
 *     share         figure / reference_value (-1 when no reference)
 *     bound_on,op,bound  share | figure, >= | <=, the bound ("", "", -1:
 *                   no bound for this row)
 *     met           yes | no | none (shown, no bound for this row) | not
 *                   measured (the detail says why)
 *     redis_cpu_us_per_task  median Redis CPU per delivered task (-1 n/a)
 *     samples       trials or rounds behind the median
 *     detail        one line for a reader
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
#include "bench_targets.h"
#include "redis_url.h"

#define DQ_BENCH_CEILING_HEADER                                              \
    "measure,source,ops,pipeline,seconds,ops_per_s\n"
#define DQ_BENCH_REFERENCES_HEADER                                           \
    "reference,when,command,clients,pipeline,requests,ops_per_s,"            \
    "redis_cpu_us_per_op\n"
#define DQ_BENCH_THROUGHPUT_HEADER                                           \
    "kind,strategy,options,producers,consumers,repeat,tasks,seconds,"        \
    "tasks_per_s,delivered,duplicates,lost,early,redis_commands,"            \
    "redis_cpu_ms,lateness_p99_ms,block\n"
#define DQ_BENCH_HARNESS_HEADER                                              \
    "kind,strategy,producers,consumers,repeat,tasks,seconds,tasks_per_s,"    \
    "events,events_per_s,delivered,duplicates,lost,early\n"
#define DQ_BENCH_BACKLOG_HEADER                                              \
    "strategy,options,backlog,preload_s,memory_bytes,bytes_per_task,"        \
    "enqueue_us_mean,enqueue_us_p50,enqueue_us_p99,claims,claim_us_p50,"     \
    "claim_us_p90,claim_us_p99,claim_us_max,empty_claims,preload\n"
#define DQ_BENCH_LATENESS_HEADER                                             \
    "strategy,options,producers,consumers,offered_per_s,seconds,enqueued,"   \
    "sent_per_s,delivered,delivered_per_s,lost,duplicates,lateness_p50_ms,"  \
    "lateness_p99_ms,lateness_max_ms,saturated,enqueue_lag_p99_ms,why,"     \
    "run\n"
typedef enum dq_bench_level {
    DQ_BENCH_SMOKE = 0, /* seconds: for tests, well-formed files only */
    DQ_BENCH_QUICK,     /* the default: within 8 minutes on 2 cores */
    DQ_BENCH_FULL,      /* longer trials, more repeats and rounds */
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
