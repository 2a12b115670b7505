package osd

import (
	"testing"
	"testing/synctest"
)

// TestSlots checks the recovery throttle: waiters in arrival order, a
// raised limit granting at once, a lowered one taking effect as slots are
// released, and a waiter that gives up holding nothing.
func TestSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSlots(1)
		never := make(chan struct{})
		if !s.acquire(never, never) {
			t.Fatal("first acquire failed")
		}
		got := make(chan int, 4)
		for i := range 3 {
			go func() {
				if s.acquire(never, never) {
					got <- i
				}
			}()
			synctest.Wait() // queued in this order
		}
		if len(got) != 0 {
			t.Fatal("granted beyond the limit")
		}
		s.setLimit(3) // two more at once: the first two waiters
		synctest.Wait()
		// Granted in arrival order (the goroutines may report in either).
		if a, b := <-got, <-got; min(a, b) != 0 || max(a, b) != 1 || len(got) != 0 {
			t.Fatalf("after raising the limit: %d %d, %d more", a, b, len(got))
		}
		s.setLimit(2)
		s.release() // 2 held, limit 2: the last waiter still waits
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("granted beyond a lowered limit")
		}
		s.release()
		synctest.Wait()
		if w := <-got; w != 2 {
			t.Fatalf("then %d", w)
		}
		if held, limit := s.state(); held != 2 || limit != 2 {
			t.Fatalf("state %d/%d", held, limit)
		}

		gone := make(chan struct{})
		res := make(chan bool)
		go func() { res <- s.acquire(never, gone) }()
		synctest.Wait()
		close(gone)
		if <-res {
			t.Fatal("acquire succeeded after giving up")
		}
		s.release()
		if held, _ := s.state(); held != 1 {
			t.Fatalf("a waiter that gave up holds a slot: %d held", held)
		}
	})
}
