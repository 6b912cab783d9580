/* faults.c -- parsing and naming fault specs (faults.h).
 *
 * The injection itself lives in trial.c, next to the producers and
 * consumers it acts on; this file only turns "NAME[:ARG]..." into a
 * dq_fault and back, so the command line, experiment files and the log
 * agree on one spelling, and holds the one rule of which strategies a
 * fault can act on (dq_fault_applies), so that `dqlab run` refuses and an
 * experiment skips the same combinations.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"

#define MAX_FAULT_MS 600000LL
#define MAX_KILLS 1000

static const char *const kind_names[] = {
    [DQ_FAULT_NONE] = "none",
    [DQ_FAULT_KILL_CONSUMER] = "kill-consumer",
    [DQ_FAULT_RESTART_REDIS] = "restart-redis",
    [DQ_FAULT_PAUSE_REDIS] = "pause-redis",
    [DQ_FAULT_SUBSCRIBER_OUTAGE] = "subscriber-outage",
    [DQ_FAULT_CLOCK_SKEW] = "clock-skew",
    [DQ_FAULT_MOVER_STALL] = "mover-stall",
};

static const char *const point_names[] = {
    [DQ_KILL_NONE] = "none",
    [DQ_KILL_AFTER_CLAIM] = "after-claim",
    [DQ_KILL_DURING_WORK] = "during-work",
    [DQ_KILL_BEFORE_ACK] = "before-ack",
};

const char *dq_fault_name(dq_fault_kind k)
{
    if ((size_t)k >= sizeof kind_names / sizeof kind_names[0])
        return "none";
    return kind_names[k];
}

const char *dq_kill_point_name(dq_kill_point p)
{
    if ((size_t)p >= sizeof point_names / sizeof point_names[0])
        return "none";
    return point_names[p];
}

dq_kill_point dq_kill_point_parse(const char *s)
{
    for (size_t i = 1; i < sizeof point_names / sizeof point_names[0]; i++)
        if (strcmp(s, point_names[i]) == 0)
            return (dq_kill_point)i;
    return DQ_KILL_NONE;
}

bool dq_fault_needs_server(const dq_fault *f)
{
    return f->kind == DQ_FAULT_RESTART_REDIS ||
           f->kind == DQ_FAULT_PAUSE_REDIS;
}

bool dq_fault_needs_process(const dq_fault *f)
{
    return f->kind == DQ_FAULT_KILL_CONSUMER;
}

bool dq_fault_applies(const dq_fault *f, const dq_strategy *s, char *why,
                      size_t whylen)
{
    char spec[64];

    if (f == NULL || f->kind == DQ_FAULT_NONE)
        return true;
    dq_fault_format(f, spec, sizeof spec);
    if ((dq_fault_needs_server(f) || f->kind == DQ_FAULT_MOVER_STALL) &&
        !(s->flags & DQ_G_NEEDS_REDIS)) {
        snprintf(why, whylen, "fault %s does not apply to strategy '%s' (it "
                 "uses no Redis)", spec, s->name);
        return false;
    }
    if (f->kind == DQ_FAULT_MOVER_STALL && !(s->flags & DQ_G_BLOCKS)) {
        snprintf(why, whylen, "fault %s does not apply to strategy '%s' (its "
                 "consumers poll: no subscribed or blocked connection to "
                 "drop)", spec, s->name);
        return false;
    }
    return true;
}

/* A decimal integer in [lo, hi] (an optional sign when signed_ok). */
static int num(const char *s, int64_t lo, int64_t hi, bool signed_ok,
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

int dq_fault_parse(const char *spec, dq_fault *f, char *err, size_t errlen)
{
    char buf[128], *parts[5];
    int n = 0;
    int64_t v;
    const char *name;

    memset(f, 0, sizeof *f);
    f->at_ms = -1;
    if (spec == NULL || strlen(spec) >= sizeof buf || spec[0] == '\0') {
        snprintf(err, errlen, "fault '%.60s': expected NAME[:ARG]...",
                 spec ? spec : "");
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *s = buf; n < 5;) {
        parts[n++] = s;
        s = strchr(s, ':');
        if (s == NULL)
            break;
        *s++ = '\0';
    }
    name = parts[0];
#define BAD(...)                                                        \
    do {                                                                \
        char m_[160];                                                   \
        snprintf(m_, sizeof m_, __VA_ARGS__);                           \
        snprintf(err, errlen, "fault '%.60s': %s", spec, m_);           \
        return -1;                                                      \
    } while (0)
    if (strcmp(name, "kill-consumer") == 0) {
        f->kind = DQ_FAULT_KILL_CONSUMER;
        if (n < 2 || n > 3)
            BAD("expected kill-consumer:POINT[:N], POINT after-claim, "
                "during-work or before-ack");
        f->point = dq_kill_point_parse(parts[1]);
        if (f->point == DQ_KILL_NONE)
            BAD("POINT '%.30s': expected after-claim, during-work or "
                "before-ack", parts[1]);
        f->count = 1;
        if (n == 3) {
            if (num(parts[2], 1, MAX_KILLS, false, &v) != 0)
                BAD("N '%.30s': expected an integer in [1, %d]", parts[2],
                    MAX_KILLS);
            f->count = (int)v;
        }
    } else if (strcmp(name, "restart-redis") == 0) {
        f->kind = DQ_FAULT_RESTART_REDIS;
        if (n < 2 || n > 3)
            BAD("expected restart-redis:MODE[:AT_MS], MODE off, everysec "
                "or always");
        if (strcmp(parts[1], "off") != 0 && strcmp(parts[1], "everysec") != 0 &&
            strcmp(parts[1], "always") != 0)
            BAD("MODE '%.30s': expected off, everysec or always", parts[1]);
        snprintf(f->mode, sizeof f->mode, "%s", parts[1]);
        if (n == 3) {
            if (num(parts[2], 0, MAX_FAULT_MS, false, &f->at_ms) != 0)
                BAD("AT_MS '%.30s': expected an integer in [0, %lld]",
                    parts[2], MAX_FAULT_MS);
        }
    } else if (strcmp(name, "pause-redis") == 0 ||
               strcmp(name, "subscriber-outage") == 0) {
        f->kind = name[0] == 'p' ? DQ_FAULT_PAUSE_REDIS
                                 : DQ_FAULT_SUBSCRIBER_OUTAGE;
        if (n < 2 || n > 3)
            BAD("expected %s:MS[:AT_MS]", name);
        if (num(parts[1], 1, MAX_FAULT_MS, false, &f->ms) != 0)
            BAD("MS '%.30s': expected an integer in [1, %lld]", parts[1],
                MAX_FAULT_MS);
        if (n == 3 && num(parts[2], 0, MAX_FAULT_MS, false, &f->at_ms) != 0)
            BAD("AT_MS '%.30s': expected an integer in [0, %lld]", parts[2],
                MAX_FAULT_MS);
    } else if (strcmp(name, "clock-skew") == 0) {
        f->kind = DQ_FAULT_CLOCK_SKEW;
        if (n != 2)
            BAD("expected clock-skew:[+|-]MS");
        if (num(parts[1], -MAX_FAULT_MS, MAX_FAULT_MS, true, &f->ms) != 0 ||
            f->ms == 0)
            BAD("MS '%.30s': expected a non-zero integer in [-%lld, %lld]",
                parts[1], MAX_FAULT_MS, MAX_FAULT_MS);
    } else if (strcmp(name, "mover-stall") == 0) {
        f->kind = DQ_FAULT_MOVER_STALL;
        if (n > 2)
            BAD("expected mover-stall[:AT_MS]");
        if (n == 2 && num(parts[1], 0, MAX_FAULT_MS, false, &f->at_ms) != 0)
            BAD("AT_MS '%.30s': expected an integer in [0, %lld]", parts[1],
                MAX_FAULT_MS);
    } else {
        snprintf(err, errlen, "fault '%.60s': unknown fault '%.30s' (one of "
                 "kill-consumer, restart-redis, pause-redis, "
                 "subscriber-outage, clock-skew, mover-stall)", spec, name);
        return -1;
    }
#undef BAD
    return 0;
}

void dq_fault_format(const dq_fault *f, char *buf, size_t buflen)
{
    const char *name = dq_fault_name(f->kind);

    switch (f->kind) {
    case DQ_FAULT_KILL_CONSUMER:
        snprintf(buf, buflen, "%s:%s:%d", name, dq_kill_point_name(f->point),
                 f->count);
        break;
    case DQ_FAULT_RESTART_REDIS:
        if (f->at_ms >= 0)
            snprintf(buf, buflen, "%s:%s:%" PRId64, name, f->mode, f->at_ms);
        else
            snprintf(buf, buflen, "%s:%s", name, f->mode);
        break;
    case DQ_FAULT_PAUSE_REDIS:
    case DQ_FAULT_SUBSCRIBER_OUTAGE:
        if (f->at_ms >= 0)
            snprintf(buf, buflen, "%s:%" PRId64 ":%" PRId64, name, f->ms,
                     f->at_ms);
        else
            snprintf(buf, buflen, "%s:%" PRId64, name, f->ms);
        break;
    case DQ_FAULT_CLOCK_SKEW:
        snprintf(buf, buflen, "%s:%+" PRId64, name, f->ms);
        break;
    case DQ_FAULT_MOVER_STALL:
        if (f->at_ms >= 0)
            snprintf(buf, buflen, "%s:%" PRId64, name, f->at_ms);
        else
            snprintf(buf, buflen, "%s", name);
        break;
    default:
        snprintf(buf, buflen, "none");
    }
}
