package sim

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// An OSD that was down while writes went on catches up when it returns:
// peering finds it behind, and the primary pushes it what it missed (or
// pulls it first, when the returning OSD is the primary); with a log too
// short to say what it missed, it gets every object (backfill; a
// returning primary first asks for a temporary acting set led by the
// authority, which backfills it and then hands the PG back). The proof:
// after it has caught up, the two OSDs that had the writes all along
// stop, and the returned one, alone, serves every acknowledged write and
// none that was removed.
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
	c, io := newPoolCluster(t, Options{LogEntries: logEntries}, 1, "h1", "h2", "h3")
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

// A returning OSD is recovered behind client I/O: the PG serves as soon
// as its primary is current, the primary pushes the missing objects in
// object order, throttled, and a write to an object the returning OSD
// still lacks pushes that object first, ahead of the queue.
func TestRecoveryRunsBehindClientIO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One push at a time, a second apart (virtual): recovering 20
		// objects takes 20 s, long after the PG went active.
		c, io := newPoolCluster(t, Options{RecoveryMaxPGs: 8, RecoveryMaxPushes: 1, RecoverySleep: time.Second}, 2, "h1", "h2", "h3")
		ctx := context.Background()
		_, pg, mp := place(t, c, "probe")
		returning, primary := mp.Acting[2], mp.ActingPrimary
		var ids []objid.ID
		for i := 0; len(ids) < 20; i++ {
			if id, p, _ := place(t, c, fmt.Sprint("obj-", i)); p == pg {
				ids = append(ids, id)
			}
		}
		slices.SortFunc(ids, objid.Compare) // the order recovery takes
		content := func(id objid.ID, round int) string { return fmt.Sprintf("%s written in round %d", id.Name, round) }
		writeAll := func(round int) {
			for _, id := range ids {
				if err := io.WriteFull(ctx, id.Name, []byte(content(id, round))); err != nil {
					t.Fatal(err)
				}
			}
		}
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		onReturning := func(id objid.ID) string {
			b, _ := c.OSDs[returning].Store.Read(ctx, coll, id, 0, 0)
			return string(b)
		}
		writeAll(1)
		c.StopOSD(returning)
		c.WaitForEpoch(c.Epoch())
		writeAll(2)
		c.StartOSD(returning)
		c.WaitForEpoch(c.Epoch())

		last := ids[len(ids)-1]
		if err := io.WriteFull(ctx, last.Name, []byte(content(last, 3))); err != nil {
			t.Fatal(err)
		}
		if got := onReturning(last); got != content(last, 3) {
			t.Fatalf("osd.%d holds %q for the object written during recovery, want %q", returning, got, content(last, 3))
		}
		if got := onReturning(ids[len(ids)-2]); got != content(ids[len(ids)-2], 1) {
			t.Fatalf("osd.%d already holds %q for an object recovery had not reached", returning, got)
		}
		synctest.Wait() // the recoverer takes its slot on its own goroutine
		if state := pgState(c, primary, pg); state != "active+recovering+degraded" {
			t.Fatalf("pg %v is %q while it recovers, want active+recovering+degraded", pg, state)
		}
		c.settle(t, "after recovery")
		for _, id := range ids {
			want := content(id, 2)
			if id == last {
				want = content(id, 3)
			}
			if got := onReturning(id); got != want {
				t.Fatalf("osd.%d holds %q for %s after recovery, want %q", returning, got, id.Name, want)
			}
		}
	})
}

// pgState is pg's state as osd id reports it.
func pgState(c *Cluster, id int32, pg osdmap.PG) string {
	for _, st := range c.OSDs[id].D.PGs() {
		if st.PG == pg.String() {
			return st.State
		}
	}
	return "missing"
}

// A primary back from so long an absence that it needs a backfill does
// not hold the PG up while it copies: it asks for a temporary acting set
// led by the authority, which serves and backfills it behind client I/O,
// then hands the PG back to it by removing the temporary set.
func TestBackfillOfAPrimaryUsesPGTemp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, io := newPoolCluster(t, Options{LogEntries: 4, RecoveryMaxPGs: 8, RecoveryMaxPushes: 1, RecoverySleep: time.Second}, 2, "h1", "h2", "h3")
		ctx := context.Background()
		_, pg, mp := place(t, c, "probe")
		returning := mp.ActingPrimary
		var names []string
		for i := 0; len(names) < 20; i++ {
			if _, p, _ := place(t, c, fmt.Sprint("obj-", i)); p == pg {
				names = append(names, fmt.Sprint("obj-", i))
			}
		}
		writeAll := func(round int) {
			for _, n := range names {
				if err := io.WriteFull(ctx, n, fmt.Appendf(nil, "%s round %d", n, round)); err != nil {
					t.Fatal(err)
				}
			}
		}
		writeAll(1)
		c.StopOSD(returning)
		c.WaitForEpoch(c.Epoch())
		writeAll(2) // far more writes than the 4-entry log keeps
		c.StartOSD(returning)
		c.WaitForEpoch(c.Epoch())

		if err := io.WriteFull(ctx, names[0], []byte("written while the primary is backfilled")); err != nil {
			t.Fatal(err)
		}
		m := c.Map()
		temp := m.PGTemp(pg)
		now, _ := m.PGToUpActing(pg, &osdmap.Scratch{})
		if len(temp) == 0 || now.ActingPrimary == returning || !slices.Contains(now.Acting, returning) {
			t.Fatalf("while osd.%d is backfilled: pg_temp %v, acting %v led by osd.%d", returning, temp, now.Acting, now.ActingPrimary)
		}
		// The write completes once the PG is active; the recoverer takes
		// its slot (backfill_wait to backfilling) on its own goroutine.
		synctest.Wait()
		if state := pgState(c, now.ActingPrimary, pg); state != "active+backfilling+degraded+remapped" {
			t.Fatalf("pg %v is %q while osd.%d is backfilled, want active+backfilling+degraded+remapped (two complete copies of three)", pg, state, returning)
		}
		c.settle(t, "after the backfill")
		m = c.Map()
		end, _ := m.PGToUpActing(pg, &osdmap.Scratch{})
		if m.PGTemp(pg) != nil || end.ActingPrimary != returning {
			t.Fatalf("after the backfill: pg_temp %v, primary osd.%d; want none and osd.%d", m.PGTemp(pg), end.ActingPrimary, returning)
		}
		got, err := io.Read(ctx, names[0], 0, 0)
		if err != nil || string(got) != "written while the primary is backfilled" {
			t.Fatalf("%s reads %q, %v", names[0], got, err)
		}
		for _, n := range names[1:] {
			if got, err := io.Read(ctx, n, 0, 0); err != nil || string(got) != fmt.Sprintf("%s round 2", n) {
				t.Fatalf("%s reads %q, %v", n, got, err)
			}
		}
	})
}
