/* fault_os_crash.c -- os-crash:MODE[:AT_MS]: a host crash (power loss,
 * kernel panic) of a redis-server of the trial's own, with AOF
 * appendfsync MODE, everysec or always (faults.h, oscrash.h).
 *
 * Why a server of its own: what survives a host crash is what the AOF
 * made durable, which only a server started with the AOF shim preloaded
 * (harness/aofshim.c) records, and a preload cannot be added to a running
 * server.  So the row's servers hook starts one per trial
 * (dq_oscrash_server_start: AOF on in MODE from the first write, the shim
 * preloaded), every client of the trial goes there, and finish stops it;
 * the caller's private server stays idle.  A SIGKILL alone
 * (restart-redis) leaves the AOF in the kernel's page cache, so everysec
 * loses nothing there and cannot be told from always.
 *
 * At its time the fault runs dq_oscrash_crash: SIGKILL of the server's
 * process group, every AOF byte and directory entry not yet fsynced
 * dropped, restart on the same port and directory from what is left;
 * producers and consumers reconnect with backoff and retry.  What Redis
 * promises (https://redis.io/docs/management/persistence/, "How durable
 * is the append only file?"): with always the AOF is fsynced before the
 * replies of an event-loop iteration go out, so nothing acknowledged is
 * lost; with everysec the fsync runs in the background once a second and
 * a crash loses the writes of the last one to two seconds.
 * F records: begin "mode=MODE" right before the kill, end
 * "mode=MODE,dropped_bytes=N" once the restarted server answers PING.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "oscrash.h"
#include "redis_server.h"
#include "trial.h"

/* The row its parse error points to for a crash without persistence. */
extern const dq_fault_ops dq_fault_restart_redis;

static int oc_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    if (narg < 1 || narg > 2) {
        snprintf(err, errlen, "expected os-crash:MODE[:AT_MS], MODE "
                 "everysec or always");
        return -1;
    }
    if (strcmp(arg[0], "everysec") != 0 && strcmp(arg[0], "always") != 0) {
        snprintf(err, errlen, "MODE '%.30s': expected everysec or always "
                 "(AOF appendfsync; %s:off is a crash without "
                 "persistence)", arg[0], dq_fault_restart_redis.name);
        return -1;
    }
    snprintf(f->word, sizeof f->word, "%s", arg[0]);
    if (narg == 2 &&
        dq_fault_num(arg[1], 0, DQ_FAULT_MAX_MS, false, &f->at_ms) != 0) {
        snprintf(err, errlen, "AT_MS '%.30s': expected an integer in [0, "
                 "%lld]", arg[1], (long long)DQ_FAULT_MAX_MS);
        return -1;
    }
    return 0;
}

static void oc_format(const dq_fault *f, char *buf, size_t len)
{
    if (f->at_ms >= 0)
        snprintf(buf, len, "os-crash:%s:%lld", f->word, (long long)f->at_ms);
    else
        snprintf(buf, len, "os-crash:%s", f->word);
}

/* The trial's server: AOF in MODE, the shim preloaded. */
static int oc_servers(dq_fault_ctx *c, const dq_fault *f)
{
    dq_redis_server *s = calloc(1, sizeof *s);
    char err[300];

    if (s == NULL)
        return dq_fault_fail(c, "os-crash: out of memory");
    if (dq_oscrash_server_start(s, f->word, err, sizeof err) != 0) {
        free(s);
        return dq_fault_fail(c, "os-crash: %s", err);
    }
    c->state[c->index] = s;
    c->server = s;
    c->target.port = s->port;
    return 0;
}

static int oc_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    dq_redis_server *s = c->state[c->index];
    dq_oscrash_stats st;
    char arg[96], err[300];

    *hold_ms = 0;
    snprintf(arg, sizeof arg, "mode=%s", f->word);
    if (dq_fault_record(c, f, "begin", arg) != 0)
        return -1;
    if (dq_oscrash_crash(s, f->word, &st, err, sizeof err) != 0)
        return dq_fault_fail(c, "os-crash: %s", err);
    c->restarts++;
    snprintf(arg, sizeof arg, "mode=%s,dropped_bytes=%" PRId64, f->word,
             st.bytes_dropped);
    return dq_fault_record(c, f, "end", arg);
}

static void oc_finish(dq_fault_ctx *c, const dq_fault *f)
{
    dq_redis_server *s = c->state[c->index];

    (void)f;
    if (s == NULL)
        return;
    if (c->server == s)
        c->server = c->p->server;
    dq_redis_server_stop(s);
    free(s);
    c->state[c->index] = NULL;
}

/* Lost in a host crash: allowed unless the strategy keeps every task
 * through a crash (both survives flags) and the AOF fsyncs every write
 * before its reply. */
static bool oc_loss_allowed(const char *arg, unsigned flags)
{
    return strstr(arg, "always") == NULL || !dq_fault_keeps_all(flags);
}

/* How far before the crash the writes it drops reach, by the AOF mode in
 * the begin arg ("mode=MODE").  Redis's persistence page
 * (https://redis.io/docs/management/persistence/): with appendfsync
 * always the AOF is fsynced before the replies go out, so what a client
 * saw done before the kill survives and only the write in progress at
 * the kill can go: the span starts at the begin record, written right
 * before the kill; with everysec "you may lose 1 second of data", and
 * src/aof.c (flushAppendOnlyFile) postpones the write while the
 * background fsync runs, "but we can't wait over two seconds", so the
 * dropped tail reaches at most about 2 s back (tests/test_oscrash.c
 * checks that bound).  A claim done in that span and dropped brings its task
 * back after the restart: a repeat whenever it is delivered again. */
static int64_t oc_rollback_ms(const char *arg)
{
    return strstr(arg, "always") != NULL ? 0 : 2000;
}

static void oc_describe(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "a host crash of the redis-server with AOF %s (what "
             "was not fsynced is lost)", f->word);
}

static dq_fault_class oc_report_class(const dq_fault *f)
{
    (void)f;
    return DQ_FAULT_CLASS_HOST_CRASH;
}

const dq_fault_ops dq_fault_os_crash = {
    .name = "os-crash",
    .usage = "os-crash:everysec|always[:AT_MS]",
    .help = "a host crash: the un-fsynced AOF tail is lost\n"
            "(a server of the trial's own, AOF shim preloaded)",
    .parse = oc_parse,
    .format = oc_format,
    .needs = DQ_FAULT_NEEDS_OWN_SERVER | DQ_FAULT_NEEDS_REDIS |
             DQ_FAULT_ONE_PER_TRIAL,
    .servers = oc_servers,
    .timing = DQ_FAULT_AT,
    .begin = oc_begin,
    .finish = oc_finish,
    /* What was acknowledged before the crash and not yet fsynced is gone;
     * a claim whose write was lost comes back as a repeat, after the
     * window's end as often as inside it (oc_rollback_ms). */
    .loss = DQ_LOSS_ENQUEUED,
    .explains = DQ_FAULT_REPEATS_ANY,
    .loss_allowed = oc_loss_allowed,
    .rollback_ms = oc_rollback_ms,
    .describe = oc_describe,
    .mechanism = "The host dies: redis-server is killed and every AOF byte "
                 "it had written but not yet fsynced is discarded, as a "
                 "power loss discards the page cache.  With appendfsync "
                 "always Redis fsyncs the AOF before it sends the replies, "
                 "so no acknowledged write is lost (a claim whose reply "
                 "never arrived can still vanish for an at-most-once "
                 "strategy); with everysec the fsync runs once a second in "
                 "the background, so the acknowledged writes of the last "
                 "one to two seconds are lost: enqueues, and claims, which "
                 "come back as repeats.",
    .report_class = oc_report_class,
};
