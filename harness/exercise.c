/* exercise.c -- `dqlab exercise` and the exercises' checks (exercise.h);
 * the exercises themselves are read from their file by exercise_load.c.
 *
 * Every check is a real run: the flags are read from the strategy as
 * this build registered it, a trial is this very program run as `dqlab
 * run` and `dqlab check` (its /proc/self/exe, children spawned as the
 * trial's own, spawn.h), and the conformance suite is the Criterion
 * binary the build made, run on a private redis-server (redis_server.h)
 * with its TAP report read back, the one place Criterion names a skipped
 * test.  A Ctrl-C stops the child at work (SIGTERM to its process group)
 * and the command ends with 130.
 */
#define _GNU_SOURCE /* nftw */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "../strategies/dq.h"
#include "commands.h"
#include "exercise.h"
#include "redis_server.h"
#include "signals.h"
#include "spawn.h"
#include "tmpdir.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

void dq_exercise_ident(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s", name);
    for (char *p = buf; *p; p++)
        *p = *p == '-' ? '_' : *p;
}

static bool has_option(const dq_strategy *s, const char *name)
{
    const dq_optdef *o;
    for (size_t k = 0; (o = dq_strategy_option(s, k)) != NULL; k++)
        if (strcmp(o->name, name) == 0)
            return true;
    return false;
}

void dq_xcheck_args(const dq_xcheck *c, const dq_strategy *s, char *buf,
                    size_t len)
{
    char set[256], *save = NULL;
    size_t off = 0;
    buf[0] = '\0';
    snprintf(set, sizeof set, "%s", c->set ? c->set : "");
    for (char *kv = strtok_r(set, " ", &save); kv;
         kv = strtok_r(NULL, " ", &save)) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(kv, "="), kv);
        if (s == NULL || has_option(s, key))
            off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
                                    "--opt %s ", kv);
    }
    snprintf(buf + off, off < len ? len - off : 0, "%s",
             c->args ? c->args : "");
}

void dq_xcheck_command(const dq_xcheck *c, const dq_strategy *s,
                       const char *name, const char *dir, const char *stem,
                       char *buf, size_t len)
{
    char ident[64], args[512];
    dq_exercise_ident(name, ident, sizeof ident);
    switch (c->kind) {
    case DQ_XC_DECLARES:
        snprintf(buf, len, "bin/dqlab list -v");
        break;
    case DQ_XC_TRIAL:
        dq_xcheck_args(c, s, args, sizeof args);
        snprintf(buf, len, "bin/dqlab run --strategy %s %s --out %s/%s && "
                 "bin/dqlab check %s/%s/events.log", name, args, dir, stem,
                 dir, stem);
        break;
    case DQ_XC_SUITE:
        snprintf(buf, len, "sh tests/run.sh build/default bin/dqlab "
                 "--filter '%s/*'", ident);
        break;
    }
}

/* ---- Running the checks ------------------------------------------------- */

/* Appends printf(fmt, ...) to buf at *off (len bytes); nothing once *off
 * reached len. */
__attribute__((format(printf, 4, 5)))
static void app(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
    va_list ap;
    if (*off >= len)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *off, len - *off, fmt, ap);
    va_end(ap);
    *off += n > 0 ? (size_t)n : 0;
}

typedef enum { X_PASS, X_FAIL, X_ERROR } x_result;

/* One command's run: the work directory, this program, the tests dir. */
typedef struct x_ctx {
    const dq_exercise *x;
    const dq_strategy *s;
    char work[PATH_MAX];       /* the checks' files */
    char exe[PATH_MAX];        /* /proc/self/exe */
    const char *tests;
    bool temp;                 /* work is a temporary directory */
    char why[2048];            /* the result's reason, one line */
    char ran[2048];            /* what was run, for the output */
} x_ctx;

/* "DQ_G_AT_LEAST_ONCE (at-least-once)" of one flag bit. */
static void flag_words(unsigned bit, char *buf, size_t len)
{
    static const struct { unsigned bit; const char *c; } names[] = {
#define XF(f) {f, #f}
        XF(DQ_G_AT_MOST_ONCE), XF(DQ_G_AT_LEAST_ONCE),
        XF(DQ_G_SURVIVES_CONSUMER_CRASH), XF(DQ_G_NEEDS_REDIS),
        XF(DQ_G_POLLS), XF(DQ_G_BLOCKS), XF(DQ_G_NO_DUP_CONCURRENT),
        XF(DQ_G_DUPLICATES), XF(DQ_G_DUE_ORDER),
        XF(DQ_G_SURVIVES_PROCESS_EXIT),
#undef XF
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].bit == bit) {
            snprintf(buf, len, "%s (%s)", names[i].c, dq_flag_name(bit));
            return;
        }
    snprintf(buf, len, "flag 0x%x", bit);
}

static bool has_op(const dq_strategy *s, const char *op)
{
    if (strcmp(op, "nack") == 0)
        return s->nack != NULL;
    if (strcmp(op, "dead_letters") == 0)
        return s->dead_letters != NULL;
    if (strcmp(op, "cancel") == 0)
        return s->cancel != NULL;
    return false;
}

/* Appends "; <name> <what> <v>" to c->why at *off. */
static void why_add(x_ctx *c, size_t *off, const char *what, const char *v)
{
    app(c->why, sizeof c->why, off, "%s%s %s %s", *off ? "; " : "",
        c->s->name, what, v);
}

static x_result check_declares(x_ctx *c, const dq_xcheck *k)
{
    char w[128], list[256], *save = NULL;
    size_t off = 0;
    for (unsigned b = 1; b != 0 && b <= (1u << 15); b <<= 1) {
        flag_words(b, w, sizeof w);
        if ((k->need & b) && !(c->s->flags & b))
            why_add(c, &off, "does not declare", w);
        if ((k->forbid & b) && (c->s->flags & b))
            why_add(c, &off, "declares", w);
    }
    snprintf(list, sizeof list, "%s", k->options ? k->options : "");
    for (char *o = strtok_r(list, " ", &save); o;
         o = strtok_r(NULL, " ", &save))
        if (!has_option(c->s, o))
            why_add(c, &off, "has no option", o);
    snprintf(list, sizeof list, "%s", k->ops ? k->ops : "");
    for (char *o = strtok_r(list, " ", &save); o;
         o = strtok_r(NULL, " ", &save))
        if (!has_op(c->s, o))
            why_add(c, &off, "has no operation", o);
    if (off > 0)
        return X_FAIL;
    snprintf(c->why, sizeof c->why, "%s declares and takes what the "
             "exercise asks for", c->s->name);
    return X_PASS;
}

/* Waits for child pid; on a stop request (Ctrl-C) sends SIGTERM to its
 * process group once.  Returns its exit code (128 + signal when killed),
 * or -1 when it cannot be reaped. */
static int wait_child(pid_t pid)
{
    bool sent = false;
    int st;
    for (;;) {
        pid_t r = dq_spawn_reap(pid, &st, false);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0)
            return -1;
        if (dq_signals_caught() && !sent) {
            kill(-pid, SIGTERM);
            sent = true;
        }
        usleep(20000);
    }
}

/* Runs path with argv (envp NULL: ours), stdout to out and stderr to
 * errpath (paths; NULL: /dev/null).  Returns its exit code, or -1 with
 * c->why set. */
static int run_child(x_ctx *c, const char *path, char *const argv[],
                     char *const envp[], const char *out,
                     const char *errpath)
{
    int fo = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                 : -1;
    int fe = errpath ? open(errpath, O_WRONLY | O_CREAT | O_TRUNC |
                            O_CLOEXEC, 0644) : -1;
    if ((out && fo < 0) || (errpath && fe < 0)) {
        snprintf(c->why, sizeof c->why, "%s: %s", fo < 0 && out ? out
                 : errpath, strerror(errno));
        if (fo >= 0)
            close(fo);
        return -1;
    }
    pid_t pid = dq_spawn(path, argv, envp, -1, fo, fe);
    int e = errno;
    if (fo >= 0)
        close(fo);
    if (fe >= 0)
        close(fe);
    if (pid < 0) {
        snprintf(c->why, sizeof c->why, "%s: %s", path, strerror(e));
        return -1;
    }
    return wait_child(pid);
}

/* The first line of file path into buf ("" when none). */
static void first_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (f == NULL)
        return;
    if (fgets(buf, (int)len, f) != NULL)
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

/* summary.json's integer key, or -1. */
static int64_t json_count(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

/* What the exit codes of a trial's `dqlab run` and of `dqlab check` on
 * its log mean together (README, "Exit codes"), for the result line. */
static const char *exits_mean(int run_rc, int check_rc)
{
    if (run_rc == 130)
        return "the trial was interrupted";
    if (run_rc != 0 && run_rc != 1)
        return "the trial could not run (bad input or environment)";
    if (check_rc == 3)
        return "its log carries no verdict (the trial did not end cleanly)";
    if (check_rc != 0 && check_rc != 1)
        return "its log could not be read";
    if (run_rc == 1 || check_rc == 1)
        return "a guarantee the strategy declares was broken";
    return "no guarantee the strategy declares was broken";
}

/* Judges a finished trial by its exit codes and summary; sets c->why. */
static x_result judge_trial(x_ctx *c, const dq_xcheck *k, const char *dir,
                            int run_rc, int check_rc, const char *errpath)
{
    char path[PATH_MAX + 32], line[512];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *o = json_load_file(path, 0, NULL);
    int64_t lost = json_count(o, "lost"), extra = json_count(o,
                                                             "duplicates");
    int64_t r1 = json_count(o, "redelivered");
    int64_t r2 = json_count(o, "redelivered_hidden");
    int64_t back = (r1 > 0 ? r1 : 0) + (r2 > 0 ? r2 : 0);
    json_decref(o);
    if (o == NULL) {
        first_line(errpath, line, sizeof line);
        snprintf(c->why, sizeof c->why, "dqlab run exited %d and wrote no "
                 "summary: %s", run_rc, line[0] ? line : "(no message)");
        return X_FAIL;
    }
    bool ok = run_rc == 0 && check_rc == 0 &&
              (k->max_lost < 0 || (lost >= 0 && lost <= k->max_lost)) &&
              (k->max_extra < 0 || (extra >= 0 && extra <= k->max_extra));
    char al[48] = "", ae[48] = "";
    if (k->max_lost >= 0 && lost > k->max_lost)
        snprintf(al, sizeof al, " (allowed: %" PRId64 ")", k->max_lost);
    if (k->max_extra >= 0 && extra > k->max_extra)
        snprintf(ae, sizeof ae, " (allowed: %" PRId64 ")", k->max_extra);
    snprintf(c->why, sizeof c->why, "dqlab run exited %d and dqlab check "
             "of its log %d: %s.  The trial lost %" PRId64 " task%s%s, made "
             "%" PRId64 " extra deliver%s%s, and %" PRId64 " task%s came back "
             "after a kill or a lease.", run_rc, check_rc,
             exits_mean(run_rc, check_rc), lost, lost == 1 ? "" : "s", al,
             extra, extra == 1 ? "y" : "ies", ae, back, back == 1 ? "" : "s");
    return ok ? X_PASS : X_FAIL;
}

static x_result check_trial(x_ctx *c, const dq_xcheck *k, size_t no)
{
    char dir[PATH_MAX + 32], out[PATH_MAX + 48], errp[PATH_MAX + 48];
    char log[PATH_MAX + 48], args[512], shown[512], *av[64], *save = NULL;
    size_t n = 0;
    snprintf(dir, sizeof dir, "%s/trial-%zu", c->work, no);
    snprintf(out, sizeof out, "%s/trial-%zu.out", c->work, no);
    snprintf(errp, sizeof errp, "%s/trial-%zu.err", c->work, no);
    snprintf(log, sizeof log, "%s/events.log", dir);
    dq_xcheck_args(k, c->s, args, sizeof args);
    snprintf(shown, sizeof shown, "%s", args);
    av[n++] = c->exe;
    av[n++] = "run";
    av[n++] = "--strategy";
    av[n++] = (char *)c->s->name;
    for (char *a = strtok_r(args, " ", &save); a && n < 56;
         a = strtok_r(NULL, " ", &save))
        av[n++] = a;
    av[n++] = "--out";
    av[n++] = dir;
    av[n++] = "--quiet";
    av[n] = NULL;
    int run_rc = run_child(c, c->exe, av, NULL, out, errp);
    if (run_rc < 0)
        return X_ERROR;
    char *cv[] = {c->exe, "check", log, NULL};
    char cout[PATH_MAX + 48];
    snprintf(cout, sizeof cout, "%s/trial-%zu.check", c->work, no);
    int check_rc = access(log, R_OK) == 0
                       ? run_child(c, c->exe, cv, NULL, cout, cout) : 2;
    if (check_rc < 0)
        return X_ERROR;
    /* A temporary directory is gone once the command ends: no path. */
    if (c->temp)
        snprintf(c->ran, sizeof c->ran, "dqlab run --strategy %s %s --out "
                 "DIR; dqlab check DIR/events.log (DIR: the temporary "
                 "directory)", c->s->name, shown);
    else
        snprintf(c->ran, sizeof c->ran, "dqlab run --strategy %s %s --out "
                 "%s; dqlab check %s (output: %s, %s)", c->s->name, shown,
                 dir, log, out, cout);
    return judge_trial(c, k, dir, run_rc, check_rc, errp);
}

/* What the suite's TAP report says about suite ident. */
typedef struct tap_view {
    size_t ran, failed;        /* tests of the suite that ran; failed */
    char failures[1024];       /* "name: first diagnostic; ..." */
    char skips[1024];          /* "name skipped: why; ..." (wanted ones) */
    char states[DQ_XCHECKS_MAX * 2]; /* per wanted test: 'p', 's', 'f', 0 */
} tap_view;

/* Reads the TAP line "ok - IDENT::NAME  (0.1s)", "ok - ... # SKIP why" or
 * "not ok - ...": the test's name into name, what follows it in *rest,
 * and returns its state ('p', 's', 'f'; 0: not a result of suite ident). */
static char tap_line(const char *line, const char *ident, char *name,
                     size_t len, const char **rest)
{
    char st = 'p';
    size_t il = strlen(ident);
    if (strncmp(line, "not ok - ", 9) == 0) {
        line += 9;
        st = 'f';
    } else if (strncmp(line, "ok - ", 5) == 0) {
        line += 5;
    } else {
        return 0;
    }
    if (strncmp(line, ident, il) != 0 || strncmp(line + il, "::", 2) != 0)
        return 0;
    line += il + 2;
    size_t n = strcspn(line, " \t\n");
    snprintf(name, len, "%.*s", (int)n, line);
    *rest = line + n;
    if (st == 'p' && strstr(*rest, "# SKIP") != NULL)
        st = 's';
    return st;
}

/* Records test name's state st in v if it is one of want ("a b"). */
static void tap_want(tap_view *v, const char *want, const char *name,
                     char st, const char *rest)
{
    char w[256], *save = NULL;
    size_t i = 0, off = strlen(v->skips);
    snprintf(w, sizeof w, "%s", want);
    for (char *t = strtok_r(w, " ", &save); t && i < sizeof v->states;
         t = strtok_r(NULL, " ", &save), i++) {
        if (strcmp(t, name) != 0)
            continue;
        v->states[i] = st;
        if (st == 's')
            app(v->skips, sizeof v->skips, &off, "%s%s skipped (%.*s)",
                      off ? "; " : "", name,
                      (int)strcspn(strstr(rest, "# SKIP") + 7, "\n"),
                      strstr(rest, "# SKIP") + 7);
    }
}

/* A line of the YAML block after a failed test (Criterion 2.4: "  ---",
 * "  failures:", "  - tests/x.c:12: |+", "      Assertion failed: why",
 * "  ..."): the first assertion's place and text go to v->failures.
 * Returns whether the block goes on. */
static bool tap_diag(tap_view *v, size_t *off, const char *line, char *where,
                     size_t wlen)
{
    const char *t = line + strspn(line, " \t");
    size_t n = strcspn(t, "\n");
    if (line[0] != ' ' || strncmp(t, "...", 3) == 0)
        return false;
    if (strncmp(t, "- ", 2) == 0 && where[0] == '\0') {
        snprintf(where, wlen, "%.*s", (int)strcspn(t + 2, " |\n"), t + 2);
        return true;
    }
    if (strncmp(t, "Assertion failed: ", 18) == 0) {
        app(v->failures, sizeof v->failures, off, " at %s %.*s", where,
            (int)n - 18, t + 18);
        return false;
    }
    return true;
}

/* Scans the TAP report at path for suite ident's tests into v.  0, or -1
 * when it cannot be read. */
static int tap_scan(const char *path, const char *ident, const char *want,
                    tap_view *v)
{
    char line[2048], name[128], where[256] = "";
    const char *rest;
    bool diag = false;         /* in the block that explains a failure */
    size_t off = 0;
    FILE *f = fopen(path, "r");
    memset(v, 0, sizeof *v);
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (diag && (diag = tap_diag(v, &off, line, where, sizeof where)))
            continue;
        char st = tap_line(line, ident, name, sizeof name, &rest);
        if (st == 0)
            continue;
        v->ran += st != 's';
        if (st == 'f') {
            v->failed++;
            app(v->failures, sizeof v->failures, &off, "%s%s",
                off ? "; " : "", name);
            diag = true;
            where[0] = '\0';
        }
        tap_want(v, want, name, st, rest);
    }
    fclose(f);
    return 0;
}

/* environ with DQ_TEST_REDIS_PORT=port (in slot) instead of any it
 * holds, and without Criterion's own variables (CRITERION_*, and BoxFort's
 * BXFI_*: a test binary that inherits BXFI_MAP from a Criterion test
 * around this command takes itself for a sandboxed worker and aborts);
 * NULL when out of memory. */
static char **suite_env(int port, char *slot, size_t len)
{
    extern char **environ;
    size_t n = 0, k = 0;
    while (environ[n] != NULL)
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "DQ_TEST_REDIS_PORT=", 19) != 0 &&
            strncmp(environ[i], "CRITERION_", 10) != 0 &&
            strncmp(environ[i], "BXFI_", 5) != 0)
            env[k++] = environ[i];
    snprintf(slot, len, "DQ_TEST_REDIS_PORT=%d", port);
    env[k] = slot;
    return env;
}

/* Judges the scanned suite: every wanted test ran and passed, none
 * failed, the binary exited 0. */
static x_result judge_suite(x_ctx *c, const dq_xcheck *k, const char *ident,
                            const tap_view *v, int rc, const char *log)
{
    char w[256], *save = NULL, missing[512] = "";
    size_t i = 0, off = 0;
    bool ok = v->failed == 0 && rc == 0;
    snprintf(w, sizeof w, "%s", k->tests);
    for (char *t = strtok_r(w, " ", &save); t;
         t = strtok_r(NULL, " ", &save), i++) {
        ok = ok && v->states[i] == 'p';
        if (v->states[i] == 0)
            app(missing, sizeof missing, &off, "%s%s", off ? ", " : "",
                      t);
    }
    if (v->ran == 0 && v->skips[0] == '\0') {
        snprintf(c->why, sizeof c->why, "the suite ran no test of %s (exit "
                 "%d%s%s): is X(%s) in DQ_STRATEGY_MAP and the test binary "
                 "rebuilt?", ident, rc, c->temp ? "" : ", output ",
                 c->temp ? "" : log, ident);
        return X_FAIL;
    }
    snprintf(c->why, sizeof c->why, "%zu test%s of %s ran, %zu failed%s%s%s"
             "%s%s%s%s; exit %d", v->ran, v->ran == 1 ? "" : "s", ident,
             v->failed, v->failed ? " (" : "", v->failures,
             v->failed ? ")" : "", v->skips[0] ? "; " : "", v->skips,
             off ? "; not run: " : "", missing, rc);
    return ok ? X_PASS : X_FAIL;
}

static x_result check_suite(x_ctx *c, const dq_xcheck *k)
{
    char bin[PATH_MAX + 32], tap[PATH_MAX + 32], log[PATH_MAX + 32];
    char ident[64], filter[80], tapopt[PATH_MAX + 40], slot[64], err[512];
    dq_redis_server srv;
    tap_view v;
    dq_exercise_ident(c->s->name, ident, sizeof ident);
    snprintf(bin, sizeof bin, "%s/test_conformance", c->tests);
    snprintf(tap, sizeof tap, "%s/suite.tap", c->work);
    snprintf(log, sizeof log, "%s/suite.log", c->work);
    if (access(bin, X_OK) != 0) {
        snprintf(c->why, sizeof c->why, "%s: %s (make exercise-check builds "
                 "it; or give --tests DIR)", bin, strerror(errno));
        return X_ERROR;
    }
    dq_redis_server_opts so = {0};
    if (dq_redis_server_start(&srv, &so, err, sizeof err) != 0) {
        snprintf(c->why, sizeof c->why, "%s", err);
        return X_ERROR;
    }
    snprintf(filter, sizeof filter, "%s/*", ident);
    snprintf(tapopt, sizeof tapopt, "--tap=%s", tap);
    char **env = suite_env(srv.port, slot, sizeof slot);
    char *av[] = {bin, "--filter", filter, "--jobs", "2", tapopt, NULL};
    int rc = env ? run_child(c, bin, av, env, log, log) : -1;
    if (env == NULL)
        snprintf(c->why, sizeof c->why, "out of memory");
    free(env);
    dq_redis_server_stop(&srv);
    snprintf(c->ran, sizeof c->ran, "%s --filter '%s' on a private "
             "redis-server", bin, filter);
    if (!c->temp)
        app(c->ran, sizeof c->ran, &(size_t){strlen(c->ran)}, " (output %s, "
            "TAP report %s)", log, tap);
    if (rc < 0)
        return X_ERROR;
    if (tap_scan(tap, ident, k->tests, &v) != 0) {
        char first[256];
        int e = errno;
        first_line(log, first, sizeof first);
        snprintf(c->why, sizeof c->why, "%s: %s (the suite exited %d; the "
                 "first line of its output%s%s: %s)", c->temp ? "its TAP "
                 "report" : tap, strerror(e), rc, c->temp ? "" : " ",
                 c->temp ? "" : log, first);
        return X_ERROR;
    }
    return judge_suite(c, k, ident, &v, rc, log);
}

/* ---- The command -------------------------------------------------------- */

size_t dq_exercise_start(const dq_exercise *x, const char *name,
                         char steps[][512], size_t max)
{
    char from[64], first[64];
    if (x->from == NULL || max < 3)
        return 0;
    dq_exercise_ident(x->from, from, sizeof from);
    snprintf(steps[0], 512, "sed 's/dq_strategy_%s\\b/dq_strategy_%s/; "
             "s/\"%s\"/\"%s\"/' strategies/%s.c > strategies/%s.c", from,
             name, x->from, name, from, name);
    /* the new X line goes before the registry's first one */
    dq_exercise_ident(dq_strategies[0]->name, first, sizeof first);
    snprintf(steps[1], 512, "sed -i '/^ *X(%s) /i\\    X(%s) \\\\' "
             "strategies/registry.h", first, name);
    snprintf(steps[2], 512, "make");
    return 3;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: dqlab exercise [EXERCISE STRATEGY] [--tests DIR] "
               "[--out DIR]\n"
               "  Without arguments: lists the exercises.  Otherwise runs "
               "EXERCISE's checks on\n"
               "  STRATEGY (a registered strategy: your solution, or any "
               "other) and prints each\n"
               "  result and what it proves.  --tests DIR: where "
               "test_conformance is (default\n"
               "  build/default/tests); --out DIR: keep the checks' files "
               "there (new or empty).\n"
               "  `make exercise-check EX=EXERCISE NAME=STRATEGY` builds "
               "both and runs this.\n"
               "Exit: 0 every check passed, 1 one failed, 2 bad input or a "
               "check could not run,\n130 interrupted.\n");
}

static void list_exercises(const dq_exercise_set *set)
{
    char steps[3][512], text[1024];
    size_t n = 0;
    for (const dq_exercise *x = set->x; x->id != NULL; x++, n++) {
        printf("%zu. %s: %s\n", n + 1, x->id, x->title);
        dq_print_wrapped("   ", x->task, 78);
        size_t ns = dq_exercise_start(x, "mine", steps, 3);
        if (ns == 0)
            printf("   start: your solution of %s (strategies/mine.c)\n",
                   x->after ? x->after : "?");
        for (size_t i = 0; i < ns; i++)
            printf("   %s %s\n", i ? "      " : "start:", steps[i]);
        printf("   check: make exercise-check EX=%s NAME=mine\n", x->id);
        snprintf(text, sizeof text, "(%s passes; %s, %s, fails)",
                 x->reference, x->fails, x->fails_why);
        dq_print_wrapped("          ", text, 78);
        printf("\n");
    }
}

/* The checks' directory: out (new or empty, made) or a new temporary one
 * (*temp).  0, or -1 after the message. */
static int make_work(x_ctx *c, const char *out, bool *temp)
{
    char err[512];
    *temp = out == NULL;
    if (out == NULL) {
        if (dq_tmpdir_create("dqlab-run", c->work, sizeof c->work, err,
                             sizeof err) == 0)
            return 0;
        fprintf(stderr, "dqlab exercise: %s\n", err);
        return -1;
    }
    snprintf(c->work, sizeof c->work, "%s", out);
    DIR *d = opendir(out);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                break;
        closedir(d);
        if (e == NULL)
            return 0;
        fprintf(stderr, "dqlab exercise: --out %s is not empty (choose a "
                "new or empty directory)\n", out);
        return -1;
    }
    if (errno == ENOENT && mkdir(out, 0755) == 0)
        return 0;
    fprintf(stderr, "dqlab exercise: --out %s: %s\n", out, strerror(errno));
    return -1;
}

/* nftw callback of rm_work: all but the directory and its owner record,
 * which dq_tmpdir_remove takes. */
static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
    (void)sb;
    if (ftw->level == 0 || (ftw->level == 1 &&
                            strcmp(path + ftw->base, DQ_TMPDIR_OWNER_FILE)
                                == 0))
        return 0;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Removes what the checks wrote into the temporary directory, then it. */
static void rm_work(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    dq_tmpdir_remove(dir);
}

static const char *const result_word[] = {"PASS", "FAIL", "COULD NOT RUN"};

/* Runs and prints check no (1-based) of c->x. */
static x_result run_check(x_ctx *c, const dq_xcheck *k, size_t no, size_t n)
{
    char by_hand[2048], dir[160], stem[32], text[4096];
    x_result r = X_ERROR;
    c->why[0] = c->ran[0] = '\0';
    printf("[%zu/%zu] %s\n", no, n, k->what);
    fflush(stdout);
    if (k->kind == DQ_XC_DECLARES)
        r = check_declares(c, k);
    else if (k->kind == DQ_XC_TRIAL)
        r = check_trial(c, k, no);
    else
        r = check_suite(c, k);
    snprintf(text, sizeof text, "%s: %s", result_word[r], c->why);
    dq_print_wrapped("      ", text, 78);
    if (c->ran[0]) {
        snprintf(text, sizeof text, "ran: %s", c->ran);
        dq_print_wrapped("      ", text, 78);
    }
    snprintf(dir, sizeof dir, "/tmp/%s-%s", c->s->name, c->x->id);
    snprintf(stem, sizeof stem, "trial-%zu", no);
    dq_xcheck_command(k, c->s, c->s->name, dir, stem, by_hand,
                      sizeof by_hand);
    snprintf(text, sizeof text, "by hand: %s", by_hand);
    dq_print_wrapped("      ", text, 78);
    snprintf(text, sizeof text, "passing proves: %s", k->proves);
    dq_print_wrapped("      ", text, 78);
    fflush(stdout);
    return r;
}

/* Runs every check of c->x; the exit code. */
static int run_all(x_ctx *c)
{
    size_t n = 0, fail = 0, err = 0;
    while (c->x->checks[n].what != NULL)
        n++;
    printf("exercise %s: %s\nstrategy %s\n\n", c->x->id, c->x->title,
           c->s->name);
    for (size_t i = 0; i < n && !dq_signals_caught(); i++) {
        x_result r = run_check(c, &c->x->checks[i], i + 1, n);
        fail += r == X_FAIL;
        err += r == X_ERROR;
        printf("\n");
    }
    if (dq_signals_caught()) {
        printf("exercise %s: %s: interrupted\n", c->x->id, c->s->name);
        return 130;
    }
    if (c->temp)
        printf("(the checks' files were in a temporary directory, removed "
               "now; --out DIR keeps them)\n");
    if (fail + err == 0)
        printf("exercise %s: %s PASSES (%zu of %zu checks)\n", c->x->id,
               c->s->name, n, n);
    else
        printf("exercise %s: %s FAILS (%zu of %zu checks failed%s)\n",
               c->x->id, c->s->name, fail + err, n,
               err ? ", some could not run" : "");
    return err ? 2 : fail ? 1 : 0;
}

/* Parses EX NAME [--tests DIR] [--out DIR]; -1 to go on, else the exit
 * code. */
static int parse(int argc, char **argv, const char **ex, const char **name,
                 const char **tests, const char **out)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--tests") == 0 || strcmp(a, "--out") == 0) {
            const char **dst = a[2] == 't' ? tests : out;
            if (i + 1 >= argc || argv[i + 1][0] == '\0' || *dst != NULL) {
                fprintf(stderr, "dqlab exercise: %s %s\n", a, *dst ?
                        "given twice" : "needs a directory");
                return 2;
            }
            *dst = argv[++i];
        } else if (a[0] == '-' || *name != NULL) {
            fprintf(stderr, "dqlab exercise: unexpected argument '%s' (see "
                    "dqlab exercise --help)\n", a);
            return 2;
        } else {
            *(*ex == NULL ? ex : name) = a;
        }
    }
    return -1;
}

/* Runs exercise ex of set on strategy name; the exit code. */
static int run_exercise(const dq_exercise_set *set, const char *ex,
                        const char *name, const char *tests, const char *out)
{
    const dq_exercise *x = dq_exercise_find(set, ex);
    const dq_strategy *s = name ? dq_strategy_find(name) : NULL;
    x_ctx *c;
    int rc;
    if (x == NULL || name == NULL || s == NULL) {
        if (x == NULL)
            fprintf(stderr, "dqlab exercise: no exercise '%s' (dqlab "
                    "exercise lists them)\n", ex);
        else if (name == NULL)
            fprintf(stderr, "dqlab exercise: %s needs a strategy name (see "
                    "dqlab exercise --help)\n", ex);
        else
            fprintf(stderr, "dqlab exercise: no strategy '%s' in this build "
                    "(strategies/%s.c and X(%s) in DQ_STRATEGY_MAP in "
                    "strategies/registry.h, then make; dqlab list)\n", name,
                    name, name);
        return 2;
    }
    if ((c = calloc(1, sizeof *c)) == NULL) {
        fprintf(stderr, "dqlab exercise: out of memory\n");
        return 2;
    }
    c->x = x;
    c->s = s;
    c->tests = tests ? tests : "build/default/tests";
    ssize_t n = readlink("/proc/self/exe", c->exe, sizeof c->exe - 1);
    if (n <= 0 || make_work(c, out, &c->temp) != 0) {
        if (n <= 0)
            fprintf(stderr, "dqlab exercise: /proc/self/exe: %s\n",
                    strerror(errno));
        free(c);
        return 2;
    }
    c->exe[n] = '\0';
    rc = run_all(c);
    if (c->temp)
        rm_work(c->work);
    free(c);
    return rc;
}

int dq_cmd_exercise(int argc, char **argv)
{
    const char *ex = NULL, *name = NULL, *tests = NULL, *out = NULL;
    char err[600];
    dq_exercise_set set;
    int rc = parse(argc, argv, &ex, &name, &tests, &out);
    if (rc >= 0)
        return rc;
    if (dq_exercises_load(DQ_EXERCISE_FILE, &set, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab exercise: %s\n", err);
        return 2;
    }
    if (ex == NULL) {
        list_exercises(&set);
        rc = 0;
    } else {
        rc = run_exercise(&set, ex, name, tests, out);
    }
    dq_exercises_free(&set);
    return rc;
}
