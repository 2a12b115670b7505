#!/usr/bin/env python3
"""One table, Cuttle against ceph-fuse, from scripts/bench-fs.sh results.

  fsbench-summary.py [--anchor DIR] [--json] RESULTS...

Each RESULTS is a bench-fs.sh output directory (it holds a file `target`:
cuttle or ceph) or a directory above such directories (as
bench-fs-vs-ceph.sh writes: ROUND/cuttle, ROUND/ceph). Several runs of a
target give the median, and the range in brackets. With --anchor (the Ceph
anchor's results/ directory, default ../shared/anchors/ceph/results if it
holds mdbench.json) the figures of its own `bench.sh mds cephfs` run are
shown in a third column; the ratio is always Cuttle over the ceph-fuse
runs of bench-fs.sh (same scale, same run), else over the anchor's.
The target column is issue 38's.
"""
import json, os, statistics, sys

HERE = os.path.dirname(os.path.abspath(__file__))

# (key, label, unit, higher_is_better, target ratio Cuttle/Ceph or None)
ROWS = [
    ("md.create", "NFILES in one dir: create", "ops/s", True, 5),
    ("md.stat", "  stat (warm)", "ops/s", True, 5),
    ("md.stat_cold", "  stat after remount", "ops/s", True, None),
    ("md.readdir", "  readdir (cold)", "ops/s", True, None),
    ("md.ls_l", "  ls -l", "s", False, 5),
    ("md.unlink", "  unlink", "ops/s", True, 5),
    ("md.tree_create", "mdbench tree: create", "ops/s", True, None),
    ("walk.walk_cold", "Fig. 9(b) walk: cold", "ops/s", True, None),
    ("walk.walk_warm", "  warm", "ops/s", True, None),
    ("walk.stat_cold", "  cold, no readdirplus", "ops/s", True, None),
    ("walk.walk_plus", "  cold, scandir", "ops/s", True, None),
    ("fio.randwrite_4k", "fio 4 KiB randwrite qd16", "IOPS", True, 3),
    ("fio.randread_4k", "fio 4 KiB randread qd16", "IOPS", True, 3),
    ("fio.seqwrite_direct", "fio 4 MiB write O_DIRECT", "MB/s", True, 1.5),
    ("fio.seqread_direct", "fio 4 MiB read O_DIRECT", "MB/s", True, 1.5),
    ("fio.seqwrite_buffered", "fio 4 MiB write buffered", "MB/s", True, 1.5),
    ("fio.seqread_buffered", "fio 4 MiB read buffered", "MB/s", True, 1.5),
    ("mem.rss", "MDS VmRSS with MEM_FILES files", "MiB", False, 3),
    ("mem.per_file", "  per file", "bytes", False, None),
]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def figures(d):
    """The figures of one bench-fs.sh (or anchor bench.sh) results dir."""
    out = {}
    md = load(os.path.join(d, "mdbench.json")) or {}
    for k, v in md.items():
        if k == "params":
            continue
        out["md." + k] = v["seconds"] if k == "ls_l" else v["ops_per_s"]
    walk = load(os.path.join(d, "walk.json")) or {}
    for k, v in walk.items():
        if k != "params":
            out["walk." + k] = v["ops_per_s"]
    for name in ("randwrite_4k", "randread_4k", "seqwrite_direct", "seqread_direct",
                 "seqwrite_buffered", "seqread_buffered"):
        j = load(os.path.join(d, f"fio_{name}.json"))
        if not j:
            continue
        job = j["jobs"][0]
        x = job["write" if "write" in name else "read"]
        out["fio." + name] = x["iops"] if name.endswith("4k") else x["bw_bytes"] / 1e6
    mem = load(os.path.join(d, "mem.json"))
    if mem:
        full, before = mem["rss_full"]["VmRSS_kib"], mem["rss_before"]["VmRSS_kib"]
        out["mem.rss"] = full / 1024
        out["mem.per_file"] = (full - before) * 1024 / mem["params"]["nfiles"]
        out["mem.nfiles"] = mem["params"]["nfiles"]
    return out


def find_runs(paths):
    runs = {"cuttle": [], "ceph": []}
    for p in paths:
        for dirpath, _, files in os.walk(p):
            if "target" in files:
                t = open(os.path.join(dirpath, "target")).read().strip()
                runs.setdefault(t, []).append(figures(dirpath))
    return runs


def agg(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None, ""
    m = statistics.median(vals)
    rng = f" [{fmt(min(vals))}-{fmt(max(vals))}]" if len(vals) > 1 else ""
    return m, rng


def fmt(v):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def main(argv):
    anchor, as_json, paths = None, False, []
    i = 1
    while i < len(argv):
        if argv[i] == "--anchor":
            anchor = argv[i + 1]
            i += 2
            continue
        if argv[i] == "--json":
            as_json = True
        else:
            paths.append(argv[i])
        i += 1
    if not paths:
        sys.exit(__doc__)
    if anchor is None:
        for up in (("..", ".."), ("..", "..", "..")):  # the repository, or a worktree under /work/wt
            d = os.path.join(HERE, *up, "shared", "anchors", "ceph", "results")
            if os.path.exists(os.path.join(d, "mdbench.json")):
                anchor = d
                break
    runs = find_runs(paths)
    anc = figures(anchor) if anchor else {}
    table = []
    for key, label, unit, higher, target in ROWS:
        c, crng = agg([r.get(key) for r in runs["cuttle"]])
        f, frng = agg([r.get(key) for r in runs["ceph"]])
        a = anc.get(key)
        base = f if f is not None else a
        ratio = None
        if c and base:
            ratio = c / base if higher else base / c
        table.append({"test": key, "label": label, "unit": unit, "cuttle": c, "cuttle_range": crng,
                      "ceph": f, "ceph_range": frng, "ceph_anchor": a, "ratio": ratio,
                      "target": target})
    if as_json:
        json.dump({"runs": {k: len(v) for k, v in runs.items()}, "anchor": anchor, "rows": table}, sys.stdout, indent=1)
        print()
        return
    print(f"Cuttle runs: {len(runs['cuttle'])}, ceph-fuse runs: {len(runs['ceph'])}"
          + (f", anchor: {anchor}" if anchor else ""))
    print("ratio: how many times better Cuttle is (for s and MiB: Ceph's over Cuttle's)")
    hdr = f"| {'test':34} | {'unit':5} | {'Cuttle':>22} | {'ceph-fuse':>22} |"
    hdr += f" {'anchor':>9} |" if anchor else ""
    hdr += f" {'ratio':>6} | {'target':>6} |"
    print(hdr)
    print("|" + "|".join("-" * (len(c)) for c in hdr.split("|")[1:-1]) + "|")
    for r in table:
        if r["cuttle"] is None and r["ceph"] is None and r["ceph_anchor"] is None:
            continue
        line = f"| {r['label']:34} | {r['unit']:5} | {fmt(r['cuttle']) + r['cuttle_range']:>22} |"
        line += f" {fmt(r['ceph']) + r['ceph_range']:>22} |"
        if anchor:
            line += f" {fmt(r['ceph_anchor']):>9} |"
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] else "-"
        target = f">={r['target']}x" if r["target"] else ""
        line += f" {ratio:>6} | {target:>6} |"
        print(line)


if __name__ == "__main__":
    main(sys.argv)
