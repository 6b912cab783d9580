/* redis_server.h -- a private redis-server owned by the harness.
 *
 * Without --redis, dqlab starts its own redis-server on 127.0.0.1, a free
 * port and a fresh temporary directory, with persistence off unless asked,
 * and stops it on every exit path: normal return, error, Ctrl-C (the
 * signal handler only sets a flag, signals.h; the command's main path then
 * calls dq_redis_server_stop -- never call it from a handler), and the
 * death of dqlab itself (the child is started with PR_SET_PDEATHSIG =
 * SIGKILL, see prctl(2)).  The child runs in its own process group, so a
 * terminal Ctrl-C reaches dqlab only and the trial can end in order.  Its
 * temporary directory carries an owner record (tmpdir.h): when dqlab
 * itself is killed and cannot remove it, the next dqlab does.
 *
 * PR_SET_PDEATHSIG fires when the *thread* that forked exits: call
 * dq_redis_server_start from the main thread.
 */
#ifndef DQ_REDIS_SERVER_H
#define DQ_REDIS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct dq_redis_server {
    pid_t pid;          /* 0 when not running */
    int port;
    char dir[256];      /* temporary directory, removed at stop */
    char version[32];   /* from INFO server, e.g. "7.0.15" */
    char binary[512];   /* the redis-server executable started (restart) */
    char preload[512];  /* shared object preloaded into it, "" for none */
} dq_redis_server;

typedef struct dq_redis_server_opts {
    const char *binary;      /* NULL: "redis-server" from PATH */
    const char *appendonly;  /* NULL/"no", or "everysec" / "always" */
    int port;                /* 0: pick a free port */
    const char *preload;     /* NULL, or the absolute path of a shared object
                                to LD_PRELOAD into the server (and into it
                                again at restart); the server's environment
                                then also holds DQ_REDIS_DIR=<its dir>, from
                                which the object finds its files (the AOF
                                shim, oscrash.h) */
    /* Added last (older initializers stay valid).  Used by start only:
     * restart runs the plain command line again (with the preload). */
    const char *config;      /* NULL, or the text of a config file written
                                to DIR/redis.conf before the start and
                                passed as the first argument (Sentinel
                                needs a config file it can rewrite,
                                replset.h) */
    const char *const *args; /* NULL, or at most DQ_REDIS_SERVER_MAX_ARGS
                                more arguments, NULL-terminated, appended
                                after dqlab's own (a later one wins): e.g.
                                "--replicaof", "127.0.0.1 6390" */
} dq_redis_server_opts;

#define DQ_REDIS_SERVER_MAX_ARGS 16

/* Starts the server and waits (up to 5 s) until it answers PING.  Returns
 * 0 with *s filled, or -1 with a one-line message in err (errlen bytes):
 * "redis-server not found in PATH (apt-get install redis-server)", a
 * preload that is not a readable absolute path, more than
 * DQ_REDIS_SERVER_MAX_ARGS args, a config file that cannot be written, or
 * what the server printed when it failed to start.  Leaves nothing behind
 * on failure. */
int dq_redis_server_start(dq_redis_server *s, const dq_redis_server_opts *o,
                          char *err, size_t errlen);

/* Stops it (SIGTERM, then SIGKILL after 3 s), reaps it and removes its
 * directory.  Safe to call twice and on a zeroed struct. */
void dq_redis_server_stop(dq_redis_server *s);

/* Crashes and restarts the server (the restart-redis fault, faults.h):
 * SIGKILL, reap, then start redis-server again on the same port, dir and
 * preload with appendonly "no", "everysec" or "always" (the AOF written
 * before the crash, if any, is loaded from the dir), and wait until it
 * answers PING (up to 5 s, longer while it says LOADING).  Call from the
 * thread that started it (PR_SET_PDEATHSIG).  Returns 0, or -1 with a
 * message in err; on failure s->pid is 0 (nothing runs) and the directory
 * is kept for dq_redis_server_stop. */
int dq_redis_server_restart(dq_redis_server *s, const char *appendonly,
                            char *err, size_t errlen);

#endif
