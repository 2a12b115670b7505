package osd

import (
	"slices"
	"sync"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// This file holds reads from replicas (docs/OSD.md, "Reading from
// replicas"): a client with read_policy balance or score sends a read
// with wire.FlagBalanceReads to any acting member. A replica serves it
// only if what it holds is what the primary would answer for every
// acknowledged write, else it answers ENOTCURRENT and the client asks the
// primary:
//
//   - the primary stamps each rep op with its committed watermark, below
//     which every write of the interval is committed on every member, and
//     only while the PG is clean (activated, nothing to recover): a
//     replica serves an object whose version here is below the watermark
//     of its current interval, which no write in flight can change;
//   - the client names the newest version of the PG it has seen
//     (ReadAtLeast): a replica that has not applied it refuses, so a
//     client reads its own writes, even those a pool in ack primary
//     answered before the replicas had them;
//   - in a pool whose read policy is not primary and whose writes are
//     answered by every member (ack all), the primary holds a read of an
//     object while a write to it is not yet committed by every member,
//     as Ceph's object locks do, so no reader sees a write a replica
//     could still deny (holdReadForCommit).

// replReadState is a PG's state for balanced reads: on a replica, the
// watermark of the interval and what the store has applied; on a
// primary, the reads waiting for writes to commit everywhere.
type replReadState struct {
	// interval is the interval the watermark belongs to; committedBelow
	// the newest watermark the primary sent in it.
	interval       uint64
	committedBelow wire.Version
	// waiters are, by write tid, the reads the primary holds until that
	// write is committed by every member or abandoned.
	waiters map[uint64][]chan struct{}

	// mu guards applied, which the store's engine sets (it must not take
	// the PG lock): the newest rep op version readers see here.
	mu      sync.Mutex
	applied wire.Version
}

// replicaRead is what a replica's PG says about a balanced read, before
// the object is read; refusal is the pure rule.
type replicaRead struct {
	member, primary bool // this OSD is in the acting set, is its primary
	active          bool // the PG went active in its current interval
	clientBehind    bool // the request predates the current interval
	plain           bool // only ops a replica serves, at the head
	missing         bool // the object is in this OSD's missing set
	// watermarkKnown: the watermark is of the current interval and not
	// zero (the primary sends zero while the PG is not clean).
	watermarkKnown bool
	applied        wire.Version // the newest write readers see here
	readAtLeast    wire.Version // the client's, from the request
}

// Reasons a replica refuses a balanced read, as the table test and the
// debug log name them.
const (
	refuseNotMember   = "not in the acting set"
	refuseNotActive   = "PG not active in this interval"
	refuseStaleClient = "request from before the interval"
	refuseNotPlain    = "not a plain read of the head"
	refuseMissing     = "object missing here"
	refuseNoWatermark = "no committed watermark (PG not clean, or no write yet this interval)"
	refuseBehind      = "behind the client's last seen version"
	refuseUncommitted = "object has a write not committed everywhere"
	refuseAbsent      = "object absent here (only the primary answers ENOENT)"
	refuseChanged     = "object changed while read"
)

// refusal returns why a replica refuses the read ("" serves it; a
// primary's "" means: serve it as the primary does).
func (c replicaRead) refusal() string {
	switch {
	case c.primary:
		return ""
	case !c.member:
		return refuseNotMember
	case !c.active:
		return refuseNotActive
	case c.clientBehind:
		return refuseStaleClient
	case !c.plain:
		return refuseNotPlain
	case c.missing:
		return refuseMissing
	case !c.watermarkKnown:
		return refuseNoWatermark
	case c.applied.Less(c.readAtLeast):
		return refuseBehind
	}
	return ""
}

// objectRefusal is the rule once the object was read: the version it had
// before and after the read (equal unless a write applied meanwhile), and
// whether it exists.
func objectRefusal(exists bool, before, after, committedBelow wire.Version) string {
	switch {
	case !exists:
		return refuseAbsent
	case before != after:
		return refuseChanged
	case !after.Less(committedBelow):
		return refuseUncommitted
	}
	return ""
}

// plainRead reports whether a replica may serve ops: reads of object
// data, attributes and omap at the head, which change nothing and need
// nothing only the primary has (watches, class methods, snapshots).
func plainRead(obj objid.ID, list []wire.ObjectOp) bool {
	if obj.Snap != objid.NoSnap || len(list) == 0 {
		return false
	}
	for _, op := range list {
		switch op.Code {
		case wire.OpRead, wire.OpSparseRead, wire.OpStat, wire.OpGetXattr, wire.OpGetXattrs, wire.OpCmpXattr,
			wire.OpOmapGetHeader, wire.OpOmapGetKeys, wire.OpOmapGetVals, wire.OpOmapGetByKeys, wire.OpOmapCmp,
			wire.OpAssertExists, wire.OpAssertVersion:
		default:
			return false
		}
	}
	return true
}

// replicaReadLocked gathers what refusal decides on.
func (p *pg) replicaReadLocked(r *request) replicaRead {
	rr := &p.replRead
	rr.mu.Lock()
	applied := rr.applied
	rr.mu.Unlock()
	interval := p.info.SameIntervalSince
	return replicaRead{
		member:         slices.Contains(p.acting, p.o.cfg.ID),
		primary:        p.isPrimaryLocked(),
		active:         interval > 0 && p.info.LastEpochStarted >= interval,
		clientBehind:   r.op.Epoch < interval,
		plain:          plainRead(r.op.Object, r.op.Ops),
		missing:        p.missing[r.op.Object],
		watermarkKnown: rr.interval == interval && rr.committedBelow != (wire.Version{}),
		applied:        applied,
		readAtLeast:    r.op.ReadAtLeast,
	}
}

// serveBalancedRead serves or refuses a balanced read r of PG p on a
// replica. It reports false when this OSD is the PG's primary: the read
// then goes the primary's way.
func (o *OSD) serveBalancedRead(r *request, p *pg, epoch uint64) bool {
	p.mu.Lock()
	c := p.replicaReadLocked(r)
	watermark := p.replRead.committedBelow
	p.mu.Unlock()
	if c.primary {
		return false
	}
	if why := c.refusal(); why != "" {
		o.refuseBalancedRead(r, p, why, epoch)
		return true
	}
	o.wg.Go(func() { o.readOnReplica(r, p, watermark, epoch) })
	return true
}

// readOnReplica runs a balanced read that passed the PG's rules and
// answers it, or refuses it if the object is not current here.
func (o *OSD) readOnReplica(r *request, p *pg, watermark wire.Version, epoch uint64) {
	before, err := ops.Load(o.ctx, o.cfg.Store, p.coll, r.op.Object, "")
	if err != nil {
		o.refuseBalancedRead(r, p, err.Error(), epoch)
		return
	}
	env := p.env(r, wire.Version{})
	res, err := ops.Execute(o.ctx, env, r.op.Ops)
	if err != nil {
		// A damaged copy here: the primary reads (and repairs) it.
		o.refuseBalancedRead(r, p, err.Error(), epoch)
		return
	}
	after, err := ops.Load(o.ctx, o.cfg.Store, p.coll, r.op.Object, "")
	if err != nil {
		o.refuseBalancedRead(r, p, err.Error(), epoch)
		return
	}
	vb, va := ops.VersionOf(before.Info), ops.VersionOf(after.Info)
	if why := objectRefusal(before.Exists && after.Exists, vb, va, watermark); why != "" {
		if rc, ok := o.cfg.Store.(objectstore.Recycler); ok {
			for _, b := range res.Buffers {
				rc.Recycle(b)
			}
		}
		o.refuseBalancedRead(r, p, why, epoch)
		return
	}
	o.metrics.replicaReads.WithLabelValues("served").Inc()
	rep := wire.OSDOpReply{Epoch: epoch, Result: -res.Code, Flags: wire.ReplyApplied | wire.ReplyCommitted,
		Version: va, Ops: res.Ops}
	r.replyThen(rep, p.recycler(res.Buffers), res.TailCRC)
}

// refuseBalancedRead answers r ENOTCURRENT: the client asks the primary.
func (o *OSD) refuseBalancedRead(r *request, p *pg, why string, epoch uint64) {
	o.metrics.replicaReads.WithLabelValues("refused").Inc()
	o.log.Debug("balanced read refused", "pg", p.id.String(), "object", r.op.Object.String(), "why", why)
	r.replyError(-wire.ENOTCURRENT, epoch)
}

// noteRepOpLocked records, on a replica that queued rep op m with
// completion c, the primary's watermark, and the version readers see
// once c is applied.
func (p *pg) noteRepOpLocked(m *wire.RepOp, last wire.Version, c *objectstore.Completion) {
	rr := &p.replRead
	if rr.interval != m.IntervalStart {
		rr.interval, rr.committedBelow = m.IntervalStart, wire.Version{}
	}
	if rr.committedBelow.Less(m.CommittedBelow) {
		rr.committedBelow = m.CommittedBelow
	}
	c.OnApplied(func() {
		rr.mu.Lock()
		if rr.applied.Less(last) {
			rr.applied = last
		}
		rr.mu.Unlock()
	})
}

// committedWatermarkLocked is the watermark the primary stamps on the rep
// op of a write whose first log entry has version first: below the
// oldest write not yet committed by every member (this one included),
// and zero while the PG is not clean (a member may lack objects).
func (p *pg) committedWatermarkLocked(first wire.Version) wire.Version {
	if !p.activated || p.recovering != "" || p.missingCopies != 0 || len(p.unfound) > 0 {
		return wire.Version{}
	}
	low := first
	for _, w := range p.writes {
		if w.first.Less(low) {
			low = w.first
		}
	}
	return low
}

// holdReadForCommit waits, on the primary, until no write to r's object
// is replicating, if r's pool reads from replicas with ack all (or r is a
// balanced read itself): a reader here must not see a write a replica
// could still deny to the next reader. It returns false if the OSD is
// stopping.
func (p *pg) holdReadForCommit(r *request) bool {
	for {
		p.mu.Lock()
		if p.pool.Ack != osdmap.AckAll || (p.pool.ReadPolicy == osdmap.ReadPrimary && r.op.Flags&wire.FlagBalanceReads == 0) {
			p.mu.Unlock()
			return true
		}
		var wait chan struct{}
		for tid, w := range p.writes {
			if slices.Contains(w.objects, r.op.Object) {
				wait = make(chan struct{})
				if p.replRead.waiters == nil {
					p.replRead.waiters = map[uint64][]chan struct{}{}
				}
				p.replRead.waiters[tid] = append(p.replRead.waiters[tid], wait)
				break
			}
		}
		p.mu.Unlock()
		if wait == nil {
			return true
		}
		r.setState("waiting for replicas to commit")
		select {
		case <-wait:
		case <-p.o.ctx.Done():
			return false
		}
	}
}

// wakeReadersLocked lets go the reads held for write tid, which is
// committed everywhere now or abandoned with its interval.
func (p *pg) wakeReadersLocked(tid uint64) {
	for _, ch := range p.replRead.waiters[tid] {
		close(ch)
	}
	delete(p.replRead.waiters, tid)
}

// firstVersion is the lowest version of entries (not empty).
func firstVersion(entries []pglog.Entry) wire.Version {
	v := wire.Version{Epoch: ^uint64(0), Counter: ^uint64(0)}
	for _, e := range entries {
		if e.Version.Less(v) {
			v = e.Version
		}
	}
	return v
}
