/* probes.c -- `dqlab probes`: decisive checks of claims about Redis itself
 * (C06-C09, C20, C22, C27 and C28 of docs/CLAIMS.md, the last three in
 * probes_more.c) against a real redis-server.
 *
 * Every probe sends real commands and records what Redis answered
 * (probes.h gives the CSV format).  What each one does and why it decides
 * its claim:
 *
 * C06 -- scores are IEEE 754 doubles (https://redis.io/commands/zadd/: "the
 *   score values should be the string representation of a double precision
 *   floating point number"), so an integer is stored exactly only while it
 *   fits the 53-bit significand.  ZADD then ZSCORE (pipelined) of: ms epoch
 *   timestamps from now to 2100-01-01; the same in microseconds; nanosecond
 *   timestamps around now; 2^k+1 for k = 32..62 and then every integer
 *   around the first failing 2^k, which finds the first integer that does
 *   not round-trip; and "ms x 4096 + 4095" (a 12-bit sequence number
 *   packed under the ms, as Snowflake-style ids do), bisected for the
 *   first ms at which it stops being exact.  A score is exact when the
 *   double ZSCORE returns equals the integer sent (compared in long
 *   double, which holds both exactly).
 * C20 -- `ZADD key MAXLEN 10 1 a`: Redis's error reply verbatim and ZCARD
 *   afterwards; then XADD MAXLEN 10 twenty times on a stream and XLEN,
 *   where the same word does cap (https://redis.io/commands/xadd/).
 * C08 -- two tasks with equal payloads and due times now+50 / now+150 ms,
 *   once with the payload as the member (ZADD z due payload) and once in
 *   dqlab's layout (member = id, payload in a hash; the commands of
 *   rconn.h dq_zh_enqueue): ZCARD each, then what a consumer finds due
 *   at now+100 and now+200 ms.  ZADD on an existing member updates its
 *   score (https://redis.io/commands/zadd/), so the second task replaces
 *   the first and moves its due time.
 * C09 -- N payload keys SET PX 200 with due times now+500 ms, and N with
 *   PX 1000: at the due time a consumer claims each task (ZPOPMIN) and GETs
 *   its payload; a nil is a lost task.  Half of the long-TTL payloads are
 *   then "processed" (DEL) and half left behind as a crashed consumer
 *   would; after their TTL, EXISTS counts the leftovers.  GET never returns
 *   an expired key (https://redis.io/commands/expire/: a key is checked on
 *   access as well as expired in the background).
 * C07 -- ZPOPMIN is one command, so 4 threads (one connection each)
 *   popping a 1000-member set one at a time never get the same member:
 *   duplicates and misses are counted.  Then a forked child (its own
 *   connection) ZPOPMINs a task due in 60 s, as the zpopmin strategy does
 *   before it sees the task is not due, and _exit()s before the put-back
 *   ZADD: ZSCORE and ZCARD show whether the set still holds the task.
 *
 * Keys: "dqprobe:{<pid>.<ms>}:<name>", deleted by each probe and once more
 * by SCAN at the end, whatever happened.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../strategies/dq.h"
#include "commands.h"
#include "probes.h"
#include "probes_more.h"
#include "redis_server.h"
#include "redis_url.h"
#include "runmeta.h"
#include "signals.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* 2100-01-01T00:00:00Z in ms since the epoch: the end of the ms range. */
#define Y2100_MS INT64_C(4102444800000)
#define SAMPLES 2000          /* ms and us timestamps sampled */
#define NS_SAMPLES 1000
#define POP_MEMBERS 1000      /* C07 atomicity set */
#define POP_THREADS 4
#define TTL_TASKS 20          /* C09 tasks per case */

typedef struct probe_ctx {
    const dq_redis_target *t;
    redisContext *c;
    char prefix[64];          /* "dqprobe:{<pid>.<ms>}" */
    FILE *csv;
    uint64_t rng;
    const char *probe;        /* for error messages */
    char *err;
    size_t errlen;
} probe_ctx;

/* ---- Small helpers ------------------------------------------------------ */

static uint64_t rng_next(probe_ctx *p)
{
    /* xorshift64*: reproducibility is not needed, spread is. */
    p->rng ^= p->rng >> 12;
    p->rng ^= p->rng << 25;
    p->rng ^= p->rng >> 27;
    return p->rng * UINT64_C(2685821657736338717);
}

static void sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !dq_signals_caught())
        ;
}

/* Sleeps until the wall clock reads at_ms. */
static void sleep_until_ms(int64_t at_ms)
{
    sleep_ms(at_ms - dq_wall_us() / 1000);
}

static int64_t now_ms(void)
{
    return dq_wall_us() / 1000;
}

/* "YYYY-mm-dd" (UTC) of a time in seconds since the epoch. */
static void fmt_date_s(int64_t s, char *buf, size_t len)
{
    time_t t = (time_t)s;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%d", &tm) == 0)
        snprintf(buf, len, "?");
}

static void key(const probe_ctx *p, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%s", p->prefix, name);
}

static void row(probe_ctx *p, const char *claim, const char *probe,
                const char *action, const char *observed, const char *input)
{
    dq_runmeta_csv_field(p->csv, claim, ',');
    dq_runmeta_csv_field(p->csv, probe, ',');
    dq_runmeta_csv_field(p->csv, action, ',');
    dq_runmeta_csv_field(p->csv, observed, ',');
    dq_runmeta_csv_field(p->csv, input, '\n');
    fflush(p->csv);
}

static int fail(probe_ctx *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int fail(probe_ctx *p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errlen, "%s: %s", p->probe, msg);
    return -1;
}

/* Connects to t (2 s connect timeout, 10 s socket timeout), AUTH and
 * SELECT as the target says.  NULL with a message in err on failure; the
 * password never appears in it. */
static redisContext *connect_target(const dq_redis_target *t, char *err,
                                    size_t errlen)
{
    struct timeval ctv = {2, 0}, stv = {10, 0};
    redisContext *c = redisConnectWithTimeout(t->host, t->port, ctv);
    redisReply *r = NULL;
    if (c == NULL) {
        snprintf(err, errlen, "redis %s:%d: out of memory", t->host, t->port);
        return NULL;
    }
    if (c->err) {
        snprintf(err, errlen, "redis %s:%d: %s", t->host, t->port, c->errstr);
        goto fail;
    }
    redisSetTimeout(c, stv);
    if (t->password[0] != '\0') {
        if (t->user[0] != '\0')
            r = redisCommand(c, "AUTH %s %s", t->user, t->password);
        else
            r = redisCommand(c, "AUTH %s", t->password);
        if (r == NULL || r->type == REDIS_REPLY_ERROR) {
            snprintf(err, errlen, "redis %s:%d: AUTH failed%s%s", t->host,
                     t->port, r ? ": " : "", r ? r->str : "");
            goto fail;
        }
        freeReplyObject(r);
        r = NULL;
    }
    if (t->db != 0) {
        r = redisCommand(c, "SELECT %d", t->db);
        if (r == NULL || r->type == REDIS_REPLY_ERROR) {
            snprintf(err, errlen, "redis %s:%d: SELECT %d failed%s%s",
                     t->host, t->port, t->db, r ? ": " : "",
                     r ? r->str : c->errstr);
            goto fail;
        }
        freeReplyObject(r);
    }
    return c;
fail:
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return NULL;
}

/* One command; a transport error or (when !errors_ok) an error reply fails
 * the probe.  Returns the reply (caller frees) or NULL with p->err set. */
static redisReply *cmdv(probe_ctx *p, redisContext *c, bool errors_ok,
                        int argc, const char **argv, const size_t *lens)
{
    redisReply *r = redisCommandArgv(c, argc, argv, lens);
    if (r == NULL) {
        fail(p, "%s: redis %s:%d: %s", argv[0], p->t->host, p->t->port,
             c->errstr);
        return NULL;
    }
    if (!errors_ok && r->type == REDIS_REPLY_ERROR) {
        fail(p, "%s: unexpected reply: %s", argv[0], r->str);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

#define CMD(p, ...)                                                          \
    cmdv((p), (p)->c, false,                                                 \
         (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)),      \
         (const char *[]){__VA_ARGS__}, NULL)

/* Runs a command whose reply is an integer into *out; 0 or -1. */
static int cmd_int(probe_ctx *p, redisReply *r, long long *out)
{
    if (r == NULL)
        return -1;
    if (r->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(r);
        return fail(p, "expected an integer reply");
    }
    *out = r->integer;
    freeReplyObject(r);
    return 0;
}

static int del_key(probe_ctx *p, const char *k)
{
    redisReply *r = CMD(p, "DEL", k);
    if (r == NULL)
        return -1;
    freeReplyObject(r);
    return 0;
}

/* ---- C06: score round trips -------------------------------------------- */

typedef struct rt_result {
    size_t n, exact;
    size_t first_bad;          /* index of the first inexact value; n: none */
    char first_bad_reply[64];  /* ZSCORE's reply for it */
    long double max_err;       /* largest |score read - value sent| */
} rt_result;

/* ZADD key v[i] m<i> for every i, then ZSCORE key m<i>, all pipelined, then
 * DEL key.  Fills *res.  0, or -1 with p->err. */
static int roundtrip(probe_ctx *p, const char *k, const int64_t *v, size_t n,
                     rt_result *res)
{
    memset(res, 0, sizeof *res);
    res->n = n;
    res->first_bad = n;
    for (size_t i = 0; i < n; i++)
        redisAppendCommand(p->c, "ZADD %s %lld m%lu", k, (long long)v[i],
                           (unsigned long)i);
    for (size_t i = 0; i < n; i++)
        redisAppendCommand(p->c, "ZSCORE %s m%lu", k, (unsigned long)i);
    redisAppendCommand(p->c, "DEL %s", k);
    for (size_t i = 0; i < 2 * n + 1; i++) {
        void *rv = NULL;
        if (redisGetReply(p->c, &rv) != REDIS_OK || rv == NULL)
            return fail(p, "redis %s:%d: %s", p->t->host, p->t->port,
                        p->c->errstr);
        redisReply *r = rv;
        if (r->type == REDIS_REPLY_ERROR) {
            if (p->err[0] == '\0')
                fail(p, "unexpected reply: %s", r->str);
            freeReplyObject(r);
            continue;
        }
        if (i >= n && i < 2 * n) {
            size_t j = i - n;
            if (r->type != REDIS_REPLY_STRING) {
                fail(p, "ZSCORE: expected a score");
                freeReplyObject(r);
                continue;
            }
            char *end;
            errno = 0;
            double d = strtod(r->str, &end);
            long double diff = fabsl((long double)d - (long double)v[j]);
            if (*end == '\0' && errno == 0 && diff == 0) {
                res->exact++;
            } else if (res->first_bad == n) {
                res->first_bad = j;
                snprintf(res->first_bad_reply, sizeof res->first_bad_reply,
                         "%s", r->str);
            }
            if (diff > res->max_err)
                res->max_err = diff;
        }
        freeReplyObject(r);
    }
    return p->err[0] != '\0' ? -1 : 0;
}

/* 1 when v round-trips exactly, 0 when not, -1 on error. */
static int exact1(probe_ctx *p, const char *k, int64_t v, char *reply,
                  size_t replylen)
{
    rt_result r;
    if (roundtrip(p, k, &v, 1, &r) != 0)
        return -1;
    if (reply)
        snprintf(reply, replylen, "%s", r.exact ? "" : r.first_bad_reply);
    return r.exact == 1;
}

/* n samples spread evenly over [lo, hi] (both ends included), each moved
 * forward by a random offset below jitter (and kept <= hi). */
static void spread(probe_ctx *p, int64_t lo, int64_t hi, int64_t jitter,
                   int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t x = lo + (int64_t)((long double)(hi - lo) * i / (n - 1));
        if (i > 0 && i + 1 < n && jitter > 1)
            x += (int64_t)(rng_next(p) % (uint64_t)jitter);
        v[i] = x > hi ? hi : x;
    }
}

/* C06, milliseconds from now to 2100. */
static int c06_ms(probe_ctx *p, const char *k, int64_t *v, int64_t t0)
{
    char action[512], obs[512], in[256];
    char d1[32];
    rt_result r;

    p->probe = "C06 ms-epoch";
    spread(p, t0, Y2100_MS, 1000, v, SAMPLES);
    if (roundtrip(p, k, v, SAMPLES, &r) != 0)
        return -1;
    fmt_date_s(t0 / 1000, d1, sizeof d1);
    snprintf(action, sizeof action, "ZADD then ZSCORE of %d ms epoch "
             "timestamps spread from now (%" PRId64 ", %s) to %" PRId64
             " (2100-01-01), random ms offsets", SAMPLES, t0, d1, Y2100_MS);
    if (r.exact == r.n)
        snprintf(obs, sizeof obs, "%zu of %zu exact", r.exact, r.n);
    else
        snprintf(obs, sizeof obs, "%zu of %zu exact; first inexact %" PRId64
                 " read back as %s", r.exact, r.n, v[r.first_bad],
                 r.first_bad_reply);
    snprintf(in, sizeof in, "exact=%zu;n=%zu;lo=%" PRId64 ";hi=%" PRId64,
             r.exact, r.n, t0, Y2100_MS);
    row(p, "C06", "ms-epoch", action, obs, in);
    return 0;
}

/* C06, microseconds from now to 2100. */
static int c06_us(probe_ctx *p, const char *k, int64_t *v, int64_t t0)
{
    char action[512], obs[512], in[256];
    rt_result r;

    p->probe = "C06 us-epoch";
    spread(p, t0 * 1000, Y2100_MS * 1000, 1000000, v, SAMPLES);
    if (roundtrip(p, k, v, SAMPLES, &r) != 0)
        return -1;
    snprintf(action, sizeof action, "ZADD then ZSCORE of %d microsecond "
             "epoch timestamps spread from now to 2100-01-01, random us "
             "offsets", SAMPLES);
    if (r.exact == r.n)
        snprintf(obs, sizeof obs, "%zu of %zu exact", r.exact, r.n);
    else
        snprintf(obs, sizeof obs, "%zu of %zu exact; first inexact %" PRId64
                 " read back as %s", r.exact, r.n, v[r.first_bad],
                 r.first_bad_reply);
    snprintf(in, sizeof in, "exact=%zu;n=%zu", r.exact, r.n);
    row(p, "C06", "us-epoch", action, obs, in);
    return 0;
}

/* C06, nanoseconds around now. */
static int c06_ns(probe_ctx *p, const char *k, int64_t *v, int64_t t0)
{
    char action[512], obs[512], in[256];
    rt_result r;

    (void)t0;
    p->probe = "C06 ns-epoch";
    int64_t ns0 = dq_wall_us() * 1000;
    for (size_t i = 0; i < NS_SAMPLES; i++)
        v[i] = ns0 + (int64_t)(rng_next(p) % UINT64_C(1000000000));
    if (roundtrip(p, k, v, NS_SAMPLES, &r) != 0)
        return -1;
    snprintf(action, sizeof action, "ZADD then ZSCORE of %d nanosecond "
             "epoch timestamps within 1 s of now", NS_SAMPLES);
    snprintf(obs, sizeof obs, "%zu of %zu exact; largest error %.0Lf ns",
             r.exact, r.n, r.max_err);
    if (r.first_bad < r.n) {
        size_t ol = strlen(obs);
        snprintf(obs + ol, sizeof obs - ol, "; e.g. %" PRId64 " read back "
                 "as %s", v[r.first_bad], r.first_bad_reply);
    }
    snprintf(in, sizeof in, "exact=%zu;n=%zu;max_err=%.0Lf", r.exact, r.n,
             r.max_err);
    row(p, "C06", "ns-epoch", action, obs, in);
    return 0;
}

/* C06, the first integer a score does not hold exactly: 2^k+1 for k =
 * 32..62, then every integer around the first failing 2^k. */
static int c06_first_inexact(probe_ctx *p, const char *k, int64_t *v,
                             int64_t t0)
{
    char action[512], obs[512], in[256];
    rt_result r;

    (void)t0;
    p->probe = "C06 first-inexact";
    int kfail = -1;
    for (int e = 32; e <= 62 && kfail < 0; e++) {
        int x = exact1(p, k, (INT64_C(1) << e) + 1, NULL, 0);
        if (x < 0)
            return -1;
        if (x == 0)
            kfail = e;
    }
    if (kfail < 0) {
        row(p, "C06", "first-inexact", "ZADD/ZSCORE of 2^k+1 for k=32..62",
            "every value exact (unexpected for a double score)",
            "first_inexact=0");
    } else {
        int64_t base = INT64_C(1) << kfail;
        size_t m = 0;
        for (int64_t x = base - 8; x <= base + 8; x++)
            v[m++] = x;
        if (roundtrip(p, k, v, m, &r) != 0)
            return -1;
        if (r.first_bad == r.n) {
            fail(p, "2^%d+1 failed alone but not in the scan", kfail);
            return -1;
        }
        int64_t first = v[r.first_bad];
        char dns[32], dus[32], dms[32];
        fmt_date_s((first - 1) / INT64_C(1000000000), dns, sizeof dns);
        fmt_date_s((first - 1) / INT64_C(1000000), dus, sizeof dus);
        fmt_date_s((first - 1) / 1000, dms, sizeof dms);
        snprintf(action, sizeof action, "ZADD/ZSCORE of 2^k+1 for k=32..62 "
                 "(first inexact at k=%d), then of every integer from "
                 "2^%d-8 to 2^%d+8", kfail, kfail, kfail);
        snprintf(obs, sizeof obs, "first inexact integer %" PRId64 " (2^%d+%"
                 PRId64 ") read back as %s; every integer up to %" PRId64
                 " is exact: as ns that is %s, as us %s, as ms %s",
                 first, kfail, first - base, r.first_bad_reply, first - 1,
                 dns, dus, dms);
        snprintf(in, sizeof in, "first_inexact=%" PRId64, first);
        row(p, "C06", "first-inexact", action, obs, in);
    }
    return 0;
}

/* C06, ms x 4096 + 4095 (a 12-bit sequence under the ms): bisect the
 * first ms at which it stops. */
static int c06_x4096(probe_ctx *p, const char *k, int64_t *v, int64_t t0)
{
    char action[512], obs[512], in[256];
    char d2[32];

    (void)v;
    p->probe = "C06 ms-x4096";
    int64_t lo = t0, hi = Y2100_MS;
    int xl = exact1(p, k, lo * 4096 + 4095, NULL, 0);
    int xh = xl < 0 ? -1 : exact1(p, k, hi * 4096 + 4095, NULL, 0);
    if (xl < 0 || xh < 0)
        return -1;
    snprintf(action, sizeof action, "ZADD/ZSCORE of ms*4096+4095 (a 12-bit "
             "sequence under the ms) for ms from now to 2100-01-01, "
             "bisecting for the first ms that is not exact");
    if (xl == 0) {
        snprintf(obs, sizeof obs, "already inexact now (ms %" PRId64 ")", lo);
        snprintf(in, sizeof in, "first_inexact_ms=%" PRId64, lo);
    } else if (xh == 1) {
        snprintf(obs, sizeof obs, "exact through 2100-01-01");
        snprintf(in, sizeof in, "first_inexact_ms=0");
    } else {
        int steps = 0;
        while (hi - lo > 1) {           /* lo exact, hi inexact */
            int64_t mid = lo + (hi - lo) / 2;
            int x = exact1(p, k, mid * 4096 + 4095, NULL, 0);
            if (x < 0)
                return -1;
            if (x)
                lo = mid;
            else
                hi = mid;
            steps++;
        }
        char reply[64];
        if (exact1(p, k, hi * 4096 + 4095, reply, sizeof reply) < 0)
            return -1;
        fmt_date_s(hi / 1000, d2, sizeof d2);
        snprintf(obs, sizeof obs, "exact up to ms %" PRId64 "; from ms %"
                 PRId64 " (%s) on it is not: %" PRId64 " read back as %s "
                 "(%d bisection steps)", lo, hi, d2, hi * 4096 + 4095, reply,
                 steps);
        snprintf(in, sizeof in, "first_inexact_ms=%" PRId64, hi);
    }
    row(p, "C06", "ms-x4096", action, obs, in);
    return 0;
}

static int probe_c06(probe_ctx *p)
{
    char k[128];
    int64_t *v = malloc(SAMPLES * sizeof *v), t0;
    int rc = -1;

    if (v == NULL)
        return fail(p, "out of memory");
    key(p, "c06", k, sizeof k);
    t0 = now_ms();
    if (c06_ms(p, k, v, t0) == 0 && c06_us(p, k, v, t0) == 0 &&
        c06_ns(p, k, v, t0) == 0 && c06_first_inexact(p, k, v, t0) == 0 &&
        c06_x4096(p, k, v, t0) == 0)
        rc = 0;
    free(v);
    return rc;
}

/* ---- C20: ZADD MAXLEN --------------------------------------------------- */

static int probe_c20(probe_ctx *p)
{
    char kz[128], ks[128], obs[512], in[128], n[16];
    long long card = 0, xlen = 0;
    p->probe = "C20 zadd-maxlen";
    key(p, "c20z", kz, sizeof kz);
    key(p, "c20s", ks, sizeof ks);
    redisReply *r = cmdv(p, p->c, true, 6,
                         (const char *[]){"ZADD", kz, "MAXLEN", "10", "1",
                                          "a"}, NULL);
    if (r == NULL)
        return -1;
    bool rejected = r->type == REDIS_REPLY_ERROR;
    char reply[256];
    if (rejected)
        snprintf(reply, sizeof reply, "(error) %s", r->str);
    else if (r->type == REDIS_REPLY_INTEGER)
        snprintf(reply, sizeof reply, "(integer) %lld", r->integer);
    else
        snprintf(reply, sizeof reply, "(reply type %d)", r->type);
    freeReplyObject(r);
    if (cmd_int(p, CMD(p, "ZCARD", kz), &card) != 0)
        return -1;
    snprintf(obs, sizeof obs, "%s; ZCARD afterwards %lld", reply, card);
    snprintf(in, sizeof in, "rejected=%d;zcard=%lld", rejected ? 1 : 0, card);
    row(p, "C20", "zadd-maxlen", "ZADD key MAXLEN 10 1 a", obs, in);
    if (del_key(p, kz) != 0)
        return -1;

    p->probe = "C20 xadd-maxlen";
    for (int i = 0; i < 20; i++) {
        snprintf(n, sizeof n, "%d", i);
        r = CMD(p, "XADD", ks, "MAXLEN", "10", "*", "f", n);
        if (r == NULL)
            return -1;
        freeReplyObject(r);
    }
    if (cmd_int(p, CMD(p, "XLEN", ks), &xlen) != 0)
        return -1;
    snprintf(obs, sizeof obs, "XLEN %lld after 20 entries", xlen);
    snprintf(in, sizeof in, "xlen=%lld;added=20;maxlen=10", xlen);
    row(p, "C20", "xadd-maxlen", "XADD stream MAXLEN 10 * f i, for i = "
        "0..19, then XLEN", obs, in);
    return del_key(p, ks);
}

/* ---- C08: payload as member vs id as member ---------------------------- */

/* Due members of z at the wall clock now (ZRANGEBYSCORE -inf now), into
 * *n; 0 or -1. */
static int due_count(probe_ctx *p, const char *z, long long *n)
{
    char now[32];
    snprintf(now, sizeof now, "%" PRId64, now_ms());
    redisReply *r = CMD(p, "ZRANGEBYSCORE", z, "-inf", now);
    if (r == NULL)
        return -1;
    if (r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        return fail(p, "ZRANGEBYSCORE: expected an array");
    }
    *n = (long long)r->elements;
    freeReplyObject(r);
    return 0;
}

static int probe_c08(probe_ctx *p)
{
    char zp[128], zi[128], hi[128], s1[32], s2[32], obs[512], in[160];
    const char *payload = "{\"order\":42,\"action\":\"cancel-unpaid\"}";
    long long cp = 0, ci = 0, dp1 = 0, di1 = 0, dp2 = 0, di2 = 0;
    p->probe = "C08 equal-payloads";
    key(p, "c08pm", zp, sizeof zp);
    key(p, "c08z", zi, sizeof zi);
    key(p, "c08p", hi, sizeof hi);
    int64_t t0 = now_ms();
    snprintf(s1, sizeof s1, "%" PRId64, t0 + 50);
    snprintf(s2, sizeof s2, "%" PRId64, t0 + 150);
    /* Payload as member. */
    redisReply *r;
    if ((r = CMD(p, "ZADD", zp, s1, payload)) == NULL)
        return -1;
    freeReplyObject(r);
    if ((r = CMD(p, "ZADD", zp, s2, payload)) == NULL)
        return -1;
    freeReplyObject(r);
    /* dqlab's layout: MULTI HSET p id payload; ZADD z due id; EXEC. */
    const char *ids[2] = {"task-1", "task-2"}, *dues[2] = {s1, s2};
    for (int i = 0; i < 2; i++) {
        if ((r = CMD(p, "MULTI")) == NULL)
            return -1;
        freeReplyObject(r);
        if ((r = CMD(p, "HSET", hi, ids[i], payload)) == NULL)
            return -1;
        freeReplyObject(r);
        if ((r = CMD(p, "ZADD", zi, dues[i], ids[i])) == NULL)
            return -1;
        freeReplyObject(r);
        if ((r = CMD(p, "EXEC")) == NULL)
            return -1;
        freeReplyObject(r);
    }
    if (cmd_int(p, CMD(p, "ZCARD", zp), &cp) != 0 ||
        cmd_int(p, CMD(p, "ZCARD", zi), &ci) != 0)
        return -1;
    sleep_until_ms(t0 + 100);
    if (due_count(p, zp, &dp1) != 0 || due_count(p, zi, &di1) != 0)
        return -1;
    sleep_until_ms(t0 + 200);
    if (due_count(p, zp, &dp2) != 0 || due_count(p, zi, &di2) != 0)
        return -1;
    snprintf(obs, sizeof obs, "payload as member: ZCARD %lld; due at +100 ms "
             "%lld, at +200 ms %lld (the second ZADD moved the first task's "
             "due time)", cp, dp1, dp2);
    snprintf(in, sizeof in, "members=%lld;due_first=%lld;delivered=%lld;"
             "tasks=2", cp, dp1, dp2);
    row(p, "C08", "payload-member", "ZADD z now+50 P; ZADD z now+150 P "
        "(same payload P, two tasks); ZCARD; ZRANGEBYSCORE z -inf now at "
        "+100 and +200 ms", obs, in);
    snprintf(obs, sizeof obs, "id as member: ZCARD %lld; due at +100 ms "
             "%lld, at +200 ms %lld", ci, di1, di2);
    snprintf(in, sizeof in, "members=%lld;due_first=%lld;delivered=%lld;"
             "tasks=2", ci, di1, di2);
    row(p, "C08", "id-member", "MULTI HSET p id P; ZADD z due id; EXEC for "
        "ids task-1 (now+50) and task-2 (now+150), same P; ZCARD; "
        "ZRANGEBYSCORE z -inf now at +100 and +200 ms", obs, in);
    if (del_key(p, zp) != 0 || del_key(p, zi) != 0 || del_key(p, hi) != 0)
        return -1;
    return 0;
}

/* ---- C09: payload TTL vs delay ----------------------------------------- */

#define C09_DELAY_MS 500
#define C09_TTL_SHORT_MS 200
#define C09_TTL_LONG_MS 1000

/* Tasks s0..s19 with the short payload TTL, l0..l19 with the long one,
 * all due at t0 + C09_DELAY_MS. */
static int c09_enqueue(probe_ctx *p, const char *z, int64_t t0)
{
    char id[32], due[32], ps[16], pl[16], kk[160];
    redisReply *r;

    snprintf(ps, sizeof ps, "%d", C09_TTL_SHORT_MS);
    snprintf(pl, sizeof pl, "%d", C09_TTL_LONG_MS);
    snprintf(due, sizeof due, "%" PRId64, t0 + C09_DELAY_MS);
    for (int i = 0; i < 2 * TTL_TASKS; i++) {
        bool shrt = i < TTL_TASKS;
        snprintf(id, sizeof id, "%c%d", shrt ? 's' : 'l', i % TTL_TASKS);
        snprintf(kk, sizeof kk, "%s:pay:%s", p->prefix, id);
        if ((r = CMD(p, "SET", kk, "payload", "PX", shrt ? ps : pl)) == NULL)
            return -1;
        freeReplyObject(r);
        if ((r = CMD(p, "ZADD", z, due, id)) == NULL)
            return -1;
        freeReplyObject(r);
    }
    return 0;
}

/* The consumer: ZPOPMIN every task, GET its payload; process (DEL) half
 * of the long-TTL ones, leave the other half behind.  Counts the payloads
 * gone of each kind. */
static int c09_consume(probe_ctx *p, const char *z, long long *lost_short,
                       long long *lost_long)
{
    char id[32], pk[128];
    redisReply *r;
    bool gone;

    for (;;) {
        if ((r = CMD(p, "ZPOPMIN", z)) == NULL)
            return -1;
        if (r->type != REDIS_REPLY_ARRAY ||
            (r->elements != 0 && r->elements != 2)) {
            freeReplyObject(r);
            return fail(p, "ZPOPMIN: unexpected reply");
        }
        if (r->elements == 0) {
            freeReplyObject(r);
            return 0;
        }
        snprintf(id, sizeof id, "%s", r->element[0]->str);
        freeReplyObject(r);
        snprintf(pk, sizeof pk, "%s:pay:%s", p->prefix, id);
        if ((r = CMD(p, "GET", pk)) == NULL)
            return -1;
        gone = r->type == REDIS_REPLY_NIL;
        freeReplyObject(r);
        if (id[0] == 's') {
            *lost_short += gone;
        } else {
            *lost_long += gone;
            if (!gone && atoi(id + 1) % 2 == 0 && del_key(p, pk) != 0)
                return -1;
        }
    }
}

/* One row: of TTL_TASKS payloads with ttl, how many were gone when
 * claimed at +at ms. */
static void c09_row(probe_ctx *p, const char *name, int64_t ttl,
                    long long lost, int64_t at)
{
    char obs[512], in[160], action[512];

    snprintf(action, sizeof action, "%d tasks: SET pay:ID payload PX %" PRId64
             " and ZADD z now+%d ID; at the due time ZPOPMIN each and GET "
             "its payload", TTL_TASKS, ttl, C09_DELAY_MS);
    snprintf(obs, sizeof obs, "%lld of %d payloads gone when claimed at +%"
             PRId64 " ms (TTL %" PRId64 " ms %c delay %d ms)", lost,
             TTL_TASKS, at, ttl, ttl < C09_DELAY_MS ? '<' : '>',
             C09_DELAY_MS);
    snprintf(in, sizeof in, "lost=%lld;n=%d;ttl_ms=%" PRId64 ";delay_ms=%d",
             lost, TTL_TASKS, ttl, C09_DELAY_MS);
    row(p, "C09", name, action, obs, in);
}

/* Leftovers: the odd long-TTL payloads were never deleted; EXISTS right
 * after the claim and again after their TTL. */
static int c09_leftovers(probe_ctx *p, int64_t t0)
{
    char pk[128], obs[512], in[160], action[512];
    const int nleft = TTL_TASKS / 2;
    long long count[2] = {0, 0}, e;

    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            sleep_until_ms(t0 + C09_TTL_LONG_MS + 100);
        for (int i = 1; i < TTL_TASKS; i += 2) {
            e = 0;
            snprintf(pk, sizeof pk, "%s:pay:l%d", p->prefix, i);
            if (cmd_int(p, CMD(p, "EXISTS", pk), &e) != 0)
                return -1;
            count[pass] += e;
        }
    }
    snprintf(action, sizeof action, "of the TTL %d ms payloads, %d were left "
             "behind unprocessed (a consumer that never deleted them); "
             "EXISTS on each right after the claim and again at +%d ms",
             C09_TTL_LONG_MS, nleft, C09_TTL_LONG_MS + 100);
    snprintf(obs, sizeof obs, "%lld of %d present after the claim, %lld "
             "left after the TTL", count[0], nleft, count[1]);
    snprintf(in, sizeof in, "leftovers=%lld;before=%lld;n=%d", count[1],
             count[0], nleft);
    row(p, "C09", "leftovers", action, obs, in);
    return 0;
}

static int probe_c09(probe_ctx *p)
{
    char z[128];
    long long lost_short = 0, lost_long = 0;
    int64_t t0, at;

    p->probe = "C09 payload-ttl";
    key(p, "c09z", z, sizeof z);
    t0 = now_ms();
    if (c09_enqueue(p, z, t0) != 0)
        return -1;
    sleep_until_ms(t0 + C09_DELAY_MS);
    if (dq_signals_caught())
        return 0;
    if (c09_consume(p, z, &lost_short, &lost_long) != 0)
        return -1;
    at = now_ms() - t0;
    c09_row(p, "ttl-shorter", C09_TTL_SHORT_MS, lost_short, at);
    c09_row(p, "ttl-longer", C09_TTL_LONG_MS, lost_long, at);
    if (c09_leftovers(p, t0) != 0)
        return -1;
    return del_key(p, z);
}

/* ---- C07: ZPOPMIN atomic, and a consumer dying after the pop ------------ */

typedef struct popper {
    const dq_redis_target *t;
    const char *key;
    unsigned *seen;            /* [POP_MEMBERS], atomic increments */
    pthread_barrier_t *start;
    long popped;
    char err[256];
} popper;

static void *popper_main(void *arg)
{
    popper *w = arg;
    redisContext *c = connect_target(w->t, w->err, sizeof w->err);
    pthread_barrier_wait(w->start);
    if (c == NULL)
        return NULL;
    for (;;) {
        redisReply *r = redisCommand(c, "ZPOPMIN %s", w->key);
        if (r == NULL) {
            snprintf(w->err, sizeof w->err, "ZPOPMIN: %s", c->errstr);
            break;
        }
        if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) {
            if (r->type == REDIS_REPLY_ERROR)
                snprintf(w->err, sizeof w->err, "ZPOPMIN: %s", r->str);
            freeReplyObject(r);
            break;
        }
        long idx = strtol(r->element[0]->str + 1, NULL, 10);
        if (idx >= 0 && idx < POP_MEMBERS)
            __atomic_add_fetch(&w->seen[idx], 1, __ATOMIC_RELAXED);
        w->popped++;
        freeReplyObject(r);
    }
    redisFree(c);
    return NULL;
}

static int probe_c07_atomic(probe_ctx *p)
{
    char k[128], obs[512], in[160], action[256];
    unsigned *seen = calloc(POP_MEMBERS, sizeof *seen);
    popper w[POP_THREADS];
    pthread_t th[POP_THREADS];
    pthread_barrier_t start;
    int rc = -1, started = 0;
    p->probe = "C07 zpopmin-atomic";
    if (seen == NULL)
        return fail(p, "out of memory");
    key(p, "c07a", k, sizeof k);
    /* One ZADD with every member (score = index). */
    const char **argv = malloc((2 + 2 * POP_MEMBERS) * sizeof *argv);
    char (*buf)[2][16] = malloc(POP_MEMBERS * sizeof *buf);
    if (argv == NULL || buf == NULL) {
        fail(p, "out of memory");
        goto done;
    }
    argv[0] = "ZADD";
    argv[1] = k;
    for (int i = 0; i < POP_MEMBERS; i++) {
        snprintf(buf[i][0], sizeof buf[i][0], "%d", i);
        snprintf(buf[i][1], sizeof buf[i][1], "m%d", i);
        argv[2 + 2 * i] = buf[i][0];
        argv[3 + 2 * i] = buf[i][1];
    }
    redisReply *r = cmdv(p, p->c, false, 2 + 2 * POP_MEMBERS, argv, NULL);
    if (r == NULL)
        goto done;
    freeReplyObject(r);
    pthread_barrier_init(&start, NULL, POP_THREADS);
    for (int i = 0; i < POP_THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].t = p->t;
        w[i].key = k;
        w[i].seen = seen;
        w[i].start = &start;
    }
    for (; started < POP_THREADS; started++)
        if (pthread_create(&th[started], NULL, popper_main, &w[started]) != 0)
            break;
    if (started < POP_THREADS) {
        /* The barrier would never open: nothing sane to do but abort. */
        fprintf(stderr, "dqlab probes: pthread_create failed\n");
        abort();
    }
    for (int i = 0; i < POP_THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < POP_THREADS; i++)
        if (w[i].err[0] != '\0') {
            fail(p, "%s", w[i].err);
            goto done;
        }
    long dups = 0, missing = 0, total = 0;
    for (int i = 0; i < POP_MEMBERS; i++) {
        if (seen[i] == 0)
            missing++;
        else
            dups += seen[i] - 1;
        total += seen[i];
    }
    char per[128];
    size_t off = 0;
    for (int i = 0; i < POP_THREADS; i++)
        off += (size_t)snprintf(per + off, sizeof per - off, "%s%ld",
                                i ? "/" : "", w[i].popped);
    snprintf(action, sizeof action, "%d threads, one connection each, ZPOPMIN "
             "one member at a time from a %d-member set until empty",
             POP_THREADS, POP_MEMBERS);
    snprintf(obs, sizeof obs, "%ld pops (per thread %s); %ld members popped "
             "twice or more, %ld never popped", total, per, dups, missing);
    snprintf(in, sizeof in, "duplicates=%ld;missing=%ld;popped=%ld;n=%d;"
             "threads=%d", dups, missing, total, POP_MEMBERS, POP_THREADS);
    row(p, "C07", "zpopmin-atomic", action, obs, in);
    rc = del_key(p, k);
done:
    free(argv);
    free(buf);
    free(seen);
    return rc;
}

static int probe_c07_die(probe_ctx *p)
{
    char k[128], due[32], obs[512], in[160], action[512];
    p->probe = "C07 pop-then-die";
    key(p, "c07d", k, sizeof k);
    int64_t t0 = now_ms();
    snprintf(due, sizeof due, "%" PRId64, t0 + 60000);
    redisReply *r = CMD(p, "ZADD", k, due, "task-1");
    if (r == NULL)
        return -1;
    freeReplyObject(r);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return fail(p, "fork: %s", strerror(errno));
    if (pid == 0) {
        /* The consumer: its own connection, ZPOPMIN, sees the task is not
         * due yet, and dies before the put-back ZADD. */
        char e[256];
        redisContext *c = connect_target(p->t, e, sizeof e);
        if (c == NULL)
            _exit(3);
        redisReply *cr = redisCommand(c, "ZPOPMIN %s", k);
        int code = 4;
        if (cr != NULL && cr->type == REDIS_REPLY_ARRAY &&
            cr->elements == 2 && strcmp(cr->element[0]->str, "task-1") == 0) {
            double score = strtod(cr->element[1]->str, NULL);
            code = score > (double)now_ms() ? 0 : 5;  /* 0: popped, not due */
        }
        _exit(code);   /* no put-back, no cleanup: a crash */
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return fail(p, "waitpid: %s", strerror(errno));
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    if (code != 0)
        return fail(p, "the consumer process did not pop the not-yet-due "
                    "task (exit %d)", code);
    long long card = 0;
    if ((r = CMD(p, "ZSCORE", k, "task-1")) == NULL)
        return -1;
    bool gone = r->type == REDIS_REPLY_NIL;
    char zs[64];
    snprintf(zs, sizeof zs, "%s", gone ? "(nil)" :
             r->type == REDIS_REPLY_STRING ? r->str : "?");
    freeReplyObject(r);
    if (cmd_int(p, CMD(p, "ZCARD", k), &card) != 0)
        return -1;
    snprintf(action, sizeof action, "ZADD z now+60000 task-1; a forked "
             "consumer (own connection) ZPOPMINs it, sees it is not due and "
             "_exit()s before the put-back ZADD; then ZSCORE z task-1 and "
             "ZCARD z");
    snprintf(obs, sizeof obs, "consumer popped task-1 (not yet due) and died; "
             "ZSCORE %s, ZCARD %lld: the task is gone from Redis", zs, card);
    if (!gone)
        snprintf(obs, sizeof obs, "consumer popped task-1 and died; ZSCORE "
                 "%s, ZCARD %lld", zs, card);
    snprintf(in, sizeof in, "lost=%d;n=1;zcard=%lld", gone ? 1 : 0, card);
    row(p, "C07", "pop-then-die", action, obs, in);
    return del_key(p, k);
}

/* ---- Driver ------------------------------------------------------------- */

/* SCAN MATCH prefix:* and DEL: every key a probe left (after an error). */
static void cleanup_keys(probe_ctx *p)
{
    char pat[96], cursor[32] = "0";
    if (p->c == NULL || p->c->err)
        return;
    snprintf(pat, sizeof pat, "%s:*", p->prefix);
    do {
        redisReply *r = redisCommand(p->c, "SCAN %s MATCH %s COUNT 1000",
                                     cursor, pat);
        if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            if (r)
                freeReplyObject(r);
            return;
        }
        snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
        for (size_t i = 0; i < r->element[1]->elements; i++) {
            redisReply *d = redisCommand(p->c, "DEL %s",
                                         r->element[1]->element[i]->str);
            if (d)
                freeReplyObject(d);
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
}

int dq_probes_run(const dq_redis_target *t, FILE *csv, char *err,
                  size_t errlen)
{
    probe_ctx p;
    memset(&p, 0, sizeof p);
    p.t = t;
    p.csv = csv;
    p.err = err;
    p.errlen = errlen;
    err[0] = '\0';
    p.rng = (uint64_t)dq_wall_us() ^ ((uint64_t)getpid() << 32) ^
            UINT64_C(0x9e3779b97f4a7c15);
    snprintf(p.prefix, sizeof p.prefix, "dqprobe:{%ld.%" PRId64 "}",
             (long)getpid(), now_ms());
    fputs(DQ_PROBES_CSV_HEADER, csv);
    p.probe = "connect";
    char e[256];
    if ((p.c = connect_target(t, e, sizeof e)) == NULL) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    int (*const probes[])(probe_ctx *) = {
        probe_c06, probe_c07_atomic, probe_c07_die, probe_c08, probe_c09,
        probe_c20,
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        if (dq_signals_caught()) {
            rc = 130;
            break;
        }
        if (probes[i](&p) != 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0)  /* C22, C27, C28: probes_more.h */
        rc = dq_probes_more_run(t, p.prefix, csv, NULL, err, errlen);
    if (rc == 0 && dq_signals_caught())
        rc = 130;
    /* A transport error leaves the context unusable: clean up on a fresh
     * one. */
    if (p.c->err) {
        redisFree(p.c);
        p.c = connect_target(t, e, sizeof e);
    }
    cleanup_keys(&p);
    if (p.c)
        redisFree(p.c);
    return rc;
}

/* ---- The command -------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: dqlab probes [--results DIR] [--redis URL]\n\n"
               "Small decisive checks of claims C06-C09, C20, C22, C27 and "
               "C28 against a real\nRedis (a private redis-server unless "
               "--redis is given; C27 always on one of\nits own); writes "
               "DIR/probes/<stamp>/probes.csv and meta.txt (DIR: results)\n"
               "and moves DIR/probes/latest.  Takes about 10 s.\n");
}

/* What one `dqlab probes` holds. */
typedef struct probes_cmd {
    const char *results, *url;
    dq_redis_target target;
    dq_redis_server srv;
    char command[1024];       /* for meta.txt, --redis redacted */
    char redacted[512];       /* "private" or the redacted URL */
    char version[64];
    char started[40];
    int64_t t0;               /* mono, us */
    char err[1024];
} probes_cmd;

/* The arguments.  Returns -1 to go on, else the exit code (printed). */
static int probes_args(probes_cmd *pc, int argc, char **argv)
{
    size_t cl = (size_t)snprintf(pc->command, sizeof pc->command,
                                 "dqlab probes");
    char e[256];

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--results") != 0 && strcmp(a, "--redis") != 0) {
            fprintf(stderr, "dqlab probes: unknown %s '%s' (see dqlab "
                    "probes --help)\n", a[0] == '-' ? "option" : "argument",
                    a);
            return 2;
        }
        if (i + 1 >= argc || argv[i + 1][0] == '\0') {
            fprintf(stderr, "dqlab probes: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--results") == 0) {
            pc->results = argv[++i];
            if (cl < sizeof pc->command)
                cl += (size_t)snprintf(pc->command + cl,
                                       sizeof pc->command - cl,
                                       " --results %s", pc->results);
        } else {
            pc->url = argv[++i];
        }
    }
    if (pc->url == NULL)
        return -1;
    if (dq_redis_url_parse(pc->url, &pc->target, e, sizeof e) != 0) {
        fprintf(stderr, "dqlab probes: %s\n", e);
        return 2;
    }
    dq_redis_url_redacted(&pc->target, pc->redacted, sizeof pc->redacted);
    if (cl < sizeof pc->command)
        snprintf(pc->command + cl, sizeof pc->command - cl, " --redis %s",
                 pc->redacted);
    return -1;
}

/* The server: a private one, or the one --redis names (its version).
 * Returns -1 to go on, else the exit code (printed). */
static int probes_server(probes_cmd *pc)
{
    redisContext *c;
    redisReply *r;

    if (pc->url == NULL) {
        dq_redis_server_opts so = {0};
        if (dq_redis_server_start(&pc->srv, &so, pc->err,
                                  sizeof pc->err) != 0) {
            if (dq_signals_caught()) {
                fprintf(stderr, "dqlab probes: interrupted\n");
                return 130;
            }
            fprintf(stderr, "dqlab probes: %s\n", pc->err);
            return 2;
        }
        snprintf(pc->target.host, sizeof pc->target.host, "127.0.0.1");
        pc->target.port = pc->srv.port;
        snprintf(pc->version, sizeof pc->version, "%s", pc->srv.version);
        snprintf(pc->redacted, sizeof pc->redacted, "private");
        return -1;
    }
    if ((c = connect_target(&pc->target, pc->err, sizeof pc->err)) == NULL) {
        fprintf(stderr, "dqlab probes: --redis: %s\n", pc->err);
        return 2;
    }
    r = redisCommand(c, "INFO server");
    if (r == NULL || r->type != REDIS_REPLY_STRING ||
        dq_runmeta_redis_version(r->str, pc->version,
                                 sizeof pc->version) != 0)
        snprintf(pc->version, sizeof pc->version, "unknown");
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return -1;
}

/* results/probes/STAMP/{probes.csv,meta.txt} and the latest link.
 * Returns 0, or -1 with pc->err. */
static int probes_write(probes_cmd *pc, const char *csvbuf, size_t csvlen)
{
    char dir[PATH_MAX], parent[PATH_MAX], stamp[64], path[PATH_MAX + 32];
    char ms[32], *mbuf = NULL;
    size_t mlen = 0;
    FILE *meta;
    int rc;

    snprintf(parent, sizeof parent, "%s/probes", pc->results);
    if (dq_runmeta_make_dir(parent, stamp, sizeof stamp, dir, sizeof dir,
                            pc->err, sizeof pc->err) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/logs", dir);
    rmdir(path);   /* the probes keep no logs */
    snprintf(path, sizeof path, "%s/probes.csv", dir);
    if (dq_runmeta_write_atomic(path, csvbuf, csvlen, pc->err,
                                sizeof pc->err) != 0)
        return -1;
    if ((meta = open_memstream(&mbuf, &mlen)) == NULL) {
        snprintf(pc->err, sizeof pc->err, "open_memstream: %s",
                 strerror(errno));
        return -1;
    }
    fprintf(meta, "# dqlab probes: decisive checks of claims about Redis "
            "itself (harness/probes.h)\n");
    dq_runmeta_kv(meta, "command", pc->command);
    dq_runmeta_kv(meta, "started", pc->started);
    snprintf(ms, sizeof ms, "%" PRId64, (dq_mono_us() - pc->t0) / 1000);
    dq_runmeta_kv(meta, "duration_ms", ms);
    dq_runmeta_kv(meta, "redis", pc->redacted);
    dq_runmeta_kv(meta, "redis_version", pc->version);
    dq_runmeta_env(meta);
    dq_runmeta_kv(meta, "complete", "yes");
    fclose(meta);
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    rc = dq_runmeta_write_atomic(path, mbuf, mlen, pc->err, sizeof pc->err);
    free(mbuf);
    if (rc != 0 ||
        dq_runmeta_update_latest(parent, stamp, pc->err, sizeof pc->err))
        return -1;
    fprintf(stderr, "dqlab probes: wrote %s/probes.csv in %.1f s; %s/latest "
            "-> %s\n", dir, (double)(dq_mono_us() - pc->t0) / 1e6, parent,
            stamp);
    return 0;
}

int dq_cmd_probes(int argc, char **argv)
{
    probes_cmd *pc = calloc(1, sizeof *pc);
    char *buf = NULL;
    size_t len = 0;
    FILE *csv;
    int ret = 2, prc;

    if (pc == NULL) {
        fprintf(stderr, "dqlab probes: out of memory\n");
        return 2;
    }
    pc->results = "results";
    if ((ret = probes_args(pc, argc, argv)) >= 0)
        goto done;
    dq_runmeta_now_iso(pc->started, sizeof pc->started);
    pc->t0 = dq_mono_us();
    if ((ret = probes_server(pc)) >= 0)
        goto done;
    ret = 2;
    if ((csv = open_memstream(&buf, &len)) == NULL) {
        fprintf(stderr, "dqlab probes: open_memstream: %s\n",
                strerror(errno));
        goto done;
    }
    prc = dq_probes_run(&pc->target, csv, pc->err, sizeof pc->err);
    fclose(csv);
    dq_redis_server_stop(&pc->srv);   /* nothing more to ask it */
    if (prc == 130) {
        fprintf(stderr, "dqlab probes: interrupted; nothing written\n");
        ret = 130;
    } else if (prc != 0 || probes_write(pc, buf, len) != 0) {
        fprintf(stderr, "dqlab probes: %s\n", pc->err);
    } else {
        ret = 0;
    }
done:
    free(buf);
    dq_redis_server_stop(&pc->srv);
    free(pc);
    return ret;
}
