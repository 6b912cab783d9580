/* probes.h -- `dqlab probes`: small, decisive checks of claims about Redis
 * itself (CLAIMS.md C06, C07, C08, C09, C20 here; C22, C27, C28 in
 * probes_more.c), run against a real server.
 *
 * Some claims need no experiment matrix, only one careful interaction with
 * Redis: does a score round-trip a nanosecond timestamp, what does ZADD say
 * to MAXLEN, does a payload key with a short TTL survive the delay.  Each
 * probe here sends the commands, reads what Redis answers and records it;
 * nothing is hard-coded (the boundary where a score stops being exact is
 * found by asking Redis, not by writing 2^53 down).  The report's Probes
 * section (dq_section_probes, report/sections.c) prints the rows and the
 * claim rules in report/claims.c read the verdict_input column.
 *
 * Output: <results>/probes/<stamp>/probes.csv and meta.txt (runmeta.h),
 * then <results>/probes/latest -> <stamp>.  probes.csv is RFC 4180 CSV
 * (a field holding a comma, quote or newline is quoted, quotes doubled)
 * with the header DQ_PROBES_CSV_HEADER and one row per probe:
 *   claim          the claim id, "C06"
 *   probe          the probe's name, unique within the claim ("ms-epoch")
 *   action         what was done, in words with the commands
 *   observed       what Redis did: numbers, or the exact reply text
 *   verdict_input  "key=value" pairs separated by ';' that the claim rules
 *                  read (e.g. "exact=2000;n=2000", "lost=1;n=1"); every
 *                  value is a decimal integer
 * meta.txt: redis_version, redis (the redacted URL, or "private"),
 * command, started, duration_ms, the runmeta environment lines, complete.
 */
#ifndef DQ_PROBES_H
#define DQ_PROBES_H

#include <stddef.h>
#include <stdio.h>

#include "redis_url.h"

#define DQ_PROBES_CSV_HEADER "claim,probe,action,observed,verdict_input\n"

/* Runs every probe against the Redis at t (its own keys
 * "dqprobe:{<pid>.<ms>}:*", deleted at the end on every path) and writes
 * the CSV rows, header first, to csv, then those of dq_probes_more_run
 * (probes_more.h: C22, C27, C28).  Takes about 1.5 s (the TTL probes wait
 * for their due times) plus about 8 s there.  Returns 0, 130 when a
 * signal arrived (signals.h; rows written so far stay in csv), or -1 with
 * a one-line message in err (errlen bytes) naming the probe and what
 * failed (Redis unreachable, an unexpected reply). */
int dq_probes_run(const dq_redis_target *t, FILE *csv, char *err,
                  size_t errlen);


#endif
