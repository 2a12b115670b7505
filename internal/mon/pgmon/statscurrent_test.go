package pgmon

import (
	"testing"

	"github.com/cuttlestore/cuttle/osdmap"
)

// StatsCurrent: every PG of the pool reported since the epoch, or with
// the placement the map still gives it; unknown PGs are not current.
func TestStatsCurrent(t *testing.T) {
	tm := newTestMon(t)
	if tm.svc.StatsCurrent(1, tm.m.Epoch()) {
		t.Fatal("pool with no reports is current")
	}
	tm.reportAll(tm.clean)
	if !tm.svc.StatsCurrent(1, tm.m.Epoch()) {
		t.Fatal("pool just reported is not current")
	}
	// A new pool moves nothing of pool 1: its reports stand.
	tm.change(func(s *osdmap.Spec) { s.Pools = append(s.Pools, testPool(2, 4)); s.PoolMax = 2 })
	if !tm.svc.StatsCurrent(1, tm.m.Epoch()) {
		t.Fatal("pool 1, whose placement did not change, is not current")
	}
	if tm.svc.StatsCurrent(2, tm.m.Epoch()) {
		t.Fatal("pool 2, never reported, is current")
	}
	// A PG whose up set changes (same primary) is not current until its
	// primary reports it again.
	pg := osdmap.PG{Pool: 1, Seed: 0}
	var sc osdmap.Scratch
	mp, err := tm.m.PGToUpActing(pg, &sc)
	if err != nil {
		t.Fatal(err)
	}
	tm.change(func(s *osdmap.Spec) { s.PGUpmap[pg] = []int32{mp.Up[0], mp.Up[2], mp.Up[1]} })
	if tm.svc.StatsCurrent(1, tm.m.Epoch()) {
		t.Fatal("pool 1 with a moved PG not reported since is current")
	}
	tm.reportAll(tm.clean)
	if !tm.svc.StatsCurrent(1, tm.m.Epoch()) {
		t.Fatal("pool 1 reported again is not current")
	}
}
