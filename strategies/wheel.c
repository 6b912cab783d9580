/* wheel.c -- an in-process delay queue on a hierarchical timing wheel
 * (Varghese and Lauck, "Hashed and Hierarchical Timing Wheels: Data
 * Structures for the Efficient Implementation of a Timer Facility", SOSP
 * 1987, scheme 7), beside the heap (heap.c): the same sharing, waiting
 * and options, so that the two differ only in the structure that orders
 * the tasks.
 *
 * How it works: one wheel per queue name, shared by every handle of this
 * process through the dq_local space (name "wheel:<queue>").  Time is
 * counted in ticks of tick_ms (option, default 1): a task due at d ms
 * belongs to tick floor(d / tick_ms).  The wheel keeps its own current
 * tick `now`, which claims move forward to the claiming handle's clock
 * (never back).  A task whose tick is <= now is *ready*: it waits in a
 * small binary min-heap ordered by (due_ms, insertion counter).  Every
 * other task sits in one slot of the wheel: 11 levels of 64 slots, the
 * slots of level k 64^k ticks wide (at 1 ms: level 0 1 ms, level 1 64 ms,
 * level 2 4.1 s, level 3 4.4 min, level 4 4.7 h, level 5 12.4 days...).
 * Written in base 64, a task's tick agrees with `now` on every digit
 * above some k and is larger at digit k: the task goes to level k, slot
 * (its digit k).  So a level never holds two turns of its wheel at once,
 * and there is no round counter (Netty's remainingRounds) and no overflow
 * list: 11 levels of 6 bits cover every 64-bit tick, so every due time
 * dq.h allows (+-2^53 ms) fits.
 *
 * Advancing: when `now` moves from a to b, every level whose digits above
 * it changed empties the slots that time passed (digits a_k+1 .. b_k, or
 * the whole level when a higher digit changed too) and re-places their
 * tasks against b; a task from level k lands in the ready heap or a level
 * below k.  That is the cascade of Kafka's TimingWheel (apache/kafka,
 * server-common/src/main/java/org/apache/kafka/server/util/timer/
 * TimingWheel.java: each level's tick is the interval of the level below,
 * a bucket expires at its beginning and its tasks are reinserted into the
 * finer wheels), except that the non-empty slots are found with one 64-bit
 * bitmap per level, as the Linux kernel's timer wheel keeps its
 * pending_map (kernel/time/timer.c, also 64 buckets per level), instead of
 * a DelayQueue of buckets: an advance over empty time costs a few bit
 * operations however far it jumps, and no thread ticks.
 *
 * Layout: each task is one malloc: payload bytes, a NUL, the id and its
 * NUL, then (8-byte aligned) a small header with their lengths, asked for
 * with at least BLOCK_MIN (56) bytes.  The block is handed to the claimer
 * as dq_task.payload (dq_task_clear frees it), so a task costs one malloc
 * and one free, as in the heap.  The 56 bytes put every small task in one
 * malloc size class (a 64-byte chunk), so the block a claim frees is the
 * one the next enqueue gets back from glibc's per-thread cache, still in
 * the CPU cache, whatever the lengths of ids and payloads: profiled with
 * `perf record` on the steady mix of `dqlab opcost` at 10^6 tasks
 * (opcost.h), whose fill writes shorter ids (40-byte blocks, 48-byte
 * chunks) than its timed operations (48 bytes, 64-byte chunks), malloc's
 * slow path (_int_malloc, malloc_consolidate) was a fifth of the wheel's
 * operation, evenly through the run, long after the fill's tasks were
 * gone: the bins stay fragmented (a loop of that pattern alone, 10^6
 * blocks of 40 bytes replaced at random by 48-byte ones, still gets only
 * 89% of its allocations from the per-thread cache after the last 40-byte
 * block is freed; 100% when both are 48).  The
 * wheel itself holds 24-byte entries (due time, insertion counter, block
 * pointer) and never reads a block between enqueue and claim: a slot is a
 * list of chunks of 32 entries (only the newest chunk partly filled;
 * order inside a slot does not matter, the ready heap orders), and the
 * ready heap holds the same entries.  So a cascade reads and writes
 * entries in sequence, a few contiguous chunks, instead of following a
 * link through each task's block: profiled the same way, the linked
 * slots spent 60% of an operation waiting for those blocks, one cache
 * miss per task per level.  Chunks come from slabs kept as a free list;
 * the ready heap's array is kept as large as the number of tasks, and the
 * chunks as many as that many tasks can fill, so placing a task (enqueue,
 * cascade, reschedule) never allocates and an advance never fails
 * half-way.  A claim's one unavoidable cache miss is its task's block,
 * written when it was enqueued, long ago.  The cascade out of level 1
 * (the tasks of the next 64 ticks, into level 0 or the ready heap)
 * prefetches the block of every task it moves, 1 to 64 ticks before it
 * falls due, so that the claim finds it in cache: profiled as above, that
 * miss had been a sixth of the operation although each claim already
 * prefetched the next one or two tasks due, one claim ahead, too late
 * when a block misses the TLB as well.  That per-claim prefetch (the
 * ready head, the earliest level-0 slots) stays for tasks enqueued less
 * than 64 ticks ahead, which skip level 1.
 *
 * Costs: enqueue O(1) (a task already ready: O(log r), r the ready tasks);
 * claim O(log r) plus cascades, and a task moves at most once per level
 * below the one it started in (at most 10 times; at 1 ms ticks a task
 * due within the hour moves three or four times), 24 bytes each time;
 * cancel and reschedule find the id by a linear scan, O(n), as in the
 * heap.  A cascade moves a whole slot at once: when `now` enters a new
 * 4.7-hour block at 1 ms ticks, the claim that crosses it re-places every
 * task due in that block, and one entering a new 4.4-minute block every
 * task due in that one (at 10^7 tasks over an hour, about 1.4 million).
 * Memory: the block (56 bytes for a 16-byte payload and a short id, a
 * 64-byte malloc chunk), its entry in a chunk (24) and its reserved place
 * in the ready array (24).
 *
 * Delivery precision: a task is never handed out before its due time by
 * the claiming handle's clock (the ready heap's head is checked against
 * it, so a handle whose clock runs behind the one that advanced the wheel
 * still waits).  A waiting consumer wakes at the last millisecond of the
 * earliest tick that holds work, when every task of that tick is due, so
 * when consumers keep up a task is delivered at most tick_ms - 1 ms late
 * plus the wake-up latency: exact to the millisecond at the default
 * tick_ms=1.  A consumer that arrives mid-tick takes any task already due.
 * Larger ticks trade that lateness for fewer wake-ups (one per tick that
 * holds tasks instead of one per distinct due millisecond), as Netty's
 * HashedWheelTimer does (netty/netty, common/src/main/java/io/netty/util/
 * HashedWheelTimer.java: "approximated", the tick duration sets the
 * accuracy, a timeout runs at the first tick after its deadline).
 *
 * Option batch=N (1..1000, default 1), as in the heap: a claim that finds
 * a due task takes up to N due tasks under the same lock into the handle's
 * buffer and hands out one per dq_claim; buffered tasks have left the
 * shared wheel (other handles, cancel, reschedule and pending of other
 * handles no longer see them); a graceful close puts them back into the
 * ready heap with their due times and insertion counters, a crash of the
 * process loses them with everything else.
 *
 * Waiting (java.util.concurrent.DelayQueue.poll's leader-follower, as in
 * heap.c): one mutex, one condition variable on CLOCK_MONOTONIC.  A
 * consumer that finds nothing due becomes the leader if there is none and
 * its timeout reaches the next wake-up time (above); it waits timed for
 * that, everyone else waits untimed for its own timeout.  An enqueue whose
 * wake-up time is earlier than the leader's (or, with no leader, earlier
 * than anything queued) clears the leader and signals one waiter; a
 * consumer leaving claim with no leader and tasks left signals one.  The
 * leader also wakes when a higher level's slot must cascade (at most once
 * per level per task).  counters.wakeups counts every return from a wait.
 * Option wake=broadcast (default leader) is the heap's herd baseline
 * (heap.c, claim C17): no leader, every enqueue (and cancel, reschedule,
 * give-back) wakes all waiters, and each waits timed for the next wake-up
 * time; fixed when the first handle creates the wheel, as tick_ms.
 * Due decisions use the handle's skewed realtime clock; waits are
 * recomputed from it after every wake-up.  A claim compares the ready
 * head with the coarse clock first (dq_now_coarse_us: never ahead of the
 * precise one, 3 ns instead of 21 here) and reads dq_now_us only when that
 * says "not yet" -- profiled with `perf record` on `dqlab opcost` (the
 * now mix), the precise clock_gettime was 22% of an enqueue+claim pair.
 *
 * Guarantee: at-most-once (removed when claimed), no duplicates, due order
 * for one consumer: every task in a slot has a larger tick than every
 * ready task, so the ready heap's head is the earliest task of all; equal
 * due times come out in insertion order.  Failure modes: everything is
 * lost when the process exits; no Redis involved.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dq.h"

#define LVL_BITS 6
#define LVL_SLOTS (1 << LVL_BITS)
#define LVL_MASK (LVL_SLOTS - 1)
#define LEVELS 11                 /* 11 * 6 = 66 >= 64 bits of tick */
#define TICK_BIAS (UINT64_C(1) << 63) /* int64 tick -> ordered uint64 */

/* The least a task block asks malloc for: glibc (2.36) serves every
 * request up to 56 bytes rounded to this from one 64-byte chunk size, so
 * tasks whose payload and id together are at most 38 bytes share one size
 * class whatever their lengths (the top comment says why that matters). */
#define BLOCK_MIN 56

#define CHUNK_ENTRIES 32          /* entries per slot chunk: 784 bytes */
#define SPARE_CHUNKS 2            /* see chunks_needed */

/* The header of a task, at the end of its block (see node_block). */
typedef struct wnode {
    size_t payload_len;
    size_t id_len;
} wnode;

/* A task wherever the wheel keeps it (slot chunk, ready heap, batch
 * buffer): the ordering key inline, the task's block behind it.  The
 * tick is computed from due_ms when the entry is placed. */
typedef struct rent {
    int64_t due_ms;
    uint64_t seq;            /* insertion counter, breaks due-time ties */
    wnode *node;
} rent;

/* A slot is a list of chunks of entries: the first (head) chunk may be
 * partly filled, every other one is full. */
typedef struct wchunk {
    struct wchunk *next;
    size_t n;
    rent e[CHUNK_ENTRIES];
} wchunk;

/* Chunks come from slabs, freed only with the wheel's tasks (free_all). */
typedef struct wslab {
    struct wslab *next;
    wchunk c[];
} wslab;

typedef struct wheel_shared {
    pthread_mutex_t mu;
    pthread_cond_t available;     /* on CLOCK_MONOTONIC */
    int64_t tick_ms;
    bool started;                 /* `now` set (first enqueue or claim) */
    uint64_t now;                 /* biased current tick */
    uint64_t map[LEVELS];         /* bit s: slot[k][s] is not empty */
    wchunk *slot[LEVELS][LVL_SLOTS]; /* head chunk, NULL when empty */
    size_t in_wheel;              /* tasks in slots */
    rent *ready;                  /* binary min-heap by (due_ms, seq) */
    size_t nready, cap;           /* cap >= nready + in_wheel */
    wchunk *spare;                /* free chunks */
    size_t nchunks;               /* chunks in the slabs (used + spare) */
    wslab *slabs;
    uint64_t seq;
    const dq_queue *leader;       /* the handle waiting timed, or NULL */
    int64_t leader_wake_ms;       /* what it waits for (realtime ms) */
    int waiters;                  /* threads in a wait */
    bool broadcast;               /* wake=broadcast: no leader, wake all */
} wheel_shared;

/* What the first handle fixes for the queue's wheel (wheel_create). */
typedef struct wheel_args {
    int64_t tick_ms;
    bool broadcast;
} wheel_args;

typedef struct wheel_priv {
    wheel_shared *h;
    rent *held;                   /* batch buffer: held[head..head+count) */
    size_t batch, head, count;
    char name[80];                /* "wheel:<queue>" in the dq_local */
} wheel_priv;

static const dq_optdef wheel_options[] = {
    DQ_OPTDEF_INT("tick_ms", "1", 1, 60000,
                  "slot width and wake-up granularity in ms (1..60000): a "
                  "waiting consumer wakes once per tick, so a task may be "
                  "up to tick_ms - 1 ms late; every handle of a queue must "
                  "use the same"),
    DQ_OPTDEF_INT("batch", "1", 1, 1000,
                  "due tasks taken per lock and buffered in the handle "
                  "(1..1000); close puts buffered tasks back"),
    DQ_OPTDEF_CHOICE("wake", "leader", "leader|broadcast",
                     "leader: the heap's leader-follower wait; broadcast: "
                     "no leader, every enqueue wakes all waiters (the herd "
                     "baseline); every handle of a queue must use the same"),
    DQ_OPTDEF_END,
};

/* ---- Ticks --------------------------------------------------------------- */

static inline int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;

    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The biased tick of a due time: order-preserving in uint64_t. */
static inline uint64_t tick_of(const wheel_shared *h, int64_t ms)
{
    int64_t t = h->tick_ms == 1 ? ms : floor_div(ms, h->tick_ms);

    return (uint64_t)t ^ TICK_BIAS;
}

/* The last millisecond of biased tick t: every task of that tick is due
 * then.  Ticks come from due times within +-2^53 ms, so no overflow. */
static inline int64_t tick_last_ms(const wheel_shared *h, uint64_t t)
{
    return ((int64_t)(t ^ TICK_BIAS) + 1) * h->tick_ms - 1;
}

/* Level of a task with tick t > now: the base-64 digit where they differ
 * first, from the top. */
static inline int level_of(uint64_t t, uint64_t now)
{
    return (63 - __builtin_clzll(t ^ now)) / LVL_BITS;
}

/* The first tick of level k's slot s (in the current turn of level k). */
static inline uint64_t slot_start(uint64_t now, int k, int s)
{
    int up = (k + 1) * LVL_BITS;
    uint64_t hi = up >= 64 ? 0 : (now >> up) << up;

    return hi | ((uint64_t)s << (k * LVL_BITS));
}

/* ---- Nodes --------------------------------------------------------------- */

static inline size_t node_offset(size_t payload_len, size_t id_len)
{
    size_t a = _Alignof(wnode);

    return (payload_len + 1 + id_len + 1 + a - 1) / a * a;
}

static inline unsigned char *node_block(const wnode *n)
{
    return (unsigned char *)n - node_offset(n->payload_len, n->id_len);
}

static inline const char *node_id(const wnode *n)
{
    return (const char *)node_block(n) + n->payload_len + 1;
}

/* A new task block and its entry in *e (seq is set when inserted).  False
 * when out of memory. */
static bool node_new(rent *e, const char *id, const void *payload,
                     size_t payload_len, int64_t due_ms)
{
    /* The wrapper checked 1 <= strlen(id) < DQ_ID_MAX. */
    size_t id_len = strlen(id), off = node_offset(payload_len, id_len);
    size_t size = off + sizeof(wnode);
    unsigned char *b = malloc(size < BLOCK_MIN ? BLOCK_MIN : size);
    wnode *n;

    if (b == NULL)
        return false;
    if (payload_len > 0)
        memcpy(b, payload, payload_len);
    b[payload_len] = '\0';
    memcpy(b + payload_len + 1, id, id_len + 1);
    n = (wnode *)(b + off);
    n->payload_len = payload_len;
    n->id_len = id_len;
    e->due_ms = due_ms;
    e->seq = 0;
    e->node = n;
    return true;
}

/* ---- The ready heap ------------------------------------------------------ */

static inline bool rent_less(const rent *x, const rent *y)
{
    if (x->due_ms != y->due_ms)
        return x->due_ms < y->due_ms;
    return x->seq < y->seq;
}

static void ready_sift_up(wheel_shared *h, size_t i, rent e)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!rent_less(&e, &h->ready[parent]))
            break;
        h->ready[i] = h->ready[parent];
        i = parent;
    }
    h->ready[i] = e;
}

static void ready_sift_down(wheel_shared *h, size_t i, rent e)
{
    size_t n = h->nready;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && rent_less(&h->ready[c + 1], &h->ready[c]))
            c++;
        if (!rent_less(&h->ready[c], &e))
            break;
        h->ready[i] = h->ready[c];
        i = c;
    }
    h->ready[i] = e;
}

/* Room was reserved (cap >= every task). */
static void ready_push(wheel_shared *h, rent e)
{
    ready_sift_up(h, h->nready++, e);
}

/* Removes entry i and returns it. */
static rent ready_remove_at(wheel_shared *h, size_t i)
{
    rent e = h->ready[i];

    if (i < --h->nready) {
        rent last = h->ready[h->nready];
        ready_sift_down(h, i, last);
        if (h->ready[i].node == last.node) /* did not move down: maybe up */
            ready_sift_up(h, i, last);
    }
    return e;
}

/* ---- Slot chunks --------------------------------------------------------- */

/* Chunks that `tasks` tasks can ever use at once: a slot of m entries
 * holds ceil(m / CHUNK_ENTRIES) <= floor(m / CHUNK_ENTRIES) + 1 chunks
 * (only its newest chunk is partly filled), so all slots together at most
 * tasks / CHUNK_ENTRIES + one per slot.  During an advance the slot being
 * emptied is off the wheel (its one is free) while the chunk being read
 * still holds entries already re-placed elsewhere: one more, and
 * SPARE_CHUNKS leaves one to spare. */
static size_t chunks_needed(size_t tasks)
{
    return tasks / CHUNK_ENTRIES + LEVELS * LVL_SLOTS + SPARE_CHUNKS;
}

/* Grows the spare chunks to chunks_needed(tasks), one slab for all that
 * is missing (at least 256 chunks).  False when out of memory. */
static bool reserve_chunks(wheel_shared *h, size_t tasks)
{
    size_t need = chunks_needed(tasks), grow;
    wslab *sl;

    if (h->nchunks >= need)
        return true;
    grow = need - h->nchunks < 256 ? 256 : need - h->nchunks;
    sl = malloc(sizeof *sl + grow * sizeof(wchunk));
    if (sl == NULL)
        return false;
    sl->next = h->slabs;
    h->slabs = sl;
    for (size_t i = 0; i < grow; i++) {
        sl->c[i].next = h->spare;
        h->spare = &sl->c[i];
    }
    h->nchunks += grow;
    return true;
}

/* Keeps the ready array as large as every task plus `more`, and enough
 * chunks for as many, so that placing tasks (enqueue, advance, reschedule)
 * never allocates and an advance cannot fail half-way.  Called with h->mu
 * held.  False when out of memory. */
static bool reserve(wheel_shared *h, size_t more)
{
    size_t need = h->nready + h->in_wheel + more, cap = h->cap ? h->cap : 64;
    rent *a;

    if (!reserve_chunks(h, need))
        return false;
    if (need <= h->cap)
        return true;
    while (cap < need)
        cap *= 2;
    a = realloc(h->ready, cap * sizeof *a);
    if (a == NULL)
        return false;
    h->ready = a;
    h->cap = cap;
    return true;
}

/* Appends e to slot s of level k.  A spare chunk exists (reserve). */
static inline void slot_append(wheel_shared *h, int k, int s, rent e)
{
    wchunk *c = h->slot[k][s];

    if (c == NULL || c->n == CHUNK_ENTRIES) {
        wchunk *nc = h->spare;

        h->spare = nc->next;
        nc->next = c;
        nc->n = 0;
        h->slot[k][s] = c = nc;
    }
    c->e[c->n++] = e;
    h->map[k] |= UINT64_C(1) << s;
    h->in_wheel++;
}

static void chunk_release(wheel_shared *h, wchunk *c)
{
    c->next = h->spare;
    h->spare = c;
}

/* ---- The wheel ----------------------------------------------------------- */

/* Puts e into the ready heap or its slot against h->now (room reserved).
 * Inlined: it is the inner loop of every cascade. */
static inline __attribute__((always_inline)) void place(wheel_shared *h,
                                                        rent e)
{
    uint64_t t = tick_of(h, e.due_ms);
    int k;

    if (t <= h->now) {
        ready_push(h, e);
        return;
    }
    k = level_of(t, h->now);
    slot_append(h, k, (int)((t >> (k * LVL_BITS)) & LVL_MASK), e);
}

/* Starts loading the parts of task block n that its claim reads: the
 * header and the id just before it, and malloc's chunk header, which the
 * claimer's free reads.  Never faults, even on a block freed since. */
static inline void prefetch_block(const wnode *n)
{
    __builtin_prefetch((const char *)n - 40);
    __builtin_prefetch(n);
}

/* Re-places every entry of the chunk list c (taken off its slot) and
 * gives the chunks back.  The entries are read in order from contiguous
 * chunks, and the next chunk is prefetched while one is re-placed: the
 * tasks' own blocks are never read; with warm (the cascade out of level
 * 1: due within 64 ticks) each block is prefetched for its claim. */
static void replace_chunks(wheel_shared *h, wchunk *c, bool warm)
{
    while (c != NULL) {
        wchunk *next = c->next;
        size_t n = c->n;  /* read once: the stores below may alias it */

        if (next != NULL)
            for (size_t off = 0; off < sizeof *next; off += 64)
                __builtin_prefetch((const char *)next + off);
        h->in_wheel -= n;
        for (size_t i = 0; i < n; i++) {
            if (warm)
                prefetch_block(c->e[i].node);
            place(h, c->e[i]);
        }
        chunk_release(h, c);
        c = next;
    }
}

/* Moves `now` forward to b (> now) and re-places the tasks of every slot
 * time passed.  Levels go upwards, so a task re-placed into a lower level
 * is never looked at twice; it lands in a slot after b's digit there. */
static void advance(wheel_shared *h, uint64_t b)
{
    uint64_t a = h->now;

    h->now = b;
    for (int k = 0; k < LEVELS; k++) {
        uint64_t pa = a >> (k * LVL_BITS), pb = b >> (k * LVL_BITS), mask, bits;

        if (pa == pb)
            break;                /* this level and those above unchanged */
        if ((pa >> LVL_BITS) != (pb >> LVL_BITS)) {
            mask = ~UINT64_C(0);  /* a higher digit changed: all passed */
        } else {                  /* digits (pa, pb] of this level */
            int lo = (int)(pa & LVL_MASK), hi = (int)(pb & LVL_MASK);
            mask = (hi == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (hi + 1)) - 1) &
                   ~((UINT64_C(1) << (lo + 1)) - 1);
        }
        bits = h->map[k] & mask;
        h->map[k] &= ~bits;
        while (bits != 0) {
            int s = __builtin_ctzll(bits);
            wchunk *c = h->slot[k][s];

            bits &= bits - 1;
            h->slot[k][s] = NULL;
            replace_chunks(h, c, k == 1);
        }
    }
}

/* Sets or advances `now` to the tick of now_ms.  Called with h->mu held. */
static void sync_now(wheel_shared *h, int64_t now_ms)
{
    uint64_t t = tick_of(h, now_ms);

    if (!h->started) {
        h->now = t;
        h->started = true;
    } else if (t > h->now) {
        advance(h, t);
    }
}

/* The realtime ms at which a waiting consumer should look again: the last
 * ms of the earliest tick holding work (the ready head's tick, else the
 * first tick of the earliest non-empty slot, which then cascades), or
 * INT64_MAX when the queue is empty. */
static int64_t next_wake_ms(const wheel_shared *h)
{
    if (h->nready > 0)
        return tick_last_ms(h, tick_of(h, h->ready[0].due_ms));
    for (int k = 0; k < LEVELS; k++)
        if (h->map[k] != 0)
            return tick_last_ms(h, slot_start(h->now, k,
                                              __builtin_ctzll(h->map[k])));
    return INT64_MAX;
}

/* The wake-up time entry e (not yet placed) would add. */
static int64_t node_wake_ms(const wheel_shared *h, const rent *e)
{
    uint64_t t = tick_of(h, e->due_ms);
    int k;

    if (t <= h->now)
        return tick_last_ms(h, t);
    k = level_of(t, h->now);
    return tick_last_ms(h, slot_start(h->now, k,
                                      (int)((t >> (k * LVL_BITS)) &
                                            LVL_MASK)));
}

/* After adding work that wants a wake-up at wake_ms: wakes one waiter if
 * that is earlier than the leader's wait, or, with no leader, earlier
 * than everything queued before (before_ms). */
static void wake_for(wheel_shared *h, int64_t wake_ms, int64_t before_ms)
{
    if (h->waiters == 0)
        return;
    if (h->broadcast) {  /* the baseline: every enqueue wakes everyone */
        pthread_cond_broadcast(&h->available);
        return;
    }
    if (h->leader != NULL ? wake_ms < h->leader_wake_ms : wake_ms < before_ms) {
        h->leader = NULL;
        pthread_cond_signal(&h->available);
    }
}

/* After a change that may make the leader's wait wrong: it re-evaluates
 * (leader-follower: one waiter wakes and takes over; broadcast: all). */
static void wake_waiters(wheel_shared *h)
{
    h->leader = NULL;
    if (h->broadcast)
        pthread_cond_broadcast(&h->available);
    else
        pthread_cond_signal(&h->available);
}

/* Frees every task in the slots and the ready heap, and the chunks. */
static void free_all(wheel_shared *h)
{
    for (size_t i = 0; i < h->nready; i++)
        free(node_block(h->ready[i].node));
    h->nready = 0;
    for (int k = 0; k < LEVELS; k++) {
        for (int s = 0; s < LVL_SLOTS; s++) {
            for (wchunk *c = h->slot[k][s]; c != NULL; c = c->next)
                for (size_t i = 0; i < c->n; i++)
                    free(node_block(c->e[i].node));
            h->slot[k][s] = NULL;
        }
        h->map[k] = 0;
    }
    h->in_wheel = 0;
    while (h->slabs != NULL) {
        wslab *next = h->slabs->next;
        free(h->slabs);
        h->slabs = next;
    }
    h->spare = NULL;
    h->nchunks = 0;
}

static void *wheel_create(void *arg)
{
    wheel_shared *h;
    pthread_condattr_t ca;
    pthread_mutexattr_t ma;

    h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    h->tick_ms = ((const wheel_args *)arg)->tick_ms;
    h->broadcast = ((const wheel_args *)arg)->broadcast;
    /* Adaptive, as in heap.c: the critical sections are a few hundred ns,
     * so spinning a little beats sleeping in futex(2) under contention. */
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

static void wheel_destroy(void *obj)
{
    wheel_shared *h = obj;

    free_all(h);
    free(h->ready);
    pthread_cond_destroy(&h->available);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

/* ---- Ops ----------------------------------------------------------------- */

static int wheel_open(dq_queue *q)
{
    wheel_priv *p;
    int64_t batch, tick_ms;
    wheel_args args;
    int rc;

    if (q->cfg.local == NULL)
        return dq_fail(q, DQ_EINVAL, "wheel needs a dq_local");
    if ((rc = dq_opt_i64(q, "batch", &batch)) != DQ_OK ||
        (rc = dq_opt_i64(q, "tick_ms", &tick_ms)) != DQ_OK)
        return rc;
    args.tick_ms = tick_ms;
    /* "leader" or "broadcast": checked against wheel_options by dq_open. */
    args.broadcast = strcmp(dq_opt_get(q, "wake"), "broadcast") == 0;
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return dq_fail(q, DQ_ENOMEM, "wheel: out of memory");
    p->batch = (size_t)batch;
    p->held = malloc(p->batch * sizeof *p->held);
    if (p->held == NULL) {
        rc = dq_fail(q, DQ_ENOMEM, "wheel: out of memory");
        goto free_priv;
    }
    snprintf(p->name, sizeof p->name, "wheel:%s", q->queue);
    p->h = dq_local_get(q->cfg.local, p->name, wheel_create, &args,
                        wheel_destroy);
    if (p->h == NULL) {
        rc = dq_fail(q, DQ_ENOMEM, "wheel: cannot create shared wheel");
        goto free_held;
    }
    /* tick_ms is fixed when the first handle creates the wheel. */
    if (p->h->tick_ms != tick_ms) {
        rc = dq_fail(q, DQ_EINVAL, "wheel: option tick_ms=%lld: queue '%s' "
                     "is already open with tick_ms=%lld", (long long)tick_ms,
                     q->queue, (long long)p->h->tick_ms);
        dq_local_put(q->cfg.local, p->name);
        goto free_held;
    }
    if (p->h->broadcast != args.broadcast) {
        rc = dq_fail(q, DQ_EINVAL, "wheel: option wake=%s: queue '%s' is "
                     "already open with wake=%s",
                     args.broadcast ? "broadcast" : "leader", q->queue,
                     args.broadcast ? "leader" : "broadcast");
        dq_local_put(q->cfg.local, p->name);
        goto free_held;
    }
    q->priv = p;
    return DQ_OK;

free_held:
    free(p->held);
free_priv:
    free(p);
    return rc;
}

/* Frees the buffered tasks (purge: they are gone). */
static void drop_held(wheel_priv *p)
{
    for (size_t i = 0; i < p->count; i++)
        free(node_block(p->held[p->head + i].node));
    p->head = p->count = 0;
}

/* Puts the buffered tasks back into the ready heap (they were due when
 * taken, and the wheel's tick only moves forward, so they belong there),
 * each with its due time and insertion counter, so they come out as if
 * never taken; wakes a waiter, since a due task is now ready.  Out of
 * memory: dropped. */
static void give_back_held(wheel_priv *p)
{
    wheel_shared *h = p->h;

    if (p->count == 0)
        return;
    pthread_mutex_lock(&h->mu);
    if (!reserve(h, p->count)) {
        pthread_mutex_unlock(&h->mu);
        drop_held(p);
        return;
    }
    for (size_t i = 0; i < p->count; i++)
        ready_push(h, p->held[p->head + i]);
    wake_waiters(h);
    pthread_mutex_unlock(&h->mu);
    p->head = p->count = 0;
}

static void wheel_close(dq_queue *q)
{
    wheel_priv *p = q->priv;

    if (p == NULL)
        return;
    give_back_held(p); /* tasks taken but never handed out */
    free(p->held);
    dq_local_put(q->cfg.local, p->name);
    free(p);
    q->priv = NULL;
}

/* Inserts es[0..n) (made, not yet placed) under one lock with at most
 * one signal.  False (nothing inserted) when out of memory. */
static bool insert(dq_queue *q, rent *es, size_t n)
{
    wheel_shared *h = ((wheel_priv *)q->priv)->h;
    int64_t wake = INT64_MAX, before = INT64_MAX;

    pthread_mutex_lock(&h->mu);
    if (!reserve(h, n)) {
        pthread_mutex_unlock(&h->mu);
        return false;
    }
    if (!h->started) {
        h->now = tick_of(h, dq_now_ms(q));
        h->started = true;
    }
    if (h->waiters > 0 && h->leader == NULL)
        before = next_wake_ms(h);
    for (size_t i = 0; i < n; i++) {
        es[i].seq = h->seq++;
        if (h->waiters > 0) {
            int64_t w = node_wake_ms(h, &es[i]);
            if (w < wake)
                wake = w;
        }
        place(h, es[i]);
    }
    wake_for(h, wake, before);
    pthread_mutex_unlock(&h->mu);
    return true;
}

static int wheel_enqueue(dq_queue *q, const char *id, const void *payload,
                         size_t payload_len, int64_t due_ms)
{
    rent e;

    if (!node_new(&e, id, payload, payload_len, due_ms))
        return dq_fail(q, DQ_ENOMEM, "enqueue %s: out of memory", id);
    if (!insert(q, &e, 1)) {
        free(node_block(e.node));
        return dq_fail(q, DQ_ENOMEM, "enqueue %s: out of memory", id);
    }
    return DQ_OK;
}

/* Batched enqueue: the blocks are made outside the lock, then one lock for
 * all n items and at most one signal.  All or nothing (out of memory adds
 * none). */
static int wheel_enqueue_many(dq_queue *q, const dq_enqueue_item *items,
                              size_t n)
{
    rent local[64];
    rent *ns = n <= 64 ? local : malloc(n * sizeof *ns);
    size_t made = 0;

    if (ns == NULL)
        return dq_fail(q, DQ_ENOMEM, "enqueue_many: out of memory");
    for (; made < n; made++) {
        if (!node_new(&ns[made], items[made].id, items[made].payload,
                      items[made].payload_len, items[made].due_ms))
            goto nomem;
    }
    if (!insert(q, ns, n))
        goto nomem;
    if (ns != local)
        free(ns);
    return DQ_OK;

nomem:
    for (size_t i = 0; i < made; i++)
        free(node_block(ns[i].node));
    if (ns != local)
        free(ns);
    return dq_fail(q, DQ_ENOMEM, "enqueue_many: out of memory");
}

static struct timespec mono_ts(int64_t mono_us)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(mono_us / 1000000);
    ts.tv_nsec = (long)(mono_us % 1000000) * 1000;
    return ts;
}

/* Moves task e into *out: its block becomes the payload. */
static void hand_out(const rent *e, dq_task *out)
{
    const wnode *n = e->node;

    memcpy(out->id, node_id(n), n->id_len + 1);
    out->payload = node_block(n);  /* ownership moves to the task */
    out->payload_len = n->payload_len;
    out->due_ms = e->due_ms;
    out->attempt = 0;
}

/* Hands out the next buffered task when it is due by this handle's clock;
 * else waits for that (only after a realtime clock step back) until the
 * claim's deadline.  DQ_OK or DQ_EMPTY.  p->count > 0. */
static int claim_held(dq_queue *q, wheel_priv *p, int64_t timeout_ms,
                      dq_task *out)
{
    int64_t deadline_us = -1;

    for (;;) {
        const rent *e = &p->held[p->head];
        int64_t early_us = e->due_ms * 1000 - dq_now_us(q), left_us;

        if (early_us <= 0) {
            hand_out(e, out);
            p->head++;
            if (--p->count == 0)
                p->head = 0;
            return DQ_OK;
        }
        if (deadline_us < 0)
            deadline_us = dq_deadline_us(timeout_ms);
        left_us = deadline_us - dq_mono_us();
        if (left_us <= 0)
            return DQ_EMPTY;
        dq_sleep_us(early_us < left_us ? early_us : left_us);
        q->counters.wakeups++;
    }
}

#define PREFETCH_MAX 4

/* The tasks the next two claims will likely hand out: the ready head and
 * its children, then the first task of each of the earliest level-0
 * slots, PREFETCH_MAX at most.  Called with h->mu held; fills
 * next[0..return). */
static int next_tasks(const wheel_shared *h, const wnode *next[PREFETCH_MAX])
{
    int k = 0;

    for (size_t i = 0; i < h->nready && i < 3; i++)
        next[k++] = h->ready[i].node;
    for (uint64_t bits = h->map[0]; bits != 0 && k < 2; bits &= bits - 1)
        next[k++] = h->slot[0][__builtin_ctzll(bits)]->e[0].node;
    return k;
}

/* Starts loading the blocks of next[0..k) (prefetch_block), so that the
 * cache misses overlap with what the consumer does until its next claim:
 * for tasks that skipped level 1 and so were not prefetched by its
 * cascade (top comment).  Called after the unlock (here a prefetch issued
 * just before the unlock's locked instruction did not take effect); a
 * task another handle claims and frees in between costs a wasted
 * prefetch, never a fault. */
static void prefetch_tasks(const wnode *const *next, int k)
{
    for (int i = 0; i < k; i++)
        prefetch_block(next[i]);
}

/* One timed wait of a claim that found nothing due: as the leader until
 * wake_ms (realtime, this handle's clock) when there is no leader and the
 * claim's deadline reaches it, else as a follower until the deadline.
 * Called with h->mu held; returns with it held. */
static void wait_once(dq_queue *q, wheel_shared *h, int64_t wake_ms,
                      int64_t now_us, int64_t deadline_us, int64_t left_us)
{
    int64_t delay_us = wake_ms == INT64_MAX ? INT64_MAX
                                            : wake_ms * 1000 - now_us;
    struct timespec ts;

    h->waiters++;
    if (h->broadcast) {
        /* No leader: everyone waits for the next wake-up, or its timeout. */
        ts = mono_ts(delay_us == INT64_MAX || left_us < delay_us
                         ? deadline_us
                         : dq_mono_us() + delay_us);
        pthread_cond_timedwait(&h->available, &h->mu, &ts);
    } else if (delay_us == INT64_MAX || left_us < delay_us ||
               h->leader != NULL) {
        ts = mono_ts(deadline_us);
        pthread_cond_timedwait(&h->available, &h->mu, &ts);
    } else {
        h->leader = q;
        h->leader_wake_ms = wake_ms;
        ts = mono_ts(dq_mono_us() + delay_us);
        pthread_cond_timedwait(&h->available, &h->mu, &ts);
        if (h->leader == q)
            h->leader = NULL;
    }
    h->waiters--;
    q->counters.wakeups++;
}

static int wheel_claim(dq_queue *q, int64_t timeout_ms, dq_task *out)
{
    wheel_priv *p = q->priv;
    wheel_shared *h = p->h;
    int64_t deadline_us = -1;
    const wnode *next[PREFETCH_MAX];
    int nnext = 0;
    bool got = false;

    if (p->count > 0)
        return claim_held(q, p, timeout_ms, out);
    pthread_mutex_lock(&h->mu);
    for (;;) {
        /* The coarse clock first: it is never ahead, so a head due by it
         * is due; only "not due" needs the precise clock (dq.h). */
        int64_t now_us = dq_now_coarse_us(q), left_us;

        sync_now(h, floor_div(now_us, 1000));
        if (h->nready == 0 || h->ready[0].due_ms * 1000 > now_us) {
            now_us = dq_now_us(q);
            sync_now(h, floor_div(now_us, 1000));
        }
        /* due*1000 <= now_us  <=>  dq_now_ms(q) >= due */
        if (h->nready > 0 && h->ready[0].due_ms * 1000 <= now_us) {
            rent e = ready_remove_at(h, 0);

            hand_out(&e, out);
            got = true;
            /* batch > 1: take more due tasks under this lock. */
            while (p->count + 1 < p->batch && h->nready > 0 &&
                   h->ready[0].due_ms * 1000 <= now_us)
                p->held[p->count++] = ready_remove_at(h, 0);
            break;
        }
        if (deadline_us < 0)
            deadline_us = dq_deadline_us(timeout_ms);
        left_us = deadline_us - dq_mono_us();
        if (left_us <= 0)
            break;
        wait_once(q, h, next_wake_ms(h), now_us, deadline_us, left_us);
    }
    /* Hand the leader's job over (broadcast: everyone waits timed). */
    if (!h->broadcast && h->leader == NULL && h->waiters > 0 &&
        h->nready + h->in_wheel > 0)
        pthread_cond_signal(&h->available);
    if (got)
        nnext = next_tasks(h, next);
    pthread_mutex_unlock(&h->mu);
    prefetch_tasks(next, nnext);
    return got ? DQ_OK : DQ_EMPTY;
}

static int wheel_ack(dq_queue *q, const dq_task *t)
{
    (void)q;
    (void)t;
    return DQ_OK;
}

/* Takes entry i of chunk c out of slot s of level k: the head chunk's
 * last entry fills the hole, so only the head chunk is ever partly
 * filled. */
static rent slot_remove(wheel_shared *h, int k, int s, wchunk *c, size_t i)
{
    wchunk *head = h->slot[k][s];
    rent e = c->e[i];

    c->e[i] = head->e[--head->n];
    if (head->n == 0) {
        h->slot[k][s] = head->next;
        chunk_release(h, head);
        if (h->slot[k][s] == NULL)
            h->map[k] &= ~(UINT64_C(1) << s);
    }
    h->in_wheel--;
    return e;
}

/* Finds task id and takes it out of the ready heap or its slot into *out.
 * Called with h->mu held.  False when no such pending task. */
static bool detach(wheel_shared *h, const char *id, rent *out)
{
    for (size_t i = 0; i < h->nready; i++) {
        if (strcmp(node_id(h->ready[i].node), id) == 0) {
            *out = ready_remove_at(h, i);
            return true;
        }
    }
    for (int k = 0; k < LEVELS; k++) {
        for (uint64_t bits = h->map[k]; bits != 0; bits &= bits - 1) {
            int s = __builtin_ctzll(bits);

            for (wchunk *c = h->slot[k][s]; c != NULL; c = c->next) {
                for (size_t i = 0; i < c->n; i++) {
                    if (strcmp(node_id(c->e[i].node), id) == 0) {
                        *out = slot_remove(h, k, s, c, i);
                        return true;
                    }
                }
            }
        }
    }
    return false;
}

static int wheel_cancel(dq_queue *q, const char *id)
{
    wheel_shared *h = ((wheel_priv *)q->priv)->h;
    rent e;
    bool found;

    pthread_mutex_lock(&h->mu);
    found = detach(h, id, &e);
    if (found && (h->leader != NULL || h->broadcast))
        wake_waiters(h); /* a wait may be for a task that is gone */
    pthread_mutex_unlock(&h->mu);
    if (!found)
        return dq_fail(q, DQ_ENOTFOUND, "cancel %s: no such pending task", id);
    free(node_block(e.node));
    return DQ_OK;
}

static int wheel_reschedule(dq_queue *q, const char *id, int64_t due_ms)
{
    wheel_shared *h = ((wheel_priv *)q->priv)->h;
    int64_t before = INT64_MAX;
    rent e;

    pthread_mutex_lock(&h->mu);
    if (!detach(h, id, &e)) {
        pthread_mutex_unlock(&h->mu);
        return dq_fail(q, DQ_ENOTFOUND, "reschedule %s: no such pending task",
                       id);
    }
    if (h->waiters > 0 && h->leader == NULL)
        before = next_wake_ms(h);
    e.due_ms = due_ms;           /* keeps its insertion counter */
    wake_for(h, node_wake_ms(h, &e), before);
    place(h, e);
    pthread_mutex_unlock(&h->mu);
    return DQ_OK;
}

/* Tasks in the shared wheel plus this handle's batch buffer. */
static int64_t wheel_pending(dq_queue *q)
{
    wheel_priv *p = q->priv;
    wheel_shared *h = p->h;
    int64_t n;

    pthread_mutex_lock(&h->mu);
    n = (int64_t)(h->nready + h->in_wheel);
    pthread_mutex_unlock(&h->mu);
    return n + (int64_t)p->count;
}

static int wheel_purge(dq_queue *q)
{
    wheel_priv *p = q->priv;
    wheel_shared *h = p->h;

    drop_held(p);
    pthread_mutex_lock(&h->mu);
    free_all(h);
    pthread_mutex_unlock(&h->mu);
    return DQ_OK;
}

static int wheel_exists(dq_queue *q)
{
    return wheel_pending(q) > 0 ? 1 : 0;
}

const dq_strategy dq_strategy_wheel = {
    .name = "wheel",
    .summary = "in-process hierarchical timing wheel (11 levels x 64 slots, "
               "tick_ms) with the heap's leader-follower wait; no Redis, "
               "lost on process exit",
    .flags = DQ_G_AT_MOST_ONCE | DQ_G_BLOCKS | DQ_G_NO_DUP_CONCURRENT |
             DQ_G_DUE_ORDER,
    .min_redis = NULL,
    .options = wheel_options,
    .open = wheel_open,
    .enqueue = wheel_enqueue,
    .claim = wheel_claim,
    .ack = wheel_ack,
    .close = wheel_close,
    .cancel = wheel_cancel,
    .reschedule = wheel_reschedule,
    .pending = wheel_pending,
    .purge = wheel_purge,
    .exists = wheel_exists,
    .doc = "No Redis: a hierarchical timing wheel per queue name in this "
        "process (Varghese and Lauck 1987; the cascading levels of Kafka's "
        "TimingWheel, with a bitmap per level to skip empty slots): 11 "
        "levels of 64 slots, level k's slots 64^k ticks of tick_ms wide.  "
        "An enqueue drops the task into a slot in O(1) whatever the "
        "backlog; as time passes, slots cascade into finer levels and then "
        "into a small heap of ready tasks, which hands them out in due "
        "order.  A task is never delivered before its due time by the "
        "consumer's clock, and when consumers keep up at most tick_ms - 1 "
        "ms late plus the wake-up latency (a waiting consumer wakes once "
        "per tick; exact at the default tick_ms=1).  The same "
        "leader-follower wait as the heap (one consumer waits timed), "
        "batch=N as the heap; at-most-once, no duplicates, due order.  "
        "Cancel and reschedule scan, O(n).  Everything is lost when the "
        "process exits.  wake=broadcast: the heap's herd baseline (no "
        "leader, every enqueue wakes all waiters).",
    .enqueue_many = wheel_enqueue_many,
};
