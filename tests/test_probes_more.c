/* test_probes_more.c -- the C22, C27 and C28 probes (harness/probes_more.h)
 * against the test Redis (C27 against a redis-server of its own, started
 * by the probe), called directly with a short C27 run.
 *
 * The assertions are Redis's documented behaviour or follow from the
 * probe's mechanism, never from machine speed: a Stream entry with a
 * future id is read at once and later XADD * ids sort after it; XAUTOCLAIM
 * and XACK work; a List hands out the task that arrived first, so the one
 * due first waits at least until the other's due time (200 ms later, the
 * consumer sleeps until then); a ZSet hands them out in due order; with
 * notify-keyspace-events "" the subscriber gets no event, with "Ex" one
 * per key.  The throughput and CPU figures are only checked for being
 * there: speed is measured, never asserted.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../harness/probes_more.h"
#include "testlib.h"

#define MAXROWS 16

typedef struct prow {
    char claim[8], probe[40], input[512];
} prow;

/* Our rows: claim and probe never hold a comma or quote, verdict_input is
 * the last field and never holds one either (probes.h). */
static int parse_rows(char *buf, prow *rows)
{
    int n = 0;
    for (char *line = strtok(buf, "\n"); line && n < MAXROWS;
         line = strtok(NULL, "\n")) {
        char *c1 = strchr(line, ','), *last = strrchr(line, ',');
        cr_assert(c1 && last && last > c1, "row '%s'", line);
        char *c2 = strchr(c1 + 1, ',');
        cr_assert_not_null(c2);
        snprintf(rows[n].claim, sizeof rows[n].claim, "%.*s",
                 (int)(c1 - line), line);
        snprintf(rows[n].probe, sizeof rows[n].probe, "%.*s",
                 (int)(c2 - c1 - 1), c1 + 1);
        snprintf(rows[n].input, sizeof rows[n].input, "%s", last + 1);
        n++;
    }
    return n;
}

static const prow *find(const prow *rows, int n, const char *claim,
                        const char *probe)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].claim, claim) == 0 &&
            strcmp(rows[i].probe, probe) == 0)
            return &rows[i];
    cr_assert_fail("no row %s %s", claim, probe);
    return NULL;
}

static long long in_int(const prow *r, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "%s=", key);
    for (const char *s = r->input; s != NULL; s = strchr(s, ';')) {
        if (*s == ';')
            s++;
        if (strncmp(s, pat, strlen(pat)) == 0)
            return strtoll(s + strlen(pat), NULL, 10);
    }
    cr_assert_fail("%s %s: no %s in '%s'", r->claim, r->probe, key,
                   r->input);
    return 0;
}

Test(probes_more, streams_lists_notifications, .timeout = 120)
{
    dq_redis_target t;
    memset(&t, 0, sizeof t);
    snprintf(t.host, sizeof t.host, "127.0.0.1");
    t.port = tl_redis_port();
    char prefix[64], err[512] = "", *buf = NULL;
    size_t len = 0;
    snprintf(prefix, sizeof prefix, "dqprobe:{t%ld}", (long)getpid());
    FILE *csv = open_memstream(&buf, &len);
    cr_assert_not_null(csv);
    dq_probes_more_opts o = {100, 1};
    int rc = dq_probes_more_run(&t, prefix, csv, &o, err, sizeof err);
    fclose(csv);
    cr_assert_eq(rc, 0, "dq_probes_more_run: %d: %s", rc, err);

    prow rows[MAXROWS];
    int n = parse_rows(buf, rows);
    free(buf);

    const prow *r = find(rows, n, "C22", "future-id");
    cr_expect_eq(in_int(r, "readable_xread"), 1, "%s", r->input);
    cr_expect_eq(in_int(r, "readable_xreadgroup"), 1, "%s", r->input);
    cr_expect_gt(in_int(r, "ahead_ms"), 50000, "%s", r->input);
    r = find(rows, n, "C22", "auto-id");
    cr_expect_eq(in_int(r, "auto_after"), 1, "%s", r->input);
    cr_expect_eq(in_int(r, "rejected_earlier"), 1, "%s", r->input);
    r = find(rows, n, "C22", "ack-reclaim");
    cr_expect_eq(in_int(r, "reclaimed"), 1, "%s", r->input);
    cr_expect_eq(in_int(r, "acked"), 1, "%s", r->input);
    cr_expect_eq(in_int(r, "pending_after"), 0, "%s", r->input);

    r = find(rows, n, "C28", "list-vs-zset");
    cr_expect_eq(in_int(r, "list_b_first"), 0, "%s", r->input);
    cr_expect_eq(in_int(r, "zset_b_first"), 1, "%s", r->input);
    /* B is popped only once A's due time (200 ms after B's) has passed. */
    cr_expect_geq(in_int(r, "list_late_b_us"), 195000, "%s", r->input);
    cr_expect_geq(in_int(r, "zset_late_b_us"), 0, "%s", r->input);
    cr_expect_geq(in_int(r, "zset_late_a_us"), 0, "%s", r->input);

    r = find(rows, n, "C27", "ttl-keys-notify");
    cr_assert_eq(in_int(r, "measured"), 1, "%s", r->input);
    cr_expect_eq(in_int(r, "off_events"), 0, "%s", r->input);
    cr_expect_gt(in_int(r, "on_keys"), 0, "%s", r->input);
    cr_expect_eq(in_int(r, "on_events"), in_int(r, "on_keys"), "%s",
                 r->input);
    cr_expect_gt(in_int(r, "off_keys_per_s"), 0, "%s", r->input);
    cr_expect_gt(in_int(r, "on_cpu_us_per_1k"), 0, "%s", r->input);
    cr_expect_eq(in_int(r, "repeats"), 1, "%s", r->input);

    /* Nothing left behind on the test Redis. */
    redisContext *c = redisConnect("127.0.0.1", t.port);
    cr_assert(c != NULL && !c->err);
    redisReply *k = redisCommand(c, "KEYS %s:*", prefix);
    cr_assert(k != NULL && k->type == REDIS_REPLY_ARRAY);
    cr_expect_eq(k->elements, 0, "%zu keys left under %s", k->elements,
                 prefix);
    freeReplyObject(k);
    redisFree(c);
}

Test(probes_more, bad_options_refused)
{
    dq_redis_target t;
    memset(&t, 0, sizeof t);
    snprintf(t.host, sizeof t.host, "127.0.0.1");
    t.port = tl_redis_port();
    char err[512] = "";
    dq_probes_more_opts o = {0, 1};
    int rc = dq_probes_more_run(&t, "dqprobe:{x}", stdout, &o, err,
                                sizeof err);
    cr_expect_eq(rc, -1);
    cr_expect(strstr(err, "c27_write_ms") != NULL, "%s", err);
}
