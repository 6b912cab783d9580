/* claims.h -- the claims dqlab puts to the test (C01..C21, the ids of
 * CLAIMS.md) and the rules that decide them from the results model.
 *
 * The table is data: each row carries the claim in dqlab's own words, the
 * measurement that would decide it, a rule (NULL while no experiment
 * measures it) and the rule's parameters.  Claims of the same shape share
 * one rule with different parameters (the duplicate tallies C01, C02, C03
 * and C13; the probe readings C06-C09 and C20).  The rules read only the
 * loaded results (results.h); the Claims section prints the table.
 */
#ifndef DQ_CLAIMS_H
#define DQ_CLAIMS_H

#include <stddef.h>

#include "results.h"

typedef enum dq_verdict {
    DQ_VERDICT_NOT_MEASURED = 0,
    DQ_VERDICT_HOLDS,
    DQ_VERDICT_HOLDS_WITH_CONDITIONS,
    DQ_VERDICT_DOES_NOT_HOLD,
} dq_verdict;

typedef struct dq_claim_def dq_claim_def;

/* Computes a verdict for claim c from r and writes the evidence (one
 * Markdown paragraph: numbers, experiment, figure) into ev (evlen bytes).
 * Returns DQ_VERDICT_NOT_MEASURED, with ev saying what is missing, when
 * the results hold no data that decides the claim. */
typedef dq_verdict (*dq_claim_rule)(const dq_claim_def *c,
                                    const dq_results *r, char *ev,
                                    size_t evlen);

struct dq_claim_def {
    const char *id;       /* "C01" */
    const char *text;     /* the claim, in dqlab's words */
    const char *decide;   /* the experiment or measurement that decides it */
    dq_claim_rule rule;   /* NULL: no experiment decides it yet */
    const struct dq_claim_args *args;  /* the rule's parameters (claims.c) */
};

/* Every claim, in id order, ended by a row with id NULL. */
extern const dq_claim_def dq_claims[];

/* "holds", "holds with conditions", "does not hold", "not yet measured". */
const char *dq_verdict_name(dq_verdict v);

/* Runs c's rule (or says "not yet measured" with c->decide when it has
 * none) and writes the evidence to ev. */
dq_verdict dq_claim_decide(const dq_claim_def *c, const dq_results *r,
                           char *ev, size_t evlen);

#endif
