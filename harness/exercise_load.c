/* exercise_load.c -- reading the exercises from their file (exercise.h):
 * experiments/exercises.conf, whose top comment gives the format.
 *
 * The exercises name strategies (the one to start from, a reference, one
 * that fails) and talk about them in prose, so they live in a data file
 * beside the experiments rather than in the harness, which names no
 * strategy.  inih parses the INI as experiment_load.c feeds it: through
 * ini_parse_stream() with a line reader that counts lines and sees the
 * section headers (Debian's libinih hands the handler neither), and tells
 * a continuation line (indented, after a key) from a key of its own.
 * Every value is a string but kind, need, forbid, max_lost and max_extra,
 * which are read as they come; the rules that need a whole exercise
 * (required keys, registered strategies) are checked at the end, with the
 * line of the section's header.
 *
 * inih and the line reader must read every line alike, or a line goes to
 * the wrong place without a word: inih's options are set for this one
 * call (no inline comments, so a ';' in prose is text; no BOM; continuation
 * lines on) and restored after, and the two lines they would read apart
 * are refused: an indented '[' after a header (inih: a header) and an
 * indented ';' or '#' after a key (inih: a comment, not the value going
 * on).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>

#include "../strategies/dq.h"
#include "exercise.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

typedef struct ld_state {
    const char *path;
    FILE *f;
    char *line;
    size_t cap;
    int lineno;
    bool indented;          /* the line read last starts with a blank */
    bool header_seen;       /* a section header since the last key */
    dq_exercise_set *set;
    dq_exercise *x;         /* the section's exercise; NULL before one */
    dq_xcheck *c;           /* the section's check; NULL in [ID] */
    size_t nchecks;         /* checks of x so far */
    bool kind_set;          /* the check's kind was given */
    unsigned given;         /* the check's value_keys given, 1 << index */
    int check_line;         /* the line of the check's header */
    const char **last;      /* the string the last key set: a continuation
                               line goes on there; NULL: none allowed */
    char err[512];
} ld_state;

__attribute__((format(printf, 2, 3)))
static void ld_fail(ld_state *st, const char *fmt, ...)
{
    char msg[400];
    va_list ap;

    if (st->err[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(st->err, sizeof st->err, "%s:%d: %s", st->path, st->lineno, msg);
}

/* ---- Sections ----------------------------------------------------------- */

/* [ID]: a new exercise at the end of the set. */
static void new_exercise(ld_state *st, const char *id)
{
    dq_exercise *x;

    for (size_t i = 0; i < st->set->n; i++)
        if (strcmp(st->set->x[i].id, id) == 0) {
            ld_fail(st, "[%s] given twice", id);
            return;
        }
    x = realloc(st->set->x, (st->set->n + 2) * sizeof *x);
    if (x == NULL) {
        ld_fail(st, "out of memory");
        return;
    }
    st->set->x = x;
    x = &x[st->set->n++];
    memset(x, 0, 2 * sizeof *x);
    if ((x->id = strdup(id)) == NULL)
        ld_fail(st, "out of memory");
    x->line = st->lineno;
    st->x = x;
    st->c = NULL;
    st->nchecks = 0;
}

/* [ID.N]: check N of the exercise just begun, N written 1, 2, ... */
static void new_check(ld_state *st, const char *sec, const char *dot)
{
    char *end;
    bool digit = dot[1] >= '1' && dot[1] <= '9';
    long n = strtol(dot + 1, &end, 10);

    if (st->x == NULL || strncmp(st->x->id, sec, (size_t)(dot - sec)) != 0 ||
        st->x->id[dot - sec] != '\0') {
        ld_fail(st, "[%s] does not follow [%.*s] (a check comes after its "
                "exercise)", sec, (int)(dot - sec), sec);
        return;
    }
    if (!digit || *end != '\0' || n != (long)st->nchecks + 1 ||
        n > DQ_XCHECKS_MAX) {
        ld_fail(st, "[%s]: expected [%s.%zu] (checks numbered 1, 2, ... in "
                "order, at most %d)", sec, st->x->id, st->nchecks + 1,
                DQ_XCHECKS_MAX);
        return;
    }
    st->c = &st->x->checks[st->nchecks++];
    st->kind_set = false;
    st->given = 0;
    st->check_line = st->lineno;
}

/* A tab in s (owned by the set) made a blank: exercise.c splits a
 * check's word lists on spaces, and the file allows any blanks. */
static void untab(const char *s)
{
    for (char *p = (char *)s; p != NULL && *p != '\0'; p++)
        if (*p == '\t')
            *p = ' ';
}

/* The end of a section: a check must have been given all it needs. */
static void end_section(ld_state *st)
{
    const dq_xcheck *c = st->c;

    if (c == NULL || st->err[0] != '\0')
        return;
    untab(c->options);
    untab(c->ops);
    untab(c->args);
    untab(c->set);
    untab(c->tests);
    if (!st->kind_set || c->what == NULL || c->proves == NULL ||
        (c->kind == DQ_XC_SUITE && c->tests == NULL))
        snprintf(st->err, sizeof st->err, "%s:%d: [%s.%zu] needs kind, "
                 "what and proves (and tests for kind = suite)", st->path,
                 st->check_line, st->x->id, st->nchecks);
    st->c = NULL;
}

static void on_section(ld_state *st, const char *sec)
{
    const char *dot = strchr(sec, '.');

    end_section(st);
    st->last = NULL;
    if (st->err[0] != '\0')
        return;
    if (sec[0] == '\0' || strspn(sec, "abcdefghijklmnopqrstuvwxyz0123456789-.")
                              != strlen(sec))
        ld_fail(st, "[%s]: expected [ID] or [ID.N], ID of a-z, 0-9 and '-'",
                sec);
    else if (dot == NULL)
        new_exercise(st, sec);
    else
        new_check(st, sec, dot);
}

/* Whether inih reads the line just read as this reader does: it takes
 * an indented '[' for a header unless a key came since the last header
 * (this reader only a '[' at the line's start), and an indented ';' or '#'
 * for a comment even where this reader sees the last key's value going
 * on.  Notes whether the line is indented; false with st->err set. */
static bool same_reading(ld_state *st)
{
    const char *first = st->line + strspn(st->line, " \t");

    st->indented = first != st->line;
    if (st->indented && *first == '[' && st->header_seen)
        ld_fail(st, "an indented '[' line after a header or at the start "
                "(a header to inih): a header starts its line");
    else if (st->indented && (*first == ';' || *first == '#') &&
             !st->header_seen)
        ld_fail(st, "an indented line starting with ';' or '#' after a key "
                "(a comment to inih, not the value going on): start a "
                "comment at the line's start, or reword");
    return st->err[0] == '\0';
}

/* ini_reader: one line per call, counted; section headers go to
 * on_section.  NULL at the end or after an error (which stops inih). */
static char *read_line(char *str, int num, void *stream)
{
    ld_state *st = stream;
    const char *end;
    char sec[64];
    ssize_t n;

    if (st->err[0] != '\0')
        return NULL;
    errno = 0;
    if ((n = getline(&st->line, &st->cap, st->f)) < 0) {
        st->lineno++;
        if (ferror(st->f))
            ld_fail(st, "read error: %s", strerror(errno ? errno : EIO));
        return NULL;
    }
    st->lineno++;
    if (n >= num) {
        ld_fail(st, "line longer than %d bytes (go on on an indented next "
                "line)", num - 2);
        return NULL;
    }
    memcpy(str, st->line, (size_t)n + 1);
    if (!same_reading(st) || st->line[0] != '[')
        return st->err[0] != '\0' ? NULL : str;
    if ((end = strchr(st->line, ']')) == NULL || end - st->line > 62) {
        ld_fail(st, "a section header without ']' or longer than 60 bytes");
        return NULL;
    }
    if (end[1 + strspn(end + 1, " \t\r\n")] != '\0') {
        ld_fail(st, "text after ']' of a section header");
        return NULL;
    }
    snprintf(sec, sizeof sec, "%.*s", (int)(end - st->line - 1),
             st->line + 1);
    on_section(st, sec);
    st->header_seen = true;
    return st->err[0] != '\0' ? NULL : str;
}

/* ---- Keys --------------------------------------------------------------- */

#define XS(f) {#f, offsetof(dq_exercise, f)}
static const struct { const char *key; size_t off; } ex_keys[] = {
    XS(title), XS(from), XS(after), XS(task), XS(reference), XS(fails),
    XS(fails_why),
};
#undef XS

/* A check's string keys, with the kinds they belong to (bit 1 << kind). */
#define CS(f, kinds) {#f, offsetof(dq_xcheck, f), kinds}
#define ANY 7u
static const struct {
    const char *key;
    size_t off;
    unsigned kinds;
} check_keys[] = {
    CS(what, ANY), CS(proves, ANY),
    CS(options, 1u << DQ_XC_DECLARES), CS(ops, 1u << DQ_XC_DECLARES),
    CS(args, 1u << DQ_XC_TRIAL), CS(set, 1u << DQ_XC_TRIAL),
    CS(tests, 1u << DQ_XC_SUITE),
};
#undef CS

/* A check's keys that are not strings, each once (ld_state.given). */
static const char *const value_keys[] = {"need", "forbid", "max_lost",
                                         "max_extra"};
#define N_VALUE_KEYS (sizeof value_keys / sizeof value_keys[0])

static const char *const kind_words[] = {
    [DQ_XC_DECLARES] = "declares", [DQ_XC_TRIAL] = "trial",
    [DQ_XC_SUITE] = "suite"};

/* Sets the string at *slot to value (or appends " value" to it for a
 * continuation line). */
static void set_string(ld_state *st, const char **slot, const char *value,
                       bool more)
{
    size_t old = more ? strlen(*slot) + 1 : 0;
    char *s = malloc(old + strlen(value) + 1);

    if (s == NULL) {
        ld_fail(st, "out of memory");
        return;
    }
    if (more) {
        memcpy(s, *slot, old - 1);
        s[old - 1] = ' ';
    }
    strcpy(s + old, value);
    free((char *)*slot);
    *slot = s;
    st->last = slot;
}

/* "at-least-once survives-consumer-crash" (blank-separated) into DQ_G_*
 * bits.  A value fits buf: a line is shorter and need and forbid take no
 * continuation line. */
static void set_flags(ld_state *st, const char *key, const char *value,
                      unsigned *out)
{
    char buf[256], *save = NULL;

    snprintf(buf, sizeof buf, "%s", value);
    for (char *w = strtok_r(buf, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save)) {
        unsigned b;
        if (!dq_flag_parse(w, &b)) {
            ld_fail(st, "%s: '%s' is no guarantee (bin/dqlab list -v names "
                    "them)", key, w);
            return;
        }
        *out |= b;
    }
}

static void set_int(ld_state *st, const char *key, const char *value,
                    int64_t *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || v < -1) {
        ld_fail(st, "%s: '%s': expected -1 (any) or a count", key, value);
        return;
    }
    *out = v;
}

/* A key of [ID.N]. */
static void check_key(ld_state *st, const char *name, const char *value)
{
    dq_xcheck *c = st->c;
    size_t i;

    if (strcmp(name, "kind") == 0) {
        for (i = 0; i < 3 && strcmp(kind_words[i], value) != 0; i++)
            ;
        if (i == 3 || st->kind_set)
            ld_fail(st, "kind: '%s': expected declares, trial or suite, "
                    "once", value);
        c->kind = (dq_xcheck_kind)i;
        st->kind_set = true;
        return;
    }
    if (!st->kind_set) {
        ld_fail(st, "%s: kind must be the first key of a check", name);
        return;
    }
    for (i = 0; i < N_VALUE_KEYS && strcmp(value_keys[i], name) != 0; i++)
        ;
    if (i < N_VALUE_KEYS && (st->given & (1u << i))) {
        ld_fail(st, "%s given twice", name);
        return;
    }
    st->given |= i < N_VALUE_KEYS ? 1u << i : 0;
    for (i = 0; i < sizeof check_keys / sizeof check_keys[0]; i++)
        if (strcmp(check_keys[i].key, name) == 0)
            break;
    if (i < sizeof check_keys / sizeof check_keys[0] &&
        (check_keys[i].kinds & (1u << c->kind))) {
        const char **slot = (const char **)((char *)c + check_keys[i].off);
        if (*slot != NULL)
            ld_fail(st, "%s given twice", name);
        else
            set_string(st, slot, value, false);
    }
    else if (c->kind == DQ_XC_DECLARES && strcmp(name, "need") == 0)
        set_flags(st, name, value, &c->need);
    else if (c->kind == DQ_XC_DECLARES && strcmp(name, "forbid") == 0)
        set_flags(st, name, value, &c->forbid);
    else if (c->kind == DQ_XC_TRIAL && strcmp(name, "max_lost") == 0)
        set_int(st, name, value, &c->max_lost);
    else if (c->kind == DQ_XC_TRIAL && strcmp(name, "max_extra") == 0)
        set_int(st, name, value, &c->max_extra);
    else
        ld_fail(st, "%s: not a key of a %s check", name, kind_words[c->kind]);
}

static int on_key(void *user, const char *section, const char *name,
                  const char *value)
{
    ld_state *st = user;
    bool more = st->indented && !st->header_seen;
    size_t i;

    (void)section;
    if (st->err[0] != '\0')
        return 0;
    st->header_seen = false;
    if (more) {
        if (st->last == NULL)
            ld_fail(st, "%s: this indented line goes on a key that takes "
                    "one word or number", name);
        else
            set_string(st, st->last, value, true);
        return st->err[0] == '\0';
    }
    st->last = NULL;
    if (st->x == NULL)
        ld_fail(st, "%s: a key before the first [ID]", name);
    else if (st->c != NULL)
        check_key(st, name, value);
    else {
        for (i = 0; i < sizeof ex_keys / sizeof ex_keys[0] &&
                    strcmp(ex_keys[i].key, name) != 0; i++)
            ;
        if (i == sizeof ex_keys / sizeof ex_keys[0])
            ld_fail(st, "%s: not a key of an exercise", name);
        else if (*(const char **)((char *)st->x + ex_keys[i].off) != NULL)
            ld_fail(st, "%s given twice", name);
        else
            set_string(st, (const char **)((char *)st->x + ex_keys[i].off),
                       value, false);
    }
    return st->err[0] == '\0';
}

/* ---- The whole file ----------------------------------------------------- */

/* Debian's libinih keeps its options in globals (INI_RUNTIME_OPTIONS);
 * report/files.c sets its own for its one call and restores them, so
 * this call cannot count on the defaults either. */
typedef struct ini_opts {
    bool multiline, bom, inline_comments, stack, no_value, first_error;
    char *comment_prefixes;
    int max_line;
} ini_opts;

static ini_opts ini_opts_get(void)
{
    return (ini_opts){
        .multiline = ini_allow_multiline, .bom = ini_allow_bom,
        .inline_comments = ini_allow_inline_comments,
        .stack = ini_use_stack, .no_value = ini_allow_no_value,
        .first_error = ini_stop_on_first_error,
        .comment_prefixes = ini_start_comment_prefixes,
        .max_line = ini_max_line};
}

static void ini_opts_set(const ini_opts *o)
{
    ini_allow_multiline = o->multiline;
    ini_allow_bom = o->bom;
    ini_allow_inline_comments = o->inline_comments;
    ini_use_stack = o->stack;
    ini_allow_no_value = o->no_value;
    ini_stop_on_first_error = o->first_error;
    ini_start_comment_prefixes = o->comment_prefixes;
    ini_max_line = o->max_line;
}

/* The options this file is read with (its top comment states them): a
 * line buffer of DQ_EXERCISE_LINE bytes on the stack, continuation lines,
 * ';' and '#' comments at a line's start only. */
static const ini_opts exercise_opts = {
    .multiline = true, .stack = true, .comment_prefixes = ";#",
    .max_line = DQ_EXERCISE_LINE + 2};

/* The rules of one exercise: required keys, its strategies registered,
 * after an earlier exercise, each check complete. */
static void check_exercise(ld_state *st, const dq_exercise *x)
{
    const char *need[] = {x->title, x->task, x->reference, x->fails,
                          x->fails_why};
    const char *strat[] = {x->from, x->reference, x->fails};
    const dq_exercise *after = dq_exercise_find(st->set, x->after);
    char where[96];

    snprintf(where, sizeof where, "%s:%d: [%s]", st->path, x->line, x->id);
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (need[i] == NULL) {
            snprintf(st->err, sizeof st->err, "%s needs title, task, "
                     "reference, fails and fails_why", where);
            return;
        }
    if ((x->from == NULL) == (x->after == NULL))
        snprintf(st->err, sizeof st->err, "%s needs from (a strategy) or "
                 "after (an earlier exercise), not both", where);
    else if (x->after != NULL && (after == NULL || after >= x))
        snprintf(st->err, sizeof st->err, "%s: after = %s: no earlier "
                 "exercise '%s' (after names one above this one)", where,
                 x->after, x->after);
    for (size_t i = 0; i < 3 && st->err[0] == '\0'; i++)
        if (strat[i] != NULL && dq_strategy_find(strat[i]) == NULL)
            snprintf(st->err, sizeof st->err, "%s: no strategy '%s' in this "
                     "build (dqlab list)", where, strat[i]);
    if (st->err[0] == '\0' && x->checks[0].what == NULL)
        snprintf(st->err, sizeof st->err, "%s has no check ([%s.1])", where,
                 x->id);
}

int dq_exercises_load(const char *path, dq_exercise_set *set, char *err,
                      size_t errlen)
{
    ld_state st = {.path = path, .set = set, .header_seen = true};
    ini_opts saved = ini_opts_get();
    int rc;

    memset(set, 0, sizeof *set);
    if ((st.f = fopen(path, "r")) == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    ini_opts_set(&exercise_opts);
    rc = ini_parse_stream(read_line, &st, on_key, &st);
    ini_opts_set(&saved);
    end_section(&st);
    if (st.err[0] == '\0' && rc != 0)
        snprintf(st.err, sizeof st.err, "%s:%d: syntax error (expected "
                 "[section], key = value or a comment)", path,
                 rc > 0 ? rc : st.lineno);
    if (st.err[0] == '\0' && set->n == 0)
        snprintf(st.err, sizeof st.err, "%s: no exercise", path);
    for (size_t i = 0; st.err[0] == '\0' && i < set->n; i++)
        check_exercise(&st, &set->x[i]);
    fclose(st.f);
    free(st.line);
    if (st.err[0] == '\0')
        return 0;
    snprintf(err, errlen, "%s", st.err);
    dq_exercises_free(set);
    return -1;
}

void dq_exercises_free(dq_exercise_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        dq_exercise *x = &set->x[i];
        free((char *)x->id);
        for (size_t k = 0; k < sizeof ex_keys / sizeof ex_keys[0]; k++)
            free(*(char **)((char *)x + ex_keys[k].off));
        for (size_t c = 0; c < DQ_XCHECKS_MAX + 1; c++)
            for (size_t k = 0; k < sizeof check_keys / sizeof check_keys[0];
                 k++)
                free(*(char **)((char *)&x->checks[c] + check_keys[k].off));
    }
    free(set->x);
    memset(set, 0, sizeof *set);
}

const dq_exercise *dq_exercise_find(const dq_exercise_set *set,
                                    const char *id)
{
    for (size_t i = 0; id != NULL && i < set->n; i++)
        if (strcmp(set->x[i].id, id) == 0)
            return &set->x[i];
    return NULL;
}
