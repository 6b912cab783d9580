/* params.h -- every trial parameter, declared once.
 *
 * One row per parameter of dq_trial_params (trial.h) in params.c's table,
 * as Redis declares its configuration once in src/config.c's table
 * (createIntConfig(name, alias, flags, min, max, field, default, ...)):
 * its key, its command-line option, its type, bounds and default, whether
 * it is a matrix dimension in experiment files, whether it travels to a
 * process-mode child on its command line, when its H record is written,
 * and the trials.csv column(s) it fills.  Everything that reads or writes
 * a parameter goes through this table:
 *   `dqlab run`             the options and their --help lines (cli_run.c)
 *   experiment files        the keys, lists and [quick] (experiment.c),
 *                           the meta.txt lines
 *   consumer processes      their command line, built and parsed here
 *                           (trial_procs.c, consumer_proc.c)
 *   the event log           one H record each (dq_params_log)
 *   the JSON summary        one key each (dq_params_json)
 * so a limit, a default or a name cannot differ between them.  Adding a
 * parameter: its field in dq_trial_params, its row here, and the code that
 * uses it.
 *
 * The key is the same in every place it appears (INI key, H record, JSON,
 * meta.txt); the option is "--" and the key with '_' written '-'.
 */
#ifndef DQ_PARAMS_H
#define DQ_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct dq_trial_params;
struct dq_eventlog;
struct json_t;

typedef enum dq_param_type {
    DQ_PARAM_INT,     /* an int field */
    DQ_PARAM_I64,     /* an int64_t field */
    DQ_PARAM_U64,     /* a uint64_t field, its full range (min, max unused) */
    DQ_PARAM_RANGE,   /* two int64_t fields, written "MIN:MAX" or "N" */
    DQ_PARAM_CHOICE,  /* a bool field: choices "false-word|true-word" */
} dq_param_type;

/* dq_param.flags */
enum {
    DQ_PARAM_LIST = 1u << 0,  /* a list in experiment files: each value a
                                 matrix dimension of its own */
    DQ_PARAM_CHILD = 1u << 1, /* sent to process-mode children */
};

typedef struct dq_param {
    const char *key;       /* "work_us": INI key, H record, JSON, meta.txt */
    const char *flag;      /* "--work-us" */
    const char *metavar;   /* "W" in --help */
    dq_param_type type;
    size_t off, off2;      /* offsetof the field(s) in dq_trial_params
                              (off2: RANGE's max) */
    int64_t min, max;      /* inclusive bounds of a value given */
    int64_t def, def2;     /* default (RANGE: min and max; CHOICE: 0 or 1);
                              may lie outside [min, max] to mean "off" */
    const char *choices;   /* CHOICE: "thread|process" */
    unsigned flags;        /* DQ_PARAM_* */
    /* When its H record is written: NULL always, else when this is true
     * (a parameter that means nothing in this trial is left out). */
    bool (*logged)(const struct dq_trial_params *p);
    const char *csv;       /* the trials.csv column(s) its value fills,
                              comma-separated ("delay_min_ms,delay_max_ms");
                              NULL: none (for the columns list,
                              trialcols.h, to name) */
    const char *help;      /* --help text; '\n' starts a continuation line */
} dq_param;

/* The table, terminated by a row with key NULL; DQ_NPARAMS rows. */
extern const dq_param dq_params[];
#define DQ_NPARAMS 18

/* The row with this key ("work_us") or option ("--work-us"), or NULL. */
const dq_param *dq_param_by_key(const char *key);
const dq_param *dq_param_by_flag(const char *flag);

/* The rows given so far on one command line, one bit each. */
typedef uint64_t dq_params_seen;
/* Marks d as given in *seen; what names it in the message ("--tasks").
 * Returns 0, or -1 with one line in err when d was given before: a value
 * given twice is refused, as an experiment file refuses a key given
 * twice, rather than one of them silently dropped. */
int dq_param_once(const dq_param *d, dq_params_seen *seen, const char *what,
                  char *err, size_t errlen);

/* Sets every parameter of the table to its default. */
void dq_params_defaults(struct dq_trial_params *p);

/* Parses text as a value of d into v (and v2 for RANGE; CHOICE: 0/1),
 * checked against d's bounds.  what names the place in messages ("--tasks",
 * "file.ini:7: tasks").  Returns 0, or -1 with one line in err. */
int dq_param_parse(const dq_param *d, const char *what, const char *text,
                   int64_t *v, int64_t *v2, char *err, size_t errlen);
/* Reads / writes d's field(s) of p as int64 values (U64: the bits). */
void dq_param_get(const dq_param *d, const struct dq_trial_params *p,
                  int64_t *v, int64_t *v2);
void dq_param_set(const dq_param *d, struct dq_trial_params *p, int64_t v,
                  int64_t v2);
/* The value (v, v2) as text, as parsed back by dq_param_parse: "42",
 * "0:100", "process". */
void dq_param_text(const dq_param *d, int64_t v, int64_t v2, char *buf,
                   size_t len);
/* d's value in p as text. */
void dq_param_format(const dq_param *d, const struct dq_trial_params *p,
                     char *buf, size_t len);

/* Brings p to its settled form, the one every writer shows: enqueue_batch
 * 0 is 1, idle_ms is 0 unless tasks is 0, consumer_process is on when a
 * fault of p needs consumers as processes. */
void dq_params_settle(struct dq_trial_params *p);
/* The rules between parameters, after each was parsed: tasks 0 (idle
 * mode) needs idle_ms > 0; faults and consumers as processes need tasks;
 * retry nack with failing work needs a strategy with nack (checked when
 * p->strategy is set).
 * cli: name them as options (--tasks 0), else as keys (tasks = 0), as the
 * caller's user wrote them.  Returns 0, or -1 with one line in err. */
int dq_params_check(const struct dq_trial_params *p, bool cli, char *err,
                    size_t errlen);

/* One H record per row (the logged ones) of the settled p.  Returns 0 or
 * -1 (errno from the log). */
int dq_params_log(struct dq_eventlog *log, const struct dq_trial_params *p);
/* One key per row of the settled p into JSON object o (RANGE as
 * {"min", "max"}, U64 an integer up to INT64_MAX, else a string, CHOICE
 * its word). */
void dq_params_json(struct json_t *o, const struct dq_trial_params *p);
/* The i-th child argument of p, "--work-us=200", into buf: for i over
 * 0.. until it returns false; only rows with DQ_PARAM_CHILD. */
bool dq_params_child_arg(const struct dq_trial_params *p, size_t i,
                         char *buf, size_t len);
/* The --help lines of every row, "  --work-us W           simulated work
 * between claim and ack (0)", to f. */
void dq_params_usage(FILE *f);

#endif
