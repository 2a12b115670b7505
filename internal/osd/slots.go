package osd

import (
	"slices"
	"sync"
)

// slots is a counting semaphore whose limit may change while slots are
// held: recovery's slots per OSD (osd_max_backfills) and each recovering
// PG's push window (osd_recovery_max_active). Waiters are served in
// arrival order. Lowering the limit takes no slot back: those held are
// released as usual, and new ones are granted once fewer are held than
// the limit. Safe for concurrent use.
type slots struct {
	mu      sync.Mutex
	limit   int
	held    int
	waiters []chan struct{} // in arrival order; closed when granted a slot
}

func newSlots(limit int) *slots { return &slots{limit: limit} }

// acquire waits for a slot and reports true, or false if a or b closes
// first (then no slot is held).
func (s *slots) acquire(a, b <-chan struct{}) bool {
	s.mu.Lock()
	if len(s.waiters) == 0 && s.held < s.limit {
		s.held++
		s.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	s.waiters = append(s.waiters, ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-a:
	case <-b:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.waiters, ch); i >= 0 {
		s.waiters = slices.Delete(s.waiters, i, i+1)
		return false
	}
	// Granted as it gave up: pass the slot on.
	s.held--
	s.grantLocked()
	return false
}

// release gives back a slot acquire granted.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held--
	s.grantLocked()
}

// setLimit changes the number of slots; waiters get the new ones at once.
func (s *slots) setLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = n
	s.grantLocked()
}

// state returns the slots held and the limit.
func (s *slots) state() (held, limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held, s.limit
}

func (s *slots) grantLocked() {
	for len(s.waiters) > 0 && s.held < s.limit {
		close(s.waiters[0])
		s.waiters = s.waiters[1:]
		s.held++
	}
}
