// Package blockstore is Cuttle's real object-store engine, modelled on
// Ceph's BlueStore: object data on one preallocated file or raw device,
// metadata (object records with their extent maps and checksums, omap,
// collections, allocator state, deferred writes) in Pebble.
//
// It owns transaction preparation (txn.go, txnops.go), the
// commit pipeline (commit.go, deferred.go), reads with checksum
// verification (read.go) and the record cache (cache.go). Two child
// packages know nothing of this one: format, the on-disk codec (the
// layout of keys and values, the key encoding, the object record), and
// alloc, the extent allocator. blockstore knows
// nothing of placement groups, replication or the network: it implements
// objectstore.Store and nothing more. Every file is reached through one
// pebble vfs.FS, so tests inject crashes (vfs.NewCrashableMem,
// CrashClone) and I/O errors (errorfs).
//
// Concurrency: a Store is safe for concurrent use. Queue prepares a
// transaction under one mutex (prepMu) against the applied state plus an
// overlay of records changed by queued transactions, allocates its space
// and queues it; one committer goroutine commits queued transactions in
// groups (commit.go gives the order of writes and syncs). Readers hold a
// read lock (applyMu) that the committer takes exclusively only to make
// a group visible. Applied fires when a group's Pebble batch is visible;
// Committed when the Pebble WAL has been synced.
//
// Start reading at format/format.go (the on-disk layout and the
// crash-safety argument), then txn.go, which reads as one transaction's
// path from Queue to the committer (commit.go).
package blockstore
