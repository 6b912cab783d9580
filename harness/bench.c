/* bench.c -- `dqlab bench`: the plan of each level, the arguments, the
 * server, the run directory and meta.txt, and the order of the parts
 * (bench.h; the parts are in bench_*.c, bench_int.h says which is where).
 *
 * Why its own command and not an experiment file: the experiments answer
 * "is it correct, and how late" with a matrix of checked trials; the bench
 * answers "how fast, at what cost, and how does the cost grow" and needs
 * loops a trial does not have (a backlog preloaded with pipelining, each
 * claim timed on its own, producers paced to an offered rate, the bare
 * command ceiling and redis-benchmark in the same run).  The end-to-end
 * throughput still goes through dq_trial_run (trial.h), so those figures
 * include the harness recording and checking every event.
 *
 * Every unit (one strategy, one cell) opens its own queue name
 * "bench-<part>-<n>-<pid>", purges it before and after, and writes one CSV
 * row as soon as it is measured (fflush), so an interrupted run keeps what
 * it measured.  A unit that fails (a strategy error, Redis too old) is
 * named on stderr, counted in meta.txt and skipped; the run goes on.  A
 * strategy a part does not apply to (no ZSet layout for the backlog
 * preload) is named in meta.txt's `skipped`, never left out silently.
 *
 * The targets table (targets.csv) is written last, from what the parts
 * kept in memory (bench_targets.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
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
#include "bench_int.h"
#include "redis_server.h"
#include "redis_url.h"
#include "runmeta.h"
#include "signals.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* ---- The plan of each level ------------------------------------------- */

static const dq_bench_plan plans[] = {
    [DQ_BENCH_SMOKE] = {
        .name = "smoke", .ceil_members = 2000, .ceil_pipeline = 100,
        .rb_c4_requests = 2000, .rb_p100_requests = 4000,
        .consumers = {1, 2}, .nconsumers = 2, .producers = 1,
        .tp_tasks = 200, .tp_repeats = 1, .enq_tasks = 200,
        .target_consumers = 2, .target_repeats = 1, .one_rtt_tasks = 200,
        .batched_tasks = 400, .inproc_tasks = 2000, .harness_tasks = 2000,
        .backlogs = {100, 1000}, .nbacklogs = 2, .bl_claims = 50,
        .bl_rounds = 1, .rates = {200, 1000}, .nrates = 2,
        .lat_low_ms = 300, .lat_low_runs = 1, .lat_ms = 300,
        .lat_consumers = 2,
        .lat_producers = 1},
    [DQ_BENCH_QUICK] = {
        .name = "quick", .ceil_members = 100000, .ceil_pipeline = 100,
        .rb_c4_requests = 150000, .rb_p100_requests = 400000,
        .consumers = {1, 2, 4, 8}, .nconsumers = 4, .producers = 2,
        .tp_tasks = 5000, .tp_repeats = 3, .enq_tasks = 5000,
        .target_consumers = 4, .target_repeats = 3, .one_rtt_tasks = 30000,
        .batched_tasks = 100000, .inproc_tasks = 100000,
        .harness_tasks = 1000000,
        .backlogs = {1000, 10000, 100000, 1000000}, .nbacklogs = 4,
        .bl_claims = 2000, .bl_rounds = 3,
        .rates = {200, 1000, 4000, 16000, 64000}, .nrates = 5,
        .lat_low_ms = 3000, .lat_low_runs = 3, .lat_ms = 1500,
        .lat_consumers = 4,
        .lat_producers = 2},
    [DQ_BENCH_FULL] = {
        .name = "full", .ceil_members = 1000000, .ceil_pipeline = 100,
        .rb_c4_requests = 500000, .rb_p100_requests = 400000,
        .consumers = {1, 2, 4, 8}, .nconsumers = 4, .producers = 2,
        .tp_tasks = 20000, .tp_repeats = 5, .enq_tasks = 20000,
        .target_consumers = 4, .target_repeats = 5,
        .one_rtt_tasks = 100000, .batched_tasks = 400000,
        .inproc_tasks = 400000, .harness_tasks = 2000000,
        .backlogs = {1000, 10000, 100000, 1000000}, .nbacklogs = 4,
        .bl_claims = 5000, .bl_rounds = 5,
        .rates = {200, 1000, 4000, 16000, 64000, 256000}, .nrates = 6,
        .lat_low_ms = 10000, .lat_low_runs = 3, .lat_ms = 5000,
        .lat_consumers = 4,
        .lat_producers = 2},
};

/* ---- Arguments --------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: dqlab bench [--smoke|--quick|--full] [--results DIR] "
        "[--redis URL]\n"
        "                   [--only PARTS] [--strategies LIST] "
        "[--keep-logs]\n\n"
        "Measures every strategy's speed and cost against references taken\n"
        "in the same run (redis-benchmark, the harness's own ceiling), checks\n"
        "the performance targets and stores CSV under DIR/bench/YYYYmmdd-"
        "HHMMSS/\n(DIR/bench/latest: the newest complete run; targets.csv: "
        "the targets\ntable); `dqlab report DIR` turns it into the "
        "Performance section.\n\n"
        "  --quick        the default: within 8 minutes on 2 cores\n"
        "  --full         longer trials, more repeats\n"
        "  --smoke        a few seconds, for tests (figures meaningless)\n"
        "  --results DIR  results root (default results)\n"
        "  --redis URL    redis://[user:pass@]host:port[/db] instead of a "
        "private server\n"
        "                 (redis-benchmark then does not run: the targets "
        "that are\n                 shares of it say not measured)\n"
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
                snprintf(err, errlen, "%s", e2); /* names --redis */
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
    dq_runmeta_command_line(argc, argv, o->command, sizeof o->command);
    return 0;
}

/* ---- Files -------------------------------------------------------------- */

/* results/bench/<stamp>[-N], never an existing one (runmeta.h). */
static int make_dir(dq_bench *b, char *err, size_t errlen)
{
    snprintf(b->benchdir, sizeof b->benchdir, "%s/bench", b->o->results);
    dq_runmeta_now_iso(b->started, sizeof b->started);
    if (dq_runmeta_make_dir(b->benchdir, b->stamp, sizeof b->stamp, b->dir,
                            sizeof b->dir, err, errlen) != 0)
        return -1;
    snprintf(b->logs, sizeof b->logs, "%s/logs", b->dir);
    return 0;
}

static FILE *open_csv(const dq_bench *b, const char *name,
                      const char *header, char *err, size_t errlen)
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

/* The plan's lines of meta.txt (the keys bench.h lists). */
static void meta_plan(FILE *f, const dq_bench *b)
{
    const dq_bench_plan *pl = b->pl;
    char buf[1024];
    size_t off = 0;

    fprintf(f, "ceiling_members = %" PRId64 "\nceiling_pipeline = %d\n"
            "rb_c4_requests = %" PRId64 "\nrb_p100_requests = %" PRId64
            "\n", pl->ceil_members, pl->ceil_pipeline, pl->rb_c4_requests,
            pl->rb_p100_requests);
    for (size_t i = 0; i < pl->nconsumers; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%d",
                                i ? ", " : "", pl->consumers[i]);
    dq_runmeta_kv(f, "consumers", buf);
    fprintf(f, "producers = %d\ntasks = %" PRId64 "\nrepeats = %d\n"
            "enqueue_tasks = %" PRId64 "\nin_process_factor = %" PRId64 "\n"
            "variant_factor = %" PRId64 "\ntarget_consumers = %d\n"
            "target_repeats = %d\none_rtt_tasks = %" PRId64 "\n"
            "batched_tasks = %" PRId64 "\ninproc_tasks = %" PRId64 "\n"
            "harness_tasks = %" PRId64 "\n", pl->producers, pl->tp_tasks,
            pl->tp_repeats, pl->enq_tasks, pl->inproc_tasks / pl->tp_tasks,
            pl->batched_tasks / pl->tp_tasks, pl->target_consumers,
            pl->target_repeats, pl->one_rtt_tasks, pl->batched_tasks,
            pl->inproc_tasks, pl->harness_tasks);
    off = 0;
    buf[0] = '\0';
    for (size_t si = 0; dq_strategies[si] != NULL; si++) {
        const dq_strategy *s = dq_strategies[si];
        for (size_t i = 0; s->bench_variants && s->bench_variants[i]; i++)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s %s",
                                    off ? ", " : "", s->name,
                                    s->bench_variants[i]);
    }
    dq_runmeta_kv(f, "variants", buf);
    join_i64(buf, sizeof buf, pl->backlogs, pl->nbacklogs);
    dq_runmeta_kv(f, "backlog", buf);
    fprintf(f, "backlog_claims = %" PRId64 "\nbacklog_rounds = %d\n",
            pl->bl_claims, pl->bl_rounds);
    join_i64(buf, sizeof buf, pl->rates, pl->nrates);
    dq_runmeta_kv(f, "lateness_rates", buf);
    fprintf(f, "lateness_low_ms = %" PRId64 "\nlateness_low_runs = %d\n"
            "lateness_ms = %" PRId64 "\nlateness_consumers = %d\n"
            "lateness_producers = %d\npayload_bytes = %d\n", pl->lat_low_ms,
            pl->lat_low_runs, pl->lat_ms, pl->lat_consumers,
            pl->lat_producers, DQ_BENCH_PAYLOAD_BYTES);
}

/* /proc/loadavg's first three fields ("1.67 1.59 2.04"): how busy the
 * machine was, for a reader of figures from a shared one; "" unknown. */
static void loadavg(char *buf, size_t len)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double a, b, c;

    buf[0] = '\0';
    if (f != NULL && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
        snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
    if (f != NULL)
        fclose(f);
}

static int write_meta(const dq_bench *b, bool complete, char *err,
                      size_t errlen)
{
    char path[PATH_MAX + 32], tmp[PATH_MAX + 48], buf[1024];
    size_t off = 0;

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
    dq_runmeta_kv(f, "level", b->pl->name);
    dq_runmeta_kv(f, "quick", b->o->level == DQ_BENCH_FULL ? "no" : "yes");
    dq_runmeta_kv(f, "command", b->o->command);
    buf[0] = '\0';
    for (size_t i = 0; dq_strategies[i]; i++)
        if (dq_bench_selected(b, dq_strategies[i]))
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s",
                                    off ? ", " : "", dq_strategies[i]->name);
    dq_runmeta_kv(f, "strategies", buf);
    fprintf(f, "parts = %s%s%s%s\n",
            b->o->parts & DQ_BENCH_CEILING ? "ceiling " : "",
            b->o->parts & DQ_BENCH_THROUGHPUT ? "throughput " : "",
            b->o->parts & DQ_BENCH_BACKLOG ? "backlog " : "",
            b->o->parts & DQ_BENCH_LATENESS ? "lateness" : "");
    fprintf(f, "part_seconds = ceiling %.1f, throughput %.1f, backlog %.1f, "
            "lateness %.1f\n", b->part_s[0], b->part_s[1], b->part_s[2],
            b->part_s[3]);
    dq_runmeta_kv(f, "loadavg_start", b->load_start);
    loadavg(buf, sizeof buf);
    dq_runmeta_kv(f, "loadavg_end", complete ? buf : "");
    meta_plan(f, b);
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
    dq_runmeta_kv(f, "skipped", b->skipped);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

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

/* The server first, so that nothing is written when it is not there:
 * --redis checked, or a private one started into srv.  Returns -1 to go
 * on, else the exit code (printed). */
static int bench_server(dq_bench *b, dq_redis_server *srv,
                        dq_redis_target *target)
{
    char err[1024];
    dq_redis_server_opts so = {0};

    if (b->o->have_redis) {
        b->redis = &b->o->redis;
        if (server_version(b->redis, b->redis_version,
                           sizeof b->redis_version, err, sizeof err) != 0) {
            fprintf(stderr, "dqlab bench: --redis: %s\n", err);
            return 2;
        }
        return -1;
    }
    fprintf(stderr, "dqlab bench: starting a private redis-server...\n");
    if (dq_redis_server_start(srv, &so, err, sizeof err) != 0) {
        if (dq_signals_caught()) {
            fprintf(stderr, "dqlab bench: interrupted\n");
            return 130;
        }
        fprintf(stderr, "dqlab bench: %s\n", err);
        return 2;
    }
    memset(target, 0, sizeof *target);
    snprintf(target->host, sizeof target->host, "127.0.0.1");
    target->port = srv->port;
    b->redis = target;
    b->private_server = true;
    snprintf(b->redis_version, sizeof b->redis_version, "%s", srv->version);
    return -1;
}

/* The run directory with its CSV files (headers, bench.h) and meta.txt.
 * Returns 0, or -1 with err. */
static int bench_files(dq_bench *b, char *err, size_t errlen)
{
    if (make_dir(b, err, errlen) != 0)
        return -1;
    loadavg(b->load_start, sizeof b->load_start);
    if ((b->ceiling = open_csv(b, "ceiling.csv", DQ_BENCH_CEILING_HEADER,
                               err, errlen)) == NULL ||
        (b->references = open_csv(b, "references.csv",
                                  DQ_BENCH_REFERENCES_HEADER, err,
                                  errlen)) == NULL ||
        (b->throughput = open_csv(b, "throughput.csv",
                                  DQ_BENCH_THROUGHPUT_HEADER, err,
                                  errlen)) == NULL ||
        (b->harness = open_csv(b, "harness.csv", DQ_BENCH_HARNESS_HEADER,
                               err, errlen)) == NULL ||
        (b->backlog = open_csv(b, "backlog.csv", DQ_BENCH_BACKLOG_HEADER,
                               err, errlen)) == NULL ||
        (b->lateness = open_csv(b, "lateness.csv", DQ_BENCH_LATENESS_HEADER,
                                err, errlen)) == NULL)
        return -1;
    return write_meta(b, false, err, errlen);
}

/* ---- The run ------------------------------------------------------------ */

/* Runs part fn when asked for, timing it into b->part_s[i]. */
static void run_part(dq_bench *b, unsigned bit, int i,
                     void (*fn)(dq_bench *))
{
    int64_t t0 = dq_mono_us();

    if ((b->o->parts & bit) && !dq_bench_stop())
        fn(b);
    b->part_s[i] = (double)(dq_mono_us() - t0) / 1e6;
}

/* The parts asked for, then targets.csv, meta.txt and latest.  Returns
 * the exit code (an error printed). */
static int bench_parts(dq_bench *b)
{
    const dq_bench_opts *o = b->o;
    char err[1024];

    dq_bench_say(b, "%s run into %s", b->pl->name, b->dir);
    run_part(b, DQ_BENCH_CEILING, 0, dq_bench_part_ceiling);
    run_part(b, DQ_BENCH_THROUGHPUT, 1, dq_bench_part_throughput);
    run_part(b, DQ_BENCH_BACKLOG, 2, dq_bench_part_backlog);
    run_part(b, DQ_BENCH_LATENESS, 3, dq_bench_part_lateness);
    if (dq_bench_write_targets(b, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab bench: %s\n", err);
        write_meta(b, false, err, sizeof err);
        return 2;
    }
    if (dq_bench_stop()) {
        write_meta(b, false, err, sizeof err);
        fprintf(stderr, "dqlab bench: interrupted; partial results kept in "
                "%s, %s/latest not updated\n", b->dir, b->benchdir);
        return 130;
    }
    if (write_meta(b, true, err, sizeof err) != 0 ||
        dq_runmeta_update_latest(b->benchdir, b->stamp, err, sizeof err)) {
        fprintf(stderr, "dqlab bench: %s\n", err);
        return 2;
    }
    if (!o->keep_logs)
        rmdir(b->logs);
    dq_bench_say(b, "done%s; targets in %s/targets.csv; %s/latest -> %s",
                 b->errors ? " with failed units (see meta.txt)" : "",
                 b->dir, b->benchdir, b->stamp);
    return 0;
}

static void bench_free(dq_bench *b)
{
    FILE *fs[] = {b->ceiling, b->references, b->throughput, b->harness,
                  b->backlog, b->lateness};

    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if (fs[i] != NULL)
            fclose(fs[i]);
    free(b->refs);
    free(b->tps);
    free(b->hxs);
    free(b->bls);
    free(b->lats);
}

int dq_cmd_bench(int argc, char **argv)
{
    dq_bench_opts o;
    dq_bench b;
    dq_redis_server srv;
    dq_redis_target target;
    char err[1024];
    int ret, prc;

    memset(&b, 0, sizeof b);
    memset(&srv, 0, sizeof srv);
    b.t0_us = dq_mono_us();
    prc = dq_bench_parse_args(argc, argv, &o, err, sizeof err);
    if (prc == 1)
        return 0;
    if (prc != 0) {
        fprintf(stderr, "dqlab bench: %s\n", err);
        return 2;
    }
    b.o = &o;
    b.pl = &plans[o.level];
    if ((ret = bench_server(&b, &srv, &target)) >= 0)
        return ret;
    if (bench_files(&b, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab bench: %s\n", err);
        ret = 2;
    } else {
        ret = bench_parts(&b);
    }
    bench_free(&b);
    dq_redis_server_stop(&srv);
    return ret;
}
