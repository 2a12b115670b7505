// Package locker is the MDS's capabilities and per-inode locks, the
// heart of the file system's coherence, as a pure state machine: events
// in (a client opens a file, changes what it wants, acks a revocation
// with the size and mtime it flushed, releases its cap, its session
// ends; a metadata request needs locks; the time passes), actions out
// (grant or revoke caps, ack a flush, answer a request, report a laggy
// client, drop and fence a client). It follows the Ceph paper (sections
// 3.1 and 3.2) and CephFS's capabilities; docs/CAPABILITIES.md explains
// them for administrators and developers.
//
// The rules, in short:
//   - a capability is a set of bits (Caps) in Ceph's layout and
//     notation ("pAsLsXsFscr"); per inode and client the Locker keeps
//     what it issued, what the client still implements (issued plus
//     revocations not yet acked) and what the client wants;
//   - each inode has four locks (auth, link, xattr, file) whose states
//     (sync, mix, excl, lock) say which bits clients may hold: readers
//     alone share and cache (sync), one writer alone buffers and updates
//     size and mtime itself (excl), several clients with a writer among
//     them do synchronous I/O ordered by the OSDs (mix), and the MDS
//     changing a value holds the lock (lock);
//   - a grant waits until no other client implements a conflicting bit
//     (Caps.Conflicts), so a revocation is complete only when acked;
//   - a stat reads size and mtime under a rdlock: writers' Fw, Fb and
//     Fx are revoked first and their acks carry the flushed values; a
//     statlite asking for neither answers at once, flagging them
//     approximate;
//   - O_LAZY openers hold Fl, which lets them cache and buffer despite
//     sharing (Caps.CanCache, Caps.CanBuffer);
//   - a session that ends while its client could write asks for the
//     client to be blocklisted, and its caps block conflicting grants
//     until the driver reports it fenced;
//   - a revocation unacked past Config.RevokeWarn is reported, and past
//     Config.RevokeEvict (if set) its client is evicted; LateReleases
//     names the clients with one past Config.LateAfter (half the
//     eviction timeout) for the rank's health report.
//
// After a failover, a rank that replayed the journal takes the clients'
// caps as they report them (Reconnect) and then brings every inode to a
// consistent state (Resume).
//
// State is kept per inode (InodeCaps) so that an inode's authority can
// move to another rank (Export, Import) when several MDSs are active.
//
// It must not know about sessions' transport, the journal, the cache of
// inodes or the clock: the driver (internal/mds) sends the messages,
// journals flushed attributes before acking them, passes the time in and
// calls Tick. Concurrency: a Locker is not safe for concurrent use; the
// driver serializes calls.
//
// Start reading at Locker (locker.go), then the events (events.go) and
// evaluate (eval.go), which every event ends with.
package locker
