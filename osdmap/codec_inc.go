package osdmap

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
)

// Encode appends inc to e:
//
//	version 1: fsid 16 bytes, epoch u32, modified; then each optional
//	field as a bool and, if set, its value: flags, crush (bytes), max_osd,
//	pool_max; new pools (count, envelopes), old pools (count, ids), new
//	OSDs (count, id and envelope each), new pg_temp, new primary_temp,
//	new pg_upmap, old pg_upmap, new pg_upmap_items, old pg_upmap_items
//	version 2 appends new nearfull_ratio, new backfillfull_ratio, new
//	full_ratio (each a bool and, if set, float32 bits u32). An
//	incremental that changes a ratio has compat 2, so that a version 1
//	decoder refuses it rather than drop the change; one that changes none
//	keeps compat 1.
//	version 3 appends the new blocklist entries (count, then address
//	string and expiry time each) and the removed ones (count, address
//	string each); an incremental that changes the blocklist has compat 3,
//	so an older decoder refuses it rather than drop a fence.
func (inc *Incremental) Encode(e *encoding.Encoder) error {
	var crushBytes []byte
	if inc.NewCrush != nil {
		var err error
		if crushBytes, err = inc.NewCrush.MarshalBinary(); err != nil {
			return fmt.Errorf("osdmap: encode incremental %d: %w", inc.Epoch, err)
		}
	}
	compat := uint8(1)
	if inc.NewNearFullRatio != nil || inc.NewBackfillFullRatio != nil || inc.NewFullRatio != nil {
		compat = 2
	}
	if len(inc.NewBlocklist) > 0 || len(inc.OldBlocklist) > 0 {
		compat = 3
	}
	mark := e.Begin(incVersion, compat)
	encodeFSID(e, inc.FSID)
	e.Uint32(uint32(inc.Epoch))
	encodeTime(e, inc.Modified)
	e.Bool(inc.NewFlags != nil)
	if inc.NewFlags != nil {
		e.Uvarint(uint64(*inc.NewFlags))
	}
	e.Bool(inc.NewCrush != nil)
	if inc.NewCrush != nil {
		e.Bytes(crushBytes)
	}
	e.Bool(inc.NewMaxOSD != nil)
	if inc.NewMaxOSD != nil {
		e.Varint(int64(*inc.NewMaxOSD))
	}
	e.Bool(inc.NewPoolMax != nil)
	if inc.NewPoolMax != nil {
		e.Varint(*inc.NewPoolMax)
	}
	e.Uvarint(uint64(len(inc.NewPools)))
	for i := range inc.NewPools {
		encodePool(e, &inc.NewPools[i])
	}
	e.Uvarint(uint64(len(inc.OldPools)))
	for _, id := range inc.OldPools {
		e.Varint(id)
	}
	e.Uvarint(uint64(len(inc.NewOSDs)))
	for _, id := range slices.Sorted(maps.Keys(inc.NewOSDs)) {
		e.Varint(int64(id))
		o := inc.NewOSDs[id]
		encodeOSD(e, &o)
	}
	encodeListMap(e, inc.NewPGTemp, encodeOSDList)
	e.Uvarint(uint64(len(inc.NewPrimaryTemp)))
	for _, pg := range sortedPGs(inc.NewPrimaryTemp) {
		encodePG(e, pg)
		e.Varint(int64(inc.NewPrimaryTemp[pg]))
	}
	encodeListMap(e, inc.NewPGUpmap, encodeOSDList)
	encodePGList(e, inc.OldPGUpmap)
	encodeListMap(e, inc.NewPGUpmapItems, encodeUpmapItems)
	encodePGList(e, inc.OldPGUpmapItems)
	for _, r := range []*float32{inc.NewNearFullRatio, inc.NewBackfillFullRatio, inc.NewFullRatio} {
		e.Bool(r != nil)
		if r != nil {
			encodeRatio(e, *r)
		}
	}
	encodeBlocklist(e, inc.NewBlocklist)
	old := slices.Sorted(slices.Values(inc.OldBlocklist))
	e.Uvarint(uint64(len(old)))
	for _, a := range old {
		e.String(a)
	}
	e.End(mark)
	return nil
}

// DecodeIncremental reads an incremental written by Encode and checks it
// on its own terms (Apply checks it against the map). Errors are recorded
// in d; on error DecodeIncremental returns nil.
func DecodeIncremental(d *encoding.Decoder) *Incremental {
	inc := &Incremental{}
	version := d.Begin(incVersion)
	inc.FSID = decodeFSID(d)
	inc.Epoch = Epoch(d.Uint32())
	inc.Modified = decodeTime(d)
	if d.Bool() {
		f := Flags(decodeU32(d))
		inc.NewFlags = &f
	}
	if d.Bool() {
		inc.NewCrush = decodeCrush(d)
	}
	if d.Bool() {
		n := decodeI32(d)
		inc.NewMaxOSD = &n
	}
	if d.Bool() {
		n := d.Varint()
		inc.NewPoolMax = &n
	}
	if n := d.Count(16); n > 0 {
		inc.NewPools = make([]Pool, n)
		for i := range inc.NewPools {
			inc.NewPools[i] = decodePool(d)
		}
	}
	if n := d.Count(1); n > 0 {
		inc.OldPools = make([]int64, n)
		for i := range inc.OldPools {
			inc.OldPools[i] = d.Varint()
		}
	}
	if n := d.Count(14); n > 0 {
		inc.NewOSDs = make(map[int32]OSD, n)
		for range n {
			id := decodeI32(d)
			if _, dup := inc.NewOSDs[id]; dup {
				d.Fail(fmt.Errorf("osdmap: osd.%d listed twice: %w", id, encoding.ErrCorrupt))
			}
			inc.NewOSDs[id] = decodeOSD(d)
			if d.Err() != nil {
				break
			}
		}
	}
	inc.NewPGTemp = nilIfEmpty(decodeListMap(d, decodeOSDList))
	if n := d.Count(3); n > 0 {
		inc.NewPrimaryTemp = make(map[PG]int32, n)
		for range n {
			pg := decodePG(d)
			if _, dup := inc.NewPrimaryTemp[pg]; dup {
				d.Fail(fmt.Errorf("osdmap: primary_temp %s twice: %w", pg, encoding.ErrCorrupt))
			}
			inc.NewPrimaryTemp[pg] = decodeI32(d)
		}
	}
	inc.NewPGUpmap = nilIfEmpty(decodeListMap(d, decodeOSDList))
	inc.OldPGUpmap = decodePGList(d)
	inc.NewPGUpmapItems = nilIfEmpty(decodeListMap(d, decodeUpmapItems))
	inc.OldPGUpmapItems = decodePGList(d)
	if version >= 2 {
		for _, r := range []**float32{&inc.NewNearFullRatio, &inc.NewBackfillFullRatio, &inc.NewFullRatio} {
			if d.Bool() {
				v := decodeRatio(d)
				*r = &v
			}
		}
	}
	if version >= 3 {
		inc.NewBlocklist = decodeBlocklist(d)
		n := d.Count(1)
		if n > MaxBlocklist {
			d.Fail(fmt.Errorf("osdmap: %d blocklist removals: %w", n, encoding.ErrCorrupt))
		}
		for i := 0; i < n && d.Err() == nil; i++ {
			inc.OldBlocklist = append(inc.OldBlocklist, d.String(MaxBlocklistAddr))
		}
	}
	d.End()
	if d.Err() != nil {
		return nil
	}
	if err := inc.validate(); err != nil {
		d.Fail(fmt.Errorf("%w: %w", encoding.ErrCorrupt, err))
		return nil
	}
	return inc
}

func nilIfEmpty[K comparable, V any](m map[K]V) map[K]V {
	if len(m) == 0 {
		return nil
	}
	return m
}

// validate checks what an incremental must satisfy whatever map it
// applies to.
func (inc *Incremental) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: incremental %d: %s", ErrInvalidMap, inc.Epoch, fmt.Sprintf(format, args...))
	}
	if err := checkTime("modified", inc.Modified); err != nil {
		return bad("%v", err)
	}
	for _, r := range []*float32{inc.NewNearFullRatio, inc.NewBackfillFullRatio, inc.NewFullRatio} {
		if r != nil {
			if err := CheckRatio("ratio", *r); err != nil {
				return bad("%v", err)
			}
		}
	}
	for a, exp := range inc.NewBlocklist {
		if err := checkBlocklistAddr(a); err != nil {
			return bad("%v", err)
		}
		if err := checkTime("blocklist expiry", exp); err != nil {
			return bad("%v", err)
		}
	}
	for _, a := range inc.OldBlocklist {
		if err := checkBlocklistAddr(a); err != nil {
			return bad("%v", err)
		}
	}
	if inc.NewMaxOSD != nil && (*inc.NewMaxOSD < 0 || *inc.NewMaxOSD > MaxOSDs) {
		return bad("max_osd %d out of [0, %d]", *inc.NewMaxOSD, MaxOSDs)
	}
	ids := map[int64]bool{}
	for i := range inc.NewPools {
		p := &inc.NewPools[i]
		if err := p.validate(); err != nil {
			return bad("%v", err)
		}
		if ids[p.ID] {
			return bad("pool %d given twice", p.ID)
		}
		ids[p.ID] = true
	}
	for id, o := range inc.NewOSDs {
		if id < 0 || id >= MaxOSDs {
			return bad("osd id %d out of range", id)
		}
		if err := o.validate(id); err != nil {
			return bad("%v", err)
		}
	}
	for pg, osds := range inc.NewPGTemp {
		if len(osds) > 0 {
			if err := checkOSDList("pg_temp", pg, osds); err != nil {
				return bad("%v", err)
			}
		}
	}
	for pg, osd := range inc.NewPrimaryTemp {
		if osd < -1 {
			return bad("primary_temp %s: bad osd %d", pg, osd)
		}
	}
	for pg, osds := range inc.NewPGUpmap {
		if err := checkOSDList("pg_upmap", pg, osds); err != nil {
			return bad("%v", err)
		}
	}
	for pg, items := range inc.NewPGUpmapItems {
		if len(items) == 0 || len(items) > MaxPoolSize {
			return bad("pg_upmap_items %s: %d items", pg, len(items))
		}
		for _, it := range items {
			if it.From < 0 || it.To < 0 {
				return bad("pg_upmap_items %s: bad osd ids %d -> %d", pg, it.From, it.To)
			}
		}
	}
	return nil
}

// MarshalBinary encodes inc with a leading magic.
func (inc *Incremental) MarshalBinary() ([]byte, error) {
	var e encoding.Encoder
	for _, b := range incMagic {
		e.Uint8(b)
	}
	if err := inc.Encode(&e); err != nil {
		return nil, err
	}
	return e.Data(), nil
}

// UnmarshalIncremental decodes what Incremental.MarshalBinary wrote.
func UnmarshalIncremental(data []byte) (*Incremental, error) {
	if !bytes.HasPrefix(data, incMagic) {
		return nil, fmt.Errorf("osdmap: decode incremental: missing magic %q: %w", incMagic, encoding.ErrCorrupt)
	}
	d := encoding.NewDecoder(data[len(incMagic):])
	inc := DecodeIncremental(d)
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("osdmap: decode incremental: %w", err)
	}
	return inc, nil
}
