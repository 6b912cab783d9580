/* stats.c -- Wilson score intervals, the median and the spread over
 * repeats (stats.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "stats.h"

double dq_log_ratio(int64_t a, int64_t b)
{
    return log((double)a) / log((double)b);
}

void dq_wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi)
{
    double nn = (double)n, kk = (double)k, z2 = z * z;
    if (n == 0) {
        *lo = 0;
        *hi = 1;
        return;
    }
    double centre = (kk + z2 / 2) / (nn + z2);
    double half = z / (nn + z2) * sqrt(kk * (nn - kk) / nn + z2 / 4);
    *lo = k == 0 ? 0 : fmax(0, centre - half);
    *hi = k == n ? 1 : fmin(1, centre + half);
}

void dq_minmax(const double *v, size_t n, double *lo, double *hi)
{
    *lo = *hi = n ? v[0] : 0;
    for (size_t i = 1; i < n; i++) {
        *lo = v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
}

void dq_fmt_pct(char *buf, size_t len, double p)
{
    double v = 100 * p;
    if (v <= 0)
        snprintf(buf, len, "0");
    else if (v < 0.001)
        snprintf(buf, len, "<0.001");
    else if (v < 10)
        snprintf(buf, len, "%.3g", v);
    else if (v < 100 && v > 99.9)
        snprintf(buf, len, "99.9");
    else if (v < 100)
        snprintf(buf, len, "%.1f", v);
    else
        snprintf(buf, len, "100");
}
