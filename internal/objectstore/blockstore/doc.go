// Package blockstore is Cuttle's real object-store engine, modelled on
// Ceph's BlueStore: object data on one preallocated file or raw device,
// metadata (object records with their extent maps and checksums, omap,
// collections, allocator state, deferred writes) in Pebble.
//
// What each file owns:
//
//	store.go, options.go   Mkfs, Open, Close, loading the superblock,
//	                       bitmap, pool counters and collections
//	txn.go                 one transaction's path, read top to bottom:
//	                       Queue, prepare, apply (the op dispatch),
//	                       finish (records, bitmap, counters, data blocks
//	                       into the batch), the hand-off to the committer,
//	                       and the working state (txnState) it uses
//	txnops.go              the op bodies apply calls: write, zero,
//	                       truncate, destroy, clone, cloneRange, move
//	commit.go              the commit pipeline, a type of its own
//	                       (pipeline): the queue, the committer, syncer
//	                       and applier goroutines, the order of their
//	                       writes and syncs, failure; it reaches the
//	                       store only through pipelineHost
//	applied.go             what the pipeline hands back: a group's state
//	                       to the readers, freed space to the allocator,
//	                       the prepare overlay's cleanup
//	deferred.go,           deferred writes: applying them in place,
//	deferredlog.go,        replaying them at Open, reading their data
//	walkeep.go, walwatch.go  from the WAL files the store keeps back
//	dataoverlay.go         data of queued transactions, for reads
//	read.go                reads: records, data with checksum
//	                       verification, attributes, omap, listings
//	cache.go, cacheindex.go  the record cache
//	datacache.go           the data cache: verified checksum blocks by
//	                       device offset, invalidated by every write to
//	                       the data file (dataFile.wrote)
//	keyfilter.go, filterbuild.go  the filter of existing record keys
//	datafile*.go           the data file (dataFile, datafile.go): which
//	                       read or write goes which way (direct or
//	                       cached reads, staging buffers, the stale-cache
//	                       re-read: datafile_read.go), readahead
//	                       (datafile_readahead.go); the mechanisms are
//	                       package dio's
//	fsck.go, fsckcheck.go, fsckrepair.go  the offline check and repair
//	                       that `cuttle objectstore fsck` runs
//	layout.go, kvstats.go, counters.go  inspection and statistics for
//	                       the debug tools and the OSD's metrics
//	background.go          Pebble's flushes and compactions, told to the
//	                       daemon's thread governor
//
// Three child packages know nothing of this one: format, the on-disk
// codec (the layout of keys and values, the order-preserving key
// encoding, the object record; pure, with its fuzz tests); alloc, the
// extent allocator; and dio, direct and asynchronous I/O (aligned
// buffers, O_DIRECT, Linux AIO, huge-page staging buffers, the WAL
// written around the page cache, the raw system calls). blockstore knows nothing of placement groups, replication or
// the network: it implements objectstore.Store and nothing more. Every
// file is reached through one pebble vfs.FS, so tests inject crashes
// (vfs.NewCrashableMem, CrashClone) and I/O errors (errorfs).
//
// A Store is three parts, each with its own state and locks: the Store
// itself (the prepare state under prepMu, the readers' state under
// applyMu, the record cache and key filter), the commit pipeline
// (pipeline, commit.go) and the data file (dataFile, datafile.go). The
// Store's methods are the objectstore.Store API, Open, Close, the debug
// tools' inspection, and the steps of a transaction's preparation.
//
// Concurrency: a Store is safe for concurrent use. Queue prepares a
// transaction under one mutex (prepMu) against the applied state plus an
// overlay of records changed by queued transactions, allocates its space
// and hands it to the pipeline, whose committer goroutine commits queued
// transactions in groups (commit.go gives the order of writes and
// syncs). Readers hold a read lock (applyMu) that the committer takes
// exclusively (pipelineHost.lockReaders) only to make a group
// visible. Applied fires when a group's Pebble batch is visible;
// Committed when the Pebble WAL has been synced. Lock order: Queue takes
// the pipeline's queueMu, appliedMu and finishMu under prepMu, each for
// a hand-off only; the pipeline calls pipelineHost.release (prepMu)
// holding none of its locks, and lockReaders (applyMu) at most under
// deferredMu, which neither Queue nor readers take.
//
// Start reading at format/format.go (the on-disk layout and the
// crash-safety argument), then txn.go, which reads as one transaction's
// path from Queue to the committer, then commit.go.
package blockstore
