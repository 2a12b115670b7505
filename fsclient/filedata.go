package fsclient

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/fsclient/internal/extmap"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/striper"
)

// DataOptions bound a file's client-side data buffers.
type DataOptions struct {
	// BufferBytes is the most dirty (written, not yet flushed) bytes one
	// open file buffers under Fb before it writes them back (default
	// 8 MiB).
	BufferBytes uint64
	// CacheBytes is the most clean bytes one file caches under Fc
	// (default 16 MiB).
	CacheBytes uint64
	// ReadaheadMin and ReadaheadMax bound the readahead window of
	// sequential reads under Fc: it starts at ReadaheadMin (default
	// 128 KiB) and doubles with each sequential read up to
	// ReadaheadMax (default 4 MiB).
	ReadaheadMin, ReadaheadMax uint64
	// NoReadahead turns readahead off.
	NoReadahead bool
}

func (o DataOptions) withDefaults() DataOptions {
	if o.BufferBytes == 0 {
		o.BufferBytes = 8 << 20
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 16 << 20
	}
	if o.ReadaheadMin == 0 {
		o.ReadaheadMin = 128 << 10
	}
	if o.ReadaheadMax == 0 {
		o.ReadaheadMax = 4 << 20
	}
	o.ReadaheadMax = max(o.ReadaheadMax, o.ReadaheadMin)
	return o
}

// DataStats count a file's data operations, for tests and metrics.
type DataStats struct {
	OSDReads, OSDWrites uint64 // striper calls (each may span several objects)
	ReadBytes           uint64 // bytes read from the OSDs (readahead included)
	CacheHits           uint64 // reads served wholly from the buffers
	Flushes             uint64 // write-backs of the dirty buffer
}

// fileData is the data side of one inode this client has open: its
// bytes at the OSDs through a striper over the file's layout, the
// write-back buffer (dirty extents, written back on Flush, when it
// outgrows BufferBytes, and when Fb is revoked), the read cache with
// readahead (under Fc), and the size and mtime the client's writes set,
// which it reports to the MDS in its cap flush.
//
// The caps it is given decide the mode: with Fb (or Fl on a lazy file)
// writes are buffered, with Fc (or Fl lazy) reads are cached and read
// ahead, and with neither every read and write goes to the OSDs
// synchronously (the MDS switched the file to synchronous I/O because
// several clients use it and one writes). The caller holds Fr or Fw for
// the reads and writes it makes (the cap layer waits for them).
//
// Two locks: io orders a file's operations and is held across their
// OSD I/O (reads and writes of one open file are serialised; the OSDs
// order those of different clients) and guards the buffers; mu guards
// the caps and attributes and is never held across I/O, so that the
// client's driver, which must not wait for I/O, can read and set them.
// Lock order: io, then mu.
type fileData struct {
	st    *striper.Striper
	ino   uint64
	clock clock.Clock
	opts  DataOptions

	io    chanMutex
	dirty extmap.Map // buffered writes, newer than the OSDs
	cache extmap.Map // clean bytes as the OSDs hold them
	// raNext: where a sequential read would start; raWindow: the
	// current readahead window.
	raNext, raWindow uint64

	mu   sync.Mutex
	caps locker.Caps
	lazy bool
	// dropCache: the cache must be emptied before its next use (the
	// caps stopped allowing it, or the file shrank under it).
	dropCache bool
	size      uint64    // the file's size as this client knows it
	mtime     time.Time // the last modification this client knows
	// dirtyAttrs: size and mtime changed by this client's writes and
	// not yet reported to the MDS. attrGen counts those changes: a
	// flush acked clears dirtyAttrs only if none came after it (the
	// MDS's attributes, SetAttr, may have changed the values since).
	dirtyAttrs bool
	attrGen    uint64
	// sentTID and sentGen are the flush tid and attrGen of the last cap
	// flush that carried the attributes (FlushSent).
	sentTID, sentGen uint64
	// dirtyData: the buffer holds bytes (mirrors dirty.Len() > 0 for
	// readers that hold only mu).
	dirtyData bool
	stats     DataStats
}

// newFileData returns the data of inode ino, of size bytes last
// modified at mtime as the MDS said, whose objects st reaches, with
// caps held.
func newFileData(st *striper.Striper, ino, size uint64, mtime time.Time, caps locker.Caps, lazy bool, clk clock.Clock, opts DataOptions) *fileData {
	opts = opts.withDefaults()
	return &fileData{st: st, ino: ino, clock: clk, opts: opts, caps: caps, lazy: lazy,
		size: size, mtime: mtime, raWindow: opts.ReadaheadMin, io: make(chanMutex, 1)}
}

// chanMutex is a mutex made of a channel: io is held across OSD I/O, and
// a goroutine waiting for it (a revocation's write-back behind a read)
// waits on a channel, which the simulator's virtual time (testing/synctest)
// counts as blocked, unlike a sync.Mutex.
type chanMutex chan struct{}

func (m chanMutex) Lock()   { m <- struct{}{} }
func (m chanMutex) Unlock() { <-m }

// begin starts an operation: with io held, it empties the cache if it
// must, and returns the caps to use.
func (f *fileData) begin() (caps locker.Caps, lazy bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropCache {
		f.cache.Clear()
		f.dropCache = false
	}
	if !f.caps.CanCache(f.lazy) {
		f.cache.Clear()
	}
	return f.caps, f.lazy
}

// Stats returns the file's counters.
func (f *fileData) Stats() DataStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Size returns the size as this client knows it.
func (f *fileData) Size() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.size
}

// SetCaps changes the caps the file's data is used under. Losing the
// right to buffer writes back the dirty bytes first (a revocation of Fb
// is acked only after its data is at the OSDs), waiting for the
// operation in progress; losing the right to cache empties the cache
// before its next use. An error (the write-back failed) leaves the caps
// as they were and the dirty bytes buffered: the caller retries or
// gives up the file.
func (f *fileData) SetCaps(ctx context.Context, caps locker.Caps, lazy bool) error {
	if !caps.CanBuffer(lazy) {
		f.io.Lock()
		defer f.io.Unlock()
		if err := f.flushLocked(ctx); err != nil {
			return err
		}
	}
	f.setCaps(caps, lazy)
	return nil
}

// setCaps sets the caps without writing anything back: for caps that
// grow, or that never allowed buffering. It never waits for I/O.
func (f *fileData) setCaps(caps locker.Caps, lazy bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !caps.CanCache(lazy) {
		f.dropCache = true
	}
	f.caps, f.lazy = caps, lazy
}

// SetAttr takes the size and mtime the MDS reports (a grant, a flush
// ack, a getattr). While this client has changes not yet reported, its
// own size stands where it is larger (the MDS has not heard of it).
// A smaller size than the client knew (another client truncated)
// empties the cache. It never waits for I/O.
func (f *fileData) SetAttr(size uint64, mtime time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dirtyAttrs || f.dirtyData {
		size = max(size, f.size)
		if mtime.Before(f.mtime) {
			mtime = f.mtime
		}
	}
	if size < f.size {
		f.dropCache = true
	}
	f.size, f.mtime = size, mtime
}

// DirtyAttrs returns the size and mtime to report in a cap flush,
// whether there is anything to report, and the generation of the
// client's changes they include: call AttrsFlushed with it once the MDS
// has acknowledged the flush.
func (f *fileData) DirtyAttrs() (size uint64, mtime time.Time, dirty bool, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.size, f.mtime, f.dirtyAttrs, f.attrGen
}

// FlushSent records that cap flush tid carried the attributes of
// generation gen (DirtyAttrs).
func (f *fileData) FlushSent(tid, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sentTID, f.sentGen = tid, gen
}

// SetMDSAttr takes the size and mtime of a cap message whose attributes
// include this client's flushes up to flushTID. If they include the last
// flush that carried this client's attributes, and it changed nothing
// since, they are the file's as they stand — smaller too (another
// client truncated after the flush) — and the client's are clean;
// otherwise they are taken as SetAttr does.
func (f *fileData) SetMDSAttr(size uint64, mtime time.Time, flushTID uint64) {
	f.mu.Lock()
	current := flushTID >= f.sentTID && f.attrGen == f.sentGen && !f.dirtyData
	if current {
		f.dirtyAttrs = false
	}
	f.mu.Unlock()
	f.SetAttr(size, mtime)
}

// AttrsFlushed records that the MDS has the client's changes up to
// generation gen (DirtyAttrs): the attributes are clean unless the
// client changed them since.
func (f *fileData) AttrsFlushed(gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.attrGen == gen {
		f.dirtyAttrs = false
	}
}

// WriteAt writes p at off: into the buffer under Fb, else straight to
// the OSDs (after writing back anything buffered, so the OSDs see the
// client's writes in order). It returns len(p) or an error.
func (f *fileData) WriteAt(ctx context.Context, p []byte, off uint64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	f.io.Lock()
	defer f.io.Unlock()
	caps, lazy := f.begin()
	end := off + uint64(len(p))
	if caps.CanBuffer(lazy) {
		f.dirty.Insert(off, p)
		f.cache.Remove(off, uint64(len(p)))
		f.wrote(end)
		if f.dirty.Bytes() > f.opts.BufferBytes {
			if err := f.flushLocked(ctx); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	if err := f.flushLocked(ctx); err != nil {
		return 0, err
	}
	f.count(func(s *DataStats) { s.OSDWrites++ })
	if err := f.st.WriteAt(ctx, f.ino, p, off); err != nil {
		// The OSDs may hold part of p: the cache must not say otherwise.
		f.cache.Remove(off, uint64(len(p)))
		return 0, fmt.Errorf("fsclient: write %#x: %w", f.ino, osdErr(err))
	}
	if caps.CanCache(lazy) {
		f.insertCache(off, p)
	} else {
		f.cache.Remove(off, uint64(len(p)))
	}
	f.wrote(end)
	return len(p), nil
}

// count changes the counters.
func (f *fileData) count(change func(*DataStats)) {
	f.mu.Lock()
	change(&f.stats)
	f.mu.Unlock()
}

// wrote records a write reaching end.
func (f *fileData) wrote(end uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dirtyData = f.dirty.Len() > 0
	f.size = max(f.size, end)
	f.mtime = f.clock.Now()
	f.dirtyAttrs = true
	f.attrGen++
}

// ReadAt reads into p the bytes at off, up to the file's size: it
// returns how many, and io.EOF when off is at or past the end or p runs
// past it. Buffered writes are read back; under Fc cached bytes are
// used and sequential reads read ahead.
func (f *fileData) ReadAt(ctx context.Context, p []byte, off uint64) (int, error) {
	f.io.Lock()
	defer f.io.Unlock()
	caps, lazy := f.begin()
	size := f.Size()
	if off >= size {
		return 0, io.EOF
	}
	n := min(uint64(len(p)), size-off)
	buf := p[:n]
	caching := caps.CanCache(lazy)
	holes := f.dirty.Read(off, buf)
	if caching {
		var rest []extmap.Range
		for _, h := range holes {
			rest = append(rest, f.cache.Read(h.Off, buf[h.Off-off:h.Off-off+h.Len])...)
		}
		holes = rest
	}
	if len(holes) == 0 {
		f.count(func(s *DataStats) { s.CacheHits++ })
	}
	sequential := off == f.raNext
	f.raNext = off + n
	if caching && !f.opts.NoReadahead {
		if sequential {
			f.raWindow = min(2*f.raWindow, f.opts.ReadaheadMax)
		} else {
			f.raWindow = f.opts.ReadaheadMin
		}
	}
	for i, h := range holes {
		dst := buf[h.Off-off : h.Off-off+h.Len]
		if !caching {
			if err := f.readOSD(ctx, dst, h.Off); err != nil {
				return 0, err
			}
			continue
		}
		// Under Fc read what is missing, and on the last hole of a
		// sequential read the window beyond it, into the cache.
		want := h.Len
		if i == len(holes)-1 && sequential && !f.opts.NoReadahead {
			want = max(want, min(f.raWindow, size-h.Off))
		}
		tmp := make([]byte, want)
		if err := f.readOSD(ctx, tmp, h.Off); err != nil {
			return 0, err
		}
		copy(dst, tmp)
		// The window may cover dirty bytes, which are newer than what
		// was read: caching the OSDs' bytes there is still right, as
		// reads overlay the dirty buffer and its write-back replaces
		// the cached bytes (or removes them if it fails).
		f.insertCache(h.Off, tmp)
	}
	if n < uint64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

func (f *fileData) readOSD(ctx context.Context, dst []byte, off uint64) error {
	f.count(func(s *DataStats) {
		s.OSDReads++
		s.ReadBytes += uint64(len(dst))
	})
	if err := f.st.ReadAt(ctx, f.ino, dst, off); err != nil {
		return fmt.Errorf("fsclient: read %#x: %w", f.ino, osdErr(err))
	}
	return nil
}

// insertCache caches clean bytes, first dropping what lies before them
// and then everything if the cache would outgrow CacheBytes.
func (f *fileData) insertCache(off uint64, p []byte) {
	if uint64(len(p)) > f.opts.CacheBytes {
		f.cache.Remove(off, uint64(len(p)))
		return
	}
	if f.cache.Bytes()+uint64(len(p)) > f.opts.CacheBytes {
		f.cache.Remove(0, off)
	}
	if f.cache.Bytes()+uint64(len(p)) > f.opts.CacheBytes {
		f.cache.Clear()
	}
	f.cache.Insert(off, p)
}

// Flush writes the dirty buffer back to the OSDs (fsync, close, a
// revocation of Fb). The size and mtime stay to be reported to the MDS
// (DirtyAttrs).
func (f *fileData) Flush(ctx context.Context) error {
	f.io.Lock()
	defer f.io.Unlock()
	f.begin()
	return f.flushLocked(ctx)
}

func (f *fileData) flushLocked(ctx context.Context) error {
	if f.dirty.Len() == 0 {
		return nil
	}
	f.count(func(s *DataStats) { s.Flushes++ })
	f.mu.Lock()
	caching := f.caps.CanCache(f.lazy)
	f.mu.Unlock()
	// Extents written are removed one by one, so that a failure keeps
	// only what the OSDs may not have.
	for f.dirty.Len() > 0 {
		e := f.dirty.Extents()[0]
		f.count(func(s *DataStats) { s.OSDWrites++ })
		if err := f.st.WriteAt(ctx, f.ino, e.Data, e.Off); err != nil {
			f.cache.Remove(e.Off, uint64(len(e.Data)))
			return fmt.Errorf("fsclient: write back %#x: %w", f.ino, osdErr(err))
		}
		if caching {
			f.insertCache(e.Off, e.Data)
		} else {
			f.cache.Remove(e.Off, uint64(len(e.Data)))
		}
		f.dirty.Remove(e.Off, uint64(len(e.Data)))
	}
	f.mu.Lock()
	f.dirtyData = false
	f.mu.Unlock()
	return nil
}

// Truncate sets the file's size after the MDS's setattr recorded it:
// buffered and cached bytes past it are
// dropped and, when it shrinks, the objects past it are removed or cut
// at the OSDs, so that the bytes read as zeros if the file grows again.
func (f *fileData) Truncate(ctx context.Context, size uint64) error {
	f.io.Lock()
	defer f.io.Unlock()
	f.begin()
	f.dirty.Truncate(size)
	f.cache.Truncate(size)
	if old := f.Size(); size < old {
		f.count(func(s *DataStats) { s.OSDWrites++ })
		if err := f.st.Truncate(ctx, f.ino, old, size); err != nil {
			return fmt.Errorf("fsclient: truncate %#x to %d: %w", f.ino, size, osdErr(err))
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dirtyData = f.dirty.Len() > 0
	f.size = size
	f.mtime = f.clock.Now()
	// The MDS's setattr recorded the size (the only caller truncates
	// after it): nothing to flush. Left dirty, the size would be held
	// against smaller sizes the MDS reports (SetAttr) and flushed later
	// over another client's truncate.
	f.dirtyAttrs = false
	f.attrGen++ // a flush built before answers for nothing now
	return nil
}

// DropCache forgets the clean cache (lazyio_synchronize: the next reads
// go to the OSDs). It never waits for I/O.
func (f *fileData) DropCache() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropCache = true
}
