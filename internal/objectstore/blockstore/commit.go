package blockstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/internal/pebblelog"
)

// The commit pipeline has three goroutines, each taking whole groups of
// transactions from the one before, so that one group's WAL sync
// overlaps the next group's batch and an earlier group's in-place
// writes:
//
//   - committer: drains the Queue into a group, writes the group's
//     copy-on-write data, syncs the data file if it wrote any, and
//     commits one Pebble batch with a WAL sync it does not wait for
//     (ApplyNoSyncWait): the group is visible, Applied. It hands the
//     group to the syncer.
//   - syncer: waits for each group's WAL sync, in commit order:
//     Committed. Pebble's WAL writer syncs everything written while the
//     previous sync ran at once, so concurrent groups share syncs.
//     Hands the groups to the applier.
//   - applier: writes each durable group's deferred writes in place,
//     then hands the space the group freed back to the allocator. Every
//     maxUnsyncedDeferred writes it syncs the data file and deletes
//     their 'D' keys; once those deletions are durable, it removes the
//     WAL files that held the writes' data (walkeep.go).
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

// stagedGroup is a group between pipeline stages, with its batch until
// the syncer has waited for it.
type stagedGroup struct {
	txns  []*pendingTxn
	batch *pebble.Batch
	// deleted: every 'D' key with a seq up to it is deleted by a batch
	// at or before this one in the WAL, so durably once it is synced.
	deleted uint64
}

// groupQueue hands groups from one pipeline stage to the next.
type groupQueue struct {
	mu     sync.Mutex
	groups []stagedGroup
	closed bool
	wake   chan struct{}
}

func newGroupQueue() *groupQueue { return &groupQueue{wake: make(chan struct{}, 1)} }

func (q *groupQueue) push(g stagedGroup) {
	q.mu.Lock()
	q.groups = append(q.groups, g)
	q.mu.Unlock()
	q.signal()
}

// close tells the next stage no more groups come; it still gets the
// queued ones.
func (q *groupQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// take waits for groups and returns all queued; ok is false once the
// queue is closed and empty.
func (q *groupQueue) take() (groups []stagedGroup, ok bool) {
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

// poll returns the queued groups without waiting, and whether the queue
// is closed and empty.
func (q *groupQueue) poll() (groups []stagedGroup, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	groups, q.groups = q.groups, nil
	return groups, q.closed && len(groups) == 0
}

// signal wakes the stage waiting on q without queueing anything.
func (q *groupQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
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
		s.failedErr.Store(&err)
	}
}

// failure returns the error that failed the store, or nil. It takes no
// lock, so the pipeline does not wait behind Queue's preparations.
func (s *Store) failure() error {
	if e := s.failedErr.Load(); e != nil {
		return *e
	}
	return nil
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
		s.queueMu.Lock()
		if len(s.queue) == 0 {
			closed := s.queueClosed
			s.queueMu.Unlock()
			if closed {
				return
			}
			<-s.wake
			continue
		}
		group := s.queue
		s.queue = nil
		s.groupsInFlight.Add(1)
		s.queueMu.Unlock()
		failed := s.failure()
		var g stagedGroup
		if failed == nil {
			if g, failed = s.applyGroup(group); failed != nil {
				s.fail(failed, "apply", len(group))
			}
		}
		if failed != nil {
			failGroup(group, failed)
			s.groupGone()
			continue
		}
		s.toSync.push(g)
	}
}

// applyGroup writes the group's copy-on-write data, syncs it, and makes
// the group visible with one batch, whose WAL sync the syncer waits for.
func (s *Store) applyGroup(group []*pendingTxn) (stagedGroup, error) {
	wrote, err := s.writeCOW(group)
	if err != nil {
		return stagedGroup{}, err
	}
	g, err := s.commitGroup(group, wrote)
	if err != nil {
		return g, err
	}
	s.boundWAL(group)
	// Marked outside applyMu and deferredMu: the completions' callbacks
	// must not wait for the committer's readers, nor hold up the applier.
	for _, p := range group {
		p.comp.MarkApplied()
	}
	return g, nil
}

// commitGroup commits the group's batch and publishes it. If the group
// wrote copy-on-write data, the batch deletes the applied deferred
// writes' keys too, and deferredMu is held from the data sync through
// the commit: deletions of 'D' keys reach the WAL in the order they are
// made, which deferredCommitted relies on.
func (s *Store) commitGroup(group []*pendingTxn, wrote bool) (stagedGroup, error) {
	if wrote {
		s.deferredMu.Lock()
		defer s.deferredMu.Unlock()
	}
	// Committed before this batch is: in the WAL ahead of it.
	g := stagedGroup{txns: group, batch: s.db.NewBatch(), deleted: s.deferredCommitted.Load()}
	deleted, err := s.fillBatch(g.batch, group, wrote)
	if err != nil {
		_ = g.batch.Close()
		return stagedGroup{}, err
	}
	s.wals.hand(lastDeferredSeq(group))
	s.applyMu.Lock()
	if err := s.applyBatch(g.batch, pebble.Sync, false); err != nil {
		s.applyMu.Unlock()
		_ = g.batch.Close()
		return stagedGroup{}, fmt.Errorf("commit batch: %w", err)
	}
	s.publish(group)
	s.applyMu.Unlock()
	if deleted > 0 {
		s.deferredCommitted.Store(deleted)
		g.deleted = deleted
	}
	return g, nil
}

// maxLoggedPerWAL bounds the deferred data one WAL carries. Pebble starts
// a WAL when it starts a memtable, and with the data in the WAL only a
// memtable fills with keys alone: under partial overwrites of tens of
// kilobytes one WAL would grow to gigabytes, held until the writes are
// applied and read again after a crash. Past this much deferred data in
// one WAL the committer has Pebble start another.
const maxLoggedPerWAL = 64 << 20

// boundWAL counts the group's deferred data into the current WAL and
// rotates the WAL (with its memtable) once it carries maxLoggedPerWAL.
func (s *Store) boundWAL(group []*pendingTxn) {
	if n := s.wals.created.Load(); n != s.loggedWAL {
		s.loggedWAL, s.loggedBytes = n, 0 // Pebble started a WAL itself
	}
	for _, p := range group {
		for _, w := range p.deferred {
			s.loggedBytes += len(w.Data)
		}
	}
	limit := maxLoggedPerWAL
	if s.opts.testLoggedPerWAL > 0 {
		limit = s.opts.testLoggedPerWAL
	}
	if s.loggedBytes < limit {
		return
	}
	if err := pebblelog.Recover(func() error { _, err := s.db.AsyncFlush(); return err }); err != nil {
		// The next group tries again; the WAL only grows meanwhile.
		s.log.Warn("blockstore: rotate WAL", "err", err)
		return
	}
	s.loggedBytes = 0
	s.statWALRotations.Add(1)
}

// lastDeferredSeq returns the seq of the group's last transaction with
// deferred writes, or 0.
func lastDeferredSeq(group []*pendingTxn) uint64 {
	for i := len(group) - 1; i >= 0; i-- {
		if len(group[i].deferred) > 0 {
			return group[i].seq
		}
	}
	return 0
}

// writeCOW writes the group's copy-on-write data and reports whether
// there was any. Aligned buffers (object data received into aligned
// message buffers, whole allocation units) go to the device with O_DIRECT,
// several at once: a buffered write of megabytes costs a copy into the
// page cache and its writeback, which on the benchmark machine held
// 4 MiB writes to a quarter of what the disk takes directly. The data
// sync that follows covers both kinds.
func (s *Store) writeCOW(group []*pendingTxn) (bool, error) {
	if !slices.ContainsFunc(group, func(p *pendingTxn) bool { return len(p.writes) > 0 }) {
		return false, nil
	}
	s.dev.writes.begin() // only around real writes: each one voids the prefetches
	defer s.dev.writes.end()
	var direct []format.DeferredWrite
	for _, p := range group {
		for _, w := range p.writes {
			if s.dev.direct != nil && len(w.Data) >= directWriteMin && isAligned(w.Data, w.DevOff) {
				direct = append(direct, w)
				continue
			}
			if err := s.dev.writeAt(w.Data, w.DevOff); err != nil {
				return false, fmt.Errorf("write data at %d: %w", w.DevOff, err)
			}
		}
	}
	return true, s.dev.writeDirectCOW(direct)
}

// directWriteMin is the size from which aligned copy-on-write data goes
// to the device directly: smaller writes are cheap to buffer and merge.
const directWriteMin = 64 << 10

// maxDirectWriters bounds the direct writes in flight at once.
const maxDirectWriters = 8

// writeDirectCOW writes ws with O_DIRECT, up to maxDirectWriters at a
// time (each a blocking pwrite on its own thread, so the device sees them
// together).
func (d *dataFile) writeDirectCOW(ws []format.DeferredWrite) error {
	d.statDirectWrites.Add(uint64(len(ws)))
	if len(ws) == 1 {
		if _, err := d.direct.WriteAt(ws[0].Data, int64(ws[0].DevOff)); err != nil {
			return fmt.Errorf("write data at %d: %w", ws[0].DevOff, err)
		}
		return nil
	}
	errs := make([]error, len(ws))
	sem := make(chan struct{}, maxDirectWriters)
	var wg sync.WaitGroup
	for i, w := range ws {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := d.direct.WriteAt(w.Data, int64(w.DevOff)); err != nil {
				errs[i] = fmt.Errorf("write data at %d: %w", w.DevOff, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fillBatch merges the group's batches into b, with the deletion of the
// applied deferred writes' keys after a data sync if the group wrote
// copy-on-write data (the caller holds deferredMu then). It returns the
// last seq whose key b deletes, or 0.
func (s *Store) fillBatch(b *pebble.Batch, group []*pendingTxn, wrote bool) (uint64, error) {
	var deleted uint64
	if wrote {
		// The sync covers the deferred writes applied so far too, so
		// their keys go in this batch (see the orderings above).
		if err := s.dev.syncData(); err != nil {
			return 0, fmt.Errorf("sync data file: %w", err)
		}
		deleted = s.deleteAppliedLocked(b)
	}
	s.data.dropRuns(group[len(group)-1].seq)
	for _, p := range group {
		if err := b.Apply(p.batch, nil); err != nil {
			return 0, fmt.Errorf("build batch: %w", err)
		}
		_ = p.batch.Close()
		p.batch = nil
	}
	return deleted, nil
}

// publish makes an applied group's state the readers' state; the caller
// holds applyMu, and marks the group Applied once it has let go. Queue
// drops the group's entries from the prepare overlay later
// (dropApplied), so that the committer never waits for prepMu behind
// preparations.
func (s *Store) publish(group []*pendingTxn) {
	for _, p := range group {
		for _, r := range p.records {
			s.cache.put(r.key, r.rec)
		}
		for c, exists := range p.colls {
			if exists {
				s.colls[c] = true
			} else {
				delete(s.colls, c)
			}
		}
		for _, ps := range p.pools {
			s.poolStored[ps.pool] = ps.stored
		}
		s.appliedSeq = p.seq
	}
	s.appliedMu.Lock()
	s.applied = append(s.applied, group...)
	s.appliedMu.Unlock()
}

// dropApplied removes the prepare-overlay entries of applied
// transactions that no later transaction has replaced; the caller holds
// prepMu. An entry left a little longer is harmless: it holds the same
// record as the cache.
func (s *Store) dropApplied() {
	s.appliedMu.Lock()
	applied := s.applied
	s.applied = nil
	s.appliedMu.Unlock()
	for _, p := range applied {
		for _, r := range p.records {
			if ov, ok := s.overlay[r.key]; ok && ov.seq == p.seq {
				delete(s.overlay, r.key)
			}
		}
	}
}

// syncer is the second stage: it waits for each group's WAL sync in
// order, Committed.
func (s *Store) syncer() {
	defer s.toApply.close()
	for {
		groups, ok := s.toSync.take()
		if !ok {
			return
		}
		s.statSyncs.Add(1)
		for _, g := range groups {
			s.statTxns.Add(uint64(len(g.txns)))
			err := pebblelog.Recover(g.batch.SyncWait)
			_ = g.batch.Close()
			g.batch = nil
			if err != nil {
				err = fmt.Errorf("sync pebble WAL: %w", err)
				s.fail(err, "sync", len(g.txns))
				failGroup(g.txns, err)
				s.groupGone()
				continue
			}
			if g.deleted > 0 {
				s.wals.deletedDurably(g.deleted)
			}
			for _, p := range g.txns {
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
		groups = s.gatherDeferred(groups)
		if s.failure() == nil && !s.opts.testSkipDeferredApply {
			if err := s.finishGroups(groups); err != nil {
				s.fail(err, "deferred", len(groups))
			}
			s.wals.release()
		}
		last := groups[len(groups)-1].txns
		s.finished(last[len(last)-1].seq)
		for range groups {
			s.groupGone()
		}
	}
}

// applyBatchMin is how many deferred writes the applier gathers before it
// writes them, while more groups are on their way. One io_submit of many
// writes costs the kernel (and, in a virtual machine, the doorbell to the
// host) less per write than several small ones, and the applier wakes,
// and takes prepMu to publish its progress, less often. With 16 writers
// of 4 KiB the applier's CPU per write fell by about a tenth.
const applyBatchMin = 64

// gatherDeferred adds to groups those that arrive while fewer than
// applyBatchMin deferred writes are in hand and other groups are still
// in the committer or the syncer. Deferred data stays readable meanwhile
// (the data overlay holds it), and a group that fails upstream wakes the
// applier (groupGone), so it never waits for a group that will not come.
func (s *Store) gatherDeferred(groups []stagedGroup) []stagedGroup {
	for countDeferred(groups) < applyBatchMin && int(s.groupsInFlight.Load()) > len(groups) {
		more, closed := s.toApply.poll()
		if closed {
			break
		}
		if len(more) == 0 {
			<-s.toApply.wake
			continue
		}
		groups = append(groups, more...)
	}
	return groups
}

func countDeferred(groups []stagedGroup) int {
	n := 0
	for _, g := range groups {
		for _, p := range g.txns {
			n += len(p.deferred)
		}
	}
	return n
}

// groupGone records that a group has left the pipeline, and wakes the
// applier in case it is waiting for it.
func (s *Store) groupGone() {
	s.groupsInFlight.Add(-1)
	s.toApply.signal()
}

// finishGroups applies durable groups' deferred writes, releases the
// space they freed, and syncs the data file if enough writes wait.
func (s *Store) finishGroups(groups []stagedGroup) error {
	if err := s.applyDeferred(groups); err != nil {
		return err
	}
	for _, g := range groups {
		if err := s.releaseFreed(g.txns); err != nil {
			return err
		}
	}
	s.deferredMu.Lock()
	n := len(s.appliedDeferred)
	s.deferredMu.Unlock()
	if n >= maxUnsyncedDeferred {
		return s.syncDeferred(pebble.NoSync)
	}
	return nil
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
