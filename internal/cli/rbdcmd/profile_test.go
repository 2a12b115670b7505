package rbdcmd

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --cpuprofile writes a profile go tool pprof reads; without it nothing
// is written.
func TestCPUProfile(t *testing.T) {
	stop, err := startCPUProfile("")
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cpu.prof")
	stop, err = startCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A profile is a gzipped protocol buffer whose string table names
	// a CPU profile's sample types.
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the profile is not gzipped: %v", err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "samples") || !strings.Contains(string(b), "nanoseconds") {
		t.Errorf("the profile (%d bytes) names no CPU sample types", len(b))
	}
	if _, err := startCPUProfile(filepath.Join(t.TempDir(), "no", "such", "dir")); err == nil {
		t.Error("a profile in a missing directory: no error")
	}
}
