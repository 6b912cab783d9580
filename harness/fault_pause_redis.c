/* fault_pause_redis.c -- pause-redis:MS[:AT_MS]: the harness-owned
 * redis-server stopped with SIGSTOP for MS, then SIGCONT (faults.h).
 *
 * A long stall: nothing inside Redis is lost, but clients time out and
 * reconnect.  F records: begin "ms=MS" once SIGSTOP was sent, end "ms=MS"
 * after SIGCONT; a trial that ends inside the window sends SIGCONT at once
 * and writes the end "interrupted=1".  The server is sent SIGCONT again
 * after the run on every path (a stopped server must never outlive the
 * trial).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>

#include "faults.h"
#include "redis_server.h"

static int pr_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    return dq_fault_parse_window(f, "pause-redis", arg, narg, err, errlen);
}

static void pr_format(const dq_fault *f, char *buf, size_t len)
{
    if (f->at_ms >= 0)
        snprintf(buf, len, "pause-redis:%" PRId64 ":%" PRId64, f->ms,
                 f->at_ms);
    else
        snprintf(buf, len, "pause-redis:%" PRId64, f->ms);
}

static void cont(dq_fault_ctx *c)
{
    if (c->server != NULL && c->server->pid > 0)
        kill(c->server->pid, SIGCONT);
}

static int pr_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    char arg[32];

    snprintf(arg, sizeof arg, "ms=%" PRId64, f->ms);
    kill(c->server->pid, SIGSTOP);
    *hold_ms = f->ms;
    return dq_fault_record(c, f, "begin", arg);
}

static int pr_end(dq_fault_ctx *c, const dq_fault *f)
{
    char arg[32];

    snprintf(arg, sizeof arg, "ms=%" PRId64, f->ms);
    cont(c);
    return dq_fault_record(c, f, "end", arg);
}

/* The consumers cannot finish against a stopped server: resume it before
 * they are joined, and close the window now. */
static int pr_cut(dq_fault_ctx *c, const dq_fault *f)
{
    cont(c);
    dq_fault_record(c, f, "end", "interrupted=1");
    return 1;
}

static void pr_finish(dq_fault_ctx *c, const dq_fault *f)
{
    (void)f;
    cont(c);
}

/* A claim whose reply is lost in the stall is gone for an at-most-once
 * strategy. */
static bool pr_loss_allowed(const char *arg, unsigned flags)
{
    (void)arg;
    return !(flags & DQ_G_SURVIVES_CONSUMER_CRASH);
}

static void pr_describe(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "the redis-server paused with SIGSTOP for %" PRId64
             " ms", f->ms);
}

const dq_fault_ops dq_fault_pause_redis = {
    .name = "pause-redis",
    .usage = "pause-redis:MS[:AT_MS]",
    .parse = pr_parse,
    .format = pr_format,
    .needs = DQ_FAULT_NEEDS_OWN_SERVER | DQ_FAULT_NEEDS_REDIS,
    .timing = DQ_FAULT_AT,
    .begin = pr_begin,
    .end = pr_end,
    .cut = pr_cut,
    .finish = pr_finish,
    .loss = DQ_LOSS_DUE,
    .explains = DQ_FAULT_REPEATS_ANY,
    .loss_allowed = pr_loss_allowed,
    .describe = pr_describe,
    .mechanism = "The server is stopped (SIGSTOP) and resumed: nothing is "
                 "lost inside Redis, but replies that time out on the client "
                 "side can make a claim vanish (at-most-once) or a task come "
                 "back; tasks falling due meanwhile are delivered late, in a "
                 "burst.",
};
