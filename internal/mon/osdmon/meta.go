package osdmon

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/osdmap"
)

// osdMeta is what the service keeps about an OSD beyond the map.
type osdMeta struct {
	// UUID is the OSD's identity given to "osd create" (canonical
	// lowercase form), or empty.
	UUID string
	// DownSince is when the OSD was last marked down (or created, or
	// marked in while down), from the leader's clock in the proposal;
	// zero while the OSD is up.
	DownSince time.Time
	// Nonce identifies the OSD process that booted last (a random
	// number per start): a boot with another nonce is a restart, even at
	// the same address, and gets a new up_from epoch so that peers see
	// a new interval.
	Nonce uint64
}

// metaTable holds osdMeta by OSD id. It is replaced, never changed, once
// applied.
type metaTable map[int32]osdMeta

// metaChange sets (or, with remove, deletes) one OSD's entry.
type metaChange struct {
	id     int32
	remove bool
	meta   osdMeta
}

// with returns the table after changes.
func (t metaTable) with(changes []metaChange) metaTable {
	out := maps.Clone(t)
	if out == nil {
		out = metaTable{}
	}
	for _, c := range changes {
		if c.remove {
			delete(out, c.id)
		} else {
			out[c.id] = c.meta
		}
	}
	return out
}

// byUUID returns the OSD with the given uuid.
func (t metaTable) byUUID(uuid string) (int32, bool) {
	for _, id := range slices.Sorted(maps.Keys(t)) {
		if t[id].UUID == uuid {
			return id, true
		}
	}
	return 0, false
}

const maxUUID = 36

// encodeTime stores a time as Unix nanoseconds, 0 for the zero time.
func encodeTime(e *encoding.Encoder, t time.Time) {
	if t.IsZero() {
		e.Varint(0)
		return
	}
	e.Varint(t.UnixNano())
}

func decodeTime(d *encoding.Decoder) time.Time {
	if n := d.Varint(); n != 0 {
		return time.Unix(0, n).UTC()
	}
	return time.Time{}
}

func encodeMetaEntry(e *encoding.Encoder, id int32, m osdMeta) {
	e.Varint(int64(id))
	e.String(m.UUID)
	encodeTime(e, m.DownSince)
	e.Uint64(m.Nonce)
}

// decodeMetaEntry reads an entry of a table of the given version (1 had
// no nonce).
func decodeMetaEntry(d *encoding.Decoder, version uint8) (int32, osdMeta) {
	id := d.Varint()
	if d.Err() == nil && (id < 0 || id >= osdmap.MaxOSDs) {
		d.Fail(fmt.Errorf("%w: osd id %d", encoding.ErrCorrupt, id))
	}
	m := osdMeta{UUID: d.String(maxUUID)}
	m.DownSince = decodeTime(d)
	if version >= 2 {
		m.Nonce = d.Uint64()
	}
	return int32(id), m
}

// encode writes the table: envelope v2 (compat 2) { count uvarint, (id
// varint, uuid string, down_since varint unix nanoseconds or 0, boot
// nonce u64) * count } by id. Version 1 had no nonce.
func (t metaTable) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(2, 2)
	ids := slices.Sorted(maps.Keys(t))
	e.Uvarint(uint64(len(ids)))
	for _, id := range ids {
		encodeMetaEntry(&e, id, t[id])
	}
	e.End(m)
	return e.Data()
}

func decodeMeta(b []byte) (metaTable, error) {
	d := encoding.NewDecoder(b)
	version := d.Begin(2)
	n := d.Count(3)
	t := make(metaTable, n)
	prev := int32(-1)
	for i := 0; i < n && d.Err() == nil; i++ {
		id, m := decodeMetaEntry(d, version)
		if d.Err() == nil && id <= prev {
			d.Fail(fmt.Errorf("%w: osd ids out of order", encoding.ErrCorrupt))
		}
		prev, t[id] = id, m
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("osdmon: meta: %w", err)
	}
	return t, nil
}

// sortChanges orders changes by id, keeping the last change of each id.
func sortChanges(ch map[int32]metaChange) []metaChange {
	out := slices.Collect(maps.Values(ch))
	slices.SortFunc(out, func(a, b metaChange) int { return cmp.Compare(a.id, b.id) })
	return out
}
