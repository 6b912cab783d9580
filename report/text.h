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
 * starts a list item ("- ", "* ", "1. "), a table row ("|") or a heading
 * ("#") keeps its own line.  Leading and trailing blank lines are
 * dropped, so a template never ends with a line break: the caller writes
 * what follows.  There are no conditionals: a section picks one of
 * several whole templates, and may render one into a value of another.
 *
 * DQ_TEXTS (texts.h) is the list of every template with the keys its
 * section provides, so that neither side can drift: dq_texts_load() refuses a
 * template that uses a key not declared for it or leaves a declared one
 * unused, a missing file or template, and a template the list does not
 * name; rendering with other keys than the declared ones is an error of
 * the program (dq_texts.err, reported at the end).  Adding prose: a line
 * in texts.h, its text in the .md file, and one dq_text() (md.h) or
 * dq_tcat() call.
 */
#ifndef DQ_TEXT_H
#define DQ_TEXT_H

#include <stdarg.h>
#include <stddef.h>

#include "texts.h" /* DQ_TEXTS: the list */

/* "" is the format of a template without values. */
#pragma GCC diagnostic ignored "-Wformat-zero-length"

typedef enum dq_text_id {
#define DQ_TEXT_ENUM(group, name, keys) DQ_T_##group##_##name,
    DQ_TEXTS(DQ_TEXT_ENUM)
#undef DQ_TEXT_ENUM
    DQ_T_COUNT
} dq_text_id;

typedef struct dq_tdef {
    const char *group, *name;  /* text/<group>.md, "<!-- name -->" */
    const char *keys;          /* "a b c": the values its section gives */
} dq_tdef;
/* The list as data, indexed by dq_text_id. */
extern const dq_tdef dq_tdefs[DQ_T_COUNT];

typedef struct dq_texts {
    char *body[DQ_T_COUNT];    /* the joined text of each template */
    char err[512];             /* the first rendering error, "" if none */
} dq_texts;

/* Reads every template of DQ_TEXTS from dir/<group>.md (dir: the text
 * directory, e.g. "report/text").  0, or -1 with one line in err ("dir/
 * loss.md: No such file or directory", "dir/loss.md:12: {{n}} is not a
 * value of loss.intro (it has: a, b)", ...) and nothing to free. */
int dq_texts_load(dq_texts *t, const char *dir, char *err, size_t errlen);
void dq_texts_free(dq_texts *t);

/* Renders template id with the values of fmt, appending to buf at *off
 * (len bytes; dq_append's rule: nothing once *off reached len).  fmt is
 * a printf format of "key=VALUE" pairs separated by one blank ("n=%zu
 * s=%s"; a value may hold blanks, not a " word=" of its own); what comes
 * before the first key is written before the text (", " or "%s"), white
 * space at the very end after it ("\n\n" ends a paragraph); "" or " " for
 * a template without keys.  Keys other than the declared ones: t->err. */
void dq_tcat(dq_texts *t, char *buf, size_t len, size_t *off, dq_text_id id,
             const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void dq_vtcat(dq_texts *t, char *buf, size_t len, size_t *off,
              dq_text_id id, const char *fmt, va_list ap);
/* The same with the values already split: keys[i] = vals[i], n pairs. */
void dq_tcat_kv(dq_texts *t, char *buf, size_t len, size_t *off,
                dq_text_id id, const char *const *keys,
                const char *const *vals, size_t n);

#endif
