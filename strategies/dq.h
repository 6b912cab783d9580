/* dq.h -- the one interface every delay-queue strategy implements.
 *
 * A delay queue takes a task now (id, payload bytes, due time) and hands it
 * to a consumer no earlier than its due time.  dqlab builds each well-known
 * way of doing that on Redis (and one in-process heap) behind this header,
 * so that the harness, the experiments and the tests treat them alike.
 *
 * The shape follows Redis's ConnectionType (src/connection.h): a const
 * struct of function pointers per strategy, registered in one table
 * (registry.c), and dq_* wrappers below that state each operation's
 * contract.  Optional operations are NULL where a strategy lacks them, as
 * in the kernel's struct file_operations; the wrappers check and return
 * DQ_EUNSUPPORTED.
 *
 * Threading: a dq_queue handle belongs to one thread at a time.  Several
 * handles (one per producer or consumer thread, or process) open the same
 * queue by name; Redis strategies give each handle its own connection,
 * in-process strategies meet through the dq_local space in the config.
 *
 * Times: due times are milliseconds since the Unix epoch (int64_t, _ms);
 * every strategy reads "now" through dq_now_ms()/dq_now_us(), which add the
 * handle's clock offset, so the harness can skew one consumer's clock.
 */
#ifndef DQ_H
#define DQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Result codes --------------------------------------------------------
 * Actions return DQ_OK (0), DQ_EMPTY (claim found nothing due in time) or a
 * negative DQ_E* code with a message in the handle (dq_errstr()).  One list
 * generates the codes and their names, as libuv's UV_ERRNO_MAP does. */
#define DQ_RESULT_MAP(X)                                                      \
    X(OK, 0, "ok")                                                            \
    X(EMPTY, 1, "no due task within the timeout")                             \
    X(EINVAL, -1, "invalid argument")                                         \
    X(ENOMEM, -2, "out of memory")                                            \
    X(EIO, -3, "connection to Redis failed or was lost")                      \
    X(EREDIS, -4, "Redis replied with an error")                              \
    X(EPROTO, -5, "unexpected reply from Redis")                              \
    X(EUNSUPPORTED, -6, "operation not supported by this strategy")           \
    X(ENOTFOUND, -7, "no such task")                                          \
    X(EVERSION, -8, "Redis server too old for this strategy")                 \
    X(EAUTH, -9, "Redis authentication failed")                               \
    X(ESYS, -10, "system call failed")                                        \
    X(EREPLICA, -11, "fewer replicas acknowledged the write than wait= asks")

enum {
#define DQ_RESULT_ENUM(name, val, text) DQ_##name = (val),
    DQ_RESULT_MAP(DQ_RESULT_ENUM)
#undef DQ_RESULT_ENUM
};

/* The fixed text of a result code, e.g. "no such task"; never NULL. */
const char *dq_result_name(int rc);

/* ---- Guarantees a strategy declares ------------------------------------
 * Flags, ORed into dq_strategy.flags.  The conformance tests read them to
 * decide what to assert, and `dqlab list -v` prints them. */
enum {
    DQ_G_AT_MOST_ONCE = 1u << 0,  /* a task is removed when claimed: never
                                     redelivered, lost if the consumer dies */
    DQ_G_AT_LEAST_ONCE = 1u << 1, /* a claimed task comes back unless acked
                                     before its lease (visibility timeout) */
    DQ_G_SURVIVES_CONSUMER_CRASH = 1u << 2, /* a consumer killed between
                                     claim and ack loses no task */
    DQ_G_NEEDS_REDIS = 1u << 3,   /* the queue lives in Redis */
    DQ_G_POLLS = 1u << 4,         /* consumers wake on a poll interval */
    DQ_G_BLOCKS = 1u << 5,        /* consumers block until a task is due */
    DQ_G_NO_DUP_CONCURRENT = 1u << 6, /* without faults, N concurrent
                                     consumers never get one task twice */
    DQ_G_DUPLICATES = 1u << 7,    /* documented bug: concurrent consumers DO
                                     get one task twice (naive) */
    DQ_G_DUE_ORDER = 1u << 8,     /* one consumer receives tasks in due order */
    DQ_G_SURVIVES_PROCESS_EXIT = 1u << 9, /* pending tasks outlive the
                                     process, also those a handle had taken
                                     into a buffer but not handed out when
                                     it is closed (false for the in-process
                                     heap) */
};

/* Facts about a strategy that the harness reads and that are not
 * guarantees, ORed into dq_strategy.flags too (above the guarantee bits:
 * dq_flag_name has no name for them, so `dqlab list -v` and the JSON
 * "guarantees" do not show them).  Declared here so that no other file
 * keeps a list of strategy names for them. */
enum {
    DQ_G_ZSET_LAYOUT = 1u << 16,  /* a task enqueued and never claimed is
                                     exactly ZADD dq:{Q}:z <due_ms> <id>
                                     plus HSET dq:{Q}:p <id> <payload>, so
                                     the bench may preload a backlog with
                                     those two commands */
    DQ_G_TTL_KEYS = 1u << 17,     /* some of the queue's keys carry a TTL
                                     (expiry's shadow keys): a volatile-*
                                     maxmemory-policy may evict them */
    DQ_G_KEYSPACE_EVENTS = 1u << 18, /* consumers learn of due tasks from
                                     Pub/Sub keyspace events (expired),
                                     which Redis keeps no copy of: an event
                                     published while no subscriber is
                                     connected, or still queued in the
                                     connection of one that dies, is lost
                                     (redis.io, Pub/Sub: at-most-once
                                     message delivery) */
};

/* Name of one guarantee flag ("at-most-once", "blocks", ...), or NULL. */
const char *dq_flag_name(unsigned flag);

/* The guarantee flag whose dq_flag_name is name, into *flag: true, or
 * false (*flag untouched) when no flag has that name. */
bool dq_flag_parse(const char *name, unsigned *flag);

/* ---- Options ----------------------------------------------------------
 * Strategies take key=value options ("poll_ms=100", "batch=4").  Each
 * strategy lists the ones it accepts with their defaults and the values
 * each accepts (its type); dq_open and dq_opts_check() reject an unknown
 * key or a bad value -- given or default -- before the strategy's open
 * runs, so a strategy reads its options already checked (dq_opt_i64,
 * dq_opt_get).  The pattern is Redis's own config table (src/config.c:
 * createIntConfig(name, ..., min, max, default)). */
typedef enum dq_opt_type {
    DQ_OPT_UNCHECKED = 0, /* any non-empty value: only for an entry that
                             forgot its type (a test flags it) and the
                             {NULL} terminator */
    DQ_OPT_INT,           /* a decimal integer in [min, max] */
    DQ_OPT_CHOICE,        /* exactly one of the words in `choices` */
} dq_opt_type;

typedef struct dq_optdef {
    const char *name;  /* e.g. "poll_ms" */
    const char *def;   /* default value as text, e.g. "100" */
    const char *help;  /* one line, with the unit */
    /* Added after the three above, so older {name, def, help}
     * initializers keep compiling (as DQ_OPT_UNCHECKED). */
    dq_opt_type type;
    int64_t min, max;    /* DQ_OPT_INT: inclusive bounds, min <= max */
    const char *choices; /* DQ_OPT_CHOICE: words separated by '|', e.g.
                            "client|server" */
} dq_optdef;

/* Table entries: an integer option in [min, max], a choice among the
 * '|'-separated words of choices, and the terminator. */
#define DQ_OPTDEF_INT(name, def, min, max, help) \
    {(name), (def), (help), DQ_OPT_INT, (min), (max), NULL}
#define DQ_OPTDEF_CHOICE(name, def, choices, help) \
    {(name), (def), (help), DQ_OPT_CHOICE, 0, 0, (choices)}
#define DQ_OPTDEF_END {NULL, NULL, NULL, DQ_OPT_UNCHECKED, 0, 0, NULL}

typedef struct dq_opt {
    char key[32];
    char val[96];
} dq_opt;

#define DQ_MAX_OPTS 16

/* ---- Process-local shared space ----------------------------------------
 * In-process strategies (the heap) need one object per queue name shared
 * by all handles of a process.  Rather than a hidden global, the harness or
 * test creates a dq_local and passes it in every dq_config.  See local.c. */
typedef struct dq_local dq_local;

/* Creates an empty space.  Returns NULL on allocation failure.  The caller
 * owns it and frees it with dq_local_free() after every handle using it is
 * closed. */
dq_local *dq_local_new(void);
void dq_local_free(dq_local *l);

/* Finds the object registered under `name` (any NUL-terminated string) and
 * takes a reference, or creates it with create(arg) when absent.  Returns
 * the object, or NULL when create returned NULL.  Thread-safe.  Each get is
 * paired with dq_local_put(), which calls destroy(obj) on the last put. */
void *dq_local_get(dq_local *l, const char *name, void *(*create)(void *arg),
                   void *arg, void (*destroy)(void *obj));
void dq_local_put(dq_local *l, const char *name);

/* ---- Opening a queue --------------------------------------------------- */
typedef struct dq_config {
    const char *queue;          /* queue name, [A-Za-z0-9_.-]{1,64}; Redis
                                   keys are dq:{queue}:<suffix> (one hash tag,
                                   so a queue lives in one Cluster slot) */
    const char *redis_host;     /* e.g. "127.0.0.1"; unused without Redis */
    int redis_port;
    const char *redis_user;     /* NULL: AUTH with password only (or none) */
    const char *redis_password; /* NULL: no AUTH */
    int redis_db;               /* SELECT this db when non-zero */
    const dq_opt *opts;         /* strategy options; copied at open */
    size_t nopts;
    int64_t clock_offset_us;    /* added to CLOCK_REALTIME by dq_now_*() */
    dq_local *local;            /* required by in-process strategies */
    const char *consumer;       /* name of the handle's owner, for per-
                                   consumer keys and logs; may be NULL */
    /* Added last (older initializers stay valid).  Redis Sentinel: when
     * sentinels is not NULL, every connection of the handle, and every
     * reconnect after a failure, asks them for the current primary
     * (rconn.h, "Sentinel") and redis_host/redis_port are not used. */
    const char *sentinels;       /* "host:port[,host:port...]" (IPv4 or a
                                    name, at most 8), asked in this order,
                                    without AUTH; NULL: no Sentinel */
    const char *sentinel_master; /* the name they monitor the primary
                                    under ("sentinel monitor NAME ...");
                                    required with sentinels */
    /* Added last.  NULL, or a wall-clock step in microseconds that
     * dq_now_*() read at every call and add to clock_offset_us: another
     * thread may change it while the handle runs, as an NTP step moves
     * the clock under a running program (the harness's clock-step fault).
     * Not copied: it must outlive the handle and every copy of it (list's
     * mover). */
    const _Atomic int64_t *clock_step_us;
} dq_config;

/* ---- A claimed task ----------------------------------------------------
 * Filled by claim.  The payload is malloc'd and owned by the task: free it
 * with dq_task_clear().  `token` is strategy-private state needed by ack
 * (e.g. the processing list); ack uses it, the caller only carries it. */
#define DQ_ID_MAX 128
typedef struct dq_task {
    char id[DQ_ID_MAX];  /* NUL-terminated, as given to enqueue */
    unsigned char *payload;
    size_t payload_len;
    int64_t due_ms;      /* the due time given to enqueue (or the score it
                            had when claimed), ms since the Unix epoch */
    int attempt;         /* 1 for a first delivery, >1 for a redelivery,
                            0 when the strategy does not count */
    char token[64];
} dq_task;

/* Frees the payload and zeroes the task; safe on a zeroed task. */
void dq_task_clear(dq_task *t);

/* ---- Counters -----------------------------------------------------------
 * Every handle counts what it did, so the harness can report the cost of a
 * strategy beyond what INFO commandstats shows. */
typedef struct dq_counters {
    uint64_t round_trips;  /* requests sent to Redis and waited for */
    uint64_t empty_polls;  /* claim rounds that found nothing due */
    uint64_t lost_races;   /* claims that lost to another consumer (naive-
                              checked: ZREM returned 0) */
    uint64_t wakeups;      /* times a waiting consumer woke up */
    uint64_t putbacks;     /* tasks taken and put back not yet due */
} dq_counters;

/* ---- One task of a batched enqueue (dq_enqueue_many) --------------------
 * The same four things dq_enqueue takes.  The strings and bytes are the
 * caller's; they need to live only until dq_enqueue_many returns. */
typedef struct dq_enqueue_item {
    const char *id;        /* as for dq_enqueue: NUL-terminated, unique */
    const void *payload;   /* payload_len bytes; NULL only with length 0 */
    size_t payload_len;
    int64_t due_ms;        /* ms since the Unix epoch */
} dq_enqueue_item;

typedef struct dq_strategy dq_strategy;

/* A visitor of task ids (dq_dead_letter_ids): returns 0 to go on, any
 * other value to stop (the caller returns it). */
typedef int (*dq_id_fn)(void *arg, const char *id);

struct redisContext; /* hiredis's, for the rconn.c fields below */

/* A handle on one queue.  Strategies keep their state in `priv`. */
typedef struct dq_queue {
    const dq_strategy *s;
    char queue[65];
    dq_opt opts[DQ_MAX_OPTS];  /* given options, then the defaults */
    size_t nopts;
    dq_config cfg;            /* copy; cfg.opts points at opts above */
    void *priv;
    dq_counters counters;
    char err[256];            /* last error, one line */
    /* Added last (older initializers stay valid).  rconn.c's state: the
     * socket timeout (ms) its reconnects restore, the largest one passed
     * to dq_redis_connect on this handle; 0 before any connect (then
     * DQ_SOCK_TIMEOUT_MS).  Nobody else writes it. */
    int64_t redis_sock_timeout_ms;
    /* Added last.  rconn.c's state too: the first connection
     * dq_redis_connect opened on this handle (the one its enqueues,
     * claims and acks write on), and, when option wait > 0, the function
     * the dq_* wrappers call after an enqueue, claim or ack succeeded: it
     * returns DQ_OK once `wait` replicas have that connection's writes
     * (Redis WAIT), else a DQ_E* code with q->err naming `what`.  NULL
     * without Redis or without a wait.  A copy of the handle (list's
     * mover) must not call the dq_* wrappers. */
    struct redisContext *redis_conn;
    int (*redis_confirm)(struct dq_queue *q, const char *what);
} dq_queue;

/* ---- The ops struct ---------------------------------------------------- */
struct dq_strategy {
    const char *name;        /* "naive", "lua", "heap", ... */
    const char *summary;     /* one line for `dqlab list` */
    unsigned flags;          /* DQ_G_* */
    const char *min_redis;   /* lowest Redis version needed, e.g. "6.2.0";
                                NULL when no Redis or any version */
    const dq_optdef *options; /* terminated by DQ_OPTDEF_END */

    /* Sets q->priv.  q->opts already holds every option (given or
     * default, each checked against its dq_optdef) and q->cfg the config.  Returns DQ_OK or a DQ_E* code with
     * q->err set.  On failure, close is not called: free what you made. */
    int (*open)(dq_queue *q);
    /* Adds one task.  id: NUL-terminated, at most DQ_ID_MAX-1 bytes, unique
     * per queue (chosen by the producer); payload: any bytes; due_ms: ms
     * since the epoch, may lie in the past (deliver at once), within
     * [-DQ_DUE_MAX_MS, DQ_DUE_MAX_MS] (the wrapper checked all three).
     * Returns when the queue holds the task (Redis acknowledged it). */
    int (*enqueue)(dq_queue *q, const char *id, const void *payload,
                   size_t payload_len, int64_t due_ms);
    /* Waits at most timeout_ms (0 .. DQ_CLAIM_TIMEOUT_MAX_MS, checked and
     * cut by the wrapper) for a task whose due time has come,
     * fills *out and returns DQ_OK; returns DQ_EMPTY when none came in
     * time, at most one Redis round trip after timeout_ms (see
     * dq_claim).  Never returns a task before its due time by this
     * handle's clock. */
    int (*claim)(dq_queue *q, int64_t timeout_ms, dq_task *out);
    /* Tells the queue the task is done.  For at-most-once strategies this
     * may do nothing; for at-least-once ones it ends the lease. */
    int (*ack)(dq_queue *q, const dq_task *t);
    /* Frees q->priv and closes connections.  Never fails. */
    void (*close)(dq_queue *q);

    /* Optional (NULL when absent). */
    int (*cancel)(dq_queue *q, const char *id);
    int (*reschedule)(dq_queue *q, const char *id, int64_t due_ms);
    /* Number of tasks not yet claimed (pending + not due), or a DQ_E*. */
    int64_t (*pending)(dq_queue *q);
    /* Deletes every key of the queue (tests, --fresh).  Returns DQ_OK, or a
     * DQ_E* code with q->err (a Redis purge can fail half-way). */
    int (*purge)(dq_queue *q);
    /* Returns 1 when any key of the queue exists, 0 when none, or DQ_E*. */
    int (*exists)(dq_queue *q);

    /* A few sentences for people (the report's Strategies section, `dqlab
     * list -v`): how it works, the Redis commands per task, what it
     * guarantees, where it breaks.  NULL when not written. */
    const char *doc;

    /* Optional (NULL: dq_enqueue_many loops over enqueue).  Added last so
     * that initializers written before it stay valid.  Adds items[0..n-1]
     * (n >= 1; every id, payload and due time already checked by the
     * wrapper as dq_enqueue checks one; a NULL payload has length 0) with
     * fewer round trips than n enqueues, e.g. one variadic HSET and one
     * variadic ZADD in one MULTI/EXEC.  Returns DQ_OK when the queue holds
     * every item, or a DQ_E* code; after an error any subset of the items
     * may be in the queue (a transaction's reply can be lost), so the
     * caller treats them all as unknown. */
    int (*enqueue_many)(dq_queue *q, const dq_enqueue_item *items, size_t n);

    /* Optional (NULL when absent: the wrappers return DQ_EUNSUPPORTED).
     * Added last so that initializers written before them stay valid.
     * nack: gives back task t, claimed on this handle and not acked, to be
     * delivered again at now + delay_ms (0 .. DQ_NACK_DELAY_MAX_MS, checked
     * by the wrapper; t non-NULL), with the retry time written to Redis in
     * the same atomic step that checks and ends the lease.  DQ_OK,
     * DQ_ENOTFOUND when the lease is no longer ours (nothing changed),
     * DQ_EINVAL for a token the strategy did not make, or a DQ_E* code.
     * See dq_nack. */
    int (*nack)(dq_queue *q, const dq_task *t, int64_t delay_ms);
    /* Number of tasks in the dead-letter set (see max_attempts below),
     * >= 0, or a DQ_E* code with q->err. */
    int64_t (*dead_letters)(dq_queue *q);
    /* Calls fn(arg, id) for each id in the dead-letter set.  Optional
     * (NULL when absent; a strategy with dead_letters has it too); added
     * last.  See dq_dead_letter_ids. */
    int (*dead_letter_ids)(dq_queue *q, dq_id_fn fn, void *arg);

    /* Batched variants `dqlab bench` runs besides the defaults, NULL-
     * terminated (NULL: none): each "k=v;k=v", enqueue_batch=N (tasks per
     * enqueue call) and strategy options, written as throughput.csv's
     * options field. */
    const char *const *bench_variants;
    /* The bench's throughput targets for this strategy (targets.csv,
     * harness/bench.h), as shares of a redis-benchmark reference measured
     * in the same run: one_rtt_claim, its defaults at one claim round trip
     * per task, of `-t zadd -c 4`; batched_claim, each of its
     * bench_variants, of `-t zadd -c 1 -P 100`.  At least this share;
     * 0: no bound (the row is shown for comparison). */
    double bench_one_rtt_share;
    double bench_batched_share;
    /* The `dqlab witness` trial that shows this strategy's documented
     * failure as a message sequence chart ("naive-duplicate"; the names
     * are harness/witness.c's), or NULL: none. */
    const char *witness;
};

/* ---- Registry (registry.c) ---------------------------------------------- */
/* All strategies, in a fixed order, terminated by NULL. */
extern const dq_strategy *const dq_strategies[];
/* The strategy called `name`, or NULL. */
const dq_strategy *dq_strategy_find(const char *name);

/* ---- Wrappers: the calls everyone else uses (dq.c) ---------------------- */

/* Opens a handle on cfg->queue with strategy s.  Validates the queue name
 * and the options against s->options as dq_opts_check() does (unknown key
 * or bad value, given or default: DQ_EINVAL, message naming the option),
 * fills defaults, then calls s->open.  On
 * success *out is a new handle owned by the caller (dq_close frees it).  On
 * failure *out is NULL and, if err is not NULL, the message is copied to
 * err (errlen bytes, NUL-terminated).  Every string in cfg (queue, Redis
 * host, user, password, consumer) and the options are copied into the
 * handle: cfg may be freed or reused as soon as dq_open returns. */
int dq_open(const dq_strategy *s, const dq_config *cfg, dq_queue **out,
            char *err, size_t errlen);
/* Largest |due_ms| the wrappers accept: 2^53 ms.  ZSet scores are doubles,
 * exact for integers up to 2^53, and due_ms * 1000 (microseconds) still
 * fits an int64_t, so strategies do that arithmetic unchecked. */
#define DQ_DUE_MAX_MS (INT64_C(1) << 53)
/* Longest wait of one dq_claim: one day (86 400 000 ms).  A larger
 * timeout_ms is cut to this (the claim may then return DQ_EMPTY "early"). */
#define DQ_CLAIM_TIMEOUT_MAX_MS INT64_C(86400000)

/* Adds one task.  Checks: id non-NULL, 1..DQ_ID_MAX-1 bytes (NUL-
 * terminated); payload NULL only with payload_len 0 (then sent as ""); due_ms
 * (ms since the Unix epoch, may lie in the past: due at once) within
 * [-DQ_DUE_MAX_MS, DQ_DUE_MAX_MS].  A failed check returns DQ_EINVAL with
 * q->err naming the task, and nothing is sent.  Then calls the strategy:
 * DQ_OK once the queue holds the task, or its DQ_E* code (DQ_EIO,
 * DQ_EREDIS, DQ_EPROTO, DQ_ENOMEM...) with q->err; after DQ_EIO the task
 * may or may not have been added (the reply was lost). */
int dq_enqueue(dq_queue *q, const char *id, const void *payload,
               size_t payload_len, int64_t due_ms);
/* Adds items[0..n-1] (n >= 0; n == 0 does nothing) as n dq_enqueue calls
 * would, in fewer round trips when the strategy has enqueue_many, else by
 * looping over enqueue.  Every item is checked first as dq_enqueue checks
 * one (id, payload, due_ms range): DQ_EINVAL naming the item's index,
 * nothing sent.  Returns DQ_OK when the queue holds every item.  On an
 * error (DQ_E*, q->err) some items may have been added: with the loop
 * fallback a prefix of them; with a strategy's op, see its top comment
 * (one MULTI/EXEC per chunk: whole chunks). */
int dq_enqueue_many(dq_queue *q, const dq_enqueue_item *items, size_t n);
/* Waits at most timeout_ms (ms, >= 0; 0: look once, never wait; above
 * DQ_CLAIM_TIMEOUT_MAX_MS cut to it) for a task due by this handle's
 * clock.  Returns DQ_OK with *out filled, DQ_EMPTY when none came in time,
 * DQ_EINVAL (out NULL, timeout_ms < 0), DQ_EUNSUPPORTED (a handle that
 * cannot claim, e.g. expiry with subscribe=0) or the strategy's DQ_E* code
 * with q->err.  dq_claim zeroes *out before the strategy fills it: clear a
 * task you got (dq_task_clear) before passing it again, or its payload
 * leaks.  A claim may overrun timeout_ms by one Redis round trip when
 * Redis is slow (a reply is never abandoned half-way), and by no more:
 * a strategy that blocks in Redis (BLPOP, BLMOVE, BZPOPMIN, XREADGROUP ...
 * BLOCK in streams) keeps its own deadline on the client (rconn.h,
 * dq_redis_block), because Redis 7.0 answers a blocking command's timeout
 * only when its event loop next wakes up -- up to 1000/hz ms (100 ms) late
 * on an idle server. */
int dq_claim(dq_queue *q, int64_t timeout_ms, dq_task *out);
/* Ends the lease of task t, as filled by dq_claim on this handle (its id
 * and token are used; the payload is not).  Checks t != NULL (DQ_EINVAL).
 * Returns DQ_OK (at-most-once strategies: always, nothing to do), or the
 * strategy's DQ_E* code (e.g. DQ_ENOTFOUND when the lease had run out and
 * the task was redelivered, if the strategy can tell). */
int dq_ack(dq_queue *q, const dq_task *t);
/* Removes pending task id (not yet claimed).  Checks the id as dq_enqueue
 * does (DQ_EINVAL).  Returns DQ_OK, DQ_ENOTFOUND when no such pending task,
 * DQ_EUNSUPPORTED when the strategy has no cancel, or a DQ_E* code. */
int dq_cancel(dq_queue *q, const char *id);
/* Gives pending task id the new due time due_ms (ms since the epoch, range
 * as dq_enqueue: DQ_EINVAL outside it; id checked likewise).  Returns
 * DQ_OK, DQ_ENOTFOUND when no such pending task, DQ_EUNSUPPORTED when the
 * strategy has no reschedule, or a DQ_E* code. */
int dq_reschedule(dq_queue *q, const char *id, int64_t due_ms);
/* Number of tasks not yet claimed (due or not), >= 0, or a negative DQ_E*
 * code (DQ_EUNSUPPORTED when the strategy cannot count) with q->err. */
int64_t dq_pending(dq_queue *q);
/* Deletes every key of the queue (tests, --fresh); other queues are left
 * alone.  Returns DQ_OK, DQ_EUNSUPPORTED when the strategy has no purge,
 * or a DQ_E* code (DQ_EIO, DQ_EREDIS, ...) with q->err: Redis purges scan
 * and delete over the network and can fail half-way. */
int dq_purge(dq_queue *q);
/* Returns 1 when any key of the queue exists, 0 when none, or a negative
 * DQ_E* code (DQ_EUNSUPPORTED when the strategy has no exists). */
int dq_exists(dq_queue *q);
/* Closes and frees the handle; NULL is fine. */
void dq_close(dq_queue *q);
/* Closes and frees the handle as dq_close does, and adds its counters to
 * *sum (NULL: none), read after the strategy's close ran, so that what
 * the close itself did counts too (a batch buffer given back adds to
 * putbacks).  NULL q is fine. */
void dq_close_into(dq_queue *q, dq_counters *sum);
/* The handle's last error message (never NULL). */
const char *dq_errstr(const dq_queue *q);
/* Sets q->err from a printf format and returns rc (for `return dq_fail(..)`). */
int dq_fail(dq_queue *q, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Value of option `key` in the handle (given or default), or NULL when
 * the strategy declares no such option.  A DQ_OPT_CHOICE value is one of
 * its choices (checked at open), so compare it with strcmp. */
const char *dq_opt_get(const dq_queue *q, const char *key);
/* Option `key`, declared DQ_OPT_INT by q's strategy, as an integer.  The
 * value was checked against the declared [min, max] at open, so this fails
 * only on a strategy bug: key not declared, or not DQ_OPT_INT (DQ_EINVAL,
 * q->err names the option).  Returns DQ_OK with *out set. */
int dq_opt_i64(dq_queue *q, const char *key, int64_t *out);
/* Option `key` as an integer in [min, max], for a range narrower than the
 * declared one.  DQ_EINVAL with q->err naming the option and the bad value
 * when it is not an integer in range. */
int dq_opt_int(dq_queue *q, const char *key, int64_t min, int64_t max,
               int64_t *out);

/* Checks options against strategy s as dq_open will, without opening
 * anything: call it before starting a Redis server, a trial or an
 * experiment.  opts[0..nopts-1] are resolved as dq_open does (later
 * duplicates of a key win; undeclared keys take their default) and every
 * resulting value -- given or default -- must fit its dq_optdef.  Returns
 * DQ_OK, or DQ_EINVAL with one line in err (errlen bytes; err may be NULL):
 *   strategy 'lua' has no option 'x' (options: batch, clock, poll_ms)
 *   strategy 'lua': option batch=0: expected an integer in [1, 1000]
 *   strategy 'lua': option clock=moon: expected one of client|server
 * opts may be NULL when nopts is 0. */
int dq_opts_check(const dq_strategy *s, const dq_opt *opts, size_t nopts,
                  char *err, size_t errlen);

/* Parses "key=value" into *o.  Returns DQ_OK or DQ_EINVAL with a one-line
 * message in err (errlen bytes). */
int dq_opt_parse(const char *kv, dq_opt *o, char *err, size_t errlen);

/* ---- The lab clock (dq.c) ------------------------------------------------
 * CLOCK_REALTIME plus the handle's cfg.clock_offset_us (and its
 * cfg.clock_step_us, read at each call).  Every strategy
 * reads time only through these, so clock skew can be injected per
 * consumer.  dq_wall_us() is the unskewed clock the event log uses. */
int64_t dq_wall_us(void);
int64_t dq_now_us(const dq_queue *q);
int64_t dq_now_ms(const dq_queue *q);
/* CLOCK_REALTIME_COARSE plus the handle's offset: the time of the last
 * kernel tick (resolution 1-10 ms, clock_getres), never ahead of
 * dq_now_us() read after it, and about 7 times cheaper to read (vDSO, no
 * clock source access).  So "due by the coarse clock" implies "due"; a
 * strategy may hand a task out on it, but must re-check with dq_now_us()
 * before saying a task is not yet due.  clock_gettime(2). */
int64_t dq_now_coarse_us(const dq_queue *q);
/* CLOCK_MONOTONIC in microseconds, for measuring intervals. */
int64_t dq_mono_us(void);
/* dq_mono_us() + timeout_ms * 1000, saturating at INT64_MAX instead of
 * overflowing; timeout_ms <= 0 gives dq_mono_us().  Claim loops compute
 * their deadline with it. */
int64_t dq_deadline_us(int64_t timeout_ms);
/* Sleeps `us` microseconds (<= 0: returns at once), restarting on EINTR. */
void dq_sleep_us(int64_t us);

/* ---- Retries and dead letters (dq.c) -------------------------------------
 * The optional ops nack and dead_letters of at-least-once strategies.
 *
 * max_attempts: a leased strategy may take the option max_attempts=N (an
 * integer, 0 = unlimited, the default).  A task delivered N times without
 * an ack (its lease ran out, or it was nacked) is not delivered an N+1th
 * time: the step that would give it back for delivery moves it instead,
 * in that same atomic step, to the queue's dead-letter set
 *   dq:{Q}:dead  ZSet  member: task id, score: ms since the epoch when it
 *                      was moved there
 * and leaves its payload in the hash dq:{Q}:p and its delivery count in
 * the hash dq:{Q}:a (id -> deliveries made), for a person or a tool to
 * inspect or requeue; dq_purge deletes them with the rest of the queue.
 * Which step that is depends on where the task waits meanwhile: the
 * claim that finds it due again (lua-lease: an expired lease or a nack's
 * retry waits in the ZSet), the move that would put it back into the
 * Stream (streams), the reaper that finds its lease run out or the nack
 * itself (list-reliable).  Until that step runs, a task that has had its
 * N deliveries waits where it is, not yet in dq:{Q}:dead.
 * A dead task is neither pending (dq_pending) nor delivered again.  A
 * strategy that declares the option also has dead_letters and
 * dead_letter_ids (the conformance suite finds them by name, never by the
 * strategy's name). */

/* Longest nack delay: 2^52 ms, so that now + delay_ms stays within
 * DQ_DUE_MAX_MS (2^53) for any "now" before the year 140000. */
#define DQ_NACK_DELAY_MAX_MS (INT64_C(1) << 52)

/* Negative acknowledgement: gives task t (as filled by dq_claim on this
 * handle, not acked since) back to the queue, to be delivered again no
 * earlier than now + delay_ms (ms, 0 .. DQ_NACK_DELAY_MAX_MS; "now" by the
 * strategy's clock: this handle's dq_now_ms, or Redis TIME with a
 * clock=server option), as the next attempt (t->attempt + 1, counted
 * against max_attempts).  The check that the lease is still ours and the
 * new due time are one atomic step in Redis, so once dq_nack returns DQ_OK
 * the retry survives the consumer's crash or exit, and a Redis restart as
 * far as Redis's persistence keeps the write.  The payload is kept; the
 * task's lease ends (a later dq_ack or dq_nack of t returns DQ_ENOTFOUND).
 * Checks t non-NULL and the delay range (DQ_EINVAL, nothing sent).
 * Returns DQ_OK; DQ_ENOTFOUND when the lease is no longer ours (it ran out
 * and another consumer claimed the task, or the task was acked, nacked or
 * cancelled): nothing changed; DQ_EUNSUPPORTED when the strategy has no
 * nack; or the strategy's DQ_E* code with q->err.  After DQ_EIO the nack
 * may or may not have happened; either way the task comes back (after
 * delay_ms, or after its lease). */
int dq_nack(dq_queue *q, const dq_task *t, int64_t delay_ms);

/* Number of tasks in the queue's dead-letter set (dq:{Q}:dead), >= 0, or a
 * negative DQ_E* code with q->err (DQ_EUNSUPPORTED when the strategy has
 * no dead-letter set). */
int64_t dq_dead_letters(dq_queue *q);

/* Calls fn(arg, id) once for each task id in the queue's dead-letter set,
 * oldest move first (id a NUL-terminated string valid during the call),
 * so that a harness can tell a dead-lettered task from a lost one.  Read
 * in pages (ZRANGE, 1000 ids a round trip): an id moved there or
 * requeued meanwhile may be missed or seen twice, so call it when no
 * consumer runs.  Returns DQ_OK; fn's non-zero value when fn stopped it;
 * DQ_EINVAL for q or fn NULL; DQ_EUNSUPPORTED when the strategy has no
 * dead-letter set; or a DQ_E* code with q->err. */
int dq_dead_letter_ids(dq_queue *q, dq_id_fn fn, void *arg);

/* ---- Options common to every Redis strategy (dq.c) ---------------------
 * dq_redis_options, declared once: every strategy with DQ_G_NEEDS_REDIS
 * accepts them after its own (dq_open, dq_opts_check, dq_opt_*, `dqlab
 * list -v` all see them), none declares them itself:
 *   wait=N (0..16, default 0)  each dq_enqueue, dq_enqueue_many, dq_claim,
 *       dq_ack and dq_nack that succeeded then sends WAIT N wait_timeout_ms on the
 *       handle's command connection and returns DQ_OK only when N
 *       replicas acknowledged its writes; fewer in time: DQ_EREPLICA, the
 *       connection lost meanwhile: DQ_EIO (q->err says which).  Then an
 *       enqueue is NOT acknowledged (it is on the primary, and may be lost
 *       by a failover: retry it, enqueues of one id are idempotent); a
 *       claim hands out no task (*out cleared) although the primary took
 *       it: an at-most-once strategy loses it unless a failover to a
 *       replica without the claim brings it back, a leased one redelivers
 *       it after its lease; an ack is not confirmed (a leased task may
 *       come back).  With one replica, a write acknowledged with wait=1
 *       is on that replica; with several, a failover may still promote
 *       one without it: WAIT does not make Redis strongly consistent
 *       (https://redis.io/commands/wait/).  0: no WAIT, no cost.
 *   wait_timeout_ms (1..5000, default 1000)  WAIT's timeout (0, "for
 *       ever", is not allowed), below the socket timeout. */
extern const dq_optdef dq_redis_options[];

/* The i-th option strategy s accepts (i from 0): its own options in
 * declaration order, then, for a DQ_G_NEEDS_REDIS strategy, those of
 * dq_redis_options.  NULL past the last one (and for s NULL). */
const dq_optdef *dq_strategy_option(const dq_strategy *s, size_t i);

#endif /* DQ_H */
