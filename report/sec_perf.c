/* sec_perf.c -- the report's Performance section, from `dqlab bench`
 * (the bench part of the results model, results_bench.c).
 *
 * What it shows, every number computed from the bench CSVs:
 *   - the ceiling: pipelined ZADD / ZPOPMIN rates of the same server in the
 *     same run (dqlab's hiredis loop, and redis-benchmark when it ran);
 *   - throughput: enqueue-only and end-to-end (enqueue to ack, every event
 *     logged and checked) tasks/s per strategy and consumer count, medians
 *     of the repeats, the best as a fraction of the ZADD ceiling, Redis
 *     commands and server CPU per task; the heap's figure is the harness's
 *     own ceiling;
 *   - backlog scaling: claim latency p50/p99 against the number of pending
 *     tasks on log axes, memory per pending task, enqueue cost, and whether
 *     the growth from the smallest to the largest backlog stays within
 *     log N (ratio of p50s against the ratio of the logarithms);
 *   - lateness under load: p99 lateness against the offered rate until each
 *     strategy saturates.  Its tasks are due at once, so it measures
 *     delivery under load, not timer accuracy; strategies whose due-now
 *     path skips their timer (expiry: ready list, no keyspace event) are
 *     named, with their lateness-experiment p99 when that run exists, and
 *     the targets do not judge their timer from it;
 *   - the targets, each met or not, with the measured value.
 * Figures: figures/bench-{throughput,backlog,lateness-load}.{svg,png}.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/experiment.h"
#include "../strategies/dq.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* Names of strategies and variants: up to NAMELEN - 1 bytes. */
#define NAMELEN 64
#define META(k) dq_meta_get(&p->meta, k)

/* Distinct names of the rows of which, first-seen order: 'b' backlog
 * strategies, 'l' lateness strategies, else the labels of the throughput
 * rows of kind which ("e2e"). */
static size_t names_of(const dq_perf *p, const char *which,
                       char names[][NAMELEN], size_t max)
{
    size_t n = 0;
    size_t total = which[0] == 'b' ? p->nbl : which[0] == 'l' ? p->nlat
                                                                : p->ntp;
    for (size_t i = 0; i < total; i++) {
        char s[NAMELEN + 192];
        size_t j = 0;
        if (which[0] == 'b')
            snprintf(s, sizeof s, "%s", p->bl[i].strategy);
        else if (which[0] == 'l')
            snprintf(s, sizeof s, "%s", p->lat[i].strategy);
        else if (strcmp(p->tp[i].kind, which) == 0)
            dq_perf_tp_label(&p->tp[i], s, sizeof s);
        else
            continue;
        while (j < n && strcmp(names[j], s) != 0)
            j++;
        if (j == n && n < max)
            snprintf(names[n++], NAMELEN, "%s", s);
    }
    return n;
}

/* A bench figure: the wide CSV of the series names and suffixes, drawn as
 * figures/bench-<kind> with <script>.gp.  0 or -1 with err. */
typedef struct {
    const dq_perf *p;
    char (*names)[NAMELEN];
} perf_ctx;

static int perf_figure(dq_md *o, const char *kind, const char *script,
                       const char *xname, const dq_perf *p,
                       char names[][NAMELEN], size_t ns,
                       const char *const *sufs, size_t nsufs,
                       const int64_t *xs, size_t nx, dq_wide_cell_fn cell,
                       char *err, size_t errlen)
{
    perf_ctx c = {p, names};
    char *buf, stem[64];
    size_t len;
    if (dq_wide_csv(&buf, &len, xname, names[0], NAMELEN, ns, sufs, nsufs,
                    xs, nx, cell, &c, err, errlen) != 0)
        return -1;
    snprintf(stem, sizeof stem, "bench-%s", kind);
    int rc = dq_figure(o, stem, script, buf, len, true, err, errlen);
    free(buf);
    return rc;
}

/* Starts a subsection: its heading (text title), the names of the
 * `which` rows (names_of, at most 32); with none, "Not measured in this
 * run." and 0. */
static size_t subsection(dq_md *o, const dq_tuse *title, const dq_perf *p,
                         const char *which, char names[][NAMELEN])
{
    size_t ns = names_of(p, which, names, 32);
    dq_text(o, title, "\n\n");
    if (ns == 0)
        DQ_TEXT(o, "perf.not_measured", "\n\n");
    return ns;
}

/* True when the strategy of a label ("name" or "name options") does not
 * use Redis (the heap): a fraction of the Redis ceiling means nothing. */
static bool no_redis(const char *label)
{
    char name[NAMELEN];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(label, " "), label);
    const dq_strategy *st = dq_strategy_find(name);
    return st != NULL && !(st->flags & DQ_G_NEEDS_REDIS);
}

static void fmt_rate(char *buf, size_t len, double v)
{
    dq_fmt_double(buf, len, v, 0);
}

static void write_ceiling(dq_md *o, const dq_perf *p)
{
    static const dq_tuse by[] DQ_TUSES = {{"perf.by_dqlab", ""},
                                          {"perf.by_rb", ""}};
    const struct {
        const char *cmd;
        const dq_tuse *src;
        double v;
    } rows[] = {{"ZADD", &by[0], p->zadd_per_s},
                {"ZPOPMIN", &by[0], p->zpopmin_per_s},
                {"ZADD", &by[1], p->rb_zadd_per_s},
                {"ZPOPMIN", &by[1], p->rb_zpopmin_per_s}};
    char rb[256] = "";
    DQ_TEXT(o, "perf.ceiling", "\n\n");
    if (p->zadd_per_s < 0 && p->rb_zadd_per_s < 0) {
        DQ_TEXT(o, "perf.ceiling_none", "\n\n");
        return;
    }
    dq_head(o, "command|measured by|operations|pipeline|per second");
    for (size_t i = 0; i < 4; i++) {
        char v[64], src[64] = "";
        fmt_rate(v, sizeof v, rows[i].v);
        dq_tcat(o->texts, src, sizeof src, &(size_t){0}, rows[i].src, "");
        if (rows[i].v >= 0)
            dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%" PRId64
                       DQ_CELL "%d" DQ_CELL "%s", rows[i].cmd, src,
                       p->ceiling_ops, p->ceiling_pipeline, v);
    }
    dq_table_end(o);
    if (p->rb_zadd_per_s < 0)
        DQ_TCAT(o->texts, rb, sizeof rb, &(size_t){0}, "perf.no_rb", "%s",
                "  ");
    if (p->zadd_per_s < 0)
        DQ_TEXT(o, "perf.ceiling_unmeasured", "\n\n");
    else
        DQ_TEXT(o, "perf.ceiling_note", "zadd=%.0f rb=%s\n\n",
                p->zadd_per_s, rb);
}

/* dq_wide_cell_fn of the throughput figure: end-to-end tasks/s of label s
 * at x consumers. */
static void throughput_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const perf_ctx *c = ctx;
    double v = dq_perf_e2e(c->p, c->names[s], (int)x, NULL);
    if (v >= 0)
        fprintf(f, "%.1f", v);
}

/* The median of v[0..n-1] as the bench table takes it (the upper middle),
 * or -1 when n is 0. */
static double upper_median(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n ? v[n / 2] : -1;
}

/* One row of the throughput table: enqueue, e2e per consumer count, the
 * best, its share of the ceiling, cost per task at the best count. */
static void throughput_row(dq_md *o, const dq_perf *p, const char *name,
                           const int64_t *xs, size_t nx)
{
    char row[2048], v[64];
    double cm[64], cu[64], best;
    size_t off = 0, ncm = 0, ncu = 0;
    int at = 0;
    fmt_rate(v, sizeof v, dq_perf_enqueue(p, name));
    dq_append(row, sizeof row, &off, "%s" DQ_CELL "%s", name, v);
    for (size_t x = 0; x < nx; x++) {
        fmt_rate(v, sizeof v, dq_perf_e2e(p, name, (int)xs[x], NULL));
        dq_append(row, sizeof row, &off, DQ_CELL "%s", v);
    }
    best = dq_perf_e2e(p, name, 0, &at);
    dq_append(row, sizeof row, &off, DQ_CELL "%.0f (%d cons.)", best, at);
    if (p->zadd_per_s > 0 && !no_redis(name))
        dq_append(row, sizeof row, &off, DQ_CELL "%.1f%%",
                  100 * best / p->zadd_per_s);
    else
        dq_append(row, sizeof row, &off, DQ_CELL "n/a");
    for (size_t i = 0; i < p->ntp && ncm < 64; i++) {
        const dq_perf_tp *t = &p->tp[i];
        char l[NAMELEN + 192];
        dq_perf_tp_label(t, l, sizeof l);
        if (strcmp(t->kind, "e2e") || strcmp(l, name) ||
            t->consumers != at || t->delivered == 0)
            continue;
        if (t->redis_commands >= 0)
            cm[ncm++] = (double)t->redis_commands / (double)t->delivered;
        if (t->redis_cpu_ms >= 0)
            cu[ncu++] = t->redis_cpu_ms * 1000 / (double)t->delivered;
    }
    dq_fmt_double(v, sizeof v, upper_median(cm, ncm), 1);
    dq_append(row, sizeof row, &off, DQ_CELL "%s", v);
    dq_fmt_double(v, sizeof v, upper_median(cu, ncu), 1);
    dq_row(o, "%s" DQ_CELL "%s", row, v);
}

/* What happened: the best Redis strategy, the heap as the harness's own
 * ceiling. */
static void throughput_said(dq_md *o, const dq_perf *p,
                            char names[][NAMELEN], size_t ns)
{
    double best_r = -1, heap = -1;
    const char *best_s = NULL;
    int best_at = 0;
    for (size_t s = 0; s < ns; s++) {
        int at = 0;
        double v = dq_perf_e2e(p, names[s], 0, &at);
        if (strcmp(names[s], "heap") == 0)
            heap = v;
        else if (v > best_r)
            best_r = v, best_s = names[s], best_at = at;
    }
    DQ_TEXT(o, "generic.what_happened", " ");
    if (best_s != NULL) {
        DQ_TEXT(o, "perf.fastest", "strategy=%s tps=%.0f consumers=%d",
                best_s, best_r, best_at);
        if (p->zadd_per_s > 0)
            DQ_TEXT(o, "perf.of_zadd", "pct=%.1f",
                    100 * best_r / p->zadd_per_s);
        dq_put(o, ". ");
    }
    if (heap > 0) {
        DQ_TEXT(o, "perf.heap", "tps=%.0f", heap);
        if (best_r > 0)
            DQ_TEXTP(o, heap >= 2 * best_r, "perf.heap_not_bottleneck",
                     "perf.heap_bottleneck", "x=%.1f", heap / best_r);
        dq_put(o, ". ");
    }
    dq_put(o, "\n\n");
}

static int write_throughput(dq_md *o, const dq_perf *p, char *err,
                            size_t errlen)
{
    char names[32][NAMELEN], head[1024];
    size_t ns = subsection(o, DQ_TUSE("perf.throughput", "\n\n"), p, "e2e",
                           names), nx = 0;
    size_t off;
    int64_t xs[16];
    if (ns == 0)
        return 0;
    for (size_t i = 0; i < p->ntp; i++)
        if (strcmp(p->tp[i].kind, "e2e") == 0)
            nx = dq_add_distinct_i64(xs, nx, 16, p->tp[i].consumers);
    dq_sort_i64(xs, nx);
    if (perf_figure(o, "throughput", "throughput", "consumers", p, names, ns,
                    NULL, 0, xs, nx, throughput_cell, err, errlen) != 0)
        return -1;
    DQ_TEXT(o, "perf.throughput_intro", "tasks=%s factor=%s producers=%s "
            "enqueue=%s repeats=%s variants=%s\n\n", META("tasks"),
            META("in_process_factor")[0] ? META("in_process_factor") : "1",
            META("producers"), META("enqueue_tasks"), META("repeats"),
            META("variant_factor")[0] ? META("variant_factor") : "1");
    off = (size_t)snprintf(head, sizeof head, "strategy|enqueue only /s");
    for (size_t x = 0; x < nx; x++)
        dq_append(head, sizeof head, &off, "|e2e /s, %d cons.", (int)xs[x]);
    dq_append(head, sizeof head, &off, "|best e2e /s|of ZADD ceiling|Redis "
              "cmds/task|server CPU us/task");
    dq_head(o, head);
    for (size_t s = 0; s < ns; s++)
        throughput_row(o, p, names[s], xs, nx);
    dq_table_end(o);
    DQ_TEXT(o, "perf.throughput_note", "\n\n");
    throughput_said(o, p, names, ns);
    return 0;
}

/* ln(a) / ln(b) */
static double log_ratio(int64_t a, int64_t b)
{
    return log((double)a) / log((double)b);
}

/* dq_wide_cell_fn of the backlog figure: claim p50 and p99 (us, two
 * cells) of strategy s with x pending.  Log axes: a 0 us claim (the heap,
 * below the clock's resolution) is drawn at 0.5 us. */
static void backlog_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const perf_ctx *c = ctx;
    const dq_perf_bl *b = dq_perf_backlog(c->p, c->names[s], x);
    if (b != NULL && b->claims > 0)
        fprintf(f, "%.2f,%.2f", fmax(b->claim_us_p50, 0.5),
                fmax(b->claim_us_p99, 0.5));
    else
        fputc(',', f);
}

static void backlog_table(dq_md *o, const dq_perf *p, char names[][NAMELEN],
                          size_t ns, const int64_t *xs, size_t nx)
{
    dq_head(o, "strategy|pending|claim p50 us|claim p99 us|claim max "
               "us|bytes/task|enqueue us (mean)|preload s");
    for (size_t s = 0; s < ns; s++)
        for (size_t x = 0; x < nx; x++) {
            const dq_perf_bl *b = dq_perf_backlog(p, names[s], xs[x]);
            char bytes[64];
            if (b == NULL)
                continue;
            dq_fmt_double(bytes, sizeof bytes, b->bytes_per_task, 0);
            dq_row(o, "%s" DQ_CELL "%" PRId64 DQ_CELL "%.0f"
                       DQ_CELL "%.0f" DQ_CELL "%.0f" DQ_CELL "%s" DQ_CELL
                       "%.1f" DQ_CELL "%.2f", b->strategy, b->backlog,
                       b->claim_us_p50, b->claim_us_p99, b->claim_us_max,
                       bytes, b->enqueue_us_mean, b->preload_s);
        }
    dq_table_end(o);
    DQ_TEXT(o, "generic.what_happened", " ");
    for (size_t s = 0; s < ns; s++) {
        const dq_perf_bl *lo, *hi;
        dq_perf_backlog_range(p, names[s], &lo, &hi);
        if (lo == NULL || hi == lo || lo->claim_us_p50 <= 0)
            continue;
        double r50 = hi->claim_us_p50 / lo->claim_us_p50;
        double r99 = lo->claim_us_p99 > 0
                         ? hi->claim_us_p99 / lo->claim_us_p99 : -1;
        double lr = log_ratio(hi->backlog, lo->backlog);
        DQ_TEXTP(o, r50 <= lr * 1.25, "perf.growth", "perf.growth_faster",
                 "strategy=%s lo=%" PRId64 " hi=%" PRId64 " x50=%.2f x99=%.2f "
                 "lr=%.2f ", names[s], lo->backlog, hi->backlog, r50, r99,
                 lr);
    }
    DQ_TEXT(o, "perf.growth_note", "\n\n");
}

static int write_backlog(dq_md *o, const dq_perf *p, char *err,
                         size_t errlen)
{
    static const char *const sufs[] = {" p50", " p99"};
    char names[32][NAMELEN];
    size_t ns = subsection(o, DQ_TUSE("perf.backlog", "\n\n"), p, "b",
                           names), nx = 0;
    int64_t xs[16];
    if (ns == 0)
        return 0;
    for (size_t i = 0; i < p->nbl; i++)
        nx = dq_add_distinct_i64(xs, nx, 16, p->bl[i].backlog);
    dq_sort_i64(xs, nx);
    if (perf_figure(o, "backlog", "perf_backlog", "pending", p, names, ns,
                    sufs, 2, xs, nx, backlog_cell, err, errlen) != 0)
        return -1;
    DQ_TEXT(o, "perf.backlog_intro", "rounds=%s claims=%s\n\n",
            META("backlog_rounds")[0] ? META("backlog_rounds") : "1",
            META("backlog_claims"));
    backlog_table(o, p, names, ns, xs, nx);
    return 0;
}

/* Strategies whose enqueue of an already-due task takes another path
 * than a task due later (strategies/<name>.c says so in its header), so
 * the bench's due-at-once tasks do not exercise their timer: the text
 * saying which, or NULL. */
static const dq_tuse *due_now_path(const char *strategy)
{
    return strcmp(strategy, "expiry") == 0
               ? DQ_TUSE("perf.due_now_expiry", "") : NULL;
}

/* The largest median p99 lateness (ms) of strategy in the lateness
 * experiment (tasks due ahead), or -1 when not run. */
static double lateness_exp_p99(const dq_results *r, const char *strategy)
{
    const dq_rexp *e = dq_results_find(r, "lateness");
    double v = -1;
    for (size_t i = 0; e != NULL && i < e->ngroups; i++)
        if (strcmp(e->groups[i].strategy, strategy) == 0 &&
            e->groups[i].p99_median > v)
            v = e->groups[i].p99_median;
    return v;
}

/* dq_wide_cell_fn of the lateness-load figure: p99 lateness (ms) of
 * strategy s at x offered tasks/s, the last such row; drawn at 0.01 ms at
 * least (log axis). */
static void lateness_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const perf_ctx *c = ctx;
    const dq_perf_lat *l = NULL;
    for (size_t i = 0; i < c->p->nlat; i++)
        if (strcmp(c->p->lat[i].strategy, c->names[s]) == 0 &&
            c->p->lat[i].offered_per_s == x)
            l = &c->p->lat[i];
    if (l != NULL)
        fprintf(f, "%.3f", fmax(l->p99_ms, 0.01));
}

static void lateness_table(dq_md *o, const dq_perf *p, char names[][NAMELEN],
                           size_t ns)
{
    dq_head(o, "strategy|offered /s|sent /s|delivered /s|p50 ms|p99 ms|max "
               "ms|lost|duplicates|saturated");
    for (size_t i = 0; i < p->nlat; i++) {
        const dq_perf_lat *l = &p->lat[i];
        dq_row(o, "%s" DQ_CELL "%" PRId64 DQ_CELL "%.0f" DQ_CELL
                   "%.0f" DQ_CELL "%.2f" DQ_CELL "%.2f" DQ_CELL "%.2f"
                   DQ_CELL "%" PRIu64 DQ_CELL "%" PRIu64 DQ_CELL "%s",
                   l->strategy, l->offered_per_s, l->sent_per_s,
                   l->delivered_per_s, l->p50_ms, l->p99_ms, l->max_ms,
                   l->lost, l->duplicates, l->saturated ? "yes" : "no");
    }
    dq_table_end(o);
    DQ_TEXT(o, "generic.what_happened", " ");
    for (size_t s = 0; s < ns; s++) {
        int64_t ok = -1, sat = -1;
        for (size_t i = 0; i < p->nlat; i++) {
            const dq_perf_lat *l = &p->lat[i];
            if (strcmp(l->strategy, names[s]) != 0)
                continue;
            if (l->saturated && sat < 0)
                sat = l->offered_per_s;
            else if (!l->saturated && l->offered_per_s > ok)
                ok = l->offered_per_s;
        }
        dq_put(o, "%s ", names[s]);
        if (ok > 0 && sat > 0)
            DQ_TEXT(o, "perf.kept_up_sat", "rate=%" PRId64 " sat=%" PRId64,
                    ok, sat);
        else if (ok > 0)
            DQ_TEXT(o, "perf.kept_up_not_sat", "rate=%" PRId64, ok);
        else if (sat > 0)
            DQ_TEXT(o, "perf.saturated", "sat=%" PRId64, sat);
        else
            DQ_TEXT(o, "perf.not_saturated", "");
        dq_put(o, "%s", s + 1 < ns ? "; " : ".\n\n");
    }
}

static int write_lateness(dq_md *o, const dq_perf *p, const dq_results *r,
                          char *err, size_t errlen)
{
    char names[32][NAMELEN];
    size_t ns = subsection(o, DQ_TUSE("perf.lateness", "\n\n"), p, "l",
                           names), nx = 0;
    int64_t xs[16];
    if (ns == 0)
        return 0;
    for (size_t i = 0; i < p->nlat; i++)
        nx = dq_add_distinct_i64(xs, nx, 16, p->lat[i].offered_per_s);
    dq_sort_i64(xs, nx);
    if (perf_figure(o, "lateness-load", "perf_lateness", "offered", p, names,
                    ns, NULL, 0, xs, nx, lateness_cell, err, errlen) != 0)
        return -1;
    DQ_TEXT(o, "perf.lateness_intro", "producers=%s ms=%s consumers=%s"
            "\n\n", META("lateness_producers"), META("lateness_ms"),
            META("lateness_consumers"));
    DQ_TEXT(o, "perf.due_at_once", "");
    for (size_t s = 0; s < ns; s++) {
        double lp = lateness_exp_p99(r, names[s]);
        char ref[256] = "", path[256] = "";
        if (due_now_path(names[s]) == NULL)
            continue;
        if (lp >= 0)
            DQ_TBUF(o, ref, "perf.due_ahead", "p99=%.1f", lp);
        dq_tcat(o->texts, path, sizeof path, &(size_t){0},
                due_now_path(names[s]), "");
        DQ_TEXT(o, "perf.due_now", "  strategy=%s path=%s ref=%s",
                names[s], path, ref);
    }
    dq_put(o, "\n\n");
    lateness_table(o, p, names, ns);
    return 0;
}

/* True when the options of a throughput row claim one task per round
 * trip: no "batch=N" option other than batch=1 (enqueue_batch is the
 * producers' side and does not count). */
static bool claim_batch_one(const char *options)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", options);
    for (char *save = NULL, *t = strtok_r(buf, ";", &save); t;
         t = strtok_r(NULL, ";", &save))
        if (strncmp(t, "batch=", 6) == 0 && strcmp(t + 6, "1") != 0)
            return false;
    return true;
}

/* The best median e2e tasks/s over the variants of strategy (NULL: every
 * Redis strategy, i.e. all but heap) that pass keep (NULL: all), at
 * `consumers` (0: any count).  The variant's label goes to label, its
 * consumer count to *at.  -1 when none was measured. */
static double best_variant(const dq_perf *p, const char *strategy,
                           bool (*keep)(const char *options), int consumers,
                           char *label, size_t len, int *at)
{
    double best = -1;
    snprintf(label, len, "n/a");
    for (size_t i = 0; i < p->ntp; i++) {
        const dq_perf_tp *t = &p->tp[i];
        char l[NAMELEN + 192];
        int a = consumers;
        if (strcmp(t->kind, "e2e") != 0 ||
            (strategy == NULL ? strcmp(t->strategy, "heap") == 0
                              : strcmp(t->strategy, strategy) != 0) ||
            (keep != NULL && !keep(t->options)))
            continue;
        dq_perf_tp_label(t, l, sizeof l);
        double v = dq_perf_e2e(p, l, consumers, consumers ? NULL : &a);
        if (v > best) {
            best = v;
            snprintf(label, len, "%s", l);
            if (at != NULL)
                *at = a;
        }
    }
    return best;
}

/* The verdict text of a target: not measured (v < 0), met or not. */
static const dq_tuse *met(double v, bool ok)
{
    static const dq_tuse verdicts[] DQ_TUSES = {
        {"perf.not_measured_v", ""}, {"perf.met", ""}, {"perf.not_met", ""}};
    return &verdicts[v < 0 ? 0 : ok ? 1 : 2];
}

/* One row of the targets table: what (a text), measured, the verdict (a
 * text, or the rendered v when NULL). */
static void target(dq_md *o, const dq_tuse *what, const char *w,
                   const char *m, const dq_tuse *verdict, const char *v)
{
    char wb[256] = "", vb[256] = "";
    if (w == NULL)
        dq_tcat(o->texts, wb, sizeof wb, &(size_t){0}, what, "");
    if (v == NULL)
        dq_tcat(o->texts, vb, sizeof vb, &(size_t){0}, verdict, "");
    dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%s", w ? w : wb, m, v ? v : vb);
}

/* The throughput targets: the best Redis strategy, lua with one claim per
 * round trip, the heap.  A measured cell "n/a" when not measured. */
static void targets_speed(dq_md *o, const dq_perf *p, bool heap)
{
    char m[4][256] = {"n/a", "n/a", "n/a", "n/a"}, lb[NAMELEN + 192];
    int at = 0;
    if (heap) {
        double h = best_variant(p, "heap", NULL, 0, lb, sizeof lb, &at);
        if (h >= 0)
            DQ_TCAT(o->texts, m[0], 256, &(size_t){0}, "perf.m_tps_at",
                    "tps=%.0f consumers=%d", h, at);
        target(o, DQ_TUSE("perf.t_heap", ""), NULL, m[0], met(h, h >= 1e6),
               NULL);
        return;
    }
    double best = best_variant(p, NULL, NULL, 0, lb, sizeof lb, &at);
    if (best >= 0)
        DQ_TCAT(o->texts, m[1], 256, &(size_t){0}, "perf.m_tps_label_at",
                "tps=%.0f label=%s consumers=%d", best, lb, at);
    target(o, DQ_TUSE("perf.t_best", ""), NULL, m[1],
           met(best, best >= 150000), NULL);
    double frac = best >= 0 && p->zadd_per_s > 0 ? best / p->zadd_per_s : -1;
    if (frac >= 0)
        DQ_TCAT(o->texts, m[2], 256, &(size_t){0}, "perf.m_pct", "pct=%.1f "
                "tps=%.0f zadd=%.0f", 100 * frac, best, p->zadd_per_s);
    target(o, DQ_TUSE("perf.t_zadd", ""), NULL, m[2], met(frac, frac >= 0.3),
           NULL);
    double lua4 = best_variant(p, "lua", claim_batch_one, 4, lb, sizeof lb,
                               NULL);
    if (lua4 >= 0)
        DQ_TCAT(o->texts, m[3], 256, &(size_t){0}, "perf.m_tps_label",
                "tps=%.0f label=%s", lua4, lb);
    target(o, DQ_TUSE("perf.t_lua", ""), NULL, m[3],
           met(lua4, lua4 >= 30000), NULL);
}

/* The lateness targets at 200 tasks/s, by the declared flags: a strategy
 * that blocks until a task is due is held to 2 ms, a polling one to its
 * default poll_ms; one whose due-now path skips its timer is not judged
 * from the bench. */
static void targets_lateness(dq_md *o, const dq_perf *p, const dq_results *r)
{
    for (size_t i = 0; i < p->nlat; i++) {
        const dq_perf_lat *l = &p->lat[i];
        const dq_strategy *st = dq_strategy_find(l->strategy);
        bool blocking = st != NULL && (st->flags & DQ_G_BLOCKS);
        int64_t poll = 100;
        char t[256] = "", m[512] = "", v[256] = "";
        double lp = lateness_exp_p99(r, l->strategy);
        if (l->offered_per_s != 200)
            continue;
        for (size_t k = 0; st && dq_strategy_option(st, k) != NULL; k++)
            if (strcmp(dq_strategy_option(st, k)->name, "poll_ms") == 0)
                poll = strtoll(dq_strategy_option(st, k)->def, NULL, 10);
        if (blocking)
            DQ_TBUF(o, t, "perf.t_blocks", "strategy=%s", l->strategy);
        else
            DQ_TBUFP(o, t, due_now_path(l->strategy) != NULL,
                     "perf.t_polls_2ms", "perf.t_polls", "strategy=%s",
                     l->strategy);
        if (due_now_path(l->strategy) != NULL && lp >= 0)
            DQ_TBUF(o, m, "perf.m_due_now_ahead", "p99=%.2f ahead=%.1f",
                    l->p99_ms, lp);
        else if (due_now_path(l->strategy) != NULL)
            DQ_TBUF(o, m, "perf.m_due_now", "p99=%.2f", l->p99_ms);
        else
            DQ_TBUF(o, m, "perf.m_p99", "p99=%.2f", l->p99_ms);
        if (due_now_path(l->strategy) != NULL)
            DQ_TBUF(o, v, "perf.v_not_judged", "");
        else if (blocking)
            dq_tcat(o->texts, v, sizeof v, &(size_t){0},
                    met(l->p99_ms, l->p99_ms < 2), "");
        else
            DQ_TBUFP(o, v, l->p99_ms <= (double)poll, "perf.v_within",
                     "perf.v_beyond", "ms=%" PRId64, poll);
        target(o, NULL, t, m, NULL, v);
    }
}

/* 1,000,000 pending: claim p99 <= 3x of 1,000 pending, every ZSet
 * strategy; judged only at 1,000,000 (a smaller largest backlog is
 * information only). */
static void targets_backlog(dq_md *o, const dq_perf *p)
{
    char names[32][NAMELEN], m[256] = "", v[256] = "";
    size_t ns = names_of(p, "b", names, 32);
    int64_t maxn = 0;
    double worst = -1;
    const char *ws = "";
    for (size_t s = 0; s < ns; s++) {
        const dq_perf_bl *lo, *hi;
        if (strcmp(names[s], "heap") == 0)
            continue;
        dq_perf_backlog_range(p, names[s], &lo, &hi);
        if (lo == NULL || hi == lo || lo->claim_us_p99 <= 0)
            continue;
        maxn = hi->backlog > maxn ? hi->backlog : maxn;
        if (hi->claim_us_p99 / lo->claim_us_p99 > worst)
            worst = hi->claim_us_p99 / lo->claim_us_p99, ws = names[s];
    }
    if (worst >= 0 && maxn < 1000000)
        DQ_TBUF(o, m, "perf.m_backlog_small", "n=%" PRId64 " worst=%.2f "
                "strategy=%s", maxn, worst, ws);
    else if (worst >= 0)
        DQ_TBUF(o, m, "perf.m_backlog", "worst=%.2f strategy=%s n=%" PRId64,
                worst, ws, maxn);
    else
        snprintf(m, sizeof m, "n/a");
    if (worst >= 0 && maxn < 1000000)
        DQ_TBUF(o, v, "perf.v_backlog_small", "n=%" PRId64, maxn);
    else
        dq_tcat(o->texts, v, sizeof v, &(size_t){0},
                met(worst, worst <= 3), "");
    target(o, DQ_TUSE("perf.t_backlog", ""), NULL, m, NULL, v);
}

static void write_targets(dq_md *o, const dq_perf *p, const dq_results *r)
{
    DQ_TEXT(o, "perf.targets", "\n\n");
    DQ_TEXT(o, "perf.targets_intro", "\n\n");
    dq_head(o, "target|measured (median)|verdict");
    targets_speed(o, p, false);
    targets_lateness(o, p, r);
    targets_speed(o, p, true);
    targets_backlog(o, p);
    dq_table_end(o);
}

/* ---- Cost per operation of the in-process strategies (`dqlab opcost`) */

/* Each strategy and mix from its smallest to its largest n: the growth of
 * the median ns per operation against log n's. */
static void opcost_said(dq_md *o, const dq_opcost *oc)
{
    const char *done[16][2];
    size_t nd = 0, k;
    DQ_TEXT(o, "generic.what_happened", " ");
    for (size_t i = 0; i < oc->n && nd < 16; i++) {
        const dq_opcost_row *lo, *hi, *x = &oc->rows[i];
        for (k = 0; k < nd && !(strcmp(done[k][0], x->strategy) == 0 &&
                                strcmp(done[k][1], x->mix) == 0);)
            k++;
        if (k < nd)
            continue;
        done[nd][0] = x->strategy;
        done[nd++][1] = x->mix;
        dq_opcost_range(oc, x->strategy, x->mix, &lo, &hi);
        if (lo != NULL && hi != lo && lo->ns_median > 0)
            DQ_TEXT(o, "perf.opcost_growth", "strategy=%s mix=%s lo_n=%"
                    PRId64 " lo=%.0f hi_n=%" PRId64 " hi=%.0f x=%.2f "
                    "lr=%.2f ", x->strategy, x->mix, lo->n, lo->ns_median,
                    hi->n, hi->ns_median, hi->ns_median / lo->ns_median,
                    log_ratio(hi->n, lo->n));
    }
    dq_put(o, "\n\n");
}

/* The figure and table of `dqlab opcost` (results/opcost/latest), when
 * there is a run: the in-process strategies' cost per operation against
 * the pending tasks (C17's O(log n) half). */
static int write_opcost(dq_md *o, const dq_results *r, char *err,
                        size_t errlen)
{
    const dq_opcost *oc = &r->opcost;
    char *buf;
    size_t len;
    if (!oc->present)
        return 0;
    FILE *f = dq_mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    fputs("strategy,mix,n,ops,ns_per_op_median,ns_per_op_min,"
          "ns_per_op_max\n", f);
    for (size_t i = 0; i < oc->n; i++) {
        const dq_opcost_row *x = &oc->rows[i];
        fprintf(f, "%s,%s,%" PRId64 ",%" PRId64 ",%.2f,%.2f,%.2f\n",
                x->strategy, x->mix, x->n, x->ops, x->ns_median, x->ns_min,
                x->ns_max);
    }
    fclose(f);
    DQ_TEXT(o, "perf.opcost_head", "command=%s date=%s\n\n",
            dq_meta_get(&oc->meta, "command"), dq_meta_get(&oc->meta, "date"));
    int rc = dq_figure(o, "opcost", "opcost", buf, len, true, err, errlen);
    free(buf);
    if (rc != 0)
        return -1;
    DQ_TEXT(o, "perf.opcost_caption", "\n\n");
    dq_head(o, "strategy|mix|pending n|operations per repeat|ns per "
               "operation (median)|min-max of the repeats");
    for (size_t i = 0; i < oc->n; i++) {
        const dq_opcost_row *x = &oc->rows[i];
        dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%" PRId64 DQ_CELL "%" PRId64
               DQ_CELL "%.1f" DQ_CELL "%.1f-%.1f", x->strategy, x->mix, x->n,
               x->ops, x->ns_median, x->ns_min, x->ns_max);
    }
    dq_table_end(o);
    opcost_said(o, oc);
    dq_raw(o, oc->dir, "opcost.csv, meta.txt");
    return 0;
}

int dq_section_perf(dq_md *o, const dq_results *r, char *err, size_t errlen)
{
    const dq_perf *p = &r->bench;
    char where[1024] = "", failed[256] = "";
    DQ_TEXT(o, "perf.head", "\n\n");
    if (write_opcost(o, r, err, errlen) != 0)
        return -1;
    if (!p->present) {
        DQ_TEXT(o, "perf.none", "root=%s\n\n", r->root);
        return 0;
    }
    /* A private server's port is a throwaway: name it without one.  A
     * --redis target is already redacted by bench (host:port, no
     * password); redacted again here for older runs. */
    if (strncmp(META("redis"), "private", 7) == 0)
        DQ_TBUF(o, where, "perf.private", "");
    else
        dq_redact_redis_urls(META("redis"), where, sizeof where);
    if (strcmp(META("unit_errors"), "0") != 0)
        DQ_TBUF(o, failed, "perf.failed", "%s", "  ");
    DQ_TEXT(o, "perf.intro", "command=%s level=%s cores=%s host=%s "
            "redis=%s where=%s date=%s failed=%s\n\n", META("command"),
            META("level"), META("cores"), META("hostname"),
            META("redis_version"), where, META("date"), failed);
    write_ceiling(o, p);
    if (write_throughput(o, p, err, errlen) != 0 ||
        write_backlog(o, p, err, errlen) != 0 ||
        write_lateness(o, p, r, err, errlen) != 0)
        return -1;
    write_targets(o, p, r);
    dq_raw(o, p->dir, "ceiling.csv, throughput.csv, backlog.csv, "
              "lateness.csv, meta.txt");
    return 0;
}
