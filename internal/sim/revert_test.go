package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/cuttlestore/cuttle/rados"
)

// mark_unfound_lost revert: an object whose newest copy is lost goes
// back to the newest older copy an OSD holds, which every member then
// holds, and a deep scrub finds the copies consistent.

// reverted checks, once the cluster settled after a revert, that name
// reads back as want through the client and from every member's store,
// at the version of the revert, and that a deep scrub of its PG finds
// nothing inconsistent.
func reverted(t *testing.T, c *Cluster, io *rados.IOContext, name, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
	defer cancel()
	c.settle(t, "after mark_unfound_lost revert")
	if got, err := io.Read(ctx, name, 0, 0); err != nil || string(got) != want {
		t.Fatalf("%s reads %q, %v; want the older copy %q", name, got, err, want)
	}
	id, pg, mp := place(t, c, name)
	// The copy has the version of the log entry that recorded the
	// revert, the PG's newest: a later search for the object finds it.
	st, err := io.Stat(ctx, name)
	if head := c.pgStatus(t, mp.ActingPrimary, pg).LastUpdate; err != nil || !strings.HasSuffix(head, fmt.Sprintf("'%d", st.Version)) {
		t.Fatalf("%s is at version %d (%v); want the PG's last update %s", name, st.Version, err, head)
	}
	coll := objectstore.PGCollection(pg.Pool, pg.Seed)
	for _, x := range mp.Acting {
		if got, err := c.OSDs[x].Store.Read(ctx, coll, id, 0, 0); err != nil || string(got) != want {
			t.Errorf("osd.%d holds %q for %s (%v); want %q", x, got, name, err, want)
		}
	}
	tellPG(t, c.connect(t, "client.admin"), mp, "pg deep-scrub", pg)
	if st := c.pgStatus(t, mp.ActingPrimary, pg); st.State != "active+clean" || len(st.Inconsistent) != 0 || st.LastDeepScrub.IsZero() {
		t.Fatalf("deep scrub after the revert: %q, inconsistent %v, deep scrubbed %v", st.State, st.Inconsistent, st.LastDeepScrub)
	}
}

// revertLost sends mark_unfound_lost revert to the PG's primary.
func revertLost(t *testing.T, c *Cluster, primary int32, pg osdmap.PG) {
	t.Helper()
	r := c.OSDs[primary].D.Command(wire.Command{Prefix: "pg mark_unfound_lost", Args: map[string]string{"pgid": pg.String(), "mode": "revert"}})
	if r.Code != 0 || !strings.Contains(r.Status, "reverted") {
		t.Fatalf("mark_unfound_lost revert: %+v", r)
	}
}

// The PG's peering cannot find v2 (only the keeper took it, and its
// copy rotted), so the PG is incomplete; the primary has no copy at all
// (it was down for v1 too), and the third OSD, which took v1 before it
// went down, holds the only older copy. Revert pulls that copy to the
// primary, the PG goes active with it, and every member gets it.
func TestUnfoundObjectRevertedIncomplete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, io := newPoolCluster(t, Options{}, 1, "h1", "h2", "h3")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
		defer cancel()
		id, pg, mp := place(t, c, "doomed")
		primary, keeper, other := mp.Acting[0], mp.Acting[1], mp.Acting[2]
		c.StopOSD(primary)
		c.WaitForEpoch(c.Epoch())
		if err := io.WriteFull(ctx, "doomed", []byte("doomed v1")); err != nil {
			t.Fatal(err)
		}
		c.StopOSD(other)
		c.WaitForEpoch(c.Epoch())
		if err := io.WriteFull(ctx, "doomed", []byte("doomed v2")); err != nil {
			t.Fatal(err)
		}
		c.OSDs[keeper].Gate.Corrupt(objectstore.PGCollection(pg.Pool, pg.Seed), id)
		c.StartOSD(primary)
		c.StartOSD(other)
		c.WaitForEpoch(c.Epoch())
		time.Sleep(time.Minute)
		synctest.Wait()
		if st := c.pgStatus(t, primary, pg); st.State != "incomplete" || st.Unfound != 1 {
			t.Fatalf("pg %v is %q with %d unfound objects, want incomplete with 1", pg, st.State, st.Unfound)
		}
		if _, err := c.OSDs[primary].Store.Stat(ctx, objectstore.PGCollection(pg.Pool, pg.Seed), id); err == nil {
			t.Fatalf("osd.%d, the primary, holds a copy of its own", primary)
		}
		revertLost(t, c, primary, pg)
		reverted(t, c, io, "doomed", "doomed v1")
		// A write after the revert goes on from the reverted copy.
		if err := io.Append(ctx, "doomed", []byte(" v3")); err != nil {
			t.Fatal(err)
		}
		if got, err := io.Read(ctx, "doomed", 0, 0); err != nil || string(got) != "doomed v1 v3" {
			t.Fatalf("after an append: %q, %v", got, err)
		}
	})
}

// The primary alone took v2 (the replicas were away) and its copy rots
// before recovery copied it: the object is unfound in the active PG.
// The replicas still hold v1; revert peers the PG again, which pulls v1
// back to the primary and pushes it to the replicas. The PG's other
// objects keep their newest versions.
func TestUnfoundObjectRevertedInActivePG(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, io := newPoolCluster(t, Options{RecoveryMaxPushes: 1, RecoverySleep: time.Minute}, 1, "h1", "h2", "h3")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute) // virtual time
		defer cancel()
		id, pg, mp := place(t, c, "doomed")
		primary, replicas := mp.Acting[0], mp.Acting[1:]
		// An object of the same PG that recovery takes first.
		var before string
		for i := 0; before == ""; i++ {
			n := fmt.Sprint("n", i)
			if o, p, _ := place(t, c, n); p == pg && objid.Compare(o, id) < 0 {
				before = n
			}
		}
		for _, n := range []string{before, "doomed"} {
			if err := io.WriteFull(ctx, n, []byte(n+" v1")); err != nil {
				t.Fatal(err)
			}
		}
		for _, x := range replicas {
			c.StopOSD(x)
		}
		c.WaitForEpoch(c.Epoch())
		for _, n := range []string{before, "doomed"} { // the primary alone holds v2
			if err := io.WriteFull(ctx, n, []byte(n+" v2")); err != nil {
				t.Fatal(err)
			}
		}
		for _, x := range replicas {
			c.StartOSD(x)
		}
		c.WaitForEpoch(c.Epoch())
		synctest.Wait() // active; the first object pushed, the next a minute later
		c.OSDs[primary].Gate.Corrupt(objectstore.PGCollection(pg.Pool, pg.Seed), id)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if st := c.pgStatus(t, primary, pg); st.State != "active+recovery_unfound+degraded" || st.Unfound != 1 {
			t.Fatalf("pg %v is %q with %d unfound objects, want active+recovery_unfound+degraded with 1", pg, st.State, st.Unfound)
		}
		revertLost(t, c, primary, pg)
		reverted(t, c, io, "doomed", "doomed v1")
		if got, err := io.Read(ctx, before, 0, 0); err != nil || string(got) != before+" v2" {
			t.Fatalf("%s reads %q, %v", before, got, err)
		}
	})
}
