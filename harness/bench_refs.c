/* bench_refs.c -- part 1 of `dqlab bench`: the bare commands' ceiling, and
 * the redis-benchmark references every share in the targets table is
 * taken of (bench.h: ceiling.csv, references.csv).
 *
 * Why redis-benchmark and not only our own loop: a yardstick we wrote
 * could be slow in the same way our strategies are (hiredis formatting,
 * our reconnect checks) and hide it; redis-benchmark is the server's own
 * tool, C with its own event loop.  Why measure it more than once: on a
 * shared machine the load moves by tens of percent within minutes, so the
 * target trials (bench_tp.c) run in rounds and each round starts with its
 * reference; the share is taken of the median of those runs, measured
 * beside the trials it judges.
 *
 * redis-benchmark runs only against the private server (it writes its key
 * "myzset", deleted after each run, and is never given a password); with
 * --redis the references are not measured and the targets that are
 * shares of them say so.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "../strategies/rconn.h"
#include "bench_int.h"
#include "ceiling.h"
#include "runmeta.h"

/* The two references (DQ_BREF_*): name, tests, clients, pipeline. */
static const struct {
    const char *name;
    const char *tests;
    int clients, pipeline;
} refdef[DQ_BREF_N] = {
    [DQ_BREF_ZADD_C4] = {"zadd-c4", "zadd", 4, 1},
    [DQ_BREF_ZADD_P100] = {"zadd-c1-p100", "zadd", 1, 100},
};

#define RB_KEYSPACE 100000

/* Deletes redis-benchmark's key on the private server. */
static void drop_myzset(const dq_bench *b)
{
    dq_queue q;
    redisContext *c = NULL;

    memset(&q, 0, sizeof q);
    dq_bench_config(b, &q.cfg, "bench", NULL, "bench-admin");
    if (dq_redis_connect(&q, NULL, 5000, &c) == DQ_OK) {
        freeReplyObject(redisCommand(c, "DEL myzset"));
        redisFree(c);
    }
}

/* Runs *run with the server's CPU time around it, per command of every
 * test (*cpu_us_per_op, -1 unknown).  Returns dq_ceiling_redis_benchmark's
 * code. */
static int rb_timed(dq_bench *b, dq_rb_run *run, double *cpu_us_per_op,
                    char *err, size_t errlen)
{
    int64_t c0 = dq_bench_redis_cpu_us(b), c1, ops = run->requests;
    int rc = dq_ceiling_redis_benchmark(b->redis->host, b->redis->port, run,
                                        err, errlen);

    for (const char *t = run->tests; *t; t++)
        ops += *t == ',' ? run->requests : 0; /* requests per test */
    c1 = dq_bench_redis_cpu_us(b);
    *cpu_us_per_op = c0 >= 0 && c1 >= c0 && ops > 0
                         ? (double)(c1 - c0) / (double)ops
                         : -1;
    drop_myzset(b);
    return rc;
}

/* One references.csv row (and b->refs). */
static void ref_row(dq_bench *b, int which, const char *when,
                    const dq_rb_run *run, double rps, double cpu)
{
    char cmd[160];
    dq_bench_ref *r;

    snprintf(cmd, sizeof cmd, "redis-benchmark -t %s -c %d -P %d -n %"
             PRId64 " -r %d", run->tests, run->clients, run->pipeline,
             run->requests, RB_KEYSPACE);
    fprintf(b->references, "%s,", refdef[which].name);
    dq_runmeta_csv_field(b->references, when, ',');
    dq_runmeta_csv_field(b->references, cmd, ',');
    fprintf(b->references, "%d,%d,%" PRId64 ",%.1f,%.3f\n", run->clients,
            run->pipeline, run->requests, rps, cpu);
    fflush(b->references);
    if ((r = dq_bench_grow((void **)&b->refs, &b->nrefs, sizeof *r)) != NULL)
        *r = (dq_bench_ref){which, rps, cpu};
}

/* A reference run with tests (its own, or "zadd,zpopmin" at the start for
 * ceiling.csv's redis-benchmark rows).  False when it did not run. */
static bool reference_run(dq_bench *b, int which, const char *when,
                          const char *tests, dq_rb_run *run)
{
    const dq_bench_plan *pl = b->pl;
    char err[512], what[96];
    double cpu;
    int rc;

    if (!b->private_server || dq_bench_stop())
        return false;
    *run = (dq_rb_run){.tests = tests, .clients = refdef[which].clients,
                       .pipeline = refdef[which].pipeline,
                       .requests = which == DQ_BREF_ZADD_C4
                                       ? pl->rb_c4_requests
                                       : pl->rb_p100_requests,
                       .keyspace = RB_KEYSPACE};
    if (run->requests <= 0)
        return false;
    rc = rb_timed(b, run, &cpu, err, sizeof err);
    if (rc == 1) {
        dq_bench_say(b, "redis-benchmark not installed (redis-tools): no "
                     "reference %s", refdef[which].name);
        return false;
    }
    if (rc != 0) {
        snprintf(what, sizeof what, "reference %s (%s)", refdef[which].name,
                 when);
        dq_bench_unit_error(b, what, err);
        return false;
    }
    /* The reference is the ZADD figure (a ZPOPMIN test in the same run,
     * at the start, pops what ZADD added; the command says so). */
    ref_row(b, which, when, run, run->zadd_rps, cpu);
    return true;
}

bool dq_bench_reference(dq_bench *b, int which, const char *when)
{
    dq_rb_run run;

    if (which < 0 || which >= DQ_BREF_N)
        return false;
    dq_bench_say(b, "reference %s (%s)", refdef[which].name, when);
    return reference_run(b, which, when, refdef[which].tests, &run);
}

void dq_bench_part_ceiling(dq_bench *b)
{
    const dq_bench_plan *pl = b->pl;
    char err[512];
    dq_ceiling c;
    dq_rb_run run;

    dq_bench_say(b, "ceiling: %" PRId64 " ZADD then ZPOPMIN, pipelines of "
                 "%d", pl->ceil_members, pl->ceil_pipeline);
    if (dq_ceiling_measure(b->redis, pl->ceil_members, pl->ceil_pipeline, &c,
                           err, sizeof err) != 0) {
        dq_bench_unit_error(b, "ceiling", err);
    } else {
        fprintf(b->ceiling, "zadd,dqlab,%" PRId64 ",%d,%.4f,%.1f\n",
                c.members, c.pipeline, c.zadd_s, c.zadd_per_s);
        fprintf(b->ceiling, "zpopmin,dqlab,%" PRId64 ",%d,%.4f,%.1f\n",
                c.members, c.pipeline, c.zpopmin_s, c.zpopmin_per_s);
        fflush(b->ceiling);
    }
    if (!b->private_server) {
        dq_bench_say(b, "--redis: redis-benchmark does not run (references "
                     "not measured)");
        return;
    }
    dq_bench_say(b, "reference zadd-c1-p100 (start, with zpopmin)");
    if (reference_run(b, DQ_BREF_ZADD_P100, "start", "zadd,zpopmin", &run)) {
        fprintf(b->ceiling, "zadd,redis-benchmark,%" PRId64 ",%d,0,%.1f\n",
                run.requests, run.pipeline, run.zadd_rps);
        if (run.zpopmin_rps >= 0)
            fprintf(b->ceiling, "zpopmin,redis-benchmark,%" PRId64
                    ",%d,0,%.1f\n", run.requests, run.pipeline,
                    run.zpopmin_rps);
        fflush(b->ceiling);
    }
    dq_bench_reference(b, DQ_BREF_ZADD_C4, "start");
}
