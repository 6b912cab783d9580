/* test_files.c -- results, temporary files and messages, through the real
 * binary ($DQLAB) and real redis-servers (the private ones dqlab starts).
 *
 *   - `run --out DIR` refuses a directory that is not empty and leaves
 *     what it holds untouched;
 *   - the temporary directories of a dqlab killed with SIGKILL are removed
 *     by the next dqlab, and never while their owner runs; the sweep
 *     itself (tmpdir.h) keeps everything that is not certainly stale;
 *   - a server that accepts the connection but never answers is named as
 *     a timeout, with its length;
 *   - `dqlab report` names a latest run without trials.csv, and a failed
 *     write says why (and so does `dqlab experiment`, which then leaves no
 *     run directory behind);
 *   - no message quotes any part of a --redis URL's userinfo.
 * Every bad input must give exit 2 and exactly one line on stderr.
 *
 * Each test works in its own mkdtemp() directory, used as $TMPDIR for the
 * dqlab it starts where temporary directories matter, so nothing here
 * sees, keeps or removes another run's files.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../harness/tmpdir.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static const char *dqlab(void)
{
    const char *d = getenv("DQLAB");
    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    return d;
}

/* ---- Running dqlab ---------------------------------------------------- */

typedef struct result {
    int status;        /* exit code, -1 when killed */
    char out[16384];
    char err[4096];
} result;

typedef struct run_opts {
    const char *tmpdir;  /* $TMPDIR for the child, NULL: unchanged */
    bool no_writes;      /* RLIMIT_FSIZE 0 with SIGXFSZ ignored: every
                            write to a file fails with EFBIG */
} run_opts;

/* Forks and execs $DQLAB with args (NULL-terminated, without argv[0]);
 * returns its pid with its stdout and stderr on *outfd and *errfd. */
static pid_t start(const char *const *args, const run_opts *o, int *outfd,
                   int *errfd)
{
    const char *argv[32];
    int po[2], pe[2], n = 0;
    pid_t pid;

    argv[n++] = dqlab();
    for (size_t i = 0; args[i] != NULL && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    cr_assert_eq(pipe(po), 0);
    cr_assert_eq(pipe(pe), 0);
    pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        close(po[1]);
        close(pe[1]);
        if (o != NULL && o->tmpdir != NULL)
            setenv("TMPDIR", o->tmpdir, 1);
        if (o != NULL && o->no_writes) {
            struct rlimit rl = {0, 0};
            signal(SIGXFSZ, SIG_IGN); /* ignored stays ignored over exec */
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    *outfd = po[0];
    *errfd = pe[0];
    return pid;
}

/* Reads both pipes to EOF (poll: neither can fill up and block the
 * child), then reaps pid. */
static void finish(pid_t pid, int outfd, int errfd, result *r)
{
    struct pollfd fds[2] = {{outfd, POLLIN, 0}, {errfd, POLLIN, 0}};
    size_t nout = 0, nerr = 0;
    int open_fds = 2, st;

    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            cr_assert_eq(errno, EINTR);
            continue;
        }
        for (int i = 0; i < 2; i++) {
            char buf[4096];
            ssize_t k;

            if (fds[i].fd < 0 || fds[i].revents == 0)
                continue;
            k = read(fds[i].fd, buf, sizeof buf);
            if (k <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
                continue;
            }
            char *dst = i == 0 ? r->out : r->err;
            size_t *used = i == 0 ? &nout : &nerr;
            size_t cap = i == 0 ? sizeof r->out : sizeof r->err;
            for (ssize_t j = 0; j < k && *used + 1 < cap; j++)
                dst[(*used)++] = buf[j];
        }
    }
    r->out[nout] = '\0';
    r->err[nerr] = '\0';
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void run(result *r, const run_opts *o, const char *const *args)
{
    int outfd, errfd;
    pid_t pid = start(args, o, &outfd, &errfd);

    finish(pid, outfd, errfd, r);
}

/* Exit 2, exactly one line on stderr holding want, nothing on stdout. */
static void expect_one_line(const result *r, const char *want)
{
    const char *nl = strchr(r->err, '\n');

    cr_assert_eq(r->status, 2, "exit %d, expected 2; stderr:\n%s", r->status,
                 r->err);
    cr_assert(nl != NULL && nl[1] == '\0', "expected one line on stderr, "
              "got:\n%s", r->err);
    cr_assert(strstr(r->err, want) != NULL, "no '%s' in: %s", want, r->err);
    cr_assert_eq(r->out[0], '\0', "stdout not empty: %s", r->out);
}

/* ---- Files ------------------------------------------------------------- */

static void make_tmp(char *dir, size_t len, const char *what)
{
    snprintf(dir, len, "/tmp/dqlab-files-%s-XXXXXX", what);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void rm_rf(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

static void read_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n;

    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Entries of dir whose name starts with prefix: how many, the last one's
 * path in path (when not NULL). */
static int count_prefixed(const char *dir, const char *prefix, char *path,
                          size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0) {
            n++;
            if (path != NULL)
                snprintf(path, len, "%s/%s", dir, de->d_name);
        }
    closedir(d);
    return n;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- run --out ----------------------------------------------------------- */

Test(files, run_out_refuses_a_directory_with_results, .timeout = 60)
{
    char dir[128], path[256], buf[256];
    result r;

    /* Only summary.json: it must stay as it is, and no log appears. */
    make_tmp(dir, sizeof dir, "out");
    snprintf(path, sizeof path, "%s/summary.json", dir);
    write_file(path, "precious\n");
    const char *args[] = {"run", "--strategy", "heap", "--tasks", "10",
                          "--quiet", "--out", dir, NULL};
    run(&r, NULL, args);
    expect_one_line(&r, "--out");
    cr_assert(strstr(r.err, dir) != NULL, "the directory is not named: %s",
              r.err);
    cr_assert(strstr(r.err, "summary.json") != NULL, "%s", r.err);
    read_file(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "precious\n", "summary.json was overwritten");
    snprintf(path, sizeof path, "%s/events.log", dir);
    cr_assert_not(exists(path), "events.log written into a refused DIR");

    /* A file dqlab does not know is refused too: it may be a result. */
    snprintf(path, sizeof path, "%s/summary.json", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/trials.csv", dir);
    write_file(path, "a,b\n");
    run(&r, NULL, args);
    expect_one_line(&r, "trials.csv");
    unlink(path);

    /* Empty: accepted, and both result files written. */
    run(&r, NULL, args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    snprintf(path, sizeof path, "%s/events.log", dir);
    cr_assert(exists(path));
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cr_assert(exists(path));
    /* And a second run into it is refused. */
    run(&r, NULL, args);
    expect_one_line(&r, "is not empty");
    rm_rf(dir);
}

/* ---- Temporary directories --------------------------------------------- */

/* Waits (up to 20 s) until dir holds a dqlab-run-* directory with an
 * events.log: the private server is up and the trial has started. */
static void wait_for_trial(const char *dir)
{
    for (int i = 0; i < 1000; i++) {
        char run_dir[512], log[600];

        if (count_prefixed(dir, "dqlab-run-", run_dir, sizeof run_dir) == 1) {
            snprintf(log, sizeof log, "%s/events.log", run_dir);
            if (exists(log) && count_prefixed(dir, "dqlab-redis-", NULL, 0))
                return;
        }
        sleep_ms(20);
    }
    cr_assert_fail("no trial started in %s within 20 s", dir);
}

Test(files, temp_dirs_of_a_killed_dqlab_are_removed_by_the_next, .timeout = 120)
{
    char tmp[128];
    int outfd, errfd;
    result r, quick;
    run_opts o = {NULL, false};
    const char *slow[] = {"run", "--strategy", "lua", "--tasks", "50",
                          "--delay-ms", "60000", "--quiet", NULL};
    const char *fast[] = {"run", "--strategy", "heap", "--tasks", "5",
                          "--delay-ms", "0", "--quiet", NULL};

    make_tmp(tmp, sizeof tmp, "kill");
    o.tmpdir = tmp;
    pid_t pid = start(slow, &o, &outfd, &errfd);
    wait_for_trial(tmp);

    /* While it runs, another dqlab must leave its directories alone. */
    run(&quick, &o, fast);
    cr_assert_eq(quick.status, 0, "exit %d: %s", quick.status, quick.err);
    cr_assert_eq(count_prefixed(tmp, "dqlab-run-", NULL, 0), 1,
                 "a live run's directory was removed");
    cr_assert_eq(count_prefixed(tmp, "dqlab-redis-", NULL, 0), 1,
                 "a live server's directory was removed");

    /* SIGKILL: no cleanup runs, both directories stay behind. */
    cr_assert_eq(kill(pid, SIGKILL), 0);
    finish(pid, outfd, errfd, &r);
    cr_assert_eq(r.status, -1);
    cr_assert_eq(count_prefixed(tmp, "dqlab-run-", NULL, 0), 1);
    cr_assert_eq(count_prefixed(tmp, "dqlab-redis-", NULL, 0), 1);

    /* The next dqlab removes them. */
    run(&quick, &o, fast);
    cr_assert_eq(quick.status, 0, "exit %d: %s", quick.status, quick.err);
    int left_run = count_prefixed(tmp, "dqlab-run-", NULL, 0);
    int left_redis = count_prefixed(tmp, "dqlab-redis-", NULL, 0);
    rm_rf(tmp);
    cr_assert_eq(left_run, 0, "the killed run's dqlab-run-* is still there");
    cr_assert_eq(left_redis, 0, "the killed run's dqlab-redis-* is still "
                 "there");
}

/* mkdir root/name with an owner record o (NULL: none). */
static void make_owned(const char *root, const char *name,
                       const dq_tmpdir_owner *o)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", root, name);
    cr_assert_eq(mkdir(path, 0700), 0, "%s: %s", path, strerror(errno));
    if (o != NULL)
        cr_assert_eq(dq_tmpdir_write_owner(path, o), 0, "%s", path);
    snprintf(path, sizeof path, "%s/%s/redis.log", root, name);
    write_file(path, "x\n");
}

static bool dir_there(const char *root, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, name);
    return exists(path);
}

Test(files, sweep_removes_only_directories_whose_owner_is_gone)
{
    char root[128], path[512];
    dq_tmpdir_owner alive, dead, reused, foreign;
    pid_t child;
    int st;

    make_tmp(root, sizeof root, "sweep");
    cr_assert_eq(dq_tmpdir_owner_of(getpid(), &alive), 0);
    /* A dead owner: a child that exited and was reaped. */
    child = fork();
    cr_assert(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    cr_assert_eq(dq_tmpdir_owner_of(child, &dead), 0);
    kill(child, SIGKILL);
    cr_assert_eq(waitpid(child, &st, 0), child);
    /* Our pid with another start time: a reused pid. */
    reused = alive;
    reused.start_ticks++;
    /* A dead pid seen from another pid namespace: cannot be judged. */
    foreign = dead;
    snprintf(foreign.pid_ns, sizeof foreign.pid_ns, "pid:[1]");

    make_owned(root, "dqlab-run-Alive1", &alive);
    make_owned(root, "dqlab-redis-NoRec1", NULL);
    make_owned(root, "dqlab-run-Reuse1", &reused);
    make_owned(root, "dqlab-redis-Dead01", &dead);
    make_owned(root, "dqlab-run-Forgn1", &foreign);
    make_owned(root, "other-Dead01", &dead);
    make_owned(root, "dqlab-run-Dead0123", &dead); /* not a mkdtemp name */
    make_owned(root, "target", &dead);
    snprintf(path, sizeof path, "%s/dqlab-run-Link01", root);
    cr_assert_eq(symlink("target", path), 0);
    /* A malformed record. */
    make_owned(root, "dqlab-run-Bad001", NULL);
    snprintf(path, sizeof path, "%s/dqlab-run-Bad001/%s", root,
             DQ_TMPDIR_OWNER_FILE);
    write_file(path, "dqlab-owner pid=1\n");

    int removed = dq_tmpdir_sweep(root);
    bool kept_alive = dir_there(root, "dqlab-run-Alive1");
    bool kept_norec = dir_there(root, "dqlab-redis-NoRec1");
    bool gone_reused = !dir_there(root, "dqlab-run-Reuse1");
    bool gone_dead = !dir_there(root, "dqlab-redis-Dead01");
    bool kept_foreign = dir_there(root, "dqlab-run-Forgn1");
    bool kept_other = dir_there(root, "other-Dead01");
    bool kept_long = dir_there(root, "dqlab-run-Dead0123");
    bool kept_link = dir_there(root, "dqlab-run-Link01") &&
                     dir_there(root, "target/redis.log");
    bool kept_bad = dir_there(root, "dqlab-run-Bad001");
    rm_rf(root);
    cr_assert_eq(removed, 2);
    cr_assert(kept_alive, "removed a directory whose owner is alive");
    cr_assert(kept_norec, "removed a directory without an owner record");
    cr_assert(gone_reused, "kept a directory whose pid was reused");
    cr_assert(gone_dead, "kept a directory whose owner is dead");
    cr_assert(kept_foreign, "removed a directory of another pid namespace");
    cr_assert(kept_other, "removed a directory not named dqlab-*");
    cr_assert(kept_long, "removed a directory not named as mkdtemp does");
    cr_assert(kept_link, "followed a symlink");
    cr_assert(kept_bad, "removed a directory with a malformed record");
}

/* ---- A server that never answers ---------------------------------------- */

/* A socket listening on 127.0.0.1 that never accepts: the kernel completes
 * the TCP handshake, and nothing ever replies.  Returns the fd, port in
 * *port. */
static int silent_listener(int *port)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    cr_assert(fd >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(fd, 16), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

Test(files, a_server_that_never_answers_is_a_timeout, .timeout = 60)
{
    char url[64], dir[128], ini[256];
    int port, fd = silent_listener(&port);
    result r;

    snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
    const char *args[] = {"run", "--strategy", "lua", "--redis", url,
                          "--quiet", NULL};
    run(&r, NULL, args);
    expect_one_line(&r, "timed out: no reply within 2000 ms");
    cr_assert(strstr(r.err, "Resource temporarily") == NULL, "%s", r.err);

    make_tmp(dir, sizeof dir, "silent");
    snprintf(ini, sizeof ini, "%s/x.ini", dir);
    write_file(ini, "[experiment]\nname = x\nstrategies = lua\n"
                    "consumers = 1\n");
    const char *eargs[] = {"experiment", ini, "--redis", url, "--results",
                           dir, NULL};
    run(&r, NULL, eargs);
    expect_one_line(&r, "timed out: no reply within 2000 ms");
    cr_assert_not(dir_there(dir, "x"), "a run directory was left behind");
    rm_rf(dir);
    close(fd);
}

/* ---- dqlab report ------------------------------------------------------- */

/* Runs a one-trial heap experiment into dir/results. */
static void tiny_results(const char *dir)
{
    char ini[256], res[256];
    result r;

    snprintf(ini, sizeof ini, "%s/tiny.ini", dir);
    snprintf(res, sizeof res, "%s/results", dir);
    write_file(ini, "[experiment]\nname = tiny\nstrategies = heap\n"
                    "consumers = 1\ntasks = 20\ndelay_ms = 0:10\n"
                    "grace_ms = 200\n");
    const char *args[] = {"experiment", ini, "--results", res, NULL};
    run(&r, NULL, args);
    cr_assert_eq(r.status, 0, "experiment: exit %d: %s", r.status, r.err);
}

/* The report's gnuplot scripts, from the repository root (tests run
 * there: tests/run.sh). */
static void scripts_dir(char *buf, size_t len)
{
    char cwd[256], gp[512];

    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(buf, len, "%s/report", cwd);
    snprintf(gp, sizeof gp, "%s/common.gp", buf);
    cr_assert_eq(access(gp, R_OK), 0, "%s: run the tests from the "
                 "repository root (make test)", gp);
}

Test(files, report_names_a_latest_run_without_trials_csv, .timeout = 60)
{
    char dir[128], res[256], out[256], csv[512], scripts[300], latest[300];
    result r;

    make_tmp(dir, sizeof dir, "report");
    tiny_results(dir);
    scripts_dir(scripts, sizeof scripts);
    snprintf(res, sizeof res, "%s/results", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(latest, sizeof latest, "%s/tiny/latest", res);
    snprintf(csv, sizeof csv, "%s/trials.csv", latest);
    cr_assert_eq(unlink(csv), 0);
    const char *args[] = {"report", res, "--out", out, "--scripts", scripts,
                          NULL};
    run(&r, NULL, args);
    expect_one_line(&r, "has no trials.csv");
    cr_assert(strstr(r.err, latest) != NULL, "%s is not named: %s", latest,
              r.err);
    cr_assert(strstr(r.err, "no results under") == NULL, "%s", r.err);
    rm_rf(dir);
}

Test(files, report_says_why_a_write_failed, .timeout = 60)
{
    char dir[128], res[256], out[256], scripts[300], md[300], buf[64];
    result r;
    run_opts o = {NULL, true};

    make_tmp(dir, sizeof dir, "rwrite");
    tiny_results(dir);
    scripts_dir(scripts, sizeof scripts);
    snprintf(res, sizeof res, "%s/results", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    /* An earlier report, which the failed one must leave whole. */
    cr_assert_eq(mkdir(out, 0755), 0);
    snprintf(md, sizeof md, "%s/REPORT.md", out);
    write_file(md, "earlier report\n");
    const char *args[] = {"report", res, "--out", out, "--scripts", scripts,
                          NULL};
    run(&r, &o, args);
    expect_one_line(&r, "write failed: File too large");
    read_file(md, buf, sizeof buf);
    cr_assert_str_eq(buf, "earlier report\n");
    rm_rf(dir);
}

/* The report replaces its --out directory whole, so a directory holding
 * anything a report does not write is refused, before any work, and kept
 * as it was; a directory a report wrote (its mark) is replaced. */
Test(files, report_refuses_a_directory_that_is_not_a_report, .timeout = 60)
{
    char dir[128], res[256], out[256], scripts[300], doc[300], mark[300];
    char buf[64];
    result r;

    make_tmp(dir, sizeof dir, "rout");
    tiny_results(dir);
    scripts_dir(scripts, sizeof scripts);
    snprintf(res, sizeof res, "%s/results", dir);
    snprintf(out, sizeof out, "%s/home", dir);
    cr_assert_eq(mkdir(out, 0755), 0);
    snprintf(doc, sizeof doc, "%s/important.doc", out);
    write_file(doc, "keep me\n");
    const char *args[] = {"report", res, "--out", out, "--scripts", scripts,
                          NULL};
    run(&r, NULL, args);
    expect_one_line(&r, "holds 'important.doc', which is not part of a "
                        "report");
    read_file(doc, buf, sizeof buf);
    cr_assert_str_eq(buf, "keep me\n");
    /* The results root itself is not a report either. */
    const char *into_results[] = {"report", res, "--out", res, "--scripts",
                                  scripts, NULL};
    run(&r, NULL, into_results);
    expect_one_line(&r, "which is not part of a report");
    cr_assert(exists(res), "the results directory is gone");
    /* A report's own directory is replaced, twice. */
    snprintf(out, sizeof out, "%s/rep", dir);
    for (int i = 0; i < 2; i++) {
        const char *again[] = {"report", res, "--out", out, "--scripts",
                               scripts, NULL};
        run(&r, NULL, again);
        cr_assert_eq(r.status, 0, "report %d: exit %d: %s", i + 1, r.status,
                     r.err);
    }
    snprintf(mark, sizeof mark, "%s/.dqlab-report", out);
    cr_assert(exists(mark), "no %s", mark);
    rm_rf(dir);
}

Test(files, experiment_that_cannot_write_leaves_no_run_dir, .timeout = 60)
{
    char dir[128], ini[256], res[256], exp[300];
    result r;
    run_opts o = {NULL, true};

    make_tmp(dir, sizeof dir, "ewrite");
    snprintf(ini, sizeof ini, "%s/tiny.ini", dir);
    snprintf(res, sizeof res, "%s/results", dir);
    snprintf(exp, sizeof exp, "%s/tiny", res);
    write_file(ini, "[experiment]\nname = tiny\nstrategies = heap\n"
                    "consumers = 1\ntasks = 20\n");
    const char *args[] = {"experiment", ini, "--results", res, NULL};
    run(&r, &o, args);
    expect_one_line(&r, "write failed: File too large");
    int left = exists(exp) ? count_prefixed(exp, "2", NULL, 0) : 0;
    rm_rf(dir);
    cr_assert_eq(left, 0, "a run directory was left behind");
}

/* ---- The userinfo of --redis URLs ---------------------------------------- */

Test(files, messages_never_quote_the_userinfo, .timeout = 60)
{
    /* An unescaped ':' makes "hunter" look like a user name, '/' makes
     * the rest look like a path: neither piece may be printed. */
    static const char *const urls[] = {
        "redis://hunter:s3cr3t@127.0.0.1:1",
        "redis://:hunter/s3cr3t@127.0.0.1:bad",
        "redis://hunter:s3cr3t/x@127.0.0.1:1/nodb",
    };
    result r;

    /* Without an '@' there is no userinfo, but --redis must not quote
     * what may be a password typed without its host either. */
    const char *no_host[] = {"run", "--strategy", "lua", "--redis",
                             "redis://hunter:s3cr3t", "--quiet", NULL};
    run(&r, NULL, no_host);
    expect_one_line(&r, "--redis: the port is not a number");
    cr_assert(strstr(r.err, "s3cr3t") == NULL, "leaked: %s", r.err);

    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        const char *as_arg[] = {"run", urls[i], NULL};
        const char *as_opt[] = {"run", "--strategy", "lua", "--redis",
                                urls[i], "--quiet", NULL};
        const char *as_tasks[] = {"run", "--tasks", urls[i], NULL};
        const char *const *cases[] = {as_arg, as_opt, as_tasks};

        for (size_t k = 0; k < 3; k++) {
            run(&r, NULL, cases[k]);
            expect_one_line(&r, "dqlab run: ");
            cr_assert(strstr(r.err, "hunter") == NULL &&
                      strstr(r.err, "s3cr3t") == NULL,
                      "%s (case %zu) leaked: %s", urls[i], k, r.err);
        }
    }
}

/* ---- Options given twice ------------------------------------------------- */

/* A parameter, an option of the run or a strategy option given twice is
 * refused with one line, as an experiment file refuses a key given twice
 * (the last value used to win silently). */
Test(files, an_option_given_twice_is_refused, .timeout = 60)
{
    static const char *const twice[][8] = {
        {"run", "--strategy", "heap", "--tasks", "10", "--tasks", "20", NULL},
        {"run", "--strategy", "heap", "--tasks=10", "--tasks", "20", NULL},
        {"run", "--strategy", "lua", "--opt", "poll_ms=10", "--opt",
         "poll_ms=20", NULL},
        {"run", "--strategy", "lua", "--strategy", "heap", NULL},
        {"run", "--strategy", "heap", "--quiet", "--quiet", NULL},
    };
    static const char *const want[] = {
        "dqlab run: --tasks given twice", "dqlab run: --tasks given twice",
        "dqlab run: --opt poll_ms given twice",
        "dqlab run: --strategy given twice", "dqlab run: --quiet given twice",
    };
    result r;

    for (size_t i = 0; i < sizeof twice / sizeof twice[0]; i++) {
        run(&r, NULL, twice[i]);
        expect_one_line(&r, want[i]);
    }
}

/* rediss:// is named as unsupported, and the form the message gives is
 * printed as it is, not masked as if it were a URL with a password. */
Test(files, a_rediss_url_is_refused_with_the_form_intact, .timeout = 30)
{
    const char *args[] = {"run", "--strategy", "lua", "--redis",
                          "rediss://alice:s3cr3t@127.0.0.1:1", NULL};
    result r;

    run(&r, NULL, args);
    expect_one_line(&r, "--redis: rediss:// (TLS) is not supported");
    cr_assert(strstr(r.err, "redis://[user:password@]host:port[/db]") !=
                  NULL, "the form was mangled: %s", r.err);
    cr_assert(strstr(r.err, "s3cr3t") == NULL, "leaked: %s", r.err);
}
