package reserve

import (
	"slices"

	"github.com/cuttlestore/cuttle/osdmap"
)

// Request is a primary's request for a slot on a member it will push to
// (Ceph's MBackfillReserve and MRecoveryReserve REQUEST): the PG, its
// primary, the epoch its interval began, and the PG's priority.
type Request struct {
	PG       osdmap.PG
	From     int32
	Interval uint64
	Priority int
}

// Grant tells primary To that it holds a slot on this member for PG in
// the interval that began at Interval.
type Grant struct {
	To       int32
	PG       osdmap.PG
	Interval uint64
}

// Remote is a member's reservations for the primaries that push to it:
// one per PG (a PG has one primary per interval), granted up to the
// member's limit (its osd_max_backfills) in priority order.
//
// A request from a newer interval of a PG replaces the older one, held
// or waiting; one from an older interval is ignored. A request the
// member holds already is granted again (its grant may have been lost or
// delayed; the primary ignores grants it holds). Only the primary's
// release for the same interval ends a reservation, besides Prune.
type Remote struct {
	res  *Reserver[osdmap.PG]
	reqs map[osdmap.PG]Request
}

// NewRemote returns a member's reservations of limit slots.
func NewRemote(limit int) *Remote {
	return &Remote{res: NewReserver[osdmap.PG](limit), reqs: map[osdmap.PG]Request{}}
}

// Request queues q and returns the grants to send now (q's, if a slot is
// free; others', if q replaced a held reservation of an older interval).
func (m *Remote) Request(q Request) []Grant {
	cur, ok := m.reqs[q.PG]
	switch {
	case ok && cur.Interval > q.Interval:
		return nil // the primary's interval has ended here already
	case ok && cur.Interval == q.Interval && cur.From == q.From:
		if m.res.Held(q.PG) {
			return []Grant{grantOf(cur)}
		}
		cur.Priority = q.Priority
		m.reqs[q.PG] = cur
		return m.grants(m.res.Request(q.PG, q.Priority))
	}
	var out []Grant
	if ok {
		out = m.drop(q.PG)
	}
	m.reqs[q.PG] = q
	return append(out, m.grants(m.res.Request(q.PG, q.Priority))...)
}

// Release ends the reservation of pg that primary from holds or waits
// for in the interval that began at interval, and returns the grants to
// send in its place. A release of another interval's is ignored.
func (m *Remote) Release(pg osdmap.PG, from int32, interval uint64) []Grant {
	cur, ok := m.reqs[pg]
	if !ok || cur.From != from || cur.Interval != interval {
		return nil
	}
	return m.drop(pg)
}

// Prune drops every reservation, held or waiting, for which keep is
// false (on a new map: the PG's interval here is no longer the
// request's, or its primary is gone), in PG order, and returns them and
// the grants to send in their place.
func (m *Remote) Prune(keep func(Request) bool) (dropped []Request, grants []Grant) {
	pgs := make([]osdmap.PG, 0, len(m.reqs))
	for pg, q := range m.reqs {
		if !keep(q) {
			pgs = append(pgs, pg)
		}
	}
	slices.SortFunc(pgs, osdmap.ComparePG)
	// Every one goes before any slot is handed on: a slot freed by the
	// first must not go to a later one.
	for _, pg := range pgs {
		dropped = append(dropped, m.reqs[pg])
		delete(m.reqs, pg)
		m.res.remove(pg)
	}
	return dropped, m.grants(m.res.grant())
}

// SetLimit changes the member's slots (osd_max_backfills) and returns
// the grants to send now.
func (m *Remote) SetLimit(n int) []Grant { return m.grants(m.res.SetLimit(n)) }

// Holds reports whether pg holds a slot here, and the request it holds
// or waits with.
func (m *Remote) Holds(pg osdmap.PG) (q Request, held bool) {
	q, ok := m.reqs[pg]
	return q, ok && m.res.Held(pg)
}

// State returns the member's counts.
func (m *Remote) State() State { return m.res.State() }

func (m *Remote) drop(pg osdmap.PG) []Grant {
	delete(m.reqs, pg)
	return m.grants(m.res.Cancel(pg))
}

func (m *Remote) grants(keys []osdmap.PG) []Grant {
	out := make([]Grant, 0, len(keys))
	for _, k := range keys {
		out = append(out, grantOf(m.reqs[k]))
	}
	return out
}

func grantOf(q Request) Grant { return Grant{To: q.From, PG: q.PG, Interval: q.Interval} }

// Entries lists the member's reservations: the requests holding a slot,
// in PG order, then those waiting, in the order they will be granted.
func (m *Remote) Entries() []RemoteEntry {
	var held, waiting []RemoteEntry
	for _, e := range m.res.Entries() {
		re := RemoteEntry{Request: m.reqs[e.Key], Held: e.Held}
		if e.Held {
			held = append(held, re)
		} else {
			waiting = append(waiting, re)
		}
	}
	slices.SortFunc(held, func(a, b RemoteEntry) int { return osdmap.ComparePG(a.PG, b.PG) })
	return append(held, waiting...)
}

// RemoteEntry is a request a member holds a slot for (Held) or queues.
type RemoteEntry struct {
	Request
	Held bool
}
