/* claims.h -- the claims dqlab puts to the test (C01..C21, the ids of
 * CLAIMS.md) and the rules that decide them from the results.
 *
 * The table is data: each entry carries the claim in dqlab's own words,
 * the measurement that would decide it, and a rule function (NULL while no
 * experiment measures it).  A new experiment decides a claim by adding a
 * rule here; report.c prints whatever the table says.
 */
#ifndef DQ_CLAIMS_H
#define DQ_CLAIMS_H

#include <stddef.h>

#include "report.h"

typedef enum dq_verdict {
    DQ_VERDICT_NOT_MEASURED = 0,
    DQ_VERDICT_HOLDS,
    DQ_VERDICT_HOLDS_WITH_CONDITIONS,
    DQ_VERDICT_DOES_NOT_HOLD,
} dq_verdict;

/* Computes a verdict from the loaded results and writes the evidence (one
 * Markdown paragraph: numbers, experiment, figure) into ev (evlen bytes).
 * Returns DQ_VERDICT_NOT_MEASURED, with ev saying what is missing, when
 * the results hold no data that decides the claim. */
typedef dq_verdict (*dq_claim_rule)(const dq_results *r, char *ev,
                                    size_t evlen);

typedef struct dq_claim_def {
    const char *id;       /* "C01" */
    const char *text;     /* the claim, in dqlab's words */
    const char *decide;   /* the experiment or measurement that decides it */
    dq_claim_rule rule;   /* NULL: no experiment decides it yet */
} dq_claim_def;

/* Every claim, in id order, terminated by an entry with id == NULL. */
extern const dq_claim_def dq_claims[];

/* "holds", "holds with conditions", "does not hold", "not yet measured". */
const char *dq_verdict_name(dq_verdict v);

/* Runs c's rule (or reports "not yet measured" with c->decide when it has
 * none) and writes the evidence to ev. */
dq_verdict dq_claim_decide(const dq_claim_def *c, const dq_results *r, char *ev,
                           size_t evlen);

#endif
