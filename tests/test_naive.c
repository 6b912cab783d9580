/* test_naive.c -- naive is wrong in exactly the documented way.
 *
 * naive claims with two commands, ZRANGEBYSCORE (read the due head) then
 * ZREM (remove it), and hands the task out whatever ZREM returned.  Two
 * consumers that both read the head before either removes it both get the
 * task: claims C01 and C13 in /work/shared/CLAIMS.md.  The conformance
 * suite already asserts duplicates > 0 through the DQ_G_DUPLICATES flag;
 * this file pins the cause down: the duplicates come from the race between
 * consumers, so with ONE consumer (same gap_us, same tasks) there are none,
 * and with four there are some.
 *
 * gap_us is naive's option that sleeps between the two commands to widen
 * the race window, so the result does not depend on scheduling luck.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "../strategies/dq.h"
#include "testlib.h"

/* Runs nconsumers consumers on ntasks tasks with gap_us=2000; returns the
 * duplicate count and asserts nothing was lost. */
static int naive_dups(const char *check, int nconsumers, int ntasks)
{
    tl_ctx c;
    tl_setup(&c, "naive", check);
    cr_assert(tl_has_option(c.s, "gap_us"), "naive has no gap_us option");
    tl_set_opt(&c, "gap_us", "2000");
    int *seen = calloc((size_t)ntasks, sizeof(int));
    cr_assert_not_null(seen);
    int total = tl_run_consumers(&c, nconsumers, ntasks, 1000, seen);
    int lost, dups;
    char which[256];
    tl_count_seen(seen, ntasks, &lost, &dups, which, sizeof(which));
    cr_assert_eq(lost, 0, "naive, %d consumers: %d of %d tasks never "
                 "delivered (%d deliveries):%s", nconsumers, lost, ntasks,
                 total, which);
    cr_assert_eq(total, ntasks + dups);
    free(seen);
    tl_teardown(&c);
    return dups;
}

Test(naive, declares_the_bug)
{
    const dq_strategy *s = tl_strategy("naive");
    cr_assert(s->flags & DQ_G_DUPLICATES,
              "naive must declare DQ_G_DUPLICATES (claim C01)");
    cr_assert(!(s->flags & DQ_G_NO_DUP_CONCURRENT),
              "naive must not declare DQ_G_NO_DUP_CONCURRENT");
    cr_assert(s->flags & DQ_G_NEEDS_REDIS);
}

Test(naive, one_consumer_no_duplicates, .timeout = 60)
{
    int dups = naive_dups("one", 1, 100);
    cr_assert_eq(dups, 0, "naive with ONE consumer delivered %d duplicates: "
                 "the bug is not the documented ZRANGEBYSCORE/ZREM race",
                 dups);
}

Test(naive, four_consumers_duplicate, .timeout = 60)
{
    int dups = naive_dups("four", 4, 200);
    cr_assert_gt(dups, 0, "naive with 4 consumers and gap_us=2000 made no "
                 "duplicate delivery of 200 tasks");
}
