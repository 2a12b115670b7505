package blockstore

import (
	"fmt"
)

// What the commit pipeline hands back to the store (pipelineHost): a
// group made visible becomes the readers' state (publishLocked, under
// applyMu), the space a durable group freed goes back to the allocator
// (release, under prepMu), and Queue drops the overlay entries of
// applied transactions (dropApplied).

// lockReaders holds readers out (applyMu) while the committer commits a
// group's batch and publishes it; unlockReaders lets them in again.
func (s *Store) lockReaders() { s.applyMu.Lock() }

func (s *Store) unlockReaders() { s.applyMu.Unlock() }

// publishLocked makes a committed group's state the readers' state; the
// caller holds applyMu, and the pipeline marks the group Applied once it
// has let go. Queue drops the group's entries from the prepare overlay
// later (dropApplied), so that the committer never waits for prepMu
// behind preparations.
func (s *Store) publishLocked(group []*pendingTxn) {
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
}

// dropApplied removes the prepare-overlay entries of applied
// transactions that no later transaction has replaced; the caller holds
// prepMu. An entry left a little longer is harmless: it holds the same
// record as the cache.
func (s *Store) dropApplied() {
	for _, p := range s.pipe.takeApplied() {
		for _, r := range p.records {
			if ov, ok := s.overlay[r.key]; ok && ov.seq == p.seq {
				delete(s.overlay, r.key)
			}
		}
	}
}

// release hands the space a durable group freed back to the allocator,
// once the group's and every earlier group's deferred writes are in
// place (the applier calls it).
func (s *Store) release(group []*pendingTxn) error {
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
