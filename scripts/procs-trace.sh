#!/usr/bin/env bash
# Traces --adaptive-procs: starts a fresh cluster in a temporary
# directory, creates pool bp (size SIZE, default 3), and runs the phases
# of scripts/bench-vs-ceph.sh (4 MiB writes, sequential and random reads,
# cleanup, 4 KiB writes and random reads), SECS seconds each (default 8),
# printing every half second each OSD's cuttle_osd_gomaxprocs and the
# phase under way, and after each phase its bandwidth, IOPS and p99. The
# OSDs' stores are 64 GiB, as bench-vs-ceph.sh makes them.
#
#   scripts/procs-trace.sh BIN [SECS]
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,8p "$0" >&2; exit 2; }
BIN=$1 SECS=${2:-8} SIZE=${SIZE:-3}
D=$(mktemp -d /var/tmp/procs-trace.XXXXXX)
w=
trap '[ -n "$w" ] && kill "$w" 2>/dev/null; "$BIN" cluster down --dir "$D" >/dev/null 2>&1 || true; rm -rf "$D"' EXIT
export CUTTLE_CONF=$D/cuttle.conf
"$BIN" cluster up --dir "$D" --auth none --osd-size 64G >/dev/null 2>&1
m=$("$BIN" cluster status --dir "$D" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d if isinstance(d,list) else d.get("daemons",d); print(" ".join(x["metrics_addr"] for x in d if x["name"].startswith("osd")))')
echo idle > "$D/phase"
(while true; do
	l="$(date +%T.%1N) $(cat "$D/phase"):"
	for a in $m; do l="$l $(curl -s "http://$a/metrics" | awk '/^cuttle_osd_gomaxprocs/ {print $2}')"; done
	echo "$l"
	sleep 0.5
done) &
w=$!
"$BIN" osd pool create bp 64 --size "$SIZE" --min-size 1 --rule replicated_osd --yes-i-really-mean-it >/dev/null
phase() {
	local name=$1
	echo "$name" > "$D/phase"
	shift
	"$BIN" bench -p bp "$SECS" "$@" > "$D/out" 2>&1
	echo "== $name: $(awk '/Bandwidth \(MB/ {b=$3} /Average IOPS/ {i=$3} /p99 latency/ {p=$3} END {printf "%s MB/s %s IOPS p99 %s s", b, i, p}' "$D/out")"
}
phase 4m-write write -t 16 --no-cleanup
phase 4m-seq seq -t 16
phase 4m-rand rand -t 16
echo cleanup > "$D/phase"
"$BIN" bench -p bp cleanup >/dev/null 2>&1 || true
phase 4k-write write -t 16 -b 4096 --no-cleanup
phase 4k-rand rand -t 16
