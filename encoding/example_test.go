package encoding_test

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// pool is a structure as it might appear in a cluster map. Version 2 added
// Flags; a version 1 decoder still reads a version 2 pool and skips Flags.
type pool struct {
	ID    int64
	Name  string
	OSDs  []int32
	Flags uint64 // since version 2
}

func (p *pool) encode(e *encoding.Encoder) {
	m := e.Begin(2, 1) // version 2, readable by decoders of version 1 and up
	e.Int64(p.ID)
	e.String(p.Name)
	e.Uvarint(uint64(len(p.OSDs)))
	for _, osd := range p.OSDs {
		e.Int32(osd)
	}
	e.Uint64(p.Flags)
	e.End(m)
}

func (p *pool) decode(d *encoding.Decoder) {
	v := d.Begin(2)
	defer d.End()
	p.ID = d.Int64()
	p.Name = d.String(256)
	p.OSDs = make([]int32, d.Count(4)) // each OSD id takes 4 bytes
	for i := range p.OSDs {
		p.OSDs[i] = d.Int32()
	}
	if v >= 2 {
		p.Flags = d.Uint64()
	}
	if p.ID < 0 {
		d.Fail(fmt.Errorf("pool %q: negative id %d: %w", p.Name, p.ID, encoding.ErrCorrupt))
	}
}

func Example() {
	var e encoding.Encoder
	in := pool{ID: 3, Name: "rbd", OSDs: []int32{4, 0, 7}, Flags: 1}
	in.encode(&e)

	var out pool
	d := encoding.NewDecoder(e.Data())
	out.decode(d)
	if err := d.Finish(); err != nil {
		fmt.Println("decode:", err)
		return
	}
	fmt.Printf("%+v\n", out)

	// A truncated copy fails cleanly instead of panicking.
	d = encoding.NewDecoder(e.Data()[:10])
	out.decode(d)
	fmt.Println(d.Finish())
	// Output:
	// {ID:3 Name:rbd OSDs:[4 0 7] Flags:1}
	// encoding: truncated input: envelope at offset 0 has length 33, only 4 bytes left
}
