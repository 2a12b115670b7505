#!/usr/bin/env bash
# PG splitting under load: a size-3 pool of 32 PGs holding GIB GiB of
# 4 MiB objects goes to 64 PGs (pg_num, then pgp_num, which the monitors
# step toward 64 under target_max_misplaced_ratio, as Ceph's manager does)
# while a client reads at random (16 in flight); prints the time from the
# pg_num command until pgp_num is 64 and every PG is active+clean again,
# and the client's read bandwidth before and during it, per second.
# Ceph's figure (issue 37): 125 s for 32 -> 64 with 4 GiB on this
# machine, reads kept at 99%.
#
#   scripts/bench-split.sh OUTDIR     (env: GIB=1, PORT=17900 base port, OSDS=3;
#                                      ACTIVE=N sets osd_recovery_max_active, SLEEP=D osd_recovery_sleep)
set -euo pipefail
out=${1:?usage: bench-split.sh OUTDIR}
gib=${GIB:-1}
port=${PORT:-17900}
osds=${OSDS:-3}
mkdir -p "$out"
cd "$(dirname "$0")/.."
make -s build
dir=$(mktemp -d /tmp/cuttle-split.XXXX)
bg=
trap '[ -n "$bg" ] && kill "$bg" 2>/dev/null; bin/cuttle cluster down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
bin/cuttle cluster up --dir "$dir" --osds "$osds" --osd-size 16G --base-port "$port" >"$out/up.txt"
c="bin/cuttle --conf $dir/cuttle.conf"
clean() { $c pg stat | grep -qE "^$1 pgs: $1 active\+clean;"; }
$c config set mon mon_allow_pool_delete true >/dev/null
$c osd pool rm rbd rbd --yes-i-really-really-mean-it >/dev/null
$c osd pool create sp 32 --size 3 --rule replicated_osd >/dev/null
[ -n "${ACTIVE:-}" ] && $c config set osd osd_recovery_max_active "$ACTIVE" >/dev/null
[ -n "${SLEEP:-}" ] && $c config set osd osd_recovery_sleep "$SLEEP" >/dev/null
until clean 32; do sleep 1; done
$c bench -p sp 3600 write -b 4M -t 16 --no-cleanup --max-objects $((gib * 256)) >"$out/write.txt"
until clean 32; do sleep 1; done
$c pg stat | tee "$out/before.txt"
$c bench -p sp 15 rand -t 16 >"$out/baseline.txt"
$c bench -p sp 3600 rand -t 16 >"$out/during.txt" &
bg=$!
sleep 5
t0=$(date +%s.%N)
$c osd pool set sp pg_num 64 | tee "$out/set.txt"
$c osd pool set sp pgp_num 64 | tee -a "$out/set.txt"
t_set=$(date +%s.%N)
sleep 2 # let the map reach the OSDs before polling for clean
# The monitors step pgp_num toward its target (64): done when it is there
# and every PG is active+clean.
until [ "$($c osd pool get sp pgp_num)" = "pgp_num: 64" ] && clean 64; do sleep 0.5; done
t1=$(date +%s.%N)
$c pg stat | tee "$out/after.txt"
sleep 5
kill -INT "$bg" 2>/dev/null || true
wait "$bg" 2>/dev/null || true
bg=
python3 - "$out" "$t0" "$t1" <<'PY'
import re, sys
out, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
def persec(path):
    rows = []
    for line in open(path):
        f = line.split()
        if len(f) >= 6 and f[0].isdigit() and re.match(r"^[0-9.]+$", f[5]):
            rows.append((int(f[0]), float(f[5])))
    return rows
base = persec(out + "/baseline.txt")
during = persec(out + "/during.txt")
bmean = sum(v for _, v in base[2:]) / max(1, len(base[2:]))
# The background run started 5 s before the pg_num command.
split = [v for s, v in during if 5 < s <= 5 + (t1 - t0)]
print(f"pg_num 32 -> 64 (and pgp_num) until active+clean: {t1 - t0:.1f} s")
print(f"random 4 MiB reads before: {bmean:.0f} MB/s; during the split: mean {sum(split)/max(1,len(split)):.0f} MB/s "
      f"({100*sum(split)/max(1,len(split))/max(bmean,1):.0f}%), lowest second {min(split) if split else 0:.0f} MB/s, "
      f"seconds at zero {sum(1 for v in split if v == 0)}")
PY
