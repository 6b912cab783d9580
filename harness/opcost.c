/* opcost.c -- `dqlab opcost`: ns per enqueue+claim pair of an in-process
 * strategy with n tasks pending (opcost.h says what is measured).
 *
 * Why not the bench's backlog part: that one times each claim on its own
 * (a microsecond clock, 2000 claims) to show Redis round trips; an
 * in-process operation costs less than the clock resolves, so this one
 * times K pairs in one stretch and divides, and fills to 10^7 tasks, far
 * beyond what the bench preloads.  It is kept apart (a measurement
 * function and a CLI) so that `dqlab bench` can call dq_opcost_measure.
 *
 * The harness's own work inside the timed loop is kept to what any
 * producer does: the task ids are written as hex counters (no snprintf),
 * the due time is read once per repeat, the payload is a constant 16
 * bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../strategies/dq.h"
#include "experiment.h"
#include "opcost.h"
#include "parse.h"
#include "runmeta.h"
#include "signals.h"

/* Messages quote paths cut to fit err, as bench.c does. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#define PAYLOAD_BYTES 16
static const char payload16[PAYLOAD_BYTES + 1] = "dqlab-opcost-pay";

#define FILL_CHUNK 1024
#define WARMUP_MAX 10000
#define FAR_MIN_MS INT64_C(3600000)   /* 1 h */
#define FAR_SPAN_MS INT64_C(86400000) /* + up to 24 h */

const char dq_opcost_csv_header[] =
    "strategy,n,ops,ns_per_op_median,ns_per_op_min,ns_per_op_max\n";

/* ---- One measurement ----------------------------------------------------- */

/* Writes prefix then v in hex into buf (>= 18 bytes), NUL-terminated. */
static void hex_id(char *buf, char prefix, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    int n = 0;

    do {
        tmp[n++] = digits[v & 15];
        v >>= 4;
    } while (v != 0);
    *buf++ = prefix;
    while (n > 0)
        *buf++ = tmp[--n];
    *buf = '\0';
}

/* xorshift64*: the far-ahead due times, reproducible from the seed. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

/* Enqueues p->n tasks due 1 h to 25 h ahead.  0, 1 (stopped) or -1. */
static int fill(dq_queue *q, const dq_opcost_params *p, bool (*stop)(void),
                char *err, size_t errlen)
{
    static char ids[FILL_CHUNK][20];
    dq_enqueue_item items[FILL_CHUNK];
    uint64_t rs = (uint64_t)p->seed * 2 + 1;
    int64_t now = dq_now_ms(q);

    for (int64_t i = 0; i < p->n;) {
        size_t k = 0;

        for (; k < FILL_CHUNK && i < p->n; k++, i++) {
            hex_id(ids[k], 'f', (uint64_t)i);
            items[k] = (dq_enqueue_item){
                ids[k], payload16, PAYLOAD_BYTES,
                now + FAR_MIN_MS +
                    (int64_t)(next_rand(&rs) % (uint64_t)FAR_SPAN_MS)};
        }
        if (dq_enqueue_many(q, items, k) != DQ_OK) {
            snprintf(err, errlen, "%s: fill: %s", p->strategy->name,
                     dq_errstr(q));
            return -1;
        }
        if (stop != NULL && stop())
            return 1;
    }
    return 0;
}

/* K pairs (enqueue due now, claim(0)); ids continue from *next.  Returns
 * the elapsed ns, or -1 with err when a claim found nothing or failed. */
static int64_t pairs(dq_queue *q, const dq_opcost_params *p, int64_t k,
                     uint64_t *next, char *err, size_t errlen)
{
    char id[20];
    dq_task t;
    int64_t due = dq_now_ms(q), t0 = dq_mono_us(), rc;

    memset(&t, 0, sizeof t);
    for (int64_t i = 0; i < k; i++) {
        hex_id(id, 'm', (*next)++);
        rc = dq_enqueue(q, id, payload16, PAYLOAD_BYTES, due);
        if (rc == DQ_OK)
            rc = dq_claim(q, 0, &t);
        if (rc != DQ_OK) {
            if (rc == DQ_EMPTY)
                snprintf(err, errlen, "%s: claim(0) found nothing just "
                         "after enqueueing a task due now",
                         p->strategy->name);
            else
                snprintf(err, errlen, "%s: %s", p->strategy->name,
                         dq_errstr(q));
            return -1;
        }
        dq_task_clear(&t);
    }
    return (dq_mono_us() - t0) * 1000;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;

    return (a > b) - (a < b);
}

static int check_params(const dq_opcost_params *p, char *err, size_t errlen)
{
    if (p->strategy == NULL || p->n < 0 || p->ops < 1 || p->repeats < 1) {
        snprintf(err, errlen, "opcost: bad parameters (strategy, n >= 0, "
                 "ops >= 1, repeats >= 1)");
        return -1;
    }
    if (p->strategy->flags & DQ_G_NEEDS_REDIS) {
        snprintf(err, errlen, "opcost: '%s' needs Redis; opcost measures "
                 "in-process strategies", p->strategy->name);
        return -1;
    }
    return 0;
}

/* Fills, warms up and times the repeats on an open handle. */
static int measure_on(dq_queue *q, const dq_opcost_params *p,
                      dq_opcost_result *r, bool (*stop)(void), char *err,
                      size_t errlen)
{
    double *ns = calloc((size_t)p->repeats, sizeof *ns);
    uint64_t next = 0;
    int64_t t0, pend;
    int ret = -1;

    if (ns == NULL) {
        snprintf(err, errlen, "opcost: out of memory");
        return -1;
    }
    t0 = dq_mono_us();
    if ((ret = fill(q, p, stop, err, errlen)) != 0)
        goto done;
    r->fill_s = (double)(dq_mono_us() - t0) / 1e6;
    ret = -1;
    pend = q->s->pending ? dq_pending(q) : p->n;
    if (pend != p->n) {
        snprintf(err, errlen, "%s: %" PRId64 " pending after filling %"
                 PRId64, p->strategy->name, pend, p->n);
        goto done;
    }
    if (pairs(q, p, p->ops < WARMUP_MAX ? p->ops : WARMUP_MAX, &next, err,
              errlen) < 0)
        goto done;
    for (int i = 0; i < p->repeats; i++) {
        int64_t el = pairs(q, p, p->ops, &next, err, errlen);

        if (el < 0)
            goto done;
        ns[i] = (double)el / (double)p->ops;
        if (stop != NULL && stop()) {
            ret = 1;
            goto done;
        }
    }
    qsort(ns, (size_t)p->repeats, sizeof *ns, cmp_double);
    r->ns_min = ns[0];
    r->ns_max = ns[p->repeats - 1];
    r->ns_median = p->repeats % 2 ? ns[p->repeats / 2]
                                  : (ns[p->repeats / 2 - 1] +
                                     ns[p->repeats / 2]) / 2;
    ret = 0;
done:
    free(ns);
    return ret;
}

int dq_opcost_measure(const dq_opcost_params *p, dq_opcost_result *r,
                      bool (*stop)(void), char *err, size_t errlen)
{
    char queue[65];
    dq_config cfg;
    dq_queue *q = NULL;
    dq_local *local;
    int ret;

    if (check_params(p, err, errlen) != 0)
        return -1;
    memset(r, 0, sizeof *r);
    local = dq_local_new();
    if (local == NULL) {
        snprintf(err, errlen, "opcost: out of memory");
        return -1;
    }
    snprintf(queue, sizeof queue, "opcost-%ld", (long)getpid());
    memset(&cfg, 0, sizeof cfg);
    cfg.queue = queue;
    cfg.opts = p->opts;
    cfg.nopts = p->nopts;
    cfg.local = local;
    cfg.consumer = "opcost";
    if (dq_open(p->strategy, &cfg, &q, err, errlen) != DQ_OK) {
        dq_local_free(local);
        return -1;
    }
    ret = measure_on(q, p, r, stop, err, errlen);
    if (q->s->purge != NULL)
        dq_purge(q);
    dq_close(q);
    dq_local_free(local);
    return ret;
}

void dq_opcost_csv_row(FILE *f, const dq_opcost_params *p,
                       const dq_opcost_result *r)
{
    fprintf(f, "%s,%" PRId64 ",%" PRId64 ",%.2f,%.2f,%.2f\n",
            p->strategy->name, p->n, p->ops, r->ns_median, r->ns_min,
            r->ns_max);
}

/* ---- Arguments ----------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: dqlab opcost [--strategies LIST] [--n LIST] [--ops K] "
        "[--repeats R]\n"
        "                    [--out DIR]\n\n"
        "ns per operation (one enqueue of a task due now + one claim) of "
        "in-process\nstrategies with n tasks pending far ahead; CSV under "
        "DIR/YYYYmmdd-HHMMSS/\n(DIR/latest: the newest complete run).\n\n"
        "  --strategies LIST  comma list of in-process strategies (default "
        "heap,wheel)\n"
        "  --n LIST           comma list of pending counts, 0..100000000 "
        "(default\n"
        "                     1000,10000,100000,1000000; 10000000 needs "
        "about 1 GB)\n"
        "  --ops K            pairs per repeat (default 200000)\n"
        "  --repeats R        timed repeats; the CSV gives median, min, max "
        "(default 5)\n"
        "  --out DIR          results directory (default results/opcost)\n");
}

/* "heap, wheel": the in-process strategies, for messages. */
static void in_process_names(char *buf, size_t len)
{
    size_t off = 0;

    buf[0] = '\0';
    for (size_t i = 0; dq_strategies[i] != NULL && off < len; i++)
        if (!(dq_strategies[i]->flags & DQ_G_NEEDS_REDIS))
            off += (size_t)snprintf(buf + off, len - off, "%s%s",
                                    off ? ", " : "", dq_strategies[i]->name);
}

static int parse_strategies(const char *s, dq_opcost_opts *o, char *err,
                            size_t errlen)
{
    char buf[512], names[256];

    snprintf(buf, sizeof buf, "%s", s);
    in_process_names(names, sizeof names);
    o->nstrategies = 0;
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w;
         w = strtok_r(NULL, ",", &save)) {
        const dq_strategy *st = dq_strategy_find(w);

        if (st == NULL || (st->flags & DQ_G_NEEDS_REDIS)) {
            snprintf(err, errlen, "--strategies: '%s' %s; opcost measures "
                     "in-process strategies (%s)", w,
                     st == NULL ? "is not a strategy" : "needs Redis", names);
            return -1;
        }
        if (o->nstrategies == DQ_OPCOST_MAX_STRATEGIES) {
            snprintf(err, errlen, "--strategies: more than %d names",
                     DQ_OPCOST_MAX_STRATEGIES);
            return -1;
        }
        o->strategies[o->nstrategies++] = st;
    }
    if (o->nstrategies == 0) {
        snprintf(err, errlen, "--strategies: empty list");
        return -1;
    }
    return 0;
}

static int parse_n(const char *s, dq_opcost_opts *o, char *err, size_t errlen)
{
    char buf[512];

    snprintf(buf, sizeof buf, "%s", s);
    o->nn = 0;
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w;
         w = strtok_r(NULL, ",", &save)) {
        if (o->nn == DQ_OPCOST_MAX_N) {
            snprintf(err, errlen, "--n: more than %d values",
                     DQ_OPCOST_MAX_N);
            return -1;
        }
        if (dq_parse_i64("--n", w, 0, 100000000, &o->n[o->nn], err,
                         errlen) != 0)
            return -1;
        o->nn++;
    }
    if (o->nn == 0) {
        snprintf(err, errlen, "--n: empty list");
        return -1;
    }
    return 0;
}

static void set_defaults(dq_opcost_opts *o)
{
    static const int64_t ns[] = {1000, 10000, 100000, 1000000};

    memset(o, 0, sizeof *o);
    o->strategies[o->nstrategies++] = dq_strategy_find("heap");
    o->strategies[o->nstrategies++] = dq_strategy_find("wheel");
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        o->n[o->nn++] = ns[i];
    o->ops = 200000;
    o->repeats = 5;
    snprintf(o->out, sizeof o->out, "results/opcost");
}

/* One option with its value argv[*i + 1]. */
static int parse_one(const char *a, const char *v, dq_opcost_opts *o,
                     char *err, size_t errlen)
{
    int64_t x;

    if (strcmp(a, "--strategies") == 0)
        return parse_strategies(v, o, err, errlen);
    if (strcmp(a, "--n") == 0)
        return parse_n(v, o, err, errlen);
    if (strcmp(a, "--ops") == 0)
        return dq_parse_i64("--ops", v, 1, 1000000000, &o->ops, err, errlen);
    if (strcmp(a, "--repeats") == 0) {
        if (dq_parse_i64("--repeats", v, 1, 1000, &x, err, errlen) != 0)
            return -1;
        o->repeats = (int)x;
        return 0;
    }
    /* --out */
    if (strlen(v) >= 900) {
        snprintf(err, errlen, "--out: path too long");
        return -1;
    }
    snprintf(o->out, sizeof o->out, "%s", v);
    return 0;
}

int dq_opcost_parse_args(int argc, char **argv, dq_opcost_opts *o,
                         char *err, size_t errlen)
{
    set_defaults(o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool takes = strcmp(a, "--strategies") == 0 ||
                     strcmp(a, "--n") == 0 || strcmp(a, "--ops") == 0 ||
                     strcmp(a, "--repeats") == 0 || strcmp(a, "--out") == 0;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        }
        if (!takes) {
            snprintf(err, errlen, "%s %s (see dqlab opcost --help)",
                     a[0] == '-' ? "unknown option" : "unexpected argument",
                     a);
            return -1;
        }
        if (i + 1 >= argc || argv[i + 1][0] == '\0') {
            snprintf(err, errlen, "%s needs a value", a);
            return -1;
        }
        if (parse_one(a, argv[i + 1], o, err, errlen) != 0)
            return -1;
        i++;
    }
    dq_experiment_command_line(argc, argv, o->command, sizeof o->command);
    return 0;
}

/* ---- The command --------------------------------------------------------- */

static bool stop_requested(void)
{
    return dq_signals_caught();
}

static void join_list(char *buf, size_t len, const dq_opcost_opts *o,
                      bool strategies)
{
    size_t off = 0, n = strategies ? o->nstrategies : o->nn;

    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++) {
        if (strategies)
            off += (size_t)snprintf(buf + off, len - off, "%s%s",
                                    i ? ", " : "", o->strategies[i]->name);
        else
            off += (size_t)snprintf(buf + off, len - off, "%s%" PRId64,
                                    i ? ", " : "", o->n[i]);
    }
}

static int write_meta(const char *dir, const dq_opcost_opts *o,
                      const char *started, bool complete, char *err,
                      size_t errlen)
{
    char path[PATH_MAX + 16], buf[1024];
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    int ret;

    if (f == NULL) {
        snprintf(err, errlen, "meta.txt: %s", strerror(errno));
        return -1;
    }
    fprintf(f, "# dqlab opcost metadata; key = value, one per line\n");
    dq_runmeta_kv(f, "experiment", "opcost");
    dq_runmeta_kv(f, "title", "Cost per operation against pending tasks");
    dq_runmeta_kv(f, "command", o->command);
    join_list(buf, sizeof buf, o, true);
    dq_runmeta_kv(f, "strategies", buf);
    join_list(buf, sizeof buf, o, false);
    dq_runmeta_kv(f, "n", buf);
    fprintf(f, "ops = %" PRId64 "\nrepeats = %d\nwarmup_ops = %d\n"
            "payload_bytes = %d\nfar_due_ms = %" PRId64 "..%" PRId64 "\n",
            o->ops, o->repeats, WARMUP_MAX, PAYLOAD_BYTES, FAR_MIN_MS,
            FAR_MIN_MS + FAR_SPAN_MS);
    dq_runmeta_kv(f, "op", "one dq_enqueue of a task due now + one "
                  "dq_claim(timeout 0) + dq_task_clear, n tasks pending");
    dq_runmeta_kv(f, "date", started);
    dq_runmeta_now_iso(buf, sizeof buf);
    dq_runmeta_kv(f, "finished", complete ? buf : "");
    dq_runmeta_env(f); /* dqlab_commit, hostname, cpu_model, cores */
    dq_runmeta_kv(f, "complete", complete ? "yes" : "no");
    if (fclose(f) != 0) {
        free(data);
        snprintf(err, errlen, "meta.txt: %s", strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    ret = dq_runmeta_write_atomic(path, data, len, err, errlen);
    free(data);
    return ret;
}

/* Every strategy at every n, one CSV row each.  0, 1 (stopped) or -1. */
static int run_all(const dq_opcost_opts *o, FILE *csv, char *err,
                   size_t errlen)
{
    for (size_t ni = 0; ni < o->nn; ni++) {
        for (size_t si = 0; si < o->nstrategies; si++) {
            dq_opcost_params p = {o->strategies[si], NULL, 0, o->n[ni],
                                  o->ops, o->repeats, 1};
            dq_opcost_result r;
            int rc;

            fprintf(stderr, "dqlab opcost: %s n=%" PRId64 ": filling, then "
                    "%d x %" PRId64 " pairs\n", p.strategy->name, p.n,
                    p.repeats, p.ops);
            rc = dq_opcost_measure(&p, &r, stop_requested, err, errlen);
            if (rc != 0)
                return rc;
            dq_opcost_csv_row(csv, &p, &r);
            fflush(csv);
            fprintf(stderr, "dqlab opcost: %s n=%" PRId64 ": filled in "
                    "%.2f s; %.1f ns/op (median of %d, min %.1f, max "
                    "%.1f)\n", p.strategy->name, p.n, r.fill_s, r.ns_median,
                    p.repeats, r.ns_min, r.ns_max);
        }
    }
    return 0;
}

int dq_opcost_cmd(int argc, char **argv)
{
    dq_opcost_opts o;
    char err[512], stamp[40], dir[PATH_MAX], path[PATH_MAX + 16],
        started[64];
    FILE *csv = NULL;
    int rc;

    rc = dq_opcost_parse_args(argc, argv, &o, err, sizeof err);
    if (rc != 0) {
        if (rc < 0)
            fprintf(stderr, "dqlab opcost: %s\n", err);
        return rc < 0 ? 2 : 0;
    }
    dq_runmeta_now_iso(started, sizeof started);
    if (dq_runmeta_make_dir(o.out, stamp, sizeof stamp, dir, sizeof dir, err,
                            sizeof err) != 0)
        goto fail;
    snprintf(path, sizeof path, "%s/logs", dir);
    rmdir(path);  /* made by dq_runmeta_make_dir; opcost logs nothing */
    snprintf(path, sizeof path, "%s/opcost.csv", dir);
    if ((csv = fopen(path, "wx")) == NULL) {
        snprintf(err, sizeof err, "%s: %s", path, strerror(errno));
        goto fail;
    }
    fputs(dq_opcost_csv_header, csv);
    fflush(csv);
    if (write_meta(dir, &o, started, false, err, sizeof err) != 0)
        goto fail;
    fprintf(stderr, "dqlab opcost: run into %s\n", dir);
    rc = run_all(&o, csv, err, sizeof err);
    if (rc == 1 || stop_requested()) {
        write_meta(dir, &o, started, false, err, sizeof err);
        fprintf(stderr, "dqlab opcost: interrupted; partial results kept in "
                "%s, %s/latest not updated\n", dir, o.out);
        fclose(csv);
        return 130;
    }
    if (rc != 0 || write_meta(dir, &o, started, true, err, sizeof err) != 0 ||
        dq_runmeta_update_latest(o.out, stamp, err, sizeof err) != 0)
        goto fail;
    fclose(csv);
    fprintf(stderr, "dqlab opcost: done; %s/latest -> %s\n", o.out, stamp);
    return 0;
fail:
    fprintf(stderr, "dqlab opcost: %s\n", err);
    if (csv != NULL)
        fclose(csv);
    return 2;
}
