package rbd

import (
	"context"
	"slices"
	"sync"
)

// Asynchronous I/O (docs/RBD.md "Asynchronous I/O"), as librbd's aio_*
// calls: ReadAsync, WriteAsync, DiscardAsync and FlushAsync return at once
// with a Completion, and the call runs on its own goroutine. Each one is
// the synchronous call, which already splits a range into its objects'
// operations and has them all in flight at once (the striper's window);
// the asynchronous layer adds the bound on calls in flight and the
// ordering rules, which is what a caller of aio_* relies on:
//
//   - calls that overlap, one of them a write or discard, run in the
//     order they were issued: the later starts once the earlier is done
//     (so overlapping writes land, and complete, in issue order, and a
//     read sees the writes issued before it and none issued after);
//   - a flush starts once every write and discard issued before it is
//     done, and completes once they are durable (written back from the
//     cache, if on); calls issued after a flush do not wait for it;
//   - other calls run concurrently, in any order.
//
// "Issued" is the order in which the *Async methods returned: calls
// issued from one goroutine are ordered; calls issued from several at
// once are ordered as their methods happened to return.

// defaultMaxAsync is OpenOptions.MaxAsync's default.
const defaultMaxAsync = 64

// Completion follows one asynchronous call of an Image. It is safe for
// concurrent use.
type Completion struct {
	done chan struct{}
	mu   sync.Mutex
	err  error
	then []func(error)
}

func newCompletion() *Completion { return &Completion{done: make(chan struct{})} }

// Done is closed when the call is complete.
func (c *Completion) Done() <-chan struct{} { return c.done }

// Wait waits until the call is complete and returns its error. (The
// call's own context, given when it was issued, bounds it.)
func (c *Completion) Wait() error {
	<-c.done
	return c.Err()
}

// Err returns the call's error once it is complete (nil before).
func (c *Completion) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// OnDone has f called with the call's error once it is complete: on the
// goroutine that completed it, or at once on the caller's if it is
// complete already. Keep f short and do not wait in it for another call
// of the same Image.
func (c *Completion) OnDone(f func(err error)) {
	c.mu.Lock()
	select {
	case <-c.done:
		err := c.err
		c.mu.Unlock()
		f(err)
		return
	default:
	}
	c.then = append(c.then, f)
	c.mu.Unlock()
}

// finish records err and closes Done; it returns the callbacks to run.
func (c *Completion) finish(err error) []func(error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
	close(c.done)
	fs := c.then
	c.then = nil
	return fs
}

// opKind is what an asynchronous call does, for the ordering rules.
type opKind uint8

const (
	opRead opKind = iota
	opWrite
	opFlush
)

// asyncOp is an asynchronous call issued and not yet complete.
type asyncOp struct {
	kind     opKind
	off, end uint64        // the range, [off, end)
	done     chan struct{} // closed once it is complete
}

// mustFollow reports whether q, issued after p, waits for p.
func (q *asyncOp) mustFollow(p *asyncOp) bool {
	switch {
	case q.kind == opFlush:
		return p.kind == opWrite
	case p.kind == opFlush:
		return false
	case p.kind == opRead && q.kind == opRead:
		return false
	}
	return q.off < p.end && p.off < q.end
}

// asyncOps are an Image's asynchronous calls in flight.
type asyncOps struct {
	slots chan struct{} // a token per call in flight
	mu    sync.Mutex
	ops   []*asyncOp // in issue order
}

func newAsyncOps(max int) *asyncOps {
	if max <= 0 {
		max = defaultMaxAsync
	}
	return &asyncOps{slots: make(chan struct{}, max)}
}

// submit issues run as an asynchronous call of kind on [off, off+n): it
// waits for a slot (MaxAsync calls in flight), finds the calls issued
// before that it must follow, and starts run on its own goroutine once
// they are complete.
func (img *Image) submit(ctx context.Context, kind opKind, off, n uint64, run func(ctx context.Context) error) *Completion {
	c := newCompletion()
	a := img.async
	if ctx.Err() != nil {
		c.finish(context.Cause(ctx))
		return c
	}
	select {
	case a.slots <- struct{}{}:
	case <-ctx.Done():
		c.finish(context.Cause(ctx)) // no callbacks yet
		return c
	}
	op := &asyncOp{kind: kind, off: off, end: off + n, done: make(chan struct{})}
	a.mu.Lock()
	var after []chan struct{}
	for _, p := range a.ops {
		if op.mustFollow(p) {
			after = append(after, p.done)
		}
	}
	a.ops = append(a.ops, op)
	a.mu.Unlock()
	go func() {
		err := waitAll(ctx, after)
		if err == nil {
			err = run(ctx)
		}
		a.mu.Lock()
		a.ops = slices.DeleteFunc(a.ops, func(p *asyncOp) bool { return p == op })
		a.mu.Unlock()
		fs := c.finish(err) // Done closed before those following it start
		close(op.done)
		<-a.slots
		for _, f := range fs {
			f(err)
		}
	}()
	return c
}

// waitAll waits until every channel of chs is closed, or ctx ends.
func waitAll(ctx context.Context, chs []chan struct{}) error {
	for _, ch := range chs {
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// ReadAsync reads len(buf) bytes at off into buf, as ReadAt, and returns
// at once; buf must not be touched until the call is complete.
func (img *Image) ReadAsync(ctx context.Context, buf []byte, off uint64) *Completion {
	return img.submit(ctx, opRead, off, uint64(len(buf)), func(ctx context.Context) error { return img.ReadAt(ctx, buf, off) })
}

// WriteAsync writes data at off, as WriteAt, and returns at once; data
// must not be changed until the call is complete.
func (img *Image) WriteAsync(ctx context.Context, data []byte, off uint64) *Completion {
	return img.submit(ctx, opWrite, off, uint64(len(data)), func(ctx context.Context) error { return img.WriteAt(ctx, data, off) })
}

// DiscardAsync discards [off, off+length), as Discard, and returns at once.
func (img *Image) DiscardAsync(ctx context.Context, off, length uint64) *Completion {
	return img.submit(ctx, opWrite, off, length, func(ctx context.Context) error { return img.Discard(ctx, off, length) })
}

// FlushAsync flushes, as Flush, once every write and discard issued before
// it is complete, and returns at once.
func (img *Image) FlushAsync(ctx context.Context) *Completion {
	return img.submit(ctx, opFlush, 0, 0, img.Flush)
}
