/* runmeta.h -- what every stored run of dqlab shares: its directory, the
 * `latest` link, and the environment lines of its meta.txt.
 *
 * `dqlab experiment` stores a run under results/NAME/STAMP/ and `dqlab
 * bench` under results/bench/STAMP/; both must never overwrite an old run,
 * move `latest` only when a run completed, and say in meta.txt where the
 * figures were measured (host, CPU, cores, dqlab commit), because the
 * report quotes those lines next to the numbers.  These helpers are that
 * shared part, so the two commands cannot drift apart.
 *
 * meta.txt format: "key = value" lines, '#' comments; a value is one line
 * (newlines written as spaces).  Readers: report/report.c, section_perf.c.
 */
#ifndef DQ_RUNMETA_H
#define DQ_RUNMETA_H

#include <stddef.h>
#include <stdio.h>

/* mkdir -p: creates path and its missing parents (mode 0777 & umask).  An
 * existing directory is fine.  Returns 0, or -1 with "mkdir PATH: reason"
 * in err (errlen bytes). */
int dq_runmeta_mkdirs(const char *path, char *err, size_t errlen);

/* Creates parent (mkdir -p), then a new run directory parent/STAMP with
 * STAMP the local time "YYYYmmdd-HHMMSS", or "YYYYmmdd-HHMMSS-N" (N = 2,
 * 3, ... up to 999) when that exists: a run never reuses a directory.
 * Then creates dir/logs.  On success returns 0 with the stamp in stamp
 * (stamplen >= 40 is enough) and "parent/STAMP" in dir (dirlen bytes);
 * otherwise -1 with a one-line message in err. */
int dq_runmeta_make_dir(const char *parent, char *stamp, size_t stamplen,
                        char *dir, size_t dirlen, char *err, size_t errlen);

/* Points parent/latest at the relative name stamp, atomically: a symlink
 * parent/.latest.tmp.PID renamed over parent/latest, so a reader sees the
 * old or the new target, never none.  Returns 0, or -1 with a message in
 * err (the temporary link removed). */
int dq_runmeta_update_latest(const char *parent, const char *stamp,
                             char *err, size_t errlen);

/* Writes len bytes of data to path through path.tmp.PID and rename(2), so
 * path is either the old file or the whole new one.  Returns 0, or -1 with
 * a message in err (the temporary file removed). */
int dq_runmeta_write_atomic(const char *path, const char *data, size_t len,
                            char *err, size_t errlen);

/* The current local time as ISO 8601 with offset, "2024-05-01T12:00:00+0200",
 * into buf (len >= 32). */
void dq_runmeta_now_iso(char *buf, size_t len);

/* The CPU model ("model name" of /proc/cpuinfo), or "unknown". */
void dq_runmeta_cpu_model(char *buf, size_t len);

/* The dqlab commit, `git rev-parse --short HEAD` run in the current
 * directory, or "unknown" (not a checkout, no git). */
void dq_runmeta_git_commit(char *buf, size_t len);

/* The command line a meta.txt records: "bin/dqlab" and argv[0..argc-1]
 * (the subcommand, its arguments) joined by blanks, with the userinfo of
 * any redis:// URL masked (dq_redact_redis_urls), into buf (len bytes). */
void dq_runmeta_command_line(int argc, char **argv, char *buf, size_t len);

/* One meta.txt line "key = value\n"; newlines and CRs in val become
 * spaces.  val may be "" (never NULL). */
void dq_runmeta_kv(FILE *f, const char *key, const char *val);

/* One CSV field (RFC 4180), then the separator sep (',', '\n', or '\0'
 * for none: the caller writes it): s as
 * it is, or quoted with '"' doubled when it holds a comma, quote, CR or
 * LF.  The writer of trials.csv and probes.csv fields; report/ reads
 * them back with its RFC 4180 reader. */
void dq_runmeta_csv_field(FILE *f, const char *s, char sep);

/* The environment lines every meta.txt carries, through dq_runmeta_kv:
 * dqlab_commit, hostname, cpu_model, cores (online processors). */
void dq_runmeta_env(FILE *f);

/* The value of the `redis_version:` line of INFO (server) reply text info
 * (NUL-terminated, "\r\n" lines; NULL is fine), copied into buf (len
 * bytes, truncated to fit).  Returns 0, or -1 when there is no such line
 * (buf is left untouched).  https://redis.io/commands/info/ */
int dq_runmeta_redis_version(const char *info, char *buf, size_t len);

#endif
