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
// Three locks. ranges (a rangeLock) orders a file's operations by the
// bytes they touch and is held across their OSD I/O: reads and writes
// of ranges that do not overlap run together (an application's or the
// kernel's iodepth reaches the OSDs), overlapping ones in the order they
// came, a read sharing with reads; flushes, truncates and write-backs
// for revocations hold the whole file, so they wait for every operation
// in flight and hold back the later ones. buf guards the buffers and
// the readahead state and is held only while they change, never across
// I/O. mu guards the caps and attributes and is never held across I/O,
// so that the client's driver, which must not wait for I/O, can read
// and set them. Lock order: ranges, then buf, then mu.
type fileData struct {
	st    *striper.Striper
	ino   uint64
	clock clock.Clock
	opts  DataOptions

	ranges rangeLock

	buf   sync.Mutex
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
	// cacheGen counts the times the cache was condemned (dropCache set):
	// a read that began before brings bytes that may be stale and must
	// not cache them (reads run concurrently, so one may end after a
	// later operation emptied the cache).
	cacheGen uint64
	size     uint64    // the file's size as this client knows it
	mtime    time.Time // the last modification this client knows
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
		size: size, mtime: mtime, raWindow: opts.ReadaheadMin}
}

// begin starts an operation whose range is held: it empties the cache
// if it must, and returns the caps to use and the cache generation
// (insertCache).
func (f *fileData) begin() (caps locker.Caps, lazy bool, gen uint64) {
	f.buf.Lock()
	defer f.buf.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropCache {
		f.cache.Clear()
		f.dropCache = false
	}
	if !f.caps.CanCache(f.lazy) {
		f.cache.Clear()
	}
	return f.caps, f.lazy, f.cacheGen
}

// condemnCacheLocked makes the cache be emptied before its next use,
// and what reads in flight bring be left out of it. f.mu is held.
func (f *fileData) condemnCacheLocked() {
	f.dropCache = true
	f.cacheGen++
}

// lockWhole holds the whole file: every operation in flight has ended.
func (f *fileData) lockWhole(ctx context.Context) (*rangeHold, error) {
	h, err := f.ranges.lock(ctx, 0, wholeFile, false)
	if err != nil {
		return nil, fmt.Errorf("fsclient: waiting for the I/O of %#x: %w", f.ino, err)
	}
	return h, nil
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
// operations in flight (a write acknowledged before is in the buffer or
// at the OSDs when it returns, and the ones after see the new caps);
// losing the right to cache empties the cache before its next use. An
// error (the write-back failed) leaves the caps as they were and the
// dirty bytes buffered: the caller retries or gives up the file.
func (f *fileData) SetCaps(ctx context.Context, caps locker.Caps, lazy bool) error {
	if !caps.CanBuffer(lazy) {
		h, err := f.lockWhole(ctx)
		if err != nil {
			return err
		}
		defer f.ranges.unlock(h)
		if err := f.flushHeld(ctx); err != nil {
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
		f.condemnCacheLocked()
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
		f.condemnCacheLocked()
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
// client's writes in order). It returns len(p) or an error. Writes of
// ranges that do not overlap run concurrently; overlapping ones, and
// reads overlapping them, in the order they came.
func (f *fileData) WriteAt(ctx context.Context, p []byte, off uint64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	end := off + uint64(len(p))
	h, err := f.ranges.lock(ctx, off, end, false)
	if err != nil {
		return 0, fmt.Errorf("fsclient: write %#x: %w", f.ino, err)
	}
	caps, lazy, gen := f.begin()
	if caps.CanBuffer(lazy) {
		f.buf.Lock()
		f.dirty.Insert(off, p)
		f.cache.Remove(off, uint64(len(p)))
		f.wrote(end)
		full := f.dirty.Bytes() > f.opts.BufferBytes
		f.buf.Unlock()
		f.ranges.unlock(h)
		if full {
			if err := f.Flush(ctx); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	f.buf.Lock()
	dirty := f.dirty.Len() > 0
	f.buf.Unlock()
	if dirty {
		// Buffered writes (made under Fb, before the caps changed) go
		// to the OSDs first: write them back holding the whole file.
		f.ranges.unlock(h)
		if h, err = f.lockWhole(ctx); err != nil {
			return 0, err
		}
		_, _, gen = f.begin()
		if err := f.flushHeld(ctx); err != nil {
			f.ranges.unlock(h)
			return 0, err
		}
	}
	defer f.ranges.unlock(h)
	f.count(func(s *DataStats) { s.OSDWrites++ })
	err = f.st.WriteAt(ctx, f.ino, p, off)
	f.buf.Lock()
	defer f.buf.Unlock()
	if err != nil {
		// The OSDs may hold part of p: the cache must not say otherwise.
		f.cache.Remove(off, uint64(len(p)))
		return 0, fmt.Errorf("fsclient: write %#x: %w", f.ino, osdErr(err))
	}
	if caps.CanCache(lazy) {
		f.insertCache(gen, off, p)
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

// wrote records a write reaching end. f.buf is held.
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
// used and sequential reads read ahead. Reads run concurrently with each
// other and with writes of other ranges; the range held takes in the
// readahead window, so no write lands there while the window is read.
func (f *fileData) ReadAt(ctx context.Context, p []byte, off uint64) (int, error) {
	// The range to hold: p, and past it the largest window a
	// sequential read may read ahead (the window grows at most to
	// twice what it is now).
	lockEnd := off + uint64(len(p))
	if !f.opts.NoReadahead {
		f.buf.Lock()
		if off == f.raNext {
			lockEnd += min(2*f.raWindow, f.opts.ReadaheadMax)
		}
		f.buf.Unlock()
	}
	rh, err := f.ranges.lock(ctx, off, lockEnd, true)
	if err != nil {
		return 0, fmt.Errorf("fsclient: read %#x: %w", f.ino, err)
	}
	defer f.ranges.unlock(rh)
	caps, lazy, gen := f.begin()
	size := f.Size()
	if off >= size {
		return 0, io.EOF
	}
	n := min(uint64(len(p)), size-off)
	buf := p[:n]
	caching := caps.CanCache(lazy)
	f.buf.Lock()
	holes := f.dirty.Read(off, buf)
	if caching {
		var rest []extmap.Range
		for _, h := range holes {
			rest = append(rest, f.cache.Read(h.Off, buf[h.Off-off:h.Off-off+h.Len])...)
		}
		holes = rest
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
	window := f.raWindow
	f.buf.Unlock()
	if len(holes) == 0 {
		f.count(func(s *DataStats) { s.CacheHits++ })
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
		// The window stays inside the range held (a concurrent read
		// may have moved the sequential point since it was taken).
		want := h.Len
		if i == len(holes)-1 && sequential && !f.opts.NoReadahead {
			want = max(want, min(window, size-h.Off, lockEnd-h.Off))
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
		f.buf.Lock()
		f.insertCache(gen, h.Off, tmp)
		f.buf.Unlock()
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

// insertCache caches clean bytes an operation of cache generation gen
// (begin) read or wrote, first dropping what lies before them and then
// everything if the cache would outgrow CacheBytes. Bytes of an older
// generation are left out. f.buf is held.
func (f *fileData) insertCache(gen uint64, off uint64, p []byte) {
	f.mu.Lock()
	stale := gen != f.cacheGen
	f.mu.Unlock()
	if stale || uint64(len(p)) > f.opts.CacheBytes {
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
	h, err := f.lockWhole(ctx)
	if err != nil {
		return err
	}
	defer f.ranges.unlock(h)
	f.begin()
	return f.flushHeld(ctx)
}

// flushHeld writes the dirty buffer back; the whole file is held, so
// nothing else changes the buffer meanwhile.
func (f *fileData) flushHeld(ctx context.Context) error {
	f.buf.Lock()
	empty := f.dirty.Len() == 0
	f.buf.Unlock()
	if empty {
		return nil
	}
	f.count(func(s *DataStats) { s.Flushes++ })
	f.mu.Lock()
	caching := f.caps.CanCache(f.lazy)
	gen := f.cacheGen
	f.mu.Unlock()
	// Extents written are removed one by one, so that a failure keeps
	// only what the OSDs may not have.
	for {
		f.buf.Lock()
		if f.dirty.Len() == 0 {
			f.buf.Unlock()
			break
		}
		e := f.dirty.Extents()[0]
		f.buf.Unlock()
		f.count(func(s *DataStats) { s.OSDWrites++ })
		err := f.st.WriteAt(ctx, f.ino, e.Data, e.Off)
		f.buf.Lock()
		if err != nil {
			f.cache.Remove(e.Off, uint64(len(e.Data)))
			f.buf.Unlock()
			return fmt.Errorf("fsclient: write back %#x: %w", f.ino, osdErr(err))
		}
		if caching {
			f.insertCache(gen, e.Off, e.Data)
		} else {
			f.cache.Remove(e.Off, uint64(len(e.Data)))
		}
		f.dirty.Remove(e.Off, uint64(len(e.Data)))
		f.buf.Unlock()
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
	h, err := f.lockWhole(ctx)
	if err != nil {
		return err
	}
	defer f.ranges.unlock(h)
	f.begin()
	f.buf.Lock()
	f.dirty.Truncate(size)
	f.cache.Truncate(size)
	dirty := f.dirty.Len() > 0
	f.buf.Unlock()
	if old := f.Size(); size < old {
		f.count(func(s *DataStats) { s.OSDWrites++ })
		if err := f.st.Truncate(ctx, f.ino, old, size); err != nil {
			return fmt.Errorf("fsclient: truncate %#x to %d: %w", f.ino, size, osdErr(err))
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dirtyData = dirty
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
	f.condemnCacheLocked()
}
