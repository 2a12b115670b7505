package blockstore

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// committer is the one goroutine that writes: it drains the queue and
// commits each group of transactions with one data sync and one Pebble
// batch:
//
//  1. write the group's copy-on-write data to the data file
//  2. sync the data file (this also covers deferred writes applied by
//     earlier groups, whose 'D' keys this batch deletes); a group that
//     wrote no copy-on-write data skips it until maxUnsyncedDeferred
//     deferred writes wait, so overwrite-only groups cost one sync each
//     (the WAL's), not two
//  3. commit one Pebble batch without sync; the group is visible: Applied
//  4. sync the Pebble WAL
//  5. release the space the group freed; Committed
//  6. apply the group's deferred writes in place
//
// An I/O error fails the group and the store: later transactions fail
// and the store must be reopened, which recovers the last durable state.
func (s *Store) committer() {
	defer close(s.done)
	for {
		s.prepMu.Lock()
		if len(s.queue) == 0 {
			closed := s.closed
			s.prepMu.Unlock()
			if closed {
				return
			}
			<-s.wake
			continue
		}
		group := s.queue
		s.queue = nil
		s.statGroups.Add(1)
		s.statTxns.Add(uint64(len(group)))
		failed := s.failed
		s.prepMu.Unlock()
		durable := false
		if failed == nil {
			durable, failed = s.commitGroup(group)
			if failed != nil {
				s.log.Error("blockstore: commit failed; the store refuses further writes", "err", failed, "transactions", len(group))
				s.prepMu.Lock()
				s.failed = failed
				s.prepMu.Unlock()
			}
		}
		if failed != nil && !durable {
			for _, p := range group {
				p.comp.MarkCommitted(fmt.Errorf("blockstore: commit: %w", failed))
			}
		}
	}
}

// maxUnsyncedDeferred bounds the deferred writes applied in place but not
// yet synced, whose 'D' keys Open would replay after a crash.
const maxUnsyncedDeferred = 256

// commitGroup commits group; durable reports whether its completions
// have been marked (the group reached the WAL even if err is set).
func (s *Store) commitGroup(group []*pendingTxn) (durable bool, err error) {
	// 1-2. Copy-on-write data, then one sync. A group without new data
	// skips the sync while few applied deferred writes wait for one:
	// their 'D' keys stay (Open would replay them) until a later sync.
	wrote := false
	for _, p := range group {
		for _, w := range p.writes {
			if _, err := s.file.WriteAt(w.Data, int64(w.DevOff)); err != nil {
				return false, fmt.Errorf("write data at %d: %w", w.DevOff, err)
			}
			s.dataDirty = true
			wrote = true
		}
	}
	synced := false
	if s.dataDirty && (wrote || len(s.appliedDeferred) >= maxUnsyncedDeferred) {
		if err := s.file.SyncData(); err != nil {
			return false, fmt.Errorf("sync data file: %w", err)
		}
		s.dataDirty = false
		synced = true
	}
	cb := s.sb.ChecksumBlock
	for _, p := range group {
		for _, w := range p.writes {
			for off := uint64(0); off < uint64(len(w.Data)); off += cb {
				s.data.drop(w.DevOff+off, p.seq)
			}
		}
	}
	// 3. One batch, not synced: visible.
	b := s.db.NewBatch()
	defer b.Close()
	if synced {
		for _, k := range s.appliedDeferred {
			_ = b.Delete(k, nil)
		}
	}
	for _, p := range group {
		if err := b.Apply(p.batch, nil); err != nil {
			return false, fmt.Errorf("build batch: %w", err)
		}
		_ = p.batch.Close()
		p.batch = nil
	}
	s.applyMu.Lock()
	if err := pebbleCommit(func() error { return s.db.Apply(b, pebble.NoSync) }); err != nil {
		s.applyMu.Unlock()
		return false, fmt.Errorf("commit batch: %w", err)
	}
	if synced {
		s.appliedDeferred = s.appliedDeferred[:0]
	}
	s.prepMu.Lock()
	for _, p := range group {
		for key, rec := range p.records {
			s.cache.put(key, rec)
			if ov, ok := s.overlay[key]; ok && ov.seq == p.seq {
				delete(s.overlay, key)
			}
		}
		for c, exists := range p.colls {
			if exists {
				s.colls[c] = true
			} else {
				delete(s.colls, c)
			}
		}
		for pool, v := range p.pools {
			s.poolStored[pool] = v
		}
		s.appliedSeq = p.seq
	}
	s.prepMu.Unlock()
	s.applyMu.Unlock()
	for _, p := range group {
		p.comp.MarkApplied()
	}
	// 4. Durable.
	if err := pebbleCommit(func() error { return s.db.LogData(nil, pebble.Sync) }); err != nil {
		return false, fmt.Errorf("sync pebble WAL: %w", err)
	}
	// 5-6. Free space back, Committed, then deferred writes in place
	// (readers find them in the data overlay until then). The group is
	// durable whatever happens here: an error fails the store, not the
	// group.
	if s.opts.testSkipDeferredApply {
		for _, p := range group {
			p.comp.MarkCommitted(nil)
		}
		return true, nil
	}
	err = s.releaseFreed(group)
	for _, p := range group {
		p.comp.MarkCommitted(nil)
	}
	if err != nil {
		return true, err
	}
	return true, s.applyDeferred(group)
}

// releaseFreed hands the space a durable group freed back to the
// allocator. It may come before the group's deferred writes reach the
// file: space is reused only through copy-on-write data, which the
// committer writes after them, in a group whose batch deletes their keys.
func (s *Store) releaseFreed(group []*pendingTxn) error {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	for _, p := range group {
		if len(p.freed) == 0 {
			continue
		}
		if err := s.alloc.Release(p.freed...); err != nil {
			return fmt.Errorf("release freed space: %w", err)
		}
	}
	return nil
}
