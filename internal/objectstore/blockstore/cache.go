package blockstore

import (
	"encoding/binary"
	"hash/maphash"
	"sync"

	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
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
	// index finds a key's slot by its hash; the slot's key decides.
	index slotIndex
	seed  maphash.Seed
	slots []cacheSlot
	// referenced has a bit per slot, set by a hit and cleared by the
	// hand.
	referenced []uint64
	free       []int32 // empty slots
	hand       int
	decode     func([]byte) (*format.Onode, error)
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
	rec *format.Onode
}

// cacheSlot holds one key's record. kv is the key's length (a uvarint),
// the key and, if the record is kept encoded, its value after it (one
// allocation for all three); else rec is the record, nil if the key has
// none. An empty slot has no kv. Keeping the length in kv and the
// referenced bits in recordCache.referenced makes a slot 32 bytes, not 40.
type cacheSlot struct {
	kv  []byte
	rec *format.Onode
}

// newCacheSlot returns a slot for the key head+tail and enc or rec.
func newCacheSlot(head, tail string, enc []byte, rec *format.Onode) cacheSlot {
	var n [binary.MaxVarintLen64]byte
	w := binary.PutUvarint(n[:], uint64(len(head)+len(tail)))
	kv := make([]byte, 0, w+len(head)+len(tail)+len(enc))
	kv = append(append(append(append(kv, n[:w]...), head...), tail...), enc...)
	return cacheSlot{kv: kv, rec: rec}
}

// split returns the slot's key and its encoded value, if it has one.
func (sl *cacheSlot) split() (key, enc []byte) {
	n, w := binary.Uvarint(sl.kv)
	key = sl.kv[w : w+int(n) : w+int(n)]
	if rest := sl.kv[w+int(n):]; len(rest) > 0 {
		enc = rest
	}
	return key, enc
}

func (sl *cacheSlot) key() []byte {
	k, _ := sl.split()
	return k
}

// size is what the slot counts against the budget.
func (sl *cacheSlot) size() int64 {
	s := int64(len(sl.kv) + cacheEntryOverhead)
	if sl.rec != nil {
		s += int64(sl.rec.ApproxSize())
	}
	return s
}

// cacheEntryOverhead is the heap an entry costs besides its key and
// record: its slot and its index entry, with the room both keep to grow
// (TestRecordCacheAccounting).
const cacheEntryOverhead = 64

func newRecordCache(budget int64, decode func([]byte) (*format.Onode, error)) *recordCache {
	return &recordCache{budget: budget, seed: maphash.MakeSeed(), decode: decode}
}

// get returns key's cached record and true, or false if key is not
// cached; a nil record with true means key is known to have none. A
// record kept encoded is decoded for the caller.
func (c *recordCache) get(key string) (*format.Onode, bool) { return lookup(c, key) }

// getBytes is get for a key the caller holds as bytes.
func (c *recordCache) getBytes(key []byte) (*format.Onode, bool) { return lookup(c, key) }

func lookup[K string | []byte](c *recordCache, key K) (*format.Onode, bool) {
	lo, hi := format.LocatorSpan(key)
	var mh maphash.Hash
	mh.SetSeed(c.seed)
	switch k := any(key).(type) {
	case string:
		mh.WriteString(k[:lo])
		mh.WriteString(k[hi:])
	case []byte:
		mh.Write(k[:lo])
		mh.Write(k[hi:])
	}
	h := mh.Sum64()
	c.mu.Lock()
	_, i, ok := c.index.find(h, func(i int32) bool { return sameKey(c.slots[i].key(), key, lo, hi) })
	return c.hitUnlock(i, ok)
}

// The cache holds an object key without its locator when the locator
// only repeats the name (the object has no key of its own, as almost
// none has): that second copy of the name is about a sixth of a 4 KiB
// object's entry under names like rados bench's, and the budget holds
// that many more records (TestRecordCacheAccounting: 250 bytes of heap a
// record against 282). Lookups hash and compare the key as if it were
// cut the same way. A cut key ends in 0 (no key of its own) and keeps the
// name, so it can equal no other object's key, cut or whole. That holds
// for keys appendObjectKey makes, the only keys the cache is given:
// arbitrary bytes could be cut into another key's bytes.

// sameKey reports whether the cache's form of a key, cached, is key
// without its bytes [lo, hi).
func sameKey[K string | []byte](cached []byte, key K, lo, hi int) bool {
	return len(cached) == len(key)-(hi-lo) && string(cached[:lo]) == string(key[:lo]) && string(cached[lo:]) == string(key[hi:])
}

// hitUnlock counts a lookup, releases c.mu and decodes outside it.
func (c *recordCache) hitUnlock(i int32, ok bool) (*format.Onode, bool) {
	if !ok {
		c.misses++
		c.mu.Unlock()
		return nil, false
	}
	c.hits++
	c.referenced[i/64] |= 1 << (i % 64)
	sl := &c.slots[i]
	rec := sl.rec
	_, enc := sl.split()
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
	rec.Enc = enc
	c.mu.Lock()
	c.recent[c.recentNext] = decoded{&enc[0], rec}
	c.recentNext = (c.recentNext + 1) % recentDecoded
	c.mu.Unlock()
	return rec, true
}

// recentLocked returns the record decoded from the value at enc, or nil.
func (c *recordCache) recentLocked(enc *byte) *format.Onode {
	for _, d := range c.recent {
		if d.enc == enc {
			return d.rec
		}
	}
	return nil
}

// put caches rec under key; a nil rec records that key has no record (a
// lookup found none, or the object was removed).
func (c *recordCache) put(key string, rec *format.Onode) {
	lo, hi := format.LocatorSpan(key)
	var enc []byte
	if rec != nil && rec.Inline && rec.Enc != nil {
		enc, rec = rec.Enc, nil
	}
	sl := newCacheSlot(key[:lo], key[hi:], enc, rec)
	k := sl.key()
	size := sl.size()
	h := maphash.Bytes(c.seed, k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if pos, i, ok := c.index.find(h, func(i int32) bool { return string(c.slots[i].key()) == string(k) }); ok {
		c.removeLocked(pos, i)
	}
	if size > c.budget {
		return
	}
	var i int32
	if n := len(c.free); n > 0 {
		i = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		i = int32(len(c.slots))
		c.slots = append(c.slots, cacheSlot{})
		if int(i)/64 == len(c.referenced) {
			c.referenced = append(c.referenced, 0)
		}
	}
	c.slots[i] = sl
	c.referenced[i/64] &^= 1 << (i % 64)
	c.index.insert(h, i)
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
		i := int32(c.hand)
		c.hand++
		word, bit := &c.referenced[i/64], uint64(1)<<(i%64)
		switch {
		case c.slots[i].kv == nil:
		case *word&bit != 0:
			*word &^= bit
		default:
			h := maphash.Bytes(c.seed, c.slots[i].key())
			pos, _, _ := c.index.find(h, func(s int32) bool { return s == i })
			c.removeLocked(pos, i)
			return
		}
	}
}

// removeLocked empties slot i, whose index entry is at pos (every slot
// in use has one, TestRecordCacheModel; -1 would be none).
func (c *recordCache) removeLocked(pos int, i int32) {
	sl := &c.slots[i]
	if pos >= 0 {
		c.index.deleteAt(pos)
	}
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
