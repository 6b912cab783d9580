/* results.h -- the results model of `dqlab report`: everything the report
 * reads under RESULTS, loaded once by dq_results_load() and read-only for
 * the sections and claim rules above it.
 *
 *   RESULTS/<name>/latest     trials.csv (harness/trialcols.h), meta.txt,
 *                             and logs/trial-NNN.log when a section needs
 *                             them: each log is read and re-checked once
 *                             (the loss table, the loss timelines and the
 *                             pooled lateness come from that one reading)
 *   RESULTS/bench/latest      `dqlab bench` (harness/bench.h)
 *   RESULTS/probes/latest     `dqlab probes` (harness/probes.h)
 * Trials are grouped by matrix cell with medians over the repeats.  All of
 * it is owned by the dq_results and freed by dq_results_free().  Nothing
 * here writes the report: sections.h and claims.h sit above.
 */
#ifndef DQ_RESULTS_H
#define DQ_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../harness/checker.h"
#include "../harness/trialcols.h"
#include "files.h"

/* ---- Experiments -------------------------------------------------------- */

/* One matrix cell: the trials of one strategy, options, producers,
 * consumers, work_us and backlog, over the repeats. */
typedef struct dq_rgroup {
    char strategy[32];
    char options[256];
    int producers, consumers;
    int64_t work_us, backlog;
    size_t n;                      /* trials (repeats) */
    double tps_median;             /* tasks/s */
    double dup_median;
    uint64_t dup_max, dup_sum;
    size_t dup_trials;             /* trials with duplicates > 0 */
    uint64_t lost_max, lost_sum, early_max, early_sum;
    double p50_median, p99_median; /* lateness, ms */
    uint64_t wakeups_sum, deliveries_sum;
    double cmds_per_task_median;   /* redis_commands / delivered; -1 n/a */
    double rt_per_task_median;     /* round_trips / delivered; -1 n/a */
    double cmds_per_s_median;      /* redis_commands / measured_s; -1 n/a */
    double cpu_ms_per_s_median;    /* redis_cpu_ms / measured_s; -1 n/a */
    double rt_per_s_median;        /* round trips / measured_s; -1 n/a */
    uint64_t lost_races_sum, enqueued_sum, delivered_sum;
    double lat_max_max;            /* largest lateness max over repeats */
} dq_rgroup;

/* The lateness of one group pooled from its trials' event logs. */
typedef struct dq_rpool {
    double *lat;                   /* per delivered task, ms, sorted */
    size_t n;
    uint64_t enqueued, delivered, lost, early, duplicates;
    size_t trials;
} dq_rpool;

/* One trial's event log, as the loss timelines need it (times in us). */
typedef struct dq_tl_task {
    char id[32];
    int64_t due_ms, first_us;      /* first_us: first D, 0 when none */
} dq_tl_task;
typedef struct dq_tl_rec {
    int64_t t_us;
    char id[32];
} dq_tl_rec;
typedef struct dq_tl_win {
    char name[32], id[32];         /* id: the kill's task (id=) or "" */
    int64_t b_us, e_us;            /* an open window ends at end_us */
} dq_tl_win;
typedef struct dq_timeline {
    int64_t t0_us, end_us;         /* first record, end of the trial */
    dq_tl_task *tasks;             /* E records, sorted by id */
    size_t ntasks;
    int64_t *d_us;                 /* every D time, sorted */
    dq_tl_rec *d;                  /* the D records in file order */
    size_t nd;
    dq_tl_win win[64];
    size_t nwin;
} dq_timeline;

/* What re-checking a log concluded: a verdict (the counts in check hold),
 * or none (a log the checker cannot judge, e.g. one without a clean end),
 * which the loss cells count apart (no_verdict_trials). */
typedef enum dq_recheck {
    DQ_RECHECK_VERDICT = 0,
    DQ_RECHECK_NO_VERDICT,
} dq_recheck;

typedef struct dq_rlog {
    bool read;                     /* false: this trial's log was not read */
    dq_recheck outcome;
    dq_check check;
    bool has_timeline;
    dq_timeline tl;
} dq_rlog;

/* The loss table of a loss experiment: rows strategies (with options when
 * they vary), columns the fault specs ("none" for the baseline), each cell
 * the re-checked counts summed over the repeats. */
#define DQ_LOSS_MAX_ROWS 32
#define DQ_LOSS_MAX_FAULTS 16
typedef struct dq_loss_cell {
    char strategy[32];
    unsigned flags;                /* DQ_G_* of the strategy */
    bool known;                    /* the strategy exists in this dqlab */
    size_t trials, violation_trials, no_verdict_trials;
    uint64_t enqueued, lost, lost_claimed, duplicated, dup_nofault;
    uint64_t redelivered;          /* redelivered + redelivered_hidden */
    uint64_t pending_end, early, early_fault, windows;
    int64_t window_us;
    char violation[160];           /* the first violation text, or "" */
    const dq_trialrow *first;      /* its trial with the lowest repeat */
    const dq_rlog *first_log;      /* that trial's log */
} dq_loss_cell;
typedef struct dq_loss_table {
    char rows[DQ_LOSS_MAX_ROWS][64];
    size_t nrows;
    char faults[DQ_LOSS_MAX_FAULTS][64];
    size_t nfaults;
    dq_loss_cell *cells;           /* [row * DQ_LOSS_MAX_FAULTS + col] */
} dq_loss_table;

typedef struct dq_rexp {
    char name[64];
    char dir[4096];                /* the run directory latest points to */
    dq_meta meta;
    dq_csv csv;                    /* trials.csv as loaded */
    const dq_trialrow *trials;     /* csv.rows */
    size_t ntrials;
    dq_rgroup *groups;
    size_t ngroups;
    dq_rlog *logs;                 /* [ntrials], NULL when none was read */
    dq_rpool *pools;               /* [ngroups], NULL unless lateness read */
    dq_loss_table *loss;           /* loss experiments, else NULL */
} dq_rexp;

/* ---- Bench and probes --------------------------------------------------- */

typedef struct dq_perf_tp {        /* one throughput.csv row */
    const char *kind;              /* "e2e" or "enqueue" */
    const char *strategy, *options;
    int producers, consumers, repeat;
    int64_t tasks, redis_commands; /* redis_commands -1: not measured */
    double seconds, tasks_per_s;
    uint64_t delivered, duplicates, lost, early;
    double redis_cpu_ms;           /* -1: not measured */
    double lateness_p99_ms;
} dq_perf_tp;

typedef struct dq_perf_bl {        /* one backlog.csv row */
    const char *strategy, *options;
    int64_t backlog, memory_bytes, claims, empty_claims;
    double preload_s, bytes_per_task;  /* bytes_per_task -1: no Redis */
    double enqueue_us_mean, enqueue_us_p50, enqueue_us_p99;
    double claim_us_p50, claim_us_p90, claim_us_p99, claim_us_max;
} dq_perf_bl;

typedef struct dq_perf_lat {       /* one lateness.csv row */
    const char *strategy, *options;
    int producers, consumers, saturated;
    int64_t offered_per_s;
    double seconds, sent_per_s, delivered_per_s, p50_ms, p99_ms, max_ms;
    uint64_t enqueued, delivered, lost, duplicates;
} dq_perf_lat;

typedef struct dq_perf {
    bool present;                  /* RESULTS/bench/latest exists */
    char dir[4096];                /* the run directory latest points to */
    dq_meta meta;
    double zadd_per_s, zpopmin_per_s;       /* dqlab's ceiling; -1 n/a */
    double rb_zadd_per_s, rb_zpopmin_per_s; /* redis-benchmark; -1 n/a */
    int64_t ceiling_ops;
    int ceiling_pipeline;
    dq_csv csv[3];                 /* throughput, backlog, lateness */
    const dq_perf_tp *tp;
    size_t ntp;
    const dq_perf_bl *bl;
    size_t nbl;
    const dq_perf_lat *lat;
    size_t nlat;
} dq_perf;

typedef struct dq_probe_row {      /* one probes.csv row */
    const char *claim, *probe, *action, *observed;
    const char *input;             /* verdict_input, "k=v;k2=v2" */
} dq_probe_row;
typedef struct dq_probes {
    bool present;                  /* RESULTS/probes/latest/probes.csv */
    char dir[4096];
    char redis_version[32];        /* from its meta.txt, "" if absent */
    dq_csv csv;
    const dq_probe_row *rows;
    size_t n;
} dq_probes;

typedef struct dq_results {
    char root[4096];               /* the results directory */
    dq_rexp *exps;                 /* sorted by name */
    size_t nexps;
    int nincomplete;               /* runs skipped: no latest, complete=no */
    dq_perf bench;
    dq_probes probes;
} dq_results;

/* ---- Loading ------------------------------------------------------------ */

/* What to read from an experiment's event logs (or'ed). */
#define DQ_LOGS_LATENESS 1u        /* dq_rexp.pools */
#define DQ_LOGS_FAULTS 2u          /* dq_rexp.logs with timelines, .loss */
/* Which logs of e the report needs (the section table says). */
typedef unsigned (*dq_logs_fn)(const dq_rexp *e);

/* Loads every root/<name>/latest experiment run (sorted by name), reading
 * the event logs logs(e) asks for, the bench and the probes, and counts
 * the incomplete runs skipped.  Returns the number of experiments (0 when
 * none), or -1 with a one-line "file:line: what" in err (errlen bytes)
 * when a file is malformed; dq_results_free() in every case. */
int dq_results_load(const char *root, dq_logs_fn logs, dq_results *r,
                    char *err, size_t errlen);
void dq_results_free(dq_results *r);

/* results_logs.c: reads e's event logs per need (DQ_LOGS_*); 0 or -1. */
int dq_rexp_read_logs(dq_rexp *e, unsigned need, char *err, size_t errlen);
void dq_rexp_free_logs(dq_rexp *e);
/* results_bench.c: root/bench/latest and root/probes/latest; 0 (present
 * false when absent) or -1 with err. */
int dq_perf_load(const char *root, dq_perf *p, char *err, size_t errlen);
void dq_perf_free(dq_perf *p);
int dq_probes_load(const char *root, dq_probes *p, char *err, size_t errlen);
void dq_probes_free(dq_probes *p);

/* ---- Lookups ------------------------------------------------------------ */

/* Value of meta.txt key of e, or "" (never NULL). */
const char *dq_rexp_meta(const dq_rexp *e, const char *key);
/* The experiment called name, or NULL. */
const dq_rexp *dq_results_find(const dq_results *r, const char *name);
/* True when e's plots list kind.  An experiment without a plots line gets
 * the generic figures "duplicates throughput". */
bool dq_rexp_has_plot(const dq_rexp *e, const char *kind);
/* The first experiment of r whose plots list kind, or NULL. */
const dq_rexp *dq_results_with_plot(const dq_results *r, const char *kind);
/* Copies e's plot list (meta plots or the default) into buf. */
void dq_rexp_plots(const dq_rexp *e, char *buf, size_t len);
/* Value of option key in an options string "k=v;k2=v2" into buf; false
 * when absent. */
bool dq_options_get(const char *options, const char *key, char *buf,
                    size_t len);
/* True when trial t belongs to matrix cell g. */
bool dq_trial_in_group(const dq_trialrow *t, const dq_rgroup *g);
/* The poll interval of g's strategy (DQ_G_POLLS), ms: its poll_ms option,
 * else the strategy's default; -1 for one that does not poll or is
 * unknown to this dqlab. */
long dq_group_poll_ms(const dq_rgroup *g);
/* True when e is a loss experiment (plots has loss, or meta faults). */
bool dq_loss_is(const dq_rexp *e);
/* The first loss experiment of r with its loss table, or NULL. */
const dq_rexp *dq_loss_experiment(const dq_results *r);
/* The cell of row and col, or NULL when no trial ran it. */
const dq_loss_cell *dq_loss_cell_at(const dq_loss_table *lt, size_t row,
                                    size_t col);
/* What fault spec does, from the spec itself ("kill-consumer:during-
 * work:2" -> "consumers killed with SIGKILL during the work (2 kills per
 * trial, each replaced)"); "none" -> "no fault (the baseline)"; an
 * unknown spec quoted as it is. */
void dq_fault_phrase(const char *spec, char *buf, size_t len);
/* The kill points of the kill-consumer specs among faults[0..n-1] ("during
 * the work", "after a claim and before the ack"); "" when none. */
void dq_kill_points(const char faults[][64], size_t n, char *buf,
                    size_t len);

/* Median e2e tasks/s over the repeats of the variant label (a strategy,
 * or "strategy options": dq_perf_tp_label) with that many consumers
 * (consumers 0: the best median over every count, that count in *at when
 * at is not NULL); -1 when not measured. */
double dq_perf_e2e(const dq_perf *p, const char *label, int consumers,
                   int *at);
/* Median enqueue-only tasks/s of label; -1 when not measured. */
double dq_perf_enqueue(const dq_perf *p, const char *label);
/* The variant label of a throughput row: "lua", or the strategy and its
 * options with ';' written as ' ' ("lua batch=16 enqueue_batch=64"). */
void dq_perf_tp_label(const dq_perf_tp *t, char *buf, size_t len);
/* The backlog row of strategy at backlog n, or NULL. */
const dq_perf_bl *dq_perf_backlog(const dq_perf *p, const char *strategy,
                                  int64_t n);
/* The smallest and largest backlog rows of strategy (NULL when none). */
void dq_perf_backlog_range(const dq_perf *p, const char *strategy,
                           const dq_perf_bl **lo, const dq_perf_bl **hi);
/* The probes.csv row of claim and probe, or NULL. */
const dq_probe_row *dq_probes_find(const dq_probes *p, const char *claim,
                                   const char *probe);
/* The integer value of key in row's verdict_input; false when absent or
 * not an integer (row may be NULL). */
bool dq_probe_int(const dq_probe_row *row, const char *key, int64_t *out);

#endif
