package osd

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/osd/peering"
	"github.com/cuttlestore/cuttle/internal/osd/recovery"
	"github.com/cuttlestore/cuttle/objid"
)

// gatePolicy is Today but for the classes it holds shut, whose items
// wait until the test opens them: it lets the tests see what a policy
// that holds items back (a QoS one) does to the OSD's rules.
type gatePolicy struct {
	mu   sync.Mutex
	shut map[opq.Class]bool
}

func (g *gatePolicy) Admit(c opq.Class, cost int64, running opq.Load) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.shut[c] && opq.Today{}.Admit(c, cost, running)
}
func (g *gatePolicy) Done(opq.Class, int64)          {}
func (g *gatePolicy) Yields(c, other opq.Class) bool { return opq.Today{}.Yields(c, other) }

func (g *gatePolicy) open(c opq.Class) {
	g.mu.Lock()
	delete(g.shut, c)
	g.mu.Unlock()
}

// recoveringPG returns an active primary (osd.0) of pool 1 under policy
// whose replica osd.1 lacks objs, recovering in run r.
func recoveringPG(t *testing.T, policy opq.Policy, objs ...objid.ID) (*pg, *peerRun) {
	t.Helper()
	p := fullTestPG(t, capsMap(t))
	p.o.ctx = t.Context()
	p.queue = newOpQueue(policy)
	p.primary, p.acting, p.activated, p.o.cfg.ID = 0, []int32{0, 1}, true, 0
	p.pool.Size, p.pool.MinSize = 2, 1
	p.notePeerMissingLocked(peering.Result{}, map[int32][]objid.ID{1: objs})
	r := &peerRun{done: make(chan struct{})}
	p.run = r
	return p, r
}

// Recovery gives way to client ops: the recoverer skips an object a
// client op holds, and a client write to an object whose push runs
// waits for it in the op queue, then runs (the rule that replaced
// pg.recoveringObj).
func TestRecoveryYieldsToClientOps(t *testing.T) {
	a, b := objid.Object(1, "", "a"), objid.Object(1, "", "b")
	p, r := recoveringPG(t, opq.Today{}, a, b)
	write := &request{}
	if !p.queue.Add(objectKey(a), opq.Client, 4096, write) {
		t.Fatal("a client write to an idle object did not start")
	}
	j, start, why := p.claimNext(r, nil)
	if why != recovery.Push || j.id != b || !start {
		t.Fatalf("claimNext with a held by a write = %+v %v %v, want b, started", j, start, why)
	}
	if _, _, why := p.claimNext(r, nil); why != recovery.InFlight {
		t.Fatalf("claimNext with a held and b pushing = %v, want in flight", why)
	}
	later := &request{}
	if p.queue.Add(objectKey(b), opq.Client, 4096, later) {
		t.Fatal("a client write started while its object's push runs")
	}
	p.finishPush(r, b, j.targets)
	if next, ok := p.queue.Done(objectKey(b)); !ok || next != work(later) {
		t.Fatalf("the push's end handed out %v, want the write waiting for it", next)
	}
	if p.missingCopies != 1 {
		t.Fatalf("%d copies missing, want 1 (a)", p.missingCopies)
	}
	p.queue.Done(objectKey(a))
	if j, _, why := p.claimNext(r, nil); why != recovery.Push || j.id != a {
		t.Fatalf("once the write is done: %+v %v, want a", j, why)
	}
}

// A client write to an object whose push waits for the policy goes
// ahead of it, pushes the object itself (recoverFirst), and the push,
// once admitted, finds nothing left to push: it sends nothing (this PG
// has no store or messenger to send with) and ends.
func TestClientWriteOvertakesWaitingPush(t *testing.T) {
	a := objid.Object(1, "", "a")
	gate := &gatePolicy{shut: map[opq.Class]bool{opq.Recovery: true}}
	p, r := recoveringPG(t, gate, a)
	var ended []error
	j, start, why := p.claimNext(r, func(err error) { ended = append(ended, err) })
	if why != recovery.Push || start {
		t.Fatalf("claimNext = %v, started %v; want a push waiting for the policy", why, start)
	}
	write := &request{}
	if !p.queue.Add(objectKey(a), opq.Client, 4096, write) {
		t.Fatal("the write did not go ahead of the waiting push")
	}
	// The write pushes a itself, as recoverFirst does.
	p.mu.Lock()
	targets := p.recPlan.Urgent(a)
	p.mu.Unlock()
	if len(targets) != 1 || targets[0] != 1 {
		t.Fatalf("the write must push a to %v, want osd.1", targets)
	}
	p.finishPush(r, a, targets)
	gate.open(opq.Recovery)
	p.mu.Lock()
	next, ok := p.queue.Done(objectKey(a))
	p.mu.Unlock()
	if !ok || next != work(j) {
		t.Fatalf("after the write: %v, want the push", next)
	}
	p.runKey(objectKey(a), next)
	if len(ended) != 1 || ended[0] != nil {
		t.Fatalf("the push ended with %v", ended)
	}
	if p.queue.Busy(objectKey(a)) || p.recPlan.Pending() || p.missingCopies != 0 {
		t.Fatalf("after the push: busy %v, pending %v, %d missing", p.queue.Busy(objectKey(a)), p.recPlan.Pending(), p.missingCopies)
	}
}

// Scrub chunks run through the op queue on the PG's scrub key: a chunk
// starts while client ops run (it holds no object), its result comes
// back, and one a policy holds back is answered when the interval ends.
func TestScrubChunksInTheQueue(t *testing.T) {
	p, _ := recoveringPG(t, opq.Today{})
	p.queue.Add(objectKey(objid.Object(1, "", "a")), opq.Client, 1, &request{})
	failed := errors.New("chunk failed")
	j := &chunkJob{run: func() error { return failed }, done: make(chan struct{})}
	if err := p.queueChunk(j, 64, false); !errors.Is(err, failed) {
		t.Fatalf("queueChunk = %v", err)
	}
	if p.queue.Running(opq.Scrub) != (opq.Load{}) || p.queue.Busy(scrubKey()) {
		t.Fatal("the chunk is still in the queue")
	}

	synctest.Test(t, func(t *testing.T) {
		gate := &gatePolicy{shut: map[opq.Class]bool{opq.Scrub: true}}
		p, _ := recoveringPG(t, gate)
		ran := false
		j := &chunkJob{run: func() error { ran = true; return nil }, done: make(chan struct{})}
		res := make(chan error)
		go func() { res <- p.queueChunk(j, 64, true) }()
		synctest.Wait() // the chunk waits in the queue
		p.mu.Lock()
		queued := p.queue.Busy(scrubKey())
		cut := p.endIntervalLocked()
		p.mu.Unlock()
		abandonAll(cut, 2)
		if err := <-res; !queued || !errors.Is(err, errIntervalEnded) || ran {
			t.Fatalf("a chunk cut with its interval: queued %v, %v, ran %v", queued, err, ran)
		}
	})
}

// Client requests cut from the queue when the interval ends are told to
// resend.
func TestIntervalEndCutsQueuedRequests(t *testing.T) {
	p, _ := recoveringPG(t, opq.Today{})
	key := objectKey(objid.Object(1, "", "a"))
	p.queue.Add(key, opq.Client, 1, &request{})
	queued := &request{o: p.o}
	p.queue.Add(key, opq.Client, 1, queued)
	p.mu.Lock()
	cut := p.endIntervalLocked()
	p.mu.Unlock()
	if len(cut) != 1 || cut[0] != work(queued) {
		t.Fatalf("cut %v, want the queued request", cut)
	}
}
