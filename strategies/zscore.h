/* zscore.h -- scores in whole seconds, as the tutorials' time() writes
 * them: the resolution_ms option of the ZSet + hash strategies that
 * tutorials show (naive, naive-checked, lua).
 *
 * Tutorials compute the score with a clock that counts whole seconds
 * (`time()` in PHP and C, `int(time.time())` in Python, Go's Unix()):
 *   ZADD delay_queue <time() + delay_s> task
 * so a task due at d ms is stored at floor(d / 1000) * 1000 ms -- up to
 * 999 ms before its due time -- and is handed out as soon as that score
 * is due.  With resolution_ms=1000 these strategies write exactly that
 * score (floor, as time() truncates; never ceil, which would make tasks
 * late instead); the consumer's "now" stays in ms, which decides the same
 * thing (a score that is a multiple of 1000 is <= now_ms exactly when it
 * is <= floor(now_ms / 1000) * 1000).  The event log keeps the true due
 * time (the producer's E record), so the checker counts such deliveries
 * as early against it: claim C25's "early by up to a second".  The
 * default, resolution_ms=1, stores the due time itself.
 *
 * Every write of a score goes through here: enqueue, enqueue_many,
 * reschedule.  A task handed out carries the stored score as its due_ms
 * (dq.h: "or the score it had when claimed"), and a graceful close gives
 * a batch back with that score.
 */
#ifndef DQ_ZSCORE_H
#define DQ_ZSCORE_H

#include <stdint.h>

#include "dq.h"

/* The option, declared in each strategy's table so that `dqlab list -v`
 * shows it there (one text for all of them). */
#define DQ_ZS_OPTDEF_RESOLUTION                                              \
    DQ_OPTDEF_CHOICE("resolution_ms", "1", "1|1000",                         \
                     "score resolution, ms: 1 stores the due time; 1000 "    \
                     "stores floor(due / 1 s), as the tutorials' time() "    \
                     "does, so tasks are delivered up to 999 ms early")

/* floor(due_ms / resolution_ms) * resolution_ms (resolution_ms >= 1), for
 * any due_ms dq.h allows (negative ones round down too). */
int64_t dq_zs_score_ms(int64_t due_ms, int64_t resolution_ms);

/* The handle's resolution_ms option as a number (1 or 1000); 1 when its
 * strategy does not declare the option. */
int64_t dq_zs_resolution(const dq_queue *q);

/* dq.h ops for strategies on the rconn.h ZSet + hash layout whose q->priv
 * starts with `redisContext *c` (DQ_ZH_PRIV_CHECK): dq_zh_op_enqueue,
 * dq_zh_op_enqueue_many and dq_zh_op_reschedule with each due time
 * rounded by dq_zs_score_ms to the handle's resolution_ms first.  Same
 * contracts and return codes; enqueue_many also DQ_ENOMEM (nothing sent)
 * when the rounded copy of items cannot be allocated. */
int dq_zs_op_enqueue(dq_queue *q, const char *id, const void *payload,
                     size_t payload_len, int64_t due_ms);
int dq_zs_op_enqueue_many(dq_queue *q, const dq_enqueue_item *items,
                          size_t n);
int dq_zs_op_reschedule(dq_queue *q, const char *id, int64_t due_ms);

#endif /* DQ_ZSCORE_H */
