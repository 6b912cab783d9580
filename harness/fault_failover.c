/* fault_failover.c -- failover[:AT_MS]: the primary dies and Sentinel
 * promotes its replica (faults.h, replset.h).
 *
 * A trial with this fault runs on servers of its own: the row's servers
 * hook starts a private primary, a replica of it and one Redis Sentinel
 * (dq_replset_start), and the trial points every client -- the admin
 * connection, producers, consumers, consumer processes -- at Sentinel
 * (dq_config.sentinels and .sentinel_master), so each connect and each
 * reconnect after a failure asks Sentinel for the current primary
 * (rconn.h); the caller's private server stays idle, and finish stops the
 * three servers on every path.
 *
 * At its time the fault SIGKILLs the primary and waits until Sentinel has
 * promoted the replica (dq_replset_failover: about down-after-milliseconds,
 * 1 s, plus the election), then starts a new replica of the new primary
 * and waits until it is in sync (dq_replset_rejoin): until then the new
 * primary has no replica, so every write of a strategy with wait=1 fails
 * (DQ_EREPLICA) and is retried.  Meanwhile producers and consumers see
 * their connections reset, retry with backoff and reach the new primary.
 * Replication is asynchronous (https://redis.io/docs/management/
 * replication/): what the primary acknowledged and had not yet sent to its
 * replica is lost, enqueues and claims alike, and a claim lost that way
 * comes back as a duplicate; option wait=N (dq.h) makes every enqueue,
 * claim and ack wait for N replicas (WAIT), so with one replica nothing
 * acknowledged is lost (https://redis.io/commands/wait/).
 * F records: begin "wait=N" (the strategy's option, 0 when not given)
 * right before the kill; end "promotion_ms=N,rejoin_ms=M" once the new
 * replica is in sync.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../strategies/dq.h"
#include "faults.h"
#include "replset.h"
#include "trial.h"

/* How long the fault waits for Sentinel to promote the replica. */
#define PROMOTE_TIMEOUT_MS 30000

static int fo_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    if (narg > 1) {
        snprintf(err, errlen, "expected failover[:AT_MS]");
        return -1;
    }
    if (narg == 1 &&
        dq_fault_num(arg[0], 0, DQ_FAULT_MAX_MS, false, &f->at_ms) != 0) {
        snprintf(err, errlen, "AT_MS '%.30s': expected an integer in [0, "
                 "%lld]", arg[0], (long long)DQ_FAULT_MAX_MS);
        return -1;
    }
    return 0;
}

static void fo_format(const dq_fault *f, char *buf, size_t len)
{
    if (f->at_ms >= 0)
        snprintf(buf, len, "failover:%lld", (long long)f->at_ms);
    else
        snprintf(buf, len, "failover");
}

/* Primary, replica and Sentinel for this trial. */
static int fo_servers(dq_fault_ctx *c, const dq_fault *f)
{
    dq_replset *rs = calloc(1, sizeof *rs);
    char err[300];

    (void)f;
    if (rs == NULL)
        return dq_fault_fail(c, "failover: out of memory");
    if (dq_replset_start(rs, NULL, err, sizeof err) != 0) {
        free(rs);
        return dq_fault_fail(c, "failover: %s", err);
    }
    c->state[c->index] = rs;
    c->server = &rs->primary; /* the current primary, also after it */
    c->target.port = rs->primary.port;
    snprintf(c->target.sentinels, sizeof c->target.sentinels, "%s",
             rs->sentinels);
    snprintf(c->target.master, sizeof c->target.master, "%s",
             DQ_REPLSET_MASTER);
    return 0;
}

/* The trial's option wait (given, else 0: dq_redis_options' default). */
static long long wait_opt(const dq_trial_params *p)
{
    for (size_t i = 0; i < p->nopts; i++)
        if (strcmp(p->opts[i].key, "wait") == 0)
            return strtoll(p->opts[i].val, NULL, 10);
    return 0;
}

static int fo_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    dq_replset *rs = c->state[c->index];
    dq_failover_times ft;
    char arg[96], err[300];
    int64_t joined_us;

    *hold_ms = 0;
    snprintf(arg, sizeof arg, "wait=%lld", wait_opt(c->p));
    if (dq_fault_record(c, f, "begin", arg) != 0)
        return -1;
    if (dq_replset_failover(rs, PROMOTE_TIMEOUT_MS, &ft, err,
                            sizeof err) != 0)
        return dq_fault_fail(c, "failover: %s", err);
    if (dq_replset_rejoin(rs, err, sizeof err) != 0)
        return dq_fault_fail(c, "failover: rejoin: %s", err);
    joined_us = dq_mono_us();
    snprintf(arg, sizeof arg, "promotion_ms=%" PRId64 ",rejoin_ms=%" PRId64,
             ft.promotion_ms, (joined_us - ft.promoted_us) / 1000);
    return dq_fault_record(c, f, "end", arg);
}

static void fo_finish(dq_fault_ctx *c, const dq_fault *f)
{
    dq_replset *rs = c->state[c->index];

    (void)f;
    if (rs == NULL)
        return;
    if (c->server == &rs->primary)
        c->server = c->p->server;
    dq_replset_stop(rs);
    free(rs);
    c->state[c->index] = NULL;
}

/* Lost in a failover: allowed unless every acknowledged write waited for
 * the replica (wait >= 1) and the strategy keeps every task through a
 * crash (both survives flags: a claim whose confirmation failed comes
 * back after its lease).  An at-most-once strategy may lose a claim the
 * replica had taken while its reply or its WAIT failed. */
static bool fo_loss_allowed(const char *arg, unsigned flags)
{
    unsigned both = DQ_G_SURVIVES_CONSUMER_CRASH | DQ_G_SURVIVES_PROCESS_EXIT;
    const char *w = strstr(arg, "wait=");

    return w == NULL || strtoll(w + 5, NULL, 10) < 1 ||
           (flags & both) != both;
}

static void fo_describe(const dq_fault *f, char *buf, size_t len)
{
    (void)f;
    snprintf(buf, len, "a failover: the primary killed, Sentinel promotes "
             "its replica");
}

const dq_fault_ops dq_fault_failover = {
    .name = "failover",
    .usage = "failover[:AT_MS]",
    .help = "SIGKILL the primary of a primary + replica +\n"
            "Sentinel of the trial's own; Sentinel promotes\n"
            "the replica, a new replica joins (--opt wait=1:\n"
            "writes wait for it)",
    .parse = fo_parse,
    .format = fo_format,
    .needs = DQ_FAULT_NEEDS_OWN_SERVER | DQ_FAULT_NEEDS_REDIS |
             DQ_FAULT_ONE_PER_TRIAL | DQ_FAULT_GIVES_REPLICAS,
    .servers = fo_servers,
    .timing = DQ_FAULT_AT,
    .begin = fo_begin,
    .finish = fo_finish,
    /* What the old primary acknowledged and its replica never got is
     * gone; a claim lost that way comes back as a duplicate. */
    .loss = DQ_LOSS_ENQUEUED,
    .explains = DQ_FAULT_REPEATS_ANY,
    .loss_allowed = fo_loss_allowed,
    .describe = fo_describe,
    .mechanism = "The primary is killed and Sentinel promotes its replica; "
                 "clients ask Sentinel for the new primary and reconnect.  "
                 "Replication is asynchronous: a write is acknowledged "
                 "before the replica has it, so whatever had not reached "
                 "the replica is lost -- enqueues, and claims, whose tasks "
                 "then come back as duplicates.  With wait=1 every write "
                 "returns only once the replica acknowledged it (WAIT), so "
                 "nothing acknowledged is lost; the price is a round trip "
                 "per write, and no write succeeds while the new primary "
                 "has no replica.",
};
