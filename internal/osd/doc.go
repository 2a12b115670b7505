// Package osd is the OSD daemon's core: it boots to the monitors, follows
// the OSD map, keeps a registry of the placement groups CRUSH gives it,
// and serves them. It owns, one topic a file:
//
//   - client ops as primary (primary.go): authorized by the session's caps
//     (caps.go), refused when the OSD or pool is full (full.go), executed
//     by ops into one transaction with the PG log's entry, and replicated
//     primary-copy (the Ceph paper's section 5.2: the primary assigns the
//     version, sends the transaction to the replicas, and replies
//     *applied* once every replica applied it and *committed* once every
//     replica made it durable; a pool in ack primary mode is answered
//     once the primary made it durable, and acklag.go tracks how far
//     each replica lags behind that);
//   - the replica's side (replica.go): the primary's transactions, queued
//     to the store in the order it sent them, and reads from replicas
//     (replread.go over internal/osd/replread);
//   - the PGs' op queues (opqueue.go): client ops, rep ops, recovery
//     pushes and scrub chunks each enter their PG's queue with a class
//     and a cost, and run when it hands them out;
//   - peering and log-based recovery (recovery.go, section 5.4): on each
//     new interval the primary gathers its members' and past intervals'
//     logs (history.go keeps the old maps), lets peering.Plan choose the
//     authoritative history, brings every member to it and activates
//     once the monitors record its up_thru (upthru.go); then recovery behind client I/O (missing.go), temporary acting sets
//     for members that need a full copy (pgtemp.go), unfound objects
//     (unfound.go) and the deletion of stray copies (removal.go);
//   - watch/notify as primary (watches.go), which drives each PG's
//     watch.State: watches persisted with their objects, notifies sent
//     to the watchers' sessions unsolicited;
//   - scrub (scrub.go) and its scheduling (scrubsched.go), which carry
//     out what the scrub package decides;
//   - failure detection of its peers (heartbeat.go, section 5.3), map
//     handling and the PG registry (maps.go), PG reports to the monitors
//     (pgstats.go), admin commands (admin.go), metrics (metrics.go) and
//     the superblock that ties a store to one OSD id (superblock.go).
//
// It must not know about the monitors' internals (it speaks to them
// through monc and wire messages), the client library (rados), a storage
// engine (only the objectstore.Store interface), the transport (msgr over
// an injected Network), or flags, files and environment variables: the
// caller fills Config. Its pure parts live in sub-packages: ops,
// peering (the planning and the protocol's state machine, which
// peerdriver.go runs), pglog, scrub (comparison, repair plans and the
// schedule), opq (the op queue every class of work and the recovery and
// scrub reservations go through), replication (a write's applied and
// committed acks), recovery (what to push to whom, in what order) and
// watch (watch/notify).
// Snapshot arithmetic (snap contexts, snap sets, what a write clones) is
// the pure snaps package.
//
// Ordering and safety rules:
//   - Requests to one object run one at a time, in arrival order; the
//     next starts once the previous write is applied locally, so it sees
//     it. Different objects proceed concurrently. A recovery push holds
//     its object as a request does; a write goes ahead of a push of its
//     object that has not started, and pushes the object itself.
//   - An op whose map epoch is newer than the OSD's waits for that map; an
//     op to an OSD that is not the PG's acting primary, or from before the
//     PG's current interval, is answered -ESTALE with the OSD's epoch, and
//     so is every unfinished write when the interval changes: the client
//     resends after refreshing its map, and the PG log's request ids make
//     a resent write apply once.
//   - A PG serves I/O only once peering activated it, and with at least
//     min_size OSDs acting; until then requests wait.
//
// Concurrency: OSD methods are safe for concurrent use. The dispatcher
// never blocks: each message's handler queues work or answers. One
// goroutine applies maps in order (mapLoop); each PG's peering runs on a
// goroutine of its own per interval, fed its messages through a queue
// (peerRun), and recovery, scrub, heartbeats and reports run their own
// loops. Each PG has one mutex; the OSD's own mutex is never taken while
// holding a PG's. The smaller locks (heartbeats, map history, the
// in-flight table, a request's state, a peering run's queue) guard only
// their own fields. Close cancels the OSD's context and waits for its
// loops and the handlers they started.
//
// Start reading at Start and Config (osd.go), then dispatch.go, then
// primary.go for the client path and recovery.go for peering.
package osd
