package kv

import (
	"context"
	"errors"
	"fmt"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// Stats describe a store as read now.
type Stats struct {
	K       uint32
	Depth   int // levels: the index and the leaves
	Leaves  int
	Entries uint64   // the leaves' counts, summed
	Counts  []uint64 // each leaf's count, in key order
	Pending int      // index entries carrying a mark (an operation under way or abandoned)
}

// Stat re-reads the index and every leaf's kv.leaf attribute.
func (s *Store) Stat(ctx context.Context) (Stats, error) {
	marks, err := s.readMarks(ctx)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{K: s.k, Depth: 2, Leaves: len(s.Leaves()), Pending: marks}
	for _, e := range s.Leaves() {
		l, err := s.leafAttr(ctx, e.Leaf)
		if err != nil {
			return Stats{}, err
		}
		st.Counts = append(st.Counts, l.Count)
		st.Entries += l.Count
	}
	return st, nil
}

// readMarks refreshes the cache and counts the index entries that carry
// a mark.
func (s *Store) readMarks(ctx context.Context) (int, error) {
	if err := s.refresh(ctx); err != nil {
		return 0, err
	}
	n := 0
	after := ""
	for {
		kvs, more, err := s.io.GetOmapValues(ctx, indexName(s.name), after, "", 1024)
		if err != nil {
			return 0, fmt.Errorf("kv: store %s: read index: %w", s.name, err)
		}
		for _, p := range kvs {
			x, err := clskv.DecodeEntry(p.Value)
			if err != nil {
				return 0, fmt.Errorf("kv: object %s: entry %q: %w: %v", indexName(s.name), p.Key, ErrCorrupt, err)
			}
			if x.Mark != nil {
				n++
			}
			after = p.Key
		}
		if !more || len(kvs) == 0 {
			return n, nil
		}
	}
}

func (s *Store) leafAttr(ctx context.Context, leaf string) (clskv.Leaf, error) {
	attr, err := s.io.GetXattr(ctx, leaf, clskv.LeafAttr)
	if errors.Is(err, rados.ErrNotFound) || errors.Is(err, rados.ErrNoAttr) {
		return clskv.Leaf{}, fmt.Errorf("kv: leaf %s named by the index: %w (%v)", leaf, ErrCorrupt, err)
	} else if err != nil {
		return clskv.Leaf{}, fmt.Errorf("kv: leaf %s: %w", leaf, err)
	}
	l, err := clskv.DecodeLeaf(attr)
	if err != nil {
		return clskv.Leaf{}, fmt.Errorf("kv: leaf %s: %w: %v", leaf, ErrCorrupt, err)
	}
	return l, nil
}

// Problem is one thing Check found wrong with a store.
type Problem struct {
	Object string
	What   string
}

// Check verifies the whole store: the index decodes and its leaves'
// ranges are adjacent and cover every key; each leaf's kv.leaf attribute
// has the bounds the index gives it and the store's k, is not frozen,
// and counts exactly the entries its omap holds, all within its bounds
// and between k and 2k unless it is the only leaf; no index entry is
// marked. It reads every entry of the store. Marks and freezes may be an
// operation under way: run it on a quiet store, or again. It returns the
// problems found and the entries counted; err is a failure to read.
func (s *Store) Check(ctx context.Context) (problems []Problem, entries uint64, err error) {
	marks, err := s.readMarks(ctx)
	if errors.Is(err, ErrCorrupt) {
		return []Problem{{Object: indexName(s.name), What: err.Error()}}, 0, nil
	} else if err != nil {
		return nil, 0, err
	}
	if marks > 0 {
		problems = append(problems, Problem{indexName(s.name), fmt.Sprintf("%d entries carry a mark (an operation under way, or abandoned: a client meeting it cleans it up)", marks)})
	}
	leaves := s.Leaves()
	for _, e := range leaves {
		bad := func(format string, args ...any) {
			problems = append(problems, Problem{e.Leaf, fmt.Sprintf(format, args...)})
		}
		l, err := s.leafAttr(ctx, e.Leaf)
		if errors.Is(err, ErrCorrupt) {
			bad("%v", err)
			continue
		} else if err != nil {
			return nil, 0, err
		}
		if l.Bounds != e.Bounds {
			bad("bounds %v, the index says %v", l.Bounds, e.Bounds)
		}
		if l.K != s.k {
			bad("k %d, the store's is %d", l.K, s.k)
		}
		if l.Frozen != "" {
			bad("frozen by %s", l.Frozen)
		}
		pairs, err := s.readAll(ctx, e.Leaf, "")
		if err != nil {
			return nil, 0, fmt.Errorf("kv: check: read %s: %w", e.Leaf, err)
		}
		if uint64(len(pairs)) != l.Count {
			bad("holds %d entries, counts %d", len(pairs), l.Count)
		}
		if len(leaves) > 1 && (len(pairs) < int(s.k) || len(pairs) > 2*int(s.k)) {
			bad("holds %d entries, outside k = %d to 2k", len(pairs), s.k)
		}
		for _, p := range pairs {
			if !e.Bounds.Contains(p.Key) {
				bad("holds key %q outside its range %v", p.Key, e.Bounds)
				break
			}
		}
		entries += uint64(len(pairs))
	}
	return problems, entries, nil
}
