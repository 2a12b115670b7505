package peering

import (
	"errors"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

func v(e, c uint64) wire.Version { return wire.Version{Epoch: e, Counter: c} }

func obj(name string) objid.ID { return objid.Object(1, "", name) }

// history builds entries writing objs in turn, from counter first, in
// epoch e.
func history(e, first uint64, objs ...string) []pglog.Entry {
	var out []pglog.Entry
	for i, o := range objs {
		out = append(out, pglog.Entry{Version: v(e, first+uint64(i)), Kind: pglog.Modify, Object: obj(o),
			Req: wire.ReqID{Client: "client.a", Tid: first + uint64(i)}})
	}
	return out
}

func member(osd int32, tail wire.Version, log []pglog.Entry) Member {
	last := tail
	if len(log) > 0 {
		last = log[len(log)-1].Version
	}
	return Member{OSD: osd, Info: pglog.Info{LastUpdate: last, LastComplete: last, LogTail: tail}, Log: log}
}

func TestPlanAgreeing(t *testing.T) {
	log := history(5, 1, "a", "b", "c")
	r, err := Plan([]Member{member(0, v(0, 0), log), member(1, v(0, 0), log), member(2, v(0, 0), log)})
	if err != nil || r.Auth != 0 || len(r.Missing) != 0 || len(r.Backfill) != 0 {
		t.Fatalf("plan %+v, %v", r, err)
	}
}

func TestPlanReplicaBehind(t *testing.T) {
	log := history(5, 1, "a", "b", "c", "d")
	r, err := Plan([]Member{member(0, v(0, 0), log), member(1, v(0, 0), log[:2]), member(2, v(0, 0), log)})
	if err != nil || r.Auth != 0 {
		t.Fatalf("plan %+v, %v", r, err)
	}
	if got := r.Missing[1]; !slices.Equal(got, slices.SortedFunc(slices.Values([]objid.ID{obj("c"), obj("d")}), objid.Compare)) {
		t.Fatalf("osd.1 misses %v, want c and d", got)
	}
	if _, ok := r.Missing[2]; ok {
		t.Fatalf("osd.2 is complete, but misses %v", r.Missing[2])
	}
}

// The primary restarted and lost writes a replica holds: the replica is
// the authority, and the primary fetches from it.
func TestPlanPrimaryBehind(t *testing.T) {
	log := history(5, 1, "a", "b", "c")
	r, err := Plan([]Member{member(0, v(0, 0), log[:1]), member(1, v(0, 0), log), member(2, v(0, 0), log[:2])})
	if err != nil || r.Auth != 1 || r.Info.LastUpdate != v(5, 3) {
		t.Fatalf("plan %+v, %v", r, err)
	}
	if !slices.Equal(r.Missing[0], slices.SortedFunc(slices.Values([]objid.ID{obj("b"), obj("c")}), objid.Compare)) || !slices.Equal(r.Missing[2], []objid.ID{obj("c")}) {
		t.Fatalf("missing %v", r.Missing)
	}
}

// A member holds a write the authority never saw (an old primary's, not
// acknowledged): the object goes back to the authority's copy.
func TestPlanDivergent(t *testing.T) {
	shared := history(5, 1, "a", "b")
	auth := append(slices.Clone(shared), history(7, 3, "c")...)
	stale := append(slices.Clone(shared), history(6, 3, "x")...)
	r, err := Plan([]Member{member(0, v(0, 0), auth), member(1, v(0, 0), stale)})
	if err != nil || r.Auth != 0 {
		t.Fatalf("plan %+v, %v", r, err)
	}
	if !slices.Equal(r.Missing[1], slices.SortedFunc(slices.Values([]objid.ID{obj("c"), obj("x")}), objid.Compare)) {
		t.Fatalf("osd.1 misses %v, want c (new) and x (divergent)", r.Missing[1])
	}
}

func TestPlanBackfill(t *testing.T) {
	auth := member(0, v(5, 10), history(5, 11, "a", "b"))
	r, err := Plan([]Member{auth, member(3, v(0, 0), nil), member(1, v(5, 10), history(5, 11, "a"))})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Backfill, []int32{3}) || !slices.Equal(r.Missing[1], []objid.ID{obj("b")}) {
		t.Fatalf("plan %+v", r)
	}
}

func TestPlanTiePrefersFirst(t *testing.T) {
	log := history(5, 1, "a")
	r, _ := Plan([]Member{member(2, v(0, 0), log), member(0, v(0, 0), log)})
	if r.Auth != 2 {
		t.Fatalf("auth osd.%d, want the first member", r.Auth)
	}
}

func TestPlanRefusesBadLogs(t *testing.T) {
	if _, err := Plan(nil); !errors.Is(err, ErrNoMembers) {
		t.Fatalf("no members: %v", err)
	}
	bad := history(5, 1, "a", "b")
	bad[0], bad[1] = bad[1], bad[0]
	if _, err := Plan([]Member{member(0, v(0, 0), bad)}); err == nil {
		t.Fatal("an out-of-order log was accepted")
	}
	m := member(0, v(0, 0), history(5, 1, "a"))
	m.Info.LastUpdate = v(9, 9)
	if _, err := Plan([]Member{m}); err == nil {
		t.Fatal("a log whose head is not the last update was accepted")
	}
}

// A member that went active later is authoritative even if another holds
// newer entries: those come from an older interval, never reached enough
// OSDs to be acknowledged, and are rolled back.
func TestPlanPrefersTheLatestActivation(t *testing.T) {
	shared := history(18, 1, "a", "b")
	stale := member(1, v(0, 0), append(slices.Clone(shared), history(18, 3, "x")...)) // 18'3 reached osd.1 only
	stale.Info.LastEpochStarted = 19
	later := member(2, v(0, 0), shared)
	later.Info.LastEpochStarted = 26
	r, err := Plan([]Member{member(0, v(0, 0), shared[:1]), stale, later})
	if err != nil || r.Auth != 2 {
		t.Fatalf("auth %d, %v; want osd.2, which went active last", r.Auth, err)
	}
	if !slices.Equal(r.Missing[1], []objid.ID{obj("x")}) || !slices.Equal(r.Missing[0], []objid.ID{obj("b")}) {
		t.Fatalf("missing %v; want osd.1 to roll back x and osd.0 to fetch b", r.Missing)
	}
}

// A member whose recovery was interrupted reports what it still lacks:
// the plan has it fetch those too, the authority included.
func TestPlanKeepsReportedMissing(t *testing.T) {
	log := history(5, 1, "a", "b", "c")
	auth := member(0, v(0, 0), log)
	auth.Missing = []objid.ID{obj("b")}
	replica := member(1, v(0, 0), log[:2])
	replica.Missing = []objid.ID{obj("a")}
	r, err := Plan([]Member{auth, replica, member(2, v(0, 0), log)})
	if err != nil || r.Auth != 0 {
		t.Fatalf("plan %+v, %v", r, err)
	}
	if got := r.Missing[0]; !slices.Equal(got, []objid.ID{obj("b")}) {
		t.Fatalf("the authority misses %v, want b", got)
	}
	want := slices.SortedFunc(slices.Values([]objid.ID{obj("a"), obj("c")}), objid.Compare)
	if got := r.Missing[1]; !slices.Equal(got, want) {
		t.Fatalf("osd.1 misses %v, want a (reported) and c (newer)", got)
	}
}

// The plan's purged snaps are the intersection of what the authority and
// every other member with a history recorded as trimmed; a member with
// no history (a new, empty copy) does not narrow it.
func TestPlanPurgedSnapsIntersect(t *testing.T) {
	log := history(5, 1, "a", "b")
	withPurged := func(m Member, p osdmap.SnapIntervals) Member { m.Info.PurgedSnaps = p; return m }
	ivs := func(pairs ...uint64) osdmap.SnapIntervals {
		var s osdmap.SnapIntervals
		for i := 0; i < len(pairs); i += 2 {
			s = append(s, osdmap.SnapInterval{Start: pairs[i], Len: pairs[i+1]})
		}
		return s
	}
	for _, c := range []struct {
		name    string
		members []Member
		want    string
	}{
		{"all agree", []Member{withPurged(member(0, v(0, 0), log), ivs(1, 4)), withPurged(member(1, v(0, 0), log), ivs(1, 4))}, "[1~4]"},
		{"a replica lacks the newest", []Member{withPurged(member(0, v(0, 0), log), ivs(1, 4)), withPurged(member(1, v(0, 0), log), ivs(1, 2))}, "[1~2]"},
		{"the authority lacks some", []Member{withPurged(member(0, v(0, 0), log[:1]), ivs(1, 4, 9, 1)), withPurged(member(1, v(0, 0), log), ivs(2, 8))}, "[2~3,9~1]"},
		{"one has none", []Member{withPurged(member(0, v(0, 0), log), ivs(1, 4)), member(1, v(0, 0), log)}, "[]"},
		{"an empty copy is left out", []Member{withPurged(member(0, v(0, 0), log), ivs(1, 4)), member(2, v(0, 0), nil)}, "[1~4]"},
	} {
		r, err := Plan(c.members)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := r.Info.PurgedSnaps.String(); got != c.want {
			t.Errorf("%s: purged %s, want %s", c.name, got, c.want)
		}
	}
}
