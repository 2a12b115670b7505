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
//   - Existence and size follow the ops as they run (an append after a
//     write appends after it; a write after a delete recreates the
//     object). Reads, attributes and omap contents are those the object
//     had before the request, as in Ceph, where reads in a write op see
//     the stored object.
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
