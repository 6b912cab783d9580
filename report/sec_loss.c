/* sec_loss.c -- the section of the loss experiment (experiments/loss.ini):
 * what each strategy lost, duplicated and redelivered under each injected
 * fault, beside what it declares.
 *
 * The numbers are the loss table of the results model (results_logs.c):
 * each trial's event log re-checked, which splits the extra deliveries
 * into redelivered / duplicated after a fault / duplicated without one
 * and the missing tasks into lost / pending at the end.  A log that can
 * carry no verdict (incomplete: no clean end; checker.h
 * dq_check_no_verdict) is left out of every count, shown as "no verdict:
 * log incomplete" (never as ok or a violation) and listed with its
 * reason under the table.  The central table: rows strategies (with what
 * they declare), columns faults, each cell "lost / duplicated /
 * redelivered of N" summed over the repeats, with a cross where
 * dq_check_violations says the strategy broke a guarantee it declares.
 *
 * Beside it, the side table: work that ran twice (a consumer stopped past
 * its lease finishes a task redelivered meanwhile and its ack is refused:
 * trials.csv processed_twice) and the stall every other client of the
 * server saw (the latency sampler's longest gap between PING replies and
 * their p99: redis_stall_ms, ping_p99_ms; trial.h), each cell the worst
 * over the cell's repeats.
 *
 * Under them, one paragraph per fault (the why comes from the fault's row,
 * dq_fault_mechanism; every figure in it is computed) and its timeline:
 * for the first repeat of each strategy, deliveries per bucket against
 * seconds since the trial's first record, the cumulative share delivered,
 * and the fault windows shaded (loss_timeline.gp).  Then the outcomes
 * section (plots = outcomes): early and lost shares with Wilson bounds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/faults.h"
#include "../strategies/dq.h"
#include "sections.h"
#include "stats.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

void dq_loss_describe(dq_texts *t, const dq_rexp *e, char *buf, size_t len)
{
    char list[256], delay[64], ph[2048] = "", base[128] = "";
    size_t n = 0, off = 0, bo = 0;
    snprintf(list, sizeof list, "%s", dq_rexp_meta(e, "faults"));
    for (char *save = NULL, *f = strtok_r(list, ", ", &save); f != NULL;
         f = strtok_r(NULL, ", ", &save)) {
        if (strcmp(f, "none") == 0 && bo == 0)
            DQ_TCAT(t, base, sizeof base, &bo, "loss.baseline", "");
        if (strcmp(f, "none") == 0 || n++ >= DQ_LOSS_MAX_FAULTS)
            continue;
        dq_append(ph, sizeof ph, &off, "%s", n > 1 ? "; " : "");
        dq_fault_phrase(t, f, ph + off, sizeof ph - off);
        off += strlen(ph + off);
        dq_append(ph, sizeof ph, &off, " (`%s`)", f);
    }
    if (n == 0)
        DQ_TCAT(t, ph, sizeof ph, &off, "loss.no_faults", "");
    snprintf(delay, sizeof delay, "%s", dq_rexp_meta(e, "delay_ms"));
    if (strchr(delay, ':') != NULL)
        *strchr(delay, ':') = '-';     /* "0:500" -> "0-500" */
    DQ_TSET(t, buf, len, "loss.describe", "delay=%s faults=%s baseline=%s",
            delay[0] ? delay : "?", ph, base);
}

/* What a strategy declares, in a few words (text/loss.md, decl_*). */
static void declared(dq_texts *t, unsigned flags, char *buf, size_t len)
{
    size_t off = 0;
    if (flags & DQ_G_AT_LEAST_ONCE)
        DQ_TCAT(t, buf, len, &off, "loss.decl_alo", "");
    else if (flags & DQ_G_AT_MOST_ONCE)
        DQ_TCAT(t, buf, len, &off, "loss.decl_amo", "");
    else
        dq_append(buf, len, &off, "?");
    if (flags & DQ_G_SURVIVES_CONSUMER_CRASH)
        DQ_TCAT(t, buf, len, &off, "loss.decl_survives", "%s", ", ");
    /* a leased strategy redelivers by design: it promises no duplicates
     * only among concurrent consumers without faults, which this table's
     * faults are not; say what it does promise */
    if (flags & DQ_G_AT_LEAST_ONCE)
        DQ_TCAT(t, buf, len, &off, "loss.decl_redelivers", "%s", ", ");
    else if (flags & DQ_G_NO_DUP_CONCURRENT)
        DQ_TCAT(t, buf, len, &off, "loss.decl_no_dups", "%s", ", ");
    else if (flags & DQ_G_DUPLICATES)
        DQ_TCAT(t, buf, len, &off, "loss.decl_dups", "%s", ", ");
    if (!(flags & DQ_G_NEEDS_REDIS))
        DQ_TCAT(t, buf, len, &off, "loss.decl_in_process", "%s", ", ");
}

/* Cell text of lt->cells[r][c]: "lost / duplicated / redelivered of N
 * [+P] [✗]", then the trials with no verdict beside it, or only them, or
 * "-" when no trial ran it. */
static void loss_cell(dq_texts *t, const dq_loss_table *lt, size_t r,
                      size_t c, char *buf, size_t len)
{
    const dq_loss_cell *x = dq_loss_cell_at(lt, r, c);
    size_t k = lt->cells[r][c].no_verdict_trials, off = 0;
    if (x != NULL)
        dq_append(buf, len, &off, "%" PRIu64 " / %" PRIu64 " / %" PRIu64
                  " of %" PRIu64, x->lost, x->duplicated, x->redelivered,
                  x->enqueued);
    if (x != NULL && x->pending_end)
        dq_append(buf, len, &off, " +%" PRIu64, x->pending_end);
    if (x != NULL && x->violation_trials)
        dq_append(buf, len, &off, " ✗");
    if (k > 0 && x != NULL)
        DQ_TCAT(t, buf, len, &off, "loss.cell_also_no_verdict",
                " n=%zu s=%s", k, dq_s(k));
    else if (k > 0)
        DQ_TCAT(t, buf, len, &off, "loss.cell_no_verdict", "");
    else if (x == NULL)
        snprintf(buf, len, "-");
}

/* The cells of lt with trials of no verdict (nov) or with a cross (else):
 * one item each, and their count in *n. */
static void cell_items(dq_texts *t, const dq_loss_table *lt, bool nov,
                       char *buf, size_t len, size_t *n)
{
    size_t off = 0;
    *n = 0;
    buf[0] = '\0';
    for (size_t r = 0; r < lt->nrows; r++)
        for (size_t c = 0; c < lt->nfaults; c++) {
            const dq_loss_cell *x = &lt->cells[r][c];
            if (nov && x->no_verdict_trials > 0)
                DQ_TCAT(t, buf, len, &off, "loss.no_verdict_item", " row=%s "
                        "fault=%s n=%zu s=%s why=%s", lt->rows[r],
                        lt->faults[c], x->no_verdict_trials,
                        dq_s(x->no_verdict_trials),
                        x->no_verdict_why);
            else if (!nov && x->trials > 0 && x->violation_trials)
                DQ_TCAT(t, buf, len, &off, "loss.cross_item", " row=%s "
                        "fault=%s n=%zu trials=%zu s=%s violation=%s",
                        lt->rows[r], lt->faults[c], x->violation_trials,
                        x->trials, dq_s(x->trials), x->violation);
            *n += nov ? x->no_verdict_trials : x->trials > 0 &&
                                                 x->violation_trials > 0;
        }
}

/* The table, the trials with no verdict and the crosses under it. */
static void loss_table(dq_md *o, const dq_loss_table *lt)
{
    const char *head[DQ_LOSS_MAX_FAULTS + 2] = {"strategy", "declares"};
    const char *cells[DQ_LOSS_MAX_FAULTS + 2];
    char cell[DQ_LOSS_MAX_FAULTS + 2][160], items[4096];
    size_t n;
    for (size_t c = 0; c < lt->nfaults; c++)
        head[c + 2] = lt->faults[c];
    for (size_t k = 0; k < lt->nfaults + 2; k++)
        cells[k] = cell[k];
    dq_cells(o, true, head, lt->nfaults + 2);
    for (size_t r = 0; r < lt->nrows; r++) {
        unsigned flags = 0;
        for (size_t c = 0; c < lt->nfaults; c++) {
            const dq_loss_cell *x = dq_loss_cell_at(lt, r, c);
            flags = x != NULL ? x->flags : flags;
            loss_cell(o->texts, lt, r, c, cell[c + 2], sizeof cell[0]);
        }
        snprintf(cell[0], sizeof cell[0], "%s", lt->rows[r]);
        declared(o->texts, flags, cell[1], sizeof cell[1]);
        dq_cells(o, false, cells, lt->nfaults + 2);
    }
    dq_table_end(o);
    cell_items(o->texts, lt, true, items, sizeof items, &n);
    if (n > 0)
        DQ_TEXT(o, "loss.no_verdict", "n=%zu s=%s list=%s\n\n", n, dq_s(n),
                items);
    cell_items(o->texts, lt, false, items, sizeof items, &n);
    if (n == 0)
        DQ_TEXT(o, "loss.no_crosses", "\n\n");
    else
        DQ_TEXT(o, "loss.crosses", "list=%s\n\n", items);
}

/* ---- The side table: work run twice, the server's stalls --------------- */

/* The worst of a strategy's trials under one fault spec. */
typedef struct side_cell {
    size_t trials;
    uint64_t twice;
    double stall_ms, p99_ms;     /* -1: the sampler had none */
} side_cell;

static side_cell cell_of(const dq_rexp *e, const char *s, const char *spec)
{
    side_cell c = {0, 0, -1, -1};
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_trialrow *t = &e->trials[i];
        if (strcmp(t->strategy, s) != 0 || strcmp(t->fault, spec) != 0)
            continue;
        c.trials++;
        c.twice += t->processed_twice;
        c.stall_ms = t->redis_stall_ms > c.stall_ms ? t->redis_stall_ms
                                                    : c.stall_ms;
        c.p99_ms = t->ping_p99_ms > c.p99_ms ? t->ping_p99_ms : c.p99_ms;
    }
    return c;
}

/* Whether strategy s's cells of fault column c hold duplicates: the
 * queue itself delivered a task again (a race, or a claim or an enqueue
 * the fault lost or repeated), not a lease that ran out while held. */
static bool duplicated(const dq_loss_table *lt, const char *s, size_t c)
{
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_loss_cell *y = dq_loss_cell_at(lt, r, c);
        if (y != NULL && strcmp(y->strategy, s) == 0 && y->duplicated > 0)
            return true;
    }
    return false;
}

/* The table, rows e's strategies, then what it shows: the leased
 * strategy's cell with the most work run twice (not through a duplicate),
 * and the strategies whose work ran twice because the queue delivered a
 * task twice. */
void dq_loss_side(dq_md *o, const dq_rexp *e)
{
    const dq_loss_table *lt = e->loss;
    const char *head[DQ_LOSS_MAX_FAULTS + 1] = {"strategy"};
    const char *cells[DQ_LOSS_MAX_FAULTS + 1];
    char names[16][32], cell[DQ_LOSS_MAX_FAULTS + 1][96], dups[256] = "";
    size_t nn = dq_strategies_of(e, names, 16), wr = 0, wc = 0, off = 0;
    side_cell worst = {0, 0, -1, -1};
    bool any = false;
    if (lt == NULL || lt->nfaults == 0 || nn == 0)
        return;
    DQ_TEXT(o, "loss.side_intro", "\n\n");
    for (size_t c = 0; c < lt->nfaults; c++)
        head[c + 1] = lt->faults[c];
    for (size_t k = 0; k < lt->nfaults + 1; k++)
        cells[k] = cell[k];
    dq_cells(o, true, head, lt->nfaults + 1);
    for (size_t r = 0; r < nn; r++) {
        const dq_strategy *st = dq_strategy_find(names[r]);
        bool leased = st != NULL && (st->flags & DQ_G_AT_LEAST_ONCE);
        bool dup = false;
        snprintf(cell[0], sizeof cell[0], "%s", names[r]);
        for (size_t c = 0; c < lt->nfaults; c++) {
            side_cell x = cell_of(e, names[r], lt->faults[c]);
            bool repeated = duplicated(lt, names[r], c);
            char *b = cell[c + 1];
            size_t bo = 0;
            any |= x.stall_ms >= 0;
            if (x.stall_ms < 0)
                DQ_TCAT(o->texts, b, sizeof cell[0], &bo, "loss.side_none",
                        "");
            else
                DQ_TCAT(o->texts, b, sizeof cell[0], &bo, "loss.side_cell",
                        "stall=%.0f p99=%.1f", x.stall_ms, x.p99_ms);
            if (x.twice > 0)
                DQ_TCAT(o->texts, b, sizeof cell[0], &bo, "loss.side_twice",
                        "%sn=%" PRIu64, bo ? " " : "", x.twice);
            dup |= x.twice > 0 && (!leased || repeated);
            if (x.twice > worst.twice && leased && !repeated) {
                worst = x;
                wr = r;
                wc = c;
            }
        }
        if (dup)
            dq_append(dups, sizeof dups, &off, "%s%s", off ? ", " : "",
                      names[r]);
        dq_cells(o, false, cells, lt->nfaults + 1);
    }
    dq_table_end(o);
    if (!any) {
        DQ_TEXT(o, "loss.side_no_sampler", "\n\n");
        return;
    }
    if (worst.twice > 0)
        DQ_TEXT(o, "loss.side_why_twice", "s=%s fault=%s n=%" PRIu64
                " ns=%s trials=%zu ts=%s\n\n", names[wr], lt->faults[wc],
                worst.twice, dq_s(worst.twice), worst.trials,
                dq_s(worst.trials));
    else
        DQ_TEXT(o, "loss.side_no_twice", "\n\n");
    if (dups[0])
        DQ_TEXT(o, "loss.side_dups", "list=%s\n\n", dups);
}

/* ---- What each fault did ------------------------------------------------ */

/* The paragraph of fault column c: per kind of outcome (lost,
 * duplicated, redelivered, early) "a (3 of 150), b (1 of 150)" of the rows
 * that had any, ending with the mechanism of the fault's row (nothing for
 * an unknown fault). */
static void fault_paragraph(dq_md *o, const dq_loss_table *lt, size_t c)
{
    static const dq_tuse what[4] DQ_TUSES = {
        {"loss.lost", "list=%s  "}, {"loss.duplicated", "list=%s  "},
        {"loss.redelivered", "list=%s  "}, {"loss.early", "list=%s  "}};
    char list[4][1024] = {""}, buf[4096], name[64];
    size_t n[4] = {0}, lo[4] = {0}, off = 0, ran = 0;
    uint64_t win_us = 0, windows = 0;
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_loss_cell *x = dq_loss_cell_at(lt, r, c);
        if (x == NULL)
            continue;
        const uint64_t v[4] = {x->lost, x->duplicated, x->redelivered,
                               x->early};
        win_us += (uint64_t)x->window_us;
        windows += x->windows;
        ran++;
        for (int k = 0; k < 4; k++)
            if (v[k] > 0)
                dq_append(list[k], sizeof list[k], &lo[k], "%s%s (%" PRIu64
                          " of %" PRIu64 ")", n[k]++ ? ", " : "",
                          lt->rows[r], v[k], x->enqueued);
    }
    size_t any = n[0] + n[1] + n[2] + n[3];
    DQ_TCAT(o->texts, buf, sizeof buf, &off, "loss.fault", "fault=%s",
            lt->faults[c]);
    if (windows > 0)
        DQ_TCAT(o->texts, buf, sizeof buf, &off, "loss.windows", " n=%"
                PRIu64 " s=%s ms=%.0f", windows, dq_s(windows),
                (double)win_us / 1000.0 / (double)windows);
    dq_append(buf, sizeof buf, &off, ": ");
    if (any == 0)
        DQ_TCAT(o->texts, buf, sizeof buf, &off, "loss.nothing", "  ");
    for (int k = 0; k < 4; k++)
        if (n[k])
            dq_tcat(o->texts, buf, sizeof buf, &off, &what[k], "list=%s  ",
                    list[k]);
    if (any && ran > n[0])
        DQ_TCAT(o->texts, buf, sizeof buf, &off, "loss.clean", "n=%zu "
                "ran=%zu ies=%s  ", ran - n[0], ran, ran == 1 ? "y" : "ies");
    snprintf(name, sizeof name, "%.*s", (int)strcspn(lt->faults[c], ":,"),
             lt->faults[c]);
    dq_append(buf, sizeof buf, &off, "%s", dq_fault_mechanism(name));
    dq_put(o, "%s\n\n", buf);
}

/* ---- Timelines ---------------------------------------------------------- */

/* The timeline drawn for row r under fault column c (its first repeat's),
 * or NULL. */
static const dq_timeline *first_tl(const dq_loss_table *lt, size_t r,
                                   size_t c)
{
    const dq_loss_cell *x = &lt->cells[r][c];
    return x->first ? &x->first_log->tl : NULL;
}

/* The longest stretch without a delivery that overlaps a fault window,
 * and whether deliveries never resumed after it. */
static int64_t tl_stall(const dq_timeline *l, bool *never)
{
    int64_t stall = 0;
    *never = false;
    for (size_t i = 0; i < l->nd; i++) {
        int64_t a = l->d_us[i], b = i + 1 < l->nd ? l->d_us[i + 1]
                                                  : l->end_us;
        for (size_t w = 0; w < l->nwin; w++)
            if (a < l->win[w].e_us && b > l->win[w].b_us && b - a > stall) {
                stall = b - a;
                *never = i + 1 == l->nd;
            }
    }
    return stall;
}

/* The tasks due inside a window: how many, how many never delivered, and
 * the latest delivery after its window closed (-1: none after). */
static void tl_due_in(const dq_timeline *l, size_t *due_in,
                      size_t *undelivered, int64_t *caught)
{
    *due_in = *undelivered = 0;
    *caught = -1;
    for (size_t i = 0; i < l->ntasks; i++) {
        const dq_tl_rec *k = &l->tasks[i];
        for (size_t w = 0; w < l->nwin; w++) {
            const dq_tl_win *x = &l->win[w];
            if (k->t_us < x->b_us || k->t_us > x->e_us)
                continue;
            (*due_in)++;
            if (k->first_us == 0)
                (*undelivered)++;
            else if (k->first_us - x->e_us > *caught)
                *caught = k->first_us - x->e_us;
            break;
        }
    }
}

/* The kills of the consumer holding a task in l: windows naming a task
 * (id) of a fault whose row explains the losses of claimed tasks (a
 * stalled consumer also names its task, but wakes and finishes it).  How
 * many, how many of their tasks came back and the latest return (us
 * after its kill), the first and the last kill's start (0: no kill). */
typedef struct tl_kill {
    size_t n, back;
    int64_t back_max, k0, k1;
} tl_kill;

static tl_kill tl_kills(const dq_timeline *l)
{
    tl_kill k = {0};
    for (size_t w = 0; w < l->nwin; w++) {
        const dq_tl_win *x = &l->win[w];
        const dq_fault_ops *f = dq_fault_find(x->name);
        int64_t first = 0;
        if (x->id[0] == '\0' || f == NULL ||
            !(f->explains & DQ_FAULT_EXPLAINS_CLAIMED))
            continue;
        k.n++;
        k.k0 = k.k0 == 0 || x->b_us < k.k0 ? x->b_us : k.k0;
        k.k1 = x->b_us > k.k1 ? x->b_us : k.k1;
        for (size_t i = 0; i < l->nd; i++)
            if (l->d[i].t_us > x->b_us && strcmp(l->d[i].id, x->id) == 0 &&
                (first == 0 || l->d[i].t_us < first))
                first = l->d[i].t_us;
        if (first > 0 && ++k.back && first - x->b_us > k.back_max)
            k.back_max = first - x->b_us;
    }
    return k;
}

/* Tasks never delivered that fell due before the first kill and were no
 * killed consumer's own: how many, how long before the first kill (the
 * nearest and farthest, ms), the time between the first and the last kill
 * and until the next delivery after the last (ms).  False: none. */
static bool tl_unheard(const dq_timeline *l, size_t *n, double ms[4])
{
    tl_kill kl = tl_kills(l);
    int64_t near = INT64_MAX, far = 0, next = 0;
    *n = 0;
    for (size_t i = 0; kl.k0 > 0 && i < l->ntasks; i++) {
        const dq_tl_rec *k = &l->tasks[i];
        bool held = false;
        for (size_t w = 0; w < l->nwin && !held; w++)
            held = strcmp(l->win[w].id, k->id) == 0;
        if (held || k->first_us != 0 || k->t_us >= kl.k0)
            continue;
        (*n)++;
        near = kl.k0 - k->t_us < near ? kl.k0 - k->t_us : near;
        far = kl.k0 - k->t_us > far ? kl.k0 - k->t_us : far;
    }
    for (size_t i = 0; *n > 0 && i < l->nd && next == 0; i++)
        next = l->d_us[i] > kl.k1 ? l->d_us[i] : 0;
    ms[0] = (double)near / 1e3;
    ms[1] = (double)far / 1e3;
    ms[2] = (double)(kl.k1 - kl.k0) / 1e3;
    ms[3] = next ? (double)(next - kl.k1) / 1e3 : -1;
    return *n > 0;
}

/* What one trial's timeline shows, one list item appended to buf. */
static void tl_describe(dq_texts *t, const dq_timeline *l, const char *label,
                        char *buf, size_t len, size_t *off)
{
    size_t due_in, undelivered;
    int64_t caught, stall;
    bool never, s;
    dq_append(buf, len, off, "- **%s**: ", label);
    if (l->nwin == 0) {
        DQ_TCAT(t, buf, len, off, "loss.tl_no_window", "");
        return;
    }
    stall = tl_stall(l, &never);
    s = stall >= 1000000;
    if (stall > 0)
        DQ_TCATP(t, buf, len, off, never, "loss.tl_gap_end", "loss.tl_gap",
                 "gap=%.*f %s", s ? 2 : 0, (double)stall / (s ? 1e6 : 1e3),
                 s ? "s" : "ms");
    else
        DQ_TCAT(t, buf, len, off, "loss.tl_no_delivery", "");
    tl_due_in(l, &due_in, &undelivered, &caught);
    /* (tasks delivered before their window closed are not news) */
    if (due_in > 0 && (caught >= 0 || undelivered > 0))
        DQ_TCAT(t, buf, len, off, "loss.tl_due_in", "n=%zu s=%s ws=%s",
                due_in, dq_s(due_in), dq_s(l->nwin));
    if (due_in > 0 && caught >= 0)
        DQ_TCAT(t, buf, len, off, "loss.tl_caught", "ms=%.0f",
                (double)caught / 1e3);
    if (due_in > 0 && undelivered > 0)
        DQ_TCAT(t, buf, len, off, "loss.tl_undelivered", "n=%zu",
                undelivered);
    tl_kill k = tl_kills(l);
    if (k.n > 0 && k.back == 0)
        DQ_TCAT(t, buf, len, off, "loss.tl_kills_lost", "s=%s n=%zu",
                dq_s(k.n), k.n);
    else if (k.n > 0)
        DQ_TCAT(t, buf, len, off, "loss.tl_kills_back", "back=%zu n=%zu "
                "secs=%.2f", k.back, k.n, (double)k.back_max / 1e6);
}

/* "kill-consumer:during-work:2" -> "kill-consumer-during-work-2" */
static void tl_slug(const char *spec, char *buf, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; spec[i] && j + 1 < len; i++) {
        char c = spec[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (ok || j == 0 || buf[j - 1] != '-')
            buf[j++] = ok ? c : '-';
    }
    while (j > 0 && buf[j - 1] == '-')
        j--;
    buf[j] = '\0';
}

/* Counts v_us into its bucket of n[0..nb-1], bucket 0 starting at t0_us
 * (earlier: bucket 0; past the last bucket: not counted). */
static void bump(size_t *n, size_t nb, int64_t v_us, int64_t t0_us,
                 int64_t bucket_us)
{
    size_t b = v_us < t0_us ? 0 : (size_t)((v_us - t0_us) / bucket_us);
    if (b < nb)
        n[b]++;
}

/* One panel's block: first deliveries and repeated ones per bucket and
 * the share delivered so far, a row per bucket (t_s its start).  0 or -1
 * out of memory. */
static int tl_block(FILE *f, const dq_timeline *l, int64_t bucket_us)
{
    size_t nb = (size_t)((l->end_us - l->t0_us) / bucket_us) + 1;
    size_t *n = calloc(3 * nb, sizeof *n), *rep, *firsts;
    uint64_t delivered = 0;
    if (n == NULL)
        return -1;
    rep = n + nb;
    firsts = rep + nb;
    for (size_t i = 0; i < l->nd; i++) {
        bump(n, nb, l->d_us[i], l->t0_us, bucket_us);
        const dq_tl_rec *k = dq_tl_task(l, &l->d[i]);
        /* a repeat: a redelivery, or a duplicate */
        if (k && l->d[i].t_us > k->first_us && l->d[i].t_us >= l->t0_us)
            rep[(size_t)((l->d[i].t_us - l->t0_us) / bucket_us) % nb]++;
    }
    for (size_t i = 0; i < l->ntasks; i++)
        if (l->tasks[i].first_us > 0)
            bump(firsts, nb, l->tasks[i].first_us, l->t0_us, bucket_us);
    for (size_t b = 0; b < nb; b++) {
        delivered += firsts[b];
        fprintf(f, "%.3f,%zu,%zu,%.1f\n", (double)b * (double)bucket_us /
                1e6, n[b] - (rep[b] < n[b] ? rep[b] : n[b]), rep[b],
                l->ntasks ? 100.0 * (double)delivered / (double)l->ntasks
                          : 0.0);
    }
    free(n);
    return 0;
}

/* The bucket: the largest of 100, 50, 20, 10 ms that still gives the
 * longest of the column's panels 40 buckets. */
static int64_t tl_bucket(const dq_loss_table *lt, size_t col)
{
    static const int64_t bucket_us[4] = {100000, 50000, 20000, 10000};
    int64_t span_us = 0;
    size_t k = 0;
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_timeline *l = first_tl(lt, r, col);
        if (l != NULL && l->end_us - l->t0_us > span_us)
            span_us = l->end_us - l->t0_us;
    }
    while (k < 3 && span_us / bucket_us[k] < 40)
        k++;
    return bucket_us[k];
}

/* The timeline figure of fault column col: data/<exp>-timeline-<slug>.csv
 * (block 0 "panel,t0_s,t1_s,kill" windows; then one block per strategy
 * "t_s,<label>,redelivered,delivered_pct"), a paragraph, the figure.  0
 * or -1. */
static int tl_figure(dq_md *o, const dq_rexp *e, const dq_section *s,
                     const dq_loss_table *lt, size_t col, char *err,
                     size_t errlen)
{
    char slug[64], *csv, text[8192] = "";
    size_t csvlen, toff = 0, panels = 0;
    int64_t bucket_us = tl_bucket(lt, col);
    const dq_timeline *l;
    FILE *f = dq_mem_open(&csv, &csvlen, err, errlen);
    int rc = 0;
    if (f == NULL)
        return -1;
    fputs("# panel,t0_s,t1_s,kill: the fault windows of each panel's trial "
          "(kill 1: a consumer killed)\n", f);
    for (size_t r = 0; r < lt->nrows; r++) {
        if ((l = first_tl(lt, r, col)) == NULL)
            continue;
        panels++;
        for (size_t w = 0; w < l->nwin; w++)
            fprintf(f, "%zu,%.3f,%.3f,%d\n", panels,
                    (double)(l->win[w].b_us - l->t0_us) / 1e6,
                    (double)(l->win[w].e_us - l->t0_us) / 1e6,
                    l->win[w].id[0] != '\0');
    }
    fprintf(f, "0,0,0,0\n"); /* keeps block 0 non-empty */
    for (size_t r = 0; r < lt->nrows && rc == 0; r++) {
        if ((l = first_tl(lt, r, col)) == NULL)
            continue;
        fprintf(f, "\n\nt_s,%s (trial %zu),redelivered,delivered_pct\n",
                lt->rows[r], lt->cells[r][col].first->trial);
        rc = tl_block(f, l, bucket_us);
        if (toff > 0)
            dq_append(text, sizeof text, &toff, "\n");
        tl_describe(o->texts, l, lt->rows[r], text, sizeof text, &toff);
    }
    fclose(f);
    tl_slug(lt->faults[col], slug, sizeof slug);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");
    } else if (panels > 0) {
        DQ_TEXT(o, "loss.timeline", "fault=%s bucket=%" PRId64 "\n\n",
                lt->faults[col], bucket_us / 1000);
        dq_put(o, "%s\n\n", text);
        return dq_sec_figure(o, e, s, slug, csv, csvlen,
                             DQ_TUSE("loss.cap_timeline", "\n\n"), err,
                             errlen);
    }
    free(csv);
    return rc;
}

/* Over every trial of strategy row r under fault column c of e (their
 * timelines), the tasks lost beyond the killed consumers' own that fell due
 * before the kills (tl_unheard), said once for the cell: for a strategy
 * woken by keyspace events (DQ_G_KEYSPACE_EVENTS) the events queued in the
 * dead subscribers, in every repeat, not only the one drawn. */
static void cell_unheard(dq_md *o, const dq_rexp *e, const dq_loss_table *lt,
                         size_t r, size_t c)
{
    const dq_loss_cell *x = dq_loss_cell_at(lt, r, c);
    const dq_trialrow *most = NULL;
    size_t n = 0, trials = 0, k, kmax = 0;
    double ms[4], near = 1e18, far = 0, at[4] = {0};
    if (x == NULL || x->lost <= x->lost_claimed || x->kills == 0)
        return;
    for (size_t i = 0; e->logs && i < e->ntrials; i++) {
        const dq_trialrow *t = &e->trials[i];
        if (strcmp(t->strategy, x->strategy) != 0 ||
            strcmp(t->fault, lt->faults[c]) != 0 || !e->logs[i].read ||
            !tl_unheard(&e->logs[i].tl, &k, ms))
            continue;
        n += k;
        trials++;
        near = ms[0] < near ? ms[0] : near;
        far = ms[1] > far ? ms[1] : far;
        if (k > kmax) {   /* the trial with the most: its kills' timing */
            kmax = k;
            most = t;
            memcpy(at, ms, sizeof at);
        }
    }
    const dq_strategy *st = dq_strategy_find(x->strategy);
    if (n > 0)
        DQ_TEXTP(o, st != NULL && (st->flags & DQ_G_KEYSPACE_EVENTS),
                 "loss.why_unheard", "loss.why_lost_before", "row=%s n=%zu "
                 "trials=%zu near=%.0f far=%.0f nmax=%zu kills=%d "
                 "consumers=%d gap=%.0f back=%.0f\n\n", lt->rows[r], n,
                 trials, near, far, kmax, most->kills, most->consumers,
                 at[2], at[3]);
}

int dq_sec_loss(dq_md *o, const dq_results *r, const dq_rexp *e,
                const dq_section *s, char *err, size_t errlen)
{
    const dq_loss_table *lt = e->loss;
    char id[128];
    (void)r;
    if (lt == NULL || lt->nrows == 0)
        return 1;           /* no trial: the generic section */
    DQ_TEXT(o, "loss.intro", "\n\n");
    snprintf(id, sizeof id, "tab-%s", e->name);
    dq_anchor(o, id);
    loss_table(o, lt);
    dq_loss_side(o, e);
    DQ_TEXT(o, "loss.each_fault", "\n\n");
    for (size_t c = 0; c < lt->nfaults; c++) {
        fault_paragraph(o, lt, c);
        for (size_t row = 0; row < lt->nrows; row++)
            cell_unheard(o, e, lt, row, c);
        if (strcmp(lt->faults[c], "none") != 0 &&
            tl_figure(o, e, s, lt, c, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* ---- Outcomes: recipes against defaults (plots = outcomes) --------------- */

/* Early deliveries of g (k 0, of its deliveries: a duplicate can be early
 * too) or its lost tasks (k 1, of the enqueued ones): the count, its
 * denominator in *of and its 95% Wilson bounds (proportions). */
static uint64_t outcome(const dq_rgroup *g, int k, uint64_t *of, double *lo,
                        double *hi)
{
    uint64_t x = k ? g->lost_sum : g->early_sum;
    *of = k ? g->enqueued_sum : g->deliveries_sum;
    dq_wilson(x, *of, DQ_Z95, lo, hi);
    return x;
}

static void outcome_table(dq_md *o, const dq_rexp *e)
{
    dq_head(o, "variant|trials|tasks|deliveries|early deliveries|lost "
               "tasks|duplicates|lateness p50 ms (median)|lateness p99 ms "
               "(median)");
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        char l[128], c[2][96], lo[16], hi[16];
        dq_series_label(e, g, l, sizeof l);
        for (int k = 0; k < 2; k++) {
            double a, b;
            uint64_t of, x = outcome(g, k, &of, &a, &b);
            dq_fmt_pct(lo, sizeof lo, a);
            dq_fmt_pct(hi, sizeof hi, b);
            snprintf(c[k], sizeof c[k], "%" PRIu64 " (%s-%s%%)", x, lo, hi);
        }
        dq_row(o, "%s" DQ_CELL "%zu" DQ_CELL "%" PRIu64 DQ_CELL "%" PRIu64
               DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%" PRIu64 DQ_CELL "%.1f"
               DQ_CELL "%.1f", l, g->n, g->enqueued_sum, g->deliveries_sum,
               c[0], c[1], g->dup_sum, g->p50_median, g->p99_median);
    }
    dq_table_end(o);
    DQ_TEXT(o, "loss.outcomes_note", "\n\n");
}

/* The figure: per variant the early share of the deliveries and the lost
 * share of the enqueued tasks (%), with their 95% Wilson bounds. */
int dq_sec_outcomes(dq_md *o, const dq_results *r, const dq_rexp *e,
                    const dq_section *s, char *err, size_t errlen)
{
    char *buf, l[128];
    size_t len;
    (void)r;
    if (e->ngroups == 0)
        return 1;
    FILE *f = dq_mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    fputs("variant,early_pct,early_lo,early_hi,lost_pct,lost_lo,lost_hi\n",
          f);
    for (size_t i = 0; i < e->ngroups; i++) {
        dq_series_label(e, &e->groups[i], l, sizeof l);
        fprintf(f, "\"%s\"", l);
        for (int k = 0; k < 2; k++) {
            uint64_t of, x;
            double lo, hi;
            x = outcome(&e->groups[i], k, &of, &lo, &hi);
            fprintf(f, ",%.3f,%.3f,%.3f", of ? 100.0 * (double)x /
                    (double)of : 0.0, 100 * lo, 100 * hi);
        }
        fputc('\n', f);
    }
    fclose(f);
    if (dq_sec_figure(o, e, s, NULL, buf, len,
                      DQ_TUSE("loss.outcomes_caption", "\n\n"), err,
                      errlen) != 0)
        return -1;
    outcome_table(o, e);
    return 0;
}
