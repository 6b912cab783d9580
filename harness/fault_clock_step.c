/* fault_clock_step.c -- clock-step:+|-MS[:AT_MS]: in the middle of the run
 * the wall clock one consumer reads jumps by MS, as an NTP step does, and
 * stays there (faults.h).
 *
 * Strategies read the wall clock only through dq_now_*() (dq.h), which add
 * the handle's clock step (dq_config.clock_step_us), read at every call:
 * the fault sends the step through the control socket of consumer c0's
 * process (dq_fault_consumers.clock_step: its every later process gets it
 * too), or, for an in-process strategy (heap, wheel), of its one process,
 * whose consumer threads all step; the producers keep the true clock, so
 * that the log's due times stay what the producer meant.  A claim in
 * progress sees the step at its next clock reading: a waiting heap or
 * wheel leader, whose timed wait runs on the monotonic clock, finds the
 * head due (a forward step) or not yet due (a backward one) when it wakes
 * and recomputes its wait from the stepped clock.  The event log keeps the
 * true clock, so the checker judges early deliveries by it.
 *
 * F records: one begin "c0:step_ms=+MS" (in-process: "step_ms=+MS", every
 * consumer) when the step is sent, and no end: the clock stays stepped, so
 * the window lasts to the end of the log.  A wrong clock explains early
 * deliveries (and, a stepped mover or reaper acting on every consumer's
 * tasks, duplicates), never a loss.
 */
#include <inttypes.h>
#include <stdio.h>

#include "faults.h"
#include "trial.h"

static int cst_parse(dq_fault *f, char *const *arg, int narg, char *err,
                     size_t errlen)
{
    if (narg < 1 || narg > 2) {
        snprintf(err, errlen, "expected clock-step:+|-MS[:AT_MS]");
        return -1;
    }
    if (dq_fault_num(arg[0], -DQ_FAULT_MAX_MS, DQ_FAULT_MAX_MS, true,
                     &f->ms) != 0 || f->ms == 0) {
        snprintf(err, errlen, "MS '%.30s': expected a non-zero integer in "
                 "[-%lld, %lld]", arg[0], (long long)DQ_FAULT_MAX_MS,
                 (long long)DQ_FAULT_MAX_MS);
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

static void cst_format(const dq_fault *f, char *buf, size_t len)
{
    if (f->at_ms >= 0)
        snprintf(buf, len, "clock-step:%+" PRId64 ":%" PRId64, f->ms,
                 f->at_ms);
    else
        snprintf(buf, len, "clock-step:%+" PRId64, f->ms);
}

static int cst_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    /* An in-process strategy's consumers are threads of one process
     * (trial.c): all of them step. */
    bool one_process = !(c->p->strategy->flags & DQ_G_NEEDS_REDIS);
    char arg[64];

    *hold_ms = 0;
    if (c->consumers->clock_step(c->consumers->impl, 0, f->ms * 1000) != 0)
        return dq_fault_fail(c, "clock-step: the consumers run as threads "
                             "(it needs --consumer-mode process)");
    snprintf(arg, sizeof arg, "%sstep_ms=%+" PRId64, one_process ? "" : "c0:",
             f->ms);
    return dq_fault_record(c, f, "begin", arg);
}

/* A wrong clock loses nothing by design: a loss under it is held against
 * any strategy. */
static bool cst_loss_allowed(const char *arg, unsigned flags)
{
    (void)arg, (void)flags;
    return false;
}

static void cst_describe(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "one consumer's wall clock (an in-process strategy's "
             "process's) stepped %" PRId64 " ms %s in the middle of the run",
             f->ms < 0 ? -f->ms : f->ms, f->ms < 0 ? "back" : "forward");
}

const dq_fault_ops dq_fault_clock_step = {
    .name = "clock-step",
    .usage = "clock-step:+|-MS[:AT_MS]",
    .help = "an NTP step of c0's clock (implies\n--consumer-mode process)",
    .parse = cst_parse,
    .format = cst_format,
    .needs = DQ_FAULT_NEEDS_PROCESS,
    .timing = DQ_FAULT_AT,
    .begin = cst_begin,
    .loss = DQ_LOSS_NONE,
    .explains = DQ_FAULT_EXPLAINS_EARLY,
    .loss_allowed = cst_loss_allowed,
    .describe = cst_describe,
    .mechanism = "The wall clock one consumer reads jumps and stays there, "
                 "as an NTP step moves it.  A strategy that compares due "
                 "times with that clock delivers early after a forward step "
                 "and late after a backward one, by up to the step, and "
                 "leases it sets run out early or late for the others; "
                 "strategies reading Redis's clock (clock=server) and "
                 "Redis-side expiry do not move.  The in-process strategies "
                 "wait on the monotonic clock, so a step neither "
                 "stretches nor cuts a wait: they deliver what the stepped "
                 "clock says is due when they next look.  The checker "
                 "judges with the true clock.",
};
