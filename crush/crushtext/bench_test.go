package crushtext

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

func largeMap(b *testing.B) []byte {
	return crushvectors.ReadFile(b, "maps/large.txt")
}

// BenchmarkCompileLarge compiles the 1000-OSD vector map.
func BenchmarkCompileLarge(b *testing.B) {
	src := largeMap(b)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Compile(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecompileLarge prints the 1000-OSD vector map.
func BenchmarkDecompileLarge(b *testing.B) {
	m, err := Compile(largeMap(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Decompile(m)
	}
}
