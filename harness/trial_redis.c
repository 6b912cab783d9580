/* trial_redis.c -- the trial's own connection to Redis (trial_int.h).
 *
 * A bare dq_queue handle (no strategy opened on it) carries the rconn.h
 * helpers, so that an unreachable server, a wrong password or a server too
 * old for the strategy read exactly as the strategies say them.  With it
 * the trial refuses a queue whose keys dq:{queue}:* already exist (unless
 * fresh), reads the server's version, and measures what the server did:
 *
 * redis_commands is the delta of the summed `calls=` of INFO commandstats
 * (https://redis.io/commands/info/) minus the delta of cmdstat_info (our
 * own INFO calls); on a shared server it includes other clients' commands.
 * redis_cpu_us is the delta of INFO cpu used_cpu_sys + used_cpu_user (the
 * whole server process) between the same two snapshots.  rtt_ms is one
 * round trip to this server in this trial: the median of the ECHOs the
 * trial's connection sends while the consumers work (trial.c: only in a
 * trial with tasks and no fault, so the load is the trial's own; ECHO
 * calls are left out of redis_commands like INFO's), else of a few PINGs
 * sent before the first snapshot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "../strategies/rconn.h"
#include "runmeta.h"
#include "trial_int.h"

/* The server's version from INFO server into version ("" when unknown). */
static void server_version(dq_queue *admin, redisContext *c, char *version,
                           size_t vlen)
{
    const char *argv[2] = {"INFO", "server"};
    int rc;
    redisReply *rep = dq_redis_cmd(admin, c, &rc, 2, argv, NULL);

    if (rep != NULL && rep->type == REDIS_REPLY_STRING)
        dq_runmeta_redis_version(rep->str, version, vlen);
    if (rep != NULL)
        freeReplyObject(rep);
}

int dq_trial_redis_open(dq_queue *admin, const dq_trial_params *p,
                        const dq_config *cfg, redisContext **c,
                        char *version, size_t vlen, char *err, size_t errlen)
{
    int rc;

    admin->s = p->strategy;
    snprintf(admin->queue, sizeof admin->queue, "%s", cfg->queue);
    admin->cfg = *cfg;
    admin->cfg.queue = admin->queue;
    admin->cfg.consumer = "dqlab-admin";
    if (dq_redis_connect(admin, p->strategy->min_redis, 10000, c) != DQ_OK)
        goto fail;
    server_version(admin, *c, version, vlen);
    rc = dq_redis_exists(admin, *c);
    if (rc < 0)
        goto fail;
    if (rc == 1 && !p->fresh) {
        snprintf(err, errlen, "queue '%s' already has keys in Redis "
                 "(dq:{%s}:*); pass --fresh to delete them or choose "
                 "another queue", admin->queue, admin->queue);
        return -1;
    }
    if (rc == 1 && dq_redis_purge(admin, *c) != DQ_OK)
        goto fail;
    return 0;
fail:
    snprintf(err, errlen, "%s", admin->err);
    return -1;
}

/* Sum of calls= over INFO commandstats, and our own: cmdstat_info's and
 * cmdstat_echo's (the round-trip probe; no strategy sends ECHO). */
static int commandstats(dq_queue *q, redisContext *c, int64_t *total,
                        int64_t *info)
{
    const char *argv[2] = {"INFO", "commandstats"};
    redisReply *r;
    int rc;

    *total = *info = 0;
    r = dq_redis_cmd(q, c, &rc, 2, argv, NULL);
    if (r == NULL)
        return rc;
    if (r->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "INFO commandstats: not a string");
    }
    for (const char *s = r->str; (s = strstr(s, "cmdstat_")) != NULL; s++) {
        const char *calls = strstr(s, ":calls=");
        const char *eol = strchr(s, '\n');
        long long n;

        if (calls == NULL || (eol != NULL && calls > eol))
            continue;
        n = strtoll(calls + 7, NULL, 10);
        *total += n;
        if (strncmp(s, "cmdstat_info:", 13) == 0 ||
            strncmp(s, "cmdstat_echo:", 13) == 0)
            *info += n;
    }
    freeReplyObject(r);
    return DQ_OK;
}

/* used_cpu_sys + used_cpu_user of INFO cpu, in microseconds. */
static int server_cpu(dq_queue *q, redisContext *c, int64_t *us)
{
    const char *argv[2] = {"INFO", "cpu"};
    const char *keys[2] = {"used_cpu_sys:", "used_cpu_user:"};
    redisReply *r;
    int rc;

    *us = 0;
    r = dq_redis_cmd(q, c, &rc, 2, argv, NULL);
    if (r == NULL)
        return rc;
    if (r->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return dq_fail(q, DQ_EPROTO, "INFO cpu: not a string");
    }
    for (int i = 0; i < 2; i++) {
        const char *v = strstr(r->str, keys[i]);
        if (v == NULL) {
            freeReplyObject(r);
            return dq_fail(q, DQ_EPROTO, "INFO cpu: no %s", keys[i]);
        }
        *us += (int64_t)(strtod(v + strlen(keys[i]), NULL) * 1e6 + 0.5);
    }
    freeReplyObject(r);
    return DQ_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int dq_trial_redis_echo(dq_queue *admin, redisContext *c, int64_t *us)
{
    const char *argv[2] = {"ECHO", "rtt"};
    int rc;
    int64_t t0 = dq_mono_us();
    redisReply *rep = dq_redis_cmd(admin, c, &rc, 2, argv, NULL);
    if (rep == NULL)
        return rc;
    freeReplyObject(rep);
    *us = dq_mono_us() - t0;
    return DQ_OK;
}

double dq_trial_rtt_median(int64_t *us, size_t n)
{
    if (n == 0)
        return -1;
    qsort(us, n, sizeof us[0], cmp_i64);
    return (double)us[n / 2] / 1000.0;
}

void dq_trial_redis_rtt(dq_queue *admin, redisContext *c, double *rtt_ms)
{
    const char *argv[1] = {"PING"};
    int64_t us[DQ_TRIAL_RTT_PINGS];
    int rc;

    *rtt_ms = -1;
    for (int i = 0; i < DQ_TRIAL_RTT_PINGS; i++) {
        int64_t t0 = dq_mono_us();
        redisReply *rep = dq_redis_cmd(admin, c, &rc, 1, argv, NULL);
        if (rep == NULL)
            return;
        freeReplyObject(rep);
        us[i] = dq_mono_us() - t0;
    }
    *rtt_ms = dq_trial_rtt_median(us, DQ_TRIAL_RTT_PINGS);
}

int dq_trial_redis_snapshot(dq_queue *admin, redisContext *c,
                            dq_trial_snapshot *s)
{
    int rc = server_cpu(admin, c, &s->cpu_us);

    if (rc == DQ_OK)
        rc = commandstats(admin, c, &s->commands, &s->info_calls);
    s->mono_us = dq_mono_us();
    return rc;
}
