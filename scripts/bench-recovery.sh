#!/usr/bin/env bash
# Recovery speed: how long a cluster takes to become active+clean after
# one OSD is marked out, with data stored at the given size. Cuttle only;
# the Ceph side is ../shared/anchors/ceph/failure.py (PARTS=out), which
# measures the same on the same machine (3 OSDs, size 2: a size-3 pool
# cannot be clean with one of three OSDs out).
#
#   scripts/bench-recovery.sh OUTDIR      (env: SECS=20 of writes, OSDS=3, SIZE=2)
set -euo pipefail
out=${1:?usage: bench-recovery.sh OUTDIR}
secs=${SECS:-20}
osds=${OSDS:-3}
size=${SIZE:-2}
mkdir -p "$out"
cd "$(dirname "$0")/.."
make -s build
dir=$(mktemp -d /tmp/cuttle-recovery.XXXX)
trap 'bin/cuttle cluster down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
bin/cuttle cluster up --dir "$dir" --osds "$osds" --osd-size 16G >"$out/up.txt"
c="bin/cuttle --conf $dir/cuttle.conf"
# Only the measured pool: rbd (size 3) could not be clean with an OSD out.
$c config set mon mon_allow_pool_delete true >/dev/null
$c osd pool rm rbd rbd --yes-i-really-really-mean-it >/dev/null
$c osd pool create rec 64 --size "$size" --min-size 1 --rule replicated_osd --yes-i-really-mean-it >/dev/null
until $c pg stat | grep -qE '^[0-9]+ pgs: [0-9]+ active\+clean;'; do sleep 1; done
$c --format json bench -p rec "$secs" write -b 4M -t 16 --no-cleanup >"$out/write.json"
$c pg stat | tee "$out/before.txt"
t0=$(date +%s.%N)
$c osd out "$((osds - 1))" >/dev/null
sleep 2 # let the map reach the OSDs before polling for clean
while ! $c pg stat | grep -qE '^[0-9]+ pgs: [0-9]+ active\+clean;'; do sleep 0.5; done
t1=$(date +%s.%N)
$c pg stat | tee "$out/after.txt"
python3 - "$out" "$t0" "$t1" <<'PY'
import json, sys
out, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
w = json.load(open(out + "/write.json"))
print(json.dumps({"written_mib": round(w.get("bytes", 0) / 2**20) if "bytes" in w else w, "out_to_clean_s": round(t1 - t0, 1)}))
PY
