/* fault_busy_redis.c -- busy-redis:MS[:AT_MS]: a Lua script keeps the
 * harness-owned redis-server busy for MS, past busy-reply-threshold
 * (faults.h).
 *
 * Redis runs one script at a time and nothing else meanwhile; once a
 * script has run longer than busy-reply-threshold (lua-time-limit before
 * 7.0; default 5000 ms) the server answers every other command with
 * "BUSY Redis is busy running a script" until it ends, except SCRIPT KILL
 * and SHUTDOWN NOSAVE (https://redis.io/commands/script-kill/).  So the
 * fault sets the threshold to T = min(100, MS/2) ms (at least 1) before
 * the run and puts the old value back after it, and in the window sends,
 * on a connection of its own and without waiting for the reply, a
 * read-only script that loops on TIME until MS have passed by the
 * server's clock.  For T ms every client waits; then every command gets
 * BUSY at once.  The window ends when the script's reply arrives (it ends
 * by itself); a trial that ends inside it sends SCRIPT KILL on the admin
 * connection.  Clients must carry on: the harness retries acks and
 * enqueues refused with BUSY (nothing ran), claims refused with it are
 * counted as errors and tried again; the latency sampler
 * (trial_sampler.c) shows the stall, at least MS.
 *
 * F records: begin "ms=MS,threshold_ms=T" once the script was sent; end
 * "ms=MS,threshold_ms=T,busy_replies=B,held_ms=M": B the BUSY replies the
 * server gave meanwhile (INFO errorstats, errorstat_BUSY), M the time from
 * sending the script to its reply; "interrupted=1" when cut short.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "../strategies/rconn.h"
#include "faults.h"

#define THRESHOLD_MAX_MS 100
#define REPLY_SLACK_MS 10000 /* past MS, on the script's own socket */

/* The busy loop: ARGV[1] ms by the server's clock; returns its rounds. */
static const char busy_src[] =
    "local t = redis.call('TIME')\n"
    "local stop = t[1] * 1000000 + t[2] + tonumber(ARGV[1]) * 1000\n"
    "local n = 0\n"
    "repeat\n"
    "  t = redis.call('TIME')\n"
    "  n = n + 1\n"
    "until t[1] * 1000000 + t[2] >= stop\n"
    "return n\n";

/* What the row keeps between its hooks (c->state[index]). */
typedef struct busy {
    dq_queue q;                /* bare handle of the script's connection */
    redisContext *c;           /* NULL until prepare, or once read */
    bool sent;                 /* the script is running (reply unread) */
    char old_threshold[32];    /* "" until read */
    int64_t threshold_ms;
    int64_t busy0;             /* errorstat_BUSY at the begin */
    int64_t sent_us;           /* mono time the script was sent */
} busy;

static int br_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    return dq_fault_parse_window(f, "busy-redis", arg, narg, err, errlen);
}

static void br_format(const dq_fault *f, char *buf, size_t len)
{
    if (f->at_ms >= 0)
        snprintf(buf, len, "busy-redis:%" PRId64 ":%" PRId64, f->ms,
                 f->at_ms);
    else
        snprintf(buf, len, "busy-redis:%" PRId64, f->ms);
}

/* A command on the admin connection; NULL with the reason in c->err. */
static redisReply *admin(dq_fault_ctx *c, int argc, const char **argv)
{
    int rc;
    redisReply *r = dq_redis_cmd(c->admin, c->redis, &rc, argc, argv, NULL);

    if (r == NULL)
        dq_fault_fail(c, "busy-redis: %s: %s", argv[0], c->admin->err);
    return r;
}

/* errorstat_BUSY's count from INFO errorstats (0 when absent), or -1. */
static int64_t busy_count(dq_fault_ctx *c)
{
    const char *argv[2] = {"INFO", "errorstats"};
    redisReply *r = admin(c, 2, argv);
    const char *s;
    int64_t n = 0;

    if (r == NULL)
        return -1;
    if (r->type == REDIS_REPLY_STRING &&
        (s = strstr(r->str, "errorstat_BUSY:count=")) != NULL)
        n = strtoll(s + strlen("errorstat_BUSY:count="), NULL, 10);
    freeReplyObject(r);
    return n;
}

/* CONFIG SET lua-time-limit (busy-reply-threshold's name before 7.0, an
 * alias since) to v. */
static int set_threshold(dq_fault_ctx *c, const char *v)
{
    const char *argv[4] = {"CONFIG", "SET", "lua-time-limit", v};
    redisReply *r = admin(c, 4, argv);

    if (r == NULL)
        return -1;
    freeReplyObject(r);
    return 0;
}

/* The old threshold, the new one, the script's own connection. */
static int br_prepare(dq_fault_ctx *c, const dq_fault *f)
{
    const char *get[3] = {"CONFIG", "GET", "lua-time-limit"};
    busy *b = calloc(1, sizeof *b);
    redisReply *r;
    char v[32];

    if (b == NULL)
        return dq_fault_fail(c, "busy-redis: out of memory");
    c->state[c->index] = b;
    if ((r = admin(c, 3, get)) == NULL)
        return -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING)
        snprintf(b->old_threshold, sizeof b->old_threshold, "%s",
                 r->element[1]->str);
    freeReplyObject(r);
    if (b->old_threshold[0] == '\0')
        return dq_fault_fail(c, "busy-redis: CONFIG GET lua-time-limit: "
                             "unexpected reply");
    b->threshold_ms = f->ms / 2 < THRESHOLD_MAX_MS ? f->ms / 2
                                                   : THRESHOLD_MAX_MS;
    if (b->threshold_ms < 1)
        b->threshold_ms = 1;
    snprintf(v, sizeof v, "%" PRId64, b->threshold_ms);
    if (set_threshold(c, v) != 0)
        return -1;
    b->q = *c->admin;
    b->q.cfg.queue = b->q.queue;
    b->q.cfg.consumer = "dqlab-busy";
    b->q.redis_conn = NULL;
    b->q.redis_confirm = NULL;
    b->q.redis_sock_timeout_ms = 0;
    if (dq_redis_connect(&b->q, NULL, f->ms + REPLY_SLACK_MS, &b->c) != DQ_OK)
        return dq_fault_fail(c, "busy-redis: %s", b->q.err);
    return 0;
}

/* Sends the script without reading its reply. */
static int send_script(dq_fault_ctx *c, busy *b, const dq_fault *f)
{
    char ms[24];
    const char *argv[4] = {"EVAL", busy_src, "0", ms};
    int done = 0;

    snprintf(ms, sizeof ms, "%" PRId64, f->ms);
    if (redisAppendCommandArgv(b->c, 4, argv, NULL) != REDIS_OK)
        return dq_fault_fail(c, "busy-redis: EVAL: %s", b->c->errstr);
    while (!done)
        if (redisBufferWrite(b->c, &done) != REDIS_OK)
            return dq_fault_fail(c, "busy-redis: EVAL: %s", b->c->errstr);
    b->sent = true;
    b->sent_us = dq_mono_us();
    return 0;
}

static int br_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    busy *b = c->state[c->index];
    char arg[64];

    if ((b->busy0 = busy_count(c)) < 0 || send_script(c, b, f) != 0)
        return -1;
    snprintf(arg, sizeof arg, "ms=%" PRId64 ",threshold_ms=%" PRId64, f->ms,
             b->threshold_ms);
    *hold_ms = f->ms;
    return dq_fault_record(c, f, "begin", arg);
}

/* Reads the script's reply (it ends by itself at MS by the server's
 * clock).  Returns 0, or -1 with c->err. */
static int read_reply(dq_fault_ctx *c, busy *b)
{
    void *v = NULL;
    redisReply *r;
    bool ok;

    b->sent = false;
    if (redisGetReply(b->c, &v) != REDIS_OK)
        return dq_fault_fail(c, "busy-redis: the script's reply: %s",
                             b->c->errstr);
    r = v;
    ok = r != NULL && r->type == REDIS_REPLY_INTEGER;
    if (!ok)
        dq_fault_fail(c, "busy-redis: the script: %.200s",
                      r != NULL && r->type == REDIS_REPLY_ERROR
                          ? r->str : "unexpected reply");
    freeReplyObject(r);
    return ok ? 0 : -1;
}

static int br_end(dq_fault_ctx *c, const dq_fault *f)
{
    busy *b = c->state[c->index];
    char arg[128];
    int64_t held_ms, n;

    if (read_reply(c, b) != 0)
        return -1;
    held_ms = (dq_mono_us() - b->sent_us) / 1000;
    if ((n = busy_count(c)) < 0)
        return -1;
    snprintf(arg, sizeof arg, "ms=%" PRId64 ",threshold_ms=%" PRId64
             ",busy_replies=%" PRId64 ",held_ms=%" PRId64, f->ms,
             b->threshold_ms, n - b->busy0, held_ms);
    return dq_fault_record(c, f, "end", arg);
}

/* Ends a script still running: SCRIPT KILL (allowed while busy), then
 * its reply, whatever it is. */
static void kill_script(dq_fault_ctx *c, busy *b)
{
    const char *argv[2] = {"SCRIPT", "KILL"};
    redisReply *r;
    void *v = NULL;

    if (!b->sent)
        return;
    b->sent = false;
    if (c->redis != NULL && (r = admin(c, 2, argv)) != NULL)
        freeReplyObject(r);
    if (redisGetReply(b->c, &v) == REDIS_OK)
        freeReplyObject(v);
}

static int br_cut(dq_fault_ctx *c, const dq_fault *f)
{
    kill_script(c, c->state[c->index]);
    dq_fault_record(c, f, "end", "interrupted=1");
    return 1;
}

static void br_finish(dq_fault_ctx *c, const dq_fault *f)
{
    busy *b = c->state[c->index];

    (void)f;
    if (b == NULL)
        return;
    if (b->c != NULL) {
        kill_script(c, b);
        redisFree(b->c);
    }
    if (b->old_threshold[0] != '\0' && c->redis != NULL)
        set_threshold(c, b->old_threshold); /* best effort */
    free(b);
    c->state[c->index] = NULL;
}

/* A claim that took its task in one command and lost its next one to
 * BUSY (zpopmin's ZPOPMIN, then HGET) loses that task: allowed unless the
 * strategy survives a consumer's crash (a lease brings it back). */
static bool br_loss_allowed(const char *arg, unsigned flags)
{
    (void)arg;
    return !(flags & DQ_G_SURVIVES_CONSUMER_CRASH);
}

static void br_describe(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "the redis-server kept busy by a Lua script for %"
             PRId64 " ms (every other command refused with BUSY)", f->ms);
}

const dq_fault_ops dq_fault_busy_redis = {
    .name = "busy-redis",
    .usage = "busy-redis:MS[:AT_MS]",
    .parse = br_parse,
    .format = br_format,
    .needs = DQ_FAULT_NEEDS_OWN_SERVER | DQ_FAULT_NEEDS_REDIS |
             DQ_FAULT_ONE_PER_TRIAL,
    .timing = DQ_FAULT_AT,
    .prepare = br_prepare,
    .begin = br_begin,
    .end = br_end,
    .cut = br_cut,
    .finish = br_finish,
    .loss = DQ_LOSS_DUE,
    .loss_allowed = br_loss_allowed,
    .describe = br_describe,
    .mechanism = "A long Lua script holds the server: Redis runs one script "
                 "at a time and nothing beside it, and past "
                 "busy-reply-threshold it answers every other command with "
                 "BUSY until the script ends.  Nothing is lost inside Redis "
                 "and a refused command did not run, so clients that retry "
                 "carry on; tasks falling due meanwhile are delivered late, "
                 "in a burst.  A strategy's own large script (a big batch "
                 "claim) stalls every other client the same way, for "
                 "shorter: the latency sampler shows it.",
};
