/* test_faults.c -- fault injection (faults.h, trial.c) where the outcome is
 * certain, through the real binary: `$DQLAB run ... --fault SPEC --json`.
 *
 * Each test runs one short trial; dqlab starts its own private
 * redis-server (a restart or a pause must own the server, and tests run in
 * parallel), so these tests do not use DQ_TEST_REDIS_PORT except to check
 * that a server fault refuses --redis.  The JSON summary carries the
 * checker's counts and the trial's fault counters (kills, restarts);
 * the exit code is dqlab's verdict (0: nothing the strategy's declared
 * guarantees forbid under these faults).
 *
 * What each test relies on:
 *   - kill-consumer:after-claim kills a consumer process right after claim
 *     returned, before its D record: an at-most-once strategy (naive, one
 *     consumer) loses exactly that task; lua-lease, whose lease brings the
 *     task back, loses none;
 *   - heap in process mode lives in one process: killing it loses every
 *     task not yet delivered;
 *   - expiry's keyspace events are fire-and-forget: keys that expire while
 *     no consumer is subscribed lose their tasks;
 *   - restart-redis:off loses every task pending at the crash; with AOF
 *     appendfsync always nothing acknowledged is lost;
 *   - clock-skew:+500 makes a client-clock strategy deliver early; lua
 *     clock=server reads Redis's TIME and does not;
 *   - a subscriber outage stops every consumer, also the heap's consumer
 *     threads inside its one process (no delivery well inside the window);
 *   - mover-stall acts only on connections dqlab named for its queue
 *     (rconn.h client names), fails when Redis refuses its commands, and
 *     is refused for a strategy whose consumers poll;
 *   - expiry puts notify-keyspace-events back when its last subscriber
 *     closes, and not while another dqlab handle still subscribes.
 * The tests that need a server of their own (an ACL user, foreign clients,
 * a config value to compare) start a private redis-server with
 * harness/redis_server.c and pass it as --redis.
 * The spawn test calls harness/spawn.c directly (no Redis).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../harness/experiment.h"
#include "../harness/redis_server.h"
#include "../harness/spawn.h"
#include "../strategies/dq.h"
#include "testlib.h"

typedef struct outcome {
    int status;      /* exit code */
    json_t *j;       /* the summary, NULL when none */
} outcome;

/* Runs `$DQLAB run --quiet --json ARGS` and parses its stdout. */
static outcome run(const char *args)
{
    const char *d = getenv("DQLAB");
    char cmd[2048], *buf = NULL;
    size_t len = 0;
    outcome o = {-1, NULL};
    json_error_t je;

    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    snprintf(cmd, sizeof cmd, "'%s' run --quiet --json %s", d, args);
    o.status = tl_popen_read(cmd, &buf, &len);
    if (len > 0)
        o.j = json_loads(buf, 0, &je);
    free(buf);
    return o;
}

static long long num(const outcome *o, const char *key)
{
    json_t *v;

    cr_assert_not_null(o->j, "no JSON summary (exit %d)", o->status);
    v = json_object_get(o->j, key);
    cr_assert(json_is_integer(v), "summary has no integer '%s'", key);
    return (long long)json_integer_value(v);
}

Test(lua_lease, kill_after_claim_loses_nothing, .timeout = 60)
{
    outcome o = run("--strategy lua-lease --opt lease_ms=500 --tasks 60 "
                    "--consumers 2 --delay-ms 0:300 --grace-ms 3000 "
                    "--fault kill-consumer:after-claim:2");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_geq(num(&o, "kills"), 1);
    cr_assert_eq(num(&o, "enqueued"), 60);
    cr_assert_eq(num(&o, "lost"), 0);
    cr_assert_eq(num(&o, "delivered"), 60);
    json_decref(o.j);
}

Test(naive, kill_after_claim_loses_the_killed_task, .timeout = 60)
{
    outcome o = run("--strategy naive --tasks 50 --consumers 1 "
                    "--delay-ms 0:200 --grace-ms 500 "
                    "--fault kill-consumer:after-claim:1");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "kills"), 1);
    cr_assert_eq(num(&o, "enqueued"), 50);
    cr_assert_eq(num(&o, "lost"), 1);
    cr_assert_eq(num(&o, "delivered"), 49);
    json_decref(o.j);
}

Test(lua, kill_during_work_is_allowed_at_most_once, .timeout = 60)
{
    /* The task was delivered (D) but never acked: not lost by the
     * "delivered at least once" count, and no violation either way. */
    outcome o = run("--strategy lua --tasks 40 --consumers 2 --work-us 2000 "
                    "--delay-ms 0:200 --grace-ms 500 "
                    "--fault kill-consumer:during-work:1");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "kills"), 1);
    cr_assert_eq(num(&o, "duplicates"), 0);
    json_decref(o.j);
}

Test(heap, process_kill_loses_every_pending_task, .timeout = 60)
{
    outcome o = run("--strategy heap --tasks 100 --consumers 2 "
                    "--delay-ms 200:1000 --grace-ms 200 "
                    "--fault kill-consumer:after-claim:1");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "kills"), 1);
    cr_assert_gt(num(&o, "lost"), 0);
    cr_assert_eq(num(&o, "lost"), num(&o, "enqueued") - num(&o, "delivered"));
    json_decref(o.j);
}

Test(expiry, subscriber_outage_loses_expired_tasks, .timeout = 60)
{
    outcome o = run("--strategy expiry --tasks 100 --consumers 2 "
                    "--delay-ms 100:1200 --grace-ms 1000 "
                    "--fault subscriber-outage:500:300");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_gt(num(&o, "lost"), 0);
    cr_assert_lt(num(&o, "lost"), 100);
    json_decref(o.j);
}

Test(lua, subscriber_outage_loses_nothing, .timeout = 60)
{
    outcome o = run("--strategy lua --tasks 100 --consumers 2 "
                    "--delay-ms 100:1200 --grace-ms 1000 "
                    "--fault subscriber-outage:500:300");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "lost"), 0);
    json_decref(o.j);
}

/* A thread-mode consumer closes its handle when a subscriber outage
 * begins and opens a new one after it: the summary's counters are those
 * of every handle it opened, what a close did included.  With batch=16 a
 * lua claim takes 16 due tasks at once (all 32 are enqueued in one
 * pipelined batch, so the first claim finds them), and the close in the
 * middle of a batch gives the rest back: putbacks, which only a close
 * counts for lua.  A batch takes 16 x 50 ms of work, so the outage 400 ms
 * in falls inside the first one even when the consumer starts up to
 * 400 ms late on a loaded machine. */
Test(lua, outage_keeps_a_closed_handles_counters, .timeout = 60)
{
    outcome o = run("--strategy lua --opt batch=16 --tasks 32 --consumers 1 "
                    "--enqueue-batch 32 --delay-ms 0 --work-us 50000 "
                    "--grace-ms 2000 --fault subscriber-outage:300:400");
    json_t *cnt;

    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "lost"), 0);
    cnt = json_object_get(o.j, "counters");
    cr_assert(json_is_object(cnt), "summary has no counters");
    cr_assert_gt(json_integer_value(json_object_get(cnt, "putbacks")), 0,
                 "the buffer given back at the outage was not counted");
    json_decref(o.j);
}

Test(lua, restart_off_loses_pending_tasks, .timeout = 60)
{
    outcome o = run("--strategy lua --tasks 50 --consumers 2 "
                    "--delay-ms 2000:2500 --grace-ms 500 "
                    "--fault restart-redis:off:500");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "restarts"), 1);
    cr_assert_gt(num(&o, "lost"), 0);
    json_decref(o.j);
}

Test(lua_lease, restart_always_loses_nothing_acknowledged, .timeout = 60)
{
    outcome o = run("--strategy lua-lease --opt lease_ms=500 --tasks 50 "
                    "--consumers 2 --delay-ms 700:1500 --grace-ms 2000 "
                    "--fault restart-redis:always:300");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "restarts"), 1);
    cr_assert_eq(num(&o, "enqueued"), 50);
    cr_assert_eq(num(&o, "lost"), 0);
    json_decref(o.j);
}

Test(lua, pause_redis_delays_but_loses_nothing, .timeout = 60)
{
    outcome o = run("--strategy lua --tasks 50 --consumers 2 "
                    "--delay-ms 100:800 --grace-ms 2000 "
                    "--fault pause-redis:400:200");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "lost"), 0);
    json_decref(o.j);
}

Test(list, mover_stall_still_delivers, .timeout = 60)
{
    outcome o = run("--strategy list --tasks 50 --consumers 2 "
                    "--delay-ms 100:800 --grace-ms 2000 "
                    "--fault mover-stall:200");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "lost"), 0);
    cr_assert_eq(num(&o, "fault_windows"), 1);
    json_decref(o.j);
}

Test(lua, clock_skew_client_clock_delivers_early, .timeout = 60)
{
    outcome o = run("--strategy lua --opt clock=client --tasks 50 "
                    "--consumers 1 --delay-ms 100:600 "
                    "--fault clock-skew:+500");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_gt(num(&o, "early"), 0);
    json_decref(o.j);
}

Test(lua, clock_skew_server_clock_never_early, .timeout = 60)
{
    outcome o = run("--strategy lua --opt clock=server --tasks 50 "
                    "--consumers 1 --delay-ms 100:600 "
                    "--fault clock-skew:+500");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "early"), 0);
    json_decref(o.j);
}

Test(faults, bad_input_exits_2, .timeout = 30)
{
    char args[256];
    const char *port = getenv("DQ_TEST_REDIS_PORT");
    outcome o;

    o = run("--strategy lua --fault bogus");
    cr_assert_eq(o.status, 2);
    json_decref(o.j);
    o = run("--strategy lua --fault kill-consumer:sometime");
    cr_assert_eq(o.status, 2);
    json_decref(o.j);
    o = run("--strategy heap --fault restart-redis:off");
    cr_assert_eq(o.status, 2);
    json_decref(o.j);
    o = run("--strategy lua --consumer-mode fibre");
    cr_assert_eq(o.status, 2);
    json_decref(o.j);
    cr_assert_not_null(port, "DQ_TEST_REDIS_PORT is not set");
    snprintf(args, sizeof args, "--strategy lua --redis redis://127.0.0.1:%s "
             "--fault pause-redis:100", port);
    o = run(args);
    cr_assert_eq(o.status, 2);
    json_decref(o.j);
    snprintf(args, sizeof args, "--strategy lua --redis redis://127.0.0.1:%s "
             "--fault busy-redis:100", port);
    o = run(args);
    cr_assert_eq(o.status, 2);
    json_decref(o.j);
    o = run("--strategy heap --fault busy-redis:100");
    cr_assert_eq(o.status, 2);
    json_decref(o.j);
}

/* Two faults that each need servers of their own are refused before a
 * server is started, with the option named. */
Test(faults, conflicting_faults_refused_before_any_server, .timeout = 30)
{
    char cmd[1024];
    const char *dq = getenv("DQLAB");
    cr_assert(dq != NULL && *dq, "DQLAB is not set: run through tests/run.sh");
    snprintf(cmd, sizeof cmd, "out=$('%s' run --strategy lua --tasks 10 "
             "--fault os-crash:everysec --fault failover 2>&1); test $? -eq 2 "
             "&& echo \"$out\" | grep -q '^dqlab run: --fault: fault failover: "
             "cannot share a trial with os-crash' && ! echo \"$out\" | grep -q "
             "'starting a private redis-server'", dq);
    int st = system(cmd);
    cr_expect(st == 0, "refused late or without naming --fault");
}

/* spawn.c: a child inherits only 0-2 (a hiredis socket has no CLOEXEC,
 * like the descriptor opened here), and dq_spawn_reap returns its pid. */
Test(spawn, closes_inherited_descriptors)
{
    int leak = socket(AF_INET, SOCK_STREAM, 0), pfd[2], status = 0;
    char script[128], out[64] = "";
    ssize_t n;
    pid_t pid;

    cr_assert(leak > 2);
    cr_assert_eq(pipe(pfd), 0);
    snprintf(script, sizeof script,
             "if [ -e /proc/self/fd/%d ]; then echo leaked; "
             "else echo closed; fi", leak);
    char *const argv[] = {"sh", "-c", script, NULL};
    pid = dq_spawn("/bin/sh", argv, NULL, -1, pfd[1], -1);
    cr_assert(pid > 0);
    close(pfd[1]);
    n = read(pfd[0], out, sizeof out - 1);
    cr_assert(n > 0);
    out[n] = '\0';
    cr_assert_str_eq(out, "closed\n");
    cr_assert_eq(dq_spawn_reap(pid, &status, true), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(pfd[0]);
    close(leak);
}

/* ---- Helpers: a private server, stderr, the event log ------------------- */

/* The test's own redis-server (stopped by .fini = own_stop, which runs
 * after a failed assertion too). */
static dq_redis_server own;

static void own_stop(void)
{
    dq_redis_server_stop(&own);
}

/* Starts `own` and returns a connection to it (caller frees). */
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

/* One command on c whose reply must not be an error; returns the reply
 * (caller frees). */
static redisReply *cmd(redisContext *c, const char *fmt, const char *arg)
{
    redisReply *r = redisCommand(c, fmt, arg);
    cr_assert_not_null(r, "%s: %s", fmt, c->errstr);
    cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s: %s", fmt, r->str);
    return r;
}

/* notify-keyspace-events as the server spells it, into out. */
static void nke(redisContext *c, char *out, size_t len)
{
    redisReply *r = cmd(c, "CONFIG GET notify-keyspace-events", NULL);
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    snprintf(out, len, "%s", r->element[1]->str);
    freeReplyObject(r);
}

/* Runs `$DQLAB run --quiet ARGS` (no --json) and returns its exit code,
 * with its stderr in err. */
static int run_stderr(const char *args, char *err, size_t errlen)
{
    char path[] = "/tmp/dqlab-ft-XXXXXX", cmdline[2048];
    const char *d = getenv("DQLAB");
    int fd = mkstemp(path), st;
    ssize_t n;

    cr_assert(d != NULL && fd >= 0);
    snprintf(cmdline, sizeof cmdline, "'%s' run --quiet %s >/dev/null 2>'%s'",
             d, args, path);
    st = system(cmdline);
    n = read(fd, err, errlen - 1);
    err[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* A fresh directory for --out DIR/run; the caller removes it with
 * rm_out(). */
static void out_dir(char *dir, size_t len)
{
    char t[] = "/tmp/dqlab-ft-XXXXXX";
    cr_assert_not_null(mkdtemp(t));
    snprintf(dir, len, "%s", t);
}

static void rm_out(const char *dir)
{
    char c[300];
    snprintf(c, sizeof c, "rm -rf '%s'", dir);
    cr_assert_eq(system(c), 0);
}

/* ---- Subscriber outage ---------------------------------------------------- */

/* In process mode the heap lives in one child process with its producers
 * and consumers: an outage must stop its consumer threads too.  Tasks
 * fall due all through a 2 s window; a consumer busy in a claim when the
 * window opens may still deliver one (claim timeout 100 ms), so only the
 * part of the window from 1 s after its start must have no delivery.
 * The tasks due in the window are delivered after it, none lost. */
Test(heap, process_outage_stops_consumers, .timeout = 60)
{
    char dir[64], args[512], path[128], line[512];
    long long begin = 0, end = 0, inside = 0;
    FILE *f;
    outcome o;

    out_dir(dir, sizeof dir);
    snprintf(args, sizeof args, "--strategy heap --consumer-mode process "
             "--consumers 2 --tasks 200 --delay-ms 0:2500 --grace-ms 1000 "
             "--fault subscriber-outage:2000:300 --out %s/run", dir);
    o = run(args);
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "enqueued"), 200);
    cr_assert_eq(num(&o, "lost"), 0);
    cr_assert_eq(num(&o, "delivered"), 200);
    json_decref(o.j);
    snprintf(path, sizeof path, "%s/run/events.log", dir);
    f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    while (fgets(line, sizeof line, f) != NULL) {
        long long t;
        char what[32], phase[16];
        if (sscanf(line, "F\t%lld\t%31[^\t]\t%15[^\t\n]", &t, what, phase) == 3 &&
            strcmp(what, "subscriber-outage") == 0)
            *(strcmp(phase, "begin") == 0 ? &begin : &end) = t;
    }
    cr_assert(begin > 0 && end > begin + 1500000, "window %lld..%lld", begin,
              end);
    rewind(f);
    while (fgets(line, sizeof line, f) != NULL) {
        long long t;
        if (sscanf(line, "D\t%lld\t", &t) == 1 && t >= begin + 1000000 &&
            t < end)
            inside++;
    }
    fclose(f);
    rm_out(dir);
    cr_assert_eq(inside, 0, "%lld deliveries in the outage window "
                 "(from 1 s after its start)", inside);
}

/* ---- mover-stall ---------------------------------------------------------- */

/* A subscriber and a BLPOP client that are not this trial's (one of them
 * named like another dqlab queue's connection) are still connected after
 * a mover-stall trial on the same server; the trial's own mover and
 * consumers were dropped and reconnected (nothing lost). */
Test(list, mover_stall_spares_other_clients, .timeout = 60, .fini = own_stop)
{
    redisContext *admin = own_start(), *sub, *blk;
    struct timeval tv = {5, 0};
    char args[512], dir[64], path[128], line[512];
    redisReply *r;
    void *v = NULL;
    bool killed_own = false;
    FILE *f;
    outcome o;

    sub = redisConnectWithTimeout("127.0.0.1", own.port, tv);
    blk = redisConnectWithTimeout("127.0.0.1", own.port, tv);
    cr_assert(sub != NULL && !sub->err && blk != NULL && !blk->err);
    freeReplyObject(cmd(sub, "CLIENT SETNAME dqlab:another-queue:c0", NULL));
    freeReplyObject(cmd(sub, "SUBSCRIBE %s", "app-events"));
    /* BLPOP sent, its reply read after the trial. */
    cr_assert_eq(redisAppendCommand(blk, "BLPOP app-jobs 0"), REDIS_OK);
    for (int done = 0; !done;)
        cr_assert_eq(redisBufferWrite(blk, &done), REDIS_OK);

    out_dir(dir, sizeof dir);
    snprintf(args, sizeof args, "--strategy list --redis redis://127.0.0.1:%d "
             "--tasks 50 --consumers 2 --delay-ms 100:800 --grace-ms 2000 "
             "--fault mover-stall:300 --out %s/run", own.port, dir);
    o = run(args);
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "lost"), 0);
    cr_assert_eq(num(&o, "fault_windows"), 1);
    json_decref(o.j);
    snprintf(path, sizeof path, "%s/run/events.log", dir);
    f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    while (fgets(line, sizeof line, f) != NULL)
        if (strstr(line, "\tmover-stall\tend\tpubsub=") != NULL &&
            strstr(line, "pubsub=0,") == NULL)
            killed_own = true;
    fclose(f);
    rm_out(dir);
    cr_assert(killed_own, "the trial's own subscriptions were not dropped");

    /* The subscriber still receives, the BLPOP client still gets its job. */
    r = cmd(admin, "PUBLISH app-events %s", "hello");
    cr_assert_eq(r->integer, 1, "the other subscriber was disconnected");
    freeReplyObject(r);
    freeReplyObject(cmd(admin, "LPUSH app-jobs %s", "job-1"));
    cr_assert_eq(redisGetReply(blk, &v), REDIS_OK,
                 "the BLPOP client was disconnected: %s", blk->errstr);
    r = v;
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
              strcmp(r->element[1]->str, "job-1") == 0);
    freeReplyObject(r);
    redisFree(sub);
    redisFree(blk);
    redisFree(admin);
}

/* A user without CLIENT (ACL -client) cannot drop connections: the trial
 * fails before it starts (exit 2, the refusal named); one that may list
 * but not kill (-client|kill) fails at the fault.  Neither ends "ok". */
Test(list, mover_stall_refused_by_acl_fails, .timeout = 60, .fini = own_stop)
{
    redisContext *admin = own_start();
    char args[512], err[2048];
    int rc;

    freeReplyObject(cmd(admin, "ACL SETUSER noclient on >pw ~* &* +@all "
                        "-client", NULL));
    freeReplyObject(cmd(admin, "ACL SETUSER nokill on >pw ~* &* +@all "
                        "-client|kill", NULL));
    snprintf(args, sizeof args, "--strategy list --redis "
             "redis://noclient:pw@127.0.0.1:%d --tasks 30 --delay-ms 100:500 "
             "--fault mover-stall:200", own.port);
    rc = run_stderr(args, err, sizeof err);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err);
    cr_assert(strstr(err, "mover-stall") != NULL && strstr(err, "NOPERM"),
              "%s", err);
    snprintf(args, sizeof args, "--strategy list --redis "
             "redis://nokill:pw@127.0.0.1:%d --tasks 30 --delay-ms 100:500 "
             "--fault mover-stall:200", own.port);
    rc = run_stderr(args, err, sizeof err);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err);
    cr_assert(strstr(err, "CLIENT KILL") != NULL && strstr(err, "NOPERM"),
              "%s", err);
    redisFree(admin);
}

/* mover-stall acts on subscribed or blocked connections: a strategy
 * whose consumers poll has none, so `run` refuses it and an experiment
 * skips the combination. */
Test(faults, mover_stall_needs_a_blocking_strategy, .timeout = 30)
{
    char err[2048], path[] = "/tmp/dqlab-ft-XXXXXX";
    const char *text = "[experiment]\nname = m\nstrategies = lua, list\n"
                       "consumers = 1\nfaults = none, mover-stall\n";
    dq_experiment e;
    int fd, rc;

    rc = run_stderr("--strategy lua --fault mover-stall", err, sizeof err);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err);
    cr_assert(strstr(err, "mover-stall") && strstr(err, "lua"), "%s", err);
    fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    rc = dq_experiment_load(path, false, &e, err, sizeof err);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", err);
    /* lua: none; list: none and mover-stall. */
    cr_assert_eq(dq_experiment_ntrials(&e), 3);
}

/* ---- expiry and notify-keyspace-events -------------------------------------- */

/* After an expiry trial the server's notify-keyspace-events is what it was
 * before: "" (Redis's default) and a value someone else set ("Kg"), with
 * consumers as threads and as processes. */
Test(expiry, restores_notify_keyspace_events, .timeout = 90,
     .fini = own_stop)
{
    redisContext *c = own_start();
    const char *values[] = {"", "Kg"};
    const char *modes[] = {"thread", "process"};

    for (size_t i = 0; i < 2; i++)
        for (size_t m = 0; m < 2; m++) {
            char before[64], after[64], args[512];
            outcome o;

            freeReplyObject(cmd(c, "CONFIG SET notify-keyspace-events %s",
                                values[i]));
            nke(c, before, sizeof before);
            snprintf(args, sizeof args, "--strategy expiry --redis "
                     "redis://127.0.0.1:%d --tasks 30 --consumers 3 "
                     "--consumer-mode %s --delay-ms 100:400 --grace-ms 2000 "
                     "--seed %zu", own.port, modes[m], 1 + 2 * i + m);
            o = run(args);
            cr_assert_eq(o.status, 0, "exit %d", o.status);
            cr_assert_eq(num(&o, "lost"), 0);
            json_decref(o.j);
            nke(c, after, sizeof after);
            cr_assert_str_eq(after, before, "%s mode, was '%s'", modes[m],
                             values[i]);
        }
    redisFree(c);
}

/* A dqlab expiry handle that is still open (here, the test's own) keeps
 * the events on after a trial's handles close; once it closes too, the
 * original value is back. */
Test(expiry, keeps_events_while_another_handle_subscribes, .timeout = 60,
     .fini = own_stop)
{
    redisContext *c = own_start();
    char v[64], args[512], err[256] = "";
    dq_config cfg;
    dq_queue *q = NULL;
    outcome o;

    freeReplyObject(cmd(c, "CONFIG SET notify-keyspace-events %s", ""));
    memset(&cfg, 0, sizeof cfg);
    cfg.queue = "t-expiry-keeps-other";
    cfg.redis_host = "127.0.0.1";
    cfg.redis_port = own.port;
    cfg.consumer = "watcher";
    cr_assert_eq(dq_open(dq_strategy_find("expiry"), &cfg, &q, err,
                         sizeof err), DQ_OK, "%s", err);
    nke(c, v, sizeof v);
    cr_assert(strchr(v, 'E') && strchr(v, 'x'), "open left '%s'", v);
    snprintf(args, sizeof args, "--strategy expiry --redis "
             "redis://127.0.0.1:%d --tasks 30 --consumers 2 --delay-ms "
             "100:400 --grace-ms 2000", own.port);
    o = run(args);
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "lost"), 0);
    json_decref(o.j);
    nke(c, v, sizeof v);
    cr_assert(strchr(v, 'E') && strchr(v, 'x'),
              "turned off under an open subscriber: '%s'", v);
    dq_close(q);
    nke(c, v, sizeof v);
    cr_assert_str_eq(v, "");
    redisFree(c);
}
