/* claims.c -- the claims table and the rules that decide them.
 *
 * CLAIMS.md (the lab's brief) lists what tutorials and interview guides say
 * about delay queues on Redis.  This file restates each claim in dqlab's
 * own words under the same id and, where an experiment measures it, gives a
 * rule that reads the loaded results (results.h) and returns a verdict with
 * the numbers behind it.  Rules never hard-code a figure: every number in
 * an evidence text is computed from the results, and a comparison with a
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

/* Appends to the evidence ev (evlen bytes) at *off. */
#define SAY(...) dq_append(ev, evlen, off, __VA_ARGS__)

static dq_verdict none(char *ev, size_t evlen, const char *why)
{
    snprintf(ev, evlen, "%s", why);
    return DQ_VERDICT_NOT_MEASURED;
}

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
    dq_verdict (*say)(const tally *t, const char *where,
                      char *ev, size_t evlen);
    /* rule_probes: the readings (v[k][i] = keys[i] of reads[k]), judged */
    probe_read reads[5];
    dq_verdict (*judge)(const dq_results *r, int64_t v[5][6], char *ev,
                        size_t evlen);
};

/* ---- Duplicate tallies: C01, C02, C03, C13 ------------------------------ */

/* "<strategy> delivered N duplicate deliveries in a of b trials with 2 to
 * c consumers" into ev; returns its length. */
static size_t dups_seen(const tally *t, const char *s, char *ev,
                        size_t evlen)
{
    size_t off = 0;
    dq_append(ev, evlen, &off, "%s delivered %" PRIu64 " duplicate "
              "deliveries in %zu of %zu trials with 2 to %d consumers", s,
              t->duplicates, t->dup_trials, t->trials, t->max_consumers);
    return off;
}

/* "<strategy> delivered no duplicate in n trials with 2 to c consumers
 * [(d deliveries)]<where>" into ev; returns its length. */
static size_t dups_none(const tally *t, const char *s,
                        bool deliveries, const char *w, char *ev,
                        size_t evlen)
{
    size_t off = 0;
    dq_append(ev, evlen, &off, "%s delivered no duplicate in %zu trial%s "
              "with 2 to %d consumers", s, t->trials,
              t->trials == 1 ? "" : "s", t->max_consumers);
    if (deliveries)
        dq_append(ev, evlen, &off, " (%" PRIu64 " deliveries)",
                  t->deliveries);
    dq_append(ev, evlen, &off, "%s", w);
    return off;
}

/* C01: naive (ZRANGEBYSCORE then ZREM) with 2+ consumers duplicates. */
static dq_verdict say_c01(const tally *t, const char *w, char *ev,
                          size_t evlen)
{
    size_t off;
    if (t->duplicates > 0) {
        off = dups_seen(t, "naive", ev, evlen);
        dq_append(ev, evlen, &off, ", at most %" PRIu64 " in one trial%s.",
                  t->dup_max, w);
        return DQ_VERDICT_HOLDS;
    }
    off = dups_none(t, "naive", false, w, ev, evlen);
    dq_append(ev, evlen, &off, ": the race exists but was not observed here "
              "(more consumers, more tasks or a longer work time widen "
              "it).");
    return DQ_VERDICT_DOES_NOT_HOLD;
}

/* C02: a Lua claim script does not duplicate, however many consumers. */
static dq_verdict say_c02(const tally *t, const char *w, char *ev,
                          size_t evlen)
{
    size_t off;
    if (t->duplicates > 0) {
        off = dups_seen(t, "lua", ev, evlen);
        dq_append(ev, evlen, &off, "%s.", w);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    off = dups_none(t, "lua", true, w, ev, evlen);
    dq_append(ev, evlen, &off, ".  %sNo faults were injected; the script "
              "removes the task as it returns it, so a consumer that dies "
              "afterwards loses it instead (at-most-once, see C12).",
              t->max_consumers < 4 ? "Only measured with few consumers.  "
                                   : "");
    return t->max_consumers >= 4 ? DQ_VERDICT_HOLDS
                                 : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C03: ZREM's reply as the claim: no duplicates, lost races cost. */
static dq_verdict say_c03(const tally *t, const char *w, char *ev,
                          size_t evlen)
{
    size_t off;
    if (t->duplicates > 0) {
        off = dups_seen(t, "naive-checked", ev, evlen);
        dq_append(ev, evlen, &off, "%s.", w);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    off = dups_none(t, "naive-checked", true, w, ev, evlen);
    if (t->lost_races == 0) {
        dq_append(ev, evlen, &off, ", but no race was lost either (ZREM "
                  "never returned 0), so the cost side was not observed.");
        return DQ_VERDICT_HOLDS_WITH_CONDITIONS;
    }
    dq_append(ev, evlen, &off, ", while it lost %" PRIu64 " races (ZREM "
              "returned 0: another consumer removed the task between its "
              "ZRANGEBYSCORE and its ZREM), %.3f per delivery; each lost "
              "race costs 2 round trips, and the trials made %.2f round "
              "trips per delivery in all.", t->lost_races,
              t->delivered ? (double)t->lost_races / (double)t->delivered
                           : 0.0,
              t->delivered ? (double)t->round_trips / (double)t->delivered
                           : 0.0);
    return DQ_VERDICT_HOLDS;
}

/* C13: "single-threaded Redis makes everything atomic". */
static dq_verdict say_c13(const tally *t, const char *w, char *ev,
                          size_t evlen)
{
    if (t->duplicates > 0) {
        snprintf(ev, evlen, "Redis ran every command on its one thread, yet "
                 "naive's claim -- two commands, ZRANGEBYSCORE then ZREM -- "
                 "handed the same task to two consumers %" PRIu64 " times "
                 "in %zu of %zu trials%s.  Each command is atomic; a "
                 "sequence of commands from one client is not.",
                 t->duplicates, t->dup_trials, t->trials, w);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    snprintf(ev, evlen, "naive showed no duplicate in %zu trial%s%s, so "
             "these runs do not refute the claim; they do not prove it "
             "either (the interleaving may simply not have occurred).",
             t->trials, t->trials == 1 ? "" : "s", w);
    return DQ_VERDICT_NOT_MEASURED;
}

/* The duplicate tally rule: args->strategy over the trials with 2+
 * consumers, worded and judged by args->say. */
static dq_verdict rule_tally(const dq_claim_def *c, const dq_results *r,
                             char *ev, size_t evlen)
{
    tally t;
    char w[512];
    tally_of(r, c->args->strategy, &t);
    if (t.trials == 0) {
        snprintf(ev, evlen, "No trial ran %s with 2 or more consumers; the "
                 "concurrency experiment decides it.", c->args->strategy);
        return DQ_VERDICT_NOT_MEASURED;
    }
    if (t.fig[0])
        snprintf(w, sizeof w, " (experiment %s, figure `%s`)", t.exps, t.fig);
    else
        snprintf(w, sizeof w, " (experiment %s)", t.exps);
    return c->args->say(&t, w, ev, evlen);
}

/* ---- Probe readings: C06, C07, C08, C09, C20 ---------------------------
 * Claims about Redis itself; one real interaction each decides them
 * (`dqlab probes`).  The rule reads the keys each row names from the
 * verdict_input column of probes.csv, then the row's judge decides. */

static dq_verdict rule_probes(const dq_claim_def *c, const dq_results *r,
                              char *ev, size_t evlen)
{
    const dq_probes *p = &r->probes;
    int64_t v[5][6];
    if (!p->present) {
        snprintf(ev, evlen, "No probe run under `%s/probes/`: run `bin/dqlab "
                 "probes` (a few seconds; `make report` does).", r->root);
        return DQ_VERDICT_NOT_MEASURED;
    }
    for (size_t k = 0; k < 5 && c->args->reads[k].probe; k++) {
        const probe_read *rd = &c->args->reads[k];
        const dq_probe_row *row = dq_probes_find(p, c->id, rd->probe);
        for (size_t i = 0; rd->keys[i] != NULL; i++)
            if (!dq_probe_int(row, rd->keys[i], &v[k][i])) {
                snprintf(ev, evlen, "The probe run in `%s` lacks %s %s (%s): "
                         "rerun `bin/dqlab probes`.", p->dir, c->id,
                         rd->probe, rd->keys[i]);
                return DQ_VERDICT_NOT_MEASURED;
            }
    }
    return c->args->judge(r, v, ev, evlen);
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
static dq_verdict judge_c06(const dq_results *r, int64_t v[5][6], char *ev,
                            size_t evlen)
{
    const int64_t *ms = v[0], *us = v[1], *ns = v[2], first = v[3][0];
    const int64_t x4096 = v[4][0];
    char lo[32], hi[32], lms[32], lus[32], lns[32], xd[32];
    size_t off = 0;
    dq_verdict verdict = ms[0] == ms[1] ? DQ_VERDICT_HOLDS
                                        : DQ_VERDICT_DOES_NOT_HOLD;
    utc_date(ms[2] / 1000, lo, sizeof lo);
    utc_date(ms[3] / 1000, hi, sizeof hi);
    dq_append(ev, evlen, &off, "ZADD then ZSCORE (probes, Redis %s): %"
              PRId64 " of %" PRId64 " ms epoch timestamps from %s to %s came "
              "back exact; microseconds over the same range: %" PRId64 " of %"
              PRId64 "; nanoseconds near now: %" PRId64 " of %" PRId64
              " (errors up to %" PRId64 " ns).", probe_redis(r), ms[0],
              ms[1], lo, hi, us[0], us[1], ns[0], ns[1], ns[2]);
    if (first > 0) {
        utc_date((first - 1) / 1000, lms, sizeof lms);
        utc_date((first - 1) / 1000000, lus, sizeof lus);
        utc_date((first - 1) / 1000000000, lns, sizeof lns);
        dq_append(ev, evlen, &off, "  The first integer that does not "
                  "round-trip is %" PRId64 " (the double's 53-bit "
                  "significand), so ms timestamps stay exact until %s, "
                  "microseconds until %s, and nanosecond timestamps stopped "
                  "being exact on %s.", first, lms, lus, lns);
    }
    if (x4096 > 0) {
        utc_date(x4096 / 1000, xd, sizeof xd);
        dq_append(ev, evlen, &off, "  A ms timestamp times 4096 plus a 12-bit "
                  "sequence stays exact only until %s (first inexact ms %"
                  PRId64 ").", xd, x4096);
    } else {
        dq_append(ev, evlen, &off, "  ms x 4096 plus a 12-bit sequence "
                  "stayed exact through %s.", hi);
    }
    dq_append(ev, evlen, &off, "  So the claim %s for milliseconds, and not "
              "for nanoseconds%s.", verdict == DQ_VERDICT_HOLDS ? "holds"
              : "fails even", x4096 > 0 ? " or packed ms x 4096 ids beyond "
              "that date" : "");
    return verdict;
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

static void c07_loss(const dq_results *r, char *buf, size_t len)
{
    const dq_rexp *e = dq_loss_experiment(r);
    const dq_loss_table *lt = e ? e->loss : NULL;
    uint64_t lost = 0, enq = 0;
    size_t cells = 0;
    char path[4200];
    exp_lists x = {"", ""};
    buf[0] = '\0';
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
        snprintf(buf, len, "; in the loss experiment (%s) the zpopmin "
                 "strategy lost %" PRIu64 " of %" PRIu64 " tasks when "
                 "consumers were killed", e->name, lost, enq);
        return;
    }
    const char *copy = dq_rexp_meta(e, "file_copy");
    snprintf(path, sizeof path, "%s/%s", e->dir,
             copy[0] ? copy : "experiment.ini");
    if (ini_parse(path, ini_on_key, &x) >= 0 &&
        strstr(x.strategies, "zpopmin") != NULL &&
        strstr(x.faults, "kill-consumer") != NULL)
        snprintf(buf, len, "; this loss run did not kill zpopmin's "
                 "consumers, the full form of `%s` (without --quick) does",
                 dq_rexp_meta(e, "file")[0] ? dq_rexp_meta(e, "file")
                                            : "experiments/loss.ini");
}

/* C07: atomic [duplicates, missing, popped, n, threads], pop-then-die
 * [lost, n]. */
static dq_verdict judge_c07(const dq_results *r, int64_t v[5][6], char *ev,
                            size_t evlen)
{
    const int64_t *a = v[0], *d = v[1];
    size_t off = 0;
    dq_verdict verdict = a[0] > 0   ? DQ_VERDICT_DOES_NOT_HOLD
                         : d[0] > 0 ? DQ_VERDICT_HOLDS_WITH_CONDITIONS
                                    : DQ_VERDICT_HOLDS;
    dq_append(ev, evlen, &off, "Probes (Redis %s): %" PRId64 " threads "
              "popping a %" PRId64 "-member set with ZPOPMIN made %" PRId64
              " pops with %" PRId64 " duplicates and %" PRId64 " members "
              "missed: the pop is atomic.  A consumer process that ZPOPMINed "
              "a task not yet due and died before putting it back lost %"
              PRId64 " of %" PRId64 " (the set no longer held it).",
              probe_redis(r), a[4], a[3], a[2], a[0], a[1], d[0], d[1]);
    if (verdict == DQ_VERDICT_HOLDS_WITH_CONDITIONS) {
        char loss[512];
        c07_loss(r, loss, sizeof loss);
        dq_append(ev, evlen, &off, "  Atomic, but not a correct delay-queue "
                  "claim on its own: a popped task that is not yet due must "
                  "be put back, and between the pop and the put-back (or the "
                  "work) only that consumer holds it (at-most-once%s).",
                  loss);
    }
    return verdict;
}

/* C08: [members, due_first, delivered, tasks] of both layouts. */
static dq_verdict judge_c08(const dq_results *r, int64_t v[5][6], char *ev,
                            size_t evlen)
{
    const int64_t *pm = v[0], *im = v[1];
    snprintf(ev, evlen, "Probes (Redis %s): %" PRId64 " tasks with equal "
             "payloads and different due times.  Payload as member: %" PRId64
             " member(s); when the first task fell due %" PRId64 " was due, "
             "and in the end a consumer found %" PRId64 " (the second ZADD "
             "re-scored the first).  Task id as member, payload in a hash "
             "(dqlab's layout): %" PRId64 " members, %" PRId64 " due at the "
             "first due time, %" PRId64 " in the end.", probe_redis(r),
             pm[3], pm[0], pm[1], pm[2], im[0], im[1], im[2]);
    return pm[0] < pm[3] && im[0] == im[3] ? DQ_VERDICT_HOLDS
                                           : DQ_VERDICT_DOES_NOT_HOLD;
}

/* C09: [lost, n, ttl_ms, delay_ms] shorter and longer TTL, [leftovers,
 * before, n]. */
static dq_verdict judge_c09(const dq_results *r, int64_t v[5][6], char *ev,
                            size_t evlen)
{
    const int64_t *s = v[0], *l = v[1], *left = v[2];
    snprintf(ev, evlen, "Probes (Redis %s): payload TTL %" PRId64 " ms, due "
             "in %" PRId64 " ms: %" PRId64 " of %" PRId64 " tasks had lost "
             "their payload when claimed.  TTL %" PRId64 " ms, same delay: %"
             PRId64 " of %" PRId64 " lost.  Of %" PRId64 " payloads left "
             "unprocessed, %" PRId64 " still existed right after the claim "
             "and %" PRId64 " after their TTL (no leftovers).",
             probe_redis(r), s[2], s[3], s[0], s[1], l[2], l[0], l[1],
             left[2], left[1], left[0]);
    return s[0] == 0                   ? DQ_VERDICT_DOES_NOT_HOLD
           : l[0] == 0 && left[0] == 0 ? DQ_VERDICT_HOLDS
                                       : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C20: zadd-maxlen [rejected, zcard], xadd-maxlen [xlen, added, maxlen]. */
static dq_verdict judge_c20(const dq_results *r, int64_t v[5][6], char *ev,
                            size_t evlen)
{
    const int64_t *z = v[0], *x = v[1];
    const dq_probe_row *row = dq_probes_find(&r->probes, "C20",
                                             "zadd-maxlen");
    snprintf(ev, evlen, "Probes (Redis %s): `ZADD key MAXLEN 10 1 a` -> "
             "`%s`%s.  On a stream, XADD MAXLEN %" PRId64 " after %" PRId64
             " entries left XLEN %" PRId64 ": MAXLEN is a Streams option; a "
             "sorted set is capped only by trimming it yourself "
             "(ZREMRANGEBYRANK).", probe_redis(r), row ? row->observed : "?",
             z[0] == 1 ? ": rejected, nothing added" : "", x[2], x[1], x[0]);
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
static void c10_lateness(const dq_rexp *lat, c10_bound *b, char *ev,
                         size_t *off, size_t evlen)
{
    for (size_t i = 0; lat != NULL && i < lat->ngroups; i++) {
        const dq_rgroup *g = &lat->groups[i];
        long pm = dq_group_poll_ms(g);
        double mx, p99, d = (double)pm;
        char name[300];
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
            snprintf(name, sizeof name, "%s (poll_ms %ld)", g->strategy, pm);
        SAY("%s%s: p99%s %.1f ms, max %.1f ms", *off ? "; " : "", name,
            g->n > 1 ? " (worst trial)" : "", p99, mx);
        if (p99 > d)
            SAY(" (p99 %.1f ms beyond)", p99 - d);
        else if (mx > d)
            SAY(" (max %.1f ms beyond)", mx - d);
        b->worst99 = p99 > d && p99 - d > b->worst99 ? p99 - d : b->worst99;
        b->worstmx = mx - d > b->worstmx ? mx - d : b->worstmx;
    }
}

/* C10's cost part: commands (and CPU) at the shortest against the longest
 * poll_ms of each polling strategy while idle.  Returns whether any was
 * measured; *grows: each shorter interval caused more commands; *agrees:
 * the CPU moved with them. */
static bool c10_cost(const dq_rexp *idle, bool *grows, bool *agrees,
                     char *ev, size_t *off, size_t evlen)
{
    bool known = false;
    *grows = *agrees = true;
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
        bool more = a->cmds_per_s_median > b->cmds_per_s_median;
        bool cpu = a->cpu_ms_per_s_median > b->cpu_ms_per_s_median;
        known = true;
        *grows &= more;
        *agrees &= !(more && !cpu);
        SAY("Idle, %d consumers, %s: poll_ms %ld -> %.0f commands/s, %.1f ms "
            "server CPU/s; %ld -> %.1f commands/s, %.1f ms/s (experiment "
            "%s)%s. ", a->consumers, a->strategy, pa, a->cmds_per_s_median,
            a->cpu_ms_per_s_median, dq_group_poll_ms(b),
            b->cmds_per_s_median, b->cpu_ms_per_s_median, idle->name,
            more && !cpu ? " -- CPU against the commands (whole-process "
            "figure: other load shows up)" : "");
    }
    return known;
}

/* C10's verdict after the numbers. */
static dq_verdict c10_conclude(const c10_bound *b, bool cost, bool grows,
                               bool agrees, char *ev, size_t *off,
                               size_t evlen)
{
    if (b->early) {
        SAY("Some polling strategy delivered a task early, below the claimed "
            "lower bound of 0.");
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (b->nbound_p99 < b->npoll) {
        SAY("Compared strictly (no slack), %zu of %zu polling variants had "
            "p99 beyond their poll interval (by up to %.1f ms; marked "
            "above): at least 1%% of their tasks waited longer than the "
            "interval.", b->npoll - b->nbound_p99, b->npoll, b->worst99);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (!cost) {
        SAY("p99 within the poll interval (compared strictly) for every "
            "polling variant; the cost side needs the idle experiment with "
            "two poll_ms values.");
        return DQ_VERDICT_HOLDS_WITH_CONDITIONS;
    }
    if (!grows) {
        SAY("A shorter interval did not cause more Redis commands here.");
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (b->nbound_max == b->npoll)
        SAY("Every task of all %zu polling variants was delivered within its "
            "poll interval (compared strictly), and a shorter interval "
            "caused more Redis commands.", b->npoll);
    else
        SAY("p99 within the poll interval (compared strictly) for all %zu "
            "polling variants, but the maximum exceeded it in %zu (by up to "
            "%.1f ms); a shorter interval caused more Redis commands.",
            b->npoll, b->npoll - b->nbound_max, b->worstmx);
    if (!agrees)
        SAY("  The CPU part rests on the command counts: the measured server "
            "CPU did not follow them everywhere.");
    return b->nbound_max == b->npoll && agrees
               ? DQ_VERDICT_HOLDS : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C10: polling lateness lies in [0, poll interval]; shorter costs more.
 * The bound is compared strictly, on the values as printed: no slack, and
 * every excess printed in ms, so the verdict and the numbers cannot
 * disagree.  The cost side compares Redis commands (what the interval
 * drives); when the server CPU moves against them the text says so and
 * the verdict is at most "holds with conditions". */
static dq_verdict rule_c10(const dq_claim_def *c, const dq_results *r, char *ev,
                       size_t evlen)
{
    const dq_rexp *lat = dq_results_with_plot(r, "lateness-cdf");
    /* the numbers leave the last 320 bytes to the conclusion */
    size_t o = 0, *off = &o, dlen = evlen > 960 ? evlen - 320 : evlen;
    c10_bound b = {0};
    bool grows, agrees, cost;
    (void)c;
    c10_lateness(lat, &b, ev, off, dlen);
    if (b.npoll == 0)
        return none(ev, evlen, "No lateness experiment ran a polling "
                    "strategy; experiments/lateness.ini (lateness CDF vs "
                    "poll_ms) and experiments/idle.ini (idle cost vs poll_ms) "
                    "decide it.");
    dq_append(ev, dlen, off, " (experiment %s, figure `%s-lateness-cdf`). ",
              lat->name, lat->name);
    cost = c10_cost(dq_results_with_plot(r, "idle-cost"), &grows, &agrees,
                    ev, off, dlen);
    if (o >= dlen) {   /* numbers cut short: end at the last sentence */
        size_t k = strlen(ev);
        while (k > 1 && !(ev[k - 2] == '.' && ev[k - 1] == ' '))
            k--;
        ev[o = k > 1 ? k - 1 : strlen(ev)] = '\0';
        SAY(" (More in the tables above.) ");
    }
    return c10_conclude(&b, cost, grows, agrees, ev, off, evlen);
}

/* C11: sleeping ~100 ms keeps CPU low without much lateness. */
static dq_verdict rule_c11(const dq_claim_def *c, const dq_results *r, char *ev,
                       size_t evlen)
{
    const dq_rexp *idle = dq_results_with_plot(r, "idle-cost");
    const dq_rexp *lat = dq_results_with_plot(r, "lateness-cdf");
    const dq_rgroup *i100 = find_group(idle, "naive", 100);
    const dq_rgroup *i10 = find_group(idle, "naive", 10);
    const dq_rgroup *base = find_group(idle, "heap", 0);
    const dq_rgroup *l100 = find_group(lat, "naive", 100);
    const dq_rgroup *lu = find_group(lat, "lua", 100);
    size_t o = 0, *off = &o, ncounts = 0, k;
    double p99 = -1;
    int counts[8];
    (void)c;
    if (i100 == NULL || i100->cpu_ms_per_s_median < 0)
        return none(ev, evlen, "Needs naive at poll_ms = 100 in the idle "
                    "experiment (experiments/idle.ini) for the idle cost, and "
                    "the lateness experiment for the lateness at 100 ms.");
    SAY("Idle, %d consumers of naive at poll_ms = 100: %.1f Redis commands/s "
        "and %.1f ms of server CPU per second", i100->consumers,
        i100->cmds_per_s_median, i100->cpu_ms_per_s_median);
    if (i10 != NULL)
        SAY(" (poll_ms = 10: %.0f commands/s, %.1f ms/s)",
            i10->cmds_per_s_median, i10->cpu_ms_per_s_median);
    if (base != NULL && base->cpu_ms_per_s_median >= 0)
        SAY("; the server alone used %.1f ms/s", base->cpu_ms_per_s_median);
    SAY(" (experiment %s). ", idle->name);
    if (l100 != NULL) {
        p99 = worst_p99(lat, l100, NULL);
        SAY("The price in lateness: naive at poll_ms = 100 had p50 %.1f ms, "
            "p99 %.1f ms (experiment %s)", l100->p50_median, p99, lat->name);
        if (lu != NULL)
            SAY("; lua, which sleeps until the head's due time (at most 100 "
                "ms) instead of blindly, had p50 %.1f ms, p99 %.1f ms",
                lu->p50_median, worst_p99(lat, lu, NULL));
        SAY(". ");
    } else {
        SAY("Lateness at poll_ms = 100 not measured "
            "(experiments/lateness.ini). ");
    }
    bool cheap = i100->cpu_ms_per_s_median < 10.0; /* < 1% of one core */
    if (cheap && p99 >= 0)
        SAY("Under 1%% of one core: cheap, as long as a lateness of about the "
            "interval is acceptable (p99 %.1f ms for blind polling here).",
            p99);
    else
        SAY("%s", cheap ? "Under 1% of one core: cheap."
                        : "At least 1% of one core.");
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
        SAY("  Each consumer polls on its own, so the cost is expected to "
            "grow with the number of consumers; not measured here (the idle "
            "experiment ran %d consumers only).", counts[0]);
    return cheap ? DQ_VERDICT_HOLDS_WITH_CONDITIONS : DQ_VERDICT_DOES_NOT_HOLD;
}

/* C04's idle part: polling once a second; returns whether it is cheap
 * (under 1% of a core).  The CPU is the whole server process's, so on a
 * busy machine it can jump while the commands stay few; a handful of
 * commands per second cannot cost 10 ms/s, so then the commands decide
 * and the text says why. */
static bool c04_idle(const dq_rexp *idle, char *ev, size_t *off,
                     size_t evlen)
{
    const dq_rgroup *i1000 = find_group(idle, "naive", 1000);
    const dq_rgroup *base = find_group(idle, "heap", 0);
    if (i1000 == NULL || i1000->cpu_ms_per_s_median < 0) {
        SAY("The idle cost of polling once a second is not measured "
            "(experiments/idle.ini). ");
        return true;
    }
    bool cheap = i1000->cpu_ms_per_s_median < 10.0;
    bool noisy = !cheap && i1000->cmds_per_s_median >= 0 &&
                 i1000->cmds_per_s_median < 20.0;
    SAY("Idle, %d consumers polling once a second (naive, poll_ms = 1000): "
        "%.1f commands/s, %.1f ms server CPU/s", i1000->consumers,
        i1000->cmds_per_s_median, i1000->cpu_ms_per_s_median);
    if (base != NULL && base->cpu_ms_per_s_median >= 0)
        SAY(" against %.1f ms/s for the server alone",
            base->cpu_ms_per_s_median);
    SAY(" (experiment %s). ", idle->name);
    if (noisy)
        SAY("That CPU figure does not follow from %.1f commands/s (it is the "
            "whole redis-server process, so other load on the machine shows "
            "up in it): the commands decide here; rerun the idle experiment "
            "on a quiet machine for the CPU. ", i1000->cmds_per_s_median);
    return cheap || noisy;
}

/* C04's bench part: one lua claim at 100k pending (or the largest backlog
 * when 100k was not run) against the smallest, when the largest reaches
 * 100k; returns whether it stays easy, -1 when not measured. */
static int c04_bench(const dq_perf *p, char *ev, size_t *off, size_t evlen)
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
    SAY("One lua claim with %" PRId64 " pending: p50 %.0f us, p99 %.0f us, "
        "against p99 %.0f us with %" PRId64 " pending (x%.2f); %.0f bytes of "
        "Redis memory per pending task (`dqlab bench`, figure "
        "`bench-backlog`; the growth up to 1M is C05). ", b->backlog,
        b->claim_us_p50, b->claim_us_p99, lo->claim_us_p99, lo->backlog, r99,
        b->bytes_per_task);
    if (!ok)
        SAY("The claim p99 grew more than 3x or passed 10 ms at that "
            "backlog. ");
    return ok;
}

/* C04 (partly): polling once a second is cheap; 100k pending is easy. */
static dq_verdict rule_c04(const dq_claim_def *c, const dq_results *r, char *ev,
                       size_t evlen)
{
    const dq_rexp *idle = dq_results_with_plot(r, "idle-cost");
    const dq_rexp *bl = dq_results_with_plot(r, "backlog-lateness");
    const dq_rgroup *i1000 = find_group(idle, "naive", 1000), *big = NULL;
    const dq_perf_bl *lo = NULL, *hi = NULL;
    size_t o = 0, *off = &o;
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
        return none(ev, evlen, "Needs naive at poll_ms = 1000 in the idle "
                    "experiment and lua with a 100k backlog (experiments/"
                    "expiry-scale.ini); the O(log N) claim cost (C05) is not "
                    "measured.");
    bool cheap = c04_idle(idle, ev, off, evlen);
    if (big != NULL) {
        double p99 = worst_p99(bl, big, NULL);
        easy = big->lost_max == 0 && p99 < 100.0;
        SAY("With %" PRId64 " pending tasks in the sorted set, lua delivered "
            "a stream of %" PRIu64 " tasks with p50 %.1f ms and p99 %.1f ms "
            "lateness, %" PRIu64 " not delivered (experiment %s). ",
            big->backlog, big->enqueued_sum, big->p50_median, p99,
            big->lost_max, bl->name);
    } else if (!bench) {
        SAY("The 100k-pending part is not measured (needs "
            "experiments/expiry-scale.ini or `make bench`). ");
    }
    if (!cheap)
        SAY("Polling once a second cost 10 ms of server CPU per second or "
            "more: not almost nothing. ");
    if (!easy)
        SAY("At the largest backlog lua lost tasks or had a p99 of 100 ms or "
            "more. ");
    int ok = bench ? c04_bench(&r->bench, ev, off, evlen) : -1;
    if (ok < 0)
        SAY("Not measured: claim latency vs backlog (`make bench`, C05).");
    return !cheap || !easy || ok == 0 ? DQ_VERDICT_DOES_NOT_HOLD
                                      : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C16: list (Redisson design) avoids blind polling and is on time. */
static dq_verdict rule_c16(const dq_claim_def *c, const dq_results *r, char *ev,
                       size_t evlen)
{
    const dq_rexp *idle = dq_results_with_plot(r, "idle-cost");
    const dq_rexp *lat = dq_results_with_plot(r, "lateness-cdf");
    const dq_rgroup *ll = find_group(lat, "list", 0);
    const dq_rgroup *ln = find_group(lat, "naive", 100);
    const dq_rgroup *lu = find_group(lat, "lua", 100);
    const dq_rgroup *il = find_group(idle, "list", 0);
    const dq_rgroup *in = find_group(idle, "naive", 100);
    size_t o = 0, *off = &o;
    int ok = 0, known = 0;
    double mx;
    (void)c;
    if (ll == NULL && il == NULL)
        return none(ev, evlen, "Needs list in the lateness experiment "
                    "(lateness p99) and in the idle experiment (idle "
                    "commands/s).");
    if (ll != NULL) {
        double p99l = worst_p99(lat, ll, &mx);
        SAY("Lateness p99 of list: %.1f ms (max %.1f)", p99l, mx);
        if (ln != NULL) {
            double p99n = worst_p99(lat, ln, NULL);
            SAY("; naive polling every 100 ms: %.1f ms", p99n);
            known++;
            ok += p99l < p99n;
        }
        if (lu != NULL)
            SAY("; lua (sleeps until the head is due, at most 100 ms): %.1f "
                "ms", worst_p99(lat, lu, NULL));
        SAY(" (experiment %s). ", lat->name);
    }
    if (il != NULL && il->cmds_per_s_median >= 0) {
        SAY("Idle, %d consumers: list %.1f Redis commands/s (BLPOP with the "
            "claim timeout plus the mover's wake-ups)", il->consumers,
            il->cmds_per_s_median);
        if (in != NULL && in->cmds_per_s_median >= 0) {
            SAY(", naive at poll_ms = 100 %.1f", in->cmds_per_s_median);
            known++;
            ok += il->cmds_per_s_median < in->cmds_per_s_median;
        }
        SAY(" (experiment %s). ", idle->name);
    }
    if (known == 0) {
        SAY("No polling strategy to compare with.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    if (ok == known && known == 2)
        SAY("list was both more punctual than blind polling and cheaper "
            "while idle.  No faults were injected: a lost wake-up message is "
            "bounded by poll_cap_ms.");
    else if (ok > 0)
        SAY("list won %d of the %d comparisons with blind polling (one "
            "experiment missing or lost).", ok, known);
    else
        SAY("list won neither comparison.");
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
static size_t backlog_growth(const dq_perf *p, char *ev, size_t *off,
                             size_t evlen, double *r50s, size_t *faster,
                             int64_t *lo_n, int64_t *hi_n)
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
        SAY("%s%s p50 %.0f -> %.0f us (x%.2f), p99 %.0f -> %.0f us (x%.2f)",
            n++ ? "; " : "", name, lo->claim_us_p50, hi->claim_us_p50, r50,
            lo->claim_us_p99, hi->claim_us_p99,
            hi->claim_us_p99 / lo->claim_us_p99);
    }
    return n;
}

/* C05: a claim costs O(log N) in the pending tasks (bench backlog).  Every
 * strategy claims from the same sorted set, so the verdict follows the
 * median strategy: one run disturbed by other load on a shared machine
 * does not decide it alone. */
static dq_verdict rule_c05(const dq_claim_def *c, const dq_results *r, char *ev,
                       size_t evlen)
{
    size_t o = 0, *off = &o, faster, n, m;
    int64_t lo, hi;
    double r50s[32], med, lr;
    (void)c;
    if (!r->bench.present)
        return none(ev, evlen, "Needs the backlog scaling of `make bench` "
                    "(results/bench/latest/backlog.csv).");
    SAY("One claim call timed on its own, due tasks at the head of a sorted "
        "set holding N tasks due an hour ahead (`dqlab bench`, figure "
        "`bench-backlog`): ");
    if ((n = backlog_growth(&r->bench, ev, off, evlen, r50s, &faster, &lo,
                            &hi)) == 0)
        return none(ev, evlen, "The bench measured no Redis strategy at two "
                    "backlogs or more.");
    lr = log_ratio(hi, lo);
    SAY(", from %" PRId64 " to %" PRId64 " pending, while log N grows "
        "x%.2f.  ", lo, hi, lr);
    m = n < 32 ? n : 32;
    for (size_t i = 1; i < m; i++)
        for (size_t j = i; j > 0 && r50s[j - 1] > r50s[j]; j--) {
            double t = r50s[j];
            r50s[j] = r50s[j - 1];
            r50s[j - 1] = t;
        }
    med = m % 2 ? r50s[m / 2] : (r50s[m / 2 - 1] + r50s[m / 2]) / 2;
    if (med > 1.25 * lr) {
        SAY("The median strategy's p50 grew x%.2f, faster than log N (above "
            "1.25x the ratio of the logarithms; %zu of %zu strategies did).",
            med, faster, n);
        return DQ_VERDICT_DOES_NOT_HOLD;
    }
    if (faster > 0)
        SAY("%zu of %zu strategies grew faster than log N in this run, but "
            "the median strategy's p50 grew x%.2f: on a shared machine one "
            "disturbed run can do that; rerun `make bench` to see whether it "
            "repeats.  ", faster, n, med);
    SAY("The median strategy's p50 did not grow faster than log N: the skip "
        "list's O(log N) descent is small next to a round trip, which "
        "dominates the claim time.%s", hi < 1000000 ? "  Measured only up to "
        "this backlog (`make bench FULL=1` goes to 1,000,000)." : "");
    return hi >= 1000000 ? DQ_VERDICT_HOLDS
                         : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
}

/* C17's O(log n) part from the bench's heap backlog rows.  A claim p50
 * below the clock's 1 us resolution (dq_now_us) at either end cannot show
 * growth: not resolvable, and it does not count toward the verdict.
 * Resolvable and within 1.25x of log n's growth, it supports the claim;
 * beyond, it conditions it.  Returns 1 ok, -1 not, 0 undecided. */
static int c17_logn(const dq_perf *p, char *logn, size_t len)
{
    const dq_perf_bl *lo = NULL, *hi = NULL;
    char enq[256] = "";
    if (p->present)
        dq_perf_backlog_range(p, "heap", &lo, &hi);
    if (lo == NULL || hi == lo) {
        snprintf(logn, len, "The O(log n) part is not yet measured (`make "
                 "bench`: heap claim time vs n).");
        return 0;
    }
    double lr = log_ratio(hi->backlog, lo->backlog);
    double g = hi->claim_us_p50 / lo->claim_us_p50;
    if (lo->enqueue_us_mean > 0 && hi->enqueue_us_mean > 0)
        snprintf(enq, sizeof enq, "  Enqueue mean %.2f -> %.2f us (x%.2f), "
                 "information only: a mean of calls each below the clock's "
                 "resolution, and not the claim's cost.", lo->enqueue_us_mean,
                 hi->enqueue_us_mean,
                 hi->enqueue_us_mean / lo->enqueue_us_mean);
    if (lo->claim_us_p50 < 1.0 || hi->claim_us_p50 < 1.0) {
        snprintf(logn, len, "O(log n): not resolvable with a 1 us clock -- "
                 "one heap claim took p50 %.1f us with %" PRId64 " pending "
                 "and %.1f us with %" PRId64 " (`dqlab bench`), below the "
                 "clock's resolution, so this run does not decide that "
                 "part.%s", lo->claim_us_p50, lo->backlog, hi->claim_us_p50,
                 hi->backlog, enq);
        return 0;
    }
    snprintf(logn, len, "O(log n): one heap claim took p50 %.1f us with %"
             PRId64 " pending and %.1f us with %" PRId64 " (x%.2f; `dqlab "
             "bench`) while log n grows x%.2f: %s.%s", lo->claim_us_p50,
             lo->backlog, hi->claim_us_p50, hi->backlog, g, lr,
             g <= lr * 1.25 ? "no faster than log n" : "faster than log n",
             enq);
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
static dq_verdict rule_c17(const dq_claim_def *c, const dq_results *r, char *ev,
                       size_t evlen)
{
    tally t;
    char per[512] = "", verdict[400], logn[768];
    size_t o = 0, ncs = 0;
    double worst = 0, worst_limit = 0, herd_ratio = 0, herd_limit = 0;
    int worst_c = 0, herd_c = 0, cs[64];
    (void)c;
    tally_of(r, "heap", &t);
    if (t.trials == 0 || t.deliveries == 0 || t.wakeups == 0) {
        snprintf(ev, evlen, "%s  Needs: heap inserts/removes per second vs n "
                 "(O(log n)), and wake-ups per delivery with many "
                 "consumers.", t.trials == 0 ? "No trial ran heap with 2 or "
                 "more consumers." : "The heap trials recorded no wake-ups.");
        return DQ_VERDICT_NOT_MEASURED;
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
        dq_append(per, sizeof per, &o, "%s%.2f at %d consumers",
                  o ? ", " : "", ratio, cs[k]);
    }
    if (herd_c > 0)
        snprintf(verdict, sizeof verdict, "At %d consumers, %.2f wake-ups per "
                 "delivery reach the herd threshold of %.1f (half the "
                 "consumers, at least 2): more consumers, more wake-ups per "
                 "delivery.", herd_c, herd_ratio, herd_limit);
    else
        snprintf(verdict, sizeof verdict, "%s (the largest, %.2f, at %d "
                 "consumers, below the herd threshold there of %.1f: half the "
                 "consumers, at least 2): no thundering herd%s.", worst <= 1.0
                 ? "At most one wake-up per delivery" : worst <= 1.5
                 ? "About one wake-up per delivery"
                 : "A few wake-ups per delivery", worst, worst_c,
                 worst_limit, cs[ncs - 1] < 4 ? ", though with at most 3 "
                 "consumers a herd has few threads to wake" : "");
    int logn_state = c17_logn(&r->bench, logn, sizeof logn);
    snprintf(ev, evlen, "Wake-ups per delivery for heap: %s (experiment %s)."
             "  %s  %s", per, t.exps, verdict, logn);
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

/* The loss experiment's table (its name in *exp); NULL with ev saying
 * what the claim needs when there is none. */
static const dq_loss_table *loss_table(const dq_results *r, char *ev,
                                       size_t evlen, const char *needs,
                                       const char **exp)
{
    const dq_rexp *e = dq_loss_experiment(r);
    if (e == NULL)
        snprintf(ev, evlen, "No loss experiment in the results.  Needs: %s "
                 "(experiments/loss.ini).", needs);
    *exp = e ? e->name : "";
    return e ? e->loss : NULL;
}

/* C12: a consumer dying after the claim loses the task, unless leased. */
static dq_verdict rule_c12(const dq_claim_def *c, const dq_results *r, char *ev,
                       size_t evlen)
{
    const char *exp;
    const dq_loss_table *lt = loss_table(r, ev, evlen, "kill-consumer "
                                         "trials", &exp);
    fault_sum amo, lease;
    char points[160];
    size_t o = 0, *off = &o;
    (void)c;
    if (lt == NULL)
        return DQ_VERDICT_NOT_MEASURED;
    fault_total(lt, "kill-consumer", NULL,
                (cell_filter){DQ_G_AT_MOST_ONCE, NULL, false}, &amo);
    fault_total(lt, "kill-consumer", NULL,
                (cell_filter){DQ_G_SURVIVES_CONSUMER_CRASH, NULL, false},
                &lease);
    dq_kill_points(lt->faults, lt->nfaults, points, sizeof points);
    if (amo.cells == 0 || lease.cells == 0) {
        snprintf(ev, evlen, "The loss experiment (%s) has no kill-consumer "
                 "trial of both an at-most-once and a leased strategy.", exp);
        return DQ_VERDICT_NOT_MEASURED;
    }
    SAY("Consumers killed with SIGKILL %s (experiment %s): at-most-once "
        "strategies lost %" PRIu64 " of %" PRIu64 " tasks (%s%s%s); leased "
        "strategies lost %" PRIu64 " of %" PRIu64 "%s%s%s and redelivered %"
        PRIu64 ".  ", points[0] ? points : "at a point of a claim", exp,
        amo.lost, amo.enqueued, amo.lost_by[0] ? amo.lost_by : "none lost",
        amo.clean[0] && amo.lost_by[0] ? "; nothing lost: " : "",
        amo.lost_by[0] ? amo.clean : "", lease.lost, lease.enqueued,
        lease.lost_by[0] ? " (" : "", lease.lost_by,
        lease.lost_by[0] ? ")" : "", lease.redelivered);
    if (lease.lost > 0)
        SAY("A lease did not keep every killed consumer's task.");
    else if (amo.lost == 0)
        SAY("No at-most-once task was lost: the kills did not hit a claimed, "
            "unacked task in these runs.");
    else
        SAY("The task a dead consumer held is gone when the claim removed "
            "it, and comes back after the lease when it was only re-scored.");
    return lease.lost > 0 ? DQ_VERDICT_DOES_NOT_HOLD
           : amo.lost == 0 ? DQ_VERDICT_HOLDS_WITH_CONDITIONS
                           : DQ_VERDICT_HOLDS;
}

/* C14: AOF everysec keeps delayed tasks across a crash, losing ~1 s.  For
 * the Redis strategies whose tasks wait in Redis data; expiry's wait on a
 * notification nobody hears during the restart (C18): apart. */
static dq_verdict rule_c14(const dq_claim_def *c, const dq_results *r, char *ev,
                       size_t evlen)
{
    const char *exp;
    const dq_loss_table *lt = loss_table(r, ev, evlen, "restart-redis "
                                         "trials", &exp);
    const cell_filter others = {DQ_G_NEEDS_REDIS, "expiry", false};
    fault_sum no, every, always, ex;
    size_t o = 0, *off = &o;
    (void)c;
    if (lt == NULL)
        return DQ_VERDICT_NOT_MEASURED;
    fault_total(lt, "restart-redis", "off", others, &no);
    fault_total(lt, "restart-redis", "everysec", others, &every);
    fault_total(lt, "restart-redis", "always", others, &always);
    fault_total(lt, "restart-redis", "everysec",
                (cell_filter){DQ_G_NEEDS_REDIS, "expiry", true}, &ex);
    SAY("redis-server killed and restarted mid-trial (experiment %s), tasks "
        "lost by the Redis strategies:", exp);
    if (no.cells)
        SAY(" no persistence %" PRIu64 " of %" PRIu64 ";", no.lost,
            no.enqueued);
    if (every.cells)
        SAY(" AOF everysec %" PRIu64 " of %" PRIu64 " (%s);", every.lost,
            every.enqueued, every.lost_by[0] ? every.lost_by : "none");
    if (always.cells)
        SAY(" AOF always %" PRIu64 " of %" PRIu64 ";", always.lost,
            always.enqueued);
    if (ex.cells)
        SAY(" (expiry, apart: %" PRIu64 " of %" PRIu64 " with AOF everysec "
            "-- its keys expire while no subscriber listens, see C18);",
            ex.lost, ex.enqueued);
    if (every.cells == 0) {
        SAY(" no restart with AOF everysec was run.");
        return DQ_VERDICT_NOT_MEASURED;
    }
    double fe = every.enqueued ? (double)every.lost / (double)every.enqueued
                               : 0;
    double fo = no.enqueued ? (double)no.lost / (double)no.enqueued : 1;
    if (every.lost == 0) {
        SAY(" With AOF everysec every task survived the restart here.");
        return DQ_VERDICT_HOLDS;
    }
    if (no.cells && fe < fo / 2) {
        SAY(" AOF everysec kept most tasks (%.1f%% lost against %.1f%% "
            "without persistence): the writes of the last second before the "
            "kill can be lost.", 100 * fe, 100 * fo);
        return DQ_VERDICT_HOLDS_WITH_CONDITIONS;
    }
    SAY(" AOF everysec lost %.1f%% of the tasks, not much less than without "
        "persistence.", 100 * fe);
    return DQ_VERDICT_DOES_NOT_HOLD;
}

/* C21: at-least-once consumers do get tasks twice under faults. */
static dq_verdict rule_c21(const dq_claim_def *c, const dq_results *r, char *ev,
                       size_t evlen)
{
    const char *exp;
    const dq_loss_table *lt = loss_table(r, ev, evlen, "at-least-once "
                                         "strategies under faults", &exp);
    uint64_t red = 0, enq = 0, dup_amo = 0;
    size_t cells = 0, o = 0, *off = &o, lb = 0, la = 0;
    char by[512] = "", amo_by[512] = "";
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
                    dq_append(by, sizeof by, &lb, "%s%s under %s: %" PRIu64,
                              lb ? ", " : "", lt->rows[row], lt->faults[f],
                              x->redelivered);
            } else if (x != NULL && !(x->flags & DQ_G_DUPLICATES) && rep) {
                /* naive's repeats are its documented race (C01) */
                dup_amo += rep;
                dq_append(amo_by, sizeof amo_by, &la, "%s%s under %s: %"
                          PRIu64, la ? ", " : "", lt->rows[row],
                          lt->faults[f], rep);
            }
        }
    if (cells == 0) {
        snprintf(ev, evlen, "The loss experiment (%s) ran no at-least-once "
                 "strategy under a fault.", exp);
        return DQ_VERDICT_NOT_MEASURED;
    }
    SAY("At-least-once strategies under faults (experiment %s) delivered %"
        PRIu64 " tasks a second time out of %" PRIu64 "%s%s%s.", exp, red,
        enq, by[0] ? " (" : "", by, by[0] ? ")" : "");
    if (dup_amo > 0)
        SAY("  At-most-once strategies repeated tasks too when a fault struck "
            "(%s).", amo_by);
    if (red > 0 || dup_amo > 0)
        SAY("  A consumer must expect the same task twice: make processing "
            "idempotent.");
    else
        SAY("  No task came back twice in these runs.");
    return red > 0 || dup_amo > 0 ? DQ_VERDICT_HOLDS
                                  : DQ_VERDICT_NOT_MEASURED;
}

/* ---- C18: expiry events ------------------------------------------------- */

/* C18's outage part: expiry's losses under a subscriber outage beside the
 * other strategies'.  -1 when not measured, else expiry's lost count. */
static int64_t c18_outage(const dq_results *r, char *ev, size_t *off,
                          size_t evlen)
{
    const char *exp;
    char why[512];
    const dq_loss_table *lt = loss_table(r, why, sizeof why, "", &exp);
    fault_sum all, ex;
    if (lt == NULL)
        return -1;
    fault_total(lt, "subscriber-outage", NULL, (cell_filter){0, NULL, false},
                &all);
    fault_total(lt, "subscriber-outage", NULL,
                (cell_filter){0, "expiry", true}, &ex);
    if (ex.cells == 0)
        return -1;
    SAY("  Under a subscriber outage (every consumer down for a while; "
        "experiment %s) expiry lost %" PRIu64 " of %" PRIu64 " tasks; lost "
        "by all strategies: %s; nothing lost: %s.", exp, ex.lost,
        ex.enqueued, all.lost_by[0] ? all.lost_by : "none",
        all.clean[0] ? all.clean : "none");
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
static bool c18_backlog(const dq_rexp *bl, const dq_rgroup **gs, size_t n,
                        char *ev, size_t *off, size_t evlen)
{
    const dq_rgroup *a = gs[0], *b = gs[n - 1];
    double fa = delivered_frac(a), fb = delivered_frac(b);
    bool falls = fb < fa * 0.9;
    bool later = a->delivered_sum == a->enqueued_sum &&
                 b->delivered_sum == b->enqueued_sum &&
                 b->p50_median > 2 * a->p50_median;
    SAY("expiry, a stream of tasks due %s ms after enqueue, behind a backlog "
        "of pending shadow keys, observed until %s ms after the last due "
        "time:", dq_rexp_meta(bl, "delay_ms"), dq_rexp_meta(bl, "grace_ms"));
    for (size_t i = 0; i < n; i++) {
        SAY("%s %" PRId64 " pending -> %.1f%% delivered within the window",
            i ? ";" : "", gs[i]->backlog, 100 * delivered_frac(gs[i]));
        if (gs[i]->delivered_sum == gs[i]->enqueued_sum)
            SAY(", p50 %.0f ms", gs[i]->p50_median);
    }
    SAY(" (experiment %s, figure `%s-backlog-lateness`). ", bl->name,
        bl->name);
    if (falls)
        SAY("The more keys with a TTL, the fewer of the stream's events came "
            "within the window (%.1f%% at %" PRId64 " pending, %.1f%% at %"
            PRId64 "): Redis publishes `expired` when its sampling expire "
            "cycle finds the key, not when the TTL runs out.%s", 100 * fa,
            a->backlog, 100 * fb, b->backlog, fb < 0.5 ? "  Where most tasks "
            "were not delivered, the p50 of those that were is not "
            "comparable (survivor bias: the keys the cycle reached first), "
            "so it is not quoted." : "");
    else if (later)
        SAY("Every task was delivered at both ends, and the p50 rose from "
            "%.0f ms to %.0f ms: Redis publishes `expired` when its sampling "
            "expire cycle finds the key, not when the TTL runs out.",
            a->p50_median, b->p50_median);
    else
        SAY("Neither the delivered fraction fell (by 10%% or more) nor the "
            "p50 doubled with the number of keys here.");
    return falls || later;
}

/* C18: expiry events come later as keys pile up (expiry-scale), and are
 * lost while no subscriber listens (loss, subscriber-outage). */
static dq_verdict rule_c18(const dq_claim_def *c, const dq_results *r, char *ev,
                       size_t evlen)
{
    const dq_rexp *bl = dq_results_with_plot(r, "backlog-lateness");
    const dq_rgroup *gs[32], *t;
    size_t n = 0, o = 0, *off = &o;
    bool grows = false;
    (void)c;
    for (size_t i = 0; bl != NULL && i < bl->ngroups && n < 32; i++)
        if (strcmp(bl->groups[i].strategy, "expiry") == 0)
            gs[n++] = &bl->groups[i];
    for (size_t i = 1; i < n; i++)   /* by backlog */
        for (size_t j = i; j > 0 && gs[j - 1]->backlog > gs[j]->backlog; j--)
            t = gs[j], gs[j] = gs[j - 1], gs[j - 1] = t;
    if (n < 2)
        SAY("The lateness part needs expiry at two or more backlogs "
            "(experiments/expiry-scale.ini).");
    else
        grows = c18_backlog(bl, gs, n, ev, off, evlen);
    int64_t ol = c18_outage(r, ev, off, evlen);
    if (ol < 0 && n < 2) {
        SAY("  The loss part needs expiry under subscriber-outage "
            "(experiments/loss.ini).");
        return DQ_VERDICT_NOT_MEASURED;
    }
    if (ol < 0)
        SAY("  Not measured: the loss of tasks whose key expires while no "
            "subscriber listens (experiments/loss.ini, subscriber-outage).");
    return grows && ol > 0 ? DQ_VERDICT_HOLDS
           : grows || ol > 0 ? DQ_VERDICT_HOLDS_WITH_CONDITIONS
                             : DQ_VERDICT_DOES_NOT_HOLD;
}

/* ---- The table ---------------------------------------------------------- */

#define TALLY(s, fn) &(const struct dq_claim_args){.strategy = s, .say = fn}
#define PROBES(fn, ...)                                                      \
    &(const struct dq_claim_args){.judge = fn, .reads = {__VA_ARGS__}}
#define READ(probe, ...) {probe, {__VA_ARGS__, NULL}}

const dq_claim_def dq_claims[] = {
    {"C01", "Finding due tasks with ZRANGEBYSCORE and removing them with a "
     "separate ZREM lets two consumers take the same task.",
     "naive with 2 or more consumers: duplicates > 0", rule_tally,
     TALLY("naive", say_c01)},
    {"C02", "Wrapping find-due and remove in one Lua script makes the claim "
     "atomic: no task is processed twice.",
     "lua with many consumers: duplicates = 0", rule_tally,
     TALLY("lua", say_c02)},
    {"C03", "Treating ZREM's reply (1: I removed it) as the claim also stops "
     "duplicates, at the cost of round trips wasted on lost races.",
     "naive-checked with many consumers: duplicates = 0, lost races counted",
     rule_tally, TALLY("naive-checked", say_c03)},
    {"C04", "Polling a sorted set once a second costs Redis almost nothing, "
     "and 100,000 pending tasks are no problem.",
     "idle and backlog experiments: commands/s, CPU, claim latency at 100k "
     "pending", rule_c04, NULL},
    {"C05", "A claim costs O(log N) in the number of pending tasks.",
     "backlog scaling from 1k to 1M pending tasks", rule_c05, NULL},
    {"C06", "A sorted-set score (a double) stores a millisecond Unix "
     "timestamp exactly.",
     "exact round trip of scores; where it stops (us, ns, large ms)",
     rule_probes, PROBES(judge_c06,
                         READ("ms-epoch", "exact", "n", "lo", "hi"),
                         READ("us-epoch", "exact", "n"),
                         READ("ns-epoch", "exact", "n", "max_err"),
                         READ("first-inexact", "first_inexact"),
                         READ("ms-x4096", "first_inexact_ms"))},
    {"C07", "ZPOPMIN pops atomically, so it alone is a correct claim.",
     "zpopmin: what happens to tasks not yet due; loss when a consumer dies "
     "between pop and put-back", rule_probes,
     PROBES(judge_c07, READ("zpopmin-atomic", "duplicates", "missing",
                            "popped", "n", "threads"),
            READ("pop-then-die", "lost", "n"))},
    {"C08", "The set member should be a task id with the payload stored "
     "apart; using the payload as the member merges equal payloads into "
     "one task.", "equal-payload test on both layouts", rule_probes,
     PROBES(judge_c08, READ("payload-member", "members", "due_first",
                            "delivered", "tasks"),
            READ("id-member", "members", "due_first", "delivered",
                 "tasks"))},
    {"C09", "A TTL on the payload key avoids leftovers, but a TTL shorter "
     "than the delay (or the wait in a backlog) loses the task.",
     "payload TTL shorter than the delay: lost count", rule_probes,
     PROBES(judge_c09, READ("ttl-shorter", "lost", "n", "ttl_ms",
                            "delay_ms"),
            READ("ttl-longer", "lost", "n", "ttl_ms", "delay_ms"),
            READ("leftovers", "leftovers", "before", "n"))},
    {"C10", "With polling, lateness lies between 0 and the poll interval, "
     "and a shorter interval costs more CPU.",
     "lateness distribution vs poll_ms; idle cost vs poll_ms", rule_c10,
     NULL},
    {"C11", "Sleeping about 100 ms when nothing is due keeps CPU low without "
     "much harm to lateness.", "idle cost and lateness at poll_ms=100",
     rule_c11, NULL},
    {"C12", "A consumer that dies between taking a task and finishing it "
     "loses the task, unless the task is re-added with a retry time (a "
     "lease).", "kill-consumer: lost > 0 for at-most-once strategies, 0 "
     "for leased ones", rule_c12, NULL},
    {"C13", "Redis runs commands on one thread, so everything done against "
     "it is atomic and concurrency is no concern.",
     "naive duplicates: single commands are atomic, sequences are not",
     rule_tally, TALLY("naive", say_c13)},
    {"C14", "With AOF (appendfsync everysec) delayed tasks survive a Redis "
     "crash, losing at most about one second of writes.",
     "restart-redis with AOF everysec / always / off: lost counts",
     rule_c14, NULL},
    {"C15", "A primary/replica failover can lose a few recent tasks "
     "(replication is asynchronous); WAIT narrows the window.",
     "failover experiment with a replica", NULL, NULL},
    {"C16", "The Redisson design (sorted set, ready list, Pub/Sub; consumers "
     "block in BLPOP) avoids blind polling and delivers on time.",
     "list: idle commands/s and lateness p99", rule_c16, NULL},
    {"C17", "An in-process min-heap (like Java's DelayQueue) inserts and "
     "removes in O(log n), and leader-follower waiting wakes one thread, "
     "not a herd.", "heap: ops/s vs n; wake-ups per delivery", rule_c17,
     NULL},
    {"C18", "Keyspace expiry events can drive a delay queue, but they are "
     "fire-and-forget (lost while no subscriber listens) and fire when "
     "Redis gets round to deleting the key, not at the TTL.",
     "expiry: loss during a subscriber outage; lateness vs number of keys",
     rule_c18, NULL},
    {"C19", "Splitting one big sorted set into buckets (by time or hash), or "
     "sharding on Redis Cluster, raises throughput for very large queues.",
     "bucketed/sharded variant on a local Cluster vs one key", NULL, NULL},
    {"C20", "A sorted set can be capped with MAXLEN like a stream.",
     "Redis's reply to ZADD with MAXLEN (a Streams-only option)", rule_probes,
     PROBES(judge_c20, READ("zadd-maxlen", "rejected", "zcard"),
            READ("xadd-maxlen", "xlen", "added", "maxlen"))},
    {"C21", "Since a consumer can still get a task twice (retries, "
     "redelivery), processing must be idempotent and re-check the business "
     "state.", "at-least-once strategies under faults: redelivered > 0",
     rule_c21, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

dq_verdict dq_claim_decide(const dq_claim_def *c, const dq_results *r,
                           char *ev, size_t evlen)
{
    if (c->rule == NULL) {
        snprintf(ev, evlen, "No experiment measures it yet.  Would decide "
                 "it: %s.", c->decide);
        return DQ_VERDICT_NOT_MEASURED;
    }
    return c->rule(c, r, ev, evlen);
}
