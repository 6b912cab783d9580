/* test_streams.c -- what the conformance and batch suites cannot see in
 * the streams strategy (strategies/streams.c): which of a closing
 * consumer's entries it gives back.
 *
 *   close_gives_back_held_only  batch=4: A takes task-0 and closes with 3
 *                   more in its buffer, task-0 un-acked.  B gets the 3 at
 *                   once with attempt 1 (reading them into a buffer
 *                   delivered them to nobody), and task-0 only after A's
 *                   lease, attempt 2: a task handed out is the caller's,
 *                   close does not give it back.
 */
#include <criterion/criterion.h>
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
