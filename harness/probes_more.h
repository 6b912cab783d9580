/* probes_more.h -- more of `dqlab probes` (probes.h): claims C22, C27 and
 * C28, each decided by one interaction with a real Redis.
 *
 *   C22  a Stream entry added with an id in the future (XADD s
 *        <now+60000>-0 ...) is readable at once by XREAD and XREADGROUP
 *        (ids are not delays); later XADD * ids sort after it; an earlier
 *        explicit id is refused; acks and reclaim (XACK, XAUTOCLAIM) work
 *   C28  a plain List knows only arrival order: tasks due at +300 ms and
 *        then +100 ms, a consumer that waits for each popped task's due
 *        time, and the second task's lateness (the head-of-line wait),
 *        beside the same two tasks in a ZSet
 *   C27  the cost of keyspace notifications: a TTL-key workload (SET k v
 *        PX 100 with a subscriber listening) with notify-keyspace-events
 *        "" and "Ex" alternately, on a private redis-server of its own
 *        (the setting is server-wide, and INFO cpu must see no one else's
 *        work): median write throughput and server CPU per 1,000 keys
 *
 * Rows go to the same probes.csv, in the same format (probes.h: claim,
 * probe, action, observed, verdict_input with decimal integers only):
 *   C22 future-id      readable_xread, readable_xreadgroup (1/0),
 *                      ahead_ms (id time - time of the read), delay_ms
 *   C22 auto-id        auto_after (1: the XADD * id sorts after the future
 *                      one), auto_ahead_ms (its ms part - now),
 *                      rejected_earlier (1: XADD <now>-0 was an error)
 *   C22 ack-reclaim    reclaimed (entries XAUTOCLAIM moved to a second
 *                      consumer), acked (XACK's reply), pending_after
 *   C28 list-vs-zset   list_late_a_us, list_late_b_us, zset_late_a_us,
 *                      zset_late_b_us (lateness of each task, us),
 *                      list_b_first, zset_b_first (1: B, due first, was
 *                      delivered first), hol_ms (due A - due B, 200)
 *   C27 ttl-keys-notify  measured (0: the private server could not be
 *                      started; observed says why, nothing else follows),
 *                      repeats, write_ms, off_keys_per_s, on_keys_per_s,
 *                      off_cpu_us_per_1k, on_cpu_us_per_1k (medians over
 *                      the repeats), rate_ratio_pm, cpu_ratio_pm (on / off
 *                      in thousandths), off_keys, on_keys (keys written
 *                      over all runs of each setting), off_events,
 *                      on_events (expired events the subscriber received
 *                      in them: 0, and on_keys)
 */
#ifndef DQ_PROBES_MORE_H
#define DQ_PROBES_MORE_H

#include <stddef.h>
#include <stdio.h>

#include "redis_url.h"

typedef struct dq_probes_more_opts {
    int c27_write_ms; /* write phase of one C27 run, ms, 1..60000 (200) */
    int c27_repeats;  /* C27 runs per setting, 1..64 (5) */
} dq_probes_more_opts;

/* Runs the C22, C28 and C27 probes and appends their rows (no header) to
 * csv.  C22 and C28 use the Redis at t, keys "<prefix>:<name>" (prefix as
 * probes.c makes it, "dqprobe:{<pid>.<ms>}"), deleted before returning on
 * every path; C27 starts and stops a redis-server of its own, from the
 * calling thread (call it from the main thread: redis_server.h).  o NULL:
 * the defaults above.  Takes about 1 s plus the C27 runs (about 0.8 s
 * each at the defaults: the write phase, then the expiry of its keys).
 * Returns 0, 130 when a signal arrived (signals.h; the rows written so
 * far stay in csv), or -1 with one line in err (errlen bytes) naming the
 * probe and what failed. */
int dq_probes_more_run(const dq_redis_target *t, const char *prefix,
                       FILE *csv, const dq_probes_more_opts *o, char *err,
                       size_t errlen);

#endif
