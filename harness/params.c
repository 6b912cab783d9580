/* params.c -- the table of trial parameters and what reads it (params.h).
 *
 * Bounds.  Each parameter has one range, used wherever a value comes in
 * (command line, experiment file, child command line).  Two had drifted
 * apart before the table: work_us allowed 60 s on the command line and
 * 10 s in experiment files (60 s now: the wider bound breaks no stored
 * file, and a lease test wants work well beyond a lease); payload_bytes
 * allowed 16 MiB on the command line and 1 MiB in files (1 MiB now: each
 * producer holds enqueue_batch payloads at once, up to 10000, and Lua
 * strategies copy every payload through a script).  tasks is 0..1e8 in
 * both: 0 is idle mode, which needs idle_ms (dq_params_check), and the
 * command line now has every parameter an experiment file has.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "eventlog.h"
#include "params.h"
#include "parse.h"
#include "trial.h"

#define MAX_WORKERS 1024

static bool when_idle(const dq_trial_params *p) { return p->tasks == 0; }
static bool when_batched(const dq_trial_params *p)
{
    return p->enqueue_batch > 1;
}
static bool when_backlog(const dq_trial_params *p) { return p->backlog > 0; }
static bool when_failing(const dq_trial_params *p)
{
    return p->fail_every > 0;
}
static bool when_paced(const dq_trial_params *p) { return p->rate > 0; }

#define F(field) offsetof(dq_trial_params, field)
#define INT(k, fl, mv, field, lo, hi, d, fg, lg, col, h)                     \
    {k, fl, mv, DQ_PARAM_INT, F(field), 0, lo, hi, d, 0, NULL, fg, lg, col, h}
#define I64(k, fl, mv, field, lo, hi, d, fg, lg, col, h)                     \
    {k, fl, mv, DQ_PARAM_I64, F(field), 0, lo, hi, d, 0, NULL, fg, lg, col, h}

const dq_param dq_params[] = {
    INT("producers", "--producers", "P", producers, 1, MAX_WORKERS, 1,
        DQ_PARAM_LIST | DQ_PARAM_CHILD, NULL, "producers", "producer threads"),
    INT("consumers", "--consumers", "C", consumers, 1, MAX_WORKERS, 1,
        DQ_PARAM_LIST | DQ_PARAM_CHILD, NULL, "consumers",
        "consumers (threads, one handle each)"),
    I64("tasks", "--tasks", "N", tasks, 0, 100000000, 1000, DQ_PARAM_CHILD,
        NULL, "tasks", "tasks to enqueue (0: idle mode, see --idle-ms)"),
    {"delay_ms", "--delay-ms", "MIN:MAX or N", DQ_PARAM_RANGE,
     F(delay_min_ms), F(delay_max_ms), 0, 86400000, 0, 100, NULL,
     DQ_PARAM_CHILD, NULL, "delay_min_ms,delay_max_ms",
     "due = enqueue time + uniform delay in [MIN, MAX] ms;\nN means N:N"},
    I64("work_us", "--work-us", "W", work_us, 0, 60000000, 0,
        DQ_PARAM_LIST | DQ_PARAM_CHILD, NULL, "work_us",
        "simulated work between claim and ack"),
    I64("fail_every", "--fail-every", "N", fail_every, 0, 1000000, 0,
        DQ_PARAM_CHILD, when_failing, "fail_every",
        "the work of every N-th claim of each consumer\nfails and the task "
        "is retried (--retry); 0: none"),
    {"retry", "--retry", "R", DQ_PARAM_CHOICE, F(retry_nack), 0, 0, 1, 0, 0,
     "readd|nack", DQ_PARAM_CHILD, when_failing, "retry",
     "a failed task: readd (enqueue it again at now +\n--retry-ms, then ack "
     "it) or nack (dq_nack)"},
    I64("retry_ms", "--retry-ms", "MS", retry_ms, 0, 86400000, 100,
        DQ_PARAM_CHILD, when_failing, NULL, "retry delay of a failed task"),
    I64("payload_bytes", "--payload-bytes", "B", payload_bytes, 0, 1 << 20,
        16, DQ_PARAM_CHILD, NULL, NULL,
        "payload size, binary with NUL/LF/comma"),
    I64("grace_ms", "--grace-ms", "G", grace_ms, 0, 3600000, 2000, 0, NULL,
        NULL, "drain deadline = latest due + G; after a consumer\n"
        "kill, with a lease, up to one lease_ms more"),
    I64("enqueue_batch", "--enqueue-batch", "N", enqueue_batch, 1,
        DQ_TRIAL_MAX_ENQUEUE_BATCH, 1, DQ_PARAM_CHILD, when_batched, NULL,
        "tasks per enqueue call: N > 1 sends groups with\ndq_enqueue_many "
        "(one MULTI/EXEC per group for the\nZSet strategies)"),
    I64("rate", "--rate", "N", rate, 0, 10000000, 0,
        DQ_PARAM_LIST | DQ_PARAM_CHILD, when_paced, "rate",
        "offered rate, tasks/s over all producers (task i\nsent at start + "
        "i/N s, monotonic clock); 0: as\nfast as possible"),
    {"seed", "--seed", "SEED", DQ_PARAM_U64, F(seed), 0, 0, 0, 1, 0, NULL,
     DQ_PARAM_CHILD, NULL, "seed", "seed for delays, payloads and faults"},
    I64("claim_timeout_ms", "--claim-timeout-ms", "MS", claim_timeout_ms, 0,
        600000, 100, DQ_PARAM_CHILD, NULL, "claim_timeout_ms",
        "timeout of each consumer claim call"),
    I64("idle_ms", "--idle-ms", "MS", idle_ms, 1, 3600000, 0, 0, when_idle,
        "idle_ms", "idle mode (--tasks 0): consumers claim against the\n"
        "empty queue for MS; the server's cost is measured"),
    I64("backlog", "--backlog", "N", backlog, 0, 10000000, 0, DQ_PARAM_LIST,
        when_backlog, "backlog", "tasks enqueued before the measured ones, "
        "due\n--backlog-delay-ms ahead (never due in the trial)"),
    I64("backlog_delay_ms", "--backlog-delay-ms", "MS", backlog_delay_ms, 0,
        86400000 * 30LL, 3600000, 0, when_backlog, NULL,
        "due time of the backlog after its enqueue"),
    {"consumer_mode", "--consumer-mode", "M", DQ_PARAM_CHOICE,
     F(consumer_process), 0, 0, 1, 0, 0, "thread|process", 0, NULL,
     "consumer_mode", "thread or process: each consumer a child\nprocess, "
     "so a fault can SIGKILL it"},
    {NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, NULL, 0, NULL, NULL, NULL},
};
_Static_assert(sizeof dq_params / sizeof dq_params[0] == DQ_NPARAMS + 1,
               "DQ_NPARAMS must count the rows of dq_params");

#undef INT
#undef I64
#undef F

const dq_param *dq_param_by_key(const char *key)
{
    for (const dq_param *d = dq_params; d->key != NULL; d++)
        if (strcmp(d->key, key) == 0)
            return d;
    return NULL;
}

const dq_param *dq_param_by_flag(const char *flag)
{
    for (const dq_param *d = dq_params; d->key != NULL; d++)
        if (strcmp(d->flag, flag) == 0)
            return d;
    return NULL;
}

/* The word of choice i (0 or 1) of a CHOICE row into buf. */
static void choice_word(const dq_param *d, int64_t i, char *buf, size_t len)
{
    size_t n = strcspn(d->choices, "|");

    if (i == 0)
        snprintf(buf, len, "%.*s", (int)n, d->choices);
    else
        snprintf(buf, len, "%s", d->choices + n + (d->choices[n] == '|'));
}

int dq_param_parse(const dq_param *d, const char *what, const char *text,
                   int64_t *v, int64_t *v2, char *err, size_t errlen)
{
    uint64_t u;
    char w0[32], w1[32];

    *v2 = 0;
    switch (d->type) {
    case DQ_PARAM_INT:
    case DQ_PARAM_I64:
        return dq_parse_i64(what, text, d->min, d->max, v, err, errlen);
    case DQ_PARAM_U64:
        if (dq_parse_u64(what, text, &u, err, errlen) != 0)
            return -1;
        *v = (int64_t)u;
        return 0;
    case DQ_PARAM_RANGE:
        return dq_parse_range(what, text, d->min, d->max, v, v2, err, errlen);
    case DQ_PARAM_CHOICE:
        choice_word(d, 0, w0, sizeof w0);
        choice_word(d, 1, w1, sizeof w1);
        if (strcmp(text, w0) == 0 || strcmp(text, w1) == 0) {
            *v = strcmp(text, w1) == 0;
            return 0;
        }
        snprintf(err, errlen, "%s: '%.40s': expected %s or %s", what, text,
                 w0, w1);
        return -1;
    }
    return -1;
}

void dq_param_get(const dq_param *d, const dq_trial_params *p, int64_t *v,
                  int64_t *v2)
{
    const char *base = (const char *)p;

    *v = *v2 = 0;
    switch (d->type) {
    case DQ_PARAM_INT:
        *v = *(const int *)(base + d->off);
        break;
    case DQ_PARAM_I64:
        *v = *(const int64_t *)(base + d->off);
        break;
    case DQ_PARAM_U64:
        *v = (int64_t)*(const uint64_t *)(base + d->off);
        break;
    case DQ_PARAM_RANGE:
        *v = *(const int64_t *)(base + d->off);
        *v2 = *(const int64_t *)(base + d->off2);
        break;
    case DQ_PARAM_CHOICE:
        *v = *(const bool *)(base + d->off);
        break;
    }
}

void dq_param_set(const dq_param *d, dq_trial_params *p, int64_t v,
                  int64_t v2)
{
    char *base = (char *)p;

    switch (d->type) {
    case DQ_PARAM_INT:
        *(int *)(base + d->off) = (int)v;
        break;
    case DQ_PARAM_I64:
        *(int64_t *)(base + d->off) = v;
        break;
    case DQ_PARAM_U64:
        *(uint64_t *)(base + d->off) = (uint64_t)v;
        break;
    case DQ_PARAM_RANGE:
        *(int64_t *)(base + d->off) = v;
        *(int64_t *)(base + d->off2) = v2;
        break;
    case DQ_PARAM_CHOICE:
        *(bool *)(base + d->off) = v != 0;
        break;
    }
}

void dq_param_text(const dq_param *d, int64_t v, int64_t v2, char *buf,
                   size_t len)
{
    switch (d->type) {
    case DQ_PARAM_U64:
        snprintf(buf, len, "%" PRIu64, (uint64_t)v);
        break;
    case DQ_PARAM_RANGE:
        snprintf(buf, len, "%" PRId64 ":%" PRId64, v, v2);
        break;
    case DQ_PARAM_CHOICE:
        choice_word(d, v, buf, len);
        break;
    default:
        snprintf(buf, len, "%" PRId64, v);
    }
}

void dq_param_format(const dq_param *d, const dq_trial_params *p, char *buf,
                     size_t len)
{
    int64_t v, v2;

    dq_param_get(d, p, &v, &v2);
    dq_param_text(d, v, v2, buf, len);
}

_Static_assert(DQ_NPARAMS <= 64, "dq_params_seen holds one bit per row");

int dq_param_once(const dq_param *d, dq_params_seen *seen, const char *what,
                  char *err, size_t errlen)
{
    uint64_t bit = 1ULL << (d - dq_params);

    if (*seen & bit) {
        snprintf(err, errlen, "%s given twice (give each option once)",
                 what);
        return -1;
    }
    *seen |= bit;
    return 0;
}

void dq_params_defaults(dq_trial_params *p)
{
    for (const dq_param *d = dq_params; d->key != NULL; d++)
        dq_param_set(d, p, d->def, d->def2);
}

void dq_params_settle(dq_trial_params *p)
{
    if (p->enqueue_batch < 1)
        p->enqueue_batch = 1;
    if (p->tasks > 0)
        p->idle_ms = 0;
    for (size_t i = 0; i < p->nfaults; i++)
        if (dq_fault_needs(&p->faults[i], DQ_FAULT_NEEDS_PROCESS))
            p->consumer_process = true;
}

int dq_params_check(const dq_trial_params *p, bool cli, char *err,
                    size_t errlen)
{
    const dq_param *tasks = dq_param_by_key("tasks");
    const dq_param *idle = dq_param_by_key("idle_ms");
    const dq_param *mode = dq_param_by_key("consumer_mode");
    const char *t = cli ? tasks->flag : tasks->key;
    const char *eq = cli ? " " : " = ";

    if (p->tasks == 0 && p->idle_ms <= 0) {
        snprintf(err, errlen, "%s%s0 (idle mode) needs %s%s%s (ms the "
                 "consumers run against the empty queue)", t, eq,
                 cli ? idle->flag : idle->key, eq, cli ? "MS" : "N");
        return -1;
    }
    if (p->fail_every > 0 && p->retry_nack && p->strategy != NULL &&
        p->strategy->nack == NULL) {
        snprintf(err, errlen, "%s%snack: strategy '%s' has no nack (use "
                 "%s%sreadd)", cli ? "--retry" : "retry", eq,
                 p->strategy->name, cli ? "--retry" : "retry", eq);
        return -1;
    }
    if (p->tasks == 0 && (p->nfaults > 0 || p->consumer_process)) {
        snprintf(err, errlen, "faults and %s%sprocess need tasks (not idle "
                 "mode, %s%s0)", cli ? mode->flag : mode->key, eq, t, eq);
        return -1;
    }
    return 0;
}

int dq_params_log(dq_eventlog *log, const dq_trial_params *p)
{
    char v[64];
    int e = 0;

    for (const dq_param *d = dq_params; d->key != NULL; d++) {
        if (d->logged != NULL && !d->logged(p))
            continue;
        dq_param_format(d, p, v, sizeof v);
        e |= dq_log_header(log, d->key, v);
    }
    return e ? -1 : 0;
}

void dq_params_json(json_t *o, const dq_trial_params *p)
{
    for (const dq_param *d = dq_params; d->key != NULL; d++) {
        int64_t v, v2;
        char s[64];
        json_t *x;

        dq_param_get(d, p, &v, &v2);
        if (d->type == DQ_PARAM_RANGE) {
            x = json_object();
            json_object_set_new(x, "min", json_integer(v));
            json_object_set_new(x, "max", json_integer(v2));
        } else if (d->type == DQ_PARAM_CHOICE ||
                   (d->type == DQ_PARAM_U64 && v < 0)) {
            /* A uint64 beyond INT64_MAX does not fit a JSON integer. */
            dq_param_text(d, v, v2, s, sizeof s);
            x = json_string(s);
        } else {
            x = json_integer(v);
        }
        json_object_set_new(o, d->key, x);
    }
}

bool dq_params_child_arg(const dq_trial_params *p, size_t i, char *buf,
                         size_t len)
{
    char v[64];

    for (const dq_param *d = dq_params; d->key != NULL; d++) {
        if (!(d->flags & DQ_PARAM_CHILD) || i-- > 0)
            continue;
        dq_param_format(d, p, v, sizeof v);
        snprintf(buf, len, "%s=%s", d->flag, v);
        return true;
    }
    return false;
}

void dq_params_usage(FILE *f)
{
    for (const dq_param *d = dq_params; d->key != NULL; d++) {
        char head[64], def[64];
        const char *h = d->help;
        int n;

        snprintf(head, sizeof head, "%s %s", d->flag, d->metavar);
        dq_param_text(d, d->def, d->def2, def, sizeof def);
        if (strlen(head) > 21)
            fprintf(f, "  %s\n%24s", head, "");
        else
            fprintf(f, "  %-21s ", head);
        while ((n = (int)strcspn(h, "\n")) >= 0 && h[n] == '\n') {
            fprintf(f, "%.*s\n%24s", n, h, "");
            h += n + 1;
        }
        fprintf(f, "%s (%s)\n", h, def);
    }
}
