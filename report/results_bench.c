/* results_bench.c -- the results of `dqlab bench` (harness/bench.h:
 * RESULTS/bench/latest/{meta.txt, ceiling.csv, throughput.csv,
 * backlog.csv, lateness.csv}) and of `dqlab probes` (harness/probes.h:
 * RESULTS/probes/latest/{probes.csv, meta.txt}) in the results model, and
 * the lookups the Performance section and the claim rules share.
 *
 * Each CSV is described by a column table and read by dq_csv_load, so a
 * column the bench adds is one line here.  A bench file that is missing
 * (`--only` left its unit out) is an empty table, not an error.
 */
#define _GNU_SOURCE /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/probes.h"
#include "results.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define COL(type, name, T, t) {#name, DQ_COLT_##T, offsetof(type, name), t}
#define TP(name, T) COL(dq_perf_tp, name, T, "")
#define BL(name, T) COL(dq_perf_bl, name, T, "")
#define LA(name, T) COL(dq_perf_lat, name, T, "")

static const dq_colspec tp_cols[] = {
    TP(kind, STR), TP(strategy, STR), TP(options, STR), TP(producers, INT),
    TP(consumers, INT), TP(repeat, INT), TP(tasks, I64), TP(seconds, DBL),
    TP(tasks_per_s, DBL), TP(delivered, U64), TP(duplicates, U64),
    TP(lost, U64), TP(early, U64), TP(redis_commands, I64),
    TP(redis_cpu_ms, DBL), TP(lateness_p99_ms, DBL),
};
static const dq_colspec bl_cols[] = {
    BL(strategy, STR), BL(options, STR), BL(backlog, I64),
    BL(preload_s, DBL), BL(memory_bytes, I64), BL(bytes_per_task, DBL),
    BL(enqueue_us_mean, DBL), BL(enqueue_us_p50, DBL),
    BL(enqueue_us_p99, DBL), BL(claims, I64), BL(claim_us_p50, DBL),
    BL(claim_us_p90, DBL), BL(claim_us_p99, DBL), BL(claim_us_max, DBL),
    BL(empty_claims, I64),
};
static const dq_colspec lat_cols[] = {
    LA(strategy, STR), LA(options, STR), LA(producers, INT),
    LA(consumers, INT), LA(offered_per_s, I64), LA(seconds, DBL),
    LA(enqueued, U64), LA(sent_per_s, DBL), LA(delivered, U64),
    LA(delivered_per_s, DBL), LA(lost, U64), LA(duplicates, U64),
    {"lateness_p50_ms", DQ_COLT_DBL, offsetof(dq_perf_lat, p50_ms), ""},
    {"lateness_p99_ms", DQ_COLT_DBL, offsetof(dq_perf_lat, p99_ms), ""},
    {"lateness_max_ms", DQ_COLT_DBL, offsetof(dq_perf_lat, max_ms), ""},
    LA(saturated, INT),
};

typedef struct ceiling_row {
    const char *source, *measure;
    int64_t ops;
    int pipeline;
    double ops_per_s;
} ceiling_row;
static const dq_colspec ceiling_cols[] = {
    COL(ceiling_row, source, STR, ""), COL(ceiling_row, measure, STR, ""),
    COL(ceiling_row, ops, I64, ""), COL(ceiling_row, pipeline, INT, ""),
    COL(ceiling_row, ops_per_s, DBL, ""),
};

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

/* ceiling.csv: dqlab's pipelined rates and redis-benchmark's. */
static int load_ceiling(dq_perf *p, char *err, size_t errlen)
{
    char path[PATH_MAX + 16];
    dq_csv c;
    snprintf(path, sizeof path, "%s/ceiling.csv", p->dir);
    if (dq_csv_load(path, ceiling_cols, NCOLS(ceiling_cols),
                    sizeof(ceiling_row), false, NULL, &c, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < c.n; i++) {
        const ceiling_row *r = (const ceiling_row *)c.rows + i;
        bool rb = strcmp(r->source, "redis-benchmark") == 0;
        if (strcmp(r->measure, "zadd") == 0)
            *(rb ? &p->rb_zadd_per_s : &p->zadd_per_s) = r->ops_per_s;
        else if (strcmp(r->measure, "zpopmin") == 0)
            *(rb ? &p->rb_zpopmin_per_s : &p->zpopmin_per_s) = r->ops_per_s;
        if (!rb) {
            p->ceiling_ops = r->ops;
            p->ceiling_pipeline = r->pipeline;
        }
    }
    dq_csv_free(&c);
    return 0;
}

int dq_perf_load(const char *root, dq_perf *p, char *err, size_t errlen)
{
    static const struct {
        const char *file;
        const dq_colspec *cols;
        size_t ncols, size;
    } files[3] = {
        {"throughput.csv", tp_cols, NCOLS(tp_cols), sizeof(dq_perf_tp)},
        {"backlog.csv", bl_cols, NCOLS(bl_cols), sizeof(dq_perf_bl)},
        {"lateness.csv", lat_cols, NCOLS(lat_cols), sizeof(dq_perf_lat)},
    };
    char path[PATH_MAX + 32], real[PATH_MAX];
    memset(p, 0, sizeof *p);
    p->zadd_per_s = p->zpopmin_per_s = -1;
    p->rb_zadd_per_s = p->rb_zpopmin_per_s = -1;
    snprintf(path, sizeof path, "%s/bench/latest", root);
    if (realpath(path, real) == NULL)
        return 0;
    snprintf(p->dir, sizeof p->dir, "%s", real);
    snprintf(path, sizeof path, "%s/meta.txt", p->dir);
    if (dq_meta_load(path, &p->meta, err, errlen) != 0)
        return -1;
    p->present = true;
    if (load_ceiling(p, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", p->dir, files[i].file);
        if (dq_csv_load(path, files[i].cols, files[i].ncols, files[i].size,
                        false, NULL, &p->csv[i], err, errlen) < 0)
            return -1;
    }
    p->tp = p->csv[0].rows;
    p->ntp = p->csv[0].n;
    p->bl = p->csv[1].rows;
    p->nbl = p->csv[1].n;
    p->lat = p->csv[2].rows;
    p->nlat = p->csv[2].n;
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void dq_perf_tp_label(const dq_perf_tp *t, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", t->strategy, t->options[0] ? " " : "",
             t->options);
    for (char *c = buf; *c; c++)
        if (*c == ';')
            *c = ' ';
}

/* Median tasks/s of the rows of kind, label and consumers; -1. */
static double tp_median(const dq_perf *p, const char *kind,
                        const char *label, int consumers)
{
    double v[256];
    size_t n = 0;
    for (size_t i = 0; i < p->ntp && n < 256; i++) {
        const dq_perf_tp *t = &p->tp[i];
        char l[256];
        dq_perf_tp_label(t, l, sizeof l);
        if (strcmp(t->kind, kind) == 0 && strcmp(l, label) == 0 &&
            t->consumers == consumers)
            v[n++] = t->tasks_per_s;
    }
    if (n == 0)
        return -1;
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double dq_perf_e2e(const dq_perf *p, const char *label, int consumers,
                   int *at)
{
    double best = -1;
    if (consumers > 0)
        return tp_median(p, "e2e", label, consumers);
    for (size_t i = 0; i < p->ntp; i++) {
        const dq_perf_tp *t = &p->tp[i];
        char l[256];
        dq_perf_tp_label(t, l, sizeof l);
        if (strcmp(t->kind, "e2e") != 0 || strcmp(l, label) != 0)
            continue;
        double m = tp_median(p, "e2e", label, t->consumers);
        if (m > best) {
            best = m;
            if (at != NULL)
                *at = t->consumers;
        }
    }
    return best;
}

double dq_perf_enqueue(const dq_perf *p, const char *label)
{
    return tp_median(p, "enqueue", label, 0);
}

const dq_perf_bl *dq_perf_backlog(const dq_perf *p, const char *strategy,
                                  int64_t n)
{
    for (size_t i = 0; i < p->nbl; i++)
        if (strcmp(p->bl[i].strategy, strategy) == 0 &&
            p->bl[i].backlog == n)
            return &p->bl[i];
    return NULL;
}

void dq_perf_backlog_range(const dq_perf *p, const char *strategy,
                           const dq_perf_bl **lo, const dq_perf_bl **hi)
{
    *lo = *hi = NULL;
    for (size_t i = 0; i < p->nbl; i++) {
        const dq_perf_bl *b = &p->bl[i];
        if (strcmp(b->strategy, strategy) != 0)
            continue;
        if (*lo == NULL || b->backlog < (*lo)->backlog)
            *lo = b;
        if (*hi == NULL || b->backlog > (*hi)->backlog)
            *hi = b;
    }
}

/* ---- Probes ------------------------------------------------------------- */

#define PR(name) COL(dq_probe_row, name, STR, NULL)
static const dq_colspec probe_cols[] = {
    PR(claim), PR(probe), PR(action), PR(observed),
    {"verdict_input", DQ_COLT_STR, offsetof(dq_probe_row, input), NULL},
};

int dq_probes_load(const char *root, dq_probes *p, char *err, size_t errlen)
{
    char path[PATH_MAX + 64], real[PATH_MAX], e[8];
    dq_meta m;
    memset(p, 0, sizeof *p);
    snprintf(path, sizeof path, "%s/probes/latest", root);
    if (realpath(path, real) == NULL)
        return 0;
    snprintf(p->dir, sizeof p->dir, "%s", real);
    snprintf(path, sizeof path, "%s/probes.csv", p->dir);
    int rc = dq_csv_load(path, probe_cols, NCOLS(probe_cols),
                         sizeof(dq_probe_row), true, NULL, &p->csv, err,
                         errlen);
    if (rc <= 0)
        return rc;
    p->present = true;
    p->rows = p->csv.rows;
    p->n = p->csv.n;
    snprintf(path, sizeof path, "%s/meta.txt", p->dir);
    if (dq_meta_load(path, &m, e, sizeof e) == 0) {   /* optional */
        snprintf(p->redis_version, sizeof p->redis_version, "%s",
                 dq_meta_get(&m, "redis_version"));
        dq_meta_free(&m);
    }
    return 0;
}

const dq_probe_row *dq_probes_find(const dq_probes *p, const char *claim,
                                   const char *probe)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->rows[i].claim, claim) == 0 &&
            strcmp(p->rows[i].probe, probe) == 0)
            return &p->rows[i];
    return NULL;
}

bool dq_probe_int(const dq_probe_row *row, const char *key, int64_t *out)
{
    size_t kl = strlen(key);
    for (const char *s = row ? row->input : ""; *s;) {
        if (strncmp(s, key, kl) == 0 && s[kl] == '=') {
            char *end;
            errno = 0;
            long long v = strtoll(s + kl + 1, &end, 10);
            if (errno != 0 || end == s + kl + 1 || (*end != ';' && *end))
                return false;
            *out = v;
            return true;
        }
        const char *semi = strchr(s, ';');
        if (semi == NULL)
            break;
        s = semi + 1;
    }
    return false;
}

/* ---- `dqlab opcost` ----------------------------------------------------- */

#define OC(name, T, t) COL(dq_opcost_row, name, T, t)
static const dq_colspec opcost_cols[] = {
    OC(strategy, STR, NULL), OC(mix, STR, "now"), OC(n, I64, NULL),
    OC(ops, I64, NULL),
    {"ns_per_op_median", DQ_COLT_DBL, offsetof(dq_opcost_row, ns_median),
     NULL},
    {"ns_per_op_min", DQ_COLT_DBL, offsetof(dq_opcost_row, ns_min), NULL},
    {"ns_per_op_max", DQ_COLT_DBL, offsetof(dq_opcost_row, ns_max), NULL},
};

int dq_opcost_load(const char *root, dq_opcost *p, char *err, size_t errlen)
{
    char path[PATH_MAX + 64], real[PATH_MAX], e[8];
    memset(p, 0, sizeof *p);
    snprintf(path, sizeof path, "%s/opcost/latest", root);
    if (realpath(path, real) == NULL)
        return 0;
    snprintf(p->dir, sizeof p->dir, "%s", real);
    snprintf(path, sizeof path, "%s/opcost.csv", p->dir);
    int rc = dq_csv_load(path, opcost_cols, NCOLS(opcost_cols),
                         sizeof(dq_opcost_row), false, NULL, &p->csv, err,
                         errlen);
    if (rc <= 0)
        return rc;
    p->present = true;
    p->rows = p->csv.rows;
    p->n = p->csv.n;
    snprintf(path, sizeof path, "%s/meta.txt", p->dir);
    if (dq_meta_load(path, &p->meta, e, sizeof e) != 0)   /* optional */
        memset(&p->meta, 0, sizeof p->meta);
    return 0;
}

void dq_opcost_range(const dq_opcost *p, const char *strategy,
                     const char *mix, const dq_opcost_row **lo,
                     const dq_opcost_row **hi)
{
    *lo = *hi = NULL;
    for (size_t i = 0; i < p->n; i++) {
        const dq_opcost_row *x = &p->rows[i];
        if (strcmp(x->strategy, strategy) != 0 || strcmp(x->mix, mix) != 0 ||
            x->n < 1)
            continue;
        *lo = *lo == NULL || x->n < (*lo)->n ? x : *lo;
        *hi = *hi == NULL || x->n > (*hi)->n ? x : *hi;
    }
}
