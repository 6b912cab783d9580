/* test_text.c -- the report's text templates (report/text.h): every
 * template the report can render, rendered with the keys its use gives;
 * the loader's refusals, each naming file and line; the join rules; a
 * missing template file as `dqlab report` reports it.
 *
 * Runs from the repository root (tests/run.sh), where report/text is.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../harness/commands.h"
#include "../report/text.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* Links the whole report in, so that its uses are in the set. */
int (*const link_report)(int, char **) = dq_cmd_report;

static int sh(const char *cmd)
{
    int st = system(cmd);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const dq_tuse *use_of(const char *name)
{
    size_t n;
    const dq_tuse *u = dq_texts_uses(&n);
    for (size_t i = 0; i < n; i++)
        if (u[i].name != NULL && strcmp(u[i].name, name) == 0)
            return &u[i];
    cr_assert_fail("no use of %s", name);
    return NULL;
}

/* Every use, rendered with "<key>" for each of its keys: no placeholder
 * left (a key the use does not give), every key shown (one the template
 * leaves unused). */
Test(text, every_template_renders_with_the_keys_of_its_use)
{
    dq_texts t;
    char err[1024];
    size_t n, rendered = 0;
    const dq_tuse *u = dq_texts_uses(&n);
    cr_assert_eq(dq_texts_load(&t, "report/text", err, sizeof err), 0, "%s",
                 err);
    for (size_t i = 0; i < n; i++) {
        char keys[512], out[32768] = "", names[24][40], *p;
        const char *kp[24], *vp[24];
        size_t nk = 0, off = 0;
        if (u[i].name == NULL)
            continue;
        cr_assert_eq(dq_tuse_keys(&u[i], keys, sizeof keys), 0);
        for (p = strtok(keys, " "); p && nk < 24; p = strtok(NULL, " ")) {
            snprintf(names[nk], sizeof names[nk], "<%s>", p);
            kp[nk] = p;
            vp[nk] = names[nk];
            nk++;
        }
        cr_assert_eq(dq_tcat_kv(&t, &u[i], kp, vp, nk, out, sizeof out,
                                &off), 0, "%s (%s)", u[i].name, u[i].fmt);
        cr_expect(strstr(out, "{{") == NULL, "%s: a placeholder left: %s",
                  u[i].name, out);
        for (size_t k = 0; k < nk; k++)
            cr_expect(strstr(out, vp[k]) != NULL, "%s: %s not shown: %s",
                      u[i].name, kp[k], out);
        rendered++;
    }
    cr_expect_gt(rendered, 200, "only %zu uses recorded", rendered);
    dq_texts_free(&t);
}

/* A copy of report/text in dir, with sed script edit applied to file. */
static void texts_copy(char *dir, size_t len, const char *file,
                       const char *edit)
{
    char cmd[1024];
    snprintf(dir, len, "/tmp/dqlab-text-test-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r report/text '%s' && "
             "sed -i '%s' '%s/%s'", dir, dir, edit, dir, file);
    cr_assert_eq(sh(cmd), 0, "%s", cmd);
}

/* Loading dir fails with a message holding each of want[]. */
static void expect_refused(const char *dir, const char *const *want)
{
    dq_texts t;
    char err[1024] = "", cmd[PATH_MAX + 16];
    cr_assert_neq(dq_texts_load(&t, dir, err, sizeof err), 0);
    for (size_t i = 0; want[i] != NULL; i++)
        cr_expect(strstr(err, want[i]) != NULL, "'%s' not in: %s", want[i],
                  err);
    cr_expect(strchr(err, '\n') == NULL, "not one line: %s", err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    sh(cmd);
}

Test(text, a_key_the_report_does_not_give_is_refused)
{
    char dir[256];
    texts_copy(dir, sizeof dir, "loss.md", "s/^(at-least-once behaviour)/"
               "({{bogus}} behaviour)/");
    expect_refused(dir, (const char *[]){"loss.md:", "{{bogus}} is not a "
                                         "value of loss.intro", NULL});
}

Test(text, a_key_left_unused_is_refused)
{
    char dir[256];
    texts_copy(dir, sizeof dir, "loss.md", "s/^({{n}} fault window/(fault "
               "window/");
    expect_refused(dir, (const char *[]){"loss.md:", "loss.windows does not "
                                         "use {{n}}", NULL});
}

Test(text, a_template_nothing_uses_is_refused)
{
    char dir[256];
    texts_copy(dir, sizeof dir, "loss.md", "$a <!-- spare -->\\nspare text");
    expect_refused(dir, (const char *[]){"loss.md:", "loss.spare is not used "
                                         "by the report", NULL});
}

Test(text, a_missing_template_is_refused)
{
    char dir[256];
    texts_copy(dir, sizeof dir, "loss.md", "s/^<!-- windows -->$//");
    expect_refused(dir, (const char *[]){"loss.md", "no template \"<!-- "
                                         "windows -->\"", NULL});
}

Test(text, a_missing_file_is_refused)
{
    char dir[256], cmd[600];
    texts_copy(dir, sizeof dir, "loss.md", "");
    snprintf(cmd, sizeof cmd, "rm '%s/loss.md'", dir);
    cr_assert_eq(sh(cmd), 0);
    expect_refused(dir, (const char *[]){"loss.md: No such file or "
                                         "directory", NULL});
}

/* The lines of a template become the text the report prints. */
Test(text, lines_are_joined_as_the_report_prints_them)
{
    char dir[256], cmd[1024], out[1024] = "";
    dq_texts t;
    size_t off = 0;
    snprintf(dir, sizeof dir, "/tmp/dqlab-text-join-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r report/text '%s' && "
             "printf '%%s\\n' '<!-- a note, not a marker -->' "
             "'<!-- head -->' '' '# Title' 'A line' '  goes on.' "
             "'Then {{now}}' '- item {{root}}' '  more' '' '' "
             "'End{{n}}{{s}}' '' > '%s/report.md'", dir, dir, dir);
    cr_assert_eq(sh(cmd), 0, "%s", cmd);
    cr_assert_eq(dq_texts_load(&t, dir, cmd, sizeof cmd), 0, "%s", cmd);
    dq_tcat(&t, out, sizeof out, &off, use_of("report.head"),
            "now=%s root=%s n=%d s=%s", "N", "R", 3, "s");
    cr_expect_str_eq(out, "# Title\nA line goes on.  Then N\n- item R more"
                          "\n\nEnd3s");
    cr_expect_str_eq(t.err, "");
    /* values other than the template's: nothing, and an error */
    off = 0;
    out[0] = '\0';
    dq_tcat(&t, out, sizeof out, &off, use_of("report.head"), "now=%s", "N");
    cr_expect_str_eq(out, "");
    cr_expect(strstr(t.err, "report.head") != NULL, "%s", t.err);
    dq_texts_free(&t);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    sh(cmd);
}

/* A nested list item (indented) keeps its own line and its indent; the
 * indented line after it continues it. */
Test(text, nested_list_items_keep_their_indent)
{
    char dir[256], cmd[1024], out[1024] = "";
    dq_texts t;
    size_t off = 0;
    snprintf(dir, sizeof dir, "/tmp/dqlab-text-nest-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r report/text '%s' && "
             "printf '%%s\\n' '<!-- head -->' '1. Q {{now}}' '   - **A** "
             "{{root}}' '     goes on.' '2. R{{n}}{{s}}' > '%s/report.md'",
             dir, dir, dir);
    cr_assert_eq(sh(cmd), 0, "%s", cmd);
    cr_assert_eq(dq_texts_load(&t, dir, cmd, sizeof cmd), 0, "%s", cmd);
    dq_tcat(&t, out, sizeof out, &off, use_of("report.head"),
            "now=%s root=%s n=%d s=%s", "N", "R", 3, "s");
    cr_expect_str_eq(out, "1. Q N\n   - **A** R goes on.\n2. R3s");
    dq_texts_free(&t);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    sh(cmd);
}

/* dqlab report with a template file missing: one line naming it, exit 2,
 * nothing written. */
Test(text, report_names_a_missing_template_file, .timeout = 60)
{
    char dir[256], cmd[2048];
    const char *dqlab = getenv("DQLAB");
    cr_assert(dqlab != NULL, "run through tests/run.sh");
    snprintf(dir, sizeof dir, "/tmp/dqlab-text-report-%ld", (long)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/res' && cp -r "
             "report '%s/scripts' && rm '%s/scripts/text/claims.md'", dir,
             dir, dir, dir);
    cr_assert_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "'%s' report '%s/res' --out '%s/out' "
             "--scripts '%s/scripts' 2>'%s/err'", dqlab, dir, dir, dir, dir);
    cr_expect_eq(sh(cmd), 2);
    snprintf(cmd, sizeof cmd, "test \"$(wc -l < '%s/err')\" = 1 && grep -q "
             "'^dqlab report: %s/scripts/text/claims.md: No such file or "
             "directory$' '%s/err' && test ! -e '%s/out'", dir, dir, dir,
             dir);
    cr_expect_eq(sh(cmd), 0, "stderr is not the one line naming the file");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    sh(cmd);
}
