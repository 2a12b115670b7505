package replication

import (
	"slices"
	"testing"
)

// BenchmarkAcks is a 3-way write's bookkeeping on its primary: Start and
// the six acks, applied wanted. BenchmarkOSDSets is what primary.go did
// before Acks, two slices of ids in one allocation, for comparison.
func BenchmarkAcks(b *testing.B) {
	acting := []int32{3, 1, 7}
	b.ReportAllocs()
	for range b.N {
		a := new(Acks) // in the OSD, a field of the write it allocates anyway
		a.Start(acting, true)
		a.Ack(3, Applied, 0)
		a.Ack(1, Applied, 0)
		if a.Ack(7, Applied, 0) != AppliedAll {
			b.Fatal("not applied")
		}
		a.Ack(1, Committed, 0)
		a.Ack(3, Committed, 0)
		if a.Ack(7, Committed, 0) != CommittedAll {
			b.Fatal("not committed")
		}
	}
}

type osdSets struct {
	pending, uncommitted []int32
	result               int32
	wantApplied          bool
}

func (w *osdSets) ack(osd int32, applied, committed bool, result int32) (appliedNow, done bool) {
	if result != 0 && w.result == 0 {
		w.result = result
	}
	wasPending := len(w.pending) > 0
	if applied || committed {
		w.pending = slices.DeleteFunc(w.pending, func(x int32) bool { return x == osd })
	}
	if committed {
		w.uncommitted = slices.DeleteFunc(w.uncommitted, func(x int32) bool { return x == osd })
	}
	return wasPending && len(w.pending) == 0 && w.wantApplied && w.result == 0, len(w.uncommitted) == 0
}

func BenchmarkOSDSets(b *testing.B) {
	acting := []int32{3, 1, 7}
	b.ReportAllocs()
	for range b.N {
		w := new(osdSets)
		n := len(acting)
		ids := make([]int32, 2*n)
		copy(ids, acting)
		copy(ids[n:], acting)
		w.pending, w.uncommitted, w.wantApplied = ids[:n:n], ids[n:], true
		w.ack(3, true, false, 0)
		w.ack(1, true, false, 0)
		if a, _ := w.ack(7, true, false, 0); !a {
			b.Fatal("not applied")
		}
		w.ack(1, false, true, 0)
		w.ack(3, false, true, 0)
		if _, d := w.ack(7, false, true, 0); !d {
			b.Fatal("not committed")
		}
	}
}
