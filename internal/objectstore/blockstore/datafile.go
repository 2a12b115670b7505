package blockstore

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
)

// StagingBytes is the most memory a store maps for the staging buffers
// of large direct reads, outside the Go heap.
const StagingBytes = dio.StagingBytes

// dataFile is the store's data file and every way the store reads and
// writes it: buffered through the vfs.File; on the OS's file system a
// second descriptor opened with O_DIRECT, Linux AIO contexts for reads,
// for the applier's in-place writes and for syncs; huge-page staging
// buffers for large direct reads and readahead for sequential ones
// (datafile_read.go, datafile_readahead.go); the applier's vectored,
// direct and buffered writes (deferred.go's writeInPlace) and the
// committer's direct copy-on-write writes (commit.go). The mechanisms
// (aligned buffers, O_DIRECT, AIO, staging buffers, raw system calls)
// are package dio's; dataFile holds the policy: which read or write
// takes which way, and what to do when one is turned away. It knows
// blocks and offsets, not records: a caller's verify function checks
// what it reads. Its methods are safe for concurrent use; close waits
// for nothing, so the store calls it when no read or write is left.
type dataFile struct {
	file vfs.File
	// direct is the data file opened again with O_DIRECT for small
	// reads and deferred writes (datafile_read.go); nil unless the store
	// is on vfs.Default.
	direct *os.File
	aio    *dio.AIO // asynchronous reads of direct, or nil
	aioW   *dio.AIO // the applier's asynchronous writes of direct, or nil
	// aioSync runs the WAL's and the data file's syncs (dio.WithAIOSync),
	// or is nil; closed after Pebble.
	aioSync *dio.AIO
	// staging holds the huge-page buffers of large direct reads.
	staging dio.Staging
	// ra prefetches for sequential large reads; writes tells it whether
	// the data file changed under a prefetch (datafile_readahead.go).
	ra     readahead
	writes dataWrites
	// cache holds verified blocks for reads (datacache.go), or is nil;
	// every write below tells it what it wrote (wrote).
	cache *dataCache

	size          uint64 // the device's size (the superblock's)
	checksumBlock uint64 // the superblock's checksum block
	directReads   bool   // Options.DirectReads: small reads skip the page cache

	statDirectWrites atomic.Uint64 // copy-on-write data written with O_DIRECT
	statReadahead    atomic.Uint64 // large reads served from a prefetch
	statStaged       atomic.Uint64 // large reads through a staging buffer
	statUnstaged     atomic.Uint64 // large direct reads that found no staging buffer free
	statCachedReads  atomic.Uint64 // small reads through the page cache
	statStaleCached  atomic.Uint64 // cached reads that failed their checksums and were read again
}

// open opens the data file at path on fs (which Open has checked is
// there), and on the OS's file system its O_DIRECT descriptor and AIO
// contexts. d.aioSync, if set, runs the file's syncs.
func (d *dataFile) open(fs vfs.FS, path string) error {
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("open data file: %w", err)
	}
	d.file = dio.WithAIOSync(f, d.aioSync)
	if fs == vfs.Default {
		d.direct = dio.OpenDirect(path)
		if d.direct != nil {
			// Small reads come through the page cache (datafile_read.go):
			// they are random, so readahead would only pull in
			// neighbours nobody asked for.
			dio.AdviseRandom(d.file.Fd())
			// Separate contexts, so that a batch of deferred writes
			// never fills the readers' queue.
			d.aio, d.aioW = dio.NewAIO(d.direct), dio.NewAIO(d.direct)
		}
	}
	return nil
}

// writeAt writes p at off through the page cache.
func (d *dataFile) writeAt(p []byte, off uint64) error {
	defer d.wrote(off, uint64(len(p)))
	_, err := d.file.WriteAt(p, int64(off))
	return err
}

// writeVectored writes bufs, which follow each other, at offset off of the
// data file: one raw pwritev where the file is an OS file (see
// dio.StartWriteback for why raw).
func (d *dataFile) writeVectored(bufs [][]byte, off uint64) error {
	var n uint64
	for _, b := range bufs {
		n += uint64(len(b))
	}
	defer d.wrote(off, n)
	if d.direct == nil {
		return d.writeEach(bufs, off) // not an OS file (vfs.NewMem in tests)
	}
	return dio.WriteVectored(d.file, bufs, off)
}

// wrote tells the data cache that [off, off+n) of the file was written
// (or a write there failed, which may have written part): every write
// to the data file calls it once done.
func (d *dataFile) wrote(off, n uint64) {
	if d.cache != nil {
		d.cache.invalidate(off, n)
	}
}

// wroteAll is wrote for each of ws.
func (d *dataFile) wroteAll(ws []format.DeferredWrite) {
	for _, w := range ws {
		d.wrote(w.DevOff, uint64(len(w.Data)))
	}
}

// startWriteback starts the writeback of the data file's dirty pages in
// [off, off+n) without waiting for it (the data sync that follows waits).
func (d *dataFile) startWriteback(off, n uint64) {
	if d.direct == nil {
		return // not an OS file (vfs.NewMem in tests)
	}
	dio.StartWriteback(d.file.Fd(), off, n)
}

// dropCached asks the kernel to drop the data file's cached pages of
// [off, off+n), so that the next buffered read of them goes to the device.
func (d *dataFile) dropCached(off uint64, n int) { dio.DropCached(d.file.Fd(), off, n) }

// syncData syncs the data file's data.
func (d *dataFile) syncData() error { return d.file.SyncData() }

// close waits for the prefetches under way, then closes the files and
// the AIO contexts; nothing else may be in flight.
func (d *dataFile) close() error {
	d.ra.wg.Wait()
	var errs []error
	if d.file != nil {
		if err := d.file.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close data file: %w", err))
		}
	}
	d.staging.Close()
	d.cache.close()
	for _, a := range []*dio.AIO{d.aio, d.aioW, d.aioSync} {
		if a != nil {
			a.Close()
		}
	}
	if d.direct != nil {
		if err := d.direct.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close data file: %w", err))
		}
	}
	return errors.Join(errs...)
}
