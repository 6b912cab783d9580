/* test_probes.c -- `dqlab probes`: bad input, and one real run against the
 * test Redis that must leave a well-formed probes.csv deciding the claims
 * C06, C07, C08, C09, C20 (and holding rows for C22, C27, C28, whose
 * outcomes tests/test_probes_more.c checks).
 *
 * The real run uses the server tests/run.sh started (DQ_TEST_REDIS_PORT)
 * through --redis, and the dqlab binary ($DQLAB).  Besides the shape of the
 * CSV it checks the few outcomes that are Redis's documented behaviour and
 * so cannot vary between machines: ZADD rejects MAXLEN, ZPOPMIN never
 * hands one member to two poppers, a popped task is gone, equal payloads
 * collapse into one member, a payload with a TTL below the delay is gone.
 * The CSV is parsed here with its own small RFC 4180 reader, not with the
 * report's, so a bug in one is not hidden by the other.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static const char *dqlab(void)
{
    const char *d = getenv("DQLAB");
    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    return d;
}

/* Runs cmd through sh; the exit status or -1. */
static int sh(const char *cmd)
{
    int st = system(cmd);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs `dqlab probes ARGS` and expects exit 2 with exactly one line on
 * stderr that contains `names`. */
static void expect_bad(const char *args, const char *names)
{
    char cmd[PATH_MAX + 512], out[PATH_MAX];
    snprintf(out, sizeof out, "/tmp/dqlab-probes-bad-%ld.txt", (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' probes %s 2>'%s' >/dev/null", dqlab(),
             args, out);
    cr_expect_eq(sh(cmd), 2, "dqlab probes %s: exit status", args);
    FILE *f = fopen(out, "r");
    cr_assert_not_null(f);
    char line[512];
    int lines = 0;
    bool named = false;
    while (fgets(line, sizeof line, f) != NULL) {
        lines++;
        named |= strstr(line, names) != NULL;
    }
    fclose(f);
    unlink(out);
    cr_expect_eq(lines, 1, "dqlab probes %s: %d lines on stderr", args, lines);
    cr_expect(named, "dqlab probes %s: stderr does not name %s", args, names);
}

Test(probes_cli, bad_input_exits_2_with_one_line)
{
    expect_bad("--bogus", "--bogus");
    expect_bad("extra", "extra");
    expect_bad("--results", "--results");
    expect_bad("--redis", "--redis");
    expect_bad("--redis nope://127.0.0.1:1", "--redis");
    /* Nothing listens on port 1: unreachable is bad environment, exit 2. */
    expect_bad("--results /tmp/dqlab-probes-never --redis "
               "redis://127.0.0.1:1", "--redis");
    cr_expect_neq(access("/tmp/dqlab-probes-never", F_OK), 0,
                  "an unreachable Redis must not leave a results dir");
}

Test(probes_cli, help_exits_0)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "'%s' probes --help >/dev/null", dqlab());
    cr_expect_eq(sh(cmd), 0);
}

/* ---- A real run --------------------------------------------------------- */

#define MAXROWS 64
typedef struct prow {
    char f[5][600];
} prow;

/* Reads one RFC 4180 record from f into r (5 fields expected); returns
 * the number of fields, 0 at EOF, -1 when malformed. */
static int read_record(FILE *f, prow *r)
{
    int n = 0, c = fgetc(f);
    if (c == EOF)
        return 0;
    memset(r, 0, sizeof *r);
    for (;;) {
        char tmp[600];
        char *dst = n < 5 ? r->f[n] : tmp;
        size_t k = 0;
        if (c == '"') {
            for (;;) {
                c = fgetc(f);
                if (c == EOF)
                    return -1;
                if (c == '"') {
                    c = fgetc(f);
                    if (c != '"')
                        break;
                }
                if (k + 1 < sizeof tmp)
                    dst[k++] = (char)c;
            }
        } else {
            while (c != ',' && c != '\n' && c != EOF) {
                if (c == '"')
                    return -1;
                if (k + 1 < sizeof tmp)
                    dst[k++] = (char)c;
                c = fgetc(f);
            }
        }
        dst[k] = '\0';
        n++;
        if (c == ',') {
            c = fgetc(f);
            continue;
        }
        if (c == '\n' || c == EOF)
            return n;
        return -1;
    }
}

/* Integer value of key in a verdict_input "k=v;k2=v2"; aborts when
 * absent. */
static long long input_int(const prow *r, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "%s=", key);
    const char *s = r->f[4];
    for (;;) {
        if (strncmp(s, pat, strlen(pat)) == 0)
            return strtoll(s + strlen(pat), NULL, 10);
        s = strchr(s, ';');
        if (s == NULL)
            break;
        s++;
    }
    cr_assert_fail("%s %s: no %s in '%s'", r->f[0], r->f[1], key, r->f[4]);
    return 0;
}

static const prow *find(const prow *rows, int n, const char *claim,
                        const char *probe)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].f[0], claim) == 0 &&
            strcmp(rows[i].f[1], probe) == 0)
            return &rows[i];
    cr_assert_fail("no row %s %s in probes.csv", claim, probe);
    return NULL;
}

Test(probes_run, real_redis_well_formed_csv, .timeout = 120)
{
    int port = tl_redis_port();
    char dir[PATH_MAX], cmd[PATH_MAX * 2], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "/tmp/dqlab-probes-test-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    sh(cmd);
    snprintf(cmd, sizeof cmd, "'%s' probes --results '%s' --redis "
             "redis://127.0.0.1:%d 2>/dev/null", dqlab(), dir, port);
    cr_assert_eq(sh(cmd), 0, "dqlab probes against the test Redis failed");

    snprintf(path, sizeof path, "%s/probes/latest/probes.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    static prow rows[MAXROWS];
    prow head;
    cr_assert_eq(read_record(f, &head), 5, "header: 5 fields");
    const char *want[] = {"claim", "probe", "action", "observed",
                          "verdict_input"};
    for (int i = 0; i < 5; i++)
        cr_expect_str_eq(head.f[i], want[i]);
    int n = 0, k;
    while (n < MAXROWS && (k = read_record(f, &rows[n])) != 0) {
        cr_assert_eq(k, 5, "row %d: %d fields", n + 2, k);
        for (int i = 0; i < 5; i++)
            cr_expect_neq(rows[n].f[i][0], '\0', "row %d field %d empty",
                          n + 2, i + 1);
        n++;
    }
    fclose(f);
    const char *claims[] = {"C06", "C07", "C08", "C09", "C20", "C22", "C27",
                            "C28"};
    for (size_t c = 0; c < sizeof claims / sizeof claims[0]; c++) {
        bool seen = false;
        for (int i = 0; i < n; i++)
            seen |= strcmp(rows[i].f[0], claims[c]) == 0;
        cr_expect(seen, "no row for %s", claims[c]);
    }

    /* What Redis does by its documentation, whatever the machine. */
    const prow *r = find(rows, n, "C06", "ms-epoch");
    cr_expect_eq(input_int(r, "exact"), input_int(r, "n"));
    r = find(rows, n, "C06", "first-inexact");
    cr_expect_eq(input_int(r, "first_inexact"), 9007199254740993LL,
                 "a double's first inexact integer is 2^53+1");
    r = find(rows, n, "C20", "zadd-maxlen");
    cr_expect_eq(input_int(r, "rejected"), 1);
    cr_expect(strstr(r->f[3], "(error) ERR") != NULL, "%s", r->f[3]);
    r = find(rows, n, "C20", "xadd-maxlen");
    cr_expect_eq(input_int(r, "xlen"), input_int(r, "maxlen"));
    r = find(rows, n, "C07", "zpopmin-atomic");
    cr_expect_eq(input_int(r, "duplicates"), 0);
    cr_expect_eq(input_int(r, "popped"), input_int(r, "n"));
    r = find(rows, n, "C07", "pop-then-die");
    cr_expect_eq(input_int(r, "lost"), 1);
    r = find(rows, n, "C08", "payload-member");
    cr_expect_eq(input_int(r, "members"), 1);
    r = find(rows, n, "C08", "id-member");
    cr_expect_eq(input_int(r, "members"), 2);
    r = find(rows, n, "C09", "ttl-shorter");
    cr_expect_eq(input_int(r, "lost"), input_int(r, "n"));
    r = find(rows, n, "C09", "ttl-longer");
    cr_expect_eq(input_int(r, "lost"), 0);

    snprintf(path, sizeof path, "%s/probes/latest/meta.txt", dir);
    f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    char line[512];
    bool complete = false, version = false;
    while (fgets(line, sizeof line, f) != NULL) {
        complete |= strcmp(line, "complete = yes\n") == 0;
        version |= strncmp(line, "redis_version = ", 16) == 0 &&
                   line[16] >= '0' && line[16] <= '9';
    }
    fclose(f);
    cr_expect(complete, "meta.txt: complete = yes");
    cr_expect(version, "meta.txt: redis_version");

    /* The probes clean up after themselves. */
    snprintf(cmd, sizeof cmd, "test \"$(redis-cli -p %d --scan --pattern "
             "'dqprobe:*' | wc -l)\" -eq 0", port);
    cr_expect_eq(sh(cmd), 0, "dqprobe:* keys left in the test Redis");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    sh(cmd);
}
