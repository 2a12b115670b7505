#!/usr/bin/env python3
"""Recovery under client load, Cuttle and Ceph one after the other.

For each system: start OSDS OSDs (4), fill a size-3 pool with GIB GiB of
4 MiB objects and a second size-3 pool with CLIENT_GIB GiB for a client,
measure the client's throughput alone (BASE_S seconds of random 4 MiB
reads, 16 in flight: `bench rand`), then mark the last OSD out while the
same client keeps reading, and report how long the cluster takes to
become active+clean and the client's mean throughput over that time, as
a share of its throughput alone. The client reads rather than writes:
a writer at full speed during a slow recovery fills 16 GiB OSDs (Ceph's
did, in a first attempt, and stopped), and reads ask for the same disks
as recovery's writes do.

  scripts/bench-recovery-io.py OUTDIR   (env: OSDS=4 GIB=4 CLIENT_GIB=1
                                         BASE_S=20 SYSTEMS=cuttle,ceph)

Ceph comes from ../shared/anchors/ceph/up.sh (NOSD=OSDS), which needs the
Debian ceph packages; Cuttle from `make build`.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1]
OSDS = int(os.environ.get("OSDS", "4"))
GIB = int(os.environ.get("GIB", "4"))
CLIENT_GIB = int(os.environ.get("CLIENT_GIB", "1"))
BASE_S = int(os.environ.get("BASE_S", "20"))
SYSTEMS = os.environ.get("SYSTEMS", "cuttle,ceph").split(",")
ANCHOR = os.path.join(ROOT, "..", "shared", "anchors", "ceph")
CEPH_DATA = "/tmp/ceph-anchor"
LIMIT = 900
PROGRESS = re.compile(r"^\s*(\d+)\s+\d+\s+\d+\s+\d+\s+[\d.]+\s+([\d.]+)\s")
CLEAN = re.compile(r"^(\d+) pgs: (\d+) active\+clean;")


class Cuttle:
    name = "cuttle"

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cuttle-recio.")
        self.cli = [os.path.join(ROOT, "bin", "cuttle"), "--conf", os.path.join(self.dir, "cuttle.conf")]

    def up(self):
        subprocess.run(["make", "-s", "-C", ROOT, "build"], check=True)
        subprocess.run([self.cli[0], "cluster", "up", "--dir", self.dir, "--osds", str(OSDS), "--osd-size", "16G"],
                       check=True, stdout=subprocess.DEVNULL)
        self.run("config", "set", "mon", "mon_allow_pool_delete", "true")
        self.run("osd", "pool", "rm", "rbd", "rbd", "--yes-i-really-really-mean-it")

    def pool(self, name, pgs):
        self.run("osd", "pool", "create", name, str(pgs), "--size", "3", "--min-size", "2", "--rule", "replicated_osd")

    def bench(self, pool, secs, extra, mode="write"):
        size = ["-b", "4M"] if mode == "write" else []
        return self.cli + ["bench", "-p", pool, str(secs), mode, "-t", "16"] + size + extra

    def pg_stat(self):
        return self.run("pg", "stat")

    def out(self, osd):
        self.run("osd", "out", str(osd))

    def down(self):
        subprocess.run([self.cli[0], "cluster", "down", "--dir", self.dir], stdout=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)  # its stores hold tens of GiB

    def run(self, *args):
        return subprocess.run(self.cli + list(args), check=True, capture_output=True, text=True).stdout


class Ceph:
    name = "ceph"

    def __init__(self):
        self.conf = os.path.join(CEPH_DATA, "ceph.conf")

    def up(self):
        env = dict(os.environ, DATA=CEPH_DATA, BLOCK_GB="16", NOSD=str(OSDS))
        subprocess.run([os.path.join(ANCHOR, "up.sh")], check=True, env=env, stdout=subprocess.DEVNULL)
        self.run("config", "set", "mon", "mon_allow_pool_delete", "true")

    def pool(self, name, pgs):
        self.run("osd", "pool", "create", name, str(pgs), str(pgs))
        self.run("osd", "pool", "set", name, "size", "3")
        self.run("osd", "pool", "set", name, "min_size", "2")
        self.run("osd", "pool", "application", "enable", name, "rados")

    def bench(self, pool, secs, extra, mode="write"):
        size = ["-b", "4194304"] if mode == "write" else []
        return ["rados", "-c", self.conf, "bench", "-p", pool, str(secs), mode, "-t", "16"] + size + extra

    def pg_stat(self):
        return self.run("pg", "stat")

    def out(self, osd):
        self.run("osd", "out", str(osd))

    def down(self):
        subprocess.run([os.path.join(ANCHOR, "down.sh")], env=dict(os.environ, DATA=CEPH_DATA),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(CEPH_DATA, ignore_errors=True)

    def run(self, *args):
        return subprocess.run(["ceph", "-c", self.conf] + list(args), check=True, capture_output=True, text=True).stdout


def clean(system):
    m = CLEAN.match(system.pg_stat().strip())
    return bool(m) and m.group(1) == m.group(2)


def wait(pred, what, step=0.5, limit=LIMIT):
    t0 = time.time()
    while not pred():
        if time.time() - t0 > limit:
            raise TimeoutError(what)
        time.sleep(step)
    return time.time() - t0


class Client:
    """A bench write whose per-second throughput is recorded as it runs."""

    def __init__(self, cmd, log):
        self.start = time.time()
        self.samples = []  # (seconds since start, MiB/s in that second)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.log = open(log, "w")
        self.reader = threading.Thread(target=self.read)
        self.reader.start()

    def read(self):
        for line in self.proc.stdout:
            self.log.write(line)
            m = PROGRESS.match(line)
            if m and int(m.group(1)) > 0:
                self.samples.append((int(m.group(1)), float(m.group(2))))

    def mean(self, t0=0, t1=1e9):
        xs = [v for s, v in self.samples if t0 < s <= t1]
        return sum(xs) / len(xs) if xs else 0.0

    def wait(self):
        self.proc.wait()
        self.reader.join()
        self.log.close()

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.reader.join()
        self.log.close()


def measure(system):
    res = {"osds": OSDS, "logical_gib": GIB, "client_gib": CLIENT_GIB, "client": "rand 4 MiB reads, 16 in flight",
           "pool_size": 3}
    system.up()
    try:
        system.pool("recov", 64)
        system.pool("client", 32)
        wait(lambda: clean(system), "clean before the fill")
        t = time.time()
        subprocess.run(system.bench("recov", 600, ["--no-cleanup", "--max-objects", str(GIB * 256), "--run-name", "fill"]),
                       check=True, stdout=open(os.path.join(OUT, system.name + "-fill.txt"), "w"))
        res["fill_s"] = round(time.time() - t, 1)
        subprocess.run(system.bench("client", 600, ["--no-cleanup", "--max-objects", str(CLIENT_GIB * 256), "--run-name", "cl"]),
                       check=True, stdout=subprocess.DEVNULL)
        wait(lambda: clean(system), "clean after the fill")
        reads = ["--run-name", "cl"]
        alone = Client(system.bench("client", BASE_S, reads, "rand"), os.path.join(OUT, system.name + "-client-alone.txt"))
        alone.wait()
        res["client_alone_mib_s"] = round(alone.mean(), 1)

        busy = Client(system.bench("client", LIMIT, reads, "rand"), os.path.join(OUT, system.name + "-client-during.txt"))
        time.sleep(5)  # the client at full speed first
        t_out = time.time()
        system.out(OSDS - 1)
        # PG statistics lag a little (Ceph's by a few seconds): wait until
        # they show the movement before waiting for clean.
        wait(lambda: not clean(system), "PG stats show the movement", 0.2, 60)
        wait(lambda: clean(system), "clean after out")
        t_clean = time.time()
        res["out_to_clean_s"] = round(t_clean - t_out, 1)
        busy.stop()
        res["client_during_recovery_mib_s"] = round(busy.mean(t_out - busy.start, t_clean - busy.start), 1)
        res["client_share"] = round(res["client_during_recovery_mib_s"] / max(res["client_alone_mib_s"], 1e-9), 2)
        res["pg_stat_after"] = system.pg_stat().strip()
    finally:
        system.down()
    return res


def main():
    os.makedirs(OUT, exist_ok=True)
    results = {}
    for name in SYSTEMS:
        system = Cuttle() if name == "cuttle" else Ceph()
        print(f"{name}: measuring", flush=True)
        results[name] = measure(system)
        print(name, json.dumps(results[name]), flush=True)
    json.dump(results, open(os.path.join(OUT, "recovery-io.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
