/* dq.c -- the strategy-independent half of dq.h: the dq_* wrappers that
 * state and check each operation's contract, result and flag names,
 * options (parsing, validation against a strategy's list, defaults) and the
 * lab clock.
 *
 * Why wrappers: every caller (CLI, trial runner, tests) goes through one
 * place that validates arguments, turns a NULL optional op into
 * DQ_EUNSUPPORTED and keeps the error message in the handle, so strategies
 * only implement the happy path of their own design (as Redis's
 * connection.h wrappers do for ConnectionType).
 *
 * Strings in dq_config: dq_open copies every string it keeps (queue name,
 * Redis host, user, password, consumer name) into the handle, so the
 * caller's config may be freed or reused right after dq_open returns.  The
 * password copy is wiped before it is freed.
 *
 * Options: the handle keeps one entry per option the strategy declares, in
 * the strategy's order, holding the last value given for that key (later
 * duplicates win, as on a command line) or else the default.  An unknown key
 * is an error naming the strategy, the key and the accepted keys.  Every
 * resolved value (given or default) is checked here against its dq_optdef
 * type -- an integer in [min, max] or one of the choices -- by the same
 * code that dq_opts_check() exports, so callers can reject bad options
 * before they start a Redis server, and strategies read checked values.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dq.h"

/* ---- Names ------------------------------------------------------------- */

const char *dq_result_name(int rc)
{
    switch (rc) {
#define DQ_RESULT_CASE(name, val, text) \
    case (val):                         \
        return text;
        DQ_RESULT_MAP(DQ_RESULT_CASE)
#undef DQ_RESULT_CASE
    default:
        return "unknown result code";
    }
}

static const struct {
    unsigned flag;
    const char *name;
} flag_names[] = {
    {DQ_G_AT_MOST_ONCE, "at-most-once"},
    {DQ_G_AT_LEAST_ONCE, "at-least-once"},
    {DQ_G_SURVIVES_CONSUMER_CRASH, "survives-consumer-crash"},
    {DQ_G_NEEDS_REDIS, "needs-redis"},
    {DQ_G_POLLS, "polls"},
    {DQ_G_BLOCKS, "blocks"},
    {DQ_G_NO_DUP_CONCURRENT, "no-dup-concurrent"},
    {DQ_G_DUPLICATES, "duplicates"},
    {DQ_G_DUE_ORDER, "due-order"},
    {DQ_G_SURVIVES_PROCESS_EXIT, "survives-process-exit"},
};

const char *dq_flag_name(unsigned flag)
{
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (flag_names[i].flag == flag)
            return flag_names[i].name;
    return NULL;
}

bool dq_flag_parse(const char *name, unsigned *flag)
{
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (strcmp(flag_names[i].name, name) == 0) {
            *flag = flag_names[i].flag;
            return true;
        }
    return false;
}

/* ---- Errors -------------------------------------------------------------- */

int dq_fail(dq_queue *q, int rc, const char *fmt, ...)
{
    va_list ap;

    if (q == NULL)
        return rc;
    va_start(ap, fmt);
    vsnprintf(q->err, sizeof q->err, fmt, ap);
    va_end(ap);
    return rc;
}

const char *dq_errstr(const dq_queue *q)
{
    if (q == NULL)
        return "no queue handle";
    return q->err;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- Options ----------------------------------------------------------- */

int dq_opt_parse(const char *kv, dq_opt *o, char *err, size_t errlen)
{
    const char *eq;
    size_t klen, vlen;

    if (kv == NULL || o == NULL) {
        set_err(err, errlen, "option: missing argument");
        return DQ_EINVAL;
    }
    eq = strchr(kv, '=');
    if (eq == NULL) {
        set_err(err, errlen, "option '%s': expected key=value", kv);
        return DQ_EINVAL;
    }
    klen = (size_t)(eq - kv);
    vlen = strlen(eq + 1);
    if (klen == 0) {
        set_err(err, errlen, "option '%s': empty key", kv);
        return DQ_EINVAL;
    }
    if (klen >= sizeof o->key) {
        set_err(err, errlen, "option '%.*s': key longer than %zu bytes",
                (int)klen, kv, sizeof o->key - 1);
        return DQ_EINVAL;
    }
    for (size_t i = 0; i < klen; i++) {
        if (!isalnum((unsigned char)kv[i]) && kv[i] != '_') {
            set_err(err, errlen,
                    "option '%.*s': key may hold only letters, digits and _",
                    (int)klen, kv);
            return DQ_EINVAL;
        }
    }
    if (vlen == 0) {
        set_err(err, errlen, "option '%.*s': empty value", (int)klen, kv);
        return DQ_EINVAL;
    }
    if (vlen >= sizeof o->val) {
        set_err(err, errlen, "option '%.*s': value longer than %zu bytes",
                (int)klen, kv, sizeof o->val - 1);
        return DQ_EINVAL;
    }
    memcpy(o->key, kv, klen);
    o->key[klen] = '\0';
    memcpy(o->val, eq + 1, vlen + 1);
    return DQ_OK;
}

const char *dq_opt_get(const dq_queue *q, const char *key)
{
    if (q == NULL || key == NULL)
        return NULL;
    for (size_t i = 0; i < q->nopts; i++)
        if (strcmp(q->opts[i].key, key) == 0)
            return q->opts[i].val;
    return NULL;
}

/* Parses v as a whole decimal integer: no leading blanks, no trailing
 * bytes, no overflow. */
static bool parse_i64(const char *v, int64_t *out)
{
    char *end;
    long long n;

    if (isspace((unsigned char)v[0]))
        return false;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0')
        return false;
    *out = (int64_t)n;
    return true;
}

/* True when v is one of the '|'-separated words of choices. */
static bool is_choice(const char *choices, const char *v)
{
    size_t vlen = strlen(v);

    for (const char *w = choices; w != NULL && *w != '\0';) {
        const char *bar = strchr(w, '|');
        size_t wlen = bar ? (size_t)(bar - w) : strlen(w);

        if (wlen == vlen && memcmp(w, v, vlen) == 0)
            return true;
        w = bar ? bar + 1 : NULL;
    }
    return false;
}

/* Checks value v of option d of strategy sname; on failure writes the one
 * line of dq_opts_check() into err and returns DQ_EINVAL. */
static int check_value(const char *sname, const dq_optdef *d, const char *v,
                       char *err, size_t errlen)
{
    int64_t n;

    switch (d->type) {
    case DQ_OPT_INT:
        if (parse_i64(v, &n) && n >= d->min && n <= d->max)
            return DQ_OK;
        set_err(err, errlen,
                "strategy '%s': option %s=%s: expected an integer in "
                "[%lld, %lld]",
                sname, d->name, v, (long long)d->min, (long long)d->max);
        return DQ_EINVAL;
    case DQ_OPT_CHOICE:
        if (is_choice(d->choices, v))
            return DQ_OK;
        set_err(err, errlen, "strategy '%s': option %s=%s: expected one of %s",
                sname, d->name, v, d->choices ? d->choices : "(none)");
        return DQ_EINVAL;
    case DQ_OPT_UNCHECKED:
    default:
        if (v[0] != '\0')
            return DQ_OK;
        set_err(err, errlen, "strategy '%s': option %s: empty value", sname,
                d->name);
        return DQ_EINVAL;
    }
}

/* The dq_optdef of option key in s, or NULL. */
static const dq_optdef *find_def(const dq_strategy *s, const char *key)
{
    const dq_optdef *d;

    for (size_t j = 0; (d = dq_strategy_option(s, j)) != NULL; j++)
        if (strcmp(d->name, key) == 0)
            return d;
    return NULL;
}

int dq_opt_int(dq_queue *q, const char *key, int64_t min, int64_t max,
               int64_t *out)
{
    const char *v = dq_opt_get(q, key);
    int64_t n;

    if (v == NULL)
        return dq_fail(q, DQ_EINVAL, "strategy '%s': option '%s' not set",
                       q->s ? q->s->name : "?", key);
    if (!parse_i64(v, &n) || n < min || n > max)
        return dq_fail(q, DQ_EINVAL,
                       "strategy '%s': option %s=%s: expected an integer in "
                       "[%lld, %lld]",
                       q->s ? q->s->name : "?", key, v, (long long)min,
                       (long long)max);
    *out = n;
    return DQ_OK;
}

int dq_opt_i64(dq_queue *q, const char *key, int64_t *out)
{
    const dq_optdef *d;

    if (q == NULL || q->s == NULL || key == NULL || out == NULL)
        return dq_fail(q, DQ_EINVAL, "dq_opt_i64: missing argument");
    d = find_def(q->s, key);
    if (d == NULL || d->type != DQ_OPT_INT)
        return dq_fail(q, DQ_EINVAL, "strategy '%s': option '%s' is not a "
                       "declared integer option", q->s->name, key);
    return dq_opt_int(q, key, d->min, d->max, out);
}

/* Writes "a, b, c" (the strategy's option names) into buf. */
static void list_options(const dq_strategy *s, char *buf, size_t buflen)
{
    const dq_optdef *d;
    size_t used = 0;

    buf[0] = '\0';
    if (dq_strategy_option(s, 0) == NULL) {
        snprintf(buf, buflen, "none");
        return;
    }
    for (size_t i = 0; (d = dq_strategy_option(s, i)) != NULL; i++) {
        int n = snprintf(buf + used, buflen - used, "%s%s", i ? ", " : "",
                         d->name);
        if (n < 0 || (size_t)n >= buflen - used)
            return;
        used += (size_t)n;
    }
}

static bool queue_name_ok(const char *name)
{
    size_t n;

    if (name == NULL)
        return false;
    n = strlen(name);
    if (n < 1 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (!isalnum(ch) && ch != '_' && ch != '.' && ch != '-')
            return false;
    }
    return true;
}

/* Resolves opts[0..nopts-1] against s->options into out[] (one entry per
 * declared option, in declaration order: the last given value, or the
 * default) and checks every resolved value against its dq_optdef.  *nout
 * gets the count.  DQ_OK, or DQ_EINVAL with the message in err. */
static int resolve_options(const dq_strategy *s, const dq_opt *opts,
                           size_t nopts, dq_opt out[DQ_MAX_OPTS],
                           size_t *nout, char *err, size_t errlen)
{
    size_t ndef = 0;
    int rc;

    *nout = 0;
    if (nopts > 0 && opts == NULL) {
        set_err(err, errlen, "strategy '%s': nopts=%zu but opts is NULL",
                s->name, nopts);
        return DQ_EINVAL;
    }
    for (size_t i = 0; i < nopts; i++) {
        const dq_opt *o = &opts[i];
        char key[sizeof o->key + 1];

        snprintf(key, sizeof key, "%.*s", (int)sizeof o->key, o->key);
        if (find_def(s, key) == NULL) {
            char names[256];
            list_options(s, names, sizeof names);
            set_err(err, errlen,
                    "strategy '%s' has no option '%.*s' (options: %s)",
                    s->name, (int)sizeof o->key, o->key, names);
            return DQ_EINVAL;
        }
    }
    for (size_t j = 0; dq_strategy_option(s, j) != NULL; j++) {
        const dq_optdef *d = dq_strategy_option(s, j);
        const char *val = d->def ? d->def : "";

        if (ndef >= DQ_MAX_OPTS) {
            set_err(err, errlen, "strategy '%s' declares more than %d options",
                    s->name, DQ_MAX_OPTS);
            return DQ_EINVAL;
        }
        for (size_t i = 0; i < nopts; i++) /* last given wins */
            if (strncmp(opts[i].key, d->name, sizeof opts[i].key) == 0)
                val = opts[i].val;
        if (strlen(d->name) >= sizeof out[ndef].key ||
            strnlen(val, sizeof out[ndef].val) >= sizeof out[ndef].val) {
            set_err(err, errlen, "strategy '%s': option '%s' too long", s->name,
                    d->name);
            return DQ_EINVAL;
        }
        snprintf(out[ndef].key, sizeof out[ndef].key, "%s", d->name);
        snprintf(out[ndef].val, sizeof out[ndef].val, "%s", val);
        if ((rc = check_value(s->name, d, out[ndef].val, err, errlen)) != DQ_OK)
            return rc;
        ndef++;
    }
    *nout = ndef;
    return DQ_OK;
}

int dq_opts_check(const dq_strategy *s, const dq_opt *opts, size_t nopts,
                  char *err, size_t errlen)
{
    dq_opt resolved[DQ_MAX_OPTS];
    size_t n;

    if (s == NULL) {
        set_err(err, errlen, "dq_opts_check: strategy is NULL");
        return DQ_EINVAL;
    }
    return resolve_options(s, opts, nopts, resolved, &n, err, errlen);
}

/* strdup that keeps NULL as NULL; sets *fail on allocation failure. */
static char *dup_or_null(const char *s, bool *fail)
{
    char *d;

    if (s == NULL)
        return NULL;
    d = strdup(s);
    if (d == NULL)
        *fail = true;
    return d;
}

static void free_cfg_strings(dq_queue *q)
{
    free((char *)q->cfg.redis_host);
    free((char *)q->cfg.redis_user);
    if (q->cfg.redis_password != NULL) {
        char *p = (char *)q->cfg.redis_password;
        explicit_bzero(p, strlen(p));
        free(p);
    }
    free((char *)q->cfg.consumer);
    free((char *)q->cfg.sentinels);
    free((char *)q->cfg.sentinel_master);
    q->cfg.redis_host = q->cfg.redis_user = NULL;
    q->cfg.redis_password = q->cfg.consumer = NULL;
    q->cfg.sentinels = q->cfg.sentinel_master = NULL;
}

/* ---- Wrappers ------------------------------------------------------------ */

static int confirmed(dq_queue *q, int rc, const char *op, const char *id);

int dq_open(const dq_strategy *s, const dq_config *cfg, dq_queue **out,
            char *err, size_t errlen)
{
    dq_queue *q;
    bool fail = false;
    int rc;

    if (out != NULL)
        *out = NULL;
    if (s == NULL || cfg == NULL || out == NULL) {
        set_err(err, errlen, "dq_open: strategy, config and out are required");
        return DQ_EINVAL;
    }
    if (s->open == NULL || s->enqueue == NULL || s->claim == NULL ||
        s->ack == NULL || s->close == NULL) {
        set_err(err, errlen, "strategy '%s' lacks a required operation",
                s->name);
        return DQ_EINVAL;
    }
    if (!queue_name_ok(cfg->queue)) {
        set_err(err, errlen,
                "queue name '%s': expected 1 to 64 of [A-Za-z0-9_.-]",
                cfg->queue ? cfg->queue : "(null)");
        return DQ_EINVAL;
    }
    q = calloc(1, sizeof *q);
    if (q == NULL) {
        set_err(err, errlen, "dq_open: out of memory");
        return DQ_ENOMEM;
    }
    q->s = s;
    snprintf(q->queue, sizeof q->queue, "%s", cfg->queue);
    rc = resolve_options(s, cfg->opts, cfg->nopts, q->opts, &q->nopts, err,
                         errlen);
    if (rc != DQ_OK)
        goto free_q;

    q->cfg = *cfg;
    q->cfg.queue = q->queue;
    q->cfg.opts = q->opts;
    q->cfg.nopts = q->nopts;
    q->cfg.redis_host = dup_or_null(cfg->redis_host, &fail);
    q->cfg.redis_user = dup_or_null(cfg->redis_user, &fail);
    q->cfg.redis_password = dup_or_null(cfg->redis_password, &fail);
    q->cfg.consumer = dup_or_null(cfg->consumer, &fail);
    q->cfg.sentinels = dup_or_null(cfg->sentinels, &fail);
    q->cfg.sentinel_master = dup_or_null(cfg->sentinel_master, &fail);
    if (fail) {
        set_err(err, errlen, "dq_open: out of memory");
        rc = DQ_ENOMEM;
        goto free_strings;
    }

    rc = s->open(q);
    if (rc != DQ_OK) {
        if (q->err[0] == '\0')
            dq_fail(q, rc, "strategy '%s': open failed: %s", s->name,
                    dq_result_name(rc));
        set_err(err, errlen, "%s", q->err);
        goto free_strings;
    }
    *out = q;
    return DQ_OK;

free_strings:
    free_cfg_strings(q);
free_q:
    free(q);
    return rc;
}

void dq_close(dq_queue *q)
{
    dq_close_into(q, NULL);
}

void dq_close_into(dq_queue *q, dq_counters *sum)
{
    if (q == NULL)
        return;
    q->s->close(q);
    if (sum != NULL) {
        sum->round_trips += q->counters.round_trips;
        sum->empty_polls += q->counters.empty_polls;
        sum->lost_races += q->counters.lost_races;
        sum->wakeups += q->counters.wakeups;
        sum->putbacks += q->counters.putbacks;
    }
    free_cfg_strings(q);
    free(q);
}

static int check_id(dq_queue *q, const char *id)
{
    size_t n;

    if (id == NULL)
        return dq_fail(q, DQ_EINVAL, "task id is NULL");
    n = strnlen(id, DQ_ID_MAX);
    if (n == 0 || n >= DQ_ID_MAX)
        return dq_fail(q, DQ_EINVAL, "task id: expected 1 to %d bytes",
                       DQ_ID_MAX - 1);
    return DQ_OK;
}

/* Due times a ZSet score (a double) holds exactly, and that strategies may
 * turn into microseconds (due_ms * 1000) without overflowing int64_t. */
static int check_due(dq_queue *q, const char *what, const char *id,
                     int64_t due_ms)
{
    if (due_ms > DQ_DUE_MAX_MS || due_ms < -DQ_DUE_MAX_MS)
        return dq_fail(q, DQ_EINVAL,
                       "%s %s: due_ms %lld outside [-2^53, 2^53] ms", what,
                       id, (long long)due_ms);
    return DQ_OK;
}

int dq_enqueue(dq_queue *q, const char *id, const void *payload,
               size_t payload_len, int64_t due_ms)
{
    int rc;

    if (q == NULL)
        return DQ_EINVAL;
    if ((rc = check_id(q, id)) != DQ_OK)
        return rc;
    if ((rc = check_due(q, "enqueue", id, due_ms)) != DQ_OK)
        return rc;
    if (payload == NULL && payload_len > 0)
        return dq_fail(q, DQ_EINVAL, "enqueue %s: payload NULL with length %zu",
                       id, payload_len);
    if (payload == NULL)
        payload = "";
    rc = q->s->enqueue(q, id, payload, payload_len, due_ms);
    return confirmed(q, rc, "enqueue", id);
}

int dq_enqueue_many(dq_queue *q, const dq_enqueue_item *items, size_t n)
{
    int rc;

    if (q == NULL)
        return DQ_EINVAL;
    if (n == 0)
        return DQ_OK;
    if (items == NULL)
        return dq_fail(q, DQ_EINVAL, "enqueue_many: items NULL with n %zu", n);
    for (size_t i = 0; i < n; i++) {
        if ((rc = check_id(q, items[i].id)) != DQ_OK) {
            char why[sizeof q->err];
            memcpy(why, q->err, sizeof why);
            return dq_fail(q, rc, "enqueue_many: item %zu: %.200s", i, why);
        }
        if (items[i].due_ms > DQ_DUE_MAX_MS || items[i].due_ms < -DQ_DUE_MAX_MS)
            return dq_fail(q, DQ_EINVAL, "enqueue_many: item %zu (%s): "
                           "due_ms %lld outside [-2^53, 2^53] ms", i,
                           items[i].id, (long long)items[i].due_ms);
        if (items[i].payload == NULL && items[i].payload_len > 0)
            return dq_fail(q, DQ_EINVAL, "enqueue_many: item %zu (%s): "
                           "payload NULL with length %zu", i, items[i].id,
                           items[i].payload_len);
    }
    if (q->s->enqueue_many != NULL)
        return confirmed(q, q->s->enqueue_many(q, items, n), "enqueue_many",
                         items[0].id);
    for (size_t i = 0; i < n; i++) {
        const void *pl = items[i].payload != NULL ? items[i].payload : "";
        rc = q->s->enqueue(q, items[i].id, pl, items[i].payload_len,
                           items[i].due_ms);
        if (rc != DQ_OK)
            return rc;
    }
    return confirmed(q, DQ_OK, "enqueue_many", items[0].id);
}

int dq_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    int rc;

    if (q == NULL)
        return DQ_EINVAL;
    if (out == NULL)
        return dq_fail(q, DQ_EINVAL, "claim: out is NULL");
    if (timeout_ms < 0)
        return dq_fail(q, DQ_EINVAL, "claim: timeout_ms %lld < 0",
                       (long long)timeout_ms);
    /* Longer waits are cut to the maximum, so that the strategies' wait
     * arithmetic (timeout_ms * 1000, poll()'s int ms) cannot overflow;
     * a claim may return DQ_EMPTY early, which the contract allows. */
    if (timeout_ms > DQ_CLAIM_TIMEOUT_MAX_MS)
        timeout_ms = DQ_CLAIM_TIMEOUT_MAX_MS;
    /* *out is overwritten, not freed: the caller clears a task it got. */
    memset(out, 0, sizeof *out);
    rc = confirmed(q, q->s->claim(q, timeout_ms, out), "claim", out->id);
    if (rc != DQ_OK && rc != DQ_EMPTY)
        dq_task_clear(out); /* not confirmed: not handed out (dq.h) */
    return rc;
}

int dq_ack(dq_queue *q, const dq_task *t)
{
    if (q == NULL)
        return DQ_EINVAL;
    if (t == NULL)
        return dq_fail(q, DQ_EINVAL, "ack: task is NULL");
    return confirmed(q, q->s->ack(q, t), "ack", t->id);
}

int dq_cancel(dq_queue *q, const char *id)
{
    int rc;

    if (q == NULL)
        return DQ_EINVAL;
    if (q->s->cancel == NULL)
        return dq_fail(q, DQ_EUNSUPPORTED, "strategy '%s' has no cancel",
                       q->s->name);
    if ((rc = check_id(q, id)) != DQ_OK)
        return rc;
    return q->s->cancel(q, id);
}

int dq_reschedule(dq_queue *q, const char *id, int64_t due_ms)
{
    int rc;

    if (q == NULL)
        return DQ_EINVAL;
    if (q->s->reschedule == NULL)
        return dq_fail(q, DQ_EUNSUPPORTED, "strategy '%s' has no reschedule",
                       q->s->name);
    if ((rc = check_id(q, id)) != DQ_OK)
        return rc;
    if ((rc = check_due(q, "reschedule", id, due_ms)) != DQ_OK)
        return rc;
    return q->s->reschedule(q, id, due_ms);
}

int64_t dq_pending(dq_queue *q)
{
    if (q == NULL)
        return DQ_EINVAL;
    if (q->s->pending == NULL)
        return dq_fail(q, DQ_EUNSUPPORTED, "strategy '%s' has no pending",
                       q->s->name);
    return q->s->pending(q);
}

int dq_purge(dq_queue *q)
{
    if (q == NULL)
        return DQ_EINVAL;
    if (q->s->purge == NULL)
        return dq_fail(q, DQ_EUNSUPPORTED, "strategy '%s' has no purge",
                       q->s->name);
    return q->s->purge(q);
}

int dq_exists(dq_queue *q)
{
    if (q == NULL)
        return DQ_EINVAL;
    if (q->s->exists == NULL)
        return dq_fail(q, DQ_EUNSUPPORTED, "strategy '%s' has no exists",
                       q->s->name);
    return q->s->exists(q);
}

void dq_task_clear(dq_task *t)
{
    if (t == NULL)
        return;
    free(t->payload);
    memset(t, 0, sizeof *t);
}

/* ---- Clock ----------------------------------------------------------------- */

static int64_t clock_us(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t dq_wall_us(void)
{
    return clock_us(CLOCK_REALTIME);
}

/* The handle's clock offset: its fixed skew plus its current step. */
static int64_t clock_offset(const dq_queue *q)
{
    if (q == NULL)
        return 0;
    if (q->cfg.clock_step_us == NULL)
        return q->cfg.clock_offset_us;
    return q->cfg.clock_offset_us +
           atomic_load_explicit(q->cfg.clock_step_us, memory_order_relaxed);
}

int64_t dq_now_us(const dq_queue *q)
{
    return dq_wall_us() + clock_offset(q);
}

int64_t dq_now_ms(const dq_queue *q)
{
    int64_t us = dq_now_us(q);

    /* Floor division, so a negative offset cannot round "now" upwards. */
    return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

int64_t dq_now_coarse_us(const dq_queue *q)
{
    return clock_us(CLOCK_REALTIME_COARSE) + clock_offset(q);
}

int64_t dq_mono_us(void)
{
    return clock_us(CLOCK_MONOTONIC);
}

int64_t dq_deadline_us(int64_t timeout_ms)
{
    int64_t now = dq_mono_us();

    if (timeout_ms <= 0)
        return now;
    if (timeout_ms > (INT64_MAX - now) / 1000)
        return INT64_MAX;
    return now + timeout_ms * 1000;
}

void dq_sleep_us(int64_t us)
{
    struct timespec req, rem;

    if (us <= 0)
        return;
    req.tv_sec = (time_t)(us / 1000000);
    req.tv_nsec = (long)(us % 1000000) * 1000;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR)
        req = rem;
}

/* ---- Retries and dead letters -------------------------------------------- */

int dq_nack(dq_queue *q, const dq_task *t, int64_t delay_ms)
{
    if (q == NULL)
        return DQ_EINVAL;
    if (q->s->nack == NULL)
        return dq_fail(q, DQ_EUNSUPPORTED, "strategy '%s' has no nack",
                       q->s->name);
    if (t == NULL)
        return dq_fail(q, DQ_EINVAL, "nack: task is NULL");
    if (delay_ms < 0 || delay_ms > DQ_NACK_DELAY_MAX_MS)
        return dq_fail(q, DQ_EINVAL, "nack %s: delay_ms %lld outside [0, "
                       "2^52] ms", t->id, (long long)delay_ms);
    return confirmed(q, q->s->nack(q, t, delay_ms), "nack", t->id);
}

int64_t dq_dead_letters(dq_queue *q)
{
    if (q == NULL)
        return DQ_EINVAL;
    if (q->s->dead_letters == NULL)
        return dq_fail(q, DQ_EUNSUPPORTED, "strategy '%s' has no "
                       "dead-letter set", q->s->name);
    return q->s->dead_letters(q);
}

int dq_dead_letter_ids(dq_queue *q, dq_id_fn fn, void *arg)
{
    if (q == NULL || fn == NULL)
        return DQ_EINVAL;
    if (q->s->dead_letter_ids == NULL)
        return dq_fail(q, DQ_EUNSUPPORTED, "strategy '%s' has no "
                       "dead-letter set", q->s->name);
    return q->s->dead_letter_ids(q, fn, arg);
}

/* ---- Options common to every Redis strategy, and the replica wait ---------
 * Declared once here and merged into every DQ_G_NEEDS_REDIS strategy's
 * options by dq_strategy_option(), so that checking, defaults, dq_opt_*
 * and `dqlab list -v` see them as the strategy's own.  rconn.c reads
 * them at connect and sets q->redis_confirm when wait > 0. */
const dq_optdef dq_redis_options[] = {
    DQ_OPTDEF_INT("wait", "0", 0, 16,
                  "replicas that must have each enqueue, claim and ack "
                  "before it returns (Redis WAIT), else it fails; 0: none"),
    DQ_OPTDEF_INT("wait_timeout_ms", "1000", 1, 5000,
                  "how long WAIT waits for them, ms (1..5000)"),
    DQ_OPTDEF_END,
};

const dq_optdef *dq_strategy_option(const dq_strategy *s, size_t i)
{
    size_t own = 0;

    if (s == NULL)
        return NULL;
    while (s->options != NULL && s->options[own].name != NULL)
        own++;
    if (i < own)
        return &s->options[i];
    if (!(s->flags & DQ_G_NEEDS_REDIS))
        return NULL;
    for (size_t j = 0; dq_redis_options[j].name != NULL; j++)
        if (j == i - own)
            return &dq_redis_options[j];
    return NULL;
}

/* The last step of a wrapper whose operation returned rc: when it
 * succeeded and the handle waits for replicas (q->redis_confirm, set by
 * rconn.c for wait > 0), the operation counts as done only once they
 * acknowledged its writes; otherwise the confirmation's DQ_E* code (with
 * q->err naming op and id) replaces DQ_OK. */
static int confirmed(dq_queue *q, int rc, const char *op, const char *id)
{
    char what[DQ_ID_MAX + 32];

    if (rc != DQ_OK || q->redis_confirm == NULL)
        return rc;
    snprintf(what, sizeof what, "%s %s", op, id);
    return q->redis_confirm(q, what);
}
