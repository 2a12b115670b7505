package alloc

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
)

// hintScan is how many free extents after the hint Allocate looks at for
// one that has room, and binScan how many extents of the request's own
// size bin it checks before it moves to the larger bins, whose extents all
// fit. Both bound the work of a call to O(log n).
const (
	hintScan = 8
	binScan  = 16
)

// Allocate takes want bytes, rounded up to the unit, and returns the
// extents that hold them in offset order; their lengths add up to the
// rounded want. It prefers one extent starting at hint (usually the end of
// the object's previous extent), or else one in the next few free extents
// after hint; then the best fit, the lowest-offset extent in the smallest
// size bin that has one that fits; and when no single extent is found it
// splits the request over several extents, largest bins first.
//
// The hint is only a preference: 0 means none, an unaligned hint is rounded
// up to the unit and a hint beyond the device is ignored. Allocate returns
// ErrNoSpace, and takes nothing, if fewer than want bytes are free, and
// ErrInvalid if want is 0.
func (a *Allocator) Allocate(want, hint uint64) ([]Extent, error) {
	if want == 0 {
		return nil, fmt.Errorf("allocate 0 bytes: %w", ErrInvalid)
	}
	if want > a.free {
		return nil, fmt.Errorf("allocate %d bytes with %d free: %w", want, a.free, ErrNoSpace)
	}
	// want <= free <= size, a multiple of the unit, so this cannot overflow
	// and stays <= free.
	want = (want + a.unit - 1) &^ (a.unit - 1)

	var out []Extent
	if f, e, ok := a.fitAtHint(want, hint); ok {
		a.take(f, e)
		out = []Extent{e}
	} else if f, ok := a.bestFit(want); ok {
		e := Extent{Offset: f.Offset, Length: want}
		a.take(f, e)
		out = []Extent{e}
	} else {
		out = a.split(want)
	}
	a.checkInvariants()
	return out, nil
}

// fitAtHint looks for room for want bytes at hint, then in the first
// hintScan free extents after it. It returns the free extent f and the
// part e of it to take.
func (a *Allocator) fitAtHint(want, hint uint64) (f, e Extent, ok bool) {
	if hint == 0 || hint >= a.size {
		return Extent{}, Extent{}, false
	}
	hint = (hint + a.unit - 1) &^ (a.unit - 1) // <= size: size is aligned
	if c, ok := a.containing(hint); ok {
		if c.End()-hint >= want {
			return c, Extent{Offset: hint, Length: want}, true
		}
	}
	n := 0
	a.byOff.AscendGreaterOrEqual(Extent{Offset: hint + 1}, func(c Extent) bool {
		if c.Length >= want {
			f, e, ok = c, Extent{Offset: c.Offset, Length: want}, true
			return false
		}
		n++
		return n < hintScan
	})
	return f, e, ok
}

// bestFit returns the lowest-offset free extent of at least want bytes in
// the lowest size bin that has one. Extents of want's own bin may be too
// short, so it checks binScan of them and then takes the first extent of
// the next non-empty bin, which is long enough. When the request's bin is
// the highest and its fitting extents lie beyond the first binScan it
// reports none, and Allocate splits the request.
func (a *Allocator) bestFit(want uint64) (f Extent, ok bool) {
	b := bits.Len64(want)
	n := 0
	a.byBin.AscendGreaterOrEqual(binStart(b), func(c Extent) bool {
		if c.Length >= want {
			f, ok = c, true
			return false
		}
		n++
		return n < binScan
	})
	if ok || n < binScan || b == 64 {
		// Found, or every extent from bin b on was checked.
		return f, ok
	}
	a.byBin.AscendGreaterOrEqual(binStart(b+1), func(c Extent) bool {
		f, ok = c, true
		return false
	})
	return f, ok
}

// split takes want bytes, which are free but not found in one extent: whole
// extents from the highest bin (lowest offset first) while the rest does
// not fit in one, then the rest by best fit.
func (a *Allocator) split(want uint64) []Extent {
	out := make([]Extent, 0, 4)
	for rest := want; rest > 0; {
		if len(out) > 0 {
			if f, ok := a.bestFit(rest); ok {
				e := Extent{Offset: f.Offset, Length: rest}
				a.take(f, e)
				out = append(out, e)
				break
			}
		}
		top, _ := a.byBin.Max() // free >= rest > 0, so there is one
		a.byBin.AscendGreaterOrEqual(binStart(bits.Len64(top.Length)), func(c Extent) bool {
			top = c
			return false
		})
		e := Extent{Offset: top.Offset, Length: min(top.Length, rest)}
		a.take(top, e)
		out = append(out, e)
		rest -= e.Length
	}
	slices.SortFunc(out, byOffset)
	return out
}

// byOffset orders extents by offset, for slices.SortFunc.
func byOffset(x, y Extent) int { return cmp.Compare(x.Offset, y.Offset) }
