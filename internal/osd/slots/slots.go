// Package slots is a counting semaphore whose limit may change while
// slots are held, over the op queue's Limiter (internal/osd/opq), which
// decides who gets a slot; this package blocks and wakes the waiters. The
// OSD uses it for each recovering PG's push window
// (osd_recovery_max_active) and for its scrubs (osd_max_scrubs). It knows
// nothing of what the slots are for. Safe for concurrent use.
package slots

import (
	"sync"

	"github.com/cuttlestore/cuttle/internal/osd/opq"
)

// Slots is the semaphore: the Limiter decides who gets a slot (waiters
// in arrival order; lowering the limit takes no slot back). (Recovery's
// slots per OSD, osd_max_backfills, are internal/osd's reservations, in
// priority order.)
type Slots struct {
	mu      sync.Mutex
	lim     *opq.Limiter
	seq     uint64
	waiters map[uint64]chan struct{} // closed when granted a slot
}

// New returns limit slots.
func New(limit int) *Slots {
	return &Slots{lim: opq.NewLimiter(limit), waiters: map[uint64]chan struct{}{}}
}

// Acquire waits for a slot and reports true, or false if a or b closes
// first (then no slot is held).
func (s *Slots) Acquire(a, b <-chan struct{}) bool {
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

// Release gives back a slot Acquire granted.
func (s *Slots) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lim.Release(s.grantLocked)
}

// SetLimit changes the number of slots; waiters get the new ones at once.
func (s *Slots) SetLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lim.SetLimit(n, s.grantLocked)
}

// State returns the slots held and the limit.
func (s *Slots) State() (held, limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lim.State()
}

// grantLocked wakes waiter id, which the Limiter granted a slot.
func (s *Slots) grantLocked(id uint64) {
	close(s.waiters[id])
	delete(s.waiters, id)
}
