/* tmpdir.h -- dqlab's temporary directories, and removing the ones a
 * killed dqlab left behind.
 *
 * `dqlab run` keeps its event log in $TMPDIR/dqlab-run-XXXXXX and every
 * private redis-server lives in $TMPDIR/dqlab-redis-XXXXXX.  Every exit
 * path removes them, except one: SIGKILL (or a crash) of dqlab itself.  So
 * each such directory carries an owner record, the file
 * DQ_TMPDIR_OWNER_FILE holding the creating process's pid, its start time
 * (field 22 of /proc/PID/stat, clock ticks since boot) and the boot id
 * (/proc/sys/kernel/random/boot_id) and the pid namespace
 * (/proc/self/ns/pid), and every new one is created only after the stale
 * ones were removed: a directory is stale when its owner is gone, i.e. the
 * machine has booted since, or -- for an owner in our pid namespace -- no
 * process has that pid now, or the process that has it started at another
 * time (the pid was reused).  See proc(5).
 *
 * What the sweep never touches: anything whose name is not exactly
 * dqlab-redis-XXXXXX or dqlab-run-XXXXXX (XXXXXX as mkdtemp(3) makes it),
 * a symlink, a directory of another user, a directory without a readable,
 * well-formed owner record (made by an older dqlab, or one that is being
 * created right now), one whose owner is alive, one whose owner lives in
 * another pid namespace, and one whose liveness cannot be read (a /proc
 * error other than "no such process").
 */
#ifndef DQ_TMPDIR_H
#define DQ_TMPDIR_H

#include <stddef.h>
#include <sys/types.h>

/* The owner record inside each directory. */
#define DQ_TMPDIR_OWNER_FILE ".dqlab-owner"

/* The temporary root: $TMPDIR when set, not empty and at most 200 bytes,
 * else "/tmp". */
const char *dq_tmpdir_root(void);

/* Removes the stale dqlab temporary directories under root (rules above),
 * each with everything inside it (not crossing into other file systems,
 * never following a symlink).  Returns how many it removed.  Errors are
 * not reported: a directory that cannot be read or removed stays. */
int dq_tmpdir_sweep(const char *root);

/* Sweeps dq_tmpdir_root(), then creates a new directory
 * dq_tmpdir_root()/PREFIX-XXXXXX with mkdtemp(3) and writes its owner
 * record (this process).  prefix is "dqlab-run" or "dqlab-redis" (the
 * names the sweep knows).  Registers the directory and its record with
 * dq_signals_on_force_remove (signals.h); the caller registers the files
 * it puts inside.  Returns 0 with the path in dir (dirlen >= 256 is
 * enough), or -1 with a one-line message in err (nothing left behind). */
int dq_tmpdir_create(const char *prefix, char *dir, size_t dirlen,
                     char *err, size_t errlen);

/* Removes dir's owner record and then dir itself (rmdir: only once the
 * caller removed what it put inside), and forgets both in the forced-exit
 * table.  Harmless when they are gone already. */
void dq_tmpdir_remove(const char *dir);

/* The owner of a directory, as recorded (for tests and the sweep). */
typedef struct dq_tmpdir_owner {
    pid_t pid;
    unsigned long long start_ticks; /* field 22 of /proc/PID/stat */
    char boot_id[40];               /* "" when unknown */
    char pid_ns[40];                /* "pid:[N]" of /proc/self/ns/pid,
                                       "" when unknown */
} dq_tmpdir_owner;

/* The owner record of process pid (its start time, the boot id and this
 * process's pid namespace, read from /proc now).  Returns 0, or -1 when /proc/PID/stat cannot be read
 * (no such process). */
int dq_tmpdir_owner_of(pid_t pid, dq_tmpdir_owner *o);

/* Writes the owner record of o into directory dir as the new file
 * dir/DQ_TMPDIR_OWNER_FILE, in one write(2): a sweep that reads it half
 * written finds it malformed and leaves the directory alone.  Returns 0,
 * or -1 with errno set (the file removed). */
int dq_tmpdir_write_owner(const char *dir, const dq_tmpdir_owner *o);

#endif
