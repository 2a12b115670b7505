package failover

import (
	"slices"

	"github.com/cuttlestore/cuttle/mdsmap"
)

// Assign brings every file system's ranks towards what it wants, in
// passes over the file systems in id order so that failed ranks anywhere
// get standbys before any file system grows or gets followers:
//
//  1. followers whose rank is no longer held by an active daemon, or
//     whose file system no longer allows them, become standbys (a failed
//     rank's follower is kept: it takes the rank in pass 2);
//  2. failed ranks of joinable file systems go to their follower or a
//     standby, in replay;
//  3. a joinable file system below max_mds whose ranks are all active
//     gets one new rank (the lowest free), in creating; one above it
//     (or down) has its highest active rank stopping, one at a time;
//  4. active ranks of file systems allowing standby-replay get a
//     follower from the standbys left.
func (c *Change) Assign() {
	m := c.Map
	for _, id := range m.FSIDs() {
		c.dropFollowers(m.FS[id])
	}
	for _, id := range m.FSIDs() {
		f := m.FS[id]
		if !joinable(f) {
			continue
		}
		for _, r := range f.Failed() {
			if d := m.Follower(f.ID, r); d != nil {
				c.give(f, r, d, mdsmap.StateReplay)
			} else if d := pickStandby(m, f); d != nil {
				c.give(f, r, d, mdsmap.StateReplay)
			}
		}
	}
	for _, id := range m.FSIDs() {
		c.resize(m.FS[id])
	}
	for _, id := range m.FSIDs() {
		f := m.FS[id]
		if !joinable(f) || !f.Has(mdsmap.AllowStandbyReplay) {
			continue
		}
		for _, r := range f.In {
			h := m.Holder(f.ID, r)
			if h == nil || h.State != mdsmap.StateActive || m.Follower(f.ID, r) != nil {
				continue
			}
			d := pickStandby(m, f)
			if d == nil {
				return
			}
			old := d.State
			d.State, d.FS, d.Rank, d.Since = mdsmap.StateStandbyReplay, f.ID, r, m.Epoch
			c.event("mds.%s (gid %d) %s -> standby-replay following rank %s:%d", d.Name, d.GID, old, f.Name, r)
		}
	}
}

// joinable: daemons may take f's ranks.
func joinable(f *mdsmap.FS) bool { return f.Has(mdsmap.Joinable) && !f.Has(mdsmap.Down) }

// wanted is the number of ranks f should have.
func wanted(f *mdsmap.FS) int {
	if f.Has(mdsmap.Down) {
		return 0
	}
	return f.MaxMDS
}

func (c *Change) dropFollowers(f *mdsmap.FS) {
	m := c.Map
	for _, d := range m.StandbyReplays() {
		if d.FS != f.ID {
			continue
		}
		h := m.Holder(f.ID, d.Rank)
		switch {
		case !f.Has(mdsmap.AllowStandbyReplay) || !joinable(f):
			c.toStandby(d, "the file system no longer allows standby-replay")
		case !slices.Contains(f.In, d.Rank):
			c.toStandby(d, "its rank is gone")
		case h != nil && h.State != mdsmap.StateActive && h.State != mdsmap.StateStopping:
			// The rank was taken over by another daemon (still
			// replaying): this follower follows an old journal.
			c.toStandby(d, "its rank was taken by another daemon")
		}
	}
}

// resize grows or shrinks f by one rank.
func (c *Change) resize(f *mdsmap.FS) {
	m := c.Map
	want := wanted(f)
	if len(f.In) > want {
		// Stop the highest rank, once it is active; none while another
		// is stopping.
		for _, r := range f.In {
			if h := m.Holder(f.ID, r); h != nil && h.State == mdsmap.StateStopping {
				return
			}
		}
		r := f.In[len(f.In)-1]
		if h := m.Holder(f.ID, r); h != nil && h.State == mdsmap.StateActive {
			h.State, h.Since = mdsmap.StateStopping, m.Epoch
			f.Modified = m.Epoch
			c.event("mds.%s (gid %d) active -> stopping rank %s:%d (%d ranks, want %d)", h.Name, h.GID, f.Name, r, len(f.In), want)
		}
		return
	}
	if len(f.In) >= want || !joinable(f) || len(f.Damaged) > 0 {
		return
	}
	for _, r := range f.In {
		if h := m.Holder(f.ID, r); h == nil || h.State != mdsmap.StateActive {
			return
		}
	}
	d := pickStandby(m, f)
	if d == nil {
		return
	}
	r := mdsmap.Rank(0)
	for slices.Contains(f.In, r) {
		r++
	}
	c.give(f, r, d, mdsmap.StateCreating)
}
