/* tmpdir.c -- dqlab's temporary directories with owner records, and the
 * sweep that removes those of a dqlab that died (contracts in tmpdir.h).
 *
 * Why pid plus start time: a pid alone is reused by the kernel, so a dead
 * dqlab's directory could be kept forever behind an unrelated process, or
 * -- worse, were liveness judged by the pid alone in the other direction --
 * a live run's directory taken for stale.  The start time in clock ticks
 * since boot (field 22 of /proc/PID/stat) tells two processes with one pid
 * apart; the boot id (/proc/sys/kernel/random/boot_id) tells two boots
 * apart, since the tick count restarts at each boot.  proc(5).
 *
 * Why the sweep is cautious: other dqlab runs and test suites run on the
 * same machine and share $TMPDIR.  A directory is removed only when every
 * check says it is ours to remove (tmpdir.h lists them); any doubt keeps
 * it.  The sweep is silent: it is housekeeping, and a note on stderr would
 * add a line to messages that must stay one line.
 */
#define _GNU_SOURCE /* mkdtemp(3), nftw(3) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "signals.h"
#include "tmpdir.h"

static const char *const known_prefixes[] = {"dqlab-redis-", "dqlab-run-",
                                             NULL};

const char *dq_tmpdir_root(void)
{
    const char *t = getenv("TMPDIR");

    if (t == NULL || *t == '\0' || strlen(t) > 200)
        return "/tmp";
    return t;
}

/* True when name is exactly one of known_prefixes followed by the six
 * characters mkdtemp(3) puts in place of XXXXXX. */
static bool is_dqlab_name(const char *name)
{
    for (size_t i = 0; known_prefixes[i] != NULL; i++) {
        size_t n = strlen(known_prefixes[i]);
        const char *x;

        if (strncmp(name, known_prefixes[i], n) != 0)
            continue;
        x = name + n;
        if (strlen(x) != 6)
            continue;
        for (int k = 0; k < 6; k++)
            if (strchr("abcdefghijklmnopqrstuvwxyz"
                       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", x[k]) == NULL)
                return false;
        return true;
    }
    return false;
}

/* Reads at most len - 1 bytes of the regular file at dirfd/name (no
 * symlink followed) into buf.  Returns the length, or -1 (errno set). */
static ssize_t read_small(int dirfd, const char *name, char *buf, size_t len)
{
    struct stat st;
    ssize_t n;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    n = read(fd, buf, len - 1);
    close(fd);
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

/* The pid namespace of this process ("pid:[4026531836]"), "" when
 * unknown: pids and /proc/PID name processes of one namespace only. */
static void pid_ns(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/ns/pid", buf, len - 1);

    buf[n > 0 ? n : 0] = '\0';
    if (strpbrk(buf, " \t\r\n") != NULL)
        buf[0] = '\0';
}

static void boot_id(char *buf, size_t len)
{
    char tmp[64];
    ssize_t n = read_small(AT_FDCWD, "/proc/sys/kernel/random/boot_id", tmp,
                           sizeof tmp);

    buf[0] = '\0';
    if (n > 0) {
        size_t k = strcspn(tmp, " \t\r\n");
        if (k < len) {
            memcpy(buf, tmp, k);
            buf[k] = '\0';
        }
    }
}

/* The start time of pid from /proc/PID/stat.  Returns 0; -1 with errno
 * ENOENT or ESRCH when there is no such process; -1 with another errno
 * when it cannot be told. */
static int start_ticks(pid_t pid, unsigned long long *out)
{
    char path[64], buf[1024];
    const char *p;
    ssize_t n;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    n = read_small(AT_FDCWD, path, buf, sizeof buf);
    if (n <= 0) {
        if (n == 0)
            errno = EIO;
        return -1;
    }
    /* "PID (COMM) STATE ..." -- COMM may hold blanks and ')', so the
     * fields are counted from the last ')': STATE is field 3, the start
     * time field 22. */
    p = strrchr(buf, ')');
    if (p == NULL) {
        errno = EIO;
        return -1;
    }
    p++;
    for (int field = 3; field <= 22; field++) {
        char *end;

        while (*p == ' ')
            p++;
        if (field == 22) {
            errno = 0;
            *out = strtoull(p, &end, 10);
            if (end == p || errno != 0) {
                errno = EIO;
                return -1;
            }
            return 0;
        }
        p = strchr(p, ' ');
        if (p == NULL) {
            errno = EIO;
            return -1;
        }
    }
    errno = EIO;
    return -1;
}

int dq_tmpdir_owner_of(pid_t pid, dq_tmpdir_owner *o)
{
    memset(o, 0, sizeof *o);
    o->pid = pid;
    if (start_ticks(pid, &o->start_ticks) != 0)
        return -1;
    boot_id(o->boot_id, sizeof o->boot_id);
    pid_ns(o->pid_ns, sizeof o->pid_ns);
    return 0;
}

int dq_tmpdir_write_owner(const char *dir, const dq_tmpdir_owner *o)
{
    char path[4200], rec[160];
    int fd, n, saved;

    snprintf(path, sizeof path, "%s/%s", dir, DQ_TMPDIR_OWNER_FILE);
    n = snprintf(rec, sizeof rec, "dqlab-owner pid=%ld start=%llu boot=%s "
                 "ns=%s\n", (long)o->pid, o->start_ticks,
                 o->boot_id[0] ? o->boot_id : "-",
                 o->pid_ns[0] ? o->pid_ns : "-");
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
              0644);
    if (fd < 0)
        return -1;
    if (write(fd, rec, (size_t)n) != n) {
        saved = errno ? errno : EIO;
        close(fd);
        unlink(path);
        errno = saved;
        return -1;
    }
    if (close(fd) != 0) {
        saved = errno;
        unlink(path);
        errno = saved;
        return -1;
    }
    return 0;
}

/* Parses an owner record.  Returns false when it is malformed. */
static bool parse_owner(const char *rec, dq_tmpdir_owner *o)
{
    long pid;
    int used = 0;

    memset(o, 0, sizeof *o);
    if (sscanf(rec, "dqlab-owner pid=%ld start=%llu boot=%39s ns=%39s%n",
               &pid, &o->start_ticks, o->boot_id, o->pid_ns, &used) != 4 ||
        pid <= 0 || rec[used] != '\n' || rec[used + 1] != '\0')
        return false;
    o->pid = (pid_t)pid;
    if (strcmp(o->boot_id, "-") == 0)
        o->boot_id[0] = '\0';
    if (strcmp(o->pid_ns, "-") == 0)
        o->pid_ns[0] = '\0';
    return true;
}

/* True when the owner is certainly gone: another boot, or (in our pid
 * namespace) no process with its pid, or a process with its pid that
 * started at another time.  An owner in another pid namespace cannot be
 * seen from here: never gone. */
static bool owner_gone(const dq_tmpdir_owner *o)
{
    char now_boot[40], now_ns[40];
    unsigned long long start;

    boot_id(now_boot, sizeof now_boot);
    if (o->boot_id[0] != '\0' && now_boot[0] != '\0' &&
        strcmp(o->boot_id, now_boot) != 0)
        return true;
    pid_ns(now_ns, sizeof now_ns);
    if (o->pid_ns[0] == '\0' || now_ns[0] == '\0' ||
        strcmp(o->pid_ns, now_ns) != 0)
        return false;
    if (start_ticks(o->pid, &start) != 0)
        return errno == ENOENT || errno == ESRCH;
    return start != o->start_ticks;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

/* Whether root/name is a stale dqlab directory (tmpdir.h). */
static bool is_stale(int rootfd, const char *name)
{
    char rec[256];
    struct stat st;
    dq_tmpdir_owner o;
    bool stale = false;
    int fd;

    if (!is_dqlab_name(name))
        return false;
    fd = openat(rootfd, name,
                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == geteuid() &&
        read_small(fd, DQ_TMPDIR_OWNER_FILE, rec, sizeof rec) > 0 &&
        parse_owner(rec, &o) && owner_gone(&o))
        stale = true;
    close(fd);
    return stale;
}

int dq_tmpdir_sweep(const char *root)
{
    DIR *d = opendir(root);
    struct dirent *de;
    int removed = 0;

    if (d == NULL)
        return 0;
    while ((de = readdir(d)) != NULL) {
        char path[4200];

        if (!is_stale(dirfd(d), de->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", root, de->d_name);
        nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        if (access(path, F_OK) != 0)
            removed++;
    }
    closedir(d);
    return removed;
}

int dq_tmpdir_create(const char *prefix, char *dir, size_t dirlen,
                     char *err, size_t errlen)
{
    const char *root = dq_tmpdir_root();
    char owner_path[4200];
    dq_tmpdir_owner o;

    dq_tmpdir_sweep(root);
    if ((size_t)snprintf(dir, dirlen, "%s/%s-XXXXXX", root, prefix) >=
        dirlen) {
        snprintf(err, errlen, "%s: temporary path too long", root);
        dir[0] = '\0';
        return -1;
    }
    if (mkdtemp(dir) == NULL) {
        snprintf(err, errlen, "mkdtemp %s: %s", dir, strerror(errno));
        dir[0] = '\0';
        return -1;
    }
    if (dq_tmpdir_owner_of(getpid(), &o) != 0 ||
        dq_tmpdir_write_owner(dir, &o) != 0) {
        snprintf(err, errlen, "%s: cannot write its owner record: %s", dir,
                 strerror(errno));
        rmdir(dir);
        dir[0] = '\0';
        return -1;
    }
    snprintf(owner_path, sizeof owner_path, "%s/%s", dir,
             DQ_TMPDIR_OWNER_FILE);
    dq_signals_on_force_remove(dir, true);
    dq_signals_on_force_remove(owner_path, false);
    return 0;
}

void dq_tmpdir_remove(const char *dir)
{
    char owner_path[4200];

    if (dir == NULL || dir[0] == '\0')
        return;
    snprintf(owner_path, sizeof owner_path, "%s/%s", dir,
             DQ_TMPDIR_OWNER_FILE);
    unlink(owner_path);
    rmdir(dir);
    dq_signals_forget_remove(owner_path);
    dq_signals_forget_remove(dir);
}
