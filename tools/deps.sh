#!/bin/sh
# deps.sh -- make sure the Debian 12 packages dqlab needs are installed.
#
#   sh tools/deps.sh          what `make` and `make report` need
#   sh tools/deps.sh test     that plus what `make test` needs: Chromium,
#                             for the first-screen check of the report
#                             (tools/firstscreen.sh), and the font it lays
#                             the page out with
#
# Called by `make report`, `make test` and `make test-browser` before they
# build.  As root it installs what is missing with apt-get; otherwise it
# prints the exact apt-get line and fails, so the user knows what to run.
set -eu

PKGS="gcc libc6-dev make pkg-config redis-server redis-tools redis-sentinel \
libhiredis-dev libcriterion-dev libjansson-dev libcmark-dev libinih-dev \
gnuplot-nox mscgen"
TEST_PKGS="chromium fonts-dejavu-core"

case ${1:-} in
"") ;;
test) PKGS="$PKGS $TEST_PKGS" ;;
*)
    echo "tools/deps.sh: unknown group '$1' (expected nothing or 'test')" >&2
    exit 2
    ;;
esac

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "dqlab: missing Debian packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y$missing" >&2
    exit 2
fi
echo "dqlab: installing missing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
