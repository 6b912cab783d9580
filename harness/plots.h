/* plots.h -- the plot kinds an experiment file may list in "plots = ", one
 * list for the loader and the report.
 *
 * experiment_load.c accepts exactly these names; report/sections.c builds
 * its table of sections from this list, one row per kind, so a kind
 * without a section does not compile (a section's SEC_ macro that no kind
 * names is simply unused: the table has no row for it).  The
 * list lives here, below both, because the harness must not reach up into
 * report/.  Adding a kind: one line here, its row in sections.c.
 *
 * DQ_PLOT_KINDS(X) calls X(ID, "name") once per kind, in the order the
 * loader's error message lists them, which is also the report's order of
 * precedence (the first section that fits an experiment writes it); enum
 * dq_plot numbers them.
 */
#ifndef DQ_PLOTS_H
#define DQ_PLOTS_H

#define DQ_PLOT_KINDS(X)                    \
    X(DUPLICATES, "duplicates")             \
    X(THROUGHPUT, "throughput")             \
    X(LATENESS, "lateness")                 \
    X(LATENESS_CDF, "lateness-cdf")         \
    X(IDLE_COST, "idle-cost")               \
    X(BACKLOG_LATENESS, "backlog-lateness") \
    X(LOSS, "loss")                         \
    X(WAKEUPS, "wakeups")                   \
    X(OUTCOMES, "outcomes")

#define DQ_PLOT_ENUM(id, name) DQ_PLOT_##id,
enum dq_plot { DQ_PLOT_KINDS(DQ_PLOT_ENUM) DQ_NPLOTS };
#undef DQ_PLOT_ENUM

#endif
