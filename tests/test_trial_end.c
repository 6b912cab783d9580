/* test_trial_end.c -- how a trial starts and ends on a server and with
 * processes that are not all well behaved: children stopped whatever they
 * do, a queue claimed by one run at a time, a failed trial that cleans up
 * and says so in its log, a leased drain with a bound, and the tasks
 * still queued at the end named as such.
 *
 * What each test relies on:
 *   - dq_spawn returns once the child exec'd (spawn.h): a SIGTERM sent
 *     right after it reaches the program, never lands in the window
 *     between fork and exec where the child drops it;
 *   - dq_trial_procs_stop (trial_int.h) escalates to SIGKILL 3 s after
 *     its SIGTERM and never waits without a bound, so a child that
 *     ignores SIGTERM is gone within the stated 5 s;
 *   - a --redis queue is claimed with dq:{Q}:owner (SET NX PX) for the
 *     whole trial (trial_redis.c): a second run on it is refused, --fresh
 *     included, and nothing of the first is touched;
 *   - a trial that fails after it touched the queue purges dq:{Q}:* and
 *     ends its log with H failed + Z failed, which `dqlab check` reports
 *     as "no verdict: the trial failed: ..." (exit 3);
 *   - a leased trial's drain deadline is the latest due time + grace,
 *     extended by one lease after a kill at most: a task still leased then
 *     is pending at the end;
 *   - the tasks a stalled queue still holds at the end are recorded (H
 *     pending_at_end) and named in the explanation of the loss.
 * The CLI tests run $DQLAB (tests/run.sh); the ones on someone else's
 * server start one with harness/redis_server.c and pass it as --redis.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../harness/redis_server.h"
#include "../harness/spawn.h"
#include "../harness/trial_int.h"
#include "testlib.h"

/* ---- Children that must stop ----------------------------------------- */

/* Polls pid (our child) for up to ms; returns true when it was reaped,
 * with its status in *status. */
static bool reap_within(pid_t pid, int ms, int *status)
{
    for (int i = 0; i < ms / 5; i++) {
        if (dq_spawn_reap(pid, status, false) == pid)
            return true;
        usleep(5000);
    }
    return false;
}

/* A SIGTERM sent the moment dq_spawn returns ends the program: the trial's
 * stop sends one to a replacement consumer it may have started a few
 * microseconds before.  Twenty tries, so that a child still between fork
 * and exec when the signal is sent would be caught. */
Test(spawn, sigterm_right_after_spawn_reaches_the_program, .timeout = 60)
{
    for (int i = 0; i < 20; i++) {
        char *const argv[] = {"sleep", "30", NULL};
        int status = 0;
        pid_t pid = dq_spawn("/bin/sleep", argv, NULL, -1, -1, -1);

        cr_assert(pid > 0, "dq_spawn: %s", strerror(errno));
        cr_assert_eq(kill(pid, SIGTERM), 0);
        if (!reap_within(pid, 5000, &status)) {
            kill(pid, SIGKILL);
            dq_spawn_reap(pid, &status, true);
            cr_assert_fail("try %d: the child survived a SIGTERM sent right "
                           "after dq_spawn returned (dropped before exec)",
                           i + 1);
        }
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
                  "try %d: status 0x%x, expected death by SIGTERM", i + 1,
                  status);
    }
}

/* A consumer process that ignores SIGTERM is SIGKILLed and reaped by the
 * stop, within its stated bound (3 s grace + 2 s after SIGKILL). */
Test(stop, child_ignoring_sigterm_is_killed_within_the_bound,
     .timeout = 60)
{
    char dir[] = "/tmp/dqlab-te-XXXXXX", script[128], log[128], ready[128];
    char err[300] = "", cmd[300];
    dq_trial_params p;
    dq_trial_state t;
    dq_trial_procs *ps;
    dq_fault_consumers fc;
    pid_t pids[2];
    FILE *f;
    int64_t t0;

    cr_assert_not_null(mkdtemp(dir));
    snprintf(script, sizeof script, "%s/child.sh", dir);
    snprintf(log, sizeof log, "%s/events.log", dir);
    snprintf(ready, sizeof ready, "%s/ready", dir);
    f = fopen(script, "w");
    cr_assert_not_null(f);
    /* Ignores SIGTERM, says so (one file per process), then sleeps with
     * SIGTERM still ignored (exec keeps an ignored disposition). */
    fprintf(f, "#!/bin/sh\ntrap '' TERM\n: > '%s'.$$\nexec sleep 30\n",
            ready);
    fclose(f);
    cr_assert_eq(chmod(script, 0755), 0);
    f = fopen(log, "w");
    cr_assert_not_null(f);
    fclose(f);

    dq_trial_defaults(&p);
    p.strategy = tl_strategy("lua");
    p.consumers = 2;
    p.log_path = log;
    p.child_exe = script;
    dq_trial_state_init(&t, &p);
    t.cfg.queue = "te-stop";
    ps = dq_trial_procs_new(&t, false, err, sizeof err);
    cr_assert_not_null(ps, "%s", err);
    cr_assert_eq(dq_trial_procs_start(ps, err, sizeof err), 0, "%s", err);
    dq_trial_consumers(&fc, &t, ps);
    for (int i = 0; i < 2; i++) {
        char one[160];
        pids[i] = fc.pid(fc.impl, i);
        cr_assert(pids[i] > 0);
        snprintf(one, sizeof one, "%s.%ld", ready, (long)pids[i]);
        for (int k = 0; k < 2000 && access(one, F_OK) != 0; k++)
            usleep(5000);
        cr_assert_eq(access(one, F_OK), 0, "child %d never started", i);
    }
    t0 = dq_mono_us();
    dq_trial_procs_stop(ps);
    cr_assert_lt(dq_mono_us() - t0, (5000 + TL_SLACK_MS) * 1000LL,
                 "the stop took %.1f s", (double)(dq_mono_us() - t0) / 1e6);
    for (int i = 0; i < 2; i++)
        cr_assert(kill(pids[i], 0) != 0 && errno == ESRCH,
                  "child %d (pid %ld) still exists after the stop", i,
                  (long)pids[i]);
    dq_trial_procs_free(ps);
    dq_trial_state_free(&t);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* ---- Running dqlab ------------------------------------------------------ */

/* A run's outcome: exit code, stdout (the JSON summary with --json) and
 * stderr. */
typedef struct outcome {
    int status;
    char out[65536];
    char err[4096];
} outcome;

static void slurp_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(buf, 1, len - 1, f) : 0;

    buf[n] = '\0';
    if (f != NULL)
        fclose(f);
}

/* Starts `$DQLAB run --quiet ARGS` in the background, its stdout and
 * stderr into files named after tag in dir; returns the shell's pid. */
static pid_t start_run(const char *dir, const char *tag, const char *args)
{
    const char *d = getenv("DQLAB");
    char cmd[2048];
    pid_t pid;

    cr_assert(d != NULL && *d, "DQLAB is not set: run through tests/run.sh");
    snprintf(cmd, sizeof cmd, "exec '%s' run --quiet %s >'%s/%s.out' "
             "2>'%s/%s.err'", d, args, dir, tag, dir, tag);
    pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Waits for start_run's pid and reads what it wrote. */
static void finish_run(pid_t pid, const char *dir, const char *tag,
                       outcome *o)
{
    char path[300];
    int st;

    cr_assert_eq(waitpid(pid, &st, 0), pid);
    o->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    snprintf(path, sizeof path, "%s/%s.out", dir, tag);
    slurp_file(path, o->out, sizeof o->out);
    snprintf(path, sizeof path, "%s/%s.err", dir, tag);
    slurp_file(path, o->err, sizeof o->err);
}

static void run_dqlab(const char *dir, const char *tag, const char *args,
                      outcome *o)
{
    finish_run(start_run(dir, tag, args), dir, tag, o);
}

/* An integer of the JSON summary in o->out. */
static long long json_num(const outcome *o, const char *key)
{
    json_error_t je;
    json_t *j = json_loads(o->out, 0, &je), *v;
    long long n;

    cr_assert_not_null(j, "no JSON summary (exit %d): %s", o->status,
                       o->err);
    v = json_object_get(j, key);
    cr_assert(json_is_integer(v), "summary has no integer '%s'", key);
    n = (long long)json_integer_value(v);
    json_decref(j);
    return n;
}

/* One line on stderr holding want, exit 2. */
static void expect_refused(const outcome *o, const char *want)
{
    const char *nl = strchr(o->err, '\n');

    cr_assert_eq(o->status, 2, "exit %d, expected 2: %s", o->status, o->err);
    cr_assert(nl != NULL && nl[1] == '\0', "not one line: %s", o->err);
    cr_assert(strstr(o->err, want) != NULL, "no '%s' in: %s", want, o->err);
}

static void make_dir(char *dir, size_t len)
{
    char t[] = "/tmp/dqlab-te-XXXXXX";

    cr_assert_not_null(mkdtemp(t));
    snprintf(dir, len, "%s", t);
}

static void remove_dir(const char *dir)
{
    char c[300];

    snprintf(c, sizeof c, "rm -rf '%s'", dir);
    cr_assert_eq(system(c), 0);
}

/* ---- Someone else's server ---------------------------------------------- */

/* The test's own redis-server, as a server that is not dqlab's (stopped
 * by .fini = own_stop, which runs after a failed assertion too). */
static dq_redis_server own;

static void own_stop(void)
{
    dq_redis_server_stop(&own);
}

static redisContext *own_start(void)
{
    dq_redis_server_opts so = {0};
    char err[512] = "";
    struct timeval tv = {5, 0};
    redisContext *c;

    cr_assert_eq(dq_redis_server_start(&own, &so, err, sizeof err), 0, "%s",
                 err);
    c = redisConnectWithTimeout("127.0.0.1", own.port, tv);
    cr_assert(c != NULL && c->err == 0, "connect to the private server");
    return c;
}

/* How many keys match pattern on c. */
static long long count_keys(redisContext *c, const char *pattern)
{
    redisReply *r = redisCommand(c, "KEYS %s", pattern);
    long long n;

    cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY, "KEYS %s", pattern);
    n = (long long)r->elements;
    freeReplyObject(r);
    return n;
}

/* Two runs on one queue: the second is refused while the first runs,
 * with --fresh too (which would otherwise delete the first one's tasks),
 * and the first loses nothing.  Everything of the queue is gone after. */
Test(owner, a_second_run_on_the_queue_is_refused, .timeout = 90,
     .fini = own_stop)
{
    redisContext *c = own_start();
    char dir[64], args[512], want[128];
    outcome a, b;
    pid_t pa;
    redisReply *r = NULL;

    make_dir(dir, sizeof dir);
    snprintf(args, sizeof args, "--strategy lua --redis "
             "redis://127.0.0.1:%d --queue te-owner --tasks 20 --delay-ms "
             "3000 --json", own.port);
    pa = start_run(dir, "a", args);
    for (int i = 0; i < 1000; i++) { /* until the first run has claimed */
        freeReplyObject(r);
        r = redisCommand(c, "GET dq:{te-owner}:owner");
        cr_assert_not_null(r);
        if (r->type == REDIS_REPLY_STRING)
            break;
        usleep(10000);
    }
    cr_assert(r->type == REDIS_REPLY_STRING, "the first run never claimed "
              "dq:{te-owner}:owner");
    freeReplyObject(r);
    snprintf(args, sizeof args, "--strategy lua --redis "
             "redis://127.0.0.1:%d --queue te-owner --tasks 5", own.port);
    snprintf(want, sizeof want, "queue te-owner is in use by another dqlab "
             "run (owner dqlab pid %ld on ", (long)pa);
    run_dqlab(dir, "b", args, &b);
    expect_refused(&b, want);
    strncat(args, " --fresh", sizeof args - strlen(args) - 1);
    run_dqlab(dir, "bf", args, &b);
    expect_refused(&b, want);
    finish_run(pa, dir, "a", &a);
    cr_assert_eq(a.status, 0, "first run: exit %d: %s", a.status, a.err);
    cr_assert_eq(json_num(&a, "delivered"), 20);
    cr_assert_eq(json_num(&a, "lost"), 0);
    cr_assert_eq(count_keys(c, "dq:{te-owner}:*"), 0, "keys left behind");
    redisFree(c);
    remove_dir(dir);
}

/* A claim another run holds (here: written by hand, as a run elsewhere
 * would) is not taken, --fresh or not, and nothing is written. */
Test(owner, a_claim_held_elsewhere_is_left_alone, .timeout = 60,
     .fini = own_stop)
{
    redisContext *c = own_start();
    char dir[64], args[512];
    outcome o;
    redisReply *r;

    make_dir(dir, sizeof dir);
    r = redisCommand(c, "SET dq:{te-held}:owner %s PX 60000",
                     "dqlab pid 1 on elsewhere since 2026-01-01 00:00:00");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    snprintf(args, sizeof args, "--strategy list --redis "
             "redis://127.0.0.1:%d --queue te-held --tasks 5 --fresh",
             own.port);
    run_dqlab(dir, "o", args, &o);
    expect_refused(&o, "queue te-held is in use by another dqlab run "
                       "(owner dqlab pid 1 on elsewhere since 2026-01-01 "
                       "00:00:00; its claim lapses in ");
    r = redisCommand(c, "GET dq:{te-held}:owner");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STRING &&
              strcmp(r->str, "dqlab pid 1 on elsewhere since 2026-01-01 "
                     "00:00:00") == 0, "the claim was touched");
    freeReplyObject(r);
    cr_assert_eq(count_keys(c, "dq:{te-held}:*"), 1);
    redisFree(c);
    remove_dir(dir);
}

/* ---- A trial that fails ------------------------------------------------- */

/* A mover-stall whose CLIENT KILL the ACL refuses fails the trial mid-run:
 * its keys are purged (the next run needs no --fresh) and its log ends
 * with H failed and Z failed, which `dqlab check` names (exit 3). */
Test(failed, a_failed_trial_purges_its_keys_and_says_so, .timeout = 60,
     .fini = own_stop)
{
    redisContext *c = own_start();
    char dir[64], args[512], log[4096], path[128], *last, *prev;
    size_t n;
    outcome o;
    redisReply *r;

    make_dir(dir, sizeof dir);
    r = redisCommand(c, "ACL SETUSER nokill on >pw ~* &* +@all "
                     "-client|kill");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    snprintf(args, sizeof args, "--strategy list --redis "
             "redis://nokill:pw@127.0.0.1:%d --queue te-failed --tasks 30 "
             "--delay-ms 100:500 --fault mover-stall:200 --out %s/run",
             own.port, dir);
    run_dqlab(dir, "f", args, &o);
    expect_refused(&o, "CLIENT KILL");
    cr_assert_eq(count_keys(c, "dq:{te-failed}:*"), 0,
                 "the failed trial left its keys");
    snprintf(path, sizeof path, "%s/run/events.log", dir);
    slurp_file(path, log, sizeof log);
    /* The last two lines: H failed <why>, Z <t> failed. */
    n = strlen(log);
    cr_assert(n > 0 && log[n - 1] == '\n', "%s", log);
    log[n - 1] = '\0';
    last = strrchr(log, '\n');
    cr_assert_not_null(last);
    *last++ = '\0';
    prev = strrchr(log, '\n');
    prev = prev != NULL ? prev + 1 : log;
    cr_assert(strncmp(last, "Z\t", 2) == 0 &&
              strcmp(last + strlen(last) - 7, "\tfailed") == 0,
              "the last line is not Z failed: %s", last);
    cr_assert(strncmp(prev, "H\tfailed\tmover-stall: Redis refused CLIENT "
                            "KILL", 44) == 0,
              "the line before it is not H failed: %s", prev);
    {
        const char *d = getenv("DQLAB");
        char cmd[512], out[8192];
        FILE *f;
        size_t n;
        int st;

        snprintf(cmd, sizeof cmd, "'%s' check '%s'", d, path);
        f = popen(cmd, "r");
        cr_assert_not_null(f);
        n = fread(out, 1, sizeof out - 1, f);
        out[n] = '\0';
        st = pclose(f);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "check: exit %d",
                  WEXITSTATUS(st));
        cr_assert(strstr(out, "verdict: no verdict: the trial failed: "
                              "mover-stall: Redis refused CLIENT KILL") !=
                      NULL, "%s", out);
    }
    /* The same queue again, no --fresh: nothing of the failed trial is in
     * the way. */
    snprintf(args, sizeof args, "--strategy list --redis "
             "redis://nokill:pw@127.0.0.1:%d --queue te-failed --tasks 10 "
             "--json", own.port);
    run_dqlab(dir, "again", args, &o);
    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    redisFree(c);
    remove_dir(dir);
}

/* ---- The drain of a leased trial ------------------------------------------ */

/* One consumer, four tasks, twelve kills right after the claim, lease
 * 2 s, grace 0.5 s: every round of four kills waits out a lease, so all
 * twelve would take three leases.  The drain deadline is the latest due
 * time + grace + one lease at most, so the trial ends after the second
 * round (the third cannot begin before two leases ran out), with the
 * four tasks still leased to killed consumers: pending, not lost. */
Test(lease, drain_deadline_is_bounded_by_one_lease, .timeout = 60)
{
    char dir[64];
    outcome o;

    make_dir(dir, sizeof dir);
    run_dqlab(dir, "l", "--strategy lua-lease --opt lease_ms=2000 --tasks 4 "
              "--consumers 1 --delay-ms 0 --grace-ms 500 --fault "
              "kill-consumer:after-claim:12 --json", &o);
    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_lt(json_num(&o, "kills"), 12, "the trial waited for every "
                 "kill: its drain deadline grew by one lease per kill");
    cr_assert_eq(json_num(&o, "lost"), 0);
    cr_assert_eq(json_num(&o, "pending_end") + json_num(&o, "delivered"),
                 4);
    cr_assert_gt(json_num(&o, "pending_end"), 0);
    remove_dir(dir);
}

/* ---- Tasks still queued at the end ------------------------------------------ */

/* One consumer spends 200 ms on each of 20 tasks due at once, grace
 * 300 ms: most are never claimed by the deadline.  They are lost (the
 * verdict says so) and every one of them was still queued: H
 * pending_at_end, the JSON and the summary say it. */
Test(pending, lost_tasks_still_queued_are_named, .timeout = 60)
{
    char dir[64], args[300], path[128], log[65536];
    long long lost;
    outcome o;

    make_dir(dir, sizeof dir);
    snprintf(args, sizeof args, "--strategy lua --tasks 20 --consumers 1 "
             "--delay-ms 0 --work-us 200000 --grace-ms 300 --json --out "
             "%s/run", dir);
    run_dqlab(dir, "p", args, &o);
    cr_assert_eq(o.status, 1, "exit %d (expected a lost verdict): %s",
                 o.status, o.err);
    lost = json_num(&o, "lost");
    cr_assert_gt(lost, 0);
    cr_assert_eq(json_num(&o, "pending_at_end"), lost);
    cr_assert_eq(json_num(&o, "lost_queued"), lost);
    snprintf(path, sizeof path, "%s/run/events.log", dir);
    slurp_file(path, log, sizeof log);
    cr_assert(strstr(log, "\nH\tpending_at_end\t") != NULL,
              "no H pending_at_end record");
    snprintf(args, sizeof args, "--strategy lua --tasks 20 --consumers 1 "
             "--delay-ms 0 --work-us 200000 --grace-ms 300");
    run_dqlab(dir, "h", args, &o);
    cr_assert_eq(o.status, 1, "exit %d: %s", o.status, o.err);
    cr_assert(strstr(o.out, " of the lost tasks were still queued in Redis "
                            "when the trial ended (late beyond the "
                            "deadline, not gone)\n") != NULL, "%s", o.out);
    remove_dir(dir);
}
