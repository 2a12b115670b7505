package monstore

import pb "go.etcd.io/raft/v3/raftpb"

// entryCache holds the newest log entries, contiguous and ending at the
// last index, within a byte budget. A follower that keeps up and the
// leader's appends to followers that keep up read only from it. Entries in
// it are never mutated, since raft may hold them too, and Entries copies
// the slice it returns, so the cache may reuse its own. It is guarded by
// Store.mu.
type entryCache struct {
	budget uint64
	ents   []*pb.Entry // ents[i] has index first+i
	first  uint64
	bytes  uint64
}

// get returns the cached entry at index, or nil.
func (c *entryCache) get(index uint64) *pb.Entry {
	if len(c.ents) == 0 || index < c.first || index >= c.first+uint64(len(c.ents)) {
		return nil
	}
	return c.ents[index-c.first]
}

// append records ents, contiguous and starting at or before the index after
// the cached ones (the log was truncated there), or anywhere if the cache
// does not reach that far back.
func (c *entryCache) append(ents []*pb.Entry) {
	if len(ents) == 0 || c.budget == 0 {
		return
	}
	start := ents[0].GetIndex()
	switch end := c.first + uint64(len(c.ents)); {
	case len(c.ents) == 0 || start < c.first || start > end:
		c.reset()
		c.first = start
	case start < end:
		for _, e := range c.ents[start-c.first:] {
			c.bytes -= entrySize(e)
		}
		clear(c.ents[start-c.first:])
		c.ents = c.ents[:start-c.first]
	}
	for _, e := range ents {
		c.ents = append(c.ents, e)
		c.bytes += entrySize(e)
	}
	c.evict()
}

// dropThrough forgets entries at or below index (compacted away).
func (c *entryCache) dropThrough(index uint64) {
	for len(c.ents) > 0 && c.first <= index {
		c.bytes -= entrySize(c.ents[0])
		c.ents[0] = nil
		c.ents = c.ents[1:]
		c.first++
	}
}

// evict drops the oldest entries until the cache fits its budget.
func (c *entryCache) evict() {
	for c.bytes > c.budget && len(c.ents) > 0 {
		c.dropThrough(c.first)
	}
}

func (c *entryCache) reset() {
	c.ents, c.first, c.bytes = nil, 0, 0
}
