/* replset.c -- private primary + replica + Sentinel, and the failover
 * fault (replset.h).
 *
 * Each server is a dq_redis_server (redis_server.h), so starting,
 * stopping, the owner records of the directories and the forced-exit
 * tables are the ones every private server has; this file adds the
 * command-line arguments (replicaof, diskless sync), the Sentinel config
 * file and the waits:
 *   - the primary replicates diskless without delay (repl-diskless-sync
 *     yes, repl-diskless-sync-delay 0; Redis 7.0 waits 5 s by default for
 *     more replicas before a full sync) and without persistence;
 *   - "in sync" is read from INFO replication on both sides: the
 *     replica's master_link_status:up and the primary's slave0 line with
 *     state=online (https://redis.io/commands/info/);
 *   - Sentinel is started only then: it learns the replicas from the
 *     primary's INFO, which it sends at once on connecting and then every
 *     10 s, so a replica that connects after its first INFO would stay
 *     unknown for up to 10 s;
 *   - "Sentinel sees both": SENTINEL master and SENTINEL replicas, whose
 *     replies are flat name/value arrays
 *     (https://redis.io/docs/management/sentinel/, "Sentinel API").
 * The failover is detected the way a client would see it: Sentinel's
 * get-master-addr-by-name names the replica (it does so once it saw the
 * replica report role master, Redis 7.0 sentinelGetCurrentMasterAddress),
 * and the replica answers ROLE with "master".
 * Replica lag is CLIENT PAUSE WRITE on the replica (replset.h says why
 * not SIGSTOP); "behind" is read from INFO replication, the primary's
 * master_repl_offset against the replica's slave_repl_offset.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../strategies/dq.h"
#include "../strategies/rconn.h"
#include "replset.h"
#include "spawn.h"

#define PROBE_TIMEOUT_MS 1000

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A connection to 127.0.0.1:port with connect and reply timeouts of
 * PROBE_TIMEOUT_MS, or NULL. */
static redisContext *probe_conn(int port)
{
    struct timeval tv = {PROBE_TIMEOUT_MS / 1000,
                         (PROBE_TIMEOUT_MS % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);

    if (c != NULL && (c->err || redisSetTimeout(c, tv) != REDIS_OK)) {
        redisFree(c);
        c = NULL;
    }
    return c;
}

/* One command on a fresh probe connection; the reply (caller frees) or
 * NULL when the server did not answer. */
static redisReply *probe(int port, int argc, const char **argv)
{
    redisContext *c = probe_conn(port);
    redisReply *r;

    if (c == NULL)
        return NULL;
    r = redisCommandArgv(c, argc, argv, NULL);
    redisFree(c);
    return r;
}

/* True when the INFO replication text of the server on port holds every
 * one of the NULL-terminated substrings want. */
static bool info_has(int port, const char *const *want)
{
    const char *argv[2] = {"INFO", "replication"};
    redisReply *r = probe(port, 2, argv);
    bool ok = r != NULL && r->type == REDIS_REPLY_STRING;

    for (size_t i = 0; ok && want[i] != NULL; i++)
        ok = strstr(r->str, want[i]) != NULL;
    if (r != NULL)
        freeReplyObject(r);
    return ok;
}

/* The integer field `name` ("master_repl_offset") of the INFO
 * replication text of the server on port, or -1. */
static int64_t info_int(int port, const char *name)
{
    const char *argv[2] = {"INFO", "replication"};
    redisReply *r = probe(port, 2, argv);
    size_t n = strlen(name);
    int64_t v = -1;

    for (const char *line = r != NULL && r->type == REDIS_REPLY_STRING
                                ? r->str : NULL;
         line != NULL && *line != '\0'; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        if (strncmp(line, name, n) == 0 && line[n] == ':') {
            v = strtoll(line + n + 1, NULL, 10);
            break;
        }
    }
    if (r != NULL)
        freeReplyObject(r);
    return v;
}

/* The value of field `name` in a flat name/value array reply, or "". */
static const char *kv(const redisReply *r, const char *name)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY)
        return "";
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        if (r->element[i]->type == REDIS_REPLY_STRING &&
            r->element[i + 1]->type == REDIS_REPLY_STRING &&
            strcmp(r->element[i]->str, name) == 0)
            return r->element[i + 1]->str;
    return "";
}

/* True when Sentinel reports the primary healthy ("master" and nothing
 * else in its flags) and the replica on replica_port with flags "slave"
 * and master-link-status "ok". */
static bool sentinel_sees_both(const dq_replset *rs)
{
    const char *m[3] = {"SENTINEL", "master", DQ_REPLSET_MASTER};
    const char *s[3] = {"SENTINEL", "replicas", DQ_REPLSET_MASTER};
    redisReply *rm = probe(rs->sentinel.port, 3, m), *rr;
    bool ok = strcmp(kv(rm, "flags"), "master") == 0;
    char port[16];

    if (rm != NULL)
        freeReplyObject(rm);
    if (!ok)
        return false;
    rr = probe(rs->sentinel.port, 3, s);
    ok = false;
    snprintf(port, sizeof port, "%d", rs->replica.port);
    for (size_t i = 0; rr != NULL && rr->type == REDIS_REPLY_ARRAY &&
                       i < rr->elements; i++) {
        const redisReply *e = rr->element[i];

        if (strcmp(kv(e, "port"), port) == 0 &&
            strcmp(kv(e, "flags"), "slave") == 0 &&
            strcmp(kv(e, "master-link-status"), "ok") == 0)
            ok = true;
    }
    if (rr != NULL)
        freeReplyObject(rr);
    return ok;
}

/* Waits until ready(rs) or DQ_REPLSET_READY_TIMEOUT_MS.  0 or -1. */
static int wait_until(const dq_replset *rs, bool (*ready)(const dq_replset *))
{
    int64_t deadline = dq_mono_us() + DQ_REPLSET_READY_TIMEOUT_MS * 1000LL;

    while (!ready(rs)) {
        if (dq_mono_us() > deadline)
            return -1;
        sleep_ms(10);
    }
    return 0;
}

/* True when WAIT counts the replica: a PUBLISH on the primary (replicated
 * like a write, so it gives the probe connection an offset to wait for,
 * and it touches no key) is acknowledged by it within 100 ms.  INFO calls
 * a replica "online" at the end of its full sync, but the primary sends it
 * the replication stream only after its first REPLCONF ACK (Redis 7.0,
 * client field repl_start_cmd_stream_on_ack, "install slave write handler
 * on first ACK"), which came up to about a second later here: until then
 * WAIT 1 times out and a client's wait=1 write would fail. */
static bool replica_acked(const dq_replset *rs)
{
    const char *pub[3] = {"PUBLISH", "dqlab:replset:probe", "1"};
    const char *wait[3] = {"WAIT", "1", "100"};
    redisContext *c = probe_conn(rs->primary.port);
    redisReply *r;
    bool ok = false;

    if (c == NULL)
        return false;
    r = redisCommandArgv(c, 3, pub, NULL);
    if (r != NULL && r->type == REDIS_REPLY_INTEGER) {
        freeReplyObject(r);
        r = redisCommandArgv(c, 3, wait, NULL);
        ok = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= 1;
    }
    if (r != NULL)
        freeReplyObject(r);
    redisFree(c);
    return ok;
}

static bool replica_in_sync(const dq_replset *rs)
{
    static const char *const on_replica[] = {"role:slave",
                                             "master_link_status:up", NULL};
    static const char *const on_primary[] = {"role:master", "slave0:",
                                             "state=online", NULL};

    return info_has(rs->replica.port, on_replica) &&
           info_has(rs->primary.port, on_primary) && replica_acked(rs);
}

static int start_sentinel(dq_replset *rs, const dq_replset_opts *o,
                          char *err, size_t errlen)
{
    char conf[512];
    dq_redis_server_opts so = {
        .binary = o->sentinel_binary ? o->sentinel_binary : "redis-sentinel",
        .config = conf,
    };
    int64_t down = o->down_after_ms > 0 ? o->down_after_ms
                                        : DQ_REPLSET_DOWN_AFTER_MS;
    int64_t fto = o->failover_timeout_ms > 0 ? o->failover_timeout_ms
                                             : DQ_REPLSET_FAILOVER_TIMEOUT_MS;
    char why[400];

    /* "sentinel monitor" must come first: the other lines refer to it. */
    snprintf(conf, sizeof conf,
             "sentinel monitor %s 127.0.0.1 %d 1\n"
             "sentinel down-after-milliseconds %s %lld\n"
             "sentinel failover-timeout %s %lld\n"
             "sentinel parallel-syncs %s %d\n",
             DQ_REPLSET_MASTER, rs->primary.port, DQ_REPLSET_MASTER,
             (long long)down, DQ_REPLSET_MASTER, (long long)fto,
             DQ_REPLSET_MASTER, DQ_REPLSET_PARALLEL_SYNCS);
    if (dq_redis_server_start(&rs->sentinel, &so, why, sizeof why) != 0) {
        snprintf(err, errlen, "sentinel: %s", why);
        return -1;
    }
    snprintf(rs->sentinels, sizeof rs->sentinels, "127.0.0.1:%d",
             rs->sentinel.port);
    return 0;
}

/* Starts rs->replica as a replica of rs->primary and waits until it is
 * in sync.  Both servers replicate diskless without delay: the replica
 * becomes the primary of the next sync after a failover. */
static int start_replica(dq_replset *rs, char *err, size_t errlen)
{
    char port[16], why[400];
    const char *args[] = {"--repl-diskless-sync", "yes",
                          "--repl-diskless-sync-delay", "0",
                          "--replicaof", "127.0.0.1", port, NULL};
    dq_redis_server_opts ro = {.binary = rs->binary[0] ? rs->binary : NULL,
                               .args = args};

    snprintf(port, sizeof port, "%d", rs->primary.port);
    if (dq_redis_server_start(&rs->replica, &ro, why, sizeof why) != 0) {
        snprintf(err, errlen, "replica: %s", why);
        return -1;
    }
    if (wait_until(rs, replica_in_sync) != 0) {
        snprintf(err, errlen, "replica on port %d not in sync with the "
                 "primary on port %d within %d ms", rs->replica.port,
                 rs->primary.port, DQ_REPLSET_READY_TIMEOUT_MS);
        return -1;
    }
    return 0;
}

int dq_replset_start(dq_replset *rs, const dq_replset_opts *o, char *err,
                     size_t errlen)
{
    static const dq_replset_opts defaults = {0};
    static const char *const primary_args[] = {
        "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
        NULL};
    char why[400];
    dq_redis_server_opts po = {.args = primary_args};

    memset(rs, 0, sizeof *rs);
    if (o == NULL)
        o = &defaults;
    if (o->binary != NULL)
        snprintf(rs->binary, sizeof rs->binary, "%s", o->binary);
    po.binary = o->binary;
    if (dq_redis_server_start(&rs->primary, &po, why, sizeof why) != 0) {
        snprintf(err, errlen, "primary: %s", why);
        goto fail;
    }
    if (start_replica(rs, err, errlen) != 0)
        goto fail;
    if (start_sentinel(rs, o, err, errlen) != 0)
        goto fail;
    if (wait_until(rs, sentinel_sees_both) != 0) {
        snprintf(err, errlen, "sentinel on port %d did not report primary "
                 "%d and replica %d healthy within %d ms", rs->sentinel.port,
                 rs->primary.port, rs->replica.port,
                 DQ_REPLSET_READY_TIMEOUT_MS);
        goto fail;
    }
    return 0;

fail:
    dq_replset_stop(rs);
    return -1;
}

/* True when Sentinel names the replica as the primary and the replica
 * says ROLE master. */
static bool promoted(const dq_replset *rs)
{
    const char *role[1] = {"ROLE"};
    char host[64], why[256];
    int port = 0;
    redisReply *r;
    bool ok;

    if (dq_sentinel_primary(rs->sentinels, DQ_REPLSET_MASTER, host,
                            sizeof host, &port, why, sizeof why) != DQ_OK ||
        port != rs->replica.port)
        return false;
    r = probe(rs->replica.port, 1, role);
    ok = r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
         r->element[0]->type == REDIS_REPLY_STRING &&
         strcmp(r->element[0]->str, "master") == 0;
    if (r != NULL)
        freeReplyObject(r);
    return ok;
}

/* Keeps 127.0.0.1:port bound (not listening: a client connecting there
 * is refused at once, as by the dead server) while our Sentinel still
 * knows the killed server's address, so that no server another dqlab
 * starts on a free port (bind to port 0 skips a bound one) can appear
 * there; see replset.h.  Best effort: the descriptor, or -1. */
static int hold_port(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    /* SO_REUSEADDR: the killed server's connections linger in TIME_WAIT
     * on this port. */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* True once Sentinel finished the failover: SENTINEL master shows the
 * replica's port with flags exactly "master" (no failover_in_progress;
 * +switch-master has happened, and with it the old primary's address
 * became one of its replicas). */
static bool switched(const dq_replset *rs)
{
    const char *m[3] = {"SENTINEL", "master", DQ_REPLSET_MASTER};
    redisReply *r = probe(rs->sentinel.port, 3, m);
    char port[16];
    bool ok;

    snprintf(port, sizeof port, "%d", rs->replica.port);
    ok = strcmp(kv(r, "port"), port) == 0 &&
         strcmp(kv(r, "flags"), "master") == 0;
    if (r != NULL)
        freeReplyObject(r);
    return ok;
}

/* Waits until done(rs) or deadline_us (dq_mono_us()), polling every
 * DQ_REPLSET_POLL_MS.  0 or -1. */
static int poll_until(const dq_replset *rs, bool (*done)(const dq_replset *),
                      int64_t deadline_us)
{
    while (!done(rs)) {
        if (dq_mono_us() > deadline_us)
            return -1;
        sleep_ms(DQ_REPLSET_POLL_MS);
    }
    return 0;
}

/* After the failover: SENTINEL RESET, so that Sentinel forgets the killed
 * server's address (it keeps the new primary and finds its replicas again
 * in its INFO).  0 or -1. */
static int forget_killed(const dq_replset *rs)
{
    const char *argv[3] = {"SENTINEL", "RESET", DQ_REPLSET_MASTER};
    redisReply *r = probe(rs->sentinel.port, 3, argv);
    bool ok = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1;

    if (r != NULL)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

/* One command on a probe connection to the replica, expecting +OK.
 * 0, or -1 with one line in err. */
static int replica_ok(const dq_replset *rs, int argc, const char **argv,
                      char *err, size_t errlen)
{
    redisReply *r = probe(rs->replica.port, argc, argv);
    int rc = r != NULL && r->type == REDIS_REPLY_STATUS ? 0 : -1;

    if (rc != 0)
        snprintf(err, errlen, "%s %s on the replica (port %d): %s", argv[0],
                 argv[1], rs->replica.port,
                 r != NULL && r->type == REDIS_REPLY_ERROR ? r->str
                                                           : "no reply");
    if (r != NULL)
        freeReplyObject(r);
    return rc;
}

int dq_replset_lag_start(dq_replset *rs, int64_t max_ms, char *err,
                         size_t errlen)
{
    char ms[32];
    const char *argv[4] = {"CLIENT", "PAUSE", ms, "WRITE"};

    if (rs->replica.pid <= 0 || max_ms < 1) {
        snprintf(err, errlen, "lag: needs a running replica and max_ms >= 1");
        return -1;
    }
    snprintf(ms, sizeof ms, "%lld", (long long)max_ms);
    if (replica_ok(rs, 4, argv, err, errlen) != 0)
        return -1;
    rs->lag_since_us = dq_mono_us();
    return 0;
}

int dq_replset_lag_stop(dq_replset *rs, char *err, size_t errlen)
{
    const char *argv[2] = {"CLIENT", "UNPAUSE"};

    if (rs->lag_since_us == 0)
        return 0;
    rs->lag_since_us = 0;
    return replica_ok(rs, 2, argv, err, errlen);
}

/* True when the replica has lost its link to the (killed) primary. */
static bool link_down(const dq_replset *rs)
{
    static const char *const down[] = {"master_link_status:down", NULL};

    return info_has(rs->replica.port, down);
}

/* How far the replica is behind the primary, in bytes, or -1. */
static int64_t behind_bytes(const dq_replset *rs)
{
    int64_t applied = info_int(rs->replica.port, "slave_repl_offset");
    int64_t sent = info_int(rs->primary.port, "master_repl_offset");

    return applied >= 0 && sent >= 0 ? sent - applied : -1;
}

/* After the kill during a lag: waits until the replica dropped its link
 * (and with it what it had not applied), then ends the pause.  0, or -1
 * with one line in err (the pause is ended either way). */
static int end_lag_after_kill(dq_replset *rs, int64_t deadline_us,
                              char *err, size_t errlen)
{
    int down = poll_until(rs, link_down, deadline_us);
    char why[256];

    if (dq_replset_lag_stop(rs, why, sizeof why) != 0 && down == 0) {
        snprintf(err, errlen, "failover: %s", why);
        return -1;
    }
    if (down != 0) {
        snprintf(err, errlen, "failover: the lagging replica on port %d "
                 "did not report its link to the killed primary down",
                 rs->replica.port);
        return -1;
    }
    return 0;
}

int dq_replset_failover(dq_replset *rs, int64_t timeout_ms,
                        dq_failover_times *t, char *err, size_t errlen)
{
    dq_failover_times local;
    dq_redis_server dead;
    int64_t deadline;
    int status, hold, rc = 0;

    if (t == NULL)
        t = &local;
    memset(t, 0, sizeof *t);
    if (rs->primary.pid <= 0 || rs->sentinel.pid <= 0) {
        snprintf(err, errlen, "failover: no running primary and Sentinel");
        return -1;
    }
    t->behind_bytes = behind_bytes(rs);
    t->kill_us = dq_mono_us();
    kill(rs->primary.pid, SIGKILL);
    dq_spawn_reap(rs->primary.pid, &status, true);
    rs->primary.pid = 0;
    hold = hold_port(rs->primary.port);
    deadline = t->kill_us + timeout_ms * 1000;
    if (rs->lag_since_us != 0) {
        t->lagged_ms = (t->kill_us - rs->lag_since_us) / 1000;
        if (end_lag_after_kill(rs, deadline, err, errlen) != 0) {
            rc = -1;
            goto out;
        }
    }
    if (poll_until(rs, promoted, deadline) != 0) {
        snprintf(err, errlen, "failover: Sentinel did not promote the "
                 "replica on port %d within %lld ms of the kill",
                 rs->replica.port, (long long)timeout_ms);
        rc = -1;
        goto out;
    }
    t->promoted_us = dq_mono_us();
    t->promotion_ms = (t->promoted_us - t->kill_us) / 1000;
    if (poll_until(rs, switched, deadline) != 0 || forget_killed(rs) != 0) {
        /* It would take over whatever answers on the old port later. */
        dq_redis_server_stop(&rs->sentinel);
        snprintf(err, errlen, "failover: Sentinel did not finish the "
                 "failover or refused SENTINEL RESET; Sentinel stopped");
        rc = -1;
    }
    /* The roles changed: primary is the promoted server now. */
    dead = rs->primary;
    rs->primary = rs->replica;
    rs->replica = dead;
out:
    if (hold >= 0)
        close(hold);
    return rc;
}

int dq_replset_rejoin(dq_replset *rs, char *err, size_t errlen)
{
    if (rs->primary.pid <= 0 || rs->replica.pid > 0) {
        snprintf(err, errlen, "rejoin: needs a running primary and a killed "
                 "replica (after dq_replset_failover)");
        return -1;
    }
    dq_redis_server_stop(&rs->replica); /* removes the dead one's dir */
    return start_replica(rs, err, errlen);
}

void dq_replset_stop(dq_replset *rs)
{
    if (rs == NULL)
        return;
    /* Sentinel first, so that it reconfigures nothing while the others
     * go down. */
    dq_redis_server_stop(&rs->sentinel);
    dq_redis_server_stop(&rs->replica);
    dq_redis_server_stop(&rs->primary);
    rs->lag_since_us = 0;
}
