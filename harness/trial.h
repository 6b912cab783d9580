/* trial.h -- one trial: producers, consumers, the event log, the check.
 *
 * Used by `dqlab run` (one trial), `dqlab experiment` (a matrix of them)
 * and `dqlab bench`.  The caller owns the Redis server (see
 * redis_server.h): a trial only connects to the target it is given.  The
 * trial's numeric and mode parameters are declared once, in params.h,
 * which the command line, the experiment files, the child processes, the
 * log headers and the JSON all read.
 */
#ifndef DQ_TRIAL_H
#define DQ_TRIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "../strategies/dq.h"
#include "checker.h"
#include "faults.h"

struct dq_redis_server;
struct dq_redis_target;     /* redis_url.h */

typedef struct dq_trial_params {
    /* What runs: the strategy, its options, the faults. */
    const dq_strategy *strategy;
    dq_opt opts[DQ_MAX_OPTS];
    size_t nopts;
    dq_fault faults[DQ_MAX_FAULTS]; /* injected in this trial (faults.h) */
    size_t nfaults;

    /* The workload: one row each in params.c's table, which gives every
     * bound, default and meaning; fields here in the table's order. */
    int producers;          /* producer threads */
    int consumers;          /* consumers (threads, or processes) */
    int64_t tasks;          /* tasks "t<index>"; 0: idle mode (idle_ms) */
    int64_t delay_min_ms;   /* due = enqueue time + uniform delay in */
    int64_t delay_max_ms;   /* [min, max] ms, seeded per task */
    int64_t work_us;        /* simulated work between claim and ack */
    int64_t fail_every;     /* the work of every fail_every-th claim of
                               each consumer fails and the task is given
                               back for a retry (trial_workers.c); 0: no
                               work fails */
    bool retry_nack;        /* how a failed task is retried: false readd
                               (enqueue it again at now + retry_ms, then
                               ack it: the tutorials' way), true nack
                               (dq_nack with retry_ms) */
    int64_t retry_ms;       /* the retry delay of a failed task, ms */
    int64_t payload_bytes;  /* payload size per task (binary, seeded) */
    int64_t grace_ms;       /* drain deadline = latest due + grace */
    int64_t enqueue_batch;  /* tasks per enqueue call (1: dq_enqueue; above:
                               dq_enqueue_many in groups, each task's E
                               record after its group was acknowledged,
                               with that time); 0 counts as 1 */
    int64_t rate;           /* offered enqueue rate, tasks/s over all
                               producers: task i is sent at its
                               producer's start + i/rate s (monotonic
                               clock, no drift); 0: as fast as possible */
    uint64_t seed;          /* delays, payloads, fault times */
    int64_t claim_timeout_ms; /* timeout of each consumer claim call; a
                               blocking strategy blocks this long per call,
                               so it sets the idle round trips */
    int64_t idle_ms;        /* idle mode (tasks 0): consumers claim against
                               the empty queue this long while the server's
                               commands and CPU are measured; ignored when
                               tasks > 0 */
    int64_t backlog;        /* tasks "b<index>" enqueued before the measured
                               ones (and before consumers start), due
                               backlog_delay_ms ahead, never due in the
                               trial: not logged as E (a header counts
                               them), never waited for */
    int64_t backlog_delay_ms;
    bool consumer_process;  /* consumers as child processes (`/proc/self/exe
                               __child`); forced on by a fault that needs
                               them.  An in-process strategy then runs its
                               producers and consumers together in one
                               child process */

    /* Where it runs and what it writes. */
    const struct dq_redis_target *redis; /* NULL for strategies without
                               Redis */
    struct dq_redis_server *server; /* the harness-owned private server
                               (faults needing it act on it; the trial
                               updates its pid on restart); NULL with
                               --redis */
    char queue[65];         /* queue name; "" picks one from the seed */
    bool fresh;             /* purge the queue's keys first if they exist */
    const char *log_path;   /* event log to create (must not exist) */
    const char *child_exe;  /* binary started for child processes: NULL
                               means /proc/self/exe (must be dqlab, or a
                               binary whose main dispatches __child) */
    bool progress;          /* progress line on stderr */
} dq_trial_params;

#define DQ_TRIAL_MAX_ENQUEUE_BATCH 10000

typedef struct dq_trial_result {
    /* What the log shows (the checker's counts: the verdict's source). */
    dq_check check;

    /* How fast, and what it cost. */
    double elapsed_s;       /* first enqueue to last delivery */
    double tasks_per_s;     /* delivered / elapsed_s */
    dq_counters counters;   /* summed over every handle opened, including
                               what their close did (a buffer given back) */
    int64_t redis_commands; /* commands the server ran in the trial (INFO
                               commandstats delta, minus our INFO calls);
                               -1 when not measured (no Redis, or the
                               server restarted) */
    int64_t redis_cpu_us;   /* server CPU over measured_s: delta of INFO cpu
                               used_cpu_sys + used_cpu_user, us; -1 when
                               not measured */
    double measured_s;      /* time between the two server snapshots, s; in
                               idle mode the idle window; 0 when not
                               measured */
    double backlog_s;       /* time the backlog enqueue took, s */
    double rtt_ms;          /* one round trip to the server, ms: the median
                               of the ECHOs the trial's own connection
                               sent every 50 ms while the consumers worked
                               (a trial with tasks and no fault), else of
                               a few PINGs before it; -1: no Redis */

    /* What the harness saw that the log does not say. */
    uint64_t errors;        /* claim/ack/reopen calls that failed (not an
                               ack the strategy refused as stale: those are
                               check.ack_refused) */
    char first_error[256];  /* the first of them, "" if none */
    uint64_t payload_mismatches; /* deliveries whose payload differed from
                               the bytes enqueued (binary safety) */
    uint64_t retries;       /* enqueue / ack calls retried after an error */
    bool drained;           /* every task delivered (with a lease_ms: and
                               acked) before the deadline */
    bool interrupted;       /* stopped by a signal (dq_signals_caught) */
    char servers[128];      /* where it ran when a fault started servers
                               of its own ("" otherwise: the caller's) */
    char warning[300];      /* with --redis: the server's maxmemory-policy
                               can evict the queue's keys (one line), or
                               "" */

    /* How it ran. */
    char queue[65];         /* the queue name used */
    dq_opt opts[DQ_MAX_OPTS]; /* effective options (given, then defaults) */
    size_t nopts;
    char redis_version[32]; /* "" without Redis */
    bool process_mode;      /* consumers ran as child processes */
    int kills;              /* consumer processes that died by SIGKILL */
    int restarts;           /* redis-server restarts done */
    int fault_windows;      /* F begin records written by this process */
} dq_trial_result;

/* Fills p with the defaults of params.c's table (1 producer, 1 consumer,
 * 1000 tasks, delay 0:100 ms, ...) and no strategy, fault or target. */
void dq_trial_defaults(dq_trial_params *p);

/* Runs the trial.  Returns 0 with *r filled, 1 when stopped by a signal
 * (signals.h dq_signals_caught; r filled with what was checked), or -1
 * with a one-line message in err: 2-class errors (bad input: queue keys
 * already exist without fresh, the queue is claimed by another run,
 * strategy refused its options, Redis unreachable or wrong password,
 * Redis too old) are reported the same way; the caller exits 2.  A trial
 * that fails once it holds its queue leaves no key of it behind and, once
 * its log exists, ends it with H failed and Z failed (trial.c). */
int dq_trial_run(const dq_trial_params *p, dq_trial_result *r, char *err,
                 size_t errlen);

/* What a task carries, so that tests and other tools can rebuild it: the
 * payload of task `index` (payload_len bytes, seeded; the first bytes are
 * NUL, LF, ',', TAB, CR, '"' and '\\' to catch text-only handling), and
 * its delay in [lo_ms, hi_ms] (trial_tasks.c). */
void dq_trial_payload(uint64_t seed, int64_t index, unsigned char *buf,
                      size_t payload_len);
int64_t dq_trial_delay_ms(uint64_t seed, int64_t index, int64_t lo_ms,
                          int64_t hi_ms);

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
 * checker's counts (dq_check_json), then strategy, queue, options as an
 * object, every parameter of params.c's table under its key (delay_ms as
 * {min,max}, seed an integer, or a string above INT64_MAX), then
 * tasks_per_s, elapsed_s, redis_commands (null when not measured),
 * redis_version, counters {...}, errors, first_error, payload_mismatches,
 * drained, interrupted, guarantees [..], violations [..], measured_s,
 * redis_cpu_ms (null when not measured), backlog_s, faults [specs],
 * kills, restarts, retries.  NULL on allocation failure. */
struct json_t;
struct json_t *dq_trial_json(const dq_trial_params *p,
                             const dq_trial_result *r);

/* The child side of a process-mode trial: what one child process runs. */
typedef struct dq_child_spec {
    bool all_in_one;        /* producers + consumers of an in-process
                               strategy; else one consumer */
    int slot;               /* consumer slot (c<slot>); all_in_one: 0 */
    int gen;                /* its generation: 0 for the first process of
                               the slot, then one more per restart */
    const char *name;       /* consumer name ("c0", "c0.1"); all_in_one:
                               unused (workers are p<i>, c<i>) */
    struct dq_eventlog *log; /* the trial's event log, opened by the caller
                               with dq_eventlog_open_append
                               (DQ_LOG_SYNC_EACH); not closed here */
    /* NULL, or Sentinel's "host:port" and the master name (dq_config):
     * the trial runs on the servers of a failover fault. */
    const char *sentinels;
    const char *sentinel_master;
} dq_child_spec;

/* Runs the child's work with p (strategy, options, queue, Redis target,
 * the parameters sent by the parent, faults: each consumer's plan comes
 * from dq_faults_consumer_plan with c's slot and gen) until SIGTERM
 * (signals.h) or death by its own plan, then prints one summary line
 * "S <round_trips> <empty_polls> <lost_races> <wakeups> <putbacks>
 * <errors> <payload_bad> <retries> <first error>" on stdout.  Returns 0,
 * or -1 with a message in err (bad options, unreachable Redis). */
int dq_trial_child_run(const dq_trial_params *p, const dq_child_spec *c,
                       char *err, size_t errlen);

#endif
