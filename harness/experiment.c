/* experiment.c -- experiment files and `dqlab experiment FILE`.
 *
 * Loading.  inih (Debian's libinih 55) parses the INI; it is built without
 * INI_HANDLER_LINENO, so the handler does not see line numbers.  We feed it
 * through ini_parse_stream() with our own line reader, which counts lines
 * (the handler runs while its line is the last one read, so the count is
 * the line of the key), checks section headers itself (an unknown
 * section is an error even when it holds no key) and tells the handler
 * whether the line continues the key above (inih's multi-line rule), so a
 * stray indentation is named as such instead of as a key given twice.
 * The first error wins; later ones are ignored, as ini_parse() itself
 * returns the first bad line.
 *
 * Option lists.  A comma list in [opts.NAME] (poll_ms = 10, 100) makes
 * the strategy a set of variants, one per combination of values
 * (expand_variants), so a strategy's options become a matrix dimension.
 *
 * Faults.  `faults` is a matrix dimension of one fault per trial (faults.h
 * specs, "none" = no fault); a fault that cannot act on a strategy is
 * skipped for it (dq_experiment_fault_applies, by faults.h
 * dq_fault_applies: restart-redis, pause-redis and mover-stall for heap,
 * which uses no Redis; mover-stall for a strategy whose consumers poll,
 * which has no subscribed or blocked connection), so the matrix is not
 * a plain product and dq_experiment_cell walks the strategy blocks.  Each
 * trial gets its fault, the consumer mode (process when the file says so
 * or the fault is kill-consumer) and the private server, which
 * restart-redis and pause-redis act on (trial.c sets and resets the AOF
 * mode itself).  The exit code counts dq_trial_violations (fault-aware:
 * what a fault lets the declared guarantees lose or repeat is not a
 * failure), see trial_violations().
 *
 * Running.  The matrix (strategy variant x fault x producers x consumers x
 * work_us x backlog x repeat) runs one trial at a time through dq_trial_run() (trial.c), each
 * with seed = experiment seed + trial index and its own queue name, so no
 * trial sees another's keys.  One private redis-server serves the whole run
 * (unless --redis names one); it is stopped on every exit path, and Ctrl-C
 * (SIGINT/SIGTERM/SIGHUP, signals.c) asks the running trial to stop through
 * dq_trial_interrupt(): the trials done so far stay on disk and meta.txt
 * says complete = no.
 *
 * Results follow Jepsen's store/<test>/<time>/ layout:
 *   results/NAME/YYYYmmdd-HHMMSS[-N]/trials.csv    one row per trial
 *                                   /meta.txt      parameters, environment
 *                                   /experiment.ini  copy of the file run
 *                                   /logs/trial-NNN.log  event logs
 *   results/NAME/latest -> YYYYmmdd-HHMMSS[-N]     last complete run
 * A run directory is never reused (a suffix is added when the name
 * exists); trials.csv and meta.txt are rewritten after every trial through
 * a temporary name and rename(), so a crash leaves the last good copy; the
 * `latest` link is replaced atomically (symlink to a temporary name, then
 * rename) and only for a complete run, so `dqlab report` never picks up a
 * run cut short by Ctrl-C.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <ini.h>

#include "checker.h"
#include "commands.h"
#include "experiment.h"
#include "parse.h"
#include "redis_server.h"
#include "redis_url.h"
#include "runmeta.h"
#include "signals.h"
#include "trial.h"
#include "trialcols.h"

/* Messages and paths go into fixed buffers with snprintf and are cut short
 * when they do not fit (a path near PATH_MAX, a message past its line);
 * GCC's format-truncation warning would flag every such call. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* ======================================================================
 * Loading
 * ====================================================================== */

/* Keys of [experiment]; the ones marked quick may appear in [quick]. */
enum {
    K_NAME, K_TITLE, K_DESCRIPTION, K_CLAIMS, K_PLOTS, K_STRATEGIES,
    K_PRODUCERS, K_CONSUMERS, K_WORK_US, K_TASKS, K_DELAY_MS,
    K_PAYLOAD_BYTES, K_GRACE_MS, K_REPEATS, K_SEED, K_BACKLOG,
    K_BACKLOG_DELAY_MS, K_IDLE_MS, K_CLAIM_TIMEOUT_MS, K_FAULTS,
    K_CONSUMER_MODE, K_ENQUEUE_BATCH, K_COUNT
};

static const struct {
    const char *name;
    bool quick;
} keys[K_COUNT] = {
    [K_NAME] = {"name", false},
    [K_TITLE] = {"title", false},
    [K_DESCRIPTION] = {"description", false},
    [K_CLAIMS] = {"claims", false},
    [K_PLOTS] = {"plots", false},
    [K_STRATEGIES] = {"strategies", true},
    [K_PRODUCERS] = {"producers", true},
    [K_CONSUMERS] = {"consumers", true},
    [K_WORK_US] = {"work_us", true},
    [K_TASKS] = {"tasks", true},
    [K_DELAY_MS] = {"delay_ms", true},
    [K_PAYLOAD_BYTES] = {"payload_bytes", true},
    [K_GRACE_MS] = {"grace_ms", true},
    [K_REPEATS] = {"repeats", true},
    [K_SEED] = {"seed", true},
    [K_BACKLOG] = {"backlog", true},
    [K_BACKLOG_DELAY_MS] = {"backlog_delay_ms", true},
    [K_IDLE_MS] = {"idle_ms", true},
    [K_CLAIM_TIMEOUT_MS] = {"claim_timeout_ms", true},
    [K_FAULTS] = {"faults", true},
    [K_CONSUMER_MODE] = {"consumer_mode", true},
    [K_ENQUEUE_BATCH] = {"enqueue_batch", true},
};

/* Figures the report knows how to draw (report.c). */
static const char *const plot_names[] = {"duplicates", "throughput",
                                         "lateness", "lateness-cdf",
                                         "idle-cost", "backlog-lateness",
                                         "loss", NULL};

/* Per registered strategy: its [opts.NAME] section. */
#define MAX_REGISTERED 64

typedef struct load_state {
    const char *path;
    FILE *f;
    int lineno;             /* lines read so far = line being handled */
    int experiment_line;    /* line of the [experiment] header, 0 if none */
    char *linebuf;          /* getline buffer */
    size_t linecap;
    /* How inih reads the line being handled (read_line mirrors its rules,
     * ini.c): an indented line after a key continues that key. */
    bool prev_key;          /* a key line was read in this section */
    int key_line;           /* the line of that key */
    bool continuation;      /* the line being handled continues it */
    char err[512];          /* first error, "" when none */
    dq_experiment base;     /* [experiment] */
    dq_experiment quick;    /* [quick] */
    bool set_base[K_COUNT], set_quick[K_COUNT];
    dq_opt opts[MAX_REGISTERED][DQ_MAX_OPTS];
    size_t nopts[MAX_REGISTERED];
    int strategies_line[2]; /* line of `strategies` in base / quick */
} load_state;

static void load_fail(load_state *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records "path:line: message" unless an error is already recorded. */
static void load_fail(load_state *st, const char *fmt, ...)
{
    if (st->err[0] != '\0')
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(st->err, sizeof st->err, "%s:%d: %s", st->path, st->lineno,
             msg);
}

static int registry_index(const char *name)
{
    for (int i = 0; dq_strategies[i] != NULL && i < MAX_REGISTERED; i++)
        if (strcmp(dq_strategies[i]->name, name) == 0)
            return i;
    return -1;
}

/* Comma-separated list of registered strategy names, for messages. */
static void registered_names(char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; dq_strategies[i] != NULL && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
                                dq_strategies[i]->name);
}

/* Checks a section header; returns false (error recorded) when unknown. */
static bool check_section(load_state *st, const char *sec)
{
    if (strcmp(sec, "experiment") == 0) {
        if (st->experiment_line == 0)
            st->experiment_line = st->lineno;
        return true;
    }
    if (strcmp(sec, "quick") == 0)
        return true;
    if (strncmp(sec, "opts.", 5) == 0) {
        if (registry_index(sec + 5) >= 0)
            return true;
        char names[256];
        registered_names(names, sizeof names);
        load_fail(st, "[%s]: unknown strategy '%.40s' (known: %s)", sec,
                  sec + 5, names);
        return false;
    }
    load_fail(st, "unknown section [%.40s] (expected [experiment], [quick] "
              "or [opts.STRATEGY])", sec);
    return false;
}

/* ini_reader: one line per call, counted.  Returns NULL at EOF or after an
 * error (which stops inih).  It also classifies the line the way inih
 * will (ini.c, INI_ALLOW_BOM and INI_ALLOW_MULTILINE): a UTF-8 BOM at the
 * start of line 1 is skipped; blank lines and lines starting with ';' or
 * '#' after blanks are comments; a non-blank line starting with white
 * space after a key of the same section continues that key, even when it
 * looks like "key = value" or "[section]"; otherwise "[name]" is a section
 * header. */
static char *read_line(char *str, int num, void *stream)
{
    load_state *st = stream;
    if (st->err[0] != '\0')
        return NULL;
    errno = 0;
    ssize_t n = getline(&st->linebuf, &st->linecap, st->f);
    if (n < 0) {
        if (ferror(st->f)) {
            st->lineno++;
            load_fail(st, "read error: %s", strerror(errno ? errno : EIO));
        }
        return NULL;
    }
    st->lineno++;
    if (n >= num) {
        load_fail(st, "line longer than %d bytes (continue a long value on "
                  "an indented next line)", num - 2);
        return NULL;
    }
    memcpy(str, st->linebuf, (size_t)n + 1);

    const unsigned char *line = (const unsigned char *)st->linebuf, *p = line;
    if (st->lineno == 1 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF)
        p += 3;
    while (*p != '\0' && isspace(*p))
        p++;
    st->continuation = false;
    if (*p == '\0' || *p == ';' || *p == '#')
        return str;
    if (st->prev_key && p > line) {
        st->continuation = true;
        return str;
    }
    if (*p == '[') {
        const char *end = strchr((const char *)p, ']');
        if (end == NULL) {
            load_fail(st, "section header without ']'");
            return NULL;
        }
        char sec[64];
        snprintf(sec, sizeof sec, "%.*s", (int)(end - (const char *)p - 1),
                 (const char *)p + 1);
        if (!check_section(st, sec))
            return NULL;
        st->prev_key = false;
        return str;
    }
    st->prev_key = true;
    st->key_line = st->lineno;
    return str;
}

/* Records the one message every repeated list item gets:
 * "KEY: 'VALUE' listed twice". */
static void fail_repeated(load_state *st, const char *key, const char *val)
{
    load_fail(st, "%s: '%.60s' listed twice", key, val);
}

/* True when list items a and b are the same value: equal text, or both
 * integers of equal value ("10" and "010"). */
static bool same_item(const char *a, const char *b)
{
    char *ea, *eb;
    long long va, vb;

    if (strcmp(a, b) == 0)
        return true;
    errno = 0;
    va = strtoll(a, &ea, 10);
    vb = strtoll(b, &eb, 10);
    return errno == 0 && ea != a && eb != b && *ea == '\0' && *eb == '\0' &&
           va == vb;
}

/* Checks tok[0..n) for an item listed twice; records the message (key:
 * the key as named in it) and returns false at the first one. */
static bool check_unique(load_state *st, const char *key, char *const *tok,
                         int n)
{
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++)
            if (same_item(tok[i], tok[j])) {
                fail_repeated(st, key, tok[i]);
                return false;
            }
    return true;
}

/* Splits a list on commas and blanks into tokens (pointers into buf, which
 * is modified).  Returns the count, or -1 when more than max. */
static int split_list(char *buf, char **tok, int max)
{
    int n = 0;
    for (char *p = strtok(buf, ", \t"); p != NULL; p = strtok(NULL, ", \t")) {
        if (n == max)
            return -1;
        tok[n++] = p;
    }
    return n;
}

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 48)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
            return false;
    return true;
}

static bool valid_claim(const char *s)
{
    return strlen(s) == 3 && s[0] == 'C' && isdigit((unsigned char)s[1]) &&
           isdigit((unsigned char)s[2]);
}

/* Parses a list of integers in [min, max] for key into out/n. */
static bool parse_int_list(load_state *st, const char *key, const char *val,
                           int64_t min, int64_t max, int64_t *out, size_t *n)
{
    char buf[256], *tok[DQ_EXP_MAX_LIST + 1];
    snprintf(buf, sizeof buf, "%s", val);
    int nt = split_list(buf, tok, DQ_EXP_MAX_LIST);
    if (nt < 0) {
        load_fail(st, "%s: more than %d values", key, DQ_EXP_MAX_LIST);
        return false;
    }
    if (nt == 0) {
        load_fail(st, "%s: empty list", key);
        return false;
    }
    char what[600], perr[700];
    snprintf(what, sizeof what, "%s:%d: %s", st->path, st->lineno, key);
    for (int i = 0; i < nt; i++) {
        if (dq_parse_i64(what, tok[i], min, max, &out[i], perr,
                         sizeof perr) != 0) {
            if (st->err[0] == '\0')
                snprintf(st->err, sizeof st->err, "%s", perr);
            return false;
        }
        for (int j = 0; j < i; j++)
            if (out[j] == out[i]) {
                fail_repeated(st, key, tok[i]);
                return false;
            }
    }
    *n = (size_t)nt;
    return true;
}

static bool parse_one(load_state *st, const char *key, const char *val,
                      int64_t min, int64_t max, int64_t *out)
{
    char what[600], perr[700];
    snprintf(what, sizeof what, "%s:%d: %s", st->path, st->lineno, key);
    if (dq_parse_i64(what, val, min, max, out, perr, sizeof perr) != 0) {
        if (st->err[0] == '\0')
            snprintf(st->err, sizeof st->err, "%s", perr);
        return false;
    }
    return true;
}

/* The faults list (or, continued, more items of it) into e: each item a
 * faults.h spec or "none". */
static bool parse_faults(load_state *st, dq_experiment *e, const char *val,
                         bool continued)
{
    char buf[256], *tok[DQ_EXP_MAX_LIST + 1];
    snprintf(buf, sizeof buf, "%s", val);
    int nt = split_list(buf, tok, DQ_EXP_MAX_LIST);
    if (!continued)
        e->nfaults = 0;
    if (nt < 0 || e->nfaults + (size_t)nt > DQ_EXP_MAX_LIST) {
        load_fail(st, "faults: more than %d values", DQ_EXP_MAX_LIST);
        return false;
    }
    if (nt == 0) {
        load_fail(st, "faults: empty list (write none for no fault)");
        return false;
    }
    for (int i = 0; i < nt; i++) {
        size_t n = e->nfaults;
        dq_fault *f = &e->faults[n];
        memset(f, 0, sizeof *f);
        if (strcmp(tok[i], "none") == 0) {
            f->kind = DQ_FAULT_NONE;
            snprintf(e->fault_specs[n], sizeof e->fault_specs[n], "none");
        } else {
            char ferr[300];
            if (dq_fault_parse(tok[i], f, ferr, sizeof ferr) != 0) {
                load_fail(st, "faults: %s", ferr);
                return false;
            }
            dq_fault_format(f, e->fault_specs[n], sizeof e->fault_specs[n]);
        }
        for (size_t j = 0; j < n; j++)
            if (strcmp(e->fault_specs[j], e->fault_specs[n]) == 0) {
                fail_repeated(st, "faults", e->fault_specs[n]);
                return false;
            }
        e->nfaults++;
    }
    return true;
}

/* One key of [experiment] or [quick] into e. */
static bool set_key(load_state *st, dq_experiment *e, bool *set, int k,
                    const char *val, bool in_quick)
{
    const char *key = keys[k].name;
    /* An indented line continues the key above it (inih multi-line: the
     * handler sees the same key again); on_key let only description and
     * faults through. */
    bool continued = st->continuation;
    if (set[k] && !continued) {
        load_fail(st, "%s given twice in [%s]", key,
                  in_quick ? "quick" : "experiment");
        return false;
    }
    set[k] = true;
    char buf[256], *tok[DQ_EXP_MAX_CLAIMS + 1];
    int64_t v[DQ_EXP_MAX_LIST];
    size_t n;

    switch (k) {
    case K_NAME:
        if (!valid_name(val)) {
            load_fail(st, "name: '%.60s' must be 1-48 of [A-Za-z0-9_-]", val);
            return false;
        }
        snprintf(e->name, sizeof e->name, "%s", val);
        return true;
    case K_TITLE:
        snprintf(e->title, sizeof e->title, "%s", val);
        return true;
    case K_DESCRIPTION: {
        /* Continuation lines (inih multi-line) append with a space. */
        size_t len = strlen(e->description);
        snprintf(e->description + len, sizeof e->description - len, "%s%s",
                 len ? " " : "", val);
        return true;
    }
    case K_CLAIMS: {
        snprintf(buf, sizeof buf, "%s", val);
        int nt = split_list(buf, tok, DQ_EXP_MAX_CLAIMS);
        if (nt <= 0) {
            load_fail(st, nt < 0 ? "claims: too many" : "claims: empty list");
            return false;
        }
        for (int i = 0; i < nt; i++) {
            if (!valid_claim(tok[i])) {
                load_fail(st, "claims: '%.20s' is not a claim id like C01",
                          tok[i]);
                return false;
            }
            snprintf(e->claims[i], sizeof e->claims[i], "%s", tok[i]);
        }
        if (!check_unique(st, key, tok, nt))
            return false;
        e->nclaims = (size_t)nt;
        return true;
    }
    case K_PLOTS: {
        snprintf(buf, sizeof buf, "%s", val);
        int nt = split_list(buf, tok, 8);
        if (nt <= 0) {
            load_fail(st, nt < 0 ? "plots: too many" : "plots: empty list");
            return false;
        }
        for (int i = 0; i < nt; i++) {
            int j = 0;
            while (plot_names[j] && strcmp(plot_names[j], tok[i]) != 0)
                j++;
            if (plot_names[j] == NULL) {
                load_fail(st, "plots: unknown plot '%.30s' (known: "
                          "duplicates, throughput, lateness, lateness-cdf, "
                          "idle-cost, backlog-lateness, loss)", tok[i]);
                return false;
            }
            snprintf(e->plots[i], sizeof e->plots[i], "%s", tok[i]);
        }
        if (!check_unique(st, key, tok, nt))
            return false;
        e->nplots = (size_t)nt;
        return true;
    }
    case K_STRATEGIES: {
        snprintf(buf, sizeof buf, "%s", val);
        int nt = split_list(buf, tok, DQ_EXP_MAX_LIST);
        if (nt <= 0) {
            load_fail(st, nt < 0 ? "strategies: more than 16"
                                 : "strategies: empty list");
            return false;
        }
        for (int i = 0; i < nt; i++) {
            const dq_strategy *s = dq_strategy_find(tok[i]);
            if (s == NULL) {
                char names[256];
                registered_names(names, sizeof names);
                load_fail(st, "strategies: unknown strategy '%.40s' "
                          "(known: %s)", tok[i], names);
                return false;
            }
            for (int j = 0; j < i; j++)
                if (e->strategies[j].s == s) {
                    fail_repeated(st, key, s->name);
                    return false;
                }
            e->strategies[i].s = s;
        }
        e->nstrategies = (size_t)nt;
        st->strategies_line[in_quick] = st->lineno;
        return true;
    }
    case K_PRODUCERS:
    case K_CONSUMERS:
        if (!parse_int_list(st, key, val, 1, 1024, v, &n))
            return false;
        for (size_t i = 0; i < n; i++) {
            if (k == K_PRODUCERS)
                e->producers[i] = (int)v[i];
            else
                e->consumers[i] = (int)v[i];
        }
        if (k == K_PRODUCERS)
            e->nproducers = n;
        else
            e->nconsumers = n;
        return true;
    case K_WORK_US:
        if (!parse_int_list(st, key, val, 0, 10000000, e->work_us,
                            &e->nwork_us))
            return false;
        return true;
    case K_TASKS:
        return parse_one(st, key, val, 0, 100000000, &e->tasks);
    case K_BACKLOG:
        return parse_int_list(st, key, val, 0, 10000000, e->backlog,
                              &e->nbacklog);
    case K_BACKLOG_DELAY_MS:
        return parse_one(st, key, val, 0, 86400000 * 30LL,
                         &e->backlog_delay_ms);
    case K_IDLE_MS:
        return parse_one(st, key, val, 1, 3600000, &e->idle_ms);
    case K_CLAIM_TIMEOUT_MS:
        return parse_one(st, key, val, 0, 600000, &e->claim_timeout_ms);
    case K_ENQUEUE_BATCH:
        return parse_one(st, key, val, 1, DQ_TRIAL_MAX_ENQUEUE_BATCH,
                         &e->enqueue_batch);
    case K_FAULTS:
        return parse_faults(st, e, val, continued);
    case K_CONSUMER_MODE:
        if (strcmp(val, "thread") == 0) {
            e->consumer_process = false;
        } else if (strcmp(val, "process") == 0) {
            e->consumer_process = true;
        } else {
            load_fail(st, "consumer_mode: '%.40s': expected thread or "
                      "process", val);
            return false;
        }
        return true;
    case K_PAYLOAD_BYTES:
        return parse_one(st, key, val, 0, 1 << 20, &e->payload_bytes);
    case K_GRACE_MS:
        return parse_one(st, key, val, 0, 3600000, &e->grace_ms);
    case K_REPEATS: {
        int64_t r;
        if (!parse_one(st, key, val, 1, 1000, &r))
            return false;
        e->repeats = (int)r;
        return true;
    }
    case K_DELAY_MS: {
        char what[600], perr[700];
        snprintf(what, sizeof what, "%s:%d: %s", st->path, st->lineno, key);
        if (dq_parse_range(what, val, 0, 86400000, &e->delay_min_ms,
                           &e->delay_max_ms, perr, sizeof perr) != 0) {
            if (st->err[0] == '\0')
                snprintf(st->err, sizeof st->err, "%s", perr);
            return false;
        }
        return true;
    }
    case K_SEED: {
        char what[600], perr[700];
        snprintf(what, sizeof what, "%s:%d: %s", st->path, st->lineno, key);
        if (dq_parse_u64(what, val, &e->seed, perr, sizeof perr) != 0) {
            if (st->err[0] == '\0')
                snprintf(st->err, sizeof st->err, "%s", perr);
            return false;
        }
        return true;
    }
    }
    return false;
}

static int split_option_value(char *buf, char **items);

static int on_key(void *user, const char *section, const char *name,
                  const char *value)
{
    load_state *st = user;
    if (st->err[0] != '\0')
        return 0;

    bool exp_section = strcmp(section, "experiment") == 0 ||
                       strcmp(section, "quick") == 0;
    if (st->continuation &&
        !(exp_section && (strcmp(name, "description") == 0 ||
                          strcmp(name, "faults") == 0))) {
        char where[128] = "";
        if (!exp_section && section[0] != '\0')
            snprintf(where, sizeof where, "[%.60s]: ", section);
        load_fail(st, "%s%s: this indented line continues %s from line %d, "
                  "but only description and faults take continuation lines "
                  "(remove the indentation if it starts a new key)", where,
                  name, name, st->key_line);
        return 0;
    }
    if (exp_section) {
        bool q = section[0] == 'q';
        for (int k = 0; k < K_COUNT; k++) {
            if (strcmp(keys[k].name, name) != 0)
                continue;
            if (q && !keys[k].quick) {
                load_fail(st, "[quick]: %s cannot be overridden (only the "
                          "trial parameters can)", name);
                return 0;
            }
            return set_key(st, q ? &st->quick : &st->base,
                           q ? st->set_quick : st->set_base, k, value, q)
                       ? 1 : 0;
        }
        load_fail(st, "unknown key '%.40s' in [%s]", name, section);
        return 0;
    }
    if (strncmp(section, "opts.", 5) == 0) {
        int si = registry_index(section + 5);
        if (si < 0) {
            load_fail(st, "unknown strategy '%.40s'", section + 5);
            return 0;
        }
        const dq_strategy *s = dq_strategies[si];
        bool known = false;
        for (const dq_optdef *d = s->options; d && d->name; d++)
            if (strcmp(d->name, name) == 0)
                known = true;
        if (!known) {
            char names[256] = "";
            size_t off = 0;
            for (const dq_optdef *d = s->options;
                 d && d->name && off < sizeof names; d++)
                off += (size_t)snprintf(names + off, sizeof names - off,
                                        "%s%s", off ? ", " : "", d->name);
            load_fail(st, "[%s]: %s has no option '%.40s' (options: %s)",
                      section, s->name, name, off ? names : "none");
            return 0;
        }
        if (st->nopts[si] == DQ_MAX_OPTS) {
            load_fail(st, "[%s]: more than %d options", section, DQ_MAX_OPTS);
            return 0;
        }
        dq_opt *o = &st->opts[si][st->nopts[si]];
        if (strlen(name) >= sizeof o->key || strlen(value) >= sizeof o->val) {
            load_fail(st, "[%s]: %s: value too long", section, name);
            return 0;
        }
        for (size_t i = 0; i < st->nopts[si]; i++)
            if (strcmp(st->opts[si][i].key, name) == 0) {
                load_fail(st, "[%s]: %s given twice", section, name);
                return 0;
            }
        /* A comma list makes a matrix dimension (expanded at the end):
         * every item must be non-empty. */
        if (strchr(value, ',') != NULL) {
            char vbuf[sizeof o->val];
            snprintf(vbuf, sizeof vbuf, "%s", value);
            char *item = vbuf;
            int nitems = 0;
            for (;;) {
                char *comma = strchr(item, ',');
                if (comma != NULL)
                    *comma = '\0';
                char *tv = item;
                while (*tv == ' ' || *tv == '\t')
                    tv++;
                if (*tv == '\0') {
                    load_fail(st, "[%s]: %s: empty item in the list '%s'",
                              section, name, value);
                    return 0;
                }
                nitems++;
                if (comma == NULL)
                    break;
                item = comma + 1;
            }
            if (nitems > DQ_EXP_MAX_LIST) {
                load_fail(st, "[%s]: %s: more than %d values", section, name,
                          DQ_EXP_MAX_LIST);
                return 0;
            }
        }
        /* Every value must be one the strategy accepts (its ranges and
         * choices, dq_opts_check), so a bad one fails here with this
         * line, not when its trial opens the strategy. */
        {
            char vbuf[sizeof o->val], *items[DQ_EXP_MAX_LIST];
            snprintf(vbuf, sizeof vbuf, "%s", value);
            int nitems = split_option_value(vbuf, items);
            for (int i = 0; i < nitems; i++) {
                dq_opt one;
                char cerr[300] = "";
                snprintf(one.key, sizeof one.key, "%s", name);
                snprintf(one.val, sizeof one.val, "%s", items[i]);
                if (dq_opts_check(s, &one, 1, cerr, sizeof cerr) != DQ_OK) {
                    load_fail(st, "[%s]: %s", section,
                              cerr[0] ? cerr : "bad option value");
                    return 0;
                }
            }
            char key[128];
            snprintf(key, sizeof key, "[%.60s]: %s", section, name);
            if (!check_unique(st, key, items, nitems))
                return 0;
        }
        snprintf(o->key, sizeof o->key, "%s", name);
        snprintf(o->val, sizeof o->val, "%s", value);
        st->nopts[si]++;
        return 1;
    }
    /* Keys before any section. */
    load_fail(st, "key '%.40s' outside a section (start with [experiment])",
              name);
    return 0;
}

/* Splits an option value on commas into trimmed items (pointers into
 * buf).  Returns the count (>= 1; the loader already refused empty items
 * and lists longer than DQ_EXP_MAX_LIST). */
static int split_option_value(char *buf, char **items)
{
    int n = 0;
    char *item = buf;
    for (;;) {
        char *comma = strchr(item, ',');
        if (comma != NULL)
            *comma = '\0';
        while (*item == ' ' || *item == '\t')
            item++;
        size_t len = strlen(item);
        while (len > 0 && (item[len - 1] == ' ' || item[len - 1] == '\t'))
            item[--len] = '\0';
        if (n < DQ_EXP_MAX_LIST)
            items[n++] = item;
        if (comma == NULL)
            break;
        item = comma + 1;
    }
    return n;
}

/* Replaces b's strategy list by its variants: every combination of the
 * values of the option lists in [opts.NAME] (first option outermost).
 * Returns false (error recorded) when there are more than
 * DQ_EXP_MAX_VARIANTS. */
static bool expand_variants(load_state *st, dq_experiment *b)
{
    const dq_strategy *list[DQ_EXP_MAX_VARIANTS];
    size_t nlist = b->nstrategies, nout = 0;
    for (size_t i = 0; i < nlist; i++)
        list[i] = b->strategies[i].s;
    memset(b->strategies, 0, sizeof b->strategies);
    for (size_t i = 0; i < nlist; i++) {
        int si = registry_index(list[i]->name);
        size_t nopts = st->nopts[si];
        char bufs[DQ_MAX_OPTS][sizeof st->opts[0][0].val];
        char *items[DQ_MAX_OPTS][DQ_EXP_MAX_LIST];
        int counts[DQ_MAX_OPTS];
        size_t total = 1;
        for (size_t j = 0; j < nopts; j++) {
            snprintf(bufs[j], sizeof bufs[j], "%s", st->opts[si][j].val);
            counts[j] = split_option_value(bufs[j], items[j]);
            total *= (size_t)counts[j];
            if (total > DQ_EXP_MAX_VARIANTS)
                break;
        }
        if (total > DQ_EXP_MAX_VARIANTS - nout) {
            load_fail(st, "more than %d strategy variants (option lists "
                      "multiply; %s alone makes %zu)", DQ_EXP_MAX_VARIANTS,
                      list[i]->name, total);
            return false;
        }
        for (size_t v = 0; v < total; v++) {
            dq_exp_strategy *x = &b->strategies[nout++];
            x->s = list[i];
            x->nopts = nopts;
            size_t rest = v;
            for (size_t j = nopts; j-- > 0;) {
                size_t d = rest % (size_t)counts[j];
                rest /= (size_t)counts[j];
                snprintf(x->opts[j].key, sizeof x->opts[j].key, "%s",
                         st->opts[si][j].key);
                snprintf(x->opts[j].val, sizeof x->opts[j].val, "%s",
                         items[j][d]);
            }
        }
    }
    b->nstrategies = nout;
    return true;
}

static size_t inner_trials(const dq_experiment *e);

/* Refuses (error recorded) a matrix of more than DQ_EXP_MAX_TRIALS
 * trials, saying how large it is and from which lists: the run keeps one
 * result row per trial in memory. */
static bool check_matrix_size(load_state *st, const dq_experiment *b)
{
    size_t n = dq_experiment_ntrials(b), inner = inner_trials(b);
    if (n <= DQ_EXP_MAX_TRIALS)
        return true;
    load_fail(st, "the matrix holds %zu trials%s (%zu strategy variant and "
              "fault cells x %zu producers x %zu consumers x %zu work_us x "
              "%zu backlog x %d repeats), more than the %d one run may "
              "hold: shorten a list or lower repeats", n,
              b->quick ? " with --quick" : "", inner ? n / inner : 0,
              b->nproducers, b->nconsumers, b->nwork_us, b->nbacklog,
              b->repeats, DQ_EXP_MAX_TRIALS);
    return false;
}

int dq_experiment_load(const char *path, bool quick, dq_experiment *e,
                       char *err, size_t errlen)
{
    int ret = -1;
    load_state *st = calloc(1, sizeof *st);
    if (st == NULL) {
        snprintf(err, errlen, "%s:0: out of memory", path);
        return -1;
    }
    st->path = path;
    st->f = fopen(path, "r");
    if (st->f == NULL) {
        snprintf(st->err, sizeof st->err, "%s: %s", path, strerror(errno));
        goto free_state;
    }
    struct stat fst;
    if (fstat(fileno(st->f), &fst) == 0 && S_ISDIR(fst.st_mode)) {
        snprintf(st->err, sizeof st->err, "%s: is a directory, not an "
                 "experiment file (e.g. experiments/concurrency.ini)", path);
        goto close_file;
    }
    int rc = ini_parse_stream(read_line, st, on_key, st);
    if (st->err[0] == '\0' && rc != 0) {
        /* inih's own syntax errors (e.g. a line without '='). */
        snprintf(st->err, sizeof st->err, "%s:%d: syntax error (expected "
                 "[section], key = value or a comment)", path,
                 rc > 0 ? rc : st->lineno);
    }
    if (st->err[0] != '\0')
        goto close_file;

    /* Whole-file checks, reported at the [experiment] header (or line 1). */
    bool empty = st->lineno == 0;
    st->lineno = st->experiment_line ? st->experiment_line : 1;
    dq_experiment *b = &st->base;
    if (st->experiment_line == 0) {
        load_fail(st, "no [experiment] section%s",
                  empty ? " (the file is empty)" : "");
        goto close_file;
    }
    if (!st->set_base[K_NAME]) {
        load_fail(st, "[experiment] has no name (add: name = NAME)");
        goto close_file;
    }
    if (!st->set_base[K_STRATEGIES]) {
        load_fail(st, "[experiment] has no strategies list");
        goto close_file;
    }
    if (!st->set_base[K_CONSUMERS]) {
        load_fail(st, "[experiment] has no consumers list");
        goto close_file;
    }
    /* Defaults for what was not given (as dq_trial_defaults). */
    if (!st->set_base[K_PRODUCERS])
        b->producers[0] = 1, b->nproducers = 1;
    if (!st->set_base[K_WORK_US])
        b->work_us[0] = 0, b->nwork_us = 1;
    if (!st->set_base[K_TASKS])
        b->tasks = 1000;
    if (!st->set_base[K_DELAY_MS])
        b->delay_min_ms = 0, b->delay_max_ms = 100;
    if (!st->set_base[K_PAYLOAD_BYTES])
        b->payload_bytes = 16;
    if (!st->set_base[K_GRACE_MS])
        b->grace_ms = 2000;
    if (!st->set_base[K_REPEATS])
        b->repeats = 1;
    if (!st->set_base[K_SEED])
        b->seed = 1;
    if (!st->set_base[K_BACKLOG])
        b->backlog[0] = 0, b->nbacklog = 1;
    if (!st->set_base[K_BACKLOG_DELAY_MS])
        b->backlog_delay_ms = 3600000;
    if (!st->set_base[K_CLAIM_TIMEOUT_MS])
        b->claim_timeout_ms = 100;
    if (!st->set_base[K_ENQUEUE_BATCH])
        b->enqueue_batch = 1;
    if (!st->set_base[K_FAULTS]) {
        memset(&b->faults[0], 0, sizeof b->faults[0]);
        snprintf(b->fault_specs[0], sizeof b->fault_specs[0], "none");
        b->nfaults = 1;
    }
    if (!st->set_base[K_TITLE])
        snprintf(b->title, sizeof b->title, "%s", b->name);
    if (!st->set_base[K_PLOTS]) {
        snprintf(b->plots[0], sizeof b->plots[0], "duplicates");
        snprintf(b->plots[1], sizeof b->plots[1], "throughput");
        b->nplots = 2;
    }

    /* Idle mode needs its window, in both forms (a bad [quick] fails
     * without --quick too). */
    {
        int64_t bt = b->tasks, bi = b->idle_ms;
        int64_t qt = st->set_quick[K_TASKS] ? st->quick.tasks : bt;
        int64_t qi = st->set_quick[K_IDLE_MS] ? st->quick.idle_ms : bi;
        if ((bt == 0 && bi <= 0) || (qt == 0 && qi <= 0)) {
            load_fail(st, "tasks = 0 (idle mode) needs idle_ms = N (ms the "
                      "consumers run against the empty queue)%s",
                      (bt == 0 && bi <= 0) ? "" : " in [quick]");
            goto close_file;
        }
    }
    /* Faults and process mode need tasks, in both forms. */
    {
        bool bf = false, qf = false;
        for (size_t i = 0; i < b->nfaults; i++)
            bf = bf || b->faults[i].kind != DQ_FAULT_NONE;
        if (st->set_quick[K_FAULTS])
            for (size_t i = 0; i < st->quick.nfaults; i++)
                qf = qf || st->quick.faults[i].kind != DQ_FAULT_NONE;
        else
            qf = bf;
        bf = bf || b->consumer_process;
        qf = qf || (st->set_quick[K_CONSUMER_MODE]
                        ? st->quick.consumer_process : b->consumer_process);
        int64_t qt = st->set_quick[K_TASKS] ? st->quick.tasks : b->tasks;
        if ((b->tasks == 0 && bf) || (qt == 0 && qf)) {
            load_fail(st, "faults and consumer_mode = process need tasks "
                      "(not idle mode, tasks = 0)%s",
                      (b->tasks == 0 && bf) ? "" : " in [quick]");
            goto close_file;
        }
    }
    if (quick) {
        dq_experiment *q = &st->quick;
        bool *s = st->set_quick;
        if (s[K_STRATEGIES]) {
            memcpy(b->strategies, q->strategies, sizeof b->strategies);
            b->nstrategies = q->nstrategies;
        }
        if (s[K_PRODUCERS]) {
            memcpy(b->producers, q->producers, sizeof b->producers);
            b->nproducers = q->nproducers;
        }
        if (s[K_CONSUMERS]) {
            memcpy(b->consumers, q->consumers, sizeof b->consumers);
            b->nconsumers = q->nconsumers;
        }
        if (s[K_WORK_US]) {
            memcpy(b->work_us, q->work_us, sizeof b->work_us);
            b->nwork_us = q->nwork_us;
        }
        if (s[K_TASKS])
            b->tasks = q->tasks;
        if (s[K_DELAY_MS])
            b->delay_min_ms = q->delay_min_ms, b->delay_max_ms = q->delay_max_ms;
        if (s[K_PAYLOAD_BYTES])
            b->payload_bytes = q->payload_bytes;
        if (s[K_GRACE_MS])
            b->grace_ms = q->grace_ms;
        if (s[K_REPEATS])
            b->repeats = q->repeats;
        if (s[K_SEED])
            b->seed = q->seed;
        if (s[K_BACKLOG]) {
            memcpy(b->backlog, q->backlog, sizeof b->backlog);
            b->nbacklog = q->nbacklog;
        }
        if (s[K_BACKLOG_DELAY_MS])
            b->backlog_delay_ms = q->backlog_delay_ms;
        if (s[K_IDLE_MS])
            b->idle_ms = q->idle_ms;
        if (s[K_CLAIM_TIMEOUT_MS])
            b->claim_timeout_ms = q->claim_timeout_ms;
        if (s[K_ENQUEUE_BATCH])
            b->enqueue_batch = q->enqueue_batch;
        if (s[K_FAULTS]) {
            memcpy(b->faults, q->faults, sizeof b->faults);
            memcpy(b->fault_specs, q->fault_specs, sizeof b->fault_specs);
            b->nfaults = q->nfaults;
        }
        if (s[K_CONSUMER_MODE])
            b->consumer_process = q->consumer_process;
    }
    b->faults_given = st->set_base[K_FAULTS] ||
                      (quick && st->set_quick[K_FAULTS]);
    b->quick = quick;
    if (b->tasks > 0)
        b->idle_ms = 0;
    if (!expand_variants(st, b))
        goto close_file;
    if (dq_experiment_ntrials(b) == 0) {
        load_fail(st, "no trial to run: no fault listed applies to any "
                  "strategy listed (restart-redis, pause-redis and "
                  "mover-stall need a strategy that uses Redis)");
        goto close_file;
    }
    if (!check_matrix_size(st, b))
        goto close_file;
    snprintf(b->path, sizeof b->path, "%s", path);
    *e = *b;
    ret = 0;

close_file:
    fclose(st->f);
free_state:
    if (ret != 0)
        snprintf(err, errlen, "%s", st->err);
    free(st->linebuf);
    free(st);
    return ret;
}

void dq_experiment_free(dq_experiment *e)
{
    (void)e;
}

bool dq_experiment_fault_applies(const dq_strategy *s, const dq_fault *f)
{
    char why[200];
    return dq_fault_applies(f, s, why, sizeof why);
}

/* Faults of e that apply to strategy s. */
static size_t applicable_faults(const dq_experiment *e, const dq_strategy *s)
{
    size_t n = 0;
    for (size_t i = 0; i < e->nfaults; i++)
        if (dq_experiment_fault_applies(s, &e->faults[i]))
            n++;
    return n;
}

/* Trials of one (strategy variant, fault) pair. */
static size_t inner_trials(const dq_experiment *e)
{
    return e->nproducers * e->nconsumers * e->nwork_us * e->nbacklog *
           (size_t)e->repeats;
}

size_t dq_experiment_ntrials(const dq_experiment *e)
{
    size_t n = 0;
    for (size_t i = 0; i < e->nstrategies; i++)
        n += applicable_faults(e, e->strategies[i].s);
    return n * inner_trials(e);
}

void dq_experiment_cell(const dq_experiment *e, size_t index, dq_exp_cell *c)
{
    /* Strategy variant and fault first (their blocks differ in size when
     * a fault is skipped), then the regular inner dimensions. */
    size_t inner = inner_trials(e), i = index, si = 0, fi = 0;
    for (si = 0; si < e->nstrategies; si++) {
        size_t blk = applicable_faults(e, e->strategies[si].s) * inner;
        if (i < blk)
            break;
        i -= blk;
    }
    if (si == e->nstrategies) /* out of range: the last cell */
        si = e->nstrategies - 1, i = 0;
    c->strategy = &e->strategies[si];
    size_t want = i / inner, seen = 0;
    for (fi = 0; fi < e->nfaults; fi++) {
        if (!dq_experiment_fault_applies(c->strategy->s, &e->faults[fi]))
            continue;
        if (seen++ == want)
            break;
    }
    if (fi == e->nfaults)
        fi = 0;
    c->fault = &e->faults[fi];
    c->fault_spec = e->fault_specs[fi];
    i %= inner;
    c->repeat = (int)(i % (size_t)e->repeats) + 1;
    i /= (size_t)e->repeats;
    c->backlog = e->backlog[i % e->nbacklog];
    i /= e->nbacklog;
    c->work_us = e->work_us[i % e->nwork_us];
    i /= e->nwork_us;
    c->consumers = e->consumers[i % e->nconsumers];
    i /= e->nconsumers;
    c->producers = e->producers[i % e->nproducers];
}

/* ======================================================================
 * Running
 * ====================================================================== */

/* One finished trial, as written to trials.csv. */
typedef struct trial_row {
    dq_exp_cell cell;
    uint64_t seed;
    dq_trial_result r;
    size_t violations;        /* guarantees broken (trial_violations) */
} trial_row;

typedef struct run {
    const dq_experiment *e;
    char dir[PATH_MAX];       /* results/NAME/STAMP[-N] */
    char stamp[64];           /* basename of dir */
    char expdir[PATH_MAX];    /* results/NAME */
    trial_row *rows;
    size_t nrows;
    size_t ntrials;
    char redis_desc[300];     /* "private redis-server 127.0.0.1:PORT" */
    char redis_version[64];
    char started[64], finished[64];
    char command[1024];
    char error[512];          /* set when a trial failed */
    bool complete;
} run;

static void opts_string(const dq_exp_strategy *s, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < s->nopts && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s=%s",
                                i ? ";" : "", s->opts[i].key,
                                s->opts[i].val);
}

/* Opens the in-memory stream a run file (trials.csv, meta.txt) is
 * written to, on *buf and *len (set to NULL and 0 first).  Returns the
 * stream, or NULL with err.  run_file_close() ends it. */
static FILE *run_file_open(char **buf, size_t *len, char *err,
                           size_t errlen)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (f == NULL)
        snprintf(err, errlen, "open_memstream: %s", strerror(errno));
    return f;
}

/* Closes f (from run_file_open on buf and len), writes the text to
 * <rn->dir>/<name> atomically (dq_runmeta_write_atomic) and frees *buf.
 * Returns 0, or -1 with err ("writing <name>: out of memory" when the
 * stream failed, else the write's error). */
static int run_file_close(const run *rn, FILE *f, char **buf, size_t *len,
                          const char *name, char *err, size_t errlen)
{
    if (fclose(f) != 0) {
        free(*buf);
        snprintf(err, errlen, "writing %s: out of memory", name);
        return -1;
    }
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/%s", rn->dir, name);
    int rc = dq_runmeta_write_atomic(path, *buf, *len, err, errlen);
    free(*buf);
    return rc;
}

/* trials.csv: one row per trial, the columns of trialcols.h. */
static int write_csv(const run *rn, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    FILE *f = run_file_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    dq_trialrow_header(f);
    for (size_t i = 0; i < rn->nrows; i++) {
        const trial_row *t = &rn->rows[i];
        const dq_trial_result *r = &t->r;
        const dq_check *c = &r->check;
        const dq_counters *k = &r->counters;
        char opts[512];
        opts_string(t->cell.strategy, opts, sizeof opts);
        dq_trialrow row = {
            .experiment = rn->e->name, .trial = i + 1,
            .strategy = t->cell.strategy->s->name, .options = opts,
            .producers = t->cell.producers, .consumers = t->cell.consumers,
            .tasks = rn->e->tasks, .delay_min_ms = rn->e->delay_min_ms,
            .delay_max_ms = rn->e->delay_max_ms, .work_us = t->cell.work_us,
            .repeat = t->cell.repeat, .seed = t->seed,
            .enqueued = c->enqueued, .delivered = c->delivered,
            .deliveries = c->deliveries, .duplicates = c->duplicates,
            .lost = c->lost, .early = c->early,
            .lateness_p50_ms = c->lateness.p50_ms,
            .lateness_p90_ms = c->lateness.p90_ms,
            .lateness_p99_ms = c->lateness.p99_ms,
            .lateness_p999_ms = c->lateness.p999_ms,
            .lateness_max_ms = c->lateness.max_ms,
            .tasks_per_s = r->tasks_per_s, .elapsed_s = r->elapsed_s,
            .redis_commands = r->redis_commands,
            .round_trips = k->round_trips, .empty_polls = k->empty_polls,
            .lost_races = k->lost_races, .wakeups = k->wakeups,
            .putbacks = k->putbacks, .acked = c->acked,
            .unknown = c->unknown, .backlog = t->cell.backlog,
            .idle_ms = rn->e->idle_ms,
            .claim_timeout_ms = rn->e->claim_timeout_ms,
            .measured_s = r->measured_s,
            .redis_cpu_ms = r->redis_cpu_us >= 0
                                ? (double)r->redis_cpu_us / 1000.0 : -1,
            .backlog_enqueue_s = r->backlog_s, .fault = t->cell.fault_spec,
            .consumer_mode = r->process_mode ? "process" : "thread",
            .kills = r->kills, .restarts = r->restarts,
            .retries = r->retries, .redelivered = c->redelivered,
            .dup_fault = c->dup_fault, .dup_nofault = c->dup_nofault,
            .pending_end = c->pending_end, .lost_claimed = c->lost_claimed,
            .lost_nofault = c->lost_nofault, .early_fault = c->early_fault,
            .unacked = c->unacked,
            .redelivered_hidden = c->redelivered_hidden,
            .fault_windows = c->fault_windows, .violations = t->violations,
        };
        dq_trialrow_write(f, &row);
    }
    return run_file_close(rn, f, &buf, &len, "trials.csv", err, errlen);
}

static void join_ints(char *buf, size_t len, const int *v, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? ", " : "",
                                v[i]);
}

static int write_meta(const run *rn, char *err, size_t errlen)
{
    const dq_experiment *e = rn->e;
    char *buf;
    size_t len;
    FILE *f = run_file_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    char tmp[1024];
    fprintf(f, "# dqlab run metadata; key = value, one per line\n");
    dq_runmeta_kv(f, "experiment", e->name);
    dq_runmeta_kv(f, "title", e->title);
    dq_runmeta_kv(f, "description", e->description);
    size_t off = 0;
    tmp[0] = '\0';
    for (size_t i = 0; i < e->nclaims; i++)
        off += (size_t)snprintf(tmp + off, sizeof tmp - off, "%s%s",
                                i ? " " : "", e->claims[i]);
    dq_runmeta_kv(f, "claims", tmp);
    off = 0;
    tmp[0] = '\0';
    for (size_t i = 0; i < e->nplots; i++)
        off += (size_t)snprintf(tmp + off, sizeof tmp - off, "%s%s",
                                i ? " " : "", e->plots[i]);
    dq_runmeta_kv(f, "plots", tmp);
    dq_runmeta_kv(f, "file", e->path);
    dq_runmeta_kv(f, "file_copy", "experiment.ini");
    dq_runmeta_kv(f, "command", rn->command);
    dq_runmeta_kv(f, "quick", e->quick ? "yes" : "no");
    off = 0;
    tmp[0] = '\0';
    for (size_t i = 0; i < e->nstrategies; i++) {
        char o[512];
        opts_string(&e->strategies[i], o, sizeof o);
        off += (size_t)snprintf(tmp + off, sizeof tmp - off, "%s%s%s%s%s",
                                i ? ", " : "", e->strategies[i].s->name,
                                o[0] ? "(" : "", o, o[0] ? ")" : "");
    }
    dq_runmeta_kv(f, "strategies", tmp);
    join_ints(tmp, sizeof tmp, e->producers, e->nproducers);
    dq_runmeta_kv(f, "producers", tmp);
    join_ints(tmp, sizeof tmp, e->consumers, e->nconsumers);
    dq_runmeta_kv(f, "consumers", tmp);
    off = 0;
    tmp[0] = '\0';
    for (size_t i = 0; i < e->nwork_us; i++)
        off += (size_t)snprintf(tmp + off, sizeof tmp - off, "%s%" PRId64,
                                i ? ", " : "", e->work_us[i]);
    dq_runmeta_kv(f, "work_us", tmp);
    fprintf(f, "tasks = %" PRId64 "\n", e->tasks);
    fprintf(f, "delay_ms = %" PRId64 ":%" PRId64 "\n", e->delay_min_ms,
            e->delay_max_ms);
    fprintf(f, "payload_bytes = %" PRId64 "\n", e->payload_bytes);
    fprintf(f, "grace_ms = %" PRId64 "\n", e->grace_ms);
    fprintf(f, "repeats = %d\n", e->repeats);
    fprintf(f, "seed = %" PRIu64 "\n", e->seed);
    off = 0;
    tmp[0] = '\0';
    for (size_t i = 0; i < e->nbacklog; i++)
        off += (size_t)snprintf(tmp + off, sizeof tmp - off, "%s%" PRId64,
                                i ? ", " : "", e->backlog[i]);
    dq_runmeta_kv(f, "backlog", tmp);
    fprintf(f, "backlog_delay_ms = %" PRId64 "\n", e->backlog_delay_ms);
    fprintf(f, "idle_ms = %" PRId64 "\n", e->idle_ms);
    fprintf(f, "claim_timeout_ms = %" PRId64 "\n", e->claim_timeout_ms);
    fprintf(f, "enqueue_batch = %" PRId64 "\n", e->enqueue_batch);
    if (e->faults_given) {
        /* Only when the file lists faults: the report picks its loss
         * section by this key (section_loss.c). */
        off = 0;
        tmp[0] = '\0';
        for (size_t i = 0; i < e->nfaults; i++)
            off += (size_t)snprintf(tmp + off, sizeof tmp - off, "%s%s",
                                    i ? ", " : "", e->fault_specs[i]);
        dq_runmeta_kv(f, "faults", tmp);
    }
    dq_runmeta_kv(f, "consumer_mode", e->consumer_process ? "process" : "thread");
    fprintf(f, "trials_planned = %zu\n", rn->ntrials);
    fprintf(f, "trials_done = %zu\n", rn->nrows);
    dq_runmeta_kv(f, "complete", rn->complete ? "yes" : "no");
    if (rn->error[0])
        dq_runmeta_kv(f, "error", rn->error);
    dq_runmeta_kv(f, "redis", rn->redis_desc);
    dq_runmeta_kv(f, "redis_version", rn->redis_version);
    dq_runmeta_kv(f, "date", rn->started);
    dq_runmeta_kv(f, "finished", rn->finished[0] ? rn->finished : "");
    dq_runmeta_env(f);
    return run_file_close(rn, f, &buf, &len, "meta.txt", err, errlen);
}

static int copy_file(const char *from, const char *to, char *err,
                     size_t errlen)
{
    FILE *in = fopen(from, "r");
    if (in == NULL) {
        snprintf(err, errlen, "%s: %s", from, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0) {
        if (len + n > cap) {
            cap = (len + n) * 2;
            char *nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                fclose(in);
                snprintf(err, errlen, "%s: out of memory", from);
                return -1;
            }
            buf = nb;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(in);
    int rc = dq_runmeta_write_atomic(to, buf ? buf : "", len, err, errlen);
    free(buf);
    return rc;
}

/* Creates results/NAME/STAMP (runmeta.h: never an existing one). */
static int make_run_dir(run *rn, const char *results, char *err,
                        size_t errlen)
{
    snprintf(rn->expdir, sizeof rn->expdir, "%s/%s", results, rn->e->name);
    return dq_runmeta_make_dir(rn->expdir, rn->stamp, sizeof rn->stamp,
                               rn->dir, sizeof rn->dir, err, errlen);
}

#define CHECK_TIMEOUT_MS 2000

/* What a failed command on c says: the server's error reply, or the
 * transport error -- a socket timeout (hiredis 0.14: REDIS_ERR_IO with
 * EAGAIN) said as such, with the timeout. */
static const char *check_error(const redisContext *c, const redisReply *r,
                               char *buf, size_t len)
{
    if (r != NULL)
        return r->str;
    if (c->err == REDIS_ERR_IO && strcmp(c->errstr, strerror(EAGAIN)) == 0) {
        snprintf(buf, len, "timed out: no reply within %d ms",
                 CHECK_TIMEOUT_MS);
        return buf;
    }
    return c->errstr;
}

/* Removes the run directory make_run_dir just created, with the files the
 * run writes before its first trial, when writing them failed: a run that
 * never started leaves nothing behind. */
static void remove_new_run_dir(const run *rn)
{
    static const char *const files[] = {"experiment.ini", "meta.txt",
                                        "trials.csv", NULL};
    char path[PATH_MAX + 32];
    for (size_t i = 0; files[i] != NULL; i++) {
        snprintf(path, sizeof path, "%s/%s", rn->dir, files[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/logs", rn->dir);
    rmdir(path);
    rmdir(rn->dir);
}

/* Checks an external server (--redis) before anything is written: connect
 * (2 s timeout), AUTH when the URL has a password, SELECT db, PING, and
 * INFO server's redis_version into version.  Returns 0, or -1 with a
 * one-line message in err (never the password). */
static int check_redis(const dq_redis_target *t, char *version, size_t vlen,
                       char *err, size_t errlen)
{
    int ret = -1;
    redisReply *r = NULL;
    char why[128];
    snprintf(version, vlen, "unknown");
    struct timeval tv = {CHECK_TIMEOUT_MS / 1000,
                         (CHECK_TIMEOUT_MS % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(t->host, t->port, tv);
    if (c == NULL || c->err) {
        snprintf(err, errlen, "cannot connect: %s",
                 c ? c->errstr : "out of memory");
        goto done;
    }
    redisSetTimeout(c, tv);
    if (t->password[0]) {
        if (t->user[0])
            r = redisCommand(c, "AUTH %s %s", t->user, t->password);
        else
            r = redisCommand(c, "AUTH %s", t->password);
        if (r == NULL || r->type == REDIS_REPLY_ERROR) {
            snprintf(err, errlen, "AUTH failed: %s",
                     check_error(c, r, why, sizeof why));
            goto done;
        }
        freeReplyObject(r);
    }
    if (t->db != 0) {
        r = redisCommand(c, "SELECT %d", t->db);
        if (r == NULL || r->type == REDIS_REPLY_ERROR) {
            snprintf(err, errlen, "SELECT %d failed: %s", t->db,
                     check_error(c, r, why, sizeof why));
            goto done;
        }
        freeReplyObject(r);
    }
    r = redisCommand(c, "PING");
    if (r == NULL || r->type == REDIS_REPLY_ERROR) {
        /* e.g. NOAUTH when the server wants a password and the URL has
         * none */
        snprintf(err, errlen, "PING failed: %s",
                 check_error(c, r, why, sizeof why));
        goto done;
    }
    freeReplyObject(r);
    r = redisCommand(c, "INFO server");
    if (r != NULL && r->type == REDIS_REPLY_STRING)
        dq_runmeta_redis_version(r->str, version, vlen);
    ret = 0;
done:
    if (r != NULL)
        freeReplyObject(r);
    if (c != NULL)
        redisFree(c);
    return ret;
}

/* The length of the userinfo to mask in the URL at u ("redis://" or
 * "rediss://" already matched, scheme_len bytes): sets *from to its first
 * byte.  The authority runs to the next blank; the userinfo to its last
 * '@' (a password may hold '/', ':' or '@' unescaped).  All of it is
 * masked, the user name too: with an unescaped ':' in a password, what
 * looks like the user name is a piece of the password. */
static size_t url_secret(const char *u, size_t scheme_len, const char **from)
{
    const char *a = u + scheme_len;
    size_t n = strcspn(a, " \t\r\n");
    const char *at = NULL;
    for (size_t i = 0; i < n; i++)
        if (a[i] == '@')
            at = a + i;
    if (at == NULL || at == a)
        return 0;
    *from = a;
    return (size_t)(at - a);
}

void dq_redact_redis_urls(const char *in, char *out, size_t outlen)
{
    if (outlen == 0)
        return;
    size_t o = 0;
    for (const char *p = in; *p && o + 1 < outlen;) {
        size_t sl = strncasecmp(p, "redis://", 8) == 0    ? 8
                    : strncasecmp(p, "rediss://", 9) == 0 ? 9 : 0;
        const char *from = NULL;
        size_t n = sl ? url_secret(p, sl, &from) : 0;
        if (n == 0 && sl == 0) {
            out[o++] = *p++;
            continue;
        }
        if (n == 0) {  /* a URL without a password: copy its scheme */
            for (size_t i = 0; i < sl && o + 1 < outlen; i++)
                out[o++] = *p++;
            continue;
        }
        while (p < from && o + 1 < outlen)
            out[o++] = *p++;
        for (const char *m = "***"; *m && o + 1 < outlen; m++)
            out[o++] = *m;
        p = from + n;
    }
    out[o] = '\0';
}

void dq_experiment_command_line(int argc, char **argv, char *buf,
                                size_t len)
{
    char raw[2048];
    size_t off = 0;
    raw[0] = '\0';
    for (int i = 0; i < argc && off < sizeof raw; i++)
        off += (size_t)snprintf(raw + off, sizeof raw - off, "%s%s",
                                i ? " " : "bin/dqlab ", argv[i]);
    dq_redact_redis_urls(raw, buf, len);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: dqlab experiment FILE [--quick] [--results DIR] "
            "[--redis URL]\n"
            "  runs every trial of the experiment file and writes\n"
            "  DIR/NAME/YYYYmmdd-HHMMSS/{trials.csv,meta.txt,logs/} "
            "(DIR default: results)\n"
            "  --quick       apply the file's [quick] overrides\n"
            "  --redis URL   use this server (redis://[user:pass@]host:port"
            "[/db]) instead of a private one\n");
}

/* The guarantees trial t (run with p) broke, by dq_trial_violations
 * (trial.c): fault-aware, so what a fault allows the strategy's declared
 * guarantees to lose or repeat is not counted.  Two exceptions kept from
 * before faults: tasks lost in a trial without a fault are a warning of
 * the run (grace_ms too short for the machine), and tasks behind a backlog
 * not delivered by the end are the measurement (expiry-scale).  Appends
 * one line per broken guarantee to viol; returns how many. */
static size_t trial_violations(const dq_trial_params *p, const trial_row *t,
                               size_t index, char *viol, size_t len)
{
    const char *v[8];
    size_t n = dq_trial_violations(p, &t->r, v, 8), count = 0;
    size_t off = strlen(viol);
    for (size_t i = 0; i < n && i < 8; i++) {
        if (strncmp(v[i], "lost:", 5) == 0 &&
            (p->nfaults == 0 || t->cell.backlog > 0))
            continue;
        count++;
        off += (size_t)snprintf(viol + off, len > off ? len - off : 0,
                                "dqlab experiment: %s trial %zu%s%s%s: %s\n",
                                p->strategy->name, index + 1,
                                p->nfaults ? " (fault " : "",
                                p->nfaults ? t->cell.fault_spec : "",
                                p->nfaults ? ")" : "", v[i]);
    }
    return count;
}

int dq_cmd_experiment(int argc, char **argv)
{
    const char *file = NULL, *results = "results", *url = NULL;
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (strcmp(argv[i], "--results") == 0 ||
                   strcmp(argv[i], "--redis") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '\0') {
                fprintf(stderr, "dqlab experiment: %s needs a value\n",
                        argv[i]);
                return 2;
            }
            if (argv[i][2] == 'r' && argv[i][3] == 'e' && argv[i][4] == 's')
                results = argv[++i];
            else
                url = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            char a[256];
            dq_redact_redis_urls(argv[i], a, sizeof a);
            fprintf(stderr, "dqlab experiment: unknown option %s "
                    "(see dqlab experiment --help)\n", a);
            return 2;
        } else if (file != NULL) {
            char a[256], b[256];
            dq_redact_redis_urls(file, a, sizeof a);
            dq_redact_redis_urls(argv[i], b, sizeof b);
            fprintf(stderr, "dqlab experiment: one FILE only (got %s and "
                    "%s)\n", a, b);
            return 2;
        } else {
            file = argv[i];
        }
    }
    if (file == NULL) {
        fprintf(stderr, "dqlab experiment: missing FILE (see dqlab "
                "experiment --help)\n");
        return 2;
    }

    int ret = 2;
    char err[1024];
    dq_experiment *e = calloc(1, sizeof *e);
    run *rn = calloc(1, sizeof *rn);
    if (e == NULL || rn == NULL) {
        fprintf(stderr, "dqlab experiment: out of memory\n");
        goto free_all;
    }
    if (dq_experiment_load(file, quick, e, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab experiment: %s\n", err);
        goto free_all;
    }
    rn->e = e;
    rn->ntrials = dq_experiment_ntrials(e);
    rn->rows = calloc(rn->ntrials, sizeof *rn->rows);
    if (rn->rows == NULL) {
        fprintf(stderr, "dqlab experiment: out of memory\n");
        goto free_all;
    }
    dq_experiment_command_line(argc, argv, rn->command, sizeof rn->command);

    bool needs_redis = false;
    for (size_t i = 0; i < e->nstrategies; i++)
        if (e->strategies[i].s->flags & DQ_G_NEEDS_REDIS)
            needs_redis = true;

    /* Faults: restart-redis and pause-redis act on the private server
     * (checked against the cells that will run, so a fault skipped for
     * every strategy does not count); kill-consumer runs the consumers as
     * processes, said once here. */
    const dq_fault *kill_note = NULL;
    for (size_t i = 0; i < rn->ntrials; i++) {
        dq_exp_cell c;
        dq_experiment_cell(e, i, &c);
        if (url != NULL && dq_fault_needs_server(c.fault)) {
            fprintf(stderr, "dqlab experiment: %s: fault %s needs the "
                    "private redis-server dqlab starts itself; drop "
                    "--redis\n", file, c.fault_spec);
            goto free_all;
        }
        if (dq_fault_needs_process(c.fault) && !e->consumer_process)
            kill_note = c.fault;
    }
    if (kill_note != NULL)
        fprintf(stderr, "dqlab: note: %s trials run the consumers as "
                "processes (consumer_mode = process)\n",
                dq_fault_name(kill_note->kind));

    /* Ctrl-C / SIGTERM / SIGHUP: the handler (signals.c) asks the running
     * trial to stop; the loop below then keeps the trials done so far. */
    dq_signals_install();
    bool interrupted = false;

    dq_redis_server server;
    memset(&server, 0, sizeof server);
    dq_redis_target target;
    memset(&target, 0, sizeof target);
    snprintf(rn->redis_desc, sizeof rn->redis_desc, "none");
    snprintf(rn->redis_version, sizeof rn->redis_version, "none");
    if (url != NULL) {
        if (dq_redis_url_parse(url, &target, err, sizeof err) != 0) {
            fprintf(stderr, "dqlab experiment: %s\n", err); /* "--redis..." */
            goto free_all;
        }
        dq_redis_url_redacted(&target, rn->redis_desc,
                              sizeof rn->redis_desc);
        /* Before the run directory exists: a wrong URL or password fails
         * here, not at trial 1 with a run dir left behind. */
        if ((needs_redis || e->tasks == 0) &&
            check_redis(&target, rn->redis_version,
                        sizeof rn->redis_version, err, sizeof err) != 0) {
            fprintf(stderr, "dqlab experiment: --redis %s: %s\n",
                    rn->redis_desc, err);
            goto free_all;
        }
    } else if (needs_redis) {
        dq_redis_server_opts so = {0};
        if (dq_redis_server_start(&server, &so, err, sizeof err) != 0) {
            fprintf(stderr, "dqlab experiment: %s\n", err);
            goto free_all;
        }
        snprintf(target.host, sizeof target.host, "127.0.0.1");
        target.port = server.port;
        snprintf(rn->redis_desc, sizeof rn->redis_desc,
                 "private redis-server 127.0.0.1:%d", server.port);
        snprintf(rn->redis_version, sizeof rn->redis_version, "%s",
                 server.version);
    }

    if (make_run_dir(rn, results, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab experiment: %s\n", err);
        goto stop_server;
    }
    dq_runmeta_now_iso(rn->started, sizeof rn->started);
    char copy[PATH_MAX + 32];
    snprintf(copy, sizeof copy, "%s/experiment.ini", rn->dir);
    if (copy_file(file, copy, err, sizeof err) != 0 ||
        write_meta(rn, err, sizeof err) != 0 ||
        write_csv(rn, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab experiment: %s\n", err);
        remove_new_run_dir(rn);
        goto stop_server;
    }
    fprintf(stderr, "dqlab: %s: %zu trial%s%s, results in %s\n", e->name,
            rn->ntrials, rn->ntrials == 1 ? "" : "s",
            e->quick ? " (quick)" : "", rn->dir);

    bool tty = isatty(STDERR_FILENO);
    char violations[4096] = "";
    int nviol = 0;
    uint64_t lost_total = 0, lost_window = 0;
    for (size_t i = 0; i < rn->ntrials; i++) {
        if (dq_signals_caught()) {
            interrupted = true;
            break;
        }
        trial_row *t = &rn->rows[rn->nrows];
        dq_experiment_cell(e, i, &t->cell);
        t->seed = e->seed + i;

        char label[256];
        int lo = snprintf(label, sizeof label, "[%zu/%zu] %s c=%d",
                          i + 1, rn->ntrials, t->cell.strategy->s->name,
                          t->cell.consumers);
        if (e->nproducers > 1 && lo > 0 && (size_t)lo < sizeof label)
            lo += snprintf(label + lo, sizeof label - (size_t)lo, " p=%d",
                           t->cell.producers);
        if (e->nwork_us > 1 && lo > 0 && (size_t)lo < sizeof label)
            lo += snprintf(label + lo, sizeof label - (size_t)lo,
                           " work=%" PRId64 "us", t->cell.work_us);
        if (e->nbacklog > 1 && lo > 0 && (size_t)lo < sizeof label)
            lo += snprintf(label + lo, sizeof label - (size_t)lo,
                           " backlog=%" PRId64, t->cell.backlog);
        if (e->faults_given && lo > 0 && (size_t)lo < sizeof label)
            lo += snprintf(label + lo, sizeof label - (size_t)lo,
                           " fault=%s", t->cell.fault_spec);
        for (size_t k = 0; k < t->cell.strategy->nopts; k++)
            if (lo > 0 && (size_t)lo < sizeof label)
                lo += snprintf(label + lo, sizeof label - (size_t)lo,
                               " %s=%s", t->cell.strategy->opts[k].key,
                               t->cell.strategy->opts[k].val);
        if (lo > 0 && (size_t)lo < sizeof label)
            snprintf(label + lo, sizeof label - (size_t)lo, " rep %d",
                     t->cell.repeat);
        if (tty) {
            fprintf(stderr, "\r\033[K%s ...", label);
            fflush(stderr);
        }

        dq_trial_params p;
        dq_trial_defaults(&p);
        p.strategy = t->cell.strategy->s;
        memcpy(p.opts, t->cell.strategy->opts, sizeof p.opts);
        p.nopts = t->cell.strategy->nopts;
        p.producers = t->cell.producers;
        p.consumers = t->cell.consumers;
        p.tasks = e->tasks;
        p.delay_min_ms = e->delay_min_ms;
        p.delay_max_ms = e->delay_max_ms;
        p.work_us = t->cell.work_us;
        p.payload_bytes = e->payload_bytes;
        p.grace_ms = e->grace_ms;
        p.seed = t->seed;
        p.claim_timeout_ms = e->claim_timeout_ms;
        p.enqueue_batch = e->enqueue_batch;
        p.idle_ms = e->idle_ms;
        p.backlog = t->cell.backlog;
        p.backlog_delay_ms = e->backlog_delay_ms;
        if (t->cell.fault->kind != DQ_FAULT_NONE) {
            p.faults[0] = *t->cell.fault;
            p.nfaults = 1;
        }
        p.consumer_process = e->consumer_process ||
                             dq_fault_needs_process(t->cell.fault);
        /* restart-redis / pause-redis act on it (NULL with --redis). */
        p.server = url == NULL && server.pid > 0 ? &server : NULL;
        /* In idle mode every strategy gets the server, so that a strategy
         * without Redis measures the idle server's own baseline. */
        p.redis = (t->cell.strategy->s->flags & DQ_G_NEEDS_REDIS) ||
                          (e->tasks == 0 && (needs_redis || url != NULL))
                      ? &target : NULL;
        /* Unique per run and trial: the run stamp is unique per NAME. */
        snprintf(p.queue, sizeof p.queue, "x.%.24s.%s.%03zu", e->name,
                 rn->stamp, i + 1);
        p.fresh = false;
        char logpath[PATH_MAX + 32];
        snprintf(logpath, sizeof logpath, "%s/logs/trial-%03zu.log", rn->dir,
                 i + 1);
        p.log_path = logpath;
        p.progress = false;

        memset(&t->r, 0, sizeof t->r);
        int rc = dq_trial_run(&p, &t->r, err, sizeof err);
        if (rc < 0) {
            if (tty)
                fputc('\n', stderr);
            fprintf(stderr, "dqlab experiment: trial %zu (%s): %s\n", i + 1,
                    p.strategy->name, err);
            snprintf(rn->error, sizeof rn->error, "trial %zu: %s", i + 1,
                     err);
            break;
        }
        if (rc == 1 || dq_signals_caught()) {
            /* Cut short: not a measurement, do not keep its row. */
            interrupted = true;
            break;
        }
        rn->nrows++;
        const dq_check *c = &t->r.check;
        /* Behind a backlog the window (grace_ms after the last due
         * time) is a deliberate cut-off (expiry-scale): tasks not seen by
         * then are the measurement, not a fault of the run. */
        if (t->cell.backlog > 0)
            lost_window += c->lost;
        else if (p.nfaults == 0)
            lost_total += c->lost;
        t->violations = trial_violations(&p, t, i, violations,
                                         sizeof violations);
        if (t->violations > 0)
            nviol++;
        if (e->tasks == 0)
            fprintf(stderr, "%s%s: %.0f Redis cmds/s, server CPU %.1f ms/s%s",
                    tty ? "\r\033[K" : "", label,
                    t->r.measured_s > 0 && t->r.redis_commands >= 0
                        ? (double)t->r.redis_commands / t->r.measured_s : -1.0,
                    t->r.measured_s > 0 && t->r.redis_cpu_us >= 0
                        ? (double)t->r.redis_cpu_us / 1000.0 / t->r.measured_s
                        : -1.0, tty ? "" : "\n");
        else if (p.nfaults > 0 || p.consumer_process)
            fprintf(stderr, "%s%s: dup=%" PRIu64 " (redelivered %" PRIu64
                    ") lost=%" PRIu64 " pending=%" PRIu64 " early=%" PRIu64
                    " kills=%d restarts=%d %s%s",
                    tty ? "\r\033[K" : "", label, c->duplicates,
                    c->redelivered, c->lost, c->pending_end, c->early,
                    t->r.kills, t->r.restarts,
                    t->violations ? "VIOLATES its guarantees" : "ok",
                    tty ? "" : "\n");
        else
            fprintf(stderr, "%s%s: dup=%" PRIu64 " lost=%" PRIu64
                    " early=%" PRIu64 " %.0f tasks/s p99 %.1f ms%s%s",
                    tty ? "\r\033[K" : "", label, c->duplicates, c->lost,
                    c->early, t->r.tasks_per_s, c->lateness.p99_ms,
                    t->violations ? " VIOLATES its guarantees" : "",
                    tty ? "" : "\n");
        fflush(stderr);
        if (write_csv(rn, err, sizeof err) != 0 ||
            write_meta(rn, err, sizeof err) != 0) {
            if (tty)
                fputc('\n', stderr);
            fprintf(stderr, "dqlab experiment: %s\n", err);
            snprintf(rn->error, sizeof rn->error, "%s", err);
            break;
        }
    }
    if (tty)
        fputc('\n', stderr);

    rn->complete = rn->nrows == rn->ntrials;
    dq_runmeta_now_iso(rn->finished, sizeof rn->finished);
    if (write_meta(rn, err, sizeof err) != 0)
        fprintf(stderr, "dqlab experiment: %s\n", err);
    if (rn->complete) {
        if (dq_runmeta_update_latest(rn->expdir, rn->stamp, err, sizeof err) != 0) {
            fprintf(stderr, "dqlab experiment: %s\n", err);
            goto stop_server;
        }
        fprintf(stderr, "dqlab: %s: %zu trial%s done, %s/latest -> %s\n",
                e->name, rn->nrows, rn->nrows == 1 ? "" : "s", rn->expdir,
                rn->stamp);
        if (lost_total > 0)
            fprintf(stderr, "dqlab experiment: warning: %" PRIu64 " tasks "
                    "lost without faults (grace_ms too short for this "
                    "machine?)\n", lost_total);
        if (lost_window > 0)
            fprintf(stderr, "dqlab: %s: %" PRIu64 " tasks behind a backlog "
                    "were not delivered within the observation window "
                    "(grace_ms = %" PRId64 "): expected in this design, the "
                    "report shows the fraction delivered\n", e->name,
                    lost_window, e->grace_ms);
        if (nviol > 0) {
            fputs(violations, stderr);
            ret = 1;
        } else {
            ret = 0;
        }
    } else {
        fprintf(stderr, "dqlab experiment: %s: run incomplete (%zu of %zu trials%s); "
                "kept in %s, %s/latest not updated\n", e->name, rn->nrows,
                rn->ntrials, interrupted ? ", interrupted" : "", rn->dir,
                rn->expdir);
        ret = interrupted && rn->error[0] == '\0' ? 130 : 2;
    }

stop_server:
    dq_redis_server_stop(&server);
free_all:
    if (rn != NULL)
        free(rn->rows);
    free(rn);
    dq_experiment_free(e);
    free(e);
    return ret;
}
