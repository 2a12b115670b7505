package osd

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/osd/snaps"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Snap trimming (docs/SNAPSHOTS.md; Ceph's snap trimmer): once a pool's
// removed snaps grow, the primary of each of its PGs walks the PG's
// objects and, for each head or snapdir whose snap set has clones serving
// removed snapshots, runs a trim: an internal write, queued behind the
// object's client ops like any write, that deletes the clones no live
// snapshot needs (each with a delete log entry, so replicas, recovery and
// backfill follow) and rewrites the snap set. Every ScrubCheck the OSD
// trims its PGs one after another, each with at most
// osd_pg_max_concurrent_snap_trims trims in flight (opq.SnapTrim items,
// which give way to client ops on their objects), each slot resting
// osd_snap_trim_sleep after a trim, as Ceph throttles its trimmer; the
// nosnaptrim flag holds them back.

// opSnapTrim is the op of the OSD's own trim requests. It is no wire op:
// a client that sends its code is refused (snapRefusal).
const opSnapTrim wire.ObjectOpCode = 0xfff0

// trimBatch is how many objects one listing of a PG's collection reads.
const trimBatch = 256

// snapTrimLoop trims until the OSD stops. trimmed remembers, per PG and
// interval, the removed snaps the PG was last trimmed to, so that a PG is
// walked again only when the pool removes more.
func (o *OSD) snapTrimLoop() {
	tick := o.cfg.Clock.NewTimer(o.cfg.ScrubCheck)
	defer tick.Stop()
	trimmed := map[trimKey]osdmap.SnapIntervals{}
	var tid uint64
	for {
		select {
		case <-tick.C():
			o.trimSnaps(trimmed, &tid)
			tick.Reset(o.cfg.ScrubCheck)
		case <-o.ctx.Done():
			return
		}
	}
}

// trimKey names a PG in one interval: a new interval (a new primary,
// perhaps this OSD again after others) walks it anew.
type trimKey struct {
	pg    osdmap.PG
	since uint64
}

// trimSnaps trims every PG this OSD is the active primary of whose pool
// removed snapshots since the PG was last trimmed.
func (o *OSD) trimSnaps(trimmed map[trimKey]osdmap.SnapIntervals, tid *uint64) {
	if m := o.currentMap(); m == nil || m.Flags()&osdmap.FlagNoSnapTrim != 0 {
		return
	}
	o.mu.Lock()
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	o.mu.Unlock()
	live := map[trimKey]bool{}
	for _, p := range pgs {
		p.mu.Lock()
		key := trimKey{pg: p.id, since: p.info.SameIntervalSince}
		ok := p.isPrimaryLocked() && p.activeLocked() && len(p.pool.RemovedSnaps) > 0
		removed := p.pool.RemovedSnaps
		p.mu.Unlock()
		live[key] = true
		if !ok || slices.Equal(trimmed[key], removed) {
			continue
		}
		n, err := p.trimPG(removed, tid)
		if err != nil {
			o.log.Info("snap trim stopped; it goes on later", "pg", p.id.String(), "err", err)
			continue
		}
		if n > 0 {
			o.log.Info("snap trim", "pg", p.id.String(), "objects", n, "removed_snaps", removed.String())
		}
		trimmed[key] = removed
	}
	for k := range trimmed {
		if !live[k] {
			delete(trimmed, k)
		}
	}
}

// trimPG walks the PG's objects and trims each whose snap set has clones
// serving removed snapshots, up to osd_pg_max_concurrent_snap_trims of
// them at once, each slot resting osd_snap_trim_sleep after its trim; it
// returns how many it trimmed. It stops at the first trim that fails.
func (p *pg) trimPG(removed osdmap.SnapIntervals, tid *uint64) (int, error) {
	var (
		n, inflight int
		first       error
		results     = make(chan error)
	)
	collect := func() {
		err := <-results
		inflight--
		if err == nil {
			n++
		} else if first == nil {
			first = err
		}
	}
	defer func() {
		for inflight > 0 {
			collect()
		}
	}()
	cursor := objid.ID{}
	for {
		objs, next, err := p.o.cfg.Store.ListObjects(p.o.ctx, p.coll, cursor, trimBatch)
		if err != nil {
			return n, err
		}
		for _, id := range objs {
			if id.Snap != objid.NoSnap && id.Snap != objid.SnapDir {
				continue // a clone: its head or snapdir says what it serves
			}
			b, err := p.o.cfg.Store.GetAttr(p.o.ctx, p.coll, id, SnapSetAttr)
			if errors.Is(err, objectstore.ErrNoAttr) || errors.Is(err, objectstore.ErrNotFound) {
				continue
			} else if err != nil {
				return n, err
			}
			ss, err := snaps.Unmarshal(b)
			if err != nil || !ss.Trimmable(removed.Contains) {
				continue // a damaged snap set is scrub's to find
			}
			for inflight >= max(p.o.options().SnapTrimsPerPG, 1) && first == nil {
				collect()
			}
			if first != nil {
				return n, first
			}
			*tid++
			head, t := id.WithSnap(objid.NoSnap), *tid
			inflight++
			// Not spawn: it skips f once the OSD stops, and collect
			// waits for every result (trimObject ends with the OSD).
			p.o.wg.Go(func() {
				err := p.trimObject(head, t)
				if rest := p.o.options().SnapTrimSleep; err == nil && rest > 0 {
					timer := p.o.cfg.Clock.NewTimer(rest)
					select {
					case <-timer.C():
					case <-p.o.ctx.Done():
					}
					timer.Stop()
				}
				results <- err
			})
		}
		if next.IsMax() || len(objs) == 0 {
			for inflight > 0 {
				collect()
			}
			return n, first
		}
		cursor = next
	}
}

// trimObject runs one trim of head's object through the PG's write path
// and waits until it is committed on every member (or fails).
func (p *pg) trimObject(head objid.ID, tid uint64) error {
	done := make(chan int32, 1)
	p.mu.Lock()
	epoch := p.epoch
	p.mu.Unlock()
	r := &request{o: p.o, write: true, class: opq.SnapTrim,
		op: wire.OSDOp{Req: wire.ReqID{Client: p.o.self.String(), Incarnation: p.o.nonce, Tid: tid}, Epoch: epoch,
			PG: p.id, Object: head, Ops: []wire.ObjectOp{{Code: opSnapTrim}}},
		internal: func(rep wire.OSDOpReply) {
			if rep.Flags&wire.ReplyCommitted != 0 || rep.Result != 0 {
				select {
				case done <- rep.Result:
				default:
				}
			}
		}}
	r.setState("snap trim")
	p.enqueue(r)
	timeout := p.o.cfg.Clock.NewTimer(p.o.cfg.ScrubCheck)
	defer timeout.Stop()
	select {
	case res := <-done:
		if res != 0 {
			return fmt.Errorf("trim of %v: %s", head, wire.ErrnoName(res))
		}
		return nil
	case <-timeout.C():
		return fmt.Errorf("trim of %v: no answer in %v (the PG's interval changed?)", head, p.o.cfg.ScrubCheck)
	case <-p.o.ctx.Done():
		return p.o.ctx.Err()
	}
}

// snapTrim executes a trim as version v of the head: the transaction
// removes the clones sw found no live snapshot needs (finish logs them
// and writes the snap set); the head, if it exists, takes the new
// version with its modification time unchanged. Nothing left to trim (a
// trim ran already) changes nothing.
func (p *pg) snapTrim(sw *snapWrite, v wire.Version) (*ops.Result, error) {
	res := &ops.Result{Ops: make([]wire.ObjectOpResult, 1), FailedOp: -1}
	if sw == nil || len(sw.trimmed) == 0 {
		return res, nil
	}
	st := sw.st
	res.Existed, res.SizeBefore, res.Exists, res.Size = st.headExists, st.headSize, st.headExists, st.headSize
	for _, c := range sw.trimmed {
		res.Txn.Remove(p.coll, sw.head.WithSnap(c.ID))
	}
	if st.headExists {
		info, _ := ops.DecodeInfo(st.head.Info) // read with the snap set
		info.Version = v
		res.Info = info
		res.Txn.SetAttr(p.coll, sw.head, ops.InfoAttr, info.Encode())
	}
	return res, nil
}
