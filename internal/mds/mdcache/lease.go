package mdcache

import (
	"context"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Leases (Ceph's dentry leases): a lookup's reply lets the client cache
// what it names for Config.DentryLease — the binding of the name in its
// directory (a negative one too: the name is absent), and, when the name
// leads to a directory, that directory's attributes. A getattr of a
// directory leases its attributes alone. Clients give them to their
// kernels as FUSE entry and attribute timeouts.
//
// A change that alters a leased binding or directory's attributes (the
// txn's leased set) revokes the leases of every other client and is
// answered (unsafe and safe) only once each has acked — its client first
// invalidated what its kernel cached — or its lease ran out. The client
// that made the change keeps nothing stale: its kernel updates its own
// cache for its own changes, and its client drops the leases its request
// touches (fsclient). Its holdings of what changed are forgotten here.
//
// Replies that carry a lease are queued to the client while c.mu is
// held (run), so that a revocation made after the reply was built
// cannot reach the client before it.

// leaseKey names what a lease covers: the dentry name in directory dir,
// or (name "") the attributes of directory dir.
type leaseKey struct {
	dir  mdtypes.Ino
	name string
}

// leaseHold is one client's lease on a key.
type leaseHold struct {
	seq   uint64
	until time.Time
}

// leaseHolder is a key as one client holds it.
type leaseHolder struct {
	key    leaseKey
	client ClientID
}

// leaseGate holds a change's replies until the leases it revokes are
// acked or over.
type leaseGate struct {
	pending map[leaseHolder]time.Time // until
	held    []func()                  // replies to send, in order
	open    bool
}

// grantLease gives r's client a lease on key and returns its duration
// in ms and its seq for the reply's trace (0, 0: leases are off).
func (c *Cache) grantLease(r *request, key leaseKey) (uint32, uint64) {
	if c.cfg.DentryLease <= 0 || r.client == 0 {
		return 0, 0
	}
	hs := c.leases[key]
	if hs == nil {
		hs = map[ClientID]leaseHold{}
		c.leases[key] = hs
	}
	c.leaseSeq++
	hs[r.client] = leaseHold{seq: c.leaseSeq, until: c.cfg.Clock.Now().Add(c.cfg.DentryLease)}
	return uint32(c.cfg.DentryLease / time.Millisecond), c.leaseSeq
}

// leaseStep leases the last step of a trace to r's client: the dentry
// (with the directory's attributes when it leads to one), or for a
// trace of one step, a directory's attributes.
func (c *Cache) leaseStep(r *request, steps []step, trace []wire.TraceStep) {
	if len(steps) == 0 || len(trace) != len(steps) {
		return
	}
	last := steps[len(steps)-1]
	ts := &trace[len(trace)-1]
	switch {
	case last.name != "" && len(steps) > 1 && steps[len(steps)-2].ci != nil:
		dir := steps[len(steps)-2].ci.in.Ino
		ts.LeaseMs, ts.LeaseSeq = c.grantLease(r, leaseKey{dir, last.name})
		if last.ci != nil && last.ci.in.IsDir() && ts.LeaseMs > 0 {
			c.grantLease(r, leaseKey{last.ci.in.Ino, ""})
		}
	case len(steps) == 1 && last.ci != nil && last.ci.in.IsDir():
		ts.LeaseMs, ts.LeaseSeq = c.grantLease(r, leaseKey{last.ci.in.Ino, ""})
	}
}

// revokeLeases revokes the leases other clients than by hold on keys
// and returns the gate the change's replies wait at (nil: none to wait
// for). by's own holdings are forgotten.
func (c *Cache) revokeLeases(keys map[leaseKey]struct{}, by ClientID) *leaseGate {
	if len(c.leases) == 0 {
		return nil
	}
	now := c.cfg.Clock.Now()
	var g *leaseGate
	for k := range keys {
		hs := c.leases[k]
		for cl, h := range hs {
			if cl == by {
				continue // its reply may carry a new lease on k
			}
			if !now.Before(h.until) {
				delete(hs, cl)
				continue
			}
			if g == nil {
				g = &leaseGate{pending: map[leaseHolder]time.Time{}}
			}
			lh := leaseHolder{k, cl}
			if _, ok := g.pending[lh]; ok {
				continue
			}
			g.pending[lh] = h.until
			c.cfg.Outbox.SendLease(cl, wire.ClientLease{Op: wire.LeaseRevoke, Ino: uint64(k.dir), Name: k.name, Seq: h.seq})
		}
		if len(hs) == 0 {
			delete(c.leases, k)
		}
	}
	if g != nil {
		c.gates = append(c.gates, g)
		c.stats.LeaseRevokes += uint64(len(g.pending))
	}
	return g
}

// send sends reply now if the gate is open (or nil), else when it opens.
// c.mu is held.
func (g *leaseGate) send(reply func()) bool {
	if g == nil || g.open {
		return true
	}
	g.held = append(g.held, reply)
	return false
}

// settleGates opens the gates with nothing left pending and sends
// their held replies, in order (queued: they do not block). c.mu is
// held.
func (c *Cache) settleGates(now time.Time) {
	kept := c.gates[:0]
	for _, g := range c.gates {
		for lh, until := range g.pending {
			if !now.Before(until) {
				delete(g.pending, lh)
			}
		}
		if len(g.pending) > 0 {
			kept = append(kept, g)
			continue
		}
		g.open = true
		for _, f := range g.held {
			f()
		}
		g.held = nil
	}
	clear(c.gates[len(kept):])
	c.gates = kept
}

// gatedReply sends a change's reply once its gate is open: now, or
// when the last revocation it waits for is acked or over.
func (c *Cache) gatedReply(g *leaseGate, f func()) {
	if g == nil {
		f()
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g.send(f) {
		f()
	}
}

// HandleLease takes a client's lease message: a revocation's ack ends
// its holding (and may release changes waiting for it); a release ends
// it too.
func (c *Cache) HandleLease(ctx context.Context, client ClientID, m wire.ClientLease) {
	if m.Op != wire.LeaseRevokeAck && m.Op != wire.LeaseRelease {
		return
	}
	key := leaseKey{mdtypes.Ino(m.Ino), m.Name}
	c.mu.Lock()
	if hs := c.leases[key]; hs != nil {
		if h, ok := hs[client]; ok && h.seq <= m.Seq {
			delete(hs, client)
			if len(hs) == 0 {
				delete(c.leases, key)
			}
		}
	}
	lh := leaseHolder{key, client}
	for _, g := range c.gates {
		delete(g.pending, lh)
	}
	c.settleGates(c.cfg.Clock.Now())
	c.mu.Unlock()
}

// expireLeases forgets the leases that ran out (Tick) and sends the
// replies of the changes they held up. c.mu is held.
func (c *Cache) expireLeases(now time.Time) {
	for k, hs := range c.leases {
		for cl, h := range hs {
			if !now.Before(h.until) {
				delete(hs, cl)
			}
		}
		if len(hs) == 0 {
			delete(c.leases, k)
		}
	}
	c.settleGates(now)
}

// leaseChangedDir leases to a change's maker the attributes of the
// directory its request starts at, when the change altered them: the
// reply's first step carries them as they are after it (the ops build
// their traces last), so the maker's next path walk through that
// directory asks nothing. Other clients' leases were revoked as usual.
func (c *Cache) leaseChangedDir(r *request, t *txn) {
	switch r.req.Op {
	case wire.MetaCreate, wire.MetaMknod, wire.MetaMkdir, wire.MetaSymlink, wire.MetaLink,
		wire.MetaUnlink, wire.MetaRmdir, wire.MetaRename, wire.MetaSetattr:
	default:
		return
	}
	if len(r.rep.Trace) == 0 {
		return
	}
	st := &r.rep.Trace[0]
	ino := mdtypes.Ino(st.Inode.Ino)
	if st.Name != "" || st.LeaseMs > 0 || ino == 0 || st.Inode.Mode&mdtypes.ModeType != mdtypes.ModeDir {
		return
	}
	if _, ok := t.leased[leaseKey{ino, ""}]; ok {
		st.LeaseMs, st.LeaseSeq = c.grantLease(r, leaseKey{ino, ""})
	}
}

// dropLeases forgets client's leases: it closed its session (unmounted),
// so nothing it cached is used any more, and the changes waiting for
// its acks go on. A session that timed out or was evicted keeps its
// leases until they run out: its client may still be serving from them.
// c.mu is held.
func (c *Cache) dropLeases(client ClientID) {
	for k, hs := range c.leases {
		if _, ok := hs[client]; ok {
			delete(hs, client)
			if len(hs) == 0 {
				delete(c.leases, k)
			}
		}
	}
	for _, g := range c.gates {
		for lh := range g.pending {
			if lh.client == client {
				delete(g.pending, lh)
			}
		}
	}
	c.settleGates(c.cfg.Clock.Now())
}
