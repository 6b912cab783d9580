/* sec_loss_side.c -- what the loss section adds beside its table: the
 * work that ran twice and the stall every other client of the server saw.
 *
 * A consumer stopped past its lease (stall-consumer: a GC pause) has its
 * task redelivered while it still holds it; when it wakes it finishes the
 * work and its ack is refused, so the work ran twice though the queue
 * delivered by the book: trials.csv processed_twice, from the event log
 * (checker.h).  A script that keeps Redis busy (busy-redis, or a
 * strategy's own large batch) stalls every client, the queue's included:
 * the latency sampler's longest gap between PING replies and their p99
 * (trials.csv redis_stall_ms, ping_p99_ms; trial.h).  One table, rows the
 * strategies, columns the loss table's faults, each cell the worst over
 * the cell's repeats.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../strategies/dq.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* The worst of strategy s's trials under fault spec in e. */
typedef struct side_cell {
    size_t trials;
    uint64_t twice;
    double stall_ms, p99_ms;     /* -1: the sampler had none */
} side_cell;

static side_cell cell_of(const dq_rexp *e, const char *s, const char *spec)
{
    side_cell c = {0, 0, -1, -1};
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_trialrow *t = &e->trials[i];
        if (strcmp(t->strategy, s) != 0 || strcmp(t->fault, spec) != 0)
            continue;
        c.trials++;
        c.twice += t->processed_twice;
        c.stall_ms = t->redis_stall_ms > c.stall_ms ? t->redis_stall_ms
                                                    : c.stall_ms;
        c.p99_ms = t->ping_p99_ms > c.p99_ms ? t->ping_p99_ms : c.p99_ms;
    }
    return c;
}

/* Whether strategy name leases its tasks (at-least-once). */
static bool leased(const char *name)
{
    const dq_strategy *s = dq_strategy_find(name);
    return s != NULL && (s->flags & DQ_G_AT_LEAST_ONCE);
}

/* Whether strategy s's cells of fault column c hold duplicates: the
 * queue itself delivered a task again (a race, or a claim or an enqueue
 * the fault lost or repeated), not a lease that ran out while held. */
static bool duplicated(const dq_loss_table *lt, const char *s, size_t c)
{
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_loss_cell *y = dq_loss_cell_at(lt, r, c);
        if (y != NULL && strcmp(y->strategy, s) == 0 && y->duplicated > 0)
            return true;
    }
    return false;
}

/* Appends name to list (", "-separated, 256 bytes) once. */
static void add_name(char *list, const char *name)
{
    size_t n = strlen(list), k = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += k)
        if ((p == list || p[-1] == ' ') && (p[k] == ',' || p[k] == '\0'))
            return;
    snprintf(list + n, 256 - n, "%s%s", n ? ", " : "", name);
}

/* The table; returns whether any cell had a sampler figure, the leased
 * strategy's cell with the most work run twice in *worst (its strategy
 * and fault in ws, wf) and the other strategies whose work ran twice in
 * dups (their duplicates). */
static bool side_table(dq_md *o, const dq_rexp *e, char names[][32],
                       size_t nn, side_cell *worst, char *ws, char *wf,
                       char *dups)
{
    const dq_loss_table *lt = e->loss;
    const char *head[DQ_LOSS_MAX_FAULTS + 1] = {"strategy"};
    char cell[DQ_LOSS_MAX_FAULTS + 1][96];
    const char *cells[DQ_LOSS_MAX_FAULTS + 1];
    bool any = false;
    for (size_t c = 0; c < lt->nfaults; c++)
        head[c + 1] = lt->faults[c];
    dq_cells(o, true, head, lt->nfaults + 1);
    for (size_t r = 0; r < nn; r++) {
        snprintf(cell[0], sizeof cell[0], "%s", names[r]);
        for (size_t c = 0; c < lt->nfaults; c++) {
            side_cell x = cell_of(e, names[r], lt->faults[c]);
            size_t off = 0;
            cell[c + 1][0] = '\0';
            any |= x.stall_ms >= 0;
            if (x.stall_ms < 0)
                DQ_TCAT(o->texts, cell[c + 1], sizeof cell[0], &off,
                        "loss.side_none", "");
            else
                DQ_TCAT(o->texts, cell[c + 1], sizeof cell[0], &off,
                        "loss.side_cell", "stall=%.0f p99=%.1f",
                        x.stall_ms, x.p99_ms);
            if (x.twice > 0)
                DQ_TCAT(o->texts, cell[c + 1], sizeof cell[0], &off,
                        "loss.side_twice", "%sn=%" PRIu64, off ? " " : "",
                        x.twice);
            bool repeated = duplicated(lt, names[r], c);
            if (x.twice > 0 && (!leased(names[r]) || repeated))
                add_name(dups, names[r]);
            if (x.twice > worst->twice && leased(names[r]) && !repeated) {
                *worst = x;
                snprintf(ws, 32, "%s", names[r]);
                snprintf(wf, 64, "%s", lt->faults[c]);
            }
        }
        for (size_t k = 0; k < lt->nfaults + 1; k++)
            cells[k] = cell[k];
        dq_cells(o, false, cells, lt->nfaults + 1);
    }
    dq_table_end(o);
    return any;
}

void dq_loss_side(dq_md *o, const dq_rexp *e)
{
    char names[16][32], ws[32] = "", wf[64] = "", dups[256] = "";
    size_t nn = dq_strategies_of(e, names, 16);
    side_cell worst = {0, 0, -1, -1};
    if (e->loss == NULL || e->loss->nfaults == 0 || nn == 0)
        return;
    DQ_TEXT(o, "loss.side_intro", "\n\n");
    if (!side_table(o, e, names, nn, &worst, ws, wf, dups)) {
        DQ_TEXT(o, "loss.side_no_sampler", "\n\n");
        return;
    }
    if (worst.twice > 0)
        DQ_TEXT(o, "loss.side_why_twice", "s=%s fault=%s n=%" PRIu64
                " ns=%s trials=%zu ts=%s\n\n", ws, wf, worst.twice,
                worst.twice == 1 ? "" : "s", worst.trials,
                worst.trials == 1 ? "" : "s");
    else
        DQ_TEXT(o, "loss.side_no_twice", "\n\n");
    if (dups[0])
        DQ_TEXT(o, "loss.side_dups", "list=%s\n\n", dups);
}
