/* test_witness.c -- `dqlab witness`: each witness, run for real (its own
 * private redis-server, started by dqlab), leaves its chart, images,
 * capture and event log; the chart names the witnessed task; the event
 * log re-checks with the verdict the witness is about; bad input is one
 * line and exit 2, with nothing written.
 *
 * What is asserted is what the strategies' contracts make certain, never
 * a speed: naive's log holds a duplicate no fault explains (its declared
 * race), lua-lease's a redelivery with attempt 2 claimed no earlier than
 * the lease deadline, expiry's one task lost in the subscriber-outage
 * window with the expired event published to 0 channel subscribers, and
 * lua's new head late by at least what its capped sleep implies (the
 * sleep lasted poll_ms: dq_sleep_us never returns early).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/checker.h"
#include "../strategies/dq.h"
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

/* The value of quantity q in witness.csv text csv for witness name, or
 * fails; its task_id column into id (may be NULL). */
static long long csv_value(const char *csv, const char *name, const char *q,
                           char *id, size_t idlen)
{
    char want_w[64];
    snprintf(want_w, sizeof want_w, "%s,", name);
    for (const char *p = csv, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        char line[512], *f[6];
        nl = strchr(p, '\n');
        int n = 0;
        snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
        if (strncmp(line, want_w, strlen(want_w)) != 0)
            continue;
        for (char *s = line; n < 6; n++) {
            f[n] = s;
            if ((s = strchr(s, ',')) == NULL) {
                n++;
                break;
            }
            *s++ = '\0';
        }
        if (n == 6 && strcmp(f[4], q) == 0) {
            if (id)
                snprintf(id, idlen, "%s", f[2]);
            return atoll(f[5]);
        }
    }
    cr_assert_fail("witness.csv has no row %s,%s", name, q);
    return 0;
}

typedef struct run {
    char results[PATH_MAX];
    char dir[PATH_MAX];     /* results/witness/latest */
    char *csv;
    char id[DQ_ID_MAX];
} run;

/* Runs `dqlab witness --only name` into a fresh results dir and checks
 * the files every witness leaves. */
static void run_witness(run *r, const char *name)
{
    char cmd[PATH_MAX * 2], path[PATH_MAX + 64];
    static const char *const ext[] = {"msc", "svg", "png", "monitor.txt",
                                      "log"};

    snprintf(r->results, sizeof r->results, "/tmp/dqlab-witness-test-%ld-%s",
             (long)getpid(), name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->results);
    sh(cmd);
    snprintf(cmd, sizeof cmd, "'%s' witness --results '%s' --only %s "
             "2>/dev/null", dqlab(), r->results, name);
    cr_assert_eq(sh(cmd), 0, "dqlab witness --only %s: exit status", name);
    snprintf(r->dir, sizeof r->dir, "%s/witness/latest", r->results);
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        struct stat st;
        snprintf(path, sizeof path, "%s/%s.%s", r->dir, name, ext[i]);
        cr_assert_eq(stat(path, &st), 0, "missing %s", path);
        cr_expect_gt(st.st_size, 0, "empty %s", path);
    }
    snprintf(path, sizeof path, "%s/meta.txt", r->dir);
    cr_assert_eq(access(path, R_OK), 0, "missing %s", path);
    snprintf(path, sizeof path, "%s/witness.csv", r->dir);
    r->csv = tl_read_file(path);
    cr_assert_eq(csv_value(r->csv, name, "witnessed", r->id, sizeof r->id), 1);
    cr_assert_neq(r->id[0], '\0', "%s: no task id in witness.csv", name);

    /* The chart's title (its first line, and the first divider) names the
     * task; the raw capture holds commands with it. */
    snprintf(path, sizeof path, "%s/%s.msc", r->dir, name);
    char *msc = tl_read_file(path), want[160];
    snprintf(want, sizeof want, "task %s", r->id);
    cr_expect(strncmp(msc, "# ", 2) == 0 &&
                  strstr(msc, want) != NULL &&
                  strstr(msc, want) < strchr(msc, '\n'),
              "%s.msc: first line does not name %s", name, want);
    cr_expect(strstr(msc, "msc {") != NULL, "%s.msc: no msc block", name);
    free(msc);
    snprintf(path, sizeof path, "%s/%s.monitor.txt", r->dir, name);
    char *mon = tl_read_file(path);
    snprintf(want, sizeof want, "\"%s\"", r->id);
    cr_expect(strstr(mon, want) != NULL || strstr(mon, r->id) != NULL,
              "%s.monitor.txt never mentions %s", name, r->id);
    free(mon);
}

/* Re-checks the witness's log: counts into *c, and `dqlab check` exits
 * 0 (the strategy breaks none of the guarantees it declares). */
static void recheck(const run *r, const char *name, dq_check *c)
{
    char path[PATH_MAX + 64], err[512], cmd[PATH_MAX * 2];

    snprintf(path, sizeof path, "%s/%s.log", r->dir, name);
    cr_assert_eq(dq_check_file(path, c, err, sizeof err), 0, "%s", err);
    cr_assert_null(dq_check_no_verdict(c), "%s: %s", path,
                   dq_check_no_verdict(c));
    snprintf(cmd, sizeof cmd, "'%s' check '%s' >/dev/null", dqlab(), path);
    cr_expect_eq(sh(cmd), 0, "dqlab check %s: exit status", path);
}

static void cleanup(run *r)
{
    char cmd[PATH_MAX + 16];
    free(r->csv);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->results);
    sh(cmd);
}

Test(witness, naive_duplicate, .timeout = 120)
{
    run r = {0};
    dq_check c;
    run_witness(&r, "naive-duplicate");
    recheck(&r, "naive-duplicate", &c);
    cr_expect_geq(c.dup_nofault, 1, "no duplicate in the log");
    cr_expect_eq(c.lost, 0);
    cr_expect_gt(csv_value(r.csv, "naive-duplicate",
                           "second_find_before_first_remove_us", NULL, 0), 0,
                 "the second find must precede the first ZREM");
    cr_expect_geq(csv_value(r.csv, "naive-duplicate", "duplicates", NULL, 0),
                  1);
    cleanup(&r);
}

Test(witness, lease_redelivery, .timeout = 120)
{
    run r = {0};
    dq_check c;
    run_witness(&r, "lease-redelivery");
    recheck(&r, "lease-redelivery", &c);
    cr_expect_eq(c.redelivered, 1);
    cr_expect_eq(c.dup_nofault, 0);
    cr_expect_eq(c.lost, 0);
    cr_expect_eq(c.acked, 1);
    cr_expect_eq(csv_value(r.csv, "lease-redelivery", "reclaim_attempt",
                           NULL, 0), 2);
    cr_expect_geq(csv_value(r.csv, "lease-redelivery",
                            "reclaim_after_lease_us", NULL, 0), 0,
                  "re-claimed before the lease deadline");
    cleanup(&r);
}

Test(witness, expiry_loss, .timeout = 120)
{
    run r = {0};
    dq_check c;
    run_witness(&r, "expiry-loss");
    recheck(&r, "expiry-loss", &c);
    cr_expect_eq(c.enqueued, 1);
    cr_expect_eq(c.delivered, 0);
    cr_expect_eq(c.lost, 1);
    cr_expect_eq(c.lost_nofault, 0, "the outage window must explain it");
    cr_expect_eq(csv_value(r.csv, "expiry-loss",
                           "channel_subscribers_at_event", NULL, 0), 0);
    cr_expect_eq(csv_value(r.csv, "expiry-loss", "payload_left", NULL, 0), 1);
    cr_expect_eq(csv_value(r.csv, "expiry-loss", "expired_keys", NULL, 0), 1);
    cleanup(&r);
}

Test(witness, lua_late_head, .timeout = 120)
{
    run r = {0};
    dq_check c;
    run_witness(&r, "lua-late-head");
    recheck(&r, "lua-late-head", &c);
    cr_expect_eq(c.delivered, 2);
    cr_expect_eq(c.early, 0);
    long long poll = csv_value(r.csv, "lua-late-head", "poll_ms", NULL, 0);
    long long sleep = csv_value(r.csv, "lua-late-head", "sleep_us", NULL, 0);
    long long late = csv_value(r.csv, "lua-late-head", "new_lateness_us",
                               NULL, 0);
    long long bound = csv_value(r.csv, "lua-late-head", "bound_us", NULL, 0);
    /* 1 ms of slack: the capture's clock is the server's gettimeofday, the
     * sleep the client's monotonic clock. */
    cr_expect_geq(sleep, poll * 1000 - 1000, "c0 woke before poll_ms");
    cr_expect_geq(late, bound - 1000, "t2 late %lld us, bound %lld us", late,
                  bound);
    cr_expect_gt(late, 0);
    cleanup(&r);
}

/* Runs `dqlab witness ARGS` expecting exit 2, one stderr line naming
 * `names`, and no results directory. */
static void expect_bad(const char *args, const char *names)
{
    char cmd[PATH_MAX * 2], out[PATH_MAX], res[PATH_MAX];
    snprintf(out, sizeof out, "/tmp/dqlab-witness-bad-%ld.txt", (long)getpid());
    snprintf(res, sizeof res, "/tmp/dqlab-witness-bad-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' witness --results '%s' %s 2>'%s' "
             ">/dev/null", dqlab(), res, args, out);
    cr_expect_eq(sh(cmd), 2, "dqlab witness %s: exit status", args);
    char *text = tl_read_file(out);
    int lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, 1, "dqlab witness %s: %d lines on stderr: %s", args,
                 lines, text);
    cr_expect(strstr(text, names) != NULL, "stderr does not name %s: %s",
              names, text);
    free(text);
    unlink(out);
    cr_expect_neq(access(res, F_OK), 0, "bad input left %s", res);
}

Test(witness_cli, bad_input_exits_2_with_one_line)
{
    expect_bad("--only bogus", "bogus");
    expect_bad("--only naive-duplicate,nope", "nope");
    expect_bad("--only ''", "--only");
    expect_bad("--frobnicate", "--frobnicate");
    expect_bad("--seed x", "--seed");
}

/* Every witness a strategy declares (dq_strategy.witness) is one that
 * `dqlab witness` runs, shown with that strategy in --help, and every
 * witness it runs is declared by a strategy: a typo on either side is a
 * card without its chart. */
Test(witness_cli, declared_witnesses_are_the_commands)
{
    char cmd[PATH_MAX * 2], out[PATH_MAX], want[160];
    size_t declared = 0;
    snprintf(out, sizeof out, "/tmp/dqlab-witness-help-%ld.txt",
             (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' witness --help >'%s' 2>&1", dqlab(),
             out);
    cr_assert_eq(sh(cmd), 0, "dqlab witness --help");
    char *text = tl_read_file(out);
    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];
        if (s->witness == NULL)
            continue;
        declared++;
        snprintf(want, sizeof want, " %s (%s)\n", s->witness, s->name);
        cr_expect(strstr(text, want) != NULL, "%s declares witness %s, "
                  "which dqlab witness --help does not list for it:\n%s",
                  s->name, s->witness, text);
    }
    cr_expect_gt(declared, 0);
    cr_expect(strstr(text, "no strategy declares it") == NULL,
              "a witness no strategy declares:\n%s", text);
    free(text);
    unlink(out);
}
