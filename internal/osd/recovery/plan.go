package recovery

import (
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/objid"
)

// Plan is one interval's recovery: what each member lacks, the order of
// the objects to push, the pushes under way and the backfillfull
// targets.
type Plan struct {
	// missing holds, per member, the objects it lacks; a member that
	// lacks nothing has no entry.
	missing map[int32]map[objid.ID]bool
	// backfill are the members being backfilled (not recovered from the
	// log), and full the OSDs the map marks backfillfull or full: Next
	// pushes nothing to a member in both.
	backfill, full map[int32]bool
	// queue is what Next goes through, in object order; it is built
	// afresh from missing once exhausted.
	queue []objid.ID
	// inFlight are the objects claimed by Next or Urgent and not yet
	// finished.
	inFlight map[objid.ID]bool
	copies   int64
	// unfound are the objects no copy the primary can read exists of:
	// Next pushes them no more (they stay missing on the members).
	unfound map[objid.ID]bool
}

// New plans the recovery of missing (per member, the objects it lacks),
// backfill naming the members being backfilled.
func New(missing map[int32][]objid.ID, backfill []int32) *Plan {
	p := &Plan{missing: map[int32]map[objid.ID]bool{}, backfill: map[int32]bool{}, full: map[int32]bool{},
		inFlight: map[objid.ID]bool{}, unfound: map[objid.ID]bool{}}
	for _, x := range backfill {
		p.backfill[x] = true
	}
	for x, objs := range missing {
		if len(objs) == 0 {
			continue
		}
		set := make(map[objid.ID]bool, len(objs))
		for _, id := range objs {
			set[id] = true
		}
		p.missing[x] = set
		p.copies += int64(len(set))
	}
	return p
}

// SetFull records the OSDs the map marks backfillfull or full.
func (p *Plan) SetFull(full map[int32]bool) {
	if p == nil {
		return
	}
	p.full = maps.Clone(full)
	if p.full == nil {
		p.full = map[int32]bool{}
	}
}

// AddMissing records that member lacks ids besides what peering found
// (its store refused a write to them within the interval): Next pushes
// them to it, Urgent claims them for a client write. It returns how many
// copies that adds (none for an object already missing there).
func (p *Plan) AddMissing(member int32, ids ...objid.ID) int64 {
	if p == nil {
		return 0
	}
	var n int64
	for _, id := range ids {
		set := p.missing[member]
		if set == nil {
			set = map[objid.ID]bool{}
			p.missing[member] = set
		}
		if set[id] {
			continue
		}
		set[id] = true
		n++
		if i, found := slices.BinarySearchFunc(p.queue, id, objid.Compare); !found && len(p.queue) > 0 {
			p.queue = slices.Insert(p.queue, i, id)
		}
	}
	p.copies += n
	return n
}

// Copies counts the object copies still to make.
func (p *Plan) Copies() int64 {
	if p == nil {
		return 0
	}
	return p.copies
}

// Backfilling reports whether some member that lacks objects is being
// backfilled.
func (p *Plan) Backfilling() bool {
	if p == nil {
		return false
	}
	for x := range p.missing {
		if p.backfill[x] {
			return true
		}
	}
	return false
}

// Lacking lists, in ascending order, the members that still lack some
// object: those a recovery pushes to, and so reserves a slot on.
func (p *Plan) Lacking() []int32 {
	if p == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(p.missing))
}

// Pending reports whether some member still lacks an object.
func (p *Plan) Pending() bool { return p != nil && len(p.missing) > 0 }

// Done reports whether every member holds every object.
func (p *Plan) Done() bool { return !p.Pending() }

// TooFull reports whether backfill waits: a backfill target that still
// lacks objects is backfillfull or full.
func (p *Plan) TooFull() bool {
	if p == nil {
		return false
	}
	for x := range p.backfill {
		if p.full[x] && len(p.missing[x]) > 0 {
			return true
		}
	}
	return false
}

// MissingOn lists, in order, the members that lack id.
func (p *Plan) MissingOn(id objid.ID) []int32 {
	if p == nil {
		return nil
	}
	var out []int32
	for x, set := range p.missing {
		if set[id] {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// Why says what Next found.
type Why int

const (
	// Push: Next claimed an object to push to its targets.
	Push Why = iota
	// InFlight: what is left is being pushed, or held by the caller.
	InFlight
	// TooFull: what is left waits for backfill targets marked
	// backfillfull.
	TooFull
	// Done: no member lacks anything.
	Done
	// Unfound: what is left is unfound (SetUnfound): recovery can do
	// nothing more until the interval ends or an operator marks it lost.
	Unfound
)

func (w Why) String() string {
	switch w {
	case Push:
		return "push"
	case InFlight:
		return "in flight"
	case TooFull:
		return "backfill_toofull"
	case Done:
		return "done"
	case Unfound:
		return "recovery_unfound"
	}
	return "unknown"
}

// Next claims the first object in order that some member lacks and that
// neither a push under way nor held (the caller's: objects client ops
// hold, or pushes of an earlier interval) holds. It returns the object
// and the members to push it to: those that lack it, but no backfill
// target marked backfillfull (log-based recovery goes on). The object
// stays in flight until Finish. If there is none, why says whether the
// rest is in flight or held, waits for backfillfull targets, or is done.
func (p *Plan) Next(held func(objid.ID) bool) (id objid.ID, targets []int32, why Why) {
	if !p.Pending() {
		return id, nil, Done
	}
	for range 2 { // a stale queue is built afresh once
		if len(p.queue) == 0 {
			p.queue = p.order()
		}
		busy, blocked, unfound := len(p.inFlight) > 0, false, false
		kept := p.queue[:0]
		for i, o := range p.queue {
			lacking := p.MissingOn(o)
			switch {
			case len(lacking) == 0: // recovered meanwhile, ahead of the queue
				continue
			case p.unfound[o]:
				kept = append(kept, o)
				unfound = true
				continue
			case p.inFlight[o] || (held != nil && held(o)):
				kept = append(kept, o)
				busy = true
				continue
			}
			lacking = slices.DeleteFunc(lacking, func(x int32) bool { return p.backfill[x] && p.full[x] })
			if len(lacking) == 0 {
				kept = append(kept, o)
				blocked = true
				continue
			}
			p.inFlight[o] = true
			p.queue = append(kept, p.queue[i+1:]...)
			return o, lacking, Push
		}
		p.queue = kept
		switch {
		case busy:
			return id, nil, InFlight
		case blocked:
			return id, nil, TooFull
		case unfound:
			return id, nil, Unfound
		}
		// Every object of the queue was recovered meanwhile, yet some
		// member lacks another (a failed push, off the queue): the queue
		// is built afresh, and holds it.
	}
	return id, nil, Done // not reached: a fresh queue holds what is missing
}

// order lists, in object order, every object some member lacks.
func (p *Plan) order() []objid.ID {
	set := map[objid.ID]bool{}
	for _, m := range p.missing {
		for id := range m {
			set[id] = true
		}
	}
	return slices.SortedFunc(maps.Keys(set), objid.Compare)
}

// SetUnfound records that no readable copy of id exists to push (the
// primary's rotted, and no member has it current): Next skips it from
// now on, and reports Unfound once nothing else is left; Urgent too.
func (p *Plan) SetUnfound(id objid.ID) {
	if p != nil {
		p.unfound[id] = true
	}
}

// IsUnfound reports whether SetUnfound recorded id.
func (p *Plan) IsUnfound(id objid.ID) bool { return p != nil && p.unfound[id] }

// Urgent claims id for a client write that must wait until every member
// holds it: it returns the members that lack it (backfillfull ones
// included: the write cannot go on without them; none if no member
// lacks id), and marks it in flight, so Next skips it until Finish. The
// write pushes id itself, at once: the caller makes sure no push of id
// is under way (the OSD's op queue runs one item of an object at a time,
// and a push Next claimed that has not started waits behind the write,
// which it finds done).
func (p *Plan) Urgent(id objid.ID) []int32 {
	if p == nil {
		return nil
	}
	targets := p.MissingOn(id)
	if len(targets) > 0 {
		p.inFlight[id] = true
	}
	return targets
}

// Finish ends the push of id: the members in recovered hold it now (none,
// if the push failed: id is pushed again in a later round). It returns
// how many copies that made.
func (p *Plan) Finish(id objid.ID, recovered []int32) int64 {
	if p == nil {
		return 0
	}
	delete(p.inFlight, id)
	var n int64
	for _, x := range recovered {
		if set := p.missing[x]; set[id] {
			delete(set, id)
			n++
			if len(set) == 0 {
				delete(p.missing, x)
			}
		}
	}
	p.copies = max(p.copies-n, 0)
	return n
}
