package mdcache

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cuttlestore/cuttle/internal/mds/journal"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdstore"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
)

// fragKey names a directory fragment.
type fragKey struct {
	dir  mdtypes.Ino
	frag mdtypes.Frag
}

// cfrag is a cached directory fragment: all of its dentries (a fragment
// is read whole), and what changed since the last write-back.
type cfrag struct {
	key      fragKey
	hdr      mdtypes.FragHeader
	dentries map[string]*mdtypes.Dentry
	// sorted caches the names in order for readdir (nil: stale).
	sorted []string
	// dirty are the names set or removed since the last write-back;
	// hdrDirty says the header changed.
	dirty    map[string]struct{}
	hdrDirty bool
	// isNew: the object may not exist yet; removed: the directory is
	// gone and the object is to be deleted.
	isNew, removed bool
	// elem is f's place in the cache's LRU list (evict.go).
	elem *list.Element
}

func (f *cfrag) isDirty() bool { return f.hdrDirty || len(f.dirty) > 0 }

// names returns the fragment's names in order.
func (f *cfrag) names() []string {
	if f.sorted == nil {
		f.sorted = make([]string, 0, len(f.dentries))
		for n := range f.dentries {
			f.sorted = append(f.sorted, n)
		}
		slices.Sort(f.sorted)
	}
	return f.sorted
}

// cinode is a cached inode: the inode (for one with a primary dentry,
// the same value the dentry holds) and where its primary dentry is.
type cinode struct {
	in     *mdtypes.Inode
	parent fragKey // zero for a base inode
	name   string
	// stray: the inode is in a stray directory, waiting for its last
	// cap to go (then purged).
	stray bool
}

// Cache is one rank's metadata engine. See the package comment.
type Cache struct {
	cfg   Config
	log   *slog.Logger
	store *mdstore.Store
	jw    *journal.Writer

	// wbMu serialises write-back rounds.
	wbMu sync.Mutex

	mu      sync.Mutex
	frags   map[fragKey]*cfrag
	inodes  map[mdtypes.Ino]*cinode
	loading map[fragKey]chan struct{}
	// bases are the base inodes whose object must be written back.
	dirtyBases map[mdtypes.Ino]struct{}
	// backtraces are the inodes whose backtrace must be written.
	backtraces map[mdtypes.Ino]struct{}
	inotable   *mdtypes.InoTable
	inoDirty   bool
	// inoPool is the numbers taken from the table for the engine's own
	// creates.
	inoPool   []mdtypes.Range
	completed map[ClientID]*clientReqs
	lk        *locker.Locker
	reqSeq    locker.ReqID
	waits     map[locker.ReqID]*waiter
	purging   map[mdtypes.Ino]bool
	// lru orders the cached fragments, most recently used first;
	// evictDue says a read took the cache past CacheInodes.
	lru      *list.List
	evictDue atomic.Bool
	// truncs are the truncations whose data is not yet cut (trunc.go).
	truncs map[mdtypes.Ino]*pendingTrunc
	lastWB int64 // unix nanos of the last write-back round
	// group commit: one flush in flight; waiters appended meanwhile go
	// with the next.
	flushing  bool
	flushNext []func(error)
	failed    error
	closed    bool
	stats     Stats
	// reconnected are the clients heard from since Open; resumed says
	// the reconnect phase is over (strays may be purged).
	reconnected map[ClientID]bool
	resumed     bool
	wbRunning   bool

	locks fileLocks
	hooks *testHooks

	// leases are the clients' dentry and directory leases; gates the
	// changes whose replies wait for revocations (lease.go).
	leases   map[leaseKey]map[ClientID]leaseHold
	leaseSeq uint64
	gates    []*leaseGate

	ioMu    sync.Mutex
	dataIOs map[int64]*rados.IOContext
}

// clientReqs are one client's completed changes, remembered so a
// request resent after a failover is answered, not applied twice.
type clientReqs struct {
	done map[uint64]completion
	// oldest is the highest OldestTid the client reported.
	oldest uint64
}

type completion struct {
	result     int32
	createdIno mdtypes.Ino
}

// loadFrag returns fragment k, reading it from RADOS if it is not
// cached; c.mu is held on entry and on return, released during the read.
func (c *Cache) loadFrag(ctx context.Context, k fragKey) (*cfrag, error) {
	for {
		if f := c.frags[k]; f != nil {
			c.lruTouch(f)
			return f, nil
		}
		if ch, ok := c.loading[k]; ok {
			c.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				c.mu.Lock()
				return nil, ctx.Err()
			}
			c.mu.Lock()
			continue
		}
		ch := make(chan struct{})
		c.loading[k] = ch
		c.mu.Unlock()
		fr, err := c.store.ReadFrag(ctx, k.dir, k.frag)
		c.mu.Lock()
		delete(c.loading, k)
		close(ch)
		if err != nil {
			return nil, err
		}
		if f := c.frags[k]; f != nil {
			return f, nil // created meanwhile (cannot: only loads create)
		}
		return c.insertFrag(k, fr), nil
	}
}

// insertFrag caches what ReadFrag returned and indexes its inodes.
func (c *Cache) insertFrag(k fragKey, fr *mdstore.Fragment) *cfrag {
	f := &cfrag{key: k, dentries: make(map[string]*mdtypes.Dentry, len(fr.Dentries)), dirty: map[string]struct{}{}}
	if fr != nil {
		f.hdr = fr.Header
		for _, d := range fr.Dentries {
			f.dentries[d.Name] = d
			if d.Inode == nil {
				continue
			}
			if ci := c.inodes[d.Inode.Ino]; ci != nil && (ci.parent != k || ci.name != d.Name) {
				// The inode is cached under another name already: it
				// moved since this object was written (a replayed
				// rename whose source fragment loads after its
				// destination's), and the cache is the newer. Indexing
				// the stale dentry would let its removal forget the
				// inode.
				continue
			}
			c.indexInode(d.Inode, k, d.Name)
		}
	}
	c.frags[k] = f
	c.lruTouch(f)
	if len(c.inodes) > c.cfg.CacheInodes {
		c.evictDue.Store(true)
	}
	return f
}

// indexInode records in as living in the primary dentry name of k.
func (c *Cache) indexInode(in *mdtypes.Inode, k fragKey, name string) {
	ci := c.inodes[in.Ino]
	if ci == nil {
		ci = &cinode{}
		c.inodes[in.Ino] = ci
	}
	ci.in, ci.parent, ci.name = in, k, name
	ci.stray = isStrayDir(k.dir)
}

func isStrayDir(ino mdtypes.Ino) bool {
	return ino >= mdtypes.StrayIno(0, 0) && ino < mdtypes.StrayIno(mdtypes.MaxRank, 0)
}

// inode returns a cached inode, loading its primary dentry's fragment
// by its backtrace if needed (a hard link's target).
func (c *Cache) inode(ctx context.Context, ino mdtypes.Ino) (*cinode, error) {
	if ci := c.inodes[ino]; ci != nil {
		return ci, nil
	}
	c.mu.Unlock()
	loc, err := c.store.LookupIno(ctx, ino, c.cfg.DataPool)
	c.mu.Lock()
	if err != nil {
		if errors.Is(err, rados.ErrNotFound) {
			return nil, fmt.Errorf("mdcache: inode %v: %w", ino, errNoEnt)
		}
		return nil, err
	}
	if _, err := c.loadFrag(ctx, fragKey{loc.Dir, loc.Frag}); err != nil {
		return nil, err
	}
	if ci := c.inodes[ino]; ci != nil {
		return ci, nil
	}
	return nil, fmt.Errorf("mdcache: inode %v not where its backtrace leads: %w", ino, errNoEnt)
}
