/* sections.c -- the report sections of the lateness, idle and backlog
 * experiments (report_int.h), apart from report.c's generic per-consumer
 * section because each needs its own figure, table and "what happened".
 *
 *   lateness-cdf      one chart with every strategy's lateness CDF (x:
 *                     lateness ms, log scale; y: fraction of the enqueued
 *                     tasks delivered by then), pooled over the repeats
 *                     from the per-task lateness in logs/trial-NNN.log
 *                     (dq_check_file_lateness), and p50/p99/p99.9/max.
 *   idle-cost         Redis commands/s and server CPU ms/s per strategy
 *                     while consumers wait on an empty queue (trials.csv:
 *                     redis_commands, redis_cpu_ms over measured_s).
 *   backlog-lateness  lateness of a stream of tasks vs the number of
 *                     pending tasks (the backlog) per strategy.  Tasks not
 *                     delivered within the observation window are
 *                     censored: a percentile is known only when its rank
 *                     (over every enqueued task) falls among the delivered
 *                     ones, otherwise it is shown as "> window".
 * As in report.c, every number comes from the results; none is typed in.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/checker.h"
#include "../strategies/dq.h"
#include "report_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define MAX_SERIES 64
#define CDF_POINTS 600       /* points per CDF line in the data file */
#define CDF_FLOOR_MS 0.01    /* log x: lateness below this is drawn here */

/* The pooled lateness of one group (all its repeats). */
typedef struct lat_series {
    char label[128];
    const dq_rgroup *g;
    double *lat;             /* sorted, ms; n values */
    size_t n;
    uint64_t enqueued, delivered, lost, early, duplicates;
    size_t trials;
    size_t no_verdict;       /* trials left out: their log is incomplete
                                (dq_check_no_verdict, checker.h) */
} lat_series;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Reads the event logs of g's trials into ls.  Returns 0 or -1 with err. */
static int load_series(const dq_rexp *e, const dq_rgroup *g, lat_series *ls,
                       char *err, size_t errlen)
{
    memset(ls, 0, sizeof *ls);
    ls->g = g;
    series_label(e, g, ls->label, sizeof ls->label);
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_rtrial *t = &e->trials[i];
        if (!trial_in_group(t, g))
            continue;
        if (t->trial <= 0) {
            snprintf(err, errlen, "%s/trials.csv: no trial column (results "
                     "older than the lateness report; rerun the "
                     "experiment)", e->dir);
            return -1;
        }
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/logs/trial-%03d.log", e->dir,
                 t->trial);
        dq_check c;
        double *lat = NULL;
        if (dq_check_file_lateness(path, &c, &lat, err, errlen) != 0)
            return -1;
        if (dq_check_no_verdict(&c) != NULL) {
            /* Its undelivered tasks may only be unwritten records. */
            free(lat);
            ls->no_verdict++;
            continue;
        }
        double *nl = realloc(ls->lat, (ls->n + c.lateness.n + 1) *
                                          sizeof *nl);
        if (nl == NULL) {
            free(lat);
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
        ls->lat = nl;
        if (c.lateness.n > 0)
            memcpy(ls->lat + ls->n, lat, c.lateness.n * sizeof *lat);
        ls->n += c.lateness.n;
        free(lat);
        ls->enqueued += c.enqueued;
        ls->delivered += c.delivered;
        ls->lost += c.lost;
        ls->early += c.early;
        ls->duplicates += c.duplicates;
        ls->trials++;
    }
    if (ls->n > 1)
        qsort(ls->lat, ls->n, sizeof *ls->lat, cmp_double);
    return 0;
}

/* One sentence naming the trials load_series left out, if any. */
static void no_verdict_note(out *o, const lat_series *ls, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ls[i].no_verdict;
    if (k > 0)
        both(o, "  No verdict for %zu trial log%s (log incomplete: no end "
             "record), left out of these figures.", k, k == 1 ? "" : "s");
}

static void free_series(lat_series *ls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(ls[i].lat);
}

/* Percentile p (0..100) over every enqueued task, a task not delivered
 * counting as later than any delivered one (nearest rank).  Returns false
 * when the rank falls among the undelivered (censored). */
static bool cens_pct(const lat_series *ls, double p, double *out)
{
    uint64_t total = ls->enqueued ? ls->enqueued : ls->n;
    if (total == 0 || ls->n == 0)
        return false;
    size_t rank = dq_percentile_rank(p, (size_t)total);
    if (rank > ls->n)
        return false;
    *out = ls->lat[rank - 1];
    return true;
}

/* A lateness in ms for a table: "0.4", "95.1", "2310" ... */
static void fmt_ms(char *buf, size_t len, double ms)
{
    if (ms < 10)
        snprintf(buf, len, "%.2f", ms);
    else if (ms < 1000)
        snprintf(buf, len, "%.1f", ms);
    else
        snprintf(buf, len, "%.0f", ms);
}

/* Percentile cell: the value, or "> W s" when censored. */
static void pct_cell(char *buf, size_t len, const lat_series *ls, double p,
                     double window_ms)
{
    double v;
    if (cens_pct(ls, p, &v))
        fmt_ms(buf, len, v);
    else if (ls->n == 0 && ls->enqueued == 0)
        snprintf(buf, len, "n/a");
    else if (window_ms <= 0)
        snprintf(buf, len, "undelivered");
    else
        snprintf(buf, len, "> %.0f s", window_ms / 1000.0);
}

/* Draws figures/<exp>-<kind>.{svg,png} from buf (written as
 * data/<exp>-<kind>.<ext>) with scripts/<script>.gp, lists it in
 * e->figures and writes its line.  Returns 0 or -1 with err. */
static int plot(out *o, dq_rexp *e, const char *kind, const char *script_name,
                const char *ext, const char *buf, size_t len, char *err,
                size_t errlen)
{
    char stem[PATH_MAX];
    snprintf(stem, sizeof stem, "%s-%s", e->name, kind);
    if (draw_figure(o, stem, script_name, ext, buf, len, err, errlen) != 0)
        return -1;
    add_figure(e, kind);
    figure_links(o, stem, ext);
    return 0;
}

/* The pooled series of e's first MAX_SERIES groups, *ns of them (calloc'd,
 * at least one element).  Returns the array (free with free_series(ls,
 * *ns) and free(ls)), or NULL with err. */
static lat_series *load_all_series(dq_rexp *e, size_t *ns, char *err,
                                   size_t errlen)
{
    size_t n = e->ngroups < MAX_SERIES ? e->ngroups : MAX_SERIES;
    lat_series *ls = calloc(n ? n : 1, sizeof *ls);
    if (ls == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (load_series(e, &e->groups[i], &ls[i], err, errlen) != 0) {
            free_series(ls, n);
            free(ls);
            return NULL;
        }
    *ns = n;
    return ls;
}

/* ====================================================================== */

int section_lateness_cdf(out *o, dq_rexp *e, char *err, size_t errlen)
{
    size_t ns;
    lat_series *ls = load_all_series(e, &ns, err, errlen);
    char *buf = NULL;
    size_t len = 0;
    int rc = -1;
    if (ls == NULL)
        return -1;

    /* The CDF data: one block per series (two blank lines apart), each
     * with its label in the header, as lateness_cdf.gp expects. */
    FILE *f = mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        goto done;
    size_t drawn = 0;
    for (size_t i = 0; i < ns; i++) {
        if (ls[i].n == 0)
            continue;
        uint64_t total = ls[i].enqueued ? ls[i].enqueued : ls[i].n;
        fprintf(f, "%slateness_ms,%s\n", drawn ? "\n\n" : "", ls[i].label);
        size_t step = ls[i].n > CDF_POINTS ? ls[i].n / CDF_POINTS : 1;
        for (size_t k = 0; k < ls[i].n; k += step) {
            double x = ls[i].lat[k] < CDF_FLOOR_MS ? CDF_FLOOR_MS
                                                   : ls[i].lat[k];
            fprintf(f, "%.4f,%.5f\n", x, (double)(k + 1) / (double)total);
        }
        double x = ls[i].lat[ls[i].n - 1];
        fprintf(f, "%.4f,%.5f\n", x < CDF_FLOOR_MS ? CDF_FLOOR_MS : x,
                (double)ls[i].n / (double)total);
        drawn++;
    }
    fclose(f);
    if (drawn > 0 &&
        plot(o, e, "lateness-cdf", "lateness_cdf", "csv", buf, len, err,
             errlen) != 0)
        goto done;

    const char *head[] = {"strategy", "consumers", "trials", "tasks",
                          "delivered", "early", "duplicates", "p50 ms",
                          "p99 ms", "p99.9 ms", "max ms", "waits by"};
    table_row(o, head, 12, true);
    for (size_t i = 0; i < ns; i++) {
        const lat_series *s = &ls[i];
        const dq_strategy *st = dq_strategy_find(s->g->strategy);
        char c[12][64];
        const char *cells[12];
        snprintf(c[0], 64, "%s", s->label);
        snprintf(c[1], 64, "%d", s->g->consumers);
        snprintf(c[2], 64, "%zu", s->trials);
        snprintf(c[3], 64, "%" PRIu64, s->enqueued);
        snprintf(c[4], 64, "%" PRIu64, s->delivered);
        snprintf(c[5], 64, "%" PRIu64, s->early);
        snprintf(c[6], 64, "%" PRIu64, s->duplicates);
        pct_cell(c[7], 64, s, 50, 0);
        pct_cell(c[8], 64, s, 99, 0);
        pct_cell(c[9], 64, s, 99.9, 0);
        if (s->n)
            fmt_ms(c[10], 64, s->lat[s->n - 1]);
        else
            snprintf(c[10], 64, "n/a");
        long pm = group_poll_ms(s->g);
        if (pm > 0)
            snprintf(c[11], 64, "polling, %ld ms", pm);
        else
            snprintf(c[11], 64, "%s", st && (st->flags & DQ_G_BLOCKS)
                                          ? "blocking" : "?");
        for (size_t k = 0; k < 12; k++)
            cells[k] = c[k];
        table_row(o, cells, 12, false);
    }
    table_end(o);
    both(o, "Percentiles are over every enqueued task (nearest rank); a task "
         "not delivered at all counts as later than any delivered one, "
         "shown as \"undelivered\" when it decides the percentile.");
    no_verdict_note(o, ls, ns);
    {
        /* The arrival rate the run's parameters imply. */
        long tasks = strtol(dq_rexp_meta(e, "tasks"), NULL, 10);
        long dmin = 0, dmax = 0;
        if (sscanf(dq_rexp_meta(e, "delay_ms"), "%ld:%ld", &dmin,
                   &dmax) == 2 && tasks > 0 && dmax > dmin)
            both(o, "  With %ld tasks due over a %.1f s range, about %.0f tasks "
                 "fell due per second.", tasks,
                 (double)(dmax - dmin) / 1000.0,
                 (double)tasks * 1000.0 / (double)(dmax - dmin));
    }
    both(o, "\n\n");

    /* What happened: the order by p99, polling vs its interval. */
    both(o, "**What happened.** ");
    size_t order[MAX_SERIES], no = 0;
    for (size_t i = 0; i < ns; i++)
        if (ls[i].n > 0)
            order[no++] = i;
    for (size_t i = 1; i < no; i++)
        for (size_t j = i; j > 0; j--) {
            double a, b;
            if (!cens_pct(&ls[order[j - 1]], 99, &a))
                a = INFINITY;
            if (!cens_pct(&ls[order[j]], 99, &b))
                b = INFINITY;
            if (a <= b)
                break;
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    if (no > 0) {
        both(o, "From the lowest p99 lateness to the highest:");
        for (size_t k = 0; k < no; k++) {
            double v;
            char ms[32];
            if (cens_pct(&ls[order[k]], 99, &v))
                fmt_ms(ms, sizeof ms, v);
            else
                snprintf(ms, sizeof ms, "undelivered");
            both(o, "%s %s %s ms", k ? "," : "", ls[order[k]].label, ms);
        }
        both(o, ". ");
    }
    /* Polling variants against their interval.  The comparison is
     * strict and made on the values as printed (0.1 ms): "within" means
     * at most the interval, and an excess is printed in ms, so the words
     * follow from the numbers beside them (no hidden slack). */
    for (size_t i = 0; i < ns; i++) {
        long pm = group_poll_ms(ls[i].g);
        double p50, p99;
        if (pm <= 0 || ls[i].n == 0 || !cens_pct(&ls[i], 50, &p50) ||
            !cens_pct(&ls[i], 99, &p99))
            continue;
        double mx = ls[i].lat[ls[i].n - 1];
        double r99 = round(p99 * 10) / 10, rmx = round(mx * 10) / 10;
        char verdict[160];
        if (rmx <= (double)pm)
            snprintf(verdict, sizeof verdict, "every task within the poll "
                     "interval");
        else if (r99 <= (double)pm)
            snprintf(verdict, sizeof verdict, "p99 within the poll "
                     "interval, the maximum %.1f ms beyond it",
                     rmx - (double)pm);
        else
            snprintf(verdict, sizeof verdict, "p99 %.1f ms beyond the poll "
                     "interval (the maximum %.1f ms beyond it)",
                     r99 - (double)pm, rmx - (double)pm);
        both(o, "%s (poll interval %ld ms): p50 %.1f ms, p99 %.1f ms, max "
             "%.1f ms -- %s. ", ls[i].label, pm, p50, r99, rmx, verdict);
    }
    uint64_t lost = 0, early = 0;
    for (size_t i = 0; i < ns; i++)
        lost += ls[i].lost, early += ls[i].early;
    if (lost == 0 && early == 0)
        both(o, "Every task was delivered, none before its due time.");
    else
        both(o, "%" PRIu64 " task%s not delivered, %" PRIu64 " delivered "
             "early, over all strategies.", lost, lost == 1 ? "" : "s",
             early);
    both(o, "\n\n");
    rc = 0;
done:
    free(buf);
    free_series(ls, ns);
    free(ls);
    return rc;
}

/* ====================================================================== */

int section_idle_cost(out *o, dq_rexp *e, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    fputs("strategy,redis_commands_per_s,server_cpu_ms_per_s\n", f);
    for (size_t i = 0; i < e->ngroups; i++) {
        char l[128];
        series_label(e, &e->groups[i], l, sizeof l);
        fprintf(f, "%s,%.2f,%.3f\n", l,
                e->groups[i].cmds_per_s_median < 0
                    ? 0 : e->groups[i].cmds_per_s_median,
                e->groups[i].cpu_ms_per_s_median < 0
                    ? 0 : e->groups[i].cpu_ms_per_s_median);
    }
    fclose(f);
    int rc = e->ngroups ? plot(o, e, "idle-cost", "idle_cost", "csv", buf,
                               len, err, errlen) : 0;
    free(buf);
    if (rc != 0)
        return -1;

    const char *head[] = {"strategy", "waits by", "consumers",
                          "window s", "Redis cmds/s",
                          "cmds/s per consumer", "server CPU ms/s",
                          "client round trips/s, incl. connection setup"};
    table_row(o, head, 8, true);
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        const dq_strategy *st = dq_strategy_find(g->strategy);
        double win = 0;
        for (size_t j = 0; j < e->ntrials; j++)
            if (trial_in_group(&e->trials[j], g))
                win = e->trials[j].measured_s;
        char c[8][64];
        const char *cells[8];
        series_label(e, g, c[0], 64);
        long pm = group_poll_ms(g);
        if (pm > 0)
            snprintf(c[1], 64, "polling, %ld ms", pm);
        else if (st && !(st->flags & DQ_G_NEEDS_REDIS))
            snprintf(c[1], 64, "no Redis (server baseline)");
        else
            snprintf(c[1], 64, "blocking");
        snprintf(c[2], 64, "%d", g->consumers);
        snprintf(c[3], 64, "%.1f", win);
        fmt_double(c[4], 64, g->cmds_per_s_median, 1);
        fmt_double(c[5], 64, g->cmds_per_s_median < 0 ? -1
                   : g->cmds_per_s_median / g->consumers, 1);
        fmt_double(c[6], 64, g->cpu_ms_per_s_median, 2);
        fmt_double(c[7], 64, g->rt_per_s_median, 1);
        for (size_t k = 0; k < 8; k++)
            cells[k] = c[k];
        table_row(o, cells, 8, false);
    }
    table_end(o);
    {
        /* Rows where the client counted more round trips than the server
         * ran commands: the connection setup, outside the window. */
        size_t nrt = 0;
        for (size_t i = 0; i < e->ngroups; i++)
            if (e->groups[i].cmds_per_s_median >= 0 &&
                e->groups[i].rt_per_s_median >
                    e->groups[i].cmds_per_s_median)
                nrt++;
        double idle_s = strtod(dq_rexp_meta(e, "idle_ms"), NULL) / 1000.0;
        double ct_s = strtod(dq_rexp_meta(e, "claim_timeout_ms"), NULL) /
                      1000.0;
        both(o, "Window s is the time between the two server snapshots: "
             "the idle phase (%.1f s) plus the time the consumers took to "
             "come back from the claim they were in when it ended -- up to "
             "the claim timeout (%.1f s) for a claim that waits -- so it "
             "lies between about %.1f and %.1f s; every rate in the table "
             "is per second of this window.  Redis cmds/s counts every command the server "
             "ran in the window (INFO commandstats delta, without our own "
             "INFO calls); server CPU is the INFO cpu used_cpu_sys + "
             "used_cpu_user delta of the whole redis-server process, so it "
             "includes the server's own housekeeping (serverCron, hz 10) "
             "and anything else the process did.  Client round trips are "
             "counted by the strategies' handles over the whole trial, "
             "including the connection setup (connect, AUTH, SELECT, "
             "SUBSCRIBE, CONFIG, script loading) done before the window "
             "opened, then divided by the window: they are not a rate "
             "within the window, and %s.\n\n",
             idle_s, ct_s, idle_s, idle_s + ct_s,
             nrt > 0 ? "that setup is why they exceed the server's "
                       "commands in some rows"
                     : "a script call is one round trip but several "
                       "commands");
    }

    /* What happened. */
    both(o, "**What happened.** ");
    double base_cpu = -1;
    const dq_rgroup *hi = NULL, *lo = NULL;
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        const dq_strategy *st = dq_strategy_find(g->strategy);
        if (st && !(st->flags & DQ_G_NEEDS_REDIS)) {
            base_cpu = g->cpu_ms_per_s_median;
            continue;
        }
        if (g->cmds_per_s_median < 0)
            continue;
        if (hi == NULL || g->cmds_per_s_median > hi->cmds_per_s_median)
            hi = g;
        if (lo == NULL || g->cmds_per_s_median < lo->cmds_per_s_median)
            lo = g;
    }
    if (hi != NULL && lo != NULL) {
        char lh[128], ll[128];
        series_label(e, hi, lh, sizeof lh);
        series_label(e, lo, ll, sizeof ll);
        both(o, "With nothing to do, %s caused the most Redis commands: "
             "%.0f commands/s (%.1f ms of server CPU per second); %s the "
             "fewest: %.1f commands/s (%.1f ms/s). ", lh, hi->cmds_per_s_median,
             hi->cpu_ms_per_s_median, ll, lo->cmds_per_s_median,
             lo->cpu_ms_per_s_median);
    }
    /* Polling vs blocking averages. */
    double pc = 0, bc = 0;
    size_t np = 0, nb = 0;
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        const dq_strategy *st = dq_strategy_find(g->strategy);
        if (g->cmds_per_s_median < 0 || st == NULL ||
            !(st->flags & DQ_G_NEEDS_REDIS))
            continue;
        if (group_poll_ms(g) > 0) {
            long pm = group_poll_ms(g);
            if (pm == 100)
                pc += g->cmds_per_s_median / g->consumers, np++;
        } else {
            bc += g->cmds_per_s_median / g->consumers, nb++;
        }
    }
    if (np > 0 && nb > 0)
        both(o, "Per consumer, the polling strategies at poll_ms = 100 "
             "caused %.1f Redis commands/s on average, the blocking ones "
             "%.1f. ",
             pc / (double)np, bc / (double)nb);
    /* The poll interval's effect within one strategy. */
    char names[16][32];
    size_t nn = strategies_of(e, names, 16);
    for (size_t s = 0; s < nn; s++) {
        const dq_rgroup *a = NULL, *b = NULL;  /* shortest, longest poll */
        for (size_t i = 0; i < e->ngroups; i++) {
            const dq_rgroup *g = &e->groups[i];
            if (strcmp(g->strategy, names[s]) != 0 || group_poll_ms(g) <= 0)
                continue;
            if (a == NULL || group_poll_ms(g) < group_poll_ms(a))
                a = g;
            if (b == NULL || group_poll_ms(g) > group_poll_ms(b))
                b = g;
        }
        if (a == NULL || a == b || a->cmds_per_s_median < 0 ||
            b->cmds_per_s_median < 0)
            continue;
        both(o, "%s: poll_ms %ld -> %.0f commands/s, %.1f ms CPU/s; poll_ms "
             "%ld -> %.1f commands/s, %.1f ms CPU/s", names[s],
             group_poll_ms(a), a->cmds_per_s_median, a->cpu_ms_per_s_median,
             group_poll_ms(b), b->cmds_per_s_median, b->cpu_ms_per_s_median);
        /* The CPU is the whole server process over a few seconds: say so
         * when it moves against the commands. */
        if (b->cmds_per_s_median < a->cmds_per_s_median &&
            b->cpu_ms_per_s_median > a->cpu_ms_per_s_median)
            both(o, " -- fewer commands but more server CPU at the longer "
                 "interval: that CPU figure does not follow from the "
                 "commands (it is the whole redis-server process, so "
                 "housekeeping and other load on the machine show up in "
                 "it); read the command counts");
        both(o, ". ");
    }
    if (base_cpu >= 0)
        both(o, "The server with no client at all (the heap row) used %.1f "
             "ms of CPU per second: the floor under every row.", base_cpu);
    both(o, "\n\n");
    return 0;
}

/* ====================================================================== */

int section_backlog(out *o, dq_rexp *e, char *err, size_t errlen)
{
    size_t ns;
    lat_series *ls = load_all_series(e, &ns, err, errlen);
    char *buf = NULL;
    size_t len = 0;
    int rc = -1;
    double window_ms = strtod(dq_rexp_meta(e, "grace_ms"), NULL);
    if (ls == NULL)
        return -1;
    char names[16][32];
    size_t nn = strategies_of(e, names, 16);
    int64_t xs[32];
    size_t nx = 0;
    for (size_t i = 0; i < ns; i++)
        nx = add_distinct_i64(xs, nx, 32, ls[i].g->backlog);
    sort_i64(xs, nx);

    /* Wide data: backlog, then per strategy p50, p99, max (ms, empty when
     * censored) and the % delivered in the window. */
    FILE *f = mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        goto done;
    fputs("pending", f);
    for (size_t s = 0; s < nn; s++)
        fprintf(f, ",%s p50,%s p99,%s max,%s delivered %%", names[s],
                names[s], names[s], names[s]);
    fputc('\n', f);
    for (size_t x = 0; x < nx; x++) {
        fprintf(f, "%" PRId64, xs[x]);
        for (size_t s = 0; s < nn; s++) {
            const lat_series *l = NULL;
            for (size_t i = 0; i < ns; i++)
                if (ls[i].g->backlog == xs[x] &&
                    strcmp(ls[i].g->strategy, names[s]) == 0)
                    l = &ls[i];
            double v;
            for (int k = 0; k < 2; k++) {
                fputc(',', f);
                if (l && cens_pct(l, k ? 99 : 50, &v))
                    fprintf(f, "%.3f", v < CDF_FLOOR_MS ? CDF_FLOOR_MS : v);
            }
            fputc(',', f);
            if (l && l->n && l->lost == 0)
                fprintf(f, "%.3f", l->lat[l->n - 1]);
            fputc(',', f);
            if (l && l->enqueued)
                fprintf(f, "%.2f", 100.0 * (double)l->delivered /
                                       (double)l->enqueued);
        }
        fputc('\n', f);
    }
    fclose(f);
    if (nx > 0 && plot(o, e, "backlog-lateness", "backlog_lateness", "csv",
                       buf, len, err, errlen) != 0)
        goto done;

    const char *head[] = {"strategy", "pending tasks", "measured tasks",
                          "delivered in window", "p50 ms", "p99 ms",
                          "max ms", "backlog enqueue s"};
    table_row(o, head, 8, true);
    for (size_t s = 0; s < nn; s++)
        for (size_t x = 0; x < nx; x++)
            for (size_t i = 0; i < ns; i++) {
                const lat_series *l = &ls[i];
                if (l->g->backlog != xs[x] ||
                    strcmp(l->g->strategy, names[s]) != 0)
                    continue;
                char c[8][64];
                const char *cells[8];
                double bs = 0;
                for (size_t j = 0; j < e->ntrials; j++)
                    if (trial_in_group(&e->trials[j], l->g))
                        bs = e->trials[j].backlog_s;
                snprintf(c[0], 64, "%s", l->label);
                snprintf(c[1], 64, "%" PRId64, l->g->backlog);
                snprintf(c[2], 64, "%" PRIu64, l->enqueued);
                snprintf(c[3], 64, "%" PRIu64 " (%.1f%%)", l->delivered,
                         l->enqueued ? 100.0 * (double)l->delivered /
                                           (double)l->enqueued : 0);
                pct_cell(c[4], 64, l, 50, window_ms);
                pct_cell(c[5], 64, l, 99, window_ms);
                if (l->n && l->lost == 0)
                    fmt_ms(c[6], 64, l->lat[l->n - 1]);
                else
                    snprintf(c[6], 64, "> %.0f s", window_ms / 1000.0);
                snprintf(c[7], 64, "%.1f", bs);
                for (size_t k = 0; k < 8; k++)
                    cells[k] = c[k];
                table_row(o, cells, 8, false);
            }
    table_end(o);
    both(o, "\"> N s\": the percentile falls among the tasks not delivered "
         "within the observation window (grace_ms = %.0f s after the last "
         "due time), so it is larger than the window.",
         window_ms / 1000.0);
    no_verdict_note(o, ls, ns);
    both(o, "\n\n");

    both(o, "**What happened.** ");
    for (size_t s = 0; s < nn; s++) {
        both(o, "%s:", names[s]);
        size_t k = 0;

        for (size_t x = 0; x < nx; x++)
            for (size_t i = 0; i < ns; i++) {
                const lat_series *l = &ls[i];
                if (l->g->backlog != xs[x] ||
                    strcmp(l->g->strategy, names[s]) != 0)
                    continue;
                double v, frac = l->enqueued ? (double)l->delivered /
                                                   (double)l->enqueued : 0;
                if (cens_pct(l, 50, &v)) {
                    both(o, "%s %" PRId64 " pending -> p50 %.1f ms "
                         "(%.0f%% delivered in the window)", k ? ";" : "",
                         xs[x], v, 100 * frac);
                } else {
                    both(o, "%s %" PRId64 " pending -> only %.1f%% "
                         "delivered within the %.0f s window", k ? ";" : "",
                         xs[x], 100 * frac, window_ms / 1000.0);
                    /* If the expire cursor finds due keys at an even pace,
                     * fraction f within W means one pass takes about
                     * W / f: an extrapolation, and said to be one. */
                    if (frac > 0)
                        both(o, " (extrapolated at that pace, the expire "
                             "cycle would need about %.0f s to reach every "
                             "key)", window_ms / 1000.0 / frac);
                }
                k++;
            }
        both(o, ". ");
    }
    /* Among censored rows, the lateness of the few delivered is survivor
     * biased: say so rather than let a reader compare it. */
    bool censored = false;
    for (size_t i = 0; i < ns; i++) {
        double v;
        if (ls[i].n > 0 && !cens_pct(&ls[i], 50, &v))
            censored = true;
    }
    if (censored)
        both(o, "Where the median task was not delivered in the window, "
             "the lateness of those that were is not comparable across "
             "rows (they are the ones the expire cycle happened to reach "
             "first: survivor bias): compare the delivered fraction "
             "instead.");
    both(o, "\n\n");
    rc = 0;
done:
    free(buf);
    free_series(ls, ns);
    free(ls);
    return rc;
}
