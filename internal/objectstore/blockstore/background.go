package blockstore

import (
	"github.com/cockroachdb/pebble/v2"
)

// Background is told when the metadata database starts and finishes a
// memtable flush or a compaction, from the goroutine doing the work.
// Each is a burst of CPU, milliseconds for a flush and tens of them for
// a compaction under small writes; a daemon that runs its Go code on
// one thread (procs.Governor) gives it a thread of its own meanwhile, so
// that requests do not wait behind it. Hold and Release must not block
// for long: Pebble calls them with its database mutex held.
type Background interface {
	Hold()
	Release()
}

// backgroundListener reports Pebble's flushes and compactions to b.
// Pebble calls each End after its Begin on every path, errors included.
func backgroundListener(b Background) *pebble.EventListener {
	return &pebble.EventListener{
		FlushBegin:      func(pebble.FlushInfo) { b.Hold() },
		FlushEnd:        func(pebble.FlushInfo) { b.Release() },
		CompactionBegin: func(pebble.CompactionInfo) { b.Hold() },
		CompactionEnd:   func(pebble.CompactionInfo) { b.Release() },
	}
}
