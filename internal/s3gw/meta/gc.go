package meta

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
)

func gcKey(id uint64) string { return fmt.Sprintf("%016x", id) }

// AddGarbage records data that may be left behind: written before its
// index entry exists (so a crash leaves it named here), or replaced.
func (s *Store) AddGarbage(ctx context.Context, gs ...Garbage) error {
	m := make(map[string][]byte, len(gs))
	for _, g := range gs {
		if g.Since.IsZero() {
			g.Since = s.Now()
		}
		m[gcKey(g.ID)] = g.Encode()
	}
	if err := s.io.SetOmap(ctx, gcObj, m); err != nil {
		return fmt.Errorf("gc list: %w", err)
	}
	return nil
}

// DropGarbage forgets records: their data is in use, or removed.
func (s *Store) DropGarbage(ctx context.Context, ids ...uint64) error {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = gcKey(id)
	}
	if err := s.io.RmOmapKeys(ctx, gcObj, keys...); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("gc list: %w", err)
	}
	return nil
}

// Garbage returns up to max records after the id after.
func (s *Store) Garbage(ctx context.Context, after uint64, max int) ([]Garbage, bool, error) {
	start := ""
	if after != 0 {
		start = gcKey(after)
	}
	kvs, more, err := s.io.GetOmapValues(ctx, gcObj, start, "", uint64(max))
	if errors.Is(err, rados.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("gc list: %w", err)
	}
	out := make([]Garbage, 0, len(kvs))
	for _, p := range kvs {
		g, err := DecodeGarbage(p.Value)
		if err != nil {
			return nil, false, err
		}
		out = append(out, g)
	}
	return out, more, nil
}

// SwapGarbage adds records and drops others in one atomic write: an
// overwrite's old data becomes garbage as its new data stops being.
func (s *Store) SwapGarbage(ctx context.Context, add []Garbage, drop []uint64) error {
	w := rados.NewWriteOp()
	if len(add) > 0 {
		m := make(map[string][]byte, len(add))
		for _, g := range add {
			if g.Since.IsZero() {
				g.Since = s.Now()
			}
			m[gcKey(g.ID)] = g.Encode()
		}
		w.SetOmap(m)
	}
	if len(drop) > 0 {
		keys := make([]string, len(drop))
		for i, id := range drop {
			keys[i] = gcKey(id)
		}
		w.RmOmapKeys(keys)
	}
	if err := s.io.OperateWrite(ctx, gcObj, w); err != nil {
		return fmt.Errorf("gc list: %w", err)
	}
	return nil
}

// IndexByID opens the index of the bucket whose id is id, without
// creating it: ok is false when it does not exist (the bucket is gone).
func (s *Store) IndexByID(ctx context.Context, id string) (ix *Index, ok bool, err error) {
	s.mu.Lock()
	ix = s.indexes[id]
	s.mu.Unlock()
	if ix != nil {
		return ix, true, nil
	}
	st, err := kv.Open(ctx, s.io, indexName(id), s.kvc)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("index of bucket id %s: %w", id, err)
	}
	return &Index{kv: st}, true, nil
}
