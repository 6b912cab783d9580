/* cli_run.c -- `dqlab run`: one trial of one strategy, checked.
 *
 * The trial's parameters are the rows of params.c's table: their options,
 * ranges, defaults and --help lines come from it, as the experiment
 * files' keys do; this file adds the options of a run itself (--strategy,
 * --opt, --fault, --redis, --queue, --out, --fresh, --json, --quiet).
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
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "params.h"
#include "redis_server.h"
#include "redis_url.h"
#include "signals.h"
#include "tmpdir.h"
#include "trial.h"

/* What `dqlab run` holds besides the trial's parameters. */
typedef struct cli {
    dq_trial_params p;
    dq_trial_result r;
    dq_redis_target target;
    dq_redis_server srv;
    const char *strategy, *url, *outdir;
    bool json, quiet, have_target, made_outdir;
    char where[600];          /* the server, for the summary ("" none) */
    char logpath[4200];
    char tmpdir[300];         /* without --out: the log's directory */
} cli;

/* Prints the fault kinds of faults.c's table, each with its help ('\n'
 * starts a line of its own). */
static void usage_faults(FILE *f)
{
    for (size_t i = 0; dq_fault_kinds[i] != NULL; i++) {
        const dq_fault_ops *o = dq_fault_kinds[i];
        fprintf(f, "                          %s\n", o->usage);
        for (const char *h = o->help; h != NULL && *h;) {
            int n = (int)strcspn(h, "\n");
            fprintf(f, "                            %.*s\n", n, h);
            h += n + (h[n] == '\n');
        }
    }
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: dqlab run --strategy S [options]\n"
        "  Runs one trial: producers enqueue tasks with seeded delays and "
        "payloads,\n"
        "  consumers claim, work and ack; the event log is checked "
        "afterwards.\n\n"
        "  --strategy S          strategy name (dqlab list)\n"
        "  --opt KEY=VALUE       strategy option, repeatable (dqlab list "
        "-v)\n");
    dq_params_usage(f);
    fprintf(f,
        "  --queue NAME          queue name (dqlab-<strategy>-<seed>)\n"
        "  --redis URL           redis://[user:password@]host:port[/db]; "
        "default:\n"
        "                        a private redis-server on a free port\n"
        "  --fresh               delete existing keys dq:{queue}:* first\n"
        "  --out DIR             keep DIR/events.log and DIR/summary.json "
        "(DIR new\n"
        "                        or empty)\n"
        "  --fault SPEC          inject a fault, repeatable (faults.h):\n");
    usage_faults(f);
    fprintf(f,
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

/* The summary's first lines: what ran, where. */
static void print_setup(const dq_trial_params *p, const dq_trial_result *r,
                        const char *where)
{
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
    if (p->rate > 0)
        printf("rate        %" PRId64 " tasks/s offered (paced)\n", p->rate);
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
}

/* The human summary on stdout: what ran, what the log shows, the cost,
 * the verdict. */
static void print_human(const dq_trial_params *p, const dq_trial_result *r,
                        const char *where, const char *log_path)
{
    const dq_check *c = &r->check;
    const char *viol[8];
    size_t nv = dq_trial_violations(p, r, viol, 8);

    print_setup(p, r, where);
    printf("enqueued    %" PRIu64 "\n", c->enqueued);
    if (c->enqueue_refused > 0)
        printf("refused     %" PRIu64 "  (enqueues the server refused: not "
               "acknowledged, not lost)\n", c->enqueue_refused);
    printf("delivered   %" PRIu64 "  (deliveries %" PRIu64 ", acked %" PRIu64
           ")\n", c->delivered, c->deliveries, c->acked);
    /* The terms of checker.h, so that the line adds up: duplicates =
     * retried + redelivered + dup_fault + dup_nofault (retried shown when
     * work failed). */
    printf("extra deliveries %" PRIu64 " = ", c->duplicates);
    if (c->given_back > 0)
        printf("retried %" PRIu64 " + ", c->retried);
    printf("redelivered %" PRIu64 " + duplicates during a fault %" PRIu64
           " + duplicates without a fault %" PRIu64 "\n", c->redelivered,
           c->dup_fault, c->dup_nofault);
    if (c->processed_twice > 0)
        printf("processed twice %" PRIu64 "  (tasks whose work ran to its "
               "end in two deliveries or more)\n", c->processed_twice);
    if (c->redelivered_hidden > 0)
        printf("            and %" PRIu64 " redelivered whose first "
               "delivery died unlogged with its consumer\n",
               c->redelivered_hidden);
    printf("lost        %" PRIu64 "%s\n", c->lost,
           r->interrupted ? "  (interrupted: not a verdict)" : "");
    if (c->lost_retry > 0)
        printf("            %" PRIu64 " of them by a re-add its consumer died "
               "before (the retry policy's loss)\n", c->lost_retry);
    if (c->dead_lettered > 0)
        printf("dead letters %" PRIu64 "  (in the dead-letter set at the "
               "end: not lost)\n", c->dead_lettered);
    if (c->lost_queued > 0) {
        char note[200];
        dq_check_queued_note(c, note, sizeof note);
        printf("            %s\n", note);
    }
    if (c->pending_end > 0)
        printf("pending     %" PRIu64 "  (due after the end, or still leased "
               "to a killed consumer)\n", c->pending_end);
    printf("early       %" PRIu64 "   unknown %" PRIu64 "   payload "
           "mismatches %" PRIu64 "\n", c->early, c->unknown,
           r->payload_mismatches);
    if (c->lateness.n == 0)
        printf("lateness ms none: no task was delivered\n");
    else
        printf("lateness ms p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max "
               "%.3f\n", c->lateness.p50_ms, c->lateness.p90_ms,
               c->lateness.p99_ms, c->lateness.p999_ms, c->lateness.max_ms);
    printf("throughput  %.1f tasks/s (delivered over %.3f s, first enqueue "
           "to last delivery)\n", r->tasks_per_s, r->elapsed_s);
    if (c->redis_stall_ms >= 0)
        printf("redis stall %.3f ms longest between two answered PINGs, "
               "PING p99 %.3f ms (%" PRId64 " answered)\n",
               c->redis_stall_ms, c->ping_p99_ms, c->pings);
    if (r->redis_commands >= 0)
        printf("redis cmds  %" PRId64 "  (%.2f per task)\n", r->redis_commands,
               c->enqueued ? (double)r->redis_commands / (double)c->enqueued
                           : 0.0);
    printf("counters    round_trips %" PRIu64 "  empty_polls %" PRIu64
           "  lost_races %" PRIu64 "  wakeups %" PRIu64 "  putbacks %" PRIu64
           "\n", r->counters.round_trips, r->counters.empty_polls,
           r->counters.lost_races, r->counters.wakeups, r->counters.putbacks);
    /* Stale acks a lease refused are what a lease does, not errors. */
    if (c->ack_refused > 0)
        printf("acks refused (lease lost): %" PRIu64 "\n", c->ack_refused);
    if (r->errors > 0)
        printf("errors      %" PRIu64 "  (first: %s)\n", r->errors,
               r->first_error);
    if (log_path != NULL)
        printf("log         %s\n", log_path);
    if (nv == 0 && (p->strategy->flags & DQ_G_DUPLICATES) &&
        c->dup_nofault > 0 && !r->interrupted)
        printf("verdict     ok (%s declares duplicates: %" PRIu64 " %s its "
               "documented race)\n", p->strategy->name, c->dup_nofault,
               c->dup_nofault == 1 ? "is" : "are");
    else if (nv == 0)
        printf("verdict     ok%s\n", r->interrupted ? " so far (interrupted)"
                                                   : "");
    for (size_t i = 0; i < nv; i++)
        printf("verdict     VIOLATION %s\n", viol[i]);
}

/* One option that is not a trial parameter, with its value.  Returns 0,
 * or 2 (printed). */
static int cli_option(cli *c, const char *name, const char *val)
{
    dq_trial_params *p = &c->p;
    char err[512];

    if (strcmp(name, "--strategy") == 0) {
        c->strategy = val;
    } else if (strcmp(name, "--opt") == 0) {
        if (p->nopts >= DQ_MAX_OPTS) {
            fprintf(stderr, "dqlab run: --opt: at most %d options\n",
                    DQ_MAX_OPTS);
            return 2;
        }
        if (dq_opt_parse(val, &p->opts[p->nopts], err, sizeof err) != DQ_OK)
            goto bad_opt;
        for (size_t i = 0; i < p->nopts; i++)
            if (strcmp(p->opts[i].key, p->opts[p->nopts].key) == 0) {
                run_error("--opt %s given twice (give each option once)",
                          p->opts[i].key);
                return 2;
            }
        p->nopts++;
    } else if (strcmp(name, "--redis") == 0) {
        c->url = val;
        if (dq_redis_url_parse(val, &c->target, err, sizeof err) != 0) {
            /* Never quotes the URL (redis_url.h): printed as it is, so
             * the form it names is not taken for a URL with a password
             * and masked. */
            fprintf(stderr, "dqlab run: %s\n", err);
            return 2;
        }
        c->have_target = true;
    } else if (strcmp(name, "--out") == 0) {
        c->outdir = val;
    } else if (strcmp(name, "--fault") == 0) {
        if (p->nfaults >= DQ_MAX_FAULTS) {
            fprintf(stderr, "dqlab run: --fault: at most %d faults\n",
                    DQ_MAX_FAULTS);
            return 2;
        }
        if (dq_fault_parse(val, &p->faults[p->nfaults], err, sizeof err))
            goto bad_fault;
        p->nfaults++;
    } else if (strcmp(name, "--queue") == 0) {
        if (strlen(val) >= sizeof p->queue ||
            strspn(val, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
                        "vwxyz0123456789_.-") != strlen(val)) {
            run_error("--queue: '%.80s': expected 1 to 64 of "
                      "[A-Za-z0-9_.-]", val);
            return 2;
        }
        snprintf(p->queue, sizeof p->queue, "%s", val);
    }
    return 0;
bad_opt:
    run_error("--opt: %s", err);
    return 2;
bad_fault:
    run_error("--fault: %s", err);
    return 2;
}

/* The options that take no value.  Returns 1 when name is one, 0 when
 * not, or 2 (printed) when it came with a value. */
static int cli_flag(cli *c, const char *name, const char *val)
{
    bool *to = strcmp(name, "--fresh") == 0  ? &c->p.fresh
               : strcmp(name, "--json") == 0 ? &c->json
               : strcmp(name, "--quiet") == 0 ? &c->quiet
                                               : NULL;

    if (to == NULL)
        return 0;
    if (val != NULL) {
        run_error("%s takes no value (got '%s')", name, val);
        return 2;
    }
    *to = true;
    return 1;
}

/* The command line into c.  Returns 0, 1 after --help (printed), or 2.
 * An option given twice is refused (--opt with the same key too; --fault
 * is repeatable): one of the two values would be dropped unseen. */
static int cli_parse(cli *c, int argc, char **argv)
{
    static const char *const own[] = {"--strategy", "--opt", "--redis",
                                      "--out", "--queue", "--fault",
                                      "--fresh", "--json", "--quiet", NULL};
    unsigned own_seen = 0;
    dq_params_seen seen = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL, *eq = strchr(a, '=');
        const dq_param *d;
        char name[64], err[512];
        bool known = false;
        int64_t v, v2;
        int rc;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0) {
            run_error("unexpected argument '%s' (options start with --; "
                      "see dqlab run --help)", a);
            return 2;
        }
        snprintf(name, sizeof name, "%.*s",
                 eq ? (int)(eq - a) : (int)strlen(a), a);
        if (eq)
            val = eq + 1;
        d = dq_param_by_flag(name);
        for (size_t k = 0; own[k] != NULL; k++)
            if (strcmp(name, own[k]) == 0) {
                known = true;
                if ((own_seen & (1u << k)) && strcmp(name, "--opt") != 0 &&
                    strcmp(name, "--fault") != 0) {
                    run_error("%s given twice (give each option once)",
                              name);
                    return 2;
                }
                own_seen |= 1u << k;
            }
        if (d != NULL && dq_param_once(d, &seen, name, err, sizeof err)) {
            run_error("%s", err);
            return 2;
        }
        if ((rc = cli_flag(c, name, val)) != 0) {
            if (rc == 2)
                return 2;
            continue;
        }
        if (d == NULL && !known) {
            run_error("unknown option '%s' (see dqlab run --help)", name);
            return 2;
        }
        if (val == NULL && i + 1 < argc && strncmp(argv[i + 1], "--", 2))
            val = argv[++i];
        if (val == NULL || val[0] == '\0') {
            fprintf(stderr, "dqlab run: %s needs a value\n", name);
            return 2;
        }
        if (d == NULL) {
            if (cli_option(c, name, val) != 0)
                return 2;
        } else if (dq_param_parse(d, name, val, &v, &v2, err, sizeof err)) {
            run_error("%s", err);
            return 2;
        } else {
            dq_param_set(d, &c->p, v, v2);
        }
    }
    return 0;
}

/* The strategy, and what its options and faults need, checked before
 * anything starts.  Returns 0, or 2 (printed). */
static int cli_check(cli *c)
{
    dq_trial_params *p = &c->p;
    char names[256], err[512], spec[64];

    strategy_names(names, sizeof names);
    if (c->strategy == NULL) {
        fprintf(stderr, "dqlab run: --strategy is required (one of: %s)\n",
                names);
        return 2;
    }
    p->strategy = dq_strategy_find(c->strategy);
    if (p->strategy == NULL) {
        run_error("--strategy: unknown strategy '%.64s' (one of: %s)",
                  c->strategy, names);
        return 2;
    }
    p->progress = !c->quiet;
    for (size_t i = 0; i < p->nfaults; i++) {
        const dq_fault *f = &p->faults[i];
        dq_fault_format(f, spec, sizeof spec);
        if (!dq_fault_applies(f, p->strategy, err, sizeof err)) {
            fprintf(stderr, "dqlab run: --fault: %s\n", err);
            return 2;
        }
        if (dq_fault_needs(f, DQ_FAULT_NEEDS_OWN_SERVER) && c->have_target) {
            fprintf(stderr, "dqlab run: --fault %s: needs the private "
                    "redis-server dqlab starts itself; drop --redis\n", spec);
            return 2;
        }
        for (size_t j = 0; j < i; j++)
            if (dq_fault_needs(f, DQ_FAULT_ONE_PER_TRIAL) &&
                p->faults[j].ops == f->ops) {
                fprintf(stderr, "dqlab run: --fault %s: one %s per trial\n",
                        spec, f->ops->name);
                return 2;
            }
        if (dq_fault_needs(f, DQ_FAULT_NEEDS_PROCESS) &&
            !p->consumer_process) {
            p->consumer_process = true;
            if (!c->quiet)
                fprintf(stderr, "dqlab run: note: --fault %s runs the "
                        "consumers as processes (--consumer-mode process)\n",
                        spec);
        }
    }
    /* what the trial would refuse after the server started (faults that
     * each need servers of their own, say): refused before it starts */
    if (dq_faults_check(p->faults, p->nfaults, p->strategy, !c->have_target,
                        p->tasks, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab run: --fault: %s\n", err);
        return 2;
    }
    if (dq_params_check(p, true, err, sizeof err) != 0) {
        run_error("%s", err);
        return 2;
    }
    dq_params_settle(p);
    if (dq_opts_check(p->strategy, p->opts, p->nopts, err, sizeof err)) {
        run_error("--opt: %s", err);
        return 2;
    }
    return 0;
}

/* Where the log goes.  --out DIR is only checked here and created right
 * before the trial, so that a failure to reach Redis leaves no new empty
 * DIR behind.  Returns 0, or 2. */
static int cli_log(cli *c)
{
    char err[512];

    if (c->outdir != NULL) {
        if (check_outdir(c->outdir, err, sizeof err) != 0) {
            run_error("--out: %s", err);
            return 2;
        }
        snprintf(c->logpath, sizeof c->logpath, "%s/events.log", c->outdir);
    } else {
        if (dq_tmpdir_create("dqlab-run", c->tmpdir, sizeof c->tmpdir, err,
                             sizeof err) != 0) {
            run_error("%s", err);
            return 2;
        }
        snprintf(c->logpath, sizeof c->logpath, "%s/events.log", c->tmpdir);
        dq_signals_on_force_remove(c->logpath, false);
    }
    c->p.log_path = c->logpath;
    return 0;
}

/* The Redis server: the one --redis names, or a private one started with
 * what the faults need.  Returns 0, 2, or 130 (interrupted). */
static int cli_server(cli *c)
{
    dq_trial_params *p = &c->p;
    char err[512];

    if (!(p->strategy->flags & DQ_G_NEEDS_REDIS)) {
        if (c->have_target && !c->quiet)
            fprintf(stderr, "dqlab run: note: strategy '%s' does not use "
                    "Redis; --redis ignored\n", p->strategy->name);
        return 0;
    }
    if (c->have_target) {
        dq_redis_url_redacted(&c->target, c->where, sizeof c->where);
    } else {
        dq_redis_server_opts so = {0};
        dq_faults_server_opts(p->faults, p->nfaults, &so);
        if (!c->quiet)
            fprintf(stderr, "dqlab run: starting a private "
                    "redis-server...\n");
        if (dq_redis_server_start(&c->srv, &so, err, sizeof err) != 0) {
            if (dq_signals_caught()) {
                fprintf(stderr, "dqlab run: interrupted\n");
                return 130;
            }
            run_error("%s", err);
            return 2;
        }
        memset(&c->target, 0, sizeof c->target);
        snprintf(c->target.host, sizeof c->target.host, "127.0.0.1");
        c->target.port = c->srv.port;
        snprintf(c->where, sizeof c->where, "private redis-server on "
                 "127.0.0.1:%d", c->srv.port);
        p->server = &c->srv;
    }
    p->redis = &c->target;
    return 0;
}

/* The summary: summary.json with --out, and JSON or text on stdout.
 * Returns the exit code. */
static int cli_report(cli *c, int rc)
{
    const char *viol[8];
    size_t nv = dq_trial_violations(&c->p, &c->r, viol, 8);
    json_t *o = dq_trial_json(&c->p, &c->r);
    char err[512];
    int ret;

    if (o == NULL) {
        fprintf(stderr, "dqlab run: out of memory\n");
        return 2;
    }
    json_object_set_new(o, "redis", c->where[0] ? json_string(c->where)
                                                : json_null());
    json_object_set_new(o, "log", c->outdir ? json_string(c->logpath)
                                            : json_null());
    if (c->outdir != NULL &&
        write_summary(c->outdir, o, err, sizeof err) != 0) {
        run_error("%s", err);
        json_decref(o);
        return 2;
    }
    if (c->json) {
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        fputc('\n', stdout);
    } else {
        print_human(&c->p, &c->r, c->where[0] ? c->where : NULL,
                    c->outdir ? c->logpath : NULL);
    }
    fflush(stdout);
    json_decref(o);
    ret = nv > 0 ? 1 : 0;
    if (rc == 1) {
        fprintf(stderr, "dqlab run: interrupted; the counts above cover "
                "what was logged until then\n");
        ret = 130;
    }
    return ret;
}

int dq_cmd_run(int argc, char **argv)
{
    cli *c = calloc(1, sizeof *c);
    char err[512];
    int ret, rc;

    if (c == NULL) {
        fprintf(stderr, "dqlab run: out of memory\n");
        return 2;
    }
    dq_trial_defaults(&c->p);
    ret = cli_parse(c, argc, argv);
    if (ret == 1) { /* --help */
        ret = 0;
        goto done;
    }
    if (ret == 0)
        ret = cli_check(c);
    if (ret == 0)
        ret = cli_log(c);
    if (ret != 0)
        goto done;
    if ((ret = cli_server(c)) != 0)
        goto cleanup;
    ret = 2;
    if (dq_signals_caught()) {
        fprintf(stderr, "dqlab run: interrupted\n");
        ret = 130;
        goto cleanup;
    }
    if (c->outdir != NULL) {
        if (mkdir(c->outdir, 0755) == 0) {
            c->made_outdir = true;
        } else if (errno != EEXIST) {
            fprintf(stderr, "dqlab run: --out: %s: %s\n", c->outdir,
                    strerror(errno));
            goto cleanup;
        }
    }
    rc = dq_trial_run(&c->p, &c->r, err, sizeof err);
    if (c->r.servers[0] != '\0') /* the private server stayed idle */
        snprintf(c->where, sizeof c->where, "%s", c->r.servers);
    if (c->r.warning[0] != '\0')
        fprintf(stderr, "dqlab run: warning: %s\n", c->r.warning);
    if (rc < 0)
        run_error("%s", err);
    else
        ret = cli_report(c, rc);
cleanup:
    dq_redis_server_stop(&c->srv);
    if (c->tmpdir[0] != '\0') {
        unlink(c->logpath);
        dq_signals_forget_remove(c->logpath);
        dq_tmpdir_remove(c->tmpdir);
    }
    if (c->made_outdir)
        rmdir(c->outdir); /* only succeeds while empty: after a failure */
done:
    free(c);
    return ret;
}
