package sim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/bench"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/rados"
)

// The write benchmark with --reuse and --snap-every (docs/SNAPSHOTS.md):
// it overwrites its set of objects, so the snapshots it takes every
// second make clones; at the end it has removed them, and the trimmer
// takes the clones back, leaving the objects as written.
func TestBenchOverwritesWithSnapshots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Every message takes 5 ms (virtual), so that the timed run's
		// clock moves: about 20 ms a write.
		c, _ := threeOSDsWith(t, Options{Net: memnet.Config{MinDelay: 5 * time.Millisecond, MaxDelay: 5 * time.Millisecond}})
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		const reuse, size = 8, 4096
		var clonesSeen int
		res, err := bench.RunRados(ctx, io, bench.RadosWorkload{Mode: bench.RadosWrite, Duration: 5 * time.Second,
			OpSize: size, Concurrency: 4, Prefix: "b", Reuse: reuse, SnapEvery: time.Second,
			Progress: func(bench.Progress) {
				// Mid-run, an object has clones of the snapshots so far.
				if ls, err := io.ListSnaps(ctx, (bench.RadosMetadata{Prefix: "b"}).ObjectName(0)); err == nil {
					clonesSeen = max(clonesSeen, len(ls.Clones)-1)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Ops < 2*reuse || res.Meta.Objects != reuse || res.Snaps < 4 || res.SnapMode != "selfmanaged" {
			t.Fatalf("ran %d ops over %d objects, %d snapshots (%s); want over %d ops, %d objects, at least 4 self-managed snapshots",
				res.Ops, res.Meta.Objects, res.Snaps, res.SnapMode, 2*reuse, reuse)
		}
		t.Logf("%d overwrites of %d objects in %v, %d snapshots; object 0 had up to %d clones", res.Ops, reuse, res.Elapsed, res.Snaps, clonesSeen)
		if clonesSeen < 2 {
			t.Fatalf("object 0 had at most %d clones during the run, want some", clonesSeen)
		}
		// The snapshots are gone from the map, and the trimmer removes
		// their clones: the pool is back to the objects and the
		// metadata object.
		p := c.Map().PoolByName("rbd")
		for id := uint64(1); id <= p.SnapSeq; id++ {
			if !p.RemovedSnaps.Contains(id) {
				t.Fatalf("snapshot %d of pool rbd is live after the run (removed %s)", id, p.RemovedSnaps)
			}
		}
		meta, _ := res.Meta.MarshalBinary()
		waitUsage(t, c, "rbd", reuse*size+int64(len(meta)), reuse+1)
		for i := range int64(reuse) {
			ls, err := io.ListSnaps(ctx, res.Meta.ObjectName(i))
			if err != nil || len(ls.Clones) != 1 || ls.Clones[0].ID != rados.SnapHead {
				t.Fatalf("%s after the trim: %+v %v, want the head alone", res.Meta.ObjectName(i), ls, err)
			}
		}
		// seq reads the reused objects back.
		rd, err := bench.RunRados(ctx, io, bench.RadosWorkload{Mode: bench.RadosSeq, Duration: 5 * time.Second, Concurrency: 4})
		if err != nil || rd.Ops != reuse {
			t.Fatalf("seq after the reusing write: %d ops %v, want %d", rd.Ops, err, reuse)
		}
		if _, err := bench.RunRados(ctx, io, bench.RadosWorkload{Mode: bench.RadosSeq, Duration: time.Second, Reuse: 2}); err == nil {
			t.Fatal("seq with Reuse: no error")
		}
	})
}
