package opq

import "slices"

// Queue orders the items of one PG by key (an object, or a sequence of
// the PG's own): the items of a key run one at a time in the order they
// entered (but for the overtaking Add describes), the first of them once
// the policy admits it. The caller runs what Add, Done and Next
// hand out and reports the end of each with Done.
//
// A Queue is not safe for concurrent use: its owner serialises calls
// (the OSD under the PG's lock). Adding an item costs what appending to
// a slice in a map costs: no lock, no goroutine of its own.
type Queue[K comparable, T any] struct {
	policy  Policy
	keys    map[K][]entry[T]
	running [numClasses]Load
	// blocked are the keys whose first item waits for the policy to
	// admit it, in the order they came to wait, and waitingOf counts
	// them by class: an item does not overtake one of its class that
	// waits.
	blocked   []K
	waitingOf [numClasses]int
	// free are emptied keys' slices, cleared, for Add to reuse: an
	// object's one op at a time then allocates nothing in the queue.
	free [][]entry[T]
}

// Bounds of the free slices Queue keeps: how many, and the largest.
const (
	maxFree    = 16
	maxFreeCap = 4
)

type entry[T any] struct {
	v       T
	cost    int64
	class   Class
	started bool
}

// NewQueue returns an empty queue under policy.
func NewQueue[K comparable, T any](policy Policy) *Queue[K, T] {
	return &Queue[K, T]{policy: policy, keys: map[K][]entry[T]{}}
}

// Add queues v, of class c and cost, on key behind the items there,
// but ahead of those at the key's tail that have not started and whose
// class yields to c (Policy.Yields: a client op goes ahead of a recovery
// push of its object still waiting), never ahead of an item of its own
// class. It reports whether v starts now: it is the key's first item and
// the policy admits it. The caller then runs v and calls Done(key) when
// it is finished; otherwise Done or Next hands v out later.
func (q *Queue[K, T]) Add(key K, c Class, cost int64, v T) bool {
	items := q.keys[key]
	e := entry[T]{v: v, cost: cost, class: c}
	if len(items) > 0 {
		return q.addBehind(key, items, e)
	}
	start := q.admit(c, cost)
	if start {
		e.started = true
		q.running[c].Items++
		q.running[c].Cost += cost
	} else {
		q.block(key, c)
	}
	if n := len(q.free); n > 0 {
		items, q.free = q.free[n-1], q.free[:n-1]
	}
	q.keys[key] = append(items, e)
	return start
}

// addBehind is Add to a key that has items.
func (q *Queue[K, T]) addBehind(key K, items []entry[T], e entry[T]) bool {
	i := len(items)
	for i > 0 && !items[i-1].started && q.policy.Yields(items[i-1].class, e.class) {
		i--
	}
	if i > 0 {
		q.keys[key] = slices.Insert(items, i, e)
		return false
	}
	// e overtakes the first item, which waited for the policy: it waits
	// no longer, e is asked instead.
	q.unblock(key, items[0].class)
	items = slices.Insert(items, 0, e)
	q.keys[key] = items
	if !q.admit(e.class, e.cost) {
		q.block(key, e.class)
		return false
	}
	q.startHead(items)
	return true
}

// Done ends the running item of key and returns the key's next item if
// it starts now (the caller runs it, and calls Done again). ok is false
// when the key has nothing left (it is then free: Busy reports false)
// or its next item waits for the policy. Done of a key with no running
// item does nothing.
func (q *Queue[K, T]) Done(key K) (next T, ok bool) {
	items := q.keys[key]
	if len(items) == 0 || !items[0].started {
		return next, false
	}
	head := items[0]
	q.running[head.class].Items--
	q.running[head.class].Cost -= head.cost
	q.policy.Done(head.class, head.cost)
	items[0] = entry[T]{} // let the item go
	if len(items) == 1 {
		delete(q.keys, key)
		q.recycle(items)
		return next, false
	}
	items = items[1:]
	q.keys[key] = items
	if !q.admit(items[0].class, items[0].cost) {
		q.block(key, items[0].class)
		return next, false
	}
	q.startHead(items)
	return items[0].v, true
}

// recycle keeps an emptied key's slice for Add, cleared, within the
// free list's bounds.
func (q *Queue[K, T]) recycle(items []entry[T]) {
	if cap(items) > maxFreeCap || len(q.free) >= maxFree {
		return
	}
	items = items[:cap(items)]
	clear(items)
	q.free = append(q.free, items[:0])
}

// Blocked reports whether some key's first item waits for the policy:
// after Done, the caller asks Next for what may start now.
func (q *Queue[K, T]) Blocked() bool { return len(q.blocked) > 0 }

// Next returns an item the policy admits now among the first items that
// waited for it, oldest first; the caller runs it and calls Done(key).
func (q *Queue[K, T]) Next() (key K, v T, ok bool) {
	for i, k := range q.blocked {
		items := q.keys[k]
		if len(items) == 0 || items[0].started {
			continue // cannot happen: Add unblocks a key whose first item it overtakes, Cut empties blocked
		}
		if !q.policy.Admit(items[0].class, items[0].cost, q.running[items[0].class]) {
			continue
		}
		q.blocked = append(q.blocked[:i], q.blocked[i+1:]...)
		q.waitingOf[items[0].class]--
		q.startHead(items)
		return k, items[0].v, true
	}
	return key, v, false
}

// admit reports whether an item of class c may start now: none of its
// class waits before it and the policy admits it.
func (q *Queue[K, T]) admit(c Class, cost int64) bool {
	return q.waitingOf[c] == 0 && q.policy.Admit(c, cost, q.running[c])
}

func (q *Queue[K, T]) block(key K, c Class) {
	q.blocked = append(q.blocked, key)
	q.waitingOf[c]++
}

// unblock takes key, whose first item of class c waited for the policy,
// off the waiting list.
func (q *Queue[K, T]) unblock(key K, c Class) {
	if i := slices.Index(q.blocked, key); i >= 0 {
		q.blocked = slices.Delete(q.blocked, i, i+1)
		q.waitingOf[c]--
	}
}

func (q *Queue[K, T]) startHead(items []entry[T]) {
	items[0].started = true
	q.running[items[0].class].Items++
	q.running[items[0].class].Cost += items[0].cost
}

// Busy reports whether key has items, running or waiting.
func (q *Queue[K, T]) Busy(key K) bool { return len(q.keys[key]) > 0 }

// Len returns how many items key has, running or waiting.
func (q *Queue[K, T]) Len(key K) int { return len(q.keys[key]) }

// Waiting returns how many items have not started.
func (q *Queue[K, T]) Waiting() int {
	n := 0
	for _, items := range q.keys {
		for _, e := range items {
			if !e.started {
				n++
			}
		}
	}
	return n
}

// Running returns the load of class c: its items started and not done.
func (q *Queue[K, T]) Running(c Class) Load { return q.running[c] }

// Cut takes every item that has not started out of the queue and
// appends it to dst, key by key in the order each key's items entered;
// running items stay until their Done. A PG cuts its queue when its
// interval ends, and tells the cut requests' clients to resend.
func (q *Queue[K, T]) Cut(dst []T) []T {
	for k, items := range q.keys {
		i := 0
		if items[0].started {
			i = 1
		}
		for _, e := range items[i:] {
			dst = append(dst, e.v)
		}
		if i == 0 {
			delete(q.keys, k)
			continue
		}
		clear(items[1:])
		q.keys[k] = items[:1]
	}
	clear(q.blocked)
	q.blocked = q.blocked[:0]
	q.waitingOf = [numClasses]int{}
	return dst
}
