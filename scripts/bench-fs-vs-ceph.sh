#!/usr/bin/env bash
# Cuttle's file system against ceph-fuse, alternated in one run on this
# machine (issue 38, "Performance"): ROUNDS times, a fresh Ceph (the
# anchor's up.sh: 1 mon, 3 BlueStore OSDs, 1 MDS, ceph-fuse) measured by
# scripts/bench-fs.sh with TARGET=ceph, then down.sh; then a fresh Cuttle
# cluster (3 OSDs, --auth none, mds.a, cuttle mount) measured by the same
# script with the same scale. Then scripts/fsbench-summary.py prints the
# table (median of the rounds, range in brackets).
#
# Usage: scripts/bench-fs-vs-ceph.sh [OUTDIR]   (default /var/tmp/cuttle-fs-vs-ceph)
# env:   ROUNDS (1); QUICK=1 for a pass of minutes (NFILES=2000 WALK_DIRS=1000
#        MEM_FILES=20000 SECS=5 SEQ_SIZE=256M RAND_SIZE=128M MD_TREE="2 10 5"
#        unless set);
#        the scale knobs of bench-fs.sh (NFILES WALK_DIRS MEM_FILES SECS
#        SEQ_SIZE RAND_SIZE MD_TREE PHASES); SKIP_CEPH=1, SKIP_CUTTLE=1;
#        ANCHOR_BENCH=1 also runs the anchor's own `bench.sh mds cephfs`
#        (fixed full scale, into its results/) on each Ceph;
#        CEPH_MDS_CACHE (8G): ceph-mds's mds_cache_memory_limit for the run
#        (the anchor sets 1 GiB, which trims the cache well below a million
#        files: the memory phase compares the MDSs with every file cached);
#        CEPH_ANCHOR, CUTTLE_BIN, BASE_PORT (7500), OSD_SIZE (16G).
# Needs: root, the ceph packages (CEPH_ANCHOR/install.sh), fio, go.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-/var/tmp/cuttle-fs-vs-ceph}
ROUNDS=${ROUNDS:-1}
ANCHOR=${CEPH_ANCHOR:-$ROOT/../shared/anchors/ceph}
# from a worktree under /work/wt the shared tree is one level further up
[ -d "$ANCHOR" ] || [ -n "${CEPH_ANCHOR:-}" ] || ANCHOR=$ROOT/../../shared/anchors/ceph
export CEPH_ANCHOR=$ANCHOR
if [ -n "${QUICK:-}" ]; then
  export NFILES=${NFILES:-2000} WALK_DIRS=${WALK_DIRS:-1000} MEM_FILES=${MEM_FILES:-20000}
  export SECS=${SECS:-5} SEQ_SIZE=${SEQ_SIZE:-256M} RAND_SIZE=${RAND_SIZE:-128M} MD_TREE=${MD_TREE:-2 10 5}
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

if [ -z "${SKIP_CUTTLE:-}" ] && [ -z "${CUTTLE_BIN:-}" ]; then
  log "building bin/cuttle-fsbench"
  go build -o bin/cuttle-fsbench ./cmd/cuttle
  export CUTTLE_BIN=$ROOT/bin/cuttle-fsbench
fi

run_ceph() {  # round
  local r=$1
  log "round $r: Ceph"
  "$ANCHOR/up.sh" >"$OUT/r$r.ceph-up.txt" 2>&1 || { tail -20 "$OUT/r$r.ceph-up.txt" >&2; return 1; }
  CEPH_CONF=/tmp/ceph-anchor/ceph.conf ceph config set mds mds_cache_memory_limit "${CEPH_MDS_CACHE:-8G}" >&2
  local rc=0
  TARGET=ceph scripts/bench-fs.sh "$OUT/r$r/ceph" || rc=$?
  if [ $rc = 0 ] && [ -n "${ANCHOR_BENCH:-}" ]; then
    "$ANCHOR/bench.sh" mds cephfs || rc=$?
    mkdir -p "$OUT/r$r/ceph-anchor"
    cp "$ANCHOR"/results/mdbench.json "$ANCHOR"/results/fio_*.json "$OUT/r$r/ceph-anchor/" 2>/dev/null || true
  fi
  "$ANCHOR/down.sh" >&2 || true
  rm -rf /tmp/ceph-anchor
  return $rc
}

run_cuttle() {  # round
  local r=$1
  log "round $r: Cuttle"
  TARGET=cuttle CUTTLE_DIR="$OUT/r$r/cuttle-cluster" scripts/bench-fs.sh "$OUT/r$r/cuttle"
}

for r in $(seq 1 "$ROUNDS"); do
  [ -n "${SKIP_CEPH:-}" ] || run_ceph "$r"
  [ -n "${SKIP_CUTTLE:-}" ] || run_cuttle "$r"
done
python3 scripts/fsbench-summary.py "$OUT" | tee "$OUT/summary.txt"
