/* claims_util.c -- what the claim rule files (claims.c, claims_time.c,
 * claims_fault.c) share, declared in claims_int.h: Wilson intervals,
 * per-trial values, medians, the groups of an experiment.  Apart from
 * claims.c, whose table names the rules, so that no rule file reaches
 * back up to the table that lists it.
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "../strategies/dq.h"
#include "claims_int.h"

/* ---- Helpers (claims_int.h) -------------------------------------------- */

void dq_claims_wilson(uint64_t k, uint64_t n, char lo[16], char hi[16])
{
    double l, h;
    dq_wilson(k, n, DQ_Z95, &l, &h);
    dq_fmt_pct(lo, 16, l);
    dq_fmt_pct(hi, 16, h);
}

double dq_tv_p50(const dq_trialrow *t)
{
    return t->delivered ? t->lateness_p50_ms : NAN;
}

double dq_tv_p99(const dq_trialrow *t)
{
    return t->delivered ? t->lateness_p99_ms : NAN;
}

double dq_tv_max(const dq_trialrow *t)
{
    return t->delivered ? t->lateness_max_ms : NAN;
}

double dq_tv_rtt(const dq_trialrow *t)
{
    return t->rtt_ms >= 0 ? t->rtt_ms : NAN;
}

double dq_tv_cpu_s(const dq_trialrow *t)
{
    return t->redis_cpu_ms >= 0 && t->measured_s > 0
               ? t->redis_cpu_ms / t->measured_s : NAN;
}

double dq_tv_cmds_s(const dq_trialrow *t)
{
    return t->redis_commands >= 0 && t->measured_s > 0
               ? (double)t->redis_commands / t->measured_s : NAN;
}

double dq_tv_wakeups(const dq_trialrow *t)
{
    return t->deliveries ? (double)t->wakeups / (double)t->deliveries : NAN;
}

size_t dq_group_values(const dq_rexp *e, const dq_rgroup *g,
                       dq_trial_value_fn f, double *v, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; e != NULL && g != NULL && i < e->ntrials && n < max;
         i++)
        if (dq_trial_in_group(&e->trials[i], g) &&
            !isnan(v[n] = f(&e->trials[i])))
            n++;
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double dq_median(double *v, size_t n)
{
    if (n == 0)
        return -1;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const dq_rgroup *dq_claims_group(const dq_rexp *e, const char *strategy,
                                 long poll)
{
    for (size_t i = 0; e != NULL && i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        if (strcmp(g->strategy, strategy) == 0 && g->backlog == 0 &&
            (poll <= 0 || dq_group_poll_ms(g) == poll))
            return g;
    }
    return NULL;
}
