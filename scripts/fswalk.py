#!/usr/bin/env python3
"""The Ceph paper's Figure 9(b) walk, and MDS memory with many files, on any mount.

  fswalk.py walk MOUNTDIR OUT.json [NDIRS] [FANOUT] [FILES_PER_DIR]
  fswalk.py mem  MOUNTDIR OUT.json NFILES MDS_PID [FILES_PER_DIR]

walk: builds NDIRS (10,000) nested directories, FANOUT (10) below each
directory breadth first, with FILES_PER_DIR (1) empty files in each, then
times walks of the tree from one client, one operation at a time:
  walk_cold   : after a remount (env FSWALK_REMOUNT, a shell command): in
                every directory a readdir, then an lstat of every entry (what
                `ls -lR` and `find -ls` do). A file system whose readdir
                returns the entries' attributes (readdirplus) answers the
                lstats from the client's cache.
  walk_warm   : the same walk again on the same client.
  stat_cold   : after another remount, an lstat of every path with no readdir
                before it: each path is looked up and its attributes fetched
                on their own, the walk without readdirplus.
  walk_plus   : the walk_cold walk with os.scandir, whose entries carry the
                type readdir returned, stat()ing every entry (after a remount).
Then it removes the tree. ops are directories plus files visited.

mem: creates NFILES empty files (FILES_PER_DIR, 1000, in each directory),
stats every one (so the MDS holds them all in its cache) and records the
MDS's resident memory from /proc/MDS_PID/status (VmRSS, and VmHWM, the
peak) before and after; then removes them.
"""
import json, os, subprocess, sys, time

res = {}


def rec(name, ops, t):
    res[name] = {"ops": ops, "seconds": round(t, 3), "ops_per_s": round(ops / t, 1) if t > 0 else None}
    print(f"{name:12} {ops:8d} ops {t:8.2f} s {ops / t:10.1f} ops/s", flush=True)


def remount():
    cmd = os.environ.get("FSWALK_REMOUNT")
    if cmd:
        subprocess.run(cmd, shell=True, check=True)
    return bool(cmd)


def build_tree(top, ndirs, fan, fpd):
    dirs, files = [], []
    queue = [top]
    while len(dirs) < ndirs:
        parent = queue.pop(0)
        for i in range(fan):
            if len(dirs) == ndirs:
                break
            p = os.path.join(parent, f"d{i}")
            os.mkdir(p)
            dirs.append(p)
            queue.append(p)
    for d in dirs:
        for i in range(fpd):
            p = os.path.join(d, f"f{i}")
            os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            files.append(p)
    return dirs, files


def walk_listdir(top):
    n, stack = 0, [top]
    while stack:
        d = stack.pop()
        for name in os.listdir(d):
            p = os.path.join(d, name)
            st = os.lstat(p)
            n += 1
            if (st.st_mode & 0o170000) == 0o040000:
                stack.append(p)
    return n


def walk_scandir(top):
    n, stack = 0, [top]
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                e.stat(follow_symlinks=False)
                n += 1
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
    return n


def rss(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k + "_kib"] = int(v.split()[0])
    return out


def cmd_walk(mnt, out, ndirs=10000, fan=10, fpd=1):
    top = os.path.join(mnt, f"fswalk.{os.getpid()}")
    os.mkdir(top)
    t = time.perf_counter()
    dirs, files = build_tree(top, ndirs, fan, fpd)
    rec("tree_build", len(dirs) + len(files), time.perf_counter() - t)
    want = len(dirs) + len(files)
    if remount():
        t = time.perf_counter()
        n = walk_listdir(top)
        rec("walk_cold", n, time.perf_counter() - t)
        assert n == want, (n, want)
    t = time.perf_counter()
    n = walk_listdir(top)
    rec("walk_warm", n, time.perf_counter() - t)
    assert n == want, (n, want)
    if remount():
        t = time.perf_counter()
        for p in dirs + files:
            os.lstat(p)
        rec("stat_cold", want, time.perf_counter() - t)
    if remount():
        t = time.perf_counter()
        n = walk_scandir(top)
        rec("walk_plus", n, time.perf_counter() - t)
        assert n == want, (n, want)
    t = time.perf_counter()
    for p in files:
        os.unlink(p)
    for d in reversed(dirs):
        os.rmdir(d)
    os.rmdir(top)
    rec("tree_remove", want, time.perf_counter() - t)
    res["params"] = {"ndirs": ndirs, "fanout": fan, "files_per_dir": fpd}
    json.dump(res, open(out, "w"), indent=1)


def cmd_mem(mnt, out, nfiles, pid, fpd=1000):
    top = os.path.join(mnt, f"fsmem.{os.getpid()}")
    os.mkdir(top)
    res["rss_before"] = rss(pid)
    paths, t = [], time.perf_counter()
    for i in range(nfiles):
        d = os.path.join(top, f"d{i // fpd:05d}")
        if i % fpd == 0:
            os.mkdir(d)
        p = os.path.join(d, f"f{i % fpd:04d}")
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        paths.append(p)
    rec("mem_create", nfiles, time.perf_counter() - t)
    t = time.perf_counter()
    for p in paths:
        os.lstat(p)
    rec("mem_stat", nfiles, time.perf_counter() - t)
    res["rss_full"] = rss(pid)
    print(f"MDS pid {pid} with {nfiles} files: VmRSS {res['rss_full']['VmRSS_kib'] / 1024:.1f} MiB "
          f"(before {res['rss_before']['VmRSS_kib'] / 1024:.1f} MiB), VmHWM {res['rss_full']['VmHWM_kib'] / 1024:.1f} MiB",
          flush=True)
    res["params"] = {"nfiles": nfiles, "files_per_dir": fpd, "mds_pid": pid}
    # Written now as well: removing a million files takes as long as
    # making them, and the figures above must survive an interrupted removal.
    json.dump(res, open(out, "w"), indent=1)
    t = time.perf_counter()
    for p in paths:
        os.unlink(p)
    for i in range(0, nfiles, fpd):
        os.rmdir(os.path.join(top, f"d{i // fpd:05d}"))
    os.rmdir(top)
    rec("mem_remove", nfiles, time.perf_counter() - t)
    res["params"] = {"nfiles": nfiles, "files_per_dir": fpd, "mds_pid": pid}
    json.dump(res, open(out, "w"), indent=1)


def main(argv):
    if len(argv) < 4 or argv[1] not in ("walk", "mem"):
        sys.exit(__doc__)
    ints = [int(x) for x in argv[4:]]
    if argv[1] == "walk":
        cmd_walk(argv[2], argv[3], *ints)
    else:
        if len(ints) < 2:
            sys.exit(__doc__)
        cmd_mem(argv[2], argv[3], *ints)


if __name__ == "__main__":
    main(sys.argv)
