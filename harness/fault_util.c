/* fault_util.c -- what the fault rows share (faults.h): parsing the
 * numbers of a spec, the seeded draws, the consumer death points, and
 * writing F records from a hook.
 *
 * Below the rows and the table (faults.c) alike: nothing here calls a row,
 * so the rows and the table use it without a circle.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eventlog.h"
#include "faults.h"

static const char *const point_names[] = {
    [DQ_KILL_NONE] = "none",
    [DQ_KILL_AFTER_CLAIM] = "after-claim",
    [DQ_KILL_DURING_WORK] = "during-work",
    [DQ_KILL_BEFORE_ACK] = "before-ack",
    [DQ_KILL_BEFORE_RETRY] = "before-retry",
};

const char *dq_kill_point_name(dq_kill_point p)
{
    if ((size_t)p >= sizeof point_names / sizeof point_names[0])
        return "none";
    return point_names[p];
}

const char *dq_kill_point_phrase(dq_kill_point p)
{
    static const char *const phrases[] = {
        "", "after a claim", "during the work", "before the ack",
        "before the retry of a failed task",
    };

    if ((size_t)p >= sizeof phrases / sizeof phrases[0])
        return "";
    return phrases[p];
}

dq_kill_point dq_kill_point_parse(const char *s)
{
    for (size_t i = 1; i < sizeof point_names / sizeof point_names[0]; i++)
        if (strcmp(s, point_names[i]) == 0)
            return (dq_kill_point)i;
    return DQ_KILL_NONE;
}

int dq_fault_num(const char *s, int64_t lo, int64_t hi, bool signed_ok,
                 int64_t *out)
{
    char *end;
    long long v;

    if (s == NULL || *s == '\0' || (!signed_ok && (*s == '-' || *s == '+')))
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int dq_fault_parse_window(dq_fault *f, const char *name, char *const *arg,
                          int narg, char *err, size_t errlen)
{
    if (narg < 1 || narg > 2) {
        snprintf(err, errlen, "expected %s:MS[:AT_MS]", name);
        return -1;
    }
    if (dq_fault_num(arg[0], 1, DQ_FAULT_MAX_MS, false, &f->ms) != 0) {
        snprintf(err, errlen, "MS '%.30s': expected an integer in [1, %lld]",
                 arg[0], (long long)DQ_FAULT_MAX_MS);
        return -1;
    }
    if (narg == 2 &&
        dq_fault_num(arg[1], 0, DQ_FAULT_MAX_MS, false, &f->at_ms) != 0) {
        snprintf(err, errlen, "AT_MS '%.30s': expected an integer in [0, "
                 "%lld]", arg[1], (long long)DQ_FAULT_MAX_MS);
        return -1;
    }
    return 0;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint64_t dq_fault_hash(uint64_t seed, uint64_t index, uint64_t salt)
{
    uint64_t s = seed ^ (0xC2B2AE3D27D4EB4FULL * (index + 1)) ^
                 (0x165667B19E3779F9ULL * (salt + 7));
    return splitmix64(&s);
}

int dq_fault_record(dq_fault_ctx *c, const dq_fault *f, const char *phase,
                    const char *arg)
{
    if (dq_log_fault(c->log, dq_wall_us(), f->ops->name, phase, arg) != 0)
        return dq_fault_fail(c, "event log: %s", strerror(errno));
    if (strcmp(phase, "begin") == 0)
        c->windows++;
    return 0;
}

bool dq_fault_keeps_all(unsigned flags)
{
    unsigned both = DQ_G_SURVIVES_CONSUMER_CRASH | DQ_G_SURVIVES_PROCESS_EXIT;
    return (flags & both) == both;
}

int dq_fault_fail(dq_fault_ctx *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return -1;
}
