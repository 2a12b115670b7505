package blockstore

import (
	"bytes"
	"hash/maphash"
	"sync"
)

// recordCache is a bounded cache of object records keyed by their Pebble
// key. It holds only records as of the applied state: readers fill it
// while holding applyMu shared, the committer updates it while holding
// applyMu exclusively, so it never holds a stale record. It also
// remembers keys that have no record: a new object's first write looks it
// up on the primary (the op's stat) and again as its transaction is
// prepared, and a lookup of an absent key probes every memtable and L0
// table of Pebble, so it costs several times a present one.
//
// An inline record (a small object's) is kept as its stored value and
// decoded at every hit: a decoded record of a 4 KiB object holds about
// 460 bytes of heap in eight allocations, its value about 50 bytes in one
// that the collector need not scan, so the cache holds twice as many
// records in its budget, and a miss (a Pebble lookup) costs more than
// a hundred decodes. Larger records are kept decoded.
//
// Eviction is CLOCK: a hit sets its slot's referenced bit, and the hand
// evicts the first slot it finds without one, clearing the bits it
// passes. It approximates LRU without a list element per entry.
type recordCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	// index maps a key's hash to its slot. Hashes rather than keys keep
	// the map free of pointers for the collector; a slot's key decides,
	// and two keys of one hash take turns in the cache.
	index  map[uint64]int32
	seed   maphash.Seed
	slots  []cacheSlot
	free   []int32 // empty slots
	hand   int
	decode func([]byte) (*onode, error)
	// hits and misses count lookups (CacheStats).
	hits, misses uint64
	// recent holds the records last decoded at hits, by the value they
	// were decoded from: an op looks its object up two or three times
	// in a row (its stat, its info attribute, its data), and a decode
	// costs about ten allocations. A slot's value never changes (put
	// makes a new one) and an entry keeps its value alive, so an entry
	// whose value is the slot's is that record.
	recent     [recentDecoded]decoded
	recentNext int
}

// recentDecoded is how many decoded records the cache remembers.
const recentDecoded = 8

type decoded struct {
	enc *byte
	rec *onode
}

// cacheSlot holds one key's record. kv is the key and, if the record is
// kept encoded, its value after it (one allocation for both); else rec
// is the record, nil if the key has none. An empty slot has no kv.
type cacheSlot struct {
	kv         []byte
	rec        *onode
	keyLen     int32
	referenced bool
}

func (sl *cacheSlot) key() []byte { return sl.kv[:sl.keyLen] }

// enc returns the record's value if the slot keeps it encoded.
func (sl *cacheSlot) enc() []byte {
	if len(sl.kv) == int(sl.keyLen) {
		return nil
	}
	return sl.kv[sl.keyLen:len(sl.kv):len(sl.kv)]
}

// size is what the slot counts against the budget.
func (sl *cacheSlot) size() int64 {
	s := int64(len(sl.kv) + cacheEntryOverhead)
	if sl.rec != nil {
		s += int64(sl.rec.approxSize())
	}
	return s
}

// cacheEntryOverhead is the heap an entry costs besides its key and
// record: its slot and its index entry, with the room both keep to grow
// (TestRecordCacheAccounting).
const cacheEntryOverhead = 96

func newRecordCache(budget int64, decode func([]byte) (*onode, error)) *recordCache {
	return &recordCache{budget: budget, index: make(map[uint64]int32), seed: maphash.MakeSeed(), decode: decode}
}

// get returns key's cached record and true, or false if key is not
// cached; a nil record with true means key is known to have none. A
// record kept encoded is decoded for the caller.
func (c *recordCache) get(key string) (*onode, bool) {
	h := maphash.String(c.seed, key)
	c.mu.Lock()
	i, ok := c.index[h]
	ok = ok && string(c.slots[i].key()) == key
	return c.hitUnlock(i, ok)
}

// getBytes is get for a key the caller holds as bytes.
func (c *recordCache) getBytes(key []byte) (*onode, bool) {
	h := maphash.Bytes(c.seed, key)
	c.mu.Lock()
	i, ok := c.index[h]
	ok = ok && bytes.Equal(c.slots[i].key(), key)
	return c.hitUnlock(i, ok)
}

// hitUnlock counts a lookup, releases c.mu and decodes outside it.
func (c *recordCache) hitUnlock(i int32, ok bool) (*onode, bool) {
	if !ok {
		c.misses++
		c.mu.Unlock()
		return nil, false
	}
	c.hits++
	sl := &c.slots[i]
	sl.referenced = true
	rec, enc := sl.rec, sl.enc()
	if enc != nil {
		rec = c.recentLocked(&enc[0])
	}
	c.mu.Unlock()
	if enc == nil || rec != nil {
		return rec, true
	}
	rec, err := c.decode(enc)
	if err != nil {
		// The cache holds only values the store encoded or decoded
		// before, so this is a bug; Pebble's copy decides what the
		// record is.
		return nil, false
	}
	rec.enc = enc
	c.mu.Lock()
	c.recent[c.recentNext] = decoded{&enc[0], rec}
	c.recentNext = (c.recentNext + 1) % recentDecoded
	c.mu.Unlock()
	return rec, true
}

// recentLocked returns the record decoded from the value at enc, or nil.
func (c *recordCache) recentLocked(enc *byte) *onode {
	for _, d := range c.recent {
		if d.enc == enc {
			return d.rec
		}
	}
	return nil
}

// put caches rec under key; a nil rec records that key has no record (a
// lookup found none, or the object was removed).
func (c *recordCache) put(key string, rec *onode) {
	sl := cacheSlot{rec: rec, keyLen: int32(len(key))}
	if rec != nil && rec.inline && rec.enc != nil {
		sl.kv = make([]byte, 0, len(key)+len(rec.enc))
		sl.kv = append(append(sl.kv, key...), rec.enc...)
		sl.rec = nil
	} else {
		sl.kv = []byte(key)
	}
	size := sl.size()
	h := maphash.String(c.seed, key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.index[h]; ok {
		c.removeLocked(i, h)
	}
	if size > c.budget {
		return
	}
	if n := len(c.free); n > 0 {
		i := c.free[n-1]
		c.free = c.free[:n-1]
		c.slots[i] = sl
		c.index[h] = i
	} else {
		c.slots = append(c.slots, sl)
		c.index[h] = int32(len(c.slots) - 1)
	}
	c.used += size
	for c.used > c.budget {
		c.evictLocked()
	}
}

// evictLocked advances the hand to the first slot not referenced since
// the hand last passed it, and empties it.
func (c *recordCache) evictLocked() {
	for {
		if c.hand >= len(c.slots) {
			c.hand = 0
		}
		i := c.hand
		c.hand++
		sl := &c.slots[i]
		switch {
		case sl.kv == nil:
		case sl.referenced:
			sl.referenced = false
		default:
			c.removeLocked(int32(i), maphash.Bytes(c.seed, sl.key()))
			return
		}
	}
}

// removeLocked empties slot i, whose key hashes to h.
func (c *recordCache) removeLocked(i int32, h uint64) {
	sl := &c.slots[i]
	delete(c.index, h)
	c.used -= sl.size()
	*sl = cacheSlot{}
	c.free = append(c.free, i)
}

func (c *recordCache) usedBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// CacheStats describes the store's cache of object records.
type CacheStats struct {
	// Hits and Misses count record lookups, by readers and by
	// transactions being prepared, since Open; a miss reads Pebble.
	Hits, Misses uint64
	// Records and Bytes are what the cache holds now (Bytes as counted
	// against its budget, half of Options.CacheBytes).
	Records int
	Bytes   int64
}

// CacheStats returns the record cache's counters, for metrics: a miss
// rate that stays high means the cache is too small for the objects in
// use.
func (s *Store) CacheStats() CacheStats {
	c := s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.misses, Records: len(c.slots) - len(c.free), Bytes: c.used}
}
