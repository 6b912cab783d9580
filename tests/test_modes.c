/* test_modes.c -- the modes that run tutorial advice as written are wrong
 * (or costly) in exactly the documented way.
 *
 * Each mode is an option whose default keeps the strategy correct; the
 * conformance suite runs the defaults.  Here each one is switched on and
 * the test asserts what the tutorial's recipe really does:
 *   zpopmin due_check=0       hands out a task that is not yet due (C07),
 *                             and `dqlab run` counts early deliveries
 *   heap/wheel wake=broadcast with 8 waiting consumers, several times the
 *                             wake-ups per delivery of the leader-follower
 *                             default (C17's thundering herd)
 *   resolution_ms=1000        (naive, naive-checked, lua) stores
 *                             floor(due / 1 s): the task comes before its
 *                             due time (C25)
 *   lua cleanup_horizon_ms=N  deletes tasks due more than N ms ago that
 *                             nobody claimed yet: lost (C24)
 * Assertions rest on the mechanism, not on machine speed: a task due in
 * 60 s delivered at once, a floor()ed score delivered ~900 ms before its
 * due time, a ratio of wake-up counts with a wide margin, a consumer that
 * sleeps 20 ms per task against a 100 ms horizon.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../strategies/dq.h"
#include "../strategies/zscore.h"
#include "testlib.h"

/* ---- Running `dqlab run` ------------------------------------------------ */

typedef struct run_out {
    int status;   /* exit code */
    json_t *j;    /* the --json summary, NULL when none */
} run_out;

/* Runs `$DQLAB run --quiet --json --redis <test Redis> --fresh --queue
 * <unique> ARGS` and parses its stdout. */
static run_out dqlab_run(const char *tag, const char *args)
{
    const char *d = getenv("DQLAB");
    char cmd[2048], *buf = NULL;
    size_t len = 0;
    run_out o = {-1, NULL};
    json_error_t je;

    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    snprintf(cmd, sizeof cmd, "'%s' run --quiet --json --redis "
             "redis://127.0.0.1:%d --fresh --queue t-modes-%s-%ld %s", d,
             tl_redis_port(), tag, (long)getpid(), args);
    o.status = tl_popen_read(cmd, &buf, &len);
    if (len > 0)
        o.j = json_loads(buf, 0, &je);
    free(buf);
    cr_assert_not_null(o.j, "dqlab run %s: no JSON summary (exit %d)", args,
                       o.status);
    return o;
}

static long long jnum(const run_out *o, const char *key)
{
    json_t *v = json_object_get(o->j, key);
    cr_assert(json_is_integer(v), "summary has no integer '%s'", key);
    return (long long)json_integer_value(v);
}

/* ---- C07: zpopmin due_check=0 ------------------------------------------- */

Test(zpopmin, due_check_off_delivers_early, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "zpopmin", "due_check");
    cr_assert(tl_has_option(c.s, "due_check"), "zpopmin has no due_check");
    dq_queue *checked = tl_open(&c);
    int64_t due = dq_wall_us() / 1000 + 60000;
    tl_enqueue(checked, "task-0", "x", 1, due);

    /* The default pops the head, sees it is not due and puts it back. */
    tl_got g = tl_claim(checked, 200);
    cr_assert_eq(g.rc, DQ_EMPTY, "zpopmin (default) delivered %s, due in "
                 "60 s", g.id);
    cr_assert_geq(checked->counters.putbacks, 1, "no put-back counted");
    cr_assert_eq(dq_pending(checked), 1, "the put-back lost the task");

    /* The recipe as written: whatever ZPOPMIN returned is handed out. */
    tl_set_opt(&c, "due_check", "0");
    dq_queue *recipe = tl_open(&c);
    g = tl_claim(recipe, 2000);
    cr_assert_eq(g.rc, DQ_OK, "due_check=0 did not hand out the head");
    cr_assert_str_eq(g.id, "task-0");
    cr_assert_eq(g.due_ms, due, "due_ms %lld, enqueued %lld",
                 (long long)g.due_ms, (long long)due);
    cr_assert_lt(g.wall_us, (due - 50000) * 1000, "task due in 60 s was "
                 "not delivered early (%.0f ms before due)",
                 (double)(due * 1000 - g.wall_us) / 1e3);
    cr_assert_eq(recipe->counters.putbacks, 0, "due_check=0 put back");
    cr_assert_eq(dq_pending(recipe), 0, "the task is still pending");
    dq_close(recipe);
    dq_close(checked);
    tl_teardown(&c);
}

/* Through the harness: every task is enqueued 2-3 s ahead and popped at
 * once, so the checker counts them early and the run exits 1. */
Test(zpopmin, due_check_off_run_counts_early, .timeout = 60)
{
    run_out o = dqlab_run("zp", "--strategy zpopmin --opt due_check=0 "
                          "--tasks 40 --delay-ms 2000:3000");
    cr_expect_eq(o.status, 1, "exit %d, expected 1 (early deliveries)",
                 o.status);
    cr_expect_eq(jnum(&o, "lost"), 0);
    cr_expect_gt(jnum(&o, "early"), 20, "early %lld of 40",
                 jnum(&o, "early"));
    json_decref(o.j);
}

/* ---- C17: wake=broadcast, the herd baseline ------------------------------ */

typedef struct herd_consumer {
    dq_queue *q;
    int delivered, early, err_rc;
    char err[256];
} herd_consumer;

/* Claims until it gets a "stop-" task; counts deliveries and early ones. */
static void *herd_main(void *arg)
{
    herd_consumer *w = arg;

    for (;;) {
        dq_task t;
        memset(&t, 0, sizeof t);
        int rc = dq_claim(w->q, 10000, &t);
        if (rc != DQ_OK) {
            w->err_rc = rc == DQ_EMPTY ? DQ_EPROTO : rc;
            snprintf(w->err, sizeof w->err, "claim = %s: %s",
                     dq_result_name(rc), dq_errstr(w->q));
            return NULL;
        }
        w->delivered++;
        if (dq_wall_us() < t.due_ms * 1000)
            w->early++;
        bool stop = strncmp(t.id, "stop-", 5) == 0;
        dq_task_clear(&t);
        if (stop)
            return NULL;
    }
}

/* n consumers wait in claim while a producer enqueues ntasks tasks, each
 * due 10 ms after it is enqueued, 5 ms apart, then one "stop-" task per
 * consumer; returns wake-ups per delivery, summed over the consumers'
 * handles. */
static double herd_ratio(const char *strategy, const char *wake, int n,
                         int ntasks)
{
    enum { MAXC = 16 };
    tl_ctx c;
    char check[32];
    herd_consumer w[MAXC];
    pthread_t th[MAXC];

    cr_assert(n <= MAXC);
    snprintf(check, sizeof check, "herd-%s-%d", wake, n);
    tl_setup(&c, strategy, check);
    tl_set_opt(&c, "wake", wake);
    dq_queue *prod = tl_open_as(&c, "producer");
    memset(w, 0, sizeof w);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "consumer-%d", i);
        w[i].q = tl_open_as(&c, name);
        cr_assert_eq(pthread_create(&th[i], NULL, herd_main, &w[i]), 0);
    }
    dq_sleep_us(50000); /* let them reach their wait */
    for (int i = 0; i < ntasks + n; i++) {
        char id[32];
        if (i < ntasks)
            snprintf(id, sizeof id, "task-%d", i);
        else
            snprintf(id, sizeof id, "stop-%d", i - ntasks);
        tl_enqueue(prod, id, "x", 1, dq_wall_us() / 1000 + 10);
        if (i < ntasks)
            dq_sleep_us(5000);
    }
    uint64_t wakeups = 0;
    int delivered = 0, early = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        wakeups += w[i].q->counters.wakeups;
        delivered += w[i].delivered;
        early += w[i].early;
    }
    for (int i = 0; i < n; i++) {
        cr_assert_eq(w[i].err_rc, DQ_OK, "%s wake=%s: consumer-%d: %s",
                     strategy, wake, i, w[i].err);
        dq_close(w[i].q);
    }
    dq_close(prod);
    tl_teardown(&c);
    cr_assert_eq(delivered, ntasks + n, "%s wake=%s: %d deliveries of %d",
                 strategy, wake, delivered, ntasks + n);
    cr_assert_eq(early, 0, "%s wake=%s: %d early deliveries", strategy, wake,
                 early);
    double r = (double)wakeups / delivered;
    cr_log_info("%s wake=%s, %d consumers: %.2f wake-ups per delivery",
                strategy, wake, n, r);
    return r;
}

static void check_herd(const char *strategy)
{
    double leader = herd_ratio(strategy, "leader", 8, 60);
    double broadcast = herd_ratio(strategy, "broadcast", 8, 60);
    cr_assert_geq(broadcast, 3 * leader, "%s, 8 consumers: broadcast %.2f "
                  "wake-ups per delivery, leader %.2f: no herd to avoid",
                  strategy, broadcast, leader);
}

Test(heap, wake_broadcast_herd, .timeout = 60) { check_herd("heap"); }
Test(wheel, wake_broadcast_herd, .timeout = 60) { check_herd("wheel"); }

/* The mode belongs to the queue: a handle asking for the other is
 * refused, naming the option. */
static void check_wake_fixed(const char *strategy)
{
    tl_ctx c;
    tl_setup(&c, strategy, "wake_fixed");
    dq_queue *q = tl_open(&c);
    tl_set_opt(&c, "wake", "broadcast");
    dq_config cfg = tl_config(&c, NULL);
    dq_queue *q2 = NULL;
    char err[256] = "";
    int rc = dq_open(c.s, &cfg, &q2, err, sizeof err);
    cr_assert_eq(rc, DQ_EINVAL, "%s: a wake=broadcast handle on a "
                 "wake=leader queue: %s", strategy, dq_result_name(rc));
    cr_assert_null(q2);
    cr_assert(strstr(err, "wake=broadcast") != NULL, "message: %s", err);
    dq_close(q);
    c.nopts = 0;
    tl_teardown(&c);
}

Test(heap, wake_fixed_per_queue) { check_wake_fixed("heap"); }
Test(wheel, wake_fixed_per_queue) { check_wake_fixed("wheel"); }

/* ---- C25: resolution_ms=1000 --------------------------------------------- */

Test(zscore, score_floor)
{
    cr_assert_eq(dq_zs_score_ms(1999, 1000), 1000);
    cr_assert_eq(dq_zs_score_ms(2000, 1000), 2000);
    cr_assert_eq(dq_zs_score_ms(0, 1000), 0);
    cr_assert_eq(dq_zs_score_ms(-1, 1000), -1000);
    cr_assert_eq(dq_zs_score_ms(-1000, 1000), -1000);
    cr_assert_eq(dq_zs_score_ms(-1001, 1000), -2000);
    cr_assert_eq(dq_zs_score_ms(1733000123456, 1), 1733000123456);
    cr_assert_eq(dq_zs_score_ms(1733000123456, 1000), 1733000123000);
}

/* Three tasks due 900, 800 and 700 ms past a whole second S (at least a
 * second ahead), written through enqueue, enqueue_many and reschedule:
 * each is stored at S and handed out as soon as S has come, before its
 * due time. */
static void check_resolution(const char *strategy)
{
    tl_ctx c;
    tl_setup(&c, strategy, "resolution");
    cr_assert(tl_has_option(c.s, "resolution_ms"), "%s has no resolution_ms",
              strategy);
    tl_set_opt(&c, "resolution_ms", "1000");
    tl_set_opt(&c, "poll_ms", "10");
    dq_queue *q = tl_open(&c);
    int64_t s = (dq_wall_us() / 1000000 + 2) * 1000;
    int64_t due[3] = {s + 900, s + 800, s + 700};

    tl_enqueue(q, "task-0", "x", 1, due[0]);
    dq_enqueue_item it = {"task-1", "x", 1, due[1]};
    cr_assert_eq(dq_enqueue_many(q, &it, 1), DQ_OK, "%s", dq_errstr(q));
    tl_enqueue(q, "task-2", "x", 1, s + 600000);
    cr_assert_eq(dq_reschedule(q, "task-2", due[2]), DQ_OK, "%s",
                 dq_errstr(q));
    for (int k = 0; k < 3; k++) {
        tl_got g = tl_claim(q, 5000);
        cr_assert_eq(g.rc, DQ_OK, "%s: claim %d found nothing", strategy, k);
        int i = tl_task_index(g.id, 3);
        cr_assert_geq(i, 0, "%s: unexpected id %s", strategy, g.id);
        cr_assert_eq(g.due_ms, s, "%s: %s stored at %lld, not floor(%lld "
                     "/ 1 s) = %lld", strategy, g.id, (long long)g.due_ms,
                     (long long)due[i], (long long)s);
        cr_assert_geq(g.wall_us, s * 1000, "%s: %s delivered before its "
                      "stored score", strategy, g.id);
        cr_assert_lt(g.wall_us, due[i] * 1000, "%s: %s (due %lld) was not "
                     "early: delivered %.0f ms after its due time", strategy,
                     g.id, (long long)due[i],
                     (double)(g.wall_us - due[i] * 1000) / 1e3);
    }
    dq_close(q);
    tl_teardown(&c);
}

Test(naive, resolution_s_early, .timeout = 30) { check_resolution("naive"); }
Test(naive_checked, resolution_s_early, .timeout = 30)
{
    check_resolution("naive-checked");
}
Test(lua, resolution_s_early, .timeout = 30) { check_resolution("lua"); }

/* ---- C24: lua cleanup_horizon_ms --------------------------------------- */

/* HLEN of the queue's payload hash, through a connection of the test's. */
static long long payload_count(const tl_ctx *c)
{
    redisContext *rc = redisConnect("127.0.0.1", c->port);
    cr_assert(rc != NULL && !rc->err, "connect to the test Redis");
    redisReply *r = redisCommand(rc, "HLEN dq:{%s}:p", c->queue);
    cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
    long long n = r->integer;
    freeReplyObject(r);
    redisFree(rc);
    return n;
}

Test(lua, cleanup_horizon_loses_lagging, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "lua", "cleanup");
    cr_assert(tl_has_option(c.s, "cleanup_horizon_ms"));
    int64_t now = dq_wall_us() / 1000;

    /* Without the cleanup a task 5 s overdue is delivered. */
    dq_queue *plain = tl_open(&c);
    tl_enqueue(plain, "old-control", "x", 1, now - 5000);
    tl_got g = tl_claim(plain, 1000);
    cr_assert_eq(g.rc, DQ_OK, "a task 5 s overdue was not delivered");
    dq_close(plain);

    /* With a 1 s horizon the first poll round deletes what is older. */
    tl_set_opt(&c, "cleanup_horizon_ms", "1000");
    dq_queue *q = tl_open(&c);
    char id[32];
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "task-%d", i);
        tl_enqueue(q, id, "x", 1, now - 5000 - i);      /* fell behind */
    }
    for (int i = 5; i < 8; i++) {
        snprintf(id, sizeof id, "task-%d", i);
        tl_enqueue(q, id, "x", 1, now - 100 + i);       /* within 1 s */
    }
    tl_enqueue(q, "task-8", "x", 1, now + 300);         /* not yet due */
    int seen[9] = {0};
    for (int k = 0; k < 4; k++) {
        g = tl_claim(q, 3000);
        cr_assert_eq(g.rc, DQ_OK, "claim %d of the 4 tasks within the "
                     "horizon found nothing", k + 1);
        int i = tl_task_index(g.id, 9);
        cr_assert_geq(i, 5, "the cleanup left %s (5 s overdue) to be "
                      "delivered", g.id);
        seen[i]++;
    }
    for (int i = 5; i < 9; i++)
        cr_assert_eq(seen[i], 1, "task-%d delivered %d times", i, seen[i]);
    g = tl_claim(q, 200);
    cr_assert_eq(g.rc, DQ_EMPTY, "extra delivery %s", g.id);
    cr_assert_eq(dq_pending(q), 0, "the overdue tasks are still pending");
    cr_assert_eq(payload_count(&c), 0, "the cleanup left the payloads of "
                 "the tasks it removed");
    dq_close(q);
    c.nopts = 0;
    tl_teardown(&c);
}

/* Through the harness: one consumer working 20 ms per task on 40 tasks
 * due at once cannot take them within a 100 ms horizon; the cleanup
 * deletes the rest and the checker counts them lost. */
Test(lua, cleanup_horizon_run_counts_lost, .timeout = 60)
{
    run_out o = dqlab_run("lua-cleanup", "--strategy lua --opt "
                          "cleanup_horizon_ms=100 --opt poll_ms=10 --tasks "
                          "40 --delay-ms 0 --work-us 20000 --consumers 1");
    cr_expect_eq(o.status, 1, "exit %d, expected 1 (lost tasks)", o.status);
    cr_expect_gt(jnum(&o, "lost"), 0, "the cleanup lost nothing");
    cr_expect_eq(jnum(&o, "lost") + jnum(&o, "delivered"), 40);
    cr_expect_eq(jnum(&o, "duplicates"), 0);
    json_decref(o.j);
}
