/* bench.c -- `dqlab bench`: throughput, the Redis ceiling, backlog scaling
 * and lateness under load, stored as CSV for the report (bench.h).
 *
 * Why its own command and not an experiment file: the experiments answer
 * "is it correct, and how late" with a matrix of checked trials; the bench
 * answers "how fast, at what cost, and how does the cost grow" and needs
 * loops a trial does not have (a backlog preloaded with pipelining, each
 * claim timed on its own, producers paced to an offered rate, the bare
 * command ceiling in the same run).  The end-to-end throughput still goes
 * through dq_trial_run (trial.h), so those figures include the harness
 * recording and checking every event, as the issue asks.
 *
 * Every unit (one strategy, one cell) opens its own queue name
 * "bench-<part>-<n>-<pid>", purges it before and after, and writes one CSV
 * row as soon as it is measured (fflush), so an interrupted run keeps what
 * it measured.  A unit that fails (a strategy error, Redis too old) is
 * named on stderr, counted in meta.txt and skipped; the run goes on.
 *
 * The backlog preload bypasses the strategies' enqueue on purpose: one
 * round trip per task would take minutes at 1M.  It writes exactly what
 * dq_zh_enqueue / the list enqueue script write for a task never claimed
 * (ZADD dq:{Q}:z due id; HSET dq:{Q}:p id payload), so it applies only to
 * the strategies in zset_layout[] below; the heap is preloaded through
 * dq_enqueue (in-process, fast).
 *
 * The throughput part also runs batched variants (tp_variants[] below:
 * lua and zpopmin with batch=16 claims and enqueue_batch=64, lua with
 * batch=1 claims and enqueue_batch=64), the configurations the issue's
 * targets name; their rows carry the options in throughput.csv.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../strategies/dq.h"
#include "../strategies/rconn.h"
#include "bench.h"
#include "ceiling.h"
#include "checker.h"
#include "eventlog.h"
#include "experiment.h"
#include "redis_server.h"
#include "redis_url.h"
#include "runmeta.h"
#include "signals.h"
#include "trial.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define PAYLOAD_BYTES 16
static const char payload16[PAYLOAD_BYTES + 1] = "dqlab-bench-pay.";

/* Strategies whose never-claimed tasks are exactly ZADD z + HSET p. */
static const char *const zset_layout[] = {
    "naive", "naive-checked", "zpopmin", "lua", "lua-lease", "list",
    "list-reliable", "streams", NULL};

/* ---- The plan of each level ------------------------------------------- */

typedef struct plan {
    const char *name;
    int64_t ceil_members;
    int ceil_pipeline;
    int64_t rb_requests;          /* 0: no redis-benchmark */
    int consumers[8];
    size_t nconsumers;
    int producers;
    int64_t tp_tasks;
    int tp_repeats;
    int64_t enq_tasks;
    int64_t backlogs[8];
    size_t nbacklogs;
    int64_t bl_claims;
    int64_t rates[8];
    size_t nrates;
    int64_t lat_ms;
    int lat_consumers;
    int lat_producers;
} plan;

static const plan plans[] = {
    [DQ_BENCH_SMOKE] = {"smoke", 2000, 100, 0, {1, 2}, 2, 1, 200, 1, 200,
                        {100, 1000}, 2, 50, {200, 1000}, 2, 300, 2, 1},
    [DQ_BENCH_QUICK] = {"quick", 100000, 100, 100000, {1, 2, 4, 8}, 4, 2,
                        5000, 3, 5000, {1000, 10000, 100000}, 3, 2000,
                        {200, 2000, 8000, 32000}, 4, 1500, 4, 2},
    [DQ_BENCH_FULL] = {"full", 1000000, 100, 1000000, {1, 2, 4, 8}, 4, 2,
                       20000, 5, 20000, {1000, 10000, 100000, 1000000}, 4,
                       5000, {200, 2000, 8000, 32000, 128000}, 5, 5000, 4,
                       2},
};

/* ---- Arguments --------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: dqlab bench [--smoke|--quick|--full] [--results DIR] "
        "[--redis URL]\n"
        "                   [--only PARTS] [--strategies LIST] "
        "[--keep-logs]\n\n"
        "Measures every strategy's speed and cost and stores CSV under\n"
        "DIR/bench/YYYYmmdd-HHMMSS/ (DIR/bench/latest: the newest complete "
        "run);\n`dqlab report DIR` turns it into the Performance section.\n\n"
        "  --quick        the default: about 5 minutes on 2 cores\n"
        "  --full         backlog up to 1,000,000 tasks, more repeats\n"
        "  --smoke        a few seconds, for tests (figures meaningless)\n"
        "  --results DIR  results root (default results)\n"
        "  --redis URL    redis://[user:pass@]host:port[/db] instead of a "
        "private server\n"
        "                 (redis-benchmark then does not run)\n"
        "  --only PARTS   comma list of ceiling, throughput, backlog, "
        "lateness\n"
        "  --strategies LIST  comma list of strategy names (default all)\n"
        "  --keep-logs    keep the event logs under logs/\n");
}

static int parse_parts(const char *s, unsigned *out, char *err,
                       size_t errlen)
{
    static const struct {
        const char *name;
        unsigned bit;
    } parts[] = {{"ceiling", DQ_BENCH_CEILING},
                 {"throughput", DQ_BENCH_THROUGHPUT},
                 {"backlog", DQ_BENCH_BACKLOG},
                 {"lateness", DQ_BENCH_LATENESS}};
    char buf[256];
    unsigned bits = 0;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p;
         p = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < sizeof parts / sizeof parts[0]; i++)
            if (strcmp(p, parts[i].name) == 0)
                break;
        if (i == sizeof parts / sizeof parts[0]) {
            snprintf(err, errlen, "--only: unknown part '%s' (ceiling, "
                     "throughput, backlog, lateness)", p);
            return -1;
        }
        bits |= parts[i].bit;
    }
    if (bits == 0) {
        snprintf(err, errlen, "--only: empty list (ceiling, throughput, "
                 "backlog, lateness)");
        return -1;
    }
    *out = bits;
    return 0;
}

static int parse_strategies(const char *s, dq_bench_opts *o, char *err,
                            size_t errlen)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    o->nstrategies = 0;
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p;
         p = strtok_r(NULL, ",", &save)) {
        const dq_strategy *st = dq_strategy_find(p);
        if (st == NULL) {
            snprintf(err, errlen, "--strategies: unknown strategy '%s' "
                     "(see dqlab list)", p);
            return -1;
        }
        if (o->nstrategies == DQ_BENCH_MAX_STRATEGIES) {
            snprintf(err, errlen, "--strategies: more than %d names",
                     DQ_BENCH_MAX_STRATEGIES);
            return -1;
        }
        o->strategies[o->nstrategies++] = st;
    }
    if (o->nstrategies == 0) {
        snprintf(err, errlen, "--strategies: empty list");
        return -1;
    }
    return 0;
}

int dq_bench_parse_args(int argc, char **argv, dq_bench_opts *o, char *err,
                        size_t errlen)
{
    const char *level_opt = NULL;
    memset(o, 0, sizeof *o);
    o->level = DQ_BENCH_QUICK;
    o->parts = DQ_BENCH_ALL;
    snprintf(o->results, sizeof o->results, "results");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool takes = strcmp(a, "--results") == 0 ||
                     strcmp(a, "--redis") == 0 || strcmp(a, "--only") == 0 ||
                     strcmp(a, "--strategies") == 0;
        if (takes && (i + 1 >= argc || argv[i + 1][0] == '\0')) {
            snprintf(err, errlen, "%s needs a value", a);
            return -1;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(a, "--smoke") == 0 || strcmp(a, "--quick") == 0 ||
                   strcmp(a, "--full") == 0) {
            if (level_opt != NULL && strcmp(level_opt, a) != 0) {
                snprintf(err, errlen, "%s and %s exclude each other",
                         level_opt, a);
                return -1;
            }
            level_opt = a;
            o->level = a[2] == 's' ? DQ_BENCH_SMOKE
                       : a[2] == 'q' ? DQ_BENCH_QUICK : DQ_BENCH_FULL;
        } else if (strcmp(a, "--results") == 0) {
            if (strlen(argv[i + 1]) >= 900) {
                snprintf(err, errlen, "--results: path too long");
                return -1;
            }
            snprintf(o->results, sizeof o->results, "%s", argv[++i]);
        } else if (strcmp(a, "--redis") == 0) {
            char e2[256];
            if (dq_redis_url_parse(argv[++i], &o->redis, e2, sizeof e2) !=
                0) {
                snprintf(err, errlen, "--redis: %s", e2);
                return -1;
            }
            o->have_redis = true;
        } else if (strcmp(a, "--only") == 0) {
            if (parse_parts(argv[++i], &o->parts, err, errlen) != 0)
                return -1;
        } else if (strcmp(a, "--strategies") == 0) {
            if (parse_strategies(argv[++i], o, err, errlen) != 0)
                return -1;
        } else if (strcmp(a, "--keep-logs") == 0) {
            o->keep_logs = true;
        } else if (a[0] == '-') {
            snprintf(err, errlen, "unknown option %s (see dqlab bench "
                     "--help)", a);
            return -1;
        } else {
            snprintf(err, errlen, "unexpected argument %s (see dqlab bench "
                     "--help)", a);
            return -1;
        }
    }
    dq_experiment_command_line(argc, argv, o->command, sizeof o->command);
    return 0;
}

/* ---- The run ------------------------------------------------------------ */

typedef struct bench {
    const dq_bench_opts *o;
    const plan *pl;
    const dq_redis_target *redis;  /* the server every unit uses */
    bool private_server;
    char redis_version[32];
    char dir[PATH_MAX];            /* results/bench/<stamp> */
    char benchdir[PATH_MAX];       /* results/bench */
    char stamp[40];
    char logs[PATH_MAX];           /* dir/logs */
    FILE *ceiling, *throughput, *backlog, *lateness;
    int unit;                      /* queue-name counter */
    int errors;
    char first_error[512];
    char started[64];
} bench;

static bool selected(const bench *b, const dq_strategy *s)
{
    if (b->o->nstrategies == 0)
        return true;
    for (size_t i = 0; i < b->o->nstrategies; i++)
        if (b->o->strategies[i] == s)
            return true;
    return false;
}

static bool zset_based(const dq_strategy *s)
{
    for (size_t i = 0; zset_layout[i]; i++)
        if (strcmp(zset_layout[i], s->name) == 0)
            return true;
    return false;
}

static bool stop_requested(void)
{
    return dq_signals_caught() || dq_trial_interrupted();
}

static void unit_error(bench *b, const char *what, const char *msg)
{
    b->errors++;
    if (b->first_error[0] == '\0')
        snprintf(b->first_error, sizeof b->first_error, "%s: %s", what, msg);
    fprintf(stderr, "dqlab bench: %s: %s (skipped)\n", what, msg);
}

static void queue_name(bench *b, const char *part, char *buf, size_t len)
{
    snprintf(buf, len, "bench-%s-%d-%ld", part, ++b->unit, (long)getpid());
}

static void fill_config(const bench *b, dq_config *cfg, const char *queue,
                        dq_local *local, const char *who)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->queue = queue;
    cfg->redis_host = b->redis->host;
    cfg->redis_port = b->redis->port;
    cfg->redis_user = b->redis->user[0] ? b->redis->user : NULL;
    cfg->redis_password = b->redis->password[0] ? b->redis->password : NULL;
    cfg->redis_db = b->redis->db;
    cfg->local = local;
    cfg->consumer = who;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return (a > c) - (a < c);
}

/* ---- Part 1: the ceiling ---------------------------------------------- */

static void part_ceiling(bench *b)
{
    const plan *pl = b->pl;
    char err[512];
    dq_ceiling c;
    fprintf(stderr, "dqlab bench: ceiling: %" PRId64 " ZADD then ZPOPMIN, "
            "pipelines of %d\n", pl->ceil_members, pl->ceil_pipeline);
    if (dq_ceiling_measure(b->redis, pl->ceil_members, pl->ceil_pipeline, &c,
                           err, sizeof err) != 0) {
        unit_error(b, "ceiling", err);
        return;
    }
    fprintf(b->ceiling, "zadd,dqlab,%" PRId64 ",%d,%.4f,%.1f\n", c.members,
            c.pipeline, c.zadd_s, c.zadd_per_s);
    fprintf(b->ceiling, "zpopmin,dqlab,%" PRId64 ",%d,%.4f,%.1f\n",
            c.members, c.pipeline, c.zpopmin_s, c.zpopmin_per_s);
    fflush(b->ceiling);
    if (!b->private_server || pl->rb_requests == 0 || stop_requested())
        return;
    double za, zp;
    int rc = dq_ceiling_redis_benchmark(b->redis->host, b->redis->port,
                                        pl->rb_requests, pl->ceil_pipeline,
                                        &za, &zp, err, sizeof err);
    if (rc == 1) {
        fprintf(stderr, "dqlab bench: redis-benchmark not installed; "
                "dqlab's own ceiling only\n");
        return;
    }
    if (rc != 0) {
        unit_error(b, "ceiling redis-benchmark", err);
        return;
    }
    fprintf(b->ceiling, "zadd,redis-benchmark,%" PRId64 ",%d,0,%.1f\n",
            pl->rb_requests, pl->ceil_pipeline, za);
    if (zp >= 0)
        fprintf(b->ceiling, "zpopmin,redis-benchmark,%" PRId64 ",%d,0,%.1f\n",
                pl->rb_requests, pl->ceil_pipeline, zp);
    fflush(b->ceiling);
    /* redis-benchmark's key, on our private server. */
    dq_queue q;
    redisContext *rc_ctx = NULL;
    memset(&q, 0, sizeof q);
    fill_config(b, &q.cfg, "bench", NULL, NULL);
    if (dq_redis_connect(&q, NULL, 5000, &rc_ctx) == DQ_OK) {
        freeReplyObject(redisCommand(rc_ctx, "DEL myzset"));
        redisFree(rc_ctx);
    }
}

/* ---- Part 2: throughput ------------------------------------------------ */

/* One handle enqueues n tasks due now, timed: dq_enqueue per task, or
 * dq_enqueue_many in groups of batch (> 1).  Returns 0 or -1 + err. */
static int enqueue_only(bench *b, const dq_strategy *s, int64_t n,
                        int64_t batch, double *seconds, char *err,
                        size_t errlen)
{
    char queue[65];
    dq_config cfg;
    dq_queue *q = NULL;
    dq_local *local = dq_local_new();
    size_t nb = batch > 1 ? (size_t)batch : 1;
    dq_enqueue_item *items = calloc(nb, sizeof *items);
    char (*ids)[24] = calloc(nb, sizeof *ids);
    int ret = -1;
    if (local == NULL || items == NULL || ids == NULL) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    queue_name(b, "enq", queue, sizeof queue);
    fill_config(b, &cfg, queue, local, "bench-producer");
    if (dq_open(s, &cfg, &q, err, errlen) != DQ_OK)
        goto done;
    if (q->s->purge != NULL)
        dq_purge(q);
    int64_t t0 = dq_mono_us();
    for (int64_t i = 0; i < n;) {
        size_t k = 0;
        int64_t now = dq_now_ms(q);
        for (; k < nb && i < n; k++, i++) {
            snprintf(ids[k], sizeof ids[k], "e%" PRId64, i);
            items[k] = (dq_enqueue_item){ids[k], payload16, PAYLOAD_BYTES,
                                         now};
        }
        int rc = nb == 1 ? dq_enqueue(q, ids[0], payload16, PAYLOAD_BYTES,
                                      now)
                         : dq_enqueue_many(q, items, k);
        if (rc != DQ_OK) {
            snprintf(err, errlen, "enqueue: %s", dq_errstr(q));
            goto done;
        }
        if ((i & 1023) < (int64_t)k && stop_requested())
            break;
    }
    *seconds = (double)(dq_mono_us() - t0) / 1e6;
    ret = 0;
done:
    if (q != NULL) {
        if (q->s->purge != NULL)
            dq_purge(q);
        dq_close(q);
    }
    dq_local_free(local);
    free(items);
    free(ids);
    return ret;
}

/* Tasks per throughput trial: an in-process strategy (the heap) goes
 * through 5000 tasks in a few ms, too short to time, so it gets
 * IN_PROCESS_FACTOR times more; a batched variant (next) runs
 * VARIANT_FACTOR times more, for the same reason. */
#define IN_PROCESS_FACTOR 20
#define VARIANT_FACTOR 10
static int64_t tp_tasks(const plan *pl, const dq_strategy *s)
{
    return (s->flags & DQ_G_NEEDS_REDIS) ? pl->tp_tasks
                                         : pl->tp_tasks * IN_PROCESS_FACTOR;
}

/* The batched variants of the throughput part, besides every strategy
 * with its defaults: what the targets are about (variadic
 * enqueue, batched claims; and one claim round trip per task with a
 * batched enqueue, so that the claim side alone is measured).  In
 * throughput.csv: options "k=v;k=v" with enqueue_batch among them. */
typedef struct tp_variant {
    const char *strategy;
    const char *opt;          /* one strategy option "k=v", or NULL */
    int64_t enqueue_batch;
} tp_variant;

static const tp_variant tp_variants[] = {
    {"lua", NULL, 64},
    {"lua", "batch=16", 64},
    {"zpopmin", "batch=16", 64},
};

/* The throughput.csv options field of a variant ("" for the defaults). */
static void variant_options(const tp_variant *v, char *buf, size_t len)
{
    if (v == NULL) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, len, "%s%senqueue_batch=%" PRId64, v->opt ? v->opt : "",
             v->opt ? ";" : "", v->enqueue_batch);
}

/* Enqueue-only repeats of s (variant v, NULL for the defaults). */
static void tp_enqueue(bench *b, const dq_strategy *s, const tp_variant *v)
{
    const plan *pl = b->pl;
    char err[512], what[160], opts[128];
    int64_t ne = tp_tasks(pl, s) * pl->enq_tasks / pl->tp_tasks;
    if (v != NULL)
        ne *= VARIANT_FACTOR;
    variant_options(v, opts, sizeof opts);
    for (int rep = 1; rep <= pl->tp_repeats && !stop_requested(); rep++) {
        double sec = 0;
        snprintf(what, sizeof what, "throughput %s%s%s enqueue repeat %d",
                 s->name, opts[0] ? " " : "", opts, rep);
        if (enqueue_only(b, s, ne, v ? v->enqueue_batch : 1, &sec, err,
                         sizeof err) != 0) {
            unit_error(b, what, err);
            break;
        }
        fprintf(b->throughput, "enqueue,%s,%s,1,0,%d,%" PRId64 ",%.4f,"
                "%.1f,0,0,0,0,-1,-1,0\n", s->name, opts, rep, ne, sec,
                sec > 0 ? (double)ne / sec : 0);
        fflush(b->throughput);
    }
}

/* End-to-end repeats of s (variant v, NULL for the defaults) at every
 * consumer count of the plan, through dq_trial_run. */
static void tp_e2e(bench *b, const dq_strategy *s, const tp_variant *v)
{
    const plan *pl = b->pl;
    char err[512], what[192], opts[128];
    variant_options(v, opts, sizeof opts);
    for (size_t ci = 0; ci < pl->nconsumers && !stop_requested(); ci++) {
        for (int rep = 1; rep <= pl->tp_repeats && !stop_requested();
             rep++) {
            dq_trial_params p;
            dq_trial_result r;
            char log[PATH_MAX + 64];
            dq_trial_defaults(&p);
            p.strategy = s;
            if (v != NULL && v->opt != NULL &&
                dq_opt_parse(v->opt, &p.opts[p.nopts++], err, sizeof err) !=
                    DQ_OK) {
                unit_error(b, "throughput variant", err);
                return;
            }
            p.enqueue_batch = v ? v->enqueue_batch : 1;
            p.producers = pl->producers;
            p.consumers = pl->consumers[ci];
            p.tasks = tp_tasks(pl, s) * (v ? VARIANT_FACTOR : 1);
            p.delay_min_ms = p.delay_max_ms = 0;
            p.payload_bytes = PAYLOAD_BYTES;
            p.grace_ms = 10000;
            p.seed = (uint64_t)(1000 + rep);
            p.redis = (s->flags & DQ_G_NEEDS_REDIS) ? b->redis : NULL;
            queue_name(b, "tp", p.queue, sizeof p.queue);
            p.fresh = true;
            snprintf(log, sizeof log, "%s/tp-%s-%d-c%d-r%d.log", b->logs,
                     s->name, b->unit, p.consumers, rep);
            unlink(log);
            p.log_path = log;
            snprintf(what, sizeof what, "throughput %s%s%s consumers %d "
                     "repeat %d", s->name, opts[0] ? " " : "", opts,
                     p.consumers, rep);
            int rc = dq_trial_run(&p, &r, err, sizeof err);
            if (!b->o->keep_logs)
                unlink(log);
            if (rc != 0) {
                if (rc < 0)
                    unit_error(b, what, err);
                return;
            }
            const dq_check *c = &r.check;
            fprintf(b->throughput, "e2e,%s,%s,%d,%d,%d,%" PRId64 ",%.4f,"
                    "%.1f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                    ",%" PRId64 ",", s->name, opts, p.producers,
                    p.consumers, rep, p.tasks, r.elapsed_s, r.tasks_per_s,
                    c->delivered, c->duplicates, c->lost, c->early,
                    r.redis_commands);
            if (r.redis_cpu_us >= 0)
                fprintf(b->throughput, "%.3f", r.redis_cpu_us / 1000.0);
            else
                fputs("-1", b->throughput);
            fprintf(b->throughput, ",%.3f\n", c->lateness.p99_ms);
            fflush(b->throughput);
        }
    }
}

static void part_throughput(bench *b)
{
    for (size_t si = 0; dq_strategies[si] && !stop_requested(); si++) {
        const dq_strategy *s = dq_strategies[si];
        if (!selected(b, s))
            continue;
        fprintf(stderr, "dqlab bench: throughput: %s\n", s->name);
        tp_enqueue(b, s, NULL);
        tp_e2e(b, s, NULL);
    }
    for (size_t i = 0; i < sizeof tp_variants / sizeof tp_variants[0] &&
                       !stop_requested(); i++) {
        const tp_variant *v = &tp_variants[i];
        const dq_strategy *s = dq_strategy_find(v->strategy);
        char opts[128];
        if (s == NULL || !selected(b, s))
            continue;
        variant_options(v, opts, sizeof opts);
        fprintf(stderr, "dqlab bench: throughput: %s %s\n", s->name, opts);
        tp_enqueue(b, s, v);
        tp_e2e(b, s, v);
    }
}

/* ---- Part 3: backlog scaling ------------------------------------------ */

static int64_t used_memory(dq_queue *adm, redisContext *c)
{
    int rc;
    redisReply *r = dq_redis_cmdf(adm, c, &rc, "INFO memory");
    int64_t v = -1;
    if (r != NULL && r->type == REDIS_REPLY_STRING) {
        const char *p = strstr(r->str, "\nused_memory:");
        if (p != NULL)
            v = strtoll(p + strlen("\nused_memory:"), NULL, 10);
    }
    if (r != NULL)
        freeReplyObject(r);
    return v;
}

/* INFO memory lazyfree_pending_objects (objects UNLINK still has to free
 * in the background), or -1. */
static int64_t lazyfree_pending(dq_queue *adm, redisContext *c)
{
    int rc;
    redisReply *r = dq_redis_cmdf(adm, c, &rc, "INFO memory");
    int64_t v = -1;
    if (r != NULL && r->type == REDIS_REPLY_STRING) {
        const char *p = strstr(r->str, "\nlazyfree_pending_objects:");
        if (p != NULL)
            v = strtoll(p + strlen("\nlazyfree_pending_objects:"), NULL, 10);
    }
    if (r != NULL)
        freeReplyObject(r);
    return v;
}

/* ZADD z due b<i> + HSET p b<i> payload for i in [0, n), 500 tasks (1000
 * commands) per pipeline. */
static int preload_zset(dq_queue *adm, redisContext *c, int64_t n,
                        int64_t due_ms, char *err, size_t errlen)
{
    enum { PER = 500 };
    char z[160], h[160], due[32];
    static char ids[PER][24];
    const char *argv[PER * 2][4];
    size_t lens[PER * 2][4];
    dq_redis_argv cmds[PER * 2];
    redisReply *replies[PER * 2];
    dq_redis_key(adm, DQ_ZH_ZSET, z, sizeof z);
    dq_redis_key(adm, DQ_ZH_HASH, h, sizeof h);
    snprintf(due, sizeof due, "%" PRId64, due_ms);
    for (int64_t i = 0; i < n; i += PER) {
        int k = (int)(n - i < PER ? n - i : PER);
        for (int j = 0; j < k; j++) {
            int il = snprintf(ids[j], sizeof ids[j], "b%" PRId64, i + j);
            const char **za = argv[2 * j], **ha = argv[2 * j + 1];
            size_t *zl = lens[2 * j], *hl = lens[2 * j + 1];
            za[0] = "ZADD", zl[0] = 4, za[1] = z, zl[1] = strlen(z);
            za[2] = due, zl[2] = strlen(due), za[3] = ids[j];
            zl[3] = (size_t)il;
            ha[0] = "HSET", hl[0] = 4, ha[1] = h, hl[1] = strlen(h);
            ha[2] = ids[j], hl[2] = (size_t)il, ha[3] = payload16;
            hl[3] = PAYLOAD_BYTES;
            cmds[2 * j] = (dq_redis_argv){4, za, zl};
            cmds[2 * j + 1] = (dq_redis_argv){4, ha, hl};
        }
        if (dq_redis_pipeline_ok(adm, c, (size_t)(2 * k), cmds, replies) !=
            DQ_OK) {
            snprintf(err, errlen, "preload: %s", adm->err);
            return -1;
        }
        for (int j = 0; j < 2 * k; j++)
            freeReplyObject(replies[j]);
        if ((i & 0xffff) == 0 && stop_requested())
            return -1;
    }
    return 0;
}

#define BACKLOG_ROUNDS 3

/* Median of n values (sorted in place). */
static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One strategy at one backlog: preload, enqueue `claims` due tasks, claim
 * them one by one.  Writes a backlog.csv row.  Returns 0 or -1 + err. */
static int backlog_unit(bench *b, const dq_strategy *s, int64_t n,
                        char *err, size_t errlen)
{
    const int64_t k = b->pl->bl_claims;
    char queue[65];
    dq_config cfg;
    dq_queue *q = NULL, adm;
    redisContext *c = NULL;
    dq_local *local = dq_local_new();
    double *enq = calloc((size_t)k, sizeof *enq);
    double *clm = calloc((size_t)k, sizeof *clm);
    dq_task t;
    int ret = -1;
    bool redis = (s->flags & DQ_G_NEEDS_REDIS) != 0;

    memset(&t, 0, sizeof t);
    memset(&adm, 0, sizeof adm);
    if (local == NULL || enq == NULL || clm == NULL) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    queue_name(b, "bl", queue, sizeof queue);
    fill_config(b, &cfg, queue, local, "bench-consumer");
    if (dq_open(s, &cfg, &q, err, errlen) != DQ_OK)
        goto done;
    if (q->s->purge != NULL)
        dq_purge(q);
    int64_t mem0 = -1, mem1 = -1;
    int64_t far = dq_wall_us() / 1000 + 3600 * 1000;
    double preload_s;
    int64_t t0 = dq_mono_us();
    if (redis) {
        adm.s = s;
        snprintf(adm.queue, sizeof adm.queue, "%s", queue);
        adm.cfg = cfg;
        adm.cfg.queue = adm.queue;
        if (dq_redis_connect(&adm, NULL, 60000, &c) != DQ_OK) {
            snprintf(err, errlen, "%s", adm.err);
            goto done;
        }
        /* The previous unit's UNLINK frees its keys in the background:
         * wait for that, or it would show here as negative memory. */
        for (int i = 0; i < 200 && lazyfree_pending(&adm, c) > 0; i++)
            dq_sleep_us(10000);
        mem0 = used_memory(&adm, c);
        t0 = dq_mono_us();
        if (preload_zset(&adm, c, n, far, err, errlen) != 0)
            goto done;
        preload_s = (double)(dq_mono_us() - t0) / 1e6;
        mem1 = used_memory(&adm, c);
    } else {
        char id[32];
        for (int64_t i = 0; i < n; i++) {
            snprintf(id, sizeof id, "b%" PRId64, i);
            if (dq_enqueue(q, id, payload16, PAYLOAD_BYTES, far) != DQ_OK) {
                snprintf(err, errlen, "preload: %s", dq_errstr(q));
                goto done;
            }
        }
        preload_s = (double)(dq_mono_us() - t0) / 1e6;
    }
    /* BACKLOG_ROUNDS rounds: enqueue k due tasks one dq_enqueue each
     * (timed), then claim them one by one (timed; the ack is not).  The
     * percentiles written are the medians of the rounds' percentiles, so
     * one scheduling hiccup of a shared 2-core machine does not make the
     * p99 alone. */
    double r_e50[BACKLOG_ROUNDS], r_e99[BACKLOG_ROUNDS];
    double r_c50[BACKLOG_ROUNDS], r_c90[BACKLOG_ROUNDS], r_c99[BACKLOG_ROUNDS];
    double esum = 0, cmax = 0;
    int64_t got_all = 0, empty = 0;
    char id[32];
    for (int round = 0; round < BACKLOG_ROUNDS; round++) {
        for (int64_t i = 0; i < k; i++) {
            snprintf(id, sizeof id, "d%d-%" PRId64, round, i);
            int64_t a = dq_mono_us();
            if (dq_enqueue(q, id, payload16, PAYLOAD_BYTES,
                           dq_now_ms(q) - 1) != DQ_OK) {
                snprintf(err, errlen, "enqueue: %s", dq_errstr(q));
                goto done;
            }
            enq[i] = (double)(dq_mono_us() - a);
            esum += enq[i];
        }
        int64_t got = 0;
        int64_t deadline = dq_mono_us() + 30 * 1000000LL;
        while (got < k && dq_mono_us() < deadline && !stop_requested()) {
            int64_t a = dq_mono_us();
            int rc = dq_claim(q, 1000, &t);
            int64_t d = dq_mono_us() - a;
            if (rc == DQ_EMPTY) {
                empty++;
                continue;
            }
            if (rc != DQ_OK) {
                snprintf(err, errlen, "claim: %s", dq_errstr(q));
                goto done;
            }
            if (t.id[0] != 'd') {
                snprintf(err, errlen, "claim returned backlog task %s "
                         "before its due time", t.id);
                goto done;
            }
            clm[got++] = (double)d;
            dq_ack(q, &t);
            dq_task_clear(&t);
        }
        if (stop_requested()) {
            snprintf(err, errlen, "interrupted");
            goto done;
        }
        qsort(enq, (size_t)k, sizeof *enq, cmp_double);
        qsort(clm, (size_t)got, sizeof *clm, cmp_double);
        r_e50[round] = dq_percentile(enq, (size_t)k, 50);
        r_e99[round] = dq_percentile(enq, (size_t)k, 99);
        r_c50[round] = dq_percentile(clm, (size_t)got, 50);
        r_c90[round] = dq_percentile(clm, (size_t)got, 90);
        r_c99[round] = dq_percentile(clm, (size_t)got, 99);
        if (got > 0 && clm[got - 1] > cmax)
            cmax = clm[got - 1];
        got_all += got;
    }
    int64_t mem = mem0 >= 0 && mem1 >= 0 ? mem1 - mem0 : -1;
    fprintf(b->backlog, "%s,,%" PRId64 ",%.4f,%" PRId64 ",", s->name, n,
            preload_s, mem);
    if (mem >= 0)
        fprintf(b->backlog, "%.1f", (double)mem / (double)n);
    else
        fputs("-1", b->backlog);
    fprintf(b->backlog, ",%.2f,%.2f,%.2f,%" PRId64 ",%.2f,%.2f,%.2f,%.2f,%"
            PRId64 "\n", esum / (double)(k * BACKLOG_ROUNDS),
            median_of(r_e50, BACKLOG_ROUNDS), median_of(r_e99, BACKLOG_ROUNDS),
            got_all, median_of(r_c50, BACKLOG_ROUNDS),
            median_of(r_c90, BACKLOG_ROUNDS), median_of(r_c99, BACKLOG_ROUNDS),
            cmax, empty);
    fflush(b->backlog);
    ret = 0;
done:
    dq_task_clear(&t);
    if (q != NULL) {
        if (q->s->purge != NULL)
            dq_purge(q);
        dq_close(q);
    }
    if (c != NULL)
        redisFree(c);
    dq_local_free(local);
    free(enq);
    free(clm);
    return ret;
}

static void part_backlog(bench *b)
{
    char err[512], what[128];
    for (size_t si = 0; dq_strategies[si] && !stop_requested(); si++) {
        const dq_strategy *s = dq_strategies[si];
        if (!selected(b, s) ||
            !(zset_based(s) || !(s->flags & DQ_G_NEEDS_REDIS)))
            continue;
        for (size_t i = 0; i < b->pl->nbacklogs && !stop_requested(); i++) {
            int64_t n = b->pl->backlogs[i];
            fprintf(stderr, "dqlab bench: backlog: %s, %" PRId64
                    " pending\n", s->name, n);
            snprintf(what, sizeof what, "backlog %s %" PRId64, s->name, n);
            if (backlog_unit(b, s, n, err, sizeof err) != 0) {
                if (!stop_requested())
                    unit_error(b, what, err);
                break;
            }
        }
    }
}

/* ---- Part 4: lateness under load -------------------------------------- */

typedef struct lat_run {
    const bench *b;
    const dq_strategy *s;
    char queue[65];
    dq_local *local;
    dq_eventlog *log;
    double rate_each;          /* tasks/s per producer */
    int64_t per_producer;
    int64_t start_mono_us;
    atomic_int_fast64_t enqueued, delivered;
    atomic_int producers_left;
    atomic_bool stop;
    atomic_int errors;
    char first_error[256];
    pthread_mutex_t mu;
} lat_run;

typedef struct lat_worker {
    lat_run *lr;
    int index;
    pthread_t th;
    bool started;
} lat_worker;

static void lat_error(lat_run *lr, const char *msg)
{
    if (atomic_fetch_add(&lr->errors, 1) == 0) {
        pthread_mutex_lock(&lr->mu);
        snprintf(lr->first_error, sizeof lr->first_error, "%s", msg);
        pthread_mutex_unlock(&lr->mu);
    }
}

static void *lat_producer(void *arg)
{
    lat_worker *w = arg;
    lat_run *lr = w->lr;
    char name[32], err[256], id[48];
    dq_config cfg;
    dq_queue *q = NULL;
    snprintf(name, sizeof name, "p%d", w->index);
    fill_config(lr->b, &cfg, lr->queue, lr->local, name);
    if (dq_open(lr->s, &cfg, &q, err, sizeof err) != DQ_OK) {
        lat_error(lr, err);
        goto out;
    }
    for (int64_t i = 0; i < lr->per_producer && !atomic_load(&lr->stop);
         i++) {
        int64_t target = lr->start_mono_us +
                         (int64_t)((double)i * 1e6 / lr->rate_each);
        int64_t now = dq_mono_us();
        if (target > now)
            dq_sleep_us(target - now);
        snprintf(id, sizeof id, "%s-%" PRId64, name, i);
        int64_t due = dq_now_ms(q);
        if (dq_enqueue(q, id, payload16, PAYLOAD_BYTES, due) != DQ_OK) {
            lat_error(lr, dq_errstr(q));
            continue;
        }
        dq_log_enqueue(lr->log, dq_wall_us(), id, due, name);
        atomic_fetch_add(&lr->enqueued, 1);
    }
out:
    dq_close(q);
    atomic_fetch_sub(&lr->producers_left, 1);
    return NULL;
}

static void *lat_consumer(void *arg)
{
    lat_worker *w = arg;
    lat_run *lr = w->lr;
    char name[32], err[256];
    dq_config cfg;
    dq_queue *q = NULL;
    dq_task t;
    memset(&t, 0, sizeof t);
    snprintf(name, sizeof name, "c%d", w->index);
    fill_config(lr->b, &cfg, lr->queue, lr->local, name);
    if (dq_open(lr->s, &cfg, &q, err, sizeof err) != DQ_OK) {
        lat_error(lr, err);
        return NULL;
    }
    while (!atomic_load(&lr->stop)) {
        int rc = dq_claim(q, 50, &t);
        if (rc == DQ_EMPTY)
            continue;
        if (rc != DQ_OK) {
            lat_error(lr, dq_errstr(q));
            dq_sleep_us(1000);
            continue;
        }
        dq_log_deliver(lr->log, dq_wall_us(), t.id, name, t.attempt);
        if (dq_ack(q, &t) == DQ_OK)
            dq_log_ack(lr->log, dq_wall_us(), t.id, name, t.attempt);
        dq_task_clear(&t);
        atomic_fetch_add(&lr->delivered, 1);
    }
    dq_task_clear(&t);
    dq_close(q);
    return NULL;
}

/* One strategy at one offered rate.  Returns 0 (row written, *saturated
 * set) or -1 + err. */
static int lateness_unit(bench *b, const dq_strategy *s, int64_t rate,
                         bool *saturated, char *err, size_t errlen)
{
    const plan *pl = b->pl;
    lat_run lr;
    lat_worker ws[64];
    int np = pl->lat_producers, nc = pl->lat_consumers, nw = 0, ret = -1;
    int64_t prod_end = 0;
    char log[PATH_MAX + 64];
    memset(&lr, 0, sizeof lr);
    memset(ws, 0, sizeof ws);
    pthread_mutex_init(&lr.mu, NULL);
    lr.b = b;
    lr.s = s;
    queue_name(b, "lat", lr.queue, sizeof lr.queue);
    lr.local = dq_local_new();
    snprintf(log, sizeof log, "%s/lat-%s-%" PRId64 ".log", b->logs, s->name,
             rate);
    unlink(log);
    if (lr.local == NULL) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    lr.log = dq_eventlog_create(log, err, errlen);
    if (lr.log == NULL)
        goto done;
    dq_log_header(lr.log, "strategy", s->name);
    dq_log_header(lr.log, "bench", "lateness");
    /* Purge first through a throwaway handle. */
    {
        dq_config cfg;
        dq_queue *q = NULL;
        fill_config(b, &cfg, lr.queue, lr.local, "bench-admin");
        if (dq_open(s, &cfg, &q, err, errlen) != DQ_OK)
            goto done;
        if (q->s->purge != NULL)
            dq_purge(q);
        dq_close(q);
    }
    lr.rate_each = (double)rate / np;
    lr.per_producer = (int64_t)(lr.rate_each * (double)pl->lat_ms / 1000.0);
    if (lr.per_producer < 1)
        lr.per_producer = 1;
    atomic_store(&lr.producers_left, np);
    for (int i = 0; i < nc; i++, nw++) {
        ws[nw].lr = &lr;
        ws[nw].index = i;
        if (pthread_create(&ws[nw].th, NULL, lat_consumer, &ws[nw]) != 0) {
            snprintf(err, errlen, "pthread_create failed");
            atomic_store(&lr.stop, true);
            goto join;
        }
        ws[nw].started = true;
    }
    dq_sleep_us(50000); /* consumers connected and waiting */
    lr.start_mono_us = dq_mono_us();
    for (int i = 0; i < np; i++, nw++) {
        ws[nw].lr = &lr;
        ws[nw].index = i;
        if (pthread_create(&ws[nw].th, NULL, lat_producer, &ws[nw]) != 0) {
            snprintf(err, errlen, "pthread_create failed");
            atomic_store(&lr.stop, true);
            goto join;
        }
        ws[nw].started = true;
    }
    /* Production, then drain: stop 3 s after the producers finished, or
     * sooner once there were as many deliveries as enqueued tasks and the
     * queue reports nothing pending (deliveries alone would stop early
     * when a strategy duplicates). */
    {
        dq_config cfg;
        dq_queue *adm = NULL;
        char e2[256];
        fill_config(b, &cfg, lr.queue, lr.local, "bench-admin");
        if (dq_open(s, &cfg, &adm, e2, sizeof e2) != DQ_OK)
            adm = NULL;
        for (;;) {
            dq_sleep_us(5000);
            if (stop_requested())
                break;
            if (prod_end == 0 && atomic_load(&lr.producers_left) == 0)
                prod_end = dq_mono_us();
            if (prod_end == 0)
                continue;
            if (dq_mono_us() - prod_end > 3000000)
                break;
            if (atomic_load(&lr.delivered) >= atomic_load(&lr.enqueued) &&
                (adm == NULL || adm->s->pending == NULL ||
                 dq_pending(adm) == 0))
                break;
        }
        dq_close(adm);
    }
    if (prod_end == 0)
        prod_end = dq_mono_us();
    atomic_store(&lr.stop, true);
join:
    for (int i = 0; i < nw; i++)
        if (ws[i].started)
            pthread_join(ws[i].th, NULL);
    if (nw < np + nc || stop_requested()) {
        if (stop_requested())
            snprintf(err, errlen, "interrupted");
        goto done;
    }
    if (dq_log_end(lr.log, dq_wall_us(), "clean") != 0) {
        snprintf(err, errlen, "%s: write: %s", log, strerror(errno));
        goto done;
    }
    dq_eventlog_close(lr.log);
    lr.log = NULL;
    if (atomic_load(&lr.errors) > 0) {
        snprintf(err, errlen, "%d strategy error(s), first: %s",
                 atomic_load(&lr.errors), lr.first_error);
        goto done;
    }
    dq_check c;
    if (dq_check_file(log, &c, err, errlen) != 0)
        goto done;
    double prod_s = (double)(prod_end - lr.start_mono_us) / 1e6;
    double sent = prod_s > 0 ? (double)c.enqueued / prod_s : 0;
    double span = c.last_us > c.first_us
                      ? (double)(c.last_us - c.first_us) / 1e6 : 0;
    double dps = span > 0 ? (double)c.delivered / span : 0;
    *saturated = sent < 0.9 * (double)rate || c.lateness.p99_ms > 1000 ||
                 c.lost > 0;
    fprintf(b->lateness, "%s,,%d,%d,%" PRId64 ",%.3f,%" PRIu64 ",%.1f,%"
            PRIu64 ",%.1f,%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.3f,%d\n",
            s->name, np, nc, rate, prod_s, c.enqueued, sent, c.delivered,
            dps, c.lost, c.duplicates, c.lateness.p50_ms, c.lateness.p99_ms,
            c.lateness.max_ms, *saturated ? 1 : 0);
    fflush(b->lateness);
    ret = 0;
done:
    dq_eventlog_close(lr.log);
    if (!b->o->keep_logs)
        unlink(log);
    {
        dq_config cfg;
        dq_queue *q = NULL;
        char e2[256];
        fill_config(b, &cfg, lr.queue, lr.local, "bench-admin");
        if (lr.local != NULL &&
            dq_open(s, &cfg, &q, e2, sizeof e2) == DQ_OK) {
            if (q->s->purge != NULL)
                dq_purge(q);
            dq_close(q);
        }
    }
    dq_local_free(lr.local);
    pthread_mutex_destroy(&lr.mu);
    return ret;
}

static void part_lateness(bench *b)
{
    char err[512], what[128];
    for (size_t si = 0; dq_strategies[si] && !stop_requested(); si++) {
        const dq_strategy *s = dq_strategies[si];
        if (!selected(b, s))
            continue;
        for (size_t i = 0; i < b->pl->nrates && !stop_requested(); i++) {
            int64_t rate = b->pl->rates[i];
            bool sat = false;
            fprintf(stderr, "dqlab bench: lateness: %s at %" PRId64
                    " tasks/s\n", s->name, rate);
            snprintf(what, sizeof what, "lateness %s %" PRId64 "/s",
                     s->name, rate);
            if (lateness_unit(b, s, rate, &sat, err, sizeof err) != 0) {
                if (!stop_requested())
                    unit_error(b, what, err);
                break;
            }
            if (sat)
                break;
        }
    }
}

/* ---- Files -------------------------------------------------------------- */

/* results/bench/<stamp>[-N], never an existing one (runmeta.h). */
static int make_dir(bench *b, char *err, size_t errlen)
{
    snprintf(b->benchdir, sizeof b->benchdir, "%s/bench", b->o->results);
    dq_runmeta_now_iso(b->started, sizeof b->started);
    if (dq_runmeta_make_dir(b->benchdir, b->stamp, sizeof b->stamp, b->dir,
                            sizeof b->dir, err, errlen) != 0)
        return -1;
    snprintf(b->logs, sizeof b->logs, "%s/logs", b->dir);
    return 0;
}

static FILE *open_csv(const bench *b, const char *name, const char *header,
                      char *err, size_t errlen)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", b->dir, name);
    FILE *f = fopen(path, "wx");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    fputs(header, f);
    fflush(f);
    return f;
}

static void join_i64(char *buf, size_t len, const int64_t *v, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%" PRId64,
                                i ? ", " : "", v[i]);
}

static int write_meta(const bench *b, bool complete, char *err,
                      size_t errlen)
{
    const plan *pl = b->pl;
    char path[PATH_MAX + 32], tmp[PATH_MAX + 48], buf[1024];
    snprintf(path, sizeof path, "%s/meta.txt", b->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "# dqlab bench metadata; key = value, one per line\n");
    dq_runmeta_kv(f, "experiment", "bench");
    dq_runmeta_kv(f, "title", "Performance and scale");
    dq_runmeta_kv(f, "level", pl->name);
    dq_runmeta_kv(f, "quick", b->o->level == DQ_BENCH_FULL ? "no" : "yes");
    dq_runmeta_kv(f, "command", b->o->command);
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; dq_strategies[i]; i++)
        if (selected(b, dq_strategies[i]))
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s",
                                    off ? ", " : "", dq_strategies[i]->name);
    dq_runmeta_kv(f, "strategies", buf);
    fprintf(f, "parts = %s%s%s%s\n",
            b->o->parts & DQ_BENCH_CEILING ? "ceiling " : "",
            b->o->parts & DQ_BENCH_THROUGHPUT ? "throughput " : "",
            b->o->parts & DQ_BENCH_BACKLOG ? "backlog " : "",
            b->o->parts & DQ_BENCH_LATENESS ? "lateness" : "");
    fprintf(f, "ceiling_members = %" PRId64 "\nceiling_pipeline = %d\n",
            pl->ceil_members, pl->ceil_pipeline);
    off = 0;
    for (size_t i = 0; i < pl->nconsumers; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%d",
                                i ? ", " : "", pl->consumers[i]);
    dq_runmeta_kv(f, "consumers", buf);
    fprintf(f, "producers = %d\ntasks = %" PRId64 "\nrepeats = %d\n"
            "enqueue_tasks = %" PRId64 "\nin_process_factor = %d\n"
            "variant_factor = %d\n",
            pl->producers, pl->tp_tasks, pl->tp_repeats, pl->enq_tasks,
            IN_PROCESS_FACTOR, VARIANT_FACTOR);
    off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof tp_variants / sizeof tp_variants[0];
         i++) {
        char o[128];
        variant_options(&tp_variants[i], o, sizeof o);
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s %s",
                                off ? ", " : "", tp_variants[i].strategy, o);
    }
    dq_runmeta_kv(f, "variants", buf);
    join_i64(buf, sizeof buf, pl->backlogs, pl->nbacklogs);
    dq_runmeta_kv(f, "backlog", buf);
    fprintf(f, "backlog_claims = %" PRId64 "\nbacklog_rounds = %d\n",
            pl->bl_claims, BACKLOG_ROUNDS);
    join_i64(buf, sizeof buf, pl->rates, pl->nrates);
    dq_runmeta_kv(f, "lateness_rates", buf);
    fprintf(f, "lateness_ms = %" PRId64 "\nlateness_consumers = %d\n"
            "lateness_producers = %d\npayload_bytes = %d\n", pl->lat_ms,
            pl->lat_consumers, pl->lat_producers, PAYLOAD_BYTES);
    if (b->private_server)
        snprintf(buf, sizeof buf, "private redis-server on 127.0.0.1:%d",
                 b->redis->port);
    else
        dq_redis_url_redacted(b->redis, buf, sizeof buf);
    dq_runmeta_kv(f, "redis", buf);
    dq_runmeta_kv(f, "redis_version", b->redis_version);
    dq_runmeta_kv(f, "date", b->started);
    dq_runmeta_now_iso(buf, sizeof buf);
    dq_runmeta_kv(f, "finished", complete ? buf : "");
    dq_runmeta_env(f); /* dqlab_commit, hostname, cpu_model, cores */
    dq_runmeta_kv(f, "complete", complete ? "yes" : "no");
    fprintf(f, "unit_errors = %d\n", b->errors);
    dq_runmeta_kv(f, "first_error", b->first_error);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* INFO server's redis_version, "unknown" when it cannot be read. */
/* Connects to t and writes its redis_version into buf (len bytes,
 * "unknown" when INFO does not say).  Returns 0, or -1 with the connect
 * error (host:port and the cause, never the password) in err. */
static int server_version(const dq_redis_target *t, char *buf, size_t len,
                          char *err, size_t errlen)
{
    dq_queue q;
    redisContext *c = NULL;
    snprintf(buf, len, "unknown");
    memset(&q, 0, sizeof q);
    q.cfg.redis_host = t->host;
    q.cfg.redis_port = t->port;
    q.cfg.redis_user = t->user[0] ? t->user : NULL;
    q.cfg.redis_password = t->password[0] ? t->password : NULL;
    q.cfg.redis_db = t->db;
    if (dq_redis_connect(&q, NULL, 5000, &c) != DQ_OK) {
        snprintf(err, errlen, "%s", q.err);
        return -1;
    }
    redisReply *r = redisCommand(c, "INFO server");
    if (r != NULL && r->type == REDIS_REPLY_STRING)
        dq_runmeta_redis_version(r->str, buf, len);
    if (r != NULL)
        freeReplyObject(r);
    redisFree(c);
    return 0;
}

int dq_cmd_bench(int argc, char **argv)
{
    dq_bench_opts o;
    bench b;
    dq_redis_server srv;
    dq_redis_target target;
    char err[1024];
    int ret = 2;

    memset(&b, 0, sizeof b);
    memset(&srv, 0, sizeof srv);
    int prc = dq_bench_parse_args(argc, argv, &o, err, sizeof err);
    if (prc == 1)
        return 0;
    if (prc != 0) {
        fprintf(stderr, "dqlab bench: %s\n", err);
        return 2;
    }
    b.o = &o;
    b.pl = &plans[o.level];

    /* The server first: nothing is written when it is not there. */
    if (o.have_redis) {
        b.redis = &o.redis;
        if (server_version(b.redis, b.redis_version, sizeof b.redis_version,
                           err, sizeof err) != 0) {
            fprintf(stderr, "dqlab bench: --redis: %s\n", err);
            return 2;
        }
    } else {
        dq_redis_server_opts so = {0};
        fprintf(stderr, "dqlab bench: starting a private redis-server...\n");
        if (dq_redis_server_start(&srv, &so, err, sizeof err) != 0) {
            if (dq_signals_caught()) {
                fprintf(stderr, "dqlab bench: interrupted\n");
                return 130;
            }
            fprintf(stderr, "dqlab bench: %s\n", err);
            return 2;
        }
        memset(&target, 0, sizeof target);
        snprintf(target.host, sizeof target.host, "127.0.0.1");
        target.port = srv.port;
        b.redis = &target;
        b.private_server = true;
        snprintf(b.redis_version, sizeof b.redis_version, "%s", srv.version);
    }
    if (make_dir(&b, err, sizeof err) != 0)
        goto fail;
    if ((b.ceiling = open_csv(&b, "ceiling.csv", "measure,source,ops,"
                              "pipeline,seconds,ops_per_s\n", err,
                              sizeof err)) == NULL ||
        (b.throughput = open_csv(&b, "throughput.csv", "kind,strategy,"
                                 "options,producers,consumers,repeat,tasks,"
                                 "seconds,tasks_per_s,delivered,duplicates,"
                                 "lost,early,redis_commands,redis_cpu_ms,"
                                 "lateness_p99_ms\n", err,
                                 sizeof err)) == NULL ||
        (b.backlog = open_csv(&b, "backlog.csv", "strategy,options,backlog,"
                              "preload_s,memory_bytes,bytes_per_task,"
                              "enqueue_us_mean,enqueue_us_p50,"
                              "enqueue_us_p99,claims,claim_us_p50,"
                              "claim_us_p90,claim_us_p99,claim_us_max,"
                              "empty_claims\n", err, sizeof err)) == NULL ||
        (b.lateness = open_csv(&b, "lateness.csv", "strategy,options,"
                               "producers,consumers,offered_per_s,seconds,"
                               "enqueued,sent_per_s,delivered,"
                               "delivered_per_s,lost,duplicates,"
                               "lateness_p50_ms,lateness_p99_ms,"
                               "lateness_max_ms,saturated\n", err,
                               sizeof err)) == NULL)
        goto fail;
    if (write_meta(&b, false, err, sizeof err) != 0)
        goto fail;
    fprintf(stderr, "dqlab bench: %s run into %s\n", b.pl->name, b.dir);

    int64_t t0 = dq_mono_us();
    if ((o.parts & DQ_BENCH_CEILING) && !stop_requested())
        part_ceiling(&b);
    if ((o.parts & DQ_BENCH_THROUGHPUT) && !stop_requested())
        part_throughput(&b);
    if ((o.parts & DQ_BENCH_BACKLOG) && !stop_requested())
        part_backlog(&b);
    if ((o.parts & DQ_BENCH_LATENESS) && !stop_requested())
        part_lateness(&b);

    if (stop_requested()) {
        write_meta(&b, false, err, sizeof err);
        fprintf(stderr, "dqlab bench: interrupted; partial results kept in "
                "%s, %s/latest not updated\n", b.dir, b.benchdir);
        ret = 130;
        goto done;
    }
    if (write_meta(&b, true, err, sizeof err) != 0 ||
        dq_runmeta_update_latest(b.benchdir, b.stamp, err, sizeof err) != 0)
        goto fail;
    if (!o.keep_logs)
        rmdir(b.logs);
    fprintf(stderr, "dqlab bench: done in %.0f s%s; %s/latest -> %s\n",
            (double)(dq_mono_us() - t0) / 1e6,
            b.errors ? " with failed units (see meta.txt)" : "",
            b.benchdir, b.stamp);
    ret = 0;
    goto done;
fail:
    fprintf(stderr, "dqlab bench: %s\n", err);
    ret = 2;
done:
    if (b.ceiling)
        fclose(b.ceiling);
    if (b.throughput)
        fclose(b.throughput);
    if (b.backlog)
        fclose(b.backlog);
    if (b.lateness)
        fclose(b.lateness);
    dq_redis_server_stop(&srv);
    return ret;
}
