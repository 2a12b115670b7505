// Package configmon is the monitor's central configuration service (Ceph's
// ConfigMonitor), named "config": a replicated database of option values
// by section ("global", a daemon type such as "osd", or one daemon such as
// "osd.3"), changed by the commands "config set", "config rm" and read by
// "config get", "config dump" and "config help".
//
// It checks every value against the one option schema, which lives in
// internal/config (name, type, default, bounds, description, whether a
// running daemon picks up a change, which daemons read it); it owns the
// database's store layout and its proposal format. It knows
// nothing of Raft or the network: it implements moncmd.Service, and the
// monitor's driver runs its proposals. Other services read options through
// View, which resolves a name for a section against the applied database,
// so that what they decide in Apply stays deterministic.
//
// # Store layout
//
// Under the service name "config", one key "db" holds the whole database:
//
//	envelope v1 { version uvarint, count uvarint,
//	              (section string, name string, value string) * count }
//
// in (section, name) order. version counts the changes applied; a proposal
// carries the version it was prepared against, and Apply refuses it with
// EAGAIN if another change came first.
//
// # Concurrency
//
// A Service is not safe for concurrent use: the driver calls it from one
// goroutine, as moncmd.Service requires, and Views read it on that
// goroutine too.
//
// Start reading at Service (service.go), then internal/config's schema.go.
package configmon
