#!/usr/bin/env bash
# The cost of snapshots on small overwrites, on Cuttle or on Ceph (issue 37:
# "a 4 KiB write benchmark on a pool with a snapshot taken every second
# loses at most 20% against no snapshots"). Two size-3 pools of 32 PGs,
# plain and snapped; ROUNDS times in turn: SECS seconds of 4 KiB whole-object
# overwrites of 256 objects with 16 writes in flight on plain, then the same
# on snapped with a self-managed snapshot every second. Each object is
# rewritten many times a second, so every object is copied after every
# snapshot. Prints each run and the mean of snapped/plain over the rounds.
#
# Usage: scripts/bench-snaps.sh cuttle DIR [SECS] [ROUNDS]
#        scripts/bench-snaps.sh ceph [SECS] [ROUNDS]
# cuttle: starts a fresh cluster in DIR (which must not exist) with $CUTTLE
#   (default: cuttle on PATH), --base-port $BASE_PORT (default 7500),
#   --auth none, runs `cuttle bench ... --reuse 256 [--snap-every 1s]`,
#   and stops the cluster at the end.
# ceph: uses the Ceph that ../shared/anchors/ceph/up.sh started
#   ($CEPH_CONF, default /tmp/ceph-anchor/ceph.conf) and
#   scripts/ceph-snapbench.py (librados: `rados bench` only creates new
#   objects, which are never copied on write); it removes its pools after.
set -euo pipefail
mode=${1:?usage: $0 cuttle DIR [SECS] [ROUNDS] | $0 ceph [SECS] [ROUNDS]}
shift
here=$(cd "$(dirname "$0")" && pwd)

# runs prints "pool iops p99_ms snaps" lines; ratio averages snapped/plain
# over the rounds (each snapped run against the plain run just before it).
ratio() {
	awk '$1 == "plain" {p = $2} $1 == "snapped" && p > 0 {s += $2 / p; n++}
	END {if (n) printf "snapped/plain IOPS, mean of %d rounds: %.3f\n", n, s / n}'
}

case $mode in
cuttle)
	DIR=${1:?DIR}
	SECS=${2:-30} ROUNDS=${3:-3}
	CUTTLE=${CUTTLE:-cuttle}
	[ ! -e "$DIR" ] || { echo "$DIR exists: give a fresh directory" >&2; exit 1; }
	"$CUTTLE" cluster up --dir "$DIR" --auth none --base-port "${BASE_PORT:-7500}" --osd-size 16G > "$DIR.up.log" 2>&1 ||
		{ cat "$DIR.up.log" >&2; exit 1; }
	trap '"$CUTTLE" cluster down --dir "$DIR" > /dev/null 2>&1 || true' EXIT
	c() { "$CUTTLE" --conf "$DIR/cuttle.conf" "$@"; }
	for p in plain snapped; do
		c osd pool create "$p" 32 --size 3 --min-size 2 --rule replicated_osd > /dev/null
	done
	until c status | grep -q "HEALTH_OK"; do sleep 0.5; done
	for r in $(seq "$ROUNDS"); do
		for p in plain snapped; do
			snap=()
			[ "$p" = plain ] || snap=(--snap-every 1s)
			c --format json bench -p "$p" "$SECS" write -b 4096 -t 16 --reuse 256 "${snap[@]}" > "$DIR/$p.$r.json"
			python3 -c 'import json, sys
r = json.load(open(sys.argv[2]))
print(sys.argv[1], round(r["iops"]), round(r["latency_s"]["p99"] * 1000, 1), r.get("snapshots", 0))' "$p" "$DIR/$p.$r.json"
		done
	done | tee "$DIR/runs"
	ratio < "$DIR/runs"
	;;
ceph)
	SECS=${1:-30} ROUNDS=${2:-3}
	export CEPH_CONF=${CEPH_CONF:-/tmp/ceph-anchor/ceph.conf}
	for p in plain snapped; do
		ceph osd pool create "$p" 32 32 > /dev/null 2>&1
		ceph osd pool set "$p" size 3 > /dev/null 2>&1
		ceph osd pool set "$p" min_size 2 > /dev/null 2>&1
		ceph osd pool application enable "$p" rados > /dev/null 2>&1
	done
	trap 'for p in plain snapped; do ceph osd pool rm $p $p --yes-i-really-really-mean-it > /dev/null 2>&1 || true; done' EXIT
	# Every PG active+clean (other pools' warnings may keep Ceph from HEALTH_OK).
	until ceph pg stat | grep -Eq "pgs: ([0-9]+) active\+clean;"; do sleep 1; done
	for r in $(seq "$ROUNDS"); do
		for p in plain snapped; do
			every=0
			[ "$p" = plain ] || every=1
			out=$(/usr/bin/python3 "$here/ceph-snapbench.py" --conf "$CEPH_CONF" --pool "$p" \
				--seconds "$SECS" --reuse 256 --snap-every "$every")
			echo "$p $(sed 's/.*iops=\([0-9]*\).*p99_ms=\([0-9.]*\).*/\1 \2/' <<< "$out") $(sed 's/.*snaps=\([0-9]*\).*/\1/' <<< "$out")"
		done
	done | tee /tmp/ceph-snaps.runs
	ratio < /tmp/ceph-snaps.runs
	;;
*)
	echo "usage: $0 cuttle DIR [SECS] [ROUNDS] | $0 ceph [SECS] [ROUNDS]" >&2
	exit 2
	;;
esac
