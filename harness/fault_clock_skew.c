/* fault_clock_skew.c -- clock-skew:[TARGET:][+|-]MS: consumer c0's clock
 * (TARGET consumer, the default) or every producer's (TARGET producer)
 * runs MS ahead (+) or behind (-) for the whole trial (faults.h).
 *
 * Strategies read time only through dq_now_ms() (dq.h), which adds the
 * handle's clock offset: slot 0's consumers (every generation of its
 * process, or thread 0 of an in-process strategy's one process) get the
 * offset in their plan, or every producer does.  The event log keeps the
 * true clock, so the checker judges early deliveries by it; a skewed
 * producer gives enqueue due times by its own clock, and its E records
 * carry the due time it meant (trial_workers.c), so its tasks show up as
 * late (ahead) or early (behind) by MS.  F records: begin before the
 * consumers start and end after they stopped, both "c0:offset_ms=+MS" or
 * "producers:offset_ms=+MS" (no consumer's name: every consumer's tasks).
 * A wrong clock delivers early or late: it explains early deliveries and
 * (a skewed mover or reaper acting on every consumer's tasks) duplicates,
 * never a loss.  The spec without a target is the older form, and stays
 * the canonical one for consumers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "faults.h"

/* Whether f skews the producers (else consumer c0). */
static bool producers(const dq_fault *f)
{
    return strcmp(f->word, "producer") == 0;
}

static int cs_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    const char *ms;

    if (narg < 1 || narg > 2) {
        snprintf(err, errlen, "expected clock-skew:[consumer|producer:]"
                 "[+|-]MS");
        return -1;
    }
    ms = arg[narg - 1];
    if (narg == 2 && strcmp(arg[0], "consumer") != 0 &&
        strcmp(arg[0], "producer") != 0) {
        snprintf(err, errlen, "TARGET '%.30s': expected consumer or "
                 "producer", arg[0]);
        return -1;
    }
    if (narg == 2 && strcmp(arg[0], "producer") == 0)
        snprintf(f->word, sizeof f->word, "producer");
    if (dq_fault_num(ms, -DQ_FAULT_MAX_MS, DQ_FAULT_MAX_MS, true,
                     &f->ms) != 0 || f->ms == 0) {
        snprintf(err, errlen, "MS '%.30s': expected a non-zero integer in "
                 "[-%lld, %lld]", ms, (long long)DQ_FAULT_MAX_MS,
                 (long long)DQ_FAULT_MAX_MS);
        return -1;
    }
    return 0;
}

static void cs_format(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "clock-skew:%s%+" PRId64,
             producers(f) ? "producer:" : "", f->ms);
}

static int cs_record(dq_fault_ctx *c, const dq_fault *f, const char *phase)
{
    char arg[64];

    snprintf(arg, sizeof arg, "%s:offset_ms=%+" PRId64,
             producers(f) ? "producers" : "c0", f->ms);
    return dq_fault_record(c, f, phase, arg);
}

static int cs_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    *hold_ms = 0;
    return cs_record(c, f, "begin");
}

static int cs_end(dq_fault_ctx *c, const dq_fault *f)
{
    return cs_record(c, f, "end");
}

static void cs_consumer_plan(const dq_fault *f,
                             const struct dq_trial_params *p, size_t index,
                             int slot, int gen, bool all_in_one,
                             dq_consumer_plan *plan)
{
    (void)p, (void)index, (void)gen, (void)all_in_one;
    if (slot == 0 && !producers(f))
        plan->clock_offset_us += f->ms * 1000;
}

static void cs_producer_plan(const dq_fault *f,
                             const struct dq_trial_params *p, size_t index,
                             int producer, dq_consumer_plan *plan)
{
    (void)p, (void)index, (void)producer;
    if (producers(f))
        plan->clock_offset_us += f->ms * 1000;
}

/* A wrong clock loses nothing by design: a loss under it is held against
 * any strategy. */
static bool cs_loss_allowed(const char *arg, unsigned flags)
{
    (void)arg, (void)flags;
    return false;
}

static void cs_describe(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "%s clock %" PRId64 " ms %s",
             producers(f) ? "every producer's" : "one consumer's",
             f->ms < 0 ? -f->ms : f->ms, f->ms < 0 ? "behind" : "ahead");
}

const dq_fault_ops dq_fault_clock_skew = {
    .name = "clock-skew",
    .usage = "clock-skew:[producer:][+|-]MS",
    .parse = cs_parse,
    .format = cs_format,
    .timing = DQ_FAULT_THROUGHOUT,
    .begin = cs_begin,
    .end = cs_end,
    .consumer_plan = cs_consumer_plan,
    .producer_plan = cs_producer_plan,
    .loss = DQ_LOSS_NONE,
    .explains = DQ_FAULT_EXPLAINS_EARLY,
    .loss_allowed = cs_loss_allowed,
    .describe = cs_describe,
    .mechanism = "One consumer's clock runs ahead or behind.  A strategy "
                 "that compares due times with the client's clock delivers "
                 "early (ahead) or late (behind); strategies reading Redis's "
                 "clock (clock=server) and Redis-side expiry do not move.  "
                 "A producer whose clock is off schedules every task that "
                 "much late (ahead) or early (behind), whatever the "
                 "strategy: due times are the producer's.  The checker "
                 "judges with the true clock.",
};
