/* report_int.h -- what report.c shares with the sections in sections.c
 * (lateness CDF, idle cost, backlog lateness), section_perf.c,
 * section_loss.c, section_probes.c and claims.c: the output pair,
 * tables, figures and small helpers each of them would otherwise repeat.
 * Internal to report/: nothing outside includes it.
 */
#ifndef DQ_REPORT_INT_H
#define DQ_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"

/* The report being written: REPORT.md and its twin for cmark. */
typedef struct out {
    const char *dir;          /* report/out */
    const char *scripts;      /* report (the .gp files) */
    FILE *md;                 /* REPORT.md text */
    FILE *hmd;                /* the same with HTML tables, for cmark */
    char *mdbuf, *hmdbuf;
    size_t mdlen, hmdlen;
} out;

/* printf to both texts. */
void both(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A table row of plain-text cells (md: pipe table; hmd: HTML table).  The
 * first call of a table passes head = true; table_end() closes it. */
void table_row(out *o, const char *const *cells, size_t n, bool head);
void table_end(out *o);
/* Writes data to path via a temporary name and rename(); 0 or -1 + err. */
int write_atomic(const char *path, const char *data, size_t len, char *err,
                 size_t errlen);
/* gnuplot -c script in outpath (terminal from outpath's extension); 0 or
 * -1 + err. */
int run_gnuplot(const char *script, const char *in, const char *outpath,
                char *err, size_t errlen);
/* Writes data (len bytes) as <o->dir>/data/<stem>.<ext> and draws
 * <o->dir>/figures/<stem>.svg and <stem>.png with gnuplot -c
 * <o->scripts>/<script>.gp <data file> <figure>.  Writes nothing to the
 * report text (figure_links does) and does not touch e->figures
 * (add_figure does).  Returns 0, or -1 with err (a write, a missing
 * script or a failed gnuplot). */
int draw_figure(out *o, const char *stem, const char *script,
                const char *ext, const char *data, size_t len, char *err,
                size_t errlen);
/* The report's line for figure stem (drawn by draw_figure): the SVG as an
 * image, then links to the PNG and to data/<stem>.<ext>, and a blank
 * line. */
void figure_links(out *o, const char *stem, const char *ext);
/* Appends "<e->name>-<kind>" to e->figures (the experiment's figure
 * list, at most 8; further ones are dropped). */
void add_figure(dq_rexp *e, const char *kind);
/* Set insertion: xs[0..n-1] plus v when v is not there yet and n < max.
 * Returns the new count (n when v was present or xs full). */
size_t add_distinct_i64(int64_t *xs, size_t n, size_t max, int64_t v);
/* Sorts xs[0..n-1] ascending in place (insertion sort: n is small). */
void sort_i64(int64_t *xs, size_t n);
/* The poll interval of a group of a polling strategy (DQ_G_POLLS), ms:
 * its poll_ms option, else the strategy's default; -1 for a strategy that
 * does not poll or is unknown to this dqlab. */
long group_poll_ms(const dq_rgroup *g);
/* True when trial t belongs to matrix cell g (same strategy, options,
 * producers, consumers, work and backlog). */
bool trial_in_group(const dq_rtrial *t, const dq_rgroup *g);
/* open_memstream(buf, len) after setting *buf = NULL, *len = 0: the
 * stream, or NULL with err.  After fclose the caller owns *buf (free). */
FILE *mem_open(char **buf, size_t *len, char *err, size_t errlen);
/* Splits one CSV line in place into at most max fields (f[i] point into
 * line; a trailing CR/LF is cut).  RFC 4180 quoting: a field starting with
 * '"' is unquoted and "" becomes '"'; no embedded newlines.  Returns the
 * count (at least 1). */
int csv_split(char *line, char **f, int max);
/* Writes one cell of a wide CSV (wide_csv) to f: the value of series s
 * (0..nseries-1) at x, or nothing for an empty cell.  The separating comma
 * before the cell is already written.  ctx is wide_csv's ctx. */
typedef void (*wide_cell_fn)(FILE *f, void *ctx, size_t s, int64_t x);
/* Builds a wide CSV in memory, the shape the figure scripts read: a header
 * line xname then, per series s and per suffix k, ",<name s><sufs[k]>"
 * (sufs NULL or nsufs 0: one column per series, no suffix); then, per
 * x of xs[0..nx-1] in that order, a line "<x>" (PRId64) followed, per
 * series, by ',' and cell(f, ctx, s, x).  Series names are nseries
 * NUL-terminated strings every stride bytes from names (a char[][stride]
 * array).  Returns 0 with *buf (malloc'd, the caller frees) and *len, or
 * -1 with err when the memory stream cannot be opened. */
int wide_csv(char **buf, size_t *len, const char *xname, const char *names,
             size_t stride, size_t nseries, const char *const *sufs,
             size_t nsufs, const int64_t *xs, size_t nx, wide_cell_fn cell,
             void *ctx, char *err, size_t errlen);
/* The label of a group's series: strategy, plus options, producers and
 * work when they vary for that strategy in e (no commas). */
void series_label(const dq_rexp *e, const dq_rgroup *g, char *buf,
                  size_t len);
/* "%.<prec>f" of v, or "n/a" when v < 0. */
void fmt_double(char *buf, size_t len, double v, int prec);
/* "a", "a and b", "a, b and c" of names[idx[0..n-1]]. */
void join_and(char names[][32], const size_t *idx, size_t n, char *buf,
              size_t len);
/* Distinct strategy names of e's groups, first-seen order; returns n. */
size_t strategies_of(const dq_rexp *e, char names[][32], size_t max);

/* sections.c: the sections of the experiments whose plots name
 * lateness-cdf, idle-cost or backlog-lateness.  Each writes its figures
 * (adding them to e->figures), its table and its "what happened"
 * paragraph.  Return 0 or -1 with err. */
int section_lateness_cdf(out *o, dq_rexp *e, char *err, size_t errlen);
int section_idle_cost(out *o, dq_rexp *e, char *err, size_t errlen);
int section_backlog(out *o, dq_rexp *e, char *err, size_t errlen);

/* section_perf.c: the Performance section from r->root/bench/latest
 * (`dqlab bench`, perf.h); a short "not measured yet" note when there is
 * none.  r's lateness experiment, when loaded, is quoted beside the
 * bench's due-at-once lateness for strategies whose due-now path skips
 * their timer (expiry).  Returns 0 or -1 with err. */
int section_perf(out *o, const dq_results *r, char *err, size_t errlen);

/* section_probes.c: the Probes section from root/probes/latest (`dqlab
 * probes`, harness/probes.h): one table row per probe (claim, probe, what
 * was done, what Redis did); a short "not run" note when there is none.
 * Returns 0 or -1 with err (a malformed probes.csv). */
int section_probes(out *o, const char *root, char *err, size_t errlen);

/* One row of probes.csv, and the file as loaded.  The claim rules read
 * them through dq_probes_find / dq_probe_int. */
typedef struct dq_probe_row {
    char claim[8];
    char probe[48];
    char action[512];
    char observed[512];
    char input[256];          /* "k=v;k2=v2" */
} dq_probe_row;
typedef struct dq_probes {
    char dir[4096];           /* the run latest points to */
    char redis_version[32];   /* from its meta.txt, "" if absent */
    dq_probe_row *rows;
    size_t n;
} dq_probes;
/* Loads root/probes/latest/probes.csv (and meta.txt).  Returns 1 when
 * loaded (free with dq_probes_free), 0 when there is none (nothing to
 * free), -1 with err naming file:line when it is malformed. */
int dq_probes_load(const char *root, dq_probes *p, char *err, size_t errlen);
void dq_probes_free(dq_probes *p);
/* The row of claim and probe, or NULL. */
const dq_probe_row *dq_probes_find(const dq_probes *p, const char *claim,
                                   const char *probe);
/* The integer value of key in row's verdict_input; false when absent or
 * not an integer (row may be NULL). */
bool dq_probe_int(const dq_probe_row *row, const char *key, int64_t *out);

/* section_loss.c: the loss experiment (plots = loss, or a meta.txt with
 * faults): the table strategies x faults of lost / duplicated /
 * redelivered tasks, re-checked from each trial's event log, with what
 * each strategy declares and a cross where it broke it; then what each
 * fault did.  Returns 0 when written, 1 when e has no trial (the caller
 * writes its generic section), -1 with err. */
int section_loss(out *o, dq_rexp *e, char *err, size_t errlen);

/* The loss table, shared with the claim rules (claims.c). */
#define DQ_LOSS_MAX_ROWS 32
#define DQ_LOSS_MAX_FAULTS 16
typedef struct dq_loss_cell {
    char strategy[32];
    unsigned flags;          /* DQ_G_* of the strategy */
    bool known;              /* the strategy exists in this dqlab */
    size_t trials, violation_trials;
    uint64_t enqueued, lost, lost_claimed, duplicated, dup_nofault;
    uint64_t redelivered;    /* redelivered + redelivered_hidden */
    uint64_t pending_end, early, early_fault, windows;
    int64_t window_us;
    char violation[160];     /* the first violation text, "" if none */
    size_t no_verdict;       /* trials whose log can carry no verdict
                                (dq_check_no_verdict): not in `trials`
                                nor in any count above */
    char no_verdict_why[128]; /* the first one's reason */
} dq_loss_cell;
typedef struct dq_loss_table {
    const dq_rexp *e;
    char rows[DQ_LOSS_MAX_ROWS][64];     /* strategy (+ options) labels */
    size_t nrows;
    char faults[DQ_LOSS_MAX_FAULTS][64]; /* fault specs, "none" first-seen */
    size_t nfaults;
    dq_loss_cell *cells;     /* [row * DQ_LOSS_MAX_FAULTS + col] */
} dq_loss_table;
/* True when e is a loss experiment (plots has loss, or meta faults). */
bool dq_loss_is(const dq_rexp *e);
/* The first loss experiment of r, or NULL. */
const dq_rexp *dq_loss_experiment(const dq_results *r);
/* Loads e's table by checking every trial's event log.  Returns 0 (free
 * with dq_loss_free) or -1 with err (nothing to free). */
int dq_loss_load(const dq_rexp *e, dq_loss_table *lt, char *err,
                 size_t errlen);
void dq_loss_free(dq_loss_table *lt);
/* What fault spec does, in a few words from the spec itself
 * ("kill-consumer:during-work:2" -> "consumers killed with SIGKILL during
 * the work (2 kills per trial, each replaced)"); an unknown spec is
 * quoted as it is.  "none" -> "no fault (the baseline)". */
void dq_fault_phrase(const char *spec, char *buf, size_t len);
/* The kill points of the kill-consumer specs among faults[0..n-1], e.g.
 * "during the work" or "after a claim and before the ack"; "" when there
 * is no kill-consumer spec. */
void dq_kill_points(const char faults[][64], size_t n, char *buf,
                    size_t len);
/* The loss section's opening paragraph, generated from e's meta.txt
 * "faults" (the specs the run actually used) and delay_ms, into buf. */
void dq_loss_describe(const dq_rexp *e, char *buf, size_t len);
/* The cell of row and col, or NULL when no trial with a verdict ran it
 * (a cell whose logs are all incomplete is NULL: nothing was measured). */
const dq_loss_cell *dq_loss_cell_at(const dq_loss_table *lt, size_t row,
                                    size_t col);

#endif
