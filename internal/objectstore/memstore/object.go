package memstore

import (
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// PageSize is the allocation unit: every byte of a page is allocated or
// every byte is a hole.
const PageSize = 4096

// page holds PageSize bytes of an object. Installed pages are immutable.
type page [PageSize]byte

// object is one object's data, attributes and omap. Objects the store
// holds are immutable; a transaction changes a clone.
type object struct {
	size   uint64
	pages  map[uint64]*page // page number -> data; absent pages are holes
	attrs  map[string][]byte
	omap   map[string][]byte
	header []byte
}

func newObject() *object {
	return &object{pages: map[uint64]*page{}, attrs: map[string][]byte{}, omap: map[string][]byte{}}
}

// clone copies the maps; the pages and values, being immutable, are shared.
func (o *object) clone() *object {
	return &object{size: o.size, pages: maps.Clone(o.pages), attrs: maps.Clone(o.attrs),
		omap: maps.Clone(o.omap), header: o.header}
}

// writablePage returns a private copy of page idx (a zero page if it is a
// hole), installs it, and reports whether the page was a hole.
func (o *object) writablePage(idx uint64) (*page, bool) {
	p := new(page)
	old := o.pages[idx]
	if old != nil {
		*p = *old
	}
	o.pages[idx] = p
	return p, old == nil
}

// write copies data to off and returns the number of pages it allocated.
func (o *object) write(off uint64, data []byte) (allocated uint64) {
	end := off + uint64(len(data))
	for pos := off; pos < end; {
		idx, in := pos/PageSize, pos%PageSize
		p, fresh := o.writablePage(idx)
		if fresh {
			allocated++
		}
		pos += uint64(copy(p[in:], data[pos-off:]))
	}
	o.size = max(o.size, end)
	return allocated
}

// clear zeroes bytes [from, to) of page idx, if it is allocated.
func (o *object) clear(idx, from, to uint64) {
	if o.pages[idx] == nil || from >= to {
		return
	}
	p, _ := o.writablePage(idx)
	clear(p[from:to])
}

// dropPages frees the pages numbered [from, to).
func (o *object) dropPages(from, to uint64) {
	if to <= from {
		return
	}
	if to-from <= uint64(len(o.pages)) {
		for idx := from; idx < to; idx++ {
			delete(o.pages, idx)
		}
		return
	}
	for idx := range o.pages {
		if idx >= from && idx < to {
			delete(o.pages, idx)
		}
	}
}

// zero zeroes [off, off+length), freeing the pages it covers whole, and
// extends the object to off+length.
func (o *object) zero(off, length uint64) {
	end := off + length
	o.size = max(o.size, end)
	if length == 0 {
		return
	}
	o.dropPages((off+PageSize-1)/PageSize, end/PageSize)
	head := off / PageSize
	if off%PageSize != 0 || end < (head+1)*PageSize {
		o.clear(head, off-head*PageSize, min(end, (head+1)*PageSize)-head*PageSize)
	}
	if tail := (end - 1) / PageSize; tail != head && end%PageSize != 0 {
		o.clear(tail, 0, end-tail*PageSize)
	}
}

// truncate sets the size, freeing whole pages past it and zeroing the rest
// of the page it falls in, so bytes past the size are always zero.
func (o *object) truncate(size uint64) {
	if size < o.size {
		o.dropPages((size+PageSize-1)/PageSize, (o.size+PageSize-1)/PageSize)
		if size%PageSize != 0 {
			o.clear(size/PageSize, size%PageSize, PageSize)
		}
	}
	o.size = size
}

// clip returns [off, end) clipped to the object: length 0 means to the end.
func (o *object) clip(off, length uint64) (uint64, uint64) {
	end := o.size
	if length != 0 && length < o.size-min(off, o.size) {
		end = off + length
	}
	return min(off, o.size), end
}

// read returns the bytes of [off, off+length) within the object.
func (o *object) read(off, length uint64) []byte {
	off, end := o.clip(off, length)
	buf := make([]byte, end-off)
	for pos := off; pos < end; {
		idx, in := pos/PageSize, pos%PageSize
		n := min(PageSize-in, end-pos)
		if p := o.pages[idx]; p != nil {
			copy(buf[pos-off:], p[in:in+n])
		}
		pos += n
	}
	return buf
}

// extents returns the allocated runs within [off, off+length), clipped to
// the object.
func (o *object) extents(off, length uint64) []objectstore.Extent {
	off, end := o.clip(off, length)
	if off >= end {
		return nil
	}
	first, last := off/PageSize, (end-1)/PageSize
	var idxs []uint64
	if last-first < uint64(len(o.pages)) {
		for idx := first; idx <= last; idx++ {
			if o.pages[idx] != nil {
				idxs = append(idxs, idx)
			}
		}
	} else {
		for idx := range o.pages {
			if idx >= first && idx <= last {
				idxs = append(idxs, idx)
			}
		}
		slices.Sort(idxs)
	}
	var out []objectstore.Extent
	for _, idx := range idxs {
		s, e := max(idx*PageSize, off), min((idx+1)*PageSize, end)
		if n := len(out); n > 0 && out[n-1].Offset+out[n-1].Length == s {
			out[n-1].Length += e - s
			continue
		}
		out = append(out, objectstore.Extent{Offset: s, Length: e - s})
	}
	return out
}

// stored returns the allocated bytes within the size (ObjectInfo.Allocated).
func (o *object) stored() uint64 {
	var n uint64
	for idx := range o.pages {
		if start := idx * PageSize; start < o.size {
			n += min(PageSize, o.size-start)
		}
	}
	return n
}
