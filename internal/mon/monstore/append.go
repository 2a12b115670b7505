package monstore

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Append persists what a raft.Ready asks to store before its messages are
// sent: the HardState (nil or empty: unchanged), the snapshot (nil or
// empty: none) and the entries, in one Pebble batch that is synced before
// Append returns. Either all of it is durable or, after a crash, none.
//
// A snapshot replaces the log (it starts after the snapshot's index) and
// the whole service key space, restored from the snapshot's data as
// Snapshot encodes it; the applied index becomes the snapshot's index and
// the ConfState its ConfState. A snapshot whose index is not above the
// applied index fails with raft.ErrSnapOutOfDate; one whose data is
// corrupt or too large fails with ErrCorrupt; nothing is written then.
//
// Entries must be contiguous with non-decreasing terms. Entries before
// FirstIndex (after the snapshot, if any) are ignored; the first one kept
// must be at most LastIndex()+1, and the entries from it on replace the
// log's suffix (raft overwrites uncommitted entries that conflict with a
// new leader's). Replacing an entry at or below the applied index is a
// contract violation (ErrInvalid): such an entry is committed.
//
// After a failed write the store refuses writes (ErrFailed) and must be
// reopened; what is on disk is then either before or after the batch.
func (s *Store) Append(hs *pb.HardState, ents []*pb.Entry, snap *pb.Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkWritable(); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer func() {
		if b != nil {
			_ = b.Close()
		}
	}()
	logStart, last, applied := s.logStart, s.last, s.applied
	if !raft.IsEmptySnap(snap) {
		if err := s.stageSnapshot(b, snap); err != nil {
			return err
		}
		md := snap.GetMetadata()
		logStart = logState{index: md.GetIndex(), term: md.GetTerm()}
		last = logStart.index
		applied = appliedState{index: md.GetIndex(), conf: cloneConfState(md.GetConfState())}
	}
	ents, err := s.stageEntries(b, ents, logStart, last, applied.index)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		last = ents[len(ents)-1].GetIndex()
	}
	if hs != nil && !raft.IsEmptyHardState(hs) {
		_ = b.Set(keyHardState, encodeHardState(hs), nil)
	}
	if b.Empty() {
		return nil
	}
	err = s.commitBatch(b, pebble.Sync)
	b = nil
	if err != nil {
		return err
	}
	if hs != nil && !raft.IsEmptyHardState(hs) {
		s.hs = &pb.HardState{Term: new(hs.GetTerm()), Vote: new(hs.GetVote()), Commit: new(hs.GetCommit())}
	}
	if logStart != s.logStart {
		s.cache.reset()
		s.snap = nil
	}
	s.logStart, s.last, s.applied = logStart, last, applied
	s.cache.append(ents)
	return nil
}

// stageEntries validates ents against a log [logStart.index+1, last] with
// the given applied index, adds them to b replacing any suffix they
// conflict with, and returns the entries kept.
func (s *Store) stageEntries(b *pebble.Batch, ents []*pb.Entry, logStart logState, last, applied uint64) ([]*pb.Entry, error) {
	if len(ents) == 0 {
		return nil, nil
	}
	for i, e := range ents {
		if i > 0 && (e.GetIndex() != ents[i-1].GetIndex()+1 || e.GetTerm() < ents[i-1].GetTerm()) {
			return nil, fmt.Errorf("%w: append: entry %d (term %d) after entry %d (term %d)",
				ErrInvalid, e.GetIndex(), e.GetTerm(), ents[i-1].GetIndex(), ents[i-1].GetTerm())
		}
		if len(e.GetData()) > MaxEntryData {
			return nil, fmt.Errorf("%w: append: entry %d holds %d bytes, above %d", ErrInvalid, e.GetIndex(), len(e.GetData()), MaxEntryData)
		}
	}
	first := logStart.index + 1
	if ents[len(ents)-1].GetIndex() < first {
		return nil, nil // all compacted
	}
	if ents[0].GetIndex() < first {
		ents = ents[first-ents[0].GetIndex():]
	}
	start, end := ents[0].GetIndex(), ents[len(ents)-1].GetIndex()
	switch {
	case start > last+1:
		return nil, fmt.Errorf("%w: append: entries start at %d, after a gap following the last entry %d", ErrInvalid, start, last)
	case start <= applied:
		return nil, fmt.Errorf("%w: append: entries starting at %d would replace applied entries (applied index %d)", ErrInvalid, start, applied)
	}
	prevTerm := logStart.term
	if start-1 > logStart.index { // the log below start is the stored one
		t, err := s.term(start - 1)
		if err != nil {
			return nil, err
		}
		prevTerm = t
	}
	if ents[0].GetTerm() < prevTerm {
		return nil, fmt.Errorf("%w: append: entry %d has term %d, below the term %d of the entry before it",
			ErrInvalid, start, ents[0].GetTerm(), prevTerm)
	}
	if end < last {
		_ = b.DeleteRange(entryKey(end+1), entryKey(last+1), nil)
	}
	for _, e := range ents {
		_ = b.Set(entryKey(e.GetIndex()), encodeEntry(e), nil)
	}
	return ents, nil
}

// ApplySnapshot installs snap as Append(nil, nil, snap) does; it exists for
// callers used to raft.MemoryStorage. A snapshot with index 0 only sets the
// ConfState of an empty store (bootstrap), as MemoryStorage allows.
func (s *Store) ApplySnapshot(snap *pb.Snapshot) error {
	if snap.GetMetadata().GetIndex() == 0 {
		return s.bootstrapConfState(snap.GetMetadata().GetConfState())
	}
	return s.Append(nil, nil, snap)
}

// bootstrapConfState stores cs as the ConfState of a store that has
// neither entries nor an applied index.
func (s *Store) bootstrapConfState(cs *pb.ConfState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkWritable(); err != nil {
		return err
	}
	if s.applied.index != 0 || s.last != 0 {
		return fmt.Errorf("monstore: apply snapshot at index 0 to a non-empty store: %w", raft.ErrSnapOutOfDate)
	}
	as := appliedState{conf: cloneConfState(cs)}
	b := s.db.NewBatch()
	_ = b.Set(keyApplied, encodeApplied(as), nil)
	if err := s.commitBatch(b, pebble.Sync); err != nil {
		return err
	}
	s.applied = as
	s.snap = nil
	return nil
}

// Compact discards the log entries up to and including index, which must
// be applied (at most AppliedIndex()) and in the log: a follower that needs
// them gets a snapshot instead. FirstIndex becomes index+1 and Term(index)
// stays available. Compacting at or below FirstIndex()-1 returns
// raft.ErrCompacted. The write is not synced: losing it in a crash only
// keeps entries longer.
func (s *Store) Compact(index uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkWritable(); err != nil {
		return err
	}
	switch {
	case index <= s.logStart.index:
		return fmt.Errorf("monstore: compact through %d, log starts after %d: %w", index, s.logStart.index, raft.ErrCompacted)
	case index > s.last:
		return fmt.Errorf("monstore: compact through %d beyond the last entry %d: %w", index, s.last, raft.ErrUnavailable)
	case index > s.applied.index:
		return fmt.Errorf("%w: compact through %d beyond the applied index %d", ErrInvalid, index, s.applied.index)
	}
	term, err := s.term(index)
	if err != nil {
		return err
	}
	ls := logState{index: index, term: term}
	b := s.db.NewBatch()
	_ = b.DeleteRange(entryKey(s.logStart.index+1), entryKey(index+1), nil)
	_ = b.Set(keyLogState, encodeLogState(ls), nil)
	if err := s.commitBatch(b, pebble.NoSync); err != nil {
		return err
	}
	s.logStart = ls
	s.cache.dropThrough(index)
	return nil
}
