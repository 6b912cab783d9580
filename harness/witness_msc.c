/* witness_msc.c -- the message sequence chart of a witness trial, as an
 * mscgen source rendered to SVG and PNG by Debian's mscgen
 * (https://www.mcternan.me.uk/mscgen/), and the reader of the trial's
 * event log whose records become the chart's boxes (witness_int.h).
 *
 * Why mscgen: a sequence chart is exactly "who sent what to whom, in
 * order", which is what a race is; mscgen lays one out from a short text
 * file, so the chart is regenerated from the capture on every run and the
 * .msc beside the images can be read (and diffed) as text.  mscgen draws
 * arcs in order, not to a time scale, so every label starts with its time
 * ("+12.345 ms", from the chart's T) and the gaps are in the labels.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"
#include "witness_int.h"

/* ---- Event-log records --------------------------------------------------- */

/* Splits line at TABs into at most max fields; returns how many. */
static int split_tabs(char *line, char **f, int max)
{
    int n = 0;

    line[strcspn(line, "\n")] = '\0';
    while (n < max) {
        f[n++] = line;
        if ((line = strchr(line, '\t')) == NULL)
            break;
        *line++ = '\0';
    }
    return n;
}

static int rec_parse(char *line, wt_rec *r)
{
    char *f[7];
    int n = split_tabs(line, f, 7);

    memset(r, 0, sizeof *r);
    if (n < 5 || strlen(f[0]) != 1 || !strchr("EDARF", f[0][0]))
        return -1;
    r->type = f[0][0];
    r->t_us = strtoll(f[1], NULL, 10);
    snprintf(r->id, sizeof r->id, "%s", f[2]);
    if (r->type == 'E') {
        r->due_ms = strtoll(f[3], NULL, 10);
        snprintf(r->who, sizeof r->who, "%s", f[4]);
    } else if (r->type == 'F') {
        snprintf(r->who, sizeof r->who, "%s", f[3]);
        snprintf(r->arg, sizeof r->arg, "%s", f[4]);
    } else {
        snprintf(r->who, sizeof r->who, "%s", f[3]);
        r->attempt = atoi(f[4]);
        if (r->type == 'R' && n > 5)
            snprintf(r->arg, sizeof r->arg, "%s", f[5]);
    }
    return 0;
}

int dq_wt_log_read(const char *path, wt_rec **out, size_t *n, char *err,
                   size_t errlen)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    wt_rec *v = NULL, r;
    size_t cap = 0;

    *out = NULL;
    *n = 0;
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        if (rec_parse(line, &r) != 0)
            continue;
        if (*n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            wt_rec *nv = realloc(v, nc * sizeof *nv);
            if (nv == NULL) {
                free(v);
                fclose(f);
                snprintf(err, errlen, "%s: out of memory", path);
                return -1;
            }
            v = nv;
            cap = nc;
        }
        v[(*n)++] = r;
    }
    fclose(f);
    *out = v;
    return 0;
}

const wt_rec *dq_wt_rec_find(const wt_rec *r, size_t n, char type,
                             const char *id, const char *who, int attempt)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].type == type && strcmp(r[i].id, id) == 0 &&
            (who == NULL || strcmp(r[i].who, who) == 0) &&
            (attempt < 0 || r[i].attempt == attempt))
            return &r[i];
    return NULL;
}

const char *dq_wt_short_key(const char *key)
{
    const char *e;

    if (strncmp(key, "dq:{", 4) == 0 && (e = strstr(key, "}:")) != NULL)
        return e + 2;
    return key;
}

/* ---- The chart ----------------------------------------------------------- */

void dq_wt_chart_entity(wt_chart *ch, const char *name, const char *label)
{
    if (ch->nent >= WT_MAX_ENTITIES)
        return;
    snprintf(ch->ent[ch->nent], sizeof ch->ent[0], "%s", name);
    snprintf(ch->entlabel[ch->nent], sizeof ch->entlabel[0], "%s", label);
    ch->nent++;
}

void dq_wt_chart_add(wt_chart *ch, wt_kind kind, int64_t t_us,
                     const char *from,
                     const char *to, const char *fmt, ...)
{
    wt_item *it;
    va_list ap;

    if (ch->n == ch->cap) {
        size_t nc = ch->cap ? 2 * ch->cap : 32;
        wt_item *ni = realloc(ch->items, nc * sizeof *ni);
        if (ni == NULL)
            return;
        ch->items = ni;
        ch->cap = nc;
    }
    it = &ch->items[ch->n];
    memset(it, 0, sizeof *it);
    it->t_us = t_us;
    it->seq = (unsigned)ch->n;
    it->kind = kind;
    snprintf(it->from, sizeof it->from, "%s", from);
    snprintf(it->to, sizeof it->to, "%s", to ? to : from);
    va_start(ap, fmt);
    vsnprintf(it->label, sizeof it->label, fmt, ap);
    va_end(ap);
    for (char *p = it->label; *p; p++)
        if (*p == '"')
            *p = '\'';
        else if (*p == '\\')
            *p = '/';
    ch->n++;
}

const char *dq_wt_arg(const wt_chart *ch, const char *a, char *buf, size_t len)
{
    char *end;
    long long v;
    int64_t t0_ms = ch->t0_us / 1000;

    errno = 0;
    v = strtoll(a, &end, 10);
    if (*a && *end == '\0' && errno == 0 && t0_ms > 0 &&
        llabs(v - t0_ms) < 86400000LL) {
        snprintf(buf, len, "T%+lld", v - (long long)t0_ms);
        return buf;
    }
    a = dq_wt_short_key(a);
    if (strlen(a) > 40)
        snprintf(buf, len, "%.37s...", a);
    else
        snprintf(buf, len, "%s", a);
    return buf;
}

static int item_cmp(const void *pa, const void *pb)
{
    const wt_item *a = pa, *b = pb;

    if (a->t_us != b->t_us)
        return a->t_us < b->t_us ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static const char *arc_op(wt_kind k)
{
    switch (k) {
    case WT_ARC: return "=>";
    case WT_REPLY: return ">>";
    case WT_EVENT: return "->";
    case WT_BOX: return "rbox";
    case WT_NOTE: return "note";
    }
    return "=>";
}

/* Writes one label, turning newlines into mscgen's \n. */
static void put_label(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
}

int dq_wt_chart_write(wt_chart *ch, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "wx");

    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    qsort(ch->items, ch->n, sizeof *ch->items, item_cmp);
    fprintf(f, "# %s\n# generated by dqlab witness from the MONITOR capture "
            "and the event log of one trial;\n# times: ms after T = %" PRId64
            " us since the epoch (CLOCK_REALTIME)\n", ch->title, ch->t0_us);
    fprintf(f, "msc {\n  hscale = \"2.2\", wordwraparcs = \"true\";\n  ");
    for (size_t i = 0; i < ch->nent; i++)
        fprintf(f, "%s%s [label=\"%s\"]", i ? ", " : "", ch->ent[i],
                ch->entlabel[i]);
    fprintf(f, ";\n  --- [label=\"");
    put_label(f, ch->title);
    fprintf(f, "\"];\n");
    for (size_t i = 0; i < ch->n; i++) {
        const wt_item *it = &ch->items[i];
        fprintf(f, "  %s %s %s [label=\"", it->from, arc_op(it->kind), it->to);
        if (it->t_us > 0)
            fprintf(f, "%+.3f ms: ", (double)(it->t_us - ch->t0_us) / 1000.0);
        put_label(f, it->label);
        /* mscgen draws an arc through the middle of its label: as many
         * blank lines as the label has lines put it just below the text. */
        if (it->kind == WT_ARC || it->kind == WT_REPLY ||
            it->kind == WT_EVENT) {
            int lines = 1;
            for (const char *p = it->label; *p; p++)
                lines += *p == '\n';
            for (int k = 0; lines > 1 && k < lines; k++)
                fputs("\\n ", f);
        }
        fprintf(f, "\"];\n");
    }
    fprintf(f, "}\n");
    if (fclose(f) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

void dq_wt_chart_free(wt_chart *ch)
{
    free(ch->items);
    memset(ch, 0, sizeof *ch);
}

/* ---- Rendering ----------------------------------------------------------- */

static int find_mscgen(char *out, size_t outlen)
{
    const char *path = getenv("PATH");
    char dir[PATH_MAX];

    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(dir, sizeof dir, "%.*s", (int)n, n ? p : ".");
        snprintf(out, outlen, "%s/mscgen", dir);
        if (access(out, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return -1;
}

int dq_wt_mscgen_check(char *err, size_t errlen)
{
    char bin[PATH_MAX + 16];

    if (find_mscgen(bin, sizeof bin) == 0)
        return 0;
    snprintf(err, errlen, "mscgen not found in PATH (apt-get install mscgen, "
             "or sh tools/deps.sh)");
    return -1;
}

/* mscgen -T type -o out in; its first line of stderr into err on failure. */
static int run_mscgen(const char *type, const char *in, const char *out,
                      char *err, size_t errlen)
{
    char bin[PATH_MAX + 16], msg[256] = "";
    char *argv[] = {"mscgen", "-T", (char *)type, "-o", (char *)out,
                    (char *)in, NULL};
    int fds[2], st = 0;
    pid_t pid;
    ssize_t k;

    if (find_mscgen(bin, sizeof bin) != 0)
        return dq_wt_mscgen_check(err, errlen);
    if (pipe(fds) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid = dq_spawn(bin, argv, NULL, -1, -1, fds[1]);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        snprintf(err, errlen, "mscgen: %s", strerror(errno));
        return -1;
    }
    k = read(fds[0], msg, sizeof msg - 1);
    msg[k > 0 ? k : 0] = '\0';
    while (read(fds[0], bin, sizeof bin) > 0)
        ;
    close(fds[0]);
    dq_spawn_reap(pid, &st, true);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        msg[strcspn(msg, "\n")] = '\0';
        snprintf(err, errlen, "mscgen -T %s %s: %s", type, in,
                 msg[0] ? msg : "failed");
        unlink(out);
        return -1;
    }
    return 0;
}

int dq_wt_render(const char *msc, const char *svg, const char *png, char *err,
                 size_t errlen)
{
    if (run_mscgen("svg", msc, svg, err, errlen) != 0 ||
        run_mscgen("png", msc, png, err, errlen) != 0)
        return -1;
    return 0;
}
