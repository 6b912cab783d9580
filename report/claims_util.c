/* claims_util.c -- what the claim rule files (claims.c, claims_time.c,
 * claims_fault.c) share, declared in claims_int.h: Wilson intervals,
 * backlog ranges, and the reader of the rules' data rows
 * (text/claim_rows.md).  Apart from claims.c, whose table names the
 * rules, so that no rule file reaches back up to the table that lists it.
 */
#include "claims_int.h"

/* ---- Helpers (claims_int.h) -------------------------------------------- */

void dq_claims_wilson(uint64_t k, uint64_t n, char lo[16], char hi[16])
{
    double l, h;
    dq_wilson(k, n, DQ_Z95, &l, &h);
    dq_fmt_pct(lo, 16, l);
    dq_fmt_pct(hi, 16, h);
}

/* ---- The rows of text/claim_rows.md ------------------------------------- */

void dq_row_bad(dq_ev *ev, const dq_tuse *u, int line, const char *what)
{
    if (ev->t->err[0] == '\0')
        snprintf(ev->t->err, sizeof ev->t->err, "text/%.*s.md:%d: %s",
                 (int)strcspn(u->name, "."), u->name, line, what);
}

/* The cells of table line l (len bytes, "| a | b |") into *row; false
 * when it is no such line, or has a cell too many or too long. */
static bool split_row(const char *l, size_t len, dq_crow *row)
{
    row->n = 0;
    if (len < 2 || l[0] != '|' || l[len - 1] != '|')
        return false;
    for (const char *p = l + 1, *q; p < l + len; p = q + 1) {
        q = memchr(p, '|', (size_t)(l + len - p));
        p += strspn(p, " ");
        size_t n = q > p ? (size_t)(q - p) : 0;
        while (n > 0 && p[n - 1] == ' ')
            n--;
        if (row->n == DQ_ROW_CELLS || n >= sizeof row->cell[0])
            return false;
        snprintf(row->cell[row->n++], sizeof row->cell[0], "%.*s", (int)n,
                 p);
    }
    return true;
}

int dq_claim_rows(dq_ev *ev, const dq_tuse *u, const char *key, dq_crow *rows,
                  size_t max)
{
    const dq_texts *t = ev->t;
    size_t i = 0, ncol = 0, got = 0;
    char what[256];
    while (i < t->n && strcmp(t->name[i], u->name) != 0)
        i++;
    if (i == t->n)
        return -1;   /* not loaded: text.c refused the report already */
    int line = t->line[i];
    for (const char *p = t->body[i]; *p; p += *p == '\n') {
        size_t len = strcspn(p, "\n");
        dq_crow row;
        line++;
        if (!split_row(p, len, &row) || (ncol && row.n != ncol)) {
            snprintf(what, sizeof what, "a row of %s that is not \"| a | b "
                     "|\" with the header's %zu cells (at most %d, each "
                     "under %zu bytes)", u->name, ncol, DQ_ROW_CELLS,
                     sizeof row.cell[0]);
            dq_row_bad(ev, u, line, what);
            return -1;
        }
        p += len;
        row.line = line;
        if (ncol == 0)
            ncol = row.n;   /* the header; the rule line follows */
        else if (strcmp(row.cell[0], key) == 0 && got++ < max)
            rows[got - 1] = row;
    }
    if (got == 0 || got > max) {
        snprintf(what, sizeof what, "%s has %s row %s", u->name,
                 got ? "more than the rule reads of" : "no", key);
        dq_row_bad(ev, u, t->line[i], what);
        return -1;
    }
    return (int)got;
}

dq_verdict dq_claim_unmeasured(const dq_claim_def *c, dq_ev *ev)
{
    char decide[512];
    dq_tset(ev->t, decide, sizeof decide, c->decide, "");
    return NONE(unmeasured, "decide=%s", decide);
}

double dq_offered_rate(const dq_trialrow *t)
{
    return t->delay_max_ms > t->delay_min_ms
               ? (double)t->tasks * 1000.0 /
                     (double)(t->delay_max_ms - t->delay_min_ms) : 0;
}

void dq_backlog_range(const dq_rexp *e, const char *strategy, int64_t min,
                      const dq_rgroup **a, const dq_rgroup **b)
{
    *a = *b = NULL;
    for (size_t i = 0; e != NULL && i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        if (strcmp(g->strategy, strategy) != 0 || g->backlog < min)
            continue;
        *a = *a == NULL || g->backlog < (*a)->backlog ? g : *a;
        *b = *b == NULL || g->backlog > (*b)->backlog ? g : *b;
    }
}
