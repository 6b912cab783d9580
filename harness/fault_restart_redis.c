/* fault_restart_redis.c -- restart-redis:MODE[:AT_MS]: the harness-owned
 * redis-server crashes and starts again (faults.h).
 *
 * SIGKILL of the server's process group (the server and a snapshot or
 * AOF-rewrite child it forked, as a crash takes both), then a new
 * redis-server on the same port and directory (dq_redis_server_restart,
 * redis_server.h), with AOF off (MODE off: the data is gone; MODE rdb: what
 * the last snapshot held), appendfsync everysec or always; producers and
 * consumers reconnect with backoff.  Before the run the server is switched
 * to MODE at run time (https://redis.io/docs/management/persistence/):
 *   off       nothing;
 *   rdb       CONFIG SET save "1 1": a snapshot (BGSAVE: fork, write
 *             temp-<pid>.rdb, fsync, rename over dump.rdb) once more than
 *             a second passed since the last one and anything changed,
 *             which the restart loads, so a crash loses the writes since
 *             the last snapshot that completed began: about two seconds
 *             or more;
 *   everysec, always  CONFIG SET appendfsync/appendonly, and the AOF
 *             rewrite that starts is waited for, so the crash meets a
 *             complete AOF.
 * After the run persistence goes off again (rdb: save "", the last
 * snapshot waited for and dump.rdb removed), so the next trial on a
 * shared private server starts clean.  A SIGKILL leaves what was written
 * in the kernel's page cache, where the restart finds it: everysec loses
 * nothing here (os-crash drops what was not fsynced).
 * F records: begin and end "mode=MODE" around the crash and restart (the
 * end once the new server answers PING).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../strategies/rconn.h"
#include "faults.h"
#include "redis_server.h"

#define AOF_WAIT_US 10000000

static int rr_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    if (narg < 1 || narg > 2) {
        snprintf(err, errlen, "expected restart-redis:MODE[:AT_MS], MODE "
                 "off, rdb, everysec or always");
        return -1;
    }
    if (strcmp(arg[0], "off") != 0 && strcmp(arg[0], "rdb") != 0 &&
        strcmp(arg[0], "everysec") != 0 && strcmp(arg[0], "always") != 0) {
        snprintf(err, errlen, "MODE '%.30s': expected off, rdb, everysec or "
                 "always", arg[0]);
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

static void rr_format(const dq_fault *f, char *buf, size_t len)
{
    if (f->at_ms >= 0)
        snprintf(buf, len, "restart-redis:%s:%lld", f->word,
                 (long long)f->at_ms);
    else
        snprintf(buf, len, "restart-redis:%s", f->word);
}

static bool is_rdb(const char *mode) { return strcmp(mode, "rdb") == 0; }

/* appendonly for redis_server.h: "no" for off and rdb, else the fsync
 * mode. */
static const char *appendonly(const dq_fault *f)
{
    return strcmp(f->word, "off") == 0 || is_rdb(f->word) ? "no" : f->word;
}

static void rr_server_opts(const dq_fault *f, dq_redis_server_opts *o)
{
    o->appendonly = appendonly(f);
}

/* A command on the admin connection, tried twice: the first call after
 * the server restarted meets the dead connection (rconn.h reconnects on
 * the next one). */
static redisReply *admin_cmd(dq_fault_ctx *c, int argc, const char **argv)
{
    int rc;
    redisReply *r = dq_redis_cmd(c->admin, c->redis, &rc, argc, argv, NULL);

    if (r == NULL && rc == DQ_EIO)
        r = dq_redis_cmd(c->admin, c->redis, &rc, argc, argv, NULL);
    return r;
}

/* Waits until INFO persistence holds every one of want[0..n-1]: the AOF
 * rewrite that CONFIG SET appendonly yes started has finished, or the
 * last snapshot.  Returns 0 or -1 with c->err. */
static int persistence_wait(dq_fault_ctx *c, const char *const *want,
                            size_t n, const char *what)
{
    const char *info[2] = {"INFO", "persistence"};
    int64_t deadline = dq_mono_us() + AOF_WAIT_US;

    for (;;) {
        redisReply *r = admin_cmd(c, 2, info);
        bool done;
        if (r == NULL)
            return dq_fault_fail(c, "restart-redis: setting persistence: %s",
                                 c->admin->err);
        done = r->type == REDIS_REPLY_STRING;
        for (size_t i = 0; done && i < n; i++)
            done = strstr(r->str, want[i]) != NULL;
        freeReplyObject(r);
        if (done)
            return 0;
        if (dq_mono_us() > deadline)
            return dq_fault_fail(c, "restart-redis: %s did not finish "
                                 "within 10 s", what);
        dq_sleep_us(10000);
    }
}

static int aof_wait(dq_fault_ctx *c)
{
    static const char *const want[] = {"aof_enabled:1",
                                       "aof_rewrite_in_progress:0",
                                       "aof_rewrite_scheduled:0"};

    return persistence_wait(c, want, 3, "AOF rewrite");
}

/* Snapshots every second or so (on), or none (off: the last one waited
 * for and dump.rdb removed, so that a later restart of this server does
 * not load it). */
static int set_snapshots(dq_fault_ctx *c, bool on)
{
    static const char *const idle[] = {"rdb_bgsave_in_progress:0"};
    const char *a[4] = {"CONFIG", "SET", "save", on ? "1 1" : ""};
    redisReply *r = admin_cmd(c, 4, a);
    char path[300];

    if (r == NULL)
        return dq_fault_fail(c, "restart-redis: setting persistence: %s",
                             c->admin->err);
    freeReplyObject(r);
    if (on)
        return 0;
    if (persistence_wait(c, idle, 1, "the last snapshot") != 0)
        return -1;
    if (c->server != NULL) {
        snprintf(path, sizeof path, "%s/dump.rdb", c->server->dir);
        unlink(path);
    }
    return 0;
}

/* Turns AOF on with appendfsync mode, snapshots on (rdb), or both off
 * ("off"), at run time. */
static int set_persistence(dq_fault_ctx *c, const char *mode)
{
    bool on = strcmp(mode, "off") != 0 && !is_rdb(mode);
    const char *a1[4] = {"CONFIG", "SET", "appendonly", on ? "yes" : "no"};
    const char *a2[4] = {"CONFIG", "SET", "appendfsync",
                         on ? mode : "everysec"};
    redisReply *r;

    if (is_rdb(mode))
        return set_snapshots(c, true);
    if (on) {
        if ((r = admin_cmd(c, 4, a2)) == NULL)
            goto fail;
        freeReplyObject(r);
    }
    if ((r = admin_cmd(c, 4, a1)) == NULL)
        goto fail;
    freeReplyObject(r);
    return on ? aof_wait(c) : 0;
fail:
    return dq_fault_fail(c, "restart-redis: setting persistence: %s",
                         c->admin->err);
}

static int rr_prepare(dq_fault_ctx *c, const dq_fault *f)
{
    return set_persistence(c, f->word);
}

static int rr_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    char arg[32], err[300];

    *hold_ms = 0;
    snprintf(arg, sizeof arg, "mode=%s", f->word);
    if (dq_fault_record(c, f, "begin", arg) != 0)
        return -1;
    /* Its snapshot or rewrite child dies with it (its own group:
     * redis_server.h); the restart then kills and reaps the server. */
    if (c->server->pid > 0)
        kill(-c->server->pid, SIGKILL);
    if (dq_redis_server_restart(c->server, appendonly(f), err,
                                sizeof err) != 0)
        return dq_fault_fail(c, "%s", err);
    c->restarts++;
    return dq_fault_record(c, f, "end", arg);
}

static void rr_finish(dq_fault_ctx *c, const dq_fault *f)
{
    if (c->redis != NULL && is_rdb(f->word))
        set_snapshots(c, false); /* best effort */
    else if (c->redis != NULL && strcmp(f->word, "off") != 0)
        set_persistence(c, "off"); /* best effort */
}

/* Lost under a restart: allowed unless the strategy keeps every task
 * through a crash (both survives flags) and the AOF fsyncs every write. */
static bool rr_loss_allowed(const char *arg, unsigned flags)
{
    return strstr(arg, "always") == NULL || !dq_fault_keeps_all(flags);
}

/* How far before the kill the writes it drops reach, by the mode in the
 * begin arg ("mode=MODE"; https://redis.io/docs/management/persistence/):
 * off drops everything, rdb everything since the last snapshot that
 * completed began (save "1 1": a second or two, more while a snapshot is
 * slow), so both reach back to the start; always writes and fsyncs the
 * AOF before the replies go out, so only the write in progress at the
 * kill can go (the span starts at the begin record, right before it);
 * everysec leaves what it wrote in the page cache, which a killed process
 * does not lose, but src/aof.c (flushAppendOnlyFile) may postpone that
 * write while a background fsync runs, "but we can't wait over two
 * seconds", and the replies go out meanwhile: up to about 2 s of
 * acknowledged writes can die with the process.  A claim done in that
 * span and dropped brings its task back after the restart, however late
 * it is delivered again. */
static int64_t rr_rollback_ms(const char *arg)
{
    if (strstr(arg, "always") != NULL)
        return 0;
    if (strstr(arg, "everysec") != NULL)
        return 2000;
    return DQ_FAULT_ROLLBACK_ALL;
}

static void rr_describe(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "the redis-server killed and restarted with %s",
             strcmp(f->word, "off") == 0        ? "no persistence"
             : is_rdb(f->word)                  ? "RDB snapshots"
             : strcmp(f->word, "everysec") == 0 ? "AOF everysec"
                                                : "AOF always");
}

static dq_fault_class rr_report_class(const dq_fault *f)
{
    (void)f;
    return DQ_FAULT_CLASS_SERVER_CRASH;
}

const dq_fault_ops dq_fault_restart_redis = {
    .name = "restart-redis",
    .usage = "restart-redis:off|rdb|everysec|always[:AT_MS]",
    .parse = rr_parse,
    .format = rr_format,
    .needs = DQ_FAULT_NEEDS_OWN_SERVER | DQ_FAULT_NEEDS_REDIS |
             DQ_FAULT_ONE_PER_TRIAL,
    .server_opts = rr_server_opts,
    .timing = DQ_FAULT_AT,
    .prepare = rr_prepare,
    .begin = rr_begin,
    .finish = rr_finish,
    /* A task enqueued before the window ended may have been wiped; a
     * claim whose reply was lost may come back as a repeat, and so may
     * one whose write the restart dropped (rr_rollback_ms). */
    .loss = DQ_LOSS_ENQUEUED,
    .explains = DQ_FAULT_REPEATS_ANY,
    .loss_allowed = rr_loss_allowed,
    .rollback_ms = rr_rollback_ms,
    .describe = rr_describe,
    .mechanism = "The redis-server is killed and started again on the same "
                 "directory.  Without persistence everything pending is "
                 "gone; with RDB snapshots (save 1 1) what was written since "
                 "the last snapshot began is gone, a second or two and more; "
                 "with AOF everysec up to about a second of acknowledged "
                 "writes can be lost to a host crash (enqueues, and claims "
                 "that come back as repeats), though a killed process alone "
                 "leaves them in the page cache; with AOF always every "
                 "acknowledged write is on disk before the reply.",
    .report_class = rr_report_class,
};
