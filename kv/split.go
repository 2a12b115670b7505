package kv

import (
	"context"
	"fmt"
	"sync"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv/plan"
	"github.com/cuttlestore/cuttle/rados"
)

// split divides the full leaf into two (docs/KV.md, "Split"):
//
//  1. mark its index entry with the split (fails with EBUSY if another
//     operation marked it, EXDEV if the cache is stale);
//  2. freeze the leaf, so no write changes it while it is copied; the
//     freeze answers its entries;
//  3. write them into two new leaves (plan.Split), both at once;
//  4. swap the marked index entry for the new leaves' entries;
//  5. remove the old leaf, and apply the swap to the cache.
//
// A failure at step 2 unmarks the entry. After it, the split can only go
// forward, or is left to cleanup (docs/KV.md, "Cleanup").
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
	frozen, err := clskv.DecodeFreezeReply(out)
	if err != nil {
		return fmt.Errorf("kv: split: leaf %s: %w: %v", leaf.Leaf, ErrCorrupt, err)
	}
	old := frozen.Leaf
	if err := s.step(stepFrozen); err != nil {
		return err
	}
	pairs, err := s.frozenEntries(ctx, leaf.Leaf, frozen)
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
	if err := s.writeLeaves(ctx, "", []newLeaf{{left, h.Left, pairs[:h.At]}, {right, h.Right, pairs[h.At:]}}); err != nil {
		return fmt.Errorf("kv: split %s: %w", leaf.Leaf, err)
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
	return s.swapped(ctx, []clskv.IndexEntry{{High: old.Bounds.High, Leaf: leaf.Leaf}}, sw.Add)
}

// The points of a split a test may stop it at (Store.afterStep); a join's
// are the same prefixed "join ". The state at "frozen" and at "read" is
// the same (the freeze answers the entries); the new leaves are written
// at once, so a client that dies while writing them may leave either one
// without the other: "left write fails" and "right write fails", called
// before the writes, fail that one write (the other is made) and stop
// the operation once it is done; "written" follows both writes.
const (
	stepMarked     = "marked"
	stepFrozen     = "frozen"
	stepRead       = "read"
	stepLeftFails  = "left write fails"
	stepRightFails = "right write fails"
	stepWritten    = "written"
	stepSwapped    = "swapped"
)

// step calls the test's hook after a step of an operation: an error
// stops the operation there, as if its client died.
func (s *Store) step(name string) error {
	if s.afterStep == nil {
		return nil
	}
	return s.afterStep(name)
}

// newLeaf is a leaf an operation writes: its name, bounds and entries.
type newLeaf struct {
	name   string
	bounds clskv.Bounds
	pairs  []clskv.Pair
}

// writeLeaves writes an operation's new leaves (one or two) at once, so
// the frozen window holds one write's round trip, not two. Each is
// written whole in one operation, so each exists complete or not at all
// (the cleanup's decision rests on that); which of two exist after a
// failure is any of the four cases. prefix is the operation's step
// prefix ("" a split, "join " a join).
func (s *Store) writeLeaves(ctx context.Context, prefix string, leaves []newLeaf) error {
	// The hooks run here, in this goroutine: the tests' hooks are not
	// safe for concurrent use.
	fails := make([]error, len(leaves))
	for i := range leaves {
		fails[i] = s.step(prefix + []string{stepLeftFails, stepRightFails}[i])
	}
	errs := make([]error, len(leaves))
	var wg sync.WaitGroup
	for i, l := range leaves {
		if fails[i] != nil {
			continue
		}
		if len(leaves) == 1 {
			errs[i] = s.writeLeaf(ctx, l.name, l.bounds, l.pairs)
			continue
		}
		wg.Go(func() { errs[i] = s.writeLeaf(ctx, l.name, l.bounds, l.pairs) })
	}
	wg.Wait()
	for i, l := range leaves {
		if fails[i] != nil {
			return fails[i]
		}
		if errs[i] != nil {
			return fmt.Errorf("write %s: %w", l.name, errs[i])
		}
	}
	return s.step(prefix + stepWritten)
}

// freeze freezes leaf by operation id (kv.freeze), asking for its
// entries (as many as a leaf holds, 2k), and returns the method's answer
// (a FreezeReply). An answer without output is a resent request the OSD
// recognised as done (after a lost reply: a broken connection, a new
// primary), which keeps the result but not the output; freezing again by
// the same id is a no-op that answers the same, so it asks once more.
func (s *Store) freeze(ctx context.Context, leaf, id string) ([]byte, error) {
	req := clskv.FreezeRequest{ID: id, Entries: uint32(min(2*uint64(s.k), clskv.MaxBatch))}.Encode()
	for range 3 {
		out, err := s.io.Exec(ctx, leaf, clskv.Class, "freeze", req)
		if err != nil || len(out) > 0 {
			return out, err
		}
		s.log.Debug("kv: freeze answered without output (a resent request): asking again", "leaf", leaf, "op", id)
	}
	return s.io.Exec(ctx, leaf, clskv.Class, "freeze", req)
}

// frozenEntries returns the entries of a leaf frozen with reply r: those
// the freeze answered, and the rest read from the leaf (a reply bounded
// in bytes says more follow; an OSD whose class predates the entries
// answers none, and the whole leaf is read).
func (s *Store) frozenEntries(ctx context.Context, leaf string, r clskv.FreezeReply) ([]clskv.Pair, error) {
	switch {
	case !r.Entries:
		return s.readAll(ctx, leaf, "")
	case !r.More:
		return r.Pairs, nil
	}
	after := ""
	if len(r.Pairs) > 0 {
		after = r.Pairs[len(r.Pairs)-1].Key
	}
	rest, err := s.readAll(ctx, leaf, after)
	if err != nil {
		return nil, err
	}
	return append(r.Pairs, rest...), nil
}

// readAll returns a leaf's entries after key after ("" all) in key
// order.
func (s *Store) readAll(ctx context.Context, leaf, after string) ([]clskv.Pair, error) {
	var pairs []clskv.Pair
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
