/* sec_cards.c -- one card per strategy that ran (text/cards.md): how it
 * works (its dq_strategy.summary, the line `dqlab list` prints), Redis
 * commands per task, the guarantee it declares and the one this run
 * showed, where this run saw it break, and its witness chart.
 *
 * The charts are those of `dqlab witness` (harness/witness.h) under
 * RESULTS/witness/latest, copied into figures/witness-<name>.svg and .png
 * so that the report holds every image it shows; the caption is written
 * from that run's witness.csv, so it names the task id and times of the
 * trial the chart shows.  Without a witness run, each card that would have
 * a chart says how to draw it.  The witnesses and the strategy each
 * shows are the table below (the names `dqlab witness --only` takes).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "front.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

typedef void (*caption_fn)(dq_texts *t, const dq_witnesses *w,
                           const char *name, const char *task, char *buf,
                           size_t len);

#define WV(q) dq_witness_value(w, name, q, -1)

static void cap_naive(dq_texts *t, const dq_witnesses *w, const char *name,
                      const char *task, char *buf, size_t len)
{
    const dq_witness_row *x = dq_witness_find(w, name, NULL);
    int64_t d = WV("duplicates");
    DQ_TSET(t, buf, len, "cards.naive_duplicate", "task=%s "
            "attempts=%" PRId64 " window=%" PRId64 " dups=%" PRId64 " s=%s",
            task, x ? x->attempts : 0,
            WV("second_find_before_first_remove_us"), d,
            dq_s((uint64_t)d));
}

static void cap_lease(dq_texts *t, const dq_witnesses *w, const char *name,
                      const char *task, char *buf, size_t len)
{
    DQ_TSET(t, buf, len, "cards.lease_redelivery", "task=%s "
            "first=%" PRId64 " kill=%.1f lease=%" PRId64 " reclaim=%.1f "
            "attempt=%" PRId64, task, WV("first_attempt"),
            (double)WV("kill_after_claim_us") / 1000.0, WV("lease_ms"),
            (double)WV("reclaim_after_claim_us") / 1000.0,
            WV("reclaim_attempt"));
}

static void cap_expiry(dq_texts *t, const dq_witnesses *w, const char *name,
                       const char *task, char *buf, size_t len)
{
    int64_t subs = WV("channel_subscribers_at_event");
    DQ_TSET(t, buf, len, "cards.expiry_loss", "task=%s "
            "subs=%" PRId64 " s=%s after=%.1f left=%" PRId64, task, subs,
            dq_s((uint64_t)subs),
            (double)WV("subscribed_after_event_us") / 1000.0,
            WV("payload_left"));
}

static void cap_late(dq_texts *t, const dq_witnesses *w, const char *name,
                     const char *task, char *buf, size_t len)
{
    DQ_TSET(t, buf, len, "cards.lua_late_head", "task=%s "
            "sleep=%.1f head=%" PRId64 " poll=%" PRId64 " new=%" PRId64
            " late=%.1f bound=%.1f", task, (double)WV("sleep_us") / 1000.0,
            WV("head_delay_ms"), WV("poll_ms"), WV("new_delay_ms"),
            (double)WV("new_lateness_us") / 1000.0,
            (double)WV("bound_us") / 1000.0);
}

/* What each witness shows, in a few words: the uses of cards.about_*,
 * in the order of witnesses[] below. */
static const dq_tuse about[] DQ_TUSES = {
    {"cards.about_naive_duplicate", ""},
    {"cards.about_lease_redelivery", ""},
    {"cards.about_expiry_loss", ""},
    {"cards.about_lua_late_head", ""},
};

/* The witnesses of `dqlab witness` and their captions; the card that
 * shows one is the strategy's that declares it (dq_strategy.witness). */
static const struct witness {
    const char *name;
    caption_fn caption;
} witnesses[] = {
    {"naive-duplicate", cap_naive},
    {"lease-redelivery", cap_lease},
    {"expiry-loss", cap_expiry},
    {"lua-late-head", cap_late},
};
#define NWITNESSES (sizeof witnesses / sizeof witnesses[0])

/* The chart of witness k on strategy's card: copied and shown with its
 * caption, or how to draw it.  0 or -1 with err. */
static int chart(dq_md *o, const dq_results *r, size_t k, char *err,
                 size_t errlen)
{
    const dq_witnesses *w = &r->witness;
    const struct witness *x = &witnesses[k];
    char src[PATH_MAX], stem[96], png[256] = "", cap[1024] = "", what[256];
    int got = 0;
    dq_tset(o->texts, what, sizeof what, &about[k], "");
    snprintf(stem, sizeof stem, "witness-%s", x->name);
    snprintf(src, sizeof src, "%s/%s", w->dir, x->name);
    if (w->present && dq_witness_seen(w, x->name) &&
        (got = dq_copy_figure(o, src, stem, err, errlen)) < 0)
        return -1;
    if (got == 0) {
        DQ_TEXT(o, "cards.chart_missing", "witness=%s root=%s what=%s\n\n",
                x->name, r->root, what);
        return 0;
    }
    const dq_witness_row *row = dq_witness_find(w, x->name, NULL);
    x->caption(o->texts, w, x->name, row ? row->task_id : "?", cap,
               sizeof cap);
    if (got & 2)
        DQ_TBUF(o, png, "cards.chart_png", "stem=%s", stem);
    DQ_TEXT(o, "cards.chart", "title=%s stem=%s png=%s what=%s\n\n",
            x->name, stem, png, cap);
    return 0;
}

/* Appends to buf " (a=1)": the options of row (label "<name> <o1;o2;..>",
 * the name n bytes) that some other row of the same name lacks; nothing
 * for a row without options. */
static void own_options(const dq_loss_table *lt, size_t row, size_t n,
                        char *buf, size_t len)
{
    char opts[64], *save = NULL, out[64] = "";
    size_t off = 0;
    if (strlen(lt->rows[row]) <= n + 1)
        return;
    snprintf(opts, sizeof opts, "%s", lt->rows[row] + n + 1);
    for (char *o = strtok_r(opts, ";", &save); o != NULL;
         o = strtok_r(NULL, ";", &save)) {
        bool everywhere = true;
        for (size_t r = 0; r < lt->nrows && everywhere; r++)
            if (strncmp(lt->rows[r], lt->rows[row], n) == 0 &&
                (lt->rows[r][n] == ' ' || lt->rows[r][n] == '\0'))
                everywhere = strstr(lt->rows[r] + n, o) != NULL;
        if (!everywhere)
            dq_append(out, sizeof out, &off, "%s%s", off ? ";" : "", o);
    }
    if (out[0])
        dq_append(buf, len, &(size_t){strlen(buf)}, " (%s)", out);
}

/* Beside a kill fault's phrase (the kills its spec asks for), the kills
 * that happened in cell y's trials (trials.csv kills): a kill point a
 * consumer never reached leaves fewer than the spec asked. */
static void kills_seen(dq_texts *t, const char *spec, const dq_loss_cell *y,
                       char *ph, size_t len)
{
    char asked[320];
    if (strncmp(spec, "kill-consumer", 13) != 0)
        return;
    snprintf(asked, sizeof asked, "%s", ph);
    DQ_TSET(t, ph, len, "cards.break_kills", "fault=%s k=%" PRIu64 " ks=%s "
            "trials=%zu ts=%s", asked, y->kills, dq_s(y->kills), y->trials,
            dq_s(y->trials));
}

/* Appends to buf (at *off) where e's faults made x lose or repeat tasks,
 * one item a loss-table cell (a row's options named where e ran x with
 * several: "failover (wait=1)") with its trials and the interval of its
 * count; adds x's fault trials there to *trials and lowers *few to the
 * fewest trials of an item. */
static void exp_breaks(dq_texts *t, const dq_rexp *e, const dq_fact *x,
                       char *buf, size_t len, size_t *off, size_t *trials,
                       size_t *few)
{
    const dq_loss_table *lt = e->loss;
    size_t n = strlen(x->s->name);
    char id[80], ph[320], dups[64], lo[16], hi[16];
    dq_exp_anchor(e, id, sizeof id);
    for (size_t c = 0; c < lt->nfaults; c++)
        for (size_t row = 0; dq_facts_counts(lt->faults[c]) &&
                             row < lt->nrows; row++) {
            const dq_loss_cell *y = dq_loss_cell_at(lt, row, c);
            if (y == NULL || strcmp(y->strategy, x->s->name) != 0)
                continue;
            *trials += strcmp(lt->faults[c], "none") != 0 ? y->trials : 0;
            if (y->lost == 0 && y->duplicated == 0)
                continue;
            dq_fault_phrase(t, lt->faults[c], ph, sizeof ph);
            own_options(lt, row, n, ph, sizeof ph);
            kills_seen(t, lt->faults[c], y, ph, sizeof ph);
            dups[0] = '\0';
            *few = y->trials < *few ? y->trials : *few;
            if (y->lost > 0 && y->duplicated > 0)
                DQ_TSET(t, dups, sizeof dups, "cards.break_fault_dups",
                        "n=%" PRIu64, y->duplicated);
            dq_facts_wilson(y->lost > 0 ? y->lost : y->duplicated,
                            y->enqueued, lo, hi);
            if (y->lost > 0)
                DQ_TCAT(t, buf, len, off, "cards.break_fault", "%sfault=%s "
                        "n=%" PRIu64 " of=%" PRIu64 " id=%s trials=%zu s=%s "
                        "lo=%s hi=%s dups=%s", *off ? "; " : "", ph, y->lost,
                        y->enqueued, id, y->trials, dq_s(y->trials), lo, hi,
                        dups);
            else
                DQ_TCAT(t, buf, len, off, "cards.break_dups_only", "%sfault=%s"
                        " n=%" PRIu64 " of=%" PRIu64 " id=%s trials=%zu s=%s "
                        "lo=%s hi=%s", *off ? "; " : "", ph, y->duplicated,
                        y->enqueued, id, y->trials, dq_s(y->trials), lo, hi);
        }
}

/* Where x broke in this run: duplicates, the cells of every fault
 * experiment's loss table with a loss or a duplicate, a large backlog not
 * delivered in its window. */
static void breaks(dq_texts *t, const dq_results *r, const dq_facts *f,
                   const dq_fact *x, char *buf, size_t len)
{
    char d[512], id[80];
    size_t off = 0, trials = 0, few = SIZE_MAX;
    buf[0] = '\0';
    if (x->dup.n > 0) {
        dq_cell_dup(t, f, x, d, sizeof d);
        DQ_TCAT(t, buf, len, &off, "cards.break_dup", "dup=%s", d);
    }
    for (size_t i = 0; i < r->nexps; i++)
        if (dq_loss_is(&r->exps[i]) && r->exps[i].loss != NULL)
            exp_breaks(t, &r->exps[i], x, buf, len, &off, &trials, &few);
    if (few != SIZE_MAX)
        dq_sample_tail(t, few, buf, len, &off);
    dq_exp_anchor(f->backlog, id, sizeof id);
    if (x->backlog && x->backlog_delivered < x->backlog_tasks)
        DQ_TCAT(t, buf, len, &off, "cards.break_backlog", "%sbacklog=%"
                PRId64 " n=%" PRIu64 " of=%" PRIu64 " id=%s window=%.0f",
                off ? "; " : "", x->backlog_n, x->backlog_delivered,
                x->backlog_tasks, id, x->backlog_window_s * 1000.0);
    if (off == 0 && trials > 0)
        DQ_TCAT(t, buf, len, &off, "cards.breaks_none", "trials=%zu s=%s",
                trials, dq_s(trials));
    else if (off == 0)
        DQ_TCAT(t, buf, len, &off, "cards.breaks_unmeasured", "");
}

/* The card of x: how it works, its cost, the guarantee its killed
 * consumers showed (or the one it declares when none was killed), where
 * it broke, and its witness charts. */
static int card(dq_md *o, const dq_results *r, const dq_facts *f,
                const dq_fact *x, char *err, size_t errlen)
{
    char cmds[512], g[1024], a[512], b[512], br[4096], id[96];
    dq_texts *t = o->texts;
    dq_cell_cmds(t, f, x, cmds, sizeof cmds);
    if (x->seen == DQ_SEEN_NONE) {
        dq_cell_declared(t, x, a, sizeof a);
        DQ_TSET(t, g, sizeof g, "cards.guarantee_none", "declared=%s", a);
    } else {
        dq_cell_seen(t, f, x, a, sizeof a);
        dq_cell_kill(t, f, x, b, sizeof b);
        DQ_TSET(t, g, sizeof g, "cards.guarantee", "seen=%s kill=%s", a, b);
    }
    breaks(t, r, f, x, br, sizeof br);
    snprintf(id, sizeof id, "card-%s", x->s->name);
    dq_anchor(o, id);
    DQ_TEXT(o, "cards.card", "name=%s how=%s cmds=%s guarantee=%s "
            "breaks=%s\n\n", x->s->name, x->s->summary ? x->s->summary : "",
            cmds, g, br);
    for (size_t k = 0; k < NWITNESSES; k++)
        if (x->s->witness != NULL &&
            strcmp(witnesses[k].name, x->s->witness) == 0 &&
            chart(o, r, k, err, errlen) != 0)
            return -1;
    return 0;
}

int dq_section_cards(dq_md *o, const dq_results *r, const dq_facts *f,
                     char *err, size_t errlen)
{
    char wit[1024] = "";
    const char *stamp = strrchr(r->witness.dir, '/');
    if (r->witness.present)
        DQ_TBUF(o, wit, "cards.witness_present", "when=%s",
                stamp ? stamp + 1 : r->witness.dir);
    else
        DQ_TBUF(o, wit, "cards.witness_absent", "root=%s", r->root);
    dq_anchor(o, "cards");
    DQ_TEXT(o, "cards.head", "witness=%s\n\n", wit);
    for (size_t i = 0; i < f->n; i++)
        if (card(o, r, f, &f->f[i], err, errlen) != 0)
            return -1;
    return 0;
}
