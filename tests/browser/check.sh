#!/bin/sh
# check.sh -- tests of the first-screen check (tools/firstscreen.sh) in real
# headless Chromium, on two hand-written pages shaped like the report, and
# on a real report of a smoke run.
#
#   sh tests/browser/check.sh [--filter PATTERN] [--tap=FILE] [other args]
#
# tests/run.sh runs it as one more test binary, with the arguments it gives
# Criterion binaries: --filter PATTERN (or --filter=PATTERN) picks tests by
# name, a shell glob on "browser/NAME" as Criterion's filter is; --tap=FILE
# writes a TAP report; --jobs and the rest are accepted and ignored.  Its
# output looks like Criterion's: "[----]" detail lines and "[FAIL]
# browser::NAME" for each failure, then one "[====] Synthesis: Tested: N |
# Passing: N | Failing: N | Crashing: 0" line.
#
# Tests:
#   browser/fixture_passes   fixture.html meets the contract: exit 0, and
#                            the screenshot is a 1280x1200 PNG
#   browser/negative_fails   negative.html breaks it on purpose: exit 1 and
#                            one line for each planted fault, with the
#                            measured positions (#summary-matrix >= 3000 px)
#   browser/no_browser_hint  no browser: exit 2 and the apt-get line
#   browser/timeout_kills_browser  a browser that never answers is killed
#                            after --timeout 1: exit 2, no process of it
#                            left, no temporary directory left
#   browser/long_labels_wrap  long-labels.html (a body) under the report's
#                            own head, report/page.html: long labels with
#                            no space in bold, lists, links and code break
#                            at 390 px instead of widening the page: exit 0
#   browser/real_report_passes  the report `dqlab report` writes meets the
#                            contract: the experiments of tests/smoke/ (the
#                            quick suite's plots in miniature, about 20 s on
#                            private servers) under a temporary directory,
#                            three witness charts (dqlab witness), their
#                            report, the check on its index.html (the
#                            charts on the cards must load); and its
#                            summary matrix holds a measured figure in
#                            every cell of the lua-lease row
# Environment: DQLAB, the dqlab binary (tests/run.sh sets it).
# Exit: 0 when all selected tests passed, 1 otherwise.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check=tools/firstscreen.sh
# From the top of the tree, so that the check's lines name the fixtures as
# tests/browser/NAME.html.
cd "$root" || exit 1

filter="*"
tap=""
while [ $# -gt 0 ]; do
    case $1 in
    --filter) [ $# -ge 2 ] && filter=$2 && shift ;;
    --filter=*) filter=${1#*=} ;;
    --tap=*) tap=${1#*=} ;;
    esac
    shift
done

work=$(mktemp -d "${TMPDIR:-/tmp}/dqlab-browser-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tested=0
passed=0
failed=0
taplines=""
ntap=0
why=""

# Records one more reason the current test failed.
bad() {
    why="$why$1
"
}

# run NAME: runs test_NAME when the filter selects browser/NAME.
run() {
    ntap=$((ntap + 1))
    # shellcheck disable=SC2254
    case "browser/$1" in
    $filter) ;;
    *)
        taplines="${taplines}ok - browser::$1  # SKIP test was skipped
"
        return
        ;;
    esac
    tested=$((tested + 1))
    why=""
    t0=$(date +%s.%N)
    "test_$1"
    t1=$(date +%s.%N)
    secs=$(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }')
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        taplines="${taplines}ok - browser::$1  (${secs}s)
"
    else
        failed=$((failed + 1))
        printf '%s' "$why" | sed 's|^|[----] tests/browser/check.sh: |'
        echo "[FAIL] browser::$1: (${secs}s)"
        taplines="${taplines}not ok - browser::$1  (${secs}s)
"
    fi
}

# Prints "WIDTH HEIGHT" from a PNG's IHDR chunk, nothing for anything else.
png_size() {
    [ "$(od -An -c -j1 -N3 "$1" 2>/dev/null | tr -d ' ')" = PNG ] || return
    od -An -tu1 -j16 -N8 "$1" | awk '{
        printf "%d %d\n", (($1 * 256 + $2) * 256 + $3) * 256 + $4,
                          (($5 * 256 + $6) * 256 + $7) * 256 + $8 }'
}

test_fixture_passes() {
    out=$work/fixture.out
    sh "$check" --screenshot "$work/fixture.png" tests/browser/fixture.html >"$out" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        bad "firstscreen.sh exited $rc on fixture.html, expected 0; it said:"
        why="$why$(sed 's/^/    /' "$out")
"
    fi
    size=$(png_size "$work/fixture.png")
    [ "$size" = "1280 1200" ] ||
        bad "screenshot $work/fixture.png is '${size:-not a PNG}', expected 1280x1200"
}

# expect FILE REGEX WHAT: FILE has a line matching the extended REGEX.
expect() {
    grep -Eq -- "$2" "$1" || bad "no line for $3 (want /$2/)"
}

test_negative_fails() {
    out=$work/negative.out
    sh "$check" tests/browser/negative.html >"$out" 2>&1
    rc=$?
    [ $rc -eq 1 ] || bad "firstscreen.sh exited $rc on negative.html, expected 1 (a failed check)"
    f='tests/browser/negative\.html: '
    expect "$out" "^$f#contents top at [0-9]+ px, expected < 1200 px at 1280 px wide$" \
        "#contents below the first screen"
    expect "$out" "^$f#summary-matrix top at [0-9]+ px, expected < 1200 px at 1280 px wide$" \
        "#summary-matrix below the first screen"
    top=$(sed -n 's/.*#summary-matrix top at \([0-9]*\) px.*/\1/p' "$out")
    [ "${top:-0}" -ge 3000 ] ||
        bad "#summary-matrix measured at '${top:-nothing}' px, expected >= 3000 (it sits below 3,000 px)"
    expect "$out" "^$f#summary-matrix first data row \(\"heap\"\) ends at [0-9]+ px, expected <= 1200 px" \
        "the first data row below the first screen"
    expect "$out" "^$f#contents link \"#verdicts\" .* points at no element on the page$" \
        "the broken contents link"
    expect "$out" "^${f}image \"figures/missing.svg\" .* did not load$" "the missing image"
    expect "$out" "^${f}the page is [0-9]+ px wide at 390 px wide \(viewport [0-9]+ px\): it scrolls sideways$" \
        "the sideways scroll at 390 px"
    expect "$out" "^${f}table#summary-matrix under \"Summary matrix\" is [0-9]+ px wide, right edge at [0-9]+ px at 390 px wide .*not inside a horizontally scrollable container" \
        "the unwrapped wide table at 390 px"
    [ -z "$why" ] || why="$why$(sed 's/^/    /' "$out")
"
}

test_no_browser_hint() {
    out=$work/hint.out
    DQ_CHROMIUM=$work/no-such-chromium sh "$check" tests/browser/fixture.html >"$out" 2>&1
    rc=$?
    [ $rc -eq 2 ] || bad "firstscreen.sh exited $rc without a browser, expected 2"
    expect "$out" "^  apt-get update && apt-get install -y chromium" "the apt-get hint"
}

# A browser that never answers: firstscreen.sh must kill it after its
# timeout, every process of it, and leave no temporary directory behind.
test_timeout_kills_browser() {
    fake=$work/fake-chromium
    printf '#!/bin/sh\nwhile :; do sleep 1; done\n' >"$fake" && chmod +x "$fake"
    mkdir "$work/tmp"
    out=$work/timeout.out
    DQ_CHROMIUM=$fake TMPDIR=$work/tmp sh "$check" --timeout 1 tests/browser/fixture.html \
        >"$out" 2>&1
    rc=$?
    [ $rc -eq 2 ] || bad "firstscreen.sh exited $rc with a hung browser, expected 2"
    expect "$out" "chromium did not finish within 1 s on .*fixture.html \(killed\)$" \
        "the timeout"
    # "[m]": a pattern that does not match this grep's own command line.
    left=$(grep -la -- "${fake%m}[m]" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)
    [ "$left" -eq 0 ] || bad "$left process(es) of the hung browser left running"
    [ -z "$(ls -A "$work/tmp")" ] || bad "left in TMPDIR: $(ls -A "$work/tmp" | tr '\n' ' ')"
}

# The report's style (report/page.html, as dqlab report writes index.html:
# that head, the body, the end of the page) on long labels without spaces.
test_long_labels_wrap() {
    page=$work/long-labels.html
    out=$work/long-labels.out
    { cat report/page.html tests/browser/long-labels.html
      printf '</body>\n</html>\n'; } >"$page"
    sh "$check" "$page" >"$out" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        bad "firstscreen.sh exited $rc on long-labels.html under report/page.html, expected 0; it said:"
        why="$why$(sed 's/^/    /' "$out")
"
    fi
}

# The first screen of a report built from real results: what `make report`
# writes, in miniature.  Exit 1 from an experiment is a finding (a strategy
# broke a guarantee it declares), as in `make report`; anything else fails.
test_real_report_passes() {
    dq=${DQLAB:-}
    if [ -z "$dq" ] || [ ! -x "$dq" ]; then
        bad "DQLAB is not the dqlab binary ('$dq'): run through tests/run.sh"
        return
    fi
    res=$work/smoke-results
    out=$work/smoke.out
    for f in tests/smoke/*.ini; do
        "$dq" experiment "$f" --results "$res" >"$out" 2>&1
        rc=$?
        if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
            bad "dqlab experiment $f exited $rc; its last lines:"
            why="$why$(tail -n 5 "$out" | sed 's/^/    /')
"
            return
        fi
    done
    # Witness charts for the cards (their images must load too); not
    # naive's race, which may take many attempts on a loaded machine.
    if ! "$dq" witness --results "$res" \
        --only lease-redelivery,expiry-loss,lua-late-head >"$out" 2>&1; then
        bad "dqlab witness failed: $(tail -n 1 "$out")"
        return
    fi
    if ! "$dq" report "$res" --out "$work/smoke-report" >"$out" 2>&1; then
        bad "dqlab report on the smoke results failed: $(tail -n 1 "$out")"
        return
    fi
    sh "$check" --screenshot "$work/smoke.png" "$work/smoke-report/index.html" \
        >"$out" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        bad "firstscreen.sh exited $rc on the smoke run's report, expected 0; it said:"
        why="$why$(sed 's/^/    /' "$out")
"
    fi
    grep -q '^!\[lease-redelivery\](figures/witness-lease-redelivery.svg)' \
        "$work/smoke-report/REPORT.md" || bad "no witness chart on lua-lease's card"
    row=$(grep '^| \[lua-lease\](#card-lua-lease) |' "$work/smoke-report/REPORT.md")
    [ -n "$row" ] || bad "REPORT.md has no summary matrix row for lua-lease"
    case $row in
    *"not measured"*) bad "the lua-lease row has a cell not measured: $row" ;;
    esac
}

run fixture_passes
run negative_fails
run no_browser_hint
run timeout_kills_browser
run long_labels_wrap
run real_report_passes

if [ -n "$tap" ]; then
    { echo "TAP version 13"; echo "1..$ntap"; printf '%s' "$taplines"; } >"$tap"
fi
echo "[====] Synthesis: Tested: $tested | Passing: $passed | Failing: $failed | Crashing: 0 "
[ $failed -eq 0 ]
