/* list_mover.h -- the part shared by the two Redisson-style strategies,
 * `list` (list.c, at-most-once) and `list-reliable` (list_reliable.c,
 * at-least-once with leases): the key layout, the ready-list item format,
 * open/enqueue/pending/purge/exists/close, and the mover thread that turns
 * due tasks in the delay ZSet into items of the ready List -- one per queue
 * and process, shared by the process's handles through cfg.local.  See
 * list_mover.c for the design.
 *
 * Keys of queue Q (one hash tag, one Cluster slot):
 *   dq:{Q}:z       ZSet   id -> due ms              (not yet due)
 *   dq:{Q}:p       Hash   id -> payload bytes       (list: not yet due;
 *                                                    list-reliable: until
 *                                                    the ack)
 *   dq:{Q}:ready   List   items, due                (moved, not claimed)
 *   dq:{Q}:wake    Pub/Sub channel: due ms of a new earliest task
 * list-reliable only:
 *   dq:{Q}:proc:<consumer>  List of items a consumer holds
 *   dq:{Q}:leases  ZSet   item -> lease expiry ms
 *   dq:{Q}:procs   Set    key names of the processing lists (reaper)
 *
 * A ready item is "<due_ms>:<attempt>:<idlen>:<id><payload>": the due time,
 * the attempt, the id's length in bytes (all three in decimal), the id,
 * and then -- for list -- the payload bytes up to the end of the item
 * (none for list-reliable, whose payloads stay in dq:{Q}:p until the ack).
 * The id's length makes the format binary-safe: id and payload may hold
 * ':' or any other byte.  attempt is what dq_task.attempt reports: 0 for
 * list (deliveries are not counted), for list-reliable the number of the
 * delivery the item makes when taken: 1 when moved, one more each time the
 * reaper gives it back.
 */
#ifndef DQ_LIST_MOVER_H
#define DQ_LIST_MOVER_H

#include <hiredis/hiredis.h>

#include "dq.h"
#include "rconn.h"

/* Longest key name we build: "dq:{" + 64-byte queue + "}:proc:" + a
 * consumer name of up to 160 bytes. */
#define LM_KEY_MAX 256
/* Longest item without payload: a due time, an attempt and an id length,
 * each with its ':', and an id of at most DQ_ID_MAX - 1 bytes. */
#define LM_ITEM_HEAD_MAX (DQ_ID_MAX + 72)

typedef struct lm_mover lm_mover;

/* State common to both strategies.  list.c and list_reliable.c embed it as
 * the FIRST member of their own state so that the lm_* functions below can
 * take q->priv as an lm_base. */
typedef struct lm_base {
    redisContext *c;          /* the handle's connection (the rconn.h
                                 helpers reconnect it after an error) */
    const char *min_redis;    /* version checked at connect */
    lm_mover *mover;          /* this handle's reference on the mover of
                                 its queue: shared through cfg.local (one
                                 per process), private without one */
    bool claimer;             /* this handle has claimed: it keeps the
                                 mover thread running until it closes */
    bool payload_in_item;     /* list: the mover moves payloads into the
                                 ready items */
    int64_t poll_cap_ms;      /* option poll_cap_ms */
    int64_t move_batch;       /* option move_batch */
    int64_t lease_ms;         /* option lease_ms; 0: no reaper (list) */
    char kz[LM_KEY_MAX], kp[LM_KEY_MAX], kready[LM_KEY_MAX],
        kwake[LM_KEY_MAX];
    dq_script enqueue_s;      /* per-handle copies: sha filled on use */
    dq_script pending_s;
} lm_base;

/* Fills *b from q's options (poll_cap_ms, move_batch, and lease_ms when
 * reliable), connects, and takes a reference on the mover of the queue:
 * with q->cfg.local the one object every handle of the process with the
 * same strategy, queue, server, user, clock offset and mover options
 * shares (dq_local_get), else a mover of this handle alone.  The thread
 * itself starts at the handle's first claim (lm_mover_ensure).
 * reliable: list-reliable (lease_ms, a reaper, payloads stay in p);
 * otherwise list (payloads travel in the ready items).  min_redis: e.g.
 * "6.0.0".  Returns DQ_OK, or a DQ_E* code with q->err set and nothing
 * left to free. */
int lm_base_open(dq_queue *q, lm_base *b, const char *min_redis,
                 bool reliable);
/* Drops the handle's reference on the mover: when it was the last open
 * handle that claimed, stops and joins the thread (another handle's later
 * claim starts it again); the last reference frees it.  Folds the mover's
 * counters gathered since the last fold into q->counters and frees the
 * connection.  Does not free b itself. */
void lm_base_close(dq_queue *q, lm_base *b);

/* Makes the handle a claimer and starts the mover thread unless it runs
 * already (every claim calls it), and adds the mover's counters gathered
 * since the last fold by any handle to q->counters (so the sum over the
 * handles is the mover's total).  Returns DQ_OK or DQ_ENOMEM/DQ_ESYS with
 * q->err. */
int lm_mover_ensure(dq_queue *q, lm_base *b);

/* Parses a ready-list item (len bytes, not NUL-terminated, format above)
 * into *due_ms, *attempt (capped at 10^9), id (DQ_ID_MAX bytes,
 * NUL-terminated) and the payload: a pointer into s and its length (0 for
 * an item without payload).  Returns false when the item is malformed (a
 * field that is not a decimal number, a negative attempt, an id empty,
 * too long or holding a NUL, a length that does not fit). */
bool lm_parse_item(const char *s, size_t len, int64_t *due_ms, int *attempt,
                   char id[DQ_ID_MAX], const char **payload,
                   size_t *payload_len);
/* Writes the item of (due_ms, attempt, id) without payload --
 * list-reliable's items -- into buf (buflen bytes, LM_ITEM_HEAD_MAX is
 * enough); returns its length, or -1 when it does not fit. */
int lm_format_item(char *buf, size_t buflen, int64_t due_ms, int64_t attempt,
                   const char *id);

/* Sleeps until due_ms has come by q's clock (dq_now_us), but not past
 * deadline_us (dq_mono_us() time, e.g. from dq_deadline_us).  A task moved
 * by another process's mover whose clock runs ahead may reach us early;
 * this keeps the claim contract "never before its due time by this
 * handle's clock" without overrunning the claim timeout.  Returns true
 * when the due time came, false when the deadline came first. */
bool lm_wait_until_due(dq_queue *q, int64_t due_ms, int64_t deadline_us);

/* The claim steps that differ between list and list-reliable, for
 * lm_claim.  take: one attempt to take a ready task, waiting until
 * deadline_us (a dq_mono_us() time) at most, as lm_pop_item does; fills
 * *out (id, due_ms, payload, attempt/token) and points *item / *itemlen
 * at the item bytes inside *reply (the caller frees *reply).  Returns
 * DQ_OK, DQ_EMPTY (nothing came: *reply NULL), DQ_ENOTFOUND when the item
 * taken was no task any more (purged: lm_claim goes on; *reply NULL), or
 * a DQ_E* code with q->err (*reply NULL; lm_claim clears out and returns
 * it).  undo: the item was taken but is not due by this handle's clock
 * before the claim deadline; put it back at the head of ready as it was.
 * DQ_OK or a DQ_E* code. */
typedef struct lm_claim_ops {
    int (*take)(dq_queue *q, int64_t deadline_us, dq_task *out,
                redisReply **reply, const char **item, size_t *itemlen);
    int (*undo)(dq_queue *q, const char *item, size_t itemlen,
                const dq_task *out);
} lm_claim_ops;

/* The claim loop of both strategies: starts the mover (lm_mover_ensure),
 * then until dq_deadline_us(timeout_ms): ops->take (look once when the
 * time is up) and lm_wait_until_due bounded by the deadline.  When the
 * deadline comes before the due time (a mover whose clock runs ahead
 * moved it early), ops->undo puts it back at the head of ready (counted
 * in q->counters.putbacks) and the claim returns DQ_EMPTY.  Returns DQ_OK
 * with *out filled, DQ_EMPTY, or a DQ_E* code (out cleared).  A failed
 * undo returns its code: list loses the task (at-most-once),
 * list-reliable's stays in the processing list under its lease and comes
 * back through the reaper. */
int lm_claim(dq_queue *q, lm_base *b, int64_t timeout_ms, dq_task *out,
             const lm_claim_ops *ops);

/* One pop from the ready list, waiting until deadline_us (a dq_mono_us()
 * time) at most.  dst NULL (list): when less than DQ_BLOCK_SHORTEST_MS is
 * left (claim(0), or a short rest), LPOP ready once and, when it found
 * nothing, sleep until the deadline; otherwise BLPOP ready through
 * dq_redis_block, which returns about one round trip after the deadline at
 * the latest (rconn.h: Redis 7.0 alone may answer a blocking timeout up
 * to 1000/hz ms late) and may return nil up to DQ_BLOCK_EARLY_MS before
 * it.  dst a key (list-reliable's processing list): LMOVE / BLMOVE ready
 * dst LEFT RIGHT the same way.
 * Returns:
 *   DQ_OK     an item was popped and counted in q->counters.wakeups; *out
 *             is zeroed and then holds the item's id, due_ms and
 *             attempt, and when
 *             the payload travels in the item (list) a malloc'd copy of it
 *             (NUL-terminated, payload_len bytes without the NUL; freed by
 *             dq_task_clear); *reply is the reply (caller frees it with
 *             freeReplyObject) and *item and *itemlen point at the item
 *             bytes inside it;
 *   DQ_EMPTY  nothing came (counted in q->counters.empty_polls); *reply
 *             NULL;
 *   DQ_E*     the call's error, or DQ_EPROTO ("claim: unexpected BLPOP
 *             reply" / "... BLMOVE reply", "claim: malformed item in
 *             <ready>"), or DQ_ENOMEM copying the payload (the task is
 *             lost); *reply NULL.  With dst, a malformed item stays
 *             in dst (the reaper gives it back). */
int lm_pop_item(dq_queue *q, lm_base *b, const char *dst, int64_t deadline_us,
                dq_task *out, redisReply **reply, const char **item,
                size_t *itemlen);

/* The ops both strategies share (same contracts as in dq.h).
 * lm_enqueue_many: one EVAL per chunk of at most LM_ENQUEUE_CHUNK items
 * (atomic per chunk: after an error, the chunks before the failing one
 * are in the queue and the failing one is in or out as a whole). */
#define LM_ENQUEUE_CHUNK 1000
int lm_enqueue(dq_queue *q, const char *id, const void *payload,
               size_t payload_len, int64_t due_ms);
int lm_enqueue_many(dq_queue *q, const dq_enqueue_item *items, size_t n);
int64_t lm_pending(dq_queue *q);
int lm_purge(dq_queue *q);
int lm_exists(dq_queue *q);

#endif /* DQ_LIST_MOVER_H */
