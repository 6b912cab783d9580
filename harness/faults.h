/* faults.h -- the faults a trial can inject, and how they are written.
 *
 * A fault is given as a spec "NAME[:ARG]..." (`dqlab run --fault SPEC`,
 * repeatable; `faults = SPEC, SPEC` in an experiment file, one trial per
 * item, "none" for no fault).  The trial (trial.c) injects it at a time or
 * point picked from the trial seed, so a trial with the same seed injects
 * the same faults at the same points, and records every fault window in
 * the event log as F records (eventlog.h gives the exact conventions).
 *
 *   kill-consumer:POINT[:N]     SIGKILL a consumer process at POINT of
 *                               its k-th claim (k seeded), N times (1);
 *                               POINT: after-claim (claim returned, before
 *                               the D record), during-work (after D, half
 *                               way through the work), before-ack (after
 *                               the work, before ack).  A replacement
 *                               consumer is started.  Needs consumer mode
 *                               process (the trial switches to it).
 *   restart-redis:MODE[:AT_MS]  SIGKILL the harness-owned redis-server at
 *                               AT_MS after the first enqueue (seeded when
 *                               absent) and start it again on the same
 *                               port and dir.  MODE: off (no persistence:
 *                               everything is gone), everysec or always
 *                               (AOF appendfsync).  Private server only.
 *   pause-redis:MS[:AT_MS]      SIGSTOP the server for MS, then SIGCONT.
 *                               Private server only.
 *   subscriber-outage:MS[:AT_MS] every consumer stops (thread mode: closes
 *                               its handle; process mode: SIGTERM, a clean
 *                               exit; an in-process strategy's all-in-one
 *                               process: its consumer threads close their
 *                               handles, told through the child's stdin,
 *                               while its producers go on) for MS, then
 *                               consumers start again.
 *   clock-skew:[+|-]MS          consumer c0's clock (dq_config.
 *                               clock_offset_us) runs MS ahead (+) or
 *                               behind (-) for the whole trial.
 *   mover-stall[:AT_MS]         CLIENT KILL ID of every connection of the
 *                               trial's queue (named "dqlab:<queue>:...",
 *                               rconn.h client names) that is subscribed
 *                               (flag P in CLIENT LIST) or blocked in a
 *                               command (flag b): the parts that move or
 *                               wake tasks lose their connection once and
 *                               must reconnect.  Other clients of the
 *                               server are never touched.  Only for
 *                               strategies declaring DQ_G_BLOCKS (a
 *                               polling strategy has nothing to drop).
 *                               The trial fails when Redis refuses CLIENT
 *                               LIST or CLIENT KILL (an ACL user without
 *                               CLIENT) or no such connection is found:
 *                               a fault that did nothing is never
 *                               recorded as done.
 *
 * Seeded times: AT_MS absent means a time in [max(50, D/5), max(that,
 * D/2)] ms after the first enqueue, D = the trial's delay_max_ms, picked
 * from the seed and the fault's position in the list.
 */
#ifndef DQ_FAULTS_H
#define DQ_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../strategies/dq.h"

#define DQ_MAX_FAULTS 8

typedef enum dq_fault_kind {
    DQ_FAULT_NONE = 0,
    DQ_FAULT_KILL_CONSUMER,
    DQ_FAULT_RESTART_REDIS,
    DQ_FAULT_PAUSE_REDIS,
    DQ_FAULT_SUBSCRIBER_OUTAGE,
    DQ_FAULT_CLOCK_SKEW,
    DQ_FAULT_MOVER_STALL,
} dq_fault_kind;

typedef enum dq_kill_point {
    DQ_KILL_NONE = 0,
    DQ_KILL_AFTER_CLAIM,
    DQ_KILL_DURING_WORK,
    DQ_KILL_BEFORE_ACK,
} dq_kill_point;

typedef struct dq_fault {
    dq_fault_kind kind;
    dq_kill_point point;  /* kill-consumer */
    int count;            /* kill-consumer: kills in the trial (>= 1) */
    char mode[12];        /* restart-redis: "off", "everysec", "always" */
    int64_t ms;           /* pause / outage length; clock skew (signed) */
    int64_t at_ms;        /* after the first enqueue; -1: seeded */
} dq_fault;

/* Parses one spec ("kill-consumer:after-claim:3", "clock-skew:-200").
 * Returns 0 with *f filled, or -1 with one line in err (errlen bytes)
 * naming the spec and what is wrong.  "none" is not a fault: the caller
 * handles it. */
int dq_fault_parse(const char *spec, dq_fault *f, char *err, size_t errlen);

/* The canonical spec of f ("kill-consumer:after-claim:3") into buf. */
void dq_fault_format(const dq_fault *f, char *buf, size_t buflen);

/* The fault's name as written in specs and F records ("kill-consumer"),
 * or "none". */
const char *dq_fault_name(dq_fault_kind k);
/* "after-claim", "during-work", "before-ack", or "none". */
const char *dq_kill_point_name(dq_kill_point p);
/* Parses a point name; DQ_KILL_NONE when unknown. */
dq_kill_point dq_kill_point_parse(const char *s);

/* True when the fault acts on the redis-server process itself (restart-
 * redis, pause-redis): it needs the harness-owned private server. */
bool dq_fault_needs_server(const dq_fault *f);
/* True when the fault needs consumers in separate processes
 * (kill-consumer). */
bool dq_fault_needs_process(const dq_fault *f);

/* Whether the harness can apply fault f to strategy s at all, whatever
 * the server and the consumer mode (both of which every fault handles):
 * restart-redis, pause-redis and mover-stall need a strategy that uses
 * Redis (DQ_G_NEEDS_REDIS); mover-stall also needs one whose consumers
 * block (DQ_G_BLOCKS), since only a subscribed or blocked connection is
 * what it drops.  Returns true, or false with one line in why (whylen
 * bytes) naming the strategy and the reason, for `dqlab run` to refuse
 * (exit 2) and for experiment files to skip the combination.  The one
 * rule for the CLI, the experiments and dq_trial_run.  f "none" (kind
 * DQ_FAULT_NONE) always applies. */
bool dq_fault_applies(const dq_fault *f, const dq_strategy *s, char *why,
                      size_t whylen);

/* The hidden subcommand that runs a consumer process (or, for in-process
 * strategies, a whole producers+consumers process) of a process-mode
 * trial; started by trial.c as `/proc/self/exe __child ...`, never by
 * people.  Implemented in consumer_proc.c. */
#define DQ_CHILD_COMMAND "__child"
int dq_cmd_child(int argc, char **argv);

#endif
