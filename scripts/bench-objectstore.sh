#!/usr/bin/env bash
# bench-objectstore.sh: the local object store (blockstore) side by side
# with fio, on one file system, back to back. Prints a table with ratios.
#
#   scripts/bench-objectstore.sh [DIR]
#
# DIR (default /var/tmp/cuttle-bench) must be on the file system to
# measure; it gets a fio file and a store of about 2*DATA+1 GiB. Env:
#   DATA     bytes of the sequential data set (default 2 GiB)
#   SECONDS_RAND  duration of the random-write runs (default 10)
#
# Method (docs/BENCHMARKS.md, "Local object store (blockstore) vs fio"):
#   seq-write   4 MiB transactions, each waits for Committed; fio
#               --rw=write --bs=4M --fsync=1 (one writer, one in flight)
#   seq-read    4 MiB reads of every object once, page cache dropped
#               first; fio --rw=read --bs=4M, buffered like blockstore's
#               reads of the page cache (blockstore reads 256 KiB and
#               more with O_DIRECT); the whole page cache is dropped
#               first (/proc/sys/vm/drop_caches when root: fio's
#               invalidate=1 alone left a just-read file cached here,
#               which doubled fio's figure in some runs)
#   rand-write  4 KiB overwrites, each waits for Committed, 1 and 16
#               writers; fio --direct=1 --ioengine=libaio with
#               --iodepth=1 --fsync=1 and --iodepth=16 --fsync=16
#   rand-read   4 KiB reads of distinct random blocks (one pass, no block
#               twice, as fio's random map) with 16 readers, page cache
#               dropped first; fio --direct=1 --ioengine=libaio
#               --iodepth=16 (blockstore reads small ranges with
#               O_DIRECT), and buffered psync --numjobs=16 for reference
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/var/tmp/cuttle-bench}
DATA=${DATA:-$((2 << 30))}
SECS=${SECONDS_RAND:-10}
command -v fio >/dev/null || { echo "fio not found (apt-get install -y fio)" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq not found" >&2; exit 1; }
mkdir -p "$DIR"
F="$DIR/fio.dat"
rm -f "$F"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT" "$F"' EXIT

cold() { # drop the whole page cache when allowed (root), else rely on invalidate=1
	sync
	if [ -w /proc/sys/vm/drop_caches ]; then echo 3 >/proc/sys/vm/drop_caches; fi
}

fio_run() { # name, extra args...; prints "mibps iops p50_us p99_us"
	local name=$1; shift
	fio --name="$name" --filename="$F" --size="$DATA" --output-format=json "$@" >"$OUT/$name.json"
	jq -r '.jobs | (map(.read.bw_bytes + .write.bw_bytes) | add / 1048576) as $bw
		| (map(.read.iops + .write.iops) | add) as $iops
		| .[0] | (if .read.io_bytes > 0 then .read else .write end) as $d
		| "\($bw) \($iops) \(($d.clat_ns.percentile["50.000000"] // 0) / 1000) \(($d.clat_ns.percentile["99.000000"] // 0) / 1000)"' \
		"$OUT/$name.json"
}

echo "fio $(fio --version), $(nproc) CPUs, $(findmnt -no SOURCE,FSTYPE -T "$DIR")" >&2
echo "fio: seq-write" >&2
FIO_SW=$(fio_run sw --rw=write --bs=4M --ioengine=psync --fsync=1)
echo "fio: seq-read" >&2
cold
FIO_SR=$(fio_run sr --rw=read --bs=4M --ioengine=psync --invalidate=1)
echo "fio: rand-write" >&2
FIO_RW1=$(fio_run rw1 --rw=randwrite --bs=4k --direct=1 --ioengine=libaio --iodepth=1 --fsync=1 --time_based --runtime="$SECS")
FIO_RW16=$(fio_run rw16 --rw=randwrite --bs=4k --direct=1 --ioengine=libaio --iodepth=16 --fsync=16 --time_based --runtime="$SECS")
echo "fio: rand-read" >&2
cold
FIO_RR16=$(fio_run rr16 --rw=randread --bs=4k --direct=1 --ioengine=libaio --iodepth=16 --invalidate=1)
cold
FIO_RRB=$(fio_run rrb --rw=randread --bs=4k --ioengine=psync --numjobs=16 --invalidate=1 --group_reporting --offset_increment=$((DATA / 16)) --size=$((DATA / 16)))
rm -f "$F"

echo "cuttle: blockstore" >&2
CUTTLE_BENCH_REPORT="$DIR" CUTTLE_BENCH_DATA="$DATA" CUTTLE_BENCH_SECONDS="$SECS" \
	go test -count=1 -run '^TestBenchReport$' -v -timeout 60m ./internal/objectstore/blockstore/ | tee "$OUT/cuttle.txt" | grep -v BENCHRESULT >&2 || true
rm -rf "$DIR/store"
cres() { grep "BENCHRESULT" "$OUT/cuttle.txt" | sed 's/^BENCHRESULT //' | jq -r --arg n "$1" 'select(.name == $n) | "\(.mibps) \(.iops) \(.p50_us) \(.p99_us)"'; }

row() { # label, fio line, cuttle line, field (1 MiB/s, 2 IOPS), target
	local label=$1 f=$2 c=$3 col=$4 target=$5
	awk -v label="$label" -v f="$f" -v c="$c" -v col="$col" -v target="$target" 'BEGIN {
		split(f, a, " "); split(c, b, " ");
		unit = col == 1 ? "MiB/s" : "IOPS";
		ratio = a[col] > 0 ? b[col] / a[col] : 0;
		printf "| %-34s | %10.0f %-5s | %10.0f %-5s | %5.0f%% | %s | p50/p99 µs: fio %.0f/%.0f, cuttle %.0f/%.0f\n",
			label, a[col], unit, b[col], unit, ratio * 100, target, a[3], a[4], b[3], b[4] }'
}
C_SW=$(cres seq-write); C_SR=$(cres seq-read); C_RW1=$(cres rand-write-1); C_RW16=$(cres rand-write-16); C_RR16=$(cres rand-read-16)
echo
echo "| workload | fio | cuttle | cuttle/fio | target | latency |"
echo "|---|---|---|---|---|---|"
row "seq write 4M, committed, 1 writer" "$FIO_SW" "$C_SW" 1 ">= 85%"
row "seq read 4M, cold page cache" "$FIO_SR" "$C_SR" 1 ">= 90%"
row "rand write 4K, 1 writer (fsync=1)" "$FIO_RW1" "$C_RW1" 2 "-"
row "rand write 4K, 16 writers (qd16)" "$FIO_RW16" "$C_RW16" 2 ">= 50%"
row "rand read 4K, qd16 direct" "$FIO_RR16" "$C_RR16" 2 ">= 70%"
row "rand read 4K, 16 jobs buffered" "$FIO_RRB" "$C_RR16" 2 "(info)"
awk -v a="$C_RW1" -v b="$C_RW16" 'BEGIN { split(a, x, " "); split(b, y, " ");
	printf "\ngroup commit: 16 writers reach %.1fx the IOPS of one (target >= 5x)\n", y[2] / x[2] }'
