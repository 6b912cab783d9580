/* test_wheel.c -- what the conformance suite cannot see in the timing wheel
 * (strategies/wheel.c): its cascades across levels, its tick, and handles
 * whose clocks disagree.
 *
 *   model_*        a randomised model check without sleeping: tasks due
 *                  from the far past to 2^53 ms (every wheel level, ties,
 *                  the range's ends), then a sequence of handles whose
 *                  clocks are offset ever further ahead -- just before and
 *                  at due times, and jumps of milliseconds to decades --
 *                  each draining what is due with claim(0); now and then
 *                  tasks are added, cancelled and rescheduled against the
 *                  advanced wheel.  Asserts: nothing before its due time
 *                  by the claiming handle's clock, everything due by the
 *                  time a claim comes back empty, each task once, due
 *                  order (ties in insertion order), dq_pending exact.  The
 *                  heap runs the same model as the reference.
 *   behind_clock   a handle whose clock runs 10 s behind the one that
 *                  advanced the wheel still waits for the due time by its
 *                  own clock.
 *   tick_wakeups   tick_ms=1000: nine tasks due at different milliseconds
 *                  of one tick wake a waiting consumer a few times, not
 *                  nine (the leader sleeps to the tick's last ms).
 *   tick_mismatch  a second handle with another tick_ms is refused.
 *   crowded_slot   300 tasks in one slot (ten chunks of entries): cancel
 *                  and reschedule from chunks other than the newest, then
 *                  a cascade of what is left through every level; each
 *                  task once, in insertion order, dq_pending exact.
 *   block_class    small tasks whose ids differ in length get blocks of
 *                  one malloc size class (the freed block of a claim is
 *                  what the next enqueue reuses), with payload and id
 *                  intact.
 */
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../strategies/dq.h"
#include "testlib.h"

/* ---- The model check --------------------------------------------------- */

enum { MODEL_MAX = 4000 };

typedef struct mtask {
    int64_t due_ms;
    bool live;        /* enqueued, not cancelled */
    bool delivered;
} mtask;

typedef struct model {
    tl_ctx c;
    mtask t[MODEL_MAX];
    int n;
    unsigned seed;
    int64_t last_due;  /* order check: last delivery since a change */
    int last_index;
} model;

static uint64_t rnd64(unsigned *seed)
{
    uint64_t x = 0;
    for (int i = 0; i < 4; i++)
        x = (x << 16) ^ (uint64_t)(rand_r(seed) & 0xffff);
    return x;
}

static int64_t clamp_due(int64_t d)
{
    return d > DQ_DUE_MAX_MS ? DQ_DUE_MAX_MS
           : d < -DQ_DUE_MAX_MS ? -DQ_DUE_MAX_MS : d;
}

/* A due time around `at`: a tie with an earlier task, the past, or a delay
 * from milliseconds to decades (every level of the wheel). */
static int64_t draw_due(model *m, int64_t at)
{
    static const int64_t span[] = {5, 300, 20000, 1800000, 172800000,
                                   INT64_C(17280000000),
                                   INT64_C(630000000000)};
    unsigned r = (unsigned)rand_r(&m->seed) % 10;
    if (r == 0 && m->n > 0)
        return m->t[rand_r(&m->seed) % m->n].due_ms;
    if (r == 1)
        return clamp_due(at - (int64_t)(rnd64(&m->seed) %
                                        INT64_C(31536000000)));
    int64_t s = span[rand_r(&m->seed) % (sizeof span / sizeof span[0])];
    return clamp_due(at + 1 + (int64_t)(rnd64(&m->seed) % (uint64_t)s));
}

static void model_enqueue(model *m, dq_queue *q, int64_t due)
{
    char id[32];
    cr_assert_lt(m->n, MODEL_MAX);
    snprintf(id, sizeof id, "task-%d", m->n);
    tl_enqueue(q, id, id, strlen(id), due);
    m->t[m->n++] = (mtask){due, true, false};
    m->last_due = INT64_MIN;  /* a task due in the past may come next */
}

/* A handle whose clock reads about at_ms (ms since the epoch) now. */
static dq_queue *open_at(model *m, int64_t at_ms)
{
    dq_config cfg = tl_config(&m->c, "stepper");
    cfg.clock_offset_us = at_ms * 1000 - dq_wall_us();
    dq_queue *q = NULL;
    char err[256] = "";
    int rc = dq_open(m->c.s, &cfg, &q, err, sizeof err);
    cr_assert_eq(rc, DQ_OK, "%s: dq_open = %s: %s", m->c.s->name,
                 dq_result_name(rc), err);
    return q;
}

/* Claims with timeout 0 until empty, checking every delivery. */
static void model_drain(model *m, dq_queue *q)
{
    const char *name = m->c.s->name;
    for (;;) {
        int64_t before_us = dq_now_us(q);
        dq_task t;
        memset(&t, 0, sizeof t);
        int rc = dq_claim(q, 0, &t);
        int64_t after_us = dq_now_us(q);
        if (rc == DQ_EMPTY) {
            for (int i = 0; i < m->n; i++)
                cr_assert(!m->t[i].live || m->t[i].delivered ||
                              m->t[i].due_ms * 1000 > before_us,
                          "%s (seed %u): task-%d due %lld not delivered; "
                          "claim(0) at handle time %lld us came back empty",
                          name, m->seed, i, (long long)m->t[i].due_ms,
                          (long long)before_us);
            return;
        }
        cr_assert_eq(rc, DQ_OK, "%s: claim = %s: %s", name,
                     dq_result_name(rc), dq_errstr(q));
        int i = tl_task_index(t.id, m->n);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", name, t.id);
        mtask *x = &m->t[i];
        cr_assert(x->live && !x->delivered, "%s (seed %u): task-%d "
                  "delivered %s", name, m->seed, i,
                  x->delivered ? "twice" : "after its cancel");
        cr_assert_eq(t.due_ms, x->due_ms, "%s: task-%d came with due %lld, "
                     "enqueued %lld", name, i, (long long)t.due_ms,
                     (long long)x->due_ms);
        cr_assert_leq(x->due_ms * 1000, after_us, "%s (seed %u): task-%d "
                      "due %lld delivered at handle time %lld us", name,
                      m->seed, i, (long long)x->due_ms, (long long)after_us);
        cr_assert(x->due_ms > m->last_due ||
                      (x->due_ms == m->last_due && i > m->last_index),
                  "%s (seed %u): task-%d (due %lld) after task-%d (due %lld)",
                  name, m->seed, i, (long long)x->due_ms, m->last_index,
                  (long long)m->last_due);
        cr_assert(t.payload_len == strlen(t.id) &&
                      memcmp(t.payload, t.id, t.payload_len) == 0,
                  "%s: task-%d payload differs", name, i);
        x->delivered = true;
        m->last_due = x->due_ms;
        m->last_index = i;
        dq_task_clear(&t);
    }
}

static int model_left(const model *m)
{
    int left = 0;
    for (int i = 0; i < m->n; i++)
        left += m->t[i].live && !m->t[i].delivered;
    return left;
}

/* A random live, undelivered task, or -1. */
static int model_pick(model *m)
{
    for (int tries = 0; tries < 50; tries++) {
        int i = rand_r(&m->seed) % m->n;
        if (m->t[i].live && !m->t[i].delivered)
            return i;
    }
    return -1;
}

/* Adds, cancels and reschedules a few tasks through q (clock at at_ms). */
static void model_mutate(model *m, dq_queue *q, int64_t at_ms)
{
    const char *name = m->c.s->name;
    for (int k = 0; k < 20 && m->n < MODEL_MAX; k++)
        model_enqueue(m, q, draw_due(m, at_ms));
    for (int k = 0; k < 3; k++) {
        int i = model_pick(m);
        char id[32];
        if (i < 0)
            break;
        snprintf(id, sizeof id, "task-%d", i);
        int rc = dq_cancel(q, id);
        cr_assert_eq(rc, DQ_OK, "%s: cancel(%s) = %s: %s", name, id,
                     dq_result_name(rc), dq_errstr(q));
        m->t[i].live = false;
        i = model_pick(m);
        if (i < 0)
            break;
        snprintf(id, sizeof id, "task-%d", i);
        int64_t due = draw_due(m, at_ms);
        rc = dq_reschedule(q, id, due);
        cr_assert_eq(rc, DQ_OK, "%s: reschedule(%s) = %s: %s", name, id,
                     dq_result_name(rc), dq_errstr(q));
        m->t[i].due_ms = due;
    }
    m->last_due = INT64_MIN;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void check_model(const char *name, const char *tick, const char *batch)
{
    enum { N0 = 1500, NSTEP = 700 };
    static model m;   /* large: off the stack */
    memset(&m, 0, sizeof m);
    tl_setup(&m.c, name, "model");
    if (tick != NULL)
        tl_set_opt(&m.c, "tick_ms", tick);
    if (batch != NULL)
        tl_set_opt(&m.c, "batch", batch);
    m.seed = (unsigned)getpid();
    m.last_due = INT64_MIN;
    int64_t base = dq_wall_us() / 1000;

    /* The keeper holds the queue open from first enqueue to last claim. */
    dq_queue *keeper = open_at(&m, base);
    model_enqueue(&m, keeper, DQ_DUE_MAX_MS);
    model_enqueue(&m, keeper, -DQ_DUE_MAX_MS);
    while (m.n < N0)
        model_enqueue(&m, keeper, draw_due(&m, base));

    /* Steps: just before and at ~300 due times, and ~300 log-uniform jumps
     * up to 30 years; then the end of the range. */
    static int64_t step[NSTEP + 1];
    int ns = 0;
    for (int k = 0; k < 150; k++) {
        int64_t d = m.t[rand_r(&m.seed) % m.n].due_ms;
        if (d > base && d < DQ_DUE_MAX_MS) {
            step[ns++] = d - 1;
            step[ns++] = d;
        }
    }
    while (ns < NSTEP) {
        int bits = 1 + rand_r(&m.seed) % 40;  /* up to 2^40 ms: 34 years */
        step[ns++] = base + (int64_t)(rnd64(&m.seed) %
                                      (UINT64_C(1) << bits));
    }
    qsort(step, (size_t)ns, sizeof step[0], cmp_i64);
    step[ns++] = DQ_DUE_MAX_MS;

    for (int k = 0; k < ns; k++) {
        dq_queue *q = open_at(&m, step[k]);
        model_drain(&m, q);
        if (k % 10 == 5 && k + 1 < ns) {
            model_mutate(&m, q, step[k]);
            model_drain(&m, q);
        }
        int64_t p = dq_pending(q);
        cr_assert_eq(p, model_left(&m), "%s (seed %u): pending = %lld at "
                     "step %d, the model has %d", name, m.seed, (long long)p,
                     k, model_left(&m));
        dq_close(q);
    }
    cr_assert_eq(model_left(&m), 0, "%s: %d tasks left at the end", name,
                 model_left(&m));
    dq_close(keeper);
    tl_teardown(&m.c);
}

Test(wheel, model_tick1, .timeout = 120) { check_model("wheel", "1", NULL); }
Test(wheel, model_tick7_batch4, .timeout = 120)
{
    check_model("wheel", "7", "4");
}
Test(wheel, model_tick1000, .timeout = 120)
{
    check_model("wheel", "1000", NULL);
}
Test(heap, model, .timeout = 120) { check_model("heap", NULL, NULL); }

/* ---- Clocks and ticks -------------------------------------------------- */

static dq_queue *open_skewed(tl_ctx *c, const char *who, int64_t offset_us)
{
    dq_config cfg = tl_config(c, who);
    cfg.clock_offset_us = offset_us;
    dq_queue *q = NULL;
    char err[256] = "";
    int rc = dq_open(c->s, &cfg, &q, err, sizeof err);
    cr_assert_eq(rc, DQ_OK, "wheel: dq_open = %s: %s", dq_result_name(rc),
                 err);
    return q;
}

/* The fast handle moves the wheel 10 s ahead; a task due in 1 s is ready
 * by the wheel, but the slow handle (real clock) must still wait for it. */
Test(wheel, behind_clock, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "wheel", "behind_clock");
    dq_queue *fast = open_skewed(&c, "fast", 10 * 1000000LL);
    dq_queue *slow = open_skewed(&c, "slow", 0);
    tl_got g = tl_claim(fast, 0);
    cr_assert_eq(g.rc, DQ_EMPTY);
    int64_t due = dq_wall_us() / 1000 + 1000;
    tl_enqueue(slow, "task-0", "s", 1, due);
    g = tl_claim(slow, 300);
    cr_assert_eq(g.rc, DQ_EMPTY, "wheel: the slow handle got %s 1 s before "
                 "its due time by its own clock", g.id);
    g = tl_claim(slow, 5000);
    cr_assert_eq(g.rc, DQ_OK, "wheel: the slow handle never got task-0");
    tl_assert_not_early(c.s, &g, due);
    /* The fast handle, for which it is long due, takes one at once. */
    tl_enqueue(slow, "task-1", "f", 1, dq_wall_us() / 1000 + 1000);
    g = tl_claim(fast, 0);
    cr_assert_eq(g.rc, DQ_OK, "wheel: the fast handle did not get task-1, "
                 "due 9 s ago by its clock");
    dq_close(slow);
    dq_close(fast);
    tl_teardown(&c);
}

/* tick_ms=1000: nine tasks due 100 ms apart inside one tick.  A waiting
 * consumer sleeps to the tick's last millisecond (or to a cascade) and
 * then finds all nine due: a few wake-ups, where tick_ms=1 would wake
 * once per task.  None early, all within a tick (+ slack) of due. */
Test(wheel, tick_wakeups, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "wheel", "tick_wakeups");
    tl_set_opt(&c, "tick_ms", "1000");
    dq_queue *prod = tl_open_as(&c, "producer");
    dq_queue *cons = tl_open_as(&c, "consumer");
    int64_t tick0 = (dq_wall_us() / 1000 / 1000 + 2) * 1000;
    for (int i = 0; i < 9; i++) {
        char id[32];
        snprintf(id, sizeof id, "task-%d", i);
        tl_enqueue(prod, id, "w", 1, tick0 + 100 * (i + 1));
    }
    for (int i = 0; i < 9; i++) {
        tl_got g = tl_claim(cons, 5000);
        cr_assert_eq(g.rc, DQ_OK, "wheel: claim %d of 9 found nothing", i);
        cr_assert_eq(tl_task_index(g.id, 9), i, "wheel: got %s, expected "
                     "task-%d", g.id, i);
        tl_assert_not_early(c.s, &g, g.due_ms);
        cr_assert_leq(g.wall_us / 1000 - g.due_ms, 1000 + TL_SLACK_MS,
                      "wheel: %s came %lld ms late with tick_ms=1000", g.id,
                      (long long)(g.wall_us / 1000 - g.due_ms));
    }
    cr_assert_leq(cons->counters.wakeups, 4, "wheel: %llu wake-ups for nine "
                  "tasks inside one tick of 1000 ms",
                  (unsigned long long)cons->counters.wakeups);
    dq_close(cons);
    dq_close(prod);
    tl_teardown(&c);
}

Test(wheel, tick_mismatch, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "wheel", "tick_mismatch");
    dq_queue *a = tl_open(&c);  /* tick_ms=1, the default */
    tl_set_opt(&c, "tick_ms", "10");
    dq_config cfg = tl_config(&c, NULL);
    dq_queue *b = NULL;
    char err[256] = "";
    int rc = dq_open(c.s, &cfg, &b, err, sizeof err);
    cr_assert_eq(rc, DQ_EINVAL, "wheel: a second handle with tick_ms=10 on "
                 "a queue open with tick_ms=1: %s (%s)", dq_result_name(rc),
                 err);
    cr_assert_null(b);
    cr_assert(strstr(err, "tick_ms") != NULL, "wheel: message does not name "
              "tick_ms: '%s'", err);
    dq_close(a);
    c.nopts = 0;
    tl_teardown(&c);
}

/* 300 tasks due at the same millisecond an hour ahead share one slot,
 * stored in ten chunks of 32 entries.  Cancelling every third of the first
 * 150 (chunks other than the newest, so the newest chunk's last entry
 * fills each hole) and rescheduling every fifth of the rest to the past
 * must leave the slot exact: the rescheduled come out at once in
 * insertion order, the others, cascaded through every level by a handle
 * two hours ahead, in insertion order too, each once. */
Test(wheel, crowded_slot, .timeout = 30)
{
    enum { N = 300 };
    tl_ctx c;
    tl_setup(&c, "wheel", "crowded_slot");
    dq_queue *q = tl_open(&c);
    int64_t now = dq_wall_us() / 1000, due = now + 3600000;
    bool gone[N] = {false}, early[N] = {false};
    char id[32];
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "task-%d", i);
        tl_enqueue(q, id, "c", 1, due);
    }
    int left = N;
    for (int i = 0; i < N / 2; i += 3) {
        snprintf(id, sizeof id, "task-%d", i);
        cr_assert_eq(dq_cancel(q, id), DQ_OK, "cancel %s: %s", id,
                     dq_errstr(q));
        gone[i] = true;
        left--;
    }
    for (int i = N / 2; i < N; i += 5) {
        snprintf(id, sizeof id, "task-%d", i);
        cr_assert_eq(dq_reschedule(q, id, now - 1000), DQ_OK,
                     "reschedule %s: %s", id, dq_errstr(q));
        early[i] = true;
    }
    cr_assert_eq(dq_pending(q), left);
    snprintf(id, sizeof id, "task-%d", 0);
    cr_assert_eq(dq_cancel(q, id), DQ_ENOTFOUND, "task-0 cancelled twice");
    /* The rescheduled ones: due now, in insertion order. */
    int last = -1;
    for (int i = 0; i < N; i++) {
        if (!early[i])
            continue;
        tl_got g = tl_claim(q, 0);
        cr_assert_eq(g.rc, DQ_OK, "rescheduled task-%d not claimed", i);
        cr_assert_eq(tl_task_index(g.id, N), i, "got %s, expected task-%d",
                     g.id, i);
        left--;
    }
    cr_assert_eq(tl_claim(q, 0).rc, DQ_EMPTY, "a task due in an hour came "
                 "out now");
    /* The rest, two hours later by a second handle's clock. */
    dq_config cfg = tl_config(&c, "later");
    cfg.clock_offset_us = INT64_C(7200) * 1000000;
    dq_queue *later = NULL;
    char err[256] = "";
    cr_assert_eq(dq_open(c.s, &cfg, &later, err, sizeof err), DQ_OK, "%s",
                 err);
    for (int i = 0; i < N; i++) {
        if (gone[i] || early[i])
            continue;
        tl_got g = tl_claim(later, 0);
        cr_assert_eq(g.rc, DQ_OK, "task-%d not claimed after the cascade", i);
        int got = tl_task_index(g.id, N);
        cr_assert(got > last && got == i, "got %s after task-%d, expected "
                  "task-%d", g.id, last, i);
        cr_assert_eq(g.due_ms, due);
        last = got;
        left--;
    }
    cr_assert_eq(left, 0);
    cr_assert_eq(tl_claim(later, 0).rc, DQ_EMPTY);
    cr_assert_eq(dq_pending(later), 0);
    dq_close(later);
    dq_close(q);
    tl_teardown(&c);
}

/* Ids of 1 and 22 characters with a 16-byte payload: blocks of 40 and 56
 * bytes before the wheel rounded them up to one size class, so the claimed
 * blocks' usable sizes differ without it. */
Test(wheel, block_class, .timeout = 30)
{
    static const char *ids[] = {"a", "a-much-longer-id-22-ch"};
    static const char payload[] = "0123456789abcdef";
    size_t usable[2];
    tl_ctx c;
    tl_setup(&c, "wheel", "block_class");
    dq_queue *q = tl_open(&c);
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < 2; i++)
        tl_enqueue(q, ids[i], payload, 16, now - 10 + i);
    for (int i = 0; i < 2; i++) {
        unsigned char *got = NULL;
        size_t len = 0;
        tl_got g = tl_claim_p(q, 0, &got, &len);
        cr_assert_eq(g.rc, DQ_OK, "task %s not claimed", ids[i]);
        cr_assert_str_eq(g.id, ids[i]);
        cr_assert_eq(len, 16);
        cr_assert_eq(memcmp(got, payload, 16), 0, "payload of %s", ids[i]);
        usable[i] = malloc_usable_size(got);
        free(got);
    }
    cr_assert_eq(usable[0], usable[1], "blocks of ids %s and %s: %zu and "
                 "%zu usable bytes, not one size class", ids[0], ids[1],
                 usable[0], usable[1]);
    cr_assert_geq(usable[0], 56);
    dq_close(q);
    tl_teardown(&c);
}
