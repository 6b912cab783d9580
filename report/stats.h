/* stats.h -- the uncertainty a verdict states: a Wilson score interval for
 * a proportion, the median and the spread of a value over the repeats of
 * a cell.
 *
 * Wilson: for k successes in n trials, the interval of p that a two-sided
 * score test at z does not reject (E. B. Wilson, "Probable inference, the
 * law of succession, and statistical inference", JASA 22 (1927) 209-212;
 * Brown, Cai and DasGupta, "Interval Estimation for a Binomial
 * Proportion", Statistical Science 16 (2001), who recommend it over the
 * Wald interval, which collapses to [0, 0] at k = 0):
 *     centre = (k + z^2/2) / (n + z^2)
 *     half   = z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4)
 * so 0 of n still gives an upper bound above 0 (about 3.8/n at z = 1.96).
 * Knows nothing of the results model.
 */
#ifndef DQ_STATS_H
#define DQ_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "../harness/checker.h" /* dq_median, dq_cmp_double */

#define DQ_Z95 1.959963984540054   /* two-sided 95% normal quantile */

/* The Wilson score interval of k successes in n (k <= n) at z, as
 * proportions in [0, 1], into *lo and *hi.  n = 0: [0, 1] (nothing
 * known). */
void dq_wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi);

/* The median and the comparison of doubles: dq_median, dq_cmp_double
 * (harness/checker.h, beside dq_percentile). */

/* ln(a) / ln(b): how much a cost O(log n) grows from n = b to n = a. */
double dq_log_ratio(int64_t a, int64_t b);

/* The smallest and largest of v[0..n-1] into *lo, *hi (n >= 1; n = 0:
 * both 0). */
void dq_minmax(const double *v, size_t n, double *lo, double *hi);

/* A percentage for a sentence: "0", "0.068", "3.1", "31", "100" -- three
 * significant digits below 10%, one decimal below 100, none at or above
 * (the figure as printed, never rounded to a misleading 0 or 100: a
 * nonzero value below 0.001% prints as "<0.001"). */
void dq_fmt_pct(char *buf, size_t len, double proportion);

#endif
