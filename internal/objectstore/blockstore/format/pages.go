package format

import (
	"slices"
	"sort"
)

// PageSize is the granularity of logical allocation: which parts of an
// object hold data as opposed to holes, as ExtentMap and
// ObjectInfo.Allocated report it. It is independent of the device's
// allocation unit (the storetest suite fixes it at 4096). Write marks
// every page it touches, Zero unmarks the pages it covers whole, Truncate
// unmarks the pages past the new size.
const PageSize = 4096

// Span is a half-open range [Off, End) of an object's logical bytes.
type Span struct{ Off, End uint64 }

// AddSpan marks [off, end) rounded out to pages; spans stay sorted and
// merged.
func AddSpan(s []Span, off, end uint64) []Span {
	if off >= end {
		return s
	}
	off -= off % PageSize
	end = (end + PageSize - 1) / PageSize * PageSize
	i := 0
	for i < len(s) && s[i].End < off {
		i++
	}
	j := i
	for j < len(s) && s[j].Off <= end {
		off, end = min(off, s[j].Off), max(end, s[j].End)
		j++
	}
	return slices.Replace(s, i, j, Span{off, end})
}

// RemoveSpan unmarks the pages wholly inside [off, end).
func RemoveSpan(s []Span, off, end uint64) []Span {
	off = (off + PageSize - 1) / PageSize * PageSize
	end -= end % PageSize
	if off >= end {
		return s
	}
	var out []Span
	for _, x := range s {
		if x.End <= off || x.Off >= end {
			out = append(out, x)
			continue
		}
		if x.Off < off {
			out = append(out, Span{x.Off, off})
		}
		if x.End > end {
			out = append(out, Span{end, x.End})
		}
	}
	return out
}

// HoldsData reports whether a page of [lo, hi) is marked. A checksum
// block none of whose pages is marked reads as zeros whatever the device
// holds there: newUnit does not write the blocks of a fresh unit that no
// write touched, so readers neither read nor verify such blocks.
func HoldsData(s []Span, lo, hi uint64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].End > lo })
	return i < len(s) && s[i].Off < hi
}

// ClipSpans returns the parts of s inside [off, end).
func ClipSpans(s []Span, off, end uint64) []Span {
	var out []Span
	for _, x := range s {
		lo, hi := max(x.Off, off), min(x.End, end)
		if lo < hi {
			out = append(out, Span{lo, hi})
		}
	}
	return out
}
