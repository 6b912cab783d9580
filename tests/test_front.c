/* test_front.c -- the report's first screen and the parts after it
 * (report/sec_front.c, sec_guide.c, sec_cards.c, facts.c): the summary
 * matrix, the decision guide, the scenarios and the cards are computed
 * from the results, so a changed result file changes them; every link of
 * the report has its target; the witness charts of a `dqlab witness` run
 * appear on their cards with their task ids and times, and without one
 * the cards say how to draw them.
 *
 * The report is run as a command ($DQLAB, set by tests/run.sh, from the
 * repository root so that it finds the scripts and templates) on a
 * results directory written here: trials.csv rows from the writer's code
 * (harness/trialcols.h), event logs in the format of harness/eventlog.h.
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

/* A fresh results root for this test process. */
static void fresh_root(char *root, size_t len, const char *what)
{
    char cmd[PATH_MAX + 16];
    snprintf(root, len, "/tmp/dqlab-front-%s-%ld", what, (long)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    sh(cmd);
}

/* root/name/run (latest -> run) with meta.txt meta; its trials.csv is
 * opened for writing with the header written. */
static FILE *make_run(const char *root, const char *name, const char *meta)
{
    char run[PATH_MAX], path[PATH_MAX + 64], cmd[3 * PATH_MAX];
    snprintf(run, sizeof run, "%s/%s/run", root, name);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/logs' && ln -sfn run "
             "'%s/%s/latest'", run, root, name);
    cr_assert_eq(sh(cmd), 0);
    snprintf(path, sizeof path, "%s/meta.txt", run);
    put(path, meta);
    snprintf(path, sizeof path, "%s/trials.csv", run);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "%s", path);
    dq_trialrow_header(f);
    return f;
}

/* One concurrency trial: 100 tasks, dups duplicates, cmds Redis commands
 * (-1: no Redis). */
static void conc_trial(FILE *f, size_t n, const char *strategy, int cons,
                       uint64_t dups, int64_t cmds)
{
    dq_trialrow row = {
        .experiment = "conc", .trial = n, .strategy = strategy,
        .options = "", .producers = 1, .consumers = cons, .tasks = 100,
        .delay_max_ms = 100, .repeat = 1, .enqueued = 100, .delivered = 100,
        .deliveries = 100 + dups, .duplicates = dups, .tasks_per_s = 1000,
        .redis_commands = cmds, .round_trips = cmds < 0 ? 0 : 300,
        .redis_cpu_ms = -1, .fault = "none", .consumer_mode = "thread",
    };
    dq_trialrow_write(f, &row);
}

/* The concurrency experiment: naive with dup duplicates at 2 consumers,
 * lua-lease and list-reliable with none, and their commands per task at
 * 1 consumer (lease_cmds and 1700 per 100 tasks). */
static void write_conc(const char *root, uint64_t dup, int64_t lease_cmds)
{
    FILE *f = make_run(root, "conc", "name = conc\ntitle = Conc\ncomplete "
                       "= yes\nplots = duplicates\nredis_version = 7.0.15\n");
    conc_trial(f, 1, "naive", 1, 0, 800);
    conc_trial(f, 2, "naive", 2, dup, 900);
    conc_trial(f, 3, "lua-lease", 1, 0, lease_cmds);
    conc_trial(f, 4, "lua-lease", 2, 0, lease_cmds);
    conc_trial(f, 5, "list-reliable", 1, 0, 1700);
    conc_trial(f, 6, "list-reliable", 2, 0, 1700);
    fclose(f);
}

#define LOG_HEAD(s, fault)                                                   \
    "# dqlab event log v2\nH\tstrategy\t" s "\nH\ttasks\t2\n"               \
    "H\tconsumer_mode\tprocess\nH\tfault\t" fault "\n"
/* t1's consumer c0 is killed during its work; c1 gets it again. */
#define LOG_KILL                                                             \
    "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"                     \
    "D\t1000500\tt1\tc0\t1\n"                                                \
    "F\t1000600\tkill-consumer\tbegin\tc0:point=during-work,claim=1,id=t1\n" \
    "F\t1000900\tkill-consumer\tend\tc0:replacement=c0.1\n"                  \
    "D\t1000700\tt2\tc1\t1\nA\t1000800\tt2\tc1\t1\n"                         \
    "D\t1300700\tt1\tc1\t2\nA\t1300800\tt1\tc1\t2\n"
#define LOG_RESTART                                                          \
    "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"                     \
    "F\t950000\trestart-redis\tbegin\tmode=always\n"                         \
    "F\t960000\trestart-redis\tend\tmode=always\n"                           \
    "D\t1000500\tt1\tc0\t1\nA\t1000600\tt1\tc0\t1\n"                         \
    "D\t1000700\tt2\tc1\t1\nA\t1000800\tt2\tc1\t1\n"
#define LOG_END "H\tend_us\t3000000\nZ\t3000100\tclean\n"

/* One trial of strategy with its log in experiment exp's run. */
static void fault_trial(FILE *f, const char *root, const char *exp, size_t n,
                        const char *strategy, const char *fault,
                        const char *log)
{
    char path[PATH_MAX];
    dq_trialrow row = {
        .experiment = exp, .trial = n, .strategy = strategy,
        .options = "lease_ms=300", .producers = 1, .consumers = 2,
        .tasks = 2, .delay_max_ms = 100, .work_us = 1000, .repeat = 1,
        .enqueued = 2, .delivered = 2, .deliveries = 3,
        .redis_commands = -1, .redis_cpu_ms = -1, .fault = fault,
        .consumer_mode = "process", .kills = strstr(fault, "kill") ? 1 : 0,
    };
    dq_trialrow_write(f, &row);
    snprintf(path, sizeof path, "%s/%s/run/logs/trial-%03zu.log", root, exp,
             n);
    put(path, log);
}

/* One loss trial of strategy with its log. */
static void loss_trial(FILE *f, const char *root, size_t n,
                       const char *strategy, const char *fault,
                       const char *log)
{
    fault_trial(f, root, "loss", n, strategy, fault, log);
}

/* The loss experiment: lua-lease and list-reliable each lose nothing to
 * a consumer kill (the task comes back, attempt 2) and to a restart with
 * AOF always. */
static void write_loss(const char *root)
{
    FILE *f = make_run(root, "loss", "name = loss\ntitle = Loss\ncomplete "
                       "= yes\nplots = loss\nfaults = kill-consumer:during-"
                       "work:1, restart-redis:always\ndelay_ms = 0:100\n");
    static const char *const ss[] = {"lua-lease", "list-reliable"};
    static const char *const kill[] = {
        LOG_HEAD("lua-lease", "kill-consumer:during-work:1") LOG_KILL LOG_END,
        LOG_HEAD("list-reliable", "kill-consumer:during-work:1") LOG_KILL
            LOG_END,
    };
    static const char *const restart[] = {
        LOG_HEAD("lua-lease", "restart-redis:always") LOG_RESTART LOG_END,
        LOG_HEAD("list-reliable", "restart-redis:always") LOG_RESTART
            LOG_END,
    };
    for (size_t i = 0; i < 2; i++) {
        loss_trial(f, root, 2 * i + 1, ss[i], "kill-consumer:during-work:1",
                   kill[i]);
        loss_trial(f, root, 2 * i + 2, ss[i], "restart-redis:always",
                   restart[i]);
    }
    fclose(f);
}

/* Runs the report on root into root/out; asserts it succeeded. */
static void report(const char *root)
{
    char cmd[4 * PATH_MAX];
    const char *dq = getenv("DQLAB");
    cr_assert(dq != NULL && *dq, "DQLAB is not set: run through tests/run.sh");
    snprintf(cmd, sizeof cmd, "rm -rf '%s/out' && '%s' report '%s' --out "
             "'%s/out' >/dev/null 2>'%s/err'", root, dq, root, root, root);
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

static void cleanup(const char *root)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    sh(cmd);
}

/* A changed trials.csv changes the matrix cell, the guide's list of what
 * to avoid and the scenarios' pick; the loss cells come from the logs. */
Test(front, matrix_and_scenarios_follow_the_results, .timeout = 120)
{
    char root[PATH_MAX];
    fresh_root(root, sizeof root, "follow");
    write_conc(root, 7, 2000);
    write_loss(root);
    report(root);
    cr_expect(has_line(root, "^\\| \\[naive\\]\\(#card-naive\\) \\| not "
                       "measured \\| not measured \\| not measured \\| \\[7 "
                       "in 100 tasks\\]\\(#exp-conc\\) \\(1 of 1 trial, 2 "
                       "consumers\\) \\|"), "naive's row: 7 duplicates");
    cr_expect(has_line(root, "^\\| \\[lua-lease\\]\\(#card-lua-lease\\) \\| "
                       "\\*\\*at-least-once\\*\\*, as declared \\(\\[1 kill, 1 "
                       "trial\\]\\(#exp-loss\\)\\) \\| \\[0 of 2 lost\\]"
                       "\\(#exp-loss\\), 1 redelivered \\(1 trial\\) \\| "
                       "\\[always 0/2\\]\\(#exp-loss\\) "
                       "\\(1 trial, 0-[0-9.]+%; 95% Wilson over the tasks; "
                       "from so few trials a count varies from run to "
                       "run\\) \\|"),
              "lua-lease's loss cells from the logs, with their sample");
    cr_expect(has_line(root, "^5\\. \\*\\*Do not use\\*\\*: \\[naive\\]"
                       "\\(#card-naive\\) \\(duplicates: \\[7 in 100"),
              "the guide does not name naive to avoid");
    cr_expect(has_line(root, "^\\*Never lose one, never cancel twice\\.\\*  "
                       "\\*\\*Use \\[list-reliable\\]"),
              "orders: list-reliable needs fewer commands (17.0 vs 20.0)");
    /* the same results, changed: no duplicate, lua-lease cheaper */
    write_conc(root, 0, 1000);
    report(root);
    cr_expect(has_line(root, "^\\| \\[naive\\]\\(#card-naive\\) \\| not "
                       "measured \\| not measured \\| not measured \\| \\[0 "
                       "in 100 tasks\\]"), "naive's cell did not change");
    cr_expect(has_line(root, "^5\\. \\*\\*Do not use\\*\\*: none in this "
                       "run\\.$"), "the guide still names naive to avoid");
    cr_expect(has_line(root, "^\\*Never lose one, never cancel twice\\.\\*  "
                       "\\*\\*Use \\[lua-lease\\]\\(#card-lua-lease\\)\\*\\*: "
                       "of .* it needs the fewest Redis commands per task "
                       "\\(\\[10\\.0\\]"), "orders: the pick did not change");
    cleanup(root);
}

/* A host crash, as an os-crash experiment, sorted before the loss one. */
#define LOG_HOST                                                             \
    "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"                     \
    "F\t950000\tos-crash\tbegin\tmode=always\n"                              \
    "F\t960000\tos-crash\tend\tmode=always\n"                                \
    "D\t1000500\tt1\tc0\t1\nA\t1000600\tt1\tc0\t1\n"                         \
    "D\t1000700\tt2\tc1\t1\nA\t1000800\tt2\tc1\t1\n"

/* Two fault experiments: the front takes its kills from the one that
 * kills consumers whatever the names' order (and not a retry
 * experiment's kills before the re-add), adds the other's host crashes to
 * the crash cells, and a lease strategy that lost nothing to
 * a host crash with AOF always qualifies for the orders scenario even
 * when no process restart with always ran. */
Test(front, facts_from_every_fault_experiment, .timeout = 120)
{
    char root[PATH_MAX];
    static const char *const ss[] = {"lua-lease", "list-reliable"};
    fresh_root(root, sizeof root, "two");
    write_conc(root, 7, 2000);
    FILE *d = make_run(root, "durability", "name = durability\ntitle = "
                       "Durability\ncomplete = yes\nfaults = os-crash:always"
                       "\ndelay_ms = 0:100\n");
    FILE *l = make_run(root, "loss", "name = loss\ntitle = Loss\ncomplete "
                       "= yes\nplots = loss\nfaults = kill-consumer:during-"
                       "work:1\ndelay_ms = 0:100\n");
    for (size_t i = 0; i < 2; i++) {
        char head[256], log[2048];
        snprintf(head, sizeof head, "# dqlab event log v2\nH\tstrategy\t%s"
                 "\nH\ttasks\t2\nH\tconsumer_mode\tprocess\nH\tfault\t",
                 ss[i]);
        snprintf(log, sizeof log, "%sos-crash:always\n" LOG_HOST LOG_END,
                 head);
        fault_trial(d, root, "durability", i + 1, ss[i], "os-crash:always",
                    log);
        snprintf(log, sizeof log, "%skill-consumer:during-work:1\n" LOG_KILL
                 LOG_END, head);
        loss_trial(l, root, i + 1, ss[i], "kill-consumer:during-work:1", log);
    }
    /* streams: at-least-once, a host crash run, no consumer killed */
    fault_trial(d, root, "durability", 3, "streams", "os-crash:always",
                LOG_HEAD("streams", "os-crash:always") LOG_HOST LOG_END);
    fclose(d);
    fclose(l);
    /* a retry experiment's kill before the re-add: lost by the recipe */
    FILE *rr = make_run(root, "retry-readd", "name = retry-readd\ntitle = "
                        "Re-add\ncomplete = yes\nfaults = kill-consumer:"
                        "before-retry:1\ndelay_ms = 0:100\n");
    fault_trial(rr, root, "retry-readd", 1, "lua-lease",
                "kill-consumer:before-retry:1",
                LOG_HEAD("lua-lease", "kill-consumer:before-retry:1")
                "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"
                "D\t1000500\tt1\tc0\t1\n"
                "F\t1000600\tkill-consumer\tbegin\tc0:point=before-retry,"
                "claim=1,id=t1\n"
                "F\t1000900\tkill-consumer\tend\tc0:replacement=c0.1\n"
                "D\t1000700\tt2\tc1\t1\nA\t1000800\tt2\tc1\t1\n" LOG_END);
    fclose(rr);
    report(root);
    cr_expect(has_line(root, "^\\| \\[lua-lease\\]\\(#card-lua-lease\\) \\| "
                       "\\*\\*at-least-once\\*\\*, as declared \\(\\[1 kill, 1 "
                       "trial\\]\\(#exp-loss\\)\\) \\| \\[0 of 2 lost\\]"
                       "\\(#exp-loss\\), 1 redelivered \\(1 trial\\) \\| not "
                       "measured; host crash: \\[always 0/2\\]\\(#exp-"
                       "durability\\) \\(1 trial, 0-[0-9.]+%; 95% Wilson "
                       "over the tasks; from so few trials a count varies "
                       "from run to run\\) \\|"),
              "lua-lease's kills from loss, its host crash from durability");
    cr_expect(has_line(root, "on a host crash \\(power loss, un-fsynced "
                       "writes dropped\\) they lost lua-lease always 0/2 "
                       "\\(0-[0-9.]+%\\), list-reliable always 0/2 "
                       "\\(0-[0-9.]+%\\), streams always 0/2 "
                       "\\(0-[0-9.]+%\\), 1 trial each; 95% Wilson over "
                       "the tasks; from so few trials a count varies"),
              "the matrix note's host crashes without their sample");
    cr_expect(has_line(root, "^2\\. \\*\\*Must tasks survive a Redis "
                       "crash\\?\\*\\* .*\\.  So: on a host crash, always "
                       "lost no task of the leased strategies here"),
              "the guide's question 2 draws no conclusion");
    cr_expect(has_line(root, "^2\\. \\*\\*Must tasks survive a Redis "
                       "crash\\?\\*\\* .*; \\[streams\\]\\(#card-streams\\): "
                       "not measured; host crash: \\[always 0/2\\]"),
              "the guide's question 2 leaves out a leased strategy with "
              "host-crash figures but no restart");
    cr_expect(has_line(root, "^3\\. \\*\\*Must a due task run within "
                       "milliseconds, or idle consumers cost Redis next to "
                       "nothing\\?\\*\\*  Consumers that block wait in a blocking command "
                       "instead of polling for due tasks \\(what they send "
                       "while idle"), "the guide's question 3 says blocking "
                       "consumers send no command");
    cr_expect(has_line(root, "^\\*Never lose one, never cancel twice\\.\\*  "
                       "\\*\\*Use \\[list-reliable\\]"),
              "orders: a host crash with always qualifies");
    cleanup(root);
}

/* allkeys-lru evicting t1's keys: t1 is never delivered. */
#define LOG_EVICT                                                            \
    "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"                     \
    "F\t950000\tevict\tbegin\tpolicy=allkeys-lru,maxmemory=1000000\n"        \
    "F\t960000\tevict\tend\tevicted_keys=3,filler_keys=100\n"                \
    "D\t1000700\tt2\tc1\t1\nA\t1000800\tt2\tc1\t1\n"

/* A failover: t1 never delivered (lost); with LOG_FAILOVER both are. */
#define LOG_FAILOVER_LOST                                                       \
    "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"                     \
    "F\t950000\tfailover\tbegin\tlag=300\n"                                  \
    "F\t960000\tfailover\tend\tpromoted=1\n"                                 \
    "D\t1000700\tt2\tc1\t1\nA\t1000800\tt2\tc1\t1\n"
#define LOG_FAILOVER                                                         \
    LOG_FAILOVER_LOST "D\t1000900\tt1\tc1\t1\nA\t1001000\tt1\tc1\t1\n"

/* C23 from the evict fault's cells: allkeys-lru lost a task, so the claim
 * that it protects the queue does not hold as stated, with its sample and
 * interval. */
Test(front, c23_from_the_eviction_trials, .timeout = 120)
{
    char root[PATH_MAX], log[2048];
    fresh_root(root, sizeof root, "c23");
    FILE *d = make_run(root, "durability", "name = durability\ntitle = "
                       "Durability\ncomplete = yes\nfaults = evict:allkeys-"
                       "lru\ndelay_ms = 0:100\n");
    snprintf(log, sizeof log, "# dqlab event log v2\nH\tstrategy\tlua\nH\t"
             "tasks\t2\nH\tconsumer_mode\tprocess\nH\tfault\tevict:allkeys-"
             "lru\n" LOG_EVICT LOG_END);
    fault_trial(d, root, "durability", 1, "lua", "evict:allkeys-lru", log);
    fclose(d);
    write_loss(root);   /* the loss experiment the front links to */
    report(root);
    cr_expect(has_line(root, "^\\| C23 \\| does not hold as stated \\| 1 "
                       "eviction trials, 2 tasks \\| allkeys-lru: 1 of 2 lost "
                       "\\("), "C23 not decided from the eviction trial");
    cr_expect(has_line(root, "^- \\*\\*Where it breaks\\*\\* \\(measured\\): "
                       "memory full .* lost \\[1 of 2\\]\\(#exp-durability\\)"),
              "lua's card leaves out the durability experiment's loss");
    cr_expect(has_line(root, "^- \\*\\*Where it breaks\\*\\* \\(measured\\): "
                       "memory full .* lost \\[1 of 2\\]\\(#exp-durability\\) "
                       "\\(1 trial, [0-9.]+-[0-9.]+%\\); 95% Wilson over the "
                       "tasks; from so few trials a count varies"),
              "lua's card gives its loss without its sample");
    cleanup(root);
}

/* The loss section's side table: the sampler's stall per cell, the work
 * run twice, and the why for a leased strategy stalled past its lease
 * apart from an at-most-once one's duplicates. */
Test(front, loss_side_table_and_why, .timeout = 120)
{
    char root[PATH_MAX];
    fresh_root(root, sizeof root, "side");
    FILE *f = make_run(root, "loss", "name = loss\ntitle = Loss\ncomplete "
                       "= yes\nplots = loss\nfaults = stall-consumer:800\n"
                       "delay_ms = 0:100\n");
    static const char *const ss[] = {"lua-lease", "naive"};
    for (size_t i = 0; i < 2; i++) {
        char path[PATH_MAX];
        dq_trialrow row = {
            .experiment = "loss", .trial = i + 1, .strategy = ss[i],
            .producers = 1, .consumers = 2, .tasks = 2, .delay_max_ms = 100,
            .work_us = 1000, .repeat = 1, .enqueued = 2, .delivered = 2,
            .deliveries = 3, .redis_commands = -1, .redis_cpu_ms = -1,
            .fault = "stall-consumer:800", .consumer_mode = "process",
            .processed_twice = i + 1, .redis_stall_ms = 850.0 + (double)i,
            .ping_p99_ms = 1.5,
        };
        dq_trialrow_write(f, &row);
        snprintf(path, sizeof path, "%s/loss/run/logs/trial-%03zu.log", root,
                 i + 1);
        put(path, i == 0 ? LOG_HEAD("lua-lease", "stall-consumer:800")
                               LOG_RESTART LOG_END
                         : LOG_HEAD("naive", "stall-consumer:800")
                               LOG_RESTART LOG_END);
    }
    fclose(f);
    report(root);
    cr_expect(has_line(root, "^\\| lua-lease \\| stall 850, p99 1\\.5 \\*\\*1 "
                       "run twice\\*\\* \\|$"), "lua-lease's side cell");
    cr_expect(has_line(root, "^Why a leased strategy.s work ran twice \\(most: "
                       "lua-lease under stall-consumer:800, 1 task in 1 "
                       "trial\\)"), "the why names the leased strategy");
    cr_expect(has_line(root, "^For naive \\(where the table above shows "
                       "duplicates\\) the work ran twice because the queue "
                       "delivered the task twice"), "naive's are duplicates");
    cr_expect(has_line(root, "^\\*\\*C21: .* Their work ran twice for 1 "
                       "of those 2 tasks \\(in 1 trial\\)"), "C21 leaves out "
                       "the work run twice");
    cleanup(root);
}

/* t1 acked, then after a host crash delivered again: a duplicate. */
#define LOG_REPEAT                                                           \
    "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"                     \
    "D\t1000500\tt1\tc0\t1\nA\t1000600\tt1\tc0\t1\n"                         \
    "F\t1000650\tos-crash\tbegin\tmode=everysec\n"                            \
    "F\t1000660\tos-crash\tend\tmode=everysec\n"                              \
    "D\t1000700\tt2\tc1\t1\nA\t1000800\tt2\tc1\t1\n"                         \
    "D\t1000900\tt1\tc1\t1\nA\t1001000\tt1\tc1\t1\n"

/* C21 counts the work run twice by cause as the side tables do: a lease
 * that ran out (loss) apart from a fault's repeat (durability, where the
 * cell shows a duplicate), each with its experiment, and its interval
 * over the same tasks. */
Test(front, c21_work_twice_by_cause, .timeout = 120)
{
    char root[PATH_MAX], path[PATH_MAX];
    fresh_root(root, sizeof root, "c21");
    FILE *f = make_run(root, "loss", "name = loss\ntitle = Loss\ncomplete "
                       "= yes\nplots = loss\nfaults = stall-consumer:800\n"
                       "delay_ms = 0:100\n");
    dq_trialrow row = {
        .experiment = "loss", .trial = 1, .strategy = "lua-lease",
        .producers = 1, .consumers = 2, .tasks = 2, .delay_max_ms = 100,
        .work_us = 1000, .repeat = 1, .enqueued = 2, .delivered = 2,
        .deliveries = 3, .redis_commands = -1, .redis_cpu_ms = -1,
        .fault = "stall-consumer:800", .consumer_mode = "process",
        .processed_twice = 1, .redis_stall_ms = 850.0, .ping_p99_ms = 1.5,
    };
    dq_trialrow_write(f, &row);
    fclose(f);
    snprintf(path, sizeof path, "%s/loss/run/logs/trial-001.log", root);
    put(path, LOG_HEAD("lua-lease", "stall-consumer:800") LOG_RESTART
                  LOG_END);
    f = make_run(root, "durability", "name = durability\ntitle = D\n"
                 "complete = yes\nplots = loss\nfaults = os-crash:everysec\n"
                 "delay_ms = 0:100\n");
    row.experiment = "durability";
    row.fault = "os-crash:everysec";
    dq_trialrow_write(f, &row);
    fclose(f);
    snprintf(path, sizeof path, "%s/durability/run/logs/trial-001.log", root);
    put(path, LOG_HEAD("lua-lease", "os-crash:everysec") LOG_REPEAT LOG_END);
    report(root);
    cr_expect(has_line(root, "^\\*\\*C21: .* Their work ran twice for 2 "
                       "of those 4 tasks \\(in 2 trials\\)"), "C21's total");
    cr_expect(has_line(root, "^\\*\\*C21: .*  1 in experiment loss "
                       "\\(lua-lease under stall-consumer:800: 1\\): the lease "
                       "ran out"), "C21's lease that ran out");
    cr_expect(has_line(root, "^\\*\\*C21: .*  1 in experiment durability "
                       "\\(lua-lease under os-crash:everysec: 1\\): the queue "
                       "delivered the task again"), "C21 blames a lease for "
                       "a fault's repeat");
    cr_expect(has_line(root, "^\\| C21 \\| .* work ran twice 2 of 4 \\("),
              "C21's interval leaves out the work run twice");
    cr_expect(has_line(root, "^\\*\\*C21: .*under faults \\(experiments "
                       "durability, loss: 2 trials, 4 tasks\\) delivered 1 "
                       "task a second time: 0 redelivered after no ack\\.  "
                       "1 more duplicated by the fault itself "
                       "\\(the loss tables.? duplicates: lua-lease under "
                       "os-crash:everysec: 1\\)"), "C21's sample is not the "
              "sample counted, or its count leaves out the duplicates");
    cleanup(root);
}

/* A kill fault asking 2 kills per trial where only 1 happened (trials.csv
 * kills 1): the card's "where it breaks" says the kills that happened
 * beside what the spec asked, not only the spec's count. */
#define LOG_KILL_LOST                                                        \
    "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"                     \
    "D\t1000500\tt1\tc0\t1\n"                                                \
    "F\t1000600\tkill-consumer\tbegin\tc0:point=during-work,claim=1,id=t1\n" \
    "F\t1000900\tkill-consumer\tend\tc0:replacement=c0.1\n"                  \
    "D\t1000700\tt2\tc1\t1\nA\t1000800\tt2\tc1\t1\n"
Test(front, card_says_the_kills_that_happened, .timeout = 120)
{
    char root[PATH_MAX];
    fresh_root(root, sizeof root, "kills");
    FILE *f = make_run(root, "loss", "name = loss\ntitle = Loss\ncomplete "
                       "= yes\nplots = loss\nfaults = kill-consumer:during-"
                       "work:2\ndelay_ms = 0:100\n");
    for (size_t i = 0; i < 2; i++)
        fault_trial(f, root, "loss", i + 1, "lua", "kill-consumer:during-"
                    "work:2", LOG_HEAD("lua", "kill-consumer:during-work:2")
                                  LOG_KILL_LOST LOG_END);
    fclose(f);
    report(root);
    cr_expect(has_line(root, "^- \\*\\*Where it breaks\\*\\* .*\\(2 kills per "
                       "trial[^)]*\\) asked; 2 kills happened in 2 trials: "
                       "lost \\[2 of 4\\]"), "the card says only the kills "
              "the spec asked for");
    cleanup(root);
}

/* A host crash with AOF everysec that lost t1; with always, none. */
#define LOG_HOST_LOST(mode)                                                  \
    "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"                     \
    "F\t950000\tos-crash\tbegin\tmode=" mode "\n"                             \
    "F\t960000\tos-crash\tend\tmode=" mode "\n"                               \
    "D\t1000700\tt2\tc1\t1\nA\t1000800\tt2\tc1\t1\n"

/* A durability run of lua: a host crash with everysec losing t1, one with
 * always losing nothing, each trial enqueuing enq tasks offered at rate
 * tasks/s (its span of writes: enq / rate seconds). */
static void write_host(const char *root, uint64_t enq, int64_t rate)
{
    char path[PATH_MAX];
    static const char *const mode[] = {"everysec", "always"};
    static const char *const log[] = {
        LOG_HEAD("lua", "os-crash:everysec") LOG_HOST_LOST("everysec")
            LOG_END,
        LOG_HEAD("lua", "os-crash:always") LOG_HOST LOG_END,
    };
    FILE *f = make_run(root, "durability", "name = durability\ntitle = D\n"
                       "complete = yes\nplots = loss\nfaults = os-crash:"
                       "everysec, os-crash:always\ndelay_ms = 0:100\n");
    for (size_t i = 0; i < 2; i++) {
        char fault[32];
        snprintf(fault, sizeof fault, "os-crash:%s", mode[i]);
        dq_trialrow row = {
            .experiment = "durability", .trial = i + 1, .strategy = "lua",
            .producers = 1, .consumers = 2, .tasks = (int64_t)enq,
            .delay_max_ms = 100, .work_us = 1000, .repeat = 1,
            .enqueued = enq, .delivered = enq - (i == 0), .deliveries = 2,
            .redis_commands = -1, .redis_cpu_ms = -1, .fault = fault,
            .consumer_mode = "process", .rate = rate,
        };
        dq_trialrow_write(f, &row);
        snprintf(path, sizeof path, "%s/durability/run/logs/trial-%03zu.log",
                 root, i + 1);
        put(path, log[i]);
    }
    fclose(f);
}

/* C14 compares a host crash's loss with the 2 s an everysec fsync may
 * lag: it holds only where a trial wrote for longer than that, so a
 * crash could have lost more; trials of shorter writes leave the bound
 * untested (partly measured). */
Test(front, c14_bound_tested_only_by_long_trials, .timeout = 120)
{
    char root[PATH_MAX];
    fresh_root(root, sizeof root, "c14");
    write_host(root, 4, 400);                  /* 0.01 s of writes */
    write_loss(root);
    report(root);
    cr_expect(has_line(root, "^\\| C14 \\| partly measured \\|"),
              "C14 holds on trials too short to exceed its bound");
    cr_expect(has_line(root, "^\\*\\*C14: .*no trial wrote for longer than "
                       "0\\.01 s .*less than the 2 s bound"), "C14 does not "
              "say why the bound is untested");
    cleanup(root);
    fresh_root(root, sizeof root, "c14");
    write_host(root, 2000, 400);               /* 5 s of writes */
    write_loss(root);
    report(root);
    cr_expect(has_line(root, "^\\| C14 \\| holds \\|"),
              "C14 does not hold where the trials could exceed the bound");
    cr_expect(!has_line(root, "^\\*\\*C14: .*no trial wrote"),
              "C14 calls a long trial too short");
    cleanup(root);
    fresh_root(root, sizeof root, "c14");
    write_host(root, 2000, 0);                 /* unpaced: no rate */
    write_loss(root);
    report(root);
    cr_expect(has_line(root, "^\\| C14 \\| partly measured \\|"),
              "C14 holds with no offered rate to turn its loss into seconds");
    cr_expect(has_line(root, "^\\*\\*C14: .*no offered rate"),
              "C14 does not say why the bound is not compared");
    cleanup(root);
}

/* Question 3 answers from the lateness figures: a polling strategy (lua,
 * its tasks claimed 0.1 ms after due) that beat a blocking one (list,
 * 50 ms) is said to, not put under "may wait up to its poll interval". */
Test(front, guide_q3_answers_from_the_figures, .timeout = 120)
{
    char root[PATH_MAX], path[PATH_MAX];
    static const char *const ss[] = {"lua", "list"};
    static const char *const logs[] = {
        LOG_HEAD("lua", "none")
        "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"
        "D\t1000100\tt1\tc0\t1\nA\t1000200\tt1\tc0\t1\n"
        "D\t1000100\tt2\tc1\t1\nA\t1000200\tt2\tc1\t1\n" LOG_END,
        LOG_HEAD("list", "none")
        "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"
        "D\t1050000\tt1\tc0\t1\nA\t1050100\tt1\tc0\t1\n"
        "D\t1050000\tt2\tc1\t1\nA\t1050100\tt2\tc1\t1\n" LOG_END,
    };
    fresh_root(root, sizeof root, "q3");
    FILE *f = make_run(root, "lateness", "name = lateness\ntitle = L\n"
                       "complete = yes\nplots = lateness-cdf\n");
    for (size_t i = 0; i < 2; i++) {
        dq_trialrow row = {
            .experiment = "lateness", .trial = i + 1, .strategy = ss[i],
            .options = "", .producers = 1, .consumers = 2, .tasks = 2,
            .delay_max_ms = 100, .repeat = 1, .enqueued = 2, .delivered = 2,
            .deliveries = 2, .redis_commands = -1, .redis_cpu_ms = -1,
            .fault = "none", .consumer_mode = "thread",
        };
        dq_trialrow_write(f, &row);
        snprintf(path, sizeof path, "%s/lateness/run/logs/trial-%03zu.log",
                 root, i + 1);
        put(path, logs[i]);
    }
    fclose(f);
    report(root);
    cr_expect(has_line(root, "^3\\. \\*\\*Must a due task run within "
                       "milliseconds, .*\\?\\*\\*  .*So, in this run: the "
                       "lowest p99 was \\[lua\\]\\(#card-lua\\).s \\(0\\.1"),
              "question 3 gives no answer from the figures");
    cr_expect(has_line(root, "^3\\. .*A polling one.s p99 \\(0\\.1[0-9]* ms\\) "
                       "beat a blocking one.s \\(50"), "question 3 does not "
              "say that a polling strategy beat a blocking one");
    cleanup(root);
}

/* The matrix's note on its p99 says why it is not the claims' p99 (pooled
 * over the repeats against the median of the repeats' own), without
 * calling a difference small it does not measure. */
Test(front, matrix_p99_note_says_why, .timeout = 120)
{
    char root[PATH_MAX];
    fresh_root(root, sizeof root, "p99note");
    write_conc(root, 7, 2000);
    write_loss(root);
    report(root);
    cr_expect(!has_line(root, "differ a little"), "the note calls the "
              "difference small");
    cr_expect(has_line(root, "pooled, so one slow repeat.s tail sets it; the "
                       "claims quote the median of the repeats. own p99s"),
              "the note does not say why the two p99s differ");
    cleanup(root);
}

/* C15 from a failover that lost one of two tasks without WAIT and none
 * with wait=1: WAIT narrowed it, and "a few" is only as few as the lag
 * makes it, a limit the verdict states with its tolerance. */
Test(front, c15_states_its_tolerance, .timeout = 120)
{
    char root[PATH_MAX], path[PATH_MAX];
    static const char *const opts[] = {"wait=0", "wait=1"};
    fresh_root(root, sizeof root, "c15");
    FILE *f = make_run(root, "durability", "name = durability\ntitle = D\n"
                       "complete = yes\nfaults = failover:lag=300\n"
                       "delay_ms = 0:100\n");
    for (size_t i = 0; i < 2; i++) {
        dq_trialrow row = {
            .experiment = "durability", .trial = i + 1, .strategy = "lua",
            .options = opts[i], .producers = 1, .consumers = 2, .tasks = 2,
            .delay_max_ms = 100, .work_us = 1000, .repeat = 1,
            .enqueued = 2, .delivered = 2 - (i == 0), .deliveries = 2,
            .redis_commands = -1, .redis_cpu_ms = -1,
            .fault = "failover:lag=300", .consumer_mode = "process",
        };
        dq_trialrow_write(f, &row);
        snprintf(path, sizeof path, "%s/durability/run/logs/trial-%03zu.log",
                 root, i + 1);
        put(path, i == 0 ? LOG_HEAD("lua", "failover:lag=300") LOG_FAILOVER_LOST
                               LOG_END
                         : LOG_HEAD("lua", "failover:lag=300") LOG_FAILOVER
                               LOG_END);
    }
    fclose(f);
    write_loss(root);
    report(root);
    cr_expect(has_line(root, "^\\| C15 \\| holds within stated limits \\| 2 "
                       "failover trials, 4 tasks \\|"), "C15's verdict");
    cr_expect(has_line(root, "^\\*\\*C15: .*Tolerance: the rule reads \"a "
                       "few\" as \"some\".*here 50\\.0% without WAIT"),
              "C15 states no tolerance");
    cleanup(root);
}

/* The window after the last due time is said as the run set it (grace_ms
 * 2500: "2500 ms", not a rounded "2 s") in the guide and the card of a
 * strategy that delivered little of its stream behind a large backlog. */
Test(front, backlog_window_as_set, .timeout = 120)
{
    char root[PATH_MAX], path[PATH_MAX];
    fresh_root(root, sizeof root, "window");
    FILE *f = make_run(root, "scale", "name = scale\ntitle = Scale\n"
                       "complete = yes\nplots = backlog-lateness\n"
                       "grace_ms = 2500\ndelay_ms = 0:100\n");
    dq_trialrow row = {
        .experiment = "scale", .trial = 1, .strategy = "expiry",
        .producers = 1, .consumers = 2, .tasks = 2, .delay_max_ms = 100,
        .repeat = 1, .enqueued = 2, .delivered = 1, .deliveries = 1,
        .redis_commands = -1, .redis_cpu_ms = -1, .fault = "none",
        .consumer_mode = "thread", .backlog = 50000,
    };
    dq_trialrow_write(f, &row);
    fclose(f);
    snprintf(path, sizeof path, "%s/scale/run/logs/trial-001.log", root);
    put(path, "# dqlab event log v2\nH\tstrategy\texpiry\nH\ttasks\t2\n"
              "E\t900000\tt1\t1000\tp0\nE\t900001\tt2\t1000\tp0\n"
              "D\t1000500\tt1\tc0\t1\nA\t1000600\tt1\tc0\t1\n" LOG_END);
    report(root);
    cr_expect(has_line(root, "^5\\. \\*\\*Do not use\\*\\*: .*\\[expiry\\]"
                       ".*only \\[1 of 2\\]\\(#exp-scale\\) delivered within "
                       "2500 ms with 50000 tasks pending"),
              "the guide rounds the window");
    cr_expect(has_line(root, "^- \\*\\*Where it breaks\\*\\* \\(measured\\): "
                       ".*with 50000 tasks pending, only \\[1 of 2\\]\\(#exp-"
                       "scale\\) delivered within 2500 ms"),
              "the card rounds the window");
    cleanup(root);
}

/* Every link to an anchor has its target in both texts; the contents and
 * the matrix carry the ids the first-screen check looks for; every table
 * of index.html sits in a box that scrolls sideways. */
Test(front, every_link_has_its_target, .timeout = 120)
{
    char root[PATH_MAX], cmd[8 * PATH_MAX];
    fresh_root(root, sizeof root, "links");
    write_conc(root, 7, 2000);
    write_loss(root);
    report(root);
    snprintf(cmd, sizeof cmd, "cd '%s/out' && n=0 && for id in $(grep -o "
             "'](#[^)]*)' REPORT.md | sed 's/^](#//; s/)$//' | sort -u); do "
             "n=$((n+1)); grep -qF \"<div id=\\\"$id\\\">\" REPORT.md || "
             "{ echo \"REPORT.md: no target for #$id\"; exit 1; }; grep -qF "
             "\"id=\\\"$id\\\"\" index.html || { echo \"index.html: no "
             "target for #$id\"; exit 1; }; done; test $n -ge 10", root);
    cr_expect_eq(sh(cmd), 0, "a link without its target (see above)");
    snprintf(cmd, sizeof cmd, "cd '%s/out' && grep -qF '<div id=\"contents\">'"
             " index.html && grep -qF '<div id=\"summary-matrix\" style=\""
             "overflow-x:auto\">' index.html && test \"$(grep -c '^<table>$' "
             "index.html)\" -gt 3 && test \"$(grep -c '^<table>$' index.html)\""
             " = \"$(grep -c 'style=\"overflow-x:auto\">$' index.html)\"", root);
    cr_expect_eq(sh(cmd), 0, "ids or scrolling boxes missing in index.html");
    cleanup(root);
}

/* A witness run's chart on naive's card: copied into figures/, with a
 * caption from witness.csv (task id, attempt, the race window). */
Test(front, witness_chart_on_its_card, .timeout = 120)
{
    char root[PATH_MAX], dir[PATH_MAX + 64], path[PATH_MAX + 128];
    char cmd[4 * PATH_MAX];
    fresh_root(root, sizeof root, "witness");
    write_conc(root, 7, 2000);
    snprintf(dir, sizeof dir, "%s/witness/20261201-120000", root);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && ln -s 20261201-120000 "
             "'%s/witness/latest'", dir, root);
    cr_assert_eq(sh(cmd), 0);
    snprintf(path, sizeof path, "%s/witness.csv", dir);
    put(path, "witness,strategy,task_id,attempts,quantity,value\n"
              "naive-duplicate,naive,t3,8,witnessed,1\n"
              "naive-duplicate,naive,t3,8,second_find_before_first_remove_us,"
              "22\nnaive-duplicate,naive,t3,8,duplicates,2\n");
    snprintf(path, sizeof path, "%s/naive-duplicate.svg", dir);
    put(path, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" "
              "height=\"10\"><text>t3</text></svg>\n");
    report(root);
    cr_expect(has_line(root, "^!\\[naive-duplicate\\]\\(figures/witness-"
                       "naive-duplicate\\.svg\\) $"), "no chart on the card");
    cr_expect(has_line(root, "^\\*Witness chart, task t3 \\(seen in attempt "
                       "8\\): consumer c1 read the head with ZRANGEBYSCORE 22 "
                       "us before c0 removed it"), "the caption");
    snprintf(cmd, sizeof cmd, "cmp '%s/naive-duplicate.svg' '%s/out/figures/"
             "witness-naive-duplicate.svg'", dir, root);
    cr_expect_eq(sh(cmd), 0, "the chart was not copied into figures/");
    cr_expect(has_line(root, "^\\*No witness chart in these results: `bin/"
                       "dqlab witness --only lease-redelivery --results "),
              "lua-lease's card (no chart in that run) says how to draw it");
    cleanup(root);
}

/* Without a witness run, each card that has a witness says how to draw
 * it, and the cards' introduction names the command. */
Test(front, without_witness_the_card_says_how, .timeout = 120)
{
    char root[PATH_MAX];
    fresh_root(root, sizeof root, "nowitness");
    write_conc(root, 7, 2000);
    report(root);
    cr_expect(has_line(root, "^\\*No witness chart in these results: `bin/"
                       "dqlab witness --only naive-duplicate --results /tmp/"
                       "dqlab-front-nowitness-[0-9]+` draws one from a real "
                       "trial \\(two consumers reading the same head before "
                       "either removes it\\)\\.\\*$"), "naive's card");
    cr_expect(has_line(root, "These results hold no witness charts yet: "
                       "`bin/dqlab witness --results "), "the introduction");
    cleanup(root);
}
