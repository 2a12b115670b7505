package blockstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/bufpool"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

// Readers hold applyMu shared from fetching a record until they have read
// its data: the committer cannot publish a newer record meanwhile, and
// space the record points at is not released (it is released only after a
// later apply, which waits for this reader).

// record returns o's applied record; the caller holds applyMu shared.
func (s *Store) record(c objectstore.CollectionID, o objid.ID) (*format.Onode, error) {
	if s.readClosed {
		return nil, objectstore.ErrClosed
	}
	if !s.colls[c] {
		return nil, fmt.Errorf("%w: %v", objectstore.ErrCollectionNotFound, c)
	}
	var buf [128]byte // the key of most objects: no allocation for a hit
	k := format.AppendObjectKey(buf[:0], c, o)
	rec, ok := s.cache.getBytes(k)
	if !ok {
		key := string(k)
		var err error
		if rec, err = s.loadRecord(key); err != nil {
			return nil, fmt.Errorf("%v %v: %w", c, o, err)
		}
		s.cache.put(key, rec)
	}
	if rec == nil {
		return nil, &objectstore.NotFoundError{Collection: c, Object: o}
	}
	return rec, nil
}

// loadRecord reads a record from Pebble, its value and, unless they are
// inline, its units (nil, nil if absent).
func (s *Store) loadRecord(key string) (*format.Onode, error) {
	if !s.mayHaveRecord(key) {
		return nil, nil
	}
	s.statRecordLoads.Add(1)
	v, closer, err := s.db.Get([]byte(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read record: %w", err)
	}
	enc := bytes.Clone(v) // the record aliases it; v lives until Close
	_ = closer.Close()
	rec, err := format.DecodeRecord(enc, s.sb)
	if err != nil {
		return nil, err
	}
	if rec.Inline {
		rec.Enc = enc
		return rec, nil
	}
	if rec.Units, err = loadUnits(s.db, rec.Nid, s.sb, rec.Shards); err != nil {
		return nil, fmt.Errorf("node %d: %w", rec.Nid, err)
	}
	return rec, nil
}

// loadUnits reads node nid's units through r (the store's DB or an fsck
// snapshot), in LU order: from its shard keys if shards, else from its
// unit keys.
func loadUnits(r pebble.Reader, nid uint64, sb format.Superblock, shards bool) (format.UnitMap, error) {
	lo, hi := format.UnitRange(nid)
	if shards {
		lo, hi = format.ShardRange(nid)
	}
	var m format.UnitMap
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return m, err
	}
	var units []format.Unit // legacy unit keys
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != len(lo)+8 {
			_ = it.Close()
			return m, fmt.Errorf("%w: unit key %x", objectstore.ErrCorrupt, k)
		}
		n := beUint64(k[len(lo):])
		if shards {
			if n > objectstore.MaxObjectSize/sb.AllocUnit/format.ShardUnits {
				_ = it.Close()
				return m, fmt.Errorf("%w: unit shard %d beyond the maximum object size", objectstore.ErrCorrupt, n)
			}
			// Shard keys come in shard order, each one a chunk of the map.
			var run []format.Unit
			if run, err = format.DecodeShard(nil, it.Value(), n*format.ShardUnits, sb); err == nil {
				m.AppendShard(n, run)
			}
		} else {
			var u format.Unit
			u, err = format.DecodeUnit(n, it.Value(), sb)
			units = append(units, u)
		}
		if err != nil {
			_ = it.Close()
			return m, err
		}
	}
	if err := it.Close(); err != nil {
		return m, err
	}
	if !shards {
		m = format.MakeUnitMap(units)
	}
	return m, nil
}

func (s *Store) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.applyMu.RLock()
	if s.readClosed {
		s.applyMu.RUnlock()
		return objectstore.ErrClosed
	}
	return nil
}

// lockedRecord takes the read lock and returns o's record; the caller
// releases the lock (applyMu.RUnlock). On error the lock is not held.
func (s *Store) lockedRecord(ctx context.Context, c objectstore.CollectionID, o objid.ID) (*format.Onode, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	rec, err := s.record(c, o)
	if err != nil {
		s.applyMu.RUnlock()
		return nil, err
	}
	return rec, nil
}

// Read returns length bytes at off (fewer at the end; 0 means to the
// end), verifying the checksum of every block it reads. Small blocks may
// come from the page cache (datafile_read.go).
func (s *Store) Read(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]byte, error) {
	b, _, err := s.read(ctx, c, o, off, length, false, false)
	return b, err
}

// ReadDevice reads like Read, but every block from the device, none
// from the page cache (objectstore.DeviceReader).
func (s *Store) ReadDevice(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]byte, error) {
	b, _, err := s.read(ctx, c, o, off, length, true, false)
	return b, err
}

// ReadCRC reads like Read and also returns the crc32c of the bytes it
// returns (objectstore.CRCReader). Whole checksum blocks contribute the
// checksums they were verified against, folded together; only the parts
// of blocks at either end of an unaligned range are hashed.
func (s *Store) ReadCRC(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]byte, uint32, error) {
	return s.read(ctx, c, o, off, length, false, true)
}

func (s *Store) read(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64, dev, wantCRC bool) ([]byte, uint32, error) {
	rec, err := s.lockedRecord(ctx, c, o)
	if err != nil {
		return nil, 0, err
	}
	defer s.applyMu.RUnlock()
	if off >= rec.Size {
		return []byte{}, 0, nil
	}
	end := rec.Size
	if length != 0 && length < end-off {
		end = off + length
	}
	// Read whole checksum blocks into one aligned buffer that maps the
	// logical range [aoff, aend) and return the requested part of it: the
	// data is read once, straight into the result (directly from the
	// device where the file allows it), and checked in place. Holes stay
	// zero.
	au, cb := s.sb.AllocUnit, s.sb.ChecksumBlock
	aoff, aend := off/cb*cb, (end+cb-1)/cb*cb
	buf := s.newResultBuf(int(aend - aoff))
	type run struct{ lo, hi, dev uint64 } // logical [lo, hi) at dev
	var runs []run
	for u := range rec.Units.From(off / au) {
		us := u.LU * au
		if us >= end {
			break
		}
		lo, hi := max(aoff, us), min(aend, us+au)
		dev := u.Dev + (lo - us)
		if n := len(runs); n > 0 && runs[n-1].hi == lo && runs[n-1].dev+(runs[n-1].hi-runs[n-1].lo) == dev && runs[n-1].hi-runs[n-1].lo < maxDataWrite {
			runs[n-1].hi = hi
			continue
		}
		runs = append(runs, run{lo, hi, dev})
	}
	if buf.reused {
		// A recycled buffer holds an earlier read's bytes: zero the
		// holes, which no run overwrites.
		b, pos := buf.bytes(), aoff
		for _, r := range runs {
			clear(b[pos-aoff : r.lo-aoff])
			pos = r.hi
		}
		clear(b[pos-aoff:])
	}
	// Look in the data overlay before reading the file: the committer
	// drops a block from the overlay only once the file holds it, so a
	// block missing from the overlay now is on the file already.
	var pending map[uint64][]byte // logical block offset -> data
	if s.data.any() {
		for u := range rec.Units.From(off / au) {
			us := u.LU * au
			if us >= end {
				break
			}
			for bs := max(aoff, us); bs < min(aend, us+au); bs += cb {
				if d, ok := s.data.visible(u.Dev+(bs-us), s.appliedSeq, cb); ok && d != nil {
					if pending == nil {
						pending = make(map[uint64][]byte)
					}
					pending[bs] = d
				}
			}
		}
	}
	// sums collects each block's verified checksum for ReadCRC; blocks
	// no run covers are holes, zeros.
	var sums []uint32
	if wantCRC {
		sums = make([]uint32, (aend-aoff)/cb)
		for i := range sums {
			sums[i] = s.zeroSum
		}
	}
	// verify checks the checksum blocks of the logical range [lo, hi)
	// of run r, after laying the overlay's newer blocks over them, and
	// puts the blocks it verified as the device has them into the data
	// cache (if fill). Pieces of one read are verified as they arrive,
	// concurrently: they are disjoint.
	verify := func(r run, lo, hi uint64, fill *fillToken) error {
		var put uint64 = hi // the first block of the verified device bytes not yet in the cache
		flush := func(end uint64) {
			if fill != nil && put < end {
				s.dev.cache.fill(*fill, r.dev, r.hi-r.lo, buf.bytes()[put-aoff:end-aoff], r.dev+(put-r.lo))
			}
			put = hi
		}
		for bs := lo; bs < hi; bs += cb {
			u, ok := rec.Units.Get(bs / au)
			if !ok {
				flush(bs)
				continue // a hole, zeros
			}
			blk := buf.bytes()[bs-aoff : bs-aoff+cb]
			if !format.HoldsData(rec.Pages, bs, bs+cb) {
				flush(bs)
				clear(blk) // possibly never written (newUnit)
				continue
			}
			d, newer := pending[bs]
			if newer {
				flush(bs)
				copy(blk, d)
			}
			b := (bs - u.LU*au) / cb
			want := u.Sum(int(b))
			if got := crc32.Checksum(blk, s.table); got != want {
				return &mismatchError{c, o, bs, u.Dev + b*cb, got, want}
			}
			if sums != nil {
				sums[(bs-aoff)/cb] = want
			}
			if !newer && put == hi {
				put = bs
			}
		}
		flush(hi)
		return nil
	}
	// fromCache lays run r's blocks from the data cache and the overlay
	// into the result, if the cache holds every one that has data on the
	// device; else the run is read from the device (and verify redoes
	// every block).
	fromCache := func(r run) bool {
		for bs := r.lo; bs < r.hi; bs += cb {
			u, _ := rec.Units.Get(bs / au)
			blk := buf.bytes()[bs-aoff : bs-aoff+cb]
			if !format.HoldsData(rec.Pages, bs, bs+cb) {
				clear(blk)
				continue
			}
			b := (bs - u.LU*au) / cb
			if d, ok := pending[bs]; ok {
				copy(blk, d)
			} else if !s.dev.cache.get(blk, r.dev+(bs-r.lo)) {
				return false
			}
			if sums != nil {
				sums[(bs-aoff)/cb] = u.Sum(int(b))
			}
		}
		return true
	}
	cache := s.dev.cache != nil && !dev // ReadDevice (deep scrub) reads the device
	for _, r := range runs {
		if cache && fromCache(r) {
			continue
		}
		var fill *fillToken
		if cache {
			tok := s.dev.cache.begin(r.dev, r.hi-r.lo)
			fill = &tok
		}
		err := s.dev.readVerified(int(r.hi-r.lo), func() []byte { return buf.bytes()[r.lo-aoff : r.hi-aoff] }, r.dev, dev, func(plo, phi int) error {
			return verify(r, r.lo+uint64(plo), r.lo+uint64(phi), fill)
		})
		if err != nil {
			return nil, 0, s.readFailed(c, o, err)
		}
	}
	var crc uint32
	if wantCRC {
		crc = s.foldCRC(buf.bytes(), sums, aoff, off, end)
	}
	// The capacity past n stays: Recycle knows a whole buffer by it.
	return buf.bytes()[off-aoff:][:end-off], crc, nil
}

// foldCRC returns the crc32c of the logical range [off, end) of b, which
// maps [aoff, ...) in whole checksum blocks whose checksums are sums.
func (s *Store) foldCRC(b []byte, sums []uint32, aoff, off, end uint64) uint32 {
	cb := s.sb.ChecksumBlock
	var crc uint32 // of nothing
	for i, bs := 0, aoff; bs < end; i, bs = i+1, bs+cb {
		lo, hi := max(bs, off), min(bs+cb, end)
		if lo == bs && hi == bs+cb {
			crc = s.blockCRC.Combine(crc, sums[i])
		} else {
			crc = crc32.Update(crc, s.table, b[lo-aoff:hi-aoff])
		}
	}
	return crc
}

// resultBuf is a read's result buffer. Go zeroes what it allocates,
// which for 4 MiB costs about 0.2 ms on the benchmark machine: a large
// read allocates its buffer on another goroutine while the device reads,
// rather than before its first request goes out (4 MiB sequential reads
// went from 1,255-1,323 to 1,421-1,576 MiB/s).
type resultBuf struct {
	ready  chan struct{} // closed once b is allocated; nil for small reads
	b      []byte
	reused bool // b came from the pool: holes must be zeroed
}

func (s *Store) newResultBuf(n int) *resultBuf {
	if b := s.readBufs.get(n); b != nil {
		return &resultBuf{b: b, reused: true}
	}
	if n < directMax {
		return &resultBuf{b: s.readBufs.alloc(n)}
	}
	r := &resultBuf{ready: make(chan struct{})}
	go func() {
		r.b = s.readBufs.alloc(n)
		close(r.ready)
	}()
	return r
}

// readBufPool keeps read buffers that callers handed back
// (Store.Recycle), by power-of-two size from minRecycled to maxRecycled,
// up to maxIdleRead bytes in all. Without it every 4 MiB read allocated
// 4 MiB: at 800 MB/s of reads that drove a garbage collection every few
// dozen milliseconds, each scanning the whole live heap (PG logs,
// records), which on an OSD that had run a while took 45% of its CPU and
// held reads to 790 MB/s where a fresh OSD reached 1,330 (docs/benchmarks/
// 2026-11-26.md, "Large reads on a cluster that has run a while"). A
// sync.Pool would empty at every collection, just when the buffers are
// needed.
type readBufPool struct {
	list bufpool.FreeList
}

// minRecycled and maxRecycled bound the read buffers kept for reuse; the
// classes are the powers of two between them. Small reads recycle their
// buffers too: at 30,000 4 KiB reads a second, fresh ones were 120 MB/s
// of garbage per cluster, and the collections it drove.
const (
	minRecycled = dio.Align
	maxRecycled = 16 << 20
)

// maxIdleRead bounds the bytes of idle read buffers kept. It is well
// above what 16 reads of 4 MiB in flight hold: with 32 MiB, buffers of
// reads that finished together overflowed it, and 2.5-10% of an OSD's
// read buffers went to the collector while as many were allocated
// afresh (the messenger's pool had the same trouble with writes:
// docs/benchmarks/2026-11-27.md, "OSD memory under 4 MiB writes: no buffer
// churn").
const maxIdleRead = 128 << 20

// readTrimInterval is how often the pool lets go of the buffers no read
// took since the last time, so that those left after a burst of large
// reads do not stay in the heap.
const readTrimInterval = time.Second

// classSize returns the capacity of the pooled buffers that hold n
// bytes, or 0 if n is not pooled.
func classSize(n int) int {
	if n < minRecycled || n > maxRecycled {
		return 0
	}
	return minRecycled << (bits.Len(uint(n-1)) - bits.Len(minRecycled-1))
}

// get returns a pooled buffer of length n (its old contents kept), or
// nil.
func (p *readBufPool) get(n int) []byte {
	size := classSize(n)
	if size == 0 {
		return nil
	}
	b := p.list.Get(size)
	if b == nil {
		return nil
	}
	return b[:n]
}

// alloc returns a new zeroed buffer of length n, with its class's
// capacity if n is pooled so that it can be recycled.
func (p *readBufPool) alloc(n int) []byte {
	if size := classSize(n); size > 0 {
		return dio.AlignedBuf(size)[:n]
	}
	return dio.AlignedBuf(n)
}

// put keeps b if it is a whole pooled buffer (aligned, with a class's
// capacity) and there is room. It reports whether a trimmer should
// start: the pool holds buffers and none runs.
func (p *readBufPool) put(b []byte) (startTrimmer bool) {
	size := classSize(cap(b))
	if size == 0 || size != cap(b) || !dio.IsAligned(b[:dio.Align], 0) {
		return false
	}
	return p.list.Put(b, maxIdleRead)
}

// Recycle hands back a buffer Read returned (objectstore.Recycler): a
// whole large read's buffer is reused by a later read; the caller must
// not touch b afterwards.
func (s *Store) Recycle(b []byte) {
	if s.readBufs.put(b) {
		go s.trimReadBufs()
	}
}

// trimReadBufs trims the read-buffer pool every readTrimInterval until
// it is empty or the store closes.
func (s *Store) trimReadBufs() {
	t := time.NewTicker(readTrimInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.pipe.done:
			return
		}
		if !s.readBufs.list.Trim() {
			return
		}
	}
}

// bytes waits for the buffer and returns it.
func (r *resultBuf) bytes() []byte {
	if r.ready != nil {
		<-r.ready
	}
	return r.b
}

// Stat returns o's size and allocated bytes.
func (s *Store) Stat(ctx context.Context, c objectstore.CollectionID, o objid.ID) (objectstore.ObjectInfo, error) {
	rec, err := s.lockedRecord(ctx, c, o)
	if err != nil {
		return objectstore.ObjectInfo{}, err
	}
	defer s.applyMu.RUnlock()
	return objectstore.ObjectInfo{Size: rec.Size, Allocated: rec.AllocatedBytes()}, nil
}

// StatAttrs stats o and copies up to two of its attributes in one
// lookup of its record (objectstore.AttrStater).
func (s *Store) StatAttrs(ctx context.Context, c objectstore.CollectionID, o objid.ID, names [2]string) (objectstore.StatAttrs, error) {
	rec, err := s.lockedRecord(ctx, c, o)
	if err != nil {
		return objectstore.StatAttrs{}, err
	}
	defer s.applyMu.RUnlock()
	out := objectstore.StatAttrs{Info: objectstore.ObjectInfo{Size: rec.Size, Allocated: rec.AllocatedBytes()}}
	for i, name := range names {
		if v, ok := rec.Attrs.Get(name); ok && name != "" {
			out.Vals[i], out.Has[i] = append([]byte{}, v...), true
		}
	}
	return out, nil
}

// ExtentMap returns the allocated pages of o within [off, off+length),
// clipped to its size.
func (s *Store) ExtentMap(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]objectstore.Extent, error) {
	rec, err := s.lockedRecord(ctx, c, o)
	if err != nil {
		return nil, err
	}
	defer s.applyMu.RUnlock()
	end := rec.Size
	if length != 0 && off < end && length < end-off {
		end = off + length
	}
	var out []objectstore.Extent
	for _, x := range format.ClipSpans(rec.Pages, off, end) {
		out = append(out, objectstore.Extent{Offset: x.Off, Length: x.End - x.Off})
	}
	return out, nil
}

// GetAttr returns one attribute.
func (s *Store) GetAttr(ctx context.Context, c objectstore.CollectionID, o objid.ID, name string) ([]byte, error) {
	rec, err := s.lockedRecord(ctx, c, o)
	if err != nil {
		return nil, err
	}
	defer s.applyMu.RUnlock()
	v, ok := rec.Attrs.Get(name)
	if !ok {
		return nil, fmt.Errorf("%w: %v %v attribute %q", objectstore.ErrNoAttr, c, o, name)
	}
	return slices.Clone(v), nil
}

// GetAttrs returns every attribute.
func (s *Store) GetAttrs(ctx context.Context, c objectstore.CollectionID, o objid.ID) (map[string][]byte, error) {
	rec, err := s.lockedRecord(ctx, c, o)
	if err != nil {
		return nil, err
	}
	defer s.applyMu.RUnlock()
	out := make(map[string][]byte, len(rec.Attrs))
	for _, a := range rec.Attrs {
		out[a.Name] = slices.Clone(a.Value)
	}
	return out, nil
}

// OmapGetHeader returns the omap header (nil if unset).
func (s *Store) OmapGetHeader(ctx context.Context, c objectstore.CollectionID, o objid.ID) ([]byte, error) {
	rec, err := s.lockedRecord(ctx, c, o)
	if err != nil {
		return nil, err
	}
	defer s.applyMu.RUnlock()
	if len(rec.OmapHeader) == 0 {
		return nil, nil
	}
	return slices.Clone(rec.OmapHeader), nil
}

// OmapGetValues returns the entries of keys that exist.
func (s *Store) OmapGetValues(ctx context.Context, c objectstore.CollectionID, o objid.ID, keys []string) (map[string][]byte, error) {
	rec, err := s.lockedRecord(ctx, c, o)
	if err != nil {
		return nil, err
	}
	defer s.applyMu.RUnlock()
	out := make(map[string][]byte)
	for _, k := range keys {
		v, closer, err := s.db.Get(format.OmapKey(rec.Nid, k))
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%v %v: omap %q: %w", c, o, k, err)
		}
		out[k] = slices.Clone(v)
		_ = closer.Close()
	}
	return out, nil
}

// OmapIterate returns up to limit entries (all if limit <= 0) with keys
// after after and starting with prefix, in key order.
func (s *Store) OmapIterate(ctx context.Context, c objectstore.CollectionID, o objid.ID, after, prefix string, limit int) ([]objectstore.KV, bool, error) {
	rec, err := s.lockedRecord(ctx, c, o)
	if err != nil {
		return nil, false, err
	}
	defer s.applyMu.RUnlock()
	base := format.OmapPrefix(rec.Nid)
	lower := format.OmapKey(rec.Nid, prefix)
	if after != "" && after+"\x00" > prefix {
		lower = format.OmapKey(rec.Nid, after+"\x00")
	}
	upper := format.PrefixEnd(format.OmapKey(rec.Nid, prefix))
	if prefix == "" {
		upper = format.PrefixEnd(base)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, false, err
	}
	defer it.Close()
	var out []objectstore.KV
	for it.First(); it.Valid(); it.Next() {
		if limit > 0 && len(out) == limit {
			return out, true, nil
		}
		k := string(it.Key()[len(base):])
		if !strings.HasPrefix(k, prefix) {
			break
		}
		out = append(out, objectstore.KV{Key: k, Value: slices.Clone(it.Value())})
	}
	if err := it.Error(); err != nil {
		return nil, false, fmt.Errorf("%v %v: omap: %w", c, o, err)
	}
	return out, false, nil
}

// ListCollections returns every collection, in key order.
func (s *Store) ListCollections(ctx context.Context) ([]objectstore.CollectionID, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.applyMu.RUnlock()
	out := slices.Collect(maps.Keys(s.colls))
	slices.SortFunc(out, func(a, b objectstore.CollectionID) int {
		return strings.Compare(string(format.CollectionKey(a)), string(format.CollectionKey(b)))
	})
	return out, nil
}

// CollectionExists reports whether c exists.
func (s *Store) CollectionExists(ctx context.Context, c objectstore.CollectionID) (bool, error) {
	if err := s.begin(ctx); err != nil {
		return false, err
	}
	defer s.applyMu.RUnlock()
	return s.colls[c], nil
}

// ListObjects lists c's objects in objid.Compare order from start.
func (s *Store) ListObjects(ctx context.Context, c objectstore.CollectionID, start objid.ID, limit int) ([]objid.ID, objid.ID, error) {
	if err := s.begin(ctx); err != nil {
		return nil, objid.ID{}, err
	}
	defer s.applyMu.RUnlock()
	if !s.colls[c] {
		return nil, objid.ID{}, fmt.Errorf("%w: %v", objectstore.ErrCollectionNotFound, c)
	}
	prefix := format.CollObjectPrefix(c)
	lower := prefix
	if start.IsMax() {
		return nil, objid.Max(), nil
	}
	if start != (objid.ID{}) {
		lower = format.ObjectKey(c, start)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: format.PrefixEnd(prefix)})
	if err != nil {
		return nil, objid.ID{}, err
	}
	defer it.Close()
	var out []objid.ID
	for it.First(); it.Valid(); it.Next() {
		_, o, err := format.DecodeObjectKey(it.Key())
		if err != nil {
			return nil, objid.ID{}, fmt.Errorf("list %v: key %x: %w", c, it.Key(), err)
		}
		if limit > 0 && len(out) == limit {
			return out, o, nil
		}
		out = append(out, o)
	}
	if err := it.Error(); err != nil {
		return nil, objid.ID{}, fmt.Errorf("list %v: %w", c, err)
	}
	return out, objid.Max(), nil
}

// StatFS reports space usage.
func (s *Store) StatFS(ctx context.Context) (objectstore.FSStats, error) {
	if err := s.begin(ctx); err != nil {
		return objectstore.FSStats{}, err
	}
	st := objectstore.FSStats{Total: s.sb.Size, PoolStored: make(map[int64]uint64)}
	for pool, v := range s.poolStored {
		st.Stored += v
		if v != 0 && pool != metaPool {
			st.PoolStored[pool] = v
		}
	}
	s.applyMu.RUnlock()
	s.prepMu.Lock()
	st.Available = s.alloc.Free()
	s.prepMu.Unlock()
	st.Allocated = st.Total - st.Available
	return st, nil
}

var _ objectstore.Store = (*Store)(nil)

// mismatchError reports a checksum block whose data does not match its
// checksum; errors.Is(err, objectstore.ErrCorrupt) holds for it.
type mismatchError struct {
	c         objectstore.CollectionID
	o         objid.ID
	off, dev  uint64 // the block's offset in the object and on the device
	got, want uint32
}

func (e *mismatchError) Error() string {
	return fmt.Sprintf("%v: %v %v: checksum mismatch in the block at offset %d (device offset %d): crc32c %08x, want %08x",
		objectstore.ErrCorrupt, e.c, e.o, e.off, e.dev, e.got, e.want)
}

func (e *mismatchError) Unwrap() error { return objectstore.ErrCorrupt }

// readFailed returns what a read of o that failed with err reports: a
// checksum mismatch, logged (only the verdict on the device's copy gets
// here; see readChecked), or the I/O error naming the object.
func (s *Store) readFailed(c objectstore.CollectionID, o objid.ID, err error) error {
	if mm := (*mismatchError)(nil); errors.As(err, &mm) {
		s.log.Error("blockstore: checksum mismatch", "collection", mm.c.String(), "object", mm.o.String(),
			"offset", mm.off, "device_offset", mm.dev, "crc", mm.got, "want", mm.want)
		return err
	}
	return fmt.Errorf("%v %v: %w", c, o, err)
}
