package opq

import "slices"

// Limiter counts the slots of a limit several workers share, such as a
// recovering PG's (a slot per push in flight, osd_recovery_max_active)
// or the OSD's scrubs (osd_max_scrubs); recovery's per-OSD slots, which
// wait in priority order, are internal/osd/reserve's. Waiters, named by
// ids the caller chooses, are granted slots in arrival order. The limit
// may change while slots are held: lowering it takes no slot back (those
// held are released as usual, and new ones are granted once fewer are
// held than the limit); raising it grants waiters at once.
//
// A Limiter decides; its owner blocks and wakes (internal/osd/slots
// does, with a channel per waiter). It is not safe for concurrent use.
type Limiter struct {
	limit   int
	held    int
	waiting []uint64 // in arrival order
}

// NewLimiter returns a limiter of limit slots.
func NewLimiter(limit int) *Limiter { return &Limiter{limit: limit} }

// Acquire takes a slot for id and reports true if one is free and no one
// waits before it; otherwise id waits, and is granted later through
// Release's or SetLimit's grant.
func (l *Limiter) Acquire(id uint64) bool {
	if len(l.waiting) == 0 && l.held < l.limit {
		l.held++
		return true
	}
	l.waiting = append(l.waiting, id)
	return false
}

// Cancel stops id waiting. It reports false if id was not waiting: it
// was granted a slot meanwhile, which the caller then holds (and gives
// back with Release).
func (l *Limiter) Cancel(id uint64) bool {
	i := slices.Index(l.waiting, id)
	if i < 0 {
		return false
	}
	l.waiting = slices.Delete(l.waiting, i, i+1)
	return true
}

// Release gives back a slot and calls grant for each waiter that gets
// one now.
func (l *Limiter) Release(grant func(id uint64)) {
	l.held--
	l.grant(grant)
}

// SetLimit changes the number of slots and calls grant for each waiter
// that gets one now.
func (l *Limiter) SetLimit(n int, grant func(id uint64)) {
	l.limit = n
	l.grant(grant)
}

// State returns the slots held and the limit.
func (l *Limiter) State() (held, limit int) { return l.held, l.limit }

func (l *Limiter) grant(grant func(id uint64)) {
	for len(l.waiting) > 0 && l.held < l.limit {
		id := l.waiting[0]
		l.waiting = l.waiting[1:]
		l.held++
		grant(id)
	}
}
