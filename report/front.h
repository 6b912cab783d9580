/* front.h -- the figures of facts.h as linked Markdown, shared by the
 * report's front parts: sec_front.c (the contents and the summary
 * matrix), sec_guide.c (the decision guide and the scenarios) and
 * sec_cards.c (the strategy cards).
 *
 * Each dq_cell_* writes one figure of strategy x into buf (len bytes) as
 * inline Markdown: the number as a link to the section it comes from
 * ("[2 of 150](#exp-loss) (1 trial)"), with its sample, or "not
 * measured" when no trial of the run gives it.  Words come from
 * text/front.md.
 */
#ifndef DQ_FRONT_H
#define DQ_FRONT_H

#include <stddef.h>

#include "facts.h"
#include "md.h"

/* The anchor id of e's section, "exp-<name>" ("exp-" alone for NULL);
 * report.c writes it before the section (dq_anchor). */
void dq_exp_anchor(const dq_rexp *e, char *buf, size_t len);

/* "[naive](#card-naive)": the strategy's name linked to its card. */
void dq_cell_name(dq_texts *t, const dq_fact *x, char *buf, size_t len);
/* What x declares: "at-least-once", "at-most-once", "at-most-once with
 * duplicates" (no link: its flags, not a measurement). */
void dq_cell_declared(dq_texts *t, const dq_fact *x, char *buf, size_t len);

/* f's host crashes into buf, "zpopmin everysec 0/150 (0-2.5%), ..., 1
 * trial each; 95% Wilson ..." (sep between the counts: "/" or " of "; ""
 * when none ran), words from t.  Returns the length the whole list needs
 * (dq_append's rule: more than len - 1 when cut). */
size_t dq_host_list(dq_texts *t, const dq_facts *f, const char *sep,
                    char *buf, size_t len);

/* The note after a list of counts with at least lo trials each, into buf
 * from *off: the interval's name (dq_facts_wilson) and, with fewer than
 * DQ_MIN_REPEATS trials, that such a count varies from run to run. */
void dq_sample_tail(dq_texts *t, size_t lo, char *buf, size_t len,
                    size_t *off);

/* The cells of the matrix, in its column order after the name: the
 * guarantee seen, consumer crashes, server crashes per AOF mode ("off
 * 95/150, everysec 0/150", with the host crashes where they ran),
 * duplicates, idle cost, p99 lateness, commands per task, the minimum
 * Redis version. */
typedef void dq_cell_fn(dq_texts *t, const dq_facts *f, const dq_fact *x,
                        char *buf, size_t len);
dq_cell_fn dq_cell_seen, dq_cell_kill, dq_cell_crash, dq_cell_dup,
    dq_cell_idle, dq_cell_lat, dq_cell_cmds, dq_cell_version;

#endif
