/* report_int.h -- what report.c shares with the experiment sections in
 * sections.c (lateness CDF, idle cost, backlog lateness).  Internal to
 * report/: nothing outside includes it.
 */
#ifndef DQ_REPORT_INT_H
#define DQ_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
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

#endif
