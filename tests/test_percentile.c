/* test_percentile.c -- nearest-rank percentiles as the checker and the
 * report compute them (harness/checker.h).  p99.9 of 1000 samples is the
 * 999th, not the maximum: p / 100 * n is inexact in floating point. */
#include <criterion/criterion.h>

#include "../harness/checker.h"

Test(percentile, exact_ranks_are_not_pushed_up)
{
    cr_expect_eq(dq_percentile_rank(99.9, 1000), 999);
    cr_expect_eq(dq_percentile_rank(99, 100), 99);
    cr_expect_eq(dq_percentile_rank(50, 10), 5);
    cr_expect_eq(dq_percentile_rank(90, 10), 9);
    cr_expect_eq(dq_percentile_rank(99.9, 20000), 19980);
}

Test(percentile, ranks_round_up_and_stay_in_range)
{
    cr_expect_eq(dq_percentile_rank(50, 3), 2);
    cr_expect_eq(dq_percentile_rank(99.9, 10), 10);
    cr_expect_eq(dq_percentile_rank(0.001, 10), 1);
    cr_expect_eq(dq_percentile_rank(100, 7), 7);
    cr_expect_eq(dq_percentile_rank(50, 0), 0);
}

Test(percentile, values)
{
    double v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = i + 1;
    cr_expect_float_eq(dq_percentile(v, 1000, 99.9), 999.0, 1e-9);
    cr_expect_float_eq(dq_percentile(v, 1000, 100), 1000.0, 1e-9);
    cr_expect_float_eq(dq_percentile(v, 1000, 50), 500.0, 1e-9);
    cr_expect_float_eq(dq_percentile(v, 0, 50), 0.0, 1e-9);
}
