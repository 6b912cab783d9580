/* signals.c -- Ctrl-C / SIGTERM handling (signals.h).
 *
 * Why only a flag on the first signal: a handler may run on any thread at
 * any point (inside malloc, inside hiredis), so it must not stop servers
 * or free anything.  It stores the signal, and that one flag is the stop
 * request everybody reads (dq_signals_caught(): trials, experiments, the
 * bench, consumer processes); the command's main path sees it, lets the
 * trial return, runs the check on what was logged, stops the private
 * redis-server and removes its temporary files.
 *
 * Why repeated signals within DQ_SIGNALS_FORCE_MS count as one: the old
 * rule ("a second signal restores SIG_DFL and re-raises") fired on the
 * duplicate that timeout(1) sends to the process group right after the one
 * it sends to the child, so the orderly shutdown never ran and
 * /tmp/dqlab-redis-* and /tmp/dqlab-run-* were left behind.
 *
 * Why a forced exit still cleans up: when someone really insists (a third
 * signal, or a second one after the grace period), we exit at once, but
 * first do what is async-signal-safe (signal-safety(7)): kill(2) and
 * waitpid(2) the registered children, unlink(2) / rmdir(2) the registered
 * paths, write(2) one line, _exit(2).  The registries are fixed arrays of
 * slots whose state is a lock-free C11 atomic, so the handler may read
 * them on any thread while the main thread registers and forgets.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "signals.h"

#define NSLOTS 16
#define PATH_MAX_LEN 4096

enum { SLOT_FREE, SLOT_BUSY, SLOT_ARMED };

typedef struct kill_slot {
    atomic_int state;
    pid_t pid;
} kill_slot;

typedef struct remove_slot {
    atomic_int state;
    unsigned seq;            /* registration order, for rmdir in reverse */
    bool is_dir;
    char path[PATH_MAX_LEN];
} remove_slot;

static atomic_int caught_sig;     /* first signal number, 0 if none */
static atomic_int nsignals;       /* signals received so far */
static atomic_llong first_ms;     /* CLOCK_MONOTONIC ms of the first one */
static atomic_int forcing;        /* a handler is doing the forced exit */
static atomic_uint next_seq;
static pid_t owner_pid;           /* the process that installed them */
static kill_slot kill_slots[NSLOTS];
static remove_slot remove_slots[NSLOTS];

static long long mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The forced exit.  Only async-signal-safe calls from here on. */
static void force_exit(int sig)
{
    static const char msg[] = "dqlab: signal repeated: exiting at once "
                              "(private redis-server killed, temporary "
                              "files removed)\n";
    bool done[NSLOTS] = {false};

    for (int i = 0; i < NSLOTS; i++)
        if (atomic_load(&kill_slots[i].state) == SLOT_ARMED)
            kill(kill_slots[i].pid, SIGKILL);
    for (int i = 0; i < NSLOTS; i++)
        if (atomic_load(&kill_slots[i].state) == SLOT_ARMED)
            while (waitpid(kill_slots[i].pid, NULL, 0) < 0 && errno == EINTR)
                ;
    for (int i = 0; i < NSLOTS; i++)
        if (atomic_load(&remove_slots[i].state) == SLOT_ARMED &&
            !remove_slots[i].is_dir)
            unlink(remove_slots[i].path);
    /* Directories, newest first (a directory registered inside another
     * must go before it). */
    for (;;) {
        int best = -1;
        for (int i = 0; i < NSLOTS; i++)
            if (!done[i] &&
                atomic_load(&remove_slots[i].state) == SLOT_ARMED &&
                remove_slots[i].is_dir &&
                (best < 0 || remove_slots[i].seq > remove_slots[best].seq))
                best = i;
        if (best < 0)
            break;
        done[best] = true;
        rmdir(remove_slots[best].path);
    }
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* nothing more to do */
    }
    _exit(128 + sig);
}

static void on_signal(int sig)
{
    int saved_errno = errno;
    int n;
    long long now, first;

    /* A child forked by some library call before it exec'd: not ours to
     * handle (its parent gets the same signal). */
    if (getpid() != owner_pid)
        goto out;
    n = atomic_fetch_add(&nsignals, 1) + 1;
    now = mono_ms();
    if (n == 1) {
        atomic_store(&first_ms, now);
        atomic_store(&caught_sig, sig);
        goto out;
    }
    first = atomic_load(&first_ms);
    if (n < 3 && (first == 0 || now - first < DQ_SIGNALS_FORCE_MS))
        goto out; /* the same request delivered twice */
    if (atomic_exchange(&forcing, 1) == 0)
        force_exit(sig);
out:
    errno = saved_errno;
}

void dq_signals_install(void)
{
    struct sigaction sa;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};

    owner_pid = getpid();
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&sa.sa_mask, sigs[i]);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

bool dq_signals_caught(void)
{
    return atomic_load(&caught_sig) != 0;
}

int dq_signals_which(void)
{
    return atomic_load(&caught_sig);
}

int dq_signals_on_force_kill(pid_t pid)
{
    if (pid <= 0)
        return -1;
    for (int i = 0; i < NSLOTS; i++) {
        int expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&kill_slots[i].state, &expect,
                                           SLOT_BUSY)) {
            kill_slots[i].pid = pid;
            atomic_store(&kill_slots[i].state, SLOT_ARMED);
            return 0;
        }
    }
    return -1;
}

void dq_signals_forget_kill(pid_t pid)
{
    for (int i = 0; i < NSLOTS; i++) {
        int expect = SLOT_ARMED;
        /* Own the slot first: pid is only stable while it is ARMED and
         * on_force_kill may be filling a slot that was FREE. */
        if (!atomic_compare_exchange_strong(&kill_slots[i].state, &expect,
                                            SLOT_BUSY))
            continue;
        if (kill_slots[i].pid == pid) {
            kill_slots[i].pid = 0;
            atomic_store(&kill_slots[i].state, SLOT_FREE);
        } else {
            atomic_store(&kill_slots[i].state, SLOT_ARMED);
        }
    }
}

int dq_signals_on_force_remove(const char *path, bool is_dir)
{
    if (path == NULL || path[0] == '\0' || strlen(path) >= PATH_MAX_LEN)
        return -1;
    for (int i = 0; i < NSLOTS; i++) {
        int expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&remove_slots[i].state, &expect,
                                           SLOT_BUSY)) {
            remove_slot *s = &remove_slots[i];
            memcpy(s->path, path, strlen(path) + 1);
            s->is_dir = is_dir;
            s->seq = atomic_fetch_add(&next_seq, 1);
            atomic_store(&s->state, SLOT_ARMED);
            return 0;
        }
    }
    return -1;
}

void dq_signals_forget_remove(const char *path)
{
    if (path == NULL)
        return;
    for (int i = 0; i < NSLOTS; i++) {
        int expect = SLOT_ARMED;
        /* Own the slot first (see dq_signals_forget_kill). */
        if (!atomic_compare_exchange_strong(&remove_slots[i].state, &expect,
                                            SLOT_BUSY))
            continue;
        if (strcmp(remove_slots[i].path, path) == 0) {
            remove_slots[i].path[0] = '\0';
            atomic_store(&remove_slots[i].state, SLOT_FREE);
        } else {
            atomic_store(&remove_slots[i].state, SLOT_ARMED);
        }
    }
}
