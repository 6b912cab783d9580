/* results_logs.c -- the part of the results model read from the event
 * logs (logs/trial-NNN.log): each log is opened once and re-checked once.
 *
 *   DQ_LOGS_LATENESS  dq_check_file_lateness: each cell's per-task
 *                     lateness pooled over its repeats (dq_rpool), for the
 *                     lateness CDF and backlog sections
 *   DQ_LOGS_FAULTS    dq_check_stream, then the same open file read again
 *                     for its timeline (E, D, F records with their times,
 *                     which the checker does not keep): the loss table and
 *                     the loss timelines
 *   DQ_LOGS_TIMELINE  the timelines alone (the sections that explain a
 *                     figure from when each task was enqueued, fell due
 *                     and was delivered)
 * A trial's loss table column is its log's "H faults" header ("none"
 * without one), so trials.csv only needs its strategy, options, repeat and
 * trial columns.  A cell keeps its trial with the lowest repeat for its
 * timeline.  Also here: the words for fault specs, which the loss
 * section and the claim rules share: the fault table's own (faults.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/faults.h"
#include "../strategies/dq.h"
#include "results.h"
#include "stats.h"
#include "text.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* Grows *p (elements of sz bytes, *cap of them) to hold n + 1; 0 or -1. */
static int grow(void *p, size_t *cap, size_t n, size_t sz)
{
    void **pp = p, *q;
    if (n < *cap)
        return 0;
    if ((q = realloc(*pp, (*cap ? *cap * 2 : 256) * sz)) == NULL)
        return -1;
    *pp = q;
    *cap = *cap ? *cap * 2 : 256;
    return 0;
}

static int cmp_rec(const void *a, const void *b)
{
    return strcmp(((const dq_tl_rec *)a)->id, ((const dq_tl_rec *)b)->id);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Adds the TAB-split record fld[0..nf-1] of time t to l (cap: the
 * capacities of tasks, d_us and d).  0 or -1 out of memory. */
static int tl_record(dq_timeline *l, char **fld, size_t nf, int64_t t,
                     size_t cap[3])
{
    char type = fld[0][0];
    if (type == 'E' && nf >= 4) {
        if (grow(&l->tasks, &cap[0], l->ntasks, sizeof *l->tasks) != 0)
            return -1;
        dq_tl_rec *k = &l->tasks[l->ntasks++];
        snprintf(k->id, sizeof k->id, "%s", fld[2]);
        k->t_us = strtoll(fld[3], NULL, 10) * 1000;
        k->first_us = 0;
        k->enq_us = t;
    } else if (type == 'D') {
        if (grow(&l->d_us, &cap[1], l->nd, sizeof *l->d_us) != 0 ||
            grow(&l->d, &cap[2], l->nd, sizeof *l->d) != 0)
            return -1;
        l->d_us[l->nd] = l->d[l->nd].t_us = t;
        l->d[l->nd].enq_us = l->d[l->nd].first_us = 0;
        snprintf(l->d[l->nd++].id, sizeof l->d[0].id, "%s", fld[2]);
    } else if (type == 'F' && nf >= 4 && strcmp(fld[3], "begin") == 0 &&
               l->nwin < 64) {
        dq_tl_win *w = &l->win[l->nwin++];
        const char *id = nf >= 5 ? strstr(fld[4], "id=") : NULL;
        snprintf(w->name, sizeof w->name, "%s", fld[2]);
        snprintf(w->id, sizeof w->id, "%.*s",
                 id ? (int)strcspn(id + 3, ",") : 0, id ? id + 3 : "");
        w->b_us = t;
        w->e_us = -1;
    } else if (type == 'F' && nf >= 4 && strcmp(fld[3], "end") == 0) {
        /* closes the oldest open window of that fault, as the checker */
        for (size_t i = 0; i < l->nwin; i++)
            if (l->win[i].e_us < 0 && strcmp(l->win[i].name, fld[2]) == 0) {
                l->win[i].e_us = t;
                break;
            }
    }
    return 0;
}

dq_tl_rec *dq_tl_task(const dq_timeline *l, const dq_tl_rec *d)
{
    return l->ntasks ? bsearch(d, l->tasks, l->ntasks, sizeof *l->tasks,
                               cmp_rec) : NULL;
}

/* Ends l: the end is H end_us or the last record, open windows last to
 * it, each task gets its first delivery, the D times sorted. */
static void tl_finish(dq_timeline *l, int64_t last_us)
{
    l->end_us = l->end_us < last_us ? last_us : l->end_us;
    for (size_t i = 0; i < l->nwin; i++)
        l->win[i].e_us = l->win[i].e_us < 0 ? l->end_us : l->win[i].e_us;
    if (l->ntasks > 1)
        qsort(l->tasks, l->ntasks, sizeof *l->tasks, cmp_rec);
    for (size_t i = 0; i < l->nd; i++) {
        dq_tl_rec *k = dq_tl_task(l, &l->d[i]);
        if (k != NULL && (k->first_us == 0 || l->d[i].t_us < k->first_us))
            k->first_us = l->d[i].t_us;
    }
    if (l->nd > 1)
        qsort(l->d_us, l->nd, sizeof *l->d_us, cmp_i64);
}

/* Reads the E, D, F records and H end_us of the log f into l; malformed
 * lines are skipped (the checker judged the log).  0 or -1. */
static int tl_read(FILE *f, dq_timeline *l)
{
    char line[4096], *fld[6], *p;
    size_t cap[3] = {0, 0, 0}, nf;
    int64_t last_us = 0, t;
    memset(l, 0, sizeof *l);
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        for (p = line, nf = 0; nf < 6;) {
            fld[nf++] = p;
            if ((p = strchr(p, '\t')) == NULL)
                break;
            *p++ = '\0';
        }
        if (nf < 3 || fld[0][1] != '\0')
            continue;
        if (fld[0][0] == 'H' && strcmp(fld[1], "end_us") == 0)
            l->end_us = strtoll(fld[2], NULL, 10);
        if (fld[0][0] == 'H' || (t = strtoll(fld[1], NULL, 10)) <= 0)
            continue;
        if (fld[0][0] != '\0' && strchr("EDAF", fld[0][0]) != NULL) {
            l->t0_us = l->t0_us == 0 || t < l->t0_us ? t : l->t0_us;
            last_us = t > last_us ? t : last_us;
        }
        if (tl_record(l, fld, nf, t, cap) != 0)
            return -1;
    }
    tl_finish(l, last_us);
    return 0;
}

/* Opens trial i's log once for what the passes still need (what: the
 * report part, for the message when trials.csv has no trial column):
 * checks it into l->check unless done, with its lateness samples into
 * *lat when lat is not NULL (dq_check_stream_lateness), and reads its
 * timeline when timeline.  0 or -1 with err. */
static int read_log(dq_rexp *e, size_t i, const char *what, double **lat,
                    bool timeline, char *err, size_t errlen)
{
    dq_rlog *l = &e->logs[i];
    char path[PATH_MAX];
    FILE *f;
    int rc = 0;
    if (l->tl_read && lat == NULL)
        return 0;  /* checked and read; lateness samples are never kept */
    if (e->trials[i].trial == 0) {
        snprintf(err, errlen, "%s/trials.csv: no trial column (results "
                 "older than the %s report; rerun the experiment)", e->dir,
                 what);
        return -1;
    }
    snprintf(path, sizeof path, "%s/logs/trial-%03zu.log", e->dir,
             e->trials[i].trial);
    if ((f = fopen(path, "r")) == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (lat != NULL)
        rc = dq_check_stream_lateness(f, path, &l->check, lat, err, errlen);
    else if (!l->read)
        rc = dq_check_stream(f, path, &l->check, err, errlen);
    l->read = true;
    if (rc == 0 && timeline && !l->tl_read) {
        rewind(f);
        if ((rc = tl_read(f, &l->tl)) != 0)
            snprintf(err, errlen, "out of memory reading %s", path);
        l->tl_read = rc == 0;
    }
    fclose(f);
    return rc;
}

/* Pools the lateness of group g's trials into p, their checks into
 * e->logs.  0 or -1 with err. */
static int read_pool(dq_rexp *e, const dq_rgroup *g, dq_rpool *p,
                     bool timeline, char *err, size_t errlen)
{
    for (size_t i = 0; i < e->ntrials; i++) {
        dq_check *c = &e->logs[i].check;
        double *lat = NULL, *nl;
        if (!dq_trial_in_group(&e->trials[i], g))
            continue;
        if (read_log(e, i, "lateness", &lat, timeline, err, errlen) != 0) {
            free(lat);
            return -1;
        }
        if (dq_check_no_verdict(c) != NULL) {
            /* Its undelivered tasks may only be unwritten records. */
            free(lat);
            p->no_verdict++;
            continue;
        }
        if ((nl = realloc(p->lat, (p->n + c->lateness.n + 1) *
                                      sizeof *nl)) == NULL) {
            free(lat);
            snprintf(err, errlen, "%s: out of memory", e->dir);
            return -1;
        }
        p->lat = nl;
        if (c->lateness.n > 0)
            memcpy(p->lat + p->n, lat, c->lateness.n * sizeof *lat);
        free(lat);
        p->n += c->lateness.n;
        p->enqueued += c->enqueued;
        p->delivered += c->delivered;
        p->lost += c->lost;
        p->early += c->early;
        p->duplicates += c->duplicates;
        p->trials++;
    }
    if (p->n > 1)
        qsort(p->lat, p->n, sizeof *p->lat, dq_cmp_double);
    return 0;
}

/* The row label of trial t: the strategy, plus its options when e runs
 * that strategy with several option sets. */
static void row_label(const dq_rexp *e, const dq_trialrow *t, char *buf,
                      size_t len)
{
    bool varies = false;
    for (size_t i = 0; i < e->ntrials && !varies; i++)
        varies = strcmp(e->trials[i].strategy, t->strategy) == 0 &&
                 strcmp(e->trials[i].options, t->options) != 0;
    snprintf(buf, len, "%s%s%s", t->strategy, varies && t->options[0]
             ? " " : "", varies ? t->options : "");
}

/* The index of s in names[0..*n-1], added when new; -1 when full. */
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

/* Adds trial t with its log l to its cell x: to its counts when the log
 * carries a verdict, else only to no_verdict_trials (with the first
 * one's reason).  Either may be the cell's first (timeline) trial. */
static void add_to_cell(dq_loss_cell *x, const dq_trialrow *t,
                        const dq_rlog *l)
{
    const dq_strategy *s = dq_strategy_find(t->strategy);
    const dq_check *c = &l->check;
    const char *v[8];
    size_t nv;
    snprintf(x->strategy, sizeof x->strategy, "%s", t->strategy);
    x->flags = s ? s->flags : 0;
    if (x->first == NULL || t->repeat < x->first->repeat) {
        x->first = t;
        x->first_log = l;
    }
    if (dq_check_no_verdict(c) != NULL) {
        if (x->no_verdict_trials++ == 0)
            snprintf(x->no_verdict_why, sizeof x->no_verdict_why,
                     "trial %zu: %s", t->trial, dq_check_no_verdict(c));
        return;
    }
    nv = dq_check_violations(c, s ? s->flags : 0, false, v, 8);
    x->trials++;
    x->enqueued += c->enqueued;
    x->lost += c->lost;
    x->lost_claimed += c->lost_claimed;
    x->lost_retry += c->lost_retry;
    x->duplicated += c->dup_fault + c->dup_nofault;
    x->redelivered += c->redelivered + c->redelivered_hidden;
    x->pending_end += c->pending_end;
    x->early += c->early;
    x->windows += c->fault_windows;
    x->kills += t->kills > 0 ? (uint64_t)t->kills : 0;
    for (size_t k = 0; k < c->nfaults; k++)
        x->window_us += c->faults[k].window_us;
    if (s != NULL && nv > 0 && x->violation_trials++ == 0)
        snprintf(x->violation, sizeof x->violation, "%s", v[0]);
}

/* The loss table of e from its checked logs.  0 or -1 with err. */
static int build_loss(dq_rexp *e, char *err, size_t errlen)
{
    dq_loss_table *lt = e->loss = calloc(1, sizeof *lt);
    char label[64];
    if (lt == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_check *c = &e->logs[i].check;
        row_label(e, &e->trials[i], label, sizeof label);
        size_t row = find_or_add(lt->rows, &lt->nrows, DQ_LOSS_MAX_ROWS,
                                 label);
        size_t col = find_or_add(lt->faults, &lt->nfaults,
                                 DQ_LOSS_MAX_FAULTS,
                                 c->fault_spec[0] ? c->fault_spec : "none");
        if (row == (size_t)-1 || col == (size_t)-1) {
            snprintf(err, errlen, "%s: more than %d strategies or %d faults "
                     "in the loss table", e->dir, DQ_LOSS_MAX_ROWS,
                     DQ_LOSS_MAX_FAULTS);
            return -1;
        }
        add_to_cell(&lt->cells[row][col], &e->trials[i], &e->logs[i]);
    }
    return 0;
}

int dq_rexp_read_logs(dq_rexp *e, unsigned need, char *err, size_t errlen)
{
    bool lateness = need & DQ_LOGS_LATENESS;
    e->logs = calloc(e->ntrials + 1, sizeof *e->logs);
    e->pools = lateness ? calloc(e->ngroups + 1, sizeof *e->pools) : NULL;
    if (e->logs == NULL || (lateness && e->pools == NULL)) {
        snprintf(err, errlen, "%s: out of memory", e->dir);
        return -1;
    }
    for (size_t g = 0; lateness && g < e->ngroups; g++)
        if (read_pool(e, &e->groups[g], &e->pools[g],
                      need & (DQ_LOGS_FAULTS | DQ_LOGS_TIMELINE), err,
                      errlen) != 0)
            return -1;
    for (size_t i = 0; (need & (DQ_LOGS_FAULTS | DQ_LOGS_TIMELINE)) &&
                       i < e->ntrials; i++)
        if (read_log(e, i, "loss", NULL, true, err, errlen) != 0)
            return -1;
    return need & DQ_LOGS_FAULTS ? build_loss(e, err, errlen) : 0;
}

const dq_loss_cell *dq_loss_cell_at(const dq_loss_table *lt, size_t row,
                                    size_t col)
{
    return lt->cells[row][col].trials ? &lt->cells[row][col] : NULL;
}

/* ---- Words for fault specs: the fault table's own (faults.h) ---------- */

void dq_fault_phrase(dq_texts *t, const char *spec, char *buf, size_t len)
{
    (void)t;
    dq_fault_describe(spec, buf, len);
}
