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
 *
 * Faults (F records): faults.log holds one id of every outcome the
 * checker tells apart (redelivered, duplicated after / without a fault,
 * lost claimed / after a fault / without one, pending at the end, early
 * in a skew window); the verdict_*.log files check how each outcome feeds
 * the exit code for real strategies' declared guarantees; lost_kill_due.log
 * and lost_rules.log which fault windows can explain a never-delivered id;
 * oscrash_dropped_claim.log (a real log), restart_rdb_dropped_claim.log,
 * failover_lag_dropped_claim.log and rollback_reach.log which repeats a
 * crash that rolls data back explains.
 *
 * Acks and the end of a log: lease_stale_ack.log (acks matched to the
 * attempt they acknowledge, refused stale acks), verdict_no_end.log,
 * verdict_torn.log, verdict_headers_only.log, verdict_interrupted.log and
 * v1_clean.log (no verdict without "Z clean").  The log_run suite runs
 * dqlab itself (real Redis from tests/run.sh, real signals, a real full
 * disk) and checks what its logs say.
 */
#define _GNU_SOURCE /* unshare */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "../harness/checker.h"
#include "../harness/eventlog.h"
#include "../strategies/dq.h"

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
    check_bad("bad_after_end.log", 4, "record after the end of the log");
    check_bad("bad_z.log", 3, "Z record must say clean, interrupted or failed");
    check_bad("bad_v1_ack_attempt.log", 4, "A record needs 4 fields");
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
    cr_assert_eq(dq_log_deliver(l, 1003500, "a", "c1", 2), 0);
    cr_assert_eq(dq_log_ack_refused(l, 1004000, "a", "c0", 1, "ENOTFOUND"),
                 0);
    cr_assert_eq(dq_log_ack(l, 1004500, "a", "c1", 2), 0);
    cr_assert_eq(dq_log_fault(l, 1005000, "kill", "begin", ""), 0);
    cr_assert_eq(dq_log_enqueue(l, 1, "bad\tid", 1, "p0"), -1);
    cr_assert_eq(dq_log_deliver(l, 1, "a", "c\n0", 1), -1);
    cr_assert_eq(dq_log_ack_refused(l, 1, "a", "c0", 1, ""), -1);
    cr_assert_eq(dq_log_end(l, 1006000, "done"), -1);
    cr_assert_eq(dq_log_end(l, 1006000, "clean"), 0);
    /* Nothing may follow the end record. */
    cr_assert_eq(dq_log_deliver(l, 1007000, "a", "c0", 1), -1);
    cr_assert_eq(errno, EINVAL);
    cr_assert_eq(dq_log_end(l, 1007000, "clean"), -1);
    dq_eventlog_close(l);
    cr_assert_null(dq_eventlog_create(path, err, sizeof err));
    cr_assert(strstr(err, "refusing to overwrite") != NULL, "%s", err);

    cr_assert_eq(dq_check_file(path, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.enqueued, 1);
    cr_assert_eq(c.delivered, 1);
    cr_assert_eq(c.acked, 1);
    cr_assert_eq(c.ack_refused, 1);
    cr_assert_eq(c.redelivered, 1);
    cr_assert_eq(c.log_version, 2);
    cr_assert_eq(c.end, DQ_CHECK_END_CLEAN);
    cr_assert_null(dq_check_no_verdict(&c));
    cr_assert_eq(c.last_us, 1005000, "the Z time is not a record time");
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
    fputs("# dqlab event log v2\n", f);
    for (long i = 0; i < n; i++) {
        long due = 1000000 + i;
        long t = due * 1000 + 1000 + (i % 50) * 1000; /* 1..50 ms late */
        int before = (i % 7 == 0);

        if (!before)
            fprintf(f, "E\t%ld\tt%ld\t%ld\tp0\n", due * 1000 - 5000, i, due);
        if (i % 1000 != 999) {
            fprintf(f, "D\t%ld\tt%ld\tc%ld\t1\n", t, i, i % 8);
            fprintf(f, "A\t%ld\tt%ld\tc%ld\t1\n", t + 10, i, i % 8);
            if (i % 10 == 0)
                fprintf(f, "D\t%ld\tt%ld\tc1\t2\n", t + 2000, i);
        }
        if (before)
            fprintf(f, "E\t%ld\tt%ld\t%ld\tp0\n", due * 1000 - 5000, i, due);
    }
    fputs("Z\t9999999999\tclean\n", f);
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
    cr_assert_eq(c.end, DQ_CHECK_END_CLEAN);
    EQ_MS(c.lateness.max_ms, 50.0);
    /* Generous (ASan, slow CI); about 1 s on a laptop without sanitizers. */
    cr_assert(secs < 20.0, "checking 1M tasks took %.1f s", secs);
    cr_log_info("checked 1M tasks in %.2f s", secs);
}

/* ---- Faults: lost, duplicated, redelivered, pending ---------------------- */

static const dq_fault_stat *fault_stat(const dq_check *c, const char *name)
{
    for (size_t i = 0; i < c->nfaults; i++)
        if (strcmp(c->faults[i].name, name) == 0)
            return &c->faults[i];
    cr_assert_fail("no fault '%s' in the check", name);
    return NULL;
}

Test(checker_faults, every_outcome)
{
    dq_check c;
    const dq_fault_stat *k, *r, *s;

    check_ok("faults.log", &c);
    cr_assert_eq(c.enqueued, 13);
    cr_assert_eq(c.deliveries, 16);
    cr_assert_eq(c.delivered, 10);
    cr_assert_eq(c.acked, 9);
    cr_assert_eq(c.duplicates, 6);
    cr_assert_eq(c.redelivered, 3, "redelivered = %" PRIu64, c.redelivered);
    cr_assert_eq(c.dup_fault, 1, "dup_fault = %" PRIu64, c.dup_fault);
    cr_assert_eq(c.dup_nofault, 2, "dup_nofault = %" PRIu64, c.dup_nofault);
    cr_assert_eq(c.lost, 3, "lost = %" PRIu64, c.lost);
    cr_assert_eq(c.lost_claimed, 1);
    cr_assert_eq(c.lost_nofault, 1);
    cr_assert_eq(c.pending_end, 2, "pending_end = %" PRIu64, c.pending_end);
    cr_assert_eq(c.early, 2);
    cr_assert_eq(c.early_fault, 1);
    cr_assert_eq(c.unacked, 2);
    cr_assert_eq(c.unknown, 0);
    cr_assert_eq(c.fault_windows, 4);
    cr_assert_eq(c.end_us, 10000000);
    cr_assert_eq(c.lease_ms, 1000);
    cr_assert_str_eq(c.fault_spec, "mixed");
    cr_assert_eq(c.nfaults, 3);
    k = fault_stat(&c, "kill-consumer");
    r = fault_stat(&c, "restart-redis");
    s = fault_stat(&c, "clock-skew");
    cr_assert_eq(k->windows, 2);
    cr_assert_eq(k->window_us, 199500);
    cr_assert_eq(k->lost, 1);
    cr_assert_eq(k->redelivered, 1);
    cr_assert_eq(k->dup_fault, 0);
    cr_assert_eq(r->windows, 1);
    cr_assert_eq(r->window_us, 500000);
    cr_assert_eq(r->lost, 1);
    cr_assert_eq(r->redelivered, 1);
    cr_assert_eq(r->dup_fault, 1);
    cr_assert_eq(s->early, 1);
    cr_assert_eq(s->lost + s->redelivered + s->dup_fault, 0);
}

/* An ack belongs to the delivery of its attempt: c0's accepted ack of
 * attempt 3 does not make c1's attempt 2 (after c0's attempt 1 ran out of
 * lease) a duplicate; R records acknowledge nothing. */
Test(checker_acks, ack_matched_to_its_attempt)
{
    dq_check c;

    check_ok("lease_stale_ack.log", &c);
    cr_assert_eq(c.deliveries, 5);
    cr_assert_eq(c.duplicates, 3);
    cr_assert_eq(c.redelivered, 3, "redelivered = %" PRIu64, c.redelivered);
    cr_assert_eq(c.dup_nofault, 0, "dup_nofault = %" PRIu64, c.dup_nofault);
    cr_assert_eq(c.dup_fault, 0);
    cr_assert_eq(c.acked, 2);
    cr_assert_eq(c.ack_refused, 3);
    cr_assert_eq(c.ack_failed, 0);
    cr_assert_eq(c.unacked, 0);
    cr_assert_eq(c.end, DQ_CHECK_END_CLEAN);
    cr_assert_null(dq_check_no_verdict(&c));
}

/* A v1 log is still read (A without an attempt, matched by consumer), but
 * never says how it ended: counts, no verdict.  A torn last line is not
 * read and leaves the log incomplete. */
Test(checker_acks, v1_and_torn_logs_read_without_verdict)
{
    dq_check c;

    check_ok("v1_clean.log", &c);
    cr_assert_eq(c.log_version, 1);
    cr_assert_eq(c.enqueued, 3);
    cr_assert_eq(c.acked, 3);
    cr_assert_eq(c.end, DQ_CHECK_END_NONE);
    cr_assert_not_null(dq_check_no_verdict(&c));
    check_ok("verdict_torn.log", &c);
    cr_assert(c.torn);
    cr_assert_eq(c.acked, 1, "the lines before the torn one are read");
    cr_assert_not_null(dq_check_no_verdict(&c));
}

/* A delivery after an ack of the same id is a duplicate, even with an
 * attempt > 1 (never a redelivery). */
/* An enqueue retried across a failover, its first copy moved on before
 * the retry landed: the E record inside the window explains the second
 * delivery (checker.h dup_fault), so the verdict is ok. */
Test(checker_faults, retried_enqueue_inside_a_failover_is_explained)
{
    dq_check c;
    const char *why[8];

    check_ok("failover_retried_enqueue.log", &c);
    cr_assert_eq(c.duplicates, 1);
    cr_expect_eq(c.dup_fault, 1, "dup_fault = %" PRIu64, c.dup_fault);
    cr_expect_eq(c.dup_nofault, 0, "dup_nofault = %" PRIu64, c.dup_nofault);
    cr_expect_eq(dq_check_violations(&c, dq_strategy_find("streams")->flags,
                                     false, why, 8), 0, "%s", why[0]);
}

Test(checker_faults, delivery_after_ack_is_duplicate)
{
    dq_check c;

    check_ok("verdict_dup_after_ack.log", &c);
    cr_assert_eq(c.duplicates, 1);
    cr_assert_eq(c.dup_nofault, 1);
    cr_assert_eq(c.redelivered, 0);
}

/* lua-lease: killed after the claim, attempt 2 after the lease. */
Test(checker_faults, redelivery_after_kill_is_not_duplicate)
{
    dq_check c;

    check_ok("verdict_kill_lease_ok.log", &c);
    cr_assert_eq(c.duplicates, 1);
    cr_assert_eq(c.redelivered, 1);
    cr_assert_eq(c.dup_nofault, 0);
    cr_assert_eq(c.dup_fault, 0);
    cr_assert_eq(c.lost, 0);
    cr_assert_eq(fault_stat(&c, "kill-consumer")->redelivered, 1);
    /* trial.c's arg form names the consumer: the window is c0's. */
    cr_assert_str_eq(fault_stat(&c, "kill-consumer")->arg,
                     "consumer=c0,point=during-work,claim=1,id=t1");
    /* Killed before the D record: only attempt 2 is in the log. */
    check_ok("verdict_kill_after_claim_lease.log", &c);
    cr_assert_eq(c.duplicates, 0);
    cr_assert_eq(c.redelivered_hidden, 1);
    cr_assert_eq(c.lost, 0);
    cr_assert_str_eq(c.fault_spec, "kill-consumer:after-claim:1");
}

/* Overlapping windows of one kind: an F end closes its own consumer's. */
Test(checker_faults, overlapping_windows_pair_by_consumer)
{
    dq_check c;

    check_ok("overlap_windows.log", &c);
    cr_assert_eq(c.early, 2);
    cr_assert_eq(c.early_fault, 2);
    cr_assert_eq(fault_stat(&c, "clock-skew")->early, 2);
    cr_assert_eq(fault_stat(&c, "clock-skew")->window_us, 2100000);
}

Test(checker_faults, lost_during_a_fault)
{
    dq_check c;

    /* Claimed by a consumer killed before its ack: lost (claimed). */
    check_ok("verdict_kill_lua_lost.log", &c);
    cr_assert_eq(c.lost, 1);
    cr_assert_eq(c.lost_claimed, 1);
    cr_assert_eq(c.lost_nofault, 0);
    cr_assert_eq(c.delivered, 2);
    cr_assert_eq(fault_stat(&c, "kill-consumer")->lost, 1);
    /* Due while no subscriber listened: lost, attributed to the outage. */
    check_ok("verdict_outage_expiry.log", &c);
    cr_assert_eq(c.lost, 2);
    cr_assert_eq(c.lost_claimed, 0);
    cr_assert_eq(c.lost_nofault, 0);
    cr_assert_eq(fault_stat(&c, "subscriber-outage")->lost, 2);
    cr_assert_eq(fault_stat(&c, "subscriber-outage")->window_us, 2000000);
}

/* A fault explains a never-delivered id only when it can have lost it
 * (checker.h): a kill-consumer window explains an id due before it ended
 * (+ DQ_CHECK_LOSS_SLACK_MS), not one due long after it. */
Test(checker_faults, kill_explains_only_tasks_due_by_its_end)
{
    dq_check c;

    check_ok("lost_kill_due.log", &c);
    cr_assert_eq(c.enqueued, 3);
    cr_assert_eq(c.delivered, 1);
    cr_assert_eq(c.lost, 2, "lost = %" PRIu64, c.lost);
    cr_assert_eq(c.lost_claimed, 0);
    cr_assert_eq(c.lost_nofault, 1, "lost_nofault = %" PRIu64,
                 c.lost_nofault);
    cr_assert_eq(c.pending_end, 0);
    cr_assert_eq(fault_stat(&c, "kill-consumer")->lost, 1);
}

Test(checker_faults, loss_rule_per_fault)
{
    dq_check c;

    check_ok("lost_rules.log", &c);
    cr_assert_eq(c.enqueued, 6);
    cr_assert_eq(c.lost, 5, "lost = %" PRIu64, c.lost);
    cr_assert_eq(c.lost_nofault, 3, "lost_nofault = %" PRIu64,
                 c.lost_nofault);
    cr_assert_eq(fault_stat(&c, "restart-redis")->lost, 1);
    cr_assert_eq(fault_stat(&c, "subscriber-outage")->lost, 1);
    cr_assert_eq(fault_stat(&c, "clock-skew")->lost, 0);
    cr_assert_eq(fault_stat(&c, "gremlin")->lost, 0);
}

Test(checker_faults, pending_at_end_is_not_lost)
{
    dq_check c;

    check_ok("verdict_pending_end.log", &c);
    cr_assert_eq(c.pending_end, 1);
    cr_assert_eq(c.lost, 0);
    cr_assert_eq(c.end_us, 2000000);
    /* Without H end_us the last record is the end: mixed.log's t3 (due
     * 3 s, last record 4.9 s) is lost. */
    check_ok("mixed.log", &c);
    cr_assert_eq(c.end_us, 4900000);
    cr_assert_eq(c.pending_end, 0);
    cr_assert_eq(c.lost_nofault, 1);
    /* mixed.log's pause window ends before anything: its duplicates are
     * not explained by it. */
    cr_assert_eq(c.dup_nofault, 2);
}

Test(checker_faults, malformed_fault_records)
{
    check_bad("bad_f_end.log", 5, "F end of 'pause-redis' with no open "
                                  "begin");
    check_bad("bad_f_phase.log", 2, "phase must be begin or end");
}

/* dq_check_violations on counts, without a log. */
Test(checker_faults, violations_follow_declared_flags)
{
    dq_check c;
    const char *v[8];

    memset(&c, 0, sizeof c);
    c.redelivered = 5;
    c.duplicates = 5;
    c.nfaults = 1;
    snprintf(c.faults[0].name, sizeof c.faults[0].name, "kill-consumer");
    c.faults[0].redelivered = 5;
    /* Redelivered is at-least-once behaviour... */
    cr_assert_eq(dq_check_violations(&c, DQ_G_AT_LEAST_ONCE |
                                     DQ_G_NO_DUP_CONCURRENT, false, v, 8), 0);
    /* ...and breaks at-most-once. */
    cr_assert_eq(dq_check_violations(&c, DQ_G_AT_MOST_ONCE, false, v, 8), 1);
    cr_assert(strncmp(v[0], "redelivered:", 12) == 0, "%s", v[0]);
    /* Lost under kill-consumer only matters when survival is declared. */
    memset(&c, 0, sizeof c);
    c.lost = c.lost_claimed = 3;
    c.nfaults = 1;
    snprintf(c.faults[0].name, sizeof c.faults[0].name, "kill-consumer");
    c.faults[0].lost = 3;
    cr_assert_eq(dq_check_violations(&c, DQ_G_AT_MOST_ONCE, false, v, 8), 0);
    cr_assert_eq(dq_check_violations(&c, DQ_G_SURVIVES_CONSUMER_CRASH, false,
                                     v, 8), 1);
    cr_assert_eq(dq_check_violations(&c, DQ_G_SURVIVES_CONSUMER_CRASH, true,
                                     v, 8), 0, "interrupted: not judged");
    /* Lost under restart-redis is allowed, except with AOF always for a
     * strategy that declares surviving crashes and process exits. */
    snprintf(c.faults[0].name, sizeof c.faults[0].name, "restart-redis");
    snprintf(c.faults[0].arg, sizeof c.faults[0].arg, "mode=everysec");
    cr_assert_eq(dq_check_violations(&c, DQ_G_SURVIVES_CONSUMER_CRASH |
                                     DQ_G_SURVIVES_PROCESS_EXIT, false, v, 8),
                 0);
    snprintf(c.faults[0].arg, sizeof c.faults[0].arg, "mode=always");
    cr_assert_eq(dq_check_violations(&c, DQ_G_SURVIVES_CONSUMER_CRASH |
                                     DQ_G_SURVIVES_PROCESS_EXIT, false, v, 8),
                 1);
    cr_assert_eq(dq_check_violations(&c, DQ_G_SURVIVES_PROCESS_EXIT, false,
                                     v, 8), 0);
    /* subscriber-outage: allowed unless survives-process-exit (expiry
     * lacks it, list declares it). */
    snprintf(c.faults[0].name, sizeof c.faults[0].name, "subscriber-outage");
    cr_assert_eq(dq_check_violations(&c, DQ_G_AT_MOST_ONCE, false, v, 8), 0);
    cr_assert_eq(dq_check_violations(&c, DQ_G_SURVIVES_PROCESS_EXIT, false,
                                     v, 8), 1);
    /* A duplicate without a fault breaks no-dup-concurrent only. */
    memset(&c, 0, sizeof c);
    c.duplicates = c.dup_nofault = 1;
    cr_assert_eq(dq_check_violations(&c, DQ_G_DUPLICATES, false, v, 8), 0);
    cr_assert_eq(dq_check_violations(&c, DQ_G_NO_DUP_CONCURRENT, false, v, 8),
                 1);
    /* Early inside a skew window is explained; outside it is not. */
    memset(&c, 0, sizeof c);
    c.early = 2;
    c.early_fault = 1;
    cr_assert_eq(dq_check_violations(&c, 0, false, v, 8), 1);
    c.early_fault = 2;
    cr_assert_eq(dq_check_violations(&c, 0, false, v, 8), 0);
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
    /* lua-lease: redeliveries after a lease ran out, stale acks refused. */
    expect_check("lease_stale_ack.log", 0, "verdict: ok\n");
    expect_check("lease_stale_ack.log", 0, "3 refused as stale");
}

/* Only a log that ends with "Z clean" carries a verdict: exit 3, never 0
 * or 1, for one that was interrupted, cut (at a line boundary or inside a
 * line), left with its headers only, or written in v1 (which never
 * recorded its end). */
Test(check_verdict, no_clean_end_no_verdict_exit_3)
{
    expect_check("verdict_no_end.log", 3, "verdict: no verdict: log "
                                          "incomplete: no end record");
    expect_check("verdict_headers_only.log", 3, "verdict: no verdict: log "
                                                "incomplete");
    expect_check("verdict_torn.log", 3, "verdict: no verdict: log "
                                        "incomplete: its last line is cut");
    expect_check("verdict_interrupted.log", 3, "verdict: no verdict: trial "
                                               "interrupted");
    expect_check("v1_clean.log", 3, "verdict: no verdict: log incomplete: "
                                    "a v1 event log");
    /* The counts are still printed. */
    expect_check("verdict_no_end.log", 3, "duplicates  0 redelivered");
    /* With nothing delivered there is no lateness to print as if measured. */
    expect_check("verdict_headers_only.log", 3, "lateness ms none: no task "
                                                "was delivered");
    expect_check("verdict_no_end.log", 3, "(v2, no end record)");
}

/* A trial that failed says so: its log ends with H failed and Z failed,
 * and the check gives no verdict naming why (not "writer was killed"). */
Test(check_verdict, failed_trial_no_verdict_says_why)
{
    expect_check("verdict_failed.log", 3, "verdict: no verdict: the trial "
                 "failed: mover-stall: Redis refused CLIENT KILL ID 24: "
                 "NOPERM\n");
    expect_check("verdict_failed.log", 3, "(v2, ended failed)");
    expect_check("verdict_failed.log", 3, "enqueued    2\n");
}

/* H pending_at_end: the lost tasks still queued are named as such; the
 * verdict stays a violation. */
Test(check_verdict, lost_tasks_still_queued_are_named)
{
    char err[256];
    dq_check c;
    char path[512];

    log_path("verdict_lost_queued.log", path, sizeof path);
    cr_assert_eq(dq_check_file(path, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.lost, 2);
    cr_assert_eq(c.pending_end, 1);
    cr_assert_eq(c.queued_at_end, 3);
    cr_assert_eq(c.lost_queued, 2);
    expect_check("verdict_lost_queued.log", 1, "2 of the lost tasks were "
                 "still queued in Redis when the trial ended (late beyond "
                 "the deadline, not gone)\n");
    expect_check("verdict_lost_queued.log", 1, "verdict: VIOLATION: lost:");
    /* Without the header nothing is said. */
    log_path("verdict_lost.log", path, sizeof path);
    cr_assert_eq(dq_check_file(path, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.queued_at_end, -1);
    cr_assert_eq(c.lost_queued, 0);
}

/* A task a killed consumer claimed (no D record: after-claim) is pending,
 * not lost, while its lease still holds at the end. */
Test(check_verdict, task_held_by_a_killed_consumer_is_pending)
{
    expect_check("verdict_kill_after_claim_held.log", 0, "verdict: ok\n");
    expect_check("verdict_kill_after_claim_held.log", 0, "pending end 1");
}

/* Faults: the exit code follows what each strategy declares. */
Test(check_verdict, faults_exit_codes)
{
    /* lua-lease killed after a claim: redelivered with attempt 2, ok. */
    expect_check("verdict_kill_lease_ok.log", 0, "verdict: ok\n");
    expect_check("verdict_kill_lease_ok.log", 0, "1 redelivered (a lease "
                                                 "ran out, or after a fault)");
    /* lua-lease declares survives-consumer-crash: a lost task breaks it. */
    expect_check("verdict_kill_lease_lost.log", 1, "verdict: VIOLATION: "
                 "lost under kill-consumer");
    /* lua (at-most-once) loses the killed consumer's task: documented. */
    expect_check("verdict_kill_lua_lost.log", 0, "verdict: ok\n");
    expect_check("verdict_kill_lua_lost.log", 0, "1 claimed by a killed "
                                                 "consumer");
    expect_check("verdict_kill_lua_redelivered.log", 1,
                 "verdict: VIOLATION: redelivered:");
    /* A delivery after an ack: duplicate, lua-lease declares none. */
    expect_check("verdict_dup_after_ack.log", 1, "verdict: VIOLATION: "
                 "duplicates:");
    expect_check("verdict_pending_end.log", 0, "pending end 1");
    expect_check("verdict_outage_expiry.log", 0, "verdict: ok\n");
    expect_check("verdict_pause_lost.log", 1, "verdict: VIOLATION: lost "
                 "under a fault the strategy declares it survives");
    expect_check("verdict_kill_after_claim_lease.log", 0, "verdict: ok\n");
    expect_check("verdict_skew_early.log", 0, "verdict: ok\n");
    expect_check("verdict_restart_dup.log", 0, "1 duplicated after a fault");
    /* lua loses a task due 1.95 s after the only (kill) window ended: no
     * fault explains it -> lost violation, not hidden by the kill. */
    expect_check("lost_kill_due.log", 1, "verdict: VIOLATION: lost:");
    expect_check("lost_kill_due.log", 1, "1 no fault explains");
}

/* A crash that rolls the server's data back (os-crash, restart-redis with
 * rdb, a failover to a lagging replica) explains the repeat of a task
 * delivered in its window, whose claim it dropped, also when the repeat
 * comes after the window's end.  oscrash_dropped_claim.log is a real log:
 * its t26 came back 36 ms after the end. */
Test(checker_faults, claim_a_crash_dropped_comes_back_after_its_window)
{
    static const struct {
        const char *log, *fault;
    } cases[] = {
        {"oscrash_dropped_claim.log", "os-crash"},
        {"restart_rdb_dropped_claim.log", "restart-redis"},
        {"failover_lag_dropped_claim.log", "failover"},
    };
    dq_check c;
    const char *why[8];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_ok(cases[i].log, &c);
        cr_assert_eq(c.duplicates, 1, "%s", cases[i].log);
        cr_expect_eq(c.dup_nofault, 0, "%s: dup_nofault = %" PRIu64,
                     cases[i].log, c.dup_nofault);
        cr_expect_eq(c.dup_fault, 1, "%s: dup_fault = %" PRIu64,
                     cases[i].log, c.dup_fault);
        cr_expect_eq(fault_stat(&c, cases[i].fault)->dup_fault, 1, "%s",
                     cases[i].log);
        cr_expect_eq(dq_check_violations(&c, dq_strategy_find("lua")->flags,
                                         false, why, 8), 0, "%s: %s",
                     cases[i].log, why[0]);
    }
    expect_check("oscrash_dropped_claim.log", 0, "verdict: ok\n");
    expect_check("oscrash_dropped_claim.log", 0,
                 "1 duplicated after a fault, 0 without a fault");
}

/* ... but not a duplicate whose deliveries both lie outside the crash's
 * reach: both before the crash (even within its 2 s of everysec), or both
 * long after the restart. */
Test(checker_faults, duplicate_outside_a_crashs_reach_is_not_its)
{
    dq_check c;

    check_ok("rollback_reach.log", &c);
    cr_assert_eq(c.duplicates, 5);
    cr_expect_eq(c.dup_fault, 2, "dup_fault = %" PRIu64, c.dup_fault);
    cr_expect_eq(c.dup_nofault, 3, "dup_nofault = %" PRIu64, c.dup_nofault);
    cr_expect_eq(fault_stat(&c, "os-crash")->dup_fault, 2);
    expect_check("rollback_reach.log", 1, "verdict: VIOLATION: duplicates:");
}

Test(check_verdict, no_known_strategy_is_not_judged)
{
    expect_check("verdict_no_strategy.log", 3,
                 "verdict: no verdict: the log names no strategy");
    /* clean.log and mixed.log name "hand-written"; mixed has early,
     * unknown, duplicates and lost, and still gets no verdict. */
    expect_check("clean.log", 3, "verdict: no verdict: strategy "
                                 "'hand-written'");
    expect_check("mixed.log", 3, "verdict: no verdict");
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
                           sizeof out, err, sizeof err), 3, "%s%s", out, err);
    cr_assert(strstr(out, "\"verdict\": null") != NULL, "%s", out);
    cr_assert_eq(run_check("verdict_no_end.log", "--json", out, sizeof out,
                           err, sizeof err), 3, "%s%s", out, err);
    cr_assert(strstr(out, "\"verdict\": null") != NULL, "%s", out);
    cr_assert(strstr(out, "\"log_end\": null") != NULL, "%s", out);
    cr_assert(strstr(out, "\"no_verdict\": \"log incomplete") != NULL, "%s",
              out);
    /* The fault fields. */
    cr_assert_eq(run_check("verdict_kill_lease_ok.log", "--json", out,
                           sizeof out, err, sizeof err), 0, "%s%s", out, err);
    cr_assert(strstr(out, "\"redelivered\": 1") != NULL, "%s", out);
    cr_assert(strstr(out, "\"dup_nofault\": 0") != NULL, "%s", out);
    cr_assert(strstr(out, "\"fault\": \"kill-consumer:after-claim:1\"") !=
              NULL, "%s", out);
    cr_assert(strstr(out, "\"name\": \"kill-consumer\"") != NULL, "%s", out);
    cr_assert(strstr(out, "\"pending_end\": 0") != NULL, "%s", out);
    cr_assert(strstr(out, "\"log_end\": \"clean\"") != NULL, "%s", out);
    cr_assert(strstr(out, "\"no_verdict\": null") != NULL, "%s", out);
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

/* A kill whose end says replacement=none (the heap's queue died with its
 * process) explains every task enqueued before it; a duplicate whose second
 * delivery falls inside an open clock-skew window is a fault's duplicate
 * even when neither delivery was the skewed consumer's. */
Test(checker_faults, dead_queue_and_open_skew_window)
{
    dq_check c;

    check_ok("heap_kill_skew_dup.log", &c);
    cr_assert_eq(c.enqueued, 3);
    cr_assert_eq(c.lost, 1, "lost = %" PRIu64, c.lost);
    cr_assert_eq(c.lost_nofault, 0, "lost_nofault = %" PRIu64,
                 c.lost_nofault);
    cr_assert_eq(c.dup_fault, 1, "dup_fault = %" PRIu64, c.dup_fault);
    cr_assert_eq(c.dup_nofault, 0, "dup_nofault = %" PRIu64, c.dup_nofault);
}

/* ---- log_run: what dqlab's own logs say -----------------------------------
 * These run bin/dqlab (real Redis: the tests/run.sh server when
 * DQ_TEST_REDIS_PORT is set, else dqlab's private one; real signals; a real
 * full disk) and check its event logs with the checker. */

/* A new temporary directory into buf. */
static void temp_dir(char *buf, size_t len, const char *tag)
{
    snprintf(buf, len, "/tmp/dqlab-test-%s-XXXXXX", tag);
    cr_assert_not_null(mkdtemp(buf), "mkdtemp: %s", strerror(errno));
}

static void rm_rf(const char *dir)
{
    char cmd[600];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Starts dqlab with args (NULL-terminated, without argv[0]), its stdout
 * and stderr into the files out and err.  Returns its pid. */
static pid_t spawn_dqlab(const char *const *args, const char *out,
                         const char *err)
{
    char bin[600];
    const char *argv[48];
    size_t n = 0;
    pid_t pid;

    dqlab_path(bin, sizeof bin);
    argv[n++] = bin;
    while (*args != NULL && n < 47)
        argv[n++] = *args++;
    argv[n] = NULL;
    pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0)
            _exit(126);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Waits for pid; its exit status, 128 + signal when killed. */
static int wait_exit(pid_t pid)
{
    int st;

    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The file at path into buf (NUL-terminated, truncated). */
static void read_text(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY);

    buf[0] = '\0';
    if (fd >= 0)
        slurp(fd, buf, len);
}

/* Waits (up to 20 s) until the file at path holds `what`. */
static void wait_for_text(const char *path, const char *what)
{
    static char buf[65536];

    for (int i = 0; i < 2000; i++) {
        read_text(path, buf, sizeof buf);
        if (strstr(buf, what) != NULL)
            return;
        usleep(10000);
    }
    cr_assert_fail("%s never held '%s'", path, what);
}

/* "--redis URL" for the tests/run.sh server, or nothing (dqlab starts
 * its own): appends to args at *n. */
static void add_redis(const char **args, size_t *n, char *url, size_t len)
{
    const char *port = getenv("DQ_TEST_REDIS_PORT");

    if (port == NULL || *port == '\0')
        return;
    snprintf(url, len, "redis://127.0.0.1:%s", port);
    args[(*n)++] = "--redis";
    args[(*n)++] = url;
}

/* The defect's own command: work (1 s) far longer than the lease (200
 * ms), so every task comes back to another consumer while its first
 * holder still works, and that holder's ack is refused.  The run must say
 * ok, the log must show the refused stale acks (R) and the redeliveries,
 * no duplicate, and every task acked: the trial waited for the acks
 * instead of stopping at the first delivery of each task. */
Test(log_run, lease_redelivery_and_stale_ack, .timeout = 120)
{
    char dir[128], log[256], out[256], err[256], url[64], queue[64];
    char text[65536], e[512];
    const char *args[40];
    size_t n = 0;
    dq_check c;
    int rc;

    temp_dir(dir, sizeof dir, "lease");
    snprintf(log, sizeof log, "%s/run/events.log", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(queue, sizeof queue, "test-stale-ack-%d", (int)getpid());
    const char *fixed[] = {"run", "--strategy", "lua-lease", "--opt",
                           "lease_ms=200", "--work-us", "1000000", "--tasks",
                           "5", "--consumers", "3", "--delay-ms", "0:3000",
                           "--grace-ms", "3000", "--quiet", "--queue", queue,
                           "--fresh", "--out", NULL};
    for (size_t i = 0; fixed[i] != NULL; i++)
        args[n++] = fixed[i];
    char outdir[200];
    snprintf(outdir, sizeof outdir, "%s/run", dir);
    args[n++] = outdir;
    add_redis(args, &n, url, sizeof url);
    args[n] = NULL;

    rc = wait_exit(spawn_dqlab(args, out, err));
    read_text(out, text, sizeof text);
    cr_assert_eq(rc, 0, "dqlab run exit %d:\n%s", rc, text);
    cr_assert(strstr(text, "verdict     ok") != NULL, "%s", text);
    read_text(log, text, sizeof text);
    cr_assert(strstr(text, "\tENOTFOUND\n") != NULL,
              "no refused stale ack (R ... ENOTFOUND) in the log:\n%s", text);
    cr_assert_eq(dq_check_file(log, &c, e, sizeof e), 0, "%s", e);
    cr_assert_eq(c.end, DQ_CHECK_END_CLEAN);
    cr_assert_geq(c.redelivered, 1);
    cr_assert_geq(c.ack_refused, 1);
    cr_assert_eq(c.dup_nofault, 0, "dup_nofault %" PRIu64 ":\n%s",
                 c.dup_nofault, text);
    cr_assert_eq(c.dup_fault, 0);
    cr_assert_eq(c.unacked, 0, "%" PRIu64 " tasks never acked:\n%s",
                 c.unacked, text);
    rm_rf(dir);
}

/* The drain of a leased strategy: one task, two consumers, work (1 s)
 * longer than the lease (300 ms).  "Every task delivered once" happens at
 * the first claim; a trial that stopped there never saw c1 take the task
 * over when the lease ran out.  The trial waits for an accepted ack
 * (within the grace), so the log shows the redelivery, the first
 * holder's ack refused as stale, and the task acked in the end. */
Test(log_run, lease_run_waits_for_acks, .timeout = 60)
{
    char dir[128], log[256], out[256], err[256], url[64], queue[64];
    char outdir[200], text[65536], e[512];
    const char *args[40];
    size_t n = 0;
    dq_check c;
    int rc;

    temp_dir(dir, sizeof dir, "drain");
    snprintf(outdir, sizeof outdir, "%s/run", dir);
    snprintf(log, sizeof log, "%s/events.log", outdir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(queue, sizeof queue, "test-drain-%d", (int)getpid());
    const char *fixed[] = {"run", "--strategy", "lua-lease", "--opt",
                           "lease_ms=300", "--work-us", "1000000", "--tasks",
                           "1", "--consumers", "2", "--delay-ms", "0:0",
                           "--grace-ms", "1500", "--quiet", "--queue", queue,
                           "--fresh", "--out", outdir, NULL};
    for (size_t i = 0; fixed[i] != NULL; i++)
        args[n++] = fixed[i];
    add_redis(args, &n, url, sizeof url);
    args[n] = NULL;

    rc = wait_exit(spawn_dqlab(args, out, err));
    read_text(out, text, sizeof text);
    cr_assert_eq(rc, 0, "dqlab run exit %d:\n%s", rc, text);
    cr_assert_eq(dq_check_file(log, &c, e, sizeof e), 0, "%s", e);
    read_text(log, text, sizeof text);
    cr_assert_geq(c.redelivered, 1, "no redelivery in the log:\n%s", text);
    cr_assert_geq(c.ack_refused, 1, "no stale ack refused:\n%s", text);
    cr_assert_eq(c.dup_nofault + c.dup_fault, 0, "%s", text);
    cr_assert_eq(c.unacked, 0, "%s", text);
    rm_rf(dir);
}

/* A stale ack a lease refused (R ... ENOTFOUND) is what the lease is for,
 * not an error of the run: the summary counts it on a line of its own,
 * "acks refused (lease lost): N", and keeps errors (and the first error
 * it quotes) for calls that failed.  One task, two consumers, work longer
 * than the lease: the first holder's ack is refused. */
Test(log_run, stale_acks_are_not_errors, .timeout = 60)
{
    char dir[128], out[256], err[256], url[64], queue[64], outdir[200];
    char text[65536], sum[256], logp[256], e[512];
    const char *args[40];
    size_t n = 0;
    json_error_t je;
    json_t *j;
    dq_check c;
    int rc;

    temp_dir(dir, sizeof dir, "stale");
    snprintf(outdir, sizeof outdir, "%s/run", dir);
    snprintf(sum, sizeof sum, "%s/summary.json", outdir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(queue, sizeof queue, "test-stale-err-%d", (int)getpid());
    const char *fixed[] = {"run", "--strategy", "lua-lease", "--opt",
                           "lease_ms=300", "--work-us", "1000000", "--tasks",
                           "1", "--consumers", "2", "--delay-ms", "0:0",
                           "--grace-ms", "1500", "--quiet", "--queue", queue,
                           "--fresh", "--out", outdir, NULL};
    for (size_t i = 0; fixed[i] != NULL; i++)
        args[n++] = fixed[i];
    add_redis(args, &n, url, sizeof url);
    args[n] = NULL;

    rc = wait_exit(spawn_dqlab(args, out, err));
    read_text(out, text, sizeof text);
    cr_assert_eq(rc, 0, "dqlab run exit %d:\n%s", rc, text);
    snprintf(logp, sizeof logp, "%s/events.log", outdir);
    cr_assert_eq(dq_check_file(logp, &c, e, sizeof e), 0, "%s", e);
    cr_assert_geq(c.ack_refused, 1, "no stale ack refused:\n%s", text);
    snprintf(e, sizeof e, "acks refused (lease lost): %" PRIu64 "\n",
             c.ack_refused);
    cr_assert(strstr(text, e) != NULL, "no line '%s' in:\n%s", e, text);
    cr_assert(strstr(text, "errors      ") == NULL,
              "a refused stale ack counted as an error:\n%s", text);
    j = json_load_file(sum, 0, &je);
    cr_assert_not_null(j, "%s: %s", sum, je.text);
    cr_assert_eq(json_integer_value(json_object_get(j, "errors")), 0);
    cr_assert(json_is_null(json_object_get(j, "first_error")), "%s",
              json_string_value(json_object_get(j, "first_error")));
    json_decref(j);
    rm_rf(dir);
}

/* Starts a long heap run (tasks due over 20 s) with its log in dir/run,
 * waits until the log holds its headers (written at once, unbuffered),
 * then sends sig. Returns dqlab's exit status. */
static int signal_run(const char *dir, int sig)
{
    char outdir[200], log[256], out[256], err[256];
    const char *args[] = {"run", "--strategy", "heap", "--tasks", "300",
                          "--consumers", "2", "--delay-ms", "0:20000",
                          "--quiet", "--out", outdir, NULL};
    pid_t pid;

    snprintf(outdir, sizeof outdir, "%s/run", dir);
    snprintf(log, sizeof log, "%s/events.log", outdir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    pid = spawn_dqlab(args, out, err);
    wait_for_text(log, "H\tstart_us\t");
    usleep(300000); /* tasks enqueued, a few delivered */
    cr_assert_eq(kill(pid, sig), 0);
    return wait_exit(pid);
}

/* Ctrl-C: the run says "interrupted" (exit 130), and so does its log: it
 * ends with "Z interrupted" and dqlab check gives no verdict (exit 3),
 * not "VIOLATION: lost". */
Test(log_run, sigint_log_says_interrupted, .timeout = 60)
{
    char dir[128], name[300], text[65536];
    int rc;

    temp_dir(dir, sizeof dir, "sigint");
    rc = signal_run(dir, SIGINT);
    cr_assert_eq(rc, 130, "dqlab run exit %d", rc);
    setenv("DQ_TEST_LOGS", dir, 1);
    expect_check("run/events.log", 3, "verdict: no verdict: trial "
                                      "interrupted");
    snprintf(name, sizeof name, "%s/run/events.log", dir);
    read_text(name, text, sizeof text);
    cr_assert(strlen(text) > 16 &&
              strcmp(text + strlen(text) - strlen("\tinterrupted\n"),
                     "\tinterrupted\n") == 0 &&
              strstr(text, "\nZ\t") != NULL,
              "the log does not end with Z interrupted:\n%s", text);
    rm_rf(dir);
}

/* SIGKILL of a thread-mode run: its buffered records die with it, the
 * log holds its headers and no end record: no verdict (exit 3), not
 * "delivered 0 ... ok". */
Test(log_run, sigkill_log_is_incomplete, .timeout = 60)
{
    char dir[128];
    int rc;

    temp_dir(dir, sizeof dir, "sigkill");
    rc = signal_run(dir, SIGKILL);
    cr_assert_eq(rc, 128 + SIGKILL, "dqlab run exit %d", rc);
    setenv("DQ_TEST_LOGS", dir, 1);
    expect_check("run/events.log", 3, "verdict: no verdict: log incomplete");
    rm_rf(dir);
}

/* Runs body(dir, fd) in a child process with its own mount namespace, in
 * which a tmpfs of `opts` ("size=8k": two pages) is mounted on a new
 * directory dir: a real, tiny disk that fills up.  The mount dies with
 * the child.  What body writes to fd ends up in buf. */
static void with_tiny_disk(const char *opts, void (*body)(const char *, int),
                           char *buf, size_t len)
{
    char dir[128];
    int p[2];
    pid_t pid;

    temp_dir(dir, sizeof dir, "disk");
    cr_assert_eq(pipe(p), 0);
    pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        close(p[0]);
        if (geteuid() == 0 ? unshare(CLONE_NEWNS)
                           : unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
            dprintf(p[1], "SETUP: unshare: %s", strerror(errno));
            _exit(1);
        }
        if (uid != 0) { /* map ourselves to root of the new namespace */
            char m[64];
            int fd;
            snprintf(m, sizeof m, "0 %d 1", (int)uid);
            if ((fd = open("/proc/self/setgroups", O_WRONLY)) >= 0) {
                (void)!write(fd, "deny", 4);
                close(fd);
            }
            if ((fd = open("/proc/self/uid_map", O_WRONLY)) >= 0) {
                (void)!write(fd, m, strlen(m));
                close(fd);
            }
            snprintf(m, sizeof m, "0 %d 1", (int)gid);
            if ((fd = open("/proc/self/gid_map", O_WRONLY)) >= 0) {
                (void)!write(fd, m, strlen(m));
                close(fd);
            }
        }
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount("tmpfs", dir, "tmpfs", 0, opts) != 0) {
            dprintf(p[1], "SETUP: mount tmpfs on %s: %s", dir,
                    strerror(errno));
            _exit(1);
        }
        body(dir, p[1]);
        umount2(dir, MNT_DETACH);
        _exit(0);
    }
    close(p[1]);
    slurp(p[0], buf, len);
    waitpid(pid, NULL, 0);
    rmdir(dir);
    cr_assert(strncmp(buf, "SETUP:", 6) != 0, "%s", buf);
}

/* Records of 25 bytes after the 21-byte first line: one of them straddles
 * the end of the 8 KiB disk, so write(2) first writes part of it and
 * then fails. */
static void fill_log(const char *dir, int fd)
{
    char path[256], err[256], id[16];
    dq_eventlog *l;
    int rc = 0, e = 0;

    snprintf(path, sizeof path, "%s/events.log", dir);
    l = dq_eventlog_create(path, err, sizeof err);
    if (l == NULL) {
        dprintf(fd, "SETUP: %s", err);
        return;
    }
    for (int i = 0; i < 100000 && rc == 0; i++) {
        snprintf(id, sizeof id, "x%05d", i);
        rc = dq_log_enqueue(l, 1000000, id, 1000, "p0");
        e = errno;
    }
    dq_eventlog_close(l);
    dprintf(fd, "rc=%d errno=%d", rc, rc ? e : 0);
}

Test(log_run, full_disk_write_fails_with_enospc, .timeout = 30)
{
    char buf[512], want[64];

    with_tiny_disk("size=8k", fill_log, buf, sizeof buf);
    snprintf(want, sizeof want, "rc=-1 errno=%d", ENOSPC);
    cr_assert_str_eq(buf, want, "expected ENOSPC (%d), EIO is %d", ENOSPC,
                     EIO);
}

/* `dqlab run` whose log fills the disk: exit 2, one line naming the log
 * file and "No space left on device". */
static void run_on_full_disk(const char *dir, int fd)
{
    char outdir[256], out[256], err[256], text[4096];
    const char *args[] = {"run", "--strategy", "heap", "--tasks", "100000",
                          "--delay-ms", "0:0", "--quiet", "--out", outdir,
                          NULL};
    int rc;

    snprintf(outdir, sizeof outdir, "%s/run", dir);
    snprintf(out, sizeof out, "/tmp/dqlab-test-diskout-%d", (int)getpid());
    snprintf(err, sizeof err, "/tmp/dqlab-test-diskerr-%d", (int)getpid());
    rc = wait_exit(spawn_dqlab(args, out, err));
    read_text(err, text, sizeof text);
    unlink(out);
    unlink(err);
    dprintf(fd, "rc=%d\n%s", rc, text);
}

Test(log_run, full_disk_run_names_the_log, .timeout = 60)
{
    char buf[8192];

    with_tiny_disk("size=8k", run_on_full_disk, buf, sizeof buf);
    cr_assert(strncmp(buf, "rc=2\n", 5) == 0, "%s", buf);
    cr_assert(strstr(buf, "No space left on device") != NULL, "%s", buf);
    cr_assert(strstr(buf, "/run/events.log") != NULL,
              "the message does not name the log: %s", buf);
    cr_assert(strstr(buf, "Input/output error") == NULL, "%s", buf);
}

/* The report re-checks stored logs: a trial log that lost its end record
 * is left out and shown as "no verdict: log incomplete", not counted. */
Test(log_run, report_shows_incomplete_log_without_verdict, .timeout = 120)
{
    char dir[128], ini[256], out[256], err[256], url[64], res[256];
    char log[400], text[65536], rep[400], scripts[600];
    const char *args[16];
    size_t n = 0;
    FILE *f;
    int rc;

    temp_dir(dir, sizeof dir, "report");
    snprintf(ini, sizeof ini, "%s/mini.ini", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(res, sizeof res, "%s/results", dir);
    f = fopen(ini, "w");
    cr_assert_not_null(f);
    fprintf(f, "[experiment]\nname = miniloss%d\ntitle = Mini loss\n"
            "description = Two trials of lua without a fault.\n"
            "plots = loss\nstrategies = lua\nfaults = none\nconsumers = 1\n"
            "tasks = 5\ndelay_ms = 0:10\ngrace_ms = 500\nrepeats = 2\n"
            "seed = 1\n", (int)getpid());
    cr_assert_eq(fclose(f), 0);
    args[n++] = "experiment";
    args[n++] = ini;
    args[n++] = "--results";
    args[n++] = res;
    add_redis(args, &n, url, sizeof url);
    args[n] = NULL;
    rc = wait_exit(spawn_dqlab(args, out, err));
    read_text(err, text, sizeof text);
    cr_assert_eq(rc, 0, "dqlab experiment exit %d: %s", rc, text);

    /* Cut trial 1's log at a line boundary: drop its last line (Z). */
    snprintf(log, sizeof log, "%s/miniloss%d/latest/logs/trial-001.log", res,
             (int)getpid());
    read_text(log, text, sizeof text);
    size_t len = strlen(text);
    cr_assert(len > 2 && text[len - 1] == '\n');
    text[len - 1] = '\0';
    char *last = strrchr(text, '\n');
    cr_assert_not_null(last);
    cr_assert(strncmp(last + 1, "Z\t", 2) == 0, "last line: %s", last + 1);
    last[1] = '\0';
    f = fopen(log, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);

    /* The gnuplot scripts live in report/ beside tests/. */
    const char *file = __FILE__, *slash = strrchr(file, '/');
    snprintf(scripts, sizeof scripts, "%.*s/../report",
             slash ? (int)(slash - file) : 1, slash ? file : ".");
    snprintf(rep, sizeof rep, "%s/out", dir);
    const char *rargs[] = {"report", res, "--out", rep, "--scripts", scripts,
                           NULL};
    rc = wait_exit(spawn_dqlab(rargs, out, err));
    read_text(err, text, sizeof text);
    cr_assert_eq(rc, 0, "dqlab report exit %d: %s", rc, text);
    snprintf(rep, sizeof rep, "%s/out/REPORT.md", dir);
    read_text(rep, text, sizeof text);
    cr_assert(strstr(text, "no verdict: log incomplete") != NULL,
              "REPORT.md does not say the log gave no verdict:\n%s", text);
    cr_assert(strstr(text, "No verdict for 1 trial log") != NULL, "%s", text);
    rm_rf(dir);
}
