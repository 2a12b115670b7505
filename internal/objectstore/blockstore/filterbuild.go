package blockstore

import (
	"errors"
	"fmt"
	"hash/maphash"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
)

// The store builds its key filter in the background: once after Open,
// and again whenever more records were created than the filter was
// sized for (a filter never forgets a removed key, so a rebuild also
// sheds those). Until the first build finishes every lookup goes to
// Pebble, so Open does not wait for a scan of every record.
//
// A build must end with every record key in Pebble in the new filter.
// It counts the records to size the filter, then, under prepMu, makes
// it the second filter that every later preparation adds its records
// to, and notes the last transaction prepared before. Once that one has
// applied, every record prepared earlier is in Pebble, so a scan from
// then on sees it; every record prepared later went into the filter.
// The filter replaces the old one under prepMu.

// minFilterKeys is the smallest capacity a filter is built with:
// 80 KiB.
const minFilterKeys = 1 << 16

// errFilterStopped ends a build when the store closes.
var errFilterStopped = errors.New("blockstore: closing")

// noteRecord adds the record key that a transaction writes to the
// filters (prepMu held); created tells whether the record is new. It
// starts a rebuild when the filter is full.
func (s *Store) noteRecord(key string, created bool) {
	h := keyHash(s.keySeed, key)
	cur := s.filter.Load()
	for _, f := range [...]*keyFilter{cur, s.filterNext} {
		if f == nil {
			continue
		}
		f.add(h)
		if created {
			f.created.Add(1)
		}
	}
	if cur != nil && cur.full() {
		s.startFilterBuildLocked()
	}
}

// mayHaveRecord reports whether key may have a record in Pebble: false
// only if the filter rules it out.
func (s *Store) mayHaveRecord(key string) bool {
	f := s.filter.Load()
	if f == nil || f.mayContain(keyHash(s.keySeed, key)) {
		return true
	}
	s.statFilterSkips.Add(1)
	return false
}

// startFilterBuildLocked starts a build unless one is running, one has
// failed or the store is closing (prepMu held).
func (s *Store) startFilterBuildLocked() {
	if s.filterBuilding || s.filterFailed || s.closed || s.opts.testNoKeyFilter {
		return
	}
	s.filterBuilding = true
	s.filterBuilds.Add(1)
	go s.buildFilter()
}

func (s *Store) buildFilter() {
	defer s.filterBuilds.Done()
	f, err := s.fillFilter()
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	s.filterBuilding, s.filterNext = false, nil
	switch {
	case errors.Is(err, errFilterStopped):
	case err != nil:
		// Drop the old filter too: it stays correct, but full, its
		// false positives would only grow. Lookups go to Pebble until
		// the store is opened again; a read error here is likely to
		// fail a transaction soon anyway.
		s.filterFailed = true
		s.filter.Store(nil)
		s.log.Warn("blockstore: key filter build failed; absent records are looked up in Pebble", "err", err)
	default:
		s.filter.Store(f)
		s.statFilterBuilds.Add(1)
	}
}

// fillFilter sizes a filter, makes it the second filter and fills it
// with the record keys in Pebble.
func (s *Store) fillFilter() (*keyFilter, error) {
	n, err := s.scanRecordKeys(func([]byte) {})
	if err != nil {
		return nil, err
	}
	s.prepMu.Lock()
	if s.closed {
		s.prepMu.Unlock()
		return nil, errFilterStopped
	}
	least := int64(minFilterKeys)
	if s.opts.testFilterMinKeys > 0 {
		least = s.opts.testFilterMinKeys
	}
	f := newKeyFilter(max(2*n, least))
	s.filterNext = f
	last := s.lastComp
	s.prepMu.Unlock()
	if last != nil {
		select {
		case <-last.Applied():
		case <-s.pipe.done:
			return nil, errFilterStopped
		}
	}
	n, err = s.scanRecordKeys(func(key []byte) { f.add(maphash.Bytes(s.keySeed, key)) })
	if err != nil {
		return nil, err
	}
	// Records created since the switch and applied before the scan are
	// counted twice: the next build comes a little early.
	f.created.Add(n)
	return f, nil
}

// scanRecordKeys calls fn with every object record key in Pebble and
// returns how many there were. It stops with errFilterStopped once the
// store is closing.
func (s *Store) scanRecordKeys(fn func(key []byte)) (int64, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{format.PrefixObject}, UpperBound: []byte{format.PrefixObject + 1}})
	if err != nil {
		return 0, fmt.Errorf("scan records: %w", err)
	}
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		if n%4096 == 0 && isClosed(s.pipe.done) {
			_ = it.Close()
			return 0, errFilterStopped
		}
		fn(it.Key())
		n++
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("scan records: %w", err)
	}
	return n, nil
}
