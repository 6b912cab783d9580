/* cli_check.c -- `dqlab check LOG [--json]`: the checker on a log file.
 *
 * The same code `dqlab run` uses after a trial (checker.c), so a log kept
 * with --out can be re-checked, and a hand-edited log tried.  Prints the
 * counts and a verdict line, and exits:
 *   0  the log is complete and the strategy named in its header (H
 *      strategy S) breaks none of the guarantees it declares;
 *   1  it breaks one (one "verdict: VIOLATION: ..." line each);
 *   2  the log cannot be read or a record is malformed ("file:line: what");
 *   3  no verdict ("verdict: no verdict: why"): the log cannot carry one --
 *      it does not end with "Z clean" (its writer was killed or
 *      interrupted, the trial failed, the file was cut, or it is a v1
 *      log, which never recorded its end: dq_check_no_verdict,
 *      checker.h), or it names no strategy dqlab knows.  The counts are
 *      printed all the same.
 *
 * The verdict uses dq_check_violations() (checker.h), the rules `dqlab
 * run` applies, on what the log alone can show: early deliveries no
 * fault window explains, unknown deliveries, duplicates no fault explains
 * for a strategy declaring no-dup-concurrent, redeliveries after a fault
 * for an at-most-once one, and lost tasks -- those no fault explains, and
 * those lost under a fault whose row says the declared guarantees rule
 * that loss out (faults.h loss_allowed).  Redeliveries are at-least-once
 * behaviour, not a violation; tasks due after the end of the trial are
 * pending, not lost.  Payload changes are not in the log (only `dqlab run` sees them).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../strategies/dq.h"
#include "checker.h"
#include "commands.h"
#include "faults.h"

#define MAX_VIOL 8
#define EXIT_NO_VERDICT 3

static void usage(FILE *f)
{
    fprintf(f, "usage: dqlab check LOG [--json]\n"
               "  Reads an event log written by dqlab run and prints "
               "enqueued, delivered,\n  duplicates (redelivered / "
               "duplicated after a fault / duplicated without\n  one), "
               "refused acks, lost, pending at the end, early, unknown, "
               "fault windows,\n  lateness percentiles and a verdict: "
               "whether the strategy named in the log\n  (H strategy S) "
               "broke a guarantee it declares (early or unknown "
               "deliveries,\n  duplicates without a fault for "
               "no-dup-concurrent, losses no fault excuses;\n  payload "
               "changes are not in the log).  Only a complete log (its "
               "last line\n  'Z clean') gets a verdict.\n\n"
               "Exit: 0 ok, 1 a guarantee broken, 2 the log is unreadable "
               "or malformed,\n3 no verdict (the log is incomplete or "
               "interrupted, the trial failed,\nor the log names no known "
               "strategy).\n");
}

/* Reads the strategy of the log at path (its first "H strategy" record;
 * the checker has validated the file already) into name ("" when there
 * is none).  Returns 0, or -1 with a message in err. */
static int read_strategy(const char *path, char *name, size_t len, char *err,
                         size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;

    name[0] = '\0';
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (getline(&line, &cap, f) > 0) {
        if (strncmp(line, "H\tstrategy\t", 11) != 0)
            continue;
        line[strcspn(line, "\r\n")] = '\0';
        snprintf(name, len, "%s", line + 11);
        break;
    }
    free(line);
    fclose(f);
    return 0;
}

/* The verdict on checked counts c of a log naming strategy: fills viol (up
 * to MAX_VIOL static strings) and returns how many.  *why is NULL when a
 * verdict was computed, else the reason there is none (into whybuf). */
static size_t verdict(const dq_check *c, const char *strategy,
                      const char **why, char *whybuf, size_t whylen,
                      const char **viol)
{
    const dq_strategy *s;

    *why = dq_check_no_verdict(c);
    if (*why != NULL)
        return 0;
    s = strategy[0] ? dq_strategy_find(strategy) : NULL;
    if (s == NULL) {
        if (strategy[0] == '\0')
            snprintf(whybuf, whylen, "the log names no strategy (no "
                     "'H strategy' record)");
        else
            snprintf(whybuf, whylen, "strategy '%.64s' in the log is not "
                     "a dqlab strategy (dqlab list)", strategy);
        *why = whybuf;
        return 0;
    }
    return dq_check_violations(c, s->flags, false, viol, MAX_VIOL);
}

/* The arguments: LOG and --json.  Returns 0, or the exit code (0 after
 * --help, 2 on an error, printed). */
static int parse_args(int argc, char **argv, const char **path, bool *json,
                      bool *help)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            *json = true;
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            *help = true;
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "dqlab check: unknown option '%s' (see dqlab "
                    "check --help)\n", argv[i]);
            return 2;
        } else if (*path != NULL) {
            fprintf(stderr, "dqlab check: one LOG only, got '%s' and '%s'\n",
                    *path, argv[i]);
            return 2;
        } else {
            *path = argv[i];
        }
    }
    if (*path == NULL) {
        fprintf(stderr, "dqlab check: missing LOG (see dqlab check "
                "--help)\n");
        return 2;
    }
    return 0;
}

/* The counts and the verdict as one JSON object on stdout.  Returns 0, or
 * 2 (out of memory, printed). */
static int print_json(const char *path, const dq_check *c,
                      const char *strategy, const char *why,
                      const char **viol, size_t nv)
{
    json_t *o = dq_check_json(c), *va = json_array();

    if (o == NULL || va == NULL) {
        json_decref(o);
        json_decref(va);
        fprintf(stderr, "dqlab check: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < nv; i++)
        json_array_append_new(va, json_string(viol[i]));
    json_object_set_new(o, "log", json_string(path));
    json_object_set_new(o, "first_us", json_integer(c->first_us));
    json_object_set_new(o, "last_us", json_integer(c->last_us));
    json_object_set_new(o, "strategy", strategy[0] ? json_string(strategy)
                                                   : json_null());
    json_object_set_new(o, "verdict",
                        why != NULL ? json_null()
                                    : json_string(nv ? "violation" : "ok"));
    json_object_set_new(o, "verdict_note",
                        why != NULL ? json_string(why) : json_null());
    json_object_set_new(o, "violations", va);
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    fputc('\n', stdout);
    json_decref(o);
    return 0;
}

/* The names of the fault kinds whose windows explain early deliveries
 * (their rows say DQ_FAULT_EXPLAINS_EARLY), "a or b", for the "early"
 * line. */
static const char *early_fault_name(void)
{
    static char buf[128];
    size_t off = 0;

    buf[0] = '\0';
    for (size_t i = 0; dq_fault_kinds[i] != NULL && off < sizeof buf; i++)
        if (dq_fault_kinds[i]->explains & DQ_FAULT_EXPLAINS_EARLY)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s",
                                    off ? " or " : "",
                                    dq_fault_kinds[i]->name);
    return buf[0] ? buf : "fault";
}

/* What the log shows, one line per count. */
static void print_counts(const dq_check *c)
{
    printf("enqueued    %" PRIu64 "\n", c->enqueued);
    if (c->enqueue_refused > 0)
        printf("refused     %" PRIu64 "  (enqueues the server refused: not "
               "acknowledged, not lost)\n", c->enqueue_refused);
    printf("delivered   %" PRIu64 "  (deliveries %" PRIu64 ", duplicates %"
           PRIu64 ", acked %" PRIu64 ", never acked %" PRIu64 ")\n",
           c->delivered, c->deliveries, c->duplicates, c->acked, c->unacked);
    printf("duplicates  ");
    if (c->given_back > 0)
        printf("%" PRIu64 " retried (a failed work given back), ",
               c->retried);
    printf("%" PRIu64 " redelivered (a lease ran out, or after a fault), %"
           PRIu64 " duplicated after a fault, %" PRIu64 " without a fault\n",
           c->redelivered, c->dup_fault, c->dup_nofault);
    if (c->given_back > 0)
        printf("retries     %" PRIu64 " failed works given back\n",
               c->given_back);
    printf("acks        %" PRIu64 " accepted, %" PRIu64 " refused as stale "
           "(ENOTFOUND), %" PRIu64 " failed\n", c->acked, c->ack_refused,
           c->ack_failed);
    if (c->processed_twice > 0)
        printf("processed twice %" PRIu64 "  (work ran to its end in two "
               "deliveries or more)\n", c->processed_twice);
    printf("lost        %" PRIu64 "  (%" PRIu64 " claimed by a killed "
           "consumer, %" PRIu64 " no fault explains)\n", c->lost,
           c->lost_claimed, c->lost_nofault);
    if (c->lost_retry > 0)
        printf("            %" PRIu64 " lost by a re-add its consumer died "
               "before (the retry policy's loss)\n", c->lost_retry);
    if (c->dead_lettered > 0)
        printf("dead letters %" PRIu64 "  (%" PRIu64 " never delivered)\n",
               c->dead_lettered, c->dead_undelivered);
    if (c->redis_stall_ms >= 0)
        printf("redis stall %.3f ms longest between two answered PINGs, "
               "PING p99 %.3f ms (%" PRId64 " answered)\n",
               c->redis_stall_ms, c->ping_p99_ms, c->pings);
    if (c->lost_queued > 0) {
        char note[200];
        dq_check_queued_note(c, note, sizeof note);
        printf("            %s\n", note);
    }
    printf("pending end %" PRIu64 "  (due after the end, or leased to a "
           "killed consumer)\n", c->pending_end);
    printf("early       %" PRIu64 "  (%" PRIu64 " in a %s window)\n",
           c->early, c->early_fault, early_fault_name());
    printf("unknown     %" PRIu64 "\n", c->unknown);
    if (c->fault_spec[0])
        printf("fault spec  %s\n", c->fault_spec);
    for (size_t i = 0; i < c->nfaults; i++) {
        const dq_fault_stat *f = &c->faults[i];
        printf("fault       %s: %" PRIu64 " window%s, %.1f ms; lost %" PRIu64
               ", redelivered %" PRIu64 ", duplicated %" PRIu64 ", early %"
               PRIu64, f->name, f->windows, f->windows == 1 ? "" : "s",
               (double)f->window_us / 1000.0, f->lost, f->redelivered,
               f->dup_fault, f->early);
        if (f->refused > 0)
            printf(", enqueues refused %" PRIu64, f->refused);
        putchar('\n');
    }
    if (c->lateness.n == 0) {
        printf("lateness ms none: no task was delivered\n");
        return;
    }
    printf("lateness ms p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  "
           "(n %" PRIu64 ")\n", c->lateness.p50_ms, c->lateness.p90_ms,
           c->lateness.p99_ms, c->lateness.p999_ms, c->lateness.max_ms,
           c->lateness.n);
}

/* The text summary on stdout. */
static void print_text(const char *path, const dq_check *c,
                       const char *strategy, const char *why,
                       const char **viol, size_t nv)
{
    printf("log         %s (v%d, %s)\n", path, c->log_version,
           c->end == DQ_CHECK_END_CLEAN         ? "ended clean"
           : c->end == DQ_CHECK_END_INTERRUPTED ? "ended interrupted"
           : c->end == DQ_CHECK_END_FAILED      ? "ended failed"
           : c->torn                            ? "no end record, last line cut"
                                                : "no end record");
    if (strategy[0])
        printf("strategy    %s\n", strategy);
    print_counts(c);
    if (why != NULL)
        printf("verdict: no verdict: %s\n", why);
    else if (nv == 0)
        printf("verdict: ok\n");
    for (size_t i = 0; i < nv; i++)
        printf("verdict: VIOLATION: %s\n", viol[i]);
}

int dq_cmd_check(int argc, char **argv)
{
    const char *path = NULL, *why, *viol[MAX_VIOL];
    bool json = false, help = false;
    char err[512], whybuf[160], strategy[64];
    dq_check c;
    size_t nv;
    int code = parse_args(argc, argv, &path, &json, &help);

    if (help)
        usage(stdout);
    if (code != 0 || help)
        return code;
    if (dq_check_file(path, &c, err, sizeof err) != 0 ||
        read_strategy(path, strategy, sizeof strategy, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab check: %s\n", err);
        return 2;
    }
    nv = verdict(&c, strategy, &why, whybuf, sizeof whybuf, viol);
    nv = nv > MAX_VIOL ? MAX_VIOL : nv;
    code = why != NULL ? EXIT_NO_VERDICT : nv > 0 ? 1 : 0;
    if (json)
        return print_json(path, &c, strategy, why, viol, nv) != 0 ? 2 : code;
    print_text(path, &c, strategy, why, viol, nv);
    return code;
}
