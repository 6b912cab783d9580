/* claims.c -- the claims table and the rules of two shapes: duplicate
 * tallies and probe readings, each claim's parameters a row of
 * text/claim_rows.md.
 *
 * CLAIMS.md (the lab's brief) lists what tutorials and interview guides say
 * about delay queues on Redis.  text/claims.md restates each claim in
 * dqlab's own words under the same id, with what would decide it; where an
 * experiment measures it, a rule reads the loaded results (results.h)
 * and returns one of five verdicts (claims.h) with the numbers behind it,
 * its sample and its interval, in the sentences of text/claims.md.  Rules
 * never hard-code a figure: every number in an evidence text is computed
 * from the results, and a comparison with a bound is made with the
 * tolerance the text states.  A rule looks for the data it needs in any
 * experiment (not one by name), so a later experiment that measures the
 * same thing adds evidence without touching the rule.
 *
 * Here: the duplicate tally of one strategy over the trials with 2+
 * consumers and no fault (C01, C02, C03, C13) and the probe readings
 * (C06-C09, C20, C22, C27, C28).  claims_time.c holds lateness, cost and
 * growth (C04, C05, C10, C11, C16, C17); claims_fault.c what faults did
 * and the tutorial recipes run as written (C07's experiment, C12, C14,
 * C15, C18, C21, C24, C25, C26).
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "../harness/faults.h"  /* dq_fault_find, dq_fault_parse */
#include "../strategies/dq.h"
#include "claims_int.h"

const char *dq_verdict_name(dq_verdict v)
{
    static const char *const name[] = {
        [DQ_VERDICT_NOT_MEASURED] = "not yet measured",
        [DQ_VERDICT_PARTLY_MEASURED] = "partly measured",
        [DQ_VERDICT_HOLDS] = "holds",
        [DQ_VERDICT_HOLDS_WITHIN] = "holds within stated limits",
        [DQ_VERDICT_DOES_NOT_HOLD] = "does not hold as stated",
    };
    return (unsigned)v <= DQ_VERDICT_DOES_NOT_HOLD ? name[v] : name[0];
}

/* ---- Duplicate tallies: C01, C02, C03, C13 ------------------------------ */

/* What the trials of one strategy with 2+ consumers add up to, over every
 * experiment without injected faults; per experiment the duplicates and
 * deliveries (an experiment is one load: its arrival rate). */
struct dq_claims_tally {
    const char *strategy;
    size_t trials, dup_trials, nexp;
    uint64_t duplicates, dup_max, deliveries, tasks;
    uint64_t lost_races, round_trips, delivered;
    int max_consumers;
    char exps[256];       /* experiment names, comma-separated */
    char fig[128];        /* a duplicates figure that shows them, or "" */
    struct { const char *name; uint64_t dup, deliveries; double rate; }
        by[8];
};
typedef dq_claims_tally tally;

/* Adds the trials of strategy in e to t; whether there were any. */
static bool tally_exp(const dq_rexp *e, const char *strategy, tally *t)
{
    size_t k = t->nexp;
    bool used = false;
    for (size_t j = 0; j < e->ntrials; j++) {
        const dq_trialrow *x = &e->trials[j];
        if (strcmp(x->strategy, strategy) != 0 || x->consumers < 2 ||
            x->tasks == 0)
            continue;  /* idle trials (tasks = 0) deliver nothing */
        used = true;
        t->trials++;
        t->dup_trials += x->duplicates > 0;
        t->duplicates += x->duplicates;
        t->dup_max = x->duplicates > t->dup_max ? x->duplicates : t->dup_max;
        t->deliveries += x->deliveries;
        t->tasks += x->enqueued;
        t->lost_races += x->lost_races;
        t->round_trips += x->round_trips;
        t->delivered += x->delivered;
        t->max_consumers = x->consumers > t->max_consumers ? x->consumers
                                                          : t->max_consumers;
        if (k < 8) {
            t->by[k].name = e->name;
            t->by[k].dup += x->duplicates;
            t->by[k].deliveries += x->deliveries;
            t->by[k].rate = dq_offered_rate(x);
        }
    }
    return used;
}

static void tally_of(const dq_results *r, const char *strategy, tally *t)
{
    memset(t, 0, sizeof *t);
    t->strategy = strategy;
    for (size_t i = 0; i < r->nexps; i++) {
        const dq_rexp *e = &r->exps[i];
        if (dq_loss_is(e) || !tally_exp(e, strategy, t))
            continue;  /* injected faults: the loss rules judge those */
        t->nexp++;
        size_t l = strlen(t->exps);
        snprintf(t->exps + l, sizeof t->exps - l, "%s%s", l ? ", " : "",
                 e->name);
        if (t->fig[0] == '\0' && dq_rexp_has_plot(e, "duplicates"))
            snprintf(t->fig, sizeof t->fig, "%s-duplicates", e->name);
    }
}

/* Sample and interval of a tally: trials, tasks, deliveries; duplicates
 * among the deliveries, per experiment when there are several. */
static void tally_sample(dq_ev *ev, const tally *t)
{
    const char *s = t->strategy;
    SAMPLE(tally_sample, "strategy=%s trials=%zu max_c=%d tasks=%" PRIu64
           " deliveries=%" PRIu64 " exps=%s", s, t->trials, t->max_consumers,
           t->tasks, t->deliveries, t->exps);
    WILSON(ev->res->interval, iv_dup, t->duplicates, t->deliveries);
    for (size_t k = 0; t->nexp > 1 && k < t->nexp && k < 8; k++) {
        char lo[16], hi[16];
        dq_claims_wilson(t->by[k].dup, t->by[k].deliveries, lo, hi);
        IVAL(iv_dup_at, "; exp=%s rate=%.0f k=%" PRIu64 " n=%" PRIu64
             " lo=%s hi=%s", t->by[k].name, t->by[k].rate, t->by[k].dup,
             t->by[k].deliveries, lo, hi);
    }
    if (t->fig[0])
        FIGURE("fig-%s", t->fig);
}

/* "<strategy> delivered N duplicate deliveries in a of b trials with 2 to
 * c consumers" into b. */
static void dups_seen(dq_ev *ev, const tally *t, char *b, size_t len)
{
    DQ_TSET(ev->t, b, len, "claims.dups_seen", "strategy=%s n=%" PRIu64
            " trials=%zu of=%zu max_c=%d", t->strategy, t->duplicates,
            t->dup_trials, t->trials, t->max_consumers);
}

/* "<strategy> delivered no duplicate in n trials with 2 to c consumers
 * [(d deliveries)]<where>" into b. */
static void dups_none(dq_ev *ev, const tally *t, bool deliveries,
                      const char *w, char *b, size_t len)
{
    size_t off = 0;
    DQ_TCAT(ev->t, b, len, &off, "claims.dups_none", "strategy=%s "
            "trials=%zu s=%s max_c=%d", t->strategy, t->trials,
            dq_s(t->trials), t->max_consumers);
    if (deliveries)
        DQ_TCAT(ev->t, b, len, &off, "claims.dups_deliveries", " n=%"
                PRIu64, t->deliveries);
    dq_append(b, len, &off, "%s", w);
}

/* A claim of no duplicates refuted: how many, in which trials. */
static dq_verdict dups_refute(dq_ev *ev, const tally *t, const char *w)
{
    char b[1024];
    dups_seen(ev, t, b, sizeof b);
    SAY("%s%s.", b, w);
    return DQ_VERDICT_DOES_NOT_HOLD;
}

/* C01: naive (ZRANGEBYSCORE then ZREM) with 2+ consumers duplicates. */
static dq_verdict say_c01(dq_ev *ev, const tally *t, const char *w)
{
    char b[1024];
    if (t->duplicates > 0) {
        dups_seen(ev, t, b, sizeof b);
        TSAY(c01_holds, "seen=%s max=%" PRIu64 " where=%s", b, t->dup_max, w);
        return DQ_VERDICT_HOLDS;
    }
    dups_none(ev, t, false, w, b, sizeof b);
    TSAY(c01_not, "none=%s", b);
    return DQ_VERDICT_NOT_MEASURED;
}

/* C02: a Lua claim script does not duplicate, however many consumers. */
static dq_verdict say_c02(dq_ev *ev, const tally *t, const char *w)
{
    char b[1024], few[128] = "";
    if (t->duplicates > 0)
        return dups_refute(ev, t, w);
    dups_none(ev, t, true, w, b, sizeof b);
    if (t->max_consumers < 4)
        TBUF(few, c02_few, "  max_c=%d", t->max_consumers);
    TSAY(c02_holds, "none=%s few=%s", b, few);
    return t->max_consumers >= 4 ? DQ_VERDICT_HOLDS : DQ_VERDICT_HOLDS_WITHIN;
}

/* C03: ZREM's reply as the claim: no duplicates, lost races cost. */
static dq_verdict say_c03(dq_ev *ev, const tally *t, const char *w)
{
    char b[1024];
    double d = (double)t->delivered;
    if (t->duplicates > 0)
        return dups_refute(ev, t, w);
    dups_none(ev, t, true, w, b, sizeof b);
    if (t->lost_races == 0) {
        TSAY(c03_no_race, "none=%s", b);
        return DQ_VERDICT_PARTLY_MEASURED;
    }
    TSAY(c03_holds, "none=%s races=%" PRIu64 " per=%.3f rt=%.2f", b,
         t->lost_races, d ? (double)t->lost_races / d : 0.0,
         d ? (double)t->round_trips / d : 0.0);
    WILSON(ev->res->interval, iv_races, t->lost_races, t->delivered);
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
    TSAY(c13_none, "trials=%zu s=%s where=%s", t->trials, dq_s(t->trials), w);
    return DQ_VERDICT_NOT_MEASURED;
}

/* The duplicate tally rule: the strategy of the claim's row of
 * claim_rows.md (tallies) over the trials with 2+ consumers, worded and
 * judged by args->say. */
static dq_verdict rule_tally(const dq_claim_def *c, const dq_results *r,
                             dq_ev *ev)
{
    tally t;
    dq_crow row;
    char w[512] = "";
    if (dq_claim_rows(ev, DQ_ROWS("tallies"), c->id, &row, 1) < 0)
        return DQ_VERDICT_NOT_MEASURED;
    tally_of(r, row.cell[1], &t);
    if (t.trials == 0)
        return NONE(tally_none, "strategy=%s", row.cell[1]);
    TBUF(w, tally_where, " exps=%s", t.exps);
    tally_sample(ev, &t);
    return c->args->say(ev, &t, w);
}

/* ---- Probe readings: C06-C09, C20, C22, C27, C28 -----------------------
 * Claims about Redis itself; one real interaction each decides them
 * (`dqlab probes`).  The rule reads the keys the claim's rows of
 * claim_rows.md (probes) name from the verdict_input column of
 * probes.csv, then the claim's judge decides. */

/* The words of s, blank-separated. */
static size_t words(const char *s)
{
    size_t n = 0;
    for (s += strspn(s, " "); *s; s += strspn(s, " ")) {
        n++;
        s += strcspn(s, " ");
    }
    return n;
}

/* Whether a claim's n rows rd of the probes table (id's, n > 0) have the
 * shape a->judge reads by position: one row per nonzero a->keys[k], in
 * order, with that many keys.  false with why in what (len bytes) and
 * the line to name in *line. */
static bool probe_shape_ok(const struct dq_claim_args *a, const char *id,
                           const dq_crow *rd, int n, int *line, char *what,
                           size_t len)
{
    int want = 0;
    char shape[64] = "";
    for (int k = 0; k < DQ_PROBE_ROWS && a->keys[k]; k++, want++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%u",
                 k ? " " : "", a->keys[k]);
    if (n != want) {
        *line = rd[n > want ? want : 0].line;
        snprintf(what, len, "claim_rows.probes has %d row%s %s; its rule "
                 "reads %d, in order, with %s keys", n, dq_s((size_t)n), id,
                 want, shape);
        return false;
    }
    for (int k = 0; k < n; k++)
        if (words(rd[k].cell[2]) != a->keys[k]) {
            *line = rd[k].line;
            snprintf(what, len, "probes row %s %.64s has %zu key%s; its "
                     "rule reads %u, in order", id, rd[k].cell[1],
                     words(rd[k].cell[2]), dq_s(words(rd[k].cell[2])),
                     a->keys[k]);
            return false;
        }
    return true;
}

static dq_verdict rule_probes(const dq_claim_def *c, const dq_results *r,
                              dq_ev *ev)
{
    const dq_probes *p = &r->probes;
    int64_t v[DQ_PROBE_ROWS][DQ_PROBE_KEYS] = {{0}};
    dq_crow rd[DQ_PROBE_ROWS + 1];
    char what[256];
    int line;
    int n = dq_claim_rows(ev, DQ_ROWS("probes"), c->id, rd,
                          DQ_PROBE_ROWS + 1);
    if (n < 0)
        return DQ_VERDICT_NOT_MEASURED;
    if (!probe_shape_ok(c->args, c->id, rd, n, &line, what, sizeof what)) {
        dq_row_bad(ev, DQ_ROWS("probes"), line, what);   /* as at load */
        return DQ_VERDICT_NOT_MEASURED;
    }
    if (!p->present)
        return NONE(probes_none, "root=%s", r->root);
    for (int k = 0; k < n; k++) {
        const dq_probe_row *row = dq_probes_find(p, c->id, rd[k].cell[1]);
        char *save = NULL, *key = strtok_r(rd[k].cell[2], " ", &save);
        for (size_t i = 0; key != NULL && i < 12;
             key = strtok_r(NULL, " ", &save))
            if (!dq_probe_int(row, key, &v[k][i++]))
                return NONE(probes_lacks, "dir=%s id=%s probe=%s key=%s",
                            p->dir, c->id, rd[k].cell[1], key);
    }
    FIGURE("probes");
    dq_verdict vd = c->args->judge(ev, r, v);
    if (vd != DQ_VERDICT_NOT_MEASURED && ev->res->sample[0] == '\0') {
        SAMPLE(probe_one, "");   /* one interaction, an exact count */
        IVAL(iv_exact_count, "");
    }
    return vd;
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
static dq_verdict judge_c06(dq_ev *ev, const dq_results *r,
                            int64_t v[5][12])
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
    TSAY(c06_verdict, "  packed=%s", pk);
    SAMPLE(c06_sample, "n=%" PRId64, ms[1]);
    WILSON(ev->res->interval, iv_exact, ms[0], ms[1]);
    return holds ? DQ_VERDICT_HOLDS : DQ_VERDICT_DOES_NOT_HOLD;
}

/* C08: [members, due_first, delivered, tasks] of both layouts. */
static dq_verdict judge_c08(dq_ev *ev, const dq_results *r,
                            int64_t v[5][12])
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
static dq_verdict judge_c09(dq_ev *ev, const dq_results *r,
                            int64_t v[5][12])
{
    const int64_t *s = v[0], *l = v[1], *left = v[2];
    TSAY(c09, "redis=%s s_ttl=%" PRId64 " s_delay=%" PRId64 " s_lost=%"
         PRId64 " s_n=%" PRId64 " l_ttl=%" PRId64 " l_lost=%" PRId64 " l_n=%"
         PRId64 " left_n=%" PRId64 " left_before=%" PRId64 " left=%" PRId64,
         probe_redis(r), s[2], s[3], s[0], s[1], l[2], l[0], l[1], left[2],
         left[1], left[0]);
    SAMPLE(c09_sample, "n=%" PRId64, s[1]);
    WILSON(ev->res->interval, iv_lost_short, s[0], s[1]);
    WILSON(ev->res->interval, iv_lost_long, l[0], l[1]);
    return s[0] > 0 && l[0] == 0 && left[0] == 0 ? DQ_VERDICT_HOLDS
                                                 : DQ_VERDICT_DOES_NOT_HOLD;
}

/* C20: zadd-maxlen [rejected, zcard], xadd-maxlen [xlen, added, maxlen]. */
static dq_verdict judge_c20(dq_ev *ev, const dq_results *r,
                            int64_t v[5][12])
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

/* C07: atomic [duplicates, missing, popped, n, threads], pop-then-die
 * [lost, n]; then the recipe as the tutorials write it (zpopmin
 * due_check=0) in an experiment, counted early (claims_fault.c). */
static dq_verdict judge_c07(dq_ev *ev, const dq_results *r,
                            int64_t v[5][12])
{
    static const dq_claim_def def = {.id = "C07"};
    const int64_t *a = v[0], *d = v[1];
    TSAY(c07, "redis=%s threads=%" PRId64 " members=%" PRId64 " pops=%"
         PRId64 " dups=%" PRId64 " missed=%" PRId64 " lost=%" PRId64 " n=%"
         PRId64 "  ", probe_redis(r), a[4], a[3], a[2], a[0], a[1], d[0],
         d[1]);
    SAMPLE(c07_sample, "threads=%" PRId64 " members=%" PRId64, a[4], a[3]);
    dq_verdict rv = dq_rule_recipe(&def, r, ev);   /* its sample too */
    if (a[0] > 0 || d[0] > 0 || rv == DQ_VERDICT_DOES_NOT_HOLD) {
        TSAY(c07_not, "  ");
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    TSAY(c07_unrefuted, "  ");
    return DQ_VERDICT_PARTLY_MEASURED;
}

/* C22: future-id [readable_xread, readable_xreadgroup, ahead_ms],
 * ack-reclaim [reclaimed, acked]. */
static dq_verdict judge_c22(dq_ev *ev, const dq_results *r,
                            int64_t v[5][12])
{
    const int64_t *f = v[0], *a = v[1];
    TSAY(c22, "redis=%s xread=%" PRId64 " xgroup=%" PRId64 " ahead=%" PRId64
         " reclaimed=%" PRId64 " acked=%" PRId64, probe_redis(r), f[0], f[1],
         f[2], a[0], a[1]);
    /* an entry due a minute ahead read at once: no delay of its own */
    return f[0] == 1 || f[1] == 1 ? DQ_VERDICT_DOES_NOT_HOLD
                                  : DQ_VERDICT_HOLDS;
}

/* The smallest and largest per-run value of each setting in the C27
 * probe's observed text after label ("off 1/2/3, on 4/5/6", as
 * harness/probes_more.c prints them) into lo[0..1], hi[0..1] (off, on);
 * false when the text holds no such list. */
static bool c27_runs(const char *obs, const char *label, double lo[2],
                     double hi[2])
{
    const char *p = obs ? strstr(obs, label) : NULL;
    static const char *const set[2] = {"off ", "on "};
    for (int k = 0; k < 2; k++) {
        size_t n = 0;
        p = p ? strstr(p, set[k]) : NULL;
        if (p == NULL)
            return false;
        p += strlen(set[k]);
        for (char *end; ; p = end + 1) {
            double v = strtod(p, &end);
            if (end == p)
                break;
            lo[k] = n == 0 || v < lo[k] ? v : lo[k];
            hi[k] = n++ == 0 || v > hi[k] ? v : hi[k];
            if (*end != '/') {
                p = end;
                break;
            }
        }
        if (n == 0)
            return false;
    }
    return true;
}

/* C27's spread: each setting's range over its runs, of the server CPU per
 * 1,000 keys and the write rate, into the interval (with the tolerance),
 * and whether the CPU ranges overlap said in the evidence; the medians
 * alone when the probe's text holds no per-run values. */
static void c27_spread(dq_ev *ev, const dq_results *r, int64_t repeats)
{
    const dq_probe_row *row = dq_probes_find(&r->probes, "C27",
                                             "ttl-keys-notify");
    double cl[2], ch[2], wl[2], wh[2];
    if (row == NULL || !c27_runs(row->observed, "CPU us per 1,000 keys per "
                                 "run:", cl, ch) ||
        !c27_runs(row->observed, "writes/s per run:", wl, wh)) {
        IVAL(iv_c27, "repeats=%" PRId64, repeats);
        return;
    }
    IVAL(iv_c27_runs, "repeats=%" PRId64 " coff=%.0f-%.0f con=%.0f-%.0f "
         "woff=%.0f-%.0f won=%.0f-%.0f", repeats, cl[0], ch[0], cl[1], ch[1],
         wl[0], wh[0], wl[1], wh[1]);
    TSAY(c27_runs, "  repeats=%" PRId64 " coff=%.0f-%.0f con=%.0f-%.0f "
         "overlap=%s", repeats, cl[0], ch[0], cl[1], ch[1],
         cl[1] <= ch[0] && cl[0] <= ch[1] ? "" : " do not");
}

/* C27: ttl-keys-notify [measured, repeats, off_keys_per_s, on_keys_per_s,
 * off_cpu, on_cpu, rate_ratio_pm, cpu_ratio_pm, on_events].  A cost is a
 * CPU per key or a write rate that moved by more than the stated
 * tolerance (10%) between the settings. */
static dq_verdict judge_c27(dq_ev *ev, const dq_results *r,
                            int64_t v[5][12])
{
    const int64_t *x = v[0];
    if (x[0] == 0)
        return NONE(c27_unmeasured, "");
    TSAY(c27, "redis=%s repeats=%" PRId64 " off_rate=%" PRId64 " on_rate=%"
         PRId64 " off_cpu=%" PRId64 " on_cpu=%" PRId64 " rate=%.2f cpu=%.2f "
         "events=%" PRId64, probe_redis(r), x[1], x[2], x[3], x[4], x[5],
         (double)x[6] / 1000.0, (double)x[7] / 1000.0, x[8]);
    SAMPLE(c27_sample, "repeats=%" PRId64, x[1]);
    c27_spread(ev, r, x[1]);
    /* The medians beyond the tolerance either way decide; inside it the
     * probe cannot tell a small cost from its run-to-run noise. */
    bool cost = x[7] > 1100 || x[6] < 900;
    bool gain = x[7] < 900 || x[6] > 1100;
    TSAY(c27_verdict, "  cost=%s", cost ? "" : " not");
    if (!cost && !gain)
        TSAY(c27_within, "  ");
    return cost ? DQ_VERDICT_HOLDS : gain ? DQ_VERDICT_DOES_NOT_HOLD
                                          : DQ_VERDICT_PARTLY_MEASURED;
}

/* C28: list-vs-zset [list_late_b_us, zset_late_b_us, list_b_first,
 * zset_b_first, hol_ms].  The List made the task due first wait behind
 * the other when its lateness reached half the head-of-line gap. */
static dq_verdict judge_c28(dq_ev *ev, const dq_results *r,
                            int64_t v[5][12])
{
    const int64_t *x = v[0];
    bool hol = x[0] >= x[4] * 500 && !x[2];
    TSAY(c28, "redis=%s list_b=%.1f zset_b=%.1f hol=%" PRId64 " lfirst=%s "
         "zfirst=%s", probe_redis(r), (double)x[0] / 1000.0,
         (double)x[1] / 1000.0, x[4], x[2] ? "" : " not",
         x[3] ? "" : " not");
    /* a timing of one run, not a count: no interval, but a margin */
    SAMPLE(c28_sample, "");
    IVAL(iv_c28, "late=%.1f half=%.0f", (double)x[0] / 1000.0,
         (double)x[4] / 2.0);
    return hol && x[3] ? DQ_VERDICT_HOLDS : DQ_VERDICT_DOES_NOT_HOLD;
}

/* ---- The table ---------------------------------------------------------- */

#define TALLY(fn) &(const struct dq_claim_args){.say = fn}
/* A probes judge and the keys it reads of each of its rows, in order. */
#define PROBES(fn, ...)                                                      \
    &(const struct dq_claim_args){.judge = fn, .keys = {__VA_ARGS__}}
/* C07's judge reads its recipes row too (dq_rule_recipe). */
#define PROBES_RECIPE(fn, ...)                                               \
    &(const struct dq_claim_args){.judge = fn, .keys = {__VA_ARGS__},        \
                                  .recipe = true}
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
    CLAIM_TEXTS(21), CLAIM_TEXTS(22), CLAIM_TEXTS(23), CLAIM_TEXTS(24),
    CLAIM_TEXTS(25), CLAIM_TEXTS(26), CLAIM_TEXTS(27), CLAIM_TEXTS(28),
};

const dq_claim_def dq_claims[] = {
    CLAIM(01, rule_tally, TALLY(say_c01)),
    CLAIM(02, rule_tally, TALLY(say_c02)),
    CLAIM(03, rule_tally, TALLY(say_c03)),
    CLAIM(04, dq_rule_c04, NULL),
    CLAIM(05, dq_rule_c05, NULL),
    CLAIM(06, rule_probes, PROBES(judge_c06, 4, 2, 3, 1, 1)),
    CLAIM(07, rule_probes, PROBES_RECIPE(judge_c07, 5, 2)),
    CLAIM(08, rule_probes, PROBES(judge_c08, 4, 4)),
    CLAIM(09, rule_probes, PROBES(judge_c09, 4, 4, 3)),
    CLAIM(10, dq_rule_c10, NULL),
    CLAIM(11, dq_rule_c11, NULL),
    CLAIM(12, dq_rule_c12, NULL),
    CLAIM(13, rule_tally, TALLY(say_c13)),
    CLAIM(14, dq_rule_c14, NULL),
    CLAIM(15, dq_rule_c15, NULL),
    CLAIM(16, dq_rule_c16, NULL),
    CLAIM(17, dq_rule_c17, NULL),
    CLAIM(18, dq_rule_c18, NULL),
    CLAIM(19, NULL, NULL),
    CLAIM(20, rule_probes, PROBES(judge_c20, 2, 3)),
    CLAIM(21, dq_rule_c21, NULL),
    CLAIM(22, rule_probes, PROBES(judge_c22, 3, 2)),
    CLAIM(23, dq_rule_c23, NULL),
    CLAIM(24, dq_rule_recipe, NULL),
    CLAIM(25, dq_rule_recipe, NULL),
    CLAIM(26, dq_rule_c26, NULL),
    CLAIM(27, rule_probes, PROBES(judge_c27, 9)),
    CLAIM(28, rule_probes, PROBES(judge_c28, 5)),
    {NULL, NULL, NULL, NULL, NULL},
};

void dq_claim_space_sentences(char *buf, size_t len)
{
    size_t n = strlen(buf);
    bool code = false;
    for (size_t i = 0; i + 1 < n; i++) {
        code ^= buf[i] == '`';
        if (code || !strchr(".!?", buf[i]) || buf[i + 1] < 'A' ||
            buf[i + 1] > 'Z' || n + 2 >= len)
            continue;
        memmove(buf + i + 3, buf + i + 1, n - i);
        buf[i + 1] = buf[i + 2] = ' ';
        n += 2;
    }
}

/* Cell col of row q as a strategy cell (dq_row_strategy_ok with how). */
static bool strategy_cell_ok(const dq_crow *q, size_t col, int how,
                             char *bad, size_t len)
{
    if (q->n <= col) {
        snprintf(bad, len, "the table has no strategy column (column %zu)",
                 col + 1);
        return false;
    }
    return dq_row_strategy_ok(q->cell[col], how, bad, len);
}

/* The tables whose rows are keyed by a claim id, and whether claim c's
 * rule reads table: a tally's, a probe claim's, a recipe's (C07's judge
 * reads one too). */
enum { ROWS_TALLIES, ROWS_PROBES, ROWS_RECIPES };
static bool rule_reads(const dq_claim_def *c, int table)
{
    if (table == ROWS_TALLIES)
        return c->rule == rule_tally;
    if (table == ROWS_PROBES)
        return c->rule == rule_probes;
    return c->rule == dq_rule_recipe || (c->args != NULL && c->args->recipe);
}

/* Whether row q's claim id (its first cell) is a claim whose rule reads
 * table (named name): a row no rule reads is a misspelt or stale one. */
static bool claim_id_ok(const dq_crow *q, int table, const char *name,
                        char *bad, size_t len)
{
    for (const dq_claim_def *c = dq_claims; c->id != NULL; c++)
        if (strcmp(c->id, q->cell[0]) == 0 && rule_reads(c, table))
            return true;
    snprintf(bad, len, "claim %.64s is no claim whose rule reads %s",
             q->cell[0], name);
    return false;
}

/* A tally counts one strategy's trials: a registered one. */
static bool tally_row_ok(const dq_crow *q, char *bad, size_t len)
{
    return claim_id_ok(q, ROWS_TALLIES, "claim_rows.tallies", bad, len) &&
           strategy_cell_ok(q, 1, 0, bad, len);
}

/* A probes row belongs to a probe claim (its keys are checked by
 * claim_has_rows, its probe name nowhere: see dq_claim_rows_check). */
static bool probe_row_ok(const dq_crow *q, char *bad, size_t len)
{
    return claim_id_ok(q, ROWS_PROBES, "claim_rows.probes", bad, len);
}

/* A recipe switches an option of one strategy, or of any (empty), that
 * strategy takes, and counts early deliveries or lost tasks. */
static bool recipe_row_ok(const dq_crow *q, char *bad, size_t len)
{
    if (!claim_id_ok(q, ROWS_RECIPES, "claim_rows.recipes", bad, len))
        return false;
    if (strcmp(q->cell[5], "early") != 0 && strcmp(q->cell[5], "lost") != 0) {
        snprintf(bad, len, "counted '%.64s' is neither early nor lost",
                 q->cell[5]);
        return false;
    }
    return strategy_cell_ok(q, 1, DQ_ROW_EMPTY_OK, bad, len) &&
           dq_row_option_ok(q->cell[1], q->cell[2], bad, len);
}

/* A faults row's argument (without its '!'), when it has one, is one its
 * kind takes: "KIND:ARG" parses as a spec (dq_fault_parse, the parser of
 * `dqlab run --fault`).  The rules match the argument in a trial's spec
 * after the kind, and every kind takes its first argument alone. */
static bool fault_arg_ok(const dq_crow *q, char *bad, size_t len)
{
    const char *arg = q->cell[2] + (q->cell[2][0] == '!');
    char spec[400], err[240];
    dq_fault f;
    if (q->cell[2][0] == '\0')
        return true;
    snprintf(spec, sizeof spec, "%s:%s", q->cell[1], arg);
    if (dq_fault_parse(spec, &f, err, sizeof err) == 0)
        return true;
    snprintf(bad, len, "argument '%.64s' is not one fault %.32s takes (%s)",
             arg, q->cell[1], err);
    return false;
}

/* A faults row's "row holds" cell, when not empty: KEY=VALUE, KEY an
 * option some registered strategy takes (the rules look for it in a
 * loss-table row's options). */
static bool fault_holds_ok(const dq_crow *q, char *bad, size_t len)
{
    const char *cell = q->cell[6], *eq = strchr(cell, '=');
    char key[64], why[200];
    if (cell[0] == '\0')
        return true;
    if (eq == NULL || eq == cell || (size_t)(eq - cell) >= sizeof key) {
        snprintf(bad, len, "row holds '%.64s' is not KEY=VALUE (an option "
                 "of a strategy)", cell);
        return false;
    }
    snprintf(key, sizeof key, "%.*s", (int)(eq - cell), cell);
    if (dq_row_option_ok("", key, why, sizeof why))
        return true;
    snprintf(bad, len, "row holds '%.64s': %s", cell, why);
    return false;
}

/* A faults row: its shape and flags (claims_fault.c), a fault kind
 * (harness/faults.h) with an argument it takes, a row-holds option, a
 * retry of trials.csv ("readd", "nack", or empty: any), then its
 * strategy cell: empty, a strategy or "!" and one. */
static bool fault_row_ok(const dq_crow *q, char *bad, size_t len)
{
    if (!dq_fault_row_ok(q, bad, len))
        return false;
    if (dq_fault_find(q->cell[1]) == NULL) {
        snprintf(bad, len, "fault '%.64s' is no fault kind (`dqlab run "
                 "--help` names them)", q->cell[1]);
        return false;
    }
    if (!fault_arg_ok(q, bad, len) || !fault_holds_ok(q, bad, len))
        return false;
    if (q->cell[7][0] && strcmp(q->cell[7], "readd") != 0 &&
        strcmp(q->cell[7], "nack") != 0) {
        snprintf(bad, len, "retry '%.64s' is neither readd nor nack (nor "
                 "empty: any)", q->cell[7]);
        return false;
    }
    return strategy_cell_ok(q, 5, DQ_ROW_EMPTY_OK | DQ_ROW_NOT_OK, bad, len);
}

/* Whether table has exactly one row id (tallies, recipes: what their
 * rules read); false with why in what and its line in *line. */
static bool one_row(const dq_texts *t, const char *table, const char *id,
                    int *line, char *what, size_t len)
{
    dq_crow rows[2];
    int n = dq_claim_rows_find(t, table, id, rows, 2, line);
    if (n == 1 || n < 0)
        return true;   /* n < 0: dq_claim_tables_check refused it */
    if (n > 1)
        *line = rows[1].line;
    snprintf(what, len, "%s has %s row %s", table,
             n ? "more than the rule reads of" : "no", id);
    return false;
}

/* Whether claim c's rule finds the rows it reads: one of tallies for a
 * tally, one of recipes for a recipe (and C07's judge), the shape its
 * judge reads of probes.  false with why in what and its line in *line. */
static bool claim_has_rows(const dq_claim_def *c, const dq_texts *t,
                           int *line, char *what, size_t len)
{
    dq_crow rd[DQ_PROBE_ROWS + 1];
    int n;
    if (c->rule == rule_tally &&
        !one_row(t, "claim_rows.tallies", c->id, line, what, len))
        return false;
    if ((c->rule == dq_rule_recipe || (c->args && c->args->recipe)) &&
        !one_row(t, "claim_rows.recipes", c->id, line, what, len))
        return false;
    if (c->rule != rule_probes)
        return true;
    n = dq_claim_rows_find(t, "claim_rows.probes", c->id, rd,
                           DQ_PROBE_ROWS + 1, line);
    if (n == 0)
        snprintf(what, len, "claim_rows.probes has no row %s", c->id);
    /* rd holds the rows probe_shape_ok looks at, one past the shape */
    return n < 0 ||
           (n > 0 && probe_shape_ok(c->args, c->id, rd, n, line, what, len));
}

/* The probes table's probe names and key names are not checked here
 * (their claim and the number of keys per row are): the probes write
 * their names and verdict_input keys in the calls that write their rows
 * (harness/probes.c, probes_more.c) and declare them nowhere a program
 * can read, so a misspelt one still reads as a reading the probes run
 * lacks.  The faults rows the fault rules read by name (held_amo, ...)
 * are checked when a rule reads them. */
int dq_claim_rows_check(const dq_texts *t, char *err, size_t errlen)
{
    static const dq_row_check checks[] = {
        {"claim_rows.tallies", 2, tally_row_ok},
        {"claim_rows.probes", 3, probe_row_ok},
        {"claim_rows.recipes", 6, recipe_row_ok},
        {"claim_rows.faults", 8, fault_row_ok},
        {NULL, 0, NULL},
    };
    char what[256];
    int line = 0;
    if (dq_claim_tables_check(t, checks, err, errlen) != 0)
        return -1;
    for (const dq_claim_def *c = dq_claims; c->id != NULL; c++)
        if (!claim_has_rows(c, t, &line, what, sizeof what)) {
            snprintf(err, errlen, "%s/claim_rows.md:%d: %s", t->dir, line,
                     what);
            return -1;
        }
    return 0;
}

dq_verdict dq_claim_decide(const dq_claim_def *c, const dq_results *r,
                           dq_texts *t, char *buf, size_t len,
                           dq_claim_result *res)
{
    dq_ev e = {t, buf, len, 0, res};
    buf[0] = '\0';
    memset(res, 0, sizeof *res);
    if (c->rule == NULL)
        return dq_claim_unmeasured(c, &e);
    dq_verdict v = c->rule(c, r, &e);
    dq_claim_space_sentences(buf, len);
    return v;
}
