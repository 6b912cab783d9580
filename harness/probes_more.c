/* probes_more.c -- `dqlab probes` for C22, C27 and C28 (probes_more.h):
 * what a Stream's ids, a plain List and keyspace notifications really do.
 *
 * Kept apart from probes.c (which runs C06-C09 and C20 and owns the
 * command) so that each file stays one job; probes.c calls
 * dq_probes_more_run once after its own probes, and the rows go to the
 * same CSV through dq_runmeta_csv_field.
 *
 * C22 -- "Streams natively support delayed consumption".  A Stream's ids
 *   are "<ms>-<seq>" and XADD accepts an explicit one, so a tutorial may
 *   write the due time there.  But XREAD and XREADGROUP return entries by
 *   id order, not by time (https://redis.io/commands/xread/): an entry
 *   whose id lies 60 s ahead is returned at once.  XADD * then makes
 *   "<last ms>-<seq+1>" when the clock is behind the last id (the
 *   monotonic-id rule, https://redis.io/docs/data-types/streams/), so
 *   every later entry sorts after the future one, and an explicit id
 *   below the top is refused.  Acks and reclaim do work: XAUTOCLAIM (6.2)
 *   moves a pending entry to another consumer, XACK ends it.
 * C28 -- "A plain List cannot serve as a delay queue".  RPUSH task A (due
 *   +300 ms), then B (due +100 ms); a consumer BLPOPs, waits for the
 *   popped task's due time, handles it, BLPOPs again: B comes only after
 *   A's due time, 200 ms late (head-of-line wait).  The same two tasks in
 *   a ZSet (ZADD; look at the head with ZRANGE 0 0 WITHSCORES, wait for
 *   its score, ZPOPMIN) come in due order, each on time.
 * C27 -- "Keyspace notifications add a performance cost".  On a private
 *   redis-server (the setting is server-wide, and INFO cpu counts the
 *   whole server): a subscriber on __keyevent@0__:expired, then SET k v
 *   PX 100 pipelined 256 at a time, as fast as the server takes them, for
 *   c27_write_ms (200 ms: twice the TTL, so the keys written first expire,
 *   and their events go out, between the later writes), then a wait until
 *   INFO stats counts all K keys written expired (and, with "Ex", the
 *   subscriber received K events).  Write throughput is K / write time;
 *   server CPU is the change in INFO cpu used_cpu_sys + used_cpu_user over
 *   the run (writes, expiry, events), per 1,000 keys.  notify-keyspace-events "" and "Ex" alternate, the
 *   order flipped every repeat, and each figure is the median of the
 *   repeats.  Events are published when the key is expired
 *   (https://redis.io/docs/manual/keyspace-notifications/).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "../strategies/dq.h"
#include "probes_more.h"
#include "redis_server.h"
#include "runmeta.h"
#include "signals.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define C27_BATCH 256        /* SETs per pipelined batch */
#define C27_TTL_MS 100
#define C27_WAIT_MS 20000    /* longest wait for the expiries of one run */
#define C27_MAX_REPEATS 64

typedef struct pm_ctx {
    const dq_redis_target *t;
    redisContext *c;          /* to t */
    const char *prefix;
    FILE *csv;
    dq_probes_more_opts o;
    const char *probe;        /* for error messages */
    char *err;
    size_t errlen;
} pm_ctx;

/* ---- Helpers ------------------------------------------------------------- */

static int pm_fail(pm_ctx *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int pm_fail(pm_ctx *p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errlen, "%s: %s", p->probe, msg);
    return -1;
}

static void pm_row(pm_ctx *p, const char *claim, const char *probe,
                   const char *action, const char *observed,
                   const char *input)
{
    dq_runmeta_csv_field(p->csv, claim, ',');
    dq_runmeta_csv_field(p->csv, probe, ',');
    dq_runmeta_csv_field(p->csv, action, ',');
    dq_runmeta_csv_field(p->csv, observed, ',');
    dq_runmeta_csv_field(p->csv, input, '\n');
    fflush(p->csv);
}

static int64_t pm_now_ms(void)
{
    return dq_wall_us() / 1000;
}

/* Sleeps until the wall clock reads at_ms (returns early on a signal). */
static void pm_sleep_until_ms(int64_t at_ms)
{
    int64_t left_us = at_ms * 1000 - dq_wall_us();

    while (left_us > 0 && !dq_signals_caught()) {
        dq_sleep_us(left_us < 50000 ? left_us : 50000);
        left_us = at_ms * 1000 - dq_wall_us();
    }
}

/* Connects to host:port (2 s connect, 10 s socket timeout), with AUTH and
 * SELECT from t when t is not NULL.  NULL with a message in err. */
static redisContext *pm_connect(const char *host, int port,
                                const dq_redis_target *t, char *err,
                                size_t errlen)
{
    struct timeval ctv = {2, 0}, stv = {10, 0};
    redisContext *c = redisConnectWithTimeout(host, port, ctv);
    redisReply *r = NULL;

    if (c == NULL || c->err) {
        snprintf(err, errlen, "redis %s:%d: %s", host, port,
                 c ? c->errstr : "out of memory");
        goto fail;
    }
    redisSetTimeout(c, stv);
    if (t != NULL && t->password[0] != '\0') {
        r = t->user[0] != '\0'
                ? redisCommand(c, "AUTH %s %s", t->user, t->password)
                : redisCommand(c, "AUTH %s", t->password);
        if (r == NULL || r->type == REDIS_REPLY_ERROR) {
            snprintf(err, errlen, "redis %s:%d: AUTH failed", host, port);
            goto fail;
        }
        freeReplyObject(r);
        r = NULL;
    }
    if (t != NULL && t->db != 0) {
        r = redisCommand(c, "SELECT %d", t->db);
        if (r == NULL || r->type == REDIS_REPLY_ERROR) {
            snprintf(err, errlen, "redis %s:%d: SELECT %d failed", host,
                     port, t->db);
            goto fail;
        }
        freeReplyObject(r);
        r = NULL;
    }
    return c;
fail:
    if (r)
        freeReplyObject(r);
    if (c)
        redisFree(c);
    return NULL;
}

/* One command on c; a transport error, or an error reply unless
 * errors_ok, fails the probe.  The reply (caller frees) or NULL. */
static redisReply *pm_cmd(pm_ctx *p, redisContext *c, bool errors_ok,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (r == NULL) {
        pm_fail(p, "redis: %s", c->errstr);
        return NULL;
    }
    if (!errors_ok && r->type == REDIS_REPLY_ERROR) {
        pm_fail(p, "unexpected reply: %s", r->str);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

static void pm_key(const pm_ctx *p, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%s", p->prefix, name);
}

static int pm_del(pm_ctx *p, const char *k)
{
    redisReply *r = pm_cmd(p, p->c, false, "DEL %s", k);
    if (r == NULL)
        return -1;
    freeReplyObject(r);
    return 0;
}

/* Entries in an XREAD / XREADGROUP reply for one stream: [[key,
 * [[id, fields], ...]]], nil when none. */
static size_t stream_entries(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
        r->element[0]->type != REDIS_REPLY_ARRAY ||
        r->element[0]->elements != 2 ||
        r->element[0]->element[1]->type != REDIS_REPLY_ARRAY)
        return 0;
    return r->element[0]->element[1]->elements;
}

/* Parses "<ms>-<seq>". */
static bool parse_id(const char *s, int64_t *ms, int64_t *seq)
{
    char *end;
    errno = 0;
    long long a = strtoll(s, &end, 10);
    if (errno != 0 || *end != '-')
        return false;
    long long b = strtoll(end + 1, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *ms = a;
    *seq = b;
    return true;
}

/* ---- C22: a Stream's ids are not delays ---------------------------------- */

static int c22_reclaim(pm_ctx *p, const char *k, const char *id)
{
    char obs[512], in[160];
    long long reclaimed = 0, acked = 0, pending = -1;
    redisReply *r;

    p->probe = "C22 ack-reclaim";
    /* c1 read the entry (XREADGROUP, c22_future) and never acked it. */
    if ((r = pm_cmd(p, p->c, false, "XAUTOCLAIM %s g c2 0 0-0 COUNT 10",
                    k)) == NULL)
        return -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 2 &&
        r->element[1]->type == REDIS_REPLY_ARRAY)
        reclaimed = (long long)r->element[1]->elements;
    freeReplyObject(r);
    if ((r = pm_cmd(p, p->c, false, "XACK %s g %s", k, id)) == NULL)
        return -1;
    if (r->type == REDIS_REPLY_INTEGER)
        acked = r->integer;
    freeReplyObject(r);
    if ((r = pm_cmd(p, p->c, false, "XPENDING %s g", k)) == NULL)
        return -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
        r->element[0]->type == REDIS_REPLY_INTEGER)
        pending = r->element[0]->integer;
    freeReplyObject(r);
    snprintf(obs, sizeof obs, "XAUTOCLAIM moved %lld pending entr%s from c1 "
             "to c2; XACK returned %lld; XPENDING then counts %lld",
             reclaimed, reclaimed == 1 ? "y" : "ies", acked, pending);
    snprintf(in, sizeof in, "reclaimed=%lld;acked=%lld;pending_after=%lld",
             reclaimed, acked, pending);
    pm_row(p, "C22", "ack-reclaim", "after the reads above (c1 holds the "
           "future entry, never acked): XAUTOCLAIM s g c2 0 0-0 COUNT 10; "
           "XACK s g <its id>; XPENDING s g", obs, in);
    return 0;
}

/* XADD * and an explicit id below the top, after the future entry. */
static int c22_auto(pm_ctx *p, const char *k, int64_t fut_ms)
{
    char obs[640], in[160], auto_id[64] = "", now_id[48], rej[256] = "";
    int64_t ms = 0, seq = 0;
    redisReply *r;

    p->probe = "C22 auto-id";
    if ((r = pm_cmd(p, p->c, false, "XADD %s * task t2", k)) == NULL)
        return -1;
    if (r->type != REDIS_REPLY_STRING || !parse_id(r->str, &ms, &seq)) {
        freeReplyObject(r);
        return pm_fail(p, "XADD *: expected an id");
    }
    snprintf(auto_id, sizeof auto_id, "%s", r->str);
    freeReplyObject(r);
    int64_t ahead = ms - pm_now_ms();
    bool after = ms > fut_ms || (ms == fut_ms && seq > 0);
    snprintf(now_id, sizeof now_id, "%" PRId64 "-0", pm_now_ms());
    if ((r = pm_cmd(p, p->c, true, "XADD %s %s task t3", k, now_id)) == NULL)
        return -1;
    bool rejected = r->type == REDIS_REPLY_ERROR;
    snprintf(rej, sizeof rej, "%s%s", rejected ? "(error) " : "",
             rejected ? r->str : r->type == REDIS_REPLY_STRING ? r->str : "?");
    freeReplyObject(r);
    snprintf(obs, sizeof obs, "XADD * returned %s, %" PRId64 " ms ahead of "
             "now: %s; XADD <now>-0: %s", auto_id, ahead,
             after ? "every later entry sorts after the future one"
                   : "it sorts before the future entry", rej);
    snprintf(in, sizeof in, "auto_after=%d;auto_ahead_ms=%" PRId64
             ";rejected_earlier=%d", after ? 1 : 0, ahead, rejected ? 1 : 0);
    pm_row(p, "C22", "auto-id", "after the future entry: XADD s * task t2, "
           "then XADD s <now>-0 task t3 (a task due now, given its due time "
           "as id)", obs, in);
    return 0;
}

static int c22_future(pm_ctx *p, const char *k, int64_t *fut_ms,
                      char *id, size_t idlen)
{
    char fid[48], obs[512], in[160];
    redisReply *r;

    p->probe = "C22 future-id";
    if ((r = pm_cmd(p, p->c, false, "XGROUP CREATE %s g $ MKSTREAM", k)) ==
        NULL)
        return -1;
    freeReplyObject(r);
    *fut_ms = pm_now_ms() + 60000;
    snprintf(fid, sizeof fid, "%" PRId64 "-0", *fut_ms);
    if ((r = pm_cmd(p, p->c, false, "XADD %s %s task t1", k, fid)) == NULL)
        return -1;
    snprintf(id, idlen, "%s", r->type == REDIS_REPLY_STRING ? r->str : "?");
    freeReplyObject(r);
    if ((r = pm_cmd(p, p->c, false, "XREAD COUNT 10 STREAMS %s 0", k)) ==
        NULL)
        return -1;
    int64_t read_ms = pm_now_ms();
    size_t nx = stream_entries(r);
    freeReplyObject(r);
    if ((r = pm_cmd(p, p->c, false, "XREADGROUP GROUP g c1 COUNT 10 STREAMS "
                    "%s >", k)) == NULL)
        return -1;
    size_t ng = stream_entries(r);
    freeReplyObject(r);
    snprintf(obs, sizeof obs, "XADD returned %s; XREAD returned %zu "
             "entr%s and XREADGROUP %zu, %" PRId64 " ms before the time in "
             "the id", id, nx, nx == 1 ? "y" : "ies", ng, *fut_ms - read_ms);
    snprintf(in, sizeof in, "readable_xread=%d;readable_xreadgroup=%d;"
             "ahead_ms=%" PRId64 ";delay_ms=60000", nx == 1 ? 1 : 0,
             ng == 1 ? 1 : 0, *fut_ms - read_ms);
    pm_row(p, "C22", "future-id", "XGROUP CREATE s g $ MKSTREAM; XADD s "
           "<now+60000>-0 task t1 (the due time as the id); at once XREAD "
           "COUNT 10 STREAMS s 0 and XREADGROUP GROUP g c1 COUNT 10 STREAMS "
           "s >", obs, in);
    return 0;
}

static int probe_c22(pm_ctx *p)
{
    char k[128], id[64];
    int64_t fut_ms = 0;
    int rc;

    pm_key(p, "c22s", k, sizeof k);
    rc = c22_future(p, k, &fut_ms, id, sizeof id);
    if (rc == 0)
        rc = c22_auto(p, k, fut_ms);
    if (rc == 0)
        rc = c22_reclaim(p, k, id);
    if (rc == 0)
        rc = pm_del(p, k);
    return rc;
}

/* ---- C28: a List knows arrival order only -------------------------------- */

typedef struct hol_run {
    int64_t late_us[2];   /* A, B */
    bool b_first;
} hol_run;

/* Records delivery of member "A"/"B" due at due_ms, now. */
static void hol_deliver(hol_run *h, const char *m, int64_t due_ms, int n)
{
    int i = m[0] == 'B';
    h->late_us[i] = dq_wall_us() - due_ms * 1000;
    if (n == 0)
        h->b_first = i == 1;
}

/* RPUSH A (+300 ms), B (+100 ms); BLPOP, wait for its due time, twice. */
static int hol_list(pm_ctx *p, const char *k, hol_run *h)
{
    int64_t t0 = pm_now_ms();
    redisReply *r;

    if ((r = pm_cmd(p, p->c, false, "RPUSH %s A:%" PRId64 " B:%" PRId64, k,
                    t0 + 300, t0 + 100)) == NULL)
        return -1;
    freeReplyObject(r);
    for (int n = 0; n < 2; n++) {
        if ((r = pm_cmd(p, p->c, false, "BLPOP %s 2", k)) == NULL)
            return -1;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[1]->type != REDIS_REPLY_STRING ||
            r->element[1]->len < 3) {
            freeReplyObject(r);
            return pm_fail(p, "BLPOP: expected a task");
        }
        char m[2] = {r->element[1]->str[0], '\0'};
        int64_t due = strtoll(r->element[1]->str + 2, NULL, 10);
        freeReplyObject(r);
        pm_sleep_until_ms(due);
        hol_deliver(h, m, due, n);
    }
    return 0;
}

/* ZADD A (+300 ms), B (+100 ms); wait for the head's score, ZPOPMIN. */
static int hol_zset(pm_ctx *p, const char *k, hol_run *h)
{
    int64_t t0 = pm_now_ms();
    redisReply *r;

    if ((r = pm_cmd(p, p->c, false, "ZADD %s %" PRId64 " A", k,
                    t0 + 300)) == NULL)
        return -1;
    freeReplyObject(r);
    if ((r = pm_cmd(p, p->c, false, "ZADD %s %" PRId64 " B", k,
                    t0 + 100)) == NULL)
        return -1;
    freeReplyObject(r);
    for (int n = 0; n < 2; n++) {
        if ((r = pm_cmd(p, p->c, false, "ZRANGE %s 0 0 WITHSCORES", k)) ==
            NULL)
            return -1;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            freeReplyObject(r);
            return pm_fail(p, "ZRANGE: expected the head");
        }
        pm_sleep_until_ms(strtoll(r->element[1]->str, NULL, 10));
        freeReplyObject(r);
        if ((r = pm_cmd(p, p->c, false, "ZPOPMIN %s", k)) == NULL)
            return -1;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            freeReplyObject(r);
            return pm_fail(p, "ZPOPMIN: expected a member");
        }
        char m[2] = {r->element[0]->str[0], '\0'};
        int64_t due = strtoll(r->element[1]->str, NULL, 10);
        freeReplyObject(r);
        hol_deliver(h, m, due, n);
    }
    return 0;
}

static int probe_c28(pm_ctx *p)
{
    char kl[128], kz[128], obs[640], in[256];
    hol_run l = {{0, 0}, false}, z = {{0, 0}, false};

    p->probe = "C28 list-vs-zset";
    pm_key(p, "c28l", kl, sizeof kl);
    pm_key(p, "c28z", kz, sizeof kz);
    if (hol_list(p, kl, &l) != 0 || hol_zset(p, kz, &z) != 0)
        return -1;
    snprintf(obs, sizeof obs, "List: %s first; A %.1f ms late, B %.1f ms "
             "late (B waited behind A). ZSet: %s first; A %.1f ms late, B "
             "%.1f ms late", l.b_first ? "B" : "A", l.late_us[0] / 1e3,
             l.late_us[1] / 1e3, z.b_first ? "B" : "A", z.late_us[0] / 1e3,
             z.late_us[1] / 1e3);
    snprintf(in, sizeof in, "list_late_a_us=%" PRId64 ";list_late_b_us=%"
             PRId64 ";zset_late_a_us=%" PRId64 ";zset_late_b_us=%" PRId64
             ";list_b_first=%d;zset_b_first=%d;hol_ms=200", l.late_us[0],
             l.late_us[1], z.late_us[0], z.late_us[1], l.b_first ? 1 : 0,
             z.b_first ? 1 : 0);
    pm_row(p, "C28", "list-vs-zset", "task A due at +300 ms arrives before "
           "task B due at +100 ms. List: RPUSH l A B; a consumer BLPOPs, "
           "waits for the popped task's due time, handles it, BLPOPs again. "
           "ZSet: ZADD z A, ZADD z B; the consumer reads the head (ZRANGE z "
           "0 0 WITHSCORES), waits for its score, ZPOPMIN; twice. Lateness "
           "= handled - due", obs, in);
    if (pm_del(p, kl) != 0)
        return -1;
    return pm_del(p, kz);
}

/* ---- C27: keyspace notifications' cost ----------------------------------- */

typedef struct c27_sub {
    redisContext *c;       /* SUBSCRIBEd */
    uint64_t events;       /* messages received, atomic */
} c27_sub;

static void *c27_sub_main(void *arg)
{
    c27_sub *s = arg;
    void *rv;

    /* Ends when the main thread shuts the socket down. */
    while (redisGetReply(s->c, &rv) == REDIS_OK) {
        redisReply *r = rv;
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
            r->element[0]->type == REDIS_REPLY_STRING &&
            strcmp(r->element[0]->str, "message") == 0)
            __atomic_add_fetch(&s->events, 1, __ATOMIC_RELAXED);
        freeReplyObject(r);
    }
    return NULL;
}

/* A field "name:value" of an INFO reply, as a double, into *out. */
static int info_field(pm_ctx *p, const char *section, const char *name,
                      double *out)
{
    redisReply *r = pm_cmd(p, p->c, false, "INFO %s", section);
    if (r == NULL)
        return -1;
    char pat[64];
    snprintf(pat, sizeof pat, "\n%s:", name);
    const char *at = r->type == REDIS_REPLY_STRING ? strstr(r->str, pat)
                                                     : NULL;
    if (at == NULL) {
        freeReplyObject(r);
        return pm_fail(p, "INFO %s has no %s", section, name);
    }
    *out = strtod(at + strlen(pat), NULL);
    freeReplyObject(r);
    return 0;
}

/* Server CPU so far, seconds (user + system, main and other threads). */
static int server_cpu_s(pm_ctx *p, double *s)
{
    double sys, user;
    if (info_field(p, "cpu", "used_cpu_sys", &sys) != 0 ||
        info_field(p, "cpu", "used_cpu_user", &user) != 0)
        return -1;
    *s = sys + user;
    return 0;
}

typedef struct c27_one {
    double keys_per_s, cpu_us_per_1k;
    int64_t keys;
    uint64_t events;
} c27_one;

/* SET k v PX 100, pipelined C27_BATCH at a time, until c27_write_ms have
 * passed; *keys written, *us the time it took. */
static int c27_write(pm_ctx *p, int rep, bool on, int64_t *keys, int64_t *us)
{
    int64_t t0 = dq_mono_us(), end = t0 + p->o.c27_write_ms * INT64_C(1000);
    int64_t n = 0;

    do {
        for (int i = 0; i < C27_BATCH; i++)
            redisAppendCommand(p->c, "SET %s:c27:%d:%d:%" PRId64 " v PX %d",
                               p->prefix, rep, on ? 1 : 0, n + i, C27_TTL_MS);
        for (int i = 0; i < C27_BATCH; i++) {
            void *rv = NULL;
            if (redisGetReply(p->c, &rv) != REDIS_OK || rv == NULL)
                return pm_fail(p, "SET: %s", p->c->errstr);
            redisReply *r = rv;
            bool bad = r->type == REDIS_REPLY_ERROR;
            freeReplyObject(r);
            if (bad)
                return pm_fail(p, "SET: an error reply");
        }
        n += C27_BATCH;
    } while (dq_mono_us() < end);
    *keys = n;
    *us = dq_mono_us() - t0;
    return 0;
}

/* Waits until INFO stats counts `keys` more expired keys than exp0 and,
 * when on, the subscriber `keys` more events than ev0. */
static int c27_wait(pm_ctx *p, c27_sub *sub, bool on, int64_t keys,
                    double exp0, uint64_t ev0)
{
    int64_t until = dq_mono_us() + C27_WAIT_MS * INT64_C(1000);
    double exp1;

    for (;;) {
        if (info_field(p, "stats", "expired_keys", &exp1) != 0)
            return -1;
        uint64_t ev = __atomic_load_n(&sub->events, __ATOMIC_RELAXED) - ev0;
        if (exp1 - exp0 >= (double)keys && (!on || ev >= (uint64_t)keys))
            return 0;
        if (dq_signals_caught())
            return 130;
        if (dq_mono_us() > until)
            return pm_fail(p, "after %d ms, %.0f of %" PRId64 " keys expired "
                           "and %" PRIu64 " events arrived", C27_WAIT_MS,
                           exp1 - exp0, keys, ev);
        dq_sleep_us(10000);
    }
}

/* One run with notify-keyspace-events "" (on false) or "Ex". */
static int c27_run(pm_ctx *p, c27_sub *sub, int rep, bool on, c27_one *out)
{
    double exp0, cpu0, cpu1;
    int64_t write_us = 0, keys = 0;
    redisReply *r;
    int rc;

    if ((r = pm_cmd(p, p->c, false, "CONFIG SET notify-keyspace-events %s",
                    on ? "Ex" : "")) == NULL)
        return -1;
    freeReplyObject(r);
    uint64_t ev0 = __atomic_load_n(&sub->events, __ATOMIC_RELAXED);
    if (info_field(p, "stats", "expired_keys", &exp0) != 0 ||
        server_cpu_s(p, &cpu0) != 0 ||
        c27_write(p, rep, on, &keys, &write_us) != 0)
        return -1;
    if ((rc = c27_wait(p, sub, on, keys, exp0, ev0)) != 0)
        return rc;
    if (server_cpu_s(p, &cpu1) != 0)
        return -1;
    out->keys = keys;
    out->keys_per_s = keys * 1e6 / (double)(write_us ? write_us : 1);
    out->cpu_us_per_1k = (cpu1 - cpu0) * 1e6 / (double)keys * 1000;
    out->events = __atomic_load_n(&sub->events, __ATOMIC_RELAXED) - ev0;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (n >= 1), v left as it was. */
static double median(const double *v, int n)
{
    double w[C27_MAX_REPEATS];
    memcpy(w, v, (size_t)n * sizeof *w);
    qsort(w, (size_t)n, sizeof *w, cmp_double);
    return n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
}

/* Appends label and "a/b/c" of v[0..n) (rounded) to buf. */
static void list_into(char *buf, size_t len, const char *label,
                      const double *v, int n)
{
    size_t off = strlen(buf);
    if (off < len)
        off += (size_t)snprintf(buf + off, len - off, "%s", label);
    for (int i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%.0f", i ? "/" : "",
                                v[i]);
}

typedef struct c27_sums {
    double rate[2][C27_MAX_REPEATS], cpu[2][C27_MAX_REPEATS];
    int64_t keys[2];          /* written, over the runs of each setting */
    uint64_t events[2];       /* received, likewise */
} c27_sums;

static void c27_row(pm_ctx *p, const c27_sums *m)
{
    int n = p->o.c27_repeats;
    char obs[1400], in[512], action[720], runs[800] = "";
    double r0 = median(m->rate[0], n), r1 = median(m->rate[1], n);
    double c0 = median(m->cpu[0], n), c1 = median(m->cpu[1], n);
    long rate_pm = r0 > 0 ? (long)(1000 * r1 / r0 + 0.5) : 0;
    long cpu_pm = c0 > 0 ? (long)(1000 * c1 / c0 + 0.5) : 0;

    list_into(runs, sizeof runs, "writes/s per run: off ", m->rate[0], n);
    list_into(runs, sizeof runs, ", on ", m->rate[1], n);
    list_into(runs, sizeof runs, "; CPU us per 1,000 keys per run: off ",
              m->cpu[0], n);
    list_into(runs, sizeof runs, ", on ", m->cpu[1], n);
    snprintf(obs, sizeof obs, "medians of %d runs each: writes/s off %.0f, "
             "on %.0f (on/off %.3f); server CPU per 1,000 keys off %.0f us, "
             "on %.0f us (on/off %.3f); expired events received: off %"
             PRIu64 " for %" PRId64 " keys, on %" PRIu64 " for %" PRId64
             " keys. %s", n, r0, r1, rate_pm / 1000.0, c0, c1,
             cpu_pm / 1000.0, m->events[0], m->keys[0], m->events[1],
             m->keys[1], runs);
    snprintf(in, sizeof in, "measured=1;repeats=%d;write_ms=%d;"
             "off_keys_per_s=%.0f;on_keys_per_s=%.0f;off_cpu_us_per_1k=%.0f;"
             "on_cpu_us_per_1k=%.0f;rate_ratio_pm=%ld;cpu_ratio_pm=%ld;"
             "off_keys=%" PRId64 ";on_keys=%" PRId64 ";off_events=%" PRIu64
             ";on_events=%" PRIu64, n, p->o.c27_write_ms, r0, r1, c0, c1,
             rate_pm, cpu_pm, m->keys[0], m->keys[1], m->events[0],
             m->events[1]);
    snprintf(action, sizeof action, "private redis-server; a subscriber on "
             "__keyevent@0__:expired; for %d ms, SET k v PX %d pipelined %d "
             "at a time as fast as the server takes them (keys written first "
             "expire while later ones are written), then wait until INFO "
             "stats counts every key expired; notify-keyspace-events \"\" "
             "(off) and \"Ex\" (on) alternating, %d runs each; throughput = "
             "keys / write time, CPU = change of INFO cpu used_cpu_sys + "
             "used_cpu_user over the run (writes, expiry, events)",
             p->o.c27_write_ms, C27_TTL_MS, C27_BATCH, n);
    pm_row(p, "C27", "ttl-keys-notify", action, obs, in);
}

/* The repeats, then the row. */
static int c27_measure(pm_ctx *p, c27_sub *sub)
{
    c27_sums m;

    memset(&m, 0, sizeof m);
    for (int rep = 0; rep < p->o.c27_repeats; rep++) {
        for (int k = 0; k < 2; k++) {
            int on = (k + rep) % 2;  /* the order flips every repeat */
            c27_one one = {0, 0, 0, 0};
            int rc = c27_run(p, sub, rep, on, &one);
            if (rc != 0)
                return rc;
            m.rate[on][rep] = one.keys_per_s;
            m.cpu[on][rep] = one.cpu_us_per_1k;
            m.keys[on] += one.keys;
            m.events[on] += one.events;
        }
    }
    c27_row(p, &m);
    return 0;
}

static int probe_c27(pm_ctx *p)
{
    dq_redis_server srv;
    dq_redis_server_opts so;
    c27_sub sub = {NULL, 0};
    redisContext *saved = p->c;
    pthread_t th;
    bool thread = false;
    char e[512];
    int rc = -1;

    p->probe = "C27 ttl-keys-notify";
    memset(&srv, 0, sizeof srv);
    memset(&so, 0, sizeof so);
    if (dq_redis_server_start(&srv, &so, e, sizeof e) != 0) {
        char obs[600];
        if (dq_signals_caught())
            return 130;
        snprintf(obs, sizeof obs, "not measured: the private redis-server "
                 "did not start: %s", e);
        pm_row(p, "C27", "ttl-keys-notify", "a TTL-key workload on a private "
               "redis-server, notifications off and on", obs, "measured=0");
        return 0;
    }
    p->c = pm_connect("127.0.0.1", srv.port, NULL, e, sizeof e);
    sub.c = pm_connect("127.0.0.1", srv.port, NULL, e, sizeof e);
    if (p->c == NULL || sub.c == NULL) {
        pm_fail(p, "%s", e);
        goto done;
    }
    redisReply *r = pm_cmd(p, sub.c, false, "SUBSCRIBE __keyevent@0__:expired");
    if (r == NULL)
        goto done;
    freeReplyObject(r);
    /* The subscriber waits for events as long as the runs take. */
    struct timeval forever = {0, 0};
    redisSetTimeout(sub.c, forever);
    if (pthread_create(&th, NULL, c27_sub_main, &sub) != 0) {
        pm_fail(p, "pthread_create failed");
        goto done;
    }
    thread = true;
    rc = c27_measure(p, &sub);
done:
    if (thread) {
        shutdown(sub.c->fd, SHUT_RDWR);
        pthread_join(th, NULL);
    }
    if (sub.c)
        redisFree(sub.c);
    if (p->c)
        redisFree(p->c);
    p->c = saved;
    dq_redis_server_stop(&srv);
    return rc;
}

/* ---- Driver ------------------------------------------------------------- */

int dq_probes_more_run(const dq_redis_target *t, const char *prefix,
                       FILE *csv, const dq_probes_more_opts *o, char *err,
                       size_t errlen)
{
    pm_ctx p;
    char e[512];
    int rc = 0;

    memset(&p, 0, sizeof p);
    p.t = t;
    p.prefix = prefix;
    p.csv = csv;
    p.err = err;
    p.errlen = errlen;
    p.o.c27_write_ms = o ? o->c27_write_ms : 200;
    p.o.c27_repeats = o ? o->c27_repeats : 5;
    p.probe = "probes";
    if (p.o.c27_write_ms < 1 || p.o.c27_write_ms > 60000 ||
        p.o.c27_repeats < 1 || p.o.c27_repeats > C27_MAX_REPEATS)
        return pm_fail(&p, "c27_write_ms %d (1..60000) or c27_repeats %d "
                       "(1..%d)", p.o.c27_write_ms, p.o.c27_repeats,
                       C27_MAX_REPEATS);
    if ((p.c = pm_connect(t->host, t->port, t, e, sizeof e)) == NULL) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    int (*const probes[])(pm_ctx *) = {probe_c22, probe_c28, probe_c27};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0] && rc == 0; i++)
        rc = dq_signals_caught() ? 130 : probes[i](&p);
    if (rc == 0 && dq_signals_caught())
        rc = 130;
    /* Whatever a failed probe left behind (a transport error leaves the
     * context unusable: a fresh one). */
    if (p.c->err) {
        redisFree(p.c);
        p.c = pm_connect(t->host, t->port, t, e, sizeof e);
    }
    if (p.c != NULL) {
        const char *names[] = {"c22s", "c28l", "c28z"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            redisReply *r = redisCommand(p.c, "DEL %s:%s", prefix, names[i]);
            if (r)
                freeReplyObject(r);
        }
        redisFree(p.c);
    }
    return rc;
}
