/* signals.h -- Ctrl-C / SIGTERM handling for the dqlab commands.
 *
 * The handlers only record the signal (async-signal-safe); that record is
 * the one stop request of the process: running trials, experiment loops,
 * the bench and consumer processes poll dq_signals_caught() and stop
 * soon.  The cleanup itself (stopping the private redis-server, removing
 * temp files) runs on the normal return paths of the commands.
 *
 * Repeated signals: one keypress or one `timeout`/`kill` often delivers
 * the same signal twice within milliseconds (timeout(1) signals the child
 * and then its whole process group), so a second signal less than
 * DQ_SIGNALS_FORCE_MS after the first counts as the same request and the
 * orderly shutdown goes on.  A third signal, or a second one at least
 * DQ_SIGNALS_FORCE_MS after the first, forces the exit: the handler then
 * does what a handler may do (kill(2), waitpid(2), unlink(2), rmdir(2),
 * write(2) are async-signal-safe, see signal-safety(7)): SIGKILLs the
 * processes registered with dq_signals_on_force_kill(), removes the files
 * and empty directories registered with dq_signals_on_force_remove(),
 * prints one line and calls _exit(128 + signal number).
 */
#ifndef DQ_SIGNALS_H
#define DQ_SIGNALS_H

#include <stdbool.h>
#include <sys/types.h>

/* A repeated signal this many ms or more after the first forces the exit. */
#define DQ_SIGNALS_FORCE_MS 2000

/* Installs handlers for SIGINT, SIGTERM and SIGHUP and ignores SIGPIPE (a
 * write to a Redis connection the server closed must return EPIPE, not
 * kill dqlab).  Call from the main thread, before starting threads.
 * Calling it again is harmless (a signal already caught stays caught). */
void dq_signals_install(void);

/* True once SIGINT, SIGTERM or SIGHUP arrived: the stop request.  Sticky
 * (a trial started afterwards stops at once, so an experiment loop stops
 * too) and async-signal-safe; a lock-free atomic read, so worker threads
 * may poll it in their loops. */
bool dq_signals_caught(void);

/* The number of the first signal caught, 0 if none. */
int dq_signals_which(void);

/* Forced-exit cleanup.  Register from ordinary code (not from a handler);
 * the tables are small (16 entries each) and meant for the few things a
 * forced exit must not leave behind: the private redis-server and its and
 * the run's temporary directories.
 *
 * dq_signals_on_force_kill: on a forced exit, SIGKILL pid (> 0) and reap
 * it.  Forget it with dq_signals_forget_kill(pid) BEFORE the child is
 * reaped elsewhere, so that a reused pid is never killed.
 *
 * dq_signals_on_force_remove: on a forced exit, unlink(2) path (is_dir
 * false) or rmdir(2) it (is_dir true; only works once empty, so register
 * the files inside too).  Files are removed before directories, and
 * directories in the reverse order of registration.  path is copied
 * (at most 4095 bytes).  Forget it with dq_signals_forget_remove(path)
 * once removed or no longer to be removed.
 *
 * Both return 0, or -1 when the table is full or the argument is invalid
 * (nothing is registered then; the normal cleanup paths still run). */
int dq_signals_on_force_kill(pid_t pid);
void dq_signals_forget_kill(pid_t pid);
int dq_signals_on_force_remove(const char *path, bool is_dir);
void dq_signals_forget_remove(const char *path);

#endif
