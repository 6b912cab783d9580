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
 *   acked       all A records
 *   lateness    first delivery t_us - due_ms*1000, per delivered id, in ms
 *               (the first delivery is the one with the smallest t_us)
 * Record order between lines does not matter: an E may follow the D of
 * the same id (the producer logs after enqueue returns).  Lines starting
 * with '#' after the first are comments.
 */
#ifndef DQ_CHECKER_H
#define DQ_CHECKER_H

#include <stdint.h>
#include <stddef.h>

typedef struct dq_latency {
    double p50_ms, p90_ms, p99_ms, p999_ms, max_ms; /* 0 when no sample */
    uint64_t n;
} dq_latency;

typedef struct dq_check {
    uint64_t enqueued, delivered, deliveries, duplicates, lost, early;
    uint64_t acked, unknown;
    dq_latency lateness;
    int64_t first_us, last_us;  /* first and last record times, 0 if none */
} dq_check;

/* Checks the log at path.  Returns 0 and fills *out, or -1 with a one-line
 * message "path:line: what is wrong" in err (errlen bytes) when the file
 * cannot be read or a record is malformed. */
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

/* Percentile p (0..100) of n sorted samples, nearest-rank; 0 when n == 0. */
double dq_percentile(const double *sorted, size_t n, double p);

/* The counts as a new jansson object (caller owns the reference):
 * enqueued, delivered, deliveries, duplicates, lost, early, unknown, acked,
 * lateness_ms {p50, p90, p99, p999, max, n}.  NULL on allocation failure. */
struct json_t;
struct json_t *dq_check_json(const dq_check *c);

#endif
