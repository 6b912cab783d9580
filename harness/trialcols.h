/* trialcols.h -- the columns of trials.csv, declared once for the program
 * that writes the file (`dqlab experiment`, harness/experiment.c) and the
 * one that reads it (`dqlab report`, report/results.c).
 *
 * Each trial of an experiment run is one row.  The list below is the file
 * format: its order is the column order, its names are the header and the
 * fields of dq_trialrow, and its types say how a value is written.  A
 * column added here is written and read with no other edit, so the writer
 * and the reader cannot drift apart (they did once: two hand-kept column
 * lists).
 *
 * X(name, type, absent):
 *   type    STR   const char *, quoted per RFC 4180 when it holds a comma,
 *                 a quote or a line break ("" inside quotes for a quote)
 *           INT   int ("%d")        I64  int64_t       U64  uint64_t
 *           SZ    size_t ("%zu")
 *           F1    double "%.1f"     F3   double "%.3f"
 *           F3NA  double "%.3f", or "-1" when negative (not measured)
 *   absent  NULL: every trials.csv dqlab wrote has the column, and a file
 *           without it is malformed; otherwise the text a reader takes for
 *           the value when an older file lacks the column.
 */
#ifndef DQ_TRIALCOLS_H
#define DQ_TRIALCOLS_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define DQ_TRIAL_COLUMNS(X)                                                  \
    X(experiment, STR, "")                                                   \
    X(trial, SZ, "")              /* 1-based: logs/trial-NNN.log */          \
    X(strategy, STR, NULL)                                                   \
    X(options, STR, NULL)         /* "k=v;k2=v2" */                          \
    X(producers, INT, NULL)                                                  \
    X(consumers, INT, NULL)                                                  \
    X(tasks, I64, NULL)                                                      \
    X(delay_min_ms, I64, NULL)                                               \
    X(delay_max_ms, I64, NULL)                                               \
    X(work_us, I64, NULL)                                                    \
    X(repeat, INT, NULL)                                                     \
    X(seed, U64, NULL)                                                       \
    X(enqueued, U64, NULL)                                                   \
    X(delivered, U64, NULL)                                                  \
    X(deliveries, U64, NULL)                                                 \
    X(duplicates, U64, NULL)                                                 \
    X(lost, U64, NULL)                                                       \
    X(early, U64, NULL)                                                      \
    X(lateness_p50_ms, F3, NULL)                                             \
    X(lateness_p90_ms, F3, NULL)                                             \
    X(lateness_p99_ms, F3, NULL)                                             \
    X(lateness_p999_ms, F3, NULL)                                            \
    X(lateness_max_ms, F3, NULL)                                             \
    X(tasks_per_s, F1, NULL)                                                 \
    X(elapsed_s, F3, NULL)                                                   \
    X(redis_commands, I64, NULL)  /* -1: not measured */                     \
    X(round_trips, U64, NULL)                                                \
    X(empty_polls, U64, NULL)                                                \
    X(lost_races, U64, NULL)                                                 \
    X(wakeups, U64, NULL)                                                    \
    X(putbacks, U64, "")                                                     \
    X(acked, U64, "")                                                        \
    X(unknown, U64, "")                                                      \
    X(backlog, I64, "")                                                      \
    X(idle_ms, I64, "")                                                      \
    X(claim_timeout_ms, I64, "")                                             \
    X(measured_s, F3, "")         /* the server was measured over this */    \
    X(redis_cpu_ms, F3NA, "-1")   /* server CPU over measured_s */           \
    X(backlog_enqueue_s, F3, "")                                             \
    X(fault, STR, "")             /* "none" or the fault spec */             \
    X(consumer_mode, STR, "")     /* "thread" or "process" */                \
    X(kills, INT, "")                                                        \
    X(restarts, INT, "")                                                     \
    X(retries, U64, "")                                                      \
    X(redelivered, U64, "")                                                  \
    X(dup_fault, U64, "")                                                    \
    X(dup_nofault, U64, "")                                                  \
    X(pending_end, U64, "")                                                  \
    X(lost_claimed, U64, "")                                                 \
    X(lost_nofault, U64, "")                                                 \
    X(early_fault, U64, "")                                                  \
    X(unacked, U64, "")                                                      \
    X(redelivered_hidden, U64, "")                                           \
    X(fault_windows, U64, "")                                                \
    X(violations, SZ, "")         /* guarantees the trial broke */           \
    X(rate, I64, "0")             /* offered tasks/s, 0: unpaced */          \
    X(enqueue_refused, U64, "0")  /* N records: refused (OOM) */             \
    X(rtt_ms, F3NA, "-1")         /* one round trip, median, ms (trial.h) */ \
    X(fail_every, I64, "0")       /* every N-th claim's work fails */        \
    X(retry, STR, "")             /* readd|nack, "" when none fails */       \
    X(retried, U64, "")           /* deliveries asked for by a retry */      \
    X(lost_retry, U64, "")        /* lost by a re-add cut short */           \
    X(processed_twice, U64, "")   /* ids whose work ran twice */             \
    X(dead_lettered, U64, "")     /* ids in the dead-letter set */           \
    X(redis_stall_ms, F3NA, "-1") /* sampler: longest PING gap */            \
    X(ping_p99_ms, F3NA, "-1")    /* sampler: PING round trip p99 */

#define DQ_TC_CTYPE_STR const char *
#define DQ_TC_CTYPE_INT int
#define DQ_TC_CTYPE_I64 int64_t
#define DQ_TC_CTYPE_U64 uint64_t
#define DQ_TC_CTYPE_SZ size_t
#define DQ_TC_CTYPE_F1 double
#define DQ_TC_CTYPE_F3 double
#define DQ_TC_CTYPE_F3NA double

/* One row.  Strings are borrowed: the writer points them at its own data,
 * the reader into the file text it keeps. */
typedef struct dq_trialrow {
#define DQ_TC_FIELD(name, type, absent) DQ_TC_CTYPE_##type name;
    DQ_TRIAL_COLUMNS(DQ_TC_FIELD)
#undef DQ_TC_FIELD
} dq_trialrow;

/* Column indexes: DQ_TC_strategy, ...; DQ_TC_COUNT columns in all. */
enum dq_trialcol {
#define DQ_TC_ENUM(name, type, absent) DQ_TC_##name,
    DQ_TRIAL_COLUMNS(DQ_TC_ENUM)
#undef DQ_TC_ENUM
    DQ_TC_COUNT
};

/* Writes s as one CSV field (RFC 4180 quoting when needed); NULL, a
 * column a row's initializer left out, as "". */
static inline void dq_trialcsv_str(FILE *f, const char *s)
{
    if (s == NULL)
        return;
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

#define DQ_TC_PUT_STR(f, v) dq_trialcsv_str(f, v)
#define DQ_TC_PUT_INT(f, v) fprintf(f, "%d", v)
#define DQ_TC_PUT_I64(f, v) fprintf(f, "%" PRId64, v)
#define DQ_TC_PUT_U64(f, v) fprintf(f, "%" PRIu64, v)
#define DQ_TC_PUT_SZ(f, v) fprintf(f, "%zu", v)
#define DQ_TC_PUT_F1(f, v) fprintf(f, "%.1f", v)
#define DQ_TC_PUT_F3(f, v) fprintf(f, "%.3f", v)
#define DQ_TC_PUT_F3NA(f, v) ((v) >= 0 ? fprintf(f, "%.3f", v) : fputs("-1", f))

/* The header line of trials.csv, with its newline. */
static inline void dq_trialrow_header(FILE *f)
{
    const char *sep = "";
#define DQ_TC_HEAD(name, type, absent) fputs(sep, f), sep = ",", fputs(#name, f);
    DQ_TRIAL_COLUMNS(DQ_TC_HEAD)
#undef DQ_TC_HEAD
    fputc('\n', f);
}

/* One data line of trials.csv for r, with its newline. */
static inline void dq_trialrow_write(FILE *f, const dq_trialrow *r)
{
    const char *sep = "";
#define DQ_TC_PUT(name, type, absent)                                        \
    fputs(sep, f), sep = ",", DQ_TC_PUT_##type(f, r->name);
    DQ_TRIAL_COLUMNS(DQ_TC_PUT)
#undef DQ_TC_PUT
    fputc('\n', f);
}

#endif
