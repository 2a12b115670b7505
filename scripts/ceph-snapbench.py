#!/usr/bin/python3
"""4 KiB overwrites on a Ceph pool, with or without a snapshot every second.

The shape of `cuttle bench -p POOL SECS write -b SIZE -t THREADS --reuse N
[--snap-every 1s]`, which `rados bench` cannot run (it writes a new object
per operation, and a new object is never copied on write): REUSE objects
are written once (not measured), then THREADS workers, each with one
operation in flight, rewrite the next of them whole for SECONDS, counting a
write when librados completes it (committed on every replica).

With --snap-every S a self-managed snapshot is taken every S seconds, as a
block image takes them, and each worker writes with the newest snapshot
context from its next write on (each worker sets its own I/O context's,
so no context is changed under a write in flight). The snapshots are
removed at the end. Prints one line:

    iops=N ops=N seconds=S snaps=N p99_ms=X

Usage: ceph-snapbench.py --conf CEPH_CONF --pool POOL [--seconds 30]
                         [--threads 16] [--size 4096] [--reuse 256]
                         [--snap-every 0]
"""

import argparse
import threading
import time

import rados


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conf", required=True)
    ap.add_argument("--pool", required=True)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--reuse", type=int, default=256)
    ap.add_argument("--snap-every", type=float, default=0)
    a = ap.parse_args()

    cluster = rados.Rados(conffile=a.conf)
    cluster.connect()
    data = b"\x5a" * a.size
    names = [f"snapbench_{i}" for i in range(a.reuse)]
    setup = cluster.open_ioctx(a.pool)
    for n in names:
        setup.write_full(n, data)

    lock = threading.Lock()
    snaps = []  # every snapshot id taken, oldest first
    nxt = [0]
    lat = []
    stop = threading.Event()

    def worker():
        io = cluster.open_ioctx(a.pool)
        seen = 0
        mine = []
        while not stop.is_set():
            with lock:
                i = nxt[0]
                nxt[0] += 1
                if len(snaps) != seen:
                    seen = len(snaps)
                    ctx = list(snaps)
                else:
                    ctx = None
            if ctx is not None:
                io.set_self_managed_snap_write(ctx)
            t = time.monotonic()
            io.write_full(names[i % len(names)], data)
            mine.append(time.monotonic() - t)
        io.close()
        with lock:
            lat.extend(mine)

    def snapper():
        while not stop.wait(a.snap_every):
            sid = setup.create_self_managed_snap()
            with lock:
                snaps.append(sid)

    threads = [threading.Thread(target=worker) for _ in range(a.threads)]
    start = time.monotonic()
    for t in threads:
        t.start()
    s = None
    if a.snap_every > 0:
        s = threading.Thread(target=snapper)
        s.start()
    time.sleep(a.seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    if s is not None:
        s.join()
    for sid in snaps:
        setup.remove_self_managed_snap(sid)
    for n in names:
        setup.remove_object(n)
    setup.close()
    cluster.shutdown()

    lat.sort()
    p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] * 1000 if lat else 0
    print(f"iops={len(lat) / elapsed:.0f} ops={len(lat)} seconds={elapsed:.1f} "
          f"snaps={len(snaps)} p99_ms={p99:.1f}")


if __name__ == "__main__":
    main()
