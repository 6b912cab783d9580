/* commands.h -- the `dqlab` subcommands, dispatched by main.c.
 *
 * Each takes the arguments after the subcommand name (argv[0] is the
 * subcommand) and returns the process exit code: 0 success, 1 the check
 * found a strategy breaking a guarantee it declares, 2 bad input or an
 * environment problem (message already printed on stderr, one line). */
#ifndef DQ_COMMANDS_H
#define DQ_COMMANDS_H

int dq_cmd_list(int argc, char **argv);       /* cli_list.c */
int dq_cmd_run(int argc, char **argv);        /* cli_run.c */
int dq_cmd_check(int argc, char **argv);      /* cli_check.c */
int dq_cmd_experiment(int argc, char **argv); /* experiment.c */
int dq_cmd_report(int argc, char **argv);     /* ../report/report.c */
int dq_cmd_bench(int argc, char **argv);      /* bench.c */
int dq_cmd_probes(int argc, char **argv);     /* probes.c */

/* Prints text (one paragraph) to stdout word-wrapped at width columns,
 * each line after indent (cli_list.c). */
void dq_print_wrapped(const char *indent, const char *text, int width);

/* The hidden subcommand that runs one process of a process-mode trial (a
 * consumer, or for an in-process strategy its producers and consumers
 * together); started by trial_procs.c as `/proc/self/exe __child ...`,
 * never by people. */
#define DQ_CHILD_COMMAND "__child"
int dq_cmd_child(int argc, char **argv);      /* consumer_proc.c */

#endif
