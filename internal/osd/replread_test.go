package osd

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// The replica's rules for a balanced read (docs/OSD.md, "Reading from
// replicas"), one case per rule: a replica serves only when nothing it
// may lack could change the answer.
func TestReplicaReadRefusal(t *testing.T) {
	ok := replicaRead{member: true, active: true, plain: true, watermarkKnown: true,
		applied: wire.Version{Epoch: 5, Counter: 10}, readAtLeast: wire.Version{Epoch: 5, Counter: 10}}
	for _, c := range []struct {
		name string
		edit func(*replicaRead)
		want string
	}{
		{"current replica", func(*replicaRead) {}, ""},
		{"client saw nothing yet", func(c *replicaRead) { c.readAtLeast = wire.Version{} }, ""},
		{"primary serves as primary", func(c *replicaRead) { *c = replicaRead{primary: true, member: true} }, ""},
		{"stray", func(c *replicaRead) { c.member = false }, refuseNotMember},
		{"peering", func(c *replicaRead) { c.active = false }, refuseNotActive},
		{"client map before the interval", func(c *replicaRead) { c.clientBehind = true }, refuseStaleClient},
		{"class method or snapshot", func(c *replicaRead) { c.plain = false }, refuseNotPlain},
		{"object missing here", func(c *replicaRead) { c.missing = true }, refuseMissing},
		{"PG not clean (zero watermark)", func(c *replicaRead) { c.watermarkKnown = false }, refuseNoWatermark},
		{"lags the client's write (ack primary)", func(c *replicaRead) { c.readAtLeast = wire.Version{Epoch: 5, Counter: 11} }, refuseBehind},
		{"lags a newer epoch", func(c *replicaRead) { c.readAtLeast = wire.Version{Epoch: 6, Counter: 1} }, refuseBehind},
	} {
		r := ok
		c.edit(&r)
		if got := r.refusal(); got != c.want {
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
		{"the write in flight", true, v(5), v(5), v(5), refuseUncommitted},
		{"a newer write in flight", true, v(7), v(7), v(5), refuseUncommitted},
		{"changed while read", true, v(4), v(6), v(9), refuseChanged},
		{"absent", false, wire.Version{}, wire.Version{}, v(9), refuseAbsent},
		{"no watermark", true, v(1), v(1), wire.Version{}, refuseUncommitted},
	} {
		if got := objectRefusal(c.exists, c.before, c.after, c.commit); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPlainRead(t *testing.T) {
	head := objid.Object(1, "", "o")
	snap := head
	snap.Snap = 4
	for _, c := range []struct {
		name string
		obj  objid.ID
		ops  []wire.ObjectOp
		want bool
	}{
		{"read", head, []wire.ObjectOp{{Code: wire.OpRead}}, true},
		{"stat, xattrs and omap", head, []wire.ObjectOp{{Code: wire.OpStat}, {Code: wire.OpGetXattrs}, {Code: wire.OpOmapGetVals}}, true},
		{"at a snapshot", snap, []wire.ObjectOp{{Code: wire.OpRead}}, false},
		{"class method", head, []wire.ObjectOp{{Code: wire.OpRead}, {Code: wire.OpCall}}, false},
		{"watchers", head, []wire.ObjectOp{{Code: wire.OpListWatchers}}, false},
		{"no ops", head, nil, false},
	} {
		if got := plainRead(c.obj, c.ops); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The primary's watermark: below the oldest write not committed by
// every member, zero while the PG is not clean.
func TestCommittedWatermark(t *testing.T) {
	v := func(c uint64) wire.Version { return wire.Version{Epoch: 3, Counter: c} }
	p := &pg{activated: true, writes: map[uint64]*write{}}
	if got := p.committedWatermarkLocked(v(9)); got != v(9) {
		t.Errorf("no write in flight: %v, want 3'9", got)
	}
	p.writes[1] = &write{first: v(6)}
	p.writes[2] = &write{first: v(8)}
	if got := p.committedWatermarkLocked(v(9)); got != v(6) {
		t.Errorf("writes 3'6 and 3'8 in flight: %v, want 3'6", got)
	}
	for name, edit := range map[string]func(*pg){
		"peering":    func(p *pg) { p.activated = false },
		"recovering": func(p *pg) { p.recovering = "recovering" },
		"degraded":   func(p *pg) { p.missingCopies = 2 },
		"unfound":    func(p *pg) { p.unfound = []objid.ID{objid.Object(1, "", "x")} },
	} {
		q := &pg{activated: true, writes: map[uint64]*write{}}
		edit(q)
		if got := q.committedWatermarkLocked(v(9)); got != (wire.Version{}) {
			t.Errorf("%s: %v, want zero", name, got)
		}
	}
}
