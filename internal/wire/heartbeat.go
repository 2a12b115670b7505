package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// OSDPing is a heartbeat between two OSDs that share PGs, or the answer
// to one (Reply). Any message from a peer proves it alive; a ping is sent
// only to a peer that has been quiet. Stamp is the pinger's clock when it
// sent the ping (Unix nanoseconds), echoed in the reply so the pinger can
// tell the round trip; Epoch is the sender's OSD map epoch.
type OSDPing struct {
	Reply bool
	Epoch uint64
	Stamp int64
}

// Encode encodes m (version 1).
func (m OSDPing) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Bool(m.Reply)
	e.Uvarint(m.Epoch)
	e.Varint(m.Stamp)
	e.End(mk)
	return e.Data()
}

// DecodeOSDPing decodes an OSDPing.
func DecodeOSDPing(b []byte) (OSDPing, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := OSDPing{Reply: d.Bool(), Epoch: d.Uvarint(), Stamp: d.Varint()}
	d.End()
	if err := d.Finish(); err != nil {
		return OSDPing{}, fmt.Errorf("wire: osd ping: %w", err)
	}
	return m, nil
}
