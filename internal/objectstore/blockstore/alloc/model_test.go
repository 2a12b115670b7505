package alloc

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestModel compares the allocator with the naive model of harness over
// seeded random sequences of Allocate, Release and MarkUsed, after every
// step. A failure names the seed and the last operations.
func TestModel(t *testing.T) {
	steps := 2000
	if testing.Short() {
		steps = 300
	}
	for _, c := range []struct{ size, unit uint64 }{
		{size: 64, unit: 1},
		{size: 1000, unit: 8},
		{size: 256 << 12, unit: 4096},
		{size: 1 << 20, unit: 64 << 10},
	} {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("size=%d/unit=%d/seed=%d", c.size, c.unit, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, c.size))
				h := newHarness(t, c.size, c.unit)
				for range steps {
					h.randomOp(rng.Uint64N)
				}
			})
		}
	}
}

// FuzzAllocator decodes a device geometry and a sequence of operations from
// the input and checks the allocator against the model after each.
func FuzzAllocator(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 200, 0, 10, 0, 50, 1, 0, 45, 0, 99, 0})
	f.Add([]byte{0, 255, 10, 3, 10, 2, 20, 1, 1, 70, 1, 1, 85, 2, 3, 4})
	f.Add([]byte("\x05\x40allocate release markused fragments merge split"))
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func(n uint64) uint64 {
			if len(data) == 0 {
				return 0
			}
			v := uint64(data[0])
			data = data[1:]
			if n > 256 && len(data) > 0 {
				v = v<<8 | uint64(data[0])
				data = data[1:]
			}
			return v % n
		}
		unit := uint64(1) << next(13)
		size := (1+next(256))*unit + next(unit)
		h := newHarness(t, size, unit)
		// A bounded number of operations keeps each run, and so the
		// fuzzer's minimisation, fast.
		for i := 0; i < 100 && len(data) > 0; i++ {
			h.randomOp(next)
		}
	})
}
