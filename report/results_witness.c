/* results_witness.c -- the witness charts of the results model
 * (results.h): RESULTS/witness/latest, written by `dqlab witness`
 * (harness/witness.h: short scripted trials that make one failure happen,
 * captured with Redis MONITOR and drawn by mscgen).
 *
 * Only witness.csv is read (one row per measured quantity); the charts
 * themselves (<name>.svg, .png) are copied by the section that shows
 * them.  A results directory without a witness run is not an error.
 */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

#define WC(name, T) {#name, DQ_COLT_##T, offsetof(dq_witness_row, name), NULL}
static const dq_colspec witness_cols[] = {
    WC(witness, STR), WC(strategy, STR), WC(task_id, STR),
    WC(attempts, I64), WC(quantity, STR), WC(value, I64),
};

int dq_witness_load(const char *root, dq_witnesses *w, char *err,
                    size_t errlen)
{
    char path[PATH_MAX + 64], real[PATH_MAX];
    memset(w, 0, sizeof *w);
    snprintf(path, sizeof path, "%s/witness/latest", root);
    if (realpath(path, real) == NULL)
        return 0;
    snprintf(w->dir, sizeof w->dir, "%s", real);
    snprintf(path, sizeof path, "%s/witness.csv", w->dir);
    int rc = dq_csv_load(path, witness_cols,
                         sizeof witness_cols / sizeof witness_cols[0],
                         sizeof(dq_witness_row), true, NULL, &w->csv, err,
                         errlen);
    if (rc <= 0)
        return rc;
    w->present = true;
    w->rows = w->csv.rows;
    w->n = w->csv.n;
    return 0;
}

const dq_witness_row *dq_witness_find(const dq_witnesses *w,
                                      const char *name, const char *quantity)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->rows[i].witness, name) == 0 &&
            (quantity == NULL || strcmp(w->rows[i].quantity, quantity) == 0))
            return &w->rows[i];
    return NULL;
}

bool dq_witness_seen(const dq_witnesses *w, const char *name)
{
    const dq_witness_row *x = dq_witness_find(w, name, "witnessed");
    return x != NULL && x->value == 1;
}

int64_t dq_witness_value(const dq_witnesses *w, const char *name,
                         const char *quantity, int64_t absent)
{
    const dq_witness_row *x = dq_witness_find(w, name, quantity);
    return x != NULL ? x->value : absent;
}
