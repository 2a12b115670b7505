package osd

import (
	"sync"

	"github.com/cuttlestore/cuttle/internal/osd/opq"
)

// slots is a counting semaphore whose limit may change while slots are
// held: each recovering PG's push window (osd_recovery_max_active) and
// the OSD's scrubs (recovery's slots per OSD, osd_max_backfills, are
// reservations.go's, in priority order). The op queue's Limiter
// decides who gets a slot (waiters in arrival order; lowering the limit
// takes no slot back); slots blocks and wakes the waiters. Safe for
// concurrent use.
type slots struct {
	mu      sync.Mutex
	lim     *opq.Limiter
	seq     uint64
	waiters map[uint64]chan struct{} // closed when granted a slot
}

func newSlots(limit int) *slots {
	return &slots{lim: opq.NewLimiter(limit), waiters: map[uint64]chan struct{}{}}
}

// acquire waits for a slot and reports true, or false if a or b closes
// first (then no slot is held).
func (s *slots) acquire(a, b <-chan struct{}) bool {
	s.mu.Lock()
	s.seq++
	id := s.seq
	if s.lim.Acquire(id) {
		s.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	s.waiters[id] = ch
	s.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-a:
	case <-b:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lim.Cancel(id) {
		delete(s.waiters, id)
		return false
	}
	// Granted as it gave up: pass the slot on.
	s.lim.Release(s.grantLocked)
	return false
}

// release gives back a slot acquire granted.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lim.Release(s.grantLocked)
}

// setLimit changes the number of slots; waiters get the new ones at once.
func (s *slots) setLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lim.SetLimit(n, s.grantLocked)
}

// state returns the slots held and the limit.
func (s *slots) state() (held, limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lim.State()
}

// grantLocked wakes waiter id, which the Limiter granted a slot.
func (s *slots) grantLocked(id uint64) {
	close(s.waiters[id])
	delete(s.waiters, id)
}
