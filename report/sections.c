/* sections.c -- the table of experiment sections, the generic section, and
 * the report's smaller parts: environment, probes, claims, strategies.
 *
 * The generic section serves every experiment: a summary CSV, the figures
 * its plots list among the generic kinds (x: consumers, one line per
 * series), the heading and parameters from meta.txt, then the section of
 * the first row of dq_sections[] that fits it, or else a table of medians
 * per cell and a "what happened" paragraph computed from the trials.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/experiment.h"
#include "../harness/runmeta.h"
#include "../strategies/dq.h"
#include "claims.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static double v_dup(const dq_rgroup *g) { return g->dup_median; }
static double v_tps(const dq_rgroup *g) { return g->tps_median; }
static double v_p99(const dq_rgroup *g) { return g->p99_median; }
static double v_wake(const dq_rgroup *g)
{
    return g->deliveries_sum ? (double)g->wakeups_sum /
                                   (double)g->deliveries_sum : 0;
}

const dq_section dq_sections[] = {
    {"duplicates", "duplicates", "duplicates", NULL, v_dup, NULL, 0},
    {"throughput", "throughput", "throughput", NULL, v_tps, NULL, 0},
    {"lateness", "lateness", "lateness", NULL, v_p99, NULL, 0},
    {"wakeups", "wakeups", "wakeups", NULL, v_wake, NULL, 0},
    {"lateness-cdf", "lateness_cdf", "lateness-cdf", dq_sec_lateness_cdf,
     NULL, NULL, DQ_LOGS_LATENESS | DQ_LOGS_TIMELINE},
    {"idle-cost", "idle_cost", "idle-cost", dq_sec_idle_cost, NULL, NULL, 0},
    {"backlog-lateness", "backlog_lateness", "backlog-lateness",
     dq_sec_backlog, NULL, NULL, DQ_LOGS_LATENESS},
    {"loss", "loss_timeline", "timeline-", dq_sec_loss, NULL, dq_loss_is,
     DQ_LOGS_FAULTS},
    {"outcomes", "outcomes", "outcomes", dq_sec_outcomes, NULL, NULL, 0},
    {NULL, NULL, NULL, NULL, NULL, NULL, 0},
};

static bool fits(const dq_section *s, const dq_rexp *e)
{
    return s->is != NULL ? s->is(e) : dq_rexp_has_plot(e, s->kind);
}

unsigned dq_section_logs(const dq_rexp *e)
{
    unsigned need = 0;
    for (const dq_section *s = dq_sections; s->kind; s++)
        need |= s->write != NULL && fits(s, e) ? s->logs : 0;
    return need;
}

static const dq_section *section_of(const char *kind)
{
    const dq_section *s = dq_sections;
    while (s->kind && strcmp(s->kind, kind) != 0)
        s++;
    return s->kind ? s : NULL;
}

int dq_sec_figure(dq_md *o, const dq_rexp *e, const char *kind,
                  const char *suffix, const char *data, size_t len,
                  char *err, size_t errlen)
{
    const dq_section *s = section_of(kind);
    char stem[PATH_MAX];
    snprintf(stem, sizeof stem, "%s-%s%s", e->name, s->figure,
             suffix ? suffix : "");
    return dq_figure(o, stem, s->script, data, len, true, err, errlen);
}

void dq_series_label(const dq_rexp *e, const dq_rgroup *g, char *buf,
                     size_t len)
{
    bool vp = false, vw = false, vo = false;
    size_t n;
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *x = &e->groups[i];
        if (strcmp(x->strategy, g->strategy) != 0)
            continue;
        vp |= x->producers != g->producers;
        vw |= x->work_us != g->work_us;
        vo |= strcmp(x->options, g->options) != 0;
    }
    n = (size_t)snprintf(buf, len, "%s", g->strategy);
    if (vo && n < len)
        n += (size_t)snprintf(buf + n, len - n, " %s", g->options);
    if (vp && n < len)
        n += (size_t)snprintf(buf + n, len - n, " p=%d", g->producers);
    if (vw && n < len)
        snprintf(buf + n, len - n, " work=%" PRId64 "us", g->work_us);
    for (char *p = buf; *p; p++)   /* commas would break the CSV header */
        *p = *p == ',' || *p == '"' ? ';' : *p;
}

size_t dq_strategies_of(const dq_rexp *e, char names[][32], size_t max)
{
    size_t n = 0, j;
    for (size_t i = 0; i < e->ngroups; i++) {
        for (j = 0; j < n && strcmp(names[j], e->groups[i].strategy) != 0;)
            j++;
        if (j == n && n < max)
            snprintf(names[n++], 32, "%s", e->groups[i].strategy);
    }
    return n;
}

/* ---- The generic section ------------------------------------------------ */

/* The generic figure's dq_wide_csv context and cell: the value of the
 * first group of series s with x consumers. */
typedef struct {
    const dq_rexp *e;
    const dq_section *s;
    char (*labels)[128];
    size_t ncap;            /* the series holding cap (throughput), or -1 */
    double cap;             /* the arrival rate, tasks/s; <= 0: none */
} plot_ctx;

/* The rate at which e's tasks fell due (tasks over the due-time range, of
 * its first trial), tasks/s; 0 when it has none. */
static double arrival_rate(const dq_rexp *e)
{
    const dq_trialrow *t = e->ntrials ? &e->trials[0] : NULL;
    return t && t->delay_max_ms > t->delay_min_ms
               ? (double)t->tasks * 1000.0 /
                     (double)(t->delay_max_ms - t->delay_min_ms) : 0;
}

static void plot_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const plot_ctx *c = ctx;
    char l[128];
    if (s == c->ncap) {
        if (c->cap > 0)
            fprintf(f, "%.1f", c->cap);
        return;
    }
    for (size_t g = 0; g < c->e->ngroups; g++) {
        dq_series_label(c->e, &c->e->groups[g], l, sizeof l);
        if (c->e->groups[g].consumers == x && strcmp(l, c->labels[s]) == 0) {
            fprintf(f, "%.3f", c->s->value(&c->e->groups[g]));
            return;
        }
    }
}

/* data/<exp>-<kind>.csv and its figures (linked later). */
static int generic_figure(dq_md *o, const dq_rexp *e, const dq_section *s,
                          char *err, size_t errlen)
{
    char labels[64][128], l[128], stem[PATH_MAX], *buf;
    size_t nl = 0, nx = 0, len, j;
    int64_t xs[64];
    for (size_t i = 0; i < e->ngroups; i++) {
        dq_series_label(e, &e->groups[i], l, sizeof l);
        for (j = 0; j < nl && strcmp(labels[j], l) != 0;)
            j++;
        if (j == nl && nl < 64)
            snprintf(labels[nl++], sizeof labels[0], "%s", l);
        nx = dq_add_distinct_i64(xs, nx, 64, e->groups[i].consumers);
    }
    dq_sort_i64(xs, nx);
    plot_ctx c = {e, s, labels, (size_t)-1, 0};
    if (strcmp(s->kind, "throughput") == 0 && nl < 64) {
        c.ncap = nl;
        c.cap = arrival_rate(e);
        DQ_TCAT(o->texts, labels[nl++], sizeof labels[0], &(size_t){0},
                "generic.arrival_series", "");
    }
    if (dq_wide_csv(&buf, &len, "consumers", labels[0], sizeof labels[0],
                    nl, NULL, 0, xs, nx, plot_cell, &c, err, errlen) != 0)
        return -1;
    snprintf(stem, sizeof stem, "%s-%s", e->name, s->figure);
    int rc = dq_figure(o, stem, s->script, buf, len, false, err, errlen);
    free(buf);
    return rc;
}

/* The strategies of e with duplicates at 2+ consumers, joined. */
static void dup_strategies(const dq_rexp *e, char *buf, size_t len)
{
    char names[16][32];
    size_t ns = dq_strategies_of(e, names, 16), idx[16], n = 0;
    for (size_t k = 0; k < ns; k++)
        for (size_t i = 0; i < e->ngroups; i++)
            if (strcmp(e->groups[i].strategy, names[k]) == 0 &&
                e->groups[i].consumers >= 2 && e->groups[i].dup_sum > 0) {
                idx[n++] = k;
                break;
            }
    dq_join_and(names, idx, n, buf, len);
}

/* The caption under generic figure kind of e: what to look at, with the
 * run's own numbers. */
static void generic_caption(dq_md *o, const dq_rexp *e, const char *kind)
{
    char list[512] = "";
    double cap = arrival_rate(e), q = 0;
    int one = 0;
    for (size_t i = 0; i < e->ngroups; i++)
        if (e->groups[i].consumers == 1) {
            one++;
            q = e->groups[i].p99_median > q ? e->groups[i].p99_median : q;
        }
    if (strcmp(kind, "duplicates") == 0) {
        dup_strategies(e, list, sizeof list);
        if (list[0] != '\0')
            DQ_TEXT(o, "generic.cap_dups", "list=%s\n\n", list);
        else
            DQ_TEXT(o, "generic.cap_nodups", "\n\n");
    } else if (strcmp(kind, "throughput") == 0 && cap > 0) {
        DQ_TEXT(o, "generic.cap_tp", "cap=%.0f\n\n", cap);
    } else if (strcmp(kind, "lateness") == 0 && one > 0 && cap > 0) {
        DQ_TEXT(o, "generic.cap_lat_queue", "cap=%.0f p99=%.0f\n\n", cap, q);
    } else if (strcmp(kind, "lateness") == 0) {
        DQ_TEXT(o, "generic.cap_lat", "\n\n");
    } else if (strcmp(kind, "wakeups") == 0) {
        DQ_TEXT(o, "generic.cap_wake", "\n\n");
    }
}

/* The generic figures of e's plots in their order: drawn, or linked. */
static int generic_figures(dq_md *o, const dq_rexp *e, bool draw, char *err,
                           size_t errlen)
{
    char plots[256], stem[PATH_MAX], *save = NULL;
    dq_rexp_plots(e, plots, sizeof plots);
    for (char *k = strtok_r(plots, " ,", &save); k;
         k = strtok_r(NULL, " ,", &save)) {
        const dq_section *s = section_of(k);
        if (s == NULL || s->write != NULL)
            continue;
        snprintf(stem, sizeof stem, "%s-%s", e->name, s->figure);
        if (!draw) {
            dq_figure_link(o, stem);
            generic_caption(o, e, s->kind);
        } else if (generic_figure(o, e, s, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int summary_csv(dq_md *o, const dq_rexp *e, char *err, size_t errlen)
{
    char *buf, path[PATH_MAX];
    size_t len;
    FILE *f = dq_mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    /* duplicates leave out redeliveries, as the loss table does */
    fputs("strategy,options,fault,producers,consumers,work_us,repeats,"
          "tasks_per_s_median,duplicates_median,duplicates_max,"
          "trials_with_duplicates,redelivered_sum,lost_max,early_max,"
          "lateness_p50_ms_median,lateness_p99_ms_median,"
          "redis_commands_per_task_median,wakeups_per_delivery\n", f);
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        fprintf(f, "%s,\"%s\",%s,%d,%d,%" PRId64 ",%zu,%.1f,%.1f,%" PRIu64
                ",%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.2f,"
                "%.3f\n", g->strategy, g->options, g->fault[0] ? g->fault
                : "none", g->producers, g->consumers, g->work_us, g->n,
                g->tps_median, g->dup_median, g->dup_max, g->dup_trials,
                g->redelivered_sum, g->lost_max, g->early_max, g->p50_median,
                g->p99_median, g->cmds_per_task_median, g->deliveries_sum
                ? (double)g->wakeups_sum / (double)g->deliveries_sum : 0.0);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/data/%s-summary.csv", o->dir, e->name);
    int rc = dq_runmeta_write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

#define META(k) dq_rexp_meta(e, k)

/* "s" unless the meta value count is "1". */
static const char *plural(const char *count)
{
    return strcmp(count, "1") == 0 ? "" : "s";
}

/* The heading, description and parameters of e's section. */
static void heading(dq_md *o, const dq_rexp *e)
{
    char text[2048], quick[64] = "";
    size_t qo = 0;
    if (strcmp(META("quick"), "yes") == 0)
        DQ_TCAT(o->texts, quick, sizeof quick, &qo, "generic.quick", "");
    dq_put(o, "## %s (`%s`)\n\n", META("title")[0] ? META("title") : e->name,
           e->name);
    if (dq_loss_is(e) && META("faults")[0]) {
        /* the specs the run used, not the file's (full form) description */
        dq_loss_describe(o->texts, e, text, sizeof text);
        dq_put(o, "%s\n\n", text);
    } else if (META("description")[0]) {
        dq_put(o, "%s\n\n", META("description"));
    }
    if (strcmp(META("tasks"), "0") == 0)
        DQ_TEXT(o, "generic.params_idle", "strategies=%s consumers=%s "
                "idle_ms=%s claim_timeout_ms=%s repeats=%s s=%s seed=%s "
                "quick=%s%s", META("strategies"), META("consumers"),
                META("idle_ms"), META("claim_timeout_ms"), META("repeats"),
                plural(META("repeats")), META("seed"), qo ? " " : "", quick);
    else
        DQ_TEXT(o, "generic.params", "strategies=%s consumers=%s "
                "producers=%s tasks=%s delay_ms=%s work_us=%s repeats=%s s=%s "
                "seed=%s quick=%s%s", META("strategies"), META("consumers"),
                META("producers"), META("tasks"), META("delay_ms"),
                META("work_us"), META("repeats"), plural(META("repeats")),
                META("seed"), qo ? " " : "", quick);
    if (META("backlog")[0] && strcmp(META("backlog"), "0") != 0)
        DQ_TEXT(o, "generic.backlog", "  backlog=%s delay_ms=%s "
                "grace_ms=%s", META("backlog"), META("backlog_delay_ms"),
                META("grace_ms"));
    /* Redacted again: a meta.txt written before dqlab masked --redis
     * passwords may still hold one.  Older runs also wrote "dqlab ..." for
     * the binary, which is bin/dqlab in this tree. */
    dq_redact_redis_urls(META("command"), text, sizeof text);
    DQ_TEXT(o, "generic.run", "  command=%s%s trials=%s s=%s date=%s",
            strncmp(text, "dqlab ", 6) == 0 ? "bin/" : "", text,
            META("trials_done"), plural(META("trials_done")), META("date"));
    if (META("claims")[0])
        DQ_TEXT(o, "generic.claims", "  claims=%s", META("claims"));
    dq_put(o, "\n\n");
}

/* The table of medians per cell, and its note. */
static void cell_table(dq_md *o, const dq_rexp *e)
{
    bool vp = false, vw = false, wk = dq_rexp_has_plot(e, "wakeups");
    char head[512], label[64], p[32] = "", w[32] = "", cmds[32], rt[32];
    char wake[32] = "";
    for (size_t i = 1; i < e->ngroups; i++) {
        vp |= e->groups[i].producers != e->groups[0].producers;
        vw |= e->groups[i].work_us != e->groups[0].work_us;
    }
    snprintf(head, sizeof head, "strategy%s|consumers%s|repeats|tasks/s "
             "(median)|duplicates (median)|duplicates (max)|lost (max)|early "
             "(max)|lateness p50 ms|lateness p99 ms|Redis cmds/task|round "
             "trips/task%s", vp ? "|producers" : "", vw ? "|work us" : "",
             wk ? "|wake-ups/delivery" : "");
    dq_head(o, head);
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        dq_series_label(e, g, label, sizeof label);
        if (vp)
            snprintf(p, sizeof p, DQ_CELL "%d", g->producers);
        if (vw)
            snprintf(w, sizeof w, DQ_CELL "%" PRId64, g->work_us);
        dq_fmt_double(cmds, sizeof cmds, g->cmds_per_task_median, 1);
        dq_fmt_double(rt, sizeof rt, g->rt_per_task_median, 1);
        if (wk)
            snprintf(wake, sizeof wake, DQ_CELL "%.2f", v_wake(g));
        dq_row(o, "%s%s" DQ_CELL "%d%s" DQ_CELL "%zu" DQ_CELL "%.0f" DQ_CELL
               "%g" DQ_CELL "%" PRIu64 DQ_CELL "%" PRIu64 DQ_CELL "%" PRIu64
               DQ_CELL "%.1f" DQ_CELL "%.1f" DQ_CELL "%s" DQ_CELL "%s%s",
               label, p, g->consumers, w, g->n, g->tps_median, g->dup_median,
               g->dup_max, g->lost_max, g->early_max, g->p50_median,
               g->p99_median, cmds, rt, wake);
    }
    dq_table_end(o);
    DQ_TEXT(o, "generic.cmds_note", "\n\n");
}

/* What happened, part 1: duplicates with 2+ consumers, per strategy. */
static void said_duplicates(dq_md *o, const dq_rexp *e, char names[][32],
                            size_t ns)
{
    size_t clean[16], nclean = 0;
    char list[512];
    for (size_t s = 0; s < ns; s++) {
        uint64_t dup = 0;
        size_t n = 0, nd = 0;
        for (size_t i = 0; i < e->ntrials; i++) {
            const dq_trialrow *t = &e->trials[i];
            if (strcmp(t->strategy, names[s]) == 0 && t->consumers >= 2) {
                n++;
                dup += t->duplicates;
                nd += t->duplicates > 0;
            }
        }
        if (n > 0 && dup > 0)
            DQ_TEXT(o, "generic.dups", "strategy=%s n=%" PRIu64 " s=%s "
                    "trials=%zu of=%zu ", names[s], dup, dup == 1 ? "" : "s",
                    nd, n);
        else if (n > 0)
            clean[nclean++] = s;
    }
    if (nclean > 0) {
        dq_join_and(names, clean, nclean, list, sizeof list);
        DQ_TEXTP(o, nclean == ns, "generic.no_dups_all", "generic.no_dups",
                 "list=%s ", list);
    }
}

/* Part 2: lost races (a claim that found its task taken by another
 * consumer), the price of a claim that checks instead of locking; then
 * losses and early deliveries. */
static void said_races_losses(dq_md *o, const dq_rexp *e, char names[][32],
                              size_t ns)
{
    uint64_t lost = 0, early = 0;
    char list[2048];
    size_t off = 0;
    for (size_t s = 0; s < ns; s++) {
        uint64_t races = 0, deliv = 0;
        for (size_t i = 0; i < e->ntrials; i++)
            if (strcmp(e->trials[i].strategy, names[s]) == 0) {
                races += e->trials[i].lost_races;
                deliv += e->trials[i].delivered;
            }
        if (races > 0)
            DQ_TCAT(o->texts, list, sizeof list, &off, "generic.race",
                    "%sstrategy=%s races=%" PRIu64 " per=%.2f", off ? ", "
                    : "", names[s], races, deliv ? (double)races /
                    (double)deliv : 0);
    }
    if (off > 0)
        DQ_TEXT(o, "generic.races", "list=%s ", list);
    for (size_t i = 0; i < e->ntrials; i++) {
        lost += e->trials[i].lost;
        early += e->trials[i].early;
    }
    if (lost == 0 && early == 0)
        DQ_TEXT(o, "generic.no_loss", " ");
    for (size_t s = 0; s < ns && (lost > 0 || early > 0); s++) {
        uint64_t l = 0, ea = 0;
        size_t nl = 0;
        for (size_t i = 0; i < e->ntrials; i++)
            if (strcmp(e->trials[i].strategy, names[s]) == 0) {
                l += e->trials[i].lost;
                ea += e->trials[i].early;
                nl += e->trials[i].lost > 0;
            }
        if (l > 0)
            DQ_TEXT(o, "generic.lost", "strategy=%s n=%" PRIu64 " s=%s "
                    "trials=%zu ts=%s ", names[s], l, l == 1 ? "" : "s", nl,
                    nl == 1 ? "" : "s");
        if (ea > 0)
            DQ_TEXT(o, "generic.early", "strategy=%s n=%" PRIu64 " s=%s ",
                    names[s], ea, ea == 1 ? "" : "s");
    }
}

/* Part 3: throughput from the fewest to the most consumers, and who
 * reached the rate at which tasks fall due (delay_max - delay_min caps
 * the delivery rate whatever the strategy). */
static void said_throughput(dq_md *o, const dq_rexp *e, char names[][32],
                            size_t ns, int minc, int maxc)
{
    char list[1024] = "";
    size_t loff = 0, nat = 0;
    if (maxc > minc) {
        for (size_t s = 0; s < ns; s++) {
            double lo = -1, hi = -1;
            for (size_t i = 0; i < e->ngroups; i++) {
                const dq_rgroup *g = &e->groups[i];
                if (strcmp(g->strategy, names[s]) != 0)
                    continue;
                lo = g->consumers == minc && lo < 0 ? g->tps_median : lo;
                hi = g->consumers == maxc && hi < 0 ? g->tps_median : hi;
            }
            if (lo >= 0 && hi >= 0)
                DQ_TCAT(o->texts, list, sizeof list, &loff,
                        "generic.tp_item", "%s strategy=%s lo=%.0f "
                        "hi=%.0f", s ? "," : "", names[s], lo, hi);
        }
        DQ_TEXT(o, "generic.tp_range", "min=%d max=%d list=%s ", minc,
                maxc, list);
        loff = 0;
        list[0] = '\0';
    }
    if (e->ntrials == 0 || e->trials[0].delay_max_ms <= 0)
        return;
    const dq_trialrow *t0 = &e->trials[0];
    double window = (double)(t0->delay_max_ms - t0->delay_min_ms);
    window = window < 1 ? 1 : window;
    double cap = (double)t0->tasks * 1000.0 / window;
    /* each strategy at 90% of the cap or more, with the share its best
     * cell reached (as measured, not "90%") */
    for (size_t s = 0; s < ns; s++) {
        double best = -1;
        for (size_t i = 0; i < e->ngroups; i++)
            if (strcmp(e->groups[i].strategy, names[s]) == 0 &&
                e->groups[i].tps_median > best)
                best = e->groups[i].tps_median;
        if (best < 0.9 * cap)
            continue;
        nat++;
        dq_append(list, sizeof list, &loff, "%s%s %.1f%%", loff ? ", " : "",
                  names[s], 100.0 * best / cap);
    }
    if (nat > 0)
        DQ_TEXT(o, "generic.at_rate", "cap=%.0f tasks=%" PRId64
                " window=%.0f list=%s ", cap, t0->tasks, window, list);
}

/* The "what happened" paragraph, computed from e's trials. */
static void what_happened(dq_md *o, const dq_rexp *e)
{
    char names[16][32];
    size_t ns = dq_strategies_of(e, names, 16);
    int minc = INT_MAX, maxc = 0, p99c = 0;
    double p99max = 0;
    const char *p99s = "";
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        minc = g->consumers < minc ? g->consumers : minc;
        maxc = g->consumers > maxc ? g->consumers : maxc;
        if (g->p99_median > p99max) {
            p99max = g->p99_median;
            p99s = g->strategy;
            p99c = g->consumers;
        }
    }
    DQ_TEXT(o, "generic.what_happened", " ");
    if (maxc >= 2)
        said_duplicates(o, e, names, ns);
    said_races_losses(o, e, names, ns);
    said_throughput(o, e, names, ns, minc, maxc);
    if (p99max > 0)
        DQ_TEXT(o, "generic.p99", "p99=%.1f strategy=%s consumers=%d s=%s",
                p99max, p99s, p99c, p99c == 1 ? "" : "s");
    dq_put(o, "\n\n");
    if (strcmp(META("complete"), "yes") != 0)
        DQ_TEXT(o, "generic.incomplete", "done=%s planned=%s\n\n",
                META("trials_done"), META("trials_planned"));
}

int dq_section_experiment(dq_md *o, const dq_results *r, const dq_rexp *e,
                          char *err, size_t errlen)
{
    const dq_section *s = dq_sections;
    int rc = 1;
    while (s->kind && (s->write == NULL || !fits(s, e)))
        s++;
    if (summary_csv(o, e, err, errlen) != 0 ||
        generic_figures(o, e, true, err, errlen) != 0)
        return -1;
    heading(o, e);
    if (s->kind && (rc = s->write(o, r, e, err, errlen)) < 0)
        return -1;
    if (rc == 1) {
        generic_figures(o, e, false, err, errlen);
        cell_table(o, e);
        what_happened(o, e);
    }
    dq_raw(o, e->dir, "trials.csv, meta.txt, logs/");
    return 0;
}

/* ---- The report's other parts ------------------------------------------- */

void dq_section_environment(dq_md *o, const dq_results *r)
{
    DQ_TEXT(o, "generic.environment", "\n\n");
    dq_head(o, "experiment|date|Redis|dqlab commit|CPU|cores|host|quick|"
            "complete");
    for (size_t i = 0; i < r->nexps; i++) {
        const dq_rexp *e = &r->exps[i];
        const char *cells[] = {e->name, META("date"), META("redis_version"),
                               META("dqlab_commit"), META("cpu_model"),
                               META("cores"), META("hostname"),
                               META("quick"), META("complete")};
        dq_cells(o, false, cells, 9);
    }
    dq_table_end(o);
}

void dq_section_probes(dq_md *o, const dq_results *r)
{
    const dq_probes *p = &r->probes;
    char v[64];
    size_t off = 0;
    DQ_TEXT(o, "generic.probes", "\n\n");
    if (!p->present) {
        DQ_TEXT(o, "generic.probes_none", "root=%s\n\n", r->root);
        return;
    }
    if (p->redis_version[0])
        snprintf(v, sizeof v, "%s", p->redis_version);
    else
        DQ_TCAT(o->texts, v, sizeof v, &off, "generic.version_unknown", "");
    DQ_TEXT(o, "generic.probes_intro", "version=%s\n\n", v);
    dq_head(o, "claim|probe|what was done|what Redis did");
    for (size_t i = 0; i < p->n; i++) {
        const dq_probe_row *x = &p->rows[i];
        const char *cells[] = {x->claim, x->probe, x->action, x->observed};
        dq_cells(o, false, cells, 4);
    }
    dq_table_end(o);
    dq_raw(o, p->dir, "probes.csv, meta.txt");
}

/* One claim's line of the claims table: id, verdict, sample, interval,
 * the claim linked to its evidence below. */
static void claim_row(dq_md *o, const dq_claim_def *c, dq_verdict v,
                      const dq_claim_result *res, const char *text)
{
    char link[768], none[64] = "";
    const char *cells[5] = {c->id, dq_verdict_name(v), res->sample,
                            res->interval, link};
    DQ_TBUF(o, none, "generic.claim_none", "");
    cells[2] = res->sample[0] ? res->sample : none;
    cells[3] = res->interval[0] ? res->interval : none;
    snprintf(link, sizeof link, "[%s](#claim-%s)", text, c->id);
    dq_mdcells(o, false, cells, 5);
}

/* One claim's evidence item, with its anchor and its figure's link. */
static void claim_item(dq_md *o, const dq_claim_def *c, dq_verdict v,
                       const dq_claim_result *res, const char *text,
                       const char *ev)
{
    char fig[256] = "", e[4096];
    size_t n = (size_t)snprintf(e, sizeof e, "%s", ev);
    while (n > 0 && e[n - 1] == ' ')   /* the figure's sentence follows */
        e[--n] = '\0';
    char id[32];
    if (res->figure[0])
        DQ_TBUF(o, fig, "generic.claim_figure", "  anchor=%s", res->figure);
    snprintf(id, sizeof id, "claim-%s", c->id);
    dq_anchor(o, id);
    DQ_TEXT(o, "generic.claim_item", "id=%s verdict=%s text=%s "
            "evidence=%s fig=%s\n\n", c->id, dq_verdict_name(v), text, e,
            fig);
}

void dq_section_claims(dq_md *o, const dq_results *r)
{
    size_t n = 0;
    while (dq_claims[n].id)
        n++;
    dq_verdict *v = calloc(n + 1, sizeof *v);
    char (*ev)[4096] = calloc(n + 1, sizeof *ev);
    char (*text)[512] = calloc(n + 1, sizeof *text);
    dq_claim_result *res = calloc(n + 1, sizeof *res);
    DQ_TEXT(o, "generic.claims_head", "\n\n");
    if (v == NULL || ev == NULL || text == NULL || res == NULL) {
        dq_put(o, "(out of memory)\n\n");
        goto done;
    }
    dq_head(o, "id|verdict|sample|interval|claim");
    for (size_t i = 0; i < n; i++) {
        v[i] = dq_claim_decide(&dq_claims[i], r, o->texts, ev[i],
                               sizeof ev[i], &res[i]);
        dq_tcat(o->texts, text[i], sizeof text[i], &(size_t){0},
                dq_claims[i].text, "");
        claim_row(o, &dq_claims[i], v[i], &res[i], text[i]);
    }
    dq_table_end(o);
    for (size_t i = 0; i < n; i++)
        claim_item(o, &dq_claims[i], v[i], &res[i], text[i], ev[i]);
    dq_put(o, "\n");
done:
    free(v);
    free(ev);
    free(text);
    free(res);
}

void dq_section_strategies(dq_md *o)
{
    DQ_TEXT(o, "generic.strategies", "\n\n");
    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];
        char list[512];
        size_t off = 0;
        dq_put(o, "### %s\n\n%s\n\n", s->name, s->summary ? s->summary : "");
        if (s->doc != NULL)
            dq_put(o, "%s\n\n", s->doc);
        /* Guarantees and traits only: harness facts (DQ_G_ZSET_LAYOUT)
         * have no name and are not shown. */
        for (unsigned bit = 1; bit != 0 && bit <= (1u << 30); bit <<= 1)
            if ((s->flags & bit) && dq_flag_name(bit) != NULL)
                dq_append(list, sizeof list, &off, "%s %s", off ? "," : "",
                          dq_flag_name(bit));
        if (off > 0)
            DQ_TEXT(o, "generic.traits", "list=%s", list);
        else
            DQ_TEXT(o, "generic.no_traits", "");
        if (s->min_redis)
            DQ_TEXT(o, "generic.needs_redis", "  version=%s",
                    s->min_redis);
        dq_put(o, "\n\n");
        /* Its own options, then those every Redis strategy takes (wait). */
        if (dq_strategy_option(s, 0) == NULL) {
            DQ_TEXT(o, "generic.no_options", "\n\n");
            continue;
        }
        dq_head(o, "option|default|meaning");
        for (size_t k = 0; dq_strategy_option(s, k) != NULL; k++) {
            const dq_optdef *d = dq_strategy_option(s, k);
            dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%s", d->name,
                   d->def ? d->def : "", d->help ? d->help : "");
        }
        dq_table_end(o);
    }
}
