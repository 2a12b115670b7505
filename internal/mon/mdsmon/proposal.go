package mdsmon

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// proposal is a change of the map: the whole next map, what happened,
// the addresses to fence, the reply's status and, for a beacon, the
// beacon (its reply is built from the map as applied); or, with no next
// map, fences the OSD map now carries, to retire (fences.go):
//
//	envelope v2 (compat 1) {
//	  base u32, next bytes (mdsmap encoding; empty: no map change),
//	  status string, events count uvarint, string each;
//	  fence count uvarint, string each,
//	  has_beacon bool, [beacon bytes (wire.MDSBeacon encoding)],
//	  v2: fenced count uvarint, string each
//	}
type proposal struct {
	base   mdsmap.Epoch
	next   []byte
	status string
	events []string
	fence  []string
	beacon *wire.MDSBeacon
	fenced []string
}

// Limits on a decoded proposal.
const (
	maxMapBytes = 16 << 20
	maxText     = 64 << 10
	maxEvents   = 1 << 12
)

func (p proposal) encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	e.Uint32(uint32(p.base))
	e.Bytes(p.next)
	e.String(p.status)
	e.Uvarint(uint64(len(p.events)))
	for _, s := range p.events {
		e.String(s)
	}
	e.Uvarint(uint64(len(p.fence)))
	for _, s := range p.fence {
		e.String(s)
	}
	e.Bool(p.beacon != nil)
	if p.beacon != nil {
		e.Bytes(p.beacon.Encode())
	}
	e.Uvarint(uint64(len(p.fenced)))
	for _, s := range p.fenced {
		e.String(s)
	}
	e.End(mk)
	return e.Data()
}

func decodeProposal(b []byte) (proposal, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	p := proposal{base: mdsmap.Epoch(d.Uint32()), next: d.Bytes(maxMapBytes), status: d.String(maxText)}
	p.events = decodeStrings(d)
	p.fence = decodeStrings(d)
	var raw []byte
	if d.Bool() {
		raw = d.Bytes(maxText)
	}
	if v >= 2 {
		p.fenced = decodeStrings(d)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return proposal{}, fmt.Errorf("mdsmon: proposal: %w", err)
	}
	if raw != nil {
		bc, err := wire.DecodeMDSBeacon(raw)
		if err != nil {
			return proposal{}, fmt.Errorf("mdsmon: proposal: %w", err)
		}
		p.beacon = &bc
	}
	return p, nil
}

func decodeStrings(d *encoding.Decoder) []string {
	n := d.Count(1)
	if n > maxEvents {
		d.Fail(fmt.Errorf("%w: %d strings", encoding.ErrCorrupt, n))
	}
	var out []string
	for i := 0; i < n && d.Err() == nil; i++ {
		out = append(out, d.String(maxText))
	}
	return out
}
