/* cli_check.c -- `dqlab check LOG [--json]`: the checker on a log file.
 *
 * The same code `dqlab run` uses after a trial (checker.c), so a log kept
 * with --out can be re-checked, and a hand-edited log tried.  Exit 0 with
 * the counts, or 2 with "file:line: what" when the log cannot be read or a
 * record is malformed.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "checker.h"
#include "commands.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: dqlab check LOG [--json]\n"
               "  Reads an event log written by dqlab run and prints "
               "enqueued, delivered,\n  duplicates, lost, early, unknown and "
               "lateness percentiles.\n");
}

int dq_cmd_check(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    dq_check c;
    char err[512];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "dqlab check: unknown option '%s' (usage: dqlab "
                    "check LOG [--json])\n", argv[i]);
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
        fprintf(stderr, "dqlab check: missing LOG (usage: dqlab check LOG "
                "[--json])\n");
        return 2;
    }
    if (dq_check_file(path, &c, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab check: %s\n", err);
        return 2;
    }
    if (json) {
        json_t *o = dq_check_json(&c);
        if (o == NULL) {
            fprintf(stderr, "dqlab check: out of memory\n");
            return 2;
        }
        json_object_set_new(o, "log", json_string(path));
        json_object_set_new(o, "first_us", json_integer(c.first_us));
        json_object_set_new(o, "last_us", json_integer(c.last_us));
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        fputc('\n', stdout);
        json_decref(o);
        return 0;
    }
    printf("log         %s\n", path);
    printf("enqueued    %llu\n", (unsigned long long)c.enqueued);
    printf("delivered   %llu  (deliveries %llu, duplicates %llu, acked %llu)\n",
           (unsigned long long)c.delivered, (unsigned long long)c.deliveries,
           (unsigned long long)c.duplicates, (unsigned long long)c.acked);
    printf("lost        %llu\n", (unsigned long long)c.lost);
    printf("early       %llu\n", (unsigned long long)c.early);
    printf("unknown     %llu\n", (unsigned long long)c.unknown);
    printf("lateness ms p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  "
           "(n %llu)\n", c.lateness.p50_ms, c.lateness.p90_ms,
           c.lateness.p99_ms, c.lateness.p999_ms, c.lateness.max_ms,
           (unsigned long long)c.lateness.n);
    return 0;
}
