package extmap

import (
	"math/rand/v2"
	"testing"
)

// model is the map as one slot per byte: -1 absent, else the byte.
type model []int

func (md *model) grow(n uint64) {
	for uint64(len(*md)) < n {
		*md = append(*md, -1)
	}
}

// check compares m with md: same bytes, same count, sorted, neither
// overlapping nor touching.
func check(t *testing.T, step int, m *Map, md model) {
	t.Helper()
	var total uint64
	for k, e := range m.ext {
		if len(e.Data) == 0 {
			t.Fatalf("step %d: empty extent %d", step, k)
		}
		if k > 0 && m.ext[k-1].End() >= e.Off {
			t.Fatalf("step %d: extents %d and %d overlap or touch: [%d,%d) [%d,%d)", step, k-1, k, m.ext[k-1].Off, m.ext[k-1].End(), e.Off, e.End())
		}
		total += uint64(len(e.Data))
	}
	if total != m.Bytes() {
		t.Fatalf("step %d: Bytes %d, extents hold %d", step, m.Bytes(), total)
	}
	var want uint64
	for _, v := range md {
		if v >= 0 {
			want++
		}
	}
	if want != total {
		t.Fatalf("step %d: holds %d bytes, model %d", step, total, want)
	}
	buf := make([]byte, len(md)+10)
	for i := range buf {
		buf[i] = 0xee
	}
	holes := m.Read(0, buf)
	inHole := make([]bool, len(buf))
	pos := uint64(0)
	for _, h := range holes {
		if h.Len == 0 || h.Off < pos {
			t.Fatalf("step %d: holes out of order: %v", step, holes)
		}
		pos = h.Off + h.Len
		for o := h.Off; o < h.Off+h.Len; o++ {
			inHole[o] = true
		}
	}
	for o := range buf {
		v := -1
		if o < len(md) {
			v = md[o]
		}
		switch {
		case v < 0 && !inHole[o]:
			t.Fatalf("step %d: byte %d absent in the model, not reported as a hole", step, o)
		case v >= 0 && (inHole[o] || buf[o] != byte(v)):
			t.Fatalf("step %d: byte %d: got %#x (hole %v), want %#x", step, o, buf[o], inHole[o], v)
		}
	}
}

// Random inserts, removals, truncates and reads, against a byte model.
func TestMapAgainstModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var m Map
		var md model
		const space = 300
		for step := range 400 {
			off := uint64(rng.IntN(space))
			n := uint64(1 + rng.IntN(40))
			switch k := rng.IntN(10); {
			case k < 6:
				data := make([]byte, n)
				for i := range data {
					data[i] = byte(rng.Uint32())
				}
				md.grow(off + n)
				for i, b := range data {
					md[off+uint64(i)] = int(b)
				}
				m.Insert(off, data)
				clear(data) // the map keeps a copy
			case k < 8:
				m.Remove(off, n)
				for i := off; i < off+n && i < uint64(len(md)); i++ {
					md[i] = -1
				}
			case k < 9:
				m.Truncate(off)
				for i := off; i < uint64(len(md)); i++ {
					md[i] = -1
				}
			default:
				buf := make([]byte, n)
				holes := m.Read(off, buf)
				covered := len(holes) == 0
				if got := m.Covers(off, n); got != covered {
					t.Fatalf("seed %d step %d: Covers(%d,%d) = %v, holes %v", seed, step, off, n, got, holes)
				}
			}
			check(t, step, &m, md)
		}
	}
}
