package monstore

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Map history: a service that keeps a map by epoch (the OSD map, the MDS
// map) stores, under its own service name, as Ceph's paxos services do:
//
//	full/<epoch>      the full map at epoch (optional)
//	inc/<epoch>       the incremental from epoch-1 to epoch (optional)
//	first_committed   envelope{epoch uvarint}: the oldest epoch kept
//	last_committed    envelope{epoch uvarint}: the newest epoch
//
// <epoch> is 20 decimal digits, zero-padded, so keys sort by epoch and read
// well in a dump. Epochs are committed in order without gaps; Trim drops
// the oldest to bound the history.

const (
	fullPrefix        = "full/"
	incPrefix         = "inc/"
	keyFirstCommitted = "first_committed"
	keyLastCommitted  = "last_committed"
)

func epochKey(prefix string, epoch uint64) []byte {
	return fmt.Appendf(nil, "%s%020d", prefix, epoch)
}

// epochRange is the history of a service: epochs [first, last], none if
// last is 0.
type epochRange struct{ first, last uint64 }

func encodeEpoch(epoch uint64) []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(epoch)
	e.End(m)
	return e.Data()
}

func decodeEpoch(service, key string, v []byte) (uint64, error) {
	d := encoding.NewDecoder(v)
	d.Begin(1)
	epoch := d.Uvarint()
	d.End()
	if err := d.Finish(); err != nil {
		return 0, fmt.Errorf("%w: service %q key %q: %w", ErrCorrupt, service, key, err)
	}
	return epoch, nil
}

// Epochs returns the oldest and newest epoch of service's history, or 0, 0
// if it has none.
func (s *Store) Epochs(service string) (first, last uint64, err error) {
	r, err := s.epochs(service)
	return r.first, r.last, err
}

func (s *Store) epochs(service string) (epochRange, error) {
	var r epochRange
	for _, f := range []struct {
		key string
		dst *uint64
	}{{keyFirstCommitted, &r.first}, {keyLastCommitted, &r.last}} {
		v, err := s.Get(service, []byte(f.key))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return epochRange{}, err
		}
		if *f.dst, err = decodeEpoch(service, f.key, v); err != nil {
			return epochRange{}, err
		}
	}
	if (r.first == 0) != (r.last == 0) || r.first > r.last {
		return epochRange{}, fmt.Errorf("%w: service %q history: first committed %d, last committed %d", ErrCorrupt, service, r.first, r.last)
	}
	return r, nil
}

// Full returns the full map of service at epoch, or ErrNotFound.
func (s *Store) Full(service string, epoch uint64) ([]byte, error) {
	return s.Get(service, epochKey(fullPrefix, epoch))
}

// Inc returns the incremental of service that leads to epoch, or
// ErrNotFound.
func (s *Store) Inc(service string, epoch uint64) ([]byte, error) {
	return s.Get(service, epochKey(incPrefix, epoch))
}

// batchEpochs returns the history of service as the batch will leave it.
func (b *Batch) batchEpochs(service string) (*epochRange, error) {
	if r, ok := b.epochs[service]; ok {
		return r, nil
	}
	r, err := b.s.epochs(service)
	if err != nil {
		return nil, err
	}
	if b.epochs == nil {
		b.epochs = make(map[string]*epochRange)
	}
	b.epochs[service] = &r
	return &r, nil
}

// PutEpoch adds epoch to service's history, with its incremental and its
// full map (either may be nil, not both). epoch must follow the last one;
// the first epoch of a history may be any epoch above 0.
func (b *Batch) PutEpoch(service string, epoch uint64, inc, full []byte) error {
	if b.err != nil {
		return b.err
	}
	if err := checkService(service); err != nil {
		return b.fail(err)
	}
	if inc == nil && full == nil {
		return b.fail(fmt.Errorf("%w: service %q epoch %d: neither an incremental nor a full map", ErrInvalid, service, epoch))
	}
	r, err := b.batchEpochs(service)
	if err != nil {
		return b.fail(err)
	}
	if epoch == 0 || (r.last != 0 && epoch != r.last+1) {
		return b.fail(fmt.Errorf("%w: service %q epoch %d does not follow the last epoch %d", ErrInvalid, service, epoch, r.last))
	}
	if inc != nil {
		b.Put(service, epochKey(incPrefix, epoch), inc)
	}
	if full != nil {
		b.Put(service, epochKey(fullPrefix, epoch), full)
	}
	if r.first == 0 {
		r.first = epoch
		b.Put(service, []byte(keyFirstCommitted), encodeEpoch(epoch))
	}
	r.last = epoch
	b.Put(service, []byte(keyLastCommitted), encodeEpoch(epoch))
	return b.err
}

// Trim drops the epochs of service below the given one, keeping at least
// the last epoch. Trimming below the first epoch does nothing.
func (b *Batch) Trim(service string, below uint64) error {
	if b.err != nil {
		return b.err
	}
	if err := checkService(service); err != nil {
		return b.fail(err)
	}
	r, err := b.batchEpochs(service)
	if err != nil {
		return b.fail(err)
	}
	below = min(below, r.last)
	if r.last == 0 || below <= r.first {
		return nil
	}
	for _, p := range []string{fullPrefix, incPrefix} {
		lo, hi := serviceKey(service, epochKey(p, r.first)), serviceKey(service, epochKey(p, below))
		_ = b.b.DeleteRange(lo, hi, nil)
	}
	r.first = below
	b.Put(service, []byte(keyFirstCommitted), encodeEpoch(below))
	return b.err
}
