/* sec_kit.h -- what the section files share, below the table of
 * sections (sections.h) so that a section file never reaches back up to
 * the table that lists it: the row type a section is written from, its
 * figure, the label of a series, how a group waits and the strategies of
 * an experiment.
 */
#ifndef DQ_SEC_KIT_H
#define DQ_SEC_KIT_H

#include "md.h"
#include "results.h"

/* Writes what follows the heading and parameters of e's section: its
 * figures, tables, "what happened".  0 written, 1 nothing to show (the
 * generic section follows instead), -1 with err.  s is the row of
 * dq_sections[] being written (its script and figure stem). */
struct dq_section;
typedef int (*dq_section_fn)(dq_md *o, const dq_results *r,
                             const dq_rexp *e, const struct dq_section *s,
                             char *err, size_t errlen);

typedef struct dq_section {
    const char *kind;          /* the plot kind in meta.txt "plots" */
    const char *script;        /* <scripts>/<script>.gp */
    const char *figure;        /* figure stem after "<experiment>-" (the
                                  loss timelines: a prefix to the fault) */
    dq_section_fn write;       /* NULL: a generic figure of value, with
                                  caption under it */
    double (*value)(const dq_rgroup *g);
    void (*caption)(dq_md *o, const dq_rexp *e);
    bool (*is)(const dq_rexp *e);  /* NULL: e's plots list kind */
    unsigned logs;             /* the DQ_LOGS_* that write reads */
} dq_section;

/* Draws the figure of section row s for e ("<e>-<figure><suffix>") from
 * data (len bytes, a dq_mem_open buffer: freed here) with its script, and
 * writes its line, then caption cap (or NULL) as a paragraph of its own.
 * 0 or -1 with err. */
int dq_sec_figure(dq_md *o, const dq_rexp *e, const dq_section *s,
                  const char *suffix, char *data, size_t len,
                  const dq_tuse *cap, char *err, size_t errlen);
/* The label of g's series: the strategy, plus options, producers and work
 * when they vary for it in e (no commas: it heads a CSV column). */
void dq_series_label(const dq_rexp *e, const dq_rgroup *g, char *buf,
                     size_t len);
/* How g's consumers wait, the colour code of idle_cost.gp and
 * lateness_cdf.gp: in-process (a known strategy without
 * DQ_G_NEEDS_REDIS), else polling (dq_group_poll_ms > 0), else blocking
 * in Redis. */
enum { DQ_WAITS_POLLING = 1, DQ_WAITS_BLOCKING = 2, DQ_WAITS_IN_PROCESS = 3 };
int dq_group_waits(const dq_rgroup *g);
/* Distinct strategies of e's groups, first-seen order; returns n. */
size_t dq_strategies_of(const dq_rexp *e, char names[][32], size_t max);

#endif
