// Package extmap keeps byte extents of one file in memory, sorted and
// non-overlapping: the file-system client's write-back buffer (dirty
// bytes not yet at the OSDs) and its read cache (clean bytes read from
// them or read ahead).
//
// It owns only the arithmetic of overlapping ranges: a later insert
// overwrites what it covers, reads report the holes they could not
// fill, truncates and removals cut extents. It knows nothing of caps,
// layouts or I/O (package fsclient decides when to buffer, cache, flush
// and drop). A Map is not safe for concurrent use: its owner locks it.
// Pure: no goroutines, clock or I/O. Start with Map.Insert.
package extmap

import "sort"

// Extent is Data at file offset Off.
type Extent struct {
	Off  uint64
	Data []byte
}

// End is the offset just past the extent.
func (e Extent) End() uint64 { return e.Off + uint64(len(e.Data)) }

// Range is Len bytes at file offset Off.
type Range struct {
	Off, Len uint64
}

// Map is a set of extents sorted by offset, none overlapping or
// touching another (touching extents are merged). The zero Map is
// empty and ready.
type Map struct {
	ext   []Extent
	bytes uint64
}

// Bytes is how many bytes the map holds.
func (m *Map) Bytes() uint64 { return m.bytes }

// Len is how many extents the map holds.
func (m *Map) Len() int { return len(m.ext) }

// Extents returns the extents in offset order. The slices alias the
// map's memory: the caller must not change them, and they are valid
// until the map's next change.
func (m *Map) Extents() []Extent { return m.ext }

// End is the offset just past the last byte held (0 when empty).
func (m *Map) End() uint64 {
	if len(m.ext) == 0 {
		return 0
	}
	return m.ext[len(m.ext)-1].End()
}

// Clear empties the map.
func (m *Map) Clear() {
	m.ext = nil
	m.bytes = 0
}

// span returns the indexes [i, j) of the extents overlapping or touching
// [off, end).
func (m *Map) span(off, end uint64) (int, int) {
	i := sort.Search(len(m.ext), func(k int) bool { return m.ext[k].End() >= off })
	j := i
	for j < len(m.ext) && m.ext[j].Off <= end {
		j++
	}
	return i, j
}

// Insert stores a copy of data at off, replacing what the map held
// there, and merges it with the extents it touches. Sequential inserts
// grow one extent by appending (amortised copying).
func (m *Map) Insert(off uint64, data []byte) {
	if len(data) == 0 {
		return
	}
	end := off + uint64(len(data))
	i, j := m.span(off, end)
	if j-i == 1 && m.ext[i].Off <= off && m.ext[i].End() >= end {
		// One extent covers the range: overwrite in place.
		copy(m.ext[i].Data[off-m.ext[i].Off:], data)
		return
	}
	var buf []byte
	start := off
	if i < j && m.ext[i].Off <= off {
		// Keep the first extent's prefix; its bytes from off on are
		// replaced, and no later bytes of it are needed (it does not
		// reach past end, or the case above would have run).
		start = m.ext[i].Off
		buf = m.ext[i].Data[:off-start]
	}
	buf = append(buf, data...)
	if i < j {
		if last := m.ext[j-1]; last.End() > end {
			buf = append(buf, last.Data[end-last.Off:]...)
		}
	}
	for k := i; k < j; k++ {
		m.bytes -= uint64(len(m.ext[k].Data))
	}
	m.bytes += uint64(len(buf))
	m.ext = append(m.ext[:i], append([]Extent{{Off: start, Data: buf}}, m.ext[j:]...)...)
}

// Read copies into buf the bytes the map holds of [off, off+len(buf)),
// and returns the ranges of it the map does not hold (in order); those
// bytes of buf are left as they were.
func (m *Map) Read(off uint64, buf []byte) []Range {
	end := off + uint64(len(buf))
	var holes []Range
	pos := off
	i := sort.Search(len(m.ext), func(k int) bool { return m.ext[k].End() > off })
	for ; i < len(m.ext) && m.ext[i].Off < end; i++ {
		e := m.ext[i]
		if e.Off > pos {
			holes = append(holes, Range{Off: pos, Len: e.Off - pos})
			pos = e.Off
		}
		stop := min(end, e.End())
		copy(buf[pos-off:stop-off], e.Data[pos-e.Off:])
		pos = stop
	}
	if pos < end {
		holes = append(holes, Range{Off: pos, Len: end - pos})
	}
	return holes
}

// Covers reports whether the map holds every byte of [off, off+n).
func (m *Map) Covers(off, n uint64) bool {
	if n == 0 {
		return true
	}
	i := sort.Search(len(m.ext), func(k int) bool { return m.ext[k].End() > off })
	return i < len(m.ext) && m.ext[i].Off <= off && m.ext[i].End() >= off+n
}

// Remove drops the bytes of [off, off+n) (an extent it cuts through
// the middle becomes two).
func (m *Map) Remove(off, n uint64) {
	if n == 0 {
		return
	}
	end := off + n
	i := sort.Search(len(m.ext), func(k int) bool { return m.ext[k].End() > off })
	j := i
	for j < len(m.ext) && m.ext[j].Off < end {
		j++
	}
	if i == j {
		return
	}
	var keep []Extent
	if first := m.ext[i]; first.Off < off {
		keep = append(keep, Extent{Off: first.Off, Data: first.Data[: off-first.Off : off-first.Off]})
	}
	if last := m.ext[j-1]; last.End() > end {
		keep = append(keep, Extent{Off: end, Data: last.Data[end-last.Off:]})
	}
	for k := i; k < j; k++ {
		m.bytes -= uint64(len(m.ext[k].Data))
	}
	for _, e := range keep {
		m.bytes += uint64(len(e.Data))
	}
	m.ext = append(m.ext[:i], append(keep, m.ext[j:]...)...)
}

// Truncate drops every byte at or past size.
func (m *Map) Truncate(size uint64) {
	if end := m.End(); end > size {
		m.Remove(size, end-size)
	}
}
