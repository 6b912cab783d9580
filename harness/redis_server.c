/* redis_server.c -- a private redis-server owned by the harness
 * (redis_server.h).
 *
 * How: pick a free port (bind 127.0.0.1:0, read it back, close; the small
 * race with another process is handled by retrying with a new port when
 * the server logs "Address already in use"), make a temporary directory
    if (o->preload != NULL &&
        (o->preload[0] != '/' || access(o->preload, R_OK) != 0 ||
         strlen(o->preload) >= sizeof s->preload)) {
        snprintf(err, errlen, "preload %.300s: not a readable absolute path "
                 "(of at most %zu bytes)", o->preload, sizeof s->preload - 1);
        return -1;
    }
    if (o->preload != NULL)
        snprintf(s->preload, sizeof s->preload, "%s", o->preload);
    if (dq_tmpdir_create("dqlab-redis", s->dir, sizeof s->dir, err,
                         errlen) != 0)
 *
 * Never leaving a server behind:
 *   - the child calls setpgid(0, 0), so Ctrl-C in the terminal reaches
 *     dqlab only, which then shuts the trial down in order and calls
 *     dq_redis_server_stop() (a server killed by the same SIGINT would make
 *     the consumers fail first and blur the report);
 *   - the child sets PR_SET_PDEATHSIG = SIGKILL (prctl(2)) so it dies with
 *     dqlab even on SIGKILL.  The signal is tied to the *thread* that
 *     forked, so dq_redis_server_start() must be called from the main
 *     thread (or a thread that outlives the server);
 *   - stop sends SIGTERM (Redis shuts down cleanly, no save with --save
 *     ''), SIGKILL after 3 s, reaps the child and removes the directory;
 *   - a forced exit (a repeated Ctrl-C, signals.h) cannot run stop, so the
 *     child's pid, its directory and its log file are registered with
 *     dq_signals_on_force_kill / _on_force_remove while they exist (an AOF
 *     directory, with its numbered files, is left behind in that case,
 *     until the next dqlab removes it by its owner record).  The child is forgotten there before it is reaped (waitid
 *     with WNOWAIT first), so a reused pid is never killed;
 *   - signals are blocked around fork(), and the child resets their
 *     actions and drops pending ones before unblocking, so a Ctrl-C that
 *     lands between fork and setpgid runs no dqlab handler in the child.
 * fork/exec, the child set-up and reaping are in spawn.c (spawn.h).
 * https://redis.io/docs/management/config/ (command-line config arguments)
 */
#define _GNU_SOURCE /* nftw(3) */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "redis_server.h"
#include "runmeta.h"
#include "signals.h"
#include "spawn.h"
#include "tmpdir.h"

#define START_TIMEOUT_MS 5000
/* Read/write timeout of each start-up PING / INFO, so a process that
 * accepts but never answers cannot hang start or restart. */
#define PROBE_TIMEOUT_MS 1000
#define STOP_TIMEOUT_MS 3000
#define PORT_RETRIES 5

/* Finds `name` in PATH (or checks it when it holds a '/').  Returns 0 and
 * the path in out, or -1. */
static int find_binary(const char *name, char *out, size_t outlen)
{
    const char *path, *p;

    if (strchr(name, '/') != NULL) {
        if (access(name, X_OK) != 0)
            return -1;
        snprintf(out, outlen, "%s", name);
        return 0;
    }
    path = getenv("PATH");
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path; *p != '\0';) {
        size_t n = strcspn(p, ":");
        if (n > 0 && (size_t)snprintf(out, outlen, "%.*s/%s", (int)n, p,
                                      name) < outlen &&
            access(out, X_OK) == 0)
            return 0;
        p += n;
        if (*p == ':')
            p++;
    }
    return -1;
}

/* A port nobody listens on now (bind to port 0 and read it back), or -1. */
static int free_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd, port = -1;

    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
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

static void remove_tree(const char *dir)
{
    if (dir[0] != '\0')
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The last non-empty line of the server's log, without Redis's
 * "pid:role date time # " prefix, into out. */
static void last_log_line(const char *dir, char *out, size_t outlen)
{
    char path[300], line[512];
    FILE *f;

    out[0] = '\0';
    snprintf(path, sizeof path, "%s/redis.log", dir);
    f = fopen(path, "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        char *s = line, *mark;
        line[strcspn(line, "\r\n")] = '\0';
        if (*s == '\0')
            continue;
        /* "1234:M 30 Nov 2023 13:00:00.123 # text" */
        mark = strstr(s, " # ");
        if (mark == NULL)
            mark = strstr(s, " * ");
        if (mark != NULL)
            s = mark + 3;
        snprintf(out, outlen, "%s", s);
    }
    fclose(f);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Writes text to dir/redis.conf (the config file of opts.config) and
 * registers it for a forced exit.  0, or -1 with a message in err. */
static int write_config(const char *dir, const char *text, char *err,
                        size_t errlen)
{
    char path[300];
    size_t len = strlen(text);
    FILE *f;
    int bad;

    snprintf(path, sizeof path, "%s/redis.conf", dir);
    f = fopen(path, "w");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    dq_signals_on_force_remove(path, false);
    bad = fwrite(text, 1, len, f) != len;
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* environ with LD_PRELOAD=<preload> (ahead of any LD_PRELOAD already
 * there) and DQ_REDIS_DIR=<dir>, for a server with a preloaded shim.  The
 * two new strings live in pre and dirvar.  Returns a malloc'd
 * NULL-terminated array for the caller to free, or NULL (out of memory). */
static char **preload_env(const char *preload, const char *dir, char *pre,
                          size_t prelen, char *dirvar, size_t dirlen)
{
    extern char **environ;
    const char *old = getenv("LD_PRELOAD");
    size_t n = 0, k = 0;
    char **env;

    while (environ[n] != NULL)
        n++;
    env = malloc((n + 3) * sizeof *env);
    if (env == NULL)
        return NULL;
    snprintf(pre, prelen, "LD_PRELOAD=%s%s%s", preload,
             old && *old ? " " : "", old ? old : "");
    snprintf(dirvar, dirlen, "DQ_REDIS_DIR=%s", dir);
    env[k++] = pre;
    env[k++] = dirvar;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
            strncmp(environ[i], "DQ_REDIS_DIR=", 13) != 0)
            env[k++] = environ[i];
    env[k] = NULL;
    return env;
}

static pid_t spawn(const char *bin, const dq_redis_server_opts *o, int port,
                   const char *dir)
{
    char portbuf[16], logpath[300], pre[4608], dirvar[300];
    char **env = NULL;
    pid_t pid;
    const char *aof = (o->appendonly && strcmp(o->appendonly, "no") != 0)
                          ? o->appendonly : NULL;
    const char *argv[24 + DQ_REDIS_SERVER_MAX_ARGS];
    char confpath[300];
    int n = 0;

    snprintf(portbuf, sizeof portbuf, "%d", port);
    snprintf(logpath, sizeof logpath, "%s/redis.log", dir);
    snprintf(confpath, sizeof confpath, "%s/redis.conf", dir);
    argv[n++] = bin;
    if (o->config != NULL)
        argv[n++] = confpath; /* a config file comes first */
    argv[n++] = "--port";
    argv[n++] = portbuf;
    argv[n++] = "--bind";
    argv[n++] = "127.0.0.1";
    argv[n++] = "--save";
    argv[n++] = "";
    argv[n++] = "--appendonly";
    argv[n++] = aof ? "yes" : "no";
    if (aof) {
        argv[n++] = "--appendfsync";
        argv[n++] = aof;
    }
    argv[n++] = "--dir";
    argv[n++] = dir;
    argv[n++] = "--daemonize";
    argv[n++] = "no";
    argv[n++] = "--logfile";
    argv[n++] = logpath;
    for (size_t i = 0; o->args != NULL && o->args[i] != NULL; i++)
        argv[n++] = o->args[i]; /* at most DQ_REDIS_SERVER_MAX_ARGS: start */
    argv[n++] = NULL;
    if (o->preload != NULL) {
        env = preload_env(o->preload, dir, pre, sizeof pre, dirvar,
                          sizeof dirvar);
        if (env == NULL) {
            errno = ENOMEM;
            return -1;
        }
    }
    pid = dq_spawn(bin, (char *const *)argv, env, -1, -1, -1);
    free(env);
    return pid;
}

int dq_redis_server_start(dq_redis_server *s, const dq_redis_server_opts *o,
                          char *err, size_t errlen)
{
    static const dq_redis_server_opts defaults = {0};
    char bin[512], msg[512], logpath[300];

    memset(s, 0, sizeof *s);
    if (o == NULL)
        o = &defaults;
    if (o->appendonly && strcmp(o->appendonly, "no") != 0 &&
        strcmp(o->appendonly, "everysec") != 0 &&
        strcmp(o->appendonly, "always") != 0) {
        snprintf(err, errlen, "appendonly must be no, everysec or always, "
                 "not '%.20s'", o->appendonly);
        return -1;
    }
    if (find_binary(o->binary ? o->binary : "redis-server", bin,
                    sizeof bin) != 0) {
        if (o->binary && strchr(o->binary, '/') == NULL)
            snprintf(err, errlen, "%s not found in PATH (apt-get install "
                     "%s)", o->binary, o->binary);
        else if (o->binary)
            snprintf(err, errlen, "%s: not found or not executable",
                     o->binary);
        else
            snprintf(err, errlen, "redis-server not found in PATH "
                     "(apt-get install redis-server)");
        return -1;
    }
    snprintf(s->binary, sizeof s->binary, "%s", bin);
    if (o->preload != NULL &&
        (o->preload[0] != '/' || access(o->preload, R_OK) != 0 ||
         strlen(o->preload) >= sizeof s->preload)) {
        snprintf(err, errlen, "preload %.300s: not a readable absolute path "
                 "(of at most %zu bytes)", o->preload, sizeof s->preload - 1);
        return -1;
    }
    if (o->preload != NULL)
        snprintf(s->preload, sizeof s->preload, "%s", o->preload);
    for (size_t i = 0; o->args != NULL && o->args[i] != NULL; i++)
        if (i >= DQ_REDIS_SERVER_MAX_ARGS) {
            snprintf(err, errlen, "more than %d extra server arguments",
                     DQ_REDIS_SERVER_MAX_ARGS);
            return -1;
        }
    if (dq_tmpdir_create("dqlab-redis", s->dir, sizeof s->dir, err,
                         errlen) != 0)
        return -1;
    snprintf(logpath, sizeof logpath, "%s/redis.log", s->dir);
    dq_signals_on_force_remove(logpath, false);
    if (o->config != NULL && write_config(s->dir, o->config, err,
                                          errlen) != 0)
        goto fail;

    for (int attempt = 0; attempt < PORT_RETRIES; attempt++) {
        int port = o->port > 0 ? o->port : free_port();
        int64_t deadline;
        pid_t pid;

        if (port < 0) {
            snprintf(err, errlen, "cannot find a free port: %s",
                     strerror(errno));
            goto fail;
        }
        pid = spawn(bin, o, port, s->dir);
        if (pid < 0) {
            snprintf(err, errlen, "fork: %s", strerror(errno));
            goto fail;
        }
        s->pid = pid;
        s->port = port;
        deadline = mono_ms() + START_TIMEOUT_MS;
        for (;;) {
            int status;
            redisContext *c;
            struct timeval tv = {0, 200000};
            struct timeval probe_tv = {PROBE_TIMEOUT_MS / 1000,
                                       (PROBE_TIMEOUT_MS % 1000) * 1000};

            if (dq_spawn_reap(pid, &status, false) == pid) {
                s->pid = 0;
                last_log_line(s->dir, msg, sizeof msg);
                if (o->port == 0 && strstr(msg, "in use") != NULL)
                    break; /* lost the port race: try another */
                if (WIFEXITED(status) && WEXITSTATUS(status) == 127 &&
                    msg[0] == '\0')
                    snprintf(err, errlen, "%s: could not be executed", bin);
                else
                    snprintf(err, errlen, "redis-server exited at start: %s",
                             msg[0] ? msg : "(no log)");
                goto fail;
            }
            c = redisConnectWithTimeout("127.0.0.1", port, tv);
            /* The connect timeout bounds only the connect: a process that
             * won the port race and never answers must not hang PING. */
            if (c != NULL && c->err == 0 &&
                redisSetTimeout(c, probe_tv) == REDIS_OK) {
                redisReply *r = redisCommand(c, "PING");
                int ok = r != NULL && r->type == REDIS_REPLY_STATUS &&
                         strcmp(r->str, "PONG") == 0;
                if (r)
                    freeReplyObject(r);
                if (ok) {
                    r = redisCommand(c, "INFO server");
                    if (r != NULL && r->type == REDIS_REPLY_STRING)
                        dq_runmeta_redis_version(r->str, s->version,
                                                 sizeof s->version);
                    if (r)
                        freeReplyObject(r);
                    redisFree(c);
                    return 0;
                }
            }
            if (c != NULL)
                redisFree(c);
            if (mono_ms() > deadline) {
                snprintf(err, errlen, "redis-server on port %d did not answer "
                         "PING within %d ms", port, START_TIMEOUT_MS);
                goto fail;
            }
            sleep_ms(20);
        }
        if (o->port > 0)
            break;
    }
    snprintf(err, errlen, "redis-server: no free port after %d tries",
             PORT_RETRIES);
fail:
    dq_redis_server_stop(s);
    return -1;
}

void dq_redis_server_stop(dq_redis_server *s)
{
    if (s == NULL)
        return;
    if (s->pid > 0) {
        int64_t deadline = mono_ms() + STOP_TIMEOUT_MS;
        int status;
        pid_t w;

        kill(s->pid, SIGTERM);
        for (;;) {
            w = dq_spawn_reap(s->pid, &status, false);
            if (w != 0)
                break;
            if (mono_ms() > deadline) {
                kill(s->pid, SIGKILL);
                dq_spawn_reap(s->pid, &status, true);
                break;
            }
            sleep_ms(10);
        }
        s->pid = 0;
    }
    if (s->dir[0] != '\0') {
        char logpath[300];
        snprintf(logpath, sizeof logpath, "%s/redis.log", s->dir);
        remove_tree(s->dir);
        dq_signals_forget_remove(logpath);
        snprintf(logpath, sizeof logpath, "%s/redis.conf", s->dir);
        dq_signals_forget_remove(logpath);
        dq_tmpdir_remove(s->dir); /* gone already; forgets its entries */
    }
    s->dir[0] = '\0';
}

int dq_redis_server_restart(dq_redis_server *s, const char *appendonly,
                            char *err, size_t errlen)
{
    dq_redis_server_opts o = {.appendonly = appendonly, .port = s->port,
                              .preload = s->preload[0] ? s->preload : NULL};
    int64_t deadline;
    int status;
    pid_t pid;
    char msg[512];

    if (s->dir[0] == '\0' || s->binary[0] == '\0' || s->port <= 0) {
        snprintf(err, errlen, "restart: no private redis-server to restart");
        return -1;
    }
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        dq_spawn_reap(s->pid, &status, true);
        s->pid = 0;
    }
    pid = spawn(s->binary, &o, s->port, s->dir);
    if (pid < 0) {
        snprintf(err, errlen, "restart: fork: %s", strerror(errno));
        return -1;
    }
    s->pid = pid;
    /* A big AOF takes a while to load: LOADING replies extend the wait. */
    deadline = mono_ms() + START_TIMEOUT_MS;
    for (;;) {
        redisContext *c;
        struct timeval tv = {0, 200000};
        struct timeval probe_tv = {PROBE_TIMEOUT_MS / 1000,
                                   (PROBE_TIMEOUT_MS % 1000) * 1000};
        bool loading = false;

        if (dq_spawn_reap(pid, &status, false) == pid) {
            s->pid = 0;
            last_log_line(s->dir, msg, sizeof msg);
            snprintf(err, errlen, "restart: redis-server exited at start: %s",
                     msg[0] ? msg : "(no log)");
            return -1;
        }
        c = redisConnectWithTimeout("127.0.0.1", s->port, tv);
        if (c != NULL && c->err == 0 &&
            redisSetTimeout(c, probe_tv) == REDIS_OK) {
            redisReply *r = redisCommand(c, "PING");
            bool ok = r != NULL && r->type == REDIS_REPLY_STATUS &&
                      strcmp(r->str, "PONG") == 0;
            loading = r != NULL && r->type == REDIS_REPLY_ERROR &&
                      strncmp(r->str, "LOADING", 7) == 0;
            if (r)
                freeReplyObject(r);
            redisFree(c);
            if (ok)
                return 0;
        } else if (c != NULL) {
            redisFree(c);
        }
        if (loading)
            deadline = mono_ms() + START_TIMEOUT_MS;
        if (mono_ms() > deadline) {
            snprintf(err, errlen, "restart: redis-server on port %d did not "
                     "answer PING within %d ms", s->port, START_TIMEOUT_MS);
            kill(pid, SIGKILL);
            dq_spawn_reap(pid, &status, true);
            s->pid = 0;
            return -1;
        }
        sleep_ms(10);
    }
}
