/* results_bench.c -- the results of `dqlab bench` (harness/bench.h:
 * RESULTS/bench/latest/{meta.txt, ceiling.csv, references.csv,
 * harness.csv, throughput.csv, backlog.csv, lateness.csv, targets.csv})
 * and of `dqlab probes` (harness/probes.h: RESULTS/probes/latest/
 * {probes.csv, meta.txt}) in the results model, and
 * the lookups the Performance section and the claim rules share.
 *
 * Each CSV is described by a column table and read by dq_csv_load, so a
 * column the bench adds is one line here.  A bench file that is missing
 * (`--only` left its unit out, or a run older than references.csv,
 * harness.csv and targets.csv) is an empty table with has[] false, not an
 * error; a malformed one is refused with file:line.  targets.csv is kept
 * as the bench wrote it: the bench decides met, the report only shows it.
 */
#define _GNU_SOURCE /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/probes.h"
#include "results.h"
#include "stats.h"

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
    LA(saturated, INT), COL(dq_perf_lat, run, INT, "1"),
};

#define RF(name, T) COL(dq_perf_ref, name, T, NULL)
static const dq_colspec ref_cols[] = {
    RF(reference, STR), RF(when, STR), RF(command, STR), RF(clients, INT),
    RF(pipeline, INT), RF(requests, I64), RF(ops_per_s, DBL),
    {"redis_cpu_us_per_op", DQ_COLT_DBL,
     offsetof(dq_perf_ref, cpu_us_per_op), "-1"},
};
#define HA(name, T) COL(dq_perf_harness, name, T, NULL)
static const dq_colspec harness_cols[] = {
    HA(kind, STR), HA(strategy, STR), HA(consumers, INT), HA(repeat, INT),
    HA(tasks_per_s, DBL), HA(events_per_s, DBL),
};
#define TG(name, T) COL(dq_perf_target, name, T, NULL)
static const dq_colspec target_cols[] = {
    TG(target, STR), TG(strategy, STR), TG(options, STR), TG(figure, DBL),
    TG(unit, STR), TG(reference, STR), TG(reference_value, DBL),
    TG(share, DBL), TG(bound_on, STR), TG(op, STR), TG(bound, DBL),
    TG(met, STR),
    {"redis_cpu_us_per_task", DQ_COLT_DBL,
     offsetof(dq_perf_target, cpu_us_per_task), "-1"},
    TG(samples, I64), TG(detail, STR),
};
#define CE(name, T) COL(dq_perf_ceiling, name, T, "")
static const dq_colspec ceiling_cols[] = {
    CE(measure, STR), CE(source, STR), CE(ops, I64), CE(pipeline, INT),
    CE(ops_per_s, DBL),
};

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

/* A targets.csv row the report cannot show as written: a verdict or a
 * bound that is not one of bench.h's words; NULL when it is fine. */
static const char *target_check(const void *row)
{
    const dq_perf_target *t = row;
    static const char *const mets[] = {"yes", "no", "none", "not measured"};
    bool ok = false;
    for (size_t i = 0; i < NCOLS(mets); i++)
        ok = ok || strcmp(t->met, mets[i]) == 0;
    if (!ok)
        return "met is not yes, no, none or not measured";
    if (t->target[0] == '\0')
        return "empty target";
    if (strcmp(t->bound_on, "") != 0 && strcmp(t->bound_on, "share") != 0 &&
        strcmp(t->bound_on, "figure") != 0)
        return "bound_on is not share, figure or empty";
    if (strcmp(t->op, "") != 0 && strcmp(t->op, ">=") != 0 &&
        strcmp(t->op, "<=") != 0)
        return "op is not >=, <= or empty";
    if ((t->bound_on[0] == '\0') != (t->op[0] == '\0'))
        return "bound_on and op: both or neither";
    return NULL;
}

static const char *ref_check(const void *row)
{
    const dq_perf_ref *r = row;
    return r->reference[0] == '\0' ? "empty reference" : NULL;
}

/* ceiling.csv's row of dqlab's pipelined ZADD: the rate the pack section
 * reads. */
static void ceiling_zadd(dq_perf *p)
{
    p->zadd_per_s = -1;
    for (size_t i = 0; i < p->nceiling; i++)
        if (strcmp(p->ceiling[i].measure, "zadd") == 0 &&
            strcmp(p->ceiling[i].source, "redis-benchmark") != 0)
            p->zadd_per_s = p->ceiling[i].ops_per_s;
}

int dq_perf_load(const char *root, dq_perf *p, char *err, size_t errlen)
{
    static const struct {
        const char *file;
        const dq_colspec *cols;
        size_t ncols, size;
        const char *(*check)(const void *row);
    } files[DQ_PERF_NFILES] = {
        [DQ_PERF_TP] = {"throughput.csv", tp_cols, NCOLS(tp_cols),
                        sizeof(dq_perf_tp), NULL},
        [DQ_PERF_BL] = {"backlog.csv", bl_cols, NCOLS(bl_cols),
                        sizeof(dq_perf_bl), NULL},
        [DQ_PERF_LAT] = {"lateness.csv", lat_cols, NCOLS(lat_cols),
                         sizeof(dq_perf_lat), NULL},
        [DQ_PERF_REF] = {"references.csv", ref_cols, NCOLS(ref_cols),
                         sizeof(dq_perf_ref), ref_check},
        [DQ_PERF_HARNESS] = {"harness.csv", harness_cols,
                             NCOLS(harness_cols), sizeof(dq_perf_harness),
                             NULL},
        [DQ_PERF_TARGETS] = {"targets.csv", target_cols, NCOLS(target_cols),
                             sizeof(dq_perf_target), target_check},
        [DQ_PERF_CEILING] = {"ceiling.csv", ceiling_cols,
                             NCOLS(ceiling_cols), sizeof(dq_perf_ceiling),
                             NULL},
    };
    char path[PATH_MAX + 32], real[PATH_MAX];
    memset(p, 0, sizeof *p);
    ceiling_zadd(p);
    snprintf(path, sizeof path, "%s/bench/latest", root);
    if (realpath(path, real) == NULL)
        return 0;
    snprintf(p->dir, sizeof p->dir, "%s", real);
    snprintf(path, sizeof path, "%s/meta.txt", p->dir);
    if (dq_meta_load(path, &p->meta, err, errlen) != 0)
        return -1;
    p->present = true;
    for (size_t i = 0; i < DQ_PERF_NFILES; i++) {
        snprintf(path, sizeof path, "%s/%s", p->dir, files[i].file);
        int rc = dq_csv_load(path, files[i].cols, files[i].ncols,
                             files[i].size, false, files[i].check,
                             &p->csv[i], err, errlen);
        if (rc < 0)
            return -1;
        p->has[i] = rc == 1;
    }
#define ROWS(f, field, count)                                                \
    (p->field = p->csv[f].rows, p->count = p->csv[f].n)
    ROWS(DQ_PERF_TP, tp, ntp);
    ROWS(DQ_PERF_BL, bl, nbl);
    ROWS(DQ_PERF_LAT, lat, nlat);
    ROWS(DQ_PERF_REF, ref, nref);
    ROWS(DQ_PERF_HARNESS, harness, nharness);
    ROWS(DQ_PERF_TARGETS, targets, ntargets);
    ROWS(DQ_PERF_CEILING, ceiling, nceiling);
#undef ROWS
    ceiling_zadd(p);
    return 0;
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
    return dq_median(v, n);
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

double dq_perf_ref_median(const dq_perf *p, const char *reference,
                          size_t *n)
{
    double v[64];
    size_t k = 0;
    for (size_t i = 0; i < p->nref && k < 64; i++)
        if (strcmp(p->ref[i].reference, reference) == 0 &&
            p->ref[i].ops_per_s >= 0)
            v[k++] = p->ref[i].ops_per_s;
    if (n != NULL)
        *n = k;
    return dq_median(v, k);
}

double dq_perf_harness_median(const dq_perf *p, const char *strategy,
                              bool events)
{
    double v[64];
    size_t k = 0;
    for (size_t i = 0; i < p->nharness && k < 64; i++)
        if (strcmp(p->harness[i].strategy, strategy) == 0)
            v[k++] = events ? p->harness[i].events_per_s
                            : p->harness[i].tasks_per_s;
    return dq_median(v, k);
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
    dq_meta_load(path, &p->meta, e, sizeof e);   /* optional: zeroed */
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
