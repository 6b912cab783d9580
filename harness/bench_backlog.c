/* bench_backlog.c -- part 3 of `dqlab bench`: what a claim and an enqueue
 * cost against a backlog of N pending tasks (bench.h: backlog.csv).
 *
 * The backlog preload bypasses the strategies' enqueue on purpose: one
 * round trip per task would take minutes at 1M.  It writes exactly what
 * dq_zh_enqueue / the list enqueue script write for a task never claimed
 * (ZADD dq:{Q}:z due id; HSET dq:{Q}:p id payload), so it applies only to
 * the strategies that declare that layout (DQ_G_ZSET_LAYOUT, dq.h); the
 * other Redis strategies are named in meta.txt's `skipped`, and the
 * in-process ones are preloaded through dq_enqueue (fast).  The two keys
 * are pipelined once per N into a template queue and then copied into
 * each strategy's queue with COPY (Redis 6.2, https://redis.io/commands/
 * copy/: the server duplicates the keys, about 1 s for 1M tasks instead of
 * several seconds of pipelining per strategy); a server without COPY gets
 * the pipelined preload every time.
 *
 * Interleaved, not one backlog after the other: a strategy holds all its
 * backlogs at once (one queue each), and each round enqueues into them
 * and claims from them one operation per backlog in turn, so that a busy
 * moment of a shared machine (another process taking the CPU for a few
 * ms, which is what a p99 of a 30 us round trip is made of) lands on
 * every backlog alike instead of on the 1M unit alone; the percentiles
 * written are medians of the rounds' percentiles.  That is what makes
 * "claim p99 at 1M at most 3x its value at 1k" a statement about the
 * strategy rather than about the minute it ran in: a first version that
 * ran the backlogs one after the other gave claim p99 ratios from 0.3 to
 * 5 between two runs of the same binary.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "../strategies/rconn.h"
#include "bench_int.h"
#include "checker.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define MAX_ROUNDS 16
#define MAX_CELLS 8

/* One backlog of one strategy. */
typedef struct bl_cell {
    int64_t n;
    char queue[65];
    dq_queue *q;              /* the timed handle */
    const char *preload;      /* copy | pipeline | enqueue */
    double preload_s;
    int64_t mem0, mem1;       /* used_memory before / after the preload */
    double *enq, *clm;        /* one round's samples, us */
    double e50[MAX_ROUNDS], e99[MAX_ROUNDS];
    double c50[MAX_ROUNDS], c90[MAX_ROUNDS], c99[MAX_ROUNDS];
    double esum, cmax;
    int64_t got_all, empty;
} bl_cell;

/* The part's admin connection and the template queues (Redis only). */
typedef struct bl_admin {
    dq_queue adm;             /* bare handle: errors, key names */
    redisContext *c;
    bool copy;                /* COPY works on this server */
    char tpl[MAX_CELLS][65];  /* template queue per backlog ("": none) */
} bl_admin;

/* ---- Redis helpers ------------------------------------------------------ */

/* INFO memory's `field:` value, or -1. */
static int64_t info_memory(bl_admin *a, const char *field)
{
    char key[64];
    int rc;
    redisReply *r = dq_redis_cmdf(&a->adm, a->c, &rc, "INFO memory");
    int64_t v = -1;

    snprintf(key, sizeof key, "\n%s:", field);
    if (r != NULL && r->type == REDIS_REPLY_STRING) {
        const char *p = strstr(r->str, key);
        if (p != NULL)
            v = strtoll(p + strlen(key), NULL, 10);
    }
    if (r != NULL)
        freeReplyObject(r);
    return v;
}

/* The previous unit's UNLINK frees its keys in the background: wait for
 * that (at most 2 s), or it would show as negative memory. */
static void lazyfree_wait(bl_admin *a)
{
    for (int i = 0; i < 200 && info_memory(a, "lazyfree_pending_objects") > 0;
         i++)
        dq_sleep_us(10000);
}

/* Points the admin handle's key names at queue. */
static void adm_queue(bl_admin *a, const char *queue)
{
    snprintf(a->adm.queue, sizeof a->adm.queue, "%s", queue);
    a->adm.cfg.queue = a->adm.queue;
}

/* ZADD z due b<i> + HSET p b<i> payload for i in [0, n) into queue, 500
 * tasks (1000 commands) per pipeline. */
static int preload_zset(bl_admin *a, const char *queue, int64_t n,
                        int64_t due_ms, char *err, size_t errlen)
{
    enum { PER = 500 };
    char z[160], h[160], due[32];
    static char ids[PER][24];
    const char *argv[PER * 2][4];
    size_t lens[PER * 2][4];
    dq_redis_argv cmds[PER * 2];
    redisReply *replies[PER * 2];

    adm_queue(a, queue);
    dq_redis_key(&a->adm, DQ_ZH_ZSET, z, sizeof z);
    dq_redis_key(&a->adm, DQ_ZH_HASH, h, sizeof h);
    dq_redis_fmt_i64(due, due_ms);
    for (int64_t i = 0; i < n; i += PER) {
        int k = (int)(n - i < PER ? n - i : PER);
        for (int j = 0; j < k; j++) {
            int il = snprintf(ids[j], sizeof ids[j], "b%" PRId64, i + j);
            const char **za = argv[2 * j], **ha = argv[2 * j + 1];
            size_t *zl = lens[2 * j], *hl = lens[2 * j + 1];
            za[0] = "ZADD", zl[0] = 4, za[1] = z, zl[1] = strlen(z);
            za[2] = due, zl[2] = strlen(due), za[3] = ids[j];
            zl[3] = (size_t)il;
            ha[0] = "HSET", hl[0] = 4, ha[1] = h, hl[1] = strlen(h);
            ha[2] = ids[j], hl[2] = (size_t)il, ha[3] = dq_bench_payload;
            hl[3] = DQ_BENCH_PAYLOAD_BYTES;
            cmds[2 * j] = (dq_redis_argv){4, za, zl};
            cmds[2 * j + 1] = (dq_redis_argv){4, ha, hl};
        }
        if (dq_redis_pipeline_ok(&a->adm, a->c, (size_t)(2 * k), cmds,
                                 replies) != DQ_OK) {
            snprintf(err, errlen, "preload: %s", a->adm.err);
            return -1;
        }
        for (int j = 0; j < 2 * k; j++)
            freeReplyObject(replies[j]);
        if ((i & 0xffff) == 0 && dq_bench_stop()) {
            snprintf(err, errlen, "interrupted");
            return -1;
        }
    }
    return 0;
}

/* COPY of the template's two keys into queue.  0, 1 when the server has
 * no COPY (unknown command), -1 with err. */
static int copy_keys(bl_admin *a, const char *tpl, const char *queue,
                     char *err, size_t errlen)
{
    const char *suffix[2] = {DQ_ZH_ZSET, DQ_ZH_HASH};

    for (int i = 0; i < 2; i++) {
        char from[160], to[160];
        const char *argv[3] = {"COPY", from, to};
        redisReply *r;
        int rc;

        adm_queue(a, tpl);
        dq_redis_key(&a->adm, suffix[i], from, sizeof from);
        adm_queue(a, queue);
        dq_redis_key(&a->adm, suffix[i], to, sizeof to);
        r = dq_redis_cmd(&a->adm, a->c, &rc, 3, argv, NULL);
        if (r == NULL && rc == DQ_EREDIS && strstr(a->adm.err, "unknown"))
            return 1;
        if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer != 1) {
            snprintf(err, errlen, "COPY %s: %s", from,
                     r == NULL ? a->adm.err : "not copied");
            freeReplyObject(r);
            return -1;
        }
        freeReplyObject(r);
    }
    return 0;
}

/* Deletes every key of queue (the templates, at the end). */
static void drop_queue(bl_admin *a, const char *queue)
{
    adm_queue(a, queue);
    dq_redis_purge(&a->adm, a->c);
}

/* ---- A cell ------------------------------------------------------------- */

/* The backlog of cell x: COPY of template ti, or the pipelined preload,
 * with the memory around it (Redis); dq_enqueue (in-process).  Returns 0,
 * or -1 with err. */
static int cell_preload(dq_bench *b, const dq_strategy *s, bl_admin *a,
                        size_t ti, bl_cell *x, char *err, size_t errlen)
{
    int64_t far = dq_wall_us() / 1000 + 3600 * 1000, t0 = dq_mono_us();
    char id[32];
    int rc = 1;

    (void)b;
    if (!(s->flags & DQ_G_NEEDS_REDIS)) {
        for (int64_t i = 0; i < x->n; i++) {
            snprintf(id, sizeof id, "b%" PRId64, i);
            if (dq_enqueue(x->q, id, dq_bench_payload,
                           DQ_BENCH_PAYLOAD_BYTES, far) != DQ_OK) {
                snprintf(err, errlen, "preload: %s", dq_errstr(x->q));
                return -1;
            }
        }
        x->preload = "enqueue";
        x->preload_s = (double)(dq_mono_us() - t0) / 1e6;
        return 0;
    }
    lazyfree_wait(a);
    x->mem0 = info_memory(a, "used_memory");
    t0 = dq_mono_us();
    if (a->copy && a->tpl[ti][0] != '\0' &&
        (rc = copy_keys(a, a->tpl[ti], x->queue, err, errlen)) < 0)
        return -1;
    if (rc == 1) {
        a->copy = false;
        if (preload_zset(a, x->queue, x->n, far, err, errlen) != 0)
            return -1;
    }
    x->preload = rc == 0 ? "copy" : "pipeline";
    x->preload_s = (double)(dq_mono_us() - t0) / 1e6;
    x->mem1 = info_memory(a, "used_memory");
    return 0;
}

/* Round `round` of every cell at once: k due tasks enqueued into each, a
 * task into every cell in turn (each dq_enqueue timed), then claimed the
 * same way, one claim per cell in turn (timed; the ack is not), the first
 * cell moving by one every round; each cell's percentiles of the round
 * kept.  Returns 0, or -1 with err (what names the cell). */
static int cells_round(bl_cell *xs, size_t nx, int64_t k, int round,
                       char *what, size_t whatlen, char *err, size_t errlen)
{
    int64_t got[MAX_CELLS] = {0}, left = k * (int64_t)nx, deadline, t, d;
    dq_task task;
    char id[32];
    int rc;

    for (int64_t i = 0; i < k; i++)
        for (size_t j = 0; j < nx; j++) {
            bl_cell *x = &xs[(j + (size_t)round) % nx];
            snprintf(id, sizeof id, "d%d-%" PRId64, round, i);
            t = dq_mono_us();
            if (dq_enqueue(x->q, id, dq_bench_payload,
                           DQ_BENCH_PAYLOAD_BYTES, dq_now_ms(x->q) - 1)) {
                snprintf(what, whatlen, "backlog %s %" PRId64,
                         x->q->s->name, x->n);
                snprintf(err, errlen, "enqueue: %s", dq_errstr(x->q));
                return -1;
            }
            x->enq[i] = (double)(dq_mono_us() - t);
            x->esum += x->enq[i];
        }
    memset(&task, 0, sizeof task);
    deadline = dq_mono_us() + 30 * 1000000LL;
    while (left > 0 && dq_mono_us() < deadline && !dq_bench_stop())
        for (size_t j = 0; j < nx; j++) {
            size_t c = (j + (size_t)round) % nx;
            bl_cell *x = &xs[c];
            if (got[c] == k)
                continue;
            t = dq_mono_us();
            rc = dq_claim(x->q, 1000, &task);
            d = dq_mono_us() - t;
            if (rc == DQ_EMPTY) {
                x->empty++;
                continue;
            }
            if (rc != DQ_OK || task.id[0] != 'd') {
                snprintf(what, whatlen, "backlog %s %" PRId64,
                         x->q->s->name, x->n);
                if (rc != DQ_OK)
                    snprintf(err, errlen, "claim: %s", dq_errstr(x->q));
                else
                    snprintf(err, errlen, "claim returned backlog task %s "
                             "before its due time", task.id);
                dq_task_clear(&task);
                return -1;
            }
            x->clm[got[c]++] = (double)d;
            left--;
            dq_ack(x->q, &task);
            dq_task_clear(&task);
        }
    if (dq_bench_stop()) {
        snprintf(err, errlen, "interrupted");
        return -1;
    }
    for (size_t c = 0; c < nx; c++) {
        bl_cell *x = &xs[c];
        size_t n = (size_t)got[c];
        dq_median(x->enq, (size_t)k); /* sorts */
        dq_median(x->clm, n);
        x->e50[round] = dq_percentile(x->enq, (size_t)k, 50);
        x->e99[round] = dq_percentile(x->enq, (size_t)k, 99);
        x->c50[round] = dq_percentile(x->clm, n, 50);
        x->c90[round] = dq_percentile(x->clm, n, 90);
        x->c99[round] = dq_percentile(x->clm, n, 99);
        if (n > 0 && x->clm[n - 1] > x->cmax)
            x->cmax = x->clm[n - 1];
        x->got_all += got[c];
    }
    return 0;
}

/* The cell's backlog.csv row and record (sorts the rounds' values). */
static void cell_row(dq_bench *b, const dq_strategy *s, bl_cell *x,
                     int rounds, int64_t k)
{
    int64_t mem = x->mem0 >= 0 && x->mem1 >= 0 ? x->mem1 - x->mem0 : -1;
    double c50 = dq_median(x->c50, (size_t)rounds);
    double c99 = dq_median(x->c99, (size_t)rounds);
    dq_bench_bl *r;

    fprintf(b->backlog, "%s,,%" PRId64 ",%.4f,%" PRId64 ",", s->name, x->n,
            x->preload_s, mem);
    if (mem >= 0)
        fprintf(b->backlog, "%.1f", (double)mem / (double)x->n);
    else
        fputs("-1", b->backlog);
    fprintf(b->backlog, ",%.2f,%.2f,%.2f,%" PRId64 ",%.2f,%.2f,%.2f,%.2f,%"
            PRId64 ",%s\n", x->esum / (double)(k * rounds),
            dq_median(x->e50, (size_t)rounds),
            dq_median(x->e99, (size_t)rounds), x->got_all, c50,
            dq_median(x->c90, (size_t)rounds), c99, x->cmax, x->empty,
            x->preload);
    fflush(b->backlog);
    if ((r = dq_bench_grow((void **)&b->bls, &b->nbls, sizeof *r)) != NULL)
        *r = (dq_bench_bl){s, x->n, c50, c99};
}

/* ---- A strategy --------------------------------------------------------- */

/* Opens, purges and preloads every cell of s.  Returns 0, or -1 with err
 * (and what names the cell). */
static int cells_open(dq_bench *b, const dq_strategy *s, bl_admin *a,
                      dq_local *local, bl_cell *xs, char *what,
                      size_t whatlen, char *err, size_t errlen)
{
    const dq_bench_plan *pl = b->pl;

    for (size_t i = 0; i < pl->nbacklogs; i++) {
        bl_cell *x = &xs[i];
        dq_config cfg;

        x->n = pl->backlogs[i];
        x->mem0 = x->mem1 = -1;
        snprintf(what, whatlen, "backlog %s %" PRId64, s->name, x->n);
        x->enq = calloc((size_t)pl->bl_claims, sizeof *x->enq);
        x->clm = calloc((size_t)pl->bl_claims, sizeof *x->clm);
        if (x->enq == NULL || x->clm == NULL) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        dq_bench_queue_name(b, "bl", x->queue, sizeof x->queue);
        dq_bench_config(b, &cfg, x->queue, local, "bench-consumer");
        if (dq_open(s, &cfg, &x->q, err, errlen) != DQ_OK)
            return -1;
        if (x->q->s->purge != NULL)
            dq_purge(x->q);
        dq_bench_say(b, "backlog: %s, %" PRId64 " pending", s->name, x->n);
        if (cell_preload(b, s, a, i, x, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static void cells_close(const dq_bench *b, bl_cell *xs)
{
    for (size_t i = 0; i < b->pl->nbacklogs; i++) {
        if (xs[i].q != NULL) {
            if (xs[i].q->s->purge != NULL)
                dq_purge(xs[i].q);
            dq_close(xs[i].q);
        }
        free(xs[i].enq);
        free(xs[i].clm);
    }
}

/* Every backlog of s, in rounds.  Returns 0, or -1 with err and what. */
static int backlog_strategy(dq_bench *b, const dq_strategy *s, bl_admin *a,
                            char *what, size_t whatlen, char *err,
                            size_t errlen)
{
    const dq_bench_plan *pl = b->pl;
    int rounds = pl->bl_rounds < MAX_ROUNDS ? pl->bl_rounds : MAX_ROUNDS;
    bl_cell xs[MAX_CELLS];
    dq_local *local = dq_local_new();
    int ret = -1;

    memset(xs, 0, sizeof xs);
    if (local == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (cells_open(b, s, a, local, xs, what, whatlen, err, errlen) != 0)
        goto done;
    for (int r = 0; r < rounds; r++)
        if (cells_round(xs, pl->nbacklogs, pl->bl_claims, r, what, whatlen,
                        err, errlen) != 0)
            goto done;
    for (size_t j = 0; j < pl->nbacklogs; j++)
        cell_row(b, s, &xs[j], rounds, pl->bl_claims);
    ret = 0;
done:
    cells_close(b, xs);
    dq_local_free(local);
    return ret;
}

/* The admin connection and one template queue per backlog (Redis), when
 * a selected strategy has the ZSet layout.  Returns 0, or -1 with err. */
static int admin_open(dq_bench *b, bl_admin *a, char *err, size_t errlen)
{
    const dq_bench_plan *pl = b->pl;
    int64_t far = dq_wall_us() / 1000 + 3600 * 1000;

    memset(a, 0, sizeof *a);
    dq_bench_config(b, &a->adm.cfg, "bench", NULL, "bench-admin");
    adm_queue(a, "bench");
    if (dq_redis_connect(&a->adm, NULL, 60000, &a->c) != DQ_OK) {
        snprintf(err, errlen, "%s", a->adm.err);
        return -1;
    }
    a->copy = true;
    for (size_t i = 0; i < pl->nbacklogs && a->copy; i++) {
        dq_bench_queue_name(b, "bltpl", a->tpl[i], sizeof a->tpl[i]);
        dq_bench_say(b, "backlog: template of %" PRId64 " tasks",
                     pl->backlogs[i]);
        if (preload_zset(a, a->tpl[i], pl->backlogs[i], far, err,
                         errlen) != 0)
            return -1;
    }
    return 0;
}

static void admin_close(const dq_bench *b, bl_admin *a)
{
    if (a->c == NULL)
        return;
    for (size_t i = 0; i < b->pl->nbacklogs; i++)
        if (a->tpl[i][0] != '\0')
            drop_queue(a, a->tpl[i]);
    redisFree(a->c);
    a->c = NULL;
}

/* Whether s can be preloaded (ZSet layout or in-process). */
static bool preloadable(const dq_strategy *s)
{
    return (s->flags & DQ_G_ZSET_LAYOUT) || !(s->flags & DQ_G_NEEDS_REDIS);
}

void dq_bench_part_backlog(dq_bench *b)
{
    char err[512], what[128];
    bl_admin a;
    bool redis = false;

    memset(&a, 0, sizeof a);
    for (size_t si = 0; dq_strategies[si]; si++)
        redis |= dq_bench_selected(b, dq_strategies[si]) &&
                 (dq_strategies[si]->flags & DQ_G_ZSET_LAYOUT);
    if (b->pl->nbacklogs > MAX_CELLS ||
        (redis && admin_open(b, &a, err, sizeof err) != 0)) {
        dq_bench_unit_error(b, "backlog templates", err);
        admin_close(b, &a);
        return;
    }
    for (size_t si = 0; dq_strategies[si] && !dq_bench_stop(); si++) {
        const dq_strategy *s = dq_strategies[si];

        if (!dq_bench_selected(b, s))
            continue;
        if (!preloadable(s)) {
            dq_bench_skip(b, "backlog", s, "no ZSet layout: "
                          "DQ_G_ZSET_LAYOUT");
            continue;
        }
        if (backlog_strategy(b, s, &a, what, sizeof what, err,
                             sizeof err) != 0 && !dq_bench_stop())
            dq_bench_unit_error(b, what, err);
    }
    admin_close(b, &a);
}
