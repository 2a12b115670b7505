package osdmap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSnapIntervalsSubtractIntersectUnion checks Subtract, Intersect and Union of
// random sets against plain sets, and that the results are canonical.
func TestSnapIntervalsSubtractIntersectUnion(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 11))
	for range 200 {
		var a, b SnapIntervals
		for range r.IntN(40) {
			a = a.Insert(1 + r.Uint64N(60))
		}
		for range r.IntN(40) {
			b = b.Insert(1 + r.Uint64N(60))
		}
		ac, bc := slices.Clone(a), slices.Clone(b)
		sub, inter, union := a.Subtract(b), a.Intersect(b), a.Union(b)
		for _, s := range []SnapIntervals{sub, inter, union} {
			if err := s.validate(); err != nil {
				t.Fatalf("%s, %s: result %s: %v", a, b, s, err)
			}
		}
		for id := range uint64(70) {
			if sub.Contains(id) != (a.Contains(id) && !b.Contains(id)) {
				t.Fatalf("%s.Subtract(%s) = %s: wrong at %d", a, b, sub, id)
			}
			if union.Contains(id) != (a.Contains(id) || b.Contains(id)) {
				t.Fatalf("%s.Union(%s) = %s: wrong at %d", a, b, union, id)
			}
			if inter.Contains(id) != (a.Contains(id) && b.Contains(id)) {
				t.Fatalf("%s.Intersect(%s) = %s: wrong at %d", a, b, inter, id)
			}
		}
		if !slices.Equal(a, ac) || !slices.Equal(b, bc) {
			t.Fatal("an operand changed")
		}
	}
}
