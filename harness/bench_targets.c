/* bench_targets.c -- targets.csv: every performance target with its
 * measured figure, the reference it is a share of, and met / not met
 * (bench.h has the format and the list of targets).
 *
 * The bounds that hold for a whole class of strategies are declared here;
 * which strategies a target applies to comes from their flags
 * (DQ_G_NEEDS_REDIS, DQ_G_BLOCKS, DQ_G_ZSET_LAYOUT), never from a list of
 * names, so a strategy added to the registry gets a row in every target it
 * falls under.  The throughput bounds are each strategy's own
 * (dq_strategy.bench_one_rtt_share, bench_batched_share, dq.h); a row
 * without one is shown with met = none, for comparison.  A figure is the
 * median of the trials or rounds that measured it; a row whose measurement
 * is missing says "not measured" and why, so nothing is left out
 * silently.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_int.h"
#include "checker.h" /* dq_median */
#include "ceiling.h"
#include "runmeta.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* ---- The bounds --------------------------------------------------------- */

#define HARNESS_MIN_TASKS_PER_S 1500000.0 /* every in-process strategy */
#define LATENESS_RATE 200                  /* tasks/s offered */
#define LATENESS_MAX_MS 1.0                /* every blocking strategy */
#define BACKLOG_SMALL 1000
#define BACKLOG_LARGE 1000000
#define BACKLOG_MAX_RATIO 3.0              /* every ZSet strategy */

static const char *const ref_text[DQ_BREF_N] = {
    [DQ_BREF_ZADD_C4] = "redis-benchmark -t zadd -c 4",
    [DQ_BREF_ZADD_P100] = "redis-benchmark -t zadd -c 1 -P 100"};

/* ---- One row ------------------------------------------------------------ */

typedef struct row {
    const char *target, *strategy, *options, *unit, *reference;
    double figure, ref_value, share;
    const char *bound_on, *op;   /* "share"|"figure", ">="|"<="; "" none */
    double bound;                /* -1: none */
    const char *met;             /* yes | no | none | not measured */
    double cpu_us;
    int samples;
    char detail[256];
} row;

static void row_init(row *r, const char *target, const dq_strategy *s,
                     const char *options, const char *unit)
{
    memset(r, 0, sizeof *r);
    r->target = target;
    r->strategy = s->name;
    r->options = options;
    r->unit = unit;
    r->reference = "";
    r->figure = r->ref_value = r->share = r->bound = r->cpu_us = -1;
    r->bound_on = r->op = "";
    r->met = "not measured";
}

/* Sets the bound and met from the figure or the share. */
static void row_judge(row *r, const char *on, const char *op, double bound)
{
    double v = strcmp(on, "share") == 0 ? r->share : r->figure;

    if (bound < 0) {
        if (strcmp(r->met, "not measured") != 0 || r->figure >= 0)
            r->met = "none";
        return;
    }
    r->bound_on = on;
    r->op = op;
    r->bound = bound;
    if (v < 0)
        r->met = "not measured";
    else
        r->met = (op[0] == '>' ? v >= bound : v <= bound) ? "yes" : "no";
}

static void row_write(FILE *f, const row *r)
{
    fprintf(f, "%s,", r->target);
    dq_runmeta_csv_field(f, r->strategy, ',');
    dq_runmeta_csv_field(f, r->options, ',');
    fprintf(f, "%.3f,%s,", r->figure, r->unit);
    dq_runmeta_csv_field(f, r->reference, ',');
    fprintf(f, "%.3f,%.4f,%s,%s,%.3f,%s,%.3f,%d,", r->ref_value, r->share,
            r->bound_on, r->op, r->bound, r->met, r->cpu_us, r->samples);
    dq_runmeta_csv_field(f, r->detail, '\n');
}

/* ---- Medians of the records --------------------------------------------- */

#define MAXS 64

static double ref_median(const dq_bench *b, int which, int *n)
{
    double v[MAXS];

    *n = 0;
    for (size_t i = 0; i < b->nrefs && *n < MAXS; i++)
        if (b->refs[i].which == which)
            v[(*n)++] = b->refs[i].ops_per_s;
    return dq_median(v, (size_t)*n);
}

/* Median tasks/s and Redis CPU per task of (s, block, options) at c
 * consumers; *n trials. */
static double tp_median(const dq_bench *b, const dq_strategy *s, int block,
                        const char *options, int c, double *cpu, int *n)
{
    double v[MAXS], u[MAXS];
    int nu = 0;

    *n = 0;
    for (size_t i = 0; i < b->ntps && *n < MAXS; i++) {
        const dq_bench_tp *t = &b->tps[i];
        if (t->s != s || t->block != block || t->consumers != c ||
            strcmp(t->options, options) != 0)
            continue;
        v[(*n)++] = t->tasks_per_s;
        if (t->cpu_us_per_task >= 0)
            u[nu++] = t->cpu_us_per_task;
    }
    *cpu = dq_median(u, (size_t)nu);
    return dq_median(v, (size_t)*n);
}

/* Median tasks/s (events/s with events) of s's harness trials. */
static double hx_median(const dq_bench *b, const dq_strategy *s,
                        bool events, int *n)
{
    double v[MAXS];

    *n = 0;
    for (size_t i = 0; i < b->nhxs && *n < MAXS; i++)
        if (b->hxs[i].s == s)
            v[(*n)++] = events ? b->hxs[i].events_per_s
                               : b->hxs[i].tasks_per_s;
    return dq_median(v, (size_t)*n);
}

/* ---- The targets -------------------------------------------------------- */

/* A throughput target's row: figure of (s, block, options) as a share of
 * reference `which`, at least share (0: no bound). */
static void tp_row(FILE *f, const dq_bench *b, const char *target,
                   const dq_strategy *s, int block, const char *options,
                   int which, double share)
{
    int c = b->pl->target_consumers, n, nr;
    double ref = ref_median(b, which, &nr);
    row r;

    row_init(&r, target, s, options, "tasks/s");
    r.reference = ref_text[which];
    r.figure = tp_median(b, s, block, options, c, &r.cpu_us, &n);
    r.samples = n;
    r.ref_value = ref;
    if (r.figure >= 0 && ref > 0)
        r.share = r.figure / ref;
    row_judge(&r, "share", ">=", share > 0 ? share : -1);
    if (n == 0)
        snprintf(r.detail, sizeof r.detail, "no trial measured (failed, "
                 "interrupted or part not run)");
    else if (nr == 0)
        snprintf(r.detail, sizeof r.detail, "%d consumers; reference not "
                 "measured (--redis, or redis-benchmark missing)", c);
    else
        snprintf(r.detail, sizeof r.detail, "%d consumers; median of %d "
                 "trials against the median of %d reference runs", c, n, nr);
    row_write(f, &r);
}

static void targets_throughput(FILE *f, const dq_bench *b)
{
    for (size_t si = 0; dq_strategies[si]; si++) {
        const dq_strategy *s = dq_strategies[si];
        if (dq_bench_selected(b, s) && (s->flags & DQ_G_NEEDS_REDIS))
            tp_row(f, b, "one_rtt_claim", s, DQ_BTP_ONE_RTT,
                   DQ_BENCH_ONE_RTT_SPEC, DQ_BREF_ZADD_C4,
                   s->bench_one_rtt_share);
    }
    for (size_t si = 0; dq_strategies[si]; si++) {
        const dq_strategy *s = dq_strategies[si];
        for (size_t i = 0; s->bench_variants && s->bench_variants[i] &&
                           dq_bench_selected(b, s); i++)
            tp_row(f, b, "batched_claim", s, DQ_BTP_BATCHED,
                   s->bench_variants[i], DQ_BREF_ZADD_P100,
                   s->bench_batched_share);
    }
}

static void targets_harness(FILE *f, const dq_bench *b)
{
    int n, nc;
    double eps = hx_median(b, &dq_ceiling_noop, true, &n);
    double ceil_tps = hx_median(b, &dq_ceiling_noop, false, &nc);
    row r;

    row_init(&r, "harness_ceiling", &dq_ceiling_noop, "", "events/s");
    r.figure = eps;
    r.samples = n;
    row_judge(&r, "figure", ">=", -1);
    snprintf(r.detail, sizeof r.detail, "the no-op queue through the "
             "harness: %.0f tasks/s (E + D + A records per task), %d "
             "consumers", ceil_tps, b->pl->target_consumers);
    row_write(f, &r);
    for (size_t si = 0; dq_strategies[si]; si++) {
        const dq_strategy *s = dq_strategies[si];
        if (!dq_bench_selected(b, s) || (s->flags & DQ_G_NEEDS_REDIS))
            continue;
        row_init(&r, "harness_in_process", s, "", "tasks/s");
        r.figure = hx_median(b, s, false, &n);
        r.samples = n;
        r.reference = dq_ceiling_noop.name;
        r.ref_value = ceil_tps;
        if (r.figure >= 0 && ceil_tps > 0)
            r.share = r.figure / ceil_tps;
        row_judge(&r, "figure", ">=", HARNESS_MIN_TASKS_PER_S);
        snprintf(r.detail, sizeof r.detail, "%d consumers, %d producers; "
                 "share: of the harness ceiling in the same rounds",
                 b->pl->target_consumers, b->pl->producers);
        row_write(f, &r);
    }
}

/* Median p99 (ms) of s's runs at rate (*n of them; -1 when none). */
static double lat_p99_at(const dq_bench *b, const dq_strategy *s,
                         int64_t rate, int *n)
{
    double v[4];

    *n = 0;
    for (size_t i = 0; i < b->nlats && *n < 4; i++)
        if (b->lats[i].s == s && b->lats[i].offered_per_s == rate)
            v[(*n)++] = b->lats[i].p99_ms;
    return dq_median(v, (size_t)*n);
}

static void targets_lateness(FILE *f, const dq_bench *b)
{
    for (size_t si = 0; dq_strategies[si]; si++) {
        const dq_strategy *s = dq_strategies[si];
        bool blocks = (s->flags & DQ_G_BLOCKS) != 0;
        int n;
        row r;

        if (!dq_bench_selected(b, s))
            continue;
        row_init(&r, "lateness_p99_200", s, "", "ms");
        r.figure = lat_p99_at(b, s, LATENESS_RATE, &n);
        r.samples = n;
        row_judge(&r, "figure", "<=", blocks ? LATENESS_MAX_MS : -1);
        snprintf(r.detail, sizeof r.detail, "%s%s; tasks due 100 ms after "
                 "their enqueue", n == 0 ? "no run at 200 tasks/s; " : "",
                 blocks ? "blocks (DQ_G_BLOCKS)" : "polls: no bound");
        row_write(f, &r);
    }
}

/* The saturation row of s from its lateness records: the lowest rate
 * that two runs saturated (bench_lateness.c), the highest rate with a run
 * that did not. */
static void saturation_row(FILE *f, const dq_bench *b, const dq_strategy *s)
{
    int64_t sustained = -1, first_sat = -1;
    const char *why = "";
    int n = 0;
    row r;

    for (size_t i = 0; i < b->nlats; i++) {
        const dq_bench_lat *l = &b->lats[i];
        int sat = 0;
        if (l->s != s)
            continue;
        n++;
        if (!l->saturated && l->offered_per_s > sustained)
            sustained = l->offered_per_s;
        for (size_t k = 0; k < b->nlats; k++)
            sat += b->lats[k].s == s && b->lats[k].saturated &&
                   b->lats[k].offered_per_s == l->offered_per_s;
        if (l->saturated && sat >= 2 &&
            (first_sat < 0 || l->offered_per_s < first_sat)) {
            first_sat = l->offered_per_s;
            why = l->why;
        }
    }
    row_init(&r, "saturation", s, "", "tasks/s offered");
    r.figure = first_sat;
    r.samples = n;
    r.met = n > 0 ? "yes" : "not measured";
    if (n == 0)
        snprintf(r.detail, sizeof r.detail, "no lateness run");
    else if (first_sat < 0)
        snprintf(r.detail, sizeof r.detail, "not saturated up to %" PRId64
                 " tasks/s (the highest rate run)", sustained);
    else
        snprintf(r.detail, sizeof r.detail, "saturates at %" PRId64
                 " tasks/s (%s); sustained %" PRId64 " tasks/s", first_sat,
                 why, sustained);
    row_write(f, &r);
}

/* The backlog record of s at n, or NULL. */
static const dq_bench_bl *bl_at(const dq_bench *b, const dq_strategy *s,
                                int64_t n)
{
    for (size_t i = 0; i < b->nbls; i++)
        if (b->bls[i].s == s && b->bls[i].backlog == n)
            return &b->bls[i];
    return NULL;
}

static void backlog_row(FILE *f, const dq_bench *b, const dq_strategy *s)
{
    const dq_bench_bl *small = bl_at(b, s, BACKLOG_SMALL);
    const dq_bench_bl *large = bl_at(b, s, BACKLOG_LARGE);
    bool zset = (s->flags & DQ_G_ZSET_LAYOUT) != 0;
    bool inproc = !(s->flags & DQ_G_NEEDS_REDIS);
    row r;

    row_init(&r, "backlog_claim_p99", s, "", "us");
    r.reference = "claim p99 at 1000 pending";
    r.samples = b->pl->bl_rounds;
    if (small != NULL && large != NULL) {
        r.figure = large->claim_us_p99;
        r.ref_value = small->claim_us_p99;
        if (r.ref_value > 0)
            r.share = r.figure / r.ref_value;
    }
    row_judge(&r, "share", "<=", zset ? BACKLOG_MAX_RATIO : -1);
    if (!zset && !inproc)
        snprintf(r.detail, sizeof r.detail, "no ZSet layout: not preloaded "
                 "(meta.txt skipped)");
    else if (small == NULL || large == NULL)
        snprintf(r.detail, sizeof r.detail, "needs backlogs %d and %d in "
                 "the plan (--full or --quick)", BACKLOG_SMALL,
                 BACKLOG_LARGE);
    else
        snprintf(r.detail, sizeof r.detail, "claim p99 at %d pending / at "
                 "%d; medians of %d paired rounds; p50 %.1f / %.1f us",
                 BACKLOG_LARGE, BACKLOG_SMALL, b->pl->bl_rounds,
                 large->claim_us_p50, small->claim_us_p50);
    row_write(f, &r);
}

int dq_bench_write_targets(const dq_bench *b, char *err, size_t errlen)
{
    char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
    FILE *f;

    snprintf(path, sizeof path, "%s/targets.csv", b->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if ((f = fopen(tmp, "w")) == NULL) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    fputs(DQ_BENCH_TARGETS_HEADER, f);
    targets_throughput(f, b);
    targets_harness(f, b);
    targets_lateness(f, b);
    for (size_t si = 0; dq_strategies[si]; si++)
        if (dq_bench_selected(b, dq_strategies[si]))
            saturation_row(f, b, dq_strategies[si]);
    for (size_t si = 0; dq_strategies[si]; si++)
        if (dq_bench_selected(b, dq_strategies[si]))
            backlog_row(f, b, dq_strategies[si]);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
