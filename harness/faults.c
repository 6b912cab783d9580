/* faults.c -- the table of fault kinds and what every kind shares
 * (faults.h).
 *
 * Each kind is a row in its own file (fault_<name>.c), on top of what the
 * rows share (fault_util.c); this file only lists them, splits a spec into its name and parts for the row's parser,
 * and holds the rules that combine the rows' declarations (which
 * strategies a fault applies to, which faults may share a trial, what the
 * private server must be started with, a consumer's plan), so that `dqlab
 * run` refuses and an experiment skips the same combinations, and the
 * thread, process and in-process modes plan a consumer alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "trial.h"

extern const dq_fault_ops dq_fault_kill_consumer;
extern const dq_fault_ops dq_fault_restart_redis;
extern const dq_fault_ops dq_fault_pause_redis;
extern const dq_fault_ops dq_fault_subscriber_outage;
extern const dq_fault_ops dq_fault_clock_skew;
extern const dq_fault_ops dq_fault_mover_stall;
extern const dq_fault_ops dq_fault_os_crash;
extern const dq_fault_ops dq_fault_failover;
extern const dq_fault_ops dq_fault_evict;
extern const dq_fault_ops dq_fault_stall_consumer;
extern const dq_fault_ops dq_fault_clock_step;
extern const dq_fault_ops dq_fault_busy_redis;

const dq_fault_ops *const dq_fault_kinds[] = {
    &dq_fault_kill_consumer,
    &dq_fault_restart_redis,
    &dq_fault_pause_redis,
    &dq_fault_subscriber_outage,
    &dq_fault_clock_skew,
    &dq_fault_mover_stall,
    &dq_fault_os_crash,
    &dq_fault_failover,
    &dq_fault_evict,
    &dq_fault_stall_consumer,
    &dq_fault_clock_step,
    &dq_fault_busy_redis,
    NULL,
};

const dq_fault_ops *dq_fault_find(const char *name)
{
    for (size_t i = 0; name != NULL && dq_fault_kinds[i] != NULL; i++)
        if (strcmp(dq_fault_kinds[i]->name, name) == 0)
            return dq_fault_kinds[i];
    return NULL;
}

const char *dq_fault_name(const dq_fault *f)
{
    return f != NULL && f->ops != NULL ? f->ops->name : "none";
}

bool dq_fault_needs(const dq_fault *f, unsigned need)
{
    return f != NULL && f->ops != NULL && (f->ops->needs & need) != 0;
}

/* The names of every kind, "a, b, c", into buf. */
static void kind_names(char *buf, size_t len)
{
    size_t off = 0;

    buf[0] = '\0';
    for (size_t i = 0; dq_fault_kinds[i] != NULL && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
                                dq_fault_kinds[i]->name);
}

int dq_fault_parse(const char *spec, dq_fault *f, char *err, size_t errlen)
{
    char buf[128], *parts[5], names[200], why[200];
    int n = 0;

    memset(f, 0, sizeof *f);
    f->at_ms = -1;
    if (spec == NULL || strlen(spec) >= sizeof buf || spec[0] == '\0') {
        snprintf(err, errlen, "fault '%.60s': expected NAME[:ARG]...",
                 spec ? spec : "");
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *s = buf; n < 5;) {
        parts[n++] = s;
        s = strchr(s, ':');
        if (s == NULL)
            break;
        *s++ = '\0';
    }
    f->ops = dq_fault_find(parts[0]);
    if (f->ops == NULL) {
        kind_names(names, sizeof names);
        snprintf(err, errlen, "fault '%.60s': unknown fault '%.30s' (one of "
                 "%s)", spec, parts[0], names);
        return -1;
    }
    if (f->ops->parse(f, parts + 1, n - 1, why, sizeof why) != 0) {
        snprintf(err, errlen, "fault '%.60s': %s", spec, why);
        f->ops = NULL;
        return -1;
    }
    return 0;
}

void dq_fault_format(const dq_fault *f, char *buf, size_t buflen)
{
    if (f == NULL || f->ops == NULL)
        snprintf(buf, buflen, "none");
    else
        f->ops->format(f, buf, buflen);
}

bool dq_fault_applies(const dq_fault *f, const dq_strategy *s, char *why,
                      size_t whylen)
{
    char spec[64];

    if (f == NULL || f->ops == NULL)
        return true;
    dq_fault_format(f, spec, sizeof spec);
    if (dq_fault_needs(f, DQ_FAULT_NEEDS_REDIS | DQ_FAULT_NEEDS_OWN_SERVER) &&
        !(s->flags & DQ_G_NEEDS_REDIS)) {
        snprintf(why, whylen, "fault %s does not apply to strategy '%s' (it "
                 "uses no Redis)", spec, s->name);
        return false;
    }
    if (dq_fault_needs(f, DQ_FAULT_NEEDS_BLOCKING) &&
        !(s->flags & DQ_G_BLOCKS)) {
        snprintf(why, whylen, "fault %s does not apply to strategy '%s' (its "
                 "consumers poll: no subscribed or blocked connection to "
                 "drop)", spec, s->name);
        return false;
    }
    return true;
}

int dq_faults_check(const dq_fault *faults, size_t n, const dq_strategy *s,
                    bool own_server, int64_t tasks, char *err,
                    size_t errlen)
{
    char spec[64];

    if (n > DQ_MAX_FAULTS) {
        snprintf(err, errlen, "at most %d faults per trial", DQ_MAX_FAULTS);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const dq_fault *f = &faults[i];
        dq_fault_format(f, spec, sizeof spec);
        if (tasks == 0) {
            snprintf(err, errlen, "fault %s: faults need tasks (not idle "
                     "mode)", spec);
            return -1;
        }
        if (!dq_fault_applies(f, s, err, errlen))
            return -1;
        if (dq_fault_needs(f, DQ_FAULT_NEEDS_OWN_SERVER) && !own_server) {
            snprintf(err, errlen, "fault %s needs the private redis-server "
                     "dqlab starts itself (not --redis)", spec);
            return -1;
        }
        for (size_t j = 0; j < i; j++) {
            if (dq_fault_needs(f, DQ_FAULT_ONE_PER_TRIAL) &&
                faults[j].ops == f->ops) {
                snprintf(err, errlen, "fault %s: one %s per trial", spec,
                         f->ops->name);
                return -1;
            }
            if (f->ops->servers != NULL && faults[j].ops != NULL &&
                faults[j].ops->servers != NULL) {
                snprintf(err, errlen, "fault %s: cannot share a trial with "
                         "%s (each runs on servers of its own)", spec,
                         faults[j].ops->name);
                return -1;
            }
        }
    }
    return 0;
}

bool dq_fault_serves_wait(const dq_fault *f, const dq_opt *opts,
                          size_t nopts)
{
    for (size_t i = 0; i < nopts; i++)
        if (strcmp(opts[i].key, "wait") == 0 &&
            strtoll(opts[i].val, NULL, 10) > 0)
            return dq_fault_needs(f, DQ_FAULT_GIVES_REPLICAS);
    return true;
}

void dq_faults_server_opts(const dq_fault *faults, size_t n,
                           struct dq_redis_server_opts *o)
{
    for (size_t i = 0; i < n; i++)
        if (faults[i].ops != NULL && faults[i].ops->server_opts != NULL)
            faults[i].ops->server_opts(&faults[i], o);
}

void dq_faults_consumer_plan(const dq_trial_params *p, int slot, int gen,
                             bool all_in_one, dq_consumer_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    for (size_t i = 0; i < p->nfaults; i++) {
        const dq_fault *f = &p->faults[i];
        if (f->ops != NULL && f->ops->consumer_plan != NULL)
            f->ops->consumer_plan(f, p, i, slot, gen, all_in_one, plan);
    }
}

void dq_faults_producer_plan(const dq_trial_params *p, int producer,
                             dq_consumer_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    for (size_t i = 0; i < p->nfaults; i++) {
        const dq_fault *f = &p->faults[i];
        if (f->ops != NULL && f->ops->producer_plan != NULL)
            f->ops->producer_plan(f, p, i, producer, plan);
    }
}

int64_t dq_fault_at_ms(const dq_trial_params *p, size_t index)
{
    int64_t lo, hi;

    if (p->faults[index].at_ms >= 0)
        return p->faults[index].at_ms;
    lo = p->delay_max_ms / 5 > 50 ? p->delay_max_ms / 5 : 50;
    hi = p->delay_max_ms / 2 > lo ? p->delay_max_ms / 2 : lo;
    return lo + (int64_t)(dq_fault_hash(p->seed, index, 1) %
                          (uint64_t)(hi - lo + 1));
}

void dq_fault_describe(const char *spec, char *buf, size_t len)
{
    dq_fault f;
    char err[300];

    if (strcmp(spec, "none") == 0)
        snprintf(buf, len, "no fault (the baseline)");
    else if (dq_fault_parse(spec, &f, err, sizeof err) == 0)
        f.ops->describe(&f, buf, len);
    else
        snprintf(buf, len, "`%s`", spec);
}

const char *dq_fault_mechanism(const char *name)
{
    const dq_fault_ops *o = dq_fault_find(name);

    if (name != NULL && strcmp(name, "none") == 0)
        return "No fault: the baseline.  Any loss or duplicate here is the "
               "strategy's own (the documented race of a strategy that "
               "declares duplicates).";
    return o != NULL ? o->mechanism : "";
}

dq_fault_class dq_fault_report_class(const char *spec, dq_fault *f)
{
    dq_fault x;
    char err[8];

    if (f == NULL)
        f = &x;
    if (dq_fault_parse(spec, f, err, sizeof err) != 0 ||
        f->ops->report_class == NULL)
        return DQ_FAULT_CLASS_NONE;
    return f->ops->report_class(f);
}
