package peering

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
)

// pl is a placement whose primary's up_thru is the epoch itself: every
// interval that acted went active.
func pl(epoch uint64, primary int32, acting ...int32) Placement {
	return Placement{Epoch: epoch, Acting: acting, Primary: primary, UpFrom: make([]uint32, len(acting)), MinSize: 2, Exists: true,
		PrimaryUpThru: epoch}
}

// upThru returns p with its primary's up_thru and up_from.
func upThru(p Placement, thru, from uint64) Placement {
	p.PrimaryUpThru, p.PrimaryUpFrom = thru, from
	return p
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
	}, true)
	want := []Interval{
		{2, 3, []int32{0, 1, 2}, 0, true, true, false},
		{4, 4, []int32{0, 1}, 0, true, true, false},
		{5, 5, []int32{0}, 0, false, false, false},
		{6, 6, []int32{0, 1}, 0, true, true, false},
		{7, 7, []int32{1, 0}, 1, true, true, false},
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
	got := BuildIntervals([]Placement{a, b, c}, true)
	if len(got) != 2 || got[0].First != 2 || got[0].Last != 3 || got[1].First != 4 {
		t.Fatalf("got %v, want [2,3] and [4,4]", got)
	}
}

// A merge pending (the PG holding writes) starts an interval, and its
// end another, as the OSD starts them.
func TestBuildIntervalsSplitsOnHeldWrites(t *testing.T) {
	a, b, c, d := pl(2, 0, 0, 1), pl(3, 0, 0, 1), pl(4, 0, 0, 1), pl(5, 0, 0, 1)
	b.HoldsWrites, c.HoldsWrites = true, true
	got := BuildIntervals([]Placement{a, b, c, d}, true)
	if len(got) != 3 || got[0].Last != 2 || got[1].First != 3 || got[1].Last != 4 || got[2].First != 5 {
		t.Fatalf("got %v, want [2,2], [3,4] and [5,5]", got)
	}
}

// An interval went read-write only if, in its last map, its primary's
// up_thru reaches its first epoch and its primary was up since then, as
// Ceph's PastIntervals::check_new_interval decides maybe_went_rw; an
// interval cut short by trimmed maps (firstKnown false) cannot tell.
func TestBuildIntervalsUpThru(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ps         []Placement
		firstKnown bool
		want       []bool // MaybeWentRW per interval
	}{
		{"up_thru recorded in the first epoch", []Placement{upThru(pl(4, 0, 0, 1), 4, 1)}, true, []bool{true}},
		{"up_thru recorded later in the interval", []Placement{upThru(pl(4, 0, 0, 1), 3, 1), upThru(pl(5, 0, 0, 1), 4, 1)}, true, []bool{true}},
		{"up_thru older than the interval", []Placement{upThru(pl(4, 0, 0, 1), 3, 1), upThru(pl(5, 0, 0, 1), 3, 1)}, true, []bool{false}},
		{"never asked (up_thru 0)", []Placement{upThru(pl(4, 0, 0, 1), 0, 1)}, true, []bool{false}},
		{"primary up only after the interval began", []Placement{upThru(pl(4, 0, 0, 1), 9, 5)}, true, []bool{false}},
		{"too few acted, up_thru or not", []Placement{upThru(pl(4, 0, 0), 9, 1)}, true, []bool{false}},
		{"first interval cut by trimming: unknown, so maybe", []Placement{upThru(pl(4, 0, 0, 1), 0, 1), upThru(pl(5, 1, 1, 0), 0, 1)}, false,
			[]bool{true, false}},
		{"a later interval's up_thru counts only from its own start", []Placement{upThru(pl(4, 0, 0, 1), 4, 1), upThru(pl(5, 1, 1, 0), 4, 1)}, true,
			[]bool{true, false}},
	} {
		got := BuildIntervals(tc.ps, tc.firstKnown)
		var rw []bool
		for _, iv := range got {
			rw = append(rw, iv.MaybeWentRW)
		}
		if !slices.Equal(rw, tc.want) {
			t.Errorf("%s: went rw %v, want %v (%v)", tc.name, rw, tc.want, got)
		}
	}
}

// PriorSet neither asks nor waits for the OSDs of an interval that acted
// but never went read-write; Skipped names it.
func TestPriorSetSkipsIntervalsThatNeverWentRW(t *testing.T) {
	past := []Interval{
		{2, 3, []int32{0, 1, 2}, 0, true, true, false},
		{4, 4, []int32{1, 2}, 1, true, false, false}, // osd.1 never got up_thru 4
		{5, 6, []int32{2}, 2, true, false, false},    // nor osd.2 up_thru 5
	}
	up := func(x int32) bool { return x == 0 }
	if pr := PriorSet(past, 2, up, nil); len(pr.Down) != 0 || !slices.Equal(pr.Probe, []int32{0}) {
		t.Errorf("osd.0 alone: %+v, want it to probe itself and wait for none", pr)
	}
	if sk := Skipped(past, 2); len(sk) != 2 || sk[0].First != 4 || sk[1].First != 5 {
		t.Errorf("Skipped = %v", sk)
	}
	past[1].MaybeWentRW = true
	if pr := PriorSet(past, 2, up, nil); len(pr.Down) != 1 || !slices.Equal(pr.BlockedBy, []int32{1, 2}) {
		t.Errorf("with osd.1's interval read-write: %+v, want down, blocked by osd.1 and osd.2", pr)
	}
}

func TestPriorSet(t *testing.T) {
	past := []Interval{
		{2, 3, []int32{0, 1, 2}, 0, true, true, false},
		{4, 4, []int32{0, 1}, 0, true, true, false},
		{5, 5, []int32{0}, 0, false, false, false},
		{6, 8, []int32{3, 4}, 3, true, true, false},
	}
	up := func(ids ...int32) func(int32) bool { return func(x int32) bool { return slices.Contains(ids, x) } }

	pr := PriorSet(past, 2, up(2, 4), nil)
	if !slices.Equal(pr.Probe, []int32{2, 4}) || len(pr.Down) != 1 || pr.Down[0].First != 4 ||
		!slices.Equal(pr.BlockedBy, []int32{0, 1}) || !strings.Contains(pr.Reason(), "osd [0 1]") {
		t.Errorf("osd.2 and osd.4 up: %+v (%s)", pr, pr.Reason())
	}
	// Since epoch 6, only the last interval counts.
	if pr := PriorSet(past, 6, up(2, 4), nil); !slices.Equal(pr.Probe, []int32{4}) || len(pr.Down) != 0 || pr.Reason() != "" {
		t.Errorf("since 6: %+v", pr)
	}
	// An interval that could not take writes blocks nothing.
	if pr := PriorSet(past[2:3], 0, up(), nil); len(pr.Down) != 0 || len(pr.Probe) != 0 {
		t.Errorf("read-only interval: %+v", pr)
	}
	if les := MaxStarted([]Member{{Info: infoLES(3)}, {Info: infoLES(7)}, {}}); les != 7 {
		t.Errorf("MaxStarted = %d, want 7", les)
	}
}

func infoLES(e uint64) pglog.Info { return pglog.Info{LastEpochStarted: e} }

// In ack primary mode an interval needs its primary: the other members
// cannot vouch for what it acknowledged alone. Once it is up it is asked
// (its log decides); an ack all interval needs any member, as before;
// BuildIntervals marks an interval ack primary if any of its epochs was.
func TestPriorSetAckPrimaryNeedsThePrimary(t *testing.T) {
	up := func(ids ...int32) func(int32) bool { return func(x int32) bool { return slices.Contains(ids, x) } }
	for _, tc := range []struct {
		name      string
		ack       bool
		up        []int32
		probe     []int32
		blockedBy []int32
	}{
		{"ack all, primary down: the replicas vouch", false, []int32{1, 2}, []int32{1, 2}, nil},
		{"ack primary, primary down: down, waiting for it", true, []int32{1, 2}, []int32{1, 2}, []int32{0}},
		{"ack primary, primary back: asked", true, []int32{0, 1, 2}, []int32{0, 1, 2}, nil},
		{"ack primary, primary alone up", true, []int32{0}, []int32{0}, nil},
		{"ack primary, nobody up: waits for every member", true, nil, nil, []int32{0, 1, 2}},
	} {
		past := []Interval{{First: 2, Last: 5, Acting: []int32{0, 1, 2}, Primary: 0, Acted: true, MaybeWentRW: true, AckPrimary: tc.ack}}
		pr := PriorSet(past, 2, up(tc.up...), nil)
		if !slices.Equal(pr.Probe, tc.probe) || !slices.Equal(pr.BlockedBy, tc.blockedBy) || (len(pr.Down) > 0) != (tc.blockedBy != nil) {
			t.Errorf("%s: %+v, want probe %v, blocked by %v", tc.name, pr, tc.probe, tc.blockedBy)
		}
		if tc.ack && len(tc.up) == 2 && !strings.Contains(pr.Reason(), "ack primary mode, whose primary osd.0 alone") {
			t.Errorf("%s: reason %q does not name the primary", tc.name, pr.Reason())
		}
	}
	// An ack primary interval that never went read-write blocks nothing,
	// and one ended before the newest activation neither.
	past := []Interval{{First: 2, Last: 5, Acting: []int32{0, 1}, Primary: 0, Acted: true, AckPrimary: true}}
	if pr := PriorSet(past, 2, up(1), nil); len(pr.Down) != 0 {
		t.Errorf("never read-write: %+v", pr)
	}
	past[0].MaybeWentRW = true
	if pr := PriorSet(past, 6, up(1), nil); len(pr.Down) != 0 {
		t.Errorf("before the newest activation: %+v", pr)
	}

	a, b, c := pl(2, 0, 0, 1), pl(3, 0, 0, 1), pl(4, 0, 0, 1)
	b.AckPrimary = true // set at 3, back to all at 4: one interval, in ack primary mode
	got := BuildIntervals([]Placement{a, b, c}, true)
	if len(got) != 1 || !got[0].AckPrimary {
		t.Fatalf("got %+v, want one interval in ack primary mode", got)
	}
	if got := BuildIntervals([]Placement{a, c}, true); got[0].AckPrimary {
		t.Fatalf("an ack all interval marked ack primary: %+v", got)
	}
}

// An OSD declared lost after an interval began is not waited for there:
// a dead ack primary's interval goes on with its replicas, an interval
// whose members are all lost blocks nothing, and one with a lost and a
// merely down member waits for the down one only. Lost before the
// interval began does not count (it came back and took part since).
func TestPriorSetLost(t *testing.T) {
	up := func(ids ...int32) func(int32) bool { return func(x int32) bool { return slices.Contains(ids, x) } }
	lostAt := func(at map[int32]uint64) func(int32, uint64) bool {
		return func(id int32, first uint64) bool { return at[id] > first }
	}
	for _, tc := range []struct {
		name      string
		ack       bool
		up        []int32
		lost      map[int32]uint64
		blockedBy []int32
	}{
		{"ack primary, primary lost: the replicas decide", true, []int32{1, 2}, map[int32]uint64{0: 9}, nil},
		{"ack primary, primary lost before the interval: still waited for", true, []int32{1, 2}, map[int32]uint64{0: 1}, []int32{0}},
		{"nobody up, all lost: nothing to wait for", false, nil, map[int32]uint64{0: 9, 1: 9, 2: 9}, nil},
		{"nobody up, one lost: waits for the others", false, nil, map[int32]uint64{1: 9}, []int32{0, 2}},
	} {
		past := []Interval{{First: 2, Last: 5, Acting: []int32{0, 1, 2}, Primary: 0, Acted: true, MaybeWentRW: true, AckPrimary: tc.ack}}
		pr := PriorSet(past, 2, up(tc.up...), lostAt(tc.lost))
		if !slices.Equal(pr.BlockedBy, tc.blockedBy) || (len(pr.Down) > 0) != (tc.blockedBy != nil) {
			t.Errorf("%s: %+v, want blocked by %v", tc.name, pr, tc.blockedBy)
		}
	}
}
