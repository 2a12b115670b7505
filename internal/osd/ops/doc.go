// Package ops executes the op vector of a client request (wire.OSDOp) on
// one object of a placement group: it reads through an
// objectstore.Store, appends every change to one objectstore.Transaction,
// and returns each op's result. It never queues the transaction: the PG
// does, with the PG log entry in the same transaction, and replicates it.
//
// Semantics, as a Ceph user expects them:
//   - The ops of one request apply all or nothing: the first op that fails
//     ends execution, its errno is the request's result, and the
//     transaction is discarded.
//   - Every op sees the object as the ops before it left it: existence
//     and size (an append after a write appends after it; a write after
//     a delete recreates the object), data, attributes, omap entries and
//     header (a cmpxattr after a setxattr compares the new value; a stat
//     after a delete fails with ENOENT). A read after a write reads what
//     the store held before the request with the request's pending
//     transaction replayed over it (pending.go); a request with no read
//     after a write reads the store directly.
//   - Writes to a missing object create it, except removals (delete,
//     rmxattr, omap key removal and omap clear), which fail with
//     ENOENT.
//
// The object's version and modification time live in an internal
// attribute (InfoAttr); user attributes are stored with UserAttrPrefix so
// that they never collide with it. Object-class methods (OpCall) run
// inside the same execution: the Env's objclass.Registry looks them up,
// and they see the object through this package's objclass.Context
// (call.go). This package knows no class: internal/cls holds them.
//
// Execute is safe for concurrent use on different objects; the PG
// serialises requests to one object.
package ops
