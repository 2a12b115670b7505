package rados

import (
	"context"
	"sync"
)

// Completion follows one asynchronous operation through its two
// acknowledgements, as the RADOS paper defines them:
//
//   - applied: the write is visible to readers on every replica;
//   - committed: it is durable on every replica.
//
// A read, a failed operation and a cancelled one close both at once.
// Err and Version are final once Committed is closed. A Completion is
// safe for concurrent use.
type Completion struct {
	applied, committed chan struct{}

	// obj and tid name the op while it is in flight, for waitOp.
	obj *objecter
	tid uint64

	mu          sync.Mutex
	appliedDone bool
	done        bool
	err         error
	version     uint64
}

// newCompletion returns a Completion; an op that asks for no applied
// acknowledgement (wantApplied false) is applied when it commits, so its
// Applied channel is its Committed one, one allocation fewer per op.
func newCompletion(wantApplied bool) *Completion {
	c := &Completion{committed: make(chan struct{})}
	c.applied = c.committed
	if wantApplied {
		c.applied = make(chan struct{})
	}
	return c
}

// Applied is closed when the operation is applied on every replica (or
// has failed).
func (c *Completion) Applied() <-chan struct{} { return c.applied }

// Committed is closed when the operation is durable on every replica, or
// has failed or been cancelled: the operation is complete.
func (c *Completion) Committed() <-chan struct{} { return c.committed }

// WaitApplied waits until the operation is applied and returns its error
// (nil while it is only applied), or the context's error.
func (c *Completion) WaitApplied(ctx context.Context) error {
	select {
	case <-c.applied:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	case <-ctx.Done():
		return ctxError(ctx)
	}
}

// Wait waits until the operation is complete (committed, failed or
// cancelled) and returns its error, or the context's error if ctx ends
// first (the operation then goes on; its own context governs it).
func (c *Completion) Wait(ctx context.Context) error {
	select {
	case <-c.committed:
		return c.Err()
	case <-ctx.Done():
		return ctxError(ctx)
	}
}

// waitOp waits for an op submitted without watching its context, and
// ends the op with ctx's error if ctx ends first, as a watched op would
// have been ended.
func (c *Completion) waitOp(ctx context.Context) error {
	select {
	case <-c.committed:
	case <-ctx.Done():
		if c.obj != nil {
			c.obj.cancel(c.tid, ctxError(ctx))
		}
		// cancel completed the op, or found it completed: either way
		// under the objecter's lock, which complete runs under.
		<-c.committed
	}
	return c.Err()
}

// Err returns the operation's error once it is complete, nil before.
func (c *Completion) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Version returns the object's version (its user version: the counter
// AssertVersion compares) after the write, or when it was read; 0 until
// the operation is applied.
func (c *Completion) Version() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// markApplied records the applied acknowledgement.
func (c *Completion) markApplied(version uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.appliedDone || c.done {
		return
	}
	c.appliedDone, c.version = true, version
	if c.applied != c.committed {
		close(c.applied)
	}
}

// complete records the end of the operation: committed (err nil) or
// failed. fill, if not nil, stores the results in the op's steps before
// Committed closes.
func (c *Completion) complete(version uint64, err error, fill func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	c.done, c.err = true, err
	if err == nil {
		c.version = version
		if fill != nil {
			fill()
		}
	}
	if !c.appliedDone && c.applied != c.committed {
		close(c.applied)
	}
	c.appliedDone = true
	close(c.committed)
}
