package osd

import (
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/osd/peering"
	"github.com/cuttlestore/cuttle/internal/osd/recovery"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

func TestRemovesOnly(t *testing.T) {
	for _, c := range []struct {
		ops  []wire.ObjectOpCode
		want bool
	}{
		{[]wire.ObjectOpCode{wire.OpDelete}, true},
		{[]wire.ObjectOpCode{wire.OpRmXattr, wire.OpOmapRmKeys, wire.OpOmapClear}, true},
		{[]wire.ObjectOpCode{wire.OpAssertExists, wire.OpDelete}, true},
		{[]wire.ObjectOpCode{wire.OpWrite}, false},
		{[]wire.ObjectOpCode{wire.OpWriteFull}, false},
		{[]wire.ObjectOpCode{wire.OpAppend}, false},
		{[]wire.ObjectOpCode{wire.OpCreate}, false},
		{[]wire.ObjectOpCode{wire.OpSetXattr}, false},
		{[]wire.ObjectOpCode{wire.OpOmapSet}, false},
		{[]wire.ObjectOpCode{wire.OpOmapSetHeader}, false},
		{[]wire.ObjectOpCode{wire.OpTruncate}, true},
		{[]wire.ObjectOpCode{wire.OpTruncate, wire.OpWrite}, false},
		{[]wire.ObjectOpCode{wire.OpCall}, false},
		{[]wire.ObjectOpCode{wire.OpDelete, wire.OpCreate}, false},
	} {
		var ops []wire.ObjectOp
		for _, code := range c.ops {
			ops = append(ops, wire.ObjectOp{Code: code})
		}
		if got := removesOnly(ops); got != c.want {
			t.Errorf("%v: %v, want %v", c.ops, got, c.want)
		}
	}
}

// fullTestPG returns a PG of pool 1 on an OSD whose map is m.
func fullTestPG(t *testing.T, m *osdmap.Map) *pg {
	t.Helper()
	o := &OSD{}
	o.space.noteMap(m, 0)
	return &pg{o: o, id: osdmap.PG{Pool: 1}, pool: *m.Pool(1), queue: newOpQueue(opq.Today{}),
		recoveryKick: make(chan struct{}, 1)}
}

func writeReq(codes ...wire.ObjectOpCode) *request {
	r := &request{}
	for _, c := range codes {
		r.op.Ops = append(r.op.Ops, wire.ObjectOp{Code: c, Data: []byte("data")})
	}
	return r
}

// Writes that add data are refused when the pool is full, when the map
// marks this OSD full, and, before the monitors say so, when the OSD's
// own store is at full_ratio; removals always pass.
func TestFullRefusal(t *testing.T) {
	m := capsMap(t)
	write, remove := writeReq(wire.OpWriteFull), writeReq(wire.OpDelete)

	p := fullTestPG(t, m)
	if why := p.fullRefusalLocked(write); why != "" {
		t.Fatalf("nothing full, refused: %s", why)
	}

	full := change(t, m, func(s *osdmap.Spec) { s.Pools[0].Flags |= osdmap.PoolFull })
	p = fullTestPG(t, full)
	if why := p.fullRefusalLocked(write); why != "pool full" {
		t.Fatalf("pool full: %q", why)
	}
	if why := p.fullRefusalLocked(remove); why != "" {
		t.Fatalf("delete refused in a full pool: %s", why)
	}

	osdFull := change(t, m, func(s *osdmap.Spec) { s.OSDs[0].State |= osdmap.OSDFull })
	p = fullTestPG(t, osdFull)
	if why := p.fullRefusalLocked(write); why != "osd marked full" {
		t.Fatalf("osd full: %q", why)
	}

	// The failsafe: 90 of 100 bytes used is below full_ratio 0.95; five
	// more bytes written reach it before any new look at the store.
	p = fullTestPG(t, m)
	p.o.space.note(100, 10)
	if why := p.fullRefusalLocked(write); why != "" {
		t.Fatalf("90%% used, refused: %s", why)
	}
	p.o.space.wrote(5)
	if why := p.fullRefusalLocked(write); !strings.Contains(why, "failsafe") {
		t.Fatalf("95%% used: %q", why)
	}
	if why := p.fullRefusalLocked(remove); why != "" {
		t.Fatalf("delete refused by the failsafe: %s", why)
	}
	p.o.space.note(100, 50) // a look at the store after deletes
	if why := p.fullRefusalLocked(write); why != "" {
		t.Fatalf("50%% used, refused: %s", why)
	}

	// A metadata server writes past full (its journal of the deletes
	// that free space), up to the failsafe ratio.
	mdsWrite := writeReq(wire.OpWriteFull)
	mdsWrite.from.Name = auth.EntityName{Type: "mds", ID: "a"}
	for _, fm := range []*osdmap.Map{full, osdFull} {
		p = fullTestPG(t, fm)
		if why := p.fullRefusalLocked(mdsWrite); why != "" {
			t.Fatalf("an MDS's write refused: %s", why)
		}
	}
	p = fullTestPG(t, m)
	p.o.space.note(100, 4)
	if why := p.fullRefusalLocked(mdsWrite); why != "" {
		t.Fatalf("an MDS's write at 96%% refused: %s", why)
	}
	p.o.space.wrote(1)
	if why := p.fullRefusalLocked(mdsWrite); !strings.Contains(why, "failsafe") {
		t.Fatalf("an MDS's write at 97%%: %q", why)
	}
}

func TestSpaceGuardRefreshesAfterBytesWritten(t *testing.T) {
	var g spaceGuard
	if g.wrote(1 << 30) {
		t.Fatal("due a refresh before the first look")
	}
	g.note(1<<40, 1<<40) // 1 TiB: a refresh every 1/100 of it
	if g.wrote(1 << 30) {
		t.Fatal("due a refresh after 1 GiB of 1 TiB")
	}
	if !g.wrote(10 << 30) {
		t.Fatal("not due a refresh after 11 GiB of 1 TiB")
	}
	g.note(64<<20, 64<<20) // small store: at least every minRefreshBytes
	if g.wrote(minRefreshBytes-1) || !g.wrote(1) {
		t.Fatal("small store: refresh not at minRefreshBytes")
	}
}

// Backfill pushes nothing to a target marked backfillfull and the PG
// says backfill_toofull; recovery from the log goes on to other members;
// a map that clears the state lets backfill resume.
func TestBackfillTooFull(t *testing.T) {
	m := capsMap(t)
	p := fullTestPG(t, m)
	p.primary, p.acting, p.activated, p.o.cfg.ID = 0, []int32{0, 1, 2}, true, 0
	p.pool.Size, p.pool.MinSize = 3, 1
	a, b := objid.Object(1, "", "a"), objid.Object(1, "", "b")
	p.backfillFull = map[int32]bool{1: true, 2: true} // 1 recovers from the log: not held back
	p.notePeerMissingLocked(peering.Result{Backfill: []int32{2}}, map[int32][]objid.ID{1: {a}, 2: {a, b}})
	p.recovering = "backfilling"
	r := &peerRun{}
	p.run = r

	j, start, why := p.claimNext(r, nil)
	if why != recovery.Push || !start || j.id != a || len(j.targets) != 1 || j.targets[0] != 1 {
		t.Fatalf("claimNext = %+v %v %v, want a for osd.1 only, started", j, start, why)
	}
	p.queue.Done(objectKey(a))
	p.finishPush(r, a, j.targets)
	if s := p.stateLocked(); !strings.Contains(s, "backfill_toofull") {
		t.Fatalf("state %q, want backfill_toofull", s)
	}
	if _, _, why := p.claimNext(r, nil); why != recovery.TooFull {
		t.Fatalf("claimNext with only a backfillfull target left: %v, want backfill_toofull", why)
	}

	// The map clears osd.2's state: backfill resumes.
	cleared := change(t, m, func(*osdmap.Spec) {})
	p.mu.Lock()
	changed := p.noteBackfillFullLocked(cleared)
	p.mu.Unlock()
	if !changed {
		t.Fatal("noteBackfillFullLocked saw no change")
	}
	if s := p.stateLocked(); strings.Contains(s, "toofull") {
		t.Fatalf("state %q after the state cleared", s)
	}
	if j, _, why := p.claimNext(r, nil); why != recovery.Push || len(j.targets) != 1 || j.targets[0] != 2 {
		t.Fatalf("after the map cleared backfillfull: %v targets %+v", why, j)
	}
}

// change builds the next epoch of m from a modified Spec.
func change(t *testing.T, m *osdmap.Map, fn func(*osdmap.Spec)) *osdmap.Map {
	t.Helper()
	s := m.Spec()
	s.Epoch++
	fn(&s)
	next, err := osdmap.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return next
}
