/* test_naive.c -- naive is wrong in exactly the documented way.
 *
 * naive claims with two commands, ZRANGEBYSCORE (read the due head) then
 * ZREM (remove it), and hands the task out whatever ZREM returned.  Two
 * consumers that both read the head before either removes it both get the
 * task: claims C01 and C13 in docs/CLAIMS.md.  The conformance
 * suite already asserts duplicates > 0 through the DQ_G_DUPLICATES flag;
 * this file pins the cause down: the duplicates come from the race between
 * consumers, so with ONE consumer (same gap_us, same tasks) there are none,
 * and with four there are some.
 *
 * gap_us is naive's option that sleeps between the two commands to widen
 * the race window, so the result does not depend on scheduling luck.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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

/* `dqlab run`'s summary: the extra deliveries add up on one line, and an
 * ok verdict for naive says that its duplicates are the documented race
 * (a bare "ok" next to hundreds of duplicates reads as a contradiction);
 * the throughput line says over which interval it was measured. */
Test(naive, summary_adds_up_and_names_the_race, .timeout = 60)
{
    const char *d = getenv("DQLAB");
    char cmd[512], out[16384], want[160];
    unsigned long long extra = 0, red = 0, dfault = 0, dnone = 0;
    const char *line;
    size_t n;
    FILE *f;
    int st;

    cr_assert(d != NULL && *d, "DQLAB is not set: run through tests/run.sh");
    snprintf(cmd, sizeof cmd, "'%s' run --strategy naive --consumers 4 "
             "--tasks 200 --opt gap_us=2000 --quiet", d);
    f = popen(cmd, "r");
    cr_assert_not_null(f);
    n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    st = pclose(f);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit %d:\n%s",
              WEXITSTATUS(st), out);
    line = strstr(out, "\nextra deliveries ");
    cr_assert_not_null(line, "no 'extra deliveries' line:\n%s", out);
    cr_assert_eq(sscanf(line, "\nextra deliveries %llu = redelivered %llu + "
                        "duplicates during a fault %llu + duplicates "
                        "without a fault %llu", &extra, &red, &dfault,
                        &dnone), 4, "%s", line);
    cr_assert_eq(extra, red + dfault + dnone, "%s", line);
    cr_assert_gt(dnone, 0, "no duplicate:\n%s", out);
    snprintf(want, sizeof want, "\nverdict     ok (naive declares "
             "duplicates: %llu %s its documented race)\n", dnone,
             dnone == 1 ? "is" : "are");
    cr_assert(strstr(out, want) != NULL, "no '%s' in:\n%s", want + 1, out);
    cr_assert(strstr(out, "first enqueue to last delivery)") != NULL,
              "the throughput line does not say its interval:\n%s", out);
}
