/* ceiling.c -- the pipelined ZADD / ZPOPMIN ceiling of a Redis server,
 * redis-benchmark's references, and the harness's own no-op queue
 * (ceiling.h).
 *
 * Why measure it ourselves: a strategy's tasks/s alone says little (a
 * faster machine, a busier one), while a fraction of what the same server
 * does for the bare command in the same run is comparable across machines.
 * dqlab's own loop goes through hiredis like the strategies do, so it
 * counts the client's formatting and parsing as they pay it;
 * redis-benchmark (C, its own event loop) shows what the server alone does.
 *
 * The connection is made by dq_redis_connect (rconn.h) on a bare handle, so
 * AUTH, SELECT and the error messages are the strategies' own, and the
 * commands go through dq_redis_pipeline, the strategies' own writer: one
 * write per pipeline, replies in order
 * (https://redis.io/docs/manual/pipelining/).
 *
 * The no-op queue is the harness's yardstick, not a strategy: a FIFO ring
 * under one adaptive mutex and one condition variable (a claimer waits
 * only while it is empty; the push into an empty ring wakes one waiter,
 * who wakes the next while tasks are left, as the heap hands over), so
 * that what a trial through it costs is the harness's own work per task:
 * ids and payloads made and checked, the E, D and A records, the progress
 * bitmaps, the clock reads.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../strategies/rconn.h"
#include "ceiling.h"

/* Sends the n commands of argv/lens (each argc arguments) in one pipeline
 * through dq_redis_pipeline (rconn.h: the strategies' own command writer)
 * and reads n replies; checks each with check(reply) when given.  Returns
 * 0 or -1 with err. */
static int pipeline_run(dq_queue *q, redisContext *c, int n, int argc,
                        const char **argv, const size_t *lens,
                        size_t stride, const char *what,
                        int (*check)(const redisReply *), char *err,
                        size_t errlen)
{
    dq_redis_argv *cmds = calloc((size_t)n, sizeof *cmds);
    redisReply **rs = calloc((size_t)n, sizeof *rs);
    int ret = -1;

    if (cmds == NULL || rs == NULL) {
        snprintf(err, errlen, "%s: out of memory", what);
        goto out;
    }
    for (int i = 0; i < n; i++)
        cmds[i] = (dq_redis_argv){argc, argv + (size_t)i * stride,
                                  lens + (size_t)i * stride};
    if (dq_redis_pipeline(q, c, (size_t)n, cmds, rs) != DQ_OK) {
        snprintf(err, errlen, "%s: %s", what, q->err);
        goto out;
    }
    ret = 0;
    for (int i = 0; i < n; i++) {
        const redisReply *r = rs[i];
        int bad = r->type == REDIS_REPLY_ERROR ? 1 : check ? check(r) : 0;
        if (bad && ret == 0) {
            snprintf(err, errlen, "%s: %s", what,
                     r->type == REDIS_REPLY_ERROR ? r->str
                                                  : "unexpected reply");
            ret = -1;
        }
        freeReplyObject(rs[i]);
    }
out:
    free(cmds);
    free(rs);
    return ret;
}

/* ZPOPMIN key -> [member, score]; an empty array means the set ran dry. */
static int check_popped(const redisReply *r)
{
    return !(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
}

int dq_ceiling_measure(const dq_redis_target *t, int64_t members,
                       int pipeline, dq_ceiling *out, char *err,
                       size_t errlen)
{
    int ret = -1;
    redisContext *c = NULL;
    dq_queue q;
    char key[160];
    char (*buf)[2][24] = NULL;
    const char **argv = NULL;
    size_t *lens = NULL;

    memset(out, 0, sizeof *out);
    if (members < 1 || pipeline < 1 || pipeline > 100000) {
        snprintf(err, errlen, "ceiling: members %" PRId64 " / pipeline %d "
                 "out of range", members, pipeline);
        return -1;
    }
    memset(&q, 0, sizeof q);
    snprintf(q.queue, sizeof q.queue, "bench-ceiling-%ld", (long)getpid());
    q.cfg.queue = q.queue;
    q.cfg.redis_host = t->host;
    q.cfg.redis_port = t->port;
    q.cfg.redis_user = t->user[0] ? t->user : NULL;
    q.cfg.redis_password = t->password[0] ? t->password : NULL;
    q.cfg.redis_db = t->db;
    if (dq_redis_connect(&q, NULL, 30000, &c) != DQ_OK) {
        snprintf(err, errlen, "ceiling: %s", q.err);
        return -1;
    }
    dq_redis_key(&q, DQ_ZH_ZSET, key, sizeof key);
    buf = calloc((size_t)pipeline, sizeof *buf);
    argv = calloc((size_t)pipeline * 4, sizeof *argv);
    lens = calloc((size_t)pipeline * 4, sizeof *lens);
    if (buf == NULL || argv == NULL || lens == NULL) {
        snprintf(err, errlen, "ceiling: out of memory");
        goto done;
    }
    freeReplyObject(redisCommand(c, "DEL %s", key));

    /* ZADD key <i> m<i>, pipelines of `pipeline`. */
    int64_t t0 = dq_mono_us();
    for (int64_t i = 0; i < members; i += pipeline) {
        int n = (int)(members - i < pipeline ? members - i : pipeline);
        for (int k = 0; k < n; k++) {
            const char **a = argv + (size_t)k * 4;
            size_t *l = lens + (size_t)k * 4;
            int sl = snprintf(buf[k][0], sizeof buf[k][0], "%" PRId64, i + k);
            int ml = snprintf(buf[k][1], sizeof buf[k][1], "m%" PRId64, i + k);
            a[0] = "ZADD", l[0] = 4;
            a[1] = key, l[1] = strlen(key);
            a[2] = buf[k][0], l[2] = (size_t)sl;
            a[3] = buf[k][1], l[3] = (size_t)ml;
        }
        if (pipeline_run(&q, c, n, 4, argv, lens, 4, "ceiling ZADD", NULL,
                         err, errlen) != 0)
            goto done;
    }
    int64_t t1 = dq_mono_us();

    /* ZPOPMIN key (count 1), as many times. */
    for (int k = 0; k < pipeline; k++) {
        argv[(size_t)k * 4] = "ZPOPMIN", lens[(size_t)k * 4] = 7;
        argv[(size_t)k * 4 + 1] = key, lens[(size_t)k * 4 + 1] = strlen(key);
    }
    for (int64_t i = 0; i < members; i += pipeline) {
        int n = (int)(members - i < pipeline ? members - i : pipeline);
        if (pipeline_run(&q, c, n, 2, argv, lens, 4, "ceiling ZPOPMIN",
                         check_popped, err, errlen) != 0)
            goto done;
    }
    int64_t t2 = dq_mono_us();

    out->members = members;
    out->pipeline = pipeline;
    out->zadd_s = (double)(t1 - t0) / 1e6;
    out->zpopmin_s = (double)(t2 - t1) / 1e6;
    out->zadd_per_s = out->zadd_s > 0 ? (double)members / out->zadd_s : 0;
    out->zpopmin_per_s = out->zpopmin_s > 0
                             ? (double)members / out->zpopmin_s : 0;
    ret = 0;
done:
    if (c != NULL) {
        if (c->err == 0)
            freeReplyObject(redisCommand(c, "DEL %s", key));
        redisFree(c);
    }
    free(buf);
    free(argv);
    free(lens);
    return ret;
}

/* The rps of test `name` in redis-benchmark's --csv output line, e.g.
 * "ZADD","123456.79","0.3",...; -1 when the line is another test. */
static double csv_rps(const char *line, const char *name)
{
    char want[64];
    snprintf(want, sizeof want, "\"%s\",\"", name);
    if (strncmp(line, want, strlen(want)) != 0)
        return -1;
    return strtod(line + strlen(want), NULL);
}

int dq_ceiling_redis_benchmark(const char *host, int port, dq_rb_run *run,
                               char *err, size_t errlen)
{
    char p[16], n[32], pl[16], c[16], r[32];
    int fds[2];

    run->zadd_rps = run->zpopmin_rps = -1;
    snprintf(p, sizeof p, "%d", port);
    snprintf(n, sizeof n, "%" PRId64, run->requests);
    snprintf(pl, sizeof pl, "%d", run->pipeline);
    snprintf(c, sizeof c, "%d", run->clients);
    snprintf(r, sizeof r, "%" PRId64, run->keyspace);
    if (pipe(fds) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execlp("redis-benchmark", "redis-benchmark", "-h", host, "-p", p,
               "-c", c, "-n", n, "-P", pl, "-r", r, "-t", run->tests,
               "--csv", "-q", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        double v;
        if ((v = csv_rps(line, "ZADD")) >= 0)
            run->zadd_rps = v;
        else if ((v = csv_rps(line, "ZPOPMIN")) >= 0)
            run->zpopmin_rps = v;
    }
    if (f != NULL)
        fclose(f);
    else
        close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "waitpid: %s", strerror(errno));
            return -1;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        run->zadd_rps = run->zpopmin_rps = -1;
        return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        run->zadd_rps < 0) {
        snprintf(err, errlen, "redis-benchmark -t %s -c %d -P %d failed "
                 "(status %d) or printed no ZADD figure", run->tests,
                 run->clients, run->pipeline, status);
        return -1;
    }
    return 0;
}

/* ---- The harness's own ceiling: a queue that does nothing ------------- */

typedef struct noop_item {
    unsigned char *block;  /* payload, NUL, id, NUL: handed to the claimer */
    size_t payload_len;
    int64_t due_ms;
} noop_item;

typedef struct noop_shared {
    pthread_mutex_t mu;
    pthread_cond_t available;   /* on CLOCK_MONOTONIC */
    noop_item *ring;            /* cap slots, n used from head on */
    size_t cap, head, n;
    int waiting;                /* claimers in pthread_cond_timedwait */
} noop_shared;

typedef struct noop_priv {
    noop_shared *s;
    char name[80];              /* "noop:<queue>" in the dq_local */
} noop_priv;

static const dq_optdef noop_options[] = {DQ_OPTDEF_END};

static void *noop_create(void *arg)
{
    noop_shared *s = calloc(1, sizeof *s);
    pthread_condattr_t ca;
    pthread_mutexattr_t ma;

    (void)arg;
    if (s == NULL)
        return NULL;
    /* Adaptive, as the heap's: the critical section is a few ns. */
    if (pthread_mutexattr_init(&ma) != 0)
        goto free_s;
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    if (pthread_mutex_init(&s->mu, &ma) != 0) {
        pthread_mutexattr_destroy(&ma);
        goto free_s;
    }
    pthread_mutexattr_destroy(&ma);
    if (pthread_condattr_init(&ca) != 0)
        goto destroy_mutex;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&s->available, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        goto destroy_mutex;
    }
    pthread_condattr_destroy(&ca);
    return s;

destroy_mutex:
    pthread_mutex_destroy(&s->mu);
free_s:
    free(s);
    return NULL;
}

static void noop_destroy(void *obj)
{
    noop_shared *s = obj;

    for (size_t i = 0; i < s->n; i++)
        free(s->ring[(s->head + i) % s->cap].block);
    free(s->ring);
    pthread_cond_destroy(&s->available);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static int noop_open(dq_queue *q)
{
    noop_priv *p;

    if (q->cfg.local == NULL)
        return dq_fail(q, DQ_EINVAL, "harness-noop needs a dq_local");
    if ((p = calloc(1, sizeof *p)) == NULL)
        return dq_fail(q, DQ_ENOMEM, "harness-noop: out of memory");
    snprintf(p->name, sizeof p->name, "noop:%s", q->queue);
    p->s = dq_local_get(q->cfg.local, p->name, noop_create, NULL,
                        noop_destroy);
    if (p->s == NULL) {
        free(p);
        return dq_fail(q, DQ_ENOMEM, "harness-noop: out of memory");
    }
    q->priv = p;
    return DQ_OK;
}

static void noop_close(dq_queue *q)
{
    noop_priv *p = q->priv;

    if (p == NULL)
        return;
    dq_local_put(q->cfg.local, p->name);
    free(p);
    q->priv = NULL;
}

/* Doubles the ring, keeping the order.  Called with the lock held. */
static bool noop_grow(noop_shared *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    noop_item *r = malloc(cap * sizeof *r);

    if (r == NULL)
        return false;
    for (size_t i = 0; i < s->n; i++)
        r[i] = s->ring[(s->head + i) % s->cap];
    free(s->ring);
    s->ring = r;
    s->cap = cap;
    s->head = 0;
    return true;
}

static int noop_enqueue(dq_queue *q, const char *id, const void *payload,
                        size_t payload_len, int64_t due_ms)
{
    noop_shared *s = ((noop_priv *)q->priv)->s;
    size_t idlen = strlen(id);
    unsigned char *b = malloc(payload_len + 1 + idlen + 1);

    if (b == NULL)
        return dq_fail(q, DQ_ENOMEM, "enqueue %s: out of memory", id);
    if (payload_len > 0)
        memcpy(b, payload, payload_len);
    b[payload_len] = '\0';
    memcpy(b + payload_len + 1, id, idlen + 1);
    pthread_mutex_lock(&s->mu);
    if (s->n == s->cap && !noop_grow(s)) {
        pthread_mutex_unlock(&s->mu);
        free(b);
        return dq_fail(q, DQ_ENOMEM, "enqueue %s: out of memory", id);
    }
    s->ring[(s->head + s->n++) % s->cap] =
        (noop_item){b, payload_len, due_ms};
    /* Only the push into an empty ring wakes anyone; a woken claimer
     * passes the wake on while tasks are left (below). */
    if (s->n == 1 && s->waiting > 0)
        pthread_cond_signal(&s->available);
    pthread_mutex_unlock(&s->mu);
    return DQ_OK;
}

static int noop_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    noop_shared *s = ((noop_priv *)q->priv)->s;
    int64_t deadline_us = -1;
    noop_item it;

    pthread_mutex_lock(&s->mu);
    while (s->n == 0) {
        struct timespec ts;

        if (deadline_us < 0)
            deadline_us = dq_deadline_us(timeout_ms);
        if (dq_mono_us() >= deadline_us) {
            pthread_mutex_unlock(&s->mu);
            return DQ_EMPTY;
        }
        ts.tv_sec = (time_t)(deadline_us / 1000000);
        ts.tv_nsec = (long)(deadline_us % 1000000) * 1000;
        s->waiting++;
        pthread_cond_timedwait(&s->available, &s->mu, &ts);
        s->waiting--;
        q->counters.wakeups++;
    }
    it = s->ring[s->head];
    s->head = (s->head + 1) % s->cap;
    s->n--;
    if (s->n > 0 && s->waiting > 0)
        pthread_cond_signal(&s->available);
    pthread_mutex_unlock(&s->mu);
    memcpy(out->id, it.block + it.payload_len + 1,
           strlen((const char *)it.block + it.payload_len + 1) + 1);
    out->payload = it.block;  /* ownership moves to the task */
    out->payload_len = it.payload_len;
    out->due_ms = it.due_ms;
    out->attempt = 0;
    return DQ_OK;
}

static int noop_ack(dq_queue *q, const dq_task *t)
{
    (void)q;
    (void)t;
    return DQ_OK;
}

static int64_t noop_pending(dq_queue *q)
{
    noop_shared *s = ((noop_priv *)q->priv)->s;
    int64_t n;

    pthread_mutex_lock(&s->mu);
    n = (int64_t)s->n;
    pthread_mutex_unlock(&s->mu);
    return n;
}

const dq_strategy dq_ceiling_noop = {
    .name = "harness-noop",
    .summary = "the harness's own ceiling: a FIFO under one mutex "
               "(bench only, tasks due at once)",
    .flags = DQ_G_AT_MOST_ONCE | DQ_G_BLOCKS | DQ_G_NO_DUP_CONCURRENT,
    .options = noop_options,
    .open = noop_open,
    .enqueue = noop_enqueue,
    .claim = noop_claim,
    .ack = noop_ack,
    .close = noop_close,
    .pending = noop_pending,
};
