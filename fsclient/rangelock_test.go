package fsclient

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// granted reports whether h has been granted (without waiting).
func granted(h *rangeHold) bool {
	select {
	case <-h.ready:
		return true
	default:
		return false
	}
}

// request queues a request for [off, end) and returns its hold, granted
// or still waiting (the test's goroutine never blocks).
func request(l *rangeLock, off, end uint64, shared bool) *rangeHold {
	return l.enqueue(off, end, shared)
}

// The rules of the range lock, step by step: disjoint ranges together,
// overlapping ones in arrival order (a request waits behind an earlier
// waiting one too), reads share, the whole file waits for everything
// before it and holds back everything after.
func TestRangeLockOrder(t *testing.T) {
	type req struct {
		name     string
		off, end uint64
		shared   bool
	}
	type step struct {
		request *req   // queue this request
		unlock  string // or release this one
		granted []string
	}
	a := &req{"a", 0, 8, false}
	b := &req{"b", 8, 16, false}
	c := &req{"c", 4, 12, false} // overlaps a and b
	d := &req{"d", 10, 20, true} // overlaps b and c: waits behind c
	e := &req{"e", 30, 40, true} // disjoint: runs at once
	r1 := &req{"r1", 0, 100, true}
	r2 := &req{"r2", 50, 60, true}
	w := &req{"w", 55, 56, false}
	r3 := &req{"r3", 0, 10, true}  // overlaps r1 only, shares with it
	r4 := &req{"r4", 50, 51, true} // overlaps r1 and r2, not w: shares
	r5 := &req{"r5", 55, 58, true} // behind the waiting w: no starvation
	whole := &req{"whole", 0, wholeFile, false}
	x := &req{"x", 1000, 1001, true}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"overlapping writes in order", []step{
			{request: a, granted: []string{"a"}},
			{request: b, granted: []string{"a", "b"}},
			{request: c, granted: []string{"a", "b"}},
			{request: d, granted: []string{"a", "b"}},
			{request: e, granted: []string{"a", "b", "e"}},
			{unlock: "a", granted: []string{"b", "e"}},
			{unlock: "b", granted: []string{"c", "e"}},
			{unlock: "c", granted: []string{"d", "e"}},
		}},
		{"reads share, a writer is not starved", []step{
			{request: r1, granted: []string{"r1"}},
			{request: r2, granted: []string{"r1", "r2"}},
			{request: w, granted: []string{"r1", "r2"}},
			{request: r3, granted: []string{"r1", "r2", "r3"}},
			{request: r4, granted: []string{"r1", "r2", "r3", "r4"}},
			{request: r5, granted: []string{"r1", "r2", "r3", "r4"}},
			{unlock: "r1", granted: []string{"r2", "r3", "r4"}},
			{unlock: "r2", granted: []string{"w", "r3", "r4"}},
			{unlock: "r4", granted: []string{"w", "r3"}},
			{unlock: "w", granted: []string{"r3", "r5"}},
		}},
		{"the whole file is a barrier", []step{
			{request: a, granted: []string{"a"}},
			{request: e, granted: []string{"a", "e"}},
			{request: whole, granted: []string{"a", "e"}},
			{request: x, granted: []string{"a", "e"}},
			{unlock: "e", granted: []string{"a"}},
			{unlock: "a", granted: []string{"whole"}},
			{unlock: "whole", granted: []string{"x"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l rangeLock
			holds := map[string]*rangeHold{}
			var order []string
			for i, s := range tc.steps {
				if s.request != nil {
					holds[s.request.name] = request(&l, s.request.off, s.request.end, s.request.shared)
					order = append(order, s.request.name)
				} else {
					l.unlock(holds[s.unlock])
					delete(holds, s.unlock)
				}
				var got []string
				for _, n := range order {
					if h := holds[n]; h != nil && granted(h) {
						got = append(got, n)
					}
				}
				if len(got) != len(s.granted) {
					t.Fatalf("step %d: granted %v, want %v", i, got, s.granted)
				}
				for j := range got {
					if got[j] != s.granted[j] {
						t.Fatalf("step %d: granted %v, want %v", i, got, s.granted)
					}
				}
				if l.inFlight() != len(got) || l.waiting() != len(holds)-len(got) {
					t.Fatalf("step %d: %d in flight, %d waiting; want %d, %d", i, l.inFlight(), l.waiting(), len(got), len(holds)-len(got))
				}
			}
		})
	}
}

// A request whose context ends while it waits leaves the queue: those
// behind it go ahead, and the lock returns the context's error.
func TestRangeLockCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l rangeLock
		ctx := context.Background()
		a, err := l.lock(ctx, 0, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := l.lock(cctx, 5, 15, false)
			done <- err
		}()
		synctest.Wait() // the goroutine waits for [5, 15)
		c := request(&l, 12, 20, false)
		if granted(c) || l.waiting() != 2 {
			t.Fatalf("behind a waiting request: granted %v, %d waiting", granted(c), l.waiting())
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("lock after cancel: %v", err)
		}
		if !granted(c) || l.inFlight() != 2 || l.waiting() != 0 {
			t.Fatalf("after the cancel: granted %v, %d in flight, %d waiting", granted(c), l.inFlight(), l.waiting())
		}
		l.unlock(a)
		l.unlock(c)
		if l.inFlight() != 0 {
			t.Fatal("holds left after unlocking everything")
		}
	})
}

// Zero-length ranges (an empty read at off) still order against a
// write of that byte.
func TestRangeLockEmpty(t *testing.T) {
	var l rangeLock
	w, err := l.lock(context.Background(), 7, 8, false)
	if err != nil {
		t.Fatal(err)
	}
	if r := request(&l, 7, 7, true); granted(r) || l.waiting() != 1 {
		t.Fatalf("an empty read at a written byte: %d waiting, want 1", l.waiting())
	}
	l.unlock(w)
}
