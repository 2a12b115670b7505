package blockstore

import (
	"slices"
	"sort"
)

// pageSize is the granularity of logical allocation: which parts of an
// object hold data as opposed to holes, as ExtentMap and
// ObjectInfo.Allocated report it. It is independent of the device's
// allocation unit (the storetest suite fixes it at 4096). Write marks
// every page it touches, Zero unmarks the pages it covers whole, Truncate
// unmarks the pages past the new size.
const pageSize = 4096

// span is a half-open range [Off, End) of an object's logical bytes.
type span struct{ Off, End uint64 }

// addSpan marks [off, end) rounded out to pages; spans stay sorted and
// merged.
func addSpan(s []span, off, end uint64) []span {
	if off >= end {
		return s
	}
	off -= off % pageSize
	end = (end + pageSize - 1) / pageSize * pageSize
	i := 0
	for i < len(s) && s[i].End < off {
		i++
	}
	j := i
	for j < len(s) && s[j].Off <= end {
		off, end = min(off, s[j].Off), max(end, s[j].End)
		j++
	}
	return slices.Replace(s, i, j, span{off, end})
}

// removeSpan unmarks the pages wholly inside [off, end).
func removeSpan(s []span, off, end uint64) []span {
	off = (off + pageSize - 1) / pageSize * pageSize
	end -= end % pageSize
	if off >= end {
		return s
	}
	var out []span
	for _, x := range s {
		if x.End <= off || x.Off >= end {
			out = append(out, x)
			continue
		}
		if x.Off < off {
			out = append(out, span{x.Off, off})
		}
		if x.End > end {
			out = append(out, span{end, x.End})
		}
	}
	return out
}

// holdsData reports whether a page of [lo, hi) is marked. A checksum
// block none of whose pages is marked reads as zeros whatever the device
// holds there: newUnit does not write the blocks of a fresh unit that no
// write touched, so readers neither read nor verify such blocks.
func holdsData(s []span, lo, hi uint64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].End > lo })
	return i < len(s) && s[i].Off < hi
}

// clipSpans returns the parts of s inside [off, end).
func clipSpans(s []span, off, end uint64) []span {
	var out []span
	for _, x := range s {
		lo, hi := max(x.Off, off), min(x.End, end)
		if lo < hi {
			out = append(out, span{lo, hi})
		}
	}
	return out
}
