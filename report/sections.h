/* sections.h -- the report's sections, above the results model
 * (results.h) and the writing kit (md.h).
 *
 * An experiment's section is picked from dq_sections[], one row per plot
 * kind an experiment file may list (harness/plots.h): its gnuplot script,
 * its figure, the function that writes it and the event logs it reads.
 * Rows without a function are the generic per-consumer figures of the
 * generic section: the value drawn and the caption under it.  Adding a
 * section: its kind in harness/plots.h, its row in sections.c, its
 * function (or value and caption), its .gp script.
 */
#ifndef DQ_SECTIONS_H
#define DQ_SECTIONS_H

#include "../harness/plots.h"
#include "facts.h"
#include "md.h"
#include "results.h"
#include "sec_kit.h"

/* One row per plot kind, by enum dq_plot (its order is the precedence:
 * the first row with a write that fits writes), ended by a row with kind
 * NULL. */
extern const dq_section dq_sections[DQ_NPLOTS + 1];
/* The event logs (DQ_LOGS_*) the sections that fit e read. */
unsigned dq_section_logs(const dq_rexp *e);

/* The front parts, right after the report's opening (sec_front.c,
 * sec_guide.c, sec_cards.c): the contents (links to every part, id
 * "contents"), the summary matrix (id "summary-matrix"), the decision
 * guide and three scenarios, one card per strategy.  f is
 * dq_facts_compute(r); the cards copy the witness charts into figures/
 * (0, or -1 with err). */
void dq_section_contents(dq_md *o, const dq_results *r);
void dq_section_summary(dq_md *o, const dq_facts *f);
void dq_section_guide(dq_md *o, const dq_results *r, const dq_facts *f);
void dq_section_scenarios(dq_md *o, const dq_results *r,
                          const dq_facts *f);
int dq_section_cards(dq_md *o, const dq_results *r, const dq_facts *f,
                     char *err, size_t errlen);

/* The report's other parts in the order report.c writes them; the int
 * ones return 0 or -1 with err. */
void dq_section_environment(dq_md *o, const dq_results *r);
int dq_section_experiment(dq_md *o, const dq_results *r, const dq_rexp *e,
                          char *err, size_t errlen);
int dq_section_perf(dq_md *o, const dq_results *r, char *err,
                    size_t errlen);
void dq_section_probes(dq_md *o, const dq_results *r);
void dq_section_claims(dq_md *o, const dq_results *r);
/* The interview and coursework pack (sec_pack.c): the tutorials'
 * interview questions answered from r, and the exercises ex (loaded by
 * dq_exercises_load, harness/exercise.h).  Comes after the claims: it
 * links the figures the sections above drew (only those the output
 * directory holds). */
struct dq_exercise_set;
void dq_section_pack(dq_md *o, const dq_results *r,
                     const struct dq_exercise_set *ex);
void dq_section_strategies(dq_md *o);

/* The section functions of the table (sec_*.c). */
int dq_sec_lateness_cdf(dq_md *o, const dq_results *r, const dq_rexp *e,
                        const dq_section *s, char *err, size_t errlen);
int dq_sec_backlog(dq_md *o, const dq_results *r, const dq_rexp *e,
                   const dq_section *s, char *err, size_t errlen);
int dq_sec_idle_cost(dq_md *o, const dq_results *r, const dq_rexp *e,
                     const dq_section *s, char *err, size_t errlen);
int dq_sec_loss(dq_md *o, const dq_results *r, const dq_rexp *e,
                const dq_section *s, char *err, size_t errlen);
int dq_sec_outcomes(dq_md *o, const dq_results *r, const dq_rexp *e,
                    const dq_section *s, char *err, size_t errlen);

/* The loss section's side table (sec_loss_side.c): work run twice and
 * the server's stalls per strategy and fault, with what they mean. */
void dq_loss_side(dq_md *o, const dq_rexp *e);
/* The loss section's opening paragraph, from e's meta.txt "faults" (the
 * specs the run used) and delay_ms, into buf (sec_loss.c). */
void dq_loss_describe(dq_texts *t, const dq_rexp *e, char *buf, size_t len);

#endif
