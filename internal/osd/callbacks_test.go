package osd

import (
	"log/slog"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/objid"
)

// callbackPG is a PG with one write of this OSD (osd.1) in flight, to
// object id, that only this OSD has yet to apply and commit.
func callbackPG(t *testing.T) (*pg, *write, *request, qkey) {
	o := &OSD{ctx: t.Context(), log: slog.New(slog.DiscardHandler)}
	o.cfg.ID = 1
	id := objectKey(objid.ID{Pool: 1, Name: "obj"})
	r := &request{o: o}
	w := &write{tid: 7}
	w.acks.Start([]int32{1}, false)
	p := &pg{o: o, writes: map[uint64]*write{7: w}, queue: newOpQueue(opq.Today{})}
	if !p.queue.Add(id, opq.Client, 1, r) {
		t.Fatal("the op queue did not start the write")
	}
	return p, w, r, id
}

// The store runs completion callbacks in its pipeline, which must never
// wait for a PG lock (a PG holds it while it queues to the store): with
// the lock held elsewhere the callbacks return at once, and what they
// record happens once the lock is free.
func TestCallbacksDoNotWaitForThePGLock(t *testing.T) {
	p, w, r, id := callbackPG(t)
	c := objectstore.NewCompletion()
	p.mu.Lock()
	p.appliedHere(id, r, w, c) // would deadlock if it waited for the lock
	if p.queue.Len(id) != 1 || w.acks.Unapplied() != 1 {
		t.Fatal("the apply was recorded while the PG lock was held")
	}
	p.mu.Unlock()
	p.o.wg.Wait()
	p.mu.Lock()
	if p.queue.Busy(id) || w.acks.Unapplied() != 0 {
		p.mu.Unlock()
		t.Fatalf("after the lock was free: object queue %d, unapplied %d", p.queue.Len(id), w.acks.Unapplied())
	}
	// The commit callback is registered now; it runs when the store marks
	// the completion, here with the lock held again.
	c.MarkCommitted(nil)
	if _, inFlight := p.writes[7]; !inFlight {
		t.Fatal("the commit was recorded while the PG lock was held")
	}
	p.mu.Unlock()
	p.o.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, inFlight := p.writes[7]; inFlight {
		t.Fatal("the commit was not recorded once the lock was free")
	}
}

// With the lock free the callbacks record at once, in the marking
// goroutine.
func TestCallbacksRecordAtOnce(t *testing.T) {
	p, w, r, id := callbackPG(t)
	c := objectstore.NewCompletion()
	p.appliedHere(id, r, w, c)
	if p.queue.Busy(id) || w.acks.Unapplied() != 0 {
		t.Fatalf("after the apply: object queue %d, unapplied %d", p.queue.Len(id), w.acks.Unapplied())
	}
	c.MarkCommitted(nil)
	if _, inFlight := p.writes[7]; inFlight {
		t.Fatal("the commit was not recorded")
	}
}
