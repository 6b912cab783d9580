/* fault_failover.c -- failover[:lag=MS][:AT_MS]: the primary dies and
 * Sentinel promotes its replica, which may be lagging behind (faults.h,
 * replset.h).
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
 *
 * On one machine the replica is never far behind, so a plain failover
 * loses next to nothing even with wait=0.  lag=MS makes the replica lag
 * as a busy or distant one does: at its time the fault makes the replica
 * stop applying the primary's stream (dq_replset_lag_start: CLIENT PAUSE
 * WRITE on the replica; replset.h says why not SIGSTOP), keeps it so for
 * MS while the trial's writes go on, then kills the primary with the
 * replica still behind; the replica drops what it had not applied, the
 * pause ends and Sentinel promotes it.  With wait=0 every write the
 * primary acknowledged during those MS is lost (unless its task was
 * delivered before the kill); with wait=1 none was acknowledged: its WAIT
 * timed out (wait_timeout_ms), the enqueue returned DQ_EREPLICA, and the
 * producer logs no E record for it and retries it after the failover.
 *
 * F records: begin "wait=N,lag_ms=MS" (the strategy's option, 0 when not
 * given; MS 0 without a lag) right before the pause, or before the kill
 * without one; end "behind_bytes=B,lagged_ms=L,promotion_ms=N,rejoin_ms=M"
 * once the new replica is in sync: B how far the replica was behind right
 * before the kill (replication offsets, -1 unread), L how long it had
 * been lagging then (0 without a lag).  A trial that ends during the lag
 * ends the pause and writes the end "interrupted=1" (no kill).
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

/* A part "lag=MS" into f->ms; -1 with err when it is not one. */
static int parse_lag(dq_fault *f, const char *arg, char *err, size_t errlen)
{
    if (f->ms > 0) {
        snprintf(err, errlen, "lag given twice");
        return -1;
    }
    if (dq_fault_num(arg + 4, 1, DQ_FAULT_MAX_MS, false, &f->ms) != 0) {
        snprintf(err, errlen, "lag '%.30s': expected an integer in [1, "
                 "%lld] (ms)", arg + 4, (long long)DQ_FAULT_MAX_MS);
        return -1;
    }
    return 0;
}

/* failover, failover:AT_MS, failover:lag=MS, failover:lag=MS:AT_MS (the
 * two parts in either order). */
static int fo_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    if (narg > 2) {
        snprintf(err, errlen, "expected failover[:lag=MS][:AT_MS]");
        return -1;
    }
    for (int i = 0; i < narg; i++) {
        if (strncmp(arg[i], "lag=", 4) == 0) {
            if (parse_lag(f, arg[i], err, errlen) != 0)
                return -1;
        } else if (f->at_ms >= 0) {
            snprintf(err, errlen, "AT_MS given twice (expected failover"
                     "[:lag=MS][:AT_MS])");
            return -1;
        } else if (dq_fault_num(arg[i], 0, DQ_FAULT_MAX_MS, false,
                                &f->at_ms) != 0) {
            snprintf(err, errlen, "AT_MS '%.30s': expected an integer in "
                     "[0, %lld] (or lag=MS)", arg[i],
                     (long long)DQ_FAULT_MAX_MS);
            return -1;
        }
    }
    return 0;
}

/* The canonical spec: the lag first, AT_MS last as in every row. */
static void fo_format(const dq_fault *f, char *buf, size_t len)
{
    char lag[40] = "", at[24] = "";

    if (f->ms > 0)
        snprintf(lag, sizeof lag, ":lag=%lld", (long long)f->ms);
    if (f->at_ms >= 0)
        snprintf(at, sizeof at, ":%lld", (long long)f->at_ms);
    snprintf(buf, len, "failover%s%s", lag, at);
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

/* Kills the primary (the replica still lagging, when it was), waits for
 * the promotion and the new replica, and closes the window. */
static int fail_over(dq_fault_ctx *c, const dq_fault *f)
{
    dq_replset *rs = c->state[c->index];
    dq_failover_times ft;
    char arg[128], err[300];
    int64_t joined_us;

    if (dq_replset_failover(rs, PROMOTE_TIMEOUT_MS, &ft, err,
                            sizeof err) != 0)
        return dq_fault_fail(c, "failover: %s", err);
    if (dq_replset_rejoin(rs, err, sizeof err) != 0)
        return dq_fault_fail(c, "failover: rejoin: %s", err);
    joined_us = dq_mono_us();
    snprintf(arg, sizeof arg, "behind_bytes=%" PRId64 ",lagged_ms=%" PRId64
             ",promotion_ms=%" PRId64 ",rejoin_ms=%" PRId64, ft.behind_bytes,
             ft.lagged_ms, ft.promotion_ms,
             (joined_us - ft.promoted_us) / 1000);
    return dq_fault_record(c, f, "end", arg);
}

/* Without a lag: the whole failover, window closed (hold 0).  With one:
 * the replica stops applying, the window stays open for the lag, and end
 * fails over. */
static int fo_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    dq_replset *rs = c->state[c->index];
    char arg[64], err[300];

    *hold_ms = 0;
    snprintf(arg, sizeof arg, "wait=%lld,lag_ms=%lld", wait_opt(c->p),
             (long long)f->ms);
    if (dq_fault_record(c, f, "begin", arg) != 0)
        return -1;
    if (f->ms == 0)
        return fail_over(c, f);
    /* The pause outlives the hold by the promotion's timeout: it ends by
     * itself only if the kill never comes. */
    if (dq_replset_lag_start(rs, f->ms + PROMOTE_TIMEOUT_MS, err,
                             sizeof err) != 0)
        return dq_fault_fail(c, "failover: lag: %s", err);
    *hold_ms = f->ms;
    return 0;
}

/* The hold counts from before begin, the lag from the pause: the kill
 * waits until the replica has lagged the whole MS (1: call again). */
static int fo_end(dq_fault_ctx *c, const dq_fault *f)
{
    const dq_replset *rs = c->state[c->index];

    if (dq_mono_us() < rs->lag_since_us + f->ms * 1000)
        return 1;
    return fail_over(c, f);
}

/* The trial ends during the lag: the replica catches up, no kill. */
static int fo_cut(dq_fault_ctx *c, const dq_fault *f)
{
    dq_replset *rs = c->state[c->index];
    char err[300];

    if (rs != NULL)
        (void)dq_replset_lag_stop(rs, err, sizeof err);
    dq_fault_record(c, f, "end", "interrupted=1");
    return 1;
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
    const char *w = strstr(arg, "wait=");

    return w == NULL || strtoll(w + 5, NULL, 10) < 1 ||
           !dq_fault_keeps_all(flags);
}

/* How far before the window's begin the writes the promotion drops reach:
 * none before it.  What is lost is what the replica had not applied when
 * the primary died (https://redis.io/docs/management/replication/:
 * replication is asynchronous): with a lag every write from the begin
 * record (written right before the pause) through the kill, without one
 * the few in flight at the kill (right after the begin record, or right
 * before it: a repeat of those straddles the begin, which explains it
 * anyway, checker.h).  A claim done in the window and lost that way
 * brings its task back on the new primary, however late it is delivered
 * again. */
static int64_t fo_rollback_ms(const char *arg)
{
    (void)arg;
    return 0;
}

static void fo_describe(const dq_fault *f, char *buf, size_t len)
{
    if (f->ms > 0)
        snprintf(buf, len, "a failover to a lagging replica: the primary "
                 "killed after its replica had applied none of its last "
                 "%lld ms of writes, Sentinel promotes the replica",
                 (long long)f->ms);
    else
        snprintf(buf, len, "a failover: the primary killed, Sentinel "
                 "promotes its replica");
}

const dq_fault_ops dq_fault_failover = {
    .name = "failover",
    .usage = "failover[:lag=MS][:AT_MS]",
    .help = "SIGKILL the primary of a primary + replica +\n"
            "Sentinel of the trial's own; Sentinel promotes\n"
            "the replica, a new replica joins (--opt wait=1:\n"
            "writes wait for it); lag=MS: the replica applies\n"
            "nothing for MS before the kill (CLIENT PAUSE)",
    .parse = fo_parse,
    .format = fo_format,
    .needs = DQ_FAULT_NEEDS_OWN_SERVER | DQ_FAULT_NEEDS_REDIS |
             DQ_FAULT_ONE_PER_TRIAL | DQ_FAULT_GIVES_REPLICAS,
    .servers = fo_servers,
    .timing = DQ_FAULT_AT,
    .begin = fo_begin,
    .end = fo_end,
    .cut = fo_cut,
    .finish = fo_finish,
    /* What the old primary acknowledged and its replica never got is
     * gone; a claim lost that way comes back as a duplicate. */
    .loss = DQ_LOSS_ENQUEUED,
    .explains = DQ_FAULT_REPEATS_ANY,
    .loss_allowed = fo_loss_allowed,
    .rollback_ms = fo_rollback_ms,
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
                 "has no replica.  On one machine the replica is hardly "
                 "ever behind, so a plain failover loses next to nothing; "
                 "with a lag the replica, busy as a loaded or distant one "
                 "is, applies nothing of the primary's stream for a while "
                 "before the kill (it still reads it and answers "
                 "Sentinel), and drops what it had not applied when the "
                 "primary dies: without WAIT every enqueue acknowledged "
                 "meanwhile and not yet delivered is lost, with WAIT each of them timed out, was "
                 "not acknowledged, and was retried after the failover.",
};
