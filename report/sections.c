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
#include "front.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define META(k) dq_rexp_meta(e, k)

/* "s" unless the meta value count is "1". */
static const char *plural_of(const char *count)
{
    return strcmp(count, "1") == 0 ? "" : "s";
}

/* The rate at which e's tasks fell due (tasks over the due-time range, of
 * its first trial), tasks/s; 0 when it has none. */
static double arrival_rate(const dq_rexp *e)
{
    const dq_trialrow *t = e->ntrials ? &e->trials[0] : NULL;
    return t && t->delay_max_ms > t->delay_min_ms
               ? (double)t->tasks * 1000.0 /
                     (double)(t->delay_max_ms - t->delay_min_ms) : 0;
}

/* ---- The generic figures: a value per group, and a caption -------------- */

static double v_dup(const dq_rgroup *g) { return g->dup_median; }
static double v_tps(const dq_rgroup *g) { return g->tps_median; }
static double v_p99(const dq_rgroup *g) { return g->p99_median; }
static double v_wake(const dq_rgroup *g)
{
    return g->deliveries_sum ? (double)g->wakeups_sum /
                                   (double)g->deliveries_sum : 0;
}

/* The captions under them: what to look at, with the run's own numbers. */
static void cap_dup(dq_md *o, const dq_rexp *e)
{
    char names[16][32], list[512];
    size_t ns = dq_strategies_of(e, names, 16), idx[16], n = 0;
    for (size_t k = 0; k < ns; k++)     /* duplicates at 2+ consumers */
        for (size_t i = 0; i < e->ngroups; i++)
            if (strcmp(e->groups[i].strategy, names[k]) == 0 &&
                e->groups[i].consumers >= 2 && e->groups[i].dup_sum > 0) {
                idx[n++] = k;
                break;
            }
    dq_join_and(names, idx, n, list, sizeof list);
    if (n > 0)
        DQ_TEXT(o, "generic.cap_dups", "list=%s\n\n", list);
    else
        DQ_TEXT(o, "generic.cap_nodups", "\n\n");
}

static void cap_tp(dq_md *o, const dq_rexp *e)
{
    if (arrival_rate(e) > 0)
        DQ_TEXT(o, "generic.cap_tp", "cap=%.0f\n\n", arrival_rate(e));
}

static void cap_lat(dq_md *o, const dq_rexp *e)
{
    double q = 0;       /* the worst p99 at 1 consumer: queueing */
    int one = 0;
    for (size_t i = 0; i < e->ngroups; i++)
        if (e->groups[i].consumers == 1) {
            one++;
            q = e->groups[i].p99_median > q ? e->groups[i].p99_median : q;
        }
    if (one > 0 && arrival_rate(e) > 0)
        DQ_TEXT(o, "generic.cap_lat_queue", "cap=%.0f p99=%.0f\n\n",
                arrival_rate(e), q);
    else
        DQ_TEXT(o, "generic.cap_lat", "\n\n");
}

static void cap_wake(dq_md *o, const dq_rexp *e)
{
    (void)e;
    DQ_TEXT(o, "generic.cap_wake", "\n\n");
}

/* Each plot kind's row after its name: script, figure stem, then the
 * writer, or the generic figure's value and caption.  dq_sections[] is
 * made from harness/plots.h's list, so a kind without its SEC_ here does
 * not compile. */
#define SEC_DUPLICATES "duplicates", "duplicates", .value = v_dup, \
                       .caption = cap_dup
#define SEC_THROUGHPUT "throughput", "throughput", .value = v_tps, \
                       .caption = cap_tp
#define SEC_LATENESS "lateness", "lateness", .value = v_p99, .caption = cap_lat
#define SEC_LATENESS_CDF "lateness_cdf", "lateness-cdf", \
                         dq_sec_lateness_cdf, \
                         .logs = DQ_LOGS_LATENESS | DQ_LOGS_TIMELINE
#define SEC_IDLE_COST "idle_cost", "idle-cost", dq_sec_idle_cost, .logs = 0
#define SEC_BACKLOG_LATENESS "backlog_lateness", "backlog-lateness", \
                             dq_sec_backlog, .logs = DQ_LOGS_LATENESS
#define SEC_LOSS "loss_timeline", "timeline-", dq_sec_loss, \
                 .is = dq_loss_is, .logs = DQ_LOGS_FAULTS
#define SEC_WAKEUPS "wakeups", "wakeups", .value = v_wake, .caption = cap_wake
#define SEC_OUTCOMES "outcomes", "outcomes", dq_sec_outcomes, .logs = 0

#define SEC_ROW(id, name) [DQ_PLOT_##id] = {name, SEC_##id},
const dq_section dq_sections[DQ_NPLOTS + 1] = {DQ_PLOT_KINDS(SEC_ROW)};
#undef SEC_ROW

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

/* data/<stem>.csv and figures/<stem>.* of generic row s (linked later). */
static int generic_figure(dq_md *o, const dq_rexp *e, const dq_section *s,
                          const char *stem, char *err, size_t errlen)
{
    char labels[64][128], l[128], *buf;
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
    if (s == &dq_sections[DQ_PLOT_THROUGHPUT] && nl < 64) {
        c.ncap = nl;
        c.cap = arrival_rate(e);
        DQ_TCAT(o->texts, labels[nl++], sizeof labels[0], &(size_t){0},
                "generic.arrival_series", "");
    }
    if (dq_wide_csv(&buf, &len, "consumers", labels[0], sizeof labels[0],
                    nl, NULL, 0, xs, nx, plot_cell, &c, err, errlen) != 0)
        return -1;
    int rc = dq_figure(o, stem, s->script, buf, len, false, err, errlen);
    free(buf);
    return rc;
}

/* The generic figures of e's plots in their order: drawn, or linked with
 * their captions. */
static int generic_figures(dq_md *o, const dq_rexp *e, bool draw, char *err,
                           size_t errlen)
{
    char plots[256], stem[PATH_MAX], *save = NULL;
    dq_rexp_plots(e, plots, sizeof plots);
    for (char *k = strtok_r(plots, " ,", &save); k;
         k = strtok_r(NULL, " ,", &save)) {
        const dq_section *s = dq_sections;
        while (s->kind && strcmp(s->kind, k) != 0)
            s++;
        if (s->kind == NULL || s->write != NULL)
            continue;
        snprintf(stem, sizeof stem, "%s-%s", e->name, s->figure);
        if (!draw) {
            dq_figure_link(o, stem);
            s->caption(o, e);
        } else if (generic_figure(o, e, s, stem, err, errlen) != 0)
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
                g->p99_median, g->cmds_per_task_median, v_wake(g));
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/data/%s-summary.csv", o->dir, e->name);
    int rc = dq_runmeta_write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

/* The heading, description and parameters of e's section. */
static void heading(dq_md *o, const dq_rexp *e)
{
    char text[2048], quick[64] = "";
    if (strcmp(META("quick"), "yes") == 0)
        DQ_TBUF(o, quick, "generic.quick", "");
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
                plural_of(META("repeats")), META("seed"), quick[0] ? " " : "",
                quick);
    else
        DQ_TEXT(o, "generic.params", "strategies=%s consumers=%s "
                "producers=%s tasks=%s delay_ms=%s work_us=%s repeats=%s s=%s "
                "seed=%s quick=%s%s", META("strategies"), META("consumers"),
                META("producers"), META("tasks"), META("delay_ms"),
                META("work_us"), META("repeats"),
                plural_of(META("repeats")), META("seed"), quick[0] ? " " : "",
                quick);
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
            META("trials_done"), plural_of(META("trials_done")),
            META("date"));
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

/* ---- What happened ------------------------------------------------------ */

/* One strategy's trials and groups in e, summed for the paragraph: its
 * trials with 2+ consumers, their duplicates and the trials with some;
 * tasks/s medians at the fewest and the most consumers and in its best
 * cell (-1: none). */
typedef struct {
    size_t n2, dup_trials, lost_trials;
    uint64_t dup, races, delivered, lost, early;
    double lo, hi, best;
} tally;

static tally tally_of(const dq_rexp *e, const char *name, int minc, int maxc)
{
    tally t = {.lo = -1, .hi = -1, .best = -1};
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_trialrow *x = &e->trials[i];
        if (strcmp(x->strategy, name) != 0)
            continue;
        if (x->consumers >= 2) {
            t.n2++;
            t.dup += x->duplicates;
            t.dup_trials += x->duplicates > 0;
        }
        t.races += x->lost_races;
        t.delivered += x->delivered;
        t.lost += x->lost;
        t.early += x->early;
        t.lost_trials += x->lost > 0;
    }
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        if (strcmp(g->strategy, name) != 0)
            continue;
        t.lo = g->consumers == minc && t.lo < 0 ? g->tps_median : t.lo;
        t.hi = g->consumers == maxc && t.hi < 0 ? g->tps_median : t.hi;
        t.best = g->tps_median > t.best ? g->tps_median : t.best;
    }
    return t;
}

/* Duplicates with 2+ consumers per strategy (and who had none); lost
 * races (a claim that found its task taken by another consumer), the
 * price of a claim that checks instead of locking; losses and early
 * deliveries. */
static void said_counts(dq_md *o, char names[][32], const tally *t,
                        size_t ns, bool dups)
{
    size_t clean[16], nclean = 0, off = 0;
    uint64_t bad = 0;
    char list[2048];
    for (size_t s = 0; s < ns && dups; s++) {
        if (t[s].n2 > 0 && t[s].dup > 0)
            DQ_TEXT(o, "generic.dups", "strategy=%s n=%" PRIu64 " s=%s "
                    "trials=%zu of=%zu ", names[s], t[s].dup,
                    dq_s(t[s].dup), t[s].dup_trials, t[s].n2);
        else if (t[s].n2 > 0)
            clean[nclean++] = s;
    }
    if (nclean > 0) {
        dq_join_and(names, clean, nclean, list, sizeof list);
        DQ_TEXTP(o, nclean == ns, "generic.no_dups_all", "generic.no_dups",
                 "list=%s ", list);
    }
    for (size_t s = 0; s < ns; s++) {
        if (t[s].races > 0)
            DQ_TCAT(o->texts, list, sizeof list, &off, "generic.race",
                    "%sstrategy=%s races=%" PRIu64 " per=%.2f", off ? ", "
                    : "", names[s], t[s].races, t[s].delivered ?
                    (double)t[s].races / (double)t[s].delivered : 0);
        bad += t[s].lost + t[s].early;
    }
    if (off > 0)
        DQ_TEXT(o, "generic.races", "list=%s ", list);
    if (bad == 0)
        DQ_TEXT(o, "generic.no_loss", " ");
    for (size_t s = 0; s < ns; s++) {
        if (t[s].lost > 0)
            DQ_TEXT(o, "generic.lost", "strategy=%s n=%" PRIu64 " s=%s "
                    "trials=%zu ts=%s ", names[s], t[s].lost,
                    dq_s(t[s].lost), t[s].lost_trials,
                    dq_s(t[s].lost_trials));
        if (t[s].early > 0)
            DQ_TEXT(o, "generic.early", "strategy=%s n=%" PRIu64 " s=%s ",
                    names[s], t[s].early, dq_s(t[s].early));
    }
}

/* Throughput from the fewest to the most consumers, and who reached the
 * rate at which tasks fall due (delay_max - delay_min caps the delivery
 * rate whatever the strategy). */
static void said_throughput(dq_md *o, const dq_rexp *e, char names[][32],
                            const tally *t, size_t ns, int minc, int maxc)
{
    char list[1024] = "";
    size_t off = 0, nat = 0;
    if (maxc > minc) {
        for (size_t s = 0; s < ns; s++)
            if (t[s].lo >= 0 && t[s].hi >= 0)
                DQ_TCAT(o->texts, list, sizeof list, &off,
                        "generic.tp_item", "%s strategy=%s lo=%.0f "
                        "hi=%.0f", s ? "," : "", names[s], t[s].lo, t[s].hi);
        DQ_TEXT(o, "generic.tp_range", "min=%d max=%d list=%s ", minc,
                maxc, list);
        off = 0;
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
        if (t[s].best < 0.9 * cap)
            continue;
        nat++;
        dq_append(list, sizeof list, &off, "%s%s %.1f%%", off ? ", " : "",
                  names[s], 100.0 * t[s].best / cap);
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
    tally t[16];
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
    for (size_t s = 0; s < ns; s++)
        t[s] = tally_of(e, names[s], minc, maxc);
    DQ_TEXT(o, "generic.what_happened", " ");
    said_counts(o, names, t, ns, maxc >= 2);
    said_throughput(o, e, names, t, ns, minc, maxc);
    if (p99max > 0)
        DQ_TEXT(o, "generic.p99", "p99=%.1f strategy=%s consumers=%d s=%s",
                p99max, p99s, p99c, dq_s((uint64_t)p99c));
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
    if (s->kind && (rc = s->write(o, r, e, s, err, errlen)) < 0)
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

/* One claim's verdict, evidence and what it rests on. */
typedef struct {
    dq_verdict v;
    dq_claim_result res;
    char text[512], ev[4096];
} claim_out;

/* One claim's line of the claims table: id, verdict, sample, interval,
 * the claim linked to its evidence below. */
static void claim_row(dq_md *o, const dq_claim_def *c, const claim_out *x)
{
    char link[768], none[64] = "";
    DQ_TBUF(o, none, "generic.claim_none", "");
    const char *cells[5] = {c->id, dq_verdict_name(x->v),
                            x->res.sample[0] ? x->res.sample : none,
                            x->res.interval[0] ? x->res.interval : none,
                            link};
    snprintf(link, sizeof link, "[%s](#claim-%s)", x->text, c->id);
    dq_mdcells(o, false, cells, 5);
}

/* One claim's evidence item, with its anchor and its figure's link. */
static void claim_item(dq_md *o, const dq_claim_def *c, const claim_out *x)
{
    char fig[256] = "", id[32];
    if (x->res.figure[0])
        DQ_TBUF(o, fig, "generic.claim_figure", "  anchor=%s",
                x->res.figure);
    snprintf(id, sizeof id, "claim-%s", c->id);
    dq_anchor(o, id);
    DQ_TEXT(o, "generic.claim_item", "id=%s verdict=%s text=%s "
            "evidence=%s fig=%s\n\n", c->id, dq_verdict_name(x->v), x->text,
            x->ev, fig);
}

void dq_section_claims(dq_md *o, const dq_results *r)
{
    size_t n = 0;
    while (dq_claims[n].id)
        n++;
    claim_out *x = calloc(n + 1, sizeof *x);
    DQ_TEXT(o, "generic.claims_head", "\n\n");
    if (x == NULL) {
        dq_put(o, "(out of memory)\n\n");
        return;
    }
    dq_head(o, "id|verdict|sample|interval|claim");
    for (size_t i = 0; i < n; i++) {
        x[i].v = dq_claim_decide(&dq_claims[i], r, o->texts, x[i].ev,
                                 sizeof x[i].ev, &x[i].res);
        /* the figure's sentence follows the evidence */
        for (size_t k = strlen(x[i].ev); k > 0 && x[i].ev[k - 1] == ' ';)
            x[i].ev[--k] = '\0';
        dq_tcat(o->texts, x[i].text, sizeof x[i].text, &(size_t){0},
                dq_claims[i].text, "");
        claim_row(o, &dq_claims[i], &x[i]);
    }
    dq_table_end(o);
    for (size_t i = 0; i < n; i++)
        claim_item(o, &dq_claims[i], &x[i]);
    dq_put(o, "\n");
    free(x);
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
