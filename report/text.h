/* text.h -- the report's fixed prose, kept out of C: Markdown templates
 * under <scripts>/text/ (report/text/) with named placeholders, filled by
 * the sections from a few values they compute.
 *
 * A template is named GROUP.NAME: it lives in text/GROUP.md after a line
 * "<!-- NAME -->" and runs to the next such line (what precedes the first
 * is the file's own notes).  Its text is Markdown; "{{key}}" is replaced
 * by the value of key.  Lines are joined as the report prints them: a
 * blank line separates paragraphs ("\n\n"), a line break inside one is
 * one space, or two after a sentence's end (".", "?", "!"); a line that
 * starts a list item ("- ", "* ", "1. ", also indented: a nested item
 * keeps its indent), a table row ("|") or a heading ("#") keeps its own
 * line.  Leading and trailing blank lines are
 * dropped, so a template never ends with a line break: the caller writes
 * what follows.  There are no conditionals: a section picks one of
 * several whole templates, and may render one into a value of another.
 *
 * Each place that renders a template names it and gives its values as a
 * printf format of "key=VALUE" pairs: DQ_TEXT(o, "loss.windows", "n=%zu
 * s=%s", n, s) (md.h).  The macros also record that use, name and format,
 * in the "dq_texts" section of the program (a linker set: the records of
 * every object linked in lie between __start_dq_texts and
 * __stop_dq_texts), so before anything is computed dq_texts_load() knows
 * every use the report can make and refuses, naming file and line, a
 * template that uses a key its uses do not give or leaves one unused, a
 * use without its template, a template no use names, and two uses of one
 * template with other keys.  The compiler checks the values against the
 * format.  Adding prose: its text in the .md file and one DQ_TEXT call.
 */
#ifndef DQ_TEXT_H
#define DQ_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* "" is the format of a template without values. */
#pragma GCC diagnostic ignored "-Wformat-zero-length"

/* One use of a template: its name and the format of its values. */
typedef struct dq_tuse {
    const char *name;          /* "loss.intro" */
    const char *fmt;           /* "n=%zu s=%s", "" */
} dq_tuse;
/* The attributes that put a dq_tuse (or an array of them, for tables of
 * texts) into the set; 16 bytes each, so that the set is an array. */
#define DQ_TUSES __attribute__((used, section("dq_texts"), aligned(16)))
/* A recorded use of template name with values fmt (both literals), as a
 * const dq_tuse *; DQ_TPICK: one of two, by cond. */
#define DQ_TUSE(name, fmt)                                                   \
    ({ static const dq_tuse dq_use_ DQ_TUSES = {name, fmt}; &dq_use_; })
#define DQ_TPICK(cond, a, b, fmt)                                            \
    ({ static const dq_tuse dq_use_[2] DQ_TUSES = {{a, fmt}, {b, fmt}};      \
       &dq_use_[(cond) ? 0 : 1]; })

#define DQ_TEXTS_MAX 1024
typedef struct dq_texts {
    size_t n;
    char *name[DQ_TEXTS_MAX];  /* "group.name" */
    char *body[DQ_TEXTS_MAX];  /* its text, lines joined */
    char *keys[DQ_TEXTS_MAX];  /* its placeholders, " a b " */
    int line[DQ_TEXTS_MAX];    /* of its marker in text/<group>.md */
    char dir[512];             /* the text directory as given to load */
    char err[1024];            /* the first rendering or data row error,
                                  one line; "" if none */
} dq_texts;

/* Reads the templates of every recorded use from dir/<group>.md (dir:
 * the text directory, e.g. "report/text", kept in t->dir to name the files
 * in later errors) and checks them against the uses.  0, or -1 with one
 * line in err ("report/text/loss.md: No such file or directory",
 * "report/text/loss.md:12: {{n}} is not a value of loss.intro (it is
 * given: a, b)") and nothing to free. */
int dq_texts_load(dq_texts *t, const char *dir, char *err, size_t errlen);
void dq_texts_free(dq_texts *t);
/* The recorded uses: *n of them (a NULL name is padding, to skip). */
const dq_tuse *dq_texts_uses(size_t *n);
/* The keys use u gives, " a b " (one blank around each), into k (len
 * bytes).  0, or -1 when k is too small. */
int dq_tuse_keys(const dq_tuse *u, char *k, size_t len);
/* Renders the template of u with each value given as keys[i] = vals[i]
 * (n pairs, the keys of u), appending to buf at *off; -1 (nothing
 * written) when they are not the template's keys. */
int dq_tcat_kv(const dq_texts *t, const dq_tuse *u, const char *const *keys,
               const char *const *vals, size_t n, char *buf, size_t len,
               size_t *off);

/* Renders the template of use u with the values of fmt, appending to buf
 * at *off (len bytes; dq_append's rule: nothing once *off reached len).
 * fmt is a printf format of "key=VALUE" pairs separated by one blank
 * ("n=%zu s=%s"; a value may hold blanks, not a " word=" of its own);
 * what comes before the first key is written before the text (", " or
 * "%s"), white space at the very end after it ("\n\n" ends a paragraph);
 * "" or " " for a template without keys.  Keys other than the template's:
 * t->err set ("internal error: ...", a fault of the program).  DQ_TCAT:
 * the same, recording the use. */
void dq_tcat(dq_texts *t, char *buf, size_t len, size_t *off,
             const dq_tuse *u, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void dq_vtcat(dq_texts *t, char *buf, size_t len, size_t *off,
              const dq_tuse *u, const char *fmt, va_list ap);
#define DQ_TCAT(t, buf, len, off, name, fmt, ...)                            \
    dq_tcat(t, buf, len, off, DQ_TUSE(name, fmt), fmt, ##__VA_ARGS__)
#define DQ_TCATP(t, buf, len, off, cond, a, b, fmt, ...)                     \
    dq_tcat(t, buf, len, off, DQ_TPICK(cond, a, b, fmt), fmt, ##__VA_ARGS__)
/* dq_tcat into buf from its start: buf holds the rendered template, or,
 * when the values do not fit it, at most the text before its first
 * placeholder (dq_tcat's rule) and t->err says why; DQ_TSET: of template
 * name, recording the use. */
void dq_tset(dq_texts *t, char *buf, size_t len, const dq_tuse *u,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
#define DQ_TSET(t, buf, len, name, fmt, ...)                                 \
    dq_tset(t, buf, len, DQ_TUSE(name, fmt), fmt, ##__VA_ARGS__)
/* "s" unless n is 1: a value for a template's plural ("trial{{s}}"). */
const char *dq_s(uint64_t n);

#endif
