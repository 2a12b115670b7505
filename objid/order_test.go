package objid

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestReverseBits(t *testing.T) {
	for _, c := range []struct{ in, want uint32 }{
		{0, 0}, {1, 0x80000000}, {0x80000000, 1}, {0xf0, 0x0f000000}, {0x12345678, 0x1e6a2c48},
	} {
		if got := ReverseBits(c.in); got != c.want {
			t.Errorf("ReverseBits(%#x) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

func TestCompareFieldOrder(t *testing.T) {
	base := ID{Pool: 1, Hash: 0x1, Namespace: "n", Key: "k", Name: "o", Snap: 5}
	cases := []struct {
		name string
		a, b ID
		want int
	}{
		{"max last", Max(), ID{Pool: 1 << 62}, 1},
		{"max equal", Max(), Max(), 0},
		{"pool first", ID{Pool: 1, Hash: 0xffffffff}, ID{Pool: 2}, -1},
		{"reversed hash", ID{Pool: 1, Hash: 0x1}, ID{Pool: 1, Hash: 0x2}, 1}, // 0x80000000 > 0x40000000
		{"hash before namespace", ID{Pool: 1, Hash: 0x2, Namespace: "z"}, ID{Pool: 1, Hash: 0x1, Namespace: "a"}, -1},
		{"namespace before name", ID{Pool: 1, Namespace: "a", Name: "z"}, ID{Pool: 1, Namespace: "b", Name: "a"}, -1},
		{"locator when a key is set", ID{Pool: 1, Key: "b", Name: "a"}, ID{Pool: 1, Name: "c"}, -1},
		{"key compared to name", ID{Pool: 1, Key: "d", Name: "a"}, ID{Pool: 1, Name: "c"}, 1},
		{"name without keys", ID{Pool: 1, Name: "a"}, ID{Pool: 1, Name: "b"}, -1},
		{"snap last", ID{Pool: 1, Name: "a", Snap: 3}, ID{Pool: 1, Name: "a", Snap: NoSnap}, -1},
		{"equal", base, base, 0},
	}
	for _, c := range cases {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("%s: Compare(%v, %v) = %d, want %d", c.name, c.a, c.b, got, c.want)
		}
		if got := Compare(c.b, c.a); got != -c.want {
			t.Errorf("%s: Compare reversed = %d, want %d", c.name, got, -c.want)
		}
	}
}

// TestPGsAreContiguous checks the property the order exists for: for any
// power-of-two pg count, the objects of one PG (hash & mask == ps) form one
// contiguous run of the sorted order.
func TestPGsAreContiguous(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var ids []ID
	for i := range 2000 {
		ids = append(ids, New(7, fmt.Sprint(r.IntN(3)), "", fmt.Sprintf("obj%d", i), NoSnap))
	}
	slices.SortFunc(ids, Compare)
	for bits := range 9 {
		mask := uint32(1)<<bits - 1
		seen := map[uint32]bool{}
		prev := uint32(0)
		for i, id := range ids {
			ps := id.Hash & mask
			if i > 0 && ps != prev && seen[ps] {
				t.Fatalf("pg_num %d: pg %x is split in the order", mask+1, ps)
			}
			seen[ps], prev = true, ps
		}
	}
}

func TestCompareIsATotalOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pick := func() ID {
		id := New(int64(r.IntN(2)), []string{"", "a", "b"}[r.IntN(3)], []string{"", "k", "m"}[r.IntN(3)],
			[]string{"x", "y", "z"}[r.IntN(3)], []uint64{1, NoSnap, SnapDir}[r.IntN(3)])
		if r.IntN(10) == 0 {
			return Max()
		}
		return id
	}
	for range 20000 {
		a, b, c := pick(), pick(), pick()
		if (Compare(a, b) == 0) != (a == b) {
			t.Fatalf("Compare(%v, %v) = 0 disagrees with ==", a, b)
		}
		if Compare(a, b) <= 0 && Compare(b, c) <= 0 && Compare(a, c) > 0 {
			t.Fatalf("not transitive: %v %v %v", a, b, c)
		}
	}
}
