#!/usr/bin/env bash
# Fresh-cluster benchmarks used to compare two builds of cuttle, one run
# per call (alternate the binaries across calls: the machines drift).
# Each call starts a cluster in a temporary directory under /var/tmp,
# creates pool bp (size SIZE, default 3, 64 PGs), runs one measurement
# and removes the cluster.
#
#   scripts/bench-fresh.sh small BIN SECS  4 KiB writes for SECS, then
#       random reads for SECS: write IOPS and p99, the read phase's first
#       three seconds (cold reads show there), read IOPS and p99
#   scripts/bench-fresh.sh cpu BIN SECS    4 KiB writes (env BS: another
#       size) for SECS: IOPS and CPU µs per write of each daemon and of
#       the bench client
#   scripts/bench-fresh.sh large BIN SECS  4 MiB write, seq and rand
#   scripts/bench-fresh.sh readcpu BIN SECS  4 MiB writes (env BS: another
#       size) for SECS, then random reads for SECS: read MB/s and IOPS,
#       and the CPU each daemon and the bench client used during the
#       reads (% of one CPU, and µs per read)
#   scripts/bench-fresh.sh readdisk BIN SECS  4 MiB writes for 30 s (at
#       most MAX_OBJECTS, default 6000), then seq and rand reads for SECS
#       each: MB/s, vmstat's CPU split and disk reads, and each OSD's
#       large reads by path (readahead, staged, unstaged)
#   scripts/bench-fresh.sh memwrite BIN SECS  4 MiB writes for SECS,
#       sampling every OSD's RSS and Go heap (from /metrics) four times a
#       second: each OSD's peak RSS and its heap in use at that moment
#   scripts/bench-fresh.sh store BIN       a store alone (no cluster): 4 KiB
#       new objects, 16 jobs, 100 MiB on a default 8 GiB store; IOPS and
#       device KiB written per object (/sys/block/*/stat of /var/tmp's disk)
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,28p "$0" >&2; exit 2; }
MODE=$1 BIN=$2 SECS=${3:-20} SIZE=${SIZE:-3} BS=${BS:-}
D=$(mktemp -d /var/tmp/bench-fresh.XXXXXX)
trap '"$BIN" cluster down --dir "$D" >/dev/null 2>&1 || true; rm -rf "$D"' EXIT
export CUTTLE_CONF=$D/cuttle.conf

up() {
	"$BIN" cluster up --dir "$D" --auth none >/dev/null 2>&1
	"$BIN" osd pool create bp 64 --size "$SIZE" --min-size 1 --rule replicated_osd --yes-i-really-mean-it >/dev/null
}
summary() { awk '/Bandwidth \(MB/ {b=$3} /Average IOPS/ {i=$3} /p99 latency/ {p=$3} END {printf "%s MB/s %s IOPS p99 %s s", b, i, p}'; }
# sectors written to the disk holding /var/tmp
disk=$(lsblk -no PKNAME "$(df --output=source /var/tmp | tail -1)" 2>/dev/null || true)
[ -n "$disk" ] || disk=$(basename "$(df --output=source /var/tmp | tail -1)")
written() { sync; awk '{print $7}' "/sys/block/$disk/stat"; }
# pids lists each daemon's name and pid in $D/pids; snap prints each
# one's CPU ticks so far.
pids() {
	"$BIN" cluster status --dir "$D" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d if isinstance(d,list) else d.get("daemons",d); [print(x["name"],x["pid"]) for x in d]' > "$D/pids"
}
snap() { while read -r n p; do echo "$n $(awk '{print $14+$15}' "/proc/$p/stat")"; done < "$D/pids"; }

case $MODE in
small)
	up
	w=$("$BIN" bench -p bp "$SECS" write -b 4096 -t 16 --no-cleanup | summary)
	"$BIN" bench -p bp "$SECS" rand -t 16 > "$D/rand.txt"
	first=$(awk '$1 ~ /^[123]$/ {printf "%s ", $4-p} {p=$4}' "$D/rand.txt")
	echo "$(basename "$BIN") size $SIZE: write $w | read first seconds: $first| read $(summary < "$D/rand.txt")"
	;;
cpu)
	up
	pids
	snap > "$D/a"
	/usr/bin/time -f "client %U %S" "$BIN" bench -p bp "$SECS" write -b "${BS:-4096}" -t 16 --no-cleanup > "$D/bench.txt" 2> "$D/time.txt"
	snap > "$D/b"
	iops=$(awk '/Average IOPS/ {print $3}' "$D/bench.txt")
	hz=$(getconf CLK_TCK)
	echo "$(basename "$BIN") size $SIZE: ${BS:-4096}-byte writes, $iops IOPS; CPU µs per write:"
	join "$D/a" "$D/b" | awk -v ops=$((iops * SECS)) -v hz="$hz" '{printf "  %s %d\n", $1, ($3-$2)*1e6/hz/ops}'
	awk -v ops=$((iops * SECS)) '/client/ {printf "  client %d\n", ($2+$3)*1e6/ops}' "$D/time.txt"
	;;
large)
	up
	w=$("$BIN" bench -p bp "$SECS" write -t 16 --no-cleanup | summary)
	q=$("$BIN" bench -p bp "$SECS" seq -t 16 | summary)
	r=$("$BIN" bench -p bp "$SECS" rand -t 16 | summary)
	echo "$(basename "$BIN") size $SIZE: write $w | seq $q | rand $r"
	;;
readcpu)
	up
	"$BIN" bench -p bp "$SECS" write -b "${BS:-4194304}" -t 16 --no-cleanup > /dev/null
	pids
	snap > "$D/a"
	/usr/bin/time -f "client %U %S" "$BIN" bench -p bp "$SECS" rand -t 16 > "$D/bench.txt" 2> "$D/time.txt"
	snap > "$D/b"
	ops=$(awk -v s="$SECS" '/Average IOPS/ {print $3*s}' "$D/bench.txt")
	echo "$(basename "$BIN") size $SIZE: rand $(summary < "$D/bench.txt"); CPU during the reads (% of a CPU, µs per read):"
	join "$D/a" "$D/b" | awk -v s="$SECS" -v ops="$ops" -v hz="$(getconf CLK_TCK)" '{printf "  %s %.0f %.1f\n", $1, ($3-$2)/hz/s*100, ($3-$2)/hz*1e6/ops}'
	awk -v s="$SECS" -v ops="$ops" '/client/ {printf "  client %.0f %.1f\n", ($2+$3)/s*100, ($2+$3)*1e6/ops}' "$D/time.txt"
	;;
readdisk)
	up
	"$BIN" cluster status --dir "$D" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d if isinstance(d,list) else d.get("daemons",d); [print(x["metrics_addr"]) for x in d if x["name"].startswith("osd")]' > "$D/osds"
	paths() { while read -r m; do curl -s "http://$m/metrics" | awk '/^cuttle_osd_store_(readahead_hits|staged_reads|unstaged_reads)_total/ {sub("cuttle_osd_store_", "", $1); sub("_total", "", $1); printf "%s %s  ", $1, $2} END {print ""}'; done < "$D/osds"; }
	"$BIN" bench -p bp 30 write -t 16 --no-cleanup --max-objects "${MAX_OBJECTS:-6000}" > /dev/null
	for phase in seq rand; do
		vmstat 2 $((SECS / 2 + 1)) > "$D/vmstat" &
		"$BIN" bench -p bp "$SECS" "$phase" -t 16 > "$D/bench.txt"
		wait
		echo "$(basename "$BIN") size $SIZE: $phase $(summary < "$D/bench.txt")"
		awk 'NR > 3 {us += $13; sy += $14; id += $15; wa += $16; bi += $9; n++} END {printf "  vmstat: user %.0f%% system %.0f%% idle %.0f%% iowait %.0f%%, disk reads %.0f MB/s\n", us/n, sy/n, id/n, wa/n, bi/n/1024}' "$D/vmstat"
		echo "  large reads so far, per OSD:"; paths | sed 's/^/    /'
	done
	;;
memwrite)
	up
	"$BIN" cluster status --dir "$D" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d if isinstance(d,list) else d.get("daemons",d); [print(x["name"],x["pid"],x["metrics_addr"]) for x in d if x["name"].startswith("osd")]' > "$D/osds"
	"$BIN" bench -p bp "$SECS" write -t 16 --no-cleanup > "$D/bench.txt" &
	b=$!
	while kill -0 "$b" 2>/dev/null; do
		while read -r n p m; do
			rss=$(awk '/VmRSS/ {print int($2/1024)}' "/proc/$p/status")
			heap=$(curl -s "http://$m/metrics" | awk '/^go_memstats_heap_inuse_bytes / {print int($2/1048576)}')
			echo "$n $rss $heap"
		done < "$D/osds" >> "$D/samples"
		sleep 0.25
	done
	wait "$b"
	echo "$(basename "$BIN") size $SIZE: write $(summary < "$D/bench.txt"); peak RSS MiB (Go heap in use then):"
	sort -k1,1 -k2,2n "$D/samples" | awk '{peak[$1]=$2; heap[$1]=$3} END {for (n in peak) printf "  %s %d (%d)\n", n, peak[n], heap[n]}' | sort
	;;
store)
	"$BIN" objectstore mkfs --path "$D/store" --size 8G >/dev/null
	a=$(written)
	"$BIN" objectstore bench --path "$D/store" --workload seq-write --object-size 4K --jobs 16 --duration 60s --total 100M > "$D/out.txt"
	b=$(written)
	echo "$(basename "$BIN") store: $(grep -m1 -i iops "$D/out.txt" | tr -s ' ') | device KiB per object: $(( (b - a) * 512 / 1024 / 25600 ))"
	;;
*)
	sed -n 2,28p "$0" >&2; exit 2 ;;
esac
