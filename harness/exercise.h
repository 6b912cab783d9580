/* exercise.h -- the coursework exercises and their machine-checked
 * acceptance: `dqlab exercise EX NAME`, which `make exercise-check EX=...
 * NAME=...` runs.
 *
 * An exercise asks for a strategy that does what the strategy it starts
 * from does not: a copy of that strategy's file under a new name NAME
 * (strategies/NAME.c) with one X(NAME) line in DQ_STRATEGY_MAP
 * (strategies/registry.h), as the README's "Adding a strategy" says.  Its
 * acceptance is a list of checks, each a real run against the strategy as
 * registered in this build:
 *   DQ_XC_DECLARES  its guarantee flags (DQ_G_*, dq.h), options and
 *                   optional ops.  The checker (harness/checker.h) and the
 *                   conformance suite judge a strategy by what it
 *                   declares, so this check is what makes the others test
 *                   the exercise's guarantee: `dqlab check` passes a
 *                   strategy that declares at-most-once and loses the
 *                   tasks of killed consumers, since at-most-once allows
 *                   that loss.
 *   DQ_XC_TRIAL     `dqlab run --strategy NAME [--opt K=V] ARGS --out
 *                   DIR` (each option K=V of the check that NAME takes), then
 *                   `dqlab check DIR/events.log`: both exit 0, and the
 *                   summary's (DIR/summary.json) lost tasks and extra
 *                   deliveries within the check's limits.
 *   DQ_XC_SUITE     the conformance suite for NAME (<tests>/
 *                   test_conformance with a --filter for the suite IDENT,
 *                   NAME with '-' written '_', on a private
 *                   redis-server): no test fails, and each test the check
 *                   names ran and passed (a skip counts as a failure: the
 *                   suite skips what a strategy does not declare).
 * Each exercise also names a registered strategy that passes it (the
 * reference solution) and one that fails it (its starting point as it
 * is, or a strategy without what it asks for), so that the acceptance
 * itself is tested (tests/test_pack.c).  The report's interview and
 * coursework pack (report/sec_pack.c) prints the same table: the task, how
 * to start, each check's command and what it proves.
 *
 * The exercises are data, not code: experiments/exercises.conf (INI, its
 * top comment has the format) holds them, with the strategies they name
 * and their prose, read by exercise_load.c; this build's harness and
 * strategies name no strategy for them.
 */
#ifndef DQ_EXERCISE_H
#define DQ_EXERCISE_H

#include <stddef.h>
#include <stdint.h>

typedef enum dq_xcheck_kind {
    DQ_XC_DECLARES,
    DQ_XC_TRIAL,
    DQ_XC_SUITE,
} dq_xcheck_kind;

typedef struct dq_xcheck {
    dq_xcheck_kind kind;
    const char *what;          /* what is checked, one line; NULL ends */
    const char *proves;        /* what passing it proves */
    /* DQ_XC_DECLARES */
    unsigned need, forbid;     /* DQ_G_* it must / must not declare */
    const char *options;       /* options it must take: "lease_ms
                                  max_attempts", or NULL */
    const char *ops;           /* optional ops it must fill: "nack
                                  dead_letters", or NULL */
    /* DQ_XC_TRIAL */
    const char *args;          /* `dqlab run` arguments after --strategy
                                  NAME, blank-separated, no quoting */
    const char *set;           /* "k=v k2=v2": each given as --opt k=v when
                                  the strategy takes option k (a lease
                                  short enough for a quick trial), so that
                                  a starting point without it runs too */
    int64_t max_lost, max_extra;   /* summary's lost, duplicates (every
                                      extra delivery): at most; -1: any */
    /* DQ_XC_SUITE */
    const char *tests;         /* conformance checks that must run and
                                  pass: "at_least_once long_work" */
} dq_xcheck;

#define DQ_XCHECKS_MAX 4

typedef struct dq_exercise {
    const char *id;            /* "at-least-once"; NULL ends the table */
    const char *title;
    const char *from;          /* the registered strategy whose file to
                                  copy, or NULL: the solution of exercise
                                  `after` */
    const char *after;         /* exercise id, or NULL */
    const char *task;          /* what to change and where to look */
    const char *reference;     /* a registered strategy that passes */
    const char *fails;         /* one that fails */
    const char *fails_why;     /* what it lacks: "the starting point as it
                                  is" */
    dq_xcheck checks[DQ_XCHECKS_MAX + 1];
    int line;                  /* the line of its [ID] in the file */
} dq_exercise;

/* Exercises read from a file: x[0..n-1], then one with id NULL. */
typedef struct dq_exercise_set {
    dq_exercise *x;
    size_t n;
} dq_exercise_set;

/* The exercise file `dqlab exercise` and `dqlab report` read, relative to
 * the current directory: dqlab runs from its own directory, as make runs
 * it (the report's default --scripts report and results are relative in
 * the same way). */
#define DQ_EXERCISE_FILE "experiments/exercises.conf"

/* The longest line of the exercise file, in bytes without its newline
 * (the line buffer inih reads it with; a longer value goes on over
 * indented lines). */
#define DQ_EXERCISE_LINE 198

/* Reads the exercise file at path into *set (owned by the caller, freed by
 * dq_exercises_free), in the file's order.  Checks every key and section,
 * that each exercise has its title, task, reference, fails, fails_why and
 * one of from and after (an earlier exercise), and that every strategy it
 * names is registered in this build.  Returns 0, or -1 with one line in
 * err: "file:line: what is wrong", the line of the section's header for a
 * rule of a whole section or exercise ("file: ..." alone when it cannot
 * be read or holds no exercise); *set is then empty. */
int dq_exercises_load(const char *path, dq_exercise_set *set, char *err,
                      size_t errlen);
void dq_exercises_free(dq_exercise_set *set);

/* The exercise of set with that id, or NULL. */
const dq_exercise *dq_exercise_find(const dq_exercise_set *set,
                                    const char *id);

/* The strategy file name of a strategy: "naive_checked.c" for
 * "naive-checked" ('-' written '_', as strategies/<ident>.c), into buf. */
void dq_exercise_ident(const char *name, char *buf, size_t len);

/* The commands that start exercise x for a new strategy name, one per
 * step, into steps (at most max, 512 bytes each): the strategy file it
 * starts from copied under the new name with its struct and .name
 * renamed, the X(name) line added to DQ_STRATEGY_MAP (before its first
 * line), make.  Returns how many; 0 for an exercise that starts from
 * another's solution (x->after) or when max < 3. */
size_t dq_exercise_start(const dq_exercise *x, const char *name,
                         char steps[][512], size_t max);

/* The `dqlab run` arguments of trial check c for strategy s (NULL: one
 * that takes every option of c->set), "--opt lease_ms=500 --fault ...",
 * into buf. */
struct dq_strategy;
void dq_xcheck_args(const dq_xcheck *c, const struct dq_strategy *s,
                    char *buf, size_t len);

/* The command line that does what check c does for strategy name (s: as
 * registered, or NULL for one yet to be written), as a person types it
 * from the repository root (bin/dqlab ...; the trial's files under
 * dir/<stem>, "&&"-joined with its check), into buf.  For DQ_XC_DECLARES:
 * the listing that shows the flags and options. */
void dq_xcheck_command(const dq_xcheck *c, const struct dq_strategy *s,
                       const char *name, const char *dir, const char *stem,
                       char *buf, size_t len);

/* `dqlab exercise [EX NAME] [--tests DIR] [--out DIR]` (commands.h): no
 * EX: lists the exercises (exit 0).  Runs every check of EX on strategy
 * NAME and prints each one's result and what it proves; exit 0 when all
 * pass, 1 when one fails, 2 on bad input or when a check could not run
 * (redis-server or the conformance binary missing).  The checks' files go
 * to --out DIR (a new or empty directory, kept) or to a temporary
 * directory removed at the end.  --tests DIR: where test_conformance is
 * (default build/default/tests; make exercise-check passes its build). */
int dq_cmd_exercise(int argc, char **argv);

#endif
