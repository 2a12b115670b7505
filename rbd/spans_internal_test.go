package rbd

import (
	"math/rand/v2"
	"testing"
)

// spans against a byte mask: random adds and removes keep the runs in
// order, disjoint and not touching, holding exactly the mask's bytes.
func TestSpansAgainstMask(t *testing.T) {
	const n = 64
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var s spans
		var mask [n]bool
		for range 20 {
			lo := uint32(rng.IntN(n))
			hi := lo + uint32(rng.IntN(n-int(lo)+1))
			add := rng.IntN(3) > 0
			if add {
				s = s.add(lo, hi)
			} else {
				s = s.remove(lo, hi)
			}
			for i := lo; i < hi; i++ {
				mask[i] = add
			}
			var size uint64
			for i, r := range s {
				if r.lo >= r.hi || (i > 0 && s[i-1].hi >= r.lo) {
					t.Fatalf("round %d: runs %v out of order, empty or touching", round, s)
				}
				size += uint64(r.hi - r.lo)
			}
			var want uint64
			for i := range uint32(n) {
				in := s.covers(i, i+1)
				if in != mask[i] {
					t.Fatalf("round %d: byte %d in %v: %v, want %v", round, i, s, in, mask[i])
				}
				if in {
					want++
				}
			}
			if size != want || s.size() != want {
				t.Fatalf("round %d: size %d/%d, want %d", round, size, s.size(), want)
			}
			a := uint32(rng.IntN(n))
			b := a + uint32(rng.IntN(n-int(a)+1))
			all := true
			for i := a; i < b; i++ {
				all = all && mask[i]
			}
			if s.covers(a, b) != all {
				t.Fatalf("round %d: covers(%d, %d) of %v: %v", round, a, b, s, !all)
			}
			for _, r := range s.clip(a, b) {
				if r.lo < a || r.hi > b {
					t.Fatalf("clip(%d, %d) of %v: %v", a, b, s, r)
				}
			}
		}
	}
}
