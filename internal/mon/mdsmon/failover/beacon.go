package failover

import (
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// Find returns the daemon of m that sent b: the one with its name and
// nonce, or nil for a daemon the map does not know.
func Find(m *mdsmap.Map, b wire.MDSBeacon) *mdsmap.Daemon {
	for _, d := range m.Daemons {
		if d.Name == b.Name && d.Nonce == b.Nonce {
			return d
		}
	}
	return nil
}

// Beacon returns the change a beacon makes to m (Changed is false when
// it makes none: the usual case, a daemon confirming its state).
//
// A daemon the map does not know is added as a standby if it reports
// boot or standby (after failing an older incarnation of its name), and
// standbys are assigned at once, so that a new daemon fills a failed
// rank without waiting for a tick. One reporting any other state is
// not added: the reply tells it it is not in the map. A known rank
// holder's reported state is taken when it is the next in order
// (mdsmap.CanAdvance); stopped ends its rank and makes it a standby;
// damaged marks the rank damaged and drops it.
func Beacon(m *mdsmap.Map, b wire.MDSBeacon) *Change {
	c := Begin(m)
	next := c.Map
	d := Find(next, b)
	if d == nil {
		if b.State != mdsmap.StateBoot && b.State != mdsmap.StateStandby {
			return c
		}
		if len(next.Daemons) >= mdsmap.MaxDaemons {
			return c
		}
		for _, g := range next.GIDs() {
			if old := next.Daemons[g]; old.Name == b.Name {
				c.Fail(g, "replaced by a new incarnation")
			}
		}
		d = &mdsmap.Daemon{GID: next.NextGID, Name: b.Name, Addr: b.Addr, Nonce: b.Nonce, State: mdsmap.StateStandby,
			Rank: mdsmap.NoRank, JoinFS: b.WantFS, Since: next.Epoch}
		next.NextGID++
		next.Daemons[d.GID] = d
		c.event("mds.%s (gid %d) at %s is a new standby", d.Name, d.GID, d.Addr)
		c.Assign()
		return c
	}
	if !d.State.HoldsRank() {
		return c
	}
	f := next.FS[d.FS]
	switch {
	case b.State == mdsmap.StateDamaged:
		f.Damaged = append(f.Damaged, d.Rank)
		slices.Sort(f.Damaged)
		r := d.Rank
		c.Fail(d.GID, "it reported its rank damaged")
		c.event("rank %s:%d is damaged", f.Name, r)
		// Its follower follows a damaged journal.
		if fl := next.Follower(f.ID, r); fl != nil {
			c.toStandby(fl, "its rank is damaged")
		}
	case b.State == mdsmap.StateStopped && d.State == mdsmap.StateStopping:
		r := d.Rank
		delete(f.Up, r)
		f.In = slices.DeleteFunc(f.In, func(x mdsmap.Rank) bool { return x == r })
		f.Modified = next.Epoch
		if fl := next.Follower(f.ID, r); fl != nil {
			c.toStandby(fl, "its rank stopped")
		}
		c.toStandby(d, "its rank stopped")
		c.Assign()
	case mdsmap.CanAdvance(d.State, b.State) && b.State != mdsmap.StateStopped && b.State != mdsmap.StateStopping:
		c.event("mds.%s (gid %d) rank %s:%d %s -> %s", d.Name, d.GID, f.Name, d.Rank, d.State, b.State)
		d.State, d.Since = b.State, next.Epoch
		f.Modified = next.Epoch
		if b.State == mdsmap.StateActive {
			c.Assign() // the file system may grow, or get a follower
		}
	}
	return c
}

// Reply is the answer to b from m (the map as it stands after b, if b
// changed it): the daemon's gid, state and rank, and the encoded map if
// b's epoch is older than m's.
func Reply(m *mdsmap.Map, b wire.MDSBeacon) wire.MDSBeaconReply {
	r := wire.MDSBeaconReply{Seq: b.Seq, Epoch: m.Epoch, State: mdsmap.StateNone, Rank: mdsmap.NoRank}
	if d := Find(m, b); d != nil {
		r.GID, r.State, r.FS, r.Rank = d.GID, d.State, d.FS, d.Rank
	}
	if b.Epoch < m.Epoch {
		r.Map, _ = m.MarshalBinary()
	}
	return r
}

// Tick is the leader's periodic decision at now: laggy daemons (not
// heard from within grace, by l) are removed or failed, as the package
// documentation says, and ranks assigned.
func Tick(m *mdsmap.Map, l *Liveness, now time.Time, grace time.Duration) *Change {
	return Plan(m, l.Laggy(m, now, grace))
}

// Plan is Tick's decision for a known list of laggy daemons, so that a
// command carrying the list (prepared later, against a newer map) makes
// the same decisions: laggy standbys and followers first, then laggy
// rank holders that have a replacement, then Assign.
func Plan(m *mdsmap.Map, laggy []mdsmap.GID) *Change {
	c := Begin(m)
	next := c.Map
	for _, g := range laggy {
		if d := next.Daemons[g]; d != nil && !d.State.HoldsRank() {
			c.Fail(g, "laggy (no beacon within the grace)")
		}
	}
	for _, g := range laggy {
		d := next.Daemons[g]
		if d == nil {
			continue
		}
		f := next.FS[d.FS]
		if replacement(next, f, d.Rank) == nil {
			continue // Ceph's rule: a laggy holder with no replacement stays
		}
		c.Fail(g, "laggy (no beacon within the grace)")
		c.Assign() // the replacement takes the rank before the next holder is judged
	}
	c.Assign()
	return c
}

// LaggyHolders returns the laggy daemons Plan leaves in place (rank
// holders without a replacement), for health reports.
func LaggyHolders(m *mdsmap.Map, laggy []mdsmap.GID) []*mdsmap.Daemon {
	var out []*mdsmap.Daemon
	for _, g := range laggy {
		if d := m.Daemons[g]; d != nil && d.State.HoldsRank() {
			out = append(out, d)
		}
	}
	return out
}
