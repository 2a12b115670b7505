// Package radoscmd holds the object tools of the cuttle command tree:
// "cuttle rados" (put, get, ls, stat, cp, rm, and the xattr and omap
// commands on one pool and namespace, as Ceph's rados tool has them) and
// "cuttle bench" (rados bench's write, seq and rand workloads through
// internal/bench). It owns their flags, their streaming of object data,
// and the one table from the client library's error classes to what the
// CLI says (radosFailure).
//
// It works through the rados client library only and must not know how a
// connection is configured: internal/cli builds the tree and passes each
// family a [DialFunc] made from its cluster flags (--conf, --mon-host,
// --keyring, --timeout), so tests dial a simulated cluster instead.
// Results print through internal/cli/cmdutil's Output.
//
// # Concurrency
//
// The commands are used by one goroutine at a time, as the tree they
// belong to is; a command may keep several operations in flight on its
// own connection, and closes it before it returns.
package radoscmd
