package kv

import (
	"context"
	"errors"
	"fmt"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv/plan"
	"github.com/cuttlestore/cuttle/rados"
)

// cleanup looks at a leaf that stayed busy (frozen, or its index entry
// marked) and finishes what an abandoned operation left (docs/KV.md,
// "Cleanup"):
//
//   - the index no longer names the leaf but it is frozen: an old leaf
//     whose operation swapped it out and died before removing it; remove
//     it;
//   - its entry carries a mark older than Config.MarkTimeout by the OSD's
//     clock: take the operation over (kv.mark replaces the mark with this
//     client's, only if it is still that one and old enough) and roll it
//     forward or back (plan.Recover);
//   - its entry carries no mark but the leaf is frozen: an owner that
//     froze it after a cleanup rolled its operation back; thaw it.
//
// The leaf is read before the index entry: a freeze is always made after
// its mark and the mark stays until the swap, so a leaf frozen by an
// operation whose mark a later read of the index does not show is never
// the leaf of a live operation. A young mark is left alone (nil).
func (s *Store) cleanup(ctx context.Context, leaf plan.Entry) error {
	if leaf.Leaf == "" {
		return nil
	}
	attr, err := s.io.GetXattr(ctx, leaf.Leaf, clskv.LeafAttr)
	if errors.Is(err, rados.ErrNotFound) {
		return nil
	} else if err != nil {
		return fmt.Errorf("kv: cleanup: read leaf %s: %w", leaf.Leaf, err)
	}
	l, err := clskv.DecodeLeaf(attr)
	if err != nil {
		return fmt.Errorf("kv: cleanup: leaf %s: %w: %v", leaf.Leaf, ErrCorrupt, err)
	}
	index := indexName(s.name)
	vals, err := s.io.GetOmapValuesByKeys(ctx, index, clskv.IndexKey(l.Bounds.High))
	if err != nil {
		return fmt.Errorf("kv: cleanup: read the index: %w", err)
	}
	raw, named := vals[clskv.IndexKey(l.Bounds.High)]
	var x clskv.Entry
	if named {
		if x, err = clskv.DecodeEntry(raw); err != nil {
			return fmt.Errorf("kv: object %s: entry %q: %w: %v", index, l.Bounds.High, ErrCorrupt, err)
		}
		named = x.Leaf == leaf.Leaf
	}
	switch {
	case !named && l.Frozen != "":
		s.log.Info("kv: cleanup: remove an old leaf left by a finished operation", "leaf", leaf.Leaf, "op", l.Frozen)
		if err := s.io.Delete(ctx, leaf.Leaf); err != nil && !errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("kv: cleanup: remove old leaf %s: %w", leaf.Leaf, err)
		}
		return nil
	case !named:
		return nil
	case x.Mark != nil:
		return s.takeOver(ctx, *x.Mark)
	case l.Frozen != "":
		s.log.Info("kv: cleanup: thaw a leaf frozen by an operation that was rolled back", "leaf", leaf.Leaf, "op", l.Frozen)
		if _, err := s.io.Exec(ctx, leaf.Leaf, clskv.Class, "thaw", clskv.FreezeRequest{ID: l.Frozen}.Encode()); err != nil && errno(err) != clskv.ErrnoNoMark && errno(err) != 2 {
			return fmt.Errorf("kv: cleanup: thaw %s: %w", leaf.Leaf, err)
		}
		s.announce(ctx, notice{})
	}
	return nil
}

// takeOver replaces the abandoned mark m by this client's, if it is
// still there and old enough, then rolls the operation forward or back.
func (s *Store) takeOver(ctx context.Context, m clskv.Mark) error {
	mine := m
	mine.ID = s.newName("cleanup")
	mine.Takes = m.FreezeID()
	req := clskv.MarkRequest{Mark: mine, TakeOver: m.ID, OlderThan: s.cfg.MarkTimeout.Nanoseconds()}
	index := indexName(s.name)
	if _, err := s.io.Exec(ctx, index, clskv.Class, "mark", req.Encode()); err != nil {
		switch errno(err) {
		case clskv.ErrnoBusy, clskv.ErrnoNoMark, clskv.ErrnoNotMine:
			return nil // young, or changed meanwhile: nothing to do now
		}
		return fmt.Errorf("kv: cleanup: take over %s: %w", m.ID, err)
	}
	if err := s.step("cleanup " + stepMarked); err != nil {
		return err
	}
	states := func(names []string) ([]plan.LeafState, error) {
		var out []plan.LeafState
		for _, name := range names {
			st := plan.LeafState{Name: name}
			attr, err := s.io.GetXattr(ctx, name, clskv.LeafAttr)
			switch {
			case errors.Is(err, rados.ErrNotFound):
			case err != nil:
				return nil, fmt.Errorf("kv: cleanup of %s: read %s: %w", m.ID, name, err)
			default:
				if st.Leaf, err = clskv.DecodeLeaf(attr); err != nil {
					return nil, fmt.Errorf("kv: cleanup of %s: leaf %s: %w: %v", m.ID, name, ErrCorrupt, err)
				}
				st.Exists = true
			}
			out = append(out, st)
		}
		return out, nil
	}
	var oldNames, newNames []string
	for _, e := range m.Entries {
		oldNames = append(oldNames, e.Leaf)
	}
	for _, n := range m.New {
		newNames = append(newNames, n.Name)
	}
	olds, err := states(oldNames)
	if err != nil {
		return err
	}
	news, err := states(newNames)
	if err != nil {
		return err
	}
	r, err := plan.Recover(mine, olds, news)
	if err != nil {
		return fmt.Errorf("kv: cleanup: %w: %v", ErrCorrupt, err)
	}
	s.log.Info("kv: cleanup: take over an abandoned operation", "op", m.ID, "kind", m.Kind, "forward", r.Forward)
	if r.Forward {
		var highs []string
		for _, e := range m.Entries {
			highs = append(highs, e.High)
		}
		sw := clskv.SwapRequest{ID: mine.ID, Remove: highs, Add: r.Add}
		if _, err := s.io.Exec(ctx, index, clskv.Class, "swap", sw.Encode()); err != nil {
			if errno(err) == clskv.ErrnoNoMark {
				return s.lostTakeOver(m, "swap")
			}
			return fmt.Errorf("kv: cleanup of %s: swap: %w", m.ID, err)
		}
		if err := s.step("cleanup " + stepSwapped); err != nil {
			return err
		}
		s.announce(ctx, notice{Old: m.Entries, New: r.Add})
		for _, name := range r.Delete {
			if err := s.io.Delete(ctx, name); err != nil && !errors.Is(err, rados.ErrNotFound) {
				s.log.Warn("kv: cleanup: remove an old leaf", "leaf", name, "err", err)
			}
		}
		return s.refresh(ctx)
	}
	for _, name := range r.Delete {
		if err := s.io.Delete(ctx, name); err != nil && !errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("kv: cleanup of %s: remove new leaf %s: %w", m.ID, name, err)
		}
	}
	for _, name := range r.Thaw {
		if _, err := s.io.Exec(ctx, name, clskv.Class, "thaw", clskv.FreezeRequest{ID: mine.FreezeID()}.Encode()); err != nil && errno(err) != 2 {
			if errno(err) == clskv.ErrnoNoMark {
				return s.lostTakeOver(m, "thaw")
			}
			return fmt.Errorf("kv: cleanup of %s: thaw %s: %w", m.ID, name, err)
		}
	}
	if err := s.step("cleanup thawed"); err != nil {
		return err
	}
	if _, err := s.io.Exec(ctx, index, clskv.Class, "unmark", clskv.UnmarkRequest{High: m.Entries[0].High, ID: mine.ID}.Encode()); err != nil {
		if errno(err) == clskv.ErrnoNoMark {
			return s.lostTakeOver(m, "unmark")
		}
		return fmt.Errorf("kv: cleanup of %s: unmark: %w", m.ID, err)
	}
	s.announce(ctx, notice{})
	return s.refresh(ctx)
}

// lostTakeOver: a step of this client's cleanup of m found its own mark
// (or the old leaves' freeze) gone (ECANCELED): the cleanup stalled past
// Config.MarkTimeout and another client took the operation over from it
// (its mark carries the same freezing id, and it decides anew from what
// it reads), or finished it and a new operation has begun; or its own
// unmark, resent after a lost reply, found itself done. Nothing is left
// for this client to do; the operation that waited retries.
func (s *Store) lostTakeOver(m clskv.Mark, step string) error {
	s.log.Info("kv: cleanup: another client took the operation over", "op", m.ID, "step", step)
	return nil
}
