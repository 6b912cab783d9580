/* results.h -- the results model of `dqlab report`: everything it reads
 * under RESULTS, loaded once by dq_results_load() and read-only for the
 * sections and claim rules above it (sections.h, claims.h).
 *
 *   RESULTS/<name>/latest   trials.csv (harness/trialcols.h), meta.txt and,
 *                           where a section asks, logs/trial-NNN.log: each
 *                           log read and re-checked once, for the loss
 *                           table, the loss timelines and pooled lateness
 *   RESULTS/bench/latest    `dqlab bench` (harness/bench.h)
 *   RESULTS/probes/latest   `dqlab probes` (harness/probes.h)
 *   RESULTS/opcost/latest   `dqlab opcost` (harness/opcost.h)
 *   RESULTS/witness/latest  `dqlab witness` (harness/witness.h): its
 *                           witness.csv (the cards copy its charts)
 * Every CSV goes through the one reader dq_csv_load (files.c) and every
 * meta.txt through dq_meta_load.  Trials are grouped by matrix cell with
 * medians over the repeats.  All of it is owned by the dq_results.
 */
#ifndef DQ_RESULTS_H
#define DQ_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../harness/checker.h"
#include "../harness/trialcols.h"

/* ---- files.c: the one CSV reader, the one meta.txt reader --------------- */

typedef struct dq_kv {
    char *key, *val;
} dq_kv;
typedef struct dq_meta {       /* "key = value" lines (harness/runmeta.h) */
    dq_kv *kv;
    size_t n;
} dq_meta;
/* Reads path into *m (keys and values trimmed).  0, or -1 with "path:
 * reason" in err (errlen bytes) and nothing to free. */
int dq_meta_load(const char *path, dq_meta *m, char *err, size_t errlen);
/* The value of key, or "" when absent (never NULL). */
const char *dq_meta_get(const dq_meta *m, const char *key);
void dq_meta_free(dq_meta *m);

/* How a CSV column is stored in a row struct (the trialcols.h types). */
typedef enum dq_coltype {
    DQ_COLT_STR, DQ_COLT_INT, DQ_COLT_I64, DQ_COLT_U64, DQ_COLT_SZ,
    DQ_COLT_DBL, DQ_COLT_F1 = DQ_COLT_DBL, DQ_COLT_F3 = DQ_COLT_DBL,
    DQ_COLT_F3NA = DQ_COLT_DBL,
} dq_coltype;
typedef struct dq_colspec {
    const char *name;          /* header name */
    dq_coltype type;           /* STR: const char * into the file text */
    size_t off;                /* offsetof the field in the row struct */
    const char *absent;        /* value when the file lacks the column;
                                  NULL: the column is required */
} dq_colspec;
typedef struct dq_csv {        /* a loaded CSV */
    char *text;                /* the rows' strings point into it */
    void *rows;                /* n row structs */
    size_t n;
} dq_csv;
/* Reads the CSV at path (a header line, then rows; RFC 4180 quoting,
 * quoted line breaks allowed, blank lines skipped) into c, one row struct
 * of rowsize bytes per line with the fields of cols[0..ncols-1] set by
 * header name.  exact: the header must be the cols' names in order.
 * check (or NULL) vets a row: NULL, or what is wrong with it.  Returns 1
 * read (dq_csv_free), 0 when path does not exist (c zeroed), -1 with
 * "path:line: what" in err. */
int dq_csv_load(const char *path, const dq_colspec *cols, size_t ncols,
                size_t rowsize, bool exact,
                const char *(*check)(const void *row), dq_csv *c,
                char *err, size_t errlen);
void dq_csv_free(dq_csv *c);

/* ---- Experiments -------------------------------------------------------- */

/* One matrix cell: the trials of one strategy, options, fault, producers,
 * consumers, work_us and backlog over the repeats.  Rates are medians of
 * per-trial ratios; -1: no trial has one (no Redis, nothing delivered).
 * The duplicate counts leave out redeliveries (an at-least-once strategy
 * delivering again a task nobody acked: trials.csv redelivered), so they
 * mean what the loss table's "duplicated" means. */
struct dq_strategy;
typedef struct dq_rgroup {
    char strategy[32], options[256], fault[64];
    const struct dq_strategy *st;  /* strategy's registry entry, NULL
                                      when unknown (set once, at load) */
    int producers, consumers;
    int64_t work_us, backlog;
    size_t n, dup_trials;          /* trials; trials with duplicates */
    double tps_median, dup_median, p50_median, p99_median; /* lateness ms */
    uint64_t dup_max, dup_sum, lost_max, lost_sum, early_max, early_sum;
    uint64_t wakeups_sum, deliveries_sum, enqueued_sum;
    uint64_t delivered_sum, redelivered_sum;
    double cmds_per_task_median, rt_per_task_median;  /* per delivered */
    double cmds_per_s_median, cpu_ms_per_s_median;    /* per measured_s */
    double rt_per_s_median;
} dq_rgroup;

/* The lateness of one group pooled from its trials' event logs. */
typedef struct dq_rpool {
    double *lat;                   /* per delivered task, ms, sorted */
    size_t n, trials;
    uint64_t enqueued, delivered, lost, early, duplicates;
    size_t no_verdict;             /* trials left out: log incomplete (an
                                      undelivered task may be an unwritten
                                      record); not in trials nor above */
} dq_rpool;

/* A trial's log as the loss timelines need it: times in us. */
typedef struct dq_tl_rec {
    char id[32];
    int64_t t_us;                  /* a task's due time, a delivery's time */
    int64_t first_us;              /* a task's first delivery, 0: none */
    int64_t enq_us;                /* a task's E record (enqueued), 0 for
                                      a delivery */
} dq_tl_rec;
typedef struct dq_tl_win {
    char name[32], id[32];         /* id: the kill's task (id=) or "" */
    int64_t b_us, e_us;            /* an open window ends at end_us */
} dq_tl_win;
typedef struct dq_timeline {
    int64_t t0_us, end_us;         /* first record, end of the trial */
    dq_tl_rec *tasks, *d;          /* E records by id; D in file order */
    int64_t *d_us;                 /* the D times, sorted */
    size_t ntasks, nd, nwin;
    dq_tl_win win[64];
} dq_timeline;

typedef struct dq_rlog {
    bool read;                     /* false: this trial's log not read */
    bool tl_read;                  /* tl read (in the lateness pass) */
    dq_check check;                /* dq_check_no_verdict(&check): a log
                                      without a clean end, counted apart
                                      by the loss cells and pools */
    dq_timeline tl;                /* read for DQ_LOGS_FAULTS */
} dq_rlog;

/* The loss table: rows strategies (with options where they vary),
 * columns fault specs ("none": the baseline), each cell the re-checked
 * counts summed over the repeats of the trials with a verdict (trials);
 * the trials without one are only counted (no_verdict_trials). */
#define DQ_LOSS_MAX_ROWS 32
#define DQ_LOSS_MAX_FAULTS 16
typedef struct dq_loss_cell {
    char strategy[32];
    unsigned flags;                /* DQ_G_* of the strategy */
    size_t trials, violation_trials, no_verdict_trials;
    uint64_t enqueued, lost, lost_claimed, duplicated;
    uint64_t redelivered;          /* redelivered + redelivered_hidden */
    uint64_t pending_end, early, windows;
    uint64_t kills;                /* consumers killed (trials.csv kills) */
    uint64_t lost_retry;           /* lost by a re-add its consumer died
                                      before (checker.h), part of lost */
    int64_t window_us;
    char violation[160];           /* the first violation text, or "" */
    char no_verdict_why[128];      /* "trial N: <why>" of the first trial
                                      with no verdict, or "" */
    const dq_trialrow *first;      /* the trial with the lowest repeat
                                      (with a verdict or not): its
                                      timeline is drawn */
    const dq_rlog *first_log;      /* and its log */
} dq_loss_cell;
typedef struct dq_loss_table {
    char rows[DQ_LOSS_MAX_ROWS][64], faults[DQ_LOSS_MAX_FAULTS][64];
    size_t nrows, nfaults;
    dq_loss_cell cells[DQ_LOSS_MAX_ROWS][DQ_LOSS_MAX_FAULTS];
} dq_loss_table;

typedef struct dq_rexp {
    char name[64], dir[4096];      /* dir: the run latest points to */
    dq_meta meta;
    dq_csv csv;                    /* trials.csv */
    const dq_trialrow *trials;     /* csv.rows */
    size_t ntrials, ngroups;
    dq_rgroup *groups;
    dq_rlog *logs;                 /* [ntrials], NULL when none read */
    dq_rpool *pools;               /* [ngroups], NULL unless lateness */
    dq_loss_table *loss;           /* loss experiments, else NULL */
} dq_rexp;

/* ---- Bench and probes --------------------------------------------------- */

typedef struct dq_perf_tp {        /* a throughput.csv row */
    const char *kind, *strategy, *options;    /* kind "e2e", "enqueue" */
    int producers, consumers, repeat;
    int64_t tasks, redis_commands;            /* -1: not measured */
    double seconds, tasks_per_s, redis_cpu_ms, lateness_p99_ms;
    uint64_t delivered, duplicates, lost, early;
} dq_perf_tp;
typedef struct dq_perf_bl {        /* a backlog.csv row */
    const char *strategy, *options;
    int64_t backlog, memory_bytes, claims, empty_claims;
    double preload_s, bytes_per_task;         /* -1: no Redis */
    double enqueue_us_mean, enqueue_us_p50, enqueue_us_p99;
    double claim_us_p50, claim_us_p90, claim_us_p99, claim_us_max;
} dq_perf_bl;
typedef struct dq_perf_lat {       /* a lateness.csv row */
    const char *strategy, *options;
    int producers, consumers, saturated;
    int64_t offered_per_s;
    int run;                       /* 1, 2, ... (1 in older runs) */
    double seconds, sent_per_s, delivered_per_s, p50_ms, p99_ms, max_ms;
    uint64_t enqueued, delivered, lost, duplicates;
} dq_perf_lat;
typedef struct dq_perf_ref {       /* a references.csv row */
    const char *reference, *when, *command;   /* "zadd-c4", "start" */
    int clients, pipeline;
    int64_t requests;
    double ops_per_s, cpu_us_per_op;          /* -1: not measured */
} dq_perf_ref;
typedef struct dq_perf_harness {   /* a harness.csv row */
    const char *kind, *strategy;   /* kind "ceiling" | "in-process" */
    int consumers, repeat;
    double tasks_per_s, events_per_s;
} dq_perf_harness;
typedef struct dq_perf_target {    /* a targets.csv row, as written */
    const char *target, *strategy, *options, *unit, *reference;
    const char *bound_on, *op, *met, *detail;  /* met: yes | no | none |
                                                  not measured */
    double figure, reference_value, share, bound, cpu_us_per_task;
    int64_t samples;                           /* numbers: -1 n/a */
} dq_perf_target;
typedef struct dq_perf_ceiling {   /* a ceiling.csv row */
    const char *measure, *source;  /* zadd | zpopmin; dqlab | ... */
    int64_t ops;
    int pipeline;
    double ops_per_s;
} dq_perf_ceiling;
/* The files of a bench run, in the order of dq_perf.csv. */
enum { DQ_PERF_TP, DQ_PERF_BL, DQ_PERF_LAT, DQ_PERF_REF, DQ_PERF_HARNESS,
       DQ_PERF_TARGETS, DQ_PERF_CEILING, DQ_PERF_NFILES };
typedef struct dq_perf {
    bool present;                  /* RESULTS/bench/latest exists */
    char dir[4096];
    dq_meta meta;
    double zadd_per_s;             /* dqlab's ZADD ceiling; -1 n/a */
    dq_csv csv[DQ_PERF_NFILES];
    bool has[DQ_PERF_NFILES];      /* the file exists (older runs lack
                                      references, harness and targets) */
    const dq_perf_tp *tp;
    const dq_perf_bl *bl;
    const dq_perf_lat *lat;
    const dq_perf_ref *ref;
    const dq_perf_harness *harness;
    const dq_perf_target *targets;
    const dq_perf_ceiling *ceiling;
    size_t ntp, nbl, nlat, nref, nharness, ntargets, nceiling;
} dq_perf;

typedef struct dq_probe_row {      /* a probes.csv row */
    const char *claim, *probe, *action, *observed;
    const char *input;             /* verdict_input, "k=v;k2=v2" */
} dq_probe_row;
typedef struct dq_probes {
    bool present;                  /* RESULTS/probes/latest/probes.csv */
    char dir[4096], redis_version[32];   /* version "" when unknown */
    dq_csv csv;
    const dq_probe_row *rows;
    size_t n;
} dq_probes;

typedef struct dq_opcost_row {    /* an opcost.csv row (harness/opcost.h) */
    const char *strategy, *mix;    /* mix "now" in files without one */
    int64_t n, ops;
    double ns_median, ns_min, ns_max;  /* ns per operation over repeats */
} dq_opcost_row;
typedef struct dq_opcost {
    bool present;                  /* RESULTS/opcost/latest/opcost.csv */
    char dir[4096];
    dq_meta meta;
    dq_csv csv;
    const dq_opcost_row *rows;
    size_t n;
} dq_opcost;
/* `dqlab witness` (harness/witness.h): RESULTS/witness/latest, its
 * witness.csv rows (witness,strategy,task_id,attempts,quantity,value) and
 * the charts <dir>/<witness>.svg and .png beside it. */
typedef struct dq_witness_row {
    const char *witness;           /* "naive-duplicate", ... */
    const char *strategy, *task_id;
    int64_t attempts;              /* attempts it took to see it */
    const char *quantity;          /* "witnessed", "elapsed_ms", ... */
    int64_t value;                 /* unit: the quantity's suffix */
} dq_witness_row;
typedef struct dq_witnesses {
    bool present;                  /* RESULTS/witness/latest/witness.csv */
    char dir[4096];                /* the run latest points to */
    dq_csv csv;
    const dq_witness_row *rows;
    size_t n;
} dq_witnesses;

typedef struct dq_results {
    char root[4096];               /* the results directory */
    dq_rexp *exps;                 /* sorted by name */
    size_t nexps;
    int nincomplete;               /* runs skipped: no latest, complete=no */
    int nno_trials;                /* latest runs skipped: an experiment.ini
                                      copy but no trials.csv (damaged) */
    char no_trials[4096];          /* the first one, "root/NAME/latest" */
    dq_perf bench;
    dq_probes probes;
    dq_opcost opcost;
    dq_witnesses witness;
} dq_results;

/* ---- Loading ------------------------------------------------------------ */

#define DQ_LOGS_LATENESS 1u        /* read for dq_rexp.pools */
#define DQ_LOGS_FAULTS 2u          /* read for .logs (timelines), .loss */
#define DQ_LOGS_TIMELINE 4u        /* read for .logs (timelines) only */
/* Reads the event logs of e that the report needs into e (the caller's
 * choice: report.c asks dq_rexp_read_logs for the DQ_LOGS_* its sections
 * read), so that this loader never depends on the log reader above it.
 * 0, or -1 with err. */
typedef int (*dq_logs_fn)(dq_rexp *e, char *err, size_t errlen);

/* Loads every root/<name>/latest experiment run (sorted by name) with the
 * event logs logs(e) reads (NULL: none), the bench and the probes, and counts the
 * runs skipped: incomplete ones, and latest runs without trials.csv.
 * Returns the number of experiments, or -1 with a one-line "file:line:
 * what" in err when a file is malformed; dq_results_free() in every
 * case. */
int dq_results_load(const char *root, dq_logs_fn logs, dq_results *r,
                    char *err, size_t errlen);
void dq_results_free(dq_results *r);
/* The parts (results_logs.c, results_bench.c): 0, or -1 with err. */
int dq_rexp_read_logs(dq_rexp *e, unsigned need, char *err, size_t errlen);
int dq_perf_load(const char *root, dq_perf *p, char *err, size_t errlen);
int dq_probes_load(const char *root, dq_probes *p, char *err,
                   size_t errlen);
int dq_opcost_load(const char *root, dq_opcost *p, char *err,
                   size_t errlen);
/* results_witness.c: w zeroed and 0 when there is no witness run. */
int dq_witness_load(const char *root, dq_witnesses *w, char *err,
                    size_t errlen);

/* ---- Lookups ------------------------------------------------------------ */

/* Value of meta.txt key of e, or "". */
const char *dq_rexp_meta(const dq_rexp *e, const char *key);
/* The task of l (its E record) that delivery d delivered, or NULL: a
 * binary search of l's tasks, which the loader sorts by id when it has
 * read the timeline (so only on a timeline of the results model).  The
 * record is l's (a non-const pointer for callers that mark it). */
dq_tl_rec *dq_tl_task(const dq_timeline *l, const dq_tl_rec *d);
/* e's plots list (meta "plots"; without one, the generic figures
 * "duplicates throughput") into buf; whether it lists kind; the first
 * experiment of r that lists kind, or NULL. */
void dq_rexp_plots(const dq_rexp *e, char *buf, size_t len);
bool dq_rexp_has_plot(const dq_rexp *e, const char *kind);
const dq_rexp *dq_results_with_plot(const dq_results *r, const char *kind);
/* Value of option key in "k=v;k2=v2" into buf; false when absent. */
bool dq_options_get(const char *options, const char *key, char *buf,
                    size_t len);
bool dq_trial_in_group(const dq_trialrow *t, const dq_rgroup *g);
/* The poll interval (ms) of g: its poll_ms option, else the strategy's
 * default; -1 for a strategy that does not poll (DQ_G_POLLS) or unknown. */
long dq_group_poll_ms(const dq_rgroup *g);
/* A loss experiment: plots has loss, or meta faults.  The first of r
 * with its loss table, or NULL.  The cell at row, col, or NULL when no
 * trial with a verdict ran it (a cell whose logs are all incomplete is
 * NULL here: nothing was measured; lt->cells[row][col] still counts
 * them). */
bool dq_loss_is(const dq_rexp *e);
const dq_rexp *dq_loss_experiment(const dq_results *r);
const dq_loss_cell *dq_loss_cell_at(const dq_loss_table *lt, size_t row,
                                    size_t col);
/* What fault spec does, in words (text/faults.md) from the spec
 * ("kill-consumer:during-work:2" -> "consumers killed with SIGKILL during
 * the work (2 kills per trial, each replaced)"; "none" -> "no fault (the
 * baseline)"), into buf. */
struct dq_texts;
void dq_fault_phrase(struct dq_texts *t, const char *spec, char *buf,
                     size_t len);
/* The variant label of a throughput row: "lua", or its strategy and
 * options with ';' as ' ' ("lua batch=16 enqueue_batch=64"). */
void dq_perf_tp_label(const dq_perf_tp *t, char *buf, size_t len);
/* Median e2e tasks/s over the repeats of variant label with that many
 * consumers (0: the best median over every count, that count in *at
 * unless NULL); -1 when not measured.  dq_perf_enqueue: enqueue only. */
double dq_perf_e2e(const dq_perf *p, const char *label, int consumers,
                   int *at);
double dq_perf_enqueue(const dq_perf *p, const char *label);
/* The backlog row of strategy at n pending, or NULL; its smallest and
 * largest backlog rows (NULL when none). */
const dq_perf_bl *dq_perf_backlog(const dq_perf *p, const char *strategy,
                                  int64_t n);
void dq_perf_backlog_range(const dq_perf *p, const char *strategy,
                           const dq_perf_bl **lo, const dq_perf_bl **hi);
/* The median ops/s of the references.csv rows of reference ("zadd-c4",
 * "zadd-c1-p100": every `when` of the run), their count in *n (or
 * NULL); -1 when there is none. */
double dq_perf_ref_median(const dq_perf *p, const char *reference,
                          size_t *n);
/* The median tasks/s (events/s when events) of the harness.csv rows of
 * strategy ("harness-noop": the harness's own ceiling); -1 when none. */
double dq_perf_harness_median(const dq_perf *p, const char *strategy,
                              bool events);
/* The probes.csv row of claim and probe, or NULL; the integer value of
 * key in a row's verdict_input (false: absent, not an integer, no row). */
const dq_probe_row *dq_probes_find(const dq_probes *p, const char *claim,
                                   const char *probe);
bool dq_probe_int(const dq_probe_row *row, const char *key, int64_t *out);
/* The opcost rows of strategy and mix with the smallest and largest n
 * into *lo and *hi (both NULL when there is none). */
void dq_opcost_range(const dq_opcost *p, const char *strategy,
                     const char *mix, const dq_opcost_row **lo,
                     const dq_opcost_row **hi);
/* The witness.csv row of witness name and quantity (NULL: its first
 * row), or NULL; whether name was witnessed (its row "witnessed" is 1);
 * the value of name's quantity, or absent when it has none. */
const dq_witness_row *dq_witness_find(const dq_witnesses *w,
                                      const char *name, const char *quantity);
bool dq_witness_seen(const dq_witnesses *w, const char *name);
int64_t dq_witness_value(const dq_witnesses *w, const char *name,
                         const char *quantity, int64_t absent);
/* Percentile q (0..100, nearest rank) of p's lateness over every enqueued
 * task, an undelivered task counting as later than any delivered one:
 * true with *out in ms, false when the rank falls among the undelivered
 * (or p holds no task). */
bool dq_rpool_pct(const dq_rpool *p, double q, double *out);

#endif
