package osd

import (
	"slices"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/osdmap"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/replread"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// serveBalancedRead serves or refuses, on a replica, a read r of PG p
// sent with wire.FlagBalanceReads (internal/osd/replread decides). It
// reports false when this OSD is p's primary: r goes the primary's way.
func (o *OSD) serveBalancedRead(r *request, p *pg, epoch uint64) bool {
	p.mu.Lock()
	c := replread.Check{Member: slices.Contains(p.acting, o.cfg.ID), Primary: p.isPrimaryLocked(),
		Interval: p.info.SameIntervalSince, Started: p.info.LastEpochStarted, Missing: p.missing[r.op.Object], Op: &r.op}
	p.mu.Unlock()
	if c.Primary {
		return false
	}
	o.wg.Go(func() {
		res, v, why, err := replread.Serve(o.ctx, c, p.replRead.State(), p.env(r, wire.Version{}))
		if why != "" || err != nil {
			o.metrics.replicaReads.WithLabelValues("refused").Inc()
			o.log.Debug("balanced read refused", "pg", p.id.String(), "object", r.op.Object.String(), "why", why, "err", err)
			r.replyError(-wire.ENOTCURRENT, epoch)
			return
		}
		o.metrics.replicaReads.WithLabelValues("served").Inc()
		r.replyThen(wire.OSDOpReply{Epoch: epoch, Result: -res.Code, Flags: wire.ReplyApplied | wire.ReplyCommitted,
			Version: v, Ops: res.Ops}, p.recycler(res.Buffers), res.TailCRC)
	})
	return true
}

// committedWatermarkLocked is the watermark of a rep op with log entries
// entries (replread.Watermark).
func (p *pg) committedWatermarkLocked(entries []pglog.Entry) wire.Version {
	clean := p.activated && p.recovering == "" && p.missingCopies == 0 && len(p.unfound) == 0
	return replread.Watermark(clean, func(yield func(wire.Version) bool) {
		for _, e := range entries {
			yield(e.Version)
		}
		for _, w := range p.writes {
			yield(w.first)
		}
	})
}

// holdReadForCommit waits, on the primary, while a write to read r's
// object is not committed by every member, if replread.HoldsReads says
// so. It returns false if the OSD is stopping.
func (p *pg) holdReadForCommit(r *request) bool {
	return replread.Wait(p.o.ctx, func() <-chan struct{} {
		p.mu.Lock()
		defer p.mu.Unlock()
		for tid, w := range p.writes {
			if replread.HoldsReads(&p.pool, r.op.Flags) && slices.Contains(w.objects, r.op.Object) {
				return p.readHolds.Add(tid)
			}
		}
		return nil
	})
}

// armIdleWatermarkLocked, on the primary, notes that every member
// committed a write whose last log entry is last and, once no write is
// in flight, (re)starts the timer of sendIdleWatermark.
func (p *pg) armIdleWatermarkLocked(last wire.Version) {
	p.idleMark.Committed(p.info.SameIntervalSince, last)
	switch {
	case len(p.writes) > 0 || len(p.acting) < 2 || p.pool.Type == osdmap.PoolErasure: // busy, no replica, or no replica reads
	case p.idleTimer == nil:
		p.idleTimer = p.o.cfg.Clock.AfterFunc(replread.IdleDelay, p.sendIdleWatermark)
	default:
		p.idleTimer.Reset(replread.IdleDelay)
	}
}

// sendIdleWatermark sends the replicas the watermark above the PG's last
// write (wire.RepIdle) if replread.Idle says one is due: the PG still
// idle and clean, its last_update a write every member committed. The
// message goes under the PG's lock, after the interval's rep ops on each
// replica's session.
func (p *pg) sendIdleWatermark() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clean := p.activated && p.recovering == "" && p.missingCopies == 0 && len(p.unfound) == 0
	w, ok := p.idleMark.Due(p.info.SameIntervalSince, clean && p.isPrimaryLocked(), len(p.writes), p.info.LastUpdate)
	if !ok || p.o.ctx.Err() != nil {
		return
	}
	msg := wire.RepIdle{PG: p.id, Epoch: p.epoch, IntervalStart: p.info.SameIntervalSince, CommittedBelow: w}.Encode()
	for _, id := range p.replicasLocked() {
		if err := p.o.sendToOSD(id, msgr.Message{Type: wire.TypeRepIdle, Version: 1, Payload: msg}); err != nil {
			p.o.log.Debug("idle watermark not sent", "pg", p.id.String(), "osd", id, "err", err)
		}
	}
	p.o.metrics.idleWatermarks.Inc()
}

// handleRepIdle takes, on a replica, its primary's idle watermark for
// the interval the PG is in (others are stale, and dropped).
func (o *OSD) handleRepIdle(from msgr.Peer, m wire.RepIdle) {
	p, _ := o.lookupPG(m.PG)
	sender, ok := osdID(from.Name.String())
	if p == nil || !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if sender == p.primary && !p.isPrimaryLocked() && m.IntervalStart == p.info.SameIntervalSince {
		p.replRead.NoteWatermark(m.IntervalStart, m.CommittedBelow)
	}
}
