/* rconn.c -- Redis plumbing shared by the Redis strategies (see rconn.h).
 *
 * What it does: connect + AUTH + SELECT + client name + version check +
 * socket timeout;
 * send one command, a pipeline, or a MULTI/EXEC block and turn hiredis's two
 * error channels (c->err for the transport, REDIS_REPLY_ERROR for a command)
 * into DQ_E* codes with one-line messages in the handle; run Lua scripts by
 * SHA with the NOSCRIPT fallback; SCAN-based purge/exists; the timeout
 * argument of blocking commands.
 *
 * Why reconnect here: hiredis (0.14.1 on Debian 12) leaves a context
 * unusable after any transport error, including a socket timeout
 * (REDIS_ERR_IO with EAGAIN), because a half-read reply may still be in
 * flight.  Rather than have every strategy rebuild its connection, each
 * helper reconnects a failed context before its next command
 * (redisReconnect keeps the host and port) and repeats AUTH, SELECT and
 * CLIENT SETNAME (so a reconnected connection keeps its dqlab name).
 * The failed call itself still returns DQ_EIO: its effect on the server is
 * unknown (Jepsen's "info"), and the caller must not assume either way.
 *
 * Socket timeout: hiredis in blocking mode applies SO_RCVTIMEO/SO_SNDTIMEO
 * (redisSetTimeout).  The handshake runs under a fixed 2000 ms; afterwards
 * the caller's sock_timeout_ms, which must exceed any blocking command's
 * server-side timeout (see dq_block_timeout), or a BLPOP that simply waits
 * would look like a dead server.  dq_redis_connect records it in the handle
 * (q->redis_sock_timeout_ms, the largest one given on that handle) and a
 * reconnect restores that value: reading it back from the old socket would
 * pick up the handshake's 2000 ms after a failed handshake, and every
 * blocking call above 2 s would then time out and reconnect.
 *
 * A handshake that fails on a reconnect -- by a transport error or by an
 * error reply to AUTH or SELECT -- leaves the context marked failed
 * (c->err), so the next call reconnects again instead of running commands
 * unauthenticated or in db 0.
 *
 * Redis behaviour relied on:
 *  - INFO server reports redis_version (https://redis.io/commands/info/).
 *  - AUTH user pass since 6.0 (https://redis.io/commands/auth/).
 *  - EVALSHA replies NOSCRIPT when the script cache lacks the SHA
 *    (https://redis.io/commands/evalsha/).
 *  - SCAN may return a key more than once and guarantees only keys present
 *    for the whole scan (https://redis.io/commands/scan/); UNLINK of a
 *    missing key is harmless (https://redis.io/commands/unlink/, 4.0+).
 *  - A blocking timeout of 0 means "forever"; fractional seconds since 6.0
 *    (https://redis.io/commands/blpop/).
 *  - Redis 7.0 notices a blocked client's timeout only when its event loop
 *    wakes up (up to 1000/hz ms late); dq_redis_block wakes it (rconn.h).
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "rconn.h"

#define HANDSHAKE_TIMEOUT_MS 2000
#define SCAN_COUNT "1000"

static struct timeval ms_to_tv(int64_t ms)
{
    struct timeval tv;

    if (ms < 1)
        ms = 1;
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
    return tv;
}

static const char *host_of(const redisContext *c)
{
    return (c->tcp.host != NULL) ? c->tcp.host : "?";
}

/* A socket timeout reaches us as REDIS_ERR_IO with EAGAIN's text
 * ("Resource temporarily unavailable"): said as a timeout, with the one
 * the socket had (SO_RCVTIMEO), so a server that accepts but never answers
 * is named as such. */
static int transport_fail(dq_queue *q, redisContext *c)
{
    struct timeval tv;
    socklen_t len = sizeof tv;

    if (c->err == REDIS_ERR_IO && strcmp(c->errstr, strerror(EAGAIN)) == 0 &&
        getsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len) == 0)
        return dq_fail(q, DQ_EIO, "redis %s:%d: timed out: no reply within "
                       "%lld ms", host_of(c), c->tcp.port,
                       (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000);
    return dq_fail(q, DQ_EIO, "redis %s:%d: %s", host_of(c), c->tcp.port,
                   c->errstr[0] ? c->errstr : "connection error");
}

/* ---- The wire format --------------------------------------------------
 * hiredis 0.14 formats a command (redisFormatSdsCommandArgv) with
 * sdscatfmt, which parses its format string again for every argument:
 * callgrind counted about 1,000 instructions per argument, 7,700 for a
 * lua claim's EVALSHA and 2,800 per task for a batched enqueue (HSET and
 * ZADD of 64 tasks each), more than the rest of the client's work per
 * task.  The same bytes -- RESP, "*<argc>\r\n" and then "$<len>\r\n<bytes>
 * \r\n" per argument (https://redis.io/docs/reference/protocol-spec/) --
 * are written here with a digit loop and memcpy and appended to the
 * context's output buffer with redisAppendFormattedCommand, which is what
 * redisAppendCommandArgv does with its own formatting; redisGetReply then
 * writes and reads as redisCommandArgv does in blocking mode. */

size_t dq_redis_fmt_i64(char *buf, int64_t v)
{
    char tmp[24];
    size_t n = 0, len = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        buf[len++] = '-';
    while (n > 0)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

/* "<c><n>\r\n" at p; returns the end. */
static char *resp_head(char *p, char c, size_t n)
{
    *p++ = c;
    p += dq_redis_fmt_i64(p, (int64_t)n);
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

/* Appends one command (argv[0..argc-1], lens NULL: strlen of each) to c's
 * output buffer, as redisAppendCommandArgv would.  REDIS_OK, or REDIS_ERR
 * with c->err set (out of memory). */
static int append_argv(redisContext *c, int argc, const char **argv,
                       const size_t *lens)
{
    char small[2048], *buf = small, *p;
    size_t total = 24;
    int rc;

    for (int i = 0; i < argc; i++)
        total += 24 + 2 + (lens ? lens[i] : strlen(argv[i]));
    if (total > sizeof small && (buf = malloc(total)) == NULL) {
        c->err = REDIS_ERR_OOM;
        snprintf(c->errstr, sizeof c->errstr, "Out of memory");
        return REDIS_ERR;
    }
    p = resp_head(buf, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) {
        size_t n = lens ? lens[i] : strlen(argv[i]);

        p = resp_head(p, '$', n);
        memcpy(p, argv[i], n);
        p += n;
        *p++ = '\r';
        *p++ = '\n';
    }
    rc = redisAppendFormattedCommand(c, buf, (size_t)(p - buf));
    if (buf != small)
        free(buf);
    return rc;
}

/* One command, no reconnect, no error-reply handling.  NULL on a transport
 * error (q->err set). */
static redisReply *raw_cmd(dq_queue *q, redisContext *c, int argc,
                           const char **argv, const size_t *lens)
{
    void *r = NULL;

    q->counters.round_trips++;
    if (append_argv(c, argc, argv, lens) != REDIS_OK ||
        redisGetReply(c, &r) != REDIS_OK || r == NULL) {
        transport_fail(q, c);
        return NULL;
    }
    return r;
}

void dq_redis_client_prefix(const char *queue, char *buf, size_t buflen)
{
    snprintf(buf, buflen, "%s%s:", DQ_CLIENT_NAME_PREFIX, queue);
}

void dq_redis_client_name(const dq_queue *q, const char *suffix, char *buf,
                          size_t buflen)
{
    const char *who = q->cfg.consumer ? q->cfg.consumer : "-";
    size_t n;

    if (buflen == 0)
        return;
    dq_redis_client_prefix(q->queue, buf, buflen);
    n = strlen(buf);
    /* A client name holds no spaces or control characters (CLIENT
     * SETNAME); ':' separates the fields. */
    for (const char *s = who; *s && n + 1 < buflen; s++, n++)
        buf[n] = (*s > ' ' && *s <= '~' && *s != ':') ? *s : '_';
    buf[n] = '\0';
    if (suffix != NULL)
        snprintf(buf + n, buflen - n, "%s", suffix);
}

/* CLIENT SETNAME dqlab:<queue>:<consumer> (rconn.h, client names).  An
 * error reply (a user without CLIENT, ACL -client) leaves the connection
 * unnamed and is not an error; a transport error is. */
static int set_client_name(dq_queue *q, redisContext *c)
{
    char name[DQ_CLIENT_NAME_MAX];
    const char *argv[3] = {"CLIENT", "SETNAME", name};
    redisReply *r;

    dq_redis_client_name(q, NULL, name, sizeof name);
    r = raw_cmd(q, c, 3, argv, NULL);
    if (r == NULL)
        return DQ_EIO;
    freeReplyObject(r);
    return DQ_OK;
}

/* AUTH, SELECT and CLIENT SETNAME on a fresh connection, under the
 * handshake timeout. */
static int handshake(dq_queue *q, redisContext *c)
{
    const dq_config *cfg = &q->cfg;
    redisReply *r;
    int rc = DQ_OK;

    if (redisSetTimeout(c, ms_to_tv(HANDSHAKE_TIMEOUT_MS)) != REDIS_OK)
        return transport_fail(q, c);
    if (cfg->redis_password != NULL) {
        const char *argv[3] = {"AUTH", NULL, NULL};
        int argc = 0;

        argv[++argc] = cfg->redis_user ? cfg->redis_user : cfg->redis_password;
        if (cfg->redis_user)
            argv[++argc] = cfg->redis_password;
        r = raw_cmd(q, c, argc + 1, argv, NULL);
        if (r == NULL)
            return DQ_EIO;
        if (r->type == REDIS_REPLY_ERROR)
            /* The reply text (e.g. "WRONGPASS invalid username-password
             * pair") never contains the password; the user name is not
             * named either (with an unescaped ':' in a URL's password it
             * is a piece of the password). */
            rc = dq_fail(q, DQ_EAUTH, "redis %s:%d: AUTH failed: %s",
                         host_of(c), c->tcp.port, r->str);
        freeReplyObject(r);
        if (rc != DQ_OK)
            return rc;
    }
    if (cfg->redis_db != 0) {
        char db[16];
        const char *argv[2] = {"SELECT", db};

        snprintf(db, sizeof db, "%d", cfg->redis_db);
        r = raw_cmd(q, c, 2, argv, NULL);
        if (r == NULL)
            return DQ_EIO;
        if (r->type == REDIS_REPLY_ERROR)
            rc = dq_fail(q, DQ_EREDIS, "redis %s:%d: SELECT %d: %s",
                         host_of(c), c->tcp.port, cfg->redis_db, r->str);
        freeReplyObject(r);
        if (rc != DQ_OK)
            return rc;
    }
    return set_client_name(q, c);
}

/* Parses "7.0.15" into a comparable number; -1 when malformed. */
static long version_num(const char *v)
{
    int a = 0, b = 0, c = 0;

    if (v == NULL || sscanf(v, "%d.%d.%d", &a, &b, &c) < 2)
        return -1;
    return (long)a * 1000000L + (long)b * 1000L + c;
}

static int check_version(dq_queue *q, redisContext *c, const char *min_version)
{
    const char *argv[2] = {"INFO", "server"};
    char ver[32] = "";
    redisReply *r;
    const char *p;
    int rc = DQ_OK;

    r = raw_cmd(q, c, 2, argv, NULL);
    if (r == NULL)
        return DQ_EIO;
    if (r->type != REDIS_REPLY_STRING) {
        rc = dq_fail(q, r->type == REDIS_REPLY_ERROR ? DQ_EREDIS : DQ_EPROTO,
                     "redis %s:%d: INFO server: %s", host_of(c), c->tcp.port,
                     r->type == REDIS_REPLY_ERROR ? r->str : "not a string");
        goto free_reply;
    }
    p = strstr(r->str, "redis_version:");
    if (p == NULL || sscanf(p + strlen("redis_version:"), "%31[0-9.]", ver) != 1) {
        rc = dq_fail(q, DQ_EPROTO, "redis %s:%d: INFO server has no redis_version",
                     host_of(c), c->tcp.port);
        goto free_reply;
    }
    if (min_version != NULL && version_num(ver) < version_num(min_version))
        rc = dq_fail(q, DQ_EVERSION,
                     "redis %s:%d: server is %s, strategy '%s' needs %s or later",
                     host_of(c), c->tcp.port, ver, q->s ? q->s->name : "?",
                     min_version);
free_reply:
    freeReplyObject(r);
    return rc;
}

/* Marks c failed (unless a transport error did already), so that the next
 * call reconnects it. */
static void mark_failed(redisContext *c, const char *why)
{
    if (c->err != 0)
        return;
    c->err = REDIS_ERR_OTHER;
    snprintf(c->errstr, sizeof c->errstr, "%s", why);
}

/* ---- Sentinel ---------------------------------------------------------------
 * With cfg.sentinels set, the address to connect to is not configured but
 * asked for: dq_sentinel_primary() on every connect and on every reconnect
 * after a failure; a server that answers is accepted only when ROLE says
 * master (Sentinel names the promoted replica before every client has
 * noticed, and a demoted primary that came back answers as a replica). */

/* Sentinel's answer to one get-master-addr-by-name from host:port into
 * out_host/out_port.  DQ_OK; DQ_ENOTFOUND when it does not know the name;
 * DQ_EIO (unreachable, no reply) or DQ_EPROTO with why set. */
static int ask_sentinel(const char *host, int port, const char *name,
                        char *out_host, size_t hostlen, int *out_port,
                        char *why, size_t whylen)
{
    const char *argv[3] = {"SENTINEL", "get-master-addr-by-name", name};
    struct timeval tv = ms_to_tv(DQ_SENTINEL_TIMEOUT_MS);
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    redisReply *r = NULL;
    int64_t p = 0;
    int rc = DQ_EIO;

    if (c == NULL || c->err || redisSetTimeout(c, tv) != REDIS_OK) {
        snprintf(why, whylen, "%s", c ? c->errstr : "out of memory");
        goto out;
    }
    r = redisCommandArgv(c, 3, argv, NULL);
    if (r == NULL) {
        snprintf(why, whylen, "%s", c->errstr);
    } else if (r->type == REDIS_REPLY_NIL) {
        snprintf(why, whylen, "no primary named '%s'", name);
        rc = DQ_ENOTFOUND;
    } else if (r->type == REDIS_REPLY_ERROR) {
        snprintf(why, whylen, "%s", r->str);
        rc = DQ_EPROTO;
    } else if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
               r->element[0]->type != REDIS_REPLY_STRING ||
               r->element[0]->len == 0 || r->element[0]->len >= hostlen ||
               !dq_reply_int(r->element[1], &p) || p < 1 || p > 65535) {
        snprintf(why, whylen, "unexpected reply");
        rc = DQ_EPROTO;
    } else {
        snprintf(out_host, hostlen, "%s", r->element[0]->str);
        *out_port = (int)p;
        rc = DQ_OK;
    }
out:
    if (r != NULL)
        freeReplyObject(r);
    if (c != NULL)
        redisFree(c);
    return rc;
}

/* One Sentinel address of a list: host (hostlen bytes) and port.  0 when
 * item (len bytes) is "host:port" with a port in 1..65535, else -1. */
static int parse_hostport(const char *item, size_t len, char *host,
                          size_t hostlen, int *port)
{
    const char *colon = memchr(item, ':', len);
    char num[8];
    char *end;
    long v;

    if (colon == NULL || colon == item || (size_t)(colon - item) >= hostlen ||
        len - (size_t)(colon - item) - 1 >= sizeof num ||
        len - (size_t)(colon - item) - 1 == 0)
        return -1;
    snprintf(num, sizeof num, "%.*s", (int)(len - (size_t)(colon - item) - 1),
             colon + 1);
    v = strtol(num, &end, 10);
    if (*end != '\0' || v < 1 || v > 65535 || num[0] == '+' || num[0] == '-')
        return -1;
    snprintf(host, hostlen, "%.*s", (int)(colon - item), item);
    *port = (int)v;
    return 0;
}

int dq_sentinel_primary(const char *sentinels, const char *name, char *host,
                        size_t hostlen, int *port, char *err, size_t errlen)
{
    char shost[DQ_SENTINELS_MAX][128], last[200] = "";
    int sport[DQ_SENTINELS_MAX], n = 0;

    if (sentinels == NULL || name == NULL || name[0] == '\0') {
        snprintf(err, errlen, "sentinel: a Sentinel list and a primary name "
                 "are both required");
        return DQ_EINVAL;
    }
    /* The whole list is checked before any Sentinel is asked. */
    for (const char *p = sentinels;; n++) {
        size_t len = strcspn(p, ",");

        if (n >= DQ_SENTINELS_MAX ||
            parse_hostport(p, len, shost[n], sizeof shost[n], &sport[n]) != 0) {
            snprintf(err, errlen, "sentinels '%.100s': expected host:port"
                     "[,host:port...] (at most %d)", sentinels,
                     DQ_SENTINELS_MAX);
            return DQ_EINVAL;
        }
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    for (int i = 0; i <= n; i++) {
        char why[128] = "";

        if (ask_sentinel(shost[i], sport[i], name, host, hostlen, port, why,
                         sizeof why) == DQ_OK)
            return DQ_OK;
        snprintf(last, sizeof last, "sentinel %.64s:%d: %.100s", shost[i],
                 sport[i], why);
    }
    snprintf(err, errlen, "no Sentinel gave the primary '%.64s' (last: %s)",
             name, last);
    return DQ_EIO;
}

/* Points c (not connected, or failed) at the primary the Sentinels name:
 * its tcp.host and tcp.port, which redisReconnect reuses.  hiredis 0.14.1
 * owns tcp.host as a strdup'd string (net.c, _redisContextConnectTcp
 * frees and strdups it the same way).  DQ_OK, or a DQ_E* code with q->err
 * and c unchanged. */
static int follow_primary(dq_queue *q, redisContext *c)
{
    char host[128], err[sizeof q->err];
    int port = 0, rc;

    rc = dq_sentinel_primary(q->cfg.sentinels, q->cfg.sentinel_master, host,
                             sizeof host, &port, err, sizeof err);
    if (rc != DQ_OK)
        return dq_fail(q, rc, "%s", err);
    if (c->tcp.host == NULL || strcmp(c->tcp.host, host) != 0) {
        char *h = strdup(host);

        if (h == NULL)
            return dq_fail(q, DQ_ENOMEM, "sentinel: out of memory");
        free(c->tcp.host);
        c->tcp.host = h;
    }
    c->tcp.port = port;
    return DQ_OK;
}

/* ROLE on a connection found through Sentinel: DQ_OK when the server says
 * master, or when it refuses ROLE (an ACL without it: a replica is then
 * caught by its READONLY replies); DQ_EIO when it is a replica or the
 * connection failed. */
static int check_primary(dq_queue *q, redisContext *c)
{
    const char *argv[1] = {"ROLE"};
    redisReply *r = raw_cmd(q, c, 1, argv, NULL);
    int rc = DQ_OK;

    if (r == NULL)
        return DQ_EIO;
    if (r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
        r->element[0]->type == REDIS_REPLY_STRING &&
        strcmp(r->element[0]->str, "master") != 0)
        rc = dq_fail(q, DQ_EIO, "redis %s:%d: is a %s, not the primary "
                     "'%s' (a failover is under way)", host_of(c),
                     c->tcp.port, r->element[0]->str,
                     q->cfg.sentinel_master);
    freeReplyObject(r);
    return rc;
}

/* In Sentinel mode, an error reply that says this server is no longer
 * the primary: READONLY (a write on a replica), UNBLOCKED (Redis 7.0
 * replicationSetMaster unblocks blocked clients when a primary turns
 * replica) or WAIT's "cannot be used with replica instances".  Marks c
 * failed, so that the next call asks Sentinel again, and returns DQ_EIO
 * (the write was refused, nothing was done; retry), with q->err set.
 * Returns DQ_OK for any other reply. */
static int demoted(dq_queue *q, redisContext *c, const redisReply *r)
{
    char text[160];

    if (q->cfg.sentinels == NULL || r == NULL ||
        r->type != REDIS_REPLY_ERROR ||
        (strncmp(r->str, "READONLY", 8) != 0 &&
         strncmp(r->str, "UNBLOCKED", 9) != 0 &&
         strstr(r->str, "with replica instances") == NULL))
        return DQ_OK;
    snprintf(text, sizeof text, "%s", r->str);
    mark_failed(c, "the server is no longer the primary");
    return dq_fail(q, DQ_EIO, "redis %s:%d: no longer the primary: %.120s",
                   host_of(c), c->tcp.port, text);
}

/* Option key of q as an integer (checked at dq_open against the common
 * option table, dq.c), or def when the handle has no such option. */
static int64_t opt_or(const dq_queue *q, const char *key, int64_t def)
{
    const char *v = dq_opt_get(q, key);

    return v != NULL ? strtoll(v, NULL, 10) : def;
}

/* The redis_confirm hook (dq.h) of a handle opened with wait > 0. */
static int confirm_hook(dq_queue *q, const char *what)
{
    return dq_redis_wait_replicas(q, q->redis_conn, opt_or(q, "wait", 0),
                                  opt_or(q, "wait_timeout_ms", 1000), what);
}

int dq_redis_connect(dq_queue *q, const char *min_version,
                     int64_t sock_timeout_ms, redisContext **out)
{
    const char *host = q->cfg.redis_host ? q->cfg.redis_host : "127.0.0.1";
    int port = q->cfg.redis_port > 0 ? q->cfg.redis_port : 6379;
    char found[128], err[sizeof q->err];
    redisContext *c;
    int rc;

    *out = NULL;
    if (q->cfg.sentinels != NULL) {
        rc = dq_sentinel_primary(q->cfg.sentinels, q->cfg.sentinel_master,
                                 found, sizeof found, &port, err, sizeof err);
        if (rc != DQ_OK)
            return dq_fail(q, rc, "%s", err);
        host = found;
    }
    c = redisConnectWithTimeout(host, port, ms_to_tv(HANDSHAKE_TIMEOUT_MS));
    if (c == NULL)
        return dq_fail(q, DQ_ENOMEM, "redis %s:%d: out of memory", host, port);
    if (c->err) {
        rc = dq_fail(q, DQ_EIO, "redis %s:%d: %s", host, port, c->errstr);
        goto free_context;
    }
    if ((rc = handshake(q, c)) != DQ_OK)
        goto free_context;
    if (q->cfg.sentinels != NULL && (rc = check_primary(q, c)) != DQ_OK)
        goto free_context;
    if ((rc = check_version(q, c, min_version)) != DQ_OK)
        goto free_context;
    if (sock_timeout_ms > q->redis_sock_timeout_ms)
        q->redis_sock_timeout_ms = sock_timeout_ms;
    if (redisSetTimeout(c, ms_to_tv(sock_timeout_ms)) != REDIS_OK) {
        rc = transport_fail(q, c);
        goto free_context;
    }
    if (q->redis_conn == NULL) {
        q->redis_conn = c;
        if (opt_or(q, "wait", 0) > 0)
            q->redis_confirm = confirm_hook;
    }
    *out = c;
    return DQ_OK;

free_context:
    redisFree(c);
    return rc;
}

/* Reconnects c when a previous call left it failed.  DQ_OK when usable;
 * otherwise c stays failed and the next call tries again. */
static int ensure_connected(dq_queue *q, redisContext *c)
{
    int64_t timeout_ms = q->redis_sock_timeout_ms > 0
                             ? q->redis_sock_timeout_ms
                             : DQ_SOCK_TIMEOUT_MS;
    int rc;

    if (c->err == 0)
        return DQ_OK;
    /* Sentinel mode: the primary may have moved (a failover). */
    if (q->cfg.sentinels != NULL && (rc = follow_primary(q, c)) != DQ_OK)
        return rc;
    if (redisReconnect(c) != REDIS_OK || c->err)
        return dq_fail(q, DQ_EIO, "redis %s:%d: reconnect failed: %s",
                       host_of(c), c->tcp.port,
                       c->errstr[0] ? c->errstr : "error");
    if ((rc = handshake(q, c)) != DQ_OK ||
        (q->cfg.sentinels != NULL && (rc = check_primary(q, c)) != DQ_OK)) {
        mark_failed(c, "handshake failed after reconnect");
        return rc;
    }
    if (redisSetTimeout(c, ms_to_tv(timeout_ms)) != REDIS_OK) {
        rc = transport_fail(q, c);
        mark_failed(c, "cannot set the socket timeout");
        return rc;
    }
    return DQ_OK;
}

int dq_reply_error(dq_queue *q, const redisReply *r, const char *cmd)
{
    if (r == NULL)
        return dq_fail(q, DQ_EPROTO, "%s: no reply", cmd);
    if (r->type == REDIS_REPLY_ERROR)
        return dq_fail(q, DQ_EREDIS, "%s: %s", cmd, r->str);
    return DQ_OK;
}

redisReply *dq_redis_cmd(dq_queue *q, redisContext *c, int *rc, int argc,
                         const char **argv, const size_t *argvlen)
{
    redisReply *r;

    if ((*rc = ensure_connected(q, c)) != DQ_OK)
        return NULL;
    r = raw_cmd(q, c, argc, argv, argvlen);
    if (r == NULL) {
        *rc = DQ_EIO;
        return NULL;
    }
    if ((*rc = demoted(q, c, r)) != DQ_OK ||
        (*rc = dq_reply_error(q, r, argv[0])) != DQ_OK) {
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

redisReply *dq_redis_cmdf(dq_queue *q, redisContext *c, int *rc,
                          const char *fmt, ...)
{
    char name[32];
    redisReply *r;
    va_list ap;
    size_t n = strcspn(fmt, " ");

    if ((*rc = ensure_connected(q, c)) != DQ_OK)
        return NULL;
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1),
             fmt);
    q->counters.round_trips++;
    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (r == NULL) {
        *rc = transport_fail(q, c);
        return NULL;
    }
    if ((*rc = demoted(q, c, r)) != DQ_OK ||
        (*rc = dq_reply_error(q, r, name)) != DQ_OK) {
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

int dq_redis_pipeline(dq_queue *q, redisContext *c, size_t n,
                      const dq_redis_argv *cmds, redisReply **replies)
{
    size_t got = 0;
    int rc;

    for (size_t i = 0; i < n; i++)
        replies[i] = NULL;
    if ((rc = ensure_connected(q, c)) != DQ_OK)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (append_argv(c, cmds[i].argc, cmds[i].argv, cmds[i].lens) !=
            REDIS_OK) {
            /* Commands 0..i-1 sit in c->obuf; a failed context is
             * reconnected (redisReconnect empties obuf) before its next
             * use, so they are never sent half a pipeline later. */
            mark_failed(c, "pipeline build failed (out of memory)");
            return dq_fail(q, DQ_ENOMEM, "%s: cannot build command",
                           cmds[i].argv[0]);
        }
    q->counters.round_trips++;
    for (; got < n; got++) {
        void *r = NULL;
        if (redisGetReply(c, &r) != REDIS_OK || r == NULL) {
            rc = transport_fail(q, c);
            goto free_replies;
        }
        replies[got] = r;
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = demoted(q, c, replies[i])) != DQ_OK)
            goto free_replies;
    return DQ_OK;

free_replies:
    for (size_t i = 0; i < got; i++) {
        freeReplyObject(replies[i]);
        replies[i] = NULL;
    }
    return rc;
}

#define MULTI_MAX 16

redisReply *dq_redis_multi(dq_queue *q, redisContext *c, int *rc, size_t n,
                           const dq_redis_argv *cmds)
{
    static const char *multi_argv[1] = {"MULTI"};
    static const char *exec_argv[1] = {"EXEC"};
    dq_redis_argv all[MULTI_MAX + 2];
    redisReply *replies[MULTI_MAX + 2];
    redisReply *exec = NULL;

    if (n == 0 || n > MULTI_MAX) {
        *rc = dq_fail(q, DQ_EINVAL, "MULTI: %zu commands (1..%d)", n, MULTI_MAX);
        return NULL;
    }
    all[0] = (dq_redis_argv){1, multi_argv, NULL};
    for (size_t i = 0; i < n; i++)
        all[i + 1] = cmds[i];
    all[n + 1] = (dq_redis_argv){1, exec_argv, NULL};
    if ((*rc = dq_redis_pipeline(q, c, n + 2, all, replies)) != DQ_OK)
        return NULL;

    *rc = DQ_OK;
    /* A command rejected while queueing makes EXEC fail with EXECABORT;
     * report the command's own error, which says more. */
    for (size_t i = 0; i < n + 1 && *rc == DQ_OK; i++)
        *rc = dq_reply_error(q, replies[i], all[i].argv[0]);
    if (*rc == DQ_OK)
        *rc = dq_reply_error(q, replies[n + 1], "EXEC");
    if (*rc == DQ_OK) {
        exec = replies[n + 1];
        if (exec->type != REDIS_REPLY_ARRAY || exec->elements != n) {
            *rc = dq_fail(q, DQ_EPROTO, "EXEC: expected %zu replies", n);
            exec = NULL;
        }
    }
    for (size_t i = 0; exec != NULL && i < n && *rc == DQ_OK; i++)
        *rc = dq_reply_error(q, exec->element[i], cmds[i].argv[0]);
    if (*rc != DQ_OK)
        exec = NULL;
    for (size_t i = 0; i < n + 2; i++)
        if (replies[i] != exec)
            freeReplyObject(replies[i]);
    return exec;
}

static int script_load(dq_queue *q, redisContext *c, dq_script *s)
{
    const char *argv[3] = {"SCRIPT", "LOAD", s->src};
    redisReply *r;
    int rc;

    r = dq_redis_cmd(q, c, &rc, 3, argv, NULL);
    if (r == NULL)
        return rc;
    if (r->type != REDIS_REPLY_STRING || r->len != 40)
        rc = dq_fail(q, DQ_EPROTO, "SCRIPT LOAD: expected a 40-character SHA");
    else
        memcpy(s->sha, r->str, 41);
    freeReplyObject(r);
    return rc;
}

#define EVAL_MAX_ARGS 64

redisReply *dq_redis_eval(dq_queue *q, redisContext *c, dq_script *s, int *rc,
                          int numkeys, int nargs, const char **args,
                          const size_t *lens)
{
    const char *argv[EVAL_MAX_ARGS + 3];
    size_t argl[EVAL_MAX_ARGS + 3];
    char nk[16];
    redisReply *r;

    if (nargs < 0 || nargs > EVAL_MAX_ARGS || numkeys < 0 || numkeys > nargs) {
        *rc = dq_fail(q, DQ_EINVAL, "EVALSHA: bad argument count");
        return NULL;
    }
    if (s->sha[0] == '\0' && (*rc = script_load(q, c, s)) != DQ_OK)
        return NULL;
    dq_redis_fmt_i64(nk, numkeys);
    argv[0] = "EVALSHA";
    argv[1] = s->sha;
    argv[2] = nk;
    for (int i = 0; i < 3; i++)
        argl[i] = strlen(argv[i]);
    for (int i = 0; i < nargs; i++) {
        argv[i + 3] = args[i];
        argl[i + 3] = lens ? lens[i] : strlen(args[i]);
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        if ((*rc = ensure_connected(q, c)) != DQ_OK)
            return NULL;
        r = raw_cmd(q, c, nargs + 3, argv, argl);
        if (r == NULL) {
            *rc = DQ_EIO;
            return NULL;
        }
        if (r->type == REDIS_REPLY_ERROR && attempt == 0 &&
            strncmp(r->str, "NOSCRIPT", 8) == 0) {
            freeReplyObject(r);
            if ((*rc = script_load(q, c, s)) != DQ_OK)
                return NULL;
            continue;
        }
        if ((*rc = demoted(q, c, r)) != DQ_OK ||
            (*rc = dq_reply_error(q, r, "EVALSHA")) != DQ_OK) {
            freeReplyObject(r);
            return NULL;
        }
        return r;
    }
    *rc = dq_fail(q, DQ_EREDIS, "EVALSHA: NOSCRIPT after SCRIPT LOAD");
    return NULL;
}

void dq_redis_key(const dq_queue *q, const char *suffix, char *buf,
                  size_t buflen)
{
    snprintf(buf, buflen, "dq:{%s}:%s", q->queue, suffix);
}

/* Runs SCAN over dq:{queue}:*, leaving out the key dq:{queue}:<keep>
 * (keep NULL: none); with unlink, deletes every key found, otherwise
 * stops at the first one.  Returns DQ_OK / DQ_E*; *found set. */
static int scan_keys(dq_queue *q, redisContext *c, bool unlink,
                     const char *keep, bool *found)
{
    char pattern[128], kept[128] = "", cursor[32] = "0";
    int rc = DQ_OK;

    *found = false;
    dq_redis_key(q, "*", pattern, sizeof pattern);
    if (keep != NULL)
        dq_redis_key(q, keep, kept, sizeof kept);
    do {
        const char *argv[6] = {"SCAN", cursor, "MATCH", pattern, "COUNT",
                               SCAN_COUNT};
        redisReply *r = dq_redis_cmd(q, c, &rc, 6, argv, NULL), *keys;
        size_t n = 0;

        if (r == NULL)
            return rc;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING ||
            r->element[1]->type != REDIS_REPLY_ARRAY) {
            freeReplyObject(r);
            return dq_fail(q, DQ_EPROTO, "SCAN: unexpected reply");
        }
        snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
        keys = r->element[1];
        for (size_t i = 0; i < keys->elements; i++)
            n += strcmp(keys->element[i]->str, kept) != 0;
        if (n > 0)
            *found = true;
        if (unlink && n > 0) {
            const char **argv2 = malloc((n + 1) * sizeof *argv2);
            size_t *lens = malloc((n + 1) * sizeof *lens);
            redisReply *u = NULL;

            if (argv2 == NULL || lens == NULL) {
                rc = dq_fail(q, DQ_ENOMEM, "purge: out of memory");
            } else {
                argv2[0] = "UNLINK";
                lens[0] = 6;
                n = 0;
                for (size_t i = 0; i < keys->elements; i++) {
                    if (strcmp(keys->element[i]->str, kept) == 0)
                        continue;
                    argv2[++n] = keys->element[i]->str;
                    lens[n] = keys->element[i]->len;
                }
                u = dq_redis_cmd(q, c, &rc, (int)n + 1, argv2, lens);
                freeReplyObject(u);
            }
            free(argv2);
            free(lens);
        }
        freeReplyObject(r);
        if (rc != DQ_OK)
            return rc;
        if (!unlink && *found)
            break;
    } while (strcmp(cursor, "0") != 0);
    return DQ_OK;
}

int dq_redis_purge(dq_queue *q, redisContext *c)
{
    bool found;

    return scan_keys(q, c, true, NULL, &found);
}

int dq_redis_exists(dq_queue *q, redisContext *c)
{
    bool found;
    int rc = scan_keys(q, c, false, NULL, &found);

    return rc != DQ_OK ? rc : (found ? 1 : 0);
}

int dq_redis_purge_but(dq_queue *q, redisContext *c, const char *keep)
{
    bool found;

    return scan_keys(q, c, true, keep, &found);
}

int dq_redis_exists_but(dq_queue *q, redisContext *c, const char *keep)
{
    bool found;
    int rc = scan_keys(q, c, false, keep, &found);

    return rc != DQ_OK ? rc : (found ? 1 : 0);
}

void dq_block_timeout(int64_t wait_ms, char *buf, size_t buflen)
{
    if (wait_ms < DQ_BLOCK_MIN_MS)
        wait_ms = DQ_BLOCK_MIN_MS;
    if (wait_ms > DQ_BLOCK_MAX_MS)
        wait_ms = DQ_BLOCK_MAX_MS;
    snprintf(buf, buflen, "%.3f", (double)wait_ms / 1000.0);
}

/* Writes everything buffered in c's output buffer.  REDIS_OK/REDIS_ERR. */
static int flush_output(redisContext *c)
{
    int done = 0;

    do {
        if (redisBufferWrite(c, &done) != REDIS_OK)
            return REDIS_ERR;
    } while (!done);
    return REDIS_OK;
}

/* Waits until c's socket is readable or dq_mono_us() reaches until_us.
 * 1: readable (or an error to be found by the read), 0: time is up. */
static int wait_readable(redisContext *c, int64_t until_us)
{
    for (;;) {
        int64_t left = until_us - dq_mono_us();
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        struct timespec ts;
        int n;

        if (left <= 0)
            left = 0;
        ts.tv_sec = (time_t)(left / 1000000);
        ts.tv_nsec = (long)(left % 1000000) * 1000;
        n = ppoll(&pfd, 1, &ts, NULL);
        if (n > 0 || (n < 0 && errno != EINTR))
            return 1;
        if (n == 0)
            return 0;
    }
}

/* The timeout argument of a blocking command: wait_ms clamped as
 * dq_block_timeout does, in seconds ("0.005") or, with in_ms, in whole
 * milliseconds ("5") as XREADGROUP's BLOCK takes it. */
static int64_t block_arg(int64_t want_ms, bool in_ms, char *buf, size_t len)
{
    int64_t wait_ms = want_ms < DQ_BLOCK_MIN_MS   ? DQ_BLOCK_MIN_MS
                      : want_ms > DQ_BLOCK_MAX_MS ? DQ_BLOCK_MAX_MS
                                                  : want_ms;

    if (in_ms)
        snprintf(buf, len, "%lld", (long long)wait_ms);
    else
        dq_block_timeout(wait_ms, buf, len);
    return wait_ms;
}

/* dq_redis_block and dq_redis_block_ms_at: the timeout goes before
 * argv[at] (at == argc: after the last argument). */
static redisReply *block_cmd(dq_queue *q, redisContext *c, int *rc, int argc,
                             const char **argv, const size_t *argvlen,
                             int at, bool in_ms, int64_t deadline_us)
{
    static const char *ping[1] = {"PING"};
    const char *av[DQ_BLOCK_MAX_ARGC + 1];
    size_t al[DQ_BLOCK_MAX_ARGC + 1];
    char tmo[32];
    int64_t wait_ms, want_ms, wake_us, step_us = 2000;
    int pings = 0;
    void *r = NULL;

    if (argc < 1 || argc > DQ_BLOCK_MAX_ARGC || at < 1 || at > argc) {
        *rc = dq_fail(q, DQ_EINVAL, "blocking command: %d arguments (1..%d), "
                      "timeout at %d", argc, DQ_BLOCK_MAX_ARGC, at);
        return NULL;
    }
    if ((*rc = ensure_connected(q, c)) != DQ_OK)
        return NULL;
    want_ms = (deadline_us - dq_mono_us()) / 1000 - DQ_BLOCK_EARLY_MS;
    wait_ms = block_arg(want_ms, in_ms, tmo, sizeof tmo);
    for (int i = 0, j = 0; i < argc; i++, j++) {
        if (i == at) {
            av[j] = tmo;
            al[j++] = strlen(tmo);
        }
        av[j] = argv[i];
        al[j] = argvlen ? argvlen[i] : strlen(argv[i]);
    }
    if (at == argc) {
        av[argc] = tmo;
        al[argc] = strlen(tmo);
    }
    /* Unclamped, the server's timeout fires DQ_BLOCK_EARLY_MS (give or
     * take its 1 ms rounding) before our deadline; clamped, that long
     * after the timeout we sent. */
    wake_us = wait_ms == want_ms
                  ? deadline_us
                  : dq_mono_us() + (wait_ms + DQ_BLOCK_EARLY_MS) * 1000;
    q->counters.round_trips++;
    if (append_argv(c, argc + 1, av, al) != REDIS_OK ||
        flush_output(c) != REDIS_OK)
        goto lost;
    /* Until the reply comes: at wake_us a PING wakes the server's event
     * loop; if that was too early, a few more, further apart. */
    while (!wait_readable(c, wake_us) && pings < DQ_BLOCK_WAKE_PINGS) {
        q->counters.round_trips++;
        if (append_argv(c, 1, ping, NULL) != REDIS_OK ||
            flush_output(c) != REDIS_OK)
            goto lost;
        pings++;
        wake_us = dq_mono_us() + step_us;
        step_us *= 2;
    }
    if (redisGetReply(c, &r) != REDIS_OK || r == NULL)
        goto lost;
    /* The PONGs.  A failure here leaves c failed (the next call
     * reconnects) but does not undo the reply we hold. */
    for (; pings > 0; pings--) {
        void *pong = NULL;

        if (redisGetReply(c, &pong) != REDIS_OK)
            break;
        freeReplyObject(pong);
    }
    if ((*rc = demoted(q, c, r)) != DQ_OK ||
        (*rc = dq_reply_error(q, r, argv[0])) != DQ_OK) {
        freeReplyObject(r);
        return NULL;
    }
    return r;

lost:
    *rc = transport_fail(q, c);
    mark_failed(c, "blocking command lost");
    return NULL;
}

redisReply *dq_redis_block(dq_queue *q, redisContext *c, int *rc, int argc,
                           const char **argv, const size_t *argvlen,
                           int64_t deadline_us)
{
    return block_cmd(q, c, rc, argc, argv, argvlen, argc, false,
                     deadline_us);
}

redisReply *dq_redis_block_ms_at(dq_queue *q, redisContext *c, int *rc,
                                 int argc, const char **argv,
                                 const size_t *argvlen, int timeout_at,
                                 int64_t deadline_us)
{
    return block_cmd(q, c, rc, argc, argv, argvlen, timeout_at, true,
                     deadline_us);
}

bool dq_reply_int(const redisReply *r, int64_t *out)
{
    char *end;
    long long n;

    if (r == NULL)
        return false;
    if (r->type == REDIS_REPLY_INTEGER) {
        *out = r->integer;
        return true;
    }
    if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS)
        return false;
    if (r->len == 0)
        return false;
    errno = 0;
    n = strtoll(r->str, &end, 10);
    if (errno != 0 || end != r->str + r->len)
        return false;
    *out = n;
    return true;
}

bool dq_reply_score_ms(const redisReply *r, int64_t *out)
{
    char *end;
    double d;

    if (dq_reply_int(r, out))
        return true;
    if (r == NULL || r->type != REDIS_REPLY_STRING || r->len == 0)
        return false;
    errno = 0;
    d = strtod(r->str, &end);
    if (errno != 0 || end != r->str + r->len || !isfinite(d) ||
        d > 9.2e18 || d < -9.2e18)
        return false;
    *out = (int64_t)llround(d);
    return true;
}

int dq_redis_eval_int(dq_queue *q, redisContext *c, dq_script *s,
                      int numkeys, int nargs, const char **args,
                      const size_t *lens, const char *bad_reply,
                      int64_t *out)
{
    redisReply *r;
    int64_t n;
    bool ok;
    int rc;

    r = dq_redis_eval(q, c, s, &rc, numkeys, nargs, args, lens);
    if (r == NULL)
        return rc;
    ok = dq_reply_int(r, &n);
    freeReplyObject(r);
    if (!ok)
        return dq_fail(q, DQ_EPROTO, "%s", bad_reply);
    *out = n;
    return DQ_OK;
}

/* ---- ZSet + hash layout ---------------------------------------------------- */

int dq_zh_enqueue(dq_queue *q, redisContext *c, const char *id,
                  const void *payload, size_t payload_len, int64_t due_ms)
{
    char z[128], p[128], due[32];
    int rc;

    dq_redis_key(q, DQ_ZH_ZSET, z, sizeof z);
    dq_redis_key(q, DQ_ZH_HASH, p, sizeof p);
    dq_redis_fmt_i64(due, due_ms);
    {
        const char *hset[4] = {"HSET", p, id, payload};
        size_t hlen[4] = {4, strlen(p), strlen(id), payload_len};
        const char *zadd[4] = {"ZADD", z, due, id};
        dq_redis_argv cmds[2] = {{4, hset, hlen}, {4, zadd, NULL}};
        redisReply *r = dq_redis_multi(q, c, &rc, 2, cmds);

        freeReplyObject(r);
    }
    return rc;
}

/* One chunk of dq_zh_enqueue_many: items[0..m-1], m <= DQ_ZH_CHUNK. */
static int zh_enqueue_chunk(dq_queue *q, redisContext *c, const char *z,
                            const char *p, const dq_enqueue_item *items,
                            size_t m, const char *const *clear_keys,
                            size_t nclear)
{
    size_t nh = 2 + 2 * m, nd = 2 + m, nz = 2 + 2 * m;
    const char **hv = NULL, **dv = NULL, **zv = NULL;
    size_t *hl = NULL;
    char (*due)[24] = NULL;
    dq_redis_argv cmds[10];
    redisReply *r;
    size_t k = 0;
    int rc = DQ_ENOMEM;

    hv = malloc(nh * sizeof *hv);
    hl = malloc(nh * sizeof *hl);
    dv = malloc(nd * sizeof *dv);
    zv = malloc(nz * sizeof *zv);
    due = malloc(m * sizeof *due);
    if (hv == NULL || hl == NULL || dv == NULL || zv == NULL || due == NULL) {
        rc = dq_fail(q, DQ_ENOMEM, "enqueue_many: out of memory");
        goto out;
    }
    hv[0] = "HSET";
    hl[0] = 4;
    hv[1] = p;
    hl[1] = strlen(p);
    dv[0] = "HDEL";
    zv[0] = "ZADD";
    zv[1] = z;
    for (size_t i = 0; i < m; i++) {
        hv[2 + 2 * i] = items[i].id;
        hl[2 + 2 * i] = strlen(items[i].id);
        hv[3 + 2 * i] = items[i].payload != NULL ? items[i].payload : "";
        hl[3 + 2 * i] = items[i].payload_len;
        dv[2 + i] = items[i].id;
        dq_redis_fmt_i64(due[i], items[i].due_ms);
        zv[2 + 2 * i] = due[i];
        zv[3 + 2 * i] = items[i].id;
    }
    cmds[k++] = (dq_redis_argv){(int)nh, hv, hl};
    /* Every HDEL shares dv but for its key: one argv array per key. */
    const char **dvs[8];
    size_t nd_made = 0;
    for (size_t j = 0; j < nclear; j++) {
        dvs[j] = malloc(nd * sizeof **dvs);
        if (dvs[j] == NULL) {
            rc = dq_fail(q, DQ_ENOMEM, "enqueue_many: out of memory");
            goto free_dvs;
        }
        nd_made++;
        memcpy(dvs[j], dv, nd * sizeof *dv);
        dvs[j][1] = clear_keys[j];
        cmds[k++] = (dq_redis_argv){(int)nd, dvs[j], NULL};
    }
    cmds[k++] = (dq_redis_argv){(int)nz, zv, NULL};
    r = dq_redis_multi(q, c, &rc, k, cmds);
    freeReplyObject(r);
free_dvs:
    for (size_t j = 0; j < nd_made; j++)
        free(dvs[j]);
out:
    free(hv);
    free(hl);
    free(dv);
    free(zv);
    free(due);
    return rc;
}

int dq_zh_enqueue_many(dq_queue *q, redisContext *c,
                       const dq_enqueue_item *items, size_t n,
                       const char *const *clear_keys, size_t nclear)
{
    char z[128], p[128];
    int rc = DQ_OK;

    if (nclear > 8)
        return dq_fail(q, DQ_EINVAL, "enqueue_many: %zu hashes to clear "
                       "(at most 8)", nclear);
    dq_redis_key(q, DQ_ZH_ZSET, z, sizeof z);
    dq_redis_key(q, DQ_ZH_HASH, p, sizeof p);
    for (size_t at = 0; at < n && rc == DQ_OK; at += DQ_ZH_CHUNK) {
        size_t m = n - at < DQ_ZH_CHUNK ? n - at : DQ_ZH_CHUNK;
        rc = zh_enqueue_chunk(q, c, z, p, items + at, m, clear_keys, nclear);
    }
    return rc;
}

int dq_zh_ack(dq_queue *q, redisContext *c, const char *id)
{
    char p[128];
    const char *argv[3] = {"HDEL", p, id};
    redisReply *r;
    int rc;

    dq_redis_key(q, DQ_ZH_HASH, p, sizeof p);
    r = dq_redis_cmd(q, c, &rc, 3, argv, NULL);
    freeReplyObject(r);
    return rc;
}

int dq_zh_cancel(dq_queue *q, redisContext *c, const char *id)
{
    char z[128], p[128];
    const char *zrem[3] = {"ZREM", z, id};
    const char *hdel[3] = {"HDEL", p, id};
    dq_redis_argv cmds[2] = {{3, zrem, NULL}, {3, hdel, NULL}};
    redisReply *r;
    int64_t removed;
    int rc;

    dq_redis_key(q, DQ_ZH_ZSET, z, sizeof z);
    dq_redis_key(q, DQ_ZH_HASH, p, sizeof p);
    r = dq_redis_multi(q, c, &rc, 2, cmds);
    if (r == NULL)
        return rc;
    if (!dq_reply_int(r->element[0], &removed))
        rc = dq_fail(q, DQ_EPROTO, "ZREM: expected an integer");
    else if (removed == 0)
        rc = dq_fail(q, DQ_ENOTFOUND, "cancel %s: no such pending task", id);
    freeReplyObject(r);
    return rc;
}

int dq_zh_reschedule(dq_queue *q, redisContext *c, const char *id,
                     int64_t due_ms)
{
    char z[128], due[32];
    const char *zscore[3] = {"ZSCORE", z, id};
    const char *zadd[5] = {"ZADD", z, "XX", due, id};
    dq_redis_argv cmds[2] = {{3, zscore, NULL}, {5, zadd, NULL}};
    redisReply *r;
    int rc;

    dq_redis_key(q, DQ_ZH_ZSET, z, sizeof z);
    snprintf(due, sizeof due, "%lld", (long long)due_ms);
    r = dq_redis_multi(q, c, &rc, 2, cmds);
    if (r == NULL)
        return rc;
    if (r->element[0]->type == REDIS_REPLY_NIL)
        rc = dq_fail(q, DQ_ENOTFOUND, "reschedule %s: no such pending task", id);
    freeReplyObject(r);
    return rc;
}

int64_t dq_zh_pending(dq_queue *q, redisContext *c)
{
    char z[128];
    const char *argv[2] = {"ZCARD", z};
    redisReply *r;
    int64_t n;
    int rc;

    dq_redis_key(q, DQ_ZH_ZSET, z, sizeof z);
    r = dq_redis_cmd(q, c, &rc, 2, argv, NULL);
    if (r == NULL)
        return rc;
    if (!dq_reply_int(r, &n))
        n = dq_fail(q, DQ_EPROTO, "ZCARD: expected an integer");
    freeReplyObject(r);
    return n;
}

int dq_redis_pipeline_ok(dq_queue *q, redisContext *c, size_t n,
                         const dq_redis_argv *cmds, redisReply **replies)
{
    int rc = dq_redis_pipeline(q, c, n, cmds, replies);

    for (size_t i = 0; i < n && rc == DQ_OK; i++)
        rc = dq_reply_error(q, replies[i], cmds[i].argv[0]);
    if (rc != DQ_OK)
        for (size_t i = 0; i < n; i++)
            if (replies[i] != NULL) {
                freeReplyObject(replies[i]);
                replies[i] = NULL;
            }
    return rc;
}

/* A malloc'd, NUL-terminated copy of a bulk-string reply (nil or NULL r:
 * an empty one).  NULL on allocation failure. */
unsigned char *dq_reply_copy(const redisReply *r, size_t *len)
{
    size_t n = r != NULL && r->type == REDIS_REPLY_STRING ? r->len : 0;
    unsigned char *b = malloc(n + 1);

    *len = 0;
    if (b == NULL)
        return NULL;
    if (n > 0)
        memcpy(b, r->str, n);
    b[n] = '\0';
    *len = n;
    return b;
}

int dq_zh_find_due(dq_queue *q, redisContext *c, int64_t now_ms,
                   char id[DQ_ID_MAX], int64_t *due_ms, bool *found)
{
    char z[128], now[32];
    const char *argv[8] = {"ZRANGEBYSCORE", z, "-inf", now,
                           "WITHSCORES", "LIMIT", "0", "1"};
    redisReply *r;
    int rc = DQ_OK;

    *found = false;
    dq_redis_key(q, DQ_ZH_ZSET, z, sizeof z);
    dq_redis_fmt_i64(now, now_ms);
    r = dq_redis_cmd(q, c, &rc, 8, argv, NULL);
    if (r == NULL)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY || (r->elements != 0 && r->elements != 2)) {
        rc = dq_fail(q, DQ_EPROTO, "ZRANGEBYSCORE: unexpected reply");
        goto free_reply;
    }
    if (r->elements == 0)
        goto free_reply;
    if (r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[0]->len == 0 || r->element[0]->len >= DQ_ID_MAX ||
        !dq_reply_score_ms(r->element[1], due_ms)) {
        rc = dq_fail(q, DQ_EPROTO, "ZRANGEBYSCORE: bad member or score");
        goto free_reply;
    }
    memcpy(id, r->element[0]->str, r->element[0]->len);
    id[r->element[0]->len] = '\0';
    *found = true;
free_reply:
    freeReplyObject(r);
    return rc;
}

int dq_zh_remove_fetch(dq_queue *q, redisContext *c, const char *id,
                       int64_t *removed, unsigned char **payload,
                       size_t *len)
{
    char z[128], p[128];
    const char *zrem[3] = {"ZREM", z, id};
    const char *hget[3] = {"HGET", p, id};
    const dq_redis_argv cmds[2] = {{3, zrem, NULL}, {3, hget, NULL}};
    redisReply *rep[2];
    int rc;

    *removed = 0;
    *payload = NULL;
    *len = 0;
    dq_redis_key(q, DQ_ZH_ZSET, z, sizeof z);
    dq_redis_key(q, DQ_ZH_HASH, p, sizeof p);
    if ((rc = dq_redis_pipeline_ok(q, c, 2, cmds, rep)) != DQ_OK)
        return rc;
    if (!dq_reply_int(rep[0], removed) ||
        (rep[1]->type != REDIS_REPLY_STRING && rep[1]->type != REDIS_REPLY_NIL)) {
        rc = dq_fail(q, DQ_EPROTO, "ZREM/HGET: unexpected reply");
        goto free_replies;
    }
    *payload = dq_reply_copy(rep[1], len);
    if (*payload == NULL)
        rc = dq_fail(q, DQ_ENOMEM, "claim %s: out of memory%s", id,
                     *removed ? " (task removed, lost)" : "");
free_replies:
    freeReplyObject(rep[0]);
    freeReplyObject(rep[1]);
    return rc;
}

int dq_zh_take_payload(dq_queue *q, redisContext *c, const char *id,
                       unsigned char **payload, size_t *len, bool *found)
{
    char p[128];
    const char *hget[3] = {"HGET", p, id};
    const char *hdel[3] = {"HDEL", p, id};
    const dq_redis_argv cmds[2] = {{3, hget, NULL}, {3, hdel, NULL}};
    redisReply *r[2];
    int rc;

    *payload = NULL;
    *len = 0;
    *found = false;
    dq_redis_key(q, DQ_ZH_HASH, p, sizeof p);
    if ((rc = dq_redis_pipeline_ok(q, c, 2, cmds, r)) != DQ_OK)
        return rc;
    if (r[0]->type == REDIS_REPLY_STRING) {
        *payload = dq_reply_copy(r[0], len);
        if (*payload == NULL)
            rc = dq_fail(q, DQ_ENOMEM, "claim %s: out of memory", id);
        else
            *found = true;
    } else if (r[0]->type != REDIS_REPLY_NIL) {
        rc = dq_fail(q, DQ_EPROTO, "claim %s: HGET: unexpected reply type %d",
                     id, r[0]->type);
    }
    freeReplyObject(r[0]);
    freeReplyObject(r[1]);
    return rc;
}

/* ---- Ready-made ops on the ZSet + hash layout ------------------------------ */

/* The connection of a q->priv whose first member is redisContext *c. */
static redisContext *zh_conn(const dq_queue *q)
{
    return *(redisContext *const *)q->priv;
}

int dq_zh_priv_open(dq_queue *q, size_t size)
{
    redisContext **p = calloc(1, size);
    int rc;

    if (p == NULL)
        return dq_fail(q, DQ_ENOMEM, "%s: out of memory", q->s->name);
    rc = dq_redis_connect(q, NULL, DQ_SOCK_TIMEOUT_MS, p);
    if (rc != DQ_OK) {
        free(p);
        return rc;
    }
    q->priv = p;
    return DQ_OK;
}

void dq_zh_op_close(dq_queue *q)
{
    if (q->priv == NULL)
        return;
    redisFree(zh_conn(q));
    free(q->priv);
    q->priv = NULL;
}

int dq_zh_op_enqueue(dq_queue *q, const char *id, const void *payload,
                     size_t payload_len, int64_t due_ms)
{
    return dq_zh_enqueue(q, zh_conn(q), id, payload, payload_len, due_ms);
}

int dq_zh_op_enqueue_many(dq_queue *q, const dq_enqueue_item *items,
                          size_t n)
{
    return dq_zh_enqueue_many(q, zh_conn(q), items, n, NULL, 0);
}

int dq_zh_op_ack(dq_queue *q, const dq_task *t)
{
    return dq_zh_ack(q, zh_conn(q), t->id);
}

int dq_zh_op_cancel(dq_queue *q, const char *id)
{
    return dq_zh_cancel(q, zh_conn(q), id);
}

int dq_zh_op_reschedule(dq_queue *q, const char *id, int64_t due_ms)
{
    return dq_zh_reschedule(q, zh_conn(q), id, due_ms);
}

int64_t dq_zh_op_pending(dq_queue *q)
{
    return dq_zh_pending(q, zh_conn(q));
}

int dq_zh_op_purge(dq_queue *q)
{
    return dq_redis_purge(q, zh_conn(q));
}

int dq_zh_op_exists(dq_queue *q)
{
    return dq_redis_exists(q, zh_conn(q));
}

/* ---- Replica acknowledgement (option wait) ------------------------------- */

int dq_redis_wait_replicas(dq_queue *q, redisContext *c, int64_t n,
                           int64_t timeout_ms, const char *what)
{
    char ns[24], ts[24];
    const char *argv[3] = {"WAIT", ns, ts};
    redisReply *r;
    int64_t got = 0;
    int rc;

    if (n <= 0)
        return DQ_OK;
    if (c == NULL)
        return dq_fail(q, DQ_EINVAL, "%s: no connection to WAIT on", what);
    /* A connection replaced since the write counts none of its writes:
     * WAIT on it would confirm nothing. */
    if (c->err != 0)
        return dq_fail(q, DQ_EIO, "%s: connection lost after the write, "
                       "replication not confirmed: %s", what, c->errstr);
    snprintf(ns, sizeof ns, "%lld", (long long)n);
    snprintf(ts, sizeof ts, "%lld", (long long)(timeout_ms > 0 ? timeout_ms
                                                               : 1));
    r = dq_redis_cmd(q, c, &rc, 3, argv, NULL);
    if (r == NULL) {
        char why[sizeof q->err];

        snprintf(why, sizeof why, "%s", q->err);
        return dq_fail(q, rc, "%s: replication not confirmed: %.180s", what,
                       why);
    }
    if (!dq_reply_int(r, &got))
        rc = dq_fail(q, DQ_EPROTO, "%s: WAIT: expected an integer", what);
    else if (got < n)
        rc = dq_fail(q, DQ_EREPLICA, "%s: %lld of %lld replicas acknowledged "
                     "within %s ms (WAIT): not confirmed", what,
                     (long long)got, (long long)n, ts);
    freeReplyObject(r);
    return rc;
}

int dq_redis_zset_each(dq_queue *q, redisContext *c, const char *key,
                       dq_id_fn fn, void *arg)
{
    enum { PAGE = 1000 };

    for (long long from = 0;; from += PAGE) {
        char lo[24], hi[24];
        const char *argv[4] = {"ZRANGE", key, lo, hi};
        redisReply *r;
        int rc = DQ_OK;
        size_t n;

        snprintf(lo, sizeof lo, "%lld", from);
        snprintf(hi, sizeof hi, "%lld", from + PAGE - 1);
        if ((r = dq_redis_cmd(q, c, &rc, 4, argv, NULL)) == NULL)
            return rc;
        if (r->type != REDIS_REPLY_ARRAY) {
            freeReplyObject(r);
            return dq_fail(q, DQ_EPROTO, "ZRANGE %s: expected an array", key);
        }
        n = r->elements;
        for (size_t i = 0; i < n && rc == DQ_OK; i++)
            if (r->element[i]->type == REDIS_REPLY_STRING)
                rc = fn(arg, r->element[i]->str);
        freeReplyObject(r);
        if (rc != DQ_OK || n < PAGE)
            return rc;
    }
}
