/* oscrash.c -- a simulated host crash of the private redis-server
 * (oscrash.h): replay the AOF shim's bookkeeping (aofshim.c) and cut the
 * AOF directory back to what was durable.
 *
 * How dq_oscrash_apply works, once every server process is dead:
 *   1. replay <dir>/aofshim.log: per inode its durable length (S sets, T
 *      lowers, U forgets), and the last D record: the (inode, name) pairs
 *      of the AOF directory at its last fsync;
 *   2. move each inode of that record, wherever it is now (the AOF
 *      directory under any name, or <dir>/aofshim-keep/ where the shim
 *      linked what Redis later unlinked or renamed over), into a staging
 *      directory;
 *   3. remove what is left in the AOF directory: entries that never became
 *      durable (the whole file counts as dropped);
 *   4. move the staged inodes back under their durable names, and truncate
 *      each to its durable length;
 *   5. rewrite the bookkeeping to the state left, all of it durable now.
 * Staging makes step 4 independent of the order of renames (a swap of two
 * names needs no special case).
 */
#define _GNU_SOURCE /* realpath with a buffer, dirname */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../strategies/dq.h"
#include "oscrash.h"
#include "spawn.h"

/* The shared object the Makefile builds next to libdq.a. */
#define SHIM_NAME "libdqaofshim.so"
/* Paths here are the server dir (at most DIR_MAX bytes, checked) plus a
 * name of at most 255 bytes, which PATH_MAX buffers always hold; GCC's
 * format-truncation warning cannot see that bound. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#define DIR_MAX 1024
/* How long to wait for a forked AOF-rewrite child to die after the
 * process-group SIGKILL (it is not ours to reap). */
#define GROUP_GONE_MS 1000

typedef struct dur_ent {
    uint64_t ino;
    int64_t len;
} dur_ent;

typedef struct dir_ent {
    uint64_t ino;
    char name[256];
} dir_ent;

typedef struct model {
    dur_ent *dur;          /* durable length per live inode */
    size_t ndur, capdur;
    dir_ent *snap;         /* the AOF directory at its last fsync */
    size_t nsnap, capsnap;
    bool overflow;         /* an X record after the last D */
} model;

static void model_free(model *m)
{
    free(m->dur);
    free(m->snap);
    memset(m, 0, sizeof *m);
}

static dur_ent *dur_find(model *m, uint64_t ino)
{
    for (size_t i = 0; i < m->ndur; i++)
        if (m->dur[i].ino == ino)
            return &m->dur[i];
    return NULL;
}

static int dur_set(model *m, uint64_t ino, int64_t len)
{
    dur_ent *d = dur_find(m, ino);
    if (d == NULL) {
        if (m->ndur == m->capdur) {
            size_t cap = m->capdur ? m->capdur * 2 : 64;
            dur_ent *p = realloc(m->dur, cap * sizeof *p);
            if (p == NULL)
                return -1;
            m->dur = p;
            m->capdur = cap;
        }
        d = &m->dur[m->ndur++];
        d->ino = ino;
    }
    d->len = len;
    return 0;
}

static int snap_add(model *m, uint64_t ino, const char *name, size_t len)
{
    if (len == 0 || len >= sizeof m->snap[0].name)
        return -1;
    if (m->nsnap == m->capsnap) {
        size_t cap = m->capsnap ? m->capsnap * 2 : 16;
        dir_ent *p = realloc(m->snap, cap * sizeof *p);
        if (p == NULL)
            return -1;
        m->snap = p;
        m->capsnap = cap;
    }
    m->snap[m->nsnap].ino = ino;
    memcpy(m->snap[m->nsnap].name, name, len);
    m->snap[m->nsnap].name[len] = '\0';
    m->nsnap++;
    return 0;
}

/* "D\t<ino>:<name>\t..." (without the newline) replaces the snapshot. */
static int parse_snapshot(model *m, const char *line)
{
    const char *p = line + 1;

    m->nsnap = 0;
    m->overflow = false;
    while (*p == '\t') {
        char *end;
        size_t n;
        uint64_t ino;

        p++;
        errno = 0;
        ino = strtoull(p, &end, 10);
        if (errno != 0 || end == p || *end != ':')
            return -1;
        p = end + 1;
        n = strcspn(p, "\t");
        if (snap_add(m, ino, p, n) != 0)
            return -1;
        p += n;
    }
    return *p == '\0' ? 0 : -1;
}

/* One record (newline stripped).  Returns 0, or -1 when malformed. */
static int replay(model *m, const char *line)
{
    uintmax_t ino;
    intmax_t len;

    switch (line[0]) {
    case 'S':
        if (sscanf(line, "S\t%ju\t%jd", &ino, &len) != 2 || len < 0)
            return -1;
        return dur_set(m, ino, len);
    case 'T':
        if (sscanf(line, "T\t%ju\t%jd", &ino, &len) != 2 || len < 0)
            return -1;
        {
            dur_ent *d = dur_find(m, ino);
            if (d != NULL && d->len > len)
                d->len = len;
        }
        return 0;
    case 'U':
        if (sscanf(line, "U\t%ju", &ino) != 1)
            return -1;
        {
            dur_ent *d = dur_find(m, ino);
            if (d != NULL)
                *d = m->dur[--m->ndur];
        }
        return 0;
    case 'D':
        return parse_snapshot(m, line);
    case 'X':
        m->overflow = true;
        return 0;
    default:
        return -1;
    }
}

/* Reads the bookkeeping into *m.  A missing file leaves *m empty and sets
 * *found false.  A last line without its newline is a record the SIGKILL
 * cut short (the fsync it reports had not been recorded): ignored. */
static int load_model(const char *path, model *m, bool *found, char *err,
                      size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    int rc = 0;

    memset(m, 0, sizeof *m);
    *found = f != NULL;
    if (f == NULL) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[n - 1] != '\n')
            break;
        line[n - 1] = '\0';
        if (replay(m, line) != 0) {
            snprintf(err, errlen, "%s:%ld: malformed record", path, lineno);
            rc = -1;
            break;
        }
    }
    free(line);
    fclose(f);
    if (rc != 0)
        model_free(m);
    return rc;
}

/* The regular files of dir (NULL with *n = 0 when it does not exist). */
static int list_dir(const char *dir, dir_ent **out, size_t *n, char *err,
                    size_t errlen)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    model tmp = {0};

    *out = NULL;
    *n = 0;
    if (d == NULL) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_type != DT_REG)
            continue;
        if (snap_add(&tmp, e->d_ino, e->d_name, strlen(e->d_name)) != 0) {
            snprintf(err, errlen, "%s/%s: name too long or out of memory",
                     dir, e->d_name);
            closedir(d);
            free(tmp.snap);
            return -1;
        }
    }
    closedir(d);
    *out = tmp.snap;
    *n = tmp.nsnap;
    return 0;
}

static const dir_ent *ent_by_ino(const dir_ent *v, size_t n, uint64_t ino)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].ino == ino)
            return &v[i];
    return NULL;
}

static int move(const char *from, const char *to, char *err, size_t errlen)
{
    if (rename(from, to) == 0)
        return 0;
    snprintf(err, errlen, "rename %s -> %s: %s", from, to, strerror(errno));
    return -1;
}

/* Steps 2 and 3: stage every durable inode, remove every other file of
 * the AOF directory.  staged[i] says whether m->snap[i] was found. */
static int stage(const model *m, const char *aof, const char *keepdir,
                 const char *stagedir, bool *staged, dq_oscrash_stats *st,
                 char *err, size_t errlen)
{
    dir_ent *cur = NULL, *kept = NULL;
    size_t ncur, nkept;
    char from[PATH_MAX], to[PATH_MAX];
    int rc = -1;

    if (list_dir(aof, &cur, &ncur, err, errlen) != 0 ||
        list_dir(keepdir, &kept, &nkept, err, errlen) != 0)
        goto out;
    for (size_t i = 0; i < m->nsnap; i++) {
        const dir_ent *c = ent_by_ino(cur, ncur, m->snap[i].ino);
        const dir_ent *k = c ? NULL : ent_by_ino(kept, nkept, m->snap[i].ino);

        staged[i] = false;
        snprintf(to, sizeof to, "%s/%" PRIu64, stagedir, m->snap[i].ino);
        /* Not found, or a second name of a staged inode (hard links are
         * not modelled). */
        if ((c == NULL && k == NULL) || access(to, F_OK) == 0) {
            st->names_missing++;
            continue;
        }
        if (c == NULL || strcmp(c->name, m->snap[i].name) != 0)
            st->names_restored++;
        snprintf(from, sizeof from, "%s/%s", c ? aof : keepdir,
                 c ? c->name : k->name);
        if (move(from, to, err, errlen) != 0)
            goto out;
        staged[i] = true;
    }
    free(cur);
    if (list_dir(aof, &cur, &ncur, err, errlen) != 0)
        goto out;
    for (size_t i = 0; i < ncur; i++) {
        struct stat sb;
        snprintf(from, sizeof from, "%s/%s", aof, cur[i].name);
        if (lstat(from, &sb) == 0)
            st->bytes_dropped += sb.st_size;
        if (unlink(from) != 0) {
            snprintf(err, errlen, "unlink %s: %s", from, strerror(errno));
            goto out;
        }
        st->names_removed++;
    }
    rc = 0;
out:
    free(cur);
    free(kept);
    return rc;
}

/* Step 4: back under the durable names, cut to the durable lengths. */
static int restore(model *m, const char *aof, const char *stagedir,
                   const bool *staged, dq_oscrash_stats *st, char *err,
                   size_t errlen)
{
    for (size_t i = 0; i < m->nsnap; i++) {
        char from[PATH_MAX], to[PATH_MAX];
        const dur_ent *d;
        int64_t keep_len;
        struct stat sb;

        if (!staged[i])
            continue;
        snprintf(from, sizeof from, "%s/%" PRIu64, stagedir, m->snap[i].ino);
        snprintf(to, sizeof to, "%s/%s", aof, m->snap[i].name);
        if (move(from, to, err, errlen) != 0)
            return -1;
        d = dur_find(m, m->snap[i].ino);
        keep_len = d ? d->len : 0;
        if (stat(to, &sb) != 0) {
            snprintf(err, errlen, "stat %s: %s", to, strerror(errno));
            return -1;
        }
        if (sb.st_size <= keep_len)
            continue;
        if (truncate(to, keep_len) != 0) {
            snprintf(err, errlen, "truncate %s: %s", to, strerror(errno));
            return -1;
        }
        st->bytes_dropped += sb.st_size - keep_len;
        st->files_truncated++;
    }
    return 0;
}

/* Empties and removes dir (flat: the keep and staging directories). */
static void remove_flat(const char *dir)
{
    dir_ent *v;
    size_t n;
    char err[16], path[PATH_MAX];

    if (list_dir(dir, &v, &n, err, sizeof err) == 0) {
        for (size_t i = 0; i < n; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
            unlink(path);
        }
        free(v);
    }
    rmdir(dir);
}

/* Step 5: the bookkeeping of what is left, written to a temporary name and
 * renamed over the old. */
static int compact(const char *aof, const char *logpath, char *err,
                   size_t errlen)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    dir_ent *v;
    size_t n;
    FILE *f;
    bool ok;

    if (list_dir(aof, &v, &n, err, errlen) != 0)
        return -1;
    snprintf(tmp, sizeof tmp, "%s.tmp", logpath);
    f = fopen(tmp, "w");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        free(v);
        return -1;
    }
    fputc('D', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "\t%" PRIu64 ":%s", v[i].ino, v[i].name);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", aof, v[i].name);
        if (stat(path, &sb) == 0)
            fprintf(f, "S\t%" PRIu64 "\t%jd\t%s\n", v[i].ino,
                    (intmax_t)sb.st_size, path);
    }
    free(v);
    ok = fflush(f) == 0 && !ferror(f);
    if (fclose(f) != 0 || !ok || rename(tmp, logpath) != 0) {
        snprintf(err, errlen, "writing %s: %s", logpath, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int dq_oscrash_apply(const char *dir, dq_oscrash_stats *st, char *err,
                     size_t errlen)
{
    char aof[PATH_MAX], logpath[PATH_MAX], keepdir[PATH_MAX],
        stagedir[PATH_MAX];
    model m;
    bool found, *staged = NULL;
    dir_ent *cur;
    size_t ncur;
    int rc = -1;

    if (strlen(dir) > DIR_MAX) {
        snprintf(err, errlen, "os-crash: server dir longer than %d bytes",
                 DIR_MAX);
        return -1;
    }
    snprintf(aof, sizeof aof, "%s/appendonlydir", dir);
    snprintf(logpath, sizeof logpath, "%s/aofshim.log", dir);
    snprintf(keepdir, sizeof keepdir, "%s/aofshim-keep", dir);
    snprintf(stagedir, sizeof stagedir, "%s/aofshim-stage", dir);
    if (list_dir(aof, &cur, &ncur, err, errlen) != 0)
        return -1;
    free(cur);
    if (load_model(logpath, &m, &found, err, errlen) != 0)
        return -1;
    if (!found && ncur > 0) {
        snprintf(err, errlen, "%s: no AOF shim bookkeeping although %s holds "
                 "files (was the server started with the shim?)", dir, aof);
        goto out;
    }
    if (m.overflow) {
        snprintf(err, errlen, "%s: the AOF directory outgrew the shim's "
                 "record (X): cannot model the crash", logpath);
        goto out;
    }
    if (ncur == 0 && m.nsnap == 0) {
        rc = 0; /* nothing was ever durable or written */
        goto out;
    }
    staged = calloc(m.nsnap + 1, sizeof *staged);
    if (staged == NULL || (mkdir(stagedir, 0755) != 0 && errno != EEXIST)) {
        snprintf(err, errlen, "%s: %s", stagedir, strerror(errno));
        goto out;
    }
    if (stage(&m, aof, keepdir, stagedir, staged, st, err, errlen) != 0 ||
        restore(&m, aof, stagedir, staged, st, err, errlen) != 0)
        goto out;
    remove_flat(keepdir);
    remove_flat(stagedir);
    rc = compact(aof, logpath, err, errlen);
out:
    free(staged);
    model_free(&m);
    return rc;
}

/* ---- Finding the shim, starting, crashing ------------------------------ */

static int readable(const char *path, char *out, size_t outlen)
{
    char buf[PATH_MAX];
    if (realpath(path, buf) == NULL || access(buf, R_OK) != 0 ||
        strlen(buf) >= outlen)
        return -1;
    snprintf(out, outlen, "%s", buf);
    return 0;
}

int dq_oscrash_shim_path(char *out, size_t outlen, char *err, size_t errlen)
{
    static const char *const rel[] = {"", "/..", "/../build/default"};
    const char *env = getenv("DQ_AOFSHIM");
    char exe[PATH_MAX], cand[PATH_MAX + 64];
    ssize_t n;

    if (env != NULL && *env != '\0') {
        if (readable(env, out, outlen) == 0)
            return 0;
        snprintf(err, errlen, "DQ_AOFSHIM=%.200s: not a readable file", env);
        return -1;
    }
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(err, errlen, "/proc/self/exe: %s", strerror(errno));
        return -1;
    }
    exe[n] = '\0';
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char dirbuf[PATH_MAX];
        snprintf(dirbuf, sizeof dirbuf, "%s", exe);
        snprintf(cand, sizeof cand, "%s%s/" SHIM_NAME, dirname(dirbuf),
                 rel[i]);
        if (readable(cand, out, outlen) == 0)
            return 0;
    }
    snprintf(err, errlen, SHIM_NAME " not found near %.200s (run make, or "
             "set DQ_AOFSHIM)", exe);
    return -1;
}

static bool fsync_mode(const char *m)
{
    return m != NULL && (strcmp(m, "everysec") == 0 ||
                         strcmp(m, "always") == 0);
}

int dq_oscrash_server_start(dq_redis_server *s, const char *appendfsync,
                            char *err, size_t errlen)
{
    char shim[PATH_MAX];
    dq_redis_server_opts o = {.appendonly = appendfsync, .preload = shim};

    memset(s, 0, sizeof *s);
    if (!fsync_mode(appendfsync)) {
        snprintf(err, errlen, "os-crash: appendfsync must be everysec or "
                 "always, not '%.20s'", appendfsync ? appendfsync : "");
        return -1;
    }
    if (dq_oscrash_shim_path(shim, sizeof shim, err, errlen) != 0)
        return -1;
    return dq_redis_server_start(s, &o, err, errlen);
}

bool dq_oscrash_armed(const dq_redis_server *s)
{
    return s != NULL && s->preload[0] != '\0' &&
           strstr(s->preload, SHIM_NAME) != NULL;
}

/* True while a process of group pgid still runs (is not a zombie), from
 * /proc/<pid>/stat: "pid (comm) state ppid pgrp ...", proc(5). */
static bool group_running(pid_t pgid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    bool running = false;

    if (d == NULL)
        return kill(-pgid, 0) == 0;
    while (!running && (e = readdir(d)) != NULL) {
        char path[300], buf[512], state;
        const char *close_paren;
        int ppid, pgrp;
        size_t n;
        FILE *f;

        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (f == NULL)
            continue;
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        close_paren = strrchr(buf, ')');
        if (close_paren != NULL &&
            sscanf(close_paren + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 &&
            pgrp == pgid && state != 'Z' && state != 'X')
            running = true;
    }
    closedir(d);
    return running;
}

/* Waits until no process of group pgid runs (a forked rewrite child dies
 * asynchronously; once reparented, its zombie is not ours to reap), at
 * most GROUP_GONE_MS. */
static void wait_group_gone(pid_t pgid)
{
    int64_t deadline = dq_mono_us() + GROUP_GONE_MS * 1000LL;
    while (group_running(pgid) && dq_mono_us() < deadline)
        dq_sleep_us(1000);
}

int dq_oscrash_crash(dq_redis_server *s, const char *appendonly,
                     dq_oscrash_stats *st, char *err, size_t errlen)
{
    pid_t pgid;
    int status;

    memset(st, 0, sizeof *st);
    if (!dq_oscrash_armed(s) || s->pid <= 0) {
        snprintf(err, errlen, "os-crash: needs a running private "
                 "redis-server started with the AOF shim");
        return -1;
    }
    if (!fsync_mode(appendonly)) {
        snprintf(err, errlen, "os-crash: appendonly must be everysec or "
                 "always, not '%.20s'", appendonly ? appendonly : "");
        return -1;
    }
    pgid = s->pid; /* the server leads its own group (spawn.h) */
    st->kill_us = dq_mono_us();
    kill(-pgid, SIGKILL);
    dq_spawn_reap(s->pid, &status, true);
    s->pid = 0;
    wait_group_gone(pgid);
    if (dq_oscrash_apply(s->dir, st, err, errlen) != 0)
        return -1;
    st->applied_us = dq_mono_us();
    if (dq_redis_server_restart(s, appendonly, err, errlen) != 0)
        return -1;
    st->up_us = dq_mono_us();
    return 0;
}
