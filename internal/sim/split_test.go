package sim

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/osd/split"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/rados"
)

// splitWriters runs writers on pool rbd until stop closes, each writing
// (and rewriting) its own objects, and returns what was acknowledged.
type splitWriters struct {
	mu    sync.Mutex
	acked map[string][]byte
	wg    sync.WaitGroup
	stop  chan struct{}
	n     int
}

func startSplitWriters(t *testing.T, io *rados.IOContext, writers, objects int) *splitWriters {
	w := &splitWriters{acked: map[string][]byte{}, stop: make(chan struct{})}
	for k := range writers {
		w.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-w.stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", k, i%objects)
				data := fmt.Appendf(nil, "writer %d round %d object %s", k, i/objects, name)
				if err := io.WriteFull(context.Background(), name, data); err != nil {
					t.Errorf("write %s: %v", name, err)
					return
				}
				w.mu.Lock()
				w.acked[name] = data
				w.n++
				w.mu.Unlock()
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	return w
}

func (w *splitWriters) finish() map[string][]byte {
	close(w.stop)
	w.wg.Wait()
	return w.acked
}

// checkSplitLayout requires every object copy on every running OSD to be
// in the collection of the PG its hash maps to, and every acknowledged
// write to read back.
func checkSplitLayout(t *testing.T, c *Cluster, io *rados.IOContext, acked map[string][]byte) {
	t.Helper()
	pool := c.Map().PoolByName("rbd")
	ctx := context.Background()
	for id, o := range c.OSDs {
		if o.D == nil {
			continue
		}
		colls, err := o.Store.ListCollections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, coll := range colls {
			if coll.Pool != pool.ID {
				continue
			}
			objs, _, err := o.Store.ListObjects(ctx, coll, objid.ID{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range objs {
				if x.Pool == pool.ID && split.Where(x.Hash, pool.PGNum) != coll.Seed {
					t.Errorf("osd.%d: %v in %v, but it maps to pg %d.%x", id, x, coll, pool.ID, split.Where(x.Hash, pool.PGNum))
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(acked)) {
		got, err := io.Read(ctx, name, 0, 0)
		if err != nil || !bytes.Equal(got, acked[name]) {
			t.Fatalf("read %s: %q, %v; want %q", name, got, err, acked[name])
		}
	}
	listed := 0
	for _, err := range io.Objects(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		listed++
	}
	if listed != len(acked) {
		t.Fatalf("listed %d objects, want %d", listed, len(acked))
	}
}

// Growing pg_num splits the PGs where they are: with pgp_num unchanged
// every child is placed with its parent, every object lands in its
// child's collection on every OSD, and the PGs go active+clean with
// nothing to copy; raising pgp_num then moves the children through
// backfill. Writers run throughout and every acknowledged write reads
// back.
func TestSplitGrowsPGNumUnderWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.AddOSD("h4")
		c.settle(t, "with four OSDs")
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		w := startSplitWriters(t, io, 4, 40)
		time.Sleep(20 * time.Second)
		c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "64")
		time.Sleep(20 * time.Second)
		c.Run("osd pool set", "pool", "rbd", "var", "pgp_num", "val", "64")
		time.Sleep(20 * time.Second)
		acked := w.finish()
		t.Logf("%d writes acknowledged", w.n)
		c.settle(t, "after the split")
		checkSplitLayout(t, c, io, acked)
	})
}

// The test: writers run while the pool goes from 8 to 64 PGs, and
// an OSD fails in the middle (after pg_num grows, before pgp_num follows)
// and returns later; every acknowledged write reads back and every copy
// is in its PG's collection.
func TestSplitWithAnOSDFailing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.AddOSD("h4")
		c.settle(t, "with four OSDs")
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		w := startSplitWriters(t, io, 4, 40)
		time.Sleep(20 * time.Second)
		c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "64")
		time.Sleep(5 * time.Second)
		c.StopOSD(2)
		time.Sleep(20 * time.Second)
		c.Run("osd pool set", "pool", "rbd", "var", "pgp_num", "val", "64")
		time.Sleep(20 * time.Second)
		c.StartOSD(2)
		time.Sleep(20 * time.Second)
		acked := w.finish()
		t.Logf("%d writes acknowledged", w.n)
		c.settle(t, "after the split")
		checkSplitLayout(t, c, io, acked)
	})
}

// An OSD that is down while the pool grows still holds its PGs laid out
// for the old pg_num: it splits them when it sees the map on its return,
// before peering, and its copies count.
func TestSplitOnAnOSDThatWasDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.AddOSD("h4")
		c.Run("osd set", "key", "noout")
		c.settle(t, "with four OSDs")
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		w := startSplitWriters(t, io, 4, 40)
		time.Sleep(20 * time.Second)
		c.StopOSD(1)
		time.Sleep(5 * time.Second)
		c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "32")
		time.Sleep(20 * time.Second)
		c.StartOSD(1)
		time.Sleep(20 * time.Second)
		c.Run("osd pool set", "pool", "rbd", "var", "pgp_num", "val", "32")
		time.Sleep(20 * time.Second)
		acked := w.finish()
		c.settle(t, "after the split")
		checkSplitLayout(t, c, io, acked)
	})
}

var chaosSplitSeeds = flag.Int("chaos.splitseeds", 4, "how many seeds TestChaosSplit runs (from -chaos.first)")

// TestChaosSplit runs TestChaos's schedules with the pool growing in the
// middle of them: pg_num from 16 to 32 a third of the way through the
// faults, pgp_num following two thirds of the way, while OSDs crash,
// disks fail, copies rot and links break. The same end state is
// required: every PG active+clean, nothing left to repair, every
// acknowledged write readable.
func TestChaosSplit(t *testing.T) {
	events := map[int]func(*Cluster){
		10: func(c *Cluster) { c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "32") },
		20: func(c *Cluster) { c.Run("osd pool set", "pool", "rbd", "var", "pgp_num", "val", "32") },
	}
	seeds := make([]uint64, *chaosSplitSeeds)
	for i := range seeds {
		seeds[i] = *chaosFirst + uint64(i)
	}
	if *chaosSeed != 0 {
		seeds = []uint64{*chaosSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runChaos(t, seed, events) })
		})
	}
}

// A write applied before the split and resent after it (its client never
// saw the answer) is answered from the log of the child that now holds
// its object, with the version it got: it is not applied twice. An
// append makes a second application visible.
func TestResentWriteAfterSplitAppliesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		rc := c.NewRawClient("client.1")
		// An object that moves to a child when pg_num goes from 8 to 64.
		var name string
		for i := 0; name == ""; i++ {
			if n := fmt.Sprint("obj-", i); split.Where(objid.Object(1, "", n).Hash, 64) >= 8 {
				name = n
			}
		}
		id, pg, mp := place(t, c, name)
		op := Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpAppend, Data: []byte("+")}}}
		tid, ch := rc.Send(c.OSDs[mp.ActingPrimary], op)
		first := rc.WaitCommitted(ch)
		if first.Result != 0 {
			t.Fatalf("append: %+v", first)
		}
		c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "64")
		c.settle(t, "after the split")
		id, child, mp := place(t, c, name)
		if child == pg {
			t.Fatalf("%s stayed in pg %v", name, pg)
		}
		// The resend, with the old map's PG: told to refresh its map.
		op.Tid = tid
		_, ch = rc.Send(c.OSDs[mp.ActingPrimary], op)
		if r := rc.Wait(ch); r.Result != -wire.ESTALE {
			t.Fatalf("resend to the parent %v: %+v, want ESTALE", pg, r)
		}
		// With the new map: answered from the child's log.
		op.Epoch, op.PG = c.Epoch(), child
		_, ch = rc.Send(c.OSDs[mp.ActingPrimary], op)
		if again := rc.WaitCommitted(ch); again.Result != 0 || again.Version != first.Version {
			t.Fatalf("resend to the child %v answered %+v; first answer %+v", child, again, first)
		}
		_, ch = rc.Send(c.OSDs[mp.ActingPrimary], Op{Epoch: c.Epoch(), Object: id, PG: child, Ops: []wire.ObjectOp{{Code: wire.OpRead}}})
		if r := rc.Wait(ch); r.Result != 0 || string(r.Ops[0].Data) != "+" {
			t.Fatalf("object holds %q (%d) after the resend, want one append", r.Ops[0].Data, r.Result)
		}
	})
}

// A listing that runs across a split lists every object exactly once: it
// walks the pool in the objects' sort order, in which a split only cuts a
// PG's stretch in parts (before, it went PG by PG, and a parent's objects
// moved to a child listed later were listed twice).
func TestListingAcrossASplit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		want := map[string]bool{}
		for i := range 200 {
			name := fmt.Sprintf("obj-%03d", i)
			if err := io.WriteFull(ctx, name, []byte(name)); err != nil {
				t.Fatal(err)
			}
			want[name] = true
		}
		pgNum := c.Map().PoolByName("rbd").PGNum
		seen := map[string]int{}
		var cur rados.Cursor
		list := func(batches int) {
			for range batches {
				batch, next, err := io.ListObjects(ctx, cur, 10)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range batch {
					seen[e.Name]++
				}
				cur = next
			}
		}
		list(8) // 80 objects: part way through the pool
		c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", fmt.Sprint(pgNum*4))
		c.settle(t, "after the split")
		for calls := 0; !cur.Done(); calls++ {
			if calls > 100 {
				t.Fatal("the listing does not end")
			}
			list(1)
		}
		for name := range want {
			if seen[name] != 1 {
				t.Errorf("%s listed %d times", name, seen[name])
			}
		}
		if len(seen) != len(want) {
			t.Errorf("listed %d names, want %d", len(seen), len(want))
		}
	})
}
