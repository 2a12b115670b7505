package sim

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/rados"
)

// A replica whose store refuses a write's transaction (here: a snapshot
// write clones a head this replica's copy lost behind its back) logs the
// write with its objects missing, so that the next peering has recovery
// push it the head and the clone. Without that, its log took the next
// writes past the refused one and peering found nothing to recover: the
// replica held neither.
func TestReplicaStoreRefusesRepOp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDsWith(t, Options{})
		conn := c.connect(t, "client.admin")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", []byte("before")); err != nil {
			t.Fatal(err)
		}
		oid, pg, mp := place(t, c, "obj")
		other := ""
		for i := range 1000 {
			if _, p, _ := place(t, c, fmt.Sprint("other-", i)); p == pg {
				other = fmt.Sprint("other-", i)
				break
			}
		}
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		replica := c.OSDs[mp.Acting[1]]
		var txn objectstore.Transaction
		txn.Remove(coll, oid)
		if err := objectstore.Apply(ctx, replica.Store, &txn); err != nil {
			t.Fatal(err)
		}
		snap, err := io.CreatePoolSnap(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		c.WaitForEpoch(c.Epoch())
		// Clones obj: refused on the replica, whose EIO the client is
		// told (the primary applied it).
		if err := io.WriteFull(ctx, "obj", []byte("after")); err == nil {
			t.Fatal("the write the replica refused succeeded: the test no longer reaches the case")
		}
		if err := io.WriteFull(ctx, other, []byte("x")); err != nil { // the replica's log goes on
			t.Fatal(err)
		}
		c.KillOSD(replica.ID) // a new interval: peering
		c.StartOSD(replica.ID)
		c.WaitForEpoch(c.Epoch())
		c.waitClean(t, 0, nil)
		for _, o := range mp.Acting {
			st := c.OSDs[o].Store
			if b, err := st.Read(ctx, coll, oid, 0, 0); err != nil || string(b) != "after" {
				t.Errorf("osd.%d holds the head %q (%v), want \"after\"", o, b, err)
			}
			if b, err := st.Read(ctx, coll, oid.WithSnap(snap), 0, 0); err != nil || string(b) != "before" {
				t.Errorf("osd.%d holds the clone %q (%v), want \"before\"", o, b, err)
			}
		}
		expectAt(t, io, "obj", map[uint64]string{snap: "before", rados.SnapHead: "after"})
	})
}

// The primary learns of a replica's refusal from its answer and repairs
// the copy within the interval: no OSD restarts and no map moves the PG,
// yet the replica gets the head and the clone it refused pushed, its
// missing set empties and the PG is clean again in the same interval.
// Before, the replica lacked them until the next peering.
func TestReplicaRefusalRecoveredInInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDsWith(t, Options{})
		conn := c.connect(t, "client.admin")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", []byte("before")); err != nil {
			t.Fatal(err)
		}
		oid, pg, mp := place(t, c, "obj")
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		replica := c.OSDs[mp.Acting[1]]
		var txn objectstore.Transaction
		txn.Remove(coll, oid)
		if err := objectstore.Apply(ctx, replica.Store, &txn); err != nil {
			t.Fatal(err)
		}
		snap, err := io.CreatePoolSnap(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		before := c.pgStatus(t, mp.ActingPrimary, pg)
		// Clones obj: refused on the replica, whose EIO the client is
		// told (the primary applied it).
		if err := io.WriteFull(ctx, "obj", []byte("after")); err == nil {
			t.Fatal("the write the replica refused succeeded: the test no longer reaches the case")
		}
		time.Sleep(time.Minute) // recovery's pace, in virtual time
		synctest.Wait()
		after := c.pgStatus(t, mp.ActingPrimary, pg)
		if after.SameIntervalSince != before.SameIntervalSince || after.Primary != before.Primary {
			t.Fatalf("the interval changed (%d to %d, primary %d to %d): the test must show a repair within it",
				before.SameIntervalSince, after.SameIntervalSince, before.Primary, after.Primary)
		}
		if after.Missing != 0 || after.State != "active+clean" {
			t.Errorf("the primary reports %s with %d copies missing, want active+clean", after.State, after.Missing)
		}
		if rs := c.pgStatus(t, replica.ID, pg); rs.SameIntervalSince != before.SameIntervalSince {
			t.Errorf("the replica is in interval %d, want %d", rs.SameIntervalSince, before.SameIntervalSince)
		}
		for _, o := range mp.Acting {
			st := c.OSDs[o].Store
			if b, err := st.Read(ctx, coll, oid, 0, 0); err != nil || string(b) != "after" {
				t.Errorf("osd.%d holds the head %q (%v), want \"after\"", o, b, err)
			}
			if b, err := st.Read(ctx, coll, oid.WithSnap(snap), 0, 0); err != nil || string(b) != "before" {
				t.Errorf("osd.%d holds the clone %q (%v), want \"before\"", o, b, err)
			}
		}
		missing, err := pglog.LoadMissing(ctx, replica.Store, pg)
		if err != nil || len(missing) != 0 {
			t.Errorf("the replica's persisted missing set: %v, %v; want it empty", missing, err)
		}
		expectAt(t, io, "obj", map[uint64]string{snap: "before", rados.SnapHead: "after"})
	})
}
