/* test_opcost.c -- `dqlab opcost` (harness/opcost.h): the measurement, its
 * arguments, bad input, and a tiny run's files.
 *
 * Speed is never asserted (a 2-core machine under sanitizers says nothing
 * about it): only that a measurement completes, leaves the queue empty,
 * and that its figures are ordered (min <= median <= max, all > 0); and
 * that the CSV and meta.txt have the documented shape, a second run never
 * overwrites the first, and bad input exits 2 with one line naming what
 * was wrong, before creating anything.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
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

static void measure_small(const char *name)
{
    dq_opcost_params p = {tl_strategy(name), NULL, 0, 2000, 3000, 3, 7};
    dq_opcost_result r;
    char err[256] = "";
    int rc = dq_opcost_measure(&p, &r, NULL, err, sizeof err);
    cr_assert_eq(rc, 0, "%s: dq_opcost_measure = %d: %s", name, rc, err);
    cr_expect_gt(r.ns_min, 0, "%s: ns_min %.2f", name, r.ns_min);
    cr_expect(r.ns_min <= r.ns_median && r.ns_median <= r.ns_max,
              "%s: min %.2f, median %.2f, max %.2f", name, r.ns_min,
              r.ns_median, r.ns_max);
    cr_expect_geq(r.fill_s, 0);
}

Test(opcost, heap_measures) { measure_small("heap"); }
Test(opcost, wheel_measures) { measure_small("wheel"); }

/* With strategy options too: tick_ms=10 and batch=8 still give a task per
 * claim(0) right after its enqueue. */
Test(opcost, wheel_with_options)
{
    dq_opt o[2];
    char err[256] = "";
    cr_assert_eq(dq_opt_parse("tick_ms=10", &o[0], err, sizeof err), DQ_OK);
    cr_assert_eq(dq_opt_parse("batch=8", &o[1], err, sizeof err), DQ_OK);
    dq_opcost_params p = {tl_strategy("wheel"), o, 2, 100, 500, 1, 1};
    dq_opcost_result r;
    cr_assert_eq(dq_opcost_measure(&p, &r, NULL, err, sizeof err), 0, "%s",
                 err);
}

Test(opcost, refuses_redis_strategy)
{
    dq_opcost_params p = {tl_strategy("lua"), NULL, 0, 10, 10, 1, 1};
    dq_opcost_result r;
    char err[256] = "";
    cr_assert_eq(dq_opcost_measure(&p, &r, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "lua") != NULL && strstr(err, "Redis") != NULL,
              "%s", err);
}

static bool stop_now(void) { return true; }

Test(opcost, stop_is_polled)
{
    dq_opcost_params p = {tl_strategy("wheel"), NULL, 0, 5000, 100, 3, 1};
    dq_opcost_result r;
    char err[256] = "";
    cr_expect_eq(dq_opcost_measure(&p, &r, stop_now, err, sizeof err), 1,
                 "%s", err);
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
}

Test(opcost_args, good_values)
{
    dq_opcost_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--strategies", "wheel", "--n", "0,5,10000000",
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

/* Checks opcost.csv of run directory dir: the header, then rows strategy,
 * n, ops (as asked) and three ordered positive figures.  Returns rows. */
static int check_csv(const char *dir, int64_t ops)
{
    char path[PATH_MAX + 32], line[512];
    snprintf(path, sizeof path, "%s/opcost.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert_str_eq(line, dq_opcost_csv_header);
    int rows = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char name[32];
        long long n, o;
        double med, lo, hi;
        char tail;
        int got = sscanf(line, "%31[^,],%lld,%lld,%lf,%lf,%lf%c", name, &n,
                         &o, &med, &lo, &hi, &tail);
        cr_assert(got == 7 && tail == '\n', "%s: bad row '%s'", path, line);
        cr_expect(strcmp(name, "heap") == 0 || strcmp(name, "wheel") == 0,
                  "%s: strategy '%s'", path, name);
        cr_expect(n == 100 || n == 1000, "%s: n %lld", path, n);
        cr_expect_eq(o, ops);
        cr_expect(lo > 0 && lo <= med && med <= hi, "%s: %s", path, line);
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
             "heap,wheel --n 100,1000 --ops 500 --repeats 3 --out '%s' "
             "2>/dev/null", root, dqlab(), root);
    cr_assert_eq(sh(cmd), 0, "%s", cmd);
    snprintf(p, sizeof p, "%s/latest", root);
    cr_assert(realpath(p, first) != NULL, "%s/latest missing", root);
    cr_expect_eq(check_csv(first, 500), 4);
    snprintf(p, sizeof p, "%s/meta.txt", first);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f, "%s missing", p);
    char line[1024];
    bool complete = false, commit = false, command = false;
    while (fgets(line, sizeof line, f) != NULL) {
        complete |= strcmp(line, "complete = yes\n") == 0;
        commit |= strncmp(line, "dqlab_commit = ", 15) == 0;
        command |= strncmp(line, "command = ", 10) == 0 &&
                   strstr(line, "--ops 500") != NULL;
    }
    fclose(f);
    cr_expect(complete && commit && command, "meta.txt: complete %d, "
              "dqlab_commit %d, command %d", complete, commit, command);

    /* The same command again: a new directory, the first one untouched. */
    snprintf(cmd, sizeof cmd, "'%s' opcost --strategies heap,wheel --n "
             "100,1000 --ops 500 --repeats 3 --out '%s' 2>/dev/null",
             dqlab(), root);
    cr_assert_eq(sh(cmd), 0, "%s", cmd);
    char second[PATH_MAX];
    snprintf(p, sizeof p, "%s/latest", root);
    cr_assert(realpath(p, second) != NULL);
    cr_expect_str_neq(first, second, "the second run reused %s", first);
    cr_expect_eq(check_csv(first, 500), 4);
    cr_expect_eq(entries(root), 3, "%s: expected two runs and latest",
                 root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    sh(cmd);
}
