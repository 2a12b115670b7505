package sim

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/osd/split"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/rados"
)

// appender appends numbered tokens to one object until stop closes: the
// object must end as exactly the acknowledged tokens in order, each
// once, however often a request was resent across splits and merges.
type appender struct {
	mu    sync.Mutex
	want  strings.Builder
	wg    sync.WaitGroup
	stop  chan struct{}
	name  string
	count int
}

func startAppender(t *testing.T, io *rados.IOContext, name string) *appender {
	a := &appender{stop: make(chan struct{}), name: name}
	a.wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-a.stop:
				return
			default:
			}
			tok := fmt.Sprintf("<%d>", i)
			if err := io.Append(context.Background(), name, []byte(tok)); err != nil {
				t.Errorf("append %s: %v", tok, err)
				return
			}
			a.mu.Lock()
			a.want.WriteString(tok)
			a.count++
			a.mu.Unlock()
			time.Sleep(30 * time.Millisecond)
		}
	})
	return a
}

// check stops the appender and requires the object to hold exactly the
// acknowledged appends.
func (a *appender) check(t *testing.T, io *rados.IOContext) {
	t.Helper()
	close(a.stop)
	a.wg.Wait()
	got, err := io.Read(context.Background(), a.name, 0, 0)
	if err != nil {
		t.Fatalf("read %s: %v", a.name, err)
	}
	if string(got) != a.want.String() {
		t.Fatalf("%s holds %d bytes, want the %d acknowledged appends (%d bytes): an append was lost or applied twice\n got %.200q\nwant %.200q",
			a.name, len(got), a.count, a.want.Len(), got, a.want.String())
	}
}

// waitPool waits (in virtual time) until the pool's pg_num is pgNum and
// no merge is left.
func waitPool(t *testing.T, c *Cluster, pgNum uint32, what string) {
	t.Helper()
	for range 120 {
		if p := c.Map().PoolByName("rbd"); p.PGNum == pgNum && !p.Merging() {
			return
		}
		time.Sleep(5 * time.Second)
	}
	p := c.Map().PoolByName("rbd")
	r := c.Run("osd pool get", "pool", "rbd", "var", "merge_status")
	t.Fatalf("%s: pool at pg_num %d pgp_num %d, want %d (%s)", what, p.PGNum, p.PGPNum, pgNum, r.Text)
}

// The test: writers (whole-object writes and an appender) run
// while the pool goes from 8 to 64 PGs and back to 16, and an OSD fails
// while the merge's pgp_num steps down: it is marked out, the merge goes
// on without it, and when it returns (and is marked in again) its copies,
// laid out for 64 PGs, merge on its own map as stale copies and are
// backfilled. Every acknowledged write reads back, the appends are each
// applied once, and every copy on every OSD is in the collection of the
// PG its hash maps to.
func TestMergeWithAnOSDFailing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.AddOSD("h4")
		c.Run("config set", "who", "mon", "name", "target_max_misplaced_ratio", "value", "0.5")
		c.settle(t, "with four OSDs")
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		w := startSplitWriters(t, io, 4, 40)
		app := startAppender(t, io, "appended")
		time.Sleep(10 * time.Second)
		c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "64")
		c.Run("osd pool set", "pool", "rbd", "var", "pgp_num", "val", "64")
		c.settle(t, "after the split")

		r := c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "16")
		if !strings.Contains(r.Status, "merge its 64 PGs into 16") {
			t.Fatalf("pg_num 16: %q", r.Status)
		}
		time.Sleep(3 * time.Second)
		c.StopOSD(2)
		c.Run("osd out", "ids", "2")
		waitPool(t, c, 16, "merging without osd.2")
		c.settle(t, "after the merge")
		c.StartOSD(2)
		time.Sleep(10 * time.Second)
		c.Run("osd in", "ids", "2")
		time.Sleep(20 * time.Second)
		acked := w.finish()
		c.settle(t, "with osd.2 back")
		app.check(t, io)
		acked[app.name] = []byte(app.want.String())
		t.Logf("%d writes and %d appends acknowledged", w.n, app.count)
		checkSplitLayout(t, c, io, acked)
	})
}

var chaosMergeSeeds = flag.Int("chaos.mergeseeds", 4, "how many seeds TestChaosMerge runs (from -chaos.first)")

// TestChaosMerge runs TestChaos's schedules with pool rbd merging from 16
// PGs to 8 in the middle of them, while OSDs crash, disks fail, copies
// rot and links break: the monitors refuse the merge while a PG is
// unclean, so it is asked for again every other fault from a third of
// the way on until they take it. The same end state is required: every
// PG active+clean, the merge done, nothing left to repair, every
// acknowledged write readable.
func TestChaosMerge(t *testing.T) {
	seeds := make([]uint64, *chaosMergeSeeds)
	for i := range seeds {
		seeds[i] = *chaosFirst + uint64(i)
	}
	if *chaosSeed != 0 {
		seeds = []uint64{*chaosSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			asked, refused := false, 0
			ask := func(c *Cluster) {
				if asked {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				r, err := c.Mon.Run(ctx, wire.NewCommand("osd pool set", "pool", "rbd", "var", "pg_num", "val", "8"))
				switch {
				case err != nil:
					c.t.Fatalf("osd pool set rbd pg_num 8: %v", err)
				case r.Code == wire.EBUSY && strings.Contains(r.Status, "cannot merge PGs while"):
					refused++
				case r.Code != 0:
					c.t.Fatalf("osd pool set rbd pg_num 8: %v", r.Err())
				default:
					asked = true
				}
			}
			events := map[int]func(*Cluster){}
			for i := 10; i < 40; i += 2 {
				events[i] = ask
			}
			synctest.Test(t, func(t *testing.T) { runChaos(t, seed, events) })
			t.Logf("merge asked for: %v (refused %d times while PGs were unclean)", asked, refused)
		})
	}
}

// A write applied to a source PG before the merge and resent after it
// (its client never saw the answer) is answered from the merged PG's
// log, where its entry was renumbered: it is not applied twice. An
// append makes a second application visible.
func TestResentWriteAfterMergeAppliesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "16")
		c.Run("osd pool set", "pool", "rbd", "var", "pgp_num", "val", "16")
		c.settle(t, "after the split")
		rc := c.NewRawClient("client.1")
		// An object of a source PG when pg_num goes from 16 to 8.
		var name string
		for i := 0; name == ""; i++ {
			if n := fmt.Sprint("obj-", i); split.Where(objid.Object(1, "", n).Hash, 16) >= 8 {
				name = n
			}
		}
		id, source, mp := place(t, c, name)
		op := Op{Epoch: c.Epoch(), Object: id, PG: source, Ops: []wire.ObjectOp{{Code: wire.OpAppend, Data: []byte("+")}}}
		tid, ch := rc.Send(c.OSDs[mp.ActingPrimary], op)
		if first := rc.WaitCommitted(ch); first.Result != 0 {
			t.Fatalf("append: %+v", first)
		}
		c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "8")
		waitPool(t, c, 8, "merging")
		c.settle(t, "after the merge")
		id, target, mp := place(t, c, name)
		if target.Seed != source.Seed-8 {
			t.Fatalf("%s in pg %v after the merge, want %v's target", name, target, source)
		}
		// The resend, with the old map's PG: told to refresh its map.
		op.Tid = tid
		_, ch = rc.Send(c.OSDs[mp.ActingPrimary], op)
		if r := rc.Wait(ch); r.Result != -wire.ESTALE {
			t.Fatalf("resend to the source %v: %+v, want ESTALE", source, r)
		}
		// With the new map: answered from the merged log.
		op.Epoch, op.PG = c.Epoch(), target
		_, ch = rc.Send(c.OSDs[mp.ActingPrimary], op)
		if again := rc.WaitCommitted(ch); again.Result != 0 || again.Version.Epoch == 0 {
			t.Fatalf("resend to the target %v answered %+v", target, again)
		}
		_, ch = rc.Send(c.OSDs[mp.ActingPrimary], Op{Epoch: c.Epoch(), Object: id, PG: target, Ops: []wire.ObjectOp{{Code: wire.OpRead}}})
		if r := rc.Wait(ch); r.Result != 0 || string(r.Ops[0].Data) != "+" {
			t.Fatalf("object holds %q (%d) after the resend, want one append", r.Ops[0].Data, r.Result)
		}
	})
}
