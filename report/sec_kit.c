/* sec_kit.c -- what the section files share (sec_kit.h): a section's
 * figure, a series' label, how a group waits, an experiment's strategies.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../strategies/dq.h"
#include "sec_kit.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

int dq_sec_figure(dq_md *o, const dq_rexp *e, const dq_section *s,
                  const char *suffix, char *data, size_t len,
                  const dq_tuse *cap, char *err, size_t errlen)
{
    char stem[PATH_MAX];
    snprintf(stem, sizeof stem, "%s-%s%s", e->name, s->figure,
             suffix ? suffix : "");
    int rc = dq_figure(o, stem, s->script, data, len, true, err, errlen);
    free(data);
    if (rc == 0 && cap != NULL)
        dq_text(o, cap, "\n\n");
    return rc;
}

void dq_series_label(const dq_rexp *e, const dq_rgroup *g, char *buf,
                     size_t len)
{
    bool vp = false, vw = false, vo = false;
    size_t n;
    for (size_t i = 0; i < e->ngroups; i++) {
        const dq_rgroup *x = &e->groups[i];
        if (strcmp(x->strategy, g->strategy) != 0)
            continue;
        vp |= x->producers != g->producers;
        vw |= x->work_us != g->work_us;
        vo |= strcmp(x->options, g->options) != 0;
    }
    n = (size_t)snprintf(buf, len, "%s", g->strategy);
    if (vo && n < len)
        n += (size_t)snprintf(buf + n, len - n, " %s", g->options);
    if (vp && n < len)
        n += (size_t)snprintf(buf + n, len - n, " p=%d", g->producers);
    if (vw && n < len)
        snprintf(buf + n, len - n, " work=%" PRId64 "us", g->work_us);
    for (char *p = buf; *p; p++)   /* commas would break the CSV header */
        *p = *p == ',' || *p == '"' ? ';' : *p;
}

int dq_group_waits(const dq_rgroup *g)
{
    if (g->st != NULL && !(g->st->flags & DQ_G_NEEDS_REDIS))
        return DQ_WAITS_IN_PROCESS;
    return dq_group_poll_ms(g) > 0 ? DQ_WAITS_POLLING : DQ_WAITS_BLOCKING;
}

size_t dq_strategies_of(const dq_rexp *e, char names[][32], size_t max)
{
    size_t n = 0, j;
    for (size_t i = 0; i < e->ngroups; i++) {
        for (j = 0; j < n && strcmp(names[j], e->groups[i].strategy) != 0;)
            j++;
        if (j == n && n < max)
            snprintf(names[n++], 32, "%s", e->groups[i].strategy);
    }
    return n;
}
