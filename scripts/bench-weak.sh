#!/usr/bin/env bash
# Issue 42's experiment (docs/BENCHMARKS.md, "Weak consistency, SSD
# primaries and replica reads"): nine OSDs on this machine, in three CRUSH
# hosts h0..h2 of one emulated SSD and two emulated HDDs each
# (osd_emulate_device; osd.0, 3, 6 are the SSDs), and three pools of 32
# PGs measured with `cuttle bench` at object sizes 4K to 64M:
#
#   all3  size 3, ack all, replicated_rule (one copy per host), primary reads
#   one   size 1, replicated_rule
#   weak  size 3, ack primary, the hybrid rule (SSD primary, HDD replicas),
#         read_policy score (the source document's combination)
#
# Each point: a write of a fixed number of objects (--max-objects, kept
# for the reads), a sequential read of them all, a random read for
# RAND_SECS, then cleanup. Around each read phase the script reads every
# OSD's cuttle_osd_ops_total{kind="read",result="0"} to count which OSDs
# (SSD or HDD) answered the reads (Fig. 7). It also checks, from the
# live map, that every PG of the weak pool has an SSD primary and where
# its replicas are (crush.txt), and records the load average.
#
# Results go to OUT (default /var/tmp/cuttle-weak): CFG-SIZE-PHASE.json
# (cuttle bench --format json), CFG-SIZE-PHASE.reads, osds.txt, load.txt;
# then `go run ./scripts/benchweak` writes weak.json and the figures to
# FIGS (default OUT) and prints a Markdown table.
#
# A single 64M write exceeds the messenger's 64 MiB frame limit today and
# fails after the timeout; such a point is left out (docs/BENCHMARKS.md).
#
# Usage: scripts/bench-weak.sh [OUT]
# env:   BASE_PORT (25800: mon at BASE, OSDs at BASE+10.., their metrics at
#        BASE+110..), CUTTLE_BIN (default: bin/cuttle, built first),
#        SIZES ("4K 64K 1M 4M 16M 64M"), CONFIGS ("all3 one weak"),
#        RAND_SECS (5), FIGS, KEEP=1 (leave the cluster running).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-/var/tmp/cuttle-weak}
BASE=${BASE_PORT:-25800}
SIZES=${SIZES:-4K 64K 1M 4M 16M 64M}
CONFIGS=${CONFIGS:-all3 one weak}
RAND_SECS=${RAND_SECS:-5}
FIGS=${FIGS:-$OUT}
DIR=$OUT/cluster
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

if [ -z "${CUTTLE_BIN:-}" ]; then
	go build -o bin/cuttle ./cmd/cuttle
	CUTTLE_BIN=$ROOT/bin/cuttle
fi
C=$CUTTLE_BIN
mkdir -p "$OUT"
rm -rf "$DIR"
rm -f "$OUT"/*.json "$OUT"/*.reads
export CUTTLE_CONF=$DIR/cuttle.conf

# objects and ops in flight per object size: each point a few seconds on
# the emulated devices.
objects() { case $1 in 4K) echo 400 ;; 64K) echo 300 ;; 1M) echo 120 ;; 4M) echo 48 ;; 16M) echo 8 ;; 64M) echo 3 ;; *) echo 50 ;; esac; }
inflight() { case $1 in 16M) echo 4 ;; 64M) echo 1 ;; 4M) echo 8 ;; *) echo 16 ;; esac; }

pids=()
stop() {
	[ -n "${KEEP:-}" ] && return
	for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
	"$C" cluster down --dir "$DIR" > /dev/null 2>&1 || true
}
trap stop EXIT

log "monitor at port $BASE"
"$C" cluster up --dir "$DIR" --base-port "$BASE" --auth none --osds 0 --s3=false --nbd=false --fs=false > "$OUT/up.log" 2>&1 ||
	{ cat "$OUT/up.log" >&2; exit 1; }
: > "$OUT/osds.txt"
for i in $(seq 0 8); do
	class=hdd
	[ $((i % 3)) = 0 ] && class=ssd
	host=h$((i / 3))
	id=$("$C" --format json osd mkfs --data "$DIR/osd$i" --size 16G | jq -r .osd)
	[ "$id" = "$i" ] || { echo "osd mkfs gave id $id, want $i" >&2; exit 1; }
	"$C" osd run --data "$DIR/osd$i" --listen "127.0.0.1:$((BASE + 10 + i))" --host "$host" \
		--emulate-device "$class" --metrics-addr "127.0.0.1:$((BASE + 110 + i))" > "$DIR/osd$i.log" 2>&1 &
	pids+=($!)
	echo "$i $class $host" >> "$OUT/osds.txt"
done
log "waiting for nine OSDs up"
for _ in $(seq 120); do
	up=$("$C" --format json osd dump | jq '[.osds[] | select(.up)] | length')
	[ "$up" = 9 ] && break
	sleep 1
done
[ "$up" = 9 ] || { echo "only $up OSDs up" >&2; exit 1; }
"$C" osd crush rm-device-class 0 1 2 3 4 5 6 7 8 > /dev/null 2>&1 || true
"$C" osd crush set-device-class ssd 0 3 6 > /dev/null
"$C" osd crush set-device-class hdd 1 2 4 5 7 8 > /dev/null
"$C" osd crush rule create-hybrid hybrid --primary-class ssd --replica-class hdd --failure-domain host > /dev/null
"$C" osd tree > "$OUT/tree.txt"
"$C" osd pool create all3 32 --size 3 --min-size 2 --rule replicated_rule > /dev/null
"$C" osd pool create one 32 --size 1 --min-size 1 --rule replicated_rule --yes-i-really-mean-it > /dev/null
"$C" osd pool create weak 32 --size 3 --min-size 2 --rule hybrid > /dev/null
"$C" osd pool set weak ack primary --yes-i-really-mean-it > /dev/null
"$C" osd pool set weak read_policy score > /dev/null
log "waiting for the PGs to be active+clean"
for _ in $(seq 120); do
	# The size-1 pool keeps a warning up: wait for that one alone.
	"$C" health 2> /dev/null | grep -Eq '^HEALTH_OK|^HEALTH_WARN 1 pool\(s\) have no replicas configured$' && break
	sleep 1
done
"$C" health > "$OUT/health.txt" 2>&1 || true

# Where the weak pool's PGs are: SSD primaries, replicas' hosts.
"$C" osd getmap -o "$OUT/osdmap.bin" > /dev/null
"$C" --format json osdmap map-pgs "$OUT/osdmap.bin" --pool weak > "$OUT/weak-pgs.json"
jq -r --slurpfile o <(awk '{printf "{\"id\":%s,\"class\":\"%s\",\"host\":\"%s\"}\n", $1, $2, $3}' "$OUT/osds.txt") '
	($o | map({key: (.id|tostring), value: .}) | from_entries) as $m
	| [.pools[0].pgs[] | {p: .acting_primary, a: .acting}] as $pgs
	| "PGs: \($pgs | length)",
	  "primary of class ssd: \([$pgs[] | select($m[(.p|tostring)].class == "ssd")] | length)",
	  "replicas all hdd: \([$pgs[] | select([.a[1:][] | $m[(tostring)].class] | all(. == "hdd"))] | length)",
	  "a replica in the primary'"'"'s host: \([$pgs[] | select(. as $g | [$g.a[1:][] | $m[(tostring)].host] | index($m[($g.p|tostring)].host) != null)] | length)",
	  "replicas on distinct hosts: \([$pgs[] | select([.a[1:][] | $m[(tostring)].host] | unique | length == 2)] | length)"
' "$OUT/weak-pgs.json" | tee "$OUT/crush.txt" >&2

# reads_now: "ID COUNT" of reads each OSD answered so far.
reads_now() {
	for i in $(seq 0 8); do
		n=$(curl -s "http://127.0.0.1:$((BASE + 110 + i))/metrics" |
			awk '/^cuttle_osd_ops_total\{kind="read",result="0"\}/ {printf "%d", $2 + 0}')
		echo "$i ${n:-0}"
	done
}
# reads_diff BEFORE AFTER: the reads in between.
reads_diff() { join <(sort "$1") <(sort "$2") | awk '{print $1, $3 - $2}' | sort -n; }

uptime > "$OUT/load.txt"
for cfg in $CONFIGS; do
	for size in $SIZES; do
		n=$(objects "$size") t=$(inflight "$size")
		base=$OUT/$cfg-$size
		log "$cfg $size: write $n objects, $t in flight"
		# A point that fails (an op past the 5-minute timeout) is left out.
		"$C" --timeout 5m --format json bench -p "$cfg" 300 write -b "$size" -t "$t" --max-objects "$n" --no-cleanup > "$base-write.json" ||
			{ log "  write failed"; rm -f "$base-write.json"; "$C" bench -p "$cfg" cleanup > /dev/null 2>&1 || true; continue; }
		for phase in seq rand; do
			secs=300
			[ "$phase" = rand ] && secs=$RAND_SECS
			reads_now > "$base.before"
			"$C" --timeout 5m --format json bench -p "$cfg" "$secs" "$phase" -t "$t" > "$base-$phase.json" ||
				{ log "  $phase failed"; rm -f "$base-$phase.json"; }
			reads_now > "$base.after"
			reads_diff "$base.before" "$base.after" > "$base-$phase.reads"
			rm -f "$base.before" "$base.after"
		done
		jq -r '"  write \(.bandwidth_mb_s|floor) MiB/s lat \(.latency_s.avg*1000|floor) ms"' "$base-write.json" >&2
		jq -r '"  \(.mode) \(.bandwidth_mb_s|floor) MiB/s"' "$base-seq.json" "$base-rand.json" >&2 || true
		"$C" bench -p "$cfg" cleanup > /dev/null 2>&1 || true
	done
	uptime >> "$OUT/load.txt"
done
mkdir -p "$FIGS"
go run ./scripts/benchweak -dir "$OUT" -out "$FIGS" -note "$(hostname), $(nproc) cores; load: $(tr '\n' ';' < "$OUT/load.txt")" | tee "$OUT/table.md"
