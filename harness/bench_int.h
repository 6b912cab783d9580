/* bench_int.h -- what the files of `dqlab bench` share (not for other
 * users; the command and its files are described in bench.h).
 *
 * The bench is cut by part, each file with its own top comment:
 *   bench.c           arguments, the plan of each level, the server, the
 *                     run directory and meta.txt, the order of the parts
 *   bench_refs.c      part 1: the ceiling and the redis-benchmark
 *                     references (also measured again between the target
 *                     trials of part 2)
 *   bench_tp.c        part 2: throughput: every strategy's curve, the two
 *                     target configurations, the harness and its ceiling
 *   bench_backlog.c   part 3: claim and enqueue cost against a backlog
 *   bench_lateness.c  part 4: lateness at offered rates, saturation
 *   bench_targets.c   targets.csv, from what the parts kept in memory
 *   bench_util.c      the helpers every part calls (below)
 * Layering: bench.c calls the parts; every part calls the helpers of
 * bench_util.c declared here, never bench.c; bench_targets.c reads only
 * the records.
 */
#ifndef DQ_BENCH_INT_H
#define DQ_BENCH_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../strategies/dq.h"
#include "bench.h"
#include "redis_url.h"

#define DQ_BENCH_PAYLOAD_BYTES 16
extern const char dq_bench_payload[DQ_BENCH_PAYLOAD_BYTES + 1];

/* The plan of one level (bench.c's table; meta.txt lists it). */
typedef struct dq_bench_plan {
    const char *name;
    int64_t ceil_members;     /* dqlab's pipelined ceiling */
    int ceil_pipeline;
    int64_t rb_c4_requests;   /* redis-benchmark -t zadd -c 4 -n; 0: none */
    int64_t rb_p100_requests; /* -t zadd,zpopmin -c 1 -P 100 -n; 0: none */
    int consumers[8];         /* the throughput curves */
    size_t nconsumers;
    int producers;
    int64_t tp_tasks;         /* a Redis strategy's curve trial */
    int tp_repeats;
    int64_t enq_tasks;        /* enqueue-only rows */
    int target_consumers;     /* consumers of the target trials */
    int target_repeats;       /* rounds of target trials (each with its
                                 reference measured again first) */
    int64_t one_rtt_tasks;    /* one claim round trip per task, per trial */
    int64_t batched_tasks;    /* a batched variant's trial */
    int64_t inproc_tasks;     /* in-process strategies' curve trial */
    int64_t harness_tasks;    /* harness trials (no-op, in-process) */
    int64_t backlogs[8];
    size_t nbacklogs;
    int64_t bl_claims;        /* due tasks per backlog round */
    int bl_rounds;
    int64_t rates[8];         /* offered tasks/s, ascending */
    size_t nrates;
    int64_t lat_low_ms;       /* production time at the lowest rate */
    int lat_low_runs;         /* runs at the lowest rate (blocking ones) */
    int64_t lat_ms;           /* production time at every other rate */
    int lat_consumers;
    int lat_producers;
} dq_bench_plan;

/* ---- What the parts measured, for the targets table ------------------ */

enum { DQ_BREF_ZADD_C4 = 0, DQ_BREF_ZADD_P100, DQ_BREF_N };

typedef struct dq_bench_ref {     /* one redis-benchmark run */
    int which;                    /* DQ_BREF_* */
    double ops_per_s;
    double cpu_us_per_op;         /* Redis CPU (INFO cpu), -1 unknown */
} dq_bench_ref;

enum { DQ_BTP_CURVE = 0, DQ_BTP_ONE_RTT, DQ_BTP_BATCHED };

/* The configuration of block one_rtt (bench.h): the defaults, one claim
 * round trip per task, with a batched enqueue. */
#define DQ_BENCH_ONE_RTT_SPEC "enqueue_batch=64"

typedef struct dq_bench_tp {      /* one end-to-end throughput trial */
    const dq_strategy *s;
    int block;                    /* DQ_BTP_* */
    char options[96];             /* as in throughput.csv */
    int consumers;
    double tasks_per_s;
    double cpu_us_per_task;       /* Redis CPU per delivered task, -1 */
} dq_bench_tp;

typedef struct dq_bench_hx {      /* one harness trial */
    const dq_strategy *s;         /* &dq_ceiling_noop for the ceiling */
    double tasks_per_s;
    double events_per_s;
} dq_bench_hx;

typedef struct dq_bench_bl {      /* one strategy at one backlog */
    const dq_strategy *s;
    int64_t backlog;
    double claim_us_p50, claim_us_p99; /* medians over the rounds */
} dq_bench_bl;

typedef struct dq_bench_lat {     /* one strategy at one offered rate */
    const dq_strategy *s;
    int64_t offered_per_s;
    int run;                      /* 1, 2, ... (bench.h: lateness.csv) */
    double p99_ms;
    bool saturated;
    char why[48];                 /* lateness.csv's saturation field */
} dq_bench_lat;

/* The run. */
typedef struct dq_bench {
    const dq_bench_opts *o;
    const dq_bench_plan *pl;
    const dq_redis_target *redis;  /* the server every unit uses */
    bool private_server;
    char redis_version[32];
    char dir[PATH_MAX];            /* results/bench/<stamp> */
    char benchdir[PATH_MAX];       /* results/bench */
    char stamp[40];
    char logs[PATH_MAX];           /* dir/logs */
    FILE *ceiling, *references, *throughput, *harness, *backlog, *lateness;
    int unit;                      /* queue-name counter */
    int errors;
    char first_error[512];
    char skipped[1024];            /* "part strategy (why); ..." */
    char started[64];
    char load_start[64];           /* /proc/loadavg when the run began */
    int64_t t0_us;                 /* dq_mono_us() at the start */
    double part_s[4];              /* seconds per part (ceiling, ...) */
    dq_bench_ref *refs;
    size_t nrefs;
    dq_bench_tp *tps;
    size_t ntps;
    dq_bench_hx *hxs;
    size_t nhxs;
    dq_bench_bl *bls;
    size_t nbls;
    dq_bench_lat *lats;
    size_t nlats;
} dq_bench;

/* ---- Helpers (bench_util.c) --------------------------------------------- */

/* True when s was asked for (--strategies, or all by default). */
bool dq_bench_selected(const dq_bench *b, const dq_strategy *s);
/* True once SIGINT/SIGTERM/SIGHUP arrived: every loop stops. */
bool dq_bench_stop(void);
/* Counts a failed unit, names it on stderr ("what: msg (skipped)") and
 * keeps the first message for meta.txt. */
void dq_bench_unit_error(dq_bench *b, const char *what, const char *msg);
/* Notes that part did not run strategy s, and why, on stderr and in
 * meta.txt's `skipped` (a strategy is never left out silently). */
void dq_bench_skip(dq_bench *b, const char *part, const dq_strategy *s,
                   const char *why);
/* A progress line on stderr: "dqlab bench [  12 s]: <text>". */
void dq_bench_say(const dq_bench *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A new queue name "bench-<part>-<n>-<pid>" into buf. */
void dq_bench_queue_name(dq_bench *b, const char *part, char *buf,
                         size_t len);
/* A handle config on the run's server for queue (strings borrowed). */
void dq_bench_config(const dq_bench *b, dq_config *cfg, const char *queue,
                     dq_local *local, const char *who);
/* Appends one zeroed element of size sz to *arr (n elements); returns it,
 * or NULL when out of memory (then the record is lost, nothing else). */
void *dq_bench_grow(void **arr, size_t *n, size_t sz);
/* INFO cpu: used_cpu_sys + used_cpu_user of the run's server in us, or
 * -1 when it cannot be read. */
int64_t dq_bench_redis_cpu_us(const dq_bench *b);

/* ---- The parts ---------------------------------------------------------- */

void dq_bench_part_ceiling(dq_bench *b);     /* bench_refs.c */
/* One redis-benchmark reference run (DQ_BREF_*), as in part 1, into
 * references.csv and b->refs; `when` names the moment for the CSV
 * ("start", "round 2").  False when it could not run (named on stderr;
 * no private server: not run, and not an error). */
bool dq_bench_reference(dq_bench *b, int which, const char *when);
void dq_bench_part_throughput(dq_bench *b);  /* bench_tp.c */
void dq_bench_part_backlog(dq_bench *b);     /* bench_backlog.c */
void dq_bench_part_lateness(dq_bench *b);    /* bench_lateness.c */
/* Writes targets.csv (bench_targets.c).  Returns 0, or -1 with err. */
int dq_bench_write_targets(const dq_bench *b, char *err, size_t errlen);

#endif
