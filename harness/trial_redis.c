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
 *
 * The owner key.  On a server that is not dqlab's (--redis) two runs may
 * pick the same queue; a check for existing keys cannot keep them apart
 * (both pass it before either writes), and two trials on one queue take
 * each other's tasks.  So the trial claims dq:{queue}:owner with SET NX PX
 * (atomic: one of two runs gets it) before it looks at the queue, keeps
 * it alive from a thread of its own on its own connection (every
 * DQ_TRIAL_OWNER_REFRESH_MS, a TTL of DQ_TRIAL_OWNER_TTL_MS, so that a
 * dqlab killed with SIGKILL holds the queue that long at most), and
 * deletes it last, after the queue's other keys.  Refreshing and deleting
 * compare the value first, in one Lua script (the single-instance lock of
 * https://redis.io/docs/manual/patterns/distributed-locks/); a user the
 * server refuses scripts (ACL) gets GET then PEXPIRE / DEL, which differs
 * only when the key expires between the two, a TTL after its last refresh.
 * --fresh deletes the queue's keys only once the claim is ours.  The
 * private server needs none of this: nobody else knows its port.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* ---- The owner key --------------------------------------------------------- */

#define OWNER_SUFFIX "owner"

/* KEYS[1] the owner key, ARGV[1] our value, ARGV[2] the TTL in ms: 1 when
 * it is ours (TTL renewed, or claimed again after it vanished), 0 when
 * another run holds it. */
static const char refresh_src[] =
    "local v = redis.call('GET', KEYS[1])\n"
    "if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 "
    "end\n"
    "if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) "
    "return 1 end\n"
    "return 0\n";
/* KEYS[1] the owner key, ARGV[1] our value: deletes it when it is ours. */
static const char release_src[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('DEL', KEYS[1]) end\n"
    "return 0\n";

/* The value of the owner key, "dqlab pid N on HOST since TIME", so that
 * a refused run can say whose the queue is. */
static void owner_id(char *buf, size_t len)
{
    char host[64] = "?", when[32] = "?";
    time_t now = time(NULL);
    struct tm tm;

    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    if (localtime_r(&now, &tm) != NULL)
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf, len, "dqlab pid %ld on %s since %s", (long)getpid(), host,
             when);
}

/* Who holds key and for how long, for a refusal: "<its value>; its claim
 * lapses in N s unless that run renews it" into buf. */
static void owner_holder(dq_queue *admin, redisContext *c, const char *key,
                         char *buf, size_t len)
{
    int rc;
    redisReply *v = dq_redis_cmdf(admin, c, &rc, "GET %s", key);
    redisReply *t = dq_redis_cmdf(admin, c, &rc, "PTTL %s", key);

    snprintf(buf, len, "%s", v != NULL && v->type == REDIS_REPLY_STRING
                                 ? v->str : "unknown");
    if (t != NULL && t->type == REDIS_REPLY_INTEGER && t->integer > 0) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "; its claim lapses in %lld s unless "
                 "that run renews it", (t->integer + 999) / 1000);
    }
    freeReplyObject(v);
    freeReplyObject(t);
}

/* SET owner NX PX on admin's connection.  Returns 0 (ours), or -1 with
 * err: in use, or the Redis error. */
static int owner_claim(dq_trial_owner *o, dq_queue *admin, redisContext *c,
                       char *err, size_t errlen)
{
    char ttl[24], who[300];
    const char *argv[6] = {"SET", o->key, o->id, "NX", "PX", ttl};
    int rc;
    redisReply *r;

    snprintf(ttl, sizeof ttl, "%d", DQ_TRIAL_OWNER_TTL_MS);
    r = dq_redis_cmd(admin, c, &rc, 6, argv, NULL);
    if (r == NULL) {
        snprintf(err, errlen, "%s", admin->err);
        return -1;
    }
    if (r->type == REDIS_REPLY_STATUS) {
        freeReplyObject(r);
        o->held = true;
        return 0;
    }
    freeReplyObject(r);
    owner_holder(admin, c, o->key, who, sizeof who);
    snprintf(err, errlen, "queue %s is in use by another dqlab run (owner "
             "%s); wait for it to end or choose another queue (--queue)",
             admin->queue, who);
    return -1;
}

/* The script src on (q, c) with the owner key and our value (and the TTL
 * for the refresh), else its two-command form.  Returns 1 ours / done, 0
 * not ours, or a DQ_E* code (q->err). */
static int owner_op(dq_trial_owner *o, dq_queue *q, redisContext *c,
                    bool refresh)
{
    char ttl[24];
    const char *args[3] = {o->key, o->id, ttl};
    dq_script *s = refresh ? &o->refresh : &o->release;
    int64_t v = 0;
    int rc;
    redisReply *r;

    snprintf(ttl, sizeof ttl, "%d", DQ_TRIAL_OWNER_TTL_MS);
    rc = dq_redis_eval_int(q, c, s, 1, refresh ? 3 : 2, args, NULL,
                           "owner: unexpected reply", &v);
    if (rc != DQ_EREDIS)
        return rc == DQ_OK ? (v != 0 || !refresh ? 1 : 0) : rc;
    /* Scripts refused (an ACL without @scripting): compare, then act. */
    r = dq_redis_cmdf(q, c, &rc, "GET %s", o->key);
    if (r == NULL)
        return rc;
    v = r->type == REDIS_REPLY_NIL ? 2
        : r->type == REDIS_REPLY_STRING && strcmp(r->str, o->id) == 0;
    freeReplyObject(r);
    if (v == 0)
        return refresh ? 0 : 1;
    if (!refresh)
        r = v == 1 ? dq_redis_cmdf(q, c, &rc, "DEL %s", o->key) : NULL;
    else if (v == 1)
        r = dq_redis_cmdf(q, c, &rc, "PEXPIRE %s %s", o->key, ttl);
    else
        r = dq_redis_cmdf(q, c, &rc, "SET %s %s NX PX %s", o->key, o->id,
                          ttl);
    freeReplyObject(r);
    return rc == DQ_OK ? 1 : rc;
}

/* The refresher: every DQ_TRIAL_OWNER_REFRESH_MS until told to stop.  A
 * failed refresh (server unreachable, stalled) is tried again at the next
 * one; the key found held by someone else ends the claim. */
static void *owner_main(void *arg)
{
    dq_trial_owner *o = arg;
    struct timespec ts;

    pthread_mutex_lock(&o->mu);
    while (!o->stop) {
        int rc;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += DQ_TRIAL_OWNER_REFRESH_MS / 1000;
        while (!o->stop &&
               pthread_cond_timedwait(&o->cv, &o->mu, &ts) != ETIMEDOUT)
            ;
        if (o->stop)
            break;
        pthread_mutex_unlock(&o->mu);
        rc = owner_op(o, &o->q, o->c, true);
        pthread_mutex_lock(&o->mu);
        if (rc == 0) { /* the message first: readers take it once lost */
            snprintf(o->lost_msg, sizeof o->lost_msg, "queue %s was "
                     "claimed by another dqlab run while this trial ran "
                     "(its owner key %s no longer holds this run's value)",
                     o->q.queue, o->key);
            atomic_store(&o->lost, true);
            break;
        }
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

/* Starts the refresher on a connection of its own (named dqlab:<queue>:
 * dqlab-owner).  Returns 0, or -1 with err. */
static int owner_start(dq_trial_owner *o, const dq_queue *admin,
                       char *err, size_t errlen)
{
    pthread_condattr_t ca;

    o->q = *admin;
    o->q.cfg.queue = o->q.queue;
    o->q.cfg.consumer = "dqlab-owner";
    o->q.redis_conn = NULL;
    o->q.redis_confirm = NULL;
    o->q.redis_sock_timeout_ms = 0;
    if (dq_redis_connect(&o->q, NULL, DQ_TRIAL_OWNER_REFRESH_MS, &o->c) !=
        DQ_OK) {
        snprintf(err, errlen, "%s", o->q.err);
        return -1;
    }
    pthread_mutex_init(&o->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&o->cv, &ca);
    pthread_condattr_destroy(&ca);
    o->sync_init = true;
    if (pthread_create(&o->th, NULL, owner_main, o) != 0) {
        snprintf(err, errlen, "pthread_create: %s", strerror(errno));
        return -1;
    }
    o->started = true;
    return 0;
}

void dq_trial_owner_stop(dq_trial_owner *o)
{
    if (o->started) {
        pthread_mutex_lock(&o->mu);
        o->stop = true;
        pthread_cond_signal(&o->cv);
        pthread_mutex_unlock(&o->mu);
        pthread_join(o->th, NULL);
        o->started = false;
    }
    if (o->sync_init) {
        pthread_cond_destroy(&o->cv);
        pthread_mutex_destroy(&o->mu);
        o->sync_init = false;
    }
    if (o->c != NULL)
        redisFree(o->c);
    o->c = NULL;
}

bool dq_trial_owner_lost(const dq_trial_owner *o, char *msg, size_t len)
{
    if (o == NULL || !atomic_load(&o->lost))
        return false;
    snprintf(msg, len, "%s", o->lost_msg);
    return true;
}

int dq_trial_redis_close(dq_queue *admin, redisContext *c,
                         dq_trial_owner *o, char *err, size_t errlen)
{
    int rc;

    if (o == NULL || !o->held) {
        if (o != NULL)
            dq_trial_owner_stop(o);
        if (dq_redis_purge(admin, c) == DQ_OK ||
            dq_redis_purge(admin, c) == DQ_OK) /* once more: best effort */
            return 0;
        snprintf(err, errlen, "%s", admin->err);
        return -1;
    }
    dq_trial_owner_stop(o);
    /* Ours still (renewed for the time the purge takes)?  Only then are
     * the queue's keys this trial's to delete; the owner key goes last. */
    rc = owner_op(o, admin, c, true);
    if (rc == 1 && dq_redis_purge_but(admin, c, OWNER_SUFFIX) == DQ_OK &&
        owner_op(o, admin, c, false) == 1) {
        o->held = false;
        return 0;
    }
    if (rc == 0)
        snprintf(err, errlen, "queue %s was claimed by another dqlab run: "
                 "its keys were left alone", admin->queue);
    else
        snprintf(err, errlen, "%s", admin->err);
    return -1;
}

int dq_trial_redis_open(dq_queue *admin, const dq_trial_params *p,
                        const dq_config *cfg, redisContext **c,
                        dq_trial_owner *o, char *version, size_t vlen,
                        char *err, size_t errlen)
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
    if (o != NULL) {
        dq_redis_key(admin, OWNER_SUFFIX, o->key, sizeof o->key);
        owner_id(o->id, sizeof o->id);
        o->refresh.src = refresh_src;
        o->release.src = release_src;
        if (owner_claim(o, admin, *c, err, errlen) != 0)
            return -1;
    }
    rc = o != NULL ? dq_redis_exists_but(admin, *c, OWNER_SUFFIX)
                   : dq_redis_exists(admin, *c);
    if (rc < 0)
        goto fail;
    if (rc == 1 && !p->fresh) {
        snprintf(err, errlen, "queue '%s' already has keys in Redis "
                 "(dq:{%s}:*); pass --fresh to delete them or choose "
                 "another queue", admin->queue, admin->queue);
        goto drop;
    }
    if (rc == 1 && (o != NULL ? dq_redis_purge_but(admin, *c, OWNER_SUFFIX)
                              : dq_redis_purge(admin, *c)) != DQ_OK)
        goto fail;
    if (o != NULL && owner_start(o, admin, err, errlen) != 0)
        goto drop;
    return 0;
fail:
    snprintf(err, errlen, "%s", admin->err);
drop: /* the claim, if any, given back: the queue stays as it was */
    if (o != NULL && o->held) {
        dq_trial_owner_stop(o);
        if (owner_op(o, admin, *c, false) == 1)
            o->held = false;
    }
    return -1;
}

/* CONFIG GET name into out ("" when refused or unknown). */
static void config_get(dq_queue *admin, redisContext *c, const char *name,
                       char *out, size_t len)
{
    const char *argv[3] = {"CONFIG", "GET", name};
    int rc;
    redisReply *r = dq_redis_cmd(admin, c, &rc, 3, argv, NULL);

    out[0] = '\0';
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING)
        snprintf(out, len, "%s", r->element[1]->str);
    if (r != NULL)
        freeReplyObject(r);
}

void dq_trial_redis_evict_warning(dq_queue *admin, redisContext *c,
                                  unsigned flags, char *out, size_t len)
{
    char max[32], policy[32];

    out[0] = '\0';
    config_get(admin, c, "maxmemory", max, sizeof max);
    config_get(admin, c, "maxmemory-policy", policy, sizeof policy);
    if (max[0] == '\0' || strcmp(max, "0") == 0)
        return;
    if (strncmp(policy, "allkeys-", 8) == 0)
        snprintf(out, len, "the server's maxmemory-policy %s may evict the "
                 "queue's keys (dq:{%s}:*) once it reaches maxmemory %s: "
                 "tasks would vanish without an error (noeviction refuses "
                 "writes instead)", policy, admin->queue, max);
    else if (strncmp(policy, "volatile-", 9) == 0 && (flags & DQ_G_TTL_KEYS))
        snprintf(out, len, "the server's maxmemory-policy %s may evict the "
                 "queue's keys with a TTL (dq:{%s}:*) once it reaches "
                 "maxmemory %s: their tasks would be lost", policy,
                 admin->queue, max);
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
