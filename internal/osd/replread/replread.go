// Package replread decides and serves reads from replicas (docs/OSD.md,
// "Reading from replicas"; issue 42's multi-node reads). A client with
// read_policy balance or score sends a read with wire.FlagBalanceReads to
// any acting member. A replica serves it only if what it holds is what
// the primary would answer for every acknowledged write, else it answers
// ENOTCURRENT and the client asks the primary:
//
//   - the primary stamps each rep op with its committed watermark
//     (Watermark): every write of the interval below it is committed on
//     every member; it sends zero while the PG is not clean. A replica
//     serves an object whose version here is below the watermark of its
//     current interval, which no write in flight can change (Check,
//     ObjectRefusal);
//   - the client names the newest version of the PG it has seen
//     (OSDOp.ReadAtLeast): a replica that has not applied it refuses, so
//     a client reads its own writes, even those a pool in ack primary
//     answered before the replicas had them;
//   - once the PG is idle (IdleDelay with no write in flight) the primary
//     sends the replicas the watermark just above its last write
//     (IdleWatermark, wire.RepIdle), so that the last write becomes
//     readable there without waiting for the next;
//   - in a pool whose writes are answered by every member (ack all), the
//     primary holds a balanced client's read of an object while a write
//     to it is not yet committed by every member (Holds), as Ceph's
//     object locks do, so no reader sees a write a replica could still
//     deny to the next one.
//
// It knows the store through internal/osd/ops only, and nothing of PGs'
// peering or the messenger: internal/osd's replread.go gathers a PG's
// facts into a Check and sends the answers. Replica and Holds are safe
// for concurrent use; the rest are pure functions. Start at Check.
package replread

import (
	"context"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Check is what a replica's PG says about a balanced read before the
// object is read.
type Check struct {
	Member, Primary bool // this OSD is in the acting set, is its primary
	// Interval is the PG's current interval (the epoch it began) and
	// Started the last epoch the PG went active in here.
	Interval, Started uint64
	Missing           bool // the object is in this OSD's missing set
	// Op is the request.
	Op *wire.OSDOp
}

// Reasons a replica refuses a balanced read, as the tests and the debug
// log name them.
const (
	RefuseNotMember   = "not in the acting set"
	RefuseNotActive   = "PG not active in this interval"
	RefuseStaleClient = "request from before the interval"
	RefuseNotPlain    = "not a plain read of the head"
	RefuseMissing     = "object missing here"
	RefuseNoWatermark = "no committed watermark (PG not clean, or no write yet this interval)"
	RefuseBehind      = "behind the client's last seen version"
	RefuseUncommitted = "object has a write not committed everywhere"
	RefuseAbsent      = "object absent here (only the primary answers ENOENT)"
	RefuseChanged     = "object changed while read"
)

// Refusal returns why a replica with watermark state w refuses the read
// ("" serves it; for a primary "" means: serve it as the primary does).
func (c Check) Refusal(w State) string {
	switch {
	case c.Primary:
		return ""
	case !c.Member:
		return RefuseNotMember
	case c.Interval == 0 || c.Started < c.Interval:
		return RefuseNotActive
	case c.Op.Epoch < c.Interval:
		return RefuseStaleClient
	case !wire.ReplicaReadable(c.Op.Object, c.Op.Ops):
		return RefuseNotPlain
	case c.Missing:
		return RefuseMissing
	case w.Interval != c.Interval || w.CommittedBelow == (wire.Version{}):
		return RefuseNoWatermark
	case w.Applied.Less(c.Op.ReadAtLeast):
		return RefuseBehind
	}
	return ""
}

// ObjectRefusal is the rule once the object was read: whether it exists,
// and its version before and after the read (equal unless a write applied
// meanwhile).
func ObjectRefusal(exists bool, before, after, committedBelow wire.Version) string {
	switch {
	case !exists:
		return RefuseAbsent
	case before != after:
		return RefuseChanged
	case !after.Less(committedBelow):
		return RefuseUncommitted
	}
	return ""
}

// Watermark is the watermark a primary stamps on a write's rep op: the
// lowest of versions (the write's log entries', and the first entry's of
// each write not yet committed by every member), or zero while the PG is
// not clean (a member may lack objects). versions must yield one at
// least; Watermark reads them all.
func Watermark(clean bool, versions func(yield func(wire.Version) bool)) wire.Version {
	if !clean {
		return wire.Version{}
	}
	var low wire.Version
	first := true
	for v := range versions {
		if first || v.Less(low) {
			low, first = v, false
		}
	}
	return low
}

// HoldsReads reports whether a primary of pool holds a read with flags
// while a write to its object is replicating: in ack all, for clients
// that read from replicas (the pool's policy, or the read's flag).
func HoldsReads(pool *osdmap.Pool, flags uint32) bool {
	return pool.Ack == osdmap.AckAll && (pool.ReadPolicy != osdmap.ReadPrimary || flags&wire.FlagBalanceReads != 0)
}

// State is a replica's watermark state.
type State struct {
	Interval       uint64       // the interval CommittedBelow is of
	CommittedBelow wire.Version // the newest watermark its primary sent
	Applied        wire.Version // the newest write readers see here
}

// Replica is a replica PG's watermark state, which rep ops update and
// balanced reads consult. The zero Replica knows nothing.
type Replica struct {
	mu sync.Mutex
	s  State
}

// State returns the state now.
func (r *Replica) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s
}

// NoteRepOp records a rep op of interval, carrying committedBelow, whose
// writes end at version last; it returns what to run once the store has
// applied the op (objectstore.Completion.OnApplied).
func (r *Replica) NoteRepOp(interval uint64, committedBelow, last wire.Version) func() {
	r.NoteWatermark(interval, committedBelow)
	return func() {
		r.mu.Lock()
		if r.s.Applied.Less(last) {
			r.s.Applied = last
		}
		r.mu.Unlock()
	}
}

// NoteWatermark records a watermark of interval, from a rep op or a
// RepIdle: a new interval forgets the old one's, and within one the
// watermark never goes back.
func (r *Replica) NoteWatermark(interval uint64, committedBelow wire.Version) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s.Interval != interval {
		r.s.Interval, r.s.CommittedBelow = interval, wire.Version{}
	}
	if r.s.CommittedBelow.Less(committedBelow) {
		r.s.CommittedBelow = committedBelow
	}
}

// IdleDelay is how long a primary's PG must stay quiet, every write
// committed by every member, before it sends its replicas the idle
// watermark (IdleWatermark, wire.RepIdle): long enough that a stream of
// writes sends none, short enough that a read soon after the last write
// finds it readable at replicas.
const IdleDelay = 5 * time.Millisecond

// IdleWatermark is the watermark a primary sends its replicas when its PG
// is idle: with no write in flight (inFlight 0), the PG clean, and its
// last_update last the last entry of a write every member committed in
// this interval (committed), every write up to last is committed on
// every member, so the watermark is the version just above last. ok is
// false when there is none to send: writes in flight, the PG not clean,
// no write yet this interval (committed zero), an entry logged otherwise
// since (last not committed), or sent already (sent, the watermark sent
// this interval, not below the new one).
func IdleWatermark(clean bool, inFlight int, last, committed, sent wire.Version) (wire.Version, bool) {
	w := wire.Version{Epoch: last.Epoch, Counter: last.Counter + 1}
	if !clean || inFlight > 0 || committed == (wire.Version{}) || last != committed || !sent.Less(w) {
		return wire.Version{}, false
	}
	return w, true
}

// Idle is a primary PG's state for the idle watermark: the interval
// whose writes it follows, the newest last entry of a write of it that
// every member committed, and the watermark sent in it. The zero Idle
// knows nothing; its owner's lock guards it.
type Idle struct {
	interval        uint64
	committed, sent wire.Version
}

// Committed records that every member committed a write of interval
// whose last log entry is last.
func (i *Idle) Committed(interval uint64, last wire.Version) {
	if i.interval != interval {
		*i = Idle{interval: interval}
	}
	if i.committed.Less(last) {
		i.committed = last
	}
}

// Due returns the watermark to send now (IdleWatermark) for a PG in
// interval with last_update last, and records it as sent; ok is false
// if there is none, or the writes Committed followed another interval.
func (i *Idle) Due(interval uint64, clean bool, inFlight int, last wire.Version) (wire.Version, bool) {
	if i.interval != interval {
		return wire.Version{}, false
	}
	w, ok := IdleWatermark(clean, inFlight, last, i.committed, i.sent)
	if ok {
		i.sent = w
	}
	return w, ok
}

// Serve decides on a balanced read c with the replica's state w and,
// if the PG's rules let it, reads in env between two looks at the
// object's version: it returns the result and the version, or why the
// replica is not current for the read. err is a store failure (the
// primary then reads, and repairs, it).
func Serve(ctx context.Context, c Check, w State, env *ops.Env) (*ops.Result, wire.Version, string, error) {
	if why := c.Refusal(w); why != "" {
		return nil, wire.Version{}, why, nil
	}
	before, err := ops.Load(ctx, env.Store, env.Collection, env.Object, "")
	if err != nil {
		return nil, wire.Version{}, "", err
	}
	res, err := ops.Execute(ctx, env, c.Op.Ops)
	if err != nil {
		return nil, wire.Version{}, "", err
	}
	after, err := ops.Load(ctx, env.Store, env.Collection, env.Object, "")
	if err != nil {
		return nil, wire.Version{}, "", err
	}
	v := ops.VersionOf(after.Info)
	if why := ObjectRefusal(before.Exists && after.Exists, ops.VersionOf(before.Info), v, w.CommittedBelow); why != "" {
		if rc, ok := env.Store.(objectstore.Recycler); ok {
			for _, b := range res.Buffers {
				rc.Recycle(b)
			}
		}
		return nil, v, why, nil
	}
	return res, v, "", nil
}

// Holds are the reads a primary holds until writes commit everywhere,
// by the write's tid. The zero Holds is empty; its owner's lock guards
// it.
type Holds struct {
	waiters map[uint64][]chan struct{}
}

// Add returns a channel closed when write tid is done.
func (h *Holds) Add(tid uint64) <-chan struct{} {
	if h.waiters == nil {
		h.waiters = map[uint64][]chan struct{}{}
	}
	ch := make(chan struct{})
	h.waiters[tid] = append(h.waiters[tid], ch)
	return ch
}

// Wake lets go the reads held for write tid, which every member has
// committed, or which its interval abandoned.
func (h *Holds) Wake(tid uint64) {
	for _, ch := range h.waiters[tid] {
		close(ch)
	}
	delete(h.waiters, tid)
}

// Wait waits until next, called again after each wait, has nothing to
// wait for (nil), and reports true; false if ctx ends first.
func Wait(ctx context.Context, next func() <-chan struct{}) bool {
	for ch := next(); ch != nil; ch = next() {
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
