package crc32c

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

var table = crc32.MakeTable(crc32.Castagnoli)

func sum(b []byte) uint32 { return crc32.Checksum(b, table) }

func TestCombineMatchesChecksum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<17)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	lens := []int{0, 1, 2, 3, 7, 8, 100, 511, 4096, 4097, 65536, 1<<17 - 1}
	for _, la := range lens {
		for _, lb := range lens {
			if la+lb > len(buf) {
				continue
			}
			a, b := buf[:la], buf[la:la+lb]
			if got, want := Combine(sum(a), sum(b), uint64(lb)), sum(buf[:la+lb]); got != want {
				t.Errorf("Combine(%d bytes, %d bytes) = %#08x, want %#08x", la, lb, got, want)
			}
		}
	}
}

func TestJoinerMatchesChecksum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []uint64{0, 1, 512, 4096, 65536} {
		j := NewJoiner(n)
		if j.Len() != n {
			t.Fatalf("Len() = %d, want %d", j.Len(), n)
		}
		data := make([]byte, 5*n+3)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		// Fold a 3-byte head and then five n-byte blocks, as a store
		// folds its block checksums.
		crc := sum(data[:3])
		for off := uint64(3); off < uint64(len(data)); off += n {
			crc = j.Combine(crc, sum(data[off:off+n]))
			if n == 0 {
				break
			}
		}
		if want := sum(data); crc != want {
			t.Errorf("n=%d: folded %#08x, want %#08x", n, crc, want)
		}
	}
}

func TestCombineZeros(t *testing.T) {
	// A string of zeros is no special case: its checksum is not zero.
	zeros := make([]byte, 4096)
	a := []byte("cuttle")
	if got, want := Combine(sum(a), sum(zeros), 4096), sum(append(a, zeros...)); got != want {
		t.Fatalf("got %#08x, want %#08x", got, want)
	}
}

func FuzzCombine(f *testing.F) {
	f.Add([]byte("hello"), []byte("world"))
	f.Add([]byte{}, []byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if got, want := Combine(sum(a), sum(b), uint64(len(b))), sum(append(a[:len(a):len(a)], b...)); got != want {
			t.Fatalf("Combine = %#08x, want %#08x", got, want)
		}
		j := NewJoiner(uint64(len(b)))
		if got, want := j.Combine(sum(a), sum(b)), sum(append(a[:len(a):len(a)], b...)); got != want {
			t.Fatalf("Joiner.Combine = %#08x, want %#08x", got, want)
		}
	})
}

func BenchmarkJoiner4K(b *testing.B) {
	j := NewJoiner(4096)
	var crc uint32
	for i := range b.N {
		crc = j.Combine(crc, uint32(i))
	}
	_ = crc
}

func BenchmarkCombine4M(b *testing.B) {
	var crc uint32
	for i := range b.N {
		crc = Combine(crc, uint32(i), 4<<20)
	}
	_ = crc
}

func BenchmarkChecksum4K(b *testing.B) {
	buf := make([]byte, 4096)
	b.SetBytes(4096)
	for range b.N {
		sum(buf)
	}
}

func TestShiftPolyLargeLengths(t *testing.T) {
	// Lengths too large to hash: x^(8(a+b)) = x^(8a)·x^(8b).
	for _, c := range [][2]uint64{{1 << 30, 1 << 30}, {1<<40 + 5, 3}, {1 << 62, 1<<62 - 1}, {12345, 1 << 33}} {
		if got, want := shiftPoly(c[0]+c[1]), mulMod(shiftPoly(c[0]), shiftPoly(c[1])); got != want {
			t.Errorf("shiftPoly(%d+%d) = %#08x, want %#08x", c[0], c[1], got, want)
		}
	}
}

func TestFoldPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 7*PieceLen)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	var crcs []uint32
	for off := 0; off < len(data); off += PieceLen {
		crcs = append(crcs, sum(data[off:off+PieceLen]))
	}
	if got, want := FoldPieces(crcs), sum(data); got != want {
		t.Fatalf("FoldPieces = %#08x, want %#08x", got, want)
	}
	if FoldPieces(nil) != 0 {
		t.Fatal("FoldPieces of nothing is not the checksum of nothing")
	}
}
