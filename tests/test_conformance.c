/* test_conformance.c -- one behavioural suite run against every strategy.
 *
 * The suite is written once (the check_* functions) and instantiated per
 * strategy by CONFORMANCE(ident), over the registry's own list
 * (DQ_STRATEGY_MAP, strategies/registry.h), which defines one Criterion
 * test per check, named <ident>/<check>: run one strategy's checks with
 *     build/default/tests/test_conformance --filter lua/\*
 * The suite name is the strategy's name as a C identifier ('-' becomes
 * '_': list_reliable/...).  Criterion's parameterized tests are not used:
 * their parameters cannot hold pointers under PIE (the re-exec'd test
 * process sees other addresses, Criterion issues 208 and 510), so each test
 * passes the strategy's name and looks it up with dq_strategy_find().
 *
 * What a check asserts is decided by the guarantee flags the strategy
 * declares (DQ_G_*), never by its name: due order only for DQ_G_DUE_ORDER,
 * no duplicates under concurrency only for DQ_G_NO_DUP_CONCURRENT,
 * duplicates > 0 for the documented bug DQ_G_DUPLICATES, waking on an
 * earlier task only for DQ_G_BLOCKS / DQ_G_POLLS, a task lost when its
 * timer expired while no handle listened only for DQ_G_KEYSPACE_EVENTS.
 * A check whose flag is missing skips with a message naming the flag; a
 * missing Redis is a failure, never a skip.  Likewise by optional op or
 * option: cancel, reschedule, nack (nack, nack_not_ours) and max_attempts
 * (which then needs the dead_letters op and lease_ms: a failure without
 * them).
 *
 * Every check uses tests/run.sh's shared server except claim_timeout,
 * which starts a private one (claim_srv: a busy server hides late
 * blocking timeouts).
 *
 * Every registered strategy is tested: the instantiation expands the
 * registry's list, so a new strategy gets its tests with its registry
 * line.  every_strategy_instantiated checks that each registered name is
 * its identifier with '_' written '-' (so that `--filter 'lua_lease/...'`
 * selects lua-lease, as the README says).
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hiredis.h>

#include "../harness/redis_server.h"
#include "../strategies/dq.h"
#include "../strategies/registry.h"
#include "testlib.h"

/* ---- Checks ------------------------------------------------------------ */

/* One consumer receives ~20 tasks with shuffled due times in due order,
 * each not before its due time. */
static void check_due_order(const char *name)
{
    enum { N = 20 };
    tl_ctx c;
    tl_setup_need_flag(&c, name, "due_order", DQ_G_DUE_ORDER,
                       "DQ_G_DUE_ORDER");
    dq_queue *q = tl_open(&c);
    int order[N];
    int64_t due[N];
    for (int i = 0; i < N; i++)
        order[i] = i;
    unsigned seed = (unsigned)getpid();
    tl_shuffle(order, N, &seed);
    int64_t now = dq_wall_us() / 1000;
    for (int k = 0; k < N; k++) {
        int i = order[k];
        char id[32];
        due[i] = now + 10 + 10 * i;  /* task-i is due at now+10..now+200 */
        snprintf(id, sizeof(id), "task-%d", i);
        tl_enqueue(q, id, id, strlen(id), due[i]);
    }
    tl_claim_in_due_order(&c, q, N, due, name);
    dq_close(q);
    tl_teardown(&c);
}

/* dq_enqueue_many (the strategy's batched op, or the wrapper's loop of
 * enqueue) of N tasks with shuffled due times: each is delivered exactly
 * once, with its payload, never early, and in due order when the strategy
 * declares DQ_G_DUE_ORDER.  An empty batch is a no-op. */
static void check_enqueue_many(const char *name)
{
    enum { N = 40 };
    tl_ctx c;
    tl_setup(&c, name, "enqueue_many");
    dq_queue *q = tl_open(&c);
    dq_enqueue_item items[N];
    char ids[N][32];
    int order[N], seen[N] = {0};
    int64_t due[N];
    for (int i = 0; i < N; i++)
        order[i] = i;
    unsigned seed = (unsigned)getpid();
    tl_shuffle(order, N, &seed);
    int rc = dq_enqueue_many(q, items, 0);
    cr_assert_eq(rc, DQ_OK, "%s: enqueue_many(0 items) = %s: %s", name,
                 dq_result_name(rc), dq_errstr(q));
    int64_t now = dq_wall_us() / 1000;
    for (int k = 0; k < N; k++) {
        int i = order[k];
        due[i] = now + 50 + 5 * i;  /* task-i due at now+50..now+245 */
        snprintf(ids[k], sizeof(ids[k]), "task-%d", i);
        items[k].id = ids[k];
        items[k].payload = ids[k];
        items[k].payload_len = strlen(ids[k]);
        items[k].due_ms = due[i];
    }
    rc = dq_enqueue_many(q, items, N);
    cr_assert_eq(rc, DQ_OK, "%s: enqueue_many(%d items) = %s: %s", name, N,
                 dq_result_name(rc), dq_errstr(q));
    if (c.s->pending != NULL) {
        int64_t p = dq_pending(q);
        cr_assert_eq(p, N, "%s: pending = %lld after enqueue_many of %d (%s)",
                     name, (long long)p, N, p < 0 ? dq_errstr(q) : "");
    }
    int64_t last_due = INT64_MIN;
    for (int k = 0; k < N; k++) {
        unsigned char *pl = NULL;
        size_t len = 0;
        tl_got g = tl_claim_p(q, 3000, &pl, &len);
        cr_assert_eq(g.rc, DQ_OK, "%s: claim %d of %d found nothing in 3 s",
                     name, k + 1, N);
        int i = tl_task_index(g.id, N);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", name, g.id);
        cr_assert_eq(seen[i], 0, "%s: %s delivered twice", name, g.id);
        seen[i]++;
        cr_assert(len == strlen(g.id) && memcmp(pl, g.id, len) == 0,
                  "%s: %s came with another payload", name, g.id);
        free(pl);
        tl_assert_not_early(c.s, &g, due[i]);
        if (c.s->flags & DQ_G_DUE_ORDER) {
            cr_assert_geq(g.due_ms, last_due, "%s: %s (due %lld) delivered "
                          "after a task due %lld", name, g.id,
                          (long long)g.due_ms, (long long)last_due);
            last_due = g.due_ms;
        }
    }
    tl_got g = tl_claim(q, 200);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: extra delivery %s", name, g.id);
    /* A bad id anywhere in the batch is refused before anything is sent. */
    items[0].id = "ok-0";
    items[1].id = "";
    rc = dq_enqueue_many(q, items, 2);
    cr_assert_eq(rc, DQ_EINVAL, "%s: enqueue_many with an empty id = %s",
                 name, dq_result_name(rc));
    cr_assert(strstr(dq_errstr(q), "item 1") != NULL,
              "%s: the message does not name item 1: '%s'", name,
              dq_errstr(q));
    g = tl_claim(q, 100);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: a refused batch delivered %s", name,
                 g.id);
    dq_close(q);
    tl_teardown(&c);
}

/* No task is handed out before its due time (every strategy). */
static void check_not_early(const char *name)
{
    enum { N = 20 };
    tl_ctx c;
    tl_setup(&c, name, "not_early");
    dq_queue *q = tl_open(&c);
    int64_t due[N];
    int seen[N] = {0};
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < N; i++) {
        char id[32];
        due[i] = now + 20 + 20 * ((i * 7) % N);  /* now+20..now+400 */
        snprintf(id, sizeof(id), "task-%d", i);
        tl_enqueue(q, id, "x", 1, due[i]);
    }
    for (int k = 0; k < N; k++) {
        tl_got g = tl_claim(q, 3000);
        cr_assert_eq(g.rc, DQ_OK, "%s: claim %d of %d found nothing in 3 s",
                     name, k + 1, N);
        int i = tl_task_index(g.id, N);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", name, g.id);
        seen[i]++;
        tl_assert_not_early(c.s, &g, due[i]);
    }
    for (int i = 0; i < N; i++)
        cr_assert_eq(seen[i], 1, "%s: task-%d delivered %d times", name, i,
                     seen[i]);
    dq_close(q);
    tl_teardown(&c);
}

/* One consumer gets every task exactly once, then DQ_EMPTY. */
static void check_exactly_once(const char *name)
{
    enum { N = 50 };
    tl_ctx c;
    tl_setup(&c, name, "exactly_once");
    dq_queue *q = tl_open(&c);
    int seen[N] = {0};
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < N; i++) {
        char id[32];
        snprintf(id, sizeof(id), "task-%d", i);
        tl_enqueue(q, id, id, strlen(id), now - (i % 5));
    }
    if (q->s->pending != NULL) {
        int64_t p = dq_pending(q);
        cr_assert_eq(p, N, "%s: pending = %lld after %d enqueues (%s)", name,
                     (long long)p, N, p < 0 ? dq_errstr(q) : "");
    }
    for (int k = 0; k < N; k++) {
        tl_got g = tl_claim(q, 3000);
        cr_assert_eq(g.rc, DQ_OK, "%s: claim %d of %d found nothing in 3 s",
                     name, k + 1, N);
        int i = tl_task_index(g.id, N);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", name, g.id);
        cr_assert_eq(seen[i], 0, "%s: %s delivered twice", name, g.id);
        seen[i]++;
    }
    tl_got g = tl_claim(q, 300);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: extra delivery %s", name, g.id);
    if (q->s->pending != NULL) {
        int64_t p = dq_pending(q);
        cr_assert_eq(p, 0, "%s: pending = %lld after claiming all", name,
                     (long long)p);
    }
    dq_close(q);
    tl_teardown(&c);
}

/* Payload bytes come back byte for byte: NUL, CR LF, commas, 0xff, empty,
 * and 64 KiB covering every byte value. */
static void check_binary_payloads(const char *name)
{
    enum { BIG = 64 * 1024 };
    static const struct {
        const char *bytes;
        size_t len;
    } small[] = {
        {"a\0b", 3},
        {"\0", 1},
        {"line1\r\nline2\r\n", 14},
        {"a,b,,c,", 7},
        {"\xff\xfe\x00\x01\x80", 5},
        {"", 0},
        {"{\"json\": [1, 2]}", 16},
        {"%s %b %d $1 *2 \\", 16},
    };
    enum { NSMALL = sizeof(small) / sizeof(small[0]), N = NSMALL + 1 };
    unsigned char *big = malloc(BIG);
    cr_assert_not_null(big);
    for (size_t i = 0; i < BIG; i++)
        big[i] = (unsigned char)((i * 31 + i / 256) & 0xff);

    tl_ctx c;
    tl_setup(&c, name, "binary");
    dq_queue *q = tl_open(&c);
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < N; i++) {
        char id[32];
        snprintf(id, sizeof(id), "task-%d", i);
        if (i < NSMALL)
            tl_enqueue(q, id, small[i].bytes, small[i].len, now);
        else
            tl_enqueue(q, id, big, BIG, now);
    }
    int seen[N] = {0};
    for (int k = 0; k < N; k++) {
        unsigned char *p = NULL;
        size_t len = 0;
        tl_got g = tl_claim_p(q, 3000, &p, &len);
        cr_assert_eq(g.rc, DQ_OK, "%s: claim %d of %d found nothing in 3 s",
                     name, k + 1, N);
        int i = tl_task_index(g.id, N);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", name, g.id);
        seen[i]++;
        const void *want = i < NSMALL ? (const void *)small[i].bytes : big;
        size_t wlen = i < NSMALL ? small[i].len : BIG;
        cr_assert_eq(len, wlen, "%s: %s payload is %zu bytes, enqueued %zu",
                     name, g.id, len, wlen);
        if (wlen > 0) {
            cr_assert_not_null(p, "%s: %s payload NULL", name, g.id);
            size_t at = 0;
            while (at < wlen && p[at] == ((const unsigned char *)want)[at])
                at++;
            cr_assert_eq(at, wlen, "%s: %s payload differs at byte %zu "
                         "(got 0x%02x, want 0x%02x)", name, g.id, at,
                         at < wlen ? p[at] : 0,
                         at < wlen ? ((const unsigned char *)want)[at] : 0);
        }
        free(p);
    }
    for (int i = 0; i < N; i++)
        cr_assert_eq(seen[i], 1, "%s: task-%d delivered %d times", name, i,
                     seen[i]);
    dq_close(q);
    free(big);
    tl_teardown(&c);
}

/* Two tasks with equal payloads under different ids stay two tasks (claim
 * C08: a layout keying the ZSet by payload would collapse them). */
static void check_equal_payloads(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "equal_payloads");
    dq_queue *q = tl_open(&c);
    int64_t now = dq_wall_us() / 1000;
    tl_enqueue(q, "task-0", "same", 4, now);
    tl_enqueue(q, "task-1", "same", 4, now);
    int seen[2] = {0};
    for (int k = 0; k < 2; k++) {
        unsigned char *p = NULL;
        size_t len = 0;
        tl_got g = tl_claim_p(q, 3000, &p, &len);
        cr_assert_eq(g.rc, DQ_OK, "%s: equal payloads: got %d of 2 tasks",
                     name, k);
        int i = tl_task_index(g.id, 2);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", name, g.id);
        seen[i]++;
        cr_assert(len == 4 && memcmp(p, "same", 4) == 0,
                  "%s: %s payload changed", name, g.id);
        free(p);
    }
    cr_assert(seen[0] == 1 && seen[1] == 1,
              "%s: deliveries task-0 x%d, task-1 x%d", name, seen[0], seen[1]);
    tl_got g = tl_claim(q, 200);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: extra delivery %s", name, g.id);
    dq_close(q);
    tl_teardown(&c);
}

/* A claim on an empty queue returns DQ_EMPTY, and not long after its
 * timeout (the bound is loose: the suite also runs under ASan). */
static void check_empty_claim(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "empty_claim");
    dq_queue *q = tl_open(&c);
    tl_got g = tl_claim(q, 200);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: claim on an empty queue gave %s",
                 name, g.id);
    cr_assert_leq(g.elapsed_ms, 200 + TL_SLACK_MS,
                  "%s: claim(200 ms) on an empty queue took %lld ms", name,
                  (long long)g.elapsed_ms);
    g = tl_claim(q, 0);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: claim(0) on an empty queue gave %s",
                 name, g.id);
    cr_assert_leq(g.elapsed_ms, TL_SLACK_MS, "%s: claim(0) took %lld ms",
                  name, (long long)g.elapsed_ms);
    /* Waits computed below a millisecond must not reach a blocking command
     * as 0, which BLPOP/BZPOPMIN/BLMOVE read as "block forever": 20 claims
     * of 1 ms each on an empty queue must all come back, and soon. */
    int64_t t0 = (dq_mono_us() / 1000);
    for (int i = 0; i < 20; i++) {
        g = tl_claim(q, 1);
        cr_assert_eq(g.rc, DQ_EMPTY, "%s: claim(1) on an empty queue gave "
                     "rc %d", name, g.rc);
    }
    cr_assert_leq((dq_mono_us() / 1000) - t0, 20 + TL_SLACK_MS,
                  "%s: 20 claims of 1 ms took %lld ms", name,
                  (long long)((dq_mono_us() / 1000) - t0));
    dq_close(q);
    tl_teardown(&c);
}

/* How much longer than its timeout a claim on an empty queue may take in
 * this suite.  dq.h allows one Redis round trip beyond the timeout; to a
 * server on 127.0.0.1 that is well under a millisecond, a few under ASan.
 * The rest is scheduling: on a shared 2-core machine a thread that asked
 * to wake at time T may run a few ms after it.  20 ms covers both and is
 * still far below what a server-side blocking timeout costs when Redis
 * notices it only on its next cron tick (up to 1000/hz = 100 ms late at
 * the default hz 10): the failure this check exists to catch. */
#define CLAIM_OVERRUN_SLACK_MS 20
/* Claims per timeout; the median is compared, so one descheduled sample
 * on a busy machine does not decide the verdict. */
#define CLAIM_SAMPLES 5

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Claims on q (an empty queue) with several timeouts and asserts that the
 * median of CLAIM_SAMPLES claims per timeout came back within timeout +
 * CLAIM_OVERRUN_SLACK_MS.  label names the run (strategy and options). */
static void assert_claim_durations(dq_queue *q, const char *label)
{
    static const int64_t timeouts_ms[] = {0, 10, 50, 250};
    for (size_t k = 0; k < sizeof timeouts_ms / sizeof timeouts_ms[0]; k++) {
        int64_t tmo = timeouts_ms[k], took_us[CLAIM_SAMPLES];
        char all[160] = "";
        size_t used = 0;
        for (int i = 0; i < CLAIM_SAMPLES; i++) {
            int64_t t0 = dq_mono_us();
            tl_got g = tl_claim(q, tmo);
            took_us[i] = dq_mono_us() - t0;
            cr_assert_eq(g.rc, DQ_EMPTY, "%s: claim(%lld ms) on an empty "
                         "queue gave %s", label, (long long)tmo, g.id);
            used += (size_t)snprintf(all + used, sizeof all - used, " %.1f",
                                     (double)took_us[i] / 1000.0);
        }
        qsort(took_us, CLAIM_SAMPLES, sizeof took_us[0], cmp_i64);
        int64_t median_us = took_us[CLAIM_SAMPLES / 2];
        cr_log_info("%s: claim(%lld ms) on an empty queue: median %.1f ms "
                    "(%s ms)", label, (long long)tmo,
                    (double)median_us / 1000.0, all + 1);
        cr_assert_leq(median_us, (tmo + CLAIM_OVERRUN_SLACK_MS) * 1000,
                      "%s: claim(%lld ms) on an empty queue took %.1f ms "
                      "(median of %d:%s ms); allowed: the timeout + %d ms",
                      label, (long long)tmo, (double)median_us / 1000.0,
                      CLAIM_SAMPLES, all, CLAIM_OVERRUN_SLACK_MS);
    }
}

/* claim_timeout's own redis-server, for a strategy that needs Redis.  The
 * late timeouts this check exists to catch show only on a quiet server:
 * any other client's command wakes Redis's event loop, which then times a
 * blocked claim out on time, so on tests/run.sh's shared server, busy
 * with the other tests of a parallel run, they passed.  Only this test's
 * own handles talk to this server.  Stopped by the test's .fini, which
 * Criterion runs after a failed assertion too; when the test process dies
 * instead (its .timeout, a crash) the server dies with it
 * (PR_SET_PDEATHSIG, harness/redis_server.h). */
static dq_redis_server claim_srv;

static void claim_srv_stop(void)
{
    dq_redis_server_stop(&claim_srv);
}

/* dq.h: a claim waits at most timeout_ms, plus at most one Redis round
 * trip -- every strategy, no exceptions, measured on a server nothing else
 * uses (claim_srv).  A strategy with a bzpopmin option (a blocking claim
 * instead of its default polling one) is measured a second time with
 * bzpopmin=1. */
static void check_claim_timeout(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "claim_timeout");
    if (c.port != 0) {
        dq_redis_server_opts so = {0};
        char err[512] = "";
        cr_assert_eq(dq_redis_server_start(&claim_srv, &so, err, sizeof err),
                     0, "%s: starting a private redis-server: %s", name, err);
        c.port = claim_srv.port;  /* every handle from here on, and the
                                     purge in tl_teardown */
    }
    dq_queue *q = tl_open(&c);
    assert_claim_durations(q, name);
    dq_close(q);
    if (tl_has_option(c.s, "bzpopmin")) {
        char label[64];
        snprintf(label, sizeof label, "%s bzpopmin=1", name);
        tl_set_opt(&c, "bzpopmin", "1");
        q = tl_open(&c);
        assert_claim_durations(q, label);
        dq_close(q);
    }
    tl_teardown(&c);
}

/* 8 consumer threads, 400 tasks due now. */
static void check_concurrent(const char *name)
{
    enum { NCONS = 8, N = 400 };
    tl_ctx c;
    tl_setup(&c, name, "concurrent");
    unsigned f = c.s->flags;
    if (!(f & (DQ_G_NO_DUP_CONCURRENT | DQ_G_DUPLICATES))) {
        tl_teardown(&c);
        cr_skip_test("%s declares neither DQ_G_NO_DUP_CONCURRENT nor "
                     "DQ_G_DUPLICATES", name);
    }
    /* A documented racer: widen its race window if it has a knob for it. */
    if ((f & DQ_G_DUPLICATES) && tl_has_option(c.s, "gap_us"))
        tl_set_opt(&c, "gap_us", "2000");
    int *seen = calloc(N, sizeof(int));
    cr_assert_not_null(seen);
    int total = tl_run_consumers(&c, NCONS, N, 1000, seen);
    int lost, dups;
    char which[256];
    tl_count_seen(seen, N, &lost, &dups, which, sizeof(which));
    cr_assert_eq(lost, 0, "%s: %d of %d tasks never delivered (%d "
                 "deliveries):%s", name, lost, N, total, which);
    if (f & DQ_G_NO_DUP_CONCURRENT)
        cr_assert_eq(dups, 0, "%s declares DQ_G_NO_DUP_CONCURRENT but %d "
                     "consumers made %d duplicate deliveries:%s", name, NCONS,
                     dups, which);
    else
        cr_assert_gt(dups, 0, "%s declares DQ_G_DUPLICATES but %d consumers "
                     "made no duplicate delivery of %d tasks", name, NCONS,
                     N);
    free(seen);
    tl_teardown(&c);
}

/* Due times in the past come out at once, also 1 ms after the epoch. */
static void check_past_due(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "past_due");
    dq_queue *q = tl_open(&c);
    int64_t now = dq_wall_us() / 1000;
    tl_enqueue(q, "task-0", "p", 1, now - 60000);
    tl_enqueue(q, "task-1", "p", 1, 1);
    int seen[2] = {0};
    for (int k = 0; k < 2; k++) {
        tl_got g = tl_claim(q, 1000);
        cr_assert_eq(g.rc, DQ_OK, "%s: a task due in the past was not "
                     "delivered by claim(1000 ms) (%d of 2)", name, k);
        int i = tl_task_index(g.id, 2);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", name, g.id);
        seen[i]++;
    }
    cr_assert(seen[0] == 1 && seen[1] == 1, "%s: past-due deliveries "
              "task-0 x%d, task-1 x%d", name, seen[0], seen[1]);
    dq_close(q);
    tl_teardown(&c);
}

/* A due time ten years ahead: not delivered, counted, purged; no
 * overflow in a strategy's wait computation. */
static void check_far_future(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "far_future");
    dq_queue *q = tl_open(&c);
    int64_t now = dq_wall_us() / 1000;
    int64_t ten_years_ms = (int64_t)10 * 365 * 24 * 3600 * 1000;
    tl_enqueue(q, "task-0", "f", 1, now + ten_years_ms);
    tl_got g = tl_claim(q, 300);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: a task due in 10 years was delivered "
                 "now", name);
    cr_assert_leq(g.elapsed_ms, 300 + TL_SLACK_MS, "%s: claim(300 ms) took "
                  "%lld ms with a far-future task", name,
                  (long long)g.elapsed_ms);
    if (c.s->pending != NULL) {
        int64_t p = dq_pending(q);
        cr_assert_eq(p, 1, "%s: pending = %lld with one far-future task (%s)",
                     name, (long long)p, p < 0 ? dq_errstr(q) : "");
    }
    int rc = dq_purge(q);
    cr_assert_eq(rc, DQ_OK, "%s: purge = %s: %s", name, dq_result_name(rc),
                 dq_errstr(q));
    if (c.s->pending != NULL) {
        int64_t p = dq_pending(q);
        cr_assert_eq(p, 0, "%s: pending = %lld after purge", name,
                     (long long)p);
    }
    if (c.s->exists != NULL) {
        rc = dq_exists(q);
        cr_assert_eq(rc, 0, "%s: exists = %d after purge (%s)", name, rc,
                     rc < 0 ? dq_errstr(q) : "");
    }
    g = tl_claim(q, 100);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: delivery after purge: %s", name, g.id);
    dq_close(q);
    tl_teardown(&c);
}

/* The wrappers reject due times a ZSet score cannot hold exactly (beyond
 * +-2^53 ms) with DQ_EINVAL, send nothing, and a huge claim timeout is cut
 * (no overflow in the strategy's deadline): a due task still comes out at
 * once. */
static void check_due_range(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "due_range");
    dq_queue *q = tl_open(&c);
    const int64_t bad[] = {INT64_MAX, DQ_DUE_MAX_MS + 1, -DQ_DUE_MAX_MS - 1,
                           INT64_MIN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = dq_enqueue(q, "task-0", "x", 1, bad[i]);
        cr_assert_eq(rc, DQ_EINVAL, "%s: enqueue with due %lld = %s", name,
                     (long long)bad[i], dq_result_name(rc));
        cr_assert(strstr(dq_errstr(q), "due_ms") != NULL,
                  "%s: message does not name due_ms: '%s'", name,
                  dq_errstr(q));
        dq_enqueue_item it[2] = {{"task-1", "y", 1, 1}, {"task-2", "z", 1,
                                                         bad[i]}};
        rc = dq_enqueue_many(q, it, 2);
        cr_assert_eq(rc, DQ_EINVAL, "%s: enqueue_many with due %lld = %s",
                     name, (long long)bad[i], dq_result_name(rc));
        cr_assert(strstr(dq_errstr(q), "item 1") != NULL,
                  "%s: message does not name item 1: '%s'", name,
                  dq_errstr(q));
    }
    if (c.s->pending != NULL) {
        int64_t p = dq_pending(q);
        cr_assert_eq(p, 0, "%s: rejected enqueues left %lld tasks", name,
                     (long long)p);
    }
    int64_t now = dq_wall_us() / 1000;
    tl_enqueue(q, "task-3", "w", 1, now - 1000);
    if (c.s->reschedule != NULL) {
        int rc = dq_reschedule(q, "task-3", INT64_MAX);
        cr_assert_eq(rc, DQ_EINVAL, "%s: reschedule to INT64_MAX = %s", name,
                     dq_result_name(rc));
    }
    tl_got g = tl_claim(q, INT64_MAX);
    cr_assert_eq(g.rc, DQ_OK, "%s: claim(INT64_MAX) with a due task = %s",
                 name, dq_result_name(g.rc));
    cr_assert_str_eq(g.id, "task-3");
    cr_assert_leq(g.elapsed_ms, 1000 + TL_SLACK_MS, "%s: claim of a due task "
                  "took %lld ms", name, (long long)g.elapsed_ms);
    dq_close(q);
    tl_teardown(&c);
}

/* A waiting consumer notices a task due earlier than the head it waits
 * for.  Head due in +2000 ms; while the consumer waits (claim timeout
 * 3000 ms), another handle enqueues a task due in +100 ms; it must come
 * out well before the old head. */
typedef struct wake_arg {
    dq_queue *q;
    tl_got got;
    int rc;
    char id[DQ_ID_MAX];
    char err[256];
    int64_t start_mono_us;
    int64_t done_mono_us;
    int64_t done_wall_us;
    pthread_barrier_t *ready;
} wake_arg;

static void *wake_consumer(void *arg)
{
    wake_arg *w = arg;
    dq_task t;
    memset(&t, 0, sizeof(t));
    pthread_barrier_wait(w->ready);
    w->start_mono_us = dq_mono_us();
    w->rc = dq_claim(w->q, 3000, &t);
    w->done_mono_us = dq_mono_us();
    w->done_wall_us = dq_wall_us();
    if (w->rc == DQ_OK) {
        snprintf(w->id, sizeof(w->id), "%s", t.id);
        int arc = dq_ack(w->q, &t);
        if (arc != DQ_OK)
            snprintf(w->err, sizeof(w->err), "ack = %s: %s",
                     dq_result_name(arc), dq_errstr(w->q));
    } else if (w->rc != DQ_EMPTY) {
        snprintf(w->err, sizeof(w->err), "claim = %s: %s",
                 dq_result_name(w->rc), dq_errstr(w->q));
    }
    dq_task_clear(&t);
    return NULL;
}

static void check_earlier_wakes(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "earlier_wakes");
    if (!(c.s->flags & (DQ_G_BLOCKS | DQ_G_POLLS))) {
        tl_teardown(&c);
        cr_skip_test("%s declares neither DQ_G_BLOCKS nor DQ_G_POLLS", name);
    }
    dq_queue *prod = tl_open_as(&c, "producer");
    dq_queue *cons = tl_open_as(&c, "consumer");
    int64_t now = dq_wall_us() / 1000;
    tl_enqueue(prod, "head", "h", 1, now + 2000);

    pthread_barrier_t ready;
    pthread_barrier_init(&ready, NULL, 2);
    wake_arg w;
    memset(&w, 0, sizeof(w));
    w.q = cons;
    w.ready = &ready;
    pthread_t th;
    int prc = pthread_create(&th, NULL, wake_consumer, &w);
    cr_assert_eq(prc, 0, "pthread_create: %s", strerror(prc));
    pthread_barrier_wait(&ready);
    dq_sleep_us(200 * 1000);  /* let the consumer settle into its wait */
    int64_t early_due = dq_wall_us() / 1000 + 100;
    int rc = dq_enqueue(prod, "early", "e", 1, early_due);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&ready);
    cr_assert_eq(rc, DQ_OK, "%s: enqueue(early) = %s: %s", name,
                 dq_result_name(rc), dq_errstr(prod));
    cr_assert_str_empty(w.err, "%s: consumer: %s", name, w.err);
    int64_t took_ms = (w.done_mono_us - w.start_mono_us) / 1000;
    cr_assert_eq(w.rc, DQ_OK, "%s: the waiting consumer got nothing in 3 s",
                 name);
    cr_assert_str_eq(w.id, "early", "%s: the waiting consumer got '%s', not "
                     "the task enqueued with an earlier due time", name, w.id);
    cr_assert_geq(w.done_wall_us, early_due * 1000, "%s: 'early' delivered "
                  "before its due time", name);
    cr_assert_lt(took_ms, 1500, "%s: 'early' (due ~300 ms into the wait) "
                 "came after %lld ms; the head was due at 2000 ms", name,
                 (long long)took_ms);
    dq_close(cons);
    dq_close(prod);
    tl_teardown(&c);
}

/* cancel removes a pending task (when the strategy has cancel). */
static void check_cancel(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "cancel");
    if (c.s->cancel == NULL) {
        tl_teardown(&c);
        cr_skip_test("%s has no cancel operation", name);
    }
    dq_queue *q = tl_open(&c);
    int64_t now = dq_wall_us() / 1000;
    tl_enqueue(q, "task-0", "a", 1, now + 200);
    tl_enqueue(q, "task-1", "b", 1, now + 200);
    int rc = dq_cancel(q, "task-0");
    cr_assert_eq(rc, DQ_OK, "%s: cancel(task-0) = %s: %s", name,
                 dq_result_name(rc), dq_errstr(q));
    if (c.s->pending != NULL) {
        int64_t p = dq_pending(q);
        cr_assert_eq(p, 1, "%s: pending = %lld after cancelling one of two",
                     name, (long long)p);
    }
    tl_got g = tl_claim(q, 2000);
    cr_assert_eq(g.rc, DQ_OK, "%s: the task not cancelled never came", name);
    cr_assert_str_eq(g.id, "task-1", "%s: got %s", name, g.id);
    g = tl_claim(q, 400);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: the cancelled task was delivered (%s)",
                 name, g.id);
    dq_close(q);
    tl_teardown(&c);
}

/* reschedule moves a pending task's due time, earlier and later. */
static void check_reschedule(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "reschedule");
    if (c.s->reschedule == NULL) {
        tl_teardown(&c);
        cr_skip_test("%s has no reschedule operation", name);
    }
    dq_queue *q = tl_open(&c);
    int64_t now = dq_wall_us() / 1000;
    int64_t far = now + (int64_t)10 * 365 * 24 * 3600 * 1000;
    tl_enqueue(q, "task-0", "a", 1, far);
    tl_enqueue(q, "task-1", "b", 1, now);
    int64_t soon = now + 100;
    int rc = dq_reschedule(q, "task-0", soon);
    cr_assert_eq(rc, DQ_OK, "%s: reschedule(task-0, earlier) = %s: %s", name,
                 dq_result_name(rc), dq_errstr(q));
    rc = dq_reschedule(q, "task-1", far);
    cr_assert_eq(rc, DQ_OK, "%s: reschedule(task-1, later) = %s: %s", name,
                 dq_result_name(rc), dq_errstr(q));
    tl_got g = tl_claim(q, 2000);
    cr_assert_eq(g.rc, DQ_OK, "%s: the task moved earlier never came", name);
    cr_assert_str_eq(g.id, "task-0", "%s: got %s, not the task moved "
                     "earlier", name, g.id);
    tl_assert_not_early(c.s, &g, soon);
    g = tl_claim(q, 300);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: the task moved 10 years ahead was "
                 "delivered", name);
    dq_close(q);
    tl_teardown(&c);
}

/* dq_open rejects an option the strategy does not list, naming it. */
static void check_unknown_option(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "unknown_option");
    tl_set_opt(&c, "no_such_option", "1");
    dq_config cfg = tl_config(&c, NULL);
    dq_queue *q = NULL;
    char err[256] = "";
    int rc = dq_open(c.s, &cfg, &q, err, sizeof(err));
    cr_assert_eq(rc, DQ_EINVAL, "%s: open with no_such_option=1 = %s (%s)",
                 name, dq_result_name(rc), err);
    cr_assert_null(q, "%s: failed open left a handle", name);
    cr_assert(strstr(err, "no_such_option") != NULL,
              "%s: the message does not name the option: '%s'", name, err);
    c.nopts = 0;
    tl_teardown(&c);
}

/* ---- Delivery guarantees after a consumer goes away --------------------
 * A "crashed consumer" here is a handle closed between claim and ack: the
 * strategy sees exactly what it sees when the process dies (its connection
 * drops, its in-process state is freed).  A producer handle stays open in
 * the first two checks so that an in-process queue (heap) outlives the
 * consumer; the third closes every handle on purpose. */

/* Payload of the single task of the lease checks: binary, with a NUL. */
static const char crash_payload[] = "pay\0load\xff";
#define CRASH_PAYLOAD_LEN (sizeof(crash_payload) - 1)

/* Enqueues "task-0" (crash_payload, due now) through prod, claims it on a
 * fresh handle WITHOUT acking, closes that handle and returns the attempt
 * the first delivery carried. */
static int claim_and_crash(tl_ctx *c, dq_queue *prod)
{
    const char *name = c->s->name;
    dq_queue *a = tl_open_as(c, "consumer-a");
    tl_enqueue(prod, "task-0", crash_payload, CRASH_PAYLOAD_LEN,
               dq_wall_us() / 1000);
    dq_task t;
    memset(&t, 0, sizeof(t));
    int rc = dq_claim(a, 3000, &t);
    cr_assert_eq(rc, DQ_OK, "%s: consumer A: claim(3000 ms) of a task due "
                 "now = %s: %s", name, dq_result_name(rc), dq_errstr(a));
    cr_assert_str_eq(t.id, "task-0", "%s: consumer A got '%s'", name, t.id);
    int attempt = t.attempt;
    dq_task_clear(&t);
    dq_close(a);  /* no ack: the consumer "crashed" */
    return attempt;
}

/* DQ_G_AT_LEAST_ONCE / DQ_G_SURVIVES_CONSUMER_CRASH: a task claimed by a
 * consumer that dies before acking comes back to another consumer after
 * the lease (lease_ms=300), same id, intact payload, attempt counted up;
 * once acked it stays gone past another lease. */
static void check_at_least_once(const char *name)
{
    enum { LEASE_MS = 300 };
    tl_ctx c;
    tl_setup(&c, name, "at_least_once");
    unsigned f = c.s->flags;
    if (!(f & (DQ_G_AT_LEAST_ONCE | DQ_G_SURVIVES_CONSUMER_CRASH))) {
        tl_teardown(&c);
        cr_skip_test("%s declares neither DQ_G_AT_LEAST_ONCE nor "
                     "DQ_G_SURVIVES_CONSUMER_CRASH", name);
    }
    if (!tl_has_option(c.s, "lease_ms")) {
        tl_teardown(&c);
        cr_assert_fail("%s declares %s but has no lease_ms option: the "
                       "redelivery of an un-acked task cannot be tested",
                       name, (f & DQ_G_AT_LEAST_ONCE)
                                 ? "DQ_G_AT_LEAST_ONCE"
                                 : "DQ_G_SURVIVES_CONSUMER_CRASH");
    }
    char lease[32];
    snprintf(lease, sizeof(lease), "%d", LEASE_MS);
    tl_set_opt(&c, "lease_ms", lease);
    dq_queue *prod = tl_open_as(&c, "producer");
    int first = claim_and_crash(&c, prod);
    if (first != 0)
        cr_assert_eq(first, 1, "%s: first delivery has attempt %d", name,
                     first);

    dq_queue *b = tl_open_as(&c, "consumer-b");
    dq_task t;
    memset(&t, 0, sizeof(t));
    int64_t timeout_ms = LEASE_MS + 3000;
    int rc = dq_claim(b, timeout_ms, &t);
    cr_assert_eq(rc, DQ_OK, "%s: a task claimed and never acked (consumer "
                 "closed) did not come back within lease %d ms + 3000 ms: "
                 "claim = %s: %s", name, LEASE_MS, dq_result_name(rc),
                 rc == DQ_EMPTY ? "nothing" : dq_errstr(b));
    cr_assert_str_eq(t.id, "task-0", "%s: redelivery gave '%s'", name, t.id);
    if (t.attempt != 0 || first != 0)
        cr_assert_geq(t.attempt, 2, "%s: redelivery has attempt %d (first "
                      "delivery: %d)", name, t.attempt, first);
    cr_assert(t.payload_len == CRASH_PAYLOAD_LEN &&
                  memcmp(t.payload, crash_payload, CRASH_PAYLOAD_LEN) == 0,
              "%s: redelivered payload differs (%zu bytes, enqueued %zu)",
              name, t.payload_len, CRASH_PAYLOAD_LEN);
    rc = dq_ack(b, &t);
    cr_assert_eq(rc, DQ_OK, "%s: ack of the redelivery = %s: %s", name,
                 dq_result_name(rc), dq_errstr(b));
    dq_task_clear(&t);
    /* Wait past another lease: an ack that did not end it shows here. */
    tl_got g = tl_claim(b, LEASE_MS + 1000);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: delivery after the ack: %s", name,
                 g.id);
    dq_close(b);
    dq_close(prod);
    tl_teardown(&c);
}

/* Sets lease_ms=lease_ms on ctx, or fails: a strategy declaring
 * DQ_G_AT_LEAST_ONCE must have the knob its redelivery is tested with. */
static void set_lease(tl_ctx *c, int lease_ms)
{
    if (!tl_has_option(c->s, "lease_ms")) {
        tl_teardown(c);
        cr_assert_fail("%s declares DQ_G_AT_LEAST_ONCE but has no lease_ms "
                       "option", c->s->name);
    }
    char lease[32];
    snprintf(lease, sizeof(lease), "%d", lease_ms);
    tl_set_opt(c, "lease_ms", lease);
}

/* Enqueues task-0 .. task-<n-1> through q, due 1 ms apart in the last few
 * ms (task-0 earliest), payload = id. */
static void enqueue_due_now(dq_queue *q, int n)
{
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof(id), "task-%d", i);
        tl_enqueue(q, id, id, strlen(id), now - n + i);
    }
}

/* Claims (3 s at most) and expects task `want`; returns the task (the
 * caller acks and clears it). */
static dq_task claim_expect(dq_queue *q, const char *want, const char *why)
{
    dq_task t;
    memset(&t, 0, sizeof(t));
    int rc = dq_claim(q, 3000, &t);
    cr_assert_eq(rc, DQ_OK, "%s: claim %s: %s: %s", q->s->name, why,
                 dq_result_name(rc), rc == DQ_EMPTY ? "nothing in 3 s"
                                                    : dq_errstr(q));
    cr_assert_str_eq(t.id, want, "%s: claim %s gave %s, expected %s",
                     q->s->name, why, t.id, want);
    return t;
}

/* DQ_G_AT_LEAST_ONCE with DQ_G_DUE_ORDER: a task whose lease ran out
 * counts as due again at its lease expiry, so it comes back AFTER the
 * tasks that were due before that -- not ahead of them, where a holder
 * that always outlasts its lease would be handed the same task over and
 * over while the others wait.  Consumer X takes task-0 and sits on it
 * past the lease; consumer Y then gets task-1, task-2, and only then
 * task-0 (attempt 2).  X's late ack is refused: the task was redelivered. */
static void check_redelivery_order(const char *name)
{
    enum { LEASE_MS = 200 };
    tl_ctx c;
    tl_setup_need_flag(&c, name, "redelivery_order", DQ_G_AT_LEAST_ONCE,
                       "DQ_G_AT_LEAST_ONCE");
    if (!(c.s->flags & DQ_G_DUE_ORDER)) {
        tl_teardown(&c);
        cr_skip_test("%s does not declare DQ_G_DUE_ORDER", name);
    }
    set_lease(&c, LEASE_MS);
    dq_queue *prod = tl_open_as(&c, "producer");
    enqueue_due_now(prod, 3);
    dq_queue *x = tl_open_as(&c, "consumer-x");
    dq_queue *y = tl_open_as(&c, "consumer-y");
    dq_task held = claim_expect(x, "task-0", "by X");
    /* Past the lease, with room for the reaper (list-reliable) to run. */
    dq_sleep_us((LEASE_MS + 200) * 1000);
    static const char *const want[] = {"task-1", "task-2", "task-0"};
    for (int k = 0; k < 3; k++) {
        char why[64];
        snprintf(why, sizeof why, "%d of 3 by Y after X's lease ran out",
                 k + 1);
        dq_task t = claim_expect(y, want[k], why);
        if (k == 2 && t.attempt != 0)
            cr_assert_geq(t.attempt, 2, "%s: redelivered task-0 has attempt "
                          "%d", name, t.attempt);
        int rc = dq_ack(y, &t);
        cr_assert_eq(rc, DQ_OK, "%s: Y's ack of %s = %s: %s", name, t.id,
                     dq_result_name(rc), dq_errstr(y));
        dq_task_clear(&t);
    }
    int rc = dq_ack(x, &held);
    cr_assert_eq(rc, DQ_ENOTFOUND, "%s: X's ack of task-0 after Y got and "
                 "acked it again = %s (expected DQ_ENOTFOUND)", name,
                 dq_result_name(rc));
    dq_task_clear(&held);
    tl_got g = tl_claim(y, LEASE_MS + 300);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: delivery after every ack: %s", name,
                 g.id);
    dq_close(y);
    dq_close(x);
    dq_close(prod);
    tl_teardown(&c);
}

/* DQ_G_AT_LEAST_ONCE: work longer than the lease does not stall the queue.
 * One consumer takes each of 4 tasks and works LEASE_MS + 100 ms on it
 * before acking.  Nobody else took the task meanwhile, so the late ack is
 * accepted (dq.h: DQ_ENOTFOUND only once the task was redelivered) and
 * the next claim gets the next task: every task once, in due order. */
static void check_long_work(const char *name)
{
    enum { LEASE_MS = 200, WORK_MS = LEASE_MS + 100, N = 4 };
    tl_ctx c;
    tl_setup_need_flag(&c, name, "long_work", DQ_G_AT_LEAST_ONCE,
                       "DQ_G_AT_LEAST_ONCE");
    set_lease(&c, LEASE_MS);
    dq_queue *q = tl_open_as(&c, "consumer");
    enqueue_due_now(q, N);
    int seen[N] = {0};
    for (int i = 0; i < N; i++) {
        dq_task t;
        memset(&t, 0, sizeof t);
        int rc = dq_claim(q, 3000, &t);
        cr_assert_eq(rc, DQ_OK, "%s: claim %d of %d (each task worked %d "
                     "ms, lease %d ms) = %s: %s", name, i + 1, N, WORK_MS,
                     LEASE_MS, dq_result_name(rc),
                     rc == DQ_EMPTY ? "nothing in 3 s" : dq_errstr(q));
        int k = tl_task_index(t.id, N);
        cr_assert_geq(k, 0, "%s: unexpected id '%s'", name, t.id);
        cr_assert_eq(seen[k], 0, "%s: %s delivered again after its late "
                     "ack, before task(s) never delivered", name, t.id);
        seen[k]++;
        if (c.s->flags & DQ_G_DUE_ORDER)
            cr_assert_eq(k, i, "%s: claim %d gave %s (due order: task-%d)",
                         name, i + 1, t.id, i);
        dq_sleep_us(WORK_MS * 1000);
        rc = dq_ack(q, &t);
        cr_assert_eq(rc, DQ_OK, "%s: ack of %s %d ms after the claim (lease "
                     "%d ms, nobody else claimed it) = %s: %s", name, t.id,
                     WORK_MS, LEASE_MS, dq_result_name(rc), dq_errstr(q));
        dq_task_clear(&t);
    }
    tl_got g = tl_claim(q, LEASE_MS + 300);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: delivery after every ack: %s", name,
                 g.id);
    dq_close(q);
    tl_teardown(&c);
}

/* DQ_G_AT_MOST_ONCE: a task claimed by a consumer that dies before acking
 * is never delivered again (with one consumer also for DQ_G_DUPLICATES),
 * not even 1.5 s later with a lease_ms option (if any) set to 300. */
static void check_at_most_once(const char *name)
{
    tl_ctx c;
    tl_setup_need_flag(&c, name, "at_most_once", DQ_G_AT_MOST_ONCE,
                       "DQ_G_AT_MOST_ONCE");
    /* A lease knob, if any, made short: a redelivery must show in 1.5 s. */
    if (tl_has_option(c.s, "lease_ms"))
        tl_set_opt(&c, "lease_ms", "300");
    dq_queue *prod = tl_open_as(&c, "producer");
    claim_and_crash(&c, prod);
    dq_queue *b = tl_open_as(&c, "consumer-b");
    tl_got g = tl_claim(b, 1500);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s declares DQ_G_AT_MOST_ONCE but a task "
                 "claimed by a closed consumer was delivered again (%s)",
                 name, g.id);
    dq_close(b);
    dq_close(prod);
    tl_teardown(&c);
}

/* DQ_G_SURVIVES_PROCESS_EXIT: pending tasks outlive every handle: 5 tasks
 * due in 300 ms, every handle closed, a new handle gets each exactly once. */
static void check_survives_exit(const char *name)
{
    enum { N = 5 };
    tl_ctx c;
    tl_setup_need_flag(&c, name, "survives_exit", DQ_G_SURVIVES_PROCESS_EXIT,
                       "DQ_G_SURVIVES_PROCESS_EXIT");
    dq_queue *a = tl_open_as(&c, "producer");
    int64_t due = dq_wall_us() / 1000 + 300;
    for (int i = 0; i < N; i++) {
        char id[32];
        snprintf(id, sizeof(id), "task-%d", i);
        tl_enqueue(a, id, id, strlen(id), due);
    }
    dq_close(a);  /* no handle on the queue is left open */
    dq_queue *b = tl_open_as(&c, "consumer-b");
    int seen[N] = {0};
    for (int k = 0; k < N; k++) {
        unsigned char *pl = NULL;
        size_t len = 0;
        tl_got g = tl_claim_p(b, 3000, &pl, &len);
        cr_assert_eq(g.rc, DQ_OK, "%s: after every handle closed, claim %d "
                     "of %d found nothing in 3 s", name, k + 1, N);
        int i = tl_task_index(g.id, N);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", name, g.id);
        cr_assert_eq(seen[i], 0, "%s: %s delivered twice", name, g.id);
        seen[i]++;
        cr_assert(len == strlen(g.id) && memcmp(pl, g.id, len) == 0,
                  "%s: %s came with another payload", name, g.id);
        free(pl);
        tl_assert_not_early(c.s, &g, due);
    }
    tl_got g = tl_claim(b, 300);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: extra delivery %s", name, g.id);
    dq_close(b);
    tl_teardown(&c);
}

/* Deletes the expired keys of c's queue (dq:{Q}:*) now, as a read would:
 * SCAN deletes each expired key it meets, and Redis publishes its
 * `expired` event then (keyspace notifications, "Timing of expired
 * events"), not waiting for the active-expire cycle. */
static void expire_queue_keys(const tl_ctx *c)
{
    char match[128], cursor[32] = "0";
    redisContext *r = redisConnect("127.0.0.1", c->port);
    cr_assert(r != NULL && r->err == 0, "connect to port %d", c->port);
    snprintf(match, sizeof(match), "dq:{%s}:*", c->queue);
    do {
        redisReply *y = redisCommand(r, "SCAN %s MATCH %s COUNT 1000",
                                     cursor, match);
        cr_assert(y != NULL && y->type == REDIS_REPLY_ARRAY &&
                  y->elements == 2, "SCAN: %s", y == NULL ? r->errstr :
                  y->type == REDIS_REPLY_ERROR ? y->str : "not a 2-array");
        snprintf(cursor, sizeof(cursor), "%s", y->element[0]->str);
        freeReplyObject(y);
    } while (strcmp(cursor, "0") != 0);
    redisFree(r);
}

/* DQ_G_KEYSPACE_EVENTS: an event published while no subscriber is
 * connected is lost: a task that falls due while no handle is open (its
 * timer expired then, see expire_queue_keys) is never delivered, not even
 * to a handle opened after. */
static void check_unheard_lost(const char *name)
{
    tl_ctx c;
    tl_setup_need_flag(&c, name, "unheard_lost", DQ_G_KEYSPACE_EVENTS,
                       "DQ_G_KEYSPACE_EVENTS");
    dq_queue *a = tl_open_as(&c, "producer");
    int64_t due = dq_wall_us() / 1000 + 200;
    tl_enqueue(a, "task-0", "task-0", 6, due);
    dq_close(a);  /* no handle on the queue is left open */
    while (dq_wall_us() / 1000 < due + 100)
        usleep(20 * 1000);
    expire_queue_keys(&c);
    dq_queue *b = tl_open_as(&c, "consumer-b");
    tl_got g = tl_claim(b, 1000);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s declares DQ_G_KEYSPACE_EVENTS, but "
                 "task-0, due while no handle was open, was delivered to "
                 "a handle opened after (%s)", name, g.id);
    dq_close(b);
    tl_teardown(&c);
}

/* ---- Retries and dead letters (the optional ops nack, dead_letters and
 * the option max_attempts, found by name: dq.h) -------------------------- */

/* Claims task-0 on q within timeout_ms and returns it in *t (caller
 * clears); aborts the test when nothing comes. */
static void claim_task0(const char *name, dq_queue *q, int64_t timeout_ms,
                        dq_task *t, const char *what)
{
    memset(t, 0, sizeof(*t));
    int rc = dq_claim(q, timeout_ms, t);
    cr_assert_eq(rc, DQ_OK, "%s: %s: claim(%lld ms) = %s: %s", name, what,
                 (long long)timeout_ms, dq_result_name(rc),
                 rc == DQ_EMPTY ? "nothing" : dq_errstr(q));
    cr_assert_str_eq(t->id, "task-0", "%s: %s gave '%s'", name, what, t->id);
}

/* nack: a claimed task given back with a delay of NACK_MS is delivered
 * again no earlier than NACK_MS after the call, after the nacking handle
 * closed (and, with DQ_G_SURVIVES_PROCESS_EXIT, every handle: the retry
 * time is in Redis), with its payload and attempt + 1.  The lease is made
 * long, so only the nack can bring the task back in time.  The given-back
 * delivery can be neither nacked nor acked again; bad arguments are
 * refused. */
static void check_nack(const char *name)
{
    enum { NACK_MS = 400 };
    tl_ctx c;
    tl_setup(&c, name, "nack");
    unsigned f = c.s->flags;
    if (c.s->nack == NULL) {
        tl_teardown(&c);
        cr_skip_test("%s has no nack operation", name);
    }
    if (tl_has_option(c.s, "lease_ms"))
        tl_set_opt(&c, "lease_ms", "60000");
    dq_queue *prod = tl_open_as(&c, "producer");
    dq_queue *a = tl_open_as(&c, "consumer-a");
    tl_enqueue(prod, "task-0", crash_payload, CRASH_PAYLOAD_LEN,
               dq_wall_us() / 1000);
    dq_task t;
    claim_task0(name, a, 3000, &t, "first delivery");
    int rc = dq_nack(a, NULL, 0);
    cr_assert_eq(rc, DQ_EINVAL, "%s: nack(NULL) = %s", name,
                 dq_result_name(rc));
    rc = dq_nack(a, &t, -1);
    cr_assert_eq(rc, DQ_EINVAL, "%s: nack(delay -1) = %s", name,
                 dq_result_name(rc));
    rc = dq_nack(a, &t, DQ_NACK_DELAY_MAX_MS + 1);
    cr_assert_eq(rc, DQ_EINVAL, "%s: nack(delay 2^52 + 1) = %s", name,
                 dq_result_name(rc));
    /* Due times are whole ms: "now" at the nack is at least this ms. */
    int64_t nack_ms = dq_wall_us() / 1000;
    rc = dq_nack(a, &t, NACK_MS);
    cr_assert_eq(rc, DQ_OK, "%s: nack(%d ms) = %s: %s", name, NACK_MS,
                 dq_result_name(rc), dq_errstr(a));
    rc = dq_nack(a, &t, 0);
    cr_assert_eq(rc, DQ_ENOTFOUND, "%s: a second nack of the same delivery "
                 "= %s", name, dq_result_name(rc));
    rc = dq_ack(a, &t);
    cr_assert_eq(rc, DQ_ENOTFOUND, "%s: ack after nack = %s", name,
                 dq_result_name(rc));
    dq_close(a);
    if (f & DQ_G_SURVIVES_PROCESS_EXIT) {
        dq_close(prod); /* no handle left: the retry lives in Redis */
        prod = NULL;
    }
    dq_queue *b = tl_open_as(&c, "consumer-b");
    dq_task u;
    claim_task0(name, b, NACK_MS + 3000, &u, "the nacked task");
    int64_t back_us = dq_wall_us();
    cr_assert_geq(back_us, (nack_ms + NACK_MS) * 1000, "%s: nacked at %lld "
                  "ms with a delay of %d ms, delivered again %.1f ms later",
                  name, (long long)nack_ms, NACK_MS,
                  (double)back_us / 1e3 - (double)nack_ms);
    cr_assert(u.payload_len == CRASH_PAYLOAD_LEN &&
                  memcmp(u.payload, crash_payload, CRASH_PAYLOAD_LEN) == 0,
              "%s: payload after the nack differs (%zu bytes, enqueued %zu)",
              name, u.payload_len, CRASH_PAYLOAD_LEN);
    if (t.attempt != 0)
        cr_assert_eq(u.attempt, t.attempt + 1, "%s: attempt %d after a nack "
                     "of attempt %d", name, u.attempt, t.attempt);
    rc = dq_nack(b, &t, 0);
    cr_assert_eq(rc, DQ_ENOTFOUND, "%s: nack of the first (given back) "
                 "delivery on another handle = %s", name, dq_result_name(rc));
    rc = dq_ack(b, &u);
    cr_assert_eq(rc, DQ_OK, "%s: ack of the retry = %s: %s", name,
                 dq_result_name(rc), dq_errstr(b));
    rc = dq_nack(b, &u, 0);
    cr_assert_eq(rc, DQ_ENOTFOUND, "%s: nack after ack = %s", name,
                 dq_result_name(rc));
    tl_got g = tl_claim(b, 300);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: delivery after the ack: %s", name,
                 g.id);
    dq_task_clear(&t);
    dq_task_clear(&u);
    dq_close(b);
    dq_close(prod);
    tl_teardown(&c);
}

/* nack when the lease is no longer ours: consumer A's lease (300 ms) runs
 * out, B claims the task; A's nack and ack are refused (DQ_ENOTFOUND) and
 * leave B's lease alone: B acks, and the task does not come back. */
static void check_nack_not_ours(const char *name)
{
    enum { LEASE_MS = 300 };
    tl_ctx c;
    tl_setup(&c, name, "nack_not_ours");
    if (c.s->nack == NULL) {
        tl_teardown(&c);
        cr_skip_test("%s has no nack operation", name);
    }
    if (!tl_has_option(c.s, "lease_ms")) {
        tl_teardown(&c);
        cr_skip_test("%s has no lease_ms option: a lease cannot run out",
                     name);
    }
    char lease[32];
    snprintf(lease, sizeof(lease), "%d", LEASE_MS);
    tl_set_opt(&c, "lease_ms", lease);
    dq_queue *a = tl_open_as(&c, "consumer-a");
    dq_queue *b = tl_open_as(&c, "consumer-b");
    tl_enqueue(a, "task-0", "n", 1, dq_wall_us() / 1000);
    dq_task t, u;
    claim_task0(name, a, 3000, &t, "consumer A");
    claim_task0(name, b, LEASE_MS + 3000, &u, "consumer B after A's lease");
    int rc = dq_nack(a, &t, 0);
    cr_assert_eq(rc, DQ_ENOTFOUND, "%s: A's nack after B took the task = "
                 "%s: %s", name, dq_result_name(rc), dq_errstr(a));
    rc = dq_ack(a, &t);
    cr_assert_eq(rc, DQ_ENOTFOUND, "%s: A's ack after B took the task = %s",
                 name, dq_result_name(rc));
    rc = dq_ack(b, &u);
    cr_assert_eq(rc, DQ_OK, "%s: B's ack after A's refused nack = %s: %s",
                 name, dq_result_name(rc), dq_errstr(b));
    tl_got g = tl_claim(a, LEASE_MS + 1000);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: delivered again after B's ack: %s",
                 name, g.id);
    dq_task_clear(&t);
    dq_task_clear(&u);
    dq_close(b);
    dq_close(a);
    tl_teardown(&c);
}

/* dq_dead_letter_ids's visitor: counts the ids it is shown and copies
 * the first four into arg (a dead_ids). */
typedef struct dead_ids {
    int n;
    char id[4][DQ_ID_MAX];
} dead_ids;

static int collect_dead(void *arg, const char *id)
{
    dead_ids *d = arg;

    if (d->n < 4)
        snprintf(d->id[d->n], sizeof d->id[0], "%s", id);
    d->n++;
    return 0;
}

/* The ids dq_dead_letter_ids shows on q: exactly one, `want`. */
static void expect_dead_ids(const char *name, dq_queue *q, const char *want)
{
    dead_ids d = {0};
    int rc = dq_dead_letter_ids(q, collect_dead, &d);

    cr_assert_eq(rc, DQ_OK, "%s: dead_letter_ids = %s: %s", name,
                 dq_result_name(rc), dq_errstr(q));
    cr_assert_eq(d.n, 1, "%s: dead_letter_ids showed %d ids, not 1", name,
                 d.n);
    cr_assert_str_eq(d.id[0], want, "%s: dead_letter_ids showed '%s'", name,
                     d.id[0]);
}

/* max_attempts=2: a task delivered twice without an ack -- the first
 * delivery's lease (300 ms) runs out, the second is nacked when the
 * strategy has nack, else its lease runs out too -- is not delivered a
 * third time: it lands in the dead-letter set (dead_letters() == 1, and
 * dead_letter_ids shows its id) and is no longer pending.  A task acked at
 * its first delivery stays out of it. */
static void check_max_attempts(const char *name)
{
    enum { LEASE_MS = 300 };
    tl_ctx c;
    tl_setup(&c, name, "max_attempts");
    if (!tl_has_option(c.s, "max_attempts")) {
        tl_teardown(&c);
        cr_skip_test("%s has no max_attempts option", name);
    }
    if (c.s->dead_letters == NULL || c.s->dead_letter_ids == NULL ||
        !tl_has_option(c.s, "lease_ms")) {
        tl_teardown(&c);
        cr_assert_fail("%s takes max_attempts but has no %s", name,
                       c.s->dead_letters == NULL ? "dead_letters operation"
                       : c.s->dead_letter_ids == NULL
                           ? "dead_letter_ids operation"
                           : "lease_ms option");
    }
    char lease[32];
    snprintf(lease, sizeof(lease), "%d", LEASE_MS);
    tl_set_opt(&c, "lease_ms", lease);
    tl_set_opt(&c, "max_attempts", "2");
    dq_queue *prod = tl_open_as(&c, "producer");
    int first = claim_and_crash(&c, prod);
    if (first != 0)
        cr_assert_eq(first, 1, "%s: first delivery has attempt %d", name,
                     first);
    dq_queue *b = tl_open_as(&c, "consumer-b");
    dq_task t;
    claim_task0(name, b, LEASE_MS + 3000, &t, "second delivery");
    if (t.attempt != 0 || first != 0)
        cr_assert_eq(t.attempt, 2, "%s: second delivery has attempt %d",
                     name, t.attempt);
    if (c.s->nack != NULL) {
        int rc = dq_nack(b, &t, 0);
        cr_assert_eq(rc, DQ_OK, "%s: nack of the second delivery = %s: %s",
                     name, dq_result_name(rc), dq_errstr(b));
    }
    dq_task_clear(&t);
    tl_got g = tl_claim(b, LEASE_MS + 1500);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: max_attempts=2 but %s was delivered a "
                 "third time", name, g.id);
    int64_t dead = dq_dead_letters(b);
    cr_assert_eq(dead, 1, "%s: dead_letters = %lld after 2 failed "
                 "deliveries with max_attempts=2 (%s)", name,
                 (long long)dead, dead < 0 ? dq_errstr(b) : "");
    expect_dead_ids(name, b, "task-0");
    if (c.s->pending != NULL) {
        int64_t p = dq_pending(b);
        cr_assert_eq(p, 0, "%s: pending = %lld with the only task dead",
                     name, (long long)p);
    }
    tl_enqueue(prod, "task-1", "ok", 2, dq_wall_us() / 1000);
    g = tl_claim(b, 3000); /* acked at once */
    cr_assert_eq(g.rc, DQ_OK, "%s: task-1 did not come", name);
    cr_assert_str_eq(g.id, "task-1", "%s: got %s, not task-1", name, g.id);
    g = tl_claim(b, LEASE_MS + 500);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: delivery after task-1's ack: %s", name,
                 g.id);
    dead = dq_dead_letters(b);
    cr_assert_eq(dead, 1, "%s: dead_letters = %lld after an acked task",
                 name, (long long)dead);
    dq_close(b);
    dq_close(prod);
    tl_teardown(&c);
}

/* A port with nothing listening: bound (so nobody else takes it) but not
 * listening, so a connect is refused at once.  Returns the fd to close. */
static int closed_port(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0, "socket: %s", strerror(errno));
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s",
                 strerror(errno));
    socklen_t alen = sizeof(a);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* A Redis strategy opened against a closed port fails with DQ_EIO and a
 * message naming host:port. */
static void check_closed_port(const char *name)
{
    tl_ctx c;
    tl_setup_need_flag(&c, name, "closed_port", DQ_G_NEEDS_REDIS,
                       "DQ_G_NEEDS_REDIS");
    int port;
    int fd = closed_port(&port);
    dq_config cfg = tl_config(&c, NULL);
    cfg.redis_port = port;
    dq_queue *q = NULL;
    char err[256] = "";
    int64_t t0 = dq_mono_us();
    int rc = dq_open(c.s, &cfg, &q, err, sizeof(err));
    int64_t took_ms = (dq_mono_us() - t0) / 1000;
    close(fd);
    char hp[64];
    snprintf(hp, sizeof(hp), "127.0.0.1:%d", port);
    cr_assert_eq(rc, DQ_EIO, "%s: open against closed %s = %s (%s)", name,
                 hp, dq_result_name(rc), err);
    cr_assert_null(q, "%s: failed open left a handle", name);
    cr_assert(strstr(err, hp) != NULL,
              "%s: the message does not name %s: '%s'", name, hp, err);
    cr_assert_leq(took_ms, 2000 + TL_SLACK_MS, "%s: refused connect took "
                  "%lld ms", name, (long long)took_ms);
    tl_teardown(&c);
}

/* list and list-reliable: a consumer whose clock runs 10 s behind gets a
 * task that a mover with a clock 10 s ahead moved early; it waits for the
 * due time by its own clock only until its claim timeout, then puts the
 * task back at the head of ready (DQ_EMPTY in time, task not lost, a
 * list-reliable attempt not counted). */
static dq_queue *open_skewed(tl_ctx *c, const char *consumer,
                             int64_t offset_us)
{
    dq_config cfg = tl_config(c, consumer);
    cfg.clock_offset_us = offset_us;
    dq_queue *q = NULL;
    char err[256] = "";
    int rc = dq_open(c->s, &cfg, &q, err, sizeof(err));
    cr_assert_eq(rc, DQ_OK, "%s: dq_open = %s: %s", c->s->name,
                 dq_result_name(rc), err);
    return q;
}

static void check_early_put_back(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "early_put_back");
    dq_queue *fast = open_skewed(&c, "fast", 10 * 1000000LL);
    dq_queue *slow = open_skewed(&c, "slow", -10 * 1000000LL);
    tl_got g = tl_claim(fast, 0); /* starts the fast handle's mover */
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: empty queue gave %s", name, g.id);
    int64_t due = dq_wall_us() / 1000 + 2000;
    tl_enqueue(slow, "task-0", "e", 1, due);
    /* The fast mover moves it at once (due 2 s ago by its clock); the slow
     * consumer would have to wait ~12 s. */
    g = tl_claim(slow, 500);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: slow consumer got %s before its due "
                 "time by its clock", name, g.id);
    cr_assert_leq(g.elapsed_ms, 500 + TL_SLACK_MS, "%s: claim(500 ms) took "
                  "%lld ms waiting for an early task", name,
                  (long long)g.elapsed_ms);
    int64_t p = dq_pending(slow);
    cr_assert_eq(p, 1, "%s: pending = %lld after the put-back (%s)", name,
                 (long long)p, p < 0 ? dq_errstr(slow) : "");
    dq_task t;
    memset(&t, 0, sizeof t);
    int rc = dq_claim(fast, 3000, &t);
    cr_assert_eq(rc, DQ_OK, "%s: the put-back task did not come to the fast "
                 "consumer: %s %s", name, dq_result_name(rc),
                 dq_errstr(fast));
    cr_assert_str_eq(t.id, "task-0");
    cr_assert(t.payload_len == 1 && t.payload[0] == 'e',
              "%s: payload lost in the put-back", name);
    if (c.s->flags & DQ_G_AT_LEAST_ONCE)
        cr_assert_eq(t.attempt, 1, "%s: attempt %d after a put-back", name,
                     t.attempt);
    cr_assert_eq(dq_ack(fast, &t), DQ_OK, "%s: ack: %s", name,
                 dq_errstr(fast));
    dq_task_clear(&t);
    dq_close(slow);
    dq_close(fast);
    tl_teardown(&c);
}

Test(list, early_put_back, .timeout = 30) { check_early_put_back("list"); }
Test(list_reliable, early_put_back, .timeout = 30)
{
    check_early_put_back("list-reliable");
}

/* ---- Instantiation ------------------------------------------------------
 * CONFORMANCE(ident) defines <ident>/<check> for every check of strategy
 * dq_strategy_<ident>, passing its name (a string of this process, not a
 * Criterion parameter).  Timeouts are seconds, generous for ASan on 2
 * cores. */
#define CONFORMANCE_EXTERN(ident) extern const dq_strategy dq_strategy_##ident;
DQ_STRATEGY_MAP(CONFORMANCE_EXTERN)

#define CONFORMANCE_TEST(ident, check, seconds)                               \
    Test(ident, check, .timeout = seconds)                                    \
    {                                                                         \
        check_##check(dq_strategy_##ident.name);                              \
    }
/* claim_timeout runs on its own server, stopped by the fixture's fini. */
#define CONFORMANCE_TEST_OWN_SERVER(ident, check, seconds)                    \
    Test(ident, check, .timeout = seconds, .fini = claim_srv_stop)            \
    {                                                                         \
        check_##check(dq_strategy_##ident.name);                              \
    }
#define CONFORMANCE(ident)                                                    \
    CONFORMANCE_TEST(ident, due_order, 30)                                   \
    CONFORMANCE_TEST(ident, not_early, 30)                                   \
    CONFORMANCE_TEST(ident, exactly_once, 60)                                \
    CONFORMANCE_TEST(ident, enqueue_many, 60)                                \
    CONFORMANCE_TEST(ident, binary_payloads, 30)                             \
    CONFORMANCE_TEST(ident, equal_payloads, 30)                              \
    CONFORMANCE_TEST(ident, empty_claim, 30)                                 \
    CONFORMANCE_TEST_OWN_SERVER(ident, claim_timeout, 30)                    \
    CONFORMANCE_TEST(ident, concurrent, 120)                                 \
    CONFORMANCE_TEST(ident, past_due, 30)                                    \
    CONFORMANCE_TEST(ident, far_future, 30)                                  \
    CONFORMANCE_TEST(ident, due_range, 30)                                   \
    CONFORMANCE_TEST(ident, earlier_wakes, 30)                               \
    CONFORMANCE_TEST(ident, cancel, 30)                                      \
    CONFORMANCE_TEST(ident, reschedule, 30)                                  \
    CONFORMANCE_TEST(ident, unknown_option, 30)                              \
    CONFORMANCE_TEST(ident, closed_port, 30)                                 \
    CONFORMANCE_TEST(ident, at_least_once, 30)                               \
    CONFORMANCE_TEST(ident, at_most_once, 30)                                \
    CONFORMANCE_TEST(ident, redelivery_order, 30)                            \
    CONFORMANCE_TEST(ident, long_work, 30)                                   \
    CONFORMANCE_TEST(ident, survives_exit, 30)                               \
    CONFORMANCE_TEST(ident, unheard_lost, 30)                                \
    CONFORMANCE_TEST(ident, nack, 30)                                        \
    CONFORMANCE_TEST(ident, nack_not_ours, 30)                               \
    CONFORMANCE_TEST(ident, max_attempts, 30)

DQ_STRATEGY_MAP(CONFORMANCE)

/* The registered names as the identifiers say them, '_' written '-'. */
#define CONFORMANCE_NAME(ident) #ident,
static const char *const instantiated[] = {
    DQ_STRATEGY_MAP(CONFORMANCE_NAME) NULL,
};

static void dashed(const char *ident, char *buf, size_t len)
{
    snprintf(buf, len, "%s", ident);
    for (char *p = buf; *p; p++)
        if (*p == '_')
            *p = '-';
}

Test(conformance, every_strategy_instantiated)
{
    char want[64];

    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const char *name = dq_strategies[i]->name;
        bool found = false;
        for (size_t j = 0; instantiated[j] != NULL; j++) {
            dashed(instantiated[j], want, sizeof want);
            if (strcmp(want, name) == 0)
                found = true;
        }
        cr_expect(found, "strategy '%s' is registered but no identifier in "
                  "DQ_STRATEGY_MAP (strategies/registry.h) spells its name "
                  "('-' as '_')", name);
    }
    for (size_t j = 0; instantiated[j] != NULL; j++) {
        dashed(instantiated[j], want, sizeof want);
        cr_expect_not_null(dq_strategy_find(want),
                           "DQ_STRATEGY_MAP lists '%s', but no strategy is "
                           "named '%s'", instantiated[j], want);
    }
}
