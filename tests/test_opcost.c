/* test_opcost.c -- `dqlab opcost` (harness/opcost.h): the measurement in
 * both mixes, the steady mix's virtual clock, the slope fit, the
 * arguments, bad input, and a tiny run's files.
 *
 * Speed is never asserted (a 2-core machine under sanitizers says nothing
 * about it): only that a measurement completes, leaves the queue empty,
 * and that its figures are ordered (min <= median <= max, all > 0); that
 * the steady mix does what opcost.h says, seen from inside a recording
 * strategy (the clock never steps back, every claim finds the task that
 * has just fallen due and hardly any other, the clock advances (H + 1) /
 * 2n ms per operation, the fill is spread over the horizon as in steady
 * state); that the fit finds a known line; and that the CSVs and meta.txt
 * have the documented shape, a second run never overwrites the first, and
 * bad input exits 2 with one line naming what was wrong, before creating
 * anything.  The steady mix's figures are deterministic (a fixed seed, and
 * a schedule that does not depend on timing), so its checks cannot flake.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/opcost.h"
#include "testlib.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* ---- The measurement ---------------------------------------------------- */

static void measure_small(const char *name, dq_opcost_mix mix,
                          int64_t horizon_ms)
{
    dq_opcost_params p = {tl_strategy(name), NULL, 0, 2000, 4000, 3, 7, mix,
                          horizon_ms};
    dq_opcost_result r;
    char err[256] = "";
    int rc = dq_opcost_measure(&p, &r, NULL, err, sizeof err);
    cr_assert_eq(rc, 0, "%s: dq_opcost_measure = %d: %s", name, rc, err);
    cr_expect_gt(r.ns_min, 0, "%s: ns_min %.2f", name, r.ns_min);
    cr_expect(r.ns_min <= r.ns_median && r.ns_median <= r.ns_max,
              "%s: min %.2f, median %.2f, max %.2f", name, r.ns_min,
              r.ns_median, r.ns_max);
    cr_expect(r.ns_min <= r.ns_mean && r.ns_mean <= r.ns_max,
              "%s: min %.2f, mean %.2f, max %.2f", name, r.ns_min,
              r.ns_mean, r.ns_max);
    cr_expect_geq(r.fill_s, 0);
    if (mix == DQ_OPCOST_MIX_NOW)
        cr_expect_eq(r.virtual_ms_per_op, 0);
    else
        cr_expect_gt(r.virtual_ms_per_op, 0);
}

Test(opcost, heap_measures) { measure_small("heap", DQ_OPCOST_MIX_NOW, 0); }
Test(opcost, wheel_measures) { measure_small("wheel", DQ_OPCOST_MIX_NOW, 0); }

/* Steady: every claim must return the earliest task (the measurement
 * fails otherwise).  A 1-minute horizon spreads 2000 tasks over 1.5 ms
 * each; a 100 ms one puts 40 in every millisecond, so most claims choose
 * among equal due times and the wheel's ticks hold many tasks. */
Test(opcost, heap_steady) { measure_small("heap", DQ_OPCOST_MIX_STEADY, 60000); }
Test(opcost, wheel_steady)
{
    measure_small("wheel", DQ_OPCOST_MIX_STEADY, 60000);
}
Test(opcost, heap_steady_ties)
{
    measure_small("heap", DQ_OPCOST_MIX_STEADY, 100);
}
Test(opcost, wheel_steady_ties)
{
    measure_small("wheel", DQ_OPCOST_MIX_STEADY, 100);
}

/* With strategy options too: tick_ms=10 and batch=8 still give a task per
 * claim(0) right after its enqueue, and in the steady mix the earliest
 * task each time (a buffered task was the earliest when taken). */
static void wheel_with_options(dq_opcost_mix mix)
{
    dq_opt o[2];
    char err[256] = "";
    cr_assert_eq(dq_opt_parse("tick_ms=10", &o[0], err, sizeof err), DQ_OK);
    cr_assert_eq(dq_opt_parse("batch=8", &o[1], err, sizeof err), DQ_OK);
    dq_opcost_params p = {tl_strategy("wheel"), o, 2, 100, 500, 1, 1, mix,
                          1000};
    dq_opcost_result r;
    cr_assert_eq(dq_opcost_measure(&p, &r, NULL, err, sizeof err), 0, "%s",
                 err);
}

Test(opcost, wheel_with_options) { wheel_with_options(DQ_OPCOST_MIX_NOW); }
Test(opcost, wheel_with_options_steady)
{
    wheel_with_options(DQ_OPCOST_MIX_STEADY);
}

Test(opcost, refuses_bad_mix_and_horizon)
{
    dq_opcost_params p = {tl_strategy("heap"), NULL, 0, 10, 10, 1, 1,
                          DQ_OPCOST_MIX_STEADY, 0};
    dq_opcost_result r;
    char err[256] = "";
    cr_expect_eq(dq_opcost_measure(&p, &r, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "horizon_ms") != NULL, "%s", err);
    p.horizon_ms = DQ_OPCOST_HORIZON_MS_MAX + 1;
    cr_expect_eq(dq_opcost_measure(&p, &r, NULL, err, sizeof err), -1);
    p.horizon_ms = 1000;
    p.mix = (dq_opcost_mix)7;
    cr_expect_eq(dq_opcost_measure(&p, &r, NULL, err, sizeof err), -1);
}

Test(opcost, refuses_redis_strategy)
{
    dq_opcost_params p = {tl_strategy("lua"), NULL, 0, 10, 10, 1, 1,
                          DQ_OPCOST_MIX_NOW, 0};
    dq_opcost_result r;
    char err[256] = "";
    cr_assert_eq(dq_opcost_measure(&p, &r, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "lua") != NULL && strstr(err, "Redis") != NULL,
              "%s", err);
}

static bool stop_now(void) { return true; }

Test(opcost, stop_is_polled)
{
    dq_opcost_params p = {tl_strategy("wheel"), NULL, 0, 5000, 100, 3, 1,
                          DQ_OPCOST_MIX_NOW, 0};
    dq_opcost_result r;
    char err[256] = "";
    cr_expect_eq(dq_opcost_measure(&p, &r, stop_now, err, sizeof err), 1,
                 "%s", err);
    p.mix = DQ_OPCOST_MIX_STEADY;
    p.horizon_ms = 1000;
    cr_expect_eq(dq_opcost_measure(&p, &r, stop_now, err, sizeof err), 1,
                 "%s", err);
}

/* ---- The steady mix seen by a strategy ---------------------------------- */

/* A recording in-process strategy: a binary min-heap of due times that
 * hands out the earliest due task, and notes every clock reading and what
 * it sees at each claim.  One handle at a time (the test's). */
static struct {
    int64_t *due;
    size_t n, cap;
    int64_t last_us;        /* the latest clock reading */
    int64_t steps_back;     /* readings earlier than the one before */
    int64_t readings;
    int64_t claims, empty;  /* claims, and those with nothing due */
    int64_t crowded;        /* claims with more than one task due */
    int64_t first_claim_ms, last_claim_ms;
    int64_t fill_min, fill_max, fills; /* enqueue_many's due times */
    double fill_sum;
} rec;

static void rec_clock(const dq_queue *q)
{
    int64_t now = dq_now_us(q);
    if (rec.readings++ > 0 && now < rec.last_us)
        rec.steps_back++;
    rec.last_us = now;
}

static void rec_push(int64_t due)
{
    if (rec.n == rec.cap) {
        rec.cap = rec.cap ? 2 * rec.cap : 1024;
        rec.due = realloc(rec.due, rec.cap * sizeof *rec.due);
        cr_assert_not_null(rec.due);
    }
    size_t i = rec.n++;
    for (; i > 0 && rec.due[(i - 1) / 2] > due; i = (i - 1) / 2)
        rec.due[i] = rec.due[(i - 1) / 2];
    rec.due[i] = due;
}

static int64_t rec_pop(void)
{
    int64_t top = rec.due[0], last = rec.due[--rec.n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= rec.n)
            break;
        if (c + 1 < rec.n && rec.due[c + 1] < rec.due[c])
            c++;
        if (rec.due[c] >= last)
            break;
        rec.due[i] = rec.due[c];
        i = c;
    }
    if (rec.n > 0)
        rec.due[i] = last;
    return top;
}

static int rec_open(dq_queue *q) { (void)q; return DQ_OK; }
static void rec_close(dq_queue *q) { (void)q; }
static int rec_ack(dq_queue *q, const dq_task *t) { (void)q; (void)t; return DQ_OK; }
static int64_t rec_pending(dq_queue *q) { (void)q; return (int64_t)rec.n; }
static int rec_purge(dq_queue *q) { (void)q; rec.n = 0; return DQ_OK; }

static int rec_enqueue(dq_queue *q, const char *id, const void *payload,
                       size_t len, int64_t due_ms)
{
    (void)id, (void)payload, (void)len;
    rec_clock(q);
    rec_push(due_ms);
    return DQ_OK;
}

static int rec_enqueue_many(dq_queue *q, const dq_enqueue_item *items,
                            size_t n)
{
    rec_clock(q);
    for (size_t i = 0; i < n; i++) {
        int64_t d = items[i].due_ms;
        if (rec.fills == 0 || d < rec.fill_min)
            rec.fill_min = d;
        if (rec.fills == 0 || d > rec.fill_max)
            rec.fill_max = d;
        rec.fill_sum += (double)d;
        rec.fills++;
        rec_push(d);
    }
    return DQ_OK;
}

static int rec_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    (void)timeout_ms;
    rec_clock(q);
    int64_t now_ms = dq_now_ms(q), due = 0;
    for (size_t i = 0; i < rec.n; i++)
        due += rec.due[i] <= now_ms;
    rec.crowded += due > 1;
    if (due == 0) {
        rec.empty++;
        return DQ_EMPTY;
    }
    out->due_ms = rec_pop();
    snprintf(out->id, sizeof out->id, "r");
    if (rec.claims++ == 0)
        rec.first_claim_ms = now_ms;
    rec.last_claim_ms = now_ms;
    return DQ_OK;
}

static const dq_optdef rec_options[] = {DQ_OPTDEF_END};

static const dq_strategy rec_strategy = {
    .name = "recorder",
    .summary = "test: records what opcost's steady mix does",
    .options = rec_options,
    .open = rec_open,
    .enqueue = rec_enqueue,
    .claim = rec_claim,
    .ack = rec_ack,
    .close = rec_close,
    .pending = rec_pending,
    .purge = rec_purge,
    .enqueue_many = rec_enqueue_many,
};

/* Runs the steady mix on the recording strategy: n tasks, horizon h ms,
 * K = ops, R = 2, seed 3.  Checks what holds for any n and h: no claim
 * found nothing, the clock never stepped back, 3 K claims (warm-up K and
 * two repeats), (H + 1) / 2n ms per operation seen by the harness and by
 * the strategy, the fill within one horizon. */
static void run_recorder(int64_t n, int64_t h, int64_t ops)
{
    memset(&rec, 0, sizeof rec);
    dq_opcost_params p = {&rec_strategy, NULL, 0, n, ops, 2, 3,
                          DQ_OPCOST_MIX_STEADY, h};
    dq_opcost_result r;
    char err[256] = "";
    cr_assert_eq(dq_opcost_measure(&p, &r, NULL, err, sizeof err), 0, "%s",
                 err);
    cr_expect_eq(rec.claims, 3 * ops);
    cr_expect_eq(rec.empty, 0);
    cr_expect_eq(rec.steps_back, 0, "the clock stepped back %lld times",
                 (long long)rec.steps_back);
    double want = (double)(h + 1) / (2.0 * (double)n);
    double seen = (double)(rec.last_claim_ms - rec.first_claim_ms) /
                  (double)(rec.claims - 1);
    cr_expect(fabs(seen / want - 1) < 0.1, "%.3f ms per claim, want %.3f",
              seen, want);
    cr_expect(fabs(r.virtual_ms_per_op / want - 1) < 0.1,
              "virtual_ms_per_op %.3f, want %.3f", r.virtual_ms_per_op, want);
    cr_expect_eq(rec.fills, n);
    cr_expect_leq(rec.fill_max - rec.fill_min, h);
}

/* Tasks 1.8 s apart.  Also: each claim finds only the task that has just
 * fallen due, but for the few due in the same ms (about 4 in 15000
 * claims) and those the clock's lead (the real time of up to 64
 * operations) reaches; and the fill has the triangular steady state's
 * mean H/3 past the earliest (uniform would give H/2). */
Test(opcost_steady, what_the_strategy_sees)
{
    const int64_t n = 1000, h = 3600000, ops = 5000;
    run_recorder(n, h, ops);
    cr_expect_lt(rec.crowded, 3 * ops / 100, "%lld of %lld claims found "
                 "more than one task due", (long long)rec.crowded,
                 (long long)rec.claims);
    double mean = rec.fill_sum / (double)rec.fills - (double)rec.fill_min;
    cr_expect(mean > 0.29 * h && mean < 0.38 * h,
              "fill: mean %.3f H past the earliest, want about 1/3", mean / h);
    free(rec.due);
}

/* Ten tasks due per ms: most claims find the clock where the previous one
 * left it, so a clock set from a fresh realtime reading after each of
 * them would step back; it must not. */
Test(opcost_steady, dense_clock_never_steps_back)
{
    run_recorder(1000, 100, 5000);
    free(rec.due);
}

/* ---- The slope ----------------------------------------------------------- */

Test(opcost_fit, finds_a_known_line)
{
    const int64_t n[] = {0, 1000, 10000, 100000, 1000000};
    double y[5], b, a, r2;
    for (int i = 0; i < 5; i++)
        y[i] = n[i] ? 10 + 3 * log2((double)n[i]) : 1e9; /* n 0: skipped */
    cr_assert_eq(dq_opcost_fit_log2(n, y, 5, &b, &a, &r2), 4);
    cr_expect(fabs(b - 3) < 1e-9 && fabs(a - 10) < 1e-9 &&
                  fabs(r2 - 1) < 1e-9, "slope %g, intercept %g, r2 %g", b, a,
              r2);
    for (int i = 1; i < 5; i++)
        y[i] = 60;  /* flat: O(1) */
    cr_assert_eq(dq_opcost_fit_log2(n + 1, y + 1, 4, &b, &a, &r2), 4);
    cr_expect(fabs(b) < 1e-9 && fabs(a - 60) < 1e-9, "slope %g, int. %g", b,
              a);
    /* Noisy points: r2 between 0 and 1. */
    y[1] = 50, y[2] = 70, y[3] = 55, y[4] = 65;
    cr_assert_eq(dq_opcost_fit_log2(n + 1, y + 1, 4, &b, &a, &r2), 4);
    cr_expect(r2 > 0 && r2 < 1, "r2 %g", r2);
}

Test(opcost_fit, needs_two_distinct_n)
{
    const int64_t n[] = {0, 1000, 1000};
    double y[] = {1, 2, 3}, b = -1, a = -1, r2 = -1;
    cr_expect_eq(dq_opcost_fit_log2(n, y, 3, &b, &a, &r2), -1);
    cr_expect(b == -1 && a == -1 && r2 == -1, "written on failure");
    cr_expect_eq(dq_opcost_fit_log2(n, y, 0, &b, &a, &r2), -1);
}

/* ---- Arguments ---------------------------------------------------------- */

static int parse(const char *const *args, int n, dq_opcost_opts *o,
                 char *err, size_t errlen)
{
    char *argv[32];
    for (int i = 0; i < n; i++)
        argv[i] = (char *)args[i];
    argv[n] = NULL;
    err[0] = '\0';
    return dq_opcost_parse_args(n, argv, o, err, errlen);
}

#define PARSE(o, err, ...)                                                   \
    parse((const char *const[]){"opcost", __VA_ARGS__},                      \
          (int)(sizeof((const char *const[]){"opcost", __VA_ARGS__}) /       \
                sizeof(const char *)),                                       \
          (o), (err), sizeof(err))

Test(opcost_args, defaults)
{
    dq_opcost_opts o;
    char err[256];
    const char *args[] = {"opcost"};
    cr_assert_eq(parse(args, 1, &o, err, sizeof err), 0, "%s", err);
    cr_expect_eq(o.nstrategies, 2);
    cr_expect_str_eq(o.strategies[0]->name, "heap");
    cr_expect_str_eq(o.strategies[1]->name, "wheel");
    cr_expect_eq(o.nn, 4);
    cr_expect_eq(o.n[3], 1000000);
    cr_expect_eq(o.ops, 200000);
    cr_expect_eq(o.repeats, 5);
    cr_expect_str_eq(o.out, "results/opcost");
    cr_expect_eq(o.nmixes, 1);
    cr_expect_eq(o.mixes[0], DQ_OPCOST_MIX_NOW);
    cr_expect_eq(o.horizon_ms, 3600000);
}

Test(opcost_args, good_values)
{
    dq_opcost_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--strategies", "wheel", "--n", "2,5,10000000",
                       "--ops", "7", "--repeats", "2", "--out", "/tmp/x"),
                 0, "%s", err);
    cr_expect_eq(o.nstrategies, 1);
    cr_expect_eq(o.nn, 3);
    cr_expect_eq(o.n[2], 10000000);
    cr_expect_eq(o.ops, 7);
    cr_expect_eq(o.repeats, 2);
    cr_expect_str_eq(o.out, "/tmp/x");
    cr_expect(strstr(o.command, "opcost --strategies wheel") != NULL, "%s",
              o.command);
    cr_assert_eq(PARSE(&o, err, "--mix", "steady,now", "--horizon-ms",
                       "86400000"), 0, "%s", err);
    cr_expect_eq(o.nmixes, 2);
    cr_expect_eq(o.mixes[0], DQ_OPCOST_MIX_STEADY);
    cr_expect_eq(o.mixes[1], DQ_OPCOST_MIX_NOW);
    cr_expect_eq(o.horizon_ms, 86400000);
    cr_assert_eq(PARSE(&o, err, "--mix", "steady"), 0, "%s", err);
    cr_expect_eq(o.nmixes, 1);
    cr_expect_str_eq(dq_opcost_mix_name(o.mixes[0]), "steady");
}

Test(opcost_args, bad_values)
{
    dq_opcost_opts o;
    char err[256];
    cr_expect_eq(PARSE(&o, err, "--strategies", "lua"), -1);
    cr_expect(strstr(err, "'lua' needs Redis") != NULL &&
                  strstr(err, "heap") != NULL && strstr(err, "wheel"),
              "%s", err);
    cr_expect_eq(PARSE(&o, err, "--strategies", "nosuch"), -1);
    cr_expect(strstr(err, "nosuch") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--n", "10,x"), -1);
    cr_expect(strstr(err, "--n") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--n", "-1"), -1);
    /* log2(1) = 0: the report's ratio of logarithms needs n >= 2 */
    cr_expect_eq(PARSE(&o, err, "--n", "0,1000"), -1);
    cr_expect(strstr(err, "--n: '0' is out of range 2..") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--n", "1,1000"), -1);
    cr_expect(strstr(err, "--n: '1' is out of range 2..") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--n", "100000001"), -1);
    cr_expect_eq(PARSE(&o, err, "--ops", "0"), -1);
    cr_expect(strstr(err, "--ops") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--repeats", "0"), -1);
    cr_expect(strstr(err, "--repeats") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--out"), -1);
    cr_expect(strstr(err, "--out needs a value") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--bogus"), -1);
    cr_expect(strstr(err, "--bogus") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "extra"), -1);
    cr_expect(strstr(err, "extra") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--mix", "later"), -1);
    cr_expect(strstr(err, "--mix: 'later': expected now or steady") != NULL,
              "%s", err);
    cr_expect_eq(PARSE(&o, err, "--mix", "now,now"), -1);
    cr_expect(strstr(err, "twice") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--mix", ","), -1);
    cr_expect(strstr(err, "--mix") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--horizon-ms", "0"), -1);
    cr_expect(strstr(err, "--horizon-ms") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--horizon-ms", "86400001"), -1);
    cr_expect(strstr(err, "--horizon-ms") != NULL, "%s", err);
}

/* A list item given twice would measure and write the same rows twice, and
 * an empty item (a trailing or doubled comma) is a typo: --n and
 * --strategies refuse both as --mix does, with a message naming the
 * option and the item. */
Test(opcost_args, repeated_and_empty_items)
{
    static const struct {
        const char *opt, *val, *want;
    } bad[] = {
        {"--n", "1000,1000", "--n: '1000' given twice"},
        {"--n", "1000,10000,01000", "--n: '01000' given twice"},
        {"--n", "1000,", "--n: empty item in '1000,'"},
        {"--n", ",1000", "--n: empty item in ',1000'"},
        {"--n", "1000,,10000", "--n: empty item in '1000,,10000'"},
        {"--strategies", "heap,heap", "--strategies: 'heap' given twice"},
        {"--strategies", "heap,wheel,heap",
         "--strategies: 'heap' given twice"},
        {"--strategies", "heap,", "--strategies: empty item in 'heap,'"},
        {"--strategies", ",wheel", "--strategies: empty item in ',wheel'"},
        {"--mix", "now,", "--mix: empty item in 'now,'"},
    };
    dq_opcost_opts o;
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        cr_expect_eq(PARSE(&o, err, bad[i].opt, bad[i].val), -1, "%s %s",
                     bad[i].opt, bad[i].val);
        cr_expect(strstr(err, bad[i].want) != NULL, "%s %s: '%s'",
                  bad[i].opt, bad[i].val, err);
    }
    /* A list longer than the parser keeps is refused, not cut short
     * (its last item would change meaning: ...,10000000 -> ...,100). */
    char longlist[1200];
    size_t off = 0;
    for (int v = 2; off < sizeof longlist - 16 && v < 100000; v++)
        off += (size_t)snprintf(longlist + off, sizeof longlist - off,
                                "%s%d", off ? "," : "", v);
    err[0] = '\0';
    cr_expect_eq(PARSE(&o, err, "--n", longlist), -1, "a %zu-byte --n", off);
    cr_expect(strstr(err, "--n: list longer than") != NULL, "'%s'", err);
    cr_assert_eq(PARSE(&o, err, "--n", "1000,10000"), 0, "%s", err);
    cr_expect_eq(o.nn, 2);
    cr_assert_eq(PARSE(&o, err, "--strategies", "wheel,heap"), 0, "%s", err);
    cr_expect_eq(o.nstrategies, 2);
}

/* ---- The CLI ------------------------------------------------------------ */

static const char *dqlab(void)
{
    const char *d = getenv("DQLAB");
    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    return d;
}

static int sh(const char *cmd)
{
    int st = system(cmd);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Entries of dir other than . and .. (-1 when it does not exist). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (d == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

Test(opcost_cli, bad_input_exits_2_with_one_line_and_no_files)
{
    char cmd[PATH_MAX + 256], out[PATH_MAX], root[PATH_MAX];
    snprintf(out, sizeof out, "/tmp/dqlab-opcost-bad-%ld.txt", (long)getpid());
    snprintf(root, sizeof root, "/tmp/dqlab-opcost-bad-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' opcost --n 10,0x --out '%s' 2>'%s' "
             ">/dev/null", dqlab(), root, out);
    cr_expect_eq(sh(cmd), 2);
    FILE *f = fopen(out, "r");
    cr_assert_not_null(f);
    char line[512];
    int lines = 0;
    bool named = false;
    while (fgets(line, sizeof line, f) != NULL) {
        lines++;
        named |= strstr(line, "--n") != NULL && strstr(line, "0x") != NULL;
    }
    fclose(f);
    unlink(out);
    cr_expect_eq(lines, 1);
    cr_expect(named, "the message does not name --n and '0x'");
    cr_expect_eq(entries(root), -1, "bad input created %s", root);
}

/* A repeated --strategies name: exit 2, one line naming the option, and
 * no results directory made. */
Test(opcost_cli, repeated_strategy_exits_2_and_writes_nothing)
{
    char cmd[PATH_MAX + 256], out[PATH_MAX], root[PATH_MAX], line[512];
    snprintf(out, sizeof out, "/tmp/dqlab-opcost-rep-%ld.txt", (long)getpid());
    snprintf(root, sizeof root, "/tmp/dqlab-opcost-rep-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' opcost --strategies heap,heap --n 100 "
             "--ops 10 --repeats 1 --out '%s' 2>'%s' >/dev/null", dqlab(),
             root, out);
    cr_expect_eq(sh(cmd), 2);
    FILE *f = fopen(out, "r");
    cr_assert_not_null(f);
    int lines = 0;
    bool named = false;
    while (fgets(line, sizeof line, f) != NULL) {
        lines++;
        named |= strstr(line, "--strategies: 'heap' given twice") != NULL;
    }
    fclose(f);
    unlink(out);
    cr_expect_eq(lines, 1);
    cr_expect(named, "the message does not name --strategies: %s", line);
    cr_expect_eq(entries(root), -1, "heap,heap created %s", root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    sh(cmd);
}

/* An n the slopes cannot use (log2 0 is undefined): exit 2, one line
 * naming --n, and no results directory made. */
Test(opcost_cli, n_zero_exits_2_and_writes_nothing)
{
    char cmd[PATH_MAX + 256], out[PATH_MAX], root[PATH_MAX], line[512];
    snprintf(out, sizeof out, "/tmp/dqlab-opcost-n0-%ld.txt", (long)getpid());
    snprintf(root, sizeof root, "/tmp/dqlab-opcost-n0-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' opcost --n 0 --ops 10 --repeats 1 "
             "--out '%s' 2>'%s' >/dev/null", dqlab(), root, out);
    cr_expect_eq(sh(cmd), 2);
    FILE *f = fopen(out, "r");
    cr_assert_not_null(f);
    int lines = 0;
    bool named = false;
    while (fgets(line, sizeof line, f) != NULL) {
        lines++;
        named |= strstr(line, "--n: '0' is out of range") != NULL;
    }
    fclose(f);
    unlink(out);
    cr_expect_eq(lines, 1);
    cr_expect(named, "the message does not name --n and '0': %s", line);
    cr_expect_eq(entries(root), -1, "--n 0 created %s", root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    sh(cmd);
}

/* Checks opcost.csv of run directory dir: the header, then rows strategy,
 * mix, n, ops (as asked), four ordered positive figures (min <= median,
 * mean <= max) and the virtual clock's advance (empty for mix now, > 0
 * for steady).  Returns rows; *steady counts those of the steady mix. */
static int check_csv(const char *dir, int64_t ops, int *steady)
{
    char path[PATH_MAX + 32], line[512];
    snprintf(path, sizeof path, "%s/opcost.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert_str_eq(line, dq_opcost_csv_header);
    int rows = 0;
    *steady = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char name[32], mix[16];
        long long n, o;
        double med, lo, hi, mean, vms = 0;
        int end = -1;
        int got = sscanf(line, "%31[^,],%15[^,],%lld,%lld,%lf,%lf,%lf,%lf,%n",
                         name, mix, &n, &o, &med, &lo, &hi, &mean, &end);
        cr_assert(got == 8 && end > 0, "%s: bad row '%s'", path, line);
        cr_expect(strcmp(name, "heap") == 0 || strcmp(name, "wheel") == 0,
                  "%s: strategy '%s'", path, name);
        if (strcmp(mix, "steady") == 0) {
            char tail;
            cr_expect(sscanf(line + end, "%lf%c", &vms, &tail) == 2 &&
                          tail == '\n' && vms > 0,
                      "%s: steady row without virtual_ms_per_op: %s", path,
                      line);
            (*steady)++;
        } else {
            cr_expect_str_eq(mix, "now");
            cr_expect_str_eq(line + end, "\n", "%s: now row: %s", path, line);
        }
        cr_expect(n == 100 || n == 1000, "%s: n %lld", path, n);
        cr_expect_eq(o, ops);
        cr_expect(lo > 0 && lo <= med && med <= hi && lo <= mean &&
                      mean <= hi, "%s: %s", path, line);
        rows++;
    }
    fclose(f);
    return rows;
}

/* Checks opcost_slopes.csv of run directory dir: the header, then one row
 * per strategy and mix over the two n of the tiny runs.  Returns rows. */
static int check_slopes(const char *dir)
{
    char path[PATH_MAX + 32], line[512];
    snprintf(path, sizeof path, "%s/opcost_slopes.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert_str_eq(line, dq_opcost_slopes_header);
    int rows = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char name[32], mix[16], tail;
        int pts;
        long long lo, hi;
        double b, a, r2;
        int got = sscanf(line, "%31[^,],%15[^,],%d,%lld,%lld,%lf,%lf,%lf%c",
                         name, mix, &pts, &lo, &hi, &b, &a, &r2, &tail);
        cr_assert(got == 9 && tail == '\n', "%s: bad row '%s'", path, line);
        cr_expect(strcmp(mix, "now") == 0 || strcmp(mix, "steady") == 0,
                  "%s: mix '%s'", path, mix);
        cr_expect(pts == 2 && lo == 100 && hi == 1000, "%s: %s", path, line);
        /* Two points: the line goes through both. */
        cr_expect(fabs(r2 - 1) < 1e-3, "%s: %s", path, line);
        rows++;
    }
    fclose(f);
    return rows;
}

Test(opcost_cli, tiny_runs_write_two_run_directories, .timeout = 120)
{
    char root[PATH_MAX], cmd[2 * PATH_MAX], p[PATH_MAX + 64], first[PATH_MAX];
    snprintf(root, sizeof root, "/tmp/dqlab-opcost-test-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && '%s' opcost --strategies "
             "heap,wheel --n 100,1000 --ops 500 --repeats 3 --mix now,steady "
             "--horizon-ms 10000 --out '%s' 2>/dev/null", root, dqlab(),
             root);
    cr_assert_eq(sh(cmd), 0, "%s", cmd);
    snprintf(p, sizeof p, "%s/latest", root);
    cr_assert(realpath(p, first) != NULL, "%s/latest missing", root);
    int steady;
    cr_expect_eq(check_csv(first, 500, &steady), 8);
    cr_expect_eq(steady, 4);
    cr_expect_eq(check_slopes(first), 4);
    snprintf(p, sizeof p, "%s/meta.txt", first);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f, "%s missing", p);
    char line[1024];
    bool complete = false, commit = false, command = false, mix = false,
         horizon = false;
    while (fgets(line, sizeof line, f) != NULL) {
        complete |= strcmp(line, "complete = yes\n") == 0;
        mix |= strcmp(line, "mix = now, steady\n") == 0;
        horizon |= strcmp(line, "horizon_ms = 10000\n") == 0;
        commit |= strncmp(line, "dqlab_commit = ", 15) == 0;
        command |= strncmp(line, "command = ", 10) == 0 &&
                   strstr(line, "--ops 500") != NULL;
    }
    fclose(f);
    cr_expect(complete && commit && command && mix && horizon,
              "meta.txt: complete %d, dqlab_commit %d, command %d, mix %d, "
              "horizon_ms %d", complete, commit, command, mix, horizon);

    /* The same command again: a new directory, the first one untouched. */
    snprintf(cmd, sizeof cmd, "'%s' opcost --strategies heap,wheel --n "
             "100,1000 --ops 500 --repeats 3 --out '%s' 2>/dev/null",
             dqlab(), root);
    cr_assert_eq(sh(cmd), 0, "%s", cmd);
    char second[PATH_MAX];
    snprintf(p, sizeof p, "%s/latest", root);
    cr_assert(realpath(p, second) != NULL);
    cr_expect_str_neq(first, second, "the second run reused %s", first);
    cr_expect_eq(check_csv(first, 500, &steady), 8);
    cr_expect_eq(check_csv(second, 500, &steady), 4); /* default: now */
    cr_expect_eq(steady, 0);
    cr_expect_eq(check_slopes(second), 2);
    cr_expect_eq(entries(root), 3, "%s: expected two runs and latest",
                 root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    sh(cmd);
}
