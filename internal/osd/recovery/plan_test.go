package recovery

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/objid"
)

func obj(name string) objid.ID { return objid.Object(1, "", name) }

func objs(names ...string) []objid.ID {
	out := make([]objid.ID, len(names))
	for i, n := range names {
		out[i] = obj(n)
	}
	return out
}

// push renders what Next claimed, as "name>osd,osd".
func push(id objid.ID, targets []int32) string {
	var b strings.Builder
	b.WriteString(id.Name + ">")
	for i, x := range targets {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprint(&b, x)
	}
	return b.String()
}

// Drained one push at a time, each recovering all its targets, a plan
// pushes every object once, in object order (objid.Compare: by hash, so
// a, c, b), to every member lacking it that is not a backfillfull
// backfill target.
func TestNextOrder(t *testing.T) {
	if !slices.IsSortedFunc(objs("a", "c", "b"), objid.Compare) {
		t.Fatal("the cases below assume objid.Compare orders a, c, b")
	}
	tests := []struct {
		name     string
		missing  map[int32][]objid.ID
		backfill []int32
		full     map[int32]bool
		want     []string
		end      Why
		copies   int64 // left at the end
	}{
		{name: "nothing missing", missing: map[int32][]objid.ID{1: nil}, end: Done},
		{name: "object order", missing: map[int32][]objid.ID{1: objs("c", "a", "b")},
			want: []string{"a>1", "c>1", "b>1"}, end: Done},
		{name: "several peers pushed once to all",
			missing: map[int32][]objid.ID{2: objs("b", "a"), 1: objs("a"), 3: objs("a", "c")},
			want:    []string{"a>1,2,3", "c>3", "b>2"}, end: Done},
		{name: "backfillfull target skipped, log recovery goes on",
			missing: map[int32][]objid.ID{1: objs("a"), 2: objs("a", "b")}, backfill: []int32{2},
			full: map[int32]bool{1: true, 2: true}, // 1 recovers from the log: not held back
			want: []string{"a>1"}, end: TooFull, copies: 2},
		{name: "full but not a backfill target",
			missing: map[int32][]objid.ID{1: objs("a")}, full: map[int32]bool{1: true},
			want: []string{"a>1"}, end: Done},
		{name: "backfill target not full",
			missing: map[int32][]objid.ID{2: objs("b", "a", "c")}, backfill: []int32{2}, full: map[int32]bool{1: true},
			want: []string{"a>2", "c>2", "b>2"}, end: Done},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(tt.missing, tt.backfill)
			p.SetFull(tt.full)
			var got []string
			for range 100 {
				id, targets, why := p.Next(nil)
				if why != Push {
					if why != tt.end {
						t.Errorf("ended %v, want %v", why, tt.end)
					}
					break
				}
				got = append(got, push(id, targets))
				p.Finish(id, targets)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("pushed %q, want %q", got, tt.want)
			}
			if p.Copies() != tt.copies {
				t.Errorf("%d copies left, want %d", p.Copies(), tt.copies)
			}
			if p.Done() != (tt.end == Done) || p.TooFull() != (tt.end == TooFull) {
				t.Errorf("Done %v TooFull %v, ended %v", p.Done(), p.TooFull(), tt.end)
			}
		})
	}
}

// Objects in flight, or held by the caller, are skipped and stay queued;
// a failed push (Finish with no member) is pushed again.
func TestNextSkipsInFlight(t *testing.T) {
	p := New(map[int32][]objid.ID{1: objs("a", "b", "c")}, nil)
	a, _, _ := p.Next(nil)
	held := func(id objid.ID) bool { return id == obj("b") } // a client op on b
	if id, targets, why := p.Next(held); why != Push || push(id, targets) != "c>1" {
		t.Fatalf("Next with a in flight and b held = %v, %v", push(id, targets), why)
	}
	if _, _, why := p.Next(held); why != InFlight {
		t.Fatalf("Next with all in flight or held = %v, want InFlight", why)
	}
	p.Finish(a, nil) // a's push failed
	p.Finish(obj("c"), []int32{1})
	var got []string
	for {
		id, targets, why := p.Next(nil)
		if why != Push {
			break
		}
		got = append(got, push(id, targets))
		p.Finish(id, targets)
	}
	if want := []string{"b>1", "a>1"}; !slices.Equal(got, want) {
		t.Fatalf("after the failure pushed %q, want %q (b left queued, a on a fresh round)", got, want)
	}
	if !p.Done() || p.Copies() != 0 {
		t.Fatalf("Done %v with %d copies", p.Done(), p.Copies())
	}
}

// A client write claims its object ahead of the queue with every member
// lacking it; Next skips it while it is in flight and does not push it
// once recovered.
func TestUrgent(t *testing.T) {
	p := New(map[int32][]objid.ID{1: objs("a", "z"), 2: objs("z")}, []int32{2})
	p.SetFull(map[int32]bool{2: true})
	targets := p.Urgent(obj("z"))
	if !slices.Equal(targets, []int32{1, 2}) {
		t.Fatalf("Urgent(z) = %v, want [1 2] (a write needs the backfillfull member too)", targets)
	}
	if id, targets, why := p.Next(nil); why != Push || push(id, targets) != "a>1" {
		t.Fatalf("Next = %v %v, want a>1", push(id, targets), why)
	}
	if _, _, why := p.Next(nil); why != InFlight {
		t.Fatalf("Next with a and z in flight = %v", why)
	}
	if n := p.Finish(obj("z"), []int32{1, 2}); n != 2 {
		t.Fatalf("Finish(z) made %d copies, want 2", n)
	}
	p.Finish(obj("a"), []int32{1})
	if _, _, why := p.Next(nil); why != Done || !p.Done() {
		t.Fatalf("Next after all recovered = %v", why)
	}
	if targets := p.Urgent(obj("a")); len(targets) != 0 {
		t.Fatalf("Urgent of a recovered object = %v", targets)
	}
}

// A write may claim an object a push Next claimed has yet to start (it
// waits behind the write in the OSD's op queue): the write pushes it,
// and the push finds nothing left to do.
func TestUrgentOvertakesAClaimedPush(t *testing.T) {
	p := New(map[int32][]objid.ID{1: objs("a")}, nil)
	id, targets, why := p.Next(nil)
	if why != Push || push(id, targets) != "a>1" {
		t.Fatalf("Next = %v %v", push(id, targets), why)
	}
	if got := p.Urgent(obj("a")); !slices.Equal(got, []int32{1}) {
		t.Fatalf("Urgent(a) with a push claimed = %v, want [1]", got)
	}
	if n := p.Finish(obj("a"), []int32{1}); n != 1 {
		t.Fatalf("the write's push made %d copies", n)
	}
	if got := p.MissingOn(obj("a")); len(got) != 0 {
		t.Fatalf("after the write's push, %v lack a", got)
	}
	if n := p.Finish(obj("a"), nil); n != 0 || !p.Done() {
		t.Fatalf("the claimed push, finding nothing to do: %d copies, done %v", n, p.Done())
	}
}

// A peer that leaves ends the interval: the next interval's plan lacks
// it, and a push of the old interval finishing there counts only the
// members still planned.
func TestPeerLeaves(t *testing.T) {
	old := New(map[int32][]objid.ID{1: objs("a"), 2: objs("a", "b")}, nil)
	id, targets, _ := old.Next(nil)
	if push(id, targets) != "a>1,2" {
		t.Fatalf("old interval pushes %s", push(id, targets))
	}
	// osd.2 leaves; the new interval's plan holds osd.1 and osd.3.
	p := New(map[int32][]objid.ID{1: objs("a"), 3: objs("c")}, nil)
	pushing := func(o objid.ID) bool { return o == id } // the old push still runs
	if id, targets, why := p.Next(pushing); why != Push || push(id, targets) != "c>3" {
		t.Fatalf("Next = %v %v, want c>3 (a held by the old push, b only osd.2 lacked)", push(id, targets), why)
	}
	if n := p.Finish(id, targets); n != 1 {
		t.Fatalf("the old push's Finish made %d copies here, want 1 (osd.1's)", n)
	}
	p.Finish(obj("c"), []int32{3})
	if !p.Done() || p.Copies() != 0 || len(p.MissingOn(obj("b"))) != 0 {
		t.Fatalf("Done %v copies %d", p.Done(), p.Copies())
	}
}

// The counts and states the PG reports.
func TestCounts(t *testing.T) {
	var none *Plan
	if none.Pending() || !none.Done() || none.TooFull() || none.Copies() != 0 || none.Backfilling() {
		t.Fatal("a nil plan has something to recover")
	}
	if _, _, why := none.Next(nil); why != Done {
		t.Fatalf("nil plan: Next = %v", why)
	}
	p := New(map[int32][]objid.ID{1: objs("a", "b", "a"), 2: objs("a"), 3: nil}, []int32{2, 3})
	if p.Copies() != 3 || !p.Backfilling() || !p.Pending() {
		t.Fatalf("copies %d backfilling %v", p.Copies(), p.Backfilling())
	}
	if got := p.MissingOn(obj("a")); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("MissingOn(a) = %v", got)
	}
	p.Finish(obj("a"), []int32{2, 3})
	if p.Copies() != 2 || p.Backfilling() {
		t.Fatalf("after backfilling osd.2: copies %d backfilling %v", p.Copies(), p.Backfilling())
	}
	if n := p.Finish(obj("a"), []int32{2}); n != 0 || p.Copies() != 2 {
		t.Fatalf("a copy made twice counts %d", n)
	}
}

// An object found unreadable everywhere is pushed no more: Next goes on
// with the others, in order, and once only unfound objects are left it
// says Unfound (never Done: the members still lack them); the copies
// still count.
func TestNextSkipsUnfound(t *testing.T) {
	p := New(map[int32][]objid.ID{1: objs("a", "b"), 2: objs("a")}, nil)
	id, targets, why := p.Next(nil)
	if why != Push || push(id, targets) != "a>1,2" {
		t.Fatalf("first: %s %v", push(id, targets), why)
	}
	p.Finish(id, nil) // the push failed: a is unreadable here
	p.SetUnfound(id)
	if id, targets, why = p.Next(nil); why != Push || push(id, targets) != "b>1" {
		t.Fatalf("after a is unfound: %s %v, want b>1", push(id, targets), why)
	}
	if _, _, why := p.Next(nil); why != InFlight {
		t.Fatalf("with b in flight: %v", why)
	}
	p.Finish(id, []int32{1})
	if _, _, why := p.Next(nil); why != Unfound || !p.Pending() || p.Copies() != 2 || !p.IsUnfound(obj("a")) || p.IsUnfound(obj("b")) {
		t.Fatalf("only a left: %v, pending %v, copies %d", why, p.Pending(), p.Copies())
	}
}

// Lacking names, in order, the members recovery still pushes to (and
// reserves a slot on): a member drops out once it has everything.
func TestLacking(t *testing.T) {
	p := New(map[int32][]objid.ID{7: objs("a"), 2: objs("a", "b"), 5: nil}, []int32{7})
	if got := p.Lacking(); !slices.Equal(got, []int32{2, 7}) {
		t.Fatalf("Lacking() = %v, want [2 7]", got)
	}
	p.Finish(obj("a"), []int32{7})
	if got := p.Lacking(); !slices.Equal(got, []int32{2}) {
		t.Fatalf("after osd.7 got a: Lacking() = %v, want [2]", got)
	}
	var none *Plan
	if got := none.Lacking(); got != nil {
		t.Fatalf("nil plan: Lacking() = %v", got)
	}
}

// A member whose store refused a write within the interval lacks its
// objects from then on: AddMissing puts them in the plan, in object order
// among what is left to push (a, c, b), counts each new copy once, and a
// plan that was done has work again.
func TestAddMissing(t *testing.T) {
	var none *Plan
	if n := none.AddMissing(1, obj("a")); n != 0 {
		t.Fatalf("a nil plan took %d copies", n)
	}
	p := New(map[int32][]objid.ID{1: objs("a", "b")}, nil)
	id, targets, _ := p.Next(nil) // a in flight; b left in the queue
	if n := p.AddMissing(2, obj("c"), obj("a"), obj("c")); n != 2 {
		t.Fatalf("AddMissing counted %d copies, want 2 (c once, a)", n)
	}
	if n := p.AddMissing(1, obj("b")); n != 0 || p.Copies() != 4 {
		t.Fatalf("an object already missing there counted %d, copies %d, want 0 and 4", n, p.Copies())
	}
	if got := p.MissingOn(obj("a")); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("MissingOn(a) = %v", got)
	}
	p.Finish(id, targets) // the push of a to 1 started before 2 refused it: 2 still lacks a
	var got []string
	for {
		id, targets, why := p.Next(nil)
		if why != Push {
			if why != Done {
				t.Fatalf("Next ended with %v", why)
			}
			break
		}
		got = append(got, push(id, targets))
		p.Finish(id, targets)
	}
	if want := []string{"a>2", "c>2", "b>1"}; !slices.Equal(got, want) {
		t.Fatalf("pushed %q, want %q", got, want)
	}
	if p.AddMissing(3, obj("b")) != 1 || !p.Pending() || p.Copies() != 1 || !slices.Equal(p.Lacking(), []int32{3}) {
		t.Fatalf("a done plan after AddMissing: pending %v, copies %d, lacking %v", p.Pending(), p.Copies(), p.Lacking())
	}
	if id, targets, why := p.Next(nil); why != Push || push(id, targets) != "b>3" {
		t.Fatalf("Next = %v, %v", push(id, targets), why)
	}
}
