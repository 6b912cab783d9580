/* results.c -- loads the results model (results.h): the experiment runs
 * with their trials grouped by matrix cell, then (results_logs.c) the
 * event logs the sections need, the bench and the probes (results_bench.c).
 *
 * trials.csv is read with the column list of harness/trialcols.h, the list
 * its writer prints, so a column added there arrives here without an
 * edit.  The medians of a cell are taken over the repeats; a per-task rate
 * is a median of per-trial ratios, skipping trials where it is undefined
 * (no Redis measured, nothing delivered), and -1 when none has one.
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

#include "../strategies/dq.h"
#include "results.h"

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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A per-trial value for a median; NAN where the trial has none. */
typedef double (*trial_value)(const dq_trialrow *t);
static double v_tps(const dq_trialrow *t) { return t->tasks_per_s; }
static double v_dup(const dq_trialrow *t) { return (double)t->duplicates; }
static double v_p50(const dq_trialrow *t) { return t->lateness_p50_ms; }
static double v_p99(const dq_trialrow *t) { return t->lateness_p99_ms; }
static double v_cmds_task(const dq_trialrow *t)
{
    return t->redis_commands >= 0 && t->delivered > 0
               ? (double)t->redis_commands / (double)t->delivered : NAN;
}
static double v_rt_task(const dq_trialrow *t)
{
    return t->redis_commands >= 0 && t->delivered > 0
               ? (double)t->round_trips / (double)t->delivered : NAN;
}
static double v_cmds_s(const dq_trialrow *t)
{
    return t->redis_commands >= 0 && t->measured_s > 0
               ? (double)t->redis_commands / t->measured_s : NAN;
}
static double v_cpu_s(const dq_trialrow *t)
{
    return t->redis_cpu_ms >= 0 && t->measured_s > 0
               ? t->redis_cpu_ms / t->measured_s : NAN;
}
static double v_rt_s(const dq_trialrow *t)
{
    return t->measured_s > 0 ? (double)t->round_trips / t->measured_s : NAN;
}

/* Median of f over the n trials m (v: scratch of n); -1 when none has a
 * value. */
static double median_of(const dq_trialrow *const *m, size_t n, trial_value f,
                        double *v)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[k] = f(m[i])))
            k++;
    if (k == 0)
        return -1;
    qsort(v, k, sizeof *v, cmp_double);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2.0;
}

/* The sums, maxima and medians of x over its trials m[0..n-1]. */
static void summarize(dq_rgroup *x, const dq_trialrow *const *m, size_t n,
                      double *v)
{
    x->n = n;
    for (size_t i = 0; i < n; i++) {
        const dq_trialrow *t = m[i];
        x->dup_sum += t->duplicates;
        x->dup_max = t->duplicates > x->dup_max ? t->duplicates : x->dup_max;
        x->dup_trials += t->duplicates > 0;
        x->lost_sum += t->lost;
        x->lost_max = t->lost > x->lost_max ? t->lost : x->lost_max;
        x->early_sum += t->early;
        x->early_max = t->early > x->early_max ? t->early : x->early_max;
        x->wakeups_sum += t->wakeups;
        x->deliveries_sum += t->deliveries;
        x->lost_races_sum += t->lost_races;
        x->enqueued_sum += t->enqueued;
        x->delivered_sum += t->delivered;
        if (t->lateness_max_ms > x->lat_max_max)
            x->lat_max_max = t->lateness_max_ms;
    }
    x->tps_median = median_of(m, n, v_tps, v);
    x->dup_median = median_of(m, n, v_dup, v);
    x->p50_median = median_of(m, n, v_p50, v);
    x->p99_median = median_of(m, n, v_p99, v);
    x->cmds_per_task_median = median_of(m, n, v_cmds_task, v);
    x->rt_per_task_median = median_of(m, n, v_rt_task, v);
    x->cmds_per_s_median = median_of(m, n, v_cmds_s, v);
    x->cpu_ms_per_s_median = median_of(m, n, v_cpu_s, v);
    x->rt_per_s_median = median_of(m, n, v_rt_s, v);
}

/* Groups e's trials by cell, first-seen order.  0, or -1 out of memory. */
static int group_trials(dq_rexp *e)
{
    size_t cap = e->ntrials ? e->ntrials : 1;
    const dq_trialrow **m = malloc(cap * sizeof *m);
    double *v = malloc(cap * sizeof *v);
    e->groups = calloc(cap, sizeof *e->groups);
    if (e->groups == NULL || m == NULL || v == NULL) {
        free(m);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_trialrow *t = &e->trials[i];
        size_t g = 0;
        while (g < e->ngroups && !dq_trial_in_group(t, &e->groups[g]))
            g++;
        if (g < e->ngroups)
            continue;
        dq_rgroup *x = &e->groups[e->ngroups++];
        snprintf(x->strategy, sizeof x->strategy, "%s", t->strategy);
        snprintf(x->options, sizeof x->options, "%s", t->options);
        x->producers = t->producers;
        x->consumers = t->consumers;
        x->work_us = t->work_us;
        x->backlog = t->backlog;
    }
    for (size_t g = 0; g < e->ngroups; g++) {
        size_t n = 0;
        for (size_t i = 0; i < e->ntrials; i++)
            if (dq_trial_in_group(&e->trials[i], &e->groups[g]))
                m[n++] = &e->trials[i];
        summarize(&e->groups[g], m, n, v);
    }
    free(m);
    free(v);
    return 0;
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
    unsigned need = logs != NULL ? logs(e) : 0;
    return need ? dq_rexp_read_logs(e, need, err, errlen) : 0;
}

/* Run directories under root/<experiment>/ of experiments without a
 * `latest` link whose meta.txt says complete = no (runs cut short by
 * Ctrl-C or a failed trial). */
static int count_incomplete(const char *root)
{
    DIR *d = opendir(root), *ed;
    struct dirent *de, *re;
    int n = 0;
    while (d != NULL && (de = readdir(d)) != NULL) {
        char p[PATH_MAX], m[PATH_MAX + 300], err[8];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s/latest", root, de->d_name);
        if (de->d_name[0] == '.' || lstat(p, &st) == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", root, de->d_name);
        for (ed = opendir(p); ed != NULL && (re = readdir(ed)) != NULL;) {
            dq_meta meta;
            snprintf(m, sizeof m, "%s/%s/meta.txt", p, re->d_name);
            if (re->d_name[0] == '.' ||
                dq_meta_load(m, &meta, err, sizeof err) != 0)
                continue;
            n += strcmp(dq_meta_get(&meta, "complete"), "no") == 0;
            dq_meta_free(&meta);
        }
        if (ed != NULL)
            closedir(ed);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names under root with a latest/trials.csv, sorted (malloc'd, *n of
 * them); NULL with *n 0 when none or out of memory (*oom set). */
static char **experiment_names(const char *root, size_t *n, bool *oom)
{
    DIR *d = opendir(root);
    char **names = NULL;
    struct dirent *de;
    *n = 0;
    *oom = false;
    while (d != NULL && (de = readdir(d)) != NULL) {
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s/latest/trials.csv", root, de->d_name);
        if (de->d_name[0] == '.' || stat(p, &st) != 0)
            continue;
        char **nn = realloc(names, (*n + 1) * sizeof *nn);
        if (nn == NULL || (nn[*n] = strdup(de->d_name)) == NULL) {
            *oom = true;
            names = nn ? nn : names;
            break;
        }
        names = nn;
        (*n)++;
    }
    if (d != NULL)
        closedir(d);
    if (*n > 0)
        qsort(names, *n, sizeof *names, cmp_str);
    return names;
}

int dq_results_load(const char *root, dq_logs_fn logs, dq_results *r,
                    char *err, size_t errlen)
{
    size_t n;
    bool oom;
    int rc = -1;
    memset(r, 0, sizeof *r);
    snprintf(r->root, sizeof r->root, "%s", root);
    char **names = experiment_names(root, &n, &oom);
    r->exps = calloc(n ? n : 1, sizeof *r->exps);
    if (oom || r->exps == NULL) {
        snprintf(err, errlen, "%s: out of memory", root);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (load_experiment(root, names[i], logs, &r->exps[r->nexps++], err,
                            errlen) != 0)
            goto done;
    r->nincomplete = count_incomplete(root);
    if (dq_perf_load(root, &r->bench, err, errlen) != 0 ||
        dq_probes_load(root, &r->probes, err, errlen) != 0)
        goto done;
    rc = (int)r->nexps;
done:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

void dq_results_free(dq_results *r)
{
    for (size_t i = 0; i < r->nexps; i++) {
        dq_rexp *e = &r->exps[i];
        dq_rexp_free_logs(e);
        dq_meta_free(&e->meta);
        dq_csv_free(&e->csv);
        free(e->groups);
    }
    free(r->exps);
    dq_perf_free(&r->bench);
    dq_probes_free(&r->probes);
    memset(r, 0, sizeof *r);
}

/* ---- Lookups ------------------------------------------------------------ */

const char *dq_rexp_meta(const dq_rexp *e, const char *key)
{
    return dq_meta_get(&e->meta, key);
}

const dq_rexp *dq_results_find(const dq_results *r, const char *name)
{
    for (size_t i = 0; i < r->nexps; i++)
        if (strcmp(r->exps[i].name, name) == 0)
            return &r->exps[i];
    return NULL;
}

void dq_rexp_plots(const dq_rexp *e, char *buf, size_t len)
{
    const char *p = dq_rexp_meta(e, "plots");
    snprintf(buf, len, "%s", p[0] ? p : "duplicates throughput");
}

bool dq_rexp_has_plot(const dq_rexp *e, const char *kind)
{
    char plots[256];
    dq_rexp_plots(e, plots, sizeof plots);
    for (char *save = NULL, *k = strtok_r(plots, " ,", &save); k;
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
    for (const char *p = options; p && *p;) {
        const char *end = strchr(p, ';');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            snprintf(buf, len, "%.*s", (int)(n - kl - 1), p + kl + 1);
            return true;
        }
        p = end ? end + 1 : NULL;
    }
    return false;
}

bool dq_trial_in_group(const dq_trialrow *t, const dq_rgroup *g)
{
    return strcmp(t->strategy, g->strategy) == 0 &&
           strcmp(t->options, g->options) == 0 &&
           t->producers == g->producers && t->consumers == g->consumers &&
           t->work_us == g->work_us && t->backlog == g->backlog;
}

long dq_group_poll_ms(const dq_rgroup *g)
{
    const dq_strategy *s = dq_strategy_find(g->strategy);
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
