/* witness_lease.c -- the lease-redelivery witness (witness.h): lua-lease's
 * visibility timeout bringing back the task of a consumer that died.
 *
 * lua-lease with lease_ms=300 and poll_ms=50.  Consumer c0 is a separate
 * process: it is forked before this attempt starts any thread (so that it
 * may use malloc and hiredis freely), waits for a byte on a pipe, opens
 * its own handle, claims the task, writes its D record with one write(2)
 * to the event log (dq_eventlog_open_append) and tells this process,
 * which SIGKILLs it -- a real kill, during its "work", before any ack.
 * Then c1 claims: the claim script finds nothing due while the lease
 * holds (the task's score is its lease deadline), c1 sleeps until that
 * deadline (at most poll_ms), and the next script re-leases the task with
 * attempt 2; c1 acks it.  This is certain by construction; an attempt
 * fails only if the machine stalls so long that c0 never claims.
 *
 * The chart: the producer's ZADD, c0's claim script (ZADD z <deadline>
 * id, HINCRBY a id 1: the lease and the attempt), the kill, c1's first
 * empty claim and how many more there were, the moment the lease runs
 * out, c1's claim with attempt 2 and its ack script, and the D, F and A
 * records of the log.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checker.h"
#include "signals.h"
#include "witness_int.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define LS_LEASE_MS 300
#define LS_POLL_MS 50
#define LS_CLAIM_MS 3000   /* c0's claim timeout, and the wait for it */
#define LS_WORK_MS 50      /* c0 "works" this long before it is killed */

static const char *const ls_opts[] = {"lease_ms=300", "poll_ms=50"};

/* The forked consumer c0: claims one task, logs it, reports "D id attempt"
 * on done_fd and waits to be killed.  Never returns. */
static void ls_child(wt_run *w, int go_fd, int done_fd)
{
    dq_eventlog *log;
    dq_queue *q = NULL;
    dq_task t = {0};
    char err[256], b;
    int rc;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (read(go_fd, &b, 1) != 1)
        _exit(3);
    log = dq_eventlog_open_append(w->logpath, DQ_LOG_SYNC_EACH, err,
                                  sizeof err);
    if (log == NULL ||
        dq_wt_open(w, "c0", ls_opts, 2, &q, err, sizeof err) != DQ_OK) {
        dprintf(done_fd, "E %s\n", err);
        _exit(3);
    }
    rc = dq_claim(q, LS_CLAIM_MS, &t);
    if (rc != DQ_OK) {
        dprintf(done_fd, "E c0's claim: %s\n",
                rc == DQ_EMPTY ? "nothing due" : dq_errstr(q));
        _exit(3);
    }
    dq_log_deliver(log, dq_wall_us(), t.id, "c0", t.attempt);
    dprintf(done_fd, "D %s %d\n", t.id, t.attempt);
    for (;;)
        pause();   /* the work, cut short by the SIGKILL */
}

/* Reads c0's report into line (timeout LS_CLAIM_MS + 2 s).  0, or -1. */
static int ls_read_report(int fd, char *line, size_t len)
{
    struct pollfd p = {fd, POLLIN, 0};
    ssize_t k;

    if (poll(&p, 1, LS_CLAIM_MS + 2000) != 1 ||
        (k = read(fd, line, len - 1)) <= 0)
        return -1;
    line[k] = '\0';
    line[strcspn(line, "\n")] = '\0';
    return 0;
}

/* Kills c0 (pid) with the F records around it: begin right before the
 * SIGKILL, end once it is reaped and c1 takes over. */
static void ls_kill(wt_run *w, pid_t *pid, const char *id)
{
    char arg[160];

    snprintf(arg, sizeof arg, "c0:point=during-work,claim=1,id=%s", id);
    dq_log_fault(w->log, dq_wall_us(), dq_fault_kill_consumer.name, "begin",
                 arg);
    kill(*pid, SIGKILL);
    dq_signals_forget_kill(*pid);
    waitpid(*pid, NULL, 0);
    *pid = -1;
    dq_log_fault(w->log, dq_wall_us(), dq_fault_kill_consumer.name, "end",
                 "c0:replacement=c1");
}

/* c1: claims (the task comes back after its lease), logs, acks. */
static int ls_reclaim(wt_run *w, char *err, size_t errlen)
{
    dq_queue *q = NULL;
    dq_task t = {0};
    int rc;

    if (dq_wt_open(w, "c1", ls_opts, 2, &q, err, errlen) != DQ_OK)
        return -1;
    rc = dq_claim(q, LS_LEASE_MS + LS_CLAIM_MS, &t);
    if (rc == DQ_OK) {
        dq_log_deliver(w->log, dq_wall_us(), t.id, "c1", t.attempt);
        rc = dq_ack(q, &t);
        if (rc == DQ_OK)
            dq_log_ack(w->log, dq_wall_us(), t.id, "c1", t.attempt);
        else
            dq_log_ack_refused(w->log, dq_wall_us(), t.id, "c1", t.attempt,
                               dq_result_name(rc));
        rc = DQ_OK;
    } else if (rc != DQ_EMPTY)
        snprintf(err, errlen, "lease-redelivery: c1: %s", dq_errstr(q));
    dq_task_clear(&t);
    dq_close(q);
    return rc == DQ_OK || rc == DQ_EMPTY ? 0 : -1;
}

/* c1's claim scripts: the one that re-leased id, its ack, and the empty
 * ones before the re-lease (first and count). */
typedef struct ls_lines {
    long zadd, claim0, claim1, ack1, empty_first, empty_last;
    int empty;
    int64_t deadline_ms;
} ls_lines;

static void ls_find(const wt_cap *c, const char *id, ls_lines *L)
{
    memset(L, 0, sizeof *L);
    L->zadd = dq_wt_find(c, 0, "producer", "ZADD", 3, id);
    L->claim0 = L->claim1 = L->ack1 = L->empty_first = L->empty_last = -1;
    for (long i = 0; i < (long)c->n; i++) {
        const wt_line *l = &c->lines[i];
        bool c0 = strcmp(l->who, "c0") == 0, c1 = strcmp(l->who, "c1") == 0;
        if (l->script || !(c0 || c1) || !(dq_wt_is(l, "EVALSHA") ||
                                          dq_wt_is(l, "EVAL")))
            continue;
        if (dq_wt_script_find(c, i, "HINCRBY", 2, id) >= 0) {
            if (c0 && L->claim0 < 0)
                L->claim0 = i;
            else if (c1 && L->claim1 < 0)
                L->claim1 = i;
        } else if (c1 && dq_wt_script_find(c, i, "ZREM", 2, id) >= 0) {
            L->ack1 = i;
        } else if (c1 && L->claim1 < 0 &&
                   dq_wt_script_find(c, i, "ZRANGE", 0, NULL) >= 0) {
            if (L->empty_first < 0)
                L->empty_first = i;
            L->empty_last = i;
            L->empty++;
        }
    }
    if (L->claim0 >= 0) {
        long z = dq_wt_script_find(c, L->claim0, "ZADD", 3, id);
        if (z >= 0)
            L->deadline_ms = strtoll(c->lines[z].argv[2], NULL, 10);
    }
}

/* Draws a script call: the EVALSHA with what its script ran, and reply. */
static void ls_script(wt_run *w, long i, const char *what, const char *reply)
{
    const wt_cap *c = &w->cap;
    char body[1200];

    dq_wt_script_label(&w->chart, c, i, body, sizeof body);
    dq_wt_chart_add(&w->chart, WT_ARC, c->lines[i].t_us, c->lines[i].who,
                    "redis", "%s %s script, which ran:\n%s",
                    c->lines[i].argv[0], what, body);
    dq_wt_chart_add(&w->chart, WT_REPLY, c->lines[i].t_us, "redis",
                    c->lines[i].who, "%s", reply);
}

static void ls_chart(wt_run *w, const ls_lines *L, const wt_rec *kill)
{
    wt_chart *ch = &w->chart;
    const wt_cap *c = &w->cap;
    char b[40], r[200];

    snprintf(ch->title, sizeof ch->title, "lease-redelivery: task %s, "
             "claimed by c0 (killed before its ack), claimed again by c1 "
             "with attempt 2 after its lease (%s, lease_ms=%d)",
             w->task_id, w->strategy, LS_LEASE_MS);
    dq_wt_chart_entity(ch, "producer", "producer");
    dq_wt_chart_entity(ch, "c0", "c0 (process)");
    dq_wt_chart_entity(ch, "c1", "c1");
    dq_wt_chart_entity(ch, "redis", "redis");
    if (L->zadd >= 0)
        dq_wt_chart_add(ch, WT_ARC, c->lines[L->zadd].t_us, "producer",
                        "redis",
                        "MULTI, HSET p %s, ZADD z %s %s, EXEC", w->task_id,
                        dq_wt_arg(ch, c->lines[L->zadd].argv[2], b, sizeof b),
                        w->task_id);
    snprintf(b, sizeof b, "%" PRId64, L->deadline_ms);
    snprintf(r, sizeof r, "%s, attempt 1, leased until %s (derived: the "
             "log's D)", w->task_id, dq_wt_arg(ch, b, b, sizeof b));
    ls_script(w, L->claim0, "claim", r);
    if (kill)
        dq_wt_chart_add(ch, WT_BOX, kill->t_us, "c0", NULL, "log F: SIGKILL "
                        "of c0 during its work: no ack");
    if (L->empty_first >= 0)
        ls_script(w, L->empty_first, "claim", "nothing due: the head is "
                  "the leased task, due at its deadline (c1 sleeps until "
                  "then, at most poll_ms)");
    if (L->empty > 1)
        dq_wt_chart_add(ch, WT_NOTE, c->lines[L->empty_last].t_us, "c1", NULL,
                        "c1: %d more empty claims", L->empty - 1);
    dq_wt_chart_add(ch, WT_NOTE, L->deadline_ms * 1000, "redis", NULL,
                    "lease of %s runs out: due again", w->task_id);
    snprintf(r, sizeof r, "%s, attempt 2 (derived: the log's D)",
             w->task_id);
    ls_script(w, L->claim1, "claim", r);
    if (L->ack1 >= 0)
        ls_script(w, L->ack1, "ack", "1: acked, the lease was c1's "
                  "(derived: the log's A)");
}

static void ls_numbers(wt_run *w, const ls_lines *L, const wt_rec *d0,
                       const wt_rec *d1, const wt_rec *kill,
                       const dq_check *chk)
{
    int64_t t0 = w->cap.lines[L->claim0].t_us;
    int64_t t1 = w->cap.lines[L->claim1].t_us;

    dq_wt_metric(w, "lease_ms", LS_LEASE_MS);
    dq_wt_metric(w, "poll_ms", LS_POLL_MS);
    dq_wt_metric(w, "first_attempt", d0->attempt);
    dq_wt_metric(w, "kill_after_claim_us", kill ? kill->t_us - d0->t_us : 0);
    dq_wt_metric(w, "reclaim_after_claim_us", t1 - t0);
    dq_wt_metric(w, "reclaim_after_lease_us", t1 - L->deadline_ms * 1000);
    dq_wt_metric(w, "reclaim_attempt", d1->attempt);
    dq_wt_metric(w, "empty_claims", L->empty);
    dq_wt_metric(w, "redelivered", (int64_t)chk->redelivered);
    snprintf(w->seen, sizeof w->seen, "c0 leased %s for %d ms and was "
             "SIGKILLed %.3f ms later without an ack; %d claims of c1 found "
             "nothing due; %.1f ms after c0's claim (%.1f ms past the "
             "deadline) c1 got %s again with attempt %d", w->task_id,
             LS_LEASE_MS, (double)(kill ? kill->t_us - d0->t_us : 0) / 1000.0,
             L->empty, (double)(t1 - t0) / 1000.0,
             (double)(t1 - L->deadline_ms * 1000) / 1000.0, w->task_id,
             d1->attempt);
}

/* 1 when the log shows c0's attempt 1 and c1's attempt 2 of one task. */
static int ls_analyse(wt_run *w, const char *id, char *err, size_t errlen)
{
    wt_rec *recs = NULL;
    size_t n = 0;
    const wt_rec *d0, *d1, *kill;
    ls_lines L;
    dq_check chk;
    int ret = 0;

    snprintf(w->task_id, sizeof w->task_id, "%s", id);
    ls_find(&w->cap, id, &L);
    w->chart.t0_us = L.zadd >= 0 ? w->cap.lines[L.zadd].t_us : 0;
    if (dq_wt_chart_log(w, id, &recs, &n, err, errlen) != 0 ||
        dq_check_file(w->logpath, &chk, err, errlen) != 0) {
        free(recs);
        return -1;
    }
    d0 = dq_wt_rec_find(recs, n, 'D', id, "c0", 1);
    d1 = dq_wt_rec_find(recs, n, 'D', id, "c1", 2);
    kill = dq_wt_rec_find(recs, n, 'F', dq_fault_kill_consumer.name, "begin",
                          -1);
    if (d0 && d1 && L.claim0 >= 0 && L.claim1 >= 0) {
        ls_chart(w, &L, kill);
        ls_numbers(w, &L, d0, d1, kill, &chk);
        ret = 1;
    }
    free(recs);
    return ret;
}

/* Runs the attempt once c0 is forked: the producer, the go, the kill, c1.
 * Fills id with the task c0 claimed ("" when it claimed none). */
static int ls_drive(wt_run *w, pid_t *pid, int go_fd, int done_fd, char *id,
                    size_t idlen, char *err, size_t errlen)
{
    dq_queue *prod = NULL;
    char line[320];
    int attempt = 0;
    int64_t due_ms = dq_wall_us() / 1000;

    if (dq_wt_open(w, "producer", ls_opts, 2, &prod, err, errlen) != DQ_OK)
        return -1;
    if (dq_enqueue(prod, "t1", "x", 1, due_ms) != DQ_OK) {
        snprintf(err, errlen, "lease-redelivery: enqueue: %s",
                 dq_errstr(prod));
        dq_close(prod);
        return -1;
    }
    dq_log_enqueue(w->log, dq_wall_us(), "t1", due_ms, "producer");
    dq_close(prod);
    if (write(go_fd, "g", 1) != 1 ||
        ls_read_report(done_fd, line, sizeof line) != 0) {
        snprintf(err, errlen, "lease-redelivery: consumer c0 did not report");
        return -1;
    }
    if (line[0] == 'E') {
        snprintf(err, errlen, "lease-redelivery: %s", line + 2);
        return -1;
    }
    if (idlen < DQ_ID_MAX || sscanf(line, "D %127s %d", id, &attempt) != 2)
        return 0;
    dq_sleep_us(LS_WORK_MS * 1000);
    ls_kill(w, pid, id);
    return ls_reclaim(w, err, errlen);
}

int dq_wt_lease_redelivery(wt_run *w, char *err, size_t errlen)
{
    int go[2] = {-1, -1}, done[2] = {-1, -1}, ret = -1;
    redisContext *wc = NULL;
    char id[DQ_ID_MAX] = "", spec[64];
    pid_t pid = -1;

    snprintf(spec, sizeof spec, "%s:during-work", dq_fault_kill_consumer.name);
    if (dq_wt_log_begin(w, "process", ls_opts, 2, err, errlen) != 0 ||
        dq_log_header(w->log, "fault", spec) != 0)
        goto out;
    if (pipe(go) != 0 || pipe(done) != 0) {
        snprintf(err, errlen, "lease-redelivery: pipe: %s", strerror(errno));
        goto out;
    }
    if ((pid = fork()) == 0) {
        close(go[1]);
        close(done[0]);
        ls_child(w, go[0], done[1]);
    }
    if (pid < 0) {
        snprintf(err, errlen, "lease-redelivery: fork: %s", strerror(errno));
        goto out;
    }
    dq_signals_on_force_kill(pid);
    if (dq_wt_cap_start(&w->cap, w->port, w->queue, false, err, errlen) == 0 &&
        (wc = dq_wt_connect(w->port, w->queue, "witness", err, errlen)) !=
            NULL &&
        ls_drive(w, &pid, go[1], done[0], id, sizeof id, err, errlen) == 0)
        ret = 0;
out:
    if (pid > 0) {   /* not yet killed: an error on the way */
        kill(pid, SIGKILL);
        dq_signals_forget_kill(pid);
        waitpid(pid, NULL, 0);
    }
    for (int i = 0; i < 2; i++) {
        if (go[i] >= 0)
            close(go[i]);
        if (done[i] >= 0)
            close(done[i]);
    }
    if (ret == 0 && (dq_wt_log_finish(w, err, errlen) != 0 ||
                     dq_wt_cap_stop(&w->cap, wc, err, errlen) != 0))
        ret = -1;
    if (ret == 0 && id[0])
        ret = dq_signals_caught() ? 130 : ls_analyse(w, id, err, errlen);
    redisFree(wc);
    return ret;
}
