/* test_options.c -- declarative option validation: dq_opts_check() and the
 * check dq_open runs before a strategy's open.
 *
 * Why: a bad option (lua batch=0, poll_ms=abc, clock=moon) must be found
 * before dqlab starts a private redis-server or an experiment, with one
 * line naming the strategy, the option and the value.  Every strategy's
 * option table (dq_optdef with type, range or choices) is the single source
 * of truth, so these tests walk every registered strategy and every option
 * it declares rather than naming them: a new strategy or option is covered
 * as soon as it is registered.
 *
 * No Redis is needed: dq_opts_check never connects, and the dq_open test
 * uses a port nothing listens on to show that validation comes first.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../strategies/dq.h"

/* One option key=val. */
static dq_opt opt(const char *key, const char *val)
{
    dq_opt o;

    memset(&o, 0, sizeof o);
    snprintf(o.key, sizeof o.key, "%s", key);
    snprintf(o.val, sizeof o.val, "%s", val);
    return o;
}

/* Asserts that key=val is rejected for s with DQ_EINVAL and a message
 * that names the strategy and "key=val". */
static void expect_bad(const dq_strategy *s, const char *key, const char *val)
{
    dq_opt o = opt(key, val);
    char err[256] = "", want_s[80], want_kv[160];
    int rc = dq_opts_check(s, &o, 1, err, sizeof err);

    cr_assert_eq(rc, DQ_EINVAL, "%s: %s=%s accepted (rc %d)", s->name, key,
                 val, rc);
    snprintf(want_s, sizeof want_s, "strategy '%s'", s->name);
    snprintf(want_kv, sizeof want_kv, "option %s=%s:", key, val);
    cr_assert(strstr(err, want_s) != NULL, "%s: message lacks %s: %s",
              s->name, want_s, err);
    cr_assert(strstr(err, want_kv) != NULL, "%s: message lacks '%s': %s",
              s->name, want_kv, err);
    cr_assert(strchr(err, '\n') == NULL, "message is not one line: %s", err);
}

static void expect_ok(const dq_strategy *s, const char *key, const char *val)
{
    dq_opt o = opt(key, val);
    char err[256] = "";
    int rc = dq_opts_check(s, &o, 1, err, sizeof err);

    cr_assert_eq(rc, DQ_OK, "%s: %s=%s rejected: %s", s->name, key, val, err);
}

Test(options, every_option_declares_a_type)
{
    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];

        const dq_optdef *d; /* its own options, then the common ones */
        for (size_t k = 0; (d = dq_strategy_option(s, k)) != NULL; k++) {
            cr_assert_neq(d->type, DQ_OPT_UNCHECKED,
                          "%s: option %s has no type (use DQ_OPTDEF_INT or "
                          "DQ_OPTDEF_CHOICE)", s->name, d->name);
            cr_assert_not_null(d->def, "%s: option %s has no default",
                               s->name, d->name);
            cr_assert_not_null(d->help, "%s: option %s has no help",
                               s->name, d->name);
            if (d->type == DQ_OPT_INT)
                cr_assert_leq(d->min, d->max, "%s: option %s: min > max",
                              s->name, d->name);
            else
                cr_assert(d->choices && d->choices[0], "%s: option %s: no "
                          "choices", s->name, d->name);
        }
    }
}

Test(options, defaults_pass)
{
    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];
        char err[256] = "";

        cr_assert_eq(dq_opts_check(s, NULL, 0, err, sizeof err), DQ_OK,
                     "%s: defaults rejected: %s", s->name, err);
        /* Each default given explicitly passes too. */
        const dq_optdef *d; /* its own options, then the common ones */
        for (size_t k = 0; (d = dq_strategy_option(s, k)) != NULL; k++)
            expect_ok(s, d->name, d->def);
    }
}

Test(options, integer_bounds_and_non_numeric)
{
    size_t nint = 0;

    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];

        const dq_optdef *d; /* its own options, then the common ones */
        for (size_t k = 0; (d = dq_strategy_option(s, k)) != NULL; k++) {
            char v[32];

            if (d->type != DQ_OPT_INT)
                continue;
            nint++;
            snprintf(v, sizeof v, "%lld", (long long)d->min);
            expect_ok(s, d->name, v);
            snprintf(v, sizeof v, "%lld", (long long)d->max);
            expect_ok(s, d->name, v);
            snprintf(v, sizeof v, "%lld", (long long)d->min - 1);
            expect_bad(s, d->name, v);
            snprintf(v, sizeof v, "%lld", (long long)d->max + 1);
            expect_bad(s, d->name, v);
            expect_bad(s, d->name, "abc");
            expect_bad(s, d->name, "12abc");
            expect_bad(s, d->name, "1.5");
            expect_bad(s, d->name, " 1");
            expect_bad(s, d->name, "99999999999999999999999");
        }
    }
    cr_assert_gt(nint, 0, "no integer option in any strategy");
}

Test(options, choices)
{
    size_t nchoice = 0;

    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];

        const dq_optdef *d; /* its own options, then the common ones */
        for (size_t k = 0; (d = dq_strategy_option(s, k)) != NULL; k++) {
            char words[96], *save = NULL;

            if (d->type != DQ_OPT_CHOICE)
                continue;
            nchoice++;
            snprintf(words, sizeof words, "%s", d->choices);
            for (char *w = strtok_r(words, "|", &save); w != NULL;
                 w = strtok_r(NULL, "|", &save)) {
                char longer[100];

                expect_ok(s, d->name, w);
                snprintf(longer, sizeof longer, "%sx", w);
                expect_bad(s, d->name, longer);
                if (strlen(w) > 1) {
                    char prefix[96];
                    snprintf(prefix, sizeof prefix, "%.*s",
                             (int)strlen(w) - 1, w);
                    expect_bad(s, d->name, prefix);
                }
            }
            expect_bad(s, d->name, "moon");
            expect_bad(s, d->name, d->choices); /* "client|server" itself */
        }
    }
    cr_assert_gt(nchoice, 0, "no choice option in any strategy");
}

/* The options every Redis strategy takes (dq_redis_options) are declared
 * once: each Redis strategy accepts them, none declares one of them
 * itself (it would be listed twice), and a strategy without Redis
 * refuses them. */
Test(options, common_redis_options)
{
    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];
        bool redis = (s->flags & DQ_G_NEEDS_REDIS) != 0;

        for (const dq_optdef *c = dq_redis_options; c->name; c++) {
            dq_opt o = opt(c->name, c->def);
            char err[256] = "";

            for (const dq_optdef *d = s->options; d && d->name; d++)
                cr_assert(strcmp(d->name, c->name) != 0, "%s declares the "
                          "common option %s itself", s->name, c->name);
            cr_assert_eq(dq_opts_check(s, &o, 1, err, sizeof err),
                         redis ? DQ_OK : DQ_EINVAL, "%s: %s=%s: %s", s->name,
                         c->name, c->def, err);
        }
    }
    cr_assert_str_eq(dq_redis_options[0].name, "wait");
}

Test(options, unknown_key_named)
{
    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];
        dq_opt o = opt("no_such_option", "1");
        char err[256] = "";

        cr_assert_eq(dq_opts_check(s, &o, 1, err, sizeof err), DQ_EINVAL,
                     "%s: unknown key accepted", s->name);
        cr_assert(strstr(err, "'no_such_option'") != NULL,
                  "%s: message does not name the key: %s", s->name, err);
        cr_assert(strstr(err, s->name) != NULL,
                  "%s: message does not name the strategy: %s", s->name, err);
    }
}

Test(options, exact_messages)
{
    const dq_strategy *lua = dq_strategy_find("lua");
    dq_opt o;
    char err[256];

    cr_assert_not_null(lua);
    o = opt("batch", "0");
    cr_assert_eq(dq_opts_check(lua, &o, 1, err, sizeof err), DQ_EINVAL);
    cr_assert_str_eq(err, "strategy 'lua': option batch=0: expected an "
                          "integer in [1, 1000]");
    o = opt("clock", "moon");
    cr_assert_eq(dq_opts_check(lua, &o, 1, err, sizeof err), DQ_EINVAL);
    cr_assert_str_eq(err, "strategy 'lua': option clock=moon: expected one "
                          "of client|server");
    o = opt("poll_ms", "abc");
    cr_assert_eq(dq_opts_check(lua, &o, 1, err, sizeof err), DQ_EINVAL);
    cr_assert_str_eq(err, "strategy 'lua': option poll_ms=abc: expected an "
                          "integer in [1, 60000]");
    /* err may be NULL. */
    cr_assert_eq(dq_opts_check(lua, &o, 1, NULL, 0), DQ_EINVAL);
}

Test(options, last_given_wins)
{
    const dq_strategy *lua = dq_strategy_find("lua");
    dq_opt o[2] = {opt("batch", "0"), opt("batch", "5")};
    char err[256] = "";

    cr_assert_eq(dq_opts_check(lua, o, 2, err, sizeof err), DQ_OK,
                 "a later valid value should win: %s", err);
    o[0] = opt("batch", "5");
    o[1] = opt("batch", "0");
    cr_assert_eq(dq_opts_check(lua, o, 2, err, sizeof err), DQ_EINVAL);
    cr_assert(strstr(err, "batch=0") != NULL, "%s", err);
}

Test(options, bad_arguments)
{
    char err[256] = "";

    cr_assert_eq(dq_opts_check(NULL, NULL, 0, err, sizeof err), DQ_EINVAL);
    cr_assert_eq(dq_opts_check(dq_strategy_find("lua"), NULL, 1, err,
                               sizeof err), DQ_EINVAL);
}

/* dq_open validates before the strategy's open runs: a bad value is
 * DQ_EINVAL naming the option, never a connection error, even though
 * nothing listens on the port. */
Test(options, dq_open_checks_before_connecting)
{
    for (size_t i = 0; dq_strategies[i] != NULL; i++) {
        const dq_strategy *s = dq_strategies[i];
        const dq_optdef *d = s->options;
        dq_config cfg;
        dq_queue *q = NULL;
        dq_opt o;
        char err[256] = "";

        if (d == NULL || d->name == NULL)
            continue;
        o = opt(d->name, d->type == DQ_OPT_INT ? "not-a-number" : "moon");
        memset(&cfg, 0, sizeof cfg);
        cfg.queue = "t-options";
        cfg.redis_host = "127.0.0.1";
        cfg.redis_port = 1; /* nothing listens: open would fail with EIO */
        cfg.opts = &o;
        cfg.nopts = 1;
        cr_assert_eq(dq_open(s, &cfg, &q, err, sizeof err), DQ_EINVAL,
                     "%s: dq_open with %s=%s: %s", s->name, o.key, o.val,
                     err);
        cr_assert_null(q);
        cr_assert(strstr(err, d->name) != NULL, "%s: %s", s->name, err);
    }
}
