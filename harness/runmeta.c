/* runmeta.c -- run directories, the `latest` link and the environment
 * lines of meta.txt, shared by `dqlab experiment` and `dqlab bench`
 * (contracts in runmeta.h).
 *
 * Why a link renamed into place: rename(2) replaces a directory entry
 * atomically (POSIX), so `dqlab report` reading results/NAME/latest while
 * a run finishes sees either the previous complete run or the new one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runmeta.h"

int dq_runmeta_mkdirs(const char *path, char *err, size_t errlen)
{
    char tmp[PATH_MAX];

    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        snprintf(err, errlen, "mkdir %.200s...: path too long", path);
        return -1;
    }
    for (char *p = tmp + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "mkdir %s: %s", tmp, strerror(errno));
                return -1;
            }
            if (c == '\0')
                return 0;
            *p = c;
        }
    }
}

int dq_runmeta_make_dir(const char *parent, char *stamp, size_t stamplen,
                        char *dir, size_t dirlen, char *err, size_t errlen)
{
    char base[32], logs[PATH_MAX + 8];
    time_t t = time(NULL);
    struct tm tm;

    if (dq_runmeta_mkdirs(parent, err, errlen) != 0)
        return -1;
    localtime_r(&t, &tm);
    strftime(base, sizeof base, "%Y%m%d-%H%M%S", &tm);
    for (int n = 1; n < 1000; n++) {
        if (n == 1)
            snprintf(stamp, stamplen, "%s", base);
        else
            snprintf(stamp, stamplen, "%s-%d", base, n);
        if (snprintf(dir, dirlen, "%s/%s", parent, stamp) >= (int)dirlen) {
            snprintf(err, errlen, "%.200s: path too long", parent);
            return -1;
        }
        if (mkdir(dir, 0777) == 0) {
            snprintf(logs, sizeof logs, "%s/logs", dir);
            if (mkdir(logs, 0777) != 0) {
                snprintf(err, errlen, "mkdir %s: %s", logs, strerror(errno));
                return -1;
            }
            return 0;
        }
        if (errno != EEXIST) {
            snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
            return -1;
        }
    }
    snprintf(err, errlen, "%s: too many runs this second", parent);
    return -1;
}

int dq_runmeta_update_latest(const char *parent, const char *stamp,
                             char *err, size_t errlen)
{
    char tmp[PATH_MAX + 32], link[PATH_MAX + 8];

    snprintf(tmp, sizeof tmp, "%s/.latest.tmp.%ld", parent, (long)getpid());
    snprintf(link, sizeof link, "%s/latest", parent);
    unlink(tmp);
    if (symlink(stamp, tmp) != 0) {
        snprintf(err, errlen, "symlink %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (rename(tmp, link) != 0) {
        snprintf(err, errlen, "rename %s: %s", link, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int dq_runmeta_write_atomic(const char *path, const char *data, size_t len,
                            char *err, size_t errlen)
{
    char tmp[PATH_MAX + 32];
    FILE *f;
    size_t w;
    int why;

    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    f = fopen(tmp, "w");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    /* The reason is errno right after the call that failed (fclose may
     * succeed after a short fwrite, and must not overwrite it). */
    errno = 0;
    w = fwrite(data, 1, len, f);
    why = w != len ? errno : 0;
    if (fclose(f) != 0 && why == 0)
        why = errno ? errno : EIO;
    if (w != len || why != 0) {
        snprintf(err, errlen, "%s: write failed: %s", tmp,
                 strerror(why ? why : EIO));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "rename %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

void dq_runmeta_now_iso(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;

    localtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

void dq_runmeta_cpu_model(char *buf, size_t len)
{
    char line[512];
    FILE *f;

    snprintf(buf, len, "unknown");
    f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c != NULL) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\r\n")] = '\0';
                if (*c != '\0')
                    snprintf(buf, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

void dq_runmeta_git_commit(char *buf, size_t len)
{
    char line[256];
    FILE *p;

    snprintf(buf, len, "unknown");
    p = popen("git rev-parse --short HEAD 2>/dev/null", "r");
    if (p == NULL)
        return;
    if (fgets(line, sizeof line, p) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] != '\0')
            snprintf(buf, len, "%s", line);
    }
    if (pclose(p) != 0)
        snprintf(buf, len, "unknown");
}

void dq_runmeta_kv(FILE *f, const char *key, const char *val)
{
    fprintf(f, "%s = ", key);
    for (const char *p = val; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
    fputc('\n', f);
}

void dq_runmeta_env(FILE *f)
{
    char buf[512];

    dq_runmeta_git_commit(buf, sizeof buf);
    dq_runmeta_kv(f, "dqlab_commit", buf);
    if (gethostname(buf, sizeof buf) != 0)
        snprintf(buf, sizeof buf, "unknown");
    buf[sizeof buf - 1] = '\0';
    dq_runmeta_kv(f, "hostname", buf);
    dq_runmeta_cpu_model(buf, sizeof buf);
    dq_runmeta_kv(f, "cpu_model", buf);
    fprintf(f, "cores = %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
}

int dq_runmeta_redis_version(const char *info, char *buf, size_t len)
{
    static const char key[] = "redis_version:";
    const char *v = info != NULL ? strstr(info, key) : NULL;

    if (v == NULL || (v != info && v[-1] != '\n'))
        return -1;
    v += sizeof key - 1;
    snprintf(buf, len, "%.*s", (int)strcspn(v, "\r\n"), v);
    return 0;
}
