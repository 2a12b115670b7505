package blockstore

import (
	"sync"
	"sync/atomic"

	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
)

// dataCache is a bounded cache of the data file's checksum blocks, by
// device offset, for reads (Options.DataCacheBytes). It holds bytes as
// the data file has them, each block verified against its checksum when
// it was read, so a hit is copied out without reading the device or
// hashing again.
//
// Keyed by device offset, it needs no knowledge of objects: a write,
// truncate, remove, clone or rollback changes which units records map,
// and a record maps a unit only once its bytes are on the data file (or
// in the data overlay, which readers consult before the cache). Bytes
// at an offset change only when the data file is written there:
// copy-on-write data into newly allocated units, deferred writes in
// place, their replay at Open. Every one of those goes through dataFile,
// which calls invalidate once the write is done, whether it failed or
// not (a failed write may have written part).
//
// A fill races with such a write: a reader may read old bytes, the
// write land and invalidate, and the reader then insert what it read.
// Each stripe of the device has a generation that invalidate moves, in
// the same critical section as it removes the blocks; a reader notes the
// generations of its range before it reads (begin) and inserts only if
// they have not moved (fill). Either invalidate came first, and the
// generation tells the fill to give up, or the fill came first, and
// invalidate removes what it inserted.
//
// Memory is slabs of slabBlocks blocks mapped as the cache grows, up to
// the budget, outside the Go heap (dio.MapMemory: a cache of a gigabyte
// in the heap would hold the collector to the daemon's memory target),
// kept while the store is open (evicted blocks' slots are reused, so the
// page faults of fresh memory are paid once) and unmapped at Close. Eviction is CLOCK, as the
// record cache's. Readers copy out under the read lock; fills and
// invalidations take the write lock.
type dataCache struct {
	mu       sync.RWMutex
	cb       uint64 // the checksum block: the cache's unit
	limit    int    // most blocks held
	index    map[uint64]int32
	dev      []uint64 // the device offset slot i holds
	used     []bool   // slot i holds a block
	ref      []atomic.Bool
	slabs    [][]byte
	mappings [][]byte // of the slabs (dio.MapMemory), to unmap at close
	heap     bool     // a mapping failed: later slabs come from the Go heap
	free     []int32
	hand     int
	gens     [dataCacheStripes]uint64

	hits, misses, fills, refused, invalidated atomic.Uint64
}

// Stripes of the device for the fills' generations: a write refuses only
// the fills under way in the stripes it touches.
const (
	dataCacheStripes     = 256
	dataCacheStripeShift = 20  // 1 MiB of the device per stripe, modulo the stripes
	slabBlocks           = 512 // 2 MiB of 4 KiB blocks
)

// newDataCache returns a cache of at most budget bytes in blocks of cb,
// or nil if the budget holds none.
func newDataCache(budget int64, cb uint64) *dataCache {
	limit := int(budget / int64(cb))
	if limit <= 0 {
		return nil
	}
	return &dataCache{cb: cb, limit: limit, index: make(map[uint64]int32)}
}

// stripes calls f on each stripe of [off, off+n), once each.
func stripes(off, n uint64, f func(int)) {
	first, last := off>>dataCacheStripeShift, (off+max(n, 1)-1)>>dataCacheStripeShift
	if last-first >= dataCacheStripes {
		for i := range dataCacheStripes {
			f(i)
		}
		return
	}
	for s := first; s <= last; s++ {
		f(int(s % dataCacheStripes))
	}
}

// fillToken is what begin noted for a fill of a range.
type fillToken struct{ sum uint64 }

// genSumLocked returns the sum of the generations of [off, off+n)'s
// stripes: generations only grow, so the sum moves when any of them does.
func (c *dataCache) genSumLocked(off, n uint64) uint64 {
	var sum uint64
	stripes(off, n, func(i int) { sum += c.gens[i] })
	return sum
}

// begin notes the generations of [off, off+n) before the device is
// read there.
func (c *dataCache) begin(off, n uint64) fillToken {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return fillToken{c.genSumLocked(off, n)}
}

// get copies the block at off into p (one checksum block) and reports
// whether the cache had it.
func (c *dataCache) get(p []byte, off uint64) bool {
	c.mu.RLock()
	i, ok := c.index[off]
	if ok {
		copy(p, c.slot(i))
		c.ref[i].Store(true)
	}
	c.mu.RUnlock()
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return ok
}

// has reports whether the cache holds the block at off.
func (c *dataCache) has(off uint64) bool {
	c.mu.RLock()
	_, ok := c.index[off]
	c.mu.RUnlock()
	return ok
}

func (c *dataCache) slot(i int32) []byte {
	s, at := int(i)/slabBlocks, uint64(int(i)%slabBlocks)*c.cb
	return c.slabs[s][at : at+c.cb : at+c.cb]
}

// fill inserts the whole blocks of p, the bytes at off, verified, read
// after begin(tokOff, tokN) returned tok; it inserts nothing if the
// data file has been written in that range since.
func (c *dataCache) fill(tok fillToken, tokOff, tokN uint64, p []byte, off uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.genSumLocked(tokOff, tokN) != tok.sum {
		c.refused.Add(1)
		return
	}
	for at := uint64(0); at+c.cb <= uint64(len(p)); at += c.cb {
		dev := off + at
		i, ok := c.index[dev]
		if !ok {
			i = c.takeSlotLocked()
			c.index[dev] = i
			c.dev[i], c.used[i] = dev, true
		}
		copy(c.slot(i), p[at:at+c.cb])
		c.fills.Add(1)
	}
}

// takeSlotLocked returns an empty slot, growing the cache up to its
// limit or evicting a block.
func (c *dataCache) takeSlotLocked() int32 {
	if n := len(c.free); n > 0 {
		i := c.free[n-1]
		c.free = c.free[:n-1]
		return i
	}
	if len(c.dev) < c.limit {
		i := int32(len(c.dev))
		if int(i)%slabBlocks == 0 {
			var slab []byte
			if !c.heap {
				var m []byte
				if m, slab = dio.MapMemory(slabBlocks * int(c.cb)); m != nil {
					c.mappings = append(c.mappings, m)
				}
			}
			if slab == nil {
				c.heap = true
				slab = make([]byte, slabBlocks*int(c.cb))
			}
			c.slabs = append(c.slabs, slab)
		}
		c.dev = append(c.dev, 0)
		c.used = append(c.used, false)
		c.ref = append(c.ref, atomic.Bool{})
		return i
	}
	for {
		if c.hand >= len(c.dev) {
			c.hand = 0
		}
		i := int32(c.hand)
		c.hand++
		if !c.used[i] {
			continue
		}
		if c.ref[i].Swap(false) {
			continue
		}
		delete(c.index, c.dev[i])
		c.used[i] = false
		return i
	}
}

// close releases the cache's memory; nothing may use it after.
func (c *dataCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.mappings {
		dio.UnmapMemory(m)
	}
	c.mappings = nil
	c.slabs, c.index = nil, map[uint64]int32{}
	c.dev, c.used, c.ref, c.free = nil, nil, nil, nil
}

// invalidate forgets the blocks of [off, off+n) after the data file was
// written there, and refuses the fills of that range under way.
func (c *dataCache) invalidate(off, n uint64) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	stripes(off, n, func(i int) { c.gens[i]++ })
	if len(c.index) == 0 {
		return
	}
	first := off / c.cb * c.cb
	if blocks := (off + n - first + c.cb - 1) / c.cb; blocks > uint64(len(c.index)) {
		// A write larger than the cache: look at what the cache holds.
		for dev, i := range c.index {
			if dev+c.cb > off && dev < off+n {
				c.dropLocked(dev, i)
			}
		}
		return
	}
	for dev := first; dev < off+n; dev += c.cb {
		if i, ok := c.index[dev]; ok {
			c.dropLocked(dev, i)
		}
	}
}

func (c *dataCache) dropLocked(dev uint64, i int32) {
	delete(c.index, dev)
	c.used[i] = false
	c.ref[i].Store(false)
	c.free = append(c.free, i)
	c.invalidated.Add(1)
}

// DataCacheStats describes the store's cache of object data
// (Options.DataCacheBytes).
type DataCacheStats struct {
	// Hits and Misses count the blocks reads looked for; Fills the
	// blocks reads put in, Refused the fills given up because the data
	// file was written meanwhile; Invalidated the blocks writes removed.
	Hits, Misses, Fills, Refused, Invalidated uint64
	// Bytes is what the cache holds now, Limit the most it holds.
	Bytes, Limit int64
}

// DataCacheStats returns the data cache's counters (zero without one).
func (s *Store) DataCacheStats() DataCacheStats {
	c := s.dev.cache
	if c == nil {
		return DataCacheStats{}
	}
	c.mu.RLock()
	n := len(c.index)
	c.mu.RUnlock()
	return DataCacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Fills: c.fills.Load(), Refused: c.refused.Load(),
		Invalidated: c.invalidated.Load(), Bytes: int64(n) * int64(c.cb), Limit: int64(c.limit) * int64(c.cb)}
}
