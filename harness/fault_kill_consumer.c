/* fault_kill_consumer.c -- kill-consumer:POINT[:N]: consumers SIGKILL
 * themselves at a point of a claim (faults.h).
 *
 * A real SIGKILL of a real process: whatever the consumer held in memory
 * (a claimed task, a batch buffer, an in-process heap) dies with it, as in
 * production, so the fault forces consumers into processes.  The consumer
 * does it to itself (timing DQ_FAULT_IN_CONSUMER): its plan says at which
 * claim and point; it writes the F begin record
 * "c1:point=after-claim,claim=10,id=t48" and raises SIGKILL (trial_workers.c;
 * before-retry: at the first claim from the planned one on whose work
 * failed, after the ack of a re-add and before the re-add itself, or
 * before the nack);
 * the parent, reaping it, starts a replacement (c1.1) and writes the F end
 * "c1:replacement=c1.1", or "c1:replacement=none" when the process held
 * the whole queue (an in-process strategy) or the trial is ending
 * (trial_procs.c).
 *
 * The plan: the N kills of every kill-consumer fault of the trial, in
 * order, go to consumer slots j mod C (C consumers), and kill j dies at a
 * claim number drawn from the seed in [1, span], span = tasks / (C * (N +
 * 1)), so that the kills fall inside the trial.  The g-th process of a
 * slot (its generation, counting replacements and outage restarts) carries
 * the slot's g-th kill; the one process of an in-process strategy carries
 * the first kill only, and dies with the whole queue.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "trial.h"

#define MAX_KILLS 1000

static int kc_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    dq_kill_point point;

    if (narg < 1 || narg > 2) {
        snprintf(err, errlen, "expected kill-consumer:POINT[:N], POINT "
                 "after-claim, during-work, before-ack or before-retry");
        return -1;
    }
    point = dq_kill_point_parse(arg[0]);
    if (point == DQ_KILL_NONE) {
        snprintf(err, errlen, "POINT '%.30s': expected after-claim, "
                 "during-work, before-ack or before-retry", arg[0]);
        return -1;
    }
    snprintf(f->word, sizeof f->word, "%s", dq_kill_point_name(point));
    f->count = 1;
    if (narg == 2 && dq_fault_num(arg[1], 1, MAX_KILLS, false, &f->count)) {
        snprintf(err, errlen, "N '%.30s': expected an integer in [1, %d]",
                 arg[1], MAX_KILLS);
        return -1;
    }
    return 0;
}

static void kc_format(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "kill-consumer:%s:%" PRId64, f->word, f->count);
}

/* Kill j of the trial (over every kill-consumer fault of p, in order):
 * the fault it belongs to, its slot and claim.  Returns false when there
 * is no kill j. */
static bool kill_j(const dq_trial_params *p, const dq_fault_ops *ops,
                   int64_t j, size_t *fault, int *slot, int64_t *claim)
{
    int64_t first = 0;

    for (size_t i = 0; i < p->nfaults; i++) {
        const dq_fault *f = &p->faults[i];
        int64_t span, c = j - first;
        if (f->ops != ops)
            continue;
        if (c >= f->count) {
            first += f->count;
            continue;
        }
        span = p->tasks / ((int64_t)p->consumers * (f->count + 1));
        if (span < 1)
            span = 1;
        *fault = i;
        *slot = (int)(j % p->consumers);
        *claim = 1 + (int64_t)(dq_fault_hash(p->seed, i, 100 + (uint64_t)c) %
                               (uint64_t)span);
        return true;
    }
    return false;
}

static void kc_consumer_plan(const dq_fault *f, const dq_trial_params *p,
                             size_t index, int slot, int gen, bool all_in_one,
                             dq_consumer_plan *plan)
{
    size_t fi;
    int s, seen = 0;
    int64_t claim;

    for (int64_t j = 0; kill_j(p, f->ops, j, &fi, &s, &claim); j++) {
        if (all_in_one) {           /* the first kill only */
            if (gen == 0 && s == slot && fi == index)
                goto take;
            return;
        }
        if (s != slot || seen++ != gen)
            continue;
        if (fi == index)
            goto take;
        return;
    }
    return;
take:
    plan->die_claim = claim;
    plan->die_point = dq_kill_point_parse(p->faults[fi].word);
    plan->die_by = f->ops;
}

/* before-retry is reached only by a claim whose work failed. */
static int kc_prepare(dq_fault_ctx *c, const dq_fault *f)
{
    if (strcmp(f->word, "before-retry") == 0 && c->p->fail_every == 0)
        return dq_fault_fail(c, "kill-consumer:before-retry: no work fails "
                             "(give --fail-every N)");
    return 0;
}

static bool kc_loss_allowed(const char *arg, unsigned flags)
{
    (void)arg;
    return !(flags & DQ_G_SURVIVES_CONSUMER_CRASH);
}

static void kc_describe(const dq_fault *f, char *buf, size_t len)
{
    const char *w = dq_kill_point_phrase(dq_kill_point_parse(f->word));
    snprintf(buf, len, "consumers killed with SIGKILL %s (%" PRId64 " kill%s "
             "per trial, each replaced)", w, f->count,
             f->count == 1 ? "" : "s");
}

/* A kill before the retry of a failed task tests the retry recipe (the
 * retry experiments), not what a consumer crash costs. */
static dq_fault_class kc_report_class(const dq_fault *f)
{
    return dq_kill_point_parse(f->word) == DQ_KILL_BEFORE_RETRY
               ? DQ_FAULT_CLASS_RETRY_TEST
               : DQ_FAULT_CLASS_CONSUMER_CRASH;
}

const dq_fault_ops dq_fault_kill_consumer = {
    .name = "kill-consumer",
    .usage = "kill-consumer:POINT[:N]",
    .help = "POINT after-claim|during-work|before-ack|\nbefore-retry "
            "(implies --consumer-mode process)",
    .parse = kc_parse,
    .format = kc_format,
    .needs = DQ_FAULT_NEEDS_PROCESS,
    .timing = DQ_FAULT_IN_CONSUMER,
    .prepare = kc_prepare,
    .consumer_plan = kc_consumer_plan,
    /* A killed consumer's claimed task is lost (or comes back under a
     * lease); a task due by the window's end may have been in its hands;
     * the one process of an in-process strategy takes every task with it
     * (its end record says replacement=none). */
    .loss = DQ_LOSS_DUE,
    .explains = DQ_FAULT_EXPLAINS_CLAIMED,
    .end_wipes = "replacement=none",
    .loss_allowed = kc_loss_allowed,
    .lost_verdict = "lost under kill-consumer: the strategy declares "
                    "survives-consumer-crash",
    .describe = kc_describe,
    /* The report's text, without strategy names (which go stale as
     * strategies are added): the report names them from their flags. */
    .mechanism = "A consumer process is killed with SIGKILL at a chosen "
                 "point of a claim.  An at-most-once claim removes the task "
                 "from Redis, so the killed consumer's task is gone; a lease "
                 "(the at-least-once strategies) keeps it, and it comes back "
                 "with a higher attempt once the lease runs out.  For an "
                 "in-process strategy the whole queue dies with the "
                 "process.",
    .report_class = kc_report_class,
};
