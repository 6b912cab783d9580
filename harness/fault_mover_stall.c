/* fault_mover_stall.c -- mover-stall[:AT_MS]: the trial's subscribed and
 * blocked connections are dropped once (faults.h).
 *
 * CLIENT LIST (https://redis.io/commands/client-list/) gives one line per
 * connection, "id=7 addr=... name=dqlab:Q:c0 ... flags=P ..."; a
 * connection is the trial's when its name starts with the queue's prefix
 * (rconn.h client names: every connection the strategies open is named
 * so), and it is dropped (CLIENT KILL ID) when it is subscribed (flag P)
 * or blocked in a command (flag b: BLPOP, BLMOVE, BZPOPMIN): the parts that
 * move or wake tasks lose their connection and must reconnect.  Nothing
 * else on the server is touched, so it may run on a server that is not
 * dqlab's.  Only for strategies whose consumers block: a polling one has
 * nothing to drop.
 *
 * A fault that did nothing is never recorded as done: CLIENT LIST refused
 * (a user without CLIENT) fails the trial before it starts; finding no
 * such connection fails it without a window; a CLIENT KILL refused, or
 * every connection found gone before it, fails it after a begin whose end
 * says "error=1".  F records: begin "" right before the kills, end
 * "pubsub=N,blocked=M".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "../strategies/rconn.h"
#include "faults.h"

#define MAX_TARGETS 4096

static int ms_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    if (narg > 1) {
        snprintf(err, errlen, "expected mover-stall[:AT_MS]");
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

static void ms_format(const dq_fault *f, char *buf, size_t len)
{
    if (f->at_ms >= 0)
        snprintf(buf, len, "mover-stall:%" PRId64, f->at_ms);
    else
        snprintf(buf, len, "mover-stall");
}

/* One CLIENT LIST line: its id, and whether it is the trial's (its name
 * starts with prefix) and subscribed or blocked. */
static void client_line(const char *line, const char *prefix, long long *id,
                        bool *ours, bool *sub, bool *blocked)
{
    char buf[1024], *save = NULL;
    size_t plen = strlen(prefix);

    *id = -1;
    *ours = *sub = *blocked = false;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *tok = strtok_r(buf, " \r", &save); tok != NULL;
         tok = strtok_r(NULL, " \r", &save)) {
        if (strncmp(tok, "id=", 3) == 0) {
            *id = strtoll(tok + 3, NULL, 10);
        } else if (strncmp(tok, "name=", 5) == 0) {
            *ours = strncmp(tok + 5, prefix, plen) == 0;
        } else if (strncmp(tok, "flags=", 6) == 0) {
            *sub = strchr(tok + 6, 'P') != NULL;
            *blocked = strchr(tok + 6, 'b') != NULL;
        }
    }
}

/* The ids of the trial's connections to drop into ids (up to max), and how
 * many are subscribed / blocked.  Returns how many, or -1 with c->err
 * when Redis refused CLIENT LIST or its reply was not a string. */
static int stall_targets(dq_fault_ctx *c, long long *ids, int max,
                         long long *npubsub, long long *nblocked)
{
    const char *cl[2] = {"CLIENT", "LIST"};
    char prefix[DQ_CLIENT_NAME_MAX], line[1024];
    redisReply *r;
    int n = 0, rc;

    *npubsub = *nblocked = 0;
    dq_redis_client_prefix(c->admin->queue, prefix, sizeof prefix);
    r = dq_redis_cmd(c->admin, c->redis, &rc, 2, cl, NULL);
    if (r == NULL && rc == DQ_EIO) /* a connection a restart broke */
        r = dq_redis_cmd(c->admin, c->redis, &rc, 2, cl, NULL);
    if (r == NULL || r->type != REDIS_REPLY_STRING) {
        const char *why = r == NULL ? c->admin->err : "unexpected reply";
        dq_fault_fail(c, "mover-stall: CLIENT LIST failed: %.200s%s", why,
                      strstr(why, "NOPERM") != NULL
                          ? " (the fault needs a Redis user allowed the "
                            "CLIENT command)" : "");
        if (r != NULL)
            freeReplyObject(r);
        return -1;
    }
    for (const char *s = r->str; *s;) {
        size_t len = strcspn(s, "\n");
        long long id;
        bool ours, sub, blocked;

        snprintf(line, sizeof line, "%.*s", (int)len, s);
        s += len + (s[len] == '\n');
        client_line(line, prefix, &id, &ours, &sub, &blocked);
        if (!ours || id < 0 || !(sub || blocked) || n >= max)
            continue;
        ids[n++] = id;
        if (sub)
            (*npubsub)++;
        else
            (*nblocked)++;
    }
    freeReplyObject(r);
    return n;
}

/* CLIENT KILL ID each target.  A target that closed meanwhile ("No such
 * client") is skipped; any other error reply (NOPERM: the user may list
 * but not kill) fails.  Returns the number dropped, or -1 with c->err. */
static int stall_kill(dq_fault_ctx *c, const long long *ids, int n)
{
    int killed = 0, rc;

    for (int i = 0; i < n; i++) {
        char id[32];
        const char *kid[4] = {"CLIENT", "KILL", "ID", id};
        redisReply *k;

        snprintf(id, sizeof id, "%lld", ids[i]);
        k = dq_redis_cmd(c->admin, c->redis, &rc, 4, kid, NULL);
        if (k != NULL) {
            killed++;
            freeReplyObject(k);
        } else if (rc != DQ_EREDIS ||
                   strstr(c->admin->err, "No such client") == NULL) {
            return dq_fault_fail(c, "mover-stall: Redis refused CLIENT KILL "
                                 "ID %s: %.200s", id, c->admin->err);
        }
    }
    return killed;
}

/* Before the run: the user may run CLIENT LIST, or the fault could never
 * act. */
static int ms_prepare(dq_fault_ctx *c, const dq_fault *f)
{
    long long id, np, nb;

    (void)f;
    return stall_targets(c, &id, 1, &np, &nb) < 0 ? -1 : 0;
}

static int ms_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    long long *ids = malloc(MAX_TARGETS * sizeof *ids), np, nb;
    char arg[80];
    int n, killed;

    *hold_ms = 0;
    if (ids == NULL)
        return dq_fault_fail(c, "mover-stall: out of memory");
    n = stall_targets(c, ids, MAX_TARGETS, &np, &nb);
    if (n == 0)
        dq_fault_fail(c, "mover-stall: no connection of queue '%s' (named "
                      "%s%s:...) was subscribed or blocked: nothing to drop",
                      c->admin->queue, DQ_CLIENT_NAME_PREFIX,
                      c->admin->queue);
    if (n <= 0 || dq_fault_record(c, f, "begin", "") != 0) {
        free(ids);
        return -1;
    }
    killed = stall_kill(c, ids, n);
    free(ids);
    if (killed <= 0) {
        char why[300];
        if (killed == 0)
            dq_fault_fail(c, "mover-stall: every connection found had "
                          "closed before CLIENT KILL: nothing dropped");
        snprintf(why, sizeof why, "%s", c->err);
        dq_fault_record(c, f, "end", "error=1");
        return dq_fault_fail(c, "%s", why);
    }
    snprintf(arg, sizeof arg, "pubsub=%lld,blocked=%lld", np, nb);
    return dq_fault_record(c, f, "end", arg);
}

/* Events published while a subscriber is away are lost, unless pending
 * tasks outlive their consumers. */
static bool ms_loss_allowed(const char *arg, unsigned flags)
{
    (void)arg;
    return !(flags & DQ_G_SURVIVES_PROCESS_EXIT);
}

static void ms_describe(const dq_fault *f, char *buf, size_t len)
{
    (void)f;
    snprintf(buf, len, "the Pub/Sub and blocked connections killed");
}

const dq_fault_ops dq_fault_mover_stall = {
    .name = "mover-stall",
    .usage = "mover-stall[:AT_MS]",
    .parse = ms_parse,
    .format = ms_format,
    .needs = DQ_FAULT_NEEDS_REDIS | DQ_FAULT_NEEDS_BLOCKING,
    .timing = DQ_FAULT_AT,
    .prepare = ms_prepare,
    .begin = ms_begin,
    .loss = DQ_LOSS_DUE,
    .loss_allowed = ms_loss_allowed,
    .describe = ms_describe,
    .mechanism = "The connections that move or wake tasks (Pub/Sub "
                 "subscriptions, blocked BLPOP/BLMOVE/BZPOPMIN clients) are "
                 "killed with CLIENT KILL; the strategy must reconnect and "
                 "resubscribe.  Events published while a subscriber is away "
                 "are lost.",
};
