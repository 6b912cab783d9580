/* sec_perf.c -- the report's Performance section, from `dqlab bench`
 * (the bench part of the results model, results_bench.c).
 *
 * What it shows, every number from the bench's files (harness/bench.h):
 *   - the references: each redis-benchmark run of references.csv as it
 *     ran (ops/s, Redis CPU per op), and dqlab's own pipelined loop of
 *     ceiling.csv, labelled as dqlab's;
 *   - throughput: enqueue-only and end-to-end tasks/s per strategy and
 *     consumer count (medians of the repeats), the best as a share of the
 *     matching redis-benchmark reference of the same run (one claim per
 *     round trip: -t zadd -c 4; batched claims: -t zadd -c 1 -P 100),
 *     Redis commands and server CPU per task; the harness's own ceiling
 *     (harness.csv, the no-op queue) in events/s;
 *   - backlog scaling: claim latency p50/p99 against pending tasks;
 *   - lateness under load: p99 against the offered rate, one row per run
 *     (the bench runs some rates more than once), and where each strategy
 *     saturates as targets.csv says;
 *   - the targets: targets.csv as the bench wrote it.  The bench decides
 *     met / not met; this file only words and formats its rows.
 * Parts an older run lacks (references.csv, harness.csv, targets.csv)
 * are said to be not measured, with how to measure them.
 * Figures: figures/bench-{throughput,backlog,lateness-load}.{svg,png}.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/experiment.h" /* dq_redact_redis_urls */
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
 * use Redis (DQ_G_NEEDS_REDIS unset: heap, wheel): a share of a Redis
 * reference means nothing for it. */
static bool no_redis(const char *label)
{
    char name[NAMELEN];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(label, " "), label);
    const dq_strategy *st = dq_strategy_find(name);
    return st != NULL && !(st->flags & DQ_G_NEEDS_REDIS);
}

/* True when a label's options claim more than one task per round trip:
 * a "batch=N" word other than batch=1 (enqueue_batch is the producers'
 * side and does not count). */
static bool label_batched(const char *label)
{
    for (const char *w = label; *w; w += strcspn(w, " "), w += *w == ' ')
        if (strncmp(w, "batch=", 6) == 0 && strncmp(w, "batch=1 ", 8) != 0 &&
            strcmp(w, "batch=1") != 0)
            return true;
    return false;
}

/* The redis-benchmark reference a label's throughput is a share of: the
 * median ops/s of zadd-c4 (one claim per round trip) or zadd-c1-p100
 * (batched claims) over the run, -1 when not measured; *which names it
 * (the reference id). */
static double reference_of(const dq_perf *p, const char *label,
                           const char **which)
{
    *which = label_batched(label) ? "zadd-c1-p100" : "zadd-c4";
    return dq_perf_ref_median(p, *which, NULL, NULL);
}

static void fmt_rate(char *buf, size_t len, double v)
{
    dq_fmt_double(buf, len, v, 0);
}

/* references.csv as it ran: the yardsticks of the shares below. */
static void write_references(dq_md *o, const dq_perf *p)
{
    char c4[64], p100[64];
    size_t n4 = 0, n100 = 0;
    DQ_TEXT(o, "perf.refs", "\n\n");
    if (!p->has[DQ_PERF_REF]) {
        DQ_TEXT(o, "perf.rerun", "\n\n");
        return;
    }
    dq_head(o, "reference|when|command (host and port left out)|clients|"
               "pipeline|requests|ops/s|Redis CPU us/op");
    for (size_t i = 0; i < p->nref; i++) {
        const dq_perf_ref *r = &p->ref[i];
        char v[64], cpu[64];
        fmt_rate(v, sizeof v, r->ops_per_s);
        dq_fmt_double(cpu, sizeof cpu, r->cpu_us_per_op, 1);
        dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%d" DQ_CELL "%d"
               DQ_CELL "%" PRId64 DQ_CELL "%s" DQ_CELL "%s", r->reference,
               r->when, r->command, r->clients, r->pipeline, r->requests, v,
               cpu);
    }
    dq_table_end(o);
    fmt_rate(c4, sizeof c4, dq_perf_ref_median(p, "zadd-c4", &n4, NULL));
    fmt_rate(p100, sizeof p100,
             dq_perf_ref_median(p, "zadd-c1-p100", &n100, NULL));
    DQ_TEXT(o, "perf.refs_note", "c4=%s n4=%zu p100=%s n100=%zu\n\n", c4,
            n4, p100, n100);
}

/* ceiling.csv: dqlab's own pipelined loop (and redis-benchmark's
 * -t zadd,zpopmin run it is set beside), information only. */
static void write_ceiling(dq_md *o, const dq_perf *p)
{
    static const dq_tuse by[] DQ_TUSES = {{"perf.by_dqlab", ""},
                                          {"perf.by_rb", ""}};
    DQ_TEXT(o, "perf.ceiling", "\n\n");
    if (p->nceiling == 0) {
        DQ_TEXT(o, "perf.ceiling_none", "\n\n");
        return;
    }
    dq_head(o, "command|measured by|operations|pipeline|per second");
    for (size_t i = 0; i < p->nceiling; i++) {
        const dq_perf_ceiling *c = &p->ceiling[i];
        bool rb = strcmp(c->source, "redis-benchmark") == 0;
        char v[64], src[128] = "", cmd[16];
        fmt_rate(v, sizeof v, c->ops_per_s);
        dq_tcat(o->texts, src, sizeof src, &(size_t){0}, &by[rb], "");
        snprintf(cmd, sizeof cmd, "%s", c->measure);
        for (char *k = cmd; *k; k++)
            *k = (char)(*k >= 'a' && *k <= 'z' ? *k - 32 : *k);
        dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%" PRId64 DQ_CELL "%d" DQ_CELL
               "%s", cmd, src, c->ops, c->pipeline, v);
    }
    dq_table_end(o);
    DQ_TEXT(o, "perf.ceiling_note", "\n\n");
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
    const char *which;
    double ref = reference_of(p, name, &which);
    if (ref > 0 && best >= 0 && !no_redis(name))
        dq_append(row, sizeof row, &off, DQ_CELL "%.1f%%", 100 * best / ref);
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

/* The label of the fastest strategy that needs Redis (by its flags,
 * DQ_G_NEEDS_REDIS, never by name) among names whose claims are batched
 * or not (label_batched), its best median e2e tasks/s and consumer count;
 * NULL when there is none. */
static const char *fastest_redis(const dq_perf *p, char names[][NAMELEN],
                                 size_t ns, bool batched, double *tps,
                                 int *at)
{
    const char *best_s = NULL;
    *tps = -1;
    for (size_t s = 0; s < ns; s++) {
        char name[NAMELEN];
        int a = 0;
        snprintf(name, sizeof name, "%.*s", (int)strcspn(names[s], " "),
                 names[s]);
        const dq_strategy *st = dq_strategy_find(name);
        if (st == NULL || !(st->flags & DQ_G_NEEDS_REDIS) ||
            label_batched(names[s]) != batched)
            continue;
        double v = dq_perf_e2e(p, names[s], 0, &a);
        if (v > *tps)
            *tps = v, best_s = names[s], *at = a;
    }
    return best_s;
}

/* What happened: the fastest Redis strategy with one claim per round
 * trip and with batched claims, each with its share of the matching
 * reference; the harness's own ceiling (harness.csv: the no-op queue) in
 * events/s and tasks/s against the faster of them. */
static void throughput_said(dq_md *o, const dq_perf *p,
                            char names[][NAMELEN], size_t ns)
{
    static const dq_tuse how[] DQ_TUSES = {{"perf.one_rtt", ""},
                                           {"perf.batched", ""}};
    double top = -1;
    DQ_TEXT(o, "generic.what_happened", " ");
    for (int b = 0; b < 2; b++) {
        double tps, ref;
        int at = 0;
        const char *which, *s = fastest_redis(p, names, ns, b, &tps, &at);
        char share[256] = "", kind[128] = "";
        if (s == NULL)
            continue;
        top = tps > top ? tps : top;
        ref = reference_of(p, s, &which);
        if (ref > 0)
            DQ_TBUF(o, share, "perf.of_ref", "pct=%.1f ref=%s",
                    100 * tps / ref, which);
        dq_tcat(o->texts, kind, sizeof kind, &(size_t){0}, &how[b], "");
        DQ_TEXT(o, "perf.fastest", "kind=%s strategy=%s tps=%.0f "
                "consumers=%d share=%s", kind, s, tps, at, share);
        dq_put(o, " ");
    }
    double ev = dq_perf_harness_median(p, "harness-noop", true);
    double tps = dq_perf_harness_median(p, "harness-noop", false);
    if (ev < 0 || tps < 0)
        DQ_TEXT(o, "perf.harness_none", "");
    else if (top > 0)
        DQ_TEXT(o, "perf.harness", "ev=%.0f tps=%.0f x=%.1f", ev, tps,
                tps / top);
    else
        DQ_TEXT(o, "perf.harness_alone", "ev=%.0f tps=%.0f", ev, tps);
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
            "enqueue=%s repeats=%s one_rtt=%s batched=%s\n\n",
            META("tasks"),
            META("in_process_factor")[0] ? META("in_process_factor") : "1",
            META("producers"), META("enqueue_tasks"), META("repeats"),
            META("one_rtt_tasks")[0] ? META("one_rtt_tasks") : "n/a",
            META("batched_tasks")[0] ? META("batched_tasks") : "n/a");
    off = (size_t)snprintf(head, sizeof head, "strategy|enqueue only /s");
    for (size_t x = 0; x < nx; x++)
        dq_append(head, sizeof head, &off, "|e2e /s, %d cons.", (int)xs[x]);
    dq_append(head, sizeof head, &off, "|best e2e /s|share of redis-"
              "benchmark ZADD, same run (batch=1: -t zadd -c 4; batched: "
              "-c 1 -P 100)|Redis cmds/task|server CPU us/task");
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

/* The run of l among the n rows of its strategy and rate: "k of n", or
 * "1" when the rate ran once.  k is l's place among them (the bench writes
 * runs in order; a file from before the run column has none). */
static void run_of(const dq_perf *p, const dq_perf_lat *l, char *buf,
                   size_t len)
{
    int n = 0, k = 0;
    for (size_t i = 0; i < p->nlat; i++)
        if (strcmp(p->lat[i].strategy, l->strategy) == 0 &&
            p->lat[i].offered_per_s == l->offered_per_s) {
            n++;
            k = &p->lat[i] == l ? n : k;
        }
    if (n > 1)
        snprintf(buf, len, "%d of %d", k, n);
    else
        snprintf(buf, len, "1");
}

/* Where strategy saturated, in words: the detail of its targets.csv
 * saturation row (the bench's judgement, two runs at a rate), or, in a
 * run without one, the first rate whose every run was saturated and the
 * highest rate none was. */
static void saturation_said(dq_md *o, const dq_perf *p, const char *name)
{
    int64_t ok = -1, sat = -1;
    for (size_t i = 0; i < p->ntargets; i++)
        if (strcmp(p->targets[i].target, "saturation") == 0 &&
            strcmp(p->targets[i].strategy, name) == 0) {
            dq_put(o, "%s: %s", name, p->targets[i].detail);
            return;
        }
    for (size_t i = 0; i < p->nlat; i++) {
        const dq_perf_lat *l = &p->lat[i];
        int runs = 0, bad = 0;
        if (strcmp(l->strategy, name) != 0)
            continue;
        for (size_t k = 0; k < p->nlat; k++)
            if (strcmp(p->lat[k].strategy, name) == 0 &&
                p->lat[k].offered_per_s == l->offered_per_s)
                runs++, bad += p->lat[k].saturated != 0;
        if (bad == runs && (sat < 0 || l->offered_per_s < sat))
            sat = l->offered_per_s;
        else if (bad == 0 && l->offered_per_s > ok)
            ok = l->offered_per_s;
    }
    dq_put(o, "%s ", name);
    if (ok > 0 && sat > 0)
        DQ_TEXT(o, "perf.kept_up_sat", "rate=%" PRId64 " sat=%" PRId64, ok,
                sat);
    else if (ok > 0)
        DQ_TEXT(o, "perf.kept_up_not_sat", "rate=%" PRId64, ok);
    else if (sat > 0)
        DQ_TEXT(o, "perf.saturated", "sat=%" PRId64, sat);
    else
        DQ_TEXT(o, "perf.not_saturated", "");
}

static void lateness_table(dq_md *o, const dq_perf *p, char names[][NAMELEN],
                           size_t ns)
{
    bool repeated = false;
    dq_head(o, "strategy|offered /s|run|sent /s|delivered /s|p50 ms|p99 "
               "ms|max ms|lost|duplicates|saturated");
    for (size_t i = 0; i < p->nlat; i++) {
        const dq_perf_lat *l = &p->lat[i];
        char run[32];
        run_of(p, l, run, sizeof run);
        repeated = repeated || strchr(run, ' ') != NULL;
        dq_row(o, "%s" DQ_CELL "%" PRId64 DQ_CELL "%s" DQ_CELL "%.0f" DQ_CELL
                   "%.0f" DQ_CELL "%.2f" DQ_CELL "%.2f" DQ_CELL "%.2f"
                   DQ_CELL "%" PRIu64 DQ_CELL "%" PRIu64 DQ_CELL "%s",
                   l->strategy, l->offered_per_s, run, l->sent_per_s,
                   l->delivered_per_s, l->p50_ms, l->p99_ms, l->max_ms,
                   l->lost, l->duplicates, l->saturated ? "yes" : "no");
    }
    dq_table_end(o);
    if (repeated)
        DQ_TEXT(o, "perf.runs_note", "\n\n");
    DQ_TEXT(o, "generic.what_happened", " ");
    for (size_t s = 0; s < ns; s++) {
        saturation_said(o, p, names[s]);
        dq_put(o, "%s", s + 1 < ns ? "; " : ".\n\n");
    }
}

static int write_lateness(dq_md *o, const dq_perf *p, char *err,
                          size_t errlen)
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
    DQ_TEXT(o, "perf.lateness_intro", "producers=%s consumers=%s low_ms=%s "
            "ms=%s runs=%s\n\n", META("lateness_producers"),
            META("lateness_consumers"),
            META("lateness_low_ms")[0] ? META("lateness_low_ms")
                                       : META("lateness_ms"),
            META("lateness_ms"),
            META("lateness_low_runs")[0] ? META("lateness_low_runs") : "1");
    lateness_table(o, p, names, ns);
    return 0;
}

/* The target of a targets.csv row in words (text perf.tg_<id>), or the
 * id itself for a target this report has no words for. */
static void target_words(dq_md *o, const char *id, char *buf, size_t len)
{
    static const char *const ids[] = {
        "one_rtt_claim", "batched_claim", "harness_in_process",
        "harness_ceiling", "lateness_p99_200", "saturation",
        "backlog_claim_p99"};
    static const dq_tuse uses[] DQ_TUSES = {
        {"perf.tg_one_rtt_claim", ""}, {"perf.tg_batched_claim", ""},
        {"perf.tg_harness_in_process", ""}, {"perf.tg_harness_ceiling", ""},
        {"perf.tg_lateness_p99_200", ""}, {"perf.tg_saturation", ""},
        {"perf.tg_backlog_claim_p99", ""}};
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (strcmp(ids[i], id) == 0) {
            dq_tcat(o->texts, buf, len, &(size_t){0}, &uses[i], "");
            return;
        }
    snprintf(buf, len, "`%s`", id);
}

/* v in unit as the targets table shows it: ms with two decimals, others
 * whole; "n/a" when v < 0. */
static void fmt_unit(char *buf, size_t len, double v, const char *unit)
{
    char n[64];
    dq_fmt_double(n, sizeof n, v, strcmp(unit, "ms") == 0 ? 2 : 0);
    if (v < 0)
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%s %s", n, unit);
}

/* A share of a rate (unit "../s") as a percentage, any other as a ratio
 * ("x1.04"); "n/a" when v < 0. */
static void fmt_share(char *buf, size_t len, double v, const char *unit)
{
    size_t ul = strlen(unit);
    if (v < 0)
        snprintf(buf, len, "n/a");
    else if (ul >= 2 && strcmp(unit + ul - 2, "/s") == 0)
        snprintf(buf, len, "%.1f%%", 100 * v);
    else
        snprintf(buf, len, "x%.2f", v);
}

/* One targets.csv row as the bench wrote it. */
static void target_row(dq_md *o, const dq_perf_target *t)
{
    static const dq_tuse verdicts[] DQ_TUSES = {
        {"perf.met", ""}, {"perf.not_met", ""}, {"perf.no_bound", ""},
        {"perf.not_measured_v", ""}};
    static const char *const mets[] = {"yes", "no", "none", "not measured"};
    char what[512], label[NAMELEN + 192], fig[96], ref[384] = "n/a",
         share[64], bound[128] = "none", met[64] = "", cpu[64], v[96];
    target_words(o, t->target, what, sizeof what);
    snprintf(label, sizeof label, "%s%s%s", t->strategy,
             t->options[0] ? " " : "", t->options);
    for (char *c = label; *c; c++)
        *c = *c == ';' ? ' ' : *c;
    fmt_unit(fig, sizeof fig, t->figure, t->unit);
    if (t->reference[0] != '\0') {
        fmt_unit(v, sizeof v, t->reference_value, t->unit);
        snprintf(ref, sizeof ref, "%s (%s)", t->reference, v);
    }
    fmt_share(share, sizeof share, t->share, t->unit);
    if (strcmp(t->bound_on, "share") == 0) {
        fmt_share(v, sizeof v, t->bound, t->unit);
        snprintf(bound, sizeof bound, "share %s %s", t->op, v);
    } else if (strcmp(t->bound_on, "figure") == 0) {
        fmt_unit(v, sizeof v, t->bound, t->unit);
        snprintf(bound, sizeof bound, "%s %s", t->op, v);
    }
    for (size_t i = 0; i < 4; i++)
        if (strcmp(t->met, mets[i]) == 0)
            dq_tcat(o->texts, met, sizeof met, &(size_t){0}, &verdicts[i],
                    "");
    dq_fmt_double(cpu, sizeof cpu, t->cpu_us_per_task, 1);
    dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%s"
           DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%" PRId64 DQ_CELL "%s" DQ_CELL
           "%s", what, label, fig, ref, share, bound, met, t->samples, cpu,
           t->detail);
}

/* The targets table: targets.csv as written, or, in a run without it,
 * the line that says so. */
static void write_targets(dq_md *o, const dq_perf *p)
{
    DQ_TEXT(o, "perf.targets", "\n\n");
    if (!p->has[DQ_PERF_TARGETS]) {
        DQ_TEXT(o, "perf.rerun", "\n\n");
        return;
    }
    DQ_TEXT(o, "perf.targets_intro", "command=%s\n\n", META("command"));
    dq_head(o, "target|strategy, options|measured (median)|reference|share|"
               "bound|met|samples|Redis CPU us/task|detail");
    for (size_t i = 0; i < p->ntargets; i++)
        target_row(o, &p->targets[i]);
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

/* The raw-results line: the bench files this run has. */
static void raw_files(dq_md *o, const dq_perf *p)
{
    static const char *const files[DQ_PERF_NFILES] = {
        [DQ_PERF_TP] = "throughput.csv", [DQ_PERF_BL] = "backlog.csv",
        [DQ_PERF_LAT] = "lateness.csv", [DQ_PERF_REF] = "references.csv",
        [DQ_PERF_HARNESS] = "harness.csv", [DQ_PERF_TARGETS] = "targets.csv",
        [DQ_PERF_CEILING] = "ceiling.csv"};
    char list[512] = "";
    size_t off = 0;
    for (size_t i = 0; i < DQ_PERF_NFILES; i++)
        if (p->has[i])
            dq_append(list, sizeof list, &off, "%s, ", files[i]);
    dq_append(list, sizeof list, &off, "meta.txt");
    dq_raw(o, p->dir, list);
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
    write_targets(o, p);
    write_references(o, p);
    write_ceiling(o, p);
    if (write_throughput(o, p, err, errlen) != 0 ||
        write_backlog(o, p, err, errlen) != 0 ||
        write_lateness(o, p, err, errlen) != 0)
        return -1;
    raw_files(o, p);
    return 0;
}
