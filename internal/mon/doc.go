// Package mon is the monitor daemon's core: it drives an etcd raft
// RawNode over the monitor store (monstore), turns client commands into
// proposals of its services (moncmd.Service: the OSD map, config, auth),
// applies committed proposals in order on every monitor, answers reads
// after a ReadIndex so they are never stale, pushes map epochs to
// subscribers, and watches the other monitors' liveness and clocks.
//
// It does not know what the services store, and it does no formatting
// of their results; it owns the monitor map, the entry format, the
// request bookkeeping and the monitor-level health checks.
//
// Concurrency: one goroutine (loop.go) owns the RawNode and applies
// committed entries; request goroutines (commands.go) hand it proposals
// and read-index requests over channels and wait for their results.
// Service methods are serialized by svcMu. Start with monitor.go.
package mon
