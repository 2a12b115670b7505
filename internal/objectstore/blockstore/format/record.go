package format

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// Limits the record decoder enforces on hostile input.
const (
	maxAttrName  = 4096
	maxAttrValue = 64 << 20
	maxHeader    = 64 << 20
)

// Unit maps one allocation unit of an object's logical space to device
// space. The object's bytes [LU*AllocUnit, (LU+1)*AllocUnit) live at
// [Dev, Dev+AllocUnit), with one crc32c per checksum block. Bytes of a
// mapped unit beyond the object's size are always zero.
type Unit struct {
	LU  uint64
	Dev uint64
	// The checksums: sum when the unit has one checksum block (OSD stores
	// use 4 KiB units and blocks), else sums, one per block, immutable
	// once the unit is in a record. A one-block unit thus holds no
	// pointer: a record of a 4 MiB object has 1,024 units, and the
	// pointers of records in the cache and in flight cost every
	// collection a visit each (a third of an OSD's CPU under 4 MiB
	// writes went to the collector while each unit had a slice).
	sum  uint32
	sums []uint32
}

// MakeUnit returns the unit mapping lu to dev with checksums cs, which it
// keeps.
func MakeUnit(lu, dev uint64, cs []uint32) Unit {
	u := Unit{LU: lu, Dev: dev}
	u.SetSums(cs)
	return u
}

// BlankUnit returns the unit mapping lu to dev with n checksum blocks,
// their sums zero until setSum sets them. A one-block unit allocates
// nothing: its sum is inline.
func BlankUnit(lu, dev uint64, n int) Unit {
	u := Unit{LU: lu, Dev: dev}
	if n > 1 {
		u.sums = make([]uint32, n)
	}
	return u
}

// SetSum sets the checksum of u's block b; u is not yet in a record.
func (u *Unit) SetSum(b int, sum uint32) {
	if u.sums != nil {
		u.sums[b] = sum
	} else {
		u.sum = sum
	}
}

// SetSums sets u's checksums to cs, which it keeps.
func (u *Unit) SetSums(cs []uint32) {
	if len(cs) == 1 {
		u.sum, u.sums = cs[0], nil
		return
	}
	u.sum, u.sums = 0, cs
}

// nsums is the number of checksum blocks of u.
func (u *Unit) NumSums() int {
	if u.sums == nil {
		return 1
	}
	return len(u.sums)
}

// csum returns the checksum of u's block b.
func (u *Unit) Sum(b int) uint32 {
	if u.sums == nil && b == 0 {
		return u.sum
	}
	return u.sums[b]
}

// AppendSums appends u's checksums to dst.
func (u *Unit) AppendSums(dst []uint32) []uint32 {
	if u.sums == nil {
		return append(dst, u.sum)
	}
	return append(dst, u.sums...)
}

// Onode is an object record: what the object is, not its data. A
// published Onode (in the cache or the prepare overlay) is immutable;
// change a clone.
type Onode struct {
	Nid        uint64
	Size       uint64
	Attrs      AttrList
	OmapHeader []byte
	// Omap is set once omap entries may exist, so that removing an
	// object without any costs no range deletion.
	Omap  bool
	Units UnitMap
	// Pages are the logically allocated ranges (pages.go), sorted,
	// merged, page aligned. Every page lies in a mapped unit.
	Pages []Span
	// Inline is set when the units are in the record's own value, not
	// under unit keys: a published record says where its units are
	// stored; writeRecord decides it for the record it writes.
	Inline bool
	// Shards is set when the units are under unit shard keys ('V'),
	// ShardUnits to a key; a record neither inline nor sharded was
	// written before shards and has a 'U' key per unit. writeRecord
	// shards every record it writes that is not inline.
	Shards bool
	// Enc is a published inline record's value as stored, shared and
	// read only, which the record cache keeps in place of the decoded
	// record; nil if not known.
	Enc []byte
}

// MaxInlineUnits is the most units a record keeps in its own value. A
// small object then costs one Pebble key instead of two, and reading its
// record one point lookup instead of a lookup and an iterator (a third
// of the cost of a record-cache miss); a larger one keeps its units in
// shard keys so that a small overwrite rewrites one shard, not the whole
// extent map.
const MaxInlineUnits = 16

// ShardUnits is the number of logical units one shard key covers:
// 256 KiB of an object with the OSD's 4 KiB units. A 4 MiB object then
// costs 16 keys, not 1,024: a key per unit made Pebble's compactions a
// fifth of the CPU of replicated 4 MiB writes. A small overwrite of a
// large object rewrites one shard, about 700 bytes.
const ShardUnits = 64

// KeyedUnits returns the units n has under unit or shard keys: nil (none)
// if inline. The caller must not change them.
func (n *Onode) KeyedUnits() *UnitMap {
	if n.Inline {
		return nil
	}
	return &n.Units
}

func (n *Onode) Clone() *Onode {
	c := *n
	c.Enc = nil
	c.Attrs = slices.Clone(n.Attrs)
	c.Units = n.Units.Clone()
	c.Pages = slices.Clone(n.Pages)
	return &c
}

// sameHeader reports whether a and b have the same record header: every
// field but the units.
func sameHeader(a, b *Onode) bool {
	return a.Nid == b.Nid && a.Size == b.Size && bytes.Equal(a.OmapHeader, b.OmapHeader) && a.Omap == b.Omap &&
		slices.Equal(a.Pages, b.Pages) && a.Attrs.equal(b.Attrs)
}

// SameValue reports whether records a and b encode to the same value
// under the object's key: the same header and, if b is inline, the same
// units kept the same way.
func SameValue(a, b *Onode) bool {
	if a.Inline != b.Inline || a.Shards != b.Shards || !sameHeader(a, b) {
		return false
	}
	return !b.Inline || a.Units.equal(&b.Units)
}

// sameUnit reports whether a and b are the same mapping with the same
// checksums. Checksum slices are immutable once in a record, so a unit
// whose checksums changed has a new slice.
func sameUnit(a, b Unit) bool {
	if a.LU != b.LU || a.Dev != b.Dev || a.sum != b.sum || len(a.sums) != len(b.sums) {
		return false
	}
	return len(a.sums) == 0 || &a.sums[0] == &b.sums[0] || slices.Equal(a.sums, b.sums)
}

// AllocatedBytes is the length of the allocated pages below Size:
// ObjectInfo.Allocated and the object's contribution to Stored.
func (n *Onode) AllocatedBytes() uint64 {
	var total uint64
	for _, x := range n.Pages { // clipSpans(n.Pages, 0, n.Size), without its slice
		if hi := min(x.End, n.Size); x.Off < hi {
			total += hi - x.Off
		}
	}
	return total
}

// ApproxSize estimates the Go heap an Onode holds, for the cache budget
// (TestRecordCacheAccounting compares it with the heap). Small records
// are mostly overhead: a map of attributes costs a few hundred bytes
// before its first entry's name and value.
func (n *Onode) ApproxSize() int {
	return 112 + len(n.OmapHeader) + 16*len(n.Pages) + n.Attrs.approxSize() + n.Units.approxSize()
}

func roundUp8(n int) int { return (n + 7) &^ 7 }

// Records are stored in two parts (format.go): the header under the
// object's key, and the units of a large object in shard keys under the
// node id, so that an overwrite inside the object rewrites one shard
// instead of the whole extent map.

// Encode encodes the value under the object's key: everything but
// the units unless n is inline.
//
//	version 5 (compat 2, 4 if inline, 5 if sharded): nid uvarint, size uvarint,
//	  attrs count, then (name string, value bytes) in name order,
//	  omap header bytes,
//	  allocated page spans count, then (offset, length uvarints),
//	  flags uvarint (headerFlagOmap, headerFlagInline, headerFlagShards;
//	  absent in version 2),
//	  if inline: units count, then per unit (LU uvarint, device offset
//	  uvarint, count of crc32c u32s, the crcs), LU ascending
//
// A record with neither inline units nor shards reads the same to a
// version 3 decoder (it skips nothing); one with either must not be read
// by a decoder that would take it for an object without data, hence
// compat 4 and 5.
func (n *Onode) Encode() []byte {
	var e encoding.Encoder
	compat := uint8(recordVersion)
	switch {
	case n.Inline:
		compat = inlineVersion
	case n.Shards:
		compat = shardVersion
	}
	m := e.Begin(headerVersion, compat)
	e.Uvarint(n.Nid)
	e.Uvarint(n.Size)
	e.Uvarint(uint64(len(n.Attrs)))
	for _, a := range n.Attrs {
		e.String(a.Name)
		e.Bytes(a.Value)
	}
	e.Bytes(n.OmapHeader)
	e.Uvarint(uint64(len(n.Pages)))
	for _, x := range n.Pages {
		e.Uvarint(x.Off)
		e.Uvarint(x.End - x.Off)
	}
	var flags uint64
	if n.Omap {
		flags |= headerFlagOmap
	}
	if n.Inline {
		flags |= headerFlagInline
	}
	if n.Shards {
		flags |= headerFlagShards
	}
	e.Uvarint(flags)
	if n.Inline {
		e.Uvarint(uint64(n.Units.Len()))
		for u := range n.Units.All() {
			e.Uvarint(u.LU)
			appendUnitBody(&e, u)
		}
	}
	e.End(m)
	return e.Data()
}

// recordVersion is the version of unit values, and the oldest version
// of record headers that decoders must understand (compat).
// headerVersion is the version of record values: version 3 appended a
// flags field, which version 2 decoders skip; version 4 (inlineVersion)
// may append the units.
// Version 5 (shardVersion) adds a flag for records whose units are under
// shard keys, which older decoders would take for 'U' keys.
const (
	recordVersion = 2
	headerVersion = 5
	inlineVersion = 4
	shardVersion  = 5
)

// Record flags. headerFlagOmap marks a record whose object may have omap
// entries; headers of version 2 lack flags and are taken to have them.
// headerFlagInline marks a record whose units follow the flags.
// headerFlagShards marks a record whose units are under shard keys.
const (
	headerFlagOmap   = 1
	headerFlagInline = 2
	headerFlagShards = 4
)

// minInlineUnitBytes is the smallest encoding of an inline unit: LU,
// device offset, a count and one checksum.
const minInlineUnitBytes = 7

// DecodeRecord decodes the value under an object's key, checking inline
// units against the geometry. The record's attribute values alias b:
// the caller must own b and never change it.
func DecodeRecord(b []byte, sb Superblock) (*Onode, error) {
	n := &Onode{}
	d := encoding.NewDecoder(b)
	version := d.Begin(headerVersion)
	n.Nid = d.Uvarint()
	n.Size = d.Uvarint()
	if cnt := d.Count(2); cnt > 0 {
		n.Attrs = make(AttrList, 0, cnt)
		for range cnt {
			k := d.String(maxAttrName)
			v := d.BytesRef(maxAttrValue)
			if d.Err() != nil {
				break
			}
			if i := len(n.Attrs); i > 0 && n.Attrs[i-1].Name >= k {
				d.Fail(fmt.Errorf("%w: attribute %q out of order or twice", encoding.ErrCorrupt, k))
				break
			}
			n.Attrs = append(n.Attrs, Attr{k, v})
		}
	}
	n.OmapHeader = d.BytesRef(maxHeader)
	n.Pages = decodePages(d)
	n.Omap = true
	if version >= 3 {
		flags := d.Uvarint()
		n.Omap = flags&headerFlagOmap != 0
		n.Shards = flags&headerFlagShards != 0
		if flags&headerFlagInline != 0 {
			n.Inline = true
			if n.Shards {
				d.Fail(fmt.Errorf("%w: record both inline and sharded", encoding.ErrCorrupt))
			}
			n.Units = MakeUnitMap(decodeInlineUnits(d, sb))
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

// decodePages decodes a record's allocated page spans.
func decodePages(d *encoding.Decoder) []Span {
	var pages []Span
	nPages := d.Count(2)
	var prevEnd uint64
	for i := 0; i < nPages && d.Err() == nil; i++ {
		off, length := d.Uvarint(), d.Uvarint()
		switch {
		case length == 0 || off%PageSize != 0 || length%PageSize != 0:
			d.Fail(fmt.Errorf("%w: page span %d+%d not page aligned", encoding.ErrCorrupt, off, length))
		case off > objectstore.MaxObjectSize || length > objectstore.MaxObjectSize+PageSize-off:
			d.Fail(fmt.Errorf("%w: page span %d+%d beyond the maximum object size", encoding.ErrCorrupt, off, length))
		case i > 0 && off <= prevEnd:
			d.Fail(fmt.Errorf("%w: page spans overlap or out of order at %d", encoding.ErrCorrupt, off))
		}
		if d.Err() == nil {
			pages = append(pages, Span{off, off + length})
			prevEnd = off + length
		}
	}
	return pages
}

// decodeInlineUnits decodes the units of an inline record.
func decodeInlineUnits(d *encoding.Decoder, sb Superblock) []Unit {
	cnt := d.Count(minInlineUnitBytes)
	if cnt == 0 {
		return nil
	}
	units := make([]Unit, 0, cnt)
	for range cnt {
		lu := d.Uvarint()
		if n := len(units); d.Err() == nil && n > 0 && lu <= units[n-1].LU {
			d.Fail(fmt.Errorf("%w: unit %d out of order or twice", encoding.ErrCorrupt, lu))
		}
		u := decodeUnitBody(d, lu, sb)
		if d.Err() != nil {
			return nil
		}
		units = append(units, u)
	}
	return units
}

// EncodeUnit encodes a unit's value (its key holds nid and LU):
//
//	version 2: device offset uvarint, count of crc32c u32s, the crcs
func EncodeUnit(u Unit) []byte {
	var e encoding.Encoder
	m := e.Begin(recordVersion, recordVersion)
	appendUnitBody(&e, u)
	e.End(m)
	return e.Data()
}

// appendUnitBody encodes a unit's device offset and checksums.
func appendUnitBody(e *encoding.Encoder, u Unit) {
	e.Uvarint(u.Dev)
	e.Uvarint(uint64(u.NumSums()))
	for b := range u.NumSums() {
		e.Uint32(u.Sum(b))
	}
}

// DecodeUnit decodes logical unit lu's value, checking it against the
// geometry: unit aligned, on the device, one checksum per block.
func DecodeUnit(lu uint64, b []byte, sb Superblock) (Unit, error) {
	d := encoding.NewDecoder(b)
	d.Begin(recordVersion)
	u := decodeUnitBody(d, lu, sb)
	d.End()
	if err := d.Finish(); err != nil {
		return u, fmt.Errorf("%w: unit value: %w", objectstore.ErrCorrupt, err)
	}
	return u, nil
}

// decodeUnitBody decodes what appendUnitBody wrote for logical unit lu
// and checks it against the geometry, failing d if it does not fit.
func decodeUnitBody(d *encoding.Decoder, lu uint64, sb Superblock) Unit {
	u := Unit{LU: lu}
	u.Dev = d.Uvarint()
	nc := d.Count(4)
	if d.Err() == nil && uint64(nc) != uint64(sb.BlocksPerUnit()) {
		d.Fail(fmt.Errorf("%w: unit %d with %d checksums, want %d", encoding.ErrCorrupt, lu, nc, sb.BlocksPerUnit()))
	}
	if d.Err() != nil {
		return u
	}
	if nc == 1 {
		u.sum = d.Uint32()
	} else {
		cs := make([]uint32, nc)
		for j := range cs {
			cs[j] = d.Uint32()
		}
		u.SetSums(cs)
	}
	switch {
	case u.Dev%sb.AllocUnit != 0 || u.Dev > sb.Size-sb.AllocUnit:
		d.Fail(fmt.Errorf("%w: unit %d at device offset %d: not a unit of the device", encoding.ErrCorrupt, lu, u.Dev))
	case lu > objectstore.MaxObjectSize/sb.AllocUnit:
		d.Fail(fmt.Errorf("%w: unit %d beyond the maximum object size", encoding.ErrCorrupt, lu))
	}
	return u
}

// EncodeShard encodes the value of a unit shard key: units, all of the
// shard at base and in LU order.
//
//	version 1: count, then per unit (LU - base uvarint, device offset
//	  uvarint, count of crc32c u32s, the crcs)
func EncodeShard(units []Unit, base uint64) []byte {
	var e encoding.Encoder
	m := e.Begin(shardValueVersion, shardValueVersion)
	e.Uvarint(uint64(len(units)))
	for _, u := range units {
		e.Uvarint(u.LU - base)
		appendUnitBody(&e, u)
	}
	e.End(m)
	return e.Data()
}

const shardValueVersion = 1

// DecodeShard appends to units those of the shard value b at base,
// checking them against the geometry and their order.
func DecodeShard(units []Unit, b []byte, base uint64, sb Superblock) ([]Unit, error) {
	d := encoding.NewDecoder(b)
	d.Begin(shardValueVersion)
	cnt := d.Count(minInlineUnitBytes)
	if d.Err() == nil && cnt == 0 {
		d.Fail(fmt.Errorf("%w: empty unit shard", encoding.ErrCorrupt))
	}
	first := len(units)
	for range cnt {
		off := d.Uvarint()
		switch {
		case d.Err() != nil:
		case off >= ShardUnits:
			d.Fail(fmt.Errorf("%w: unit %d of a %d-unit shard", encoding.ErrCorrupt, off, ShardUnits))
		case len(units) > first && base+off <= units[len(units)-1].LU:
			d.Fail(fmt.Errorf("%w: unit %d out of order or twice", encoding.ErrCorrupt, base+off))
		}
		u := decodeUnitBody(d, base+off, sb)
		if d.Err() != nil {
			break
		}
		units = append(units, u)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return units[:first], fmt.Errorf("%w: unit shard: %w", objectstore.ErrCorrupt, err)
	}
	return units, nil
}

// ShardRange returns the key bounds of node nid's unit shards.
func ShardRange(nid uint64) (lo, hi []byte) {
	lo = shardPrefix(nid)
	return lo, PrefixEnd(lo)
}

// UnitRange returns the key bounds of node nid's units.
func UnitRange(nid uint64) (lo, hi []byte) {
	lo = unitPrefix(nid)
	return lo, PrefixEnd(lo)
}
