/* faults.h -- the faults a trial can inject: one ops row per kind.
 *
 * A fault is given as a spec "NAME[:ARG]..." (`dqlab run --fault SPEC`,
 * repeatable; `faults = SPEC, SPEC` in an experiment file, one trial per
 * item, "none" for no fault).  Each kind is one row, a const dq_fault_ops
 * in its own file (harness/fault_<name>.c, Jepsen calls such a part a
 * nemesis), listed once in faults.c's table.  The row says everything
 * about its kind, so that the command line, the experiments, the trial,
 * the checker and the report agree by construction:
 *   - how its spec is parsed and written back (parse, format);
 *   - what it needs (needs: the harness-owned server, Redis at all,
 *     consumers that block, consumers as processes) and how the private
 *     server must be started for it (server_opts);
 *   - when and how it acts (timing; prepare, begin, end, cut, finish on
 *     the trial's main thread through a dq_fault_ctx; consumer_plan for
 *     what a consumer does to itself), writing its own F records;
 *   - which losses and duplicates it can explain and which losses the
 *     declared guarantees allow under it (the checker's rules, as data and
 *     one callback);
 *   - the words the report uses for it (describe, mechanism) and which of
 *     its tallies it counts in (report_class).
 * Nothing outside its row names a fault.  Adding one: its row's file, its
 * line in faults.c, and whatever mechanism it drives.
 *
 * The kinds today (each row's file has the details):
 *   kill-consumer:POINT[:N]      SIGKILL a consumer process at POINT of its
 *                                k-th claim (k seeded), N times (1); POINT
 *                                after-claim, during-work, before-ack or
 *                                before-retry (needs fail_every); a
 *                                replacement starts.  Forces process mode.
 *   restart-redis:MODE[:AT_MS]   SIGKILL the harness-owned redis-server and
 *                                start it again; MODE off, everysec or
 *                                always (AOF appendfsync).
 *   pause-redis:MS[:AT_MS]       SIGSTOP the server for MS, then SIGCONT.
 *   subscriber-outage:MS[:AT_MS] every consumer down for MS, then back.
 *   clock-skew:[producer:][+|-]MS  consumer c0's clock (every producer's)
 *                                MS ahead or behind for the whole trial.
 *   stall-consumer:MS[:N]        a consumer process stops itself (SIGSTOP)
 *                                right after a delivery, N times (1); the
 *                                parent resumes it (SIGCONT) MS later.
 *   clock-step:+|-MS[:AT_MS]     consumer c0's wall clock (every consumer
 *                                thread of an in-process strategy's
 *                                process) steps by MS, as NTP steps it.
 *   busy-redis:MS[:AT_MS]        a Lua script keeps the harness-owned
 *                                server busy for MS, past
 *                                busy-reply-threshold: clients get BUSY.
 *   mover-stall[:AT_MS]          CLIENT KILL ID of the trial's subscribed or
 *                                blocked connections (named dqlab:<queue>:).
 *   os-crash:MODE[:AT_MS]        a host crash of a server of the trial's own
 *                                with AOF appendfsync MODE (everysec or
 *                                always): SIGKILL, what was not fsynced
 *                                dropped, restart (oscrash.h).
 *   failover[:AT_MS]             the trial runs on a primary, a replica and
 *                                Sentinel of its own (replset.h); SIGKILL
 *                                the primary, Sentinel promotes the
 *                                replica, a new replica joins.
 *   evict:POLICY[:AT_MS]         maxmemory just above what the server holds,
 *                                maxmemory-policy POLICY (allkeys-lru,
 *                                volatile-lru or noeviction), filler keys
 *                                written beside the queue for a second.
 *
 * Seeded times: AT_MS absent means a time in [max(50, D/5), max(that,
 * D/2)] ms after the trial's wait began, D = the trial's delay_max_ms,
 * picked from the seed and the fault's position in the list
 * (dq_fault_at_ms).
 */
#ifndef DQ_FAULTS_H
#define DQ_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../strategies/dq.h"

#define DQ_MAX_FAULTS 8

typedef struct dq_fault_ops dq_fault_ops;
typedef struct dq_fault_ctx dq_fault_ctx;
struct dq_trial_params;
struct dq_redis_server;
struct dq_redis_server_opts;
struct dq_eventlog;
struct redisContext;

/* One fault of a trial, parsed by its row: the fields mean what that row's
 * parser says (a row uses the ones it needs and leaves the others zero). */
typedef struct dq_fault {
    const dq_fault_ops *ops; /* its kind; NULL: no fault ("none") */
    int64_t ms;              /* a length (pause, outage) or a signed offset
                                (clock skew), ms */
    int64_t at_ms;           /* start, ms after the wait began; -1: seeded */
    int64_t count;           /* repetitions (kills) */
    char word[16];           /* a named mode ("always", "after-claim") */
} dq_fault;

/* Where in a claim a consumer may kill itself (kill-consumer). */
typedef enum dq_kill_point {
    DQ_KILL_NONE = 0,
    DQ_KILL_AFTER_CLAIM,     /* claim returned, before the D record */
    DQ_KILL_DURING_WORK,     /* after D, half way through the work */
    DQ_KILL_BEFORE_ACK,      /* after the work, before the ack */
    DQ_KILL_BEFORE_RETRY,    /* the work failed (fail_every), before the
                                re-add or nack that retries the task: at
                                the first failed claim from the planned
                                one on */
} dq_kill_point;

/* Stalls one consumer's plan holds at most (stall-consumer). */
#define DQ_MAX_STALLS 16

/* What the faults of a trial make one consumer do to itself, the same in
 * a worker thread, a consumer process and the threads of an in-process
 * strategy's one process: its clock offset, and where it dies. */
typedef struct dq_consumer_plan {
    int64_t clock_offset_us;    /* added to its clock (dq_config) */
    int64_t die_claim;          /* SIGKILL itself at this claim, 1-based;
                                   0: never */
    dq_kill_point die_point;
    const dq_fault_ops *die_by; /* the row whose F records its death
                                   writes (NULL when it never dies) */
    /* Where it stops itself (SIGSTOP) for a while, right after the D
     * record of claims stall_claim[0..nstalls-1] (1-based, ascending):
     * it writes the F begin "<name>:stop_ms=MS,claim=K,id=ID" of the row
     * stall_by first, and the parent resumes it (SIGCONT) MS later and
     * writes the F end (trial_procs.c).  Process mode only. */
    int nstalls;
    int64_t stall_claim[DQ_MAX_STALLS], stall_ms[DQ_MAX_STALLS];
    const dq_fault_ops *stall_by;
} dq_consumer_plan;

/* The consumers a fault may act on, provided by the trial: thread
 * workers, consumer processes, or an in-process strategy's one process.
 * stop: every consumer stops (threads close their handles, processes get
 * SIGTERM and exit cleanly, the one process's consumer threads close
 * theirs while its producers go on); start: they run again, returns 0,
 * 1 while the stopped ones are still finishing (call again), -1 with err.
 * count / pid / ctl_fd: the consumer processes (slot 0..count-1; pid 0
 * while a slot runs none; ctl_fd the socket on its stdin, -1 if none);
 * count is 0 in thread mode. */
typedef struct dq_fault_consumers {
    void *impl;
    void (*stop)(void *impl);
    int (*start)(void *impl, char *err, size_t errlen);
    int (*count)(void *impl);
    pid_t (*pid)(void *impl, int slot);
    int (*ctl_fd)(void *impl, int slot);
    /* Steps the wall clock of slot's consumers by add_us (more steps add
     * up) from now on, as NTP steps a host's clock: the consumer process
     * of the slot, every later process of it (a replacement), and for an
     * in-process strategy's one process every consumer thread of it (any
     * slot); its producers keep the true clock, so that the log's due
     * times stay true.  Through the process's control socket; 0, or -1
     * when the consumers are threads (a fault needing it needs process
     * mode). */
    int (*clock_step)(void *impl, int slot, int64_t add_us);
} dq_fault_consumers;

/* Where the trial's clients go when a fault starts servers of its own
 * (dq_fault_ops.servers): the trial points the admin connection, the
 * producers, the consumers and the consumer processes at it. */
typedef struct dq_fault_target {
    int port;            /* 127.0.0.1:port, the server to use (with
                            Sentinel: the primary at the start); 0: the
                            fault started none */
    char sentinels[32];  /* "127.0.0.1:<port>" for dq_config.sentinels
                            (clients then ask Sentinel for the primary on
                            every connect), "" without Sentinel */
    char master[32];     /* the name Sentinel monitors the primary under */
} dq_fault_target;

/* What a fault's hooks act on: given by the trial, which runs every hook
 * on its main thread (the private server and the consumer processes are
 * forked from it; their PR_SET_PDEATHSIG is tied to that thread). */
struct dq_fault_ctx {
    const struct dq_trial_params *p;  /* the trial's parameters */
    struct dq_redis_server *server;   /* harness-owned server; NULL with
                                         --redis (pid updated on restart);
                                         the fault's own when its servers
                                         hook started one (the current
                                         primary) */
    dq_queue *admin;                  /* bare handle of the admin
                                         connection (rconn.h helpers) */
    struct redisContext *redis;       /* the admin connection; NULL when
                                         the trial uses no Redis */
    struct dq_eventlog *log;          /* the trial's event log */
    const dq_fault_consumers *consumers;
    int restarts;                     /* server restarts done */
    int windows;                      /* F begin records written */
    char err[300];                    /* why a hook failed */
    /* The fault being run: its position in p->faults, and a slot per
     * fault for whatever a row keeps between its hooks (a second server,
     * a saved setting); NULL until a hook sets it, and the row's finish
     * frees it. */
    size_t index;
    void *state[DQ_MAX_FAULTS];
    /* Filled by a servers hook (zero: the trial uses the caller's). */
    dq_fault_target target;
};

/* When a fault acts. */
typedef enum dq_fault_timing {
    DQ_FAULT_AT,          /* a window from a seeded or given time: begin,
                             then end once its hold runs out */
    DQ_FAULT_THROUGHOUT,  /* the whole run: begin before the consumers
                             start, end after they stopped */
    DQ_FAULT_IN_CONSUMER, /* the consumers act on themselves
                             (consumer_plan); no begin or end hooks */
} dq_fault_timing;

/* What a fault needs (dq_fault_ops.needs). */
enum {
    DQ_FAULT_NEEDS_OWN_SERVER = 1u << 0, /* acts on the redis-server
                                            process dqlab started */
    DQ_FAULT_NEEDS_REDIS = 1u << 1,      /* a strategy that uses Redis */
    DQ_FAULT_NEEDS_BLOCKING = 1u << 2,   /* a strategy whose consumers
                                            block (DQ_G_BLOCKS) */
    DQ_FAULT_NEEDS_PROCESS = 1u << 3,    /* consumers as processes (the
                                            trial switches to them) */
    DQ_FAULT_ONE_PER_TRIAL = 1u << 4,    /* at most one of its kind */
    DQ_FAULT_GIVES_REPLICAS = 1u << 5,   /* its servers include a replica:
                                            the only trials where option
                                            wait > 0 can be confirmed on a
                                            server dqlab starts (an
                                            experiment skips wait > 0
                                            cells of the other faults) */
};

/* Which never-delivered tasks a fault window can explain (the checker's
 * attribution rules, checker.h).  The window must have begun at or before
 * the end and ended at or after the task's E record; then: */
typedef enum dq_fault_loss {
    DQ_LOSS_NONE = 0,     /* none: a wrong clock delivers early or late,
                             it does not lose (and unknown names never) */
    DQ_LOSS_ENQUEUED,     /* any task enqueued before the window ended:
                             wiped with the queue's data */
    DQ_LOSS_DUE,          /* a task due by the window's end plus
                             DQ_CHECK_LOSS_SLACK_MS: in a dead consumer's
                             hands, in flight, or expired unheard */
} dq_fault_loss;

/* What else a fault window explains (dq_fault_ops.explains). */
enum {
    DQ_FAULT_EXPLAINS_CLAIMED = 1u << 0, /* a task last delivered to the
                                            window's consumer before it and
                                            never acked is lost with it
                                            (or pending under a lease) */
    DQ_FAULT_EXPLAINS_EARLY = 1u << 1,   /* early deliveries inside it;
                                            it acts on every consumer's
                                            tasks (a skewed mover) */
    DQ_FAULT_REPEATS_ANY = 1u << 2,      /* a reply lost in it may make
                                            any strategy repeat a task: not
                                            held against at-most-once */
};

/* dq_fault_ops.rollback_ms for a fault that may drop every write made
 * before it (no persistence, or a snapshot of unknown age). */
#define DQ_FAULT_ROLLBACK_ALL INT64_MAX

/* Which tally of the report's first screen (report/facts.h) the losses
 * under a fault count in (dq_fault_ops.report_class). */
typedef enum dq_fault_class {
    DQ_FAULT_CLASS_NONE = 0,        /* none of them (a pause, a clock) */
    DQ_FAULT_CLASS_CONSUMER_CRASH,  /* consumers killed in their work */
    DQ_FAULT_CLASS_SERVER_CRASH,    /* the redis-server process killed and
                                       restarted, per AOF mode (word) */
    DQ_FAULT_CLASS_HOST_CRASH,      /* a host crash, per AOF mode (word) */
    DQ_FAULT_CLASS_CONSUMER_OUTAGE, /* every consumer down for a while */
    DQ_FAULT_CLASS_RETRY_TEST,      /* consumers killed to test a retry
                                       recipe, not what a crash costs: its
                                       losses count against no strategy */
} dq_fault_class;

struct dq_fault_ops {
    const char *name;     /* as in specs and F records: "kill-consumer" */
    const char *usage;    /* "kill-consumer:POINT[:N]" */
    const char *help;     /* NULL, or lines for `dqlab run --help`,
                             '\n' between them, each at most 50 bytes */

    /* Parses the spec's parts after the name (arg[0..narg-1], narg 0..4)
     * into f (zeroed, at_ms -1, ops set).  Returns 0, or -1 with what is
     * wrong in err (the caller prefixes "fault 'SPEC': "). */
    int (*parse)(dq_fault *f, char *const *arg, int narg, char *err,
                 size_t errlen);
    /* The canonical spec of f into buf ("kill-consumer:after-claim:3"). */
    void (*format)(const dq_fault *f, char *buf, size_t len);

    unsigned needs;       /* DQ_FAULT_NEEDS_*, DQ_FAULT_ONE_PER_TRIAL */
    /* Optional: how the private server must be started for f (e.g. the
     * AOF mode a restart keeps), before any trial runs. */
    void (*server_opts)(const dq_fault *f, struct dq_redis_server_opts *o);
    /* Optional: starts servers of f's own for this trial only, in place of
     * the caller's private server (which stays idle), and says where in
     * c->target; c->server then points at the one the fault acts on.  The
     * trial calls it before it connects (needs DQ_FAULT_NEEDS_OWN_SERVER:
     * never with --redis); at most one fault of a trial may have it; its
     * row's finish stops them on every path.  Returns 0, or -1 with
     * c->err (nothing left running). */
    int (*servers)(dq_fault_ctx *c, const dq_fault *f);

    dq_fault_timing timing;
    /* Every hook is optional (NULL: nothing to do) and returns 0, or -1
     * with c->err set (the trial then fails).  prepare: before the run
     * starts (checks, server settings).  begin: opens the window (writes
     * its F begin record through dq_fault_record) and sets *hold_ms to
     * how long it stays open, 0 when begin already closed it.  end: closes
     * it (F end), or returns 1 when it cannot yet (call again).  cut: the
     * trial ends inside the window; undo what must not outlast it at once
     * (before the consumers are joined); return 1 when cut wrote the F end
     * itself, 0 to have the trial write "end interrupted=1" once the
     * consumers stopped.  finish: after the run on every path (restore
     * server settings). */
    int (*prepare)(dq_fault_ctx *c, const dq_fault *f);
    int (*begin)(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms);
    int (*end)(dq_fault_ctx *c, const dq_fault *f);
    int (*cut)(dq_fault_ctx *c, const dq_fault *f);
    void (*finish)(dq_fault_ctx *c, const dq_fault *f);
    /* What f (at position index of p->faults) makes consumer `slot` do in
     * its generation `gen` (0 for the first process of a slot, counting
     * restarts), in plan (already holding the earlier faults' parts);
     * all_in_one: the consumer threads of an in-process strategy's one
     * process.  Optional. */
    void (*consumer_plan)(const dq_fault *f, const struct dq_trial_params *p,
                          size_t index, int slot, int gen, bool all_in_one,
                          dq_consumer_plan *plan);
    /* The same for producer `producer` (0..producers-1): only
     * plan->clock_offset_us is read.  Optional. */
    void (*producer_plan)(const dq_fault *f, const struct dq_trial_params *p,
                          size_t index, int producer,
                          dq_consumer_plan *plan);

    /* The checker (checker.c reads these by the name in the F record). */
    dq_fault_loss loss;
    unsigned explains;        /* DQ_FAULT_EXPLAINS_*, DQ_FAULT_REPEATS_ANY */
    const char *end_wipes;    /* an F end arg holding this text makes the
                                 window DQ_LOSS_ENQUEUED (the queue died
                                 with the process); NULL: never */
    /* Whether a loss attributed to this fault is allowed for a strategy
     * declaring flags (DQ_G_*); arg is the arg of the fault's first begin
     * record.  NULL: always allowed. */
    bool (*loss_allowed)(const char *arg, unsigned flags);
    const char *lost_verdict; /* its own violation line for a loss the
                                 flags rule out; NULL: the common one */
    /* Optional, for a fault that rolls the server's data back (a crash
     * drops the writes not yet durable, a promoted replica lacks what it
     * had not applied): how many ms before the window's begin the writes
     * it may drop reach, from the arg of its begin record
     * (DQ_FAULT_ROLLBACK_ALL: back to the start).  A task whose
     * delivery fell from then through the window's end and that is
     * delivered again after the begin, whenever, came back because its
     * claim's write was dropped: a duplicate the fault explains
     * (checker.h dup_fault).  NULL: the fault rolls nothing back. */
    int64_t (*rollback_ms)(const char *arg);

    /* The report: describe writes the phrase for f ("the redis-server
     * killed and restarted with AOF always"); mechanism says why the fault
     * does what it does, without numbers. */
    void (*describe)(const dq_fault *f, char *buf, size_t len);
    const char *mechanism;
    /* Optional: the report's class of f; NULL: DQ_FAULT_CLASS_NONE. */
    dq_fault_class (*report_class)(const dq_fault *f);
};

/* ---- The table (faults.c) --------------------------------------------- */

/* Every fault kind, NULL-terminated, in the order --help lists them. */
extern const dq_fault_ops *const dq_fault_kinds[];
/* The kind called name, or NULL. */
const dq_fault_ops *dq_fault_find(const char *name);

/* Parses one spec ("kill-consumer:after-claim:3", "clock-skew:-200") by
 * its row.  Returns 0 with *f filled, or -1 with one line in err (errlen
 * bytes) naming the spec and what is wrong.  "none" is not a fault: the
 * caller handles it. */
int dq_fault_parse(const char *spec, dq_fault *f, char *err, size_t errlen);
/* The canonical spec of f into buf; "none" for no fault (f NULL or
 * f->ops NULL). */
void dq_fault_format(const dq_fault *f, char *buf, size_t buflen);
/* The name of f's kind, or "none". */
const char *dq_fault_name(const dq_fault *f);
/* True when f needs the flag of dq_fault_ops.needs (false for none). */
bool dq_fault_needs(const dq_fault *f, unsigned need);

/* Whether the harness can apply fault f to strategy s at all, whatever
 * the server and the consumer mode: DQ_FAULT_NEEDS_REDIS needs a strategy
 * with DQ_G_NEEDS_REDIS (so does NEEDS_OWN_SERVER), NEEDS_BLOCKING one with
 * DQ_G_BLOCKS.  Returns true, or false with one line in why naming the
 * strategy and the reason.  The one rule for the CLI, the experiments and
 * dq_trial_run.  No fault (NULL, or ops NULL) always applies. */
bool dq_fault_applies(const dq_fault *f, const dq_strategy *s, char *why,
                      size_t whylen);
/* Whether f can confirm option wait (dq.h dq_redis_options) for strategy
 * variant opts[0..nopts-1]: true unless the variant asks for wait > 0 and
 * f starts no replica (DQ_FAULT_GIVES_REPLICAS; no fault starts none
 * either).  What an experiment's matrix skips beside dq_fault_applies: a
 * wait > 0 trial on a single server fails every write. */
bool dq_fault_serves_wait(const dq_fault *f, const dq_opt *opts,
                          size_t nopts);
/* Checks that faults[0..n-1] can run together in one trial on strategy s
 * with the given server (own_server: dqlab started it) and task count
 * (tasks 0: idle mode): each applies, one of each ONE_PER_TRIAL kind,
 * at most one that starts servers of its own, OWN_SERVER only with
 * own_server, none in idle mode.  Returns 0, or -1 with one line in err
 * ("fault X: ..."). */
int dq_faults_check(const dq_fault *faults, size_t n, const dq_strategy *s,
                    bool own_server, int64_t tasks, char *err,
                    size_t errlen);
/* The options the private server must start with for these faults
 * (each row's server_opts), into *o. */
void dq_faults_server_opts(const dq_fault *faults, size_t n,
                           struct dq_redis_server_opts *o);
/* The whole plan of consumer `slot` in generation `gen` from every fault
 * of p (zeroed first: no offset, never dies). */
void dq_faults_consumer_plan(const struct dq_trial_params *p, int slot,
                             int gen, bool all_in_one,
                             dq_consumer_plan *plan);

/* The plan of producer `producer` from every fault of p (zeroed first):
 * its clock offset. */
void dq_faults_producer_plan(const struct dq_trial_params *p, int producer,
                             dq_consumer_plan *plan);

/* The start of the fault at position index of p->faults, ms after the
 * wait began: its at_ms, or a seeded time (top comment). */
int64_t dq_fault_at_ms(const struct dq_trial_params *p, size_t index);
/* A seeded 64-bit value for fault index of a trial with seed, and salt:
 * what the rows draw their seeded choices from. */
uint64_t dq_fault_hash(uint64_t seed, uint64_t index, uint64_t salt);

/* "after-claim", "during-work", "before-ack", "before-retry", or
 * "none". */
const char *dq_kill_point_name(dq_kill_point p);
/* The point in words for people: "after a claim", "during the work",
 * "before the ack", "before the retry of a failed task"; "" for
 * DQ_KILL_NONE.  The kill-consumer row's
 * description and the report use it. */
const char *dq_kill_point_phrase(dq_kill_point p);
/* Parses a point name; DQ_KILL_NONE when unknown. */
dq_kill_point dq_kill_point_parse(const char *s);

/* For hooks: writes the F record "F <now> <f's name> <phase> <arg>" to
 * c->log (a begin counts in c->windows).  Returns 0, or -1 with c->err
 * naming the log's error. */
int dq_fault_record(dq_fault_ctx *c, const dq_fault *f, const char *phase,
                    const char *arg);
/* For hooks: sets c->err from a printf format and returns -1. */
int dq_fault_fail(dq_fault_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* For the report (a spec as stored in meta.txt and trials.csv): the
 * phrase of its row (dq_fault_ops.describe), "no fault (the baseline)" for
 * "none", or the spec in backquotes when it does not parse. */
void dq_fault_describe(const char *spec, char *buf, size_t len);
/* The mechanism text of the kind called name; for "none" the baseline's
 * text; "" for an unknown name. */
const char *dq_fault_mechanism(const char *name);
/* For the report: the class of spec by its row (report_class);
 * DQ_FAULT_CLASS_NONE for "none" or a spec that does not parse.  f, when
 * not NULL, gets the parsed spec (f->word: the AOF mode of a crash). */
dq_fault_class dq_fault_report_class(const char *spec, dq_fault *f);

/* For loss_allowed hooks: whether a strategy of flags declares that it
 * keeps every task through a crash (DQ_G_SURVIVES_CONSUMER_CRASH and
 * DQ_G_SURVIVES_PROCESS_EXIT both): only such a strategy is held to losing
 * nothing when a fault's mode promises durability. */
bool dq_fault_keeps_all(unsigned flags);

/* Shared by rows that parse "MS" and "AT_MS" parts: a decimal integer in
 * [lo, hi] (a sign allowed when signed_ok).  Returns 0 or -1. */
int dq_fault_num(const char *s, int64_t lo, int64_t hi, bool signed_ok,
                 int64_t *out);
#define DQ_FAULT_MAX_MS INT64_C(600000)
/* Shared by rows whose spec is name:MS[:AT_MS] (a window of a fixed
 * length): parses arg[0..narg-1] into f->ms (1..DQ_FAULT_MAX_MS) and
 * f->at_ms, as dq_fault_ops.parse. */
int dq_fault_parse_window(dq_fault *f, const char *name, char *const *arg,
                          int narg, char *err, size_t errlen);

#endif
