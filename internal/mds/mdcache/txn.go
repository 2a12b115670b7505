package mdcache

import (
	"context"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// txn records one change as it is made in the cache (under c.mu) and
// turns it into the Event that journals it: the fragments and base
// inodes it touched are written to the event as their values after the
// change, so the event is a set of full values (replay is idempotent).
type txn struct {
	c     *Cache
	ev    Event
	order []fragKey
	names map[fragKey]map[string]struct{}
	bases map[mdtypes.Ino]*mdtypes.Inode
	news  map[fragKey]bool
	// after run once the event is durable (purges, data truncation).
	after []func()
	// leased are the dentries whose binding and the inodes whose
	// attributes the change alters, as leases name them (lease.go):
	// other clients' leases on them are revoked before it is answered.
	leased map[leaseKey]struct{}
}

func (c *Cache) newTxn(client ClientID, tid, oldest uint64, op wire.MetaOp) *txn {
	t := &txn{c: c, names: map[fragKey]map[string]struct{}{}, bases: map[mdtypes.Ino]*mdtypes.Inode{}, news: map[fragKey]bool{},
		leased: map[leaseKey]struct{}{}}
	t.ev.Client, t.ev.Tid, t.ev.OldestTid = client, tid, oldest
	t.ev.Op = op
	return t
}

func (t *txn) touch(k fragKey, name string) {
	ns := t.names[k]
	if ns == nil {
		ns = map[string]struct{}{}
		t.names[k] = ns
		t.order = append(t.order, k)
	}
	if name != "" {
		ns[name] = struct{}{}
	}
}

// setDentry puts d in f (replacing any dentry of that name), keeping the
// header's counts and the inode index.
func (t *txn) setDentry(f *cfrag, d *mdtypes.Dentry) {
	if old := f.dentries[d.Name]; old != nil {
		countDentry(&f.hdr, old, -1)
	} else {
		f.sorted = nil
	}
	countDentry(&f.hdr, d, +1)
	f.dentries[d.Name] = d
	t.leased[leaseKey{f.key.dir, d.Name}] = struct{}{}
	if d.Inode != nil {
		t.c.indexInode(d.Inode, f.key, d.Name)
	}
	t.touch(f.key, d.Name)
}

// removeDentry takes name out of f (its inode, if primary, is the
// caller's to re-home or forget).
func (t *txn) removeDentry(f *cfrag, name string) {
	if old := f.dentries[name]; old != nil {
		countDentry(&f.hdr, old, -1)
		delete(f.dentries, name)
		f.sorted = nil
	}
	t.leased[leaseKey{f.key.dir, name}] = struct{}{}
	t.touch(f.key, name)
}

// dirtyInode records a change made in place to a cached inode: its
// primary dentry, or its base object, goes into the event.
func (t *txn) dirtyInode(ci *cinode) {
	t.leased[leaseKey{ci.in.Ino, ""}] = struct{}{}
	t.dirtyQuiet(ci)
}

// dirtyQuiet is dirtyInode for a change no lease covers (recursive
// statistics: not among the attributes a client's kernel caches).
func (t *txn) dirtyQuiet(ci *cinode) {
	ci.in.Version++
	if mdtypes.IsBase(ci.in.Ino) {
		t.bases[ci.in.Ino] = ci.in
		return
	}
	t.touch(ci.parent, ci.name)
}

// newFrag makes an empty fragment for a new directory.
func (t *txn) newFrag(dir mdtypes.Ino) *cfrag {
	k := fragKey{dir, mdtypes.RootFrag}
	f := &cfrag{key: k, dentries: map[string]*mdtypes.Dentry{}, dirty: map[string]struct{}{}, isNew: true}
	f.hdr.Version = 1
	t.c.frags[k] = f
	t.c.lruTouch(f)
	t.news[k] = true
	t.touch(k, "")
	return f
}

// removeFrag drops an empty directory's fragment: its object goes at
// the next write-back.
func (t *txn) removeFrag(f *cfrag) {
	f.removed = true
	t.touch(f.key, "")
}

func countDentry(h *mdtypes.FragHeader, d *mdtypes.Dentry, sign int) {
	isDir := false
	if d.Inode != nil {
		isDir = d.Inode.IsDir()
	} else {
		isDir = mdtypes.ModeOfDType(d.RemoteType) == mdtypes.ModeDir
	}
	n := uint64(sign)
	if isDir {
		h.Subdirs += n
	} else {
		h.Files += n
	}
}

// commit builds the event from what was touched, marks it dirty for
// write-back and appends it to the journal. c.mu is held. The returned
// wait function blocks until the event is durable (group commit).
func (t *txn) commit() error {
	c := t.c
	for _, k := range t.order {
		f := c.frags[k]
		if f == nil {
			return fmt.Errorf("mdcache: commit: fragment %v.%v not cached", k.dir, k.frag)
		}
		f.hdr.Version++
		f.hdrDirty = true
		fd := FragDelta{Dir: k.dir, Frag: k.frag, Header: f.hdr, New: f.isNew, Removed: f.removed}
		for name := range t.names[k] {
			f.dirty[name] = struct{}{}
			if d := f.dentries[name]; d != nil {
				d.Version = f.hdr.Version
				fd.Set = append(fd.Set, cloneDentry(d))
			} else {
				fd.Remove = append(fd.Remove, name)
			}
		}
		if f.removed {
			fd.Set, fd.Remove = nil, nil
		}
		t.ev.Frags = append(t.ev.Frags, fd)
	}
	for ino, in := range t.bases {
		t.ev.Bases = append(t.ev.Bases, in.Clone())
		c.dirtyBases[ino] = struct{}{}
	}
	if len(t.ev.InoAlloc) > 0 || len(t.ev.InoFree) > 0 {
		c.inoDirty = true
	}
	if t.ev.Client != 0 {
		c.remember(t.ev.Client, t.ev.Tid, t.ev.OldestTid, completion{t.ev.Result, t.ev.CreatedIno})
	}
	pos, _, err := c.jw.Append(t.ev.Marshal())
	if err != nil {
		c.failed = err
		return err
	}
	c.noteTruncs(&t.ev, pos)
	return nil
}

func cloneDentry(d *mdtypes.Dentry) *mdtypes.Dentry {
	cd := *d
	if d.Inode != nil {
		cd.Inode = d.Inode.Clone()
	}
	return &cd
}

// remember records a completed request of client, forgetting those
// below its oldest unanswered one.
func (c *Cache) remember(client ClientID, tid, oldest uint64, done completion) {
	cr := c.completed[client]
	if cr == nil {
		cr = &clientReqs{done: map[uint64]completion{}}
		c.completed[client] = cr
	}
	if oldest > cr.oldest {
		// The client has its safe replies below oldest: forget them
		// (a scan only when its oldest request moved on).
		cr.oldest = oldest
		for t := range cr.done {
			if t < oldest {
				delete(cr.done, t)
			}
		}
	}
	cr.done[tid] = done
	if len(cr.done) > c.cfg.CompletedPerClient {
		// A client that does not report its oldest request: keep the
		// latest.
		lowest := tid
		for t := range cr.done {
			lowest = min(lowest, t)
		}
		delete(cr.done, lowest)
	}
}

// durable calls done once everything appended so far is in the
// journal: one flush in flight at a time carries all the events
// appended while the previous one was writing. c.mu is held.
func (c *Cache) durable(done func(error)) {
	if c.flushing {
		c.flushNext = append(c.flushNext, done)
		return
	}
	c.flushing = true
	c.startFlush([]func(error){done})
}

func (c *Cache) startFlush(waiters []func(error)) {
	c.jw.FlushAsync(context.Background(), func(err error) {
		for _, w := range waiters {
			w(err)
		}
		c.mu.Lock()
		next := c.flushNext
		c.flushNext = nil
		if len(next) == 0 {
			c.flushing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.startFlush(next)
	})
}
