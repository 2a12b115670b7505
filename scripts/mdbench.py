#!/usr/bin/env python3
# Copied unchanged from ../shared/anchors/ceph/mdbench.py (the Ceph anchor's metadata benchmark), so that
# scripts/bench-fs.sh runs the very same phases on a Cuttle mount as bench.sh's mds phase on ceph-fuse.
"""mdtest substitute: metadata ops through a mounted file system.

  mdbench.py MOUNTDIR OUT.json [NFILES] [DEPTH] [FANOUT] [FILES_PER_DIR]

Phases (single client process, one op at a time, like mdtest -n with 1 task):
  create   : NFILES empty files in one directory (open O_CREAT|O_EXCL + close)
  stat     : os.stat every file (same client that created them: warm caps)
  stat_cold: os.stat every file after remounting the client (env MDBENCH_REMOUNT)
  readdir  : os.listdir of the directory (names only; after a 2nd remount: cold)
  ls_l     : `ls -l` of the directory (readdir + lstat of every entry), wall time
  unlink   : os.unlink every file
  tree_mkdir  : directory tree of depth DEPTH, FANOUT subdirs per dir
  tree_create : FILES_PER_DIR empty files in every directory of the tree
  tree_remove : unlink all tree files and rmdir all tree dirs (bottom up)
"""
import json, os, shutil, subprocess, sys, time

mnt, out = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
DEPTH = int(sys.argv[4]) if len(sys.argv) > 4 else 3
FAN = int(sys.argv[5]) if len(sys.argv) > 5 else 10
FPD = int(sys.argv[6]) if len(sys.argv) > 6 else 10

root = os.path.join(mnt, f"mdbench.{os.getpid()}")
os.mkdir(root)
flat = os.path.join(root, "flat")
os.mkdir(flat)
res = {}


def rec(name, ops, t):
    res[name] = {"ops": ops, "seconds": round(t, 3), "ops_per_s": round(ops / t, 1) if t > 0 else None}
    print(f"{name:12} {ops:7d} ops {t:8.2f} s {ops / t:10.1f} ops/s", flush=True)


names = [os.path.join(flat, f"f.{i:06d}") for i in range(N)]
t = time.perf_counter()
for p in names:
    os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
rec("create", N, time.perf_counter() - t)

t = time.perf_counter()
for p in names:
    os.stat(p)
rec("stat", N, time.perf_counter() - t)

# cold-cache stat: remount the client (drops its caps/cache) if a command is given
remount = os.environ.get("MDBENCH_REMOUNT")
if remount:
    subprocess.run(remount, shell=True, check=True)
    t = time.perf_counter()
    for p in names:
        os.stat(p)
    rec("stat_cold", N, time.perf_counter() - t)
    subprocess.run(remount, shell=True, check=True)

t = time.perf_counter()
ents = os.listdir(flat)
rec("readdir", len(ents), time.perf_counter() - t)
assert len(ents) == N, len(ents)

t = time.perf_counter()
r = subprocess.run(["ls", "-l", flat], stdout=subprocess.PIPE, check=True)
rec("ls_l", N, time.perf_counter() - t)
assert r.stdout.count(b"\n") >= N

t = time.perf_counter()
for p in names:
    os.unlink(p)
rec("unlink", N, time.perf_counter() - t)
os.rmdir(flat)

# tree: depth DEPTH, FANOUT dirs per dir (10+100+1000 dirs for 3/10), FPD files in each dir
dirs = []
level = [os.path.join(root, "tree")]
os.mkdir(level[0])
t = time.perf_counter()
for d in range(DEPTH):
    nxt = []
    for parent in level:
        for i in range(FAN):
            p = os.path.join(parent, f"d{i}")
            os.mkdir(p)
            nxt.append(p)
    dirs.extend(nxt)
    level = nxt
rec("tree_mkdir", len(dirs), time.perf_counter() - t)

files = []
t = time.perf_counter()
for d in dirs:
    for i in range(FPD):
        p = os.path.join(d, f"f{i}")
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        files.append(p)
rec("tree_create", len(files), time.perf_counter() - t)

t = time.perf_counter()
for p in files:
    os.stat(p)
rec("tree_stat", len(files), time.perf_counter() - t)

t = time.perf_counter()
for p in files:
    os.unlink(p)
for d in reversed(dirs):
    os.rmdir(d)
rec("tree_remove", len(files) + len(dirs), time.perf_counter() - t)
os.rmdir(os.path.join(root, "tree"))
os.rmdir(root)

res["params"] = {"nfiles": N, "depth": DEPTH, "fanout": FAN, "files_per_dir": FPD}
json.dump(res, open(out, "w"), indent=1)
