/* section_loss.c -- the report section of the loss experiment
 * (experiments/loss.ini): what each strategy lost, duplicated and
 * redelivered under each injected fault, beside what it declares.
 *
 * The numbers come from the event logs, not from trials.csv: each trial's
 * logs/trial-NNN.log is checked again with dq_check_file (checker.h),
 * which splits the extra deliveries into redelivered / duplicated after a
 * fault / duplicated without one and the missing tasks into lost / pending
 * at the end, from the F records (fault windows) in the log.  The fault of
 * a trial is the log's "H faults" header ("none" without one), so
 * trials.csv only needs its strategy, options and trial columns.
 *
 * The central table: rows = strategies (with what they declare), columns =
 * faults, each cell "lost / duplicated / redelivered of N" summed over the
 * repeats, marked with a cross where dq_check_violations says the
 * strategy broke a guarantee it declares.  Under it, one paragraph per
 * fault: which strategies lost, repeated or redelivered tasks and how
 * many, followed by the mechanism (the why is written here once per fault
 * kind; every figure in it is computed).  The claim rules in claims.c read
 * the same table through dq_loss_load().
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/checker.h"
#include "../strategies/dq.h"
#include "report_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

bool dq_loss_is(const dq_rexp *e)
{
    return dq_rexp_has_plot(e, "loss") || dq_rexp_meta(e, "faults")[0];
}

const dq_rexp *dq_loss_experiment(const dq_results *r)
{
    for (size_t i = 0; i < r->nexps; i++)
        if (dq_loss_is(&r->exps[i]))
            return &r->exps[i];
    return NULL;
}

/* The row label of trial t: the strategy, plus its options when e runs
 * that strategy with several option sets. */
static void row_label(const dq_rexp *e, const dq_rtrial *t, char *buf,
                      size_t len)
{
    bool varies = false;
    for (size_t i = 0; i < e->ntrials && !varies; i++)
        varies = strcmp(e->trials[i].strategy, t->strategy) == 0 &&
                 strcmp(e->trials[i].options, t->options) != 0;
    if (varies && t->options[0])
        snprintf(buf, len, "%s %s", t->strategy, t->options);
    else
        snprintf(buf, len, "%s", t->strategy);
}

static size_t find_or_add(char (*names)[64], size_t *n, size_t max,
                          const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    if (*n == max)
        return (size_t)-1;
    snprintf(names[*n], 64, "%s", s);
    return (*n)++;
}

int dq_loss_load(const dq_rexp *e, dq_loss_table *lt, char *err,
                 size_t errlen)
{
    memset(lt, 0, sizeof *lt);
    lt->e = e;
    lt->cells = calloc(DQ_LOSS_MAX_ROWS * DQ_LOSS_MAX_FAULTS,
                       sizeof *lt->cells);
    if (lt->cells == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_rtrial *t = &e->trials[i];
        char label[64], path[PATH_MAX];
        dq_check c;
        size_t row, col;

        if (t->trial <= 0) {
            snprintf(err, errlen, "%s/trials.csv: no trial column (results "
                     "older than the loss report; rerun the experiment)",
                     e->dir);
            goto fail;
        }
        snprintf(path, sizeof path, "%s/logs/trial-%03d.log", e->dir,
                 t->trial);
        if (dq_check_file(path, &c, err, errlen) != 0)
            goto fail;
        row_label(e, t, label, sizeof label);
        row = find_or_add(lt->rows, &lt->nrows, DQ_LOSS_MAX_ROWS, label);
        col = find_or_add(lt->faults, &lt->nfaults, DQ_LOSS_MAX_FAULTS,
                          c.fault_spec[0] ? c.fault_spec : "none");
        if (row == (size_t)-1 || col == (size_t)-1) {
            snprintf(err, errlen, "%s: more than %d strategies or %d faults "
                     "in the loss table", e->dir, DQ_LOSS_MAX_ROWS,
                     DQ_LOSS_MAX_FAULTS);
            goto fail;
        }
        const dq_strategy *s = dq_strategy_find(t->strategy);
        dq_loss_cell *x = &lt->cells[row * DQ_LOSS_MAX_FAULTS + col];
        const char *v[8];
        size_t nv = dq_check_violations(&c, s ? s->flags : 0, false, v, 8);
        snprintf(x->strategy, sizeof x->strategy, "%s", t->strategy);
        x->flags = s ? s->flags : 0;
        x->known = s != NULL;
        x->trials++;
        x->enqueued += c.enqueued;
        x->lost += c.lost;
        x->lost_claimed += c.lost_claimed;
        x->duplicated += c.dup_fault + c.dup_nofault;
        x->dup_nofault += c.dup_nofault;
        x->redelivered += c.redelivered + c.redelivered_hidden;
        x->pending_end += c.pending_end;
        x->early += c.early;
        x->early_fault += c.early_fault;
        x->windows += c.fault_windows;
        for (size_t k = 0; k < c.nfaults; k++)
            x->window_us += c.faults[k].window_us;
        if (s != NULL && nv > 0) {
            x->violation_trials++;
            if (x->violation[0] == '\0')
                snprintf(x->violation, sizeof x->violation, "%s", v[0]);
        }
    }
    return 0;
fail:
    dq_loss_free(lt);
    return -1;
}

void dq_loss_free(dq_loss_table *lt)
{
    free(lt->cells);
    lt->cells = NULL;
}

const dq_loss_cell *dq_loss_cell_at(const dq_loss_table *lt, size_t row,
                                    size_t col)
{
    const dq_loss_cell *x = &lt->cells[row * DQ_LOSS_MAX_FAULTS + col];
    return x->trials ? x : NULL;
}

/* The fault name of a spec ("kill-consumer:after-claim:3" ->
 * "kill-consumer"). */
static void fault_name(const char *spec, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)strcspn(spec, ":,"), spec);
}

/* What a strategy declares, in a few words. */
static void declared(unsigned flags, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s",
             flags & DQ_G_AT_LEAST_ONCE  ? "at-least-once"
             : flags & DQ_G_AT_MOST_ONCE ? "at-most-once"
                                         : "?",
             flags & DQ_G_SURVIVES_CONSUMER_CRASH ? ", survives a consumer "
                                                    "crash" : "",
             flags & DQ_G_NO_DUP_CONCURRENT ? ", no duplicates"
             : flags & DQ_G_DUPLICATES      ? ", duplicates (documented)"
                                            : "",
             flags & DQ_G_NEEDS_REDIS ? "" : ", in-process (no Redis)");
}

/* Why a fault does what it does, once per fault kind.  Numbers are added
 * by the caller; this text holds none. */
static const char *mechanism(const char *name)
{
    if (strcmp(name, "kill-consumer") == 0)
        return "A consumer process is killed with SIGKILL at a chosen point "
               "of a claim.  An at-most-once claim removes the task from "
               "Redis, so the killed consumer's task is gone; a lease "
               "(lua-lease, list-reliable) keeps it, and it comes back "
               "with a higher attempt once the lease runs out.  For the "
               "in-process heap the whole queue dies with the process.";
    if (strcmp(name, "restart-redis") == 0)
        return "The redis-server is killed and started again on the same "
               "directory.  Without persistence everything pending is gone; "
               "with AOF everysec up to about a second of acknowledged "
               "writes can be lost (enqueues, and claims that come back as "
               "repeats); with AOF always every acknowledged write is on "
               "disk before the reply.";
    if (strcmp(name, "pause-redis") == 0)
        return "The server is stopped (SIGSTOP) and resumed: nothing is "
               "lost inside Redis, but replies that time out on the client "
               "side can make a claim vanish (at-most-once) or a task come "
               "back; tasks falling due meanwhile are delivered late, in a "
               "burst.";
    if (strcmp(name, "subscriber-outage") == 0)
        return "Every consumer is down for the window, then back.  Polling "
               "and list strategies find the tasks that fell due in the "
               "meantime and deliver them in a burst; keyspace "
               "notifications are fire-and-forget, so expiry loses every "
               "task whose key expired while no subscriber listened.";
    if (strcmp(name, "clock-skew") == 0)
        return "One consumer's clock runs ahead or behind.  A strategy that "
               "compares due times with the client's clock delivers early "
               "(ahead) or late (behind); clock=server strategies and "
               "Redis-side expiry do not move.  The checker judges with "
               "the true clock.";
    if (strcmp(name, "mover-stall") == 0)
        return "The connections that move or wake tasks (Pub/Sub "
               "subscriptions, blocked BLPOP/BLMOVE/BZPOPMIN clients) are "
               "killed with CLIENT KILL; the strategy must reconnect and "
               "resubscribe.  Events published while a subscriber is away "
               "are lost.";
    if (strcmp(name, "none") == 0)
        return "No fault: the baseline.  Any loss or duplicate here is the "
               "strategy's own (naive's documented race).";
    return "";
}

/* "a (3), b (1)" of the rows whose value is > 0, or "" when none. */
static void list_rows(const dq_loss_table *lt, size_t col, int what,
                      char *buf, size_t len, size_t *count)
{
    size_t off = 0;
    *count = 0;
    buf[0] = '\0';
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_loss_cell *x = dq_loss_cell_at(lt, r, col);
        uint64_t v;
        if (x == NULL)
            continue;
        v = what == 0   ? x->lost
            : what == 1 ? x->duplicated
            : what == 2 ? x->redelivered
                        : x->early;
        if (v == 0)
            continue;
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
                                "%s%s (%" PRIu64 " of %" PRIu64 ")",
                                *count ? ", " : "", lt->rows[r], v,
                                x->enqueued);
        (*count)++;
    }
}

int section_loss(out *o, dq_rexp *e, char *err, size_t errlen)
{
    dq_loss_table lt;
    char buf[2048], name[64], decl[128];
    const char *head[DQ_LOSS_MAX_FAULTS + 2];
    char cellbuf[DQ_LOSS_MAX_FAULTS + 2][160];
    const char *cells[DQ_LOSS_MAX_FAULTS + 2];
    size_t marks = 0;

    if (dq_loss_load(e, &lt, err, errlen) != 0)
        return -1;
    if (lt.nrows == 0) {
        dq_loss_free(&lt);
        return 1;           /* no trial: report.c's generic section */
    }

    both(o, "Each cell: **lost / duplicated / redelivered of N tasks**, "
         "summed over the repeats, from the event logs.  *Lost*: enqueued "
         "and never delivered though due before the trial ended, or "
         "delivered only to a consumer that was killed before it acked "
         "(with no lease to bring it back).  *Duplicated*: delivered again "
         "after an ack, or with no redelivery to explain it.  "
         "*Redelivered*: delivered again after a fault or a lease expiry "
         "while nobody had acked it (at-least-once behaviour).  Tasks "
         "still pending when the trial ended are not counted as lost "
         "(shown as +P).  A cross marks a cell where the strategy broke a "
         "guarantee it declares (`dqlab check` would exit 1).\n\n");
    head[0] = "strategy";
    head[1] = "declares";
    for (size_t c = 0; c < lt.nfaults; c++)
        head[c + 2] = lt.faults[c];
    table_row(o, head, lt.nfaults + 2, true);
    for (size_t r = 0; r < lt.nrows; r++) {
        unsigned flags = 0;
        for (size_t c = 0; c < lt.nfaults; c++)
            if (dq_loss_cell_at(&lt, r, c) != NULL)
                flags = dq_loss_cell_at(&lt, r, c)->flags;
        declared(flags, decl, sizeof decl);
        snprintf(cellbuf[0], sizeof cellbuf[0], "%s", lt.rows[r]);
        snprintf(cellbuf[1], sizeof cellbuf[1], "%s", decl);
        for (size_t c = 0; c < lt.nfaults; c++) {
            const dq_loss_cell *x = dq_loss_cell_at(&lt, r, c);
            char pend[32] = "";
            if (x == NULL) {
                snprintf(cellbuf[c + 2], sizeof cellbuf[0], "-");
                continue;
            }
            if (x->pending_end)
                snprintf(pend, sizeof pend, " +%" PRIu64, x->pending_end);
            snprintf(cellbuf[c + 2], sizeof cellbuf[0],
                     "%" PRIu64 " / %" PRIu64 " / %" PRIu64 " of %" PRIu64
                     "%s%s", x->lost, x->duplicated, x->redelivered,
                     x->enqueued, pend, x->violation_trials ? " ✗" : "");
            marks += x->violation_trials ? 1 : 0;
        }
        for (size_t k = 0; k < lt.nfaults + 2; k++)
            cells[k] = cellbuf[k];
        table_row(o, cells, lt.nfaults + 2, false);
    }
    table_end(o);

    if (marks > 0) {
        both(o, "Crosses (declared guarantee broken):");
        for (size_t r = 0; r < lt.nrows; r++)
            for (size_t c = 0; c < lt.nfaults; c++) {
                const dq_loss_cell *x = dq_loss_cell_at(&lt, r, c);
                if (x != NULL && x->violation_trials)
                    both(o, " %s under `%s`, %zu of %zu trial%s: %s.",
                         lt.rows[r], lt.faults[c], x->violation_trials,
                         x->trials, x->trials == 1 ? "" : "s",
                         x->violation);
            }
        both(o, "\n\n");
    } else {
        both(o, "No strategy broke a guarantee it declares in these "
             "trials.\n\n");
    }

    both(o, "### What each fault did\n\n");
    for (size_t c = 0; c < lt.nfaults; c++) {
        size_t nl, nd, nr, ne;
        char lost[1024], dup[1024], red[1024], early[1024];
        uint64_t win_us = 0, windows = 0;
        list_rows(&lt, c, 0, lost, sizeof lost, &nl);
        list_rows(&lt, c, 1, dup, sizeof dup, &nd);
        list_rows(&lt, c, 2, red, sizeof red, &nr);
        list_rows(&lt, c, 3, early, sizeof early, &ne);
        for (size_t r = 0; r < lt.nrows; r++) {
            const dq_loss_cell *x = dq_loss_cell_at(&lt, r, c);
            if (x != NULL) {
                win_us += (uint64_t)x->window_us;
                windows += x->windows;
            }
        }
        fault_name(lt.faults[c], name, sizeof name);
        size_t off = 0;
        off += (size_t)snprintf(buf + off, sizeof buf - off, "**`%s`**",
                                lt.faults[c]);
        if (windows > 0)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    " (%" PRIu64 " fault window%s in the "
                                    "log, %.0f ms on average)", windows,
                                    windows == 1 ? "" : "s",
                                    (double)win_us / 1000.0 /
                                        (double)windows);
        off += (size_t)snprintf(buf + off, sizeof buf - off, ": ");
        if (nl + nd + nr + ne == 0)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    "no strategy lost, repeated, "
                                    "redelivered or delivered early any "
                                    "task.  ");
        if (nl)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "lost "
                                    "tasks: %s.  ", lost);
        if (nd)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    "duplicated: %s.  ", dup);
        if (nr)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    "redelivered: %s.  ", red);
        if (ne)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "early: "
                                    "%s.  ", early);
        size_t ran = 0;
        for (size_t r = 0; r < lt.nrows; r++)
            ran += dq_loss_cell_at(&lt, r, c) != NULL;
        if ((nl || nd || nr || ne) && ran > nl)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    "%zu of %zu strateg%s lost nothing.  ",
                                    ran - nl, ran, ran == 1 ? "y" : "ies");
        snprintf(buf + off, sizeof buf - off, "%s", mechanism(name));
        both(o, "%s\n\n", buf);
    }
    dq_loss_free(&lt);
    return 0;
}
