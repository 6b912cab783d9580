/* facts.h -- what the report's first screen says about each strategy,
 * measured: one row per strategy of this run, computed once from the
 * results model (results.h) and quoted by the summary matrix, the
 * decision guide and the scenarios (sec_front.c) and the strategy cards
 * (sec_cards.c), so that they cannot disagree.
 *
 * Every figure keeps its sample (tasks, trials, kills) and the experiment
 * it comes from, and says when no trial of the run measured it.  Which
 * experiment gives what is found by what it holds, not by its name: kill,
 * crash, host and outage sum the re-checked counts of the fault
 * experiments' loss tables (results.h) in the columns whose fault's
 * report_class (harness/faults.h) is a consumer crash, a server (process)
 * crash, a host crash or a consumer outage; dup and cmds come from the
 * experiment with the "duplicates" plot (duplicates over its cells with 2+
 * consumers, commands per task in its cell with the fewest consumers: no
 * lost races); idle from the one with "idle-cost"; lat from the one with
 * "lateness-cdf" (the p99 pooled from the event logs); backlog from the one
 * with "backlog-lateness" (tasks delivered within its window at the
 * largest backlog).  Where a strategy ran in several option sets (naive at
 * poll_ms 10, 100, 1000), idle and lat take the cell run with the
 * strategy's defaults, else the first, and name its options.
 */
#ifndef DQ_FACTS_H
#define DQ_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../strategies/dq.h"
#include "results.h"

/* Repeats a cell needs for its min-max to count as an interval (the
 * claims), and trials a count needs before the front parts stop saying
 * that it varies from run to run. */
#define DQ_MIN_REPEATS 5

/* A count over a sample: n of `of` tasks, in trials trials. */
typedef struct dq_tally {
    bool measured;             /* some trial with a verdict gave it */
    uint64_t n, of;            /* lost (dup: duplicate deliveries) / tasks */
    uint64_t redelivered, duplicated;  /* the same cells' other counts */
    size_t trials;
    uint64_t kills;            /* consumers killed (trials.csv), kill only */
} dq_tally;

/* The AOF modes of the server and host crashes, in this order. */
enum { DQ_AOF_OFF, DQ_AOF_EVERYSEC, DQ_AOF_ALWAYS, DQ_AOF_MODES };
extern const char *const dq_aof_modes[DQ_AOF_MODES];

/* The delivery guarantee the run showed when consumers were killed. */
typedef enum dq_seen {
    DQ_SEEN_NONE,              /* not measured: no consumer killed */
    DQ_SEEN_ALO,               /* nothing lost, killed consumers' tasks
                                  came back: at-least-once */
    DQ_SEEN_AMO,               /* lost the tasks killed consumers held,
                                  no duplicate: at-most-once */
    DQ_SEEN_BROKEN,            /* lost tasks and delivered duplicates */
    DQ_SEEN_NO_LOSS,           /* nothing lost, nothing came back */
} dq_seen;

typedef struct dq_fact {
    const dq_strategy *s;
    dq_seen seen;
    dq_tally kill;                     /* consumer crashes */
    dq_tally crash[DQ_AOF_MODES];      /* server crashes, per AOF mode */
    dq_tally host[DQ_AOF_MODES];       /* host crashes, per AOF mode */
    dq_tally outage;                   /* consumer outages */
    const dq_trialrow *kill_trial;     /* its first trial of the loss
                                          experiment that killed
                                          consumers, NULL: none */
    dq_tally dup;                      /* no fault, 2+ consumers */
    size_t dup_with;                   /* trials with a duplicate */
    int dup_cmin, dup_cmax;            /* their consumer counts */
    bool idle;                         /* measured: */
    double idle_cmds_s, idle_cpu_ms_s; /* median over its repeats */
    int idle_consumers;
    char idle_opts[96];                /* "poll_ms=100", "" */
    bool lat;
    bool lat_censored;                 /* p99 among the undelivered */
    double p99_ms;
    uint64_t lat_tasks;
    size_t lat_trials;
    char lat_opts[96];
    bool cmds;
    double cmds_per_task, rt_per_task; /* -1: no Redis */
    int cmds_consumers;
    bool backlog;                      /* at the largest backlog: */
    int64_t backlog_n;
    uint64_t backlog_delivered, backlog_tasks;
    double backlog_window_s;           /* grace after the last due time */
} dq_fact;

#define DQ_FACTS_MAX 32
typedef struct dq_facts {
    dq_fact f[DQ_FACTS_MAX];           /* registry order, strategies that
                                          ran in some experiment */
    size_t n;
    const dq_rexp *loss, *conc, *idle, *lat, *backlog;  /* NULL: none */
    const dq_rexp *host;               /* the first with a host crash */
    char redis_version[32];            /* of the runs, "" when unknown */
} dq_facts;

/* Whether the losses of fault column spec count against a strategy: not
 * those of a retry test (DQ_FAULT_CLASS_RETRY_TEST, the retry experiments,
 * C26). */
bool dq_facts_counts(const char *spec);
/* Fills f from r (which must outlive it). */
void dq_facts_compute(const dq_results *r, dq_facts *f);
/* The row of strategy name, or NULL when it did not run. */
const dq_fact *dq_facts_find(const dq_facts *f, const char *name);
/* The 95% Wilson interval of n of `of` as two printed percentages (as
 * the claims print theirs: stats.h dq_wilson, dq_fmt_pct). */
void dq_facts_wilson(uint64_t n, uint64_t of, char lo[16], char hi[16]);
/* The sum of a's counts over modes (crash or host): measured when any
 * mode was. */
dq_tally dq_tally_sum(const dq_tally *a, size_t n);

#endif
