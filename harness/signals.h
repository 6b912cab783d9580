/* signals.h -- Ctrl-C / SIGTERM handling for the dqlab commands.
 *
 * The handlers only record the signal and call dq_trial_interrupt() (both
 * async-signal-safe); the cleanup itself (stopping the private
 * redis-server, removing temp files) runs on the normal return paths of
 * the commands, which check dq_signals_caught().  A second signal while
 * the first is being handled restores the default action and re-raises it,
 * so a stuck shutdown can still be interrupted; the private redis-server
 * then dies through PR_SET_PDEATHSIG (redis_server.c).
 */
#ifndef DQ_SIGNALS_H
#define DQ_SIGNALS_H

#include <stdbool.h>

/* Installs handlers for SIGINT, SIGTERM and SIGHUP and ignores SIGPIPE (a
 * write to a Redis connection the server closed must return EPIPE, not
 * kill dqlab).  Call once, from the main thread, before starting threads. */
void dq_signals_install(void);

/* True once SIGINT, SIGTERM or SIGHUP arrived. */
bool dq_signals_caught(void);

/* The number of the first signal caught, 0 if none. */
int dq_signals_which(void);

#endif
