/* sec_front.c -- the report's first screen after its opening paragraph:
 * the contents, the terms and strategies used below, and the summary
 * matrix (strategies x what a reader choosing one asks), every cell a
 * figure of this run linked to its section (front.h, facts.h).
 *
 * The first screen (1280 x 1200 px of index.html) must show the contents
 * and the matrix's first row; tools/firstscreen.sh checks it in a browser
 * (`make test-browser`, and `make test` on a real report of a smoke run).
 * Hence the contents is one paragraph, and the strategies' one-line
 * descriptions (the start of their dq_strategy.summary) form one
 * paragraph too.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "front.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

void dq_exp_anchor(const dq_rexp *e, char *buf, size_t len)
{
    snprintf(buf, len, "exp-%s", e ? e->name : "");
}

/* Writes "not measured" into buf unless measured; returns !measured. */
static bool unmeasured(dq_texts *t, bool measured, char *buf, size_t len)
{
    if (!measured)
        DQ_TSET(t, buf, len, "front.not_measured", "");
    return !measured;
}

void dq_cell_name(dq_texts *t, const dq_fact *x, char *buf, size_t len)
{
    DQ_TSET(t, buf, len, "front.name", "name=%s", x->s->name);
}

void dq_cell_declared(dq_texts *t, const dq_fact *x, char *buf, size_t len)
{
    static const dq_tuse decl[] DQ_TUSES = {
        {"front.decl_alo", ""},
        {"front.decl_amo_dups", ""},
        {"front.decl_amo", ""},
    };
    unsigned fl = x->s->flags;
    dq_tset(t, buf, len, &decl[fl & DQ_G_AT_LEAST_ONCE ? 0
                               : fl & DQ_G_DUPLICATES  ? 1 : 2], "");
}

void dq_cell_seen(dq_texts *t, const dq_facts *f, const dq_fact *x,
                  char *buf, size_t len)
{
    static const dq_tuse words[] DQ_TUSES = {
        [DQ_SEEN_NONE] = {NULL, NULL},
        [DQ_SEEN_ALO] = {"front.seen_alo", ""},
        [DQ_SEEN_AMO] = {"front.seen_amo", ""},
        [DQ_SEEN_BROKEN] = {"front.seen_broken", ""},
        [DQ_SEEN_NO_LOSS] = {"front.seen_no_loss", ""},
    };
    char w[128], d[128], what[96], id[80];
    unsigned fl = x->s->flags;
    if (unmeasured(t, x->seen != DQ_SEEN_NONE, buf, len))
        return;
    dq_tset(t, w, sizeof w, &words[x->seen], "");
    dq_cell_declared(t, x, what, sizeof what);
    if ((x->seen == DQ_SEEN_ALO && (fl & DQ_G_AT_LEAST_ONCE)) ||
        (x->seen == DQ_SEEN_AMO && (fl & DQ_G_AT_MOST_ONCE) &&
         !(fl & DQ_G_DUPLICATES)))
        DQ_TSET(t, d, sizeof d, "front.declared_same", "");
    else if (x->seen == DQ_SEEN_BROKEN && (fl & DQ_G_DUPLICATES))
        DQ_TSET(t, d, sizeof d, "front.declared_documented", "");
    else
        DQ_TSET(t, d, sizeof d, "front.declared_other", "what=%s", what);
    dq_exp_anchor(f->loss, id, sizeof id);
    DQ_TSET(t, buf, len, "front.seen_cell", "word=%s declared=%s kills=%"
            PRIu64 " ks=%s trials=%zu s=%s id=%s", w, d, x->kill.kills,
            dq_s(x->kill.kills), x->kill.trials, dq_s(x->kill.trials), id);
}

void dq_cell_kill(dq_texts *t, const dq_facts *f, const dq_fact *x,
                  char *buf, size_t len)
{
    char back[64] = "", id[80];
    if (unmeasured(t, x->kill.measured, buf, len))
        return;
    if (x->kill.redelivered > 0)
        DQ_TSET(t, back, sizeof back, "front.kill_back", "n=%" PRIu64,
                x->kill.redelivered);
    dq_exp_anchor(f->loss, id, sizeof id);
    DQ_TSET(t, buf, len, "front.kill_cell", "n=%" PRIu64 " of=%" PRIu64
            " id=%s back=%s trials=%zu s=%s", x->kill.n, x->kill.of, id,
            back, x->kill.trials, dq_s(x->kill.trials));
}

void dq_sample_tail(dq_texts *t, size_t lo, char *buf, size_t len,
                    size_t *off)
{
    DQ_TCATP(t, buf, len, off, lo >= DQ_MIN_REPEATS, "front.sample_tail",
             "front.sample_tail_few", "");
}

/* The measured modes of a[DQ_AOF_MODES] as "off 95/150, always 0/150"
 * into list, and their sample into sample: each mode's trials and the
 * interval of its count ("off 1 trial, 55-70%; ..."; without the mode's
 * name when only one ran).  Returns their trials (0: none measured). */
static size_t mode_list(dq_texts *t, const dq_tally *a, char *list,
                        size_t len, char *sample, size_t slen)
{
    size_t off = 0, so = 0, trials = 0, modes = 0, lo = SIZE_MAX, hi = 0;
    list[0] = sample[0] = '\0';
    for (size_t m = 0; m < DQ_AOF_MODES; m++)
        modes += a[m].measured;
    for (size_t m = 0; m < DQ_AOF_MODES; m++) {
        char l[16], h[16];
        if (!a[m].measured)
            continue;
        DQ_TCAT(t, list, len, &off, "front.crash_item", "%smode=%s n=%"
                PRIu64 " of=%" PRIu64, off ? ", " : "", dq_aof_modes[m],
                a[m].n, a[m].of);
        dq_facts_wilson(a[m].n, a[m].of, l, h);
        DQ_TCAT(t, sample, slen, &so, "front.mode_sample", "%smode=%s%s "
                "trials=%zu s=%s lo=%s hi=%s", so ? "; " : "",
                modes > 1 ? dq_aof_modes[m] : "", modes > 1 ? " " : "",
                a[m].trials, dq_s(a[m].trials), l, h);
        trials += a[m].trials;
        lo = a[m].trials < lo ? a[m].trials : lo;
        hi = a[m].trials > hi ? a[m].trials : hi;
    }
    if (trials > 0)
        dq_sample_tail(t, lo, sample, slen, &so);
    return trials;
}

size_t dq_host_list(dq_texts *t, const dq_facts *f, const char *sep,
                    char *buf, size_t len)
{
    size_t off = 0, lo = SIZE_MAX, hi = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < f->n; i++)
        for (size_t m = 0; m < DQ_AOF_MODES; m++) {
            const dq_tally *a = &f->f[i].host[m];
            char l[16], h[16];
            if (!a->measured)
                continue;
            dq_facts_wilson(a->n, a->of, l, h);
            DQ_TCAT(t, buf, len, &off, "front.host_item", "%sname=%s mode=%s "
                    "n=%" PRIu64 " sep=%s of=%" PRIu64 " lo=%s hi=%s",
                    off ? ", " : "", f->f[i].s->name, dq_aof_modes[m], a->n,
                    sep, a->of, l, h);
            lo = a->trials < lo ? a->trials : lo;
            hi = a->trials > hi ? a->trials : hi;
        }
    if (off == 0)
        return 0;
    if (lo == hi)
        DQ_TCAT(t, buf, len, &off, "front.host_trials", "n=%zu s=%s", lo,
                dq_s(lo));
    else
        DQ_TCAT(t, buf, len, &off, "front.host_trials_range", "lo=%zu hi=%zu",
                lo, hi);
    dq_sample_tail(t, lo, buf, len, &off);
    return off;
}

void dq_cell_crash(dq_texts *t, const dq_facts *f, const dq_fact *x,
                   char *buf, size_t len)
{
    char list[256], sample[512], id[80];
    size_t trials = mode_list(t, x->crash, list, sizeof list, sample,
                              sizeof sample);
    if (trials == 0 && !(x->s->flags & DQ_G_NEEDS_REDIS)) {
        DQ_TSET(t, buf, len, "front.no_redis", "");
        return;
    }
    dq_exp_anchor(f->loss, id, sizeof id);
    if (!unmeasured(t, trials > 0, buf, len))
        DQ_TSET(t, buf, len, "front.crash_cell", "list=%s id=%s sample=%s",
                list, id, sample);
    /* the host crashes of f->host, when that ran */
    trials = mode_list(t, x->host, list, sizeof list, sample, sizeof sample);
    dq_exp_anchor(f->host, id, sizeof id);
    if (trials > 0)
        DQ_TCAT(t, buf, len, &(size_t){strlen(buf)}, "front.host_cell",
                "list=%s id=%s sample=%s", list, id, sample);
}

void dq_cell_dup(dq_texts *t, const dq_facts *f, const dq_fact *x,
                 char *buf, size_t len)
{
    char id[80], cons[32];
    int n = snprintf(cons, sizeof cons, "%d", x->dup_cmin);
    if (unmeasured(t, x->dup.measured, buf, len))
        return;
    if (x->dup_cmin != x->dup_cmax)
        snprintf(cons + n, sizeof cons - (size_t)n, "-%d", x->dup_cmax);
    dq_exp_anchor(f->conc, id, sizeof id);
    DQ_TSET(t, buf, len, "front.dup_cell", "n=%" PRIu64 " id=%s of=%" PRIu64
            " with=%zu trials=%zu s=%s consumers=%s", x->dup.n, id, x->dup.of,
            x->dup_with, x->dup.trials, dq_s(x->dup.trials), cons);
}

/* ", poll_ms=100" when opts is not empty, else "". */
static void opts_note(dq_texts *t, const char *opts, char *buf, size_t len)
{
    buf[0] = '\0';
    if (opts[0] != '\0')
        DQ_TSET(t, buf, len, "front.opts", "opts=%s", opts);
}

void dq_cell_idle(dq_texts *t, const dq_facts *f, const dq_fact *x,
                  char *buf, size_t len)
{
    char id[80], o[128], cmds[32], cpu[32];
    if (unmeasured(t, x->idle, buf, len))
        return;
    dq_exp_anchor(f->idle, id, sizeof id);
    if (!(x->s->flags & DQ_G_NEEDS_REDIS)) {
        DQ_TSET(t, buf, len, "front.idle_cell_local", "id=%s", id);
        return;
    }
    opts_note(t, x->idle_opts, o, sizeof o);
    snprintf(cmds, sizeof cmds, "%.*f", x->idle_cmds_s < 10 ? 1 : 0,
             x->idle_cmds_s);
    dq_fmt_double(cpu, sizeof cpu, x->idle_cpu_ms_s, 1);
    DQ_TSET(t, buf, len, "front.idle_cell", "cmds=%s cpu=%s id=%s "
            "consumers=%d opts=%s", cmds, cpu, id, x->idle_consumers, o);
}

void dq_cell_lat(dq_texts *t, const dq_facts *f, const dq_fact *x,
                 char *buf, size_t len)
{
    char id[80], o[128], p99[32];
    if (unmeasured(t, x->lat, buf, len))
        return;
    dq_exp_anchor(f->lat, id, sizeof id);
    opts_note(t, x->lat_opts, o, sizeof o);
    dq_fmt_ms(p99, sizeof p99, x->p99_ms);
    if (x->lat_censored)
        DQ_TSET(t, buf, len, "front.lat_cell_censored", "id=%s tasks=%"
                PRIu64 " trials=%zu s=%s opts=%s", id, x->lat_tasks,
                x->lat_trials, dq_s(x->lat_trials), o);
    else
        DQ_TSET(t, buf, len, "front.lat_cell", "p99=%s id=%s tasks=%" PRIu64
                " trials=%zu s=%s opts=%s", p99, id, x->lat_tasks,
                x->lat_trials, dq_s(x->lat_trials), o);
}

void dq_cell_cmds(dq_texts *t, const dq_facts *f, const dq_fact *x,
                  char *buf, size_t len)
{
    char id[80], cmds[32], rt[32];
    if (unmeasured(t, x->cmds, buf, len))
        return;
    dq_exp_anchor(f->conc, id, sizeof id);
    if (x->cmds_per_task < 0) {
        DQ_TSET(t, buf, len, "front.cmds_cell_local", "id=%s", id);
        return;
    }
    dq_fmt_double(cmds, sizeof cmds, x->cmds_per_task, 1);
    dq_fmt_double(rt, sizeof rt, x->rt_per_task, 1);
    DQ_TSET(t, buf, len, "front.cmds_cell", "cmds=%s id=%s rt=%s "
            "consumers=%d cs=%s", cmds, id, rt, x->cmds_consumers,
            dq_s((uint64_t)x->cmds_consumers));
}

void dq_cell_version(dq_texts *t, const dq_facts *f, const dq_fact *x,
                     char *buf, size_t len)
{
    char v[64], ran[64];
    if (!(x->s->flags & DQ_G_NEEDS_REDIS)) {
        DQ_TSET(t, buf, len, "front.no_redis", "");
        return;
    }
    if (x->s->min_redis != NULL)
        snprintf(v, sizeof v, "%s", x->s->min_redis);
    else
        DQ_TSET(t, v, sizeof v, "front.version_any", "");
    if (f->redis_version[0] != '\0')
        snprintf(ran, sizeof ran, "%s", f->redis_version);
    else
        DQ_TSET(t, ran, sizeof ran, "front.version_unknown", "");
    DQ_TSET(t, buf, len, "front.version_cell", "version=%s ran=%s", v, ran);
}

/* ---- The parts ---------------------------------------------------------- */

void dq_section_contents(dq_md *o, const dq_results *r)
{
    char list[4096] = "", id[80];
    for (size_t i = 0; i < r->nexps; i++) {
        const dq_rexp *e = &r->exps[i];
        const char *title = dq_rexp_meta(e, "title");
        dq_exp_anchor(e, id, sizeof id);
        DQ_TBUF(o, list, "front.contents_item", "%stitle=%s id=%s",
                i ? " · " : "", title[0] ? title : e->name, id);
    }
    dq_box_open(o, "contents");
    DQ_TEXT(o, "front.contents", "experiments=%s\n\n", list);
    dq_box_close(o);
}

/* The matrix: one row per strategy that ran. */
static void matrix(dq_md *o, const dq_facts *f)
{
    static dq_cell_fn *const fns[] = {
        dq_cell_seen, dq_cell_kill, dq_cell_crash, dq_cell_dup,
        dq_cell_idle, dq_cell_lat, dq_cell_cmds, dq_cell_version,
    };
    enum { NF = sizeof fns / sizeof fns[0] };
    char head[1024] = "", c[NF + 1][512];
    const char *cells[NF + 1];
    DQ_TBUF(o, head, "front.matrix_head", "");
    dq_table_id(o, "summary-matrix");
    dq_head(o, head);
    for (size_t i = 0; i < f->n; i++) {
        dq_cell_name(o->texts, &f->f[i], c[0], sizeof c[0]);
        for (size_t k = 0; k < NF; k++)
            fns[k](o->texts, f, &f->f[i], c[k + 1], sizeof c[k + 1]);
        for (size_t k = 0; k <= NF; k++)
            cells[k] = c[k];
        dq_mdcells(o, false, cells, NF + 1);
    }
    dq_table_end(o);
}

/* The glossary ("**naive**: what it is; **lua**: ...", each strategy's
 * summary up to its first ':' or ';' after 30 characters: how it works,
 * while what follows is the guarantee, which the matrix shows measured),
 * the matrix, and the note under it: the strategies that did not run,
 * and what a crash here was. */
void dq_section_summary(dq_md *o, const dq_facts *f)
{
    /* list: up to every Redis strategy in two AOF modes, each with its
     * interval (about 40 bytes an item), then the trial and sample notes */
    char gl[8192] = "", absent[1024] = "", list[4096] = "", host[5120] = "";
    size_t off = 0;
    for (size_t i = 0; i < f->n; i++) {
        const char *sum = f->f[i].s->summary ? f->f[i].s->summary : "";
        size_t n = 0;
        while (sum[n] && (n < 30 || !strchr(":;", sum[n])))
            n++;
        DQ_TBUF(o, gl, "front.glossary_item", "%sname=%s what=%.*s",
                i ? "; " : "", f->f[i].s->name, (int)(n < 511 ? n : 511),
                sum);
    }
    dq_anchor(o, "summary");
    DQ_TEXT(o, "front.summary", "glossary=%s\n\n", gl);
    matrix(o, f);
    for (size_t k = 0; dq_strategies[k] != NULL; k++)
        if (dq_facts_find(f, dq_strategies[k]->name) == NULL)
            dq_append(list, sizeof list, &off, "%s%s", off ? ", " : "",
                      dq_strategies[k]->name);
    if (off > 0)
        DQ_TBUF(o, absent, "front.matrix_absent", "list=%s", list);
    if (dq_host_list(o->texts, f, "/", list, sizeof list) > 0)
        DQ_TBUF(o, host, "front.host_some", "list=%s", list);
    else
        DQ_TBUF(o, host, "front.host_none", "");
    DQ_TEXT(o, "front.matrix_note", "absent=%s host=%s\n\n", absent, host);
}
