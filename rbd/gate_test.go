package rbd

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// The gate: readers share it, a writer waits for them and holds off new
// ones, and a context ends a wait without leaving the gate taken.
func TestGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		g := newGate()
		if err := g.rlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := g.rlock(ctx); err != nil {
			t.Fatal(err)
		}
		locked := make(chan error)
		go func() { locked <- g.lock(ctx) }()
		synctest.Wait()
		// A writer waits: a new reader waits behind it, until ctx ends.
		rctx, cancel := context.WithCancel(ctx)
		read := make(chan error)
		go func() { read <- g.rlock(rctx) }()
		synctest.Wait()
		select {
		case err := <-read:
			t.Fatalf("a reader passed a waiting writer: %v", err)
		case err := <-locked:
			t.Fatalf("the writer passed the readers: %v", err)
		default:
		}
		cancel()
		if err := <-read; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled reader: %v", err)
		}
		g.runlock()
		g.runlock()
		if err := <-locked; err != nil {
			t.Fatal(err)
		}
		// A writer whose wait ends leaves the gate to the others.
		wctx, wcancel := context.WithCancel(ctx)
		go func() { locked <- g.lock(wctx) }()
		synctest.Wait()
		wcancel()
		if err := <-locked; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled writer: %v", err)
		}
		g.unlock()
		if err := g.rlock(ctx); err != nil {
			t.Fatal(err)
		}
		g.runlock()
		if err := g.lock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
