/* witness_int.h -- the parts of `dqlab witness` (witness.h) its files share:
 * the MONITOR capture (witness_cap.c), the event-log reader and the chart
 * writer (witness_msc.c), the four scripted trials (witness_naive.c,
 * witness_lease.c, witness_expiry.c, witness_late.c), the helpers they
 * call (witness_util.c) and the command (witness.c).  Not for other
 * modules.
 *
 * Times are CLOCK_REALTIME microseconds (dq_wall_us()): the event log's
 * clock, and, since the private redis-server runs on this host, the clock
 * MONITOR stamps its lines with (gettimeofday), so the two line up.
 */
#ifndef DQ_WITNESS_INT_H
#define DQ_WITNESS_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "../strategies/dq.h"
#include "eventlog.h"
#include "faults.h"

#define WT_MAX_ARGS 24
#define WT_WHO_MAX 32

/* ---- The capture (witness_cap.c) ----------------------------------------
 * One line of MONITOR output, or one keyspace event the observer got. */
typedef struct wt_line {
    int64_t t_us;          /* server time (MONITOR), receipt time (event) */
    char addr[64];         /* client "ip:port"; a script's caller for a
                              command run inside a script */
    bool script;           /* "lua" in the capture: ran inside a script */
    bool event;            /* an event the observer received (not MONITOR) */
    char who[WT_WHO_MAX];  /* the consumer part of the client's dqlab name,
                              "" when not one of the queue's connections */
    char *raw;             /* the line as Redis sent it (malloc'd) */
    int argc;              /* unquoted arguments, argv[0] the command (an */
    char *argv[WT_MAX_ARGS]; /* event: "pmessage", pattern, channel, msg) */
} wt_line;

typedef struct wt_name {
    char addr[64];
    char name[128];        /* the client name, "dqlab:<queue>:<who>..." */
} wt_name;

typedef struct wt_cap {
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* broadcast on each new line */
    wt_line *lines;
    size_t n, cap;
    wt_name *names;        /* address -> client name */
    size_t nnames, capnames;
    redisContext *mon;     /* in MONITOR mode */
    redisContext *obs;     /* PSUBSCRIBEd (observer), or NULL */
    pthread_t mon_th, obs_th;
    bool mon_running, obs_running;
    bool mon_done, obs_done;  /* the reader thread ended */
    char token[64];        /* ECHO / PUBLISH argument that ends a reader */
    char queue[65];
    char last_addr[64];    /* caller of the commands a script runs */
    char err[160];         /* why a reader ended early, "" if it did not */
} wt_cap;

/* Connects to 127.0.0.1:port and names the connection
 * "dqlab:<queue>:<role>" (CLIENT SETNAME, rconn.h client names).  NULL
 * with a one-line message in err. */
redisContext *dq_wt_connect(int port, const char *queue, const char *role,
                            char *err, size_t errlen);

/* Starts the MONITOR reader (and, with observe, a PSUBSCRIBE reader of
 * __keyevent@0__:expired, the keyspace-events observer) on its own
 * connections and threads.  Returns 0, or -1 with err (nothing left). */
int dq_wt_cap_start(wt_cap *c, int port, const char *queue, bool observe,
                    char *err, size_t errlen);
/* Ends the readers: sends ECHO <token> (and PUBLISH <token>) on w, which
 * every reader sees after all earlier commands, and joins them.  Then
 * takes CLIENT LIST on w into the name map and resolves every line's
 * `who`.  Returns 0, or -1 with err (the readers are joined anyway). */
int dq_wt_cap_stop(wt_cap *c, redisContext *w, char *err, size_t errlen);
/* Frees everything; safe on a zeroed or stopped capture. */
void dq_wt_cap_free(wt_cap *c);
/* Waits up to timeout_ms until pred(c, arg) holds, called under c->mu
 * after each new line.  Returns true when it held. */
bool dq_wt_cap_wait(wt_cap *c, bool (*pred)(wt_cap *c, void *arg), void *arg,
                    int64_t timeout_ms);
/* The consumer part of address addr's client name of c's queue into who
 * ("" when unknown).  Call under c->mu, or after dq_wt_cap_stop. */
void dq_wt_cap_who(const wt_cap *c, const char *addr, char *who, size_t len);
/* Writes the raw lines of the queue's connections (and the commands their
 * scripts ran, and the observer's events) to path, after '#' lines naming
 * each address.  Returns 0, or -1 with err. */
int dq_wt_cap_write(const wt_cap *c, const char *path, const char *title,
                    char *err, size_t errlen);
/* The index of the first line from `from` on of consumer who (not run by
 * a script) running cmd with argument arg at argv[pos] (arg NULL: any),
 * or -1. */
long dq_wt_find(const wt_cap *c, long from, const char *who, const char *cmd,
                int pos, const char *arg);
/* The last such line of who running cmd before index `before`, or -1. */
long dq_wt_last(const wt_cap *c, long before, const char *who,
                 const char *cmd);
/* Among the commands the script of line eval (an EVAL/EVALSHA) ran, the
 * index of the first running cmd (NULL: any) with arg at argv[pos] (NULL:
 * any), or -1. */
long dq_wt_script_find(const wt_cap *c, long eval, const char *cmd, int pos,
                       const char *arg);
/* The commands the script of line eval ran, one a line, arguments through
 * dq_wt_arg, into buf. */
struct wt_chart;
void dq_wt_script_label(const struct wt_chart *ch, const wt_cap *c, long eval,
                        char *buf, size_t len);
/* Case-insensitive comparison of line l's command with cmd. */
bool dq_wt_is(const wt_line *l, const char *cmd);

/* ---- Event-log records (witness_msc.c) ---------------------------------- */
typedef struct wt_rec {
    char type;             /* 'E', 'D', 'A', 'R', 'F' */
    int64_t t_us;
    char id[DQ_ID_MAX];    /* E D A R: task id; F: fault name */
    char who[WT_WHO_MAX];  /* D A R: consumer; E: producer; F: phase */
    int attempt;           /* D A R */
    int64_t due_ms;        /* E */
    char arg[128];         /* F: arg; R: code */
} wt_rec;

/* Reads the E/D/A/R/F records of the event log at path into a malloc'd
 * array (*out, *n).  Returns 0, or -1 with err. */
int dq_wt_log_read(const char *path, wt_rec **out, size_t *n, char *err,
                   size_t errlen);

/* The first record of type with id (and consumer who, attempt; NULL / -1:
 * any), or NULL.  For E records who is the producer. */
const wt_rec *dq_wt_rec_find(const wt_rec *r, size_t n, char type,
                             const char *id, const char *who, int attempt);

/* ---- The chart (witness_msc.c) ------------------------------------------ */
typedef enum wt_kind {
    WT_ARC,      /* a command, from -> to   (mscgen =>) */
    WT_REPLY,    /* a reply, from -> to     (mscgen >>, dashed) */
    WT_EVENT,    /* a Pub/Sub message       (mscgen ->) */
    WT_BOX,      /* a record of the event log on `from`  (mscgen box) */
    WT_NOTE,     /* a remark on from..to    (mscgen note) */
} wt_kind;

typedef struct wt_item {
    int64_t t_us;
    unsigned seq;          /* insertion order, for equal times */
    wt_kind kind;
    char from[16], to[16];
    char label[320];
} wt_item;

#define WT_MAX_ENTITIES 6
typedef struct wt_chart {
    char title[256];
    size_t nent;
    char ent[WT_MAX_ENTITIES][16];     /* mscgen names: producer, c0, ... */
    char entlabel[WT_MAX_ENTITIES][64];
    wt_item *items;
    size_t n, cap;
    int64_t t0_us;         /* "+0 ms": the first item's time */
} wt_chart;

void dq_wt_chart_entity(wt_chart *ch, const char *name, const char *label);
/* Adds an item at t_us; the label is printf-formatted, its '"' and '\'
 * replaced.  Items are sorted by time (then insertion) when written. */
void dq_wt_chart_add(wt_chart *ch, wt_kind kind, int64_t t_us,
                     const char *from,
                     const char *to, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Writes the mscgen source to path.  Returns 0, or -1 with err. */
int dq_wt_chart_write(wt_chart *ch, const char *path, char *err,
                      size_t errlen);
/* Renders msc to svg and png with mscgen.  Returns 0, or -1 with err. */
int dq_wt_render(const char *msc, const char *svg, const char *png, char *err,
                 size_t errlen);
/* 0 when mscgen is in PATH, else -1 with the apt-get line in err. */
int dq_wt_mscgen_check(char *err, size_t errlen);
void dq_wt_chart_free(wt_chart *ch);
/* The key abbreviated for a chart: "dq:{Q}:z" -> "z". */
const char *dq_wt_short_key(const char *key);
/* An argument for a label: a key abbreviated (dq_wt_short_key), a number
 * that is a time in ms near t0 written "T+<ms>" (T = t0 of the chart). */
const char *dq_wt_arg(const wt_chart *ch, const char *a, char *buf,
                      size_t len);

/* ---- One witness trial (witness.c drives, the trial files act) ---------- */
typedef struct wt_measure {
    char key[48];
    int64_t value;         /* an integer; the unit is in the key's suffix */
} wt_measure;

#define WT_MAX_METRICS 24

typedef struct wt_run {
    const char *name;      /* "naive-duplicate", ... */
    const char *strategy;  /* the name of the strategy that declares it
                              (dq_strategy.witness) */
    int port;              /* the private redis-server */
    char redis_version[32];
    char dir[PATH_MAX];    /* the run directory */
    char queue[65];        /* this attempt's queue */
    uint64_t seed;         /* this attempt's seed */
    int attempt;           /* 1, 2, ... */
    char logpath[PATH_MAX];
    dq_eventlog *log;
    wt_cap cap;
    wt_chart chart;
    char task_id[DQ_ID_MAX];  /* the witnessed task */
    wt_measure m[WT_MAX_METRICS];
    size_t nm;
    char seen[320];        /* one sentence: what this attempt showed */
} wt_run;

/* One scripted trial.  Returns 1 when it witnessed the event (task_id,
 * metrics, chart and seen filled), 0 when this attempt did not (try a
 * new seed), 130 when interrupted, or -1 with err. */
typedef int (*wt_attempt_fn)(wt_run *w, char *err, size_t errlen);

/* The fault rows whose F records the trials write themselves (their
 * files, harness/fault_<name>.c; faults.c lists them). */
extern const dq_fault_ops dq_fault_kill_consumer;
extern const dq_fault_ops dq_fault_subscriber_outage;

int dq_wt_naive_duplicate(wt_run *w, char *err, size_t errlen);
int dq_wt_lease_redelivery(wt_run *w, char *err, size_t errlen);
int dq_wt_expiry_loss(wt_run *w, char *err, size_t errlen);
int dq_wt_lua_late_head(wt_run *w, char *err, size_t errlen);

/* Helpers for the trials (witness_util.c). */
/* splitmix64: the next value of the seeded generator *s. */
uint64_t dq_wt_rand(uint64_t *s);
/* Adds one row of witness.csv (at most WT_MAX_METRICS per witness). */
void dq_wt_metric(wt_run *w, const char *key, int64_t value);
/* Creates w->logpath and writes the headers every witness log has
 * (strategy, queue, seed, witness, consumer_mode, start_us,
 * redis_version, opt.<k> of the "k=v" options in opts[0..nopts-1]).
 * Returns 0, or -1 with err. */
int dq_wt_log_begin(wt_run *w, const char *mode, const char *const *opts,
                    size_t nopts, char *err, size_t errlen);
/* H end_us, Z clean, close.  Returns 0, or -1 with err. */
int dq_wt_log_finish(wt_run *w, char *err, size_t errlen);
/* Opens a handle of w->strategy on w's queue and server for consumer who
 * with the "k=v" options opts[0..nopts-1].  Returns DQ_OK, or a DQ_E*
 * code with err. */
int dq_wt_open(wt_run *w, const char *who, const char *const *opts,
               size_t nopts, dq_queue **q, char *err, size_t errlen);
/* Reads w's event log (dq_wt_log_read) and adds its E, D, A and R records
 * of task id as boxes on the chart (F records the trials draw
 * themselves); every record is returned in *recs (malloc'd, the caller
 * frees it; *n of them) for the caller's numbers.  0, or -1 with err. */
int dq_wt_chart_log(wt_run *w, const char *id, wt_rec **recs, size_t *n,
                    char *err, size_t errlen);

#endif
