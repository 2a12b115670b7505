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
	"github.com/cuttlestore/cuttle/internal/osd/reserve"
	"github.com/cuttlestore/cuttle/internal/osd/slots"
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
// primary of recover at once, and each member receives the pushes of at
// most its own RecoveryMaxPGs PGs (reservations.go; the others wait,
// shown recovery_wait or backfill_wait), each with at most
// RecoveryMaxPushes objects in flight,
// each slot resting RecoverySleep after a push. The three are Options,
// which may change while PGs recover (options.go, internal/osd/slots).
//
// Each push is an item of the PG's op queue (opqueue.go), class
// Recovery, on its object's key: a client op to the object queues behind
// a push that runs, and goes ahead of one that has not started. What to
// push next, and to whom, is the interval's recovery.Plan's decision
// (pg.recPlan, used under p.mu), skipping objects with items queued;
// this file is its driver: it holds the slots, queues the pushes, sends
// them, and waits for the acknowledgements.

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
	if !todo && p.recoverer == r {
		p.recoverer = nil
	}
	p.mu.Unlock()
	if !todo {
		return true
	}
	p.o.statsChanged()
	// Reservations (reservations.go): a slot here, then one on each
	// member to push to; the PG shows recovery_wait or backfill_wait
	// until all are granted.
	k := resKey{p.id, r.interval}
	prio, backfill, targets := p.recoveryReservation()
	if !p.o.res.acquireLocal(k, prio, r.done, p.o.ctx.Done()) {
		return false
	}
	defer p.o.res.releaseLocal(k)
	defer p.releaseMembers(r)
	if !p.reserveMembers(r, targets, prio, backfill) {
		return false
	}
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

	window := slots.New(p.o.options().RecoveryMaxPushes)
	// pushes counts the pushes queued and not finished: the PG keeps its
	// recovery slot until they are.
	var pushes sync.WaitGroup
	defer pushes.Wait()
	finished := func(err error) {
		rest := time.Duration(0)
		switch {
		case err == nil:
			rest = p.o.options().RecoverySleep
		case !errors.Is(err, errIntervalEnded) && !errors.Is(err, errUnfound):
			rest = recoveryIdle
		}
		if rest <= 0 {
			window.Release()
			pushes.Done()
			return
		}
		p.o.spawn(func() {
			p.rest(r, rest)
			window.Release()
			pushes.Done()
		})
	}
	for {
		window.SetLimit(p.o.options().RecoveryMaxPushes) // osd_recovery_max_active may change
		if !window.Acquire(r.done, p.o.ctx.Done()) {
			return false
		}
		pushes.Add(1)
		j, start, why := p.claimNext(r, finished)
		if why != recovery.Push {
			window.Release()
			pushes.Done()
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
		if start {
			p.o.wg.Go(func() { p.runKey(objectKey(j.id), j) })
		}
	}
}

// recoveryReservation returns the priority of the PG's recovery
// (internal/osd/reserve's Priority), whether it backfills, and the
// members it will push to, in order.
func (p *pg) recoveryReservation() (prio int, backfill bool, targets []int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	backfill = p.recPlan.Backfilling()
	prio = reserve.Priority(backfill, p.degradedLocked() > 0, p.pool.Size-len(p.acting))
	return prio, backfill, slices.DeleteFunc(p.recPlan.Lacking(), func(x int32) bool { return x == p.o.cfg.ID })
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
	p.recoverer = nil
	p.recovering, p.missingCopies = "", 0
	p.o.statsChanged()
	p.o.log.Info("recovery: every member is complete", "pg", p.id.String())
	return true, false
}

// pushJob is the push of an object to the members that lack it, an
// item of the PG's op queue on the object's key.
type pushJob struct {
	r       *peerRun
	id      objid.ID
	targets []int32
	// finished, if not nil, is called once the push ended (err nil: the
	// targets have the object) or was cut from the queue; it must not
	// block. The recoverer gives back the push's window slot there.
	finished func(err error)
	err      error
}

// abandon ends a push that will not run: its interval ended.
func (j *pushJob) abandon(uint64) {
	if j.finished != nil {
		j.finished(errIntervalEnded)
	}
}

// claimNext claims the next object to push and its targets (the
// interval's recovery.Plan decides: in object order, skipping objects
// with items in the op queue, client ops or pushes, and backfillfull
// backfill targets) and queues its push; start says whether the push
// starts now (the caller runs it: runKey). Today's policy starts every
// push at once: its object had nothing queued. why says, if there is
// nothing to push, whether to wait or check for completion.
func (p *pg) claimNext(r *peerRun, finished func(error)) (j *pushJob, start bool, why recovery.Why) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run != r {
		return nil, false, recovery.Done // recoveryDone sees the interval ended
	}
	held := func(o objid.ID) bool { return p.queue.Busy(objectKey(o)) }
	id, targets, why := p.recPlan.Next(held)
	if why != recovery.Push {
		return nil, false, why
	}
	j = &pushJob{r: r, id: id, targets: targets, finished: finished}
	return j, p.queue.Add(objectKey(id), opq.Recovery, opq.CostOf(p.objectSizeLocked()), j), why
}

// objectSizeLocked is the average size of the PG's objects: what a push
// is expected to carry, its cost in the op queue.
func (p *pg) objectSizeLocked() int {
	if p.info.Stats.Objects <= 0 || p.info.Stats.Bytes <= 0 {
		return 0
	}
	return int(p.info.Stats.Bytes / p.info.Stats.Objects)
}

// runPush pushes j's object to those of its targets that still lack it
// (a client write may have pushed it while the push waited in the queue)
// and records what it made.
func (p *pg) runPush(j *pushJob) error {
	p.mu.Lock()
	if p.run != j.r {
		p.mu.Unlock()
		return errIntervalEnded
	}
	lacking := p.recPlan.MissingOn(j.id)
	targets := slices.DeleteFunc(slices.Clone(j.targets), func(x int32) bool { return !slices.Contains(lacking, x) })
	p.mu.Unlock()
	var err error
	if len(targets) > 0 {
		err = p.recoverObject(j.r, j.id, targets)
	}
	if err != nil {
		if !errors.Is(err, errIntervalEnded) && !errors.Is(err, errUnfound) {
			p.o.log.Warn("recovery: push failed; will try again", "pg", p.id.String(), "object", j.id.String(), "err", err)
		}
		targets = nil // still missing: the next round of the plan has it
	}
	p.finishPush(j.r, j.id, targets)
	return err
}

// finishPush ends the push of id in run r's interval: the members in
// recovered have it now.
func (p *pg) finishPush(r *peerRun, id objid.ID, recovered []int32) {
	p.mu.Lock()
	if p.run == r {
		p.missingCopies = max(p.missingCopies-p.recPlan.Finish(id, recovered), 0)
	}
	p.mu.Unlock()
	p.kickRecovery()
	if len(recovered) > 0 {
		p.o.statsChanged()
	}
}

// replicaRefusedLocked notes that member x's store refused a write to
// ids in this interval (it answered rejectedRepOp, having logged the
// write with ids missing): x lacks them from now on, so they join the
// interval's recovery plan and are pushed to it without waiting for the
// next peering, and client writes to them push them first
// (recoverFirst). It returns the run to start a recoverer for, if none
// is due or running (nil otherwise, or if the PG is not active). The
// caller holds p.mu.
func (p *pg) replicaRefusedLocked(x int32, ids []objid.ID) *peerRun {
	if p.run == nil || !p.activated || x == p.o.cfg.ID || !slices.Contains(p.acting, x) {
		return nil
	}
	n := p.recPlan.AddMissing(x, ids...)
	if n == 0 {
		return nil
	}
	p.o.log.Warn("recovery: a replica refused a write; pushing its objects to it", "pg", p.id.String(),
		"osd", x, "objects", len(ids))
	p.missingCopies += n
	if p.recovering == "" {
		p.recovering = "recovery_wait"
	}
	p.kickRecovery()
	if p.recoverer == p.run {
		return nil
	}
	p.recoverer = p.run
	return p.run
}

// kickRecovery wakes the recoverer if it waits for a held object.
func (p *pg) kickRecovery() {
	select {
	case p.recoveryKick <- struct{}{}:
	default:
	}
}

// recoverFirst makes sure every member holds every object a write to
// head may touch before the write runs, pushing each now to the members
// that lack it: head itself, and, while recovery is pending in a pool
// that has had a snapshot, head's snapdir and clones (Ceph's
// _rollback_to and snap trimmer wait for them too): the write's
// transaction may read or remove them on every member (a rollback
// copies a clone over the head, a trim removes clones, a write that
// recreates the head removes the snapdir), and on a member that lacks
// one it would fail whole while the member's log took its entries (the
// member kept a stale head at the write's version, which recovery then
// took as current). The write holds head's key in the op queue, which
// its clones and snapdir share (objectKey), so no other push of them
// runs meanwhile: one the recoverer queued waits behind the write. It
// returns false if the interval ended.
func (p *pg) recoverFirst(head objid.ID) bool {
	if !p.pushFirst(head) {
		return false
	}
	for _, id := range p.snapObjects(head) {
		if !p.pushFirst(id) {
			return false
		}
	}
	return true
}

// snapObjects returns head's snapdir and clones while recovery is
// pending in a pool that has had a snapshot (some member may lack one);
// none otherwise, or if head is not a head (a write to a snapshot is
// refused: snapRefusal), or if its snap set cannot be read (the write's
// own read of it fails and answers).
func (p *pg) snapObjects(head objid.ID) []objid.ID {
	p.mu.Lock()
	pending := p.run != nil && p.activated && p.recPlan.Pending() && p.pool.SnapSeq != 0
	p.mu.Unlock()
	if !pending || head.Snap != objid.NoSnap {
		return nil
	}
	st, err := p.loadSnapState(head)
	if err != nil {
		return nil
	}
	ids := []objid.ID{head.WithSnap(objid.SnapDir)}
	for _, c := range st.ss.Clones {
		ids = append(ids, head.WithSnap(c.ID))
	}
	return ids
}

// pushFirst pushes id now to the members that lack it, for
// recoverFirst. It returns false if the interval ended.
func (p *pg) pushFirst(id objid.ID) bool {
	for {
		p.mu.Lock()
		r := p.run
		if r == nil || !p.activated {
			p.mu.Unlock()
			return true // checkLocked refuses or parks the op
		}
		if p.recPlan.IsUnfound(id) {
			p.mu.Unlock()
			return p.waitInterval(r) // checkLocked parks the op once it is resent
		}
		targets := p.recPlan.Urgent(id)
		p.mu.Unlock()
		if len(targets) == 0 {
			return true
		}
		p.o.metrics.priorityRecoveries.Inc()
		err := p.recoverObject(r, id, targets)
		if errors.Is(err, errUnfound) {
			p.finishPush(r, id, nil)
			return p.waitInterval(r)
		}
		if err == nil {
			p.finishPush(r, id, targets)
			return true
		}
		p.o.log.Warn("recovery: push before a write failed; trying again", "pg", p.id.String(), "object", id.String(), "err", err)
		p.finishPush(r, id, nil)
		if !p.idle(r) {
			return false
		}
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
