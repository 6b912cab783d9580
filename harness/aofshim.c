/* aofshim.c -- an LD_PRELOAD shim that records, for the private
 * redis-server, what of its append-only file a host crash would keep.
 *
 * Why: the restart-redis fault SIGKILLs redis-server, and the AOF it wrote
 * stays in the kernel's page cache, so after the restart nothing is lost
 * whatever appendfsync says.  A host crash (power loss, kernel panic)
 * loses every byte that was written but not yet fsynced.  This shim is
 * loaded into the server (oscrash.h: the harness starts it with
 * LD_PRELOAD and DQ_REDIS_DIR=<server dir>) and appends to a side file
 * what became durable; after the SIGKILL, dq_oscrash_apply() (oscrash.c)
 * cuts the AOF directory back to that.  The side file is the harness's
 * own bookkeeping and is not subject to the simulated crash.
 *
 * It is a separate shared object, never linked into libdq.a or dqlab, and
 * built without sanitizers: redis-server is not instrumented.
 *
 * What Redis 7.0 does (read from `strace -f` of the Debian 7.0.15 binary
 * and from aof.c / rio.c / util.c):
 *   - the AOF lives in <dir>/appendonlydir: a base file (RDB preamble), incr
 *     files opened with O_APPEND and written with write(2), and a manifest
 *     written to temp-appendonly.aof.manifest, fdatasync'ed, rename(2)d
 *     over appendonly.aof.manifest, then the directory fdatasync'ed
 *     (writeAofManifestFile, fsyncFileDir);
 *   - redis_fsync is fdatasync on Linux: the bio thread calls it about once
 *     a second with everysec, the main thread after each write with always;
 *   - a base file is written with stdio (fwrite, so glibc's internal write
 *     that no LD_PRELOAD sees) into temp-rewriteaof-<pid>.aof in <dir>,
 *     fsync'ed, and renamed into appendonlydir (rewriteAppendOnlyFile,
 *     backgroundRewriteDoneHandler); old files are removed with unlink(2)
 *     (bg_unlink) after the manifest no longer lists them;
 *   - a short write is undone with ftruncate, a torn AOF tail cut at load
 *     with truncate (aof-load-truncated);
 *   - sync_file_range(2) during rewrites starts writeback but makes nothing
 *     durable (its man page: no metadata, no guarantee after a crash), so
 *     it is not interposed and counts for nothing.
 * `nm -D /usr/bin/redis-server` lists the calls interposed here: fsync,
 * fdatasync, open64, fopen, fopen64, ftruncate64, truncate64, rename,
 * unlink (open, ftruncate and truncate too, for other builds).
 *
 * The model (POSIX fsync(2): "all data for the open file descriptor ... is
 * transferred to the storage device"; a new or renamed directory entry is
 * durable only after an fsync of the directory):
 *   - file data: a file's durable content is the prefix it had when its
 *     last successful fsync/fdatasync started (st_size sampled just before
 *     the call; bytes written while the call runs may or may not be on disk,
 *     so they count as lost).  Keyed by inode, so durability follows a
 *     file through rename.  The files are assumed append-only, which is
 *     how Redis writes them; an overwrite inside the durable prefix (pwrite
 *     or lseek back) would not be modelled, which is why write, writev and
 *     pwrite need no interposition at all.  A truncation (ftruncate,
 *     truncate, O_TRUNC, fopen "w") lowers the durable length to the new
 *     size;
 *   - entries of the AOF directory: the set of (name, inode) it held when
 *     it was last fsynced.  A crash undoes every later create, rename and
 *     unlink in it.  To be able to undo a rename over a file or an unlink,
 *     the shim first hard-links the victim into <dir>/aofshim-keep/<inode>
 *     and drops that link once a directory fsync no longer lists it;
 *   - simplified: the AOF directory's own entry is durable once created
 *     (Redis never fsyncs its parent; a strict model would lose the whole
 *     AOF of every fresh server), entries outside it (Redis's temporary
 *     rewrite files, its log) are left as they are, and hard links, renameat
 *     and unlinkat (which Redis does not call) are not modelled.
 * LazyFS (github.com/dsrhaslab/lazyfs; Ramos et al., "When Amnesia
 * Strikes", VLDB 2024) is the prior art: a FUSE file system whose own page
 * cache drops un-fsynced data on a fault; it passes rename, mkdir and
 * rmdir straight to the backing file system (lazyfs_ops_dir.cpp), so its
 * directory entries are always durable.  This shim needs no FUSE mount.
 *
 * Side file <dir>/aofshim.log, one record a line, each appended with one
 * write(2) on an O_APPEND descriptor (atomic with respect to the other
 * threads and the rewrite child), so a SIGKILL leaves whole records:
 *   S <ino> <len> <path>   fsync of a regular file succeeded; <len> bytes
 *                          of inode <ino> are durable (last record wins)
 *   T <ino> <len>          inode truncated to <len>: durable = min(.., len)
 *   U <ino>                inode freed (its last name removed): forget it
 *   D [<ino>:<name>]...    the AOF directory's entries at a successful
 *                          fsync of it (regular files only)
 *   X                      a directory too large to record: the model is
 *                          unusable from here on (dq_oscrash_apply fails)
 * Fields are separated by tabs.  State here is static on purpose: a shim
 * has no handle to carry it; it is set once in the constructor.
 */
#define _GNU_SOURCE /* RTLD_NEXT, open64, ftruncate64 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define SNAP_MAX 32768 /* bytes of one D record */
#define SNAP_INOS 2048 /* entries of one D record */

static bool g_on;              /* DQ_REDIS_DIR was set and usable */
static dev_t g_dev;            /* its device: inode numbers are per device */
static char g_aofdir[PATH_MAX];
static char g_log[PATH_MAX];
static char g_keep[PATH_MAX];

/* The next definition of `name` (libc's), looked up once.  A benign race:
 * two threads store the same pointer. */
#define REAL(name)                                                          \
    static __typeof__(&name) real_##name;                                   \
    if (real_##name == NULL)                                                \
        real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

__attribute__((constructor)) static void shim_init(void)
{
    const char *d = getenv("DQ_REDIS_DIR");
    struct stat st;

    if (d == NULL || d[0] != '/' || strlen(d) > PATH_MAX - 32 ||
        stat(d, &st) != 0)
        return;
    g_dev = st.st_dev;
    snprintf(g_aofdir, sizeof g_aofdir, "%s/appendonlydir", d);
    snprintf(g_log, sizeof g_log, "%s/aofshim.log", d);
    snprintf(g_keep, sizeof g_keep, "%s/aofshim-keep", d);
    g_on = true;
}

/* Appends one record to the side file with one write(2). */
static void emit(const char *buf, size_t n)
{
    REAL(open);
    int fd;

    if (real_open == NULL)
        return;
    fd = real_open(g_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, buf, n) < 0) {
        /* Nothing to tell: the server's stderr is /dev/null.  A lost S
         * record only makes the crash drop more. */
    }
    close(fd);
}

static void emit_ino(char kind, ino_t ino, const char *tail)
{
    char buf[PATH_MAX + 64];
    int n = snprintf(buf, sizeof buf, "%c\t%ju%s\n", kind, (uintmax_t)ino,
                     tail);
    if (n > 0 && (size_t)n < sizeof buf)
        emit(buf, (size_t)n);
}

static void emit_trunc(ino_t ino, off_t len)
{
    char tail[32];
    snprintf(tail, sizeof tail, "\t%jd", (intmax_t)len);
    emit_ino('T', ino, tail);
}

/* True when st is a regular file on the server's device. */
static bool tracked(const struct stat *st)
{
    return g_on && S_ISREG(st->st_mode) && st->st_dev == g_dev;
}

/* True when the directory holding `path` is the AOF directory. */
static bool in_aofdir(const char *path)
{
    char parent[PATH_MAX];
    const char *slash = strrchr(path, '/');
    struct stat a, p;

    if (slash == NULL)
        snprintf(parent, sizeof parent, ".");
    else if (slash == path)
        snprintf(parent, sizeof parent, "/");
    else
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
    return stat(parent, &p) == 0 && stat(g_aofdir, &a) == 0 &&
           p.st_dev == a.st_dev && p.st_ino == a.st_ino;
}

/* Hard-links path into the keep directory as <ino>, so that a crash can
 * bring back the entry about to be removed.  True when it is kept. */
static bool keep(const char *path, ino_t ino)
{
    char dst[PATH_MAX + 32];

    if (mkdir(g_keep, 0755) != 0 && errno != EEXIST)
        return false;
    snprintf(dst, sizeof dst, "%s/%ju", g_keep, (uintmax_t)ino);
    return link(path, dst) == 0 || errno == EEXIST;
}

/* Formats the D record of the AOF directory into buf and its inodes into
 * inos.  Returns the record's length, 0 when the directory cannot be read,
 * or -1 when it does not fit. */
static int snapshot(char *buf, size_t cap, ino_t *inos, size_t *ninos)
{
    DIR *d = opendir(g_aofdir);
    struct dirent *e;
    size_t n = 1;

    *ninos = 0;
    if (d == NULL)
        return 0;
    buf[0] = 'D';
    while ((e = readdir(d)) != NULL) {
        int w;
        if (e->d_type != DT_REG || strpbrk(e->d_name, "\t\n:") != NULL)
            continue;
        w = snprintf(buf + n, cap - n, "\t%ju:%s", (uintmax_t)e->d_ino,
                     e->d_name);
        if (w < 0 || (size_t)w >= cap - n - 1 || *ninos == SNAP_INOS) {
            closedir(d);
            return -1;
        }
        n += (size_t)w;
        inos[(*ninos)++] = e->d_ino;
    }
    closedir(d);
    buf[n++] = '\n';
    return (int)n;
}

/* Drops the keep links the directory no longer needs: those whose inode
 * is not among the ninos entries just made durable. */
static void prune_keep(const ino_t *inos, size_t ninos)
{
    REAL(unlink);
    DIR *d = opendir(g_keep);
    struct dirent *e;

    if (d == NULL || real_unlink == NULL) {
        if (d != NULL)
            closedir(d);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        char path[PATH_MAX + 300];
        struct stat st;
        bool needed = false;

        if (e->d_name[0] == '.')
            continue;
        for (size_t i = 0; i < ninos && !needed; i++)
            needed = inos[i] == e->d_ino;
        if (needed)
            continue;
        snprintf(path, sizeof path, "%s/%s", g_keep, e->d_name);
        if (lstat(path, &st) == 0 && real_unlink(path) == 0 &&
            st.st_nlink == 1)
            emit_ino('U', st.st_ino, "");
    }
    closedir(d);
}

/* fsync and fdatasync: sample what the call will make durable, make it,
 * and record it when it succeeded. */
static int durable_call(int (*call)(int), int fd)
{
    static __thread char snap[SNAP_MAX];
    static __thread ino_t inos[SNAP_INOS];
    size_t ninos = 0;
    struct stat st, a;
    int kind = 0, snaplen = 0, rc, saved;

    if (call == NULL) {
        errno = ENOSYS;
        return -1;
    }
    if (g_on && fstat(fd, &st) == 0 && st.st_dev == g_dev) {
        if (S_ISREG(st.st_mode)) {
            kind = 1;
        } else if (S_ISDIR(st.st_mode) && stat(g_aofdir, &a) == 0 &&
                   a.st_dev == st.st_dev && a.st_ino == st.st_ino) {
            kind = 2;
            snaplen = snapshot(snap, sizeof snap, inos, &ninos);
        }
    }
    rc = call(fd);
    saved = errno;
    if (rc == 0 && kind == 1) {
        char link[64], path[PATH_MAX] = "?", tail[PATH_MAX + 32];
        ssize_t n;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof path - 1);
        path[n > 0 ? n : 1] = '\0';
        snprintf(tail, sizeof tail, "\t%jd\t%s", (intmax_t)st.st_size, path);
        emit_ino('S', st.st_ino, tail);
    } else if (rc == 0 && kind == 2 && snaplen != 0) {
        if (snaplen < 0) {
            emit("X\n", 2);
        } else {
            emit(snap, (size_t)snaplen);
            prune_keep(inos, ninos);
        }
    }
    errno = saved;
    return rc;
}

int fsync(int fd)
{
    REAL(fsync);
    return durable_call(real_fsync, fd);
}

int fdatasync(int fd)
{
    REAL(fdatasync);
    return durable_call(real_fdatasync, fd);
}

/* After a successful open: a truncation, or an empty file just created
 * (its inode number may be a freed one's), lowers the durable length. */
static void opened(int fd, int flags)
{
    struct stat st;
    int e = errno;

    if (fd >= 0 && g_on && (flags & (O_TRUNC | O_CREAT)) &&
        fstat(fd, &st) == 0 && tracked(&st) &&
        ((flags & O_TRUNC) || st.st_size == 0))
        emit_trunc(st.st_ino, 0);
    errno = e;
}

#define OPEN_WRAPPER(name)                                                  \
    int name(const char *path, int flags, ...)                              \
    {                                                                       \
        REAL(name);                                                         \
        mode_t mode = 0;                                                    \
        int fd;                                                             \
        if (flags & (O_CREAT | O_TMPFILE)) {                                \
            va_list ap;                                                     \
            va_start(ap, flags);                                            \
            mode = (mode_t)va_arg(ap, int);                                 \
            va_end(ap);                                                     \
        }                                                                   \
        if (real_##name == NULL) {                                          \
            errno = ENOSYS;                                                 \
            return -1;                                                      \
        }                                                                   \
        fd = real_##name(path, flags, mode);                                \
        opened(fd, flags);                                                  \
        return fd;                                                          \
    }
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

/* fopen with "w" (O_TRUNC) or "a"/"w" creating an empty file. */
#define FOPEN_WRAPPER(name)                                                 \
    FILE *name(const char *path, const char *mode)                          \
    {                                                                       \
        REAL(name);                                                         \
        FILE *f;                                                            \
        if (real_##name == NULL) {                                          \
            errno = ENOSYS;                                                 \
            return NULL;                                                    \
        }                                                                   \
        f = real_##name(path, mode);                                        \
        if (f != NULL && (mode[0] == 'w' || mode[0] == 'a'))                \
            opened(fileno(f), O_CREAT | (mode[0] == 'w' ? O_TRUNC : 0));    \
        return f;                                                           \
    }
FOPEN_WRAPPER(fopen)
FOPEN_WRAPPER(fopen64)

static void truncated_fd(int fd, off_t len)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && tracked(&st))
        emit_trunc(st.st_ino, len);
}

static void truncated_path(const char *path, off_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && tracked(&st))
        emit_trunc(st.st_ino, len);
}

#define FTRUNCATE_WRAPPER(name, off)                                        \
    int name(int fd, off len)                                               \
    {                                                                       \
        REAL(name);                                                         \
        int rc, e;                                                          \
        if (real_##name == NULL) {                                          \
            errno = ENOSYS;                                                 \
            return -1;                                                      \
        }                                                                   \
        rc = real_##name(fd, len);                                          \
        e = errno;                                                          \
        if (rc == 0)                                                        \
            truncated_fd(fd, (off_t)len);                                   \
        errno = e;                                                          \
        return rc;                                                          \
    }
FTRUNCATE_WRAPPER(ftruncate, off_t)
FTRUNCATE_WRAPPER(ftruncate64, off64_t)

#define TRUNCATE_WRAPPER(name, off)                                         \
    int name(const char *path, off len)                                     \
    {                                                                       \
        REAL(name);                                                         \
        int rc, e;                                                          \
        if (real_##name == NULL) {                                          \
            errno = ENOSYS;                                                 \
            return -1;                                                      \
        }                                                                   \
        rc = real_##name(path, len);                                        \
        e = errno;                                                          \
        if (rc == 0)                                                        \
            truncated_path(path, (off_t)len);                               \
        errno = e;                                                          \
        return rc;                                                          \
    }
TRUNCATE_WRAPPER(truncate, off_t)
TRUNCATE_WRAPPER(truncate64, off64_t)

int unlink(const char *path)
{
    REAL(unlink);
    struct stat st;
    bool have, kept;
    int rc, e;

    if (real_unlink == NULL) {
        errno = ENOSYS;
        return -1;
    }
    have = g_on && lstat(path, &st) == 0 && tracked(&st);
    kept = have && in_aofdir(path) && keep(path, st.st_ino);
    rc = real_unlink(path);
    e = errno;
    if (rc == 0 && have && !kept && st.st_nlink == 1)
        emit_ino('U', st.st_ino, "");
    errno = e;
    return rc;
}

int rename(const char *from, const char *to)
{
    REAL(rename);
    struct stat sf, st;
    bool have_to = false, kept = false;
    int rc, e;

    if (real_rename == NULL) {
        errno = ENOSYS;
        return -1;
    }
    if (g_on && lstat(from, &sf) == 0) {
        /* The file replaced at `to`, unless it is `from` itself. */
        have_to = lstat(to, &st) == 0 && tracked(&st) &&
                  st.st_ino != sf.st_ino;
        if (have_to && in_aofdir(to))
            kept = keep(to, st.st_ino);
        /* A durable name moved out of the AOF directory. */
        if (tracked(&sf) && in_aofdir(from) && !in_aofdir(to))
            keep(from, sf.st_ino);
    }
    rc = real_rename(from, to);
    e = errno;
    if (rc == 0 && have_to && !kept && st.st_nlink == 1)
        emit_ino('U', st.st_ino, "");
    errno = e;
    return rc;
}
