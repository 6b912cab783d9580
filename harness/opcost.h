/* opcost.h -- cost per operation of an in-process strategy against the
 * number of pending tasks (the heap's O(log n) against the wheel's O(1)).
 *
 *   dqlab opcost [--strategies heap,wheel] [--n 1000,10000,...] [--ops K]
 *                [--repeats R] [--out DIR]
 *
 * What one measurement is: one handle on a fresh queue (its own dq_local),
 * filled with n tasks due far ahead (uniformly 1 h to 25 h from now, a
 * fixed pseudo-random sequence, through dq_enqueue_many in chunks of
 * 1024), then an untimed warm-up of min(K, 10000) operations, then R
 * timed repeats of K operations each.  One *operation* is a pair: one
 * dq_enqueue of a task due now (due_ms read at the start of the repeat, so
 * it is due when claimed) and one dq_claim(timeout 0) that must return a
 * task, and its dq_task_clear; the backlog stays at n throughout.  The
 * clock is read once per repeat around all K pairs (CLOCK_MONOTONIC):
 * one pair costs tens to hundreds of ns, below what timing one call could
 * resolve.  ns_per_op = repeat time / K; the CSV gives the median, min and
 * max over the R repeats.  The far-ahead tasks never come due during a
 * run, so the figure is the cost of a due-now task passing through a
 * structure holding n others: for the heap a sift to the root and back
 * (O(log n), with cache misses growing with n); for the wheel the ready
 * path (the task's tick is already current) plus the clock check of each
 * claim, whatever n is.
 *
 * Files, under DIR/<YYYYmmdd-HHMMSS[-N]>/ (never an existing run; DIR
 * defaults to results/opcost; DIR/latest points at the newest complete
 * run, runmeta.h):
 *   opcost.csv   strategy,n,ops,ns_per_op_median,ns_per_op_min,ns_per_op_max
 *                one row per strategy and n, written as soon as measured;
 *                ops is K
 *   meta.txt     command, the parameters, date, complete, and the
 *                environment of runmeta.h (dqlab_commit, host, cpu, cores)
 *
 * Exit codes: 0 done, 2 bad input or a failed measurement (one line on
 * stderr), 130 interrupted (the run directory is kept, latest not moved).
 * Memory: about 100 bytes per pending task for either strategy; n = 10^7
 * needs about 1 GB.
 */
#ifndef DQ_OPCOST_H
#define DQ_OPCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../strategies/dq.h"

/* One measurement (see above). */
typedef struct dq_opcost_params {
    const dq_strategy *strategy; /* in-process: no DQ_G_NEEDS_REDIS */
    const dq_opt *opts;          /* strategy options; NULL when nopts 0 */
    size_t nopts;
    int64_t n;                   /* pending tasks due far ahead, >= 0 */
    int64_t ops;                 /* K: enqueue+claim pairs per repeat, >= 1 */
    int repeats;                 /* R, >= 1 */
    unsigned seed;               /* of the far-ahead due times */
} dq_opcost_params;

typedef struct dq_opcost_result {
    double ns_median, ns_min, ns_max; /* ns per pair, over the repeats */
    double fill_s;                    /* time to enqueue the n tasks */
} dq_opcost_result;

/* Runs one measurement.  stop (may be NULL) is polled between fill chunks
 * and repeats.  Returns 0 with *r filled, 1 when stop() said so (nothing
 * in *r), or -1 with a one-line message in err (errlen bytes): a strategy
 * needing Redis, bad parameters, or a strategy error (a claim that found
 * nothing, out of memory).  The queue is purged and closed on every path. */
int dq_opcost_measure(const dq_opcost_params *p, dq_opcost_result *r,
                      bool (*stop)(void), char *err, size_t errlen);

/* The CSV header line (with its newline), and one row for p and r. */
extern const char dq_opcost_csv_header[];
void dq_opcost_csv_row(FILE *f, const dq_opcost_params *p,
                       const dq_opcost_result *r);

#define DQ_OPCOST_MAX_STRATEGIES 16
#define DQ_OPCOST_MAX_N 32

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
} dq_opcost_opts;

/* Parses the arguments after "opcost" (argv[0] is "opcost").  Returns 0,
 * 1 when --help was asked (usage printed on stdout), or -1 with a one-line
 * message in err naming the option and the bad value, e.g.
 * "--strategies: 'lua' needs Redis; opcost measures in-process strategies
 * (heap, wheel)" or "--n: '0' ...". */
int dq_opcost_parse_args(int argc, char **argv, dq_opcost_opts *o,
                         char *err, size_t errlen);

/* `dqlab opcost`: parses, measures every strategy at every n, writes the
 * run directory.  Returns the exit code (see above). */
int dq_opcost_cmd(int argc, char **argv);

#endif
