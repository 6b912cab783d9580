/* cli_list.c -- `dqlab list [-v]`: the registered strategies.
 *
 * Reads only the registry (dq_strategies[]), so a new strategy shows up
 * here as soon as it is in the table.  -v adds what `dqlab run --opt`
 * accepts, the guarantees the tests hold each strategy to and the
 * strategy's own description (dq_strategy.doc), word-wrapped.
 */
#include <stdio.h>
#include <string.h>

#include "../strategies/dq.h"
#include "commands.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: dqlab list [-v]\n"
               "  Lists the delay-queue strategies.  -v: guarantees and "
               "options with defaults.\n");
}

void dq_print_wrapped(const char *indent, const char *text, int width)
{
    int col = 0;
    const char *p = text;

    while (*p) {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        int n = (int)strcspn(p, " ");
        if (col > 0 && col + 1 + n > width) {
            putchar('\n');
            col = 0;
        }
        if (col == 0)
            col = printf("%s", indent);
        else
            col += printf(" ");
        col += printf("%.*s", n, p);
        p += n;
    }
    if (col > 0)
        putchar('\n');
}

int dq_cmd_list(int argc, char **argv)
{
    int verbose = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "dqlab list: unknown argument '%s' (usage: dqlab "
                    "list [-v])\n", argv[i]);
            return 2;
        }
    }
    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];

        printf("%-16s %s\n", s->name, s->summary ? s->summary : "");
        if (!verbose)
            continue;
        printf("  guarantees:");
        for (unsigned b = 1; b != 0 && b <= (1u << 15); b <<= 1)
            if ((s->flags & b) && dq_flag_name(b) != NULL)
                printf(" %s", dq_flag_name(b));
        printf("\n");
        if (s->min_redis != NULL)
            printf("  redis:      %s or later\n", s->min_redis);
        if (s->doc != NULL)
            dq_print_wrapped("  ", s->doc, 78);
        /* dq_strategy_option: the strategy's own options, then those
         * every Redis strategy takes (wait, wait_timeout_ms). */
        if (dq_strategy_option(s, 0) == NULL) {
            printf("  options:    (none)\n");
        } else {
            const dq_optdef *o;

            printf("  options:\n");
            for (size_t j = 0; (o = dq_strategy_option(s, j)) != NULL; j++) {
                char kv[64];
                snprintf(kv, sizeof kv, "%s=%s", o->name,
                         o->def ? o->def : "");
                printf("    %-22s %s\n", kv, o->help ? o->help : "");
            }
        }
        printf("\n");
    }
    return 0;
}
