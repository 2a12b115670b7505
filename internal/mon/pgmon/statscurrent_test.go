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

// PGStat: a PG never reported is unknown and not current; a reported one
// carries its report; one whose primary went down is stale and not
// current.
func TestPGStat(t *testing.T) {
	tm := newTestMon(t)
	pg := osdmap.PG{Pool: 1, Seed: 2}
	if st, ok := tm.svc.PGStat(pg); ok || st.State != "unknown" || st.PG != pg {
		t.Fatalf("unreported: %+v %v", st, ok)
	}
	tm.reportAll(tm.clean)
	st, ok := tm.svc.PGStat(pg)
	if !ok || st.State != "active+clean" || st.PG != pg || len(st.Acting) == 0 {
		t.Fatalf("reported: %+v %v", st, ok)
	}
	if _, ok := tm.svc.PGStat(osdmap.PG{Pool: 1, Seed: 999}); ok {
		t.Fatal("a PG beyond pg_num has a current report")
	}
	tm.markDown(tm.primary(pg))
	if st, ok := tm.svc.PGStat(pg); ok || st.State != "stale+active+clean" {
		t.Fatalf("primary down: %+v %v", st, ok)
	}
}
