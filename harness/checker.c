/* checker.c -- reads an event log and counts what happened (checker.h).
 *
 * Jepsen-style: the verdict comes from the history alone.  The log is read
 * once, line by line, into a hash map id -> record (open addressing with
 * linear probing over a power-of-two table of indices into a record
 * vector, FNV-1a hashes kept in the records so growing never rehashes
 * strings; ids live in one growing arena).  That keeps a 1M-task log (3M+
 * records) to a few hundred ms and ~100 bytes per id.
 *
 * Order independence: a producer logs E after enqueue returns, and a fast
 * consumer may log the D of the same id before that, so a D whose id has no
 * E yet cannot be judged early or not on the spot.  Such deliveries are kept
 * in a side list and judged at the end of the file; the first delivery of
 * an id is the one with the smallest t_us, not the first line.
 *
 * Counting rules (see checker.h): deliveries counts every D record,
 * unknown those of ids never enqueued, duplicates the extra deliveries of
 * enqueued ids: (deliveries - unknown) - delivered.  Lateness is taken per
 * delivered id from its first delivery and summarised with nearest-rank
 * percentiles (https://en.wikipedia.org/wiki/Percentile#The_nearest-rank_method).
 * A log with an id enqueued twice is rejected: producers choose unique ids,
 * so it means two trials wrote into one file.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "checker.h"

#define DQ_LOG_MAGIC "# dqlab event log v1"

typedef struct rec {
    uint64_t hash;
    size_t id_off;        /* into the arena; NUL-terminated */
    int64_t due_ms;
    int64_t first_d_us;   /* smallest D time; valid when ndeliv > 0 */
    uint64_t ndeliv;
    uint64_t e_line;      /* line of the E record, 0 when none yet */
} rec;

typedef struct pend {
    size_t rec;           /* index into recs */
    int64_t t_us;
} pend;

typedef struct checker {
    rec *recs;
    size_t nrecs, caprecs;
    uint32_t *slots;      /* rec index + 1; 0 = empty */
    size_t nslots;        /* power of two */
    char *arena;
    size_t arena_len, arena_cap;
    pend *pends;
    size_t npends, cappends;
} checker;

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *np;

    if (need <= *cap)
        return 0;
    ncap = *cap ? *cap : 1024;
    while (ncap < need)
        ncap *= 2;
    np = realloc(*p, ncap * elem);
    if (np == NULL)
        return -1;
    *p = np;
    *cap = ncap;
    return 0;
}

static int rehash(checker *c, size_t nslots)
{
    uint32_t *s = calloc(nslots, sizeof *s);

    if (s == NULL)
        return -1;
    for (size_t i = 0; i < c->nrecs; i++) {
        size_t j = c->recs[i].hash & (nslots - 1);
        while (s[j] != 0)
            j = (j + 1) & (nslots - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(c->slots);
    c->slots = s;
    c->nslots = nslots;
    return 0;
}

/* Finds the record of id (n bytes), creating it when absent.  Returns its
 * index, or (size_t)-1 when out of memory. */
static size_t lookup(checker *c, const char *id, size_t n)
{
    uint64_t h = fnv1a(id, n);
    size_t j;
    rec *r;

    if ((c->nrecs + 1) * 2 > c->nslots &&
        rehash(c, c->nslots ? c->nslots * 2 : 4096) != 0)
        return (size_t)-1;
    j = h & (c->nslots - 1);
    while (c->slots[j] != 0) {
        rec *x = &c->recs[c->slots[j] - 1];
        if (x->hash == h && strncmp(c->arena + x->id_off, id, n) == 0 &&
            c->arena[x->id_off + n] == '\0')
            return c->slots[j] - 1;
        j = (j + 1) & (c->nslots - 1);
    }
    if (c->nrecs >= UINT32_MAX - 1 ||
        grow((void **)&c->recs, &c->caprecs, c->nrecs + 1, sizeof *c->recs) ||
        grow((void **)&c->arena, &c->arena_cap, c->arena_len + n + 1, 1))
        return (size_t)-1;
    r = &c->recs[c->nrecs];
    memset(r, 0, sizeof *r);
    r->hash = h;
    r->id_off = c->arena_len;
    memcpy(c->arena + c->arena_len, id, n);
    c->arena[c->arena_len + n] = '\0';
    c->arena_len += n + 1;
    c->slots[j] = (uint32_t)(c->nrecs + 1);
    return c->nrecs++;
}

static void checker_free(checker *c)
{
    free(c->recs);
    free(c->slots);
    free(c->arena);
    free(c->pends);
}

/* Strict decimal int64 >= 0 from a field. */
static bool parse_nonneg(const char *s, int64_t *out)
{
    int64_t v = 0;

    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return false;
        if (v > (INT64_MAX - (*s - '0')) / 10)
            return false;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double dq_percentile(const double *sorted, size_t n, double p)
{
    size_t rank;

    if (n == 0)
        return 0;
    if (p <= 0)
        return sorted[0];
    if (p >= 100)
        return sorted[n - 1];
    rank = (size_t)ceil(p / 100.0 * (double)n);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

#define MAXF 6

/* The checker; with lat_out, hands the sorted per-id lateness samples
 * (malloc'd) to the caller instead of freeing them. */
static int check_stream(FILE *f, const char *name, dq_check *out,
                        double **lat_out, char *err, size_t errlen)
{
    checker c;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    uint64_t lineno = 0;
    double *lat = NULL;
    int rc = -1;

    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);

#define BAD(...)                                                             \
    do {                                                                     \
        int n_ = snprintf(err, errlen, "%s:%llu: ", name,                    \
                          (unsigned long long)lineno);                       \
        if (n_ >= 0 && (size_t)n_ < errlen)                                  \
            snprintf(err + n_, errlen - (size_t)n_, __VA_ARGS__);            \
        goto done;                                                           \
    } while (0)

    while ((len = getline(&line, &cap, f)) >= 0) {
        char *fld[MAXF];
        int nf = 0;
        int64_t t;
        char *p;
        size_t ri;

        lineno++;
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if ((size_t)len != strlen(line))
            BAD("NUL byte in record");
        if (lineno == 1) {
            if (strcmp(line, DQ_LOG_MAGIC) != 0)
                BAD("not a dqlab event log (first line must be '%s')",
                    DQ_LOG_MAGIC);
            continue;
        }
        if (line[0] == '#')
            continue;
        if (len == 0)
            BAD("empty line");
        /* Split on TAB. */
        p = line;
        fld[nf++] = p;
        while ((p = strchr(p, '\t')) != NULL) {
            *p++ = '\0';
            if (nf == MAXF)
                BAD("too many fields");
            fld[nf++] = p;
        }
        if (fld[0][1] != '\0')
            BAD("unknown record type '%.20s'", fld[0]);
        switch (fld[0][0]) {
        case 'H':
            if (nf != 3)
                BAD("H record needs 3 fields, has %d", nf);
            if (fld[1][0] == '\0')
                BAD("H record with an empty key");
            continue;
        case 'E':
            if (nf != 5)
                BAD("E record needs 5 fields, has %d", nf);
            break;
        case 'D':
            if (nf != 5)
                BAD("D record needs 5 fields, has %d", nf);
            break;
        case 'A':
            if (nf != 4)
                BAD("A record needs 4 fields, has %d", nf);
            break;
        case 'F':
            if (nf != 5)
                BAD("F record needs 5 fields, has %d", nf);
            if (strcmp(fld[3], "begin") != 0 && strcmp(fld[3], "end") != 0)
                BAD("F record phase must be begin or end, not '%.20s'",
                    fld[3]);
            break;
        default:
            BAD("unknown record type '%.20s'", fld[0]);
        }
        if (!parse_nonneg(fld[1], &t))
            BAD("bad time '%.30s' (expected microseconds >= 0)", fld[1]);
        if (out->first_us == 0 || t < out->first_us)
            out->first_us = t;
        if (t > out->last_us)
            out->last_us = t;
        if (fld[0][0] == 'F')
            continue;
        if (fld[2][0] == '\0')
            BAD("empty task id");
        if (fld[3][0] == '\0')
            BAD("empty %s name", fld[0][0] == 'E' ? "producer" : "consumer");

        ri = lookup(&c, fld[2], strlen(fld[2]));
        if (ri == (size_t)-1)
            BAD("out of memory");
        rec *r = &c.recs[ri];
        switch (fld[0][0]) {
        case 'E': {
            int64_t due;
            if (!parse_nonneg(fld[3], &due))
                BAD("bad due time '%.30s' (expected ms >= 0)", fld[3]);
            if (r->e_line != 0)
                BAD("task '%.64s' enqueued twice (first at line %llu)",
                    fld[2], (unsigned long long)r->e_line);
            r->e_line = lineno;
            r->due_ms = due;
            out->enqueued++;
            break;
        }
        case 'D': {
            int64_t attempt;
            if (!parse_nonneg(fld[4], &attempt) || attempt > INT32_MAX)
                BAD("bad attempt '%.30s' (expected an integer >= 0)", fld[4]);
            out->deliveries++;
            if (r->ndeliv == 0 || t < r->first_d_us)
                r->first_d_us = t;
            r->ndeliv++;
            if (r->e_line != 0) {
                if (t < r->due_ms * 1000)
                    out->early++;
            } else {
                if (grow((void **)&c.pends, &c.cappends, c.npends + 1,
                         sizeof *c.pends))
                    BAD("out of memory");
                c.pends[c.npends].rec = ri;
                c.pends[c.npends].t_us = t;
                c.npends++;
            }
            break;
        }
        case 'A':
            out->acked++;
            break;
        }
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", name, strerror(errno));
        goto done;
    }
    if (lineno == 0) {
        snprintf(err, errlen, "%s:1: empty file (not a dqlab event log)", name);
        goto done;
    }

    /* Deliveries seen before their id's E record. */
    for (size_t i = 0; i < c.npends; i++) {
        rec *r = &c.recs[c.pends[i].rec];
        if (r->e_line != 0 && c.pends[i].t_us < r->due_ms * 1000)
            out->early++;
    }

    lat = malloc((c.nrecs ? c.nrecs : 1) * sizeof *lat);
    if (lat == NULL) {
        snprintf(err, errlen, "%s: out of memory", name);
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < c.nrecs; i++) {
        rec *r = &c.recs[i];
        if (r->e_line == 0) {
            out->unknown += r->ndeliv;
            continue;
        }
        if (r->ndeliv == 0) {
            out->lost++;
            continue;
        }
        out->delivered++;
        out->duplicates += r->ndeliv - 1;
        lat[n++] = (double)(r->first_d_us - r->due_ms * 1000) / 1000.0;
    }
    qsort(lat, n, sizeof *lat, cmp_double);
    out->lateness.n = n;
    out->lateness.p50_ms = dq_percentile(lat, n, 50);
    out->lateness.p90_ms = dq_percentile(lat, n, 90);
    out->lateness.p99_ms = dq_percentile(lat, n, 99);
    out->lateness.p999_ms = dq_percentile(lat, n, 99.9);
    out->lateness.max_ms = n ? lat[n - 1] : 0;
    if (lat_out != NULL) {
        *lat_out = lat;
        lat = NULL;
    }
    rc = 0;
#undef BAD
done:
    free(lat);
    free(line);
    checker_free(&c);
    return rc;
}

int dq_check_stream(FILE *f, const char *name, dq_check *out, char *err,
                    size_t errlen)
{
    return check_stream(f, name, out, NULL, err, errlen);
}

int dq_check_file_lateness(const char *path, dq_check *out, double **lat,
                           char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    int rc;

    *lat = NULL;
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    rc = check_stream(f, path, out, lat, err, errlen);
    fclose(f);
    return rc;
}

int dq_check_file(const char *path, dq_check *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    int rc;

    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    rc = dq_check_stream(f, path, out, err, errlen);
    fclose(f);
    return rc;
}

json_t *dq_check_json(const dq_check *c)
{
    json_t *o = json_object(), *lat = json_object();

    if (o == NULL || lat == NULL) {
        json_decref(o);
        json_decref(lat);
        return NULL;
    }
    json_object_set_new(o, "enqueued", json_integer((json_int_t)c->enqueued));
    json_object_set_new(o, "delivered", json_integer((json_int_t)c->delivered));
    json_object_set_new(o, "deliveries",
                        json_integer((json_int_t)c->deliveries));
    json_object_set_new(o, "duplicates",
                        json_integer((json_int_t)c->duplicates));
    json_object_set_new(o, "lost", json_integer((json_int_t)c->lost));
    json_object_set_new(o, "early", json_integer((json_int_t)c->early));
    json_object_set_new(o, "unknown", json_integer((json_int_t)c->unknown));
    json_object_set_new(o, "acked", json_integer((json_int_t)c->acked));
    json_object_set_new(lat, "p50", json_real(c->lateness.p50_ms));
    json_object_set_new(lat, "p90", json_real(c->lateness.p90_ms));
    json_object_set_new(lat, "p99", json_real(c->lateness.p99_ms));
    json_object_set_new(lat, "p999", json_real(c->lateness.p999_ms));
    json_object_set_new(lat, "max", json_real(c->lateness.max_ms));
    json_object_set_new(lat, "n", json_integer((json_int_t)c->lateness.n));
    json_object_set_new(o, "lateness_ms", lat);
    return o;
}
