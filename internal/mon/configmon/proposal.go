package configmon

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// op is what a proposal does.
type op uint8

const (
	opSet op = 1
	opRm  op = 2
)

// proposal is one change of the database:
//
//	envelope v1 { base uvarint, op u8, section string, name string, value string }
//
// base is the database version Prepare validated against.
type proposal struct {
	base    uint64
	op      op
	section string
	name    string
	value   string
}

func (p proposal) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(p.base)
	e.Uint8(uint8(p.op))
	e.String(p.section)
	e.String(p.name)
	e.String(p.value)
	e.End(m)
	return e.Data()
}

// decodeProposal reads what encode wrote; hostile input gives an error.
func decodeProposal(b []byte) (proposal, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	p := proposal{base: d.Uvarint(), op: op(d.Uint8()),
		section: d.String(maxSection), name: d.String(maxSection), value: d.String(maxValue)}
	if d.Err() == nil {
		switch {
		case p.op != opSet && p.op != opRm:
			d.Fail(fmt.Errorf("%w: op %d", encoding.ErrCorrupt, p.op))
		case checkSection(p.section) != nil || p.name == "":
			d.Fail(fmt.Errorf("%w: bad entry %q/%q", encoding.ErrCorrupt, p.section, p.name))
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return proposal{}, fmt.Errorf("configmon: proposal: %w", err)
	}
	return p, nil
}
