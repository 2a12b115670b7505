package failover

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/mdsmap"
)

// Change is a next epoch being built from a map: the map (a clone, its
// epoch one past the base's), what happened, and the addresses of failed
// rank holders to fence (blocklist) so they can no longer write.
type Change struct {
	Map    *mdsmap.Map
	Events []string
	Fence  []string
	base   mdsmap.Epoch
}

// Begin starts the change of m's next epoch.
func Begin(m *mdsmap.Map) *Change {
	next := m.Clone()
	next.Epoch++
	return &Change{Map: next, base: m.Epoch}
}

// Changed reports whether anything was done.
func (c *Change) Changed() bool { return len(c.Events) > 0 }

// String is the events, joined.
func (c *Change) String() string {
	if !c.Changed() {
		return "no change"
	}
	s := c.Events[0]
	for _, e := range c.Events[1:] {
		s += "; " + e
	}
	return s
}

func (c *Change) event(format string, args ...any) {
	c.Events = append(c.Events, fmt.Sprintf(format, args...))
}

// FenceAddr is the blocklist entry that fences d's incarnation:
// "ADDR/NONCE", so that its restart (a new nonce) is not fenced.
func FenceAddr(d *mdsmap.Daemon) string { return fmt.Sprintf("%s/%d", d.Addr, d.Nonce) }

// Fail removes daemon g: a rank it holds becomes failed (and its address
// is fenced), a rank it follows loses its follower. why says what
// happened, for the event.
func (c *Change) Fail(g mdsmap.GID, why string) {
	m := c.Map
	d := m.Daemons[g]
	if d == nil {
		return
	}
	if d.State.HoldsRank() {
		f := m.FS[d.FS]
		delete(f.Up, d.Rank)
		f.Modified = m.Epoch
		c.Fence = append(c.Fence, FenceAddr(d))
		c.event("mds.%s (gid %d) failed, %s: rank %s:%d (%s) is failed", d.Name, g, why, f.Name, d.Rank, d.State)
	} else {
		c.event("mds.%s (gid %d, %s) removed: %s", d.Name, g, d.State, why)
	}
	delete(m.Daemons, g)
}

// toStandby makes d a standby again.
func (c *Change) toStandby(d *mdsmap.Daemon, why string) {
	c.event("mds.%s (gid %d) %s -> standby: %s", d.Name, d.GID, d.State, why)
	d.State, d.FS, d.Rank, d.Since = mdsmap.StateStandby, 0, mdsmap.NoRank, c.Map.Epoch
}

// give makes d the holder of rank r of f in state s.
func (c *Change) give(f *mdsmap.FS, r mdsmap.Rank, d *mdsmap.Daemon, s mdsmap.State) {
	old := d.State
	d.State, d.FS, d.Rank, d.Since = s, f.ID, r, c.Map.Epoch
	f.Up[r] = d.GID
	if !slices.Contains(f.In, r) {
		f.In = append(f.In, r)
		slices.Sort(f.In)
	}
	f.Modified = c.Map.Epoch
	c.event("mds.%s (gid %d) %s -> %s of rank %s:%d", d.Name, d.GID, old, s, f.Name, r)
}

// pickStandby returns the standby best placed to serve f: one whose
// JoinFS names it, else one with no JoinFS, else any; the oldest gid
// first within each. Nil if there is none.
func pickStandby(m *mdsmap.Map, f *mdsmap.FS) *mdsmap.Daemon {
	var none, other *mdsmap.Daemon
	for _, d := range m.Standbys() {
		switch {
		case d.JoinFS == f.Name:
			return d
		case d.JoinFS == "" && none == nil:
			none = d
		case other == nil:
			other = d
		}
	}
	if none != nil {
		return none
	}
	return other
}

// replacement returns who would take rank r of f if its holder failed:
// its follower, else a standby.
func replacement(m *mdsmap.Map, f *mdsmap.FS, r mdsmap.Rank) *mdsmap.Daemon {
	if d := m.Follower(f.ID, r); d != nil {
		return d
	}
	return pickStandby(m, f)
}
