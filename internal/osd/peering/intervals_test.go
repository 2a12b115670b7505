package peering

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
)

func pl(epoch uint64, primary int32, acting ...int32) Placement {
	return Placement{Epoch: epoch, Acting: acting, Primary: primary, UpFrom: make([]uint32, len(acting)), MinSize: 2, Exists: true}
}

func TestBuildIntervals(t *testing.T) {
	restarted := pl(6, 0, 0, 1)
	restarted.UpFrom = []uint32{0, 6}
	got := BuildIntervals([]Placement{
		{Epoch: 1}, // before the pool
		pl(2, 0, 0, 1, 2), pl(3, 0, 0, 1, 2),
		pl(4, 0, 0, 1), // osd.2 down
		pl(5, 0, 0),    // below min_size: no writes
		restarted,      // osd.1 back with a new up_from
		pl(7, 1, 1, 0), // primary moves
	})
	want := []Interval{
		{2, 3, []int32{0, 1, 2}, 0, true},
		{4, 4, []int32{0, 1}, 0, true},
		{5, 5, []int32{0}, 0, false},
		{6, 6, []int32{0, 1}, 0, true},
		{7, 7, []int32{1, 0}, 1, true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i].String() || got[i].MaybeWentRW != want[i].MaybeWentRW {
			t.Errorf("interval %d: %v rw=%v, want %v rw=%v", i, got[i], got[i].MaybeWentRW, want[i], want[i].MaybeWentRW)
		}
	}
}

// A change of pg_num (a split) starts a new interval even where the
// acting set stays, as the OSD starts one.
func TestBuildIntervalsSplitsOnPGNum(t *testing.T) {
	a, b, c := pl(2, 0, 0, 1), pl(3, 0, 0, 1), pl(4, 0, 0, 1)
	a.PGNum, b.PGNum, c.PGNum = 8, 8, 64
	got := BuildIntervals([]Placement{a, b, c})
	if len(got) != 2 || got[0].First != 2 || got[0].Last != 3 || got[1].First != 4 {
		t.Fatalf("got %v, want [2,3] and [4,4]", got)
	}
}

func TestPriorSet(t *testing.T) {
	past := []Interval{
		{2, 3, []int32{0, 1, 2}, 0, true},
		{4, 4, []int32{0, 1}, 0, true},
		{5, 5, []int32{0}, 0, false},
		{6, 8, []int32{3, 4}, 3, true},
	}
	up := func(ids ...int32) func(int32) bool { return func(x int32) bool { return slices.Contains(ids, x) } }

	pr := PriorSet(past, 2, up(2, 4))
	if !slices.Equal(pr.Probe, []int32{2, 4}) || len(pr.Down) != 1 || pr.Down[0].First != 4 ||
		!slices.Equal(pr.BlockedBy, []int32{0, 1}) || !strings.Contains(pr.Reason(), "osd [0 1]") {
		t.Errorf("osd.2 and osd.4 up: %+v (%s)", pr, pr.Reason())
	}
	// Since epoch 6, only the last interval counts.
	if pr := PriorSet(past, 6, up(2, 4)); !slices.Equal(pr.Probe, []int32{4}) || len(pr.Down) != 0 || pr.Reason() != "" {
		t.Errorf("since 6: %+v", pr)
	}
	// An interval that could not take writes blocks nothing.
	if pr := PriorSet(past[2:3], 0, up()); len(pr.Down) != 0 || len(pr.Probe) != 0 {
		t.Errorf("read-only interval: %+v", pr)
	}
	if les := MaxStarted([]Member{{Info: infoLES(3)}, {Info: infoLES(7)}, {}}); les != 7 {
		t.Errorf("MaxStarted = %d, want 7", les)
	}
}

func infoLES(e uint64) pglog.Info { return pglog.Info{LastEpochStarted: e} }
