/* consumer_proc.c -- `dqlab __child`: one process of a process-mode trial.
 *
 * In consumer mode process (trial.h, faults.h) the trial forks and execs
 * /proc/self/exe with this hidden subcommand once per consumer, so that a
 * kill-consumer fault is a real SIGKILL of a real process: whatever the
 * consumer held in memory (a claimed task, a batch buffer, an in-process
 * heap) dies with it, as in production.  For an in-process strategy (the
 * heap) the one child runs the producers and the consumers together: the
 * whole queue lives and dies in that process.
 *
 * The child gets everything on its command line (--key=value, built by
 * trial.c child_spawn; nobody types it): the strategy and its options,
 * the queue, the Redis target (the password comes in the environment
 * variable DQLAB_CHILD_REDIS_PASSWORD, never in argv, which `ps` shows),
 * the trial's task parameters (so the payloads can be checked; with
 * --enqueue-batch=N an all-in-one child's producers enqueue in groups of N
 * as in a thread-mode trial, trial.h enqueue_batch), the log
 * path, its consumer name, its clock offset and its "die at" plan (claim
 * number and point).  It appends its D, A, R and F records to the trial's
 * log through its own O_APPEND descriptor (never the Z record: the parent
 * ends the log once every child is reaped), runs until SIGTERM (the
 * parent's stop) and prints one summary line on stdout
 * (dq_trial_child_run).  An all-in-one child also reads its stdin, a
 * socket from the parent: '1' stops its consumer threads (a subscriber
 * outage: they close their handles while the producers go on), '0' starts
 * them again (trial.c child_outage); a consumer child is stopped by
 * SIGTERM instead.
 *
 * It never outlives the parent: PR_SET_PDEATHSIG = SIGKILL is set by the
 * parent between fork and exec, and again here (it survives execve of a
 * non-setuid binary, prctl(2); setting it twice costs nothing).
 *
 * Exit: 0 after a clean stop, 2 on bad arguments or setup errors (one
 * line on stderr, which the parent reads from the pipe).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "faults.h"
#include "trial.h"

static int num(const char *name, const char *v, int64_t lo, int64_t hi,
               int64_t *out)
{
    char *end;
    long long x;

    errno = 0;
    x = strtoll(v, &end, 10);
    if (errno != 0 || *end != '\0' || end == v || x < lo || x > hi) {
        fprintf(stderr, "dqlab %s: %s: bad value '%.60s'\n", DQ_CHILD_COMMAND,
                name, v);
        return -1;
    }
    *out = x;
    return 0;
}

int dq_cmd_child(int argc, char **argv)
{
    dq_trial_params p;
    dq_child_spec c;
    dq_redis_target target;
    const char *role = NULL, *strategy = NULL, *log = NULL, *pw;
    char err[512];
    int64_t v;
    int rc;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        return 2; /* the parent is already gone */
    dq_trial_defaults(&p);
    memset(&c, 0, sizeof c);
    memset(&target, 0, sizeof target);
    c.skew_index = -1;
    c.die_index = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        char key[40];
        const char *val;

        if (strcmp(a, "--retry") == 0) {
            c.retry = true;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || eq == NULL ||
            (size_t)(eq - a) >= sizeof key) {
            fprintf(stderr, "dqlab %s: unexpected argument '%.60s' (an "
                    "internal command of process-mode trials)\n",
                    DQ_CHILD_COMMAND, a);
            return 2;
        }
        snprintf(key, sizeof key, "%.*s", (int)(eq - a - 2), a + 2);
        val = eq + 1;
#define NUM(k, lo, hi, dst)                                   \
    else if (strcmp(key, k) == 0) {                           \
        if (num(k, val, lo, hi, &v) != 0)                     \
            return 2;                                         \
        dst = v;                                              \
    }
        if (strcmp(key, "role") == 0)
            role = val;
        else if (strcmp(key, "strategy") == 0)
            strategy = val;
        else if (strcmp(key, "queue") == 0)
            snprintf(p.queue, sizeof p.queue, "%s", val);
        else if (strcmp(key, "log") == 0)
            log = val;
        else if (strcmp(key, "name") == 0)
            c.name = val;
        else if (strcmp(key, "seed") == 0)
            p.seed = strtoull(val, NULL, 10);
        NUM("tasks", 0, INT64_MAX, p.tasks)
        NUM("producers", 1, 1024, p.producers)
        NUM("consumers", 1, 1024, p.consumers)
        NUM("work-us", 0, INT64_MAX, p.work_us)
        NUM("payload-bytes", 0, INT64_MAX, p.payload_bytes)
        NUM("claim-timeout-ms", 0, INT64_MAX, p.claim_timeout_ms)
        NUM("enqueue-batch", 1, DQ_TRIAL_MAX_ENQUEUE_BATCH, p.enqueue_batch)
        NUM("clock-offset-us", INT64_MIN / 2, INT64_MAX / 2, c.clock_offset_us)
        NUM("skew-index", -1, 1024, c.skew_index)
        NUM("die-claim", 0, INT64_MAX, c.die_claim)
        NUM("die-index", -1, 1024, c.die_index)
        NUM("port", 1, 65535, target.port)
        NUM("db", 0, 1 << 20, target.db)
        else if (strcmp(key, "delay-ms") == 0) {
            if (sscanf(val, "%" SCNd64 ":%" SCNd64, &p.delay_min_ms,
                       &p.delay_max_ms) != 2) {
                fprintf(stderr, "dqlab %s: delay-ms: bad value '%.60s'\n",
                        DQ_CHILD_COMMAND, val);
                return 2;
            }
        } else if (strcmp(key, "die-point") == 0) {
            c.die_point = dq_kill_point_parse(val);
        } else if (strcmp(key, "host") == 0) {
            snprintf(target.host, sizeof target.host, "%s", val);
        } else if (strcmp(key, "user") == 0) {
            snprintf(target.user, sizeof target.user, "%s", val);
        } else if (strcmp(key, "opt") == 0) {
            if (p.nopts >= DQ_MAX_OPTS ||
                dq_opt_parse(val, &p.opts[p.nopts], err, sizeof err) != DQ_OK) {
                fprintf(stderr, "dqlab %s: opt: bad option '%.60s'\n",
                        DQ_CHILD_COMMAND, val);
                return 2;
            }
            p.nopts++;
        } else {
            fprintf(stderr, "dqlab %s: unknown argument --%s\n",
                    DQ_CHILD_COMMAND, key);
            return 2;
        }
#undef NUM
    }
    if (role == NULL || strategy == NULL || log == NULL || p.queue[0] == '\0' ||
        (strcmp(role, "all") != 0 && (strcmp(role, "consumer") != 0 ||
                                      c.name == NULL))) {
        fprintf(stderr, "dqlab %s: --role, --strategy, --queue, --log (and "
                "--name for a consumer) are required\n", DQ_CHILD_COMMAND);
        return 2;
    }
    c.all_in_one = strcmp(role, "all") == 0;
    p.strategy = dq_strategy_find(strategy);
    if (p.strategy == NULL) {
        fprintf(stderr, "dqlab %s: unknown strategy '%.60s'\n",
                DQ_CHILD_COMMAND, strategy);
        return 2;
    }
    if (target.host[0] != '\0') {
        pw = getenv("DQLAB_CHILD_REDIS_PASSWORD");
        if (pw != NULL)
            snprintf(target.password, sizeof target.password, "%s", pw);
        p.redis = &target;
    }
    unsetenv("DQLAB_CHILD_REDIS_PASSWORD");
    p.log_path = log; /* named in a failed write's message */
    c.log = dq_eventlog_open_append(log, DQ_LOG_SYNC_EACH, err, sizeof err);
    if (c.log == NULL) {
        fprintf(stderr, "dqlab %s: %s\n", DQ_CHILD_COMMAND, err);
        return 2;
    }
    rc = dq_trial_child_run(&p, &c, err, sizeof err);
    dq_eventlog_close(c.log);
    if (rc != 0) {
        fprintf(stderr, "dqlab %s: %s\n", DQ_CHILD_COMMAND, err);
        return 2;
    }
    return 0;
}
