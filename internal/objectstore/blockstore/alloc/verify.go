package alloc

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/invariants"
)

// checkInvariants verifies the whole allocator after a change, in builds
// with the invariants tag (see internal/invariants): an overlapping or
// misindexed free extent would otherwise surface much later as two
// objects sharing a block. It costs O(n log n) in the free extents.
func (a *Allocator) checkInvariants() {
	if invariants.Enabled {
		invariants.Check(a.verify())
	}
}

// verify reports the first broken invariant of the allocator's state:
// free extents non-empty, aligned, inside the device, disjoint and
// maximal (no two adjacent); both indexes holding the same extents; and
// Free equal to their total.
func (a *Allocator) verify() error {
	if a.byOff == nil {
		if a.byBin != nil || a.free != 0 {
			return fmt.Errorf("alloc: empty allocator with a size index or %d free bytes", a.free)
		}
		return nil
	}
	var (
		sum  uint64
		prev Extent
		err  error
	)
	mask := a.unit - 1
	a.byOff.Ascend(func(e Extent) bool {
		switch {
		case e.Length == 0 || e.Offset&mask != 0 || e.Length&mask != 0:
			err = fmt.Errorf("alloc: free extent %v empty or not aligned to %d", e, a.unit)
		case e.End() < e.Offset || e.End() > a.size:
			err = fmt.Errorf("alloc: free extent %v beyond the device size %d", e, a.size)
		case prev.Length > 0 && prev.End() >= e.Offset:
			err = fmt.Errorf("alloc: free extents %v and %v overlap, touch or are out of order", prev, e)
		case !inBin(a, e):
			err = fmt.Errorf("alloc: free extent %v missing from the size index", e)
		}
		prev, sum = e, sum+e.Length
		return err == nil
	})
	switch {
	case err != nil:
		return err
	case a.byBin.Len() != a.byOff.Len():
		return fmt.Errorf("alloc: %d extents in the size index, %d by offset", a.byBin.Len(), a.byOff.Len())
	case sum != a.free:
		return fmt.Errorf("alloc: Free() is %d but the free extents hold %d bytes", a.free, sum)
	}
	return nil
}

// inBin reports whether the size index holds e itself (its order compares
// bins, not lengths, so Has alone would accept another length of e's bin).
func inBin(a *Allocator, e Extent) bool {
	got, ok := a.byBin.Get(e)
	return ok && got == e
}
