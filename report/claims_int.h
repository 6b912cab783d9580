/* claims_int.h -- what the claim rule files share (claims.c: the table,
 * the tallies and the probe readings; claims_time.c: lateness, cost and
 * growth; claims_fault.c: faults and the tutorial recipes; claims_util.c:
 * the helpers all three call).  Not for the sections: they use claims.h.
 *
 * The writing macros append to the evidence (SAY printf, TSAY a template
 * of text/claims.md), to a char array (TBUF), or to the verdict's sample
 * and interval (SAMPLE, IVAL); WILSON and SPREAD render an interval with
 * a template of claims.md whose keys are fixed: WILSON "k n lo hi" (the
 * 95% Wilson interval of k of n, as percentages), SPREAD "lo hi n" (the
 * smallest and largest of n values, one per repeat), picking the
 * template's "_few" twin when there are fewer than DQ_MIN_REPEATS values,
 * which then says that a range of so few is no interval.
 */
#ifndef DQ_CLAIMS_INT_H
#define DQ_CLAIMS_INT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "claims.h"
#include "facts.h"
#include "md.h"
#include "stats.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define SAY(...) dq_append(ev->buf, ev->len, &ev->off, __VA_ARGS__)
#define TSAY(id, fmt, ...)                                                   \
    DQ_TCAT(ev->t, ev->buf, ev->len, &ev->off, "claims." #id, fmt,           \
            ##__VA_ARGS__)
#define TBUF(b, id, fmt, ...)                                                \
    DQ_TCAT(ev->t, b, sizeof b, &(size_t){strlen(b)}, "claims." #id, fmt,    \
            ##__VA_ARGS__)
#define SAMPLE(id, fmt, ...) TBUF(ev->res->sample, id, fmt, ##__VA_ARGS__)
#define IVAL(id, fmt, ...) TBUF(ev->res->interval, id, fmt, ##__VA_ARGS__)
/* The evidence starts over with text id: a rule that finds out late that
 * it cannot decide. */
#define NONE(id, fmt, ...)                                                   \
    (ev->off = 0, ev->buf[0] = '\0', TSAY(id, fmt, ##__VA_ARGS__),          \
     DQ_VERDICT_NOT_MEASURED)
/* The interval of k of n into the char array b (after "; " when b holds
 * something already), in template id. */
#define WILSON(b, id, k, n)                                                  \
    do {                                                                     \
        char lo_[16], hi_[16];                                               \
        dq_claims_wilson((k), (n), lo_, hi_);                                \
        TBUF(b, id, "%sk=%" PRIu64 " n=%" PRIu64 " lo=%s hi=%s",             \
             (b)[0] ? "; " : "", (uint64_t)(k), (uint64_t)(n), lo_, hi_);    \
    } while (0)
/* The range of v[0..n-1] (prec decimals) into b, in template id or, with
 * fewer than DQ_MIN_REPEATS values, id_few. */
#define SPREAD(b, id, prec, v, n)                                            \
    do {                                                                     \
        double lo_, hi_;                                                     \
        size_t n_ = (n);                                                     \
        dq_minmax((v), n_, &lo_, &hi_);                                      \
        DQ_TCATP(ev->t, b, sizeof b, &(size_t){strlen(b)},                   \
                 n_ >= DQ_MIN_REPEATS, "claims." #id, "claims." #id "_few",  \
                 "%slo=%.*f hi=%.*f n=%zu", (b)[0] ? "; " : "", prec, lo_,   \
                 prec, hi_, n_);                                             \
    } while (0)
/* The figure the evidence points at: "fig-<stem>" (or any anchor). */
#define FIGURE(...)                                                          \
    snprintf(ev->res->figure, sizeof ev->res->figure, __VA_ARGS__)

/* The 95% Wilson interval of k of n as two printed percentages. */
void dq_claims_wilson(uint64_t k, uint64_t n, char lo[16], char hi[16]);

/* The tasks/s trial t offered: its tasks over its range of due times;
 * 0 without a range. */
double dq_offered_rate(const dq_trialrow *t);
/* The groups of strategy in e (may be NULL) with the fewest and with
 * the most pending tasks (backlog >= min; the first of equals) into *a
 * and *b, both NULL when there is none. */
void dq_backlog_range(const dq_rexp *e, const char *strategy, int64_t min,
                      const dq_rgroup **a, const dq_rgroup **b);

/* The rules outside claims.c (claims_time.c, claims_fault.c). */
#define DQ_RULE(name)                                                        \
    dq_verdict name(const dq_claim_def *c, const dq_results *r, dq_ev *ev)
DQ_RULE(dq_rule_c04);
DQ_RULE(dq_rule_c05);
DQ_RULE(dq_rule_c10);
DQ_RULE(dq_rule_c11);
DQ_RULE(dq_rule_c16);
DQ_RULE(dq_rule_c17);
DQ_RULE(dq_rule_c12);
DQ_RULE(dq_rule_c14);
DQ_RULE(dq_rule_c15);
DQ_RULE(dq_rule_c23);
DQ_RULE(dq_rule_c18);
DQ_RULE(dq_rule_c21);
DQ_RULE(dq_rule_c26);
DQ_RULE(dq_rule_recipe);

/* The C a row of claims.c adds to its rule's data row (claim_rows.md):
 * rule_tally's wording and verdict, rule_probes' judge of the readings
 * (v[k][i]: key i of the claim's k-th probes row) and the shape it reads
 * by position: keys[k] keys in its k-th row, as many rows as there are
 * nonzero keys[k] (claims.c refuses a probes table of another shape at
 * load); recipe: the judge reads the claim's recipes row too. */
#define DQ_PROBE_ROWS 5
#define DQ_PROBE_KEYS 12
typedef struct dq_claims_tally dq_claims_tally;
struct dq_claim_args {
    dq_verdict (*say)(dq_ev *ev, const dq_claims_tally *t, const char *where);
    dq_verdict (*judge)(dq_ev *ev, const dq_results *r,
                        int64_t v[DQ_PROBE_ROWS][DQ_PROBE_KEYS]);
    unsigned char keys[DQ_PROBE_ROWS];
    bool recipe;
};

/* "Not yet measured", with the claim's decide text as what would. */
dq_verdict dq_claim_unmeasured(const dq_claim_def *c, dq_ev *ev);

/* A row of a table of text/claim_rows.md: its cells, blanks trimmed
 * ("" an empty one), and its line in the file. */
#define DQ_ROW_CELLS 8
typedef struct dq_crow {
    char cell[DQ_ROW_CELLS][192];
    size_t n;
    int line;
} dq_crow;
/* The use of table name of claim_rows.md (a const dq_tuse *). */
#define DQ_ROWS(name) DQ_TUSE("claim_rows." name, "")
/* The rows of table u whose first cell is key, at most max (> 0) into
 * rows; every row of u is checked.  Returns how many, or -1
 * when a row is not "| a | b |" with the header's number of cells or no
 * row has key: then t->err names the file and line, and the report
 * stops. */
int dq_claim_rows(dq_ev *ev, const dq_tuse *u, const char *key, dq_crow *rows,
                  size_t max);
/* The rows of table (a template name, "claim_rows.tallies") of t whose
 * first cell is key, at most max into rows, and the line of the table's
 * marker into *line.  Returns how many rows have key (more than max
 * too), or -1 when t has no such table or a row of it is malformed
 * (dq_claim_tables_check refuses those). */
int dq_claim_rows_find(const dq_texts *t, const char *table, const char *key,
                       dq_crow *rows, size_t max, int *line);
/* Sets t->err (the first error only) to "<t->dir>/GROUP.md:line: what",
 * the file of table u. */
void dq_row_bad(dq_ev *ev, const dq_tuse *u, int line, const char *what);
/* Whether q is a well-formed row of the faults table (claims_fault.c);
 * false with why in bad (len bytes). */
bool dq_fault_row_ok(const dq_crow *q, char *bad, size_t len);
/* Whether cell (a strategy column of claim_rows.md) names a registered
 * strategy (dq_strategy_find); with DQ_ROW_EMPTY_OK an empty cell ("any")
 * passes too, with DQ_ROW_NOT_OK "!name" ("all but") too.  false with why
 * in bad (len bytes). */
#define DQ_ROW_EMPTY_OK 1
#define DQ_ROW_NOT_OK 2
bool dq_row_strategy_ok(const char *cell, int how, char *bad, size_t len);
/* Whether key is an option strategy takes (dq_strategy_option), or,
 * with strategy "" (any) or no registered strategy, one some registered
 * strategy takes.  false with why in bad (len bytes). */
bool dq_row_option_ok(const char *strategy, const char *key, char *bad,
                      size_t len);
/* The check of each row of one table of claim_rows.md: its template name
 * ("claim_rows.faults"), the columns its rules read (its header must have
 * that many cells) and whether a row is well formed (false with why in
 * bad; NULL: any); a row with table NULL ends a list of them. */
typedef struct dq_row_check {
    const char *table;
    size_t ncol;
    bool (*ok)(const dq_crow *q, char *bad, size_t len);
} dq_row_check;
/* dq_claim_rows_check (claims.h) with the row checks of checks, one per
 * table at most (the other tables' rows checked for their shape only). */
int dq_claim_tables_check(const dq_texts *t, const dq_row_check *checks,
                          char *err, size_t errlen);

#endif
