/* fault_subscriber_outage.c -- subscriber-outage:MS[:AT_MS]: every
 * consumer down for MS, then back (faults.h).
 *
 * The trial's consumers stop and start through dq_fault_consumers: thread
 * workers close their handles and wait; consumer processes get SIGTERM
 * (a clean exit) and new ones start after the window, once the old ones
 * finished the task in hand; an in-process strategy's one process is told
 * through the socket on its stdin to stop its consumer threads while its
 * producers go on.  F records: begin "ms=MS" before the consumers stop,
 * end "ms=MS" once they run again; a window the trial's end cuts short
 * ends "interrupted=1".
 */
#include <inttypes.h>
#include <stdio.h>

#include "faults.h"

static int so_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    return dq_fault_parse_window(f, "subscriber-outage", arg, narg, err,
                                 errlen);
}

static void so_format(const dq_fault *f, char *buf, size_t len)
{
    if (f->at_ms >= 0)
        snprintf(buf, len, "subscriber-outage:%" PRId64 ":%" PRId64, f->ms,
                 f->at_ms);
    else
        snprintf(buf, len, "subscriber-outage:%" PRId64, f->ms);
}

static int so_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    char arg[32];

    snprintf(arg, sizeof arg, "ms=%" PRId64, f->ms);
    if (dq_fault_record(c, f, "begin", arg) != 0)
        return -1;
    c->consumers->stop(c->consumers->impl);
    *hold_ms = f->ms;
    return 0;
}

static int so_end(dq_fault_ctx *c, const dq_fault *f)
{
    char arg[32], err[256];
    int rc = c->consumers->start(c->consumers->impl, err, sizeof err);

    if (rc < 0)
        return dq_fault_fail(c, "restarting consumers: %s", err);
    if (rc > 0)
        return 1; /* still finishing their last task */
    snprintf(arg, sizeof arg, "ms=%" PRId64, f->ms);
    return dq_fault_record(c, f, "end", arg);
}

/* Keys that expire while nobody listens lose their tasks, unless pending
 * tasks outlive their consumers. */
static bool so_loss_allowed(const char *arg, unsigned flags)
{
    (void)arg;
    return !(flags & DQ_G_SURVIVES_PROCESS_EXIT);
}

static void so_describe(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "every consumer down for %" PRId64 " ms", f->ms);
}

static dq_fault_class so_report_class(const dq_fault *f)
{
    (void)f;
    return DQ_FAULT_CLASS_CONSUMER_OUTAGE;
}

const dq_fault_ops dq_fault_subscriber_outage = {
    .name = "subscriber-outage",
    .usage = "subscriber-outage:MS[:AT_MS]",
    .parse = so_parse,
    .format = so_format,
    .timing = DQ_FAULT_AT,
    .begin = so_begin,
    .end = so_end,
    .loss = DQ_LOSS_DUE,
    .loss_allowed = so_loss_allowed,
    .describe = so_describe,
    .mechanism = "Every consumer is down for the window, then back.  "
                 "Polling and list strategies find the tasks that fell due "
                 "in the meantime and deliver them in a burst; keyspace "
                 "notifications are fire-and-forget, so a strategy driven "
                 "by them loses every task whose key expired while no "
                 "subscriber listened.",
    .report_class = so_report_class,
};
