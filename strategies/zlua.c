/* zlua.c -- the claim loop and task buffer shared by the Lua ZSet
 * strategies (lua, lua-lease); see zlua.h for the contract and why.
 *
 * The loop is the one both strategies had: a held task is returned only
 * when due by this handle's clock, so "never early" holds even when the
 * script decided by Redis's clock (clock=server); when the script found
 * nothing due it sleeps until the head's score, so lateness does not depend
 * on poll_ms for a task that was already the head, but never longer than
 * poll_ms, so a new, earlier head is seen within poll_ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rconn.h"
#include "zlua.h"

int dq_held_init(dq_queue *q, dq_held *h, size_t cap)
{
    memset(h, 0, sizeof *h);
    h->tasks = calloc(cap ? cap : 1, sizeof *h->tasks);
    if (h->tasks == NULL)
        return dq_fail(q, DQ_ENOMEM, "%s: out of memory", q->s->name);
    h->cap = cap ? cap : 1;
    return DQ_OK;
}

void dq_held_drop(dq_held *h)
{
    for (size_t i = 0; i < h->count; i++)
        dq_task_clear(&h->tasks[h->head + i]);
    h->head = h->count = 0;
}

void dq_held_free(dq_held *h)
{
    if (h->tasks != NULL)
        dq_held_drop(h);
    free(h->tasks);
    memset(h, 0, sizeof *h);
}

int dq_held_give_back(dq_queue *q, redisContext *c, dq_held *h)
{
    dq_enqueue_item *items;
    int rc;

    if (h->count == 0)
        return DQ_OK;
    items = calloc(h->count, sizeof *items);
    if (items == NULL) {
        rc = dq_fail(q, DQ_ENOMEM, "give back: out of memory (%zu buffered "
                     "tasks lost)", h->count);
        goto drop;
    }
    for (size_t i = 0; i < h->count; i++) {
        const dq_task *t = &h->tasks[h->head + i];

        items[i].id = t->id;
        items[i].payload = t->payload;
        items[i].payload_len = t->payload_len;
        items[i].due_ms = t->due_ms;
    }
    rc = dq_zh_enqueue_many(q, c, items, h->count, NULL, 0);
    if (rc == DQ_OK)
        q->counters.putbacks += h->count;
    free(items);
drop:
    dq_held_drop(h);
    return rc;
}

int dq_zlua_open(dq_queue *q, bool server_clock, dq_held *h, size_t cap,
                 redisContext **c)
{
    int rc;

    *c = NULL;
    if ((rc = dq_held_init(q, h, cap)) != DQ_OK)
        return rc;
    rc = dq_redis_connect(q, server_clock ? "5.0.0" : NULL,
                          DQ_SOCK_TIMEOUT_MS, c);
    if (rc != DQ_OK)
        dq_held_free(h);
    return rc;
}

void dq_zlua_close(dq_held *h, redisContext *c)
{
    dq_held_free(h);
    if (c != NULL)
        redisFree(c);
}

int dq_zlua_task_copy(dq_queue *q, const redisReply *id,
                      const redisReply *due, const redisReply *pl,
                      size_t index, dq_task *t)
{
    memset(t, 0, sizeof *t);
    if (id->type != REDIS_REPLY_STRING || id->len == 0 ||
        id->len >= DQ_ID_MAX || !dq_reply_score_ms(due, &t->due_ms) ||
        (pl->type != REDIS_REPLY_STRING && pl->type != REDIS_REPLY_NIL))
        return dq_fail(q, DQ_EPROTO, "claim script: bad task %zu in reply",
                       index);
    memcpy(t->id, id->str, id->len);
    t->id[id->len] = '\0';
    t->payload = dq_reply_copy(pl, &t->payload_len);
    if (t->payload == NULL)
        return dq_fail(q, DQ_ENOMEM, "claim: out of memory");
    return DQ_OK;
}

void dq_zlua_now_arg(const dq_queue *q, bool server_clock, char *buf,
                     size_t buflen)
{
    if (server_clock)
        buf[0] = '\0';
    else if (buflen >= 21)
        dq_redis_fmt_i64(buf, dq_now_ms(q));
    else
        snprintf(buf, buflen, "%lld", (long long)dq_now_ms(q));
}

int dq_zlua_head_wait(dq_queue *q, const redisReply *head, bool server_clock,
                      int64_t srv_now_ms, int64_t *wait_us)
{
    int64_t score;

    *wait_us = -1;
    if (head->type == REDIS_REPLY_NIL)
        return DQ_OK;
    if (!dq_reply_score_ms(head, &score))
        return dq_fail(q, DQ_EPROTO, "claim script: bad head score");
    if (server_clock)
        *wait_us = (score - srv_now_ms) * 1000;
    else
        *wait_us = score * 1000 - dq_now_us(q);
    if (*wait_us < 0)
        *wait_us = 0;
    return DQ_OK;
}

int dq_zlua_claim(dq_queue *q, dq_held *h, int64_t timeout_ms,
                  int64_t poll_ms, dq_zlua_fetch_fn fetch, dq_task *out)
{
    int64_t deadline_us = dq_deadline_us(timeout_ms);
    int rc;

    for (;;) {
        int64_t wait_us, left_us;

        if (h->count > 0) {
            dq_task *t = &h->tasks[h->head];
            int64_t early_us = t->due_ms * 1000 - dq_now_us(q);

            if (early_us <= 0) {
                *out = *t; /* the payload moves to the caller */
                memset(t, 0, sizeof *t);
                h->head++;
                if (--h->count == 0)
                    h->head = 0;
                return DQ_OK;
            }
            /* clock=server only: due by Redis's clock, not yet by ours. */
            left_us = deadline_us - dq_mono_us();
            if (left_us <= 0)
                return DQ_EMPTY;
            dq_sleep_us(early_us < left_us ? early_us : left_us);
            q->counters.wakeups++;
            continue;
        }
        if ((rc = fetch(q, &wait_us)) != DQ_OK)
            return rc;
        if (h->count > 0)
            continue;
        q->counters.empty_polls++;
        left_us = deadline_us - dq_mono_us();
        if (left_us <= 0)
            return DQ_EMPTY;
        if (wait_us < 0 || wait_us > poll_ms * 1000)
            wait_us = poll_ms * 1000;
        dq_sleep_us(wait_us < left_us ? wait_us : left_us);
        q->counters.wakeups++;
    }
}
