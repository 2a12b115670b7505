//go:build linux && (amd64 || arm64)

package dio

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// openDirectWAL creates path and opens it as a direct WAL, skipping the
// test where the file system or the kernel will not have one.
func openDirectWAL(t *testing.T, path string) *directWAL {
	t.Helper()
	a := NewSyncAIO()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	t.Cleanup(a.Close)
	f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := NewDirectWAL(f, path, a).(*directWAL)
	if !ok {
		f.Close()
		t.Skip("no O_DIRECT on this file system")
	}
	return d
}

// checkWALFile checks that path begins with want, followed by zeros up
// to the next page boundary and then by rest.
func checkWALFile(t *testing.T, path string, want, rest []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := (len(want) + Align - 1) &^ (Align - 1)
	if len(got) < end {
		t.Fatalf("file holds %d bytes, want at least %d", len(got), end)
	}
	if !bytes.Equal(got[:len(want)], want) {
		t.Fatalf("file's first %d bytes differ from what was written", len(want))
	}
	if i := bytes.IndexFunc(got[len(want):end], func(r rune) bool { return r != 0 }); i >= 0 {
		t.Fatalf("byte %d past the end is not zero", i)
	}
	if !bytes.Equal(got[end:], rest) {
		t.Fatalf("file past the last page: %d bytes, want %d untouched", len(got)-end, len(rest))
	}
}

// Writes of any size, synced at any point, reach the file in order;
// each sync leaves the written bytes and zeros to the page's end.
func TestDirectWALWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "000001.log")
	testDirectWALWrites(t, path, openDirectWAL(t, path))
}

// The same without an AIO context: each sync is a write and an
// fdatasync.
func TestDirectWALWritesWithoutAIO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "000001.log")
	w := openDirectWAL(t, path)
	w.aio = nil
	testDirectWALWrites(t, path, w)
}

// Preallocation extends the file; the zeros past the records remain.
func TestDirectWALPreallocate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "000004.log")
	w := openDirectWAL(t, path)
	if err := w.Preallocate(0, 1<<20); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("r"), 5000)
	if _, err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkWALFile(t, path, want, make([]byte, 1<<20-2*Align))
}

func testDirectWALWrites(t *testing.T, path string, w *directWAL) {
	rng := rand.New(rand.NewPCG(1, 2))
	var want []byte
	for i := range 300 {
		n := 1 + rng.IntN(1<<rng.IntN(18)) // 1 byte to 256 KiB: some overflow the buffer between syncs
		p := make([]byte, n)
		for j := range p {
			p[j] = byte(rng.IntN(255) + 1)
		}
		if got, err := w.Write(p); got != n || err != nil {
			t.Fatalf("write %d: %d, %v", i, got, err)
		}
		want = append(want, p...)
		if rng.IntN(3) == 0 {
			if err := w.Sync(); err != nil {
				t.Fatalf("sync: %v", err)
			}
			checkWALFile(t, path, want, nil)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	checkWALFile(t, path, want, nil)
}

// A recycled WAL is written from its start; what lies past the last
// page written stays as it was.
func TestDirectWALRecycled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "000002.log")
	old := bytes.Repeat([]byte{0xaa}, 64<<10)
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	a := NewSyncAIO()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	defer a.Close()
	f, err := vfs.Default.ReuseForWrite(path, path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	w, ok := NewDirectWAL(f, path, a).(*directWAL)
	if !ok {
		t.Skip("no O_DIRECT on this file system")
	}
	want := bytes.Repeat([]byte("record "), 1000) // 7,000 bytes: two pages, the second partial
	if _, err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	checkWALFile(t, path, want, old[2*Align:])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// After a failed write the WAL refuses everything, with that failure.
func TestDirectWALFailure(t *testing.T) {
	w := openDirectWAL(t, filepath.Join(t.TempDir(), "000003.log"))
	defer w.File.Close()
	if err := w.direct.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("lost")); err != nil {
		t.Fatalf("write into the buffer: %v", err)
	}
	err := w.Sync()
	if !errors.Is(err, syscall.EBADF) {
		t.Fatalf("sync on a closed descriptor = %v, want EBADF", err)
	}
	if _, werr := w.Write([]byte("more")); !errors.Is(werr, syscall.EBADF) {
		t.Fatalf("write after the failure = %v", werr)
	}
}
