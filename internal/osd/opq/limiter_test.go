package opq

import (
	"slices"
	"testing"
)

func TestLimiter(t *testing.T) {
	l := NewLimiter(1)
	var granted []uint64
	grant := func(id uint64) { granted = append(granted, id) }
	if !l.Acquire(1) {
		t.Fatal("a free slot was not granted")
	}
	for id := uint64(2); id <= 4; id++ {
		if l.Acquire(id) {
			t.Fatalf("%d granted beyond the limit", id)
		}
	}
	l.SetLimit(3, grant) // the first two waiters, in arrival order
	if !slices.Equal(granted, []uint64{2, 3}) {
		t.Fatalf("raising the limit granted %v", granted)
	}
	l.SetLimit(1, grant) // takes nothing back
	if held, limit := l.State(); held != 3 || limit != 1 {
		t.Fatalf("held %d of %d", held, limit)
	}
	l.Release(grant)
	l.Release(grant)
	if len(granted) != 2 {
		t.Fatalf("granted %v while over the lowered limit", granted)
	}
	if !l.Cancel(4) || l.Cancel(4) {
		t.Fatal("cancelling a waiter")
	}
	l.Release(grant)
	if held, _ := l.State(); held != 0 || len(granted) != 2 {
		t.Fatalf("a cancelled waiter was granted: held %d, granted %v", held, granted)
	}
	// A newcomer does not overtake a waiter.
	l.Acquire(5)
	if l.Acquire(6) || l.Acquire(7) {
		t.Fatal("granted beyond the limit")
	}
	l.Release(grant)
	if !slices.Equal(granted, []uint64{2, 3, 6}) || l.Cancel(6) {
		t.Fatalf("granted %v; the first waiter should have its slot", granted)
	}
}
