package snaps

import (
	"fmt"
	"math"
	"slices"
)

// Extent is a byte range of an object: Off to Off+Len.
type Extent struct {
	Off, Len uint64
}

// End returns the offset after the extent, saturating at the largest
// offset.
func (e Extent) End() uint64 {
	if e.Len > math.MaxUint64-e.Off {
		return math.MaxUint64
	}
	return e.Off + e.Len
}

// Extents is a set of byte ranges as sorted, disjoint, non-adjacent,
// non-empty extents (Ceph's interval_set<uint64_t>); equal sets are
// equal slices.
type Extents []Extent

// Whole returns the extents [0, size), empty for size 0.
func Whole(size uint64) Extents {
	if size == 0 {
		return nil
	}
	return Extents{{0, size}}
}

// Bytes returns the number of bytes in the set.
func (x Extents) Bytes() uint64 {
	var n uint64
	for _, e := range x {
		n += e.Len
	}
	return n
}

// Subtract returns the set without [off, off+length); a length reaching
// past the largest offset means "to the end".
func (x Extents) Subtract(off, length uint64) Extents {
	end := Extent{off, length}.End()
	if length == 0 {
		return x
	}
	var out Extents
	for _, e := range x {
		if e.End() <= off || e.Off >= end {
			out = append(out, e)
			continue
		}
		if e.Off < off {
			out = append(out, Extent{e.Off, off - e.Off})
		}
		if e.End() > end {
			out = append(out, Extent{end, e.End() - end})
		}
	}
	return out
}

// Intersect returns the bytes in both x and y.
func (x Extents) Intersect(y Extents) Extents {
	var out Extents
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		lo := max(x[i].Off, y[j].Off)
		hi := min(x[i].End(), y[j].End())
		if lo < hi {
			out = append(out, Extent{lo, hi - lo})
		}
		if x[i].End() < y[j].End() {
			i++
		} else {
			j++
		}
	}
	return out
}

// Equal reports whether x and y hold the same bytes.
func (x Extents) Equal(y Extents) bool { return slices.Equal(x, y) }

// validate checks the canonical form, and that the set lies within [0,
// limit).
func (x Extents) validate(limit uint64) error {
	var prevEnd uint64
	for i, e := range x {
		switch {
		case e.Len == 0:
			return fmt.Errorf("empty extent at %d", e.Off)
		case e.Len > math.MaxUint64-e.Off || e.End() > limit:
			return fmt.Errorf("extent %d~%d beyond %d", e.Off, e.Len, limit)
		case i > 0 && e.Off <= prevEnd:
			return fmt.Errorf("extents out of order, overlapping or adjacent at %d", e.Off)
		}
		prevEnd = e.End()
	}
	return nil
}
