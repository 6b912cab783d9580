/* files.h -- the report's readers of stored files: one CSV reader (RFC
 * 4180) into row structs, one meta.txt reader.
 *
 * Every CSV the report reads (trials.csv, the bench's ceiling, throughput,
 * backlog and lateness CSVs, probes.csv) goes through dq_csv_load, and
 * every meta.txt (experiments, bench, probes, incomplete runs) through
 * dq_meta_load, so quoting, blank lines and messages are the same for all
 * of them.  The bottom of report/: it includes nothing of report/.
 */
#ifndef DQ_FILES_H
#define DQ_FILES_H

#include <stdbool.h>
#include <stddef.h>

/* meta.txt: "key = value" lines (harness/runmeta.h), '#' comments. */
typedef struct dq_kv {
    char *key, *val;
} dq_kv;
typedef struct dq_meta {
    dq_kv *kv;
    size_t n;
} dq_meta;

/* Reads path into *m (zeroed first; keys and values trimmed of blanks).
 * Returns 0, or -1 with "path: reason" in err (errlen bytes) and nothing
 * to free. */
int dq_meta_load(const char *path, dq_meta *m, char *err, size_t errlen);
/* The value of key, or "" when absent (never NULL). */
const char *dq_meta_get(const dq_meta *m, const char *key);
void dq_meta_free(dq_meta *m);

/* How a CSV column is stored in a row struct. */
typedef enum dq_coltype {
    DQ_COLT_STR,   /* const char *, into the file text */
    DQ_COLT_INT,   /* int */
    DQ_COLT_I64,   /* int64_t */
    DQ_COLT_U64,   /* uint64_t */
    DQ_COLT_SZ,    /* size_t */
    DQ_COLT_DBL,   /* double */
} dq_coltype;
/* The trialcols.h types. */
#define DQ_COLT_F1 DQ_COLT_DBL
#define DQ_COLT_F3 DQ_COLT_DBL
#define DQ_COLT_F3NA DQ_COLT_DBL

typedef struct dq_colspec {
    const char *name;     /* header name */
    dq_coltype type;
    size_t off;           /* offsetof the field in the row struct */
    const char *absent;   /* value when the file lacks the column; NULL:
                             the column is required */
} dq_colspec;

/* A loaded CSV: the rows and the text their strings point into. */
typedef struct dq_csv {
    char *text;
    void *rows;           /* n rows of the caller's struct */
    size_t n;
} dq_csv;

/* Reads the CSV at path (a header line, then rows; RFC 4180 quoting,
 * quoted line breaks allowed, blank lines skipped) into c: one row struct
 * of rowsize bytes per line, its fields set from the ncols cols by header
 * name.  exact: the header must be the cols' names in that order.  check,
 * when not NULL, vets each row and returns a complaint or NULL.  Returns 1
 * when read (free with dq_csv_free), 0 when path does not exist (c
 * zeroed), -1 with "path:line: what" in err (nothing to free). */
int dq_csv_load(const char *path, const dq_colspec *cols, size_t ncols,
                size_t rowsize, bool exact,
                const char *(*check)(const void *row), dq_csv *c,
                char *err, size_t errlen);
void dq_csv_free(dq_csv *c);

#endif
