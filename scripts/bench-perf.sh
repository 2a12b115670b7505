#!/usr/bin/env bash
# Where a benchmark phase's CPU goes: starts a fresh cluster in a
# temporary directory, creates pool bp (size SIZE, default 3, 64 PGs),
# and records `perf record -a -g` for 10 s in the middle of a 20 s phase
# of `cuttle bench`, 16 ops in flight:
#
#   scripts/bench-perf.sh write BIN OUT   writes of BS bytes (default 4 MiB)
#   scripts/bench-perf.sh rand BIN OUT    random reads, after 15 s of writes
#                                         of BS bytes to read back
#
# OUT gets the bench output and all.perf; the script prints the bench's
# summary and the 25 hottest symbols. Explore further with
#   perf report -i OUT/all.perf --children --sort symbol
# Needs: root, perf (linux-perf).
set -euo pipefail
[ $# -eq 3 ] || { sed -n 2,14p "$0" >&2; exit 2; }
PHASE=$1 BIN=$2 OUT=$3 SIZE=${SIZE:-3} BS=${BS:-4194304}
case $PHASE in write | rand) ;; *) sed -n 2,14p "$0" >&2; exit 2 ;; esac
D=$(mktemp -d /var/tmp/bench-perf.XXXXXX)
trap '"$BIN" cluster down --dir "$D" >/dev/null 2>&1 || true; rm -rf "$D"' EXIT
export CUTTLE_CONF=$D/cuttle.conf
mkdir -p "$OUT"
"$BIN" cluster up --dir "$D" --auth none >/dev/null 2>&1
"$BIN" osd pool create bp 64 --size "$SIZE" --min-size 1 --rule replicated_osd --yes-i-really-mean-it >/dev/null
if [ "$PHASE" = rand ]; then
	"$BIN" bench -p bp 15 write -b "$BS" -t 16 --no-cleanup >/dev/null
	"$BIN" bench -p bp 20 rand -t 16 > "$OUT/bench.txt" &
else
	"$BIN" bench -p bp 20 write -b "$BS" -t 16 > "$OUT/bench.txt" &
fi
b=$!
sleep 5
perf record -F 499 -a -g -o "$OUT/all.perf" -- sleep 10 >/dev/null 2>&1
wait "$b"
grep -E "Bandwidth \(MB|Average IOPS|p99" "$OUT/bench.txt"
perf report -i "$OUT/all.perf" --no-children --sort symbol --stdio -g none 2>/dev/null | grep '%' | head -25 | awk '{print $1, $2, $3}'
