/* trial_int.h -- what the files of one trial share (not for other users).
 *
 * A trial is cut by job, each file with its own top comment:
 *   trial.c          dq_trial_run, one function per numbered step
 *   trial_tasks.c    seeded task contents: ids, payloads, delays
 *   trial_workers.c  producer, backlog and consumer loops (threads, and the
 *                    consumer loop of a child process), shared state
 *   trial_procs.c    process mode, parent side: spawning, watching and
 *                    stopping consumer processes; consumer control for
 *                    faults in every mode
 *   trial_faults.c   the fault schedule: each fault row's hooks at its time
 *   trial_redis.c    the admin connection: the queue's keys, INFO
 *   trial_sampler.c  the latency sampler: PINGs from a thread of its own
 *   trial_output.c   log headers, progress line, violations, JSON
 *   consumer_proc.c  process mode, child side (`dqlab __child`)
 * Layering (calls go down only): trial.c uses all of them; trial_faults.c
 * and trial_procs.c use trial_workers.c; trial_workers.c uses
 * trial_tasks.c.  Internal functions are exported from libdq.a with the
 * dq_trial_ prefix.
 */
#ifndef DQ_TRIAL_INT_H
#define DQ_TRIAL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../strategies/rconn.h"
#include "eventlog.h"
#include "faults.h"
#include "trial.h"

#define DQ_TRIAL_WAIT_STEP_US 10000

/* ---- Shared state (trial_workers.c) ----------------------------------- */

typedef struct dq_trial_state {
    const dq_trial_params *p;      /* settled (dq_params_settle) */
    dq_eventlog *log;              /* the log this process writes */
    bool retry;                    /* faults: retry enqueue / ack */
    _Atomic uint64_t *seen;        /* bit per task index: delivered once */
    atomic_int_fast64_t distinct;  /* bits set in seen */
    _Atomic uint64_t *acked;       /* bit per task index: an ack accepted
                                      (an A record) */
    atomic_int_fast64_t acked_distinct; /* bits set in acked */
    atomic_int_fast64_t enqueued;
    atomic_int_fast64_t refused;   /* enqueues the server refused (N
                                      records): never delivered, not
                                      waited for */
    atomic_int_fast64_t first_e_us;  /* 0 until the first enqueue */
    atomic_int_fast64_t last_d_us;
    atomic_int_fast64_t latest_due_ms;
    atomic_int producers_left;
    atomic_bool stop;
    atomic_bool failed;            /* a producer, a fault or the log failed */
    atomic_bool outage;            /* consumer threads close their handles */
    atomic_uint_fast64_t errors;
    atomic_uint_fast64_t payload_bad;
    atomic_uint_fast64_t retries;
    _Atomic int64_t clock_step_us; /* this process's consumers' wall-clock
                                      step (dq_config.clock_step_us), set
                                      through the control socket
                                      (clock-step) */
    dq_config cfg;                 /* base config, to reopen a handle */
    pthread_mutex_t mu;            /* guards the two messages below */
    char fail_msg[256];
    char first_error[256];
} dq_trial_state;

typedef struct dq_trial_worker {
    dq_trial_state *t;
    dq_queue *q;                   /* NULL while closed by an outage */
    int index;
    char name[24];                 /* "p0", "c3", "c3.1" */
    pthread_t th;
    bool started;
    dq_consumer_plan plan;         /* its clock offset and death (faults.h) */
    int64_t claims;                /* successful claims so far */
    dq_counters acc;               /* counters of its handles, closed ones
                                      included with what their close did */
} dq_trial_worker;

/* Initialises / frees t's mutex and fields (bitmaps are the caller's). */
void dq_trial_state_init(dq_trial_state *t, const dq_trial_params *p);
void dq_trial_state_free(dq_trial_state *t);
/* Records a fatal problem and stops the trial (the first message wins). */
void dq_trial_fail(dq_trial_state *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Counts an error that is not fatal and keeps the first message. */
void dq_trial_error(dq_trial_state *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* True once the trial stops (its own stop, or a signal). */
bool dq_trial_should_stop(dq_trial_state *t);
/* Sets task index idx's bit in bits (if not yet set) and counts it. */
void dq_trial_mark(_Atomic uint64_t *bits, atomic_int_fast64_t *count,
                   int64_t idx);
void dq_trial_atomic_min(atomic_int_fast64_t *a, int64_t v);
void dq_trial_atomic_max(atomic_int_fast64_t *a, int64_t v);
/* Points cfg's Redis fields at target t (strings borrowed from t). */
void dq_trial_config_redis(dq_config *cfg, const struct dq_redis_target *t);
/* The config of worker w's handle: the base config, its name, its clock
 * (a consumer's also reads the process's clock step). */
dq_config dq_trial_worker_config(const dq_trial_worker *w);
/* Closes w's handle (if open) and adds its counters, what the close itself
 * did included (dq_close_into), to w->acc. */
void dq_trial_worker_close(dq_trial_worker *w);
/* Thread bodies; arg is a dq_trial_worker. */
void *dq_trial_producer(void *arg);
void *dq_trial_backlog(void *arg);
void *dq_trial_consumer(void *arg);
void dq_trial_add_counters(dq_counters *to, const dq_counters *c);

/* ---- Task contents (trial_tasks.c) -------------------------------------- */

/* Writes prefix and the decimal digits of v (>= 0) into buf (>= 22
 * bytes), NUL-terminated; returns the length. */
size_t dq_trial_format_id(char *buf, char prefix, int64_t v);
/* The index of a harness id "t<digits>" below tasks, or -1. */
int64_t dq_trial_id_index(const char *id, int64_t tasks);

/* ---- Process mode, parent side (trial_procs.c) -------------------------- */

/* The control socket on every child's stdin: one command a line, sent by
 * trial_procs.c, read by consumer_proc.c between its workers' steps:
 *   "outage 1" / "outage 0"   an all-in-one child's consumer threads close
 *                             their handles and wait / start again
 *   "clock_step <us>"         its consumers' wall clock is <us> (signed
 *                             decimal) off from now on: the total of the
 *                             slot's clock steps, sent again to every
 *                             later process of the slot */
#define DQ_TRIAL_CTL_OUTAGE "outage"
#define DQ_TRIAL_CTL_CLOCK_STEP "clock_step"

typedef struct dq_trial_procs dq_trial_procs;

/* Prepares process mode for t: the executable (p->child_exe or
 * /proc/self/exe), the children's environment (the Redis password in
 * DQLAB_CHILD_REDIS_PASSWORD, never in argv), one slot per consumer (one
 * for an in-process strategy: all_in_one) and the tail of the log.
 * Returns the new object, or NULL with err. */
dq_trial_procs *dq_trial_procs_new(dq_trial_state *t, bool all_in_one,
                                   char *err, size_t errlen);
/* Starts every slot's process.  Returns 0, or -1 with err. */
int dq_trial_procs_start(dq_trial_procs *ps, char *err, size_t errlen);
/* Reads the records the children appended since the last call (progress)
 * and reaps the children that exited: a planned kill gets its F end and a
 * replacement; any other exit fails the trial.  r->kills counts kills.  A
 * child that stopped itself for stop_ms (its F begin record says so) is
 * resumed with SIGCONT once that time is up, and the F end written. */
void dq_trial_procs_watch(dq_trial_procs *ps, dq_trial_result *r);
/* All-in-one: the child died (nothing more can follow), or has logged
 * every enqueue. */
bool dq_trial_procs_producers_done(const dq_trial_procs *ps);
/* True while a child that stopped itself (stall-consumer) waits for the
 * SIGCONT the watch sends once its time is up: the trial does not end
 * meanwhile, so that the stalled consumer's late ack is in the log. */
bool dq_trial_procs_stalled(const dq_trial_procs *ps);
/* Stops every child (SIGTERM, then SIGKILL after 3 s), reaps them and
 * takes their summaries, polling: it returns within 5 s whatever the
 * children do (one still there 2 s after its SIGKILL is left to the
 * kernel and fails the trial).  Nothing is left running. */
void dq_trial_procs_stop(dq_trial_procs *ps);
/* What the children's summary lines added up to. */
void dq_trial_procs_totals(const dq_trial_procs *ps, dq_counters *c,
                           uint64_t *errors, uint64_t *payload_bad,
                           uint64_t *retries, char *first_error,
                           size_t len);
/* Stops and frees; NULL is fine. */
void dq_trial_procs_free(dq_trial_procs *ps);
/* The consumers of the trial for the faults (faults.h): the processes of
 * ps, or the thread workers of t when ps is NULL. */
void dq_trial_consumers(dq_fault_consumers *out, dq_trial_state *t,
                        dq_trial_procs *ps);

/* ---- The fault schedule (trial_faults.c) -------------------------------- */

typedef struct dq_trial_faults {
    dq_fault_ctx ctx;
    dq_fault_consumers consumers;
    struct {
        const dq_fault *f;
        int64_t at_us;     /* mono time it begins */
        int64_t end_us;    /* mono time an open window ends */
        int phase;         /* 0 pending, 1 open, 2 done */
    } run[DQ_MAX_FAULTS];
    size_t n;
    int64_t done_wall_ms;  /* when the last AT window closed, 0 before */
} dq_trial_faults;

/* Fills the context (hooks get p, the server, the admin connection, the
 * log once set, the consumers). */
void dq_trial_faults_init(dq_trial_faults *tf, const dq_trial_params *p,
                          dq_queue *admin, struct redisContext *redis);
/* The servers hook of the fault that starts servers of its own, if any:
 * afterwards tf->ctx.target says where the clients go (port 0: the
 * caller's server).  Returns 0, or -1 with err. */
int dq_trial_faults_servers(dq_trial_faults *tf, char *err, size_t errlen);
/* Each fault's prepare hook.  Returns 0, or -1 with err. */
int dq_trial_faults_prepare(dq_trial_faults *tf, char *err, size_t errlen);
/* Begins the THROUGHOUT faults (before the consumers start).  Returns
 * 0, or -1 with err. */
int dq_trial_faults_start(dq_trial_faults *tf, char *err, size_t errlen);
/* Times the AT windows from start_us (mono: the wait began). */
void dq_trial_faults_schedule(dq_trial_faults *tf, int64_t start_us);
/* Begins and ends the AT windows that are due.  Returns 0, or -1 with
 * err. */
int dq_trial_faults_tick(dq_trial_faults *tf, char *err, size_t errlen);
/* True while an AT window is pending or open. */
bool dq_trial_faults_pending(const dq_trial_faults *tf);
/* The trial stops: cut the open windows (before the consumers are
 * joined). */
void dq_trial_faults_cut(dq_trial_faults *tf);
/* The consumers stopped: end records of the windows cut short and of the
 * THROUGHOUT faults. */
void dq_trial_faults_stop(dq_trial_faults *tf);
/* Each fault's finish hook (every path). */
void dq_trial_faults_finish(dq_trial_faults *tf);

/* ---- The admin connection (trial_redis.c) ------------------------------- */

/* The claim of one trial on its queue, dq:{queue}:owner (trial_redis.c's
 * top comment): zeroed by the caller, filled by dq_trial_redis_open. */
#define DQ_TRIAL_OWNER_TTL_MS 30000
#define DQ_TRIAL_OWNER_REFRESH_MS 5000
typedef struct dq_trial_owner {
    bool held;                 /* the key holds our value (as far as we
                                  know) */
    char key[96];              /* dq:{queue}:owner */
    char id[160];              /* our value: "dqlab pid N on HOST since T" */
    dq_script refresh, release;
    dq_queue q;                /* the refresher's bare handle ... */
    struct redisContext *c;    /* ... and its own connection */
    pthread_t th;
    bool started, sync_init, stop;
    pthread_mutex_t mu;        /* guards stop */
    pthread_cond_t cv;
    atomic_bool lost;          /* another run holds the key now */
    char lost_msg[300];        /* why, written before lost is set */
} dq_trial_owner;

/* Connects the bare handle admin for queue (rconn.h helpers: the same
 * AUTH / version / unreachable messages as the strategies) and reads the
 * server's version into version.  With o (a server that is not dqlab's):
 * claims dq:{queue}:owner (SET NX PX) first and refuses a queue another
 * run holds -- fresh or not -- then starts the thread that renews the
 * claim.  Refuses a queue whose other keys exist unless fresh (then
 * purges them).  Returns 0 with *c, or -1 with err (*c may be set: the
 * caller frees it; o may hold a claim: dq_trial_redis_close releases
 * it). */
int dq_trial_redis_open(dq_queue *admin, const dq_trial_params *p,
                        const dq_config *cfg, struct redisContext **c,
                        dq_trial_owner *o, char *version, size_t vlen,
                        char *err, size_t errlen);
/* Stops the refresher and closes its connection; no command is sent
 * (every path; again is fine). */
void dq_trial_owner_stop(dq_trial_owner *o);
/* True (with why in msg) once the refresher found the key held by
 * another run; false for o NULL. */
bool dq_trial_owner_lost(const dq_trial_owner *o, char *msg, size_t len);
/* The end of the trial on the server, every path: stops the refresher,
 * then deletes every key dq:{queue}:* -- with a claim, only while it is
 * still ours, the owner key last.  o may be NULL (no claim).  Returns 0,
 * or -1 with err (keys left: Redis failed, or the queue is another
 * run's now). */
int dq_trial_redis_close(dq_queue *admin, struct redisContext *c,
                         dq_trial_owner *o, char *err, size_t errlen);
/* On a server that is not ours (--redis): a warning into out when its
 * maxmemory-policy can evict the queue's keys once maxmemory (set, not 0)
 * is reached -- allkeys-*, or volatile-* for a strategy whose keys carry
 * a TTL (flags DQ_G_TTL_KEYS) -- else "".  CONFIG GET refused (an ACL
 * user): no warning. */
void dq_trial_redis_evict_warning(dq_queue *admin, struct redisContext *c,
                                  unsigned flags, char *out, size_t len);

/* One round trip to the server: the median time of DQ_TRIAL_RTT_PINGS
 * PINGs on c, in ms, into *rtt_ms (-1 when a PING failed).  Sent before
 * the first snapshot, so the trial's command counts never include them.
 * dq_trial_redis_echo times one ECHO on c into *us (DQ_OK, or the error
 * code with admin->err; the snapshots leave ECHO calls out), and
 * dq_trial_rtt_median is the median of us[0..n-1] in ms (sorts us; -1
 * when n is 0). */
#define DQ_TRIAL_RTT_PINGS 21
void dq_trial_redis_rtt(dq_queue *admin, struct redisContext *c,
                        double *rtt_ms);
int dq_trial_redis_echo(dq_queue *admin, struct redisContext *c,
                        int64_t *us);
double dq_trial_rtt_median(int64_t *us, size_t n);
/* One snapshot of what the server did: INFO commandstats calls (and our
 * own INFO and ECHO calls), INFO cpu. */
typedef struct dq_trial_snapshot {
    int64_t commands, info_calls, cpu_us, mono_us;
} dq_trial_snapshot;
int dq_trial_redis_snapshot(dq_queue *admin, struct redisContext *c,
                            dq_trial_snapshot *s);

/* ---- The latency sampler (trial_sampler.c) ----------------------------- */

#define DQ_TRIAL_SAMPLER_MS 10          /* PING interval */
#define DQ_TRIAL_SAMPLER_TIMEOUT_MS 1000 /* its socket timeout */

typedef struct dq_trial_sampler dq_trial_sampler;

/* Starts the sampler (trial_sampler.c's top comment) on a connection of
 * its own to admin's server (a copy of the bare handle).  Returns it, or
 * NULL with err (the connect failed). */
dq_trial_sampler *dq_trial_sampler_start(const dq_queue *admin, char *err,
                                         size_t errlen);
/* Stops and joins s (within one PING: at most its socket timeout), then
 * writes its H records (redis_pings, and redis_ping_p99_ms and
 * redis_stall_ms when there were answers to measure) to log (NULL: none),
 * puts the PINGs answered in *pongs (NULL: not wanted) and frees s.  s
 * NULL is fine.  Returns 0, or -1 with errno when a record failed. */
int dq_trial_sampler_stop(dq_trial_sampler *s, dq_eventlog *log,
                          int64_t *pongs);

/* ---- Output (trial_output.c) -------------------------------------------- */

/* The H records of the run (strategy, queue, the parameters, faults, start
 * time, Redis version, options).  Returns 0 or -1 (errno). */
int dq_trial_log_headers(dq_eventlog *log, const dq_trial_params *p,
                         const dq_trial_result *r);
/* The progress line on stderr (final: clear it on a terminal). */
void dq_trial_progress(dq_trial_state *t, int64_t start_us, bool tty,
                       bool final);

#endif
