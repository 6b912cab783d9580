/* test_rconn.c -- the Redis plumbing that needs no server: the clamp of
 * blocking timeouts (a wait below 1 ms must never reach BLPOP, BZPOPMIN or
 * BLMOVE as 0, which means "block forever": https://redis.io/commands/blpop/)
 * the key layout (one hash tag per queue) and dq_deadline_us, the claim
 * loops' deadline, which must saturate rather than overflow, and the
 * argument checks of dq_redis_block_ms_at. */
#include <criterion/criterion.h>
#include <string.h>

#include "../strategies/rconn.h"

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
