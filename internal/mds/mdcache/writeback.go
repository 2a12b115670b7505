package mdcache

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/mds/mdstore"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
)

// testHooks place crash points in a write-back (tests only; nil in
// service).
type testHooks struct {
	// failWrite stops a write-back at its n-th object write (1-based),
	// as a crash there would.
	failWrite int
	// skipTrim ends a write-back before it trims the journal.
	skipTrim bool
	// noTruncData skips cutting a truncated file's data, as a crash
	// after the setattr is durable and before the data is cut would.
	noTruncData bool
	// failTruncData fails that many cuts of truncated files' data.
	failTruncData int
}

var errCrashPoint = errors.New("mdcache: crash point (test)")

// wbRound is what one write-back takes from the cache: the state as of
// journal position pos (every event before it, none after), to be
// written to the objects before the journal is trimmed to pos.
type wbRound struct {
	pos        uint64
	frags      []mdstore.FragUpdate
	removed    []mdstore.FragUpdate // fragments of removed directories
	bases      []*mdtypes.Inode
	inotable   *mdtypes.InoTable
	completed  []byte
	backtraces []*backtraceJob
	// undo puts the dirty marks back if the round fails.
	undo []func()
}

type backtraceJob struct {
	bt  *mdtypes.Backtrace
	dir bool
}

// WriteBack writes back everything the journal holds and trims the
// journal: one round at a time. Tick runs it periodically; tests call
// it to place crash points.
func (c *Cache) WriteBack(ctx context.Context) error {
	c.wbMu.Lock()
	defer c.wbMu.Unlock()
	round := c.takeDirty()
	if err := c.jw.Flush(ctx); err != nil {
		c.restore(round)
		return fmt.Errorf("mdcache: write-back: journal flush: %w", err)
	}
	if err := c.writeRound(ctx, round); err != nil {
		c.restore(round)
		return err
	}
	// What was written back may be evicted now.
	c.mu.Lock()
	if len(c.inodes) > c.cfg.CacheInodes {
		c.evict()
	}
	c.mu.Unlock()
	if c.hooks != nil && c.hooks.skipTrim {
		return nil
	}
	if err := c.jw.Trim(ctx, round.pos); err != nil {
		return fmt.Errorf("mdcache: write-back: trim: %w", err)
	}
	return nil
}

// takeDirty snapshots and clears what is dirty, at the journal's
// current write position.
func (c *Cache) takeDirty() *wbRound {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &wbRound{pos: c.trimLimit(c.jw.WritePos())}
	for k, f := range c.frags {
		if !f.isDirty() && !f.removed {
			continue
		}
		u := mdstore.FragUpdate{Dir: k.dir, Frag: k.frag, Header: f.hdr, Create: f.isNew}
		if f.removed {
			r.removed = append(r.removed, u)
			delete(c.frags, k)
			f := f
			r.undo = append(r.undo, func() {
				if c.frags[k] == nil {
					c.frags[k] = f
				}
			})
			continue
		}
		names := f.dirty
		for name := range names {
			if d := f.dentries[name]; d != nil {
				u.Set = append(u.Set, cloneDentry(d))
			} else {
				u.Remove = append(u.Remove, name)
			}
		}
		wasNew := f.isNew
		f.dirty, f.hdrDirty, f.isNew = map[string]struct{}{}, false, false
		r.frags = append(r.frags, u)
		f := f
		r.undo = append(r.undo, func() {
			for n := range names {
				f.dirty[n] = struct{}{}
			}
			f.hdrDirty = true
			f.isNew = f.isNew || wasNew
		})
	}
	for ino := range c.dirtyBases {
		if ci := c.inodes[ino]; ci != nil {
			r.bases = append(r.bases, ci.in.Clone())
		}
		delete(c.dirtyBases, ino)
		r.undo = append(r.undo, func() { c.dirtyBases[ino] = struct{}{} })
	}
	if c.inoDirty {
		t := *c.inotable
		t.Free = append([]mdtypes.Range(nil), c.inotable.Free...)
		r.inotable = &t
		c.inoDirty = false
		r.undo = append(r.undo, func() { c.inoDirty = true })
	}
	r.completed = marshalCompleted(c.completed)
	for ino := range c.backtraces {
		delete(c.backtraces, ino)
		if job := c.backtraceOf(ino); job != nil {
			r.backtraces = append(r.backtraces, job)
		}
	}
	return r
}

// restore marks a failed round's state dirty again.
func (c *Cache) restore(r *wbRound) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range r.undo {
		u()
	}
	for _, j := range r.backtraces {
		c.backtraces[j.bt.Ino] = struct{}{}
	}
}

// writeRound writes a round's state: fragments (each atomically), the
// removed directories' objects, base inodes, the inode table, the
// completed requests and then the backtraces.
func (c *Cache) writeRound(ctx context.Context, r *wbRound) error {
	writes := 0
	crash := func() error {
		writes++
		if c.hooks != nil && c.hooks.failWrite == writes {
			return errCrashPoint
		}
		return nil
	}
	for _, u := range r.frags {
		if err := crash(); err != nil {
			return err
		}
		if err := c.store.WriteBack(ctx, u); err != nil {
			return fmt.Errorf("mdcache: write-back: %w", err)
		}
	}
	for _, u := range r.removed {
		err := c.store.RemoveFrag(ctx, u.Dir, u.Frag, u.Header.Version)
		if err != nil && !errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("mdcache: write-back: %w", err)
		}
	}
	for _, in := range r.bases {
		if err := crash(); err != nil {
			return err
		}
		if err := c.store.WriteBaseInode(ctx, in); err != nil {
			return fmt.Errorf("mdcache: write-back: %w", err)
		}
	}
	if r.inotable != nil {
		if err := c.store.SaveInoTable(ctx, r.inotable); err != nil {
			return fmt.Errorf("mdcache: write-back: %w", err)
		}
	}
	if err := c.cfg.Meta.WriteFull(ctx, completedObject(c.cfg.Rank), r.completed); err != nil {
		return fmt.Errorf("mdcache: write-back: completed requests: %w", err)
	}
	for _, j := range r.backtraces {
		if err := c.store.SetBacktrace(ctx, j.bt, j.dir); err != nil {
			return fmt.Errorf("mdcache: write-back: %w", err)
		}
	}
	return nil
}

// backtraceOf builds ino's backtrace from the cache (nil if the inode
// is gone or a step is not cached: the next rename or scrub writes it).
func (c *Cache) backtraceOf(ino mdtypes.Ino) *backtraceJob {
	ci := c.inodes[ino]
	if ci == nil || mdtypes.IsBase(ino) {
		return nil
	}
	bt := &mdtypes.Backtrace{Ino: ino, Pool: c.cfg.Meta.PoolID()}
	if ci.in.IsRegular() {
		bt.Pool = ci.in.Layout.Pool
	}
	for cur, n := ci, 0; n < 4096; n++ {
		f := c.frags[cur.parent]
		if f == nil {
			return nil
		}
		v := uint64(0)
		if d := f.dentries[cur.name]; d != nil {
			v = d.Version
		}
		bt.Ancestors = append(bt.Ancestors, mdtypes.Ancestor{DirIno: cur.parent.dir, Name: cur.name, Version: v})
		if mdtypes.IsBase(cur.parent.dir) {
			return &backtraceJob{bt: bt, dir: ci.in.IsDir()}
		}
		if cur = c.inodes[cur.parent.dir]; cur == nil {
			return nil
		}
	}
	return nil
}
