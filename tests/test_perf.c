/* test_perf.c -- the report's Performance section from a hand-written
 * bench run (harness/bench.h's files): the targets table shows
 * targets.csv as the bench wrote it (the bench decides met, the report
 * never judges again), the fastest Redis strategy is picked by the
 * declared flags (DQ_G_NEEDS_REDIS), a run older than targets.csv and
 * references.csv still loads and says what it lacks, and a malformed
 * targets.csv is refused with file:line.
 *
 * The report is run as a command ($DQLAB, set by tests/run.sh, from the
 * repository root so that it finds its scripts and texts).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/bench.h"
#include "testlib.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

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

/* Writes text to dir/name; asserts. */
static void put(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* A bench run under a fresh root (root/bench/run, latest -> run) with a
 * meta.txt, a ceiling.csv and a throughput.csv: wheel and heap (in
 * process) far faster than the Redis strategies lua and zpopmin. */
static void make_bench(char *root, size_t rlen, char *run, size_t len,
                       const char *tag)
{
    char cmd[3 * PATH_MAX];
    snprintf(root, rlen, "/tmp/dqlab-perf-test-%s-%ld", tag, (long)getpid());
    snprintf(run, len, "%s/bench/run", root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && ln -s run "
             "'%s/bench/latest'", root, run, root);
    cr_assert_eq(sh(cmd), 0);
    put(run, "meta.txt", "# test\nexperiment = bench\nlevel = quick\n"
        "command = bin/dqlab bench --quick\ncores = 2\nhostname = test\n"
        "redis = private redis-server on 127.0.0.1:1\nredis_version = 7.0\n"
        "date = 2026-01-01T00:00:00+0000\ncomplete = yes\n"
        "unit_errors = 0\ntasks = 100\nrepeats = 1\nproducers = 2\n");
    put(run, "ceiling.csv", DQ_BENCH_CEILING_HEADER
        "zadd,dqlab,100000,100,0.1,800000.0\n"
        "zpopmin,dqlab,100000,100,0.1,700000.0\n");
    put(run, "throughput.csv", DQ_BENCH_THROUGHPUT_HEADER
        "e2e,wheel,,2,4,1,100000,0.05,2000000.0,100000,0,0,0,-1,-1,1,curve\n"
        "e2e,heap,,2,4,1,100000,0.1,1000000.0,100000,0,0,0,-1,-1,1,curve\n"
        "e2e,lua,,2,4,1,5000,0.1,50000.0,5000,0,0,0,45000,150,1,curve\n"
        "e2e,zpopmin,,2,4,1,5000,0.2,25000.0,5000,0,0,0,35000,160,1,"
        "curve\n");
}

/* Runs the report on root into root/out; its exit code, stderr in
 * root.err. */
static int report(const char *root)
{
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "'%s' report '%s' --out '%s/out' >/dev/null "
             "2>'%s.err'", dqlab(), root, root, root);
    return sh(cmd);
}

/* The Performance section of root's REPORT.md (malloc'd). */
static char *perf_section(const char *root)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/out/REPORT.md", root);
    char *all = tl_read_file(path);
    char *s = strstr(all, "## Performance and scale");
    cr_assert(s != NULL, "REPORT.md has no Performance section");
    char *end = strstr(s + 3, "\n## ");
    if (end != NULL)
        *end = '\0';
    char *out = strdup(s);
    free(all);
    return out;
}

/* The first line of text that holds every one of the NULL-ended
 * strings, or NULL (into buf). */
static const char *line_with(const char *text, char *buf, size_t len, ...)
{
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        snprintf(buf, len, "%.*s", (int)n, l);
        va_list ap;
        va_start(ap, len);
        bool all = true;
        for (const char *w; (w = va_arg(ap, const char *)) != NULL;)
            all = all && strstr(buf, w) != NULL;
        va_end(ap);
        if (all)
            return buf;
        l += n + (l[n] == '\n');
    }
    return NULL;
}

static void cleanup(const char *root)
{
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.err'", root, root);
    sh(cmd);
}

static const char targets[] = DQ_BENCH_TARGETS_HEADER
    "one_rtt_claim,lua,enqueue_batch=64,53890.054,tasks/s,"
    "redis-benchmark -t zadd -c 4,98828.125,0.5453,share,>=,0.500,yes,"
    "16.222,3,4 consumers; median of 3 trials\n"
    "one_rtt_claim,zpopmin,enqueue_batch=64,40591.280,tasks/s,"
    "redis-benchmark -t zadd -c 4,98828.125,0.4107,share,>=,0.500,no,"
    "18.671,3,4 consumers; median of 3 trials\n"
    "lateness_p99_200,list,,2.418,ms,,-1.000,-1.0000,figure,<=,1.000,no,"
    "-1.000,3,\"blocks (DQ_G_BLOCKS), median of 3 runs\"\n"
    "backlog_claim_p99,expiry,,-1.000,us,claim p99 at 1000 pending,-1.000,"
    "-1.0000,,,-1.000,not measured,-1.000,3,no ZSet layout\n";

static const char references[] = DQ_BENCH_REFERENCES_HEADER
    "zadd-c4,start,redis-benchmark -t zadd -c 4 -P 1 -n 150000 -r 100000,"
    "4,1,150000,80000.0,9.311\n"
    "zadd-c4,round 1,redis-benchmark -t zadd -c 4 -P 1 -n 150000 -r 100000,"
    "4,1,150000,100000.0,8.225\n"
    "zadd-c1-p100,start,\"redis-benchmark -t zadd,zpopmin -c 1 -P 100 -n "
    "400000 -r 100000\",1,100,400000,500000.0,1.012\n";

/* Each targets.csv row is a row of the table with its verdict as the
 * bench wrote it, and the references are shown as they ran. */
Test(report_perf, targets_and_references_as_written, .timeout = 120)
{
    char root[PATH_MAX], run[PATH_MAX], l[4096];
    make_bench(root, sizeof root, run, sizeof run, "t");
    put(run, "targets.csv", targets);
    put(run, "references.csv", references);
    cr_assert_eq(report(root), 0, "dqlab report failed (see %s.err)", root);
    char *s = perf_section(root);
    cr_expect(line_with(s, l, sizeof l, "| lua enqueue_batch=64 |",
                        "53890 tasks/s", "54.5%", "**met**", NULL) != NULL,
              "no met row for lua as written");
    cr_expect(line_with(s, l, sizeof l, "| zpopmin enqueue_batch=64 |",
                        "40591 tasks/s", "41.1%", "**not met**", NULL)
              != NULL, "no not-met row for zpopmin as written");
    cr_expect(line_with(s, l, sizeof l, "| list |", "2.42 ms", "<= 1.00 ms",
                        "**not met**", "median of 3 runs", NULL) != NULL,
              "no lateness row for list as written");
    cr_expect(line_with(s, l, sizeof l, "| expiry |", "not measured",
                        "no ZSet layout", NULL) != NULL,
              "no not-measured row for expiry");
    cr_expect(line_with(s, l, sizeof l, "redis-benchmark -t zadd -c 4 -P 1 "
                        "-n 150000 -r 100000", "100000", "8.2", NULL) != NULL,
              "references.csv's command is not shown as it ran");
    /* The old rules judged by the report itself are gone. */
    cr_expect(strstr(s, "150,000") == NULL, "an old target is still shown");
    cr_expect(strstr(s, "Not measured in this run (rerun `make bench`)")
              == NULL, "a file present in the run is said to be missing");
    free(s);
    cleanup(root);
}

/* The fastest Redis strategy is one that needs Redis: never wheel or
 * heap, however fast they went; its share is of the matching reference
 * (batch=1: redis-benchmark -c 4, median 90000 here). */
Test(report_perf, fastest_redis_strategy_needs_redis, .timeout = 120)
{
    char root[PATH_MAX], run[PATH_MAX], l[4096];
    make_bench(root, sizeof root, run, sizeof run, "f");
    put(run, "references.csv", references);
    cr_assert_eq(report(root), 0, "dqlab report failed (see %s.err)", root);
    char *s = perf_section(root);
    const char *w = line_with(s, l, sizeof l, "fastest Redis strategy", NULL);
    cr_assert(w != NULL, "no sentence on the fastest Redis strategy");
    char *sent = strstr(l, "fastest Redis strategy");
    char *end = strstr(sent, ". ");
    if (end != NULL)
        *end = '\0';
    cr_expect(strstr(sent, "lua") != NULL, "not lua: %s", sent);
    cr_expect(strstr(sent, "wheel") == NULL && strstr(sent, "heap") == NULL,
              "an in-process strategy named: %s", sent);
    cr_expect(strstr(sent, "55.6%") != NULL,
              "not a share of the -c 4 reference: %s", sent);
    /* The throughput table's lua row: its share of the same reference. */
    cr_expect(line_with(s, l, sizeof l, "| lua |", "55.6%", NULL) != NULL,
              "the throughput table's share is not of redis-benchmark -c 4");
    free(s);
    cleanup(root);
}

/* A run from before targets.csv, references.csv and harness.csv (and a
 * lateness.csv without its run column) loads, and says what it lacks. */
Test(report_perf, old_bench_run_says_not_measured, .timeout = 120)
{
    char root[PATH_MAX], run[PATH_MAX];
    make_bench(root, sizeof root, run, sizeof run, "o");
    put(run, "lateness.csv", "strategy,options,producers,consumers,"
        "offered_per_s,seconds,enqueued,sent_per_s,delivered,"
        "delivered_per_s,lost,duplicates,lateness_p50_ms,lateness_p99_ms,"
        "lateness_max_ms,saturated\n"
        "lua,,2,4,200,1.5,300,200,300,200,0,0,0.2,0.5,1.0,0\n");
    cr_assert_eq(report(root), 0, "dqlab report failed (see %s.err)", root);
    char *s = perf_section(root);
    cr_expect(strstr(s, "Not measured in this run (rerun `make bench`)")
              != NULL, "no not-measured line for the missing files");
    cr_expect(strstr(s, "### Targets") != NULL, "no Targets subsection");
    free(s);
    cleanup(root);
}

/* A targets.csv row with a verdict the bench never writes is refused
 * with its file and line, exit 2. */
Test(report_perf, malformed_targets_refused_with_line, .timeout = 120)
{
    char root[PATH_MAX], run[PATH_MAX], path[PATH_MAX + 16];
    make_bench(root, sizeof root, run, sizeof run, "m");
    put(run, "targets.csv", DQ_BENCH_TARGETS_HEADER
        "one_rtt_claim,lua,,1,tasks/s,,-1,-1,,,-1,none,-1,1,ok\n"
        "one_rtt_claim,zpopmin,,1,tasks/s,,-1,-1,,,-1,maybe,-1,1,bad\n");
    cr_assert_eq(report(root), 2, "a malformed targets.csv was not refused");
    snprintf(path, sizeof path, "%s.err", root);
    char *err = tl_read_file(path);
    cr_expect(strstr(err, "targets.csv:3:") != NULL, "stderr: %s", err);
    free(err);
    cleanup(root);
}

/* An opcost run beside the bench run: root/opcost/run (latest -> run)
 * with a meta.txt, an empty opcost_slopes.csv and opcost.csv rows for
 * heap and wheel (mix now) at each n of the comma list ns. */
static void make_opcost(const char *root, const char *ns)
{
    char cmd[3 * PATH_MAX], run[PATH_MAX], csv[4096], list[256];
    size_t off = 0;
    snprintf(run, sizeof run, "%s/opcost/run", root);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && ln -s run '%s/opcost/latest'",
             run, root);
    cr_assert_eq(sh(cmd), 0);
    put(run, "meta.txt", "# test\nexperiment = opcost\ncommand = bin/dqlab "
        "opcost\ndate = 2026-01-01T00:00:00+0000\ncomplete = yes\n");
    put(run, "opcost_slopes.csv", "strategy,mix,points,n_min,n_max,"
        "ns_per_log2n,intercept_ns,r2\n");
    off = (size_t)snprintf(csv, sizeof csv, "strategy,mix,n,ops,"
                           "ns_per_op_median,ns_per_op_min,ns_per_op_max,"
                           "ns_per_op_mean,virtual_ms_per_op\n");
    snprintf(list, sizeof list, "%s", ns);
    for (char *save = NULL, *n = strtok_r(list, ",", &save); n;
         n = strtok_r(NULL, ",", &save))
        off += (size_t)snprintf(csv + off, sizeof csv - off,
                                "heap,now,%s,1000,50.00,49.00,51.00,50.00,\n"
                                "wheel,now,%s,1000,40.00,39.00,41.00,40.00,"
                                "\n", n, n);
    put(run, "opcost.csv", csv);
}

/* The report on a bench run and an opcost run at the pending counts ns:
 * exits 0 (stderr shown if not), and its Performance section (malloc'd). */
static char *perf_with_opcost(const char *tag, const char *ns)
{
    char root[PATH_MAX], run[PATH_MAX], path[PATH_MAX + 16];
    make_bench(root, sizeof root, run, sizeof run, tag);
    make_opcost(root, ns);
    int rc = report(root);
    if (rc != 0) {
        snprintf(path, sizeof path, "%s.err", root);
        char *err = tl_read_file(path);
        cr_assert_fail("dqlab report on opcost n = %s exited %d: %s", ns, rc,
                       err);
    }
    char *s = perf_section(root);
    cleanup(root);
    return s;
}

/* A stored opcost run without two distinct n >= 2 (n = 0 only, or one n)
 * has nothing to draw: the report still succeeds, shows the run's table
 * and says what is missing instead of the figure. */
Test(report_perf, opcost_without_two_n_says_what_is_missing, .timeout = 120)
{
    static const char *const cases[] = {"0", "1000", "0,1"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char tag[16], l[4096], want[64];
        snprintf(tag, sizeof tag, "oc%zu", i);
        char *s = perf_with_opcost(tag, cases[i]);
        snprintf(want, sizeof want, "this run measured n = %s.",
                 i == 2 ? "0, 1" : cases[i]);
        cr_expect(line_with(s, l, sizeof l, "*Not drawn:*", want, NULL)
                  != NULL, "n = %s: no line on what is missing", cases[i]);
        cr_expect(strstr(s, "figures/opcost.svg") == NULL,
                  "n = %s: a figure drawn", cases[i]);
        cr_expect(line_with(s, l, sizeof l, "| heap | now |", "| 50.0 |",
                            NULL) != NULL, "n = %s: no table row", cases[i]);
        free(s);
    }
}

/* A run with n = 0 beside two usable n (an older dqlab took --n 0): the
 * figure is drawn from the usable n, without the one a log axis lacks. */
Test(report_perf, opcost_n_zero_beside_two_n_is_drawn, .timeout = 120)
{
    char *s = perf_with_opcost("ocz", "0,1000,10000");
    cr_expect(strstr(s, "figures/opcost.svg") != NULL, "no figure");
    cr_expect(strstr(s, "*Not drawn:*") == NULL, "said not drawn");
    cr_expect(strstr(s, "heap (now): 50 ns per operation at n = 1000, 50 "
                     "at 10000") != NULL,
              "no growth from the least usable n: %s", s);
    free(s);
}
