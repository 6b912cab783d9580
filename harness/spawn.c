/* spawn.c -- fork+exec and reap of harness children (spawn.h).
 *
 * The child runs only async-signal-safe calls between fork and exec
 * (signal-safety(7)): the process may have other threads holding locks.
 * Descriptors are closed with close_range(2) (glibc >= 2.34, Linux >= 5.9),
 * falling back to a close(2) loop up to RLIMIT_NOFILE read before fork
 * (getrlimit/sysconf are not on the async-signal-safe list).
 *
 * Why dq_spawn waits for the exec: between fork and exec the child drops
 * any pending SIGINT/SIGTERM/SIGHUP (one sent to dqlab's process group
 * before setpgid is dqlab's to handle, not the child's).  A SIGTERM the
 * parent itself sends in that window -- a trial that ends a few
 * microseconds after it started a replacement consumer -- would be
 * dropped too, and the child would run until the stop gives up on it.  So
 * the parent reads a close-on-exec pipe whose write end the child holds:
 * end of file means the exec happened (or the child died), and every
 * signal the parent sends after dq_spawn returns reaches the new program.
 */
#define _GNU_SOURCE /* close_range(2) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "signals.h"
#include "spawn.h"

extern char **environ;

/* Child side: puts src on target (src < 0: devnull) and keeps it open
 * across exec. */
static void child_fd(int src, int target, int devnull)
{
    if (src < 0)
        src = devnull;
    if (src < 0)
        return;
    if (src != target)
        dup2(src, target);
    else
        fcntl(target, F_SETFD, 0);
}

/* Parent side: blocks until the child holding the write end of the
 * notify pipe (read end fd) exec'd or died: end of file.  Closes fd. */
static void wait_exec(int fd)
{
    char b;

    while (read(fd, &b, 1) < 0 && errno == EINTR)
        ;
    close(fd);
}

pid_t dq_spawn(const char *path, char *const argv[], char *const envp[],
               int in_fd, int out_fd, int err_fd)
{
    pid_t parent = getpid(), pid;
    sigset_t block, old;
    struct rlimit rl;
    unsigned int maxfd = 65536;
    char *const *env = envp ? envp : environ;
    int saved, notify[2];

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < 1048576)
        maxfd = (unsigned int)rl.rlim_cur;
    if (pipe2(notify, O_CLOEXEC) != 0)
        return -1;

    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    pid = fork();
    if (pid != 0) {
        saved = errno;
        close(notify[1]);
        if (pid > 0)
            dq_signals_on_force_kill(pid);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (pid > 0)
            wait_exec(notify[0]);
        else
            close(notify[0]);
        errno = saved;
        return pid; /* parent, or -1 */
    }

    /* Child: only async-signal-safe calls until exec. */
    sigset_t all;
    int devnull, keep = notify[1];
    close(notify[0]);
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127); /* the parent died before prctl took effect */
    /* SIG_IGN discards a pending signal (POSIX sigaction): one sent to
     * dqlab's process group before setpgid is dqlab's to handle. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    /* The notify pipe must survive the dup2s below and the close_range. */
    if (keep < 3) {
        int moved = fcntl(keep, F_DUPFD_CLOEXEC, 3);
        close(keep);
        keep = moved;
    }
    devnull = -1;
    if (in_fd < 0 || out_fd < 0 || err_fd < 0)
        devnull = open("/dev/null", O_RDWR);
    child_fd(in_fd, 0, devnull);
    child_fd(out_fd, 1, devnull);
    child_fd(err_fd, 2, devnull);
    if (keep < 3 ||
        (keep > 3 && close_range(3, (unsigned int)keep - 1, 0) != 0) ||
        close_range((unsigned int)keep + 1, ~0U, 0) != 0)
        for (unsigned int fd = 3; fd < maxfd; fd++)
            if ((int)fd != keep)
                close((int)fd);
    execve(path, argv, env);
    _exit(127);
}

pid_t dq_spawn_reap(pid_t pid, int *status, bool block)
{
    siginfo_t si;

    memset(&si, 0, sizeof si);
    while (waitid(P_PID, (id_t)pid, &si,
                  WEXITED | WNOWAIT | (block ? 0 : WNOHANG)) != 0) {
        if (errno != EINTR) {
            dq_signals_forget_kill(pid);
            return -1;
        }
    }
    if (si.si_pid != pid)
        return 0;
    dq_signals_forget_kill(pid);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return pid;
}
