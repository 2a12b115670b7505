package replread

import (
	"context"
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The replica's rules for a balanced read (docs/OSD.md, "Reading from
// replicas"), one case per rule: a replica serves only when nothing it
// may lack could change the answer.
func TestRefusal(t *testing.T) {
	v := func(e, c uint64) wire.Version { return wire.Version{Epoch: e, Counter: c} }
	read := func() *wire.OSDOp {
		return &wire.OSDOp{Epoch: 6, Object: objid.Object(1, "", "o"), Ops: []wire.ObjectOp{{Code: wire.OpRead}},
			Flags: wire.FlagBalanceReads, ReadAtLeast: v(5, 10)}
	}
	ok := Check{Member: true, Interval: 5, Started: 5}
	state := State{Interval: 5, CommittedBelow: v(5, 12), Applied: v(5, 10)}
	for _, c := range []struct {
		name string
		edit func(*Check, *State)
		want string
	}{
		{"current replica", func(*Check, *State) {}, ""},
		{"client saw nothing yet", func(c *Check, _ *State) { c.Op.ReadAtLeast = wire.Version{} }, ""},
		{"primary serves as primary", func(c *Check, s *State) { *c = Check{Primary: true, Member: true, Op: c.Op}; *s = State{} }, ""},
		{"stray", func(c *Check, _ *State) { c.Member = false }, RefuseNotMember},
		{"peering: not active in this interval", func(c *Check, _ *State) { c.Started = 4 }, RefuseNotActive},
		{"no interval yet", func(c *Check, _ *State) { c.Interval, c.Started = 0, 0 }, RefuseNotActive},
		{"client map before the interval", func(c *Check, _ *State) { c.Op.Epoch = 4 }, RefuseStaleClient},
		{"class method", func(c *Check, _ *State) { c.Op.Ops = append(c.Op.Ops, wire.ObjectOp{Code: wire.OpCall}) }, RefuseNotPlain},
		{"at a snapshot", func(c *Check, _ *State) { c.Op.Object.Snap = 3 }, RefuseNotPlain},
		{"object missing here", func(c *Check, _ *State) { c.Missing = true }, RefuseMissing},
		{"PG not clean (zero watermark)", func(_ *Check, s *State) { s.CommittedBelow = wire.Version{} }, RefuseNoWatermark},
		{"watermark of an older interval", func(_ *Check, s *State) { s.Interval = 3 }, RefuseNoWatermark},
		{"lags the client's write (ack primary)", func(c *Check, _ *State) { c.Op.ReadAtLeast = v(5, 11) }, RefuseBehind},
		{"lags a newer epoch", func(c *Check, _ *State) { c.Op.ReadAtLeast = v(6, 1) }, RefuseBehind},
	} {
		ch, st := ok, state
		ch.Op = read()
		c.edit(&ch, &st)
		if got := ch.Refusal(st); got != c.want {
			t.Errorf("%s: refusal %q, want %q", c.name, got, c.want)
		}
	}
}

func TestObjectRefusal(t *testing.T) {
	v := func(c uint64) wire.Version { return wire.Version{Epoch: 3, Counter: c} }
	for _, c := range []struct {
		name                  string
		exists                bool
		before, after, commit wire.Version
		want                  string
	}{
		{"committed everywhere", true, v(4), v(4), v(5), ""},
		{"its write in flight", true, v(5), v(5), v(5), RefuseUncommitted},
		{"a newer write in flight", true, v(7), v(7), v(5), RefuseUncommitted},
		{"changed while read", true, v(4), v(6), v(9), RefuseChanged},
		{"absent", false, wire.Version{}, wire.Version{}, v(9), RefuseAbsent},
		{"no watermark", true, v(1), v(1), wire.Version{}, RefuseUncommitted},
	} {
		if got := ObjectRefusal(c.exists, c.before, c.after, c.commit); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The primary's watermark: the lowest version of this write's entries
// (a clone's before the head's) and of the writes not committed by every
// member, zero while the PG is not clean.
func TestWatermark(t *testing.T) {
	v := func(c uint64) wire.Version { return wire.Version{Epoch: 3, Counter: c} }
	of := func(vs ...wire.Version) func(func(wire.Version) bool) {
		return func(yield func(wire.Version) bool) {
			for _, x := range vs {
				if !yield(x) {
					return
				}
			}
		}
	}
	if got := Watermark(true, of(v(9))); got != v(9) {
		t.Errorf("no write in flight: %v, want 3'9", got)
	}
	if got := Watermark(true, of(v(9), v(10), v(8), v(6))); got != v(6) {
		t.Errorf("writes 3'6 and 3'8 in flight: %v, want 3'6", got)
	}
	if got := Watermark(false, of(v(9))); got != (wire.Version{}) {
		t.Errorf("not clean: %v, want zero", got)
	}
}

func TestIdleWatermark(t *testing.T) {
	v := func(c uint64) wire.Version { return wire.Version{Epoch: 3, Counter: c} }
	zero := wire.Version{}
	for _, c := range []struct {
		name                  string
		clean                 bool
		inFlight              int
		last, committed, sent wire.Version
		want                  wire.Version
		ok                    bool
	}{
		{"idle and clean", true, 0, v(9), v(9), zero, v(10), true},
		{"a newer write since the last one sent", true, 0, v(9), v(9), v(7), v(10), true},
		{"sent already", true, 0, v(9), v(9), v(10), zero, false},
		{"a write in flight", true, 1, v(9), v(9), zero, zero, false},
		{"not clean", false, 0, v(9), v(9), zero, zero, false},
		{"no write yet this interval", true, 0, v(9), zero, zero, zero, false},
		{"an entry logged outside the writes", true, 0, v(10), v(9), zero, zero, false},
		{"last of an older epoch", true, 0, wire.Version{Epoch: 2, Counter: 40}, wire.Version{Epoch: 2, Counter: 40}, zero,
			wire.Version{Epoch: 2, Counter: 41}, true},
	} {
		got, ok := IdleWatermark(c.clean, c.inFlight, c.last, c.committed, c.sent)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// A primary's Idle: a watermark once per quiet spell, none for another
// interval's writes, and a new interval forgets the old one's.
func TestIdle(t *testing.T) {
	v := func(c uint64) wire.Version { return wire.Version{Epoch: 3, Counter: c} }
	var i Idle
	if _, ok := i.Due(3, true, 0, v(5)); ok {
		t.Fatal("a watermark before any write committed")
	}
	i.Committed(3, v(5))
	if w, ok := i.Due(3, true, 0, v(5)); !ok || w != v(6) {
		t.Fatalf("after 3'5 committed: %v %v, want 3'6", w, ok)
	}
	if _, ok := i.Due(3, true, 0, v(5)); ok {
		t.Fatal("the same watermark due twice")
	}
	if _, ok := i.Due(4, true, 0, v(5)); ok {
		t.Fatal("a watermark for interval 4 from interval 3's writes")
	}
	i.Committed(4, wire.Version{Epoch: 4, Counter: 6})
	if w, ok := i.Due(4, true, 0, wire.Version{Epoch: 4, Counter: 6}); !ok || w != (wire.Version{Epoch: 4, Counter: 7}) {
		t.Fatalf("in interval 4: %v %v, want 4'7", w, ok)
	}
}

func TestHoldsReads(t *testing.T) {
	for _, c := range []struct {
		ack    osdmap.AckMode
		policy osdmap.ReadPolicy
		flags  uint32
		want   bool
	}{
		{osdmap.AckAll, osdmap.ReadPrimary, 0, false},
		{osdmap.AckAll, osdmap.ReadBalance, 0, true},
		{osdmap.AckAll, osdmap.ReadScore, 0, true},
		{osdmap.AckAll, osdmap.ReadPrimary, wire.FlagBalanceReads, true},
		{osdmap.AckPrimary, osdmap.ReadBalance, wire.FlagBalanceReads, false},
	} {
		p := &osdmap.Pool{Ack: c.ack, ReadPolicy: c.policy}
		if got := HoldsReads(p, c.flags); got != c.want {
			t.Errorf("ack %s, policy %s, flags %#x: %v, want %v", c.ack, c.policy, c.flags, got, c.want)
		}
	}
}

// A replica's state: the watermark follows the interval's rep ops, and
// what is applied follows the store.
func TestReplicaState(t *testing.T) {
	v := func(c uint64) wire.Version { return wire.Version{Epoch: 3, Counter: c} }
	var r Replica
	applied := r.NoteRepOp(3, v(4), v(6))
	if s := r.State(); s.Interval != 3 || s.CommittedBelow != v(4) || s.Applied != (wire.Version{}) {
		t.Fatalf("after a queued rep op: %+v", s)
	}
	applied()
	if s := r.State(); s.Applied != v(6) {
		t.Fatalf("after it applied: %+v", s)
	}
	r.NoteRepOp(3, v(2), v(7)) // an older watermark never lowers it
	if s := r.State(); s.CommittedBelow != v(4) {
		t.Fatalf("watermark went back: %+v", s)
	}
	r.NoteWatermark(3, v(8)) // an idle watermark raises it
	if s := r.State(); s.CommittedBelow != v(8) || s.Applied != v(6) {
		t.Fatalf("after an idle watermark: %+v", s)
	}
	r.NoteWatermark(3, v(5))
	if s := r.State(); s.CommittedBelow != v(8) {
		t.Fatalf("an older idle watermark lowered it: %+v", s)
	}
	r.NoteRepOp(8, wire.Version{}, wire.Version{Epoch: 8, Counter: 1})
	if s := r.State(); s.Interval != 8 || s.CommittedBelow != (wire.Version{}) {
		t.Fatalf("a new interval kept the old watermark: %+v", s)
	}
	var h Holds
	a, b := h.Add(1), h.Add(1)
	c := h.Add(2)
	h.Wake(1)
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Fatal("a read held for write 1 was not let go")
		}
	}
	select {
	case <-c:
		t.Fatal("a read held for write 2 was let go")
	default:
	}
}

func TestWait(t *testing.T) {
	var h Holds
	waits := []<-chan struct{}{h.Add(1), h.Add(2)}
	h.Wake(1)
	h.Wake(2)
	n := 0
	if !Wait(context.Background(), func() <-chan struct{} {
		if n == len(waits) {
			return nil
		}
		n++
		return waits[n-1]
	}) || n != 2 {
		t.Fatalf("Wait went through %d waits", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	never := make(chan struct{})
	if Wait(ctx, func() <-chan struct{} { return never }) {
		t.Fatal("Wait on a cancelled context reported done")
	}
}
