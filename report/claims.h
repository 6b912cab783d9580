/* claims.h -- the claims dqlab puts to the test (C01..C28, the ids of
 * docs/CLAIMS.md) and the rules that decide them from the results model.
 *
 * The table is data: each row carries the claim in dqlab's own words and
 * the measurement that would decide it (texts of text/claims.md) and a
 * rule (NULL while no experiment measures it).  The rules' parameters are
 * rows of text/claim_rows.md, read with the texts: claims of the same
 * shape share one rule with different rows (the duplicate tallies C01,
 * C02, C03 and C13; the probe readings C06-C09, C20, C22, C27, C28; a
 * tutorial recipe against dqlab's default, C07, C24, C25), and the fault
 * rules name their loss-table cells by a row, so a fault's name is data.
 * The rules read only the loaded results (results.h); the Claims section
 * prints the table.
 *
 * A verdict is one of five words, each defined once (text/claims.md,
 * verdicts): it states its sample (trials, tasks, kills) and, for a rate
 * or a count, an interval (a Wilson interval for a proportion, stats.h,
 * or min-max over the repeats when there are at least five); a comparison
 * with a bound names its tolerance in the evidence.
 */
#ifndef DQ_CLAIMS_H
#define DQ_CLAIMS_H

#include <stddef.h>

#include "results.h"
#include "text.h"

typedef enum dq_verdict {
    DQ_VERDICT_NOT_MEASURED = 0,  /* nothing in the results decides it */
    DQ_VERDICT_PARTLY_MEASURED,   /* a part measured, a part not */
    DQ_VERDICT_HOLDS,             /* as the tutorial states it */
    DQ_VERDICT_HOLDS_WITHIN,      /* within the limits stated beside it */
    DQ_VERDICT_DOES_NOT_HOLD,     /* false as stated */
} dq_verdict;

typedef struct dq_claim_def dq_claim_def;

/* What a verdict rests on, besides its evidence text: the sample, the
 * interval and the figure to look at (a stem of report/out/figures/,
 * linked as #fig-<stem>; "" when the evidence has no figure). */
typedef struct dq_claim_result {
    char sample[320];
    char interval[320];
    char figure[128];
} dq_claim_result;

/* The evidence being written: the texts (text/claims.md), the buffer (len
 * bytes, off used) and the result the rule fills besides. */
typedef struct dq_ev {
    dq_texts *t;
    char *buf;
    size_t len, off;
    dq_claim_result *res;
} dq_ev;

/* Computes a verdict for claim c from r and appends the evidence (one
 * Markdown paragraph: numbers, experiment, figure) to ev, with its sample
 * and interval in ev->res.  Returns DQ_VERDICT_NOT_MEASURED, with the
 * evidence saying what is missing, when the results hold no data that
 * decides the claim. */
typedef dq_verdict (*dq_claim_rule)(const dq_claim_def *c,
                                    const dq_results *r, dq_ev *ev);

struct dq_claim_def {
    const char *id;       /* "C01" */
    const dq_tuse *text;  /* the claim, in dqlab's words */
    const dq_tuse *decide;  /* the experiment or measurement that decides it */
    dq_claim_rule rule;   /* NULL: no experiment decides it yet */
    const struct dq_claim_args *args;  /* the C a shared rule needs besides
                                          its row (claims_int.h) */
};

/* Every claim, in id order, ended by a row with id NULL. */
extern const dq_claim_def dq_claims[];

/* "holds", "holds within stated limits", "does not hold as stated",
 * "partly measured", "not yet measured". */
const char *dq_verdict_name(dq_verdict v);

/* Puts two spaces after a sentence's end where texts of a rule met
 * without one ("...of 1500.WAIT narrowed..." -> "...of 1500.  WAIT..."):
 * after a '.', '!' or '?' right before a capital letter, outside code
 * spans, in place in the string buf (len: its size; stops short of
 * overflowing).  dq_claim_decide does it to every evidence text. */
void dq_claim_space_sentences(char *buf, size_t len);

/* Runs c's rule (or says "not yet measured" with c->decide when it has
 * none), writes the evidence to buf (len bytes) in the texts of t, and
 * the sample, interval and figure to *res (each "" when the rule has
 * none: then the claims table says so). */
dq_verdict dq_claim_decide(const dq_claim_def *c, const dq_results *r,
                           dq_texts *t, char *buf, size_t len,
                           dq_claim_result *res);

/* Checks every row of the claim rules' data tables in t (text/claim_rows.md,
 * loaded by dq_texts_load): each is "| a | b |" with its header's cells,
 * the header has the table's columns, a faults row names only strategy
 * flags (dq_flag_name), a fault kind (dq_fault_find) and a retry of
 * readd, nack or none, a recipe counts early or lost, and every strategy
 * cell (tallies, recipes, faults) names a registered strategy
 * (dq_strategy_find; empty and "!name" where the table allows them); and
 * that every claim of dq_claims[] finds the rows its rule reads (a
 * probes claim: the rows and keys per row its judge reads).  0, or -1
 * with one line in err naming the file by t->dir and the row's line
 * ("report/text/claim_rows.md:52: ..."). */
int dq_claim_rows_check(const dq_texts *t, char *err, size_t errlen);

#endif
