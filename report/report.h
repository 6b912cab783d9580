/* report.h -- results loaded by `dqlab report` (report.c), shared with the
 * claim rules (claims.c).
 *
 * One dq_rexp per results/<name>/latest run: the rows of its trials.csv,
 * its meta.txt as key/value pairs, and the rows grouped by matrix cell
 * (strategy, options, producers, consumers, work_us) with the medians over
 * the repeats.  Everything is owned by the dq_results and freed with
 * dq_results_free().
 */
#ifndef DQ_REPORT_H
#define DQ_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One row of trials.csv (see experiment.c for the columns). */
typedef struct dq_rtrial {
    char strategy[32];
    char options[256];
    int producers, consumers, repeat;
    int64_t tasks, delay_min_ms, delay_max_ms, work_us;
    uint64_t seed;
    uint64_t enqueued, delivered, deliveries, duplicates, lost, early;
    double lat_p50_ms, lat_p90_ms, lat_p99_ms, lat_p999_ms, lat_max_ms;
    double tasks_per_s, elapsed_s;
    int64_t redis_commands;   /* -1: not measured */
    uint64_t round_trips, empty_polls, lost_races, wakeups;
    /* Columns added later; 0 (or -1 where said) when the CSV predates
     * them. */
    int trial;                /* 1-based index: logs/trial-NNN.log; 0 n/a */
    uint64_t putbacks;
    int64_t backlog, idle_ms, claim_timeout_ms;
    double measured_s;        /* server measured over this, s */
    double redis_cpu_ms;      /* server CPU over measured_s; -1 n/a */
    double backlog_s;         /* backlog enqueue time, s */
} dq_rtrial;

/* One matrix cell: the trials of one strategy/options/producers/consumers/
 * work_us/backlog, over the repeats. */
typedef struct dq_rgroup {
    char strategy[32];
    char options[256];
    int producers, consumers;
    int64_t work_us;
    size_t n;                   /* trials (repeats) */
    double tps_median;          /* tasks/s */
    double dup_median;
    uint64_t dup_max, dup_sum;
    size_t dup_trials;          /* trials with duplicates > 0 */
    uint64_t lost_max, lost_sum, early_max, early_sum;
    double p50_median, p99_median; /* lateness, ms */
    uint64_t wakeups_sum, deliveries_sum;
    double cmds_per_task_median;   /* redis_commands / delivered; -1 n/a */
    double rt_per_task_median;     /* client round_trips / delivered;
                                      -1 n/a (no Redis measured) */
    int64_t backlog;               /* part of the cell */
    double cmds_per_s_median;      /* redis_commands / measured_s; -1 n/a */
    double cpu_ms_per_s_median;    /* redis_cpu_ms / measured_s; -1 n/a */
    double rt_per_s_median;        /* client round trips / measured_s */
    uint64_t lost_races_sum, enqueued_sum, delivered_sum;
    double lat_max_max;            /* largest lateness max over repeats */
} dq_rgroup;

typedef struct dq_rkv {
    char *key, *val;
} dq_rkv;

typedef struct dq_rexp {
    char name[64];
    char dir[4096];             /* the run directory latest points to */
    dq_rkv *meta;
    size_t nmeta;
    dq_rtrial *trials;
    size_t ntrials;
    dq_rgroup *groups;
    size_t ngroups;
    char figures[8][64];        /* figure names made ("concurrency-duplicates") */
    size_t nfigures;
} dq_rexp;

typedef struct dq_results {
    char root[4096];            /* the results directory */
    dq_rexp *exps;
    size_t nexps;
} dq_results;

/* Value of meta.txt key in e, or "" when absent (never NULL). */
const char *dq_rexp_meta(const dq_rexp *e, const char *key);

/* The experiment called name, or NULL. */
const dq_rexp *dq_results_find(const dq_results *r, const char *name);

/* True when meta.txt's plots of e include kind ("idle-cost", ...). */
bool dq_rexp_has_plot(const dq_rexp *e, const char *kind);

/* Value of option key in a trials.csv options string "k=v;k2=v2" into
 * buf (len bytes); false when absent. */
bool dq_options_get(const char *options, const char *key, char *buf,
                    size_t len);

/* Loads every <root>/<name>/latest run (sorted by name) into *r: reads
 * trials.csv and meta.txt and groups the trials.  Returns the number of
 * experiments loaded (0 when none), or -1 with a one-line message in err
 * (errlen bytes) naming the file and line when a file is malformed. */
int dq_results_load(const char *root, dq_results *r, char *err,
                    size_t errlen);
void dq_results_free(dq_results *r);

#endif
