/* eventlog.c -- the append-only event log of a trial (format in eventlog.h).
 *
 * Why one write(2) per record on an O_APPEND descriptor: POSIX makes each
 * O_APPEND write position itself at the end of file atomically, and on
 * Linux a write to a regular file is not interleaved with another, so
 * records from many threads (and processes sharing the file) land whole and
 * in completion order without a lock, and a process killed with SIGKILL
 * leaves every record it finished.  stdio buffering would break both
 * properties, so no FILE* here.  O_EXCL: a log is evidence; never
 * overwrite one.
 *
 * The checker (checker.c) does not rely on record order between ids: an E
 * record may follow the D of the same id, because the producer logs after
 * enqueue returns while a consumer may already have claimed the task.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eventlog.h"

#define DQ_LOG_MAGIC "# dqlab event log v1\n"
/* Longest record; names are bounded (ids < 128 bytes), header values are
 * checked against it. */
#define REC_MAX 2048

struct dq_eventlog {
    int fd;
};

dq_eventlog *dq_eventlog_create(const char *path, char *err, size_t errlen)
{
    dq_eventlog *l;
    int fd;

    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
                 errno == EEXIST ? " (refusing to overwrite an event log)"
                                 : "");
        return NULL;
    }
    l = malloc(sizeof *l);
    if (l == NULL) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto err_close;
    }
    l->fd = fd;
    if (write(fd, DQ_LOG_MAGIC, sizeof DQ_LOG_MAGIC - 1) !=
        (ssize_t)(sizeof DQ_LOG_MAGIC - 1)) {
        snprintf(err, errlen, "%s: write: %s", path, strerror(errno));
        goto err_free;
    }
    return l;

err_free:
    free(l);
err_close:
    close(fd);
    unlink(path);
    return NULL;
}

void dq_eventlog_close(dq_eventlog *l)
{
    if (l == NULL)
        return;
    close(l->fd);
    free(l);
}

/* A name or value may go into a record: non-NULL, no TAB/CR/LF. */
static int field_ok(const char *s, int may_be_empty)
{
    if (s == NULL || (!may_be_empty && *s == '\0'))
        return 0;
    return strpbrk(s, "\t\r\n") == NULL;
}

static int put(dq_eventlog *l, const char *buf, int n)
{
    ssize_t w;

    if (l == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (n < 0 || n >= REC_MAX) {
        errno = EINVAL;
        return -1;
    }
    do {
        w = write(l->fd, buf, (size_t)n);
    } while (w < 0 && errno == EINTR);
    if (w < 0)
        return -1;
    if (w != n) {
        errno = EIO; /* short write: disk full; the record is torn */
        return -1;
    }
    return 0;
}

int dq_log_header(dq_eventlog *l, const char *key, const char *value)
{
    char buf[REC_MAX];

    if (!field_ok(key, 0) || !field_ok(value, 1)) {
        errno = EINVAL;
        return -1;
    }
    return put(l, buf, snprintf(buf, sizeof buf, "H\t%s\t%s\n", key, value));
}

int dq_log_enqueue(dq_eventlog *l, int64_t t_us, const char *id,
                   int64_t due_ms, const char *producer)
{
    char buf[REC_MAX];

    if (!field_ok(id, 0) || !field_ok(producer, 0)) {
        errno = EINVAL;
        return -1;
    }
    return put(l, buf, snprintf(buf, sizeof buf, "E\t%" PRId64 "\t%s\t%"
                                PRId64 "\t%s\n", t_us, id, due_ms, producer));
}

int dq_log_deliver(dq_eventlog *l, int64_t t_us, const char *id,
                   const char *consumer, int attempt)
{
    char buf[REC_MAX];

    if (!field_ok(id, 0) || !field_ok(consumer, 0)) {
        errno = EINVAL;
        return -1;
    }
    return put(l, buf, snprintf(buf, sizeof buf, "D\t%" PRId64 "\t%s\t%s\t%d\n",
                                t_us, id, consumer, attempt));
}

int dq_log_ack(dq_eventlog *l, int64_t t_us, const char *id,
               const char *consumer)
{
    char buf[REC_MAX];

    if (!field_ok(id, 0) || !field_ok(consumer, 0)) {
        errno = EINVAL;
        return -1;
    }
    return put(l, buf, snprintf(buf, sizeof buf, "A\t%" PRId64 "\t%s\t%s\n",
                                t_us, id, consumer));
}

int dq_log_fault(dq_eventlog *l, int64_t t_us, const char *fault,
                 const char *phase, const char *arg)
{
    char buf[REC_MAX];

    if (!field_ok(fault, 0) || !field_ok(phase, 0) || !field_ok(arg, 1) ||
        (strcmp(phase, "begin") != 0 && strcmp(phase, "end") != 0)) {
        errno = EINVAL;
        return -1;
    }
    return put(l, buf, snprintf(buf, sizeof buf, "F\t%" PRId64 "\t%s\t%s\t%s\n",
                                t_us, fault, phase, arg));
}
