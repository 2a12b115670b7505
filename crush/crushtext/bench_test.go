package crushtext

import (
	"os"
	"path/filepath"
	"testing"
)

func largeMap(b *testing.B) []byte {
	src, err := os.ReadFile(filepath.Join(vectorsDir(b), "maps", "large.txt"))
	if err != nil {
		b.Fatal(err)
	}
	return src
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
