#!/usr/bin/env python3
"""Table of scripts/bench-rbd-vs-ceph.sh's results: Ceph and Cuttle side
by side, the median over rounds (range in brackets when there are
several), and Cuttle's ratio to Ceph.

Usage: scripts/rbdbench-summary.py OUTDIR
"""
import glob
import json
import os
import re
import statistics
import sys

UNITS = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def ceph_rbd_bench(path):
    """ops/s and bytes/s from `rbd bench`'s last line:
    'elapsed: 15   ops: 32768   ops/sec: 2126.91   bytes/sec: 8.3 MiB/s'."""
    try:
        text = open(path).read()
    except OSError:
        return None
    m = re.search(r"elapsed:\s*([\d.]+)\s+ops:\s*(\d+)\s+ops/sec:\s*([\d.]+)\s+bytes/sec:\s*([\d.]+)\s*(\w*)", text)
    if not m:
        return None
    unit = m.group(5).replace("/s", "")
    return {"ops": float(m.group(3)), "bytes": float(m.group(4)) * UNITS.get(unit, 1)}


def cuttle_rbd_bench(path):
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return None
    return {"ops": d["ops_per_sec"], "bytes": d["bytes_per_sec"], "p99_ms": d["latency_p99_usec"] / 1000}


def fio(path):
    try:
        text = open(path).read()
        d = json.loads(text[text.index("{"):])  # the nbd engine prints a line first
    except (OSError, ValueError):
        return None
    j = d["jobs"][0]
    x = j["write"] if j["write"]["io_bytes"] > 0 else j["read"]
    pct = x.get("clat_ns", {}).get("percentile", {})
    return {"ops": x["iops"], "bytes": x["bw_bytes"], "p99_ms": pct.get("99.000000", 0) / 1e6}


def seconds(path):
    try:
        return float(open(path).read())
    except (OSError, ValueError):
        return None


def rounds(out):
    return sorted(glob.glob(os.path.join(out, "r*")))


def collect(out, side, fn, name, key):
    vals = []
    for r in rounds(out):
        v = fn(os.path.join(r, side, name))
        if v is not None and (key is None or key in v):
            vals.append(v if key is None else v[key])
    return vals


def fmt(vals, scale=1.0, digits=0):
    if not vals:
        return "-"
    med = statistics.median(vals) / scale
    s = f"{med:,.{digits}f}"
    if len(vals) > 1:
        s += f" [{min(vals) / scale:,.{digits}f}-{max(vals) / scale:,.{digits}f}]"
    return s


def ratio(c, k, higher_better=True):
    if not c or not k:
        return "-"
    a, b = statistics.median(k), statistics.median(c)
    if a == 0 or b == 0:
        return "-"
    return f"{(a / b if higher_better else b / a):.2f}x"


def main():
    out = sys.argv[1]
    rows = []
    # name, ceph (fn, file, key), cuttle (fn, file, key), scale, unit, digits, higher better
    spec = [
        ("rbd bench 4 MiB seq write", (ceph_rbd_bench, "seq-write.txt", "bytes"), (cuttle_rbd_bench, "seq-write.json", "bytes"), 1 << 20, "MiB/s", 0, True),
        ("rbd bench 4 MiB seq read", (ceph_rbd_bench, "seq-read.txt", "bytes"), (cuttle_rbd_bench, "seq-read.json", "bytes"), 1 << 20, "MiB/s", 0, True),
        ("rbd bench 4 KiB rand write", (ceph_rbd_bench, "rand-write.txt", "ops"), (cuttle_rbd_bench, "rand-write.json", "ops"), 1, "IOPS", 0, True),
        ("rbd bench 4 KiB rand read", (ceph_rbd_bench, "rand-read.txt", "ops"), (cuttle_rbd_bench, "rand-read.json", "ops"), 1, "IOPS", 0, True),
        ("fio NBD 4 KiB randwrite", (fio, "fio-nbd.randwrite.json", "ops"), (fio, "fio-nbd.randwrite.json", "ops"), 1, "IOPS", 0, True),
        ("fio NBD 4 KiB randwrite p99", (fio, "fio-nbd.randwrite.json", "p99_ms"), (fio, "fio-nbd.randwrite.json", "p99_ms"), 1, "ms", 2, False),
        ("fio NBD 4 KiB randread", (fio, "fio-nbd.randread.json", "ops"), (fio, "fio-nbd.randread.json", "ops"), 1, "IOPS", 0, True),
        ("fio NBD 4 KiB randread p99", (fio, "fio-nbd.randread.json", "p99_ms"), (fio, "fio-nbd.randread.json", "p99_ms"), 1, "ms", 2, False),
        ("fio librbd 4 KiB randwrite (Ceph only)", (fio, "fio-librbd.randwrite.json", "ops"), None, 1, "IOPS", 0, True),
        ("fio librbd 4 KiB randwrite p99", (fio, "fio-librbd.randwrite.json", "p99_ms"), None, 1, "ms", 2, False),
        ("fio librbd 4 KiB randread (Ceph only)", (fio, "fio-librbd.randread.json", "ops"), None, 1, "IOPS", 0, True),
        ("fio librbd 4 KiB randread p99", (fio, "fio-librbd.randread.json", "p99_ms"), None, 1, "ms", 2, False),
        ("import, 10% written image", (seconds, "import.sec", None), (seconds, "import.sec", None), 1, "s", 1, False),
        ("export, 10% written image", (seconds, "export.sec", None), (seconds, "export.sec", None), 1, "s", 1, False),
    ]
    print(f"| test | Ceph 16.2.15 | Cuttle | Cuttle/Ceph |")
    print("|---|---|---|---|")
    for name, cs, ks, scale, unit, digits, hb in spec:
        c = collect(out, "ceph", cs[0], cs[1], cs[2])
        k = collect(out, "cuttle", ks[0], ks[1], ks[2]) if ks else []
        if not c and not k:
            continue
        print(f"| {name} ({unit}) | {fmt(c, scale, digits)} | {fmt(k, scale, digits) if ks else ''} | {ratio(c, k, hb) if ks else ''} |")
    print(f"\n{len(rounds(out))} round(s); ratios >1 mean Cuttle is better (for latency and time, Ceph's over Cuttle's).")


if __name__ == "__main__":
    main()
