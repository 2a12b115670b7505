package blockstore

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/pebblelog"
)

// applyDeferred writes committed groups' deferred writes in place and
// queues their 'D' keys for deletion after the next data sync; until
// then Open would replay them.
//
// The writes go through the page cache. Writing them with O_DIRECT
// instead (one io_submit per batch, so that the data sync finds no
// dirty pages) lost bytes in TestSigkill: a buffered read of the same
// block racing a direct write can leave the old contents cached.
func (s *Store) applyDeferred(groups []stagedGroup) error {
	cb := s.sb.ChecksumBlock
	for _, g := range groups {
		for _, p := range g.txns {
			for _, w := range p.deferred {
				if _, err := s.file.WriteAt(w.Data, int64(w.DevOff)); err != nil {
					return fmt.Errorf("apply deferred write at %d: %w", w.DevOff, err)
				}
				s.deferredMu.Lock()
				s.appliedDeferred = append(s.appliedDeferred, deferredKey(p.seq, w.DevOff))
				s.deferredMu.Unlock()
				for off := uint64(0); off < uint64(len(w.Data)); off += cb {
					s.data.drop(w.DevOff+off, p.seq)
				}
			}
		}
	}
	return nil
}

// syncDeferred makes the applied deferred writes durable and deletes
// their keys (by the applier every maxUnsyncedDeferred writes, and at
// Close with pebble.Sync).
func (s *Store) syncDeferred(wo *pebble.WriteOptions) error {
	s.deferredMu.Lock()
	defer s.deferredMu.Unlock()
	if len(s.appliedDeferred) == 0 {
		return nil
	}
	if err := s.file.SyncData(); err != nil {
		return fmt.Errorf("sync data file: %w", err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, k := range s.appliedDeferred {
		_ = b.Delete(k, nil)
	}
	if err := pebblelog.Recover(func() error { return s.db.Apply(b, wo) }); err != nil {
		return fmt.Errorf("delete applied deferred writes: %w", err)
	}
	s.appliedDeferred = s.appliedDeferred[:0]
	return nil
}

// replayDeferred applies every deferred write left in Pebble (a crash
// came between commit and apply), syncs the data file and deletes the
// keys. Rewriting bytes that are already there is harmless, so replaying
// twice is too.
func (s *Store) replayDeferred() error {
	lo, hi := []byte{prefixDeferred}, []byte{prefixDeferred + 1}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		w, err := decodeDeferred(it.Value(), s.sb)
		if err != nil {
			_ = it.Close()
			return fmt.Errorf("deferred write %x: %w", it.Key(), err)
		}
		if _, err := s.file.WriteAt(w.Data, int64(w.DevOff)); err != nil {
			_ = it.Close()
			return fmt.Errorf("replay deferred write at %d: %w", w.DevOff, err)
		}
		n++
	}
	if err := it.Close(); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if err := s.file.SyncData(); err != nil {
		return fmt.Errorf("sync data file: %w", err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.DeleteRange(lo, hi, nil)
	if err := pebblelog.Recover(func() error { return s.db.Apply(b, pebble.Sync) }); err != nil {
		return fmt.Errorf("delete replayed deferred writes: %w", err)
	}
	s.log.Info("blockstore: replayed deferred writes", "count", n)
	return nil
}
