// Package objectstore defines the local object store of an OSD: the
// interface every storage engine implements, the Transaction that groups
// changes so they apply atomically, and the errors engines return.
//
// An OSD keeps one collection per placement group plus a meta collection.
// Objects are named by objid.ID and listed in objid's hash order, which PG
// splitting, backfill and scrub rely on. Every change goes through a
// Transaction, which the store applies all or nothing and reports twice, as
// in the RADOS paper: Applied when readers can see it, Committed when it
// survives power loss (Completion).
//
// This package knows nothing of placement groups' logs, replication or the
// network; it is the bottom of the OSD. Engines live in sub-packages:
// memstore (in memory, the reference for tests) and blockstore (data on a
// block file or device, metadata in Pebble). storetest holds the
// conformance suite both must pass.
//
// Concurrency: a Store is safe for concurrent use. Transactions queued from
// one goroutine apply in the order they were queued; reads see every
// transaction whose Applied has fired. A Transaction must not be modified
// once queued.
//
// Start reading at Store (store.go) and Transaction (transaction.go).
package objectstore
