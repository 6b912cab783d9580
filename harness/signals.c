/* signals.c -- Ctrl-C / SIGTERM handling (signals.h).
 *
 * Why only a flag: a handler may run on any thread at any point (inside
 * malloc, inside hiredis), so it must not stop servers or free anything.
 * It stores the signal in a sig_atomic_t and asks running trials to stop;
 * the command's main path sees the flag, lets the trial return, runs the
 * check on what was logged and stops the private redis-server.
 */
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "signals.h"
#include "trial.h"

static volatile sig_atomic_t caught_sig;

static void on_signal(int sig)
{
    if (caught_sig != 0) {
        /* Second signal: give up on the orderly shutdown. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    caught_sig = sig;
    dq_trial_interrupt();
}

void dq_signals_install(void)
{
    struct sigaction sa;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

bool dq_signals_caught(void)
{
    return caught_sig != 0;
}

int dq_signals_which(void)
{
    return caught_sig;
}
