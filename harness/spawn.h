/* spawn.h -- fork+exec of the harness's child processes (the private
 * redis-server, consumer processes) and reaping them, in one place.
 *
 * Why one helper: every child must get the same care -- its own process
 * group, death with dqlab (PR_SET_PDEATHSIG), signal actions and mask
 * reset, no inherited descriptors beyond 0-2 (hiredis 0.14.1 opens its
 * sockets without O_CLOEXEC, so without the close a consumer or a restarted
 * redis-server would hold the harness's Redis connections), and
 * registration in the forced-exit table of signals.h.
 */
#ifndef DQ_SPAWN_H
#define DQ_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

/* Forks and execs path with argv (NULL-terminated) and envp (NULL: the
 * current environ).  The child: setpgid(0, 0); PR_SET_PDEATHSIG = SIGKILL
 * (tied to the calling thread: call from a thread that outlives the
 * child); SIGINT/SIGTERM/SIGHUP/SIGPIPE back to default, pending ones of
 * the first three dropped, signal mask emptied; stdin/stdout/stderr from
 * in_fd/out_fd/err_fd (-1: /dev/null; a descriptor given must be >= 3 or
 * equal to its target); every other descriptor closed; exec; _exit(127)
 * if exec fails.  Signals are blocked in the parent around fork(), and the
 * child pid is registered with dq_signals_on_force_kill().  Returns once
 * the child has exec'd (or died before it: a close-on-exec pipe tells,
 * spawn.c), so that a signal sent to the pid afterwards reaches the new
 * program and is never among the ones dropped before exec.  Returns the
 * pid, or -1 with errno set (pipe or fork failed). */
pid_t dq_spawn(const char *path, char *const argv[], char *const envp[],
               int in_fd, int out_fd, int err_fd);

/* Reaps pid if it has exited: forgets it in the forced-exit table first
 * (waitid with WNOWAIT leaves it a zombie, so its pid cannot be reused
 * meanwhile), then waitpid.  Blocks until it exits when `block`.  Returns
 * pid when reaped (wait status in *status), 0 when still running, -1 on
 * error (ECHILD: not our child or already reaped; it is forgotten too). */
pid_t dq_spawn_reap(pid_t pid, int *status, bool block);

#endif
