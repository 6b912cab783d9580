/* witness.h -- `dqlab witness`: short scripted trials that make one
 * failure (or cost) of a strategy happen on purpose, capture what Redis saw
 * while it happened, and draw it as a message sequence chart.
 *
 *   dqlab witness [--results DIR] [--only LIST] [--seed N]
 *
 * The report teaches *why* a strategy fails; these charts are its
 * evidence: drawn from a real trial of this run, never by hand.  Each
 * witness runs on a private redis-server of its own (redis_server.h) with
 * a MONITOR connection whose lines carry the server's timestamp and the
 * client's address, mapped to consumer names through the names dqlab
 * gives its connections ("dqlab:<queue>:<consumer>", rconn.h).  The
 * strategies are driven through the dq_* API (threads, and a forked
 * consumer process for the SIGKILL), every enqueue, delivery and ack goes
 * to an event log (eventlog.h) that `dqlab check` re-checks, and an
 * attempt that did not show the event is repeated with the next seed
 * (naive's race is real, so it may take a few; the others happen by
 * construction and are repeated only after a machine stall), up to a
 * number of attempts and a time budget per witness (the table in
 * witness.c: naive 50 attempts or 8 s, the others 5 or 4 s).
 *
 * The witnesses (--only takes a comma-separated list of these names):
 *   naive-duplicate   naive, consumers c0 and c1 polling every 1 ms, a
 *                     few tasks due at once: both ZRANGEBYSCORE the same
 *                     head before either ZREMs it, both deliver it
 *   lease-redelivery  lua-lease, lease_ms 300: consumer process c0 claims
 *                     and is SIGKILLed before its ack; c1 claims the task
 *                     again, attempt 2, once the lease has run out
 *   expiry-loss       expiry: the shadow key expires while no consumer is
 *                     subscribed; the observer sees the `expired` event go
 *                     out to 0 channel subscribers; c0 subscribes after it
 *                     and never gets the task, whose payload stays in Redis
 *   lua-late-head     lua, poll_ms 200: c0 sleeps for a head due in 300 ms
 *                     (the sleep is capped at poll_ms); a producer then
 *                     adds a task due in 20 ms, which waits until c0 wakes:
 *                     about poll_ms - 20 ms late
 *
 * What MONITOR cannot show (Redis 7.0): replies, and what the server does
 * on its own -- a key deleted by the active expire cycle and the keyspace
 * event it publishes are not client commands.  So the expiry witness adds
 * an observer connection (PSUBSCRIBE __keyevent@0__:expired: a pattern
 * subscriber, which PUBSUB NUMSUB does not count) whose received events
 * join the capture, and asks PUBSUB NUMSUB itself.  Replies drawn on a
 * chart are either real (the witness's own commands: NUMSUB, HEXISTS), or
 * derived, and then labelled so: ZREM's 1 and 0 from the order of the two
 * ZREMs, a script's result from the delivery in the event log.
 *
 * Files, under DIR/witness/<YYYYmmdd-HHMMSS>/ (default DIR: results), a new
 * directory per run (never overwritten); DIR/witness/latest points at it
 * only once every selected witness was witnessed and written:
 *   <name>.msc           mscgen source of the chart.  Entities: producer,
 *                        c0, c1, redis, and where relevant "keyspace
 *                        events" (the observer) or "witness" (the witness's
 *                        own checks).  The first line is "# <title>", and
 *                        the title (the first divider) names the strategy
 *                        and the witnessed task id.  Arcs are commands (=>),
 *                        replies (>>), Pub/Sub messages (->); boxes are
 *                        event-log records (E, D, A, F) and notes remarks.
 *                        Every label starts "+<ms> ms:" relative to T, the
 *                        time of the first command drawn; T is in the
 *                        header comment as us since the epoch, and times in
 *                        ms near T inside labels are written T+<ms>.  Keys
 *                        are shortened to their suffix (dq:{Q}:z -> z).
 *   <name>.svg, .png     the chart rendered by mscgen
 *   <name>.monitor.txt   the raw capture of the winning attempt: '#'
 *                        comment lines (title, "# client <addr> <name>" for
 *                        each connection of its queue), then every MONITOR
 *                        line of those connections as Redis sent it (lines
 *                        "[0 lua]" ran inside the script of the EVAL/EVALSHA
 *                        above them), and for expiry-loss the observer's
 *                        events as "<s.us> [event] "pmessage" "<channel>"
 *                        "<message>"" with their receipt time
 *   <name>.log           the event log of that attempt (eventlog.h; H
 *                        witness <name> among its headers); `dqlab check`
 *                        reads it: naive's shows a duplicate (exit 0, the
 *                        strategy declares it), lease-redelivery a
 *                        redelivery, expiry-loss one task lost in a
 *                        subscriber-outage window, lua-late-head two
 *                        deliveries and the late one's lateness
 *   witness.csv          one row per measured quantity:
 *                          witness,strategy,task_id,attempts,quantity,value
 *                        value a decimal integer, its unit the quantity's
 *                        suffix (_us, _ms) or a count.  Every witness has
 *                        rows witnessed (1/0), elapsed_ms (the witness's
 *                        wall time, server start included), seed; then:
 *                        naive-duplicate: poll_ms, tasks_per_attempt,
 *                          first_find_to_remove_us, second_find_to_remove_us
 *                          (each consumer's ZRANGEBYSCORE to its ZREM),
 *                          second_find_before_first_remove_us (how long
 *                          before the first ZREM the second consumer read
 *                          the head: the race window, > 0),
 *                          first_delivery_after_due_us,
 *                          second_delivery_after_due_us, duplicates (the
 *                          checker's count in the log)
 *                        lease-redelivery: lease_ms, poll_ms,
 *                          first_attempt, kill_after_claim_us,
 *                          reclaim_after_claim_us (>= lease_ms * 1000),
 *                          reclaim_after_lease_us (past the deadline),
 *                          reclaim_attempt (2), empty_claims (c1's claim
 *                          scripts that found nothing due meanwhile),
 *                          redelivered (the checker's count)
 *                        expiry-loss: delay_ms, event_after_due_us,
 *                          channel_subscribers_at_event (0),
 *                          expired_keys (INFO stats delta, 1),
 *                          subscribed_after_event_us, claim_wait_ms,
 *                          delivered (0), payload_left (1), lost (checker)
 *                        lua-late-head: poll_ms, head_delay_ms,
 *                          new_delay_ms, enqueue_after_sleep_us (the new
 *                          task's enqueue after c0's empty claim script),
 *                          sleep_us (that script to the next one of c0),
 *                          new_lateness_us, bound_us (poll_ms*1000 -
 *                          new_delay_ms*1000 - enqueue_after_sleep_us: the
 *                          lateness the capped sleep predicts),
 *                          head_lateness_us
 *   meta.txt             runmeta.h's key = value lines (command, started,
 *                        duration_ms, redis_version, seed, env), and per
 *                        witness "seen.<name> = <one sentence>"
 *
 * Exit: 0 every selected witness witnessed and written; 2 bad input (one
 * line: an unknown option or witness name; nothing written), mscgen or
 * redis-server missing, an error, or a witness not seen within its
 * attempts (the others still run; its rows say witnessed 0 and the run
 * directory keeps what was written, but latest is not moved); 130
 * interrupted (latest not moved).
 */
#ifndef DQ_WITNESS_H
#define DQ_WITNESS_H

/* `dqlab witness`: argv[0] is "witness".  Returns the exit code above. */
int dq_witness_cmd(int argc, char **argv);

#endif
