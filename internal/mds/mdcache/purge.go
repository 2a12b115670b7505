package mdcache

import (
	"context"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper"
)

// An unlinked file's inode waits in a stray directory (journaled with
// the unlink) until no client holds a cap on it; then its data objects
// are removed and its stray dentry with them, journaled, and its inode
// number goes back to the table. A crash in between leaves the stray,
// which the next holder of the rank purges after Resume.

// maybePurge starts the purge of ino if it is a stray with no links and
// no caps. c.mu is not held.
func (c *Cache) maybePurge(ino mdtypes.Ino) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ci := c.inodes[ino]
	if ci == nil || !ci.stray || ci.in.Nlink > 0 || ci.in.IsDir() || c.purging[ino] || !c.resumed || c.closed {
		return
	}
	if len(c.lk.Clients(locker.Ino(ino))) > 0 {
		return
	}
	c.purging[ino] = true
	in := ci.in.Clone()
	go c.purge(in)
}

// purge removes in's data and then its stray dentry.
func (c *Cache) purge(in *mdtypes.Inode) {
	ctx := context.Background()
	err := c.removeData(ctx, in)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.purging, in.Ino)
	if cb := c.cfg.Events.Purged; cb != nil {
		defer func() {
			// After the stray dentry's removal is appended (c.mu is
			// released before the callback runs: deferred first).
			go cb(uint64(in.Ino), err)
		}()
	}
	if err != nil {
		c.log.Warn("purging an unlinked file's data failed; it stays in its stray directory", "ino", in.Ino, "err", err)
		return
	}
	ci := c.inodes[in.Ino]
	if ci == nil || !ci.stray || ci.in.Nlink > 0 || c.closed {
		return
	}
	f := c.frags[ci.parent]
	if f == nil {
		return
	}
	t := c.newTxn(0, 0, 0, 0)
	t.removeDentry(f, ci.name)
	delete(c.inodes, in.Ino)
	c.lk.Drop(locker.Ino(in.Ino))
	r := mdtypes.Range{Start: in.Ino, Len: 1}
	if err := c.inotable.Release(r); err == nil {
		t.ev.InoFree = append(t.ev.InoFree, r)
	}
	if err := t.commit(); err != nil {
		c.log.Error("journaling a purge failed", "ino", in.Ino, "err", err)
		return
	}
	c.durable(func(error) {})
}

// removeData removes every object of a regular file (object 0 too: it
// holds the backtrace even when the file has no data).
func (c *Cache) removeData(ctx context.Context, in *mdtypes.Inode) error {
	if !in.IsRegular() || in.Layout == nil {
		return nil
	}
	io, err := c.dataIO(in.Layout.Pool)
	if err != nil {
		return err
	}
	s, err := striper.New(io, *in.Layout, striper.Options{})
	if err != nil {
		return err
	}
	return s.Remove(ctx, uint64(in.Ino), max(in.Size, 1))
}

// dataIO opens (once) an I/O context on a data pool.
func (c *Cache) dataIO(pool int64) (*rados.IOContext, error) {
	c.ioMu.Lock()
	defer c.ioMu.Unlock()
	if io := c.dataIOs[pool]; io != nil {
		return io, nil
	}
	if pool == c.cfg.Meta.PoolID() {
		return c.cfg.Meta, nil
	}
	name, err := c.cfg.Conn.PoolName(pool)
	if err != nil {
		return nil, fmt.Errorf("mdcache: data pool %d: %w", pool, err)
	}
	io, err := c.cfg.Conn.OpenIOContext(name)
	if err != nil {
		return nil, fmt.Errorf("mdcache: data pool %d: %w", pool, err)
	}
	c.dataIOs[pool] = io
	return io, nil
}
