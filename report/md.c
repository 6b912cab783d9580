/* md.c -- the report's writing kit (md.h): the Markdown text and its HTML
 * twin, tables, gnuplot figures, formatting.
 *
 * Files are written through dq_runmeta_write_atomic (harness/runmeta.h),
 * the writer every stored file of dqlab uses, and a figure is drawn to a
 * temporary name first: an interrupted report never leaves half a file.
 */
#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmark.h>

#include "../harness/runmeta.h"
#include "md.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

int dq_md_open(dq_md *o, const char *dir, const char *scripts,
               dq_texts *texts, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->texts = texts;
    o->dir = dir;
    o->scripts = scripts;
    o->md = dq_mem_open(&o->mdbuf, &o->mdlen, err, errlen);
    o->hmd = o->md ? dq_mem_open(&o->hmdbuf, &o->hmdlen, err, errlen) : NULL;
    return o->hmd != NULL ? 0 : -1;
}

void dq_md_close(dq_md *o)
{
    if (o->md)
        fclose(o->md);
    if (o->hmd)
        fclose(o->hmd);
    o->md = o->hmd = NULL;
}

void dq_md_free(dq_md *o)
{
    dq_md_close(o);
    free(o->mdbuf);
    free(o->hmdbuf);
    o->mdbuf = o->hmdbuf = NULL;
}

void dq_put(dq_md *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(o->md, fmt, ap);
    va_end(ap);
    va_start(ap, fmt);
    vfprintf(o->hmd, fmt, ap);
    va_end(ap);
}

void dq_text(dq_md *o, const dq_tuse *u, const char *fmt, ...)
{
    char buf[32768];
    size_t off = 0;
    va_list ap;
    va_start(ap, fmt);
    dq_vtcat(o->texts, buf, sizeof buf, &off, u, fmt, ap);
    va_end(ap);
    dq_put(o, "%s", off > 0 ? buf : "");
}

/* s as HTML text: cmark's own escaping (of <, >, & and "). */
static void html_escape(FILE *f, const char *s)
{
    cmark_node *t = cmark_node_new(CMARK_NODE_TEXT);
    char *h = cmark_node_set_literal(t, s)
                  ? cmark_render_html(t, CMARK_OPT_DEFAULT) : NULL;
    fputs(h != NULL ? h : "", f);
    free(h);
    cmark_node_free(t);
}

/* One cell of the HTML twin: escaped text, or inline Markdown rendered
 * by cmark without the paragraph around it. */
static void html_cell(FILE *f, const char *cell, bool md)
{
    if (!md) {
        html_escape(f, cell);
        return;
    }
    char *h = cmark_markdown_to_html(cell, strlen(cell),
                                     CMARK_OPT_UNSAFE | CMARK_OPT_SMART);
    if (h == NULL) {
        html_escape(f, cell);
        return;
    }
    size_t n = strlen(h);
    while (n > 0 && h[n - 1] == '\n')
        n--;
    bool p = n >= 7 && strncmp(h, "<p>", 3) == 0 &&
             strncmp(h + n - 4, "</p>", 4) == 0;
    fprintf(f, "%.*s", (int)(p ? n - 7 : n), p ? h + 3 : h);
    free(h);
}

/* The HTML twin's table start: a horizontally scrollable box (so that a
 * wide table never widens the page), with the id dq_table_id set. */
static void html_table_open(dq_md *o)
{
    fputs("<div", o->hmd);
    if (o->table_id[0] != '\0') {
        fputs(" id=\"", o->hmd);
        html_escape(o->hmd, o->table_id);
        fputc('"', o->hmd);
    }
    fputs(" style=\"overflow-x:auto\">\n<table>\n<thead>\n<tr>", o->hmd);
    o->table_id[0] = '\0';
}

static void write_cells(dq_md *o, bool head, const char *const *cells,
                        size_t n, bool md)
{
    if (head && o->table_id[0] != '\0')
        fprintf(o->md, "<div id=\"%s\"></div>\n\n", o->table_id);
    fputc('|', o->md);
    for (size_t i = 0; i < n; i++) {
        fputc(' ', o->md);
        for (const char *c = cells[i]; *c; c++)
            fprintf(o->md, "%s%c", *c == '|' ? "\\" : "", *c);
        fputs(" |", o->md);
    }
    fputc('\n', o->md);
    for (size_t i = 0; head && i <= n; i++)
        fputs(i == 0 ? "|" : i < n ? "---|" : "---|\n", o->md);
    if (head)
        html_table_open(o);
    else
        fputs("<tr>", o->hmd);
    for (size_t i = 0; i < n; i++) {
        fputs(head ? "<th>" : "<td>", o->hmd);
        html_cell(o->hmd, cells[i], md);
        fputs(head ? "</th>" : "</td>", o->hmd);
    }
    fputs(head ? "</tr>\n</thead>\n<tbody>\n" : "</tr>\n", o->hmd);
}

void dq_cells(dq_md *o, bool head, const char *const *c, size_t n)
{
    write_cells(o, head, c, n, false);
}

void dq_mdcells(dq_md *o, bool head, const char *const *c, size_t n)
{
    write_cells(o, head, c, n, true);
}

void dq_table_id(dq_md *o, const char *id)
{
    snprintf(o->table_id, sizeof o->table_id, "%s", id);
}

/* Splits buf in place at sep into cells and writes the row. */
static void split_row(dq_md *o, bool head, char *buf, char sep)
{
    const char *c[64];
    size_t n = 0;
    for (char *p = buf; n < 64; *p++ = '\0') {
        c[n++] = p;
        if ((p = strchr(p, sep)) == NULL)
            break;
    }
    write_cells(o, head, c, n, false);
}

void dq_head(dq_md *o, const char *cells)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", cells);
    split_row(o, true, buf, '|');
}

void dq_row(dq_md *o, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    split_row(o, false, buf, DQ_CELL[0]);
}

void dq_table_end(dq_md *o)
{
    fputc('\n', o->md);
    fputs("</tbody>\n</table>\n</div>\n\n", o->hmd);
}

void dq_anchor(dq_md *o, const char *id)
{
    dq_put(o, "<div id=\"%s\"></div>\n\n", id);
}

void dq_box_open(dq_md *o, const char *id)
{
    dq_put(o, "<div id=\"%s\">\n\n", id);
}

void dq_box_close(dq_md *o)
{
    dq_put(o, "</div>\n\n");
}

/* The last line gnuplot wrote to its stderr file path, into buf ("" when
 * none). */
static void gnuplot_said(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    char line[512];
    buf[0] = '\0';
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (line[0] != '\n')
            snprintf(buf, len, "%.*s", (int)strcspn(line, "\n"), line);
    if (f != NULL)
        fclose(f);
}

/* gnuplot -c script in outpath, through a temporary name; the terminal
 * follows outpath's extension (common.gp).  Its stderr goes to a file
 * beside the figure: its warnings (a series with no point, say) are not
 * the reader's business when the figure is drawn, and its last line
 * names what went wrong when it is not.  0 or -1 with err. */
static int run_gnuplot(const char *script, const char *in,
                       const char *outpath, char *err, size_t errlen)
{
    char tmp[PATH_MAX + 32], log[PATH_MAX + 40], said[400];
    const char *ext = strrchr(outpath, '.');
    int status;
    snprintf(tmp, sizeof tmp, "%.*s.tmp%ld%s", (int)(ext - outpath), outpath,
             (long)getpid(), ext);
    snprintf(log, sizeof log, "%s.err", tmp);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0)
            dup2(fd, 2);
        execlp("gnuplot", "gnuplot", "-c", script, in, tmp, (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "waitpid: %s", strerror(errno));
            return -1;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            snprintf(err, errlen, "gnuplot not found in PATH (apt-get "
                     "install gnuplot-nox)");
        else {
            gnuplot_said(log, said, sizeof said);
            snprintf(err, errlen, "gnuplot -c %s %s %s failed%s%s", script,
                     in, outpath, said[0] ? ": " : "", said);
        }
    } else if (rename(tmp, outpath) != 0) {
        snprintf(err, errlen, "rename %s: %s", outpath, strerror(errno));
    } else {
        unlink(log);
        return 0;
    }
    unlink(log);
    unlink(tmp);
    return -1;
}

int dq_figure(dq_md *o, const char *stem, const char *script,
              const char *data, size_t len, bool link, char *err,
              size_t errlen)
{
    static const char *const exts[] = {"svg", "png"};
    char path[PATH_MAX], gp[PATH_MAX], fig[PATH_MAX];
    snprintf(path, sizeof path, "%s/data/%s.csv", o->dir, stem);
    if (dq_runmeta_write_atomic(path, data, len, err, errlen) != 0)
        return -1;
    snprintf(gp, sizeof gp, "%s/%s.gp", o->scripts, script);
    if (access(gp, R_OK) != 0) {
        snprintf(err, errlen, "%s: %s (run dqlab report from the dqlab "
                 "directory, or pass --scripts DIR)", gp, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < 2; i++) {
        snprintf(fig, sizeof fig, "%s/figures/%s.%s", o->dir, stem, exts[i]);
        if (run_gnuplot(gp, path, fig, err, errlen) != 0)
            return -1;
    }
    if (link)
        dq_figure_link(o, stem);
    return 0;
}

char *dq_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb"), *m;
    char chunk[65536], *buf = NULL;
    size_t n, blen = 0;
    int e = 0;
    if (f == NULL)
        return NULL;
    if ((m = open_memstream(&buf, &blen)) == NULL)
        e = errno;
    while (m != NULL && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (fwrite(chunk, 1, n, m) != n)
            e = ENOMEM;
    if (m != NULL && ferror(f))
        e = EIO;
    if (m != NULL && fclose(m) != 0)
        e = ENOMEM;
    fclose(f);
    if (e != 0) {
        free(buf);
        errno = e;
        return NULL;
    }
    if (len != NULL)
        *len = blen;
    return buf;
}

int dq_copy_figure(dq_md *o, const char *src, const char *stem, char *err,
                   size_t errlen)
{
    static const char *const exts[] = {"svg", "png"};
    char in[PATH_MAX], out[PATH_MAX], *buf;
    size_t len;
    int got = 0;
    for (size_t i = 0; i < 2; i++) {
        snprintf(in, sizeof in, "%s.%s", src, exts[i]);
        if ((buf = dq_slurp(in, &len)) == NULL && errno != ENOENT) {
            snprintf(err, errlen, "%s: %s", in, strerror(errno));
            return -1;
        }
        if (buf == NULL && i == 0)
            return 0;
        if (buf == NULL)
            continue;
        snprintf(out, sizeof out, "%s/figures/%s.%s", o->dir, stem, exts[i]);
        int rc = dq_runmeta_write_atomic(out, buf, len, err, errlen);
        free(buf);
        if (rc != 0)
            return -1;
        got |= 1 << i;
    }
    return got;
}

void dq_figure_link(dq_md *o, const char *stem)
{
    char id[300];
    snprintf(id, sizeof id, "fig-%s", stem);   /* what claims link to */
    dq_anchor(o, id);
    dq_put(o, "![%s](figures/%s.svg) ([PNG](figures/%s.png), [data](data/"
           "%s.csv))\n\n", stem, stem, stem, stem);
}

void dq_raw(dq_md *o, const char *dir, const char *files)
{
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) != NULL) {
        size_t n = strlen(cwd);
        if (n > 1 && strncmp(dir, cwd, n) == 0 && dir[n] == '/')
            dir += n + 1;
    }
    DQ_TEXT(o, "generic.raw", "dir=%s files=%s\n\n", dir, files);
}

FILE *dq_mem_open(char **buf, size_t *len, char *err, size_t errlen)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (f == NULL)
        snprintf(err, errlen, "open_memstream: %s", strerror(errno));
    return f;
}

int dq_wide_csv(char **buf, size_t *len, const char *xname,
                const char *names, size_t stride, size_t nseries,
                const char *const *sufs, size_t nsufs, const int64_t *xs,
                size_t nx, dq_wide_cell_fn cell, void *ctx, char *err,
                size_t errlen)
{
    FILE *f = dq_mem_open(buf, len, err, errlen);
    if (f == NULL)
        return -1;
    fputs(xname, f);
    for (size_t s = 0; s < nseries; s++)
        for (size_t k = 0; k < (nsufs ? nsufs : 1); k++)
            fprintf(f, ",%s%s", names + s * stride, nsufs ? sufs[k] : "");
    fputc('\n', f);
    for (size_t i = 0; i < nx; i++) {
        fprintf(f, "%" PRId64, xs[i]);
        for (size_t s = 0; s < nseries; s++) {
            fputc(',', f);
            cell(f, ctx, s, xs[i]);
        }
        fputc('\n', f);
    }
    fclose(f);
    return 0;
}

void dq_fmt_double(char *buf, size_t len, double v, int prec)
{
    if (v < 0)
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.*f", prec, v);
}

void dq_fmt_ms(char *buf, size_t len, double ms)
{
    snprintf(buf, len, "%.*f", ms < 10 ? 2 : ms < 1000 ? 1 : 0, ms);
}

void dq_join_and(char names[][32], const size_t *idx, size_t n, char *buf,
                 size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s",
                                i == 0 ? "" : i + 1 == n ? " and " : ", ",
                                names[idx[i]]);
}

void dq_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
    va_list ap;
    if (*off >= len)
        return;
    va_start(ap, fmt);
    *off += (size_t)vsnprintf(buf + *off, len - *off, fmt, ap);
    va_end(ap);
}

size_t dq_add_distinct_i64(int64_t *xs, size_t n, size_t max, int64_t v)
{
    for (size_t j = 0; j < n; j++)
        if (xs[j] == v)
            return n;
    if (n < max)
        xs[n++] = v;
    return n;
}

void dq_sort_i64(int64_t *xs, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && xs[j - 1] > xs[j]; j--) {
            int64_t t = xs[j];
            xs[j] = xs[j - 1];
            xs[j - 1] = t;
        }
}
