/* sec_loss.c -- the section of the loss experiment (experiments/loss.ini):
 * what each strategy lost, duplicated and redelivered under each injected
 * fault, beside what it declares.
 *
 * The numbers are the loss table of the results model (results_logs.c):
 * each trial's event log re-checked, which splits the extra deliveries
 * into redelivered / duplicated after a fault / duplicated without one
 * and the missing tasks into lost / pending at the end.  A log that can
 * carry no verdict (incomplete: no clean end; checker.h
 * dq_check_no_verdict) is left out of every count, shown as "no verdict:
 * log incomplete" (never as ok or a violation) and listed with its
 * reason under the table.  The central table: rows strategies (with what
 * they declare), columns faults, each cell "lost / duplicated /
 * redelivered of N" summed over the repeats, with a cross where
 * dq_check_violations says the strategy broke a
 * guarantee it declares.  Under it, one paragraph per fault (the why is
 * written here once per fault kind; every figure in it is computed) and
 * its timeline: for the first repeat of each strategy, deliveries per
 * bucket against seconds since the trial's first record, the cumulative
 * share delivered, and the fault windows shaded (loss_timeline.gp).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../strategies/dq.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

void dq_loss_describe(const dq_rexp *e, char *buf, size_t len)
{
    char specs[DQ_LOSS_MAX_FAULTS][64], list[256], delay[64];
    size_t n = 0, off = 0;
    bool baseline = false;
    snprintf(list, sizeof list, "%s", dq_rexp_meta(e, "faults"));
    for (char *save = NULL, *t = strtok_r(list, ", ", &save); t != NULL;
         t = strtok_r(NULL, ", ", &save)) {
        if (strcmp(t, "none") == 0)
            baseline = true;
        else if (n < DQ_LOSS_MAX_FAULTS)
            snprintf(specs[n++], sizeof specs[0], "%s", t);
    }
    snprintf(delay, sizeof delay, "%s", dq_rexp_meta(e, "delay_ms"));
    if (strchr(delay, ':') != NULL)
        *strchr(delay, ':') = '-';     /* "0:500" -> "0-500" */
    dq_append(buf, len, &off, "Injects one fault per trial into a stream of "
              "tasks due %s ms after enqueue.  Faults in this run: ",
              delay[0] ? delay : "?");
    if (n == 0)
        dq_append(buf, len, &off, "none");
    for (size_t i = 0; i < n; i++) {
        char ph[160];
        dq_fault_phrase(specs[i], ph, sizeof ph);
        dq_append(buf, len, &off, "%s%s (`%s`)", i ? "; " : "", ph,
                  specs[i]);
    }
    dq_append(buf, len, &off, "%s.  The checker tells, from the event log "
              "and the fault windows in it, lost tasks from duplicates, "
              "redeliveries and tasks still pending when the trial ended.",
              baseline ? "; and a baseline with no fault" : "");
}

/* What a strategy declares, in a few words. */
static void declared(unsigned flags, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s",
             flags & DQ_G_AT_LEAST_ONCE  ? "at-least-once"
             : flags & DQ_G_AT_MOST_ONCE ? "at-most-once" : "?",
             flags & DQ_G_SURVIVES_CONSUMER_CRASH
                 ? ", survives a consumer crash" : "",
             flags & DQ_G_NO_DUP_CONCURRENT ? ", no duplicates"
             : flags & DQ_G_DUPLICATES      ? ", duplicates (documented)"
                                            : "",
             flags & DQ_G_NEEDS_REDIS ? "" : ", in-process (no Redis)");
}

/* Why a fault does what it does, once per fault kind.  Numbers are added
 * by the caller; this text holds none. */
static const struct {
    const char *fault, *why;
} mechanisms[] = {
    {"kill-consumer", "A consumer process is killed with SIGKILL at a "
     "chosen point of a claim.  An at-most-once claim removes the task from "
     "Redis, so the killed consumer's task is gone; a lease (lua-lease, "
     "list-reliable, streams) keeps it, and it comes back with a higher "
     "attempt once the lease runs out.  For the in-process heap the whole "
     "queue dies with the process."},
    {"restart-redis", "The redis-server is killed and started again on the "
     "same directory.  Without persistence everything pending is gone; with "
     "AOF everysec up to about a second of acknowledged writes can be lost "
     "(enqueues, and claims that come back as repeats); with AOF always "
     "every acknowledged write is on disk before the reply."},
    {"pause-redis", "The server is stopped (SIGSTOP) and resumed: nothing is "
     "lost inside Redis, but replies that time out on the client side can "
     "make a claim vanish (at-most-once) or a task come back; tasks falling "
     "due meanwhile are delivered late, in a burst."},
    {"subscriber-outage", "Every consumer is down for the window, then "
     "back.  Polling and list strategies find the tasks that fell due in "
     "the meantime and deliver them in a burst; keyspace notifications are "
     "fire-and-forget, so expiry loses every task whose key expired while "
     "no subscriber listened."},
    {"clock-skew", "One consumer's clock runs ahead or behind.  A strategy "
     "that compares due times with the client's clock delivers early "
     "(ahead) or late (behind); clock=server strategies and Redis-side "
     "expiry do not move.  The checker judges with the true clock."},
    {"mover-stall", "The connections that move or wake tasks (Pub/Sub "
     "subscriptions, blocked BLPOP/BLMOVE/BZPOPMIN clients) are killed with "
     "CLIENT KILL; the strategy must reconnect and resubscribe.  Events "
     "published while a subscriber is away are lost."},
    {"none", "No fault: the baseline.  Any loss or duplicate here is the "
     "strategy's own (naive's documented race)."},
};

static const char *mechanism(const char *spec)
{
    size_t n = strcspn(spec, ":,");
    for (size_t i = 0; i < sizeof mechanisms / sizeof mechanisms[0]; i++)
        if (strlen(mechanisms[i].fault) == n &&
            strncmp(mechanisms[i].fault, spec, n) == 0)
            return mechanisms[i].why;
    return "";
}

/* Cell text of lt->cells[r][c]: "lost / duplicated / redelivered of N
 * [+P] [✗]", then the trials with no verdict beside it, or only them, or
 * "-" when no trial ran it. */
static void loss_cell(const dq_loss_table *lt, size_t r, size_t c,
                      char *buf, size_t len)
{
    const dq_loss_cell *x = dq_loss_cell_at(lt, r, c), *raw = &lt->cells[r][c];
    char pend[32] = "", nov[80] = "";
    size_t k = raw->no_verdict_trials;
    if (k > 0 && x != NULL)
        snprintf(nov, sizeof nov, " (+%zu trial%s with no verdict: log "
                 "incomplete)", k, k == 1 ? "" : "s");
    else if (k > 0)
        snprintf(nov, sizeof nov, "no verdict: log incomplete");
    if (x != NULL && x->pending_end)
        snprintf(pend, sizeof pend, " +%" PRIu64, x->pending_end);
    if (x == NULL)
        snprintf(buf, len, "%s", nov[0] ? nov : "-");
    else
        snprintf(buf, len, "%" PRIu64 " / %" PRIu64 " / %" PRIu64 " of %"
                 PRIu64 "%s%s%s", x->lost, x->duplicated, x->redelivered,
                 x->enqueued, pend, x->violation_trials ? " ✗" : "", nov);
}

/* The trials with no verdict (neither ok nor a violation): which, why. */
static void no_verdict_list(dq_md *o, const dq_loss_table *lt)
{
    size_t n = 0;
    for (size_t r = 0; r < lt->nrows; r++)
        for (size_t c = 0; c < lt->nfaults; c++)
            n += lt->cells[r][c].no_verdict_trials;
    if (n == 0)
        return;
    dq_put(o, "No verdict for %zu trial log%s, left out of every count "
           "above:", n, n == 1 ? "" : "s");
    for (size_t r = 0; r < lt->nrows; r++)
        for (size_t c = 0; c < lt->nfaults; c++) {
            const dq_loss_cell *x = &lt->cells[r][c];
            if (x->no_verdict_trials > 0)
                dq_put(o, " %s under `%s`, %zu trial%s (%s).", lt->rows[r],
                       lt->faults[c], x->no_verdict_trials,
                       x->no_verdict_trials == 1 ? "" : "s",
                       x->no_verdict_why);
        }
    dq_put(o, "\n\n");
}

/* The table, the trials with no verdict and the crosses under it. */
static void loss_table(dq_md *o, const dq_loss_table *lt)
{
    const char *head[DQ_LOSS_MAX_FAULTS + 2] = {"strategy", "declares"};
    char cell[DQ_LOSS_MAX_FAULTS + 2][160];
    const char *cells[DQ_LOSS_MAX_FAULTS + 2];
    size_t marks = 0;
    for (size_t c = 0; c < lt->nfaults; c++)
        head[c + 2] = lt->faults[c];
    dq_cells(o, true, head, lt->nfaults + 2);
    for (size_t r = 0; r < lt->nrows; r++) {
        unsigned flags = 0;
        for (size_t c = 0; c < lt->nfaults; c++)
            if (dq_loss_cell_at(lt, r, c) != NULL)
                flags = dq_loss_cell_at(lt, r, c)->flags;
        snprintf(cell[0], sizeof cell[0], "%s", lt->rows[r]);
        declared(flags, cell[1], sizeof cell[1]);
        for (size_t c = 0; c < lt->nfaults; c++) {
            const dq_loss_cell *x = dq_loss_cell_at(lt, r, c);
            loss_cell(lt, r, c, cell[c + 2], sizeof cell[0]);
            marks += x != NULL && x->violation_trials;
        }
        for (size_t k = 0; k < lt->nfaults + 2; k++)
            cells[k] = cell[k];
        dq_cells(o, false, cells, lt->nfaults + 2);
    }
    dq_table_end(o);
    no_verdict_list(o, lt);
    if (marks == 0) {
        dq_put(o, "No strategy broke a guarantee it declares in these "
                     "trials.\n\n");
        return;
    }
    dq_put(o, "Crosses (declared guarantee broken):");
    for (size_t r = 0; r < lt->nrows; r++)
        for (size_t c = 0; c < lt->nfaults; c++) {
            const dq_loss_cell *x = dq_loss_cell_at(lt, r, c);
            if (x != NULL && x->violation_trials)
                dq_put(o, " %s under `%s`, %zu of %zu trial%s: %s.",
                             lt->rows[r], lt->faults[c], x->violation_trials,
                             x->trials, x->trials == 1 ? "" : "s",
                             x->violation);
        }
    dq_put(o, "\n\n");
}

/* "a (3 of 150), b (1 of 150)" of the rows whose value (0 lost, 1
 * duplicated, 2 redelivered, 3 early) is > 0; the count in *count. */
static void list_rows(const dq_loss_table *lt, size_t col, int what,
                      char *buf, size_t len, size_t *count)
{
    size_t off = 0;
    *count = 0;
    buf[0] = '\0';
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_loss_cell *x = dq_loss_cell_at(lt, r, col);
        if (x == NULL)
            continue;
        uint64_t v = what == 0 ? x->lost : what == 1 ? x->duplicated
                     : what == 2 ? x->redelivered : x->early;
        if (v > 0)
            dq_append(buf, len, &off, "%s%s (%" PRIu64 " of %" PRIu64 ")",
                      (*count)++ ? ", " : "", lt->rows[r], v, x->enqueued);
    }
}

/* The paragraph of fault column c. */
static void fault_paragraph(dq_md *o, const dq_loss_table *lt, size_t c)
{
    static const char *const what[4] = {"lost tasks", "duplicated",
                                        "redelivered", "early"};
    char list[4][1024], buf[2048];
    size_t n[4], off = 0, ran = 0, any = 0;
    uint64_t win_us = 0, windows = 0;
    for (int k = 0; k < 4; k++) {
        list_rows(lt, c, k, list[k], sizeof list[k], &n[k]);
        any += n[k];
    }
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_loss_cell *x = dq_loss_cell_at(lt, r, c);
        if (x != NULL) {
            win_us += (uint64_t)x->window_us;
            windows += x->windows;
            ran++;
        }
    }
    dq_append(buf, sizeof buf, &off, "**`%s`**", lt->faults[c]);
    if (windows > 0)
        dq_append(buf, sizeof buf, &off, " (%" PRIu64 " fault window%s in "
                  "the log, %.0f ms on average)", windows,
                  windows == 1 ? "" : "s",
                  (double)win_us / 1000.0 / (double)windows);
    dq_append(buf, sizeof buf, &off, ": ");
    if (any == 0)
        dq_append(buf, sizeof buf, &off, "no strategy lost, repeated, "
                  "redelivered or delivered early any task.  ");
    for (int k = 0; k < 4; k++)
        if (n[k])
            dq_append(buf, sizeof buf, &off, "%s: %s.  ", what[k], list[k]);
    if (any && ran > n[0])
        dq_append(buf, sizeof buf, &off, "%zu of %zu strateg%s lost "
                  "nothing.  ", ran - n[0], ran, ran == 1 ? "y" : "ies");
    dq_append(buf, sizeof buf, &off, "%s", mechanism(lt->faults[c]));
    dq_put(o, "%s\n\n", buf);
}

/* ---- Timelines ---------------------------------------------------------- */

/* The longest stretch without a delivery that overlaps a fault window,
 * and whether deliveries never resumed after it. */
static int64_t tl_stall(const dq_timeline *l, bool *never)
{
    int64_t stall = 0;
    *never = false;
    for (size_t i = 0; i < l->nd; i++) {
        int64_t a = l->d_us[i], b = i + 1 < l->nd ? l->d_us[i + 1]
                                                  : l->end_us;
        for (size_t w = 0; w < l->nwin; w++)
            if (a < l->win[w].e_us && b > l->win[w].b_us && b - a > stall) {
                stall = b - a;
                *never = i + 1 == l->nd;
            }
    }
    return stall;
}

/* The tasks due inside a window: how many, how many never delivered, and
 * the latest delivery after its window closed (-1: none after). */
static void tl_due_in(const dq_timeline *l, size_t *due_in,
                      size_t *undelivered, int64_t *caught)
{
    *due_in = *undelivered = 0;
    *caught = -1;
    for (size_t i = 0; i < l->ntasks; i++) {
        const dq_tl_rec *k = &l->tasks[i];
        for (size_t w = 0; w < l->nwin; w++) {
            const dq_tl_win *x = &l->win[w];
            if (k->t_us < x->b_us || k->t_us > x->e_us)
                continue;
            (*due_in)++;
            if (k->first_us == 0)
                (*undelivered)++;
            else if (k->first_us - x->e_us > *caught)
                *caught = k->first_us - x->e_us;
            break;
        }
    }
}

/* A killed consumer's task: did it come back, and when (the latest)? */
static void tl_kills(const dq_timeline *l, size_t *kills, size_t *back,
                     int64_t *back_max)
{
    *kills = *back = 0;
    *back_max = 0;
    for (size_t w = 0; w < l->nwin; w++) {
        const dq_tl_win *x = &l->win[w];
        int64_t first = 0;
        if (x->id[0] == '\0')
            continue;
        (*kills)++;
        for (size_t i = 0; i < l->nd; i++)
            if (l->d[i].t_us > x->b_us && strcmp(l->d[i].id, x->id) == 0 &&
                (first == 0 || l->d[i].t_us < first))
                first = l->d[i].t_us;
        if (first > 0 && ++*back && first - x->b_us > *back_max)
            *back_max = first - x->b_us;
    }
}

/* What one trial's timeline shows, one list item appended to buf. */
static void tl_describe(const dq_timeline *l, const char *label, char *buf,
                        size_t len, size_t *off)
{
    size_t due_in, undelivered, kills, back;
    int64_t caught, back_max;
    bool never;
    dq_append(buf, len, off, "- **%s**: ", label);
    if (l->nwin == 0) {
        dq_append(buf, len, off, "no fault window in the log");
        return;
    }
    int64_t stall = tl_stall(l, &never);
    bool s = stall >= 1000000;
    if (stall > 0)
        dq_append(buf, len, off, "longest gap between deliveries across a "
                  "window %.*f %s%s", s ? 2 : 0, (double)stall /
                  (s ? 1e6 : 1e3), s ? "s" : "ms", never ? " (deliveries "
                  "never resume before the trial ends)" : "");
    else
        dq_append(buf, len, off, "no delivery at all");
    tl_due_in(l, &due_in, &undelivered, &caught);
    /* (tasks delivered before their window closed are not news) */
    if (due_in > 0 && (caught >= 0 || undelivered > 0)) {
        dq_append(buf, len, off, "; %zu task%s fell due inside the "
                  "window%s", due_in, due_in == 1 ? "" : "s",
                  l->nwin == 1 ? "" : "s");
        if (caught >= 0)
            dq_append(buf, len, off, ", the last delivered %.0f ms after it "
                      "closed", (double)caught / 1e3);
        if (undelivered > 0)
            dq_append(buf, len, off, ", %zu never delivered", undelivered);
    }
    tl_kills(l, &kills, &back, &back_max);
    if (kills > 0 && back == 0)
        dq_append(buf, len, off, "; the task%s held by the killed "
                  "consumer%s never came back (%zu kill%s)",
                  kills == 1 ? "" : "s", kills == 1 ? "" : "s", kills,
                  kills == 1 ? "" : "s");
    else if (kills > 0)
        dq_append(buf, len, off, "; %zu of the %zu killed consumers' tasks "
                  "came back, the last %.2f s after its kill", back, kills,
                  (double)back_max / 1e6);
}

/* "kill-consumer:during-work:2" -> "kill-consumer-during-work-2" */
static void tl_slug(const char *spec, char *buf, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; spec[i] && j + 1 < len; i++) {
        char c = spec[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (ok || j == 0 || buf[j - 1] != '-')
            buf[j++] = ok ? c : '-';
    }
    while (j > 0 && buf[j - 1] == '-')
        j--;
    buf[j] = '\0';
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* One panel's block: deliveries per bucket and the share delivered so
 * far, a row per bucket (t_s its start).  0 or -1 out of memory. */
static int tl_block(FILE *fb, const dq_timeline *l, int64_t bucket_us)
{
    size_t nb = (size_t)((l->end_us - l->t0_us) / bucket_us) + 1;
    size_t di = 0, nfs = 0, fi = 0;
    uint64_t firsts = 0;
    int64_t *fs = malloc((l->ntasks + 1) * sizeof *fs);
    if (fs == NULL)
        return -1;
    for (size_t i = 0; i < l->ntasks; i++)
        if (l->tasks[i].first_us > 0)
            fs[nfs++] = l->tasks[i].first_us;
    qsort(fs, nfs, sizeof *fs, cmp_i64);
    for (size_t b = 0; b < nb; b++) {
        int64_t hi = l->t0_us + (int64_t)(b + 1) * bucket_us;
        size_t n = 0;
        for (; di < l->nd && l->d_us[di] < hi; di++)
            n++;
        for (; fi < nfs && fs[fi] < hi; fi++)
            firsts++;
        fprintf(fb, "%.3f,%zu,%.1f\n", (double)b * (double)bucket_us / 1e6,
                n, l->ntasks ? 100.0 * (double)firsts / (double)l->ntasks
                             : 0.0);
    }
    free(fs);
    return 0;
}

/* The bucket: the largest of 100, 50, 20, 10 ms that still gives the
 * longest of the column's panels 40 buckets. */
static int64_t tl_bucket(const dq_loss_table *lt, size_t col)
{
    int64_t span_us = 0, bucket_us = 100000;
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_loss_cell *x = &lt->cells[r][col];
        const dq_timeline *l = x->first ? &x->first_log->tl : NULL;
        if (l != NULL && l->end_us - l->t0_us > span_us)
            span_us = l->end_us - l->t0_us;
    }
    while (bucket_us > 10000 && span_us / bucket_us < 40)
        bucket_us = bucket_us == 100000 ? 50000
                    : bucket_us == 50000 ? 20000 : 10000;
    return bucket_us;
}

/* The timeline figure of fault column col: data/<exp>-timeline-<slug>.csv
 * (block 0 "panel,t0_s,t1_s" windows; then one block per strategy
 * "t_s,<label>,delivered_pct"), a paragraph, the figure.  0 or -1. */
static int tl_figure(dq_md *o, const dq_rexp *e, const dq_loss_table *lt,
                     size_t col, char *err, size_t errlen)
{
    char slug[64], *csv, *blocks, text[8192] = "";
    size_t csvlen, blen, toff = 0, panels = 0;
    int64_t bucket_us = tl_bucket(lt, col);
    FILE *f = dq_mem_open(&csv, &csvlen, err, errlen), *fb = NULL;
    int rc = -1;
    if (f == NULL || (fb = dq_mem_open(&blocks, &blen, err, errlen)) == NULL)
        goto done;
    fputs("# panel,t0_s,t1_s: the fault windows of each panel's trial\n", f);
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_loss_cell *x = &lt->cells[r][col];
        const dq_timeline *l = x->first ? &x->first_log->tl : NULL;
        if (l == NULL)
            continue;
        panels++;
        for (size_t w = 0; w < l->nwin; w++)
            fprintf(f, "%zu,%.3f,%.3f\n", panels,
                    (double)(l->win[w].b_us - l->t0_us) / 1e6,
                    (double)(l->win[w].e_us - l->t0_us) / 1e6);
        fprintf(fb, "\n\nt_s,%s (trial %zu),delivered_pct\n", lt->rows[r],
                x->first->trial);
        if (tl_block(fb, l, bucket_us) != 0) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
        if (toff > 0)
            dq_append(text, sizeof text, &toff, "\n");
        tl_describe(l, lt->rows[r], text, sizeof text, &toff);
    }
    fprintf(f, "0,0,0\n"); /* keeps block 0 non-empty */
    fclose(fb);
    fb = NULL;
    fwrite(blocks, 1, blen, f);
    fclose(f);
    f = NULL;
    tl_slug(lt->faults[col], slug, sizeof slug);
    if (panels > 0)
        dq_put(o, "**`%s`, over time** (the first repeat of each "
                     "strategy; shaded: the fault windows of that trial, "
                     "drawn at least 1%% of the axis wide; bars: deliveries "
                     "per %" PRId64 " ms; line: share of the enqueued tasks "
                     "delivered so far):\n\n%s\n\n", lt->faults[col],
                     bucket_us / 1000, text);
    rc = panels ? dq_sec_figure(o, e, "loss", slug, csv, csvlen, err,
                                errlen) : 0;
done:
    if (fb != NULL)
        fclose(fb);
    if (f != NULL)
        fclose(f);
    free(blocks);
    free(csv);
    return rc;
}

int dq_sec_loss(dq_md *o, const dq_results *r, const dq_rexp *e, char *err,
                size_t errlen)
{
    const dq_loss_table *lt = e->loss;
    (void)r;
    if (lt == NULL || lt->nrows == 0)
        return 1;           /* no trial: the generic section */
    dq_put(o, "Each cell: **lost / duplicated / redelivered of N "
                 "tasks**, summed over the repeats, from the event logs.  "
                 "*Lost*: enqueued and never delivered though due before the "
                 "trial ended, or delivered only to a consumer that was "
                 "killed before it acked (with no lease to bring it back).  "
                 "*Duplicated*: delivered again after an ack, or with no "
                 "redelivery to explain it.  *Redelivered*: delivered again "
                 "after a fault or a lease expiry while nobody had acked it "
                 "(at-least-once behaviour).  Tasks still pending when the "
                 "trial ended are not counted as lost (shown as +P).  A "
                 "cross marks a cell where the strategy broke a guarantee "
                 "it declares (`dqlab check` would exit 1).\n\n");
    loss_table(o, lt);
    dq_put(o, "### What each fault did\n\n");
    for (size_t c = 0; c < lt->nfaults; c++) {
        fault_paragraph(o, lt, c);
        if (strcmp(lt->faults[c], "none") != 0 &&
            tl_figure(o, e, lt, c, err, errlen) != 0)
            return -1;
    }
    return 0;
}
