/* perf.h -- the results of `dqlab bench` (harness/bench.h) as the report
 * reads them: RESULTS/bench/latest/{meta.txt, ceiling.csv, throughput.csv,
 * backlog.csv, lateness.csv}.  Used by the Performance section
 * (section_perf.c) and by the claim rules that need speed figures
 * (claims.c: C04's backlog part, C05, C17's O(log n) part).
 *
 * The bench directory has no trials.csv, so dq_results_load() (report.h)
 * does not take it for an experiment.
 */
#ifndef DQ_PERF_H
#define DQ_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"

typedef struct dq_perf_tp {       /* one throughput.csv row */
    char kind[16];                /* "e2e" or "enqueue" */
    char strategy[32];
    char options[128];
    int producers, consumers, repeat;
    int64_t tasks;
    double seconds, tasks_per_s;
    uint64_t delivered, duplicates, lost, early;
    int64_t redis_commands;       /* -1: not measured */
    double redis_cpu_ms;          /* -1: not measured */
    double lateness_p99_ms;
} dq_perf_tp;

typedef struct dq_perf_bl {       /* one backlog.csv row */
    char strategy[32];
    char options[128];
    int64_t backlog;
    double preload_s;
    int64_t memory_bytes;         /* -1: not measured (no Redis) */
    double bytes_per_task;        /* -1: not measured */
    double enqueue_us_mean, enqueue_us_p50, enqueue_us_p99;
    int64_t claims;
    double claim_us_p50, claim_us_p90, claim_us_p99, claim_us_max;
    int64_t empty_claims;
} dq_perf_bl;

typedef struct dq_perf_lat {      /* one lateness.csv row */
    char strategy[32];
    char options[128];
    int producers, consumers;
    int64_t offered_per_s;
    double seconds;
    uint64_t enqueued;
    double sent_per_s;
    uint64_t delivered;
    double delivered_per_s;
    uint64_t lost, duplicates;
    double p50_ms, p99_ms, max_ms;
    bool saturated;
} dq_perf_lat;

typedef struct dq_perf {
    bool present;                 /* RESULTS/bench/latest exists */
    char dir[4096];               /* the run directory latest points to */
    dq_rkv *meta;
    size_t nmeta;
    double zadd_per_s, zpopmin_per_s;       /* dqlab's ceiling; -1 n/a */
    double rb_zadd_per_s, rb_zpopmin_per_s; /* redis-benchmark; -1 n/a */
    int64_t ceiling_ops;
    int ceiling_pipeline;
    dq_perf_tp *tp;
    size_t ntp;
    dq_perf_bl *bl;
    size_t nbl;
    dq_perf_lat *lat;
    size_t nlat;
} dq_perf;

/* Loads root/bench/latest into *p.  Returns 0 with p->present false when
 * there is no bench run, 0 with it true when loaded, or -1 with a one-line
 * "file:line: what" in err when a file is malformed.  Free with
 * dq_perf_free() in every case (safe on a zeroed struct). */
int dq_perf_load(const char *root, dq_perf *p, char *err, size_t errlen);
void dq_perf_free(dq_perf *p);

/* meta.txt value, or "" (never NULL). */
const char *dq_perf_meta(const dq_perf *p, const char *key);

/* Median over the repeats of the e2e tasks/s of strategy with that many
 * consumers (consumers 0: the best median over every consumer count, its
 * count in *at when at is not NULL); -1 when not measured. */
double dq_perf_e2e(const dq_perf *p, const char *strategy, int consumers,
                   int *at);
/* Median enqueue-only tasks/s of strategy; -1 when not measured. */
double dq_perf_enqueue(const dq_perf *p, const char *strategy);
/* The backlog row of strategy at backlog n, or NULL. */
const dq_perf_bl *dq_perf_backlog(const dq_perf *p, const char *strategy,
                                  int64_t n);
/* Smallest and largest backlog measured for strategy (NULL when none). */
void dq_perf_backlog_range(const dq_perf *p, const char *strategy,
                           const dq_perf_bl **lo, const dq_perf_bl **hi);

#endif
