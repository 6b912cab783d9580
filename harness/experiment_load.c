/* experiment_load.c -- loading experiment files (experiment.h).
 *
 * inih (Debian's libinih 55) parses the INI; it is built without
 * INI_HANDLER_LINENO and without INI_CALL_HANDLER_ON_NEW_SECTION, so its
 * handler sees neither line numbers nor section headers.  We feed it
 * through ini_parse_stream() with a line reader that adds only those two:
 * it counts lines (the handler runs while its line is the last one read,
 * so the count is the line of the key) and checks the section headers it
 * passes on (an unknown section is an error even when it holds no key).
 * The rest is inih's: comments, the BOM, and multi-line values, which its
 * handler receives as the key above once more; the handler tells such a
 * continuation from a key given twice by the line's indentation, so a
 * stray indentation is named as such.  The first error wins; later ones
 * are ignored, as ini_parse() itself returns the first bad line.
 *
 * Keys.  Every trial parameter is a row of params.c's table (key, range,
 * default, list or not), read here through it: this file knows only the
 * keys of the experiment itself (name, title, description, claims, plots,
 * strategies, repeats, faults).
 *
 * Option lists.  A comma list in [opts.NAME] (poll_ms = 10, 100) makes
 * the strategy a set of variants, one per combination of values
 * (expand_variants), so a strategy's options become a matrix dimension.
 *
 * Faults.  `faults` is a matrix dimension of one fault per trial (faults.h
 * specs, "none" = no fault); a fault that cannot act on a strategy is
 * skipped for it (dq_experiment_fault_applies, by faults.h
 * dq_fault_applies), so the matrix is not a plain product and
 * dq_experiment_cell walks the strategy blocks.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ini.h>

#include "experiment.h"
#include "parse.h"
#include "plots.h"

/* Messages go into fixed buffers with snprintf and are cut short when they
 * do not fit; GCC's format-truncation warning would flag every such call. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* Keys of the experiment itself; the ones marked quick may appear in
 * [quick] (every trial parameter may). */
enum {
    K_NAME, K_TITLE, K_DESCRIPTION, K_CLAIMS, K_PLOTS, K_STRATEGIES,
    K_REPEATS, K_FAULTS, K_COUNT
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
    [K_REPEATS] = {"repeats", true},
    [K_FAULTS] = {"faults", true},
};

/* Set flags: the experiment's keys, then one per row of dq_params. */
#define NSET (K_COUNT + DQ_NPARAMS)
#define P_SET(d) (K_COUNT + (int)((d) - dq_params))

/* The plot kinds (plots.h): the figures and sections the report draws. */
#define PLOT_NAME(id, name) name,
static const char *const plot_names[DQ_NPLOTS] = {DQ_PLOT_KINDS(PLOT_NAME)};
#undef PLOT_NAME

/* Per registered strategy: its [opts.NAME] section. */
#define MAX_REGISTERED 64

typedef struct load_state {
    const char *path;
    FILE *f;
    int lineno;             /* lines read so far = line being handled */
    int experiment_line;    /* line of the [experiment] header, 0 if none */
    char *linebuf;          /* getline buffer */
    size_t linecap;
    bool indented;          /* the line read starts with a blank */
    bool header_seen;       /* a section header since the last key */
    int key_line;           /* the line of the last key (not continued) */
    bool continuation;      /* the key handled continues the one above */
    char err[512];          /* first error, "" when none */
    dq_experiment base;     /* [experiment] */
    dq_experiment quick;    /* [quick] */
    bool set_base[NSET], set_quick[NSET];
    dq_opt opts[MAX_REGISTERED][DQ_MAX_OPTS];
    size_t nopts[MAX_REGISTERED];
    int opts_line[MAX_REGISTERED]; /* line of the first [opts.NAME], 0 */
} load_state;

static void load_fail(load_state *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records "path:line: message" unless an error is already recorded. */
static void load_fail(load_state *st, const char *fmt, ...)
{
    char msg[400];
    va_list ap;

    if (st->err[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(st->err, sizeof st->err, "%s:%d: %s", st->path, st->lineno,
             msg);
}

/* Records a message that already names the file and line. */
static void load_fail_raw(load_state *st, const char *msg)
{
    if (st->err[0] == '\0')
        snprintf(st->err, sizeof st->err, "%s", msg);
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

/* ---- Lines --------------------------------------------------------------- */

/* Checks a section header; returns false (error recorded) when unknown. */
static bool check_section(load_state *st, const char *sec)
{
    char names[256];

    if (strcmp(sec, "experiment") == 0) {
        if (st->experiment_line == 0)
            st->experiment_line = st->lineno;
        return true;
    }
    if (strcmp(sec, "quick") == 0)
        return true;
    if (strncmp(sec, "opts.", 5) == 0) {
        int si = registry_index(sec + 5);
        if (si >= 0) {
            if (st->opts_line[si] == 0)
                st->opts_line[si] = st->lineno;
            return true;
        }
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
 * error (which stops inih).  A line starting with '[' (after the UTF-8 BOM
 * inih skips on line 1) is a section header, checked here: inih reports
 * none to the handler.  (An indented '[' line after a key is, to inih, a
 * continuation of the key: not checked, and the handler names it.) */
static char *read_line(char *str, int num, void *stream)
{
    load_state *st = stream;
    const char *p, *end;
    char sec[64];
    ssize_t n;

    if (st->err[0] != '\0')
        return NULL;
    errno = 0;
    n = getline(&st->linebuf, &st->linecap, st->f);
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
    p = st->linebuf;
    if (st->lineno == 1 && strncmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    st->indented = *p == ' ' || *p == '\t';
    if (*p != '[')
        return str;
    if ((end = strchr(p, ']')) == NULL) {
        load_fail(st, "section header without ']'");
        return NULL;
    }
    snprintf(sec, sizeof sec, "%.*s", (int)(end - p - 1), p + 1);
    if (!check_section(st, sec))
        return NULL;
    st->header_seen = true;
    return str;
}

/* ---- Values -------------------------------------------------------------- */

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
 * is modified).  Returns the count, -1 when more than max, -2 when an item
 * between two commas (or before the first) is empty: "2,,3" is a typo,
 * not the list 2, 3.  A trailing comma is allowed (a continued line). */
static int split_list(char *buf, char **tok, int max)
{
    int n = 0;
    bool item = false, gap = false, any = false;

    for (const char *p = buf; *p; p++)
        if (*p == ',') {
            gap |= !item;
            item = false;
        } else if (*p != ' ' && *p != '\t') {
            item = any = true;
        }
    if (gap && any)
        return -2;

    for (char *p = strtok(buf, ", \t"); p != NULL; p = strtok(NULL, ", \t")) {
        if (n == max)
            return -1;
        tok[n++] = p;
    }
    return n;
}

/* A list key's items into tok (buf holds them): -1 (error recorded) for
 * more than max or none. */
static int list_items(load_state *st, const char *key, const char *val,
                      char *buf, size_t len, char **tok, int max,
                      const char *what_many)
{
    int nt;

    snprintf(buf, len, "%s", val);
    nt = split_list(buf, tok, max);
    if (nt == -2)
        load_fail(st, "%s: empty item in the list '%s'", key, val);
    else if (nt < 0)
        load_fail(st, "%s: %s", key, what_many);
    else if (nt == 0)
        load_fail(st, "%s: empty list", key);
    return nt > 0 ? nt : -1;
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

static bool valid_plot(const char *s)
{
    for (int i = 0; i < DQ_NPLOTS; i++)
        if (strcmp(plot_names[i], s) == 0)
            return true;
    return false;
}

/* The plot kinds, ", "-separated, into buf (for the error). */
static void plot_list(char *buf, size_t len)
{
    size_t off = 0;

    buf[0] = '\0';
    for (int i = 0; i < DQ_NPLOTS && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
                                plot_names[i]);
}

static bool valid_claim(const char *s)
{
    return strlen(s) == 3 && s[0] == 'C' && isdigit((unsigned char)s[1]) &&
           isdigit((unsigned char)s[2]);
}

/* One integer in [min, max] for key. */
static bool set_int(load_state *st, const char *key, const char *val,
                    int64_t min, int64_t max, int64_t *out)
{
    char what[600], perr[700];

    snprintf(what, sizeof what, "%s:%d: %s", st->path, st->lineno, key);
    if (dq_parse_i64(what, val, min, max, out, perr, sizeof perr) != 0) {
        load_fail_raw(st, perr);
        return false;
    }
    return true;
}

/* A trial parameter's value (a list for a DQ_PARAM_LIST row) into e. */
static bool set_param(load_state *st, dq_experiment *e, const dq_param *d,
                      const char *val)
{
    char what[600], perr[700], buf[256], *tok[DQ_EXP_MAX_LIST + 1], many[32];
    dq_exp_values *l = &e->lists[d - dq_params];
    int64_t v, v2;
    int nt;

    snprintf(what, sizeof what, "%s:%d: %s", st->path, st->lineno, d->key);
    if (!(d->flags & DQ_PARAM_LIST)) {
        if (dq_param_parse(d, what, val, &v, &v2, perr, sizeof perr) != 0) {
            load_fail_raw(st, perr);
            return false;
        }
        dq_param_set(d, &e->params, v, v2);
        return true;
    }
    snprintf(many, sizeof many, "more than %d values", DQ_EXP_MAX_LIST);
    nt = list_items(st, d->key, val, buf, sizeof buf, tok, DQ_EXP_MAX_LIST,
                    many);
    for (int i = 0; i < nt; i++) {
        if (dq_param_parse(d, what, tok[i], &l->v[i], &v2, perr,
                           sizeof perr) != 0) {
            load_fail_raw(st, perr);
            return false;
        }
        for (int j = 0; j < i; j++)
            if (l->v[j] == l->v[i]) {
                fail_repeated(st, d->key, tok[i]);
                return false;
            }
    }
    if (nt < 0)
        return false;
    l->n = (size_t)nt;
    dq_param_set(d, &e->params, l->v[0], 0);
    return true;
}

/* The faults list (or, continued, more items of it) into e: each item a
 * faults.h spec or "none". */
static bool set_faults(load_state *st, dq_experiment *e, const char *val,
                       bool continued)
{
    char buf[256], *tok[DQ_EXP_MAX_LIST + 1], ferr[300];
    int nt;

    snprintf(buf, sizeof buf, "%s", val);
    nt = split_list(buf, tok, DQ_EXP_MAX_LIST);
    if (!continued)
        e->nfaults = 0;
    if (nt == -2) {
        load_fail(st, "faults: empty item in the list '%s'", val);
        return false;
    }
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
        if (strcmp(tok[i], "none") != 0 &&
            dq_fault_parse(tok[i], f, ferr, sizeof ferr) != 0) {
            load_fail(st, "faults: %s", ferr);
            return false;
        }
        dq_fault_format(f, e->fault_specs[n], sizeof e->fault_specs[n]);
        for (size_t j = 0; j < n; j++)
            if (strcmp(e->fault_specs[j], e->fault_specs[n]) == 0) {
                fail_repeated(st, "faults", e->fault_specs[n]);
                return false;
            }
        e->nfaults++;
    }
    return true;
}

/* The strategies list: names, or "all" alone. */
static bool set_strategies(load_state *st, dq_experiment *e, const char *val)
{
    char buf[256], *tok[DQ_EXP_MAX_LIST + 1], names[256];
    int nt = list_items(st, "strategies", val, buf, sizeof buf, tok,
                        DQ_EXP_MAX_LIST, "more than 16");

    if (nt == 1 && strcmp(tok[0], "all") == 0) {
        /* Every registered strategy, in the registry's order. */
        size_t n = 0;
        for (; dq_strategies[n] != NULL && n < DQ_EXP_MAX_VARIANTS; n++)
            e->strategies[n].s = dq_strategies[n];
        e->nstrategies = n;
        return true;
    }
    for (int i = 0; i < nt; i++) {
        const dq_strategy *s = dq_strategy_find(tok[i]);
        if (s == NULL && strcmp(tok[i], "all") == 0) {
            load_fail(st, "strategies: 'all' (every strategy) stands "
                      "alone, not in a list with other names");
            return false;
        }
        if (s == NULL) {
            registered_names(names, sizeof names);
            load_fail(st, "strategies: unknown strategy '%.40s' (known: %s)",
                      tok[i], names);
            return false;
        }
        for (int j = 0; j < i; j++)
            if (e->strategies[j].s == s) {
                fail_repeated(st, "strategies", s->name);
                return false;
            }
        e->strategies[i].s = s;
    }
    if (nt < 0)
        return false;
    e->nstrategies = (size_t)nt;
    return true;
}

/* claims or plots: checked words into out (n of at most max). */
static bool set_words(load_state *st, const char *key, const char *val,
                      int max, char (*out)[32], size_t outlen, size_t *n)
{
    char buf[256], known[256], *tok[DQ_EXP_MAX_CLAIMS + 1];
    int nt;

    _Static_assert(DQ_NPLOTS <= DQ_EXP_MAX_CLAIMS, "set_words: tok holds "
                   "DQ_EXP_MAX_CLAIMS words, plots may be DQ_NPLOTS");
    nt = list_items(st, key, val, buf, sizeof buf, tok, max, "too many");

    for (int i = 0; i < nt; i++) {
        if (strcmp(key, "claims") == 0 && !valid_claim(tok[i])) {
            load_fail(st, "claims: '%.20s' is not a claim id like C01",
                      tok[i]);
            return false;
        }
        if (strcmp(key, "plots") == 0 && !valid_plot(tok[i])) {
            plot_list(known, sizeof known);
            load_fail(st, "plots: unknown plot '%.30s' (known: %s)", tok[i],
                      known);
            return false;
        }
        snprintf(out[i], outlen, "%s", tok[i]);
    }
    if (nt < 0 || !check_unique(st, key, tok, nt))
        return false;
    *n = (size_t)nt;
    return true;
}

/* One key of the experiment itself into e. */
static bool set_key(load_state *st, dq_experiment *e, int k, const char *val)
{
    char claims[DQ_EXP_MAX_CLAIMS][32];
    size_t len;
    int64_t r;

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
    case K_DESCRIPTION:
        /* Continuation lines (inih multi-line) append with a space. */
        len = strlen(e->description);
        snprintf(e->description + len, sizeof e->description - len, "%s%s",
                 len ? " " : "", val);
        return true;
    case K_CLAIMS:
        if (!set_words(st, "claims", val, DQ_EXP_MAX_CLAIMS, claims,
                       sizeof claims[0], &e->nclaims))
            return false;
        for (size_t i = 0; i < e->nclaims; i++)
            snprintf(e->claims[i], sizeof e->claims[i], "%s", claims[i]);
        return true;
    case K_PLOTS:
        return set_words(st, "plots", val, DQ_NPLOTS, e->plots,
                         sizeof e->plots[0], &e->nplots);
    case K_STRATEGIES:
        return set_strategies(st, e, val);
    case K_REPEATS:
        if (!set_int(st, "repeats", val, 1, 1000, &r))
            return false;
        e->repeats = (int)r;
        return true;
    case K_FAULTS:
        return set_faults(st, e, val, st->continuation);
    }
    return false;
}

/* ---- Sections ------------------------------------------------------------ */

/* A key of [experiment] or [quick]: the experiment's own, or a trial
 * parameter's.  Returns 1, or 0 on an error (recorded). */
static int on_exp_key(load_state *st, bool q, const char *name,
                      const char *value)
{
    dq_experiment *e = q ? &st->quick : &st->base;
    bool *set = q ? st->set_quick : st->set_base;
    const dq_param *d = dq_param_by_key(name);
    int k = 0;

    while (k < K_COUNT && strcmp(keys[k].name, name) != 0)
        k++;
    if (k == K_COUNT && d == NULL) {
        load_fail(st, "unknown key '%.40s' in [%s]", name,
                  q ? "quick" : "experiment");
        return 0;
    }
    if (q && k < K_COUNT && !keys[k].quick) {
        load_fail(st, "[quick]: %s cannot be overridden (only the trial "
                  "parameters can)", name);
        return 0;
    }
    if (d != NULL)
        k = P_SET(d);
    /* An indented line continues the key above it (inih multi-line: the
     * handler sees the same key again); on_key let only description and
     * faults through. */
    if (set[k] && !st->continuation) {
        load_fail(st, "%s given twice in [%s]", name,
                  q ? "quick" : "experiment");
        return 0;
    }
    set[k] = true;
    if (d != NULL)
        return set_param(st, e, d, value) ? 1 : 0;
    return set_key(st, e, k, value) ? 1 : 0;
}

/* Splits an option value on commas into trimmed items (pointers into
 * buf).  Returns the count, or -1 for an empty item or more than
 * DQ_EXP_MAX_LIST. */
static int split_option_value(char *buf, char **items)
{
    int n = 0;
    char *item = buf;

    for (;;) {
        char *comma = strchr(item, ',');
        size_t len;
        if (comma != NULL)
            *comma = '\0';
        while (*item == ' ' || *item == '\t')
            item++;
        len = strlen(item);
        while (len > 0 && (item[len - 1] == ' ' || item[len - 1] == '\t'))
            item[--len] = '\0';
        if (len == 0 && (comma != NULL || n > 0))
            return -1;
        if (n == DQ_EXP_MAX_LIST)
            return -2;
        items[n++] = item;
        if (comma == NULL)
            return n;
        item = comma + 1;
    }
}

/* Every value of option list `value` must be one strategy s accepts (its
 * ranges and choices, dq_opts_check), so a bad one fails here with this
 * line, not when its trial opens the strategy; and none twice. */
static bool check_option_values(load_state *st, const char *section,
                                const dq_strategy *s, const char *name,
                                const char *value)
{
    char vbuf[96], *items[DQ_EXP_MAX_LIST], key[128], cerr[300];
    int n;

    snprintf(vbuf, sizeof vbuf, "%s", value);
    n = split_option_value(vbuf, items);
    if (n == -1) {
        load_fail(st, "[%s]: %s: empty item in the list '%s'", section, name,
                  value);
        return false;
    }
    if (n < 0) {
        load_fail(st, "[%s]: %s: more than %d values", section, name,
                  DQ_EXP_MAX_LIST);
        return false;
    }
    for (int i = 0; i < n; i++) {
        dq_opt one;
        cerr[0] = '\0';
        snprintf(one.key, sizeof one.key, "%s", name);
        snprintf(one.val, sizeof one.val, "%s", items[i]);
        if (dq_opts_check(s, &one, 1, cerr, sizeof cerr) != DQ_OK) {
            load_fail(st, "[%s]: %s", section,
                      cerr[0] ? cerr : "bad option value");
            return false;
        }
    }
    snprintf(key, sizeof key, "[%.60s]: %s", section, name);
    return check_unique(st, key, items, n);
}

/* A key of [opts.NAME]: an option of strategy NAME, or a list of its
 * values.  Returns 1, or 0 on an error (recorded). */
static int on_opts_key(load_state *st, const char *section, const char *name,
                       const char *value)
{
    int si = registry_index(section + 5);
    const dq_strategy *s;
    char names[256] = "";
    size_t off = 0;
    dq_opt *o;

    if (si < 0) {
        load_fail(st, "unknown strategy '%.40s'", section + 5);
        return 0;
    }
    s = dq_strategies[si];
    /* Its own options and those every Redis strategy takes (wait=). */
    for (size_t j = 0; dq_strategy_option(s, j) != NULL; j++) {
        const dq_optdef *d = dq_strategy_option(s, j);
        if (strcmp(d->name, name) == 0)
            goto known;
        if (off < sizeof names)
            off += (size_t)snprintf(names + off, sizeof names - off, "%s%s",
                                    off ? ", " : "", d->name);
    }
    load_fail(st, "[%s]: %s has no option '%.40s' (options: %s)", section,
              s->name, name, off ? names : "none");
    return 0;
known:
    if (st->nopts[si] == DQ_MAX_OPTS) {
        load_fail(st, "[%s]: more than %d options", section, DQ_MAX_OPTS);
        return 0;
    }
    o = &st->opts[si][st->nopts[si]];
    if (strlen(name) >= sizeof o->key || strlen(value) >= sizeof o->val) {
        load_fail(st, "[%s]: %s: value too long", section, name);
        return 0;
    }
    for (size_t i = 0; i < st->nopts[si]; i++)
        if (strcmp(st->opts[si][i].key, name) == 0) {
            load_fail(st, "[%s]: %s given twice", section, name);
            return 0;
        }
    if (!check_option_values(st, section, s, name, value))
        return 0;
    snprintf(o->key, sizeof o->key, "%s", name);
    snprintf(o->val, sizeof o->val, "%s", value);
    st->nopts[si]++;
    return 1;
}

static int on_key(void *user, const char *section, const char *name,
                  const char *value)
{
    load_state *st = user;
    bool exp_section = strcmp(section, "experiment") == 0 ||
                       strcmp(section, "quick") == 0;
    char where[128] = "";

    if (st->err[0] != '\0')
        return 0;
    /* inih hands an indented line after a key to the handler as more of
     * that key (INI_ALLOW_MULTILINE, ini.c); after a section header it is
     * a key of its own. */
    st->continuation = st->indented && !st->header_seen;
    if (!st->continuation) {
        st->key_line = st->lineno;
        st->header_seen = false;
    }
    if (st->continuation &&
        !(exp_section && (strcmp(name, "description") == 0 ||
                          strcmp(name, "faults") == 0))) {
        if (!exp_section && section[0] != '\0')
            snprintf(where, sizeof where, "[%.60s]: ", section);
        load_fail(st, "%s%s: this indented line continues %s from line %d, "
                  "but only description and faults take continuation lines "
                  "(remove the indentation if it starts a new key)", where,
                  name, name, st->key_line);
        return 0;
    }
    if (exp_section)
        return on_exp_key(st, section[0] == 'q', name, value);
    if (strncmp(section, "opts.", 5) == 0)
        return on_opts_key(st, section, name, value);
    /* Keys before any section. */
    load_fail(st, "key '%.40s' outside a section (start with [experiment])",
              name);
    return 0;
}

/* ---- After parsing ------------------------------------------------------- */

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
        size_t nopts = st->nopts[si], total = 1;
        char bufs[DQ_MAX_OPTS][sizeof st->opts[0][0].val];
        char *items[DQ_MAX_OPTS][DQ_EXP_MAX_LIST];
        int counts[DQ_MAX_OPTS];

        for (size_t j = 0; j < nopts && total <= DQ_EXP_MAX_VARIANTS; j++) {
            snprintf(bufs[j], sizeof bufs[j], "%s", st->opts[si][j].val);
            counts[j] = split_option_value(bufs[j], items[j]);
            total *= (size_t)counts[j];
        }
        if (total > DQ_EXP_MAX_VARIANTS - nout) {
            load_fail(st, "more than %d strategy variants (option lists "
                      "multiply; %s alone makes %zu)", DQ_EXP_MAX_VARIANTS,
                      list[i]->name, total);
            return false;
        }
        for (size_t v = 0; v < total; v++) {
            dq_exp_strategy *x = &b->strategies[nout++];
            size_t rest = v;
            x->s = list[i];
            x->nopts = nopts;
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

/* Trials of one (strategy variant, fault) pair: the list parameters'
 * values times the repeats. */
static size_t inner_trials(const dq_experiment *e)
{
    size_t n = (size_t)e->repeats;

    for (const dq_param *d = dq_params; d->key != NULL; d++)
        if (d->flags & DQ_PARAM_LIST)
            n *= e->lists[d - dq_params].n;
    return n;
}

/* Refuses (error recorded) a matrix of more than DQ_EXP_MAX_TRIALS
 * trials, saying how large it is and from which lists: the run keeps one
 * result row per trial in memory. */
static bool check_matrix_size(load_state *st, const dq_experiment *b)
{
    size_t n = dq_experiment_ntrials(b), inner = inner_trials(b), off = 0;
    char dims[400] = "";

    if (n <= DQ_EXP_MAX_TRIALS)
        return true;
    /* The lists that multiply (a list of one value changes nothing). */
    for (const dq_param *d = dq_params; d->key != NULL; d++)
        if ((d->flags & DQ_PARAM_LIST) && b->lists[d - dq_params].n > 1)
            off += (size_t)snprintf(dims + off, sizeof dims - off,
                                    " x %zu %s", b->lists[d - dq_params].n,
                                    d->key);
    load_fail(st, "the matrix holds %zu trials%s (%zu strategy variant and "
              "fault cells%s x %d repeats), more than the %d one run may "
              "hold: shorten a list or lower repeats", n,
              b->quick ? " with --quick" : "", inner ? n / inner : 0, dims,
              b->repeats, DQ_EXP_MAX_TRIALS);
    return false;
}

/* What was not given: the table's defaults (lists of one value), one
 * repeat, no fault, the title and plots. */
static void set_defaults(load_state *st, dq_experiment *b)
{
    for (const dq_param *d = dq_params; d->key != NULL; d++) {
        dq_exp_values *l = &b->lists[d - dq_params];
        if (!(d->flags & DQ_PARAM_LIST) || st->set_base[P_SET(d)])
            continue;
        l->v[0] = d->def;
        l->n = 1;
    }
    if (!st->set_base[K_REPEATS])
        b->repeats = 1;
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
}

/* The [quick] keys given replace those of b. */
static void apply_quick(load_state *st, dq_experiment *b,
                        const dq_experiment *q)
{
    const bool *s = st->set_quick;

    if (s[K_STRATEGIES]) {
        memcpy(b->strategies, q->strategies, sizeof b->strategies);
        b->nstrategies = q->nstrategies;
    }
    if (s[K_REPEATS])
        b->repeats = q->repeats;
    if (s[K_FAULTS]) {
        memcpy(b->faults, q->faults, sizeof b->faults);
        memcpy(b->fault_specs, q->fault_specs, sizeof b->fault_specs);
        b->nfaults = q->nfaults;
    }
    for (const dq_param *d = dq_params; d->key != NULL; d++) {
        int64_t v, v2;
        if (!s[P_SET(d)])
            continue;
        dq_param_get(d, &q->params, &v, &v2);
        dq_param_set(d, &b->params, v, v2);
        b->lists[d - dq_params] = q->lists[d - dq_params];
    }
}

/* The rules between parameters (dq_params_check), for e's faults. */
static int check_form(const dq_experiment *e, char *err, size_t errlen)
{
    dq_trial_params p = e->params;

    p.nfaults = 0;
    for (size_t i = 0; i < e->nfaults && p.nfaults == 0; i++)
        if (e->faults[i].ops != NULL)
            p.faults[p.nfaults++] = e->faults[i];
    return dq_params_check(&p, false, err, errlen);
}

/* Idle mode, faults and process mode, in both forms (a bad [quick] fails
 * without --quick too). */
static bool check_forms(load_state *st, const dq_experiment *b)
{
    dq_experiment *q = malloc(sizeof *q);
    char err[300];
    bool ok = false;

    if (q == NULL) {
        load_fail(st, "out of memory");
        return false;
    }
    if (check_form(b, err, sizeof err) != 0) {
        load_fail(st, "%s", err);
        goto done;
    }
    *q = *b;
    apply_quick(st, q, &st->quick);
    if (check_form(q, err, sizeof err) != 0) {
        load_fail(st, "%s in [quick]", err);
        goto done;
    }
    ok = true;
done:
    free(q);
    return ok;
}

/* Whether strategy s is in b's list or, when [quick] has one, in that. */
static bool listed(const load_state *st, const dq_experiment *b,
                   const dq_strategy *s)
{
    for (size_t i = 0; i < b->nstrategies; i++)
        if (b->strategies[i].s == s)
            return true;
    for (size_t i = 0; st->set_quick[K_STRATEGIES] &&
                       i < st->quick.nstrategies; i++)
        if (st->quick.strategies[i].s == s)
            return true;
    return false;
}

/* An [opts.NAME] section whose strategy no list runs would be ignored
 * unseen: refused at its header line. */
static bool check_opts_sections(load_state *st, const dq_experiment *b)
{
    for (int si = 0; dq_strategies[si] != NULL && si < MAX_REGISTERED;
         si++) {
        const dq_strategy *s = dq_strategies[si];
        if (st->opts_line[si] == 0 || listed(st, b, s))
            continue;
        st->lineno = st->opts_line[si];
        load_fail(st, "[opts.%s]: %s is not in strategies", s->name,
                  s->name);
        return false;
    }
    return true;
}

/* Everything checked once the whole file is read.  Returns false (error
 * recorded at the [experiment] header, or line 1). */
static bool finish(load_state *st, bool quick)
{
    dq_experiment *b = &st->base;
    bool empty = st->lineno == 0;
    char why[200] = "";

    st->lineno = st->experiment_line ? st->experiment_line : 1;
    if (st->experiment_line == 0)
        load_fail(st, "no [experiment] section%s",
                  empty ? " (the file is empty)" : "");
    else if (!st->set_base[K_NAME])
        load_fail(st, "[experiment] has no name (add: name = NAME)");
    else if (!st->set_base[K_STRATEGIES])
        load_fail(st, "[experiment] has no strategies list");
    else if (!st->set_base[P_SET(dq_param_by_key("consumers"))])
        load_fail(st, "[experiment] has no consumers list");
    if (st->err[0] != '\0' || !check_opts_sections(st, b))
        return false;
    set_defaults(st, b);
    if (!check_forms(st, b))
        return false;
    if (quick)
        apply_quick(st, b, &st->quick);
    b->faults_given = st->set_base[K_FAULTS] ||
                      (quick && st->set_quick[K_FAULTS]);
    b->quick = quick;
    dq_params_settle(&b->params);
    if (!expand_variants(st, b))
        return false;
    if (dq_experiment_ntrials(b) == 0) {
        for (size_t i = 0; why[0] == '\0' && i < b->nfaults; i++)
            dq_fault_applies(&b->faults[i], b->strategies[0].s, why,
                             sizeof why);
        load_fail(st, "no trial to run: no fault listed applies to any "
                  "strategy listed (%s)", why);
        return false;
    }
    return check_matrix_size(st, b);
}

int dq_experiment_load(const char *path, bool quick, dq_experiment *e,
                       char *err, size_t errlen)
{
    load_state *st = calloc(1, sizeof *st);
    struct stat fst;
    int rc, ret = -1;

    if (st == NULL) {
        snprintf(err, errlen, "%s:0: out of memory", path);
        return -1;
    }
    st->path = path;
    st->header_seen = true; /* no key yet: an indented one is a key */
    dq_trial_defaults(&st->base.params);
    dq_trial_defaults(&st->quick.params);
    st->f = fopen(path, "r");
    if (st->f == NULL) {
        snprintf(st->err, sizeof st->err, "%s: %s", path, strerror(errno));
        goto free_state;
    }
    if (fstat(fileno(st->f), &fst) == 0 && S_ISDIR(fst.st_mode)) {
        snprintf(st->err, sizeof st->err, "%s: is a directory, not an "
                 "experiment file (e.g. experiments/concurrency.ini)", path);
        goto close_file;
    }
    rc = ini_parse_stream(read_line, st, on_key, st);
    if (st->err[0] == '\0' && rc != 0)
        /* inih's own syntax errors (e.g. a line without '='). */
        snprintf(st->err, sizeof st->err, "%s:%d: syntax error (expected "
                 "[section], key = value or a comment)", path,
                 rc > 0 ? rc : st->lineno);
    if (st->err[0] != '\0' || !finish(st, quick))
        goto close_file;
    snprintf(st->base.path, sizeof st->base.path, "%s", path);
    *e = st->base;
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

const dq_exp_values *dq_experiment_list(const dq_experiment *e,
                                        const char *key)
{
    const dq_param *d = dq_param_by_key(key);

    return d != NULL && (d->flags & DQ_PARAM_LIST) ? &e->lists[d - dq_params]
                                                   : NULL;
}

/* ---- The matrix ---------------------------------------------------------- */

bool dq_experiment_fault_applies(const dq_strategy *s, const dq_fault *f)
{
    char why[200];

    return dq_fault_applies(f, s, why, sizeof why);
}

/* Whether fault f runs with strategy variant v: it applies to the
 * strategy, and a variant asking for wait > 0 gets the replica only a
 * failover starts (faults.h dq_fault_serves_wait). */
static bool cell_runs(const dq_exp_strategy *v, const dq_fault *f)
{
    return dq_experiment_fault_applies(v->s, f) &&
           dq_fault_serves_wait(f, v->opts, v->nopts);
}

/* Faults of e that run with strategy variant v. */
static size_t applicable_faults(const dq_experiment *e,
                                const dq_exp_strategy *v)
{
    size_t n = 0;

    for (size_t i = 0; i < e->nfaults; i++)
        if (cell_runs(v, &e->faults[i]))
            n++;
    return n;
}

size_t dq_experiment_ntrials(const dq_experiment *e)
{
    size_t n = 0;

    for (size_t i = 0; i < e->nstrategies; i++)
        n += applicable_faults(e, &e->strategies[i]);
    return n * inner_trials(e);
}

/* The strategy variant and fault of cell index (their blocks differ in
 * size when a fault is skipped); *rest: the index within the pair. */
static void cell_pair(const dq_experiment *e, size_t index, size_t *si,
                      size_t *fi, size_t *rest)
{
    size_t inner = inner_trials(e), i = index, want, seen = 0;

    for (*si = 0; *si < e->nstrategies; (*si)++) {
        size_t blk = applicable_faults(e, &e->strategies[*si]) * inner;
        if (i < blk)
            break;
        i -= blk;
    }
    if (*si == e->nstrategies) /* out of range: the last cell */
        *si = e->nstrategies - 1, i = 0;
    want = i / inner;
    for (*fi = 0; *fi < e->nfaults; (*fi)++) {
        if (!cell_runs(&e->strategies[*si], &e->faults[*fi]))
            continue;
        if (seen++ == want)
            break;
    }
    if (*fi == e->nfaults)
        *fi = 0;
    *rest = i % inner;
}

void dq_experiment_cell(const dq_experiment *e, size_t index, dq_exp_cell *c)
{
    size_t si, fi, i;
    dq_trial_params *p = &c->params;

    cell_pair(e, index, &si, &fi, &i);
    c->strategy = &e->strategies[si];
    c->fault = &e->faults[fi];
    c->fault_spec = e->fault_specs[fi];
    c->repeat = (int)(i % (size_t)e->repeats) + 1;
    i /= (size_t)e->repeats;
    *p = e->params;
    /* The list parameters, the last in the table innermost. */
    for (int k = DQ_NPARAMS - 1; k >= 0; k--) {
        const dq_exp_values *l = &e->lists[k];
        if (!(dq_params[k].flags & DQ_PARAM_LIST))
            continue;
        dq_param_set(&dq_params[k], p, l->v[i % l->n], 0);
        i /= l->n;
    }
    p->strategy = c->strategy->s;
    memcpy(p->opts, c->strategy->opts, sizeof p->opts);
    p->nopts = c->strategy->nopts;
    p->nfaults = 0;
    if (c->fault->ops != NULL)
        p->faults[p->nfaults++] = *c->fault;
    p->seed = e->params.seed + index;
    dq_params_settle(p);
}
