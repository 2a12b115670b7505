package osd

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/osd/peering"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The driver of the primary's peering. peering.Machine decides what to
// do; peerDriver does it: it sends the messages, reads and writes the
// store (pushed objects, the adopted log, lost objects) and reads the
// past maps, arms the machine's timer on the OSD's clock, and feeds back
// what the OSD hears (the run's queue, filled by handlePeering and by
// mark_unfound_lost) and the answers to its own requests. It decides
// nothing and never waits but for the next event. One goroutine per interval runs it, from
// startPeeringLocked, until the PG is active (and recovered) or the
// interval ends (r.done).

// peerDriver runs one interval's peering machine.
type peerDriver struct {
	p    *pg
	r    *peerRun
	m    *osdmap.Map // the map messages are addressed by; peering moves it forward
	mach *peering.Machine
	// query is the header of the attempt's queries: the map the attempt
	// began with, as the OSDs asked may not have a newer one yet.
	query   wire.PGInterval
	timer   clock.Timer
	timerID peering.TimerID
	// pending are the answers to the driver's own requests, fed before
	// anything the network brings.
	pending []peering.Event
}

// peerUntilActive runs the interval's peering until the PG is active and
// its replicas recovered, or the interval ends.
func (p *pg) peerUntilActive(r *peerRun, m *osdmap.Map) {
	d := &peerDriver{p: p, r: r, m: m, mach: peering.NewMachine()}
	defer d.stopTimer()
	d.pending = append(d.pending, peering.Start{Interval: r.interval})
	for {
		for len(d.pending) > 0 {
			ev := d.pending[0]
			d.pending = d.pending[1:]
			for _, a := range d.mach.Step(ev) {
				if over := d.do(a); over {
					return
				}
			}
		}
		var fired <-chan time.Time
		if d.timer != nil {
			fired = d.timer.C()
		}
		ev, ok, timed := r.next(p.o.ctx, fired)
		switch {
		case timed:
			d.timer = nil
			d.pending = append(d.pending, peering.TimerFired{ID: d.timerID})
		case !ok:
			return
		default:
			if pe := d.event(ev); pe != nil {
				d.pending = append(d.pending, pe)
			}
		}
	}
}

// event translates a message for the run into the machine's terms; the
// rest (acks of pushes, which recovery's own waits take) it drops.
func (d *peerDriver) event(ev peerEvent) peering.Event {
	switch msg := ev.msg.(type) {
	case wire.PGPush:
		return peering.Push{From: ev.from, Interval: msg.IntervalStart, Object: msg.Object, Exists: msg.Exists,
			Version: pushVersion(msg), Body: msg}
	case unfoundLost:
		return peering.MarkedLost{Revert: msg.revert}
	case upThruRecorded:
		return peering.UpThruRecorded{UpThru: msg.epoch}
	case wire.PGNotify:
		mem, err := decodeMember(ev.from, msg.Info, msg.Log)
		if err != nil {
			d.p.o.log.Warn("bad peering report", "pg", d.p.id.String(), "from", ev.from, "err", err)
			return nil
		}
		mem.Missing = msg.Missing
		return peering.Notify{Interval: msg.IntervalStart, Member: mem}
	case wire.PGAck:
		switch {
		case msg.Activate:
			return peering.ActivateAck{From: ev.from, Interval: msg.IntervalStart, Result: msg.Result, Current: msg.Current}
		case msg.Result != 0:
			// An OSD that lacks the object is routine in a search; one
			// that cannot read its copy is worth a warning.
			level := slog.LevelWarn
			if msg.Result == -wire.ENOENT {
				level = slog.LevelDebug
			}
			d.p.o.log.Log(d.p.o.ctx, level, "peering: an OSD cannot supply an object", "pg", d.p.id.String(), "osd", ev.from,
				"object", msg.Object.String(), "errno", -msg.Result)
			return peering.PullRefused{From: ev.from, Interval: msg.IntervalStart, Object: msg.Object, Errno: -msg.Result}
		}
	}
	return nil
}

// applyPush applies a pushed object the machine accepted, and counts
// the copy made.
func (d *peerDriver) applyPush(a peering.ApplyPush) error {
	p := d.p
	push, ok := a.Body.(wire.PGPush)
	if !ok {
		return fmt.Errorf("peering: push of %v carries %T, not a PGPush", a.Object, a.Body)
	}
	if err := p.applyPush(push); err != nil {
		return err
	}
	p.copied()
	switch {
	case a.Revert:
		p.o.log.Warn("peering: reverting an unfound object to an older copy, as an operator asked", "pg", p.id.String(),
			"object", a.Object.String(), "osd", a.From, "version", pushVersion(push).String())
	case a.Search:
		p.o.log.Info("peering: found a good copy outside the acting set", "pg", p.id.String(), "object", a.Object.String(), "osd", a.From)
	}
	return nil
}

// do carries out one action, queueing the event that answers it, if
// any; it reports whether peering is over (done, or the interval ended).
func (d *peerDriver) do(a peering.Action) (over bool) {
	p, r := d.p, d.r
	switch a := a.(type) {
	case peering.LoadLocal:
		if a.NewerMap {
			d.m = p.newerMap(d.m)
		}
		d.query = p.header(r, d.m)
		p.mu.Lock()
		self := peering.Member{OSD: p.o.cfg.ID, Info: p.info, Log: p.log.Entries(),
			Missing: slices.Collect(maps.Keys(p.missing))}
		replicas, size, lose, revert := p.replicasLocked(), p.pool.Size, p.loseUnfound, p.revertUnfound
		p.mu.Unlock()
		d.pending = append(d.pending, peering.Loaded{Self: self, Replicas: replicas, PoolSize: size,
			Up: d.m.IsUp, Lost: lostIn(d.m), MaxOSD: d.m.MaxOSD(), LoseUnfound: lose, Revert: revert, UpThru: p.o.mapUpThru(d.m)})
	case peering.ReadPast:
		past, err := p.o.pastIntervals(p.o.ctx, p.id, a.Since, r.interval)
		if err != nil {
			p.o.log.Warn("peering: cannot read past maps; trying again", "pg", p.id.String(), "err", err)
		}
		for _, iv := range peering.Skipped(past, a.Since) {
			p.o.log.Debug("peering: skipping a past interval that never went read-write (its primary's up_thru is older)",
				"pg", p.id.String(), "interval", iv.String())
		}
		d.pending = append(d.pending, peering.PastRead{Past: past, Err: err})
	case peering.RefreshMap:
		d.m = p.newerMap(d.m)
		d.pending = append(d.pending, peering.MapRefreshed{Up: d.m.IsUp, Lost: lostIn(d.m), MaxOSD: d.m.MaxOSD()})
	case peering.RequestUpThru:
		p.o.wantUpThru(r, a.Want)
	case peering.SendQuery:
		p.sendPeer(d.m, a.To, wire.TypePGQuery, wire.PGQuery{PGInterval: d.query}.Encode())
	case peering.SetTimer:
		d.stopTimer()
		d.timer, d.timerID = p.o.cfg.Clock.NewTimer(a.After), a.ID
	case peering.SetStep:
		p.step(r, a.What)
	case peering.GoDown:
		d.goDown(a.Prior)
	case peering.RequestTemp:
		p.o.log.Info("peering: asking for a temporary acting set", "pg", p.id.String(), "pg_temp", a.Acting)
		d.pending = append(d.pending, peering.TempRequested{Err: p.setTemp(a.Acting)})
	case peering.NoteRecovery:
		d.noteRecovery(a)
	case peering.SendPull:
		if a.Want == (wire.Version{}) {
			p.o.log.Info("peering: pulling", "pg", p.id.String(), "from", a.To, "objects", len(a.Objects))
		} else {
			p.o.log.Debug("peering: searching", "pg", p.id.String(), "osd", a.To, "object", a.Objects[0].String(), "version", a.Want.String())
		}
		pull := wire.PGPull{PGInterval: p.header(r, d.m), Objects: a.Objects, Search: a.Want != (wire.Version{})}
		p.sendPeer(d.m, a.To, wire.TypePGPull, pull.Encode())
	case peering.ApplyPush:
		d.pending = append(d.pending, peering.PushApplied{Object: a.Object, Err: d.applyPush(a)})
	case peering.ReadVersion:
		d.pending = append(d.pending, peering.VersionRead{Object: a.Object, Version: p.storedVersion(a.Object)})
	case peering.CheckCopy:
		d.pending = append(d.pending, peering.CopyChecked{Object: a.Object, Version: p.readableVersion(a.Object)})
	case peering.ReportUnfound:
		p.mu.Lock()
		if p.run == r {
			p.unfound = slices.Clone(a.Objects)
		}
		p.mu.Unlock()
		p.o.statsChanged()
	case peering.Adopt:
		d.pending = append(d.pending, peering.Adopted{Err: p.adopt(a.Info, a.Log, r.interval, nil, nil)})
	case peering.ForgetLost:
		p.o.log.Warn("peering: forgetting unfound objects, as an operator asked", "pg", p.id.String(),
			"deleted", len(a.Objects), "reverted", len(a.Reverted))
		err := p.forgetLost(a.Objects, a.Reverted)
		p.mu.Lock()
		info, log := p.info, p.log.Entries()
		p.mu.Unlock()
		d.pending = append(d.pending, peering.LostForgotten{Info: info, Log: log, Err: err})
	case peering.ListObjects:
		objs, err := p.allObjects()
		vers := make([]wire.Version, len(objs))
		for i, id := range objs {
			vers[i] = p.storedVersion(id)
		}
		d.pending = append(d.pending, peering.ObjectsListed{Objects: objs, Versions: vers, Err: err})
	case peering.SendActivate:
		info := a.Info
		info.PG = p.id
		log := make([][]byte, len(a.Log))
		for i, e := range a.Log {
			log[i] = e.Encode()
		}
		msg := wire.PGActivate{PGInterval: p.header(r, d.m), Info: info.Encode(), Log: log, Backfill: a.Backfill, Missing: a.Missing,
			Versions: a.Versions}
		p.sendPeer(d.m, a.To, wire.TypePGActivate, msg.Encode())
	case peering.Finish:
		err := p.finishPeering(r, a.Plan, a.Missing)
		if errors.Is(err, errIntervalEnded) {
			return true
		}
		d.pending = append(d.pending, peering.Finished{Err: err})
	case peering.Serve:
		// The PG serves I/O from here on; what the replicas lack is
		// pushed behind it.
		if p.recoverReplicas(r) {
			p.releaseStrays(r, d.m, a.Asked)
			p.clearTemp(r, d.m)
		}
		return true
	case peering.Failed:
		p.o.log.Warn("peering failed; trying again", "pg", p.id.String(), "interval", r.interval, "err", a.Err)
	case peering.StartOver:
		p.o.log.Info("peering starts over", "pg", p.id.String(), "interval", r.interval, "why", a.Why)
	default:
		p.o.log.Error("peering: an action the driver does not know", "pg", p.id.String(), "action", fmt.Sprintf("%T", a))
	}
	return false
}

// lostIn reports, for peering, whether m records an OSD declared lost
// after epoch first (`osd lost`).
func lostIn(m *osdmap.Map) func(int32, uint64) bool {
	return func(id int32, first uint64) bool { return m.OSD(id).LostSince(osdmap.Epoch(first)) }
}

func (d *peerDriver) stopTimer() {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
}

// goDown marks the PG down until its interval ends: a write may have
// been acknowledged in a past interval none of whose OSDs is up, and
// serving without it would lose it.
func (d *peerDriver) goDown(prior peering.Prior) {
	p := d.p
	reason := prior.Reason()
	p.mu.Lock()
	if p.run == d.r {
		p.down, p.blockedBy = reason, prior.BlockedBy
	}
	p.mu.Unlock()
	p.o.statsChanged()
	p.o.log.Warn("peering: PG is down", "pg", p.id.String(), "reason", reason)
}

// noteRecovery records how many object copies the plan has to make, for
// the PG's state and degraded count.
func (d *peerDriver) noteRecovery(a peering.NoteRecovery) {
	p := d.p
	p.mu.Lock()
	if p.run == d.r && a.Copies > 0 {
		p.missingCopies, p.recovering = a.Copies, "recovering"
		if a.Backfill {
			p.recovering = "backfilling"
		}
	}
	p.mu.Unlock()
	p.o.statsChanged()
}
