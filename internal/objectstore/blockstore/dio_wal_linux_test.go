//go:build linux && (amd64 || arm64)

package blockstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// openDirectWAL creates path and opens it as a direct WAL, skipping the
// test where the file system or the kernel will not have one.
func openDirectWAL(t *testing.T, path string) *directWAL {
	t.Helper()
	a := newSyncAIO()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	t.Cleanup(a.close)
	f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := newDirectWAL(f, path, a).(*directWAL)
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
	end := (len(want) + directAlign - 1) &^ (directAlign - 1)
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
	checkWALFile(t, path, want, make([]byte, 1<<20-2*directAlign))
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
	a := newSyncAIO()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	defer a.close()
	f, err := vfs.Default.ReuseForWrite(path, path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	w, ok := newDirectWAL(f, path, a).(*directWAL)
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
	checkWALFile(t, path, want, old[2*directAlign:])
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

// resident counts the pages of path in the page cache.
func resident(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	pages := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&pages[0]))); e != 0 {
		t.Fatal(e)
	}
	n := 0
	for _, p := range pages {
		n += int(p & 1)
	}
	return n
}

// A store on the OS file system writes its WAL around the page cache.
func TestStoreWALBypassesPageCache(t *testing.T) {
	s := openAIOStore(t)
	c := objectstore.PGCollection(1, 0)
	apply(t, s, new(objectstore.Transaction).CreateCollection(c))
	for i := range 64 {
		apply(t, s, new(objectstore.Transaction).Write(c, objid.Object(1, "", fmt.Sprint("o", i)), 0, bytes.Repeat([]byte{byte(i)}, 4096)))
	}
	logs, err := filepath.Glob(filepath.Join(s.opts.dbPath(), "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no WAL in %s (%v)", s.opts.dbPath(), err)
	}
	for _, l := range logs {
		if n := resident(t, l); n > 0 {
			t.Errorf("%s: %d pages in the page cache", filepath.Base(l), n)
		}
	}
}

// countingFS counts the WALs Pebble recycles.
type countingFS struct {
	vfs.FS
	reused *int
}

func (c countingFS) ReuseForWrite(oldname, newname string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	*c.reused++
	return c.FS.ReuseForWrite(oldname, newname, cat)
}

// TestDirectWALChild is the child of TestDirectWALReopen: it writes
// synced batches into the Pebble database at $CUTTLE_DIRECTWAL_DIR
// through direct WALs, small memtables making Pebble recycle them,
// prints how many it wrote and how many WALs were recycled, and exits
// without closing anything, as a crash would leave the files.
func TestDirectWALChild(t *testing.T) {
	dir := os.Getenv("CUTTLE_DIRECTWAL_DIR")
	if dir == "" {
		t.Skip("child of TestDirectWALReopen")
	}
	a := newSyncAIO()
	reused := 0
	fs := walWatch{FS: countingFS{FS: vfs.Default, reused: &reused}, health: &walHealth{}, syncer: a}
	db, err := pebble.Open(dir, &pebble.Options{FS: fs, MemTableSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	const batches = 3000
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range batches {
		b := db.NewBatch()
		_ = b.Set([]byte(fmt.Sprintf("k%06d", i)), bytes.Repeat([]byte{byte(i)}, 1+rng.IntN(6000)), nil)
		if err := b.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	// A last batch without a sync may be lost; it must not be half there.
	_ = db.Set([]byte("unsynced"), []byte("x"), pebble.NoSync)
	fmt.Printf("wrote %d reused %d\n", batches, reused)
	os.Exit(directWALChildExit) // not 0, which the testing package takes for a bug

}

// directWALChildExit is TestDirectWALChild's exit status.
const directWALChildExit = 7

// TestDirectWALReopen checks that Pebble replays direct WALs, recycled
// ones among them, left by a process that exited without closing them.
func TestDirectWALReopen(t *testing.T) {
	if newSyncAIO() == nil {
		t.Skip("Linux AIO not available here")
	}
	dir := filepath.Join(t.TempDir(), "db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestDirectWALChild$")
	cmd.Env = append(os.Environ(), "CUTTLE_DIRECTWAL_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != directWALChildExit {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var wrote, reused int
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "wrote" {
			wrote, _ = strconv.Atoi(f[1])
			reused, _ = strconv.Atoi(f[3])
		}
	}
	if wrote == 0 {
		t.Fatalf("child reported nothing:\n%s", out)
	}
	if reused == 0 {
		t.Errorf("no WAL was recycled: the test does not cover recycled WALs")
	}
	db, err := pebble.Open(dir, &pebble.Options{FS: vfs.Default})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	for i := range wrote {
		v, closer, err := db.Get([]byte(fmt.Sprintf("k%06d", i)))
		if err != nil {
			t.Fatalf("key %d of %d: %v", i, wrote, err)
		}
		if len(v) == 0 || v[0] != byte(i) || v[len(v)-1] != byte(i) {
			t.Fatalf("key %d holds the wrong value", i)
		}
		closer.Close()
	}
	if v, closer, err := db.Get([]byte("unsynced")); err == nil {
		if string(v) != "x" {
			t.Errorf("the unsynced key holds %q", v)
		}
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		t.Errorf("the unsynced key: %v", err)
	}
}
