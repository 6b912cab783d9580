#!/bin/sh
# run.sh -- run every Criterion test binary against ONE private redis-server.
#
#   sh tests/run.sh BUILD_DIR DQLAB [criterion args...]
#   e.g. sh tests/run.sh build/default bin/dqlab --filter 'lua/*'
#
# Called by `make test` / `make test-sanitize`.  Criterion forks a process
# per test and runs several at once, so the server cannot live in a test
# fixture: this script starts it once (fresh temporary directory, a free
# port picked at random in 20000-60000, 127.0.0.1 only, no persistence),
# waits until it answers PING, exports
#     DQ_TEST_REDIS_PORT  its port
#     DQLAB               absolute path of the dqlab binary
# runs every BUILD_DIR/tests/test_* binary and then tests/browser/check.sh
# (the report's first screen in headless Chromium; it takes the same
# arguments and prints the same summary line, as "test_browser"), prints
# each one's Criterion summary, then one total line "N passed, N failed",
# and stops the server on every exit path (trap on EXIT INT TERM), as
# hiredis's test.sh does.
#
# Exit: 0 when every binary passed, 1 when any failed or crashed, 2 on a
# usage or setup error.  A missing redis-server or chromium is an error
# (exit 2), never a reason to skip: a test run without them must not look
# green.
#
# Tests share the server; each uses its own queue name and none flushes it.
# Tests that change server config (notify-keyspace-events, ...) must start
# their own server or run in a binary with --jobs 1 (none yet).
#
# Environment: DQ_TEST_JOBS (parallel tests per binary; default the number
# of CPUs, at most 4), DQ_TEST_BINARY_TIMEOUT (seconds per binary, default
# 1800; each test also has its own Criterion .timeout).
# POSIX sh on purpose: the Makefile runs it with `sh`.
set -u

die() {
    echo "tests/run.sh: $*" >&2
    exit 2
}

[ $# -ge 2 ] || die "usage: sh tests/run.sh BUILD_DIR DQLAB [criterion args...]"
build=$1
dqlab=$2
shift 2

[ -d "$build/tests" ] || die "$build/tests: no such directory (run make test-build)"
[ -x "$dqlab" ] || die "$dqlab: no such executable (run make test-build)"
command -v redis-server >/dev/null 2>&1 ||
    die "redis-server not found in PATH (apt-get install redis-server)"
command -v redis-cli >/dev/null 2>&1 ||
    die "redis-cli not found in PATH (apt-get install redis-tools)"
command -v chromium >/dev/null 2>&1 ||
    die "chromium not found in PATH (apt-get install chromium fonts-dejavu-core)"

case $dqlab in
/*) ;;
*) dqlab=$(pwd)/$dqlab ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dqlab-test.XXXXXX") || die "mktemp failed"
redis_pid=""
test_pid=""

cleanup() {
    if [ -n "$test_pid" ]; then
        kill "$test_pid" 2>/dev/null
        wait "$test_pid" 2>/dev/null
        test_pid=""
    fi
    if [ -n "$redis_pid" ]; then
        kill "$redis_pid" 2>/dev/null
        wait "$redis_pid" 2>/dev/null
        redis_pid=""
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A random port in [20000, 60000) from /dev/urandom (dash has no $RANDOM).
random_port() {
    n=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
    echo $((20000 + n % 40000))
}

# Starts redis-server on port $1 in the background; returns 0 once it
# answers PING and reports our directory (so a server someone else runs on
# that port cannot be mistaken for ours), 1 when it exited or did not come
# up within 5 s.
start_redis() {
    p=$1
    redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
        --daemonize no --dir "$tmp" --logfile "$tmp/redis-$p.log" &
    redis_pid=$!
    i=0
    while [ $i -lt 50 ]; do
        if ! kill -0 "$redis_pid" 2>/dev/null; then
            wait "$redis_pid" 2>/dev/null
            redis_pid=""
            return 1
        fi
        if [ "$(redis-cli -p "$p" ping 2>/dev/null)" = PONG ] &&
            [ "$(redis-cli -p "$p" config get dir 2>/dev/null | sed -n 2p)" \
                = "$(cd "$tmp" && pwd -P)" ]; then
            return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    kill "$redis_pid" 2>/dev/null
    wait "$redis_pid" 2>/dev/null
    redis_pid=""
    return 1
}

# Reads a test binary's log and prints "OURS CRITERION": how many
# LeakSanitizer leak reports have a stack frame from dqlab code, and how
# many lie wholly inside libcriterion/libc (Criterion 2.4's runner leaks a
# few 48-byte blocks when it runs tests in parallel; not ours to fix).
leak_counts() {
    awk '
    function tally() { if (ours) o++; else c++; inb = 0 }
    /^(Direct|Indirect) leak of/ { if (inb) tally(); inb = 1; ours = 0; next }
    inb && /^ *#[0-9]+ / {
        if ($0 !~ /interceptor_|asan_malloc|libcriterion\.so|libasan\.so|libubsan\.so|libc\.so|ld-linux/)
            ours = 1
        next
    }
    inb { tally() }
    END { if (inb) tally(); printf "%d %d\n", o, c }'
}

port=""
tries=0
while [ $tries -lt 20 ]; do
    p=$(random_port)
    if start_redis "$p"; then
        port=$p
        break
    fi
    tries=$((tries + 1))
done
if [ -z "$port" ]; then
    echo "tests/run.sh: could not start redis-server after $tries tries; last log:" >&2
    tail -n 5 "$tmp"/redis-*.log >&2 2>/dev/null
    exit 2
fi
version=$(redis-server --version | sed 's/.* v=\([^ ]*\).*/\1/')
echo "tests/run.sh: redis-server $version on 127.0.0.1:$port" \
    "(pid $redis_pid, dir $tmp)"

DQ_TEST_REDIS_PORT=$port
DQLAB=$dqlab
export DQ_TEST_REDIS_PORT DQLAB
# Sanitizer builds: silence the leaks inside libcriterion's runner (see
# tests/lsan.supp); leak_counts below still fails a report with our frames.
here=$(cd "$(dirname "$0")" && pwd)
LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS

jobs=${DQ_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$jobs" -gt 4 ] 2>/dev/null && jobs=4
bin_timeout=${DQ_TEST_BINARY_TIMEOUT:-1800}

total_pass=0
total_fail=0
total_skip=0
failed_bins=""
nbins=0
for bin in "$build"/tests/test_* "$here/browser/check.sh"; do
    case $bin in *.o | *.d) continue ;; esac
    interp=""
    name=$(basename "$bin")
    if [ "$bin" = "$here/browser/check.sh" ]; then
        interp=sh
        name=test_browser
    fi
    [ -f "$bin" ] && { [ -n "$interp" ] || [ -x "$bin" ]; } || continue
    # Counts the Criterion binaries (none means nothing was built).
    [ -n "$interp" ] || nbins=$((nbins + 1))
    log=$tmp/$name.log
    echo "== $name"
    # In the background so that a signal to this script runs its trap at
    # once instead of after the binary ends.
    # --tap also writes a TAP report, the only place Criterion 2.4 names the
    # tests it skipped (cr_skip_test) and why.
    # shellcheck disable=SC2086 # $interp is "sh" or nothing
    timeout "$bin_timeout" $interp "$bin" --jobs "$jobs" --tap="$log.tap" "$@" \
        >"$log" 2>&1 &
    test_pid=$!
    wait "$test_pid"
    rc=$?
    test_pid=""
    # Criterion colours its output; strip ANSI escapes before parsing.
    sed 's/\x1b\[[0-9;]*m//g' "$log" >"$log.txt"
    # Non-verbose Criterion prints only failures and the synthesis line.
    grep -v '^\[====\] Synthesis' "$log.txt"
    synth=$(grep 'Synthesis: Tested:' "$log.txt" | tail -n 1)
    # "ok - suite::test  # SKIP why"; "# SKIP test was skipped" is a test
    # left out by --filter, not a skip.
    if [ -f "$log.tap" ]; then
        skips=$(grep '# SKIP' "$log.tap" | grep -v '# SKIP test was skipped$' |
            sed 's/^ok - \([^ ]*\) *# SKIP \(.*\)/\1 (\2)/')
        if [ -n "$skips" ]; then
            nskip=$(echo "$skips" | wc -l)
            total_skip=$((total_skip + nskip))
            echo "$skips" | sed "s/^/$name: skipped /"
        fi
    fi
    leaks=$(leak_counts <"$log.txt")
    our_leaks=${leaks% *}
    crit_leaks=${leaks#* }
    bad=0
    if [ -z "$synth" ]; then
        echo "$name: no Criterion summary (exit status $rc)"
        total_fail=$((total_fail + 1))
        bad=1
    else
        echo "$name: ${synth#*Synthesis: }"
        pass=$(echo "$synth" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
        fail=$(echo "$synth" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
        total_pass=$((total_pass + ${pass:-0}))
        total_fail=$((total_fail + ${fail:-0}))
        if [ "${fail:-0}" -gt 0 ]; then
            bad=1
        elif [ "$our_leaks" -gt 0 ]; then
            # A test process's leak report comes after Criterion has
            # counted the test as passed: count it here.
            echo "$name: LeakSanitizer reported $our_leaks leak(s)" \
                "from dqlab code (above)"
            total_fail=$((total_fail + 1))
            bad=1
        elif [ $rc -ne 0 ]; then
            if [ "$crit_leaks" -gt 0 ] && [ $rc -ne 124 ]; then
                echo "$name: ignoring $crit_leaks leak(s) inside" \
                    "libcriterion's own runner (Criterion 2.4 with" \
                    "--jobs > 1; no dqlab frame)"
            else
                bad=1
            fi
        fi
    fi
    if [ $bad -ne 0 ]; then
        [ $rc -eq 124 ] && echo "$name: killed after $bin_timeout s"
        failed_bins="$failed_bins $name"
    fi
done

if [ $nbins -eq 0 ]; then
    echo "tests/run.sh: no test binaries in $build/tests" >&2
    exit 2
fi
[ $total_skip -gt 0 ] &&
    echo "$total_skip skipped (a declared flag or optional op is absent; see above)"
echo "$total_pass passed, $total_fail failed"
if [ -n "$failed_bins" ]; then
    echo "FAILED:$failed_bins"
    exit 1
fi
exit 0
