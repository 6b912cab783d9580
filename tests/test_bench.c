/* test_bench.c -- `dqlab bench`: argument parsing, bad input, and tiny
 * runs that must leave well-formed CSV files, a targets table whose every
 * verdict follows from its own figure and bound, and a report section.
 *
 * Speed is never asserted here: a 2-core CI machine under sanitizers says
 * nothing about it.  These tests check shapes and logic only: every CSV
 * has the header bench.h defines, every row as many fields (RFC 4180
 * quoting), numbers where numbers belong; every target row's met is what
 * its figure, share and bound say; a strategy a part does not run is
 * named in meta.txt; meta.txt says complete; `latest` points at the run.
 *
 * The tiny runs use the dqlab binary ($DQLAB) and either the test Redis
 * (DQ_TEST_REDIS_PORT, set by tests/run.sh; redis-benchmark then does not
 * run) or a private server of the bench's own (references measured by
 * redis-benchmark, which redis-tools installs).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/bench.h"
#include "../harness/bench_int.h"
#include "testlib.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static int parse(const char *const *args, int n, dq_bench_opts *o,
                 char *err, size_t errlen)
{
    char *argv[32];
    for (int i = 0; i < n; i++)
        argv[i] = (char *)args[i];
    argv[n] = NULL;
    err[0] = '\0';
    return dq_bench_parse_args(n, argv, o, err, errlen);
}

#define PARSE(o, err, ...)                                                   \
    parse((const char *const[]){"bench", __VA_ARGS__},                       \
          (int)(sizeof((const char *const[]){"bench", __VA_ARGS__}) /        \
                sizeof(const char *)),                                       \
          (o), (err), sizeof(err))

Test(bench_args, defaults)
{
    dq_bench_opts o;
    char err[256];
    const char *args[] = {"bench"};
    cr_assert_eq(parse(args, 1, &o, err, sizeof err), 0, "%s", err);
    cr_expect_eq(o.level, DQ_BENCH_QUICK);
    cr_expect_eq(o.parts, DQ_BENCH_ALL);
    cr_expect_str_eq(o.results, "results");
    cr_expect_not(o.have_redis);
    cr_expect_eq(o.nstrategies, 0);
}

Test(bench_args, good_values)
{
    dq_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--full", "--results", "/tmp/x", "--only",
                       "backlog,ceiling", "--strategies", "lua,heap",
                       "--redis", "redis://127.0.0.1:6390/2", "--keep-logs"),
                 0, "%s", err);
    cr_expect_eq(o.level, DQ_BENCH_FULL);
    cr_expect_str_eq(o.results, "/tmp/x");
    cr_expect_eq(o.parts, DQ_BENCH_BACKLOG | DQ_BENCH_CEILING);
    cr_expect_eq(o.nstrategies, 2);
    cr_expect_str_eq(o.strategies[0]->name, "lua");
    cr_expect(o.have_redis);
    cr_expect_eq(o.redis.port, 6390);
    cr_expect_eq(o.redis.db, 2);
    cr_expect(o.keep_logs);
    cr_expect(strstr(o.command, "bench --full") != NULL, "%s", o.command);
}

Test(bench_args, password_redacted_in_command)
{
    dq_bench_opts o;
    char err[256];
    cr_assert_eq(PARSE(&o, err, "--redis", "redis://:s3cret@127.0.0.1:1/0"),
                 0, "%s", err);
    cr_expect(strstr(o.command, "s3cret") == NULL, "%s", o.command);
}

/* Each bad input: -1 and a message naming the option. */
Test(bench_args, bad_input)
{
    dq_bench_opts o;
    char err[256];
    cr_expect_eq(PARSE(&o, err, "--quick", "--full"), -1);
    cr_expect(strstr(err, "--quick") && strstr(err, "--full"), "%s", err);
    cr_expect_eq(PARSE(&o, err, "--only", "ceiling,nope"), -1);
    cr_expect(strstr(err, "--only") && strstr(err, "nope"), "%s", err);
    cr_expect_eq(PARSE(&o, err, "--only", ","), -1);
    cr_expect(strstr(err, "--only") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--strategies", "lua,nosuch"), -1);
    cr_expect(strstr(err, "nosuch") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--redis", "http://x"), -1);
    cr_expect(strstr(err, "--redis") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--results"), -1);
    cr_expect(strstr(err, "--results needs a value") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "--results", ""), -1);
    cr_expect_eq(PARSE(&o, err, "--bogus"), -1);
    cr_expect(strstr(err, "--bogus") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, err, "extra"), -1);
    cr_expect(strstr(err, "extra") != NULL, "%s", err);
}

/* ---- The CLI ------------------------------------------------------------ */

static const char *dqlab(void)
{
    const char *d = getenv("DQLAB");
    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    return d;
}

/* Runs cmd through sh; returns the exit status (or -1). */
static int sh(const char *cmd)
{
    int st = system(cmd);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(bench_cli, bad_input_exits_2_with_one_line)
{
    char cmd[PATH_MAX + 256], out[PATH_MAX];
    snprintf(out, sizeof out, "/tmp/dqlab-bench-bad-%ld.txt", (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' bench --only nope 2>'%s' >/dev/null",
             dqlab(), out);
    cr_expect_eq(sh(cmd), 2);
    FILE *f = fopen(out, "r");
    cr_assert_not_null(f);
    char line[512];
    int lines = 0;
    bool named = false;
    while (fgets(line, sizeof line, f) != NULL) {
        lines++;
        named |= strstr(line, "--only") != NULL;
    }
    fclose(f);
    unlink(out);
    cr_expect_eq(lines, 1);
    cr_expect(named);
}

/* ---- A tiny run ------------------------------------------------------ */

/* One CSV file read whole: the header's names and every row's fields,
 * split as RFC 4180 says (a quoted field may hold commas, "" is one ").
 * Fields point into the rows' own buffers. */
#define MAXF 32
#define MAXROWS 256
typedef struct csv {
    char head[2048];
    char *names[MAXF];
    int nh;
    char buf[MAXROWS][2048];
    char *f[MAXROWS][MAXF];
    int nf[MAXROWS];
    int rows;
} csv;

static int split(char *line, char **f)
{
    int n = 0;
    char *p = line, *w;

    line[strcspn(line, "\n")] = '\0';
    for (;;) {
        cr_assert_lt(n, MAXF, "more than %d fields", MAXF);
        f[n++] = w = p;
        if (*p == '"') {
            for (p++; *p; ) {
                if (p[0] == '"' && p[1] == '"')
                    *w++ = '"', p += 2;
                else if (*p == '"')
                    break;
                else
                    *w++ = *p++;
            }
            cr_assert_eq(*p, '"', "unterminated quoted field");
            p++;
            cr_assert(*p == ',' || *p == '\0', "text after a closing quote");
        } else {
            while (*p && *p != ',')
                *w++ = *p++;
        }
        char c = *p;
        *w = '\0';
        if (c == '\0')
            return n;
        p++;
    }
}

/* Reads path into *c: the header must be `header`, every row as many
 * fields, each a number except the columns named in text. */
static void read_csv(csv *c, const char *path, const char *header,
                     const char *text)
{
    FILE *f = fopen(path, "r");
    char list[512], want[64];

    memset(c, 0, sizeof *c);
    cr_assert_not_null(f, "%s missing", path);
    cr_assert_not_null(fgets(c->head, sizeof c->head, f), "%s empty", path);
    cr_assert_str_eq(c->head, header, "%s: header", path);
    c->nh = split(c->head, c->names);
    snprintf(list, sizeof list, ",%s,", text);
    while (c->rows < MAXROWS && fgets(c->buf[c->rows], sizeof c->buf[0], f)) {
        int r = c->rows++;
        c->nf[r] = split(c->buf[r], c->f[r]);
        cr_expect_eq(c->nf[r], c->nh, "%s row %d: %d fields, header %d",
                     path, r + 1, c->nf[r], c->nh);
        for (int i = 0; i < c->nf[r] && i < c->nh; i++) {
            snprintf(want, sizeof want, ",%s,", c->names[i]);
            if (strstr(list, want) != NULL)
                continue;
            char *end;
            strtod(c->f[r][i], &end);
            cr_expect(c->f[r][i][0] != '\0' && *end == '\0',
                      "%s row %d: column %s = '%s' is not a number", path,
                      r + 1, c->names[i], c->f[r][i]);
        }
    }
    fclose(f);
}

/* Field `name` of row r ("" when no such column). */
static const char *fld(const csv *c, int r, const char *name)
{
    for (int i = 0; i < c->nh && i < c->nf[r]; i++)
        if (strcmp(c->names[i], name) == 0)
            return c->f[r][i];
    return "";
}

static double num(const csv *c, int r, const char *name)
{
    return strtod(fld(c, r, name), NULL);
}

/* Rows whose column `name` is `value`. */
static int count(const csv *c, const char *name, const char *value)
{
    int n = 0;
    for (int r = 0; r < c->rows; r++)
        n += strcmp(fld(c, r, name), value) == 0;
    return n;
}

/* The run's file name under root/bench/latest. */
static void latest(char *p, size_t len, const char *root, const char *name)
{
    snprintf(p, len, "%s/bench/latest/%s", root, name);
}

/* Runs `dqlab bench --smoke` into root with extra arguments; asserts exit
 * 0, latest, and meta.txt's complete = yes and unit_errors = 0; returns
 * meta.txt's `skipped` line in skipped. */
static void smoke(const char *root, const char *extra, char *skipped,
                  size_t len)
{
    char cmd[3 * PATH_MAX], p[PATH_MAX + 64], line[2048];
    bool complete = false, errors0 = false;
    struct stat st;

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    sh(cmd);
    snprintf(cmd, sizeof cmd, "'%s' bench --smoke --results '%s' %s "
             "2>'%s.err'", dqlab(), root, extra, root);
    int rc = sh(cmd);
    cr_assert_eq(rc, 0, "dqlab bench --smoke exited %d (stderr in %s.err)",
                 rc, root);
    snprintf(p, sizeof p, "%s/bench/latest", root);
    cr_assert_eq(lstat(p, &st), 0, "no %s", p);
    cr_expect(S_ISLNK(st.st_mode));
    latest(p, sizeof p, root, "meta.txt");
    FILE *m = fopen(p, "r");
    cr_assert_not_null(m);
    skipped[0] = '\0';
    while (fgets(line, sizeof line, m) != NULL) {
        complete |= strcmp(line, "complete = yes\n") == 0;
        errors0 |= strcmp(line, "unit_errors = 0\n") == 0;
        if (strncmp(line, "skipped = ", 10) == 0)
            snprintf(skipped, len, "%s", line + 10);
    }
    fclose(m);
    cr_expect(complete, "meta.txt: complete = yes");
    cr_expect(errors0, "meta.txt: unit_errors = 0 (see %s.err)", root);
}

static void cleanup(const char *root)
{
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.err'", root, root);
    sh(cmd);
}

/* Every targets.csv row: a known met, and the verdict its own numbers
 * give: share = figure / reference_value, met yes exactly when the value
 * the bound is on satisfies op bound.  Returns the rows. */
static int check_targets(csv *t, const char *root)
{
    char p[PATH_MAX + 64];

    latest(p, sizeof p, root, "targets.csv");
    read_csv(t, p, DQ_BENCH_TARGETS_HEADER,
             "target,strategy,options,unit,reference,bound_on,op,met,detail");
    for (int r = 0; r < t->rows; r++) {
        const char *met = fld(t, r, "met"), *on = fld(t, r, "bound_on");
        const char *op = fld(t, r, "op");
        double fig = num(t, r, "figure"), ref = num(t, r, "reference_value");
        double share = num(t, r, "share"), bound = num(t, r, "bound");
        cr_expect(strcmp(met, "yes") == 0 || strcmp(met, "no") == 0 ||
                      strcmp(met, "none") == 0 ||
                      strcmp(met, "not measured") == 0,
                  "row %d: met '%s'", r + 1, met);
        /* share is written with 4 decimals: half a unit of the last */
        if (fig >= 0 && ref > 0)
            cr_expect(share > 0 &&
                          fabs(share - fig / ref) <= 5e-5 + 1e-3 * share,
                      "row %d: share %f, figure/reference %f", r + 1, share,
                      fig / ref);
        if (on[0] == '\0') {
            cr_expect(strcmp(met, "yes") != 0 ||
                          strcmp(fld(t, r, "target"), "saturation") == 0,
                      "row %d: met yes without a bound", r + 1);
            continue;
        }
        double v = strcmp(on, "share") == 0 ? share : fig;
        cr_expect(strcmp(op, ">=") == 0 || strcmp(op, "<=") == 0, "op %s",
                  op);
        if (v < 0) {
            cr_expect_str_eq(met, "not measured", "row %d", r + 1);
            continue;
        }
        bool ok = op[0] == '>' ? v >= bound : v <= bound;
        cr_expect_str_eq(met, ok ? "yes" : "no", "row %d: %s %f %s %f",
                         r + 1, on, v, op, bound);
    }
    return t->rows;
}

/* lateness.csv: saturated exactly when a reason is given; runs of a rate
 * numbered 1, 2, ...; a saturated run is followed by another run of the
 * same rate unless two already saturated it, and after a rate two runs
 * saturated no row of that strategy follows. */
static void check_saturation(const csv *l)
{
    for (int r = 0; r < l->rows; r++) {
        const char *s = fld(l, r, "strategy");
        double rate = num(l, r, "offered_per_s");
        int run = (int)num(l, r, "run"), sat = 0;
        bool same_next = r + 1 < l->rows &&
                         strcmp(fld(l, r + 1, "strategy"), s) == 0 &&
                         num(l, r + 1, "offered_per_s") == rate;

        cr_expect_eq(num(l, r, "saturated") != 0, fld(l, r, "why")[0] != '\0',
                     "row %d", r + 1);
        cr_expect(run == 1 || (r > 0 && num(l, r - 1, "run") == run - 1),
                  "row %d: run %d", r + 1, run);
        for (int k = r - run + 1; k <= r; k++)
            sat += num(l, k, "saturated") != 0;
        if (num(l, r, "saturated") != 0 && sat < 2)
            cr_expect(same_next, "%s at %.0f/s: saturated once, not run "
                      "again", s, rate);
        for (int k = r + 1; sat >= 2 && !same_next && k < l->rows; k++)
            cr_expect(strcmp(fld(l, k, "strategy"), s) != 0,
                      "%s: a rate after the one two runs saturated", s);
    }
}

static csv tcsv, ccsv;

Test(bench_cli, smoke_run_writes_wellformed_csv, .timeout = 300)
{
    char root[PATH_MAX], extra[256], skipped[1024], p[PATH_MAX + 64];
    char cmd[3 * PATH_MAX];

    snprintf(root, sizeof root, "/tmp/dqlab-bench-test-%ld", (long)getpid());
    snprintf(extra, sizeof extra, "--redis redis://127.0.0.1:%d "
             "--strategies heap,lua,expiry", tl_redis_port());
    smoke(root, extra, skipped, sizeof skipped);
    /* Not silently: the parts that do not apply say so. */
    cr_expect(strstr(skipped, "backlog expiry (no ZSet layout") != NULL,
              "skipped = %s", skipped);
    cr_expect(strstr(skipped, "one_rtt heap") != NULL, "skipped = %s",
              skipped);

    latest(p, sizeof p, root, "ceiling.csv");
    read_csv(&ccsv, p, DQ_BENCH_CEILING_HEADER, "measure,source");
    cr_expect_eq(ccsv.rows, 2, "--redis: dqlab's own rows only");
    latest(p, sizeof p, root, "references.csv");
    read_csv(&ccsv, p, DQ_BENCH_REFERENCES_HEADER, "reference,when,command");
    cr_expect_eq(ccsv.rows, 0, "--redis: no redis-benchmark");
    /* Curves: 1 enqueue + 2 consumer counts per strategy; one_rtt: lua and
     * expiry; lua's one variant: 1 enqueue + 2 consumer counts. */
    latest(p, sizeof p, root, "throughput.csv");
    read_csv(&ccsv, p, DQ_BENCH_THROUGHPUT_HEADER,
             "kind,strategy,options,block");
    cr_expect_eq(ccsv.rows, 14);
    cr_expect_eq(count(&ccsv, "block", "one_rtt"), 2);
    cr_expect_eq(count(&ccsv, "block", "batched"), 3);
    latest(p, sizeof p, root, "harness.csv");
    read_csv(&ccsv, p, DQ_BENCH_HARNESS_HEADER, "kind,strategy");
    cr_expect_eq(ccsv.rows, 2, "the no-op ceiling and heap");
    cr_expect_eq(count(&ccsv, "kind", "ceiling"), 1);
    latest(p, sizeof p, root, "backlog.csv");
    read_csv(&ccsv, p, DQ_BENCH_BACKLOG_HEADER, "strategy,options,preload");
    cr_expect_eq(ccsv.rows, 4, "heap and lua at 2 backlogs; not expiry");
    latest(p, sizeof p, root, "lateness.csv");
    read_csv(&ccsv, p, DQ_BENCH_LATENESS_HEADER, "strategy,options,why");
    cr_expect_geq(ccsv.rows, 3);
    check_saturation(&ccsv);

    /* one_rtt 2 + batched 1 + harness 2 + lateness, saturation and
     * backlog 3 each. */
    cr_expect_eq(check_targets(&tcsv, root), 14);
    for (int r = 0; r < tcsv.rows; r++)
        if (strcmp(fld(&tcsv, r, "target"), "one_rtt_claim") == 0) {
            /* lua has a bound, expiry none; neither has a share. */
            bool lua = strcmp(fld(&tcsv, r, "strategy"), "lua") == 0;
            cr_expect_str_eq(fld(&tcsv, r, "met"),
                             lua ? "not measured" : "none",
                             "--redis: no reference, no verdict");
            cr_expect_lt(num(&tcsv, r, "share"), 0);
        }

    /* The report reads it into its Performance section. */
    snprintf(cmd, sizeof cmd, "'%s' report '%s' --out '%s/out' "
             ">/dev/null 2>>'%s.err'", dqlab(), root, root, root);
    cr_expect_eq(sh(cmd), 0, "dqlab report failed (stderr in %s.err)", root);
    snprintf(cmd, sizeof cmd, "grep -q '^## Performance and scale' "
             "'%s/out/REPORT.md' && grep -q '^### Backlog scaling' "
             "'%s/out/REPORT.md' && test -s '%s/out/figures/bench-backlog.svg'",
             root, root, root);
    cr_expect_eq(sh(cmd), 0, "REPORT.md lacks the Performance section");
    cleanup(root); /* reached only when the asserts above passed */
}

/* On a private server the references are measured (at the start and in
 * each round) and the one-round-trip and batched targets get a verdict. */
Test(bench_cli, smoke_private_server_measures_references, .timeout = 300)
{
    char root[PATH_MAX], skipped[1024], p[PATH_MAX + 64];

    snprintf(root, sizeof root, "/tmp/dqlab-bench-ref-%ld", (long)getpid());
    smoke(root, "--strategies lua --only ceiling,throughput", skipped,
          sizeof skipped);
    latest(p, sizeof p, root, "references.csv");
    read_csv(&ccsv, p, DQ_BENCH_REFERENCES_HEADER, "reference,when,command");
    cr_expect_eq(count(&ccsv, "reference", "zadd-c4"), 2, "start, round 1");
    cr_expect_eq(count(&ccsv, "reference", "zadd-c1-p100"), 2);
    for (int r = 0; r < ccsv.rows; r++)
        cr_expect_gt(num(&ccsv, r, "ops_per_s"), 0);
    latest(p, sizeof p, root, "ceiling.csv");
    read_csv(&ccsv, p, DQ_BENCH_CEILING_HEADER, "measure,source");
    cr_expect_eq(count(&ccsv, "source", "redis-benchmark"), 2);
    check_targets(&tcsv, root);
    cr_expect_eq(count(&tcsv, "target", "one_rtt_claim"), 1);
    cr_expect_eq(count(&tcsv, "target", "batched_claim"), 1);
    for (int r = 0; r < tcsv.rows; r++) {
        const char *t = fld(&tcsv, r, "target");
        if (strcmp(t, "one_rtt_claim") == 0 ||
            strcmp(t, "batched_claim") == 0) {
            const char *met = fld(&tcsv, r, "met");
            cr_expect(strcmp(met, "yes") == 0 || strcmp(met, "no") == 0,
                      "%s: met %s", t, met);
            cr_expect_gt(num(&tcsv, r, "redis_cpu_us_per_task"), 0);
        }
    }
    cleanup(root);
}

/* ---- The throughput bounds are the strategies' own ---------------------- */

/* targets.csv written from records made up here (no trial runs): every
 * Redis strategy has a one_rtt_claim row and a batched_claim row per bench
 * variant, and each row's bound is the share the strategy declares
 * (dq_strategy.bench_one_rtt_share, bench_batched_share), or none when it
 * declares 0; met follows from the made-up figure. */
Test(bench_targets, throughput_bounds_are_the_strategies_own)
{
    static dq_bench_opts o;
    static dq_bench_plan pl = {.target_consumers = 4, .bl_rounds = 1};
    static dq_bench_tp tps[64];
    dq_bench_ref refs[] = {{DQ_BREF_ZADD_C4, 100000, 1},
                           {DQ_BREF_ZADD_P100, 200000, 1}};
    dq_bench b = {.o = &o, .pl = &pl, .refs = refs, .nrefs = 2, .tps = tps};
    char err[256], p[PATH_MAX + 64], cmd[PATH_MAX + 16];
    int want_rows = 0, bounded = 0;

    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];
        if (!(s->flags & DQ_G_NEEDS_REDIS))
            continue;
        for (size_t k = 0; k == 0 || (s->bench_variants &&
                                      s->bench_variants[k - 1]); k++) {
            dq_bench_tp *t = &tps[b.ntps++];
            cr_assert_lt(b.ntps, 64);
            t->s = s;
            t->block = k == 0 ? DQ_BTP_ONE_RTT : DQ_BTP_BATCHED;
            t->consumers = 4;
            snprintf(t->options, sizeof t->options, "%s", k == 0 ?
                     DQ_BENCH_ONE_RTT_SPEC : s->bench_variants[k - 1]);
            t->tasks_per_s = 40000;  /* shares 0.40 and 0.20 */
            t->cpu_us_per_task = 1;
            want_rows++;
        }
    }
    snprintf(b.dir, sizeof b.dir, "/tmp/dqlab-bench-targets-%ld",
             (long)getpid());
    cr_assert_eq(mkdir(b.dir, 0755), 0, "%s", b.dir);
    cr_assert_eq(dq_bench_write_targets(&b, err, sizeof err), 0, "%s", err);
    snprintf(p, sizeof p, "%s/targets.csv", b.dir);
    read_csv(&tcsv, p, DQ_BENCH_TARGETS_HEADER,
             "target,strategy,options,unit,reference,bound_on,op,met,detail");
    cr_expect_eq(count(&tcsv, "target", "one_rtt_claim") +
                 count(&tcsv, "target", "batched_claim"), want_rows);
    for (int r = 0; r < tcsv.rows; r++) {
        const char *t = fld(&tcsv, r, "target");
        bool one = strcmp(t, "one_rtt_claim") == 0;
        const dq_strategy *s = dq_strategy_find(fld(&tcsv, r, "strategy"));
        if (!one && strcmp(t, "batched_claim") != 0)
            continue;
        cr_assert_not_null(s, "row %d", r + 1);
        double share = one ? s->bench_one_rtt_share : s->bench_batched_share;
        double fig = one ? 0.40 : 0.20;
        if (share > 0) {
            bounded++;
            cr_expect_str_eq(fld(&tcsv, r, "bound_on"), "share", "row %d",
                             r + 1);
            cr_expect_str_eq(fld(&tcsv, r, "op"), ">=", "row %d", r + 1);
            cr_expect(fabs(num(&tcsv, r, "bound") - share) < 1e-9,
                      "%s %s: bound %s, declared %f", t, s->name,
                      fld(&tcsv, r, "bound"), share);
            cr_expect_str_eq(fld(&tcsv, r, "met"), fig >= share ? "yes"
                             : "no", "%s %s", t, s->name);
        } else {
            cr_expect_str_eq(fld(&tcsv, r, "bound_on"), "", "row %d", r + 1);
            cr_expect_str_eq(fld(&tcsv, r, "met"), "none", "%s %s", t,
                             s->name);
        }
    }
    cr_expect_gt(bounded, 0, "no strategy declares a throughput bound");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", b.dir);
    sh(cmd);
}
