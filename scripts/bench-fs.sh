#!/usr/bin/env bash
# File-system benchmark on a mount, the same phases for Cuttle and for
# ceph-fuse (issue 38, "Performance"):
#
#   mds    scripts/mdbench.py (the Ceph anchor's, copied): NFILES files in
#          one directory: create, stat, stat after a remount, readdir,
#          `ls -l`, unlink; then a small tree (mkdir, create, stat, remove)
#   walk   scripts/fswalk.py walk: the Ceph paper's Figure 9(b), WALK_DIRS
#          nested directories with a readdir in each and a stat of every
#          entry, cold (after a remount), warm, without readdirplus
#          (stat of every path after a remount) and with scandir
#   fio    the anchor's cephfs phase: 4 MiB sequential write and read
#          (O_DIRECT, then buffered, remount before each read), 4 KiB random
#          write and read at iodepth 16 (libaio, O_DIRECT), SECS each
#   mem    scripts/fswalk.py mem: MEM_FILES files created and stat'ed, then
#          the MDS's VmRSS and VmHWM from /proc/PID/status
#
# Usage: scripts/bench-fs.sh [OUTDIR]   (default /var/tmp/cuttle-fsbench/TARGET)
# env:   TARGET   cuttle (default) or ceph (the anchor's cluster, up.sh run
#                 before: its ceph-fuse mount and ceph-mds)
#        PHASES   "mds walk fio mem" (default all)
#        NFILES (10000)  WALK_DIRS (10000)  MEM_FILES (1000000)  SECS (30)
#        SEQ_SIZE (2G)   RAND_SIZE (1G)  MD_TREE ("3 10 10")  the full run;
#        a quick pass: NFILES=2000 WALK_DIRS=1000 MEM_FILES=20000 SECS=5
#        SEQ_SIZE=256M RAND_SIZE=128M MD_TREE="2 10 5"
#   Cuttle only:
#        CUTTLE_DIR (/var/tmp/cuttle-fsbench/cluster): a cluster there (its
#                 cuttle.conf) is used as it is; otherwise one is made with
#                 cluster up (--auth none, as the Ceph anchor; BASE_PORT,
#                 OSD_SIZE 16G; --fs --s3=false --nbd=false: the fs with
#                 mds.a and mds.b, one active (measured), one standing by)
#                 and stopped at the end (KEEP=1 leaves it running); with
#                 the mem phase it sets mds_cache_size to CUTTLE_MDS_CACHE
#                 (MEM_FILES x 1.2 + 100,000) and restarts the MDSs, so
#                 that every file stays cached, as CEPH_MDS_CACHE does for Ceph
#        CUTTLE_BIN (default: built into bin/cuttle-fsbench)
#        MDS_PID  the MDS to measure when the cluster's MDS was not started here
#   Ceph only:
#        CEPH_ANCHOR (../shared/anchors/ceph), DATA (/tmp/ceph-anchor)
# Needs: root (FUSE mounts), fio, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${TARGET:-cuttle}
OUT=${1:-/var/tmp/cuttle-fsbench/$TARGET}
PHASES=${PHASES:-mds walk fio mem}
NFILES=${NFILES:-10000}
WALK_DIRS=${WALK_DIRS:-10000}
MEM_FILES=${MEM_FILES:-1000000}
MD_TREE=${MD_TREE:-3 10 10}   # mdbench.py's tree: depth, fanout, files per directory
SECS=${SECS:-30}
SEQ_SIZE=${SEQ_SIZE:-2G}
RAND_SIZE=${RAND_SIZE:-1G}
ANCHOR=${CEPH_ANCHOR:-$ROOT/../shared/anchors/ceph}
# from a worktree under /work/wt the shared tree is one level further up
[ -d "$ANCHOR" ] || [ -n "${CEPH_ANCHOR:-}" ] || ANCHOR=$ROOT/../../shared/anchors/ceph
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# --- the target: mount, remount, MDS pid ---------------------------------
case "$TARGET" in
cuttle)
  CDIR=${CUTTLE_DIR:-/var/tmp/cuttle-fsbench/cluster}
  MNT=${MNT:-$CDIR.mnt}
  if [ -z "${CUTTLE_BIN:-}" ]; then
    log "building bin/cuttle-fsbench"
    go build -o bin/cuttle-fsbench ./cmd/cuttle
    CUTTLE_BIN=$ROOT/bin/cuttle-fsbench
  fi
  export CUTTLE_CONF=$CDIR/cuttle.conf
  STARTED=0
  # A cluster up that makes the file system and its MDSs itself (--fs)
  # is used as it comes (mds.a and mds.b, one active), without the gateway and NBD
  # export; an older one gets the pools, the fs and mds.a from here.
  UPFS=0
  "$CUTTLE_BIN" cluster up --help 2>&1 | grep -q -- '--fs ' && UPFS=1
  if [ ! -f "$CUTTLE_CONF" ]; then
    STARTED=1
    log "cuttle cluster up in $CDIR"
    extra=()
    [ "$UPFS" = 1 ] && extra=(--fs --s3=false --nbd=false)
    "$CUTTLE_BIN" cluster up --dir "$CDIR" --base-port "${BASE_PORT:-7500}" --osd-size "${OSD_SIZE:-16G}" \
      --auth none --timeout 5m "${extra[@]}" >"$OUT/cluster-up.txt" 2>&1 || { cat "$OUT/cluster-up.txt" >&2; exit 1; }
    case " $PHASES " in *" mem "*)
      # The memory phase compares MDSs holding every file, as the Ceph
      # side raises mds_cache_memory_limit: the MDSs restart to read it.
      "$CUTTLE_BIN" config set mds mds_cache_size "${CUTTLE_MDS_CACHE:-$((MEM_FILES + MEM_FILES / 5 + 100000))}" >&2
      if [ "$UPFS" = 1 ]; then
        "$CUTTLE_BIN" cluster down --dir "$CDIR" >&2
        "$CUTTLE_BIN" cluster up --dir "$CDIR" --timeout 5m >>"$OUT/cluster-up.txt" 2>&1 || { cat "$OUT/cluster-up.txt" >&2; exit 1; }
      fi ;;
    esac
    if [ "$UPFS" = 0 ]; then
      "$CUTTLE_BIN" osd pool create cephfs_metadata 16 >&2
      "$CUTTLE_BIN" osd pool create cephfs_data 32 >&2
      "$CUTTLE_BIN" fs new cephfs cephfs_metadata cephfs_data >&2
      "$CUTTLE_BIN" mds mkfs --id a --data "$CDIR/mds.a" >&2
    fi
  fi
  # the launcher's daemon that holds rank 0 (mds.a or mds.b: whichever
  # the monitors gave it; the other stands by)
  ACTIVE_MDS=$("$CUTTLE_BIN" fs status --format json 2>/dev/null | python3 -c '
import json, sys
for f in json.load(sys.stdin).get("filesystems", []):
    for r in f.get("ranks", []):
        if r.get("rank") == 0 and r.get("mds"):
            print(r["mds"]["name"]); sys.exit()
' 2>/dev/null || true)
  ACTIVE_MDS=${ACTIVE_MDS:-a}
  if [ -z "${MDS_PID:-}" ] && [ -f "$CDIR/run/mds.$ACTIVE_MDS.pid" ]; then
    MDS_PID=$(awk '$1=="pid" {print $2; exit}' "$CDIR/run/mds.$ACTIVE_MDS.pid")
  fi
  if [ -z "${MDS_PID:-}" ]; then
    if [ -f "$CDIR/mds.a.pid" ] && kill -0 "$(cat "$CDIR/mds.a.pid")" 2>/dev/null; then
      MDS_PID=$(cat "$CDIR/mds.a.pid")
    else
      setsid "$CUTTLE_BIN" mds run --id a --data "$CDIR/mds.a" >>"$CDIR/mds.a.log" 2>&1 </dev/null &
      MDS_PID=$!
      OWN_MDS=1
      echo "$MDS_PID" >"$CDIR/mds.a.pid"
      log "started mds.a pid $MDS_PID"
    fi
  fi
  mkdir -p "$MNT"
  REMOUNT="umount $MNT && $CUTTLE_BIN mount --log-file $OUT/mount.log $MNT >/dev/null"
  do_mount() {
    mountpoint -q "$MNT" && return 0
    # the first mount waits for the MDS to become active (--timeout)
    "$CUTTLE_BIN" mount --timeout 2m --log-file "$OUT/mount.log" "$MNT" >&2
  }
  do_umount() { if mountpoint -q "$MNT"; then umount "$MNT"; fi; }
  finish() {
    do_umount || true
    if [ "$STARTED" = 1 ] && [ -z "${KEEP:-}" ]; then
      if [ -n "${OWN_MDS:-}" ]; then
        kill "$MDS_PID" 2>/dev/null && while kill -0 "$MDS_PID" 2>/dev/null; do sleep 0.2; done
        rm -f "$CDIR/mds.a.pid"
      fi
      "$CUTTLE_BIN" cluster down --dir "$CDIR" >&2 || true
      rm -rf "$CDIR"
    fi
  }
  ;;
ceph)
  DATA=${DATA:-/tmp/ceph-anchor}
  export DATA CEPH_CONF=$DATA/ceph.conf
  MNT=$DATA/mnt
  MDS_PID=${MDS_PID:-$(awk '$1=="mds.a" {print $2}' "$DATA/pids")}
  REMOUNT="$ANCHOR/fusectl.sh remount"
  do_mount() { "$ANCHOR/fusectl.sh" mount; }
  do_umount() { "$ANCHOR/fusectl.sh" umount; }
  finish() { do_umount || true; }
  ;;
*) echo "TARGET must be cuttle or ceph" >&2; exit 2 ;;
esac
trap finish EXIT
remount() { bash -c "$REMOUNT"; }
do_mount
log "$TARGET mounted on $MNT; MDS pid $MDS_PID; results in $OUT"
echo "$TARGET" >"$OUT/target"

# --- phases ---------------------------------------------------------------
phase_mds() {
  log "=== mds: $NFILES files in one directory"
  MDBENCH_REMOUNT="$REMOUNT" python3 scripts/mdbench.py "$MNT" "$OUT/mdbench.json" "$NFILES" $MD_TREE 2>&1 | tee "$OUT/mdbench.txt"
}

phase_walk() {
  log "=== walk: $WALK_DIRS nested directories (Figure 9(b))"
  FSWALK_REMOUNT="$REMOUNT" python3 scripts/fswalk.py walk "$MNT" "$OUT/walk.json" "$WALK_DIRS" 10 1 2>&1 | tee "$OUT/walk.txt"
}

fio_run() {  # name args...
  local name=$1; shift
  log "fio $name: $*"
  fio --name="$name" --output-format=json --output="$OUT/fio_$name.json" "$@"
  python3 - "$OUT/fio_$name.json" <<'EOF' >&2
import json,sys
j=json.load(open(sys.argv[1]))["jobs"][0]
for d in ("read","write"):
    x=j[d]
    if x["io_bytes"]:
        print(f"  {d}: {x['bw_bytes']/1e6:.1f} MB/s  {x['iops']:.0f} IOPS  lat avg {x['lat_ns']['mean']/1e6:.2f} ms")
EOF
}

phase_fio() {
  log "=== fio: sequential $SEQ_SIZE, random $RAND_SIZE for $SECS s"
  local d=$MNT/fio.$$
  mkdir -p "$d"
  fio_run seqwrite_direct --filename="$d/seq" --rw=write --bs=4M --size="$SEQ_SIZE" --ioengine=psync --direct=1 --end_fsync=1
  remount
  fio_run seqread_direct --filename="$d/seq" --rw=read --bs=4M --size="$SEQ_SIZE" --ioengine=psync --direct=1
  rm -f "$d/seq"
  fio_run seqwrite_buffered --filename="$d/seqb" --rw=write --bs=4M --size="$SEQ_SIZE" --ioengine=psync --end_fsync=1
  remount
  fio_run seqread_buffered --filename="$d/seqb" --rw=read --bs=4M --size="$SEQ_SIZE" --ioengine=psync
  rm -f "$d/seqb"
  fio_run randwrite_4k --filename="$d/rand" --rw=randwrite --bs=4k --size="$RAND_SIZE" --ioengine=libaio --iodepth=16 \
    --direct=1 --runtime="$SECS" --time_based
  remount
  fio_run randread_4k --filename="$d/rand" --rw=randread --bs=4k --size="$RAND_SIZE" --ioengine=libaio --iodepth=16 \
    --direct=1 --runtime="$SECS" --time_based
  rm -rf "$d"
}

phase_mem() {
  log "=== mem: $MEM_FILES files, MDS pid $MDS_PID"
  python3 scripts/fswalk.py mem "$MNT" "$OUT/mem.json" "$MEM_FILES" "$MDS_PID" 1000 2>&1 | tee "$OUT/mem.txt"
}

for p in $PHASES; do
  date -u +%FT%TZ >"$OUT/$p.started"
  "phase_$p"
  date -u +%FT%TZ >"$OUT/$p.finished"
done
log "done: $OUT (summary: scripts/fsbench-summary.py $OUT)"
