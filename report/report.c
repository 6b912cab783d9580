/* report.c -- `dqlab report [RESULTS]`: results -> figures -> REPORT.md and
 * index.html.
 *
 * Reads every RESULTS/<experiment>/latest run (trials.csv and meta.txt, as
 * written by `dqlab experiment`), groups the trials by matrix cell and
 * takes medians over the repeats, then writes:
 *   report/out/data/<exp>-summary.csv      one row per cell
 *   report/out/data/<exp>-<plot>.csv       wide table for gnuplot: x =
 *                                          consumers, one column per strategy
 *   report/out/figures/<exp>-<plot>.{svg,png}   gnuplot -c report/<plot>.gp
 *   report/out/REPORT.md, report/out/index.html
 * The report is built from those files alone: every number in it, the
 * "what happened" paragraphs and the claim verdicts (claims.c) included,
 * is computed here, never typed by hand.
 *
 * Markdown and HTML.  libcmark (Debian 12: 0.30, plain CommonMark) has no
 * table extension, so the text is produced twice in step: REPORT.md gets
 * pipe tables (GitHub renders them), and the copy handed to
 * cmark_markdown_to_html() gets the same tables as raw HTML blocks
 * (rendered with CMARK_OPT_UNSAFE; every cell is escaped here).  Every
 * output goes to a temporary name and is renamed into place.
 */
#define _GNU_SOURCE /* nftw */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmark.h>

#include "../harness/commands.h"
#include "../harness/experiment.h"
#include "../strategies/dq.h"
#include "claims.h"
#include "report.h"
#include "report_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* ======================================================================
 * Loading results
 * ====================================================================== */

/* Declared in report_int.h. */
int csv_split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    line[strcspn(line, "\r\n")] = '\0';
    while (n < max) {
        if (*p == '"') {
            char *w = ++p;
            f[n++] = w;
            while (*p) {
                if (*p == '"' && p[1] == '"') {
                    *w++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *w++ = *p++;
                }
            }
            *w = '\0';
            if (*p == ',')
                p++;
            else
                break;
        } else {
            f[n++] = p;
            char *c = strchr(p, ',');
            if (c == NULL)
                break;
            *c = '\0';
            p = c + 1;
        }
    }
    return n;
}

const char *dq_rexp_meta(const dq_rexp *e, const char *key)
{
    for (size_t i = 0; i < e->nmeta; i++)
        if (strcmp(e->meta[i].key, key) == 0)
            return e->meta[i].val;
    return "";
}

const dq_rexp *dq_results_find(const dq_results *r, const char *name)
{
    for (size_t i = 0; i < r->nexps; i++)
        if (strcmp(r->exps[i].name, name) == 0)
            return &r->exps[i];
    return NULL;
}

bool dq_rexp_has_plot(const dq_rexp *e, const char *kind)
{
    char plots[256];
    snprintf(plots, sizeof plots, "%s", dq_rexp_meta(e, "plots"));
    for (char *save = NULL, *k = strtok_r(plots, " ,", &save); k;
         k = strtok_r(NULL, " ,", &save))
        if (strcmp(k, kind) == 0)
            return true;
    return false;
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

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
                     s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static int load_meta(const char *path, dq_rexp *e, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, f) > 0) {
        char *t = trim(line);
        if (*t == '#' || *t == '\0')
            continue;
        char *eq = strchr(t, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        dq_rkv *nm = realloc(e->meta, (e->nmeta + 1) * sizeof *nm);
        if (nm == NULL) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -1;
            break;
        }
        e->meta = nm;
        e->meta[e->nmeta].key = strdup(trim(t));
        e->meta[e->nmeta].val = strdup(trim(eq + 1));
        if (!e->meta[e->nmeta].key || !e->meta[e->nmeta].val) {
            free(e->meta[e->nmeta].key);
            free(e->meta[e->nmeta].val);
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -1;
            break;
        }
        e->nmeta++;
    }
    free(line);
    fclose(f);
    return rc;
}

/* Columns of trials.csv that the report reads. */
enum {
    C_STRATEGY, C_OPTIONS, C_PRODUCERS, C_CONSUMERS, C_TASKS, C_DMIN, C_DMAX,
    C_WORK, C_REPEAT, C_SEED, C_ENQ, C_DELIVERED, C_DELIVERIES, C_DUP,
    C_LOST, C_EARLY, C_P50, C_P90, C_P99, C_P999, C_PMAX, C_TPS, C_ELAPSED,
    C_CMDS, C_RT, C_EMPTY, C_RACES, C_WAKEUPS, C_NCOLS,
    /* Optional: absent in results written before they existed. */
    C_TRIAL = C_NCOLS, C_PUTBACKS, C_BACKLOG, C_IDLE, C_CLAIM_TO,
    C_MEASURED, C_CPU, C_BACKLOG_S, C_NALL
};
static const char *const col_names[C_NCOLS] = {
    "strategy", "options", "producers", "consumers", "tasks",
    "delay_min_ms", "delay_max_ms", "work_us", "repeat", "seed", "enqueued",
    "delivered", "deliveries", "duplicates", "lost", "early",
    "lateness_p50_ms", "lateness_p90_ms", "lateness_p99_ms",
    "lateness_p999_ms", "lateness_max_ms", "tasks_per_s", "elapsed_s",
    "redis_commands", "round_trips", "empty_polls", "lost_races", "wakeups"};
static const char *const opt_col_names[C_NALL - C_NCOLS] = {
    "trial", "putbacks", "backlog", "idle_ms", "claim_timeout_ms",
    "measured_s", "redis_cpu_ms", "backlog_enqueue_s"};

#define MAX_FIELDS 64

static int load_trials(const char *path, dq_rexp *e, char *err,
                       size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL, *fl[MAX_FIELDS];
    size_t cap = 0;
    int idx[C_NALL], lineno = 0, rc = -1;
    if (getline(&line, &cap, f) <= 0) {
        snprintf(err, errlen, "%s:1: empty file (no header)", path);
        goto done;
    }
    lineno = 1;
    int nh = csv_split(line, fl, MAX_FIELDS);
    for (int c = 0; c < C_NCOLS; c++) {
        idx[c] = -1;
        for (int i = 0; i < nh; i++)
            if (strcmp(fl[i], col_names[c]) == 0)
                idx[c] = i;
        if (idx[c] < 0) {
            snprintf(err, errlen, "%s:1: no column '%s'", path, col_names[c]);
            goto done;
        }
    }
    for (int c = C_NCOLS; c < C_NALL; c++) {
        idx[c] = -1;
        for (int i = 0; i < nh; i++)
            if (strcmp(fl[i], opt_col_names[c - C_NCOLS]) == 0)
                idx[c] = i;
    }
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        int n = csv_split(line, fl, MAX_FIELDS);
        if (n != nh) {
            snprintf(err, errlen, "%s:%d: %d fields, header has %d", path,
                     lineno, n, nh);
            goto done;
        }
        dq_rtrial *nt = realloc(e->trials, (e->ntrials + 1) * sizeof *nt);
        if (nt == NULL) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto done;
        }
        e->trials = nt;
        dq_rtrial *t = &e->trials[e->ntrials];
        memset(t, 0, sizeof *t);
#define S(c) fl[idx[c]]
#define U(c) strtoull(S(c), NULL, 10)
#define I(c) strtoll(S(c), NULL, 10)
#define D(c) strtod(S(c), NULL)
        snprintf(t->strategy, sizeof t->strategy, "%s", S(C_STRATEGY));
        snprintf(t->options, sizeof t->options, "%s", S(C_OPTIONS));
        t->producers = (int)I(C_PRODUCERS);
        t->consumers = (int)I(C_CONSUMERS);
        t->repeat = (int)I(C_REPEAT);
        t->tasks = I(C_TASKS);
        t->delay_min_ms = I(C_DMIN);
        t->delay_max_ms = I(C_DMAX);
        t->work_us = I(C_WORK);
        t->seed = U(C_SEED);
        t->enqueued = U(C_ENQ);
        t->delivered = U(C_DELIVERED);
        t->deliveries = U(C_DELIVERIES);
        t->duplicates = U(C_DUP);
        t->lost = U(C_LOST);
        t->early = U(C_EARLY);
        t->lat_p50_ms = D(C_P50);
        t->lat_p90_ms = D(C_P90);
        t->lat_p99_ms = D(C_P99);
        t->lat_p999_ms = D(C_P999);
        t->lat_max_ms = D(C_PMAX);
        t->tasks_per_s = D(C_TPS);
        t->elapsed_s = D(C_ELAPSED);
        t->redis_commands = I(C_CMDS);
        t->round_trips = U(C_RT);
        t->empty_polls = U(C_EMPTY);
        t->lost_races = U(C_RACES);
        t->wakeups = U(C_WAKEUPS);
#define OPT(c) (idx[c] >= 0 ? fl[idx[c]] : "")
        t->trial = (int)strtol(OPT(C_TRIAL), NULL, 10);
        t->putbacks = strtoull(OPT(C_PUTBACKS), NULL, 10);
        t->backlog = strtoll(OPT(C_BACKLOG), NULL, 10);
        t->idle_ms = strtoll(OPT(C_IDLE), NULL, 10);
        t->claim_timeout_ms = strtoll(OPT(C_CLAIM_TO), NULL, 10);
        t->measured_s = strtod(OPT(C_MEASURED), NULL);
        t->redis_cpu_ms = idx[C_CPU] >= 0 ? strtod(OPT(C_CPU), NULL) : -1;
        t->backlog_s = strtod(OPT(C_BACKLOG_S), NULL);
#undef OPT
#undef S
#undef U
#undef I
#undef D
        if (t->strategy[0] == '\0' || t->consumers < 1) {
            snprintf(err, errlen, "%s:%d: bad strategy or consumers", path,
                     lineno);
            goto done;
        }
        e->ntrials++;
    }
    rc = 0;
done:
    free(line);
    fclose(f);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool trial_in_group(const dq_rtrial *t, const dq_rgroup *g)
{
    return strcmp(t->strategy, g->strategy) == 0 &&
           strcmp(t->options, g->options) == 0 &&
           t->producers == g->producers && t->consumers == g->consumers &&
           t->work_us == g->work_us && t->backlog == g->backlog;
}

FILE *mem_open(char **buf, size_t *len, char *err, size_t errlen)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (f == NULL)
        snprintf(err, errlen, "open_memstream: %s", strerror(errno));
    return f;
}

int wide_csv(char **buf, size_t *len, const char *xname, const char *names,
             size_t stride, size_t nseries, const char *const *sufs,
             size_t nsufs, const int64_t *xs, size_t nx, wide_cell_fn cell,
             void *ctx, char *err, size_t errlen)
{
    FILE *f = mem_open(buf, len, err, errlen);
    if (f == NULL)
        return -1;
    fputs(xname, f);
    for (size_t s = 0; s < nseries; s++) {
        if (sufs == NULL || nsufs == 0)
            fprintf(f, ",%s", names + s * stride);
        for (size_t k = 0; sufs != NULL && k < nsufs; k++)
            fprintf(f, ",%s%s", names + s * stride, sufs[k]);
    }
    fputc('\n', f);
    for (size_t i = 0; i < nx; i++) {
        fprintf(f, "%" PRId64, xs[i]);
        for (size_t s = 0; s < nseries; s++) {
            fputc(',', f);
            cell(f, ctx, s, xs[i]);
        }
        fputc('\n', f);
    }
    fclose(f);
    return 0;
}

/* Median of n values (sorted in place); 0 when n == 0. */
static double median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static int group_trials(dq_rexp *e)
{
    e->groups = calloc(e->ntrials ? e->ntrials : 1, sizeof *e->groups);
    double *v = calloc(e->ntrials ? e->ntrials : 1, sizeof *v);
    if (e->groups == NULL || v == NULL) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_rtrial *t = &e->trials[i];
        size_t g;
        for (g = 0; g < e->ngroups; g++) {
            if (trial_in_group(t, &e->groups[g]))
                break;
        }
        if (g == e->ngroups) {
            dq_rgroup *x = &e->groups[e->ngroups++];
            snprintf(x->strategy, sizeof x->strategy, "%s", t->strategy);
            snprintf(x->options, sizeof x->options, "%s", t->options);
            x->producers = t->producers;
            x->consumers = t->consumers;
            x->work_us = t->work_us;
            x->backlog = t->backlog;
        }
    }
    for (size_t g = 0; g < e->ngroups; g++) {
        dq_rgroup *x = &e->groups[g];
        const dq_rtrial *m[1024];
        size_t n = 0;
        for (size_t i = 0; i < e->ntrials && n < 1024; i++) {
            const dq_rtrial *t = &e->trials[i];
            if (trial_in_group(t, x))
                m[n++] = t;
        }
        x->n = n;
        for (size_t i = 0; i < n; i++) {
            x->dup_sum += m[i]->duplicates;
            if (m[i]->duplicates > x->dup_max)
                x->dup_max = m[i]->duplicates;
            if (m[i]->duplicates > 0)
                x->dup_trials++;
            x->lost_sum += m[i]->lost;
            if (m[i]->lost > x->lost_max)
                x->lost_max = m[i]->lost;
            x->early_sum += m[i]->early;
            if (m[i]->early > x->early_max)
                x->early_max = m[i]->early;
            x->wakeups_sum += m[i]->wakeups;
            x->deliveries_sum += m[i]->deliveries;
        }
        for (size_t i = 0; i < n; i++)
            v[i] = m[i]->tasks_per_s;
        x->tps_median = median(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = (double)m[i]->duplicates;
        x->dup_median = median(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = m[i]->lat_p50_ms;
        x->p50_median = median(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = m[i]->lat_p99_ms;
        x->p99_median = median(v, n);
        size_t nc = 0;
        for (size_t i = 0; i < n; i++)
            if (m[i]->redis_commands >= 0 && m[i]->delivered > 0)
                v[nc++] = (double)m[i]->redis_commands /
                          (double)m[i]->delivered;
        x->cmds_per_task_median = nc ? median(v, nc) : -1;
        nc = 0;
        for (size_t i = 0; i < n; i++)
            if (m[i]->redis_commands >= 0 && m[i]->delivered > 0)
                v[nc++] = (double)m[i]->round_trips /
                          (double)m[i]->delivered;
        x->rt_per_task_median = nc ? median(v, nc) : -1;
        for (size_t i = 0; i < n; i++) {
            x->lost_races_sum += m[i]->lost_races;
            x->enqueued_sum += m[i]->enqueued;
            x->delivered_sum += m[i]->delivered;
            if (m[i]->lat_max_ms > x->lat_max_max)
                x->lat_max_max = m[i]->lat_max_ms;
        }
        nc = 0;
        for (size_t i = 0; i < n; i++)
            if (m[i]->redis_commands >= 0 && m[i]->measured_s > 0)
                v[nc++] = (double)m[i]->redis_commands / m[i]->measured_s;
        x->cmds_per_s_median = nc ? median(v, nc) : -1;
        nc = 0;
        for (size_t i = 0; i < n; i++)
            if (m[i]->redis_cpu_ms >= 0 && m[i]->measured_s > 0)
                v[nc++] = m[i]->redis_cpu_ms / m[i]->measured_s;
        x->cpu_ms_per_s_median = nc ? median(v, nc) : -1;
        nc = 0;
        for (size_t i = 0; i < n; i++)
            if (m[i]->measured_s > 0)
                v[nc++] = (double)m[i]->round_trips / m[i]->measured_s;
        x->rt_per_s_median = nc ? median(v, nc) : -1;
    }
    free(v);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int dq_results_load(const char *root, dq_results *r, char *err,
                    size_t errlen)
{
    memset(r, 0, sizeof *r);
    snprintf(r->root, sizeof r->root, "%s", root);
    DIR *d = opendir(root);
    if (d == NULL) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: %s", root, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t nnames = 0;
    struct dirent *de;
    int rc = -1;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s/latest/trials.csv", root, de->d_name);
        if (stat(p, &st) != 0)
            continue;
        char **nn = realloc(names, (nnames + 1) * sizeof *nn);
        if (nn == NULL)
            goto out_of_memory;
        names = nn;
        if ((names[nnames] = strdup(de->d_name)) == NULL)
            goto out_of_memory;
        nnames++;
    }
    if (nnames > 0)
        qsort(names, nnames, sizeof *names, cmp_str);
    r->exps = calloc(nnames ? nnames : 1, sizeof *r->exps);
    if (r->exps == NULL)
        goto out_of_memory;
    for (size_t i = 0; i < nnames; i++) {
        dq_rexp *e = &r->exps[r->nexps++];
        char p[PATH_MAX + 32], real[PATH_MAX];
        snprintf(e->name, sizeof e->name, "%s", names[i]);
        snprintf(p, sizeof p, "%s/%s/latest", root, names[i]);
        snprintf(e->dir, sizeof e->dir, "%s",
                 realpath(p, real) ? real : p);
        snprintf(p, sizeof p, "%s/meta.txt", e->dir);
        if (load_meta(p, e, err, errlen) != 0)
            goto done;
        snprintf(p, sizeof p, "%s/trials.csv", e->dir);
        if (load_trials(p, e, err, errlen) != 0)
            goto done;
        if (group_trials(e) != 0)
            goto out_of_memory;
    }
    rc = (int)r->nexps;
    goto done;
out_of_memory:
    snprintf(err, errlen, "%s: out of memory", root);
done:
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    closedir(d);
    if (rc < 0)
        dq_results_free(r);
    return rc;
}

void dq_results_free(dq_results *r)
{
    for (size_t i = 0; i < r->nexps; i++) {
        dq_rexp *e = &r->exps[i];
        for (size_t j = 0; j < e->nmeta; j++) {
            free(e->meta[j].key);
            free(e->meta[j].val);
        }
        free(e->meta);
        free(e->trials);
        free(e->groups);
    }
    free(r->exps);
    r->exps = NULL;
    r->nexps = 0;
}

/* ======================================================================
 * Writing
 * ====================================================================== */


void both(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(o->md, fmt, ap);
    va_end(ap);
    va_start(ap, fmt);
    vfprintf(o->hmd, fmt, ap);
    va_end(ap);
}

static void html_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* Tables: cells are plain text; md gets a pipe table, hmd an HTML one. */
void table_row(out *o, const char *const *cells, size_t n, bool head)
{
    fputc('|', o->md);
    for (size_t i = 0; i < n; i++) {
        fputc(' ', o->md);
        for (const char *c = cells[i]; *c; c++) {
            if (*c == '|')
                fputc('\\', o->md);
            fputc(*c, o->md);
        }
        fputs(" |", o->md);
    }
    fputc('\n', o->md);
    if (head) {
        fputc('|', o->md);
        for (size_t i = 0; i < n; i++)
            fputs("---|", o->md);
        fputc('\n', o->md);
        fputs("<table>\n<thead>\n", o->hmd);
    }
    fputs("<tr>", o->hmd);
    for (size_t i = 0; i < n; i++) {
        fputs(head ? "<th>" : "<td>", o->hmd);
        html_escape(o->hmd, cells[i]);
        fputs(head ? "</th>" : "</td>", o->hmd);
    }
    fputs("</tr>\n", o->hmd);
    if (head)
        fputs("</thead>\n<tbody>\n", o->hmd);
}

void table_end(out *o)
{
    fputc('\n', o->md);
    fputs("</tbody>\n</table>\n\n", o->hmd);
}

/* Renames the finished temporary file tmp to path; on failure removes
 * tmp.  Returns 0, or -1 with err naming path. */
static int rename_into(const char *tmp, const char *path, char *err,
                       size_t errlen)
{
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "rename %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Writes data to path through a temporary name and rename(). */
int write_atomic(const char *path, const char *data, size_t len,
                 char *err, size_t errlen)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    /* The reason of a short write (a full disk, a file size limit) is in
     * errno right after the call that failed. */
    errno = 0;
    size_t w = fwrite(data, 1, len, f);
    int why = w != len ? errno : 0;
    if (fclose(f) != 0 && why == 0)
        why = errno ? errno : EIO;
    if (w != len || why != 0) {
        snprintf(err, errlen, "%s: write failed: %s", tmp,
                 strerror(why ? why : EIO));
        unlink(tmp);
        return -1;
    }
    return rename_into(tmp, path, err, errlen);
}

static int mkdir_p(const char *path, char *err, size_t errlen)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "mkdir %s: %s", tmp, strerror(errno));
                return -1;
            }
            if (c == '\0')
                return 0;
            *p = c;
        }
    }
}

/* Runs gnuplot -c script in outpath; the terminal follows outpath's
 * extension (common.gp).  Writes to a temporary name first. */
int run_gnuplot(const char *script, const char *in,
                       const char *outpath, char *err, size_t errlen)
{
    char tmp[PATH_MAX + 32];
    const char *ext = strrchr(outpath, '.');
    snprintf(tmp, sizeof tmp, "%.*s.tmp%ld%s", (int)(ext - outpath), outpath,
             (long)getpid(), ext);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", "-c", script, in, tmp, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "waitpid: %s", strerror(errno));
            return -1;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        unlink(tmp);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            snprintf(err, errlen, "gnuplot not found in PATH (apt-get "
                     "install gnuplot-nox)");
        else
            snprintf(err, errlen, "gnuplot -c %s %s %s failed", script, in,
                     outpath);
        return -1;
    }
    return rename_into(tmp, outpath, err, errlen);
}

int draw_figure(out *o, const char *stem, const char *script,
                const char *ext, const char *data, size_t len, char *err,
                size_t errlen)
{
    char path[PATH_MAX], gp[PATH_MAX], fig[PATH_MAX];
    static const char *const exts[] = {"svg", "png"};

    snprintf(path, sizeof path, "%s/data/%s.%s", o->dir, stem, ext);
    if (write_atomic(path, data, len, err, errlen) != 0)
        return -1;
    snprintf(gp, sizeof gp, "%s/%s.gp", o->scripts, script);
    if (access(gp, R_OK) != 0) {
        snprintf(err, errlen, "%s: %s (run dqlab report from the dqlab "
                 "directory, or pass --scripts DIR)", gp, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < 2; i++) {
        snprintf(fig, sizeof fig, "%s/figures/%s.%s", o->dir, stem, exts[i]);
        if (run_gnuplot(gp, path, fig, err, errlen) != 0)
            return -1;
    }
    return 0;
}

void figure_links(out *o, const char *stem, const char *ext)
{
    both(o, "![%s](figures/%s.svg) ([PNG](figures/%s.png), [data](data/%s.%s))"
         "\n\n", stem, stem, stem, stem, ext);
}

void add_figure(dq_rexp *e, const char *kind)
{
    char name[sizeof e->figures[0]];
    snprintf(name, sizeof name, "%s-%s", e->name, kind);
    if (e->nfigures < 8)
        memcpy(e->figures[e->nfigures++], name, sizeof name);
}

size_t add_distinct_i64(int64_t *xs, size_t n, size_t max, int64_t v)
{
    for (size_t j = 0; j < n; j++)
        if (xs[j] == v)
            return n;
    if (n < max)
        xs[n++] = v;
    return n;
}

void sort_i64(int64_t *xs, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && xs[j - 1] > xs[j]; j--) {
            int64_t t = xs[j];
            xs[j] = xs[j - 1];
            xs[j - 1] = t;
        }
}

long group_poll_ms(const dq_rgroup *g)
{
    const dq_strategy *s = dq_strategy_find(g->strategy);
    if (s == NULL || !(s->flags & DQ_G_POLLS))
        return -1;
    char v[32];
    if (dq_options_get(g->options, "poll_ms", v, sizeof v))
        return strtol(v, NULL, 10);
    for (const dq_optdef *d = s->options; d && d->name; d++)
        if (strcmp(d->name, "poll_ms") == 0 && d->def)
            return strtol(d->def, NULL, 10);
    return -1;
}

/* Label of a group's line in a wide CSV: the strategy, plus producers and
 * work when the experiment varies them. */
void series_label(const dq_rexp *e, const dq_rgroup *g, char *buf,
                         size_t len)
{
    bool vp = false, vw = false, vo = false;
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *x = &e->groups[i];
        if (strcmp(x->strategy, g->strategy) != 0)
            continue;
        vp |= x->producers != g->producers;
        vw |= x->work_us != g->work_us;
        vo |= strcmp(x->options, g->options) != 0;
    }
    int n = snprintf(buf, len, "%s", g->strategy);
    if (vo && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " %s", g->options);
    if (vp && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " p=%d", g->producers);
    if (vw && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " work=%" PRId64 "us", g->work_us);
    /* Commas would break the CSV header. */
    for (char *p = buf; *p; p++)
        if (*p == ',' || *p == '"')
            *p = ';';
}

/* The value a plot kind shows for one group. */
static double plot_value(const char *kind, const dq_rgroup *g)
{
    if (strcmp(kind, "duplicates") == 0)
        return g->dup_median;
    if (strcmp(kind, "throughput") == 0)
        return g->tps_median;
    return g->p99_median; /* lateness */
}

/* make_plot's wide_csv context: the experiment, plot kind and series
 * labels. */
typedef struct {
    const dq_rexp *e;
    const char *kind;
    char (*labels)[128];
} plot_ctx;

/* wide_cell_fn of make_plot: the plot value of the group of series s at
 * x consumers (the first such group), or nothing. */
static void plot_cell(FILE *f, void *ctx, size_t s, int64_t x)
{
    const plot_ctx *c = ctx;
    for (size_t g = 0; g < c->e->ngroups; g++) {
        char l[128];
        series_label(c->e, &c->e->groups[g], l, sizeof l);
        if (c->e->groups[g].consumers == x && strcmp(l, c->labels[s]) == 0) {
            fprintf(f, "%.3f", plot_value(c->kind, &c->e->groups[g]));
            return;
        }
    }
}

/* Writes data/<exp>-<kind>.csv (wide) and figures/<exp>-<kind>.{svg,png}. */
static int make_plot(out *o, dq_rexp *e, const char *kind, char *err,
                     size_t errlen)
{
    char labels[64][128];
    size_t nl = 0;
    int64_t xs[64];
    size_t nx = 0;
    for (size_t i = 0; i < e->ngroups; i++) {
        char l[128];
        series_label(e, &e->groups[i], l, sizeof l);
        size_t j;
        for (j = 0; j < nl && strcmp(labels[j], l) != 0; j++)
            ;
        if (j == nl && nl < 64)
            snprintf(labels[nl++], sizeof labels[0], "%s", l);
        nx = add_distinct_i64(xs, nx, 64, e->groups[i].consumers);
    }
    sort_i64(xs, nx); /* x ascending */
    plot_ctx c = {e, kind, labels};
    char *buf;
    size_t len;
    if (wide_csv(&buf, &len, "consumers", labels[0], sizeof labels[0], nl,
                 NULL, 0, xs, nx, plot_cell, &c, err, errlen) != 0)
        return -1;
    char stem[PATH_MAX];
    snprintf(stem, sizeof stem, "%s-%s", e->name, kind);
    int rc = draw_figure(o, stem, kind, "csv", buf, len, err, errlen);
    free(buf);
    if (rc != 0)
        return -1;
    add_figure(e, kind);
    return 0;
}

static int write_summary_csv(out *o, const dq_rexp *e, char *err,
                             size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    fputs("strategy,options,producers,consumers,work_us,repeats,"
          "tasks_per_s_median,duplicates_median,duplicates_max,"
          "trials_with_duplicates,lost_max,early_max,lateness_p50_ms_median,"
          "lateness_p99_ms_median,redis_commands_per_task_median,"
          "wakeups_per_delivery\n", f);
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        fprintf(f, "%s,\"%s\",%d,%d,%" PRId64 ",%zu,%.1f,%.1f,%" PRIu64
                ",%zu,%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.2f,%.3f\n",
                g->strategy, g->options, g->producers, g->consumers,
                g->work_us, g->n, g->tps_median, g->dup_median, g->dup_max,
                g->dup_trials, g->lost_max, g->early_max, g->p50_median,
                g->p99_median, g->cmds_per_task_median,
                g->deliveries_sum ? (double)g->wakeups_sum /
                                        (double)g->deliveries_sum : 0.0);
    }
    fclose(f);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/data/%s-summary.csv", o->dir, e->name);
    int rc = write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

/* Distinct strategy names of e in first-seen order. */
size_t strategies_of(const dq_rexp *e, char names[][32], size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < e->ngroups; i++) {
        size_t j;
        for (j = 0; j < n && strcmp(names[j], e->groups[i].strategy) != 0;
             j++)
            ;
        if (j == n && n < max)
            snprintf(names[n++], 32, "%s", e->groups[i].strategy);
    }
    return n;
}

/* "a", "a and b", "a, b and c" */
void join_and(char names[][32], const size_t *idx, size_t n,
                     char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s",
                                i == 0 ? "" : i + 1 == n ? " and " : ", ",
                                names[idx[i]]);
}

/* The "what happened" paragraph, computed from e's trials. */
static void what_happened(out *o, const dq_rexp *e)
{
    char names[16][32];
    size_t ns = strategies_of(e, names, 16);
    size_t clean[16], nclean = 0;
    int minc = INT_MAX, maxc = 0;
    for (size_t i = 0; i < e->ngroups; i++) {
        if (e->groups[i].consumers < minc)
            minc = e->groups[i].consumers;
        if (e->groups[i].consumers > maxc)
            maxc = e->groups[i].consumers;
    }
    both(o, "**What happened.** ");
    if (maxc >= 2) {
        for (size_t s = 0; s < ns; s++) {
            uint64_t dup = 0;
            size_t n = 0, nd = 0;
            for (size_t i = 0; i < e->ntrials; i++) {
                const dq_rtrial *t = &e->trials[i];
                if (strcmp(t->strategy, names[s]) != 0 || t->consumers < 2)
                    continue;
                n++;
                dup += t->duplicates;
                nd += t->duplicates > 0;
            }
            if (n == 0)
                continue;
            if (dup > 0)
                both(o, "%s delivered %" PRIu64 " duplicate%s in %zu of %zu "
                     "trials with 2+ consumers. ", names[s], dup,
                     dup == 1 ? "" : "s", nd, n);
            else
                clean[nclean++] = s;
        }
        if (nclean > 0) {
            char list[512];
            join_and(names, clean, nclean, list, sizeof list);
            both(o, "%s delivered no duplicate%s with 2+ consumers. ", list,
                 nclean == ns ? " at all" : "");
        }
    }
    /* Lost races: claims that found their task taken by another consumer
     * (naive-checked: ZREM returned 0; expiry: the event's task was
     * gone), the price of a claim that checks instead of locking. */
    {
        size_t nr = 0;
        for (size_t s = 0; s < ns; s++) {
            uint64_t races = 0, deliv = 0;
            for (size_t i = 0; i < e->ntrials; i++)
                if (strcmp(e->trials[i].strategy, names[s]) == 0) {
                    races += e->trials[i].lost_races;
                    deliv += e->trials[i].delivered;
                }
            if (races == 0)
                continue;
            both(o, "%s%s %" PRIu64 " (%.2f per delivered task)",
                 nr++ ? ", " : "Lost races (a claim that found its task "
                 "already taken by another consumer; naive-checked and expiry "
                 "then try again, naive delivers it anyway, so there each lost "
                 "race is a duplicate): ",
                 names[s], races, deliv ? (double)races / (double)deliv : 0);
        }
        if (nr > 0)
            both(o, ". ");
    }
    uint64_t lost = 0, early = 0;
    for (size_t i = 0; i < e->ntrials; i++) {
        lost += e->trials[i].lost;
        early += e->trials[i].early;
    }
    if (lost == 0 && early == 0) {
        both(o, "No strategy lost a task or delivered one before its due "
             "time. ");
    } else {
        for (size_t s = 0; s < ns; s++) {
            uint64_t l = 0, ea = 0;
            size_t nl = 0;
            for (size_t i = 0; i < e->ntrials; i++)
                if (strcmp(e->trials[i].strategy, names[s]) == 0) {
                    l += e->trials[i].lost;
                    ea += e->trials[i].early;
                    nl += e->trials[i].lost > 0;
                }
            if (l > 0)
                both(o, "%s lost %" PRIu64 " task%s in %zu trial%s. ",
                     names[s], l, l == 1 ? "" : "s", nl, nl == 1 ? "" : "s");
            if (ea > 0)
                both(o, "%s delivered %" PRIu64 " task%s early. ", names[s],
                     ea, ea == 1 ? "" : "s");
        }
    }
    if (maxc > minc) {
        both(o, "Median throughput from %d to %d consumers:", minc, maxc);
        for (size_t s = 0; s < ns; s++) {
            double lo = -1, hi = -1;
            for (size_t i = 0; i < e->ngroups; i++) {
                const dq_rgroup *g = &e->groups[i];
                if (strcmp(g->strategy, names[s]) != 0)
                    continue;
                if (g->consumers == minc && lo < 0)
                    lo = g->tps_median;
                if (g->consumers == maxc && hi < 0)
                    hi = g->tps_median;
            }
            if (lo >= 0 && hi >= 0)
                both(o, "%s %s %.0f to %.0f tasks/s", s ? "," : "", names[s],
                     lo, hi);
        }
        both(o, ". ");
    }
    /* Tasks fall due over delay_max - delay_min ms, which caps the
     * delivery rate whatever the strategy. */
    if (e->ntrials > 0 && e->trials[0].delay_max_ms > 0) {
        const dq_rtrial *t0 = &e->trials[0];
        double window = (double)(t0->delay_max_ms - t0->delay_min_ms);
        if (window < 1)
            window = 1;
        double cap = (double)t0->tasks * 1000.0 / window;
        /* Each strategy that reached 90% of the cap, with the share its
         * best cell reached (printed as measured, not as "90%"). */
        char list[1024] = "";
        size_t loff = 0, nat = 0;
        for (size_t s = 0; s < ns; s++) {
            double best = -1;
            for (size_t i = 0; i < e->ngroups; i++)
                if (strcmp(e->groups[i].strategy, names[s]) == 0 &&
                    e->groups[i].tps_median > best)
                    best = e->groups[i].tps_median;
            if (best < 0.9 * cap)
                continue;
            nat++;
            loff += (size_t)snprintf(list + loff, loff < sizeof list
                                     ? sizeof list - loff : 0,
                                     "%s%s %.1f%%", loff ? ", " : "",
                                     names[s], 100.0 * best / cap);
        }
        if (nat > 0)
            both(o, "Reaching 90%% or more of the rate at which tasks fall "
                 "due (%.0f tasks/s: %" PRId64 " tasks over %.0f ms), as a "
                 "share of that rate in their best cell: %s; there the "
                 "figure shows the arrival rate, not the strategy's "
                 "limit. ", cap, t0->tasks, window, list);
    }
    double p99max = 0;
    const char *p99s = "";
    int p99c = 0;
    for (size_t i = 0; i < e->ngroups; i++)
        if (e->groups[i].p99_median > p99max) {
            p99max = e->groups[i].p99_median;
            p99s = e->groups[i].strategy;
            p99c = e->groups[i].consumers;
        }
    if (p99max > 0)
        both(o, "The highest median p99 lateness was %.1f ms (%s, %d "
             "consumer%s).", p99max, p99s, p99c, p99c == 1 ? "" : "s");
    both(o, "\n\n");
    const char *complete = dq_rexp_meta(e, "complete");
    if (strcmp(complete, "yes") != 0)
        both(o, "*This run is incomplete: %s of %s trials.*\n\n",
             dq_rexp_meta(e, "trials_done"),
             dq_rexp_meta(e, "trials_planned"));
}

void fmt_double(char *buf, size_t len, double v, int prec)
{
    if (v < 0)
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.*f", prec, v);
}

/* "Raw results: `DIR`" with DIR relative to the working directory when it
 * lies below it (results/NAME/STAMP), so the report names no absolute
 * path of the machine that wrote it. */
static void raw_results(out *o, const dq_rexp *e)
{
    char cwd[PATH_MAX];
    const char *d = e->dir;
    if (getcwd(cwd, sizeof cwd) != NULL) {
        size_t n = strlen(cwd);
        if (n > 1 && strncmp(d, cwd, n) == 0 && d[n] == '/')
            d += n + 1;
    }
    both(o, "Raw results: `%s` (trials.csv, meta.txt, logs/).\n\n", d);
}

/* "s" unless the meta value count is "1". */
static const char *plural(const char *count)
{
    return strcmp(count, "1") == 0 ? "" : "s";
}

static int write_experiment(out *o, dq_rexp *e, char *err, size_t errlen)
{
    if (write_summary_csv(o, e, err, errlen) != 0)
        return -1;
    /* Plots named in meta (default: duplicates, throughput). */
    char plots[256];
    snprintf(plots, sizeof plots, "%s", dq_rexp_meta(e, "plots"));
    if (plots[0] == '\0')
        snprintf(plots, sizeof plots, "duplicates throughput");
    for (char *k = strtok(plots, " ,"); k; k = strtok(NULL, " ,")) {
        if (strcmp(k, "duplicates") != 0 && strcmp(k, "throughput") != 0 &&
            strcmp(k, "lateness") != 0)
            continue;
        if (make_plot(o, e, k, err, errlen) != 0)
            return -1;
    }

    const char *title = dq_rexp_meta(e, "title");
    both(o, "## %s (`%s`)\n\n", title[0] ? title : e->name, e->name);
    const char *desc = dq_rexp_meta(e, "description");
    if (dq_loss_is(e) && dq_rexp_meta(e, "faults")[0]) {
        /* From the specs the run used, not the .ini's description (which
         * names the full form's faults, not the quick form's). */
        char ld[2048];
        dq_loss_describe(e, ld, sizeof ld);
        both(o, "%s\n\n", ld);
    } else if (desc[0]) {
        both(o, "%s\n\n", desc);
    }
    if (strcmp(dq_rexp_meta(e, "tasks"), "0") == 0)
        both(o, "Parameters: strategies %s; consumers %s; idle mode: no "
             "task, consumers claim for %s ms with a claim timeout of %s "
             "ms; %s repeat%s; seed %s%s.  ",
             dq_rexp_meta(e, "strategies"), dq_rexp_meta(e, "consumers"),
             dq_rexp_meta(e, "idle_ms"), dq_rexp_meta(e, "claim_timeout_ms"),
             dq_rexp_meta(e, "repeats"), plural(dq_rexp_meta(e, "repeats")),
             dq_rexp_meta(e, "seed"),
             strcmp(dq_rexp_meta(e, "quick"), "yes") == 0 ? " (quick form)"
                                                          : "");
    else
        both(o, "Parameters: strategies %s; consumers %s; producers %s; %s "
             "tasks per trial, due %s ms after enqueue; work %s us per "
             "task; %s repeat%s; seed %s%s.  ",
             dq_rexp_meta(e, "strategies"), dq_rexp_meta(e, "consumers"),
             dq_rexp_meta(e, "producers"), dq_rexp_meta(e, "tasks"),
             dq_rexp_meta(e, "delay_ms"), dq_rexp_meta(e, "work_us"),
             dq_rexp_meta(e, "repeats"), plural(dq_rexp_meta(e, "repeats")),
             dq_rexp_meta(e, "seed"),
             strcmp(dq_rexp_meta(e, "quick"), "yes") == 0 ? " (quick form)"
                                                          : "");
    if (dq_rexp_meta(e, "backlog")[0] &&
        strcmp(dq_rexp_meta(e, "backlog"), "0") != 0)
        both(o, "Backlog before the measured tasks: %s tasks due %s ms "
             "ahead; observation window: %s ms (grace) after the last due "
             "time.  ", dq_rexp_meta(e, "backlog"),
             dq_rexp_meta(e, "backlog_delay_ms"), dq_rexp_meta(e, "grace_ms"));
    /* Redacted again: a meta.txt written before dqlab masked --redis
     * passwords may still hold one.  Older runs also wrote "dqlab ..." for
     * the binary, which is bin/dqlab in this tree. */
    char cmd[1024];
    dq_redact_redis_urls(dq_rexp_meta(e, "command"), cmd, sizeof cmd);
    both(o, "Run: `%s%s` (%s trial%s, %s).",
         strncmp(cmd, "dqlab ", 6) == 0 ? "bin/" : "", cmd,
         dq_rexp_meta(e, "trials_done"),
         plural(dq_rexp_meta(e, "trials_done")), dq_rexp_meta(e, "date"));
    const char *claims = dq_rexp_meta(e, "claims");
    if (claims[0])
        both(o, "  Bears on claims %s.", claims);
    both(o, "\n\n");

    int src = 1;
    if (dq_rexp_has_plot(e, "lateness-cdf"))
        src = section_lateness_cdf(o, e, err, errlen);
    else if (dq_rexp_has_plot(e, "idle-cost"))
        src = section_idle_cost(o, e, err, errlen);
    else if (dq_rexp_has_plot(e, "backlog-lateness"))
        src = section_backlog(o, e, err, errlen);
    else if (dq_loss_is(e))
        src = section_loss(o, e, err, errlen);
    if (src < 0)
        return -1;
    if (src == 0) {
        raw_results(o, e);
        return 0;
    }

    for (size_t i = 0; i < e->nfigures; i++)
        both(o, "![%s](figures/%s.svg) ([PNG](figures/%s.png), "
             "[data](data/%s.csv))\n\n", e->figures[i], e->figures[i],
             e->figures[i], e->figures[i]);

    bool vp = false, vw = false;
    for (size_t i = 1; i < e->ngroups; i++) {
        vp |= e->groups[i].producers != e->groups[0].producers;
        vw |= e->groups[i].work_us != e->groups[0].work_us;
    }
    const char *head[16];
    size_t nh = 0;
    head[nh++] = "strategy";
    if (vp)
        head[nh++] = "producers";
    head[nh++] = "consumers";
    if (vw)
        head[nh++] = "work us";
    head[nh++] = "repeats";
    head[nh++] = "tasks/s (median)";
    head[nh++] = "duplicates (median)";
    head[nh++] = "duplicates (max)";
    head[nh++] = "lost (max)";
    head[nh++] = "early (max)";
    head[nh++] = "lateness p50 ms";
    head[nh++] = "lateness p99 ms";
    head[nh++] = "Redis cmds/task";
    head[nh++] = "round trips/task";
    table_row(o, head, nh, true);
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        char c[16][64];
        const char *cells[16];
        size_t n = 0;
        series_label(e, g, c[n++], 64);
        if (vp)
            snprintf(c[n++], 64, "%d", g->producers);
        snprintf(c[n++], 64, "%d", g->consumers);
        if (vw)
            snprintf(c[n++], 64, "%" PRId64, g->work_us);
        snprintf(c[n++], 64, "%zu", g->n);
        snprintf(c[n++], 64, "%.0f", g->tps_median);
        snprintf(c[n++], 64, "%g", g->dup_median);
        snprintf(c[n++], 64, "%" PRIu64, g->dup_max);
        snprintf(c[n++], 64, "%" PRIu64, g->lost_max);
        snprintf(c[n++], 64, "%" PRIu64, g->early_max);
        snprintf(c[n++], 64, "%.1f", g->p50_median);
        snprintf(c[n++], 64, "%.1f", g->p99_median);
        fmt_double(c[n++], 64, g->cmds_per_task_median, 1);
        fmt_double(c[n++], 64, g->rt_per_task_median, 1);
        for (size_t k = 0; k < n; k++)
            cells[k] = c[k];
        table_row(o, cells, n, false);
    }
    table_end(o);
    both(o, "Redis cmds/task is the server's count (INFO commandstats "
         "delta) per delivered task.  It includes the commands run inside "
         "Lua scripts (each redis.call() counts, and so does the EVALSHA) "
         "and every command of a MULTI/EXEC block or pipeline, so script "
         "and transaction strategies show more commands than round trips.  "
         "Round trips/task counts the requests the producers and consumers "
         "sent and waited for (a pipeline, transaction or script call is "
         "one).  n/a: the strategy does not use Redis.\n\n");
    what_happened(o, e);
    raw_results(o, e);
    return 0;
}

static void write_environment(out *o, const dq_results *r)
{
    both(o, "## Environment\n\n");
    const char *head[] = {"experiment", "date", "Redis", "dqlab commit",
                          "CPU", "cores", "host", "quick", "complete"};
    table_row(o, head, 9, true);
    for (size_t i = 0; i < r->nexps; i++) {
        const dq_rexp *e = &r->exps[i];
        const char *cells[] = {
            e->name, dq_rexp_meta(e, "date"),
            dq_rexp_meta(e, "redis_version"), dq_rexp_meta(e, "dqlab_commit"),
            dq_rexp_meta(e, "cpu_model"), dq_rexp_meta(e, "cores"),
            dq_rexp_meta(e, "hostname"), dq_rexp_meta(e, "quick"),
            dq_rexp_meta(e, "complete")};
        table_row(o, cells, 9, false);
    }
    table_end(o);
}

static void write_strategies(out *o)
{
    both(o, "## Strategies\n\n");
    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];
        both(o, "### %s\n\n%s\n\n", s->name, s->summary ? s->summary : "");
        if (s->doc != NULL)
            both(o, "%s\n\n", s->doc);
        both(o, "Guarantees and traits:");
        size_t n = 0;
        for (unsigned bit = 1; bit != 0 && bit <= (1u << 30); bit <<= 1) {
            if (!(s->flags & bit))
                continue;
            const char *name = dq_flag_name(bit);
            both(o, "%s %s", n++ ? "," : "", name ? name : "?");
        }
        both(o, "%s.", n ? "" : " none declared");
        if (s->min_redis)
            both(o, "  Needs Redis %s or later.", s->min_redis);
        both(o, "\n\n");
        if (s->options && s->options[0].name) {
            const char *head[] = {"option", "default", "meaning"};
            table_row(o, head, 3, true);
            for (const dq_optdef *d = s->options; d->name; d++) {
                const char *cells[] = {d->name, d->def ? d->def : "",
                                       d->help ? d->help : ""};
                table_row(o, cells, 3, false);
            }
            table_end(o);
        } else {
            both(o, "No options.\n\n");
        }
    }
}

static void write_claims(out *o, const dq_results *r)
{
    both(o, "## Claims\n\n");
    both(o, "Each claim the lab tests, with a verdict computed from the "
         "results above: *holds*, *holds with conditions*, *does not hold* "
         "or *not yet measured*.  The list and the rules that decide it "
         "live in `report/claims.c`; the ids are those of the claims list "
         "in the project's shared brief.\n\n");
    size_t n = 0;
    while (dq_claims[n].id)
        n++;
    dq_verdict *v = calloc(n ? n : 1, sizeof *v);
    char (*ev)[2048] = calloc(n ? n : 1, sizeof *ev);
    if (v == NULL || ev == NULL) {
        free(v);
        free(ev);
        both(o, "(out of memory)\n\n");
        return;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = dq_claim_decide(&dq_claims[i], r, ev[i], sizeof ev[i]);
    const char *head[] = {"id", "verdict", "claim"};
    table_row(o, head, 3, true);
    for (size_t i = 0; i < n; i++) {
        const char *cells[] = {dq_claims[i].id, dq_verdict_name(v[i]),
                               dq_claims[i].text};
        table_row(o, cells, 3, false);
    }
    table_end(o);
    for (size_t i = 0; i < n; i++)
        both(o, "- **%s: %s** %s Evidence: %s\n", dq_claims[i].id,
             dq_verdict_name(v[i]), dq_claims[i].text, ev[i]);
    both(o, "\n");
    free(v);
    free(ev);
}

static const char html_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>dqlab report</title>\n<style>\n"
    "body{font-family:system-ui,-apple-system,\"DejaVu Sans\",sans-serif;"
    "max-width:64rem;margin:2rem auto;padding:0 1rem;line-height:1.5;"
    "color:#222}\n"
    "h1,h2,h3{line-height:1.2}h2{border-bottom:1px solid #ddd;"
    "padding-bottom:.2rem;margin-top:2.5rem}\n"
    "table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}\n"
    "th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;"
    "vertical-align:top}\nth{background:#f3f3f3}\n"
    "tr:nth-child(even) td{background:#fafafa}\n"
    "code{background:#f3f3f3;padding:0 .2rem;border-radius:3px}\n"
    "img{max-width:100%;height:auto;border:1px solid #eee}\n"
    "</style>\n</head>\n<body>\n";

/* nftw callback of rm_rf. */
static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* rm -rf path (no error when it does not exist). */
static void rm_rf(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Finds an experiment whose `latest` run has no trials.csv (which
 * dq_results_load skips): root/NAME/latest holding the experiment.ini copy
 * every `dqlab experiment` run starts with, but no trials.csv.  Returns
 * how many there are, the first one's path "root/NAME/latest" in path. */
static int count_without_trials(const char *root, char *path, size_t len)
{
    int n = 0;
    DIR *d = opendir(root);
    if (d == NULL)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s/latest/experiment.ini", root,
                 de->d_name);
        if (access(p, F_OK) != 0)
            continue;
        snprintf(p, sizeof p, "%s/%s/latest/trials.csv", root, de->d_name);
        if (access(p, F_OK) == 0)
            continue;
        if (n++ == 0)
            snprintf(path, len, "%s/%s/latest", root, de->d_name);
    }
    closedir(d);
    return n;
}

/* Counts run directories under root/<experiment>/ of experiments without a
 * `latest` link whose meta.txt says complete = no (runs cut short by
 * Ctrl-C or a failed trial, which dq_results_load skips). */
static int count_incomplete(const char *root)
{
    int n = 0;
    DIR *d = opendir(root);
    if (d == NULL)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s/latest", root, de->d_name);
        if (lstat(p, &st) == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", root, de->d_name);
        DIR *ed = opendir(p);
        if (ed == NULL)
            continue;
        struct dirent *re;
        while ((re = readdir(ed)) != NULL) {
            if (re->d_name[0] == '.')
                continue;
            char m[PATH_MAX + 300];
            snprintf(m, sizeof m, "%s/%s/meta.txt", p, re->d_name);
            FILE *f = fopen(m, "r");
            if (f == NULL)
                continue;
            char line[256];
            while (fgets(line, sizeof line, f) != NULL)
                if (strncmp(line, "complete = no", 13) == 0) {
                    n++;
                    break;
                }
            fclose(f);
        }
        closedir(ed);
    }
    closedir(d);
    return n;
}

int dq_cmd_report(int argc, char **argv)
{
    const char *root = NULL, *outdir = "report/out", *scripts = "report";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 ||
            strcmp(argv[i], "--scripts") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '\0') {
                fprintf(stderr, "dqlab report: %s needs a value\n", argv[i]);
                return 2;
            }
            if (argv[i][2] == 'o')
                outdir = argv[++i];
            else
                scripts = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            printf("usage: dqlab report [RESULTS] [--out DIR] "
                   "[--scripts DIR]\n"
                   "  reads RESULTS/*/latest (default results), writes "
                   "DIR/REPORT.md, DIR/index.html,\n"
                   "  DIR/data/*.csv, DIR/figures/* (default report/out) "
                   "using the gnuplot scripts in\n"
                   "  --scripts (default report)\n");
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "dqlab report: unknown option %s (see dqlab "
                    "report --help)\n", argv[i]);
            return 2;
        } else if (root != NULL) {
            fprintf(stderr, "dqlab report: unexpected argument %s (one "
                    "RESULTS dir only; see dqlab report --help)\n",
                    argv[i]);
            return 2;
        } else {
            root = argv[i];
        }
    }
    if (root == NULL)
        root = "results";

    /* Everything that can be checked is checked before anything is
     * written. */
    struct stat rst;
    if (stat(root, &rst) != 0) {
        if (errno == ENOENT)
            fprintf(stderr, "dqlab report: results dir %s does not exist "
                    "(run `make report` or `dqlab experiment FILE` first)\n",
                    root);
        else
            fprintf(stderr, "dqlab report: %s: %s\n", root,
                    strerror(errno));
        return 2;
    }
    if (!S_ISDIR(rst.st_mode)) {
        fprintf(stderr, "dqlab report: results dir %s is not a directory\n",
                root);
        return 2;
    }
    char err[1024], path[PATH_MAX];
    snprintf(path, sizeof path, "%s/common.gp", scripts);
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "dqlab report: %s: %s (run dqlab report from the "
                "dqlab directory, or pass --scripts DIR)\n", path,
                strerror(errno));
        return 2;
    }
    dq_results r;
    int n = dq_results_load(root, &r, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "dqlab report: %s\n", err);
        return 2;
    }
    int nincomplete = count_incomplete(root);
    char damaged[PATH_MAX] = "";
    int ndamaged = count_without_trials(root, damaged, sizeof damaged);
    snprintf(path, sizeof path, "%s/bench/latest/meta.txt", root);
    bool have_bench = access(path, R_OK) == 0; /* `dqlab bench` results */
    if (n == 0 && !have_bench) {
        if (ndamaged > 0)
            fprintf(stderr, "dqlab report: %s has no trials.csv, so there "
                    "is nothing to report (%d latest run%s lack%s it); rerun "
                    "the experiment with `dqlab experiment FILE`\n", damaged,
                    ndamaged, ndamaged == 1 ? "" : "s",
                    ndamaged == 1 ? "s" : "");
        else if (nincomplete > 0)
            fprintf(stderr, "dqlab report: no complete run under %s/: %d "
                    "incomplete run%s (interrupted or failed) %s skipped; "
                    "rerun `dqlab experiment FILE`\n", root, nincomplete,
                    nincomplete == 1 ? "" : "s",
                    nincomplete == 1 ? "was" : "were");
        else
            fprintf(stderr, "dqlab report: no results under %s/: run `make "
                    "report` or `dqlab experiment FILE`\n", root);
        dq_results_free(&r);
        return 2;
    }
    if (nincomplete > 0)
        fprintf(stderr, "dqlab report: note: %d incomplete run%s of "
                "experiments without a complete run %s skipped\n",
                nincomplete, nincomplete == 1 ? "" : "s",
                nincomplete == 1 ? "was" : "were");
    if (ndamaged > 0)
        fprintf(stderr, "dqlab report: note: %s has no trials.csv: skipped "
                "(%d latest run%s lack%s it)\n", damaged, ndamaged,
                ndamaged == 1 ? "" : "s", ndamaged == 1 ? "s" : "");

    /* The output is built in a directory next to outdir and renamed into
     * place at the end, so a failure leaves the previous report whole. */
    int ret = 2;
    char stage[PATH_MAX], old[PATH_MAX];
    stage[0] = old[0] = '\0';
    out o = {.dir = NULL, .scripts = scripts};
    {
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", outdir);
        size_t pl = strlen(parent);
        while (pl > 1 && parent[pl - 1] == '/')
            parent[--pl] = '\0';
        char *slash = strrchr(parent, '/');
        if (slash != NULL && slash != parent) {
            *slash = '\0';
            if (mkdir_p(parent, err, sizeof err) != 0)
                goto fail;
            *slash = '/';
        }
        snprintf(stage, sizeof stage, "%s.tmp.%ld", parent, (long)getpid());
        snprintf(old, sizeof old, "%s.old.%ld", parent, (long)getpid());
    }
    rm_rf(stage);
    o.dir = stage;
    snprintf(path, sizeof path, "%s/data", stage);
    if (mkdir_p(path, err, sizeof err) != 0)
        goto fail;
    snprintf(path, sizeof path, "%s/figures", stage);
    if (mkdir_p(path, err, sizeof err) != 0)
        goto fail;
    o.md = open_memstream(&o.mdbuf, &o.mdlen);
    o.hmd = open_memstream(&o.hmdbuf, &o.hmdlen);
    if (o.md == NULL || o.hmd == NULL) {
        snprintf(err, sizeof err, "open_memstream: %s", strerror(errno));
        goto fail;
    }

    char now[64];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%d %H:%M:%S %z", &tm);
    both(&o, "# dqlab report\n\n");
    both(&o, "Delay-queue strategies on Redis, run side by side and checked "
         "from their event logs.  Generated %s from `%s/` (%d "
         "experiment%s).\n\n", now, root, n, n == 1 ? "" : "s");
    both(&o, "Regenerate: `make report` (runs every `experiments/*.ini` "
         "with `--quick`, then this report; `make report FULL=1` for the "
         "full suite), or from stored results only: `bin/dqlab report "
         "%s`.\n\n", root);
    both(&o, "Terms: a *duplicate* is an extra delivery of a task already "
         "delivered; *lost* tasks were enqueued and never delivered; "
         "*early* deliveries came before the task's due time; *lateness* "
         "is first delivery minus due time.  Medians are over the repeats "
         "of each cell.\n\n");
    write_environment(&o, &r);
    for (size_t i = 0; i < r.nexps; i++)
        if (write_experiment(&o, &r.exps[i], err, sizeof err) != 0)
            goto fail;
    if (section_perf(&o, &r, err, sizeof err) != 0)
        goto fail;
    if (section_probes(&o, root, err, sizeof err) != 0)
        goto fail;
    write_claims(&o, &r);
    write_strategies(&o);
    fclose(o.md);
    fclose(o.hmd);
    o.md = o.hmd = NULL;

    snprintf(path, sizeof path, "%s/REPORT.md", stage);
    if (write_atomic(path, o.mdbuf, o.mdlen, err, sizeof err) != 0)
        goto fail;
    char *html = cmark_markdown_to_html(o.hmdbuf, o.hmdlen,
                                        CMARK_OPT_UNSAFE | CMARK_OPT_SMART);
    if (html == NULL) {
        snprintf(err, sizeof err, "cmark: out of memory");
        goto fail;
    }
    char *page = NULL;
    size_t plen = 0;
    FILE *pf = open_memstream(&page, &plen);
    if (pf == NULL) {
        free(html);
        snprintf(err, sizeof err, "open_memstream: %s", strerror(errno));
        goto fail;
    }
    fputs(html_head, pf);
    fputs(html, pf);
    fputs("</body>\n</html>\n", pf);
    fclose(pf);
    free(html);
    snprintf(path, sizeof path, "%s/index.html", stage);
    int wrc = write_atomic(path, page, plen, err, sizeof err);
    free(page);
    if (wrc != 0)
        goto fail;
    /* Swap: the old report aside, the new one in, the old one away. */
    struct stat ost;
    bool had_old = stat(outdir, &ost) == 0;
    if (had_old && rename(outdir, old) != 0) {
        snprintf(err, sizeof err, "rename %s: %s", outdir, strerror(errno));
        goto fail;
    }
    if (rename(stage, outdir) != 0) {
        snprintf(err, sizeof err, "rename %s to %s: %s", stage, outdir,
                 strerror(errno));
        if (had_old)
            rename(old, outdir);
        goto fail;
    }
    if (had_old)
        rm_rf(old);
    fprintf(stderr, "dqlab: wrote %s/REPORT.md and %s/index.html (%d "
            "experiment%s)\n", outdir, outdir, n, n == 1 ? "" : "s");
    ret = 0;
    goto done;
fail:
    fprintf(stderr, "dqlab report: %s\n", err);
    if (stage[0] != '\0')
        rm_rf(stage);
done:
    if (o.md)
        fclose(o.md);
    if (o.hmd)
        fclose(o.hmd);
    free(o.mdbuf);
    free(o.hmdbuf);
    dq_results_free(&r);
    return ret;
}
