/* eventlog.h -- the append-only event log of one trial.
 *
 * Jepsen records every operation and checks the history afterwards; dqlab
 * does the same with a text log, one record per line, fields separated by
 * one TAB, times in CLOCK_REALTIME microseconds (dq_wall_us(), never
 * skewed):
 *
 *   # dqlab event log v1                       first line
 *   H  <key>  <value>                          trial parameter (strategy, seed...)
 *   E  <t_us> <id> <due_ms> <producer>         enqueue returned (Redis acked it)
 *   D  <t_us> <id> <consumer> <attempt>        claim returned the task
 *   A  <t_us> <id> <consumer>                  ack returned
 *   F  <t_us> <fault> begin|end <arg>          a fault window (faults issue)
 *
 * Ids, consumer and producer names must not contain TAB, CR or LF (the
 * writer refuses them).  Each record is written with one write(2) on an
 * O_APPEND descriptor, so records from threads and processes interleave
 * whole and a consumer killed mid-run leaves every record it wrote.
 */
#ifndef DQ_EVENTLOG_H
#define DQ_EVENTLOG_H

#include <stdint.h>
#include <stddef.h>

typedef struct dq_eventlog dq_eventlog;

/* Creates (O_EXCL: never overwrites) the log at path and writes the first
 * line.  Returns NULL with a message in err (errlen bytes) on failure. */
dq_eventlog *dq_eventlog_create(const char *path, char *err, size_t errlen);
/* Closes it; NULL is fine. */
void dq_eventlog_close(dq_eventlog *l);

/* Each writes one record and returns 0, or -1 with errno set (including
 * EINVAL for a name holding TAB/CR/LF).  Thread-safe. */
int dq_log_header(dq_eventlog *l, const char *key, const char *value);
int dq_log_enqueue(dq_eventlog *l, int64_t t_us, const char *id,
                   int64_t due_ms, const char *producer);
int dq_log_deliver(dq_eventlog *l, int64_t t_us, const char *id,
                   const char *consumer, int attempt);
int dq_log_ack(dq_eventlog *l, int64_t t_us, const char *id,
               const char *consumer);
int dq_log_fault(dq_eventlog *l, int64_t t_us, const char *fault,
                 const char *phase, const char *arg);

#endif
