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
 *
 * The tables of template uses below are rendered with their own format
 * (every value a string), so that one call serves every row.
 */
#include <inttypes.h>
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

/* Whether x's host crashes ran (any AOF mode). */
static bool host_ran(const dq_fact *x)
{
    for (size_t m = 0; m < DQ_AOF_MODES; m++)
        if (x->host[m].measured)
            return true;
    return false;
}

/* Question 2's strategies: the leased ones as measured, and every other
 * at-least-once one a host crash measured though no consumer was killed
 * (its crash figures stand without the kills). */
static bool aof_listed(const dq_fact *x)
{
    return leased(x) || (!avoided(x) && x->seen == DQ_SEEN_NONE &&
                         (x->s->flags & DQ_G_AT_LEAST_ONCE) && host_ran(x));
}

/* The guide's lists, in the order of its template's values. */
enum { L_ALO, L_AMO, L_AOF, L_BLOCK, L_POLL, L_INPROC, L_AVOID, NLISTS };

static bool in_list(const dq_fact *x, int kind)
{
    unsigned fl = x->s->flags;
    bool redis = fl & DQ_G_NEEDS_REDIS;
    switch (kind) {
    case L_ALO:
        return leased(x);
    case L_AOF:
        return aof_listed(x);
    case L_AMO:
        return redis && !avoided(x) && x->dup.measured &&
               !(fl & DQ_G_AT_LEAST_ONCE) &&
               (x->seen == DQ_SEEN_AMO || x->seen == DQ_SEEN_NONE);
    case L_BLOCK:
        return redis && !avoided(x) && (fl & DQ_G_BLOCKS) && x->lat;
    case L_POLL:
        return redis && !avoided(x) && (fl & DQ_G_POLLS) && x->lat;
    case L_INPROC:
        return !redis && !avoided(x);
    default:
        return avoided(x);
    }
}

/* What x did that puts it on the list to avoid, into buf. */
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
                x->backlog_window_s * 1000.0, x->backlog_n);
}

/* A list's item: its template, then the one or two cells it shows after
 * the name, in the order of the template's format. */
static const dq_tuse items[NLISTS] DQ_TUSES = {
    [L_ALO] = {"guide.alo_item", "%sname=%s kill=%s"},
    [L_AMO] = {"guide.amo_item", "%sname=%s kill=%s lat=%s"},
    [L_AOF] = {"guide.aof_item", "%sname=%s crash=%s"},
    [L_BLOCK] = {"guide.wait_item", "%sname=%s lat=%s idle=%s"},
    [L_POLL] = {"guide.wait_item", "%sname=%s lat=%s idle=%s"},
    [L_INPROC] = {"guide.inproc_item", "%sname=%s lat=%s kill=%s"},
    [L_AVOID] = {"guide.avoid_item", "%sname=%s what=%s"},
};
static dq_cell_fn *const item_cells[NLISTS][2] = {
    [L_ALO] = {dq_cell_kill, NULL},
    [L_AMO] = {dq_cell_kill, dq_cell_lat},
    [L_AOF] = {dq_cell_crash, NULL},
    [L_BLOCK] = {dq_cell_lat, dq_cell_idle},
    [L_POLL] = {dq_cell_lat, dq_cell_idle},
    [L_INPROC] = {dq_cell_lat, dq_cell_kill},
    [L_AVOID] = {avoid_what, NULL},
};

/* The strategies of list kind, or "none in this run", into buf. */
static void list_of(dq_texts *t, const dq_facts *f, int kind, char *buf,
                    size_t len)
{
    char n[128], a[2048], b[512];
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < f->n; i++) {
        if (!in_list(&f->f[i], kind))
            continue;
        dq_cell_name(t, &f->f[i], n, sizeof n);
        item_cells[kind][0](t, f, &f->f[i], a, sizeof a);
        b[0] = '\0';
        if (item_cells[kind][1] != NULL)
            item_cells[kind][1](t, f, &f->f[i], b, sizeof b);
        dq_tcat(t, buf, len, &off, &items[kind], items[kind].fmt,
                off ? "; " : "", n, a, b);
    }
    if (off == 0)
        DQ_TCAT(t, buf, len, &off, "guide.none", "");
}

/* Question 2's answer from the leased strategies' host crashes: per AOF
 * mode the lost tasks summed over them, then the modes that lost none and
 * those that lost some ("always", "everysec 402 of 1200").  Returns
 * whether any host crash of a leased strategy ran. */
static bool host_answer(dq_md *o, const dq_facts *f, char *buf, size_t len)
{
    char none[64] = "", some[256] = "";
    size_t no = 0, so = 0;
    bool any = false;
    for (size_t m = 0; m < DQ_AOF_MODES; m++) {
        dq_tally sum = {0};
        for (size_t i = 0; i < f->n; i++) {
            const dq_tally *a = &f->f[i].host[m];
            if (!aof_listed(&f->f[i]) || !a->measured)
                continue;
            sum.measured = true;
            sum.n += a->n;
            sum.of += a->of;
        }
        if (!sum.measured)
            continue;
        any = true;
        if (sum.n == 0)
            dq_append(none, sizeof none, &no, "%s%s", no ? ", " : "",
                      dq_aof_modes[m]);
        else
            DQ_TCAT(o->texts, some, sizeof some, &so, "guide.host_lost",
                    "%smode=%s n=%" PRIu64 " of=%" PRIu64, so ? ", " : "",
                    dq_aof_modes[m], sum.n, sum.of);
    }
    if (any && none[0] && some[0])
        DQ_TSET(o->texts, buf, len, "guide.host_answer", "none=%s some=%s",
                none, some);
    else if (any && none[0])
        DQ_TSET(o->texts, buf, len, "guide.host_answer_none", "none=%s",
                none);
    else if (any)
        DQ_TSET(o->texts, buf, len, "guide.host_answer_all", "some=%s", some);
    return any;
}

/* The p99 range of list kind's strategies (lo > hi: none) and the one
 * with the lowest p99 and the one with the fewest idle commands/s of
 * either waiting list. */
typedef struct wait_sum {
    double lo[2], hi[2];
    const dq_fact *fast, *quiet;
} wait_sum;

static void wait_of(const dq_facts *f, wait_sum *w)
{
    for (int k = 0; k < 2; k++) {
        w->lo[k] = 1e300;
        w->hi[k] = -1;
    }
    w->fast = w->quiet = NULL;
    for (size_t i = 0; i < f->n; i++) {
        const dq_fact *x = &f->f[i];
        int k = in_list(x, L_BLOCK) ? 0 : in_list(x, L_POLL) ? 1 : -1;
        if (k < 0 || x->lat_censored)   /* no p99 among the delivered */
            continue;
        w->lo[k] = x->p99_ms < w->lo[k] ? x->p99_ms : w->lo[k];
        w->hi[k] = x->p99_ms > w->hi[k] ? x->p99_ms : w->hi[k];
        if (w->fast == NULL || x->p99_ms < w->fast->p99_ms)
            w->fast = x;
        if (x->idle && (w->quiet == NULL ||
                        x->idle_cmds_s < w->quiet->idle_cmds_s))
            w->quiet = x;
    }
}

/* Question 3's answer: the lowest p99 and the fewest idle commands of
 * the waiting strategies, and the p99 range of each way of waiting. */
static void wait_answer(dq_texts *t, const dq_facts *f, char *buf,
                        size_t len)
{
    wait_sum w;
    char fast[128], quiet[256] = "", v[5][32];
    wait_of(f, &w);
    buf[0] = '\0';
    if (w.fast == NULL)
        return;
    dq_cell_name(t, w.fast, fast, sizeof fast);
    if (w.quiet != NULL) {
        char n[128];
        dq_cell_name(t, w.quiet, n, sizeof n);
        DQ_TSET(t, quiet, sizeof quiet, "guide.wait_quiet", "name=%s "
                "cmds=%.0f", n, w.quiet->idle_cmds_s);
    }
    const double ms[5] = {w.fast->p99_ms, w.lo[0], w.hi[0], w.lo[1],
                          w.hi[1]};
    for (size_t i = 0; i < 5; i++)   /* as the lists' cells say them */
        dq_fmt_ms(v[i], sizeof v[i], ms[i]);
    if (w.hi[0] < 0 || w.hi[1] < 0)  /* one way of waiting measured */
        DQ_TSET(t, buf, len, "guide.wait_one", "fast=%s p99=%s quiet=%s",
                fast, v[0], quiet);
    else
        DQ_TSET(t, buf, len, "guide.wait_answer", "fast=%s p99=%s quiet=%s "
                "blo=%s bhi=%s plo=%s phi=%s", fast, v[0], quiet, v[1], v[2],
                v[3], v[4]);
    if (w.hi[0] >= 0 && w.hi[1] >= 0 && w.lo[1] < w.hi[0])
        DQ_TCAT(t, buf, len, &(size_t){strlen(buf)}, "guide.wait_overlap",
                "plo=%s bhi=%s", v[3], v[2]);
}

void dq_section_guide(dq_md *o, const dq_results *r, const dq_facts *f)
{
    char wait[1024];
    char b[NLISTS][8192], host[2048] = "";
    (void)r;
    for (int k = 0; k < NLISTS; k++)
        list_of(o->texts, f, k, b[k], sizeof b[k]);
    /* the crash cells of the list carry the host crashes where they ran;
     * the answer follows from them, or says that none ran */
    if (!host_answer(o, f, host, sizeof host))
        DQ_TBUF(o, host, "guide.host_none", "");
    wait_answer(o->texts, f, wait, sizeof wait);
    dq_anchor(o, "guide");
    DQ_TEXT(o, "guide.guide", "alo=%s amo=%s aof=%s host=%s block=%s "
            "poll=%s wait=%s inproc=%s avoid=%s\n\n", b[L_ALO], b[L_AMO],
            b[L_AOF], host, b[L_BLOCK], b[L_POLL], wait, b[L_INPROC],
            b[L_AVOID]);
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

/* The scenarios in the report's order: the AOF mode each needs, what it
 * ranks by, the cell its rule quotes, its rule and its text. */
static const struct scenario {
    int mode;
    double (*rank)(const dq_fact *);
    dq_cell_fn *cell;
} scenarios[] = {
    {DQ_AOF_ALWAYS, by_cmds, dq_cell_cmds},
    {DQ_AOF_ALWAYS, by_idle, dq_cell_idle},
    {DQ_AOF_EVERYSEC, by_lat, dq_cell_lat},
};
static const dq_tuse rules[] DQ_TUSES = {
    {"guide.rule_cmds", "cmds=%s"},
    {"guide.rule_idle", "idle=%s"},
    {"guide.rule_lat", "lat=%s"},
};
static const dq_tuse texts[] DQ_TUSES = {
    {"guide.order", "pick=%s lease=%s evidence=%s\n\n"},
    {"guide.packet", "pick=%s lease=%s evidence=%s score=%s\n\n"},
    {"guide.remind", "pick=%s lease=%s evidence=%s\n\n"},
};

/* The candidates of scenario s (leased, and nothing lost on a restart
 * with its AOF mode, or on a host crash with it: the harder test) as
 * linked names into cands; returns the best by its rank, or NULL when
 * none qualifies or none has the figure. */
static const dq_fact *pick(dq_texts *t, const dq_facts *f,
                           const struct scenario *s, char *cands, size_t len)
{
    const dq_fact *best = NULL, *c[DQ_FACTS_MAX];
    size_t n = 0, off = 0;
    char name[128];
    for (size_t i = 0; i < f->n; i++) {
        const dq_fact *x = &f->f[i];
        const dq_tally *crash = &x->crash[s->mode], *host = &x->host[s->mode];
        if (!leased(x) || !((crash->measured && crash->n == 0) ||
                            (host->measured && host->n == 0)))
            continue;
        c[n++] = x;
        if (s->rank(x) >= 0 && (best == NULL || s->rank(x) < s->rank(best)))
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
    if (tr == NULL) {
        DQ_TSET(t, buf, len, "guide.lease_none", "");
        return;
    }
    if (!dq_options_get(tr->options, "lease_ms", lease, sizeof lease))
        for (size_t k = 0; dq_strategy_option(x->s, k) != NULL; k++)
            if (strcmp(dq_strategy_option(x->s, k)->name, "lease_ms") == 0)
                snprintf(lease, sizeof lease, "%s",
                         dq_strategy_option(x->s, k)->def);
    DQ_TSET(t, buf, len, "guide.lease", "lease=%s work=%g", lease,
            (double)tr->work_us / 1000.0);
}

/* A scenario's pick sentence, lease note and evidence (its matrix
 * cells). */
typedef struct scn_text {
    char pick[4096], lease[512], ev[4096], c[6][512];
} scn_text;

static void scenario(dq_texts *t, const dq_facts *f, size_t k, scn_text *s)
{
    static dq_cell_fn *const ev[6] = {
        dq_cell_kill, dq_cell_crash, dq_cell_dup,
        dq_cell_idle, dq_cell_lat, dq_cell_version,
    };
    char cands[2048], name[128], rule[600], v[512];
    const dq_fact *x = pick(t, f, &scenarios[k], cands, sizeof cands);
    s->lease[0] = '\0';
    if (x == NULL) {
        DQ_TSET(t, s->pick, sizeof s->pick, "guide.pick_none", "");
        DQ_TSET(t, s->ev, sizeof s->ev, "guide.none", "");
        return;
    }
    scenarios[k].cell(t, f, x, v, sizeof v);
    dq_tset(t, rule, sizeof rule, &rules[k], rules[k].fmt, v);
    dq_cell_name(t, x, name, sizeof name);
    DQ_TSET(t, s->pick, sizeof s->pick, "guide.pick", "name=%s cands=%s "
            "rule=%s", name, cands, rule);
    lease_note(t, x, s->lease, sizeof s->lease);
    for (size_t i = 0; i < 6; i++)
        ev[i](t, f, x, s->c[i], sizeof s->c[i]);
    DQ_TSET(t, s->ev, sizeof s->ev, "guide.evidence", "kill=%s crash=%s "
            "dup=%s idle=%s lat=%s version=%s", s->c[0], s->c[1], s->c[2],
            s->c[3], s->c[4], s->c[5]);
}

void dq_section_scenarios(dq_md *o, const dq_results *r, const dq_facts *f)
{
    const dq_probe_row *p = dq_probes_find(&r->probes, "C06", "ms-epoch");
    scn_text s;
    char score[1024];
    if (p != NULL)      /* the ms-epoch probe's result, or where to get it */
        DQ_TSET(o->texts, score, sizeof score, "guide.score", "observed=%s",
                p->observed);
    else
        DQ_TSET(o->texts, score, sizeof score, "guide.score_none", "");
    dq_anchor(o, "scenarios");
    DQ_TEXT(o, "guide.scenarios", "\n\n");
    for (size_t k = 0; k < sizeof scenarios / sizeof scenarios[0]; k++) {
        scenario(o->texts, f, k, &s);
        dq_text(o, &texts[k], texts[k].fmt, s.pick, s.lease, s.ev, score);
    }
}
