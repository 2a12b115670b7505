package blockstore

import (
	"container/list"
	"sync"
)

// recordCache is a bounded LRU of decoded object records keyed by their
// Pebble key. It holds only records as of the applied state: readers
// fill it while holding applyMu shared, the committer updates it while
// holding applyMu exclusively, so it never holds a stale record. It also
// remembers keys that have no record: a new object's first write looks it
// up on the primary (the op's stat) and again as its transaction is
// prepared, and a lookup of an absent key probes every memtable and L0
// table of Pebble, so it costs several times a present one.
type recordCache struct {
	mu      sync.Mutex
	budget  int64
	used    int64
	entries map[string]*list.Element
	lru     list.List // front = most recent; values are *cacheEntry
	// hits and misses count lookups (CacheStats).
	hits, misses uint64
}

type cacheEntry struct {
	key  string
	rec  *onode
	size int64
}

// cacheEntryOverhead is the heap an entry costs besides its record and
// key: the list element, the cacheEntry and the index map's slot.
const cacheEntryOverhead = 160

func newRecordCache(budget int64) *recordCache {
	return &recordCache{budget: budget, entries: make(map[string]*list.Element)}
}

// get returns key's cached record and true, or false if key is not
// cached; a nil record with true means key is known to have none.
func (c *recordCache) get(key string) (*onode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	return c.hitLocked(e, ok)
}

// getBytes is get for a key the caller holds as bytes: the lookup itself
// does not copy it into a string.
func (c *recordCache) getBytes(key []byte) (*onode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[string(key)]
	return c.hitLocked(e, ok)
}

func (c *recordCache) hitLocked(e *list.Element, ok bool) (*onode, bool) {
	if !ok {
		c.misses++
		return nil, false
	}
	c.hits++
	c.lru.MoveToFront(e)
	return e.Value.(*cacheEntry).rec, true
}

// put caches rec under key; a nil rec records that key has no record (a
// lookup found none, or the object was removed).
func (c *recordCache) put(key string, rec *onode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.used -= e.Value.(*cacheEntry).size
		c.lru.Remove(e)
		delete(c.entries, key)
	}
	size := int64(len(key) + cacheEntryOverhead)
	if rec != nil {
		size += int64(rec.approxSize())
	}
	if size > c.budget {
		return
	}
	c.entries[key] = c.lru.PushFront(&cacheEntry{key: key, rec: rec, size: size})
	c.used += size
	for c.used > c.budget {
		e := c.lru.Back()
		ce := e.Value.(*cacheEntry)
		c.lru.Remove(e)
		delete(c.entries, ce.key)
		c.used -= ce.size
	}
}

func (c *recordCache) usedBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// CacheStats describes the store's cache of decoded object records.
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
	return CacheStats{Hits: c.hits, Misses: c.misses, Records: len(c.entries), Bytes: c.used}
}
