package fsclient

import (
	"context"
	"math"
	"slices"
	"sync"
)

// rangeLock orders the operations of one open file by the byte ranges
// they touch: operations on ranges that do not overlap run together,
// overlapping ones run one after the other in the order they asked
// (first come, first served), except that reads overlapping reads share.
// A request waits behind every earlier request it conflicts with, granted
// or still waiting, so a writer is never starved by a stream of readers
// and two writes to one range are granted in the order they were issued.
// The whole file (wholeFile) is the barrier of flushes, truncates and
// revocations: it waits for every operation in flight and holds back
// every later one.
//
// Waiters wait on channels, which the simulator's virtual time
// (testing/synctest) counts as blocked, unlike a sync.Mutex; mu is held
// only to change the queue.
type rangeLock struct {
	mu sync.Mutex
	// queue holds the requests in arrival order: those granted and those
	// waiting.
	queue []*rangeHold
}

// rangeHold is one request of a rangeLock: [off, end), shared (a read)
// or exclusive.
type rangeHold struct {
	off, end uint64
	shared   bool
	granted  bool
	ready    chan struct{} // closed when granted
}

// wholeFile is the end of a range that covers the whole file.
const wholeFile = math.MaxUint64

func (h *rangeHold) conflicts(o *rangeHold) bool {
	return h.off < o.end && o.off < h.end && !(h.shared && o.shared)
}

// lock waits until [off, end) is granted (shared: for reading) and
// returns the hold to unlock, or ctx's error (nothing held).
func (l *rangeLock) lock(ctx context.Context, off, end uint64, shared bool) (*rangeHold, error) {
	h := l.enqueue(off, end, shared)
	select {
	case <-h.ready:
		return h, nil
	case <-ctx.Done():
		l.unlock(h) // granted meanwhile or not: leave the queue
		return nil, ctx.Err()
	}
}

// enqueue queues a request for [off, end) (an empty range counts as
// the byte at off) and grants it if nothing before it conflicts.
func (l *rangeLock) enqueue(off, end uint64, shared bool) *rangeHold {
	if end <= off {
		end = off + 1
	}
	h := &rangeHold{off: off, end: end, shared: shared, ready: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue = append(l.queue, h)
	l.grantLocked()
	return h
}

// unlock releases h and grants the requests it held back.
func (l *rangeLock) unlock(h *rangeHold) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.Index(l.queue, h); i >= 0 {
		l.queue = slices.Delete(l.queue, i, i+1)
	}
	l.grantLocked()
}

// grantLocked grants every waiting request that conflicts with none
// before it in the queue.
func (l *rangeLock) grantLocked() {
	for i, h := range l.queue {
		if h.granted {
			continue
		}
		free := true
		for _, e := range l.queue[:i] {
			if h.conflicts(e) {
				free = false
				break
			}
		}
		if free {
			h.granted = true
			close(h.ready)
		}
	}
}

// inFlight returns how many requests are granted (for tests).
func (l *rangeLock) inFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlightLocked()
}

// waiting returns how many requests wait (for tests).
func (l *rangeLock) waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue) - l.inFlightLocked()
}

func (l *rangeLock) inFlightLocked() int {
	n := 0
	for _, h := range l.queue {
		if h.granted {
			n++
		}
	}
	return n
}
