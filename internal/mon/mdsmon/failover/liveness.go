package failover

import (
	"time"

	"github.com/cuttlestore/cuttle/mdsmap"
)

// Liveness is when each daemon was last heard from. Only the leader
// keeps one, in memory: a new leader starts with Reset, giving every
// daemon a fresh grace, since the beacons its predecessor heard are lost
// with it.
type Liveness struct {
	last map[mdsmap.GID]time.Time
}

// NewLiveness returns a Liveness that has heard from nobody.
func NewLiveness() *Liveness { return &Liveness{last: map[mdsmap.GID]time.Time{}} }

// Heard records a beacon of g at now.
func (l *Liveness) Heard(g mdsmap.GID, now time.Time) {
	if now.After(l.last[g]) {
		l.last[g] = now
	}
}

// Reset records every daemon of m as heard at now and forgets the rest.
func (l *Liveness) Reset(m *mdsmap.Map, now time.Time) {
	clear(l.last)
	for g := range m.Daemons {
		l.last[g] = now
	}
}

// Last returns when g was last heard from (zero: never).
func (l *Liveness) Last(g mdsmap.GID) time.Time { return l.last[g] }

// Laggy returns, in gid order, the daemons of m not heard from for more
// than grace at now. A daemon never heard from is taken as heard at now
// (it entered the map through a beacon this monitor did not see), and
// daemons no longer in m are forgotten.
func (l *Liveness) Laggy(m *mdsmap.Map, now time.Time, grace time.Duration) []mdsmap.GID {
	for g := range l.last {
		if m.Daemons[g] == nil {
			delete(l.last, g)
		}
	}
	var out []mdsmap.GID
	for _, g := range m.GIDs() {
		t, ok := l.last[g]
		if !ok {
			l.last[g] = now
			continue
		}
		if now.Sub(t) > grace {
			out = append(out, g)
		}
	}
	return out
}
