#!/usr/bin/env bash
# 4 KiB writes just after a mass deletion, the shape of bench-vs-ceph.sh's
# 4 KiB phases: on one cluster in a temporary directory (64 GiB stores),
# pool b1 (size SIZE, default 1, 64 PGs), SECS seconds (default 20) of
# 4 KiB writes on a fresh cluster, cleanup, 30 s of 4 MiB writes (at most
# 6,000 objects), cleanup, then SECS seconds of 4 KiB writes again, each
# 4 KiB phase with its IOPS, the OSDs' write_bytes (/proc/PID/io), the
# device's writes (/proc/diskstats of /var/tmp's disk) and vmstat's CPU
# split; then one more cleanup and 4 KiB phase.
#
#   scripts/bench-after-delete.sh BIN [SECS]
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,11p "$0" >&2; exit 2; }
BIN=$1 SECS=${2:-20} SIZE=${SIZE:-1}
D=$(mktemp -d /var/tmp/bench-after-delete.XXXXXX)
trap '"$BIN" cluster down --dir "$D" >/dev/null 2>&1 || true; rm -rf "$D"' EXIT
export CUTTLE_CONF=$D/cuttle.conf
"$BIN" cluster up --dir "$D" --auth none --osd-size 64G >/dev/null 2>&1
"$BIN" osd pool create b1 64 --size "$SIZE" --min-size 1 --rule replicated_osd --yes-i-really-mean-it >/dev/null
pids=$("$BIN" cluster status --dir "$D" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d if isinstance(d,list) else d.get("daemons",d); print(" ".join(str(x["pid"]) for x in d if x["name"].startswith("osd")))')
disk=$(lsblk -no PKNAME "$(df --output=source /var/tmp | tail -1)" 2>/dev/null || true)
[ -n "$disk" ] || disk=$(basename "$(df --output=source /var/tmp | tail -1)")
osdwrites() { local t=0 p; for p in $pids; do t=$((t + $(awk '/^write_bytes/ {print $2}' "/proc/$p/io"))); done; echo "$t"; }
devwrites() { awk -v d="$disk" '$3 == d {print $10}' /proc/diskstats; }
phase() {
	local a da
	a=$(osdwrites) da=$(devwrites)
	vmstat 2 $((SECS / 2 + 1)) > "$D/vm" &
	iops=$("$BIN" bench -p b1 "$SECS" write -b 4096 -t 16 --no-cleanup | awk '/Average IOPS/ {print $3}')
	wait
	echo "$1: $iops IOPS; OSDs wrote $(( ($(osdwrites) - a) >> 20 )) MiB, the device $(( ($(devwrites) - da) / 2048 )) MiB; $(awk 'NR > 3 {us += $13; sy += $14; id += $15; wa += $16; n++} END {printf "user %.0f%% system %.0f%% idle %.0f%% iowait %.0f%%", us/n, sy/n, id/n, wa/n}' "$D/vm")"
	"$BIN" bench -p b1 cleanup >/dev/null
}
phase "fresh"
"$BIN" bench -p b1 30 write -t 16 --no-cleanup --max-objects 6000 >/dev/null
"$BIN" bench -p b1 cleanup >/dev/null
phase "after 4 MiB writes and their cleanup"
phase "once more"
