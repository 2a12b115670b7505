package kv

import (
	"bytes"
	"testing"
)

// FuzzDecodeInfo: the index's kv.store attribute never panics its
// decoder, and what it accepts round-trips.
func FuzzDecodeInfo(f *testing.F) {
	f.Add(info{K: 400}.encode())
	f.Add([]byte{1, 1, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := decodeInfo(b)
		if err != nil {
			return
		}
		again, err := decodeInfo(in.encode())
		if err != nil || again != in || !bytes.Equal(again.encode(), in.encode()) {
			t.Fatalf("round trip: %+v %+v %v", in, again, err)
		}
	})
}
