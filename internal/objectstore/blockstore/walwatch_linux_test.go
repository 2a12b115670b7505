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
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
	"github.com/cuttlestore/cuttle/objid"
)

// Tests of the store's WAL through package dio: its syncs through AIO,
// its direct WAL's pages, and Pebble's replay of direct WALs.

// openAIOStore opens a store on the OS file system, skipping the test
// where there is no Linux AIO.
func openAIOStore(t *testing.T) *Store {
	t.Helper()
	s := openOSStore(t, false)
	if s.dev.aioSync == nil {
		t.Skip("Linux AIO not available here")
	}
	return s
}

// TestWALSyncsThroughAIO checks that a store on the OS file system makes
// its commits durable through its AIO context.
func TestWALSyncsThroughAIO(t *testing.T) {
	s := openAIOStore(t)
	before := s.dev.aioSync.Syncs()
	c := objectstore.PGCollection(1, 0)
	apply(t, s, new(objectstore.Transaction).CreateCollection(c))
	apply(t, s, new(objectstore.Transaction).Write(c, objid.Object(1, "", "o"), 0, []byte("x")))
	if s.dev.aioSync.Syncs() == before {
		t.Fatal("no WAL sync went through AIO")
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
	a := dio.NewSyncAIO()
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
	if dio.NewSyncAIO() == nil {
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
