package mdcache

import (
	"container/list"
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/mds/journal"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdstore"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Open makes the rank ready to serve: it creates the file system's and
// the rank's objects if missing (mdstore.Mkfs), loads the base inodes,
// the stray directories and the inode table, replays the rank's journal
// into the cache (each event's values over what the objects hold), and
// returns with the replayed changes dirty, to be written back by Tick
// and Close.
func Open(ctx context.Context, cfg Config) (*Cache, error) {
	cfg = cfg.withDefaults()
	if cfg.Meta == nil || cfg.Conn == nil || cfg.Outbox == nil {
		return nil, errors.New("mdcache: Config.Meta, Conn and Outbox are required")
	}
	log := cfg.Logger.With("rank", cfg.Rank)
	store, err := mdstore.New(mdstore.Config{Conn: cfg.Conn, MetaPool: cfg.Meta.PoolID(), Rank: cfg.Rank,
		Incarnation: cfg.Incarnation, Logger: log})
	if err != nil {
		return nil, err
	}
	c := &Cache{cfg: cfg, log: log, store: store,
		frags: map[fragKey]*cfrag{}, inodes: map[mdtypes.Ino]*cinode{}, loading: map[fragKey]chan struct{}{},
		dirtyBases: map[mdtypes.Ino]struct{}{}, backtraces: map[mdtypes.Ino]struct{}{},
		completed: map[ClientID]*clientReqs{}, waits: map[locker.ReqID]*waiter{}, purging: map[mdtypes.Ino]bool{}, truncs: map[mdtypes.Ino]*pendingTrunc{}, lru: list.New(),
		leases:  map[leaseKey]map[ClientID]leaseHold{},
		lk:      locker.New(locker.Rank(cfg.Rank), locker.Config{RevokeEvict: cfg.RevokeTimeout}),
		dataIOs: map[int64]*rados.IOContext{}, reconnected: map[ClientID]bool{}}
	if err := store.Mkfs(ctx, cfg.DataPool, c.now()); err != nil {
		return nil, fmt.Errorf("mdcache: rank %d: mkfs: %w", cfg.Rank, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.loadRank(ctx); err != nil {
		return nil, err
	}
	jcfg := journal.Config{IO: cfg.Meta, Ino: uint64(mdtypes.JournalIno(cfg.Rank)), Logger: log,
		Layout: layout.Layout{ObjectSize: cfg.JournalObjectSize, StripeUnit: cfg.JournalObjectSize, StripeCount: 1, Pool: cfg.Meta.PoolID()}}
	var entries int
	jw, res, err := journal.Recover(ctx, jcfg, func(e journal.Entry) error {
		ev, err := UnmarshalEvent(e.Payload)
		if err != nil {
			return err
		}
		entries++
		return c.applyEvent(ctx, ev, e.Pos)
	})
	if errors.Is(err, rados.ErrNotFound) {
		jw, err = journal.Create(ctx, jcfg)
	}
	if err != nil {
		return nil, fmt.Errorf("mdcache: rank %d: journal: %w", cfg.Rank, err)
	}
	c.jw = jw
	c.lastWB = cfg.Clock.Now().UnixNano()
	for _, ci := range c.inodes {
		if ci.in.IsRegular() {
			c.lk.Load(locker.Ino(ci.in.Ino), locker.FileAttrs{Size: ci.in.Size, Mtime: ci.in.Mtime.Go()})
		}
	}
	log.Info("rank open", "replayed", entries, "journal_end", res.End, "inodes", len(c.inodes))
	return c, nil
}

// loadRank reads the base inodes, the mdsdir and its strays, the inode
// table and the completed requests. c.mu is held.
func (c *Cache) loadRank(ctx context.Context) error {
	rank := c.cfg.Rank
	for _, ino := range []mdtypes.Ino{mdtypes.RootIno, mdtypes.MDSDirIno(rank)} {
		in, err := c.store.ReadBaseInode(ctx, ino)
		if err != nil {
			return fmt.Errorf("mdcache: rank %d: %w", rank, err)
		}
		c.inodes[ino] = &cinode{in: in}
	}
	if _, err := c.loadFrag(ctx, fragKey{mdtypes.MDSDirIno(rank), mdtypes.RootFrag}); err != nil {
		return fmt.Errorf("mdcache: rank %d: mdsdir: %w", rank, err)
	}
	for i := range mdtypes.NumStrays {
		if _, err := c.loadFrag(ctx, fragKey{mdtypes.StrayIno(rank, i), mdtypes.RootFrag}); err != nil {
			return fmt.Errorf("mdcache: rank %d: stray %d: %w", rank, i, err)
		}
	}
	t, err := c.store.LoadInoTable(ctx)
	if err != nil {
		return fmt.Errorf("mdcache: rank %d: %w", rank, err)
	}
	c.inotable = t
	return c.loadSessions(ctx)
}

// applyEvent replays one journal event into the cache: each fragment's
// dentries and header set to the event's values (a fragment whose
// object is gone — removed by a later change written back before a
// crash — starts empty), base inodes, inode-table changes (skipped
// where the table already holds them) and the completed request.
func (c *Cache) applyEvent(ctx context.Context, ev *Event, pos uint64) error {
	for i := range ev.Frags {
		fd := &ev.Frags[i]
		k := fragKey{fd.Dir, fd.Frag}
		f, err := c.loadFrag(ctx, k)
		if errors.Is(err, rados.ErrNotFound) {
			f = c.insertFrag(k, &mdstore.Fragment{})
			f.isNew = true
		} else if err != nil {
			return err
		}
		c.applyDelta(f, fd)
	}
	for _, in := range ev.Bases {
		ci := c.inodes[in.Ino]
		if ci == nil {
			ci = &cinode{}
			c.inodes[in.Ino] = ci
		}
		ci.in = in.Clone()
		c.dirtyBases[in.Ino] = struct{}{}
	}
	for _, r := range ev.InoAlloc {
		takeRange(c.inotable, r)
		c.inoDirty = true
	}
	for _, r := range ev.InoFree {
		if !c.inotable.IsFree(r.Start) {
			if err := c.inotable.Release(r); err != nil {
				c.log.Warn("replay: inode range not released", "start", r.Start, "len", r.Len, "err", err)
			}
		}
		c.inoDirty = true
	}
	if ev.Client != 0 {
		c.remember(ev.Client, ev.Tid, ev.OldestTid, completion{ev.Result, ev.CreatedIno})
	}
	c.noteTruncs(ev, pos)
	return nil
}

func (c *Cache) applyDelta(f *cfrag, fd *FragDelta) {
	if fd.New {
		f.isNew = true
	}
	if fd.Removed {
		for name, d := range f.dentries {
			c.unindex(f.key, name, d)
			f.dirty[name] = struct{}{}
		}
		f.dentries = map[string]*mdtypes.Dentry{}
		f.removed = true
	}
	for _, d := range fd.Set {
		if old := f.dentries[d.Name]; old != nil {
			c.unindex(f.key, d.Name, old)
		}
		nd := cloneDentry(d)
		f.dentries[d.Name] = nd
		if nd.Inode != nil {
			c.indexInode(nd.Inode, f.key, nd.Name)
			c.backtraces[nd.Inode.Ino] = struct{}{}
		}
		f.dirty[d.Name] = struct{}{}
	}
	for _, name := range fd.Remove {
		if old := f.dentries[name]; old != nil {
			c.unindex(f.key, name, old)
			delete(f.dentries, name)
		}
		f.dirty[name] = struct{}{}
	}
	f.sorted = nil
	f.hdr = fd.Header
	f.hdrDirty = true
}

// unindex forgets the inode of a primary dentry if the index still
// places it there.
func (c *Cache) unindex(k fragKey, name string, d *mdtypes.Dentry) {
	if d.Inode == nil {
		return
	}
	if ci := c.inodes[d.Inode.Ino]; ci != nil && ci.parent == k && ci.name == name {
		delete(c.inodes, d.Inode.Ino)
	}
}

// takeRange marks r allocated in t where it is free (replay of an
// allocation the saved table may already hold).
func takeRange(t *mdtypes.InoTable, r mdtypes.Range) {
	var free []mdtypes.Range
	for _, f := range t.Free {
		if f.End() <= r.Start || f.Start >= r.End() {
			free = append(free, f)
			continue
		}
		if f.Start < r.Start {
			free = append(free, mdtypes.Range{Start: f.Start, Len: uint64(r.Start - f.Start)})
		}
		if f.End() > r.End() {
			free = append(free, mdtypes.Range{Start: r.End(), Len: uint64(f.End() - r.End())})
		}
	}
	t.Free = free
	t.Version++
}
