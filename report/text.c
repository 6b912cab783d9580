/* text.c -- the report's text templates (text.h): read once per report
 * from <scripts>/text/<group>.md, checked against the list of texts.h,
 * rendered with the values a section gives.
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

const dq_tdef dq_tdefs[DQ_T_COUNT] = {
#define DQ_TEXT_DEF(group, name, keys) {#group, #name, keys},
    DQ_TEXTS(DQ_TEXT_DEF)
#undef DQ_TEXT_DEF
};

#define MAX_KEYS 24
#define KEY_OK(c) (islower((unsigned char)(c)) || isdigit((unsigned char)(c)) \
                   || (c) == '_')

/* The declared keys of d, split into k (at most MAX_KEYS); returns n. */
static size_t declared(const dq_tdef *d, char k[][32])
{
    size_t n = 0;
    for (const char *p = d->keys; *p && n < MAX_KEYS;) {
        size_t l = strcspn(p, " ");
        if (l > 0)
            snprintf(k[n++], 32, "%.*s", (int)l, p);
        p += l + (p[l] == ' ');
    }
    return n;
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

/* Whether a line keeps its own line: a list item, a table row, a heading. */
static bool own_line(const char *l)
{
    const char *p = l;
    while (isdigit((unsigned char)*p))
        p++;
    return strncmp(l, "- ", 2) == 0 || strncmp(l, "* ", 2) == 0 ||
           l[0] == '|' || l[0] == '#' || (p > l && strncmp(p, ". ", 2) == 0);
}

/* The template being read: its lines joined so far. */
typedef struct tpl {
    int id, line;              /* id in dq_tdefs (-1: none), marker line */
    char *text;
    size_t len, cap;
    const char *prev;          /* "": no line yet; else the last line */
    bool blank, heading;       /* a blank line since; prev is a heading */
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

/* Checks the placeholders of template id (text in body) against its
 * declared keys.  0, or -1 with err (where: "file:line"). */
static int check_keys(int id, const char *body, const char *where,
                      char *err, size_t errlen)
{
    char k[MAX_KEYS][32];
    size_t nk = declared(&dq_tdefs[id], k), i;
    bool used[MAX_KEYS] = {false};
    for (const char *p = strstr(body, "{{"); p; p = strstr(p + 2, "{{")) {
        const char *q = p + 2;
        while (KEY_OK(*q))
            q++;
        if (q == p + 2 || strncmp(q, "}}", 2) != 0) {
            snprintf(err, errlen, "%s: a '{{' that is not a placeholder "
                     "{{key}} (keys: lowercase, digits, _)", where);
            return -1;
        }
        for (i = 0; i < nk && (strlen(k[i]) != (size_t)(q - p - 2) ||
                               strncmp(k[i], p + 2, (size_t)(q - p - 2)));)
            i++;
        if (i == nk) {
            snprintf(err, errlen, "%s: {{%.*s}} is not a value of %s.%s "
                     "(it has: %s)", where, (int)(q - p - 2), p + 2,
                     dq_tdefs[id].group, dq_tdefs[id].name,
                     dq_tdefs[id].keys[0] ? dq_tdefs[id].keys : "none");
            return -1;
        }
        used[i] = true;
    }
    for (i = 0; i < nk; i++)
        if (!used[i]) {
            snprintf(err, errlen, "%s: %s.%s does not use {{%s}}, which its "
                     "section gives", where, dq_tdefs[id].group,
                     dq_tdefs[id].name, k[i]);
            return -1;
        }
    return 0;
}

/* Ends template t of file path: stores its text in x.  0 or -1 with err. */
static int tpl_end(dq_texts *x, tpl *t, const char *path, char *err,
                   size_t errlen)
{
    char where[4200];
    if (t->id < 0)
        return 0;
    snprintf(where, sizeof where, "%s:%d", path, t->line);
    if (check_keys(t->id, t->text ? t->text : "", where, err, errlen) != 0)
        return -1;
    x->body[t->id] = t->text ? t->text : strdup("");
    t->text = NULL;
    t->len = t->cap = 0;
    t->blank = t->heading = false;
    return x->body[t->id] ? 0 : -1;
}

/* The template a marker line "<!-- name -->" of group starts: its id, -1
 * when l is no marker, -2 (err set) when it names none of the list. */
static int marker(const char *group, const char *l, const char *where,
                  char *err, size_t errlen)
{
    size_t n = strlen(l);
    while (n > 0 && isspace((unsigned char)l[n - 1]))
        n--;
    if (n < 10 || strncmp(l, "<!-- ", 5) != 0 ||
        strncmp(l + n - 4, " -->", 4) != 0)
        return -1;
    for (size_t i = 5; i < n - 4; i++)
        if (!KEY_OK(l[i]))
            return -1;
    for (int id = 0; id < DQ_T_COUNT; id++)
        if (strcmp(dq_tdefs[id].group, group) == 0 &&
            strlen(dq_tdefs[id].name) == n - 9 &&
            strncmp(dq_tdefs[id].name, l + 5, n - 9) == 0)
            return id;
    snprintf(err, errlen, "%s: %s.%.*s is not a text the report uses (see "
             "report/texts.h)", where, group, (int)(n - 9), l + 5);
    return -2;
}

/* Reads dir/<group>.md into x.  0 or -1 with err. */
static int load_group(dq_texts *x, const char *dir, const char *group,
                      char *err, size_t errlen)
{
    char path[4096], where[4200], *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0, id;
    tpl t = {.id = -1};
    snprintf(path, sizeof path, "%s/%s.md", dir, group);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        snprintf(where, sizeof where, "%s:%d", path, ++lineno);
        if ((id = marker(group, line, where, err, errlen)) == -2)
            rc = -1;
        else if (id >= 0 && (x->body[id] != NULL || t.id == id))
            rc = -1, snprintf(err, errlen, "%s: %s.%s given twice", where,
                              group, dq_tdefs[id].name);
        else if (id >= 0 && (rc = tpl_end(x, &t, path, err, errlen)) == 0)
            t.id = id, t.line = lineno;
        else if (id < 0 && t.id >= 0 && tpl_line(&t, line) != 0)
            rc = -1, snprintf(err, errlen, "%s: out of memory", path);
    }
    if (rc == 0)
        rc = tpl_end(x, &t, path, err, errlen);
    free(t.text);
    free(line);
    fclose(f);
    return rc;
}

int dq_texts_load(dq_texts *x, const char *dir, char *err, size_t errlen)
{
    memset(x, 0, sizeof *x);
    for (int id = 0; id < DQ_T_COUNT; id++) {
        const char *g = dq_tdefs[id].group;
        int first = 0;
        while (strcmp(dq_tdefs[first].group, g) != 0)
            first++;
        if (first == id && load_group(x, dir, g, err, errlen) != 0) {
            dq_texts_free(x);
            return -1;
        }
    }
    for (int id = 0; id < DQ_T_COUNT; id++)
        if (x->body[id] == NULL) {
            snprintf(err, errlen, "%s/%s.md: no template \"<!-- %s -->\"",
                     dir, dq_tdefs[id].group, dq_tdefs[id].name);
            dq_texts_free(x);
            return -1;
        }
    return 0;
}

void dq_texts_free(dq_texts *x)
{
    for (int id = 0; id < DQ_T_COUNT; id++)
        free(x->body[id]);
    memset(x->body, 0, sizeof x->body);
}

void dq_tcat_kv(dq_texts *t, char *buf, size_t len, size_t *off,
                dq_text_id id, const char *const *keys,
                const char *const *vals, size_t n)
{
    char k[MAX_KEYS][32];
    size_t nk = declared(&dq_tdefs[id], k), i, j;
    bool ok = n == nk;
    for (i = 0; ok && i < n; i++) {
        for (j = 0; j < nk && strcmp(keys[i], k[j]) != 0;)
            j++;
        ok = j < nk;
    }
    if (!ok) {
        if (t->err[0] == '\0')
            snprintf(t->err, sizeof t->err, "text %s.%s rendered with other "
                     "values than it declares (%s)", dq_tdefs[id].group,
                     dq_tdefs[id].name, dq_tdefs[id].keys);
        return;
    }
    for (const char *p = t->body[id], *q; *p; p = q) {
        if ((q = strstr(p, "{{")) == NULL) {
            put(buf, len, off, p, strlen(p));
            break;
        }
        put(buf, len, off, p, (size_t)(q - p));
        p = q + 2;
        q = strstr(p, "}}");
        for (i = 0; strlen(keys[i]) != (size_t)(q - p) ||
                    strncmp(keys[i], p, (size_t)(q - p)) != 0;)
            i++;
        put(buf, len, off, vals[i], strlen(vals[i]));
        q += 2;
    }
}

/* Copies fmt to f (n bytes) with RS before each "key=" (in place of the
 * blank before it, but for the first); returns the number of keys, -1
 * when f is too small. */
static int mark_keys(const char *fmt, char *f, size_t n)
{
    size_t o = 0;
    int keys = 0;
    bool word = false;           /* *p follows a letter, digit or '_' */
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
        }
        word = KEY_OK(*p);
    }
    f[o] = '\0';
    return keys;
}

void dq_vtcat(dq_texts *t, char *buf, size_t len, size_t *off,
              dq_text_id id, const char *fmt, va_list ap)
{
    char f[1024], v[16384], *p, *eq;
    const char *keys[MAX_KEYS], *vals[MAX_KEYS];
    size_t fl = strlen(fmt), ls = 0, n = 0, vl;
    int nk = mark_keys(fmt, f, sizeof f);
    while (ls < fl && strchr(" \n", fmt[fl - 1 - ls]))
        ls++;
    if (nk < 0 || nk > MAX_KEYS ||
        (vl = (size_t)vsnprintf(v, sizeof v, f, ap)) >= sizeof v) {
        snprintf(t->err, sizeof t->err, "text %s.%s: values too long",
                 dq_tdefs[id].group, dq_tdefs[id].name);
        return;
    }
    v[vl - ls] = '\0';                   /* the suffix: fmt's own blanks */
    p = strchr(v, '\x1e');
    put(buf, len, off, v, p ? (size_t)(p - v) : strlen(v));
    for (; p != NULL; n++) {
        keys[n] = ++p;
        p = strchr(p, '\x1e');
        if (p != NULL)
            *p = '\0';
        eq = strchr(keys[n], '=');
        *eq = '\0';
        vals[n] = eq + 1;
    }
    dq_tcat_kv(t, buf, len, off, id, keys, vals, n);
    put(buf, len, off, fmt + fl - ls, ls);
}

void dq_tcat(dq_texts *t, char *buf, size_t len, size_t *off, dq_text_id id,
             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dq_vtcat(t, buf, len, off, id, fmt, ap);
    va_end(ap);
}
