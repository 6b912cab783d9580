/* text.c -- the report's text templates (text.h): read once per report
 * from <scripts>/text/<group>.md, checked against the uses the program
 * records (the dq_texts linker set), rendered with the values a section
 * gives.
 *
 * A file is read line by line; each template's lines are joined into its
 * final text at load (the rules of text.h), so rendering only replaces
 * the placeholders.  Every check that can be made without the results is
 * made at load, with file:line in the message: a bad template stops the
 * report before anything is computed or written.
 */
#define _GNU_SOURCE /* getline */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

extern const dq_tuse __start_dq_texts[], __stop_dq_texts[];

#define KEY_OK(c) (islower((unsigned char)(c)) || isdigit((unsigned char)(c)) \
                   || (c) == '_')

const dq_tuse *dq_texts_uses(size_t *n)
{
    *n = (size_t)(__stop_dq_texts - __start_dq_texts);
    return __start_dq_texts;
}

/* Appends s[0..n-1] to buf at *off (the dq_append rule). */
static void put(char *buf, size_t len, size_t *off, const char *s, size_t n)
{
    if (*off < len) {
        size_t k = n < len - 1 - *off ? n : len - 1 - *off;
        memcpy(buf + *off, s, k);
        buf[*off + k] = '\0';
    }
    *off += n;
}

/* Whether a line keeps its own line: a list item (indented too: a nested
 * one keeps its indent), a table row, a heading. */
static bool own_line(const char *l)
{
    const char *p;
    l += strspn(l, " ");
    p = l;
    while (isdigit((unsigned char)*p))
        p++;
    return strncmp(l, "- ", 2) == 0 || strncmp(l, "* ", 2) == 0 ||
           l[0] == '|' || l[0] == '#' || (p > l && strncmp(p, ". ", 2) == 0);
}

/* The template being read: its lines joined so far. */
typedef struct tpl {
    char *text;
    size_t len, cap;
    bool blank, heading;       /* a blank line since; the last a heading */
} tpl;

/* Adds line l (trailing blanks stripped) to t.  0 or -1 out of memory. */
static int tpl_line(tpl *t, const char *l)
{
    size_t n = strlen(l), need;
    const char *sep = "";
    while (n > 0 && isspace((unsigned char)l[n - 1]))
        n--;
    if (n == 0) {
        t->blank = t->len > 0;
        return 0;
    }
    if (t->len > 0 && t->blank)
        sep = "\n\n";
    else if (t->len > 0 && (own_line(l) || t->heading))
        sep = "\n";
    else if (t->len > 0)
        sep = strchr(".?!", t->text[t->len - 1]) ? "  " : " ";
    if (sep[0] == ' ')
        for (; n > 0 && isspace((unsigned char)*l); n--)
            l++;
    need = t->len + strlen(sep) + n + 1;
    if (need > t->cap) {
        char *nt = realloc(t->text, need * 2);
        if (nt == NULL)
            return -1;
        t->text = nt;
        t->cap = need * 2;
    }
    t->len += (size_t)sprintf(t->text + t->len, "%s%.*s", sep, (int)n, l);
    t->heading = l[0] == '#';
    t->blank = false;
    return 0;
}

/* Copies fmt to f (n bytes) with RS before each "key=" (in place of the
 * blank before it, but for the first) and the keys into k (klen bytes,
 * " a b ").  Returns the number of keys, -1 when f or k is too small. */
static int mark_keys(const char *fmt, char *f, size_t n, char *k,
                     size_t klen)
{
    size_t o = 0, ko = 1;
    int keys = 0;
    bool word = false;           /* *p follows a letter, digit or '_' */
    snprintf(k, klen, " ");
    for (const char *p = fmt, *q; *p; f[o++] = *p++) {
        if (o + 3 >= n)
            return -1;
        if (*p == '%') {         /* a conversion: copied whole */
            for (f[o++] = *p++; *p && o + 2 < n; f[o++] = *p++)
                if (strchr("diouxXeEfFgGaAcspn%", *p))
                    break;
            if (*p == '\0')
                break;
            word = false;
            continue;
        }
        for (q = p; KEY_OK(*q) && !word;)
            q++;
        if (q > p && *q == '=') {
            o -= keys > 0 && o > 0 && f[o - 1] == ' ';
            f[o++] = '\x1e';
            keys++;
            ko += (size_t)snprintf(k + ko, ko < klen ? klen - ko : 0, "%.*s ",
                                   (int)(q - p), p);
        }
        word = KEY_OK(*p);
    }
    f[o] = '\0';
    return ko < klen ? keys : -1;
}

/* The placeholders of body, each once (" a b "), into k.  0, or -1 when
 * a "{{" is no placeholder. */
static int body_keys(const char *body, char *k, size_t len)
{
    size_t ko = 1;
    snprintf(k, len, " ");
    for (const char *p = strstr(body, "{{"), *q; p; p = strstr(q, "{{")) {
        char key[40];
        for (q = p + 2; KEY_OK(*q);)
            q++;
        if (q == p + 2 || q - p > 34 || strncmp(q, "}}", 2) != 0)
            return -1;
        snprintf(key, sizeof key, " %.*s ", (int)(q - p - 2), p + 2);
        if (strstr(k, key) == NULL && ko < len)
            ko += (size_t)snprintf(k + ko, len - ko, "%s", key + 1);
    }
    return ko < len ? 0 : -1;
}

/* The first key of list a (" x y ") not in list b into key; false when
 * there is none. */
static bool key_missing(const char *a, const char *b, char *key, size_t len)
{
    for (const char *p = a + 1; *p; p += strcspn(p, " ") + 1) {
        char k[40];
        snprintf(k, sizeof k, " %.*s ", (int)strcspn(p, " "), p);
        if (strstr(b, k) == NULL) {
            snprintf(key, len, "%.*s", (int)strcspn(p, " "), p);
            return true;
        }
    }
    return false;
}

/* The index of template name in x, or -1. */
static int find(const dq_texts *x, const char *name)
{
    for (size_t i = 0; i < x->n; i++)
        if (strcmp(x->name[i], name) == 0)
            return (int)i;
    return -1;
}

/* Stores template group.name (its text in t, its marker at path:line)
 * in x.  0 or -1 with err. */
static int tpl_end(dq_texts *x, const char *group, const char *name, tpl *t,
                   const char *path, int line, char *err, size_t errlen)
{
    char full[128], keys[512];
    snprintf(full, sizeof full, "%s.%s", group, name);
    if (find(x, full) >= 0 || x->n == DQ_TEXTS_MAX) {
        snprintf(err, errlen, "%s:%d: %s given twice, or more than %d texts",
                 path, line, full, DQ_TEXTS_MAX);
        return -1;
    }
    if (body_keys(t->text ? t->text : "", keys, sizeof keys) != 0) {
        snprintf(err, errlen, "%s:%d: a '{{' that is not a placeholder "
                 "{{key}} (keys: lowercase, digits, _)", path, line);
        return -1;
    }
    x->name[x->n] = strdup(full);
    x->body[x->n] = t->text ? t->text : strdup("");
    x->keys[x->n] = strdup(keys);
    x->line[x->n++] = line;
    memset(t, 0, sizeof *t);
    return x->name[x->n - 1] && x->body[x->n - 1] && x->keys[x->n - 1]
           ? 0 : -1;
}

/* The name of a marker line "<!-- name -->" into name (len bytes); false
 * when l is no marker. */
static bool marker(const char *l, char *name, size_t len)
{
    size_t n = strlen(l);
    while (n > 0 && isspace((unsigned char)l[n - 1]))
        n--;
    if (n < 10 || n - 9 >= len || strncmp(l, "<!-- ", 5) != 0 ||
        strncmp(l + n - 4, " -->", 4) != 0)
        return false;
    for (size_t i = 5; i < n - 4; i++)
        if (!KEY_OK(l[i]))
            return false;
    snprintf(name, len, "%.*s", (int)(n - 9), l + 5);
    return true;
}

/* Reads dir/<group>.md into x.  0 or -1 with err. */
static int load_group(dq_texts *x, const char *dir, const char *group,
                      char *err, size_t errlen)
{
    char path[4096], name[64] = "", next[64], *line = NULL;
    size_t cap = 0;
    int lineno = 0, at = 0, rc = 0;
    tpl t = {0};
    snprintf(path, sizeof path, "%s/%s.md", dir, group);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        if (!marker(line, next, sizeof next)) {
            if (name[0] && (rc = tpl_line(&t, line)) != 0)
                snprintf(err, errlen, "%s: out of memory", path);
            continue;
        }
        if (name[0])
            rc = tpl_end(x, group, name, &t, path, at, err, errlen);
        snprintf(name, sizeof name, "%s", next);
        at = lineno;
    }
    if (rc == 0 && name[0])
        rc = tpl_end(x, group, name, &t, path, at, err, errlen);
    free(t.text);
    free(line);
    fclose(f);
    return rc;
}

/* Checks use u against its template (-1: none) of x.  0, or -1 with err. */
static int check_use(const dq_texts *x, int i, const dq_tuse *u,
                     const char *dir, char *err, size_t errlen)
{
    char file[4200], f[1024], k[512], key[40];
    snprintf(file, sizeof file, "%s/%.*s.md", dir,
             (int)strcspn(u->name, "."), u->name);
    if (i < 0) {
        snprintf(err, errlen, "%s: no template \"<!-- %s -->\" (the report "
                 "renders %s)", file, strchr(u->name, '.') + 1, u->name);
        return -1;
    }
    mark_keys(u->fmt, f, sizeof f, k, sizeof k);
    if (key_missing(x->keys[i], k, key, sizeof key))
        snprintf(err, errlen, "%s:%d: {{%s}} is not a value of %s (it is "
                 "given:%s)", file, x->line[i], key, u->name,
                 k[1] ? k : " none");
    else if (key_missing(k, x->keys[i], key, sizeof key))
        snprintf(err, errlen, "%s:%d: %s does not use {{%s}}, which the "
                 "report gives", file, x->line[i], u->name, key);
    else
        return 0;
    return -1;
}

int dq_texts_load(dq_texts *x, const char *dir, char *err, size_t errlen)
{
    size_t nu, i, j;
    const dq_tuse *u = dq_texts_uses(&nu);
    bool used[DQ_TEXTS_MAX] = {false};
    memset(x, 0, sizeof *x);
    snprintf(x->dir, sizeof x->dir, "%s", dir);
    for (i = 0; i < nu; i++) {         /* each group once */
        char g[64];
        if (u[i].name == NULL)         /* padding in the set */
            continue;
        snprintf(g, sizeof g, "%.*s", (int)strcspn(u[i].name, "."),
                 u[i].name);
        for (j = 0; j < i && (u[j].name == NULL ||
                              strncmp(u[j].name, u[i].name, strlen(g) + 1));)
            j++;
        if (j == i && load_group(x, dir, g, err, errlen) != 0)
            goto fail;
    }
    for (i = 0; i < nu; i++) {
        int k = u[i].name ? find(x, u[i].name) : 0;
        if (u[i].name && check_use(x, k, &u[i], dir, err, errlen) != 0)
            goto fail;
        used[k] |= u[i].name != NULL;
    }
    for (i = 0; i < x->n; i++)
        if (!used[i]) {
            snprintf(err, errlen, "%s/%.*s.md:%d: %s is not used by the "
                     "report", dir, (int)strcspn(x->name[i], "."),
                     x->name[i], x->line[i], x->name[i]);
            goto fail;
        }
    return 0;
fail:
    dq_texts_free(x);
    return -1;
}

void dq_texts_free(dq_texts *x)
{
    for (size_t i = 0; i < x->n; i++) {
        free(x->name[i]);
        free(x->body[i]);
        free(x->keys[i]);
    }
    x->n = 0;
}

/* Writes template i of t with keys[k] = vals[k] into buf at *off. */
static void render(const dq_texts *t, int i, const char *const *keys,
                   const char *const *vals, size_t n, char *buf, size_t len,
                   size_t *off)
{
    for (const char *p = t->body[i], *q; *p; p = q + 2) {
        size_t k = 0;
        if ((q = strstr(p, "{{")) == NULL) {
            put(buf, len, off, p, strlen(p));
            break;
        }
        put(buf, len, off, p, (size_t)(q - p));
        p = q + 2;
        q = strstr(p, "}}");
        while (k + 1 < n && (strlen(keys[k]) != (size_t)(q - p) ||
                             strncmp(keys[k], p, (size_t)(q - p)) != 0))
            k++;
        put(buf, len, off, vals[k], strlen(vals[k]));
    }
}

int dq_tuse_keys(const dq_tuse *u, char *k, size_t len)
{
    char f[1024];
    return mark_keys(u->fmt, f, sizeof f, k, len) < 0 ? -1 : 0;
}

int dq_tcat_kv(const dq_texts *t, const dq_tuse *u, const char *const *keys,
               const char *const *vals, size_t n, char *buf, size_t len,
               size_t *off)
{
    char k[512] = " ", miss[40];
    int i = find(t, u->name);
    for (size_t j = 0, o = 1; j < n && o < sizeof k; j++)
        o += (size_t)snprintf(k + o, sizeof k - o, "%s ", keys[j]);
    if (i < 0 || key_missing(k, t->keys[i], miss, sizeof miss) ||
        key_missing(t->keys[i], k, miss, sizeof miss))
        return -1;
    render(t, i, keys, vals, n, buf, len, off);
    return 0;
}

void dq_vtcat(dq_texts *t, char *buf, size_t len, size_t *off,
              const dq_tuse *u, const char *fmt, va_list ap)
{
    char f[1024], v[16384], k[512], *p, *eq;
    const char *keys[32], *vals[32];
    size_t fl = strlen(fmt), ls = 0, n = 0, vl;
    int nk = mark_keys(fmt, f, sizeof f, k, sizeof k);
    while (ls < fl && strchr(" \n", fmt[fl - 1 - ls]))
        ls++;
    if (nk >= 0 && nk <= 32 &&
        (vl = (size_t)vsnprintf(v, sizeof v, f, ap)) < sizeof v) {
        v[vl - ls] = '\0';               /* the suffix: fmt's own blanks */
        p = strchr(v, '\x1e');
        put(buf, len, off, v, p ? (size_t)(p - v) : strlen(v));
        for (; p != NULL; n++) {
            keys[n] = ++p;
            if ((p = strchr(p, '\x1e')) != NULL)
                *p = '\0';
            eq = strchr(keys[n], '=');
            *eq = '\0';
            vals[n] = eq + 1;
        }
        if (dq_tcat_kv(t, u, keys, vals, n, buf, len, off) == 0) {
            put(buf, len, off, fmt + fl - ls, ls);
            return;
        }
    }
    if (t->err[0] == '\0')
        snprintf(t->err, sizeof t->err, "internal error: text %s rendered "
                 "with other values than its template's, or too long (%s)",
                 u->name, fmt);
}

void dq_tcat(dq_texts *t, char *buf, size_t len, size_t *off,
             const dq_tuse *u, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dq_vtcat(t, buf, len, off, u, fmt, ap);
    va_end(ap);
}

void dq_tset(dq_texts *t, char *buf, size_t len, const dq_tuse *u,
             const char *fmt, ...)
{
    va_list ap;
    buf[0] = '\0';
    va_start(ap, fmt);
    dq_vtcat(t, buf, len, &(size_t){0}, u, fmt, ap);
    va_end(ap);
}

const char *dq_s(uint64_t n)
{
    return n == 1 ? "" : "s";
}
