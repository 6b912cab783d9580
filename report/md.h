/* md.h -- the report's writing kit: the Markdown text and its HTML twin,
 * tables, figures drawn with gnuplot, number formatting.
 *
 * libcmark (Debian 12: 0.30, plain CommonMark) has no table extension, so
 * the text is written twice in step: REPORT.md gets pipe tables (GitHub
 * renders them), the copy for cmark_markdown_to_html() the same tables as
 * raw HTML blocks (rendered with CMARK_OPT_UNSAFE; every cell is escaped
 * here).  Sections write only through these calls, so the two texts
 * differ in the tables alone.  Knows nothing of the results.
 */
#ifndef DQ_MD_H
#define DQ_MD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "text.h"

typedef struct dq_md {
    const char *dir;           /* the output directory (data/, figures/) */
    const char *scripts;       /* where the .gp files are */
    FILE *md, *hmd;            /* REPORT.md; the same for cmark */
    char *mdbuf, *hmdbuf;      /* their text after dq_md_close() */
    size_t mdlen, hmdlen;
    dq_texts *texts;           /* the prose templates (text.h) */
    char table_id[64];         /* the next table's id (dq_table_id) */
} dq_md;

/* Opens both texts in memory, with texts for dq_text (not owned): 0, or
 * -1 with err.  dq_md_close ends them (safe twice); dq_md_free frees
 * them. */
int dq_md_open(dq_md *o, const char *dir, const char *scripts,
               dq_texts *texts, char *err, size_t errlen);
void dq_md_close(dq_md *o);
void dq_md_free(dq_md *o);

/* printf to both texts. */
void dq_put(dq_md *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The template of use u rendered with the values of fmt (text.h,
 * dq_tcat: "  n=%d s=%s\n\n") to both texts.  DQ_TEXT: of template name
 * (a literal: "loss.intro"), recording the use; DQ_TEXTP: of a or b, by
 * cond; DQ_TBUF: appended to the text the char array b holds. */
void dq_text(dq_md *o, const dq_tuse *u, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define DQ_TEXT(o, name, fmt, ...)                                           \
    dq_text(o, DQ_TUSE(name, fmt), fmt, ##__VA_ARGS__)
#define DQ_TEXTP(o, cond, a, b, fmt, ...)                                    \
    dq_text(o, DQ_TPICK(cond, a, b, fmt), fmt, ##__VA_ARGS__)
#define DQ_TBUF(o, b, name, fmt, ...)                                        \
    DQ_TCAT((o)->texts, b, sizeof b, &(size_t){strlen(b)}, name, fmt,         \
            ##__VA_ARGS__)
#define DQ_TBUFP(o, b, cond, x, y, fmt, ...)                                 \
    DQ_TCATP((o)->texts, b, sizeof b, &(size_t){strlen(b)}, cond, x, y, fmt, \
             ##__VA_ARGS__)

/* Tables of plain-text cells: a head row from cells separated by '|'
 * ("strategy|consumers"), body rows from printf(fmt, ...) split at
 * DQ_CELL, or n cells as they are; dq_table_end closes the table. */
#define DQ_CELL "\x1f"
void dq_head(dq_md *o, const char *cells);
void dq_row(dq_md *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void dq_cells(dq_md *o, bool head, const char *const *cells, size_t n);
void dq_table_end(dq_md *o);
/* The same with cells of inline Markdown (links "[2 of 150](#exp-loss)",
 * emphasis, code spans): as written in REPORT.md, rendered by cmark in
 * the HTML twin.  The text must be safe as it is (no raw HTML from
 * results). */
void dq_mdcells(dq_md *o, bool head, const char *const *cells, size_t n);
/* In the HTML twin every table sits in a box that scrolls sideways
 * (<div style="overflow-x:auto">), so that a wide table never widens the
 * page on a narrow screen.  dq_table_id gives the next table's box an id
 * (at most 63 bytes; REPORT.md gets an empty <div id> before the table),
 * for links and for tools/firstscreen.sh ("summary-matrix"). */
void dq_table_id(dq_md *o, const char *id);

/* Link targets in both texts.  dq_anchor: an empty <div id="ID"> (an
 * HTML block of its own, so no empty paragraph), to put before a
 * heading that links point at ("[Loss](#exp-loss)").  dq_box_open and
 * dq_box_close: a <div id="ID"> around Markdown written between them
 * (blank lines apart, so the Markdown inside is still Markdown). */
void dq_anchor(dq_md *o, const char *id);
void dq_box_open(dq_md *o, const char *id);
void dq_box_close(dq_md *o);

/* Writes data (len bytes) as <dir>/data/<stem>.csv and draws
 * <dir>/figures/<stem>.svg and .png with gnuplot -c <scripts>/<script>.gp
 * <data> <figure>; with link, then writes its line (dq_figure_link).
 * 0, or -1 with err (a write, a missing script, a failed gnuplot). */
int dq_figure(dq_md *o, const char *stem, const char *script,
              const char *data, size_t len, bool link, char *err,
              size_t errlen);
/* Copies the figure src.svg (and src.png when it exists; src: a path
 * without extension, e.g. "results/witness/latest/naive-duplicate") to
 * <dir>/figures/<stem>.svg and .png, so that the report holds every
 * image it shows.  Returns 0 when src.svg does not exist (nothing
 * copied), else 1 | 2 (bit 1: the PNG was copied too), or -1 with err. */
int dq_copy_figure(dq_md *o, const char *src, const char *stem, char *err,
                   size_t errlen);
/* The figure's line: the SVG as an image, links to the PNG and data. */
void dq_figure_link(dq_md *o, const char *stem);
/* "Raw results: `DIR` (files)." with DIR relative to the working
 * directory when below it: the report names no absolute path. */
void dq_raw(dq_md *o, const char *dir, const char *files);

/* The whole file at path, malloc'd and NUL-terminated, its size in *len
 * (unless len is NULL); NULL with errno (ENOENT: no such file). */
char *dq_slurp(const char *path, size_t *len);
/* open_memstream(buf, len), or NULL with err; after fclose the caller
 * frees *buf. */
FILE *dq_mem_open(char **buf, size_t *len, char *err, size_t errlen);
/* Writes the cell of series s at x of a wide CSV (nothing: empty). */
typedef void (*dq_wide_cell_fn)(FILE *f, void *ctx, size_t s, int64_t x);
/* A wide CSV in memory, the shape the figure scripts read: a header xname
 * then, per series s and suffix k, ",<name s><sufs[k]>" (nsufs 0: one
 * column per series); then per x of xs[0..nx-1] "<x>" and, per series,
 * ',' and cell(f, ctx, s, x).  Series names: nseries strings every stride
 * bytes from names.  0 with *buf (malloc'd) and *len, or -1 with err. */
int dq_wide_csv(char **buf, size_t *len, const char *xname,
                const char *names, size_t stride, size_t nseries,
                const char *const *sufs, size_t nsufs, const int64_t *xs,
                size_t nx, dq_wide_cell_fn cell, void *ctx, char *err,
                size_t errlen);

/* "%.<prec>f" of v, or "n/a" when v < 0. */
void dq_fmt_double(char *buf, size_t len, double v, int prec);
/* A lateness in ms for a table: "0.42", "95.1", "2310". */
void dq_fmt_ms(char *buf, size_t len, double ms);
/* "a", "a and b", "a, b and c" of names[idx[0..n-1]]. */
void dq_join_and(char names[][32], const size_t *idx, size_t n, char *buf,
                 size_t len);
/* Appends printf(fmt, ...) to buf at *off (len bytes); nothing once *off
 * has reached len (it may pass len: the text was cut). */
void dq_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Set insertion into xs[0..n-1] (at most max): the new count.  Sorting
 * xs ascending. */
size_t dq_add_distinct_i64(int64_t *xs, size_t n, size_t max, int64_t v);
void dq_sort_i64(int64_t *xs, size_t n);

#endif
