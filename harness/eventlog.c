/* eventlog.c -- the append-only event log of a trial (format in eventlog.h).
 *
 * Sync-each mode: one write(2) per record on an O_APPEND descriptor.  POSIX
 * makes each O_APPEND write position itself at the end of file atomically,
 * and on Linux a write to a regular file is not interleaved with another,
 * so records from many threads (and processes sharing the file) land whole
 * and in completion order without a lock, and a process killed with SIGKILL
 * leaves every record it finished.  stdio buffering would break both
 * properties, so no FILE* here.  O_EXCL: a log is evidence; never
 * overwrite one.
 *
 * Buffered mode (DQ_LOG_BUFFERED), for the hot path: a profile of
 * `dqlab run --strategy heap --tasks 1000000 --consumers 4 --producers 2
 * --delay-ms 0:0` (perf record -g) put about half of the run's CPU time in
 * the log: one write(2) per record (ksys_write, ext4 buffered write, and
 * the file's f_pos mutex that every writer of one open file takes:
 * fdget_pos / mutex_spin_on_owner) plus snprintf formatting.  So here
 *   - each thread owns a buffer (found through a thread-local pointer
 *     tagged with the log's generation number, so a stale pointer to a
 *     closed log's buffer is never followed); the log keeps the list of
 *     its buffers (under a mutex taken only when a thread writes its first
 *     record) so flush_all and close can write them all;
 *   - a buffer is written with one write(2) when it cannot hold another
 *     record of the longest size, on dq_log_flush by its thread, and by
 *     flush_all / close;
 *   - records are formatted by hand (integers with a digit loop, strings
 *     with memcpy) instead of snprintf, in both modes.
 * A forked child (a process-mode consumer that a fault may kill) must not
 * buffer and must not write the parent's records it inherited: a
 * pthread_atfork child handler bumps a process epoch, and a log created in
 * another epoch writes every record at once and never touches the
 * inherited buffers (nor their mutex, which another parent thread may have
 * held at the fork).
 *
 * The end (dq_log_end): every buffer is written, then the Z record, so
 * that Z is the last line and a log without one is known to be
 * incomplete (its writer died or the file was cut).
 *
 * The checker (checker.c) does not rely on record order between ids: an E
 * record may follow the D of the same id, because the producer logs after
 * enqueue returns while a consumer may already have claimed the task, and
 * with buffers the chunks of different threads land in any order.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eventlog.h"

#define DQ_LOG_MAGIC "# dqlab event log v2\n"
/* Longest record; names are bounded (ids < 128 bytes), header values are
 * checked against it. */
#define REC_MAX 2048

typedef struct log_buf {
    struct log_buf *next;
    size_t len;
    char data[DQ_LOG_BUF_BYTES];
} log_buf;

struct dq_eventlog {
    int fd;
    unsigned flags;
    uint64_t gen;        /* unique per log in this process */
    unsigned epoch;      /* g_epoch when created: a fork changes it */
    pthread_mutex_t mu;  /* guards bufs (the list, not the contents) */
    log_buf *bufs;
    atomic_bool ended;   /* dq_log_end was called: no record may follow */
};

static atomic_uint_fast64_t g_gen;
static atomic_uint g_epoch;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

/* This thread's buffer for the log whose gen is tls_gen. */
static __thread uint64_t tls_gen;
static __thread log_buf *tls_buf;

static void atfork_child(void)
{
    atomic_fetch_add(&g_epoch, 1);
}

static void register_atfork(void)
{
    pthread_atfork(NULL, NULL, atfork_child);
}

/* True when records go to this process's buffers; false when each is
 * written at once (sync-each mode, or a forked child of the creator). */
static bool buffered(const dq_eventlog *l)
{
    return (l->flags & DQ_LOG_BUFFERED) &&
           l->epoch == atomic_load_explicit(&g_epoch, memory_order_relaxed);
}

/* Writes all n bytes.  A short write (write(2) wrote part: the disk
 * filled up in the middle of it) is continued, so that the error reported
 * is the one write(2) gives for the rest -- ENOSPC on a full disk, EFBIG,
 * EDQUOT -- and not an invented one.  A record cut by such an error is
 * torn; the checker then finds the log incomplete or malformed. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {       /* not for a regular file; never loop */
            errno = EIO;
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static int buf_flush(dq_eventlog *l, log_buf *b)
{
    int rc = 0;

    if (b->len > 0)
        rc = write_all(l->fd, b->data, b->len);
    b->len = 0; /* a failed chunk is dropped: the error says so */
    return rc;
}

static dq_eventlog *log_new(int fd, unsigned flags, const char *path,
                            char *err, size_t errlen)
{
    dq_eventlog *l;

    l = calloc(1, sizeof *l);
    if (l == NULL) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (flags & DQ_LOG_BUFFERED)
        pthread_once(&g_atfork_once, register_atfork);
    l->fd = fd;
    l->flags = flags;
    l->gen = atomic_fetch_add(&g_gen, 1) + 1;
    l->epoch = atomic_load(&g_epoch);
    pthread_mutex_init(&l->mu, NULL);
    return l;
}

dq_eventlog *dq_eventlog_create_flags(const char *path, unsigned flags,
                                      char *err, size_t errlen)
{
    dq_eventlog *l;
    int fd;

    if (flags & ~(unsigned)DQ_LOG_BUFFERED) {
        snprintf(err, errlen, "%s: unknown event log flags 0x%x", path, flags);
        return NULL;
    }
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
                 errno == EEXIST ? " (refusing to overwrite an event log)"
                                 : "");
        return NULL;
    }
    if (write_all(fd, DQ_LOG_MAGIC, sizeof DQ_LOG_MAGIC - 1) != 0) {
        snprintf(err, errlen, "%s: write: %s", path, strerror(errno));
        goto err_close;
    }
    if ((l = log_new(fd, flags, path, err, errlen)) == NULL)
        goto err_close;
    return l;

err_close:
    close(fd);
    unlink(path);
    return NULL;
}

dq_eventlog *dq_eventlog_create(const char *path, char *err, size_t errlen)
{
    return dq_eventlog_create_flags(path, DQ_LOG_SYNC_EACH, err, errlen);
}

dq_eventlog *dq_eventlog_open_append(const char *path, unsigned flags,
                                     char *err, size_t errlen)
{
    char head[sizeof DQ_LOG_MAGIC - 1];
    dq_eventlog *l;
    ssize_t n;
    int fd;

    if (flags & ~(unsigned)DQ_LOG_BUFFERED) {
        snprintf(err, errlen, "%s: unknown event log flags 0x%x", path, flags);
        return NULL;
    }
    fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    n = pread(fd, head, sizeof head, 0);
    if (n != (ssize_t)sizeof head || memcmp(head, DQ_LOG_MAGIC, sizeof head)) {
        snprintf(err, errlen, "%s: not a dqlab event log (first line must "
                 "be '# dqlab event log v2')", path);
        close(fd);
        return NULL;
    }
    if ((l = log_new(fd, flags, path, err, errlen)) == NULL)
        close(fd);
    return l;
}

int dq_eventlog_flush_all(dq_eventlog *l)
{
    int rc = 0, e = 0;

    if (l == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (!buffered(l))
        return 0;
    pthread_mutex_lock(&l->mu);
    for (log_buf *b = l->bufs; b != NULL; b = b->next)
        if (buf_flush(l, b) != 0 && rc == 0) {
            rc = -1;
            e = errno;
        }
    pthread_mutex_unlock(&l->mu);
    if (rc != 0)
        errno = e;
    return rc;
}

void dq_eventlog_close(dq_eventlog *l)
{
    log_buf *b, *next;
    bool own;

    if (l == NULL)
        return;
    own = buffered(l);
    if (own)
        dq_eventlog_flush_all(l);
    /* In a forked child the inherited buffers hold the parent's records
     * (written by the parent): free them unwritten, without the mutex. */
    for (b = l->bufs; b != NULL; b = next) {
        next = b->next;
        free(b);
    }
    if (tls_gen == l->gen) {
        tls_gen = 0;
        tls_buf = NULL;
    }
    if (own)
        pthread_mutex_destroy(&l->mu);
    close(l->fd);
    free(l);
}

/* The calling thread's buffer for l, created on first use; NULL (errno
 * ENOMEM) when out of memory. */
static log_buf *my_buf(dq_eventlog *l)
{
    log_buf *b;

    if (tls_gen == l->gen)
        return tls_buf;
    b = malloc(sizeof *b);
    if (b == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    b->len = 0;
    pthread_mutex_lock(&l->mu);
    b->next = l->bufs;
    l->bufs = b;
    pthread_mutex_unlock(&l->mu);
    tls_gen = l->gen;
    tls_buf = b;
    return b;
}

int dq_log_flush(dq_eventlog *l)
{
    if (l == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (!buffered(l) || tls_gen != l->gen)
        return 0;
    return buf_flush(l, tls_buf);
}

/* ---- Records ------------------------------------------------------------ */

/* Length of a name or value that may go into a record: non-NULL, no
 * TAB/CR/LF; -1 when it may not. */
static ssize_t field_len(const char *s, int may_be_empty)
{
    size_t n;

    if (s == NULL)
        return -1;
    n = strcspn(s, "\t\r\n");
    if (s[n] != '\0' || (!may_be_empty && n == 0))
        return -1;
    return (ssize_t)n;
}

/* A record being built: fields appended with rec_*, then emitted. */
typedef struct rec {
    char *p;
    char buf[REC_MAX];
} rec;

static void rec_char(rec *r, char c)
{
    *r->p++ = c;
}

static void rec_str(rec *r, const char *s, size_t n)
{
    memcpy(r->p, s, n);
    r->p += n;
}

/* Decimal, as "%" PRId64 prints it; two digits per division. */
static void rec_i64(rec *r, int64_t v)
{
    static const char d2[] =
        "00010203040506070809101112131415161718192021222324252627282930313233"
        "34353637383940414243444546474849505152535455565758596061626364656667"
        "6869707172737475767778798081828384858687888990919293949596979899";
    char tmp[24];
    size_t n = sizeof tmp;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    while (u >= 100) {
        unsigned k = (unsigned)(u % 100) * 2;
        u /= 100;
        tmp[--n] = d2[k + 1];
        tmp[--n] = d2[k];
    }
    if (u >= 10) {
        tmp[--n] = d2[u * 2 + 1];
        tmp[--n] = d2[u * 2];
    } else {
        tmp[--n] = (char)('0' + u);
    }
    if (v < 0)
        *r->p++ = '-';
    memcpy(r->p, tmp + n, sizeof tmp - n);
    r->p += sizeof tmp - n;
}

/* Writes the record r holds: appended to this thread's buffer, or at once
 * (sync-each mode, a forked child, and when `now` is set: H and F). */
static int emit(dq_eventlog *l, rec *r, bool now)
{
    size_t n = (size_t)(r->p - r->buf);
    log_buf *b;

    if (!buffered(l))
        return write_all(l->fd, r->buf, n);
    if ((b = my_buf(l)) == NULL)
        return -1;
    if (now) {
        /* Keep this thread's order: its buffered records first. */
        if (buf_flush(l, b) != 0)
            return -1;
        return write_all(l->fd, r->buf, n);
    }
    memcpy(b->data + b->len, r->buf, n);
    b->len += n;
    if (b->len > sizeof b->data - REC_MAX)
        return buf_flush(l, b);
    return 0;
}

/* Checks that a record of fields totalling `sum` bytes plus `extra` for
 * the type, TABs, integers and LF fits REC_MAX. */
static int fits(size_t sum, size_t extra)
{
    if (sum + extra >= REC_MAX) {
        errno = EINVAL;
        return 0;
    }
    return 1;
}

/* Integers take at most 20 characters; 3 integers, 5 separators. */
#define REC_EXTRA (2 + 3 * 20 + 5)

/* The argument check of every dq_log_*: 1 when l is set, fields_ok (each
 * text field passed field_len) and the fields' `sum` bytes fit a record;
 * else 0 with errno = EINVAL (also after dq_log_end). */
static int rec_ok(dq_eventlog *l, bool fields_ok, size_t sum)
{
    if (l == NULL || !fields_ok || !fits(sum, REC_EXTRA) ||
        atomic_load_explicit(&l->ended, memory_order_relaxed)) {
        errno = EINVAL;
        return 0;
    }
    return 1;
}

/* Starts record r with its one-letter type (no TAB yet). */
static void rec_start(rec *r, char type)
{
    r->p = r->buf;
    rec_char(r, type);
}

/* Appends a TAB and the n bytes of text field s. */
static void rec_tab_str(rec *r, const char *s, size_t n)
{
    rec_char(r, '\t');
    rec_str(r, s, n);
}

/* Appends a TAB and v in decimal. */
static void rec_tab_i64(rec *r, int64_t v)
{
    rec_char(r, '\t');
    rec_i64(r, v);
}

/* Ends record r with LF and emits it (emit's `now`); 0 or -1. */
static int rec_end(dq_eventlog *l, rec *r, bool now)
{
    rec_char(r, '\n');
    return emit(l, r, now);
}

int dq_log_header(dq_eventlog *l, const char *key, const char *value)
{
    ssize_t kn = field_len(key, 0), vn = field_len(value, 1);
    rec r;

    if (!rec_ok(l, kn >= 0 && vn >= 0, (size_t)(kn + vn)))
        return -1;
    rec_start(&r, 'H');
    rec_tab_str(&r, key, (size_t)kn);
    rec_tab_str(&r, value, (size_t)vn);
    return rec_end(l, &r, true);
}

int dq_log_enqueue(dq_eventlog *l, int64_t t_us, const char *id,
                   int64_t due_ms, const char *producer)
{
    ssize_t in = field_len(id, 0), pn = field_len(producer, 0);
    rec r;

    if (!rec_ok(l, in >= 0 && pn >= 0, (size_t)(in + pn)))
        return -1;
    rec_start(&r, 'E');
    rec_tab_i64(&r, t_us);
    rec_tab_str(&r, id, (size_t)in);
    rec_tab_i64(&r, due_ms);
    rec_tab_str(&r, producer, (size_t)pn);
    return rec_end(l, &r, false);
}

int dq_log_enqueue_refused(dq_eventlog *l, int64_t t_us, const char *id,
                           int64_t due_ms, const char *producer,
                           const char *reason)
{
    ssize_t in = field_len(id, 0), pn = field_len(producer, 0),
            kn = field_len(reason, 0);
    rec r;

    if (!rec_ok(l, in >= 0 && pn >= 0 && kn >= 0, (size_t)(in + pn + kn)))
        return -1;
    rec_start(&r, 'N');
    rec_tab_i64(&r, t_us);
    rec_tab_str(&r, id, (size_t)in);
    rec_tab_i64(&r, due_ms);
    rec_tab_str(&r, producer, (size_t)pn);
    rec_tab_str(&r, reason, (size_t)kn);
    return rec_end(l, &r, false);
}

int dq_log_deliver(dq_eventlog *l, int64_t t_us, const char *id,
                   const char *consumer, int attempt)
{
    ssize_t in = field_len(id, 0), cn = field_len(consumer, 0);
    rec r;

    if (!rec_ok(l, in >= 0 && cn >= 0, (size_t)(in + cn)))
        return -1;
    rec_start(&r, 'D');
    rec_tab_i64(&r, t_us);
    rec_tab_str(&r, id, (size_t)in);
    rec_tab_str(&r, consumer, (size_t)cn);
    rec_tab_i64(&r, attempt);
    return rec_end(l, &r, false);
}

int dq_log_ack(dq_eventlog *l, int64_t t_us, const char *id,
               const char *consumer, int attempt)
{
    ssize_t in = field_len(id, 0), cn = field_len(consumer, 0);
    rec r;

    if (!rec_ok(l, in >= 0 && cn >= 0, (size_t)(in + cn)))
        return -1;
    rec_start(&r, 'A');
    rec_tab_i64(&r, t_us);
    rec_tab_str(&r, id, (size_t)in);
    rec_tab_str(&r, consumer, (size_t)cn);
    rec_tab_i64(&r, attempt);
    return rec_end(l, &r, false);
}

int dq_log_ack_refused(dq_eventlog *l, int64_t t_us, const char *id,
                       const char *consumer, int attempt, const char *code)
{
    ssize_t in = field_len(id, 0), cn = field_len(consumer, 0),
            kn = field_len(code, 0);
    rec r;

    if (!rec_ok(l, in >= 0 && cn >= 0 && kn >= 0, (size_t)(in + cn + kn)))
        return -1;
    rec_start(&r, 'R');
    rec_tab_i64(&r, t_us);
    rec_tab_str(&r, id, (size_t)in);
    rec_tab_str(&r, consumer, (size_t)cn);
    rec_tab_i64(&r, attempt);
    rec_tab_str(&r, code, (size_t)kn);
    return rec_end(l, &r, false);
}

int dq_log_giveback(dq_eventlog *l, int64_t t_us, const char *id,
                    const char *consumer, int attempt, const char *how)
{
    ssize_t in = field_len(id, 0), cn = field_len(consumer, 0),
            hn = field_len(how, 0);
    rec r;

    if (!rec_ok(l, in >= 0 && cn >= 0 && hn >= 0 &&
                       (strcmp(how, "readd") == 0 || strcmp(how, "nack") == 0),
                (size_t)(in + cn + hn)))
        return -1;
    rec_start(&r, 'G');
    rec_tab_i64(&r, t_us);
    rec_tab_str(&r, id, (size_t)in);
    rec_tab_str(&r, consumer, (size_t)cn);
    rec_tab_i64(&r, attempt);
    rec_tab_str(&r, how, (size_t)hn);
    return rec_end(l, &r, false);
}

int dq_log_dead(dq_eventlog *l, int64_t t_us, const char *id)
{
    ssize_t in = field_len(id, 0);
    rec r;

    if (!rec_ok(l, in >= 0, (size_t)in))
        return -1;
    rec_start(&r, 'L');
    rec_tab_i64(&r, t_us);
    rec_tab_str(&r, id, (size_t)in);
    return rec_end(l, &r, false);
}

int dq_log_fault(dq_eventlog *l, int64_t t_us, const char *fault,
                 const char *phase, const char *arg)
{
    ssize_t fn = field_len(fault, 0), pn = field_len(phase, 0),
            an = field_len(arg, 1);
    rec r;

    if (!rec_ok(l, fn >= 0 && pn >= 0 && an >= 0 &&
                       (strcmp(phase, "begin") == 0 ||
                        strcmp(phase, "end") == 0),
                (size_t)(fn + pn + an)))
        return -1;
    rec_start(&r, 'F');
    rec_tab_i64(&r, t_us);
    rec_tab_str(&r, fault, (size_t)fn);
    rec_tab_str(&r, phase, (size_t)pn);
    rec_tab_str(&r, arg, (size_t)an);
    return rec_end(l, &r, true);
}

int dq_log_end(dq_eventlog *l, int64_t t_us, const char *how)
{
    rec r;

    if (!rec_ok(l, how != NULL && (strcmp(how, "clean") == 0 ||
                                   strcmp(how, "interrupted") == 0 ||
                                   strcmp(how, "failed") == 0), 0))
        return -1;
    /* Every thread's records first: the Z line must be the last. */
    if (dq_eventlog_flush_all(l) != 0)
        return -1;
    rec_start(&r, 'Z');
    rec_tab_i64(&r, t_us);
    rec_tab_str(&r, how, strlen(how));
    rec_char(&r, '\n');
    atomic_store(&l->ended, true);
    return write_all(l->fd, r.buf, (size_t)(r.p - r.buf));
}
