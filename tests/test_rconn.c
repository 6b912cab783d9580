/* test_rconn.c -- the Redis plumbing.  Without a server: the clamp of
 * blocking timeouts (a wait below 1 ms must never reach BLPOP, BZPOPMIN or
 * BLMOVE as 0, which means "block forever": https://redis.io/commands/blpop/)
 * the key layout (one hash tag per queue) and dq_deadline_us, the claim
 * loops' deadline, which must saturate rather than overflow, the argument
 * checks of dq_redis_block_ms_at, and the decimal writer of command
 * arguments.  With the test server (DQ_TEST_REDIS_PORT): the command
 * writer of rconn.c (its own RESP encoding, not hiredis's) sends every
 * byte of binary arguments, long ones and many ones, unchanged through
 * dq_redis_cmd, dq_redis_pipeline, dq_redis_multi and dq_redis_eval. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../strategies/rconn.h"
#include "testlib.h"

static void expect_timeout(int64_t wait_ms, const char *want)
{
    char buf[32];
    dq_block_timeout(wait_ms, buf, sizeof buf);
    cr_expect_str_eq(buf, want, "dq_block_timeout(%lld) gave %s, want %s",
                     (long long)wait_ms, buf, want);
}

Test(rconn, block_timeout_never_zero)
{
    expect_timeout(-1000, "0.005");
    expect_timeout(0, "0.005");
    expect_timeout(1, "0.005");
    expect_timeout(DQ_BLOCK_MIN_MS, "0.005");
}

Test(rconn, block_timeout_in_range_and_capped)
{
    expect_timeout(6, "0.006");
    expect_timeout(1234, "1.234");
    expect_timeout(DQ_BLOCK_MAX_MS, "5.000");
    expect_timeout(INT64_MAX, "5.000");
}

Test(rconn, keys_share_one_hash_tag)
{
    dq_queue q;
    char key[128];
    memset(&q, 0, sizeof q);
    strcpy(q.queue, "orders");
    dq_redis_key(&q, "z", key, sizeof key);
    cr_expect_str_eq(key, "dq:{orders}:z");
    dq_redis_key(&q, "p", key, sizeof key);
    cr_expect_str_eq(key, "dq:{orders}:p");
}

Test(rconn, deadline_saturates)
{
    int64_t t0 = dq_mono_us();
    int64_t d = dq_deadline_us(0);
    cr_expect(d >= t0 && d - t0 < 1000000, "deadline(0) = now");
    d = dq_deadline_us(-5);
    cr_expect(d >= t0 && d - t0 < 1000000, "deadline(-5) = now");
    d = dq_deadline_us(1000);
    cr_expect(d >= t0 + 1000000 && d - t0 < 2000000, "deadline(1000 ms)");
    cr_expect_eq(dq_deadline_us(INT64_MAX), INT64_MAX);
    cr_expect_eq(dq_deadline_us(INT64_MAX / 1000), INT64_MAX);
    cr_expect_eq(dq_deadline_us(INT64_MAX / 1000 - 1), INT64_MAX);
    d = dq_deadline_us(DQ_CLAIM_TIMEOUT_MAX_MS);
    cr_expect(d > t0 && d < INT64_MAX, "deadline(one day) is exact");
}

/* dq_redis_block_ms_at refuses a timeout position outside the command
 * before it touches the connection (none here). */
Test(rconn, block_ms_at_checks_arguments)
{
    dq_queue q;
    const char *argv[3] = {"XREADGROUP", "BLOCK", "STREAMS"};
    int rc = DQ_OK;
    memset(&q, 0, sizeof q);
    cr_expect_null(dq_redis_block_ms_at(&q, NULL, &rc, 3, argv, NULL, 0, 0));
    cr_expect_eq(rc, DQ_EINVAL, "timeout_at 0: rc %d", rc);
    rc = DQ_OK;
    cr_expect_null(dq_redis_block_ms_at(&q, NULL, &rc, 3, argv, NULL, 4, 0));
    cr_expect_eq(rc, DQ_EINVAL, "timeout_at past argc: rc %d", rc);
    rc = DQ_OK;
    cr_expect_null(dq_redis_block_ms_at(&q, NULL, &rc, DQ_BLOCK_MAX_ARGC + 1,
                                        argv, NULL, 1, 0));
    cr_expect_eq(rc, DQ_EINVAL, "argc %d: rc %d", DQ_BLOCK_MAX_ARGC + 1, rc);
}

/* The Sentinel list is checked before anything is sent; a Sentinel that
 * does not answer is named (nothing listens on port 1). */
Test(rconn, sentinel_list_checked)
{
    const char *bad[] = {"", "localhost", "127.0.0.1:0", "127.0.0.1:65536",
                         "127.0.0.1:26379x", ":26379", "127.0.0.1:1,",
                         "a:1,a:2,a:3,a:4,a:5,a:6,a:7,a:8,a:9", NULL};
    char host[64], err[256];
    int port = 0;

    for (int i = 0; bad[i] != NULL; i++) {
        err[0] = '\0';
        cr_expect_eq(dq_sentinel_primary(bad[i], "m", host, sizeof host,
                                         &port, err, sizeof err),
                     DQ_EINVAL, "'%s' accepted: %s", bad[i], err);
    }
    cr_expect_eq(dq_sentinel_primary("127.0.0.1:1", NULL, host, sizeof host,
                                     &port, err, sizeof err), DQ_EINVAL);
    cr_expect_eq(dq_sentinel_primary("127.0.0.1:1", "m", host, sizeof host,
                                     &port, err, sizeof err), DQ_EIO);
    cr_expect(strstr(err, "sentinel 127.0.0.1:1:") != NULL, "%s", err);
}

/* dq_redis_fmt_i64 writes what printf's %" PRId64 " writes, the extremes
 * included. */
Test(rconn, fmt_i64_as_printf)
{
    const int64_t v[] = {0, 1, -1, 9, 10, 99, 100, -100, 1733000000000,
                         -1733000000000, INT64_MAX, INT64_MIN,
                         INT64_MIN + 1};
    char got[32], want[32];

    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t n = dq_redis_fmt_i64(got, v[i]);
        snprintf(want, sizeof want, "%" PRId64, v[i]);
        cr_expect_str_eq(got, want);
        cr_expect_eq(n, strlen(want), "length of %s", want);
    }
}

/* Arguments holding every byte value, CR LF and the RESP markers, an empty
 * one, one longer than the writer's stack buffer, and a command of 2002
 * arguments, through each helper; the server sees exactly those bytes. */
Test(rconn, command_writer_binary_safe, .timeout = 60)
{
    dq_queue q;
    redisContext *c = NULL;
    char key[96], hkey[96];
    unsigned char bin[256];
    static char big[100000];
    int rc;

    memset(&q, 0, sizeof q);
    snprintf(q.queue, sizeof q.queue, "t-rconn-wire-%ld", (long)getpid());
    q.cfg.queue = q.queue;
    q.cfg.redis_host = "127.0.0.1";
    q.cfg.redis_port = tl_redis_port();
    cr_assert_eq(dq_redis_connect(&q, NULL, 5000, &c), DQ_OK, "%s", q.err);
    dq_redis_key(&q, "s", key, sizeof key);
    dq_redis_key(&q, "h", hkey, sizeof hkey);
    for (int i = 0; i < 256; i++)
        bin[i] = (unsigned char)i;
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = "*$\r\n\0x"[i % 6];

    /* dq_redis_cmd: SET and GET of the 256 byte values, then of big. */
    const void *vals[3] = {bin, big, ""};
    size_t vlens[3] = {sizeof bin, sizeof big, 0};
    for (int k = 0; k < 3; k++) {
        const char *set[3] = {"SET", key, vals[k]};
        size_t setl[3] = {3, strlen(key), vlens[k]};
        redisReply *r = dq_redis_cmd(&q, c, &rc, 3, set, setl);
        cr_assert_not_null(r, "SET: %s", q.err);
        freeReplyObject(r);
        const char *get[2] = {"GET", key};
        r = dq_redis_cmd(&q, c, &rc, 2, get, NULL);
        cr_assert_not_null(r, "GET: %s", q.err);
        cr_expect_eq(r->type, REDIS_REPLY_STRING);
        cr_expect_eq(r->len, vlens[k], "value %d: %zu bytes back", k,
                     (size_t)r->len);
        cr_expect(memcmp(r->str, vals[k], vlens[k]) == 0, "value %d", k);
        freeReplyObject(r);
    }

    /* dq_redis_multi: one HSET of 1000 fields (2002 arguments), field i
     * holding byte values i % 256 and a CR LF; then HLEN and one HGET. */
    enum { NF = 1000 };
    static char fields[NF][16], values[NF][4];
    static const char *hv[2 + 2 * NF];
    static size_t hl[2 + 2 * NF];
    hv[0] = "HSET", hl[0] = 4, hv[1] = hkey, hl[1] = strlen(hkey);
    for (int i = 0; i < NF; i++) {
        hl[2 + 2 * i] = (size_t)snprintf(fields[i], sizeof fields[i], "f%d",
                                         i);
        hv[2 + 2 * i] = fields[i];
        values[i][0] = (char)(i % 256), values[i][1] = '\r';
        values[i][2] = '\n', values[i][3] = '\0';
        hv[3 + 2 * i] = values[i], hl[3 + 2 * i] = 4;
    }
    dq_redis_argv cmds[1] = {{2 + 2 * NF, hv, hl}};
    redisReply *ex = dq_redis_multi(&q, c, &rc, 1, cmds);
    cr_assert_not_null(ex, "MULTI/HSET/EXEC: %s", q.err);
    cr_expect_eq(ex->element[0]->integer, NF);
    freeReplyObject(ex);

    /* dq_redis_pipeline: HLEN and HGET f777 in one round trip. */
    const char *hlen[2] = {"HLEN", hkey};
    const char *hget[3] = {"HGET", hkey, "f777"};
    dq_redis_argv two[2] = {{2, hlen, NULL}, {3, hget, NULL}};
    redisReply *rep[2];
    cr_assert_eq(dq_redis_pipeline_ok(&q, c, 2, two, rep), DQ_OK, "%s",
                 q.err);
    cr_expect_eq(rep[0]->integer, NF);
    cr_expect_eq(rep[1]->len, 4);
    cr_expect(memcmp(rep[1]->str, values[777], 4) == 0);
    freeReplyObject(rep[0]);
    freeReplyObject(rep[1]);

    /* dq_redis_eval: the script returns its argument as it came. */
    dq_script echo = {.src = "return ARGV[1]"};
    const char *args[1] = {(const char *)bin};
    size_t alen[1] = {sizeof bin};
    redisReply *r = dq_redis_eval(&q, c, &echo, &rc, 0, 1, args, alen);
    cr_assert_not_null(r, "EVALSHA: %s", q.err);
    cr_expect_eq(r->len, sizeof bin);
    cr_expect(memcmp(r->str, bin, sizeof bin) == 0);
    freeReplyObject(r);

    cr_expect_eq(dq_redis_purge(&q, c), DQ_OK, "%s", q.err);
    redisFree(c);
}
