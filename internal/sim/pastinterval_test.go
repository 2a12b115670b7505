package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// pgStatus returns what osd id says about PG pg.
func (c *Cluster) pgStatus(t *testing.T, id int32, pg osdmap.PG) osd.PGStatus {
	t.Helper()
	for _, s := range c.OSDs[id].D.PGs() {
		if s.PG == pg.String() {
			return s
		}
	}
	t.Fatalf("osd.%d does not hold pg %v", id, pg)
	return osd.PGStatus{}
}

// An OSD that returns after writes went on without it, while the OSDs
// that took those writes are down, must not serve: its PG stays down
// (naming whom it waits for) until one of them returns, and then serves
// the writes it missed. Serving at once would return stale data and, with
// min_size 1, take writes that peering would later throw away.
func TestPGStaysDownWithoutPastIntervalMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, io := newPoolCluster(t, Options{}, 1, "h1", "h2", "h3")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
		defer cancel()
		_, pg, mp := place(t, c, "obj")
		if err := io.WriteFull(ctx, "obj", []byte("version 1")); err != nil {
			t.Fatal(err)
		}
		late := mp.Acting[2]
		c.StopOSD(late)
		c.WaitForEpoch(c.Epoch())
		if err := io.WriteFull(ctx, "obj", []byte("version 2")); err != nil {
			t.Fatal(err)
		}
		for _, id := range mp.Acting[:2] {
			c.StopOSD(id)
		}
		c.StartOSD(late)
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		st := c.pgStatus(t, late, pg)
		if st.State != "down" || !slices.Contains(st.BlockedBy, mp.Acting[0]) || !slices.Contains(st.BlockedBy, mp.Acting[1]) {
			t.Fatalf("osd.%d alone: pg %v is %q, blocked by %v (%s); want down, blocked by %v",
				late, pg, st.State, st.BlockedBy, st.DownReason, mp.Acting[:2])
		}
		short, cancelShort := context.WithTimeout(ctx, time.Minute)
		got, err := io.Read(short, "obj", 0, 0)
		cancelShort()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("read from a down PG: %q, %v; want it to wait", got, err)
		}
		c.StartOSD(mp.Acting[1])
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		got, err = io.Read(ctx, "obj", 0, 0)
		if err != nil || string(got) != "version 2" {
			t.Fatalf("read once an OSD of the last interval is back: %q, %v; want version 2", got, err)
		}
	})
}

// An OSD marked out keeps its copy as a stray; the OSD that takes its
// place, empty, finds it through past intervals, copies the PG from it
// and serves every object; then the stray deletes its copy.
func TestNewPrimaryCopiesFromStray(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(t, Options{})
		for _, h := range []string{"h1", "h2", "h3", "h4"} {
			c.AddOSD(h)
		}
		c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "1", "min_size", "1", "yes_i_really_mean_it", "true")
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
		defer cancel()
		_, pg, mp := place(t, c, "obj-0")
		var names []string
		for i := 0; len(names) < 6; i++ {
			name := fmt.Sprint("obj-", i)
			if _, p, _ := place(t, c, name); p == pg {
				names = append(names, name)
				if err := io.WriteFull(ctx, name, []byte("content of "+name)); err != nil {
					t.Fatal(err)
				}
			}
		}
		old := mp.Acting[0]
		c.Run("osd out", "ids", fmt.Sprint(old))
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		_, _, now := place(t, c, names[0])
		if now.Acting[0] == old {
			t.Fatalf("pg %v still maps to osd.%d after it was marked out", pg, old)
		}
		if ok, err := c.OSDs[old].Store.CollectionExists(ctx, objectstore.PGCollection(pg.Pool, pg.Seed)); err != nil || ok {
			t.Fatalf("osd.%d still holds pg %v once it is clean on osd.%d: %v, %v", old, pg, now.Acting[0], ok, err)
		}
		for _, n := range names {
			got, err := io.Read(ctx, n, 0, 0)
			if err != nil || string(got) != "content of "+n {
				t.Fatalf("%s from osd.%d after osd.%d went out: %q, %v", n, now.Acting[0], old, got, err)
			}
		}
		c.StopOSD(old)
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		for _, n := range names {
			if got, err := io.Read(ctx, n, 0, 0); err != nil || string(got) != "content of "+n {
				t.Fatalf("%s once osd.%d stopped: %q, %v", n, old, got, err)
			}
		}
	})
}

// A PG collection whose meta object is gone (an OSD crashed while
// deleting a stray copy) is finished off when the OSD starts, never taken
// for a history of the PG.
func TestHalfDeletedPGIsRemovedAtStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(t, Options{})
		o := c.AddOSD("h1")
		c.StopOSD(o.ID)
		coll := objectstore.PGCollection(7, 3)
		var txn objectstore.Transaction
		txn.CreateCollection(coll)
		txn.Write(coll, objid.Object(7, "", "leftover"), 0, []byte("stale"))
		ctx := context.Background()
		if err := objectstore.Apply(ctx, o.Store, &txn); err != nil {
			t.Fatal(err)
		}
		c.StartOSD(o.ID)
		if ok, err := o.Store.CollectionExists(ctx, coll); err != nil || ok {
			t.Fatalf("a half-deleted PG survives the OSD's start: %v, %v", ok, err)
		}
		for _, st := range o.D.PGs() {
			if st.PG == "7.3" {
				t.Fatal("the OSD loaded the half-deleted PG")
			}
		}
	})
}
