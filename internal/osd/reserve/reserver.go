package reserve

import "slices"

// Reserver grants up to a limit of reservations, each named by a key of
// the caller's choosing. Requests that find no free slot wait, in order
// of priority (higher first) and then of arrival. The limit may change
// while reservations are held: lowering it takes none back (new ones are
// granted once fewer are held than the limit); raising it grants waiters
// at once. Every method that may grant returns the keys it granted, in
// the order granted: the caller tells their owners.
type Reserver[K comparable] struct {
	limit   int
	held    map[K]int // key -> priority
	waiting []waiter[K]
	seq     uint64
	maxHeld int
}

type waiter[K comparable] struct {
	key  K
	prio int
	seq  uint64 // arrival order
}

// NewReserver returns a reserver of limit slots.
func NewReserver[K comparable](limit int) *Reserver[K] {
	return &Reserver[K]{limit: limit, held: map[K]int{}}
}

// Request asks for a reservation for k at priority prio. If k holds one
// already, nothing changes; if k waits, it takes the new priority,
// keeping its place among requests of that priority that came after it.
// It returns the keys granted now (k, if a slot was free and no request
// of higher or equal priority waited before it).
func (r *Reserver[K]) Request(k K, prio int) []K {
	if _, ok := r.held[k]; ok {
		return nil
	}
	if i := r.indexOf(k); i >= 0 {
		w := r.waiting[i]
		r.waiting = slices.Delete(r.waiting, i, i+1)
		w.prio = prio
		r.insert(w)
	} else {
		r.seq++
		r.insert(waiter[K]{key: k, prio: prio, seq: r.seq})
	}
	return r.grant()
}

// Cancel ends k's reservation, held or waiting, and returns the keys
// granted now in its place. A key the reserver does not know is ignored.
func (r *Reserver[K]) Cancel(k K) []K {
	if r.remove(k) {
		return r.grant()
	}
	return nil
}

// remove forgets k, held or waiting, and reports whether it was held.
func (r *Reserver[K]) remove(k K) (held bool) {
	if _, ok := r.held[k]; ok {
		delete(r.held, k)
		return true
	}
	if i := r.indexOf(k); i >= 0 {
		r.waiting = slices.Delete(r.waiting, i, i+1)
	}
	return false
}

// SetLimit changes the number of slots and returns the keys granted now.
func (r *Reserver[K]) SetLimit(n int) []K {
	r.limit = n
	return r.grant()
}

// Held reports whether k holds a reservation.
func (r *Reserver[K]) Held(k K) bool {
	_, ok := r.held[k]
	return ok
}

// Waiting reports whether k waits for one.
func (r *Reserver[K]) Waiting(k K) bool { return r.indexOf(k) >= 0 }

// State is a reserver's counts.
type State struct {
	Held, Waiting, Limit int
	// MaxHeld is the most reservations ever held at once: never above
	// the highest limit the reserver had.
	MaxHeld int
}

// State returns the reserver's counts.
func (r *Reserver[K]) State() State {
	return State{Held: len(r.held), Waiting: len(r.waiting), Limit: r.limit, MaxHeld: r.maxHeld}
}

func (r *Reserver[K]) indexOf(k K) int {
	return slices.IndexFunc(r.waiting, func(w waiter[K]) bool { return w.key == k })
}

// insert places w among the waiters: after those of higher priority,
// and of the same priority that arrived first.
func (r *Reserver[K]) insert(w waiter[K]) {
	i, _ := slices.BinarySearchFunc(r.waiting, w, func(a, b waiter[K]) int {
		if a.prio != b.prio {
			return b.prio - a.prio // higher first
		}
		return compareSeq(a.seq, b.seq)
	})
	r.waiting = slices.Insert(r.waiting, i, w)
}

func compareSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (r *Reserver[K]) grant() []K {
	var out []K
	for len(r.waiting) > 0 && len(r.held) < r.limit {
		w := r.waiting[0]
		r.waiting = r.waiting[1:]
		r.held[w.key] = w.prio
		out = append(out, w.key)
	}
	r.maxHeld = max(r.maxHeld, len(r.held))
	return out
}

// Entry is a reservation held or waited for.
type Entry[K comparable] struct {
	Key      K
	Priority int
	Held     bool
}

// Entries lists the reservations: those held (in no particular order),
// then those waiting, in the order they will be granted.
func (r *Reserver[K]) Entries() []Entry[K] {
	out := make([]Entry[K], 0, len(r.held)+len(r.waiting))
	for k, p := range r.held {
		out = append(out, Entry[K]{Key: k, Priority: p, Held: true})
	}
	for _, w := range r.waiting {
		out = append(out, Entry[K]{Key: w.key, Priority: w.prio})
	}
	return out
}
