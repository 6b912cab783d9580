/* test_failover.c -- primary, replica and Sentinel (harness/replset.h),
 * clients that follow Sentinel (rconn.h), and the wait=N option (dq.h).
 *
 * Each test starts its own trio (the failover kills its primary; tests
 * run in parallel), so none uses DQ_TEST_REDIS_PORT; the suite's .fini
 * stops it even after a failed assertion.  Clients find the primary only
 * through Sentinel (dq_config.sentinels), never by its port.
 *
 * What the failover tests rely on (https://redis.io/commands/wait/):
 * WAIT 1 returns 1 once the one replica acknowledged every write of the
 * connection so far, and with one replica the promoted server is that
 * replica: so every enqueue acknowledged with wait=1 is on the new
 * primary and is delivered after the failover -- 0 lost, asserted.  With
 * wait=0 the enqueues acknowledged in the last moment before the kill may
 * not have reached the replica: the test prints how many were lost and
 * asserts nothing about that number.
 *
 * The consumer's side: lua-lease (at-least-once) redelivers a task whose
 * claim reply (or claim confirmation) the kill cut off, after its lease.
 * lua (at-most-once) cannot: a claim that took its task on the primary but
 * whose reply or confirmation never came hands out nothing, and the task
 * is gone; that is the at-most-once trade, not a replication loss, and
 * its test allows exactly those.
 *
 * After the kill the new primary has no replica: with wait=1 nothing is
 * acknowledged until dq_replset_rejoin has started a new one.
 *
 * The figures printed (promotion time, first enqueue after the kill,
 * enqueue latency with and without wait=1) are measurements on a shared
 * machine and never asserted.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness/replset.h"
#include "../strategies/dq.h"
#include "../strategies/rconn.h"

#define MAX_TASKS 20000
#define BEFORE_KILL 200      /* acknowledged enqueues before the kill */
#define AFTER_FAILOVER 200   /* and after the first one past the kill */
#define LEASE_MS 1000
#define PROMOTE_TIMEOUT_MS 30000

static dq_replset g_rs;

static void cleanup(void)
{
    dq_replset_stop(&g_rs);
}

TestSuite(failover, .fini = cleanup, .timeout = 120);

static void start_trio(void)
{
    char err[512] = "";

    cr_assert_eq(dq_replset_start(&g_rs, NULL, err, sizeof err), 0,
                 "starting primary, replica and Sentinel: %s", err);
}

/* A handle on queue (through Sentinel) with the given "k=v" options. */
static dq_queue *open_q(const char *strategy, const char *queue,
                        const char *consumer, const char *const *kvs)
{
    dq_opt opts[DQ_MAX_OPTS];
    size_t n = 0;
    char err[256] = "";
    dq_config cfg = {.queue = queue,
                     .consumer = consumer,
                     .sentinels = g_rs.sentinels,
                     .sentinel_master = DQ_REPLSET_MASTER,
                     .opts = opts};
    dq_queue *q = NULL;

    for (; kvs != NULL && kvs[n] != NULL; n++)
        cr_assert_eq(dq_opt_parse(kvs[n], &opts[n], err, sizeof err), DQ_OK,
                     "%s", err);
    cfg.nopts = n;
    cr_assert_eq(dq_open(dq_strategy_find(strategy), &cfg, &q, err,
                         sizeof err), DQ_OK, "open %s: %s", strategy, err);
    return q;
}

/* A plain hiredis connection to 127.0.0.1:port (the replica, to look). */
static redisContext *direct(int port)
{
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);

    cr_assert(c != NULL && c->err == 0, "connect to port %d: %s", port,
              c ? c->errstr : "out of memory");
    redisSetTimeout(c, tv);
    return c;
}

static bool hexists(redisContext *c, const char *key, const char *field)
{
    redisReply *r = redisCommand(c, "HEXISTS %s %s", key, field);
    bool yes;

    cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER, "HEXISTS: %s",
              r && r->type == REDIS_REPLY_ERROR ? r->str : c->errstr);
    yes = r->integer == 1;
    freeReplyObject(r);
    return yes;
}

static bool answers(int port)
{
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    bool up = c != NULL && c->err == 0;

    if (c != NULL)
        redisFree(c);
    return up;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t median(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    return n ? v[n / 2] : 0;
}

static void queue_name(char *buf, size_t len, const char *check)
{
    snprintf(buf, len, "t-failover-%s-%d", check, (int)getpid());
}

/* ---- (a) the trio ------------------------------------------------------- */

Test(failover, trio_starts_replicates_and_stops, .timeout = 60)
{
    char queue[64], key[128], host[64], err[256];
    const char *wait1[] = {"wait=1", NULL};
    dq_redis_server parts[3];
    int port = 0;

    start_trio();
    parts[0] = g_rs.primary;
    parts[1] = g_rs.replica;
    parts[2] = g_rs.sentinel;
    cr_assert_eq(dq_sentinel_primary(g_rs.sentinels, DQ_REPLSET_MASTER, host,
                                     sizeof host, &port, err, sizeof err),
                 DQ_OK, "%s", err);
    cr_assert_eq(port, g_rs.primary.port, "Sentinel names port %d, the "
                 "primary is on %d", port, g_rs.primary.port);

    /* A write through Sentinel reaches the replica. */
    queue_name(queue, sizeof queue, "trio");
    dq_queue *q = open_q("lua", queue, "p", wait1);
    cr_assert_eq(dq_enqueue(q, "a", "x", 1, 0), DQ_OK, "%s", dq_errstr(q));
    redisContext *rep = direct(g_rs.replica.port);
    snprintf(key, sizeof key, "dq:{%s}:p", queue);
    cr_assert(hexists(rep, key, "a"), "the task is not on the replica");
    redisFree(rep);
    dq_close(q);

    dq_replset_stop(&g_rs);
    for (int i = 0; i < 3; i++) {
        struct stat st;

        cr_assert_eq(kill(parts[i].pid, 0), -1, "process %d still runs",
                     (int)parts[i].pid);
        cr_assert_eq(errno, ESRCH);
        cr_assert(!answers(parts[i].port), "port %d still answers",
                  parts[i].port);
        cr_assert_eq(stat(parts[i].dir, &st), -1, "%s is still there",
                     parts[i].dir);
    }
}

/* ---- (b, c) a failover under a steady stream ------------------------------ */

typedef struct run {
    const char *strategy;
    size_t payload_len;           /* bytes of big_payload sent per task */
    const char *wait;             /* "wait=0" / "wait=1" */
    char queue[64];
    dq_queue *prod, *cons;
    atomic_int stop_cons, prod_done;
    atomic_long acked_n;          /* acknowledged enqueues so far */
    atomic_long after_kill_n;     /* of which started after kill_mark */
    atomic_llong kill_mark_us;    /* dq_mono_us() just before the kill */
    long attempted;               /* ids 0..attempted-1 were tried */
    bool acked[MAX_TASKS];
    int64_t ok_start_us[MAX_TASKS], ok_end_us[MAX_TASKS];
    atomic_int delivered[MAX_TASKS];
    atomic_long claim_errors, enqueue_errors;
    atomic_long unconfirmed_claims; /* claims that returned DQ_EREPLICA */
    char first_error[256];
} run;

/* Payload bytes (the replica-lag runs send big tasks, so that what the
 * stopped replica cannot take stays in the primary's memory). */
#define LAG_PAYLOAD (128 * 1024)
static char big_payload[LAG_PAYLOAD];

static void *producer(void *arg)
{
    run *r = arg;
    char id[32];

    for (long i = 0; i < MAX_TASKS; i++) {
        int64_t t0;
        int rc;

        snprintf(id, sizeof id, "t%ld", i);
        r->attempted = i + 1;
        /* Not acknowledged: retried with the same id (idempotent). */
        for (int tries = 0;; tries++) {
            t0 = dq_mono_us();
            rc = dq_enqueue(r->prod, id, r->payload_len ? big_payload : id,
                            r->payload_len ? r->payload_len : strlen(id), 0);
            if (rc == DQ_OK)
                break;
            if (atomic_fetch_add(&r->enqueue_errors, 1) == 0)
                snprintf(r->first_error, sizeof r->first_error, "%s",
                         dq_errstr(r->prod));
            if (tries > 3000) { /* 30 s */
                atomic_store(&r->prod_done, 1);
                return NULL;
            }
            dq_sleep_us(10000);
        }
        r->ok_start_us[i] = t0;
        r->ok_end_us[i] = dq_mono_us();
        r->acked[i] = true;
        atomic_fetch_add(&r->acked_n, 1);
        if (atomic_load(&r->kill_mark_us) != 0 &&
            t0 > atomic_load(&r->kill_mark_us) &&
            atomic_fetch_add(&r->after_kill_n, 1) + 1 >= AFTER_FAILOVER)
            break;
        dq_sleep_us(1000); /* a steady stream, about 500/s */
    }
    atomic_store(&r->prod_done, 1);
    return NULL;
}

static void *consumer(void *arg)
{
    run *r = arg;

    while (!atomic_load(&r->stop_cons)) {
        dq_task t;
        int rc = dq_claim(r->cons, 50, &t);
        long i;

        if (rc == DQ_EMPTY)
            continue;
        if (rc != DQ_OK) {
            atomic_fetch_add(&r->claim_errors, 1);
            if (rc == DQ_EREPLICA)
                atomic_fetch_add(&r->unconfirmed_claims, 1);
            dq_sleep_us(10000);
            continue;
        }
        i = strtol(t.id + 1, NULL, 10);
        if (t.id[0] == 't' && i >= 0 && i < MAX_TASKS)
            atomic_fetch_add(&r->delivered[i], 1);
        (void)dq_ack(r->cons, &t); /* a lost ack: redelivered, fine */
        dq_task_clear(&t);
    }
    return NULL;
}

/* Acknowledged enqueues not delivered (yet). */
static long lost_now(run *r)
{
    long lost = 0;

    for (long i = 0; i < r->attempted; i++)
        if (r->acked[i] && atomic_load(&r->delivered[i]) == 0)
            lost++;
    return lost;
}

static bool has_option(const char *strategy, const char *name)
{
    const dq_optdef *d;

    for (size_t i = 0;
         (d = dq_strategy_option(dq_strategy_find(strategy), i)) != NULL; i++)
        if (strcmp(d->name, name) == 0)
            return true;
    return false;
}

static void *resume_replica(void *arg)
{
    dq_sleep_us(50000);
    kill(*(pid_t *)arg, SIGCONT);
    return NULL;
}

/* One run: stream, kill after BEFORE_KILL, carry on for AFTER_FAILOVER,
 * drain.  With lag_ms > 0 the replica is stopped (SIGSTOP) for lag_ms
 * before the kill and resumed 50 ms after it, and the tasks are big: what
 * the primary acknowledged meanwhile without WAIT is in its memory and in
 * socket buffers, not on the replica.  Returns the acknowledged enqueues
 * never delivered, after printing the figures. */
static long failover_run(run *r, const char *strategy, const char *wait,
                         int lag_ms)
{
    pthread_t tr;
    pid_t replica_pid;
    char lease[32], err[512] = "", err2[512] = "";
    /* A short WAIT timeout: until the replica rejoins, every wait=1 write
     * fails after it, and the producer retries. */
    const char *kvs[5] = {wait, "wait_timeout_ms=200", NULL, NULL, NULL};
    size_t k = 2;
    pthread_t tp, tc;
    dq_failover_times ft;
    int64_t drain_until, first_ok = INT64_MAX;
    long lost, redelivered = 0, after = 0;

    memset(r, 0, sizeof *r);
    r->payload_len = lag_ms > 0 ? LAG_PAYLOAD : 0;
    r->strategy = strategy;
    r->wait = wait;
    queue_name(r->queue, sizeof r->queue, strategy);
    snprintf(lease, sizeof lease, "lease_ms=%d", LEASE_MS);
    if (has_option(strategy, "poll_ms"))
        kvs[k++] = "poll_ms=10";
    if (has_option(strategy, "lease_ms"))
        kvs[k++] = lease;
    r->prod = open_q(strategy, r->queue, "producer", kvs);
    r->cons = open_q(strategy, r->queue, "consumer", kvs);
    cr_assert_eq(pthread_create(&tc, NULL, consumer, r), 0);
    cr_assert_eq(pthread_create(&tp, NULL, producer, r), 0);
    while (atomic_load(&r->acked_n) < BEFORE_KILL &&
           !atomic_load(&r->prod_done))
        dq_sleep_us(1000);

    replica_pid = g_rs.replica.pid;
    if (lag_ms > 0) {
        kill(replica_pid, SIGSTOP);
        dq_sleep_us(lag_ms * 1000LL);
        cr_assert_eq(pthread_create(&tr, NULL, resume_replica, &replica_pid),
                     0);
    }
    atomic_store(&r->kill_mark_us, dq_mono_us());
    int frc = dq_replset_failover(&g_rs, PROMOTE_TIMEOUT_MS, &ft, err,
                                  sizeof err);
    /* The killed server comes back as a replica of the new primary: with
     * wait=1 nothing is acknowledged before. */
    int jrc = frc == 0 ? dq_replset_rejoin(&g_rs, err2, sizeof err2) : -1;
    int64_t rejoined_us = dq_mono_us();
    if (lag_ms > 0)
        pthread_join(tr, NULL);
    pthread_join(tp, NULL);
    /* Drain: a lease to run out, a claim poll, and room for a slow CI. */
    drain_until = dq_mono_us() + (LEASE_MS + 5000) * 1000LL;
    while (lost_now(r) > 0 && dq_mono_us() < drain_until)
        dq_sleep_us(20000);
    atomic_store(&r->stop_cons, 1);
    pthread_join(tc, NULL);
    cr_assert_eq(frc, 0, "%s", err);
    cr_assert_eq(jrc, 0, "%s", err2);

    for (long i = 0; i < r->attempted; i++) {
        int d = atomic_load(&r->delivered[i]);

        if (d > 1)
            redelivered += d - 1;
        if (r->acked[i] && r->ok_start_us[i] > ft.kill_us) {
            after++;
            if (r->ok_end_us[i] < first_ok)
                first_ok = r->ok_end_us[i];
        }
    }
    for (long i = r->attempted; i < MAX_TASKS; i++)
        cr_assert_eq(atomic_load(&r->delivered[i]), 0,
                     "t%ld delivered but never enqueued", i);
    cr_assert_gt(after, 0, "no enqueue succeeded after the failover (%ld "
                 "errors; first: %s)", atomic_load(&r->enqueue_errors),
                 r->first_error);
    lost = lost_now(r);
    fprintf(stderr,
            "failover %s %s%s: kill to promotion %lld ms, to the replica "
            "rejoined %lld ms, to the first enqueue acknowledged by the "
            "new primary %lld ms; %ld acknowledged enqueues, %ld lost, "
            "%ld further deliveries; %ld enqueue and %ld claim errors on "
            "the way (%ld claims not confirmed by a replica)\n",
            strategy, wait, lag_ms > 0 ? " (replica lagging)" : "",
            (long long)ft.promotion_ms,
            (long long)((rejoined_us - ft.kill_us) / 1000),
            (long long)((first_ok - ft.kill_us) / 1000),
            atomic_load(&r->acked_n), lost, redelivered,
            atomic_load(&r->enqueue_errors), atomic_load(&r->claim_errors),
            atomic_load(&r->unconfirmed_claims));
    dq_close(r->prod);
    dq_close(r->cons);
    return lost;
}

static run g_run; /* big: not on the test's stack */

Test(failover, wait1_loses_no_acknowledged_enqueue, .timeout = 120)
{
    start_trio();
    cr_assert_eq(failover_run(&g_run, "lua-lease", "wait=1", 0), 0,
                 "acknowledged enqueues lost with wait=1 and one replica");
}

/* list-reliable: consumers block in BLMOVE and a mover thread per
 * consumer moves due tasks on connections of its own; all of them must
 * find the new primary through Sentinel. */
Test(failover, wait1_list_reliable_loses_no_acknowledged_enqueue,
     .timeout = 120)
{
    start_trio();
    cr_assert_eq(failover_run(&g_run, "list-reliable", "wait=1", 0), 0,
                 "acknowledged enqueues lost with wait=1 and one replica");
}

/* The case WAIT exists for: the replica falls behind (stopped for 300 ms
 * while big tasks stream in) and the primary dies before it caught up.
 * With wait=1 nothing was acknowledged that the replica lacks. */
Test(failover, wait1_loses_nothing_while_the_replica_lags, .timeout = 120)
{
    start_trio();
    cr_assert_eq(failover_run(&g_run, "lua-lease", "wait=1", 300), 0,
                 "acknowledged enqueues lost with wait=1 and one replica");
}

/* The same with wait=0: printed (usually many are lost), not asserted. */
Test(failover, wait0_loses_what_the_lagging_replica_lacks, .timeout = 120)
{
    start_trio();
    (void)failover_run(&g_run, "lua-lease", "wait=0", 300);
}

/* lua is at-most-once: a claim that took a task and could not be
 * confirmed hands out nothing, and the task is gone -- the one in flight
 * at the kill, and every claim between the promotion and the rejoin
 * (DQ_EREPLICA: no replica to confirm it).  Those are the only losses
 * allowed; an acknowledged enqueue that is missing would be one more. */
Test(failover, wait1_lua_loses_only_unconfirmed_claims, .timeout = 120)
{
    long lost;

    start_trio();
    lost = failover_run(&g_run, "lua", "wait=1", 0);
    cr_assert_leq(lost, atomic_load(&g_run.unconfirmed_claims) + 1,
                  "more acknowledged enqueues lost than claims the failover "
                  "left unconfirmed (at-most-once)");
}

Test(failover, wait0_counts_lost_enqueues, .timeout = 120)
{
    start_trio();
    /* Printed, not asserted: usually a few, possibly 0. */
    (void)failover_run(&g_run, "lua-lease", "wait=0", 0);
}

/* ---- (d) more replicas asked for than exist -------------------------------- */

Test(failover, wait_beyond_replicas_fails_after_timeout, .timeout = 60)
{
    char queue[64];
    const char *kvs[] = {"wait=2", "wait_timeout_ms=300", NULL};
    int64_t t0, took_ms;
    dq_task t;

    start_trio();
    queue_name(queue, sizeof queue, "wait2");
    dq_queue *q = open_q("lua", queue, "p", kvs);
    t0 = dq_mono_us();
    int rc = dq_enqueue(q, "a", "x", 1, 0);
    took_ms = (dq_mono_us() - t0) / 1000;
    cr_assert_eq(rc, DQ_EREPLICA, "rc %d: %s", rc, dq_errstr(q));
    cr_assert(strstr(dq_errstr(q), "enqueue a: 1 of 2 replicas "
                                   "acknowledged within 300 ms") != NULL,
              "message: %s", dq_errstr(q));
    /* WAIT blocks for its whole timeout when replicas are missing. */
    cr_assert_geq(took_ms, 300 - 1, "returned after %lld ms",
                  (long long)took_ms);
    /* Not acknowledged is not "not written": the primary holds it, and a
     * claim of it is not confirmed either and hands out nothing. */
    cr_assert_eq(dq_pending(q), 1);
    rc = dq_claim(q, 1000, &t);
    cr_assert_eq(rc, DQ_EREPLICA, "claim rc %d: %s", rc, dq_errstr(q));
    cr_assert(strstr(dq_errstr(q), "claim a:") != NULL, "%s", dq_errstr(q));
    cr_assert_null(t.payload);
    cr_assert_eq(t.id[0], '\0');
    dq_close(q);
}

/* ---- the cost of wait=1, and what it buys -------------------------------- */

Test(failover, wait1_enqueue_is_on_the_replica, .timeout = 60)
{
    enum { N = 300 };
    char queue[64], key[128], id[32];
    const char *w0[] = {"wait=0", NULL}, *w1[] = {"wait=1", NULL};
    int64_t lat0[N], lat1[N];
    int missing0 = 0;

    start_trio();
    queue_name(queue, sizeof queue, "cost");
    dq_queue *q0 = open_q("lua", queue, "w0", w0);
    dq_queue *q1 = open_q("lua", queue, "w1", w1);
    redisContext *rep = direct(g_rs.replica.port);
    snprintf(key, sizeof key, "dq:{%s}:p", queue);
    /* Alternating, so both see the same machine at the same time. */
    for (int i = 0; i < N; i++) {
        int64_t t0 = dq_mono_us();

        snprintf(id, sizeof id, "w1-%d", i);
        cr_assert_eq(dq_enqueue(q1, id, "x", 1, 0), DQ_OK, "%s",
                     dq_errstr(q1));
        lat1[i] = dq_mono_us() - t0;
        cr_assert(hexists(rep, key, id), "%s acknowledged with wait=1 but "
                  "not on the replica", id);
        snprintf(id, sizeof id, "w0-%d", i);
        t0 = dq_mono_us();
        cr_assert_eq(dq_enqueue(q0, id, "x", 1, 0), DQ_OK, "%s",
                     dq_errstr(q0));
        lat0[i] = dq_mono_us() - t0;
        missing0 += !hexists(rep, key, id);
    }
    fprintf(stderr, "wait cost (lua enqueue, one replica, %d each): median "
            "%lld us with wait=0, %lld us with wait=1; with wait=0, %d of "
            "%d were not yet on the replica when the enqueue returned\n", N,
            (long long)median(lat0, N), (long long)median(lat1, N),
            missing0, N);
    redisFree(rep);
    dq_close(q0);
    dq_close(q1);
}

/* ---- a demoted primary is not written to ----------------------------------- */

/* The primary turned into a replica behind our back (Sentinel does not
 * know yet: it reads INFO every 10 s, so for the moment it still names
 * the old primary).  The handle's next write gets READONLY, which must
 * come back as DQ_EIO and make the handle ask Sentinel again; the server
 * Sentinel names is then refused by the ROLE check instead of being
 * written to. */
Test(failover, demoted_primary_is_refused, .timeout = 60)
{
    char queue[64];
    const char *w0[] = {NULL};
    redisContext *c;
    redisReply *r;

    start_trio();
    queue_name(queue, sizeof queue, "demoted");
    dq_queue *q = open_q("lua", queue, "p", w0);
    cr_assert_eq(dq_enqueue(q, "a", "x", 1, 0), DQ_OK, "%s", dq_errstr(q));
    c = direct(g_rs.replica.port);
    r = redisCommand(c, "REPLICAOF NO ONE");
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    redisFree(c);
    c = direct(g_rs.primary.port);
    r = redisCommand(c, "REPLICAOF 127.0.0.1 %d", g_rs.replica.port);
    cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);

    int rc = dq_enqueue(q, "b", "x", 1, 0);
    cr_assert_eq(rc, DQ_EIO, "rc %d: %s", rc, dq_errstr(q));
    cr_assert(strstr(dq_errstr(q), "no longer the primary: READONLY") != NULL,
              "%s", dq_errstr(q));
    rc = dq_enqueue(q, "b", "x", 1, 0);
    cr_assert_eq(rc, DQ_EIO, "rc %d: %s", rc, dq_errstr(q));
    cr_assert(strstr(dq_errstr(q), "is a slave, not the primary") != NULL,
              "%s", dq_errstr(q));
    redisFree(c);
    c = direct(g_rs.replica.port); /* the primary now */
    r = redisCommand(c, "HEXISTS dq:{%s}:p b", queue);
    cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 0,
              "b was written somewhere");
    freeReplyObject(r);
    redisFree(c);
    dq_close(q);
}
