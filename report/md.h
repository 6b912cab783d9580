/* md.h -- the report's writing kit: the Markdown text and its HTML twin,
 * tables, figures drawn with gnuplot, and number formatting.
 *
 * libcmark (Debian 12: 0.30, plain CommonMark) has no table extension, so
 * the text is written twice in step: REPORT.md gets pipe tables (GitHub
 * renders them), the copy for cmark_markdown_to_html() the same tables as
 * raw HTML blocks (rendered with CMARK_OPT_UNSAFE; every cell is escaped
 * here).  Sections write through dq_md_printf and the table calls only, so
 * the two texts cannot differ but for the tables.  Knows nothing of the
 * results: the sections above hand it text, cells and CSV data.
 */
#ifndef DQ_MD_H
#define DQ_MD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The report being written. */
typedef struct dq_md {
    const char *dir;          /* the output directory (data/, figures/) */
    const char *scripts;      /* where the .gp files are */
    FILE *md, *hmd;           /* REPORT.md text; the same for cmark */
    char *mdbuf, *hmdbuf;     /* their text once dq_md_close()d */
    size_t mdlen, hmdlen;
} dq_md;

/* Opens both texts in memory.  0, or -1 with err. */
int dq_md_open(dq_md *o, const char *dir, const char *scripts, char *err,
               size_t errlen);
/* Ends both texts (mdbuf, hmdbuf hold them); safe twice. */
void dq_md_close(dq_md *o);
void dq_md_free(dq_md *o);

/* printf to both texts. */
void dq_md_printf(dq_md *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A table row of plain-text cells (md: pipe table; hmd: HTML table).  The
 * first row of a table has head true; dq_md_table_end() closes it. */
void dq_md_row(dq_md *o, bool head, const char *const *cells, size_t n);
/* The cell separator of dq_md_rowf formats. */
#define DQ_CELL "\x1f"
/* A row whose cells are printf(fmt, ...) split at DQ_CELL. */
void dq_md_rowf(dq_md *o, bool head, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void dq_md_table_end(dq_md *o);

/* Writes data (len bytes) as <dir>/data/<stem>.csv and draws
 * <dir>/figures/<stem>.svg and .png with gnuplot -c <scripts>/<script>.gp
 * <data file> <figure>; with link, also writes the figure's line
 * (dq_md_figure_link).  Returns 0, or -1 with err (a write, a missing
 * script or a failed gnuplot). */
int dq_md_figure(dq_md *o, const char *stem, const char *script,
                 const char *data, size_t len, bool link, char *err,
                 size_t errlen);
/* The figure's line: the SVG as an image, links to the PNG and to the
 * data, a blank line. */
void dq_md_figure_link(dq_md *o, const char *stem);
/* "Raw results: `DIR` (files)." with DIR relative to the working
 * directory when below it, so the report names no absolute path of the
 * machine that wrote it. */
void dq_md_raw(dq_md *o, const char *dir, const char *files);

/* open_memstream(buf, len): the stream, or NULL with err.  After fclose
 * the caller owns *buf (free). */
FILE *dq_mem_open(char **buf, size_t *len, char *err, size_t errlen);

/* Writes one cell of a wide CSV: the value of series s at x, or nothing
 * for an empty cell (the comma before it is written). */
typedef void (*dq_wide_cell_fn)(FILE *f, void *ctx, size_t s, int64_t x);
/* A wide CSV in memory, the shape the figure scripts read: a header xname
 * then, per series s and suffix k, ",<name s><sufs[k]>" (nsufs 0: one
 * column per series, no suffix); then per x of xs[0..nx-1] a line "<x>"
 * followed, per series, by ',' and cell(f, ctx, s, x).  Series names are
 * nseries strings every stride bytes from names.  Returns 0 with *buf
 * (malloc'd) and *len, or -1 with err. */
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
/* Appends printf(fmt, ...) to buf at *off (len bytes; *off may pass len,
 * nothing more is written then). */
void dq_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Set insertion into xs[0..n-1] (at most max); returns the new count. */
size_t dq_add_distinct_i64(int64_t *xs, size_t n, size_t max, int64_t v);
/* Sorts xs[0..n-1] ascending. */
void dq_sort_i64(int64_t *xs, size_t n);

#endif
