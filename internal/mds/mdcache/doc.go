// Package mdcache is the MDS engine: one rank's cache of the namespace
// and every metadata operation on it, journaled before it is answered.
//
// It owns the cache of directory fragments and inodes (read from the
// metadata pool through internal/mds/mdstore, one object a fragment),
// the permission checks, the journal events (event.go; written through
// internal/mds/journal, replayed by Open), the write-back of what the
// journal holds to the fragment objects and the journal's trimming
// (writeback.go), inode allocation from the rank's inode table, the
// stray directories and the purge of unlinked files' data, and caps
// through internal/mds/locker. It must not know about sessions'
// transport, beacons or the MDS map: the daemon (internal/mds/server)
// calls it through the methods of Cache (docs: the contract in
// docs/MDS.md, "The engine") and sends what it asks through Outbox.
//
// Concurrency: a Cache is safe for concurrent use. One mutex guards the
// in-memory state; it is released while a fragment is read from RADOS
// and while the journal flushes (one flush in flight at a time carries
// every event appended meanwhile: group commit). The pure decisions —
// permissions (perm.go), name and rename checks — are functions with
// table tests.
//
// Start reading at Handle (handle.go), then the txn that records a
// change as an Event (txn.go), and Open (open.go) for replay.
package mdcache
