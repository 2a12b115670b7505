package osdmon

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// kind says what a proposal's body is.
type kind uint8

const (
	kindCreate kind = 1 // the first map, whole
	kindInc    kind = 2 // an incremental on the map at base
)

// proposal is one new epoch:
//
//	envelope v2 (compat 2) {
//	  kind u8, base u32,
//	  body bytes            full map (create) or incremental, MarshalBinary form
//	  meta count uvarint, (id varint, remove bool, uuid string,
//	                       down_since varint, boot nonce u64) * count, by id
//	  status string, data bytes, text string     the reply to the client
//	}
//
// base is the epoch Prepare read (0 for create). The reply is computed at
// Prepare so that every monitor answers the same. Version 1 had no boot
// nonce; it still decodes.
type proposal struct {
	kind  kind
	base  osdmap.Epoch
	body  []byte
	meta  []metaChange
	reply moncmd.Reply
}

// Limits on decoded proposals.
const (
	maxBody   = 64 << 20
	maxStatus = 64 << 10
	maxData   = 16 << 20
)

func (p *proposal) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(2, 2)
	e.Uint8(uint8(p.kind))
	e.Uint32(uint32(p.base))
	e.Bytes(p.body)
	e.Uvarint(uint64(len(p.meta)))
	for _, c := range p.meta {
		e.Varint(int64(c.id))
		e.Bool(c.remove)
		e.String(c.meta.UUID)
		encodeTime(&e, c.meta.DownSince)
		e.Uint64(c.meta.Nonce)
	}
	e.String(p.reply.Status)
	e.Bytes(p.reply.Data)
	e.String(p.reply.Text)
	e.End(m)
	return e.Data()
}

// decodeProposal reads what encode wrote. It checks the envelope and the
// fields it can check alone; Apply checks the body against the map.
func decodeProposal(b []byte) (*proposal, error) {
	d := encoding.NewDecoder(b)
	version := d.Begin(2)
	p := &proposal{kind: kind(d.Uint8()), base: osdmap.Epoch(d.Uint32()), body: d.Bytes(maxBody)}
	if d.Err() == nil && p.kind != kindCreate && p.kind != kindInc {
		d.Fail(fmt.Errorf("%w: proposal kind %d", encoding.ErrCorrupt, p.kind))
	}
	n := d.Count(4)
	prev := int32(-1)
	for i := 0; i < n && d.Err() == nil; i++ {
		id := d.Varint()
		c := metaChange{remove: d.Bool()}
		c.meta.UUID = d.String(maxUUID)
		c.meta.DownSince = decodeTime(d)
		if version >= 2 {
			c.meta.Nonce = d.Uint64()
		}
		if d.Err() == nil && (id <= int64(prev) || id >= osdmap.MaxOSDs) {
			d.Fail(fmt.Errorf("%w: meta osd id %d", encoding.ErrCorrupt, id))
		}
		c.id, prev = int32(id), int32(id)
		p.meta = append(p.meta, c)
	}
	p.reply.Status = d.String(maxStatus)
	p.reply.Data = d.Bytes(maxData)
	p.reply.Text = d.String(maxData)
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("osdmon: proposal: %w", err)
	}
	return p, nil
}
