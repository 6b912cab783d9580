/* test_experiment.c -- experiment-file parsing (harness/experiment.c).
 *
 * A valid file loads with every field and the [quick] overrides; each kind
 * of bad file is rejected with "FILE:LINE: message" naming the right line.
 * The files are written from the test into a private mkdtemp() directory,
 * so the tests run in parallel and need no Redis.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "../harness/experiment.h"
#include "../harness/plots.h"
#include "../harness/runmeta.h"

/* Writes text to a new file in a fresh temp dir; returns its path
 * (malloc'd).  remove_tmp() deletes the file and the directory. */
static char *write_tmp(const char *text)
{
    char dir[] = "/tmp/dqlab-exp-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *path = NULL;
    cr_assert(asprintf(&path, "%s/x.ini", dir) > 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Removes write_tmp()'s file and its directory, and frees path. */
static void remove_tmp(char *path)
{
    unlink(path);
    char *slash = strrchr(path, '/');
    if (slash != NULL) {
        *slash = '\0';
        rmdir(path);
    }
    free(path);
}

/* Loads text and expects failure at `line` with `needle` in the message. */
static void expect_error(const char *text, bool quick, int line,
                         const char *needle)
{
    char *path = write_tmp(text);
    dq_experiment e;
    char err[1024] = "";
    int rc = dq_experiment_load(path, quick, &e, err, sizeof err);
    cr_assert_eq(rc, -1, "expected an error for:\n%s", text);
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
    cr_assert(strncmp(err, prefix, strlen(prefix)) == 0,
              "message '%s' does not start with '%s'", err, prefix);
    cr_assert(strstr(err, needle) != NULL,
              "message '%s' does not contain '%s'", err, needle);
    remove_tmp(path);
}

static const char *valid =
    "; a comment\n"
    "[experiment]\n"
    "name = conc-1\n"
    "title = Concurrency\n"
    "description = first part\n"
    "  second part\n"
    "claims = C01 C02\n"
    "strategies = naive, lua , heap\n"
    "consumers = 1, 2 4,8\n"
    "producers = 1\n"
    "tasks = 2000\n"
    "delay_ms = 0:200   ; inline comment\n"
    "work_us = 200\n"
    "repeats = 3\n"
    "seed = 42\n"
    "[quick]\n"
    "tasks = 400\n"
    "consumers = 1, 2\n"
    "[opts.naive]\n"
    "poll_ms = 10\n";

Test(experiment, valid_file)
{
    char *path = write_tmp(valid);
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_str_eq(e.name, "conc-1");
    cr_assert_str_eq(e.title, "Concurrency");
    cr_assert_str_eq(e.description, "first part second part");
    cr_assert_eq(e.nclaims, 2);
    cr_assert_str_eq(e.claims[1], "C02");
    cr_assert_eq(e.nstrategies, 3);
    cr_assert_str_eq(e.strategies[0].s->name, "naive");
    cr_assert_str_eq(e.strategies[2].s->name, "heap");
    cr_assert_eq(e.strategies[0].nopts, 1);
    cr_assert_str_eq(e.strategies[0].opts[0].key, "poll_ms");
    cr_assert_str_eq(e.strategies[0].opts[0].val, "10");
    cr_assert_eq(e.strategies[1].nopts, 0);
    cr_assert_eq(dq_experiment_list(&e, "consumers")->n, 4);
    cr_assert_eq(dq_experiment_list(&e, "consumers")->v[3], 8);
    cr_assert_eq(e.params.tasks, 2000);
    cr_assert_eq(e.params.delay_min_ms, 0);
    cr_assert_eq(e.params.delay_max_ms, 200);
    cr_assert_eq(dq_experiment_list(&e, "work_us")->v[0], 200);
    cr_assert_eq(e.repeats, 3);
    cr_assert_eq(e.params.seed, 42);
    cr_assert_eq(e.params.grace_ms, 2000); /* default */
    cr_assert_not(e.quick);
    cr_assert_eq(dq_experiment_ntrials(&e), 3 * 4 * 3);

    /* The matrix order: strategy outermost, repeat innermost. */
    dq_exp_cell c;
    dq_experiment_cell(&e, 0, &c);
    cr_assert_str_eq(c.strategy->s->name, "naive");
    cr_assert_eq(c.params.consumers, 1);
    cr_assert_eq(c.repeat, 1);
    dq_experiment_cell(&e, 4, &c);
    cr_assert_eq(c.params.consumers, 2);
    cr_assert_eq(c.repeat, 2);
    dq_experiment_cell(&e, 35, &c);
    cr_assert_str_eq(c.strategy->s->name, "heap");
    cr_assert_eq(c.params.consumers, 8);
    cr_assert_eq(c.repeat, 3);

    cr_assert_eq(dq_experiment_load(path, true, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert(e.quick);
    cr_assert_eq(e.params.tasks, 400);
    cr_assert_eq(dq_experiment_list(&e, "consumers")->n, 2);
    cr_assert_eq(e.repeats, 3); /* not overridden */
    cr_assert_eq(dq_experiment_ntrials(&e), 3 * 2 * 3);
    remove_tmp(path);
}

Test(experiment, the_shipped_concurrency_file_loads)
{
    dq_experiment e;
    char err[1024] = "";
    /* Tests run from the repository root (tests/run.sh). */
    if (access("experiments/concurrency.ini", R_OK) != 0)
        cr_skip_test("experiments/concurrency.ini not found from cwd");
    cr_assert_eq(dq_experiment_load("experiments/concurrency.ini", true, &e,
                                    err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(e.name, "concurrency");
    cr_assert(dq_experiment_ntrials(&e) > 0);
}

Test(experiment, unknown_key)
{
    expect_error("[experiment]\nname = x\nstrategies = heap\nconsumers = 1\n"
                 "colour = blue\n", false, 5, "unknown key 'colour'");
}

Test(experiment, unknown_section)
{
    expect_error("[experiment]\nname = x\n[extra]\n", false, 3,
                 "unknown section [extra]");
}

Test(experiment, unknown_strategy)
{
    expect_error("[experiment]\nname = x\nstrategies = naive, nosuch\n",
                 false, 3, "unknown strategy 'nosuch'");
}

Test(experiment, unknown_strategy_in_opts_section)
{
    expect_error("[experiment]\nname = x\n\n[opts.nosuch]\npoll_ms = 1\n",
                 false, 4, "unknown strategy 'nosuch'");
}

Test(experiment, unknown_strategy_option)
{
    expect_error("[experiment]\nname = x\n[opts.heap]\nturbo = 1\n", false, 4,
                 "heap has no option 'turbo'");
}

/* An [opts.NAME] of a strategy no list runs would be ignored unseen. */
Test(experiment, opts_of_a_strategy_not_listed_is_refused)
{
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "\n[opts.heap]\nbatch = 1\n", false, 6,
                 "[opts.heap]: heap is not in strategies");
}

/* ... but a strategy of the [quick] list counts. */
Test(experiment, opts_of_a_strategy_listed_in_quick_is_accepted)
{
    char *path = write_tmp("[experiment]\nname = x\nstrategies = lua\n"
                           "consumers = 1\n[quick]\nstrategies = heap\n"
                           "[opts.heap]\nbatch = 2\n");
    dq_experiment e;
    char err[1024] = "";

    cr_assert_eq(dq_experiment_load(path, true, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_str_eq(e.strategies[0].s->name, "heap");
    cr_assert_str_eq(e.strategies[0].opts[0].val, "2");
    dq_experiment_free(&e);
    remove_tmp(path);
}

/* The options every Redis strategy takes (wait, wait_timeout_ms) are
 * options of [opts.NAME] too, checked as --opt checks them. */
Test(experiment, common_redis_options_in_an_opts_section)
{
    char *path = write_tmp("[experiment]\nname = x\nstrategies = lua\n"
                           "consumers = 1\n[opts.lua]\nwait = 0\n"
                           "wait_timeout_ms = 500\n");
    dq_experiment e;
    char err[1024] = "";

    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(e.strategies[0].nopts, 2);
    cr_assert_str_eq(e.strategies[0].opts[0].key, "wait");
    cr_assert_str_eq(e.strategies[0].opts[1].val, "500");
    dq_experiment_free(&e);
    remove_tmp(path);
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "[opts.lua]\nwait = -1\n", false, 6, "wait");
}

Test(experiment, bad_number)
{
    expect_error("[experiment]\nname = x\nstrategies = heap\n"
                 "consumers = 1, two, 4\n", false, 4, "consumers");
    expect_error("[experiment]\nname = x\ntasks = 12x\n", false, 3,
                 "'12x' is not an integer");
    expect_error("[experiment]\nname = x\nrepeats = 0\n", false, 3,
                 "out of range");
}

Test(experiment, min_greater_than_max)
{
    expect_error("[experiment]\nname = x\nstrategies = heap\n"
                 "consumers = 1\ndelay_ms = 300:200\n", false, 5, "delay_ms");
}

Test(experiment, empty_list)
{
    expect_error("[experiment]\nname = x\nstrategies = heap\nconsumers =\n",
                 false, 4, "consumers: empty list");
    expect_error("[experiment]\nname = x\nstrategies = ,\n", false, 3,
                 "strategies: empty list");
}

Test(experiment, missing_name)
{
    expect_error("# no name\n[experiment]\nstrategies = heap\nconsumers = 1\n",
                 false, 2, "has no name");
}

Test(experiment, missing_experiment_section)
{
    expect_error("[quick]\ntasks = 1\n", false, 1, "no [experiment] section");
}

Test(experiment, bad_quick_section_fails_without_quick)
{
    expect_error("[experiment]\nname = x\nstrategies = heap\nconsumers = 1\n"
                 "[quick]\nname = y\n", false, 6,
                 "name cannot be overridden");
}

Test(experiment, syntax_error)
{
    expect_error("[experiment]\nname = x\nthis line has no equals sign\n",
                 false, 3, "syntax error");
}

Test(experiment, missing_file)
{
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load("/nonexistent/x.ini", false, &e, err,
                                    sizeof err), -1);
    cr_assert_str_eq(err, "/nonexistent/x.ini: No such file or directory");
}

/* ---- Option lists, backlog, idle mode ---------------------------------- */

Test(experiment, option_list_makes_variants)
{
    char *path = write_tmp(
        "[experiment]\nname = v\nstrategies = naive, heap, lua\n"
        "consumers = 1, 2\nrepeats = 2\n"
        "[opts.naive]\npoll_ms = 10, 100 ,1000\ngap_us = 0,5\n"
        "[opts.lua]\npoll_ms = 50\nbatch = 1 , 4\n");
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    /* naive: 3 x 2 variants, heap 1, lua 2, in the order written (first
     * option outermost). */
    cr_assert_eq(e.nstrategies, 9);
    const char *want[6][2] = {{"10", "0"}, {"10", "5"}, {"100", "0"},
                              {"100", "5"}, {"1000", "0"}, {"1000", "5"}};
    for (int i = 0; i < 6; i++) {
        cr_assert_str_eq(e.strategies[i].s->name, "naive");
        cr_assert_eq(e.strategies[i].nopts, 2);
        cr_assert_str_eq(e.strategies[i].opts[0].key, "poll_ms");
        cr_assert_str_eq(e.strategies[i].opts[0].val, want[i][0]);
        cr_assert_str_eq(e.strategies[i].opts[1].key, "gap_us");
        cr_assert_str_eq(e.strategies[i].opts[1].val, want[i][1]);
    }
    cr_assert_str_eq(e.strategies[6].s->name, "heap");
    cr_assert_eq(e.strategies[6].nopts, 0);
    cr_assert_str_eq(e.strategies[7].s->name, "lua");
    cr_assert_str_eq(e.strategies[7].opts[0].val, "50");
    cr_assert_str_eq(e.strategies[7].opts[1].val, "1");
    cr_assert_str_eq(e.strategies[8].opts[1].val, "4");
    cr_assert_eq(dq_experiment_ntrials(&e), 9 * 2 * 2);
    dq_exp_cell c;
    dq_experiment_cell(&e, 4, &c); /* variant 1, consumers 1, repeat 1 */
    cr_assert_eq(c.strategy, &e.strategies[1]);
    cr_assert_eq(c.params.consumers, 1);
    cr_assert_eq(c.repeat, 1);
    remove_tmp(path);
}

Test(experiment, option_list_errors)
{
    expect_error("[experiment]\nname = x\nstrategies = naive\n"
                 "consumers = 1\n[opts.naive]\npoll_ms = 10,,100\n", false, 6,
                 "empty item");
    expect_error("[experiment]\nname = x\nstrategies = naive\n"
                 "consumers = 1\n[opts.naive]\npoll_ms = 10,\n", false, 6,
                 "empty item");
    /* 9 x 9 = 81 variants of one strategy: more than 64. */
    expect_error("[experiment]\nname = x\nstrategies = naive\n"
                 "consumers = 1\n[opts.naive]\n"
                 "poll_ms = 1,2,3,4,5,6,7,8,9\ngap_us = 1,2,3,4,5,6,7,8,9\n",
                 false, 1, "strategy variants");
}

Test(experiment, backlog_dimension_and_defaults)
{
    char *path = write_tmp(
        "[experiment]\nname = b\nstrategies = expiry, lua\nconsumers = 2\n"
        "tasks = 200\nbacklog = 1000, 10000 100000\n"
        "backlog_delay_ms = 60000\nclaim_timeout_ms = 250\n"
        "[quick]\nbacklog = 1000\n");
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(dq_experiment_list(&e, "backlog")->n, 3);
    cr_assert_eq(dq_experiment_list(&e, "backlog")->v[2], 100000);
    cr_assert_eq(e.params.backlog_delay_ms, 60000);
    cr_assert_eq(e.params.claim_timeout_ms, 250);
    cr_assert_eq(e.params.idle_ms, 0);
    cr_assert_eq(dq_experiment_ntrials(&e), 2 * 3);
    dq_exp_cell c;
    dq_experiment_cell(&e, 0, &c);
    cr_assert_eq(c.params.backlog, 1000);
    dq_experiment_cell(&e, 2, &c);
    cr_assert_eq(c.params.backlog, 100000);
    cr_assert_str_eq(c.strategy->s->name, "expiry");
    dq_experiment_cell(&e, 3, &c);
    cr_assert_eq(c.params.backlog, 1000);
    cr_assert_str_eq(c.strategy->s->name, "lua");
    cr_assert_eq(dq_experiment_load(path, true, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(dq_experiment_list(&e, "backlog")->n, 1);
    cr_assert_eq(dq_experiment_ntrials(&e), 2);
    remove_tmp(path);

    /* Defaults when not given. */
    path = write_tmp("[experiment]\nname = d\nstrategies = heap\n"
                     "consumers = 1\n");
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(dq_experiment_list(&e, "backlog")->n, 1);
    cr_assert_eq(dq_experiment_list(&e, "backlog")->v[0], 0);
    cr_assert_eq(e.params.backlog_delay_ms, 3600000);
    cr_assert_eq(e.params.claim_timeout_ms, 100);
    cr_assert_eq(e.params.idle_ms, 0);
    remove_tmp(path);
}

/* Every plot kind may be listed in one experiment (the loader's limit is
 * the number of kinds, harness/plots.h). */
Test(experiment, every_plot_kind_at_once)
{
    char ini[1024] = "[experiment]\nname = p\nstrategies = heap\n"
                     "consumers = 1\nplots = ";
#define DQ_T_PLOT(id, name) name ", "
    const char *kinds = DQ_PLOT_KINDS(DQ_T_PLOT);
#undef DQ_T_PLOT
    /* The list without its last ", ". */
    snprintf(ini + strlen(ini), sizeof ini - strlen(ini), "%.*s\n",
             (int)strlen(kinds) - 2, kinds);
    char *path = write_tmp(ini);
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(e.nplots, (size_t)DQ_NPLOTS);
    remove_tmp(path);
}

Test(experiment, idle_mode)
{
    char *path = write_tmp(
        "[experiment]\nname = i\nstrategies = naive, list\nconsumers = 4\n"
        "tasks = 0\nidle_ms = 5000\nplots = idle-cost\n"
        "[quick]\nidle_ms = 2000\n");
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(e.params.tasks, 0);
    cr_assert_eq(e.params.idle_ms, 5000);
    cr_assert_str_eq(e.plots[0], "idle-cost");
    cr_assert_eq(dq_experiment_load(path, true, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(e.params.idle_ms, 2000);
    remove_tmp(path);

    /* tasks = 0 without idle_ms, in [experiment] or through [quick]. */
    expect_error("[experiment]\nname = x\nstrategies = heap\nconsumers = 1\n"
                 "tasks = 0\n", false, 1, "needs idle_ms");
    expect_error("[experiment]\nname = x\nstrategies = heap\nconsumers = 1\n"
                 "[quick]\ntasks = 0\n", false, 1, "in [quick]");
    expect_error("[experiment]\nname = x\nidle_ms = 0\n", false, 3,
                 "out of range");
    expect_error("[experiment]\nname = x\nbacklog = 10, -1\n", false, 3,
                 "backlog");
    expect_error("[experiment]\nname = x\nplots = idle-cost, pie\n", false, 3,
                 "unknown plot 'pie'");
    expect_error("[experiment]\nname = x\nplots = loss, pie\n", false, 3,
                 "unknown plot 'pie'");
}

Test(experiment, the_shipped_files_load)
{
    static const char *const files[] = {
        "experiments/concurrency.ini", "experiments/lateness.ini",
        "experiments/idle.ini", "experiments/expiry-scale.ini"};
    if (access(files[0], R_OK) != 0)
        cr_skip_test("experiments/ not found from cwd");
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        for (int q = 0; q < 2; q++) {
            dq_experiment e;
            char err[1024] = "";
            cr_assert_eq(dq_experiment_load(files[i], q, &e, err, sizeof err),
                         0, "%s", err);
            cr_assert(dq_experiment_ntrials(&e) > 0, "%s", files[i]);
        }
    /* The loss experiment (faults issue), once it is in place. */
    if (access("experiments/loss.ini", R_OK) == 0)
        for (int q = 0; q < 2; q++) {
            dq_experiment e;
            char err[1024] = "";
            cr_assert_eq(dq_experiment_load("experiments/loss.ini", q, &e,
                                            err, sizeof err), 0, "%s", err);
            cr_assert(e.faults_given);
            cr_assert(dq_experiment_ntrials(&e) > 0);
        }
}

/* ---- Option values, command line ---------------------------------------- */

Test(experiment, bad_option_value_fails_at_load)
{
    /* poll_ms is an integer in [1, 60000] (dq_opts_check): 0 fails at its
     * line, in a list too, and in a section of a strategy not listed. */
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "[opts.lua]\npoll_ms = 0\n", false, 6, "poll_ms");
    expect_error("[experiment]\nname = x\nstrategies = naive\n"
                 "consumers = 1\n[opts.naive]\ngap_us = 5\n"
                 "poll_ms = 10, 100, 0\n", false, 7, "poll_ms=0");
    expect_error("[experiment]\nname = x\nstrategies = naive\n"
                 "consumers = 1\n[opts.lua]\nclock = moon\n", false, 6,
                 "clock");
    /* Good values, also in a list with blanks, still load. */
    char *path = write_tmp("[experiment]\nname = x\nstrategies = lua\n"
                           "consumers = 1\n[opts.lua]\n"
                           "poll_ms = 1 , 60000\nclock = server\n");
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(e.nstrategies, 2);
    remove_tmp(path);
}

Test(experiment, redis_password_is_redacted)
{
    char out[256];
    dq_redact_redis_urls("--redis redis://:s3cret@127.0.0.1:6390/3 x", out,
                         sizeof out);
    cr_assert_str_eq(out, "--redis redis://***@127.0.0.1:6390/3 x");
    /* The whole userinfo: with an unescaped ':' in a password, what looks
     * like the user name ("alice", "pa") is a piece of it. */
    dq_redact_redis_urls("redis://alice:p@ss/w@h:1 rediss://bob:x@h", out,
                         sizeof out);
    cr_assert_str_eq(out, "redis://***@h:1 rediss://***@h");
    dq_redact_redis_urls("redis://pa:ss@h/2", out, sizeof out);
    cr_assert_str_eq(out, "redis://***@h/2");
    dq_redact_redis_urls("redis://secret@h/0", out, sizeof out);
    cr_assert_str_eq(out, "redis://***@h/0");
    dq_redact_redis_urls("redis://127.0.0.1:6379/0 and redis://", out,
                         sizeof out);
    cr_assert_str_eq(out, "redis://127.0.0.1:6379/0 and redis://");
    dq_redact_redis_urls("redis://:s3cret@h", out, 12);
    cr_assert(strstr(out, "s3") == NULL, "%s", out);

    char *argv[] = {"experiment", "x.ini", "--redis",
                    "redis://:s3cret@127.0.0.1:6390/3", NULL};
    dq_runmeta_command_line(4, argv, out, sizeof out);
    cr_assert_str_eq(out, "bin/dqlab experiment x.ini --redis "
                          "redis://***@127.0.0.1:6390/3");
}

/* ---- Faults and consumer mode (faults issue) ----------------------------- */

Test(experiment, faults_dimension_skips_what_does_not_apply)
{
    /* restart-redis needs Redis: heap skips it, lua-lease runs it.  The
     * list goes on over an indented continuation line. */
    char *path = write_tmp(
        "[experiment]\nname = f\nstrategies = lua-lease, heap\n"
        "consumers = 2\ntasks = 100\nrepeats = 2\n"
        "faults = none, kill-consumer:after-claim:3,\n"
        "  restart-redis:everysec\n"
        "consumer_mode = thread\n"
        "[quick]\nfaults = kill-consumer:before-ack:1\n"
        "consumer_mode = process\n");
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert(e.faults_given);
    cr_assert_not(e.params.consumer_process);
    cr_assert_eq(e.nfaults, 3);
    cr_assert_null(e.faults[0].ops);
    cr_assert_str_eq(e.fault_specs[0], "none");
    cr_assert_str_eq(dq_fault_name(&e.faults[1]), "kill-consumer");
    cr_assert_str_eq(e.faults[1].word, "after-claim");
    cr_assert_eq(e.faults[1].count, 3);
    cr_assert_str_eq(e.fault_specs[1], "kill-consumer:after-claim:3");
    cr_assert_str_eq(dq_fault_name(&e.faults[2]), "restart-redis");
    cr_assert_str_eq(e.faults[2].word, "everysec");
    cr_assert_str_eq(e.fault_specs[2], "restart-redis:everysec");
    /* lua-lease x 3 faults x 2 repeats + heap x 2 faults x 2 repeats. */
    cr_assert_eq(dq_experiment_ntrials(&e), 3 * 2 + 2 * 2);

    /* Order: strategy, fault, ..., repeat innermost; heap has no
     * restart-redis cell. */
    const char *want[][2] = {
        {"lua-lease", "none"}, {"lua-lease", "none"},
        {"lua-lease", "kill-consumer:after-claim:3"},
        {"lua-lease", "kill-consumer:after-claim:3"},
        {"lua-lease", "restart-redis:everysec"},
        {"lua-lease", "restart-redis:everysec"},
        {"heap", "none"}, {"heap", "none"},
        {"heap", "kill-consumer:after-claim:3"},
        {"heap", "kill-consumer:after-claim:3"}};
    for (size_t i = 0; i < 10; i++) {
        dq_exp_cell c;
        dq_experiment_cell(&e, i, &c);
        cr_assert_str_eq(c.strategy->s->name, want[i][0], "cell %zu", i);
        cr_assert_str_eq(c.fault_spec, want[i][1], "cell %zu", i);
        cr_assert_str_eq(c.fault_spec, e.fault_specs[c.fault - e.faults]);
        cr_assert_eq(c.repeat, (int)(i % 2) + 1, "cell %zu", i);
    }
    cr_assert(dq_experiment_fault_applies(e.strategies[1].s, &e.faults[1]));
    cr_assert_not(dq_experiment_fault_applies(e.strategies[1].s,
                                              &e.faults[2]));
    cr_assert(dq_experiment_fault_applies(e.strategies[1].s, NULL));

    /* [quick] replaces the list and the mode. */
    cr_assert_eq(dq_experiment_load(path, true, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(e.nfaults, 1);
    cr_assert_str_eq(e.fault_specs[0], "kill-consumer:before-ack:1");
    cr_assert(e.params.consumer_process);
    cr_assert_eq(dq_experiment_ntrials(&e), 2 * 2);
    remove_tmp(path);

    /* Without the key: one "none" cell, thread mode. */
    path = write_tmp("[experiment]\nname = d\nstrategies = heap\n"
                     "consumers = 1\n");
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_not(e.faults_given);
    cr_assert_not(e.params.consumer_process);
    cr_assert_eq(e.nfaults, 1);
    cr_assert_str_eq(e.fault_specs[0], "none");
    dq_exp_cell c;
    dq_experiment_cell(&e, 0, &c);
    cr_assert_null(c.fault->ops);
    cr_assert_str_eq(c.fault_spec, "none");
    remove_tmp(path);
}

Test(experiment, fault_errors)
{
    /* A bad spec fails at its line with faults.h's message. */
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "faults = none, kill-consumer:sideways:1\n", false, 5,
                 "faults: ");
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "faults = none, explode\n", false, 5, "explode");
    /* On a continuation line: that line. */
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "faults = none,\n  restart-redis:sometimes\n", false, 6,
                 "faults: ");
    /* In [quick], also without --quick. */
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "[quick]\nfaults = pause-redis:abc\n", false, 6,
                 "faults: ");
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "faults = none, restart-redis:off, none\n", false, 5,
                 "faults: 'none' listed twice");
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "faults = kill-consumer:after-claim:1\n"
                 "faults = none\n", false, 6, "faults given twice");
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "consumer_mode = fork\n", false, 5, "thread or process");
    /* Faults need tasks (not idle mode). */
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "tasks = 0\nidle_ms = 100\nfaults = mover-stall\n", false, 1,
                 "need tasks");
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "consumer_mode = process\n[quick]\ntasks = 0\n"
                 "idle_ms = 100\n", false, 1, "in [quick]");
    /* Nothing left to run when no fault applies. */
    expect_error("[experiment]\nname = x\nstrategies = heap\nconsumers = 1\n"
                 "faults = restart-redis:off, pause-redis:100\n", false, 1,
                 "no trial to run");
}

/* enqueue_batch (performance issue): default 1, [quick] overrides it,
 * out-of-range and non-numeric values name the file, line and key. */
Test(experiment, enqueue_batch_key)
{
    char *path = write_tmp("[experiment]\nname = eb\nstrategies = lua\n"
                           "consumers = 1\nenqueue_batch = 64\n"
                           "[quick]\nenqueue_batch = 8\n");
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(e.params.enqueue_batch, 64);
    cr_assert_eq(dq_experiment_load(path, true, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(e.params.enqueue_batch, 8);
    remove_tmp(path);

    path = write_tmp("[experiment]\nname = d\nstrategies = heap\n"
                     "consumers = 1\n");
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(e.params.enqueue_batch, 1);
    remove_tmp(path);

    expect_error("[experiment]\nname = x\nstrategies = lua\n"
                 "enqueue_batch = 0\n", false, 4, "enqueue_batch");
    expect_error("[experiment]\nname = x\nstrategies = lua\n"
                 "enqueue_batch = 10001\n", false, 4, "out of range");
    expect_error("[experiment]\nname = x\nstrategies = lua\n"
                 "enqueue_batch = many\n", false, 4, "not an integer");
}

/* ---- Files that are not what they seem, and vague messages ------------- */

Test(experiment, a_directory_is_named_as_such)
{
    char dir[] = "/tmp/dqlab-exp-dir-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    dq_experiment e;
    char err[1024] = "";
    int rc = dq_experiment_load(dir, false, &e, err, sizeof err);
    rmdir(dir);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(err, "is a directory") != NULL, "%s", err);
    cr_assert(strstr(err, "no [experiment] section") == NULL, "%s", err);
    cr_assert(strncmp(err, dir, strlen(dir)) == 0, "%s", err);
}

Test(experiment, an_empty_file_says_so)
{
    expect_error("", false, 1, "no [experiment] section (the file is empty)");
}

Test(experiment, a_utf8_bom_is_skipped)
{
    char *path = write_tmp("\xef\xbb\xbf[experiment]\nname = bom\n"
                           "strategies = heap\nconsumers = 1\n");
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_str_eq(e.name, "bom");
    remove_tmp(path);
    /* Only at the start of line 1. */
    expect_error("[experiment]\n\xef\xbb\xbfname = x\n", false, 2,
                 "unknown key");
}

Test(experiment, an_indented_line_continues_the_key_above)
{
    /* After a one-value key: not "given twice", but what inih does. */
    expect_error("[experiment]\nname = x\nstrategies = heap\nconsumers = 1\n"
                 "tasks = 10\n  20\n", false, 6,
                 "tasks: this indented line continues tasks from line 5, but "
                 "only description and faults take continuation lines");
    /* An indented key is a continuation too, even after a comment. */
    expect_error("[experiment]\nname = x\nstrategies = heap\ntasks = 10\n"
                 "; note\n  consumers = 2\n", false, 6,
                 "continues tasks from line 4");
    expect_error("[experiment]\nname = x\nstrategies = heap\nconsumers = 1,\n"
                 "\t2\n", false, 5, "continues consumers from line 4");
    expect_error("[experiment]\nname = x\nstrategies = lua\nconsumers = 1\n"
                 "[opts.lua]\npoll_ms = 10\n  100\n", false, 7,
                 "[opts.lua]: poll_ms: this indented line continues poll_ms "
                 "from line 6");
    /* A new section starts afresh: its first key may be indented. */
    char *path = write_tmp("[experiment]\nname = x\n  description = a\n"
                           "    b\nstrategies = heap\nconsumers = 1\n"
                           "[quick]\n  tasks = 5\n");
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, true, &e, err, sizeof err), -1);
    cr_assert(strstr(err, ":3: name: this indented line continues name")
              != NULL, "%s", err);
    remove_tmp(path);
    path = write_tmp("[experiment]\nname = x\ndescription = a\n    b\n"
                     "strategies = heap\nconsumers = 1\n[quick]\n"
                     "  tasks = 5\n");
    cr_assert_eq(dq_experiment_load(path, true, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_str_eq(e.description, "a b");
    cr_assert_eq(e.params.tasks, 5);
    remove_tmp(path);
    /* A second description line that is not indented is given twice. */
    expect_error("[experiment]\nname = x\ndescription = a\ndescription = b\n",
                 false, 4, "description given twice");
}

Test(experiment, a_repeated_value_in_any_list_is_refused_alike)
{
    /* Each text follows "[experiment]\nname = x\n"; the repeat is on line
     * `line`. */
    static const struct {
        const char *text;
        int line;
        const char *msg;
    } cases[] = {
        {"strategies = heap\nconsumers = 1, 1\n", 4,
         "consumers: '1' listed twice"},
        {"strategies = heap\nconsumers = 1, 2, 01\n", 4,
         "consumers: '01' listed twice"},
        {"strategies = heap\nproducers = 2 2\n", 4,
         "producers: '2' listed twice"},
        {"strategies = heap\nwork_us = 0, 100, 100\n", 4,
         "work_us: '100' listed twice"},
        {"strategies = heap\nbacklog = 10, 10\n", 4,
         "backlog: '10' listed twice"},
        {"claims = C01 C01\n", 3, "claims: 'C01' listed twice"},
        {"plots = loss, loss\n", 3, "plots: 'loss' listed twice"},
        {"strategies = lua, lua\n", 3, "strategies: 'lua' listed twice"},
        {"faults = none, none\n", 3, "faults: 'none' listed twice"},
        {"strategies = lua\n[opts.lua]\npoll_ms = 10, 10\n", 5,
         "[opts.lua]: poll_ms: '10' listed twice"},
        {"strategies = lua\n[opts.lua]\nclock = server, server\n", 5,
         "[opts.lua]: clock: 'server' listed twice"},
        {"strategies = heap\n[quick]\nconsumers = 4, 4\n", 5,
         "consumers: '4' listed twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "[experiment]\nname = x\n%s",
                 cases[i].text);
        expect_error(text, false, cases[i].line, cases[i].msg);
    }
}

/* An empty item between commas is a typo, refused where it stands, never
 * read as the list without it. */
Test(experiment, an_empty_list_item_is_refused)
{
    static const struct {
        const char *text;
        int line;
        const char *msg;
    } cases[] = {
        {"strategies = heap\nconsumers = 2,,3\n", 4,
         "consumers: empty item in the list '2,,3'"},
        {"strategies = , heap\n", 3, "strategies: empty item in the list"},
        {"strategies = heap\nfaults = none, , kill-consumer:after-claim\n",
         4, "faults: empty item in the list"},
        {"strategies = lua\n[opts.lua]\npoll_ms = 10,,100\n", 5,
         "poll_ms: empty item in the list '10,,100'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "[experiment]\nname = x\n%s",
                 cases[i].text);
        expect_error(text, false, cases[i].line, cases[i].msg);
    }
}

Test(experiment, a_huge_matrix_is_refused_with_its_size)
{
    /* 16^4 x 550 repeats = 36,044,800 trials. */
    expect_error("[experiment]\nname = x\nstrategies = heap\n"
                 "producers = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
                 "consumers = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
                 "work_us = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
                 "backlog = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
                 "repeats = 550\n", false, 1,
                 "the matrix holds 36044800 trials (1 strategy variant and "
                 "fault cells x 16 producers x 16 consumers x 16 work_us x 16 "
                 "backlog x 550 repeats), more than the 10000 one run may "
                 "hold");
    /* The cap itself is allowed. */
    char *path = write_tmp("[experiment]\nname = x\nstrategies = heap\n"
                           "consumers = 1 2 3 4 5 6 7 8 9 10\n"
                           "repeats = 1000\n");
    dq_experiment e;
    char err[1024] = "";
    cr_assert_eq(dq_experiment_load(path, false, &e, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(dq_experiment_ntrials(&e), DQ_EXP_MAX_TRIALS);
    remove_tmp(path);
}
