package rbd

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzDiffReader: a diff stream of any bytes gives records or an error,
// never a panic; what a writer writes reads back the same.
func FuzzDiffReader(f *testing.F) {
	var b bytes.Buffer
	w := newDiffWriter(&b)
	w.name('f', "a")
	w.name('t', "b")
	w.size(1 << 20)
	w.data(4096, []byte("data"))
	w.zero(8192, 4096)
	if err := w.end(); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(diffMagic + "w"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newDiffReader(bytes.NewReader(in))
		var recs []diffRecord
		for {
			rec, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("error not ErrInvalid: %v", err)
				}
				return
			}
			recs = append(recs, rec)
		}
		// A stream that read whole writes back to the same records.
		var out bytes.Buffer
		w := newDiffWriter(&out)
		for _, rec := range recs {
			switch rec.Tag {
			case 'f', 't':
				w.name(rec.Tag, rec.Name)
			case 's':
				w.size(rec.Offset)
			case 'w':
				w.data(rec.Offset, rec.Data)
			case 'z':
				w.zero(rec.Offset, rec.Length)
			}
		}
		if err := w.end(); err != nil {
			t.Fatal(err)
		}
		r2 := newDiffReader(&out)
		for i := 0; ; i++ {
			rec, err := r2.next()
			if errors.Is(err, io.EOF) {
				if i != len(recs) {
					t.Fatalf("%d records back of %d", i, len(recs))
				}
				return
			}
			if err != nil || rec.Tag != recs[i].Tag || rec.Name != recs[i].Name || rec.Offset != recs[i].Offset || rec.Length != recs[i].Length || !bytes.Equal(rec.Data, recs[i].Data) {
				t.Fatalf("record %d: %+v %v, want %+v", i, rec, err, recs[i])
			}
		}
	})
}
