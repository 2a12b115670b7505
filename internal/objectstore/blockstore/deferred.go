package blockstore

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
)

// applyDeferred writes committed groups' deferred writes in place and
// queues their 'D' keys for deletion after the next data sync; until
// then Open would replay them. A block leaves the data overlay only
// once its write has completed, so readers see it throughout.
func (pl *pipeline) applyDeferred(groups []stagedGroup) error {
	var ws []format.DeferredWrite
	var seqs []uint64
	for _, g := range groups {
		for _, p := range g.txns {
			for _, w := range p.deferred {
				ws = append(ws, w)
				seqs = append(seqs, p.seq)
			}
		}
	}
	if err := pl.dev.writeInPlace(ws); err != nil {
		return err
	}
	cb := pl.checksumBlock
	pl.deferredMu.Lock()
	for i, w := range ws {
		pl.appliedDeferred = append(pl.appliedDeferred, format.DeferredKey(seqs[i], w.DevOff))
	}
	pl.deferredMu.Unlock()
	for i, w := range ws {
		for off := uint64(0); off < uint64(len(w.Data)); off += cb {
			pl.data.drop(w.DevOff+off, seqs[i])
		}
	}
	return nil
}

// writeInPlace writes ws, in order where they overlap.
//
// Small writes (under directMax) go through the page cache: the small
// reads that follow them read through it too (datafile_read.go), so an object
// just written is read from memory rather than from the device. Their
// writeback starts at once (startWriteback), so the data sync that must
// follow has little left to wait for. On a size-3 pool of new 4 KiB
// objects, writes ran as fast as with direct writes (four pairs, same
// IOPS within noise), and the first second of random reads after them
// went from 11,500-12,500 to 18,900-22,800 IOPS
// (docs/benchmarks/2026-11-26.md, "Small objects: written blocks only").
//
// Where the store has an O_DIRECT descriptor, large aligned writes go
// through it with Linux AIO, as many as possible in one submission. The
// kernel writes back and drops cached pages of the range before a
// direct write and drops them again after it, so the buffered
// descriptor never serves stale bytes, provided no buffered write
// dirties the range meanwhile: copy-on-write data goes only to units
// allocated after the deferred writes into them completed (commit.go),
// and a unit's copy-on-write data is synced before the batch that maps
// it, long before a deferred write into it.
func (d *dataFile) writeInPlace(ws []format.DeferredWrite) error {
	if len(ws) == 0 {
		return nil
	}
	d.writes.begin() // only around real writes: each one voids the prefetches
	defer d.writes.end()
	var batch []format.DeferredWrite
	var run bufferedRun
	inBatch := make(map[uint64]bool) // checksum blocks the batch writes
	cb := d.checksumBlock
	lo, hi := uint64(math.MaxUint64), uint64(0) // what went through the cache
	for _, w := range ws {
		large := d.aioW != nil && len(w.Data) >= directMax
		if large && !dio.IsAligned(w.Data, w.DevOff) && w.DevOff%dio.Align == 0 && len(w.Data)%dio.Align == 0 {
			// Only the memory is misaligned (a merged deferred record).
			w.Data = append(dio.AlignedBuf(len(w.Data))[:0], w.Data...)
		}
		direct := large && dio.IsAligned(w.Data, w.DevOff)
		overlaps := false
		for off := w.DevOff; off < w.DevOff+uint64(len(w.Data)); off += cb {
			overlaps = overlaps || inBatch[off/cb]
		}
		if !direct || overlaps {
			// The kernel completes a batch in any order: a later write
			// of the same block waits for the batch.
			if err := d.writeDirect(batch); err != nil {
				return err
			}
			batch = batch[:0]
			clear(inBatch)
		}
		if !direct {
			if !run.extends(w) {
				if err := d.writeRun(&run); err != nil {
					return err
				}
			}
			run.add(w)
			lo, hi = min(lo, w.DevOff), max(hi, w.DevOff+uint64(len(w.Data)))
			continue
		}
		if err := d.writeRun(&run); err != nil { // before the later write
			return err
		}
		batch = append(batch, w)
		for off := w.DevOff; off < w.DevOff+uint64(len(w.Data)); off += cb {
			inBatch[off/cb] = true
		}
	}
	if err := d.writeRun(&run); err != nil {
		return err
	}
	if lo < hi {
		d.startWriteback(lo, hi-lo)
	}
	return d.writeDirect(batch)
}

// A bufferedRun is buffered writes that follow each other on the device,
// in order, to be written with one system call: consecutive new small
// objects get consecutive units, so an applier's batch of 4 KiB creates
// is mostly one run.
type bufferedRun struct {
	off, end uint64
	iovs     [][]byte
}

// maxRunWrites keeps a run's iovecs under the kernel's IOV_MAX (1,024).
const maxRunWrites = 512

// extends reports whether w can join the run: it starts where the run
// ends, or the run is empty.
func (r *bufferedRun) extends(w format.DeferredWrite) bool {
	return len(r.iovs) == 0 || (w.DevOff == r.end && len(r.iovs) < maxRunWrites)
}

func (r *bufferedRun) add(w format.DeferredWrite) {
	if len(r.iovs) == 0 {
		r.off, r.end = w.DevOff, w.DevOff
	}
	r.iovs = append(r.iovs, w.Data)
	r.end += uint64(len(w.Data))
}

// writeRun writes the run through the page cache and empties it.
func (d *dataFile) writeRun(r *bufferedRun) error {
	if len(r.iovs) == 0 {
		return nil
	}
	err := d.writeVectored(r.iovs, r.off)
	clear(r.iovs)
	r.iovs = r.iovs[:0]
	if err != nil {
		return fmt.Errorf("apply deferred writes at %d: %w", r.off, err)
	}
	return nil
}

// writeDirect writes a batch of non-overlapping aligned writes with
// AIO, and those the kernel turns away with pwrite.
func (d *dataFile) writeDirect(batch []format.DeferredWrite) error {
	if len(batch) == 0 {
		return nil
	}
	defer d.wroteAll(batch)
	ws := make([]dio.Write, len(batch))
	for i, w := range batch {
		ws[i] = dio.Write{Off: w.DevOff, Data: w.Data}
	}
	var errs []error
	for i, err := range d.aioW.WriteAll(ws) {
		if errors.Is(err, dio.ErrBusy) {
			err = d.writeBuffered(batch[i])
		} else if err != nil {
			err = fmt.Errorf("apply deferred write at %d: %w", batch[i].DevOff, err)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// writeEach writes bufs, which follow each other, at offset off of the
// data file, one WriteAt each.
func (d *dataFile) writeEach(bufs [][]byte, off uint64) error {
	for _, b := range bufs {
		if _, err := d.file.WriteAt(b, int64(off)); err != nil {
			return err
		}
		off += uint64(len(b))
	}
	return nil
}

func (d *dataFile) writeBuffered(w format.DeferredWrite) error {
	if _, err := d.file.WriteAt(w.Data, int64(w.DevOff)); err != nil {
		return fmt.Errorf("apply deferred write at %d: %w", w.DevOff, err)
	}
	return nil
}

// syncDeferred makes the applied deferred writes durable and deletes
// their keys (by the applier every maxUnsyncedDeferred writes, and at
// Close with pebble.Sync).
func (pl *pipeline) syncDeferred(wo *pebble.WriteOptions) error {
	pl.deferredMu.Lock()
	defer pl.deferredMu.Unlock()
	if len(pl.appliedDeferred) == 0 {
		return nil
	}
	if err := pl.dev.syncData(); err != nil {
		return fmt.Errorf("sync data file: %w", err)
	}
	b := pl.db.NewBatch()
	defer b.Close()
	deleted := pl.deleteAppliedLocked(b)
	if err := pl.applyBatch(b, wo, true); err != nil {
		return fmt.Errorf("delete applied deferred writes: %w", err)
	}
	pl.deferredCommitted.Store(deleted)
	if wo.Sync {
		pl.wals.deletedDurably(deleted)
	}
	return nil
}

// releaseWALs makes the committed deletions of 'D' keys durable and
// removes the WAL files held for them (at Close, after syncDeferred), so
// that a clean Close leaves none behind.
func (pl *pipeline) releaseWALs() error {
	if pl.wals.heldCount() == 0 {
		return nil
	}
	b := pl.db.NewBatch()
	defer b.Close()
	_ = b.LogData(nil, nil) // nothing to commit: a WAL sync
	if err := pl.applyBatch(b, pebble.Sync, true); err != nil {
		return fmt.Errorf("sync pebble WAL: %w", err)
	}
	pl.wals.deletedDurably(pl.deferredCommitted.Load())
	pl.wals.release()
	return nil
}

// deleteAppliedLocked adds to b the deletion of the applied deferred
// writes' keys, and forgets them; the caller holds deferredMu and has
// synced the data file.
//
// The applier applies whole groups in commit order, so the keys applied
// since the last deletion are every 'D' key of a run of transactions,
// whose seqs follow those of the keys deleted before: one range deletion
// from the first's seq to past the last's covers exactly them, one key
// instead of a tombstone per deferred write, and the flush or the
// compaction that meets it drops the data it covers. Keys out of that
// order (none are expected) are deleted one by one.
//
// It returns the highest seq whose keys b deletes, or 0 if none: the
// applier applies in commit order, so every deferred write up to it
// has then been applied, synced and deleted.
func (pl *pipeline) deleteAppliedLocked(b *pebble.Batch) uint64 {
	keys := pl.appliedDeferred
	pl.appliedDeferred = keys[:0]
	if len(keys) == 0 {
		return 0
	}
	first, last := format.DeferredSeq(keys[0]), format.DeferredSeq(keys[len(keys)-1])
	bySeq := func(a, b []byte) int { return cmp.Compare(format.DeferredSeq(a), format.DeferredSeq(b)) }
	if first < pl.deferredDeletedTo || !slices.IsSortedFunc(keys, bySeq) {
		highest := uint64(0)
		for _, k := range keys {
			_ = b.Delete(k, nil)
			highest = max(highest, format.DeferredSeq(k))
		}
		return highest
	}
	_ = b.DeleteRange(format.DeferredKey(first, 0), format.DeferredKey(last+1, 0), nil)
	pl.deferredDeletedTo = last + 1
	return last
}

// replayDeferred applies every deferred write left in Pebble (a crash
// came between commit and apply), syncs the data file and deletes the
// keys. Rewriting bytes that are already there is harmless, so replaying
// twice is too. Writes whose data is in the WAL (an empty 'D' value)
// are read from the WAL files, which the walKeeper has kept.
func (s *Store) replayDeferred() error {
	lo, hi := []byte{format.PrefixDeferred}, []byte{format.PrefixDeferred + 1}
	ws, err := s.pendingDeferred(lo, hi)
	if err != nil || len(ws) == 0 {
		return err
	}
	if err := readLoggedDeferred(s.opts.FS, s.opts.dbPath(), s.sb, ws); err != nil {
		return err
	}
	for _, p := range ws {
		if err := s.dev.writeAt(p.w.Data, p.w.DevOff); err != nil {
			return fmt.Errorf("replay deferred write at %d: %w", p.w.DevOff, err)
		}
	}
	if err := s.dev.syncData(); err != nil {
		return fmt.Errorf("sync data file: %w", err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.DeleteRange(lo, hi, nil)
	if err := s.pipe.applyBatch(b, pebble.Sync, true); err != nil {
		return fmt.Errorf("delete replayed deferred writes: %w", err)
	}
	s.log.Info("blockstore: replayed deferred writes", "count", len(ws))
	return nil
}

// A pendingWrite is a 'D' key found in Pebble and its write; a logged
// write's Data is nil until read from the WAL.
type pendingWrite struct {
	key []byte
	w   format.DeferredWrite
}

// pendingDeferred returns the 'D' keys in [lo, hi) in key order (commit
// order: a later write to a block comes later), with the writes whose
// data is in their value decoded. A value that does not decode fails it.
func (s *Store) pendingDeferred(lo, hi []byte) ([]*pendingWrite, error) {
	return scanDeferred(s.db, lo, hi, s.sb, func(k []byte, err error) error {
		return fmt.Errorf("deferred write %x: %w", k, err)
	})
}

// scanDeferred returns the 'D' keys of db in [lo, hi) in key order, with
// the writes whose data is in their value decoded (the data copied). A
// value that does not decode goes to bad: the scan stops with bad's
// error, or skips the key if bad returns nil.
func scanDeferred(db *pebble.DB, lo, hi []byte, sb format.Superblock, bad func(k []byte, err error) error) ([]*pendingWrite, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	var ws []*pendingWrite
	for it.First(); it.Valid(); it.Next() {
		p := &pendingWrite{key: slices.Clone(it.Key())}
		if len(it.Value()) > 0 {
			if p.w, err = format.DecodeDeferred(it.Value(), sb); err != nil {
				if err := bad(p.key, err); err != nil {
					_ = it.Close()
					return nil, err
				}
				continue
			}
			p.w.Data = slices.Clone(p.w.Data)
		}
		ws = append(ws, p)
	}
	return ws, it.Close()
}
