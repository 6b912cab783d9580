#!/bin/sh
# tools/circles.sh -- checks that no two files of harness/, report/ and
# strategies/ call each other, directly or through others (a call circle):
# from the objects of a build (`make`), each file's undefined symbols are
# matched to the file that defines them (nm), and tsort(1) reports any
# loop in that graph.  Prints the edges of a loop and exits 1 if there is
# one; exits 0 and says so otherwise.  Usage: sh tools/circles.sh [BUILD]
# (default build/default).
set -eu
build=${1:-build/default}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dqlab-circles.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
: > "$tmp/defs"
: > "$tmp/uses"
# every source but the AOF shim (a library of its own, LD_PRELOAD) and
# main.c (which nothing calls)
files=$(ls harness/*.c report/*.c strategies/*.c | grep -v -e aofshim -e harness/main.c)
for c in $files; do
    o="$build/${c%.c}.o"
    [ -f "$o" ] || { echo "circles: $o missing (run make first)" >&2; exit 2; }
    nm "$o" | awk -v f="$c" '$2 ~ /^[TDBRC]$/ {print $3, f}' >> "$tmp/defs"
    nm "$o" | awk -v f="$c" '$1 == "U" {print $2, f}' >> "$tmp/uses"
done
sort -k1,1 -o "$tmp/defs" "$tmp/defs"
sort -k1,1 -o "$tmp/uses" "$tmp/uses"
# user definer, one pair a line, each file also paired with itself so
# that tsort sees every file
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 {print $2, $3}' | sort -u \
    > "$tmp/edges"
for c in $files; do echo "$c $c"; done >> "$tmp/edges"
if tsort "$tmp/edges" > /dev/null 2> "$tmp/err"; then
    echo "circles: none among $(echo "$files" | wc -l) files"
    exit 0
fi
cat "$tmp/err" >&2
exit 1
