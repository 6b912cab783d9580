/* section_probes.c -- the report's Probes section, and the loader the
 * claim rules use for the same file.
 *
 * `dqlab probes` (harness/probes.h) settles claims that need one careful
 * interaction with Redis rather than an experiment matrix: whether a score
 * round-trips a timestamp, what ZADD answers to MAXLEN, whether a payload
 * with a short TTL survives the delay.  It writes
 * <results>/probes/latest/probes.csv (RFC 4180: claim, probe, action,
 * observed, verdict_input).  This file prints those rows as a table, with
 * the Redis version and the run they came from, and offers them to
 * claims.c (dq_probes_load, dq_probe_int), which turns verdict_input into
 * verdicts.  Nothing here interprets the numbers: the section shows what
 * was done and what Redis did, the rules decide.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/probes.h"
#include "report_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* Reads path whole into a malloc'd NUL-terminated buffer; NULL with errno
 * set on failure. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap + 65536);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
            cap += 65536;
        }
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
    }
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

/* Parses one RFC 4180 record at *s into at most max fields copied into
 * out[i] (outlen[i] bytes each, truncated).  Advances *s past the record
 * (and its newline), counts newlines in *line.  Returns the number of
 * fields, or -1 on an unterminated quote or a character after a closing
 * quote. */
static int csv_record(const char **s, char **out, const size_t *outlen,
                      int max, int *line)
{
    const char *p = *s;
    int n = 0;
    for (;;) {
        char dummy[1];
        char *dst = n < max ? out[n] : dummy;
        size_t cap = n < max ? outlen[n] : 1, k = 0;
        if (*p == '"') {
            p++;
            for (;;) {
                if (*p == '\0')
                    return -1;
                if (*p == '"') {
                    if (p[1] == '"') {
                        p += 2;
                        if (k + 1 < cap)
                            dst[k++] = '"';
                        continue;
                    }
                    p++;
                    break;
                }
                if (*p == '\n')
                    (*line)++;
                if (k + 1 < cap)
                    dst[k++] = *p;
                p++;
            }
            if (*p != ',' && *p != '\n' && *p != '\r' && *p != '\0')
                return -1;
        } else {
            while (*p != ',' && *p != '\n' && *p != '\r' && *p != '\0') {
                if (k + 1 < cap)
                    dst[k++] = *p;
                p++;
            }
        }
        dst[k < cap ? k : cap - 1] = '\0';
        n++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\r')
            p++;
        if (*p == '\n') {
            p++;
            (*line)++;
        }
        break;
    }
    *s = p;
    return n;
}

int dq_probes_load(const char *root, dq_probes *pr, char *err, size_t errlen)
{
    char path[PATH_MAX + 64], real[PATH_MAX];
    memset(pr, 0, sizeof *pr);
    snprintf(path, sizeof path, "%s/probes/latest", root);
    if (realpath(path, real) == NULL)
        return 0;
    snprintf(pr->dir, sizeof pr->dir, "%s", real);
    snprintf(path, sizeof path, "%s/probes.csv", pr->dir);
    char *text = slurp(path);
    if (text == NULL) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    const char *s = text;
    int line = 1, rc = -1;
    char hdr[5][32];
    char *hout[5] = {hdr[0], hdr[1], hdr[2], hdr[3], hdr[4]};
    size_t hlen[5] = {32, 32, 32, 32, 32};
    int nf = csv_record(&s, hout, hlen, 5, &line);
    char want[128];
    snprintf(want, sizeof want, "%s", DQ_PROBES_CSV_HEADER);
    want[strcspn(want, "\n")] = '\0';
    char got[200];
    snprintf(got, sizeof got, "%s,%s,%s,%s,%s", hdr[0], hdr[1], hdr[2],
             hdr[3], hdr[4]);
    if (nf != 5 || strcmp(got, want) != 0) {
        snprintf(err, errlen, "%s:1: header is not '%s'", path, want);
        goto done;
    }
    while (*s != '\0') {
        if (*s == '\n' || *s == '\r') {  /* blank line */
            s += *s == '\r' && s[1] == '\n' ? 2 : 1;
            line++;
            continue;
        }
        dq_probe_row *nr = realloc(pr->rows, (pr->n + 1) * sizeof *nr);
        if (nr == NULL) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto done;
        }
        pr->rows = nr;
        dq_probe_row *r = &pr->rows[pr->n];
        memset(r, 0, sizeof *r);
        char *o[5] = {r->claim, r->probe, r->action, r->observed, r->input};
        size_t ol[5] = {sizeof r->claim, sizeof r->probe, sizeof r->action,
                        sizeof r->observed, sizeof r->input};
        int at = line;
        nf = csv_record(&s, o, ol, 5, &line);
        if (nf != 5) {
            snprintf(err, errlen, "%s:%d: %s", path, at, nf < 0 ?
                     "malformed quoted field" : "expected 5 fields");
            goto done;
        }
        pr->n++;
    }
    snprintf(path, sizeof path, "%s/meta.txt", pr->dir);
    FILE *m = fopen(path, "r");
    if (m != NULL) {
        char l[256];
        while (fgets(l, sizeof l, m) != NULL)
            if (strncmp(l, "redis_version = ", 16) == 0) {
                l[strcspn(l, "\r\n")] = '\0';
                snprintf(pr->redis_version, sizeof pr->redis_version, "%s",
                         l + 16);
            }
        fclose(m);
    }
    rc = 1;
done:
    free(text);
    if (rc < 0)
        dq_probes_free(pr);
    return rc;
}

void dq_probes_free(dq_probes *p)
{
    free(p->rows);
    p->rows = NULL;
    p->n = 0;
}

const dq_probe_row *dq_probes_find(const dq_probes *p, const char *claim,
                                   const char *probe)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->rows[i].claim, claim) == 0 &&
            strcmp(p->rows[i].probe, probe) == 0)
            return &p->rows[i];
    return NULL;
}

bool dq_probe_int(const dq_probe_row *row, const char *key, int64_t *out)
{
    if (row == NULL)
        return false;
    size_t kl = strlen(key);
    for (const char *s = row->input; *s;) {
        if (strncmp(s, key, kl) == 0 && s[kl] == '=') {
            char *end;
            errno = 0;
            long long v = strtoll(s + kl + 1, &end, 10);
            if (errno != 0 || end == s + kl + 1 || (*end != ';' && *end))
                return false;
            *out = v;
            return true;
        }
        const char *semi = strchr(s, ';');
        if (semi == NULL)
            break;
        s = semi + 1;
    }
    return false;
}

int section_probes(out *o, const char *root, char *err, size_t errlen)
{
    dq_probes p;
    int lr = dq_probes_load(root, &p, err, errlen);
    if (lr < 0)
        return -1;
    both(o, "## Probes (`probes`)\n\n");
    if (lr == 0) {
        both(o, "Not run yet: `bin/dqlab probes --results %s` (a few seconds; "
             "`make report` runs it) checks claims C06, C07, C08, C09 and "
             "C20 against a real Redis.\n\n", root);
        return 0;
    }
    both(o, "Single decisive interactions with Redis %s: each row says what "
         "`dqlab probes` sent and what Redis did, numbers and replies as "
         "read back.  The Claims section below decides C06, C07, C08, C09 "
         "and C20 from these rows.\n\n",
         p.redis_version[0] ? p.redis_version : "(version unknown)");
    const char *head[] = {"claim", "probe", "what was done",
                          "what Redis did"};
    table_row(o, head, 4, true);
    for (size_t i = 0; i < p.n; i++) {
        const dq_probe_row *r = &p.rows[i];
        const char *cells[] = {r->claim, r->probe, r->action, r->observed};
        table_row(o, cells, 4, false);
    }
    table_end(o);
    char cwd[PATH_MAX];
    const char *d = p.dir;
    if (getcwd(cwd, sizeof cwd) != NULL) {
        size_t n = strlen(cwd);
        if (n > 1 && strncmp(d, cwd, n) == 0 && d[n] == '/')
            d += n + 1;
    }
    both(o, "Raw results: `%s` (probes.csv, meta.txt).\n\n", d);
    dq_probes_free(&p);
    return 0;
}
