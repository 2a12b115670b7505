package sim

import (
	"context"
	"fmt"
	"hash/crc32"
	"sync"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// GatedStore wraps a store so that a test decides when its transactions
// commit: while closed, transactions apply (readers see them) but their
// Committed completions wait, as on a disk that is slow to flush.
//
// HoldVolatile models a disk with a volatile write cache instead:
// transactions report Applied at once but reach the store only at Open,
// and Crash loses them, as power loss would.
type GatedStore struct {
	objectstore.Store
	mu       sync.Mutex
	closed   bool
	held     []func()
	volatile bool
	cached   []cachedTxn
	corrupt  map[corruptKey]bool
	failing  bool
}

// Heal ends FailWrites.
func (g *GatedStore) Heal() {
	g.mu.Lock()
	g.failing = false
	g.mu.Unlock()
}

// FailWrites makes every later transaction fail, as on a disk that is
// gone.
func (g *GatedStore) FailWrites() {
	g.mu.Lock()
	g.failing = true
	g.mu.Unlock()
}

type corruptKey struct {
	c objectstore.CollectionID
	o objid.ID
}

// Corrupt makes reads of object o in collection c fail as a checksum
// mismatch would (objectstore.ErrCorrupt) until a transaction removes
// or writes it: bit rot under a store that verifies what it reads.
func (g *GatedStore) Corrupt(c objectstore.CollectionID, o objid.ID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.corrupt == nil {
		g.corrupt = map[corruptKey]bool{}
	}
	g.corrupt[corruptKey{c, o}] = true
}

// Read implements objectstore.Store.
func (g *GatedStore) Read(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]byte, error) {
	if err := g.injected(c, o, off); err != nil {
		return nil, err
	}
	return g.Store.Read(ctx, c, o, off, length)
}

// StatAttrs implements objectstore.AttrStater: in one lookup when the
// store under it can, and otherwise one call at a time.
func (g *GatedStore) StatAttrs(ctx context.Context, c objectstore.CollectionID, o objid.ID, names [2]string) (objectstore.StatAttrs, error) {
	return objectstore.StatAttrsOf(ctx, g.Store, c, o, names)
}

// injected returns the error a read of o at off fails with if Corrupt
// marked it.
func (g *GatedStore) injected(c objectstore.CollectionID, o objid.ID, off uint64) error {
	g.mu.Lock()
	bad := g.corrupt[corruptKey{c, o}]
	g.mu.Unlock()
	if bad {
		return fmt.Errorf("%w: object %v offset %d: checksum mismatch (injected)", objectstore.ErrCorrupt, o, off)
	}
	return nil
}

// ReadCRC implements objectstore.CRCReader, failing like Read on injected
// corruption: the underlying store's where it has one (a blockstore),
// else by hashing what Read returns.
func (g *GatedStore) ReadCRC(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]byte, uint32, error) {
	cr, ok := g.Store.(objectstore.CRCReader)
	if !ok {
		b, err := g.Read(ctx, c, o, off, length)
		return b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)), err
	}
	if err := g.injected(c, o, off); err != nil {
		return nil, 0, err
	}
	return cr.ReadCRC(ctx, c, o, off, length)
}

// Recycle implements objectstore.Recycler, handing b to the underlying
// store if it reuses read buffers.
func (g *GatedStore) Recycle(b []byte) {
	if rc, ok := g.Store.(objectstore.Recycler); ok {
		rc.Recycle(b)
	}
}

// cachedTxn is a transaction in the volatile cache and the completion
// its caller holds.
type cachedTxn struct {
	t    *objectstore.Transaction
	comp *objectstore.Completion
}

// HoldVolatile keeps later transactions in a volatile cache until Open
// (or Crash).
func (g *GatedStore) HoldVolatile() {
	g.mu.Lock()
	g.volatile = true
	g.mu.Unlock()
}

// Crash loses the volatile cache: its transactions never commit.
func (g *GatedStore) Crash() {
	g.mu.Lock()
	g.cached = nil
	g.mu.Unlock()
}

// Hold closes the gate: later transactions do not commit until Open.
func (g *GatedStore) Hold() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// Open lets every held transaction commit, and later ones at once; the
// volatile cache goes to the store in order.
func (g *GatedStore) Open() {
	g.mu.Lock()
	g.closed, g.volatile = false, false
	held, cached := g.held, g.cached
	g.held, g.cached = nil, nil
	g.mu.Unlock()
	for _, f := range held {
		f()
	}
	for _, c := range cached {
		inner, err := g.Store.Queue(context.Background(), c.t)
		if err != nil {
			c.comp.MarkCommitted(err)
			continue
		}
		go func() {
			<-inner.Committed()
			c.comp.MarkCommitted(inner.Err())
		}()
	}
}

// Queue implements objectstore.Store.
func (g *GatedStore) Queue(ctx context.Context, t *objectstore.Transaction) (*objectstore.Completion, error) {
	g.mu.Lock()
	if g.failing {
		g.mu.Unlock()
		return nil, fmt.Errorf("write: %w (injected)", syscall.EIO)
	}
	for _, op := range t.Ops {
		if op.Code == objectstore.OpRemove || op.Code == objectstore.OpWrite {
			delete(g.corrupt, corruptKey{op.Collection, op.Object})
		}
	}
	if g.volatile {
		c := cachedTxn{t: t, comp: objectstore.NewCompletion()}
		c.comp.MarkApplied()
		g.cached = append(g.cached, c)
		g.mu.Unlock()
		return c.comp, nil
	}
	g.mu.Unlock()
	inner, err := g.Store.Queue(ctx, t)
	if err != nil {
		return nil, err
	}
	outer := objectstore.NewCompletion()
	go func() {
		<-inner.Applied()
		outer.MarkApplied()
		<-inner.Committed()
		finish := func() { outer.MarkCommitted(inner.Err()) }
		g.mu.Lock()
		if g.closed {
			g.held = append(g.held, finish)
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		finish()
	}()
	return outer, nil
}
