#!/usr/bin/env bash
# Where a small write's cost goes, block image against RADOS object (issue
# 41): starts a fresh local cluster (3 OSDs, --auth none) with BIN, fills
# a 1 GiB image of 4 MiB objects in pool rbd (size 3, 32 PGs) with 4 MiB
# sequential writes, then measures
#
#   rbd    `cuttle rbd bench` 4 KiB random writes into it (16 threads,
#          RBD_TOTAL bytes, default 128M), after reading the image once
#          with 4 MiB reads
#   rados  `cuttle bench` 4 KiB writes of new objects (16 in flight,
#          RADOS_SECS seconds, default 15) into pool bench3 (size 3, 64 PGs)
#
# For each: IOPS, p99, the three OSDs' CPU per op (utime+stime from
# /proc over the ops), the client's, and the bytes the OSDs' metadata
# databases took in per op (Pebble's WAL bytes in, the deferred data
# included; dump_objectstore_kv_stats). With PROFILE=1 it also saves a
# CPU profile of osd.0 (its /debug/pprof, PROF_SECS seconds, default 8,
# from 2 s into the phase) to OUT/PHASE.osd0.pprof.
#
# Usage: scripts/bench-rbd-cpu.sh BIN OUT   (env BASE_PORT, default 26000)
# Prints one line per phase; OUT keeps the raw outputs.
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,21p "$0" >&2; exit 2; }
BIN=$(realpath "$1") OUT=$2
RBD_TOTAL=${RBD_TOTAL:-128M} RADOS_SECS=${RADOS_SECS:-15} PROF_SECS=${PROF_SECS:-8}
mkdir -p "$OUT"
D=$(mktemp -d /var/tmp/bench-rbd-cpu.XXXXXX)
trap '"$BIN" cluster down --dir "$D" >/dev/null 2>&1 || true; rm -rf "$D"' EXIT
export CUTTLE_CONF=$D/cuttle.conf
"$BIN" cluster up --dir "$D" --base-port "${BASE_PORT:-26000}" --osd-size 16G --auth none --timeout 5m \
	--fs=false --s3=false --nbd=false >"$OUT/up.txt" 2>&1 || { cat "$OUT/up.txt" >&2; exit 1; }
"$BIN" cluster status --dir "$D" --format json >"$OUT/status.json"
read -r -a PIDS <<<"$(python3 -c 'import json,sys; print(" ".join(str(d["pid"]) for d in json.load(open(sys.argv[1]))["daemons"] if d["name"].startswith("osd.")))' "$OUT/status.json")"
M0=$(python3 -c 'import json,sys; print([d["metrics_addr"] for d in json.load(open(sys.argv[1]))["daemons"] if d["name"]=="osd.0"][0])' "$OUT/status.json")

# cpu PID...: the processes' utime+stime in clock ticks, summed.
cpu() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
# walin: the OSDs' Pebble WAL bytes in, summed.
walin() {
	local t=0 i
	for i in 0 1 2; do
		t=$((t + $("$BIN" tell "osd.$i" dump_objectstore_kv_stats --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("wal_bytes_in", d.get("WALBytesIn", 0)))')))
	done
	echo $t
}
TICK=$(getconf CLK_TCK)

# phase NAME OPSCMD... : runs the command (which prints its op count
# last on stdout as "ops N"), with the measurements around it.
phase() {
	local name=$1; shift
	local c0 w0 c1 w1 prof=
	c0=$(cpu "${PIDS[@]}"); w0=$(walin)
	if [ "${PROFILE:-}" = 1 ]; then
		(sleep 2; curl -s -o "$OUT/$name.osd0.pprof" "http://$M0/debug/pprof/profile?seconds=$PROF_SECS") &
		prof=$!
	fi
	/usr/bin/time -f "%U %S" -o "$OUT/$name.client-time" "$@" >"$OUT/$name.out"
	c1=$(cpu "${PIDS[@]}"); w1=$(walin)
	[ -z "$prof" ] || wait "$prof"
	python3 - "$name" "$OUT/$name.out" "$OUT/$name.client-time" "$c0" "$c1" "$w0" "$w1" "$TICK" "$(cut -d' ' -f1 /proc/loadavg)" <<'EOF'
import json, re, sys
name, out, ct, c0, c1, w0, w1, tick, load = sys.argv[1:]
text = open(out).read()
if text.lstrip().startswith("{"):
    j = json.loads(text)
    ops, iops, p99 = j["ops"], j["ops_per_sec"], j["latency_p99_usec"] / 1000
else:
    ops = int(re.search(r"Total writes made:\s+(\d+)", text).group(1))
    iops = float(re.search(r"Average IOPS:\s+(\d+)", text).group(1))
    p99 = float(re.search(r"p99 latency\(s\):\s+([\d.]+)", text).group(1)) * 1000
u, s = map(float, open(ct).read().split()[-2:])
osd = (int(c1) - int(c0)) / int(tick) / ops * 1e6
wal = (int(w1) - int(w0)) / ops
print(f"{name}: {iops:.0f} IOPS, p99 {p99:.2f} ms, OSD CPU/op {osd:.0f} us (3 OSDs), "
      f"client CPU/op {(u + s) / ops * 1e6:.0f} us, WAL bytes in/op {wal:.0f}, load {load}")
EOF
}

"$BIN" osd pool ls | grep -qx rbd || "$BIN" osd pool create rbd 32 >/dev/null
"$BIN" rbd create rbd/img --size 1G
"$BIN" rbd bench rbd/img --io-type write --io-size 4M --io-pattern seq --io-threads 16 --io-total 1G --format json >"$OUT/fill.json"
# Read back as scripts/bench-rbd-vs-ceph.sh does before its 4 KiB phases
# (it fills the OSDs' data caches, which writes then invalidate).
"$BIN" rbd bench rbd/img --io-type read --io-size 4M --io-pattern seq --io-threads 16 --io-total 1G --format json >"$OUT/read.json"
phase rbd "$BIN" rbd bench rbd/img --io-type write --io-size 4K --io-pattern rand --io-threads 16 --io-total "$RBD_TOTAL" --format json
"$BIN" osd pool create bench3 64 --size 3 --min-size 2 --rule replicated_osd >/dev/null
phase rados "$BIN" bench -p bench3 "$RADOS_SECS" write -b 4K -t 16 --no-cleanup
