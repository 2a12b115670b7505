package blockstore

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Deferred data lives in Pebble's WAL only: each deferred write is a
// LogData record in its transaction's batch (format/format.go, EncodeLogged),
// and its 'D' key, whose value is empty, points at it. Pebble writes
// LogData to the WAL and never to a memtable, so the memtables and the
// tables flushed from them carry a 17-byte key per small write instead
// of the write's data (docs/benchmarks/2026-11-29.md, "Session 32").
//
// Pebble forgets a WAL once the memtable it fed is flushed: it deletes
// the file (Remove) or renames it to be the next WAL (ReuseForWrite).
// The deferred data in it is needed until the applier has written it
// in place, synced the data file, and the deletion of its 'D' key is
// durable; Open replays the 'D' keys it finds from the WAL files on
// disk. walKeeper holds such WALs back: a WAL Pebble gives up while a
// deferred write it may hold can still be replayed stays on disk, under
// its name, until the durable deletions have passed every such write;
// then the applier removes it. What a WAL may hold is bounded when
// Pebble starts the next one: Pebble starts a WAL while no batch is
// being written (it holds its commit pipeline's lock), and the
// committer hands a batch's deferred writes to the keeper before it
// commits the batch, so every batch in the WAL was handed before. Pebble
// renames a WAL for reuse on its commit path, where waiting is not an
// option (the applier's deletions commit through the same path): a WAL
// still held is kept, and the new one is created afresh instead.
//
// Pebble's Open lists the WALs it no longer needs and removes them; they
// are held until the store has replayed its deferred writes
// (endRecovery), so WALs left by a crash, or held at a clean Close, are
// read first.
type walKeeper struct {
	fs  vfs.FS
	log *slog.Logger
	// handed is the highest seq of a transaction whose deferred data the
	// committer has handed to Pebble; everything a WAL holds was handed
	// before Pebble gave the WAL up.
	handed atomic.Uint64
	// created counts the WAL files Pebble has started.
	created atomic.Uint64

	mu         sync.Mutex
	recovering bool   // hold every WAL: Open has not replayed yet
	durable    uint64 // every 'D' key with a seq up to it is durably deleted
	held       []heldWAL
	current    string            // the WAL Pebble writes
	ended      map[string]uint64 // WALs Pebble has moved on from: what they may hold
}

// heldWAL is a WAL Pebble has given up that may hold deferred data of
// transactions up to bound.
type heldWAL struct {
	name  string
	bound uint64
}

// newWALKeeper returns a keeper that holds every WAL until endRecovery.
func newWALKeeper(fs vfs.FS, log *slog.Logger) *walKeeper {
	return &walKeeper{fs: fs, log: log, recovering: true, ended: make(map[string]uint64)}
}

// started records that Pebble has started writing the WAL name, and so
// ended the one before.
func (k *walKeeper) started(name string) {
	k.created.Add(1)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.current != "" {
		k.ended[k.current] = k.handed.Load()
	}
	k.current = name
}

// keep reports whether the WAL name, which Pebble no longer needs, must
// stay on disk, and if so holds it.
func (k *walKeeper) keep(name string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	bound, ok := k.ended[name]
	if !ok {
		bound = k.handed.Load() // not seen ending (Open's): all handed so far
	}
	delete(k.ended, name)
	if !k.recovering && bound <= k.durable {
		return false
	}
	k.held = append(k.held, heldWAL{name: name, bound: bound})
	return true
}

// hand records that the committer hands Pebble deferred data of
// transactions up to seq.
func (k *walKeeper) hand(seq uint64) {
	if seq > k.handed.Load() {
		k.handed.Store(seq) // one committer: no race between load and store
	}
}

// deletedDurably records that every 'D' key with a seq up to seq is
// durably deleted.
func (k *walKeeper) deletedDurably(seq uint64) {
	k.mu.Lock()
	k.durable = max(k.durable, seq)
	k.mu.Unlock()
}

// endRecovery stops holding WALs for Open's replay and removes those no
// deferred write needs.
func (k *walKeeper) endRecovery() {
	k.mu.Lock()
	k.recovering = false
	k.mu.Unlock()
	k.release()
}

// release removes the held WALs whose deferred writes are all durably
// deleted.
func (k *walKeeper) release() {
	k.mu.Lock()
	if k.recovering || len(k.held) == 0 {
		k.mu.Unlock()
		return
	}
	var gone []string
	kept := k.held[:0]
	for _, h := range k.held {
		if h.bound <= k.durable {
			gone = append(gone, h.name)
		} else {
			kept = append(kept, h)
		}
	}
	k.held = kept
	k.mu.Unlock()
	for _, name := range gone {
		if err := k.fs.Remove(name); err != nil {
			// A WAL left behind costs space, not data: the next Open
			// hands it to Pebble, which removes it.
			k.log.Warn("blockstore: remove WAL held for deferred data", "wal", name, "err", err)
		}
	}
}

// heldCount returns how many WALs are held.
func (k *walKeeper) heldCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.held)
}
