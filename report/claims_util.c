/* claims_util.c -- what the claim rule files (claims.c, claims_time.c,
 * claims_fault.c) share, declared in claims_int.h: Wilson intervals,
 * backlog ranges, and the reader of the rules' data rows
 * (text/claim_rows.md).  Apart from claims.c, whose table names the
 * rules, so that no rule file reaches back up to the table that lists it.
 */
#include "../strategies/dq.h"  /* dq_strategy_find, dq_strategy_option */
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
        snprintf(ev->t->err, sizeof ev->t->err, "%.400s/%.*s.md:%d: %s",
                 ev->t->dir, (int)strcspn(u->name, "."), u->name, line,
                 what);
}

/* The cells of table line l (len bytes, "| a | b |") into *row, the
 * cells past the last "" (a rule that reads one never reads garbage);
 * false when it is no such line, or has a cell too many or too long. */
static bool split_row(const char *l, size_t len, dq_crow *row)
{
    memset(row, 0, sizeof *row);
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

/* Called on each row of a table after its header and rule line: false,
 * with why in what (len bytes), to stop at a bad one. */
typedef bool (*row_fn)(const dq_crow *row, void *arg, char *what,
                       size_t len);

/* Walks template i of t, a table: every line "| a | b |" with the
 * header's cells (want of them, unless want is 0), each row after the
 * header and rule line given to each.  Returns 0, or the line of the
 * first bad row with why in what. */
static int walk_rows(const dq_texts *t, size_t i, size_t want, row_fn each,
                     void *arg, char *what, size_t len)
{
    size_t ncol = 0, nrow = 0;
    int line = t->line[i];
    for (const char *p = t->body[i]; *p; p += *p == '\n') {
        size_t n = strcspn(p, "\n");
        dq_crow row;
        line++;
        if (!split_row(p, n, &row) || (ncol && row.n != ncol)) {
            snprintf(what, len, "a row of %s that is not \"| a | b |\" "
                     "with the header's %zu cells (at most %d, each under "
                     "%zu bytes)", t->name[i], ncol, DQ_ROW_CELLS,
                     sizeof row.cell[0]);
            return line;
        }
        if (nrow == 0 && want != 0 && row.n != want) {
            snprintf(what, len, "the header of %s has %zu cells: the "
                     "table has %zu columns", t->name[i], row.n, want);
            return line;
        }
        p += n;
        row.line = line;
        ncol = ncol ? ncol : row.n;
        if (nrow++ >= 2 && !each(&row, arg, what, len))
            return line;
    }
    return 0;
}

/* dq_claim_rows' pick: the rows whose first cell is key, at most max. */
typedef struct row_pick {
    const char *key;
    dq_crow *rows;
    size_t max, got;
} row_pick;

static bool pick_row(const dq_crow *row, void *arg, char *what, size_t len)
{
    row_pick *k = arg;
    (void)what;
    (void)len;
    if (strcmp(row->cell[0], k->key) == 0 && k->got++ < k->max)
        k->rows[k->got - 1] = *row;
    return true;
}

/* The index of template name in t, or t->n. */
static size_t table_at(const dq_texts *t, const char *name)
{
    size_t i = 0;
    while (i < t->n && strcmp(t->name[i], name) != 0)
        i++;
    return i;
}

int dq_claim_rows_find(const dq_texts *t, const char *table, const char *key,
                       dq_crow *rows, size_t max, int *line)
{
    row_pick k = {key, rows, max, 0};
    size_t i = table_at(t, table);
    char what[256];
    if (i == t->n || walk_rows(t, i, 0, pick_row, &k, what, sizeof what))
        return -1;
    *line = t->line[i];
    return (int)k.got;
}

int dq_claim_rows(dq_ev *ev, const dq_tuse *u, const char *key, dq_crow *rows,
                  size_t max)
{
    const dq_texts *t = ev->t;
    row_pick k = {key, rows, max, 0};
    size_t i = table_at(t, u->name);
    char what[256];
    if (i == t->n)
        return -1;   /* not loaded: text.c refused the report already */
    int bad = walk_rows(t, i, 0, pick_row, &k, what, sizeof what);
    if (bad != 0) {
        dq_row_bad(ev, u, bad, what);
        return -1;
    }
    if (k.got == 0 || k.got > max) {
        snprintf(what, sizeof what, "%s has %s row %s", u->name,
                 k.got ? "more than the rule reads of" : "no", key);
        dq_row_bad(ev, u, t->line[i], what);
        return -1;
    }
    return (int)k.got;
}

bool dq_row_strategy_ok(const char *cell, int how, char *bad, size_t len)
{
    const char *name = cell + (cell[0] == '!' && (how & DQ_ROW_NOT_OK));
    if (cell[0] == '\0' && (how & DQ_ROW_EMPTY_OK))
        return true;
    if (dq_strategy_find(name) != NULL)
        return true;
    snprintf(bad, len, "strategy '%.64s' is not a registered strategy "
             "(`dqlab list` names them)%s", name,
             cell[0] == '\0' ? "; this column needs one" : "");
    return false;
}

/* Whether strategy s takes option key (its own options and the shared
 * ones, as dq_strategy_option walks them). */
static bool takes_option(const dq_strategy *s, const char *key)
{
    const dq_optdef *o;
    for (size_t i = 0; (o = dq_strategy_option(s, i)) != NULL; i++)
        if (strcmp(o->name, key) == 0)
            return true;
    return false;
}

bool dq_row_option_ok(const char *strategy, const char *key, char *bad,
                      size_t len)
{
    const dq_strategy *s = dq_strategy_find(strategy);
    if (s != NULL && takes_option(s, key))
        return true;
    for (size_t i = 0; s == NULL && dq_strategies[i] != NULL; i++)
        if (takes_option(dq_strategies[i], key))
            return true;
    if (s != NULL)
        snprintf(bad, len, "option '%.64s' is no option of strategy %.64s "
                 "(`dqlab list` names them)", key, strategy);
    else
        snprintf(bad, len, "option '%.64s' is no option of any registered "
                 "strategy (`dqlab list` names them)", key);
    return false;
}

/* dq_claim_tables_check's check of a row: by the row of checks (arg)
 * for its table, if any. */
static bool check_row(const dq_crow *row, void *arg, char *what, size_t len)
{
    const dq_row_check *c = arg;
    return c->ok == NULL || c->ok(row, what, len);
}

int dq_claim_tables_check(const dq_texts *t, const dq_row_check *checks,
                          char *err, size_t errlen)
{
    char what[256];
    for (size_t i = 0; i < t->n; i++) {
        const dq_row_check *c = checks;
        if (strncmp(t->name[i], "claim_rows.", 11) != 0)
            continue;
        while (c->table != NULL && strcmp(c->table, t->name[i]) != 0)
            c++;
        int bad = walk_rows(t, i, c->ncol, check_row, (void *)c, what,
                            sizeof what);
        if (bad != 0) {
            snprintf(err, errlen, "%s/claim_rows.md:%d: %s", t->dir, bad,
                     what);
            return -1;
        }
    }
    return 0;
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
