package osdmap

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

func TestSplitBits(t *testing.T) {
	for _, c := range []struct {
		seed, pgNum uint32
		want        uint8
	}{
		{0, 1, 0},
		{0, 2, 1}, {1, 2, 1},
		{3, 8, 3}, {7, 8, 3},
		// pg_num 12: seeds 0-3 have their sibling (8-11) and keep 4
		// bits; 4-7 have none yet (12-15) and hold 3 bits' worth.
		{0, 12, 4}, {3, 12, 4}, {4, 12, 3}, {7, 12, 3}, {8, 12, 4}, {11, 12, 4},
		{5, 64, 6}, {63, 64, 6},
		{0, 65, 7}, {1, 65, 6}, {64, 65, 7},
	} {
		if got := SplitBits(c.seed, c.pgNum); got != c.want {
			t.Errorf("SplitBits(%d, %d) = %d, want %d", c.seed, c.pgNum, got, c.want)
		}
	}
}

// The PGs' ranges tile the reversed-hash order, and every hash's reversed
// form lies in its own PG's range.
func TestBitwiseRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []uint32{1, 2, 3, 5, 8, 12, 13, 64, 100, 1000} {
		starts := map[uint64]uint64{}
		for s := range n {
			a, b := BitwiseRange(s, n)
			if a >= b || b > 1<<32 {
				t.Fatalf("pg_num %d, pg %d: range [%#x, %#x)", n, s, a, b)
			}
			starts[a] = b
		}
		// Walking from 0 by each range's end visits every PG once and
		// ends exactly at 1<<32.
		at, seen := uint64(0), 0
		for at < 1<<32 {
			end, ok := starts[at]
			if !ok {
				t.Fatalf("pg_num %d: no range starts at %#x", n, at)
			}
			at, seen = end, seen+1
		}
		if at != 1<<32 || seen != int(n) {
			t.Fatalf("pg_num %d: walk ended at %#x after %d ranges", n, at, seen)
		}
		for range 1000 {
			h := rng.Uint32()
			s := StableMod(h, n, PGMask(n))
			a, b := BitwiseRange(s, n)
			if r := uint64(bits.Reverse32(h)); r < a || r >= b {
				t.Fatalf("pg_num %d: hash %#x (pg %d, reversed %#x) outside [%#x, %#x)", n, h, s, r, a, b)
			}
		}
	}
}
