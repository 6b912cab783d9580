/* trial_output.c -- what a trial writes besides its records: the log's
 * headers, the progress line, the verdict and the JSON summary (trial.h,
 * trial_int.h).
 *
 * The parameters come from params.c's table (one H record, one JSON key
 * each), always in their settled form (dq_params_settle), so that the
 * log, the JSON and the children agree on a value.  Nothing here prints
 * except the progress line on stderr: a live "\r" line on a terminal, a
 * plain line every 5 s otherwise (the caller paces it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "params.h"
#include "trial_int.h"

int dq_trial_log_headers(dq_eventlog *log, const dq_trial_params *p,
                         const dq_trial_result *r)
{
    char v[160], k[48], specs[600] = "";
    size_t n = 0;
    int e = 0;

    e |= dq_log_header(log, "strategy", p->strategy->name);
    e |= dq_log_header(log, "queue", r->queue);
    e |= dq_params_log(log, p);
    for (size_t i = 0; i < p->nfaults && n < sizeof specs; i++) {
        char one[64];
        dq_fault_format(&p->faults[i], one, sizeof one);
        n += (size_t)snprintf(specs + n, sizeof specs - n, "%s%s",
                              i ? "," : "", one);
    }
    if (p->nfaults > 0)
        e |= dq_log_header(log, "fault", specs);
    snprintf(v, sizeof v, "%" PRId64, dq_wall_us());
    e |= dq_log_header(log, "start_us", v);
    if (r->redis_version[0])
        e |= dq_log_header(log, "redis_version", r->redis_version);
    for (size_t i = 0; i < r->nopts; i++) {
        snprintf(k, sizeof k, "opt.%s", r->opts[i].key);
        e |= dq_log_header(log, k, r->opts[i].val);
    }
    return e ? -1 : 0;
}

void dq_trial_progress(dq_trial_state *t, int64_t start_us, bool tty,
                       bool final)
{
    const dq_trial_params *p = t->p;
    double el = (double)(dq_mono_us() - start_us) / 1e6;

    if (final) {
        if (tty)
            fprintf(stderr, "\r\033[K");
        return;
    }
    fprintf(stderr, "%s[%s] %.1fs enqueued %" PRIdFAST64 "/%" PRId64
            " delivered %" PRIdFAST64 " errors %" PRIuFAST64 "%s",
            tty ? "\r\033[K" : "", p->strategy->name, el,
            atomic_load(&t->enqueued), p->tasks, atomic_load(&t->distinct),
            atomic_load(&t->errors), tty ? "" : "\n");
    fflush(stderr);
}

size_t dq_trial_violations(const dq_trial_params *p, const dq_trial_result *r,
                           const char **out, size_t max)
{
    /* The log-based rules (early, unknown, duplicates, redeliveries and
     * losses, each judged against the fault windows of the log) are the
     * checker's, so `dqlab run` and `dqlab check LOG` give one verdict. */
    unsigned fl = p->strategy != NULL ? p->strategy->flags : 0;
    const char *v[16];
    size_t n = dq_check_violations(&r->check, fl, r->interrupted, v, 15);

    if (n > 15)
        n = 15;
    /* Payloads are not in the log: the harness compares them itself.  A
     * strategy that declares duplicates may hand one out after the winner
     * acked and deleted the payload (naive): that is the same documented
     * bug, not a further violation; so may a redelivery after a fault. */
    if (r->payload_mismatches > 0 && !(fl & DQ_G_DUPLICATES) &&
        r->check.fault_windows == 0)
        v[n++] = "payload: delivered bytes differ from the enqueued bytes";
    for (size_t i = 0; i < n && i < max; i++)
        out[i] = v[i];
    return n;
}

/* The measurements and the harness's own counts into o. */
static void json_result(json_t *o, const dq_trial_result *r)
{
    json_t *cnt = json_object();

    json_object_set_new(o, "tasks_per_s", json_real(r->tasks_per_s));
    json_object_set_new(o, "elapsed_s", json_real(r->elapsed_s));
    json_object_set_new(o, "redis_commands",
                        r->redis_commands >= 0
                            ? json_integer(r->redis_commands) : json_null());
    json_object_set_new(o, "redis_version",
                        r->redis_version[0] ? json_string(r->redis_version)
                                            : json_null());
#define C(k) \
    json_object_set_new(cnt, #k, json_integer((json_int_t)r->counters.k))
    C(round_trips);
    C(empty_polls);
    C(lost_races);
    C(wakeups);
    C(putbacks);
#undef C
    json_object_set_new(o, "counters", cnt);
    json_object_set_new(o, "errors", json_integer((json_int_t)r->errors));
    json_object_set_new(o, "first_error", r->first_error[0]
                                              ? json_string(r->first_error)
                                              : json_null());
    json_object_set_new(o, "payload_mismatches",
                        json_integer((json_int_t)r->payload_mismatches));
    json_object_set_new(o, "drained", json_boolean(r->drained));
    json_object_set_new(o, "interrupted", json_boolean(r->interrupted));
}

/* The verdict: the strategy's guarantees and what the trial broke. */
static void json_verdict(json_t *o, const dq_trial_params *p,
                         const dq_trial_result *r)
{
    json_t *flags = json_array(), *viol = json_array();
    const char *vs[8];
    size_t nv = dq_trial_violations(p, r, vs, sizeof vs / sizeof vs[0]);

    for (unsigned b = 1; b != 0 && b <= (1u << 15); b <<= 1)
        if ((p->strategy->flags & b) && dq_flag_name(b) != NULL)
            json_array_append_new(flags, json_string(dq_flag_name(b)));
    json_object_set_new(o, "guarantees", flags);
    for (size_t i = 0; i < nv && i < sizeof vs / sizeof vs[0]; i++)
        json_array_append_new(viol, json_string(vs[i]));
    json_object_set_new(o, "violations", viol);
}

/* The server measurements and the faults. */
static void json_faults(json_t *o, const dq_trial_params *p,
                        const dq_trial_result *r)
{
    json_t *fa = json_array();

    json_object_set_new(o, "measured_s", json_real(r->measured_s));
    json_object_set_new(o, "redis_cpu_ms",
                        r->redis_cpu_us >= 0
                            ? json_real((double)r->redis_cpu_us / 1000.0)
                            : json_null());
    json_object_set_new(o, "backlog_s", json_real(r->backlog_s));
    for (size_t i = 0; fa != NULL && i < p->nfaults; i++) {
        char spec[64];
        dq_fault_format(&p->faults[i], spec, sizeof spec);
        json_array_append_new(fa, json_string(spec));
    }
    /* Replaces the checker's per-fault array of the same name (as it
     * always did); "fault_windows" stays the checker's count from the
     * log (F begin records of the parent and of killed children). */
    if (fa != NULL)
        json_object_set_new(o, "faults", fa);
    json_object_set_new(o, "kills", json_integer(r->kills));
    json_object_set_new(o, "restarts", json_integer(r->restarts));
    json_object_set_new(o, "retries", json_integer((json_int_t)r->retries));
}

json_t *dq_trial_json(const dq_trial_params *p, const dq_trial_result *r)
{
    json_t *o = dq_check_json(&r->check), *opts = json_object();
    dq_trial_params settled = *p;

    if (o == NULL || opts == NULL) {
        json_decref(o);
        json_decref(opts);
        return NULL;
    }
    dq_params_settle(&settled);
    json_object_set_new(o, "strategy", json_string(p->strategy->name));
    json_object_set_new(o, "queue", json_string(r->queue));
    for (size_t i = 0; i < r->nopts; i++)
        json_object_set_new(opts, r->opts[i].key, json_string(r->opts[i].val));
    json_object_set_new(o, "options", opts);
    dq_params_json(o, &settled);
    json_result(o, r);
    json_verdict(o, p, r);
    json_faults(o, p, r);
    return o;
}
