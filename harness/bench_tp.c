/* bench_tp.c -- part 2 of `dqlab bench`: throughput (bench.h:
 * throughput.csv, harness.csv).
 *
 * Four blocks, in this order:
 *   curve     every strategy with its defaults: enqueue-only repeats, then
 *             end-to-end trials at every consumer count of the plan;
 *   one_rtt   the target configuration "one claim round trip per task":
 *             every Redis strategy (DQ_G_NEEDS_REDIS, no list of names)
 *             with its defaults and enqueue_batch=64, at target_consumers;
 *   batched   every strategy's own dq_strategy.bench_variants (dq.h), at
 *             every consumer count;
 *   harness   the harness's own ceiling (the no-op queue of ceiling.h)
 *             and every in-process strategy, at target_consumers.
 * The last three run in target_repeats rounds, each round first measuring
 * its reference again (bench_refs.c: zadd-c4 for one_rtt, zadd-c1-p100
 * for batched; the harness block's reference is its own no-op trial, run
 * first in each round), so that a figure and the reference it is a share
 * of meet the same state of a shared machine: alternating beats measuring
 * the reference once at the start and the strategies minutes later.
 *
 * End-to-end trials go through dq_trial_run (trial.h): tasks all due now,
 * tasks_per_s from the first enqueue to the last delivery, every event
 * logged and checked.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_int.h"
#include "ceiling.h"
#include "runmeta.h"
#include "trial.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static const char *const block_names[] = {
    [DQ_BTP_CURVE] = "curve", [DQ_BTP_ONE_RTT] = "one_rtt",
    [DQ_BTP_BATCHED] = "batched"};

/* A configuration: strategy options and the trial's enqueue_batch, parsed
 * from "k=v;k=v" (a bench_variants string, or the one_rtt one). */
typedef struct tp_config {
    char spec[96];            /* as written; throughput.csv's options */
    dq_opt opts[DQ_MAX_OPTS];
    size_t nopts;
    int64_t enqueue_batch;
    bool batched_claims;      /* a "batch=" strategy option is set */
} tp_config;

/* Parses spec into *v.  Returns 0, or -1 with err (a strategy's own
 * bench_variants string is malformed: a bug of that file). */
static int config_parse(const char *spec, tp_config *v, char *err,
                        size_t errlen)
{
    char buf[256];

    memset(v, 0, sizeof *v);
    snprintf(v->spec, sizeof v->spec, "%s", spec);
    v->enqueue_batch = 1;
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv != NULL;
         kv = strtok_r(NULL, ";", &save)) {
        if (strncmp(kv, "enqueue_batch=", 14) == 0) {
            v->enqueue_batch = strtoll(kv + 14, NULL, 10);
            if (v->enqueue_batch < 1 ||
                v->enqueue_batch > DQ_TRIAL_MAX_ENQUEUE_BATCH) {
                snprintf(err, errlen, "variant '%s': bad enqueue_batch",
                         spec);
                return -1;
            }
        } else if (v->nopts == DQ_MAX_OPTS ||
                   dq_opt_parse(kv, &v->opts[v->nopts++], err, errlen) !=
                       DQ_OK) {
            return -1;
        } else if (strcmp(v->opts[v->nopts - 1].key, "batch") == 0 &&
                   strtoll(v->opts[v->nopts - 1].val, NULL, 10) > 1) {
            v->batched_claims = true;
        }
    }
    return 0;
}

/* ---- Enqueue only ------------------------------------------------------- */

/* One handle enqueues n tasks due now, timed: dq_enqueue per task, or
 * dq_enqueue_many in groups of batch (> 1).  Returns 0 or -1 + err. */
static int enqueue_only(dq_bench *b, const dq_strategy *s, int64_t n,
                        int64_t batch, double *seconds, char *err,
                        size_t errlen)
{
    char queue[65];
    dq_config cfg;
    dq_queue *q = NULL;
    dq_local *local = dq_local_new();
    size_t nb = batch > 1 ? (size_t)batch : 1;
    dq_enqueue_item *items = calloc(nb, sizeof *items);
    char (*ids)[24] = calloc(nb, sizeof *ids);
    int ret = -1;

    if (local == NULL || items == NULL || ids == NULL) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    dq_bench_queue_name(b, "enq", queue, sizeof queue);
    dq_bench_config(b, &cfg, queue, local, "bench-producer");
    if (dq_open(s, &cfg, &q, err, errlen) != DQ_OK)
        goto done;
    if (q->s->purge != NULL)
        dq_purge(q);
    int64_t t0 = dq_mono_us();
    for (int64_t i = 0; i < n;) {
        size_t k = 0;
        int64_t now = dq_now_ms(q);
        for (; k < nb && i < n; k++, i++) {
            snprintf(ids[k], sizeof ids[k], "e%" PRId64, i);
            items[k] = (dq_enqueue_item){ids[k], dq_bench_payload,
                                         DQ_BENCH_PAYLOAD_BYTES, now};
        }
        int rc = nb == 1 ? dq_enqueue(q, ids[0], dq_bench_payload,
                                      DQ_BENCH_PAYLOAD_BYTES, now)
                         : dq_enqueue_many(q, items, k);
        if (rc != DQ_OK) {
            snprintf(err, errlen, "enqueue: %s", dq_errstr(q));
            goto done;
        }
        if ((i & 1023) < (int64_t)k && dq_bench_stop())
            break;
    }
    *seconds = (double)(dq_mono_us() - t0) / 1e6;
    ret = 0;
done:
    if (q != NULL) {
        if (q->s->purge != NULL)
            dq_purge(q);
        dq_close(q);
    }
    dq_local_free(local);
    free(items);
    free(ids);
    return ret;
}

/* Enqueue-only rows of s (configuration v, NULL for the defaults): ne
 * tasks, `repeats` times. */
static void tp_enqueue(dq_bench *b, const dq_strategy *s, const tp_config *v,
                       int64_t ne, int repeats, int block)
{
    char err[512], what[192];
    const char *opts = v != NULL ? v->spec : "";

    for (int rep = 1; rep <= repeats && !dq_bench_stop(); rep++) {
        double sec = 0;
        snprintf(what, sizeof what, "throughput %s%s%s enqueue repeat %d",
                 s->name, opts[0] ? " " : "", opts, rep);
        if (enqueue_only(b, s, ne, v ? v->enqueue_batch : 1, &sec, err,
                         sizeof err) != 0) {
            dq_bench_unit_error(b, what, err);
            break;
        }
        fprintf(b->throughput, "enqueue,%s,", s->name);
        dq_runmeta_csv_field(b->throughput, opts, ',');
        fprintf(b->throughput, "1,0,%d,%" PRId64 ",%.4f,%.1f,0,0,0,0,-1,-1,0,"
                "%s\n", rep, ne, sec, sec > 0 ? (double)ne / sec : 0,
                block_names[block]);
        fflush(b->throughput);
    }
}

/* ---- End to end --------------------------------------------------------- */

/* One trial of s through dq_trial_run: configuration v (NULL: defaults),
 * c consumers, n tasks, repeat rep (the seed).  Returns 0 with *r, 1 when
 * interrupted, or -1 (named on stderr as `what`). */
static int trial(dq_bench *b, const dq_strategy *s, const tp_config *v,
                 int c, int64_t n, int rep, const char *what,
                 dq_trial_result *r)
{
    const dq_bench_plan *pl = b->pl;
    dq_trial_params p;
    char log[PATH_MAX + 96], err[512];
    int rc;

    dq_trial_defaults(&p);
    p.strategy = s;
    if (v != NULL) {
        memcpy(p.opts, v->opts, sizeof p.opts);
        p.nopts = v->nopts;
    }
    p.enqueue_batch = v ? v->enqueue_batch : 1;
    p.producers = pl->producers;
    p.consumers = c;
    p.tasks = n;
    p.delay_min_ms = p.delay_max_ms = 0;
    p.payload_bytes = DQ_BENCH_PAYLOAD_BYTES;
    p.grace_ms = 10000;
    p.seed = (uint64_t)(1000 + rep);
    p.redis = (s->flags & DQ_G_NEEDS_REDIS) ? b->redis : NULL;
    dq_bench_queue_name(b, "tp", p.queue, sizeof p.queue);
    p.fresh = true;
    snprintf(log, sizeof log, "%s/tp-%s-%d-c%d-r%d.log", b->logs, s->name,
             b->unit, c, rep);
    unlink(log);
    p.log_path = log;
    rc = dq_trial_run(&p, r, err, sizeof err);
    if (!b->o->keep_logs)
        unlink(log);
    if (rc < 0)
        dq_bench_unit_error(b, what, err);
    return rc;
}

/* One end-to-end trial's row in throughput.csv and b->tps.  Returns 0, 1
 * (interrupted) or -1 (the unit failed). */
static int tp_e2e_one(dq_bench *b, const dq_strategy *s, const tp_config *v,
                      int c, int64_t n, int rep, int block)
{
    const char *opts = v != NULL ? v->spec : "";
    char what[192];
    dq_trial_result r;
    dq_bench_tp *t;
    int rc;

    snprintf(what, sizeof what, "throughput %s%s%s consumers %d repeat %d",
             s->name, opts[0] ? " " : "", opts, c, rep);
    if ((rc = trial(b, s, v, c, n, rep, what, &r)) != 0)
        return rc;
    const dq_check *k = &r.check;
    fprintf(b->throughput, "e2e,%s,", s->name);
    dq_runmeta_csv_field(b->throughput, opts, ',');
    fprintf(b->throughput, "%d,%d,%d,%" PRId64 ",%.4f,%.1f,%" PRIu64 ",%"
            PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",",
            b->pl->producers, c, rep, n, r.elapsed_s, r.tasks_per_s,
            k->delivered, k->duplicates, k->lost, k->early,
            r.redis_commands);
    if (r.redis_cpu_us >= 0)
        fprintf(b->throughput, "%.3f", r.redis_cpu_us / 1000.0);
    else
        fputs("-1", b->throughput);
    fprintf(b->throughput, ",%.3f,%s\n", k->lateness.p99_ms,
            block_names[block]);
    fflush(b->throughput);
    if ((t = dq_bench_grow((void **)&b->tps, &b->ntps, sizeof *t)) != NULL) {
        t->s = s;
        t->block = block;
        snprintf(t->options, sizeof t->options, "%s", opts);
        t->consumers = c;
        t->tasks_per_s = r.tasks_per_s;
        t->cpu_us_per_task = r.redis_cpu_us >= 0 && k->delivered > 0
                                 ? (double)r.redis_cpu_us /
                                       (double)k->delivered
                                 : -1;
    }
    return 0;
}

/* ---- The blocks --------------------------------------------------------- */

static int64_t curve_tasks(const dq_bench_plan *pl, const dq_strategy *s)
{
    return (s->flags & DQ_G_NEEDS_REDIS) ? pl->tp_tasks : pl->inproc_tasks;
}

/* Every strategy with its defaults at every consumer count. */
static void block_curve(dq_bench *b)
{
    const dq_bench_plan *pl = b->pl;

    for (size_t si = 0; dq_strategies[si] && !dq_bench_stop(); si++) {
        const dq_strategy *s = dq_strategies[si];
        int64_t n = curve_tasks(pl, s);

        if (!dq_bench_selected(b, s))
            continue;
        dq_bench_say(b, "throughput: %s", s->name);
        tp_enqueue(b, s, NULL, n * pl->enq_tasks / pl->tp_tasks,
                   pl->tp_repeats, DQ_BTP_CURVE);
        for (size_t ci = 0; ci < pl->nconsumers && !dq_bench_stop(); ci++)
            for (int rep = 1; rep <= pl->tp_repeats; rep++)
                if (tp_e2e_one(b, s, NULL, pl->consumers[ci], n, rep,
                               DQ_BTP_CURVE) != 0)
                    goto next;
next:;
    }
}

/* One claim round trip per task: every Redis strategy, defaults plus
 * enqueue_batch, in rounds after the zadd-c4 reference. */
static void block_one_rtt(dq_bench *b)
{
    const dq_bench_plan *pl = b->pl;
    const char *spec = DQ_BENCH_ONE_RTT_SPEC;
    char err[256], when[32];
    bool failed[64] = {false};
    tp_config v;

    if (config_parse(spec, &v, err, sizeof err) != 0)
        return;
    for (int rep = 1; rep <= pl->target_repeats && !dq_bench_stop(); rep++) {
        snprintf(when, sizeof when, "round %d", rep);
        dq_bench_reference(b, DQ_BREF_ZADD_C4, when);
        for (size_t si = 0; dq_strategies[si] && !dq_bench_stop(); si++) {
            const dq_strategy *s = dq_strategies[si];

            if (!dq_bench_selected(b, s) || si >= 64 || failed[si])
                continue;
            if (!(s->flags & DQ_G_NEEDS_REDIS)) {
                if (rep == 1)
                    dq_bench_skip(b, "one_rtt", s, "no Redis: see the "
                                  "harness block");
                continue;
            }
            dq_bench_say(b, "one round trip per claim: %s %s, round %d",
                         s->name, spec, rep);
            if (tp_e2e_one(b, s, &v, pl->target_consumers, pl->one_rtt_tasks,
                           rep, DQ_BTP_ONE_RTT) < 0)
                failed[si] = true;
        }
    }
}

/* The variants of every selected strategy, parsed into vs (at most max).
 * Returns how many. */
static size_t variants(dq_bench *b, const dq_strategy **ss, tp_config *vs,
                       size_t max)
{
    char err[256];
    size_t n = 0;

    for (size_t si = 0; dq_strategies[si]; si++) {
        const dq_strategy *s = dq_strategies[si];
        for (size_t i = 0; s->bench_variants && s->bench_variants[i] &&
                           dq_bench_selected(b, s) && n < max; i++) {
            if (config_parse(s->bench_variants[i], &vs[n], err,
                             sizeof err) != 0) {
                dq_bench_unit_error(b, "throughput variant", err);
                continue;
            }
            ss[n++] = s;
        }
    }
    return n;
}

/* The strategies' own variants, in rounds after the zadd-c1-p100
 * reference (when one of them batches its claims). */
static void block_batched(dq_bench *b)
{
    const dq_bench_plan *pl = b->pl;
    const dq_strategy *ss[16];
    tp_config vs[16];
    bool failed[16] = {false}, any_batched = false;
    size_t nv = variants(b, ss, vs, 16);
    char when[32];

    for (size_t i = 0; i < nv; i++)
        any_batched |= vs[i].batched_claims;
    for (int rep = 1; rep <= pl->target_repeats && nv > 0 &&
                      !dq_bench_stop(); rep++) {
        snprintf(when, sizeof when, "round %d", rep);
        if (any_batched)
            dq_bench_reference(b, DQ_BREF_ZADD_P100, when);
        for (size_t i = 0; i < nv && !dq_bench_stop(); i++) {
            if (failed[i])
                continue;
            dq_bench_say(b, "throughput: %s %s, round %d", ss[i]->name,
                         vs[i].spec, rep);
            tp_enqueue(b, ss[i], &vs[i], pl->batched_tasks, 1,
                       DQ_BTP_BATCHED);
            for (size_t ci = 0; ci < pl->nconsumers && !failed[i]; ci++)
                if (tp_e2e_one(b, ss[i], &vs[i], pl->consumers[ci],
                               pl->batched_tasks, rep, DQ_BTP_BATCHED) != 0)
                    failed[i] = true;
        }
    }
}

/* One harness trial of s (the no-op queue or an in-process strategy):
 * harness.csv and b->hxs.  Returns 0, 1 (interrupted) or -1. */
static int harness_one(dq_bench *b, const dq_strategy *s, int rep)
{
    const dq_bench_plan *pl = b->pl;
    int c = pl->target_consumers;
    char what[128];
    dq_trial_result r;
    dq_bench_hx *h;
    int rc;

    snprintf(what, sizeof what, "harness %s repeat %d", s->name, rep);
    if ((rc = trial(b, s, NULL, c, pl->harness_tasks, rep, what, &r)) != 0)
        return rc;
    const dq_check *k = &r.check;
    /* E, D and A per task: what the log shows (checker counts). */
    uint64_t events = k->enqueued + k->deliveries + k->acked;
    double eps = r.elapsed_s > 0 ? (double)events / r.elapsed_s : 0;
    fprintf(b->harness, "%s,%s,%d,%d,%d,%" PRId64 ",%.4f,%.1f,%" PRIu64
            ",%.1f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
            s == &dq_ceiling_noop ? "ceiling" : "in-process", s->name,
            pl->producers, c, rep, pl->harness_tasks, r.elapsed_s,
            r.tasks_per_s, events, eps, k->delivered, k->duplicates,
            k->lost, k->early);
    fflush(b->harness);
    if ((h = dq_bench_grow((void **)&b->hxs, &b->nhxs, sizeof *h)) != NULL)
        *h = (dq_bench_hx){s, r.tasks_per_s, eps};
    return 0;
}

/* The harness's ceiling and every in-process strategy, in rounds. */
static void block_harness(dq_bench *b)
{
    const dq_bench_plan *pl = b->pl;

    for (int rep = 1; rep <= pl->target_repeats && !dq_bench_stop(); rep++) {
        dq_bench_say(b, "harness: %s, round %d", dq_ceiling_noop.name, rep);
        if (harness_one(b, &dq_ceiling_noop, rep) < 0)
            return;
        for (size_t si = 0; dq_strategies[si] && !dq_bench_stop(); si++) {
            const dq_strategy *s = dq_strategies[si];

            if (!dq_bench_selected(b, s) || (s->flags & DQ_G_NEEDS_REDIS))
                continue;
            dq_bench_say(b, "harness: %s, round %d", s->name, rep);
            harness_one(b, s, rep);
        }
    }
}

void dq_bench_part_throughput(dq_bench *b)
{
    block_curve(b);
    block_one_rtt(b);
    block_batched(b);
    block_harness(b);
}
