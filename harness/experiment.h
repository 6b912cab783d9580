/* experiment.h -- experiment files: a matrix of trials described in INI.
 *
 * An experiment file names the strategies and the parameters to sweep;
 * `dqlab experiment FILE` runs every combination (strategy x fault x
 * producers x consumers x work_us x rate x backlog x repeat) as one
 * trial each and stores the results under
 * results/<name>/<YYYYmmdd-HHMMSS>/ (experiment.c runs it,
 * experiment_load.c loads it).  Format:
 *
 *   [experiment]
 *   name        = concurrency            ; [A-Za-z0-9_-]{1,48}, required
 *   title       = Concurrency and duplicates
 *   description = One line or several; continuation lines are indented.
 *   claims      = C01 C02 C13            ; ids of docs/CLAIMS.md
 *   plots       = duplicates, throughput ; figures the report draws, the
 *                                        ; kinds of plots.h (some pick the
 *                                        ; report section)
 *   strategies  = naive, lua, heap       ; list (matrix dimension), or all:
 *                                        ; every registered strategy
 *   producers   = 1                      ; list (matrix dimension)
 *   consumers   = 1, 2, 4, 8             ; list (matrix dimension)
 *   work_us     = 200                    ; list (matrix dimension)
 *   tasks       = 2000
 *   delay_ms    = 0:200                  ; MIN:MAX or N
 *   payload_bytes = 16
 *   grace_ms    = 2000                   ; (every trial parameter: below)
 *   repeats     = 3
 *   seed        = 42
 *   [quick]                              ; overrides applied with --quick
 *   tasks = 400                          ; (any key above but name, title,
 *                                        ;  description, claims, plots)
 *   [opts.naive]                         ; options of one strategy, passed
 *   poll_ms = 10                         ; as key=value (dq_opt)
 *   [opts.lua]
 *   poll_ms = 10, 100                    ; a comma list: matrix dimension,
 *                                        ; one variant of the strategy per
 *                                        ; value (lists of several options
 *                                        ; of one strategy multiply)
 *
 * Every trial parameter of params.c's table is a key of its own, with the
 * same name, range and default as `dqlab run --<key>` (dqlab run --help
 * lists them): producers, consumers, tasks, delay_ms, work_us,
 * payload_bytes, grace_ms, enqueue_batch, rate, seed, claim_timeout_ms,
 * idle_ms, backlog, backlog_delay_ms, consumer_mode.  The ones params.c
 * marks DQ_PARAM_LIST (producers, consumers, work_us, rate, backlog) take
 * a list, a matrix dimension each; every one may appear in [quick].  tasks = 0 is
 * idle mode and needs idle_ms (consumers claim against an empty queue
 * that long).  consumer_mode = process runs each consumer as a child
 * process; a fault that needs that (kill-consumer) gets it whatever this
 * says, as `dqlab run --fault`.
 *
 * Keys of the file itself besides: name, title, description, claims,
 * plots (not in [quick]), strategies, repeats, and
 *   faults        = none, kill-consumer:after-claim:3, restart-redis:off
 *                                        ; list (matrix dimension): one
 *                                        ; fault per trial, each item a
 *                                        ; spec of faults.h
 *                                        ; (dq_fault_parse), "none" = no
 *                                        ; fault (the default: {none}).
 *                                        ; Items are separated by commas
 *                                        ; and/or blanks; a long list goes
 *                                        ; on indented continuation lines
 *                                        ; (inih cuts lines at 200 bytes)
 * A fault that does not apply to a strategy (dq_fault_applies: one that
 * needs Redis for a strategy without it, one that needs blocking consumers
 * for a polling strategy) is skipped: that cell is not in the matrix and
 * not counted in ntrials.  So is a strategy variant whose options ask for
 * wait > 0 (every Redis strategy takes wait=N, dq.h) with a fault that
 * starts no replica (dq_fault_serves_wait: only failover does), since on
 * a single server every write would fail its WAIT.  Load errors: a bad spec ("FILE:LINE: faults:
 * <dq_fault_parse's message>"), an item listed twice, faults or
 * consumer_mode = process with tasks = 0 (idle mode), a matrix left empty
 * by the skips.  `dqlab experiment --redis URL` refuses (exit 2, before
 * anything is written) a run whose matrix holds a fault that needs the
 * private server.
 *
 * Lists are separated by commas and/or blanks, except option values in
 * [opts.NAME], which are split on commas only (each item trimmed).  A
 * value listed twice in any list is an error, always worded
 * "KEY: 'VALUE' listed twice" (KEY "[opts.NAME]: OPTION" for an option;
 * numbers compare by value, so 1 and 01 are the same).  As in inih, an
 * indented line after a key continues that key; only description and
 * faults take continuation lines, anywhere else it is an error that names
 * the key it continues.  A UTF-8 byte order mark at the start is skipped.
 * A matrix of more than DQ_EXP_MAX_TRIALS trials is refused with its size.
 * Every error (unknown section or key, unknown strategy, bad number, MIN >
 * MAX, empty list, missing name, an option value the strategy refuses) is
 * reported as "FILE:LINE: message" ("FILE: message" when the file cannot
 * be read at all, or is a directory); `dqlab experiment` prints it after
 * "dqlab experiment: ".
 */
#ifndef DQ_EXPERIMENT_H
#define DQ_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../strategies/dq.h"
#include "params.h"
#include "plots.h"
#include "redis_url.h" /* for report/, which includes this header for
                          dq_redact_redis_urls; drop once it includes
                          redis_url.h itself */
#include "trial.h"

#define DQ_EXP_MAX_LIST 16    /* values per list */
#define DQ_EXP_MAX_CLAIMS 24
#define DQ_EXP_MAX_VARIANTS 64 /* strategy variants after option lists */
#define DQ_EXP_MAX_TRIALS 10000 /* trials of one run (the matrix); one
                                   result row of about 4 KiB each is kept in
                                   memory, and 10000 trials of a second or
                                   more already take hours */

/* One strategy in the matrix with the options from its [opts.NAME]; with
 * option lists, one entry per combination of values (a variant). */
typedef struct dq_exp_strategy {
    const dq_strategy *s;
    dq_opt opts[DQ_MAX_OPTS];
    size_t nopts;
} dq_exp_strategy;

/* The values of one list parameter (params.h DQ_PARAM_LIST), as written. */
typedef struct dq_exp_values {
    int64_t v[DQ_EXP_MAX_LIST];
    size_t n;                /* >= 1 once loaded */
} dq_exp_values;

typedef struct dq_experiment {
    char path[512];          /* the file it was loaded from */
    char name[49];
    char title[128];
    char description[1024];
    char claims[DQ_EXP_MAX_CLAIMS][8]; /* "C01", ... */
    size_t nclaims;
    char plots[DQ_NPLOTS][32]; /* kinds of plots.h: "duplicates", ... */
    size_t nplots;
    bool quick;              /* the [quick] overrides were applied */

    dq_exp_strategy strategies[DQ_EXP_MAX_VARIANTS]; /* variants, in the
                                order of the strategies list, then of the
                                option values as written */
    size_t nstrategies;
    /* Every trial parameter (params.c's table): its value as given, the
     * default otherwise; a list parameter holds its first value here and
     * all of them in lists[] at the index of its row in dq_params[]
     * (idle_ms is 0 unless tasks is 0). */
    dq_trial_params params;
    dq_exp_values lists[DQ_NPARAMS];
    int repeats;

    /* Faults (faults.h): list (matrix dimension), in the order written. */
    dq_fault faults[DQ_EXP_MAX_LIST]; /* ops NULL for "none" */
    char fault_specs[DQ_EXP_MAX_LIST][64]; /* canonical (dq_fault_format),
                                "none" for no fault */
    size_t nfaults;            /* >= 1; {none} when the key is absent */
    bool faults_given;         /* the file has a faults key */
} dq_experiment;

/* Loads the experiment at path into *e (caller-owned storage; nothing
 * inside is heap-allocated, so there is no free).  With quick, the keys of
 * [quick] replace the ones of [experiment].  Returns 0, or -1 with
 * "path:line: message" in err (errlen bytes), or "path: strerror" when
 * the file cannot be opened.  The file is parsed and validated in full
 * either way, so a bad [quick] section fails without --quick too. */
int dq_experiment_load(const char *path, bool quick, dq_experiment *e,
                       char *err, size_t errlen);

/* Frees nothing today; kept so callers need not change if the struct ever
 * owns memory.  NULL is fine. */
void dq_experiment_free(dq_experiment *e);

/* Number of trials the matrix holds (strategy variants x faults that
 * apply to the variant's strategy x producers x consumers x work_us x
 * rate x backlog x repeats). */
size_t dq_experiment_ntrials(const dq_experiment *e);

/* The values of the list parameter key ("consumers") in e, or NULL when
 * key is not a list parameter of params.c's table. */
const dq_exp_values *dq_experiment_list(const dq_experiment *e,
                                        const char *key);

/* True when fault f (NULL or ops NULL: no fault, always true) applies to
 * strategy s, by faults.h dq_fault_applies.  A fault that does not apply
 * is skipped for that strategy, not run and not an error. */
bool dq_experiment_fault_applies(const dq_strategy *s, const dq_fault *f);

/* One cell of the matrix, by trial index 0..ntrials-1, in the order the
 * runner uses (strategy variant outermost, then fault, then the list
 * parameters in the table's order -- producers, consumers, work_us, rate,
 * backlog -- and repeat innermost; faults that do not apply to the
 * strategy are skipped). */
typedef struct dq_exp_cell {
    const dq_exp_strategy *strategy;
    const dq_fault *fault;   /* into e->faults; ops NULL: none */
    const char *fault_spec;  /* into e->fault_specs: "none" or the spec */
    int repeat;              /* 1..repeats */
    dq_trial_params params;  /* the trial: strategy, options, fault, every
                                parameter, seed = the file's seed + index;
                                no target, queue or log */
} dq_exp_cell;

void dq_experiment_cell(const dq_experiment *e, size_t index, dq_exp_cell *c);

#endif
