package sim

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/osdmap"
)

// pgsHeldBy returns the PG collections in osd id's store.
func (c *Cluster) pgsHeldBy(t *testing.T, id int32) []osdmap.PG {
	t.Helper()
	colls, err := c.OSDs[id].Store.ListCollections(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []osdmap.PG
	for _, cl := range colls {
		if cl.Kind == objectstore.KindPG {
			out = append(out, osdmap.PG{Pool: cl.Pool, Seed: cl.Seed})
		}
	}
	return out
}

// An OSD marked out has its data copied elsewhere and keeps none once
// every PG is clean; marked in, it receives what CRUSH gives it back. No
// acknowledged write is lost on the way.
func TestOutAndIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(t, Options{})
		for i := range 5 {
			c.AddOSD(fmt.Sprint("h", i))
		}
		c.Run("osd pool create", "pool", "rbd", "pg_num", "16", "size", "3", "min_size", "2")
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i := range 40 {
			if err := io.WriteFull(ctx, fmt.Sprint("obj-", i), []byte(fmt.Sprint("content ", i))); err != nil {
				t.Fatal(err)
			}
		}
		readAll := func(what string) {
			t.Helper()
			for i := range 40 {
				got, err := io.Read(ctx, fmt.Sprint("obj-", i), 0, 0)
				if err != nil || string(got) != fmt.Sprint("content ", i) {
					t.Fatalf("%s: obj-%d reads %q, %v", what, i, got, err)
				}
			}
		}
		held := c.pgsHeldBy(t, 4)
		if len(held) == 0 {
			t.Fatal("osd.4 holds no PG to start with")
		}
		c.Run("osd out", "ids", "4")
		c.settle(t, "after osd.4 went out")
		if left := c.pgsHeldBy(t, 4); len(left) != 0 {
			t.Fatalf("osd.4 still holds %v after it went out and every PG is clean", left)
		}
		readAll("with osd.4 out")
		c.StopOSD(4) // its copies are gone: nothing may depend on it
		c.settle(t, "with osd.4 out and stopped")
		readAll("with osd.4 out and stopped")
		c.StartOSD(4)
		c.Run("osd in", "ids", "4")
		c.settle(t, "after osd.4 came back in")
		back := c.pgsHeldBy(t, 4)
		slices.SortFunc(back, osdmap.ComparePG)
		slices.SortFunc(held, osdmap.ComparePG)
		if !slices.Equal(back, held) {
			t.Fatalf("osd.4 holds %v after coming back in; CRUSH gives it %v", back, held)
		}
		readAll("with osd.4 back in")
	})
}

// With noout set, a down OSD is never marked out, so nothing moves.
func TestNooutKeepsDataInPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.Run("osd set", "key", "noout")
		c.StopOSD(2)
		time.Sleep(time.Hour) // far past mon_osd_down_out_interval
		synctest.Wait()
		if o := c.Map().OSD(2); !o.IsIn() {
			t.Fatal("osd.2 was marked out with noout set")
		}
	})
}
