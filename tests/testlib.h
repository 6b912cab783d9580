/* testlib.h -- helpers shared by the Criterion test binaries.
 *
 * Header-only on purpose: the Makefile links every tests/test_*.c into its
 * own binary with build/<variant>/libdq.a alone, so shared test code cannot
 * live in a separate .c file without touching the link rule.  Every
 * function is `static` and marked unused, so a test file that includes this
 * header and uses half of it still builds with -Wall -Wextra -Werror.
 *
 * The environment contract (set by tests/run.sh):
 *   DQ_TEST_REDIS_PORT  port of the private redis-server on 127.0.0.1 that
 *                       run.sh started for the whole run.  A test of a
 *                       strategy that needs Redis FAILS when it is unset:
 *                       a missing Redis must never look like a pass.
 *   DQLAB               path of the dqlab binary (for CLI tests).
 *
 * Criterion runs each test in its own process, several at once, so every
 * test gets its own queue name ("t-<strategy>-<check>-<pid>") and purges
 * it before and after; nothing here flushes the server.
 *
 * Criterion's assertions longjmp out of the test function, which is only
 * valid on the test's own thread: consumer threads (tl_run_consumers)
 * record what happened and the test thread asserts afterwards.
 */
#ifndef DQ_TESTLIB_H
#define DQ_TESTLIB_H

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../strategies/dq.h"

#define TL_FN static __attribute__((unused))

/* Generous slack for "returns within its timeout" checks: the suite also
 * runs under AddressSanitizer on a 2-core CI machine. */
#define TL_SLACK_MS 2000

/* ---- Reading what a file or a command wrote ---------------------------- */

/* The rest of stream f, into a malloc'd NUL-ended buffer (the caller frees
 * it; "" when f is at its end), its length in *len when len is not NULL.
 * Aborts the test when out of memory. */
TL_FN char *tl_slurp(FILE *f, size_t *len)
{
    char *buf = NULL, chunk[4096];
    size_t n = 0, k;
    FILE *m = open_memstream(&buf, &n);
    cr_assert_not_null(m, "open_memstream");
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, k, m);
    fclose(m);
    if (len != NULL)
        *len = n;
    return buf;
}

/* The whole file at path (tl_slurp: the caller frees it); aborts the test
 * when it cannot be opened. */
TL_FN char *tl_read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char *buf = tl_slurp(f, NULL);
    fclose(f);
    return buf;
}

/* Runs cmd through the shell with popen: its whole stdout into *out
 * (tl_slurp: the caller frees it), and returns its exit status, 128 when
 * it did not exit normally. */
TL_FN int tl_popen_read(const char *cmd, char **out, size_t *len)
{
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f, "popen %s", cmd);
    *out = tl_slurp(f, len);
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* ---- Environment ------------------------------------------------------- */

/* Port of the test Redis from DQ_TEST_REDIS_PORT.  Aborts the current test
 * (failure, not skip) when it is unset or not a port number. */
TL_FN int tl_redis_port(void)
{
    const char *p = getenv("DQ_TEST_REDIS_PORT");
    if (p == NULL || *p == '\0')
        cr_assert_fail("DQ_TEST_REDIS_PORT is not set: run the tests through "
                       "tests/run.sh (make test), which starts a private Redis");
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > 65535)
        cr_assert_fail("DQ_TEST_REDIS_PORT='%s' is not a port number", p);
    return (int)v;
}

/* The registered strategy called `name`; aborts the test when there is
 * none (an instantiation naming a strategy that is not in registry.c). */
TL_FN const dq_strategy *tl_strategy(const char *name)
{
    const dq_strategy *s = dq_strategy_find(name);
    if (s == NULL)
        cr_assert_fail("strategy '%s' is not registered in "
                       "strategies/registry.c", name);
    return s;
}

/* True when strategy s accepts an option called `name` (looked up in
 * s->options, never by the strategy's name). */
TL_FN bool tl_has_option(const dq_strategy *s, const char *name)
{
    if (s->options == NULL)
        return false;
    for (const dq_optdef *d = s->options; d->name != NULL; d++)
        if (strcmp(d->name, name) == 0)
            return true;
    return false;
}

/* ---- One test's queue -------------------------------------------------- */

/* Everything a test needs to open handles on its own queue.  Fill with
 * tl_setup(), end with tl_teardown(). */
typedef struct tl_ctx {
    const dq_strategy *s;
    char queue[65];
    int port;              /* 0 when the strategy does not need Redis */
    dq_local *local;       /* shared by every handle of this test */
    dq_opt opts[DQ_MAX_OPTS];
    size_t nopts;
} tl_ctx;

/* Adds option key=val to every handle opened on ctx from now on. */
TL_FN void tl_set_opt(tl_ctx *c, const char *key, const char *val)
{
    cr_assert_lt(c->nopts, (size_t)DQ_MAX_OPTS, "too many options");
    dq_opt *o = &c->opts[c->nopts++];
    snprintf(o->key, sizeof(o->key), "%s", key);
    snprintf(o->val, sizeof(o->val), "%s", val);
}

/* A config for ctx's queue; `consumer` may be NULL.  The returned struct
 * points into ctx (options, queue name). */
TL_FN dq_config tl_config(tl_ctx *c, const char *consumer)
{
    dq_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.queue = c->queue;
    cfg.redis_host = "127.0.0.1";
    cfg.redis_port = c->port;
    cfg.opts = c->opts;
    cfg.nopts = c->nopts;
    cfg.local = c->local;
    cfg.consumer = consumer;
    return cfg;
}

/* Opens a handle on ctx's queue (consumer: the owner's name for per-
 * consumer keys, may be NULL); aborts the test with dq_open's message when
 * it fails.  The caller closes it with dq_close(). */
TL_FN dq_queue *tl_open_as(tl_ctx *c, const char *consumer)
{
    dq_config cfg = tl_config(c, consumer);
    dq_queue *q = NULL;
    char err[256] = "";
    int rc = dq_open(c->s, &cfg, &q, err, sizeof(err));
    if (rc != DQ_OK)
        cr_assert_fail("%s: dq_open(queue=%s, port=%d) = %s: %s",
                       c->s->name, c->queue, c->port, dq_result_name(rc),
                       err);
    cr_assert_not_null(q, "%s: dq_open returned DQ_OK without a handle",
                       c->s->name);
    return q;
}

/* tl_open_as() without a consumer name. */
TL_FN dq_queue *tl_open(tl_ctx *c)
{
    return tl_open_as(c, NULL);
}

/* Purges ctx's queue through a fresh handle. */
TL_FN void tl_purge(tl_ctx *c)
{
    dq_queue *q = tl_open(c);
    int rc = dq_purge(q);
    cr_assert_eq(rc, DQ_OK, "%s: purge = %s: %s", c->s->name,
                 dq_result_name(rc), dq_errstr(q));
    dq_close(q);
}

/* Looks up strategy `name`, takes the Redis port when it needs Redis (and
 * fails the test when the port is missing), names the queue
 * "t-<name>-<check>-<pid>", creates the dq_local and purges the queue. */
TL_FN void tl_setup(tl_ctx *c, const char *name, const char *check)
{
    memset(c, 0, sizeof(*c));
    c->s = tl_strategy(name);
    /* Port 0 for the others: a strategy that talks to Redis without
     * declaring DQ_G_NEEDS_REDIS fails instead of passing by luck. */
    if (c->s->flags & DQ_G_NEEDS_REDIS)
        c->port = tl_redis_port();
    snprintf(c->queue, sizeof(c->queue), "t-%s-%s-%ld", name, check,
             (long)getpid());
    c->local = dq_local_new();
    cr_assert_not_null(c->local, "dq_local_new failed");
    tl_purge(c);
}

/* Purges the queue and frees the dq_local.  Call after closing every
 * handle of the test. */
TL_FN void tl_teardown(tl_ctx *c)
{
    tl_purge(c);
    dq_local_free(c->local);
    c->local = NULL;
}

/* ---- Enqueue and claim ------------------------------------------------- */

/* Enqueues one task (payload: len bytes, any content; due_ms: ms since the
 * epoch); aborts the test on any error code. */
TL_FN void tl_enqueue(dq_queue *q, const char *id, const void *payload,
                      size_t len, int64_t due_ms)
{
    int rc = dq_enqueue(q, id, payload, len, due_ms);
    cr_assert_eq(rc, DQ_OK, "%s: enqueue(%s, due %lld) = %s: %s",
                 q->s->name, id, (long long)due_ms, dq_result_name(rc),
                 dq_errstr(q));
}

/* What one claim returned, copied out of the dq_task. */
typedef struct tl_got {
    int rc;
    char id[DQ_ID_MAX];
    int64_t due_ms;
    int64_t wall_us;      /* dq_wall_us() right after claim returned */
    int64_t elapsed_ms;   /* how long claim took (monotonic) */
} tl_got;

/* Claims with timeout_ms; on DQ_OK acks the task (so lease strategies do
 * not redeliver it) and, if payload/len are not NULL, hands over the
 * payload (caller frees).  Returns DQ_OK or DQ_EMPTY; aborts the test on
 * any error code. */
TL_FN tl_got tl_claim_p(dq_queue *q, int64_t timeout_ms,
                        unsigned char **payload, size_t *len)
{
    tl_got g;
    dq_task t;
    memset(&g, 0, sizeof(g));
    memset(&t, 0, sizeof(t));
    int64_t t0 = dq_mono_us();
    g.rc = dq_claim(q, timeout_ms, &t);
    g.wall_us = dq_wall_us();
    g.elapsed_ms = (dq_mono_us() - t0) / 1000;
    cr_assert(g.rc == DQ_OK || g.rc == DQ_EMPTY,
              "%s: claim(%lld ms) = %s: %s", q->s->name,
              (long long)timeout_ms, dq_result_name(g.rc), dq_errstr(q));
    if (g.rc == DQ_OK) {
        snprintf(g.id, sizeof(g.id), "%s", t.id);
        g.due_ms = t.due_ms;
        int arc = dq_ack(q, &t);
        cr_assert_eq(arc, DQ_OK, "%s: ack(%s) = %s: %s", q->s->name, t.id,
                     dq_result_name(arc), dq_errstr(q));
        if (payload != NULL) {
            *payload = t.payload;
            *len = t.payload_len;
            t.payload = NULL;
            t.payload_len = 0;
        }
    }
    dq_task_clear(&t);
    return g;
}

TL_FN tl_got tl_claim(dq_queue *q, int64_t timeout_ms)
{
    return tl_claim_p(q, timeout_ms, NULL, NULL);
}

/* Asserts that `g` (a DQ_OK claim) was not delivered before due_ms, the due
 * time the test gave to enqueue.  The lab clock has no offset here, so the
 * wall clock at claim return must be at or after the due time. */
TL_FN void tl_assert_not_early(const dq_strategy *s, const tl_got *g,
                               int64_t due_ms)
{
    cr_assert_geq(g->wall_us, due_ms * 1000,
                  "%s: task %s delivered %.3f ms before its due time",
                  s->name, g->id, (double)(due_ms * 1000 - g->wall_us) / 1e3);
}

/* A Fisher-Yates shuffle of v[0..n) with rand_r(seed). */
TL_FN void tl_shuffle(int *v, int n, unsigned *seed)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rand_r(seed) % (unsigned)(i + 1));
        int tmp = v[i];
        v[i] = v[j];
        v[j] = tmp;
    }
}

/* ---- Concurrent consumers ---------------------------------------------- */

/* Task ids "task-<n>" for n in [0, ntasks). */
TL_FN int tl_task_index(const char *id, int ntasks)
{
    int n;
    char tail;
    if (sscanf(id, "task-%d%c", &n, &tail) != 1 || n < 0 || n >= ntasks)
        return -1;
    return n;
}

/* tl_setup, then, when the strategy lacks guarantee flag `flag` (a DQ_G_*
 * bit, flag_name its spelling for the message), tears down and skips the
 * test with "<name> does not declare <flag_name>".  Returns only when the
 * flag is declared. */
TL_FN void tl_setup_need_flag(tl_ctx *c, const char *name, const char *check,
                              unsigned flag, const char *flag_name)
{
    tl_setup(c, name, check);
    if (!(c->s->flags & flag)) {
        tl_teardown(c);
        cr_skip_test("%s does not declare %s", name, flag_name);
    }
}

/* Claims n tasks named task-<i> (i in [0, n), due time due[i] ms, as given
 * to enqueue) from q, allowing 3 s per claim, and asserts each: found,
 * a known id, due_ms as enqueued, due_ms >= the previous one (due order),
 * not early (tl_assert_not_early); then that a 200 ms claim finds nothing.
 * label names the run in messages (e.g. the strategy name). */
TL_FN void tl_claim_in_due_order(const tl_ctx *c, dq_queue *q, int n,
                                 const int64_t *due, const char *label)
{
    int64_t last_due = INT64_MIN;
    for (int k = 0; k < n; k++) {
        tl_got g = tl_claim(q, 3000);
        cr_assert_eq(g.rc, DQ_OK, "%s: claim %d of %d found nothing in 3 s",
                     label, k + 1, n);
        int i = tl_task_index(g.id, n);
        cr_assert_geq(i, 0, "%s: unexpected id '%s'", label, g.id);
        cr_assert_eq(g.due_ms, due[i], "%s: %s has due_ms %lld, enqueued "
                     "with %lld", label, g.id, (long long)g.due_ms,
                     (long long)due[i]);
        cr_assert_geq(g.due_ms, last_due, "%s: %s (due %lld) delivered after "
                      "a task due %lld", label, g.id, (long long)g.due_ms,
                      (long long)last_due);
        tl_assert_not_early(c->s, &g, due[i]);
        last_due = g.due_ms;
    }
    tl_got g = tl_claim(q, 200);
    cr_assert_eq(g.rc, DQ_EMPTY, "%s: extra delivery %s", label, g.id);
}

typedef struct tl_consumers {
    dq_queue *q;               /* this consumer's own handle */
    pthread_barrier_t *start;
    pthread_mutex_t *mu;
    int *seen;                 /* per task index, shared */
    int ntasks;
    int64_t idle_ms;           /* stop after a claim this long finds none */
    /* results, read by the test thread after join */
    int claimed;
    int bad_ids;
    int err_rc;
    char err[256];
} tl_consumers;

TL_FN void *tl_consumer_main(void *arg)
{
    tl_consumers *w = arg;
    pthread_barrier_wait(w->start);
    for (;;) {
        dq_task t;
        memset(&t, 0, sizeof(t));
        int rc = dq_claim(w->q, w->idle_ms, &t);
        if (rc == DQ_EMPTY)
            break;
        if (rc != DQ_OK) {
            w->err_rc = rc;
            snprintf(w->err, sizeof(w->err), "claim = %s: %s",
                     dq_result_name(rc), dq_errstr(w->q));
            break;
        }
        int idx = tl_task_index(t.id, w->ntasks);
        pthread_mutex_lock(w->mu);
        if (idx >= 0)
            w->seen[idx]++;
        else
            w->bad_ids++;
        pthread_mutex_unlock(w->mu);
        w->claimed++;
        rc = dq_ack(w->q, &t);
        dq_task_clear(&t);
        if (rc != DQ_OK) {
            w->err_rc = rc;
            snprintf(w->err, sizeof(w->err), "ack = %s: %s",
                     dq_result_name(rc), dq_errstr(w->q));
            break;
        }
    }
    return NULL;
}

/* Enqueues ntasks tasks "task-<n>" all due now, then runs nconsumers
 * threads, each with its own handle, started together, each claiming (and
 * acking) until a claim of idle_ms finds nothing.  seen[n] (ntasks ints,
 * caller's) receives how many times task n was delivered.  Aborts the test
 * on any error a consumer met.  Returns the total number of deliveries. */
TL_FN int tl_run_consumers(tl_ctx *c, int nconsumers, int ntasks,
                           int64_t idle_ms, int *seen)
{
    enum { TL_MAX_CONSUMERS = 64 };
    cr_assert(nconsumers > 0 && nconsumers <= TL_MAX_CONSUMERS);
    memset(seen, 0, sizeof(int) * (size_t)ntasks);

    dq_queue *prod = tl_open_as(c, "producer");
    int64_t now = dq_wall_us() / 1000;
    for (int i = 0; i < ntasks; i++) {
        char id[32];
        snprintf(id, sizeof(id), "task-%d", i);
        tl_enqueue(prod, id, id, strlen(id), now);
    }
    /* prod stays open until the consumers are done: an in-process queue
     * (heap) lives only while some handle on it is open. */

    pthread_barrier_t start;
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_barrier_init(&start, NULL, (unsigned)nconsumers);
    tl_consumers w[TL_MAX_CONSUMERS];
    pthread_t th[TL_MAX_CONSUMERS];
    memset(w, 0, sizeof(w));
    for (int i = 0; i < nconsumers; i++) {
        char name[32];
        snprintf(name, sizeof(name), "consumer-%d", i);
        w[i].q = tl_open_as(c, name);
        w[i].start = &start;
        w[i].mu = &mu;
        w[i].seen = seen;
        w[i].ntasks = ntasks;
        w[i].idle_ms = idle_ms;
    }
    for (int i = 0; i < nconsumers; i++) {
        int prc = pthread_create(&th[i], NULL, tl_consumer_main, &w[i]);
        cr_assert_eq(prc, 0, "pthread_create: %s", strerror(prc));
    }
    int total = 0, bad = 0;
    for (int i = 0; i < nconsumers; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < nconsumers; i++) {
        total += w[i].claimed;
        bad += w[i].bad_ids;
        dq_close(w[i].q);
    }
    dq_close(prod);
    for (int i = 0; i < nconsumers; i++)
        cr_assert_eq(w[i].err_rc, DQ_OK, "%s: consumer-%d: %s", c->s->name,
                     i, w[i].err);
    cr_assert_eq(bad, 0, "%s: %d deliveries carried an id never enqueued",
                 c->s->name, bad);
    return total;
}

/* Counts tasks never delivered and extra deliveries in seen[0..ntasks);
 * writes the first few offenders into buf for assertion messages. */
TL_FN void tl_count_seen(const int *seen, int ntasks, int *lost, int *dups,
                         char *buf, size_t buflen)
{
    *lost = 0;
    *dups = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < ntasks; i++) {
        if (seen[i] == 0)
            (*lost)++;
        else if (seen[i] > 1)
            *dups += seen[i] - 1;
        if (seen[i] != 1 && used + 32 < buflen && *lost + *dups <= 8)
            used += (size_t)snprintf(buf + used, buflen - used,
                                     " task-%d x%d", i, seen[i]);
    }
}

#endif /* DQ_TESTLIB_H */
