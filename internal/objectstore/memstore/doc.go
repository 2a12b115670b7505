// Package memstore is an objectstore.Store that keeps everything in memory:
// the engine for unit tests above the object store, and the reference that
// storetest.Differential compares the real engine (blockstore) against.
// Nothing survives Close, so a transaction is durable as soon as it is
// applied and both completions fire before Queue returns.
//
// Data is sparse: an object's bytes live in 4 KiB pages (PageSize) keyed by
// page number, a missing page is a hole, and pages are never modified once
// installed (a write copies the page), so reads, clones and the
// copy-on-write view of a transaction share them. Allocation is therefore
// page-granular, as storetest requires of every engine: a write allocates
// every page it touches, a zero or truncate frees the pages it covers
// whole, and ExtentMap reports runs of allocated pages clipped to the
// object's size.
//
// A transaction runs against a view (view.go) that records changed
// collections and objects over the unchanged store; only when every
// operation has succeeded and the space check passes are the changes
// installed, so a failing transaction leaves nothing behind.
//
// The package knows only the objectstore interface and objid; it does no
// I/O. Concurrency: one sync.RWMutex; transactions apply one at a time in
// the order Queue is called, reads run in parallel, and every slice or map
// returned is the caller's own copy.
//
// Start reading at Store (memstore.go), then view.apply (view.go).
package memstore
