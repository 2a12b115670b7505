// Package osdmon is the monitor's OSD-map service (Ceph's OSDMonitor),
// named "osdmap": it owns the cluster's OSD map (OSD states, addresses and
// weights, pools, flags and the CRUSH map), turns the "osd ..." commands
// into new epochs of it, filters OSD failure reports, marks long-down OSDs
// out, steps pools' pgp_num toward their targets (pgstep.go) and reports
// the map's health checks.
//
// It knows nothing of Raft, the network or clocks: it implements
// moncmd.Service, takes the time as an argument and reads its options
// through the Options interface (internal/mon/configmon's View implements
// it). The driver (internal/mon) routes commands, proposes what Prepare
// returns and hands committed proposals to Apply on every monitor.
//
// # Epochs and the store
//
// Every accepted write makes exactly one new epoch. A proposal carries the
// epoch it was prepared against and an osdmap.Incremental (or, for the
// first epoch, the full map); Apply refuses it with EAGAIN if the map has
// moved on, else applies it and writes, under the service name "osdmap",
// the full map and the incremental of the epoch with
// monstore.Batch.PutEpoch (encoded by osdmap's MarshalBinary, so
// subscribers read them with Store.Full and Store.Inc and decode them with
// osdmap.UnmarshalMap and osdmap.UnmarshalIncremental), trims the history
// to mon_min_osdmap_epochs epochs, and rewrites the key "meta": what the
// map has no field for (proposal.go and meta.go give the formats).
//
// # What is replicated and what is not
//
// Replicated, and so the same on every monitor: the map, each OSD's uuid
// and the time it went down (meta). The time comes from the leader's clock
// when it prepared the change, inside the proposal, so every monitor and
// every later leader computes the same down-out deadline.
//
// Not replicated: pending failure reports (failure.go). Like Ceph's
// OSDMonitor, only the leader keeps them, in memory; OSDs resend their
// reports every heartbeat interval, so a new leader rebuilds them within a
// grace period, and losing them only delays a mark-down. Prepare of
// "osd failure" records a report there; it never changes replicated state.
//
// # Concurrency
//
// A Service is not safe for concurrent use; the driver calls it from one
// goroutine. Maps it returns are immutable.
//
// Start reading at Service (service.go), then txn.go for how a command
// becomes a proposal.
package osdmon
