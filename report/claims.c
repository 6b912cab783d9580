/* claims.c -- the claims table and the rules that decide them.
 *
 * CLAIMS.md (the lab's brief) lists what tutorials and interview guides say
 * about delay queues on Redis.  This file restates each claim in dqlab's
 * own words under the same id and, where an experiment measures it, gives a
 * rule that reads the loaded results (report.h) and returns a verdict with
 * the numbers behind it.  Rules never hard-code a figure: every number in
 * the evidence is computed here from trials.csv.  A rule looks for the data
 * it needs in any experiment (not one by name), so a later experiment that
 * measures the same thing adds evidence without touching the rule.
 *
 * Adding a claim decision: write a static rule below and put it in the
 * table; report.c prints the table as it is.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../strategies/dq.h"
#include "claims.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

const char *dq_verdict_name(dq_verdict v)
{
    switch (v) {
    case DQ_VERDICT_HOLDS:
        return "holds";
    case DQ_VERDICT_HOLDS_WITH_CONDITIONS:
        return "holds with conditions";
    case DQ_VERDICT_DOES_NOT_HOLD:
        return "does not hold";
    case DQ_VERDICT_NOT_MEASURED:
        break;
    }
    return "not yet measured";
}

/* ---- Helpers ----------------------------------------------------------- */

/* What the trials of one strategy with at least min_consumers consumers
 * add up to, over every experiment. */
typedef struct tally {
    size_t trials, dup_trials;
    uint64_t duplicates, dup_max, lost, early, deliveries, wakeups;
    uint64_t lost_races, round_trips, delivered;
    int max_consumers;
    char exps[256];       /* experiment names, comma-separated */
    char fig[128];        /* a duplicates figure that shows them, or "" */
} tally;

static bool has_figure(const dq_rexp *e, const char *kind, char *out,
                       size_t len)
{
    for (size_t i = 0; i < e->nfigures; i++) {
        const char *f = e->figures[i];
        size_t fl = strlen(f), kl = strlen(kind);
        if (fl > kl && strcmp(f + fl - kl, kind) == 0) {
            snprintf(out, len, "%s", f);
            return true;
        }
    }
    return false;
}

static void tally_strategy(const dq_results *r, const char *strategy,
                           int min_consumers, const char *figkind, tally *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < r->nexps; i++) {
        const dq_rexp *e = &r->exps[i];
        bool used = false;
        for (size_t j = 0; j < e->ntrials; j++) {
            const dq_rtrial *x = &e->trials[j];
            if (strcmp(x->strategy, strategy) != 0 ||
                x->consumers < min_consumers || x->tasks == 0)
                continue;  /* idle trials (tasks = 0) deliver nothing */
            used = true;
            t->trials++;
            if (x->duplicates > 0)
                t->dup_trials++;
            t->duplicates += x->duplicates;
            if (x->duplicates > t->dup_max)
                t->dup_max = x->duplicates;
            t->lost += x->lost;
            t->early += x->early;
            t->deliveries += x->deliveries;
            t->wakeups += x->wakeups;
            t->lost_races += x->lost_races;
            t->round_trips += x->round_trips;
            t->delivered += x->delivered;
            if (x->consumers > t->max_consumers)
                t->max_consumers = x->consumers;
        }
        if (used) {
            size_t l = strlen(t->exps);
            snprintf(t->exps + l, sizeof t->exps - l, "%s%s", l ? ", " : "",
                     e->name);
            if (t->fig[0] == '\0' && figkind != NULL)
                has_figure(e, figkind, t->fig, sizeof t->fig);
        }
    }
}

/* " (experiment X, figure Y)" */
static void where(const tally *t, char *buf, size_t len)
{
    if (t->fig[0])
        snprintf(buf, len, " (experiment %s, figure `%s`)", t->exps, t->fig);
    else
        snprintf(buf, len, " (experiment %s)", t->exps);
}

/* ---- Rules -------------------------------------------------------------- */

/* C01: naive (ZRANGEBYSCORE then ZREM) with 2+ consumers duplicates. */
static dq_verdict rule_c01(const dq_results *r, char *ev, size_t evlen)
{
    tally t;
    tally_strategy(r, "naive", 2, "-duplicates", &t);
    if (t.trials == 0) {
        snprintf(ev, evlen, "No trial ran naive with 2 or more consumers; "
                 "the concurrency experiment decides it.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    char w[512];
    where(&t, w, sizeof w);
    if (t.duplicates > 0) {
        snprintf(ev, evlen, "naive delivered %" PRIu64 " duplicate "
                 "deliveries in %zu of %zu trials with 2 to %d consumers, "
                 "at most %" PRIu64 " in one trial%s.", t.duplicates,
                 t.dup_trials, t.trials, t.max_consumers, t.dup_max, w);
        return DQ_VERDICT_HOLDS;
    }
    snprintf(ev, evlen, "naive delivered no duplicate in %zu trial%s with 2 "
             "to %d consumers%s: the race exists but was not observed here "
             "(more consumers, more tasks or a longer work time widen it).",
             t.trials, t.trials == 1 ? "" : "s", t.max_consumers, w);
    return DQ_VERDICT_DOES_NOT_HOLD;
}

/* C02: a Lua claim script does not duplicate, however many consumers. */
static dq_verdict rule_c02(const dq_results *r, char *ev, size_t evlen)
{
    tally t;
    tally_strategy(r, "lua", 2, "-duplicates", &t);
    if (t.trials == 0) {
        snprintf(ev, evlen, "No trial ran lua with 2 or more consumers; the "
                 "concurrency experiment decides it.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    char w[512];
    where(&t, w, sizeof w);
    if (t.duplicates > 0) {
        snprintf(ev, evlen, "lua delivered %" PRIu64 " duplicate deliveries "
                 "in %zu of %zu trials with 2 to %d consumers%s.",
                 t.duplicates, t.dup_trials, t.trials, t.max_consumers, w);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    snprintf(ev, evlen, "lua delivered no duplicate in %zu trial%s with 2 to "
             "%d consumers (%" PRIu64 " deliveries)%s.  %sNo faults were "
             "injected; the script removes the task as it returns it, so a "
             "consumer that dies afterwards loses it instead (at-most-once, "
             "see C12).", t.trials, t.trials == 1 ? "" : "s", t.max_consumers, t.deliveries, w,
             t.max_consumers < 4 ? "Only measured with few consumers.  "
                                 : "");
    return t.max_consumers >= 4 ? DQ_VERDICT_HOLDS
                                : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C03: ZREM's reply as the claim: no duplicates, lost races cost. */
static dq_verdict rule_c03(const dq_results *r, char *ev, size_t evlen)
{
    tally t;
    tally_strategy(r, "naive-checked", 2, "-duplicates", &t);
    if (t.trials == 0) {
        snprintf(ev, evlen, "No trial ran naive-checked with 2 or more "
                 "consumers; the concurrency experiment decides it.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    char w[512];
    where(&t, w, sizeof w);
    if (t.duplicates > 0) {
        snprintf(ev, evlen, "naive-checked delivered %" PRIu64 " duplicate "
                 "deliveries in %zu of %zu trials with 2 to %d "
                 "consumers%s.", t.duplicates, t.dup_trials, t.trials,
                 t.max_consumers, w);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (t.lost_races == 0) {
        snprintf(ev, evlen, "naive-checked delivered no duplicate in %zu "
                 "trial%s with 2 to %d consumers (%" PRIu64 " deliveries)%s, "
                 "but no race was lost either (ZREM never returned 0), so "
                 "the cost side was not observed.", t.trials,
                 t.trials == 1 ? "" : "s",
                 t.max_consumers, t.deliveries, w);
        return DQ_VERDICT_HOLDS_WITH_CONDITIONS;
    }
    snprintf(ev, evlen, "naive-checked delivered no duplicate in %zu trial%s "
             "with 2 to %d consumers (%" PRIu64 " deliveries)%s, while it "
             "lost %" PRIu64 " races (ZREM returned 0: another consumer "
             "removed the task between its ZRANGEBYSCORE and its ZREM), "
             "%.3f per delivery; each lost race costs 2 round trips, and "
             "the trials made %.2f round trips per delivery in all.",
             t.trials, t.trials == 1 ? "" : "s", t.max_consumers,
             t.deliveries, w, t.lost_races,
             t.delivered ? (double)t.lost_races / (double)t.delivered : 0.0,
             t.delivered ? (double)t.round_trips / (double)t.delivered : 0.0);
    return DQ_VERDICT_HOLDS;
}

/* ---- Helpers for the lateness / idle / backlog rules -------------------- */

/* The poll interval of a group of a polling strategy (its option or the
 * default), or -1 for a strategy that does not poll. */
static long group_poll_ms(const dq_rgroup *g)
{
    const dq_strategy *s = dq_strategy_find(g->strategy);
    if (s == NULL || !(s->flags & DQ_G_POLLS))
        return -1;
    char v[32];
    if (dq_options_get(g->options, "poll_ms", v, sizeof v))
        return strtol(v, NULL, 10);
    for (const dq_optdef *d = s->options; d && d->name; d++)
        if (strcmp(d->name, "poll_ms") == 0 && d->def)
            return strtol(d->def, NULL, 10);
    return -1;
}

/* The first experiment whose meta plots include kind, or NULL. */
static const dq_rexp *exp_with_plot(const dq_results *r, const char *kind)
{
    for (size_t i = 0; i < r->nexps; i++)
        if (dq_rexp_has_plot(&r->exps[i], kind))
            return &r->exps[i];
    return NULL;
}

/* The group of strategy (with poll_ms = poll when poll > 0) in e with
 * backlog 0, or NULL. */
static const dq_rgroup *find_group(const dq_rexp *e, const char *strategy,
                                   long poll)
{
    if (e == NULL)
        return NULL;
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        if (strcmp(g->strategy, strategy) == 0 && g->backlog == 0 &&
            (poll <= 0 || group_poll_ms(g) == poll))
            return g;
    }
    return NULL;
}

/* Largest p99 and max lateness over the trials of g in e. */
static void group_lateness(const dq_rexp *e, const dq_rgroup *g,
                           double *p99, double *mx)
{
    *p99 = *mx = 0;
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_rtrial *t = &e->trials[i];
        if (strcmp(t->strategy, g->strategy) != 0 ||
            strcmp(t->options, g->options) != 0 ||
            t->consumers != g->consumers || t->backlog != g->backlog)
            continue;
        if (t->lat_p99_ms > *p99)
            *p99 = t->lat_p99_ms;
        if (t->lat_max_ms > *mx)
            *mx = t->lat_max_ms;
    }
}

#define APPEND(buf, off, len, ...)                                           \
    do {                                                                     \
        if ((off) < (len))                                                   \
            (off) += (size_t)snprintf((buf) + (off), (len) - (off),          \
                                      __VA_ARGS__);                          \
    } while (0)

/* C10: polling lateness lies in [0, poll interval]; shorter costs more. */
static dq_verdict rule_c10(const dq_results *r, char *ev, size_t evlen)
{
    const dq_rexp *lat = exp_with_plot(r, "lateness-cdf");
    const dq_rexp *idle = exp_with_plot(r, "idle-cost");
    size_t off = 0, npoll = 0, nbound_p99 = 0, nbound_max = 0;
    bool early = false;
    if (lat != NULL) {
        for (size_t i = 0; i < lat->ngroups; i++) {
            const dq_rgroup *g = &lat->groups[i];
            long pm = group_poll_ms(g);
            if (pm <= 0)
                continue;
            double p99, mx;
            group_lateness(lat, g, &p99, &mx);
            npoll++;
            nbound_p99 += p99 <= (double)pm + 5.0;
            nbound_max += mx <= (double)pm + 5.0;
            early |= g->early_max > 0;
            APPEND(ev, off, evlen, "%s%s%s%s (poll_ms %ld): p99 %.1f ms, max "
                   "%.1f ms", off ? "; " : "", g->strategy,
                   g->options[0] ? " " : "", g->options, pm, p99, mx);
        }
    }
    if (npoll == 0) {
        snprintf(ev, evlen, "No lateness experiment ran a polling strategy; "
                 "experiments/lateness.ini (lateness CDF vs poll_ms) and "
                 "experiments/idle.ini (idle cost vs poll_ms) decide it.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    APPEND(ev, off, evlen, " (experiment %s, figure `%s-lateness-cdf`). ",
           lat->name, lat->name);
    /* Cost: commands and CPU at the shortest vs the longest poll_ms. */
    bool cost_known = false, cost_grows = true;
    if (idle != NULL) {
        for (size_t i = 0; i < idle->ngroups; i++) {
            const dq_rgroup *a = &idle->groups[i];
            if (group_poll_ms(a) <= 0)
                continue;
            const dq_rgroup *b = NULL;
            bool shortest = true;
            for (size_t j = 0; j < idle->ngroups; j++) {
                const dq_rgroup *x = &idle->groups[j];
                if (strcmp(x->strategy, a->strategy) != 0 ||
                    group_poll_ms(x) <= 0)
                    continue;
                if (group_poll_ms(x) < group_poll_ms(a))
                    shortest = false;
                if (group_poll_ms(x) > group_poll_ms(a) &&
                    (b == NULL || group_poll_ms(x) > group_poll_ms(b)))
                    b = x;
            }
            if (!shortest || b == NULL || a->cmds_per_s_median < 0 ||
                b->cmds_per_s_median < 0)
                continue;
            cost_known = true;
            cost_grows &= a->cmds_per_s_median > b->cmds_per_s_median &&
                          a->cpu_ms_per_s_median > b->cpu_ms_per_s_median;
            APPEND(ev, off, evlen, "Idle, %d consumers, %s: poll_ms %ld -> "
                   "%.0f commands/s and %.1f ms server CPU/s, poll_ms %ld -> "
                   "%.1f commands/s and %.1f ms/s (experiment %s). ",
                   a->consumers, a->strategy, group_poll_ms(a),
                   a->cmds_per_s_median, a->cpu_ms_per_s_median,
                   group_poll_ms(b), b->cmds_per_s_median,
                   b->cpu_ms_per_s_median, idle->name);
        }
    }
    if (early) {
        APPEND(ev, off, evlen, "Some polling strategy delivered a task "
               "early, below the claimed lower bound of 0.");
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (nbound_p99 < npoll) {
        APPEND(ev, off, evlen, "%zu of %zu polling variants had p99 beyond "
               "poll_ms + 5 ms.", npoll - nbound_p99, npoll);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (!cost_known) {
        APPEND(ev, off, evlen, "The lateness bound held at p99 for every "
               "polling variant; the cost side needs the idle experiment "
               "with two poll_ms values.");
        return DQ_VERDICT_HOLDS_WITH_CONDITIONS;
    }
    if (!cost_grows) {
        APPEND(ev, off, evlen, "A shorter interval did not cost more here.");
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    APPEND(ev, off, evlen, "The bound held at p99 for all %zu polling "
           "variants%s; strategies that sleep until the head's due time "
           "(lua, lua-lease, zpopmin) stay far below it at p50, blind "
           "polling (naive, naive-checked) spreads over the whole "
           "interval.", npoll, nbound_max == npoll ? " and at the maximum"
           : " (the maximum exceeded it by a scheduling delay in some)");
    return nbound_max == npoll ? DQ_VERDICT_HOLDS
                               : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C11: sleeping ~100 ms keeps CPU low without much lateness. */
static dq_verdict rule_c11(const dq_results *r, char *ev, size_t evlen)
{
    const dq_rexp *idle = exp_with_plot(r, "idle-cost");
    const dq_rexp *lat = exp_with_plot(r, "lateness-cdf");
    const dq_rgroup *i100 = find_group(idle, "naive", 100);
    const dq_rgroup *i10 = find_group(idle, "naive", 10);
    const dq_rgroup *base = find_group(idle, "heap", 0);
    if (i100 == NULL || i100->cpu_ms_per_s_median < 0) {
        snprintf(ev, evlen, "Needs naive at poll_ms = 100 in the idle "
                 "experiment (experiments/idle.ini) for the idle cost, and "
                 "the lateness experiment for the lateness at 100 ms.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    size_t off = 0;
    APPEND(ev, off, evlen, "Idle, %d consumers of naive at poll_ms = 100: "
           "%.1f Redis commands/s and %.1f ms of server CPU per second",
           i100->consumers, i100->cmds_per_s_median,
           i100->cpu_ms_per_s_median);
    if (i10 != NULL)
        APPEND(ev, off, evlen, " (poll_ms = 10: %.0f commands/s, %.1f ms/s)",
               i10->cmds_per_s_median, i10->cpu_ms_per_s_median);
    if (base != NULL && base->cpu_ms_per_s_median >= 0)
        APPEND(ev, off, evlen, "; the server alone used %.1f ms/s",
               base->cpu_ms_per_s_median);
    APPEND(ev, off, evlen, " (experiment %s). ", idle->name);
    const dq_rgroup *l100 = find_group(lat, "naive", 100);
    if (l100 != NULL) {
        double p99, mx;
        group_lateness(lat, l100, &p99, &mx);
        APPEND(ev, off, evlen, "The price in lateness: naive at poll_ms = "
               "100 had p50 %.1f ms, p99 %.1f ms (experiment %s); a "
               "strategy that sleeps until the head's due time instead "
               "(lua) pays it only for tasks enqueued during the sleep. ",
               l100->p50_median, p99, lat->name);
    } else {
        APPEND(ev, off, evlen, "Lateness at poll_ms = 100 not measured "
               "(experiments/lateness.ini). ");
    }
    bool cheap = i100->cpu_ms_per_s_median < 10.0; /* < 1% of one core */
    APPEND(ev, off, evlen, "%s  The cost grows linearly with the number "
           "of consumers.", cheap
               ? "Under 1% of one core: cheap, as long as a lateness of up "
                 "to the interval (about 100 ms) is acceptable."
               : "At least 1% of one core.");
    return cheap ? DQ_VERDICT_HOLDS_WITH_CONDITIONS : DQ_VERDICT_DOES_NOT_HOLD;
}

/* C04 (partly): polling once a second is cheap; 100k pending is easy. */
static dq_verdict rule_c04(const dq_results *r, char *ev, size_t evlen)
{
    const dq_rexp *idle = exp_with_plot(r, "idle-cost");
    const dq_rexp *bl = exp_with_plot(r, "backlog-lateness");
    const dq_rgroup *i1000 = find_group(idle, "naive", 1000);
    const dq_rgroup *base = find_group(idle, "heap", 0);
    const dq_rgroup *big = NULL;
    if (bl != NULL)
        for (size_t i = 0; i < bl->ngroups; i++)
            if (strcmp(bl->groups[i].strategy, "lua") == 0 &&
                (big == NULL || bl->groups[i].backlog > big->backlog))
                big = &bl->groups[i];
    if ((i1000 == NULL || i1000->cpu_ms_per_s_median < 0) && big == NULL) {
        snprintf(ev, evlen, "Needs naive at poll_ms = 1000 in the idle "
                 "experiment and lua with a 100k backlog (experiments/"
                 "expiry-scale.ini); the O(log N) claim cost (C05) is not "
                 "measured.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    size_t off = 0;
    bool cheap = true, easy = true, noisy = false;
    if (i1000 != NULL && i1000->cpu_ms_per_s_median >= 0) {
        /* Cheap: under 1% of a core.  The CPU is the whole server
         * process's, so on a busy machine it can jump while the commands
         * stay few; a handful of commands per second cannot cost 10 ms/s,
         * so then the commands decide and the text says why. */
        cheap = i1000->cpu_ms_per_s_median < 10.0;
        if (!cheap && i1000->cmds_per_s_median >= 0 &&
            i1000->cmds_per_s_median < 20.0)
            cheap = noisy = true;
        APPEND(ev, off, evlen, "Idle, %d consumers polling once a second "
               "(naive, poll_ms = 1000): %.1f commands/s, %.1f ms server "
               "CPU/s", i1000->consumers, i1000->cmds_per_s_median,
               i1000->cpu_ms_per_s_median);
        if (base != NULL && base->cpu_ms_per_s_median >= 0)
            APPEND(ev, off, evlen, " against %.1f ms/s for the server "
                   "alone", base->cpu_ms_per_s_median);
        APPEND(ev, off, evlen, " (experiment %s). ", idle->name);
        if (noisy)
            APPEND(ev, off, evlen, "That CPU figure does not follow from "
                   "%.1f commands/s (it is the whole redis-server process, "
                   "so other load on the machine shows up in it): the "
                   "commands decide here; rerun the idle experiment on a "
                   "quiet machine for the CPU. ", i1000->cmds_per_s_median);
    } else {
        APPEND(ev, off, evlen, "The idle cost of polling once a second is "
               "not measured (experiments/idle.ini). ");
    }
    if (big != NULL) {
        double p99, mx;
        group_lateness(bl, big, &p99, &mx);
        easy = big->lost_max == 0 && p99 < 100.0;
        APPEND(ev, off, evlen, "With %" PRId64 " pending tasks in the "
               "sorted set, lua delivered a stream of %" PRIu64 " tasks "
               "with p50 %.1f ms and p99 %.1f ms lateness, %" PRIu64 " not "
               "delivered (experiment %s). ", big->backlog,
               big->enqueued_sum, big->p50_median, p99, big->lost_max,
               bl->name);
    } else {
        APPEND(ev, off, evlen, "The 100k-pending part is not measured "
               "(needs experiments/expiry-scale.ini). ");
    }
    if (!cheap)
        APPEND(ev, off, evlen, "Polling once a second cost 10 ms of server "
               "CPU per second or more: not almost nothing. ");
    if (!easy)
        APPEND(ev, off, evlen, "At the largest backlog lua lost tasks or "
               "had a p99 of 100 ms or more. ");
    APPEND(ev, off, evlen, "Not measured: claim latency vs backlog up to "
           "1M (C05).");
    if (!cheap || !easy)
        return DQ_VERDICT_DOES_NOT_HOLD;
    return DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C16: list (Redisson design) avoids blind polling and is on time. */
static dq_verdict rule_c16(const dq_results *r, char *ev, size_t evlen)
{
    const dq_rexp *idle = exp_with_plot(r, "idle-cost");
    const dq_rexp *lat = exp_with_plot(r, "lateness-cdf");
    const dq_rgroup *ll = find_group(lat, "list", 0);
    const dq_rgroup *ln = find_group(lat, "naive", 100);
    const dq_rgroup *lu = find_group(lat, "lua", 100);
    const dq_rgroup *il = find_group(idle, "list", 0);
    const dq_rgroup *in = find_group(idle, "naive", 100);
    if (ll == NULL && il == NULL) {
        snprintf(ev, evlen, "Needs list in the lateness experiment "
                 "(lateness p99) and in the idle experiment (idle "
                 "commands/s).");
        return DQ_VERDICT_NOT_MEASURED;
    }
    size_t off = 0;
    int ok = 0, known = 0;
    if (ll != NULL) {
        double p99l, mxl;
        group_lateness(lat, ll, &p99l, &mxl);
        APPEND(ev, off, evlen, "Lateness p99 of list: %.1f ms (max %.1f)",
               p99l, mxl);
        if (ln != NULL) {
            double p99n, mxn;
            group_lateness(lat, ln, &p99n, &mxn);
            APPEND(ev, off, evlen, "; naive polling every 100 ms: %.1f ms",
                   p99n);
            known++;
            ok += p99l < p99n;
        }
        if (lu != NULL) {
            double p99u, mxu;
            group_lateness(lat, lu, &p99u, &mxu);
            APPEND(ev, off, evlen, "; lua (sleeps until the head is due, "
                   "at most 100 ms): %.1f ms", p99u);
        }
        APPEND(ev, off, evlen, " (experiment %s). ", lat->name);
    }
    if (il != NULL && il->cmds_per_s_median >= 0) {
        APPEND(ev, off, evlen, "Idle, %d consumers: list %.1f Redis "
               "commands/s (BLPOP with the claim timeout plus the mover's "
               "wake-ups)", il->consumers, il->cmds_per_s_median);
        if (in != NULL && in->cmds_per_s_median >= 0) {
            APPEND(ev, off, evlen, ", naive at poll_ms = 100 %.1f",
                   in->cmds_per_s_median);
            known++;
            ok += il->cmds_per_s_median < in->cmds_per_s_median;
        }
        APPEND(ev, off, evlen, " (experiment %s). ", idle->name);
    }
    if (known == 0) {
        APPEND(ev, off, evlen, "No polling strategy to compare with.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    if (ok == known && known == 2) {
        APPEND(ev, off, evlen, "list was both more punctual than blind "
               "polling and cheaper while idle.  No faults were injected: "
               "a lost wake-up message is bounded by poll_cap_ms.");
        return DQ_VERDICT_HOLDS;
    }
    if (ok > 0) {
        APPEND(ev, off, evlen, "list won %d of the %d comparisons with "
               "blind polling (one experiment missing or lost).", ok, known);
        return DQ_VERDICT_HOLDS_WITH_CONDITIONS;
    }
    APPEND(ev, off, evlen, "list won neither comparison.");
    return DQ_VERDICT_DOES_NOT_HOLD;
}

/* C18 (lateness part): expiry events come later as keys pile up. */
static dq_verdict rule_c18(const dq_results *r, char *ev, size_t evlen)
{
    const dq_rexp *bl = exp_with_plot(r, "backlog-lateness");
    const dq_rgroup *gs[32];
    size_t n = 0;
    if (bl != NULL)
        for (size_t i = 0; i < bl->ngroups && n < 32; i++)
            if (strcmp(bl->groups[i].strategy, "expiry") == 0)
                gs[n++] = &bl->groups[i];
    if (n < 2) {
        snprintf(ev, evlen, "Needs expiry at two or more backlogs "
                 "(experiments/expiry-scale.ini).  The loss of tasks "
                 "expiring while no subscriber listens needs fault "
                 "injection (a later faults issue).");
        return DQ_VERDICT_NOT_MEASURED;
    }
    for (size_t i = 1; i < n; i++)   /* by backlog */
        for (size_t j = i; j > 0 && gs[j - 1]->backlog > gs[j]->backlog; j--) {
            const dq_rgroup *t = gs[j];
            gs[j] = gs[j - 1];
            gs[j - 1] = t;
        }
    size_t off = 0;
    APPEND(ev, off, evlen, "expiry, a stream of tasks due 1-2 s after "
           "enqueue, behind a backlog of pending shadow keys:");
    for (size_t i = 0; i < n; i++) {
        double frac = gs[i]->enqueued_sum
                          ? (double)gs[i]->delivered_sum /
                                (double)gs[i]->enqueued_sum : 0;
        APPEND(ev, off, evlen, "%s %" PRId64 " pending -> %.1f%% delivered "
               "within the window, p50 of those %.0f ms", i ? ";" : "",
               gs[i]->backlog, 100 * frac, gs[i]->p50_median);
    }
    APPEND(ev, off, evlen, " (experiment %s, figure `%s-backlog-"
           "lateness`). ", bl->name, bl->name);
    const dq_rgroup *a = gs[0], *b = gs[n - 1];
    double fa = a->enqueued_sum ? (double)a->delivered_sum /
                                      (double)a->enqueued_sum : 0;
    double fb = b->enqueued_sum ? (double)b->delivered_sum /
                                      (double)b->enqueued_sum : 0;
    bool grows = fb < fa * 0.9 || b->p50_median > 2 * a->p50_median;
    APPEND(ev, off, evlen, "%s  Not measured: the loss of tasks whose key "
           "expires while no subscriber listens (needs fault injection, a "
           "later faults issue).", grows
               ? "The more keys with a TTL, the later the events: Redis "
                 "publishes `expired` when its sampling expire cycle finds "
                 "the key, not when the TTL runs out."
               : "Lateness did not grow with the number of keys here.");
    return grows ? DQ_VERDICT_HOLDS_WITH_CONDITIONS
                 : DQ_VERDICT_DOES_NOT_HOLD;
}

/* C13: "single-threaded Redis makes everything atomic". */
static dq_verdict rule_c13(const dq_results *r, char *ev, size_t evlen)
{
    tally t;
    tally_strategy(r, "naive", 2, "-duplicates", &t);
    if (t.trials == 0) {
        snprintf(ev, evlen, "No trial ran naive with 2 or more consumers; the "
                 "concurrency experiment decides it.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    char w[512];
    where(&t, w, sizeof w);
    if (t.duplicates > 0) {
        snprintf(ev, evlen, "Redis ran every command on its one thread, yet "
                 "naive's claim -- two commands, ZRANGEBYSCORE then ZREM -- "
                 "handed the same task to two consumers %" PRIu64 " times in "
                 "%zu of %zu trials%s.  Each command is atomic; a sequence "
                 "of commands from one client is not.", t.duplicates,
                 t.dup_trials, t.trials, w);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    snprintf(ev, evlen, "naive showed no duplicate in %zu trial%s%s, so "
             "these runs do not refute the claim; they do not prove it "
             "either (the interleaving may simply not have occurred).",
             t.trials, t.trials == 1 ? "" : "s", w);
    return DQ_VERDICT_NOT_MEASURED;
}

/* C17 (partly): the heap's waiting wakes about one thread per delivery. */
static dq_verdict rule_c17(const dq_results *r, char *ev, size_t evlen)
{
    tally t;
    tally_strategy(r, "heap", 2, NULL, &t);
    if (t.trials == 0 || t.deliveries == 0 || t.wakeups == 0) {
        snprintf(ev, evlen, "%s  Needs: heap inserts/removes per second vs "
                 "n (O(log n)), and wake-ups per delivery with many "
                 "consumers.", t.trials == 0
                     ? "No trial ran heap with 2 or more consumers."
                     : "The heap trials recorded no wake-ups.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    /* Per consumer count, wake-ups per delivery. */
    char per[512] = "";
    size_t off = 0;
    double worst = 0;
    int worst_c = 0;
    for (int c = 2; c <= 1024; c *= 2) {
        uint64_t wk = 0, dl = 0;
        for (size_t i = 0; i < r->nexps; i++)
            for (size_t j = 0; j < r->exps[i].ntrials; j++) {
                const dq_rtrial *x = &r->exps[i].trials[j];
                if (strcmp(x->strategy, "heap") == 0 && x->consumers == c) {
                    wk += x->wakeups;
                    dl += x->deliveries;
                }
            }
        if (dl == 0)
            continue;
        double ratio = (double)wk / (double)dl;
        if (ratio > worst)
            worst = ratio, worst_c = c;
        off += (size_t)snprintf(per + off, off < sizeof per ? sizeof per - off
                                : 0, "%s%.2f at %d consumers",
                                off ? ", " : "", ratio, c);
    }
    /* A thundering herd wakes every waiting consumer per delivery (up to
     * consumers - 1).  The rule calls it a herd when the worst ratio
     * reaches half the consumers and more than 2; the text below states
     * that threshold and the worst value, so the two cannot disagree. */
    double limit = (double)worst_c / 2.0 > 2.0 ? (double)worst_c / 2.0 : 2.0;
    bool herd = worst_c > 0 && worst >= limit;
    char verdict[400];
    if (herd)
        snprintf(verdict, sizeof verdict, "The worst, %.2f at %d consumers, "
                 "reaches the herd threshold (%.1f: half the consumers, at "
                 "least 2): more consumers, more wake-ups per delivery.",
                 worst, worst_c, limit);
    else
        snprintf(verdict, sizeof verdict, "%s (max %.2f, at %d consumers), "
                 "below the herd threshold of %.1f (half the consumers, at "
                 "least 2) that waking every waiting consumer would reach: "
                 "no thundering herd.",
                 worst <= 1.0 ? "At most one per delivery"
                 : worst <= 1.5 ? "About one per delivery"
                                : "A few per delivery",
                 worst, worst_c, limit);
    snprintf(ev, evlen, "Wake-ups per delivery for heap: %s (experiment %s)."
             "  %s  The O(log n) part is not yet measured (needs heap "
             "ops/s vs n).", per, t.exps, verdict);
    return herd ? DQ_VERDICT_DOES_NOT_HOLD
                : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* ---- The table ---------------------------------------------------------- */

const dq_claim_def dq_claims[] = {
    {"C01", "Finding due tasks with ZRANGEBYSCORE and removing them with a "
     "separate ZREM lets two consumers take the same task.",
     "naive with 2 or more consumers: duplicates > 0", rule_c01},
    {"C02", "Wrapping find-due and remove in one Lua script makes the claim "
     "atomic: no task is processed twice.",
     "lua with many consumers: duplicates = 0", rule_c02},
    {"C03", "Treating ZREM's reply (1: I removed it) as the claim also stops "
     "duplicates, at the cost of round trips wasted on lost races.",
     "naive-checked with many consumers: duplicates = 0, lost races counted",
     rule_c03},
    {"C04", "Polling a sorted set once a second costs Redis almost nothing, "
     "and 100,000 pending tasks are no problem.",
     "idle and backlog experiments: commands/s, CPU, claim latency at 100k "
     "pending", rule_c04},
    {"C05", "A claim costs O(log N) in the number of pending tasks.",
     "backlog scaling from 1k to 1M pending tasks", NULL},
    {"C06", "A sorted-set score (a double) stores a millisecond Unix "
     "timestamp exactly.",
     "exact round trip of scores; where it stops (us, ns, large ms)", NULL},
    {"C07", "ZPOPMIN pops atomically, so it alone is a correct claim.",
     "zpopmin: what happens to tasks not yet due; loss when a consumer dies "
     "between pop and put-back", NULL},
    {"C08", "The set member should be a task id with the payload stored "
     "apart; using the payload as the member merges equal payloads into "
     "one task.", "equal-payload test on both layouts", NULL},
    {"C09", "A TTL on the payload key avoids leftovers, but a TTL shorter "
     "than the delay (or the wait in a backlog) loses the task.",
     "payload TTL shorter than the delay: lost count", NULL},
    {"C10", "With polling, lateness lies between 0 and the poll interval, "
     "and a shorter interval costs more CPU.",
     "lateness distribution vs poll_ms; idle cost vs poll_ms", rule_c10},
    {"C11", "Sleeping about 100 ms when nothing is due keeps CPU low without "
     "much harm to lateness.", "idle cost and lateness at poll_ms=100",
     rule_c11},
    {"C12", "A consumer that dies between taking a task and finishing it "
     "loses the task, unless the task is re-added with a retry time (a "
     "lease).", "kill-consumer: lost > 0 for at-most-once strategies, 0 "
     "for leased ones", NULL},
    {"C13", "Redis runs commands on one thread, so everything done against "
     "it is atomic and concurrency is no concern.",
     "naive duplicates: single commands are atomic, sequences are not",
     rule_c13},
    {"C14", "With AOF (appendfsync everysec) delayed tasks survive a Redis "
     "crash, losing at most about one second of writes.",
     "restart-redis with AOF everysec / always / off: lost counts", NULL},
    {"C15", "A primary/replica failover can lose a few recent tasks "
     "(replication is asynchronous); WAIT narrows the window.",
     "failover experiment with a replica", NULL},
    {"C16", "The Redisson design (sorted set, ready list, Pub/Sub; consumers "
     "block in BLPOP) avoids blind polling and delivers on time.",
     "list: idle commands/s and lateness p99", rule_c16},
    {"C17", "An in-process min-heap (like Java's DelayQueue) inserts and "
     "removes in O(log n), and leader-follower waiting wakes one thread, "
     "not a herd.", "heap: ops/s vs n; wake-ups per delivery", rule_c17},
    {"C18", "Keyspace expiry events can drive a delay queue, but they are "
     "fire-and-forget (lost while no subscriber listens) and fire when "
     "Redis gets round to deleting the key, not at the TTL.",
     "expiry: loss during a subscriber outage; lateness vs number of keys",
     rule_c18},
    {"C19", "Splitting one big sorted set into buckets (by time or hash), or "
     "sharding on Redis Cluster, raises throughput for very large queues.",
     "bucketed/sharded variant on a local Cluster vs one key", NULL},
    {"C20", "A sorted set can be capped with MAXLEN like a stream.",
     "Redis's reply to ZADD with MAXLEN (a Streams-only option)", NULL},
    {"C21", "Since a consumer can still get a task twice (retries, "
     "redelivery), processing must be idempotent and re-check the business "
     "state.", "at-least-once strategies under faults: redelivered > 0",
     NULL},
    {NULL, NULL, NULL, NULL},
};

dq_verdict dq_claim_decide(const dq_claim_def *c, const dq_results *r, char *ev,
                           size_t evlen)
{
    if (c->rule == NULL) {
        snprintf(ev, evlen, "No experiment measures it yet.  Would decide "
                 "it: %s.", c->decide);
        return DQ_VERDICT_NOT_MEASURED;
    }
    return c->rule(r, ev, evlen);
}
