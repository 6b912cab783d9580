/* section_perf.c -- the report's Performance section, from `dqlab bench`
 * (harness/bench.h; results under RESULTS/bench/latest).
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
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/experiment.h"
#include "../strategies/dq.h"
#include "perf.h"
#include "report_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* ---- Loading ------------------------------------------------------------ */

#define MAXF 32

typedef struct csv {
    char path[PATH_MAX];
    FILE *f;
    char *line;
    size_t cap;
    int lineno;
    char *head[MAXF];
    char *headbuf;
    int nhead;
    char *f_[MAXF];
    int n;
} csv;

/* Opens dir/name and reads its header.  Returns 1 opened, 0 absent, -1
 * error. */
static int csv_open(csv *c, const char *dir, const char *name, char *err,
                    size_t errlen)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s/%s", dir, name);
    c->f = fopen(c->path, "r");
    if (c->f == NULL)
        return errno == ENOENT ? 0 : (snprintf(err, errlen, "%s: %s",
                                               c->path, strerror(errno)),
                                      -1);
    if (getline(&c->line, &c->cap, c->f) <= 0) {
        snprintf(err, errlen, "%s:1: empty file (no header)", c->path);
        return -1;
    }
    c->lineno = 1;
    c->headbuf = strdup(c->line);
    if (c->headbuf == NULL) {
        snprintf(err, errlen, "%s: out of memory", c->path);
        return -1;
    }
    c->nhead = csv_split(c->headbuf, c->head, MAXF);
    return 1;
}

/* Next data row: 1, 0 at the end, -1 on a malformed row. */
static int csv_next(csv *c, char *err, size_t errlen)
{
    while (getline(&c->line, &c->cap, c->f) > 0) {
        c->lineno++;
        if (c->line[0] == '\n' || c->line[0] == '\0')
            continue;
        c->n = csv_split(c->line, c->f_, MAXF);
        if (c->n != c->nhead) {
            snprintf(err, errlen, "%s:%d: %d fields, header has %d",
                     c->path, c->lineno, c->n, c->nhead);
            return -1;
        }
        return 1;
    }
    return 0;
}

/* Field of the current row by column name; "" when no such column. */
static const char *fld(const csv *c, const char *name)
{
    for (int i = 0; i < c->nhead; i++)
        if (strcmp(c->head[i], name) == 0)
            return c->f_[i];
    return "";
}

static double fd(const csv *c, const char *name)
{
    return strtod(fld(c, name), NULL);
}

static int64_t fi(const csv *c, const char *name)
{
    return strtoll(fld(c, name), NULL, 10);
}

static void csv_close(csv *c)
{
    if (c->f)
        fclose(c->f);
    free(c->line);
    free(c->headbuf);
}

/* Grows *arr (elements of size sz) by one zeroed element; NULL on ENOMEM. */
static void *grow(void **arr, size_t *n, size_t sz)
{
    char *na = realloc(*arr, (*n + 1) * sz);
    if (na == NULL)
        return NULL;
    *arr = na;
    memset(na + *n * sz, 0, sz);
    return na + (*n)++ * sz;
}

static int load_meta(dq_perf *p, char *err, size_t errlen)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/meta.txt", p->dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\r\n")] = '\0';
        char *eq = strstr(line, " = ");
        if (line[0] == '#' || eq == NULL)
            continue;
        *eq = '\0';
        dq_rkv *kv = grow((void **)&p->meta, &p->nmeta, sizeof *kv);
        if (kv == NULL || (kv->key = strdup(line)) == NULL ||
            (kv->val = strdup(eq + 3)) == NULL) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -1;
            break;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

#define COPY(dst, src) snprintf((dst), sizeof(dst), "%s", (src))

int dq_perf_load(const char *root, dq_perf *p, char *err, size_t errlen)
{
    char link[PATH_MAX], real[PATH_MAX];
    csv c;
    int rc;
    memset(p, 0, sizeof *p);
    p->zadd_per_s = p->zpopmin_per_s = -1;
    p->rb_zadd_per_s = p->rb_zpopmin_per_s = -1;
    snprintf(link, sizeof link, "%s/bench/latest", root);
    if (realpath(link, real) == NULL)
        return 0;
    COPY(p->dir, real);
    if (load_meta(p, err, errlen) != 0)
        return -1;
    p->present = true;

    if ((rc = csv_open(&c, p->dir, "ceiling.csv", err, errlen)) < 0)
        goto fail;
    while (rc == 1 && (rc = csv_next(&c, err, errlen)) == 1) {
        bool rb = strcmp(fld(&c, "source"), "redis-benchmark") == 0;
        double v = fd(&c, "ops_per_s");
        if (strcmp(fld(&c, "measure"), "zadd") == 0)
            *(rb ? &p->rb_zadd_per_s : &p->zadd_per_s) = v;
        else if (strcmp(fld(&c, "measure"), "zpopmin") == 0)
            *(rb ? &p->rb_zpopmin_per_s : &p->zpopmin_per_s) = v;
        if (!rb) {
            p->ceiling_ops = fi(&c, "ops");
            p->ceiling_pipeline = (int)fi(&c, "pipeline");
        }
    }
    csv_close(&c);
    if (rc < 0)
        return -1;

    if ((rc = csv_open(&c, p->dir, "throughput.csv", err, errlen)) < 0)
        goto fail;
    while (rc == 1 && (rc = csv_next(&c, err, errlen)) == 1) {
        dq_perf_tp *t = grow((void **)&p->tp, &p->ntp, sizeof *t);
        if (t == NULL)
            goto oom;
        COPY(t->kind, fld(&c, "kind"));
        COPY(t->strategy, fld(&c, "strategy"));
        COPY(t->options, fld(&c, "options"));
        t->producers = (int)fi(&c, "producers");
        t->consumers = (int)fi(&c, "consumers");
        t->repeat = (int)fi(&c, "repeat");
        t->tasks = fi(&c, "tasks");
        t->seconds = fd(&c, "seconds");
        t->tasks_per_s = fd(&c, "tasks_per_s");
        t->delivered = (uint64_t)fi(&c, "delivered");
        t->duplicates = (uint64_t)fi(&c, "duplicates");
        t->lost = (uint64_t)fi(&c, "lost");
        t->early = (uint64_t)fi(&c, "early");
        t->redis_commands = fi(&c, "redis_commands");
        t->redis_cpu_ms = fd(&c, "redis_cpu_ms");
        t->lateness_p99_ms = fd(&c, "lateness_p99_ms");
    }
    csv_close(&c);
    if (rc < 0)
        return -1;

    if ((rc = csv_open(&c, p->dir, "backlog.csv", err, errlen)) < 0)
        goto fail;
    while (rc == 1 && (rc = csv_next(&c, err, errlen)) == 1) {
        dq_perf_bl *b = grow((void **)&p->bl, &p->nbl, sizeof *b);
        if (b == NULL)
            goto oom;
        COPY(b->strategy, fld(&c, "strategy"));
        COPY(b->options, fld(&c, "options"));
        b->backlog = fi(&c, "backlog");
        b->preload_s = fd(&c, "preload_s");
        b->memory_bytes = fi(&c, "memory_bytes");
        b->bytes_per_task = fd(&c, "bytes_per_task");
        b->enqueue_us_mean = fd(&c, "enqueue_us_mean");
        b->enqueue_us_p50 = fd(&c, "enqueue_us_p50");
        b->enqueue_us_p99 = fd(&c, "enqueue_us_p99");
        b->claims = fi(&c, "claims");
        b->claim_us_p50 = fd(&c, "claim_us_p50");
        b->claim_us_p90 = fd(&c, "claim_us_p90");
        b->claim_us_p99 = fd(&c, "claim_us_p99");
        b->claim_us_max = fd(&c, "claim_us_max");
        b->empty_claims = fi(&c, "empty_claims");
    }
    csv_close(&c);
    if (rc < 0)
        return -1;

    if ((rc = csv_open(&c, p->dir, "lateness.csv", err, errlen)) < 0)
        goto fail;
    while (rc == 1 && (rc = csv_next(&c, err, errlen)) == 1) {
        dq_perf_lat *l = grow((void **)&p->lat, &p->nlat, sizeof *l);
        if (l == NULL)
            goto oom;
        COPY(l->strategy, fld(&c, "strategy"));
        COPY(l->options, fld(&c, "options"));
        l->producers = (int)fi(&c, "producers");
        l->consumers = (int)fi(&c, "consumers");
        l->offered_per_s = fi(&c, "offered_per_s");
        l->seconds = fd(&c, "seconds");
        l->enqueued = (uint64_t)fi(&c, "enqueued");
        l->sent_per_s = fd(&c, "sent_per_s");
        l->delivered = (uint64_t)fi(&c, "delivered");
        l->delivered_per_s = fd(&c, "delivered_per_s");
        l->lost = (uint64_t)fi(&c, "lost");
        l->duplicates = (uint64_t)fi(&c, "duplicates");
        l->p50_ms = fd(&c, "lateness_p50_ms");
        l->p99_ms = fd(&c, "lateness_p99_ms");
        l->max_ms = fd(&c, "lateness_max_ms");
        l->saturated = fi(&c, "saturated") != 0;
    }
    csv_close(&c);
    return rc < 0 ? -1 : 0;
oom:
    snprintf(err, errlen, "%s: out of memory", c.path);
fail:
    csv_close(&c);
    return -1;
}

void dq_perf_free(dq_perf *p)
{
    for (size_t i = 0; i < p->nmeta; i++) {
        free(p->meta[i].key);
        free(p->meta[i].val);
    }
    free(p->meta);
    free(p->tp);
    free(p->bl);
    free(p->lat);
    memset(p, 0, sizeof *p);
}

const char *dq_perf_meta(const dq_perf *p, const char *key)
{
    for (size_t i = 0; i < p->nmeta; i++)
        if (strcmp(p->meta[i].key, key) == 0)
            return p->meta[i].val;
    return "";
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Names of strategies and variants: up to NAMELEN - 1 bytes. */
#define NAMELEN 64

/* The variant a throughput row measured: its strategy with the default
 * options and enqueue_batch 1 ("lua"), or the strategy and the row's
 * options with ';' written as ' ' ("lua batch=16 enqueue_batch=64").
 * Every figure and table groups rows by this label, so a batched variant
 * is never mixed into the medians of the plain strategy. */
static void tp_label(const dq_perf_tp *t, char *buf, size_t len)
{
    if (t->options[0] == '\0') {
        snprintf(buf, len, "%s", t->strategy);
        return;
    }
    snprintf(buf, len, "%s %s", t->strategy, t->options);
    for (char *c = buf; *c; c++)
        if (*c == ';')
            *c = ' ';
}

static bool tp_is(const dq_perf_tp *t, const char *label)
{
    char l[NAMELEN + 128];
    tp_label(t, l, sizeof l);
    return strcmp(l, label) == 0;
}

/* Median of the tasks/s of the rows of kind/label/consumers; -1.  label:
 * tp_label()'s form; a plain strategy name selects its rows without
 * options, as before variants existed. */
static double tp_median(const dq_perf *p, const char *kind,
                        const char *label, int consumers)
{
    double v[256];
    size_t n = 0;
    for (size_t i = 0; i < p->ntp && n < 256; i++) {
        const dq_perf_tp *t = &p->tp[i];
        if (strcmp(t->kind, kind) == 0 && tp_is(t, label)
            && t->consumers == consumers)
            v[n++] = t->tasks_per_s;
    }
    if (n == 0)
        return -1;
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double dq_perf_e2e(const dq_perf *p, const char *strategy, int consumers,
                   int *at)
{
    if (consumers > 0)
        return tp_median(p, "e2e", strategy, consumers);
    double best = -1;
    for (size_t i = 0; i < p->ntp; i++) {
        const dq_perf_tp *t = &p->tp[i];
        if (strcmp(t->kind, "e2e") != 0 || !tp_is(t, strategy))
            continue;
        double m = tp_median(p, "e2e", strategy, t->consumers);
        if (m > best) {
            best = m;
            if (at != NULL)
                *at = t->consumers;
        }
    }
    return best;
}

double dq_perf_enqueue(const dq_perf *p, const char *strategy)
{
    return tp_median(p, "enqueue", strategy, 0);
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

/* ---- Writing ------------------------------------------------------------ */

/* Distinct strategies of kind rows (NULL: backlog rows; "lat": lateness),
 * first-seen order. */
static size_t names_of(const dq_perf *p, const char *which,
                       char names[][NAMELEN], size_t max)
{
    size_t n = 0;
    size_t total = which == NULL ? p->nbl
                   : strcmp(which, "lat") == 0 ? p->nlat : p->ntp;
    for (size_t i = 0; i < total; i++) {
        char lb[NAMELEN + 128];
        const char *s = which == NULL ? p->bl[i].strategy
                        : strcmp(which, "lat") == 0 ? p->lat[i].strategy
                                                    : lb;
        if (which != NULL && strcmp(which, "lat") != 0) {
            if (strcmp(p->tp[i].kind, which) != 0)
                continue;
            tp_label(&p->tp[i], lb, sizeof lb);
        }
        size_t j;
        for (j = 0; j < n && strcmp(names[j], s) != 0; j++)
            ;
        if (j == n && n < max)
            snprintf(names[n++], NAMELEN, "%s", s);
    }
    return n;
}

/* Writes data/bench-<kind>.csv and figures/bench-<kind>.{svg,png} with
 * scripts/<script>.gp, and the Markdown image line. */
static int figure(out *o, const char *kind, const char *script,
                  const char *data, size_t len, char *err, size_t errlen)
{
    char stem[64];
    snprintf(stem, sizeof stem, "bench-%s", kind);
    if (draw_figure(o, stem, script, "csv", data, len, err, errlen) != 0)
        return -1;
    figure_links(o, stem, "csv");
    return 0;
}

/* The wide_csv context of the bench figures: the bench and the series
 * (strategy or row label) names. */
typedef struct {
    const dq_perf *p;
    char (*names)[NAMELEN];
} perf_ctx;

/* Builds the wide CSV of a bench figure (wide_csv with the series names,
 * one column per name and suffix of sufs) and draws it with figure(o,
 * kind, script, ...).  Returns 0, or -1 with err. */
static int perf_figure(out *o, const char *kind, const char *script,
                       const char *xname, const dq_perf *p,
                       char names[][NAMELEN], size_t ns,
                       const char *const *sufs, size_t nsufs,
                       const int64_t *xs, size_t nx, wide_cell_fn cell,
                       char *err, size_t errlen)
{
    perf_ctx c = {p, names};
    char *buf;
    size_t len;
    if (wide_csv(&buf, &len, xname, names[0], NAMELEN, ns, sufs, nsufs, xs,
                 nx, cell, &c, err, errlen) != 0)
        return -1;
    int rc = figure(o, kind, script, buf, len, err, errlen);
    free(buf);
    return rc != 0 ? -1 : 0;
}

/* Starts a bench subsection: writes "### <title>", fills names (at most
 * 32) with the strategies of the `which` rows (see names_of) and returns
 * their count; when there are none, also writes "Not measured in this
 * run." and returns 0 (the caller writes nothing more). */
static size_t perf_section_start(out *o, const char *title,
                                 const dq_perf *p, const char *which,
                                 char names[][NAMELEN])
{
    size_t ns = names_of(p, which, names, 32);
    both(o, "### %s\n\n", title);
    if (ns == 0)
        both(o, "Not measured in this run.\n\n");
    return ns;
}

/* True when the strategy of a row label ("name" or "name options") does
 * not use Redis (the heap): a fraction of the Redis ceiling means nothing
 * for it. */
static bool no_redis(const char *label)
{
    char name[NAMELEN];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(label, " "), label);
    const dq_strategy *st = dq_strategy_find(name);
    return st != NULL && !(st->flags & DQ_G_NEEDS_REDIS);
}

static void fmt_rate(char *buf, size_t len, double v)
{
    if (v < 0)
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.0f", v);
}

static void write_ceiling(out *o, const dq_perf *p)
{
    both(o, "### The ceiling: bare commands on this server\n\n");
    if (p->zadd_per_s < 0 && p->rb_zadd_per_s < 0) {
        both(o, "Not measured in this run (`--only` left it out or it "
             "failed; see meta.txt).\n\n");
        return;
    }
    const char *head[] = {"command", "measured by", "operations",
                          "pipeline", "per second"};
    char c[5][64];
    const char *cells[5];
    for (size_t i = 0; i < 5; i++)
        cells[i] = c[i];
    table_row(o, head, 5, true);
    struct {
        const char *cmd, *src;
        double v;
    } rows[] = {{"ZADD", "dqlab (hiredis pipelining)", p->zadd_per_s},
                {"ZPOPMIN", "dqlab (hiredis pipelining)", p->zpopmin_per_s},
                {"ZADD", "redis-benchmark", p->rb_zadd_per_s},
                {"ZPOPMIN", "redis-benchmark", p->rb_zpopmin_per_s}};
    for (size_t i = 0; i < 4; i++) {
        if (rows[i].v < 0)
            continue;
        snprintf(c[0], 64, "%s", rows[i].cmd);
        snprintf(c[1], 64, "%s", rows[i].src);
        snprintf(c[2], 64, "%" PRId64, p->ceiling_ops);
        snprintf(c[3], 64, "%d", p->ceiling_pipeline);
        fmt_rate(c[4], 64, rows[i].v);
        table_row(o, cells, 5, false);
    }
    table_end(o);
    if (p->zadd_per_s < 0)
        both(o, "The ceiling was not measured in this run (`--only` left it "
             "out or it failed; see meta.txt).\n\n");
    else
        both(o, "Every strategy's throughput below is also given as a "
             "fraction of dqlab's pipelined ZADD rate (%.0f/s): the rate at "
             "which this server, on this machine, in this run, adds members "
             "to a sorted set when the client never waits for a reply.  "
             "ZADD and ZPOPMIN each are one member per command.%s\n\n",
             p->zadd_per_s, p->rb_zadd_per_s < 0 ? "  redis-benchmark did "
             "not run (it runs only against the private server, when "
             "installed)." : "");
}

/* wide_cell_fn of the throughput figure: end-to-end tasks/s of row label
 * s at x consumers. */
static void throughput_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const perf_ctx *c = ctx;
    double v = dq_perf_e2e(c->p, c->names[s], (int)x, NULL);
    if (v >= 0)
        fprintf(f, "%.1f", v);
}

static int write_throughput(out *o, const dq_perf *p, char *err,
                            size_t errlen)
{
    char names[32][NAMELEN];
    size_t ns = perf_section_start(o, "Throughput", p, "e2e", names);
    if (ns == 0)
        return 0;
    int64_t xs[16];
    size_t nx = 0;
    for (size_t i = 0; i < p->ntp; i++)
        if (strcmp(p->tp[i].kind, "e2e") == 0)
            nx = add_distinct_i64(xs, nx, 16, p->tp[i].consumers);
    sort_i64(xs, nx);
    /* The figure: x consumers, one column per strategy (throughput.gp). */
    if (perf_figure(o, "throughput", "throughput", "consumers", p, names, ns,
                    NULL, 0, xs, nx, throughput_cell, err, errlen) != 0)
        return -1;

    const char *tasks = dq_perf_meta(p, "tasks");
    const char *fac = dq_perf_meta(p, "in_process_factor");
    both(o, "End to end: %s tasks all due at once (%s times more for the "
         "in-process heap, too fast to time otherwise), producers: %s, the "
         "consumers claim and ack; tasks/s is delivered tasks over first "
         "enqueue to last delivery, with the harness recording every "
         "event in the log and checking it (trial.c).  Enqueue only: one "
         "handle calling the strategy's enqueue %s times in a loop, no "
         "consumer.  Medians of %s repeats.  A row with options is a "
         "batched variant (%s times more tasks): `batch=N` claims N tasks "
         "per round trip, `enqueue_batch=N` makes each producer send its "
         "tasks N at a time with the strategy's variadic enqueue "
         "(dq_enqueue_many), every task still logged and checked.\n\n",
         tasks, fac[0] ? fac : "1", dq_perf_meta(p, "producers"),
         dq_perf_meta(p, "enqueue_tasks"), dq_perf_meta(p, "repeats"),
         dq_perf_meta(p, "variant_factor")[0]
             ? dq_perf_meta(p, "variant_factor") : "1");
    const char *h0[] = {"strategy", "enqueue only /s"};
    const char *h1[] = {"best e2e /s", "of ZADD ceiling",
                        "Redis cmds/task", "server CPU us/task"};
    const char *head[32];
    size_t nh = 0;
    char xh[16][32];
    head[nh++] = h0[0];
    head[nh++] = h0[1];
    for (size_t x = 0; x < nx; x++) {
        snprintf(xh[x], 32, "e2e /s, %d cons.", (int)xs[x]);
        head[nh++] = xh[x];
    }
    for (size_t i = 0; i < 4; i++)
        head[nh++] = h1[i];
    table_row(o, head, nh, true);
    for (size_t s = 0; s < ns; s++) {
        char c[32][NAMELEN];
        const char *cells[32];
        size_t n = 0;
        snprintf(c[n++], NAMELEN, "%s", names[s]);
        fmt_rate(c[n++], 64, dq_perf_enqueue(p, names[s]));
        for (size_t x = 0; x < nx; x++)
            fmt_rate(c[n++], 64, dq_perf_e2e(p, names[s], (int)xs[x], NULL));
        int at = 0;
        double best = dq_perf_e2e(p, names[s], 0, &at);
        snprintf(c[n++], 64, "%.0f (%d cons.)", best, at);
        if (p->zadd_per_s > 0 && !no_redis(names[s]))
            snprintf(c[n++], 64, "%.1f%%", 100 * best / p->zadd_per_s);
        else
            snprintf(c[n++], 64, "n/a");
        /* Cost per task at the best cell: medians over its repeats. */
        double cm[64], cu[64];
        size_t ncm = 0, ncu = 0;
        for (size_t i = 0; i < p->ntp && ncm < 64; i++) {
            const dq_perf_tp *t = &p->tp[i];
            if (strcmp(t->kind, "e2e") || !tp_is(t, names[s]) ||
                t->consumers != at || t->delivered == 0)
                continue;
            if (t->redis_commands >= 0)
                cm[ncm++] = (double)t->redis_commands / (double)t->delivered;
            if (t->redis_cpu_ms >= 0)
                cu[ncu++] = t->redis_cpu_ms * 1000 / (double)t->delivered;
        }
        qsort(cm, ncm, sizeof *cm, cmp_d);
        qsort(cu, ncu, sizeof *cu, cmp_d);
        fmt_double(c[n++], 64, ncm ? cm[ncm / 2] : -1, 1);
        fmt_double(c[n++], 64, ncu ? cu[ncu / 2] : -1, 1);
        for (size_t k = 0; k < n; k++)
            cells[k] = c[k];
        table_row(o, cells, n, false);
    }
    table_end(o);
    both(o, "Redis cmds/task: the server's INFO commandstats delta over the "
         "trial per delivered task (commands inside Lua scripts and "
         "MULTI/EXEC count one each); server CPU: INFO used_cpu_sys + "
         "used_cpu_user delta per delivered task; both at the consumer "
         "count of the best median.  n/a: no Redis.\n\n");

    /* What happened: best Redis strategy, heap as the harness ceiling. */
    double best_r = -1, heap = -1;
    const char *best_s = NULL;
    int best_at = 0;
    for (size_t s = 0; s < ns; s++) {
        int at = 0;
        double v = dq_perf_e2e(p, names[s], 0, &at);
        if (strcmp(names[s], "heap") == 0) {
            heap = v;
            continue;
        }
        if (v > best_r) {
            best_r = v;
            best_s = names[s];
            best_at = at;
        }
    }
    both(o, "**What happened.** ");
    if (best_s != NULL) {
        both(o, "The fastest Redis strategy end to end was %s with %.0f "
             "tasks/s (%d consumers)", best_s, best_r, best_at);
        if (p->zadd_per_s > 0)
            both(o, ", %.1f%% of the pipelined ZADD rate", 100 * best_r /
                 p->zadd_per_s);
        both(o, ". ");
    }
    if (heap > 0) {
        both(o, "The heap, which does not touch Redis, went through the "
             "same harness at %.0f tasks/s: the harness's own ceiling",
             heap);
        if (best_r > 0)
            both(o, ", %.1fx the fastest Redis strategy, so the harness was "
                 "%s", heap / best_r, heap >= 2 * best_r
                     ? "not their bottleneck"
                     : "close enough to be part of their bottleneck");
        both(o, ". ");
    }
    both(o, "\n\n");
    return 0;
}

/* ln(a) / ln(b) */
static double log_ratio(int64_t a, int64_t b)
{
    return log((double)a) / log((double)b);
}

/* wide_cell_fn of the backlog figure: claim p50 and p99 (us, two cells)
 * of strategy s with x pending.  Log axes: a 0 us claim (the heap, below
 * the clock's resolution) is drawn at 0.5 us. */
static void backlog_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const perf_ctx *c = ctx;
    const dq_perf_bl *b = dq_perf_backlog(c->p, c->names[s], x);
    if (b != NULL && b->claims > 0)
        fprintf(f, "%.2f,%.2f", b->claim_us_p50 > 0.5 ? b->claim_us_p50
                : 0.5, b->claim_us_p99 > 0.5 ? b->claim_us_p99 : 0.5);
    else
        fputc(',', f);
}

static int write_backlog(out *o, const dq_perf *p, char *err, size_t errlen)
{
    char names[32][NAMELEN];
    size_t ns = perf_section_start(o, "Backlog scaling", p, NULL, names);
    if (ns == 0)
        return 0;
    int64_t xs[16];
    size_t nx = 0;
    for (size_t i = 0; i < p->nbl; i++)
        nx = add_distinct_i64(xs, nx, 16, p->bl[i].backlog);
    sort_i64(xs, nx);
    const char *sufs[] = {" p50", " p99"};
    if (perf_figure(o, "backlog", "perf_backlog", "pending", p, names, ns,
                    sufs, 2, xs, nx, backlog_cell, err, errlen) != 0)
        return -1;
    both(o, "For each backlog N, N tasks due an hour ahead are preloaded "
         "(Redis strategies: ZADD + HSET pipelined into the queue's keys, "
         "what their enqueue writes; heap: its enqueue), then, in %s "
         "rounds, %s tasks due now are enqueued and claimed one at a time "
         "by one consumer; each claim call is timed on its own (the ack is "
         "not), and the percentiles shown are the medians of the rounds'.  Memory is INFO "
         "used_memory after the preload minus before, per pending task.  "
         "Enqueue is the strategy's own enqueue of a due task with N "
         "pending.\n\n", dq_perf_meta(p, "backlog_rounds")[0]
         ? dq_perf_meta(p, "backlog_rounds") : "1",
         dq_perf_meta(p, "backlog_claims"));
    const char *head[] = {"strategy", "pending", "claim p50 us",
                          "claim p99 us", "claim max us", "bytes/task",
                          "enqueue us (mean)", "preload s"};
    table_row(o, head, 8, true);
    for (size_t s = 0; s < ns; s++)
        for (size_t x = 0; x < nx; x++) {
            const dq_perf_bl *b = dq_perf_backlog(p, names[s], xs[x]);
            if (b == NULL)
                continue;
            char c[8][64];
            const char *cells[8];
            snprintf(c[0], 64, "%s", b->strategy);
            snprintf(c[1], 64, "%" PRId64, b->backlog);
            snprintf(c[2], 64, "%.0f", b->claim_us_p50);
            snprintf(c[3], 64, "%.0f", b->claim_us_p99);
            snprintf(c[4], 64, "%.0f", b->claim_us_max);
            fmt_double(c[5], 64, b->bytes_per_task, 0);
            snprintf(c[6], 64, "%.1f", b->enqueue_us_mean);
            snprintf(c[7], 64, "%.2f", b->preload_s);
            for (size_t k = 0; k < 8; k++)
                cells[k] = c[k];
            table_row(o, cells, 8, false);
        }
    table_end(o);
    both(o, "**What happened.** ");
    for (size_t s = 0; s < ns; s++) {
        const dq_perf_bl *lo, *hi;
        dq_perf_backlog_range(p, names[s], &lo, &hi);
        if (lo == NULL || hi == lo || lo->claim_us_p50 <= 0)
            continue;
        double r50 = hi->claim_us_p50 / lo->claim_us_p50;
        double r99 = lo->claim_us_p99 > 0
                         ? hi->claim_us_p99 / lo->claim_us_p99 : -1;
        both(o, "%s: from %" PRId64 " to %" PRId64 " pending, claim p50 "
             "x%.2f, p99 x%.2f (log N grows x%.2f)%s. ", names[s],
             lo->backlog, hi->backlog, r50, r99,
             log_ratio(hi->backlog, lo->backlog),
             r50 <= log_ratio(hi->backlog, lo->backlog) * 1.25
                 ? "" : ": faster than log N");
    }
    both(o, "A ratio of p50s at or below the ratio of the logarithms is "
         "what O(log N) allows; a round trip costs far more than a skip "
         "list descent, so for the Redis strategies the claim time is "
         "mostly the network and the ratio stays near 1.\n\n");
    return 0;
}

/* Strategies whose enqueue of an already-due task takes another path
 * than a task due later (strategies/<name>.c says so in its header), so
 * the bench's due-at-once tasks do not exercise their timer. */
static const struct {
    const char *strategy;
    const char *path;
} due_now_paths[] = {
    {"expiry", "an already-due task goes straight to its ready list "
               "(RPUSH + PUBLISH), not through a TTL and the keyspace "
               "`expired` event"},
};
#define N_DUE_NOW (sizeof due_now_paths / sizeof due_now_paths[0])

/* The due-now path of strategy, or NULL when it has none apart. */
static const char *due_now_path(const char *strategy)
{
    for (size_t i = 0; i < N_DUE_NOW; i++)
        if (strcmp(due_now_paths[i].strategy, strategy) == 0)
            return due_now_paths[i].path;
    return NULL;
}

/* The largest median p99 lateness (ms) of strategy in the lateness
 * experiment of r (tasks due ahead), or -1 when not run. */
static double lateness_exp_p99(const dq_results *r, const char *strategy)
{
    const dq_rexp *e = r != NULL ? dq_results_find(r, "lateness") : NULL;
    double v = -1;
    for (size_t i = 0; e != NULL && i < e->ngroups; i++)
        if (strcmp(e->groups[i].strategy, strategy) == 0 &&
            e->groups[i].p99_median > v)
            v = e->groups[i].p99_median;
    return v;
}

/* wide_cell_fn of the lateness-load figure: p99 lateness (ms) of
 * strategy s at x offered tasks/s, the last such row; log axis: drawn at
 * 0.01 ms at least. */
static void lateness_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const perf_ctx *c = ctx;
    const dq_perf_lat *l = NULL;
    for (size_t i = 0; i < c->p->nlat; i++)
        if (strcmp(c->p->lat[i].strategy, c->names[s]) == 0 &&
            c->p->lat[i].offered_per_s == x)
            l = &c->p->lat[i];
    if (l != NULL)
        fprintf(f, "%.3f", l->p99_ms > 0.01 ? l->p99_ms : 0.01);
}

static int write_lateness(out *o, const dq_perf *p, const dq_results *r,
                          char *err, size_t errlen)
{
    char names[32][NAMELEN];
    size_t ns = perf_section_start(o, "Lateness under load", p, "lat",
                                   names);
    if (ns == 0)
        return 0;
    int64_t xs[16];
    size_t nx = 0;
    for (size_t i = 0; i < p->nlat; i++)
        nx = add_distinct_i64(xs, nx, 16, p->lat[i].offered_per_s);
    sort_i64(xs, nx);
    if (perf_figure(o, "lateness-load", "perf_lateness", "offered", p, names,
                    ns, NULL, 0, xs, nx, lateness_cell, err, errlen) != 0)
        return -1;
    both(o, "Producers (%s) enqueue at their share of the offered rate "
         "(open loop: each task at its scheduled time, due at once) for %s "
         "ms; consumers (%s) claim and ack; every event is logged and "
         "checked.  A strategy is *saturated* when the producers could not "
         "reach 90%% of the offered rate, p99 lateness passed 1 s, or a "
         "task was not delivered; higher rates are then skipped.\n\n",
         dq_perf_meta(p, "lateness_producers"),
         dq_perf_meta(p, "lateness_ms"),
         dq_perf_meta(p, "lateness_consumers"));
    both(o, "Every task here is due when it is enqueued, so this measures "
         "how fast a due task is delivered under load, not how accurately "
         "a strategy's timer fires (the lateness experiment does that, "
         "with tasks due ahead).");
    for (size_t s = 0; s < ns; s++) {
        const char *path = due_now_path(names[s]);
        if (path == NULL)
            continue;
        double lp = lateness_exp_p99(r, names[s]);
        char ref[160] = "";
        if (lp >= 0)
            snprintf(ref, sizeof ref, "; with tasks due ahead its p99 "
                     "lateness was %.1f ms (experiment lateness)", lp);
        both(o, "  For %s the difference matters: %s, so its figures "
             "below look fast and say nothing about its keyspace-event "
             "timer%s.", names[s], path, ref);
    }
    both(o, "\n\n");
    const char *head[] = {"strategy", "offered /s", "sent /s",
                          "delivered /s", "p50 ms", "p99 ms", "max ms",
                          "lost", "duplicates", "saturated"};
    table_row(o, head, 10, true);
    for (size_t i = 0; i < p->nlat; i++) {
        const dq_perf_lat *l = &p->lat[i];
        char c[10][64];
        const char *cells[10];
        snprintf(c[0], 64, "%s", l->strategy);
        snprintf(c[1], 64, "%" PRId64, l->offered_per_s);
        snprintf(c[2], 64, "%.0f", l->sent_per_s);
        snprintf(c[3], 64, "%.0f", l->delivered_per_s);
        snprintf(c[4], 64, "%.2f", l->p50_ms);
        snprintf(c[5], 64, "%.2f", l->p99_ms);
        snprintf(c[6], 64, "%.2f", l->max_ms);
        snprintf(c[7], 64, "%" PRIu64, l->lost);
        snprintf(c[8], 64, "%" PRIu64, l->duplicates);
        snprintf(c[9], 64, "%s", l->saturated ? "yes" : "no");
        for (size_t k = 0; k < 10; k++)
            cells[k] = c[k];
        table_row(o, cells, 10, false);
    }
    table_end(o);
    both(o, "**What happened.** ");
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
        both(o, "%s%s ", names[s], "");
        if (ok > 0)
            both(o, "kept up with %" PRId64 "/s", ok);
        if (sat > 0)
            both(o, "%ssaturated at %" PRId64 "/s", ok > 0 ? " and " : "",
                 sat);
        else
            both(o, "%sdid not saturate at the rates offered",
                 ok > 0 ? " and " : "");
        both(o, "%s", s + 1 < ns ? "; " : ".\n\n");
    }
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
        char l[NAMELEN + 128];
        int a = consumers;
        if (strcmp(t->kind, "e2e") != 0 ||
            (strategy == NULL ? strcmp(t->strategy, "heap") == 0
                              : strcmp(t->strategy, strategy) != 0) ||
            (keep != NULL && !keep(t->options)))
            continue;
        tp_label(t, l, sizeof l);
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

static const char *met(double v, bool ok)
{
    return v < 0 ? "not measured" : ok ? "**met**" : "**not met**";
}

/* The targets: each with the measured median and met / not met. */
static void write_targets(out *o, const dq_perf *p, const dq_results *r)
{
    both(o, "### Targets\n\n");
    both(o, "The targets of the performance issue, each against the median "
         "measured in this run (medians over the repeats; the best variant "
         "where several were run).  Short runs on a shared machine: a "
         "figure near a target can fall on either side in another run.\n\n");
    const char *head[] = {"target", "measured (median)", "verdict"};
    table_row(o, head, 3, true);
    char m[256], t[256], lb[NAMELEN + 128];
    const char *cells[3] = {t, m, NULL};
    int at = 0;
    /* 1. best Redis strategy >= 150k/s e2e and >= 30% of ZADD. */
    double best = best_variant(p, NULL, NULL, 0, lb, sizeof lb, &at);
    snprintf(t, sizeof t, "best Redis strategy >= 150,000 tasks/s end to "
             "end (enqueue to ack, every event logged and checked)");
    if (best >= 0)
        snprintf(m, sizeof m, "%.0f tasks/s (%s, %d consumers)", best, lb,
                 at);
    else
        snprintf(m, sizeof m, "n/a");
    cells[2] = met(best, best >= 150000);
    table_row(o, cells, 3, false);
    snprintf(t, sizeof t, "... and >= 30%% of the pipelined ZADD rate of "
             "the same run");
    double frac = best >= 0 && p->zadd_per_s > 0 ? best / p->zadd_per_s : -1;
    if (frac >= 0)
        snprintf(m, sizeof m, "%.1f%% (%.0f of %.0f/s)", 100 * frac, best,
                 p->zadd_per_s);
    else
        snprintf(m, sizeof m, "n/a");
    cells[2] = met(frac, frac >= 0.3);
    table_row(o, cells, 3, false);
    /* 2. lua, one claim per round trip, 4 consumers >= 30k. */
    double lua4 = best_variant(p, "lua", claim_batch_one, 4, lb, sizeof lb,
                               NULL);
    snprintf(t, sizeof t, "lua, batch=1 (one claim round trip per task), 4 "
             "consumers >= 30,000 tasks/s");
    if (lua4 >= 0)
        snprintf(m, sizeof m, "%.0f tasks/s (%s)", lua4, lb);
    else
        snprintf(m, sizeof m, "n/a");
    cells[2] = met(lua4, lua4 >= 30000);
    table_row(o, cells, 3, false);
    /* 3. blocking strategies: lateness p99 < 2 ms at 200/s; the polling
     * ones against their poll interval (100 ms by default). */
    for (size_t i = 0; i < p->nlat; i++) {
        const dq_perf_lat *l = &p->lat[i];
        if (l->offered_per_s != 200)
            continue;
        /* By the declared flags, not by name: a strategy that blocks
         * until a task is due (list, list-reliable, heap, expiry) is held
         * to the 2 ms target; a polling one to its default poll_ms. */
        const dq_strategy *st = dq_strategy_find(l->strategy);
        bool blocking = st != NULL && (st->flags & DQ_G_BLOCKS);
        int64_t poll = 100;
        for (size_t k = 0; st != NULL && st->options != NULL &&
                           st->options[k].name != NULL; k++)
            if (strcmp(st->options[k].name, "poll_ms") == 0)
                poll = strtoll(st->options[k].def, NULL, 10);
        static char verdict[160];
        snprintf(m, sizeof m, "p99 %.2f ms", l->p99_ms);
        if (due_now_path(l->strategy) != NULL) {
            /* The bench's tasks are due at once and skip this strategy's
             * timer: the target is not judged from them. */
            double lp = lateness_exp_p99(r, l->strategy);
            snprintf(t, sizeof t, "%s (%s): lateness p99 < 2 ms at 200 "
                     "tasks/s", l->strategy, blocking ? "blocks" : "polls");
            if (lp >= 0)
                snprintf(m, sizeof m, "p99 %.2f ms for tasks due at once "
                         "(its ready list, not its timer); experiment "
                         "lateness, tasks due ahead: p99 %.1f ms",
                         l->p99_ms, lp);
            else
                snprintf(m, sizeof m, "p99 %.2f ms for tasks due at once "
                         "(its ready list, not its timer)", l->p99_ms);
            snprintf(verdict, sizeof verdict, "not judged by the bench "
                     "(its due-now path skips the timer; see the lateness "
                     "experiment)");
            cells[2] = verdict;
        } else if (blocking) {
            snprintf(t, sizeof t, "%s (blocks): lateness p99 < 2 ms at 200 "
                     "tasks/s", l->strategy);
            cells[2] = met(l->p99_ms, l->p99_ms < 2);
        } else {
            snprintf(t, sizeof t, "%s (polls): lateness p99 at 200 "
                     "tasks/s, against its poll interval", l->strategy);
            snprintf(verdict, sizeof verdict, "%s the %" PRId64 " ms default "
                     "poll interval",
                     l->p99_ms <= (double)poll ? "within" : "beyond", poll);
            cells[2] = verdict;
        }
        table_row(o, cells, 3, false);
    }
    /* 4. heap >= 1M/s through the harness. */
    double heap = best_variant(p, "heap", NULL, 0, lb, sizeof lb, &at);
    snprintf(t, sizeof t, "heap >= 1,000,000 tasks/s through the harness");
    if (heap >= 0)
        snprintf(m, sizeof m, "%.0f tasks/s (%d consumers)", heap, at);
    else
        snprintf(m, sizeof m, "n/a");
    cells[2] = met(heap, heap >= 1e6);
    table_row(o, cells, 3, false);
    /* 5. 1M backlog, claim p99 <= 3x of 1k, every ZSet strategy. */
    char names[32][NAMELEN];
    size_t ns = names_of(p, NULL, names, 32);
    int64_t maxn = 0;
    double worst = -1;
    const char *ws = "";
    for (size_t s = 0; s < ns; s++) {
        if (strcmp(names[s], "heap") == 0)
            continue;
        const dq_perf_bl *lo, *hi;
        dq_perf_backlog_range(p, names[s], &lo, &hi);
        if (lo == NULL || hi == lo || lo->claim_us_p99 <= 0)
            continue;
        if (hi->backlog > maxn)
            maxn = hi->backlog;
        double r = hi->claim_us_p99 / lo->claim_us_p99;
        if (r > worst)
            worst = r, ws = names[s];
    }
    snprintf(t, sizeof t, "1,000,000 pending: claim p99 <= 3x of 1,000 "
             "pending, every ZSet strategy");
    /* Judged only at 1,000,000 pending: a smaller largest backlog is not
     * the target's condition, so its ratio is given as information. */
    static char nm[160];
    if (worst >= 0 && maxn < 1000000)
        snprintf(m, sizeof m, "not at 1,000,000; at %" PRId64 " pending, "
                 "worst x%.2f (%s), information only", maxn, worst, ws);
    else if (worst >= 0)
        snprintf(m, sizeof m, "worst x%.2f (%s), largest backlog %" PRId64,
                 worst, ws, maxn);
    else
        snprintf(m, sizeof m, "n/a");
    snprintf(nm, sizeof nm, "not measured (largest backlog %" PRId64 "; "
             "run `make bench FULL=1`)", maxn);
    cells[2] = worst < 0 ? "not measured"
               : maxn < 1000000 ? nm
               : met(worst, worst <= 3);
    table_row(o, cells, 3, false);
    table_end(o);
}

int section_perf(out *o, const dq_results *r, char *err, size_t errlen)
{
    const char *root = r->root;
    dq_perf p;
    int rc = -1;
    if (dq_perf_load(root, &p, err, errlen) != 0)
        goto done;
    both(o, "## Performance and scale (`bench`)\n\n");
    if (!p.present) {
        both(o, "Not measured yet: run `make bench` (about 5 minutes; `make "
             "bench FULL=1` for backlogs up to 1,000,000), which writes "
             "`%s/bench/`, then `dqlab report %s`.\n\n", root, root);
        rc = 0;
        goto done;
    }
    /* A private server's port is a throwaway: name it without one.  A
     * --redis target is already redacted by bench (host:port, no
     * password); redacted again here for older runs. */
    char redis_where[1024];
    const char *rm = dq_perf_meta(&p, "redis");
    if (strncmp(rm, "private", 7) == 0)
        snprintf(redis_where, sizeof redis_where, "a private redis-server "
                 "started by the bench");
    else
        dq_redact_redis_urls(rm, redis_where, sizeof redis_where);
    both(o, "How fast each strategy goes, how close to what the same Redis "
         "does for the bare commands, and how the cost grows with the "
         "backlog.  Measured by `%s` (%s form) on %s cores, host %s, Redis "
         "%s (%s), %s.  Speed is never asserted in a test; compare within "
         "this run, and read medians and ratios, not single figures.%s\n\n",
         dq_perf_meta(&p, "command"), dq_perf_meta(&p, "level"),
         dq_perf_meta(&p, "cores"), dq_perf_meta(&p, "hostname"),
         dq_perf_meta(&p, "redis_version"), redis_where,
         dq_perf_meta(&p, "date"),
         strcmp(dq_perf_meta(&p, "unit_errors"), "0") == 0 ? ""
             : "  *Some units failed and are missing; see meta.txt.*");
    write_ceiling(o, &p);
    if (write_throughput(o, &p, err, errlen) != 0 ||
        write_backlog(o, &p, err, errlen) != 0 ||
        write_lateness(o, &p, r, err, errlen) != 0)
        goto done;
    write_targets(o, &p, r);
    {
        char cwd[PATH_MAX];
        const char *d = p.dir;
        if (getcwd(cwd, sizeof cwd) != NULL) {
            size_t n = strlen(cwd);
            if (n > 1 && strncmp(d, cwd, n) == 0 && d[n] == '/')
                d += n + 1;
        }
        both(o, "Raw results: `%s` (ceiling.csv, throughput.csv, "
             "backlog.csv, lateness.csv, meta.txt).\n\n", d);
    }
    rc = 0;
done:
    dq_perf_free(&p);
    return rc;
}
