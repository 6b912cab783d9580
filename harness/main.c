/* main.c -- the dqlab command line: dispatches to one subcommand.
 *
 *   dqlab list [-v]            strategies, guarantees, options
 *   dqlab run --strategy S ... one trial, checked
 *   dqlab check LOG            the checker on an event log
 *   dqlab experiment FILE      a matrix of trials (experiment.c)
 *   dqlab report DIR           the comparison report (report/report.c)
 *   dqlab bench                performance and scale (bench.c)
 *   dqlab probes               decisive checks of claims about Redis (probes.c)
 *   dqlab opcost               ns per operation vs pending tasks (opcost.c)
 *   dqlab witness              charts of real failures (witness.c)
 *   dqlab exercise EX NAME     an exercise's acceptance checks (exercise.c)
 *
 * Exit codes (commands.h): 0 ok, 1 a strategy broke a guarantee it
 * declares, 2 bad input or environment (one line on stderr), 130 after
 * Ctrl-C.  Signal handlers are installed here, before any thread starts.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "exercise.h"
#include "opcost.h"
#include "signals.h"
#include "witness.h"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"list", dq_cmd_list, "list the strategies (-v: guarantees, options)"},
    {"run", dq_cmd_run, "run one trial of a strategy and check it"},
    {"check", dq_cmd_check, "check an event log"},
    {"experiment", dq_cmd_experiment, "run an experiment file (a matrix of "
                                      "trials)"},
    {"report", dq_cmd_report, "write the comparison report from results"},
    {"bench", dq_cmd_bench, "measure speed, the Redis ceiling and backlog "
                            "scaling (results/bench/)"},
    {"probes", dq_cmd_probes, "check claims about Redis itself (C06-C09, "
                              "C20, C22, C27, C28; results/probes/)"},
    {"opcost", dq_opcost_cmd, "ns per operation of in-process strategies vs "
                              "pending tasks (results/opcost/)"},
    {"witness", dq_witness_cmd, "charts of real failures (results/witness/)"},
    {"exercise", dq_cmd_exercise, "check a coursework exercise's solution "
                                  "(make exercise-check)"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: dqlab <command> [options]\n\n"
               "Delay-queue strategies side by side on a real Redis.\n\n"
               "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "  %-11s %s\n\n", "help", "this text, or `dqlab help CMD`");
    fprintf(f, "`dqlab CMD --help` describes one command.  Exit codes: 0 ok, "
               "1 a strategy broke a\nguarantee it declares, 2 bad input or "
               "environment, 3 (dqlab check) no verdict:\nthe log is "
               "incomplete, 130 interrupted.\n");
}

int main(int argc, char **argv)
{
    const char *cmd;

    if (argc < 2) {
        fprintf(stderr, "dqlab: missing command (see dqlab --help)\n");
        return 2;
    }
    cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        for (size_t i = 0; i < NCOMMANDS; i++)
            if (strcmp(argv[2], commands[i].name) == 0) {
                char *args[] = {argv[2], "--help", NULL};
                return commands[i].fn(2, args);
            }
        fprintf(stderr, "dqlab: unknown command '%s' (see dqlab --help)\n",
                argv[2]);
        return 2;
    }
    if (strcmp(cmd, DQ_CHILD_COMMAND) == 0) {
        /* Hidden: a consumer process of a process-mode trial (trial.h). */
        dq_signals_install();
        return dq_cmd_child(argc - 1, argv + 1);
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0) {
            dq_signals_install();
            return commands[i].fn(argc - 1, argv + 1);
        }
    fprintf(stderr, "dqlab: unknown command '%s' (see dqlab --help)\n", cmd);
    return 2;
}
