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
 *                     ones, otherwise it is shown as "> window".
 * A trial whose log carries no verdict (incomplete) is left out of both,
 * with one sentence saying how many.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../strategies/dq.h"
#include "sections.h"

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

/* Percentile q (0..100) over every enqueued task, a task not delivered
 * counting as later than any delivered one (nearest rank).  False when
 * the rank falls among the undelivered (censored). */
static bool cens_pct(const dq_rpool *p, double q, double *out)
{
    uint64_t total = p->enqueued ? p->enqueued : p->n;
    if (total == 0 || p->n == 0)
        return false;
    size_t rank = dq_percentile_rank(q, (size_t)total);
    if (rank > p->n)
        return false;
    *out = p->lat[rank - 1];
    return true;
}

/* Percentile cell: the value, or "> W s" when censored. */
static void pct_cell(dq_texts *t, char *buf, size_t len, const dq_rpool *p,
                     double q, double window_ms)
{
    double v;
    if (cens_pct(p, q, &v))
        dq_fmt_ms(buf, len, v);
    else if (p->n == 0 && p->enqueued == 0)
        snprintf(buf, len, "n/a");
    else if (window_ms <= 0)
        DQ_TCAT(t, buf, len, &(size_t){0}, "lateness.undelivered", "");
    else
        snprintf(buf, len, "> %.0f s", window_ms / 1000.0);
}

/* One sentence naming the trials the pools left out (their log carries no
 * verdict, dq_check_no_verdict), if any. */
static void no_verdict_note(dq_md *o, const series *ls, size_t ns)
{
    size_t k = 0;
    for (size_t i = 0; i < ns; i++)
        k += ls[i].p->no_verdict;
    if (k > 0)
        DQ_TEXT(o, "lateness.no_verdict", "  n=%zu s=%s", k,
                k == 1 ? "" : "s");
}

/* ---- lateness-cdf ------------------------------------------------------- */

/* How g's consumers wait, for the CDF's dash pattern: 1 polling, 2
 * blocking in Redis, 3 in-process (no Redis). */
static int wait_kind(const dq_rgroup *g)
{
    const dq_strategy *st = dq_strategy_find(g->strategy);
    if (dq_group_poll_ms(g) > 0)
        return 1;
    return st && !(st->flags & DQ_G_NEEDS_REDIS) ? 3 : 2;
}

/* The CDF data: one block per series (two blank lines apart), each with
 * its label in the header and a third column saying how it waits, as
 * lateness_cdf.gp expects; drawn when one series has a delivery.  0 or -1
 * with err. */
static int cdf_figure(dq_md *o, const dq_rexp *e, const series *ls,
                      size_t ns, char *err, size_t errlen)
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
        int kind = wait_kind(ls[i].g);
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
    int rc = drawn ? dq_sec_figure(o, e, "lateness-cdf", NULL, buf, len,
                                   err, errlen) : 0;
    free(buf);
    if (rc == 0 && drawn)
        DQ_TEXT(o, "lateness.cap_cdf", "\n\n");
    return rc;
}

static void cdf_table(dq_md *o, const dq_rexp *e, const series *ls,
                      size_t ns)
{
    dq_head(o, "strategy|consumers|trials|tasks|delivered|early|duplicates|"
            "p50 ms|p99 ms|p99.9 ms|max ms|waits by");
    for (size_t i = 0; i < ns; i++) {
        const dq_rpool *p = ls[i].p;
        const dq_strategy *st = dq_strategy_find(ls[i].g->strategy);
        char c[4][64], waits[64];
        long pm = dq_group_poll_ms(ls[i].g);
        pct_cell(o->texts, c[0], 64, p, 50, 0);
        pct_cell(o->texts, c[1], 64, p, 99, 0);
        pct_cell(o->texts, c[2], 64, p, 99.9, 0);
        if (p->n)
            dq_fmt_ms(c[3], 64, p->lat[p->n - 1]);
        else
            snprintf(c[3], 64, "n/a");
        if (pm > 0)
            DQ_TCAT(o->texts, waits, sizeof waits, &(size_t){0},
                    "idle.polling", "ms=%ld", pm);
        else if (st && (st->flags & DQ_G_BLOCKS))
            DQ_TCAT(o->texts, waits, sizeof waits, &(size_t){0},
                    "idle.blocking", "");
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

/* p99 for ordering; censored sorts last. */
static double p99_or_inf(const series *s)
{
    double v;
    return cens_pct(s->p, 99, &v) ? v : INFINITY;
}

/* The series from the lowest p99 lateness to the highest. */
static void said_order(dq_md *o, const series *ls, size_t ns)
{
    size_t order[MAX_SERIES], no = 0, off = 0;
    char list[4096];
    for (size_t i = 0; i < ns; i++)
        if (ls[i].p->n > 0)
            order[no++] = i;
    for (size_t i = 1; i < no; i++)
        for (size_t j = i; j > 0 && p99_or_inf(&ls[order[j - 1]]) >
                                        p99_or_inf(&ls[order[j]]); j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    if (no == 0)
        return;
    for (size_t k = 0; k < no; k++) {
        double v;
        char ms[32] = "";
        if (cens_pct(ls[order[k]].p, 99, &v))
            dq_fmt_ms(ms, sizeof ms, v);
        else
            DQ_TCAT(o->texts, ms, sizeof ms, &(size_t){0},
                    "lateness.undelivered", "");
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
        double p50, p99, d;
        char verdict[256];
        if (pm <= 0 || p->n == 0 || !cens_pct(p, 50, &p50) ||
            !cens_pct(p, 99, &p99))
            continue;
        double r99 = round(p99 * 10) / 10;
        double rmx = round(p->lat[p->n - 1] * 10) / 10;
        d = (double)pm;
        if (rmx <= d)
            DQ_TCAT(o->texts, verdict, sizeof verdict, &(size_t){0},
                    "lateness.within", "");
        else if (r99 <= d)
            DQ_TCAT(o->texts, verdict, sizeof verdict, &(size_t){0},
                    "lateness.p99_within", "max=%.1f", rmx - d);
        else
            DQ_TCAT(o->texts, verdict, sizeof verdict, &(size_t){0},
                    "lateness.p99_beyond", "p99=%.1f max=%.1f", r99 - d,
                    rmx - d);
        DQ_TEXT(o, "lateness.polling", "name=%s ms=%ld p50=%.1f p99=%.1f "
                "max=%.1f verdict=%s ", ls[i].label, pm, p50, r99, rmx,
                verdict);
    }
}

/* ---- Why: the mechanisms behind two figures of the lateness run -------- */

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The timeline task of delivery d in l (tasks are sorted by id). */
static const dq_tl_rec *tl_task(const dq_timeline *l, const dq_tl_rec *d)
{
    return l->ntasks ? bsearch(d, l->tasks, l->ntasks, sizeof *l->tasks,
                               (int (*)(const void *, const void *))strcmp)
                     : NULL;
}

/* naive's duplicates at a low arrival rate: the two consumers wake in
 * step.  For each duplicated task, the time between its first two
 * deliveries (the race window the two polls fell into); with polls at
 * independent moments a second consumer would land in a window of that
 * width about 2 w / poll of the time.  Said for each naive group whose
 * trials have timelines and duplicates. */
static void said_lockstep(dq_md *o, const dq_rexp *e, const series *s)
{
    double *gap = NULL;
    size_t ng = 0, cap = 0;
    uint64_t delivered = 0, dups = 0;
    long pm = dq_group_poll_ms(s->g);
    for (size_t i = 0; e->logs && i < e->ntrials; i++) {
        const dq_timeline *l = &e->logs[i].tl;
        if (!dq_trial_in_group(&e->trials[i], s->g) || !e->logs[i].read)
            continue;
        delivered += e->trials[i].delivered;
        dups += e->trials[i].duplicates;
        for (size_t k = 0; k < l->nd; k++) {
            const dq_tl_rec *t = tl_task(l, &l->d[k]);
            if (t == NULL || l->d[k].t_us <= t->first_us)
                continue;   /* a first delivery */
            if (ng == cap && (gap = realloc(gap, (cap = cap ? 2 * cap : 256)
                                            * sizeof *gap)) == NULL)
                return;
            gap[ng++] = (double)(l->d[k].t_us - t->first_us) / 1000.0;
        }
    }
    if (ng > 0 && pm > 0 && delivered > 0) {
        qsort(gap, ng, sizeof *gap, cmp_dbl);
        double w = gap[ng / 2], indep = fmin(1.0, 2.0 * w / (double)pm);
        DQ_TEXT(o, "lateness.lockstep", "  name=%s n=%" PRIu64 " of=%" PRIu64
                " pct=%.1f ms=%.2f poll=%ld indep=%.1f", s->label, dups,
                delivered, 100.0 * (double)dups / (double)delivered, w, pm,
                100.0 * indep);
    }
    free(gap);
}

/* A polling strategy's tail: of its tasks more than a tenth of the poll
 * interval late, the share enqueued less than one poll interval before
 * they fell due, against that share among all its tasks. */
static void said_tail(dq_md *o, const dq_rexp *e, const series *s,
                      char *buf, size_t len, size_t *off)
{
    long pm = dq_group_poll_ms(s->g);
    uint64_t late = 0, late_fresh = 0, all = 0, fresh = 0;
    for (size_t i = 0; pm > 0 && e->logs && i < e->ntrials; i++) {
        const dq_timeline *l = &e->logs[i].tl;
        if (!dq_trial_in_group(&e->trials[i], s->g) || !e->logs[i].read)
            continue;
        for (size_t k = 0; k < l->ntasks; k++) {
            const dq_tl_rec *t = &l->tasks[k];
            bool f = t->t_us - t->enq_us < (int64_t)pm * 1000;
            if (t->first_us == 0)
                continue;
            all++;
            fresh += f;
            if (t->first_us - t->t_us > (int64_t)pm * 100)
                late++, late_fresh += f;
        }
    }
    if (late > 0)
        DQ_TCAT(o->texts, buf, len, off, "lateness.tail_item", "%sname=%s "
                "late=%" PRIu64 " ms=%.0f fresh=%.0f all=%.0f", *off ? "; "
                : "", s->label, late, (double)pm / 10.0, 100.0 *
                (double)late_fresh / (double)late, all ? 100.0 *
                (double)fresh / (double)all : 0);
}

/* The why paragraph of the lateness run. */
static void said_why(dq_md *o, const dq_rexp *e, const series *ls,
                     size_t ns)
{
    char tail[4096] = "";
    size_t off = 0;
    for (size_t i = 0; i < ns; i++)
        if (strcmp(ls[i].g->strategy, "naive") == 0 && ls[i].g->dup_sum > 0)
            said_lockstep(o, e, &ls[i]);
    for (size_t i = 0; i < ns; i++)
        said_tail(o, e, &ls[i], tail, sizeof tail, &off);
    if (off > 0)
        DQ_TEXT(o, "lateness.tail", "  list=%s", tail);
}

int dq_sec_lateness_cdf(dq_md *o, const dq_results *r, const dq_rexp *e,
                        char *err, size_t errlen)
{
    series ls[MAX_SERIES];
    size_t ns = all_series(e, ls);
    uint64_t lost = 0, early = 0;
    (void)r;
    if (cdf_figure(o, e, ls, ns, err, errlen) != 0)
        return -1;
    cdf_table(o, e, ls, ns);
    DQ_TEXT(o, "generic.what_happened", " ");
    said_order(o, ls, ns);
    said_polling(o, ls, ns);
    for (size_t i = 0; i < ns; i++)
        lost += ls[i].p->lost, early += ls[i].p->early;
    if (lost == 0 && early == 0)
        DQ_TEXT(o, "lateness.all_on_time", "");
    else
        DQ_TEXT(o, "lateness.not_all", "lost=%" PRIu64 " s=%s early=%"
                PRIu64, lost, lost == 1 ? "" : "s", early);
    dq_put(o, "\n\n");
    DQ_TEXT(o, "lateness.why", " ");
    said_why(o, e, ls, ns);
    dq_put(o, "\n\n");
    return 0;
}

/* ---- backlog-lateness --------------------------------------------------- */

/* The series of strategy at backlog x, or NULL (the last such). */
static const series *at_backlog(const series *ls, size_t ns,
                                const char *strategy, int64_t x)
{
    const series *l = NULL;
    for (size_t i = 0; i < ns; i++)
        if (ls[i].g->backlog == x && strcmp(ls[i].g->strategy, strategy) == 0)
            l = &ls[i];
    return l;
}

/* Wide data: backlog, then per strategy p50, p99, max (ms, empty when
 * censored), the % delivered in the window, and the window (ms) where the
 * p50 is censored -- the figure marks those points "beyond the window"
 * instead of dropping them.  0 or -1 with err. */
static int backlog_figure(dq_md *o, const dq_rexp *e, const series *ls,
                          size_t ns, char names[][32], size_t nn,
                          const int64_t *xs, size_t nx, double window_ms,
                          char *err, size_t errlen)
{
    char *buf;
    size_t len;
    FILE *f = dq_mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    fputs("pending", f);
    for (size_t s = 0; s < nn; s++)
        fprintf(f, ",%s p50,%s p99,%s max,%s delivered %%,%s p50 beyond "
                "the window", names[s], names[s], names[s], names[s],
                names[s]);
    fputc('\n', f);
    for (size_t x = 0; x < nx; x++) {
        fprintf(f, "%" PRId64, xs[x]);
        for (size_t s = 0; s < nn; s++) {
            const series *l = at_backlog(ls, ns, names[s], xs[x]);
            const dq_rpool *p = l ? l->p : NULL;
            double v;
            for (int k = 0; k < 2; k++)
                if (fputc(',', f), p && cens_pct(p, k ? 99 : 50, &v))
                    fprintf(f, "%.3f", fmax(v, CDF_FLOOR_MS));
            fputc(',', f);
            if (p && p->n && p->lost == 0)
                fprintf(f, "%.3f", p->lat[p->n - 1]);
            fputc(',', f);
            if (p && p->enqueued)
                fprintf(f, "%.2f", 100.0 * (double)p->delivered /
                                       (double)p->enqueued);
            fputc(',', f);
            if (p && p->enqueued && !cens_pct(p, 50, &v))
                fprintf(f, "%.0f", window_ms > 0 ? window_ms : 1000);
        }
        fputc('\n', f);
    }
    fclose(f);
    int rc = nx ? dq_sec_figure(o, e, "backlog-lateness", NULL, buf, len,
                                err, errlen) : 0;
    free(buf);
    if (rc == 0 && nx)
        DQ_TEXT(o, "lateness.cap_backlog", "window=%.0f\n\n",
                window_ms / 1000.0);
    return rc;
}

static void backlog_table(dq_md *o, const dq_rexp *e, const series *ls,
                          size_t ns, char names[][32], size_t nn,
                          const int64_t *xs, size_t nx, double window_ms)
{
    dq_head(o, "strategy|pending tasks|measured tasks|delivered in "
               "window|p50 ms|p99 ms|max ms|backlog enqueue s");
    for (size_t s = 0; s < nn; s++)
        for (size_t x = 0; x < nx; x++)
            for (size_t i = 0; i < ns; i++) {
                const series *l = &ls[i];
                const dq_rpool *p = l->p;
                char c[3][64];
                double bs = 0;
                if (l->g->backlog != xs[x] ||
                    strcmp(l->g->strategy, names[s]) != 0)
                    continue;
                for (size_t j = 0; j < e->ntrials; j++)
                    if (dq_trial_in_group(&e->trials[j], l->g))
                        bs = e->trials[j].backlog_enqueue_s;
                pct_cell(o->texts, c[0], 64, p, 50, window_ms);
                pct_cell(o->texts, c[1], 64, p, 99, window_ms);
                if (p->n && p->lost == 0)
                    dq_fmt_ms(c[2], 64, p->lat[p->n - 1]);
                else
                    snprintf(c[2], 64, "> %.0f s", window_ms / 1000.0);
                dq_row(o, "%s" DQ_CELL "%" PRId64 DQ_CELL "%"
                           PRIu64 DQ_CELL "%" PRIu64 " (%.1f%%)" DQ_CELL "%s"
                           DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%.1f",
                           l->label, l->g->backlog, p->enqueued,
                           p->delivered, p->enqueued ? 100.0 *
                           (double)p->delivered / (double)p->enqueued : 0,
                           c[0], c[1], c[2], bs);
            }
    dq_table_end(o);
    DQ_TEXT(o, "lateness.censored", "window=%.0f", window_ms / 1000.0);
    no_verdict_note(o, ls, ns);
    dq_put(o, "\n\n");
}

/* What happened, per strategy and backlog; then the survivor bias note
 * where the median task was not delivered in the window. */
static void backlog_said(dq_md *o, const series *ls, size_t ns,
                         char names[][32], size_t nn, const int64_t *xs,
                         size_t nx, double window_ms)
{
    bool censored = false;
    DQ_TEXT(o, "generic.what_happened", " ");
    for (size_t s = 0; s < nn; s++) {
        size_t k = 0;
        dq_put(o, "%s:", names[s]);
        for (size_t x = 0; x < nx; x++)
            for (size_t i = 0; i < ns; i++) {
                const dq_rpool *p = ls[i].p;
                double v, frac = p->enqueued ? (double)p->delivered /
                                                   (double)p->enqueued : 0;
                if (ls[i].g->backlog != xs[x] ||
                    strcmp(ls[i].g->strategy, names[s]) != 0)
                    continue;
                if (cens_pct(p, 50, &v))
                    DQ_TEXT(o, "lateness.at_backlog", "%s n=%" PRId64
                            " p50=%.1f pct=%.0f", k ? ";" : "", xs[x], v,
                            100 * frac);
                else
                    DQ_TEXT(o, "lateness.at_backlog_few", "%s n=%" PRId64
                            " pct=%.1f window=%.0f", k ? ";" : "", xs[x],
                            100 * frac, window_ms / 1000.0);
                /* If the expire cursor finds due keys at an even pace,
                 * fraction f within W means one pass takes about W / f:
                 * an extrapolation, and said to be one. */
                if (!cens_pct(p, 50, &v) && frac > 0)
                    DQ_TEXT(o, "lateness.extrapolated", " s=%.0f",
                            window_ms / 1000.0 / frac);
                k++;
            }
        dq_put(o, ". ");
    }
    for (size_t i = 0; i < ns; i++) {
        double v;
        censored |= ls[i].p->n > 0 && !cens_pct(ls[i].p, 50, &v);
    }
    if (censored)
        DQ_TEXT(o, "lateness.survivors", "");
    dq_put(o, "\n\n");
}

int dq_sec_backlog(dq_md *o, const dq_results *r, const dq_rexp *e,
                   char *err, size_t errlen)
{
    series ls[MAX_SERIES];
    size_t ns = all_series(e, ls), nx = 0;
    double window_ms = strtod(dq_rexp_meta(e, "grace_ms"), NULL);
    char names[16][32];
    size_t nn = dq_strategies_of(e, names, 16);
    int64_t xs[32];
    (void)r;
    for (size_t i = 0; i < ns; i++)
        nx = dq_add_distinct_i64(xs, nx, 32, ls[i].g->backlog);
    dq_sort_i64(xs, nx);
    if (backlog_figure(o, e, ls, ns, names, nn, xs, nx, window_ms, err,
                       errlen) != 0)
        return -1;
    backlog_table(o, e, ls, ns, names, nn, xs, nx, window_ms);
    backlog_said(o, ls, ns, names, nn, xs, nx, window_ms);
    return 0;
}
