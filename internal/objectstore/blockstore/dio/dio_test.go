package dio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// AlignedBuf returns n zero bytes, with no spare capacity, at an Align
// boundary.
func TestAlignedBuf(t *testing.T) {
	for _, n := range []int{0, 1, 100, Align - 1, Align, 2 * Align, 3*Align + 5, 1 << 20} {
		b := AlignedBuf(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("AlignedBuf(%d): len %d cap %d", n, len(b), cap(b))
		}
		if n == 0 {
			continue
		}
		if uintptr(unsafe.Pointer(&b[0]))%Align != 0 {
			t.Fatalf("AlignedBuf(%d) starts off an %d-byte boundary", n, Align)
		}
		if bytes.IndexFunc(b, func(r rune) bool { return r != 0 }) >= 0 {
			t.Fatalf("AlignedBuf(%d) is not zeroed", n)
		}
	}
}

func TestIsAligned(t *testing.T) {
	b := AlignedBuf(4 * Align)
	for _, c := range []struct {
		name string
		p    []byte
		off  uint64
		want bool
	}{
		{"aligned", b, 8 * Align, true},
		{"one block", b[:Align], 0, true},
		{"empty", b[:0], 0, false},
		{"short length", b[:Align+1], 0, false},
		{"offset", b, 512, false},
		{"memory", b[1 : Align+1], 0, false},
	} {
		if got := IsAligned(c.p, c.off); got != c.want {
			t.Errorf("%s: IsAligned = %v, want %v", c.name, got, c.want)
		}
	}
}

// A Staging maps at most maxStaging buffers of StagingSize, hands back
// what is put, and unmaps everything at Close.
func TestStagingBounds(t *testing.T) {
	var p Staging
	defer p.Close()
	first := p.Get()
	if first == nil {
		t.Skip("no staging buffers on this platform")
	}
	got := [][]byte{first}
	for b := p.Get(); b != nil; b = p.Get() {
		got = append(got, b)
		if len(got) > maxStaging {
			t.Fatalf("Get handed out more than %d buffers", maxStaging)
		}
	}
	if len(got) != maxStaging {
		t.Fatalf("Get handed out %d buffers, want %d", len(got), maxStaging)
	}
	for i, b := range got {
		if len(b) != StagingSize {
			t.Fatalf("buffer %d holds %d bytes", i, len(b))
		}
		b[0], b[len(b)-1] = byte(i), byte(i) // writable, and distinct
	}
	for i, b := range got {
		if b[0] != byte(i) || b[len(b)-1] != byte(i) {
			t.Fatalf("buffer %d shares memory with another", i)
		}
	}
	p.Put(got[2])
	if b := p.Get(); &b[0] != &got[2][0] {
		t.Fatal("Get did not hand back the buffer Put returned")
	}
	if p.Get() != nil {
		t.Fatal("Get handed out a buffer beyond the bound")
	}
	for _, b := range got {
		p.Put(b)
	}
}

// WriteVectored writes its buffers one after another from the offset.
func TestWriteVectored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := WriteVectored(f, [][]byte{[]byte("abc"), nil, []byte("de"), bytes.Repeat([]byte("f"), 5000)}, 3); err != nil {
		t.Fatal(err)
	}
	want := append([]byte("\x00\x00\x00abcde"), bytes.Repeat([]byte("f"), 5000)...)
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Fatalf("file holds %d bytes, not the %d written", len(got), len(want))
	}
}

// WithAIOSync returns the file itself without a context; with one, the
// file's appends reach it and its syncs go through the context.
func TestWithAIOSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "000001.log")
	f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if WithAIOSync(f, nil) != f {
		t.Fatal("WithAIOSync without a context wrapped the file")
	}
	a := NewSyncAIO()
	if a == nil {
		f.Close()
		t.Skip("Linux AIO not available here")
	}
	defer a.Close()
	w := WithAIOSync(f, a)
	defer w.Close()
	for _, s := range []string{"first ", "second"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SyncData(); err != nil {
		t.Fatal(err)
	}
	if a.Syncs() != 1 {
		t.Fatalf("%d syncs through AIO, want 1", a.Syncs())
	}
	if got, _ := os.ReadFile(path); string(got) != "first second" {
		t.Fatalf("file holds %q", got)
	}
}
