package snaps

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bitmap is the naive model of an extent set over [0, 64).
type bitmap [64]bool

func (b bitmap) extents() Extents {
	var out Extents
	for i := 0; i < len(b); i++ {
		if !b[i] {
			continue
		}
		j := i
		for j < len(b) && b[j] {
			j++
		}
		out = append(out, Extent{uint64(i), uint64(j - i)})
		i = j
	}
	return out
}

// TestExtentsAgainstBitmap checks Subtract and Intersect against
// per-byte sets.
func TestExtentsAgainstBitmap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	random := func() bitmap {
		var b bitmap
		for i := range b {
			b[i] = r.IntN(3) > 0
		}
		return b
	}
	for range 2000 {
		a, b := random(), random()
		x, y := a.extents(), b.extents()
		if err := x.validate(64); err != nil {
			t.Fatal(err)
		}
		var inter bitmap
		for i := range inter {
			inter[i] = a[i] && b[i]
		}
		if got := x.Intersect(y); !got.Equal(inter.extents()) {
			t.Fatalf("%v ∩ %v = %v, want %v", x, y, got, inter.extents())
		}
		off, n := uint64(r.IntN(64)), uint64(r.IntN(20))
		if r.IntN(5) == 0 {
			n = math.MaxUint64
		}
		sub := a
		for i := range sub {
			if uint64(i) >= off && (n == math.MaxUint64 || uint64(i) < off+n) {
				sub[i] = false
			}
		}
		if got := x.Subtract(off, n); !got.Equal(sub.extents()) {
			t.Fatalf("%v - %d~%d = %v, want %v", x, off, n, got, sub.extents())
		}
		if x.Bytes() != uint64(countTrue(a)) {
			t.Fatalf("%v: Bytes %d", x, x.Bytes())
		}
	}
}

func countTrue(b bitmap) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

func TestExtentsValidate(t *testing.T) {
	for name, x := range map[string]Extents{
		"empty extent": {{1, 0}},
		"adjacent":     {{0, 2}, {2, 1}},
		"overlapping":  {{0, 3}, {1, 1}},
		"unsorted":     {{5, 1}, {1, 1}},
		"past limit":   {{8, 4}},
		"overflowing":  {{2, math.MaxUint64}},
	} {
		if err := x.validate(10); err == nil {
			t.Errorf("%s: %v accepted", name, x)
		}
	}
}
