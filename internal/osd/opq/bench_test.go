package opq

import "testing"

// BenchmarkQueueAddDone is a client op's cost in the queue: one Add that
// starts it and one Done that finds the object idle. BenchmarkMapAddDone
// is the map of slices the OSD used before, for comparison.
func BenchmarkQueueAddDone(b *testing.B) {
	q := NewQueue[int, *int](Today{})
	v := new(int)
	for i := range b.N {
		if !q.Add(i&63, Client, CostOf(4096), v) {
			b.Fatal("not started")
		}
		if _, ok := q.Done(i & 63); ok {
			b.Fatal("more")
		}
	}
}

func BenchmarkMapAddDone(b *testing.B) {
	m := map[int][]*int{}
	v := new(int)
	for i := range b.N {
		k := i & 63
		m[k] = append(m[k], v)
		if len(m[k]) != 1 {
			b.Fatal("not first")
		}
		if q := m[k]; len(q) > 0 && q[0] == v {
			m[k] = q[1:]
		}
		if len(m[k]) == 0 {
			delete(m, k)
		}
	}
}
