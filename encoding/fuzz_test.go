package encoding

import (
	"bytes"
	"errors"
	"testing"
)

// walk decodes arbitrary input as a self-describing tree: an envelope holding
// a count of tagged items, where a tag selects a primitive or a nested
// envelope. It exercises every Decoder method the way real decode methods
// combine them, and checks the Decoder's promises along the way.
func walk(t *testing.T, d *Decoder, depth int) {
	v := d.Begin(3)
	defer d.End()
	if d.Err() != nil && v != 0 {
		t.Fatalf("Begin returned version %d with error %v", v, d.Err())
	}
	n := d.Count(1)
	tags := make([]uint8, 0, n) // safe for any input: Count bounds n
	for i := 0; i < n && d.Err() == nil; i++ {
		before := d.Remaining()
		tag := d.Uint8()
		tags = append(tags, tag)
		switch tag % 10 {
		case 0:
			if depth < 8 {
				walk(t, d, depth+1)
			}
		case 1:
			if b := d.Bytes(64); len(b) > 64 {
				t.Fatalf("Bytes(64) returned %d bytes", len(b))
			}
		case 2:
			if s := d.String(16); len(s) > 16 {
				t.Fatalf("String(16) returned %d bytes", len(s))
			}
		case 3:
			d.Uvarint()
		case 4:
			d.Varint()
		case 5:
			d.Bool()
		case 6:
			d.Uint16()
			d.Int32()
		case 7:
			d.Int64()
		case 8:
			if c := d.Count(int(tag)); c < 0 || c*max(int(tag), 1) > before {
				t.Fatalf("Count(%d) = %d with %d bytes left", tag, c, before)
			}
		case 9:
			d.Fail(nil)
		}
		if d.Remaining() < 0 || d.Remaining() > before {
			t.Fatalf("Remaining went from %d to %d", before, d.Remaining())
		}
	}
	if len(tags) > n {
		t.Fatalf("read %d items of %d", len(tags), n)
	}
}

func FuzzDecoder(f *testing.F) {
	// Seed with a well-formed tree: an envelope of one of each item.
	var e Encoder
	m := e.Begin(3, 1)
	e.Uvarint(9)
	e.Uint8(0)
	inner := e.Begin(1, 1)
	e.Uvarint(1)
	e.Uint8(3)
	e.Uvarint(1 << 40)
	e.End(inner)
	e.Uint8(1)
	e.Bytes([]byte("hello"))
	e.Uint8(2)
	e.String("world")
	e.Uint8(4)
	e.Varint(-5)
	e.Uint8(5)
	e.Bool(true)
	e.Uint8(6)
	e.Uint16(1)
	e.Int32(-1)
	e.Uint8(7)
	e.Int64(-1)
	e.Uint8(8)
	e.Uvarint(0)
	e.Uint8(9)
	e.End(m)
	f.Add(bytes.Clone(e.Data()))
	f.Add([]byte{})
	f.Add([]byte{4, 4, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{1, 1, 1, 0, 0, 0, 0xff})

	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		d := NewDecoder(data)
		walk(t, d, 0)
		err := d.Finish()
		if err != nil && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) &&
			!errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("error %v matches no sentinel", err)
		}
		if !bytes.Equal(data, orig) {
			t.Fatal("Decoder modified its input")
		}
	})
}

// FuzzRoundTrip checks that every value decodes to what was encoded, inside
// an envelope that a newer encoder extended with trailing bytes.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint64(0), int64(0), []byte(nil), "", true, []byte(nil))
	f.Add(uint64(1<<63), int64(-1<<63), []byte("b"), "s", false, []byte("future"))
	f.Fuzz(func(t *testing.T, u uint64, i int64, b []byte, s string, flag bool, extra []byte) {
		var e Encoder
		m := e.Begin(2, 1)
		e.Uvarint(u)
		e.Varint(i)
		e.Uint64(u)
		e.Int64(i)
		e.Uint32(uint32(u))
		e.Int32(int32(i))
		e.Uint16(uint16(u))
		e.Uint8(uint8(u))
		e.Bytes(b)
		e.String(s)
		e.Bool(flag)
		e.Uint8(uint8(len(extra))) // anything after this is a newer field
		e.Bytes(extra)
		e.End(m)

		d := NewDecoder(e.Data())
		if v := d.Begin(1); v != 2 {
			t.Fatalf("version = %d", v)
		}
		if got := d.Uvarint(); got != u {
			t.Errorf("Uvarint = %d, want %d", got, u)
		}
		if got := d.Varint(); got != i {
			t.Errorf("Varint = %d, want %d", got, i)
		}
		if got := d.Uint64(); got != u {
			t.Errorf("Uint64 = %d, want %d", got, u)
		}
		if got := d.Int64(); got != i {
			t.Errorf("Int64 = %d, want %d", got, i)
		}
		if got := d.Uint32(); got != uint32(u) {
			t.Errorf("Uint32 = %d", got)
		}
		if got := d.Int32(); got != int32(i) {
			t.Errorf("Int32 = %d", got)
		}
		if got := d.Uint16(); got != uint16(u) {
			t.Errorf("Uint16 = %d", got)
		}
		if got := d.Uint8(); got != uint8(u) {
			t.Errorf("Uint8 = %d", got)
		}
		if got := d.Bytes(len(b)); !bytes.Equal(got, b) {
			t.Errorf("Bytes = %x, want %x", got, b)
		}
		if got := d.String(len(s)); got != s {
			t.Errorf("String = %q, want %q", got, s)
		}
		if got := d.Bool(); got != flag {
			t.Errorf("Bool = %v", got)
		}
		d.End()
		if err := d.Finish(); err != nil {
			t.Fatal(err)
		}
	})
}
