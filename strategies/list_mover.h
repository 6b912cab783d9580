/* list_mover.h -- the part shared by the two Redisson-style strategies,
 * `list` (list.c, at-most-once) and `list-reliable` (list_reliable.c,
 * at-least-once with leases): the key layout, open/enqueue/pending/purge/
 * exists/close, and the mover thread that turns due tasks in the delay ZSet
 * into items of the ready List.  See list_mover.c for the design.
 *
 * Keys of queue Q (one hash tag, one Cluster slot):
 *   dq:{Q}:z       ZSet   id -> due ms              (not yet due)
 *   dq:{Q}:p       Hash   id -> payload bytes
 *   dq:{Q}:ready   List   "<due_ms>:<id>", due      (moved, not claimed)
 *   dq:{Q}:wake    Pub/Sub channel: "<due_ms>" of a new earliest task
 * list-reliable only:
 *   dq:{Q}:proc:<consumer>  List of items a consumer holds
 *   dq:{Q}:leases  ZSet   item -> lease expiry ms
 *   dq:{Q}:a       Hash   id -> deliveries so far (attempt)
 *   dq:{Q}:procs   Set    key names of the processing lists (reaper)
 */
#ifndef DQ_LIST_MOVER_H
#define DQ_LIST_MOVER_H

#include <hiredis/hiredis.h>

#include "dq.h"
#include "rconn.h"

/* Longest key name we build: "dq:{" + 64-byte queue + "}:proc:" + a
 * consumer name of up to 160 bytes. */
#define LM_KEY_MAX 256

typedef struct lm_mover lm_mover;

/* State common to both strategies.  list.c uses it as q->priv directly;
 * list_reliable.c embeds it as the FIRST member of its own state so that
 * the lm_* functions below can take q->priv as an lm_base. */
typedef struct lm_base {
    redisContext *c;          /* the handle's connection (the rconn.h
                                 helpers reconnect it after an error) */
    const char *min_redis;    /* version checked at connect */
    lm_mover *mover;          /* started by the first claim, NULL before */
    int64_t poll_cap_ms;      /* option poll_cap_ms */
    int64_t move_batch;       /* option move_batch */
    int64_t lease_ms;         /* option lease_ms; 0: no reaper (list) */
    char kz[LM_KEY_MAX], kp[LM_KEY_MAX], kready[LM_KEY_MAX],
        kwake[LM_KEY_MAX];
    dq_script enqueue_s;      /* per-handle copies: sha filled on use */
    dq_script pending_s;
} lm_base;

/* Fills *b from q's options (poll_cap_ms, move_batch, and lease_ms when
 * with_lease) and connects.  min_redis: e.g. "6.0.0".  Returns DQ_OK, or a
 * DQ_E* code with q->err set and nothing left to free. */
int lm_base_open(dq_queue *q, lm_base *b, const char *min_redis,
                 bool with_lease);
/* Stops and joins the mover (if started), folds its counters into
 * q->counters and frees the connection.  Does not free b itself. */
void lm_base_close(dq_queue *q, lm_base *b);

/* Starts the mover thread unless it runs already (the first claim of a
 * handle calls it) and adds the mover's counters gathered since the last
 * call to q->counters.  Returns DQ_OK or DQ_ENOMEM/DQ_ESYS with q->err. */
int lm_mover_ensure(dq_queue *q, lm_base *b);

/* Parses a ready-list item "<due_ms>:<id>" (len bytes, not NUL-terminated)
 * into *due_ms and id (DQ_ID_MAX bytes).  Returns true on success. */
bool lm_parse_item(const char *s, size_t len, int64_t *due_ms,
                   char id[DQ_ID_MAX]);
/* Writes the item of (due_ms, id) into buf (buflen bytes); returns its
 * length, or -1 when it does not fit. */
int lm_format_item(char *buf, size_t buflen, int64_t due_ms, const char *id);

/* Sleeps until due_ms has come by q's clock (dq_now_us), but not past
 * deadline_us (dq_mono_us() time, e.g. from dq_deadline_us).  A task moved
 * by another process's mover whose clock runs ahead may reach us early;
 * this keeps the claim contract "never before its due time by this
 * handle's clock" without overrunning the claim timeout.  Returns true
 * when the due time came, false when the deadline came first. */
bool lm_wait_until_due(dq_queue *q, int64_t due_ms, int64_t deadline_us);

/* The claim step that differs between list and list-reliable, for
 * lm_claim.  take: item (itemlen bytes, "<due>:<id>") was popped (with
 * dst: moved into dst) and out->id/due_ms are set; fill out's payload
 * (and attempt/token).  Returns DQ_OK, DQ_ENOTFOUND when the task is gone
 * (purged: lm_claim goes on), or a DQ_E* code with q->err (lm_claim clears
 * out and returns it).  undo: the item was taken but is not due by this
 * handle's clock before the claim deadline; put it back at the head of
 * ready as it was (payload in out).  DQ_OK or a DQ_E* code. */
typedef struct lm_claim_ops {
    int (*take)(dq_queue *q, const char *item, size_t itemlen, dq_task *out);
    int (*undo)(dq_queue *q, const char *item, size_t itemlen,
                const dq_task *out);
} lm_claim_ops;

/* The claim loop of both strategies: starts the mover (lm_mover_ensure),
 * then until dq_deadline_us(timeout_ms): lm_pop_item(dst) (look once when
 * the time is up), ops->take, and lm_wait_until_due bounded by the
 * deadline.  When the deadline comes before the due time (a mover whose
 * clock runs ahead moved it early), ops->undo puts it back at the head of
 * ready (counted in q->counters.putbacks) and the claim returns DQ_EMPTY.
 * Returns DQ_OK with *out filled, DQ_EMPTY, or a DQ_E* code (out
 * cleared).  A failed undo returns its code: list loses the task
 * (at-most-once), list-reliable's stays in the processing list under its
 * lease and comes back through the reaper. */
int lm_claim(dq_queue *q, lm_base *b, const char *dst, int64_t timeout_ms,
             dq_task *out, const lm_claim_ops *ops);

/* One pop of a claim from the ready list, waiting until deadline_us (a
 * dq_mono_us() time) at most.  dst NULL (list): when less than
 * DQ_BLOCK_SHORTEST_MS is left (claim(0), or a short rest), LPOP ready
 * once and, when it found nothing, sleep until the deadline; otherwise
 * BLPOP ready through dq_redis_block, which returns about one round trip
 * after the deadline at the latest (rconn.h: Redis 7.0 alone may answer a
 * blocking timeout up to 1000/hz ms late) and may return nil up to
 * DQ_BLOCK_EARLY_MS before it.  dst a key (list-reliable's processing
 * list): LMOVE / BLMOVE ready dst LEFT RIGHT the same way.  Returns:
 *   DQ_OK     an item was popped and counted in q->counters.wakeups; *out
 *             is zeroed and then holds the item's id and due_ms; *reply is
 *             the reply (caller frees it with freeReplyObject) and
 *             *item and *itemlen point at the item bytes inside it;
 *   DQ_EMPTY  nothing came (counted in q->counters.empty_polls); *reply
 *             NULL;
 *   DQ_E*     the call's error, or DQ_EPROTO ("claim: unexpected BLPOP
 *             reply" / "... BLMOVE reply", "claim: malformed item in
 *             <ready>"); *reply NULL.  With dst, a malformed item stays
 *             in dst (the reaper gives it back). */
int lm_pop_item(dq_queue *q, lm_base *b, const char *dst, int64_t deadline_us,
                dq_task *out, redisReply **reply, const char **item,
                size_t *itemlen);

/* The ops both strategies share (same contracts as in dq.h). */
int lm_enqueue(dq_queue *q, const char *id, const void *payload,
               size_t payload_len, int64_t due_ms);
int64_t lm_pending(dq_queue *q);
int lm_purge(dq_queue *q);
int lm_exists(dq_queue *q);

#endif /* DQ_LIST_MOVER_H */
