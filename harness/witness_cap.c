/* witness_cap.c -- what Redis saw during a witness trial: a MONITOR
 * capture, and the keyspace events an observer received (witness_int.h).
 *
 * MONITOR (https://redis.io/commands/monitor/) streams every command the
 * server runs as one status reply:
 *   1700000000.123456 [0 127.0.0.1:54321] "ZREM" "dq:{q}:z" "t3"
 * server time in s.us, the db and the client's address ("lua" for a
 * command a script ran: it follows the EVAL/EVALSHA that ran it, since a
 * script runs atomically), then the arguments quoted as Redis's sdscatrepr
 * writes them (\" \\ \n \r \t \a \b \xHH).  A reader thread per
 * connection appends the lines; the command's main thread reads them
 * under the mutex.  MONITOR shows what clients send, not replies, and not
 * what the server does by itself: a key deleted by the active expire cycle
 * and the `expired` keyspace event it publishes never appear (Redis 7.0
 * feeds monitors from call(), for client commands only).  So the expiry
 * witness adds an observer: a PSUBSCRIBE to the expired channel, which
 * sees the event without counting in PUBSUB NUMSUB (pattern subscribers
 * are not channel subscribers, https://redis.io/commands/pubsub-numsub/).
 *
 * Which client is which: dqlab names every connection
 * "dqlab:<queue>:<consumer>" (rconn.h), and MONITOR shows the CLIENT
 * SETNAME of each, so the map address -> name is built from the capture
 * itself, completed by a CLIENT LIST when the capture stops.
 *
 * How a reader ends: dq_wt_cap_stop sends ECHO <token> (and PUBLISH <token>,
 * which the observer's second pattern matches); since MONITOR and Pub/Sub
 * deliver in order, every command sent before it is in the capture by
 * then.  A socket timeout ends a reader that never sees its token.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "witness_int.h"

#define READ_TIMEOUT_S 15   /* a reader with nothing to read gives up */
#define EXPIRED_CHANNEL "__keyevent@0__:expired"

redisContext *dq_wt_connect(int port, const char *queue, const char *role,
                            char *err, size_t errlen)
{
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    char name[160];
    redisReply *r;

    if (c == NULL || c->err) {
        snprintf(err, errlen, "redis 127.0.0.1:%d: %s", port,
                 c ? c->errstr : "out of memory");
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    snprintf(name, sizeof name, "dqlab:%s:%s", queue, role);
    r = redisCommand(c, "CLIENT SETNAME %s", name);
    if (r == NULL || r->type == REDIS_REPLY_ERROR) {
        snprintf(err, errlen, "redis 127.0.0.1:%d: CLIENT SETNAME: %s", port,
                 r ? r->str : c->errstr);
        if (r)
            freeReplyObject(r);
        redisFree(c);
        return NULL;
    }
    freeReplyObject(r);
    return c;
}

bool dq_wt_is(const wt_line *l, const char *cmd)
{
    return l->argc > 0 && strcasecmp(l->argv[0], cmd) == 0;
}

/* Parses one sdscatrepr-quoted argument at *p into a malloc'd string;
 * advances *p past it and the following space.  NULL at the end or on a
 * malformed argument. */
static char *unquote(const char **p)
{
    const char *s = *p;
    size_t n = 0, cap = strlen(s) + 1;
    char *out;

    while (*s == ' ')
        s++;
    if (*s != '"' || (out = malloc(cap)) == NULL)
        return NULL;
    for (s++; *s && *s != '"'; s++) {
        char ch = *s;
        if (ch == '\\' && s[1]) {
            s++;
            switch (*s) {
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'a': ch = '\a'; break;
            case 'b': ch = '\b'; break;
            case 'x': {
                unsigned v = 0;
                if (sscanf(s + 1, "%2x", &v) == 1)
                    s += 2;
                ch = (char)v;
                break;
            }
            default: ch = *s;
            }
        }
        out[n++] = ch;
    }
    out[n] = '\0';
    *p = *s ? s + 1 : s;
    return out;
}

static void line_free(wt_line *l)
{
    free(l->raw);
    for (int i = 0; i < l->argc; i++)
        free(l->argv[i]);
    memset(l, 0, sizeof *l);
}

/* Parses a MONITOR line into *l (zeroed first).  0, or -1 when it is not
 * one (l holds nothing then). */
static int parse_monitor(const char *str, wt_line *l)
{
    const char *p = str, *close;
    char *end;
    long long sec;
    long usec;

    memset(l, 0, sizeof *l);
    sec = strtoll(p, &end, 10);
    if (*end != '.')
        return -1;
    usec = strtol(end + 1, &end, 10);
    if (strncmp(end, " [", 2) != 0 || (close = strchr(end, ']')) == NULL)
        return -1;
    l->t_us = (int64_t)sec * 1000000 + usec;
    p = strchr(end + 2, ' ');            /* after the db number */
    if (p == NULL || p > close)
        return -1;
    snprintf(l->addr, sizeof l->addr, "%.*s", (int)(close - p - 1), p + 1);
    l->script = strcmp(l->addr, "lua") == 0;
    p = close + 1;
    while (l->argc < WT_MAX_ARGS && (l->argv[l->argc] = unquote(&p)) != NULL)
        l->argc++;
    if ((l->raw = strdup(str)) == NULL || l->argc == 0) {
        line_free(l);
        return -1;
    }
    return 0;
}

/* Appends *l (taking its strings) under c->mu and wakes waiters. */
static void cap_append(wt_cap *c, wt_line *l)
{
    pthread_mutex_lock(&c->mu);
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 1024;
        wt_line *nl = realloc(c->lines, nc * sizeof *nl);
        if (nl == NULL) {
            pthread_mutex_unlock(&c->mu);
            line_free(l);
            return;
        }
        c->lines = nl;
        c->cap = nc;
    }
    c->lines[c->n++] = *l;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* Records addr -> name (the first name an address had is kept: dqlab
 * never renames a connection of one queue). */
static void name_add(wt_cap *c, const char *addr, const char *name)
{
    for (size_t i = 0; i < c->nnames; i++)
        if (strcmp(c->names[i].addr, addr) == 0)
            return;
    if (c->nnames == c->capnames) {
        size_t nc = c->capnames ? 2 * c->capnames : 16;
        wt_name *nn = realloc(c->names, nc * sizeof *nn);
        if (nn == NULL)
            return;
        c->names = nn;
        c->capnames = nc;
    }
    snprintf(c->names[c->nnames].addr, sizeof c->names[0].addr, "%s", addr);
    snprintf(c->names[c->nnames].name, sizeof c->names[0].name, "%s", name);
    c->nnames++;
}

/* One MONITOR reply.  Returns true when it was the stop token. */
static bool on_monitor(wt_cap *c, const char *str)
{
    wt_line l;

    if (parse_monitor(str, &l) != 0)
        return false;
    if (dq_wt_is(&l, "ECHO") && l.argc == 2 && strcmp(l.argv[1],
        c->token) == 0) {
        line_free(&l);
        return true;
    }
    pthread_mutex_lock(&c->mu);
    if (l.script)
        snprintf(l.addr, sizeof l.addr, "%s", c->last_addr);
    else
        snprintf(c->last_addr, sizeof c->last_addr, "%s", l.addr);
    if (dq_wt_is(&l, "CLIENT") && l.argc == 3 &&
        strcasecmp(l.argv[1], "SETNAME") == 0)
        name_add(c, l.addr, l.argv[2]);
    pthread_mutex_unlock(&c->mu);
    cap_append(c, &l);
    return false;
}

/* One observer reply ("pmessage" pattern channel message).  Returns true
 * when it was the stop token. */
static bool on_event(wt_cap *c, const redisReply *r)
{
    wt_line l;
    char raw[512];

    if (r->type != REDIS_REPLY_ARRAY || r->elements != 4 ||
        r->element[2]->type != REDIS_REPLY_STRING ||
        r->element[3]->type != REDIS_REPLY_STRING)
        return false;
    if (strcmp(r->element[2]->str, c->token) == 0)
        return true;
    memset(&l, 0, sizeof l);
    l.t_us = dq_wall_us();
    l.event = true;
    snprintf(l.addr, sizeof l.addr, "keyspace-events");
    snprintf(l.who, sizeof l.who, "events");
    snprintf(raw, sizeof raw, "%.6f [event] \"pmessage\" \"%s\" \"%s\"",
             (double)l.t_us / 1e6, r->element[2]->str, r->element[3]->str);
    l.raw = strdup(raw);
    l.argv[0] = strdup("pmessage");
    l.argv[1] = strdup(r->element[2]->str);
    l.argv[2] = strdup(r->element[3]->str);
    l.argc = 3;
    if (l.raw == NULL || !l.argv[0] || !l.argv[1] || !l.argv[2]) {
        line_free(&l);
        return false;
    }
    cap_append(c, &l);
    return false;
}

static void *reader_main(wt_cap *c, redisContext *ctx, bool monitor)
{
    redisReply *r;
    bool stop = false;

    while (!stop) {
        if (redisGetReply(ctx, (void **)&r) != REDIS_OK || r == NULL) {
            pthread_mutex_lock(&c->mu);
            snprintf(c->err, sizeof c->err, "%s connection: %s",
                     monitor ? "MONITOR" : "observer", ctx->errstr);
            pthread_mutex_unlock(&c->mu);
            break;
        }
        if (monitor && r->type == REDIS_REPLY_STATUS)
            stop = on_monitor(c, r->str);
        else if (!monitor)
            stop = on_event(c, r);
        freeReplyObject(r);
    }
    pthread_mutex_lock(&c->mu);
    if (monitor)
        c->mon_done = true;
    else
        c->obs_done = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

static void *mon_main(void *arg)
{
    wt_cap *c = arg;
    return reader_main(c, c->mon, true);
}

static void *obs_main(void *arg)
{
    wt_cap *c = arg;
    return reader_main(c, c->obs, false);
}

/* Sends cmd on ctx and checks its first reply is not an error; for
 * PSUBSCRIBE of two patterns reads both confirmations. */
static int enter_mode(redisContext *ctx, const char *what, int replies,
                      char *err, size_t errlen)
{
    struct timeval tv = {READ_TIMEOUT_S, 0};

    for (int i = 0; i < replies; i++) {
        redisReply *r = NULL;
        if (redisGetReply(ctx, (void **)&r) != REDIS_OK || r == NULL ||
            r->type == REDIS_REPLY_ERROR) {
            snprintf(err, errlen, "%s: %s", what,
                     r ? r->str : ctx->errstr);
            if (r)
                freeReplyObject(r);
            return -1;
        }
        freeReplyObject(r);
    }
    redisSetTimeout(ctx, tv);
    return 0;
}

static int start_observer(wt_cap *c, int port, char *err, size_t errlen)
{
    if ((c->obs = dq_wt_connect(port, c->queue, "observer", err,
        errlen)) == NULL)
        return -1;
    redisAppendCommand(c->obs, "PSUBSCRIBE %s %s", EXPIRED_CHANNEL, c->token);
    if (enter_mode(c->obs, "PSUBSCRIBE", 2, err, errlen) != 0)
        return -1;
    if (pthread_create(&c->obs_th, NULL, obs_main, c) != 0) {
        snprintf(err, errlen, "observer thread: %s", strerror(errno));
        return -1;
    }
    c->obs_running = true;
    return 0;
}

int dq_wt_cap_start(wt_cap *c, int port, const char *queue, bool observe,
                    char *err, size_t errlen)
{
    static unsigned serial;

    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    snprintf(c->queue, sizeof c->queue, "%s", queue);
    snprintf(c->token, sizeof c->token, "dqlab-witness-stop-%ld-%u",
             (long)getpid(), __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
    if ((c->mon = dq_wt_connect(port, queue, "monitor", err, errlen)) == NULL)
        goto fail;
    redisAppendCommand(c->mon, "MONITOR");
    if (enter_mode(c->mon, "MONITOR", 1, err, errlen) != 0)
        goto fail;
    if (pthread_create(&c->mon_th, NULL, mon_main, c) != 0) {
        snprintf(err, errlen, "MONITOR thread: %s", strerror(errno));
        goto fail;
    }
    c->mon_running = true;
    if (observe && start_observer(c, port, err, errlen) != 0)
        goto fail;
    return 0;
fail:
    dq_wt_cap_free(c);
    return -1;
}

/* Adds the addr/name pairs of a CLIENT LIST reply text. */
static void names_from_list(wt_cap *c, const char *text)
{
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        char line[1024], addr[64] = "", name[128] = "";
        snprintf(line, sizeof line, "%.*s",
                 (int)(eol ? eol - p : (ptrdiff_t)strlen(p)), p);
        for (char *tok = strtok(line, " \r"); tok; tok = strtok(NULL, " \r")) {
            if (strncmp(tok, "addr=", 5) == 0)
                snprintf(addr, sizeof addr, "%s", tok + 5);
            else if (strncmp(tok, "name=", 5) == 0)
                snprintf(name, sizeof name, "%s", tok + 5);
        }
        if (addr[0] && name[0])
            name_add(c, addr, name);
        p = eol ? eol + 1 : NULL;
    }
}

void dq_wt_cap_who(const wt_cap *c, const char *addr, char *who, size_t len)
{
    char prefix[96];
    size_t pl;

    who[0] = '\0';
    pl = (size_t)snprintf(prefix, sizeof prefix, "dqlab:%s:", c->queue);
    for (size_t i = 0; i < c->nnames; i++) {
        const char *nm = c->names[i].name;
        if (strcmp(c->names[i].addr, addr) != 0 || strncmp(nm, prefix, pl))
            continue;
        snprintf(who, len, "%.*s", (int)strcspn(nm + pl, ":"), nm + pl);
        return;
    }
}

static void join_readers(wt_cap *c)
{
    if (c->mon_running)
        pthread_join(c->mon_th, NULL);
    if (c->obs_running)
        pthread_join(c->obs_th, NULL);
    c->mon_running = c->obs_running = false;
}

int dq_wt_cap_stop(wt_cap *c, redisContext *w, char *err, size_t errlen)
{
    redisReply *r;
    int rc = 0;

    if ((r = redisCommand(w, "ECHO %s", c->token)) != NULL)
        freeReplyObject(r);
    if (c->obs && (r = redisCommand(w, "PUBLISH %s 1", c->token)) != NULL)
        freeReplyObject(r);
    join_readers(c);
    r = redisCommand(w, "CLIENT LIST");
    if (r != NULL && r->type == REDIS_REPLY_STRING)
        names_from_list(c, r->str);
    if (r)
        freeReplyObject(r);
    for (size_t i = 0; i < c->n; i++)
        if (!c->lines[i].event)
            dq_wt_cap_who(c, c->lines[i].addr, c->lines[i].who,
                          sizeof c->lines[i].who);
    if (c->err[0]) {
        snprintf(err, errlen, "capture ended early: %s", c->err);
        rc = -1;
    }
    return rc;
}

void dq_wt_cap_free(wt_cap *c)
{
    /* A reader still running blocks in a read: closing its socket under it
     * would race, so shut the socket down and let it fail, then join. */
    if (c->mon_running && c->mon)
        shutdown(c->mon->fd, SHUT_RDWR);
    if (c->obs_running && c->obs)
        shutdown(c->obs->fd, SHUT_RDWR);
    join_readers(c);
    redisFree(c->mon);
    redisFree(c->obs);
    for (size_t i = 0; i < c->n; i++)
        line_free(&c->lines[i]);
    free(c->lines);
    free(c->names);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    memset(c, 0, sizeof *c);
}

bool dq_wt_cap_wait(wt_cap *c, bool (*pred)(wt_cap *c, void *arg), void *arg,
                    int64_t timeout_ms)
{
    struct timespec ts;
    bool ok;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&c->mu);
    while (!(ok = pred(c, arg)) && !c->mon_done)
        if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT) {
            ok = pred(c, arg);
            break;
        }
    pthread_mutex_unlock(&c->mu);
    return ok;
}

int dq_wt_cap_write(const wt_cap *c, const char *path, const char *title,
                    char *err, size_t errlen)
{
    FILE *f = fopen(path, "wx");
    char who[WT_WHO_MAX];

    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "# %s\n# raw capture: MONITOR lines of the queue's "
            "connections (\"lua\": run by the script of the line above)"
            "%s\n", title, c->obs ? ", and the keyspace events the "
            "observer received ([event], receipt time)" : "");
    for (size_t i = 0; i < c->nnames; i++) {
        dq_wt_cap_who(c, c->names[i].addr, who, sizeof who);
        if (who[0])
            fprintf(f, "# client %s %s\n", c->names[i].addr,
                    c->names[i].name);
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->lines[i].who[0])
            fprintf(f, "%s\n", c->lines[i].raw);
    if (fclose(f) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

long dq_wt_find(const wt_cap *c, long from, const char *who, const char *cmd,
                int pos, const char *arg)
{
    for (long i = from < 0 ? 0 : from; i < (long)c->n; i++) {
        const wt_line *l = &c->lines[i];
        if (!l->script && strcmp(l->who, who) == 0 && dq_wt_is(l, cmd) &&
            (arg == NULL || (l->argc > pos && strcmp(l->argv[pos], arg) == 0)))
            return i;
    }
    return -1;
}

long dq_wt_last(const wt_cap *c, long before, const char *who, const char *cmd)
{
    for (long i = before - 1; i >= 0; i--)
        if (!c->lines[i].script && strcmp(c->lines[i].who, who) == 0 &&
            dq_wt_is(&c->lines[i], cmd))
            return i;
    return -1;
}

long dq_wt_script_find(const wt_cap *c, long eval, const char *cmd, int pos,
                       const char *arg)
{
    for (long i = eval + 1; i < (long)c->n && c->lines[i].script; i++) {
        const wt_line *l = &c->lines[i];
        if ((cmd == NULL || dq_wt_is(l, cmd)) &&
            (arg == NULL || (l->argc > pos && strcmp(l->argv[pos], arg) == 0)))
            return i;
    }
    return -1;
}

void dq_wt_script_label(const wt_chart *ch, const wt_cap *c, long eval,
                        char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    for (long i = eval + 1; i < (long)c->n && c->lines[i].script; i++) {
        const wt_line *l = &c->lines[i];
        for (int a = 0; a < l->argc && n + 1 < len; a++) {
            char b[48];
            n += (size_t)snprintf(buf + n, len - n, "%s%s",
                                  a ? " " : (n ? "\n" : ""),
                                  a ? dq_wt_arg(ch, l->argv[a], b, sizeof b)
                                    : l->argv[0]);
        }
        if (n >= len)
            break;
    }
}
