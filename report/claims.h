/* claims.h -- the claims dqlab puts to the test (C01..C21, the ids of
 * CLAIMS.md) and the rules that decide them from the results model.
 *
 * The table is data: each row carries the claim in dqlab's own words and
 * the measurement that would decide it (texts of text/claims.md), a rule
 * (NULL while no experiment measures it) and the rule's parameters.
 * Claims of the same shape share one rule with different parameters (the
 * duplicate tallies C01, C02, C03 and C13; the probe readings C06-C09 and
 * C20).  The rules read only the loaded results (results.h); the Claims
 * section prints the table.
 */
#ifndef DQ_CLAIMS_H
#define DQ_CLAIMS_H

#include <stddef.h>

#include "results.h"
#include "text.h"

typedef enum dq_verdict {
    DQ_VERDICT_NOT_MEASURED = 0,
    DQ_VERDICT_HOLDS,
    DQ_VERDICT_HOLDS_WITH_CONDITIONS,
    DQ_VERDICT_DOES_NOT_HOLD,
} dq_verdict;

typedef struct dq_claim_def dq_claim_def;

/* The evidence being written: the texts (text/claims.md) and the buffer
 * (len bytes, off used). */
typedef struct dq_ev {
    dq_texts *t;
    char *buf;
    size_t len, off;
} dq_ev;

/* Computes a verdict for claim c from r and appends the evidence (one
 * Markdown paragraph: numbers, experiment, figure) to ev.  Returns
 * DQ_VERDICT_NOT_MEASURED, with the evidence saying what is missing, when
 * the results hold no data that decides the claim. */
typedef dq_verdict (*dq_claim_rule)(const dq_claim_def *c,
                                    const dq_results *r, dq_ev *ev);

struct dq_claim_def {
    const char *id;       /* "C01" */
    const dq_tuse *text;  /* the claim, in dqlab's words */
    const dq_tuse *decide;  /* the experiment or measurement that decides it */
    dq_claim_rule rule;   /* NULL: no experiment decides it yet */
    const struct dq_claim_args *args;  /* the rule's parameters (claims.c) */
};

/* Every claim, in id order, ended by a row with id NULL. */
extern const dq_claim_def dq_claims[];

/* "holds", "holds with conditions", "does not hold", "not yet measured". */
const char *dq_verdict_name(dq_verdict v);

/* Runs c's rule (or says "not yet measured" with c->decide when it has
 * none) and writes the evidence to buf (len bytes), in the texts of t. */
dq_verdict dq_claim_decide(const dq_claim_def *c, const dq_results *r,
                           dq_texts *t, char *buf, size_t len);

#endif
