#!/usr/bin/env bash
# 4 KiB creates on a cluster that fills up: a fresh local cluster (one
# monitor, three OSDs), a size-3 pool of 64 PGs, then PHASES phases of
# SECS seconds of `cuttle bench write -b 4096 -t 16` that keep their
# objects, printing the IOPS of each. Later phases run with fuller PG
# logs and a larger metadata database: how much slower they are shows
# what a cluster's history costs each write.
#
# Usage: scripts/bench-aging.sh [BIN]     (default bin/cuttle, built by make build)
# env:   SECS (20), PHASES (3), DIR (a new directory under /var/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-bin/cuttle}
SECS=${SECS:-20}
PHASES=${PHASES:-3}
DIR=${DIR:-$(mktemp -d /var/tmp/cuttle-aging.XXXXXX)}
[ -x "$BIN" ] || make build > /dev/null
"$BIN" cluster up --dir "$DIR" --auth none --base-port 7700 > /dev/null
trap '"$BIN" cluster down --dir "$DIR" > /dev/null; rm -rf "$DIR"' EXIT
export CUTTLE_CONF=$DIR/cuttle.conf
"$BIN" osd pool create aging 64 --size 3 --min-size 2 --rule replicated_osd > /dev/null
for i in $(seq "$PHASES"); do
	iops=$("$BIN" bench -p aging "$SECS" write -b 4096 -t 16 --no-cleanup --run-name "phase$i" | awk '/^Average IOPS/ {print $3}')
	echo "phase $i: $iops IOPS"
done
