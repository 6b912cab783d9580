/* cli_run.c -- `dqlab run`: one trial of one strategy, checked.
 *
 * Order of work, so that bad input costs nothing and nothing is left
 * behind: parse and validate every argument (exit 2 with one line naming
 * the option and the value), check the strategy option values against
 * their declared types and ranges (dq_opts_check, dq.h), check --out
 * without creating it (a new or empty directory only), then start the
 * private redis-server if the strategy needs Redis and no --redis was
 * given, create --out DIR, run the trial (trial.c), print the summary, and
 * on every path after the server started -- success, error, Ctrl-C -- stop
 * it, remove the temporary log, and remove DIR again if we created it and
 * it is still empty.  The temporary log and directory are also registered
 * with signals.h so that a forced exit (a repeated Ctrl-C) removes them,
 * and the directory carries an owner record (tmpdir.h) so that after a
 * SIGKILL the next dqlab removes it.  The summary goes to
 * stdout (human text, or one JSON object with --json); progress and errors
 * to stderr.
 *
 * The --redis password is never printed: the summary uses
 * dq_redis_url_redacted(), and the messages go through run_error(), which
 * masks the userinfo of any URL an argument put in them.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "experiment.h"
#include "faults.h"
#include "parse.h"
#include "redis_server.h"
#include "redis_url.h"
#include "signals.h"
#include "tmpdir.h"
#include "trial.h"

#define MAX_WORKERS 1024
#define MAX_TASKS 100000000LL
#define MAX_DELAY_MS 86400000LL
#define MAX_WORK_US 60000000LL
#define MAX_PAYLOAD 16777216LL
#define MAX_GRACE_MS 3600000LL

static void usage(FILE *f)
{
    fprintf(f,
        "usage: dqlab run --strategy S [options]\n"
        "  Runs one trial: producers enqueue tasks with seeded delays and "
        "payloads,\n"
        "  consumers claim, work and ack; the event log is checked "
        "afterwards.\n\n"
        "  --strategy S          strategy name (dqlab list)\n"
        "  --opt KEY=VALUE       strategy option, repeatable (dqlab list -v)\n"
        "  --producers P         producer threads (1)\n"
        "  --consumers C         consumer threads, one handle each (1)\n"
        "  --tasks N             tasks to enqueue (1000)\n"
        "  --delay-ms MIN:MAX or N\n"
        "                        due = enqueue time + uniform delay in "
        "[MIN, MAX] ms;\n"
        "                        N means N:N (0:100)\n"
        "  --work-us W           simulated work between claim and ack (0)\n"
        "  --payload-bytes B     payload size, binary with NUL/LF/comma (16)\n"
        "  --grace-ms G          drain deadline = latest due + G (2000)\n"
        "  --enqueue-batch N     tasks per enqueue call: N > 1 sends groups "
        "with\n"
        "                        dq_enqueue_many (one MULTI/EXEC per group "
        "for the\n"
        "                        ZSet strategies) (1)\n"
        "  --seed SEED           seed for delays and payloads (1)\n"
        "  --queue NAME          queue name (dqlab-<strategy>-<seed>)\n"
        "  --redis URL           redis://[user:password@]host:port[/db]; "
        "default:\n"
        "                        a private redis-server on a free port\n"
        "  --fresh               delete existing keys dq:{queue}:* first\n"
        "  --out DIR             keep DIR/events.log and DIR/summary.json "
        "(DIR new\n"
        "                        or empty)\n"
        "  --consumer-mode M     thread (default) or process: each consumer "
        "a child\n"
        "                        process, so a fault can SIGKILL it\n"
        "  --fault SPEC          inject a fault, repeatable (faults.h):\n"
        "                          kill-consumer:POINT[:N]  POINT after-claim|"
        "during-work|\n"
        "                            before-ack (implies --consumer-mode "
        "process)\n"
        "                          restart-redis:off|everysec|always[:AT_MS]\n"
        "                          pause-redis:MS[:AT_MS]   subscriber-outage:"
        "MS[:AT_MS]\n"
        "                          clock-skew:[+|-]MS       mover-stall[:AT_MS]"
        "\n"
        "  --json                print the summary as one JSON object\n"
        "  --quiet               no progress line\n\n"
        "Exit: 0 ok, 1 the strategy broke a guarantee it declares, 2 bad "
        "input or\nenvironment, 130 interrupted.\n");
}

/* Prints "dqlab run: MESSAGE" as one line on stderr, with the userinfo of
 * any redis:// URL in it masked (dq_redact_redis_urls): a message that
 * quotes an argument must not quote a password. */
static void run_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void run_error(const char *fmt, ...)
{
    char msg[1024], safe[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dq_redact_redis_urls(msg, safe, sizeof safe);
    fprintf(stderr, "dqlab run: %s\n", safe);
}

/* The valid strategy names, "naive, lua, heap", into buf. */
static void strategy_names(char *buf, size_t buflen)
{
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; dq_strategies[i] != NULL && n < buflen; i++)
        n += (size_t)snprintf(buf + n, buflen - n, "%s%s", i ? ", " : "",
                              dq_strategies[i]->name);
}

/* The files `run --out DIR` writes, named first when DIR holds one. */
static const char *const out_files[] = {"events.log", "summary.json",
                                        ".summary.json.tmp", NULL};

/* An entry of directory dir into name (namelen bytes): one of out_files
 * when it holds one, else the first other entry.  Returns 1 when dir holds
 * anything, 0 when it is empty, -1 (errno set) when it cannot be read. */
static int outdir_entry(const char *dir, char *name, size_t namelen)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int found = 0;

    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        for (size_t i = 0; out_files[i] != NULL; i++)
            if (strcmp(de->d_name, out_files[i]) == 0) {
                snprintf(name, namelen, "%s", de->d_name);
                closedir(d);
                return 1;
            }
        if (!found)
            snprintf(name, namelen, "%s", de->d_name);
        found = 1;
    }
    closedir(d);
    return found;
}

/* Checks --out DIR without creating it: an empty existing directory we may
 * write into, or a new name whose parent is such a directory.  A directory
 * that holds anything is refused: it may hold the results of an earlier
 * run (events.log, summary.json or files dqlab does not know), and a new
 * run must never replace or mix with them.  Returns 0, or -1 with a
 * message in err. */
static int check_outdir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    char parent[4200], entry[256];
    char *slash;

    if (stat(dir, &st) == 0) {
        int held;

        if (!S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%.400s is not a directory", dir);
            return -1;
        }
        if (access(dir, W_OK | X_OK) != 0) {
            snprintf(err, errlen, "%.400s: %s", dir, strerror(errno));
            return -1;
        }
        held = outdir_entry(dir, entry, sizeof entry);
        if (held < 0) {
            snprintf(err, errlen, "%.400s: %s", dir, strerror(errno));
            return -1;
        }
        if (held > 0) {
            snprintf(err, errlen, "%.250s is not empty (it holds %.80s; "
                     "refusing to overwrite or mix with earlier results: "
                     "choose a new or empty directory)", dir, entry);
            return -1;
        }
        return 0;
    }
    if (errno != ENOENT) {
        snprintf(err, errlen, "%.400s: %s", dir, strerror(errno));
        return -1;
    }
    /* A new directory: its parent must exist and be writable. */
    snprintf(parent, sizeof parent, "%s", dir);
    for (size_t n = strlen(parent); n > 1 && parent[n - 1] == '/'; n--)
        parent[n - 1] = '\0';
    slash = strrchr(parent, '/');
    if (slash == NULL)
        snprintf(parent, sizeof parent, ".");
    else if (slash == parent)
        parent[1] = '\0';
    else
        *slash = '\0';
    if (stat(parent, &st) == 0 && !S_ISDIR(st.st_mode))
        errno = ENOTDIR;
    else if (stat(parent, &st) == 0 && access(parent, W_OK | X_OK) == 0)
        return 0;
    snprintf(err, errlen, "%.200s: cannot create it in %.200s: %s", dir,
             parent, strerror(errno));
    return -1;
}

static int write_summary(const char *dir, json_t *o, char *err, size_t errlen)
{
    char tmp[4200], path[4200];

    snprintf(path, sizeof path, "%s/summary.json", dir);
    snprintf(tmp, sizeof tmp, "%s/.summary.json.tmp", dir);
    if (json_dump_file(o, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) != 0 ||
        rename(tmp, path) != 0) {
        snprintf(err, errlen, "%.400s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

static void print_human(const dq_trial_params *p, const dq_trial_result *r,
                        const char *where, const char *log_path)
{
    const dq_check *c = &r->check;
    const char *viol[8];
    size_t nv = dq_trial_violations(p, r, viol, 8);

    printf("strategy    %s", p->strategy->name);
    for (size_t i = 0; i < r->nopts; i++)
        printf("%s%s=%s", i ? " " : " (", r->opts[i].key, r->opts[i].val);
    printf("%s\n", r->nopts ? ")" : "");
    printf("trial       %" PRId64 " tasks, %d producer%s, %d consumer%s, delay "
           "%" PRId64 "..%" PRId64 " ms, work %" PRId64 " us, payload %" PRId64
           " B, seed %" PRIu64 "\n", p->tasks, p->producers,
           p->producers == 1 ? "" : "s", p->consumers,
           p->consumers == 1 ? "" : "s", p->delay_min_ms, p->delay_max_ms,
           p->work_us, p->payload_bytes, p->seed);
    if (p->enqueue_batch > 1)
        printf("enqueue     batches of %" PRId64 " (dq_enqueue_many)\n",
               p->enqueue_batch);
    if (p->nfaults > 0 || r->process_mode) {
        printf("faults      ");
        for (size_t i = 0; i < p->nfaults; i++) {
            char spec[64];
            dq_fault_format(&p->faults[i], spec, sizeof spec);
            printf("%s%s", i ? ", " : "", spec);
        }
        printf("%sconsumers as %s; kills %d, redis restarts %d, retries %"
               PRIu64 "\n", p->nfaults ? "; " : "",
               r->process_mode ? "processes" : "threads", r->kills,
               r->restarts, r->retries);
    }
    if (where != NULL)
        printf("redis       %s (%s), queue %s\n", where,
               r->redis_version[0] ? r->redis_version : "?", r->queue);
    printf("enqueued    %" PRIu64 "\n", c->enqueued);
    printf("delivered   %" PRIu64 "  (deliveries %" PRIu64 ", duplicates %"
           PRIu64 ", acked %" PRIu64 ")\n", c->delivered, c->deliveries,
           c->duplicates, c->acked);
    if (c->fault_windows > 0 || c->redelivered + c->redelivered_hidden > 0)
        printf("redelivered %" PRIu64 "  (of which %" PRIu64 " whose first "
               "delivery died unlogged with its consumer); duplicates "
               "during a fault %" PRIu64 ", without %" PRIu64 "\n",
               c->redelivered + c->redelivered_hidden, c->redelivered_hidden,
               c->dup_fault, c->dup_nofault);
    printf("lost        %" PRIu64 "%s\n", c->lost,
           r->interrupted ? "  (interrupted: not a verdict)" : "");
    if (c->pending_end > 0)
        printf("pending     %" PRIu64 "  (due after the end, or still leased "
               "to a killed consumer)\n", c->pending_end);
    printf("early       %" PRIu64 "   unknown %" PRIu64 "   payload "
           "mismatches %" PRIu64 "\n", c->early, c->unknown,
           r->payload_mismatches);
    printf("lateness ms p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n",
           c->lateness.p50_ms, c->lateness.p90_ms, c->lateness.p99_ms,
           c->lateness.p999_ms, c->lateness.max_ms);
    printf("throughput  %.1f tasks/s over %.3f s\n", r->tasks_per_s,
           r->elapsed_s);
    if (r->redis_commands >= 0)
        printf("redis cmds  %" PRId64 "  (%.2f per task)\n", r->redis_commands,
               c->enqueued ? (double)r->redis_commands / (double)c->enqueued
                           : 0.0);
    printf("counters    round_trips %" PRIu64 "  empty_polls %" PRIu64
           "  lost_races %" PRIu64 "  wakeups %" PRIu64 "  putbacks %" PRIu64
           "\n", r->counters.round_trips, r->counters.empty_polls,
           r->counters.lost_races, r->counters.wakeups, r->counters.putbacks);
    if (r->errors > 0)
        printf("errors      %" PRIu64 "  (first: %s)\n", r->errors,
               r->first_error);
    if (log_path != NULL)
        printf("log         %s\n", log_path);
    if (nv == 0)
        printf("verdict     ok%s\n", r->interrupted ? " so far (interrupted)"
                                                   : "");
    for (size_t i = 0; i < nv; i++)
        printf("verdict     VIOLATION %s\n", viol[i]);
}

int dq_cmd_run(int argc, char **argv)
{
    dq_trial_params p;
    dq_trial_result r;
    dq_redis_target target;
    dq_redis_server srv;
    const char *strategy = NULL, *url = NULL, *outdir = NULL;
    bool json = false, quiet = false, have_target = false;
    bool made_outdir = false;
    char err[512], names[256], where[600] = "", logpath[4200] = "";
    char tmpdir[300] = "";
    const char *restart_mode = NULL;
    int ret = 2, rc;

    memset(&srv, 0, sizeof srv);
    dq_trial_defaults(&p);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL, *eq;
        char name[64];
        int64_t v;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strncmp(a, "--", 2) != 0) {
            run_error("unexpected argument '%s' (options start with --; "
                      "see dqlab run --help)", a);
            return 2;
        }
        eq = strchr(a, '=');
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a),
                 a);
        if (eq)
            val = eq + 1;

        /* Flags without a value. */
        if (strcmp(name, "--fresh") == 0 || strcmp(name, "--json") == 0 ||
            strcmp(name, "--quiet") == 0) {
            if (val != NULL) {
                run_error("%s takes no value (got '%s')", name, val);
                return 2;
            }
            if (name[2] == 'f')
                p.fresh = true;
            else if (name[2] == 'j')
                json = true;
            else
                quiet = true;
            continue;
        }
        static const char *const with_value[] = {
            "--strategy", "--opt", "--producers", "--consumers", "--tasks",
            "--delay-ms", "--work-us", "--payload-bytes", "--grace-ms",
            "--enqueue-batch",
            "--seed", "--redis", "--out", "--queue", "--fault",
            "--consumer-mode", NULL};
        bool known = false;
        for (size_t k = 0; with_value[k]; k++)
            if (strcmp(name, with_value[k]) == 0)
                known = true;
        if (!known) {
            run_error("unknown option '%s' (see dqlab run --help)", name);
            return 2;
        }
        if (val == NULL) {
            if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0) {
                fprintf(stderr, "dqlab run: %s needs a value\n", name);
                return 2;
            }
            val = argv[++i];
        }
        if (val[0] == '\0') {
            fprintf(stderr, "dqlab run: %s needs a value\n", name);
            return 2;
        }

        if (strcmp(name, "--strategy") == 0) {
            strategy = val;
        } else if (strcmp(name, "--opt") == 0) {
            char e[256];
            if (p.nopts >= DQ_MAX_OPTS) {
                fprintf(stderr, "dqlab run: --opt: at most %d options\n",
                        DQ_MAX_OPTS);
                return 2;
            }
            if (dq_opt_parse(val, &p.opts[p.nopts], e, sizeof e) != DQ_OK) {
                run_error("--opt: %s", e);
                return 2;
            }
            p.nopts++;
        } else if (strcmp(name, "--producers") == 0 ||
                   strcmp(name, "--consumers") == 0) {
            if (dq_parse_i64(name, val, 1, MAX_WORKERS, &v, err, sizeof err))
                goto bad;
            if (name[2] == 'p')
                p.producers = (int)v;
            else
                p.consumers = (int)v;
        } else if (strcmp(name, "--tasks") == 0) {
            if (dq_parse_i64(name, val, 1, MAX_TASKS, &p.tasks, err,
                             sizeof err))
                goto bad;
        } else if (strcmp(name, "--delay-ms") == 0) {
            if (dq_parse_range(name, val, 0, MAX_DELAY_MS, &p.delay_min_ms,
                               &p.delay_max_ms, err, sizeof err))
                goto bad;
        } else if (strcmp(name, "--work-us") == 0) {
            if (dq_parse_i64(name, val, 0, MAX_WORK_US, &p.work_us, err,
                             sizeof err))
                goto bad;
        } else if (strcmp(name, "--payload-bytes") == 0) {
            if (dq_parse_i64(name, val, 0, MAX_PAYLOAD, &p.payload_bytes, err,
                             sizeof err))
                goto bad;
        } else if (strcmp(name, "--grace-ms") == 0) {
            if (dq_parse_i64(name, val, 0, MAX_GRACE_MS, &p.grace_ms, err,
                             sizeof err))
                goto bad;
        } else if (strcmp(name, "--enqueue-batch") == 0) {
            if (dq_parse_i64(name, val, 1, DQ_TRIAL_MAX_ENQUEUE_BATCH,
                             &p.enqueue_batch, err, sizeof err))
                goto bad;
        } else if (strcmp(name, "--seed") == 0) {
            if (dq_parse_u64(name, val, &p.seed, err, sizeof err))
                goto bad;
        } else if (strcmp(name, "--redis") == 0) {
            url = val;
            if (dq_redis_url_parse(url, &target, err, sizeof err) != 0)
                goto bad;
            have_target = true;
        } else if (strcmp(name, "--out") == 0) {
            outdir = val;
        } else if (strcmp(name, "--fault") == 0) {
            if (p.nfaults >= DQ_MAX_FAULTS) {
                fprintf(stderr, "dqlab run: --fault: at most %d faults\n",
                        DQ_MAX_FAULTS);
                return 2;
            }
            if (dq_fault_parse(val, &p.faults[p.nfaults], err, sizeof err))
                goto bad_fault;
            p.nfaults++;
        } else if (strcmp(name, "--consumer-mode") == 0) {
            if (strcmp(val, "thread") == 0)
                p.consumer_process = false;
            else if (strcmp(val, "process") == 0)
                p.consumer_process = true;
            else {
                run_error("--consumer-mode: '%.40s': expected thread or "
                          "process", val);
                return 2;
            }
        } else if (strcmp(name, "--queue") == 0) {
            if (strlen(val) >= sizeof p.queue || val[0] == '\0' ||
                strspn(val, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
                            "vwxyz0123456789_.-") != strlen(val)) {
                run_error("--queue: '%.80s': expected 1 to 64 of "
                          "[A-Za-z0-9_.-]", val);
                return 2;
            }
            snprintf(p.queue, sizeof p.queue, "%s", val);
        }
        continue;
    bad:
        run_error("%s", err);
        return 2;
    bad_fault:
        run_error("--fault: %s", err);
        return 2;
    }

    strategy_names(names, sizeof names);
    if (strategy == NULL) {
        fprintf(stderr, "dqlab run: --strategy is required (one of: %s)\n",
                names);
        return 2;
    }
    p.strategy = dq_strategy_find(strategy);
    if (p.strategy == NULL) {
        run_error("--strategy: unknown strategy '%.64s' (one of: %s)",
                  strategy, names);
        return 2;
    }
    p.progress = !quiet;

    /* Faults: what they need, checked before anything starts. */
    for (size_t i = 0; i < p.nfaults; i++) {
        const dq_fault *f = &p.faults[i];
        char spec[64];
        dq_fault_format(f, spec, sizeof spec);
        if (!dq_fault_applies(f, p.strategy, err, sizeof err)) {
            fprintf(stderr, "dqlab run: --fault: %s\n", err);
            return 2;
        }
        if (dq_fault_needs_server(f) && have_target) {
            fprintf(stderr, "dqlab run: --fault %s: needs the private "
                    "redis-server dqlab starts itself; drop --redis\n", spec);
            return 2;
        }
        if (f->kind == DQ_FAULT_RESTART_REDIS) {
            if (restart_mode != NULL) {
                fprintf(stderr, "dqlab run: --fault %s: one restart-redis "
                        "per trial\n", spec);
                return 2;
            }
            restart_mode = strcmp(f->mode, "off") == 0 ? "no" : f->mode;
        }
        if (dq_fault_needs_process(f) && !p.consumer_process) {
            p.consumer_process = true;
            if (!quiet)
                fprintf(stderr, "dqlab run: note: --fault %s runs the "
                        "consumers as processes (--consumer-mode process)\n",
                        spec);
        }
    }

    /* Strategy option values, before anything is started. */
    if (dq_opts_check(p.strategy, p.opts, p.nopts, err, sizeof err) != DQ_OK) {
        run_error("--opt: %s", err);
        return 2;
    }

    /* Where the log goes.  --out DIR is only checked here and created
     * right before the trial, so that a failure to reach Redis leaves no
     * new empty DIR behind. */
    if (outdir != NULL) {
        if (check_outdir(outdir, err, sizeof err) != 0) {
            run_error("--out: %s", err);
            return 2;
        }
        snprintf(logpath, sizeof logpath, "%s/events.log", outdir);
    } else {
        if (dq_tmpdir_create("dqlab-run", tmpdir, sizeof tmpdir, err,
                             sizeof err) != 0) {
            run_error("%s", err);
            return 2;
        }
        snprintf(logpath, sizeof logpath, "%s/events.log", tmpdir);
        dq_signals_on_force_remove(logpath, false);
    }
    p.log_path = logpath;

    /* The Redis server. */
    if (p.strategy->flags & DQ_G_NEEDS_REDIS) {
        if (have_target) {
            dq_redis_url_redacted(&target, where, sizeof where);
        } else {
            dq_redis_server_opts so = {.appendonly = restart_mode};
            if (!quiet)
                fprintf(stderr, "dqlab run: starting a private "
                        "redis-server...\n");
            if (dq_redis_server_start(&srv, &so, err, sizeof err) != 0) {
                if (dq_signals_caught()) {
                    fprintf(stderr, "dqlab run: interrupted\n");
                    ret = 130;
                } else {
                    run_error("%s", err);
                }
                goto cleanup;
            }
            memset(&target, 0, sizeof target);
            snprintf(target.host, sizeof target.host, "127.0.0.1");
            target.port = srv.port;
            snprintf(where, sizeof where, "private redis-server on "
                     "127.0.0.1:%d", srv.port);
            p.server = &srv;
        }
        p.redis = &target;
    } else if (have_target && !quiet) {
        fprintf(stderr, "dqlab run: note: strategy '%s' does not use Redis; "
                "--redis ignored\n", p.strategy->name);
    }
    if (dq_signals_caught()) {
        fprintf(stderr, "dqlab run: interrupted\n");
        ret = 130;
        goto cleanup;
    }
    if (outdir != NULL) {
        if (mkdir(outdir, 0755) == 0) {
            made_outdir = true;
        } else if (errno != EEXIST) {
            fprintf(stderr, "dqlab run: --out: %s: %s\n", outdir,
                    strerror(errno));
            goto cleanup;
        }
    }

    rc = dq_trial_run(&p, &r, err, sizeof err);
    if (rc < 0) {
        run_error("%s", err);
        ret = 2;
        goto cleanup;
    }

    {
        const char *viol[8];
        size_t nv = dq_trial_violations(&p, &r, viol, 8);
        json_t *o = dq_trial_json(&p, &r);

        if (o == NULL) {
            fprintf(stderr, "dqlab run: out of memory\n");
            ret = 2;
            goto cleanup;
        }
        json_object_set_new(o, "redis", where[0] ? json_string(where)
                                                 : json_null());
        json_object_set_new(o, "log", outdir ? json_string(logpath)
                                             : json_null());
        if (outdir != NULL && write_summary(outdir, o, err, sizeof err) != 0) {
            run_error("%s", err);
            json_decref(o);
            ret = 2;
            goto cleanup;
        }
        if (json) {
            json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
            fputc('\n', stdout);
        } else {
            print_human(&p, &r, where[0] ? where : NULL,
                        outdir ? logpath : NULL);
        }
        fflush(stdout);
        json_decref(o);
        if (rc == 1) {
            fprintf(stderr, "dqlab run: interrupted; the counts above cover "
                    "what was logged until then\n");
            ret = 130;
        } else {
            ret = nv > 0 ? 1 : 0;
        }
    }

cleanup:
    dq_redis_server_stop(&srv);
    if (tmpdir[0] != '\0') {
        unlink(logpath);
        dq_signals_forget_remove(logpath);
        dq_tmpdir_remove(tmpdir);
    }
    if (made_outdir)
        rmdir(outdir); /* only succeeds while empty: after a failure */
    return ret;
}
