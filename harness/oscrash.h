/* oscrash.h -- a host crash (power loss, kernel panic) of the private
 * redis-server: SIGKILL, then drop every AOF byte and directory entry that
 * was not yet durable, then restart.
 *
 * Why: SIGKILL alone (dq_redis_server_restart, the restart-redis fault)
 * leaves the AOF in the kernel's page cache, so `appendfsync everysec`
 * loses nothing and cannot be told from `always`.  Redis documents the
 * difference as what a disaster costs: everysec "fsync every second ...
 * you may lose 1 second of data if there is a disaster"; always "fsync
 * every time new commands are appended to the AOF. Very very slow, very
 * safe ... a single write and a single fsync (before sending the
 * replies)" (https://redis.io/docs/management/persistence/, "How durable
 * is the append only file?").  What survives a host crash is what POSIX
 * promises after fsync: "all data for the open file descriptor named by
 * fildes is to be transferred to the storage device ... The fsync()
 * function shall not return until the system has completed that action"
 * (POSIX.1-2017, fsync(3p)); a directory entry after an fsync of its
 * directory.
 *
 * How: the server is started with harness/aofshim.c preloaded
 * (build/<variant>/libdqaofshim.so), which appends to <dir>/aofshim.log
 * the length of each file its last successful fsync made durable and the
 * AOF directory's entries at each fsync of the directory; aofshim.c's top
 * comment states the model and what it simplifies.  LazyFS
 * (github.com/dsrhaslab/lazyfs) is the prior art for losing un-fsynced
 * data; it does so with a FUSE mount and keeps directory operations.
 *
 * What Redis 7.0 does about it (src/aof.c, flushAppendOnlyFile): with
 * always, the AOF buffer is written and fdatasync'ed before the replies
 * of that event-loop iteration are sent, so an acknowledged write is
 * durable; with everysec the fsync runs in a background thread when the
 * wall-clock second changes, and "if the fsync is still in progress we can
 * try to delay the write for a couple of seconds" (at most 2: "we can't
 * wait over two seconds"), so a crash loses the writes of the last one to
 * two seconds.
 *
 * Use (the os-crash fault's row calls these):
 *   dq_oscrash_server_start(&s, "everysec", ...)   or set
 *       dq_redis_server_opts.preload from dq_oscrash_shim_path();
 *   ... traffic ...
 *   dq_oscrash_crash(&s, "everysec", &st, ...)     SIGKILL + apply + restart;
 *   dq_redis_server_stop(&s).
 * Call from the thread that started the server (PR_SET_PDEATHSIG,
 * redis_server.h).
 */
#ifndef DQ_OSCRASH_H
#define DQ_OSCRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "redis_server.h"

/* What one simulated crash dropped, and when. */
typedef struct dq_oscrash_stats {
    int64_t bytes_dropped;  /* AOF-directory bytes written but not durable:
                               file tails past their last fsync, plus whole
                               files whose entry was not durable */
    int files_truncated;    /* files cut back to their durable length */
    int names_removed;      /* entries created after the directory's last
                               fsync, removed */
    int names_restored;     /* renames and unlinks after it, undone */
    int names_missing;      /* durable entries whose file was gone (the
                               model could not bring them back; 0 unless
                               something bypassed the shim) */
    int64_t kill_us;        /* dq_mono_us() just before the SIGKILL */
    int64_t applied_us;     /* dq_mono_us() when the AOF was cut back */
    int64_t up_us;          /* dq_mono_us() when the restarted server
                               answered PING; 0 when not restarted */
} dq_oscrash_stats;

/* Absolute path of the shim into out (outlen bytes): $DQ_AOFSHIM when
 * set, else libdqaofshim.so next to the running executable, one directory
 * up (build/<variant>/tests/test_*), or in ../build/default (bin/dqlab).
 * Returns 0, or -1 with a one-line message in err naming `make`. */
int dq_oscrash_shim_path(char *out, size_t outlen, char *err, size_t errlen);

/* Starts a private server (dq_redis_server_start) with AOF on in mode
 * appendfsync ("everysec" or "always") and the shim preloaded.  Returns 0,
 * or -1 with a message in err and nothing left running. */
int dq_oscrash_server_start(dq_redis_server *s, const char *appendfsync,
                            char *err, size_t errlen);

/* True when s runs with the shim (started with a preload). */
bool dq_oscrash_armed(const dq_redis_server *s);

/* Applies the crash to server directory `dir` after every process of the
 * server is dead: restores <dir>/appendonlydir to its entries at its last
 * fsync, truncates every file there to its last fsynced length (0 when
 * never fsynced), fills *st (byte and entry counts; the times are left
 * alone), and rewrites <dir>/aofshim.log to the state left (all of it now
 * durable), so that a later crash starts from it.  A missing AOF directory
 * is not an error (nothing to drop).  Returns 0, or -1 with a one-line
 * message in err: no bookkeeping although AOF files exist (the server ran
 * without the shim), an unreadable or overflowed bookkeeping record, or a
 * file operation that failed (path and strerror). */
int dq_oscrash_apply(const char *dir, dq_oscrash_stats *st, char *err,
                     size_t errlen);

/* The host crash: SIGKILL to the server's process group (the server and
 * any AOF-rewrite child it forked, as a power loss would), reap, apply
 * (dq_oscrash_apply), then restart with the same shim, port and dir and
 * appendonly mode `appendonly` ("everysec" or "always"), waiting until it
 * answers PING (dq_redis_server_restart).  Fills *st.  Returns 0, or -1
 * with a message in err (the server was not started with the shim, the
 * apply failed, or the restart failed; s->pid is 0 after a failure past
 * the kill, and the directory is kept for dq_redis_server_stop). */
int dq_oscrash_crash(dq_redis_server *s, const char *appendonly,
                     dq_oscrash_stats *st, char *err, size_t errlen);

#endif
