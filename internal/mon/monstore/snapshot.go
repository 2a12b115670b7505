package monstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/encoding"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// A snapshot payload (raft Snapshot.Data) is
//
//	envelope v1 {
//	    index   u64       applied index the key space is at (= metadata index)
//	    count   uvarint   number of records
//	    records           sorted by (service, key), no duplicates:
//	        service string (1..MaxServiceName bytes, no NUL)
//	        key     bytes  (..MaxKey)
//	        value   bytes  (..MaxValue)
//	}
//	crc32c u32            of the envelope bytes
//
// The records are the service key space verbatim, values without the
// per-value checksum seal adds on disk (the payload checksum covers them).

// snapshotRecord is one service key and value of a snapshot payload.
type snapshotRecord struct {
	service string
	key     []byte
	value   []byte
}

// encodeSnapshotData encodes a payload. recs must be sorted by (service,
// key).
func encodeSnapshotData(index uint64, recs []snapshotRecord) []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uint64(index)
	e.Uvarint(uint64(len(recs)))
	for _, r := range recs {
		e.String(r.service)
		e.Bytes(r.key)
		e.Bytes(r.value)
	}
	e.End(m)
	return binary.LittleEndian.AppendUint32(e.Data(), crc32.Checksum(e.Data(), crcTable))
}

// decodeSnapshotData decodes and validates a payload of at most maxBytes.
func decodeSnapshotData(data []byte, maxBytes int64) (uint64, []snapshotRecord, error) {
	if int64(len(data)) > maxBytes {
		return 0, nil, fmt.Errorf("%w: snapshot payload of %d bytes exceeds the limit of %d", ErrCorrupt, len(data), maxBytes)
	}
	if len(data) < 4 {
		return 0, nil, fmt.Errorf("%w: snapshot payload of %d bytes is too short", ErrCorrupt, len(data))
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, crcTable), binary.LittleEndian.Uint32(data[len(data)-4:]); got != want {
		return 0, nil, fmt.Errorf("%w: snapshot payload checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	d := encoding.NewDecoder(body)
	d.Begin(1)
	index := d.Uint64()
	// A record takes at least 4 bytes: a service length and byte, and the
	// key and value lengths.
	recs := make([]snapshotRecord, d.Count(4))
	for i := range recs {
		r := &recs[i]
		r.service = d.String(MaxServiceName)
		r.key = d.Bytes(MaxKey)
		r.value = d.Bytes(MaxValue)
		if d.Err() != nil {
			break
		}
		if err := checkService(r.service); err != nil {
			d.Fail(fmt.Errorf("%w: record %d: %w", encoding.ErrCorrupt, i, err))
		}
		if i > 0 && compareRecords(&recs[i-1], r) >= 0 {
			d.Fail(fmt.Errorf("%w: record %d (%q %q) out of order", encoding.ErrCorrupt, i, r.service, r.key))
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return 0, nil, fmt.Errorf("%w: snapshot payload: %w", ErrCorrupt, err)
	}
	return index, recs, nil
}

// compareRecords orders records as their store keys sort.
func compareRecords(a, b *snapshotRecord) int {
	return bytes.Compare(serviceKey(a.service, a.key), serviceKey(b.service, b.key))
}

// stageSnapshot checks snap against the store and adds to b the writes that
// install it: an empty log starting after it, the service key space of its
// payload, and the applied state at its index. Call with mu held.
func (s *Store) stageSnapshot(b *pebble.Batch, snap *pb.Snapshot) error {
	md := snap.GetMetadata()
	if md.GetIndex() <= s.applied.index {
		return fmt.Errorf("monstore: snapshot at index %d, applied index is %d: %w", md.GetIndex(), s.applied.index, raft.ErrSnapOutOfDate)
	}
	index, recs, err := decodeSnapshotData(snap.GetData(), s.opts.MaxSnapshotBytes)
	if err != nil {
		return fmt.Errorf("monstore: install snapshot at index %d: %w", md.GetIndex(), err)
	}
	if index != md.GetIndex() {
		return fmt.Errorf("%w: snapshot payload is at index %d, its metadata at %d", ErrCorrupt, index, md.GetIndex())
	}
	_ = b.DeleteRange(entryKey(0), entryKeyEnd, nil)
	_ = b.DeleteRange([]byte{prefixService}, []byte{prefixEnd}, nil)
	for _, r := range recs {
		k := serviceKey(r.service, r.key)
		_ = b.Set(k, seal(k, r.value), nil)
	}
	_ = b.Set(keyLogState, encodeLogState(logState{index: md.GetIndex(), term: md.GetTerm()}), nil)
	_ = b.Set(keyApplied, encodeApplied(appliedState{index: md.GetIndex(), conf: md.GetConfState()}), nil)
	return nil
}

// Snapshot returns a snapshot of the service key space at the applied
// index, with the term of that entry and the ConfState in force there; raft
// sends it to a follower that needs compacted entries. It is built on
// demand and kept until the applied index moves. Before anything is
// applied, or if building it fails (the error is logged), it returns
// raft.ErrSnapshotTemporarilyUnavailable, which makes raft retry later
// instead of panicking.
func (s *Store) Snapshot() (*pb.Snapshot, error) {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, ErrClosed
	}
	if s.applied.index == 0 {
		s.mu.RUnlock()
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	if s.snap != nil && s.snap.GetMetadata().GetIndex() == s.applied.index {
		snap := shareSnapshot(s.snap)
		s.mu.RUnlock()
		return snap, nil
	}
	index, conf := s.applied.index, cloneConfState(s.applied.conf)
	term, err := s.term(index)
	var it *pebble.Iterator
	if err == nil {
		// The iterator sees the key space as of now, which is at index:
		// writes to it hold mu exclusively.
		it, err = s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixService}, UpperBound: []byte{prefixEnd}})
	}
	s.mu.RUnlock()
	var data []byte
	if err == nil {
		data, err = s.snapshotData(it, index)
	}
	if err != nil {
		s.log.Error("monstore: cannot build a snapshot", "index", index, "err", err)
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	snap := &pb.Snapshot{
		Data:     data,
		Metadata: &pb.SnapshotMetadata{Index: new(index), Term: new(term), ConfState: conf},
	}
	s.mu.Lock()
	if !s.closed && s.applied.index == index {
		s.snap = snap
	}
	s.mu.Unlock()
	return shareSnapshot(snap), nil
}

// SnapshotData returns the payload Snapshot would carry: the service key
// space at the applied index, and that index.
func (s *Store) SnapshotData() (uint64, []byte, error) {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return 0, nil, ErrClosed
	}
	index := s.applied.index
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixService}, UpperBound: []byte{prefixEnd}})
	s.mu.RUnlock()
	if err != nil {
		return 0, nil, err
	}
	data, err := s.snapshotData(it, index)
	return index, data, err
}

// snapshotData encodes the records it iterates over into a payload at
// index, checking each value, and closes it.
func (s *Store) snapshotData(it *pebble.Iterator, index uint64) (data []byte, err error) {
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	var (
		recs []snapshotRecord
		size int64 = 64 // envelope, index, count, checksum
	)
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, err
		}
		k := it.Key()
		service, key, err := splitServiceKey(k)
		if err != nil {
			return nil, err
		}
		body, err := unseal(k, v)
		if err != nil {
			return nil, err
		}
		size += int64(len(service)+len(key)+len(body)) + 3*binary.MaxVarintLen32
		if size > s.opts.MaxSnapshotBytes {
			return nil, fmt.Errorf("monstore: snapshot at index %d exceeds MaxSnapshotBytes (%d)", index, s.opts.MaxSnapshotBytes)
		}
		recs = append(recs, snapshotRecord{service: service, key: bytes.Clone(key), value: bytes.Clone(body)})
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	return encodeSnapshotData(index, recs), nil
}

// shareSnapshot returns a new Snapshot sharing snap's immutable data.
func shareSnapshot(snap *pb.Snapshot) *pb.Snapshot {
	md := snap.GetMetadata()
	return &pb.Snapshot{
		Data: snap.Data,
		Metadata: &pb.SnapshotMetadata{
			Index:     new(md.GetIndex()),
			Term:      new(md.GetTerm()),
			ConfState: cloneConfState(md.GetConfState()),
		},
	}
}
