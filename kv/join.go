package kv

import (
	"context"
	"errors"
	"fmt"
	"sync"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv/plan"
)

// errStale: the index cache does not name the leaf an operation was to
// start from; the caller re-reads the index.
var errStale = errors.New("kv: stale index cache")

// join merges or rebalances leaf, which a remove of key would leave
// under k entries, with a neighbour (docs/KV.md, "Merge and rebalance"):
//
//  1. mark both leaves' index entries with one mark, all or none (EBUSY
//     if another operation marked either, EXDEV if the cache is stale);
//  2. freeze both leaves at once (each freeze answers its entries);
//  3. decide (plan.PlanJoin): one new leaf with all the entries if they
//     are at most 2k (a merge), else two sharing them at the median (a
//     rebalance);
//  4. write the new leaf or leaves (two at once);
//  5. swap the two marked entries for the new leaves' in one operation;
//  6. remove the old leaves.
//
// A failure at steps 1-2 thaws what it froze and unmarks. After that the
// operation only goes forward, or is left to cleanup.
func (s *Store) join(ctx context.Context, leaf plan.Entry, key string) error {
	s.mu.Lock()
	l, r, ok := s.index.Neighbours(leaf)
	s.mu.Unlock()
	if !ok {
		return errStale
	}
	id := s.newName("join")
	names := []string{s.newName("leaf"), s.newName("leaf")}
	entries := []clskv.IndexEntry{{High: l.Bounds.High, Leaf: l.Leaf}, {High: r.Bounds.High, Leaf: r.Leaf}}
	mark := clskv.MarkRequest{Mark: clskv.Mark{ID: id, Kind: clskv.MarkJoin, Old: leaf.Leaf,
		New: []clskv.NewLeaf{{Name: names[0]}, {Name: names[1]}}, Entries: entries}}
	index := indexName(s.name)
	if _, err := s.io.Exec(ctx, index, clskv.Class, "mark", mark.Encode()); err != nil {
		return fmt.Errorf("kv: join %s and %s: mark: %w", l.Leaf, r.Leaf, err)
	}
	if err := s.step("join " + stepMarked); err != nil {
		return err
	}
	// Both freezes at once; each answers its leaf's entries.
	sides := []plan.Entry{l, r}
	outs, errs := make([][]byte, 2), make([]error, 2)
	var wg sync.WaitGroup
	for i, e := range sides {
		wg.Go(func() { outs[i], errs[i] = s.freeze(ctx, e.Leaf, id) })
	}
	wg.Wait()
	for i, e := range sides {
		if errs[i] != nil {
			// Thaw both: the other's freeze may have landed.
			s.undo(ctx, id, entries[0].High, l.Leaf, r.Leaf)
			return fmt.Errorf("kv: join %s and %s: freeze %s: %w", l.Leaf, r.Leaf, e.Leaf, errs[i])
		}
	}
	var olds []clskv.Leaf
	var frozen []clskv.FreezeReply
	for i, e := range sides {
		f, err := clskv.DecodeFreezeReply(outs[i])
		if err != nil {
			return fmt.Errorf("kv: join: leaf %s: %w: %v", e.Leaf, ErrCorrupt, err)
		}
		olds = append(olds, f.Leaf)
		frozen = append(frozen, f)
	}
	if err := s.step("join " + stepFrozen); err != nil {
		return err
	}
	var pairs []clskv.Pair
	for i, e := range sides {
		ps, err := s.frozenEntries(ctx, e.Leaf, frozen[i])
		if err != nil {
			return fmt.Errorf("kv: join: read %s: %w", e.Leaf, err)
		}
		pairs = append(pairs, ps...)
	}
	keys := make([]string, len(pairs))
	for i, p := range pairs {
		keys[i] = p.Key
	}
	j, err := plan.PlanJoin(olds[0].Bounds, olds[1].Bounds, keys, s.k, key)
	if err != nil {
		return fmt.Errorf("kv: join of %s and %s: %w: %v", l.Leaf, r.Leaf, ErrCorrupt, err)
	}
	if err := s.step("join " + stepRead); err != nil {
		return err
	}
	parts := [][]clskv.Pair{pairs}
	if !j.Merge() {
		parts = [][]clskv.Pair{pairs[:j.At], pairs[j.At:]}
	}
	sw := clskv.SwapRequest{ID: id, Remove: []string{l.Bounds.High, r.Bounds.High}}
	var news []newLeaf
	for i, b := range j.Leaves {
		news = append(news, newLeaf{names[i], b, parts[i]})
		sw.Add = append(sw.Add, clskv.IndexEntry{High: b.High, Leaf: names[i]})
	}
	if err := s.writeLeaves(ctx, "join ", news); err != nil {
		return fmt.Errorf("kv: join %s and %s: %w", l.Leaf, r.Leaf, err)
	}
	if _, err := s.io.Exec(ctx, index, clskv.Class, "swap", sw.Encode()); err != nil {
		return fmt.Errorf("kv: join %s and %s: swap: %w", l.Leaf, r.Leaf, err)
	}
	if err := s.step("join " + stepSwapped); err != nil {
		return err
	}
	s.announce(ctx, notice{Old: entries, New: sw.Add})
	for _, e := range []plan.Entry{l, r} {
		if err := s.io.Delete(ctx, e.Leaf); err != nil {
			s.log.Warn("kv: join: remove an old leaf", "leaf", e.Leaf, "err", err)
		}
	}
	s.log.Debug("kv: join", "left", l.Leaf, "right", r.Leaf, "merge", j.Merge(), "entries", len(pairs))
	return s.swapped(ctx, entries, sw.Add)
}

// undo rolls back an operation of this client that has marked the index
// entries (one of which ends at high) and may have frozen leaves: thaw
// them, then unmark. Failures are logged: what is left is cleanup's.
func (s *Store) undo(ctx context.Context, id, high string, leaves ...string) {
	for _, leaf := range leaves {
		if _, err := s.io.Exec(ctx, leaf, clskv.Class, "thaw", clskv.FreezeRequest{ID: id}.Encode()); err != nil && errno(err) != 2 {
			s.log.Warn("kv: thaw after a failed freeze", "leaf", leaf, "op", id, "err", err)
		}
	}
	if _, err := s.io.Exec(ctx, indexName(s.name), clskv.Class, "unmark", clskv.UnmarkRequest{High: high, ID: id}.Encode()); err != nil {
		s.log.Warn("kv: unmark after a failed freeze", "op", id, "err", err)
		return
	}
	s.announce(ctx, notice{}) // waiters for the leaves retry
}
