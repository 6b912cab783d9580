/* claims_int.h -- what the two halves of the claim rules share: the
 * parameters of a row (struct dq_claim_args), the duplicate tally, and
 * the rules of claims_rules.c that the table in claims.c names.
 * Internal to claims.c and claims_rules.c.
 */
#ifndef DQ_CLAIMS_INT_H
#define DQ_CLAIMS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "claims.h"
#include "md.h"

/* What the trials of one strategy with 2+ consumers add up to, over every
 * experiment without injected faults. */
typedef struct dq_tally {
    size_t trials, dup_trials;
    uint64_t duplicates, dup_max, deliveries, wakeups;
    uint64_t lost_races, round_trips, delivered;
    int max_consumers;
    char exps[256];       /* experiment names, comma-separated */
    char fig[128];        /* a duplicates figure that shows them, or "" */
} dq_tally;
void dq_claim_tally(const dq_results *r, const char *strategy,
                    dq_tally *t);

/* A probe reading: the integer keys of one probes.csv row of the claim. */
typedef struct dq_probe_read {
    const char *probe;
    const char *keys[6];  /* NULL-terminated */
} dq_probe_read;

struct dq_claim_args {
    /* rule_tally: the strategy and the wording / verdict of the claim */
    const char *strategy;
    dq_verdict (*say)(const dq_tally *t, const char *where,
                      char *ev, size_t evlen);
    /* rule_probes: the readings (v[k][i] = keys[i] of reads[k]), judged */
    dq_probe_read reads[5];
    dq_verdict (*judge)(const dq_results *r, int64_t v[5][6], char *ev,
                        size_t evlen);
};

/* claims_rules.c */
dq_verdict dq_rule_c04(const dq_claim_def *c, const dq_results *r,
                       char *ev, size_t evlen);
dq_verdict dq_rule_c05(const dq_claim_def *c, const dq_results *r,
                       char *ev, size_t evlen);
dq_verdict dq_rule_c10(const dq_claim_def *c, const dq_results *r,
                       char *ev, size_t evlen);
dq_verdict dq_rule_c11(const dq_claim_def *c, const dq_results *r,
                       char *ev, size_t evlen);
dq_verdict dq_rule_c12(const dq_claim_def *c, const dq_results *r,
                       char *ev, size_t evlen);
dq_verdict dq_rule_c14(const dq_claim_def *c, const dq_results *r,
                       char *ev, size_t evlen);
dq_verdict dq_rule_c16(const dq_claim_def *c, const dq_results *r,
                       char *ev, size_t evlen);
dq_verdict dq_rule_c17(const dq_claim_def *c, const dq_results *r,
                       char *ev, size_t evlen);
dq_verdict dq_rule_c18(const dq_claim_def *c, const dq_results *r,
                       char *ev, size_t evlen);
dq_verdict dq_rule_c21(const dq_claim_def *c, const dq_results *r,
                       char *ev, size_t evlen);
/* The loss experiment's zpopmin cells under kill-consumer, as a clause for
 * C07 ("" when there is nothing to say). */
void dq_claim_c07_loss(const dq_results *r, char *buf, size_t len);

#endif
