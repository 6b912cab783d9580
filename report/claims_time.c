/* claims_time.c -- the rules on lateness, cost and growth: polling
 * lateness against the poll interval and what a shorter one costs (C10,
 * C11, C04, C16), the claim cost against the backlog (C05) and the
 * in-process heap's wake-ups and cost per operation (C17).
 *
 * A bound is compared with the tolerance its text states: for C10 the poll
 * interval plus one round trip to the server measured in the same trials
 * (trials.csv rtt_ms), and only where the consumers kept up -- a consumer
 * that falls behind makes a task wait in the queue, which is queueing, not
 * polling.  Each spread is over the repeats of one cell (claims_int.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../strategies/dq.h"
#include "claims_int.h"

#define MAXV 64   /* values per cell: repeats */

/* A per-trial value of a trials.csv row; NAN where undefined. */
typedef double (*trial_value_fn)(const dq_trialrow *t);

static double tv_p50(const dq_trialrow *t)
{
    return t->delivered ? t->lateness_p50_ms : NAN;
}

static double tv_p99(const dq_trialrow *t)
{
    return t->delivered ? t->lateness_p99_ms : NAN;
}

static double tv_cpu_s(const dq_trialrow *t)
{
    return t->redis_cpu_ms >= 0 && t->measured_s > 0
               ? t->redis_cpu_ms / t->measured_s : NAN;
}

static double tv_cmds_s(const dq_trialrow *t)
{
    return t->redis_commands >= 0 && t->measured_s > 0
               ? (double)t->redis_commands / t->measured_s : NAN;
}

static double tv_wakeups(const dq_trialrow *t)
{
    return t->deliveries ? (double)t->wakeups / (double)t->deliveries : NAN;
}

/* The values f gives the trials of g in e (NAN skipped), at most max,
 * into v; returns how many. */
static size_t group_values(const dq_rexp *e, const dq_rgroup *g,
                           trial_value_fn f, double *v, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; e != NULL && g != NULL && i < e->ntrials && n < max;
         i++)
        if (dq_trial_in_group(&e->trials[i], g) &&
            !isnan(v[n] = f(&e->trials[i])))
            n++;
    return n;
}

/* The group of strategy in e with backlog 0 and, when poll > 0, that
 * poll interval, or NULL; e may be NULL. */
static const dq_rgroup *group_of(const dq_rexp *e, const char *strategy,
                                 long poll)
{
    for (size_t i = 0; e != NULL && i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        if (strcmp(g->strategy, strategy) == 0 && g->backlog == 0 &&
            (poll <= 0 || dq_group_poll_ms(g) == poll))
            return g;
    }
    return NULL;
}

/* ---- C10: lateness within the poll interval ----------------------------- */

typedef struct c10_sum {      /* the polling variants against the interval */
    size_t npoll, nstrict, nmax, ntol, nslow, nuntested, nnoise, repeats;
    uint64_t tasks;
    double rate, worst_over, worst_lo, worst_hi;  /* ms */
    double floor;             /* the machine's own p99, ms (c10_floor) */
    char worst[160];
    bool early, no_rtt;
} c10_sum;

/* Whether the consumers of trial t kept up: its last task was delivered
 * within two poll intervals (plus 100 ms) of the last due time. */
static bool kept_up(const dq_trialrow *t, long poll_ms)
{
    return t->elapsed_s * 1000.0 <=
           (double)t->delay_max_ms + 2.0 * (double)poll_ms + 100.0;
}

/* The trials of g in lat whose consumers kept up: their p99, max and
 * round trip (-1: none) into p99, mx, rtt; returns how many, the others
 * (queueing: left out) counted in *slow. */
static size_t c10_trials(const dq_rexp *lat, const dq_rgroup *g, long pm,
                         double *p99, double *mx, double *rtt, size_t *slow)
{
    size_t n = 0;
    for (size_t i = 0; i < lat->ntrials && n < MAXV; i++) {
        const dq_trialrow *t = &lat->trials[i];
        if (!dq_trial_in_group(t, g) || t->delivered == 0)
            continue;
        if (!kept_up(t, pm)) {
            (*slow)++;
            continue;
        }
        p99[n] = t->lateness_p99_ms;
        mx[n] = t->lateness_max_ms;
        rtt[n++] = t->rtt_ms;
    }
    return n;
}

/* One polling variant g of lat: its p99 over the repeats where consumers
 * kept up against poll + one round trip, one clause of the evidence. */
static void c10_variant(dq_ev *ev, const dq_rexp *lat, const dq_rgroup *g,
                        long pm, c10_sum *b)
{
    double p99[MAXV], mx[MAXV], rtt[MAXV], lo, hi, mlo, mhi, d = (double)pm;
    size_t n = c10_trials(lat, g, pm, p99, mx, rtt, &b->nslow), nr = 0;
    char name[300] = "", rs[32];
    snprintf(name, sizeof name, "%s%s%s", g->strategy, g->options[0] ? " "
             : "", g->options);
    for (char *p = name; *p; p++)
        *p = *p == ';' ? ' ' : *p;
    b->npoll++;
    if (n == 0) {   /* every trial queued: the bound was not tested */
        b->nuntested++;
        TSAY(c10_variant_slow, "%sname=%s", ev->off ? "; " : "", name);
        return;
    }
    for (size_t i = 0; i < n; i++)
        rtt[nr] = rtt[i], nr += rtt[i] >= 0;
    dq_minmax(p99, n, &lo, &hi);
    dq_minmax(mx, n, &mlo, &mhi);
    double m99 = dq_median(p99, n), r = nr ? dq_median(rtt, nr) : 0;
    b->no_rtt |= nr == 0;
    b->repeats = n > b->repeats ? n : b->repeats;
    b->tasks += g->enqueued_sum;
    b->nstrict += hi <= d;
    b->nmax += mhi <= d;
    b->ntol += m99 <= d + r;
    b->nnoise += m99 > d + r && m99 - d - r <= b->floor;
    b->early |= g->early_max > 0;
    if (b->worst[0] == '\0' || m99 - d > b->worst_over) {
        b->worst_over = m99 - d;
        b->worst_lo = lo;
        b->worst_hi = hi;
        snprintf(b->worst, sizeof b->worst, "%s", name);
    }
    if (nr > 0)
        snprintf(rs, sizeof rs, "%.3f", r);
    else
        TBUF(rs, c10_rtt_none, "");
    DQ_TCATP(ev->t, ev->buf, ev->len, &ev->off, n >= DQ_MIN_REPEATS,
             "claims.c10_variant", "claims.c10_variant_few", "%sname=%s "
             "ms=%ld p99=%.2f lo=%.2f hi=%.2f n=%zu max=%.1f rtt=%s",
             ev->off ? "; " : "", name, pm, m99, lo, hi, n, mhi, rs);
    if (m99 > d + r)
        DQ_TCATP(ev->t, ev->buf, ev->len, &ev->off, m99 - d - r <= b->floor,
                 "claims.c10_within_floor", "claims.c10_beyond_tol",
                 " ms=%.2f", m99 - d - r);
}

/* The machine's own floor in lat: the median p99 of the trials of the
 * in-process strategies, which wait for no poll and no Redis (a task
 * late there was late for the machine: a descheduled thread, a stall);
 * 0 without one. */
static double c10_floor(const dq_rexp *lat)
{
    double v[MAXV];
    size_t n = 0;
    for (size_t i = 0; lat != NULL && i < lat->ntrials && n < MAXV; i++) {
        const dq_strategy *s = dq_strategy_find(lat->trials[i].strategy);
        if (s != NULL && !(s->flags & (DQ_G_NEEDS_REDIS | DQ_G_POLLS)) &&
            lat->trials[i].delivered)
            v[n++] = lat->trials[i].lateness_p99_ms;
    }
    return n ? dq_median(v, n) : 0;
}

/* C10's cost part: commands at the shortest against the longest poll_ms
 * of each polling strategy while idle.  Returns whether any was measured;
 * *grows: each shorter interval caused more commands. */
static bool c10_cost(dq_ev *ev, const dq_rexp *idle, bool *grows)
{
    bool known = false;
    *grows = true;
    for (size_t i = 0; idle != NULL && i < idle->ngroups; i++) {
        const dq_rgroup *a = &idle->groups[i], *b = NULL;
        long pa = dq_group_poll_ms(a), px;
        bool shortest = pa > 0;
        for (size_t j = 0; shortest && j < idle->ngroups; j++) {
            const dq_rgroup *x = &idle->groups[j];
            if (strcmp(x->strategy, a->strategy) != 0 ||
                (px = dq_group_poll_ms(x)) <= 0)
                continue;
            shortest &= px >= pa;
            b = px > pa && (b == NULL || px > dq_group_poll_ms(b)) ? x : b;
        }
        if (!shortest || b == NULL || a->cmds_per_s_median < 0 ||
            b->cmds_per_s_median < 0)
            continue;
        known = true;
        *grows &= a->cmds_per_s_median > b->cmds_per_s_median;
        TSAY(c10_idle, "  consumers=%d strategy=%s pa=%ld ca=%.0f ua=%.1f "
             "pb=%ld cb=%.1f ub=%.1f exp=%s ", a->consumers, a->strategy, pa,
             a->cmds_per_s_median, a->cpu_ms_per_s_median,
             dq_group_poll_ms(b), b->cmds_per_s_median,
             b->cpu_ms_per_s_median, idle->name);
    }
    return known;
}

/* Where consumers did not keep up: naive at one consumer in another
 * experiment with a p99 beyond its poll interval (the largest), said as
 * queueing. */
static void c10_queueing(dq_ev *ev, const dq_results *r, const dq_rexp *lat)
{
    const dq_rexp *at = NULL;
    const dq_rgroup *w = NULL;
    for (size_t i = 0; i < r->nexps; i++) {
        const dq_rexp *e = &r->exps[i];
        for (size_t j = 0; e != lat && !dq_loss_is(e) && j < e->ngroups; j++) {
            const dq_rgroup *g = &e->groups[j];
            long pm = dq_group_poll_ms(g);
            if (strcmp(g->strategy, "naive") == 0 && g->consumers == 1 &&
                pm > 0 && g->p99_median > (double)pm &&
                (w == NULL || g->p99_median > w->p99_median))
                w = g, at = e;
        }
    }
    const dq_trialrow *t = at && at->ntrials ? &at->trials[0] : NULL;
    if (w != NULL && t != NULL && t->delay_max_ms > t->delay_min_ms)
        TSAY(c10_queueing, "  exp=%s ms=%ld p99=%.0f rate=%.0f tps=%.0f",
             at->name, dq_group_poll_ms(w), w->p99_median,
             dq_offered_rate(t), w->tps_median);
}

/* C10's verdict after the numbers. */
static dq_verdict c10_conclude(dq_ev *ev, const c10_sum *b, bool cost,
                               bool grows)
{
    if (b->early)
        return TSAY(c10_early, "  "), DQ_VERDICT_DOES_NOT_HOLD;
    if (b->nslow > 0)
        TSAY(c10_slow, "  n=%zu", b->nslow);
    if (b->ntol + b->nuntested + b->nnoise < b->npoll)
        return TSAY(c10_beyond, "  n=%zu of=%zu", b->npoll - b->ntol -
                    b->nuntested - b->nnoise, b->npoll),
               DQ_VERDICT_DOES_NOT_HOLD;
    if (b->nuntested > 0)
        return TSAY(c10_untested, "  n=%zu", b->nuntested),
               DQ_VERDICT_PARTLY_MEASURED;
    if (!cost)
        return TSAY(c10_no_cost, "  "), DQ_VERDICT_PARTLY_MEASURED;
    if (!grows)
        return TSAY(c10_not_grows, "  "), DQ_VERDICT_DOES_NOT_HOLD;
    /* both parts measured: an overshoot no larger than the machine's own
     * lateness is within the bound plus that floor, a stated tolerance */
    if (b->nnoise > 0)
        return TSAY(c10_noise, "  n=%zu floor=%.2f", b->nnoise, b->floor),
               DQ_VERDICT_HOLDS_WITHIN;
    if (b->nmax == b->npoll && b->nslow == 0)
        return TSAY(c10_all_within, "  n=%zu", b->npoll), DQ_VERDICT_HOLDS;
    TSAY(c10_within_tol, "  n=%zu strict=%zu", b->npoll, b->nstrict);
    return DQ_VERDICT_HOLDS_WITHIN;
}

/* C10: polling lateness lies in [0, poll interval]; shorter costs more. */
DQ_RULE(dq_rule_c10)
{
    const dq_rexp *lat = dq_results_with_plot(r, "lateness-cdf");
    c10_sum b = {0};
    bool grows, cost;
    char tol[256] = "";
    (void)c;
    b.floor = c10_floor(lat);
    for (size_t i = 0; lat != NULL && i < lat->ngroups; i++)
        if (dq_group_poll_ms(&lat->groups[i]) > 0)
            c10_variant(ev, lat, &lat->groups[i],
                        dq_group_poll_ms(&lat->groups[i]), &b);
    if (b.npoll == 0)
        return NONE(c10_none, "");
    const dq_trialrow *t0 = &lat->trials[0];
    b.rate = dq_offered_rate(t0);
    if (b.no_rtt) {   /* else the tolerance is the round trip measured */
        tol[0] = ' ';
        tol[1] = '\0';
        TBUF(tol, c10_tol_none, "");
    }
    TSAY(c10_where, " exp=%s tol=%s ", lat->name, tol);
    c10_queueing(ev, r, lat);
    cost = c10_cost(ev, dq_results_with_plot(r, "idle-cost"), &grows);
    SAMPLE(c10_sample, "variants=%zu repeats=%zu tasks=%" PRIu64 " rate=%.0f "
           "consumers=%d exp=%s", b.npoll, b.repeats, b.tasks, b.rate,
           t0->consumers, lat->name);
    DQ_TCATP(ev->t, ev->res->interval, sizeof ev->res->interval,
             &(size_t){0}, b.repeats >= DQ_MIN_REPEATS, "claims.c10_interval",
             "claims.c10_interval_few", "name=%s lo=%.2f hi=%.2f n=%zu",
             b.worst, b.worst_lo, b.worst_hi, b.repeats);
    FIGURE("fig-%s-lateness-cdf", lat->name);
    return c10_conclude(ev, &b, cost, grows);
}

/* ---- C11, C04, C16: the cost of polling ---------------------------------- */

/* The spread of f over g's repeats into the interval, in template id (a
 * SPREAD one); the median, or -1. */
#define GROUP_SPREAD(id, e, g, f, prec)                                      \
    ({  double gv_[MAXV];                                                    \
        size_t gn_ = group_values(e, g, f, gv_, MAXV);                    \
        if (gn_ > 0)                                                         \
            SPREAD(ev->res->interval, id, prec, gv_, gn_);                   \
        dq_median(gv_, gn_); })

/* The idle part of C04 (naive polling every 1000 ms) or C11 (every 100
 * ms, the 10 ms beside it): commands, server CPU (its spread into the
 * interval), the in-process baseline's CPU.  The group, its CPU in *cpu;
 * NULL when not measured. */
static const dq_rgroup *idle_poll(dq_ev *ev, const dq_rexp *idle, bool c04,
                                  double *cpu)
{
    const dq_rgroup *g = group_of(idle, "naive", c04 ? 1000 : 100);
    const dq_rgroup *i10 = c04 ? NULL : group_of(idle, "naive", 10);
    const dq_rgroup *base = group_of(idle, "heap", 0);
    if (g == NULL || g->cpu_ms_per_s_median < 0)
        return NULL;
    *cpu = GROUP_SPREAD(iv_cpu, idle, g, tv_cpu_s, 2);
    DQ_TCATP(ev->t, ev->buf, ev->len, &ev->off, c04, "claims.c04_idle",
             "claims.c11_idle", "consumers=%d cmds=%.1f cpu=%.1f",
             g->consumers, g->cmds_per_s_median, *cpu);
    if (i10 != NULL)
        TSAY(c11_idle10, " cmds=%.0f cpu=%.1f", i10->cmds_per_s_median,
             i10->cpu_ms_per_s_median);
    if (base != NULL && base->cpu_ms_per_s_median >= 0)
        DQ_TCATP(ev->t, ev->buf, ev->len, &ev->off, c04, "claims.c04_base",
                 "claims.c11_base", "%scpu=%.1f", c04 ? " " : "",
                 base->cpu_ms_per_s_median);
    TSAY(exp, " exp=%s ", idle->name);
    DQ_TCATP(ev->t, ev->res->sample, sizeof ev->res->sample,
             &(size_t){strlen(ev->res->sample)}, c04,
             "claims.c04_sample_idle", "claims.c11_sample",
             "n=%zu consumers=%d exp=%s", g->n, g->consumers, idle->name);
    FIGURE("fig-%s-idle-cost", idle->name);
    return g;
}

/* C11: sleeping ~100 ms keeps CPU low without much lateness. */
DQ_RULE(dq_rule_c11)
{
    const dq_rexp *lat = dq_results_with_plot(r, "lateness-cdf");
    const dq_rgroup *l100 = group_of(lat, "naive", 100);
    const dq_rgroup *lu = group_of(lat, "lua", 100);
    double cpu;
    (void)c;
    const dq_rgroup *i100 = idle_poll(ev, dq_results_with_plot(r,
                                      "idle-cost"), false, &cpu);
    if (i100 == NULL)
        return NONE(c11_none, "");
    double p99 = l100 ? GROUP_SPREAD(iv_p99, lat, l100, tv_p99, 1) : -1;
    if (l100 != NULL) {
        TSAY(c11_price, "p50=%.1f p99=%.1f exp=%s lua=%.1f", l100->p50_median,
             p99, lat->name, lu ? lu->p99_median : -1);
        /* the interval holds its p99: the sample names its trials too */
        SAMPLE(c11_sample_lat, "; n=%zu tasks=%" PRIu64 " exp=%s", l100->n,
               l100->enqueued_sum, lat->name);
    }
    if (cpu >= 10.0)   /* 1% of one core */
        return TSAY(c11_not_cheap, " "), DQ_VERDICT_DOES_NOT_HOLD;
    if (p99 < 0)
        return TSAY(c11_no_lateness, " "), DQ_VERDICT_PARTLY_MEASURED;
    TSAY(c11_cheap_p99, " p99=%.1f consumers=%d", p99, i100->consumers);
    return DQ_VERDICT_HOLDS_WITHIN;
}

/* C04's tolerances, stated with its verdict: "costs almost nothing" is
 * under 1% of one core of server CPU; "no problem" behind a backlog is no
 * task lost and a median p99 under C04_P99_MS. */
#define C04_CPU_MS_S 10.0
#define C04_P99_MS 100.0

/* C04's backlog part: lua's stream behind the largest backlog; returns
 * whether it stayed easy (no loss, p99 under C04_P99_MS), -1 not measured;
 * the backlog in *n. */
static int c04_backlog(dq_ev *ev, const dq_rexp *bl, int64_t *n)
{
    const dq_rgroup *small, *big;
    dq_backlog_range(bl, "lua", INT64_MIN, &small, &big);
    if (big == NULL)
        return TSAY(c04_backlog_none, "  "), -1;
    double p99 = GROUP_SPREAD(iv_p99, bl, big, tv_p99, 1);
    WILSON(ev->res->interval, iv_lost, big->lost_sum, big->enqueued_sum);
    TSAY(c04_backlog, "  n=%" PRId64 " tasks=%" PRIu64 " p50=%.1f p99=%.1f "
         "lost=%" PRIu64 " exp=%s ", big->backlog, big->enqueued_sum,
         big->p50_median, p99, big->lost_sum, bl->name);
    SAMPLE(c04_sample_bl, "; trials=%zu tasks=%" PRIu64 " backlog=%" PRId64,
           big->n, big->enqueued_sum, big->backlog);
    *n = big->backlog;
    return big->lost_sum == 0 && p99 < C04_P99_MS;
}

/* C04: polling once a second is cheap; 100k pending is easy. */
DQ_RULE(dq_rule_c04)
{
    int64_t n = 0;
    double cpu;
    int cheap = -1;   /* under 1% of a core */
    (void)c;
    if (idle_poll(ev, dq_results_with_plot(r, "idle-cost"), true, &cpu))
        cheap = cpu < C04_CPU_MS_S;
    else
        TSAY(c04_idle_none, " ");
    int easy = c04_backlog(ev, dq_results_with_plot(r, "backlog-lateness"),
                           &n);
    if (cheap < 0 && easy < 0)
        return NONE(c04_none, "");
    TSAY(c04_tolerance, " cpu=%.0f p99=%.0f", C04_CPU_MS_S, C04_P99_MS);
    if (cheap == 0)
        TSAY(c04_not_cheap, " ");
    if (easy == 0)
        TSAY(c04_not_easy, " ");
    if (cheap == 0 || easy == 0)
        return DQ_VERDICT_DOES_NOT_HOLD;
    if (cheap < 0 || easy < 0)
        return DQ_VERDICT_PARTLY_MEASURED;
    if (n < 100000)
        return TSAY(c04_only_to, "  n=%" PRId64, n), DQ_VERDICT_HOLDS_WITHIN;
    return TSAY(c04_holds, "  "), DQ_VERDICT_HOLDS;
}

/* C16's lateness part: list against blind polling (naive, 100 ms); 1 won,
 * 0 lost, -1 not measured. */
static int c16_lateness(dq_ev *ev, const dq_rexp *lat)
{
    const dq_rgroup *ll = group_of(lat, "list", 0);
    const dq_rgroup *ln = group_of(lat, "naive", 100);
    if (ll == NULL || ln == NULL)
        return -1;
    double l99 = GROUP_SPREAD(iv_p99_list, lat, ll, tv_p99, 1);
    double n99 = GROUP_SPREAD(iv_p99_naive, lat, ln, tv_p99, 1);
    TSAY(c16_list, "  p99=%.1f naive=%.1f exp=%s", l99, n99, lat->name);
    SAMPLE(c16_sample_lat, "n=%zu exp=%s", ll->n, lat->name);
    FIGURE("fig-%s-lateness-cdf", lat->name);
    return l99 < n99;
}

/* C16's idle part: list's commands/s against naive's at 100 ms. */
static int c16_idle(dq_ev *ev, const dq_rexp *idle)
{
    const dq_rgroup *il = group_of(idle, "list", 0);
    const dq_rgroup *in = group_of(idle, "naive", 100);
    if (il == NULL || in == NULL || il->cmds_per_s_median < 0 ||
        in->cmds_per_s_median < 0)
        return -1;
    double lc = GROUP_SPREAD(iv_cmds_list, idle, il, tv_cmds_s, 1);
    TSAY(c16_idle, "  consumers=%d cmds=%.1f naive=%.1f exp=%s", il->consumers,
         lc, in->cmds_per_s_median, idle->name);
    SAMPLE(c16_sample_idle, "%sn=%zu exp=%s", ev->res->sample[0] ? "; " : "",
           il->n, idle->name);
    return lc < in->cmds_per_s_median;
}

/* C16: list (Redisson design) avoids blind polling and is on time. */
DQ_RULE(dq_rule_c16)
{
    (void)c;
    int a = c16_lateness(ev, dq_results_with_plot(r, "lateness-cdf"));
    int b = c16_idle(ev, dq_results_with_plot(r, "idle-cost"));
    if (a < 0 && b < 0)
        return NONE(c16_none, "");
    if (a == 0 || b == 0)
        return TSAY(c16_lost, "  "), DQ_VERDICT_DOES_NOT_HOLD;
    if (a < 0 || b < 0)
        return TSAY(c16_one, "  "), DQ_VERDICT_PARTLY_MEASURED;
    return TSAY(c16_both, "  "), DQ_VERDICT_HOLDS;
}

/* ---- C05: claim cost against the backlog (`dqlab bench`) ---------------- */

/* The claim latency growth of each Redis strategy of the bench's backlog
 * scaling, one clause each; their p50 ratios in r50s (at most 32), how
 * many grew beyond 1.25x the ratio of the logarithms in *faster, the
 * smallest and largest backlog.  Returns how many were measured. */
static size_t backlog_growth(dq_ev *ev, const dq_perf *p, double *r50s,
                             size_t *faster, int64_t *lo_n, int64_t *hi_n)
{
    const char *seen[32];
    size_t ns = 0, n = 0, j;
    *faster = 0;
    *lo_n = *hi_n = 0;
    for (size_t i = 0; i < p->nbl && ns < 32; i++) {
        const char *name = p->bl[i].strategy;
        const dq_strategy *st = dq_strategy_find(name);
        const dq_perf_bl *lo, *hi;
        for (j = 0; j < ns && strcmp(seen[j], name) != 0;)
            j++;
        if (j < ns || st == NULL || !(st->flags & DQ_G_NEEDS_REDIS))
            continue;
        seen[ns++] = name;
        dq_perf_backlog_range(p, name, &lo, &hi);
        if (lo == NULL || hi == lo || lo->claim_us_p50 <= 0)
            continue;
        double r50 = hi->claim_us_p50 / lo->claim_us_p50;
        *faster += r50 > 1.25 * dq_log_ratio(hi->backlog, lo->backlog);
        r50s[n] = r50;
        *lo_n = *lo_n == 0 || lo->backlog < *lo_n ? lo->backlog : *lo_n;
        *hi_n = hi->backlog > *hi_n ? hi->backlog : *hi_n;
        TSAY(c05_growth, "%sname=%s p50_lo=%.0f p50_hi=%.0f x50=%.2f",
             n++ ? "; " : "", name, lo->claim_us_p50, hi->claim_us_p50, r50);
    }
    return n;
}

/* C05 without the bench: lua's lateness behind the fewest and the most
 * pending tasks of the backlog experiment (each task one claim from a set
 * of N plus the round trips), its p50 growth against log N's. */
static dq_verdict c05_backlog(dq_ev *ev, const dq_rexp *bl)
{
    const dq_rgroup *a, *b;
    double v[MAXV];
    dq_backlog_range(bl, "lua", 1, &a, &b);
    if (a == NULL || a == b || a->p50_median <= 0)
        return NONE(c05_none, "");
    size_t n = group_values(bl, b, tv_p50, v, MAXV);
    if (n > 0)
        SPREAD(ev->res->interval, iv_p50, 2, v, n);
    double x = b->p50_median / a->p50_median;
    double lr = dq_log_ratio(b->backlog, a->backlog);
    TSAY(c05_backlog, "a=%" PRId64 " pa=%.2f b=%" PRId64 " pb=%.2f x=%.2f "
         "lr=%.2f exp=%s", a->backlog, a->p50_median, b->backlog,
         b->p50_median, x, lr, bl->name);
    SAMPLE(c05_sample_bl, "n=%zu a=%" PRId64 " b=%" PRId64 " exp=%s", b->n,
           a->backlog, b->backlog, bl->name);
    FIGURE("fig-%s-backlog-lateness", bl->name);
    if (x > 1.25 * lr)
        return TSAY(c05_backlog_faster, "  "), DQ_VERDICT_DOES_NOT_HOLD;
    return TSAY(c05_backlog_within, "  n=%" PRId64, b->backlog),
           DQ_VERDICT_HOLDS_WITHIN;
}

/* C05: a claim costs O(log N) in the pending tasks (bench backlog).  Every
 * strategy claims from the same sorted set, so the verdict follows the
 * median strategy: one run disturbed by other load on a shared machine
 * does not decide it alone. */
DQ_RULE(dq_rule_c05)
{
    size_t faster, n;
    int64_t lo, hi;
    double r50s[32], med, lr, a, b;
    (void)c;
    if (!r->bench.present)
        return c05_backlog(ev, dq_results_with_plot(r, "backlog-lateness"));
    TSAY(c05_intro, " ");
    if ((n = backlog_growth(ev, &r->bench, r50s, &faster, &lo, &hi)) == 0)
        return NONE(c05_no_strategy, "");
    lr = dq_log_ratio(hi, lo);
    dq_minmax(r50s, n, &a, &b);
    med = dq_median(r50s, n);
    TSAY(c05_range, "lo=%" PRId64 " hi=%" PRId64 " x=%.2f  ", lo, hi, lr);
    SAMPLE(c05_sample, "n=%zu lo=%" PRId64 " hi=%" PRId64, n, lo, hi);
    IVAL(iv_c05, "med=%.2f lo=%.2f hi=%.2f n=%zu lr=%.2f", med, a, b, n, lr);
    FIGURE("fig-bench-backlog");
    if (med > 1.25 * lr)
        return TSAY(c05_faster, "x=%.2f n=%zu of=%zu", med, faster, n),
               DQ_VERDICT_DOES_NOT_HOLD;
    TSAY(c05_holds, "");
    /* growth nearer none than log N's: an upper bound, not log N shown */
    bool flat = med - 1.0 < (lr - 1.0) / 2.0;
    if (flat)
        TSAY(c05_flat, "  x=%.2f lr=%.2f", med, lr);
    if (hi < 1000000)
        return TSAY(c05_only_to, "%s", "  "), DQ_VERDICT_HOLDS_WITHIN;
    return flat ? DQ_VERDICT_HOLDS_WITHIN : DQ_VERDICT_HOLDS;
}

/* ---- C17: the heap's wake-ups and cost per operation --------------------- */

/* The herd experiment's cell of strategy with option wake=w at consumers
 * c, or NULL. */
static const dq_rgroup *wake_group(const dq_rexp *e, const char *strategy,
                                   const char *w, int c)
{
    char v[32];
    for (size_t i = 0; e != NULL && i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        if (strcmp(g->strategy, strategy) == 0 && g->consumers == c &&
            dq_options_get(g->options, "wake", v, sizeof v) &&
            strcmp(v, w) == 0)
            return g;
    }
    return NULL;
}

/* The herd part for the heap: wake-ups per delivery of leader-follower
 * and of the broadcast baseline at the fewest and most consumers.
 * Returns 1 no herd (the baseline's grew 2x or more, leader's under
 * 1.5x), 0 a herd, -1 not measured / the baseline showed no herd. */
static int c17_herd(dq_ev *ev, const dq_rexp *e)
{
    int lo = 0, hi = 0;
    double v[MAXV];
    for (size_t i = 0; e != NULL && i < e->ngroups; i++) {
        int k = e->groups[i].consumers;
        lo = lo == 0 || k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    const dq_rgroup *g[4];   /* leader at lo, at hi; broadcast at lo, hi */
    double m[4];
    for (int k = 0; k < 4; k++) {
        g[k] = wake_group(e, "heap", k < 2 ? "leader" : "broadcast",
                          k % 2 ? hi : lo);
        if (g[k] == NULL || lo == hi)
            return TSAY(c17_herd_none, " "), -1;
        m[k] = dq_median(v, group_values(e, g[k], tv_wakeups, v, MAXV));
    }
    GROUP_SPREAD(iv_wake_leader, e, g[1], tv_wakeups, 2);
    GROUP_SPREAD(iv_wake_bcast, e, g[3], tv_wakeups, 2);
    TSAY(c17_herd, "lo=%d hi=%d la=%.2f lb=%.2f ba=%.2f bb=%.2f exp=%s ", lo,
         hi, m[0], m[1], m[2], m[3], e->name);
    SAMPLE(c17_sample_herd, "n=%zu lo=%d hi=%d tasks=%" PRIu64 " exp=%s",
           g[1]->n, lo, hi, g[1]->enqueued_sum, e->name);
    FIGURE("fig-%s-wakeups", e->name);  /* the opcost part: fig-opcost */
    if (m[3] < 2 * m[2])
        return TSAY(c17_no_baseline, " "), -1;
    return m[1] < 1.5 * m[0];
}

/* The largest n of the heap's rows of mix up to which its ns per
 * operation grew within 1.25x of log n's growth from the smallest n (lo,
 * and the largest row in *hi); 0 without two rows. */
static int64_t heap_logn_upto(const dq_opcost *oc, const char *mix,
                              const dq_opcost_row **lo,
                              const dq_opcost_row **hi)
{
    int64_t upto = 0, fail = INT64_MAX;
    dq_opcost_range(oc, "heap", mix, lo, hi);
    if (*lo == NULL || *hi == *lo || (*lo)->ns_median <= 0)
        return 0;
    for (size_t i = 0; i < oc->n; i++) {
        const dq_opcost_row *x = &oc->rows[i];
        if (strcmp(x->strategy, "heap") != 0 || strcmp(x->mix, mix) != 0 ||
            x->n <= (*lo)->n)
            continue;
        if (x->ns_median / (*lo)->ns_median <=
            1.25 * dq_log_ratio(x->n, (*lo)->n))
            upto = x->n > upto ? x->n : upto;
        else
            fail = x->n < fail ? x->n : fail;
    }
    return upto < fail ? upto : 0;   /* the range before the first miss */
}

/* One mix's clause of the O(log n) part; returns the n up to which the
 * heap kept to log n (0: not even at its second n, -1: no rows), *all
 * whether that is its largest n (or it has no rows). */
static int64_t c17_mix(dq_ev *ev, const dq_opcost *oc, const char *mix,
                       bool *all)
{
    const dq_opcost_row *lo, *hi, *wlo, *whi;
    int64_t upto = heap_logn_upto(oc, mix, &lo, &hi);
    *all = true;
    if (lo == NULL || hi == lo)
        return -1;
    char up[160] = "";
    dq_opcost_range(oc, "wheel", mix, &wlo, &whi);
    if (upto < hi->n)
        TBUF(up, c17_opcost_upto, "n=%" PRId64, upto);
    TSAY(c17_opcost, "  mix=%s lo_n=%" PRId64 " hi_n=%" PRId64 " lo=%.0f "
         "hi=%.0f x=%.2f lr=%.2f wlo=%.0f whi=%.0f upto=%s", mix, lo->n,
         hi->n, lo->ns_median, hi->ns_median, hi->ns_median / lo->ns_median,
         dq_log_ratio(hi->n, lo->n), wlo ? wlo->ns_median : -1,
         whi ? whi->ns_median : -1, up);
    IVAL(iv_opcost, "; mix=%s n=%" PRId64 " lo=%.0f hi=%.0f", mix, hi->n,
         hi->ns_min, hi->ns_max);
    if (!ev->res->sample[0] || !strstr(ev->res->sample, "opcost"))
        SAMPLE(c17_sample_opcost, "; ops=%" PRId64 " lo_n=%" PRId64
               " hi_n=%" PRId64, hi->ops, lo->n, hi->n);
    *all = upto >= hi->n;
    return *all ? hi->n : upto;
}

/* The O(log n) part from `dqlab opcost`: the heap's ns per operation
 * against log n's growth from the smallest n (within 1.25x: O(log n)),
 * the wheel beside it, for each mix.  Time per operation also pays for
 * memory: once the heap outgrows the CPU caches each level of a sift is a
 * cache miss, so the steady mix may keep to log n only up to some n.
 * Returns 1 every mix to its largest n, 2 the cached path (mix now) to
 * its largest n but the steady state only up to some n (a stated limit),
 * 0 the heap outgrew log n from the start, -1 not measured. */
static int c17_opcost(dq_ev *ev, const dq_opcost *oc)
{
    bool n_all, s_all;
    if (!oc->present)
        return TSAY(c17_opcost_none, "  "), -1;
    int64_t now = c17_mix(ev, oc, "now", &n_all);
    int64_t steady = c17_mix(ev, oc, "steady", &s_all);
    if (now < 0 && steady < 0)
        return TSAY(c17_opcost_none, "  "), -1;
    if (n_all && s_all)
        return 1;
    if (n_all && steady > 0)
        return TSAY(c17_opcost_cache, "  n=%" PRId64, steady), 2;
    return 0;
}

/* C17: a local heap is O(log n) and leader-follower avoids a herd. */
DQ_RULE(dq_rule_c17)
{
    (void)c;
    int herd = c17_herd(ev, dq_results_with_plot(r, "wakeups"));
    int logn = c17_opcost(ev, &r->opcost);
    if (herd < 0 && logn < 0)
        return NONE(c17_none, "");
    if (herd == 0 || logn == 0)
        return TSAY(c17_not, "  herd=%s", herd == 0 ? "" : " not"),
               DQ_VERDICT_DOES_NOT_HOLD;
    if (herd < 0 || logn < 0)
        return TSAY(c17_partly, "  "), DQ_VERDICT_PARTLY_MEASURED;
    if (logn == 2)
        return DQ_VERDICT_HOLDS_WITHIN;
    return TSAY(c17_holds, "  "), DQ_VERDICT_HOLDS;
}
