package kv

import (
	"context"
	"fmt"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv/plan"
	"github.com/cuttlestore/cuttle/rados"
)

// split divides the full leaf into two (docs/KV.md, "Split"):
//
//  1. mark its index entry with the split (fails with EBUSY if another
//     operation marked it, EXDEV if the cache is stale);
//  2. freeze the leaf, so no write changes it while it is copied;
//  3. read its entries and write them into two new leaves (plan.Split);
//  4. swap the marked index entry for the new leaves' entries;
//  5. remove the old leaf.
//
// A failure at step 2 unmarks the entry. After it, the split can only go
// forward: a client that dies leaves the mark and the frozen leaf to the
// cleanup of a later session (docs/KV.md, "Not yet").
func (s *Store) split(ctx context.Context, leaf plan.Entry) error {
	id := s.newName("split")
	left, right := s.newName("leaf"), s.newName("leaf")
	mark := clskv.MarkRequest{High: leaf.Bounds.High, Leaf: leaf.Leaf, Mark: clskv.Mark{
		ID: id, Kind: clskv.MarkSplit, Old: leaf.Leaf, New: []clskv.NewLeaf{{Name: left}, {Name: right}}}}
	index := indexName(s.name)
	if _, err := s.io.Exec(ctx, index, clskv.Class, "mark", mark.Encode()); err != nil {
		return fmt.Errorf("kv: split %s: mark: %w", leaf.Leaf, err)
	}
	if err := s.step(stepMarked); err != nil {
		return err
	}
	out, err := s.freeze(ctx, leaf.Leaf, id)
	if err != nil {
		s.undo(ctx, id, leaf.Bounds.High)
		return fmt.Errorf("kv: split %s: freeze: %w", leaf.Leaf, err)
	}
	old, err := clskv.DecodeLeaf(out)
	if err != nil {
		return fmt.Errorf("kv: split: leaf %s: %w: %v", leaf.Leaf, ErrCorrupt, err)
	}
	if err := s.step(stepFrozen); err != nil {
		return err
	}
	pairs, err := s.readAll(ctx, leaf.Leaf)
	if err != nil {
		return fmt.Errorf("kv: split %s: read: %w", leaf.Leaf, err)
	}
	if uint64(len(pairs)) < 2*uint64(s.k) {
		// Removes shrank the leaf between the put that found it full and
		// the freeze: halves would hold under k. Undo; the put retries.
		s.undo(ctx, id, leaf.Bounds.High, leaf.Leaf)
		return fmt.Errorf("kv: split %s: it holds %d entries now, under 2k: %w", leaf.Leaf, len(pairs), errStale)
	}
	keys := make([]string, len(pairs))
	for i, p := range pairs {
		keys[i] = p.Key
	}
	h, err := plan.Split(old.Bounds, keys)
	if err != nil {
		return fmt.Errorf("kv: split: leaf %s: %w: %v", leaf.Leaf, ErrCorrupt, err)
	}
	if err := s.step(stepRead); err != nil {
		return err
	}
	if err := s.writeLeaf(ctx, left, h.Left, pairs[:h.At]); err != nil {
		return fmt.Errorf("kv: split %s: write %s: %w", leaf.Leaf, left, err)
	}
	if err := s.step(stepLeft); err != nil {
		return err
	}
	if err := s.writeLeaf(ctx, right, h.Right, pairs[h.At:]); err != nil {
		return fmt.Errorf("kv: split %s: write %s: %w", leaf.Leaf, right, err)
	}
	if err := s.step(stepRight); err != nil {
		return err
	}
	sw := clskv.SwapRequest{ID: id, Remove: []string{old.Bounds.High},
		Add: []clskv.IndexEntry{{High: h.Left.High, Leaf: left}, {High: h.Right.High, Leaf: right}}}
	if _, err := s.io.Exec(ctx, index, clskv.Class, "swap", sw.Encode()); err != nil {
		return fmt.Errorf("kv: split %s: swap: %w", leaf.Leaf, err)
	}
	if err := s.step(stepSwapped); err != nil {
		return err
	}
	s.announce(ctx, notice{Old: []clskv.IndexEntry{{High: old.Bounds.High, Leaf: leaf.Leaf}}, New: sw.Add})
	if err := s.io.Delete(ctx, leaf.Leaf); err != nil {
		// The index no longer names it: an orphan, not a wrong answer.
		s.log.Warn("kv: split: remove the old leaf", "leaf", leaf.Leaf, "err", err)
	}
	s.log.Debug("kv: split", "leaf", leaf.Leaf, "left", left, "right", right, "at", h.Right.Low, "entries", len(pairs))
	return s.refresh(ctx)
}

// The points of a split a test may stop it at (Store.afterStep).
const (
	stepMarked  = "marked"
	stepFrozen  = "frozen"
	stepRead    = "read"
	stepLeft    = "left written"
	stepRight   = "right written"
	stepSwapped = "swapped"
)

// step calls the test's hook after a step of an operation: an error
// stops the operation there, as if its client died.
func (s *Store) step(name string) error {
	if s.afterStep == nil {
		return nil
	}
	return s.afterStep(name)
}

// freeze freezes leaf by operation id (kv.freeze) and returns its
// kv.leaf attribute as the method answered it. An answer without output
// is a resent request the OSD recognised as done (after a lost reply:
// a broken connection, a new primary), which keeps the result but not
// the output; freezing again by the same id is a no-op that answers
// the attribute, so it asks once more.
func (s *Store) freeze(ctx context.Context, leaf, id string) ([]byte, error) {
	req := clskv.FreezeRequest{ID: id}.Encode()
	for range 3 {
		out, err := s.io.Exec(ctx, leaf, clskv.Class, "freeze", req)
		if err != nil || len(out) > 0 {
			return out, err
		}
		s.log.Debug("kv: freeze answered without output (a resent request): asking again", "leaf", leaf, "op", id)
	}
	return s.io.Exec(ctx, leaf, clskv.Class, "freeze", req)
}

// readAll returns a leaf's entries in key order.
func (s *Store) readAll(ctx context.Context, leaf string) ([]clskv.Pair, error) {
	var pairs []clskv.Pair
	after := ""
	for {
		kvs, more, err := s.io.GetOmapValues(ctx, leaf, after, "", 1024)
		if err != nil {
			return nil, err
		}
		for _, p := range kvs {
			pairs = append(pairs, clskv.Pair{Key: p.Key, Value: p.Value})
			after = p.Key
		}
		if !more || len(kvs) == 0 {
			return pairs, nil
		}
	}
}

// writeLeaf creates leaf name with bounds b holding pairs; it fails if
// the object exists.
func (s *Store) writeLeaf(ctx context.Context, name string, b clskv.Bounds, pairs []clskv.Pair) error {
	w := rados.NewWriteOp()
	w.Create(true)
	w.SetXattr(clskv.LeafAttr, clskv.Leaf{Bounds: b, K: s.k, Count: uint64(len(pairs))}.Encode())
	if len(pairs) > 0 {
		m := make(map[string][]byte, len(pairs))
		for _, p := range pairs {
			m[p.Key] = p.Value
		}
		w.SetOmap(m)
	}
	return s.io.OperateWrite(ctx, name, w)
}
