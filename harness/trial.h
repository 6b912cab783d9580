/* trial.h -- one trial: producers, consumers, the event log, the check.
 *
 * Used by `dqlab run` (one trial) and `dqlab experiment` (a matrix of
 * them).  The caller owns the Redis server (see redis_server.h): a trial
 * only connects to the target it is given.
 */
#ifndef DQ_TRIAL_H
#define DQ_TRIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "../strategies/dq.h"
#include "checker.h"

typedef struct dq_redis_target {
    char host[256];
    int port;
    char user[128];      /* "" for none */
    char password[256];  /* "" for none; never printed */
    int db;
} dq_redis_target;

typedef struct dq_trial_params {
    const dq_strategy *strategy;
    dq_opt opts[DQ_MAX_OPTS];
    size_t nopts;
    int producers;          /* >= 1 */
    int consumers;          /* >= 1 */
    int64_t tasks;          /* >= 1 */
    int64_t delay_min_ms;   /* due = enqueue time + uniform[min, max] */
    int64_t delay_max_ms;
    int64_t work_us;        /* simulated work between claim and ack */
    int64_t payload_bytes;  /* payload size per task (binary, seeded) */
    int64_t grace_ms;       /* drain deadline = latest due + grace */
    uint64_t seed;
    const dq_redis_target *redis; /* NULL for strategies without Redis */
    char queue[65];         /* queue name; "" picks one from the seed */
    bool fresh;             /* purge the queue's keys first if they exist */
    const char *log_path;   /* event log to create (must not exist) */
    bool progress;          /* progress line on stderr */
} dq_trial_params;

typedef struct dq_trial_result {
    dq_check check;
    double elapsed_s;       /* first enqueue to last delivery */
    double tasks_per_s;     /* delivered / elapsed_s */
    int64_t redis_commands; /* commands the server ran in the trial (INFO
                               commandstats delta, minus our INFO calls);
                               -1 when not measured (no Redis) */
    dq_counters counters;   /* summed over every handle */
} dq_trial_result;

/* Fills p with the defaults: 1 producer, 1 consumer, 1000 tasks, delay
 * 0:100 ms, work 0 us, payload 16 bytes, grace 2000 ms, seed 1. */
void dq_trial_defaults(dq_trial_params *p);

/* Runs the trial.  Returns 0 with *r filled, 1 when stopped by
 * dq_trial_interrupt() (r filled with what was checked), or -1 with a
 * one-line message in err: 2-class errors (bad input: queue keys already
 * exist without fresh, strategy refused its options, Redis unreachable or
 * wrong password, Redis too old) are reported the same way; the caller
 * exits 2. */
int dq_trial_run(const dq_trial_params *p, dq_trial_result *r, char *err,
                 size_t errlen);

/* Async-signal-safe: asks every running trial to stop soon. */
void dq_trial_interrupt(void);

#endif
