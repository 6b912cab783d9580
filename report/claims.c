/* claims.c -- the claims table and the rules that decide them.
 *
 * CLAIMS.md (the lab's brief) lists what tutorials and interview guides say
 * about delay queues on Redis.  text/claims.md restates each claim in
 * dqlab's own words under the same id, with what would decide it; where an
 * experiment measures it, a rule here reads the loaded results (results.h)
 * and returns a verdict with the numbers behind it, in the sentences of
 * text/claims.md.  Rules never hard-code a figure: every number in an
 * evidence text is computed from the results, and a comparison with a
 * bound is made on the values as printed.  A rule looks for the data it
 * needs in any experiment (not one by name), so a later experiment that
 * measures the same thing adds evidence without touching the rule.
 *
 * Claims of the same shape share one rule with its parameters in the row
 * (struct dq_claim_args): the duplicate tally of one strategy over the
 * trials with 2+ consumers (C01, C02, C03, C13) and the probe readings
 * (C06-C09, C20).  The others differ claim by claim: polling lateness and
 * cost (C10, C11, C04, C16), growth with the backlog (C05, C17), expiry
 * events (C18) and what faults did (C12, C14, C21: the loss table).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ini.h>

#include "../strategies/dq.h"
#include "claims.h"
#include "md.h"

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

/* Appends to the evidence: printf (SAY), a text of claims.md (TSAY); a
 * text into the char array b (TBUF). */
#define SAY(...) dq_append(ev->buf, ev->len, &ev->off, __VA_ARGS__)
#define TSAY(id, fmt, ...)                                                   \
    DQ_TCAT(ev->t, ev->buf, ev->len, &ev->off, "claims." #id, fmt,           \
            ##__VA_ARGS__)
#define TBUF(b, id, fmt, ...)                                                \
    DQ_TCAT(ev->t, b, sizeof b, &(size_t){strlen(b)}, "claims." #id, fmt,    \
            ##__VA_ARGS__)
/* The evidence starts over with text id: a rule that finds out late that
 * it cannot decide. */
#define NONE(id, fmt, ...)                                                   \
    (ev->off = 0, ev->buf[0] = '\0', TSAY(id, fmt, ##__VA_ARGS__),          \
     DQ_VERDICT_NOT_MEASURED)

/* The group of strategy (with poll_ms = poll when poll > 0) in e with
 * backlog 0, or NULL. */
static const dq_rgroup *find_group(const dq_rexp *e, const char *strategy,
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

/* The largest p99 (and max in *mx) lateness over the trials of g in e. */
static double worst_p99(const dq_rexp *e, const dq_rgroup *g, double *mx)
{
    double p99 = 0, m = 0;
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_trialrow *t = &e->trials[i];
        if (strcmp(t->strategy, g->strategy) != 0 ||
            strcmp(t->options, g->options) != 0 ||
            t->consumers != g->consumers || t->backlog != g->backlog)
            continue;
        p99 = t->lateness_p99_ms > p99 ? t->lateness_p99_ms : p99;
        m = t->lateness_max_ms > m ? t->lateness_max_ms : m;
    }
    if (mx != NULL)
        *mx = m;
    return p99;
}

/* What the trials of one strategy with 2+ consumers add up to, over every
 * experiment without injected faults. */
typedef struct tally {
    size_t trials, dup_trials;
    uint64_t duplicates, dup_max, deliveries, wakeups;
    uint64_t lost_races, round_trips, delivered;
    int max_consumers;
    char exps[256];       /* experiment names, comma-separated */
    char fig[128];        /* a duplicates figure that shows them, or "" */
} tally;

static void tally_of(const dq_results *r, const char *strategy, tally *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < r->nexps; i++) {
        const dq_rexp *e = &r->exps[i];
        bool used = false;
        if (dq_loss_is(e))
            continue;  /* injected faults: the loss rules judge those */
        for (size_t j = 0; j < e->ntrials; j++) {
            const dq_trialrow *x = &e->trials[j];
            if (strcmp(x->strategy, strategy) != 0 || x->consumers < 2 ||
                x->tasks == 0)
                continue;  /* idle trials (tasks = 0) deliver nothing */
            used = true;
            t->trials++;
            t->dup_trials += x->duplicates > 0;
            t->duplicates += x->duplicates;
            t->dup_max = x->duplicates > t->dup_max ? x->duplicates
                                                    : t->dup_max;
            t->deliveries += x->deliveries;
            t->wakeups += x->wakeups;
            t->lost_races += x->lost_races;
            t->round_trips += x->round_trips;
            t->delivered += x->delivered;
            if (x->consumers > t->max_consumers)
                t->max_consumers = x->consumers;
        }
        if (!used)
            continue;
        size_t l = strlen(t->exps);
        snprintf(t->exps + l, sizeof t->exps - l, "%s%s", l ? ", " : "",
                 e->name);
        if (t->fig[0] == '\0' && dq_rexp_has_plot(e, "duplicates"))
            snprintf(t->fig, sizeof t->fig, "%s-duplicates", e->name);
    }
}

/* A probe reading: the integer keys of one probes.csv row of the claim. */
typedef struct probe_read {
    const char *probe;
    const char *keys[6];  /* NULL-terminated */
} probe_read;

struct dq_claim_args {
    /* rule_tally: the strategy and the wording / verdict of the claim */
    const char *strategy;
    dq_verdict (*say)(dq_ev *ev, const tally *t, const char *where);
    /* rule_probes: the readings (v[k][i] = keys[i] of reads[k]), judged */
    probe_read reads[5];
    dq_verdict (*judge)(dq_ev *ev, const dq_results *r, int64_t v[5][6]);
};

/* ---- Duplicate tallies: C01, C02, C03, C13 ------------------------------ */

/* "<strategy> delivered N duplicate deliveries in a of b trials with 2 to
 * c consumers" into b. */
static void dups_seen(dq_ev *ev, const tally *t, const char *s, char *b,
                      size_t len)
{
    DQ_TCAT(ev->t, b, len, &(size_t){0}, "claims.dups_seen", "strategy=%s "
            "n=%" PRIu64 " trials=%zu of=%zu max_c=%d", s, t->duplicates,
            t->dup_trials, t->trials, t->max_consumers);
}

/* "<strategy> delivered no duplicate in n trials with 2 to c consumers
 * [(d deliveries)]<where>" into b. */
static void dups_none(dq_ev *ev, const tally *t, const char *s,
                      bool deliveries, const char *w, char *b, size_t len)
{
    size_t off = 0;
    DQ_TCAT(ev->t, b, len, &off, "claims.dups_none", "strategy=%s "
            "trials=%zu s=%s max_c=%d", s, t->trials,
            t->trials == 1 ? "" : "s", t->max_consumers);
    if (deliveries)
        DQ_TCAT(ev->t, b, len, &off, "claims.dups_deliveries", " n=%"
                PRIu64, t->deliveries);
    dq_append(b, len, &off, "%s", w);
}

/* C01: naive (ZRANGEBYSCORE then ZREM) with 2+ consumers duplicates. */
static dq_verdict say_c01(dq_ev *ev, const tally *t, const char *w)
{
    char b[1024];
    if (t->duplicates > 0) {
        dups_seen(ev, t, "naive", b, sizeof b);
        TSAY(c01_holds, "seen=%s max=%" PRIu64 " where=%s", b, t->dup_max, w);
        return DQ_VERDICT_HOLDS;
    }
    dups_none(ev, t, "naive", false, w, b, sizeof b);
    TSAY(c01_not, "none=%s", b);
    return DQ_VERDICT_DOES_NOT_HOLD;
}

/* C02: a Lua claim script does not duplicate, however many consumers. */
static dq_verdict say_c02(dq_ev *ev, const tally *t, const char *w)
{
    char b[1024], few[128] = "";
    if (t->duplicates > 0) {
        dups_seen(ev, t, "lua", b, sizeof b);
        SAY("%s%s.", b, w);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    dups_none(ev, t, "lua", true, w, b, sizeof b);
    if (t->max_consumers < 4)
        TBUF(few, c02_few, "  ");
    TSAY(c02_holds, "none=%s few=%s", b, few);
    return t->max_consumers >= 4 ? DQ_VERDICT_HOLDS
                                 : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C03: ZREM's reply as the claim: no duplicates, lost races cost. */
static dq_verdict say_c03(dq_ev *ev, const tally *t, const char *w)
{
    char b[1024];
    double d = (double)t->delivered;
    if (t->duplicates > 0) {
        dups_seen(ev, t, "naive-checked", b, sizeof b);
        SAY("%s%s.", b, w);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    dups_none(ev, t, "naive-checked", true, w, b, sizeof b);
    if (t->lost_races == 0) {
        TSAY(c03_no_race, "none=%s", b);
        return DQ_VERDICT_HOLDS_WITH_CONDITIONS;
    }
    TSAY(c03_holds, "none=%s races=%" PRIu64 " per=%.3f rt=%.2f", b,
         t->lost_races, d ? (double)t->lost_races / d : 0.0,
         d ? (double)t->round_trips / d : 0.0);
    return DQ_VERDICT_HOLDS;
}

/* C13: "single-threaded Redis makes everything atomic". */
static dq_verdict say_c13(dq_ev *ev, const tally *t, const char *w)
{
    if (t->duplicates > 0) {
        TSAY(c13_not, "n=%" PRIu64 " dup_trials=%zu trials=%zu where=%s",
             t->duplicates, t->dup_trials, t->trials, w);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    TSAY(c13_none, "trials=%zu s=%s where=%s", t->trials,
         t->trials == 1 ? "" : "s", w);
    return DQ_VERDICT_NOT_MEASURED;
}

/* The duplicate tally rule: args->strategy over the trials with 2+
 * consumers, worded and judged by args->say. */
static dq_verdict rule_tally(const dq_claim_def *c, const dq_results *r,
                             dq_ev *ev)
{
    tally t;
    char w[512] = "";
    tally_of(r, c->args->strategy, &t);
    if (t.trials == 0)
        return NONE(tally_none, "strategy=%s", c->args->strategy);
    if (t.fig[0])
        TBUF(w, tally_where_fig, " exps=%s fig=%s", t.exps, t.fig);
    else
        TBUF(w, tally_where, " exps=%s", t.exps);
    return c->args->say(ev, &t, w);
}

/* ---- Probe readings: C06, C07, C08, C09, C20 ---------------------------
 * Claims about Redis itself; one real interaction each decides them
 * (`dqlab probes`).  The rule reads the keys each row names from the
 * verdict_input column of probes.csv, then the row's judge decides. */

static dq_verdict rule_probes(const dq_claim_def *c, const dq_results *r,
                              dq_ev *ev)
{
    const dq_probes *p = &r->probes;
    int64_t v[5][6];
    if (!p->present)
        return NONE(probes_none, "root=%s", r->root);
    for (size_t k = 0; k < 5 && c->args->reads[k].probe; k++) {
        const probe_read *rd = &c->args->reads[k];
        const dq_probe_row *row = dq_probes_find(p, c->id, rd->probe);
        for (size_t i = 0; rd->keys[i] != NULL; i++)
            if (!dq_probe_int(row, rd->keys[i], &v[k][i]))
                return NONE(probes_lacks, "dir=%s id=%s probe=%s key=%s",
                            p->dir, c->id, rd->probe, rd->keys[i]);
    }
    return c->args->judge(ev, r, v);
}

/* The Redis version of the probe run, or "?". */
static const char *probe_redis(const dq_results *r)
{
    return r->probes.redis_version[0] ? r->probes.redis_version : "?";
}

/* "YYYY-mm-dd" (UTC) of s seconds since the epoch. */
static void utc_date(int64_t s, char *buf, size_t len)
{
    time_t t = (time_t)s;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%d", &tm) == 0)
        snprintf(buf, len, "?");
}

/* C06: ms [exact, n, lo, hi], us [exact, n], ns [exact, n, max_err],
 * first inexact integer, first inexact ms x 4096. */
static dq_verdict judge_c06(dq_ev *ev, const dq_results *r, int64_t v[5][6])
{
    const int64_t *ms = v[0], *us = v[1], *ns = v[2], first = v[3][0];
    const int64_t x4096 = v[4][0];
    char lo[32], hi[32], lms[32], lus[32], lns[32], xd[32], pk[128] = "";
    bool holds = ms[0] == ms[1];
    utc_date(ms[2] / 1000, lo, sizeof lo);
    utc_date(ms[3] / 1000, hi, sizeof hi);
    TSAY(c06_scores, "redis=%s ms_exact=%" PRId64 " ms_n=%" PRId64 " lo=%s "
         "hi=%s us_exact=%" PRId64 " us_n=%" PRId64 " ns_exact=%" PRId64
         " ns_n=%" PRId64 " ns_err=%" PRId64, probe_redis(r), ms[0], ms[1],
         lo, hi, us[0], us[1], ns[0], ns[1], ns[2]);
    if (first > 0) {
        utc_date((first - 1) / 1000, lms, sizeof lms);
        utc_date((first - 1) / 1000000, lus, sizeof lus);
        utc_date((first - 1) / 1000000000, lns, sizeof lns);
        TSAY(c06_first, "  first=%" PRId64 " ms=%s us=%s ns=%s", first, lms,
             lus, lns);
    }
    if (x4096 > 0) {
        utc_date(x4096 / 1000, xd, sizeof xd);
        TSAY(c06_x4096, "  date=%s ms=%" PRId64, xd, x4096);
        TBUF(pk, c06_packed, "%s", " ");
    } else {
        TSAY(c06_x4096_ok, "  date=%s", hi);
    }
    if (holds)
        TSAY(c06_holds, "  packed=%s", pk);
    else
        TSAY(c06_fails, "  packed=%s", pk);
    return holds ? DQ_VERDICT_HOLDS : DQ_VERDICT_DOES_NOT_HOLD;
}

/* The strategies and faults of an experiment file's [experiment], each
 * value's continuation lines joined with a blank (inih, as the experiment
 * parser reads it). */
typedef struct exp_lists {
    char strategies[1024], faults[1024];
} exp_lists;

static int ini_on_key(void *user, const char *section, const char *name,
                      const char *value)
{
    exp_lists *x = user;
    char *buf = strcmp(name, "strategies") == 0 ? x->strategies
                : strcmp(name, "faults") == 0   ? x->faults : NULL;
    if (buf != NULL && strcmp(section, "experiment") == 0) {
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof x->faults - l, "%s%s", l ? " " : "", value);
    }
    return 1;
}

/* C07's loss part: what the loss experiment says of zpopmin's consumers
 * killed, into loss ("" when nothing). */
static void c07_loss(dq_ev *ev, const dq_results *r, char loss[512])
{
    const dq_rexp *e = dq_loss_experiment(r);
    const dq_loss_table *lt = e ? e->loss : NULL;
    uint64_t lost = 0, enq = 0;
    size_t cells = 0;
    char path[4200];
    exp_lists x = {"", ""};
    if (lt == NULL)
        return;
    for (size_t c = 0; c < lt->nfaults; c++)
        for (size_t row = 0; row < lt->nrows; row++) {
            const dq_loss_cell *x = dq_loss_cell_at(lt, row, c);
            if (x != NULL && strncmp(lt->faults[c], "kill-consumer", 13) == 0
                && strcmp(x->strategy, "zpopmin") == 0) {
                cells++;
                lost += x->lost;
                enq += x->enqueued;
            }
        }
    if (cells > 0) {
        DQ_TCAT(ev->t, loss, 512, &(size_t){0}, "claims.c07_loss", "exp=%s "
                "lost=%" PRIu64 " n=%" PRIu64, e->name, lost, enq);
        return;
    }
    const char *copy = dq_rexp_meta(e, "file_copy");
    snprintf(path, sizeof path, "%s/%s", e->dir,
             copy[0] ? copy : "experiment.ini");
    if (ini_parse(path, ini_on_key, &x) >= 0 &&
        strstr(x.strategies, "zpopmin") != NULL &&
        strstr(x.faults, "kill-consumer") != NULL)
        DQ_TCAT(ev->t, loss, 512, &(size_t){0}, "claims.c07_loss_quick",
                "file=%s", dq_rexp_meta(e, "file")[0]
                ? dq_rexp_meta(e, "file") : "experiments/loss.ini");
}

/* C07: atomic [duplicates, missing, popped, n, threads], pop-then-die
 * [lost, n]. */
static dq_verdict judge_c07(dq_ev *ev, const dq_results *r, int64_t v[5][6])
{
    const int64_t *a = v[0], *d = v[1];
    char loss[512] = "";
    dq_verdict verdict = a[0] > 0   ? DQ_VERDICT_DOES_NOT_HOLD
                         : d[0] > 0 ? DQ_VERDICT_HOLDS_WITH_CONDITIONS
                                    : DQ_VERDICT_HOLDS;
    TSAY(c07, "redis=%s threads=%" PRId64 " members=%" PRId64 " pops=%"
         PRId64 " dups=%" PRId64 " missed=%" PRId64 " lost=%" PRId64 " n=%"
         PRId64, probe_redis(r), a[4], a[3], a[2], a[0], a[1], d[0], d[1]);
    if (verdict == DQ_VERDICT_HOLDS_WITH_CONDITIONS) {
        c07_loss(ev, r, loss);
        TSAY(c07_conditions, "  loss=%s", loss);
    }
    return verdict;
}

/* C08: [members, due_first, delivered, tasks] of both layouts. */
static dq_verdict judge_c08(dq_ev *ev, const dq_results *r, int64_t v[5][6])
{
    const int64_t *pm = v[0], *im = v[1];
    TSAY(c08, "redis=%s tasks=%" PRId64 " pm_members=%" PRId64 " pm_due=%"
         PRId64 " pm_found=%" PRId64 " im_members=%" PRId64 " im_due=%"
         PRId64 " im_found=%" PRId64, probe_redis(r), pm[3], pm[0], pm[1],
         pm[2], im[0], im[1], im[2]);
    return pm[0] < pm[3] && im[0] == im[3] ? DQ_VERDICT_HOLDS
                                           : DQ_VERDICT_DOES_NOT_HOLD;
}

/* C09: [lost, n, ttl_ms, delay_ms] shorter and longer TTL, [leftovers,
 * before, n]. */
static dq_verdict judge_c09(dq_ev *ev, const dq_results *r, int64_t v[5][6])
{
    const int64_t *s = v[0], *l = v[1], *left = v[2];
    TSAY(c09, "redis=%s s_ttl=%" PRId64 " s_delay=%" PRId64 " s_lost=%"
         PRId64 " s_n=%" PRId64 " l_ttl=%" PRId64 " l_lost=%" PRId64 " l_n=%"
         PRId64 " left_n=%" PRId64 " left_before=%" PRId64 " left=%" PRId64,
         probe_redis(r), s[2], s[3], s[0], s[1], l[2], l[0], l[1], left[2],
         left[1], left[0]);
    return s[0] == 0                   ? DQ_VERDICT_DOES_NOT_HOLD
           : l[0] == 0 && left[0] == 0 ? DQ_VERDICT_HOLDS
                                       : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C20: zadd-maxlen [rejected, zcard], xadd-maxlen [xlen, added, maxlen]. */
static dq_verdict judge_c20(dq_ev *ev, const dq_results *r, int64_t v[5][6])
{
    const int64_t *z = v[0], *x = v[1];
    const dq_probe_row *row = dq_probes_find(&r->probes, "C20",
                                             "zadd-maxlen");
    char rej[128] = "";
    if (z[0] == 1)
        TBUF(rej, c20_rejected, "");
    TSAY(c20, "redis=%s observed=%s rejected=%s maxlen=%" PRId64 " added=%"
         PRId64 " xlen=%" PRId64, probe_redis(r), row ? row->observed : "?",
         rej, x[2], x[1], x[0]);
    return z[0] == 1 && z[1] == 0 ? DQ_VERDICT_DOES_NOT_HOLD
                                  : DQ_VERDICT_HOLDS;
}

/* ---- C10, C11, C04, C16: polling lateness and cost ---------------------- */

typedef struct c10_bound {    /* the polling variants against the interval */
    size_t npoll, nbound_p99, nbound_max;
    double worst99, worstmx;  /* the largest excess, ms */
    bool early;
} c10_bound;

/* C10's lateness part: each polling variant's p99 and max against its
 * interval, strictly, on the values as printed (0.1 ms). */
static void c10_lateness(dq_ev *ev, const dq_rexp *lat, c10_bound *b)
{
    for (size_t i = 0; lat != NULL && i < lat->ngroups; i++) {
        const dq_rgroup *g = &lat->groups[i];
        long pm = dq_group_poll_ms(g);
        double mx, p99, d = (double)pm;
        char name[300] = "";
        if (pm <= 0)
            continue;
        p99 = round(worst_p99(lat, g, &mx) * 10) / 10;
        mx = round(mx * 10) / 10;
        b->npoll++;
        b->nbound_p99 += p99 <= d;
        b->nbound_max += mx <= d;
        b->early |= g->early_max > 0;
        if (g->options[0])
            snprintf(name, sizeof name, "%s %s", g->strategy, g->options);
        else
            TBUF(name, c10_poll, "strategy=%s ms=%ld", g->strategy, pm);
        DQ_TCATP(ev->t, ev->buf, ev->len, &ev->off, g->n > 1,
                 "claims.c10_variant_worst", "claims.c10_variant",
                 "%sname=%s p99=%.1f max=%.1f", ev->off ? "; " : "", name,
                 p99, mx);
        if (p99 > d)
            TSAY(c10_p99_beyond, " ms=%.1f", p99 - d);
        else if (mx > d)
            TSAY(c10_max_beyond, " ms=%.1f", mx - d);
        b->worst99 = p99 > d && p99 - d > b->worst99 ? p99 - d : b->worst99;
        b->worstmx = mx - d > b->worstmx ? mx - d : b->worstmx;
    }
}

/* C10's cost part: commands (and CPU) at the shortest against the longest
 * poll_ms of each polling strategy while idle.  Returns whether any was
 * measured; *grows: each shorter interval caused more commands; *agrees:
 * the CPU moved with them. */
static bool c10_cost(dq_ev *ev, const dq_rexp *idle, bool *grows,
                     bool *agrees)
{
    bool known = false;
    *grows = *agrees = true;
    for (size_t i = 0; idle != NULL && i < idle->ngroups; i++) {
        const dq_rgroup *a = &idle->groups[i], *b = NULL;
        long pa = dq_group_poll_ms(a), px;
        bool shortest = pa > 0;
        char against[256] = "";
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
        bool more = a->cmds_per_s_median > b->cmds_per_s_median;
        bool cpu = a->cpu_ms_per_s_median > b->cpu_ms_per_s_median;
        known = true;
        *grows &= more;
        *agrees &= !(more && !cpu);
        if (more && !cpu)
            TBUF(against, c10_against, "%s", " ");
        TSAY(c10_idle, "consumers=%d strategy=%s pa=%ld ca=%.0f ua=%.1f "
             "pb=%ld cb=%.1f ub=%.1f exp=%s against=%s ", a->consumers,
             a->strategy, pa, a->cmds_per_s_median, a->cpu_ms_per_s_median,
             dq_group_poll_ms(b), b->cmds_per_s_median,
             b->cpu_ms_per_s_median, idle->name, against);
    }
    return known;
}

/* C10's verdict after the numbers. */
static dq_verdict c10_conclude(dq_ev *ev, const c10_bound *b, bool cost,
                               bool grows, bool agrees)
{
    if (b->early) {
        TSAY(c10_early, "");
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (b->nbound_p99 < b->npoll) {
        TSAY(c10_beyond, "n=%zu of=%zu by=%.1f", b->npoll - b->nbound_p99,
             b->npoll, b->worst99);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (!cost) {
        TSAY(c10_no_cost, "");
        return DQ_VERDICT_HOLDS_WITH_CONDITIONS;
    }
    if (!grows) {
        TSAY(c10_not_grows, "");
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (b->nbound_max == b->npoll)
        TSAY(c10_all_within, "n=%zu", b->npoll);
    else
        TSAY(c10_max_exceeded, "n=%zu of=%zu by=%.1f", b->npoll,
             b->npoll - b->nbound_max, b->worstmx);
    if (!agrees)
        TSAY(c10_cpu_note, "%s", "  ");
    return b->nbound_max == b->npoll && agrees
               ? DQ_VERDICT_HOLDS : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C10: polling lateness lies in [0, poll interval]; shorter costs more.
 * The bound is compared strictly, on the values as printed: no slack, and
 * every excess printed in ms, so the verdict and the numbers cannot
 * disagree.  The cost side compares Redis commands (what the interval
 * drives); when the server CPU moves against them the text says so and
 * the verdict is at most "holds with conditions". */
static dq_verdict rule_c10(const dq_claim_def *c, const dq_results *r,
                           dq_ev *ev)
{
    const dq_rexp *lat = dq_results_with_plot(r, "lateness-cdf");
    /* the numbers leave the last 320 bytes to the conclusion */
    size_t evlen = ev->len, dlen = evlen > 960 ? evlen - 320 : evlen;
    c10_bound b = {0};
    bool grows, agrees, cost;
    (void)c;
    ev->len = dlen;
    c10_lateness(ev, lat, &b);
    if (b.npoll == 0) {
        ev->len = evlen;
        return NONE(c10_none, "");
    }
    TSAY(c10_where, " exp=%s ", lat->name);
    cost = c10_cost(ev, dq_results_with_plot(r, "idle-cost"), &grows,
                    &agrees);
    ev->len = evlen;
    if (ev->off >= dlen) {   /* numbers cut short: end at the last sentence */
        size_t k = strlen(ev->buf);
        while (k > 1 && !(ev->buf[k - 2] == '.' && ev->buf[k - 1] == ' '))
            k--;
        ev->buf[ev->off = k > 1 ? k - 1 : strlen(ev->buf)] = '\0';
        TSAY(c10_more, "%s ", " ");
    }
    return c10_conclude(ev, &b, cost, grows, agrees);
}

/* C11: sleeping ~100 ms keeps CPU low without much lateness. */
static dq_verdict rule_c11(const dq_claim_def *c, const dq_results *r,
                           dq_ev *ev)
{
    const dq_rexp *idle = dq_results_with_plot(r, "idle-cost");
    const dq_rexp *lat = dq_results_with_plot(r, "lateness-cdf");
    const dq_rgroup *i100 = find_group(idle, "naive", 100);
    const dq_rgroup *i10 = find_group(idle, "naive", 10);
    const dq_rgroup *base = find_group(idle, "heap", 0);
    const dq_rgroup *l100 = find_group(lat, "naive", 100);
    const dq_rgroup *lu = find_group(lat, "lua", 100);
    size_t ncounts = 0, k;
    double p99 = -1;
    int counts[8];
    (void)c;
    if (i100 == NULL || i100->cpu_ms_per_s_median < 0)
        return NONE(c11_none, "");
    TSAY(c11_idle, "consumers=%d cmds=%.1f cpu=%.1f", i100->consumers,
         i100->cmds_per_s_median, i100->cpu_ms_per_s_median);
    if (i10 != NULL)
        TSAY(c11_idle10, " cmds=%.0f cpu=%.1f", i10->cmds_per_s_median,
             i10->cpu_ms_per_s_median);
    if (base != NULL && base->cpu_ms_per_s_median >= 0)
        TSAY(c11_base, "cpu=%.1f", base->cpu_ms_per_s_median);
    TSAY(exp, " exp=%s ", idle->name);
    if (l100 != NULL) {
        p99 = worst_p99(lat, l100, NULL);
        TSAY(c11_price, "p50=%.1f p99=%.1f exp=%s", l100->p50_median, p99,
             lat->name);
        if (lu != NULL)
            TSAY(c11_lua, "p50=%.1f p99=%.1f", lu->p50_median,
                 worst_p99(lat, lu, NULL));
        SAY(". ");
    } else {
        TSAY(c11_no_lateness, " ");
    }
    bool cheap = i100->cpu_ms_per_s_median < 10.0; /* < 1% of one core */
    if (cheap && p99 >= 0)
        TSAY(c11_cheap_p99, "p99=%.1f", p99);
    else if (cheap)
        TSAY(c11_cheap, "");
    else
        TSAY(c11_not_cheap, "");
    /* only one consumer count measured: the scaling is an expectation */
    for (size_t i = 0; i < idle->ngroups; i++) {
        const dq_rgroup *g = &idle->groups[i];
        if (strcmp(g->strategy, "naive") != 0 || dq_group_poll_ms(g) != 100)
            continue;
        for (k = 0; k < ncounts && counts[k] != g->consumers;)
            k++;
        if (k == ncounts && ncounts < 8)
            counts[ncounts++] = g->consumers;
    }
    if (ncounts == 1)
        TSAY(c11_one_count, "  consumers=%d", counts[0]);
    return cheap ? DQ_VERDICT_HOLDS_WITH_CONDITIONS : DQ_VERDICT_DOES_NOT_HOLD;
}

/* C04's idle part: polling once a second; returns whether it is cheap
 * (under 1% of a core).  The CPU is the whole server process's, so on a
 * busy machine it can jump while the commands stay few; a handful of
 * commands per second cannot cost 10 ms/s, so then the commands decide
 * and the text says why. */
static bool c04_idle(dq_ev *ev, const dq_rexp *idle)
{
    const dq_rgroup *i1000 = find_group(idle, "naive", 1000);
    const dq_rgroup *base = find_group(idle, "heap", 0);
    if (i1000 == NULL || i1000->cpu_ms_per_s_median < 0) {
        TSAY(c04_idle_none, " ");
        return true;
    }
    bool cheap = i1000->cpu_ms_per_s_median < 10.0;
    bool noisy = !cheap && i1000->cmds_per_s_median >= 0 &&
                 i1000->cmds_per_s_median < 20.0;
    TSAY(c04_idle, "consumers=%d cmds=%.1f cpu=%.1f", i1000->consumers,
         i1000->cmds_per_s_median, i1000->cpu_ms_per_s_median);
    if (base != NULL && base->cpu_ms_per_s_median >= 0)
        TSAY(c04_base, " cpu=%.1f", base->cpu_ms_per_s_median);
    TSAY(exp, " exp=%s ", idle->name);
    if (noisy)
        TSAY(c04_noisy, "cmds=%.1f ", i1000->cmds_per_s_median);
    return cheap || noisy;
}

/* C04's bench part: one lua claim at 100k pending (or the largest backlog
 * when 100k was not run) against the smallest, when the largest reaches
 * 100k; returns whether it stays easy, -1 when not measured. */
static int c04_bench(dq_ev *ev, const dq_perf *p)
{
    const dq_perf_bl *lo = NULL, *hi = NULL, *b;
    if (p->present)
        dq_perf_backlog_range(p, "lua", &lo, &hi);
    if (lo == NULL || hi == NULL || hi == lo || hi->backlog < 100000 ||
        lo->claim_us_p99 <= 0)
        return -1;
    b = dq_perf_backlog(p, "lua", 100000) ? dq_perf_backlog(p, "lua", 100000)
                                          : hi;
    double r99 = b->claim_us_p99 / lo->claim_us_p99;
    bool ok = r99 <= 3.0 && b->claim_us_p99 < 10000;
    TSAY(c04_bench, "n=%" PRId64 " p50=%.0f p99=%.0f lo_p99=%.0f lo_n=%"
         PRId64 " x=%.2f bytes=%.0f ", b->backlog, b->claim_us_p50,
         b->claim_us_p99, lo->claim_us_p99, lo->backlog, r99,
         b->bytes_per_task);
    if (!ok)
        TSAY(c04_bench_grew, " ");
    return ok;
}

/* C04 (partly): polling once a second is cheap; 100k pending is easy. */
static dq_verdict rule_c04(const dq_claim_def *c, const dq_results *r,
                           dq_ev *ev)
{
    const dq_rexp *idle = dq_results_with_plot(r, "idle-cost");
    const dq_rexp *bl = dq_results_with_plot(r, "backlog-lateness");
    const dq_rgroup *i1000 = find_group(idle, "naive", 1000), *big = NULL;
    const dq_perf_bl *lo = NULL, *hi = NULL;
    bool easy = true;
    (void)c;
    for (size_t i = 0; bl != NULL && i < bl->ngroups; i++)
        if (strcmp(bl->groups[i].strategy, "lua") == 0 &&
            (big == NULL || bl->groups[i].backlog > big->backlog))
            big = &bl->groups[i];
    if (r->bench.present)
        dq_perf_backlog_range(&r->bench, "lua", &lo, &hi);
    bool bench = lo != NULL && hi != NULL && hi != lo &&
                 hi->backlog >= 100000;
    if ((i1000 == NULL || i1000->cpu_ms_per_s_median < 0) && big == NULL &&
        !bench)
        return NONE(c04_none, "");
    bool cheap = c04_idle(ev, idle);
    if (big != NULL) {
        double p99 = worst_p99(bl, big, NULL);
        easy = big->lost_max == 0 && p99 < 100.0;
        TSAY(c04_backlog, "n=%" PRId64 " tasks=%" PRIu64 " p50=%.1f p99=%.1f "
             "lost=%" PRIu64 " exp=%s ", big->backlog, big->enqueued_sum,
             big->p50_median, p99, big->lost_max, bl->name);
    } else if (!bench) {
        TSAY(c04_backlog_none, " ");
    }
    if (!cheap)
        TSAY(c04_not_cheap, " ");
    if (!easy)
        TSAY(c04_not_easy, " ");
    int ok = bench ? c04_bench(ev, &r->bench) : -1;
    if (ok < 0)
        TSAY(c04_bench_none, "");
    return !cheap || !easy || ok == 0 ? DQ_VERDICT_DOES_NOT_HOLD
                                      : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C16: list (Redisson design) avoids blind polling and is on time. */
static dq_verdict rule_c16(const dq_claim_def *c, const dq_results *r,
                           dq_ev *ev)
{
    const dq_rexp *idle = dq_results_with_plot(r, "idle-cost");
    const dq_rexp *lat = dq_results_with_plot(r, "lateness-cdf");
    const dq_rgroup *ll = find_group(lat, "list", 0);
    const dq_rgroup *ln = find_group(lat, "naive", 100);
    const dq_rgroup *lu = find_group(lat, "lua", 100);
    const dq_rgroup *il = find_group(idle, "list", 0);
    const dq_rgroup *in = find_group(idle, "naive", 100);
    int ok = 0, known = 0;
    double mx;
    (void)c;
    if (ll == NULL && il == NULL)
        return NONE(c16_none, "");
    if (ll != NULL) {
        double p99l = worst_p99(lat, ll, &mx);
        TSAY(c16_list, "p99=%.1f max=%.1f", p99l, mx);
        if (ln != NULL) {
            double p99n = worst_p99(lat, ln, NULL);
            TSAY(c16_naive, "p99=%.1f", p99n);
            known++;
            ok += p99l < p99n;
        }
        if (lu != NULL)
            TSAY(c16_lua, "p99=%.1f", worst_p99(lat, lu, NULL));
        TSAY(exp, " exp=%s ", lat->name);
    }
    if (il != NULL && il->cmds_per_s_median >= 0) {
        TSAY(c16_idle, "consumers=%d cmds=%.1f", il->consumers,
             il->cmds_per_s_median);
        if (in != NULL && in->cmds_per_s_median >= 0) {
            TSAY(c16_idle_naive, "cmds=%.1f", in->cmds_per_s_median);
            known++;
            ok += il->cmds_per_s_median < in->cmds_per_s_median;
        }
        TSAY(exp, " exp=%s ", idle->name);
    }
    if (known == 0) {
        TSAY(c16_nothing, "");
        return DQ_VERDICT_NOT_MEASURED;
    }
    if (ok == known && known == 2)
        TSAY(c16_both, "");
    else if (ok > 0)
        TSAY(c16_some, "ok=%d known=%d", ok, known);
    else
        TSAY(c16_neither, "");
    return ok == known && known == 2 ? DQ_VERDICT_HOLDS
           : ok > 0 ? DQ_VERDICT_HOLDS_WITH_CONDITIONS
                    : DQ_VERDICT_DOES_NOT_HOLD;
}

/* ---- C05, C17: growth with the backlog (`dqlab bench`) ------------------ */

/* ln(hi) / ln(lo) */
static double log_ratio(int64_t hi, int64_t lo)
{
    return log((double)hi) / log((double)lo);
}

/* The claim latency growth of each Redis strategy of the bench's backlog
 * scaling, smallest to largest backlog, one clause each.  Returns how
 * many were measured at two backlogs, with their p50 ratios in r50s (at
 * most 32), in *faster those above 1.25x the ratio of the logarithms, and
 * the smallest and largest backlog. */
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
        if (lo == NULL || hi == lo || lo->claim_us_p50 <= 0 ||
            lo->claim_us_p99 <= 0)
            continue;
        double r50 = hi->claim_us_p50 / lo->claim_us_p50;
        *faster += r50 > 1.25 * log_ratio(hi->backlog, lo->backlog);
        r50s[n] = r50;
        *lo_n = *lo_n == 0 || lo->backlog < *lo_n ? lo->backlog : *lo_n;
        *hi_n = hi->backlog > *hi_n ? hi->backlog : *hi_n;
        TSAY(c05_growth, "%sname=%s p50_lo=%.0f p50_hi=%.0f x50=%.2f "
             "p99_lo=%.0f p99_hi=%.0f x99=%.2f", n++ ? "; " : "", name,
             lo->claim_us_p50, hi->claim_us_p50, r50, lo->claim_us_p99,
             hi->claim_us_p99, hi->claim_us_p99 / lo->claim_us_p99);
    }
    return n;
}

/* C05: a claim costs O(log N) in the pending tasks (bench backlog).  Every
 * strategy claims from the same sorted set, so the verdict follows the
 * median strategy: one run disturbed by other load on a shared machine
 * does not decide it alone. */
static dq_verdict rule_c05(const dq_claim_def *c, const dq_results *r,
                           dq_ev *ev)
{
    size_t faster, n, m;
    int64_t lo, hi;
    double r50s[32], med, lr;
    (void)c;
    if (!r->bench.present)
        return NONE(c05_none, "");
    TSAY(c05_intro, " ");
    if ((n = backlog_growth(ev, &r->bench, r50s, &faster, &lo, &hi)) == 0)
        return NONE(c05_no_strategy, "");
    lr = log_ratio(hi, lo);
    TSAY(c05_range, "lo=%" PRId64 " hi=%" PRId64 " x=%.2f  ", lo, hi, lr);
    m = n < 32 ? n : 32;
    for (size_t i = 1; i < m; i++)
        for (size_t j = i; j > 0 && r50s[j - 1] > r50s[j]; j--) {
            double t = r50s[j];
            r50s[j] = r50s[j - 1];
            r50s[j - 1] = t;
        }
    med = m % 2 ? r50s[m / 2] : (r50s[m / 2 - 1] + r50s[m / 2]) / 2;
    if (med > 1.25 * lr) {
        TSAY(c05_faster, "x=%.2f n=%zu of=%zu", med, faster, n);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (faster > 0)
        TSAY(c05_some_faster, "n=%zu of=%zu x=%.2f  ", faster, n, med);
    TSAY(c05_holds, "");
    if (hi < 1000000)
        TSAY(c05_only_to, "%s", "  ");
    return hi >= 1000000 ? DQ_VERDICT_HOLDS
                         : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C17's O(log n) part from the bench's heap backlog rows, into logn.  A
 * claim p50 below the clock's 1 us resolution (dq_now_us) at either end
 * cannot show growth: not resolvable, and it does not count toward the
 * verdict.  Resolvable and within 1.25x of log n's growth, it supports
 * the claim; beyond, it conditions it.  Returns 1 ok, -1 not, 0
 * undecided. */
static int c17_logn(dq_ev *ev, const dq_perf *p, char logn[768])
{
    const dq_perf_bl *lo = NULL, *hi = NULL;
    char enq[256] = "";
    size_t off = 0;
    if (p->present)
        dq_perf_backlog_range(p, "heap", &lo, &hi);
    if (lo == NULL || hi == lo) {
        DQ_TCAT(ev->t, logn, 768, &off, "claims.c17_logn_none", "");
        return 0;
    }
    double lr = log_ratio(hi->backlog, lo->backlog);
    double g = hi->claim_us_p50 / lo->claim_us_p50;
    if (lo->enqueue_us_mean > 0 && hi->enqueue_us_mean > 0)
        TBUF(enq, c17_enqueue, "  lo=%.2f hi=%.2f x=%.2f",
             lo->enqueue_us_mean, hi->enqueue_us_mean,
             hi->enqueue_us_mean / lo->enqueue_us_mean);
    if (lo->claim_us_p50 < 1.0 || hi->claim_us_p50 < 1.0) {
        DQ_TCAT(ev->t, logn, 768, &off, "claims.c17_unresolvable", "lo=%.1f "
                "lo_n=%" PRId64 " hi=%.1f hi_n=%" PRId64 " enq=%s",
                lo->claim_us_p50, lo->backlog, hi->claim_us_p50, hi->backlog,
                enq);
        return 0;
    }
    DQ_TCATP(ev->t, logn, 768, &off, g <= lr * 1.25, "claims.c17_logn",
             "claims.c17_logn_faster", "lo=%.1f lo_n=%" PRId64 " hi=%.1f "
             "hi_n=%" PRId64 " x=%.2f lr=%.2f enq=%s", lo->claim_us_p50,
             lo->backlog, hi->claim_us_p50, hi->backlog, g, lr, enq);
    return g <= lr * 1.25 ? 1 : -1;
}

/* The heap's consumer counts of 2+ with tasks, ascending, into cs. */
static size_t heap_counts(const dq_results *r, int *cs, size_t max)
{
    size_t ncs = 0, k;
    for (size_t i = 0; i < r->nexps; i++)
        for (size_t j = 0; j < r->exps[i].ntrials; j++) {
            const dq_trialrow *x = &r->exps[i].trials[j];
            if (strcmp(x->strategy, "heap") != 0 || x->consumers < 2 ||
                x->tasks == 0)
                continue;
            for (k = 0; k < ncs && cs[k] != x->consumers;)
                k++;
            if (k == ncs && ncs < max)
                cs[ncs++] = x->consumers;
        }
    for (size_t a = 1; a < ncs; a++)
        for (size_t b = a; b > 0 && cs[b - 1] > cs[b]; b--) {
            int t = cs[b];
            cs[b] = cs[b - 1];
            cs[b - 1] = t;
        }
    return ncs;
}

/* The heap's wake-ups per delivery at c consumers; -1: no delivery. */
static double heap_wakeups(const dq_results *r, int c)
{
    uint64_t wk = 0, dl = 0;
    for (size_t i = 0; i < r->nexps; i++)
        for (size_t j = 0; j < r->exps[i].ntrials; j++) {
            const dq_trialrow *x = &r->exps[i].trials[j];
            if (strcmp(x->strategy, "heap") == 0 && x->consumers == c &&
                x->tasks > 0)
                wk += x->wakeups, dl += x->deliveries;
        }
    return dl ? (double)wk / (double)dl : -1;
}

/* C17 (partly): the heap's waiting wakes about one thread per delivery.
 * A thundering herd wakes every waiting consumer per delivery (up to
 * consumers - 1); the rule calls it a herd at a consumer count when its
 * wake-ups per delivery reach half that count, and at least 2.  Each count
 * is held to its own threshold, and the text states both. */
static dq_verdict rule_c17(const dq_claim_def *c, const dq_results *r,
                           dq_ev *ev)
{
    tally t;
    char per[512] = "", verdict[400] = "", logn[768] = "", how[64] = "";
    char few[128] = "";
    size_t ncs = 0, o = 0;
    double worst = 0, worst_limit = 0, herd_ratio = 0, herd_limit = 0;
    int worst_c = 0, herd_c = 0, cs[64];
    (void)c;
    tally_of(r, "heap", &t);
    if (t.trials == 0 || t.deliveries == 0 || t.wakeups == 0) {
        DQ_TCATP(ev->t, how, sizeof how, &(size_t){0}, t.trials == 0,
                 "claims.c17_no_heap", "claims.c17_no_wakeups", "");
        return NONE(c17_none, "why=%s", how);
    }
    ncs = heap_counts(r, cs, 64);
    for (size_t k = 0; k < ncs; k++) {
        double ratio = heap_wakeups(r, cs[k]);
        double limit = (double)cs[k] / 2.0 > 2.0 ? (double)cs[k] / 2.0 : 2.0;
        if (ratio < 0)
            continue;
        if (ratio > worst)
            worst = ratio, worst_c = cs[k], worst_limit = limit;
        if (ratio >= limit && herd_c == 0)
            herd_c = cs[k], herd_ratio = ratio, herd_limit = limit;
        DQ_TCAT(ev->t, per, sizeof per, &o, "claims.c17_at", "%sratio=%.2f "
                "consumers=%d", o ? ", " : "", ratio, cs[k]);
    }
    if (herd_c > 0) {
        TBUF(verdict, c17_herd, "consumers=%d ratio=%.2f limit=%.1f", herd_c,
             herd_ratio, herd_limit);
    } else {
        if (worst <= 1.0)
            TBUF(how, c17_at_most_one, "");
        else
            DQ_TCATP(ev->t, how, sizeof how, &(size_t){0}, worst <= 1.5,
                     "claims.c17_about_one", "claims.c17_a_few", "");
        if (cs[ncs - 1] < 4)
            TBUF(few, c17_few, "");
        TBUF(verdict, c17_no_herd, "how=%s worst=%.2f consumers=%d "
             "limit=%.1f few=%s", how, worst, worst_c, worst_limit, few);
    }
    int logn_state = c17_logn(ev, &r->bench, logn);
    TSAY(c17, "per=%s exps=%s verdict=%s logn=%s", per, t.exps, verdict,
         logn);
    /* without a resolvable O(log n) measurement only the wake-up half is
     * decided: at best "holds with conditions" */
    return herd_c > 0 ? DQ_VERDICT_DOES_NOT_HOLD
           : logn_state > 0 ? DQ_VERDICT_HOLDS
                            : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* ---- Faults: the loss table --------------------------------------------- */

/* What one fault did to some strategies, over the loss table's columns
 * whose spec names the fault (and holds arg, when not NULL). */
typedef struct fault_sum {
    size_t cells;
    uint64_t enqueued, lost, redelivered;
    char lost_by[512];        /* "lua 2 of 200, naive 3 of 200" */
    char clean[512];          /* "list (0 of 200), ...": nothing lost */
} fault_sum;

/* Which cells: flags with all of need, and (strategy not NULL) only that
 * strategy's cells or all but its. */
typedef struct cell_filter {
    unsigned need;
    const char *strategy;
    bool only;
} cell_filter;

static void fault_total(const dq_loss_table *lt, const char *fault,
                        const char *arg, cell_filter f, fault_sum *s)
{
    size_t fl = strlen(fault);
    memset(s, 0, sizeof *s);
    for (size_t r = 0; r < lt->nrows; r++) {
        uint64_t enq = 0, lost = 0, n = 0;
        for (size_t c = 0; c < lt->nfaults; c++) {
            const dq_loss_cell *x = dq_loss_cell_at(lt, r, c);
            const char *spec = lt->faults[c];
            if (x == NULL || strncmp(spec, fault, fl) != 0 ||
                (spec[fl] != '\0' && spec[fl] != ':') ||
                (arg != NULL && strstr(spec + fl, arg) == NULL) ||
                (x->flags & f.need) != f.need || (f.strategy != NULL &&
                (strcmp(x->strategy, f.strategy) == 0) != f.only))
                continue;
            n++;
            enq += x->enqueued;
            lost += x->lost;
            s->redelivered += x->redelivered;
        }
        if (n == 0)
            continue;
        s->cells += n;
        s->enqueued += enq;
        s->lost += lost;
        char *list = lost > 0 ? s->lost_by : s->clean;
        size_t l = strlen(list);
        snprintf(list + l, sizeof s->clean - l, lost > 0 ? "%s%s %" PRIu64
                 " of %" PRIu64 : "%s%s (%" PRIu64 " of %" PRIu64 ")",
                 l ? ", " : "", lt->rows[r], lost, enq);
    }
}

/* The loss experiment's table (its name in *exp); NULL with the evidence
 * saying what the claim needs (text needs) when there is none. */
static const dq_loss_table *loss_table(dq_ev *ev, const dq_results *r,
                                       const dq_tuse *needs, const char **exp)
{
    const dq_rexp *e = dq_loss_experiment(r);
    char what[256] = "";
    if (e == NULL) {
        dq_tcat(ev->t, what, sizeof what, &(size_t){0}, needs, "");
        (void)NONE(loss_none, "needs=%s", what);
    }
    *exp = e ? e->name : "";
    return e ? e->loss : NULL;
}

/* C12: a consumer dying after the claim loses the task, unless leased. */
static dq_verdict rule_c12(const dq_claim_def *c, const dq_results *r,
                           dq_ev *ev)
{
    const char *exp;
    const dq_loss_table *lt =
        loss_table(ev, r, DQ_TUSE("claims.c12_needs", ""), &exp);
    fault_sum amo, lease;
    char points[160], clean[600] = "", by[600] = "";
    (void)c;
    if (lt == NULL)
        return DQ_VERDICT_NOT_MEASURED;
    fault_total(lt, "kill-consumer", NULL,
                (cell_filter){DQ_G_AT_MOST_ONCE, NULL, false}, &amo);
    fault_total(lt, "kill-consumer", NULL,
                (cell_filter){DQ_G_SURVIVES_CONSUMER_CRASH, NULL, false},
                &lease);
    dq_kill_points(ev->t, lt->faults, lt->nfaults, points, sizeof points);
    if (amo.cells == 0 || lease.cells == 0)
        return NONE(c12_none, "exp=%s", exp);
    if (points[0] == '\0')
        TBUF(points, c12_point, "");
    if (amo.lost_by[0] == '\0')
        TBUF(amo.lost_by, c12_none_lost, "");
    else if (amo.clean[0])
        TBUF(clean, c12_clean, " "), strcat(clean, amo.clean);
    if (lease.lost_by[0])
        snprintf(by, sizeof by, " (%s)", lease.lost_by);
    TSAY(c12, "points=%s exp=%s amo_lost=%" PRIu64 " amo_n=%" PRIu64
         " amo_by=%s amo_clean=%s lease_lost=%" PRIu64 " lease_n=%" PRIu64
         " lease_by=%s red=%" PRIu64 "  ", points, exp, amo.lost,
         amo.enqueued, amo.lost_by, clean, lease.lost, lease.enqueued, by,
         lease.redelivered);
    if (lease.lost > 0)
        TSAY(c12_lease_lost, "");
    else if (amo.lost == 0)
        TSAY(c12_no_amo_lost, "");
    else
        TSAY(c12_holds, "");
    return lease.lost > 0 ? DQ_VERDICT_DOES_NOT_HOLD
           : amo.lost == 0 ? DQ_VERDICT_HOLDS_WITH_CONDITIONS
                           : DQ_VERDICT_HOLDS;
}

/* C14: AOF everysec keeps delayed tasks across a crash, losing ~1 s.  For
 * the Redis strategies whose tasks wait in Redis data; expiry's wait on a
 * notification nobody hears during the restart (C18): apart. */
static dq_verdict rule_c14(const dq_claim_def *c, const dq_results *r,
                           dq_ev *ev)
{
    const char *exp;
    const dq_loss_table *lt =
        loss_table(ev, r, DQ_TUSE("claims.c14_needs", ""), &exp);
    const cell_filter others = {DQ_G_NEEDS_REDIS, "expiry", false};
    fault_sum no, every, always, ex;
    char none[64] = "";
    (void)c;
    if (lt == NULL)
        return DQ_VERDICT_NOT_MEASURED;
    fault_total(lt, "restart-redis", "off", others, &no);
    fault_total(lt, "restart-redis", "everysec", others, &every);
    fault_total(lt, "restart-redis", "always", others, &always);
    fault_total(lt, "restart-redis", "everysec",
                (cell_filter){DQ_G_NEEDS_REDIS, "expiry", true}, &ex);
    TBUF(none, c18_nobody, "");
    TSAY(c14_intro, "exp=%s", exp);
    if (no.cells)
        TSAY(c14_off, " lost=%" PRIu64 " n=%" PRIu64, no.lost, no.enqueued);
    if (every.cells)
        TSAY(c14_everysec, " lost=%" PRIu64 " n=%" PRIu64 " by=%s",
             every.lost, every.enqueued, every.lost_by[0] ? every.lost_by
             : none);
    if (always.cells)
        TSAY(c14_always, " lost=%" PRIu64 " n=%" PRIu64, always.lost,
             always.enqueued);
    if (ex.cells)
        TSAY(c14_expiry, " lost=%" PRIu64 " n=%" PRIu64, ex.lost,
             ex.enqueued);
    if (every.cells == 0) {
        TSAY(c14_no_everysec, "%s", " ");
        return DQ_VERDICT_NOT_MEASURED;
    }
    double fe = every.enqueued ? (double)every.lost / (double)every.enqueued
                               : 0;
    double fo = no.enqueued ? (double)no.lost / (double)no.enqueued : 1;
    if (every.lost == 0) {
        TSAY(c14_all_kept, "%s", " ");
        return DQ_VERDICT_HOLDS;
    }
    if (no.cells && fe < fo / 2) {
        TSAY(c14_most_kept, " fe=%.1f fo=%.1f", 100 * fe, 100 * fo);
        return DQ_VERDICT_HOLDS_WITH_CONDITIONS;
    }
    TSAY(c14_not, " fe=%.1f", 100 * fe);
    return DQ_VERDICT_DOES_NOT_HOLD;
}

/* C21: at-least-once consumers do get tasks twice under faults. */
static dq_verdict rule_c21(const dq_claim_def *c, const dq_results *r,
                           dq_ev *ev)
{
    const char *exp;
    const dq_loss_table *lt =
        loss_table(ev, r, DQ_TUSE("claims.c21_needs", ""), &exp);
    uint64_t red = 0, enq = 0, dup_amo = 0;
    size_t cells = 0, lb = 0, la = 0;
    char by[512] = "", amo_by[512] = "", list[600] = "";
    (void)c;
    if (lt == NULL)
        return DQ_VERDICT_NOT_MEASURED;
    for (size_t f = 0; f < lt->nfaults; f++)
        for (size_t row = 0; strcmp(lt->faults[f], "none") != 0 &&
                             row < lt->nrows; row++) {
            const dq_loss_cell *x = dq_loss_cell_at(lt, row, f);
            uint64_t rep = x ? x->duplicated + x->redelivered : 0;
            if (x != NULL && (x->flags & DQ_G_AT_LEAST_ONCE)) {
                cells++;
                red += x->redelivered;
                enq += x->enqueued;
                if (x->redelivered)
                    DQ_TCAT(ev->t, by, sizeof by, &lb, "claims.c21_item",
                            "%srow=%s fault=%s n=%" PRIu64, lb ? ", " : "",
                            lt->rows[row], lt->faults[f], x->redelivered);
            } else if (x != NULL && !(x->flags & DQ_G_DUPLICATES) && rep) {
                /* naive's repeats are its documented race (C01) */
                dup_amo += rep;
                DQ_TCAT(ev->t, amo_by, sizeof amo_by, &la,
                        "claims.c21_item", "%srow=%s fault=%s n=%" PRIu64,
                        la ? ", " : "", lt->rows[row], lt->faults[f], rep);
            }
        }
    if (cells == 0)
        return NONE(c21_none, "exp=%s", exp);
    if (by[0])
        snprintf(list, sizeof list, " (%s)", by);
    TSAY(c21, "exp=%s red=%" PRIu64 " n=%" PRIu64 " by=%s", exp, red, enq,
         list);
    if (dup_amo > 0)
        TSAY(c21_amo, "  by=%s", amo_by);
    if (red > 0 || dup_amo > 0)
        TSAY(c21_idempotent, "%s", "  ");
    else
        TSAY(c21_no_repeat, "%s", "  ");
    return red > 0 || dup_amo > 0 ? DQ_VERDICT_HOLDS
                                  : DQ_VERDICT_NOT_MEASURED;
}

/* ---- C18: expiry events ------------------------------------------------- */

/* C18's outage part: expiry's losses under a subscriber outage beside the
 * other strategies'.  -1 when not measured, else expiry's lost count. */
static int64_t c18_outage(dq_ev *ev, const dq_results *r)
{
    const dq_rexp *e = dq_loss_experiment(r);
    char none[64] = "";
    fault_sum all, ex;
    if (e == NULL)
        return -1;
    fault_total(e->loss, "subscriber-outage", NULL,
                (cell_filter){0, NULL, false}, &all);
    fault_total(e->loss, "subscriber-outage", NULL,
                (cell_filter){0, "expiry", true}, &ex);
    if (ex.cells == 0)
        return -1;
    TBUF(none, c18_nobody, "");
    TSAY(c18_outage, "  exp=%s lost=%" PRIu64 " n=%" PRIu64 " by=%s "
         "clean=%s", e->name, ex.lost, ex.enqueued, all.lost_by[0]
         ? all.lost_by : none, all.clean[0] ? all.clean : none);
    return (int64_t)ex.lost;
}

static double delivered_frac(const dq_rgroup *g)
{
    return g->enqueued_sum ? (double)g->delivered_sum /
                                 (double)g->enqueued_sum : 0;
}

/* C18's lateness part: expiry's delivered fraction (and its p50 where
 * every task came) at each backlog gs[0..n-1], sorted.  Where most tasks
 * were not delivered, the p50 of those that were is survivor biased (the
 * keys the expire cycle reached first), so it is neither quoted as a
 * trend nor used.  Returns whether lateness grew with the keys. */
static bool c18_backlog(dq_ev *ev, const dq_rexp *bl, const dq_rgroup **gs,
                        size_t n)
{
    const dq_rgroup *a = gs[0], *b = gs[n - 1];
    double fa = delivered_frac(a), fb = delivered_frac(b);
    bool falls = fb < fa * 0.9;
    bool later = a->delivered_sum == a->enqueued_sum &&
                 b->delivered_sum == b->enqueued_sum &&
                 b->p50_median > 2 * a->p50_median;
    char bias[512] = "";
    TSAY(c18_stream, "delay=%s grace=%s", dq_rexp_meta(bl, "delay_ms"),
         dq_rexp_meta(bl, "grace_ms"));
    for (size_t i = 0; i < n; i++) {
        TSAY(c18_at, "%s n=%" PRId64 " pct=%.1f", i ? ";" : "",
             gs[i]->backlog, 100 * delivered_frac(gs[i]));
        if (gs[i]->delivered_sum == gs[i]->enqueued_sum)
            TSAY(c18_p50, "ms=%.0f", gs[i]->p50_median);
    }
    TSAY(c18_where, " exp=%s ", bl->name);
    if (falls && fb < 0.5)
        TBUF(bias, c18_bias, "%s", "  ");
    if (falls)
        TSAY(c18_falls, "fa=%.1f a=%" PRId64 " fb=%.1f b=%" PRId64 " bias=%s",
             100 * fa, a->backlog, 100 * fb, b->backlog, bias);
    else if (later)
        TSAY(c18_later, "a=%.0f b=%.0f", a->p50_median, b->p50_median);
    else
        TSAY(c18_neither, "");
    return falls || later;
}

/* C18: expiry events come later as keys pile up (expiry-scale), and are
 * lost while no subscriber listens (loss, subscriber-outage). */
static dq_verdict rule_c18(const dq_claim_def *c, const dq_results *r,
                           dq_ev *ev)
{
    const dq_rexp *bl = dq_results_with_plot(r, "backlog-lateness");
    const dq_rgroup *gs[32], *t;
    size_t n = 0;
    bool grows = false;
    (void)c;
    for (size_t i = 0; bl != NULL && i < bl->ngroups && n < 32; i++)
        if (strcmp(bl->groups[i].strategy, "expiry") == 0)
            gs[n++] = &bl->groups[i];
    for (size_t i = 1; i < n; i++)   /* by backlog */
        for (size_t j = i; j > 0 && gs[j - 1]->backlog > gs[j]->backlog; j--)
            t = gs[j], gs[j] = gs[j - 1], gs[j - 1] = t;
    if (n < 2)
        TSAY(c18_backlog_none, "");
    else
        grows = c18_backlog(ev, bl, gs, n);
    int64_t ol = c18_outage(ev, r);
    if (ol < 0 && n < 2) {
        TSAY(c18_loss_none, "%s", "  ");
        return DQ_VERDICT_NOT_MEASURED;
    }
    if (ol < 0)
        TSAY(c18_loss_unmeasured, "%s", "  ");
    return grows && ol > 0 ? DQ_VERDICT_HOLDS
           : grows || ol > 0 ? DQ_VERDICT_HOLDS_WITH_CONDITIONS
                             : DQ_VERDICT_DOES_NOT_HOLD;
}

/* ---- The table ---------------------------------------------------------- */

#define TALLY(s, fn) &(const struct dq_claim_args){.strategy = s, .say = fn}
#define PROBES(fn, ...)                                                      \
    &(const struct dq_claim_args){.judge = fn, .reads = {__VA_ARGS__}}
#define READ(probe, ...) {probe, {__VA_ARGS__, NULL}}
/* A row: the id, its texts in claims.md ("c01_text", "c01_decide"). */
#define CLAIM(n, ...) {"C" #n, &claim_texts[2 * (1##n - 101)],              \
                       &claim_texts[2 * (1##n - 101) + 1], __VA_ARGS__}
#define CLAIM_TEXTS(n)                                                       \
    {"claims.c" #n "_text", ""}, {"claims.c" #n "_decide", ""}
static const dq_tuse claim_texts[] DQ_TUSES = {
    CLAIM_TEXTS(01), CLAIM_TEXTS(02), CLAIM_TEXTS(03), CLAIM_TEXTS(04),
    CLAIM_TEXTS(05), CLAIM_TEXTS(06), CLAIM_TEXTS(07), CLAIM_TEXTS(08),
    CLAIM_TEXTS(09), CLAIM_TEXTS(10), CLAIM_TEXTS(11), CLAIM_TEXTS(12),
    CLAIM_TEXTS(13), CLAIM_TEXTS(14), CLAIM_TEXTS(15), CLAIM_TEXTS(16),
    CLAIM_TEXTS(17), CLAIM_TEXTS(18), CLAIM_TEXTS(19), CLAIM_TEXTS(20),
    CLAIM_TEXTS(21),
};

const dq_claim_def dq_claims[] = {
    CLAIM(01, rule_tally, TALLY("naive", say_c01)),
    CLAIM(02, rule_tally, TALLY("lua", say_c02)),
    CLAIM(03, rule_tally, TALLY("naive-checked", say_c03)),
    CLAIM(04, rule_c04, NULL),
    CLAIM(05, rule_c05, NULL),
    CLAIM(06, rule_probes, PROBES(judge_c06,
                                  READ("ms-epoch", "exact", "n", "lo", "hi"),
                                  READ("us-epoch", "exact", "n"),
                                  READ("ns-epoch", "exact", "n", "max_err"),
                                  READ("first-inexact", "first_inexact"),
                                  READ("ms-x4096", "first_inexact_ms"))),
    CLAIM(07, rule_probes, PROBES(judge_c07, READ("zpopmin-atomic",
                                  "duplicates", "missing", "popped", "n",
                                  "threads"),
                                  READ("pop-then-die", "lost", "n"))),
    CLAIM(08, rule_probes, PROBES(judge_c08, READ("payload-member",
                                  "members", "due_first", "delivered",
                                  "tasks"),
                                  READ("id-member", "members", "due_first",
                                       "delivered", "tasks"))),
    CLAIM(09, rule_probes, PROBES(judge_c09, READ("ttl-shorter", "lost", "n",
                                                  "ttl_ms", "delay_ms"),
                                  READ("ttl-longer", "lost", "n", "ttl_ms",
                                       "delay_ms"),
                                  READ("leftovers", "leftovers", "before",
                                       "n"))),
    CLAIM(10, rule_c10, NULL),
    CLAIM(11, rule_c11, NULL),
    CLAIM(12, rule_c12, NULL),
    CLAIM(13, rule_tally, TALLY("naive", say_c13)),
    CLAIM(14, rule_c14, NULL),
    CLAIM(15, NULL, NULL),
    CLAIM(16, rule_c16, NULL),
    CLAIM(17, rule_c17, NULL),
    CLAIM(18, rule_c18, NULL),
    CLAIM(19, NULL, NULL),
    CLAIM(20, rule_probes, PROBES(judge_c20, READ("zadd-maxlen", "rejected",
                                                  "zcard"),
                                  READ("xadd-maxlen", "xlen", "added",
                                       "maxlen"))),
    CLAIM(21, rule_c21, NULL),
    {NULL, NULL, NULL, NULL, NULL},
};

dq_verdict dq_claim_decide(const dq_claim_def *c, const dq_results *r,
                           dq_texts *t, char *buf, size_t len)
{
    char decide[512] = "";
    dq_ev e = {t, buf, len, 0}, *ev = &e;
    buf[0] = '\0';
    if (c->rule != NULL)
        return c->rule(c, r, ev);
    dq_tcat(t, decide, sizeof decide, &(size_t){0}, c->decide, "");
    TSAY(unmeasured, "decide=%s", decide);
    return DQ_VERDICT_NOT_MEASURED;
}
