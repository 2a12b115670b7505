#!/usr/bin/env bash
# Large reads on a cluster that has run a while: the shape of
# bench-vs-ceph.sh up to its size-1 phases (size-3 4 MiB writes, 4 KiB
# writes, each cleaned up; then 25 s of size-1 4 MiB writes, which fill
# the OSDs' 16 GiB stores to about two thirds), then size-1 sequential
# reads with a 10 s CPU profile of osd.0 saved as DIR.seq.pb.
# The cluster is left running for inspection; stop it with
# BIN cluster down --dir DIR.
#
# Usage: scripts/bench-aged.sh BIN DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BIN DIR" >&2; exit 2; }
BIN=$1 D=$2
rm -rf "$D"
export CUTTLE_CONF=$D/cuttle.conf
"$BIN" cluster up --dir "$D" --auth none > /dev/null
"$BIN" osd pool create bench3 64 --size 3 --min-size 2 --rule replicated_osd > /dev/null
"$BIN" osd pool create bench1 64 --size 1 --min-size 1 --rule replicated_osd --yes-i-really-mean-it > /dev/null
s() { awk '/Bandwidth \(MB/ {b=$3} /Average IOPS/ {i=$3} END {printf "%s MB/s, %s IOPS\n", b, i}'; }
echo "size 3, 4 MiB write: $("$BIN" bench -p bench3 30 write -t 16 --no-cleanup | s)"
"$BIN" bench -p bench3 cleanup > /dev/null
echo "size 3, 4 KiB write: $("$BIN" bench -p bench3 30 write -b 4096 -t 16 --no-cleanup | s)"
"$BIN" bench -p bench3 cleanup > /dev/null
echo "size 1, 4 MiB write: $("$BIN" bench -p bench1 25 write -t 16 --no-cleanup | s)"
metrics=$(awk '$1 == "osd.0" {print $5}' <("$BIN" cluster status --dir "$D"))
curl -s -o "$D.seq.pb" "${metrics%/metrics}/debug/pprof/profile?seconds=10" &
echo "size 1, 4 MiB seq:   $("$BIN" bench -p bench1 20 seq -t 16 | s)"
wait
