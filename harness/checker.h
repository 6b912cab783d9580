/* checker.h -- reads an event log (eventlog.h) and counts what happened.
 *
 * In the spirit of Jepsen's queue checkers (jepsen.checker/queue and
 * total-queue): the verdict comes from the recorded history alone, never
 * from what the strategy says about itself.  Definitions:
 *   delivered   distinct enqueued ids delivered at least once
 *   deliveries  all D records
 *   duplicates  (deliveries - unknown) - delivered (each extra delivery
 *               of an enqueued id; equals deliveries - delivered when
 *               unknown is 0)
 *   lost        enqueued ids never delivered by the end of the log
 *   early       deliveries of enqueued ids whose t_us is before
 *               due_ms * 1000
 *   unknown     deliveries of ids never enqueued
 *   acked       all A records (acks the strategy accepted)
 *   ack_refused R records with code ENOTFOUND: stale acks the strategy
 *               refused (the lease had passed to another delivery)
 *   ack_failed  other R records (the ack call failed)
 *   given_back  G records: deliveries whose work failed and whose task the
 *               consumer gives back for a retry (readd or nack; written
 *               before it does)
 *   processed_twice  enqueued ids whose work ran to its end in two or more
 *               deliveries (two or more A or R records: each is written
 *               after the work): the double execution a lease causes when
 *               work outlasts it (a stalled consumer), which idempotent or
 *               fenced work must survive (claim C21)
 *   dead_lettered  enqueued ids the strategy's dead-letter set held when
 *               the trial ended (L records, max_attempts): neither lost nor
 *               pending; those delivered (their deliveries count in
 *               delivered and deliveries) are unacked, and
 *               dead_undelivered counts the others (their one delivery
 *               died unlogged with a killed consumer)
 *   redis_stall_ms, ping_p99_ms, pings  the latency sampler's H records
 *               (redis_stall_ms, redis_ping_p99_ms, redis_pings): the
 *               longest time from one answered PING to the next, and
 *               the p99 of their round trips; -1 when the log has none
 *   enqueue_refused  N records: enqueues the server refused (OOM under
 *               maxmemory-policy noeviction); not enqueued, so neither
 *               delivered nor lost (a D of such an id is unknown)
 *   lateness    first delivery t_us - due_ms*1000, per delivered id, in ms
 *               (the first delivery is the one with the smallest t_us)
 * Record order between lines does not matter: an E may follow the D of
 * the same id (the producer logs after enqueue returns).  Lines starting
 * with '#' after the first are comments.
 *
 * Acks and deliveries.  An A record acknowledges one delivery: the D of
 * the same id, consumer and attempt (eventlog.h), whenever it was logged.
 * An R record acknowledges nothing.  (A v1 log's A has no attempt; it is
 * matched to the deliveries of its consumer, as v1 did.)
 *
 * How the log ended.  A v2 log ends with a Z record (eventlog.h): "clean"
 * when the trial ran to its end, "interrupted" when a signal stopped it,
 * "failed" when the trial itself failed (H failed <why> says why: a fault
 * Redis refused, a consumer process that died unplanned...).
 * A log without one -- its writer was killed (buffered records never
 * written), the file was cut at or inside a line (a last line without LF
 * is not read: torn) -- is incomplete, and so is every v1 log, which
 * never recorded its end.  The counts of such a log are computed all the
 * same, but they are not a verdict: callers ask dq_check_no_verdict()
 * before judging (dqlab check exits 3, the report says "no verdict").
 * A record after the Z line is an error (two writers, or an edit).
 *
 * Faults.  F records mark fault windows:
 *   F <t_us> <fault> begin <arg>   ...   F <t_us> <fault> end <arg>
 * An end closes the oldest open window of the same fault name (records are
 * paired in time order); a window never closed lasts to the end of the
 * log, and so does a fault written with a begin only (an instant, like a
 * kill).  When the arg of a begin holds "consumer=NAME" (a comma-separated
 * key=value list: "consumer=c2,point=after-claim,..."), or its text up to
 * the first ':' is a name ("c2:+500"), and NAME is a consumer seen in D or
 * A records, the window concerns that consumer only (a killed consumer, a
 * skewed clock; the early deliveries a wrong clock explains are also
 * those of its replacements NAME.1, NAME.2...: a clock is its slot's);
 * otherwise it concerns every consumer.  What a window can
 * explain is said by the fault row of its name (faults.h dq_fault_ops:
 * loss, explains, end_wipes, loss_allowed), looked up by the name in the
 * F record; a name no row knows explains nothing.  The header records the
 * checker reads:
 *   H faults <specs>      the fault specs of the trial, comma-separated
 *                         ("kill-consumer:after-claim:3"); copied to
 *                         fault_spec (H fault is read the same way)
 *   H end_us <t_us>       when the trial stopped waiting (the drain
 *                         deadline or the moment every task was in);
 *                         without it the last record's time is the end
 *   H opt.lease_ms <ms>   a lease (visibility timeout): a task claimed by
 *                         a killed consumer comes back after it
 *   H pending_at_end <n>  tasks the queue still held, never claimed, once
 *                         every consumer stopped (dq_pending, written by
 *                         the trial where the strategy counts them): of
 *                         the never-delivered lost ids, up to n minus the
 *                         never-delivered pending ones were still queued
 *                         (lost_queued) -- late beyond the deadline (a
 *                         stalled server, a slow consumer), not gone.
 *                         The verdict does not change: they were not
 *                         delivered in time.
 * With them, each enqueued id is counted as:
 *   pending_end   never delivered and due at or after the end (the trial
 *                 stopped first); or last delivered to a killed consumer,
 *                 never acked, or held by one killed right after its
 *                 claim (the "id=" of the kill's F begin, no D record),
 *                 with its lease (opt.lease_ms) not yet run out at the end,
 *                 or run out less than DQ_CHECK_LOSS_SLACK_MS before it
 *                 (no claim has taken it back yet): it would still come
 *                 back.  A leased trial's drain deadline is bounded
 *                 (trial.c), so a task killed again and again ends here
 *   lost          never delivered and due before the end; plus
 *                 lost_claimed: delivered, never acked, and its consumer
 *                 killed after its last delivery (a window of a fault
 *                 that DQ_FAULT_EXPLAINS_CLAIMED), with no lease to bring
 *                 it back (at-most-once under a consumer kill); plus
 *                 lost_retry: the same, but that delivery's work had failed
 *                 and its consumer was re-adding it (a G readd record
 *                 before the kill): the tutorials' retry acks the task
 *                 first, so no lease brings it back (claim C26).  Never
 *                 held against the strategy: the retry policy lost it
 * `delivered` keeps its meaning (ids delivered at least once), so
 * enqueued = delivered + (lost - lost_claimed - lost_retry) +
 * (never-delivered pending) + dead_undelivered; lost, pending_end and
 * dead_lettered never count the same id.
 * Each extra delivery of an id (in time order, after its first) is one of:
 *   retried       no ack of the id before it, and the previous delivery
 *                 was given back for a retry (a G record of its consumer
 *                 and attempt): the retry the consumer asked for
 *   redelivered   no ack of the id before it, the previous delivery
 *                 itself was never acked (no A of its consumer and
 *                 attempt, at any time), and either its attempt is
 *                 > 1 (the strategy says it is a redelivery, e.g. a lease
 *                 ran out) or a fault window began after the previous
 *                 delivery and at or before this one: at-least-once
 *                 behaviour
 *   dup_fault     otherwise, when a fault window began after the previous
 *                 delivery and at or before this one (e.g. Redis lost the
 *                 claim's write in a restart), or a window of either
 *                 delivery's consumer (or of all; or any window of a fault
 *                 that DQ_FAULT_EXPLAINS_EARLY, a skewed clock, since a
 *                 skewed mover or reaper acts on every consumer's tasks)
 *                 was still open at this one (a skew spanning the
 *                 run makes a lease look expired early), or the previous
 *                 delivery came before the id's E record and a window of
 *                 a fault that DQ_FAULT_REPEATS_ANY began at or before
 *                 that E (the producer had not yet seen its enqueue
 *                 acknowledged, retried it, and the retry added the task
 *                 again after its delivery), or the id's E record lies
 *                 inside such a window (the retry landed after a mover
 *                 had taken the first copy on, so both come after E), or
 *                 a window of a fault that rolls data back (its row's
 *                 rollback_ms) began at or before this one and the
 *                 previous delivery lies in its reach, from rollback_ms
 *                 before its begin through its end (the crash dropped
 *                 that claim's write, so the task came back, however
 *                 long after the window): a duplicate a fault explains
 *   dup_nofault   otherwise: a duplicate no fault explains (a bug, or
 *                 naive's documented race).  A delivery after an ack of
 *                 the same id is never a redelivery.
 * duplicates = retried + redelivered + dup_fault + dup_nofault.
 * early_fault counts the early deliveries made inside a window of a fault that
 * DQ_FAULT_EXPLAINS_EARLY (of that consumer, or of all).  Each lost id, redelivery, fault duplicate and skewed early
 * delivery is attributed to one fault (faults[]): a claimed-and-killed id
 * to the kill that followed its last delivery; a never-delivered id to the
 * first window (by begin) that can explain its loss (below); a
 * redelivery or duplicate to the first window begun between the two
 * deliveries; a refused enqueue (N) to the first window open at its time
 * (faults[].refused).  What no window explains is lost_nofault /
 * dup_nofault.
 *
 * Which window explains a never-delivered (lost) id.  The window must
 * have begun at or before the end and ended (or still be open) at or
 * after the id's E record; then it depends on its row's loss rule (a
 * window never closed ends at the end of the log):
 *   DQ_LOSS_ENQUEUED   explains it: a task enqueued before the window
 *                      ended may have been wiped (a Redis restart; a kill
 *                      whose end record holds the row's end_wipes text,
 *                      "replacement=none": an in-process queue died with
 *                      its process)
 *   DQ_LOSS_DUE        only if due_ms*1000 <= window end +
 *                      DQ_CHECK_LOSS_SLACK_MS*1000: the task can only have
 *                      been in a dead consumer's hands, in flight, or
 *                      expired while nobody listened if it was due by then
 *                      (the slack covers a claim that blocks up to its
 *                      claim timeout)
 *   DQ_LOSS_NONE       never (a wrong clock delivers early or late, it
 *                      does not lose; and any name no row knows, pooled
 *                      as "other" too: an unknown fault must not hide a
 *                      real loss)
 * So a loss by an at-most-once strategy of a task due well after every
 * window stays lost_nofault, and is a violation.
 */
#ifndef DQ_CHECKER_H
#define DQ_CHECKER_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

typedef struct dq_latency {
    double p50_ms, p90_ms, p99_ms, p999_ms, max_ms; /* 0 when no sample */
    uint64_t n;
} dq_latency;

#define DQ_CHECK_MAX_FAULTS 8

/* Slack after a DQ_LOSS_DUE fault window (faults.h) within which a task
 * due then may still have been lost by it (top comment): one consumer
 * claim timeout's worth. */
#define DQ_CHECK_LOSS_SLACK_MS 1000

/* What one fault name did in a log: its windows and what is attributed to
 * it.  Fault names beyond DQ_CHECK_MAX_FAULTS are pooled in the last. */
typedef struct dq_fault_stat {
    char name[32];             /* as in the F records; its rules are those
                                  of the fault row of that name (faults.h) */
    char arg[64];              /* arg of its first begin ("mode=always") */
    uint64_t windows;          /* begin records */
    int64_t window_us;         /* summed window lengths */
    uint64_t lost, redelivered, dup_fault, early;
    uint64_t refused;          /* N records inside one of its windows */
} dq_fault_stat;

/* How a log ended (its Z record; top comment). */
typedef enum dq_check_end {
    DQ_CHECK_END_NONE = 0,     /* no Z record: incomplete */
    DQ_CHECK_END_CLEAN,        /* Z clean */
    DQ_CHECK_END_INTERRUPTED,  /* Z interrupted */
    DQ_CHECK_END_FAILED        /* Z failed (H failed says why) */
} dq_check_end;

typedef struct dq_check {
    uint64_t enqueued, delivered, deliveries, duplicates, lost, early;
    uint64_t acked, unknown;
    uint64_t ack_refused, ack_failed; /* R records (top comment) */
    uint64_t enqueue_refused;  /* N records (top comment) */
    int log_version;           /* 1 or 2: the first line's format */
    dq_check_end end;          /* the Z record; NONE for v1 */
    bool torn;                 /* the last line had no LF (not read) */
    dq_latency lateness;
    int64_t first_us, last_us;  /* first and last record times (Z aside), 0
                                   if none */

    /* What the fault windows explain (the top comment). */
    uint64_t redelivered, dup_fault, dup_nofault; /* sum to duplicates */
    uint64_t pending_end;      /* not lost: the trial ended first */
    uint64_t lost_claimed;     /* part of lost: claimed, consumer killed */
    uint64_t lost_retry;       /* part of lost: killed while re-adding its
                                  failed task (top comment) */
    uint64_t lost_nofault;     /* part of lost: no fault window explains it
                                  (the rules per fault in the top comment) */
    uint64_t early_fault;      /* part of early: inside a window of a fault
                                  that explains early deliveries */
    uint64_t unacked;          /* delivered ids with no A record */
    uint64_t redelivered_hidden; /* delivered ids whose first logged
                                  delivery has attempt > 1: an earlier
                                  claim was never logged (its consumer
                                  was killed right after the claim) */
    uint64_t fault_windows;    /* F begin records */
    int64_t end_us;            /* the end used for pending_end */
    int64_t lease_ms;          /* H opt.lease_ms, 0 when absent */
    char fault_spec[128];      /* H faults (or H fault), "" when absent */
    int64_t queued_at_end;     /* H pending_at_end: tasks the queue still
                                  held, never claimed, when the trial
                                  ended; -1 when absent */
    uint64_t pending_undelivered; /* part of pending_end: never delivered,
                                  due after the end */
    uint64_t lost_queued;      /* part of lost: never delivered, yet still
                                  queued at the end (top comment) */
    char failed[300];          /* "the trial failed: <H failed>", "" when
                                  the log has no H failed */
    /* Retries, double executions and dead letters (top comment). */
    uint64_t given_back;       /* G records */
    uint64_t retried;          /* part of duplicates: retries asked for */
    uint64_t processed_twice;  /* ids whose work ran twice or more */
    uint64_t dead_lettered;    /* ids in the dead-letter set at the end */
    uint64_t dead_undelivered; /* part of dead_lettered: never delivered */
    /* The latency sampler (top comment); -1 when absent. */
    double redis_stall_ms, ping_p99_ms;
    int64_t pings;
    size_t nfaults;            /* distinct fault names, at most
                                  DQ_CHECK_MAX_FAULTS */
    dq_fault_stat faults[DQ_CHECK_MAX_FAULTS]; /* first-seen order */
} dq_check;

/* Checks the log at path.  Returns 0 and fills *out, or -1 with a one-line
 * message "path:line: what is wrong" in err (errlen bytes) when the file
 * cannot be read or a record is malformed.  0 says nothing about whether
 * the log is complete: see dq_check_no_verdict. */
int dq_check_file(const char *path, dq_check *out, char *err, size_t errlen);

/* Same, on an open stream; name is used in messages. */
#include <stdio.h>
int dq_check_stream(FILE *f, const char *name, dq_check *out, char *err,
                    size_t errlen);

/* dq_check_file, and also the per-id lateness samples: *lat is set to a
 * malloc'd array of out->lateness.n values in ms (first delivery - due
 * time of each delivered enqueued id), sorted ascending; the caller frees
 * it.  Lost ids have no sample (out->lost counts them).  On error returns
 * -1 with the message in err and *lat NULL. */
int dq_check_file_lateness(const char *path, dq_check *out, double **lat,
                           char *err, size_t errlen);
/* Same, on an open stream read to its end (the caller closes it); name is
 * used in messages. */
int dq_check_stream_lateness(FILE *f, const char *name, dq_check *out,
                             double **lat, char *err, size_t errlen);

/* NULL when the checked log c can carry a verdict (a v2 log ending with
 * "Z clean"); otherwise why not, as a one-line text starting with "log
 * incomplete" (no Z record, a torn last line, a v1 log), "trial
 * interrupted" (Z interrupted) or "the trial failed: <why>" (Z failed,
 * the reason from H failed), for "no verdict: <text>"; static, or c's
 * own (valid as long as c).  Every caller that judges a stored log asks
 * this first: counts of an incomplete log are neither ok nor a
 * violation. */
const char *dq_check_no_verdict(const dq_check *c);

/* The explanation of lost_queued (c->lost_queued > 0): "N of the lost
 * tasks were still queued in Redis when the trial ended (late beyond the
 * deadline, not gone)" into buf (len bytes); "" when it is 0.  The same
 * words for `dqlab check` and the `dqlab run` summary. */
void dq_check_queued_note(const dq_check *c, char *buf, size_t len);

/* Percentile p (0..100) of n sorted samples, nearest-rank; 0 when n == 0. */
double dq_percentile(const double *sorted, size_t n, double p);

/* qsort's comparison of two doubles, ascending. */
int dq_cmp_double(const void *a, const void *b);
/* The median of v[0..n-1] (sorts v), the mean of the middle two when n
 * is even; -1 when n is 0.  The bench and the report both use it. */
double dq_median(double *v, size_t n);

/* The nearest rank (1..n) of percentile p (0..100) among n samples:
 * ceil(p/100 * n), computed so that floating-point error cannot push an
 * exact rank up by one (99.9% of 1000 is rank 999, not 1000).  0 when
 * n == 0. */
size_t dq_percentile_rank(double p, size_t n);

/* The counts as a new jansson object (caller owns the reference):
 * enqueued, delivered, deliveries, duplicates, lost, early, unknown, acked,
 * lateness_ms {p50, p90, p99, p999, max, n}, and redelivered, dup_fault,
 * dup_nofault, pending_end, lost_claimed, lost_nofault, early_fault,
 * unacked, fault_windows, end_us, fault (the H fault spec or null),
 * faults [{name, windows, window_ms, lost, redelivered, dup_fault,
 * early, refused}], ack_refused, ack_failed, enqueue_refused,
 * log_version, lost_queued, given_back, retried, lost_retry,
 * processed_twice, dead_lettered, dead_undelivered, redis_stall_ms,
 * ping_p99_ms, pings (these three null when the log has no sampler
 * records), pending_at_end (null when the log has none), log_end
 * ("clean", "interrupted", "failed" or null), no_verdict
 * (dq_check_no_verdict's text or null).  NULL on allocation failure. */
struct json_t;
struct json_t *dq_check_json(const dq_check *c);

/* The guarantees the checked log c shows broken by a strategy declaring
 * flags (DQ_G_*), as one-line static texts, in this order:
 *   early        early deliveries outside windows that explain them (any
 *                strategy)
 *   unknown      deliveries of ids never enqueued (any strategy)
 *   duplicates   dup_nofault > 0 and DQ_G_NO_DUP_CONCURRENT declared
 *   redelivered  a redelivery or fault duplicate attributed to a fault
 *                whose row lacks DQ_FAULT_REPEATS_ANY (a Redis restart or
 *                pause, where a lost reply can make any strategy repeat a
 *                task, has it), and
 *                DQ_G_AT_MOST_ONCE declared without DQ_G_DUPLICATES (naive's
 *                documented race may straddle a fault window)
 *   lost         (unless interrupted) lost ids no fault explains, and lost
 *                ids attributed to a fault whose loss the flags rule out:
 *                its row's loss_allowed(arg of its first begin, flags)
 *                says (e.g. a consumer kill is allowed to lose unless the
 *                strategy declares SURVIVES_CONSUMER_CRASH); a row with
 *                its own lost_verdict line gives that line, the others
 *                one common line; unknown fault names are never judged.
 * interrupted: the trial was cut short, so lost tasks are not judged.
 * Fills up to max entries of out and returns how many there are (may be
 * more than max).  Payload changes are not in the log: `dqlab run` adds
 * its own rule for them.  This judges the counts as they are: for a
 * stored log, ask dq_check_no_verdict first. */
size_t dq_check_violations(const dq_check *c, unsigned flags,
                           bool interrupted, const char **out, size_t max);

#endif
