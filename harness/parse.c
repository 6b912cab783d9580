/* parse.c -- strict number and range parsing for the command line and the
 * experiment files (see parse.h).
 *
 * strtoll/strtoull alone are too forgiving for a lab tool: they skip
 * leading blanks, accept "+5", and strtoull silently turns "-1" into
 * 18446744073709551615.  So the text is checked by hand first (an optional
 * '-' for signed values, then decimal digits only, nothing after) and only
 * then converted, with ERANGE reported as an overflow.  Every message names
 * the option (`what`) and quotes the bad text, on one line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* Longest piece of user text quoted in a message. */
#define QUOTE_MAX 40

/* Returns 1 when s is [-]digits (the '-' only when allow_minus), else 0. */
static int is_decimal(const char *s, int allow_minus)
{
    if (allow_minus && *s == '-')
        s++;
    if (*s == '\0')
        return 0;
    for (; *s != '\0'; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int dq_parse_i64(const char *what, const char *s, int64_t min, int64_t max,
                 int64_t *out, char *err, size_t errlen)
{
    if (s == NULL || *s == '\0') {
        snprintf(err, errlen, "%s: missing value (expected an integer)",
                 what);
        return -1;
    }
    if (!is_decimal(s, 1)) {
        snprintf(err, errlen, "%s: '%.*s' is not an integer", what,
                 QUOTE_MAX, s);
        return -1;
    }
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE) {
        snprintf(err, errlen, "%s: '%.*s' overflows (range %" PRId64
                 "..%" PRId64 ")", what, QUOTE_MAX, s, min, max);
        return -1;
    }
    if (v < min || v > max) {
        snprintf(err, errlen, "%s: '%.*s' is out of range %" PRId64
                 "..%" PRId64, what, QUOTE_MAX, s, min, max);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

int dq_parse_u64(const char *what, const char *s, uint64_t *out, char *err,
                 size_t errlen)
{
    if (s == NULL || *s == '\0') {
        snprintf(err, errlen, "%s: missing value (expected an unsigned "
                 "integer)", what);
        return -1;
    }
    if (s[0] == '-') {
        snprintf(err, errlen, "%s: '%.*s' is negative (expected an unsigned "
                 "integer)", what, QUOTE_MAX, s);
        return -1;
    }
    if (!is_decimal(s, 0)) {
        snprintf(err, errlen, "%s: '%.*s' is not an unsigned integer", what,
                 QUOTE_MAX, s);
        return -1;
    }
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno == ERANGE) {
        snprintf(err, errlen, "%s: '%.*s' overflows (max %" PRIu64 ")", what,
                 QUOTE_MAX, s, UINT64_MAX);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int dq_parse_range(const char *what, const char *s, int64_t min, int64_t max,
                   int64_t *lo, int64_t *hi, char *err, size_t errlen)
{
    char buf[64], sub[96];
    const char *colon;
    int64_t a, b;

    if (s == NULL || *s == '\0') {
        snprintf(err, errlen, "%s: missing value (expected MIN:MAX or N)",
                 what);
        return -1;
    }
    colon = strchr(s, ':');
    if (colon == NULL) {
        if (dq_parse_i64(what, s, min, max, &a, err, errlen) != 0)
            return -1;
        *lo = *hi = a;
        return 0;
    }
    if ((size_t)(colon - s) >= sizeof buf) {
        snprintf(err, errlen, "%s: '%.*s' is not MIN:MAX", what, QUOTE_MAX, s);
        return -1;
    }
    memcpy(buf, s, (size_t)(colon - s));
    buf[colon - s] = '\0';
    snprintf(sub, sizeof sub, "%s MIN", what);
    if (dq_parse_i64(sub, buf, min, max, &a, err, errlen) != 0)
        return -1;
    snprintf(sub, sizeof sub, "%s MAX", what);
    if (dq_parse_i64(sub, colon + 1, min, max, &b, err, errlen) != 0)
        return -1;
    if (a > b) {
        snprintf(err, errlen, "%s: MIN %" PRId64 " > MAX %" PRId64 " in '%.*s'",
                 what, a, b, QUOTE_MAX, s);
        return -1;
    }
    *lo = a;
    *hi = b;
    return 0;
}
