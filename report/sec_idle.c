/* sec_idle.c -- the section of the idle experiment (plots = idle-cost):
 * Redis commands/s and server CPU ms/s per strategy while consumers wait
 * on an empty queue (trials.csv: redis_commands, redis_cpu_ms over
 * measured_s), polling against blocking and one poll interval against
 * another.  The CPU figure is the whole redis-server process's, so the
 * text says so wherever it moves against the commands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static bool no_redis(const dq_rgroup *g)
{
    return dq_group_waits(g) == DQ_WAITS_IN_PROCESS;
}

static int idle_figure(dq_md *o, const dq_rexp *e, const dq_section *s,
                       char *err, size_t errlen)
{
    char *buf;
    size_t len;
    if (e->ngroups == 0)
        return 0;
    FILE *f = dq_mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    fputs("strategy,redis_commands_per_s,server_cpu_ms_per_s,waits\n", f);
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        char l[128];
        dq_series_label(e, g, l, sizeof l);
        fprintf(f, "%s,%.2f,%.3f,%d\n", l,
                g->cmds_per_s_median < 0 ? 0 : g->cmds_per_s_median,
                g->cpu_ms_per_s_median < 0 ? 0 : g->cpu_ms_per_s_median,
                dq_group_waits(g));
    }
    fclose(f);
    return dq_sec_figure(o, e, s, NULL, buf, len,
                         DQ_TUSE("idle.cap", "\n\n"), err, errlen);
}

static void idle_table(dq_md *o, const dq_rexp *e)
{
    dq_head(o, "strategy|waits by|consumers|window s|Redis cmds/s|cmds/s "
               "per consumer|server CPU ms/s|client round trips/s, incl. "
               "connection setup");
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        double win = 0;
        char l[64], waits[64] = "", c[4][64];
        long pm = dq_group_poll_ms(g);
        for (size_t j = 0; j < e->ntrials; j++)
            if (dq_trial_in_group(&e->trials[j], g))
                win = e->trials[j].measured_s;
        dq_series_label(e, g, l, sizeof l);
        if (pm > 0)
            DQ_TBUF(o, waits, "idle.polling", "ms=%ld", pm);
        else
            DQ_TBUFP(o, waits, no_redis(g), "idle.no_redis", "idle.blocking",
                     "");
        dq_fmt_double(c[0], 64, g->cmds_per_s_median, 1);
        dq_fmt_double(c[1], 64, g->cmds_per_s_median < 0 ? -1
                      : g->cmds_per_s_median / g->consumers, 1);
        dq_fmt_double(c[2], 64, g->cpu_ms_per_s_median, 2);
        dq_fmt_double(c[3], 64, g->rt_per_s_median, 1);
        dq_row(o, "%s" DQ_CELL "%s" DQ_CELL "%d" DQ_CELL "%.1f"
                   DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%s" DQ_CELL "%s", l,
                   waits, g->consumers, win, c[0], c[1], c[2], c[3]);
    }
    dq_table_end(o);
}

/* The note under the table.  Rows where the client counted more round
 * trips than the server ran commands: the connection setup, outside the
 * window. */
static void idle_note(dq_md *o, const dq_rexp *e)
{
    size_t nrt = 0;
    for (size_t i = 0; i < e->ngroups; i++)
        nrt += e->groups[i].cmds_per_s_median >= 0 &&
               e->groups[i].rt_per_s_median > e->groups[i].cmds_per_s_median;
    double idle_s = strtod(dq_rexp_meta(e, "idle_ms"), NULL) / 1000.0;
    double ct_s = strtod(dq_rexp_meta(e, "claim_timeout_ms"), NULL) / 1000.0;
    char why[256] = "";
    DQ_TBUFP(o, why, nrt > 0, "idle.why_setup", "idle.why_script", "");
    DQ_TEXT(o, "idle.note", "idle=%.1f ct=%.1f lo=%.1f hi=%.1f why=%s\n\n",
            idle_s, ct_s, idle_s, idle_s + ct_s, why);
}

/* The most and fewest commands, and polling against blocking. */
static void said_extremes(dq_md *o, const dq_rexp *e)
{
    const dq_rgroup *hi = NULL, *lo = NULL;
    double per[2] = {0, 0};     /* cmds/s per consumer: polling, blocking */
    size_t n[2] = {0, 0};
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        if (no_redis(g) || g->cmds_per_s_median < 0)
            continue;
        if (hi == NULL || g->cmds_per_s_median > hi->cmds_per_s_median)
            hi = g;
        if (lo == NULL || g->cmds_per_s_median < lo->cmds_per_s_median)
            lo = g;
        long pm = dq_group_poll_ms(g);
        if (g->st == NULL || (pm > 0 && pm != 100))
            continue;   /* polling compared at a 100 ms interval */
        per[pm > 0 ? 0 : 1] += g->cmds_per_s_median / g->consumers;
        n[pm > 0 ? 0 : 1]++;
    }
    if (hi != NULL && lo != NULL) {
        char lh[128], ll[128];
        dq_series_label(e, hi, lh, sizeof lh);
        dq_series_label(e, lo, ll, sizeof ll);
        DQ_TEXT(o, "idle.extremes", "hi=%s hi_cmds=%.0f hi_cpu=%.1f lo=%s "
                "lo_cmds=%.1f lo_cpu=%.1f ", lh, hi->cmds_per_s_median,
                hi->cpu_ms_per_s_median, ll, lo->cmds_per_s_median,
                lo->cpu_ms_per_s_median);
    }
    if (n[0] > 0 && n[1] > 0)
        DQ_TEXT(o, "idle.per_consumer", "polling=%.1f blocking=%.1f ",
                per[0] / (double)n[0], per[1] / (double)n[1]);
}

/* The poll interval's effect within one strategy. */
static void said_intervals(dq_md *o, const dq_rexp *e)
{
    char names[16][32];
    size_t nn = dq_strategies_of(e, names, 16);
    for (size_t s = 0; s < nn; s++) {
        const dq_rgroup *a = NULL, *b = NULL;  /* shortest, longest poll */
        for (size_t i = 0; i < e->ngroups; i++) {
            const dq_rgroup *g = &e->groups[i];
            long pm = dq_group_poll_ms(g);
            if (strcmp(g->strategy, names[s]) != 0 || pm <= 0)
                continue;
            if (a == NULL || pm < dq_group_poll_ms(a))
                a = g;
            if (b == NULL || pm > dq_group_poll_ms(b))
                b = g;
        }
        if (a == NULL || a == b || a->cmds_per_s_median < 0 ||
            b->cmds_per_s_median < 0)
            continue;
        DQ_TEXT(o, "idle.interval", "strategy=%s pa=%ld ca=%.0f ua=%.1f "
                "pb=%ld cb=%.1f ub=%.1f", names[s], dq_group_poll_ms(a),
                a->cmds_per_s_median, a->cpu_ms_per_s_median,
                dq_group_poll_ms(b), b->cmds_per_s_median,
                b->cpu_ms_per_s_median);
        /* the CPU is the whole server process over a few seconds: say so
         * when it moves against the commands */
        if (b->cmds_per_s_median < a->cmds_per_s_median &&
            b->cpu_ms_per_s_median > a->cpu_ms_per_s_median)
            DQ_TEXT(o, "idle.cpu_against", "%s", " ");
        dq_put(o, ". ");
    }
}

int dq_sec_idle_cost(dq_md *o, const dq_results *r, const dq_rexp *e,
                     const dq_section *s, char *err, size_t errlen)
{
    double base_cpu = -1;
    (void)r;
    if (idle_figure(o, e, s, err, errlen) != 0)
        return -1;
    idle_table(o, e);
    idle_note(o, e);
    DQ_TEXT(o, "generic.what_happened", " ");
    said_extremes(o, e);
    said_intervals(o, e);
    for (size_t i = 0; i < e->ngroups; i++)
        if (no_redis(&e->groups[i]))
            base_cpu = e->groups[i].cpu_ms_per_s_median;
    if (base_cpu >= 0)
        DQ_TEXT(o, "idle.floor", "cpu=%.1f", base_cpu);
    dq_put(o, "\n\n");
    return 0;
}
