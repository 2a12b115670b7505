#!/usr/bin/env bash
# An OSD killed with SIGKILL under a 4 KiB write benchmark, on Cuttle or on
# Ceph (issue 37, "Fast failure detection"): 16 writes in flight on a
# size-3 pool of three OSDs; KILL_AT seconds in, kill -9 one OSD; report
# how long until the monitors mark it down, the seconds of the
# benchmark's per-second output with no write completed, the slowest
# write, and (Cuttle only, whose bench records every completion) the
# longest time between two completions.
#
# Usage: scripts/bench-kill.sh cuttle DIR [SECS] [KILL_AT]
#        scripts/bench-kill.sh ceph [SECS] [KILL_AT]
# cuttle: starts a fresh cluster in DIR (which must not exist) with
#   $CUTTLE (default: cuttle on PATH), --base-port $BASE_PORT (default
#   7500), --auth none, pool bench3 (64 PGs, size 3, min_size 2), and
#   stops it at the end. Raw output in DIR/bench.json.
# ceph: uses the Ceph that ../shared/anchors/ceph/up.sh started
#   ($CEPH_CONF, default /tmp/ceph-anchor/ceph.conf; pool bench3), and
#   restarts the OSD it killed at the end with that directory's lib.sh
#   ($ANCHOR, default ../shared/anchors/ceph beside the repository).
# VICTIM is the OSD killed (default 2). NOKILL=1 (cuttle) kills nothing:
# a control run, for the noise of a loaded machine.
set -euo pipefail
mode=${1:?usage: $0 cuttle DIR [SECS] [KILL_AT] | $0 ceph [SECS] [KILL_AT]}
shift
VICTIM=${VICTIM:-2}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }

# zero_seconds reads rados bench / cuttle bench progress lines and prints
# the longest run of whole seconds whose finished count did not move.
zero_seconds() {
	awk '$1 ~ /^[0-9]+$/ && NF >= 8 {
		if (seen && $4 == prev) { run++; if (run > best) best = run } else run = 0
		prev = $4; seen = 1
	} END {print best + 0}'
}

case $mode in
cuttle)
	DIR=${1:?DIR}
	SECS=${2:-30} KILL_AT=${3:-8}
	CUTTLE=${CUTTLE:-cuttle}
	[ ! -e "$DIR" ] || { echo "$DIR exists: give a fresh directory" >&2; exit 1; }
	"$CUTTLE" cluster up --dir "$DIR" --auth none --base-port "${BASE_PORT:-7500}" --osd-size 16G > "$DIR.up.log" 2>&1 ||
		{ cat "$DIR.up.log" >&2; exit 1; }
	trap '"$CUTTLE" cluster down --dir "$DIR" > /dev/null 2>&1 || true' EXIT
	c() { "$CUTTLE" --conf "$DIR/cuttle.conf" "$@"; }
	c osd pool create bench3 64 --size 3 --min-size 2 --rule replicated_osd > /dev/null
	until c osd pool ls detail | grep -q "'bench3'" && c status | grep -q "HEALTH_OK"; do sleep 0.5; done
	pid=$("$CUTTLE" cluster status --dir "$DIR" --format json |
		python3 -c "import json,sys; print([d['pid'] for d in json.load(sys.stdin)['daemons'] if d['name']=='osd.$VICTIM'][0])")
	tb=$(now)
	c --format json bench -p bench3 "$SECS" write -b 4096 -t 16 > "$DIR/bench.json" &
	bench=$!
	sleep "$KILL_AT"
	t0=$(now)
	if [ -z "${NOKILL:-}" ]; then
		kill -9 "$pid"
		until c --format json osd stat | python3 -c "import json,sys; sys.exit(json.load(sys.stdin)['num_up_osds'] != 2)"; do :; done
		echo "osd.$VICTIM seen down by a polling client $(elapsed "$t0" "$(now)") s after kill -9"
		# The monitor's log has when it made the map (to the millisecond).
		down=$(grep -m1 "marked down osd.$VICTIM" "$DIR/log/mon.a.log" | sed 's/^time=\([^ ]*\) .*/\1/')
		echo "the monitor marked it down $(elapsed "$t0" "$(date -d "$down" +%s.%N)") s after kill -9: $(grep -m1 -o "marked down osd.$VICTIM[^\"]*" "$DIR/log/mon.a.log")"
	else
		echo "control run: nothing killed"
	fi
	wait "$bench"
	python3 - "$DIR/bench.json" "$(elapsed "$tb" "$t0")" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
kill = float(sys.argv[2])  # seconds from the bench's launch to the kill (its clock starts a little later)
tl = r["timeline"]
best = run = 0
for iv in tl:
    run = run + 1 if iv["ops"] == 0 else 0
    best = max(best, run)
near = [iv for iv in tl if kill - 1 <= iv["sec"] <= kill + 5]
print(f"4 KiB writes: {r['iops']:.0f} IOPS over {r['total_time_s']:.1f} s; slowest write {r['latency_s']['max']:.3f} s; p99 {r['latency_s']['p99']:.4f} s")
print(f"  whole run: whole seconds with no write completed: {best}; longest time between two completions: "
      f"{r['longest_stall_s']:.3f} s (from {r['stall_from_s']:.3f} s; the kill at about {kill:.1f} s)")
if near:
    print(f"  seconds {near[0]['sec']}-{near[-1]['sec']} (the kill and 5 s after): fewest writes in a second "
          f"{min(iv['ops'] for iv in near)}, slowest write {max(iv['max_lat_s'] for iv in near):.3f} s")
print("  per second (writes, slowest s):", " ".join(f"{iv['ops']}/{iv['max_lat_s']:.2f}" for iv in tl))
EOF
	;;
ceph)
	SECS=${1:-30} KILL_AT=${2:-8}
	export CEPH_CONF=${CEPH_CONF:-/tmp/ceph-anchor/ceph.conf}
	ANCHOR=${ANCHOR:-$(dirname "$0")/../../shared/anchors/ceph}
	DATA=$(dirname "$CEPH_CONF")
	pid=$(awk -v n="osd.$VICTIM" '$1 == n {print $2}' "$DATA/pids")
	out=$(mktemp)
	rados bench -p bench3 "$SECS" write -b 4096 -t 16 > "$out" 2>&1 &
	bench=$!
	sleep "$KILL_AT"
	t0=$(now)
	kill -9 "$pid"
	until ceph osd dump -f json | python3 -c "import json,sys; sys.exit([o['up'] for o in json.load(sys.stdin)['osds'] if o['osd']==$VICTIM][0] != 0)"; do :; done
	echo "osd.$VICTIM seen down by a polling client $(elapsed "$t0" "$(now)") s after kill -9"
	# The monitor's log has when it forced the failure (to the ms).
	down=$(grep "osd.$VICTIM failed (" "$DATA/log/mon.a.log" | tail -1)
	echo "the monitor marked it down $(elapsed "$t0" "$(date -d "${down%%+*}" +%s.%N)") s after kill -9: ${down#*: }"
	wait "$bench"
	echo "4 KiB writes: $(awk '/Average IOPS/ {print $3}' "$out") IOPS; whole seconds with no write completed: $(zero_seconds < "$out"); slowest write: $(awk '/Max latency/ {print $3}' "$out") s"
	echo "per second (finished):" $(awk '$1 ~ /^[0-9]+$/ && NF >= 8 {print $4}' "$out")
	echo "raw output: $out"
	DATA=$DATA bash -c "source '$ANCHOR/lib.sh'; start_daemon osd.$VICTIM ceph-osd -c '$CEPH_CONF' -f -i $VICTIM" 2> /dev/null
	echo "osd.$VICTIM restarted; it recovers what it missed (ceph -s; with the HDD defaults, 0.1 s of sleep per recovery op, minutes)"
	;;
*)
	echo "mode $mode: want cuttle or ceph" >&2
	exit 2
	;;
esac
