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
#include <string.h>

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
                x->consumers < min_consumers)
                continue;
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
    snprintf(ev, evlen, "naive delivered no duplicate in %zu trials with 2 "
             "to %d consumers%s: the race exists but was not observed here "
             "(more consumers, more tasks or a longer work time widen it).",
             t.trials, t.max_consumers, w);
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
    snprintf(ev, evlen, "lua delivered no duplicate in %zu trials with 2 to "
             "%d consumers (%" PRIu64 " deliveries)%s.  %sNo faults were "
             "injected; the script removes the task as it returns it, so a "
             "consumer that dies afterwards loses it instead (at-most-once, "
             "see C12).", t.trials, t.max_consumers, t.deliveries, w,
             t.max_consumers < 4 ? "Only measured with few consumers.  "
                                 : "");
    return t.max_consumers >= 4 ? DQ_VERDICT_HOLDS
                                : DQ_VERDICT_HOLDS_WITH_CONDITIONS;
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
    snprintf(ev, evlen, "naive showed no duplicate in %zu trials%s, so "
             "these runs do not refute the claim; they do not prove it "
             "either (the interleaving may simply not have occurred).",
             t.trials, w);
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
    /* A thundering herd wakes every waiting consumer per delivery. */
    bool herd = worst_c > 0 && worst >= (double)worst_c / 2.0 && worst > 2.0;
    snprintf(ev, evlen, "Wake-ups per delivery for heap: %s (experiment %s)."
             "  %s  The O(log n) part is not yet measured (needs heap "
             "ops/s vs n).", per, t.exps,
             herd ? "That grows with the number of consumers: a herd."
                  : "That stays at or below about one per delivery as "
                    "consumers are added: no thundering herd.");
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
     NULL},
    {"C04", "Polling a sorted set once a second costs Redis almost nothing, "
     "and 100,000 pending tasks are no problem.",
     "idle and backlog experiments: commands/s, CPU, claim latency at 100k "
     "pending", NULL},
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
     "lateness distribution vs poll_ms; idle cost vs poll_ms", NULL},
    {"C11", "Sleeping about 100 ms when nothing is due keeps CPU low without "
     "much harm to lateness.", "idle cost and lateness at poll_ms=100",
     NULL},
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
     "list: idle commands/s and lateness p99", NULL},
    {"C17", "An in-process min-heap (like Java's DelayQueue) inserts and "
     "removes in O(log n), and leader-follower waiting wakes one thread, "
     "not a herd.", "heap: ops/s vs n; wake-ups per delivery", rule_c17},
    {"C18", "Keyspace expiry events can drive a delay queue, but they are "
     "fire-and-forget (lost while no subscriber listens) and fire when "
     "Redis gets round to deleting the key, not at the TTL.",
     "expiry: loss during a subscriber outage; lateness vs number of keys",
     NULL},
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
