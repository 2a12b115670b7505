package layout

import (
	"bytes"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

// fuzzLayout makes a valid layout (with small units: the math does not
// depend on the 64 KiB granularity) from fuzz bytes.
func fuzzLayout(su, spo, sc uint8) Layout {
	unit := uint32(su%16+1) * 4
	return Layout{StripeUnit: unit, ObjectSize: unit * uint32(spo%5+1), StripeCount: uint32(sc%6 + 1)}
}

// Writes through the layout's object extents, then reads back through
// them, must give what the same writes give on a flat byte array; and the
// objects' lengths must never exceed ObjectLen of the highest byte
// written. Write-then-read equivalence of the math, against an in-memory
// model of the file.
func FuzzWriteReadModel(f *testing.F) {
	f.Add(uint8(0), uint8(3), uint8(2), []byte{0, 10, 40, 5, 3, 200})
	f.Add(uint8(15), uint8(4), uint8(5), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Fuzz(func(t *testing.T, su, spo, sc uint8, ops []byte) {
		l := fuzzLayout(su, spo, sc)
		model := []byte{}
		objects := map[uint64][]byte{}
		for i := 0; i+2 < len(ops) && i < 60; i += 3 {
			off := uint64(ops[i]) * 3
			n := uint64(ops[i+1])
			fill := ops[i+2]
			data := bytes.Repeat([]byte{fill | 1}, int(n))
			// The model.
			if end := off + n; uint64(len(model)) < end {
				model = append(model, make([]byte, end-uint64(len(model)))...)
			}
			copy(model[off:], data)
			// The objects.
			var total uint64
			for _, x := range l.FileToExtents(off, n) {
				obj := objects[x.ObjectNo]
				if end := x.Offset + x.Length; uint64(len(obj)) < end {
					obj = append(obj, make([]byte, end-uint64(len(obj)))...)
				}
				at := x.Offset
				for _, b := range x.Buffer {
					copy(obj[at:at+b.Length], data[b.Offset:b.Offset+b.Length])
					at += b.Length
				}
				if at != x.Offset+x.Length {
					t.Fatalf("buffer extents of %+v add up to %d", x, at-x.Offset)
				}
				total += x.Length
				objects[x.ObjectNo] = obj
			}
			if total != n {
				t.Fatalf("extents of [%d,+%d) cover %d bytes", off, n, total)
			}
		}
		size := uint64(len(model))
		for no, obj := range objects {
			if uint64(len(obj)) > l.ObjectLen(size, no) {
				t.Fatalf("%v: object %d is %d bytes, ObjectLen(%d) is %d", l, no, len(obj), size, l.ObjectLen(size, no))
			}
			if no >= l.ObjectCount(size) {
				t.Fatalf("%v: object %d exists, ObjectCount(%d) = %d", l, no, size, l.ObjectCount(size))
			}
			// The reverse map puts each object byte back where the model has it.
			for _, p := range l.ObjectToFile(no, 0, uint64(len(obj))) {
				if !bytes.Equal(obj[p.ObjectOff:p.ObjectOff+p.Length], model[p.FileOff:p.FileOff+p.Length]) {
					t.Fatalf("%v: object %d [%d,+%d) differs from file [%d,+%d)", l, no, p.ObjectOff, p.Length, p.FileOff, p.Length)
				}
			}
		}
		// Read the whole file back, holes (absent or short objects) as zeros.
		got := make([]byte, size)
		for _, x := range l.FileToExtents(0, size) {
			obj := objects[x.ObjectNo]
			at := x.Offset
			for _, b := range x.Buffer {
				for k := uint64(0); k < b.Length; k++ {
					if at+k < uint64(len(obj)) {
						got[b.Offset+k] = obj[at+k]
					}
				}
				at += b.Length
			}
		}
		if !bytes.Equal(got, model) {
			t.Fatalf("%v: read back differs from the model", l)
		}
	})
}

// The layout decoder on hostile input: never a panic, and what decodes
// is valid and encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	var e encoding.Encoder
	Layout{ObjectSize: 4 << 20, StripeUnit: 1 << 20, StripeCount: 3, Pool: 2, Namespace: "ns"}.Encode(&e)
	f.Add(e.Data())
	f.Fuzz(func(t *testing.T, b []byte) {
		var l Layout
		d := encoding.NewDecoder(b)
		l.Decode(d)
		if d.Finish() != nil {
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("decoded an invalid layout: %v", err)
		}
		var e encoding.Encoder
		l.Encode(&e)
		var again Layout
		d = encoding.NewDecoder(e.Data())
		again.Decode(d)
		if err := d.Finish(); err != nil || again != l {
			t.Fatalf("round trip: %+v %v", again, err)
		}
	})
}
