/* bench_util.c -- the helpers of bench_int.h that every part of the bench
 * and its targets table use: which strategies were asked for, a median,
 * progress lines, unit errors and skips, queue names, handle configs, the
 * server's CPU.  They sit in a file of their own, below bench.c (which
 * calls the parts) and bench_targets.c (which bench.c calls), so that no
 * part reaches back up to the file that runs it.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <hiredis/hiredis.h>

#include "../strategies/dq.h"
#include "../strategies/rconn.h"
#include "bench.h"
#include "bench_int.h"
#include "redis_server.h"
#include "redis_url.h"
#include "runmeta.h"
#include "signals.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* The payload of every bench task (16 bytes). */
const char dq_bench_payload[DQ_BENCH_PAYLOAD_BYTES + 1] = "dqlab-bench-pay.";

bool dq_bench_selected(const dq_bench *b, const dq_strategy *s)
{
    if (b->o->nstrategies == 0)
        return true;
    for (size_t i = 0; i < b->o->nstrategies; i++)
        if (b->o->strategies[i] == s)
            return true;
    return false;
}

/* ---- Helpers for the parts (bench_int.h) ------------------------------- */

bool dq_bench_stop(void)
{
    return dq_signals_caught();
}

void dq_bench_unit_error(dq_bench *b, const char *what, const char *msg)
{
    b->errors++;
    if (b->first_error[0] == '\0')
        snprintf(b->first_error, sizeof b->first_error, "%s: %s", what, msg);
    fprintf(stderr, "dqlab bench: %s: %s (skipped)\n", what, msg);
}

void dq_bench_skip(dq_bench *b, const char *part, const dq_strategy *s,
                   const char *why)
{
    size_t off = strlen(b->skipped);

    dq_bench_say(b, "%s: %s not run: %s", part, s->name, why);
    snprintf(b->skipped + off, sizeof b->skipped - off, "%s%s %s (%s)",
             off ? "; " : "", part, s->name, why);
}

void dq_bench_say(const dq_bench *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "dqlab bench [%4.0f s]: %s\n",
            (double)(dq_mono_us() - b->t0_us) / 1e6, line);
}

void dq_bench_queue_name(dq_bench *b, const char *part, char *buf,
                         size_t len)
{
    snprintf(buf, len, "bench-%s-%d-%ld", part, ++b->unit, (long)getpid());
}

void dq_bench_config(const dq_bench *b, dq_config *cfg, const char *queue,
                     dq_local *local, const char *who)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->queue = queue;
    cfg->redis_host = b->redis->host;
    cfg->redis_port = b->redis->port;
    cfg->redis_user = b->redis->user[0] ? b->redis->user : NULL;
    cfg->redis_password = b->redis->password[0] ? b->redis->password : NULL;
    cfg->redis_db = b->redis->db;
    cfg->local = local;
    cfg->consumer = who;
}

void *dq_bench_grow(void **arr, size_t *n, size_t sz)
{
    char *na = realloc(*arr, (*n + 1) * sz);

    if (na == NULL)
        return NULL;
    *arr = na;
    memset(na + *n * sz, 0, sz);
    return na + (*n)++ * sz;
}

int64_t dq_bench_redis_cpu_us(const dq_bench *b)
{
    dq_queue q;
    redisContext *c = NULL;
    redisReply *r;
    int64_t us = -1;
    int rc;

    memset(&q, 0, sizeof q);
    dq_bench_config(b, &q.cfg, "bench", NULL, "bench-admin");
    if (dq_redis_connect(&q, NULL, 5000, &c) != DQ_OK)
        return -1;
    r = dq_redis_cmdf(&q, c, &rc, "INFO cpu");
    if (r != NULL && r->type == REDIS_REPLY_STRING) {
        const char *s = strstr(r->str, "used_cpu_sys:");
        const char *u = strstr(r->str, "used_cpu_user:");
        if (s != NULL && u != NULL)
            us = (int64_t)((strtod(s + 13, NULL) + strtod(u + 14, NULL)) *
                           1e6);
    }
    if (r != NULL)
        freeReplyObject(r);
    redisFree(c);
    return us;
}
