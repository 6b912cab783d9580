/* cli_check.c -- `dqlab check LOG [--json]`: the checker on a log file.
 *
 * The same code `dqlab run` uses after a trial (checker.c), so a log kept
 * with --out can be re-checked, and a hand-edited log tried.  Prints the
 * counts and a verdict line, and exits like `dqlab run`:
 *   0  the log parses and the strategy named in its header (H strategy S)
 *      breaks none of the guarantees it declares -- or the log names no
 *      strategy dqlab knows, so no verdict was computed (said on stdout);
 *   1  it breaks one (one "verdict: VIOLATION: ..." line each);
 *   2  the log cannot be read or a record is malformed ("file:line: what").
 *
 * The verdict uses dq_check_violations() (checker.h), the rules `dqlab
 * run` applies, on what the log alone can show: early deliveries outside
 * clock-skew windows, unknown deliveries, duplicates no fault explains for
 * a strategy declaring no-dup-concurrent, redeliveries after a fault for
 * an at-most-once one, and lost tasks -- those no fault explains, those
 * lost under kill-consumer for a strategy declaring
 * survives-consumer-crash, those lost under a fault that loses no data
 * (pause-redis, clock-skew).  Redeliveries are at-least-once behaviour,
 * not a violation; tasks due after the end of the trial are pending, not
 * lost.  Payload changes are not in the log (only `dqlab run` sees them).  A log
 * with fewer E records than its "H tasks N" header was cut short (Ctrl-C,
 * or an error), and so is one with an "H interrupted 1" record (H records
 * may come anywhere, so a trial can append it when it is interrupted while
 * draining): its lost tasks are not a verdict, as for an interrupted run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "checker.h"
#include "commands.h"
#include "parse.h"
#include "../strategies/dq.h"

#define MAX_VIOL 8

static void usage(FILE *f)
{
    fprintf(f, "usage: dqlab check LOG [--json]\n"
               "  Reads an event log written by dqlab run and prints "
               "enqueued, delivered,\n  duplicates (redelivered after a "
               "fault / duplicated after a fault /\n  duplicated without "
               "one), lost, pending at the end, early, unknown, fault\n  "
               "windows, lateness percentiles and a verdict: whether the "
               "strategy named\n  in the log (H strategy S) broke a "
               "guarantee it declares (early or unknown\n  deliveries, "
               "duplicates without a fault for no-dup-concurrent, losses "
               "no\n  fault excuses; payload changes are not in the "
               "log).\n\n"
               "Exit: 0 ok (or no strategy in the log: no verdict), 1 a "
               "guarantee broken,\n2 the log is unreadable or malformed.\n");
}

/* What the log's H records say that the verdict needs. */
typedef struct log_header {
    char strategy[64];  /* "" when absent */
    int64_t tasks;      /* -1 when absent or not a number */
    bool interrupted;   /* an "H interrupted 1" record */
} log_header;

/* Reads the H records of the log at path (the checker has validated the
 * file already).  Returns 0, or -1 with a message in err. */
static int read_header(const char *path, log_header *h, char *err,
                       size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;

    h->strategy[0] = '\0';
    h->tasks = -1;
    h->interrupted = false;
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while ((n = getline(&line, &cap, f)) > 0) {
        char *key, *val, *tab;

        if (line[0] != 'H' || line[1] != '\t')
            continue;
        line[strcspn(line, "\r\n")] = '\0';
        key = line + 2;
        tab = strchr(key, '\t');
        if (tab == NULL)
            continue;
        *tab = '\0';
        val = tab + 1;
        if (strcmp(key, "strategy") == 0 && h->strategy[0] == '\0') {
            snprintf(h->strategy, sizeof h->strategy, "%s", val);
        } else if (strcmp(key, "tasks") == 0 && h->tasks < 0) {
            int64_t v;
            char e[128];
            if (dq_parse_i64("tasks", val, 0, INT64_MAX, &v, e, sizeof e) == 0)
                h->tasks = v;
        } else if (strcmp(key, "interrupted") == 0 && strcmp(val, "1") == 0) {
            h->interrupted = true;
        }
    }
    free(line);
    fclose(f);
    return 0;
}

/* The verdict on checked counts c and header h: fills viol (up to
 * MAX_VIOL static strings) and returns how many; *computed is false when
 * the log names no known strategy (then nothing is judged), *cut_short
 * true when it holds fewer enqueues than its tasks header. */
static size_t verdict(const dq_check *c, const log_header *h, bool *computed,
                      bool *cut_short, const char **viol)
{
    const dq_strategy *s;

    *computed = false;
    *cut_short = h->interrupted ||
                 (h->tasks > 0 && c->enqueued < (uint64_t)h->tasks);
    s = h->strategy[0] ? dq_strategy_find(h->strategy) : NULL;
    if (s == NULL)
        return 0;
    *computed = true;
    return dq_check_violations(c, s->flags, *cut_short, viol, MAX_VIOL);
}

int dq_cmd_check(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    dq_check c;
    log_header h;
    const char *viol[MAX_VIOL];
    size_t nv;
    bool computed, cut_short;
    char err[512], why[160];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "dqlab check: unknown option '%s' (see dqlab "
                    "check --help)\n", argv[i]);
            return 2;
        } else if (path != NULL) {
            fprintf(stderr, "dqlab check: one LOG only, got '%s' and '%s'\n",
                    path, argv[i]);
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (path == NULL) {
        fprintf(stderr, "dqlab check: missing LOG (see dqlab check --help)\n");
        return 2;
    }
    if (dq_check_file(path, &c, err, sizeof err) != 0 ||
        read_header(path, &h, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab check: %s\n", err);
        return 2;
    }
    nv = verdict(&c, &h, &computed, &cut_short, viol);
    nv = nv > MAX_VIOL ? MAX_VIOL : nv;
    if (!computed) {
        if (h.strategy[0] == '\0')
            snprintf(why, sizeof why, "the log names no strategy (no "
                     "'H strategy' record)");
        else
            snprintf(why, sizeof why, "strategy '%.64s' in the log is not "
                     "a dqlab strategy (dqlab list)", h.strategy);
    }

    if (json) {
        json_t *o = dq_check_json(&c), *va = json_array();
        if (o == NULL || va == NULL) {
            json_decref(o);
            json_decref(va);
            fprintf(stderr, "dqlab check: out of memory\n");
            return 2;
        }
        for (size_t i = 0; i < nv; i++)
            json_array_append_new(va, json_string(viol[i]));
        json_object_set_new(o, "log", json_string(path));
        json_object_set_new(o, "first_us", json_integer(c.first_us));
        json_object_set_new(o, "last_us", json_integer(c.last_us));
        json_object_set_new(o, "strategy", h.strategy[0]
                                               ? json_string(h.strategy)
                                               : json_null());
        json_object_set_new(o, "cut_short", json_boolean(cut_short));
        json_object_set_new(o, "verdict",
                            !computed ? json_null()
                                      : json_string(nv ? "violation" : "ok"));
        json_object_set_new(o, "verdict_note",
                            computed ? json_null() : json_string(why));
        json_object_set_new(o, "violations", va);
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        fputc('\n', stdout);
        json_decref(o);
        return nv > 0 ? 1 : 0;
    }
    printf("log         %s\n", path);
    if (h.strategy[0])
        printf("strategy    %s\n", h.strategy);
    printf("enqueued    %" PRIu64 "%s\n", c.enqueued,
           h.interrupted ? "  (the log says the trial was interrupted)"
           : cut_short   ? "  (fewer than the tasks header: cut short)"
                         : "");
    printf("delivered   %" PRIu64 "  (deliveries %" PRIu64 ", duplicates %"
           PRIu64 ", acked %" PRIu64 ", never acked %" PRIu64 ")\n",
           c.delivered, c.deliveries, c.duplicates, c.acked, c.unacked);
    printf("duplicates  %" PRIu64 " redelivered after a fault, %" PRIu64
           " duplicated after a fault, %" PRIu64 " without a fault\n",
           c.redelivered, c.dup_fault, c.dup_nofault);
    printf("lost        %" PRIu64 "  (%" PRIu64 " claimed by a killed "
           "consumer, %" PRIu64 " no fault explains)%s\n", c.lost,
           c.lost_claimed, c.lost_nofault,
           cut_short && c.lost ? "  (cut short: not a verdict)" : "");
    printf("pending end %" PRIu64 "  (due after the end, or leased to a "
           "killed consumer)\n", c.pending_end);
    printf("early       %" PRIu64 "  (%" PRIu64 " in a clock-skew window)\n",
           c.early, c.early_fault);
    printf("unknown     %" PRIu64 "\n", c.unknown);
    if (c.fault_spec[0])
        printf("fault spec  %s\n", c.fault_spec);
    for (size_t i = 0; i < c.nfaults; i++)
        printf("fault       %s: %" PRIu64 " window%s, %.1f ms; lost %" PRIu64
               ", redelivered %" PRIu64 ", duplicated %" PRIu64 ", early %"
               PRIu64 "\n", c.faults[i].name, c.faults[i].windows,
               c.faults[i].windows == 1 ? "" : "s",
               (double)c.faults[i].window_us / 1000.0, c.faults[i].lost,
               c.faults[i].redelivered, c.faults[i].dup_fault,
               c.faults[i].early);
    printf("lateness ms p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  "
           "(n %" PRIu64 ")\n", c.lateness.p50_ms, c.lateness.p90_ms,
           c.lateness.p99_ms, c.lateness.p999_ms, c.lateness.max_ms,
           c.lateness.n);
    if (!computed)
        printf("verdict: not computed: %s\n", why);
    else if (nv == 0)
        printf("verdict: ok\n");
    for (size_t i = 0; i < nv; i++)
        printf("verdict: VIOLATION: %s\n", viol[i]);
    return nv > 0 ? 1 : 0;
}
