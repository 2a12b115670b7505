package osd

import (
	"context"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/snaps"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Snap trimming (docs/SNAPSHOTS.md; Ceph's snap trimmer): once a pool's
// removed snaps grow past what a PG has trimmed (its info's purged
// snaps), the PG's primary reads the snap index (snapindex.go) for the
// snapshots left to trim, and, for each head whose clones serve one of
// them, runs a trim: an internal write, queued behind the object's client
// ops like any write, that deletes the clones no live snapshot needs
// (each with a delete log entry, so replicas, recovery and backfill
// follow), rewrites the snap set and drops the index entries with it.
// Once every trim of the pass has committed, the PG records the
// snapshots as purged in its info, so neither this OSD after a restart
// nor a new primary (peering carries the record) takes them again. Every
// ScrubCheck the OSD trims its PGs one after another, each with at most
// osd_pg_max_concurrent_snap_trims trims in flight (opq.SnapTrim items,
// which give way to client ops on their objects), each slot resting
// osd_snap_trim_sleep after a trim, as Ceph throttles its trimmer; the
// nosnaptrim flag holds them back.

// opSnapTrim is the op of the OSD's own trim requests. It is no wire op:
// a client that sends its code is refused (snapRefusal).
const opSnapTrim wire.ObjectOpCode = 0xfff0

// trimBatch is how many index keys one read of the store returns.
const trimBatch = 256

// snapTrimLoop trims until the OSD stops.
func (o *OSD) snapTrimLoop() {
	tick := o.cfg.Clock.NewTimer(o.cfg.ScrubCheck)
	defer tick.Stop()
	var tid uint64
	for {
		select {
		case <-tick.C():
			o.trimSnaps(&tid)
			tick.Reset(o.cfg.ScrubCheck)
		case <-o.ctx.Done():
			return
		}
	}
}

// trimSnaps trims every PG this OSD is the active primary of whose pool
// removed snapshots the PG has not purged.
func (o *OSD) trimSnaps(tid *uint64) {
	if m := o.currentMap(); m == nil || m.Flags()&osdmap.FlagNoSnapTrim != 0 {
		return
	}
	o.mu.Lock()
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	o.mu.Unlock()
	slices.SortFunc(pgs, func(a, b *pg) int { return osdmap.ComparePG(a.id, b.id) })
	for _, p := range pgs {
		p.mu.Lock()
		ok := p.isPrimaryLocked() && p.activeLocked()
		work := p.pool.RemovedSnaps.Subtract(p.info.PurgedSnaps)
		since := p.info.SameIntervalSince
		p.mu.Unlock()
		if !ok || len(work) == 0 {
			continue
		}
		o.metrics.snapTrimPasses.Inc()
		n, err := p.trimPG(work, tid)
		if err != nil {
			o.log.Info("snap trim stopped; it goes on later", "pg", p.id.String(), "err", err)
			continue
		}
		if n > 0 {
			o.log.Info("snap trim", "pg", p.id.String(), "objects", n, "snaps", work.String())
		}
		if err := p.recordPurged(work, since); err != nil {
			o.log.Info("snap trim: recording the purged snaps failed; the next pass trims them again", "pg", p.id.String(), "err", err)
		}
	}
}

// recordPurged adds work, whose trims have all committed, to the PG's
// purged snaps and stores the info, unless the interval the pass ran in
// has ended (the next primary decides from what peering gathers). The
// replicas get the record with the PG's next write (every rep op carries
// the primary's info) or activation.
func (p *pg) recordPurged(work osdmap.SnapIntervals, since uint64) error {
	p.mu.Lock()
	if p.info.SameIntervalSince != since || !p.isPrimaryLocked() {
		p.mu.Unlock()
		return nil
	}
	p.info.PurgedSnaps = p.info.PurgedSnaps.Union(work)
	c, err := p.saveInfoLocked()
	replicas, epoch := p.replicasLocked(), p.epoch
	msg := wire.PGInfo{PGInterval: wire.PGInterval{PG: p.id, Epoch: epoch, IntervalStart: since}, Info: p.info.Encode()}.Encode()
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if err := c.Wait(p.o.ctx); err != nil {
		return err
	}
	// The replicas record it too (Ceph's share_pg_info), so that a new
	// primary among them, or this one after a restart, finds the
	// snapshots purged on every member (peering's intersection). One
	// that misses the message gets the record with the next write.
	for _, id := range replicas {
		if err := p.o.sendToOSD(id, msgr.Message{Type: wire.TypePGInfo, Version: 1, Payload: msg}); err != nil {
			p.o.log.Debug("pg info not sent", "pg", p.id.String(), "osd", id, "err", err)
		}
	}
	return nil
}

// takeInfo records the purged snaps of the primary's info (a PGInfo of
// this OSD's interval, from its primary).
func (p *pg) takeInfo(sender int32, m wire.PGInfo) {
	info, err := pglog.DecodeInfo(m.Info)
	if err != nil || info.PG != p.id {
		p.o.log.Warn("bad pg info", "pg", p.id.String(), "from", sender, "err", err)
		return
	}
	p.mu.Lock()
	if sender != p.primary || p.info.SameIntervalSince != m.IntervalStart || p.isPrimaryLocked() {
		p.mu.Unlock()
		return
	}
	p.info.PurgedSnaps = info.PurgedSnaps
	c, err := p.saveInfoLocked()
	p.mu.Unlock()
	if err == nil {
		err = c.Wait(p.o.ctx)
	}
	if err != nil {
		p.o.log.Warn("recording the primary's purged snaps", "pg", p.id.String(), "err", err)
	}
}

// trimHeads returns the heads of the clones that serve the snapshots of
// work, from the PG's snap index, each once, in index order, and how many
// index keys it read.
func trimHeads(ctx context.Context, s objectstore.Store, pg osdmap.PG, work osdmap.SnapIntervals) ([]objid.ID, int, error) {
	var (
		heads []objid.ID
		seen  = map[objid.ID]bool{}
		keys  int
	)
	bad, err := indexScan(ctx, s, pg, work, func(e snaps.IndexEntry) error {
		keys++
		if h := e.Head(); !seen[h] {
			seen[h] = true
			heads = append(heads, h)
		}
		return nil
	})
	return heads, keys + bad, err
}

// trimPG trims each object whose clones serve a snapshot of work, as the
// snap index names them, up to osd_pg_max_concurrent_snap_trims at once,
// each slot resting osd_snap_trim_sleep after its trim; it returns how
// many it trimmed. It stops at the first trim that fails.
func (p *pg) trimPG(work osdmap.SnapIntervals, tid *uint64) (int, error) {
	if err := p.ensureSnapIndex(); err != nil {
		return 0, fmt.Errorf("snap index: %w", err)
	}
	heads, keys, err := trimHeads(p.o.ctx, p.o.cfg.Store, p.id, work)
	p.o.metrics.snapTrimIndexKeys.Add(float64(keys))
	if err != nil {
		return 0, err
	}
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
	for _, head := range heads {
		for inflight >= max(p.o.options().SnapTrimsPerPG, 1) && first == nil {
			collect()
		}
		if first != nil {
			return n, first
		}
		*tid++
		t := *tid
		inflight++
		p.o.metrics.snapTrims.Inc()
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
	for inflight > 0 {
		collect()
	}
	return n, first
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
// and writes the snap set, and the snap index follows); the head, if it
// exists, takes the new version with its modification time unchanged. A
// trim that only drops removed snapshots from clones that still serve
// others rewrites the snap set all the same, so that the snap index
// loses their entries. Nothing left to trim (a trim ran already) changes
// nothing.
func (p *pg) snapTrim(sw *snapWrite, v wire.Version) (*ops.Result, error) {
	res := &ops.Result{Ops: make([]wire.ObjectOpResult, 1), FailedOp: -1}
	if sw == nil || !sw.trims {
		return res, nil
	}
	st := sw.st
	res.Existed, res.SizeBefore, res.Exists, res.Size = st.headExists, st.headSize, st.headExists, st.headSize
	for _, c := range sw.trimmed {
		res.Txn.Remove(p.coll, sw.head.WithSnap(c.ID))
	}
	if !st.headExists && len(sw.trimmed) == 0 {
		// Only the snapdir's snap set changes (finish writes it, and logs
		// the snapdir): the transaction must not look empty.
		res.Txn.SetAttr(p.coll, sw.head.WithSnap(objid.SnapDir), SnapSetAttr, sw.next.Marshal())
	}
	if st.headExists {
		info, _ := ops.DecodeInfo(st.head.Info) // read with the snap set
		info.Version = v
		res.Info = info
		res.Txn.SetAttr(p.coll, sw.head, ops.InfoAttr, info.Encode())
	}
	return res, nil
}
