/* facts.c -- the measured facts per strategy (facts.h), from the results
 * model: the loss table, the groups of the concurrency, idle, lateness
 * and backlog experiments.  Nothing here formats text.  Which tally a
 * fault counts in is its row's report_class (harness/faults.h).
 */
#include <stdlib.h>
#include <string.h>

#include "../harness/faults.h"
#include "facts.h"
#include "stats.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

const char *const dq_aof_modes[DQ_AOF_MODES] = {"off", "everysec", "always"};

/* Whether g ran with the strategy's defaults: no options, or each one at
 * its default value. */
static bool default_opts(const dq_rgroup *g)
{
    const dq_strategy *s = g->st;
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", g->options);
    for (char *kv = strtok_r(buf, ";", &save); kv;
         kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        const dq_optdef *d = s ? s->options : NULL;
        if (eq == NULL)
            return false;
        *eq = '\0';
        while (d && d->name && strcmp(d->name, kv) != 0)
            d++;
        if (d == NULL || d->name == NULL || d->def == NULL ||
            strcmp(d->def, eq + 1) != 0)
            return false;
    }
    return true;
}

/* The index of e's group for strategy name with the defaults, else its
 * first group; -1 when it did not run in e. */
static long pick_group(const dq_rexp *e, const char *name)
{
    long first = -1;
    for (size_t i = 0; e && i < e->ngroups; i++) {
        if (strcmp(e->groups[i].strategy, name) != 0)
            continue;
        if (default_opts(&e->groups[i]))
            return (long)i;
        first = first < 0 ? (long)i : first;
    }
    return first;
}

/* The options of e's group g as "k=v, k2=v2" when they need saying: g
 * ran with other than the defaults, or its strategy ran in e with other
 * options too; else "". */
static void opts_text(const dq_rexp *e, const dq_rgroup *g, char *buf,
                      size_t len)
{
    bool several = false;
    for (size_t i = 0; i < e->ngroups; i++)
        several |= strcmp(e->groups[i].strategy, g->strategy) == 0 &&
                   strcmp(e->groups[i].options, g->options) != 0;
    buf[0] = '\0';
    if (!several && default_opts(g))
        return;
    snprintf(buf, len, "%s", g->options);
    for (char *p = buf; (p = strchr(p, ';')) != NULL;)
        *p = ',';
}

/* The row of name in f (dq_facts_compute made one per strategy that
 * ran), or NULL. */
static dq_fact *row_of(dq_facts *f, const char *name)
{
    return (dq_fact *)dq_facts_find(f, name);
}

/* Whether a fault of class c kills consumers: a crash, or a retry test. */
static bool kills(dq_fault_class c)
{
    return c == DQ_FAULT_CLASS_CONSUMER_CRASH ||
           c == DQ_FAULT_CLASS_RETRY_TEST;
}

bool dq_facts_counts(const char *spec)
{
    return dq_fault_report_class(spec, NULL) != DQ_FAULT_CLASS_RETRY_TEST;
}

/* The tally of fault column spec in x, or NULL for a fault not counted. */
static dq_tally *tally_of(dq_fact *x, const char *spec)
{
    dq_fault f;
    dq_tally *modes;
    switch (dq_fault_report_class(spec, &f)) {
    case DQ_FAULT_CLASS_CONSUMER_CRASH:
        return &x->kill;
    case DQ_FAULT_CLASS_CONSUMER_OUTAGE:
        return &x->outage;
    case DQ_FAULT_CLASS_SERVER_CRASH:
        modes = x->crash;
        break;
    case DQ_FAULT_CLASS_HOST_CRASH:
        modes = x->host;
        break;
    default:
        return NULL;
    }
    for (size_t m = 0; m < DQ_AOF_MODES; m++)
        if (strcmp(f.word, dq_aof_modes[m]) == 0)
            return &modes[m];
    return NULL;
}

static void tally_add(dq_tally *s, const dq_tally *a)
{
    s->measured = true;
    s->n += a->n;
    s->of += a->of;
    s->redelivered += a->redelivered;
    s->duplicated += a->duplicated;
    s->trials += a->trials;
    s->kills += a->kills;
}

/* The loss table's cells of fault experiment e into the kill, crash, host
 * and outage tallies; the kills from trials.csv; in the loss experiment,
 * each strategy's first trial that killed its consumers. */
static void from_loss(dq_facts *f, const dq_rexp *e)
{
    const dq_loss_table *lt = e->loss;
    for (size_t r = 0; r < lt->nrows; r++)
        for (size_t c = 0; c < lt->nfaults; c++) {
            const dq_loss_cell *x = dq_loss_cell_at(lt, r, c);
            dq_fact *row = x ? row_of(f, x->strategy) : NULL;
            dq_tally *t = row ? tally_of(row, lt->faults[c]) : NULL;
            if (t == NULL)
                continue;
            tally_add(t, &(dq_tally){.n = x->lost, .of = x->enqueued,
                                     .redelivered = x->redelivered,
                                     .duplicated = x->duplicated,
                                     .trials = x->trials});
            if (t >= row->host && t < row->host + DQ_AOF_MODES && !f->host)
                f->host = e;
        }
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_trialrow *t = &e->trials[i];
        dq_fact *x = row_of(f, t->strategy);
        dq_fault_class c = dq_fault_report_class(t->fault, NULL);
        if (x != NULL && t->kills > 0 && c == DQ_FAULT_CLASS_CONSUMER_CRASH)
            x->kill.kills += (uint64_t)t->kills;
        if (x != NULL && e == f->loss && x->kill_trial == NULL && kills(c))
            x->kill_trial = t;
    }
}

/* Duplicates with 2+ consumers; commands per task at the fewest. */
static void from_conc(dq_facts *f, const dq_rexp *e)
{
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        dq_fact *x = row_of(f, g->strategy);
        if (x == NULL)
            continue;
        if (g->consumers >= 2) {
            if (!x->dup.measured || g->consumers < x->dup_cmin)
                x->dup_cmin = g->consumers;
            if (g->consumers > x->dup_cmax)
                x->dup_cmax = g->consumers;
            x->dup.measured = true;
            x->dup.n += g->dup_sum;
            x->dup.of += g->enqueued_sum;
            x->dup.trials += g->n;
            x->dup_with += g->dup_trials;
        }
        if (!x->cmds || g->consumers < x->cmds_consumers) {
            x->cmds = true;
            x->cmds_per_task = g->cmds_per_task_median;
            x->rt_per_task = g->rt_per_task_median;
            x->cmds_consumers = g->consumers;
        }
    }
}

/* Delivered within the window at each strategy's largest backlog. */
static void from_backlog(dq_facts *f, const dq_rexp *e)
{
    double grace = strtod(dq_rexp_meta(e, "grace_ms"), NULL) / 1000.0;
    for (size_t i = 0; e->pools != NULL && i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        dq_fact *x = row_of(f, g->strategy);
        if (x == NULL || (x->backlog && g->backlog <= x->backlog_n))
            continue;
        x->backlog = true;
        x->backlog_n = g->backlog;
        x->backlog_delivered = e->pools[i].delivered;
        x->backlog_tasks = e->pools[i].enqueued;
        x->backlog_window_s = grace;
    }
}

/* x's idle cost and lateness from its group (pick_group) of the idle and
 * lateness experiments, and the guarantee its kills showed. */
static void from_row(const dq_facts *f, dq_fact *x)
{
    const dq_rexp *e = f->idle;
    long i = e ? pick_group(e, x->s->name) : -1;
    if (i >= 0) {
        x->idle = true;
        x->idle_cmds_s = e->groups[i].cmds_per_s_median;
        x->idle_cpu_ms_s = e->groups[i].cpu_ms_per_s_median;
        x->idle_consumers = e->groups[i].consumers;
        opts_text(e, &e->groups[i], x->idle_opts, sizeof x->idle_opts);
    }
    e = f->lat;
    i = e && e->pools ? pick_group(e, x->s->name) : -1;
    if (i >= 0) {
        x->lat = true;
        x->lat_censored = !dq_rpool_pct(&e->pools[i], 99, &x->p99_ms);
        x->lat_tasks = e->pools[i].enqueued;
        x->lat_trials = e->pools[i].trials;
        opts_text(e, &e->groups[i], x->lat_opts, sizeof x->lat_opts);
    }
    if (!x->kill.measured)
        x->seen = DQ_SEEN_NONE;
    else if (x->kill.n > 0 && (x->kill.duplicated > 0 || x->dup.n > 0))
        x->seen = DQ_SEEN_BROKEN;
    else if (x->kill.n > 0)
        x->seen = DQ_SEEN_AMO;
    else
        x->seen = x->kill.redelivered > 0 ? DQ_SEEN_ALO : DQ_SEEN_NO_LOSS;
}

/* The fault experiment the front links to: the first whose faults kill
 * consumers (the loss experiment), else the first with faults at all. */
static const dq_rexp *loss_experiment(const dq_results *r)
{
    for (size_t i = 0; i < r->nexps; i++)
        for (size_t c = 0; dq_loss_is(&r->exps[i]) && r->exps[i].loss &&
                           c < r->exps[i].loss->nfaults; c++)
            if (kills(dq_fault_report_class(r->exps[i].loss->faults[c],
                                            NULL)))
                return &r->exps[i];
    return dq_loss_experiment(r);
}

/* Whether strategy name ran in some experiment of r. */
static bool ran(const dq_results *r, const char *name)
{
    for (size_t i = 0; i < r->nexps; i++)
        for (size_t g = 0; g < r->exps[i].ngroups; g++)
            if (strcmp(r->exps[i].groups[g].strategy, name) == 0)
                return true;
    return false;
}

void dq_facts_compute(const dq_results *r, dq_facts *f)
{
    memset(f, 0, sizeof *f);
    f->loss = loss_experiment(r);
    f->conc = dq_results_with_plot(r, "duplicates");
    f->idle = dq_results_with_plot(r, "idle-cost");
    f->lat = dq_results_with_plot(r, "lateness-cdf");
    f->backlog = dq_results_with_plot(r, "backlog-lateness");
    for (size_t k = 0; dq_strategies[k] != NULL && f->n < DQ_FACTS_MAX; k++)
        if (ran(r, dq_strategies[k]->name))
            f->f[f->n++].s = dq_strategies[k];
    for (size_t i = 0; i < r->nexps; i++)  /* every fault experiment */
        if (dq_loss_is(&r->exps[i]) && r->exps[i].loss != NULL)
            from_loss(f, &r->exps[i]);
    if (f->conc)
        from_conc(f, f->conc);
    if (f->backlog)
        from_backlog(f, f->backlog);
    for (size_t i = 0; i < f->n; i++)
        from_row(f, &f->f[i]);
    for (size_t i = 0; i < r->nexps && !f->redis_version[0]; i++)
        snprintf(f->redis_version, sizeof f->redis_version, "%s",
                 dq_rexp_meta(&r->exps[i], "redis_version"));
}

const dq_fact *dq_facts_find(const dq_facts *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->f[i].s->name, name) == 0)
            return &f->f[i];
    return NULL;
}

dq_tally dq_tally_sum(const dq_tally *a, size_t n)
{
    dq_tally s = {0};
    for (size_t i = 0; i < n; i++)
        if (a[i].measured)
            tally_add(&s, &a[i]);
    return s;
}

void dq_facts_wilson(uint64_t n, uint64_t of, char lo[16], char hi[16])
{
    double l, h;
    dq_wilson(n, of, DQ_Z95, &l, &h);
    dq_fmt_pct(lo, 16, l);
    dq_fmt_pct(hi, 16, h);
}
