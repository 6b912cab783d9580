/* test_streams.c -- what the conformance and batch suites cannot see in
 * the streams strategy (strategies/streams.c): which of a closing
 * consumer's entries it gives back, where and when an expired lease's
 * task comes back, the late ack and nack of a lease that ran out while
 * nobody took the task again, and its blocking read.
 *
 *   close_gives_back_held_only  batch=4: A takes task-0 and closes with 3
 *                   more in its buffer, task-0 un-acked.  B gets the 3 at
 *                   once with attempt 1 (reading them into a buffer
 *                   delivered them to nobody), and task-0 only after A's
 *                   lease, attempt 2: a task handed out is the caller's,
 *                   close does not give it back.
 *   back_at_expiry  poll_ms=5000, lease_ms=300: a task whose holder closed
 *                   without acking comes to a waiting consumer soon after
 *                   the lease ran out, not at its next poll: the wait ends
 *                   at the oldest lease's expiry.
 *   late_ack_requeued   X's lease on task-0 runs out; Y's claim moves the
 *                   entry to the stream's tail and gets task-1.  X's late
 *                   ack is accepted (nobody took task-0 again) and ends
 *                   the task: Y gets task-2 and nothing more.
 *   late_nack_requeued  the same, X nacks instead: Y gets task-2, then
 *                   task-0 with attempt 2.
 *   expiry_in_turn  X holds task-0 with a 200 ms lease; "early" falls due
 *                   100 ms after X's claim, "late" 350 ms after.  Y,
 *                   claiming only at 500 ms, gets early, task-0, late: an
 *                   expired lease counts as due again at its expiry,
 *                   merged with the due tasks of the ZSet.
 *   block_on_time   with the stream and its group in place (an empty
 *                   stream, so the claim blocks in XREADGROUP ... BLOCK),
 *                   claims of 10, 50 and 250 ms come back within their
 *                   timeout + 20 ms (median of 5): Redis 7.0 ends such a
 *                   block only on its next cron tick, up to 100 ms late,
 *                   unless woken (rconn.h, dq_redis_block).
 *   block_woken_by_move  poll_ms=5000: a consumer blocked in its claim is
 *                   woken by another consumer's mover, long before its
 *                   poll interval.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../strategies/dq.h"
#include "testlib.h"

/* Claims (timeout_ms at most) and expects task `want`; returns the task,
 * not acked (the caller acks and clears it). */
static dq_task claim_expect(dq_queue *q, int64_t timeout_ms, const char *want,
                            const char *why)
{
    dq_task t;
    memset(&t, 0, sizeof t);
    int rc = dq_claim(q, timeout_ms, &t);
    cr_assert_eq(rc, DQ_OK, "streams: claim %s: %s: %s", why,
                 dq_result_name(rc), rc == DQ_EMPTY ? "nothing in time"
                                                    : dq_errstr(q));
    cr_assert_str_eq(t.id, want, "streams: claim %s gave %s, expected %s",
                     why, t.id, want);
    return t;
}

static void ack_ok(dq_queue *q, dq_task *t)
{
    int rc = dq_ack(q, t);
    cr_assert_eq(rc, DQ_OK, "streams: ack of %s = %s: %s", t->id,
                 dq_result_name(rc), dq_errstr(q));
    dq_task_clear(t);
}

/* Enqueues task-0 .. task-<n-1> due in the last few ms (task-0 earliest),
 * payload = id. */
static void enqueue_due_now(dq_queue *q, int n)
{
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "task-%d", i);
        tl_enqueue(q, id, id, strlen(id), now - n + i);
    }
}

Test(streams, close_gives_back_held_only, .timeout = 30)
{
    enum { LEASE_MS = 2000 };
    tl_ctx c;
    tl_setup(&c, "streams", "held_only");
    tl_set_opt(&c, "batch", "4");
    tl_set_opt(&c, "lease_ms", "2000");
    dq_queue *prod = tl_open_as(&c, "producer");
    enqueue_due_now(prod, 4);
    dq_queue *a = tl_open_as(&c, "consumer-a");
    dq_task t = claim_expect(a, 3000, "task-0", "by A");
    cr_assert_eq(t.attempt, 1, "streams: first delivery has attempt %d",
                 t.attempt);
    dq_task_clear(&t);
    dq_close(a); /* task-0 handed out, not acked; task-1..3 buffered */
    dq_queue *b = tl_open_as(&c, "consumer-b");
    int64_t p = dq_pending(b);
    cr_assert_eq(p, 3, "streams: pending = %lld after A closed with 3 "
                 "buffered (%s)", (long long)p, p < 0 ? dq_errstr(b) : "");
    for (int i = 1; i <= 3; i++) {
        char want[32];
        snprintf(want, sizeof want, "task-%d", i);
        /* Well within A's lease: given back, not taken over. */
        dq_task u = claim_expect(b, LEASE_MS / 2, want, "of a given-back "
                                 "task by B");
        cr_assert_eq(u.attempt, 1, "streams: %s, given back unread, came "
                     "back with attempt %d", u.id, u.attempt);
        ack_ok(b, &u);
    }
    tl_got g = tl_claim(b, 200);
    cr_assert_eq(g.rc, DQ_EMPTY, "streams: %s came back before A's lease "
                 "ran out (a handed-out task was given back)", g.id);
    dq_task u = claim_expect(b, LEASE_MS + 3000, "task-0", "after A's lease");
    cr_assert_eq(u.attempt, 2, "streams: task-0 after A's lease has attempt "
                 "%d", u.attempt);
    ack_ok(b, &u);
    dq_close(b);
    dq_close(prod);
    tl_teardown(&c);
}

Test(streams, back_at_expiry, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "streams", "at_expiry");
    tl_set_opt(&c, "poll_ms", "5000");
    tl_set_opt(&c, "lease_ms", "300");
    dq_queue *a = tl_open_as(&c, "consumer-a");
    tl_enqueue(a, "task-0", "0", 1, dq_wall_us() / 1000);
    dq_task t = claim_expect(a, 3000, "task-0", "by A");
    dq_task_clear(&t);
    dq_close(a); /* no ack */
    dq_queue *b = tl_open_as(&c, "consumer-b");
    int64_t t0 = dq_mono_us();
    t = claim_expect(b, 4000, "task-0", "by B after A's lease");
    int64_t took_ms = (dq_mono_us() - t0) / 1000;
    cr_assert_lt(took_ms, 2000, "streams: B (poll_ms=5000) got task-0 %lld "
                 "ms after A closed with a 300 ms lease", (long long)took_ms);
    cr_assert_eq(t.attempt, 2, "streams: redelivery has attempt %d",
                 t.attempt);
    ack_ok(b, &t);
    dq_close(b);
    tl_teardown(&c);
}

/* X takes task-0 of three and sits on it past a 200 ms lease; Y's first
 * claim then gets task-1 and moves task-0's entry to the tail of the
 * stream, unread.  Returns X's task; x and y are opened on c. */
static dq_task lease_runs_out(tl_ctx *c, dq_queue **x, dq_queue **y)
{
    enum { LEASE_MS = 200 };
    dq_queue *prod = tl_open_as(c, "producer");
    enqueue_due_now(prod, 3);
    dq_close(prod);
    *x = tl_open_as(c, "consumer-x");
    *y = tl_open_as(c, "consumer-y");
    dq_task held = claim_expect(*x, 3000, "task-0", "by X");
    dq_sleep_us((LEASE_MS + 200) * 1000);
    dq_task t = claim_expect(*y, 3000, "task-1", "by Y after X's lease");
    ack_ok(*y, &t);
    return held;
}

Test(streams, late_ack_requeued, .timeout = 30)
{
    tl_ctx c;
    dq_queue *x, *y;
    tl_setup(&c, "streams", "late_ack");
    tl_set_opt(&c, "lease_ms", "200");
    dq_task held = lease_runs_out(&c, &x, &y);
    int rc = dq_ack(x, &held);
    cr_assert_eq(rc, DQ_OK, "streams: X's late ack of task-0, requeued and "
                 "not taken again = %s: %s", dq_result_name(rc),
                 dq_errstr(x));
    rc = dq_ack(x, &held);
    cr_assert_eq(rc, DQ_ENOTFOUND, "streams: X's second ack = %s",
                 dq_result_name(rc));
    dq_task_clear(&held);
    dq_task t = claim_expect(y, 3000, "task-2", "by Y after X's late ack");
    ack_ok(y, &t);
    tl_got g = tl_claim(y, 500);
    cr_assert_eq(g.rc, DQ_EMPTY, "streams: %s delivered again after X's "
                 "late ack", g.id);
    dq_close(y);
    dq_close(x);
    tl_teardown(&c);
}

Test(streams, late_nack_requeued, .timeout = 30)
{
    tl_ctx c;
    dq_queue *x, *y;
    tl_setup(&c, "streams", "late_nack");
    tl_set_opt(&c, "lease_ms", "200");
    dq_task held = lease_runs_out(&c, &x, &y);
    int rc = dq_nack(x, &held, 0);
    cr_assert_eq(rc, DQ_OK, "streams: X's late nack of task-0, requeued and "
                 "not taken again = %s: %s", dq_result_name(rc),
                 dq_errstr(x));
    rc = dq_ack(x, &held);
    cr_assert_eq(rc, DQ_ENOTFOUND, "streams: X's ack after its nack = %s",
                 dq_result_name(rc));
    dq_task_clear(&held);
    dq_task t = claim_expect(y, 3000, "task-2", "by Y after X's late nack");
    ack_ok(y, &t);
    t = claim_expect(y, 3000, "task-0", "of the nacked task by Y");
    cr_assert_eq(t.attempt, 2, "streams: task-0 after one delivery and a "
                 "nack has attempt %d", t.attempt);
    ack_ok(y, &t);
    tl_got g = tl_claim(y, 500);
    cr_assert_eq(g.rc, DQ_EMPTY, "streams: extra delivery %s", g.id);
    dq_close(y);
    dq_close(x);
    tl_teardown(&c);
}

Test(streams, expiry_in_turn, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "streams", "in_turn");
    tl_set_opt(&c, "lease_ms", "200");
    dq_queue *x = tl_open_as(&c, "consumer-x");
    dq_queue *y = tl_open_as(&c, "consumer-y");
    tl_enqueue(x, "task-0", "0", 1, dq_wall_us() / 1000);
    dq_task held = claim_expect(x, 3000, "task-0", "by X");
    int64_t t0_ms = dq_wall_us() / 1000; /* after the server's delivery */
    tl_enqueue(x, "early", "e", 1, t0_ms + 100);
    tl_enqueue(x, "late", "l", 1, t0_ms + 350);
    dq_sleep_us((t0_ms + 500) * 1000 - dq_wall_us());
    static const char *const want[] = {"early", "task-0", "late"};
    for (int k = 0; k < 3; k++) {
        dq_task t = claim_expect(y, 3000, want[k], "by Y, all three due");
        ack_ok(y, &t);
    }
    dq_task_clear(&held);
    dq_close(y);
    dq_close(x);
    tl_teardown(&c);
}

/* One task through q, so that the stream and its group exist (the stream
 * stays, empty, after the ack's XDEL). */
static void make_stream(dq_queue *q)
{
    tl_enqueue(q, "warm-up", "w", 1, dq_wall_us() / 1000);
    tl_got g = tl_claim(q, 3000);
    cr_assert_eq(g.rc, DQ_OK, "streams: the warm-up task did not come");
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* As the conformance check claim_timeout: dq.h's bound (the timeout plus
 * one round trip) with 20 ms for scheduling on a shared machine, median
 * of 5 so that one descheduled sample does not decide. */
#define OVERRUN_MS 20
#define SAMPLES 5

Test(streams, block_on_time, .timeout = 30)
{
    static const int64_t timeouts_ms[] = {10, 50, 250};
    tl_ctx c;
    tl_setup(&c, "streams", "block_on_time");
    dq_queue *q = tl_open(&c);
    make_stream(q);
    for (size_t k = 0; k < sizeof timeouts_ms / sizeof timeouts_ms[0]; k++) {
        int64_t tmo = timeouts_ms[k], took_us[SAMPLES];
        for (int i = 0; i < SAMPLES; i++) {
            int64_t t0 = dq_mono_us();
            tl_got g = tl_claim(q, tmo);
            took_us[i] = dq_mono_us() - t0;
            cr_assert_eq(g.rc, DQ_EMPTY, "streams: claim on an empty "
                         "stream gave %s", g.id);
        }
        qsort(took_us, SAMPLES, sizeof took_us[0], cmp_i64);
        cr_assert_leq(took_us[SAMPLES / 2], (tmo + OVERRUN_MS) * 1000,
                      "streams: claim(%lld ms) blocked on an empty stream "
                      "took %.1f ms (median of %d; fastest %.1f, slowest "
                      "%.1f); allowed: the timeout + %d ms", (long long)tmo,
                      (double)took_us[SAMPLES / 2] / 1e3, SAMPLES,
                      (double)took_us[0] / 1e3,
                      (double)took_us[SAMPLES - 1] / 1e3, OVERRUN_MS);
    }
    dq_close(q);
    tl_teardown(&c);
}

typedef struct waiter {
    dq_queue *q;
    tl_got got;
} waiter;

static void *wait_claim(void *arg)
{
    waiter *w = arg;
    w->got = tl_claim(w->q, 4000);
    return NULL;
}

Test(streams, block_woken_by_move, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "streams", "woken");
    tl_set_opt(&c, "poll_ms", "5000");
    dq_queue *a = tl_open_as(&c, "consumer-a");
    make_stream(a);
    waiter w = {tl_open_as(&c, "consumer-b"), {0}};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, wait_claim, &w), 0);
    dq_sleep_us(200 * 1000); /* B is blocked by now, or soon */
    enqueue_due_now(a, 2);
    /* A's mover moves both into the stream and A reads task-0; task-1's
     * XADD wakes B. */
    tl_got g = tl_claim(a, 3000);
    cr_assert_eq(g.rc, DQ_OK, "streams: A got nothing");
    pthread_join(th, NULL);
    cr_assert_eq(w.got.rc, DQ_OK, "streams: B's claim(4000 ms) got nothing "
                 "although A moved a second task");
    cr_assert_lt(w.got.elapsed_ms, 2000, "streams: B, blocked with "
                 "poll_ms=5000, took %lld ms to get %s after A's move",
                 (long long)w.got.elapsed_ms, w.got.id);
    dq_close(w.q);
    dq_close(a);
    tl_teardown(&c);
}
