package osd

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/osd/peering"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The driver of the primary's peering. peering.Machine decides what to
// do; peerDriver does it: it sends the messages, reads the store and the
// past maps, arms the machine's timer on the OSD's clock, and feeds back
// what the OSD hears (the run's queue, filled by handlePeering) and the
// answers to its own requests. One goroutine per interval runs it, from
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
// rest (pushes and acks for a pull, which arrived too late) it drops.
func (d *peerDriver) event(ev peerEvent) peering.Event {
	switch msg := ev.msg.(type) {
	case wire.PGNotify:
		mem, err := decodeMember(ev.from, msg.Info, msg.Log)
		if err != nil {
			d.p.o.log.Warn("bad peering report", "pg", d.p.id.String(), "from", ev.from, "err", err)
			return nil
		}
		mem.Missing = msg.Missing
		return peering.Notify{Interval: msg.IntervalStart, Member: mem}
	case wire.PGAck:
		if msg.Activate {
			return peering.ActivateAck{From: ev.from, Interval: msg.IntervalStart, Result: msg.Result}
		}
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
		replicas, size := p.replicasLocked(), p.pool.Size
		p.mu.Unlock()
		d.pending = append(d.pending, peering.Loaded{Self: self, Replicas: replicas, PoolSize: size, Up: d.m.IsUp})
	case peering.ReadPast:
		past, err := p.o.pastIntervals(p.o.ctx, p.id, a.Since, r.interval)
		if err != nil {
			p.o.log.Warn("peering: cannot read past maps; trying again", "pg", p.id.String(), "err", err)
		}
		d.pending = append(d.pending, peering.PastRead{Past: past, Err: err})
	case peering.RefreshMap:
		d.m = p.newerMap(d.m)
		d.pending = append(d.pending, peering.MapRefreshed{Up: d.m.IsUp})
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
	case peering.CompleteSelf:
		plan, missing, err := d.completeSelf(a)
		if errors.Is(err, errIntervalEnded) {
			return true
		}
		d.pending = append(d.pending, peering.SelfCompleted{Plan: plan, Missing: missing, Err: err})
	case peering.SendActivate:
		info := a.Info
		info.PG = p.id
		log := make([][]byte, len(a.Log))
		for i, e := range a.Log {
			log[i] = e.Encode()
		}
		msg := wire.PGActivate{PGInterval: p.header(r, d.m), Info: info.Encode(), Log: log, Backfill: a.Backfill, Missing: a.Missing}
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

// completeSelf brings this OSD to the plan's history and lists what each
// replica lacks (the objects marked lost included: the history now ends
// with their removal).
func (d *peerDriver) completeSelf(a peering.CompleteSelf) (peering.Result, map[int32][]objid.ID, error) {
	p, r, m, plan := d.p, d.r, d.m, a.Plan
	self := p.o.cfg.ID
	// fetch replaces this OSD's copy of an object with a good one from
	// another OSD (its own could not be read, or the one it asked could
	// not read its copy).
	fetch := func(id objid.ID, exclude ...int32) error {
		return p.fetchGood(r, m, id, upToDate(plan, a.Members, id, append(exclude, self)...), p.authVersion(plan, id))
	}
	lost, err := p.completeSelf(r, m, plan, fetch)
	if err != nil {
		return plan, nil, err
	}
	if len(lost) > 0 {
		p.mu.Lock()
		plan.Info, plan.Log = p.info, p.log.Entries()
		p.mu.Unlock()
	}
	missing, err := p.replicaMissing(plan, a.Replicas)
	if err != nil {
		return plan, nil, err
	}
	for _, x := range a.Replicas {
		missing[x] = append(slices.Clone(missing[x]), lost...)
	}
	return plan, missing, nil
}
