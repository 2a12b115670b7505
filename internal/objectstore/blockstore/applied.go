package blockstore

import (
	"fmt"
)

// What the commit pipeline hands back to the store (pipelineHost): a
// group made visible becomes the readers' state (publish, under applyMu),
// the space a durable group freed goes back to the allocator (release,
// under prepMu), and Queue drops the overlay entries of applied
// transactions (dropApplied).

// publish runs commit under applyMu and, if it succeeds, makes the
// group's state the readers' state; the pipeline marks the group Applied
// once applyMu is let go. Queue drops the group's entries from the
// prepare overlay later (dropApplied), so that the committer never waits
// for prepMu behind preparations.
func (s *Store) publish(commit func() error, group []*pendingTxn) error {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	if err := commit(); err != nil {
		return err
	}
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
	return nil
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
