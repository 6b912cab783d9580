/* files.c -- the one CSV reader and the one meta.txt reader of the report
 * (files.h).
 *
 * A file is read whole and parsed in place: a field's unquoted text is
 * never longer than its quoted form, so it is written back over the text
 * and NUL-terminated there, and the rows' strings point into the kept
 * text.  No line length limit, no copy per field.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

#define MAX_COLS 64

/* The whole file at path, NUL-terminated (malloc'd); NULL with errno. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    if (f == NULL)
        return NULL;
    do {
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap += 65536);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
        }
        len += n = fread(buf + len, 1, cap - len - 1, f);
    } while (n > 0);
    int e = ferror(f) ? EIO : 0;
    fclose(f);
    if (e) {
        free(buf);
        errno = e;
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* One record at *s into f[0..max-1] (in place).  Skips blank lines first
 * and counts line breaks in *line.  Returns the number of fields (more
 * than max are counted, not stored), 0 at the end of the text, -1 on an
 * unterminated quote or a character after a closing quote. */
static int record(char **s, char **f, int max, int *line)
{
    char *p = *s;
    int n = 0;
    while (*p == '\n' || (*p == '\r' && p[1] == '\n')) {
        p += *p == '\r' ? 2 : 1;
        (*line)++;
    }
    if (*p == '\0')
        return 0;
    for (;;) {
        char *w = p;
        if (n < max)
            f[n] = w;
        if (*p == '"') {
            for (p++;; p++) {
                if (*p == '\0')
                    return -1;
                if (*p == '"' && p[1] != '"')
                    break;
                *line += *p == '\n';
                p += *p == '"';   /* "" is one quote */
                *w++ = *p;
            }
            if (*++p != ',' && *p != '\n' && *p != '\r' && *p != '\0')
                return -1;
        } else {
            p += strcspn(p, ",\r\n");
            w = p;
        }
        char sep = *p;
        *w = '\0';
        n++;
        if (sep == ',') {
            p++;
            continue;
        }
        if (sep != '\0')
            p++;          /* past the CR or LF (the NUL written over it) */
        if (sep == '\r' && *p == '\n')
            p++;
        *line += sep == '\n' || sep == '\r';
        break;
    }
    *s = p;
    return n;
}

/* Sets the field of row described by c from the text v. */
static void set_field(char *row, const dq_colspec *c, const char *v)
{
    void *p = row + c->off;
    switch (c->type) {
    case DQ_COLT_STR: *(const char **)p = v; break;
    case DQ_COLT_INT: *(int *)p = (int)strtol(v, NULL, 10); break;
    case DQ_COLT_I64: *(int64_t *)p = strtoll(v, NULL, 10); break;
    case DQ_COLT_U64: *(uint64_t *)p = strtoull(v, NULL, 10); break;
    case DQ_COLT_SZ: *(size_t *)p = (size_t)strtoull(v, NULL, 10); break;
    case DQ_COLT_DBL: *(double *)p = strtod(v, NULL); break;
    }
}

/* Maps cols to header positions idx[] (-1: absent).  0, or -1 with err. */
static int map_header(const char *path, char **h, int nh,
                      const dq_colspec *cols, size_t ncols, bool exact,
                      int *idx, char *err, size_t errlen)
{
    if (exact) {
        char want[512];
        size_t off = 0;
        bool same = (size_t)nh == ncols;
        for (size_t i = 0; i < ncols; i++) {
            off += (size_t)snprintf(want + off, sizeof want - off, "%s%s",
                                    i ? "," : "", cols[i].name);
            same = same && strcmp(h[i], cols[i].name) == 0;
        }
        if (!same) {
            snprintf(err, errlen, "%s:1: header is not '%s'", path, want);
            return -1;
        }
    }
    for (size_t c = 0; c < ncols; c++) {
        idx[c] = -1;
        for (int i = 0; i < nh && i < MAX_COLS; i++)
            if (strcmp(h[i], cols[c].name) == 0)
                idx[c] = i;
        if (idx[c] < 0 && cols[c].absent == NULL) {
            snprintf(err, errlen, "%s:1: no column '%s'", path, cols[c].name);
            return -1;
        }
    }
    return 0;
}

int dq_csv_load(const char *path, const dq_colspec *cols, size_t ncols,
                size_t rowsize, bool exact,
                const char *(*check)(const void *row), dq_csv *c,
                char *err, size_t errlen)
{
    char *h[MAX_COLS], *f[MAX_COLS], *s;
    int idx[MAX_COLS], line = 1, nh;
    memset(c, 0, sizeof *c);
    if ((c->text = slurp(path)) == NULL) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    s = c->text;
    if ((nh = record(&s, h, MAX_COLS, &line)) <= 0) {
        snprintf(err, errlen, "%s:1: %s", path, nh == 0
                 ? "empty file (no header)" : "malformed quoted field");
        goto fail;
    }
    if (map_header(path, h, nh, cols, ncols, exact, idx, err, errlen) != 0)
        goto fail;
    for (;;) {
        char *s0 = s;
        int at = line, n = record(&s, f, MAX_COLS, &line);
        for (; *s0 == '\n' || *s0 == '\r'; s0++)   /* the record's line */
            at += *s0 == '\n';
        if (n == 0)
            break;
        if (n != nh) {
            snprintf(err, errlen, n < 0 ? "%s:%d: malformed quoted field"
                     : "%s:%d: %d fields, header has %d", path, at, n, nh);
            goto fail;
        }
        char *rows = realloc(c->rows, (c->n + 1) * rowsize);
        if (rows == NULL) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto fail;
        }
        c->rows = rows;
        char *row = rows + c->n * rowsize;
        memset(row, 0, rowsize);
        for (size_t k = 0; k < ncols; k++)
            set_field(row, &cols[k], idx[k] >= 0 ? f[idx[k]]
                                                 : cols[k].absent);
        const char *bad = check ? check(row) : NULL;
        if (bad != NULL) {
            snprintf(err, errlen, "%s:%d: %s", path, at, bad);
            goto fail;
        }
        c->n++;
    }
    return 1;
fail:
    dq_csv_free(c);
    return -1;
}

void dq_csv_free(dq_csv *c)
{
    free(c->text);
    free(c->rows);
    memset(c, 0, sizeof *c);
}

/* s without leading and trailing blanks (in place). */
static char *trim(char *s)
{
    s += strspn(s, " \t");
    size_t n = strlen(s);
    while (n > 0 && strchr(" \t\r\n", s[n - 1]) != NULL)
        s[--n] = '\0';
    return s;
}

int dq_meta_load(const char *path, dq_meta *m, char *err, size_t errlen)
{
    char *text = slurp(path), *save = NULL;
    memset(m, 0, sizeof *m);
    if (text == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    for (char *l = strtok_r(text, "\n", &save); l != NULL;
         l = strtok_r(NULL, "\n", &save)) {
        char *t = trim(l), *eq = strchr(t, '=');
        if (*t == '#' || eq == NULL)
            continue;
        *eq = '\0';
        dq_kv *kv = realloc(m->kv, (m->n + 1) * sizeof *kv);
        if (kv == NULL)
            goto oom;
        m->kv = kv;
        kv[m->n].key = strdup(trim(t));
        kv[m->n].val = strdup(trim(eq + 1));
        if (kv[m->n].key == NULL || kv[m->n].val == NULL) {
            free(kv[m->n].key);
            free(kv[m->n].val);
            goto oom;
        }
        m->n++;
    }
    free(text);
    return 0;
oom:
    free(text);
    dq_meta_free(m);
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
}

const char *dq_meta_get(const dq_meta *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->kv[i].key, key) == 0)
            return m->kv[i].val;
    return "";
}

void dq_meta_free(dq_meta *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->kv[i].key);
        free(m->kv[i].val);
    }
    free(m->kv);
    memset(m, 0, sizeof *m);
}
