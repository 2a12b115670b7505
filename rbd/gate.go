package rbd

import (
	"context"
	"sync"
)

// gate is a readers-writer lock whose waits are channel receives that a
// context ends: I/O holds it shared, header changes exclusively. A
// waiting writer holds off new readers, so a snapshot is not starved by
// a stream of writes. (A sync.RWMutex would not let a waiting caller's
// context end its wait.)
type gate struct {
	mu      sync.Mutex // held only to read or change the fields below
	readers int
	writer  bool
	waiting int           // writers waiting
	changed chan struct{} // closed (and replaced) when the gate opens further
}

func newGate() *gate { return &gate{changed: make(chan struct{})} }

// wake tells the waiters to look again (g.mu held).
func (g *gate) wake() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// rlock takes the gate shared.
func (g *gate) rlock(ctx context.Context) error {
	for {
		g.mu.Lock()
		if !g.writer && g.waiting == 0 {
			g.readers++
			g.mu.Unlock()
			return nil
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

func (g *gate) runlock() {
	g.mu.Lock()
	g.readers--
	if g.readers == 0 && g.waiting > 0 { // only a writer waits for the readers to go
		g.wake()
	}
	g.mu.Unlock()
}

// lock takes the gate exclusively, once the readers in progress are done.
func (g *gate) lock(ctx context.Context) error {
	g.mu.Lock()
	g.waiting++
	for g.writer || g.readers > 0 {
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			g.mu.Lock()
			g.waiting--
			g.wake()
			g.mu.Unlock()
			return context.Cause(ctx)
		}
		g.mu.Lock()
	}
	g.waiting--
	g.writer = true
	g.mu.Unlock()
	return nil
}

func (g *gate) unlock() {
	g.mu.Lock()
	g.writer = false
	g.wake()
	g.mu.Unlock()
}
