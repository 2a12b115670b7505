package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/objid"
)

// Scrub between the OSDs of a PG (internal/osd/scrub.go): the primary asks
// each member for a scrub map of a range of the PG's objects, and
// compares them with its own.

// ScrubRequest asks a member for its scrub map of the objects in
// [Start, End) (End may be objid.Max()); Deep asks for digests of the
// data and omap too, which means reading everything.
type ScrubRequest struct {
	PGInterval
	Token      uint64 // matches the answer to the request
	Start, End objid.ID
	Deep       bool
}

// ScrubMap is a member's answer: what it holds in the range, in object
// order.
type ScrubMap struct {
	PGInterval
	Token   uint64
	Objects []ScrubObject
}

// ScrubObject is one object of a scrub map.
type ScrubObject struct {
	ID   objid.ID
	Size uint64
	// Version is the version of the object's last write, from its info
	// attribute (zero if unreadable).
	Version Version
	// AttrsDigest covers every attribute, names and values, in order;
	// OmapDigest the omap header, keys and values; DataDigest the data.
	// The last two only in a deep scrub (crc32c).
	AttrsDigest, OmapDigest, DataDigest uint32
	// ReadError says the member could not read the object whole (a
	// checksum mismatch, an I/O error): its copy is bad.
	ReadError string
}

// maxScrubObjects bounds the objects of one scrub map.
const maxScrubObjects = 1 << 16

// Encode encodes m (version 1).
func (m ScrubRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	m.encode(&e)
	e.Uvarint(m.Token)
	m.Start.Encode(&e)
	m.End.Encode(&e)
	e.Bool(m.Deep)
	e.End(mk)
	return e.Data()
}

// DecodeScrubRequest decodes a ScrubRequest.
func DecodeScrubRequest(b []byte) (ScrubRequest, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := ScrubRequest{PGInterval: decodePGInterval(d), Token: d.Uvarint(), Start: objid.Decode(d), End: objid.Decode(d), Deep: d.Bool()}
	d.End()
	if err := d.Finish(); err != nil {
		return ScrubRequest{}, fmt.Errorf("wire: scrub request: %w", err)
	}
	return m, nil
}

// Encode encodes m (version 1).
func (m ScrubMap) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	m.encode(&e)
	e.Uvarint(m.Token)
	e.Uvarint(uint64(len(m.Objects)))
	for _, o := range m.Objects {
		o.ID.Encode(&e)
		e.Uvarint(o.Size)
		e.Uvarint(o.Version.Epoch)
		e.Uvarint(o.Version.Counter)
		e.Uint32(o.AttrsDigest)
		e.Uint32(o.OmapDigest)
		e.Uint32(o.DataDigest)
		e.String(o.ReadError)
	}
	e.End(mk)
	return e.Data()
}

// DecodeScrubMap decodes a ScrubMap.
func DecodeScrubMap(b []byte) (ScrubMap, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := ScrubMap{PGInterval: decodePGInterval(d), Token: d.Uvarint()}
	n := d.Count(1)
	if n > maxScrubObjects {
		d.Fail(fmt.Errorf("%w: %d objects in a scrub map", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		m.Objects = append(m.Objects, ScrubObject{ID: objid.Decode(d), Size: d.Uvarint(),
			Version: Version{Epoch: d.Uvarint(), Counter: d.Uvarint()}, AttrsDigest: d.Uint32(),
			OmapDigest: d.Uint32(), DataDigest: d.Uint32(), ReadError: d.String(maxStatString)})
	}
	d.End()
	if err := d.Finish(); err != nil {
		return ScrubMap{}, fmt.Errorf("wire: scrub map: %w", err)
	}
	return m, nil
}
