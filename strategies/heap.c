/* heap.c -- an in-process delay queue: a binary min-heap with Java
 * DelayQueue's leader-follower waiting.  The baseline that needs no Redis,
 * and the test of claim C17.
 *
 * How it works: one heap per queue name, shared by every handle of this
 * process through the dq_local space in the config (dq_local_get, name
 * "heap:<queue>").  Items are ordered by (due_ms, insertion counter): equal
 * due times come out in insertion order, as libuv's src/timer.c does with
 * its start_id.  Insert and pop-min are O(log n); cancel and reschedule
 * find the id by a linear scan, O(n).  Payloads are copied at enqueue and
 * handed to the claimer (no copy at claim).  ack does nothing.
 * enqueue_many copies the payloads outside the lock, then inserts all
 * items under one lock with at most one signal.
 *
 * Waiting (java.util.concurrent.DelayQueue.poll(timeout, unit)): one mutex
 * and one condition variable.  A consumer finding the head not yet due
 * becomes the *leader* if there is none and its own timeout reaches past
 * the head's due time: it waits timed until the head is due.  Everyone
 * else is a *follower* and waits without a due-time bound (only its own
 * claim timeout).  An enqueue that puts a new item at the head clears the
 * leader and signals one waiter, who re-evaluates.  A consumer leaving
 * claim signals one waiter when there is no leader and the heap is not
 * empty, so someone takes over the leader's job.  Result: with N idle
 * consumers, one thread wakes per due task instead of N (no thundering
 * herd); counters.wakeups counts every return from a wait in this handle.
 *
 * Clocks: due times are realtime ms (dq_now_ms, with the handle's skew), so
 * "due" is decided by this handle's clock: never early.  Waits are on
 * CLOCK_MONOTONIC (pthread_condattr_setclock), so a wall-clock step cannot
 * stretch or cut a wait; the remaining delay is recomputed from the
 * realtime clock after every wake-up.
 *
 * Guarantee: at-most-once (removed when claimed), no duplicates, due order
 * for one consumer.  Failure modes: everything is lost when the process
 * exits; no Redis involved.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dq.h"

typedef struct hitem {
    int64_t due_ms;
    uint64_t seq;            /* insertion counter, breaks due-time ties */
    unsigned char *payload;  /* malloc'd; handed to the claimer */
    size_t payload_len;
    char id[DQ_ID_MAX];
} hitem;

typedef struct heap_shared {
    pthread_mutex_t mu;
    pthread_cond_t available;   /* on CLOCK_MONOTONIC */
    hitem **a;
    size_t n, cap;
    uint64_t seq;
    const dq_queue *leader;     /* the handle waiting for the head, or NULL */
} heap_shared;

typedef struct heap_priv {
    heap_shared *h;
    char name[80];              /* "heap:<queue>" in the dq_local */
} heap_priv;

static const dq_optdef heap_options[] = {
    DQ_OPTDEF_END,
};

/* ---- The heap ------------------------------------------------------------- */

static bool item_less(const hitem *x, const hitem *y)
{
    if (x->due_ms != y->due_ms)
        return x->due_ms < y->due_ms;
    return x->seq < y->seq;
}

static void sift_up(heap_shared *h, size_t i)
{
    hitem *it = h->a[i];

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!item_less(it, h->a[parent]))
            break;
        h->a[i] = h->a[parent];
        i = parent;
    }
    h->a[i] = it;
}

static void sift_down(heap_shared *h, size_t i)
{
    hitem *it = h->a[i];

    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m;
        if (l >= h->n)
            break;
        m = (r < h->n && item_less(h->a[r], h->a[l])) ? r : l;
        if (!item_less(h->a[m], it))
            break;
        h->a[i] = h->a[m];
        i = m;
    }
    h->a[i] = it;
}

/* Removes and returns the item at index i. */
static hitem *remove_at(heap_shared *h, size_t i)
{
    hitem *it = h->a[i];

    h->n--;
    if (i < h->n) {
        h->a[i] = h->a[h->n];
        sift_down(h, i);
        sift_up(h, i);
    }
    return it;
}

static size_t find_id(const heap_shared *h, const char *id)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->a[i]->id, id) == 0)
            return i;
    return (size_t)-1;
}

static void free_item(hitem *it)
{
    free(it->payload);
    free(it);
}

static void *heap_create(void *arg)
{
    heap_shared *h;
    pthread_condattr_t ca;
    pthread_mutexattr_t ma;

    (void)arg;
    h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    /* Adaptive: spin a little before sleeping in the kernel.  Every
     * claim and enqueue takes this one lock for a few hundred ns, so under
     * contention (producers and consumers on 2 cores) sleeping and waking
     * through futex(2) cost more than the critical section. */
    if (pthread_mutexattr_init(&ma) != 0)
        goto free_h;
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    if (pthread_mutex_init(&h->mu, &ma) != 0) {
        pthread_mutexattr_destroy(&ma);
        goto free_h;
    }
    pthread_mutexattr_destroy(&ma);
    if (pthread_condattr_init(&ca) != 0)
        goto destroy_mutex;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&h->available, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        goto destroy_mutex;
    }
    pthread_condattr_destroy(&ca);
    return h;

destroy_mutex:
    pthread_mutex_destroy(&h->mu);
free_h:
    free(h);
    return NULL;
}

static void heap_destroy(void *obj)
{
    heap_shared *h = obj;

    for (size_t i = 0; i < h->n; i++)
        free_item(h->a[i]);
    free(h->a);
    pthread_cond_destroy(&h->available);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

/* ---- Ops ----------------------------------------------------------------- */

static int heap_open(dq_queue *q)
{
    heap_priv *p;

    if (q->cfg.local == NULL)
        return dq_fail(q, DQ_EINVAL, "heap needs a dq_local");
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return dq_fail(q, DQ_ENOMEM, "heap: out of memory");
    snprintf(p->name, sizeof p->name, "heap:%s", q->queue);
    p->h = dq_local_get(q->cfg.local, p->name, heap_create, NULL, heap_destroy);
    if (p->h == NULL) {
        free(p);
        return dq_fail(q, DQ_ENOMEM, "heap: cannot create shared heap");
    }
    q->priv = p;
    return DQ_OK;
}

static void heap_close(dq_queue *q)
{
    heap_priv *p = q->priv;

    if (p == NULL)
        return;
    dq_local_put(q->cfg.local, p->name);
    free(p);
    q->priv = NULL;
}

/* A new item holding a copy of the payload, or NULL (out of memory). */
static hitem *item_new(const char *id, const void *payload,
                       size_t payload_len, int64_t due_ms)
{
    hitem *it = malloc(sizeof *it);

    if (it == NULL)
        return NULL;
    it->payload = malloc(payload_len + 1);
    if (it->payload == NULL) {
        free(it);
        return NULL;
    }
    if (payload_len > 0)
        memcpy(it->payload, payload, payload_len);
    it->payload[payload_len] = '\0';
    it->payload_len = payload_len;
    it->due_ms = due_ms;
    it->seq = 0;
    /* The wrapper checked 1 <= strlen(id) < DQ_ID_MAX. */
    memcpy(it->id, id, strlen(id) + 1);
    return it;
}

/* Makes room for `more` items.  Called with h->mu held.  False when out of
 * memory. */
static bool reserve(heap_shared *h, size_t more)
{
    size_t cap = h->cap ? h->cap : 64;
    hitem **a;

    if (h->n + more <= h->cap)
        return true;
    while (cap < h->n + more)
        cap *= 2;
    a = realloc(h->a, cap * sizeof *a);
    if (a == NULL)
        return false;
    h->a = a;
    h->cap = cap;
    return true;
}

/* Inserts it (room reserved).  Called with h->mu held.  True when it
 * became the head. */
static bool push(heap_shared *h, hitem *it)
{
    it->seq = h->seq++;
    h->a[h->n++] = it;
    sift_up(h, h->n - 1);
    return h->a[0] == it;
}

static int heap_enqueue(dq_queue *q, const char *id, const void *payload,
                        size_t payload_len, int64_t due_ms)
{
    heap_shared *h = ((heap_priv *)q->priv)->h;
    hitem *it = item_new(id, payload, payload_len, due_ms);

    if (it == NULL)
        return dq_fail(q, DQ_ENOMEM, "enqueue %s: out of memory", id);
    pthread_mutex_lock(&h->mu);
    if (!reserve(h, 1)) {
        pthread_mutex_unlock(&h->mu);
        free_item(it);
        return dq_fail(q, DQ_ENOMEM, "enqueue %s: out of memory", id);
    }
    if (push(h, it)) {
        /* A new head: whoever waits for the old head waits too long. */
        h->leader = NULL;
        pthread_cond_signal(&h->available);
    }
    pthread_mutex_unlock(&h->mu);
    return DQ_OK;
}

/* Batched enqueue: the copies are made outside the lock, then one lock
 * for all n items and at most one signal.  All or nothing (out of memory
 * adds none). */
static int heap_enqueue_many(dq_queue *q, const dq_enqueue_item *items,
                             size_t n)
{
    heap_shared *h = ((heap_priv *)q->priv)->h;
    hitem **its = malloc(n * sizeof *its);
    bool head = false;
    size_t made = 0;

    if (its == NULL)
        return dq_fail(q, DQ_ENOMEM, "enqueue_many: out of memory");
    for (; made < n; made++) {
        its[made] = item_new(items[made].id, items[made].payload,
                             items[made].payload_len, items[made].due_ms);
        if (its[made] == NULL)
            goto nomem;
    }
    pthread_mutex_lock(&h->mu);
    if (!reserve(h, n)) {
        pthread_mutex_unlock(&h->mu);
        goto nomem;
    }
    for (size_t i = 0; i < n; i++)
        head |= push(h, its[i]);
    if (head) {
        h->leader = NULL;
        pthread_cond_signal(&h->available);
    }
    pthread_mutex_unlock(&h->mu);
    free(its);
    return DQ_OK;

nomem:
    for (size_t i = 0; i < made; i++)
        free_item(its[i]);
    free(its);
    return dq_fail(q, DQ_ENOMEM, "enqueue_many: out of memory");
}

static struct timespec mono_ts(int64_t mono_us)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(mono_us / 1000000);
    ts.tv_nsec = (long)(mono_us % 1000000) * 1000;
    return ts;
}

static int heap_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    heap_shared *h = ((heap_priv *)q->priv)->h;
    int64_t deadline_us = dq_mono_us() + timeout_ms * 1000;
    hitem *it = NULL;

    pthread_mutex_lock(&h->mu);
    for (;;) {
        int64_t left_us = deadline_us - dq_mono_us(), delay_us;
        struct timespec ts;

        if (h->n > 0) {
            /* due*1000 <= now_us  <=>  dq_now_ms(q) >= due */
            delay_us = h->a[0]->due_ms * 1000 - dq_now_us(q);
            if (delay_us <= 0) {
                it = remove_at(h, 0);
                break;
            }
        } else {
            delay_us = INT64_MAX;
        }
        if (left_us <= 0)
            break;
        if (delay_us == INT64_MAX || left_us < delay_us || h->leader != NULL) {
            /* Follower (or empty heap): wait only for our own timeout. */
            ts = mono_ts(deadline_us);
            pthread_cond_timedwait(&h->available, &h->mu, &ts);
            q->counters.wakeups++;
        } else {
            /* Leader: wait until the head is due. */
            h->leader = q;
            ts = mono_ts(dq_mono_us() + delay_us);
            pthread_cond_timedwait(&h->available, &h->mu, &ts);
            q->counters.wakeups++;
            if (h->leader == q)
                h->leader = NULL;
        }
    }
    if (h->leader == NULL && h->n > 0)
        pthread_cond_signal(&h->available);
    pthread_mutex_unlock(&h->mu);

    if (it == NULL)
        return DQ_EMPTY;
    memcpy(out->id, it->id, strlen(it->id) + 1);
    out->payload = it->payload;  /* ownership moves to the task */
    out->payload_len = it->payload_len;
    out->due_ms = it->due_ms;
    out->attempt = 0;
    free(it);
    return DQ_OK;
}

static int heap_ack(dq_queue *q, const dq_task *t)
{
    (void)q;
    (void)t;
    return DQ_OK;
}

static int heap_cancel(dq_queue *q, const char *id)
{
    heap_shared *h = ((heap_priv *)q->priv)->h;
    hitem *it = NULL;
    size_t i;

    pthread_mutex_lock(&h->mu);
    i = find_id(h, id);
    if (i != (size_t)-1) {
        it = remove_at(h, i);
        if (i == 0) { /* the leader waits for a head that is gone */
            h->leader = NULL;
            pthread_cond_signal(&h->available);
        }
    }
    pthread_mutex_unlock(&h->mu);
    if (it == NULL)
        return dq_fail(q, DQ_ENOTFOUND, "cancel %s: no such pending task", id);
    free_item(it);
    return DQ_OK;
}

static int heap_reschedule(dq_queue *q, const char *id, int64_t due_ms)
{
    heap_shared *h = ((heap_priv *)q->priv)->h;
    hitem *it;
    size_t i;

    pthread_mutex_lock(&h->mu);
    i = find_id(h, id);
    if (i == (size_t)-1) {
        pthread_mutex_unlock(&h->mu);
        return dq_fail(q, DQ_ENOTFOUND, "reschedule %s: no such pending task",
                       id);
    }
    it = h->a[i];
    it->due_ms = due_ms;
    sift_down(h, i);
    sift_up(h, i);
    if (i == 0 || h->a[0] == it) {
        h->leader = NULL;
        pthread_cond_signal(&h->available);
    }
    pthread_mutex_unlock(&h->mu);
    return DQ_OK;
}

static int64_t heap_pending(dq_queue *q)
{
    heap_shared *h = ((heap_priv *)q->priv)->h;
    int64_t n;

    pthread_mutex_lock(&h->mu);
    n = (int64_t)h->n;
    pthread_mutex_unlock(&h->mu);
    return n;
}

static int heap_purge(dq_queue *q)
{
    heap_shared *h = ((heap_priv *)q->priv)->h;

    pthread_mutex_lock(&h->mu);
    for (size_t i = 0; i < h->n; i++)
        free_item(h->a[i]);
    h->n = 0;
    pthread_mutex_unlock(&h->mu);
    return DQ_OK;
}

static int heap_exists(dq_queue *q)
{
    return heap_pending(q) > 0 ? 1 : 0;
}

const dq_strategy dq_strategy_heap = {
    .name = "heap",
    .summary = "in-process binary min-heap with Java DelayQueue's "
               "leader-follower wait; no Redis, lost on process exit",
    .flags = DQ_G_AT_MOST_ONCE | DQ_G_BLOCKS | DQ_G_NO_DUP_CONCURRENT |
             DQ_G_DUE_ORDER,
    .min_redis = NULL,
    .options = heap_options,
    .open = heap_open,
    .enqueue = heap_enqueue,
    .claim = heap_claim,
    .ack = heap_ack,
    .close = heap_close,
    .cancel = heap_cancel,
    .reschedule = heap_reschedule,
    .pending = heap_pending,
    .purge = heap_purge,
    .exists = heap_exists,
    .doc = "No Redis: a binary min-heap per queue name in this process "
        "(insert and pop-min O(log n)) behind one mutex, with Java "
        "DelayQueue's leader-follower wait: one consumer waits timed until "
        "the head is due, the others wait untimed, and an enqueue of a new "
        "head wakes one, so N idle consumers wake once per task, not N "
        "times (claim C17).  No round trips at all; at-most-once, no "
        "duplicates, due order.  Everything is lost when the process "
        "exits, and only threads of one process can share a queue.",
    .enqueue_many = heap_enqueue_many,
};
