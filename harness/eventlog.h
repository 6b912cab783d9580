/* eventlog.h -- the append-only event log of one trial.
 *
 * Jepsen records every operation and checks the history afterwards; dqlab
 * does the same with a text log, one record per line, fields separated by
 * one TAB, times in CLOCK_REALTIME microseconds (dq_wall_us(), never
 * skewed):
 *
 *   # dqlab event log v2                       first line
 *   H  <key>  <value>                          trial parameter (strategy, seed...)
 *   E  <t_us> <id> <due_ms> <producer>         enqueue returned (Redis acked it)
 *   N  <t_us> <id> <due_ms> <producer> <why>   enqueue refused: the server
 *                                              said no and wrote nothing
 *                                              (<why> "OOM": maxmemory
 *                                              reached under noeviction);
 *                                              not acknowledged, not lost,
 *                                              never retried
 *   D  <t_us> <id> <consumer> <attempt>        claim returned the task
 *   A  <t_us> <id> <consumer> <attempt>        ack returned DQ_OK: the
 *                                              delivery of that attempt to
 *                                              that consumer is acked
 *   R  <t_us> <id> <consumer> <attempt> <code> ack did not return DQ_OK:
 *                                              <code> is the DQ_* name
 *                                              without the prefix
 *                                              (ENOTFOUND: the strategy
 *                                              refused a stale ack, its
 *                                              lease was no longer this
 *                                              delivery's; EIO and others:
 *                                              the call failed); that
 *                                              delivery is not acked
 *   G  <t_us> <id> <consumer> <attempt> <how>  the work of that delivery
 *                                              failed (fail_every): the
 *                                              consumer gives the task
 *                                              back for a retry, <how>
 *                                              readd (ack, then enqueue
 *                                              it again) or nack; written
 *                                              before it does (what came
 *                                              of it: the task's later
 *                                              deliveries)
 *   L  <t_us> <id>                             the strategy's dead-letter
 *                                              set held the task when the
 *                                              trial ended (max_attempts;
 *                                              dq_dead_letter_ids)
 *   F  <t_us> <fault> begin|end <arg>          a fault window
 *   Z  <t_us> clean|interrupted|failed         how the log ended: the last
 *                                              line of every log whose
 *                                              writer finished (clean: the
 *                                              trial ran to its end;
 *                                              interrupted: stopped by
 *                                              SIGINT/SIGTERM/SIGHUP;
 *                                              failed: the trial failed,
 *                                              why in H failed)
 *
 * <attempt> is dq_task.attempt (1 for a first delivery, 0 when the
 * strategy does not count).  A log without a Z line (a writer killed, or a
 * file cut, even at a line boundary) or whose last line has no LF is
 * incomplete, and nothing after the Z line is allowed: the checker gives
 * it no verdict (checker.h).  The checker also reads the v1 format (the
 * same records, A without <attempt>, no R or Z), which never says how it
 * ended, so a v1 log gets counts but no verdict either.
 *
 * F records as the harness writes them (faults.h).  <arg> is
 * "<consumer>:<key>=<v>,..." when the fault concerns one consumer (the
 * name before the first ':' is the consumer of the D/A records), else
 * "<key>=<v>,..." (or empty):
 *   kill-consumer begin  c1:point=after-claim,claim=10,id=t48
 *       written by the consumer process itself right before it SIGKILLs
 *       itself at its claim number `claim`; id is the task it held (with
 *       after-claim no D record of that claim exists)
 *   kill-consumer end    c1:replacement=c1.1  (or c1:replacement=none for
 *       an in-process strategy, whose whole queue died: heap)
 *       written by the parent once the replacement process was started
 *   restart-redis begin|end  mode=off|rdb|everysec|always  (SIGKILL of the
 *       server .. it answers PING again)
 *   pause-redis begin|end    ms=N  (SIGSTOP .. SIGCONT)
 *   subscriber-outage begin|end  ms=N  (consumers stopped .. started)
 *   clock-skew begin|end  c0:offset_ms=+N  (the whole run), or
 *       producers:offset_ms=+N for clock-skew:producer:+N
 *   stall-consumer begin  c1:stop_ms=N,claim=K,id=t48  written by the
 *       consumer process itself right before it stops itself (SIGSTOP)
 *       after the D record of its claim K; end c1:stopped_ms=M (M measured,
 *       >= N) written by the parent once it sent SIGCONT, or
 *       c1:interrupted=1 when the trial ended first
 *   clock-step begin  c0:step_ms=+N (every consumer of an in-process
 *       strategy's one process: step_ms=+N); no end: the clock stays
 *       stepped to the end of the log
 *   busy-redis begin|end  ms=N,threshold_ms=T (a Lua script holds the
 *       server for N ms with busy-reply-threshold T); end adds
 *       busy_replies=B (errorstat_BUSY during the window) and held_ms=M
 *   os-crash begin|end  mode=everysec|always; end adds dropped_bytes=N
 *       (SIGKILL .. the server restarted from what was fsynced)
 *   failover begin wait=N (the strategy's option; SIGKILL of the primary);
 *       end promotion_ms=N,rejoin_ms=M (the replica promoted, a new
 *       replica in sync)
 *   evict begin policy=P,maxmemory=B (the limit set, before the filler);
 *       end evicted_keys=N,filler_keys=K (filler deleted, settings
 *       restored; interrupted=1, first, when the trial ended inside it)
 *   mover-stall begin ""; end pubsub=N,blocked=M  (the CLIENT KILLs),
 *       or end error=1 when it dropped nothing (Redis refused CLIENT
 *       KILL, or every connection found had closed): the trial then
 *       fails, so such a log never ends with Z clean
 *   an end cut short by the end of the trial has arg interrupted=1.
 * Each fault's row (harness/fault_<name>.c) writes its own; the list here
 * is for readers of the log.
 * Headers the trial adds for faults: H consumer_mode thread|process,
 * H fault <spec>[,<spec>...] (only with faults), H end_us <t_us> (when the
 * trial stopped waiting; written after the run's records start).  At the
 * end: H redis_pings <n>, H redis_ping_p99_ms <ms>, H redis_stall_ms <ms>
 * (the latency sampler, trial_sampler.c: PINGs answered, the p99 of their
 * round trips, the longest time between two answers; trials with Redis,
 * idle mode aside), the L records, H pending_at_end <n> (tasks the queue
 * still held, never claimed, once every consumer stopped; where the
 * strategy counts them), and for a
 * trial that failed, H failed <why> (one line) right before Z failed.
 *
 * Ids, consumer and producer names must not contain TAB, CR or LF (the
 * writer refuses them).
 *
 * Durability, two modes (chosen at create/open, see DQ_LOG_*):
 *   sync each (dq_eventlog_create, the v1 behaviour): each record is one
 *     write(2) on an O_APPEND descriptor, so records from threads and
 *     processes interleave whole and a process killed mid-run leaves every
 *     record it wrote.  The price is a system call (and the file's
 *     position lock, shared by every writer) per record.
 *   buffered (DQ_LOG_BUFFERED): each thread appends its E/D/A/R records to
 *     its own buffer, written with one write(2) when it fills
 *     (DQ_LOG_BUF_BYTES), on dq_log_flush() by that thread, and for every
 *     thread on dq_eventlog_flush_all() / dq_eventlog_close().  A thread's
 *     records stay in their order; records of different threads land in
 *     chunks, not in time order (the checker does not rely on order
 *     between lines: checker.h).  H and F records are always written at
 *     once (after the calling thread's buffer), and Z after every
 *     thread's buffer (dq_log_end).  A process that is killed
 *     loses what its buffers held, so: a process other than the one that
 *     created the log -- a forked consumer, which a fault may kill --
 *     always writes each record at once, and drops (never writes) the
 *     buffered records it inherited from its parent, which the parent
 *     writes itself.
 */
#ifndef DQ_EVENTLOG_H
#define DQ_EVENTLOG_H

#include <stdint.h>
#include <stddef.h>

typedef struct dq_eventlog dq_eventlog;

/* Modes for dq_eventlog_create_flags / dq_eventlog_open_append. */
enum {
    DQ_LOG_SYNC_EACH = 0,      /* one write(2) per record (the default) */
    DQ_LOG_BUFFERED = 1u << 0, /* per-thread buffers, see above */
};
/* Size of one thread's buffer in DQ_LOG_BUFFERED mode, bytes. */
#define DQ_LOG_BUF_BYTES (64 * 1024)

/* Creates (O_EXCL: never overwrites) the log at path and writes the first
 * line.  Returns NULL with a message in err (errlen bytes) on failure.
 * Same as dq_eventlog_create_flags(path, DQ_LOG_SYNC_EACH, ...). */
dq_eventlog *dq_eventlog_create(const char *path, char *err, size_t errlen);
/* dq_eventlog_create with a mode: DQ_LOG_SYNC_EACH or DQ_LOG_BUFFERED.
 * NULL with a message in err for an unknown flag too. */
dq_eventlog *dq_eventlog_create_flags(const char *path, unsigned flags,
                                      char *err, size_t errlen);
/* Opens an existing log (created by dq_eventlog_create*, e.g. by a parent
 * process) to append records to it; its first line must be the v2 magic.
 * For a separate process that writes into the trial's log. */
dq_eventlog *dq_eventlog_open_append(const char *path, unsigned flags,
                                     char *err, size_t errlen);
/* Writes every thread's buffered records (DQ_LOG_BUFFERED; a no-op in
 * sync-each mode).  Call it when no other thread is writing to l (after
 * joining them), before reading the file.  Returns 0, or -1 with errno of
 * the first failed write (the other buffers are still written). */
int dq_eventlog_flush_all(dq_eventlog *l);
/* dq_eventlog_flush_all (errors ignored: call it first to see them), then
 * closes and frees; NULL is fine.  No other thread may be writing to l. */
void dq_eventlog_close(dq_eventlog *l);

/* Writes the calling thread's buffered records (DQ_LOG_BUFFERED; a no-op
 * otherwise), e.g. before a point where this thread may be stopped.
 * Returns 0 or -1 with errno. */
int dq_log_flush(dq_eventlog *l);

/* Each writes one record and returns 0, or -1 with errno set (including
 * EINVAL for a name holding TAB/CR/LF, a record of 2048 bytes or more, or
 * any record after dq_log_end on this handle; ENOSPC when the disk is
 * full).  Thread-safe.  In DQ_LOG_BUFFERED mode the record may sit in
 * this thread's buffer until a flush (an error of that flush is returned
 * by the call that triggered it).  attempt: the attempt of the delivery
 * (dq_task.attempt, as in its D record); dq_log_ack is for an ack that
 * returned DQ_OK, dq_log_ack_refused for one that did not, with code the
 * DQ_* result name without its prefix ("ENOTFOUND", "EIO"; non-empty, no
 * TAB/CR/LF). */
int dq_log_header(dq_eventlog *l, const char *key, const char *value);
int dq_log_enqueue(dq_eventlog *l, int64_t t_us, const char *id,
                   int64_t due_ms, const char *producer);
/* An N record: enqueue of id refused by the server (reason non-empty, no
 * TAB/CR/LF, e.g. "OOM"). */
int dq_log_enqueue_refused(dq_eventlog *l, int64_t t_us, const char *id,
                           int64_t due_ms, const char *producer,
                           const char *reason);
int dq_log_deliver(dq_eventlog *l, int64_t t_us, const char *id,
                   const char *consumer, int attempt);
int dq_log_ack(dq_eventlog *l, int64_t t_us, const char *id,
               const char *consumer, int attempt);
int dq_log_ack_refused(dq_eventlog *l, int64_t t_us, const char *id,
                       const char *consumer, int attempt, const char *code);
int dq_log_fault(dq_eventlog *l, int64_t t_us, const char *fault,
                 const char *phase, const char *arg);
/* A G record: how is "readd" or "nack" (EINVAL otherwise). */
int dq_log_giveback(dq_eventlog *l, int64_t t_us, const char *id,
                    const char *consumer, int attempt, const char *how);
/* An L record: id was in the dead-letter set at the end. */
int dq_log_dead(dq_eventlog *l, int64_t t_us, const char *id);
/* Ends the log: writes every thread's buffered records (as
 * dq_eventlog_flush_all), then the Z record with how ("clean",
 * "interrupted" or "failed"; EINVAL otherwise) at once.  After it this handle writes
 * nothing more (EINVAL).  Call it when no other thread or process writes
 * to the log any more (after joining and reaping them), right before
 * dq_eventlog_close: the Z line must be the file's last.  Returns 0, or -1
 * with errno (ENOSPC...) of the first failed write. */
int dq_log_end(dq_eventlog *l, int64_t t_us, const char *how);

#endif
