#!/usr/bin/env bash
# Cuttle's block images against Ceph's rbd, alternated in one run on this
# machine (issue 41, "Performance"). Each round starts a fresh Ceph (the
# anchor's up.sh: 1 mon, 3 BlueStore OSDs; pool bench3, size 3), measures
# it and stops it; then a fresh Cuttle (cluster up, 3 OSDs, --auth none,
# pool rbd, size 3) measured the same way and stopped. Phases on each:
#
#   bench   an image of IMG_SIZE (1G) filled by 4 MiB sequential writes
#           (`rbd bench` / `cuttle rbd bench`, 16 in flight, SEQ_TOTAL),
#           read back the same way, then 4 KiB random writes and reads
#           (16 in flight, RAND_TOTAL each)
#   fio     fio (iodepth 16, SECS each) 4 KiB randwrite and randread over
#           NBD on the same image: Ceph's through qemu-nbd on librbd
#           (--cache=none), Cuttle's through `cuttle nbd serve` (no cache);
#           and Ceph's through fio's rbd engine (librbd itself) as a
#           reference. fio gives the latency percentiles.
#   export  an image of EXPORT_SIZE (10G) with every tenth 4 MiB block
#           written (10%), imported sparse, then timed `export - >/dev/null`
#
# Usage: scripts/bench-rbd-vs-ceph.sh [OUTDIR]   (default /var/tmp/cuttle-rbd-vs-ceph)
# env:   ROUNDS (1) PHASES ("bench fio export") IMG_SIZE (1G) SEQ_TOTAL (2G)
#        RAND_TOTAL (128M) SECS (15) EXPORT_SIZE_GB (10) SKIP_CEPH=1
#        SKIP_CUTTLE=1 CEPH_ANCHOR CUTTLE_BIN BASE_PORT (7600) OSD_SIZE (16G)
# Then scripts/rbdbench-summary.py OUTDIR prints the table (median over
# rounds). Needs: root, the ceph packages (CEPH_ANCHOR/install.sh), fio
# (with its nbd and rbd engines: Debian's has both), qemu-utils with
# qemu-block-extra (qemu-nbd's rbd driver), go.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-/var/tmp/cuttle-rbd-vs-ceph}
ROUNDS=${ROUNDS:-1}
PHASES=${PHASES:-bench fio export}
IMG_SIZE=${IMG_SIZE:-1G}
SEQ_TOTAL=${SEQ_TOTAL:-2G}
RAND_TOTAL=${RAND_TOTAL:-128M}
SECS=${SECS:-15}
EXPORT_SIZE_GB=${EXPORT_SIZE_GB:-10}
ANCHOR=${CEPH_ANCHOR:-$ROOT/../shared/anchors/ceph}
[ -d "$ANCHOR" ] || [ -n "${CEPH_ANCHOR:-}" ] || ANCHOR=$ROOT/../../shared/anchors/ceph
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
has() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }

if [ -z "${SKIP_CUTTLE:-}" ] && [ -z "${CUTTLE_BIN:-}" ]; then
  log "building bin/cuttle-rbdbench"
  go build -o bin/cuttle-rbdbench ./cmd/cuttle
  CUTTLE_BIN=$ROOT/bin/cuttle-rbdbench
fi

# The export phase's source: a sparse file of EXPORT_SIZE_GB GiB with
# random data in every tenth 4 MiB block, made once for every round.
SPARSE=$OUT/sparse-${EXPORT_SIZE_GB}g.raw
if has export && [ ! -f "$SPARSE" ]; then
  log "making $SPARSE"
  truncate -s "${EXPORT_SIZE_GB}G" "$SPARSE"
  blocks=$((EXPORT_SIZE_GB * 256))
  for ((b = 0; b < blocks; b += 10)); do
    head -c 4M /dev/urandom | dd of="$SPARSE" bs=4M seek="$b" conv=notrunc status=none
  done
fi

fio_nbd() {  # outprefix socket
  local out=$1 sock=$2 rw
  for rw in randwrite randread; do
    fio --name="$rw" --ioengine=nbd --uri="nbd+unix:///?socket=$sock" --rw="$rw" --bs=4k \
      --iodepth=16 --time_based --runtime="$SECS" --size="$IMG_SIZE" --output-format=json \
      >"$out.$rw.json"
  done
}

# timed DEST CMD...: runs CMD with stdout to /dev/null, writes seconds to DEST.
timed() {
  local dest=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l >"$dest"
}

run_ceph() {  # round
  local d=$OUT/r$1/ceph
  mkdir -p "$d"
  log "round $1: Ceph"
  "$ANCHOR/up.sh" >"$d/up.txt" 2>&1 || { tail -20 "$d/up.txt" >&2; return 1; }
  export CEPH_CONF=/tmp/ceph-anchor/ceph.conf
  local rc=0
  ceph_phases "$d" || rc=$?
  pkill -f "qemu-nbd.*ceph-anchor" 2>/dev/null || true
  "$ANCHOR/down.sh" >&2 || true
  rm -rf /tmp/ceph-anchor
  unset CEPH_CONF
  return $rc
}

ceph_phases() {  # dir
  local d=$1
  rbd pool init bench3
  rbd create bench3/img --size "$IMG_SIZE"
  if has bench; then
    log "ceph: rbd bench"
    rbd bench --io-type write --io-size 4M --io-pattern seq --io-threads 16 --io-total "$SEQ_TOTAL" bench3/img >"$d/seq-write.txt"
    rbd bench --io-type read --io-size 4M --io-pattern seq --io-threads 16 --io-total "$SEQ_TOTAL" bench3/img >"$d/seq-read.txt"
    rbd bench --io-type write --io-size 4K --io-pattern rand --io-threads 16 --io-total "$RAND_TOTAL" bench3/img >"$d/rand-write.txt"
    rbd bench --io-type read --io-size 4K --io-pattern rand --io-threads 16 --io-total "$RAND_TOTAL" bench3/img >"$d/rand-read.txt"
  fi
  if has fio; then
    log "ceph: fio (librbd, then NBD through qemu-nbd)"
    local rw
    for rw in randwrite randread; do
      fio --name="$rw" --ioengine=rbd --clientname=admin --pool=bench3 --rbdname=img --rw="$rw" --bs=4k \
        --iodepth=16 --time_based --runtime="$SECS" --size="$IMG_SIZE" --output-format=json >"$d/fio-librbd.$rw.json"
    done
    local sock=/tmp/ceph-anchor/nbd.sock
    qemu-nbd --fork --persistent --shared=4 --cache=none --format=raw --socket="$sock" \
      "rbd:bench3/img:conf=$CEPH_CONF"
    fio_nbd "$d/fio-nbd" "$sock"
    pkill -f "qemu-nbd.*ceph-anchor" || true
  fi
  if has export; then
    log "ceph: import and export"
    timed "$d/import.sec" rbd import --no-progress "$SPARSE" bench3/exp-imp
    timed "$d/export.sec" rbd export --no-progress bench3/exp-imp -
    rbd du bench3/exp-imp >"$d/du.txt" 2>&1 || true
  fi
}

run_cuttle() {  # round
  local d=$OUT/r$1/cuttle
  local cdir=$OUT/r$1/cuttle-cluster
  mkdir -p "$d"
  log "round $1: Cuttle"
  rm -rf "$cdir"
  "$CUTTLE_BIN" cluster up --dir "$cdir" --base-port "${BASE_PORT:-7600}" --osd-size "${OSD_SIZE:-16G}" \
    --auth none --timeout 5m --fs=false --s3=false --nbd=false >"$d/up.txt" 2>&1 || { cat "$d/up.txt" >&2; return 1; }
  export CUTTLE_CONF=$cdir/cuttle.conf
  local rc=0
  cuttle_phases "$d" "$cdir" || rc=$?
  [ -z "${NBD_PID:-}" ] || { kill "$NBD_PID" 2>/dev/null; wait "$NBD_PID" 2>/dev/null || true; NBD_PID=; }
  "$CUTTLE_BIN" cluster down --dir "$cdir" >&2 || true
  rm -rf "$cdir"
  return $rc
}

cuttle_phases() {  # dir clusterdir
  local d=$1 cdir=$2
  local c=("$CUTTLE_BIN" --conf "$CUTTLE_CONF")
  "${c[@]}" osd pool ls | grep -qx rbd || "${c[@]}" osd pool create rbd 32 >&2
  "${c[@]}" rbd create rbd/img --size "$IMG_SIZE"
  if has bench; then
    log "cuttle: rbd bench"
    "${c[@]}" rbd bench rbd/img --io-type write --io-size 4M --io-pattern seq --io-threads 16 --io-total "$SEQ_TOTAL" --format json >"$d/seq-write.json"
    "${c[@]}" rbd bench rbd/img --io-type read --io-size 4M --io-pattern seq --io-threads 16 --io-total "$SEQ_TOTAL" --format json >"$d/seq-read.json"
    "${c[@]}" rbd bench rbd/img --io-type write --io-size 4K --io-pattern rand --io-threads 16 --io-total "$RAND_TOTAL" --format json >"$d/rand-write.json"
    "${c[@]}" rbd bench rbd/img --io-type read --io-size 4K --io-pattern rand --io-threads 16 --io-total "$RAND_TOTAL" --format json >"$d/rand-read.json"
  fi
  if has fio; then
    log "cuttle: fio over NBD"
    local sock=$cdir/nbd.sock
    "${c[@]}" nbd serve rbd/img --listen "unix://$sock" >"$d/nbd-serve.txt" 2>&1 &
    NBD_PID=$!
    local i
    for i in $(seq 1 300); do [ -S "$sock" ] && break; sleep 0.1; done
    fio_nbd "$d/fio-nbd" "$sock"
    kill "$NBD_PID"; wait "$NBD_PID" || true; NBD_PID=
  fi
  if has export; then
    log "cuttle: import and export"
    timed "$d/import.sec" "${c[@]}" rbd import "$SPARSE" rbd/exp-imp
    timed "$d/export.sec" "${c[@]}" rbd export rbd/exp-imp -
    "${c[@]}" rbd du rbd/exp-imp >"$d/du.txt" 2>&1 || true
  fi
}

for r in $(seq 1 "$ROUNDS"); do
  [ -n "${SKIP_CEPH:-}" ] || run_ceph "$r"
  [ -n "${SKIP_CUTTLE:-}" ] || run_cuttle "$r"
done
python3 scripts/rbdbench-summary.py "$OUT" | tee "$OUT/summary.txt"
