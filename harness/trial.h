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
#include "eventlog.h"
#include "faults.h"

struct dq_redis_server;

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
    int64_t tasks;          /* >= 1, or 0 for idle mode (idle_ms) */
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

    /* Added for the lateness, idle and backlog experiments. */
    int64_t claim_timeout_ms; /* timeout of each consumer claim call (100);
                               a blocking strategy blocks this long per
                               call, so it sets the idle round trips */
    int64_t idle_ms;        /* with tasks == 0: idle mode -- consumers claim
                               against an empty queue for idle_ms, then stop
                               (must be > 0 then; ignored when tasks > 0).
                               Redis strategies, and any strategy when
                               redis is given, get the server's commands
                               and CPU measured over that window */
    int64_t backlog;        /* tasks "b<index>" enqueued by the producers
                               BEFORE the measured tasks (and before
                               consumers start), due backlog_delay_ms
                               ahead: pending keys that never fall due in
                               the trial.  Not logged as E (a header says
                               how many), never waited for */
    int64_t backlog_delay_ms; /* due time of the backlog, ms after its
                               enqueue (3600000) */

    /* Added for the faults issue (faults.h). */
    dq_fault faults[DQ_MAX_FAULTS]; /* injected in this trial */
    size_t nfaults;
    bool consumer_process;  /* consumer mode process: each consumer is a
                               child process (`/proc/self/exe __child`);
                               forced on by kill-consumer.  An in-process
                               strategy (heap) runs its producers and
                               consumers together in one child process */
    struct dq_redis_server *server; /* the harness-owned private server
                               (restart-redis, pause-redis act on it; the
                               trial updates its pid on restart); NULL with
                               --redis */
    const char *child_exe;  /* binary started for child processes: NULL
                               means /proc/self/exe (must be dqlab, or a
                               binary whose main dispatches __child) */

    /* Added for the performance issue. */
    int64_t enqueue_batch;  /* tasks per enqueue call, 1..
                               DQ_TRIAL_MAX_ENQUEUE_BATCH (default 1: one
                               dq_enqueue per task); above 1 each producer
                               sends groups of its tasks with
                               dq_enqueue_many and logs each task's E record
                               after its group was acknowledged, with the
                               time of that acknowledgement.  0 counts as 1
                               (a zeroed struct); process-mode children
                               get it too (heap all-in-one batches) */
} dq_trial_params;

#define DQ_TRIAL_MAX_ENQUEUE_BATCH 10000

typedef struct dq_trial_result {
    dq_check check;
    double elapsed_s;       /* first enqueue to last delivery */
    double tasks_per_s;     /* delivered / elapsed_s */
    int64_t redis_commands; /* commands the server ran in the trial (INFO
                               commandstats delta, minus our INFO calls);
                               -1 when not measured (no Redis) */
    dq_counters counters;   /* summed over every handle */

    /* Added by the harness (fields after this line are informational). */
    char queue[65];         /* the queue name used */
    dq_opt opts[DQ_MAX_OPTS]; /* effective options (given, then defaults) */
    size_t nopts;
    char redis_version[32]; /* "" without Redis */
    bool drained;           /* every task delivered (with a lease_ms:
                               and acked) before the deadline */
    bool interrupted;       /* stopped by dq_trial_interrupt() */
    uint64_t errors;        /* claim/ack calls that returned a DQ_E* code */
    char first_error[256];  /* the first of them, "" if none */
    uint64_t payload_mismatches; /* deliveries whose payload differed from
                               the bytes enqueued (binary safety) */
    double measured_s;      /* time between the two server snapshots
                               (INFO commandstats / cpu), s; in idle mode
                               the idle window; 0 when not measured */
    int64_t redis_cpu_us;   /* server CPU over measured_s: delta of INFO cpu
                               used_cpu_sys + used_cpu_user, us; -1 when
                               not measured */
    double backlog_s;       /* time the backlog enqueue took, s */

    /* Faults (faults.h). */
    bool process_mode;      /* consumers ran as child processes */
    int kills;              /* consumer processes that died by SIGKILL */
    int restarts;           /* redis-server restarts done */
    int fault_windows;      /* F begin records written by the parent */
    uint64_t retries;       /* enqueue / ack calls retried after an error */
} dq_trial_result;

/* Fills p with the defaults: 1 producer, 1 consumer, 1000 tasks, delay
 * 0:100 ms, work 0 us, payload 16 bytes, grace 2000 ms, seed 1, claim
 * timeout 100 ms, no idle window, no backlog (backlog delay 3600000 ms),
 * enqueue batch 1. */
void dq_trial_defaults(dq_trial_params *p);

/* Runs the trial.  Returns 0 with *r filled, 1 when stopped by
 * dq_trial_interrupt() (r filled with what was checked), or -1 with a
 * one-line message in err: 2-class errors (bad input: queue keys already
 * exist without fresh, strategy refused its options, Redis unreachable or
 * wrong password, Redis too old) are reported the same way; the caller
 * exits 2. */
int dq_trial_run(const dq_trial_params *p, dq_trial_result *r, char *err,
                 size_t errlen);

/* Async-signal-safe: asks every running trial to stop soon.  Sticky: a
 * trial started after the call returns 1 at once, so an experiment loop
 * stops too. */
void dq_trial_interrupt(void);
/* True once dq_trial_interrupt() was called. */
bool dq_trial_interrupted(void);

/* What a task carries, so that tests and other tools can rebuild it: the
 * payload of task `index` (payload_len bytes, seeded; the first bytes are
 * NUL, LF, ',', TAB, CR, '"' and '\\' to catch text-only handling) and its
 * delay in [lo_ms, hi_ms]. */
void dq_trial_payload(uint64_t seed, int64_t index, unsigned char *buf,
                      size_t payload_len);
/* Guarantees the trial shows broken, as one-line texts (static strings):
 * the checker's log-based rules, judged against the fault windows of the
 * log (dq_check_violations, checker.h: early, unknown, duplicates,
 * redeliveries of at-most-once strategies, losses no fault or declared
 * guarantee allows), plus changed payloads, which only the harness sees
 * (not counted for strategies declaring DQ_G_DUPLICATES, nor in a trial
 * with fault windows).  Fills up to max entries of out and returns how
 * many there are.  `dqlab run` exits 1 when it is not 0. */
size_t dq_trial_violations(const dq_trial_params *p, const dq_trial_result *r,
                           const char **out, size_t max);

/* The trial as a new jansson object (caller owns the reference): the
 * parameters (strategy, queue, options as an object, producers, consumers,
 * tasks, delay_ms {min,max}, work_us, payload_bytes, grace_ms, seed), the
 * checker's counts (dq_check_json), tasks_per_s, elapsed_s, redis_commands
 * (null when not measured), redis_version, counters {...}, errors,
 * first_error, payload_mismatches, drained, interrupted, guarantees [..],
 * violations [..], claim_timeout_ms, idle_ms, backlog, backlog_delay_ms,
 * measured_s, redis_cpu_ms (null when not measured), backlog_s,
 * enqueue_batch.  NULL on
 * allocation failure. */
struct json_t;
struct json_t *dq_trial_json(const dq_trial_params *p,
                             const dq_trial_result *r);

/* The child side of a process-mode trial (faults.h DQ_CHILD_COMMAND):
 * what one child process runs. */
typedef struct dq_child_spec {
    bool all_in_one;        /* producers + consumers of an in-process
                               strategy; else one consumer */
    const char *name;       /* consumer name ("c0", "c0.1"); all_in_one:
                               unused (workers are p<i>, c<i>) */
    dq_eventlog *log;       /* the trial's event log, opened by the
                               caller with dq_eventlog_open_append
                               (DQ_LOG_SYNC_EACH); not closed here */
    int64_t clock_offset_us; /* consumer's clock; all_in_one: of c<skew_index> */
    int skew_index;         /* all_in_one: consumer index skewed, -1 none */
    int64_t die_claim;      /* raise SIGKILL at this claim (1-based), 0 never */
    dq_kill_point die_point;
    int die_index;          /* all_in_one: consumer index that dies */
    bool retry;             /* retry enqueue / ack after errors (faults) */
} dq_child_spec;

/* Runs the child's work with p (strategy, options, queue, Redis target,
 * tasks, delays, work, payload, claim timeout, seed) until SIGTERM
 * (dq_trial_interrupt) or death by its own plan, then prints one summary
 * line "S <round_trips> <empty_polls> <lost_races> <wakeups> <putbacks>
 * <errors> <payload_bad> <retries> <first error>" on stdout.  Returns 0,
 * or -1 with a message in err (bad options, unreachable Redis). */
int dq_trial_child_run(const dq_trial_params *p, const dq_child_spec *c,
                       char *err, size_t errlen);

int64_t dq_trial_delay_ms(uint64_t seed, int64_t index, int64_t lo_ms,
                          int64_t hi_ms);

#endif
