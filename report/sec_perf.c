/* sec_perf.c -- the report's Performance section, from `dqlab opcost`
 * and `dqlab bench` (their part of the results model, results_bench.c).
 *
 * Every number is from the runs' files (harness/opcost.h, bench.h), in
 * the order shown: the in-process strategies' cost per operation; the
 * bench's targets.csv as written (the bench decides met, this file only
 * words its rows); the redis-benchmark references every share is of;
 * dqlab's own pipelined loop (ceiling.csv, information only); then the
 * parts with a figure, a row of parts[] each: throughput (e2e tasks/s per
 * consumer count, the best as a share of the matching reference, the
 * harness's own ceiling), backlog scaling (claim latency against pending
 * tasks), lateness under load (p99 against the offered rate, where each
 * strategy saturates).  A file an older run lacks is said to be not
 * measured.  Figures: figures/bench-{throughput,backlog,lateness-load}.
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/experiment.h" /* dq_redact_redis_urls */
#include "../harness/opcost.h"     /* DQ_OPCOST_N_MIN, its least n */
#include "../strategies/dq.h"
#include "sections.h"
#include "stats.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* Names of strategies and variants: up to NAMELEN - 1 bytes. */
#define NAMELEN 64
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define META(k) dq_meta_get(&p->meta, k)

/* Whether the strategy of a label ("name" or "name options") uses Redis
 * (its DQ_G_NEEDS_REDIS flag; heap and wheel do not): 1, 0, or -1 when
 * the registry does not know it. */
static int uses_redis(const char *label)
{
    char name[NAMELEN];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(label, " "), label);
    const dq_strategy *st = dq_strategy_find(name);
    return st == NULL ? -1 : (st->flags & DQ_G_NEEDS_REDIS) != 0;
}

/* Whether a label's options claim more than one task per round trip: a
 * "batch=N" word other than batch=1 (enqueue_batch is the producers'). */
static bool label_batched(const char *label)
{
    for (const char *b = label; (b = strstr(b, " batch=")) != NULL; b++)
        if (strncmp(b, " batch=1", 8) != 0 || (b[8] != ' ' && b[8] != '\0'))
            return true;
    return false;
}

/* The median ops/s of the redis-benchmark reference a label's throughput
 * is a share of, named in *which: zadd-c4 (one claim per round trip) or
 * zadd-c1-p100 (batched claims); -1 when not measured. */
static double reference_of(const dq_perf *p, const char *label,
                           const char **which)
{
    *which = label_batched(label) ? "zadd-c1-p100" : "zadd-c4";
    return dq_perf_ref_median(p, *which, NULL);
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

/* What a part with a figure shows: its series (names, first-seen order)
 * and their x values, sorted. */
typedef struct perf_ctx {
    const dq_perf *p;
    char names[32][NAMELEN];
    size_t ns, nx;
    int64_t xs[16];
} perf_ctx;

/* One row of the throughput table: enqueue, e2e per consumer count, the
 * best, its share of the reference, cost per task at the best count. */
static void throughput_row(dq_md *o, const perf_ctx *c, const char *name)
{
    const dq_perf *p = c->p;
    char row[2048], v[64];
    double cm[64], cu[64], best, ref;
    size_t off = 0, ncm = 0, ncu = 0;
    int at = 0;
    const char *which;
    dq_fmt_double(v, sizeof v, dq_perf_enqueue(p, name), 0);
    dq_append(row, sizeof row, &off, "%s" DQ_CELL "%s", name, v);
    for (size_t x = 0; x < c->nx; x++) {
        dq_fmt_double(v, sizeof v, dq_perf_e2e(p, name, (int)c->xs[x], NULL),
                      0);
        dq_append(row, sizeof row, &off, DQ_CELL "%s", v);
    }
    best = dq_perf_e2e(p, name, 0, &at);
    ref = reference_of(p, name, &which);
    dq_append(row, sizeof row, &off, DQ_CELL "%.0f (%d cons.)", best, at);
    if (ref > 0 && best >= 0 && uses_redis(name) != 0)
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

/* What happened: the fastest Redis strategy (by its flags, never by
 * name) with one claim per round trip and with batched claims, each with
 * its share of the matching reference; the harness's own ceiling in
 * events/s and tasks/s against the faster of them. */
static void throughput_said(dq_md *o, const perf_ctx *c)
{
    static const dq_tuse how[] DQ_TUSES = {{"perf.one_rtt", ""},
                                           {"perf.batched", ""}};
    const dq_perf *p = c->p;
    double top = -1;
    DQ_TEXT(o, "generic.what_happened", " ");
    for (int b = 0; b < 2; b++) {
        const char *s = NULL, *which;
        char share[256] = "", kind[128] = "";
        double tps = -1, ref;
        int at = 0;
        for (size_t k = 0; k < c->ns; k++) {
            int a = 0;
            double v = uses_redis(c->names[k]) == 1 &&
                               label_batched(c->names[k]) == b
                           ? dq_perf_e2e(p, c->names[k], 0, &a) : -1;
            if (v > tps) {
                tps = v;
                s = c->names[k];
                at = a;
            }
        }
        if (s == NULL)
            continue;
        top = tps > top ? tps : top;
        if ((ref = reference_of(p, s, &which)) > 0)
            DQ_TBUF(o, share, "perf.of_ref", "pct=%.1f ref=%s",
                    100 * tps / ref, which);
        dq_tset(o->texts, kind, sizeof kind, &how[b], "");
        DQ_TEXT(o, "perf.fastest", "kind=%s strategy=%s tps=%.0f "
                "consumers=%d share=%s ", kind, s, tps, at, share);
    }
    double ev = dq_perf_harness_median(p, "harness-noop", true);
    double tps = dq_perf_harness_median(p, "harness-noop", false);
    if (ev < 0 || tps < 0)
        DQ_TEXT(o, "perf.harness_none", "\n\n");
    else if (top > 0)
        DQ_TEXT(o, "perf.harness", "ev=%.0f tps=%.0f x=%.1f\n\n", ev, tps,
                tps / top);
    else
        DQ_TEXT(o, "perf.harness_alone", "ev=%.0f tps=%.0f\n\n", ev, tps);
}

static void throughput_body(dq_md *o, const perf_ctx *c)
{
    const dq_perf *p = c->p;
    char head[1024];
    size_t off = 0;
    DQ_TEXT(o, "perf.throughput_intro", "tasks=%s factor=%s producers=%s "
            "enqueue=%s repeats=%s one_rtt=%s batched=%s\n\n",
            META("tasks"),
            META("in_process_factor")[0] ? META("in_process_factor") : "1",
            META("producers"), META("enqueue_tasks"), META("repeats"),
            META("one_rtt_tasks")[0] ? META("one_rtt_tasks") : "n/a",
            META("batched_tasks")[0] ? META("batched_tasks") : "n/a");
    dq_append(head, sizeof head, &off, "strategy|enqueue only /s");
    for (size_t x = 0; x < c->nx; x++)
        dq_append(head, sizeof head, &off, "|e2e /s, %d cons.",
                  (int)c->xs[x]);
    dq_append(head, sizeof head, &off, "|best e2e /s|share of redis-"
              "benchmark ZADD, same run (batch=1: -t zadd -c 4; batched: "
              "-c 1 -P 100)|Redis cmds/task|server CPU us/task");
    dq_head(o, head);
    for (size_t s = 0; s < c->ns; s++)
        throughput_row(o, c, c->names[s]);
    dq_table_end(o);
    DQ_TEXT(o, "perf.throughput_note", "\n\n");
    throughput_said(o, c);
}

static void backlog_body(dq_md *o, const perf_ctx *c)
{
    const dq_perf *p = c->p;
    DQ_TEXT(o, "perf.backlog_intro", "rounds=%s claims=%s\n\n",
            META("backlog_rounds")[0] ? META("backlog_rounds") : "1",
            META("backlog_claims"));
    dq_head(o, "strategy|pending|claim p50 us|claim p99 us|claim max "
               "us|bytes/task|enqueue us (mean)|preload s");
    for (size_t s = 0; s < c->ns; s++)
        for (size_t x = 0; x < c->nx; x++) {
            const dq_perf_bl *b = dq_perf_backlog(p, c->names[s], c->xs[x]);
            char bytes[64];
            if (b == NULL)
                continue;
            dq_fmt_double(bytes, sizeof bytes, b->bytes_per_task, 0);
            dq_row(o, "%s" DQ_CELL "%" PRId64 DQ_CELL "%.0f" DQ_CELL "%.0f"
                   DQ_CELL "%.0f" DQ_CELL "%s" DQ_CELL "%.1f" DQ_CELL "%.2f",
                   b->strategy, b->backlog, b->claim_us_p50, b->claim_us_p99,
                   b->claim_us_max, bytes, b->enqueue_us_mean, b->preload_s);
        }
    dq_table_end(o);
    DQ_TEXT(o, "generic.what_happened", " ");
    for (size_t s = 0; s < c->ns; s++) {
        const dq_perf_bl *lo, *hi;
        dq_perf_backlog_range(p, c->names[s], &lo, &hi);
        if (lo == NULL || hi == lo || lo->claim_us_p50 <= 0)
            continue;
        double r50 = hi->claim_us_p50 / lo->claim_us_p50;
        double r99 = lo->claim_us_p99 > 0
                         ? hi->claim_us_p99 / lo->claim_us_p99 : -1;
        double lr = dq_log_ratio(hi->backlog, lo->backlog);
        DQ_TEXTP(o, r50 <= lr * 1.25, "perf.growth", "perf.growth_faster",
                 "strategy=%s lo=%" PRId64 " hi=%" PRId64 " x50=%.2f x99=%.2f "
                 "lr=%.2f ", c->names[s], lo->backlog, hi->backlog, r50, r99,
                 lr);
    }
    DQ_TEXT(o, "perf.growth_note", "\n\n");
}

/* The lateness rows of strategy name at rate: how many (*n), how many
 * saturated (*bad), which of them l is (*k, 1-based; 0: none); returns
 * the last, or NULL. */
static const dq_perf_lat *runs_at(const dq_perf *p, const char *name,
                                  int64_t rate, const dq_perf_lat *l, int *n,
                                  int *bad, int *k)
{
    const dq_perf_lat *last = NULL;
    *n = *bad = *k = 0;
    for (size_t i = 0; i < p->nlat; i++)
        if (strcmp(p->lat[i].strategy, name) == 0 &&
            p->lat[i].offered_per_s == rate) {
            last = &p->lat[i];
            *bad += last->saturated != 0;
            *k = last == l ? *n + 1 : *k;
            (*n)++;
        }
    return last;
}

/* Where strategy saturated, in words: the detail of its targets.csv
 * saturation row (the bench's judgement), or, in a run without one, the
 * first rate whose every run was saturated and the highest rate none
 * was. */
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
        int n, bad, k;
        if (strcmp(l->strategy, name) != 0)
            continue;
        runs_at(p, name, l->offered_per_s, l, &n, &bad, &k);
        if (bad == n && (sat < 0 || l->offered_per_s < sat))
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

static void lateness_body(dq_md *o, const perf_ctx *c)
{
    const dq_perf *p = c->p;
    bool repeated = false;
    DQ_TEXT(o, "perf.lateness_intro", "producers=%s consumers=%s low_ms=%s "
            "ms=%s runs=%s\n\n", META("lateness_producers"),
            META("lateness_consumers"),
            META("lateness_low_ms")[0] ? META("lateness_low_ms")
                                       : META("lateness_ms"),
            META("lateness_ms"),
            META("lateness_low_runs")[0] ? META("lateness_low_runs") : "1");
    dq_head(o, "strategy|offered /s|run|sent /s|delivered /s|p50 ms|p99 "
               "ms|max ms|lost|duplicates|saturated");
    for (size_t i = 0; i < p->nlat; i++) {
        const dq_perf_lat *l = &p->lat[i];
        char run[32] = "1";
        int n, bad, k;
        runs_at(p, l->strategy, l->offered_per_s, l, &n, &bad, &k);
        if (n > 1)
            snprintf(run, sizeof run, "%d of %d", k, n);
        repeated = repeated || n > 1;
        dq_row(o, "%s" DQ_CELL "%" PRId64 DQ_CELL "%s" DQ_CELL "%.0f" DQ_CELL
               "%.0f" DQ_CELL "%.2f" DQ_CELL "%.2f" DQ_CELL "%.2f" DQ_CELL
               "%" PRIu64 DQ_CELL "%" PRIu64 DQ_CELL "%s", l->strategy,
               l->offered_per_s, run, l->sent_per_s, l->delivered_per_s,
               l->p50_ms, l->p99_ms, l->max_ms, l->lost, l->duplicates,
               l->saturated ? "yes" : "no");
    }
    dq_table_end(o);
    if (repeated)
        DQ_TEXT(o, "perf.runs_note", "\n\n");
    DQ_TEXT(o, "generic.what_happened", " ");
    for (size_t s = 0; s < c->ns; s++) {
        saturation_said(o, p, c->names[s]);
        dq_put(o, "%s", s + 1 < c->ns ? "; " : ".\n\n");
    }
}

/* dq_wide_cell_fn of the figures: e2e tasks/s of label s at x consumers;
 * claim p50 and p99 (us, two cells) of strategy s with x pending; p99
 * lateness (ms) of strategy s at x offered tasks/s, the last such row.
 * Log axes: a 0 us claim (the heap, below the clock's resolution) is
 * drawn at 0.5 us, a lateness at 0.01 ms at least. */
static void throughput_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const perf_ctx *c = ctx;
    double v = dq_perf_e2e(c->p, c->names[s], (int)x, NULL);
    if (v >= 0)
        fprintf(f, "%.1f", v);
}

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

static void lateness_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const perf_ctx *c = ctx;
    int n, bad, k;
    const dq_perf_lat *l = runs_at(c->p, c->names[s], x, NULL, &n, &bad, &k);
    if (l != NULL)
        fprintf(f, "%.3f", fmax(l->p99_ms, 0.01));
}

/* The series name and x of row i of a part's file; false: not a row of
 * the part (throughput: its e2e rows, each variant a series). */
static bool throughput_key(const dq_perf *p, size_t i, char *name, int64_t *x)
{
    dq_perf_tp_label(&p->tp[i], name, NAMELEN);
    *x = p->tp[i].consumers;
    return strcmp(p->tp[i].kind, "e2e") == 0;
}

static bool backlog_key(const dq_perf *p, size_t i, char *name, int64_t *x)
{
    snprintf(name, NAMELEN, "%s", p->bl[i].strategy);
    *x = p->bl[i].backlog;
    return true;
}

static bool lateness_key(const dq_perf *p, size_t i, char *name, int64_t *x)
{
    snprintf(name, NAMELEN, "%s", p->lat[i].strategy);
    *x = p->lat[i].offered_per_s;
    return true;
}

/* The heading of each part, in the order of parts[]. */
static const dq_tuse part_titles[] DQ_TUSES = {
    {"perf.throughput", ""}, {"perf.backlog", ""}, {"perf.lateness", ""}};

/* A part with a figure: the rows of file that key() takes, drawn as
 * figures/bench-<stem> by <script>.gp from the wide CSV of cell() (a
 * column per series and suffix), then body(): intro, table, what
 * happened. */
static const struct perf_part {
    size_t file;
    bool (*key)(const dq_perf *p, size_t i, char *name, int64_t *x);
    const char *stem, *script, *xname;
    const char *const *sufs;
    size_t nsufs;
    dq_wide_cell_fn cell;
    void (*body)(dq_md *o, const perf_ctx *c);
} parts[] = {
    {DQ_PERF_TP, throughput_key, "throughput", "throughput", "consumers",
     NULL, 0, throughput_cell, throughput_body},
    {DQ_PERF_BL, backlog_key, "backlog", "perf_backlog", "pending",
     (const char *const[]){" p50", " p99"}, 2, backlog_cell, backlog_body},
    {DQ_PERF_LAT, lateness_key, "lateness-load", "perf_lateness", "offered",
     NULL, 0, lateness_cell, lateness_body},
};

/* Part k of parts[]: 0, or -1 with err. */
static int write_part(dq_md *o, const dq_perf *p, size_t k, char *err,
                      size_t errlen)
{
    const struct perf_part *pt = &parts[k];
    perf_ctx c = {.p = p};
    char *buf, stem[64], name[NAMELEN];
    size_t len, j;
    int64_t x;
    dq_text(o, &part_titles[k], "\n\n");
    for (size_t i = 0; i < p->csv[pt->file].n; i++) {
        if (!pt->key(p, i, name, &x))
            continue;
        for (j = 0; j < c.ns && strcmp(c.names[j], name) != 0;)
            j++;
        if (j == c.ns && c.ns < NELEM(c.names))
            snprintf(c.names[c.ns++], NAMELEN, "%s", name);
        c.nx = dq_add_distinct_i64(c.xs, c.nx, NELEM(c.xs), x);
    }
    if (c.ns == 0) {
        DQ_TEXT(o, "perf.not_measured", "\n\n");
        return 0;
    }
    dq_sort_i64(c.xs, c.nx);
    if (dq_wide_csv(&buf, &len, pt->xname, c.names[0], NAMELEN, c.ns,
                    pt->sufs, pt->nsufs, c.xs, c.nx, pt->cell, &c, err,
                    errlen) != 0)
        return -1;
    snprintf(stem, sizeof stem, "bench-%s", pt->stem);
    int rc = dq_figure(o, stem, pt->script, buf, len, true, err, errlen);
    free(buf);
    if (rc != 0)
        return -1;
    pt->body(o, &c);
    return 0;
}

/* references.csv as it ran: the yardsticks of the shares. */
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
        dq_fmt_double(v, sizeof v, r->ops_per_s, 0);
        dq_fmt_double(cpu, sizeof cpu, r->cpu_us_per_op, 1);
        dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%d" DQ_CELL "%d"
               DQ_CELL "%" PRId64 DQ_CELL "%s" DQ_CELL "%s", r->reference,
               r->when, r->command, r->clients, r->pipeline, r->requests, v,
               cpu);
    }
    dq_table_end(o);
    dq_fmt_double(c4, sizeof c4, dq_perf_ref_median(p, "zadd-c4", &n4), 0);
    dq_fmt_double(p100, sizeof p100,
                  dq_perf_ref_median(p, "zadd-c1-p100", &n100), 0);
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
        char v[64], src[128], cmd[16];
        dq_fmt_double(v, sizeof v, c->ops_per_s, 0);
        dq_tset(o->texts, src, sizeof src,
                &by[strcmp(c->source, "redis-benchmark") == 0], "");
        snprintf(cmd, sizeof cmd, "%s", c->measure);
        for (char *k = cmd; *k; k++)
            *k = (char)toupper((unsigned char)*k);
        dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%" PRId64 DQ_CELL "%d" DQ_CELL
               "%s", cmd, src, c->ops, c->pipeline, v);
    }
    dq_table_end(o);
    DQ_TEXT(o, "perf.ceiling_note", "\n\n");
}

/* v as the targets table shows it: a figure in unit (ms with two
 * decimals, others whole) or, as share, a share of a rate (unit "../s")
 * as a percentage and of anything else as a ratio ("x1.04"); "n/a" when
 * v < 0. */
static void fmt_target(char *buf, size_t len, double v, const char *unit,
                       bool share)
{
    size_t ul = strlen(unit);
    if (v < 0)
        snprintf(buf, len, "n/a");
    else if (!share)
        snprintf(buf, len, "%.*f %s", strcmp(unit, "ms") == 0 ? 2 : 0, v,
                 unit);
    else if (ul >= 2 && strcmp(unit + ul - 2, "/s") == 0)
        snprintf(buf, len, "%.1f%%", 100 * v);
    else
        snprintf(buf, len, "x%.2f", v);
}

/* One targets.csv row as the bench wrote it: its target in words (text
 * perf.tg_<id>, or the id for a target without words), its verdict. */
static void target_row(dq_md *o, const dq_perf_target *t)
{
    static const dq_tuse ids[] DQ_TUSES = {
        {"perf.tg_one_rtt_claim", ""}, {"perf.tg_batched_claim", ""},
        {"perf.tg_harness_in_process", ""}, {"perf.tg_harness_ceiling", ""},
        {"perf.tg_lateness_p99_200", ""}, {"perf.tg_saturation", ""},
        {"perf.tg_backlog_claim_p99", ""}};
    static const dq_tuse verdicts[] DQ_TUSES = {
        {"perf.met", ""}, {"perf.not_met", ""}, {"perf.no_bound", ""},
        {"perf.not_measured_v", ""}};
    static const char *const mets[] = {"yes", "no", "none", "not measured"};
    char what[512], label[NAMELEN + 192], fig[96], ref[384] = "n/a",
         share[64], bound[128] = "none", met[64] = "", cpu[64], v[96];
    snprintf(what, sizeof what, "`%s`", t->target);
    for (size_t i = 0; i < NELEM(ids); i++)
        if (strcmp(ids[i].name + strlen("perf.tg_"), t->target) == 0)
            dq_tset(o->texts, what, sizeof what, &ids[i], "");
    for (size_t i = 0; i < NELEM(mets); i++)
        if (strcmp(t->met, mets[i]) == 0)
            dq_tset(o->texts, met, sizeof met, &verdicts[i], "");
    dq_perf_tp_label(&(dq_perf_tp){.strategy = t->strategy,
                                   .options = t->options},
                     label, sizeof label);
    fmt_target(fig, sizeof fig, t->figure, t->unit, false);
    if (t->reference[0] != '\0') {
        fmt_target(v, sizeof v, t->reference_value, t->unit, false);
        snprintf(ref, sizeof ref, "%s (%s)", t->reference, v);
    }
    fmt_target(share, sizeof share, t->share, t->unit, true);
    if (t->bound_on[0] != '\0') {          /* share or figure (bench.h) */
        bool on_share = strcmp(t->bound_on, "share") == 0;
        fmt_target(v, sizeof v, t->bound, t->unit, on_share);
        snprintf(bound, sizeof bound, "%s%s %s", on_share ? "share " : "",
                 t->op, v);
    }
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
    DQ_TEXT(o, "generic.what_happened", " ");
    for (size_t i = 0; i < oc->n; i++) {
        const dq_opcost_row *lo, *hi, *x = &oc->rows[i];
        size_t k = 0;
        while (k < i && (strcmp(oc->rows[k].strategy, x->strategy) != 0 ||
                         strcmp(oc->rows[k].mix, x->mix) != 0))
            k++;
        if (k < i)
            continue;               /* said at its first row */
        dq_opcost_range(oc, x->strategy, x->mix, &lo, &hi);
        if (lo != NULL && hi != lo && lo->ns_median > 0 &&
            lo->n >= DQ_OPCOST_N_MIN)   /* log 1 = 0: no ratio */
            DQ_TEXT(o, "perf.opcost_growth", "strategy=%s mix=%s lo_n=%"
                    PRId64 " lo=%.0f hi_n=%" PRId64 " hi=%.0f x=%.2f "
                    "lr=%.2f ", x->strategy, x->mix, lo->n, lo->ns_median,
                    hi->n, hi->ns_median, hi->ns_median / lo->ns_median,
                    dq_log_ratio(hi->n, lo->n));
    }
    dq_put(o, "\n\n");
}

/* The distinct n of the run's rows, "0, 1000" into ns (len bytes), in
 * the order of the rows; returns how many of them are DQ_OPCOST_N_MIN or
 * more (the n a log axis and a ratio of logarithms can use). */
static size_t opcost_distinct_n(const dq_opcost *oc, char *ns, size_t len)
{
    size_t usable = 0, off = 0;
    ns[0] = '\0';
    for (size_t i = 0; i < oc->n; i++) {
        size_t k = 0;
        while (k < i && oc->rows[k].n != oc->rows[i].n)
            k++;
        if (k < i)
            continue;               /* counted at its first row */
        usable += oc->rows[i].n >= DQ_OPCOST_N_MIN;
        dq_append(ns, len, &off, "%s%" PRId64, off ? ", " : "",
                  oc->rows[i].n);
    }
    return usable;
}

/* The figure of the rows with a usable n (a log axis has no 0) and its
 * caption.  0 or -1 with err. */
static int opcost_figure(dq_md *o, const dq_opcost *oc, char *err,
                         size_t errlen)
{
    char *buf;
    size_t len;
    FILE *f = dq_mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    fputs("strategy,mix,n,ops,ns_per_op_median,ns_per_op_min,"
          "ns_per_op_max\n", f);
    for (size_t i = 0; i < oc->n; i++) {
        const dq_opcost_row *x = &oc->rows[i];
        if (x->n >= DQ_OPCOST_N_MIN)
            fprintf(f, "%s,%s,%" PRId64 ",%" PRId64 ",%.2f,%.2f,%.2f\n",
                    x->strategy, x->mix, x->n, x->ops, x->ns_median,
                    x->ns_min, x->ns_max);
    }
    fclose(f);
    int rc = dq_figure(o, "opcost", "opcost", buf, len, true, err, errlen);
    free(buf);
    if (rc != 0)
        return -1;
    DQ_TEXT(o, "perf.opcost_caption", "\n\n");
    return 0;
}

/* The figure and table of `dqlab opcost` (results/opcost/latest), when
 * there is a run: the in-process strategies' cost per operation against
 * the pending tasks (C17's O(log n) half).  A run with fewer than two
 * usable n (written by hand, or by a dqlab that took --n 0) has no
 * growth to draw: its table, and a line on what is missing instead. */
static int write_opcost(dq_md *o, const dq_results *r, char *err,
                        size_t errlen)
{
    const dq_opcost *oc = &r->opcost;
    char ns[512];
    if (!oc->present)
        return 0;
    size_t usable = opcost_distinct_n(oc, ns, sizeof ns);
    DQ_TEXT(o, "perf.opcost_head", "command=%s date=%s\n\n",
            dq_meta_get(&oc->meta, "command"), dq_meta_get(&oc->meta, "date"));
    if (usable < DQ_OPCOST_DISTINCT_N_MIN)
        DQ_TEXT(o, "perf.opcost_few", "ns=%s root=%s\n\n", ns, r->root);
    else if (opcost_figure(o, oc, err, errlen) != 0)
        return -1;
    dq_head(o, "strategy|mix|pending n|operations per repeat|ns per "
               "operation (median)|min-max of the repeats");
    for (size_t i = 0; i < oc->n; i++) {
        const dq_opcost_row *x = &oc->rows[i];
        dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%" PRId64 DQ_CELL "%" PRId64
               DQ_CELL "%.1f" DQ_CELL "%.1f-%.1f", x->strategy, x->mix, x->n,
               x->ops, x->ns_median, x->ns_min, x->ns_max);
    }
    dq_table_end(o);
    if (usable >= DQ_OPCOST_DISTINCT_N_MIN)
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
    for (size_t k = 0; k < NELEM(parts); k++)
        if (write_part(o, p, k, err, errlen) != 0)
            return -1;
    raw_files(o, p);
    return 0;
}
