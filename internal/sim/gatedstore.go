package sim

import (
	"context"
	"sync"

	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// GatedStore wraps a store so that a test decides when its transactions
// commit: while closed, transactions apply (readers see them) but their
// Committed completions wait, as on a disk that is slow to flush.
type GatedStore struct {
	objectstore.Store
	mu     sync.Mutex
	closed bool
	held   []func()
}

// Hold closes the gate: later transactions do not commit until Open.
func (g *GatedStore) Hold() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// Open lets every held transaction commit, and later ones at once.
func (g *GatedStore) Open() {
	g.mu.Lock()
	g.closed = false
	held := g.held
	g.held = nil
	g.mu.Unlock()
	for _, f := range held {
		f()
	}
}

// Queue implements objectstore.Store.
func (g *GatedStore) Queue(ctx context.Context, t *objectstore.Transaction) (*objectstore.Completion, error) {
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
