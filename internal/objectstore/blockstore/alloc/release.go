package alloc

import (
	"fmt"
	"slices"
)

// Release returns extents to the free space, merging each with its free
// neighbours. The extents must be valid (non-empty, aligned to the unit,
// inside the device) and used: if any part of one is already free, or two
// of them overlap, Release returns ErrOverlap, a double free, and changes
// nothing.
func (a *Allocator) Release(exts ...Extent) error {
	if err := a.checkBatch("release", exts); err != nil {
		return err
	}
	for _, e := range exts {
		if prev, _ := a.neighbours(e); prev.End() > e.Offset {
			return fmt.Errorf("release %v: overlaps free %v: %w", e, prev, ErrOverlap)
		}
	}
	for _, e := range exts {
		a.release(e)
	}
	a.checkInvariants()
	return nil
}

// release frees the used extent e.
func (a *Allocator) release(e Extent) {
	prev, next := a.neighbours(e)
	merged := e
	if prev.Length > 0 && prev.End() == e.Offset {
		merged = Extent{Offset: prev.Offset, Length: prev.Length + merged.Length}
	}
	if next.Length > 0 {
		merged.Length += next.Length
		a.remove(next)
	}
	if merged.Offset != e.Offset {
		a.replace(prev, merged)
	} else {
		a.insert(merged)
	}
}

// neighbours returns the free extent next that starts where e ends, if
// any, and the last free extent prev that starts before e ends. Only prev
// can overlap e, as the free extents before it end before it starts; if it
// does not, it is e's left neighbour. An absent extent is the zero Extent.
func (a *Allocator) neighbours(e Extent) (prev, next Extent) {
	a.byOff.DescendLessOrEqual(Extent{Offset: e.End()}, func(c Extent) bool {
		if c.Offset == e.End() {
			next = c
			return true
		}
		prev = c
		return false
	})
	return prev, next
}

// MarkUsed takes extents that are known to be used, such as those the
// engine's metadata lists at mount. The extents must be valid (non-empty,
// aligned to the unit, inside the device) and wholly free: if any part of
// one is not, or two of them overlap, MarkUsed returns ErrOverlap, a double
// use, and changes nothing.
func (a *Allocator) MarkUsed(exts ...Extent) error {
	if err := a.checkBatch("mark used", exts); err != nil {
		return err
	}
	for _, e := range exts {
		// Free extents are maximal, so a wholly free e lies in one.
		if f, ok := a.containing(e.Offset); !ok || f.End() < e.End() {
			return fmt.Errorf("mark used %v: not all free: %w", e, ErrOverlap)
		}
	}
	for _, e := range exts {
		f, _ := a.containing(e.Offset)
		a.take(f, e)
	}
	a.checkInvariants()
	return nil
}

// checkBatch validates each extent and checks that no two overlap.
func (a *Allocator) checkBatch(op string, exts []Extent) error {
	for _, e := range exts {
		if err := a.check(op, e); err != nil {
			return err
		}
	}
	switch len(exts) {
	case 0, 1:
		return nil
	case 2:
		x, y := exts[0], exts[1]
		if x.Offset < y.End() && y.Offset < x.End() {
			return fmt.Errorf("%s: %v and %v overlap: %w", op, x, y, ErrOverlap)
		}
		return nil
	}
	sorted := slices.Clone(exts)
	slices.SortFunc(sorted, byOffset)
	for i := 1; i < len(sorted); i++ {
		if sorted[i-1].End() > sorted[i].Offset {
			return fmt.Errorf("%s: %v and %v overlap: %w", op, sorted[i-1], sorted[i], ErrOverlap)
		}
	}
	return nil
}
