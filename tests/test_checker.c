/* test_checker.c -- the event-log checker (harness/checker.c) on
 * hand-written logs with known counts, on malformed logs (rejected with the
 * right line number), and on a generated 1M-task log (speed).
 *
 * The logs live in tests/logs/ next to this file; each says in a comment
 * what it holds.  Paths are resolved from __FILE__ (the Makefile compiles
 * from the repository root) or from $DQ_TEST_LOGS.  No Redis needed.
 *
 * The verdict of `dqlab check` (exit 1 when the strategy named in the log
 * breaks a guarantee it declares, cli_check.c) is tested through the
 * binary: $DQLAB (set by tests/run.sh), else bin/dqlab next to tests/.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../harness/checker.h"
#include "../harness/eventlog.h"

static void log_path(const char *name, char *buf, size_t buflen)
{
    const char *env = getenv("DQ_TEST_LOGS");
    const char *file = __FILE__;
    const char *slash = strrchr(file, '/');

    if (env != NULL && *env != '\0')
        snprintf(buf, buflen, "%s/%s", env, name);
    else if (slash != NULL)
        snprintf(buf, buflen, "%.*s/logs/%s", (int)(slash - file), file, name);
    else
        snprintf(buf, buflen, "logs/%s", name);
}

static void check_ok(const char *name, dq_check *c)
{
    char path[512], err[512] = "";

    log_path(name, path, sizeof path);
    cr_assert_eq(dq_check_file(path, c, err, sizeof err), 0, "%s: %s", path,
                 err);
}

/* Asserts the log is rejected and the message names "file:line:". */
static void check_bad(const char *name, int line, const char *what)
{
    char path[512], err[512] = "", want[600];
    dq_check c;

    log_path(name, path, sizeof path);
    cr_assert_eq(dq_check_file(path, &c, err, sizeof err), -1,
                 "%s was accepted", path);
    snprintf(want, sizeof want, "%s:%d: ", path, line);
    cr_assert(strncmp(err, want, strlen(want)) == 0,
              "expected '%s...', got '%s'", want, err);
    cr_assert(strstr(err, what) != NULL, "expected '%s' in '%s'", what, err);
}

#define EQ_MS(a, b) cr_assert(((a) - (b)) < 1e-9 && ((b) - (a)) < 1e-9, \
                              "%s = %f, expected %f", #a, (a), (double)(b))

Test(checker, clean_log)
{
    dq_check c;

    check_ok("clean.log", &c);
    cr_assert_eq(c.enqueued, 3);
    cr_assert_eq(c.delivered, 3);
    cr_assert_eq(c.deliveries, 3);
    cr_assert_eq(c.duplicates, 0);
    cr_assert_eq(c.lost, 0);
    cr_assert_eq(c.early, 0);
    cr_assert_eq(c.unknown, 0);
    cr_assert_eq(c.acked, 3);
    cr_assert_eq(c.lateness.n, 3);
    /* Samples 5, 10, 20 ms; nearest rank: p50 = 2nd, p90 = 3rd. */
    EQ_MS(c.lateness.p50_ms, 10.0);
    EQ_MS(c.lateness.p90_ms, 20.0);
    EQ_MS(c.lateness.max_ms, 20.0);
    cr_assert_eq(c.first_us, 900000);
    cr_assert_eq(c.last_us, 2020100);
}

Test(checker, mixed_log_counts)
{
    dq_check c;

    check_ok("mixed.log", &c);
    cr_assert_eq(c.enqueued, 5);
    cr_assert_eq(c.delivered, 4);
    cr_assert_eq(c.deliveries, 8);
    cr_assert_eq(c.duplicates, 2);
    cr_assert_eq(c.lost, 1);
    cr_assert_eq(c.early, 2, "early = %" PRIu64, c.early);
    cr_assert_eq(c.unknown, 2);
    cr_assert_eq(c.acked, 2);
    cr_assert_eq(c.lateness.n, 4);
    /* Samples -100, -1, 2, 100 ms. */
    EQ_MS(c.lateness.p50_ms, -1.0);
    EQ_MS(c.lateness.p90_ms, 100.0);
    EQ_MS(c.lateness.p99_ms, 100.0);
    EQ_MS(c.lateness.max_ms, 100.0);
    cr_assert_eq(c.first_us, 850000);
    cr_assert_eq(c.last_us, 4900000);
}

Test(checker, malformed_logs)
{
    check_bad("bad_magic.log", 1, "not a dqlab event log");
    check_bad("bad_fields.log", 4, "D record needs 5 fields");
    check_bad("bad_time.log", 3, "bad time '12x'");
    check_bad("bad_type.log", 3, "unknown record type 'X'");
    check_bad("dup_enqueue.log", 4, "enqueued twice (first at line 2)");
    check_bad("empty_line.log", 3, "empty line");
    check_bad("bad_due.log", 2, "bad due time '-5'");
    check_bad("empty_id.log", 4, "empty task id");
}

Test(checker, missing_file)
{
    dq_check c;
    char err[256];

    cr_assert_eq(dq_check_file("/nonexistent/dqlab.log", &c, err, sizeof err),
                 -1);
    cr_assert(strstr(err, "/nonexistent/dqlab.log") != NULL, "%s", err);
}

Test(checker, percentile_nearest_rank)
{
    double s[10];

    for (int i = 0; i < 10; i++)
        s[i] = i + 1; /* 1..10 */
    EQ_MS(dq_percentile(s, 10, 50), 5.0);
    EQ_MS(dq_percentile(s, 10, 90), 9.0);
    EQ_MS(dq_percentile(s, 10, 91), 10.0);
    EQ_MS(dq_percentile(s, 10, 99.9), 10.0);
    EQ_MS(dq_percentile(s, 10, 0), 1.0);
    EQ_MS(dq_percentile(s, 10, 100), 10.0);
    EQ_MS(dq_percentile(s, 1, 50), 1.0);
    EQ_MS(dq_percentile(NULL, 0, 50), 0.0);
}

/* The writer and the checker agree, and the writer refuses names with TAB
 * or LF and an existing file. */
Test(checker, eventlog_roundtrip)
{
    char dir[] = "/tmp/dqlab-test-XXXXXX", path[128], err[256];
    dq_eventlog *l;
    dq_check c;

    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/events.log", dir);
    l = dq_eventlog_create(path, err, sizeof err);
    cr_assert_not_null(l, "%s", err);
    cr_assert_eq(dq_log_header(l, "strategy", "x"), 0);
    cr_assert_eq(dq_log_enqueue(l, 1000000, "a", 1000, "p0"), 0);
    cr_assert_eq(dq_log_deliver(l, 1003000, "a", "c0", 1), 0);
    cr_assert_eq(dq_log_ack(l, 1004000, "a", "c0"), 0);
    cr_assert_eq(dq_log_fault(l, 1005000, "kill", "begin", ""), 0);
    cr_assert_eq(dq_log_enqueue(l, 1, "bad\tid", 1, "p0"), -1);
    cr_assert_eq(dq_log_deliver(l, 1, "a", "c\n0", 1), -1);
    dq_eventlog_close(l);
    cr_assert_null(dq_eventlog_create(path, err, sizeof err));
    cr_assert(strstr(err, "refusing to overwrite") != NULL, "%s", err);

    cr_assert_eq(dq_check_file(path, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.enqueued, 1);
    cr_assert_eq(c.delivered, 1);
    cr_assert_eq(c.acked, 1);
    EQ_MS(c.lateness.p50_ms, 3.0);
    unlink(path);
    rmdir(dir);
}

/* 1M tasks, 3.2M records (every 10th task delivered twice, every 1000th
 * lost, D lines of every 7th task written before its E line). */
Test(checker, one_million_tasks, .timeout = 60)
{
    char path[] = "/tmp/dqlab-test-big-XXXXXX", err[256];
    const long n = 1000000;
    struct timespec a, b;
    dq_check c;
    FILE *f;
    int fd;
    double secs;

    fd = mkstemp(path);
    cr_assert(fd >= 0);
    f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fputs("# dqlab event log v1\n", f);
    for (long i = 0; i < n; i++) {
        long due = 1000000 + i;
        long t = due * 1000 + 1000 + (i % 50) * 1000; /* 1..50 ms late */
        int before = (i % 7 == 0);

        if (!before)
            fprintf(f, "E\t%ld\tt%ld\t%ld\tp0\n", due * 1000 - 5000, i, due);
        if (i % 1000 != 999) {
            fprintf(f, "D\t%ld\tt%ld\tc%ld\t1\n", t, i, i % 8);
            fprintf(f, "A\t%ld\tt%ld\tc%ld\n", t + 10, i, i % 8);
            if (i % 10 == 0)
                fprintf(f, "D\t%ld\tt%ld\tc1\t2\n", t + 2000, i);
        }
        if (before)
            fprintf(f, "E\t%ld\tt%ld\t%ld\tp0\n", due * 1000 - 5000, i, due);
    }
    cr_assert_eq(fclose(f), 0);

    clock_gettime(CLOCK_MONOTONIC, &a);
    cr_assert_eq(dq_check_file(path, &c, err, sizeof err), 0, "%s", err);
    clock_gettime(CLOCK_MONOTONIC, &b);
    unlink(path);
    secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;

    cr_assert_eq(c.enqueued, (uint64_t)n);
    cr_assert_eq(c.lost, 1000);
    cr_assert_eq(c.delivered, (uint64_t)n - 1000);
    cr_assert_eq(c.duplicates, 100000);
    cr_assert_eq(c.early, 0);
    cr_assert_eq(c.unknown, 0);
    EQ_MS(c.lateness.max_ms, 50.0);
    /* Generous (ASan, slow CI); about 1 s on a laptop without sanitizers. */
    cr_assert(secs < 20.0, "checking 1M tasks took %.1f s", secs);
    cr_log_info("checked 1M tasks in %.2f s", secs);
}

/* ---- dqlab check: the verdict and the exit code ------------------------- */

/* The dqlab binary into buf, or skips the test when there is none. */
static void dqlab_path(char *buf, size_t buflen)
{
    const char *env = getenv("DQLAB");
    const char *file = __FILE__;
    const char *slash = strrchr(file, '/');

    if (env != NULL && *env != '\0')
        snprintf(buf, buflen, "%s", env);
    else if (slash != NULL)
        snprintf(buf, buflen, "%.*s/../bin/dqlab", (int)(slash - file), file);
    else
        snprintf(buf, buflen, "../bin/dqlab");
    if (access(buf, X_OK) != 0)
        cr_skip_test("no dqlab binary at %s (set DQLAB or run make)", buf);
}

/* Reads fd to EOF into buf (NUL-terminated, truncated to buflen - 1). */
static void slurp(int fd, char *buf, size_t buflen)
{
    size_t n = 0;
    char tmp[4096];
    ssize_t r;

    while ((r = read(fd, tmp, sizeof tmp)) > 0)
        for (ssize_t i = 0; i < r; i++)
            if (n + 1 < buflen)
                buf[n++] = tmp[i];
    buf[n] = '\0';
    close(fd);
}

/* Runs `dqlab check [LOG] [extra]` (log NULL: no LOG argument) and returns
 * its exit status, -1 when it did not exit normally; stdout and stderr
 * into out and err. */
static int run_check(const char *log, const char *extra, char *out,
                     size_t outlen, char *err, size_t errlen)
{
    char bin[600], path[512];
    const char *argv[5];
    int po[2], pe[2], st, n = 0;
    pid_t pid;

    dqlab_path(bin, sizeof bin);
    argv[n++] = bin;
    argv[n++] = "check";
    if (log != NULL) {
        log_path(log, path, sizeof path);
        argv[n++] = path;
    }
    if (extra != NULL)
        argv[n++] = extra;
    argv[n] = NULL;
    cr_assert_eq(pipe(po), 0);
    cr_assert_eq(pipe(pe), 0);
    pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    slurp(po[0], out, outlen); /* outputs are small: no pipe deadlock */
    slurp(pe[0], err, errlen);
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Asserts `dqlab check LOG` exits `code` and prints `want` on stdout. */
static void expect_check(const char *log, int code, const char *want)
{
    char out[8192], err[2048];
    int rc = run_check(log, NULL, out, sizeof out, err, sizeof err);

    cr_assert_eq(rc, code, "dqlab check %s: exit %d, expected %d\n%s%s", log,
                 rc, code, out, err);
    cr_assert(strstr(out, want) != NULL, "dqlab check %s: no '%s' in:\n%s",
              log, want, out);
}

Test(check_verdict, broken_guarantee_exits_1)
{
    /* lua declares no-dup-concurrent. */
    expect_check("verdict_dup_lua.log", 1,
                 "verdict: VIOLATION: duplicates: the strategy declares "
                 "no-dup-concurrent\n");
    /* Early is a violation for every strategy, even naive. */
    expect_check("verdict_early.log", 1, "verdict: VIOLATION: early:");
    expect_check("verdict_lost.log", 1, "verdict: VIOLATION: lost:");
}

Test(check_verdict, kept_guarantees_exit_0)
{
    /* naive declares its duplicates: counted, not a violation. */
    expect_check("verdict_dup_naive.log", 0, "verdict: ok\n");
    /* Fewer E records than the tasks header: cut short, lost not judged. */
    expect_check("verdict_cut_short.log", 0, "verdict: ok\n");
    expect_check("verdict_cut_short.log", 0, "cut short");
    /* An "H interrupted 1" record, written after the E records. */
    expect_check("verdict_interrupted.log", 0, "verdict: ok\n");
}

Test(check_verdict, no_known_strategy_is_not_judged)
{
    expect_check("verdict_no_strategy.log", 0,
                 "verdict: not computed: the log names no strategy");
    /* clean.log and mixed.log name "hand-written"; mixed has early,
     * unknown, duplicates and lost, and still exits 0. */
    expect_check("clean.log", 0, "verdict: not computed: strategy "
                                 "'hand-written'");
    expect_check("mixed.log", 0, "verdict: not computed");
}

Test(check_verdict, json)
{
    char out[8192], err[2048];

    cr_assert_eq(run_check("verdict_dup_lua.log", "--json", out, sizeof out,
                           err, sizeof err), 1, "%s%s", out, err);
    cr_assert(strstr(out, "\"verdict\": \"violation\"") != NULL, "%s", out);
    cr_assert(strstr(out, "\"strategy\": \"lua\"") != NULL, "%s", out);
    cr_assert_eq(run_check("verdict_dup_naive.log", "--json", out,
                           sizeof out, err, sizeof err), 0, "%s%s", out, err);
    cr_assert(strstr(out, "\"verdict\": \"ok\"") != NULL, "%s", out);
    cr_assert(strstr(out, "\"violations\": []") != NULL, "%s", out);
    cr_assert_eq(run_check("verdict_no_strategy.log", "--json", out,
                           sizeof out, err, sizeof err), 0, "%s%s", out, err);
    cr_assert(strstr(out, "\"verdict\": null") != NULL, "%s", out);
}

/* Bad input: exit 2 and exactly one line on stderr. */
Test(check_verdict, bad_input_one_line_exit_2)
{
    static const struct {
        const char *log, *extra, *want;
    } cases[] = {
        {"bad_type.log", NULL, "bad_type.log:3: unknown record type 'X'"},
        {NULL, NULL, "dqlab check: missing LOG (see dqlab check --help)"},
        {"clean.log", "--nope", "dqlab check: unknown option '--nope'"},
        {"clean.log", "clean.log", "dqlab check: one LOG only"},
    };
    char out[8192], err[2048];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run_check(cases[i].log, cases[i].extra, out, sizeof out, err,
                           sizeof err);
        char *nl = strchr(err, '\n');

        cr_assert_eq(rc, 2, "case %zu: exit %d\n%s", i, rc, err);
        cr_assert(strstr(err, cases[i].want) != NULL,
                  "case %zu: no '%s' in '%s'", i, cases[i].want, err);
        cr_assert(nl != NULL && nl[1] == '\0',
                  "case %zu: expected one line on stderr, got '%s'", i, err);
        cr_assert_eq(out[0], '\0', "case %zu: stdout not empty: %s", i, out);
    }
}
