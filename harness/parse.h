/* parse.h -- strict parsing of numbers and ranges from the command line and
 * experiment files.  Every function rejects trailing garbage, empty input,
 * overflow and values outside [min, max], and writes a one-line message
 * naming `what` (an option such as "--tasks" or "file.ini:7: tasks") and
 * the bad text into err (errlen bytes).  Return 0 on success, -1 on error. */
#ifndef DQ_PARSE_H
#define DQ_PARSE_H

#include <stddef.h>
#include <stdint.h>

int dq_parse_i64(const char *what, const char *s, int64_t min, int64_t max,
                 int64_t *out, char *err, size_t errlen);
int dq_parse_u64(const char *what, const char *s, uint64_t *out, char *err,
                 size_t errlen);
/* "MIN:MAX" or a single "N" (MIN = MAX = N), both in [min, max], and
 * MIN <= MAX. */
int dq_parse_range(const char *what, const char *s, int64_t min, int64_t max,
                   int64_t *lo, int64_t *hi, char *err, size_t errlen);

#endif
