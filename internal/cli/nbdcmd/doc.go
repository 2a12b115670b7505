// Package nbdcmd holds "cuttle nbd": serve, which exports block images
// (or snapshots, read-only) over the NBD protocol through internal/nbd,
// and ls, which asks a running server for its exports (docs/NBD.md). It
// owns their flags, the listen addresses ("tcp://HOST:PORT",
// "unix:///path") and the startup line a supervisor or test reads.
//
// It must not know how a connection to the cluster is configured:
// internal/cli builds the tree and passes a DialFunc made from its
// cluster flags, so tests dial a simulated cluster instead.
//
// # Concurrency
//
// The commands are used by one goroutine at a time, as the tree they
// belong to is. serve runs until its context ends (SIGINT or SIGTERM in
// the cuttle binary), then stops accepting, answers the requests in
// progress, flushes every image and closes the connection.
package nbdcmd
