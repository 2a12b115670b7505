package blockstore

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/alloc"
)

// TestTxnBlocksMatchAMap drives txnBlocks and a map with the same adds,
// replacements and lookups, some before the index exists and some after.
func TestTxnBlocksMatchAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		var b txnBlocks
		model := make(map[uint64]txnBlock)
		for i := range 200 {
			dev := uint64(rng.IntN(300)) * 4096
			blk := txnBlock{data: []byte{byte(round), byte(i)}, deferred: rng.IntN(2) == 0}
			switch _, held := model[dev]; {
			case !held && rng.IntN(2) == 0:
				b.addFresh(dev, blk)
				model[dev] = blk
			case rng.IntN(3) == 0:
				b.set(dev, blk)
				model[dev] = blk
			default:
				got, ok := b.get(dev)
				want, wantOK := model[dev]
				if ok != wantOK || !slices.Equal(got.data, want.data) || got.deferred != want.deferred {
					t.Fatalf("round %d: get(%d) = %v %v, want %v %v", round, dev, got, ok, want, wantOK)
				}
			}
		}
		sorted := b.sorted()
		if len(sorted) != len(model) {
			t.Fatalf("round %d: %d blocks, want %d", round, len(sorted), len(model))
		}
		for i, x := range sorted {
			if i > 0 && sorted[i-1].dev >= x.dev {
				t.Fatalf("round %d: blocks out of order at %d", round, i)
			}
			if want := model[x.dev]; !slices.Equal(x.data, want.data) || x.deferred != want.deferred {
				t.Fatalf("round %d: block %d = %v, want %v", round, x.dev, x.txnBlock, want)
			}
		}
	}
}

// TestFreshUnitsContains checks both the scan of few extents and the
// search of many against every unit of a small device.
func TestFreshUnitsContains(t *testing.T) {
	const au, units = 4096, 2000
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, maxScanExtents, maxScanExtents + 1, 100} {
		var f freshUnits
		in := make([]bool, units)
		for range n {
			start, length := rng.IntN(units-8), 1+rng.IntN(8)
			if slices.Contains(in[start:start+length], true) {
				continue // extents never overlap
			}
			f.add([]alloc.Extent{{Offset: uint64(start) * au, Length: uint64(length) * au}})
			for u := start; u < start+length; u++ {
				in[u] = true
			}
			if n > maxScanExtents && rng.IntN(4) == 0 {
				_ = f.contains(0) // the sorted copy must follow later adds
			}
		}
		for u := range units {
			if got := f.contains(uint64(u) * au); got != in[u] {
				t.Fatalf("%d extents: contains(unit %d) = %v, want %v", n, u, got, in[u])
			}
		}
	}
}
