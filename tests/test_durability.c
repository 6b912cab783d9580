/* test_durability.c -- the paced producer and the faults a deployment's
 * durability meets (os-crash, failover, evict, restart-redis:rdb), each
 * through the real binary where its outcome is certain:
 * `$DQLAB run ... --json --out DIR`, then the summary and the event log.
 *
 * Each trial runs on servers dqlab starts itself (a fault that needs them
 * refuses --redis), so these tests do not use DQ_TEST_REDIS_PORT.  The
 * JSON summary carries the checker's counts, read from the log alone; the
 * exit code is dqlab's verdict.
 *
 * What each test relies on:
 *   - --rate N sends task i at the producer's start + i/N s on the
 *     monotonic clock, so the E records of N tasks span at least
 *     (N-1)/N s minus the first enqueue's round trip; without pacing they
 *     span milliseconds;
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/experiment.h"
#include "../harness/tmpdir.h"

typedef struct outcome {
    int status;      /* exit code */
    json_t *j;       /* the summary, NULL when none */
    char dir[300];   /* --out DIR: events.log is there */
} outcome;

/* Runs `$DQLAB run --quiet --json --out DIR ARGS` (DIR a new temporary
 * directory) and parses its stdout. */
static outcome run(const char *args)
{
    const char *d = getenv("DQLAB");
    char cmd[4096], *buf = NULL, err[300];
    size_t len = 0;
    FILE *f, *mem;
    outcome o = {-1, NULL, ""};
    json_error_t je;
    int st;

    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    cr_assert_eq(dq_tmpdir_create("dqlab-durability", o.dir, sizeof o.dir,
                                  err, sizeof err), 0, "%s", err);
    snprintf(cmd, sizeof cmd, "'%s' run --quiet --json --out '%s/out' %s", d,
             o.dir, args);
    f = popen(cmd, "r");
    cr_assert_not_null(f, "popen %s", cmd);
    mem = open_memstream(&buf, &len);
    cr_assert_not_null(mem);
    for (int c; (c = fgetc(f)) != EOF;)
        fputc(c, mem);
    fclose(mem);
    st = pclose(f);
    o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    if (len > 0)
        o.j = json_loads(buf, 0, &je);
    free(buf);
    return o;
}

/* Removes what run() left: DIR/out/{events.log,summary.json}, DIR. */
static void done(outcome *o)
{
    char path[400];

    json_decref(o->j);
    o->j = NULL;
    snprintf(path, sizeof path, "%s/out/events.log", o->dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/out/summary.json", o->dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/out", o->dir);
    rmdir(path);
    dq_tmpdir_remove(o->dir);
}

static long long num(const outcome *o, const char *key)
{
    json_t *v;

    cr_assert_not_null(o->j, "no JSON summary (exit %d)", o->status);
    v = json_object_get(o->j, key);
    cr_assert(json_is_integer(v), "summary has no integer '%s'", key);
    return (long long)json_integer_value(v);
}

/* The first and last t_us of the log's E records, and how many. */
static int e_span(const outcome *o, long long *first, long long *last)
{
    char path[400], line[512];
    int n = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/out/events.log", o->dir);
    f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    *first = *last = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        long long t;
        if (line[0] != 'E' || sscanf(line + 2, "%lld", &t) != 1)
            continue;
        if (n++ == 0 || t < *first)
            *first = t;
        if (t > *last)
            *last = t;
    }
    fclose(f);
    return n;
}

/* ---- The paced producer ------------------------------------------------ */

Test(rate, paces_enqueues_on_the_schedule, .timeout = 60)
{
    long long first, last;
    outcome o = run("--strategy lua --tasks 40 --rate 40 --producers 2 "
                    "--delay-ms 0 --grace-ms 500");

    cr_assert_eq(o.status, 0, "exit %d", o.status);
    cr_assert_eq(num(&o, "rate"), 40);
    cr_assert_eq(e_span(&o, &first, &last), 40);
    /* Task 39 is sent 39/40 s after the start, task 0 at the start (its
     * E record one round trip later): at least 0.8 s apart. */
    cr_assert_geq(last - first, 800000, "E records span %lld us",
                  last - first);
    done(&o);
}

/* rate is a list in experiment files: one matrix dimension. */
Test(rate, is_a_list_in_experiment_files)
{
    char path[] = "/tmp/dqlab-rate-XXXXXX", err[600];
    const char *ini = "[experiment]\nname = paced\nstrategies = lua\n"
                      "consumers = 1\ntasks = 10\nrate = 0, 100\n";
    dq_experiment e;
    dq_exp_cell c;
    int fd = mkstemp(path);

    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, ini, strlen(ini)), (ssize_t)strlen(ini));
    close(fd);
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    unlink(path);
    cr_assert_eq(dq_experiment_ntrials(&e), 2);
    dq_experiment_cell(&e, 0, &c);
    cr_assert_eq(c.params.rate, 0);
    dq_experiment_cell(&e, 1, &c);
    cr_assert_eq(c.params.rate, 100);
}
