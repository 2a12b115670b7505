package blockstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// Limits the record decoder enforces on hostile input.
const (
	maxAttrName  = 4096
	maxAttrValue = 64 << 20
	maxHeader    = 64 << 20
)

// unit maps one allocation unit of an object's logical space to device
// space. The object's bytes [LU*AllocUnit, (LU+1)*AllocUnit) live at
// [Dev, Dev+AllocUnit), with one crc32c per checksum block. Bytes of a
// mapped unit beyond the object's size are always zero.
type unit struct {
	LU    uint64
	Dev   uint64
	Csums []uint32 // immutable once the unit is in a record
}

// onode is an object record: what the object is, not its data. A
// published onode (in the cache or the prepare overlay) is immutable;
// change a clone.
type onode struct {
	Nid        uint64
	Size       uint64
	Attrs      map[string][]byte
	OmapHeader []byte
	Units      []unit // sorted by LU, no duplicates
	// Pages are the logically allocated ranges (pages.go), sorted,
	// merged, page aligned. Every page lies in a mapped unit.
	Pages []span

	// Not stored: enc is n's encoding, kept for records of big objects
	// (encCacheUnits units and up) so that a clone changing only
	// checksums is encoded by patching a copy of it; csumAt[i] is where
	// unit i's checksums start in enc. base is the record a clone was
	// made from, until the clone is encoded.
	enc    []byte
	csumAt []int
	base   *onode
}

// encCacheUnits is the number of units from which a record keeps its
// encoding for patching.
const encCacheUnits = 8

func (n *onode) clone() *onode {
	c := *n
	c.Attrs = maps.Clone(n.Attrs)
	c.Units = slices.Clone(n.Units)
	c.Pages = slices.Clone(n.Pages)
	c.enc, c.csumAt, c.base = nil, nil, n
	return &c
}

// sameLayout reports whether a and b encode alike except for checksum
// values: every encoded field but the checksums is equal.
func sameLayout(a, b *onode) bool {
	if a.Nid != b.Nid || a.Size != b.Size || len(a.Units) != len(b.Units) ||
		!bytes.Equal(a.OmapHeader, b.OmapHeader) || !slices.Equal(a.Pages, b.Pages) ||
		!maps.EqualFunc(a.Attrs, b.Attrs, bytes.Equal) {
		return false
	}
	for i := range a.Units {
		x, y := &a.Units[i], &b.Units[i]
		if x.LU != y.LU || x.Dev != y.Dev || len(x.Csums) != len(y.Csums) {
			return false
		}
	}
	return true
}

// encodeRecord returns n's encoding: a patched copy of its base's when
// only checksums changed, a full encoding otherwise. n must not change
// afterwards (it is about to be published).
func (n *onode) encodeRecord(sb superblock) []byte {
	base := n.base
	n.base = nil
	if base != nil && base.enc != nil && sameLayout(base, n) {
		out := slices.Clone(base.enc)
		for i, u := range n.Units {
			if len(u.Csums) == 0 || &u.Csums[0] == &base.Units[i].Csums[0] {
				continue
			}
			at := base.csumAt[i]
			for j, c := range u.Csums {
				binary.LittleEndian.PutUint32(out[at+4*j:], c)
			}
		}
		n.enc, n.csumAt = out, base.csumAt
		return out
	}
	return n.encode(sb)
}

// find returns the index of logical unit lu in n.Units and whether it is
// mapped; when it is not, the index is where it would go.
func (n *onode) find(lu uint64) (int, bool) {
	i := sort.Search(len(n.Units), func(i int) bool { return n.Units[i].LU >= lu })
	return i, i < len(n.Units) && n.Units[i].LU == lu
}

// allocatedBytes is the length of the allocated pages below Size:
// ObjectInfo.Allocated and the object's contribution to Stored.
func (n *onode) allocatedBytes() uint64 {
	var total uint64
	for _, x := range clipSpans(n.Pages, 0, n.Size) {
		total += x.End - x.Off
	}
	return total
}

// approxSize estimates the memory an onode holds, for the cache budget.
func (n *onode) approxSize() int {
	s := 96 + len(n.OmapHeader) + 16*len(n.Pages)
	for k, v := range n.Attrs {
		s += 32 + len(k) + len(v)
	}
	for _, u := range n.Units {
		s += 48 + 4*len(u.Csums)
	}
	return s + len(n.enc) + 8*len(n.csumAt)
}

// encode writes the record, coalescing adjacent units into extents:
//
//	version 1: nid uvarint, size uvarint,
//	  attrs count, then (name string, value bytes) in name order,
//	  omap header bytes,
//	  extents count, then (logical offset, length, device offset uvarints,
//	  count of crc32c u32s, the crcs),
//	  allocated page spans count, then (offset, length uvarints)
func (n *onode) encode(sb superblock) []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(n.Nid)
	e.Uvarint(n.Size)
	names := slices.Sorted(maps.Keys(n.Attrs))
	e.Uvarint(uint64(len(names)))
	for _, k := range names {
		e.String(k)
		e.Bytes(n.Attrs[k])
	}
	e.Bytes(n.OmapHeader)
	type run struct{ start, end int }
	var runs []run
	for i := range n.Units {
		if len(runs) > 0 {
			r := &runs[len(runs)-1]
			p := n.Units[r.end-1]
			if n.Units[i].LU == p.LU+1 && n.Units[i].Dev == p.Dev+sb.AllocUnit {
				r.end = i + 1
				continue
			}
		}
		runs = append(runs, run{i, i + 1})
	}
	e.Uvarint(uint64(len(runs)))
	keep := len(n.Units) >= encCacheUnits
	var csumAt []int
	if keep {
		csumAt = make([]int, len(n.Units))
	}
	for _, r := range runs {
		first := n.Units[r.start]
		e.Uvarint(first.LU * sb.AllocUnit)
		e.Uvarint(uint64(r.end-r.start) * sb.AllocUnit)
		e.Uvarint(first.Dev)
		e.Uvarint(uint64(r.end-r.start) * uint64(sb.blocksPerUnit()))
		for i, u := range n.Units[r.start:r.end] {
			if keep {
				csumAt[r.start+i] = len(e.Data())
			}
			for _, c := range u.Csums {
				e.Uint32(c)
			}
		}
	}
	e.Uvarint(uint64(len(n.Pages)))
	for _, x := range n.Pages {
		e.Uvarint(x.Off)
		e.Uvarint(x.End - x.Off)
	}
	e.End(m)
	if keep {
		n.enc, n.csumAt = e.Data(), csumAt
	}
	return e.Data()
}

// decodeOnode decodes a record, checking it against the geometry: unit
// alignment, one checksum per block, extents in order, on the device.
func decodeOnode(b []byte, sb superblock) (*onode, error) {
	n := &onode{}
	d := encoding.NewDecoder(b)
	d.Begin(1)
	n.Nid = d.Uvarint()
	n.Size = d.Uvarint()
	if cnt := d.Count(2); cnt > 0 {
		n.Attrs = make(map[string][]byte, cnt)
		for range cnt {
			k := d.String(maxAttrName)
			v := d.Bytes(maxAttrValue)
			if d.Err() != nil {
				break
			}
			if _, dup := n.Attrs[k]; dup {
				d.Fail(fmt.Errorf("%w: attribute %q twice", encoding.ErrCorrupt, k))
			}
			n.Attrs[k] = v
		}
	}
	n.OmapHeader = d.Bytes(maxHeader)
	nExt := d.Count(4)
	bpu := uint64(sb.blocksPerUnit())
	nextLU := uint64(0)
	for i := 0; i < nExt && d.Err() == nil; i++ {
		loff, length, dev := d.Uvarint(), d.Uvarint(), d.Uvarint()
		nc := d.Count(4)
		if d.Err() != nil {
			break
		}
		switch {
		case length == 0 || loff%sb.AllocUnit != 0 || length%sb.AllocUnit != 0 || dev%sb.AllocUnit != 0:
			d.Fail(fmt.Errorf("%w: extent %d+%d at %d not unit aligned", encoding.ErrCorrupt, loff, length, dev))
		case loff > objectstore.MaxObjectSize || length > objectstore.MaxObjectSize-loff+sb.AllocUnit:
			d.Fail(fmt.Errorf("%w: extent %d+%d beyond the maximum object size", encoding.ErrCorrupt, loff, length))
		case dev > sb.Size || length > sb.Size-dev:
			d.Fail(fmt.Errorf("%w: extent at %d+%d beyond the device", encoding.ErrCorrupt, dev, length))
		case uint64(nc) != length/sb.AllocUnit*bpu:
			d.Fail(fmt.Errorf("%w: extent of %d bytes with %d checksums", encoding.ErrCorrupt, length, nc))
		case loff/sb.AllocUnit < nextLU:
			d.Fail(fmt.Errorf("%w: extents overlap or out of order at %d", encoding.ErrCorrupt, loff))
		}
		if d.Err() != nil {
			break
		}
		csums := make([]uint32, nc)
		for j := range csums {
			csums[j] = d.Uint32()
		}
		lu := loff / sb.AllocUnit
		for j := uint64(0); j < length/sb.AllocUnit; j++ {
			n.Units = append(n.Units, unit{LU: lu + j, Dev: dev + j*sb.AllocUnit, Csums: csums[j*bpu : (j+1)*bpu : (j+1)*bpu]})
		}
		nextLU = lu + length/sb.AllocUnit
	}
	nPages := d.Count(2)
	var prevEnd uint64
	for i := 0; i < nPages && d.Err() == nil; i++ {
		off, length := d.Uvarint(), d.Uvarint()
		switch {
		case length == 0 || off%pageSize != 0 || length%pageSize != 0:
			d.Fail(fmt.Errorf("%w: page span %d+%d not page aligned", encoding.ErrCorrupt, off, length))
		case off > objectstore.MaxObjectSize || length > objectstore.MaxObjectSize+pageSize-off:
			d.Fail(fmt.Errorf("%w: page span %d+%d beyond the maximum object size", encoding.ErrCorrupt, off, length))
		case i > 0 && off <= prevEnd:
			d.Fail(fmt.Errorf("%w: page spans overlap or out of order at %d", encoding.ErrCorrupt, off))
		}
		if d.Err() == nil {
			n.Pages = append(n.Pages, span{off, off + length})
			prevEnd = off + length
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("%w: object record: %w", objectstore.ErrCorrupt, err)
	}
	if n.Nid == 0 {
		return nil, fmt.Errorf("%w: object record with node id 0", objectstore.ErrCorrupt)
	}
	if n.Size > objectstore.MaxObjectSize {
		return nil, fmt.Errorf("%w: object record with size %d", objectstore.ErrCorrupt, n.Size)
	}
	return n, nil
}
