/* bench_util.c -- the two helpers of bench_int.h that every part of the
 * bench and its targets table use: which strategies were asked for, and
 * the median of a set of measurements.  They sit in a file of their own,
 * below bench.c (which calls the parts) and bench_targets.c (which bench.c
 * calls), so that no part reaches back up to the file that runs it.
 */
#include <stdlib.h>

#include "bench_int.h"

bool dq_bench_selected(const dq_bench *b, const dq_strategy *s)
{
    if (b->o->nstrategies == 0)
        return true;
    for (size_t i = 0; i < b->o->nstrategies; i++)
        if (b->o->strategies[i] == s)
            return true;
    return false;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return (a > c) - (a < c);
}

double dq_bench_median(double *v, size_t n)
{
    if (n == 0)
        return -1;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
