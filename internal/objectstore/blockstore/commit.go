package blockstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// The commit pipeline has three goroutines, each taking whole groups of
// transactions from the one before, so that one group's WAL sync
// overlaps the next group's batch and an earlier group's in-place
// writes:
//
//   - committer: drains the Queue into a group, writes the group's
//     copy-on-write data, syncs the data file if it wrote any, and
//     commits one Pebble batch without sync: the group is visible,
//     Applied. It hands the group to the syncer.
//   - syncer: syncs the Pebble WAL once for every group handed to it
//     since its last sync: Committed. Hands them to the applier.
//   - applier: writes each durable group's deferred writes in place,
//     then hands the space the group freed back to the allocator. Every
//     maxUnsyncedDeferred writes it syncs the data file and deletes
//     their 'D' keys.
//
// Two orderings keep a crash from tearing or losing a byte:
//
//   - Space is reused only after the deferred writes into it: the
//     applier releases a group's freed units after applying that group's
//     (and every earlier group's) deferred writes, and a reused unit is
//     written only by copy-on-write data in a later group.
//   - A 'D' key is deleted only after a data sync that covers its write,
//     and before any batch that references its units' new owner: the
//     committer and the applier take the applied keys, sync and commit
//     the batch deleting them under deferredMu, so a copy-on-write group
//     either deletes the keys of every write applied before its sync or
//     comes after (in WAL order) the batch that did. A replay at Open
//     therefore never writes old bytes over reused space.
//
// An I/O error fails the store: the failing group and every group not
// yet durable complete with the error, later transactions are refused,
// and reopening the store recovers the last durable state.

// maxUnsyncedDeferred bounds the deferred writes applied in place but not
// yet synced, whose 'D' keys Open would replay after a crash.
const maxUnsyncedDeferred = 256

// groupQueue hands groups from one pipeline stage to the next.
type groupQueue struct {
	mu     sync.Mutex
	groups [][]*pendingTxn
	closed bool
	wake   chan struct{}
}

func newGroupQueue() *groupQueue { return &groupQueue{wake: make(chan struct{}, 1)} }

func (q *groupQueue) push(g []*pendingTxn) {
	q.mu.Lock()
	q.groups = append(q.groups, g)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close tells the next stage no more groups come; it still gets the
// queued ones.
func (q *groupQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take waits for groups and returns all queued; ok is false once the
// queue is closed and empty.
func (q *groupQueue) take() (groups [][]*pendingTxn, ok bool) {
	for {
		q.mu.Lock()
		groups, closed := q.groups, q.closed
		q.groups = nil
		q.mu.Unlock()
		if len(groups) > 0 {
			return groups, true
		}
		if closed {
			return nil, false
		}
		<-q.wake
	}
}

// startPipeline starts the three stages; s.done closes when the last
// one has finished after Close.
func (s *Store) startPipeline() {
	s.toSync, s.toApply = newGroupQueue(), newGroupQueue()
	go s.committer()
	go s.syncer()
	go s.applier()
}

// fail records the first commit error; the store refuses later
// transactions.
func (s *Store) fail(err error, stage string, txns int) {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if s.failed == nil {
		s.log.Error("blockstore: commit failed; the store refuses further writes", "stage", stage, "err", err, "transactions", txns)
		s.failed = err
	}
}

func (s *Store) failure() error {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	return s.failed
}

func failGroup(group []*pendingTxn, err error) {
	for _, p := range group {
		p.comp.MarkCommitted(fmt.Errorf("blockstore: commit: %w", err))
	}
}

// committer is the first stage: one batch per group, Applied.
func (s *Store) committer() {
	defer s.toSync.close()
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
		failed := s.failed
		s.inFlight.Add(1)
		s.prepMu.Unlock()
		if failed == nil {
			if failed = s.applyGroup(group); failed != nil {
				s.fail(failed, "apply", len(group))
			}
		}
		if failed != nil {
			failGroup(group, failed)
			s.inFlight.Done()
			continue
		}
		s.toSync.push(group)
	}
}

// applyGroup writes the group's copy-on-write data, syncs it, and makes
// the group visible with one batch.
func (s *Store) applyGroup(group []*pendingTxn) error {
	wrote := false
	for _, p := range group {
		for _, w := range p.writes {
			if _, err := s.file.WriteAt(w.Data, int64(w.DevOff)); err != nil {
				return fmt.Errorf("write data at %d: %w", w.DevOff, err)
			}
			wrote = true
		}
	}
	b := s.db.NewBatch()
	defer b.Close()
	if wrote {
		// The sync covers the deferred writes applied so far too, so
		// their keys go in this batch (see the orderings above).
		s.deferredMu.Lock()
		defer s.deferredMu.Unlock()
		if err := s.file.SyncData(); err != nil {
			return fmt.Errorf("sync data file: %w", err)
		}
		for _, k := range s.appliedDeferred {
			_ = b.Delete(k, nil)
		}
		s.appliedDeferred = s.appliedDeferred[:0]
	}
	cb := s.sb.ChecksumBlock
	for _, p := range group {
		for _, w := range p.writes {
			for off := uint64(0); off < uint64(len(w.Data)); off += cb {
				s.data.drop(w.DevOff+off, p.seq)
			}
		}
	}
	for _, p := range group {
		if err := b.Apply(p.batch, nil); err != nil {
			return fmt.Errorf("build batch: %w", err)
		}
		_ = p.batch.Close()
		p.batch = nil
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	if err := pebbleCommit(func() error { return s.db.Apply(b, pebble.NoSync) }); err != nil {
		return fmt.Errorf("commit batch: %w", err)
	}
	s.publish(group)
	return nil
}

// publish makes an applied group's state the readers' state and marks
// it Applied. The caller holds applyMu.
func (s *Store) publish(group []*pendingTxn) {
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
	for _, p := range group {
		p.comp.MarkApplied()
	}
}

// syncer is the second stage: one WAL sync for all applied groups,
// Committed.
func (s *Store) syncer() {
	defer s.toApply.close()
	for {
		groups, ok := s.toSync.take()
		if !ok {
			return
		}
		err := s.failure()
		if err == nil {
			s.statSyncs.Add(1)
			for _, g := range groups {
				s.statTxns.Add(uint64(len(g)))
			}
			if err = pebbleCommit(func() error { return s.db.LogData(nil, pebble.Sync) }); err != nil {
				err = fmt.Errorf("sync pebble WAL: %w", err)
				s.fail(err, "sync", len(groups))
			}
		}
		for _, g := range groups {
			if err != nil {
				failGroup(g, err)
				s.inFlight.Done()
				continue
			}
			for _, p := range g {
				p.comp.MarkCommitted(nil)
			}
			s.toApply.push(g)
		}
	}
}

// applier is the last stage: deferred writes in place, then freed space
// back to the allocator.
func (s *Store) applier() {
	defer close(s.done)
	for {
		groups, ok := s.toApply.take()
		if !ok {
			return
		}
		for _, g := range groups {
			if s.failure() == nil && !s.opts.testSkipDeferredApply {
				if err := s.finishGroup(g); err != nil {
					s.fail(err, "deferred", len(g))
				}
			}
			s.finished(g[len(g)-1].seq)
			s.inFlight.Done()
		}
	}
}

// finished records that the pipeline is through seq and wakes those
// waiting for it.
func (s *Store) finished(seq uint64) {
	s.prepMu.Lock()
	s.finishedSeq = seq
	close(s.finishedCh)
	s.finishedCh = make(chan struct{})
	s.prepMu.Unlock()
}

// waitFinished waits until the pipeline is through seq (every earlier
// transaction's freed space is back in the allocator) or the store
// fails or closes.
func (s *Store) waitFinished(ctx context.Context, seq uint64) error {
	for {
		s.prepMu.Lock()
		done, ch := s.finishedSeq >= seq || s.failed != nil, s.finishedCh
		s.prepMu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-s.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// finishGroup applies a durable group's deferred writes, releases the
// space it freed, and syncs the data file if enough writes wait.
func (s *Store) finishGroup(group []*pendingTxn) error {
	if err := s.applyDeferred(group); err != nil {
		return err
	}
	if err := s.releaseFreed(group); err != nil {
		return err
	}
	s.deferredMu.Lock()
	n := len(s.appliedDeferred)
	s.deferredMu.Unlock()
	if n >= maxUnsyncedDeferred {
		return s.syncDeferred(pebble.NoSync)
	}
	return nil
}

// releaseFreed hands the space a durable group freed back to the
// allocator, once the group's and every earlier group's deferred writes
// are in place.
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
