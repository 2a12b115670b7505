package blockstore

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

// split moves the objects of from that a split with bits and rem selects
// to to: each is a move of its record (the node, its data and omap stay
// where they are), so a split costs a key rewrite per object.
func (ts *txnState) split(from, to objectstore.CollectionID, bits uint8, rem uint32) error {
	if !ts.collExists(from) {
		return fmt.Errorf("%w: %v", objectstore.ErrCollectionNotFound, from)
	}
	if !ts.collExists(to) {
		return fmt.Errorf("%w: %v", objectstore.ErrCollectionNotFound, to)
	}
	objs, err := ts.collObjects(from)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if !objectstore.SplitMatches(from, o, bits, rem) {
			continue
		}
		if err := ts.move(from, o, to, o); err != nil {
			return err
		}
	}
	return nil
}

// collObjects returns the objects of c as this transaction sees them:
// Pebble's records under the overlays of the transactions queued before
// it and its own changes (in no particular order).
func (ts *txnState) collObjects(c objectstore.CollectionID) ([]objid.ID, error) {
	prefix := format.CollObjectPrefix(c)
	seen := map[string]bool{}
	var out []objid.ID
	for _, e := range ts.records.list {
		if e.rs.coll != c {
			continue
		}
		seen[e.key] = true
		if e.rs.rec != nil {
			out = append(out, e.rs.oid)
		}
	}
	add := func(key string) error {
		seen[key] = true
		_, o, err := format.DecodeObjectKey([]byte(key))
		if err != nil {
			return err
		}
		out = append(out, o)
		return nil
	}
	for key, ov := range ts.s.overlay {
		if seen[key] || len(key) <= len(prefix) || key[:len(prefix)] != string(prefix) {
			continue
		}
		seen[key] = true
		if ov.rec != nil {
			if err := add(key); err != nil {
				return nil, err
			}
		}
	}
	it, err := ts.s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: format.PrefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if key := string(it.Key()); !seen[key] {
			if err := add(key); err != nil {
				return nil, err
			}
		}
	}
	return out, it.Error()
}
