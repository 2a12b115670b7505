package monstore

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	pb "go.etcd.io/raft/v3/raftpb"
)

// A Batch collects changes to the service key space (and possibly a new
// ConfState) that the state machine makes while applying entries; Commit
// writes them together with the new applied index. Methods record the
// first error and return it; Commit returns it too, writing nothing. A
// Batch is not safe for concurrent use, and only one should be in use at a
// time (the history helpers read the store's epochs when a service is
// first touched).
type Batch struct {
	s      *Store
	b      *pebble.Batch
	conf   *pb.ConfState
	epochs map[string]*epochRange // history state of services touched
	err    error
}

// NewBatch returns an empty Batch.
func (s *Store) NewBatch() *Batch {
	return &Batch{s: s, b: s.db.NewBatch()}
}

// fail records err as the batch's error unless one is recorded.
func (b *Batch) fail(err error) error {
	if b.err == nil {
		b.err = err
	}
	return b.err
}

// Err returns the first error met by the batch's methods.
func (b *Batch) Err() error { return b.err }

// Put sets key of service to value.
func (b *Batch) Put(service string, key, value []byte) error {
	if b.err != nil {
		return b.err
	}
	if err := errors.Join(checkService(service), checkKey(key)); err != nil {
		return b.fail(err)
	}
	if len(value) > MaxValue {
		return b.fail(fmt.Errorf("%w: value of %d bytes exceeds %d", ErrInvalid, len(value), MaxValue))
	}
	k := serviceKey(service, key)
	_ = b.b.Set(k, seal(k, value), nil)
	return nil
}

// Delete removes key of service, if present.
func (b *Batch) Delete(service string, key []byte) error {
	if b.err != nil {
		return b.err
	}
	if err := errors.Join(checkService(service), checkKey(key)); err != nil {
		return b.fail(err)
	}
	_ = b.b.Delete(serviceKey(service, key), nil)
	return nil
}

// DeletePrefix removes every key of service that starts with prefix.
func (b *Batch) DeletePrefix(service string, prefix []byte) error {
	if b.err != nil {
		return b.err
	}
	if err := errors.Join(checkService(service), checkKey(prefix)); err != nil {
		return b.fail(err)
	}
	lo, hi := serviceBounds(service, prefix)
	_ = b.b.DeleteRange(lo, hi, nil)
	return nil
}

// SetConfState records the ConfState that raft's ApplyConfChange returned
// for an entry of this batch; InitialState returns it once committed.
func (b *Batch) SetConfState(cs *pb.ConfState) {
	b.conf = cloneConfState(cs)
}

// Close discards a batch that will not be committed.
func (b *Batch) Close() {
	if b.b != nil {
		_ = b.b.Close()
		b.b = nil
	}
	b.fail(fmt.Errorf("%w: batch is closed", ErrInvalid))
}

// Commit durably writes the changes of b (nil: none) and the applied
// index, atomically: after a crash the store holds either the previous
// applied index and key space or these. The applied index must advance and
// name an entry in the log; entries up to it must not be applied again.
// Commit syncs before returning, and closes b.
func (s *Store) Commit(applied uint64, b *Batch) error {
	if b != nil {
		defer b.Close()
		if b.err != nil {
			return b.err
		}
		if b.s != s {
			return fmt.Errorf("%w: batch of another store", ErrInvalid)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkWritable(); err != nil {
		return err
	}
	if applied <= s.applied.index || applied > s.last {
		return fmt.Errorf("%w: commit applied index %d: must be above %d and at most the last entry %d",
			ErrInvalid, applied, s.applied.index, s.last)
	}
	as := appliedState{index: applied, conf: s.applied.conf}
	var wb *pebble.Batch
	if b != nil {
		wb, b.b = b.b, nil
		if b.conf != nil {
			as.conf = b.conf
		}
	} else {
		wb = s.db.NewBatch()
	}
	_ = wb.Set(keyApplied, encodeApplied(as), nil)
	if err := s.commitBatch(wb, pebble.Sync); err != nil {
		return err
	}
	s.applied = as
	return nil
}

// AppliedIndex returns the index of the last applied entry, to pass as
// raft.Config.Applied on restart.
func (s *Store) AppliedIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.applied.index, nil
}

// Decode reads key in service and decodes it, or returns empty() if the
// key was never written: how a service loads a state kept under one key.
func Decode[T any](s *Store, service string, key []byte, decode func([]byte) (T, error), empty func() T) (T, error) {
	v, err := s.Get(service, key)
	if errors.Is(err, ErrNotFound) {
		return empty(), nil
	}
	if err != nil {
		return empty(), err
	}
	return decode(v)
}

// Get returns a copy of the value of key in service, or ErrNotFound.
func (s *Store) Get(service string, key []byte) ([]byte, error) {
	if err := errors.Join(checkService(service), checkKey(key)); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	k := serviceKey(service, key)
	v, err := s.get(k)
	if err != nil {
		return nil, err
	}
	return unseal(k, v)
}

// Scan calls fn, in key order, for every key of service that starts with
// prefix, at a consistent point in time; it stops at fn's first error and
// returns it. key and value are valid only during the call. Scan does not
// block writers while fn runs.
func (s *Store) Scan(service string, prefix []byte, fn func(key, value []byte) error) (err error) {
	if err := errors.Join(checkService(service), checkKey(prefix)); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	lo, hi := serviceBounds(service, prefix)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	skip := len(serviceKey(service, nil))
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		body, err := unseal(it.Key(), v)
		if err != nil {
			return err
		}
		if err := fn(it.Key()[skip:], body); err != nil {
			return err
		}
	}
	return it.Error()
}
