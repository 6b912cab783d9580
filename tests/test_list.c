/* test_list.c -- what the two Redisson-style strategies (list, list-reliable;
 * strategies/list_mover.h) promise beyond the conformance suite:
 *
 *   - one mover per queue and process: the handles sharing a dq_local run
 *     one mover (one subscriber on dq:{Q}:wake, so one publish wakes one
 *     mover), another dq_local (another process) runs its own, and a
 *     handle opened without a dq_local still works, with a mover of its
 *     own;
 *   - the shared mover outlives a handle's close; the last claimer's close
 *     stops it, and a later claim starts it again;
 *   - one round trip per claim while tasks are waiting (list: BLPOP of an
 *     item that holds the payload; list-reliable: one script that moves the
 *     item and records its lease), counted in the handle's
 *     counters.round_trips with the mover kept idle (poll_cap_ms and
 *     lease_ms of an hour);
 *   - ids and payloads holding ':' and digits, the item's separators, come
 *     back intact;
 *   - one move of more tasks than Redis's Lua unpack() takes at once
 *     (move_batch=10000, 9000 due) delivers them all;
 *   - list-reliable's nack and max_attempts beyond the conformance checks:
 *     a nack's retry waiting in ready is not taken for the reaper's
 *     give-back (the nacked delivery's late ack and nack are refused), a
 *     late nack nobody overtook stands, the nack wakes the mover, the
 *     reaper dead-letters a task whose last lease ran out, and a reused
 *     id inherits no attempt count or due time;
 *   - through the binary, in process mode: a list consumer process killed
 *     after a claim loses that task only (the tasks its mover had moved are
 *     in Redis), and a killed list-reliable consumer's task comes back
 *     through another process's reaper; list-reliable's movers and blocked
 *     consumers reconnect after mover-stall.
 *
 * The mover counts are read with PUBSUB NUMSUB (https://redis.io/commands/
 * pubsub-numsub/) on the test server: each test has its own queue, hence
 * its own wake channel.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <hiredis/hiredis.h>

#include "testlib.h"

/* ---- Helpers ------------------------------------------------------------ */

static redisContext *admin_connect(void)
{
    struct timeval tv = {5, 0};
    redisContext *r = redisConnectWithTimeout("127.0.0.1", tl_redis_port(),
                                              tv);
    cr_assert(r != NULL && !r->err, "connect to the test Redis: %s",
              r ? r->errstr : "out of memory");
    return r;
}

/* Subscribers of the queue's wake channel: the movers running on it. */
static long long numsub(redisContext *r, const tl_ctx *c)
{
    char ch[128];
    snprintf(ch, sizeof ch, "dq:{%s}:wake", c->queue);
    redisReply *x = redisCommand(r, "PUBSUB NUMSUB %s", ch);
    cr_assert(x != NULL && x->type == REDIS_REPLY_ARRAY && x->elements == 2 &&
                  x->element[1]->type == REDIS_REPLY_INTEGER,
              "PUBSUB NUMSUB %s failed", ch);
    long long n = x->element[1]->integer;
    freeReplyObject(x);
    return n;
}

/* Waits up to 5 s for numsub == want, then another 300 ms to see that it
 * stays there (a mover that starts late shows).  Returns the last count. */
static long long settled_numsub(redisContext *r, const tl_ctx *c,
                                long long want)
{
    long long n = numsub(r, c);
    for (int i = 0; i < 500 && n != want; i++) {
        dq_sleep_us(10000);
        n = numsub(r, c);
    }
    dq_sleep_us(300000);
    return numsub(r, c);
}

/* Opens a handle on c's queue with dq_local `local` (NULL: none). */
static dq_queue *open_with(tl_ctx *c, const char *consumer, dq_local *local)
{
    dq_config cfg = tl_config(c, consumer);
    cfg.local = local;
    dq_queue *q = NULL;
    char err[256] = "";
    int rc = dq_open(c->s, &cfg, &q, err, sizeof err);
    cr_assert_eq(rc, DQ_OK, "%s: dq_open(%s) = %s: %s", c->s->name, consumer,
                 dq_result_name(rc), err);
    return q;
}

/* claim(0) on an empty queue: starts the handle's mover. */
static void start_mover(dq_queue *q)
{
    tl_got g = tl_claim(q, 0);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: empty queue gave %s", q->s->name, g.id);
}

/* ---- One mover per process ---------------------------------------------- */

static void check_one_mover(const char *name)
{
    enum { N = 4 };
    tl_ctx c;
    tl_setup(&c, name, "one_mover");
    redisContext *r = admin_connect();

    dq_queue *h[N];
    for (int i = 0; i < N; i++) {
        char who[16];
        snprintf(who, sizeof who, "c%d", i);
        h[i] = tl_open_as(&c, who);
        start_mover(h[i]);
    }
    long long n = settled_numsub(r, &c, 1);
    cr_assert_eq(n, 1, "%s: %d claiming handles sharing a dq_local run %lld "
                 "movers (subscribers of the wake channel), expected 1",
                 name, N, n);

    /* Another process: its own dq_local, its own mover. */
    dq_local *other = dq_local_new();
    cr_assert_not_null(other);
    dq_queue *o1 = open_with(&c, "o1", other), *o2 = open_with(&c, "o2", other);
    start_mover(o1);
    start_mover(o2);
    n = settled_numsub(r, &c, 2);
    cr_assert_eq(n, 2, "%s: two processes' handles run %lld movers, "
                 "expected 2", name, n);

    /* No dq_local: the handle works, with a mover of its own. */
    dq_queue *solo = open_with(&c, "solo", NULL);
    tl_enqueue(h[0], "task-0", "x:1", 3, dq_wall_us() / 1000);
    unsigned char *pl = NULL;
    size_t len = 0;
    tl_got g = tl_claim_p(solo, 3000, &pl, &len);
    cr_assert_eq(g.rc, DQ_OK, "%s: a handle without a dq_local got nothing",
                 name);
    cr_assert(len == 3 && memcmp(pl, "x:1", 3) == 0,
              "%s: payload differs", name);
    free(pl);
    n = settled_numsub(r, &c, 3);
    cr_assert_eq(n, 3, "%s: with a handle without dq_local, %lld movers, "
                 "expected 3", name, n);

    dq_close(solo);
    dq_close(o1);
    dq_close(o2);
    dq_local_free(other);
    for (int i = 0; i < N; i++)
        dq_close(h[i]);
    n = settled_numsub(r, &c, 0);
    cr_assert_eq(n, 0, "%s: %lld movers left after every handle closed",
                 name, n);
    redisFree(r);
    tl_teardown(&c);
}

/* ---- The shared mover outlives a close ---------------------------------- */

static void check_mover_survives_close(const char *name)
{
    tl_ctx c;
    tl_setup(&c, name, "survives_close");
    redisContext *r = admin_connect();
    dq_queue *p = tl_open_as(&c, "producer"); /* never claims */
    dq_queue *a = tl_open_as(&c, "a"), *b = tl_open_as(&c, "b");
    start_mover(a);
    start_mover(b);
    cr_assert_eq(settled_numsub(r, &c, 1), 1, "%s: not one mover", name);

    dq_close(a); /* b still claims: the mover goes on */
    int64_t due = dq_wall_us() / 1000 + 200;
    tl_enqueue(p, "task-0", "p0", 2, due);
    tl_got g = tl_claim(b, 3000);
    cr_assert_eq(g.rc, DQ_OK, "%s: after one handle closed, the other got "
                 "nothing in 3 s", name);
    cr_assert_str_eq(g.id, "task-0");
    tl_assert_not_early(c.s, &g, due);
    cr_assert_eq(numsub(r, &c), 1, "%s: the mover did not survive a close",
                 name);

    dq_close(b); /* the last claimer: the mover stops, p stays open */
    long long n = settled_numsub(r, &c, 0);
    cr_assert_eq(n, 0, "%s: %lld movers after the last claimer closed "
                 "(a producer-only handle runs none)", name, n);

    dq_queue *d = tl_open_as(&c, "d"); /* shares p's object: restarts it */
    tl_enqueue(p, "task-1", "p1", 2, dq_wall_us() / 1000);
    g = tl_claim(d, 3000);
    cr_assert_eq(g.rc, DQ_OK, "%s: a claim after the mover stopped got "
                 "nothing in 3 s", name);
    cr_assert_str_eq(g.id, "task-1");
    cr_assert_eq(settled_numsub(r, &c, 1), 1, "%s: the mover did not start "
                 "again", name);
    dq_close(d);
    dq_close(p);
    redisFree(r);
    tl_teardown(&c);
}

/* ---- One round trip per claim ------------------------------------------- */

static long long llen(redisContext *r, const tl_ctx *c, const char *suffix)
{
    redisReply *x = redisCommand(r, "LLEN dq:{%s}:%s", c->queue, suffix);
    cr_assert(x != NULL && x->type == REDIS_REPLY_INTEGER, "LLEN failed");
    long long n = x->integer;
    freeReplyObject(x);
    return n;
}

static void check_round_trips(const char *name)
{
    enum { N = 9 };
    tl_ctx c;
    tl_setup(&c, name, "round_trips");
    /* Keep the mover idle once the tasks are moved: no timed run, no
     * reaper run within the test. */
    tl_set_opt(&c, "poll_cap_ms", "3600000");
    if (tl_has_option(c.s, "lease_ms"))
        tl_set_opt(&c, "lease_ms", "3600000");
    redisContext *r = admin_connect();
    dq_queue *p = tl_open_as(&c, "producer"), *q = tl_open_as(&c, "consumer");
    start_mover(q);
    cr_assert_eq(settled_numsub(r, &c, 1), 1, "%s: not one mover", name);
    start_mover(q); /* folds the mover's start-up round trips */

    dq_enqueue_item items[N];
    char ids[N][16];
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < N; i++) {
        snprintf(ids[i], sizeof ids[i], "task-%d", i);
        items[i] = (dq_enqueue_item){ids[i], ids[i], strlen(ids[i]),
                                     now - N + i};
    }
    int rc = dq_enqueue_many(p, items, N);
    cr_assert_eq(rc, DQ_OK, "%s: enqueue_many: %s", name, dq_errstr(p));
    for (int i = 0; i < 300 && llen(r, &c, "ready") < N; i++)
        dq_sleep_us(10000);
    cr_assert_eq(llen(r, &c, "ready"), N, "%s: the mover did not move the "
                 "%d tasks in 3 s", name, N);
    dq_sleep_us(100000); /* the mover has published its counters */

    uint64_t claim_rt[N], ack_rt[N];
    for (int i = 0; i < N; i++) {
        dq_task t;
        memset(&t, 0, sizeof t);
        uint64_t before = q->counters.round_trips;
        rc = dq_claim(q, 3000, &t);
        claim_rt[i] = q->counters.round_trips - before;
        cr_assert_eq(rc, DQ_OK, "%s: claim %d: %s: %s", name, i + 1,
                     dq_result_name(rc), dq_errstr(q));
        cr_assert_str_eq(t.id, ids[i], "%s: claim %d gave %s", name, i + 1,
                         t.id);
        cr_assert(t.payload_len == strlen(ids[i]) &&
                      memcmp(t.payload, ids[i], t.payload_len) == 0,
                  "%s: %s came with another payload", name, t.id);
        before = q->counters.round_trips;
        rc = dq_ack(q, &t);
        ack_rt[i] = q->counters.round_trips - before;
        cr_assert_eq(rc, DQ_OK, "%s: ack %s: %s", name, t.id, dq_errstr(q));
        dq_task_clear(&t);
    }
    /* The first claim also carries the mover's one move script (folded
     * into this handle) and, for list-reliable, whose consumer found ready
     * empty last time, BLMOVE and then the lease script, loaded on first
     * use (SCRIPT LOAD); the first ack loads its script too. */
    unsigned ack = (c.s->flags & DQ_G_AT_LEAST_ONCE) ? 1 : 0;
    cr_assert_leq(claim_rt[0], 4, "%s: first claim: %llu round trips", name,
                  (unsigned long long)claim_rt[0]);
    cr_assert_leq(ack_rt[0], 2 * ack, "%s: first ack: %llu round trips",
                  name, (unsigned long long)ack_rt[0]);
    for (int i = 1; i < N; i++) {
        cr_assert_eq(claim_rt[i], 1, "%s: claim %d of %d tasks waiting in "
                     "ready took %llu round trips, expected 1", name, i + 1,
                     N, (unsigned long long)claim_rt[i]);
        cr_assert_eq(ack_rt[i], ack, "%s: ack %d took %llu round trips, "
                     "expected %u", name, i + 1,
                     (unsigned long long)ack_rt[i], ack);
    }
    dq_close(q);
    dq_close(p);
    redisFree(r);
    tl_teardown(&c);
}

/* ---- The item's separators in ids and payloads -------------------------- */

static void check_separators(const char *name)
{
    static const struct {
        const char *id;
        const char *pl;
        size_t len;
    } t[] = {
        {"12:34:x", "5:6:\0:", 6},
        {":", "::", 2},
        {"7:", "", 0},
        {"-1:0:", "0:0:0:1:x", 9},
    };
    enum { N = sizeof t / sizeof t[0] };
    tl_ctx c;
    tl_setup(&c, name, "separators");
    dq_queue *q = tl_open(&c);
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < N; i++)
        tl_enqueue(q, t[i].id, t[i].pl, t[i].len, now - N + i);
    for (int i = 0; i < N; i++) {
        unsigned char *pl = NULL;
        size_t len = 0;
        tl_got g = tl_claim_p(q, 3000, &pl, &len);
        cr_assert_eq(g.rc, DQ_OK, "%s: claim %d found nothing", name, i + 1);
        cr_assert_str_eq(g.id, t[i].id, "%s: claim %d gave '%s'", name,
                         i + 1, g.id);
        cr_assert_eq(g.due_ms, now - N + i, "%s: %s has due %lld", name,
                     g.id, (long long)g.due_ms);
        cr_assert(len == t[i].len && memcmp(pl, t[i].pl, len) == 0,
                  "%s: %s payload differs (%zu bytes)", name, g.id, len);
        free(pl);
    }
    dq_close(q);
    tl_teardown(&c);
}

/* ---- A move larger than Lua's unpack() limit ----------------------------- */

/* move_batch=10000 and 9000 tasks due at once: the mover's first script
 * moves them all, more values than Redis's Lua 5.1 unpack() takes at once
 * (about 8000), so the script must pass them in slices. */
static void check_big_move(const char *name)
{
    enum { N = 9000 };
    tl_ctx c;
    tl_setup(&c, name, "big_move");
    tl_set_opt(&c, "move_batch", "10000");
    dq_queue *p = tl_open_as(&c, "producer"), *q = tl_open_as(&c, "consumer");
    dq_enqueue_item *items = calloc(N, sizeof *items);
    char (*ids)[16] = calloc(N, sizeof *ids);
    cr_assert(items != NULL && ids != NULL);
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < N; i++) {
        snprintf(ids[i], sizeof ids[i], "task-%d", i);
        items[i] = (dq_enqueue_item){ids[i], ids[i], strlen(ids[i]), now - 1};
    }
    int rc = dq_enqueue_many(p, items, N);
    cr_assert_eq(rc, DQ_OK, "%s: enqueue_many(%d): %s", name, N,
                 dq_errstr(p));
    char *seen = calloc(N, 1);
    cr_assert_not_null(seen);
    for (int k = 0; k < N; k++) {
        tl_got g = tl_claim(q, 3000);
        cr_assert_eq(g.rc, DQ_OK, "%s: claim %d of %d (one move of %d) "
                     "found nothing in 3 s", name, k + 1, N, N);
        int i = tl_task_index(g.id, N);
        cr_assert(i >= 0 && !seen[i], "%s: unexpected or repeated id '%s'",
                  name, g.id);
        seen[i] = 1;
    }
    free(seen);
    free(ids);
    free(items);
    dq_close(q);
    dq_close(p);
    tl_teardown(&c);
}

/* ---- list-reliable's nack, max_attempts and reused ids ------------------ */

/* Claims one task on q within timeout_ms into *t (caller clears); aborts
 * the test when none comes. */
static void claim_into(dq_queue *q, int64_t timeout_ms, dq_task *t,
                       const char *what)
{
    memset(t, 0, sizeof *t);
    int rc = dq_claim(q, timeout_ms, t);
    cr_assert_eq(rc, DQ_OK, "%s: claim(%lld ms) = %s: %s", what,
                 (long long)timeout_ms, dq_result_name(rc),
                 rc == DQ_EMPTY ? "nothing came" : dq_errstr(q));
}

/* Asserts that t is task id's delivery number attempt with due time due
 * and payload pl. */
static void assert_task(const dq_task *t, const char *id, int attempt,
                        int64_t due, const char *pl, const char *what)
{
    cr_assert_str_eq(t->id, id, "%s: got %s", what, t->id);
    cr_assert_eq(t->attempt, attempt, "%s: attempt %d, expected %d", what,
                 t->attempt, attempt);
    cr_assert_eq(t->due_ms, due, "%s: due %lld, expected %lld", what,
                 (long long)t->due_ms, (long long)due);
    cr_assert(t->payload_len == strlen(pl) &&
                  memcmp(t->payload, pl, t->payload_len) == 0,
              "%s: payload '%.*s', expected '%s'", what, (int)t->payload_len,
              (const char *)t->payload, pl);
}

/* HGET dq:{Q}:<hash> field on the test server: the value (caller frees)
 * or NULL when absent. */
static char *hget(redisContext *r, const tl_ctx *c, const char *hash,
                  const char *field)
{
    redisReply *x = redisCommand(r, "HGET dq:{%s}:%s %s", c->queue, hash,
                                 field);
    cr_assert(x != NULL && (x->type == REDIS_REPLY_STRING ||
                            x->type == REDIS_REPLY_NIL), "HGET failed");
    char *v = x->type == REDIS_REPLY_STRING ? strdup(x->str) : NULL;
    freeReplyObject(x);
    return v;
}

/* Waits up to 3 s for LLEN dq:{Q}:ready == want. */
static void wait_ready(redisContext *r, const tl_ctx *c, long long want,
                       const char *what)
{
    for (int i = 0; i < 300 && llen(r, c, "ready") != want; i++)
        dq_sleep_us(10000);
    cr_assert_eq(llen(r, c, "ready"), want, "%s: ready holds %lld items, "
                 "expected %lld", what, llen(r, c, "ready"), want);
}

/* A nack's retry, moved into ready and not taken yet, is not the reaper's
 * give-back of the nacked delivery: the nacked delivery's late ack and
 * nack, which look for that give-back in ready, are refused, and the
 * retry comes as attempt 2 with the original due time and its payload. */
Test(list_reliable, nack_retry_refuses_the_nacked_delivery, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "list-reliable", "nack_retry");
    tl_set_opt(&c, "lease_ms", "3600000"); /* no reaper in this test */
    redisContext *r = admin_connect();
    dq_queue *q = tl_open_as(&c, "consumer");
    int64_t due = dq_wall_us() / 1000 - 5000;
    tl_enqueue(q, "task-0", "pl", 2, due);
    dq_task t, u;
    claim_into(q, 3000, &t, "first delivery");
    assert_task(&t, "task-0", 1, due, "pl", "first delivery");
    int rc = dq_nack(q, &t, 0);
    cr_assert_eq(rc, DQ_OK, "nack = %s: %s", dq_result_name(rc),
                 dq_errstr(q));
    wait_ready(r, &c, 1, "the mover moved the retry");
    rc = dq_ack(q, &t);
    cr_assert_eq(rc, DQ_ENOTFOUND, "ack of the nacked delivery while its "
                 "retry waits in ready = %s", dq_result_name(rc));
    rc = dq_nack(q, &t, 0);
    cr_assert_eq(rc, DQ_ENOTFOUND, "nack of the nacked delivery while its "
                 "retry waits in ready = %s", dq_result_name(rc));
    cr_assert_eq(llen(r, &c, "ready"), 1, "the refused ack took the retry");
    claim_into(q, 3000, &u, "the retry");
    assert_task(&u, "task-0", 2, due, "pl", "the retry");
    rc = dq_ack(q, &u);
    cr_assert_eq(rc, DQ_OK, "ack of the retry = %s: %s", dq_result_name(rc),
                 dq_errstr(q));
    char *a = hget(r, &c, "a", "task-0"), *d = hget(r, &c, "d", "task-0");
    cr_assert(a == NULL && d == NULL, "records left after the move: a=%s "
              "d=%s", a ? a : "-", d ? d : "-");
    tl_got g = tl_claim(q, 300);
    cr_assert_eq(g.rc, DQ_EMPTY, "delivered again after the ack: %s", g.id);
    dq_task_clear(&t);
    dq_task_clear(&u);
    dq_close(q);
    redisFree(r);
    tl_teardown(&c);
}

/* A late nack: the lease ran out and the reaper gave the item back to
 * ready, where nobody took it; the nack still stands (as a late ack does)
 * and the retry is attempt 2, not 3. */
Test(list_reliable, late_nack_nobody_took, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "list-reliable", "late_nack");
    tl_set_opt(&c, "lease_ms", "300");
    redisContext *r = admin_connect();
    dq_queue *q = tl_open_as(&c, "consumer");
    int64_t due = dq_wall_us() / 1000 - 5000;
    tl_enqueue(q, "task-0", "pl", 2, due);
    dq_task t, u;
    claim_into(q, 3000, &t, "first delivery");
    wait_ready(r, &c, 1, "the reaper gave the item back");
    int rc = dq_nack(q, &t, 0);
    cr_assert_eq(rc, DQ_OK, "late nack, nobody took the task = %s: %s",
                 dq_result_name(rc), dq_errstr(q));
    claim_into(q, 3000, &u, "the retry");
    assert_task(&u, "task-0", 2, due, "pl", "the retry");
    rc = dq_ack(q, &u);
    cr_assert_eq(rc, DQ_OK, "ack of the retry = %s: %s", dq_result_name(rc),
                 dq_errstr(q));
    dq_task_clear(&t);
    dq_task_clear(&u);
    dq_close(q);
    redisFree(r);
    tl_teardown(&c);
}

/* The nack publishes a wake-up when its task becomes the head of the
 * delay set: with the mover's own timer an hour away, the retry still
 * comes at its time. */
Test(list_reliable, nack_wakes_the_mover, .timeout = 30)
{
    enum { DELAY_MS = 200 };
    tl_ctx c;
    tl_setup(&c, "list-reliable", "nack_wakes");
    tl_set_opt(&c, "lease_ms", "3600000");
    tl_set_opt(&c, "poll_cap_ms", "3600000");
    dq_queue *q = tl_open_as(&c, "consumer");
    int64_t due = dq_wall_us() / 1000;
    tl_enqueue(q, "task-0", "pl", 2, due);
    dq_task t, u;
    claim_into(q, 3000, &t, "first delivery");
    int64_t nack_ms = dq_wall_us() / 1000;
    int rc = dq_nack(q, &t, DELAY_MS);
    cr_assert_eq(rc, DQ_OK, "nack = %s: %s", dq_result_name(rc),
                 dq_errstr(q));
    claim_into(q, DELAY_MS + 3000, &u, "the retry, mover timer an hour away");
    cr_assert_geq(dq_wall_us(), (nack_ms + DELAY_MS) * 1000, "retry early");
    assert_task(&u, "task-0", 2, due, "pl", "the retry");
    cr_assert_eq(dq_ack(q, &u), DQ_OK, "ack: %s", dq_errstr(q));
    dq_task_clear(&t);
    dq_task_clear(&u);
    dq_close(q);
    tl_teardown(&c);
}

/* max_attempts=1: a delivery whose lease runs out is its last; the reaper
 * moves the task to the dead-letter set (not back to ready), with its
 * payload kept in p and its delivery count in a, and the late ack of that
 * delivery is refused. */
Test(list_reliable, reaper_dead_letters, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "list-reliable", "reaper_dead");
    tl_set_opt(&c, "lease_ms", "300");
    tl_set_opt(&c, "max_attempts", "1");
    redisContext *r = admin_connect();
    dq_queue *a = tl_open_as(&c, "consumer-a");
    dq_queue *b = tl_open_as(&c, "consumer-b");
    tl_enqueue(a, "task-0", "keep", 4, dq_wall_us() / 1000);
    dq_task t;
    claim_into(a, 3000, &t, "the one delivery");
    tl_got g = tl_claim(b, 1500);
    cr_assert_eq(g.rc, DQ_EMPTY, "max_attempts=1 but %s came again", g.id);
    cr_assert_eq(dq_dead_letters(b), 1, "dead_letters = %lld: %s",
                 (long long)dq_dead_letters(b), dq_errstr(b));
    cr_assert_eq(dq_pending(b), 0, "pending with the only task dead");
    char *pl = hget(r, &c, "p", "task-0"), *n = hget(r, &c, "a", "task-0");
    cr_assert(pl != NULL && strcmp(pl, "keep") == 0, "dead task's payload: "
              "%s", pl ? pl : "(gone)");
    cr_assert(n != NULL && strcmp(n, "1") == 0, "dead task's deliveries: %s",
              n ? n : "(none)");
    free(pl);
    free(n);
    int rc = dq_ack(a, &t);
    cr_assert_eq(rc, DQ_ENOTFOUND, "late ack of a dead-lettered task = %s",
                 dq_result_name(rc));
    dq_task_clear(&t);
    dq_close(b);
    dq_close(a);
    redisFree(r);
    tl_teardown(&c);
}

/* An enqueue of an id used before starts afresh: neither a retry record
 * (a nacked task waiting in the delay set: its attempt count and original
 * due time) nor a dead letter's count carries over to the new task. */
Test(list_reliable, reused_id_starts_afresh, .timeout = 30)
{
    tl_ctx c;
    tl_setup(&c, "list-reliable", "reused_id");
    tl_set_opt(&c, "lease_ms", "3600000");
    tl_set_opt(&c, "max_attempts", "2");
    redisContext *r = admin_connect();
    dq_queue *q = tl_open_as(&c, "consumer");
    int64_t now = dq_wall_us() / 1000;
    tl_enqueue(q, "task-0", "old", 3, now - 5000);
    dq_task t;
    claim_into(q, 3000, &t, "old task");
    int rc = dq_nack(q, &t, 3600000); /* its retry waits an hour in z */
    cr_assert_eq(rc, DQ_OK, "nack: %s", dq_errstr(q));
    dq_task_clear(&t);
    tl_enqueue(q, "task-0", "new", 3, now - 3000);
    claim_into(q, 3000, &t, "new task of a nacked id");
    assert_task(&t, "task-0", 1, now - 3000, "new", "new task of a nacked "
                "id");
    rc = dq_nack(q, &t, 0);
    cr_assert_eq(rc, DQ_OK, "nack: %s", dq_errstr(q));
    dq_task_clear(&t);
    claim_into(q, 3000, &t, "its retry");
    assert_task(&t, "task-0", 2, now - 3000, "new", "its retry");
    rc = dq_nack(q, &t, 0); /* the second delivery: dead */
    cr_assert_eq(rc, DQ_OK, "nack: %s", dq_errstr(q));
    dq_task_clear(&t);
    cr_assert_eq(dq_dead_letters(q), 1, "dead_letters");
    tl_enqueue(q, "task-0", "again", 5, now - 1000);
    char *a = hget(r, &c, "a", "task-0");
    cr_assert_null(a, "a dead letter's count survived the enqueue: %s", a);
    claim_into(q, 3000, &t, "new task of a dead id");
    assert_task(&t, "task-0", 1, now - 1000, "again", "new task of a dead "
                "id");
    cr_assert_eq(dq_ack(q, &t), DQ_OK, "ack: %s", dq_errstr(q));
    dq_task_clear(&t);
    dq_close(q);
    redisFree(r);
    tl_teardown(&c);
}

/* ---- Through the binary: killed processes, dropped connections ---------- */

typedef struct outcome {
    int status;
    json_t *j;
} outcome;

/* Runs `$DQLAB run --quiet --json ARGS` (its own private redis-server) and
 * parses its stdout. */
static outcome run(const char *args)
{
    const char *d = getenv("DQLAB");
    char cmd[2048], *buf = NULL;
    size_t len = 0;
    outcome o = {-1, NULL};
    json_error_t je;

    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    snprintf(cmd, sizeof cmd, "'%s' run --quiet --json %s", d, args);
    o.status = tl_popen_read(cmd, &buf, &len);
    if (len > 0)
        o.j = json_loads(buf, 0, &je);
    free(buf);
    return o;
}

static long long num(const outcome *o, const char *key)
{
    cr_assert_not_null(o->j, "no JSON summary (exit %d)", o->status);
    json_t *v = json_object_get(o->j, key);
    cr_assert(json_is_integer(v), "summary has no integer '%s'", key);
    return (long long)json_integer_value(v);
}

Test(list, kill_after_claim_loses_only_that_task, .timeout = 60)
{
    outcome o = run("--strategy list --tasks 50 --consumers 1 "
                    "--delay-ms 0:200 --grace-ms 1000 "
                    "--fault kill-consumer:after-claim:1");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "kills"), 1);
    cr_assert_eq(num(&o, "enqueued"), 50);
    cr_assert_eq(num(&o, "lost"), 1);
    cr_assert_eq(num(&o, "delivered"), 49);
    cr_assert_eq(num(&o, "duplicates"), 0);
    json_decref(o.j);
}

Test(list_reliable, kill_after_claim_loses_nothing, .timeout = 60)
{
    outcome o = run("--strategy list-reliable --opt lease_ms=500 --tasks 60 "
                    "--consumers 2 --delay-ms 0:300 --grace-ms 3000 "
                    "--fault kill-consumer:after-claim:2");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_geq(num(&o, "kills"), 1);
    cr_assert_eq(num(&o, "enqueued"), 60);
    cr_assert_eq(num(&o, "lost"), 0);
    cr_assert_eq(num(&o, "delivered"), 60);
    json_decref(o.j);
}

Test(list_reliable, mover_stall_still_delivers, .timeout = 60)
{
    outcome o = run("--strategy list-reliable --tasks 50 --consumers 2 "
                    "--delay-ms 100:800 --grace-ms 2000 "
                    "--fault mover-stall:200");
    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "lost"), 0);
    cr_assert_eq(num(&o, "fault_windows"), 1);
    json_decref(o.j);
}

/* ---- One test per strategy ----------------------------------------------- */

#define LIST_TESTS(ident, name)                                               \
    Test(ident, one_mover_per_process, .timeout = 60)                         \
    {                                                                         \
        check_one_mover(name);                                                \
    }                                                                         \
    Test(ident, mover_survives_close, .timeout = 60)                          \
    {                                                                         \
        check_mover_survives_close(name);                                     \
    }                                                                         \
    Test(ident, one_round_trip_per_claim, .timeout = 60)                      \
    {                                                                         \
        check_round_trips(name);                                              \
    }                                                                         \
    Test(ident, separators_in_ids_and_payloads, .timeout = 30)                \
    {                                                                         \
        check_separators(name);                                               \
    }                                                                         \
    Test(ident, move_beyond_unpack_limit, .timeout = 120)                     \
    {                                                                         \
        check_big_move(name);                                                 \
    }

LIST_TESTS(list, "list")
LIST_TESTS(list_reliable, "list-reliable")
