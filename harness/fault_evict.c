/* fault_evict.c -- evict:POLICY[:AT_MS]: memory pressure on the
 * harness-owned redis-server under maxmemory-policy POLICY, allkeys-lru,
 * volatile-lru or noeviction (faults.h).
 *
 * What it does, at its time (after the enqueues started, so the queue
 * has a footprint): measures the queue's footprint F (MEMORY USAGE of its
 * keys dq:{Q}:*) and what the server holds (INFO memory used_memory), sets
 * maxmemory-policy POLICY and maxmemory to used_memory + max(F/2, 128
 * KiB), and writes filler keys beside the queue -- strings
 * "dqlab-filler:<queue>:<i>" of F/8 bytes each (4 KiB to 1 MiB), with a
 * TTL of an hour, never keys dq:{Q}:* -- as another application sharing
 * the server would:
 *   noeviction    until Redis refuses one with OOM: from then every
 *                 command that may grow memory is refused ("OOM command
 *                 not allowed when used memory > 'maxmemory'"), enqueues
 *                 included, which the producers log as refused (N), not
 *                 acknowledged and not lost;
 *   allkeys-lru   three times maxmemory in all, so the dataset turns over
 *                 several times; after every 16 keys the filler written so
 *                 far is read again (TOUCH), as a hot cache is, so that
 *                 LRU cannot tell it from the queue (whose keys every
 *                 claim touches) and evicts queue keys -- a whole ZSet or
 *                 payload hash at a time, silently -- with the rest;
 *   volatile-lru  the same, but only keys with a TTL are evicted: the
 *                 filler, and no queue key of a strategy that sets none
 *                 (expiry's shadow keys have one).
 * Redis approximates LRU by sampling (maxmemory-samples, 5) with a clock
 * of one-second resolution (https://redis.io/docs/reference/eviction/),
 * so which keys go is Redis's choice, not seeded.  The pressure holds for
 * EVICT_HOLD_MS; then the filler is deleted and maxmemory and the policy
 * go back to what they were (also on every other path: finish).  Only on
 * the server dqlab owns (DQ_FAULT_NEEDS_OWN_SERVER): never with --redis.
 * F records: begin "policy=P,maxmemory=B" once the limit is set, before
 * the filler; end "evicted_keys=N,filler_keys=K" (INFO stats
 * evicted_keys during the window) once the filler is gone.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "../strategies/rconn.h"
#include "faults.h"
#include "trial.h"

#define EVICT_HOLD_MS 1000
/* Room left above what the server holds: half the queue's footprint, at
 * least HEADROOM_MIN, since used_memory also moves with what is not the
 * dataset (client query and output buffers, 16 KiB and more each), which
 * eviction cannot free. */
#define HEADROOM_MIN (128 * 1024)
#define FILLER_MIN 4096
#define FILLER_MAX (1 << 20)
#define FILLER_TTL_MS "3600000"
#define TOUCH_EVERY 16
#define DEL_CHUNK 256

typedef struct evict_state {
    char old_max[32];         /* maxmemory and maxmemory-policy before */
    char old_policy[32];
    bool changed;             /* we set them (restore on every path) */
    int64_t fillers;          /* filler keys 0..fillers-1 written */
    int64_t evicted0;         /* INFO stats evicted_keys at the begin */
    char *buf;                /* one filler value */
} evict_state;

static const char *const policies[] = {"allkeys-lru", "volatile-lru",
                                       "noeviction", NULL};

static int ev_parse(dq_fault *f, char *const *arg, int narg, char *err,
                    size_t errlen)
{
    size_t i;

    if (narg < 1 || narg > 2) {
        snprintf(err, errlen, "expected evict:POLICY[:AT_MS], POLICY "
                 "allkeys-lru, volatile-lru or noeviction");
        return -1;
    }
    for (i = 0; policies[i] != NULL; i++)
        if (strcmp(arg[0], policies[i]) == 0)
            break;
    if (policies[i] == NULL) {
        snprintf(err, errlen, "POLICY '%.30s': expected allkeys-lru, "
                 "volatile-lru or noeviction", arg[0]);
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

static void ev_format(const dq_fault *f, char *buf, size_t len)
{
    if (f->at_ms >= 0)
        snprintf(buf, len, "evict:%s:%lld", f->word, (long long)f->at_ms);
    else
        snprintf(buf, len, "evict:%s", f->word);
}

/* A command on the admin connection; NULL with c->err set on an error
 * (reply or transport), else the reply for the caller to free. */
static redisReply *cmd(dq_fault_ctx *c, int argc, const char **argv,
                       const size_t *lens)
{
    int rc;
    redisReply *r = dq_redis_cmd(c->admin, c->redis, &rc, argc, argv, lens);

    if (r == NULL)
        dq_fault_fail(c, "evict: %s", c->admin->err);
    return r;
}

/* The integer after "field:" in INFO section `section`, into *v.
 * Returns 0, or -1 with c->err. */
static int info_i64(dq_fault_ctx *c, const char *section, const char *field,
                    int64_t *v)
{
    const char *argv[2] = {"INFO", section};
    redisReply *r = cmd(c, 2, argv, NULL);
    char key[64];
    const char *p;

    if (r == NULL)
        return -1;
    snprintf(key, sizeof key, "\n%s:", field);
    p = r->type == REDIS_REPLY_STRING ? strstr(r->str, key) : NULL;
    if (p != NULL)
        *v = strtoll(p + strlen(key), NULL, 10);
    freeReplyObject(r);
    if (p == NULL)
        return dq_fault_fail(c, "evict: INFO %s has no %s", section, field);
    return 0;
}

/* CONFIG GET name into out. */
static int config_get(dq_fault_ctx *c, const char *name, char *out,
                      size_t len)
{
    const char *argv[3] = {"CONFIG", "GET", name};
    redisReply *r = cmd(c, 3, argv, NULL);
    bool ok;

    if (r == NULL)
        return -1;
    ok = r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
         r->element[1]->type == REDIS_REPLY_STRING;
    if (ok)
        snprintf(out, len, "%s", r->element[1]->str);
    freeReplyObject(r);
    return ok ? 0 : dq_fault_fail(c, "evict: CONFIG GET %s: unexpected "
                                  "reply", name);
}

static int config_set(dq_fault_ctx *c, const char *name, const char *val)
{
    const char *argv[4] = {"CONFIG", "SET", name, val};
    redisReply *r = cmd(c, 4, argv, NULL);

    if (r == NULL)
        return -1;
    freeReplyObject(r);
    return 0;
}

/* Filler key i's name into buf. */
static void filler_name(const dq_fault_ctx *c, int64_t i, char *buf,
                        size_t len)
{
    snprintf(buf, len, "dqlab-filler:%s:%" PRId64, c->admin->queue, i);
}

/* The queue's footprint: MEMORY USAGE (Redis's estimate, nested values
 * sampled) summed over its keys dq:{Q}:*, found with SCAN.  Returns 0
 * with *bytes, or -1 with c->err. */
static int queue_footprint(dq_fault_ctx *c, int64_t *bytes)
{
    char cursor[32] = "0", pattern[128];
    const char *scan[6] = {"SCAN", cursor, "MATCH", pattern, "COUNT",
                           "1000"};

    *bytes = 0;
    snprintf(pattern, sizeof pattern, "dq:{%s}:*", c->admin->queue);
    do {
        redisReply *r = cmd(c, 6, scan, NULL), *keys;
        if (r == NULL)
            return -1;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING ||
            r->element[1]->type != REDIS_REPLY_ARRAY) {
            freeReplyObject(r);
            return dq_fault_fail(c, "evict: SCAN: unexpected reply");
        }
        snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
        keys = r->element[1];
        for (size_t i = 0; i < keys->elements; i++) {
            const char *mu[3] = {"MEMORY", "USAGE", keys->element[i]->str};
            redisReply *u = cmd(c, 3, mu, NULL);
            if (u == NULL) {
                freeReplyObject(r);
                return -1;
            }
            if (u->type == REDIS_REPLY_INTEGER)
                *bytes += u->integer;
            freeReplyObject(u);
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    return 0;
}

/* The settings to put back. */
static int ev_prepare(dq_fault_ctx *c, const dq_fault *f)
{
    evict_state *st = calloc(1, sizeof *st);

    (void)f;
    if (st == NULL)
        return dq_fault_fail(c, "evict: out of memory");
    c->state[c->index] = st;
    if (config_get(c, "maxmemory", st->old_max, sizeof st->old_max) != 0 ||
        config_get(c, "maxmemory-policy", st->old_policy,
                   sizeof st->old_policy) != 0)
        return -1;
    return 0;
}

/* Deletes the filler and puts maxmemory and the policy back.  Returns 0,
 * or -1 with c->err (the first failure; the rest is still tried). */
static int restore(dq_fault_ctx *c, evict_state *st)
{
    const char *argv[1 + DEL_CHUNK];
    char (*names)[128] = malloc(DEL_CHUNK * sizeof *names);
    int rc = 0;

    if (names == NULL)
        return dq_fault_fail(c, "evict: out of memory");
    argv[0] = "UNLINK";
    for (int64_t i = 0; i < st->fillers; i += DEL_CHUNK) {
        int n = 0;
        redisReply *r;
        for (; n < DEL_CHUNK && i + n < st->fillers; n++) {
            filler_name(c, i + n, names[n], sizeof names[n]);
            argv[1 + n] = names[n];
        }
        if ((r = cmd(c, 1 + n, argv, NULL)) == NULL)
            rc = -1;
        else
            freeReplyObject(r);
    }
    free(names);
    st->fillers = 0;
    if (st->changed) {
        if (config_set(c, "maxmemory", st->old_max) != 0 ||
            config_set(c, "maxmemory-policy", st->old_policy) != 0)
            rc = -1;
        else
            st->changed = false;
    }
    return rc;
}

/* TOUCH the filler keys that may still exist (the last `live`). */
static int touch(dq_fault_ctx *c, const evict_state *st, int64_t live)
{
    int64_t from = st->fillers > live ? st->fillers - live : 0;
    int64_t n = st->fillers - from;
    const char **argv = malloc((size_t)(n + 1) * sizeof *argv);
    char (*names)[128] = malloc((size_t)(n ? n : 1) * sizeof *names);
    redisReply *r = NULL;

    if (argv != NULL && names != NULL) {
        argv[0] = "TOUCH";
        for (int64_t k = 0; k < n; k++) {
            filler_name(c, from + k, names[k], sizeof names[k]);
            argv[1 + k] = names[k];
        }
        r = cmd(c, (int)(n + 1), argv, NULL);
    } else {
        dq_fault_fail(c, "evict: out of memory");
    }
    free(argv);
    free(names);
    if (r == NULL)
        return -1;
    freeReplyObject(r);
    return 0;
}

/* Writes filler keys of size bytes until Redis refuses one (OOM) or, for
 * an LRU policy, `total` bytes were written.  Returns 0, or -1 with
 * c->err. */
static int fill(dq_fault_ctx *c, const dq_fault *f, evict_state *st,
                size_t size, int64_t total, int64_t maxmemory)
{
    bool lru = strcmp(f->word, "noeviction") != 0;
    int64_t live = maxmemory / (int64_t)size + 2, limit;
    char name[128];
    const char *argv[5] = {"SET", name, st->buf, "PX", FILLER_TTL_MS};
    size_t lens[5] = {3, 0, size, 2, strlen(FILLER_TTL_MS)};

    /* noeviction: a few keys past the limit at most. */
    limit = lru ? total / (int64_t)size : live + 8;
    for (int64_t i = 0; i < limit; i++) {
        int rc;
        redisReply *r;
        filler_name(c, st->fillers, name, sizeof name);
        lens[1] = strlen(name);
        r = dq_redis_cmd(c->admin, c->redis, &rc, 5, argv, lens);
        if (r == NULL && rc == DQ_EREDIS &&
            strstr(c->admin->err, "OOM") != NULL)
            return 0; /* the server is full: nothing (more) to evict */
        if (r == NULL)
            return dq_fault_fail(c, "evict: %s", c->admin->err);
        freeReplyObject(r);
        st->fillers++;
        if (lru && st->fillers % TOUCH_EVERY == 0 && touch(c, st, live) != 0)
            return -1;
    }
    return 0;
}

static int ev_begin(dq_fault_ctx *c, const dq_fault *f, int64_t *hold_ms)
{
    evict_state *st = c->state[c->index];
    int64_t used, footprint, maxmemory;
    size_t size;
    char arg[128], mm[32];

    *hold_ms = EVICT_HOLD_MS;
    if (queue_footprint(c, &footprint) != 0 ||
        info_i64(c, "memory", "used_memory", &used) != 0 ||
        info_i64(c, "stats", "evicted_keys", &st->evicted0) != 0)
        return -1;
    size = footprint / 8 < FILLER_MIN   ? FILLER_MIN
           : footprint / 8 > FILLER_MAX ? FILLER_MAX
                                        : (size_t)(footprint / 8);
    maxmemory = used + (footprint / 2 > HEADROOM_MIN ? footprint / 2
                                                     : HEADROOM_MIN);
    free(st->buf);
    if ((st->buf = malloc(size)) == NULL)
        return dq_fault_fail(c, "evict: out of memory");
    memset(st->buf, 'f', size);
    snprintf(mm, sizeof mm, "%" PRId64, maxmemory);
    snprintf(arg, sizeof arg, "policy=%s,maxmemory=%" PRId64, f->word,
             maxmemory);
    if (dq_fault_record(c, f, "begin", arg) != 0)
        return -1;
    st->changed = true;
    if (config_set(c, "maxmemory-policy", f->word) != 0 ||
        config_set(c, "maxmemory", mm) != 0)
        return -1;
    return fill(c, f, st, size, 3 * maxmemory, maxmemory);
}

/* Ends the window: the filler deleted, the settings back, F end. */
static int end_window(dq_fault_ctx *c, const dq_fault *f, bool cut)
{
    evict_state *st = c->state[c->index];
    int64_t evicted = 0, fillers = st->fillers;
    char arg[128];

    if (info_i64(c, "stats", "evicted_keys", &evicted) != 0 ||
        restore(c, st) != 0)
        return -1;
    snprintf(arg, sizeof arg, "%sevicted_keys=%" PRId64 ",filler_keys=%"
             PRId64, cut ? "interrupted=1," : "", evicted - st->evicted0,
             fillers);
    return dq_fault_record(c, f, "end", arg);
}

static int ev_end(dq_fault_ctx *c, const dq_fault *f)
{
    return end_window(c, f, false);
}

/* The trial ends inside the window: the consumers must not meet a full
 * server while they finish. */
static int ev_cut(dq_fault_ctx *c, const dq_fault *f)
{
    end_window(c, f, true);
    return 1;
}

static void ev_finish(dq_fault_ctx *c, const dq_fault *f)
{
    evict_state *st = c->state[c->index];

    (void)f;
    if (st == NULL)
        return;
    if (c->redis != NULL)
        restore(c, st); /* best effort */
    free(st->buf);
    free(st);
    c->state[c->index] = NULL;
}

/* Lost under memory pressure: allowed unless nothing could be evicted
 * (noeviction) and the strategy keeps every task through a crash (a claim
 * refused with OOM leaves the task where it was). */
static bool ev_loss_allowed(const char *arg, unsigned flags)
{
    return strstr(arg, "noeviction") == NULL || !dq_fault_keeps_all(flags);
}

static void ev_describe(const dq_fault *f, char *buf, size_t len)
{
    snprintf(buf, len, "memory full under maxmemory-policy %s (filler keys "
             "beside the queue)", f->word);
}

const dq_fault_ops dq_fault_evict = {
    .name = "evict",
    .usage = "evict:allkeys-lru|volatile-lru|noeviction[:AT_MS]",
    .help = "maxmemory just above what the server holds, then\n"
            "filler keys beside the queue for 1 s",
    .parse = ev_parse,
    .format = ev_format,
    .needs = DQ_FAULT_NEEDS_OWN_SERVER | DQ_FAULT_NEEDS_REDIS |
             DQ_FAULT_ONE_PER_TRIAL,
    .timing = DQ_FAULT_AT,
    .prepare = ev_prepare,
    .begin = ev_begin,
    .end = ev_end,
    .cut = ev_cut,
    .finish = ev_finish,
    /* An evicted ZSet or payload hash takes every task enqueued before. */
    .loss = DQ_LOSS_ENQUEUED,
    .loss_allowed = ev_loss_allowed,
    .describe = ev_describe,
    .mechanism = "The server reaches maxmemory while another application's "
                 "keys grow beside the queue.  allkeys-lru keeps writes "
                 "going by evicting the least recently used keys of any "
                 "kind: when the other keys are as hot as the queue, LRU "
                 "cannot tell them apart and deletes queue keys, a whole "
                 "ZSet or payload hash of tasks at once, without an error "
                 "to anyone.  volatile-lru evicts only keys with a TTL, "
                 "which a queue without TTL keys never has.  noeviction "
                 "evicts nothing and refuses every write that needs memory "
                 "(OOM): enqueues fail visibly, and nothing already queued "
                 "is lost.",
};
