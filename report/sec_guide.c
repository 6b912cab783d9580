/* sec_guide.c -- the decision guide and the three scenarios that follow
 * the summary matrix (text/guide.md).
 *
 * Neither names a strategy by itself: each answer of the guide lists the
 * strategies whose measured behaviour fits it (facts.h), and each scenario
 * picks, among the strategies that lost nothing on consumer kills and on
 * a Redis restart with the AOF mode the scenario calls for and delivered
 * no duplicate, the one best by the scenario's rule (fewest commands per
 * task, lowest idle cost, lowest p99 lateness), with the figures that
 * back it.  Another run can give another answer, and says so.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "front.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* Strategies to avoid: duplicates without a fault, tasks lost while the
 * consumers were down, or not delivered within the window with a large
 * backlog. */
static bool avoided(const dq_fact *x)
{
    return x->dup.n > 0 || x->outage.n > 0 ||
           (x->backlog && x->backlog_delivered < x->backlog_tasks);
}

/* At-least-once as measured: nothing lost on kills, no duplicate. */
static bool leased(const dq_fact *x)
{
    return x->seen == DQ_SEEN_ALO && !avoided(x);
}

enum { L_ALO, L_AMO, L_AOF, L_BLOCK, L_POLL, L_INPROC };

static bool in_list(const dq_fact *x, int kind)
{
    unsigned fl = x->s->flags;
    bool redis = fl & DQ_G_NEEDS_REDIS;
    switch (kind) {
    case L_ALO:
    case L_AOF:
        return leased(x);
    case L_AMO:
        return redis && !avoided(x) && x->dup.measured &&
               !(fl & DQ_G_AT_LEAST_ONCE) &&
               (x->seen == DQ_SEEN_AMO || x->seen == DQ_SEEN_NONE);
    case L_BLOCK:
        return redis && !avoided(x) && (fl & DQ_G_BLOCKS) && x->lat;
    case L_POLL:
        return redis && !avoided(x) && (fl & DQ_G_POLLS) && x->lat;
    default:
        return !redis && !avoided(x);
    }
}

/* One item of list kind for x, appended to buf at *off. */
static void item(dq_texts *t, const dq_facts *f, const dq_fact *x, int kind,
                 char *buf, size_t len, size_t *off)
{
    char n[128], a[512], b[512];
    const char *sep = *off ? "; " : "";
    dq_cell_name(t, x, n, sizeof n);
    dq_cell_kill(t, f, x, a, sizeof a);
    dq_cell_lat(t, f, x, b, sizeof b);
    if (kind == L_ALO) {
        DQ_TCAT(t, buf, len, off, "guide.alo_item", "%sname=%s kill=%s", sep,
                n, a);
    } else if (kind == L_AMO) {
        DQ_TCAT(t, buf, len, off, "guide.amo_item", "%sname=%s kill=%s "
                "lat=%s", sep, n, a, b);
    } else if (kind == L_AOF) {
        dq_cell_crash(t, f, x, a, sizeof a);
        DQ_TCAT(t, buf, len, off, "guide.aof_item", "%sname=%s crash=%s",
                sep, n, a);
    } else if (kind == L_INPROC) {
        DQ_TCAT(t, buf, len, off, "guide.inproc_item", "%sname=%s lat=%s "
                "kill=%s", sep, n, b, a);
    } else {
        dq_cell_idle(t, f, x, a, sizeof a);
        DQ_TCAT(t, buf, len, off, "guide.wait_item", "%sname=%s lat=%s "
                "idle=%s", sep, n, b, a);
    }
}

/* The strategies of list kind, or "none in this run", into buf. */
static void list_of(dq_texts *t, const dq_facts *f, int kind, char *buf,
                    size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < f->n; i++)
        if (in_list(&f->f[i], kind))
            item(t, f, &f->f[i], kind, buf, len, &off);
    if (off == 0)
        DQ_TCAT(t, buf, len, &off, "guide.none", "");
}

/* What x did that puts it on the list to avoid, into buf ("" if
 * nothing). */
static void avoid_what(dq_texts *t, const dq_facts *f, const dq_fact *x,
                       char *buf, size_t len)
{
    char d[512], id[80];
    size_t off = 0;
    buf[0] = '\0';
    if (x->dup.n > 0) {
        dq_cell_dup(t, f, x, d, sizeof d);
        DQ_TCAT(t, buf, len, &off, "guide.avoid_dup", "dup=%s", d);
    }
    dq_exp_anchor(f->loss, id, sizeof id);
    if (x->outage.n > 0)
        DQ_TCAT(t, buf, len, &off, "guide.avoid_outage", "%sn=%" PRIu64
                " of=%" PRIu64 " id=%s", off ? "; " : "", x->outage.n,
                x->outage.of, id);
    dq_exp_anchor(f->backlog, id, sizeof id);
    if (x->backlog && x->backlog_delivered < x->backlog_tasks)
        DQ_TCAT(t, buf, len, &off, "guide.avoid_backlog", "%sn=%" PRIu64
                " of=%" PRIu64 " id=%s window=%.0f backlog=%" PRId64,
                off ? "; " : "", x->backlog_delivered, x->backlog_tasks, id,
                x->backlog_window_s, x->backlog_n);
}

/* The strategies to avoid, each with what it did. */
static void avoid_list(dq_texts *t, const dq_facts *f, char *buf, size_t len)
{
    char n[128], what[2048];
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < f->n; i++) {
        if (!avoided(&f->f[i]))
            continue;
        dq_cell_name(t, &f->f[i], n, sizeof n);
        avoid_what(t, f, &f->f[i], what, sizeof what);
        DQ_TCAT(t, buf, len, &off, "guide.avoid_item", "%sname=%s what=%s",
                off ? "; " : "", n, what);
    }
    if (off == 0)
        DQ_TCAT(t, buf, len, &off, "guide.none", "");
}

void dq_section_guide(dq_md *o, const dq_results *r, const dq_facts *f)
{
    enum { N = 8192 };
    char *b = malloc(6 * N), avoid[N], host[2048] = "";
    bool hosts = false;
    (void)r;
    if (b == NULL)
        return;
    list_of(o->texts, f, L_ALO, b, N);
    list_of(o->texts, f, L_AMO, b + N, N);
    list_of(o->texts, f, L_AOF, b + 2 * N, N);
    list_of(o->texts, f, L_BLOCK, b + 3 * N, N);
    list_of(o->texts, f, L_POLL, b + 4 * N, N);
    list_of(o->texts, f, L_INPROC, b + 5 * N, N);
    avoid_list(o->texts, f, avoid, sizeof avoid);
    /* the crash cells of the list carry the host crashes where they ran */
    for (size_t i = 0; i < f->n; i++)
        for (size_t m = 0; m < DQ_AOF_MODES; m++)
            hosts |= leased(&f->f[i]) && f->f[i].host[m].measured;
    if (!hosts)
        DQ_TBUF(o, host, "guide.host_none", "");
    dq_anchor(o, "guide");
    DQ_TEXT(o, "guide.guide", "alo=%s amo=%s aof=%s host=%s block=%s "
            "poll=%s inproc=%s avoid=%s\n\n", b, b + N, b + 2 * N, host,
            b + 3 * N, b + 4 * N, b + 5 * N, avoid);
    free(b);
}

/* ---- The scenarios ------------------------------------------------------ */

/* What a scenario ranks by (lower is better; < 0: not measured). */
static double by_cmds(const dq_fact *x)
{
    return x->cmds ? x->cmds_per_task : -1;
}
static double by_idle(const dq_fact *x)
{
    return x->idle ? x->idle_cmds_s : -1;
}
static double by_lat(const dq_fact *x)
{
    return x->lat && !x->lat_censored ? x->p99_ms : -1;
}

/* The candidates of a scenario (leased, and nothing lost on a restart
 * with AOF mode, or on a host crash with it: the harder test) as linked names into cands; returns the best by rank,
 * or NULL when none qualifies or none has the figure. */
static const dq_fact *pick(dq_texts *t, const dq_facts *f, int mode,
                           double (*rank)(const dq_fact *), char *cands,
                           size_t len)
{
    const dq_fact *best = NULL, *c[DQ_FACTS_MAX];
    size_t n = 0, off = 0;
    char name[128];
    for (size_t i = 0; i < f->n; i++) {
        const dq_fact *x = &f->f[i];
        bool crash_ok = x->crash[mode].measured && x->crash[mode].n == 0;
        bool host_ok = x->host[mode].measured && x->host[mode].n == 0;
        if (!leased(x) || !(crash_ok || host_ok))
            continue;
        c[n++] = x;
        if (rank(x) >= 0 && (best == NULL || rank(x) < rank(best)))
            best = x;
    }
    cands[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        dq_cell_name(t, c[i], name, sizeof name);
        dq_append(cands, len, &off, "%s%s", i == 0 ? "" : i + 1 == n
                  ? " and " : ", ", name);
    }
    return best;
}

/* The lease and work of x's loss trials, as a sentence, into buf. */
static void lease_note(dq_texts *t, const dq_fact *x, char *buf, size_t len)
{
    const dq_trialrow *tr = x->kill_trial;
    char lease[32] = "";
    buf[0] = '\0';
    if (tr == NULL) {
        DQ_TCAT(t, buf, len, &(size_t){0}, "guide.lease_none", "");
        return;
    }
    if (!dq_options_get(tr->options, "lease_ms", lease, sizeof lease))
        for (size_t k = 0; dq_strategy_option(x->s, k) != NULL; k++)
            if (strcmp(dq_strategy_option(x->s, k)->name, "lease_ms") == 0)
                snprintf(lease, sizeof lease, "%s",
                         dq_strategy_option(x->s, k)->def);
    DQ_TCAT(t, buf, len, &(size_t){0}, "guide.lease", "lease=%s work=%g",
            lease, (double)tr->work_us / 1000.0);
}

/* The evidence line of x: its matrix cells. */
static void evidence(dq_texts *t, const dq_facts *f, const dq_fact *x,
                     char *buf, size_t len)
{
    char c[6][512];
    dq_cell_kill(t, f, x, c[0], sizeof c[0]);
    dq_cell_crash(t, f, x, c[1], sizeof c[1]);
    dq_cell_dup(t, f, x, c[2], sizeof c[2]);
    dq_cell_idle(t, f, x, c[3], sizeof c[3]);
    dq_cell_lat(t, f, x, c[4], sizeof c[4]);
    dq_cell_version(t, f, x, c[5], sizeof c[5]);
    buf[0] = '\0';
    DQ_TCAT(t, buf, len, &(size_t){0}, "guide.evidence", "kill=%s crash=%s "
            "dup=%s idle=%s lat=%s version=%s", c[0], c[1], c[2], c[3], c[4],
            c[5]);
}

/* A scenario's pick sentence, lease note and evidence. */
typedef struct scn_text {
    char pick[4096], lease[512], ev[4096];
} scn_text;

/* Fills s for the scenario that needs AOF mode and ranks by rank. */
static void scenario(dq_texts *t, const dq_facts *f, int mode,
                     double (*rank)(const dq_fact *), scn_text *s)
{
    char cands[2048], name[128], rule[600], v[512];
    const dq_fact *x = pick(t, f, mode, rank, cands, sizeof cands);
    s->pick[0] = s->lease[0] = s->ev[0] = rule[0] = '\0';
    if (x == NULL) {
        DQ_TCAT(t, s->pick, sizeof s->pick, &(size_t){0}, "guide.pick_none",
                "");
        DQ_TCAT(t, s->ev, sizeof s->ev, &(size_t){0}, "guide.none", "");
        return;
    }
    if (rank == by_cmds) {
        dq_cell_cmds(t, f, x, v, sizeof v);
        DQ_TCAT(t, rule, sizeof rule, &(size_t){0}, "guide.rule_cmds",
                "cmds=%s", v);
    } else if (rank == by_idle) {
        dq_cell_idle(t, f, x, v, sizeof v);
        DQ_TCAT(t, rule, sizeof rule, &(size_t){0}, "guide.rule_idle",
                "idle=%s", v);
    } else {
        dq_cell_lat(t, f, x, v, sizeof v);
        DQ_TCAT(t, rule, sizeof rule, &(size_t){0}, "guide.rule_lat",
                "lat=%s", v);
    }
    dq_cell_name(t, x, name, sizeof name);
    DQ_TCAT(t, s->pick, sizeof s->pick, &(size_t){0}, "guide.pick",
            "name=%s cands=%s rule=%s", name, cands, rule);
    lease_note(t, x, s->lease, sizeof s->lease);
    evidence(t, f, x, s->ev, sizeof s->ev);
}

/* The ms-epoch probe's result (C06), or where to get it. */
static void score_note(dq_texts *t, const dq_results *r, char *buf,
                       size_t len)
{
    const dq_probe_row *p = dq_probes_find(&r->probes, "C06", "ms-epoch");
    buf[0] = '\0';
    if (p != NULL)
        DQ_TCAT(t, buf, len, &(size_t){0}, "guide.score", "observed=%s",
                p->observed);
    else
        DQ_TCAT(t, buf, len, &(size_t){0}, "guide.score_none", "");
}

void dq_section_scenarios(dq_md *o, const dq_results *r, const dq_facts *f)
{
    scn_text *s = malloc(sizeof *s);
    char score[1024];
    if (s == NULL)
        return;
    dq_anchor(o, "scenarios");
    DQ_TEXT(o, "guide.scenarios", "\n\n");
    scenario(o->texts, f, DQ_AOF_ALWAYS, by_cmds, s);
    DQ_TEXT(o, "guide.order", "pick=%s lease=%s evidence=%s\n\n", s->pick,
            s->lease, s->ev);
    scenario(o->texts, f, DQ_AOF_ALWAYS, by_idle, s);
    score_note(o->texts, r, score, sizeof score);
    DQ_TEXT(o, "guide.packet", "pick=%s lease=%s score=%s evidence=%s\n\n",
            s->pick, s->lease, score, s->ev);
    scenario(o->texts, f, DQ_AOF_EVERYSEC, by_lat, s);
    DQ_TEXT(o, "guide.remind", "pick=%s lease=%s evidence=%s\n\n", s->pick,
            s->lease, s->ev);
    free(s);
}
