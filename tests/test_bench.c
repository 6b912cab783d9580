/* test_bench.c -- `dqlab bench`: argument parsing, bad input, and a tiny
 * run that must leave well-formed CSV files and a report section.
 *
 * Speed is never asserted here: a 2-core CI machine under sanitizers says
 * nothing about it.  These tests check shapes only: every CSV has the
 * documented header, every row as many fields, numbers where numbers
 * belong; meta.txt says complete; `latest` points at the run.
 *
 * The tiny run uses the test Redis (DQ_TEST_REDIS_PORT) and the dqlab
 * binary ($DQLAB), both set by tests/run.sh.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/bench.h"
#include "testlib.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static int parse(const char *const *args, int n, dq_bench_opts *o,
                 char *err, size_t errlen)
{
    char *argv[32];
    for (int i = 0; i < n; i++)
        argv[i] = (char *)args[i];
    argv[n] = NULL;
    err[0] = '\0';
    return dq_bench_parse_args(n, argv, o, err, errlen);
}

#define PARSE(o, err, ...)                                                   \
    parse((const char *const[]){"bench", __VA_ARGS__},                       \
          (int)(sizeof((const char *const[]){"bench", __VA_ARGS__}) /        \
                sizeof(const char *)),                                       \
          (o), (err), sizeof(err))

Test(bench_args, defaults)
{
    dq_bench_opts o;
    char err[256];
    const char *args[] = {"bench"};
    cr_assert_eq(parse(args, 1, &o, err, sizeof err), 0, "%s", err);
    cr_expect_eq(o.level, DQ_BENCH_QUICK);
    cr_expect_eq(o.parts, DQ_BENCH_ALL);
    cr_expect_str_eq(o.results, "results");
    cr_expect_not(o.have_redis);
    cr_expect_eq(o.nstrategies, 0);
}

Test(bench_args, good_values)
{
    dq_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--full", "--results", "/tmp/x", "--only",
                       "backlog,ceiling", "--strategies", "lua,heap",
                       "--redis", "redis://127.0.0.1:6390/2", "--keep-logs"),
                 0, "%s", err);
    cr_expect_eq(o.level, DQ_BENCH_FULL);
    cr_expect_str_eq(o.results, "/tmp/x");
    cr_expect_eq(o.parts, DQ_BENCH_BACKLOG | DQ_BENCH_CEILING);
    cr_expect_eq(o.nstrategies, 2);
    cr_expect_str_eq(o.strategies[0]->name, "lua");
    cr_expect(o.have_redis);
    cr_expect_eq(o.redis.port, 6390);
    cr_expect_eq(o.redis.db, 2);
    cr_expect(o.keep_logs);
    cr_expect(strstr(o.command, "bench --full") != NULL, "%s", o.command);
}

Test(bench_args, password_redacted_in_command)
{
    dq_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--redis", "redis://:s3cret@127.0.0.1:1/0"),
                 0, "%s", err);
    cr_expect(strstr(o.command, "s3cret") == NULL, "%s", o.command);
}

/* Each bad input: -1 and a message naming the option. */
Test(bench_args, bad_input)
{
    dq_bench_opts o;
    char err[256];
    cr_expect_eq(PARSE(&o, err, "--quick", "--full"), -1);
    cr_expect(strstr(err, "--quick") && strstr(err, "--full"), "%s", err);
    cr_expect_eq(PARSE(&o, err, "--only", "ceiling,nope"), -1);
    cr_expect(strstr(err, "--only") && strstr(err, "nope"), "%s", err);
    cr_expect_eq(PARSE(&o, err, "--only", ","), -1);
    cr_expect(strstr(err, "--only") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--strategies", "lua,nosuch"), -1);
    cr_expect(strstr(err, "nosuch") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--redis", "http://x"), -1);
    cr_expect(strstr(err, "--redis") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--results"), -1);
    cr_expect(strstr(err, "--results needs a value") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--results", ""), -1);
    cr_expect_eq(PARSE(&o, err, "--bogus"), -1);
    cr_expect(strstr(err, "--bogus") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "extra"), -1);
    cr_expect(strstr(err, "extra") != NULL, "%s", err);
}

/* ---- The CLI ------------------------------------------------------------ */

static const char *dqlab(void)
{
    const char *d = getenv("DQLAB");
    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    return d;
}

/* Runs cmd through sh; returns the exit status (or -1). */
static int sh(const char *cmd)
{
    int st = system(cmd);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(bench_cli, bad_input_exits_2_with_one_line)
{
    char cmd[PATH_MAX + 256], out[PATH_MAX];
    snprintf(out, sizeof out, "/tmp/dqlab-bench-bad-%ld.txt", (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' bench --only nope 2>'%s' >/dev/null",
             dqlab(), out);
    cr_expect_eq(sh(cmd), 2);
    FILE *f = fopen(out, "r");
    cr_assert_not_null(f);
    char line[512];
    int lines = 0;
    bool named = false;
    while (fgets(line, sizeof line, f) != NULL) {
        lines++;
        named |= strstr(line, "--only") != NULL;
    }
    fclose(f);
    unlink(out);
    cr_expect_eq(lines, 1);
    cr_expect(named);
}

/* ---- A tiny run ------------------------------------------------------ */

/* Checks that path is a CSV whose first line is header and whose every
 * row has as many fields, each of them a number except the columns named
 * in text (comma-separated names).  Returns the number of rows. */
static int check_csv(const char *path, const char *header, const char *text)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    char line[2048], names[64][48];
    int nh = 0, rows = 0;
    cr_assert_not_null(fgets(line, sizeof line, f), "%s empty", path);
    cr_assert_str_eq(line, header, "%s: header", path);
    for (char *save = NULL, *p = strtok_r(line, ",\n", &save); p && nh < 64;
         p = strtok_r(NULL, ",\n", &save))
        snprintf(names[nh++], sizeof names[0], "%s", p);
    while (fgets(line, sizeof line, f) != NULL) {
        rows++;
        line[strcspn(line, "\n")] = '\0';
        int n = 0;
        char *p = line;
        for (;;) {
            char *c = strchr(p, ',');
            if (c)
                *c = '\0';
            cr_assert_lt(n, nh, "%s row %d: too many fields", path, rows);
            char want[64];
            snprintf(want, sizeof want, ",%s,", names[n]);
            char list[256];
            snprintf(list, sizeof list, ",%s,", text);
            if (strstr(list, want) == NULL) {
                char *end;
                strtod(p, &end);
                cr_expect(*p != '\0' && *end == '\0',
                          "%s row %d: column %s = '%s' is not a number",
                          path, rows, names[n], p);
            }
            n++;
            if (c == NULL)
                break;
            p = c + 1;
        }
        cr_expect_eq(n, nh, "%s row %d: %d fields, header %d", path, rows,
                     n, nh);
    }
    fclose(f);
    return rows;
}

Test(bench_cli, smoke_run_writes_wellformed_csv, .timeout = 300)
{
    char root[PATH_MAX], cmd[3 * PATH_MAX], p[PATH_MAX + 64];
    snprintf(root, sizeof root, "/tmp/dqlab-bench-test-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    sh(cmd);
    snprintf(cmd, sizeof cmd, "'%s' bench --smoke --redis "
             "redis://127.0.0.1:%d --results '%s' --strategies heap,lua "
             "2>'%s.err'", dqlab(), tl_redis_port(), root, root);
    int rc = sh(cmd);
    cr_assert_eq(rc, 0, "dqlab bench --smoke exited %d (stderr in %s.err)",
                 rc, root);

    struct stat st;
    snprintf(p, sizeof p, "%s/bench/latest", root);
    cr_assert_eq(lstat(p, &st), 0, "no %s", p);
    cr_expect(S_ISLNK(st.st_mode));
    snprintf(p, sizeof p, "%s/bench/latest/meta.txt", root);
    FILE *m = fopen(p, "r");
    cr_assert_not_null(m);
    char line[1024];
    bool complete = false, errors0 = false;
    while (fgets(line, sizeof line, m) != NULL) {
        complete |= strcmp(line, "complete = yes\n") == 0;
        errors0 |= strcmp(line, "unit_errors = 0\n") == 0;
    }
    fclose(m);
    cr_expect(complete, "meta.txt: complete = yes");
    cr_expect(errors0, "meta.txt: unit_errors = 0");

    snprintf(p, sizeof p, "%s/bench/latest/ceiling.csv", root);
    cr_expect_eq(check_csv(p, "measure,source,ops,pipeline,seconds,"
                           "ops_per_s\n", "measure,source"), 2);
    snprintf(p, sizeof p, "%s/bench/latest/throughput.csv", root);
    /* heap and lua: 1 enqueue row + 2 consumer counts each, 1 repeat;
     * plus lua's two batched variants (bench.c tp_variants[]), 3 rows
     * each */
    cr_expect_eq(check_csv(p, "kind,strategy,options,producers,consumers,"
                           "repeat,tasks,seconds,tasks_per_s,delivered,"
                           "duplicates,lost,early,redis_commands,"
                           "redis_cpu_ms,lateness_p99_ms\n",
                           "kind,strategy,options"), 12);
    snprintf(p, sizeof p, "%s/bench/latest/backlog.csv", root);
    cr_expect_eq(check_csv(p, "strategy,options,backlog,preload_s,"
                           "memory_bytes,bytes_per_task,enqueue_us_mean,"
                           "enqueue_us_p50,enqueue_us_p99,claims,"
                           "claim_us_p50,claim_us_p90,claim_us_p99,"
                           "claim_us_max,empty_claims\n",
                           "strategy,options"), 4);
    snprintf(p, sizeof p, "%s/bench/latest/lateness.csv", root);
    cr_expect_geq(check_csv(p, "strategy,options,producers,consumers,"
                            "offered_per_s,seconds,enqueued,sent_per_s,"
                            "delivered,delivered_per_s,lost,duplicates,"
                            "lateness_p50_ms,lateness_p99_ms,"
                            "lateness_max_ms,saturated\n",
                            "strategy,options"), 2);

    /* The report reads it into its Performance section. */
    snprintf(cmd, sizeof cmd, "'%s' report '%s' --out '%s/out' "
             ">/dev/null 2>>'%s.err'", dqlab(), root, root, root);
    cr_expect_eq(sh(cmd), 0, "dqlab report failed (stderr in %s.err)", root);
    snprintf(cmd, sizeof cmd, "grep -q '^## Performance and scale' "
             "'%s/out/REPORT.md' && grep -q '^### Backlog scaling' "
             "'%s/out/REPORT.md' && test -s '%s/out/figures/bench-backlog.svg'",
             root, root, root);
    cr_expect_eq(sh(cmd), 0, "REPORT.md lacks the Performance section");
    /* Reached only when the asserts above passed (cr_assert leaves the
     * files behind for a look). */
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.err'", root, root);
    sh(cmd);
}
