package monstore

import "errors"

// Errors of this package, possibly wrapped with context; test for them with
// errors.Is. The raft.Storage methods (Entries, Term, Snapshot) also return
// raft's own sentinels unwrapped (raft.ErrCompacted, raft.ErrUnavailable,
// raft.ErrSnapshotTemporarilyUnavailable), because raft compares them with
// ==; Append, ApplySnapshot and Compact wrap raft.ErrSnapOutOfDate,
// raft.ErrCompacted and raft.ErrUnavailable with context.
var (
	// ErrCorrupt means a record on disk or a snapshot payload is malformed:
	// a bad checksum, envelope, length, or a value inconsistent with its key
	// or with the rest of the store. The store never serves such data.
	ErrCorrupt = errors.New("monstore: corrupt data")
	// ErrNotFound means a service key does not exist.
	ErrNotFound = errors.New("monstore: not found")
	// ErrInvalid means an argument breaks the store's contract: an append
	// that leaves a gap or overwrites applied entries, an applied index that
	// does not advance, a service name or key out of bounds, and the like.
	// It signals a bug in the caller; nothing was written.
	ErrInvalid = errors.New("monstore: invalid argument")
	// ErrClosed means the store has been closed.
	ErrClosed = errors.New("monstore: closed")
	// ErrFailed means an earlier write failed, so the store no longer knows
	// what is durable; it refuses writes until it is closed and reopened.
	ErrFailed = errors.New("monstore: failed after a write error")
)
