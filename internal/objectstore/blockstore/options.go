package blockstore

import (
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// Defaults for Options.
const (
	DefaultAllocUnit     = 64 << 10
	DefaultChecksumBlock = 4 << 10
	DefaultCacheBytes    = 256 << 20
)

// Options configure Mkfs and Open.
type Options struct {
	// Path is the store's directory: it holds the data file "block" (unless
	// DevicePath is set) and the Pebble database "db".
	Path string
	// DevicePath, if set, names the data file or raw block device to use
	// instead of Path/block. Mkfs does not create it; it must exist and
	// hold at least Size bytes.
	DevicePath string
	// FS is the file system every file is reached through (data file and
	// Pebble); tests pass a vfs.MemFS or an errorfs. Default vfs.Default.
	FS vfs.FS
	// Size is the device size in bytes, used by Mkfs and rounded down to a
	// multiple of AllocUnit. Open reads it from the superblock.
	Size uint64
	// AllocUnit is the allocation granularity in bytes, a power of two
	// (Mkfs; default 64 KiB). Open reads it from the superblock.
	AllocUnit uint64
	// ChecksumBlock is the granularity of the crc32c checksums, a power of
	// two no larger than AllocUnit (Mkfs; default 4 KiB).
	ChecksumBlock uint64
	// CacheBytes bounds the memory the store caches in (default 256
	// MiB): half for decoded object records, a quarter for Pebble's
	// block cache and a quarter for Pebble's memtables (up to four of
	// CacheBytes/16 each, each store's a random 3/4 to all of that:
	// spreadMemTable).
	CacheBytes int64
	// DataCacheBytes bounds the object data the store caches for reads
	// (datacache.go), on top of CacheBytes; 0 caches none. Blocks read
	// from the data file are kept verified, by device offset, and a read
	// that finds them copies them instead of reading the device.
	DataCacheBytes int64
	// DirectReads reads small blocks with O_DIRECT too, never through the
	// kernel's page cache (default false: reads under 256 KiB are
	// buffered and the kernel caches what they read; datafile_read.go).
	DirectReads bool
	// Logger receives the store's log records (default: discarded).
	Logger *slog.Logger
	// Background, if set, is told of the metadata database's flushes and
	// compactions (Background).
	Background Background

	// testSkipDeferredApply leaves deferred writes unapplied after commit,
	// to simulate a crash between commit and apply.
	testSkipDeferredApply bool
	// testNoKeyFilter never builds the key filter: every lookup goes
	// to Pebble.
	testNoKeyFilter bool
	// testLoggedPerWAL, if not 0, replaces maxLoggedPerWAL.
	testLoggedPerWAL int
	// testFilterMinKeys, if set, replaces minFilterKeys, so that a
	// test rebuilds the key filter after a few creations.
	testFilterMinKeys int64
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.AllocUnit == 0 {
		o.AllocUnit = DefaultAllocUnit
	}
	if o.ChecksumBlock == 0 {
		o.ChecksumBlock = DefaultChecksumBlock
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.AllocUnit != 0 {
		o.Size -= o.Size % o.AllocUnit
	}
	return o
}

func (o Options) validate() error {
	if o.Path == "" {
		return fmt.Errorf("%w: blockstore: empty Path", objectstore.ErrInvalid)
	}
	if o.CacheBytes < 0 {
		return fmt.Errorf("%w: blockstore: negative CacheBytes", objectstore.ErrInvalid)
	}
	if o.DataCacheBytes < 0 {
		return fmt.Errorf("%w: blockstore: negative DataCacheBytes", objectstore.ErrInvalid)
	}
	return nil
}

// Pebble's L0 thresholds (see pebbleOptions).
const (
	l0CompactionThreshold = 16
	l0StopWritesThreshold = 64
)

// memTables is the number of Pebble memtables (one mutable, the rest
// waiting to flush) before writes stall.
const memTables = 4

// cacheBudget is CacheBytes split between the caches.
type cacheBudget struct {
	records, blockCache int64
	memTable            uint64
}

func (o Options) budget() cacheBudget {
	return cacheBudget{
		records:    o.CacheBytes / 2,
		blockCache: o.CacheBytes / 4,
		// Pebble wants a memtable of at least a few pages; 1 MiB keeps
		// tiny test budgets working.
		memTable: uint64(max(o.CacheBytes/(4*memTables), 1<<20)),
	}
}

// spreadMemTable scales a memtable size by a factor in [3/4, 1) taken
// from u in [0, 1), rounded down to 4 KiB. OSDs that share a machine
// and hold the same PGs receive the same writes; with memtables of one
// size they flushed, and then compacted, in the same milliseconds, and
// those bursts of CPU together stalled every OSD's requests at once (at
// size 3 on the benchmark machine, p99.9 of 4 KiB writes 35 ms with one
// size, 14-20 ms spread; docs/benchmarks/2026-11-29.md, "Session 31").
// Spread, each OSD flushes in its own time. Scaling down keeps the
// memtables within the store's cache budget.
func spreadMemTable(size uint64, u float64) uint64 {
	scaled := uint64(float64(size) * (0.75 + u/4))
	return max(scaled&^(4<<10-1), 1<<20)
}

func (o Options) devicePath() string {
	if o.DevicePath != "" {
		return o.DevicePath
	}
	return o.FS.PathJoin(o.Path, "block")
}

func (o Options) dbPath() string { return o.FS.PathJoin(o.Path, "db") }
