/* sec_pack.c -- the interview and coursework pack (text/pack.md): five
 * questions the tutorials and interview guides ask, each with a model
 * answer, the evidence of this run and what a strong and a weak answer
 * look like; then the exercises of harness/exercise.h with the commands
 * that start and check them.
 *
 * Where each answer's evidence comes from (results.h, facts.h):
 *   why not a plain List      the C28 probe; the list strategy's p99
 *   does polling bottleneck   the idle experiment (the polling strategy run
 *                             at the most poll intervals, the blocking ones,
 *                             an in-process row: the server alone), the
 *                             bench's ZADD ceiling, its p99 per interval
 *   what at huge scale        the bench (claim against the backlog, bytes
 *                             per task, end-to-end rates), expiry's
 *                             deliveries at the largest backlog
 *   how not to lose tasks     the loss table through facts: kills, Redis
 *                             restarts, host crashes
 *   ms timestamp in a score   the C06 probes
 * A measurement these results lack is said to be missing, with the
 * command that makes it.  Figures are linked only when the sections
 * above drew them, so every link resolves.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../harness/exercise.h"
#include "front.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* The hypothetical sizes the answers scale this run's figures to. */
#define PACK_MANY_CONSUMERS 1000
#define PACK_MANY_TASKS 100000000.0

enum { EV = 8192 };            /* an answer's evidence, bytes */

/* DQ_TBUF for a buffer given as a pointer and its length. */
#define PUT(buf, len, name, fmt, ...)                                        \
    DQ_TCAT(o->texts, buf, len, &(size_t){strlen(buf)}, name, fmt,           \
            ##__VA_ARGS__)

/* "YYYY-mm-dd" (UTC) of s seconds since the epoch. */
static void utc_date(int64_t s, char *buf, size_t len)
{
    time_t t = (time_t)s;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%d", &tm) == 0)
        snprintf(buf, len, "?");
}

/* A rate for the text: one decimal below 10, none above. */
static void fmt_rate(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.*f", v < 10 ? 1 : 0, v);
}

/* Appends " **Figures** ...: [a](figures/a.svg), ..." for the stems whose
 * SVG the report holds (NULL-terminated), to buf. */
static void figures(dq_md *o, const char *const *stems, char *buf,
                    size_t len)
{
    char list[1024] = "", path[4096];
    size_t off = 0;
    for (size_t i = 0; stems[i] != NULL; i++) {
        snprintf(path, sizeof path, "%s/figures/%s.svg", o->dir, stems[i]);
        if (stems[i][0] != '\0' && access(path, R_OK) == 0)
            DQ_TCAT(o->texts, list, sizeof list, &off, "pack.fig_item",
                    "%sstem=%s", off ? ", " : "", stems[i]);
    }
    if (off > 0)
        PUT(buf, len, "pack.figs", " list=%s", list);
}

/* The stem "<e>-<figure of kind>" of e's section figure, or "", in buf
 * (256 bytes); returns buf. */
static const char *stem_of(const dq_rexp *e, const char *kind, char *buf)
{
    buf[0] = '\0';
    for (const dq_section *s = dq_sections; e && s->kind; s++)
        if (strcmp(s->kind, kind) == 0)
            snprintf(buf, 256, "%s-%s", e->name, s->figure);
    return buf;
}

/* ---- Why not a plain List (C28) ----------------------------------------- */

static void ev_list(dq_md *o, const dq_results *r, const dq_facts *f,
                    char *ev, size_t len)
{
    const dq_probe_row *row = dq_probes_find(&r->probes, "C28",
                                             "list-vs-zset");
    static const char *const keys[] = {
        "list_late_a_us", "list_late_b_us", "zset_late_a_us",
        "zset_late_b_us", "list_b_first", "zset_b_first", "hol_ms",
    };
    int64_t v[7];
    char strat[1024] = "", lat[512], lf[8] = "", zf[8] = "";
    for (size_t i = 0; i < 7; i++)
        if (!dq_probe_int(row, keys[i], &v[i])) {
            PUT(ev, len, "pack.list_none", "root=%s", r->root);
            return;
        }
    const dq_fact *x = dq_facts_find(f, "list");
    if (x != NULL && x->lat && !x->lat_censored) {
        dq_cell_lat(o->texts, f, x, lat, sizeof lat);
        DQ_TBUF(o, strat, "pack.list_strategy", "lat=%s", lat);
    }
    DQ_TBUFP(o, lf, v[4] != 0, "pack.first_b", "pack.first_a", "");
    DQ_TBUFP(o, zf, v[5] != 0, "pack.first_b", "pack.first_a", "");
    PUT(ev, len, "pack.list_ev", "redis=%s hol=%" PRId64 " lfirst=%s "
            "lb=%.1f zfirst=%s zb=%.1f za=%.1f strategy=%s",
            r->probes.redis_version[0] ? r->probes.redis_version : "?",
            v[6], lf, (double)v[1] / 1000.0, zf, (double)v[3] / 1000.0,
            (double)v[2] / 1000.0, strat);
}

/* ---- Does polling bottleneck Redis -------------------------------------- */

/* The polling strategy of e run in the most groups (registry order breaks
 * ties), or NULL. */
static const char *most_polled(const dq_rexp *e)
{
    const char *best = NULL;
    size_t most = 0;
    for (size_t k = 0; dq_strategies[k] != NULL; k++) {
        size_t n = 0;
        if (!(dq_strategies[k]->flags & DQ_G_POLLS))
            continue;
        for (size_t i = 0; i < e->ngroups; i++)
            n += strcmp(e->groups[i].strategy, dq_strategies[k]->name) == 0;
        if (n > most) {
            most = n;
            best = dq_strategies[k]->name;
        }
    }
    return best;
}

/* Indices of e's groups of strategy name by poll interval (at most max). */
static size_t groups_by_poll(const dq_rexp *e, const char *name, size_t *idx,
                             size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < e->ngroups && n < max; i++)
        if (strcmp(e->groups[i].strategy, name) == 0)
            idx[n++] = i;
    for (size_t i = 1; i < n; i++)          /* insertion sort by poll_ms */
        for (size_t j = i; j > 0 && dq_group_poll_ms(&e->groups[idx[j]]) <
                               dq_group_poll_ms(&e->groups[idx[j - 1]]);
             j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    return n;
}

/* What the interval costs in lateness: name's p99 per poll interval in
 * the lateness experiment, into buf. */
static void poll_lateness(dq_md *o, const dq_results *r, const dq_facts *f,
                          const char *name, char *buf, size_t len)
{
    const dq_rexp *e = f->lat;
    char list[1024] = "", p99[32], id[80];
    size_t idx[16], n = e && e->pools ? groups_by_poll(e, name, idx, 16) : 0,
                    off = 0;
    for (size_t i = 0; i < n; i++) {
        double v;
        if (!dq_rpool_pct(&e->pools[idx[i]], 99, &v))
            continue;
        dq_fmt_ms(p99, sizeof p99, v);
        DQ_TCAT(o->texts, list, sizeof list, &off, "pack.poll_lat_item",
                "%sp99=%s poll=%ld", off ? ", " : "", p99,
                dq_group_poll_ms(&e->groups[idx[i]]));
    }
    buf[0] = '\0';
    dq_exp_anchor(e, id, sizeof id);
    if (off > 0)
        DQ_TSET(o->texts, buf, len, "pack.poll_lat", "list=%s id=%s", list,
                id);
    else
        DQ_TSET(o->texts, buf, len, "pack.poll_lat_none", "root=%s",
                r->root);
}

/* The busiest polling row against this server's ceiling, into buf. */
static void poll_ceiling(dq_md *o, const dq_results *r, double busiest,
                         int consumers, char *buf, size_t len)
{
    char cmds[32], per[32], many[32], zadd[32];
    double z = r->bench.present ? r->bench.zadd_per_s : -1;
    if (z <= 0 || consumers <= 0) {
        DQ_TSET(o->texts, buf, len, "pack.poll_ceiling_none", "");
        return;
    }
    fmt_rate(cmds, sizeof cmds, busiest);
    fmt_rate(per, sizeof per, busiest / consumers);
    fmt_rate(many, sizeof many, busiest / consumers * PACK_MANY_CONSUMERS);
    fmt_rate(zadd, sizeof zadd, z);
    DQ_TSET(o->texts, buf, len, "pack.poll_ceiling", "cmds=%s "
            "pct=%.2g zadd=%s per=%s k=%d many=%s consumers=%d", cmds,
            100.0 * busiest / z, zadd, per, PACK_MANY_CONSUMERS, many,
            consumers);
}

/* The blocking strategies' idle cost, into buf. */
static void poll_blocking(dq_md *o, const dq_facts *f, char *buf, size_t len)
{
    char cmds[32];
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < f->n; i++) {
        const dq_fact *x = &f->f[i];
        if (!(x->s->flags & DQ_G_BLOCKS) || !(x->s->flags & DQ_G_NEEDS_REDIS)
            || !x->idle)
            continue;
        fmt_rate(cmds, sizeof cmds, x->idle_cmds_s);
        DQ_TCAT(o->texts, buf, len, &off, "pack.block_item", "%sname=%s "
                "cmds=%s", off ? ", " : "", x->s->name, cmds);
    }
    if (off == 0)
        DQ_TCAT(o->texts, buf, len, &off, "pack.none", "");
}

static void ev_poll(dq_md *o, const dq_results *r, const dq_facts *f,
                    char *ev, size_t len)
{
    const dq_rexp *e = f->idle;
    const char *name = e ? most_polled(e) : NULL;
    char series[2048] = "", floor[256] = "", block[1024], ceil[1024];
    char lat[1536], id[80], cmds[32], cpu[32];
    size_t idx[16], n = name ? groups_by_poll(e, name, idx, 16) : 0, off = 0;
    double busiest = 0;
    if (n == 0) {
        PUT(ev, len, "pack.poll_none", "root=%s", r->root);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const dq_rgroup *g = &e->groups[idx[i]];
        fmt_rate(cmds, sizeof cmds, g->cmds_per_s_median);
        dq_fmt_double(cpu, sizeof cpu, g->cpu_ms_per_s_median, 1);
        DQ_TCAT(o->texts, series, sizeof series, &off, "pack.poll_item",
                "%spoll=%ld cmds=%s cpu=%s", i ? "; " : "",
                dq_group_poll_ms(g), cmds, cpu);
        busiest = g->cmds_per_s_median > busiest ? g->cmds_per_s_median
                                                 : busiest;
    }
    for (size_t i = 0; i < e->ngroups && floor[0] == '\0'; i++) {
        if (dq_group_waits(&e->groups[i]) == DQ_WAITS_IN_PROCESS) {
            dq_fmt_double(cpu, sizeof cpu, e->groups[i].cpu_ms_per_s_median,
                          1);
            DQ_TBUF(o, floor, "pack.poll_floor", "cpu=%s", cpu);
        }
    }
    poll_blocking(o, f, block, sizeof block);
    poll_ceiling(o, r, busiest, e->groups[idx[0]].consumers, ceil,
                 sizeof ceil);
    poll_lateness(o, r, f, name, lat, sizeof lat);
    dq_exp_anchor(e, id, sizeof id);
    PUT(ev, len, "pack.poll_ev", "consumers=%d name=%s id=%s series=%s "
            "floor=%s blocking=%s ceiling=%s lat=%s",
            e->groups[idx[0]].consumers, name, id, series, floor, block,
            ceil, lat);
}

/* ---- What at huge scale ------------------------------------------------- */

/* The strategy whose backlog rows the answer quotes: lua when the bench
 * has two backlogs of it, else the first Redis strategy that has; its
 * smallest and largest rows in *lo, *hi. */
static const char *scale_strategy(const dq_perf *p, const dq_perf_bl **lo,
                                  const dq_perf_bl **hi)
{
    dq_perf_backlog_range(p, "lua", lo, hi);
    if (*lo != NULL && *hi != NULL && *lo != *hi)
        return "lua";
    for (size_t k = 0; dq_strategies[k] != NULL; k++) {
        if (!(dq_strategies[k]->flags & DQ_G_NEEDS_REDIS))
            continue;
        dq_perf_backlog_range(p, dq_strategies[k]->name, lo, hi);
        if (*lo != NULL && *hi != NULL && *lo != *hi)
            return dq_strategies[k]->name;
    }
    return NULL;
}

/* The backlog and throughput sentences of the bench, into buf. */
static void scale_bench(dq_md *o, const dq_perf *p, char *buf, size_t len)
{
    const dq_perf_bl *lo = NULL, *hi = NULL;
    const char *name = scale_strategy(p, &lo, &hi);
    char label[256] = "", l[256], zadd[32] = "";
    double btps = -1;
    int at = 0;
    if (name != NULL && lo->claim_us_p50 > 0 && lo->backlog > 1) {
        double gb = hi->bytes_per_task * PACK_MANY_TASKS / 1e9;
        PUT(buf, len, "pack.scale_backlog", "name=%s lo=%.0f lo_n=%" PRId64
                " hi=%.0f hi_n=%" PRId64 " ratio=%.2f logr=%.2f bytes=%.0f "
                "scale=%.0f gb=%.*f", name, lo->claim_us_p50, lo->backlog,
                hi->claim_us_p50, hi->backlog,
                hi->claim_us_p50 / lo->claim_us_p50,
                log((double)hi->backlog) / log((double)lo->backlog),
                hi->bytes_per_task, PACK_MANY_TASKS, gb < 100 ? 1 : 0, gb);
    }
    name = name ? name : "lua";
    double tps = dq_perf_e2e(p, name, 0, &at);
    for (size_t i = 0; i < p->ntp; i++) {       /* its best batched variant */
        dq_perf_tp_label(&p->tp[i], l, sizeof l);
        double v = strncmp(l, name, strlen(name)) == 0 &&
                   l[strlen(name)] == ' ' ? dq_perf_e2e(p, l, 0, NULL) : -1;
        if (v > btps) {
            btps = v;
            snprintf(label, sizeof label, "%s", l);
        }
    }
    fmt_rate(zadd, sizeof zadd, p->zadd_per_s);
    if (tps > 0 && btps > 0 && p->zadd_per_s > 0)
        PUT(buf, len, "pack.scale_tp", "name=%s tps=%.0f at=%d label=%s "
                "btps=%.0f x=%.1f zadd=%s", name, tps, at, label, btps,
                btps / tps, zadd);
}

static void ev_scale(dq_md *o, const dq_results *r, const dq_facts *f,
                     char *ev, size_t len)
{
    char bench[4096] = "", expiry[1024] = "", id[80];
    const dq_fact *x = NULL;
    for (size_t i = 0; x == NULL && i < f->n; i++)   /* woken by events */
        if (f->f[i].s->flags & DQ_G_KEYSPACE_EVENTS)
            x = &f->f[i];
    if (r->bench.present)
        scale_bench(o, &r->bench, bench, sizeof bench);
    if (bench[0] == '\0')
        DQ_TBUF(o, bench, "pack.scale_none", "root=%s", r->root);
    dq_exp_anchor(f->backlog, id, sizeof id);
    if (x != NULL && x->backlog && x->backlog_delivered < x->backlog_tasks)
        DQ_TBUF(o, expiry, "pack.scale_expiry", "name=%s n=%" PRIu64
                " of=%" PRIu64 " window=%.0f backlog=%" PRId64 " id=%s",
                x->s->name, x->backlog_delivered, x->backlog_tasks,
                x->backlog_window_s * 1000.0, x->backlog_n, id);
    PUT(ev, len, "pack.scale_ev", "bench=%s expiry=%s", bench, expiry);
}

/* ---- How not to lose tasks ---------------------------------------------- */

/* Linked names with their consumer-kill cells of the Redis strategies
 * whose flags have all of `with` (and, for at-most-once, no lease), into
 * buf; the redelivered tasks summed into *back. */
static void kill_list(dq_md *o, const dq_facts *f, unsigned with, char *buf,
                      size_t len, uint64_t *back)
{
    char name[128], cell[512];
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < f->n; i++) {
        const dq_fact *x = &f->f[i];
        unsigned fl = x->s->flags;
        if (!x->kill.measured || (fl & with) != with ||
            !(fl & DQ_G_NEEDS_REDIS))
            continue;
        dq_cell_name(o->texts, x, name, sizeof name);
        dq_cell_kill(o->texts, f, x, cell, sizeof cell);
        DQ_TCAT(o->texts, buf, len, &off, "pack.loss_item", "%sname=%s "
                "cell=%s", off ? "; " : "", name, cell);
        *back += x->kill.redelivered;
    }
    if (off == 0)
        DQ_TCAT(o->texts, buf, len, &off, "pack.none", "");
}

/* The Redis restarts of the first leased strategy measured, and what a
 * host crash cost (or that it was not measured), into crash and host. */
static void loss_redis(dq_md *o, const dq_facts *f, char *crash, size_t clen,
                       char *host, size_t hlen)
{
    char name[128], cell[512], list[4096];
    crash[0] = host[0] = '\0';
    for (size_t i = 0; i < f->n && crash[0] == '\0'; i++) {
        const dq_fact *x = &f->f[i];
        dq_tally t = dq_tally_sum(x->crash, DQ_AOF_MODES);
        if (!(x->s->flags & DQ_G_AT_LEAST_ONCE) || !t.measured)
            continue;
        dq_cell_name(o->texts, x, name, sizeof name);
        dq_cell_crash(o->texts, f, x, cell, sizeof cell);
        DQ_TSET(o->texts, crash, clen, "pack.loss_crash", "name=%s crash=%s",
                name, cell);
    }
    if (dq_host_list(o->texts, f, " of ", list, sizeof list) > 0)
        DQ_TSET(o->texts, host, hlen, "pack.loss_host_some", "list=%s", list);
    else
        DQ_TSET(o->texts, host, hlen, "pack.loss_host_none", "");
}

static void ev_loss(dq_md *o, const dq_results *r, const dq_facts *f,
                    char *ev, size_t len)
{
    char amo[2048], alo[2048], crash[1024], host[5120], again[256] = "";
    char id[80];
    uint64_t back = 0, ignored = 0;
    if (f->loss == NULL) {
        PUT(ev, len, "pack.loss_none", "root=%s", r->root);
        return;
    }
    kill_list(o, f, DQ_G_AT_MOST_ONCE, amo, sizeof amo, &ignored);
    kill_list(o, f, DQ_G_AT_LEAST_ONCE, alo, sizeof alo, &back);
    loss_redis(o, f, crash, sizeof crash, host, sizeof host);
    if (back > 0)
        DQ_TBUF(o, again, "pack.loss_again", "n=%" PRIu64 " s=%s", back,
                dq_s(back));
    dq_exp_anchor(f->loss, id, sizeof id);
    PUT(ev, len, "pack.loss_ev", "id=%s amo=%s alo=%s crash=%s host=%s "
            "again=%s", id, amo, alo, crash, host, again);
}

/* ---- A millisecond timestamp in a score (C06) --------------------------- */

/* The optional parts of the score answer (us, ns, the first inexact
 * integer, packed ids) that these probes hold, into buf. */
static void score_more(dq_md *o, const dq_probes *p, char *buf, size_t len)
{
    const dq_probe_row *us = dq_probes_find(p, "C06", "us-epoch");
    const dq_probe_row *ns = dq_probes_find(p, "C06", "ns-epoch");
    const dq_probe_row *fi = dq_probes_find(p, "C06", "first-inexact");
    const dq_probe_row *px = dq_probes_find(p, "C06", "ms-x4096");
    int64_t e, n, err, first, x;
    char d[3][32];
    if (dq_probe_int(us, "exact", &e) && dq_probe_int(us, "n", &n))
        PUT(buf, len, "pack.score_us", "exact=%" PRId64 " n=%" PRId64, e, n);
    if (dq_probe_int(ns, "exact", &e) && dq_probe_int(ns, "n", &n) &&
        dq_probe_int(ns, "max_err", &err))
        PUT(buf, len, "pack.score_ns", "exact=%" PRId64 " n=%" PRId64
                " err=%" PRId64, e, n, err);
    if (dq_probe_int(fi, "first_inexact", &first) && first > 0) {
        for (int64_t k = 0, per_s = 1000; k < 3; k++, per_s *= 1000)
            utc_date((first - 1) / per_s, d[k], sizeof d[k]);
        PUT(buf, len, "pack.score_first", "first=%" PRId64 " ms=%s us=%s "
                "ns=%s", first, d[0], d[1], d[2]);
    }
    if (dq_probe_int(px, "first_inexact_ms", &x) && x > 0) {
        utc_date(x / 1000, d[0], sizeof d[0]);
        PUT(buf, len, "pack.score_x4096", "date=%s", d[0]);
    }
}

static void ev_score(dq_md *o, const dq_results *r, const dq_facts *f,
                     char *ev, size_t len)
{
    (void)f;
    const dq_probe_row *ms = dq_probes_find(&r->probes, "C06", "ms-epoch");
    int64_t e, n, lo, hi;
    char dlo[32], dhi[32], more[2048] = "";
    if (!dq_probe_int(ms, "exact", &e) || !dq_probe_int(ms, "n", &n) ||
        !dq_probe_int(ms, "lo", &lo) || !dq_probe_int(ms, "hi", &hi)) {
        PUT(ev, len, "pack.score_none", "root=%s", r->root);
        return;
    }
    utc_date(lo / 1000, dlo, sizeof dlo);
    utc_date(hi / 1000, dhi, sizeof dhi);
    score_more(o, &r->probes, more, sizeof more);
    PUT(ev, len, "pack.score_ev", "redis=%s exact=%" PRId64 " n=%" PRId64
            " lo=%s hi=%s more=%s", r->probes.redis_version[0] ?
            r->probes.redis_version : "?", e, n, dlo, dhi, more);
}

/* ---- Exercises ---------------------------------------------------------- */

/* The number (1-based) of exercise id in ex, or 0. */
static size_t exercise_no(const dq_exercise_set *ex, const char *id)
{
    const dq_exercise *x = dq_exercise_find(ex, id);
    return x != NULL ? (size_t)(x - ex->x) + 1 : 0;
}

/* How exercise x starts, for a strategy named mine, into buf. */
static void ex_start(dq_md *o, const dq_exercise_set *ex,
                     const dq_exercise *x, char *buf, size_t len)
{
    char steps[3][512], list[2048] = "", file[80];
    size_t ns = dq_exercise_start(x, "mine", steps, 3), off = 0;
    buf[0] = '\0';
    if (ns == 0) {
        PUT(buf, len, "pack.ex_after", "n=%zu id=%s",
            exercise_no(ex, x->after), x->after ? x->after : "");
        return;
    }
    for (size_t i = 0; i < ns; i++)
        DQ_TCAT(o->texts, list, sizeof list, &off, "pack.ex_step",
                "%sn=%zu cmd=%s", i ? "\n" : "", i + 1, steps[i]);
    dq_exercise_ident(x->from, file, sizeof file - 2);
    strcat(file, ".c");
    PUT(buf, len, "pack.ex_start", "file=%s steps=%s", file, list);
}

/* The checks of x as a numbered list, into buf. */
static void ex_checks(dq_md *o, const dq_exercise *x, char *buf, size_t len)
{
    char cmd[2048], dir[128], stem[32];
    size_t off = 0;
    buf[0] = '\0';
    snprintf(dir, sizeof dir, "/tmp/mine-%s", x->id);
    for (size_t k = 0; x->checks[k].what != NULL; k++) {
        snprintf(stem, sizeof stem, "trial-%zu", k + 1);
        dq_xcheck_command(&x->checks[k], NULL, "mine", dir, stem, cmd,
                          sizeof cmd);
        DQ_TCAT(o->texts, buf, len, &off, "pack.ex_check", "%sn=%zu what=%s "
                "cmd=%s proves=%s", k ? "\n" : "", k + 1, x->checks[k].what,
                cmd, x->checks[k].proves);
    }
}

static void exercises(dq_md *o, const dq_exercise_set *ex)
{
    char start[4096], checks[8192], id[96];
    dq_anchor(o, "pack-exercises");
    DQ_TEXT(o, "pack.exercises", "\n\n");
    for (size_t i = 0; i < ex->n; i++) {
        const dq_exercise *x = &ex->x[i];
        ex_start(o, ex, x, start, sizeof start);
        ex_checks(o, x, checks, sizeof checks);
        snprintf(id, sizeof id, "pack-ex-%s", x->id);
        dq_anchor(o, id);
        DQ_TEXT(o, "pack.ex", "n=%zu title=%s task=%s start=%s id=%s "
                "checks=%s ref=%s fails=%s why=%s\n\n", i + 1, x->title,
                x->task, start, x->id, checks, x->reference, x->fails,
                x->fails_why);
    }
}

/* ---- The part ----------------------------------------------------------- */

#define QUESTION "evidence=%s\n\n"

/* Each question's template (its anchor: "pack-<name>"), in q's order. */
static const dq_tuse questions[] DQ_TUSES = {
    {"pack.list", QUESTION}, {"pack.poll", QUESTION}, {"pack.scale", QUESTION},
    {"pack.loss", QUESTION}, {"pack.score", QUESTION},
};

void dq_section_pack(dq_md *o, const dq_results *r,
                     const dq_exercise_set *ex)
{
    dq_facts *f = malloc(sizeof *f);
    char *ev = malloc(EV), st[3][256], id[32];
    if (f == NULL || ev == NULL) {
        dq_put(o, "(out of memory)\n\n");
        goto done;
    }
    dq_facts_compute(r, f);
    const struct {     /* its evidence, then the figures linked after it */
        void (*ev)(dq_md *, const dq_results *, const dq_facts *, char *,
                   size_t);
        const char *figs[4];
    } q[] = {
        {ev_list, {NULL}},
        {ev_poll, {stem_of(f->idle, "idle-cost", st[0]),
                   stem_of(f->lat, "lateness-cdf", st[1]), NULL}},
        {ev_scale, {"bench-backlog", "bench-throughput",
                    stem_of(f->backlog, "backlog-lateness", st[2]), NULL}},
        {ev_loss, {NULL}},
        {ev_score, {NULL}},
    };
    DQ_TEXT(o, "pack.intro", "\n\n");
    DQ_TEXT(o, "pack.questions", "\n\n");
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        ev[0] = '\0';
        q[i].ev(o, r, f, ev, EV);
        figures(o, q[i].figs, ev, EV);
        snprintf(id, sizeof id, "pack-%s", strchr(questions[i].name, '.') + 1);
        dq_anchor(o, id);
        dq_text(o, &questions[i], QUESTION, ev);
    }
    exercises(o, ex);
done:
    free(f);
    free(ev);
}
