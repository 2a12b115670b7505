// Package dio owns the mechanisms of direct and asynchronous I/O under
// the block store's data file and its Pebble WAL: buffers aligned for
// O_DIRECT (AlignedBuf, IsAligned, Align); opening a file with O_DIRECT
// (OpenDirect) and the page-cache advice and raw system calls of the
// buffered path (AdviseRandom, DropCached, StartWriteback,
// WriteVectored); Linux AIO contexts that submit reads, writes, syncs
// and durable writes without blocking a thread in the kernel (AIO, with
// ErrBusy for a request the kernel turns away); files whose syncs and
// appends go through an AIO context (WithAIOSync); the pool of huge-page
// staging buffers for large direct reads (Staging); and the WAL written
// around the page cache (NewDirectWAL).
//
// It holds no policy: which read or write takes which way, the
// fallbacks when a way is refused, readahead and checksum verification
// belong to the caller (blockstore's dataFile). It knows nothing of
// records, formats or the store; its only view of Pebble is vfs.File.
//
// Platforms: the *_linux.go files hold the real implementations, AIO and
// the direct WAL on linux/amd64 and linux/arm64 only (the iocb layout is
// little-endian 64-bit). Elsewhere (*_other.go) OpenDirect, NewAIO and
// NewSyncAIO return nil, NewDirectWAL and WithAIOSync return the file
// they are given, Staging maps nothing and the advice calls do nothing,
// so callers take their buffered ways; every caller must handle a nil
// *os.File or *AIO.
//
// Concurrency: an AIO's methods and a Staging's are safe for concurrent
// use; their Close must come after every request has returned and every
// buffer is back. A direct WAL is used by one goroutine at a time, as
// Pebble's LogWriter does. The functions hold no state.
package dio
