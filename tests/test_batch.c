/* test_batch.c -- batched claims (option batch=N) and batched enqueue
 * (dq_enqueue_many) on the strategies that have them.
 *
 * The conformance suite runs every strategy with its default options, so
 * batch=1.  Here each strategy that declares a `batch` option (looked up
 * in its option table, never by name) runs with batch=16:
 *   four_consumers  400 tasks due now, enqueued with dq_enqueue_many, 4
 *                   consumer threads: each task delivered exactly once
 *                   (the claim takes up to 16 per round trip and hands
 *                   them out one by one).
 *   due_order       one consumer, 60 tasks with shuffled due times over
 *                   ~300 ms: delivered in due order, none early (a batch
 *                   must stop at the first task not yet due; zpopmin puts
 *                   the popped, not-yet-due rest back in one ZADD).
 *   mixed_due       half the tasks due now, half in 300 ms, in one batch
 *                   window: the due half comes at once, the rest not
 *                   early, nothing lost or duplicated.
 *   close_gives_back  a consumer closes with tasks in its buffer: another
 *                   one gets each of them once, with payload and due time
 *                   (the producer closed too where the strategy declares
 *                   DQ_G_SURVIVES_PROCESS_EXIT).
 * batch/every_batch_strategy_listed fails when a strategy declares a batch
 * option and is missing from BATCH_STRATEGIES below.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../strategies/dq.h"
#include "testlib.h"

#define BATCH "16"

/* Sets batch=16 on a set-up ctx for `name`, or tears down and skips when
 * there is no batch option. */
static void need_batch(tl_ctx *c, const char *name)
{
    if (!tl_has_option(c->s, "batch")) {
        tl_teardown(c);
        cr_skip_test("%s has no batch option", name);
    }
    tl_set_opt(c, "batch", BATCH);
}

/* Enqueues task-<i> for i in [0, n) with due[i], payload = id, in one
 * dq_enqueue_many call. */
static void enqueue_all(dq_queue *q, int n, const int64_t *due)
{
    dq_enqueue_item *items = calloc((size_t)n, sizeof *items);
    char (*ids)[32] = calloc((size_t)n, sizeof *ids);
    cr_assert(items != NULL && ids != NULL);
    for (int i = 0; i < n; i++) {
        snprintf(ids[i], sizeof ids[i], "task-%d", i);
        items[i].id = ids[i];
        items[i].payload = ids[i];
        items[i].payload_len = strlen(ids[i]);
        items[i].due_ms = due[i];
    }
    int rc = dq_enqueue_many(q, items, (size_t)n);
    cr_assert_eq(rc, DQ_OK, "%s: enqueue_many(%d) = %s: %s", q->s->name, n,
                 dq_result_name(rc), dq_errstr(q));
    free(items);
    free(ids);
}

static void check_four_consumers(const char *name)
{
    enum { N = 400 };
    tl_ctx c;
    tl_setup(&c, name, "b4c");
    need_batch(&c, name);
    int *seen = calloc(N, sizeof(int));
    cr_assert_not_null(seen);
    int total = tl_run_consumers(&c, 4, N, 1000, seen);
    int lost, dups;
    char which[256];
    tl_count_seen(seen, N, &lost, &dups, which, sizeof which);
    cr_assert_eq(lost, 0, "%s batch=" BATCH ": %d of %d tasks never "
                 "delivered (%d deliveries):%s", name, lost, N, total, which);
    if (c.s->flags & DQ_G_NO_DUP_CONCURRENT)
        cr_assert_eq(dups, 0, "%s batch=" BATCH ": %d duplicate deliveries "
                     "under 4 consumers:%s", name, dups, which);
    free(seen);
    tl_teardown(&c);
}

static void check_due_order(const char *name)
{
    enum { N = 60 };
    tl_ctx c;
    tl_setup_need_flag(&c, name, "bdue", DQ_G_DUE_ORDER, "DQ_G_DUE_ORDER");
    need_batch(&c, name);
    dq_queue *q = tl_open(&c);
    int64_t due[N];
    int perm[N];
    for (int i = 0; i < N; i++)
        perm[i] = i;
    unsigned seed = (unsigned)getpid();
    tl_shuffle(perm, N, &seed);
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < N; i++)
        due[i] = now + 20 + 5 * perm[i];  /* now+20 .. now+315, shuffled */
    enqueue_all(q, N, due);
    tl_claim_in_due_order(&c, q, N, due, name);
    dq_close(q);
    tl_teardown(&c);
}

static void check_mixed_due(const char *name)
{
    enum { N = 40 };
    tl_ctx c;
    tl_setup(&c, name, "bmix");
    need_batch(&c, name);
    dq_queue *q = tl_open(&c);
    int64_t due[N];
    int seen[N] = {0};
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < N; i++)
        due[i] = i % 2 ? now + 300 : now - 1;
    enqueue_all(q, N, due);
    for (int k = 0; k < N; k++) {
        tl_got g = tl_claim(q, 3000);
        cr_assert_eq(g.rc, DQ_OK, "%s: claim %d of %d found nothing in 3 s",
                     name, k + 1, N);
        int i = tl_task_index(g.id, N);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", name, g.id);
        cr_assert_eq(seen[i], 0, "%s: %s delivered twice", name, g.id);
        seen[i]++;
        tl_assert_not_early(c.s, &g, due[i]);
        if (k < N / 2)
            cr_assert_eq(i % 2, 0, "%s: %s (due in 300 ms) came before the "
                         "tasks already due", name, g.id);
    }
    tl_got g = tl_claim(q, 200);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: extra delivery %s", name, g.id);
    if (c.s->pending != NULL) {
        int64_t p = dq_pending(q);
        cr_assert_eq(p, 0, "%s: pending = %lld after claiming all", name,
                     (long long)p);
    }
    dq_close(q);
    tl_teardown(&c);
}

/* A graceful close gives back what the handle's batch buffer holds.  40
 * tasks due in the last few ms (payload = id); consumer A claims one, so
 * its buffer holds up to 15 more, acks it and closes.  Those tasks were
 * never handed out: a new consumer B must get every other task exactly
 * once, with its payload and its original due time, and dq_pending must
 * count them.  The producer is closed first when the strategy declares
 * DQ_G_SURVIVES_PROCESS_EXIT (pending tasks outlive every handle); an
 * in-process queue (heap) lives only while a handle is open, so there it
 * stays open. */
static void check_close_gives_back(const char *name)
{
    enum { N = 40 };
    tl_ctx c;
    tl_setup(&c, name, "bclose");
    need_batch(&c, name);
    bool survives = (c.s->flags & DQ_G_SURVIVES_PROCESS_EXIT) != 0;
    dq_queue *prod = tl_open_as(&c, "producer");
    int64_t due[N];
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < N; i++)
        due[i] = now - N + i;
    enqueue_all(prod, N, due);
    if (survives) {
        dq_close(prod);
        prod = NULL;
    }
    dq_queue *a = tl_open_as(&c, "consumer-a");
    tl_got first = tl_claim(a, 3000);
    cr_assert_eq(first.rc, DQ_OK, "%s: consumer A found nothing in 3 s",
                 name);
    int fi = tl_task_index(first.id, N);
    cr_assert_geq(fi, 0, "%s: unexpected id '%s'", name, first.id);
    dq_close(a); /* a graceful close, with up to 15 tasks buffered */

    dq_queue *b = tl_open_as(&c, "consumer-b");
    if (c.s->pending != NULL) {
        int64_t p = dq_pending(b);
        cr_assert_eq(p, N - 1, "%s batch=" BATCH ": pending = %lld after "
                     "A took 1 of %d and closed (%s)", name, (long long)p, N,
                     p < 0 ? dq_errstr(b) : "");
    }
    int seen[N] = {0};
    seen[fi] = 1;
    for (int k = 0; k < N - 1; k++) {
        unsigned char *pl = NULL;
        size_t len = 0;
        tl_got g = tl_claim_p(b, 3000, &pl, &len);
        cr_assert_eq(g.rc, DQ_OK, "%s batch=" BATCH ": after A closed, B's "
                     "claim %d of %d found nothing in 3 s (lost with A's "
                     "buffer?)", name, k + 1, N - 1);
        int i = tl_task_index(g.id, N);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", name, g.id);
        cr_assert_eq(seen[i], 0, "%s: %s delivered twice", name, g.id);
        seen[i]++;
        cr_assert(len == strlen(g.id) && memcmp(pl, g.id, len) == 0,
                  "%s: %s came back with another payload", name, g.id);
        free(pl);
        cr_assert_eq(g.due_ms, due[i], "%s: %s came back due %lld, enqueued "
                     "due %lld", name, g.id, (long long)g.due_ms,
                     (long long)due[i]);
    }
    tl_got g = tl_claim(b, 200);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: extra delivery %s", name, g.id);
    dq_close(b);
    dq_close(prod);
    tl_teardown(&c);
}

#define BATCH_TESTS(ident, name)                                              \
    Test(ident, four_consumers, .timeout = 120)                               \
    {                                                                         \
        check_four_consumers(name);                                           \
    }                                                                         \
    Test(ident, due_order, .timeout = 60) { check_due_order(name); }          \
    Test(ident, mixed_due, .timeout = 60) { check_mixed_due(name); }          \
    Test(ident, close_gives_back, .timeout = 60)                              \
    {                                                                         \
        check_close_gives_back(name);                                         \
    }

/* Every strategy with a `batch` option.  ADD NEW ONES HERE: the test
 * batch/every_batch_strategy_listed fails until you do. */
#define BATCH_STRATEGIES(X)                                                   \
    X(zpopmin, "zpopmin")                                                     \
    X(lua, "lua")                                                             \
    X(heap, "heap")                                                           \
    X(wheel, "wheel")                                                         \
    X(streams, "streams")

BATCH_STRATEGIES(BATCH_TESTS)

#define BATCH_NAME(ident, name) name,
static const char *const listed[] = {BATCH_STRATEGIES(BATCH_NAME) NULL};

Test(batch, every_batch_strategy_listed)
{
    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];
        bool found = false;
        if (!tl_has_option(s, "batch"))
            continue;
        for (size_t j = 0; listed[j] != NULL; j++)
            if (strcmp(listed[j], s->name) == 0)
                found = true;
        cr_expect(found, "strategy '%s' has a batch option but no line in "
                  "BATCH_STRATEGIES (tests/test_batch.c)", s->name);
    }
}
