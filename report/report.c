/* report.c -- `dqlab report [RESULTS]`: results -> figures -> REPORT.md and
 * index.html, and every message the command prints.
 *
 * Reads the prose templates first (text.h: <scripts>/text/GROUP.md, checked
 * against every use the program makes, so a bad template stops it before
 * any work), loads the results model once (results.h: every
 * RESULTS/<name>/latest experiment run, the event logs the sections ask
 * for, the bench, the probes), then writes, through the sections
 * (sections.h) and the writing kit (md.h):
 *   <out>/data/<exp>-summary.csv        one row per cell
 *   <out>/data/<figure>.csv             what each figure draws
 *   <out>/figures/<figure>.{svg,png}    gnuplot -c report/<script>.gp
 *   <out>/REPORT.md, <out>/index.html   (libcmark; the page's head and
 *                                       style: report/page.html)
 * The report is built from those files alone: every number in it, the
 * "what happened" paragraphs and the claim verdicts (claims.c) included,
 * is computed from the results, never typed by hand.  The output is built
 * in a directory beside <out> and renamed into place at the end, so a
 * failure leaves the previous report whole.  <out> is replaced whole, so
 * it must be new, empty, or a report: one this command wrote (it holds
 * REPORT_MARK) or, from before the mark, one holding nothing but a
 * report's own entries (report_entries); anything else is refused before
 * any work, so `--out results` or `--out ~` never loses a file.
 */
#define _GNU_SOURCE /* nftw */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmark.h>

#include "../harness/commands.h"
#include "../harness/exercise.h"
#include "../harness/runmeta.h"
#include "claims.h"
#include "front.h"
#include "sections.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* nftw callback of rm_rf. */
static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* rm -rf path (no error when it does not exist). */
static void rm_rf(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The command line: RESULTS, --out DIR, --scripts DIR.  Returns -1 to go
 * on, else the exit code. */
static int parse_args(int argc, char **argv, const char **root,
                      const char **outdir, const char **scripts)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 ||
            strcmp(argv[i], "--scripts") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '\0') {
                fprintf(stderr, "dqlab report: %s needs a value\n", argv[i]);
                return 2;
            }
            const char **dst = argv[i][2] == 'o' ? outdir : scripts;
            *dst = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            printf("usage: dqlab report [RESULTS] [--out DIR] "
                   "[--scripts DIR]\n"
                   "  reads RESULTS/*/latest (default results), writes "
                   "DIR/REPORT.md, DIR/index.html,\n"
                   "  DIR/data/*.csv, DIR/figures/* (default report/out)\n"
                   "  --scripts DIR  the report's own inputs (default "
                   "report): the gnuplot scripts\n"
                   "                 (*.gp), text/ (the prose templates and "
                   "text/claim_rows.md, the\n"
                   "                 claim rules' data rows) and page.html "
                   "(the page's head and style)\n");
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "dqlab report: unknown option %s (see dqlab "
                    "report --help)\n", argv[i]);
            return 2;
        } else if (*root != NULL) {
            fprintf(stderr, "dqlab report: unexpected argument %s (one "
                    "RESULTS dir only; see dqlab report --help)\n", argv[i]);
            return 2;
        } else {
            *root = argv[i];
        }
    }
    *root = *root ? *root : "results";
    return -1;
}

/* Everything that can be checked before anything is written: the results
 * dir, the scripts, the exercises (read into ex), the text templates (read
 * into t) and the claim rules' data rows.  0, or 2 after the message with
 * nothing to free. */
static int check_inputs(const char *root, const char *scripts,
                        dq_exercise_set *ex, dq_texts *t)
{
    struct stat st;
    char path[PATH_MAX], err[1024];
    if (stat(root, &st) != 0) {
        if (errno == ENOENT)
            fprintf(stderr, "dqlab report: results dir %s does not exist "
                    "(run `make report` or `dqlab experiment FILE` first)\n",
                    root);
        else
            fprintf(stderr, "dqlab report: %s: %s\n", root, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "dqlab report: results dir %s is not a directory\n",
                root);
        return 2;
    }
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", scripts,
                 i == 0 ? "common.gp" : "page.html");
        if (access(path, R_OK) != 0) {
            fprintf(stderr, "dqlab report: %s: %s (run dqlab report from "
                    "the dqlab directory, or pass --scripts DIR)\n", path,
                    strerror(errno));
            return 2;
        }
    }
    if (dq_exercises_load(DQ_EXERCISE_FILE, ex, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab report: %s\n", err);
        return 2;
    }
    snprintf(path, sizeof path, "%s/text", scripts);
    if (dq_texts_load(t, path, err, sizeof err) != 0)
        goto free_exercises;
    if (dq_claim_rows_check(t, err, sizeof err) == 0)
        return 0;
    dq_texts_free(t);
free_exercises:
    dq_exercises_free(ex);
    fprintf(stderr, "dqlab report: %s\n", err);
    return 2;
}

/* The event logs e's sections read (a dq_logs_fn): those the rows of
 * dq_sections[] that fit e ask for. */
static int read_logs(dq_rexp *e, char *err, size_t errlen)
{
    unsigned need = dq_section_logs(e);
    return need ? dq_rexp_read_logs(e, need, err, errlen) : 0;
}

/* After loading: "nothing to report" (returns 2), or notes about the
 * runs skipped (returns 0): incomplete ones, latest runs without
 * trials.csv (named). */
static int check_loaded(const dq_results *r, int n)
{
    int k = r->nincomplete, d = r->nno_trials;
    if (n == 0 && !r->bench.present) {
        if (d > 0)
            fprintf(stderr, "dqlab report: %s has no trials.csv, so there "
                    "is nothing to report (%d latest run%s lack%s it); rerun "
                    "the experiment with `dqlab experiment FILE`\n",
                    r->no_trials, d, d == 1 ? "" : "s", d == 1 ? "s" : "");
        else if (k > 0)
            fprintf(stderr, "dqlab report: no complete run under %s/: %d "
                    "incomplete run%s (interrupted or failed) %s skipped; "
                    "rerun `dqlab experiment FILE`\n", r->root, k,
                    k == 1 ? "" : "s", k == 1 ? "was" : "were");
        else
            fprintf(stderr, "dqlab report: no results under %s/: run `make "
                    "report` or `dqlab experiment FILE`\n", r->root);
        return 2;
    }
    if (k > 0)
        fprintf(stderr, "dqlab report: note: %d incomplete run%s of "
                "experiments without a complete run %s skipped\n", k,
                k == 1 ? "" : "s", k == 1 ? "was" : "were");
    if (d > 0)
        fprintf(stderr, "dqlab report: note: %s has no trials.csv: skipped "
                "(%d latest run%s lack%s it)\n", r->no_trials, d,
                d == 1 ? "" : "s", d == 1 ? "s" : "");
    return 0;
}

/* The file every report directory holds, so that the next report may
 * replace it; and what a report directory written before it held. */
#define REPORT_MARK ".dqlab-report"
static const char *const report_entries[] = {
    "REPORT.md", "index.html", "data", "figures", "firstscreen.png", NULL,
};

static bool report_entry(const char *name)
{
    for (size_t i = 0; report_entries[i] != NULL; i++)
        if (strcmp(name, report_entries[i]) == 0)
            return true;
    return false;
}

/* 0 when outdir may be replaced (absent, empty, or a report); else -1
 * with err naming one entry that is not a report's. */
static int check_outdir(const char *outdir, char *err, size_t errlen)
{
    char mark[PATH_MAX + 16], other[256] = "";
    struct stat st;
    DIR *d;
    struct dirent *e;

    if (stat(outdir, &st) != 0)
        return 0; /* absent: made at the end */
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "--out %s: not a directory", outdir);
        return -1;
    }
    snprintf(mark, sizeof mark, "%s/%s", outdir, REPORT_MARK);
    if (access(mark, F_OK) == 0)
        return 0;
    if ((d = opendir(outdir)) == NULL) {
        snprintf(err, errlen, "--out %s: %s", outdir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL && other[0] == '\0')
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            !report_entry(e->d_name))
            snprintf(other, sizeof other, "%s", e->d_name);
    closedir(d);
    if (other[0] == '\0')
        return 0;
    snprintf(err, errlen, "--out %s: holds '%.100s', which is not part of a "
             "report; the report replaces the whole directory, so give a "
             "new or empty one (or an earlier report's)", outdir, other);
    return -1;
}

/* The staging directory beside outdir (its parent made), and the name
 * the old report is moved to.  0 or -1 with err. */
static int make_stage(const char *outdir, char *stage, char *old, size_t len,
                      char *err, size_t errlen)
{
    char parent[PATH_MAX], path[PATH_MAX + 16];
    size_t pl;
    snprintf(parent, sizeof parent, "%s", outdir);
    for (pl = strlen(parent); pl > 1 && parent[pl - 1] == '/';)
        parent[--pl] = '\0';
    char *slash = strrchr(parent, '/');
    if (slash != NULL && slash != parent) {
        *slash = '\0';
        if (dq_runmeta_mkdirs(parent, err, errlen) != 0)
            return -1;
        *slash = '/';
    }
    snprintf(stage, len, "%s.tmp.%ld", parent, (long)getpid());
    snprintf(old, len, "%s.old.%ld", parent, (long)getpid());
    rm_rf(stage);
    snprintf(path, sizeof path, "%s/data", stage);
    if (dq_runmeta_mkdirs(path, err, errlen) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/figures", stage);
    if (dq_runmeta_mkdirs(path, err, errlen) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/%s", stage, REPORT_MARK);
    return dq_runmeta_write_atomic(path, "dqlab report\n", 13, err, errlen);
}

/* The front: what dqlab is, the contents, the summary matrix, the
 * decision guide, the scenarios and the strategy cards, all computed from
 * one dq_facts of r.  0 or -1 with err. */
static int write_front(dq_md *o, const dq_results *r, int n, char *err,
                       size_t errlen)
{
    char now[64];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%d %H:%M:%S %z", &tm);
    dq_facts *f = malloc(sizeof *f);
    if (f == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    dq_facts_compute(r, f);
    DQ_TEXT(o, "report.head", "now=%s root=%s n=%d s=%s\n\n", now,
            r->root, n, n == 1 ? "" : "s");
    dq_section_contents(o, r);
    dq_section_summary(o, f);
    dq_section_guide(o, r, f);
    dq_section_scenarios(o, r, f);
    int rc = dq_section_cards(o, r, f, err, errlen);
    free(f);
    return rc;
}

/* The whole text: the front, then every part, each after the anchor the
 * contents links to. */
static int write_report(dq_md *o, const dq_results *r, int n,
                        const dq_exercise_set *ex, char *err, size_t errlen)
{
    char id[80];
    if (write_front(o, r, n, err, errlen) != 0)
        return -1;
    dq_anchor(o, "environment");
    dq_section_environment(o, r);
    DQ_TEXT(o, "front.regenerate", "root=%s\n\n", r->root);
    for (size_t i = 0; i < r->nexps; i++) {
        dq_exp_anchor(&r->exps[i], id, sizeof id);
        dq_anchor(o, id);
        if (dq_section_experiment(o, r, &r->exps[i], err, errlen) != 0)
            return -1;
    }
    dq_anchor(o, "bench");
    if (dq_section_perf(o, r, err, errlen) != 0)
        return -1;
    dq_anchor(o, "probes");
    dq_section_probes(o, r);
    dq_anchor(o, "claims");
    dq_section_claims(o, r);
    dq_anchor(o, "pack");
    dq_section_pack(o, r, ex);
    dq_anchor(o, "strategies");
    dq_section_strategies(o);
    if (o->texts->err[0] != '\0') {
        snprintf(err, errlen, "%s", o->texts->err);
        return -1;
    }
    return 0;
}

/* REPORT.md and index.html (<scripts>/page.html, the HTML that cmark
 * made of the twin, the end of the page) into the stage.  0 or -1 with
 * err. */
static int write_files(dq_md *o, const char *stage, char *err,
                       size_t errlen)
{
    char path[PATH_MAX], *page, *head, *html;
    size_t plen;
    FILE *pf;
    int rc = -1;
    dq_md_close(o);
    snprintf(path, sizeof path, "%s/REPORT.md", stage);
    if (dq_runmeta_write_atomic(path, o->mdbuf, o->mdlen, err, errlen) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/page.html", o->scripts);
    if ((head = dq_slurp(path, NULL)) == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    html = cmark_markdown_to_html(o->hmdbuf, o->hmdlen,
                                  CMARK_OPT_UNSAFE | CMARK_OPT_SMART);
    if (html == NULL)
        snprintf(err, errlen, "cmark: out of memory");
    else if ((pf = dq_mem_open(&page, &plen, err, errlen)) != NULL) {
        fprintf(pf, "%s%s</body>\n</html>\n", head, html);
        fclose(pf);
        snprintf(path, sizeof path, "%s/index.html", stage);
        rc = dq_runmeta_write_atomic(path, page, plen, err, errlen);
        free(page);
    }
    free(head);
    free(html);
    return rc;
}

/* Swap: the old report aside, the new one in, the old one away. */
static int swap_in(const char *stage, const char *outdir, const char *old,
                   char *err, size_t errlen)
{
    struct stat st;
    bool had_old = stat(outdir, &st) == 0;
    if (had_old && rename(outdir, old) != 0) {
        if (errno == EBUSY)
            snprintf(err, errlen, "--out %s: cannot be replaced (a mount "
                     "point, or in use): give a directory inside it",
                     outdir);
        else
            snprintf(err, errlen, "rename %s: %s", outdir, strerror(errno));
        return -1;
    }
    if (rename(stage, outdir) != 0) {
        snprintf(err, errlen, "rename %s to %s: %s", stage, outdir,
                 strerror(errno));
        if (had_old)
            rename(old, outdir);
        return -1;
    }
    if (had_old)
        rm_rf(old);
    return 0;
}

int dq_cmd_report(int argc, char **argv)
{
    const char *root = NULL, *outdir = "report/out", *scripts = "report";
    char err[1024], stage[PATH_MAX] = "", old[PATH_MAX];
    dq_results r;
    dq_texts texts;
    dq_exercise_set ex;
    dq_md o;
    int rc = parse_args(argc, argv, &root, &outdir, &scripts), n;
    if (rc >= 0)
        return rc;
    if (check_outdir(outdir, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab report: %s\n", err);
        return 2;
    }
    if ((rc = check_inputs(root, scripts, &ex, &texts)) != 0)
        return rc;
    if ((n = dq_results_load(root, read_logs, &r, err,
                             sizeof err)) < 0) {
        fprintf(stderr, "dqlab report: %s\n", err);
        rc = 2;
        goto free_results;
    }
    if ((rc = check_loaded(&r, n)) != 0)
        goto free_results;
    rc = 2;
    memset(&o, 0, sizeof o);
    if (make_stage(outdir, stage, old, sizeof stage, err, sizeof err) != 0 ||
        dq_md_open(&o, stage, scripts, &texts, err, sizeof err) != 0 ||
        write_report(&o, &r, n, &ex, err, sizeof err) != 0 ||
        write_files(&o, stage, err, sizeof err) != 0 ||
        swap_in(stage, outdir, old, err, sizeof err) != 0) {
        fprintf(stderr, "dqlab report: %s\n", err);
        if (stage[0] != '\0')
            rm_rf(stage);
    } else {
        fprintf(stderr, "dqlab: wrote %s/REPORT.md and %s/index.html (%d "
                "experiment%s)\n", outdir, outdir, n, n == 1 ? "" : "s");
        rc = 0;
    }
    dq_md_free(&o);
free_results:
    dq_results_free(&r);
    dq_texts_free(&texts);
    dq_exercises_free(&ex);
    return rc;
}
