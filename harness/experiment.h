/* experiment.h -- experiment files: a matrix of trials described in INI.
 *
 * An experiment file names the strategies and the parameters to sweep;
 * `dqlab experiment FILE` runs every combination (strategy x producers x
 * consumers x work_us x repeat) as one trial each and stores the results
 * under results/<name>/<YYYYmmdd-HHMMSS>/ (see experiment.c).  Format:
 *
 *   [experiment]
 *   name        = concurrency            ; [A-Za-z0-9_-]{1,48}, required
 *   title       = Concurrency and duplicates
 *   description = One line or several; continuation lines are indented.
 *   claims      = C01 C02 C13            ; ids from CLAIMS.md (report)
 *   plots       = duplicates, throughput ; figures the report draws
 *                                        ; (also lateness, lateness-cdf,
 *                                        ;  idle-cost, backlog-lateness,
 *                                        ;  loss: these pick the report
 *                                        ;  section)
 *   strategies  = naive, lua, heap       ; list (matrix dimension)
 *   producers   = 1                      ; list (matrix dimension)
 *   consumers   = 1, 2, 4, 8             ; list (matrix dimension)
 *   work_us     = 200                    ; list (matrix dimension)
 *   tasks       = 2000
 *   delay_ms    = 0:200                  ; MIN:MAX or N
 *   payload_bytes = 16
 *   grace_ms    = 2000
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
 * Keys added for the lateness, idle and backlog experiments (all may
 * appear in [quick]):
 *   tasks            = 0                 ; 0: idle mode, needs idle_ms > 0
 *   idle_ms          = 5000              ; idle mode: consumers claim
 *                                        ; against an empty queue this long
 *   claim_timeout_ms = 1000              ; each consumer claim's timeout
 *                                        ; (default 100)
 *   backlog          = 1000, 100000      ; list (matrix dimension): tasks
 *                                        ; enqueued before the measured
 *                                        ; ones, due backlog_delay_ms ahead
 *   backlog_delay_ms = 3600000           ; (default 3600000)
 *
 * Keys added for the loss experiment (faults issue; both may appear in
 * [quick]):
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
 *   consumer_mode = thread               ; thread (default) or process:
 *                                        ; each consumer a child process.
 *                                        ; A kill-consumer trial runs in
 *                                        ; process mode whatever this says
 *                                        ; (as `dqlab run --fault`)
 * A fault that does not apply to a strategy (restart-redis, pause-redis or
 * mover-stall for a strategy without Redis, e.g. heap; mover-stall for a
 * strategy whose consumers poll, e.g. lua) is skipped: that cell is not in
 * the matrix and not counted in ntrials.  Load errors: a
 * bad spec ("FILE:LINE: faults: <dq_fault_parse's message>"), an item
 * listed twice, faults or consumer_mode = process with tasks = 0 (idle
 * mode), a matrix left empty by the skips.  `dqlab experiment --redis URL`
 * refuses (exit 2, before anything is written) a run whose matrix holds
 * restart-redis or pause-redis: they act on the private server only.
 *
 * Key added for the performance issue (may appear in [quick]):
 *   enqueue_batch = 64                   ; tasks per enqueue call of each
 *                                        ; producer (default 1): above 1,
 *                                        ; dq_enqueue_many in groups
 *                                        ; (trial.h enqueue_batch);
 *                                        ; 1..10000
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

#define DQ_EXP_MAX_LIST 16    /* values per list */
#define DQ_EXP_MAX_CLAIMS 24
#define DQ_EXP_MAX_VARIANTS 64 /* strategy variants after option lists */
#define DQ_EXP_MAX_TRIALS 10000 /* trials of one run (the matrix); one
                                   result row of about 4 KiB each is kept in
                                   memory, and 10000 trials of a second or
                                   more already take hours */

#include "faults.h"

/* One strategy in the matrix with the options from its [opts.NAME]; with
 * option lists, one entry per combination of values (a variant). */
typedef struct dq_exp_strategy {
    const dq_strategy *s;
    dq_opt opts[DQ_MAX_OPTS];
    size_t nopts;
} dq_exp_strategy;

typedef struct dq_experiment {
    char path[512];          /* the file it was loaded from */
    char name[49];
    char title[128];
    char description[1024];
    char claims[DQ_EXP_MAX_CLAIMS][8]; /* "C01", ... */
    size_t nclaims;
    char plots[8][32];       /* "duplicates", "throughput", "lateness" */
    size_t nplots;
    bool quick;              /* the [quick] overrides were applied */

    dq_exp_strategy strategies[DQ_EXP_MAX_VARIANTS]; /* variants, in the
                                order of the strategies list, then of the
                                option values as written */
    size_t nstrategies;
    int producers[DQ_EXP_MAX_LIST];
    size_t nproducers;
    int consumers[DQ_EXP_MAX_LIST];
    size_t nconsumers;
    int64_t work_us[DQ_EXP_MAX_LIST];
    size_t nwork_us;

    int64_t tasks;
    int64_t delay_min_ms, delay_max_ms;
    int64_t payload_bytes;
    int64_t grace_ms;
    int repeats;
    uint64_t seed;

    int64_t backlog[DQ_EXP_MAX_LIST]; /* list (matrix dimension); {0} */
    size_t nbacklog;
    int64_t backlog_delay_ms;  /* 3600000 */
    int64_t idle_ms;           /* 0 unless tasks == 0 */
    int64_t claim_timeout_ms;  /* 100 */

    /* Faults (faults.h): list (matrix dimension), in the order written. */
    dq_fault faults[DQ_EXP_MAX_LIST]; /* kind DQ_FAULT_NONE for "none" */
    char fault_specs[DQ_EXP_MAX_LIST][64]; /* canonical (dq_fault_format),
                                "none" for no fault */
    size_t nfaults;            /* >= 1; {none} when the key is absent */
    bool faults_given;         /* the file has a faults key */
    bool consumer_process;     /* consumer_mode = process */

    /* Added for the performance issue. */
    int64_t enqueue_batch;     /* enqueue_batch: tasks per enqueue call,
                                  1..DQ_TRIAL_MAX_ENQUEUE_BATCH (1) */
} dq_experiment;

/* Loads the experiment at path into *e (caller-owned storage; nothing
 * inside is heap-allocated, so there is no free).  With quick, the keys of
 * [quick] replace the ones of [experiment].  Returns 0, or -1 with
 * "path:line: message" in err (errlen bytes), or "path: strerror" when
 * the file cannot be opened.  The file is parsed and validated in full either way,
 * so a bad [quick] section fails without --quick too. */
int dq_experiment_load(const char *path, bool quick, dq_experiment *e,
                       char *err, size_t errlen);

/* Frees nothing today; kept so callers need not change if the struct ever
 * owns memory.  NULL is fine. */
void dq_experiment_free(dq_experiment *e);

/* Number of trials the matrix holds (strategy variants x faults that
 * apply to the variant's strategy x producers x consumers x work_us x
 * backlog x repeats). */
size_t dq_experiment_ntrials(const dq_experiment *e);

/* True when fault f (NULL or DQ_FAULT_NONE: no fault, always true)
 * applies to strategy s, by faults.h dq_fault_applies (restart-redis,
 * pause-redis and mover-stall need a strategy that uses Redis; mover-stall
 * also one whose consumers block).  A fault that does not apply is
 * skipped for that strategy, not run and not an error. */
bool dq_experiment_fault_applies(const dq_strategy *s, const dq_fault *f);

/* One cell of the matrix, by trial index 0..ntrials-1, in the order the
 * runner uses (strategy variant outermost, then fault, producers,
 * consumers, work_us, backlog, repeat innermost; faults that do not apply
 * to the strategy are skipped). */
typedef struct dq_exp_cell {
    const dq_exp_strategy *strategy;
    int producers;
    int consumers;
    int64_t work_us;
    int repeat;              /* 1..repeats */
    int64_t backlog;
    const dq_fault *fault;   /* into e->faults; kind DQ_FAULT_NONE: none */
    const char *fault_spec;  /* into e->fault_specs: "none" or the spec */
} dq_exp_cell;

void dq_experiment_cell(const dq_experiment *e, size_t index, dq_exp_cell *c);

/* Copies in to out (outlen bytes, always NUL-terminated, cut short when it
 * does not fit) with the userinfo (user and password, up to the last '@'
 * before the next blank) of every redis:// or rediss:// URL in it replaced
 * by "***" (so "redis://alice:s3cret@h:1/3" becomes "redis:" "//" "***@h:1/3").  For
 * command lines and messages that are stored or printed. */
void dq_redact_redis_urls(const char *in, char *out, size_t outlen);

/* The command line recorded in meta.txt: "bin/dqlab" and argv[0..argc-1]
 * ("experiment", FILE, ...) joined by blanks, redacted as above, into buf
 * (len bytes). */
void dq_experiment_command_line(int argc, char **argv, char *buf,
                                size_t len);

#endif
