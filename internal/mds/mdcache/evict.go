package mdcache

import (
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
)

// The cache holds at most about Config.CacheInodes inodes: when a read
// of a fragment takes it past the bound, the request that read it runs
// to its end and then clean fragments are evicted, least recently used
// first, until the cache is within the bound again or nothing more may
// go. A fragment stays while it is dirty (or new, or removed and not yet
// written back), while it belongs to the rank's mdsdir or a stray
// directory, and while any inode in it has caps (open files among
// them), file locks, cap or lock state a request waits on, a pending
// truncation, a purge, a backtrace to write, or is a directory with a
// cached fragment (children go before their parents, so every cached
// fragment's ancestors stay cached). The bound is therefore soft: dirty
// and pinned state is never dropped to meet it. An evicted name is read
// back with its fragment by the next request that needs it.

// lruTouch marks f as just used. c.mu is held.
func (c *Cache) lruTouch(f *cfrag) {
	if f.elem != nil && f.elem.Value == f {
		c.lru.MoveToFront(f.elem)
		return
	}
	f.elem = c.lru.PushFront(f)
}

// evictIfDue evicts if a read took the cache past its bound. c.mu is
// not held.
func (c *Cache) evictIfDue() {
	if !c.evictDue.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evict()
}

// evict drops least recently used clean fragments until the cache holds
// at most CacheInodes inodes or none may go. c.mu is held.
func (c *Cache) evict() {
	c.evictDue.Store(false)
	limit := c.cfg.CacheInodes
	for e := c.lru.Back(); e != nil && len(c.inodes) > limit; {
		prev := e.Prev()
		f := e.Value.(*cfrag)
		switch {
		case c.frags[f.key] != f:
			// Gone already (a removed directory written back).
			c.lru.Remove(e)
			f.elem = nil
		case c.evictable(f):
			c.dropFrag(f)
		}
		e = prev
	}
}

// evictable reports whether f may leave the cache. c.mu is held.
func (c *Cache) evictable(f *cfrag) bool {
	if f.isDirty() || f.isNew || f.removed || mdtypes.IsBase(f.key.dir) || isStrayDir(f.key.dir) {
		return false
	}
	if _, ok := c.loading[f.key]; ok {
		return false
	}
	for name, d := range f.dentries {
		if d.Inode == nil {
			continue
		}
		ino := d.Inode.Ino
		ci := c.inodes[ino]
		if ci == nil || ci.parent != f.key || ci.name != name {
			continue
		}
		if ci.stray || c.purging[ino] || c.truncs[ino] != nil || c.locks.byIno[ino] != nil {
			return false
		}
		if _, ok := c.backtraces[ino]; ok {
			return false
		}
		if len(c.lk.Clients(locker.Ino(ino))) > 0 {
			return false
		}
		if ci.in.IsDir() && c.dirCached(ci.in) {
			return false
		}
	}
	return true
}

// dirCached reports whether any fragment of directory dir is cached.
func (c *Cache) dirCached(dir *mdtypes.Inode) bool {
	if c.frags[fragKey{dir.Ino, mdtypes.RootFrag}] != nil {
		return true
	}
	for _, fr := range dir.Frags {
		if c.frags[fragKey{dir.Ino, fr}] != nil {
			return true
		}
	}
	return false
}

// dropFrag evicts f and the inodes of its primary dentries, unless the
// locker refuses to forget one (a request waits on its locks). c.mu is
// held.
func (c *Cache) dropFrag(f *cfrag) {
	for _, d := range f.dentries {
		if d.Inode != nil && !c.lk.Drop(locker.Ino(d.Inode.Ino)) {
			return
		}
	}
	for name, d := range f.dentries {
		c.unindex(f.key, name, d)
	}
	delete(c.frags, f.key)
	c.lru.Remove(f.elem)
	f.elem = nil
	c.stats.Evicted++
}
