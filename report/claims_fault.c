/* claims_fault.c -- the rules on what faults did (C12, C14, C15, C18,
 * C21, C26: the loss tables of every experiment that injects faults) and
 * on the tutorials' recipes run as written beside dqlab's default (C07's
 * experiment, C24, C25: the same strategy with one option switched).
 *
 * A consumer kill is judged apart from the whole in-process queue dying:
 * the checker counts the one task a killed consumer held and never acked
 * as lost_claimed (checker.h), while a heap or wheel loses everything
 * pending when its only process dies.  A redis-server SIGKILL is a process
 * crash: its AOF writes are still in the kernel's page cache, so it says
 * nothing of a host crash (os-crash, harness/oscrash.h).
 */
#include <math.h>
#include <stdlib.h>
#include <strings.h>

#include "../strategies/dq.h"
#include "claims_int.h"

/* What one fault did to some strategies: the cells of a row of
 * claim_rows.md (faults), over the loss tables' columns whose spec names
 * the fault (and holds its argument); refused and rate over every trial
 * of that spec. */
typedef struct fault_sum {
    size_t cells, trials;
    uint64_t enqueued, lost, lost_claimed, lost_retry, redelivered, kills;
    uint64_t refused;         /* enqueues refused (OOM) in its trials */
    int64_t rate;             /* the highest offered rate of its trials */
    double span;              /* the longest span of writes of a trial
                                 (enqueued / offered rate, s), 0: none */
    char lost_by[512];        /* "lua 2 of 200, naive 3 of 200" */
    char clean[512];          /* "list (0 of 200), ...": nothing lost */
    char exp[64];             /* the first experiment with such a cell */
} fault_sum;

/* Which cells (a row of claim_rows.md faults; NULL: any): the fault and
 * its argument ("!x": without x), flags with all of need and none of
 * not, only that strategy's cells (or, only false, all but its), rows
 * whose label holds row, trials whose failed work was retried that way
 * (trials.csv retry: "readd" or "nack"). */
typedef struct cell_filter {
    const char *fault, *arg;
    unsigned need, not;
    const char *strategy;
    bool only;
    const char *row;
    const char *retry;
} cell_filter;

/* Is spec the fault, holding arg (NULL: any; "!x": not holding x)? */
static bool spec_is(const char *spec, const char *fault, const char *arg)
{
    size_t fl = strlen(fault);
    if (strncmp(spec, fault, fl) != 0 ||
        (spec[fl] != '\0' && spec[fl] != ':'))
        return false;
    if (arg != NULL && arg[0] == '!')
        return strstr(spec + fl, arg + 1) == NULL;
    return arg == NULL || strstr(spec + fl, arg) != NULL;
}

static bool cell_fits(const dq_loss_cell *x, const char *row, cell_filter f)
{
    return (x->flags & f.need) == f.need && (x->flags & f.not) == 0 &&
           (f.strategy == NULL ||
            (strcmp(x->strategy, f.strategy) == 0) == f.only) &&
           (f.row == NULL || strstr(row, f.row) != NULL) &&
           (f.retry == NULL || (x->first != NULL && x->first->retry != NULL &&
                                strcmp(x->first->retry, f.retry) == 0));
}

/* Row r of lt under the fault into s. */
static void fault_row(const dq_loss_table *lt, size_t r, cell_filter f,
                      fault_sum *s)
{
    uint64_t enq = 0, lost = 0, n = 0;
    for (size_t c = 0; c < lt->nfaults; c++) {
        const dq_loss_cell *x = dq_loss_cell_at(lt, r, c);
        if (x == NULL || !spec_is(lt->faults[c], f.fault, f.arg) ||
            !cell_fits(x, lt->rows[r], f))
            continue;
        n++;
        enq += x->enqueued;
        lost += x->lost;
        s->trials += x->trials;
        s->lost_claimed += x->lost_claimed;
        s->lost_retry += x->lost_retry;
        s->redelivered += x->redelivered;
        s->kills += x->kills;
    }
    if (n == 0)
        return;
    s->cells += n;
    s->enqueued += enq;
    s->lost += lost;
    char *list = lost > 0 ? s->lost_by : s->clean;
    size_t l = strlen(list);
    snprintf(list + l, sizeof s->clean - l, lost > 0 ? "%s%s %" PRIu64
             " of %" PRIu64 : "%s%s (%" PRIu64 " of %" PRIu64 ")",
             l ? ", " : "", lt->rows[r], lost, enq);
}

/* An empty cell: any (NULL). */
static const char *any(const char *cell)
{
    return cell[0] ? cell : NULL;
}

/* The flags named in words (dq_flag_name: "at-most-once needs-redis")
 * into *flags; false, with the word in bad, at one that names none. */
static bool flags_of(char *words, unsigned *flags, char *bad, size_t len)
{
    char *save = NULL;
    *flags = 0;
    for (char *w = strtok_r(words, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save)) {
        unsigned b;
        if (!dq_flag_parse(w, &b)) {
            snprintf(bad, len, "%s is no strategy flag (dq.h)", w);
            return false;
        }
        *flags |= b;
    }
    return true;
}

/* The filter of faults row q (its cells written on by strtok); false
 * with why in bad when the row is not 8 cells with flag names. */
static bool filter_of(dq_crow *q, cell_filter *f, char *bad, size_t len)
{
    if (q->n != 8) {
        snprintf(bad, len, "the table has 8 columns");
        return false;
    }
    return flags_of(q->cell[3], &f->need, bad, len) &&
           flags_of(q->cell[4], &f->not, bad, len);
}

bool dq_fault_row_ok(const dq_crow *q, char *bad, size_t len)
{
    dq_crow c = *q;
    cell_filter f;
    return filter_of(&c, &f, bad, len);
}

/* The cells of row name of claim_rows.md (faults) over every experiment
 * with a loss table; all zero when the row is bad (t->err says why). */
static void fault_total(dq_ev *ev, const dq_results *r, const char *name,
                        fault_sum *s)
{
    const dq_tuse *u = DQ_ROWS("faults");
    dq_crow q;
    cell_filter f;
    char bad[240];
    memset(s, 0, sizeof *s);
    if (dq_claim_rows(ev, u, name, &q, 1) < 0)
        return;
    if (!filter_of(&q, &f, bad, sizeof bad)) {
        dq_row_bad(ev, u, q.line, bad);
        return;
    }
    f.fault = q.cell[1];
    f.arg = any(q.cell[2]);
    f.only = q.cell[5][0] != '!';
    f.strategy = any(q.cell[5] + !f.only);
    f.row = any(q.cell[6]);
    f.retry = any(q.cell[7]);
    for (size_t i = 0; i < r->nexps; i++) {
        const dq_rexp *e = &r->exps[i];
        size_t before = s->cells;
        for (size_t row = 0; e->loss != NULL && row < e->loss->nrows; row++)
            fault_row(e->loss, row, f, s);
        if (s->cells > before && s->exp[0] == '\0')
            snprintf(s->exp, sizeof s->exp, "%s", e->name);
        for (size_t t = 0; t < e->ntrials; t++)
            if (spec_is(e->trials[t].fault, f.fault, f.arg)) {
                s->refused += e->trials[t].enqueue_refused;
                const dq_trialrow *x = &e->trials[t];
                double w = x->rate > 0 ? (double)x->enqueued /
                                         (double)x->rate : 0;
                s->rate = x->rate > s->rate ? x->rate : s->rate;
                s->span = w > s->span ? w : s->span;
            }
    }
}

/* The evidence says what the claim needs (text needs) when no experiment
 * injects faults; true when one does. */
static bool has_faults(dq_ev *ev, const dq_results *r, const dq_tuse *needs)
{
    char what[256] = "";
    if (dq_loss_experiment(r) != NULL)
        return true;
    dq_tset(ev->t, what, sizeof what, needs, "");
    (void)NONE(loss_none, "needs=%s", what);
    return false;
}

/* ---- C12, C26: a consumer killed after it took a task ------------------- */

typedef struct kills {
    fault_sum amo, proc, lease;   /* Redis at-most-once, in-process, leased */
} kills;

/* Kills while a consumer held a task it had claimed.  Not before-retry:
 * that kill comes after the work failed, and with a re-add after the ack
 * that removed the task (a lease holds nothing then), so what it loses is
 * the retry policy's (C26), not the strategy's. */
static void kill_sums(dq_ev *ev, const dq_results *r, kills *k)
{
    fault_total(ev, r, "held_amo", &k->amo);
    fault_total(ev, r, "held_process", &k->proc);
    fault_total(ev, r, "held_lease", &k->lease);
}

/* C12: a consumer dying after the claim loses the task, unless leased. */
DQ_RULE(dq_rule_c12)
{
    kills k;
    char by[600] = "";
    (void)c;
    if (!has_faults(ev, r, DQ_TUSE("claims.c12_needs", "")))
        return DQ_VERDICT_NOT_MEASURED;
    kill_sums(ev, r, &k);
    if (k.amo.cells == 0 || k.lease.cells == 0)
        return NONE(c12_none, "");
    if (k.lease.lost_by[0])
        snprintf(by, sizeof by, " (%s)", k.lease.lost_by);
    TSAY(c12, "exp=%s kills=%" PRIu64 " held=%" PRIu64 " others=%" PRIu64
         " n=%" PRIu64 " by=%s lkills=%" PRIu64 " llost=%" PRIu64 " ln=%"
         PRIu64 " lby=%s red=%" PRIu64, k.amo.exp, k.amo.kills,
         k.amo.lost_claimed, k.amo.lost - k.amo.lost_claimed, k.amo.enqueued,
         k.amo.lost_by[0] ? k.amo.lost_by : "-", k.lease.kills, k.lease.lost,
         k.lease.enqueued, by, k.lease.redelivered);
    if (k.proc.cells)
        TSAY(c12_in_process, "  lost=%" PRIu64 " n=%" PRIu64 " by=%s",
             k.proc.lost, k.proc.enqueued, k.proc.lost_by[0]
             ? k.proc.lost_by : "-");
    SAMPLE(c12_sample, "trials=%zu kills=%" PRIu64 " lkills=%" PRIu64
           " tasks=%" PRIu64, k.amo.trials + k.lease.trials, k.amo.kills,
           k.lease.kills, k.amo.enqueued + k.lease.enqueued);
    WILSON(ev->res->interval, iv_held, k.amo.lost_claimed, k.amo.kills);
    WILSON(ev->res->interval, iv_lease_lost, k.lease.lost, k.lease.enqueued);
    FIGURE("tab-%s", k.amo.exp);
    if (k.lease.lost > 0)
        return TSAY(c12_lease_lost, "  "), DQ_VERDICT_DOES_NOT_HOLD;
    if (k.amo.lost_claimed == 0)
        return TSAY(c12_no_amo_lost, "  "), DQ_VERDICT_PARTLY_MEASURED;
    return TSAY(c12_holds, "  "), DQ_VERDICT_HOLDS;
}

/* C26 as the recipe is written: failed work re-added (ack, then enqueue at
 * now + interval) against nacked, consumers killed right before the retry
 * (kill-consumer:before-retry).  Returns -1 when no experiment ran both,
 * else the verdict. */
static int c26_retry(dq_ev *ev, const dq_results *r)
{
    fault_sum readd, nack;
    fault_total(ev, r, "retry_readd", &readd);
    fault_total(ev, r, "retry_nack", &nack);
    if (readd.kills == 0 || nack.kills == 0)
        return -1;
    TSAY(c26_retry, "exp=%s kills=%" PRIu64 " lost=%" PRIu64 " n=%" PRIu64
         " by=%s nexp=%s nkills=%" PRIu64 " nlost=%" PRIu64 " nn=%" PRIu64,
         readd.exp, readd.kills, readd.lost_retry, readd.enqueued,
         readd.lost_by[0] ? readd.lost_by : "-", nack.exp, nack.kills,
         nack.lost, nack.enqueued);
    SAMPLE(c26_sample_retry, "trials=%zu kills=%" PRIu64 " nkills=%" PRIu64
           " tasks=%" PRIu64, readd.trials + nack.trials, readd.kills,
           nack.kills, readd.enqueued + nack.enqueued);
    WILSON(ev->res->interval, iv_readd_lost, readd.lost_retry, readd.kills);
    WILSON(ev->res->interval, iv_nack_lost, nack.lost, nack.kills);
    FIGURE("tab-%s", readd.exp);
    if (readd.lost_retry > 0 && nack.lost == 0)
        return TSAY(c26_retry_loses, "  "), DQ_VERDICT_DOES_NOT_HOLD;
    return TSAY(c26_retry_open, "  "), DQ_VERDICT_PARTLY_MEASURED;
}

/* C26: re-adding a failed task with score now + retry gives retries: the
 * re-add is one more step of the consumer, so a consumer that dies first
 * loses the task; a retry time kept in Redis (a lease) does not.  Decided
 * by the retry experiments when they ran; else the nearest measurement,
 * consumer kills while a task was held. */
DQ_RULE(dq_rule_c26)
{
    kills k;
    int v;
    (void)c;
    if (!has_faults(ev, r, DQ_TUSE("claims.c26_needs", "")))
        return DQ_VERDICT_NOT_MEASURED;
    if ((v = c26_retry(ev, r)) >= 0)
        return (dq_verdict)v;
    kill_sums(ev, r, &k);
    if (k.amo.kills == 0 || k.lease.kills == 0)
        return NONE(c26_none, "");
    TSAY(c26, "held=%" PRIu64 " kills=%" PRIu64 " red=%" PRIu64 " lkills=%"
         PRIu64 " exp=%s", k.amo.lost_claimed, k.amo.kills,
         k.lease.redelivered, k.lease.kills, k.amo.exp);
    SAMPLE(c26_sample, "kills=%" PRIu64 " lkills=%" PRIu64, k.amo.kills,
           k.lease.kills);
    WILSON(ev->res->interval, iv_held, k.amo.lost_claimed, k.amo.kills);
    WILSON(ev->res->interval, iv_red_kill, k.lease.redelivered,
           k.lease.kills);
    FIGURE("tab-%s", k.amo.exp);
    return DQ_VERDICT_PARTLY_MEASURED;
}

/* ---- C14, C15: a crashed server, a failover ------------------------------ */

/* The bound C14's host crash is held to: Redis delays an everysec fsync
 * by up to 2 s (harness/oscrash.h). */
#define C14_LAG_S 2.0

/* C14's host-crash part (os-crash): everysec against always.  Returns -1
 * when not run, else whether always kept every task and everysec lost no
 * more than the tasks enqueued in its last C14_LAG_S seconds; 2 when it
 * did but no trial wrote for longer than C14_LAG_S, so no crash of the
 * sample could have lost more (the bound not tested). */
static int c14_host(dq_ev *ev, const dq_results *r)
{
    fault_sum every, always;
    fault_total(ev, r, "host_every", &every);
    fault_total(ev, r, "host_always", &always);
    if (every.cells == 0 || always.cells == 0)
        return TSAY(c14_host_none, "  "), -1;
    int64_t rate = every.rate;   /* the offered rate of the everysec trials */
    double secs = rate > 0 && every.trials ? (double)every.lost /
                  (double)every.trials / (double)rate : -1;
    TSAY(c14_host, "  exp=%s lost=%" PRIu64 " n=%" PRIu64 " alost=%" PRIu64
         " an=%" PRIu64, every.exp, every.lost, every.enqueued, always.lost,
         always.enqueued);
    if (secs < 0)
        TSAY(c14_host_norate, "  ");
    else
        DQ_TCATP(ev->t, ev->buf, ev->len, &ev->off, secs <= C14_LAG_S,
                 "claims.c14_host_secs", "claims.c14_host_secs_over",
                 "  rate=%" PRId64 " secs=%.2f trials=%zu", rate, secs,
                 every.trials);
    bool short_span = secs >= 0 && every.span <= C14_LAG_S;
    if (short_span)
        TSAY(c14_host_span, "  span=%.2f lag=%.0f", every.span, C14_LAG_S);
    WILSON(ev->res->interval, iv_host_everysec, every.lost, every.enqueued);
    WILSON(ev->res->interval, iv_host_always, always.lost, always.enqueued);
    SAMPLE(c14_sample_host, "; trials=%zu tasks=%" PRIu64, every.trials +
           always.trials, every.enqueued + always.enqueued);
    FIGURE("tab-%s", every.exp);
    bool seen = always.lost == 0 && every.lost > 0;
    if (seen && secs < 0)
        return 3;    /* no offered rate: the bound is not compared */
    bool ok = seen && secs <= C14_LAG_S;
    return ok && short_span ? 2 : ok;
}

/* C14: AOF everysec keeps delayed tasks across a crash, losing ~1 s.  For
 * the Redis strategies whose tasks wait in Redis data; expiry waits on a
 * notification nobody hears during the restart (C18): apart. */
DQ_RULE(dq_rule_c14)
{
    fault_sum no, every, always;
    (void)c;
    if (!has_faults(ev, r, DQ_TUSE("claims.c14_needs", "")))
        return DQ_VERDICT_NOT_MEASURED;
    fault_total(ev, r, "restart_off", &no);
    fault_total(ev, r, "restart_every", &every);
    fault_total(ev, r, "restart_always", &always);
    if (every.cells == 0) {
        TSAY(c14_no_everysec, " ");
    } else {
        char modes[512] = "";
        size_t mo = 0;
        const fault_sum *ms[3] = {&no, &every, &always};
        static const char *const mw[3] = {"no persistence", "AOF everysec",
                                          "AOF always"};
        for (size_t m = 0; m < 3; m++)   /* the modes that ran */
            if (ms[m]->cells)
                DQ_TCAT(ev->t, modes, sizeof modes, &mo, "claims.c14_mode",
                        "%smode=%s lost=%" PRIu64 " n=%" PRIu64,
                        mo ? ", " : "", mw[m], ms[m]->lost, ms[m]->enqueued);
        TSAY(c14_process, "exp=%s modes=%s", every.exp, modes);
        WILSON(ev->res->interval, iv_proc_everysec, every.lost,
               every.enqueued);
        SAMPLE(c14_sample, "trials=%zu tasks=%" PRIu64, every.trials,
               every.enqueued);
        FIGURE("tab-%s", every.exp);
    }
    int host = c14_host(ev, r);
    if (host < 0 && every.cells == 0)
        return DQ_VERDICT_NOT_MEASURED;
    if (host == 0 || (every.cells && every.lost > 0 && host < 0))
        return TSAY(c14_not, "  "), DQ_VERDICT_DOES_NOT_HOLD;
    if (host < 0)
        return TSAY(c14_partly, "  "), DQ_VERDICT_PARTLY_MEASURED;
    if (host == 2)
        return TSAY(c14_partly_span, "  lag=%.0f", C14_LAG_S),
               DQ_VERDICT_PARTLY_MEASURED;
    if (host == 3)
        return TSAY(c14_partly_norate, "  lag=%.0f", C14_LAG_S),
               DQ_VERDICT_PARTLY_MEASURED;
    return TSAY(c14_holds, "  "), DQ_VERDICT_HOLDS;
}

/* C15: a failover loses recent writes; WAIT narrows it.  The failover
 * fault's cells of strategies run with wait=1 against those without. */
DQ_RULE(dq_rule_c15)
{
    fault_sum w0, w1;
    (void)c;
    fault_total(ev, r, "replica_all", &w0);
    fault_total(ev, r, "replica_wait", &w1);
    if (w0.cells == 0)
        return dq_claim_unmeasured(c, ev);
    uint64_t l0 = w0.lost - w1.lost, n0 = w0.enqueued - w1.enqueued;
    TSAY(c15, "exp=%s lost=%" PRIu64 " n=%" PRIu64 " wlost=%" PRIu64 " wn=%"
         PRIu64, w0.exp, l0, n0, w1.lost, w1.enqueued);
    SAMPLE(c15_sample, "trials=%zu tasks=%" PRIu64, w0.trials, w0.enqueued);
    WILSON(ev->res->interval, iv_failover, l0, n0);
    if (w1.cells)
        WILSON(ev->res->interval, iv_failover_wait, w1.lost, w1.enqueued);
    FIGURE("tab-%s", w0.exp);
    if (w1.cells == 0)
        return TSAY(c15_no_wait, "  "), DQ_VERDICT_PARTLY_MEASURED;
    if (l0 == 0)
        return TSAY(c15_none_lost, "  "), DQ_VERDICT_PARTLY_MEASURED;
    TSAY(c15_tolerance, "%s", "  ");
    /* "a few" has no bound of its own: how many a failover loses is the
     * share of writes the replica had not applied, which the fault set */
    return w1.lost * n0 < l0 * w1.enqueued
               ? (TSAY(c15_holds, "  pct=%.1f", 100.0 * (double)l0 /
                       (double)n0), DQ_VERDICT_HOLDS_WITHIN)
               : (TSAY(c15_not, "  "), DQ_VERDICT_DOES_NOT_HOLD);
}

/* ---- C23: eviction ------------------------------------------------------ */

/* C23: an eviction policy such as allkeys-lru protects the queue from
 * running out of memory.  Decided from the evict fault's cells: with
 * allkeys-lru the server makes room by deleting keys, queue keys among
 * them, so tasks vanish without an error; noeviction refuses the writes
 * instead (the producer knows). */
DQ_RULE(dq_rule_c23)
{
    fault_sum lru, vol, noe;
    fault_total(ev, r, "evict_lru", &lru);
    fault_total(ev, r, "evict_volatile", &vol);
    fault_total(ev, r, "evict_none", &noe);
    if (lru.cells == 0)
        return dq_claim_unmeasured(c, ev);
    TSAY(c23, "exp=%s lost=%" PRIu64 " n=%" PRIu64 " vlost=%" PRIu64
         " vn=%" PRIu64 " nlost=%" PRIu64 " nn=%" PRIu64 " refused=%" PRIu64,
         lru.exp, lru.lost, lru.enqueued, vol.lost, vol.enqueued, noe.lost,
         noe.enqueued, noe.refused);
    SAMPLE(c23_sample, "trials=%zu tasks=%" PRIu64,
           lru.trials + vol.trials + noe.trials,
           lru.enqueued + vol.enqueued + noe.enqueued);
    WILSON(ev->res->interval, iv_evict, lru.lost, lru.enqueued);
    if (noe.cells)
        WILSON(ev->res->interval, iv_evict_noe, noe.lost, noe.enqueued);
    FIGURE("tab-%s", lru.exp);
    if (lru.lost > 0)
        return TSAY(c23_not, "  "), DQ_VERDICT_DOES_NOT_HOLD;
    return TSAY(c23_none_lost, "  "), DQ_VERDICT_PARTLY_MEASURED;
}

/* ---- C21: redeliveries under faults -------------------------------------- */

/* What C21 counts: the at-least-once cells under a fault of every loss
 * table, and the work they ran twice (trials.csv processed_twice) split by
 * cause as each loss section's side table splits it: in a strategy's cells
 * of a fault where the table shows duplicates the queue delivered the task
 * again (a claim or an enqueue the fault lost or repeated), elsewhere the
 * lease ran out while the first consumer still worked. */
typedef struct c21_sum {
    size_t cells, trials, lb, ld;
    uint64_t red, dup, enq;
    char by[1024], dby[1024], exps[256];
    uint64_t twice[2];             /* [0] lease ran out, [1] repeated */
    size_t twice_trials, wl[2], el[2];
    char wby[2][1024], wexps[2][256];
} c21_sum;

/* Appends experiment name to the list l (of *off bytes) unless it ends
 * it already (the callers add one experiment's items in a row). */
static void c21_exp(char *l, size_t len, size_t *off, const char *name)
{
    const char *last = strrchr(l, ' ');
    last = last ? last + 1 : l;
    if (*off == 0 || strcmp(last, name) != 0)
        dq_append(l, len, off, "%s%s", *off ? ", " : "", name);
}

/* Whether strategy s's cells of column f of lt hold duplicates. */
static bool c21_duplicated(const dq_loss_table *lt, const char *s, size_t f)
{
    for (size_t row = 0; row < lt->nrows; row++) {
        const dq_loss_cell *y = dq_loss_cell_at(lt, row, f);
        if (y != NULL && strcmp(y->strategy, s) == 0 && y->duplicated > 0)
            return true;
    }
    return false;
}

/* Adds the work strategy s ran twice under spec in e (its trials with a
 * verdict, the cells' sample) to *m, under its cause. */
static void c21_twice_of(dq_ev *ev, const dq_rexp *e, const char *s,
                         size_t f, c21_sum *m)
{
    const char *spec = e->loss->faults[f];
    uint64_t n = 0;
    size_t trials = 0;
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_trialrow *t = &e->trials[i];
        if (strcmp(t->strategy, s) != 0 || strcmp(t->fault, spec) != 0 ||
            (e->logs != NULL && dq_check_no_verdict(&e->logs[i].check)))
            continue;
        n += t->processed_twice;
        trials += t->processed_twice > 0;
    }
    if (n == 0)
        return;
    int k = c21_duplicated(e->loss, s, f);
    m->twice[k] += n;
    m->twice_trials += trials;
    c21_exp(m->wexps[k], sizeof m->wexps[k], &(size_t){strlen(m->wexps[k])},
            e->name);
    DQ_TCAT(ev->t, m->wby[k], sizeof m->wby[k], &m->wl[k], "claims.c21_item",
            "%srow=%s fault=%s n=%" PRIu64, m->wl[k] ? ", " : "", s, spec, n);
}

/* Adds cell (row, f) of e's loss table to *m, and the work its strategy
 * ran twice under that fault once per strategy (rows of one strategy
 * with other options share it, as in the side table). */
static void c21_cell(dq_ev *ev, const dq_rexp *e, size_t row, size_t f,
                     c21_sum *m)
{
    const dq_loss_table *lt = e->loss;
    const dq_loss_cell *x = dq_loss_cell_at(lt, row, f);
    bool first = true;
    if (x == NULL || !(x->flags & DQ_G_AT_LEAST_ONCE))
        return;
    for (size_t q = 0; q < row && first; q++) {
        const dq_loss_cell *y = dq_loss_cell_at(lt, q, f);
        first = y == NULL || strcmp(y->strategy, x->strategy) != 0;
    }
    m->cells++;
    m->trials += x->trials;
    m->red += x->redelivered;
    m->dup += x->duplicated;
    m->enq += x->enqueued;
    /* The sample named is the sample counted: every experiment with a
     * cell here, whether it delivered anything twice or not. */
    c21_exp(m->exps, sizeof m->exps, &(size_t){strlen(m->exps)}, e->name);
    if (x->redelivered)
        DQ_TCAT(ev->t, m->by, sizeof m->by, &m->lb, "claims.c21_item",
                "%srow=%s fault=%s n=%" PRIu64, m->lb ? ", " : "",
                lt->rows[row], lt->faults[f], x->redelivered);
    if (x->duplicated)
        DQ_TCAT(ev->t, m->dby, sizeof m->dby, &m->ld, "claims.c21_item",
                "%srow=%s fault=%s n=%" PRIu64, m->ld ? ", " : "",
                lt->rows[row], lt->faults[f], x->duplicated);
    if (first)
        c21_twice_of(ev, e, x->strategy, f, m);
}

/* The work run twice, by cause, said when any ran twice. */
static void c21_twice(dq_ev *ev, const c21_sum *m)
{
    uint64_t n = m->twice[0] + m->twice[1];
    if (n == 0)
        return;
    TSAY(c21_twice, "  n=%" PRIu64 " tasks=%" PRIu64 " trials=%zu ts=%s", n,
         m->enq, m->twice_trials, dq_s(m->twice_trials));
    if (m->twice[0] > 0)
        TSAY(c21_twice_lease, "  n=%" PRIu64 " es=%s exps=%s by=%s",
             m->twice[0], strchr(m->wexps[0], ',') ? "s" : "", m->wexps[0],
             m->wby[0]);
    if (m->twice[1] > 0)
        TSAY(c21_twice_repeat, "  n=%" PRIu64 " es=%s exps=%s by=%s",
             m->twice[1], strchr(m->wexps[1], ',') ? "s" : "", m->wexps[1],
             m->wby[1]);
}

/* C21: at-least-once consumers do get tasks twice under faults. */
DQ_RULE(dq_rule_c21)
{
    c21_sum m;
    const char *exp = "";
    (void)c;
    memset(&m, 0, sizeof m);
    if (!has_faults(ev, r, DQ_TUSE("claims.c21_needs", "")))
        return DQ_VERDICT_NOT_MEASURED;
    for (size_t i = 0; i < r->nexps; i++) {
        const dq_loss_table *lt = r->exps[i].loss;
        size_t before = m.cells;
        for (size_t f = 0; lt != NULL && f < lt->nfaults; f++)
            for (size_t row = 0; strcmp(lt->faults[f], "none") != 0 &&
                                 row < lt->nrows; row++)
                c21_cell(ev, &r->exps[i], row, f, &m);
        if (before == 0 && m.cells > 0)
            exp = r->exps[i].name;
    }
    if (m.cells == 0)
        return NONE(c21_none, "");
    TSAY(c21, "es=%s exps=%s trials=%zu ts=%s n=%" PRIu64 " second=%" PRIu64
         " ss=%s red=%" PRIu64 " by=%s%s%s", strchr(m.exps, ',') ? "s" : "",
         m.exps, m.trials, dq_s(m.trials), m.enq, m.red + m.dup,
         dq_s(m.red + m.dup), m.red, m.by[0] ? " (" : "", m.by,
         m.by[0] ? ")" : "");
    if (m.dup > 0)
        TSAY(c21_dup, "  dup=%" PRIu64 " by=%s", m.dup, m.dby);
    c21_twice(ev, &m);
    SAMPLE(c21_sample, "trials=%zu tasks=%" PRIu64, m.trials, m.enq);
    WILSON(ev->res->interval, iv_red, m.red, m.enq);
    if (m.twice[0] + m.twice[1] > 0)
        WILSON(ev->res->interval, iv_twice, m.twice[0] + m.twice[1], m.enq);
    FIGURE("tab-%s", exp);
    if (m.red + m.dup > 0)
        return TSAY(c21_idempotent, "%s", "  "), DQ_VERDICT_HOLDS;
    return TSAY(c21_no_repeat, "%s", "  "), DQ_VERDICT_PARTLY_MEASURED;
}

/* ---- C18: expiry events -------------------------------------------------- */

/* C18's outage part: expiry's losses under a subscriber outage beside the
 * other strategies'.  -1 when not measured, else expiry's lost count. */
static int64_t c18_outage(dq_ev *ev, const dq_results *r)
{
    fault_sum all, ex;
    fault_total(ev, r, "outage", &all);
    fault_total(ev, r, "outage_expiry", &ex);
    if (ex.cells == 0)
        return -1;
    TSAY(c18_outage, "  exp=%s lost=%" PRIu64 " n=%" PRIu64 " by=%s "
         "clean=%s", ex.exp, ex.lost, ex.enqueued, all.lost_by[0]
         ? all.lost_by : "-", all.clean[0] ? all.clean : "-");
    WILSON(ev->res->interval, iv_outage, ex.lost, ex.enqueued);
    SAMPLE(c18_sample_outage, "; trials=%zu tasks=%" PRIu64, ex.trials,
           ex.enqueued);
    return (int64_t)ex.lost;
}

/* C18's lateness part: expiry's delivered fraction at the fewest and most
 * pending keys (Wilson intervals), and whether it fell by 10% or more.
 * Where most tasks were not delivered, the p50 of those that were is
 * survivor biased (the keys the expire cycle reached first), so the
 * fraction decides.  -1 not measured, else 1 it fell (or the p50 more
 * than doubled with every task delivered), 0 neither. */
static int c18_backlog(dq_ev *ev, const dq_rexp *bl)
{
    const dq_rgroup *a, *b;
    dq_backlog_range(bl, "expiry", INT64_MIN, &a, &b);
    if (a == NULL || a == b || a->enqueued_sum == 0 || b->enqueued_sum == 0)
        return TSAY(c18_backlog_none, "  "), -1;
    double fa = (double)a->delivered_sum / (double)a->enqueued_sum;
    double fb = (double)b->delivered_sum / (double)b->enqueued_sum;
    bool falls = fb < fa * 0.9;
    bool later = a->delivered_sum == a->enqueued_sum &&
                 b->delivered_sum == b->enqueued_sum &&
                 b->p50_median > 2 * a->p50_median;
    TSAY(c18_stream, "delay=%s grace=%s a=%" PRId64 " fa=%.1f b=%" PRId64
         " fb=%.1f exp=%s ", dq_rexp_meta(bl, "delay_ms"),
         dq_rexp_meta(bl, "grace_ms"), a->backlog, 100 * fa, b->backlog,
         100 * fb, bl->name);
    WILSON(ev->res->interval, iv_delivered_lo, a->delivered_sum,
           a->enqueued_sum);
    WILSON(ev->res->interval, iv_delivered_hi, b->delivered_sum,
           b->enqueued_sum);
    SAMPLE(c18_sample_bl, "trials=%zu tasks=%" PRIu64 " exp=%s", b->n,
           b->enqueued_sum, bl->name);
    FIGURE("fig-%s-backlog-lateness", bl->name);
    if (falls)
        TSAY(c18_falls, "  ");
    else if (later)
        TSAY(c18_later, "  a=%.0f b=%.0f", a->p50_median, b->p50_median);
    else
        TSAY(c18_neither, "  ");
    return falls || later;
}

/* C18: expiry events come later as keys pile up (expiry-scale), and are
 * lost while no subscriber listens (loss, subscriber-outage). */
DQ_RULE(dq_rule_c18)
{
    (void)c;
    int grows = c18_backlog(ev, dq_results_with_plot(r, "backlog-lateness"));
    int64_t ol = c18_outage(ev, r);
    if (ol < 0 && grows < 0)
        return TSAY(c18_loss_none, "%s", "  "), DQ_VERDICT_NOT_MEASURED;
    if (ol == 0 || grows == 0)
        return TSAY(c18_not, "  "), DQ_VERDICT_DOES_NOT_HOLD;
    if (ol < 0 || grows < 0)
        return TSAY(c18_partly, "  "), DQ_VERDICT_PARTLY_MEASURED;
    return DQ_VERDICT_HOLDS;
}

/* ---- Recipes as the tutorials write them: C07, C24, C25 ----------------- */

/* The values of a recipe's text (claims.recipe_*): the variant, its count
 * of n over its trials, its median lateness p50, the default's count of
 * n, the experiment. */
#define RECIPE_FMT                                                           \
    "label=%s k=%" PRIu64 " n=%" PRIu64 " trials=%zu p50=%.0f dk=%" PRIu64  \
    " dn=%" PRIu64 " exp=%s"

typedef struct recipe_sum {
    size_t trials;
    uint64_t enqueued, count;      /* early or lost */
    double p50[64];                /* lateness p50 per trial */
    size_t np50;
    const dq_rexp *e;
    char label[160];
} recipe_sum;

/* A claim's row of claim_rows.md (recipes): the strategy (NULL: any),
 * the option, its default, the recipe's value (NULL: any other), whether
 * it counts early deliveries (else lost tasks). */
typedef struct recipe {
    const char *strategy, *option, *dflt, *recipe;
    bool early;
} recipe;

/* What the variants of the strategy with the option = value (or, value
 * NULL, any value but the default) added up to, over the experiments
 * without faults. */
static void recipe_of(const dq_results *r, const recipe *a,
                      const char *value, recipe_sum *s)
{
    char v[64];
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < r->nexps; i++) {
        const dq_rexp *e = &r->exps[i];
        for (size_t j = 0; !dq_loss_is(e) && j < e->ntrials; j++) {
            const dq_trialrow *t = &e->trials[j];
            if ((a->strategy && strcmp(t->strategy, a->strategy) != 0) ||
                !dq_options_get(t->options, a->option, v, sizeof v) ||
                (value ? strcmp(v, value) != 0 : strcmp(v, a->dflt) == 0))
                continue;
            if (s->e == NULL)
                snprintf(s->label, sizeof s->label, "%s%s%s=%s",
                         a->strategy ? a->strategy : "", a->strategy ? " "
                         : "", a->option, v);
            s->e = s->e ? s->e : e;
            s->trials++;
            /* early is a share of the deliveries (a repeat can be early
             * too), lost one of the tasks */
            s->enqueued += a->early ? t->deliveries : t->enqueued;
            s->count += a->early ? t->early : t->lost;
            if (s->np50 < 64 && t->delivered)
                s->p50[s->np50++] = t->lateness_p50_ms;
        }
    }
}

/* A recipe claim: the recipe against dqlab's default, counted early (or
 * lost); the tutorials' promise broken when the recipe shows any.  The
 * texts are claims.recipe_<id>. */
DQ_RULE(dq_rule_recipe)
{
    static const dq_tuse said[3] DQ_TUSES = {
        {"claims.recipe_c07", RECIPE_FMT}, {"claims.recipe_c24", RECIPE_FMT},
        {"claims.recipe_c25", RECIPE_FMT}};
    const dq_tuse *u = &said[0];
    dq_crow row;
    recipe_sum x, d;
    while (u < &said[3] && strcasecmp(u->name + 14, c->id) != 0)
        u++;
    if (u == &said[3]) {   /* a claim of the table given no text here */
        if (ev->t->err[0] == '\0')
            snprintf(ev->t->err, sizeof ev->t->err, "claims_fault.c: "
                     "dq_rule_recipe has no text for claim %.16s "
                     "(claims.recipe_<id>)", c->id);
        return DQ_VERDICT_NOT_MEASURED;
    }
    if (dq_claim_rows(ev, DQ_ROWS("recipes"), c->id, &row, 1) < 0)
        return DQ_VERDICT_NOT_MEASURED;
    const recipe a = {any(row.cell[1]), row.cell[2], row.cell[3],
                      any(row.cell[4]), strcmp(row.cell[5], "early") == 0};
    recipe_of(r, &a, a.recipe, &x);
    recipe_of(r, &a, a.dflt, &d);
    if (x.trials == 0 && ev->off == 0)
        return NONE(recipe_none, "option=%s", a.option);
    if (x.trials == 0)   /* after other evidence (C07's probes) */
        return TSAY(recipe_none, "  option=%s", a.option),
               DQ_VERDICT_NOT_MEASURED;
    double p50 = dq_median(x.p50, x.np50);
    dq_tcat(ev->t, ev->buf, ev->len, &ev->off, u, "%s" RECIPE_FMT,
            ev->off ? "  " : "", x.label,
            x.count, x.enqueued, x.trials, p50, d.count, d.enqueued,
            x.e->name);
    DQ_TCATP(ev->t, ev->res->sample, sizeof ev->res->sample,
             &(size_t){strlen(ev->res->sample)}, a.early,
             "claims.recipe_sample_early", "claims.recipe_sample_lost",
             "%strials=%zu n=%" PRIu64 " dn=%" PRIu64 " exp=%s",
             ev->res->sample[0] ? "; " : "", x.trials + d.trials, x.enqueued,
             d.enqueued, x.e->name);
    ev->res->interval[0] = '\0';
    WILSON(ev->res->interval, iv_recipe, x.count, x.enqueued);
    WILSON(ev->res->interval, iv_recipe_dflt, d.count, d.enqueued);
    FIGURE("fig-%s-outcomes", x.e->name);
    if (x.count == 0)
        return TSAY(recipe_unseen, "  "), DQ_VERDICT_PARTLY_MEASURED;
    return DQ_VERDICT_DOES_NOT_HOLD;
}
