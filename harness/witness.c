/* witness.c -- the `dqlab witness` command (witness.h): options, the run
 * directory, one private redis-server per witness, the attempts with fresh
 * seeds until the event is seen, and the files it leaves.  The trials
 * themselves are in witness_naive.c, witness_lease.c, witness_expiry.c
 * and witness_late.c, the capture in witness_cap.c, the chart in
 * witness_msc.c.
 *
 * Bounds: each witness stops after its max_attempts or its time budget,
 * whichever comes first; naive's race needs a few attempts, the others
 * happen by construction (a second attempt only after a machine stall).
 * All four take a few seconds on an idle machine; the budgets add up to
 * 20 s, the most the command may take before it gives up.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis_server.h"
#include "runmeta.h"
#include "signals.h"
#include "witness.h"
#include "witness_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* A witness; the strategy whose failure it shows is the one that names it
 * in its dq_strategy.witness (dq.h), so that no list of strategy names is
 * kept here. */
typedef struct wt_def {
    const char *name;
    wt_attempt_fn fn;
    int max_attempts;
    int64_t budget_ms;     /* no new attempt after this much wall time */
} wt_def;

static const wt_def witnesses[] = {
    {"naive-duplicate", dq_wt_naive_duplicate, 50, 8000},
    {"lease-redelivery", dq_wt_lease_redelivery, 5, 4000},
    {"expiry-loss", dq_wt_expiry_loss, 5, 4000},
    {"lua-late-head", dq_wt_lua_late_head, 5, 4000},
};
#define NWITNESS (sizeof witnesses / sizeof witnesses[0])

/* The name of the strategy that declares witness d, or NULL. */
static const char *wt_strategy(const wt_def *d)
{
    for (size_t i = 0; dq_strategies[i] != NULL; i++)
        if (dq_strategies[i]->witness != NULL &&
            strcmp(dq_strategies[i]->witness, d->name) == 0)
            return dq_strategies[i]->name;
    return NULL;
}

/* ---- One witness --------------------------------------------------------- */

typedef struct wt_outcome {
    int rc;                /* 1 witnessed, 0 not, 130, -1 */
    int attempts;
    int64_t elapsed_ms;    /* server start to stop */
    wt_run run;            /* the winning (or last) attempt */
} wt_outcome;

/* Writes the winning attempt's files: chart, images, capture; renames its
 * log.  Returns 0, or -1 with err. */
static int store_files(wt_run *w, char *err, size_t errlen)
{
    char msc[PATH_MAX + 64], svg[PATH_MAX + 64], png[PATH_MAX + 64];
    char mon[PATH_MAX + 64], log[PATH_MAX + 64];

    snprintf(msc, sizeof msc, "%s/%s.msc", w->dir, w->name);
    snprintf(svg, sizeof svg, "%s/%s.svg", w->dir, w->name);
    snprintf(png, sizeof png, "%s/%s.png", w->dir, w->name);
    snprintf(mon, sizeof mon, "%s/%s.monitor.txt", w->dir, w->name);
    snprintf(log, sizeof log, "%s/%s.log", w->dir, w->name);
    if (rename(w->logpath, log) != 0) {
        snprintf(err, errlen, "rename %s: %s", w->logpath, strerror(errno));
        return -1;
    }
    snprintf(w->logpath, sizeof w->logpath, "%s", log);
    if (dq_wt_chart_write(&w->chart, msc, err, errlen) != 0 ||
        dq_wt_render(msc, svg, png, err, errlen) != 0 ||
        dq_wt_cap_write(&w->cap, mon, w->chart.title, err, errlen) != 0)
        return -1;
    return 0;
}

/* Frees what an attempt holds and removes its log unless kept. */
static void attempt_clear(wt_run *w, bool keep_log)
{
    if (w->log) {
        dq_eventlog_close(w->log);
        w->log = NULL;
    }
    if (!keep_log && w->logpath[0])
        unlink(w->logpath);
    dq_wt_cap_free(&w->cap);
    dq_wt_chart_free(&w->chart);
}

static void run_witness(const wt_def *d, const dq_redis_server *srv,
                        const char *dir, uint64_t seed0, wt_outcome *o,
                        char *err, size_t errlen)
{
    int64_t t0 = dq_mono_us();
    wt_run *w = &o->run;

    o->rc = 0;
    for (o->attempts = 1; o->attempts <= d->max_attempts; o->attempts++) {
        memset(w, 0, sizeof *w);
        w->name = d->name;
        w->strategy = wt_strategy(d);
        w->port = srv->port;
        snprintf(w->redis_version, sizeof w->redis_version, "%s",
                 srv->version);
        snprintf(w->dir, sizeof w->dir, "%s", dir);
        w->attempt = o->attempts;
        w->seed = seed0 + (uint64_t)(o->attempts - 1);
        snprintf(w->queue, sizeof w->queue, "w-%s-%ld-%d", d->name,
                 (long)getpid(), o->attempts);
        snprintf(w->logpath, sizeof w->logpath, "%s/%s.attempt-%d.log", dir,
                 d->name, o->attempts);
        o->rc = dq_signals_caught() ? 130 : d->fn(w, err, errlen);
        if (o->rc < 0 && dq_signals_caught())
            o->rc = 130;   /* an error caused by the interruption */
        if (o->rc == 1 && store_files(w, err, errlen) != 0)
            o->rc = -1;
        attempt_clear(w, o->rc == 1);
        if (o->rc != 0 || dq_mono_us() - t0 > d->budget_ms * 1000)
            break;
    }
    if (o->attempts > d->max_attempts)
        o->attempts = d->max_attempts;
}

/* ---- The command --------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: dqlab witness [--results DIR] [--only LIST] "
               "[--seed N]\n\n"
               "Short scripted trials that make a failure happen, each on a "
               "private redis-server\nwith a MONITOR capture, drawn as "
               "message sequence charts (mscgen) into\nDIR/witness/<stamp>/ "
               "(default DIR: results; latest when all were seen).\n\n"
               "  --only LIST  comma-separated witnesses (default: all):\n");
    for (size_t i = 0; i < NWITNESS; i++)
        fprintf(f, "               %s (%s)\n", witnesses[i].name,
                wt_strategy(&witnesses[i]) ? wt_strategy(&witnesses[i])
                                           : "no strategy declares it");
    fprintf(f, "  --seed N     seed of the first attempt (default: from the "
               "clock)\n\nFile formats: harness/witness.h.  Exit: 0 all "
               "witnessed, 2 bad input or a\nwitness not seen, 130 "
               "interrupted.\n");
}

/* Parses --only's list into sel[].  Returns 0, or -1 with err. */
static int parse_only(const char *list, bool *sel, char *err, size_t errlen)
{
    char buf[512], *save = NULL;

    snprintf(buf, sizeof buf, "%s", list);
    memset(sel, 0, NWITNESS * sizeof *sel);
    for (char *t = strtok_r(buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < NWITNESS && strcmp(t, witnesses[i].name) != 0; i++)
            ;
        if (i == NWITNESS) {
            char names[256];
            size_t off = 0;
            for (size_t k = 0; k < NWITNESS && off < sizeof names; k++)
                off += (size_t)snprintf(names + off, sizeof names - off,
                                        "%s%s", k ? ", " : "",
                                        witnesses[k].name);
            snprintf(err, errlen, "--only: unknown witness '%s' (witnesses: "
                     "%s)", t, names);
            return -1;
        }
        sel[i] = true;
    }
    for (size_t i = 0; i < NWITNESS; i++)
        if (sel[i])
            return 0;
    snprintf(err, errlen, "--only: empty list");
    return -1;
}

typedef struct wt_args {
    const char *results;
    bool sel[NWITNESS];
    uint64_t seed;
    char command[768];
} wt_args;

static int parse_args(int argc, char **argv, wt_args *a, char *err,
                      size_t errlen)
{
    size_t cl = (size_t)snprintf(a->command, sizeof a->command,
                                 "dqlab witness");
    a->results = "results";
    a->seed = (uint64_t)dq_wall_us();
    for (size_t i = 0; i < NWITNESS; i++)
        a->sel[i] = true;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;
        if (strcmp(o, "--results") && strcmp(o, "--only") &&
            strcmp(o, "--seed")) {
            snprintf(err, errlen, "unknown %s '%s' (see dqlab witness --help)",
                     o[0] == '-' ? "option" : "argument", o);
            return -1;
        }
        if (v == NULL || v[0] == '\0') {
            snprintf(err, errlen, "%s needs a value", o);
            return -1;
        }
        i++;
        if (strcmp(o, "--results") == 0)
            a->results = v;
        else if (strcmp(o, "--only") == 0) {
            if (parse_only(v, a->sel, err, errlen) != 0)
                return -1;
        } else {
            errno = 0;
            a->seed = strtoull(v, &end, 10);
            if (errno || *end || v[0] == '-') {
                snprintf(err, errlen, "--seed: '%s' is not a number", v);
                return -1;
            }
        }
        if (cl < sizeof a->command)
            cl += (size_t)snprintf(a->command + cl, sizeof a->command - cl,
                                   " %s %s", o, v);
    }
    return 0;
}

/* Appends the rows of one witness to csv and its sentence to meta. */
static void write_rows(FILE *csv, FILE *meta, const wt_def *d,
                       const wt_outcome *o)
{
    const wt_run *w = &o->run;
    char key[80];
#define ROW(k, v)                                                             \
    fprintf(csv, "%s,%s,%s,%d,%s,%" PRId64 "\n", d->name, w->strategy,        \
            o->rc == 1 ? w->task_id : "", o->attempts, (k), (int64_t)(v))
    ROW("witnessed", o->rc == 1);
    ROW("elapsed_ms", o->elapsed_ms);
    ROW("seed", (int64_t)w->seed);
    if (o->rc == 1)
        for (size_t i = 0; i < w->nm; i++)
            ROW(w->m[i].key, w->m[i].value);
#undef ROW
    snprintf(key, sizeof key, "seen.%s", d->name);
    dq_runmeta_kv(meta, key, o->rc == 1 ? w->seen : "not witnessed");
}

/* Runs the selected witnesses, one private server each, writing rows. */
static int run_all(const wt_args *a, const char *dir, FILE *csv, FILE *meta,
                   char *version, size_t vlen, char *err, size_t errlen)
{
    int ret = 0;

    for (size_t i = 0; i < NWITNESS; i++) {
        dq_redis_server srv;
        dq_redis_server_opts so = {0};
        wt_outcome o;
        if (!a->sel[i])
            continue;
        if (wt_strategy(&witnesses[i]) == NULL) {
            snprintf(err, errlen, "%s: no strategy declares this witness "
                     "(dq_strategy.witness)", witnesses[i].name);
            return 2;
        }
        int64_t t0 = dq_mono_us();
        memset(&o, 0, sizeof o);
        if (dq_redis_server_start(&srv, &so, err, errlen) != 0)
            return dq_signals_caught() ? 130 : 2;
        snprintf(version, vlen, "%s", srv.version);
        run_witness(&witnesses[i], &srv, dir, a->seed, &o, err, errlen);
        dq_redis_server_stop(&srv);
        o.elapsed_ms = (dq_mono_us() - t0) / 1000;
        write_rows(csv, meta, &witnesses[i], &o);
        if (o.rc == 1)
            fprintf(stderr, "dqlab witness: %s: task %s after %d attempt%s "
                    "(%.1f s): %s\n", witnesses[i].name, o.run.task_id,
                    o.attempts, o.attempts == 1 ? "" : "s",
                    (double)o.elapsed_ms / 1000.0, o.run.seen);
        else if (o.rc == 0) {
            /* Go on with the others; the first one not seen is named. */
            if (ret == 0)
                snprintf(err, errlen, "%s: not witnessed in %d attempts "
                         "(%.1f s)", witnesses[i].name, o.attempts,
                         (double)o.elapsed_ms / 1000.0);
            ret = 2;
        } else
            return o.rc == 130 ? 130 : 2;
    }
    return ret;
}

static int finish_files(const char *dir, const char *csvbuf, size_t csvlen,
                        const char *metabuf, size_t metalen, char *err,
                        size_t errlen)
{
    char path[PATH_MAX + 32];

    snprintf(path, sizeof path, "%s/witness.csv", dir);
    if (dq_runmeta_write_atomic(path, csvbuf, csvlen, err, errlen) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    return dq_runmeta_write_atomic(path, metabuf, metalen, err, errlen);
}

/* Runs the selected witnesses into dir and writes witness.csv and
 * meta.txt there.  Returns the exit code; err says why when it is not 0. */
static int run_into(const wt_args *a, const char *dir, char *err,
                    size_t errlen)
{
    char started[40], version[32] = "", v[32], ferr[512];
    char *cbuf = NULL, *mbuf = NULL;
    size_t clen = 0, mlen = 0;
    FILE *csv = open_memstream(&cbuf, &clen), *meta;
    int64_t t0 = dq_mono_us();
    int ret;

    if (csv == NULL || (meta = open_memstream(&mbuf, &mlen)) == NULL) {
        snprintf(err, errlen, "open_memstream: %s", strerror(errno));
        if (csv)
            fclose(csv);
        free(cbuf);
        return 2;
    }
    dq_runmeta_now_iso(started, sizeof started);
    fprintf(csv, "witness,strategy,task_id,attempts,quantity,value\n");
    fprintf(meta, "# dqlab witness: message sequence charts of real trials "
            "(harness/witness.h)\n");
    dq_runmeta_kv(meta, "command", a->command);
    dq_runmeta_kv(meta, "started", started);
    snprintf(v, sizeof v, "%" PRIu64, a->seed);
    dq_runmeta_kv(meta, "seed", v);
    ret = run_all(a, dir, csv, meta, version, sizeof version, err, errlen);
    dq_runmeta_kv(meta, "redis_version", version);
    snprintf(v, sizeof v, "%" PRId64, (dq_mono_us() - t0) / 1000);
    dq_runmeta_kv(meta, "duration_ms", v);
    dq_runmeta_env(meta);
    fclose(csv);
    fclose(meta);
    if (finish_files(dir, cbuf, clen, mbuf, mlen, ferr, sizeof ferr) != 0 &&
        ret == 0) {
        snprintf(err, errlen, "%s", ferr);
        ret = 2;
    }
    free(cbuf);
    free(mbuf);
    return ret;
}

int dq_witness_cmd(int argc, char **argv)
{
    wt_args a;
    char err[1024] = "", parent[PATH_MAX], dir[PATH_MAX], stamp[64];
    char path[PATH_MAX + 8];
    int ret;

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
    if (parse_args(argc, argv, &a, err, sizeof err) == 0 &&
        dq_wt_mscgen_check(err, sizeof err) == 0) {
        snprintf(parent, sizeof parent, "%s/witness", a.results);
        ret = dq_runmeta_make_dir(parent, stamp, sizeof stamp, dir,
                                  sizeof dir, err, sizeof err);
    } else
        ret = -1;
    if (ret != 0) {
        fprintf(stderr, "dqlab witness: %s\n", err);
        return 2;
    }
    snprintf(path, sizeof path, "%s/logs", dir);
    rmdir(path);   /* the logs sit beside the charts */
    ret = run_into(&a, dir, err, sizeof err);
    if (ret == 0 && dq_runmeta_update_latest(parent, stamp, err,
                                             sizeof err) != 0)
        ret = 2;
    if (ret == 130)
        fprintf(stderr, "dqlab witness: interrupted; %s is incomplete\n", dir);
    else if (ret != 0)
        fprintf(stderr, "dqlab witness: %s (results in %s, latest not "
                "moved)\n", err, dir);
    else
        fprintf(stderr, "dqlab witness: %s\n", dir);
    return ret;
}
