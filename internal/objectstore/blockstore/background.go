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

// spreadMemTable scales a memtable size by a factor in [3/4, 1) taken
// from u in [0, 1), rounded down to 4 KiB. OSDs that share a machine
// and hold the same PGs receive the same writes; with memtables of one
// size they flushed, and then compacted, in the same milliseconds, and
// those bursts of CPU together stalled every OSD's requests at once (at
// size 3 on the benchmark machine, p99.9 of 4 KiB writes 35 ms with one
// size, 14-20 ms spread; BENCHMARKS.md, "Session 31"). Spread, each OSD
// flushes in its own time. Scaling down keeps the memtables within the
// store's cache budget.
func spreadMemTable(size uint64, u float64) uint64 {
	scaled := uint64(float64(size) * (0.75 + u/4))
	return max(scaled&^(4<<10-1), 1<<20)
}
