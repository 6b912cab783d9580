/* checker.c -- reads an event log and counts what happened (checker.h).
 *
 * Jepsen-style: the verdict comes from the history alone.  The log is read
 * once, line by line, into a hash map id -> record (open addressing with
 * linear probing over a power-of-two table of indices into a record
 * vector, FNV-1a hashes kept in the records so growing never rehashes
 * strings; ids live in one growing arena).  Consumer names go into a
 * second map of the same kind.  Every D and A record is kept as a small
 * fixed-size entry (24 and 16 bytes) and, at the end of the file, both
 * vectors are sorted by (id, time): the deliveries of one id are then
 * adjacent and in time order, which is what telling a redelivery from a
 * duplicate needs.  A 1M-task log (3M+ records) stays around a second and
 * ~150 bytes per id.
 *
 * Order independence: a producer logs E after enqueue returns, and a fast
 * consumer may log the D of the same id before that, so nothing is judged
 * while reading; the first delivery of an id is the one with the smallest
 * t_us, not the first line (ties: the earlier line).
 *
 * Counting rules (see checker.h): deliveries counts every D record,
 * unknown those of ids never enqueued, duplicates the extra deliveries of
 * enqueued ids: (deliveries - unknown) - delivered, split into
 * redelivered / dup_fault / dup_nofault with the fault windows of the F
 * records.  Lateness is taken per delivered id from its first delivery and
 * summarised with nearest-rank percentiles
 * (https://en.wikipedia.org/wiki/Percentile#The_nearest-rank_method).
 *
 * A never-delivered id is blamed on a fault window only when that fault
 * can plausibly have lost it (checker.h gives the rules; the fault's row,
 * looked up by the name in the F record, gives its loss rule): a wipe when
 * the id was enqueued before the window ended; a fault that loses what is
 * in flight when it was also due by the window's end +
 * DQ_CHECK_LOSS_SLACK_MS; a wrong clock and unknown fault names never.
 * Merely overlapping a fault is not enough: otherwise any fault in a
 * trial would explain every loss in it.
 * A log with an id enqueued twice is rejected: producers choose unique ids,
 * so it means two trials wrote into one file.
 *
 * Acks are matched to the delivery they acknowledge: an A record carries
 * the attempt of its delivery (v2), so a consumer's ack of a later
 * attempt never counts as the ack of its earlier, expired one; R records
 * (acks the strategy refused or that failed) are counted and acknowledge
 * nothing.  How the log ended (the Z record, the last line) decides
 * whether it can carry a verdict at all (dq_check_no_verdict).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../strategies/dq.h"
#include "checker.h"
#include "faults.h"

#define DQ_LOG_MAGIC_V1 "# dqlab event log v1"
#define DQ_LOG_MAGIC_V2 "# dqlab event log v2"

/* A string -> index map: open addressing over a power-of-two slot table
 * (index + 1; 0 = empty), strings NUL-terminated in one arena. */
typedef struct ment {
    uint64_t hash;
    size_t off;           /* into arena */
} ment;

typedef struct strmap {
    ment *e;
    size_t n, cap;
    uint32_t *slots;
    size_t nslots;
    char *arena;
    size_t alen, acap;
} strmap;

typedef struct rec {
    int64_t due_ms;
    int64_t e_us;         /* time of the E record */
    uint64_t ndeliv;
    uint64_t e_line;      /* line of the E record, 0 when none yet */
    uint32_t done;        /* A and R records: deliveries whose work ran to
                             its end (processed_twice) */
    bool dead;            /* an L record: in the dead-letter set at the
                             end */
} rec;

typedef struct dent {     /* one D record */
    int64_t t;
    uint32_t rec, cons, line;
    int32_t attempt;
} dent;

typedef struct aent {     /* one A record */
    int64_t t;
    uint32_t rec, cons;
    int32_t attempt;      /* of the delivery it acks; -1: a v1 A (none) */
} aent;

typedef struct gent {     /* one G record: a failed work given back */
    int64_t t;
    uint32_t rec, cons;
    int32_t attempt;
    bool readd;           /* by a re-add (else a nack) */
} gent;

typedef struct fent {     /* one F record */
    int64_t t;
    uint64_t line;
    size_t fault;         /* index into out->faults */
    bool begin;
    char arg[64];
} fent;

typedef struct window {   /* a paired fault window */
    int64_t begin, end;   /* end INT64_MAX: open to the end of the log */
    size_t fault;
    int64_t cons;         /* consumer index, -1: every consumer */
    char arg[64];
    unsigned explains;    /* its row's DQ_FAULT_EXPLAINS_* (0: unknown) */
    dq_fault_loss loss;   /* its row's loss rule (DQ_LOSS_NONE: unknown) */
    int64_t rollback_us;  /* how far before begin the writes its row says
                             it may drop reach (rollback_ms); -1: none */
} window;

typedef struct checker {
    strmap ids;
    rec *recs;
    size_t caprecs;
    strmap cons;
    dent *dv;
    size_t ndv, capdv;
    aent *av;
    size_t nav, capav;
    gent *gv;             /* G records: deliveries given back for a retry */
    size_t ngv, capgv;
    fent *fv;
    size_t nfv, capfv;
    window *wv;
    size_t nwv;
    int64_t *nv;          /* times of the N records (refused enqueues) */
    size_t nnv, capnv;
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

static int rehash(strmap *m, size_t nslots)
{
    uint32_t *s = calloc(nslots, sizeof *s);

    if (s == NULL)
        return -1;
    for (size_t i = 0; i < m->n; i++) {
        size_t j = m->e[i].hash & (nslots - 1);
        while (s[j] != 0)
            j = (j + 1) & (nslots - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(m->slots);
    m->slots = s;
    m->nslots = nslots;
    return 0;
}

/* Index of str (n bytes) in m, or (size_t)-1 when absent. */
static size_t map_find(const strmap *m, const char *str, size_t n)
{
    uint64_t h;
    size_t j;

    if (m->nslots == 0)
        return (size_t)-1;
    h = fnv1a(str, n);
    j = h & (m->nslots - 1);
    while (m->slots[j] != 0) {
        size_t x = m->slots[j] - 1;
        if (m->e[x].hash == h &&
            strncmp(m->arena + m->e[x].off, str, n) == 0 &&
            m->arena[m->e[x].off + n] == '\0')
            return x;
        j = (j + 1) & (m->nslots - 1);
    }
    return (size_t)-1;
}

/* Index of str (n bytes) in m, added when absent (*added set then).
 * Returns (size_t)-1 when out of memory. */
static size_t map_get(strmap *m, const char *str, size_t n, bool *added)
{
    size_t x = map_find(m, str, n), j;
    uint64_t h;

    *added = false;
    if (x != (size_t)-1)
        return x;
    if ((m->n + 1) * 2 > m->nslots &&
        rehash(m, m->nslots ? m->nslots * 2 : 4096) != 0)
        return (size_t)-1;
    if (m->n >= UINT32_MAX - 1 ||
        grow((void **)&m->e, &m->cap, m->n + 1, sizeof *m->e) ||
        grow((void **)&m->arena, &m->acap, m->alen + n + 1, 1))
        return (size_t)-1;
    h = fnv1a(str, n);
    j = h & (m->nslots - 1);
    while (m->slots[j] != 0)
        j = (j + 1) & (m->nslots - 1);
    m->e[m->n].hash = h;
    m->e[m->n].off = m->alen;
    memcpy(m->arena + m->alen, str, n);
    m->arena[m->alen + n] = '\0';
    m->alen += n + 1;
    m->slots[j] = (uint32_t)(m->n + 1);
    *added = true;
    return m->n++;
}

static void map_free(strmap *m)
{
    free(m->e);
    free(m->slots);
    free(m->arena);
}

static void checker_free(checker *c)
{
    map_free(&c->ids);
    map_free(&c->cons);
    free(c->recs);
    free(c->dv);
    free(c->av);
    free(c->gv);
    free(c->fv);
    free(c->wv);
    free(c->nv);
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

static int cmp_dent(const void *a, const void *b)
{
    const dent *x = a, *y = b;
    if (x->rec != y->rec)
        return x->rec < y->rec ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

static int cmp_aent(const void *a, const void *b)
{
    const aent *x = a, *y = b;
    if (x->rec != y->rec)
        return x->rec < y->rec ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

static int cmp_gent(const void *a, const void *b)
{
    const gent *x = a, *y = b;
    if (x->rec != y->rec)
        return x->rec < y->rec ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

static int cmp_fent(const void *a, const void *b)
{
    const fent *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

size_t dq_percentile_rank(double p, size_t n)
{
    double r;

    if (n == 0)
        return 0;
    /* p / 100 * n is inexact for p = 99.9 (999.0000000000001 for n =
     * 1000), and ceil would then pick rank 1000, the maximum: round away
     * anything below 1e-9 of a rank first. */
    r = ceil(p / 100.0 * (double)n - 1e-9);
    if (r < 1)
        return 1;
    if (r > (double)n)
        return n;
    return (size_t)r;
}

int dq_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double dq_median(double *v, size_t n)
{
    if (n == 0)
        return -1;
    qsort(v, n, sizeof *v, dq_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double dq_percentile(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    if (p <= 0)
        return sorted[0];
    if (p >= 100)
        return sorted[n - 1];
    return sorted[dq_percentile_rank(p, n) - 1];
}

/* Index of fault name in out->faults, added when new; names beyond the
 * table are pooled in its last entry, renamed "other". */
static size_t fault_index(dq_check *out, const char *name)
{
    for (size_t i = 0; i < out->nfaults; i++)
        if (strcmp(out->faults[i].name, name) == 0)
            return i;
    if (out->nfaults == DQ_CHECK_MAX_FAULTS) {
        snprintf(out->faults[DQ_CHECK_MAX_FAULTS - 1].name,
                 sizeof out->faults[0].name, "other");
        return DQ_CHECK_MAX_FAULTS - 1;
    }
    snprintf(out->faults[out->nfaults].name, sizeof out->faults[0].name, "%s",
             name);
    return out->nfaults++;
}

/* Does window w concern consumer cons? */
static bool win_for(const window *w, uint32_t cons)
{
    return w->cons < 0 || (uint32_t)w->cons == cons;
}

/* Does window w, of a fault that explains early deliveries (a wrong
 * clock), concern consumer cons?  Such a clock belongs to the consumer's
 * slot: it names "c0", and c0's replacements "c0.1", "c0.2" (trial_procs.c)
 * read it too. */
static bool clock_win_for(const checker *c, const window *w, uint32_t cons)
{
    const char *wn, *cn;
    size_t n;

    if (win_for(w, cons))
        return true;
    wn = c->cons.arena + c->cons.e[w->cons].off;
    cn = c->cons.arena + c->cons.e[cons].off;
    n = strlen(wn);
    return strncmp(cn, wn, n) == 0 && cn[n] == '.';
}

/* The first window (by begin) of consumer cons begun in (after, upto];
 * NULL when none. */
static const window *began_between(const checker *c, int64_t after,
                                   int64_t upto, uint32_t cons)
{
    for (size_t i = 0; i < c->nwv; i++) {
        const window *w = &c->wv[i];
        if (w->begin > upto)
            break;
        if (w->begin > after && win_for(w, cons))
            return w;
    }
    return NULL;
}

/* The first window (by begin) of consumer cons or of the consumer cons2
 * (any consumer for a fault that explains early deliveries) still open at
 * time t (begun at or before t, not yet ended): a long fault such as a
 * skewed clock spans both deliveries of a duplicate it causes, so "begun
 * between them" alone would miss it.  NULL when none. */
static const window *open_at(const checker *c, int64_t t, uint32_t cons,
                             uint32_t cons2)
{
    for (size_t i = 0; i < c->nwv; i++) {
        const window *w = &c->wv[i];
        if (w->begin > t)
            break;
        /* A skewed consumer's clock acts on every consumer's tasks (its
         * mover or reaper moves and re-leases them all), so such a window
         * counts whoever it names. */
        if (w->end >= t && ((w->explains & DQ_FAULT_EXPLAINS_EARLY) ||
                            win_for(w, cons) || win_for(w, cons2)))
            return w;
    }
    return NULL;
}

/* The consumer an F record's arg names: the value of `consumer=NAME`
 * (first key, or after a ','), else the part before the first ':'
 * (`<consumer>:...`, or the whole arg).  Sets *who into arg and returns
 * its length. */
static size_t arg_consumer(const char *arg, const char **who)
{
    const char *p = strstr(arg, "consumer=");

    if (p != NULL && (p == arg || p[-1] == ',')) {
        *who = p + strlen("consumer=");
        return strcspn(*who, ",");
    }
    *who = arg;
    return strcspn(arg, ":");
}

/* Can window w explain the loss of never-delivered record r (checker.h)?
 * The window must have begun before the end and ended at or after the
 * enqueue; then a DQ_LOSS_ENQUEUED fault explains it, and a DQ_LOSS_DUE
 * one only when r was due by the window's end + DQ_CHECK_LOSS_SLACK_MS (an
 * open window lasts to the end of the log).  A name no row knows explains
 * nothing, so that an unknown fault cannot hide a real loss. */
static bool explains_loss(const window *w, const rec *r, int64_t end_us)
{
    int64_t limit;

    if (w->begin > end_us || w->end < r->e_us)
        return false;
    switch (w->loss) {
    case DQ_LOSS_ENQUEUED:
        return true;
    case DQ_LOSS_DUE:
        limit = w->end > INT64_MAX - DQ_CHECK_LOSS_SLACK_MS * 1000
                    ? INT64_MAX
                    : w->end + DQ_CHECK_LOSS_SLACK_MS * 1000;
        return r->due_ms <= limit / 1000; /* due_ms*1000 <= limit,
                                             without overflow */
    case DQ_LOSS_NONE:
    default:
        return false;
    }
}

/* Pairs the F records into windows (sorted by begin) and resolves their
 * consumers.  Returns 0, or -1 with the offending F record in *bad (NULL:
 * out of memory). */
/* Opens a window at begin record f, with what its fault's row says it
 * explains. */
static void window_begin(checker *c, dq_check *out, const fent *f)
{
    window *w = &c->wv[c->nwv++];
    const dq_fault_ops *ops = dq_fault_find(out->faults[f->fault].name);
    const char *who;
    size_t wlen = arg_consumer(f->arg, &who);
    size_t ci = map_find(&c->cons, who, wlen);

    w->begin = f->t;
    w->end = INT64_MAX;
    w->fault = f->fault;
    w->cons = ci == (size_t)-1 ? -1 : (int64_t)ci;
    snprintf(w->arg, sizeof w->arg, "%s", f->arg);
    w->explains = ops != NULL ? ops->explains : 0;
    w->loss = ops != NULL ? ops->loss : DQ_LOSS_NONE;
    w->rollback_us = -1;
    if (ops != NULL && ops->rollback_ms != NULL) {
        int64_t ms = ops->rollback_ms(f->arg);
        if (ms >= 0)
            w->rollback_us = ms > INT64_MAX / 1000 ? INT64_MAX : ms * 1000;
    }
    out->fault_windows++;
    if (out->faults[f->fault].windows++ == 0)
        snprintf(out->faults[f->fault].arg, sizeof out->faults[0].arg, "%s",
                 f->arg);
}

/* Closes the window end record f ends: the first open window of its kind
 * for the same consumer (two kills' windows may overlap); failing that,
 * the first open one of its kind (a begin '' and its end 'ms=5').
 * Returns false when none is open. */
static bool window_end(checker *c, dq_check *out, const fent *f)
{
    const dq_fault_ops *ops = dq_fault_find(out->faults[f->fault].name);
    size_t k, any = c->nwv, elen, wlen;
    const char *ekey, *wkey;

    elen = arg_consumer(f->arg, &ekey);
    for (k = 0; k < c->nwv; k++) {
        if (c->wv[k].fault != f->fault || c->wv[k].end != INT64_MAX)
            continue;
        if (any == c->nwv)
            any = k;
        wlen = arg_consumer(c->wv[k].arg, &wkey);
        if (wlen == elen && memcmp(wkey, ekey, elen) == 0)
            break;
    }
    if (k == c->nwv)
        k = any;
    if (k == c->nwv)
        return false;
    c->wv[k].end = f->t;
    /* An end that says the queue died with the process (a kill with no
     * replacement, for an in-process strategy) wipes every task enqueued
     * before it, like a restart without persistence. */
    if (ops != NULL && ops->end_wipes != NULL &&
        strstr(f->arg, ops->end_wipes) != NULL)
        c->wv[k].loss = DQ_LOSS_ENQUEUED;
    return true;
}

static int make_windows(checker *c, dq_check *out, const fent **bad)
{
    if (c->nfv == 0)
        return 0;
    qsort(c->fv, c->nfv, sizeof *c->fv, cmp_fent);
    c->wv = calloc(c->nfv, sizeof *c->wv);
    if (c->wv == NULL) {
        *bad = NULL;
        return -1;
    }
    for (size_t i = 0; i < c->nfv; i++) {
        if (c->fv[i].begin) {
            window_begin(c, out, &c->fv[i]);
        } else if (!window_end(c, out, &c->fv[i])) {
            *bad = &c->fv[i];
            return -1;
        }
    }
    for (size_t i = 0; i < c->nwv; i++) {
        const window *w = &c->wv[i];
        int64_t e = w->end == INT64_MAX ? out->end_us : w->end;
        if (e > w->begin)
            out->faults[w->fault].window_us += e - w->begin;
    }
    return 0;
}

/* Each refused enqueue (N record) to the first window open at its time,
 * of any consumer: the fault that made the server refuse it. */
static void attribute_refused(const checker *c, dq_check *out)
{
    for (size_t k = 0; k < c->nnv; k++)
        for (size_t i = 0; i < c->nwv; i++) {
            const window *w = &c->wv[i];
            if (w->begin > c->nv[k])
                break;
            if (w->end >= c->nv[k]) {
                out->faults[w->fault].refused++;
                break;
            }
        }
}

/* The deliveries dv[d0..d1), acks av[a0..a1) and give-backs gv[g0..g1)
 * of one enqueued id. */
typedef struct span {
    const rec *r;
    size_t d0, d1, a0, a1, g0, g1;
} span;

/* The G record of delivery d of the id (its consumer and attempt: its
 * work failed and the task was given back for a retry), or NULL. */
static const gent *given_back(const checker *c, const span *sp,
                              const dent *d)
{
    for (size_t g = sp->g0; g < sp->g1; g++)
        if (c->gv[g].cons == d->cons && c->gv[g].attempt == d->attempt)
            return &c->gv[g];
    return NULL;
}

/* Early deliveries of the id; those inside a skewed clock's window
 * explained. */
static void judge_early(const checker *c, dq_check *out, const span *sp)
{
    for (size_t k = sp->d0; k < sp->d1; k++) {
        const dent *d = &c->dv[k];
        if (d->t >= sp->r->due_ms * 1000)
            continue;
        out->early++;
        for (size_t w = 0; w < c->nwv; w++) {
            const window *x = &c->wv[w];
            if ((x->explains & DQ_FAULT_EXPLAINS_EARLY) &&
                x->begin <= d->t && d->t <= x->end &&
                clock_win_for(c, x, d->cons)) {
                out->early_fault++;
                out->faults[x->fault].early++;
                break;
            }
        }
    }
}

/* Whether a lease claimed at t_us would still bring the task back at the
 * end: not run out, or run out less than DQ_CHECK_LOSS_SLACK_MS before it
 * (the next claim, up to a claim timeout away, has not taken it yet). */
static bool lease_holds(const dq_check *out, int64_t t_us)
{
    return out->lease_ms > 0 &&
           t_us + (out->lease_ms + DQ_CHECK_LOSS_SLACK_MS) * 1000 >
               out->end_us;
}

/* Whether a window of a fault that explains claimed losses (a consumer
 * killed right after its claim, before any D record) names id as the
 * task it held ("...,id=<id>" in its begin arg) with its lease still
 * holding at the end. */
static bool held_at_end(const checker *c, const dq_check *out,
                        const char *id)
{
    size_t n = strlen(id);

    for (size_t w = 0; w < c->nwv && out->lease_ms > 0; w++) {
        const window *x = &c->wv[w];
        const char *a = strstr(x->arg, "id=");
        while (a != NULL && a != x->arg && a[-1] != ',' && a[-1] != ':')
            a = strstr(a + 1, "id=");
        if ((x->explains & DQ_FAULT_EXPLAINS_CLAIMED) && a != NULL &&
            strncmp(a + 3, id, n) == 0 &&
            (a[3 + n] == '\0' || a[3 + n] == ',') &&
            lease_holds(out, x->begin))
            return true;
    }
    return false;
}

/* A never-delivered id: pending at the end (not due yet, or held by a
 * killed consumer under a lease that still holds), or lost (by a window
 * that explains it, or by none). */
static void judge_undelivered(const checker *c, dq_check *out, const rec *r,
                              const char *id)
{
    const window *x = NULL;

    if (r->dead) {
        out->dead_undelivered++;
        return;
    }
    if (r->due_ms * 1000 >= out->end_us) {
        out->pending_end++;
        out->pending_undelivered++;
        return;
    }
    if (held_at_end(c, out, id)) {
        out->pending_end++;
        return;
    }
    out->lost++;
    for (size_t w = 0; w < c->nwv && x == NULL; w++)
        if (explains_loss(&c->wv[w], r, out->end_us))
            x = &c->wv[w];
    if (x != NULL)
        out->faults[x->fault].lost++;
    else
        out->lost_nofault++;
}

/* The first window of a fault whose lost replies may make any strategy
 * repeat a task (DQ_FAULT_REPEATS_ANY) begun at or before e_us, the id's
 * E record: a producer retries an enqueue it saw fail only under a fault,
 * and a retry that lands after the task was delivered adds it again.
 * NULL when none. */
static const window *retried_before(const checker *c, int64_t e_us)
{
    for (size_t i = 0; i < c->nwv; i++) {
        const window *w = &c->wv[i];
        if (w->begin > e_us)
            break;
        if (w->explains & DQ_FAULT_REPEATS_ANY)
            return w;
    }
    return NULL;
}

/* The first window of a DQ_FAULT_REPEATS_ANY fault open at e_us, the
 * id's E record, which is written once the enqueue was acknowledged: an
 * enqueue acknowledged inside it may be a retry of one whose reply the
 * fault lost, and the first copy may already have moved on (a mover took
 * it to a stream or a ready list) when the retry added the task again, so
 * both copies are delivered after E.  NULL when none. */
static const window *retried_in(const checker *c, int64_t e_us)
{
    for (size_t i = 0; i < c->nwv; i++) {
        const window *w = &c->wv[i];
        if (w->begin > e_us)
            break;
        if ((w->explains & DQ_FAULT_REPEATS_ANY) && e_us <= w->end)
            return w;
    }
    return NULL;
}

/* The first window of a fault that rolls the server's data back
 * (rollback_us >= 0) begun at or before t, the repeat, whose reach -- from
 * rollback_us before its begin through its end -- holds prev_t, the
 * delivery before it: that claim's write may have been dropped, so the
 * task came back, however long after the window the repeat came.  NULL
 * when none. */
static const window *rolled_back(const checker *c, int64_t prev_t,
                                 int64_t t)
{
    for (size_t i = 0; i < c->nwv; i++) {
        const window *w = &c->wv[i];
        if (w->begin > t)
            break;
        if (w->rollback_us >= 0 && prev_t <= w->end &&
            (prev_t >= w->begin || w->begin - prev_t <= w->rollback_us))
            return w;
    }
    return NULL;
}

/* Was the id acked before delivery d?  An A in the same microsecond as d
 * by d's own consumer and attempt is d's own ack (work_us 0: the consumer
 * wrote D first), not an earlier one. */
static bool acked_before_d(const checker *c, const span *sp, const dent *d)
{
    for (size_t a = sp->a0; a < sp->a1 && c->av[a].t <= d->t; a++)
        if (c->av[a].t < d->t || c->av[a].cons != d->cons ||
            (c->av[a].attempt >= 0 && c->av[a].attempt != d->attempt))
            return true;
    return false;
}

/* Each extra delivery of the id, in time order: redelivered, a duplicate
 * a fault explains, or one none does (checker.h). */
static void judge_extra(const checker *c, dq_check *out, const span *sp)
{
    for (size_t k = sp->d0 + 1; k < sp->d1; k++) {
        const dent *d = &c->dv[k], *prev = &c->dv[k - 1];
        bool acked_before = acked_before_d(c, sp, d);
        bool prev_acked = false;
        const window *x = began_between(c, prev->t, d->t, prev->cons);
        /* The ack of that very delivery (same consumer and attempt; a v1
         * A has no attempt: any ack by its consumer). */
        for (size_t a = sp->a0; a < sp->a1 && !prev_acked; a++)
            prev_acked = c->av[a].cons == prev->cons &&
                         (c->av[a].attempt < 0 ||
                          c->av[a].attempt == prev->attempt);
        out->duplicates++;
        /* A delivery given back is never acked (a later A of the same
         * consumer and attempt, e.g. attempt 0, is the retry's). */
        if (!acked_before && given_back(c, sp, prev) != NULL) {
            out->retried++;
        } else if (!acked_before && !prev_acked && (d->attempt > 1 || x)) {
            out->redelivered++;
            if (x != NULL)
                out->faults[x->fault].redelivered++;
        } else if (x != NULL ||
                   (x = open_at(c, d->t, prev->cons, d->cons)) != NULL ||
                   (prev->t < sp->r->e_us &&
                    (x = retried_before(c, sp->r->e_us)) != NULL) ||
                   (x = retried_in(c, sp->r->e_us)) != NULL ||
                   (x = rolled_back(c, prev->t, d->t)) != NULL) {
            out->dup_fault++;
            out->faults[x->fault].dup_fault++;
        } else {
            out->dup_nofault++;
        }
    }
}

/* A delivered id never acked: claimed by a consumer killed after its
 * last delivery?  Lost then, or pending while a lease would still bring
 * it back; lost by its retry when that delivery's failed work was being
 * re-added (a G readd record: the consumer acked it first, so no lease
 * holds it) -- the retry policy's loss, not the strategy's. */
static void judge_unacked(const checker *c, dq_check *out, const span *sp)
{
    const dent *last = &c->dv[sp->d1 - 1];
    const gent *g = given_back(c, sp, last);

    out->unacked++;
    if (sp->r->dead)
        return; /* where its last delivery went: the dead-letter set */
    for (size_t w = 0; w < c->nwv; w++) {
        const window *x = &c->wv[w];
        if (!(x->explains & DQ_FAULT_EXPLAINS_CLAIMED) ||
            x->begin < last->t || x->begin > out->end_us ||
            !win_for(x, last->cons))
            continue;
        if (g != NULL && g->readd && x->begin >= g->t) {
            out->lost++;
            out->lost_retry++;
        } else if (lease_holds(out, last->t)) {
            out->pending_end++;
        } else {
            out->lost++;
            out->lost_claimed++;
            out->faults[x->fault].lost++;
        }
        return;
    }
}

/* Judges every enqueued id once the file is read (checker.h). */
static void judge(checker *c, dq_check *out, double *lat, size_t *nlat)
{
    size_t di = 0, ai = 0, gi = 0, n = 0;

    if (c->ndv > 1)     /* qsort's base must not be NULL, even for 0 */
        qsort(c->dv, c->ndv, sizeof *c->dv, cmp_dent);
    if (c->nav > 1)
        qsort(c->av, c->nav, sizeof *c->av, cmp_aent);
    if (c->ngv > 1)
        qsort(c->gv, c->ngv, sizeof *c->gv, cmp_gent);
    for (size_t i = 0; i < c->ids.n; i++) {
        span sp = {&c->recs[i], di, 0, ai, 0, gi, 0};
        while (di < c->ndv && c->dv[di].rec == i)
            di++;
        while (ai < c->nav && c->av[ai].rec == i)
            ai++;
        while (gi < c->ngv && c->gv[gi].rec == i)
            gi++;
        sp.d1 = di;
        sp.a1 = ai;
        sp.g1 = gi;
        if (sp.r->e_line == 0) {
            out->unknown += sp.r->ndeliv;
            continue;
        }
        if (sp.r->dead)
            out->dead_lettered++;
        if (sp.r->done >= 2)
            out->processed_twice++;
        judge_early(c, out, &sp);
        if (sp.d1 == sp.d0) {
            judge_undelivered(c, out, sp.r, c->ids.arena + c->ids.e[i].off);
            continue;
        }
        out->delivered++;
        lat[n++] = (double)(c->dv[sp.d0].t - sp.r->due_ms * 1000) / 1000.0;
        if (c->dv[sp.d0].attempt > 1)
            out->redelivered_hidden++;
        judge_extra(c, out, &sp);
        if (sp.a1 == sp.a0)
            judge_unacked(c, out, &sp);
    }
    *nlat = n;
}

#define MAXF 6

/* One pass over a log: the checker's state and where it is. */
typedef struct reader {
    checker c;
    dq_check *out;
    const char *name;        /* for messages */
    uint64_t lineno;
    int64_t h_end_us;        /* H end_us, -1 until one */
    uint64_t z_line;         /* line of the Z record, 0 until one */
    char *err;
    size_t errlen;
} reader;

/* Records "name:line: message" and returns -1. */
static int bad(reader *rd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int bad(reader *rd, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(rd->err, rd->errlen, "%s:%llu: ", rd->name,
                     (unsigned long long)rd->lineno);

    if (n >= 0 && (size_t)n < rd->errlen) {
        va_start(ap, fmt);
        vsnprintf(rd->err + n, rd->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The first line: the format's magic. */
static int first_line(reader *rd, const char *line)
{
    if (strcmp(line, DQ_LOG_MAGIC_V2) == 0)
        rd->out->log_version = 2;
    else if (strcmp(line, DQ_LOG_MAGIC_V1) == 0)
        rd->out->log_version = 1;
    else
        return bad(rd, "not a dqlab event log (first line must be '%s', or "
                   "'%s' for an older log)", DQ_LOG_MAGIC_V2,
                   DQ_LOG_MAGIC_V1);
    return 0;
}

/* Splits line on TAB into fld (at most MAXF).  Returns the count, or -1. */
static int split_fields(reader *rd, char *line, char **fld)
{
    int nf = 0;
    char *p = line;

    fld[nf++] = p;
    while ((p = strchr(p, '\t')) != NULL) {
        *p++ = '\0';
        if (nf == MAXF)
            return bad(rd, "too many fields");
        fld[nf++] = p;
    }
    if (fld[0][1] != '\0')
        return bad(rd, "unknown record type '%.20s'", fld[0]);
    return nf;
}

/* One of the latency sampler's H records (checker.h). */
static int sampler_header(reader *rd, const char *key, const char *val)
{
    dq_check *out = rd->out;
    char *end;
    double v;

    errno = 0;
    v = strtod(val, &end);
    if (errno != 0 || end == val || *end != '\0' || !(v >= 0) ||
        v > 1e12)
        return bad(rd, "bad H %s '%.30s' (expected a number >= 0)", key,
                   val);
    if (strcmp(key, "redis_stall_ms") == 0)
        out->redis_stall_ms = v;
    else if (strcmp(key, "redis_ping_p99_ms") == 0)
        out->ping_p99_ms = v;
    else
        out->pings = (int64_t)v;
    return 0;
}

/* An H record: the headers the checker reads (checker.h). */
static int header_record(reader *rd, char **fld, int nf)
{
    dq_check *out = rd->out;

    if (nf != 3)
        return bad(rd, "H record needs 3 fields, has %d", nf);
    if (fld[1][0] == '\0')
        return bad(rd, "H record with an empty key");
    if (strcmp(fld[1], "fault") == 0 || strcmp(fld[1], "faults") == 0)
        snprintf(out->fault_spec, sizeof out->fault_spec, "%s", fld[2]);
    else if (strcmp(fld[1], "end_us") == 0 &&
             !parse_nonneg(fld[2], &rd->h_end_us))
        return bad(rd, "bad H end_us '%.30s' (expected microseconds >= 0)",
                   fld[2]);
    else if (strcmp(fld[1], "opt.lease_ms") == 0 &&
             !parse_nonneg(fld[2], &out->lease_ms))
        return bad(rd, "bad H opt.lease_ms '%.30s' (expected ms >= 0)",
                   fld[2]);
    else if (strcmp(fld[1], "pending_at_end") == 0 &&
             !parse_nonneg(fld[2], &out->queued_at_end))
        return bad(rd, "bad H pending_at_end '%.30s' (expected a count "
                   ">= 0)", fld[2]);
    else if (strcmp(fld[1], "redis_stall_ms") == 0 ||
             strcmp(fld[1], "redis_ping_p99_ms") == 0 ||
             strcmp(fld[1], "redis_pings") == 0)
        return sampler_header(rd, fld[1], fld[2]);
    else if (strcmp(fld[1], "failed") == 0)
        snprintf(out->failed, sizeof out->failed, "the trial failed: %s",
                 fld[2][0] ? fld[2] : "(no reason given)");
    return 0;
}

/* The number of fields and their shape for every record but H. */
static int record_shape(reader *rd, char **fld, int nf)
{
    int v1 = rd->out->log_version == 1;

    switch (fld[0][0]) {
    case 'E':
    case 'D':
        if (nf != 5)
            return bad(rd, "%c record needs 5 fields, has %d", fld[0][0], nf);
        return 0;
    case 'A':
        if (nf != (v1 ? 4 : 5))
            return bad(rd, "A record needs %d fields, has %d", v1 ? 4 : 5,
                       nf);
        return 0;
    case 'R':
        if (v1)
            return bad(rd, "R record in a v1 log");
        if (nf != 6)
            return bad(rd, "R record needs 6 fields, has %d", nf);
        if (fld[5][0] == '\0')
            return bad(rd, "R record with an empty result code");
        return 0;
    case 'G':
        if (v1)
            return bad(rd, "G record in a v1 log");
        if (nf != 6)
            return bad(rd, "G record needs 6 fields, has %d", nf);
        if (strcmp(fld[5], "readd") != 0 && strcmp(fld[5], "nack") != 0)
            return bad(rd, "G record must say readd or nack, not '%.20s'",
                       fld[5]);
        return 0;
    case 'L':
        if (v1)
            return bad(rd, "L record in a v1 log");
        if (nf != 3)
            return bad(rd, "L record needs 3 fields, has %d", nf);
        return 0;
    case 'N':
        if (v1)
            return bad(rd, "N record in a v1 log");
        if (nf != 6)
            return bad(rd, "N record needs 6 fields, has %d", nf);
        if (fld[5][0] == '\0')
            return bad(rd, "N record with an empty reason");
        return 0;
    case 'Z':
        if (v1)
            return bad(rd, "Z record in a v1 log");
        if (nf != 3)
            return bad(rd, "Z record needs 3 fields, has %d", nf);
        if (strcmp(fld[2], "clean") != 0 &&
            strcmp(fld[2], "interrupted") != 0 &&
            strcmp(fld[2], "failed") != 0)
            return bad(rd, "Z record must say clean, interrupted or failed, "
                       "not '%.20s'", fld[2]);
        return 0;
    case 'F':
        if (nf != 5)
            return bad(rd, "F record needs 5 fields, has %d", nf);
        if (strcmp(fld[3], "begin") != 0 && strcmp(fld[3], "end") != 0)
            return bad(rd, "F record phase must be begin or end, not "
                       "'%.20s'", fld[3]);
        if (fld[2][0] == '\0')
            return bad(rd, "F record with an empty fault name");
        return 0;
    }
    return bad(rd, "unknown record type '%.20s'", fld[0]);
}

/* An F record, kept for pairing into windows. */
static int fault_record(reader *rd, char **fld, int64_t t)
{
    checker *c = &rd->c;
    fent *fe;

    if (grow((void **)&c->fv, &c->capfv, c->nfv + 1, sizeof *c->fv))
        return bad(rd, "out of memory");
    fe = &c->fv[c->nfv++];
    memset(fe, 0, sizeof *fe);
    fe->t = t;
    fe->line = rd->lineno;
    fe->fault = fault_index(rd->out, fld[2]);
    fe->begin = fld[3][0] == 'b';
    snprintf(fe->arg, sizeof fe->arg, "%s", fld[4]);
    return 0;
}

/* An attempt field: an integer >= 0 that fits an int32. */
static int attempt_field(reader *rd, const char *s, int64_t *out)
{
    if (!parse_nonneg(s, out) || *out > INT32_MAX)
        return bad(rd, "bad attempt '%.30s' (expected an integer >= 0)", s);
    return 0;
}

/* An E, D or A record of task record r (index ri), by consumer ci. */
static int task_record(reader *rd, char **fld, int64_t t, size_t ri,
                       size_t ci)
{
    checker *c = &rd->c;
    dq_check *out = rd->out;
    rec *r = &c->recs[ri];
    int64_t v = -1;

    if (fld[0][0] == 'E') {
        if (!parse_nonneg(fld[3], &v))
            return bad(rd, "bad due time '%.30s' (expected ms >= 0)", fld[3]);
        if (v > INT64_MAX / 1000)
            return bad(rd, "due time '%.30s' out of range", fld[3]);
        if (r->e_line != 0)
            return bad(rd, "task '%.64s' enqueued twice (first at line "
                       "%llu)", fld[2], (unsigned long long)r->e_line);
        r->e_line = rd->lineno;
        r->e_us = t;
        r->due_ms = v;
        out->enqueued++;
    } else if (fld[0][0] == 'D') {
        if (attempt_field(rd, fld[4], &v) != 0)
            return -1;
        if (grow((void **)&c->dv, &c->capdv, c->ndv + 1, sizeof *c->dv))
            return bad(rd, "out of memory");
        c->dv[c->ndv++] = (dent){t, (uint32_t)ri, (uint32_t)ci,
                                 (uint32_t)rd->lineno, (int32_t)v};
        out->deliveries++;
        r->ndeliv++;
    } else {
        if (out->log_version != 1 && attempt_field(rd, fld[4], &v) != 0)
            return -1;
        if (grow((void **)&c->av, &c->capav, c->nav + 1, sizeof *c->av))
            return bad(rd, "out of memory");
        c->av[c->nav++] = (aent){t, (uint32_t)ri, (uint32_t)ci, (int32_t)v};
        out->acked++;
        r->done++;
    }
    return 0;
}

/* A G record of task record ri: that delivery (consumer, attempt) was
 * given back for a retry. */
static int giveback_record(reader *rd, char **fld, int64_t t, size_t ri)
{
    checker *c = &rd->c;
    int64_t attempt = 0;
    size_t ci;
    bool added;

    if (attempt_field(rd, fld[4], &attempt) != 0)
        return -1;
    ci = map_get(&c->cons, fld[3], strlen(fld[3]), &added);
    if (ci == (size_t)-1 ||
        grow((void **)&c->gv, &c->capgv, c->ngv + 1, sizeof *c->gv))
        return bad(rd, "out of memory");
    c->gv[c->ngv++] = (gent){t, (uint32_t)ri, (uint32_t)ci,
                             (int32_t)attempt, fld[5][0] == 'r'};
    rd->out->given_back++;
    return 0;
}

/* A record with a time (every type but H), already shaped. */
static int timed_record(reader *rd, char **fld)
{
    checker *c = &rd->c;
    dq_check *out = rd->out;
    size_t ri, ci = 0;
    int64_t t, attempt;
    bool added;

    if (!parse_nonneg(fld[1], &t))
        return bad(rd, "bad time '%.30s' (expected microseconds >= 0)",
                   fld[1]);
    /* Z says when the writer finished, after the trial's own events: not
     * one of them (first_us / last_us, the end without H end_us). */
    if (fld[0][0] == 'Z') {
        rd->z_line = rd->lineno;
        out->end = fld[2][0] == 'c'   ? DQ_CHECK_END_CLEAN
                   : fld[2][0] == 'f' ? DQ_CHECK_END_FAILED
                                      : DQ_CHECK_END_INTERRUPTED;
        return 0;
    }
    if (out->first_us == 0 || t < out->first_us)
        out->first_us = t;
    if (t > out->last_us)
        out->last_us = t;
    if (fld[0][0] == 'F')
        return fault_record(rd, fld, t);
    if (fld[2][0] == '\0')
        return bad(rd, "empty task id");
    if (fld[0][0] != 'L' && fld[3][0] == '\0')
        return bad(rd, "empty %s name", fld[0][0] == 'E' ? "producer"
                                                         : "consumer");
    if (fld[0][0] == 'N') {
        /* A refused enqueue: not a task of the trial, only counted (and
         * attributed to the window it fell in, once they are known). */
        int64_t due;
        if (!parse_nonneg(fld[3], &due) || due > INT64_MAX / 1000)
            return bad(rd, "bad due time '%.30s' (expected ms >= 0)",
                       fld[3]);
        if (grow((void **)&c->nv, &c->capnv, c->nnv + 1, sizeof *c->nv))
            return bad(rd, "out of memory");
        c->nv[c->nnv++] = t;
        out->enqueue_refused++;
        return 0;
    }
    ri = map_get(&c->ids, fld[2], strlen(fld[2]), &added);
    if (ri == (size_t)-1 ||
        grow((void **)&c->recs, &c->caprecs, c->ids.n, sizeof *c->recs))
        return bad(rd, "out of memory");
    if (added)
        memset(&c->recs[ri], 0, sizeof c->recs[ri]);
    if (fld[0][0] == 'R') {
        /* Acknowledges nothing: counted, and its work was done. */
        if (attempt_field(rd, fld[4], &attempt) != 0)
            return -1;
        if (strcmp(fld[5], "ENOTFOUND") == 0)
            out->ack_refused++;
        else
            out->ack_failed++;
        c->recs[ri].done++;
        return 0;
    }
    if (fld[0][0] == 'L') {
        c->recs[ri].dead = true;
        return 0;
    }
    if (fld[0][0] == 'G')
        return giveback_record(rd, fld, t, ri);
    if (fld[0][0] != 'E' &&
        (ci = map_get(&c->cons, fld[3], strlen(fld[3]), &added)) ==
            (size_t)-1)
        return bad(rd, "out of memory");
    return task_record(rd, fld, t, ri, ci);
}

/* One line of the log (its LF removed, len bytes).  Returns 0, or -1. */
static int one_line(reader *rd, char *line, ssize_t len)
{
    char *fld[MAXF];
    int nf;

    if ((size_t)len != strlen(line))
        return bad(rd, "NUL byte in record");
    if (rd->lineno == 1)
        return first_line(rd, line);
    if (line[0] == '#')
        return 0;
    if (len == 0)
        return bad(rd, "empty line");
    if (rd->z_line != 0)
        return bad(rd, "record after the end of the log (the Z record at "
                   "line %llu must be the last)",
                   (unsigned long long)rd->z_line);
    if ((nf = split_fields(rd, line, fld)) < 0)
        return -1;
    if (fld[0][0] == 'H')
        return header_record(rd, fld, nf);
    if (record_shape(rd, fld, nf) != 0)
        return -1;
    return timed_record(rd, fld);
}

/* Every line of f.  Returns 0, or -1 with the message. */
static int read_lines(reader *rd, FILE *f)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;

    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        rd->lineno++;
        if (len > 0 && line[len - 1] == '\n') {
            line[--len] = '\0';
        } else {
            /* The last line has no LF: a record torn by its writer's death
             * or a full disk.  Not read (unless it is the first line:
             * nothing follows); the log is incomplete. */
            rd->out->torn = true;
            if (rd->lineno > 1)
                break;
        }
        rc = one_line(rd, line, len);
    }
    free(line);
    if (rc == 0 && ferror(f)) {
        snprintf(rd->err, rd->errlen, "%s: read error: %s", rd->name,
                 strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rd->lineno == 0) {
        snprintf(rd->err, rd->errlen, "%s:1: empty file (not a dqlab event "
                 "log)", rd->name);
        rc = -1;
    }
    return rc;
}

/* How many lost ids were still queued at the end: the queue held
 * queued_at_end never-claimed tasks (H pending_at_end); those not due yet
 * are pending, the rest can only be lost ones never delivered. */
static void lost_queued(dq_check *out)
{
    int64_t q = out->queued_at_end - (int64_t)out->pending_undelivered;
    uint64_t never = out->lost - out->lost_claimed - out->lost_retry;

    if (out->queued_at_end < 0 || q <= 0)
        return;
    out->lost_queued = (uint64_t)q < never ? (uint64_t)q : never;
}

/* After the last line: the windows, the judgement, the lateness. */
static int conclude(reader *rd, double **lat_out)
{
    dq_check *out = rd->out;
    const fent *badf = NULL;
    double *lat;
    size_t n = 0;

    out->end_us = rd->h_end_us >= 0 ? rd->h_end_us : out->last_us;
    if (make_windows(&rd->c, out, &badf) != 0) {
        if (badf == NULL)
            return bad(rd, "out of memory");
        rd->lineno = badf->line;
        return bad(rd, "F end of '%.32s' with no open begin before it",
                   out->faults[badf->fault].name);
    }
    attribute_refused(&rd->c, out);
    lat = malloc((rd->c.ids.n ? rd->c.ids.n : 1) * sizeof *lat);
    if (lat == NULL) {
        snprintf(rd->err, rd->errlen, "%s: out of memory", rd->name);
        return -1;
    }
    judge(&rd->c, out, lat, &n);
    lost_queued(out);
    qsort(lat, n, sizeof *lat, cmp_double);
    out->lateness.n = n;
    out->lateness.p50_ms = dq_percentile(lat, n, 50);
    out->lateness.p90_ms = dq_percentile(lat, n, 90);
    out->lateness.p99_ms = dq_percentile(lat, n, 99);
    out->lateness.p999_ms = dq_percentile(lat, n, 99.9);
    out->lateness.max_ms = n ? lat[n - 1] : 0;
    if (lat_out != NULL)
        *lat_out = lat;
    else
        free(lat);
    return 0;
}

/* The checker; with lat_out, hands the sorted per-id lateness samples
 * (malloc'd) to the caller instead of freeing them. */
static int check_stream(FILE *f, const char *name, dq_check *out,
                        double **lat_out, char *err, size_t errlen)
{
    reader rd;
    int rc;

    memset(&rd, 0, sizeof rd);
    memset(out, 0, sizeof *out);
    out->queued_at_end = -1;
    out->redis_stall_ms = out->ping_p99_ms = -1;
    out->pings = -1;
    rd.out = out;
    rd.name = name;
    rd.h_end_us = -1;
    rd.err = err;
    rd.errlen = errlen;
    rc = read_lines(&rd, f);
    if (rc == 0)
        rc = conclude(&rd, lat_out);
    checker_free(&rd.c);
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

int dq_check_stream_lateness(FILE *f, const char *name, dq_check *out,
                             double **lat, char *err, size_t errlen)
{
    *lat = NULL;
    return check_stream(f, name, out, lat, err, errlen);
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

void dq_check_queued_note(const dq_check *c, char *buf, size_t len)
{
    if (c->lost_queued == 0)
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, "%" PRIu64 " of the lost tasks %s still queued "
                 "in Redis when the trial ended (late beyond the deadline, "
                 "not gone)", c->lost_queued,
                 c->lost_queued == 1 ? "was" : "were");
}

const char *dq_check_no_verdict(const dq_check *c)
{
    if (c->log_version == 1)
        return "log incomplete: a v1 event log does not record how its "
               "trial ended";
    switch (c->end) {
    case DQ_CHECK_END_CLEAN:
        return NULL;
    case DQ_CHECK_END_INTERRUPTED:
        return "trial interrupted: the log ends with 'Z interrupted'";
    case DQ_CHECK_END_FAILED:
        return c->failed[0] ? c->failed
                            : "the trial failed (the log ends with 'Z "
                              "failed' and no H failed record)";
    case DQ_CHECK_END_NONE:
    default:
        return c->torn ? "log incomplete: its last line is cut short and it "
                         "has no end record"
                       : "log incomplete: no end record (its writer was "
                         "killed, or the file was cut)";
    }
}

/* The per-fault stats of c into array fa. */
static void faults_json(json_t *fa, const dq_check *c)
{
    for (size_t i = 0; i < c->nfaults && i < DQ_CHECK_MAX_FAULTS; i++) {
        const dq_fault_stat *f = &c->faults[i];
        json_t *x = json_object();
        if (x == NULL)
            continue;
        json_object_set_new(x, "name", json_string(f->name));
        json_object_set_new(x, "arg", json_string(f->arg));
        json_object_set_new(x, "windows",
                            json_integer((json_int_t)f->windows));
        json_object_set_new(x, "window_ms",
                            json_real((double)f->window_us / 1000.0));
        json_object_set_new(x, "lost", json_integer((json_int_t)f->lost));
        json_object_set_new(x, "redelivered",
                            json_integer((json_int_t)f->redelivered));
        json_object_set_new(x, "dup_fault",
                            json_integer((json_int_t)f->dup_fault));
        json_object_set_new(x, "early", json_integer((json_int_t)f->early));
        json_object_set_new(x, "refused",
                            json_integer((json_int_t)f->refused));
        json_array_append_new(fa, x);
    }
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

    json_t *fa = json_array();
    if (fa == NULL) {
        json_decref(o);
        return NULL;
    }
#define U(k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))
    U("redelivered", c->redelivered);
    U("dup_fault", c->dup_fault);
    U("dup_nofault", c->dup_nofault);
    U("pending_end", c->pending_end);
    U("lost_claimed", c->lost_claimed);
    U("lost_nofault", c->lost_nofault);
    U("early_fault", c->early_fault);
    U("unacked", c->unacked);
    U("redelivered_hidden", c->redelivered_hidden);
    U("fault_windows", c->fault_windows);
    U("end_us", c->end_us);
    U("ack_refused", c->ack_refused);
    U("ack_failed", c->ack_failed);
    U("enqueue_refused", c->enqueue_refused);
    U("log_version", c->log_version);
    U("lost_queued", c->lost_queued);
    U("given_back", c->given_back);
    U("lost_retry", c->lost_retry);
    U("retried", c->retried);
    U("processed_twice", c->processed_twice);
    U("dead_lettered", c->dead_lettered);
    U("dead_undelivered", c->dead_undelivered);
#undef U
    json_object_set_new(o, "redis_stall_ms",
                        c->redis_stall_ms >= 0 ? json_real(c->redis_stall_ms)
                                               : json_null());
    json_object_set_new(o, "ping_p99_ms",
                        c->ping_p99_ms >= 0 ? json_real(c->ping_p99_ms)
                                            : json_null());
    json_object_set_new(o, "pings", c->pings >= 0
                                        ? json_integer((json_int_t)c->pings)
                                        : json_null());
    json_object_set_new(o, "pending_at_end",
                        c->queued_at_end >= 0
                            ? json_integer((json_int_t)c->queued_at_end)
                            : json_null());
    json_object_set_new(o, "log_end",
                        c->end == DQ_CHECK_END_CLEAN ? json_string("clean")
                        : c->end == DQ_CHECK_END_INTERRUPTED
                            ? json_string("interrupted")
                        : c->end == DQ_CHECK_END_FAILED
                            ? json_string("failed")
                            : json_null());
    json_object_set_new(o, "no_verdict",
                        dq_check_no_verdict(c)
                            ? json_string(dq_check_no_verdict(c))
                            : json_null());
    json_object_set_new(o, "fault", c->fault_spec[0]
                                        ? json_string(c->fault_spec)
                                        : json_null());
    json_object_set_new(o, "faults", fa);
    faults_json(fa, c);
    return o;
}

/* Is a loss attributed to fault f allowed for a strategy declaring flags?
 * Its row says (dq_fault_ops.loss_allowed, faults.h); a name no row knows
 * is not judged. */
static bool loss_allowed(const dq_fault_ops *ops, const dq_fault_stat *f,
                         unsigned flags)
{
    if (ops == NULL || ops->loss_allowed == NULL)
        return true;
    return ops->loss_allowed(f->arg, flags);
}

size_t dq_check_violations(const dq_check *c, unsigned flags,
                           bool interrupted, const char **out, size_t max)
{
    const char *v[8 + DQ_CHECK_MAX_FAULTS];
    size_t n = 0, nown = 0;
    const char *own[DQ_CHECK_MAX_FAULTS];
    uint64_t other_lost = 0, amo_redeliv = 0;

    for (size_t i = 0; i < c->nfaults && i < DQ_CHECK_MAX_FAULTS; i++) {
        const dq_fault_stat *f = &c->faults[i];
        const dq_fault_ops *ops = dq_fault_find(f->name);
        if (!loss_allowed(ops, f, flags) && f->lost > 0) {
            /* A fault with its own verdict line says it (once). */
            const char *line = ops != NULL ? ops->lost_verdict : NULL;
            size_t k = 0;
            while (line != NULL && k < nown && own[k] != line)
                k++;
            if (line == NULL)
                other_lost += f->lost;
            else if (k == nown)
                own[nown++] = line;
        }
        /* A reply lost in some faults (a restart, a pause) may make any
         * strategy repeat a task (an enqueue retried with the same id). */
        if (ops == NULL || !(ops->explains & DQ_FAULT_REPEATS_ANY))
            amo_redeliv += f->redelivered + f->dup_fault;
    }
    if (c->early > c->early_fault)
        v[n++] = "early: tasks were delivered before their due time";
    if (c->unknown > 0)
        v[n++] = "unknown: ids that were never enqueued were delivered";
    if (c->dup_nofault > 0 && (flags & DQ_G_NO_DUP_CONCURRENT))
        v[n++] = "duplicates: the strategy declares no-dup-concurrent";
    /* naive's documented race can straddle a fault window: its repeats
     * are the declared duplicates, not a redelivery. */
    if (amo_redeliv > 0 && (flags & DQ_G_AT_MOST_ONCE) &&
        !(flags & DQ_G_DUPLICATES))
        v[n++] = "redelivered: the strategy declares at-most-once, and a "
                 "task came back after a fault";
    if (!interrupted && c->lost_nofault > 0)
        v[n++] = "lost: tasks not delivered by the drain deadline (latest "
                 "due + grace; raise --grace-ms if consumers are just slow)";
    for (size_t k = 0; !interrupted && k < nown; k++)
        v[n++] = own[k];
    if (!interrupted && other_lost > 0)
        v[n++] = "lost under a fault the strategy declares it survives "
                 "(see dq_check_violations in checker.h)";
    for (size_t i = 0; i < n && i < max; i++)
        out[i] = v[i];
    return n;
}
