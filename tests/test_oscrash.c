/* test_oscrash.c -- the simulated host crash (harness/oscrash.h and the
 * AOF shim harness/aofshim.c) where the outcome is certain.
 *
 * Each Redis test starts its own private redis-server with the shim
 * preloaded (a crash must own the server; tests run in parallel), so none
 * uses DQ_TEST_REDIS_PORT.  The shim is found next to the test binary
 * (build/<variant>/libdqaofshim.so, built by `make test-build`) or through
 * $DQ_AOFSHIM.  The workload is one client that RPUSHes 0, 1, 2, ... to
 * one list and waits for each reply, so what survives a crash must be a
 * prefix 0..m-1 of it (Redis appends to its AOF in command order and the
 * crash keeps a prefix of each file), and m counts the survivors.
 *
 * What each test relies on:
 *   - the model alone (no Redis): a tail past the last fsync is cut, an
 *     entry created after the directory's last fsync is removed, renames
 *     and unlinks after it are undone;
 *   - appendfsync always: Redis writes and fdatasyncs the AOF before it
 *     sends the replies of that event-loop iteration ("a single write and
 *     a single fsync (before sending the replies)",
 *     https://redis.io/docs/management/persistence/), so every
 *     acknowledged write survives, also across an AOF rewrite;
 *   - appendfsync everysec: src/aof.c (flushAppendOnlyFile) starts a
 *     background fdatasync when the wall-clock second changes, skips it
 *     while the previous one still runs, and postpones the write itself
 *     while an fsync runs, "but we can't wait over two seconds".  So a
 *     write acknowledged more than 2 s before the crash is durable; the
 *     test allows EVERYSEC_SLACK_MS on top for the serverCron tick
 *     (100 ms at hz 10) and thread scheduling on a shared machine.  It
 *     prints the measured loss, usually non-zero, and does not assert it;
 *   - a clean SHUTDOWN flushes and fsyncs the AOF (prepareForShutdown), so
 *     the crash model then drops nothing and the restart keeps every write:
 *     the shim changes nothing without a crash, and its bookkeeping misses
 *     no fsync Redis makes.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/oscrash.h"
#include "../harness/spawn.h"
#include "../strategies/dq.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define KEY "oscrash:list"
/* Redis's own bound for everysec (aof.c) and the slack on top. */
#define EVERYSEC_BOUND_MS 2000
#define EVERYSEC_SLACK_MS 1000
#define RATE_PER_S 2000
#define RUN_S 5

/* The test's server, stopped by the suite's .fini even after a failed
 * assertion (Criterion runs .fini after the test body returns or aborts). */
static dq_redis_server g_srv;
static char g_tmp[256];

static void rm_rf(const char *dir)
{
    char cmd[400];
    if (dir[0] == '\0')
        return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_oscrash: could not remove %s\n", dir);
}

static void cleanup(void)
{
    dq_redis_server_stop(&g_srv);
    rm_rf(g_tmp);
    g_tmp[0] = '\0';
}

TestSuite(oscrash, .fini = cleanup, .timeout = 90);

static void start(const char *mode)
{
    char err[512] = "";
    cr_assert_eq(dq_oscrash_server_start(&g_srv, mode, err, sizeof err), 0,
                 "starting redis-server with the AOF shim: %s", err);
    cr_assert(dq_oscrash_armed(&g_srv));
}

static redisContext *conn(void)
{
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", g_srv.port, tv);
    cr_assert(c != NULL && c->err == 0, "connect to port %d: %s",
              g_srv.port, c ? c->errstr : "out of memory");
    redisSetTimeout(c, tv);
    return c;
}

/* RPUSH KEY i, waiting for the reply. */
static void push(redisContext *c, long i)
{
    redisReply *r = redisCommand(c, "RPUSH " KEY " %ld", i);
    cr_assert(r != NULL, "RPUSH %ld: %s", i, c->errstr);
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER, "RPUSH %ld: %s", i,
                 r->type == REDIS_REPLY_ERROR ? r->str : "not an integer");
    cr_assert_eq(r->integer, i + 1, "RPUSH %ld returned length %lld", i,
                 r->integer);
    freeReplyObject(r);
}

/* The list's length, after checking that it is exactly 0, 1, ..., m-1. */
static long survivors(redisContext *c)
{
    redisReply *r = redisCommand(c, "LRANGE " KEY " 0 -1");
    long m;

    cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY, "LRANGE: %s",
              r && r->type == REDIS_REPLY_ERROR ? r->str : c->errstr);
    m = (long)r->elements;
    for (long i = 0; i < m; i++)
        cr_assert_eq(strtol(r->element[i]->str, NULL, 10), i,
                     "element %ld is %s: the survivors are not a prefix", i,
                     r->element[i]->str);
    freeReplyObject(r);
    return m;
}

static void cmd_ok(redisContext *c, const char *cmd)
{
    redisReply *r = redisCommand(c, cmd);
    cr_assert(r != NULL && r->type != REDIS_REPLY_ERROR, "%s: %s", cmd,
              r ? r->str : c->errstr);
    freeReplyObject(r);
}

/* BGREWRITEAOF, then wait until the rewrite and its manifest update are
 * done (aof_rewrite_in_progress is cleared after the done handler). */
static void rewrite_aof(redisContext *c)
{
    int64_t deadline = dq_mono_us() + 20000000;
    cmd_ok(c, "BGREWRITEAOF");
    for (;;) {
        redisReply *r = redisCommand(c, "INFO persistence");
        bool done;
        cr_assert(r != NULL && r->type == REDIS_REPLY_STRING);
        done = strstr(r->str, "aof_rewrite_in_progress:0") != NULL &&
               strstr(r->str, "aof_rewrite_scheduled:0") != NULL;
        freeReplyObject(r);
        if (done)
            return;
        cr_assert_lt(dq_mono_us(), deadline, "AOF rewrite took over 20 s");
        dq_sleep_us(10000);
    }
}

static void crash(const char *mode, dq_oscrash_stats *st)
{
    char err[512] = "";
    cr_assert_eq(dq_oscrash_crash(&g_srv, mode, st, err, sizeof err), 0,
                 "os-crash: %s", err);
}

/* ---- The model alone ---------------------------------------------------- */

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

static uint64_t ino_of(const char *dir, const char *name)
{
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(stat(path, &sb), 0, "stat %s", path);
    return (uint64_t)sb.st_ino;
}

/* The content of dir/name, or "(none)". */
static const char *get(const char *dir, const char *name, char *buf,
                       size_t len)
{
    char path[512];
    FILE *f;
    size_t n;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "r");
    if (f == NULL)
        return "(none)";
    n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void make_tmp(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(g_tmp, sizeof g_tmp, "%s/dqlab-oscrash-XXXXXX",
             t && *t && strlen(t) < 150 ? t : "/tmp");
    cr_assert_not_null(mkdtemp(g_tmp));
}

/* A directory state as the shim would have recorded it, then the moves
 * Redis could make after the directory's last fsync. */
Test(oscrash, model_undoes_what_was_not_durable)
{
    char aof[400], keep[400], logp[400], buf[64], rec[2048];
    uint64_t im, ii, io, ig, ir, in;
    dq_oscrash_stats st = {0};
    char err[512] = "";
    FILE *f;

    make_tmp();
    snprintf(aof, sizeof aof, "%s/appendonlydir", g_tmp);
    snprintf(keep, sizeof keep, "%s/aofshim-keep", g_tmp);
    snprintf(logp, sizeof logp, "%s/aofshim.log", g_tmp);
    cr_assert_eq(mkdir(aof, 0755), 0);
    cr_assert_eq(mkdir(keep, 0755), 0);
    put(aof, "m", "0123456789");   /* fsynced at 5 bytes */
    put(aof, "inc", "0123456789"); /* never fsynced */
    put(aof, "old", "old-old-ok");  /* fsynced whole, renamed later */
    put(aof, "gone", "gone-ok---"); /* fsynced whole, unlinked later */
    put(aof, "rep", "rep-ok----");  /* fsynced whole, renamed over later */
    im = ino_of(aof, "m");
    ii = ino_of(aof, "inc");
    io = ino_of(aof, "old");
    ig = ino_of(aof, "gone");
    ir = ino_of(aof, "rep");
    snprintf(rec, sizeof rec,
             "S\t%" PRIu64 "\t5\t/x/m\n"
             "S\t%" PRIu64 "\t10\t/x/old\n"
             "S\t%" PRIu64 "\t10\t/x/gone\n"
             "S\t%" PRIu64 "\t10\t/x/rep\n"
             "D\t%" PRIu64 ":m\t%" PRIu64 ":inc\t%" PRIu64 ":old\t%" PRIu64
             ":gone\t%" PRIu64 ":rep\n",
             im, io, ig, ir, im, ii, io, ig, ir);
    f = fopen(logp, "w");
    cr_assert_not_null(f);
    fputs(rec, f);
    fputs("S\t999\t7", f); /* a record cut short by the SIGKILL: ignored */
    cr_assert_eq(fclose(f), 0);

    /* After the directory's last fsync: */
    {
        char from[512], to[512], kg[512], kr[512], g[512], r[512];
        snprintf(from, sizeof from, "%s/old", aof);
        snprintf(to, sizeof to, "%s/moved", aof);
        cr_assert_eq(rename(from, to), 0);              /* rename old */
        snprintf(g, sizeof g, "%s/gone", aof);
        snprintf(kg, sizeof kg, "%s/%" PRIu64, keep, ig);
        cr_assert_eq(link(g, kg), 0);                   /* as the shim */
        cr_assert_eq(unlink(g), 0);                     /* unlink gone */
        snprintf(r, sizeof r, "%s/rep", aof);
        snprintf(kr, sizeof kr, "%s/%" PRIu64, keep, ir);
        cr_assert_eq(link(r, kr), 0);
        put(aof, "tmp", "new-rep---");
        in = ino_of(aof, "tmp");
        snprintf(to, sizeof to, "%s/tmp", aof);
        cr_assert_eq(rename(to, r), 0);                 /* tmp over rep */
        put(aof, "new", "0123456789");                  /* created */
    }
    cr_assert_neq(in, ir);

    cr_assert_eq(dq_oscrash_apply(g_tmp, &st, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(get(aof, "m", buf, sizeof buf), "01234");
    cr_assert_str_eq(get(aof, "inc", buf, sizeof buf), "");
    cr_assert_str_eq(get(aof, "old", buf, sizeof buf), "old-old-ok");
    cr_assert_str_eq(get(aof, "gone", buf, sizeof buf), "gone-ok---");
    cr_assert_str_eq(get(aof, "rep", buf, sizeof buf), "rep-ok----");
    cr_assert_str_eq(get(aof, "moved", buf, sizeof buf), "(none)");
    cr_assert_str_eq(get(aof, "new", buf, sizeof buf), "(none)");
    cr_assert_eq(access(keep, F_OK), -1, "the keep directory is removed");
    /* 5 + 10 bytes of tails, 10 of "new", 10 of the replacing "rep". */
    cr_assert_eq(st.bytes_dropped, 35);
    cr_assert_eq(st.files_truncated, 2);
    cr_assert_eq(st.names_removed, 2);
    cr_assert_eq(st.names_restored, 3);
    cr_assert_eq(st.names_missing, 0);

    /* The bookkeeping now says all of it is durable: a second crash with
     * nothing written in between drops nothing. */
    memset(&st, 0, sizeof st);
    cr_assert_eq(dq_oscrash_apply(g_tmp, &st, err, sizeof err), 0, "%s", err);
    cr_assert_eq(st.bytes_dropped, 0);
    cr_assert_eq(st.names_removed + st.names_restored + st.files_truncated,
                 0);
}

/* Files in the AOF directory and no bookkeeping: the server ran without
 * the shim, and cutting everything to nothing would be a false loss. */
Test(oscrash, apply_refuses_without_bookkeeping)
{
    char aof[400], err[512] = "", buf[16];
    dq_oscrash_stats st = {0};

    make_tmp();
    snprintf(aof, sizeof aof, "%s/appendonlydir", g_tmp);
    cr_assert_eq(mkdir(aof, 0755), 0);
    put(aof, "appendonly.aof.1.incr.aof", "data");
    cr_assert_eq(dq_oscrash_apply(g_tmp, &st, err, sizeof err), -1);
    cr_assert(strstr(err, "no AOF shim bookkeeping") != NULL, "%s", err);
    cr_assert_str_eq(get(aof, "appendonly.aof.1.incr.aof", buf, sizeof buf),
                     "data");
}

/* ---- With redis-server -------------------------------------------------- */

Test(oscrash, always_keeps_every_acknowledged_write)
{
    const long n = 2000;
    dq_oscrash_stats st;
    redisContext *c;
    long m;

    start("always");
    c = conn();
    for (long i = 0; i < n / 2; i++)
        push(c, i);
    rewrite_aof(c); /* base, incr and manifest renames and unlinks */
    for (long i = n / 2; i < n; i++)
        push(c, i);
    redisFree(c);
    crash("always", &st);
    c = conn();
    m = survivors(c);
    redisFree(c);
    fprintf(stderr, "oscrash always: %ld acknowledged, %ld survived, lost "
            "%ld; %" PRId64 " AOF bytes dropped; down %" PRId64 " ms\n",
            n, m, n - m, st.bytes_dropped,
            (st.up_us - st.kill_us) / 1000);
    cr_assert_eq(m, n, "appendfsync always lost %ld acknowledged writes",
                 n - m);
    /* Idle at the crash: every byte was fsynced before its reply. */
    cr_assert_eq(st.bytes_dropped, 0);
    cr_assert_eq(st.names_removed + st.names_restored + st.names_missing, 0);
}

Test(oscrash, everysec_loses_at_most_two_seconds)
{
    const long n = (long)RATE_PER_S * RUN_S;
    int64_t *ack = calloc((size_t)n, sizeof *ack);
    int64_t t0, lost_ms = 0;
    dq_oscrash_stats st;
    redisContext *c;
    long m;

    cr_assert_not_null(ack);
    start("everysec");
    c = conn();
    t0 = dq_mono_us();
    for (long i = 0; i < n; i++) {
        int64_t slot = t0 + i * 1000000LL / RATE_PER_S;
        int64_t now = dq_mono_us();
        if (now < slot)
            dq_sleep_us(slot - now);
        push(c, i);
        ack[i] = dq_mono_us();
    }
    redisFree(c);
    crash("everysec", &st);
    c = conn();
    m = survivors(c);
    redisFree(c);
    cr_assert_leq(m, n);
    if (m < n)
        lost_ms = (st.kill_us - ack[m]) / 1000;
    fprintf(stderr, "oscrash everysec: %ld acknowledged in %.2f s, %ld "
            "survived, lost %ld (acknowledged in the last %" PRId64 " ms "
            "before the crash); %" PRId64 " AOF bytes dropped; down %"
            PRId64 " ms\n", n, (double)(ack[n - 1] - t0) / 1e6, m, n - m,
            lost_ms, st.bytes_dropped, (st.up_us - st.kill_us) / 1000);
    if (m < n) {
        cr_assert_gt(st.bytes_dropped, 0, "writes lost, no byte dropped");
        cr_assert_leq(lost_ms, EVERYSEC_BOUND_MS + EVERYSEC_SLACK_MS,
                      "write %ld was acknowledged %" PRId64 " ms before the "
                      "crash and lost: over everysec's %d ms bound",
                      m, lost_ms, EVERYSEC_BOUND_MS);
    }
    free(ack);
}

Test(oscrash, clean_shutdown_keeps_everything)
{
    const long n = 3000;
    dq_oscrash_stats st = {0};
    char err[512] = "";
    redisReply *r;
    redisContext *c;
    int status;
    long m;

    start("everysec");
    c = conn();
    for (long i = 0; i < n / 2; i++)
        push(c, i);
    rewrite_aof(c);
    for (long i = n / 2; i < n; i++)
        push(c, i);
    r = redisCommand(c, "SHUTDOWN"); /* no reply: the server exits */
    if (r != NULL)
        freeReplyObject(r);
    redisFree(c);
    cr_assert_eq(dq_spawn_reap(g_srv.pid, &status, true), g_srv.pid);
    g_srv.pid = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "redis-server did not exit cleanly on SHUTDOWN (status %d)",
              status);

    cr_assert_eq(dq_oscrash_apply(g_srv.dir, &st, err, sizeof err), 0, "%s",
                 err);
    cr_assert_eq(st.bytes_dropped, 0, "a clean shutdown left %" PRId64
                 " bytes not fsynced", st.bytes_dropped);
    cr_assert_eq(st.files_truncated + st.names_removed + st.names_restored +
                 st.names_missing, 0);
    cr_assert_eq(dq_redis_server_restart(&g_srv, "everysec", err,
                                         sizeof err), 0, "%s", err);
    c = conn();
    m = survivors(c);
    redisFree(c);
    cr_assert_eq(m, n, "a clean restart kept %ld of %ld writes", m, n);
}
