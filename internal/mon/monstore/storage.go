package monstore

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Store implements raft.Storage.
var _ raft.Storage = (*Store)(nil)

// InitialState returns the stored HardState (nil if none was stored yet)
// and the ConfState in force at the applied index (see Batch.SetConfState),
// which raft restores from together with Config.Applied = AppliedIndex().
func (s *Store) InitialState() (*pb.HardState, *pb.ConfState, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	var hs *pb.HardState
	if s.hs != nil {
		hs = &pb.HardState{Term: new(s.hs.GetTerm()), Vote: new(s.hs.GetVote()), Commit: new(s.hs.GetCommit())}
	}
	return hs, cloneConfState(s.applied.conf), nil
}

// FirstIndex returns the index of the first entry that may be in the log:
// one past the last compacted or snapshotted entry.
func (s *Store) FirstIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.logStart.index + 1, nil
}

// LastIndex returns the index of the last entry of the log, or
// FirstIndex()-1 if the log is empty.
func (s *Store) LastIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.last, nil
}

// Term returns the term of entry i, for i in [FirstIndex()-1, LastIndex()].
// Below that it returns raft.ErrCompacted, above it raft.ErrUnavailable.
func (s *Store) Term(i uint64) (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.term(i)
}

// term is Term with mu held.
func (s *Store) term(i uint64) (uint64, error) {
	switch {
	case i < s.logStart.index:
		return 0, raft.ErrCompacted
	case i > s.last:
		return 0, raft.ErrUnavailable
	case i == s.logStart.index:
		return s.logStart.term, nil
	}
	if e := s.cache.get(i); e != nil {
		return e.GetTerm(), nil
	}
	ent, err := s.readEntry(i)
	if err != nil {
		return 0, err
	}
	return ent.GetTerm(), nil
}

// readEntry reads and decodes the entry at index from Pebble; the caller
// has checked that the log holds it.
func (s *Store) readEntry(index uint64) (*pb.Entry, error) {
	k := entryKey(index)
	v, err := s.get(k)
	if err != nil {
		if err == ErrNotFound {
			return nil, fmt.Errorf("%w: log entry %d is missing (log [%d, %d])", ErrCorrupt, index, s.logStart.index+1, s.last)
		}
		return nil, err
	}
	return decodeEntry(k, v)
}

// Entries returns the entries [lo, hi), at least one and otherwise as many
// as fit in maxSize bytes (counted as raft does, by protobuf size). It
// returns raft.ErrCompacted if lo <= FirstIndex()-1, raft.ErrUnavailable if
// the log is empty or hi > LastIndex()+1. The caller owns the slice; the
// entries are shared and must not be modified.
func (s *Store) Entries(lo, hi, maxSize uint64) ([]*pb.Entry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	switch {
	case lo <= s.logStart.index:
		return nil, raft.ErrCompacted
	case hi > s.last+1 || s.last == s.logStart.index:
		return nil, raft.ErrUnavailable
	case lo >= hi:
		return nil, nil
	}
	var (
		out  []*pb.Entry
		size uint64
	)
	// add appends ent unless the size limit is reached, and reports
	// whether to go on.
	add := func(ent *pb.Entry) bool {
		size += entrySize(ent)
		if len(out) > 0 && size > maxSize {
			return false
		}
		out = append(out, ent)
		return true
	}
	next := lo
	cacheFirst := s.cache.first
	if len(s.cache.ents) == 0 {
		cacheFirst = s.last + 1
	}
	if next < cacheFirst {
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: entryKey(lo), UpperBound: entryKey(min(hi, cacheFirst))})
		if err != nil {
			return nil, err
		}
		defer it.Close()
		for it.First(); it.Valid(); it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				return nil, err
			}
			ent, err := decodeEntry(it.Key(), v)
			if err != nil {
				return nil, err
			}
			if ent.GetIndex() != next {
				return nil, fmt.Errorf("%w: log entry %d is missing (found %d)", ErrCorrupt, next, ent.GetIndex())
			}
			next++
			if !add(ent) {
				return out, nil
			}
		}
		if err := it.Error(); err != nil {
			return nil, err
		}
		if next < min(hi, cacheFirst) {
			return nil, fmt.Errorf("%w: log entry %d is missing (log [%d, %d])", ErrCorrupt, next, s.logStart.index+1, s.last)
		}
	}
	for ; next < hi; next++ {
		ent := s.cache.get(next)
		if ent == nil { // the cache always ends at the last entry
			return nil, fmt.Errorf("monstore: entry cache does not hold entry %d", next)
		}
		if !add(ent) {
			break
		}
	}
	return out, nil
}

func cloneConfState(cs *pb.ConfState) *pb.ConfState {
	return &pb.ConfState{
		Voters:         append([]uint64(nil), cs.GetVoters()...),
		Learners:       append([]uint64(nil), cs.GetLearners()...),
		VotersOutgoing: append([]uint64(nil), cs.GetVotersOutgoing()...),
		LearnersNext:   append([]uint64(nil), cs.GetLearnersNext()...),
		AutoLeave:      new(cs.GetAutoLeave()),
	}
}
