/* expiry.c -- delay queue driven by Redis keyspace expiry notifications.
 *
 * How it works
 * ------------
 * The task itself never expires: its payload and due time live in two
 * hashes, because an expired key's value is gone by the time the event is
 * published.  A "shadow" key with a TTL of (due - now) stands for the
 * timer; when Redis deletes it, it publishes the key name on
 * __keyevent@<db>__:expired, and every subscriber races to take the task.
 *
 *   dq:{Q}:p          hash   id -> payload
 *   dq:{Q}:d          hash   id -> due time (ms since the epoch, decimal)
 *   dq:{Q}:s:<id>     string "1" with PX = due - now   (the timer)
 *   dq:{Q}:ready      list   ids already due at enqueue time
 *   dq:{Q}:wake       Pub/Sub channel: "something was pushed on ready"
 *
 * Commands per task:
 *   enqueue  1 EVALSHA: HSET p, HSET d, then SET s:<id> 1 PX <ms>; or, when
 *            the due time is less than 1 ms away or past (SET with PX <= 0
 *            is an error and would give no `expired` event at all), RPUSH
 *            ready + PUBLISH wake instead.  Past-due tasks therefore go
 *            out at once and do not depend on an event being heard: they
 *            wait on the ready list like in a plain work queue.
 *   claim    every subscriber receives every expired event of the db (one
 *            Pub/Sub message each, filtered here by the dq:{Q}:s: prefix)
 *            and runs 1 EVALSHA (HGET p, HGET d, HDEL p, HDEL d): the
 *            first one gets the payload, the others get "gone" and count a
 *            lost race -- N subscribers cost N round trips per task.  A
 *            ready-list task costs 1 EVALSHA (LPOP ready + the same).
 *   ack      nothing (at-most-once: the task left Redis when claimed).
 *
 * Open: a second, dedicated connection SUBSCRIBEs to the expired channel
 * and dq:{Q}:wake, waiting for both confirmations: events published before
 * the confirmation are not delivered to this handle.  Before that (option
 * config=1, the default) it makes sure notify-keyspace-events holds 'E'
 * (keyevent channel) and 'x' (expired events; 'A' includes it), adding the
 * missing ones to the old flags so whatever others enabled stays on.
 *
 * Server setting: notify-keyspace-events is server-wide, so on a server
 * that is not ours (--redis) dqlab must put back what it found, and only
 * when no dqlab handle still needs it: consumers of several queues, in
 * several processes, share it.  There is no lock to take (dqlab touches no
 * key outside dq:{Q}:*, and CONFIG cannot run in a script), so each
 * subscriber connection carries the record in its client name:
 * "dqlab:<queue>:<consumer>:nke=<orig>,<set>" (rconn.h client names), orig
 * the value before any dqlab changed it, set the value dqlab left (the
 * server's spelling, from CONFIG GET; equal to orig when nothing had to
 * change).  A record lives exactly as long as its connection: a killed
 * consumer's vanishes with it.
 *   open    name the connection "...:nke=?" (deciding), CLIENT ID; wait
 *           (at most NKE_WAIT_MS) until no older connection (lower id) is
 *           still deciding; CONFIG GET; take orig and set from another
 *           subscriber's record if there is one (preferring one that
 *           changed the value), else orig = set = the current value; if
 *           'Ex' is missing, CONFIG SET it and read set back; rename the
 *           connection "...:nke=<orig>,<set>"; SUBSCRIBE.  A reconnect
 *           keeps the handle's record and only turns 'Ex' on again if it
 *           is off (a restarted server: CONFIG SET is not persisted).
 *   close   CLIENT LIST; if another connection anywhere is named
 *           "...:nke=", it still needs the setting: leave it.  Else, if
 *           CONFIG GET still shows set (nobody changed it since), CONFIG
 *           SET orig; then CLIENT LIST again, and if a subscriber
 *           appeared meanwhile, turn 'Ex' on again for it.
 * Races accepted: (1) a handle opening while the last one closes can be
 * subscribed for about a round trip while the closer has turned events off
 * and not yet back on; a shadow key that expires in that moment is unheard
 * (the closer's second CLIENT LIST bounds the gap).  (2) Two handles
 * closing at once may each see the other and both leave the setting on;
 * so may a handle that found 'Ex' on while another, opening at the same
 * time on an older connection, was turning it on and had not yet written
 * its record.  Left on is the safe side: no task depends on it being off.
 * (3) A process killed with SIGKILL (or a handle never closed) restores
 * nothing; its record disappears with its connection, and a later run
 * that finds 'Ex' on with no record takes that as the original.  (4) A
 * value someone else changed while dqlab ran is theirs: it is not
 * restored.  Only subscribing handles touch the setting (a subscribe=0
 * handle needs no events).  When CONFIG is refused (renamed command, ACL,
 * managed Redis) open fails with DQ_EREDIS telling the operator to enable
 * 'Ex' on the server and open with config=0; when CLIENT SETNAME is
 * refused (ACL -client) and 'Ex' is off, open fails the same way, since
 * the old value could not be restored.
 *
 * Guarantee: at-most-once (the claim script removes the task).  Several
 * concurrent subscribers never get one task twice (the HGET+HDEL script is
 * atomic).  No due order: keys expiring close together are found by the
 * active-expire cycle in sampling order, not TTL order.  Not set:
 * SURVIVES_PROCESS_EXIT -- pending tasks do live in Redis, but Pub/Sub is
 * fire-and-forget (https://redis.io/docs/manual/pubsub/, "at-most-once
 * message delivery"): a shadow key that expires while no subscriber is
 * connected (all consumers restarting, a subscriber's connection dropped)
 * is deleted and its event is heard by nobody.  The task stays in dq:{Q}:p
 * forever (counted by pending()) but is never delivered.  There is no
 * sweeper that rescues such tasks; that loss is the point of measuring
 * this design (claim C18).
 *
 * Timing: Redis does not publish `expired` when the TTL reaches zero but
 * when it finds the key expired, either on access (nobody accesses shadow
 * keys) or in the active-expire cycle, which runs `hz` times a second and
 * samples a few keys with a TTL per round, so with many pending keys the
 * lateness grows.  See "Timing of expired events" in
 * https://redis.io/docs/manual/keyspace-notifications/ and src/expire.c.
 *
 * Failure modes: subscriber outage loses tasks (above); a Redis restart
 * without persistence loses everything, with persistence loses the timers
 * that expired while it was down (Redis deletes them at load without a
 * subscriber listening); a subscriber that never claims (a producer-only
 * handle) buffers every event of the db in memory -- open producer-only
 * handles with subscribe=0; a subscriber that falls behind is disconnected
 * by the server once its output buffer passes client-output-buffer-limit
 * pubsub (default 32mb, or 8mb for 60 s) and the events queued for it are
 * gone (other subscribers still get them); every subscriber receives every
 * expired event of the db, of every queue, so N consumers cost N messages
 * and N claim round trips per task; early delivery is impossible: an event for a
 * task not yet due by this handle's clock (clock skew) leaves the task in
 * Redis and this handle retries it at its due time (if it closes first,
 * the task is stranded like an unheard event).
 *
 * Redis behaviour relied on:
 *   https://redis.io/docs/manual/keyspace-notifications/ (events, timing)
 *   https://redis.io/commands/config-set/  https://redis.io/commands/set/
 *   https://redis.io/commands/subscribe/   https://redis.io/commands/eval/
 *   https://redis.io/commands/client-setname/ (no spaces in a name)
 *   https://redis.io/commands/client-list/ (id, name per connection; ids
 *   grow with each new connection)
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dq.h"
#include "rconn.h"

#define EXP_KEY_MAX 256
#define NKE_MAX 64          /* a notify-keyspace-events value (at most ~20) */
#define NKE_TAG ":nke="     /* client-name field of an expiry subscriber */
#define NKE_WAIT_MS 2000    /* how long an opener waits for deciding ones */

/* Enqueue.  KEYS: p, d, s:<id>, ready.  ARGV: id, payload, due_ms, px,
 * wake channel.  px < 1: straight to the ready list. */
static const char exp_enqueue_src[] =
    "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])\n"
    "redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])\n"
    "local px = tonumber(ARGV[4])\n"
    "if px >= 1 then\n"
    "  redis.call('SET', KEYS[3], '1', 'PX', px)\n"
    "else\n"
    "  redis.call('DEL', KEYS[3])\n"
    "  redis.call('RPUSH', KEYS[4], ARGV[1])\n"
    "  redis.call('PUBLISH', ARGV[5], ARGV[1])\n"
    "end\n"
    "return 1\n";

/* Claim.  KEYS: p, d, ready.  ARGV: id ("" = pop one from ready), now_ms.
 * Returns nil (ready list empty), {id} (gone: another subscriber took it
 * or it was cancelled), {id, due} (not due yet by the caller's clock: left
 * in place) or {id, due, payload} (claimed and removed). */
static const char exp_claim_src[] =
    "local id = ARGV[1]\n"
    "if id == '' then\n"
    "  id = redis.call('LPOP', KEYS[3])\n"
    "  if not id then return false end\n"
    "end\n"
    "local v = redis.call('HGET', KEYS[1], id)\n"
    "if not v then return {id} end\n"
    "local due = redis.call('HGET', KEYS[2], id) or '0'\n"
    "if tonumber(due) > tonumber(ARGV[2]) then return {id, due} end\n"
    "redis.call('HDEL', KEYS[1], id)\n"
    "redis.call('HDEL', KEYS[2], id)\n"
    "return {id, due, v}\n";

/* Cancel.  KEYS: p, d, s:<id>, ready.  ARGV: id.  Returns 1 or 0. */
static const char exp_cancel_src[] =
    "local n = redis.call('HDEL', KEYS[1], ARGV[1])\n"
    "redis.call('HDEL', KEYS[2], ARGV[1])\n"
    "redis.call('DEL', KEYS[3])\n"
    "redis.call('LREM', KEYS[4], 0, ARGV[1])\n"
    "return n\n";

/* Reschedule.  KEYS: p, d, s:<id>, ready.  ARGV: id, due_ms, px, wake
 * channel.  Returns 1, or 0 when the task is not pending. */
static const char exp_resched_src[] =
    "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end\n"
    "redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])\n"
    "redis.call('LREM', KEYS[4], 0, ARGV[1])\n"
    "local px = tonumber(ARGV[3])\n"
    "if px >= 1 then\n"
    "  redis.call('SET', KEYS[3], '1', 'PX', px)\n"
    "else\n"
    "  redis.call('DEL', KEYS[3])\n"
    "  redis.call('RPUSH', KEYS[4], ARGV[1])\n"
    "  redis.call('PUBLISH', ARGV[4], ARGV[1])\n"
    "end\n"
    "return 1\n";

/* A task whose event came before its due time by this handle's clock. */
typedef struct exp_deferred {
    char id[DQ_ID_MAX];
    int64_t due_ms;
} exp_deferred;

typedef struct exp_priv {
    redisContext *cmd;  /* scripts */
    redisContext *sub;  /* SUBSCRIBE mode only; NULL with subscribe=0 */
    bool subscribe;
    bool config;            /* option config=1: keep 'Ex' enabled */
    bool nke_recorded;      /* sub's name carries nke_orig,nke_set */
    char nke_orig[NKE_MAX]; /* notify-keyspace-events before dqlab */
    char nke_set[NKE_MAX];  /* what dqlab left it at (the server's
                               spelling; == nke_orig when unchanged) */
    long long sub_id;       /* CLIENT ID of sub, -1 unknown */
    bool check_ready;   /* LPOP ready before waiting (set at open and by a
                           wake message, cleared when ready is empty) */
    dq_script enq, clm, cnl, rsc;  /* per handle: no shared mutable state */
    char key_p[EXP_KEY_MAX], key_d[EXP_KEY_MAX], key_ready[EXP_KEY_MAX];
    char chan_wake[EXP_KEY_MAX];
    char chan_expired[64];          /* __keyevent@<db>__:expired */
    char prefix[EXP_KEY_MAX];       /* dq:{Q}:s: */
    size_t prefix_len;
    /* FIFO of ids heard on the expired channel, not yet tried. */
    char **evq;
    size_t evq_cap, evq_head, evq_len;
    exp_deferred *defer;
    size_t ndefer, defer_cap;
} exp_priv;

static const dq_optdef exp_options[] = {
    DQ_OPTDEF_INT("subscribe", "1", 0, 1,
                  "1: subscribe at open (needed to claim); 0: producer-only "
                  "handle"),
    DQ_OPTDEF_INT("config", "1", 0, 1,
                  "1: a subscribing handle adds 'Ex' to "
                  "notify-keyspace-events with CONFIG, and the last one "
                  "to close puts the old value back; 0: leave the server "
                  "config alone (enable Ex yourself)"),
    DQ_OPTDEF_END,
};

/* ---- event FIFO --------------------------------------------------------- */

static int evq_push(exp_priv *p, const char *id, size_t len)
{
    if (p->evq_len == p->evq_cap) {
        size_t ncap = p->evq_cap ? p->evq_cap * 2 : 64;
        char **n = malloc(ncap * sizeof(*n));
        if (n == NULL)
            return DQ_ENOMEM;
        for (size_t i = 0; i < p->evq_len; i++)
            n[i] = p->evq[(p->evq_head + i) % p->evq_cap];
        free(p->evq);
        p->evq = n;
        p->evq_cap = ncap;
        p->evq_head = 0;
    }
    char *s = malloc(len + 1);
    if (s == NULL)
        return DQ_ENOMEM;
    memcpy(s, id, len);
    s[len] = '\0';
    p->evq[(p->evq_head + p->evq_len) % p->evq_cap] = s;
    p->evq_len++;
    return DQ_OK;
}

/* Pops the oldest id (caller frees), or NULL. */
static char *evq_pop(exp_priv *p)
{
    if (p->evq_len == 0)
        return NULL;
    char *s = p->evq[p->evq_head];
    p->evq_head = (p->evq_head + 1) % p->evq_cap;
    p->evq_len--;
    return s;
}

/* Puts id (a string evq_pop just returned; the FIFO owns it again) back
 * at the head, so a claim that failed before trying it does not lose it.
 * There is always room: the pop freed a slot. */
static void evq_unpop(exp_priv *p, char *id)
{
    p->evq_head = (p->evq_head + p->evq_cap - 1) % p->evq_cap;
    p->evq[p->evq_head] = id;
    p->evq_len++;
}

static void evq_free(exp_priv *p)
{
    char *s;
    while ((s = evq_pop(p)) != NULL)
        free(s);
    free(p->evq);
    p->evq = NULL;
    p->evq_cap = 0;
}

static int defer_add(exp_priv *p, const char *id, int64_t due_ms)
{
    for (size_t i = 0; i < p->ndefer; i++)
        if (strcmp(p->defer[i].id, id) == 0) {
            p->defer[i].due_ms = due_ms;
            return DQ_OK;
        }
    if (p->ndefer == p->defer_cap) {
        size_t ncap = p->defer_cap ? p->defer_cap * 2 : 8;
        exp_deferred *n = realloc(p->defer, ncap * sizeof(*n));
        if (n == NULL)
            return DQ_ENOMEM;
        p->defer = n;
        p->defer_cap = ncap;
    }
    snprintf(p->defer[p->ndefer].id, DQ_ID_MAX, "%s", id);
    p->defer[p->ndefer].due_ms = due_ms;
    p->ndefer++;
    return DQ_OK;
}

/* ---- connections -------------------------------------------------------- */

/* ---- notify-keyspace-events: enable, record, restore --------------------
 * The protocol is described at the top of this file ("Server setting"). */

/* True when flags make Redis publish __keyevent@<db>__:expired: 'E' and
 * 'x' (or 'A', an alias for every class including 'x'). */
static bool nke_has_ex(const char *flags)
{
    return strchr(flags, 'E') != NULL &&
           (strchr(flags, 'x') != NULL || strchr(flags, 'A') != NULL);
}

/* CONFIG GET notify-keyspace-events into out (NKE_MAX bytes).  DQ_OK, or
 * a DQ_E* code with q->err naming what to do when CONFIG is refused. */
static int nke_get(dq_queue *q, redisContext *c, char *out)
{
    char msg[sizeof(q->err)];
    int rc;
    redisReply *r = dq_redis_cmdf(q, c, &rc,
                                  "CONFIG GET notify-keyspace-events");
    if (r == NULL) {
        if (rc != DQ_EREDIS)
            return rc;
        snprintf(msg, sizeof(msg), "%s", q->err);
        return dq_fail(q, DQ_EREDIS,
                       "expiry: CONFIG GET notify-keyspace-events refused: "
                       "%s; enable 'Ex' on the server and open with config=0",
                       msg);
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[1]->type != REDIS_REPLY_STRING ||
        r->element[1]->len >= NKE_MAX) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO,
                       "expiry: unexpected reply to CONFIG GET "
                       "notify-keyspace-events");
    }
    snprintf(out, NKE_MAX, "%s", r->element[1]->str);
    freeReplyObject(r);
    return DQ_OK;
}

/* CONFIG SET notify-keyspace-events flags ("" allowed).  DQ_OK or DQ_E*. */
static int nke_put(dq_queue *q, redisContext *c, const char *flags)
{
    char msg[sizeof(q->err)];
    const char *argv[4] = {"CONFIG", "SET", "notify-keyspace-events", flags};
    int rc;
    redisReply *r = dq_redis_cmd(q, c, &rc, 4, argv, NULL);
    if (r == NULL) {
        if (rc != DQ_EREDIS)
            return rc;
        snprintf(msg, sizeof(msg), "%s", q->err);
        return dq_fail(q, DQ_EREDIS,
                       "expiry: CONFIG SET notify-keyspace-events refused: "
                       "%s; enable 'Ex' on the server", msg);
    }
    freeReplyObject(r);
    return DQ_OK;
}

/* Adds 'E' and 'x' to the current flags (keeping whatever others enabled)
 * and reads back the server's spelling of the result into set_out. */
static int nke_enable(dq_queue *q, redisContext *c, const char *cur,
                      char *set_out)
{
    char want[NKE_MAX + 2];
    int rc;
    snprintf(want, sizeof(want), "%s%s%s", cur,
             strchr(cur, 'E') ? "" : "E",
             strchr(cur, 'x') || strchr(cur, 'A') ? "" : "x");
    if ((rc = nke_put(q, c, want)) != DQ_OK)
        return rc;
    return nke_get(q, c, set_out);
}

/* What CLIENT LIST shows of the other expiry subscribers (every dqlab
 * process, every queue, every db: the setting is server-wide). */
typedef struct nke_seen {
    int others;     /* connections named ...:nke=..., other than self */
    int pending;    /* of which still deciding (":nke=?") on a connection
                       older than self (a lower client id) */
    bool found;     /* a complete record was seen (one that changed the
                       value, orig != set, preferred): */
    char orig[NKE_MAX], set[NKE_MAX];
} nke_seen;

static int nke_scan(dq_queue *q, redisContext *c, long long self,
                    nke_seen *out)
{
    int rc;
    memset(out, 0, sizeof(*out));
    redisReply *r = dq_redis_cmdf(q, c, &rc, "CLIENT LIST");
    if (r == NULL)
        return rc;
    if (r->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "expiry: unexpected reply to CLIENT LIST");
    }
    for (const char *l = r->str; *l;) {
        size_t len = strcspn(l, "\n");
        const char *id = l, *name = strstr(l, " name=");
        long long cid = strncmp(id, "id=", 3) == 0 ? strtoll(id + 3, NULL, 10)
                                                   : -1;
        const char *rec = NULL;
        if (name != NULL && name < l + len &&
            strncmp(name + 6, DQ_CLIENT_NAME_PREFIX,
                    strlen(DQ_CLIENT_NAME_PREFIX)) == 0) {
            size_t nlen = strcspn(name + 6, " \n");
            const char *m = strstr(name + 6, NKE_TAG);
            if (m != NULL && m < name + 6 + nlen)
                rec = m + strlen(NKE_TAG);
        }
        if (rec != NULL && cid != self) {
            size_t rlen = strcspn(rec, " \n"), comma = strcspn(rec, ",");
            out->others++;
            if (rlen == 1 && rec[0] == '?') {
                if (self < 0 || cid < self)
                    out->pending++;
            } else if ((!out->found || strcmp(out->orig, out->set) == 0) &&
                       comma < rlen && comma < NKE_MAX &&
                       rlen - comma - 1 < NKE_MAX) {
                out->found = true;
                snprintf(out->orig, NKE_MAX, "%.*s", (int)comma, rec);
                snprintf(out->set, NKE_MAX, "%.*s", (int)(rlen - comma - 1),
                         rec + comma + 1);
            }
        }
        l += len + (l[len] == '\n');
    }
    freeReplyObject(r);
    return DQ_OK;
}

/* Names the subscriber connection "<dqlab name>:nke=<v>" (v "?" while
 * deciding, else "<orig>,<set>").  DQ_OK, DQ_EREDIS when refused. */
static int nke_name(dq_queue *q, redisContext *c, const char *v)
{
    char name[DQ_CLIENT_NAME_MAX], suffix[2 * NKE_MAX + 16];
    int rc;
    snprintf(suffix, sizeof(suffix), "%s%s", NKE_TAG, v);
    dq_redis_client_name(q, suffix, name, sizeof(name));
    const char *argv[3] = {"CLIENT", "SETNAME", name};
    redisReply *r = dq_redis_cmd(q, c, &rc, 3, argv, NULL);
    if (r != NULL)
        freeReplyObject(r);
    return rc;
}

/* Before SUBSCRIBE on a new subscriber connection sub (config=1): makes
 * sure 'Ex' is on, having recorded in sub's name what to restore.  The
 * first call of a handle registers as deciding, waits (up to NKE_WAIT_MS)
 * for other handles that are deciding, adopts the record of another
 * expiry subscriber if there is one (its orig is the server's value
 * before dqlab), else takes the current value as the original; later
 * calls (a reconnect) reuse the handle's record. */
static int nke_open(dq_queue *q, exp_priv *p, redisContext *sub)
{
    char cur[NKE_MAX], rec[2 * NKE_MAX + 2], refused[sizeof(q->err)] = "";
    nke_seen seen;
    int rc;
    bool named;

    if (p->nke_recorded) {
        snprintf(rec, sizeof(rec), "%s,%s", p->nke_orig, p->nke_set);
        if ((rc = nke_name(q, sub, rec)) != DQ_OK ||
            (rc = nke_get(q, p->cmd, cur)) != DQ_OK || nke_has_ex(cur))
            return rc;
        /* Off again (a restarted server: CONFIG SET is not persisted). */
        if ((rc = nke_enable(q, p->cmd, cur, p->nke_set)) != DQ_OK)
            return rc;
        snprintf(rec, sizeof(rec), "%s,%s", p->nke_orig, p->nke_set);
        return nke_name(q, sub, rec);
    }
    rc = nke_name(q, sub, "?");
    if (rc != DQ_OK && rc != DQ_EREDIS)
        return rc;
    named = rc == DQ_OK;
    if (!named)
        snprintf(refused, sizeof(refused), "%s", q->err);
    memset(&seen, 0, sizeof(seen));
    for (int64_t waited = 0; named; waited += 10) {
        if ((rc = nke_scan(q, p->cmd, p->sub_id, &seen)) != DQ_OK)
            return rc;
        if (seen.pending == 0 || waited >= NKE_WAIT_MS)
            break;
        dq_sleep_us(10000);
    }
    if ((rc = nke_get(q, p->cmd, cur)) != DQ_OK)
        return rc;
    snprintf(p->nke_orig, NKE_MAX, "%s", seen.found ? seen.orig : cur);
    snprintf(p->nke_set, NKE_MAX, "%s", seen.found ? seen.set : cur);
    if (!nke_has_ex(cur)) {
        if (!named)
            return dq_fail(q, DQ_EREDIS,
                           "expiry: notify-keyspace-events lacks 'Ex' and "
                           "CLIENT SETNAME was refused (%s), so dqlab could "
                           "not restore it after the run; enable 'Ex' on "
                           "the server and open with config=0", refused);
        if ((rc = nke_enable(q, p->cmd, cur, p->nke_set)) != DQ_OK)
            return rc;
    }
    if (!named)
        return DQ_OK;  /* nothing changed, nothing to restore */
    p->nke_recorded = true;
    snprintf(rec, sizeof(rec), "%s,%s", p->nke_orig, p->nke_set);
    if ((rc = nke_name(q, sub, rec)) != DQ_OK ||
        strcmp(p->nke_orig, p->nke_set) != 0)
        return rc;
    /* Found 'Ex' on and no record: unless a handle deciding at the same
     * time is the one that turned it on; if its record is there by now,
     * it knows the original. */
    if (nke_scan(q, p->cmd, p->sub_id, &seen) != DQ_OK || !seen.found ||
        strcmp(seen.orig, seen.set) == 0)
        return DQ_OK;
    snprintf(p->nke_orig, NKE_MAX, "%s", seen.orig);
    snprintf(p->nke_set, NKE_MAX, "%s", seen.set);
    snprintf(rec, sizeof(rec), "%s,%s", p->nke_orig, p->nke_set);
    return nke_name(q, sub, rec);
}

/* At close: when this is the last expiry subscriber (no other connection
 * named ...:nke=) and the value is still the one dqlab set, puts the
 * original back; if a subscriber appeared meanwhile, turns 'Ex' on again
 * for it.  Best effort: errors leave the setting as it is. */
static void nke_restore(dq_queue *q, exp_priv *p)
{
    char cur[NKE_MAX], set[NKE_MAX];
    nke_seen seen;

    if (p == NULL || !p->nke_recorded || strcmp(p->nke_orig, p->nke_set) == 0 ||
        p->cmd == NULL)
        return;
    if (nke_scan(q, p->cmd, p->sub_id, &seen) != DQ_OK || seen.others > 0 ||
        nke_get(q, p->cmd, cur) != DQ_OK || strcmp(cur, p->nke_set) != 0 ||
        nke_put(q, p->cmd, p->nke_orig) != DQ_OK)
        return;
    if (nke_scan(q, p->cmd, p->sub_id, &seen) == DQ_OK && seen.others > 0 &&
        nke_get(q, p->cmd, cur) == DQ_OK && !nke_has_ex(cur))
        (void)nke_enable(q, p->cmd, cur, set);
}

/* Connects p->sub, makes sure expired events are on (config=1, nke_open)
 * and subscribes to the expired and wake channels, waiting for both
 * confirmations. */
static int exp_connect_sub(dq_queue *q, exp_priv *p)
{
    redisContext *c = NULL;
    int rc = dq_redis_connect(q, NULL, DQ_SOCK_TIMEOUT_MS, &c);
    if (rc != DQ_OK)
        return rc;
    if (p->config) {
        /* Our own id, to tell this connection from the others in CLIENT
         * LIST; refused (ACL -client): -1, and nke_open records nothing. */
        redisReply *id = dq_redis_cmdf(q, c, &rc, "CLIENT ID");
        if (id == NULL && rc != DQ_EREDIS)
            goto close_conn;
        p->sub_id = id != NULL && id->type == REDIS_REPLY_INTEGER
                        ? id->integer : -1;
        if (id != NULL)
            freeReplyObject(id);
        if ((rc = nke_open(q, p, c)) != DQ_OK)
            goto close_conn;
    }
    const char *argv[3] = {"SUBSCRIBE", p->chan_expired, p->chan_wake};
    if (redisAppendCommandArgv(c, 3, argv, NULL) != REDIS_OK)
        goto io_error;
    q->counters.round_trips++;
    for (int i = 0; i < 2; i++) {
        void *v = NULL;
        if (redisGetReply(c, &v) != REDIS_OK)
            goto io_error;
        redisReply *r = v;
        bool ok = r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
                  r->element[0]->type == REDIS_REPLY_STRING &&
                  strcmp(r->element[0]->str, "subscribe") == 0;
        if (!ok) {
            if (r->type == REDIS_REPLY_ERROR)
                dq_fail(q, DQ_EREDIS, "expiry: SUBSCRIBE: %s", r->str);
            else
                dq_fail(q, DQ_EPROTO, "expiry: unexpected reply to SUBSCRIBE");
            rc = r->type == REDIS_REPLY_ERROR ? DQ_EREDIS : DQ_EPROTO;
            freeReplyObject(r);
            goto close_conn;
        }
        freeReplyObject(r);
    }
    p->sub = c;
    p->check_ready = true;
    return DQ_OK;

io_error:
    rc = dq_fail(q, DQ_EIO, "expiry: subscribe to redis %s:%d: %s",
                 c->tcp.host ? c->tcp.host : "?", c->tcp.port, c->errstr);
close_conn:
    redisFree(c);
    return rc;
}

/* Rebuilds the subscription after a transport error (the command
 * connection is reconnected by the rconn helpers themselves).  Events
 * published while the subscriber was away are lost (fire-and-forget).
 * With config=1 the notify-keyspace-events flags are checked again first:
 * CONFIG SET is not persisted, so a restarted server (restart-redis) comes
 * back with notifications off, and without this every later task would be
 * lost, not just those that expired while nobody listened. */
static int exp_ensure(dq_queue *q, exp_priv *p)
{
    if (!p->subscribe || (p->sub != NULL && p->sub->err == 0))
        return DQ_OK;
    if (p->sub != NULL)
        redisFree(p->sub);
    p->sub = NULL;
    return exp_connect_sub(q, p);
}

/* Files one Pub/Sub message: an expired shadow key of this queue goes on
 * the FIFO, a wake message sets check_ready, anything else is dropped. */
static int exp_on_message(exp_priv *p, const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
        r->element[0]->type != REDIS_REPLY_STRING ||
        strcmp(r->element[0]->str, "message") != 0 ||
        r->element[1]->type != REDIS_REPLY_STRING ||
        r->element[2]->type != REDIS_REPLY_STRING)
        return DQ_OK;
    const redisReply *ch = r->element[1], *msg = r->element[2];
    if (strcmp(ch->str, p->chan_wake) == 0) {
        p->check_ready = true;
        return DQ_OK;
    }
    if (strcmp(ch->str, p->chan_expired) != 0)
        return DQ_OK;
    if (msg->len <= p->prefix_len ||
        msg->len - p->prefix_len >= DQ_ID_MAX ||
        memcmp(msg->str, p->prefix, p->prefix_len) != 0)
        return DQ_OK;
    return evq_push(p, msg->str + p->prefix_len, msg->len - p->prefix_len);
}

/* Files every message the subscription's reader already holds (no I/O)
 * and adds their number to *n.  Returns DQ_OK, or DQ_EIO / DQ_ENOMEM with
 * q->err set. */
static int exp_drain(dq_queue *q, exp_priv *p, int *n)
{
    redisContext *c = p->sub;
    for (;;) {
        void *v = NULL;
        if (redisGetReplyFromReader(c, &v) != REDIS_OK)
            return dq_fail(q, DQ_EIO, "expiry: subscription: %s", c->errstr);
        if (v == NULL)
            return DQ_OK;
        int rc = exp_on_message(p, v);
        freeReplyObject(v);
        if (rc != DQ_OK)
            return dq_fail(q, rc, "expiry: out of memory buffering events");
        (*n)++;
    }
}

/* Files every message already read, then waits at most wait_us for more
 * (0: just look) and files those.  Returns DQ_OK or DQ_EIO/DQ_ENOMEM.
 *
 * The wait is poll(2) on the socket, then redisBufferRead, rather than
 * redisGetReply under a socket timeout: hiredis 0.14.1 marks a context
 * failed (REDIS_ERR_IO, EAGAIN) when a read times out, so every empty wait
 * would cost a reconnect and a new SUBSCRIBE, and events published in
 * between would be lost.  poll takes whole milliseconds: a wait below 1 ms
 * is rounded up to 1 ms, never down to a busy 0. */
static int exp_pump(dq_queue *q, exp_priv *p, int64_t wait_us)
{
    redisContext *c = p->sub;
    int rc, n = 0;
    if ((rc = exp_drain(q, p, &n)) != DQ_OK || n > 0)
        return rc;
    /* Round up, and clamp a sub-millisecond wait to 1 ms; a wait beyond
     * INT_MAX ms is cut to INT_MAX (poll's -1 would mean "forever"). */
    int64_t wait_ms64 = wait_us <= 0 ? 0 : wait_us / 1000 + (wait_us % 1000 != 0);
    int wait_ms = wait_ms64 > INT_MAX ? INT_MAX : (int)wait_ms64;
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    int pr = poll(&pfd, 1, wait_ms);
    if (pr < 0) {
        if (errno == EINTR)
            return DQ_OK;
        return dq_fail(q, DQ_ESYS, "expiry: poll: %s", strerror(errno));
    }
    if (pr == 0)
        return DQ_OK;
    if (wait_ms > 0)
        q->counters.wakeups++;
    if (redisBufferRead(c) != REDIS_OK)
        return dq_fail(q, DQ_EIO, "expiry: subscription to redis %s:%d: %s",
                       c->tcp.host ? c->tcp.host : "?", c->tcp.port,
                       c->errstr);
    return exp_drain(q, p, &n);
}

/* ---- ops ---------------------------------------------------------------- */

static void exp_free(exp_priv *p)
{
    if (p == NULL)
        return;
    if (p->cmd != NULL)
        redisFree(p->cmd);
    if (p->sub != NULL)
        redisFree(p->sub);
    evq_free(p);
    free(p->defer);
    free(p);
}

static int exp_open(dq_queue *q)
{
    int64_t sub = 1, cfg = 1;
    int rc;
    if ((rc = dq_opt_i64(q, "subscribe", &sub)) != DQ_OK ||
        (rc = dq_opt_i64(q, "config", &cfg)) != DQ_OK)
        return rc;
    exp_priv *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return dq_fail(q, DQ_ENOMEM, "expiry: out of memory");
    p->subscribe = sub != 0;
    p->enq.src = exp_enqueue_src;
    p->clm.src = exp_claim_src;
    p->cnl.src = exp_cancel_src;
    p->rsc.src = exp_resched_src;
    dq_redis_key(q, "p", p->key_p, sizeof(p->key_p));
    dq_redis_key(q, "d", p->key_d, sizeof(p->key_d));
    dq_redis_key(q, "ready", p->key_ready, sizeof(p->key_ready));
    dq_redis_key(q, "wake", p->chan_wake, sizeof(p->chan_wake));
    dq_redis_key(q, "s:", p->prefix, sizeof(p->prefix));
    p->prefix_len = strlen(p->prefix);
    snprintf(p->chan_expired, sizeof(p->chan_expired),
             "__keyevent@%d__:expired", q->cfg.redis_db);

    rc = dq_redis_connect(q, q->s->min_redis, DQ_SOCK_TIMEOUT_MS, &p->cmd);
    if (rc != DQ_OK)
        goto free_priv;
    p->config = cfg;
    if (p->subscribe && (rc = exp_connect_sub(q, p)) != DQ_OK)
        goto free_priv;
    q->priv = p;
    return DQ_OK;

free_priv:
    if (p->nke_recorded) {  /* Ex set, but the subscription failed */
        char msg[sizeof(q->err)];
        snprintf(msg, sizeof(msg), "%s", q->err);
        nke_restore(q, p);
        snprintf(q->err, sizeof(q->err), "%s", msg);
    }
    exp_free(p);
    return rc;
}

static void exp_close(dq_queue *q)
{
    nke_restore(q, q->priv);
    exp_free(q->priv);
    q->priv = NULL;
}

/* PX for a due time, by this handle's clock; < 1 means "due now". */
static int64_t exp_px(dq_queue *q, int64_t due_ms)
{
    return due_ms - dq_now_ms(q);
}

static int exp_enqueue(dq_queue *q, const char *id, const void *payload,
                       size_t payload_len, int64_t due_ms)
{
    exp_priv *p = q->priv;
    int rc;
    size_t idlen = strlen(id); /* 1..DQ_ID_MAX-1: checked by dq_enqueue */
    char skey[EXP_KEY_MAX + DQ_ID_MAX], due[24], px[24];
    snprintf(skey, sizeof(skey), "%s%s", p->prefix, id);
    snprintf(due, sizeof(due), "%lld", (long long)due_ms);
    snprintf(px, sizeof(px), "%lld", (long long)exp_px(q, due_ms));
    const char *args[9] = {p->key_p, p->key_d, skey, p->key_ready,
                           id, payload, due, px, p->chan_wake};
    size_t lens[9] = {strlen(p->key_p), strlen(p->key_d), strlen(skey),
                      strlen(p->key_ready), idlen, payload_len,
                      strlen(due), strlen(px), strlen(p->chan_wake)};
    if (payload == NULL)
        args[5] = "";
    redisReply *r = dq_redis_eval(q, p->cmd, &p->enq, &rc, 4, 9, args, lens);
    if (r == NULL)
        return rc;
    freeReplyObject(r);
    /* A handle that only enqueues still receives every expired event of the
     * db; take them off the socket so the server's Pub/Sub output buffer
     * limit does not disconnect it. */
    if (p->sub != NULL && p->sub->err == 0)
        (void)exp_pump(q, p, 0); /* the task is in either way: a broken
                                    subscription is rebuilt by the next
                                    claim (exp_ensure) */
    return DQ_OK;
}

/* Tries to take task `id` ("" = the head of the ready list).  Returns 1
 * with *out filled, 0 when there was nothing to take (*ready_empty set when
 * the ready list was empty), or a DQ_E* code. */
static int exp_try(dq_queue *q, exp_priv *p, const char *id, dq_task *out,
                   bool *ready_empty)
{
    int rc;
    char now[24];
    snprintf(now, sizeof(now), "%lld", (long long)dq_now_ms(q));
    const char *args[5] = {p->key_p, p->key_d, p->key_ready, id, now};
    redisReply *r = dq_redis_eval(q, p->cmd, &p->clm, &rc, 3, 5, args, NULL);
    if (r == NULL)
        return rc;
    if (r->type == REDIS_REPLY_NIL) {
        *ready_empty = true;
        goto done_nothing;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 || r->elements > 3)
        goto proto;
    for (size_t i = 0; i < r->elements; i++)
        if (r->element[i]->type != REDIS_REPLY_STRING)
            goto proto;
    const redisReply *rid = r->element[0];
    if (rid->len == 0 || rid->len >= DQ_ID_MAX)
        goto proto;
    if (r->elements == 1) {  /* another subscriber took it (or cancelled) */
        if (id[0] != '\0')
            q->counters.lost_races++;
        goto done_nothing;
    }
    int64_t due_ms;
    if (!dq_reply_int(r->element[1], &due_ms))
        goto proto;
    if (r->elements == 2) {  /* not due by our clock: retry at due_ms */
        rc = defer_add(p, rid->str, due_ms);
        freeReplyObject(r);
        if (rc != DQ_OK)
            return dq_fail(q, rc, "expiry: out of memory");
        return 0;
    }
    const redisReply *pl = r->element[2];
    memset(out, 0, sizeof(*out));
    out->payload = dq_reply_copy(pl, &out->payload_len);
    if (out->payload == NULL) {
        freeReplyObject(r);
        return dq_fail(q, DQ_ENOMEM, "expiry: out of memory");
    }
    memcpy(out->id, rid->str, rid->len);
    out->id[rid->len] = '\0';
    out->due_ms = due_ms;
    out->attempt = 1;
    freeReplyObject(r);
    return 1;

done_nothing:
    freeReplyObject(r);
    return 0;
proto:
    freeReplyObject(r);
    return dq_fail(q, DQ_EPROTO, "expiry: unexpected reply from claim script");
}

static int exp_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    exp_priv *p = q->priv;
    int rc;
    if (!p->subscribe)
        return dq_fail(q, DQ_EUNSUPPORTED,
                       "expiry: claim on a handle opened with subscribe=0");
    if ((rc = exp_ensure(q, p)) != DQ_OK)
        return rc;
    int64_t deadline_us = dq_deadline_us(timeout_ms);
    bool looked = false;
    for (;;) {
        bool empty = false;
        /* 1. tasks that were due at enqueue time */
        while (p->check_ready) {
            empty = false;
            rc = exp_try(q, p, "", out, &empty);
            if (rc < 0)
                return rc;
            if (rc == 1)
                return DQ_OK;
            if (empty)
                p->check_ready = false;
        }
        /* 2. expired events heard */
        char *id;
        while ((id = evq_pop(p)) != NULL) {
            rc = exp_try(q, p, id, out, &empty);
            if (rc < 0) {
                /* Not tried (e.g. DQ_EIO): keep it for the next claim, or
                 * the task would stay in dq:{Q}:p forever. */
                evq_unpop(p, id);
                return rc;
            }
            free(id);
            if (rc == 1)
                return DQ_OK;
        }
        /* 3. events that came early by our clock and are now due */
        int64_t now_ms = dq_now_ms(q), next_due = INT64_MAX;
        for (size_t i = 0; i < p->ndefer;) {
            if (p->defer[i].due_ms > now_ms) {
                if (p->defer[i].due_ms < next_due)
                    next_due = p->defer[i].due_ms;
                i++;
                continue;
            }
            exp_deferred d = p->defer[i];
            p->defer[i] = p->defer[--p->ndefer];
            rc = exp_try(q, p, d.id, out, &empty);
            if (rc < 0) {
                /* Keep it deferred (it is due: the next claim retries it).
                 * Cannot fail: removing it above left a free slot. */
                (void)defer_add(p, d.id, d.due_ms);
                return rc;
            }
            if (rc == 1)
                return DQ_OK;
            /* early again (re-deferred) or gone: rescan */
            now_ms = dq_now_ms(q);
            next_due = INT64_MAX;
            i = 0;
        }
        /* 4. wait on the subscription */
        int64_t left_us = deadline_us - dq_mono_us();
        if (left_us <= 0) {
            if (looked) {
                q->counters.empty_polls++;
                return DQ_EMPTY;
            }
            left_us = 0;
            looked = true;
        }
        if (next_due != INT64_MAX) {
            int64_t until_due_us = next_due * 1000 - dq_now_us(q);
            if (until_due_us < left_us)
                left_us = until_due_us > 0 ? until_due_us : 0;
        }
        if ((rc = exp_pump(q, p, left_us)) != DQ_OK)
            return rc;
    }
}

static int exp_ack(dq_queue *q, const dq_task *t)
{
    (void)q;
    (void)t;
    return DQ_OK;
}

static int exp_cancel(dq_queue *q, const char *id)
{
    exp_priv *p = q->priv;
    int rc;
    char skey[EXP_KEY_MAX + DQ_ID_MAX];
    snprintf(skey, sizeof(skey), "%s%s", p->prefix, id);
    const char *args[5] = {p->key_p, p->key_d, skey, p->key_ready, id};
    int64_t n = 0;
    rc = dq_redis_eval_int(q, p->cmd, &p->cnl, 4, 5, args, NULL,
                           "expiry: unexpected reply to cancel", &n);
    if (rc != DQ_OK)
        return rc;
    return n == 1 ? DQ_OK
                  : dq_fail(q, DQ_ENOTFOUND, "expiry: no pending task '%s'",
                            id);
}

static int exp_reschedule(dq_queue *q, const char *id, int64_t due_ms)
{
    exp_priv *p = q->priv;
    int rc;
    char skey[EXP_KEY_MAX + DQ_ID_MAX], due[24], px[24];
    snprintf(skey, sizeof(skey), "%s%s", p->prefix, id);
    snprintf(due, sizeof(due), "%lld", (long long)due_ms);
    snprintf(px, sizeof(px), "%lld", (long long)exp_px(q, due_ms));
    const char *args[8] = {p->key_p, p->key_d, skey, p->key_ready,
                           id, due, px, p->chan_wake};
    int64_t n = 0;
    rc = dq_redis_eval_int(q, p->cmd, &p->rsc, 4, 8, args, NULL,
                           "expiry: unexpected reply to reschedule", &n);
    if (rc != DQ_OK)
        return rc;
    return n == 1 ? DQ_OK
                  : dq_fail(q, DQ_ENOTFOUND, "expiry: no pending task '%s'",
                            id);
}

/* Tasks not yet claimed, including those whose event nobody heard. */
static int64_t exp_pending(dq_queue *q)
{
    exp_priv *p = q->priv;
    int rc;
    redisReply *r = dq_redis_cmdf(q, p->cmd, &rc, "HLEN %s", p->key_p);
    if (r == NULL)
        return rc;
    int64_t n = 0;
    bool ok = dq_reply_int(r, &n);
    freeReplyObject(r);
    if (!ok)
        return dq_fail(q, DQ_EPROTO, "expiry: unexpected reply to HLEN");
    return n;
}

static int exp_purge(dq_queue *q)
{
    exp_priv *p = q->priv;
    return dq_redis_purge(q, p->cmd);
}

static int exp_exists(dq_queue *q)
{
    exp_priv *p = q->priv;
    return dq_redis_exists(q, p->cmd);
}

const dq_strategy dq_strategy_expiry = {
    .name = "expiry",
    .summary = "shadow key with PX per task, consumers SUBSCRIBE to expired "
               "events (sets notify-keyspace-events Ex); loses tasks that "
               "expire while no subscriber listens",
    .flags = DQ_G_AT_MOST_ONCE | DQ_G_NEEDS_REDIS | DQ_G_BLOCKS |
             DQ_G_NO_DUP_CONCURRENT | DQ_G_TTL_KEYS |
             DQ_G_KEYSPACE_EVENTS,
    .min_redis = "2.8.0",
    .options = exp_options,
    .open = exp_open,
    .enqueue = exp_enqueue,
    .claim = exp_claim,
    .ack = exp_ack,
    .close = exp_close,
    .cancel = exp_cancel,
    .reschedule = exp_reschedule,
    .pending = exp_pending,
    .purge = exp_purge,
    .exists = exp_exists,
    .doc = "Payload and due time live in two hashes; a shadow key "
        "dq:{Q}:s:<id> with PX = due - now stands for the timer, and every "
        "consumer SUBSCRIBEs to __keyevent@<db>__:expired (open adds 'Ex' "
        "to notify-keyspace-events; the last subscriber to close puts the "
        "old value back).  When Redis deletes the shadow key, "
        "every subscriber gets the event and runs one script (HGET+HDEL "
        "of both hashes); the first wins.  Per task: 1 EVALSHA to enqueue, "
        "N messages and N claim scripts for N consumers.  At-most-once, no "
        "duplicates, no due order.  Breaks two ways (claim C18): Pub/Sub "
        "is fire-and-forget, so a key expiring while nobody listens "
        "strands its task forever; and Redis publishes the event when its "
        "sampling expire cycle finds the key, not at the TTL, so lateness "
        "grows with the number of keys with a TTL (seconds at 1k, minutes "
        "at 100k).",
    .witness = "expiry-loss",
};
