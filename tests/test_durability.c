/* test_durability.c -- the paced producer and the faults a deployment's
 * durability meets (os-crash, failover, evict, restart-redis:rdb), each
 * through the real binary where its outcome is certain:
 * `$DQLAB run ... --json --out DIR`, then the summary and the event log.
 *
 * Each trial runs on servers dqlab starts itself (a fault that needs them
 * refuses --redis), with TMPDIR pointed at a directory of the test's own,
 * so that the test can see that no server process and no server directory
 * outlives dqlab.  The JSON summary carries the checker's counts, read
 * from the log alone; the exit code is dqlab's verdict, and `dqlab check`
 * on the stored log gives it again.
 *
 * What each test relies on:
 *   - --rate N sends task i at the producer's start + i/N s on the
 *     monotonic clock, so the E records of N tasks span at least
 *     (N-1)/N s minus the first enqueue's round trip; without pacing they
 *     span milliseconds;
 *   - with appendfsync always Redis fsyncs the AOF before it replies, so
 *     after a host crash (os-crash: the un-fsynced tail dropped) every
 *     acknowledged enqueue is still there; a leased strategy gets back
 *     any claim the crash took;
 *   - with everysec a crash can lose only what was acknowledged before
 *     it, all of it explained by the crash's window;
 *   - with wait=1 and one replica, every acknowledged enqueue is on the
 *     replica Sentinel promotes; a leased strategy gets back a claim
 *     whose confirmation failed;
 *   - allkeys-lru, with the filler as hot as the queue and three times
 *     maxmemory of it written, evicts queue keys (measured: the whole
 *     ZSet and payload hash every time), and every loss is enqueued
 *     before the eviction window ended; volatile-lru never evicts a key
 *     without a TTL (lua-lease sets none); noeviction refuses the
 *     enqueues while memory is full (no task falls due meanwhile, so
 *     nothing frees it) and loses nothing;
 *   - with RDB snapshots (save 1 1) the restarted server loads the last
 *     snapshot: a server started 3 s earlier with writes going on has
 *     taken one, so tasks enqueued before it are delivered after the
 *     crash;
 *   - the checker counts an N record (refused enqueue) apart, attributes
 *     it to the window it fell in, and blames a duplicate whose first
 *     delivery came before its enqueue's acknowledgement on the fault
 *     that made the producer retry (hand-written logs).
 */
#define _GNU_SOURCE /* nftw */
#include <criterion/criterion.h>
#include <dirent.h>
#include <ftw.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../harness/checker.h"
#include "../harness/experiment.h"
#include "../harness/faults.h"
#include "../harness/redis_server.h"
#include "testlib.h"

typedef struct outcome {
    int status;      /* exit code */
    json_t *j;       /* the summary, NULL when none */
    char dir[64];    /* the test's directory: out/ (--out) and tmp/ */
    char err[4096];  /* what dqlab printed on stderr */
} outcome;

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

/* The directories of this test's runs, removed by the suites' .fini
 * (each test runs in a process of its own), so that a failed assertion
 * leaves nothing behind. */
static char g_dirs[8][64];
static size_t g_ndirs;

static void remove_dirs(void)
{
    for (size_t i = 0; i < g_ndirs; i++)
        nftw(g_dirs[i], rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    g_ndirs = 0;
}

TestSuite(rate, .fini = remove_dirs);
TestSuite(os_crash, .fini = remove_dirs);
TestSuite(failover, .fini = remove_dirs);
TestSuite(evict, .fini = remove_dirs);
TestSuite(restart_redis, .fini = remove_dirs);
TestSuite(durability, .fini = remove_dirs);

/* A new directory for one run, with tmp/ inside (dqlab's TMPDIR). */
static void new_dir(outcome *o)
{
    char tmp[128];

    snprintf(o->dir, sizeof o->dir, "/tmp/dqlab-dur-XXXXXX");
    cr_assert_not_null(mkdtemp(o->dir), "mkdtemp");
    if (g_ndirs < sizeof g_dirs / sizeof g_dirs[0])
        snprintf(g_dirs[g_ndirs++], sizeof g_dirs[0], "%s", o->dir);
    snprintf(tmp, sizeof tmp, "%s/tmp", o->dir);
    cr_assert_eq(mkdir(tmp, 0700), 0, "mkdir %s", tmp);
}

/* Runs `TMPDIR=DIR/tmp $DQLAB CMD` with stdout parsed as JSON when it is
 * some and stderr kept in o->err.  CMD holds %s for DIR once at most. */
static outcome run_cmd(const char *fmt)
{
    const char *d = getenv("DQLAB");
    char cmd[4096], tail[3072], *buf = NULL, errpath[128];
    size_t len = 0;
    FILE *f;
    outcome o;
    json_error_t je;

    memset(&o, 0, sizeof o);
    o.status = -1;
    if (d == NULL || *d == '\0')
        cr_assert_fail("DQLAB is not set: run the tests through tests/run.sh");
    new_dir(&o);
    snprintf(tail, sizeof tail, fmt, o.dir);
    snprintf(errpath, sizeof errpath, "%s/stderr", o.dir);
    snprintf(cmd, sizeof cmd, "TMPDIR='%s/tmp' '%s' %s 2>'%s'", o.dir, d,
             tail, errpath);
    o.status = tl_popen_read(cmd, &buf, &len);
    if (len > 0 && buf[0] == '{')
        o.j = json_loads(buf, 0, &je);
    free(buf);
    if ((f = fopen(errpath, "r")) != NULL) {
        size_t n = fread(o.err, 1, sizeof o.err - 1, f);
        o.err[n] = '\0';
        fclose(f);
    }
    return o;
}

/* `dqlab run --quiet --json --out DIR/out ARGS`. */
static outcome run(const char *args)
{
    char fmt[3072];

    snprintf(fmt, sizeof fmt, "run --quiet --json --out '%%s/out' %s", args);
    return run_cmd(fmt);
}

/* True when a process works in a directory under dir (/proc/PID/cwd):
 * redis-server and Sentinel chdir to their --dir, and rewrite their
 * command lines (proc-title), so the working directory is what tells
 * them. */
static bool process_under(const char *dir)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    bool found = false;
    size_t n = strlen(dir);

    cr_assert_not_null(d);
    while (!found && (e = readdir(d)) != NULL) {
        char path[300], cwd[4096];
        ssize_t len;
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/cwd", e->d_name);
        len = readlink(path, cwd, sizeof cwd - 1);
        if (len <= 0)
            continue;
        cwd[len] = '\0';
        found = strncmp(cwd, dir, n) == 0;
    }
    closedir(d);
    return found;
}

/* Nothing of dqlab's outlived it: no process works under tmp/ (the
 * servers' directories) and tmp/ is empty. */
static void expect_nothing_left(const outcome *o)
{
    char tmp[128];
    DIR *d;
    struct dirent *e;

    snprintf(tmp, sizeof tmp, "%s/tmp", o->dir);
    cr_expect(!process_under(tmp), "a process still runs in %s", tmp);
    d = opendir(tmp);
    cr_assert_not_null(d);
    while ((e = readdir(d)) != NULL)
        cr_expect(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0,
                  "%s/%s was left behind", tmp, e->d_name);
    closedir(d);
}

/* Frees o and removes its directory. */
static void done(outcome *o)
{
    json_decref(o->j);
    o->j = NULL;
    nftw(o->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static long long num(const outcome *o, const char *key)
{
    json_t *v;

    cr_assert_not_null(o->j, "no JSON summary (exit %d): %s", o->status,
                       o->err);
    v = json_object_get(o->j, key);
    cr_assert(json_is_integer(v), "summary has no integer '%s'", key);
    return (long long)json_integer_value(v);
}

/* The checker's stats of fault `name`, from the stored log. */
static dq_fault_stat fault_stat(const outcome *o, const char *name)
{
    char path[128], err[512];
    dq_check c;

    snprintf(path, sizeof path, "%s/out/events.log", o->dir);
    cr_assert_eq(dq_check_file(path, &c, err, sizeof err), 0, "%s", err);
    for (size_t i = 0; i < c.nfaults; i++)
        if (strcmp(c.faults[i].name, name) == 0)
            return c.faults[i];
    cr_assert_fail("the checker saw no window of %s", name);
    return c.faults[0];
}

/* Re-checks the stored log with `dqlab check`: its exit code. */
static int recheck(const outcome *o)
{
    char cmd[512];
    int st;

    snprintf(cmd, sizeof cmd, "'%s' check '%s/out/events.log' >/dev/null",
             getenv("DQLAB"), o->dir);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The first and last t_us of the log's records of type `type` (and the
 * first F begin of any fault), and how many. */
static int span(const outcome *o, char type, long long *first,
                long long *last)
{
    char path[128], line[512];
    int n = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/out/events.log", o->dir);
    f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    *first = *last = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        long long t;
        if (line[0] != type || line[1] != '\t' ||
            sscanf(line + 2, "%lld", &t) != 1)
            continue;
        if (n++ == 0 || t < *first)
            *first = t;
        if (t > *last)
            *last = t;
    }
    fclose(f);
    return n;
}

/* E records at or before t_us. */
static int enqueued_by(const outcome *o, long long t_us)
{
    char path[128], line[512];
    int n = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/out/events.log", o->dir);
    f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    while (fgets(line, sizeof line, f) != NULL) {
        long long t;
        if (line[0] == 'E' && sscanf(line + 2, "%lld", &t) == 1 && t <= t_us)
            n++;
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

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_eq(num(&o, "rate"), 40);
    cr_assert_eq(span(&o, 'E', &first, &last), 40);
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
    int fd = mkstemp(path), rc;

    cr_assert_geq(fd, 0);
    rc = write(fd, ini, strlen(ini)) == (ssize_t)strlen(ini);
    close(fd);
    if (!rc)
        unlink(path);
    cr_assert(rc, "write %s", path);
    rc = dq_experiment_load(path, false, &e, err, sizeof err);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(dq_experiment_ntrials(&e), 2);
    dq_experiment_cell(&e, 0, &c);
    cr_assert_eq(c.params.rate, 0);
    dq_experiment_cell(&e, 1, &c);
    cr_assert_eq(c.params.rate, 100);
}

/* ---- os-crash ------------------------------------------------------------ */

#define LEASED "--strategy lua-lease --opt lease_ms=500 --opt poll_ms=10 " \
               "--consumers 2 "

Test(os_crash, always_loses_no_acknowledged_enqueue, .timeout = 90)
{
    outcome o = run(LEASED "--tasks 300 --rate 300 --delay-ms 500:1500 "
                    "--grace-ms 2000 --fault os-crash:always:400");

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_eq(num(&o, "restarts"), 1);
    cr_assert_eq(num(&o, "fault_windows"), 1);
    cr_assert_eq(num(&o, "enqueued"), 300);
    cr_assert_eq(num(&o, "lost"), 0, "%lld acknowledged enqueues lost",
                 num(&o, "lost"));
    cr_assert_eq(recheck(&o), 0, "dqlab check disagrees");
    expect_nothing_left(&o);
    done(&o);
}

Test(os_crash, everysec_loses_only_what_came_before_the_crash,
     .timeout = 90)
{
    long long begin, end;
    outcome o = run(LEASED "--tasks 400 --rate 200 --delay-ms 1500:2500 "
                    "--grace-ms 2000 --fault os-crash:everysec:1000");
    int before;

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_eq(num(&o, "restarts"), 1);
    cr_assert_eq(span(&o, 'F', &begin, &end), 2);
    before = enqueued_by(&o, begin);
    /* Every loss is an acknowledged enqueue from before the crash, and
     * the crash's window explains each. */
    cr_assert_leq(num(&o, "lost"), before);
    cr_assert_eq(num(&o, "lost_nofault"), 0);
    cr_assert_eq((long long)fault_stat(&o, "os-crash").lost, num(&o, "lost"));
    fprintf(stderr, "os-crash:everysec at 200 tasks/s: lost %lld of the %d "
            "acknowledged before the crash\n", num(&o, "lost"), before);
    cr_assert_eq(recheck(&o), 0);
    expect_nothing_left(&o);
    done(&o);
}

/* ---- failover ------------------------------------------------------------ */

#define FAILOVER_RUN "--tasks 300 --rate 200 --delay-ms 1000:2000 " \
                     "--grace-ms 2000 --fault failover:500 "

Test(failover, wait1_loses_no_acknowledged_enqueue, .timeout = 120)
{
    outcome o = run(LEASED "--opt wait=1 --opt wait_timeout_ms=200 "
                    FAILOVER_RUN);

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_eq(num(&o, "fault_windows"), 1);
    cr_assert_eq(num(&o, "enqueued"), 300);
    cr_assert_eq(num(&o, "lost"), 0, "%lld acknowledged enqueues lost",
                 num(&o, "lost"));
    /* Claims that came back are the failover's, never unexplained. */
    cr_assert_eq(num(&o, "dup_nofault"), 0);
    cr_assert_eq(recheck(&o), 0);
    expect_nothing_left(&o);
    done(&o);
}

Test(failover, wait0_loss_is_the_failovers, .timeout = 120)
{
    outcome o = run(LEASED "--opt wait=0 " FAILOVER_RUN);

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_eq(num(&o, "fault_windows"), 1);
    cr_assert_eq(num(&o, "lost_nofault"), 0);
    cr_assert_eq(num(&o, "dup_nofault"), 0);
    cr_assert_eq((long long)fault_stat(&o, "failover").lost, num(&o, "lost"));
    fprintf(stderr, "failover wait=0 at 200 tasks/s: lost %lld of %lld "
            "acknowledged enqueues, %lld claims came back\n",
            num(&o, "lost"), num(&o, "enqueued"), num(&o, "duplicates"));
    expect_nothing_left(&o);
    done(&o);
}

/* failover:lag=MS[:AT_MS]: the two parts in either order, each once; the
 * canonical spec puts the lag first. */
Test(failover, lag_parses_and_formats)
{
    static const struct {
        const char *spec, *canonical;
        long long ms, at_ms;
    } good[] = {
        {"failover", "failover", 0, -1},
        {"failover:700", "failover:700", 0, 700},
        {"failover:lag=500", "failover:lag=500", 500, -1},
        {"failover:lag=1000:2000", "failover:lag=1000:2000", 1000, 2000},
        {"failover:2000:lag=1000", "failover:lag=1000:2000", 1000, 2000},
    };
    static const char *const bad[] = {
        "failover:lag=0", "failover:lag=", "failover:lag=1s",
        "failover:lag=5:lag=6", "failover:1:2", "failover:lag=5:1:2",
        "failover:lag=-5", NULL,
    };
    char err[300], buf[64];
    dq_fault f;

    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        cr_assert_eq(dq_fault_parse(good[i].spec, &f, err, sizeof err), 0,
                     "%s: %s", good[i].spec, err);
        cr_expect_eq((long long)f.ms, good[i].ms, "%s: lag %lld",
                     good[i].spec, (long long)f.ms);
        cr_expect_eq((long long)f.at_ms, good[i].at_ms, "%s: at %lld",
                     good[i].spec, (long long)f.at_ms);
        dq_fault_format(&f, buf, sizeof buf);
        cr_expect_str_eq(buf, good[i].canonical);
    }
    for (size_t i = 0; bad[i] != NULL; i++) {
        err[0] = '\0';
        cr_expect_eq(dq_fault_parse(bad[i], &f, err, sizeof err), -1,
                     "%s parsed", bad[i]);
        cr_expect(err[0] != '\0' && strchr(err, '\n') == NULL,
                  "%s: error '%s'", bad[i], err);
    }
}

/* The F records of the fault called name: the t_us and the argument of
 * its begin and of its end (end_arg "" and *end_us 0 when none). */
static void fault_records(const outcome *o, const char *name,
                          long long *begin_us, long long *end_us,
                          char *end_arg, size_t len)
{
    char path[128], line[512], b[32], what[16];
    FILE *f;

    snprintf(path, sizeof path, "%s/out/events.log", o->dir);
    f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    *begin_us = *end_us = 0;
    end_arg[0] = '\0';
    while (fgets(line, sizeof line, f) != NULL) {
        long long t;
        int n = 0;
        if (line[0] != 'F' ||
            sscanf(line + 2, "%lld\t%31[^\t]\t%15[^\t]\t%n", &t, b, what,
                   &n) != 3 || strcmp(b, name) != 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(what, "begin") == 0)
            *begin_us = t;
        else if (strcmp(what, "end") == 0) {
            *end_us = t;
            snprintf(end_arg, len, "%s", n > 0 ? line + 2 + n : "");
        }
    }
    fclose(f);
}

/* The field key=N of a record's argument, or -1. */
static long long arg_num(const char *arg, const char *key)
{
    const char *p = strstr(arg, key);

    return p != NULL ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* With lag=500 the replica applies nothing from 300 ms on; the primary is
 * killed at 800 ms.  The producer offers 300 tasks/s for 1 s, each due
 * 1.5-2.5 s after its enqueue: none of those enqueued during the lag is
 * due, let alone delivered, before the kill. */
#define LAG_RUN "--tasks 300 --rate 300 --delay-ms 1500:2500 " \
                "--grace-ms 2000 --fault failover:lag=500:300 "
#define LAG_US 500000LL

/* Without WAIT every enqueue the primary acknowledged while its replica
 * lagged is on the primary only: lost in the failover, and the checker
 * blames the failover's window for each of them. */
Test(failover, lag_wait0_loses_acknowledged_enqueues, .timeout = 120)
{
    long long begin, end;
    char arg[256];
    outcome o = run(LEASED "--opt wait=0 " LAG_RUN);

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_eq(num(&o, "fault_windows"), 1);
    fault_records(&o, "failover", &begin, &end, arg, sizeof arg);
    cr_assert_gt(begin, 0);
    cr_assert(arg_num(arg, "lagged_ms=") >= LAG_US / 1000, "end '%s'", arg);
    cr_assert_gt(arg_num(arg, "behind_bytes="), 0, "end '%s'", arg);
    cr_assert_gt(num(&o, "lost"), 0, "no acknowledged enqueue lost with "
                 "wait=0 and a lagging replica (%d acknowledged during "
                 "the lag)", enqueued_by(&o, begin + LAG_US) -
                 enqueued_by(&o, begin));
    cr_assert_eq(num(&o, "lost_nofault"), 0);
    cr_assert_eq(num(&o, "dup_nofault"), 0);
    cr_assert_eq((long long)fault_stat(&o, "failover").lost, num(&o, "lost"));
    fprintf(stderr, "failover:lag=500 wait=0 at 300 tasks/s: %d enqueues "
            "acknowledged during the lag, %lld lost; %s\n",
            enqueued_by(&o, begin + LAG_US) - enqueued_by(&o, begin),
            num(&o, "lost"), arg);
    expect_nothing_left(&o);
    done(&o);
}

/* With wait=1 the same lag loses nothing: no enqueue is acknowledged
 * while the replica applies nothing (WAIT times out, the enqueue fails,
 * the producer retries it after the failover), so none of the second
 * half of the lag has an E record, and all 300 are delivered. */
Test(failover, lag_wait1_loses_no_acknowledged_enqueue, .timeout = 120)
{
    long long begin, end;
    char arg[256];
    outcome o = run(LEASED "--opt wait=1 --opt wait_timeout_ms=200 "
                    LAG_RUN);

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_eq(num(&o, "fault_windows"), 1);
    fault_records(&o, "failover", &begin, &end, arg, sizeof arg);
    cr_assert_gt(begin, 0);
    cr_assert(arg_num(arg, "lagged_ms=") >= LAG_US / 1000, "end '%s'", arg);
    cr_assert_eq(enqueued_by(&o, begin + LAG_US) -
                     enqueued_by(&o, begin + LAG_US / 2), 0,
                 "enqueues acknowledged while the replica applied nothing");
    cr_assert_eq(num(&o, "enqueued"), 300);
    cr_assert_eq(num(&o, "lost"), 0, "%lld acknowledged enqueues lost",
                 num(&o, "lost"));
    cr_assert_eq(num(&o, "dup_nofault"), 0);
    cr_assert_eq(recheck(&o), 0);
    expect_nothing_left(&o);
    done(&o);
}

/* A Ctrl-C while the trial runs on its primary, replica and Sentinel:
 * all three stop, and their directories go. */
Test(failover, interrupt_stops_every_server, .timeout = 120)
{
    const char *d = getenv("DQLAB");
    char cmd[1024];
    outcome o;
    pid_t pid;
    int st;

    memset(&o, 0, sizeof o);
    new_dir(&o);
    snprintf(cmd, sizeof cmd, "TMPDIR='%s/tmp' exec '%s' run --quiet "
             "--strategy lua --tasks 2000 --rate 200 --fault failover:8000 "
             ">/dev/null 2>&1", o.dir, d);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* The three servers are up once the trial enqueues: give it 4 s. */
    for (int i = 0; i < 40; i++) {
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    cr_assert(process_under(o.dir), "no server of the trial is running");
    kill(pid, SIGINT);
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 130, "exit status %d", st);
    expect_nothing_left(&o);
    done(&o);
}

/* ---- evict ---------------------------------------------------------------- */

Test(evict, allkeys_lru_losses_are_the_evictions, .timeout = 90)
{
    outcome o = run("--strategy lua --opt poll_ms=10 --consumers 2 "
                    "--tasks 300 --rate 300 --delay-ms 1500:2500 "
                    "--grace-ms 1000 --fault evict:allkeys-lru:500");

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_gt(num(&o, "lost"), 0, "allkeys-lru evicted no queue key");
    cr_assert_eq(num(&o, "lost_nofault"), 0);
    cr_assert_eq((long long)fault_stat(&o, "evict").lost, num(&o, "lost"));
    cr_assert_eq(recheck(&o), 0);
    done(&o);
}

Test(evict, noeviction_refuses_enqueues_and_loses_none, .timeout = 90)
{
    outcome o = run(LEASED "--tasks 600 --rate 400 --delay-ms 1500:2500 "
                    "--grace-ms 1000 --fault evict:noeviction:300");

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_gt(num(&o, "enqueue_refused"), 0);
    cr_assert_eq(num(&o, "enqueued") + num(&o, "enqueue_refused"), 600);
    cr_assert_eq(num(&o, "lost"), 0);
    cr_assert_eq((long long)fault_stat(&o, "evict").refused,
                 num(&o, "enqueue_refused"));
    cr_assert_eq(recheck(&o), 0);
    done(&o);
}

Test(evict, volatile_lru_keeps_keys_without_ttl, .timeout = 90)
{
    outcome o = run(LEASED "--tasks 300 --rate 300 --delay-ms 1500:2500 "
                    "--grace-ms 1000 --fault evict:volatile-lru:500");

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_eq(num(&o, "lost"), 0);
    cr_assert_eq(num(&o, "enqueued") + num(&o, "enqueue_refused"), 300);
    done(&o);
}

/* ---- restart-redis:rdb ----------------------------------------------------- */

Test(restart_redis, rdb_restarts_from_the_last_snapshot, .timeout = 90)
{
    long long begin, end, d0, d1;
    outcome o = run(LEASED "--tasks 800 --rate 200 --delay-ms 3500:4500 "
                    "--grace-ms 1000 --fault restart-redis:rdb:3000");

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert_eq(num(&o, "restarts"), 1);
    cr_assert_eq(span(&o, 'F', &begin, &end), 2);
    cr_assert_gt(span(&o, 'D', &d0, &d1), 0);
    /* Nothing was due before the crash: what was delivered came through
     * it, from the snapshot. */
    cr_assert_gt(d0, end);
    cr_assert_lt(num(&o, "lost"), enqueued_by(&o, begin));
    cr_assert_eq(num(&o, "lost_nofault"), 0);
    fprintf(stderr, "restart-redis:rdb at 200 tasks/s: lost %lld of the %d "
            "acknowledged before the crash\n", num(&o, "lost"),
            enqueued_by(&o, begin));
    done(&o);
}

/* ---- Our servers only ------------------------------------------------------ */

/* A fault that needs dqlab's own servers is refused with --redis: one
 * line, exit 2, before anything runs. */
Test(durability, own_server_faults_refuse_redis, .timeout = 30)
{
    static const char *const specs[] = {"os-crash:always", "failover",
                                        "evict:allkeys-lru",
                                        "restart-redis:rdb", NULL};
    const char *port = getenv("DQ_TEST_REDIS_PORT");

    cr_assert(port != NULL && *port, "DQ_TEST_REDIS_PORT is not set");
    for (size_t i = 0; specs[i] != NULL; i++) {
        char args[512];
        outcome o;
        snprintf(args, sizeof args, "--strategy lua --tasks 10 --redis "
                 "redis://127.0.0.1:%s --fault %s", port, specs[i]);
        o = run(args);
        cr_expect_eq(o.status, 2, "%s: exit %d", specs[i], o.status);
        cr_expect(strstr(o.err, "drop --redis") != NULL &&
                      strchr(o.err, '\n') == strrchr(o.err, '\n'),
                  "%s: stderr '%s'", specs[i], o.err);
        done(&o);
    }
}

/* With --redis, a maxmemory-policy that can evict the queue's keys gets
 * one warning line on stderr; the run goes on (exit 0). */
static dq_redis_server own;
static void own_stop(void)
{
    dq_redis_server_stop(&own);
    remove_dirs();
}

static outcome run_on_own(const char *strategy, const char *policy)
{
    const char *args[] = {"--maxmemory", "100mb", "--maxmemory-policy",
                          policy, NULL};
    dq_redis_server_opts so = {.args = args};
    char err[512], cmd[512];

    cr_assert_eq(dq_redis_server_start(&own, &so, err, sizeof err), 0, "%s",
                 err);
    snprintf(cmd, sizeof cmd, "--strategy %s --tasks 20 --delay-ms 0 "
             "--redis redis://127.0.0.1:%d", strategy, own.port);
    outcome o = run(cmd);
    dq_redis_server_stop(&own);
    return o;
}

Test(durability, redis_policy_that_evicts_warns, .timeout = 60,
     .fini = own_stop)
{
    outcome o = run_on_own("lua", "allkeys-lru");

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert(strstr(o.err, "dqlab run: warning: the server's "
                            "maxmemory-policy allkeys-lru may evict") != NULL,
              "stderr '%s'", o.err);
    cr_assert_eq(strchr(o.err, '\n'), strrchr(o.err, '\n'), "not one line: "
                 "'%s'", o.err);
    done(&o);
    o = run_on_own("expiry", "volatile-lru");
    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert(strstr(o.err, "volatile-lru may evict the queue's keys with "
                            "a TTL") != NULL, "stderr '%s'", o.err);
    done(&o);
}

Test(durability, redis_policy_that_keeps_keys_is_quiet, .timeout = 60,
     .fini = own_stop)
{
    outcome o = run_on_own("lua", "volatile-lru");

    cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
    cr_assert(strstr(o.err, "warning") == NULL, "stderr '%s'", o.err);
    done(&o);
    o = run_on_own("lua", "noeviction");
    cr_assert(strstr(o.err, "warning") == NULL, "stderr '%s'", o.err);
    done(&o);
}

/* ---- Experiment files -------------------------------------------------------- */

/* wait is an option of every Redis strategy in [opts.X]; a wait=1
 * variant runs only with the fault that starts a replica. */
Test(durability, experiment_wait_runs_only_with_a_replica)
{
    char path[] = "/tmp/dqlab-wait-XXXXXX", err[600];
    const char *ini = "[experiment]\nname = w\nstrategies = lua, heap\n"
                      "consumers = 1\ntasks = 10\n"
                      "faults = os-crash:always, failover\n"
                      "[opts.lua]\nwait = 0, 1\n";
    dq_experiment e;
    dq_exp_cell c;
    int fd = mkstemp(path), rc;

    cr_assert_geq(fd, 0);
    rc = write(fd, ini, strlen(ini)) == (ssize_t)strlen(ini);
    close(fd);
    if (!rc)
        unlink(path);
    cr_assert(rc, "write %s", path);
    rc = dq_experiment_load(path, false, &e, err, sizeof err);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", err);
    /* lua wait=0 x 2 faults, lua wait=1 x failover; heap: neither. */
    cr_assert_eq(dq_experiment_ntrials(&e), 3);
    dq_experiment_cell(&e, 2, &c);
    cr_assert_str_eq(c.fault_spec, "failover");
    cr_assert_str_eq(c.params.opts[0].key, "wait");
    cr_assert_str_eq(c.params.opts[0].val, "1");
}

/* Cells of e whose fault is a failover, each checked to lag lag_ms. */
static size_t failover_cells(const dq_experiment *e, long long lag_ms)
{
    dq_exp_cell c;
    size_t n = 0;

    for (size_t i = 0; i < dq_experiment_ntrials(e); i++) {
        dq_experiment_cell(e, i, &c);
        for (size_t k = 0; k < c.params.nfaults; k++) {
            if (strcmp(dq_fault_name(&c.params.faults[k]), "failover") != 0)
                continue;
            cr_expect_eq((long long)c.params.faults[k].ms, lag_ms);
            n++;
        }
    }
    return n;
}

/* The quick form of the durability experiment loads, every cell on a
 * Redis strategy, wait=1 only with failover; the failover's replica lags
 * (300 ms quick, 1000 ms full), or it would lose next to nothing. */
Test(durability, experiment_file_loads)
{
    dq_experiment e;
    dq_exp_cell c;
    char err[600];
    size_t n;

    cr_assert_eq(dq_experiment_load("experiments/durability.ini", true, &e,
                                    err, sizeof err), 0, "%s", err);
    n = dq_experiment_ntrials(&e);
    cr_assert_eq(n, 32);
    for (size_t i = 0; i < n; i++) {
        dq_experiment_cell(&e, i, &c);
        cr_assert(c.params.strategy->flags & DQ_G_NEEDS_REDIS);
        cr_assert_gt(c.params.rate, 0);
    }
    cr_assert_eq(failover_cells(&e, 300), 4 * 2);
    cr_assert_eq(dq_experiment_load("experiments/durability.ini", false, &e,
                                    err, sizeof err), 0, "%s", err);
    cr_assert_eq(dq_experiment_ntrials(&e), 9 * 8 * 3);
    cr_assert_eq(failover_cells(&e, 1000), 9 * 2 * 3);
}

/* ---- The checker: refused enqueues, retried enqueues ------------------------ */

/* Writes text to a temporary file and checks it as a log: dq_check_file's
 * return code, with err. */
static int check_log_text(const char *text, dq_check *c, char *err,
                          size_t errlen)
{
    char path[] = "/tmp/dqlab-log-XXXXXX";
    int fd = mkstemp(path), rc;
    bool ok;

    cr_assert_geq(fd, 0);
    ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    rc = ok ? dq_check_file(path, c, err, errlen) : -2;
    unlink(path);
    cr_assert(ok, "write %s", path);
    return rc;
}

static void check_text(const char *text, dq_check *c)
{
    char err[512];

    cr_assert_eq(check_log_text(text, c, err, sizeof err), 0, "%s", err);
}

Test(checker, refused_enqueues_are_counted_apart)
{
    dq_check c;

    check_text("# dqlab event log v2\n"
               "H\tstrategy\tlua\n"
               "E\t1000000\tt0\t1001\tp0\n"
               "F\t1100000\tevict\tbegin\tpolicy=noeviction\n"
               "N\t1200000\tt1\t1201\tp0\tOOM\n"
               "F\t1300000\tevict\tend\tevicted_keys=0\n"
               "N\t1400000\tt2\t1401\tp0\tOOM\n"
               "D\t1500000\tt0\tc0\t1\n"
               "A\t1500100\tt0\tc0\t1\n"
               "Z\t1600000\tclean\n", &c);
    cr_assert_eq(c.enqueued, 1);
    cr_assert_eq(c.enqueue_refused, 2);
    cr_assert_eq(c.lost, 0);
    cr_assert_eq(c.unknown, 0);
    cr_assert_eq(c.nfaults, 1);
    cr_assert_eq(c.faults[0].refused, 1, "only t1 fell in the window");
}

Test(checker, refused_record_shape_is_checked)
{
    char err[512];
    dq_check c;

    cr_assert_eq(check_log_text("# dqlab event log v2\nN\t1\tt1\t2\tp0\n",
                                &c, err, sizeof err), -1);
    cr_assert(strstr(err, ":2: N record needs 6 fields") != NULL, "%s", err);
}

/* A producer retried an enqueue it had not seen acknowledged (the
 * failover's window), the task was delivered and acked meanwhile, and
 * the retry added it again: a duplicate the failover explains. */
Test(checker, a_retried_enqueue_duplicate_is_the_faults)
{
    dq_check c;

    check_text("# dqlab event log v2\n"
               "H\tstrategy\tlua-lease\n"
               "F\t1000000\tfailover\tbegin\twait=1\n"
               "F\t2000000\tfailover\tend\tpromotion_ms=900\n"
               "D\t2100000\tt0\tc0\t1\n"
               "A\t2100100\tt0\tc0\t1\n"
               "E\t2500000\tt0\t1500\tp0\n"
               "D\t3000000\tt0\tc0\t1\n"
               "A\t3000100\tt0\tc0\t1\n"
               "Z\t3100000\tclean\n", &c);
    cr_assert_eq(c.duplicates, 1);
    cr_assert_eq(c.dup_nofault, 0);
    cr_assert_eq(c.dup_fault, 1);
    cr_assert_eq(c.faults[0].dup_fault, 1);
}

/* The same log shape after the E record: no retry, a duplicate no fault
 * explains. */
Test(checker, a_duplicate_after_the_acknowledgement_is_not)
{
    dq_check c;

    check_text("# dqlab event log v2\n"
               "H\tstrategy\tlua-lease\n"
               "F\t1000000\tfailover\tbegin\twait=1\n"
               "F\t2000000\tfailover\tend\tpromotion_ms=900\n"
               "E\t2050000\tt0\t1500\tp0\n"
               "D\t2100000\tt0\tc0\t1\n"
               "A\t2100100\tt0\tc0\t1\n"
               "D\t3000000\tt0\tc0\t1\n"
               "A\t3000100\tt0\tc0\t1\n"
               "Z\t3100000\tclean\n", &c);
    cr_assert_eq(c.dup_nofault, 1);
}
