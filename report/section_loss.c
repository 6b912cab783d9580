/* section_loss.c -- the report section of the loss experiment
 * (experiments/loss.ini): what each strategy lost, duplicated and
 * redelivered under each injected fault, beside what it declares.
 *
 * The numbers come from the event logs, not from trials.csv: each trial's
 * logs/trial-NNN.log is checked again with dq_check_file (checker.h) --
 * a log that can carry no verdict (incomplete: no end record; checker.h
 * dq_check_no_verdict) is left out of every count and shown as "no
 * verdict: log incomplete", never as ok or a violation --
 * which splits the extra deliveries into redelivered / duplicated after a
 * fault / duplicated without one and the missing tasks into lost / pending
 * at the end, from the F records (fault windows) in the log.  The fault of
 * a trial is the log's "H faults" header ("none" without one), so
 * trials.csv only needs its strategy, options and trial columns.
 *
 * The central table: rows = strategies (with what they declare), columns =
 * faults, each cell "lost / duplicated / redelivered of N" summed over the
 * repeats, marked with a cross where dq_check_violations says the
 * strategy broke a guarantee it declares.  Under it, one paragraph per
 * fault: which strategies lost, repeated or redelivered tasks and how
 * many, followed by the mechanism (the why is written here once per fault
 * kind; every figure in it is computed).  The claim rules in claims.c read
 * the same table through dq_loss_load().
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/checker.h"
#include "../strategies/dq.h"
#include "report_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

bool dq_loss_is(const dq_rexp *e)
{
    return dq_rexp_has_plot(e, "loss") || dq_rexp_meta(e, "faults")[0];
}

const dq_rexp *dq_loss_experiment(const dq_results *r)
{
    for (size_t i = 0; i < r->nexps; i++)
        if (dq_loss_is(&r->exps[i]))
            return &r->exps[i];
    return NULL;
}

/* The row label of trial t: the strategy, plus its options when e runs
 * that strategy with several option sets. */
static void row_label(const dq_rexp *e, const dq_rtrial *t, char *buf,
                      size_t len)
{
    bool varies = false;
    for (size_t i = 0; i < e->ntrials && !varies; i++)
        varies = strcmp(e->trials[i].strategy, t->strategy) == 0 &&
                 strcmp(e->trials[i].options, t->options) != 0;
    if (varies && t->options[0])
        snprintf(buf, len, "%s %s", t->strategy, t->options);
    else
        snprintf(buf, len, "%s", t->strategy);
}

static size_t find_or_add(char (*names)[64], size_t *n, size_t max,
                          const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    if (*n == max)
        return (size_t)-1;
    snprintf(names[*n], 64, "%s", s);
    return (*n)++;
}

int dq_loss_load(const dq_rexp *e, dq_loss_table *lt, char *err,
                 size_t errlen)
{
    memset(lt, 0, sizeof *lt);
    lt->e = e;
    lt->cells = calloc(DQ_LOSS_MAX_ROWS * DQ_LOSS_MAX_FAULTS,
                       sizeof *lt->cells);
    if (lt->cells == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_rtrial *t = &e->trials[i];
        char label[64], path[PATH_MAX];
        dq_check c;
        size_t row, col;

        if (t->trial <= 0) {
            snprintf(err, errlen, "%s/trials.csv: no trial column (results "
                     "older than the loss report; rerun the experiment)",
                     e->dir);
            goto fail;
        }
        snprintf(path, sizeof path, "%s/logs/trial-%03d.log", e->dir,
                 t->trial);
        if (dq_check_file(path, &c, err, errlen) != 0)
            goto fail;
        row_label(e, t, label, sizeof label);
        row = find_or_add(lt->rows, &lt->nrows, DQ_LOSS_MAX_ROWS, label);
        col = find_or_add(lt->faults, &lt->nfaults, DQ_LOSS_MAX_FAULTS,
                          c.fault_spec[0] ? c.fault_spec : "none");
        if (row == (size_t)-1 || col == (size_t)-1) {
            snprintf(err, errlen, "%s: more than %d strategies or %d faults "
                     "in the loss table", e->dir, DQ_LOSS_MAX_ROWS,
                     DQ_LOSS_MAX_FAULTS);
            goto fail;
        }
        const dq_strategy *s = dq_strategy_find(t->strategy);
        dq_loss_cell *x = &lt->cells[row * DQ_LOSS_MAX_FAULTS + col];
        const char *v[8], *nov = dq_check_no_verdict(&c);
        size_t nv;
        snprintf(x->strategy, sizeof x->strategy, "%s", t->strategy);
        x->flags = s ? s->flags : 0;
        x->known = s != NULL;
        if (nov != NULL) {
            if (x->no_verdict++ == 0)
                snprintf(x->no_verdict_why, sizeof x->no_verdict_why,
                         "trial %d: %s", t->trial, nov);
            continue;
        }
        nv = dq_check_violations(&c, s ? s->flags : 0, false, v, 8);
        x->trials++;
        x->enqueued += c.enqueued;
        x->lost += c.lost;
        x->lost_claimed += c.lost_claimed;
        x->duplicated += c.dup_fault + c.dup_nofault;
        x->dup_nofault += c.dup_nofault;
        x->redelivered += c.redelivered + c.redelivered_hidden;
        x->pending_end += c.pending_end;
        x->early += c.early;
        x->early_fault += c.early_fault;
        x->windows += c.fault_windows;
        for (size_t k = 0; k < c.nfaults; k++)
            x->window_us += c.faults[k].window_us;
        if (s != NULL && nv > 0) {
            x->violation_trials++;
            if (x->violation[0] == '\0')
                snprintf(x->violation, sizeof x->violation, "%s", v[0]);
        }
    }
    return 0;
fail:
    dq_loss_free(lt);
    return -1;
}

void dq_loss_free(dq_loss_table *lt)
{
    free(lt->cells);
    lt->cells = NULL;
}

const dq_loss_cell *dq_loss_cell_at(const dq_loss_table *lt, size_t row,
                                    size_t col)
{
    const dq_loss_cell *x = &lt->cells[row * DQ_LOSS_MAX_FAULTS + col];
    return x->trials ? x : NULL;
}

/* The fault name of a spec ("kill-consumer:after-claim:3" ->
 * "kill-consumer"). */
static void fault_name(const char *spec, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)strcspn(spec, ":,"), spec);
}

/* The field i (0-based) of spec split at ':' into buf; "" if absent. */
static void spec_field(const char *spec, int i, char *buf, size_t len)
{
    const char *p = spec;
    for (; i > 0 && p != NULL; i--) {
        p = strchr(p, ':');
        if (p != NULL)
            p++;
    }
    if (p == NULL) {
        snprintf(buf, len, "%s", "");
        return;
    }
    snprintf(buf, len, "%.*s", (int)strcspn(p, ":"), p);
}

static const char *kill_point_words(const char *point)
{
    return strcmp(point, "after-claim") == 0   ? "after a claim"
           : strcmp(point, "during-work") == 0 ? "during the work"
           : strcmp(point, "before-ack") == 0  ? "before the ack"
                                               : NULL;
}

void dq_fault_phrase(const char *spec, char *buf, size_t len)
{
    char name[64], a[32], b[32];
    fault_name(spec, name, sizeof name);
    spec_field(spec, 1, a, sizeof a);
    spec_field(spec, 2, b, sizeof b);
    if (strcmp(name, "none") == 0) {
        snprintf(buf, len, "no fault (the baseline)");
    } else if (strcmp(name, "kill-consumer") == 0 && kill_point_words(a)) {
        long n = b[0] ? strtol(b, NULL, 10) : 1;
        snprintf(buf, len, "consumers killed with SIGKILL %s (%ld kill%s "
                 "per trial, each replaced)", kill_point_words(a), n,
                 n == 1 ? "" : "s");
    } else if (strcmp(name, "restart-redis") == 0) {
        snprintf(buf, len, "the redis-server killed and restarted with %s",
                 strcmp(a, "off") == 0        ? "no persistence"
                 : strcmp(a, "everysec") == 0 ? "AOF everysec"
                 : strcmp(a, "always") == 0   ? "AOF always"
                                              : a);
    } else if (strcmp(name, "pause-redis") == 0 && a[0]) {
        snprintf(buf, len, "the redis-server paused with SIGSTOP for %s ms",
                 a);
    } else if (strcmp(name, "subscriber-outage") == 0 && a[0]) {
        snprintf(buf, len, "every consumer down for %s ms", a);
    } else if (strcmp(name, "clock-skew") == 0 && a[0]) {
        snprintf(buf, len, "one consumer's clock %s ms %s",
                 a[0] == '+' || a[0] == '-' ? a + 1 : a,
                 a[0] == '-' ? "behind" : "ahead");
    } else if (strcmp(name, "mover-stall") == 0) {
        snprintf(buf, len, "the Pub/Sub and blocked connections killed");
    } else {
        snprintf(buf, len, "`%s`", spec);
    }
}

void dq_kill_points(const char faults[][64], size_t n, char *buf,
                    size_t len)
{
    const char *seen[8];
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) {
        char name[64], a[32];
        fault_name(faults[i], name, sizeof name);
        spec_field(faults[i], 1, a, sizeof a);
        const char *w = kill_point_words(a);
        if (strcmp(name, "kill-consumer") != 0 || w == NULL)
            continue;
        size_t k;
        for (k = 0; k < ns && strcmp(seen[k], w) != 0; k++)
            ;
        if (k == ns && ns < 8)
            seen[ns++] = w;
    }
    size_t off = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < ns; k++)
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
                                "%s%s", k == 0 ? ""
                                : k + 1 == ns ? " and " : ", ", seen[k]);
}

void dq_loss_describe(const dq_rexp *e, char *buf, size_t len)
{
    char specs[DQ_LOSS_MAX_FAULTS][64];
    size_t n = 0, off = 0;
    bool baseline = false;
    char list[256];
    snprintf(list, sizeof list, "%s", dq_rexp_meta(e, "faults"));
    for (char *save = NULL, *t = strtok_r(list, ", ", &save); t != NULL;
         t = strtok_r(NULL, ", ", &save)) {
        if (strcmp(t, "none") == 0)
            baseline = true;
        else if (n < DQ_LOSS_MAX_FAULTS)
            snprintf(specs[n++], sizeof specs[0], "%s", t);
    }
    char delay[64];
    snprintf(delay, sizeof delay, "%s", dq_rexp_meta(e, "delay_ms"));
    char *colon = strchr(delay, ':');
    if (colon != NULL)
        *colon = '-';     /* "0:500" -> "0-500" */
    off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
                            "Injects one fault per trial into a stream of "
                            "tasks due %s ms after enqueue.  Faults in "
                            "this run: ", delay[0] ? delay : "?");
    if (n == 0)
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
                                "none");
    for (size_t i = 0; i < n; i++) {
        char ph[160];
        dq_fault_phrase(specs[i], ph, sizeof ph);
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
                                "%s%s (`%s`)", i ? "; " : "", ph, specs[i]);
    }
    snprintf(buf + off, off < len ? len - off : 0,
             "%s.  The checker tells, from the event log and the fault "
             "windows in it, lost tasks from duplicates, redeliveries and "
             "tasks still pending when the trial ended.",
             baseline ? "; and a baseline with no fault" : "");
}

/* What a strategy declares, in a few words. */
static void declared(unsigned flags, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s",
             flags & DQ_G_AT_LEAST_ONCE  ? "at-least-once"
             : flags & DQ_G_AT_MOST_ONCE ? "at-most-once"
                                         : "?",
             flags & DQ_G_SURVIVES_CONSUMER_CRASH ? ", survives a consumer "
                                                    "crash" : "",
             flags & DQ_G_NO_DUP_CONCURRENT ? ", no duplicates"
             : flags & DQ_G_DUPLICATES      ? ", duplicates (documented)"
                                            : "",
             flags & DQ_G_NEEDS_REDIS ? "" : ", in-process (no Redis)");
}

/* Why a fault does what it does, once per fault kind.  Numbers are added
 * by the caller; this text holds none. */
static const char *mechanism(const char *name)
{
    if (strcmp(name, "kill-consumer") == 0)
        return "A consumer process is killed with SIGKILL at a chosen point "
               "of a claim.  An at-most-once claim removes the task from "
               "Redis, so the killed consumer's task is gone; a lease "
               "(lua-lease, list-reliable, streams) keeps it, and it comes "
               "back with a higher attempt once the lease runs out.  For the "
               "in-process heap the whole queue dies with the process.";
    if (strcmp(name, "restart-redis") == 0)
        return "The redis-server is killed and started again on the same "
               "directory.  Without persistence everything pending is gone; "
               "with AOF everysec up to about a second of acknowledged "
               "writes can be lost (enqueues, and claims that come back as "
               "repeats); with AOF always every acknowledged write is on "
               "disk before the reply.";
    if (strcmp(name, "pause-redis") == 0)
        return "The server is stopped (SIGSTOP) and resumed: nothing is "
               "lost inside Redis, but replies that time out on the client "
               "side can make a claim vanish (at-most-once) or a task come "
               "back; tasks falling due meanwhile are delivered late, in a "
               "burst.";
    if (strcmp(name, "subscriber-outage") == 0)
        return "Every consumer is down for the window, then back.  Polling "
               "and list strategies find the tasks that fell due in the "
               "meantime and deliver them in a burst; keyspace "
               "notifications are fire-and-forget, so expiry loses every "
               "task whose key expired while no subscriber listened.";
    if (strcmp(name, "clock-skew") == 0)
        return "One consumer's clock runs ahead or behind.  A strategy that "
               "compares due times with the client's clock delivers early "
               "(ahead) or late (behind); clock=server strategies and "
               "Redis-side expiry do not move.  The checker judges with "
               "the true clock.";
    if (strcmp(name, "mover-stall") == 0)
        return "The connections that move or wake tasks (Pub/Sub "
               "subscriptions, blocked BLPOP/BLMOVE/BZPOPMIN clients) are "
               "killed with CLIENT KILL; the strategy must reconnect and "
               "resubscribe.  Events published while a subscriber is away "
               "are lost.";
    if (strcmp(name, "none") == 0)
        return "No fault: the baseline.  Any loss or duplicate here is the "
               "strategy's own (naive's documented race).";
    return "";
}

/* "a (3), b (1)" of the rows whose value is > 0, or "" when none. */
static void list_rows(const dq_loss_table *lt, size_t col, int what,
                      char *buf, size_t len, size_t *count)
{
    size_t off = 0;
    *count = 0;
    buf[0] = '\0';
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_loss_cell *x = dq_loss_cell_at(lt, r, col);
        uint64_t v;
        if (x == NULL)
            continue;
        v = what == 0   ? x->lost
            : what == 1 ? x->duplicated
            : what == 2 ? x->redelivered
                        : x->early;
        if (v == 0)
            continue;
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
                                "%s%s (%" PRIu64 " of %" PRIu64 ")",
                                *count ? ", " : "", lt->rows[r], v,
                                x->enqueued);
        (*count)++;
    }
}

/* ---- Timelines -------------------------------------------------------------
 * One figure per fault: for the first repeat of each strategy under that
 * fault, deliveries per bucket against seconds since the trial's
 * first record (100 ms buckets, finer for trials under 4 s), the
 * cumulative share of enqueued tasks delivered, and the
 * F windows of that trial shaded (report/loss_timeline.gp).  Read from the
 * event log directly: the checker gives counts, this needs times. */

typedef struct tl_task {
    char id[32];
    int64_t due_ms, first_us;    /* first_us: first D, 0 when none */
} tl_task;

typedef struct tl_win {
    char name[32], id[32];       /* id: the kill's task (id=) or "" */
    int64_t b_us, e_us;          /* e_us < 0 while open */
} tl_win;

typedef struct tl_log {
    int64_t t0_us, end_us;
    tl_task *tasks;
    size_t ntasks;
    int64_t *d_us;               /* every D time, sorted at the end */
    char (*d_id)[32];            /* the D's id, in file order */
    int64_t *d_t_file;           /* the D's time, in file order */
    size_t nd;
    tl_win win[64];
    size_t nwin;
} tl_log;

static void tl_free(tl_log *l)
{
    free(l->tasks);
    free(l->d_us);
    free(l->d_id);
    free(l->d_t_file);
    memset(l, 0, sizeof *l);
}

static int tl_cmp_task(const void *a, const void *b)
{
    return strcmp(((const tl_task *)a)->id, ((const tl_task *)b)->id);
}

static int tl_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Grows *p (elements of size sz) to hold n + 1; 0 or -1. */
static int tl_grow(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 256;
    void *q = realloc(*p, nc * sz);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* Reads the E, D, F records and H end_us of the log at path.  Malformed
 * lines are skipped (dq_check_file has judged the log already).  0 or -1
 * with err. */
static int tl_read(const char *path, tl_log *l, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    size_t capt = 0, capd = 0, capi = 0, capf = 0;
    int64_t last_us = 0;

    memset(l, 0, sizeof *l);
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        char *fld[6] = {0};
        size_t nf = 0;
        line[strcspn(line, "\r\n")] = '\0';
        for (char *p = line; nf < 6;) {
            fld[nf++] = p;
            p = strchr(p, '\t');
            if (p == NULL)
                break;
            *p++ = '\0';
        }
        if (nf < 3 || fld[0][1] != '\0')
            continue;
        if (fld[0][0] == 'H') {
            if (strcmp(fld[1], "end_us") == 0)
                l->end_us = strtoll(fld[2], NULL, 10);
            continue;
        }
        int64_t t = strtoll(fld[1], NULL, 10);
        if (t <= 0)
            continue;
        if (fld[0][0] == 'E' || fld[0][0] == 'D' || fld[0][0] == 'A' ||
            fld[0][0] == 'F') {
            if (l->t0_us == 0 || t < l->t0_us)
                l->t0_us = t;
            if (t > last_us)
                last_us = t;
        }
        if (fld[0][0] == 'E' && nf >= 4) {
            if (tl_grow((void **)&l->tasks, &capt, l->ntasks,
                        sizeof *l->tasks) != 0)
                goto oom;
            tl_task *k = &l->tasks[l->ntasks++];
            snprintf(k->id, sizeof k->id, "%s", fld[2]);
            k->due_ms = strtoll(fld[3], NULL, 10);
            k->first_us = 0;
        } else if (fld[0][0] == 'D') {
            if (tl_grow((void **)&l->d_us, &capd, l->nd, sizeof *l->d_us) ||
                tl_grow((void **)&l->d_id, &capi, l->nd, sizeof *l->d_id) ||
                tl_grow((void **)&l->d_t_file, &capf, l->nd,
                        sizeof *l->d_t_file))
                goto oom;
            l->d_us[l->nd] = t;
            l->d_t_file[l->nd] = t;
            snprintf(l->d_id[l->nd], sizeof l->d_id[0], "%s", fld[2]);
            l->nd++;
        } else if (fld[0][0] == 'F' && nf >= 4) {
            if (strcmp(fld[3], "begin") == 0 && l->nwin < 64) {
                tl_win *w = &l->win[l->nwin++];
                const char *id = nf >= 5 ? strstr(fld[4], "id=") : NULL;
                snprintf(w->name, sizeof w->name, "%s", fld[2]);
                snprintf(w->id, sizeof w->id, "%.*s",
                         id ? (int)strcspn(id + 3, ",") : 0,
                         id ? id + 3 : "");
                w->b_us = t;
                w->e_us = -1;
            } else if (strcmp(fld[3], "end") == 0) {
                /* closes the oldest open window of that fault (as the
                 * checker pairs them; the log is in time order here) */
                for (size_t i = 0; i < l->nwin; i++)
                    if (l->win[i].e_us < 0 &&
                        strcmp(l->win[i].name, fld[2]) == 0) {
                        l->win[i].e_us = t;
                        break;
                    }
            }
        }
    }
    fclose(f);
    if (l->end_us < last_us)
        l->end_us = last_us;
    for (size_t i = 0; i < l->nwin; i++)
        if (l->win[i].e_us < 0)
            l->win[i].e_us = l->end_us;
    qsort(l->tasks, l->ntasks, sizeof *l->tasks, tl_cmp_task);
    for (size_t i = 0; i < l->nd; i++) {
        tl_task key, *k;
        snprintf(key.id, sizeof key.id, "%s", l->d_id[i]);
        k = bsearch(&key, l->tasks, l->ntasks, sizeof *l->tasks,
                    tl_cmp_task);
        if (k != NULL && (k->first_us == 0 || l->d_t_file[i] < k->first_us))
            k->first_us = l->d_t_file[i];
    }
    qsort(l->d_us, l->nd, sizeof *l->d_us, tl_cmp_i64);
    return 0;
oom:
    fclose(f);
    tl_free(l);
    snprintf(err, errlen, "out of memory reading %s", path);
    return -1;
}

/* What one trial's timeline shows, in one clause ("stall 1.20 s; ...")
 * appended to buf at *off. */
static void tl_describe(const tl_log *l, const char *label, char *buf,
                        size_t len, size_t *off)
{
    int64_t stall = 0, caught = -1;
    bool never = false;
    size_t due_in = 0, undelivered = 0;
#define OUT(...)                                                           \
    (*off += (size_t)snprintf(buf + *off, *off < len ? len - *off : 0,     \
                              __VA_ARGS__))

    OUT("- **%s**: ", label);
    if (l->nwin == 0) {
        OUT("no fault window in the log");
        return;
    }
    /* the longest stretch without a delivery that overlaps a window */
    for (size_t i = 0; i + 1 <= l->nd; i++) {
        int64_t a = l->d_us[i];
        int64_t b = i + 1 < l->nd ? l->d_us[i + 1] : l->end_us;
        for (size_t w = 0; w < l->nwin; w++)
            if (a < l->win[w].e_us && b > l->win[w].b_us && b - a > stall) {
                stall = b - a;
                never = i + 1 == l->nd;
            }
    }
    /* the tasks due inside a window, and when they were delivered */
    for (size_t i = 0; i < l->ntasks; i++) {
        const tl_task *k = &l->tasks[i];
        int64_t due_us = k->due_ms * 1000;
        for (size_t w = 0; w < l->nwin; w++) {
            const tl_win *x = &l->win[w];
            if (due_us < x->b_us || due_us > x->e_us)
                continue;
            due_in++;
            if (k->first_us == 0)
                undelivered++;
            else if (k->first_us - x->e_us > caught)
                caught = k->first_us - x->e_us;
            break;
        }
    }
    if (stall > 0)
        OUT("longest gap between deliveries across a window %.*f %s%s",
            stall >= 1000000 ? 2 : 0,
            stall >= 1000000 ? (double)stall / 1e6 : (double)stall / 1e3,
            stall >= 1000000 ? "s" : "ms",
            never ? " (deliveries never resume before the trial ends)" : "");
    else
        OUT("no delivery at all");
    /* (tasks delivered before their window closed are not news) */
    if (due_in > 0 && (caught >= 0 || undelivered > 0)) {
        OUT("; %zu task%s fell due inside the window%s", due_in,
            due_in == 1 ? "" : "s", l->nwin == 1 ? "" : "s");
        if (caught >= 0)
            OUT(", the last delivered %.0f ms after it closed",
                (double)caught / 1e3);
        if (undelivered > 0)
            OUT(", %zu never delivered", undelivered);
    }
    /* a killed consumer's task: did it come back, and when? */
    size_t kills = 0, back = 0;
    int64_t back_max = 0;
    for (size_t w = 0; w < l->nwin; w++) {
        const tl_win *x = &l->win[w];
        if (x->id[0] == '\0')
            continue;
        kills++;
        int64_t first = 0;
        for (size_t i = 0; i < l->nd; i++)
            if (l->d_t_file[i] > x->b_us && strcmp(l->d_id[i], x->id) == 0 &&
                (first == 0 || l->d_t_file[i] < first))
                first = l->d_t_file[i];
        if (first > 0) {
            back++;
            if (first - x->b_us > back_max)
                back_max = first - x->b_us;
        }
    }
    if (kills > 0 && back == 0)
        OUT("; the task%s held by the killed consumer%s never came back "
            "(%zu kill%s)", kills == 1 ? "" : "s", kills == 1 ? "" : "s",
            kills, kills == 1 ? "" : "s");
    else if (kills > 0)
        OUT("; %zu of the %zu killed consumers' tasks came back, the last "
            "%.2f s after its kill", back, kills, (double)back_max / 1e6);
#undef OUT
}

/* "kill-consumer:during-work:2" -> "kill-consumer-during-work-2" */
static void tl_slug(const char *spec, char *buf, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; spec[i] && j + 1 < len; i++) {
        char c = spec[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (!ok && j > 0 && buf[j - 1] == '-')
            continue;
        buf[j++] = ok ? c : '-';
    }
    while (j > 0 && buf[j - 1] == '-')
        j--;
    buf[j] = '\0';
}

/* True when the log at path says its fault spec is spec ("none" when it
 * has no H fault / H faults header); reads only the headers. */
static bool tl_has_fault(const char *path, const char *spec)
{
    FILE *f = fopen(path, "r");
    char line[1024], got[600] = "none";
    if (f == NULL)
        return false;
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] == '#')
            continue;
        if (line[0] != 'H')
            break;
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "H\tfault\t", 8) == 0)
            snprintf(got, sizeof got, "%s", line + 8);
        else if (strncmp(line, "H\tfaults\t", 9) == 0)
            snprintf(got, sizeof got, "%s", line + 9);
    }
    fclose(f);
    return strcmp(got, spec) == 0;
}

/* The trial of row r under fault column col with the lowest repeat, or
 * NULL. */
static const dq_rtrial *tl_pick(const dq_loss_table *lt, const dq_rexp *e,
                                size_t r, size_t col)
{
    const dq_rtrial *best = NULL;
    for (size_t i = 0; i < e->ntrials; i++) {
        const dq_rtrial *t = &e->trials[i];
        char label[64], path[PATH_MAX];
        row_label(e, t, label, sizeof label);
        if (strcmp(label, lt->rows[r]) != 0 ||
            (best != NULL && t->repeat >= best->repeat))
            continue;
        snprintf(path, sizeof path, "%s/logs/trial-%03d.log", e->dir,
                 t->trial);
        if (tl_has_fault(path, lt->faults[col]))
            best = t;
    }
    return best;
}

/* Reads the event log of row r's first trial (tl_pick) under fault column
 * col into *l and sets *trial.  Returns 1 (free l with tl_free), 0 when no
 * trial ran that cell (nothing to free), -1 with err. */
static int tl_load(const dq_loss_table *lt, const dq_rexp *e, size_t r,
                   size_t col, tl_log *l, const dq_rtrial **trial, char *err,
                   size_t errlen)
{
    char path[PATH_MAX];
    *trial = tl_pick(lt, e, r, col);
    if (*trial == NULL)
        return 0;
    snprintf(path, sizeof path, "%s/logs/trial-%03d.log", e->dir,
             (*trial)->trial);
    return tl_read(path, l, err, errlen) != 0 ? -1 : 1;
}

/* The timeline figure of fault column col: data/<exp>-timeline-<slug>.csv
 * (block 0 "panel,t0_s,t1_s" windows; then one block per strategy
 * "t_s,<label>,delivered_pct", a row per bucket, t_s its start), figures in svg
 * and png, and a paragraph.  Returns 0 or -1 with err. */
static int tl_figure(out *o, const dq_loss_table *lt, const dq_rexp *e,
                     size_t col, char *err, size_t errlen)
{
    char slug[64], kind[96], stem[PATH_MAX];
    char *csv = NULL, *blocks = NULL, text[8192];
    size_t csvlen = 0, blen = 0, toff = 0, panels = 0;
    int64_t span_us = 0, bucket_us;
    FILE *f = NULL, *fb = NULL;
    int rc = -1;

    tl_slug(lt->faults[col], slug, sizeof slug);
    snprintf(kind, sizeof kind, "timeline-%s", slug);
    f = open_memstream(&csv, &csvlen);
    fb = open_memstream(&blocks, &blen);
    if (f == NULL || fb == NULL) {
        snprintf(err, errlen, "open_memstream failed");
        goto done;
    }
    fputs("# panel,t0_s,t1_s: the fault windows of each panel's trial\n", f);
    text[0] = '\0';
    /* The bucket: the largest of 100, 50, 20, 10 ms that still gives the
     * longest of these trials 40 buckets. */
    for (size_t r = 0; r < lt->nrows; r++) {
        const dq_rtrial *best;
        tl_log l;
        int got = tl_load(lt, e, r, col, &l, &best, err, errlen);
        if (got < 0)
            goto done;
        if (got == 0)
            continue;
        if (l.end_us - l.t0_us > span_us)
            span_us = l.end_us - l.t0_us;
        tl_free(&l);
    }
    bucket_us = 100000;
    while (bucket_us > 10000 && span_us / bucket_us < 40)
        bucket_us = bucket_us == 100000 ? 50000
                    : bucket_us == 50000 ? 20000 : 10000;
    for (size_t r = 0; r < lt->nrows; r++) {
        /* the first trial (lowest repeat) of this row and fault */
        const dq_rtrial *best;
        tl_log l;
        int got = tl_load(lt, e, r, col, &l, &best, err, errlen);
        if (got < 0)
            goto done;
        if (got == 0)
            continue;
        panels++;
        for (size_t w = 0; w < l.nwin; w++)
            fprintf(f, "%zu,%.3f,%.3f\n", panels,
                    (double)(l.win[w].b_us - l.t0_us) / 1e6,
                    (double)(l.win[w].e_us - l.t0_us) / 1e6);
        fprintf(fb, "\n\nt_s,%s (trial %d),delivered_pct\n", lt->rows[r],
                best->trial);
        {
            size_t nb = (size_t)((l.end_us - l.t0_us) / bucket_us) + 1;
            size_t di = 0;
            uint64_t firsts = 0;
            int64_t *fs = malloc((l.ntasks + 1) * sizeof *fs);
            size_t nfs = 0, fi = 0;
            if (fs == NULL) {
                tl_free(&l);
                snprintf(err, errlen, "out of memory");
                goto done;
            }
            for (size_t i = 0; i < l.ntasks; i++)
                if (l.tasks[i].first_us > 0)
                    fs[nfs++] = l.tasks[i].first_us;
            qsort(fs, nfs, sizeof *fs, tl_cmp_i64);
            for (size_t b = 0; b < nb; b++) {
                int64_t hi = l.t0_us + (int64_t)(b + 1) * bucket_us;
                size_t n = 0;
                while (di < l.nd && l.d_us[di] < hi) {
                    di++;
                    n++;
                }
                while (fi < nfs && fs[fi] < hi) {
                    fi++;
                    firsts++;
                }
                fprintf(fb, "%.3f,%zu,%.1f\n",
                        (double)b * (double)bucket_us / 1e6, n,
                        l.ntasks ? 100.0 * (double)firsts /
                                       (double)l.ntasks
                                 : 0.0);
            }
            free(fs);
        }
        if (toff > 0)
            toff += (size_t)snprintf(text + toff, sizeof text - toff, "\n");
        tl_describe(&l, lt->rows[r], text, sizeof text, &toff);
        tl_free(&l);
    }
    if (panels == 0) {
        rc = 0;
        goto done;
    }
    fprintf(f, "0,0,0\n"); /* keeps block 0 non-empty */
    fclose(fb);
    fb = NULL;
    fwrite(blocks, 1, blen, f);
    fclose(f);
    f = NULL;

    snprintf(stem, sizeof stem, "%s-%s", e->name, kind);
    if (draw_figure(o, stem, "loss_timeline", "csv", csv, csvlen, err,
                    errlen) != 0)
        goto done;
    both(o, "**`%s`, over time** (the first repeat of each strategy; "
         "shaded: the fault windows of that trial, drawn at least 1%% of "
         "the axis wide; bars: deliveries per %" PRId64 " ms; line: share "
         "of the enqueued tasks delivered so far):\n\n%s\n\n",
         lt->faults[col], bucket_us / 1000, text);
    figure_links(o, stem, "csv");
    rc = 0;
done:
    if (fb != NULL)
        fclose(fb);
    if (f != NULL)
        fclose(f);
    free(blocks);
    free(csv);
    return rc;
}

int section_loss(out *o, dq_rexp *e, char *err, size_t errlen)
{
    dq_loss_table lt;
    char buf[2048], name[64], decl[128];
    const char *head[DQ_LOSS_MAX_FAULTS + 2];
    char cellbuf[DQ_LOSS_MAX_FAULTS + 2][160];
    const char *cells[DQ_LOSS_MAX_FAULTS + 2];
    size_t marks = 0, no_verdict = 0;

    if (dq_loss_load(e, &lt, err, errlen) != 0)
        return -1;
    if (lt.nrows == 0) {
        dq_loss_free(&lt);
        return 1;           /* no trial: report.c's generic section */
    }

    both(o, "Each cell: **lost / duplicated / redelivered of N tasks**, "
         "summed over the repeats, from the event logs.  *Lost*: enqueued "
         "and never delivered though due before the trial ended, or "
         "delivered only to a consumer that was killed before it acked "
         "(with no lease to bring it back).  *Duplicated*: delivered again "
         "after an ack, or with no redelivery to explain it.  "
         "*Redelivered*: delivered again after a fault or a lease expiry "
         "while nobody had acked it (at-least-once behaviour).  Tasks "
         "still pending when the trial ended are not counted as lost "
         "(shown as +P).  A cross marks a cell where the strategy broke a "
         "guarantee it declares (`dqlab check` would exit 1).\n\n");
    head[0] = "strategy";
    head[1] = "declares";
    for (size_t c = 0; c < lt.nfaults; c++)
        head[c + 2] = lt.faults[c];
    table_row(o, head, lt.nfaults + 2, true);
    for (size_t r = 0; r < lt.nrows; r++) {
        unsigned flags = 0;
        for (size_t c = 0; c < lt.nfaults; c++)
            if (dq_loss_cell_at(&lt, r, c) != NULL)
                flags = dq_loss_cell_at(&lt, r, c)->flags;
        declared(flags, decl, sizeof decl);
        snprintf(cellbuf[0], sizeof cellbuf[0], "%s", lt.rows[r]);
        snprintf(cellbuf[1], sizeof cellbuf[1], "%s", decl);
        for (size_t c = 0; c < lt.nfaults; c++) {
            const dq_loss_cell *x = dq_loss_cell_at(&lt, r, c);
            const dq_loss_cell *raw = &lt.cells[r * DQ_LOSS_MAX_FAULTS + c];
            char pend[32] = "", nov[80] = "";
            if (raw->no_verdict > 0 && x != NULL)
                snprintf(nov, sizeof nov, " (+%zu trial%s with no verdict: "
                         "log incomplete)", raw->no_verdict,
                         raw->no_verdict == 1 ? "" : "s");
            else if (raw->no_verdict > 0)
                snprintf(nov, sizeof nov, "no verdict: log incomplete");
            if (x == NULL) {
                snprintf(cellbuf[c + 2], sizeof cellbuf[0], "%s",
                         nov[0] ? nov : "-");
                no_verdict += raw->no_verdict;
                continue;
            }
            no_verdict += raw->no_verdict;
            if (x->pending_end)
                snprintf(pend, sizeof pend, " +%" PRIu64, x->pending_end);
            snprintf(cellbuf[c + 2], sizeof cellbuf[0],
                     "%" PRIu64 " / %" PRIu64 " / %" PRIu64 " of %" PRIu64
                     "%s%s%s", x->lost, x->duplicated, x->redelivered,
                     x->enqueued, pend, x->violation_trials ? " ✗" : "",
                     nov);
            marks += x->violation_trials ? 1 : 0;
        }
        for (size_t k = 0; k < lt.nfaults + 2; k++)
            cells[k] = cellbuf[k];
        table_row(o, cells, lt.nfaults + 2, false);
    }
    table_end(o);

    if (no_verdict > 0) {
        /* Neither ok nor a violation: say which and why. */
        both(o, "No verdict for %zu trial log%s, left out of every count "
             "above:", no_verdict, no_verdict == 1 ? "" : "s");
        for (size_t r = 0; r < lt.nrows; r++)
            for (size_t c = 0; c < lt.nfaults; c++) {
                const dq_loss_cell *x =
                    &lt.cells[r * DQ_LOSS_MAX_FAULTS + c];
                if (x->no_verdict > 0)
                    both(o, " %s under `%s`, %zu trial%s (%s).", lt.rows[r],
                         lt.faults[c], x->no_verdict,
                         x->no_verdict == 1 ? "" : "s", x->no_verdict_why);
            }
        both(o, "\n\n");
    }

    if (marks > 0) {
        both(o, "Crosses (declared guarantee broken):");
        for (size_t r = 0; r < lt.nrows; r++)
            for (size_t c = 0; c < lt.nfaults; c++) {
                const dq_loss_cell *x = dq_loss_cell_at(&lt, r, c);
                if (x != NULL && x->violation_trials)
                    both(o, " %s under `%s`, %zu of %zu trial%s: %s.",
                         lt.rows[r], lt.faults[c], x->violation_trials,
                         x->trials, x->trials == 1 ? "" : "s",
                         x->violation);
            }
        both(o, "\n\n");
    } else {
        both(o, "No strategy broke a guarantee it declares in these "
             "trials.\n\n");
    }

    both(o, "### What each fault did\n\n");
    for (size_t c = 0; c < lt.nfaults; c++) {
        size_t nl, nd, nr, ne;
        char lost[1024], dup[1024], red[1024], early[1024];
        uint64_t win_us = 0, windows = 0;
        list_rows(&lt, c, 0, lost, sizeof lost, &nl);
        list_rows(&lt, c, 1, dup, sizeof dup, &nd);
        list_rows(&lt, c, 2, red, sizeof red, &nr);
        list_rows(&lt, c, 3, early, sizeof early, &ne);
        for (size_t r = 0; r < lt.nrows; r++) {
            const dq_loss_cell *x = dq_loss_cell_at(&lt, r, c);
            if (x != NULL) {
                win_us += (uint64_t)x->window_us;
                windows += x->windows;
            }
        }
        fault_name(lt.faults[c], name, sizeof name);
        size_t off = 0;
        off += (size_t)snprintf(buf + off, sizeof buf - off, "**`%s`**",
                                lt.faults[c]);
        if (windows > 0)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    " (%" PRIu64 " fault window%s in the "
                                    "log, %.0f ms on average)", windows,
                                    windows == 1 ? "" : "s",
                                    (double)win_us / 1000.0 /
                                        (double)windows);
        off += (size_t)snprintf(buf + off, sizeof buf - off, ": ");
        if (nl + nd + nr + ne == 0)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    "no strategy lost, repeated, "
                                    "redelivered or delivered early any "
                                    "task.  ");
        if (nl)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "lost "
                                    "tasks: %s.  ", lost);
        if (nd)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    "duplicated: %s.  ", dup);
        if (nr)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    "redelivered: %s.  ", red);
        if (ne)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "early: "
                                    "%s.  ", early);
        size_t ran = 0;
        for (size_t r = 0; r < lt.nrows; r++)
            ran += dq_loss_cell_at(&lt, r, c) != NULL;
        if ((nl || nd || nr || ne) && ran > nl)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    "%zu of %zu strateg%s lost nothing.  ",
                                    ran - nl, ran, ran == 1 ? "y" : "ies");
        snprintf(buf + off, sizeof buf - off, "%s", mechanism(name));
        both(o, "%s\n\n", buf);
        if (strcmp(lt.faults[c], "none") != 0 &&
            tl_figure(o, &lt, e, c, err, errlen) != 0) {
            dq_loss_free(&lt);
            return -1;
        }
    }
    dq_loss_free(&lt);
    return 0;
}
