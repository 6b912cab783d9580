/* claims.c -- the claims table and the rules that decide them.
 *
 * CLAIMS.md (the lab's brief) lists what tutorials and interview guides say
 * about delay queues on Redis.  This file restates each claim in dqlab's
 * own words under the same id and, where an experiment measures it, gives a
 * rule that reads the loaded results (results.h) and returns a verdict with
 * the numbers behind it.  Rules never hard-code a figure: every number in
 * the evidence is computed here from the results.  A rule looks for the
 * data it needs in any experiment (not one by name), so a later experiment
 * that measures the same thing adds evidence without touching the rule.
 *
 * Rules of the same shape are one function with parameters in the row
 * (struct dq_claim_args): a tally of one strategy's duplicates over the
 * trials with 2+ consumers (C01, C02, C03, C13), and probe readings
 * (C06-C09, C20).  This file holds the table and those two families; the
 * rules on lateness, cost, the bench and faults, whose logic differs
 * claim by claim, are in claims_rules.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ini.h>

#include "claims_int.h"

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

void dq_claim_tally(const dq_results *r, const char *strategy,
                    dq_tally *t)
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

/* ---- Duplicate tallies: C01, C02, C03, C13 ------------------------------ */

/* "<strategy> delivered N duplicate deliveries in a of b trials with 2 to
 * c consumers" into ev; returns its length. */
static size_t dups_seen(const dq_tally *t, const char *s, char *ev,
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
static size_t dups_none(const dq_tally *t, const char *s,
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
static dq_verdict say_c01(const dq_tally *t, const char *w, char *ev,
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
static dq_verdict say_c02(const dq_tally *t, const char *w, char *ev,
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
static dq_verdict say_c03(const dq_tally *t, const char *w, char *ev,
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
static dq_verdict say_c13(const dq_tally *t, const char *w, char *ev,
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
    dq_tally t;
    char w[512];
    dq_claim_tally(r, c->args->strategy, &t);
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
        const dq_probe_read *rd = &c->args->reads[k];
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

void dq_claim_c07_loss(const dq_results *r, char *buf, size_t len)
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
        dq_claim_c07_loss(r, loss, sizeof loss);
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
     "pending", dq_rule_c04, NULL},
    {"C05", "A claim costs O(log N) in the number of pending tasks.",
     "backlog scaling from 1k to 1M pending tasks", dq_rule_c05, NULL},
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
     "lateness distribution vs poll_ms; idle cost vs poll_ms", dq_rule_c10,
     NULL},
    {"C11", "Sleeping about 100 ms when nothing is due keeps CPU low without "
     "much harm to lateness.", "idle cost and lateness at poll_ms=100",
     dq_rule_c11, NULL},
    {"C12", "A consumer that dies between taking a task and finishing it "
     "loses the task, unless the task is re-added with a retry time (a "
     "lease).", "kill-consumer: lost > 0 for at-most-once strategies, 0 "
     "for leased ones", dq_rule_c12, NULL},
    {"C13", "Redis runs commands on one thread, so everything done against "
     "it is atomic and concurrency is no concern.",
     "naive duplicates: single commands are atomic, sequences are not",
     rule_tally, TALLY("naive", say_c13)},
    {"C14", "With AOF (appendfsync everysec) delayed tasks survive a Redis "
     "crash, losing at most about one second of writes.",
     "restart-redis with AOF everysec / always / off: lost counts",
     dq_rule_c14, NULL},
    {"C15", "A primary/replica failover can lose a few recent tasks "
     "(replication is asynchronous); WAIT narrows the window.",
     "failover experiment with a replica", NULL, NULL},
    {"C16", "The Redisson design (sorted set, ready list, Pub/Sub; consumers "
     "block in BLPOP) avoids blind polling and delivers on time.",
     "list: idle commands/s and lateness p99", dq_rule_c16, NULL},
    {"C17", "An in-process min-heap (like Java's DelayQueue) inserts and "
     "removes in O(log n), and leader-follower waiting wakes one thread, "
     "not a herd.", "heap: ops/s vs n; wake-ups per delivery", dq_rule_c17,
     NULL},
    {"C18", "Keyspace expiry events can drive a delay queue, but they are "
     "fire-and-forget (lost while no subscriber listens) and fire when "
     "Redis gets round to deleting the key, not at the TTL.",
     "expiry: loss during a subscriber outage; lateness vs number of keys",
     dq_rule_c18, NULL},
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
     dq_rule_c21, NULL},
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
