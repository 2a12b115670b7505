package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/rados"
)

// An object whose only current copy rots while the other OSDs were away
// is unfound: its PG does not go active without it, says so
// (incomplete, with an unfound count for OBJECT_UNFOUND), and
// waits. An operator's mark_unfound_lost delete lets it go on without
// the object, which then reads as absent everywhere; every other object
// survives.
func TestUnfoundObjectMarkedLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, io := newPoolCluster(t, Options{}, 1, "h1", "h2", "h3")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
		defer cancel()
		id, pg, mp := place(t, c, "doomed")
		primary, keeper, other := mp.Acting[0], mp.Acting[1], mp.Acting[2]
		var neighbour string
		for i := 0; neighbour == ""; i++ {
			if _, p, _ := place(t, c, "n"+string(rune('a'+i))); p == pg {
				neighbour = "n" + string(rune('a'+i))
			}
		}
		for _, n := range []string{"doomed", neighbour} {
			if err := io.WriteFull(ctx, n, []byte(n+" v1")); err != nil {
				t.Fatal(err)
			}
		}
		// Only the keeper takes v2 (min_size 1); then its copy rots.
		c.StopOSD(primary)
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

		if state := pgState(c, primary, pg); state != "incomplete" {
			t.Fatalf("pg %v is %q, want incomplete", pg, state)
		}
		var unfound int
		for _, st := range c.OSDs[primary].D.PGs() {
			if st.PG == pg.String() {
				unfound = st.Unfound
			}
		}
		if unfound != 1 {
			t.Fatalf("pg %v reports %d unfound objects, want 1", pg, unfound)
		}
		lose := func(mode string) wire.Reply {
			return c.OSDs[primary].D.Command(wire.Command{Prefix: "pg mark_unfound_lost", Args: map[string]string{"pgid": pg.String(), "mode": mode}})
		}
		if r := lose("forget"); r.Code == 0 {
			t.Fatalf("mode forget accepted: %+v", r)
		}
		if r := lose("delete"); r.Code != 0 {
			t.Fatalf("mark_unfound_lost delete: %+v", r)
		}
		c.settle(t, "after mark_unfound_lost")
		if _, err := io.Read(ctx, "doomed", 0, 0); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("the lost object reads back: %v", err)
		}
		if got, err := io.Read(ctx, neighbour, 0, 0); err != nil || string(got) != neighbour+" v1" {
			t.Fatalf("%s reads %q, %v", neighbour, got, err)
		}
		for _, o := range []int32{primary, keeper, other} {
			if _, err := c.OSDs[o].Store.Stat(ctx, objectstore.PGCollection(pg.Pool, pg.Seed), id); err == nil {
				t.Errorf("osd.%d still holds the lost object", o)
			}
		}
	})
}

// An object whose only current copy rots after its PG went active (the
// primary took it while the replicas were away, and its copy rotted
// before recovery, one object a minute, copied it to them) is unfound in
// the active PG, as in Ceph: recovery stops pushing it and goes on with
// the rest, the PG shows active+recovery_unfound+degraded with one
// unfound object (OBJECT_UNFOUND), reads of it wait while the PG's other
// objects are served, and mark_unfound_lost delete peers the PG again
// without it.
func TestObjectRotsInActivePG(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, io := newPoolCluster(t, Options{RecoveryMaxPushes: 1, RecoverySleep: time.Minute}, 1, "h1", "h2", "h3")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute) // virtual time
		defer cancel()
		id, pg, mp := place(t, c, "doomed")
		primary, replicas := mp.Acting[0], mp.Acting[1:]
		// Objects of the same PG, one before the doomed one in the order
		// recovery takes, one after.
		var before, after string
		for i := 0; before == "" || after == ""; i++ {
			n := fmt.Sprint("n", i)
			o, p, _ := place(t, c, n)
			switch {
			case p != pg:
			case objid.Compare(o, id) < 0 && before == "":
				before = n
			case objid.Compare(o, id) > 0 && after == "":
				after = n
			}
		}
		for _, x := range replicas {
			c.StopOSD(x)
		}
		c.WaitForEpoch(c.Epoch())
		for _, n := range []string{before, "doomed", after} { // the primary alone holds them
			if err := io.WriteFull(ctx, n, []byte(n+" v1")); err != nil {
				t.Fatal(err)
			}
		}
		for _, x := range replicas {
			c.StartOSD(x)
		}
		c.WaitForEpoch(c.Epoch())
		synctest.Wait() // active; the first object pushed, the next a minute later
		if st := c.pgStatus(t, primary, pg); !strings.HasPrefix(st.State, "active+recovering") {
			t.Fatalf("pg %v is %q, want it recovering", pg, st.State)
		}
		c.OSDs[primary].Gate.Corrupt(objectstore.PGCollection(pg.Pool, pg.Seed), id)
		time.Sleep(5 * time.Minute)
		synctest.Wait()

		st := c.pgStatus(t, primary, pg)
		if st.State != "active+recovery_unfound+degraded" || st.Unfound != 1 {
			t.Fatalf("pg %v is %q with %d unfound objects, want active+recovery_unfound+degraded with 1", pg, st.State, st.Unfound)
		}
		if h := c.Run("health", "detail", "true"); !strings.Contains(string(h.Text)+h.Status, "OBJECT_UNFOUND") {
			t.Fatalf("health does not report the unfound object: %q %q", h.Status, h.Text)
		}
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		for _, x := range replicas {
			if got, err := c.OSDs[x].Store.Read(ctx, coll, objid.Object(1, "", after), 0, 0); err != nil || string(got) != after+" v1" {
				t.Fatalf("osd.%d holds %q for %s (%v): recovery stopped at the unfound object", x, got, after, err)
			}
		}
		for _, n := range []string{before, after} {
			if got, err := io.Read(ctx, n, 0, 0); err != nil || string(got) != n+" v1" {
				t.Fatalf("%s reads %q, %v", n, got, err)
			}
		}
		short, cancelShort := context.WithTimeout(ctx, time.Minute)
		got, err := io.Read(short, "doomed", 0, 0)
		cancelShort()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("read of the unfound object: %q, %v; want it to wait", got, err)
		}
		r := c.OSDs[primary].D.Command(wire.Command{Prefix: "pg mark_unfound_lost", Args: map[string]string{"pgid": pg.String(), "mode": "delete"}})
		if r.Code != 0 {
			t.Fatalf("mark_unfound_lost delete: %+v", r)
		}
		c.settle(t, "after mark_unfound_lost")
		if _, err := io.Read(ctx, "doomed", 0, 0); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("the lost object reads back: %v", err)
		}
		for _, x := range mp.Acting {
			if _, err := c.OSDs[x].Store.Stat(ctx, coll, id); err == nil {
				t.Errorf("osd.%d still holds the lost object", x)
			}
		}
	})
}
