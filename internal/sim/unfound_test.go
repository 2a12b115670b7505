package sim

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
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
		if r := lose("revert"); r.Code == 0 {
			t.Fatalf("revert accepted: %+v", r)
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
