#!/usr/bin/env bash
# A/B benchmark of two (or more) cuttle binaries on one local cluster:
# for each binary in turn, start the cluster in DIR with it, run writes
# of SIZE-byte objects (env SIZE, default 4096) and then random reads of
# them (16 in flight) on pool bench3 (size 3, created on the first
# start), remove the objects, and stop the cluster. Alternating binaries on the same cluster and disk keeps the
# machine's drift out of the comparison (docs/BENCHMARKS.md).
#
# Usage: scripts/bench-ab.sh DIR SECS BIN_A BIN_B [BIN_A BIN_B ...]
# The binaries must speak the same messenger protocol as each other's
# daemons: each run uses one binary for the daemons and the client.
# With SEPARATE=1 each binary keeps a cluster of its own in DIR/NAME
# (NAME: the binary's file name), for builds whose on-disk formats differ
# (an older build cannot read a newer one's maps); the runs still
# alternate on the same disk.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 DIR SECS BIN..." >&2; exit 2; }
DIR=$1 SECS=$2 SIZE=${SIZE:-4096}
shift 2
export CUTTLE_CONF=$DIR/cuttle.conf
summary() { awk '/Bandwidth \(MB/ {b=$3} /Average IOPS/ {i=$3} /p99 latency/ {p=$3} END {printf "%s MB/s, %s IOPS, p99 %s s", b, i, p}'; }
base=$DIR
for bin in "$@"; do
	if [ "${SEPARATE:-}" = 1 ]; then
		DIR=$base/$(basename "$bin")
		mkdir -p "$base"
		export CUTTLE_CONF=$DIR/cuttle.conf
	fi
	fresh=
	[ -f "$DIR/cuttle.conf" ] || fresh=1
	"$bin" cluster up --dir "$DIR" --auth none > "$DIR.up.log" 2>&1 || { cat "$DIR.up.log" >&2; exit 1; }
	if [ -n "$fresh" ]; then
		"$bin" osd pool create bench3 64 --size 3 --min-size 2 --rule replicated_osd > /dev/null
	fi
	w=$("$bin" bench -p bench3 "$SECS" write -b "$SIZE" -t 16 --no-cleanup | summary)
	r=$("$bin" bench -p bench3 "$SECS" rand -t 16 | summary)
	"$bin" bench -p bench3 cleanup > /dev/null 2>&1 || true
	echo "$bin: write $w | rand $r"
	"$bin" cluster down --dir "$DIR" > /dev/null
done
