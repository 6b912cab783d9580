/* test_report.c -- the files between `dqlab experiment` and `dqlab report`:
 * trials.csv has one column list (harness/trialcols.h) for its writer and
 * its reader, and every CSV the report reads goes through one RFC 4180
 * reader.
 *
 * The report is run as a command ($DQLAB, set by tests/run.sh, from the
 * repository root so that it finds the gnuplot scripts) on a results
 * directory written here.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/trialcols.h"

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

/* Writes text to path; asserts. */
static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* A results dir root/x/run (latest -> run) with a meta.txt; returns the
 * run directory in run. */
static void make_run(const char *root, char *run, size_t len)
{
    char cmd[3 * PATH_MAX];
    snprintf(run, len, "%s/x/run", root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && ln -s run "
             "'%s/x/latest'", root, run, root);
    cr_assert_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/meta.txt", run);
    put(cmd, "# test\nname = x\ncomplete = yes\ntrials_done = 1\n");
}

Test(report_files, trials_csv_header_is_the_column_list)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f != NULL);
    dq_trialrow_header(f);
    fclose(f);
    /* The file format: changing it is a change of every stored result. */
    cr_expect_str_eq(buf,
        "experiment,trial,strategy,options,producers,consumers,tasks,"
        "delay_min_ms,delay_max_ms,work_us,repeat,seed,enqueued,delivered,"
        "deliveries,duplicates,lost,early,lateness_p50_ms,lateness_p90_ms,"
        "lateness_p99_ms,lateness_p999_ms,lateness_max_ms,tasks_per_s,"
        "elapsed_s,redis_commands,round_trips,empty_polls,lost_races,wakeups,"
        "putbacks,acked,unknown,backlog,idle_ms,claim_timeout_ms,measured_s,"
        "redis_cpu_ms,backlog_enqueue_s,fault,consumer_mode,kills,restarts,"
        "retries,redelivered,dup_fault,dup_nofault,pending_end,lost_claimed,"
        "lost_nofault,early_fault,unacked,redelivered_hidden,fault_windows,"
        "violations\n");
    free(buf);
}

/* trials.csv of run: one row written by the writer's code, with a quote,
 * a comma and a line break in its options. */
static void write_trials(const char *run)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/trials.csv", run);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "%s", path);
    dq_trialrow_header(f);
    dq_trialrow row = {
        .experiment = "x", .trial = 1, .strategy = "lua",
        .options = "note=\"a,b\nc\"", .producers = 1, .consumers = 2,
        .tasks = 10, .delay_max_ms = 100, .repeat = 1, .enqueued = 10,
        .delivered = 10, .deliveries = 12, .duplicates = 2,
        .lateness_p50_ms = 1.5, .lateness_p99_ms = 7.5, .tasks_per_s = 321,
        .redis_commands = 40, .round_trips = 30, .redis_cpu_ms = -1,
        .fault = "none", .consumer_mode = "thread",
    };
    dq_trialrow_write(f, &row);
    fclose(f);
}

/* Runs the report on root into root/out; asserts it succeeded. */
static void report(const char *root)
{
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "'%s' report '%s' --out '%s/out' >/dev/null "
             "2>'%s.err'", dqlab(), root, root, root);
    cr_assert_eq(sh(cmd), 0, "dqlab report failed (stderr in %s.err)", root);
}

/* The row is read back whole: the fields after the quoted options are
 * the report's table row for it. */
Test(report_files, written_row_is_read_back, .timeout = 60)
{
    char root[PATH_MAX], run[PATH_MAX], cmd[4 * PATH_MAX];
    snprintf(root, sizeof root, "/tmp/dqlab-report-test-%ld", (long)getpid());
    make_run(root, run, sizeof run);
    write_trials(run);
    report(root);
    snprintf(cmd, sizeof cmd, "grep -q '^| lua | 2 | 1 | 321 | 2 | 2 | 0 | "
             "0 | 1.5 | 7.5 | 4.0 | 3.0 |$' '%s/out/REPORT.md'", root);
    cr_expect_eq(sh(cmd), 0, "REPORT.md lacks the row as written");
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.err'", root, root);
    sh(cmd);
}

/* probes.csv: a quoted field with a comma, a doubled quote and a line
 * break is one cell of the Probes table. */
Test(report_files, probes_csv_quoting, .timeout = 60)
{
    char root[PATH_MAX], run[PATH_MAX], path[PATH_MAX + 64];
    char cmd[4 * PATH_MAX];
    snprintf(root, sizeof root, "/tmp/dqlab-report-probes-%ld",
             (long)getpid());
    make_run(root, run, sizeof run);
    write_trials(run);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/probes/p' && ln -s p "
             "'%s/probes/latest'", root, root);
    cr_assert_eq(sh(cmd), 0);
    snprintf(path, sizeof path, "%s/probes/p/probes.csv", root);
    put(path, "claim,probe,action,observed,verdict_input\n"
              "C20,zadd-maxlen,\"ZADD k MAXLEN 10, then \"\"1\"\"\nand "
              "more\",ERR,rejected=1;zcard=0\n");
    report(root);
    snprintf(cmd, sizeof cmd, "grep -q '^| C20 | zadd-maxlen | ZADD k "
             "MAXLEN 10, then \"1\"$' '%s/out/REPORT.md'", root);
    cr_expect_eq(sh(cmd), 0, "the Probes table lacks the quoted cell");
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.err'", root, root);
    sh(cmd);
}
