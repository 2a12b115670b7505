package rbd

import (
	"bytes"
	"sync"
	"testing"
)

// A reused chunk buffer reads as zeros outside the chunk's data runs,
// whatever the chunk it last held; a short last chunk gets a short one.
func TestChunkBufferReuse(t *testing.T) {
	var free sync.Pool
	if b := chunkBuffer(&free, 100, nil); len(b) != 100 || !bytes.Equal(b, make([]byte, 100)) {
		t.Fatalf("a new buffer: %d bytes, not all zeros", len(b))
	}
	for _, tc := range []struct {
		n    uint64
		data []Extent
	}{
		{100, nil},
		{100, []Extent{{0, 100}}},
		{100, []Extent{{10, 20}, {50, 10}}},
		{100, []Extent{{0, 10}, {90, 10}}},
		{60, []Extent{{30, 30}}},
	} {
		old := bytes.Repeat([]byte{0xff}, 100)
		free.Put(&old)
		b := chunkBuffer(&free, tc.n, tc.data)
		if uint64(len(b)) != tc.n {
			t.Fatalf("%v: %d bytes, want %d", tc.data, len(b), tc.n)
		}
		in := make([]bool, tc.n)
		for _, e := range tc.data {
			for i := e.Offset; i < e.Offset+e.Length; i++ {
				in[i] = true
			}
		}
		for i, c := range b {
			if !in[i] && c != 0 {
				t.Fatalf("%d bytes, runs %v: byte %d outside the runs is %#x, want 0", tc.n, tc.data, i, c)
			}
		}
	}
	small := make([]byte, 10)
	free.Put(&small)
	if b := chunkBuffer(&free, 100, nil); len(b) != 100 {
		t.Fatalf("a pooled buffer too small for the chunk: got %d bytes, want 100", len(b))
	}
}
