package opq

import (
	"fmt"
	"testing"
)

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

// objectID has the shape of objid.ID, the OSD's keys.
type objectID struct {
	Pool                 int64
	Namespace, Key, Name string
	Snap                 uint64
	Hash                 uint32
	_                    bool // objid.ID's max flag: the same size
}

type item interface{ run() }

type op struct{}

func (*op) run() {}

// BenchmarkQueueObjectKeys is a client op's cost in the queue as the OSD
// uses it: keys shaped as object ids, items of any kind behind an
// interface (client ops, rep ops, pushes, scrub chunks).
func BenchmarkQueueObjectKeys(b *testing.B) {
	q := NewQueue[objectID, item](Today{})
	ids := make([]objectID, 64)
	for i := range ids {
		ids[i] = objectID{Pool: 1, Name: fmt.Sprintf("benchmark_data_host_12345_object%d", i), Snap: ^uint64(0), Hash: uint32(i * 7919)}
	}
	v := &op{}
	for i := range b.N {
		k := ids[i&63]
		if !q.Add(k, Client, CostOf(4096), v) {
			b.Fatal("not started")
		}
		if _, ok := q.Done(k); ok {
			b.Fatal("more")
		}
	}
}
