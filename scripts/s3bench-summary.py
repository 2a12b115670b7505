#!/usr/bin/env python3
"""Table of scripts/bench-s3-vs-ceph.sh's rounds: Cuttle's gateway against radosgw.

  scripts/s3bench-summary.py OUTDIR [--format json]

Reads OUTDIR/rN/{ceph,cuttle}/s3bench.json (the anchor's s3bench.py output)
and prints, for each measurement, the median over rounds with the range,
Cuttle's ratio to radosgw (for times: radosgw's over Cuttle's, so above 1
is better for Cuttle) and issue 40's goal.
"""
import glob
import json
import os
import statistics
import sys

# (label, key, field, unit, higher is better, goal)
ROWS = [
    ("4 MiB PUT", "4MiB_put", "MB_per_s", "MB/s", True, 2),
    ("4 MiB GET", "4MiB_get", "MB_per_s", "MB/s", True, 2),
    ("4 KiB PUT", "4KiB_put", "ops_per_s", "ops/s", True, 10),
    ("4 KiB GET", "4KiB_get", "ops_per_s", "ops/s", True, 10),
    ("4 KiB PUT p99", "4KiB_put", "lat_p99_ms", "ms", False, None),
    ("4 KiB GET p99", "4KiB_get", "lat_p99_ms", "ms", False, None),
    ("list 2,000 keys", "list_2000", "median_s", "s", False, 5),
]


def load(outdir, system):
    runs = []
    for path in sorted(glob.glob(os.path.join(outdir, "r*", system, "s3bench.json"))):
        with open(path) as f:
            runs.append(json.load(f))
    return runs


def values(runs, key, field):
    return [r[key][field] for r in runs if key in r and field in r[key]]


def cell(vs, unit):
    if not vs:
        return "—"
    m = statistics.median(vs)
    s = f"{m:,.1f} {unit}" if m < 100 else f"{m:,.0f} {unit}"
    if len(vs) > 1:
        s += f" [{min(vs):,.1f}–{max(vs):,.1f}]"
    return s


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: s3bench-summary.py OUTDIR [--format json]")
    outdir = sys.argv[1]
    ceph, cuttle = load(outdir, "ceph"), load(outdir, "cuttle")
    if not ceph and not cuttle:
        sys.exit(f"no rounds under {outdir}: run scripts/bench-s3-vs-ceph.sh {outdir} first")
    rows = []
    for label, key, field, unit, higher, goal in ROWS:
        c, k = values(ceph, key, field), values(cuttle, key, field)
        ratio = None
        if c and k and statistics.median(c) > 0 and statistics.median(k) > 0:
            mc, mk = statistics.median(c), statistics.median(k)
            ratio = mk / mc if higher else mc / mk
        rows.append({"measurement": label, "unit": unit, "ceph": c, "cuttle": k,
                     "ratio": ratio, "goal": goal})
    if "--format" in sys.argv and sys.argv[-1] == "json":
        json.dump({"rounds": {"ceph": len(ceph), "cuttle": len(cuttle)}, "rows": rows}, sys.stdout, indent=1)
        print()
        return
    print(f"rounds: radosgw {len(ceph)}, Cuttle {len(cuttle)} (median [range])")
    print("| measurement | radosgw 16.2.15 | Cuttle | Cuttle/radosgw | goal |")
    print("|---|---|---|---|---|")
    for r in rows:
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
        if r["ratio"] is not None and r["goal"] and r["ratio"] >= r["goal"]:
            ratio = f"**{ratio}**"
        goal = f"≥ {r['goal']}" if r["goal"] else ""
        print(f"| {r['measurement']} | {cell(r['ceph'], r['unit'])} | {cell(r['cuttle'], r['unit'])} | {ratio} | {goal} |")


if __name__ == "__main__":
    main()
