package rados

import (
	"context"
	"fmt"
	"sync"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// AllNamespaces, as an IOContext's namespace, makes listings cover every
// namespace of the pool (object operations refuse it).
const AllNamespaces = "\x01"

// IOContext does object I/O in one pool, in a namespace (default: the
// empty one) and with a locator key (default: none, objects are placed by
// their names). It is safe for concurrent use; SetNamespace and
// SetLocator affect the operations that start after them.
type IOContext struct {
	conn *Conn
	pool int64
	name string

	mu      sync.Mutex
	ns      string
	locator string
	snapc   snapContext // writes' self-managed snap context (snaps.go)
	// readSnap is the snapshot reads read at; 0 reads the head.
	readSnap uint64
}

// OpenIOContext returns an IOContext for the named pool, or
// ErrPoolNotFound if the client's map has no such pool.
func (c *Conn) OpenIOContext(pool string) (*IOContext, error) {
	id, err := c.LookupPool(pool)
	if err != nil {
		return nil, err
	}
	return &IOContext{conn: c, pool: id, name: pool}, nil
}

// PoolID returns the pool's id.
func (io *IOContext) PoolID() int64 { return io.pool }

// PoolName returns the pool's name.
func (io *IOContext) PoolName() string { return io.name }

// SetNamespace sets the namespace of later operations ("" is the
// default namespace; AllNamespaces lists every one).
func (io *IOContext) SetNamespace(ns string) {
	io.mu.Lock()
	io.ns = ns
	io.mu.Unlock()
}

// Namespace returns the namespace.
func (io *IOContext) Namespace() string {
	io.mu.Lock()
	defer io.mu.Unlock()
	return io.ns
}

// SetLocator sets the locator key of later operations: objects with the
// same key are placed together (in one PG). "" places objects by name.
func (io *IOContext) SetLocator(key string) {
	io.mu.Lock()
	io.locator = key
	io.mu.Unlock()
}

// objectID returns the id of the named object in the current namespace
// and locator.
func (io *IOContext) objectID(name string) (objid.ID, error) {
	io.mu.Lock()
	ns, key := io.ns, io.locator
	io.mu.Unlock()
	if ns == AllNamespaces {
		return objid.ID{}, fmt.Errorf("%w: object %q: AllNamespaces is for listing", ErrInvalid, name)
	}
	if name == "" {
		return objid.ID{}, fmt.Errorf("%w: empty object name", ErrInvalid)
	}
	id := objid.New(io.pool, ns, key, name, objid.NoSnap)
	if err := id.Validate(); err != nil {
		return objid.ID{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return id, nil
}

// submission is what start sends: a compound operation on one object and
// how its reply is handled.
type submission struct {
	name  string // the object
	ops   []wire.ObjectOp
	steps []func(*wire.ObjectOpResult) // one per op; nil entries fill nothing
	flags uint32                       // wire.OSDOp flags (FlagWantApplied for async writes)
	// copies says the steps keep nothing of the reply (ReadOp.keeps is
	// 0), so its buffer can be reused once they ran.
	copies bool
	// watchCtx says the op watches ctx itself, for callers that return the
	// Completion; otherwise the caller must wait for it with waitOp(ctx).
	watchCtx bool
	// take, if not nil, takes the reply's buffer after the steps ran
	// (op.takeReply).
	take func(release func())
}

// writeSubmission and readSubmission are the submissions of a WriteOp and
// a ReadOp on object name, to be waited for.
func writeSubmission(name string, w *WriteOp) submission {
	return submission{name: name, ops: w.ops, steps: w.steps}
}

func readSubmission(name string, r *ReadOp) submission {
	return submission{name: name, ops: r.ops, steps: r.steps, copies: r.keeps == 0}
}

// start builds the op of s and submits it.
func (io *IOContext) start(ctx context.Context, s submission) *Completion {
	comp := newCompletion(s.flags&wire.FlagWantApplied != 0)
	id, err := io.objectID(s.name)
	if err == nil && len(s.ops) == 0 {
		err = fmt.Errorf("%w: %q: empty operation", ErrInvalid, s.name)
	}
	if err != nil {
		comp.complete(0, err, nil)
		return comp
	}
	p := &op{name: s.name, msg: wire.OSDOp{Object: id, Flags: s.flags, Ops: s.ops}, comp: comp, copiesReply: s.copies, takeReply: s.take}
	io.setSnaps(&p.msg)
	p.balanced = wire.ReplicaReadable(p.msg.Object, s.ops) // a read at a snapshot goes to the primary
	if steps := s.steps; len(steps) > 0 {
		p.onReply = func(r *wire.OSDOpReply) { fillSteps(steps, r) }
	}
	io.conn.obj.submit(ctx, p, s.watchCtx, io.conn.opTimeout(ctx))
	return comp
}

// OperateWrite runs a compound write on object name and returns once it
// is committed (durable on every replica).
func (io *IOContext) OperateWrite(ctx context.Context, name string, w *WriteOp) error {
	return io.start(ctx, writeSubmission(name, w)).waitOp(ctx)
}

// OperateWriteAsync starts a compound write on object name. Its
// Completion reports when it is applied and when committed; ctx bounds
// the whole operation.
func (io *IOContext) OperateWriteAsync(ctx context.Context, name string, w *WriteOp) *Completion {
	s := writeSubmission(name, w)
	s.flags, s.watchCtx = wire.FlagWantApplied, true
	return io.start(ctx, s)
}

// OperateRead runs a compound read on object name; its results are in
// the ReadOp's steps.
func (io *IOContext) OperateRead(ctx context.Context, name string, r *ReadOp) error {
	return io.start(ctx, readSubmission(name, r)).waitOp(ctx)
}

// OperateReadAsync starts a compound read on object name; the steps hold
// its results once the Completion is committed without error.
func (io *IOContext) OperateReadAsync(ctx context.Context, name string, r *ReadOp) *Completion {
	s := readSubmission(name, r)
	s.watchCtx = true
	return io.start(ctx, s)
}
