/* zscore.c -- the resolution_ms option: scores rounded down to whole
 * seconds as the tutorials' time() stores them; see zscore.h. */
#include <stdlib.h>
#include <string.h>

#include "rconn.h"
#include "zscore.h"

int64_t dq_zs_score_ms(int64_t due_ms, int64_t resolution_ms)
{
    int64_t r = due_ms % resolution_ms;

    /* C's % truncates toward zero: step back once for a negative rest. */
    return due_ms - r - (r < 0 ? resolution_ms : 0);
}

int64_t dq_zs_resolution(const dq_queue *q)
{
    const char *v = dq_opt_get(q, "resolution_ms");

    /* "1" or "1000": checked against the choice at open. */
    return v != NULL && strcmp(v, "1000") == 0 ? 1000 : 1;
}

/* The command connection: the first member of q->priv (rconn.h). */
static redisContext *zs_conn(const dq_queue *q)
{
    return *(redisContext *const *)q->priv;
}

int dq_zs_op_enqueue(dq_queue *q, const char *id, const void *payload,
                     size_t payload_len, int64_t due_ms)
{
    return dq_zh_enqueue(q, zs_conn(q), id, payload, payload_len,
                         dq_zs_score_ms(due_ms, dq_zs_resolution(q)));
}

int dq_zs_op_enqueue_many(dq_queue *q, const dq_enqueue_item *items,
                          size_t n)
{
    int64_t res = dq_zs_resolution(q);
    dq_enqueue_item *rounded;
    int rc;

    if (res == 1)
        return dq_zh_enqueue_many(q, zs_conn(q), items, n, NULL, 0);
    rounded = malloc(n * sizeof *rounded);
    if (rounded == NULL)
        return dq_fail(q, DQ_ENOMEM, "enqueue_many: out of memory");
    memcpy(rounded, items, n * sizeof *rounded);
    for (size_t i = 0; i < n; i++)
        rounded[i].due_ms = dq_zs_score_ms(items[i].due_ms, res);
    rc = dq_zh_enqueue_many(q, zs_conn(q), rounded, n, NULL, 0);
    free(rounded);
    return rc;
}

int dq_zs_op_reschedule(dq_queue *q, const char *id, int64_t due_ms)
{
    return dq_zh_reschedule(q, zs_conn(q), id,
                            dq_zs_score_ms(due_ms, dq_zs_resolution(q)));
}
