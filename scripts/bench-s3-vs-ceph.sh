#!/usr/bin/env bash
# Cuttle's S3 gateway against radosgw, alternated in one run on this
# machine (issue 40, "Performance"). Each round starts a fresh Ceph (the
# anchor's up.sh: 1 mon, 3 BlueStore OSDs, radosgw on 127.0.0.1:7480 with
# a user whose keys it writes to s3.env), runs the anchor's s3bench.py
# (boto3, 16 threads: 200 x 4 MiB and 2,000 x 4 KiB PUT then GET, five
# listings of the 2,000-key bucket) and stops it; then a fresh Cuttle
# (cluster up: 3 OSDs, --auth none, the gateway s3.a and the user whose
# keys up prints) and the same script. The two alternate, so a machine
# that slows down during the run slows both.
#
# Usage: scripts/bench-s3-vs-ceph.sh [OUTDIR]   (default /var/tmp/cuttle-s3-vs-ceph)
# env:   ROUNDS (1) S3_THREADS (16) SKIP_CEPH=1 SKIP_CUTTLE=1 CEPH_ANCHOR
#        CUTTLE_BIN BASE_PORT (7700) OSD_SIZE (16G)
# Then scripts/s3bench-summary.py OUTDIR prints the table (median over
# rounds). Needs: root, the ceph packages (CEPH_ANCHOR/install.sh, which
# also installs boto3), go, jq.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-/var/tmp/cuttle-s3-vs-ceph}
ROUNDS=${ROUNDS:-1}
ANCHOR=${CEPH_ANCHOR:-$ROOT/../shared/anchors/ceph}
# from a worktree under /work/wt the shared tree is one level further up
[ -d "$ANCHOR" ] || [ -n "${CEPH_ANCHOR:-}" ] || ANCHOR=$ROOT/../../shared/anchors/ceph
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

if [ -z "${SKIP_CUTTLE:-}" ] && [ -z "${CUTTLE_BIN:-}" ]; then
  log "building bin/cuttle-s3bench"
  go build -o bin/cuttle-s3bench ./cmd/cuttle
  CUTTLE_BIN=$ROOT/bin/cuttle-s3bench
fi

run_ceph() {  # round
  local d=$OUT/r$1/ceph
  mkdir -p "$d"
  log "round $1: Ceph (radosgw)"
  "$ANCHOR/up.sh" >"$d/up.txt" 2>&1 || { tail -20 "$d/up.txt" >&2; return 1; }
  local rc=0
  (
    # shellcheck disable=SC1091
    source /tmp/ceph-anchor/s3.env
    export S3_ENDPOINT S3_ACCESS S3_SECRET
    python3 "$ANCHOR/s3bench.py" "$d/s3bench.json" >"$d/s3bench.txt" 2>&1
  ) || { rc=$?; tail -20 "$d/s3bench.txt" >&2; }
  grep VmHWM /proc/"$(pgrep -x radosgw | head -1)"/status >"$d/gateway-rss.txt" 2>/dev/null || true
  "$ANCHOR/down.sh" >&2 || true
  rm -rf /tmp/ceph-anchor
  return $rc
}

run_cuttle() {  # round
  local d=$OUT/r$1/cuttle
  local cdir=$OUT/r$1/cuttle-cluster
  mkdir -p "$d"
  log "round $1: Cuttle (cuttle s3 serve)"
  rm -rf "$cdir"
  "$CUTTLE_BIN" cluster up --dir "$cdir" --base-port "${BASE_PORT:-7700}" --osd-size "${OSD_SIZE:-16G}" \
    --auth none --timeout 5m --fs=false --nbd=false --format json >"$d/up.json" 2>"$d/up.err" ||
    { cat "$d/up.err" >&2; return 1; }
  local rc=0
  S3_ENDPOINT=$(jq -r .s3.endpoint "$d/up.json") S3_ACCESS=$(jq -r .s3.access_key "$d/up.json") \
    S3_SECRET=$(jq -r .s3.secret_key "$d/up.json") \
    python3 "$ANCHOR/s3bench.py" "$d/s3bench.json" >"$d/s3bench.txt" 2>&1 || { rc=$?; tail -20 "$d/s3bench.txt" >&2; }
  grep VmHWM /proc/"$(pgrep -f "$cdir.*s3 serve|s3 serve.*$cdir" | head -1)"/status >"$d/gateway-rss.txt" 2>/dev/null || true
  "$CUTTLE_BIN" cluster down --dir "$cdir" >&2 || true
  rm -rf "$cdir"
  return $rc
}

for r in $(seq 1 "$ROUNDS"); do
  [ -n "${SKIP_CEPH:-}" ] || run_ceph "$r"
  [ -n "${SKIP_CUTTLE:-}" ] || run_cuttle "$r"
done
python3 scripts/s3bench-summary.py "$OUT" | tee "$OUT/summary.txt"
