package alloc

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/google/btree"
)

// Errors, to be tested with errors.Is. Every error the package returns wraps
// one of them.
var (
	// ErrNoSpace means that less space is free than was asked for. The
	// engine wraps it into objectstore.ErrNoSpace.
	ErrNoSpace = errors.New("alloc: no space")
	// ErrOverlap means that a released extent is already free, or that an
	// extent marked used is not free: a double free or a double use, so a
	// bug or corrupt metadata.
	ErrOverlap = errors.New("alloc: extent not free / not allocated")
	// ErrInvalid means a bad argument: a size or unit New cannot use, a
	// zero length, an extent not aligned to the unit or not inside the
	// device.
	ErrInvalid = errors.New("alloc: invalid argument")
)

// Extent is a byte range of the device: [Offset, Offset+Length).
type Extent struct{ Offset, Length uint64 }

// End returns the offset just past the extent.
func (e Extent) End() uint64 { return e.Offset + e.Length }

// String returns the extent as "[offset,+length)", in bytes.
func (e Extent) String() string { return fmt.Sprintf("[%d,+%d)", e.Offset, e.Length) }

// btreeDegree is the degree of both indexes; 32 is google/btree's
// recommendation for small items and measured best in
// BenchmarkAllocateRelease.
const btreeDegree = 32

// Allocator hands out the space of a device of Size bytes in units of Unit
// bytes. Create it with New; the zero value is an allocator of an empty
// device. It is not safe for concurrent use.
type Allocator struct {
	size uint64
	unit uint64
	free uint64

	// byOff holds the free extents ordered by offset; byBin holds the same
	// extents ordered by (bin, offset) (see lessBin). Free extents are
	// disjoint, aligned to the unit and maximal: no two are adjacent.
	byOff *btree.BTreeG[Extent]
	byBin *btree.BTreeG[Extent]
}

// New returns an allocator of a device of size bytes, rounded down to a
// multiple of unit, with all space free. Unit must be a power of two, and
// size at least one unit.
func New(size, unit uint64) (*Allocator, error) {
	if unit == 0 || unit&(unit-1) != 0 {
		return nil, fmt.Errorf("unit %d is not a power of two: %w", unit, ErrInvalid)
	}
	size &^= unit - 1
	if size == 0 {
		return nil, fmt.Errorf("size smaller than one unit of %d bytes: %w", unit, ErrInvalid)
	}
	a := &Allocator{
		size:  size,
		unit:  unit,
		byOff: btree.NewG(btreeDegree, lessOff),
		byBin: btree.NewG(btreeDegree, lessBin),
	}
	a.insert(Extent{Offset: 0, Length: size})
	return a, nil
}

// Size returns the size of the device in bytes, a multiple of Unit.
func (a *Allocator) Size() uint64 { return a.size }

// Unit returns the allocation unit in bytes.
func (a *Allocator) Unit() uint64 { return a.unit }

// Free returns the number of free bytes.
func (a *Allocator) Free() uint64 { return a.free }

// Fragments returns the number of free extents.
func (a *Allocator) Fragments() int {
	if a.byOff == nil {
		return 0
	}
	return a.byOff.Len()
}

// FreeExtents calls yield for every free extent in offset order until yield
// returns false; it is an iter.Seq[Extent], to persist the free list, check
// it or test it: `for e := range a.FreeExtents`. The allocator must not be
// changed during the iteration.
func (a *Allocator) FreeExtents(yield func(Extent) bool) {
	if a.byOff == nil {
		return
	}
	a.byOff.Ascend(yield)
}

// lessOff orders the offset index.
func lessOff(x, y Extent) bool { return x.Offset < y.Offset }

// lessBin orders the size index by bin, then offset. The bin of an extent
// is floor(log2(length/unit)); as lengths are multiples of the unit, a
// power of two, ordering by bits.Len64(length) orders by bin.
func lessBin(x, y Extent) bool {
	bx, by := bits.Len64(x.Length), bits.Len64(y.Length)
	if bx != by {
		return bx < by
	}
	return x.Offset < y.Offset
}

// binStart returns a pivot that sorts before every extent of length bin b
// (bits.Len64 of the length) in byBin.
func binStart(b int) Extent { return Extent{Offset: 0, Length: 1 << (b - 1)} }

// insert adds a free extent to both indexes. The caller keeps the extents
// disjoint and maximal.
func (a *Allocator) insert(e Extent) {
	a.byOff.ReplaceOrInsert(e)
	a.byBin.ReplaceOrInsert(e)
	a.free += e.Length
}

// remove deletes a free extent from both indexes.
func (a *Allocator) remove(e Extent) {
	a.byOff.Delete(e)
	a.byBin.Delete(e)
	a.free -= e.Length
}

// replace swaps the free extent from for to in both indexes, in place
// where the order allows it.
func (a *Allocator) replace(from, to Extent) {
	if from.Offset != to.Offset {
		a.byOff.Delete(from)
	}
	a.byOff.ReplaceOrInsert(to)
	if from.Offset != to.Offset || bits.Len64(from.Length) != bits.Len64(to.Length) {
		a.byBin.Delete(from)
	}
	a.byBin.ReplaceOrInsert(to)
	a.free = a.free - from.Length + to.Length
}

// take marks e used; it must lie inside the free extent f.
func (a *Allocator) take(f, e Extent) {
	left := Extent{Offset: f.Offset, Length: e.Offset - f.Offset}
	right := Extent{Offset: e.End(), Length: f.End() - e.End()}
	switch {
	case left.Length > 0 && right.Length > 0:
		a.replace(f, left)
		a.insert(right)
	case left.Length > 0:
		a.replace(f, left)
	case right.Length > 0:
		a.replace(f, right)
	default:
		a.remove(f)
	}
}

// containing returns the free extent that holds off, if any.
func (a *Allocator) containing(off uint64) (f Extent, ok bool) {
	a.byOff.DescendLessOrEqual(Extent{Offset: off}, func(c Extent) bool {
		f, ok = c, c.End() > off
		return false
	})
	return f, ok
}

// check validates an extent given by the caller.
func (a *Allocator) check(op string, e Extent) error {
	mask := a.unit - 1
	switch {
	case e.Length == 0:
		return fmt.Errorf("%s %v: zero length: %w", op, e, ErrInvalid)
	case e.End() < e.Offset || e.End() > a.size:
		return fmt.Errorf("%s %v: beyond the device size %d: %w", op, e, a.size, ErrInvalid)
	case e.Offset&mask != 0 || e.Length&mask != 0:
		return fmt.Errorf("%s %v: not aligned to the unit of %d bytes: %w", op, e, a.unit, ErrInvalid)
	}
	return nil
}
