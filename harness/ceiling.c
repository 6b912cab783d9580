/* ceiling.c -- the pipelined ZADD / ZPOPMIN ceiling of a Redis server, and
 * redis-benchmark's view of the same (ceiling.h).
 *
 * Why measure it ourselves: a strategy's tasks/s alone says little (a
 * faster machine, a busier one), while a fraction of what the same server
 * does for the bare command in the same run is comparable across machines.
 * dqlab's own loop goes through hiredis like the strategies do, so it
 * counts the client's formatting and parsing as they pay it;
 * redis-benchmark (C, its own event loop) shows what the server alone does.
 *
 * The connection is made by dq_redis_connect (rconn.h) on a bare handle, so
 * AUTH, SELECT and the error messages are the strategies' own.  Commands
 * are then sent with redisAppendCommandArgv and read with redisGetReply:
 * one write per pipeline, replies in order
 * (https://redis.io/docs/manual/pipelining/).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../strategies/rconn.h"
#include "ceiling.h"

/* Sends the n commands of argv/lens (each argc arguments) in one pipeline
 * and reads n replies; checks each with check(reply) when given.  Returns
 * 0 or -1 with err. */
static int pipeline_run(redisContext *c, int n, int argc, const char **argv,
                        const size_t *lens, size_t stride, const char *what,
                        int (*check)(const redisReply *), char *err,
                        size_t errlen)
{
    for (int i = 0; i < n; i++)
        if (redisAppendCommandArgv(c, argc, argv + (size_t)i * stride,
                                   lens + (size_t)i * stride) != REDIS_OK) {
            snprintf(err, errlen, "%s: %s", what, c->errstr);
            return -1;
        }
    for (int i = 0; i < n; i++) {
        void *rv = NULL;
        if (redisGetReply(c, &rv) != REDIS_OK || rv == NULL) {
            snprintf(err, errlen, "%s: %s", what,
                     c->errstr[0] ? c->errstr : "no reply");
            return -1;
        }
        redisReply *r = rv;
        int bad = r->type == REDIS_REPLY_ERROR ? 1 : check ? check(r) : 0;
        if (bad) {
            snprintf(err, errlen, "%s: %s", what,
                     r->type == REDIS_REPLY_ERROR ? r->str
                                                  : "unexpected reply");
            freeReplyObject(r);
            return -1;
        }
        freeReplyObject(r);
    }
    return 0;
}

/* ZPOPMIN key -> [member, score]; an empty array means the set ran dry. */
static int check_popped(const redisReply *r)
{
    return !(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
}

int dq_ceiling_measure(const dq_redis_target *t, int64_t members,
                       int pipeline, dq_ceiling *out, char *err,
                       size_t errlen)
{
    int ret = -1;
    redisContext *c = NULL;
    dq_queue q;
    char key[160];
    char (*buf)[2][24] = NULL;
    const char **argv = NULL;
    size_t *lens = NULL;

    memset(out, 0, sizeof *out);
    if (members < 1 || pipeline < 1 || pipeline > 100000) {
        snprintf(err, errlen, "ceiling: members %" PRId64 " / pipeline %d "
                 "out of range", members, pipeline);
        return -1;
    }
    memset(&q, 0, sizeof q);
    snprintf(q.queue, sizeof q.queue, "bench-ceiling-%ld", (long)getpid());
    q.cfg.queue = q.queue;
    q.cfg.redis_host = t->host;
    q.cfg.redis_port = t->port;
    q.cfg.redis_user = t->user[0] ? t->user : NULL;
    q.cfg.redis_password = t->password[0] ? t->password : NULL;
    q.cfg.redis_db = t->db;
    if (dq_redis_connect(&q, NULL, 30000, &c) != DQ_OK) {
        snprintf(err, errlen, "ceiling: %s", q.err);
        return -1;
    }
    dq_redis_key(&q, DQ_ZH_ZSET, key, sizeof key);
    buf = calloc((size_t)pipeline, sizeof *buf);
    argv = calloc((size_t)pipeline * 4, sizeof *argv);
    lens = calloc((size_t)pipeline * 4, sizeof *lens);
    if (buf == NULL || argv == NULL || lens == NULL) {
        snprintf(err, errlen, "ceiling: out of memory");
        goto done;
    }
    freeReplyObject(redisCommand(c, "DEL %s", key));

    /* ZADD key <i> m<i>, pipelines of `pipeline`. */
    int64_t t0 = dq_mono_us();
    for (int64_t i = 0; i < members; i += pipeline) {
        int n = (int)(members - i < pipeline ? members - i : pipeline);
        for (int k = 0; k < n; k++) {
            const char **a = argv + (size_t)k * 4;
            size_t *l = lens + (size_t)k * 4;
            int sl = snprintf(buf[k][0], sizeof buf[k][0], "%" PRId64, i + k);
            int ml = snprintf(buf[k][1], sizeof buf[k][1], "m%" PRId64, i + k);
            a[0] = "ZADD", l[0] = 4;
            a[1] = key, l[1] = strlen(key);
            a[2] = buf[k][0], l[2] = (size_t)sl;
            a[3] = buf[k][1], l[3] = (size_t)ml;
        }
        if (pipeline_run(c, n, 4, argv, lens, 4, "ceiling ZADD", NULL, err,
                         errlen) != 0)
            goto done;
    }
    int64_t t1 = dq_mono_us();

    /* ZPOPMIN key (count 1), as many times. */
    for (int k = 0; k < pipeline; k++) {
        argv[(size_t)k * 4] = "ZPOPMIN", lens[(size_t)k * 4] = 7;
        argv[(size_t)k * 4 + 1] = key, lens[(size_t)k * 4 + 1] = strlen(key);
    }
    for (int64_t i = 0; i < members; i += pipeline) {
        int n = (int)(members - i < pipeline ? members - i : pipeline);
        if (pipeline_run(c, n, 2, argv, lens, 4, "ceiling ZPOPMIN",
                         check_popped, err, errlen) != 0)
            goto done;
    }
    int64_t t2 = dq_mono_us();

    out->members = members;
    out->pipeline = pipeline;
    out->zadd_s = (double)(t1 - t0) / 1e6;
    out->zpopmin_s = (double)(t2 - t1) / 1e6;
    out->zadd_per_s = out->zadd_s > 0 ? (double)members / out->zadd_s : 0;
    out->zpopmin_per_s = out->zpopmin_s > 0
                             ? (double)members / out->zpopmin_s : 0;
    ret = 0;
done:
    if (c != NULL) {
        if (c->err == 0)
            freeReplyObject(redisCommand(c, "DEL %s", key));
        redisFree(c);
    }
    free(buf);
    free(argv);
    free(lens);
    return ret;
}

/* The rps of test `name` in redis-benchmark's --csv output line, e.g.
 * "ZADD","123456.79","0.3",...; -1 when the line is another test. */
static double csv_rps(const char *line, const char *name)
{
    char want[64];
    snprintf(want, sizeof want, "\"%s\",\"", name);
    if (strncmp(line, want, strlen(want)) != 0)
        return -1;
    return strtod(line + strlen(want), NULL);
}

int dq_ceiling_redis_benchmark(const char *host, int port, int64_t requests,
                               int pipeline, double *zadd_rps,
                               double *zpopmin_rps, char *err,
                               size_t errlen)
{
    *zadd_rps = *zpopmin_rps = -1;
    char p[16], n[32], pl[16];
    snprintf(p, sizeof p, "%d", port);
    snprintf(n, sizeof n, "%" PRId64, requests);
    snprintf(pl, sizeof pl, "%d", pipeline);
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execlp("redis-benchmark", "redis-benchmark", "-h", host, "-p", p,
               "-n", n, "-P", pl, "-r", "100000", "-t", "zadd,zpopmin",
               "--csv", "-q", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        double v;
        if ((v = csv_rps(line, "ZADD")) >= 0)
            *zadd_rps = v;
        else if ((v = csv_rps(line, "ZPOPMIN")) >= 0)
            *zpopmin_rps = v;
    }
    if (f != NULL)
        fclose(f);
    else
        close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "waitpid: %s", strerror(errno));
            return -1;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        *zadd_rps = *zpopmin_rps = -1;
        return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || *zadd_rps < 0) {
        snprintf(err, errlen, "redis-benchmark -t zadd,zpopmin failed "
                 "(status %d) or printed no ZADD figure", status);
        return -1;
    }
    return 0;
}
