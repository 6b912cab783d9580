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
 *     clock=server reads Redis's TIME and does not.
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

#include "../harness/spawn.h"

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
    FILE *f, *mem;
    outcome o = {-1, NULL};
    json_error_t je;
    int st;

    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    snprintf(cmd, sizeof cmd, "'%s' run --quiet --json %s", d, args);
    f = popen(cmd, "r");
    cr_assert_not_null(f, "popen %s", cmd);
    mem = open_memstream(&buf, &len);
    cr_assert_not_null(mem);
    for (int c; (c = fgetc(f)) != EOF;)
        fputc(c, mem);
    fclose(mem);
    st = pclose(f);
    o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
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
