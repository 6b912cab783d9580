/* opcost.c -- `dqlab opcost`: ns per operation of an in-process strategy
 * with n tasks pending, in two mixes of operations (opcost.h says what is
 * measured).
 *
 * Why not the bench's backlog part: that one times each claim on its own
 * (a microsecond clock, 2000 claims) to show Redis round trips; an
 * in-process operation costs less than the clock resolves, so this one
 * times K operations in one stretch and divides, and fills to 10^7 tasks,
 * far beyond what the bench preloads.  It is kept apart (a measurement
 * function and a CLI) so that `dqlab bench` can call dq_opcost_measure.
 *
 * The harness's own work inside the timed loop is kept to what any
 * producer does: the task ids are written as hex counters (no snprintf),
 * the payload is a constant 16 bytes; the now mix reads the due time once
 * per repeat, the steady mix reads each operation's due time and claim
 * time from arrays computed before the block was timed (the schedule
 * below), and the real clock once per 64 operations.
 *
 * The steady mix's schedule is a count of pending tasks per due
 * millisecond rather than a priority queue of its own: the harness only
 * needs "the earliest due time", and the count makes that O(1) amortised
 * with memory set by the horizon, not by n.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../strategies/dq.h"
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
#define STEADY_START_MS INT64_C(3600000) /* virtual start after the fill's */
#define STEADY_BLOCK ((int64_t)1 << 20)  /* operations planned at once */
#define RESYNC_OPS 64                    /* real clock read every ... */

const char dq_opcost_csv_header[] =
    "strategy,mix,n,ops,ns_per_op_median,ns_per_op_min,ns_per_op_max,"
    "ns_per_op_mean,virtual_ms_per_op\n";

const char dq_opcost_slopes_header[] =
    "strategy,mix,points,n_min,n_max,ns_per_log2n,intercept_ns,r2\n";

const char *dq_opcost_mix_name(dq_opcost_mix m)
{
    return m == DQ_OPCOST_MIX_STEADY ? "steady" : "now";
}

/* ---- Common parts ---------------------------------------------------------- */

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

/* xorshift64*: the due times, reproducible from the seed. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

/* The CPU time of this thread in ns (clock_gettime(2),
 * CLOCK_THREAD_CPUTIME_ID): what the operations cost, without the time
 * the thread waited for a CPU on a shared machine. */
static int64_t cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- The steady mix's schedule -------------------------------------------- */

/* Pending tasks per due ms over the window [v_ms, v_ms + horizon], in a
 * ring of `ring` counters (horizon + 1 rounded up to 64) with one bit per
 * counter set when it is not zero; and one block of the plan. */
typedef struct steady {
    int64_t horizon_ms;
    int64_t ring;
    uint32_t *cnt;
    uint64_t *bits;          /* ring / 64 words */
    int64_t v_ms;            /* the virtual clock: the last claim time */
    int64_t v_idx;           /* where v_ms is in the ring */
    uint64_t rs;             /* xorshift state of the delays */
    int64_t *due, *claim;    /* per planned op: enqueue due, claim time */
    int64_t offset_us;       /* the handle's clock offset; only grows */
} steady;

static void steady_free(steady *s)
{
    free(s->cnt);
    free(s->bits);
    free(s->due);
    free(s->claim);
}

/* False when out of memory (then steady_free). */
static bool steady_init(steady *s, const dq_opcost_params *p)
{
    int64_t block = p->ops < STEADY_BLOCK ? p->ops : STEADY_BLOCK;

    memset(s, 0, sizeof *s);
    s->horizon_ms = p->horizon_ms;
    s->ring = (p->horizon_ms + 1 + 63) / 64 * 64;
    s->rs = ((uint64_t)p->seed * 2 + 1) * UINT64_C(0x9e3779b97f4a7c15) | 1;
    s->offset_us = INT64_MIN;
    s->cnt = calloc((size_t)s->ring, sizeof *s->cnt);
    s->bits = calloc((size_t)(s->ring / 64), sizeof *s->bits);
    s->due = malloc((size_t)block * sizeof *s->due);
    s->claim = malloc((size_t)block * sizeof *s->claim);
    return s->cnt && s->bits && s->due && s->claim;
}

/* Counts a task due at due_ms, v_ms <= due_ms <= v_ms + horizon. */
static void sched_add(steady *s, int64_t due_ms)
{
    int64_t i = s->v_idx + (due_ms - s->v_ms);

    if (i >= s->ring)
        i -= s->ring;
    s->cnt[i]++;
    s->bits[i >> 6] |= UINT64_C(1) << (i & 63);
}

/* Takes one task of the earliest due ms (one must be pending), moves the
 * virtual clock there and returns it.  Every counted task lies within
 * horizon + 1 <= ring ms from v_ms, so the first set bit from v_idx on,
 * around the ring, is the earliest. */
static int64_t sched_pop(steady *s)
{
    int64_t w = s->v_idx >> 6, nw = s->ring >> 6, i;
    uint64_t b = s->bits[w] & (~UINT64_C(0) << (s->v_idx & 63));

    while (b == 0) {
        if (++w == nw)
            w = 0;
        b = s->bits[w];
    }
    i = w * 64 + __builtin_ctzll(b);
    s->v_ms += i >= s->v_idx ? i - s->v_idx : i + s->ring - s->v_idx;
    s->v_idx = i;
    if (--s->cnt[i] == 0)
        s->bits[w] &= ~(UINT64_C(1) << (i & 63));
    return s->v_ms;
}

/* The fill's time until due, drawn from the steady state's triangular
 * density 2 (1 - x/H) / H: x = H (1 - sqrt(u)), u in (0, 1], in 1..H ms. */
static int64_t steady_ahead_ms(int64_t horizon_ms, uint64_t r)
{
    double u = (double)((r >> 11) + 1) * 0x1p-53;

    return 1 + (int64_t)((double)horizon_ms * (1.0 - sqrt(u)));
}

/* Plans k operations: op i enqueues a task due v + (1..H) and claims at
 * the earliest due time after that. */
static void steady_plan(steady *s, int64_t k)
{
    for (int64_t i = 0; i < k; i++) {
        int64_t due = s->v_ms + 1 +
                      (int64_t)(next_rand(&s->rs) % (uint64_t)s->horizon_ms);

        s->due[i] = due;
        sched_add(s, due);
        s->claim[i] = sched_pop(s);
    }
}

/* ---- Filling --------------------------------------------------------------- */

/* Enqueues p->n tasks: due 1 h to 25 h ahead (now mix), or s's start plus
 * the steady state's time until due, counted in s (steady mix).  0, 1
 * (stopped) or -1. */
static int fill(dq_queue *q, const dq_opcost_params *p, steady *s,
                bool (*stop)(void), char *err, size_t errlen)
{
    static char ids[FILL_CHUNK][20];
    dq_enqueue_item items[FILL_CHUNK];
    uint64_t rs = (uint64_t)p->seed * 2 + 1;
    int64_t now = dq_now_ms(q);

    for (int64_t i = 0; i < p->n;) {
        size_t k = 0;

        for (; k < FILL_CHUNK && i < p->n; k++, i++) {
            uint64_t r = next_rand(&rs);
            int64_t due;

            if (s != NULL) {
                due = s->v_ms + steady_ahead_ms(s->horizon_ms, r);
                sched_add(s, due);
            } else {
                due = now + FAR_MIN_MS + (int64_t)(r % (uint64_t)FAR_SPAN_MS);
            }
            hex_id(ids[k], 'f', (uint64_t)i);
            items[k] = (dq_enqueue_item){ids[k], payload16, PAYLOAD_BYTES,
                                         due};
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

/* ---- Timed operations ------------------------------------------------------ */

/* Mix now: K pairs (enqueue due now, claim(0)); ids continue from *next.
 * Returns the elapsed ns, or -1 with err when a claim found nothing or
 * failed. */
static int64_t pairs(dq_queue *q, const dq_opcost_params *p, int64_t k,
                     uint64_t *next, char *err, size_t errlen)
{
    char id[20];
    dq_task t;
    int64_t due = dq_now_ms(q), t0 = cpu_ns(), rc;

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
    return cpu_ns() - t0;
}

/* One claim of the steady mix went wrong: the message, -1. */
static int64_t steady_fail(dq_queue *q, const dq_opcost_params *p, int rc,
                           int64_t want_ms, int64_t got_ms, char *err,
                           size_t errlen)
{
    if (rc == DQ_EMPTY)
        snprintf(err, errlen, "%s: claim(0) found nothing at virtual time "
                 "%" PRId64 " ms, when a task was due", p->strategy->name,
                 want_ms);
    else if (rc == DQ_OK)
        snprintf(err, errlen, "%s: claim(0) at virtual time %" PRId64
                 " ms returned a task due at %" PRId64 " ms, not the "
                 "earliest", p->strategy->name, want_ms, got_ms);
    else
        snprintf(err, errlen, "%s: %s", p->strategy->name, dq_errstr(q));
    return -1;
}

/* Mix steady: the k planned operations of s (steady_plan); ids continue
 * from *next.  Returns the elapsed ns, or -1 with err. */
static int64_t steady_block(dq_queue *q, const dq_opcost_params *p,
                            steady *s, int64_t k, uint64_t *next, char *err,
                            size_t errlen)
{
    char id[20];
    dq_task t;
    int64_t wall_us = 0, t0 = cpu_ns(), rc;

    memset(&t, 0, sizeof t);
    for (int64_t i = 0; i < k; i++) {
        int64_t off;

        if (i % RESYNC_OPS == 0)
            wall_us = dq_wall_us();
        hex_id(id, 'm', (*next)++);
        rc = dq_enqueue(q, id, payload16, PAYLOAD_BYTES, s->due[i]);
        /* The handle now reads claim[i] plus what elapsed since wall_us,
         * or, after a re-read, the earlier reading: never less. */
        off = s->claim[i] * 1000 - wall_us;
        if (off > s->offset_us)
            s->offset_us = off;
        q->cfg.clock_offset_us = s->offset_us;
        if (rc == DQ_OK)
            rc = dq_claim(q, 0, &t);
        if (rc != DQ_OK || t.due_ms != s->claim[i]) {
            steady_fail(q, p, (int)rc, s->claim[i], t.due_ms, err, errlen);
            dq_task_clear(&t);
            return -1;
        }
        dq_task_clear(&t);
    }
    return cpu_ns() - t0;
}

/* k operations of p's mix, timed; s is NULL for the now mix.  Returns
 * the elapsed ns (summed over the blocks of the steady mix), -1 with err,
 * or -2 when stop() said so between blocks. */
static int64_t timed_ops(dq_queue *q, const dq_opcost_params *p, steady *s,
                         int64_t k, uint64_t *next, bool (*stop)(void),
                         char *err, size_t errlen)
{
    int64_t total = 0;

    if (s == NULL)
        return pairs(q, p, k, next, err, errlen);
    for (int64_t done = 0; done < k;) {
        int64_t b = k - done < STEADY_BLOCK ? k - done : STEADY_BLOCK, el;

        steady_plan(s, b);
        if ((el = steady_block(q, p, s, b, next, err, errlen)) < 0)
            return -1;
        total += el;
        done += b;
        if (done < k && stop != NULL && stop())
            return -2;
    }
    return total;
}

/* ---- One measurement ------------------------------------------------------- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;

    return (a > b) - (a < b);
}

static int check_params(const dq_opcost_params *p, char *err, size_t errlen)
{
    if (p->strategy == NULL || p->n < 0 || p->ops < 1 || p->repeats < 1 ||
        (p->mix != DQ_OPCOST_MIX_NOW && p->mix != DQ_OPCOST_MIX_STEADY) ||
        (p->mix == DQ_OPCOST_MIX_STEADY &&
         (p->horizon_ms < 1 || p->horizon_ms > DQ_OPCOST_HORIZON_MS_MAX))) {
        snprintf(err, errlen, "opcost: bad parameters (strategy, n >= 0, "
                 "ops >= 1, repeats >= 1, mix now or steady, steady: "
                 "horizon_ms 1..%" PRId64 ")", DQ_OPCOST_HORIZON_MS_MAX);
        return -1;
    }
    if (p->strategy->flags & DQ_G_NEEDS_REDIS) {
        snprintf(err, errlen, "opcost: '%s' needs Redis; opcost measures "
                 "in-process strategies", p->strategy->name);
        return -1;
    }
    return 0;
}

/* After the fill: n pending, and (steady) the real clock still before the
 * virtual start, so the claims' clock is later than every reading so far.
 * 0 or -1 with err. */
static int check_filled(dq_queue *q, const dq_opcost_params *p,
                        const steady *s, char *err, size_t errlen)
{
    int64_t pend = q->s->pending ? dq_pending(q) : p->n;

    if (pend != p->n) {
        snprintf(err, errlen, "%s: %" PRId64 " pending after filling %"
                 PRId64, p->strategy->name, pend, p->n);
        return -1;
    }
    if (s != NULL && dq_now_ms(q) >= s->v_ms) {
        snprintf(err, errlen, "%s: filling %" PRId64 " tasks took longer "
                 "than %" PRId64 " s, the lead of the virtual clock's start",
                 p->strategy->name, p->n, STEADY_START_MS / 1000);
        return -1;
    }
    return 0;
}

/* Median, min, max and mean of the repeats into r (ns sorted here). */
static void summarise(const dq_opcost_params *p, double *ns,
                      dq_opcost_result *r)
{
    double sum = 0;

    for (int i = 0; i < p->repeats; i++)
        sum += ns[i];
    r->ns_mean = sum / p->repeats;
    qsort(ns, (size_t)p->repeats, sizeof *ns, cmp_double);
    r->ns_min = ns[0];
    r->ns_max = ns[p->repeats - 1];
    r->ns_median = p->repeats % 2 ? ns[p->repeats / 2]
                                  : (ns[p->repeats / 2 - 1] +
                                     ns[p->repeats / 2]) / 2;
}

/* Fills, warms up and times the repeats on an open handle; s is NULL for
 * the now mix, else initialised (its clock not yet set). */
static int measure_on(dq_queue *q, const dq_opcost_params *p, steady *s,
                      dq_opcost_result *r, bool (*stop)(void), char *err,
                      size_t errlen)
{
    double *ns = calloc((size_t)p->repeats, sizeof *ns);
    uint64_t next = 0;
    int64_t t0, v0 = 0, el;
    int ret = -1;

    if (ns == NULL) {
        snprintf(err, errlen, "opcost: out of memory");
        return -1;
    }
    if (s != NULL)
        s->v_ms = dq_now_ms(q) + STEADY_START_MS;
    t0 = dq_mono_us();
    if ((ret = fill(q, p, s, stop, err, errlen)) != 0)
        goto done;
    r->fill_s = (double)(dq_mono_us() - t0) / 1e6;
    ret = -1;
    if (check_filled(q, p, s, err, errlen) != 0)
        goto done;
    if (timed_ops(q, p, s, p->ops < WARMUP_MAX ? p->ops : WARMUP_MAX, &next,
                  NULL, err, errlen) < 0)
        goto done;
    if (s != NULL)
        v0 = s->v_ms;
    for (int i = 0; i < p->repeats; i++) {
        if ((el = timed_ops(q, p, s, p->ops, &next, stop, err, errlen)) == -1)
            goto done;
        if (el == -2 || (stop != NULL && stop())) {
            ret = 1;
            goto done;
        }
        ns[i] = (double)el / (double)p->ops;
    }
    summarise(p, ns, r);
    if (s != NULL)
        r->virtual_ms_per_op = (double)(s->v_ms - v0) /
                               ((double)p->ops * p->repeats);
    ret = 0;
done:
    free(ns);
    return ret;
}

/* A fresh dq_local and queue for p, measured, purged and closed. */
int dq_opcost_measure(const dq_opcost_params *p, dq_opcost_result *r,
                      bool (*stop)(void), char *err, size_t errlen)
{
    char queue[65];
    dq_config cfg;
    dq_queue *q = NULL;
    dq_local *local;
    steady st, *s = NULL;
    int ret;

    if (check_params(p, err, errlen) != 0)
        return -1;
    memset(r, 0, sizeof *r);
    if (p->mix == DQ_OPCOST_MIX_STEADY) {
        s = &st;
        if (!steady_init(s, p)) {
            steady_free(s);
            snprintf(err, errlen, "opcost: out of memory (horizon %" PRId64
                     " ms)", p->horizon_ms);
            return -1;
        }
    }
    local = dq_local_new();
    if (local == NULL) {
        snprintf(err, errlen, "opcost: out of memory");
        ret = -1;
        goto free_steady;
    }
    snprintf(queue, sizeof queue, "opcost-%ld", (long)getpid());
    memset(&cfg, 0, sizeof cfg);
    cfg.queue = queue;
    cfg.opts = p->opts;
    cfg.nopts = p->nopts;
    cfg.local = local;
    cfg.consumer = "opcost";
    if (dq_open(p->strategy, &cfg, &q, err, errlen) != DQ_OK) {
        ret = -1;
        goto free_local;
    }
    ret = measure_on(q, p, s, r, stop, err, errlen);
    if (q->s->purge != NULL)
        dq_purge(q);
    dq_close(q);
free_local:
    dq_local_free(local);
free_steady:
    if (s != NULL)
        steady_free(s);
    return ret;
}

void dq_opcost_csv_row(FILE *f, const dq_opcost_params *p,
                       const dq_opcost_result *r)
{
    fprintf(f, "%s,%s,%" PRId64 ",%" PRId64 ",%.2f,%.2f,%.2f,%.2f,",
            p->strategy->name, dq_opcost_mix_name(p->mix), p->n, p->ops,
            r->ns_median, r->ns_min, r->ns_max, r->ns_mean);
    if (p->mix == DQ_OPCOST_MIX_STEADY)
        fprintf(f, "%.6g", r->virtual_ms_per_op);
    fputc('\n', f);
}

/* ---- The slope ------------------------------------------------------------- */

int dq_opcost_fit_log2(const int64_t *n, const double *y, size_t k,
                       double *slope, double *intercept, double *r2)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, m, b, a, den;
    int used = 0;
    int64_t first = -1;
    bool distinct = false;

    for (size_t i = 0; i < k; i++) {
        double x;

        if (n[i] < 1)
            continue;
        if (first < 0)
            first = n[i];
        distinct |= n[i] != first;
        x = log2((double)n[i]);
        sx += x;
        sy += y[i];
        sxx += x * x;
        sxy += x * y[i];
        syy += y[i] * y[i];
        used++;
    }
    if (!distinct)
        return -1;
    m = used;
    den = m * sxx - sx * sx;
    b = (m * sxy - sx * sy) / den;
    a = (sy - b * sx) / m;
    *slope = b;
    *intercept = a;
    /* r2 = 1 - SSres/SStot = b^2 Sxx / Syy (centred sums) */
    den = m * syy - sy * sy;
    *r2 = den <= 1e-12 * m * syy ? 1.0 : b * b * (m * sxx - sx * sx) / den;
    return used;
}

/* ---- Arguments ----------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: dqlab opcost [--strategies LIST] [--n LIST] [--ops K] "
        "[--repeats R]\n"
        "                    [--mix LIST] [--horizon-ms H] [--out DIR]\n\n"
        "ns per operation (one enqueue + one claim) of in-process strategies "
        "with n\ntasks pending; CSV and the slopes against log2(n) under "
        "DIR/YYYYmmdd-HHMMSS/\n(DIR/latest: the newest complete run).\n\n"
        "  --strategies LIST  comma list of in-process strategies (default "
        "heap,wheel)\n"
        "  --n LIST           comma list of pending counts, 2..100000000 "
        "(default\n"
        "                     1000,10000,100000,1000000; 10000000 needs "
        "about 1 GB);\n"
        "                     slopes need two distinct n\n"
        "  --ops K            operations per repeat (default 200000; "
        "steady: >= 2n)\n"
        "  --repeats R        timed repeats; the CSV gives median, min, max, "
        "mean\n"
        "                     (default 5)\n"
        "  --mix LIST         now: enqueue a task due now and claim it, n "
        "tasks due\n"
        "                     far ahead (default); steady: enqueue due within "
        "the\n"
        "                     horizon, claim the task that has just fallen "
        "due, n\n"
        "                     tasks spread over the horizon, virtual clock; "
        "now,steady:\n"
        "                     both\n"
        "  --horizon-ms H     steady: delays 1..H ms (default 3600000, at "
        "most 86400000;\n"
        "                     4 bytes per ms)\n"
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

/* The comma list s of option opt, copied into buf and cut into items
 * (at most max).  An empty item (",x", "x,", "x,,y") is refused: a typo,
 * not a way to say "nothing".  The count, or -1 with the message in err. */
#define LIST_MAX 256
static int split_list(const char *opt, const char *s, char *buf, size_t len,
                      char **items, char *err, size_t errlen)
{
    int n = 0;

    if (strlen(s) >= len) {
        snprintf(err, errlen, "%s: list longer than %zu bytes", opt, len - 1);
        return -1;
    }
    snprintf(buf, len, "%s", s);
    for (char *w = buf;; n++) {
        char *comma = strchr(w, ',');

        if (comma != NULL)
            *comma = '\0';
        if (*w == '\0') {
            snprintf(err, errlen, "%s: empty item in '%s'", opt, s);
            return -1;
        }
        if (n == LIST_MAX) {
            snprintf(err, errlen, "%s: more than %d items", opt, LIST_MAX);
            return -1;
        }
        items[n] = w;
        if (comma == NULL)
            return n + 1;
        w = comma + 1;
    }
}

static int parse_strategies(const char *s, dq_opcost_opts *o, char *err,
                            size_t errlen)
{
    char buf[512], names[256], *items[LIST_MAX];
    int n = split_list("--strategies", s, buf, sizeof buf, items, err, errlen);

    in_process_names(names, sizeof names);
    o->nstrategies = 0;
    for (int k = 0; k < n; k++) {
        const char *w = items[k];
        const dq_strategy *st = dq_strategy_find(w);

        if (st == NULL || (st->flags & DQ_G_NEEDS_REDIS)) {
            snprintf(err, errlen, "--strategies: '%s' %s; opcost measures "
                     "in-process strategies (%s)", w,
                     st == NULL ? "is not a strategy" : "needs Redis", names);
            return -1;
        }
        for (size_t i = 0; i < o->nstrategies; i++) {
            if (o->strategies[i] == st) {
                snprintf(err, errlen, "--strategies: '%s' given twice", w);
                return -1;
            }
        }
        if (o->nstrategies == DQ_OPCOST_MAX_STRATEGIES) {
            snprintf(err, errlen, "--strategies: more than %d names",
                     DQ_OPCOST_MAX_STRATEGIES);
            return -1;
        }
        o->strategies[o->nstrategies++] = st;
    }
    if (n < 0)
        return -1;
    if (o->nstrategies == 0) {
        snprintf(err, errlen, "--strategies: empty list");
        return -1;
    }
    return 0;
}

/* --n: DQ_OPCOST_N_MIN..DQ_OPCOST_N_MAX each (see opcost.h).  One
 * distinct n is a run too (strategies compared at that n): it has no
 * slope, and the report says so instead of drawing. */
static int parse_n(const char *s, dq_opcost_opts *o, char *err, size_t errlen)
{
    char buf[512], *items[LIST_MAX];
    int n = split_list("--n", s, buf, sizeof buf, items, err, errlen);

    o->nn = 0;
    for (int k = 0; k < n; k++) {
        if (o->nn == DQ_OPCOST_MAX_N) {
            snprintf(err, errlen, "--n: more than %d values",
                     DQ_OPCOST_MAX_N);
            return -1;
        }
        if (dq_parse_i64("--n", items[k], DQ_OPCOST_N_MIN, DQ_OPCOST_N_MAX,
                         &o->n[o->nn], err, errlen) != 0)
            return -1;
        for (size_t i = 0; i < o->nn; i++) {
            if (o->n[i] == o->n[o->nn]) {
                snprintf(err, errlen, "--n: '%s' given twice", items[k]);
                return -1;
            }
        }
        o->nn++;
    }
    if (n < 0)
        return -1;
    if (o->nn == 0) {
        snprintf(err, errlen, "--n: empty list");
        return -1;
    }
    return 0;
}

static int parse_mix(const char *s, dq_opcost_opts *o, char *err,
                     size_t errlen)
{
    char buf[512], *items[LIST_MAX];
    int n = split_list("--mix", s, buf, sizeof buf, items, err, errlen);

    o->nmixes = 0;
    for (int k = 0; k < n; k++) {
        const char *w = items[k];
        dq_opcost_mix m;

        if (strcmp(w, "now") == 0) {
            m = DQ_OPCOST_MIX_NOW;
        } else if (strcmp(w, "steady") == 0) {
            m = DQ_OPCOST_MIX_STEADY;
        } else {
            snprintf(err, errlen, "--mix: '%s': expected now or steady", w);
            return -1;
        }
        for (size_t i = 0; i < o->nmixes; i++) {
            if (o->mixes[i] == m) {
                snprintf(err, errlen, "--mix: '%s' given twice", w);
                return -1;
            }
        }
        o->mixes[o->nmixes++] = m;
    }
    if (n < 0)
        return -1;
    if (o->nmixes == 0) {
        snprintf(err, errlen, "--mix: empty list");
        return -1;
    }
    return 0;
}

static void set_defaults(dq_opcost_opts *o)
{
    static const int64_t ns[] = {1000, 10000, 100000, 1000000};

    memset(o, 0, sizeof *o);
    /* Every in-process strategy (no Redis), from the registry. */
    for (size_t i = 0; dq_strategies[i] != NULL; i++)
        if (!(dq_strategies[i]->flags & DQ_G_NEEDS_REDIS) &&
            o->nstrategies < DQ_OPCOST_MAX_STRATEGIES)
            o->strategies[o->nstrategies++] = dq_strategies[i];
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        o->n[o->nn++] = ns[i];
    o->ops = 200000;
    o->repeats = 5;
    o->mixes[o->nmixes++] = DQ_OPCOST_MIX_NOW;
    o->horizon_ms = DQ_OPCOST_HORIZON_MS_DEFAULT;
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
    if (strcmp(a, "--mix") == 0)
        return parse_mix(v, o, err, errlen);
    if (strcmp(a, "--horizon-ms") == 0)
        return dq_parse_i64("--horizon-ms", v, 1, DQ_OPCOST_HORIZON_MS_MAX,
                            &o->horizon_ms, err, errlen);
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
                     strcmp(a, "--repeats") == 0 || strcmp(a, "--out") == 0 ||
                     strcmp(a, "--mix") == 0 || strcmp(a, "--horizon-ms") == 0;

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
    dq_runmeta_command_line(argc, argv, o->command, sizeof o->command);
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
    buf[0] = '\0';
    for (size_t i = 0; i < o->nmixes; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s",
                 i ? ", " : "", dq_opcost_mix_name(o->mixes[i]));
    dq_runmeta_kv(f, "mix", buf);
    fprintf(f, "ops = %" PRId64 "\nrepeats = %d\nwarmup_ops = %d\n"
            "payload_bytes = %d\nfar_due_ms = %" PRId64 "..%" PRId64 "\n"
            "horizon_ms = %" PRId64 "\n", o->ops, o->repeats, WARMUP_MAX,
            PAYLOAD_BYTES, FAR_MIN_MS, FAR_MIN_MS + FAR_SPAN_MS,
            o->horizon_ms);
    dq_runmeta_kv(f, "op_now", "one dq_enqueue of a task due now + one "
                  "dq_claim(timeout 0) + dq_task_clear, n tasks pending "
                  "due far_due_ms ahead");
    dq_runmeta_kv(f, "op_steady", "one dq_enqueue of a task due after "
                  "1..horizon_ms + the virtual clock moved to the earliest "
                  "due time + one dq_claim(timeout 0) of that task + "
                  "dq_task_clear, n tasks pending spread over the horizon "
                  "in steady state");
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

/* The medians of a run, for the slopes: med[mix][strategy][n]. */
typedef double opcost_medians[2][DQ_OPCOST_MAX_STRATEGIES][DQ_OPCOST_MAX_N];

/* One measurement of the run, its CSV row and progress lines.  0, 1
 * (stopped) or -1. */
static int run_one(const dq_opcost_params *p, FILE *csv, double *median,
                   char *err, size_t errlen)
{
    const char *mix = dq_opcost_mix_name(p->mix);
    dq_opcost_result r;
    int rc;

    fprintf(stderr, "dqlab opcost: %s %s n=%" PRId64 ": filling, then %d x "
            "%" PRId64 " operations\n", p->strategy->name, mix, p->n,
            p->repeats, p->ops);
    rc = dq_opcost_measure(p, &r, stop_requested, err, errlen);
    if (rc != 0)
        return rc;
    dq_opcost_csv_row(csv, p, &r);
    fflush(csv);
    *median = r.ns_median;
    fprintf(stderr, "dqlab opcost: %s %s n=%" PRId64 ": filled in %.2f s; "
            "%.1f ns/op (median of %d, min %.1f, max %.1f, mean %.1f)",
            p->strategy->name, mix, p->n, r.fill_s, r.ns_median, p->repeats,
            r.ns_min, r.ns_max, r.ns_mean);
    if (p->mix == DQ_OPCOST_MIX_STEADY)
        fprintf(stderr, "; virtual clock %.4g ms/op", r.virtual_ms_per_op);
    fputc('\n', stderr);
    return 0;
}

/* Every mix, n and strategy, one CSV row each, medians into med.  0, 1
 * (stopped) or -1. */
static int run_all(const dq_opcost_opts *o, FILE *csv, opcost_medians med,
                   char *err, size_t errlen)
{
    for (size_t mi = 0; mi < o->nmixes; mi++) {
        for (size_t ni = 0; ni < o->nn; ni++) {
            for (size_t si = 0; si < o->nstrategies; si++) {
                dq_opcost_params p = {o->strategies[si], NULL, 0, o->n[ni],
                                      o->ops, o->repeats, 1, o->mixes[mi],
                                      o->horizon_ms};
                int rc = run_one(&p, csv, &med[o->mixes[mi]][si][ni], err,
                                 errlen);

                if (rc != 0)
                    return rc;
            }
        }
    }
    return 0;
}

/* opcost_slopes.csv of a complete run, written atomically. */
static int write_slopes(const char *dir, const dq_opcost_opts *o,
                        opcost_medians med, char *err, size_t errlen)
{
    char path[PATH_MAX + 32];
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    int ret;

    if (f == NULL) {
        snprintf(err, errlen, "opcost_slopes.csv: %s", strerror(errno));
        return -1;
    }
    fputs(dq_opcost_slopes_header, f);
    for (size_t mi = 0; mi < o->nmixes; mi++) {
        for (size_t si = 0; si < o->nstrategies; si++) {
            int64_t lo = INT64_MAX, hi = 0;
            double b, a, r2;
            int pts = dq_opcost_fit_log2(o->n, med[o->mixes[mi]][si], o->nn,
                                         &b, &a, &r2);

            if (pts < 0)
                continue;
            for (size_t ni = 0; ni < o->nn; ni++) {
                if (o->n[ni] >= 1 && o->n[ni] < lo)
                    lo = o->n[ni];
                if (o->n[ni] > hi)
                    hi = o->n[ni];
            }
            fprintf(f, "%s,%s,%d,%" PRId64 ",%" PRId64 ",%.3f,%.2f,%.4f\n",
                    o->strategies[si]->name,
                    dq_opcost_mix_name(o->mixes[mi]), pts, lo, hi, b, a, r2);
        }
    }
    if (fclose(f) != 0) {
        free(data);
        snprintf(err, errlen, "opcost_slopes.csv: %s", strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/opcost_slopes.csv", dir);
    ret = dq_runmeta_write_atomic(path, data, len, err, errlen);
    free(data);
    return ret;
}

int dq_opcost_cmd(int argc, char **argv)
{
    dq_opcost_opts o;
    char err[512], stamp[40], dir[PATH_MAX], path[PATH_MAX + 16],
        started[64];
    FILE *csv = NULL;
    opcost_medians med;
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
    rc = run_all(&o, csv, med, err, sizeof err);
    if (rc == 1 || stop_requested()) {
        write_meta(dir, &o, started, false, err, sizeof err);
        fprintf(stderr, "dqlab opcost: interrupted; partial results kept in "
                "%s, %s/latest not updated\n", dir, o.out);
        fclose(csv);
        return 130;
    }
    if (rc != 0 || write_slopes(dir, &o, med, err, sizeof err) != 0 ||
        write_meta(dir, &o, started, true, err, sizeof err) != 0 ||
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
