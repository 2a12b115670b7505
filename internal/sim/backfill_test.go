package sim

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// A backfill compares versions, as Ceph's does: an OSD back after more
// writes than the PG log keeps is backfilled, yet of the PG's 20 objects
// it is pushed only the 3 written or created while it was away (the
// primary's cuttle_osd_recovered_objects_total counts 3, not 20); the
// object deleted meanwhile goes, and the copies it kept read as before.
func TestBackfillPushesOnlyWhatChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, io := newPoolCluster(t, Options{LogEntries: 4}, 1, "h1", "h2", "h3")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
		defer cancel()
		_, pg, mp := place(t, c, "probe")
		primary, returning := mp.Acting[0], mp.Acting[2]
		var names []string
		for i := 0; len(names) < 21; i++ {
			if _, p, _ := place(t, c, fmt.Sprint("obj-", i)); p == pg {
				names = append(names, fmt.Sprint("obj-", i))
			}
		}
		old, created := names[:20], names[20]
		content := func(name string, round int) []byte { return fmt.Appendf(nil, "%s written in round %d", name, round) }
		for _, n := range old {
			if err := io.WriteFull(ctx, n, content(n, 1)); err != nil {
				t.Fatal(err)
			}
		}
		c.settle(t, "before the OSD leaves")
		c.StopOSD(returning)
		c.WaitForEpoch(c.Epoch())
		// Six log entries while it is away: more than the log keeps.
		for round := 2; round <= 3; round++ {
			for _, n := range old[:2] {
				if err := io.WriteFull(ctx, n, content(n, round)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := io.WriteFull(ctx, created, content(created, 3)); err != nil {
			t.Fatal(err)
		}
		if err := io.Delete(ctx, old[2]); err != nil {
			t.Fatal(err)
		}
		before := c.Counter(primary, "cuttle_osd_recovered_objects_total")
		c.StartOSD(returning)
		c.settle(t, "after the backfill")
		if got := c.pgStatus(t, primary, pg); got.State != "active+clean" {
			t.Fatalf("pg %v is %q", pg, got.State)
		}
		if pushed := c.Counter(primary, "cuttle_osd_recovered_objects_total") - before; pushed != 3 {
			t.Fatalf("the backfill pushed %v objects, want 3 (two overwritten, one created)", pushed)
		}
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		read := func(n string) string {
			b, err := c.OSDs[returning].Store.Read(ctx, coll, objid.Object(1, "", n), 0, 0)
			if err != nil {
				return err.Error()
			}
			return string(b)
		}
		if _, err := c.OSDs[returning].Store.Stat(ctx, coll, objid.Object(1, "", old[2])); err == nil {
			t.Fatalf("osd.%d still holds %s, deleted while it was away", returning, old[2])
		}
		for i, n := range append(old, created) {
			want := content(n, 1)
			switch {
			case i == 2:
				continue
			case i < 2 || n == created:
				want = content(n, 3)
			}
			if got := read(n); got != string(want) {
				t.Fatalf("osd.%d holds %q for %s, want %q", returning, got, n, want)
			}
		}
	})
}
