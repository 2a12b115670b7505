#!/usr/bin/env bash
# Side-by-side RADOS benchmark: Ceph (Debian's packages, started by the
# anchor scripts in ../shared/anchors/ceph or $CEPH_ANCHOR) then Cuttle
# (bin/cuttle cluster up), one after the other on this machine, with the
# same shape: one monitor, three OSDs on file-backed stores, no
# authentication (as the Ceph anchor runs), pools of size 3 and size 1
# with 64 PGs, 16 concurrent ops, $SECS seconds per phase:
#
#   4 MiB objects: write (counted when committed on every replica), seq, rand
#   4 KiB objects: write, rand
#
# and each OSD's peak resident memory (VmHWM) over the phases. `rados
# bench` prints no latency percentiles, so for Ceph a probe through
# librados (scripts/ceph-latency.py, same shape: 16 workers, 4 KiB
# writes of new objects, then random reads of them) measures the p99s
# that `cuttle bench` prints for Cuttle.
#
# Usage: scripts/bench-vs-ceph.sh [OUTDIR]     (default /var/tmp/cuttle-vs-ceph)
# env:   SECS (30), CEPH_ANCHOR (../shared/anchors/ceph), SKIP_CEPH=1, SKIP_CUTTLE=1,
#        CUTTLE_BIN (default: bin/cuttle, built first): another build to run,
#        as in alternated comparisons of two builds with SKIP_CEPH=1,
#        MAX_OBJECTS (0: none): end each 4 MiB write phase after this many
#        objects (both tools' --max-objects), so that the read phases of
#        both read the same data. On the benchmark VM data written more
#        than about 30 GB ago reads several times slower
#        (docs/benchmarks/2026-11-27.md, run 16): a faster writer
#        otherwise leaves its reads colder data.
# Needs: root, the ceph packages (CEPH_ANCHOR/install.sh installs them),
#        and free disk under /var/tmp for Cuttle's size-3 4 MiB phase:
#        three copies of what it writes (about 63 GB at MAX_OBJECTS=5000).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-/var/tmp/cuttle-vs-ceph}
SECS=${SECS:-30}
ANCHOR=${CEPH_ANCHOR:-$ROOT/../shared/anchors/ceph}
mkdir -p "$OUT"
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# hwm_reset PID...: start peak-RSS accounting afresh; hwm PID: peak in KiB.
hwm_reset() { for p in "$@"; do echo 5 > "/proc/$p/clear_refs" 2>/dev/null || true; done; }
hwm() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# phases TOOL POOL TAG: the five phases with TOOL (rados or cuttle).
phases() {
	local tool=$1 pool=$2 tag=$3
	run() { # name args...
		local name=$1; shift
		log "$tag $pool $name: $*"
		"${bench[@]}" -p "$pool" "$@" > "$OUT/${tag}_${pool}_${name}.txt" 2>&1 || log "  (failed: see $OUT/${tag}_${pool}_${name}.txt)"
		{ grep -E 'Bandwidth \(|Average IOPS|Average Latency|p99' "$OUT/${tag}_${pool}_${name}.txt" || true; } | tr -s ' ' | tr '\n' ' ' >&2; echo >&2
	}
	if [ "$tool" = rados ]; then bench=(rados bench); cleanup=(rados -p "$pool" cleanup); else bench=("$CUTTLE" bench); cleanup=("$CUTTLE" bench -p "$pool" cleanup); fi
	local cap=()
	[ "${MAX_OBJECTS:-0}" -gt 0 ] && cap=(--max-objects "$MAX_OBJECTS")
	run 4m_write "$SECS" write -t 16 --no-cleanup "${cap[@]}"
	run 4m_seq "$SECS" seq -t 16
	run 4m_rand "$SECS" rand -t 16
	"${cleanup[@]}" > /dev/null 2>&1 || true
	run 4k_write "$SECS" write -t 16 -b 4096 --no-cleanup
	run 4k_rand "$SECS" rand -t 16
	"${cleanup[@]}" > /dev/null 2>&1 || true
}

if [ -z "${SKIP_CEPH:-}" ]; then
	log "Ceph: starting (anchor $ANCHOR)"
	bash "$ANCHOR/install.sh"
	DATA=/tmp/ceph-anchor bash "$ANCHOR/up.sh" > "$OUT/ceph_up.log" 2>&1
	export CEPH_CONF=/tmp/ceph-anchor/ceph.conf
	osds=$(awk '$1 ~ /^osd\./ {print $2}' /tmp/ceph-anchor/pids)
	hwm_reset $osds
	for pool in bench3 bench1; do
		phases rados "$pool" ceph
		# Right after the pool's own 4 KiB phases, in the same state.
		log "ceph $pool 4k latency probe: $SECS s write, $SECS s rand"
		/usr/bin/python3 scripts/ceph-latency.py --conf "$CEPH_CONF" --pool "$pool" --seconds "$SECS" > "$OUT/ceph_${pool}_4k_latency.txt" 2>&1 || log "  (failed: see $OUT/ceph_${pool}_4k_latency.txt)"
		grep -E '^==|Average IOPS|p99' "$OUT/ceph_${pool}_4k_latency.txt" | tr -s ' ' | tr '\n' ' ' >&2; echo >&2
	done
	for p in $osds; do echo "ceph osd pid $p peak RSS $(hwm "$p") KiB"; done | tee "$OUT/ceph_rss.txt" >&2
	DATA=/tmp/ceph-anchor bash "$ANCHOR/down.sh" > /dev/null 2>&1
	rm -rf /tmp/ceph-anchor
fi

if [ -z "${SKIP_CUTTLE:-}" ]; then
	log "Cuttle: starting"
	CUTTLE=${CUTTLE_BIN:-bin/cuttle}
	[ -n "${CUTTLE_BIN:-}" ] || make build > /dev/null
	DIR=$(mktemp -d /var/tmp/cuttle-bench.XXXXXX)
	# A failure stops the cluster and frees its disk (64 GiB stores).
	trap '"$CUTTLE" cluster down --dir "$DIR" > /dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
	"$CUTTLE" cluster up --dir "$DIR" --auth none --base-port 7700 --osd-size 64G > "$OUT/cuttle_up.log" 2>&1
	export CUTTLE_CONF=$DIR/cuttle.conf
	"$CUTTLE" osd pool create bench3 64 --size 3 --min-size 2 --rule replicated_osd > /dev/null
	"$CUTTLE" osd pool create bench1 64 --size 1 --min-size 1 --rule replicated_osd --yes-i-really-mean-it > /dev/null
	osds=$(for f in "$DIR"/run/osd.*.pid; do awk '/^pid / {print $2}' "$f"; done)
	hwm_reset $osds
	phases cuttle bench3 cuttle
	phases cuttle bench1 cuttle
	for p in $osds; do echo "cuttle osd pid $p peak RSS $(hwm "$p") KiB"; done | tee "$OUT/cuttle_rss.txt" >&2
fi
log "done: results in $OUT"
