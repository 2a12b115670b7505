package authmon

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/auth"
)

// op is what a proposal does.
type op uint8

const (
	opAdd    op = 1 // create one entity with the key Prepare drew
	opCaps   op = 2 // replace one entity's caps (no key)
	opRm     op = 3 // remove one entity (name only)
	opImport op = 4 // put entities with their keys and caps
	opRotate op = 5 // replace services' rotating keys
)

func (o op) String() string {
	switch o {
	case opAdd:
		return "add"
	case opCaps:
		return "caps"
	case opRm:
		return "rm"
	case opImport:
		return "import"
	case opRotate:
		return "rotate"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Proposal flags.
const (
	flagShow      = 1 << 0 // opAdd: reply with the entity's keyring (get-or-create)
	flagBootstrap = 1 << 1 // opImport: the seed import; marks the database seeded
)

// namedEntry is one entity of a proposal.
type namedEntry struct {
	name  auth.EntityName
	entry auth.KeyEntry
}

// proposal is one change of the database:
//
//	envelope v1 { base uvarint, op u8, flags u8,
//	              count uvarint, (name string, entry) * count,
//	              sets uvarint, auth.RotatingKeys * sets }
//
// where entry is envelope v1 { key bytes, count uvarint, (service string,
// caps string) * count }. base is the database version Prepare validated
// against. Entities are in name order and rotating sets in service order,
// each unique, so one change has one encoding.
type proposal struct {
	base     uint64
	op       op
	flags    uint8
	entities []namedEntry
	rotating []*auth.RotatingKeys
}

func (p *proposal) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(p.base)
	e.Uint8(uint8(p.op))
	e.Uint8(p.flags)
	e.Uvarint(uint64(len(p.entities)))
	for _, ne := range p.entities {
		e.String(ne.name.String())
		encodeEntry(&e, ne.entry)
	}
	e.Uvarint(uint64(len(p.rotating)))
	for _, r := range p.rotating {
		r.Encode(&e)
	}
	e.End(m)
	return e.Data()
}

// decodeProposal reads what encode wrote and checks the shape each op
// needs; hostile input gives an error.
func decodeProposal(b []byte) (*proposal, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	p := &proposal{base: d.Uvarint(), op: op(d.Uint8()), flags: d.Uint8()}
	n := d.Count(8)
	if n > maxEntities {
		d.Fail(fmt.Errorf("%w: %d entities", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		s := d.String(maxName)
		name, err := parseName(s)
		if d.Err() == nil && err != nil {
			d.Fail(fmt.Errorf("%w: %w", encoding.ErrCorrupt, err))
		}
		entry := decodeEntry(d, p.op == opAdd || p.op == opImport)
		if d.Err() == nil && i > 0 && compareNames(p.entities[i-1].name, name) >= 0 {
			d.Fail(fmt.Errorf("%w: entities out of order at %s", encoding.ErrCorrupt, name))
		}
		p.entities = append(p.entities, namedEntry{name, entry})
	}
	sets := d.Count(8)
	if sets > maxServices {
		d.Fail(fmt.Errorf("%w: %d rotating sets", encoding.ErrCorrupt, sets))
	}
	for i := 0; i < sets && d.Err() == nil; i++ {
		r, err := auth.DecodeRotatingKeys(d)
		if err != nil {
			d.Fail(fmt.Errorf("%w: %w", encoding.ErrCorrupt, err))
			break
		}
		if i > 0 && p.rotating[i-1].Service() >= r.Service() {
			d.Fail(fmt.Errorf("%w: rotating sets out of order at %s", encoding.ErrCorrupt, r.Service()))
		}
		p.rotating = append(p.rotating, r)
	}
	if d.Err() == nil {
		if err := p.check(); err != nil {
			d.Fail(fmt.Errorf("%w: %s: %w", encoding.ErrCorrupt, p.op, err))
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("authmon: proposal: %w", err)
	}
	return p, nil
}

// check validates the shape of an op: how many entities and sets, which
// flags, keys where they belong.
func (p *proposal) check() error {
	one := len(p.entities) == 1 && len(p.rotating) == 0
	switch p.op {
	case opAdd:
		if !one || p.flags&^flagShow != 0 {
			return errors.New("want one entity, flag show only")
		}
	case opCaps, opRm:
		if !one || p.flags != 0 || !p.entities[0].entry.Key.IsZero() {
			return errors.New("want one entity without a key, no flags")
		}
		if p.op == opRm && len(p.entities[0].entry.Caps) != 0 {
			return errors.New("rm carries caps")
		}
	case opImport:
		if len(p.entities) == 0 || len(p.rotating) != 0 || p.flags&^flagBootstrap != 0 {
			return errors.New("want entities, flag bootstrap only")
		}
	case opRotate:
		if len(p.entities) != 0 || len(p.rotating) == 0 || p.flags != 0 {
			return errors.New("want rotating sets only")
		}
	default:
		return errors.New("unknown op")
	}
	return nil
}
