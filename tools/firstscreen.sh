#!/bin/sh
# firstscreen.sh -- check in a real browser what a reader of the report sees
# first, and that its wide tables scroll instead of widening the page.
#
#   sh tools/firstscreen.sh [--screenshot PNG] [--timeout S] HTML
#   e.g. sh tools/firstscreen.sh --screenshot report/out/firstscreen.png \
#            report/out/index.html          (what `make test-browser` runs)
#
# Only a layout engine knows where things land on a screen (fonts, tables,
# figures, CSS), so this runs Debian's headless Chromium on the page and
# reads back what it measured; nothing here parses the report's content.
#
# The contract with the report's HTML:
#   - an element with id "contents": the contents list, whose links to
#     anchors on the page (<a href="#id">) all point at an existing id;
#   - an element with id "summary-matrix": the summary table (the table
#     itself, or an element whose first <table> it is);
#   - at 1280x1200 (the first screen): the top of #contents is above
#     1200 px, the top of #summary-matrix is above 1200 px and its first
#     data row (the first <tr> with a <td>) ends at or above 1200 px;
#   - at 1280 and at 390 px wide: the page does not scroll sideways
#     (document.documentElement.scrollWidth <= clientWidth + 1), and no
#     element sticks out past the right edge of the viewport except inside
#     a horizontally scrollable container (overflow-x: auto or scroll: wrap
#     wide tables in <div style="overflow-x:auto">);
#   - every <img> on the page loaded.
# Positions are CSS pixels from the top of the document, with the browser's
# classic 15 px scrollbar taken off the width, as on a desktop.
#
# Exit: 0 when the page meets the contract (one "ok" line with the figures);
# 1 when it does not: one line per failure, naming what was where, e.g.
#   index.html: #summary-matrix top at 2450 px, expected < 1200 px at 1280 px wide
# 2 on a usage or setup error (no chromium: the apt-get line to run; the
# browser failed, timed out or sent no measurements).
#
# How: the page is copied into a temporary directory (with symlinks to its
# directory's other files, so relative figures load) and a small script is
# appended that measures it with getBoundingClientRect() once it has loaded.
# A wrapper page holds it twice, in a 1280x1200 and a 390x1200 <iframe>:
# an iframe's viewport is exactly its size, which the browser window is not
# (headless Chromium's window keeps 143 px of the height for its own frame
# and is never narrower than 500 px).  Each frame posts its lines to the
# wrapper, which writes them into <pre id="dq-layout">; one `chromium
# --headless --dump-dom --screenshot` run prints that DOM and takes the
# first screen.  Lines carry a random nonce, so text on the page cannot
# pass for measurements.  Chromium runs under `timeout` in its own process
# group with a new empty profile; on every exit path it is killed and the
# temporary directory (profile included) removed.
#
# Environment: DQ_BROWSER_TIMEOUT (seconds for the browser, default 60);
# DQ_CHROMIUM (the browser to run, default chromium; the tests set it to
# check the error paths).
# POSIX sh, like tests/run.sh.
set -u

WIDE=1280
FOLD=1200
NARROW=390
me=tools/firstscreen.sh

die() {
    echo "$me: $*" >&2
    exit 2
}

shot=""
limit=${DQ_BROWSER_TIMEOUT:-60}
chromium=${DQ_CHROMIUM:-chromium}
while [ $# -gt 0 ]; do
    case $1 in
    --screenshot) [ $# -ge 2 ] || die "--screenshot needs a path"; shot=$2; shift 2 ;;
    --screenshot=*) shot=${1#*=}; shift ;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; limit=$2; shift 2 ;;
    --timeout=*) limit=${1#*=}; shift ;;
    --) shift; break ;;
    -*) die "unknown option '$1' (usage: sh $me [--screenshot PNG] [--timeout S] HTML)" ;;
    *) break ;;
    esac
done
[ $# -eq 1 ] || die "usage: sh $me [--screenshot PNG] [--timeout S] HTML"
html=$1
case $limit in '' | *[!0-9]*) die "--timeout '$limit': expected whole seconds" ;; esac
[ "$limit" -gt 0 ] || die "--timeout must be at least 1 s"
[ -f "$html" ] && [ -r "$html" ] || die "$html: no such readable file"
if ! command -v "$chromium" >/dev/null 2>&1; then
    echo "$me: $chromium not found; run as root:" >&2
    echo "  apt-get update && apt-get install -y chromium fonts-dejavu-core" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dqlab-firstscreen.XXXXXX") || die "mktemp failed"
browser_pid=""

# Ends the browser (timeout forwards the signal to chromium's whole process
# group), then any process still naming our profile directory (a helper
# that left the group), by pid; then removes the directory.
cleanup() {
    if [ -n "$browser_pid" ]; then
        kill "$browser_pid" 2>/dev/null
        wait "$browser_pid" 2>/dev/null
        browser_pid=""
    fi
    # "profil[e]": a pattern that does not match this grep's own command line.
    for f in $(grep -la -- "--user-data-dir=$tmp/profil[e]" /proc/[0-9]*/cmdline \
        2>/dev/null); do
        p=${f#/proc/}
        kill -9 "${p%/cmdline}" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

site=$tmp/site
mkdir "$site" "$tmp/profile" || die "mkdir in $tmp failed"
src_dir=$(cd "$(dirname "$html")" && pwd -P) || die "$html: cannot resolve its directory"
for f in "$src_dir"/*; do
    [ -e "$f" ] || continue
    case ${f##*/} in dq-page.html | dq-frame.html) continue ;; esac
    ln -s "$f" "$site/" || die "cannot link $f into $site"
done
nonce=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
[ -n "$nonce" ] || die "cannot read /dev/urandom"

# The measuring script, appended after the page's last byte: the HTML parser
# puts a <script> found after </html> into the body, so it works on any page
# without touching its markup.  It runs after the load event (images are in)
# and the page's own load handlers.
cp "$html" "$site/dq-page.html" || die "cannot copy $html"
sed -e "s/@NONCE@/$nonce/g" -e "s/@WIDE@/$WIDE/g" -e "s/@FOLD@/$FOLD/g" \
    -e "s/@NARROW@/$NARROW/g" >>"$site/dq-page.html" <<'EOF'
<script>
(function () {
  'use strict';
  var WIDE = @WIDE@, FOLD = @FOLD@, NARROW = @NARROW@;
  var out = [];
  function fail(msg) { out.push('fail ' + msg); }
  function px(v) { return Math.round(v) + ' px'; }
  function text(el) {
    var s = (el.textContent || '').replace(/\s+/g, ' ').trim();
    return s.length > 50 ? s.slice(0, 47) + '...' : s;
  }
  // "table#id under "Heading"": the element and the nearest heading before it.
  function describe(el) {
    var s = el.tagName.toLowerCase(), h = null, hs, i;
    if (el.id) s += '#' + el.id;
    else if (el.classList.length) s += '.' + el.classList[0];
    hs = document.querySelectorAll('h1,h2,h3,h4,h5,h6');
    for (i = 0; i < hs.length; i++)
      if (hs[i] === el || hs[i].contains(el) ||
          (hs[i].compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING))
        h = hs[i];
    if (h && h !== el) s += ' under "' + text(h) + '"';
    return s;
  }
  function top(el) { return el.getBoundingClientRect().top + window.scrollY; }
  function shown(el) {
    var r = el.getBoundingClientRect();
    return r.width > 0 || r.height > 0;
  }
  function inScroller(el) {
    for (var p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll') return true;
    }
    return false;
  }
  function firstScreen() {
    var at = ' at ' + WIDE + ' px wide', c = document.getElementById('contents');
    var m = document.getElementById('summary-matrix'), t, row, i, links, bad = [];
    if (!c) fail('no element with id "contents" (the contents list)');
    else if (!shown(c)) fail('#contents is not displayed (zero size)');
    else {
      if (top(c) >= FOLD)
        fail('#contents top at ' + px(top(c)) + ', expected < ' + FOLD + ' px' + at);
      links = c.querySelectorAll('a[href^="#"]');
      if (!links.length) fail('#contents has no links to anchors on the page (<a href="#id">)');
      for (i = 0; i < links.length; i++) {
        var id = decodeURIComponent(links[i].getAttribute('href').slice(1));
        if (!document.getElementById(id)) bad.push(links[i]);
      }
      for (i = 0; i < bad.length && i < 3; i++)
        fail('#contents link "' + bad[i].getAttribute('href') + '" ("' + text(bad[i]) +
             '") points at no element on the page');
      if (bad.length > 3) fail('#contents has ' + (bad.length - 3) + ' more broken links');
      out.push('info contents_top=' + Math.round(top(c)) + ' links=' + links.length);
    }
    if (!m) { fail('no element with id "summary-matrix" (the summary table)'); return; }
    if (!shown(m)) { fail('#summary-matrix is not displayed (zero size)'); return; }
    if (top(m) >= FOLD)
      fail('#summary-matrix top at ' + px(top(m)) + ', expected < ' + FOLD + ' px' + at);
    t = m.tagName === 'TABLE' ? m : m.querySelector('table');
    if (!t) { fail('#summary-matrix (' + describe(m) + ') is not a table and holds none'); return; }
    for (i = 0; i < t.rows.length && !row; i++)
      if (t.rows[i].querySelector('td')) row = t.rows[i];
    if (!row) { fail('#summary-matrix has no data row (a <tr> with a <td>)'); return; }
    var bottom = row.getBoundingClientRect().bottom + window.scrollY;
    if (bottom > FOLD)
      fail('#summary-matrix first data row ("' + text(row.cells[0]) + '") ends at ' + px(bottom) +
           ', expected <= ' + FOLD + ' px' + at);
    out.push('info matrix_top=' + Math.round(top(m)) + ' row_bottom=' + Math.round(bottom));
  }
  // The page must not scroll sideways; name the outermost elements that stick
  // out of the viewport outside any horizontally scrollable container.
  function widths(w) {
    var de = document.documentElement, cw = de.clientWidth, sw = de.scrollWidth;
    var all = document.body.querySelectorAll('*'), over = [], i, r;
    var at = ' at ' + w + ' px wide';
    if (sw > cw + 1)
      fail('the page is ' + px(sw) + ' wide' + at + ' (viewport ' + px(cw) +
           '): it scrolls sideways');
    for (i = 0; i < all.length; i++) {
      r = all[i].getBoundingClientRect();
      if ((r.width > 0 || r.height > 0) && r.right + window.scrollX > cw + 1 &&
          !inScroller(all[i]))
        over.push(all[i]);
    }
    over = over.filter(function (el) { return over.indexOf(el.parentElement) < 0; });
    for (i = 0; i < over.length && i < 3; i++) {
      r = over[i].getBoundingClientRect();
      fail(describe(over[i]) + ' is ' + px(r.width) + ' wide, right edge at ' +
           px(r.right + window.scrollX) + at + ' (viewport ' + px(cw) +
           '), not inside a horizontally scrollable container (overflow-x: auto)');
    }
    if (over.length > 3) fail((over.length - 3) + ' more elements stick out' + at);
    out.push('info width' + w + '=' + sw);
  }
  function images() {
    var im = document.images, i;
    for (i = 0; i < im.length; i++)
      if (!im[i].complete || !im[i].naturalWidth)
        fail('image "' + im[i].getAttribute('src') + '" (' + describe(im[i]) + ') did not load');
  }
  function run() {
    var w = window.name === 'dq-wide' ? WIDE : NARROW;
    if (innerWidth !== w || innerHeight !== FOLD)
      out.push('error viewport ' + innerWidth + 'x' + innerHeight + ', expected ' + w + 'x' + FOLD);
    else {
      if (w === WIDE) { firstScreen(); images(); }
      widths(w);
    }
  }
  function go() {
    try { run(); } catch (e) {
      out.push('error script: ' + String(e && e.stack || e).replace(/\s*\n\s*/g, ' | '));
    }
    parent.postMessage({ nonce: '@NONCE@', frame: window.name, lines: out }, '*');
  }
  window.addEventListener('load', function () { setTimeout(go, 0); });
})();
</script>
EOF

# The wrapper: both frames at the top left (the narrow one below the first
# screen), no scrollbars of its own; it writes what the frames sent, or
# "missing FRAME" for a frame that sent nothing within 4 s of virtual time.
cat >"$site/dq-frame.html" <<EOF
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>dqlab first screen</title>
<style>html,body{margin:0;padding:0;overflow:hidden}iframe{display:block;border:0}</style>
</head><body>
<iframe name="dq-wide" src="dq-page.html" style="width:${WIDE}px;height:${FOLD}px"></iframe>
<iframe name="dq-narrow" src="dq-page.html" style="width:${NARROW}px;height:${FOLD}px"></iframe>
<script>
(function () {
  var got = {}, done = false;
  function write() {
    if (done) return;
    done = true;
    var s = '\n', f, i;
    ['dq-wide', 'dq-narrow'].forEach(function (f) {
      if (!got[f]) s += '$nonce ' + f + ' missing\n';
      else for (i = 0; i < got[f].length; i++) s += '$nonce ' + f + ' ' + got[f][i] + '\n';
    });
    var p = document.createElement('pre');
    p.id = 'dq-layout';
    p.hidden = true;
    p.textContent = s + '$nonce end\n';
    document.body.appendChild(p);
  }
  addEventListener('message', function (e) {
    var d = e.data;
    if (!d || d.nonce !== '$nonce' || got[d.frame]) return;
    got[d.frame] = d.lines;
    if (got['dq-wide'] && got['dq-narrow']) write();
  });
  setTimeout(write, 4000);
})();
</script>
</body></html>
EOF

# Flags: no sandbox (root, containers), no GPU; the closed network refuses
# the browser's own connections, so none are made (background networking,
# component updates, sync, QUIC).  --virtual-time-budget lets the page load
# and its timers run, then --dump-dom prints the DOM.
flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
--disable-background-networking --disable-component-update --disable-sync \
--user-data-dir=$tmp/profile --window-size=$WIDE,$FOLD --virtual-time-budget=5000"
# HOME and the XDG directories point into the temporary directory too, so
# that the browser writes nothing into the user's home.
mkdir "$tmp/home" || die "mkdir in $tmp failed"
# shellcheck disable=SC2086
HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_CACHE_HOME=$tmp/home/.cache \
    XDG_DATA_HOME=$tmp/home/.local/share \
    timeout -k 2 "$limit" "$chromium" $flags --dump-dom --screenshot="$tmp/shot.png" \
    "file://$site/dq-frame.html" >"$tmp/dom.html" 2>"$tmp/chromium.log" &
browser_pid=$!
wait "$browser_pid"
rc=$?
browser_pid=""
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    die "chromium did not finish within $limit s on $html (killed)"
elif [ $rc -ne 0 ]; then
    echo "$me: chromium exited with status $rc on $html; its last log lines:" >&2
    grep -v 'dbus\|unexpected operator' "$tmp/chromium.log" | tail -n 5 >&2
    exit 2
fi

sed -n '/<pre id="dq-layout"/,/<\/pre>/p' "$tmp/dom.html" |
    sed -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e "s/&#39;/'/g" \
        -e 's/&nbsp;/ /g' -e 's/&amp;/\&/g' |
    sed -n "s/^$nonce //p" >"$tmp/lines"
grep -qx end "$tmp/lines" ||
    die "no measurements in chromium's output for $html (see $me's header)"
if grep -q '^dq-[a-z]* missing$' "$tmp/lines"; then
    die "$html: no measurements came from the frame(s) $(sed -n \
        's/^dq-\([a-z]*\) missing$/\1/p' "$tmp/lines" | tr '\n' ' ')(a script error on the page?)"
fi
# Prints the lines of one kind (fail, error) after "PREFIX: ".
lines_of() {
    sed -n "s/^dq-[a-z]* $1 //p" "$tmp/lines" | while IFS= read -r l; do
        printf '%s: %s\n' "$2" "$l"
    done
}
if grep -q '^dq-[a-z]* error ' "$tmp/lines"; then
    lines_of error "$me: $html" >&2
    exit 2
fi

if [ -n "$shot" ]; then
    [ -s "$tmp/shot.png" ] || die "chromium wrote no screenshot"
    cp "$tmp/shot.png" "$shot.tmp" && mv "$shot.tmp" "$shot" ||
        die "cannot write $shot"
fi
if grep -q '^dq-[a-z]* fail ' "$tmp/lines"; then
    lines_of fail "$html"
    [ -n "$shot" ] && echo "$html: first screen in $shot"
    exit 1
fi
info=$(sed -n 's/^dq-[a-z]* info //p' "$tmp/lines" | tr '\n' ' ')
echo "$html: ok at ${WIDE}x$FOLD and $NARROW px wide (${info% })${shot:+; first screen in $shot}"
exit 0
