/* fault_stall_consumer.c -- stall-consumer:MS[:N]: a consumer process stops
 * (SIGSTOP) for MS right after a delivery, then runs on (SIGCONT), N times
 * (1) (faults.h).
 *
 * A long GC pause or a starved CPU: the process neither dies nor answers,
 * and it still holds the task it claimed.  The consumer stops itself, so
 * that it holds one for certain: its plan says at which claim; right after
 * that claim's D record it writes the F begin
 * "c1:stop_ms=MS,claim=K,id=t48" and sends itself SIGSTOP (trial_workers.c).
 * The parent sees the record and the stop, sends SIGCONT once MS have
 * passed since the record and writes the F end "c1:stopped_ms=M" (M
 * measured), and the trial does not end while a consumer is stopped
 * (trial_procs.c, trial.c): the woken consumer finishes its work and acks.
 * With a lease shorter than MS the task has come back to another consumer
 * meanwhile, which ran it too, and the late ack is refused (R ...
 * ENOTFOUND): the work ran twice (the checker's processed_twice).  An
 * in-process strategy's one process stops whole, producers and all.
 *
 * The plan: stall j (0..N-1) of the fault goes to consumer slot j mod C
 * (C consumers), round r = j div C, at claim r *
 * span + 1 + (seeded draw mod span), span = tasks / (C * (rounds + 1)), so
 * that every stall falls inside the trial; only a slot's first process
 * (generation 0) stalls, a replacement does not.  Needs consumers as
 * processes (a thread cannot stop alone).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "faults.h"
#include "trial.h"

static int sc_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    if (narg < 1 || narg > 2) {
        snprintf(err, errlen, "expected stall-consumer:MS[:N]");
        return -1;
    }
    if (dq_fault_num(arg[0], 1, DQ_FAULT_MAX_MS, false, &f->ms) != 0) {
        snprintf(err, errlen, "MS '%.30s': expected an integer in [1, %lld]",
                 arg[0], (long long)DQ_FAULT_MAX_MS);
        return -1;
    }
    f->count = 1;
    if (narg == 2 &&
        dq_fault_num(arg[1], 1, DQ_MAX_STALLS, false, &f->count) != 0) {
        snprintf(err, errlen, "N '%.30s': expected an integer in [1, %d]",
                 arg[1], DQ_MAX_STALLS);
        return -1;
    }
    return 0;
}

static void sc_format(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "stall-consumer:%" PRId64 ":%" PRId64, f->ms,
             f->count);
}

/* Puts a stall at claim into plan, in claim order (a full plan keeps the
 * earlier ones). */
static void plan_add(dq_consumer_plan *plan, int64_t claim, int64_t ms)
{
    int i = plan->nstalls;

    if (i == DQ_MAX_STALLS)
        return;
    while (i > 0 && plan->stall_claim[i - 1] > claim) {
        plan->stall_claim[i] = plan->stall_claim[i - 1];
        plan->stall_ms[i] = plan->stall_ms[i - 1];
        i--;
    }
    plan->stall_claim[i] = claim;
    plan->stall_ms[i] = ms;
    plan->nstalls++;
}

static void sc_consumer_plan(const dq_fault *f, const dq_trial_params *p,
                             size_t index, int slot, int gen, bool all_in_one,
                             dq_consumer_plan *plan)
{
    int64_t c = p->consumers, rounds = (f->count + c - 1) / c, span;

    (void)all_in_one; /* each consumer thread of it has a slot too */
    if (gen != 0)
        return;
    span = p->tasks / (c * (rounds + 1));
    if (span < 1)
        span = 1;
    for (int64_t j = slot; j < f->count; j += c) {
        int64_t r = j / c;
        int64_t claim = r * span + 1 +
                        (int64_t)(dq_fault_hash(p->seed, index,
                                                200 + (uint64_t)j) %
                                  (uint64_t)span);
        plan_add(plan, claim, f->ms);
    }
    if (plan->nstalls > 0)
        plan->stall_by = f->ops;
}

static void sc_describe(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "a consumer stopped with SIGSTOP for %" PRId64 " ms "
             "right after a delivery (%" PRId64 " stall%s per trial)", f->ms,
             f->count, f->count == 1 ? "" : "s");
}

const dq_fault_ops dq_fault_stall_consumer = {
    .name = "stall-consumer",
    .usage = "stall-consumer:MS[:N]",
    .help = "a GC pause holding a task (implies\n--consumer-mode process)",
    .parse = sc_parse,
    .format = sc_format,
    .needs = DQ_FAULT_NEEDS_PROCESS,
    .timing = DQ_FAULT_IN_CONSUMER,
    .consumer_plan = sc_consumer_plan,
    /* Nothing is lost: the stalled consumer wakes with its task.  What it
     * causes, a redelivery under a lease, the checker counts by the
     * attempt the strategy reports; its window names the consumer. */
    .loss = DQ_LOSS_NONE,
    .describe = sc_describe,
    .mechanism = "A consumer process stops for a while holding a task it "
                 "claimed, as in a long GC pause or on a starved CPU, and "
                 "then runs on.  Under a lease shorter than the stop the "
                 "task comes back to another consumer, which runs it too; "
                 "when the first one wakes its ack is refused (the lease "
                 "is no longer its own), but its work has run as well: the "
                 "task was processed twice, so work must be idempotent or "
                 "fenced (a token its target checks).  An at-most-once "
                 "strategy delivers the held task late, once.",
};
