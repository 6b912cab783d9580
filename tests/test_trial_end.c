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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
