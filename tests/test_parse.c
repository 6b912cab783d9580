/* test_parse.c -- strict number/range parsing (harness/parse.c) and the
 * --redis URL parser (harness/redis_url.c): negative, overflow, garbage,
 * MIN > MAX, user:password, db, bad port, and no part of the userinfo
 * (user or password, escaped or not) ever showing up in an error message
 * or the redacted form.  No Redis needed.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include <stdbool.h>

#include "../harness/params.h"
#include "../harness/parse.h"
#include "../harness/trialcols.h"
#include "../harness/redis_url.h"

Test(parse, i64_accepts)
{
    int64_t v;
    char err[256];

    cr_assert_eq(dq_parse_i64("--tasks", "42", 1, 100, &v, err, sizeof err), 0);
    cr_assert_eq(v, 42);
    cr_assert_eq(dq_parse_i64("--x", "-7", -10, 10, &v, err, sizeof err), 0);
    cr_assert_eq(v, -7);
    cr_assert_eq(dq_parse_i64("--x", "9223372036854775807", INT64_MIN,
                              INT64_MAX, &v, err, sizeof err), 0);
    cr_assert_eq(v, INT64_MAX);
}

static void i64_bad(const char *s, int64_t min, int64_t max, const char *what)
{
    int64_t v = 12345;
    char err[256] = "";

    cr_assert_eq(dq_parse_i64("--tasks", s, min, max, &v, err, sizeof err), -1,
                 "'%s' was accepted", s);
    cr_assert_eq(v, 12345, "output written on error");
    cr_assert(strncmp(err, "--tasks: ", 9) == 0, "no option name: %s", err);
    cr_assert(strstr(err, what) != NULL, "expected '%s' in '%s'", what, err);
}

Test(parse, i64_rejects)
{
    i64_bad("-5", 1, 100, "out of range");
    i64_bad("101", 1, 100, "out of range");
    i64_bad("99999999999999999999", 1, 100, "overflows");
    i64_bad("-99999999999999999999", INT64_MIN, INT64_MAX, "overflows");
    i64_bad("abc", 1, 100, "not an integer");
    i64_bad("12abc", 1, 100, "not an integer");
    i64_bad(" 12", 1, 100, "not an integer");
    i64_bad("+12", 1, 100, "not an integer");
    i64_bad("1.5", 1, 100, "not an integer");
    i64_bad("0x10", 1, 100, "not an integer");
    i64_bad("-", 1, 100, "not an integer");
    i64_bad("", 1, 100, "missing value");
    i64_bad(NULL, 1, 100, "missing value");
}

Test(parse, u64)
{
    uint64_t v = 0;
    char err[256];

    cr_assert_eq(dq_parse_u64("--seed", "18446744073709551615", &v, err,
                              sizeof err), 0);
    cr_assert_eq(v, UINT64_MAX);
    cr_assert_eq(dq_parse_u64("--seed", "18446744073709551616", &v, err,
                              sizeof err), -1);
    cr_assert(strstr(err, "overflows") != NULL, "%s", err);
    /* strtoull would turn this into 2^64-1. */
    cr_assert_eq(dq_parse_u64("--seed", "-1", &v, err, sizeof err), -1);
    cr_assert(strstr(err, "--seed: '-1' is negative") != NULL, "%s", err);
    cr_assert_eq(dq_parse_u64("--seed", "7x", &v, err, sizeof err), -1);
    cr_assert_eq(dq_parse_u64("--seed", "", &v, err, sizeof err), -1);
}

Test(parse, range)
{
    int64_t lo, hi;
    char err[256];

    cr_assert_eq(dq_parse_range("--delay-ms", "10:200", 0, 1000, &lo, &hi, err,
                                sizeof err), 0);
    cr_assert_eq(lo, 10);
    cr_assert_eq(hi, 200);
    cr_assert_eq(dq_parse_range("--delay-ms", "50", 0, 1000, &lo, &hi, err,
                                sizeof err), 0);
    cr_assert(lo == 50 && hi == 50);
    cr_assert_eq(dq_parse_range("--delay-ms", "7:7", 0, 1000, &lo, &hi, err,
                                sizeof err), 0);

    cr_assert_eq(dq_parse_range("--delay-ms", "50:10", 0, 1000, &lo, &hi, err,
                                sizeof err), -1);
    cr_assert_str_eq(err, "--delay-ms: MIN 50 > MAX 10 in '50:10'");
    cr_assert_eq(dq_parse_range("--delay-ms", "-1:10", 0, 1000, &lo, &hi, err,
                                sizeof err), -1);
    cr_assert(strstr(err, "--delay-ms MIN") != NULL, "%s", err);
    cr_assert_eq(dq_parse_range("--delay-ms", "1:", 0, 1000, &lo, &hi, err,
                                sizeof err), -1);
    cr_assert(strstr(err, "--delay-ms MAX") != NULL, "%s", err);
    cr_assert_eq(dq_parse_range("--delay-ms", ":5", 0, 1000, &lo, &hi, err,
                                sizeof err), -1);
    cr_assert_eq(dq_parse_range("--delay-ms", "1:2:3", 0, 1000, &lo, &hi, err,
                                sizeof err), -1);
    cr_assert_eq(dq_parse_range("--delay-ms", "1:99999999999999999999", 0,
                                1000, &lo, &hi, err, sizeof err), -1);
    cr_assert(strstr(err, "overflows") != NULL, "%s", err);
    cr_assert_eq(dq_parse_range("--delay-ms", "", 0, 1000, &lo, &hi, err,
                                sizeof err), -1);
}

Test(redis_url, plain)
{
    dq_redis_target t;
    char err[256], buf[512];

    cr_assert_eq(dq_redis_url_parse("redis://localhost", &t, err, sizeof err),
                 0, "%s", err);
    cr_assert_str_eq(t.host, "localhost");
    cr_assert_eq(t.port, 6379);
    cr_assert_eq(t.db, 0);
    cr_assert_str_eq(t.user, "");
    cr_assert_str_eq(t.password, "");
    cr_assert_eq(dq_redis_url_parse("redis://10.0.0.5:7000/4", &t, err,
                                    sizeof err), 0, "%s", err);
    cr_assert_str_eq(t.host, "10.0.0.5");
    cr_assert_eq(t.port, 7000);
    cr_assert_eq(t.db, 4);
    dq_redis_url_redacted(&t, buf, sizeof buf);
    cr_assert_str_eq(buf, "redis://10.0.0.5:7000/4");
    cr_assert_eq(dq_redis_url_parse("redis://[::1]:6380", &t, err, sizeof err),
                 0, "%s", err);
    cr_assert_str_eq(t.host, "::1");
    cr_assert_eq(t.port, 6380);
}

Test(redis_url, user_password)
{
    dq_redis_target t;
    char err[256], buf[512];

    cr_assert_eq(dq_redis_url_parse("redis://alice:Se%40cret@h:6390/2", &t,
                                    err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(t.user, "alice");
    cr_assert_str_eq(t.password, "Se@cret");
    cr_assert_str_eq(t.host, "h");
    cr_assert_eq(t.port, 6390);
    cr_assert_eq(t.db, 2);
    dq_redis_url_redacted(&t, buf, sizeof buf);
    cr_assert_str_eq(buf, "redis://***@h:6390/2");
    cr_assert(strstr(buf, "Se@cret") == NULL);
    cr_assert(strstr(buf, "alice") == NULL, "user name shown: %s", buf);

    /* Password only; an '@' inside the password is taken up to the last
     * '@' before the host. */
    cr_assert_eq(dq_redis_url_parse("redis://:p@ss@127.0.0.1:1", &t, err,
                                    sizeof err), 0, "%s", err);
    cr_assert_str_eq(t.user, "");
    cr_assert_str_eq(t.password, "p@ss");
    cr_assert_str_eq(t.host, "127.0.0.1");
}

/* Unescaped '/' and ':' in a password: the userinfo runs to the URL's last
 * '@', so neither is taken for the path or the port. */
Test(redis_url, unescaped_slash_and_colon_in_password)
{
    dq_redis_target t;
    char err[256] = "", buf[512];

    cr_assert_eq(dq_redis_url_parse("redis://:pa/ss:wd@h:6390/2", &t, err,
                                    sizeof err), 0, "%s", err);
    cr_assert_str_eq(t.user, "");
    cr_assert_str_eq(t.password, "pa/ss:wd");
    cr_assert_str_eq(t.host, "h");
    cr_assert_eq(t.port, 6390);
    cr_assert_eq(t.db, 2);
    cr_assert_eq(dq_redis_url_parse("redis://bob:a/b@c@[::1]/3", &t, err,
                                    sizeof err), 0, "%s", err);
    cr_assert_str_eq(t.user, "bob");
    cr_assert_str_eq(t.password, "a/b@c");
    cr_assert_str_eq(t.host, "::1");
    cr_assert_eq(t.db, 3);
    dq_redis_url_redacted(&t, buf, sizeof buf);
    cr_assert_str_eq(buf, "redis://***@[::1]:6379/3");
}

/* A URL whose userinfo holds "hunt", "er2" and "s3cr" in its pieces
 * (user, password, or text that looks like a port or path) is refused
 * for something after it, and the message quotes none of them. */
static void url_bad_secret(const char *url, const char *what)
{
    static const char *const pieces[] = {"hunt", "er2", "s3cr", NULL};
    dq_redis_target t;
    char err[256] = "";

    cr_assert_eq(dq_redis_url_parse(url, &t, err, sizeof err), -1,
                 "'%s' was accepted", url);
    cr_assert(strstr(err, what) != NULL, "expected '%s' in '%s'", what, err);
    for (size_t i = 0; pieces[i] != NULL; i++)
        cr_assert(strstr(err, pieces[i]) == NULL, "%s: '%s' quoted: %s", url,
                  pieces[i], err);
}

Test(redis_url, messages_quote_no_userinfo)
{
    url_bad_secret("redis://hunt:er2@h:99999", "port");
    url_bad_secret("redis://hunt:er2/s3cr@h:x", "port");
    url_bad_secret("redis://:hunt/er2@h:1/x", "db");
    url_bad_secret("redis://:hunt:er2/s3cr@h/abc", "db");
    /* Without '@' there is no userinfo, but a password typed without its
     * host looks like a port or a path: still not quoted. */
    url_bad_secret("redis://hunt:er2s3cr", "port");
    url_bad_secret("redis://h/hunter2s3cr", "db");
}

/* The URL is rejected and the message names what is wrong but never holds
 * the password "hunter2". */
static void url_bad(const char *url, const char *what)
{
    dq_redis_target t;
    char err[256] = "";

    cr_assert_eq(dq_redis_url_parse(url, &t, err, sizeof err), -1,
                 "'%s' was accepted", url);
    cr_assert(strstr(err, what) != NULL, "expected '%s' in '%s'", what, err);
    cr_assert(strstr(err, "hunter2") == NULL, "password leaked: %s", err);
    cr_assert(strncmp(err, "--redis", 7) == 0, "no option name: %s", err);
}

Test(redis_url, rejects)
{
    url_bad("http://h:1", "redis://");
    url_bad("", "missing value");
    url_bad("redis://:hunter2@h:99999", "port is not a number in 1..65535");
    url_bad("redis://:hunter2@h:0", "port is not a number");
    url_bad("redis://:hunter2@h:port", "port is not a number");
    url_bad("redis://:hunter2@h:-1", "port is not a number");
    url_bad("redis://:hunter2@h:", "port is not a number");
    url_bad("redis://:hunter2@h:6379/x", "db after '/' is not a number");
    url_bad("redis://:hunter2@h:6379/-1", "db after '/' is not a number");
    url_bad("redis://:hunter2@:6379", "missing host");
    url_bad("redis://u:hunter2%zz@h", "bad or too long password");
    url_bad("redis://hunter2@h", "user:password");
    url_bad("redis://u:@h", "empty password");
    url_bad("redis://:hunter2@[::1", "unterminated");
}

/* ---- The parameter table (harness/params.c) ---------------------------- */

#include "../harness/params.h"
#include "../harness/trial.h"

/* Every row's option is "--" and its key with '_' written '-', as
 * params.h promises (so `dqlab run --KEY` and `KEY =` in a file name one
 * parameter), and every default a row can take is written back as text
 * that parses to itself. */
Test(params, options_follow_keys_and_defaults_round_trip)
{
    char want[64], text[64], err[256];
    int64_t v, v2;
    size_t n = 0;

    for (const dq_param *d = dq_params; d->key != NULL; d++, n++) {
        snprintf(want, sizeof want, "--%s", d->key);
        for (char *p = want; *p; p++)
            if (*p == '_')
                *p = '-';
        cr_expect_str_eq(d->flag, want, "row %s", d->key);
        cr_expect_eq(dq_param_by_flag(d->flag), d);
        cr_expect_eq(dq_param_by_key(d->key), d);
        cr_expect_not_null(d->help, "row %s has no help", d->key);
        if (d->type != DQ_PARAM_U64 && d->type != DQ_PARAM_CHOICE &&
            (d->def < d->min || d->def > d->max))
            continue; /* a default meaning "off" (idle_ms 0) */
        dq_param_text(d, d->def, d->def2, text, sizeof text);
        cr_expect_eq(dq_param_parse(d, d->flag, text, &v, &v2, err,
                                    sizeof err), 0, "%s", err);
        cr_expect(v == d->def && v2 == d->def2, "row %s: '%s'", d->key,
                  text);
    }
    cr_expect_eq(n, DQ_NPARAMS);
}

/* A value is checked against its row's one range, wherever it comes
 * from: the bounds that had drifted apart are those of the table. */
Test(params, one_range_per_parameter)
{
    const dq_param *work = dq_param_by_key("work_us");
    const dq_param *payload = dq_param_by_key("payload_bytes");
    char err[256];
    int64_t v, v2;

    cr_assert_eq(dq_param_parse(work, "--work-us", "60000000", &v, &v2, err,
                                sizeof err), 0, "%s", err);
    cr_assert_eq(dq_param_parse(work, "--work-us", "60000001", &v, &v2, err,
                                sizeof err), -1);
    cr_assert(strstr(err, "0..60000000") != NULL, "%s", err);
    cr_assert_eq(dq_param_parse(payload, "x.ini:3: payload_bytes", "1048577",
                                &v, &v2, err, sizeof err), -1);
    cr_assert(strstr(err, "x.ini:3: payload_bytes: '1048577' is out of "
                          "range 0..1048576") != NULL, "%s", err);
}

/* The parameter table and the trials.csv column list agree: every column
 * a parameter row says it fills (dq_param.csv) is a column of
 * DQ_TRIAL_COLUMNS, so the file's format is declared once (trialcols.h)
 * and each parameter's place in it once (params.c). */
#define TRIALCOL_NAME(name, type, absent) #name,
static const char *const trial_columns[] = {
    DQ_TRIAL_COLUMNS(TRIALCOL_NAME) NULL,
};

Test(params, csv_columns_are_trials_csv_columns)
{
    size_t named = 0;

    for (const dq_param *d = dq_params; d->key != NULL; d++) {
        char cols[128], *save = NULL;
        if (d->csv == NULL)
            continue;
        snprintf(cols, sizeof cols, "%s", d->csv);
        for (char *c = strtok_r(cols, ",", &save); c != NULL;
             c = strtok_r(NULL, ",", &save)) {
            bool found = false;
            for (size_t i = 0; trial_columns[i] != NULL; i++)
                found = found || strcmp(trial_columns[i], c) == 0;
            cr_expect(found, "row %s names column '%s', which trials.csv "
                      "(harness/trialcols.h) does not have", d->key, c);
            named++;
        }
    }
    cr_expect_gt(named, 5, "only %zu columns named by the table", named);
}
