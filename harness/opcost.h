/* opcost.h -- cost per operation of an in-process strategy against the
 * number of pending tasks (the heap's O(log n) against the wheel's O(1)).
 *
 *   dqlab opcost [--strategies heap,wheel] [--n 1000,10000,...] [--ops K]
 *                [--repeats R] [--mix now|steady|now,steady]
 *                [--horizon-ms H] [--out DIR]
 *
 * What one measurement is: one handle on a fresh queue (its own dq_local)
 * filled with n tasks (a fixed pseudo-random sequence, through
 * dq_enqueue_many in chunks of 1024), then an untimed warm-up of
 * min(K, 10000) operations, then R timed repeats of K operations each; the
 * backlog is n before every operation and after it.  The thread's CPU
 * time (CLOCK_THREAD_CPUTIME_ID: time spent waiting for a CPU on a shared
 * machine is not counted, caches shared with other work still are) is read
 * around all K operations of a repeat (the steady mix: around each block
 * of at most 2^20): one operation costs tens to hundreds of ns, below what
 * timing one call could resolve.  ns_per_op = repeat time / K; the CSV
 * gives the median, min and max over the R repeats and the mean over all
 * R * K operations.  What an operation is depends on the mix:
 *
 * Mix "now" (the default): the n tasks are due far ahead (uniformly 1 h to
 * 25 h from now) and never come due during the run.  One operation is one
 * dq_enqueue of a task due now (due_ms read at the start of the repeat, so
 * it is due when claimed) and one dq_claim(timeout 0) that must return it,
 * and its dq_task_clear.  This is the heap's best case: the due-now task
 * sifts to the root and is popped from there, the same cached path every
 * time; the wheel's task is ready at once, its slots and cascades never
 * run.
 *
 * Mix "steady": a queue in steady state.  Every task enqueued is due after
 * a delay drawn uniformly from 1..H ms (H = --horizon-ms, default 1 h), and
 * the backlog holds n tasks spread over the horizon as such a queue holds
 * them once it has run for a while: the time left until a pending task is
 * due has the triangular density 2 (1 - x/H) / H on (0, H] (a task x ahead
 * is one whose delay was at least x), so the fill draws x = H (1 - sqrt(u)).
 * One operation, under a virtual clock:
 *   1. dq_enqueue of a task due V + d (V the virtual clock, d uniform in
 *      1..H ms): the heap sifts it into n tasks, the wheel puts it in the
 *      slot of its level;
 *   2. the virtual clock moves to the due time of the earliest pending task
 *      (forward or not at all: never back), so that exactly that task has
 *      just fallen due;
 *   3. one dq_claim(timeout 0), which must return a task due at exactly
 *      that time (the earliest; among equal due times any), and its
 *      dq_task_clear: the heap removes its minimum of n (sift-down through
 *      log n levels, with cache misses at large n), the wheel advances its
 *      tick and cascades whatever slots the clock passed.
 * So one task falls due per operation, and the clock advances (H + 1) / 2n
 * ms per operation on average (Little's law: n tasks pending for a mean
 * delay of (H + 1) / 2 ms); the CSV gives the measured advance
 * (virtual_ms_per_op).  The harness knows when the earliest task is due
 * because it keeps its own count of pending tasks per due millisecond over
 * the horizon (a ring of H + 1 counters and a bitmap of the non-empty
 * ones: 4.1 bytes per ms of horizon, 15 MB at 1 h), and computes each
 * block's due times and claim times before timing it; so the timed loop
 * reads two arrays in sequence and no shared structure of its own.
 * Virtual clock: the strategies read "now" only through dq_now_*() (dq.h),
 * which add q->cfg.clock_offset_us; before each claim the harness sets
 * that offset to (claim time - realtime read at most 64 operations
 * before), never lowering it, so the handle reads the claim time plus at
 * most the real time of 64 operations, and every reading is later than
 * the one before.  The virtual timeline starts 1 h after the fill began
 * (the fill's due times are that start plus x): the fill reads the real
 * clock, which must stay below that start (checked; 10^7 tasks fill in
 * about a second), so the clock moves forward only from the strategy's
 * first reading to its last.  Nothing waits in real time.  A claim that
 * finds nothing, or returns a task due at another time than the earliest,
 * fails the measurement: neither happens to a strategy that keeps its
 * contract (dq.h), so the CSV has no count of empty claims.
 * Choose K so that one repeat spans at least the horizon in virtual time
 * (K >= 2n): then every task enqueued in a repeat comes due in it, and
 * work a structure does in bulk now and then (a wheel cascading a wide
 * slot) falls into every repeat rather than into one.
 *
 * Files, under DIR/<YYYYmmdd-HHMMSS[-N]>/ (never an existing run; DIR
 * defaults to results/opcost; DIR/latest points at the newest complete
 * run, runmeta.h):
 *   opcost.csv   strategy,mix,n,ops,ns_per_op_median,ns_per_op_min,
 *                ns_per_op_max,ns_per_op_mean,virtual_ms_per_op
 *                one row per mix, n and strategy, written as soon as
 *                measured; ops is K; virtual_ms_per_op is empty for the
 *                now mix (its clock is the real one)
 *   opcost_slopes.csv
 *                strategy,mix,points,n_min,n_max,ns_per_log2n,intercept_ns,
 *                r2
 *                per strategy and mix, the least-squares line ns_per_op_
 *                median = intercept_ns + ns_per_log2n * log2(n) over its
 *                rows with n >= 1 (points of them; r2 the coefficient of
 *                determination): O(log n) shows as a positive slope, O(1)
 *                as about 0.  Written when every measurement is done; a
 *                strategy and mix with fewer than two distinct n >= 1 has
 *                no row.
 *   meta.txt     command, the parameters, date, complete, and the
 *                environment of runmeta.h (dqlab_commit, host, cpu, cores)
 *
 * Exit codes: 0 done, 2 bad input or a failed measurement (one line on
 * stderr), 130 interrupted (the run directory is kept, latest not moved).
 * Memory: about 100 bytes per pending task for either strategy; n = 10^7
 * needs about 1 GB; the steady mix adds its count (above) and 16 bytes per
 * operation of a block (16 MB).
 */
#ifndef DQ_OPCOST_H
#define DQ_OPCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../strategies/dq.h"

/* The two mixes of operations (see above). */
typedef enum dq_opcost_mix {
    DQ_OPCOST_MIX_NOW = 0,     /* enqueue due now + claim it, n far ahead */
    DQ_OPCOST_MIX_STEADY = 1,  /* steady state over a horizon */
} dq_opcost_mix;

/* "now" or "steady". */
const char *dq_opcost_mix_name(dq_opcost_mix m);

#define DQ_OPCOST_HORIZON_MS_DEFAULT INT64_C(3600000) /* 1 h */
#define DQ_OPCOST_HORIZON_MS_MAX INT64_C(86400000)    /* 24 h: 355 MB */

/* One measurement (see above). */
typedef struct dq_opcost_params {
    const dq_strategy *strategy; /* in-process: no DQ_G_NEEDS_REDIS */
    const dq_opt *opts;          /* strategy options; NULL when nopts 0 */
    size_t nopts;
    int64_t n;                   /* pending tasks, >= 0 */
    int64_t ops;                 /* K: operations per repeat, >= 1 */
    int repeats;                 /* R, >= 1 */
    unsigned seed;               /* of the due times */
    /* Added last: mix 0 is now. */
    dq_opcost_mix mix;
    int64_t horizon_ms;          /* steady: H, 1..DQ_OPCOST_HORIZON_MS_MAX;
                                    not used by the now mix */
} dq_opcost_params;

typedef struct dq_opcost_result {
    double ns_median, ns_min, ns_max; /* ns per operation, over the repeats */
    double fill_s;                    /* time to enqueue the n tasks */
    double ns_mean;                   /* over all R * K operations */
    double virtual_ms_per_op;         /* steady: mean clock advance per
                                         timed operation; now: 0 */
} dq_opcost_result;

/* Runs one measurement.  stop (may be NULL) is polled between fill chunks,
 * blocks and repeats.  Returns 0 with *r filled, 1 when stop() said so
 * (nothing in *r), or -1 with a one-line message in err (errlen bytes): a
 * strategy needing Redis, bad parameters, or a strategy error (a claim
 * that found nothing or a task due at another time than the earliest,
 * out of memory).  The queue is purged and closed on every path. */
int dq_opcost_measure(const dq_opcost_params *p, dq_opcost_result *r,
                      bool (*stop)(void), char *err, size_t errlen);

/* The CSV header line (with its newline), and one row for p and r. */
extern const char dq_opcost_csv_header[];
void dq_opcost_csv_row(FILE *f, const dq_opcost_params *p,
                       const dq_opcost_result *r);

/* The least-squares line y = intercept + slope * log2(n) through the k
 * points (n[i], y[i]) with n[i] >= 1 (others are skipped): *slope in y
 * units per doubling of n, *r2 the coefficient of determination (1 when
 * every y is equal).  Returns the number of points used, or -1 (nothing
 * written) when fewer than two distinct n remain. */
int dq_opcost_fit_log2(const int64_t *n, const double *y, size_t k,
                       double *slope, double *intercept, double *r2);

/* The header line of opcost_slopes.csv, with its newline. */
extern const char dq_opcost_slopes_header[];

#define DQ_OPCOST_MAX_STRATEGIES 16
#define DQ_OPCOST_MAX_N 32
/* The range of --n.  The slopes are fitted against log2(n), and the
 * report compares the growth of the ns per operation with that of log n
 * from the smallest n, a ratio of logarithms that needs log n > 0: n >= 2.
 * A slope, and the report's figure, need at least
 * DQ_OPCOST_DISTINCT_N_MIN distinct n. */
#define DQ_OPCOST_N_MIN INT64_C(2)
#define DQ_OPCOST_N_MAX INT64_C(100000000)
#define DQ_OPCOST_DISTINCT_N_MIN 2

/* The command line, parsed. */
typedef struct dq_opcost_opts {
    const dq_strategy *strategies[DQ_OPCOST_MAX_STRATEGIES];
    size_t nstrategies;          /* default: heap, wheel */
    int64_t n[DQ_OPCOST_MAX_N];  /* default: 10^3, 10^4, 10^5, 10^6 */
    size_t nn;
    int64_t ops;                 /* default 200000 */
    int repeats;                 /* default 5 */
    char out[1024];              /* default results/opcost */
    char command[1024];          /* the command line, for meta.txt */
    dq_opcost_mix mixes[2];      /* default: now */
    size_t nmixes;
    int64_t horizon_ms;          /* default DQ_OPCOST_HORIZON_MS_DEFAULT */
} dq_opcost_opts;

/* Parses the arguments after "opcost" (argv[0] is "opcost").  Returns 0,
 * 1 when --help was asked (usage printed on stdout), or -1 with a one-line
 * message in err naming the option and the bad value, e.g.
 * "--strategies: 'lua' needs Redis; opcost measures in-process strategies
 * (heap, wheel)", "--n: '0' is out of range 2..100000000" or "--mix:
 * 'later': expected now or steady". */
int dq_opcost_parse_args(int argc, char **argv, dq_opcost_opts *o,
                         char *err, size_t errlen);

/* `dqlab opcost`: parses, measures every strategy at every n, writes the
 * run directory.  Returns the exit code (see above). */
int dq_opcost_cmd(int argc, char **argv);

#endif
