package osd

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/osd/peering"
	"github.com/cuttlestore/cuttle/internal/osd/recovery"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// Recovery behind client I/O. A PG goes active as soon as its primary
// holds the authoritative copy of every object and every member has
// adopted the authoritative log; each member then remembers, with its
// log, the objects it still lacks (its missing set), and the primary
// pushes them in the background. A write to an object some member lacks
// pushes that object first (it jumps the queue): a replica applies a
// write's transaction to its own copy, which must be current. Reads are
// served by the primary, whose copies are all current.
//
// Recovery is throttled per OSD: at most RecoveryMaxPGs of the PGs it is
// primary of recover at once (the others wait, shown recovery_wait or
// backfill_wait), each with at most RecoveryMaxPushes objects in flight,
// each slot resting RecoverySleep after a push. The three are Options,
// which may change while PGs recover (options.go, slots.go).
//
// What to push next, and to whom, is the interval's recovery.Plan's
// decision (pg.recPlan, used under p.mu); this file is its driver: it
// holds the slots, sends the pushes, waits for the acknowledgements, and
// keeps the channels ops wait on while an object is pushed
// (pg.recoveringObj).

// recoveryIdle is how long recovery waits before pushing again an object
// whose push failed.
const recoveryIdle = time.Second

// notePeerMissingLocked records what each replica lacks once the PG is
// active, for the recoverer and the PG's state.
func (p *pg) notePeerMissingLocked(plan peering.Result, missing map[int32][]objid.ID) {
	p.recPlan = recovery.New(missing, plan.Backfill)
	p.recPlan.SetFull(p.backfillFull)
	p.missingCopies, p.recovering = p.recPlan.Copies(), ""
	if p.missingCopies > 0 {
		p.recovering = "recovery_wait"
		if p.recPlan.Backfilling() {
			p.recovering = "backfill_wait"
		}
	}
}

// recoverReplicas pushes to the replicas what they lack, a window at a
// time, once the OSD grants the PG a recovery slot. It returns true once
// every member is complete, false if the interval ended first.
func (p *pg) recoverReplicas(r *peerRun) bool {
	p.mu.Lock()
	todo := p.recPlan.Pending()
	p.mu.Unlock()
	if !todo {
		return true
	}
	p.o.statsChanged()
	if !p.o.recoverySlots.acquire(r.done, p.o.ctx.Done()) {
		return false
	}
	defer p.o.recoverySlots.release()
	p.mu.Lock()
	if p.run == r {
		if p.recovering == "backfill_wait" {
			p.recovering = "backfilling"
		} else {
			p.recovering = "recovering"
		}
	}
	p.mu.Unlock()
	p.o.statsChanged()
	p.o.log.Info("recovery: pushing behind client I/O", "pg", p.id.String(), "copies", p.missingCount())

	window := newSlots(p.o.options().RecoveryMaxPushes)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		window.setLimit(p.o.options().RecoveryMaxPushes) // osd_recovery_max_active may change
		if !window.acquire(r.done, p.o.ctx.Done()) {
			return false
		}
		id, targets, ch, why := p.claimNext(r)
		if why != recovery.Push {
			window.release()
			if why == recovery.Unfound {
				p.stuckUnfound(r)
				return false
			}
			if why == recovery.Done {
				done, ended := p.recoveryDone(r)
				if done || ended {
					return done
				}
				continue
			}
			// What is left is being pushed, held by client ops, or waits
			// for a map that clears backfillfull (pg.advance kicks).
			select {
			case <-p.recoveryKick:
			case <-r.done:
				return false
			case <-p.o.ctx.Done():
				return false
			}
			continue
		}
		wg.Go(func() {
			defer window.release()
			err := p.recoverObject(r, id, targets)
			if err != nil && !errors.Is(err, errIntervalEnded) && !errors.Is(err, errUnfound) {
				p.o.log.Warn("recovery: push failed; will try again", "pg", p.id.String(), "object", id.String(), "err", err)
				p.idle(r)
			}
			if err != nil {
				targets = nil // still missing: the next round of the queue has it
			}
			p.releaseObject(id, ch, targets)
			if sleep := p.o.options().RecoverySleep; err == nil && sleep > 0 {
				p.rest(r, sleep)
			}
		})
	}
}

func (p *pg) missingCount() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.missingCopies
}

// idle waits recoveryIdle, and reports false if the interval ended.
func (p *pg) idle(r *peerRun) bool { return p.rest(r, recoveryIdle) }

// rest waits d, and reports false if the interval ended.
func (p *pg) rest(r *peerRun, d time.Duration) bool {
	timer := p.o.cfg.Clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C():
		return true
	case <-r.done:
		return false
	case <-p.o.ctx.Done():
		return false
	}
}

// recoveryDone reports whether no member lacks anything, and whether the
// interval ended.
func (p *pg) recoveryDone(r *peerRun) (done, ended bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run != r {
		return false, true
	}
	if p.recPlan.Pending() {
		return false, false
	}
	p.recovering, p.missingCopies = "", 0
	p.o.statsChanged()
	p.o.log.Info("recovery: every member is complete", "pg", p.id.String())
	return true, false
}

// claimNext claims the next object to push and its targets (the
// interval's recovery.Plan decides: in object order, skipping objects
// client ops hold or a push holds, and backfillfull backfill targets).
// why says, if there is none, whether to wait or check for completion.
func (p *pg) claimNext(r *peerRun) (id objid.ID, targets []int32, ch chan struct{}, why recovery.Why) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run != r {
		return id, nil, nil, recovery.Done // recoveryDone sees the interval ended
	}
	held := func(o objid.ID) bool { return !p.queue.Free(o, opq.Recovery) || p.recoveringObj[o] != nil }
	id, targets, why = p.recPlan.Next(held)
	if why == recovery.Push {
		ch = make(chan struct{})
		p.recoveringObj[id] = ch
	}
	return id, targets, ch, why
}

// releaseObject ends the push of id: the members in recovered have it
// now; ops waiting for it go on.
func (p *pg) releaseObject(id objid.ID, ch chan struct{}, recovered []int32) {
	p.mu.Lock()
	p.missingCopies = max(p.missingCopies-p.recPlan.Finish(id, recovered), 0)
	if p.recoveringObj[id] == ch {
		delete(p.recoveringObj, id)
	}
	p.mu.Unlock()
	close(ch)
	p.kickRecovery()
	if len(recovered) > 0 {
		p.o.statsChanged()
	}
}

// kickRecovery wakes the recoverer if it waits for a held object.
func (p *pg) kickRecovery() {
	select {
	case p.recoveryKick <- struct{}{}:
	default:
	}
}

// recoverFirst makes sure every member holds id before a write to it
// runs: it pushes id now if some member lacks it, or waits for the push
// under way. It returns false if the interval ended.
func (p *pg) recoverFirst(id objid.ID) bool {
	for {
		p.mu.Lock()
		r := p.run
		if r == nil || !p.activated {
			p.mu.Unlock()
			return true // checkLocked refuses or parks the op
		}
		if ch := p.recoveringObj[id]; ch != nil {
			p.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-r.done:
				return false
			case <-p.o.ctx.Done():
				return false
			}
		}
		if p.recPlan.IsUnfound(id) {
			p.mu.Unlock()
			return p.waitInterval(r) // checkLocked parks the op once it is resent
		}
		targets, ok := p.recPlan.Urgent(id)
		if !ok {
			// The plan has id in flight without a push here to wait for
			// (the two go together: not expected); look again later.
			p.mu.Unlock()
			if !p.idle(r) {
				return false
			}
			continue
		}
		if len(targets) == 0 {
			p.mu.Unlock()
			return true
		}
		ch := make(chan struct{})
		p.recoveringObj[id] = ch
		p.mu.Unlock()
		p.o.metrics.priorityRecoveries.Inc()
		err := p.recoverObject(r, id, targets)
		if errors.Is(err, errUnfound) {
			p.releaseObject(id, ch, nil)
			return p.waitInterval(r)
		}
		if err != nil {
			p.o.log.Warn("recovery: push before a write failed; trying again", "pg", p.id.String(), "object", id.String(), "err", err)
			p.releaseObject(id, ch, nil)
			if !p.idle(r) {
				return false
			}
			continue
		}
		p.releaseObject(id, ch, targets)
	}
}

// recoverObject pushes this OSD's copy of id to targets and waits until
// each has committed it. A copy here that cannot be read is first
// replaced from a replica that holds it.
func (p *pg) recoverObject(r *peerRun, id objid.ID, targets []int32) error {
	push, err := p.objectState(id)
	if errors.Is(err, objectstore.ErrCorrupt) && p.repairFromReplica(id, err) {
		push, err = p.objectState(id)
	}
	if errors.Is(err, objectstore.ErrCorrupt) {
		return p.noteUnfound(r, id, err)
	}
	if err != nil {
		return err
	}
	push.PGInterval = p.intervalHeader(r)
	keys := make([]waitKey, len(targets))
	for i, x := range targets {
		keys[i] = waitKey{typ: wire.TypePGAck, from: x, object: id}
	}
	c, done := p.await(keys...)
	defer done()
	msg := msgr.Message{Type: wire.TypePGPush, Version: 1, Payload: push.Encode()}
	for _, x := range targets {
		if err := p.o.sendToOSD(x, msg); err != nil {
			return err
		}
	}
	waiting := map[int32]bool{}
	for _, x := range targets {
		waiting[x] = true
	}
	for len(waiting) > 0 {
		ev, err := p.receive(r, c, peerAnswerWait)
		if errors.Is(err, errScrubTimeout) {
			return fmt.Errorf("osd %v did not acknowledge the push: %w", slices.Sorted(maps.Keys(waiting)), errNoAnswer)
		}
		if err != nil {
			return err
		}
		if ack := ev.msg.(wire.PGAck); ack.Result != 0 {
			return fmt.Errorf("osd.%d could not take %v: errno %d", ev.from, id, -ack.Result)
		}
		delete(waiting, ev.from)
	}
	p.o.metrics.recoveredObjects.Add(float64(len(targets)))
	return nil
}
