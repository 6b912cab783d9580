/* witness_util.c -- what every witness trial (witness_naive.c,
 * witness_lease.c, witness_expiry.c, witness_late.c) uses, declared in
 * witness_int.h: the seeded random, the metrics, the trial's event log,
 * the handles, the chart of the log.  Apart from witness.c, which runs the
 * trials, so that no trial reaches back up to the file that runs it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis_server.h"
#include "runmeta.h"
#include "signals.h"
#include "witness.h"
#include "witness_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* ---- Helpers for the trials ---------------------------------------------- */

uint64_t dq_wt_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void dq_wt_metric(wt_run *w, const char *key, int64_t value)
{
    if (w->nm >= WT_MAX_METRICS)
        return;
    snprintf(w->m[w->nm].key, sizeof w->m[0].key, "%s", key);
    w->m[w->nm].value = value;
    w->nm++;
}

int dq_wt_log_begin(wt_run *w, const char *mode, const char *const *opts,
                    size_t nopts, char *err, size_t errlen)
{
    char v[64], k[48], e[256];
    int bad = 0;

    w->log = dq_eventlog_create(w->logpath, e, sizeof e);
    if (w->log == NULL) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    bad |= dq_log_header(w->log, "strategy", w->strategy);
    bad |= dq_log_header(w->log, "queue", w->queue);
    snprintf(v, sizeof v, "%" PRIu64, w->seed);
    bad |= dq_log_header(w->log, "seed", v);
    bad |= dq_log_header(w->log, "witness", w->name);
    bad |= dq_log_header(w->log, "consumer_mode", mode);
    snprintf(v, sizeof v, "%" PRId64, dq_wall_us());
    bad |= dq_log_header(w->log, "start_us", v);
    bad |= dq_log_header(w->log, "redis_version", w->redis_version);
    for (size_t i = 0; i < nopts; i++) {
        size_t kl = strcspn(opts[i], "=");
        snprintf(k, sizeof k, "opt.%.*s", (int)kl, opts[i]);
        bad |= dq_log_header(w->log, k, opts[i] + kl + (opts[i][kl] == '='));
    }
    if (bad) {
        snprintf(err, errlen, "event log %s: %s", w->logpath, strerror(errno));
        return -1;
    }
    return 0;
}

int dq_wt_log_finish(wt_run *w, char *err, size_t errlen)
{
    char v[32];
    int bad;

    snprintf(v, sizeof v, "%" PRId64, dq_wall_us());
    bad = dq_log_header(w->log, "end_us", v);
    bad |= dq_log_end(w->log, dq_wall_us(), "clean");
    dq_eventlog_close(w->log);
    w->log = NULL;
    if (bad) {
        snprintf(err, errlen, "event log %s: %s", w->logpath, strerror(errno));
        return -1;
    }
    return 0;
}

int dq_wt_open(wt_run *w, const char *who, const char *const *opts,
               size_t nopts, dq_queue **q, char *err, size_t errlen)
{
    const dq_strategy *s = dq_strategy_find(w->strategy);
    dq_opt o[DQ_MAX_OPTS];
    dq_config cfg = {0};

    if (s == NULL || nopts > DQ_MAX_OPTS) {
        snprintf(err, errlen, "witness %s: no strategy %s", w->name,
                 w->strategy);
        return DQ_EINVAL;
    }
    for (size_t i = 0; i < nopts; i++)
        if (dq_opt_parse(opts[i], &o[i], err, errlen) != DQ_OK)
            return DQ_EINVAL;
    cfg.queue = w->queue;
    cfg.redis_host = "127.0.0.1";
    cfg.redis_port = w->port;
    cfg.opts = o;
    cfg.nopts = nopts;
    cfg.consumer = who;
    return dq_open(s, &cfg, q, err, errlen);
}

int dq_wt_chart_log(wt_run *w, const char *id, wt_rec **recs, size_t *n,
                    char *err, size_t errlen)
{
    wt_chart *ch = &w->chart;
    char b[40];

    if (dq_wt_log_read(w->logpath, recs, n, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < *n; i++) {
        const wt_rec *r = &(*recs)[i];
        if (strcmp(r->id, id) != 0)
            continue;
        if (r->type == 'E')
            dq_wt_chart_add(ch, WT_BOX, r->t_us, "producer", NULL,
                            "log E: %s enqueued, due %s", id,
                            dq_wt_arg(ch, (snprintf(b, sizeof b, "%" PRId64,
                                              r->due_ms), b), b, sizeof b));
        else if (r->type == 'D' && r->attempt > 0)
            dq_wt_chart_add(ch, WT_BOX, r->t_us, r->who, NULL,
                            "log D: %s delivered to %s, attempt %d", id,
                            r->who, r->attempt);
        else if (r->type == 'D')   /* attempt 0: the strategy does not count */
            dq_wt_chart_add(ch, WT_BOX, r->t_us, r->who, NULL,
                            "log D: %s delivered to %s", id, r->who);
        else if (r->type == 'A')
            dq_wt_chart_add(ch, WT_BOX, r->t_us, r->who, NULL,
                            "log A: %s acked by %s", id, r->who);
        else if (r->type == 'R')
            dq_wt_chart_add(ch, WT_BOX, r->t_us, r->who, NULL,
                            "log R: ack refused (%s)", r->arg);
    }
    return 0;
}
