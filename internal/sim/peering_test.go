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

// An OSD that was down while writes went on catches up when it returns:
// peering finds it behind, and the primary pushes it what it missed (or
// pulls it first, when the returning OSD is the primary), before the PG
// serves again; with a log too short to say what it missed, it gets every
// object (backfill; a primary copies them from the authority). The proof: after it has caught up, the two OSDs that
// had the writes all along stop, and the returned one, alone, serves
// every acknowledged write and none that was removed.
func TestReturningOSDRecovers(t *testing.T) {
	for _, tc := range []struct {
		name       string
		member     int // which member of the acting set returns
		logEntries int
	}{
		{"replica", 2, 0},
		{"primary", 0, 0},
		{"replica-backfill", 1, 4},
		{"primary-backfill", 0, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { returningOSD(t, tc.member, tc.logEntries) })
		})
	}
}

func returningOSD(t *testing.T, member, logEntries int) {
	c := New(t, Options{LogEntries: logEntries})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "3", "min_size", "1")
	c.WaitForEpoch(c.Epoch())
	synctest.Wait()
	conn := c.connect(t, "client.app")
	io, err := conn.OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
	defer cancel()
	_, pg, mp := place(t, c, "probe")
	returning := mp.Acting[member]
	// Objects of the probe's PG, so that they share its acting set.
	var names []string
	for i := 0; len(names) < 12; i++ {
		name := fmt.Sprint("obj-", i)
		if _, p, _ := place(t, c, name); p == pg {
			names = append(names, name)
		}
	}
	content := func(name string, round int) []byte { return fmt.Appendf(nil, "%s written in round %d", name, round) }
	for _, n := range names[:4] {
		if err := io.WriteFull(ctx, n, content(n, 1)); err != nil {
			t.Fatal(err)
		}
	}
	c.StopOSD(returning)
	c.WaitForEpoch(c.Epoch())
	for _, n := range names { // new objects, and overwrites of old ones
		if err := io.WriteFull(ctx, n, content(n, 2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := io.Delete(ctx, names[0]); err != nil {
		t.Fatal(err)
	}
	c.StartOSD(returning)
	c.WaitForEpoch(c.Epoch())
	synctest.Wait() // peering and recovery
	coll := objectstore.PGCollection(pg.Pool, pg.Seed)
	if _, err := c.OSDs[returning].Store.Stat(ctx, coll, objid.Object(1, "", names[0])); err == nil {
		t.Fatalf("osd.%d still holds %s, removed while it was down", returning, names[0])
	}
	for _, id := range mp.Acting {
		if id != returning {
			c.StopOSD(id)
		}
	}
	c.WaitForEpoch(c.Epoch())
	synctest.Wait()
	for _, n := range names[1:] {
		got, err := io.Read(ctx, n, 0, 0)
		if err != nil || string(got) != string(content(n, 2)) {
			t.Fatalf("%s from osd.%d alone: %q, %v; want %q", n, returning, got, err, content(n, 2))
		}
	}
	if _, err := io.Read(ctx, names[0], 0, 0); err == nil {
		t.Fatalf("%s reads back after its removal", names[0])
	}
}
