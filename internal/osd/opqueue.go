package osd

import (
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// The driver of the PGs' op queues (internal/osd/opq). Every piece of
// work a PG does on its objects enters its queue as an item with a class
// and a cost, and runs when the queue hands it out:
//
//   - client ops (primary.go), class Client, on their object's key, cost
//     their data's bytes;
//   - a replica's rep ops (replica.go), class Replica, all on the PG's
//     one rep-op key, so that they apply in the order the primary sent
//     them, cost their data's bytes;
//   - recovery pushes (missing.go), class Recovery, on their object's
//     key: a push holds its object as a client op does, and a client op
//     queued behind a push that has not started goes ahead of it; cost
//     the PG's average object size;
//   - scrub chunks (scrub.go), class Scrub, on the PG's scrub key, cost
//     one per object (light) or the objects' bytes (deep).
//
// The reservations taken before items enter a queue are a recovery slot
// per PG on its primary and on each member it pushes to
// (osd_max_backfills, in priority order: reservations.go and
// internal/osd/reserve), and opq.Limiters (internal/osd/slots) for a push window
// per PG (osd_recovery_max_active) and the OSD's scrubs (osd_max_scrubs). The queues share the
// OSD's Policy (OSD.policy: opq.Today), which a QoS policy replaces.
//
// Everything here runs under the PG's lock (p.mu) but the items' work.

// qkey is a key of a PG's op queue: the items of a key run one at a
// time, in order. A key is an object's head, which its clones and
// snapdir share (a write to the head may read or remove them, a read at
// a snapshot reads them, and a write pushes them first to members that
// lack them: no push of one may run beside it), or one of the PG's own sequences
// (its rep ops, its scrub chunks), named by an id with a negative pool,
// which no client object has (pools are never negative; the PG's meta
// object has one too, but no item touches it). Plain object ids, rather
// than a struct with a field for the sequence: a key a client op costs
// hashing stays the object's id (a field more cost the op queue's Add
// and Done 9% more instructions, counted with cachegrind).
type qkey = objid.ID

func objectKey(id objid.ID) qkey { return id.WithSnap(objid.NoSnap) }

func repOpsKey() qkey { return objid.ID{Pool: -1, Name: "opq.repops"} }

func scrubKey() qkey { return objid.ID{Pool: -1, Name: "opq.scrub"} }

// isObjectKey reports whether key is an object's, not a sequence's.
func isObjectKey(key qkey) bool { return key.Pool >= 0 }

// work is an item of a PG's op queue: *request, *repOp, *pushJob or
// *chunkJob.
type work interface {
	// abandon answers an item that will not run: the PG's interval
	// ended while it waited (pg.endIntervalLocked cut it). It is called
	// without the PG lock, and must not block.
	abandon(epoch uint64)
}

func newOpQueue(policy opq.Policy) *opq.Queue[qkey, work] {
	return opq.NewQueue[qkey, work](policy)
}

// runKey runs it, which the op queue handed out on key, and the items of
// key the queue hands out after it, in order, until none is left or one
// must wait: a write goes on from its applied callback (appliedHere), so
// no goroutine waits for the store.
func (p *pg) runKey(key qkey, it work) {
	for {
		switch w := it.(type) {
		case *request:
			if wr, c := p.serve(w); c != nil {
				c.OnApplied(func() { p.appliedHere(key, w, wr, c) })
				return
			}
		case *repOp:
			p.mu.Lock()
			c, result := p.applyRepOpLocked(w)
			p.mu.Unlock()
			p.answerRepOp(w, c, result)
		case *pushJob:
			w.err = p.runPush(w)
		case *chunkJob:
			w.err = w.run()
		}
		p.mu.Lock()
		next, more := p.queue.Done(key)
		p.startWaitingLocked()
		p.mu.Unlock()
		p.ended(key, it)
		if !more {
			return
		}
		it = next
	}
}

// ended follows the end of item it of key, outside the PG lock: the
// recoverer hears that an object is free again, a push's reservation
// goes back, a scrub chunk's waiter goes on.
func (p *pg) ended(key qkey, it work) {
	switch w := it.(type) {
	case *pushJob:
		w.finished(w.err)
	case *chunkJob:
		close(w.done)
	}
	if isObjectKey(key) {
		p.kickRecovery()
	}
}

// startWaitingLocked runs the items the op queue's policy held back and
// admits now. Today's policy holds back only a PG's second scrub chunk,
// so this costs a client op one length check.
func (p *pg) startWaitingLocked() {
	for p.queue.Blocked() {
		key, it, ok := p.queue.Next()
		if !ok {
			return
		}
		p.o.spawn(func() { p.runKey(key, it) })
	}
}

// abandonAll answers the items an ended interval cut from the queue.
func abandonAll(items []work, epoch uint64) {
	for _, it := range items {
		it.abandon(epoch)
	}
}

func (r *request) abandon(epoch uint64) { r.replyError(-wire.ESTALE, epoch) }
