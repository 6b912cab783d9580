/* results.c -- loads the results model (results.h): the experiment runs
 * with their trials grouped by matrix cell; then the event logs the
 * sections need (results_logs.c), the bench and the probes
 * (results_bench.c); and the lookups the sections and rules share.
 *
 * trials.csv is read with the column list of harness/trialcols.h, the
 * list its writer prints, so a column added there arrives here unedited.
 * A cell's medians are over its repeats; a per-task or per-second rate is
 * the median of per-trial ratios, skipping trials where it is undefined.
 */
#define _GNU_SOURCE /* realpath */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../strategies/dq.h"
#include "results.h"
#include "stats.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static const dq_colspec trial_cols[] = {
#define DQ_TC_SPEC(name, type, absent)                                       \
    {#name, DQ_COLT_##type, offsetof(dq_trialrow, name), absent},
    DQ_TRIAL_COLUMNS(DQ_TC_SPEC)
#undef DQ_TC_SPEC
};

static const char *trial_check(const void *row)
{
    const dq_trialrow *t = row;
    return t->strategy[0] == '\0' || t->consumers < 1
               ? "bad strategy or consumers" : NULL;
}

/* A trial's duplicates without its redeliveries (results.h dq_rgroup). */
static uint64_t dup_of(const dq_trialrow *t)
{
    return t->duplicates > t->redelivered ? t->duplicates - t->redelivered
                                          : 0;
}

/* The per-trial values a cell takes medians of; NAN where undefined. */
enum { V_TPS, V_DUP, V_P50, V_P99, V_CMDS_TASK, V_RT_TASK, V_CMDS_S,
       V_CPU_S, V_RT_S };
static double trial_value(const dq_trialrow *t, int v)
{
    bool cmds = t->redis_commands >= 0, per_s = t->measured_s > 0;
    double d = (double)t->delivered, s = t->measured_s;
    switch (v) {
    case V_TPS: return t->tasks_per_s;
    case V_DUP: return (double)dup_of(t);
    case V_P50: return t->lateness_p50_ms;
    case V_P99: return t->lateness_p99_ms;
    case V_CMDS_TASK:
        return cmds && d > 0 ? (double)t->redis_commands / d : NAN;
    case V_RT_TASK: return cmds && d > 0 ? (double)t->round_trips / d : NAN;
    case V_CMDS_S: return cmds && per_s ? (double)t->redis_commands / s : NAN;
    case V_CPU_S:
        return t->redis_cpu_ms >= 0 && per_s ? t->redis_cpu_ms / s : NAN;
    default: return per_s ? (double)t->round_trips / s : NAN;
    }
}

/* Median of value v over the n trials m (scratch: n doubles); -1 when no
 * trial has one. */
static double median_of(const dq_trialrow *const *m, size_t n, int v,
                        double *scratch)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += !isnan(scratch[k] = trial_value(m[i], v));
    return dq_median(scratch, k);
}

#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* The sums, maxima and medians of cell x over its trials m[0..n-1]. */
static void summarize(dq_rgroup *x, const dq_trialrow *const *m, size_t n,
                      double *v)
{
    x->n = n;
    for (size_t i = 0; i < n; i++) {
        const dq_trialrow *t = m[i];
        x->dup_sum += dup_of(t);
        x->dup_max = MAX(x->dup_max, dup_of(t));
        x->dup_trials += dup_of(t) > 0;
        x->redelivered_sum += t->redelivered;
        x->lost_sum += t->lost;
        x->lost_max = MAX(x->lost_max, t->lost);
        x->early_sum += t->early;
        x->early_max = MAX(x->early_max, t->early);
        x->wakeups_sum += t->wakeups;
        x->deliveries_sum += t->deliveries;
        x->enqueued_sum += t->enqueued;
        x->delivered_sum += t->delivered;
    }
    x->tps_median = median_of(m, n, V_TPS, v);
    x->dup_median = median_of(m, n, V_DUP, v);
    x->p50_median = median_of(m, n, V_P50, v);
    x->p99_median = median_of(m, n, V_P99, v);
    x->cmds_per_task_median = median_of(m, n, V_CMDS_TASK, v);
    x->rt_per_task_median = median_of(m, n, V_RT_TASK, v);
    x->cmds_per_s_median = median_of(m, n, V_CMDS_S, v);
    x->cpu_ms_per_s_median = median_of(m, n, V_CPU_S, v);
    x->rt_per_s_median = median_of(m, n, V_RT_S, v);
}

/* Groups e's trials by cell, first-seen order.  0, or -1 out of memory. */
static int group_trials(dq_rexp *e)
{
    size_t cap = e->ntrials ? e->ntrials : 1, g, n;
    const dq_trialrow **m = malloc(cap * sizeof *m);
    double *v = malloc(cap * sizeof *v);
    int rc = -1;
    if (m == NULL || v == NULL ||
        (e->groups = calloc(cap, sizeof *e->groups)) == NULL)
        goto done;
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_trialrow *t = &e->trials[i];
        for (g = 0; g < e->ngroups && !dq_trial_in_group(t, &e->groups[g]);)
            g++;
        if (g < e->ngroups)
            continue;
        dq_rgroup *x = &e->groups[e->ngroups++];
        snprintf(x->strategy, sizeof x->strategy, "%s", t->strategy);
        x->st = dq_strategy_find(t->strategy);
        snprintf(x->options, sizeof x->options, "%s", t->options);
        snprintf(x->fault, sizeof x->fault, "%s", t->fault);
        x->producers = t->producers;
        x->consumers = t->consumers;
        x->work_us = t->work_us;
        x->backlog = t->backlog;
    }
    for (g = 0; g < e->ngroups; g++) {
        for (size_t i = n = 0; i < e->ntrials; i++)
            if (dq_trial_in_group(&e->trials[i], &e->groups[g]))
                m[n++] = &e->trials[i];
        summarize(&e->groups[g], m, n, v);
    }
    rc = 0;
done:
    free(m);
    free(v);
    return rc;
}

/* Loads root/name/latest into e.  0 or -1 with err. */
static int load_experiment(const char *root, const char *name,
                           dq_logs_fn logs, dq_rexp *e, char *err,
                           size_t errlen)
{
    char p[PATH_MAX + 64], real[PATH_MAX];
    snprintf(e->name, sizeof e->name, "%s", name);
    snprintf(p, sizeof p, "%s/%s/latest", root, name);
    snprintf(e->dir, sizeof e->dir, "%s", realpath(p, real) ? real : p);
    snprintf(p, sizeof p, "%s/meta.txt", e->dir);
    if (dq_meta_load(p, &e->meta, err, errlen) != 0)
        return -1;
    snprintf(p, sizeof p, "%s/trials.csv", e->dir);
    int rc = dq_csv_load(p, trial_cols, DQ_TC_COUNT, sizeof(dq_trialrow),
                         false, trial_check, &e->csv, err, errlen);
    if (rc == 0)
        snprintf(err, errlen, "%s: %s", p, strerror(ENOENT));
    if (rc <= 0)
        return -1;
    e->trials = e->csv.rows;
    e->ntrials = e->csv.n;
    if (group_trials(e) != 0) {
        snprintf(err, errlen, "%s: out of memory", root);
        return -1;
    }
    return logs != NULL ? logs(e, err, errlen) : 0;
}

/* The runs under dir whose meta.txt says complete = no. */
static int count_incomplete(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char m[PATH_MAX + 300], err[8];
    int n = 0;
    while (d != NULL && (de = readdir(d)) != NULL) {
        dq_meta meta;
        snprintf(m, sizeof m, "%s/%s/meta.txt", dir, de->d_name);
        if (de->d_name[0] == '.' || dq_meta_load(m, &meta, err, sizeof err))
            continue;
        n += strcmp(dq_meta_get(&meta, "complete"), "no") == 0;
        dq_meta_free(&meta);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* Whether root/name/latest holds a trials.csv.  If not, the run is
 * counted in r as skipped: without a latest link, the incomplete runs of
 * name (cut short by Ctrl-C or a failed trial); with a latest holding the
 * experiment.ini copy every `dqlab experiment` run starts with but no
 * trials.csv, a damaged one (the first named in r->no_trials). */
static bool has_trials(const char *root, const char *name, dq_results *r)
{
    char p[PATH_MAX];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s/latest", root, name);
    if (lstat(p, &st) != 0) {
        snprintf(p, sizeof p, "%s/%s", root, name);
        r->nincomplete += count_incomplete(p);
    }
    snprintf(p, sizeof p, "%s/%s/latest/trials.csv", root, name);
    if (stat(p, &st) == 0)
        return true;
    snprintf(p, sizeof p, "%s/%s/latest/experiment.ini", root, name);
    if (access(p, F_OK) == 0 && r->nno_trials++ == 0)
        snprintf(r->no_trials, sizeof r->no_trials, "%s/%s/latest", root,
                 name);
    return false;
}

int dq_results_load(const char *root, dq_logs_fn logs, dq_results *r,
                    char *err, size_t errlen)
{
    struct dirent **de = NULL;
    int nd, rc = 0;
    memset(r, 0, sizeof *r);
    snprintf(r->root, sizeof r->root, "%s", root);
    if ((nd = scandir(root, &de, NULL, alphasort)) < 0 && errno != ENOENT) {
        snprintf(err, errlen, "%s: %s", root, strerror(errno));
        return -1;
    }
    if (nd > 0 && (r->exps = calloc((size_t)nd, sizeof *r->exps)) == NULL) {
        snprintf(err, errlen, "%s: out of memory", root);
        rc = -1;
    }
    for (int i = 0; i < nd; i++) {
        const char *name = de[i]->d_name;
        if (rc == 0 && name[0] != '.' && has_trials(root, name, r))
            rc = load_experiment(root, name, logs, &r->exps[r->nexps++],
                                 err, errlen);
        free(de[i]);
    }
    free(de);
    if (rc == 0 && (dq_perf_load(root, &r->bench, err, errlen) != 0 ||
                    dq_probes_load(root, &r->probes, err, errlen) != 0 ||
                    dq_witness_load(root, &r->witness, err, errlen) != 0 ||
                    dq_opcost_load(root, &r->opcost, err, errlen) != 0))
        rc = -1;
    return rc < 0 ? -1 : (int)r->nexps;
}

/* Frees what dq_rexp_read_logs (results_logs.c) put into e. */
static void free_logs(dq_rexp *e)
{
    for (size_t i = 0; e->logs != NULL && i < e->ntrials; i++) {
        free(e->logs[i].tl.tasks);
        free(e->logs[i].tl.d);
        free(e->logs[i].tl.d_us);
    }
    for (size_t g = 0; e->pools != NULL && g < e->ngroups; g++)
        free(e->pools[g].lat);
    free(e->loss);
    free(e->logs);
    free(e->pools);
}

void dq_results_free(dq_results *r)
{
    for (size_t i = 0; i < r->nexps; i++) {
        free_logs(&r->exps[i]);
        dq_meta_free(&r->exps[i].meta);
        dq_csv_free(&r->exps[i].csv);
        free(r->exps[i].groups);
    }
    free(r->exps);
    dq_meta_free(&r->bench.meta);
    for (size_t i = 0; i < DQ_PERF_NFILES; i++)
        dq_csv_free(&r->bench.csv[i]);
    dq_csv_free(&r->probes.csv);
    dq_csv_free(&r->opcost.csv);
    dq_meta_free(&r->opcost.meta);
    dq_csv_free(&r->witness.csv);
    memset(r, 0, sizeof *r);
}

/* ---- Lookups ------------------------------------------------------------ */

const char *dq_rexp_meta(const dq_rexp *e, const char *key)
{
    return dq_meta_get(&e->meta, key);
}

void dq_rexp_plots(const dq_rexp *e, char *buf, size_t len)
{
    const char *p = dq_rexp_meta(e, "plots");
    snprintf(buf, len, "%s", p[0] ? p : "duplicates throughput");
}

bool dq_rexp_has_plot(const dq_rexp *e, const char *kind)
{
    char plots[256], *save = NULL;
    dq_rexp_plots(e, plots, sizeof plots);
    for (char *k = strtok_r(plots, " ,", &save); k;
         k = strtok_r(NULL, " ,", &save))
        if (strcmp(k, kind) == 0)
            return true;
    return false;
}

const dq_rexp *dq_results_with_plot(const dq_results *r, const char *kind)
{
    for (size_t i = 0; i < r->nexps; i++)
        if (dq_rexp_has_plot(&r->exps[i], kind))
            return &r->exps[i];
    return NULL;
}

bool dq_options_get(const char *options, const char *key, char *buf,
                    size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = options, *end; p && *p; p = end ? end + 1 : NULL) {
        size_t n = (end = strchr(p, ';')) ? (size_t)(end - p) : strlen(p);
        if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            snprintf(buf, len, "%.*s", (int)(n - kl - 1), p + kl + 1);
            return true;
        }
    }
    return false;
}

bool dq_trial_in_group(const dq_trialrow *t, const dq_rgroup *g)
{
    return strcmp(t->strategy, g->strategy) == 0 &&
           strcmp(t->options, g->options) == 0 &&
           strcmp(t->fault, g->fault) == 0 &&
           t->producers == g->producers && t->consumers == g->consumers &&
           t->work_us == g->work_us && t->backlog == g->backlog;
}

long dq_group_poll_ms(const dq_rgroup *g)
{
    const dq_strategy *s = g->st;
    char v[32];
    if (s == NULL || !(s->flags & DQ_G_POLLS))
        return -1;
    if (dq_options_get(g->options, "poll_ms", v, sizeof v))
        return strtol(v, NULL, 10);
    for (const dq_optdef *d = s->options; d && d->name; d++)
        if (strcmp(d->name, "poll_ms") == 0 && d->def)
            return strtol(d->def, NULL, 10);
    return -1;
}

bool dq_loss_is(const dq_rexp *e)
{
    return dq_rexp_has_plot(e, "loss") || dq_rexp_meta(e, "faults")[0];
}

const dq_rexp *dq_loss_experiment(const dq_results *r)
{
    for (size_t i = 0; i < r->nexps; i++)
        if (dq_loss_is(&r->exps[i]) && r->exps[i].loss != NULL)
            return &r->exps[i];
    return NULL;
}

bool dq_rpool_pct(const dq_rpool *p, double q, double *out)
{
    uint64_t total = p->enqueued ? p->enqueued : p->n;
    if (total == 0 || p->n == 0)
        return false;
    size_t rank = dq_percentile_rank(q, (size_t)total);
    if (rank > p->n)
        return false;
    *out = p->lat[rank - 1];
    return true;
}
