package slots

import (
	"testing"
	"testing/synctest"
)

// TestSlots checks the recovery throttle: waiters in arrival order, a
// raised limit granting at once, a lowered one taking effect as slots are
// released, and a waiter that gives up holding nothing.
func TestSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(1)
		never := make(chan struct{})
		if !s.Acquire(never, never) {
			t.Fatal("first acquire failed")
		}
		got := make(chan int, 4)
		for i := range 3 {
			go func() {
				if s.Acquire(never, never) {
					got <- i
				}
			}()
			synctest.Wait() // queued in this order
		}
		if len(got) != 0 {
			t.Fatal("granted beyond the limit")
		}
		s.SetLimit(3) // two more at once: the first two waiters
		synctest.Wait()
		// Granted in arrival order (the goroutines may report in either).
		if a, b := <-got, <-got; min(a, b) != 0 || max(a, b) != 1 || len(got) != 0 {
			t.Fatalf("after raising the limit: %d %d, %d more", a, b, len(got))
		}
		s.SetLimit(2)
		s.Release() // 2 held, limit 2: the last waiter still waits
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("granted beyond a lowered limit")
		}
		s.Release()
		synctest.Wait()
		if w := <-got; w != 2 {
			t.Fatalf("then %d", w)
		}
		if held, limit := s.State(); held != 2 || limit != 2 {
			t.Fatalf("state %d/%d", held, limit)
		}

		gone := make(chan struct{})
		res := make(chan bool)
		go func() { res <- s.Acquire(never, gone) }()
		synctest.Wait()
		close(gone)
		if <-res {
			t.Fatal("acquire succeeded after giving up")
		}
		s.Release()
		if held, _ := s.State(); held != 1 {
			t.Fatalf("a waiter that gave up holds a slot: %d held", held)
		}
	})
}
