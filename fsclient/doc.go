// Package fsclient is the Cuttle file-system client library: what an
// application links to use a Cuttle file system without a mount, and
// what the FUSE mount (internal/fusemount) is built on.
//
// It owns the client's side of the file-system protocol (internal/wire's
// fs messages, docs/CAPABILITIES.md): file data read and written
// straight from and to the OSDs over each file's layout (package
// striper), with a write-back buffer and a read cache with readahead
// that the file's capabilities allow or forbid (filedata.go). It knows
// nothing of how the MDS stores the namespace.
//
// Concurrency: every exported type is safe for concurrent use. The
// decisions about requests and sessions are pure state machines in its
// internal packages; this package does their I/O.
//
// docs/FSCLIENT.md describes caching, coherence and failover.
package fsclient
