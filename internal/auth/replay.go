package auth

import "time"

// replayCache remembers the authorizers a service accepted while their
// timestamps are inside the skew window, so a copy is refused. Entries
// leave in insertion order; each one's expiry is raised to its
// predecessor's, so the queue stays ordered and an entry is never dropped
// before its own expiry.
type replayCache struct {
	max   int
	seen  map[replayKey]struct{}
	queue []replayEntry
	last  time.Time
}

type replayKey struct {
	globalID uint64
	nonce    [nonceSize]byte
}

type replayEntry struct {
	key     replayKey
	expires time.Time
}

// admit records k until expires. It returns false, recording nothing, for
// a key already recorded (a replay) or when the cache is full of unexpired
// entries (full is then true).
func (c *replayCache) admit(k replayKey, now, expires time.Time) (ok, full bool) {
	if c.seen == nil {
		c.seen = make(map[replayKey]struct{})
	}
	c.prune(now)
	if _, dup := c.seen[k]; dup {
		return false, false
	}
	if len(c.seen) >= c.max {
		return false, true
	}
	if expires.Before(c.last) {
		expires = c.last
	}
	c.last = expires
	c.seen[k] = struct{}{}
	c.queue = append(c.queue, replayEntry{k, expires})
	return true, false
}

func (c *replayCache) prune(now time.Time) {
	i := 0
	for i < len(c.queue) && !now.Before(c.queue[i].expires) {
		delete(c.seen, c.queue[i].key)
		i++
	}
	if i > 0 {
		c.queue = append(c.queue[:0], c.queue[i:]...)
	}
}
