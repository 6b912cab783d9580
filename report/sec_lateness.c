/* sec_lateness.c -- the sections drawn from per-task lateness: the
 * lateness CDF (plots = lateness-cdf) and lateness behind a backlog (plots
 * = backlog-lateness), both from each cell's lateness pooled over its
 * repeats (dq_rpool: the event logs, results_logs.c).
 *
 *   lateness-cdf      one chart with every strategy's lateness CDF (x:
 *                     lateness ms, log scale; y: fraction of the enqueued
 *                     tasks delivered by then), and p50/p99/p99.9/max.
 *   backlog-lateness  lateness of a stream of tasks against the number of
 *                     pending tasks (the backlog) per strategy.  Tasks not
 *                     delivered within the observation window are
 *                     censored: a percentile is known only when its rank
 *                     (over every enqueued task) falls among the delivered
 *                     ones (dq_rpool_pct), otherwise it is shown as
 *                     "> window".
 * A trial whose log carries no verdict (incomplete) is left out of both,
 * with one sentence saying how many.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../strategies/dq.h"
#include "sections.h"
#include "stats.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define MAX_SERIES 64
#define CDF_POINTS 600       /* points per CDF line in the data file */
#define CDF_FLOOR_MS 0.01    /* log x: lateness below this is drawn here */

typedef struct series {
    char label[128];
    const dq_rgroup *g;
    const dq_rpool *p;
} series;

/* The series of e's first MAX_SERIES groups into ls; returns how many. */
static size_t all_series(const dq_rexp *e, series *ls)
{
    size_t n = e->ngroups < MAX_SERIES ? e->ngroups : MAX_SERIES;
    for (size_t i = 0; i < n; i++) {
        dq_series_label(e, &e->groups[i], ls[i].label, sizeof ls[i].label);
        ls[i].g = &e->groups[i];
        ls[i].p = &e->pools[i];
    }
    return n;
}

/* Percentile cell: the value, or "> W s" when censored. */
static void pct_cell(dq_texts *t, char *buf, size_t len, const dq_rpool *p,
                     double q, double window_ms)
{
    double v;
    if (dq_rpool_pct(p, q, &v))
        dq_fmt_ms(buf, len, v);
    else if (p->n == 0 && p->enqueued == 0)
        snprintf(buf, len, "n/a");
    else if (window_ms <= 0)
        DQ_TSET(t, buf, len, "lateness.undelivered", "");
    else
        snprintf(buf, len, "> %.0f", window_ms);  /* a cell in ms */
}

/* One sentence naming the trials the pools left out (their log carries no
 * verdict, dq_check_no_verdict), if any. */
static void no_verdict_note(dq_md *o, const series *ls, size_t ns)
{
    size_t k = 0;
    for (size_t i = 0; i < ns; i++)
        k += ls[i].p->no_verdict;
    if (k > 0)
        DQ_TEXT(o, "lateness.no_verdict", "  n=%zu s=%s", k, dq_s(k));
}

/* ---- lateness-cdf ------------------------------------------------------- */

/* The CDF data: one block per series (two blank lines apart), each with
 * its label in the header and a third column saying how it waits (1
 * polling, 2 blocking in Redis, 3 in-process), as lateness_cdf.gp
 * expects; drawn when one series has a delivery.  0 or -1 with err. */
static int cdf_figure(dq_md *o, const dq_rexp *e, const dq_section *s,
                      const series *ls, size_t ns, char *err, size_t errlen)
{
    char *buf;
    size_t len, drawn = 0;
    FILE *f = dq_mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    for (size_t i = 0; i < ns; i++) {
        const dq_rpool *p = ls[i].p;
        if (p->n == 0)
            continue;
        uint64_t total = p->enqueued ? p->enqueued : p->n;
        int kind = dq_group_waits(ls[i].g);
        fprintf(f, "%slateness_ms,%s,waits\n", drawn++ ? "\n\n" : "",
                ls[i].label);
        size_t step = p->n > CDF_POINTS ? p->n / CDF_POINTS : 1;
        for (size_t k = 0; k < p->n; k += step)
            fprintf(f, "%.4f,%.5f,%d\n", fmax(p->lat[k], CDF_FLOOR_MS),
                    (double)(k + 1) / (double)total, kind);
        fprintf(f, "%.4f,%.5f,%d\n", fmax(p->lat[p->n - 1], CDF_FLOOR_MS),
                (double)p->n / (double)total, kind);
    }
    fclose(f);
    if (drawn)
        return dq_sec_figure(o, e, s, NULL, buf, len,
                             DQ_TUSE("lateness.cap_cdf", "\n\n"), err,
                             errlen);
    free(buf);
    return 0;
}

static void cdf_table(dq_md *o, const dq_rexp *e, const series *ls,
                      size_t ns)
{
    static const double qs[3] = {50, 99, 99.9};
    dq_head(o, "strategy|consumers|trials|tasks|delivered|early|duplicates|"
            "p50 ms|p99 ms|p99.9 ms|max ms|waits by");
    for (size_t i = 0; i < ns; i++) {
        const dq_rpool *p = ls[i].p;
        char c[4][64], waits[64] = "";
        long pm = dq_group_poll_ms(ls[i].g);
        for (int k = 0; k < 3; k++)
            pct_cell(o->texts, c[k], 64, p, qs[k], 0);
        if (p->n)
            dq_fmt_ms(c[3], 64, p->lat[p->n - 1]);
        else
            snprintf(c[3], 64, "n/a");
        if (pm > 0)
            DQ_TBUF(o, waits, "idle.polling", "ms=%ld", pm);
        else if (ls[i].g->st && (ls[i].g->st->flags & DQ_G_BLOCKS))
            DQ_TBUF(o, waits, "idle.blocking", "");
        else
            snprintf(waits, sizeof waits, "?");
        dq_row(o, "%s" DQ_CELL "%d" DQ_CELL "%zu" DQ_CELL "%"
                   PRIu64 DQ_CELL "%" PRIu64 DQ_CELL "%" PRIu64 DQ_CELL "%"
                   PRIu64 DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%s"
                   DQ_CELL "%s", ls[i].label, ls[i].g->consumers, p->trials,
                   p->enqueued, p->delivered, p->early, p->duplicates, c[0],
                   c[1], c[2], c[3], waits);
    }
    dq_table_end(o);
    DQ_TEXT(o, "lateness.pct_note", "");
    no_verdict_note(o, ls, ns);
    /* The arrival rate the run's parameters imply. */
    long tasks = strtol(dq_rexp_meta(e, "tasks"), NULL, 10), dmin, dmax;
    if (sscanf(dq_rexp_meta(e, "delay_ms"), "%ld:%ld", &dmin, &dmax) == 2 &&
        tasks > 0 && dmax > dmin)
        DQ_TEXT(o, "lateness.rate", "  tasks=%ld range=%.1f per_s=%.0f",
                tasks, (double)(dmax - dmin) / 1000.0,
                (double)tasks * 1000.0 / (double)(dmax - dmin));
    dq_put(o, "\n\n");
}

/* The series with a delivery from the lowest p99 lateness to the highest
 * (censored last; a stable insertion sort). */
static void said_order(dq_md *o, const series *ls, size_t ns)
{
    size_t order[MAX_SERIES], no = 0, off = 0;
    double p99[MAX_SERIES], v;
    char list[4096];
    for (size_t i = 0; i < ns; i++) {
        if (ls[i].p->n == 0)
            continue;
        if (!dq_rpool_pct(ls[i].p, 99, &v))
            v = INFINITY;
        size_t j = no++;
        for (; j > 0 && p99[j - 1] > v; j--) {
            order[j] = order[j - 1];
            p99[j] = p99[j - 1];
        }
        order[j] = i;
        p99[j] = v;
    }
    if (no == 0)
        return;
    for (size_t k = 0; k < no; k++) {
        char ms[32] = "";
        if (isinf(p99[k]))
            DQ_TBUF(o, ms, "lateness.undelivered", "");
        else
            dq_fmt_ms(ms, sizeof ms, p99[k]);
        dq_append(list, sizeof list, &off, "%s %s %s ms", k ? "," : "",
                  ls[order[k]].label, ms);
    }
    DQ_TEXT(o, "lateness.order", "list=%s ", list);
}

/* Polling variants against their interval.  The comparison is strict and
 * made on the values as printed (0.1 ms): "within" means at most the
 * interval, and an excess is printed in ms, so the words follow from the
 * numbers beside them (no hidden slack). */
static void said_polling(dq_md *o, const series *ls, size_t ns)
{
    for (size_t i = 0; i < ns; i++) {
        const dq_rpool *p = ls[i].p;
        long pm = dq_group_poll_ms(ls[i].g);
        double p50, p99, d = (double)pm;
        char verdict[256] = "";
        if (pm <= 0 || p->n == 0 || !dq_rpool_pct(p, 50, &p50) ||
            !dq_rpool_pct(p, 99, &p99))
            continue;
        double r99 = round(p99 * 10) / 10;
        double rmx = round(p->lat[p->n - 1] * 10) / 10;
        if (rmx <= d)
            DQ_TBUF(o, verdict, "lateness.within", "");
        else if (r99 <= d)
            DQ_TBUF(o, verdict, "lateness.p99_within", "max=%.1f", rmx - d);
        else
            DQ_TBUF(o, verdict, "lateness.p99_beyond", "p99=%.1f max=%.1f",
                    r99 - d, rmx - d);
        DQ_TEXT(o, "lateness.polling", "name=%s ms=%ld p50=%.1f p99=%.1f "
                "max=%.1f verdict=%s ", ls[i].label, pm, p50, r99, rmx,
                verdict);
    }
}

/* ---- Why: the mechanisms behind two figures of the lateness run -------- */

/* The why of series s, from its trials' timelines.  Duplicates at a low
 * arrival rate, said of a strategy that declares them (DQ_G_DUPLICATES)
 * and had some: the consumers wake in step.  For each duplicated task,
 * the time between its first two deliveries (the race window the two
 * polls fell into); with polls at independent moments a second consumer
 * would land in a window of that width about 2 w / poll of the time.  A
 * polling strategy's tail, one item appended to tail: of its tasks more
 * than a tenth of the poll interval late, the share enqueued less than
 * one poll interval before they fell due, against that share among all
 * its tasks. */
static void said_why(dq_md *o, const dq_rexp *e, const series *s,
                     char *tail, size_t len, size_t *off)
{
    long pm = dq_group_poll_ms(s->g);
    bool lockstep = s->g->st && (s->g->st->flags & DQ_G_DUPLICATES) &&
                    s->g->dup_sum > 0;
    double *gap = NULL;
    size_t ng = 0, cap = 0;
    uint64_t delivered = 0, dups = 0, late = 0, late_fresh = 0, all = 0;
    uint64_t fresh = 0;
    for (size_t i = 0; e->logs && i < e->ntrials; i++) {
        const dq_timeline *l = &e->logs[i].tl;
        if (!dq_trial_in_group(&e->trials[i], s->g) || !e->logs[i].read)
            continue;
        delivered += e->trials[i].delivered;
        dups += e->trials[i].duplicates;
        for (size_t k = 0; lockstep && k < l->nd; k++) {
            const dq_tl_rec *t = dq_tl_task(l, &l->d[k]);
            if (t == NULL || l->d[k].t_us <= t->first_us)
                continue;   /* a first delivery */
            if (ng == cap) {
                double *more = realloc(gap, (cap ? 2 * cap : 256)
                                            * sizeof *gap);
                if (more == NULL) {
                    lockstep = false;   /* out of memory: not said */
                    break;
                }
                gap = more;
                cap = cap ? 2 * cap : 256;
            }
            gap[ng++] = (double)(l->d[k].t_us - t->first_us) / 1000.0;
        }
        for (size_t k = 0; pm > 0 && k < l->ntasks; k++) {
            const dq_tl_rec *t = &l->tasks[k];
            bool f = t->t_us - t->enq_us < (int64_t)pm * 1000;
            if (t->first_us == 0)
                continue;
            all++;
            fresh += f;
            if (t->first_us - t->t_us > (int64_t)pm * 100) {
                late++;
                late_fresh += f;
            }
        }
    }
    if (lockstep && ng > 0 && pm > 0 && delivered > 0) {
        qsort(gap, ng, sizeof *gap, dq_cmp_double);
        double w = gap[ng / 2], indep = fmin(1.0, 2.0 * w / (double)pm);
        DQ_TEXT(o, "lateness.lockstep", "  name=%s n=%" PRIu64 " of=%" PRIu64
                " pct=%.1f ms=%.2f poll=%ld indep=%.1f", s->label, dups,
                delivered, 100.0 * (double)dups / (double)delivered, w, pm,
                100.0 * indep);
    }
    free(gap);
    if (late > 0)
        DQ_TCAT(o->texts, tail, len, off, "lateness.tail_item", "%sname=%s "
                "late=%" PRIu64 " ms=%.0f fresh=%.0f all=%.0f", *off ? "; "
                : "", s->label, late, (double)pm / 10.0, 100.0 *
                (double)late_fresh / (double)late, all ? 100.0 *
                (double)fresh / (double)all : 0);
}

int dq_sec_lateness_cdf(dq_md *o, const dq_results *r, const dq_rexp *e,
                        const dq_section *s, char *err, size_t errlen)
{
    series ls[MAX_SERIES];
    size_t ns = all_series(e, ls), off = 0;
    uint64_t lost = 0, early = 0;
    char tail[4096] = "";
    (void)r;
    if (cdf_figure(o, e, s, ls, ns, err, errlen) != 0)
        return -1;
    cdf_table(o, e, ls, ns);
    DQ_TEXT(o, "generic.what_happened", " ");
    said_order(o, ls, ns);
    said_polling(o, ls, ns);
    for (size_t i = 0; i < ns; i++) {
        lost += ls[i].p->lost;
        early += ls[i].p->early;
    }
    if (lost == 0 && early == 0)
        DQ_TEXT(o, "lateness.all_on_time", "");
    else
        DQ_TEXT(o, "lateness.not_all", "lost=%" PRIu64 " s=%s early=%"
                PRIu64, lost, dq_s(lost), early);
    dq_put(o, "\n\n");
    DQ_TEXT(o, "lateness.why", "");
    for (size_t i = 0; i < ns; i++)
        said_why(o, e, &ls[i], tail, sizeof tail, &off);
    if (off > 0)
        DQ_TEXT(o, "lateness.tail", "  list=%s", tail);
    dq_put(o, "\n\n");
    return 0;
}

/* ---- backlog-lateness --------------------------------------------------- */

/* The backlog run: its series, also in the order of the table (by
 * strategy, first seen, then backlog), its strategies, its backlogs
 * (ascending) and the observation window. */
typedef struct backlog {
    series ls[MAX_SERIES];
    const series *ord[MAX_SERIES];
    size_t ns, nord, nn, nx;
    char names[16][32];
    int64_t xs[32];
    double window_ms;
} backlog;

/* A cell of the wide data: strategy s's p50, p99, max (ms, empty when
 * censored), the % delivered in the window, and the window (ms) where the
 * p50 is censored -- the figure marks those points "beyond the window"
 * instead of dropping them.  Of the last series of s at backlog x. */
static void backlog_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const backlog *b = ctx;
    const dq_rpool *p = NULL;
    double v;
    for (size_t i = 0; i < b->ns; i++)
        if (b->ls[i].g->backlog == x &&
            strcmp(b->ls[i].g->strategy, b->names[s]) == 0)
            p = b->ls[i].p;
    if (p && dq_rpool_pct(p, 50, &v))
        fprintf(f, "%.3f", fmax(v, CDF_FLOOR_MS));
    fputc(',', f);
    if (p && dq_rpool_pct(p, 99, &v))
        fprintf(f, "%.3f", fmax(v, CDF_FLOOR_MS));
    fputc(',', f);
    if (p && p->n && p->lost == 0)
        fprintf(f, "%.3f", p->lat[p->n - 1]);
    fputc(',', f);
    if (p && p->enqueued)
        fprintf(f, "%.2f", 100.0 * (double)p->delivered /
                               (double)p->enqueued);
    fputc(',', f);
    if (p && p->enqueued && !dq_rpool_pct(p, 50, &v))
        fprintf(f, "%.0f", b->window_ms > 0 ? b->window_ms : 1000);
}

static int backlog_figure(dq_md *o, const dq_rexp *e, const dq_section *s,
                          const backlog *b, char *err, size_t errlen)
{
    static const char *const sufs[5] = {" p50", " p99", " max",
        " delivered %", " p50 beyond the window"};
    char *buf;
    size_t len;
    if (b->nx == 0)
        return 0;
    if (dq_wide_csv(&buf, &len, "pending", b->names[0], sizeof b->names[0],
                    b->nn, sufs, 5, b->xs, b->nx, backlog_cell, (void *)b,
                    err, errlen) != 0)
        return -1;
    int rc = dq_sec_figure(o, e, s, NULL, buf, len, NULL, err, errlen);
    if (rc == 0)
        DQ_TEXT(o, "lateness.cap_backlog", "window=%.0f\n\n", b->window_ms);
    return rc;
}

static void backlog_table(dq_md *o, const dq_rexp *e, const backlog *b)
{
    dq_head(o, "strategy|pending tasks|measured tasks|delivered in "
               "window|p50 ms|p99 ms|max ms|backlog enqueue s");
    for (size_t k = 0; k < b->nord; k++) {
        const series *l = b->ord[k];
        const dq_rpool *p = l->p;
        char c[3][64];
        double bs = 0;
        for (size_t j = 0; j < e->ntrials; j++)
            if (dq_trial_in_group(&e->trials[j], l->g))
                bs = e->trials[j].backlog_enqueue_s;
        pct_cell(o->texts, c[0], 64, p, 50, b->window_ms);
        pct_cell(o->texts, c[1], 64, p, 99, b->window_ms);
        if (p->n && p->lost == 0)
            dq_fmt_ms(c[2], 64, p->lat[p->n - 1]);
        else
            snprintf(c[2], 64, "> %.0f s", b->window_ms / 1000.0);
        dq_row(o, "%s" DQ_CELL "%" PRId64 DQ_CELL "%" PRIu64 DQ_CELL "%"
                   PRIu64 " (%.1f%%)" DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%s"
                   DQ_CELL "%.1f", l->label, l->g->backlog, p->enqueued,
                   p->delivered, p->enqueued ? 100.0 * (double)p->delivered
                   / (double)p->enqueued : 0, c[0], c[1], c[2], bs);
    }
    dq_table_end(o);
    DQ_TEXT(o, "lateness.censored", "window=%.0f", b->window_ms);
    no_verdict_note(o, b->ls, b->ns);
    dq_put(o, "\n\n");
}

/* What happened, per strategy and backlog; then the survivor bias note
 * where the median task was not delivered in the window. */
static void backlog_said(dq_md *o, const backlog *b)
{
    double v, w_s = b->window_ms / 1000.0;
    bool censored = false;
    DQ_TEXT(o, "generic.what_happened", " ");
    for (size_t s = 0; s < b->nn; s++) {
        size_t n = 0;
        dq_put(o, "%s:", b->names[s]);
        for (size_t k = 0; k < b->nord; k++) {
            const dq_rpool *p = b->ord[k]->p;
            int64_t x = b->ord[k]->g->backlog;
            double frac = p->enqueued ? (double)p->delivered /
                                            (double)p->enqueued : 0;
            if (strcmp(b->ord[k]->g->strategy, b->names[s]) != 0)
                continue;
            if (dq_rpool_pct(p, 50, &v))
                DQ_TEXT(o, "lateness.at_backlog", "%s n=%" PRId64
                        " p50=%.1f pct=%.0f", n++ ? ";" : "", x, v,
                        100 * frac);
            else
                DQ_TEXT(o, "lateness.at_backlog_few", "%s n=%" PRId64
                        " pct=%.1f window=%.0f", n++ ? ";" : "", x,
                        100 * frac, b->window_ms);
            /* If the expire cursor finds due keys at an even pace,
             * fraction f within W means one pass takes about W / f: an
             * extrapolation, and said to be one. */
            if (!dq_rpool_pct(p, 50, &v) && frac > 0)
                DQ_TEXT(o, "lateness.extrapolated", " s=%.0f", w_s / frac);
        }
        dq_put(o, ". ");
    }
    for (size_t i = 0; i < b->ns; i++)
        censored |= b->ls[i].p->n > 0 && !dq_rpool_pct(b->ls[i].p, 50, &v);
    if (censored)
        DQ_TEXT(o, "lateness.survivors", "");
    dq_put(o, "\n\n");
}

int dq_sec_backlog(dq_md *o, const dq_results *r, const dq_rexp *e,
                   const dq_section *s, char *err, size_t errlen)
{
    backlog b = {.window_ms = strtod(dq_rexp_meta(e, "grace_ms"), NULL)};
    (void)r;
    b.ns = all_series(e, b.ls);
    b.nn = dq_strategies_of(e, b.names, 16);
    for (size_t i = 0; i < b.ns; i++)
        b.nx = dq_add_distinct_i64(b.xs, b.nx, 32, b.ls[i].g->backlog);
    dq_sort_i64(b.xs, b.nx);
    for (size_t n = 0; n < b.nn; n++)
        for (size_t x = 0; x < b.nx; x++)
            for (size_t i = 0; i < b.ns; i++)
                if (b.ls[i].g->backlog == b.xs[x] &&
                    strcmp(b.ls[i].g->strategy, b.names[n]) == 0)
                    b.ord[b.nord++] = &b.ls[i];
    if (backlog_figure(o, e, s, &b, err, errlen) != 0)
        return -1;
    backlog_table(o, e, &b);
    backlog_said(o, &b);
    return 0;
}
