//go:build linux

package blockstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
	"github.com/cuttlestore/cuttle/objid"
	"golang.org/x/sys/unix"
)

// openOSStore opens a store on the OS file system, where small reads can
// go through the page cache; it skips the test where O_DIRECT is refused.
func openOSStore(t *testing.T, direct bool) *Store {
	t.Helper()
	opts := testOptions(vfs.Default)
	opts.Path = filepath.Join(t.TempDir(), "store")
	opts.DirectReads = direct
	s := mkfsOpen(t, opts)
	t.Cleanup(func() { _ = s.Close() })
	if s.dev.direct == nil {
		t.Skip("the file system refuses O_DIRECT: every read is buffered")
	}
	return s
}

// Small reads come through the page cache by default; ReadDevice (deep
// scrub) and a store opened with DirectReads read the device.
func TestSmallReadsUseThePageCache(t *testing.T) {
	ctx := context.Background()
	c, o := objectstore.PGCollection(1, 0), objid.Object(1, "", "small")
	want := randBytes(rand.New(rand.NewPCG(1, 2)), 3*testCB)
	for _, direct := range []bool{false, true} {
		s := openOSStore(t, direct)
		apply(t, s, new(objectstore.Transaction).CreateCollection(c).Write(c, o, 0, want))
		read := func(f func(context.Context, objectstore.CollectionID, objid.ID, uint64, uint64) ([]byte, error)) uint64 {
			t.Helper()
			before := s.dev.statCachedReads.Load()
			got, err := f(ctx, c, o, 0, 0)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("direct=%v: read %d bytes (%v), want %d", direct, len(got), err, len(want))
			}
			return s.dev.statCachedReads.Load() - before
		}
		if n := read(s.Read); (n > 0) == direct {
			t.Errorf("DirectReads %v: Read made %d cached reads", direct, n)
		}
		if n := read(s.ReadDevice); n != 0 {
			t.Errorf("DirectReads %v: ReadDevice made %d cached reads, want none", direct, n)
		}
	}
}

// A checksum mismatch in data that came through the page cache is not
// reported until the device's copy has been read and checked too: a
// cached page can be stale. A mismatch in the device's copy is reported.
func TestStaleCachedReadIsReadAgainFromTheDevice(t *testing.T) {
	s := openOSStore(t, false)
	p := dio.AlignedBuf(testCB)
	bad := &mismatchError{off: 0, dev: 0, got: 1, want: 2}

	checks := 0
	err := s.dev.readChecked(p, 0, false, func() error {
		if checks++; checks == 1 {
			return bad // the cached copy
		}
		return nil
	})
	if err != nil || checks != 2 || s.dev.statStaleCached.Load() != 1 {
		t.Fatalf("stale cached block: err %v after %d checks, %d rereads; want nil after 2, 1", err, checks, s.dev.statStaleCached.Load())
	}

	checks = 0
	err = s.dev.readChecked(p, 0, false, func() error { checks++; return bad })
	if !errors.Is(err, objectstore.ErrCorrupt) || checks != 2 {
		t.Fatalf("damaged block: err %v after %d checks, want ErrCorrupt after 2", err, checks)
	}

	checks = 0
	err = s.dev.readChecked(p, 0, true, func() error { checks++; return bad })
	if !errors.Is(err, objectstore.ErrCorrupt) || checks != 1 || s.dev.statStaleCached.Load() != 2 {
		t.Fatalf("device read: err %v after %d checks, %d rereads; want ErrCorrupt after 1, 2", err, checks, s.dev.statStaleCached.Load())
	}
}

// rereadRecycled reads o whole (want), scribbles over the buffer, hands
// it back with Recycle and reads o again: the second read must reuse the
// buffer and return want, holes zeroed. It returns the second read.
func rereadRecycled(t *testing.T, s *Store, c objectstore.CollectionID, o objid.ID, want []byte) []byte {
	t.Helper()
	ctx := context.Background()
	first, err := s.Read(ctx, c, o, 0, 0)
	if err != nil || !bytes.Equal(first, want) {
		t.Fatalf("first read: %d bytes (%v)", len(first), err)
	}
	for i := range first {
		first[i] = 0xff // what a reused buffer would leak into the holes
	}
	s.Recycle(first)
	second, err := s.Read(ctx, c, o, 0, 0)
	if err != nil || !bytes.Equal(second, want) {
		t.Fatalf("read into a recycled buffer: %d bytes (%v), or the hole kept old bytes", len(second), err)
	}
	if &second[0] != &first[0] {
		t.Fatal("the recycled buffer was not reused")
	}
	return second
}

// A large read's buffer handed back with Recycle serves a later read,
// and the holes of that read come back zero, not the earlier bytes.
func TestRecycledReadBufferZeroesHoles(t *testing.T) {
	ctx := context.Background()
	s := openOSStore(t, false)
	c, o := objectstore.PGCollection(1, 0), objid.Object(1, "", "holes")
	r := rand.New(rand.NewPCG(3, 4))
	head, tail := randBytes(r, 64<<10), randBytes(r, 512<<10)
	apply(t, s, new(objectstore.Transaction).CreateCollection(c).Write(c, o, 0, head).Write(c, o, 512<<10, tail))
	want := make([]byte, 1<<20)
	copy(want, head)
	copy(want[512<<10:], tail)

	second := rereadRecycled(t, s, c, o, want)
	// A slice that is not a whole read buffer is not kept.
	s.Recycle(second[4096:])
	third, err := s.Read(ctx, c, o, 0, 0)
	if err != nil || !bytes.Equal(third, want) {
		t.Fatalf("third read: %d bytes (%v)", len(third), err)
	}
	if &third[0] == &second[4096] {
		t.Fatal("a partial slice was recycled")
	}
}

// Small reads recycle their buffers too, and zero the holes of a reused
// one; a read that starts inside a checksum block returns a slice that
// is not a whole buffer, which is not kept.
func TestRecycledSmallReadBuffer(t *testing.T) {
	ctx := context.Background()
	s := openOSStore(t, false)
	c, o := objectstore.PGCollection(1, 0), objid.Object(1, "", "small holes")
	r := rand.New(rand.NewPCG(7, 8))
	head, tail := randBytes(r, 4096), randBytes(r, 4096)
	apply(t, s, new(objectstore.Transaction).CreateCollection(c).Write(c, o, 0, head).Write(c, o, 8192, tail))
	want := append(append(slices.Clone(head), make([]byte, 4096)...), tail...)

	rereadRecycled(t, s, c, o, want)
	inside, err := s.Read(ctx, c, o, 8192+10, 100)
	if err != nil || !bytes.Equal(inside, tail[10:110]) {
		t.Fatalf("read inside a block: %v", err)
	}
	s.Recycle(inside)
	again, err := s.Read(ctx, c, o, 8192, 4096)
	if err != nil || !bytes.Equal(again, tail) {
		t.Fatalf("read after recycling: %v", err)
	}
	if &again[10] == &inside[0] {
		t.Fatal("a slice from inside a buffer was recycled")
	}
}

// A small deferred write is applied through the page cache, so the reads
// that follow it find its block in memory.
func TestSmallDeferredWritesStayCached(t *testing.T) {
	s := openOSStore(t, false)
	c, o := objectstore.PGCollection(1, 0), objid.Object(1, "", "small")
	r := rand.New(rand.NewPCG(5, 6))
	apply(t, s, new(objectstore.Transaction).CreateCollection(c).Write(c, o, 0, randBytes(r, testAU)))
	// An overwrite inside allocated space: deferred, applied after commit.
	apply(t, s, new(objectstore.Transaction).Write(c, o, testCB, randBytes(r, testCB)))
	checkQuiescent(t, s)
	rec, err := s.record(c, o)
	if err != nil {
		t.Fatal(err)
	}
	if !pageCached(t, s, rec.Units.At(0).Dev+testCB) {
		t.Error("a small deferred write's block is not in the page cache after it was applied")
	}
}

// Deferred writes of consecutive new objects land in consecutive units
// and are applied as runs (one pwritev each): every object's bytes must
// be in the data file at its own unit once the applier is done.
func TestDeferredRunsReachTheirUnits(t *testing.T) {
	s := openOSStore(t, false)
	ctx := context.Background()
	c := objectstore.PGCollection(1, 0)
	apply(t, s, new(objectstore.Transaction).CreateCollection(c))
	r := rand.New(rand.NewPCG(7, 8))
	const n = 300
	want := make([][]byte, n)
	comps := make([]*objectstore.Completion, n)
	for i := range n {
		want[i] = randBytes(r, testAU)
		o := objid.Object(1, "", fmt.Sprintf("run%03d", i))
		comp, err := s.Queue(ctx, new(objectstore.Transaction).Write(c, o, 0, want[i]))
		if err != nil {
			t.Fatal(err)
		}
		comps[i] = comp
	}
	for _, comp := range comps {
		if err := comp.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	checkQuiescent(t, s)
	got := make([]byte, testAU)
	for i := range n {
		rec, err := s.record(c, objid.Object(1, "", fmt.Sprintf("run%03d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.dev.file.ReadAt(got, int64(rec.Units.At(0).Dev)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[i]) {
			t.Fatalf("object %d: the data file holds other bytes at its unit", i)
		}
	}
}

// pageCached reports whether the data file's block at off is in the page
// cache: a read with RWF_NOWAIT fails with EAGAIN rather than wait for
// the device.
func pageCached(t *testing.T, s *Store, off uint64) bool {
	t.Helper()
	buf := make([]byte, testCB)
	_, err := unix.Preadv2(int(s.dev.file.Fd()), [][]byte{buf}, int64(off), unix.RWF_NOWAIT)
	if errors.Is(err, unix.EAGAIN) {
		return false
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		t.Skip("no RWF_NOWAIT reads here")
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}
