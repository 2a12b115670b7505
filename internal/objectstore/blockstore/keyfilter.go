package blockstore

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// A keyFilter is a blocked Bloom filter over the keys of object records:
// when it says a key is absent, no record has that key, so a lookup of a
// new object's record need not go to Pebble. Pebble's Get of an absent
// key probes every memtable and every L0 sublevel (each behind its own
// Bloom filter) and then searches L6, whose filters Get never reads: about
// 12 µs, a tenth of the OSDs' CPU under replicated 4 KiB creates, where
// the primary's stat and each replica's prepare look a new object up
// (docs/benchmarks/2026-11-27.md, "Session 24").
//
// Each key sets filterProbes bits inside one 512-bit block (a cache
// line), so a lookup touches one line. At filterBitsPerKey bits per key
// of its capacity it answers "maybe" for about 1.2% of absent keys when
// full, far fewer while it is not. Keys are never taken out: a removed
// object's key stays until the filter is rebuilt (filterbuild.go), which
// only costs the Pebble lookups it would have made anyway.
//
// The bits are atomic so that lookups need no lock while keys are added.
type keyFilter struct {
	blocks   []filterBlock
	capacity int64        // keys it holds at its designed false-positive rate
	created  atomic.Int64 // records it was filled with plus new ones since (a few counted twice)
}

type filterBlock [filterBlockWords]atomic.Uint64

const (
	filterBlockWords = 8 // 512 bits
	filterBitsPerKey = 10
	filterProbes     = 7
)

// newKeyFilter returns an empty filter sized for capacity keys.
func newKeyFilter(capacity int64) *keyFilter {
	capacity = max(capacity, 1)
	n := (capacity*filterBitsPerKey + filterBlockWords*64 - 1) / (filterBlockWords * 64)
	return &keyFilter{blocks: make([]filterBlock, n), capacity: capacity}
}

// add sets the bits of the key whose hash is h.
func (f *keyFilter) add(h uint64) {
	b := f.block(h)
	p := uint32(h)
	step := bits.RotateLeft32(p, 15) | 1 // odd: seven different bits of the block
	for range filterProbes {
		b[p/64%filterBlockWords].Or(1 << (p % 64))
		p += step
	}
}

// mayContain reports whether the key whose hash is h may have been added.
func (f *keyFilter) mayContain(h uint64) bool {
	b := f.block(h)
	p := uint32(h)
	step := bits.RotateLeft32(p, 15) | 1 // odd: seven different bits of the block
	for range filterProbes {
		if b[p/64%filterBlockWords].Load()&(1<<(p%64)) == 0 {
			return false
		}
		p += step
	}
	return true
}

// block picks h's block by its high bits (the probes take the low
// half): h·n/2⁶⁴, without a division.
func (f *keyFilter) block(h uint64) *filterBlock {
	i, _ := bits.Mul64(h, uint64(len(f.blocks)))
	return &f.blocks[i]
}

// full reports whether more new records were added than it was sized for.
func (f *keyFilter) full() bool { return f.created.Load() > f.capacity }

// keyHash hashes a record key for the store's filters.
func keyHash(seed maphash.Seed, key string) uint64 { return maphash.String(seed, key) }
