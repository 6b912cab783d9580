/* files.c -- the report's one CSV reader and its meta.txt reader
 * (results.h), the bottom of report/.
 *
 * Every CSV the report reads (trials.csv, the bench's, probes.csv) goes
 * through here, so quoting, blank lines and messages are the same for
 * all.  A file is read whole and parsed in place: a field's unquoted text
 * is never longer than its quoted form, so it is written back over the
 * text, and the rows' strings point into it.  meta.txt is INI without
 * sections, read by inih like the experiment files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "md.h"
#include "results.h"

#define MAX_COLS 128

/* One record at *s into f[0..max-1], in place, after skipping blank
 * lines; counts line breaks in *line.  Returns the number of fields
 * (those past max counted, not stored), 0 at the end of the text, -1 on
 * an unterminated quote or a character after a closing quote. */
static int record(char **s, char **f, int max, int *line)
{
    char *p = *s, *w, sep;
    int n = 0;
    for (; *p == '\n' || (*p == '\r' && p[1] == '\n'); (*line)++)
        p += *p == '\r' ? 2 : 1;
    if (*p == '\0')
        return 0;
    do {
        if (n < max)
            f[n] = p;
        w = p;
        if (*p == '"') {
            for (p++; *p != '"' || p[1] == '"'; p++) {
                if (*p == '\0')
                    return -1;
                *line += *p == '\n';
                p += *p == '"';        /* "" is one quote */
                *w++ = *p;
            }
            if (*++p != ',' && *p != '\n' && *p != '\r' && *p != '\0')
                return -1;
        } else {
            w = p += strcspn(p, ",\r\n");
        }
        sep = *p;
        *w = '\0';
        n++;
        p += sep != '\0';              /* past the separator written over */
    } while (sep == ',');
    p += sep == '\r' && *p == '\n';
    *line += sep == '\n' || sep == '\r';
    *s = p;
    return n;
}

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
    char want[512];
    size_t off = 0;
    bool same = (size_t)nh == ncols;
    for (size_t c = 0; c < ncols; c++) {
        if (off < sizeof want)
            off += (size_t)snprintf(want + off, sizeof want - off, "%s%s",
                                    c ? "," : "", cols[c].name);
        same = same && strcmp(h[c], cols[c].name) == 0;
        idx[c] = -1;
        for (int i = 0; i < nh && i < MAX_COLS; i++)
            idx[c] = strcmp(h[i], cols[c].name) == 0 ? i : idx[c];
    }
    if (exact && !same) {
        snprintf(err, errlen, "%s:1: header is not '%s'", path, want);
        return -1;
    }
    for (size_t c = 0; c < ncols; c++)
        if (idx[c] < 0 && cols[c].absent == NULL) {
            snprintf(err, errlen, "%s:1: no column '%s'", path, cols[c].name);
            return -1;
        }
    return 0;
}

int dq_csv_load(const char *path, const dq_colspec *cols, size_t ncols,
                size_t rowsize, bool exact,
                const char *(*check)(const void *row), dq_csv *c,
                char *err, size_t errlen)
{
    char *h[MAX_COLS], *f[MAX_COLS], *s, *rows;
    int idx[MAX_COLS], line = 1, nh, n;
    memset(c, 0, sizeof *c);
    if (ncols > MAX_COLS) { /* idx[] holds MAX_COLS */
        snprintf(err, errlen, "%s: %zu columns expected, more than the %d "
                 "a reader holds", path, ncols, MAX_COLS);
        return -1;
    }
    if ((s = c->text = dq_slurp(path, NULL)) == NULL) {
        int e = errno;
        if (e != ENOENT)
            snprintf(err, errlen, "%s: %s", path, strerror(e));
        return e == ENOENT ? 0 : -1;
    }
    if ((nh = record(&s, h, MAX_COLS, &line)) <= 0) {
        snprintf(err, errlen, "%s:1: %s", path, nh == 0
                 ? "empty file (no header)" : "malformed quoted field");
        goto fail;
    }
    if (map_header(path, h, nh, cols, ncols, exact, idx, err, errlen) != 0)
        goto fail;
    for (;;) {
        int at = line;                 /* the record's line */
        for (char *b = s; *b == '\n' || *b == '\r'; b++)
            at += *b == '\n';
        if ((n = record(&s, f, MAX_COLS, &line)) == 0)
            return 1;
        if (n != nh) {
            snprintf(err, errlen, n < 0 ? "%s:%d: malformed quoted field"
                     : "%s:%d: %d fields, header has %d", path, at, n, nh);
            goto fail;
        }
        if ((rows = realloc(c->rows, (c->n + 1) * rowsize)) == NULL) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto fail;
        }
        c->rows = rows;
        char *row = memset(rows + c->n * rowsize, 0, rowsize);
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

/* The inih handler of dq_meta_load: one "key = value" line into the
 * dq_meta (meta.txt has no sections).  0 (inih goes on, counting it as an
 * error line) out of memory. */
static int meta_line(void *user, const char *section, const char *key,
                     const char *val)
{
    dq_meta *m = user;
    dq_kv *kv = realloc(m->kv, (m->n + 1) * sizeof *kv);
    (void)section;
    if (kv == NULL)
        return 0;
    m->kv = kv;
    dq_kv *x = &kv[m->n++];
    x->key = strdup(key);
    x->val = strdup(val);
    return x->key != NULL && x->val != NULL;
}

/* Lines of meta.txt are read whole: any length (inih grows its line
 * buffer on the heap, up to 1 MiB), no ';' inline comment, no
 * continuation lines.  These are inih's run-time settings (Debian's
 * libinih), restored after the file: experiment_load.c and
 * exercise_load.c read their files with the defaults. */
int dq_meta_load(const char *path, dq_meta *m, char *err, size_t errlen)
{
    bool stack = ini_use_stack, grow = ini_allow_realloc;
    bool inline_comments = ini_allow_inline_comments;
    bool multi = ini_allow_multiline;
    int max = ini_max_line, rc, e;
    memset(m, 0, sizeof *m);
    ini_use_stack = ini_allow_inline_comments = ini_allow_multiline = false;
    ini_allow_realloc = true;
    ini_max_line = 1 << 20;
    rc = ini_parse(path, meta_line, m);
    e = errno;
    ini_use_stack = stack;
    ini_allow_realloc = grow;
    ini_allow_inline_comments = inline_comments;
    ini_allow_multiline = multi;
    ini_max_line = max;
    if (rc == -1) {
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -1;
    }
    for (size_t i = 0; i < m->n; i++)
        if (m->kv[i].key == NULL || m->kv[i].val == NULL)
            rc = -2;
    if (rc == -2) {
        dq_meta_free(m);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    return 0;
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
