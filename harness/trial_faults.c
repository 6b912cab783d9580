/* trial_faults.c -- the fault schedule of a trial (trial_int.h).
 *
 * The trial knows no fault by name: it calls each fault row's hooks
 * (faults.h) at its time, on its own main thread, through one context
 * (the parameters, the private server, the admin connection, the log, the
 * consumers):
 *   before connecting   servers (the one fault that starts its own)
 *   before the run      prepare (each fault)
 *   consumers start     begin of the THROUGHOUT ones (clock-skew)
 *   during the wait     begin of each AT window when its time comes
 *                       (dq_fault_at_ms after the wait began), end once
 *                       its hold ran out (a row may say "not yet")
 *   the trial stops     cut of the open windows, before the consumers
 *                       are joined (a paused server must resume first)
 *   consumers stopped   "end interrupted=1" of the windows cut short, end
 *                       of the THROUGHOUT ones
 *   every path          finish (server settings restored)
 * DQ_FAULT_IN_CONSUMER faults (kill-consumer) have no hooks here: the
 * consumers act on their plan themselves (trial_workers.c).
 */
#include <string.h>

#include "trial_int.h"

void dq_trial_faults_init(dq_trial_faults *tf, const dq_trial_params *p,
                          dq_queue *admin, struct redisContext *redis)
{
    memset(tf, 0, sizeof *tf);
    tf->ctx.p = p;
    tf->ctx.server = p->server;
    tf->ctx.admin = admin;
    tf->ctx.redis = redis;
    tf->ctx.consumers = &tf->consumers;
    for (size_t i = 0; i < p->nfaults && i < DQ_MAX_FAULTS; i++)
        tf->run[tf->n++].f = &p->faults[i];
}

/* The context for the hooks of fault i. */
static dq_fault_ctx *at(dq_trial_faults *tf, size_t i)
{
    tf->ctx.index = i;
    return &tf->ctx;
}

/* A hook's failure: its message for the trial. */
static int failed(dq_trial_faults *tf, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", tf->ctx.err);
    return -1;
}

int dq_trial_faults_servers(dq_trial_faults *tf, char *err, size_t errlen)
{
    for (size_t i = 0; i < tf->n; i++) {
        const dq_fault *f = tf->run[i].f;
        if (f->ops->servers != NULL && f->ops->servers(at(tf, i), f) != 0)
            return failed(tf, err, errlen);
    }
    return 0;
}

int dq_trial_faults_prepare(dq_trial_faults *tf, char *err, size_t errlen)
{
    for (size_t i = 0; i < tf->n; i++) {
        const dq_fault *f = tf->run[i].f;
        if (f->ops->prepare != NULL && f->ops->prepare(at(tf, i), f) != 0)
            return failed(tf, err, errlen);
    }
    return 0;
}

int dq_trial_faults_start(dq_trial_faults *tf, char *err, size_t errlen)
{
    for (size_t i = 0; i < tf->n; i++) {
        const dq_fault *f = tf->run[i].f;
        int64_t hold;
        if (f->ops->timing == DQ_FAULT_IN_CONSUMER) {
            tf->run[i].phase = 2;
        } else if (f->ops->timing == DQ_FAULT_THROUGHOUT) {
            if (f->ops->begin != NULL &&
                f->ops->begin(at(tf, i), f, &hold) != 0)
                return failed(tf, err, errlen);
            tf->run[i].phase = 1;
        }
    }
    return 0;
}

void dq_trial_faults_schedule(dq_trial_faults *tf, int64_t start_us)
{
    for (size_t i = 0; i < tf->n; i++)
        tf->run[i].at_us = start_us + dq_fault_at_ms(tf->ctx.p, i) * 1000;
}

int dq_trial_faults_tick(dq_trial_faults *tf, char *err, size_t errlen)
{
    bool was = dq_trial_faults_pending(tf);
    int64_t now = dq_mono_us(), hold;

    for (size_t i = 0; i < tf->n; i++) {
        const dq_fault *f = tf->run[i].f;
        int rc;
        if (f->ops->timing != DQ_FAULT_AT)
            continue;
        if (tf->run[i].phase == 0 && now >= tf->run[i].at_us) {
            hold = 0;
            if (f->ops->begin != NULL &&
                f->ops->begin(at(tf, i), f, &hold) != 0)
                return failed(tf, err, errlen);
            tf->run[i].end_us = now + hold * 1000;
            tf->run[i].phase = hold > 0 ? 1 : 2;
        } else if (tf->run[i].phase == 1 && now >= tf->run[i].end_us) {
            rc = f->ops->end != NULL ? f->ops->end(at(tf, i), f) : 0;
            if (rc < 0)
                return failed(tf, err, errlen);
            if (rc == 0)
                tf->run[i].phase = 2;
        }
    }
    if (was && !dq_trial_faults_pending(tf))
        tf->done_wall_ms = dq_wall_us() / 1000;
    return 0;
}

bool dq_trial_faults_pending(const dq_trial_faults *tf)
{
    for (size_t i = 0; i < tf->n; i++)
        if (tf->run[i].f->ops->timing == DQ_FAULT_AT &&
            tf->run[i].phase != 2)
            return true;
    return false;
}

void dq_trial_faults_cut(dq_trial_faults *tf)
{
    for (size_t i = 0; i < tf->n; i++) {
        const dq_fault *f = tf->run[i].f;
        if (f->ops->timing == DQ_FAULT_AT && tf->run[i].phase == 1 &&
            f->ops->cut != NULL && f->ops->cut(at(tf, i), f) == 1)
            tf->run[i].phase = 2;
    }
}

void dq_trial_faults_stop(dq_trial_faults *tf)
{
    for (size_t i = 0; i < tf->n; i++) {
        const dq_fault *f = tf->run[i].f;
        if (tf->run[i].phase != 1)
            continue;
        if (f->ops->timing == DQ_FAULT_THROUGHOUT && f->ops->end != NULL)
            f->ops->end(at(tf, i), f);
        else
            dq_fault_record(at(tf, i), f, "end", "interrupted=1");
        tf->run[i].phase = 2;
    }
}

void dq_trial_faults_finish(dq_trial_faults *tf)
{
    for (size_t i = 0; i < tf->n; i++) {
        const dq_fault *f = tf->run[i].f;
        if (f->ops->finish != NULL)
            f->ops->finish(at(tf, i), f);
    }
}
