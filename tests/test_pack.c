/* test_pack.c -- the report's interview and coursework pack
 * (report/sec_pack.c) and the exercises' acceptance (harness/exercise.c,
 * experiments/exercises.conf).
 *
 * The pack tests: the answers' evidence is computed from the results, so
 * a changed result file changes it, and a measurement the results lack is
 * said to be missing with the command that makes it.  The report is run as a
 * command ($DQLAB, set by tests/run.sh, from the repository root) on a
 * results directory written here (trials.csv rows from the writer's code,
 * harness/trialcols.h; probes.csv in the format of harness/probes.h).
 *
 * The exercise tests: `dqlab exercise EX NAME` on each exercise's reference
 * solution passes (exit 0) and on its starting point fails (exit 1) at
 * the check that tells them apart; the exercise file
 * (experiments/exercises.conf) loads, and a malformed one is refused with
 * the file and the line or section.  Each run is real: trials on private
 * redis-servers and the conformance suite of this build (the
 * test_conformance beside this binary), so these tests take a while.
 */
#include <criterion/criterion.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/exercise.h"
#include "../harness/trialcols.h"
#include "../strategies/dq.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static int sh(const char *cmd)
{
    int st = system(cmd);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "%s", path);
    fputs(text, f);
    fclose(f);
}

static const char *dqlab(void)
{
    const char *dq = getenv("DQLAB");
    cr_assert(dq != NULL && *dq, "DQLAB is not set: run through tests/run.sh");
    return dq;
}

/* A fresh directory /tmp/dqlab-pack-<what>-<pid> in root. */
static void fresh_root(char *root, size_t len, const char *what)
{
    char cmd[PATH_MAX + 16];
    snprintf(root, len, "/tmp/dqlab-pack-%s-%ld", what, (long)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    sh(cmd);
}

static void cleanup(const char *root)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    sh(cmd);
}

/* ---- The pack --------------------------------------------------------- */

/* One idle trial: 4 consumers of strategy with options, cmds Redis
 * commands (-1: no Redis) and cpu ms of server CPU over 2 s. */
static void idle_trial(FILE *f, size_t n, const char *strategy,
                       const char *options, int64_t cmds, double cpu)
{
    dq_trialrow row = {
        .experiment = "idle", .trial = n, .strategy = strategy,
        .options = options, .producers = 1, .consumers = 4, .tasks = 0,
        .repeat = 1, .redis_commands = cmds, .idle_ms = 2000,
        .claim_timeout_ms = 1000, .measured_s = 2.0, .redis_cpu_ms = cpu,
        .fault = "none", .consumer_mode = "thread",
    };
    dq_trialrow_write(f, &row);
}

/* root/idle: naive at poll_ms 10 (fast_cmds commands in 2 s) and 100,
 * list blocking, heap without Redis. */
static void write_idle(const char *root, int64_t fast_cmds)
{
    char cmd[3 * PATH_MAX], path[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/idle/run/logs' && ln -sfn run "
             "'%s/idle/latest'", root, root);
    cr_assert_eq(sh(cmd), 0);
    snprintf(path, sizeof path, "%s/idle/run/meta.txt", root);
    put(path, "name = idle\ntitle = Idle\ncomplete = yes\nplots = "
              "idle-cost\ntasks = 0\nredis_version = 7.0.15\n");
    snprintf(path, sizeof path, "%s/idle/run/trials.csv", root);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "%s", path);
    dq_trialrow_header(f);
    idle_trial(f, 1, "naive", "poll_ms=10", fast_cmds, 20.0);
    idle_trial(f, 2, "naive", "poll_ms=100", 90, 4.0);
    idle_trial(f, 3, "list", "", 60, 3.0);
    idle_trial(f, 4, "heap", "", -1, 2.0);
    fclose(f);
}

/* root/probes: the C06 ms-epoch probe with ms_exact of 2000 exact, and
 * the C28 probe with B list_b_us late behind A on the List. */
static void write_probes(const char *root, int ms_exact, long list_b_us)
{
    char cmd[3 * PATH_MAX], path[PATH_MAX + 64], csv[2048];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/probes/p' && ln -sfn p "
             "'%s/probes/latest'", root, root);
    cr_assert_eq(sh(cmd), 0);
    snprintf(path, sizeof path, "%s/probes/p/meta.txt", root);
    put(path, "redis_version = 7.0.15\n");
    snprintf(csv, sizeof csv, "claim,probe,action,observed,verdict_input\n"
             "C06,ms-epoch,ZADD/ZSCORE,exact,exact=%d;n=2000;lo="
             "1796123074359;hi=4102444800000\n"
             "C28,list-vs-zset,RPUSH/BLPOP,late,list_late_a_us=120;"
             "list_late_b_us=%ld;zset_late_a_us=130;zset_late_b_us=140;"
             "list_b_first=0;zset_b_first=1;hol_ms=200\n"
             "C27,ttl-keys-notify,SET PX,\"medians of 5 runs each: ...; "
             "writes/s per run: off 300/310/320/330/340, on 250/260/270/280/"
             "290; CPU us per 1,000 keys per run: off 2000/2100/2200/2300/"
             "2400, on 2500/2600/2700/2800/2900\",measured=1;repeats=5;"
             "off_keys_per_s=320;on_keys_per_s=270;off_cpu_us_per_1k=2200;"
             "on_cpu_us_per_1k=2700;rate_ratio_pm=844;cpu_ratio_pm=1227;"
             "on_events=1000\n", ms_exact, list_b_us);
    snprintf(path, sizeof path, "%s/probes/p/probes.csv", root);
    put(path, csv);
}

/* Runs the report on root into root/out; asserts it succeeded. */
static void report(const char *root)
{
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/out' && '%s' report '%s' --out "
             "'%s/out' >/dev/null 2>'%s/err'", root, dqlab(), root, root,
             root);
    cr_assert_eq(sh(cmd), 0, "dqlab report failed (stderr in %s/err)", root);
}

/* Whether REPORT.md of root has a line matching the extended regex re. */
static bool has_line(const char *root, const char *re)
{
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "grep -Eq -- '%s' '%s/out/REPORT.md'", re,
             root);
    return sh(cmd) == 0;
}

/* A changed trials.csv or probes.csv changes the answers' numbers. */
Test(pack, answers_follow_the_results, .timeout = 120)
{
    char root[PATH_MAX];
    fresh_root(root, sizeof root, "follow");
    write_idle(root, 800);
    write_probes(root, 2000, 200200);
    report(root);
    cr_expect(has_line(root, "^\\*\\*The evidence\\.\\*\\*  With nothing "
                       "due, 4 consumers of naive cost the server \\(\\[idle "
                       "cost\\]\\(#exp-idle\\)\\): poll_ms=10: 400 commands/s "
                       "\\(10\\.0 ms server CPU/s\\); poll_ms=100: 45 "
                       "commands/s \\(2\\.0 ms server CPU/s\\); the server "
                       "with no client at all \\(an in-process strategy.s "
                       "row\\) used 1\\.0 ms of CPU per second\\.  Consumers "
                       "that block instead: \\[list\\]\\(#card-list\\) 30 "
                       "commands/s\\."), "the polling answer's evidence");
    cr_expect(has_line(root, "\\*\\*Figures\\*\\* of this run: \\[idle-idle-"
                       "cost\\]\\(figures/idle-idle-cost\\.svg\\)\\."),
              "the idle figure is not linked");
    cr_expect(has_line(root, "From the List, A came out first and B was "
                       "handled 200\\.2 ms late, behind A; from a sorted set, "
                       "B came out first, B 0\\.1 ms and A 0\\.1 ms late"),
              "the List answer's evidence");
    cr_expect(has_line(root, "^\\| C28 \\| holds \\| one run of the "
                       "interaction, two tasks .* \\| one timing, no interval: "
                       "the List.s lateness of B, 200\\.2 ms, against the "
                       "rule.s threshold of half the head-of-line gap \\(100 "
                       "ms\\) \\|"), "C28 calls a timing an exact count");
    cr_expect(has_line(root, "^\\| C27 \\| holds \\| 5 runs per setting .* "
                       "\\| medians of 5 runs; per run, server CPU per 1,000 "
                       "keys off 2000-2400 us, on 2500-2900 us; writes/s off "
                       "300-340, on 250-290 \\(smallest-largest\\)"),
              "C27 leaves out the runs' spread");
    cr_expect(has_line(root, "^\\*\\*C27: .* ranged 2000-2400 us off and "
                       "2500-2900 us on: the ranges do not overlap"),
              "C27 does not say whether the runs overlap");
    cr_expect(has_line(root, "\\(\\[probes\\]\\(#probes\\)\\): 2000 of 2000 "
                       "millisecond timestamps from 2026-12-01 to 2100-01-01 "
                       "came back exact\\."), "the score answer's evidence");
    /* the same results, changed */
    write_idle(root, 1600);
    write_probes(root, 1999, 150000);
    report(root);
    cr_expect(has_line(root, "of naive cost the server \\(\\[idle cost\\]"
                       "\\(#exp-idle\\)\\): poll_ms=10: 800 commands/s"),
              "the polling answer did not follow trials.csv");
    cr_expect(has_line(root, "The busiest row, 800 commands/s, is|This "
                       "server.s ceiling is measured by `make bench`"),
              "the ceiling sentence");
    cr_expect(has_line(root, "B was handled 150\\.0 ms late, behind A"),
              "the List answer did not follow probes.csv");
    cr_expect(has_line(root, ": 1999 of 2000 millisecond timestamps"),
              "the score answer did not follow probes.csv");
    cleanup(root);
}

/* Without the probes, the loss experiment and the bench, each answer says
 * what is missing and the command that measures it; the pack is in the
 * contents. */
Test(pack, missing_measurements_name_their_command, .timeout = 120)
{
    char root[PATH_MAX], re[PATH_MAX + 256];
    fresh_root(root, sizeof root, "missing");
    write_idle(root, 800);
    report(root);
    snprintf(re, sizeof re, "^\\*\\*The evidence\\.\\*\\*  Not measured in "
             "this run: these results hold no C28 probe\\.  `bin/dqlab probes "
             "--results %s` runs it", root);
    cr_expect(has_line(root, re), "the List answer: no probe, no command");
    snprintf(re, sizeof re, "^\\*\\*The evidence\\.\\*\\*  Not measured in "
             "this run: these results hold no C06 probe\\.  `bin/dqlab probes "
             "--results %s`", root);
    cr_expect(has_line(root, re), "the score answer: no probe, no command");
    snprintf(re, sizeof re, "^\\*\\*The evidence\\.\\*\\*  Not measured in "
             "this run: these results hold no loss experiment\\.  `bin/dqlab "
             "experiment experiments/loss\\.ini --quick --results %s`", root);
    cr_expect(has_line(root, re), "the loss answer: no experiment");
    cr_expect(has_line(root, "^\\*\\*The evidence\\.\\*\\*  The bench is not "
                       "in these results: `make bench`"),
              "the scale answer: no bench");
    cr_expect(has_line(root, "This server.s ceiling is measured by `make "
                       "bench`, which is not in these results\\."),
              "the polling answer: no ceiling");
    cr_expect(has_line(root, "\\[Interview and coursework pack\\]\\(#pack\\)"),
              "the contents do not link the pack");
    cr_expect(has_line(root, "^<div id=\"pack\"></div>$"), "no anchor #pack");
    cleanup(root);
}

/* dqlab report reads the exercises (DQ_EXERCISE_FILE, relative to the
 * current directory) before any work: run in root/tree, a missing or
 * malformed root/tree/experiments/exercises.conf stops it with one line
 * naming the file (and line), exit 2 and no output; the repository's file
 * puts every exercise in the pack. */
Test(pack, report_stops_on_a_bad_exercise_file, .timeout = 120)
{
    char root[PATH_MAX], cmd[8 * PATH_MAX], conf[PATH_MAX + 64];
    char scripts[PATH_MAX];
    static const struct {
        const char *text;      /* the file; NULL: none */
        const char *line;      /* what the one line says after the path */
    } cases[] = {
        {NULL, ": No such file or directory"},
        {"[a]\ncolour = red\n", ":2: colour: not a key of an exercise"},
    };
    fresh_root(root, sizeof root, "exfile");
    write_idle(root, 800);
    cr_assert_not_null(realpath("report", scripts));
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/tree/experiments'", root);
    cr_assert_eq(sh(cmd), 0);
    snprintf(conf, sizeof conf, "%s/tree/" DQ_EXERCISE_FILE, root);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unlink(conf);
        if (cases[i].text != NULL)
            put(conf, cases[i].text);
        snprintf(cmd, sizeof cmd, "cd '%s/tree' && '%s' report '%s' --out "
                 "'%s/out' --scripts '%s' >/dev/null 2>'%s/err'", root,
                 dqlab(), root, root, scripts, root);
        cr_expect_eq(sh(cmd), 2, "case %zu: not exit 2", i);
        snprintf(cmd, sizeof cmd, "test \"$(cat '%s/err')\" = 'dqlab "
                 "report: " DQ_EXERCISE_FILE "%s' && test ! -e '%s/out'",
                 root, cases[i].line, root);
        cr_expect_eq(sh(cmd), 0, "case %zu: stderr (%s/err) is not the one "
                     "line naming %s%s, or output was written", i, root,
                     DQ_EXERCISE_FILE, cases[i].line);
    }
    snprintf(cmd, sizeof cmd, "cp " DQ_EXERCISE_FILE " '%s' && cd '%s/tree' "
             "&& '%s' report '%s' --out '%s/out' --scripts '%s' >/dev/null "
             "2>'%s/err'", conf, root, dqlab(), root, root, scripts, root);
    cr_expect_eq(sh(cmd), 0, "the repository's file (stderr in %s/err)",
                 root);
    cr_expect(has_line(root, "^<div id=\"pack-ex-at-least-once\"></div>$"),
              "the exercises are not in the pack");
    cleanup(root);
}

/* ---- The exercises ---------------------------------------------------- */

/* Runs `dqlab exercise ex name` with this build's conformance suite; its
 * output into out (root/out.txt).  Returns the exit code. */
static int exercise(const char *ex, const char *name, char *root,
                    size_t len)
{
    char self[PATH_MAX], tests[PATH_MAX], cmd[4 * PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    cr_assert(n > 0, "/proc/self/exe");
    self[n] = '\0';
    snprintf(tests, sizeof tests, "%s", dirname(self));
    fresh_root(root, len, name);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && '%s' exercise '%s' '%s' "
             "--tests '%s' >'%s/out.txt' 2>&1", root, dqlab(), ex, name,
             tests, root);
    return sh(cmd);
}

/* Whether root/out.txt has a line matching the extended regex re. */
static bool said(const char *root, const char *re)
{
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "grep -Eq -- '%s' '%s/out.txt'", re, root);
    return sh(cmd) == 0;
}

/* Whether root/out.txt, its wrapped lines joined (the indent and line
 * breaks as one space), matches the extended regex re: a sentence that
 * the wrapping may split. */
static bool said_text(const char *root, const char *re)
{
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "tr -s ' \\n' '  ' <'%s/out.txt' | "
             "grep -Eq -- '%s'", root, re);
    return sh(cmd) == 0;
}

#define EXPECT_RC(rc, want, root)                                            \
    cr_expect_eq(rc, want, "exit %d, expected %d; output: %s/out.txt", rc,  \
                 want, root)

Test(exercise, at_least_once_reference_passes, .timeout = 300)
{
    char root[PATH_MAX];
    int rc = exercise("at-least-once", "lua-lease", root, sizeof root);
    EXPECT_RC(rc, 0, root);
    cr_expect(said(root, "^exercise at-least-once: lua-lease PASSES \\(3 of "
                   "3 checks\\)$"), "no PASSES line");
    if (rc == 0)
        cleanup(root);
}

/* naive-checked as it is: its declared at-most-once lets `dqlab check`
 * pass while the killed consumers' tasks are lost; the acceptance fails
 * on what it declares, on the loss and on the suite's skipped checks. */
Test(exercise, at_least_once_start_fails, .timeout = 300)
{
    char root[PATH_MAX];
    int rc = exercise("at-least-once", "naive-checked", root, sizeof root);
    EXPECT_RC(rc, 1, root);
    cr_expect(said(root, "FAIL: naive-checked declares DQ_G_AT_MOST_ONCE"),
              "check 1 did not fail on the flags");
    cr_expect(said_text(root, "FAIL: dqlab run exited 0 and dqlab check of "
                        "its log 0: no guarantee the strategy declares was "
                        "broken\\. "), "check 2 did not run the trial and "
              "its check");
    cr_expect(said_text(root, "The trial lost [1-9][0-9]* tasks? "
                        "\\(allowed: 0\\)"),
              "check 2 did not fail on the lost tasks");
    /* The work directory was temporary: it is gone when the command
     * ends, so the output names no file in it. */
    cr_expect(!said(root, "dqlab-run-"), "a path into the removed "
              "temporary directory was printed");
    cr_expect(said(root, "long_work skipped"), "check 3: a skip must fail");
    cr_expect(said(root, "^exercise at-least-once: naive-checked FAILS \\(3 "
                   "of 3 checks failed\\)$"), "no FAILS line");
    if (rc == 1)
        cleanup(root);
}

Test(exercise, no_duplicates_reference_passes, .timeout = 300)
{
    char root[PATH_MAX];
    int rc = exercise("no-duplicates", "naive-checked", root, sizeof root);
    EXPECT_RC(rc, 0, root);
    cr_expect(said_text(root, "lost 0 tasks, made 0 extra deliveries,"),
              "the trial's counts");
    if (rc == 0)
        cleanup(root);
}

/* naive as it is: it declares its duplicates, so the trial's `dqlab check`
 * passes, and the acceptance fails on the flags and the duplicates. */
Test(exercise, no_duplicates_start_fails, .timeout = 300)
{
    char root[PATH_MAX];
    int rc = exercise("no-duplicates", "naive", root, sizeof root);
    EXPECT_RC(rc, 1, root);
    cr_expect(said(root, "FAIL: naive does not declare "
                   "DQ_G_NO_DUP_CONCURRENT"), "check 1 passed");
    cr_expect(said_text(root, "made [1-9][0-9]* extra deliver(y|ies) "
                        "\\(allowed: 0\\)"),
              "check 2 saw no duplicate from naive with 8 consumers");
    if (rc == 1)
        cleanup(root);
}

Test(exercise, dead_letter_reference_passes, .timeout = 300)
{
    char root[PATH_MAX];
    int rc = exercise("dead-letter", "lua-lease", root, sizeof root);
    EXPECT_RC(rc, 0, root);
    if (rc == 0)
        cleanup(root);
}

Test(exercise, dead_letter_start_fails, .timeout = 300)
{
    char root[PATH_MAX];
    int rc = exercise("dead-letter", "naive-checked", root, sizeof root);
    EXPECT_RC(rc, 1, root);
    cr_expect(said(root, "naive-checked has no option max_attempts"),
              "check 1 did not name the missing option");
    cr_expect(said(root, "max_attempts skipped"), "check 3: a skip must fail");
    if (rc == 1)
        cleanup(root);
}

/* Bad input: an unknown exercise or strategy is one line and exit 2. */
Test(exercise, bad_input)
{
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "'%s' exercise no-such naive 2>/dev/null",
             dqlab());
    cr_expect_eq(sh(cmd), 2, "an unknown exercise");
    snprintf(cmd, sizeof cmd, "test \"$('%s' exercise at-least-once mine "
             "2>&1 >/dev/null)\" = \"dqlab exercise: no strategy 'mine' in "
             "this build (strategies/mine.c and X(mine) in DQ_STRATEGY_MAP in "
             "strategies/registry.h, then make; dqlab list)\"", dqlab());
    cr_expect_eq(sh(cmd), 0, "an unknown strategy");
    snprintf(cmd, sizeof cmd, "'%s' exercise >/dev/null", dqlab());
    cr_expect_eq(sh(cmd), 0, "the listing");
}

/* ---- The exercise file ----------------------------------------------- */

/* The repository's file loads, every exercise with a check, in the order
 * dqlab exercise lists them (DQ_EXERCISE_FILE, from the tree's root). */
Test(exercise, file_loads)
{
    dq_exercise_set set;
    char err[600];
    cr_assert_eq(dq_exercises_load(DQ_EXERCISE_FILE, &set, err,
                                   sizeof err), 0, "%s", err);
    cr_expect_gt(set.n, 0);
    cr_expect_null(set.x[set.n].id, "the table ends with id NULL");
    for (size_t i = 0; i < set.n; i++) {
        cr_expect_not_null(set.x[i].checks[0].what, "%s", set.x[i].id);
        cr_expect_eq(dq_exercise_find(&set, set.x[i].id), &set.x[i]);
    }
    dq_exercises_free(&set);
}

/* One malformed exercise file: refused, err holding want. */
static void refused(const char *text, const char *want)
{
    char path[64], err[600] = "";
    dq_exercise_set set;
    snprintf(path, sizeof path, "/tmp/dqlab-exercises-%ld.conf",
             (long)getpid());
    put(path, text);
    cr_expect_eq(dq_exercises_load(path, &set, err, sizeof err), -1,
                 "accepted: %s", text);
    cr_expect(strstr(err, want) != NULL && strncmp(err, path,
                                                   strlen(path)) == 0,
              "'%s' does not start with the file and name '%s'", err, want);
    cr_expect_eq(set.n, 0);
    unlink(path);
}

#define EX_OK "[a]\ntitle = t\nfrom = naive\nreference = naive-checked\n" \
    "fails = naive\nfails_why = w\ntask = do\n  it\n"
#define CHECK_OK "[a.1]\nkind = declares\nwhat = w\nproves = p\n"

Test(exercise, file_refusals)
{
    refused("[a]\ncolour = red\n", ":2: colour: not a key of an exercise");
    refused(EX_OK "title = again\n", ":9: title given twice");
    refused(EX_OK "[a.2]\n", ":9: [a.2]: expected [a.1]");
    refused(EX_OK "[b.1]\n", ":9: [b.1] does not follow [b]");
    refused(EX_OK "[a.1]\nwhat = w\n", ":10: what: kind must be the first");
    refused(EX_OK "[a.1]\nkind = run\n", ":10: kind: 'run': expected");
    refused(EX_OK CHECK_OK "tests = x\n",
            ":13: tests: not a key of a declares check");
    refused(EX_OK CHECK_OK "need = fast\n", "'fast' is no guarantee");
    refused(EX_OK "[a.1]\nkind = trial\nwhat = w\nproves = p\n"
            "max_lost = 0\n  1\n", ":14: max_lost: this indented line");
    refused(EX_OK "[a.1]\nkind = suite\nwhat = w\nproves = p\n",
            ": [a.1] needs kind, what and proves (and tests");
    refused(EX_OK "[a.1]\nkind = declares\nwhat = w\n", "[a.1] needs kind");
    refused(EX_OK, ": [a] has no check ([a.1])");
    refused("[a]\ntitle = t\nfrom = naive\nreference = nosuch\nfails = naive\n"
            "fails_why = w\ntask = t\n" CHECK_OK,
            ": [a]: no strategy 'nosuch' in this build");
    refused("[a]\ntitle = t\nfrom = naive\nafter = a\nreference = naive\n"
            "fails = naive\nfails_why = w\ntask = t\n" CHECK_OK,
            ":1: [a] needs from (a strategy) or after (an earlier exercise)");
    refused("[a]\ntitle = t\nreference = naive\n", ": [a] needs title, task");
    refused("title = t\n", ":1: title: a key before the first [ID]");
    refused("[A]\n", ":1: [A]: expected [ID] or [ID.N]");
    refused("", ": no exercise");
}

/* An exercise file that loads, in *set (the caller frees it). */
static void accepted(const char *text, dq_exercise_set *set)
{
    char path[64], err[600];
    snprintf(path, sizeof path, "/tmp/dqlab-exercises-%ld.conf",
             (long)getpid());
    put(path, text);
    cr_assert_eq(dq_exercises_load(path, set, err, sizeof err), 0,
                 "refused: %s", err);
    unlink(path);
}

/* A ';' or '#' in a value is text, not a comment; an indented line that
 * starts with one after a key would be a comment to inih, not the value
 * going on, so it is refused rather than dropped. */
Test(exercise, file_comment_rules)
{
    dq_exercise_set set;
    accepted(EX_OK "[a.1]\nkind = declares\nwhat = w ; x # y\n"
             "proves = p ; not a comment?\n", &set);
    cr_expect_str_eq(set.x[0].checks[0].what, "w ; x # y");
    cr_expect_str_eq(set.x[0].checks[0].proves, "p ; not a comment?");
    dq_exercises_free(&set);
    refused(EX_OK CHECK_OK "  ; more\n",
            ":13: an indented line starting with ';' or '#'");
    refused(EX_OK CHECK_OK "\t# more\n",
            ":13: an indented line starting with ';' or '#'");
}

/* An indented '[' right after a header is a header to inih: refused, not
 * read as the previous section's key (after a key it goes on the value). */
Test(exercise, file_indented_header)
{
    dq_exercise_set set;
    refused(EX_OK "[a.1]\n  [b]\n", ":10: an indented '[' line");
    refused("  [a]\n", ":1: an indented '[' line");
    accepted(EX_OK "[a.1]\nkind = declares\nwhat = w\n  [b]\nproves = p\n",
             &set);
    cr_expect_str_eq(set.x[0].checks[0].what, "w [b]");
    dq_exercises_free(&set);
}

/* Every key of a check once, as an exercise's. */
Test(exercise, file_check_keys_once)
{
    const char *trial = EX_OK "[a.1]\nkind = trial\nwhat = w\nproves = p\n";
    char text[512];
    snprintf(text, sizeof text, "%sargs = --x\nargs = --y\n", trial);
    refused(text, ":14: args given twice");
    snprintf(text, sizeof text, "%smax_lost = 1\nmax_lost = 2\n", trial);
    refused(text, ":14: max_lost given twice");
    refused(EX_OK CHECK_OK "need = blocks\nneed = duplicates\n",
            ":14: need given twice");
    refused(EX_OK CHECK_OK "proves = q\n", ":13: proves given twice");
}

/* The errors found at a section's end or from the whole exercise name the
 * section's header line; an unknown or later `after` says so. */
Test(exercise, file_errors_have_lines)
{
    refused(EX_OK "[a.1]\nkind = suite\nwhat = w\nproves = p\n[b]\n",
            ":9: [a.1] needs kind, what and proves");
    refused("\n" EX_OK, ":2: [a] has no check ([a.1])");
    refused("[a]\ntitle = t\nafter = zz\nreference = naive\nfails = naive\n"
            "fails_why = w\ntask = t\n" CHECK_OK,
            ":1: [a]: after = zz: no earlier exercise 'zz'");
    refused("[a]\ntitle = t\nafter = a\nreference = naive\nfails = naive\n"
            "fails_why = w\ntask = t\n" CHECK_OK,
            ":1: [a]: after = a: no earlier exercise 'a'");
}

/* Check numbers 1..4 as written, nothing after a header's ']'; guarantee
 * names split on any blanks. */
Test(exercise, file_header_and_words)
{
    dq_exercise_set set;
    refused(EX_OK "[a.01]\n", ":9: [a.01]: expected [a.1]");
    refused("[a] x\n", ":1: text after ']'");
    accepted(EX_OK CHECK_OK "options = a\tb\n", &set);
    cr_expect_str_eq(set.x[0].checks[0].options, "a b",
                     "exercise.c splits on spaces");
    dq_exercises_free(&set);
    accepted(EX_OK CHECK_OK "need = at-least-once\tblocks\n", &set);
    cr_expect_eq(set.x[0].checks[0].need, DQ_G_AT_LEAST_ONCE | DQ_G_BLOCKS);
    dq_exercises_free(&set);
}
