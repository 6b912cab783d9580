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

#include "../strategies/dq.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static bool no_redis(const dq_rgroup *g)
{
    const dq_strategy *st = dq_strategy_find(g->strategy);
    return st != NULL && !(st->flags & DQ_G_NEEDS_REDIS);
}

static int idle_figure(dq_md *o, const dq_rexp *e, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    FILE *f = dq_mem_open(&buf, &len, err, errlen);
    if (f == NULL)
        return -1;
    fputs("strategy,redis_commands_per_s,server_cpu_ms_per_s\n", f);
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        char l[128];
        dq_series_label(e, g, l, sizeof l);
        fprintf(f, "%s,%.2f,%.3f\n", l,
                g->cmds_per_s_median < 0 ? 0 : g->cmds_per_s_median,
                g->cpu_ms_per_s_median < 0 ? 0 : g->cpu_ms_per_s_median);
    }
    fclose(f);
    int rc = e->ngroups ? dq_sec_figure(o, e, "idle-cost", NULL, buf, len,
                                        err, errlen) : 0;
    free(buf);
    return rc;
}

static void idle_table(dq_md *o, const dq_rexp *e)
{
    dq_head(o, "strategy|waits by|consumers|window s|Redis cmds/s|cmds/s "
               "per consumer|server CPU ms/s|client round trips/s, incl. "
               "connection setup");
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        double win = 0;
        char l[64], waits[64], c[4][64];
        long pm = dq_group_poll_ms(g);
        for (size_t j = 0; j < e->ntrials; j++)
            if (dq_trial_in_group(&e->trials[j], g))
                win = e->trials[j].measured_s;
        dq_series_label(e, g, l, sizeof l);
        if (pm > 0)
            snprintf(waits, sizeof waits, "polling, %ld ms", pm);
        else
            snprintf(waits, sizeof waits, "%s", no_redis(g)
                     ? "no Redis (server baseline)" : "blocking");
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
    dq_put(o, "Window s is the time between the two server snapshots: "
                 "the idle phase (%.1f s) plus the time the consumers took "
                 "to come back from the claim they were in when it ended -- "
                 "up to the claim timeout (%.1f s) for a claim that waits -- "
                 "so it lies between about %.1f and %.1f s; every rate in "
                 "the table is per second of this window.  Redis cmds/s "
                 "counts every command the server ran in the window (INFO "
                 "commandstats delta, without our own INFO calls); server "
                 "CPU is the INFO cpu used_cpu_sys + used_cpu_user delta of "
                 "the whole redis-server process, so it includes the "
                 "server's own housekeeping (serverCron, hz 10) and "
                 "anything else the process did.  Client round trips are "
                 "counted by the strategies' handles over the whole trial, "
                 "including the connection setup (connect, AUTH, SELECT, "
                 "SUBSCRIBE, CONFIG, script loading) done before the window "
                 "opened, then divided by the window: they are not a rate "
                 "within the window, and %s.\n\n", idle_s, ct_s, idle_s,
                 idle_s + ct_s, nrt > 0
                     ? "that setup is why they exceed the server's commands "
                       "in some rows"
                     : "a script call is one round trip but several "
                       "commands");
}

/* The most and fewest commands, and polling against blocking. */
static void said_extremes(dq_md *o, const dq_rexp *e)
{
    const dq_rgroup *hi = NULL, *lo = NULL;
    double pc = 0, bc = 0;
    size_t np = 0, nb = 0;
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *g = &e->groups[i];
        if (no_redis(g) || g->cmds_per_s_median < 0)
            continue;
        if (hi == NULL || g->cmds_per_s_median > hi->cmds_per_s_median)
            hi = g;
        if (lo == NULL || g->cmds_per_s_median < lo->cmds_per_s_median)
            lo = g;
        if (dq_strategy_find(g->strategy) == NULL)
            continue;
        if (dq_group_poll_ms(g) > 0) {
            if (dq_group_poll_ms(g) == 100)
                pc += g->cmds_per_s_median / g->consumers, np++;
        } else {
            bc += g->cmds_per_s_median / g->consumers, nb++;
        }
    }
    if (hi != NULL && lo != NULL) {
        char lh[128], ll[128];
        dq_series_label(e, hi, lh, sizeof lh);
        dq_series_label(e, lo, ll, sizeof ll);
        dq_put(o, "With nothing to do, %s caused the most Redis "
                     "commands: %.0f commands/s (%.1f ms of server CPU per "
                     "second); %s the fewest: %.1f commands/s (%.1f ms/s). ",
                     lh, hi->cmds_per_s_median, hi->cpu_ms_per_s_median, ll,
                     lo->cmds_per_s_median, lo->cpu_ms_per_s_median);
    }
    if (np > 0 && nb > 0)
        dq_put(o, "Per consumer, the polling strategies at poll_ms = "
                     "100 caused %.1f Redis commands/s on average, the "
                     "blocking ones %.1f. ", pc / (double)np,
                     bc / (double)nb);
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
        dq_put(o, "%s: poll_ms %ld -> %.0f commands/s, %.1f ms CPU/s; "
                     "poll_ms %ld -> %.1f commands/s, %.1f ms CPU/s",
                     names[s], dq_group_poll_ms(a), a->cmds_per_s_median,
                     a->cpu_ms_per_s_median, dq_group_poll_ms(b),
                     b->cmds_per_s_median, b->cpu_ms_per_s_median);
        /* the CPU is the whole server process over a few seconds: say so
         * when it moves against the commands */
        if (b->cmds_per_s_median < a->cmds_per_s_median &&
            b->cpu_ms_per_s_median > a->cpu_ms_per_s_median)
            dq_put(o, " -- fewer commands but more server CPU at the "
                         "longer interval: that CPU figure does not follow "
                         "from the commands (it is the whole redis-server "
                         "process, so housekeeping and other load on the "
                         "machine show up in it); read the command counts");
        dq_put(o, ". ");
    }
}

int dq_sec_idle_cost(dq_md *o, const dq_results *r, const dq_rexp *e,
                     char *err, size_t errlen)
{
    double base_cpu = -1;
    (void)r;
    if (idle_figure(o, e, err, errlen) != 0)
        return -1;
    idle_table(o, e);
    idle_note(o, e);
    dq_put(o, "**What happened.** ");
    said_extremes(o, e);
    said_intervals(o, e);
    for (size_t i = 0; i < e->ngroups; i++)
        if (no_redis(&e->groups[i]))
            base_cpu = e->groups[i].cpu_ms_per_s_median;
    if (base_cpu >= 0)
        dq_put(o, "The server with no client at all (the heap row) "
                     "used %.1f ms of CPU per second: the floor under every "
                     "row.", base_cpu);
    dq_put(o, "\n\n");
    return 0;
}
