package blockstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
	"github.com/cuttlestore/cuttle/objid"
)

// TestReadRangesOSFS reads ranges of every alignment, size and position
// (holes, unit boundaries, direct and buffered, queued data) from a store
// on the OS file system, where small aligned reads use O_DIRECT.
func TestReadRangesOSFS(t *testing.T) {
	opts := testOptions(vfs.Default)
	opts.Path = filepath.Join(t.TempDir(), "store")
	s := mkfsOpen(t, opts)
	defer s.Close()
	ctx := context.Background()
	c := objectstore.PGCollection(1, 0)
	o := objid.Object(1, "", "o")
	apply(t, s, new(objectstore.Transaction).CreateCollection(c))
	r := rand.New(rand.NewPCG(1, 2))
	const size = 40 * testAU
	want := make([]byte, size)
	write := func(off, n int) *objectstore.Transaction {
		d := randBytes(r, n)
		copy(want[off:], d)
		return new(objectstore.Transaction).Write(c, o, uint64(off), d)
	}
	apply(t, s, write(0, 3*testAU))
	apply(t, s, write(5*testAU+100, 30*testAU))
	apply(t, s, write(size-1, 1))
	check := func(off, n int) {
		t.Helper()
		got, err := s.Read(ctx, c, o, uint64(off), uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		if e := min(off+n, size); !bytes.Equal(got, want[off:e]) {
			t.Fatalf("read %d+%d differs", off, n)
		}
	}
	for range 300 {
		off := r.IntN(size)
		n := 1 + r.IntN(size-off)
		if r.IntN(2) == 0 {
			off -= off % testCB
			n = testCB * (1 + r.IntN(8))
		}
		check(off, n)
		if r.IntN(10) == 0 {
			// Overwrites, mostly deferred, read as soon as they apply
			// (often before they are written in place).
			woff := r.IntN(size - testCB)
			comp, err := s.Queue(ctx, write(woff, 1+r.IntN(2*testCB)))
			if err != nil {
				t.Fatal(err)
			}
			if err := comp.WaitApplied(ctx); err != nil {
				t.Fatal(err)
			}
			check(woff-woff%testCB, testCB)
		}
	}
	if s.dev.direct == nil {
		t.Log("O_DIRECT not available here: buffered reads only")
	} else if s.dev.aio == nil {
		t.Log("Linux AIO not available here: blocking direct reads")
	}
	// Many concurrent small reads (asynchronous ones where available).
	errs := make(chan error, 16)
	for g := range 16 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 200 {
				off := r.IntN(size/testCB) * testCB
				got, err := s.Read(ctx, c, o, uint64(off), testCB)
				if err == nil && !bytes.Equal(got, want[off:off+testCB]) {
					err = fmt.Errorf("concurrent read at %d differs", off)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// Aligned copy-on-write data goes to the device with O_DIRECT, mixed with
// buffered writes of the same object; everything reads back, before and
// after a reopen, and fsck finds every checksum right.
func TestDirectCOWWrites(t *testing.T) {
	opts := testOptions(vfs.Default)
	opts.Path = filepath.Join(t.TempDir(), "store")
	s := mkfsOpen(t, opts)
	ctx := context.Background()
	c := objectstore.PGCollection(1, 0)
	apply(t, s, new(objectstore.Transaction).CreateCollection(c))
	r := rand.New(rand.NewPCG(3, 4))
	want := map[string][]byte{}
	for i := range 6 {
		o := objid.Object(1, "", fmt.Sprint("o", i))
		data := dio.AlignedBuf(80 * testAU) // as a message buffer would hold it; reads of it go direct too
		copy(data, randBytes(r, len(data)))
		want[o.Name] = slices.Clone(data)
		tx := new(objectstore.Transaction).Write(c, o, 0, data)
		if i%2 == 0 { // and a buffered, unaligned write in the same group
			small := randBytes(r, 1000)
			copy(want[o.Name][testAU+7:], small)
			tx.Write(c, o, testAU+7, small)
		}
		apply(t, s, tx)
	}
	if DirectWrites(s) == 0 {
		t.Fatal("no write went with O_DIRECT")
	}
	check := func(s *Store) {
		t.Helper()
		for name, w := range want {
			got, err := s.Read(ctx, c, objid.Object(1, "", name), 0, 0)
			if err != nil || !bytes.Equal(got, w) {
				t.Fatalf("%s: read %d bytes (%v), want %d equal", name, len(got), err, len(w))
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Fsck(ctx, opts, FsckOptions{Deep: true})
	if err != nil || !rep.Clean() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
	s = mustOpen(t, opts)
	defer s.Close()
	check(s)
}

// Large reads (staged through huge-page buffers in pieces verified as
// they arrive) return the right bytes across holes and staging windows,
// and a flipped byte in any piece fails the read as corruption naming the
// block, never returning it.
func TestLargeStagedReads(t *testing.T) {
	opts := testOptions(vfs.Default)
	opts.Path = filepath.Join(t.TempDir(), "store")
	s := mkfsOpen(t, opts)
	defer s.Close()
	ctx := context.Background()
	c := objectstore.PGCollection(1, 0)
	o := objid.Object(1, "", "big")
	apply(t, s, new(objectstore.Transaction).CreateCollection(c))
	r := rand.New(rand.NewPCG(5, 6))
	const size = dio.StagingSize*2 + 3*directPiece + testCB // three windows
	want := make([]byte, size)
	for _, w := range []struct{ off, n int }{{0, dio.StagingSize - 5*testAU}, {dio.StagingSize, dio.StagingSize + 2*directPiece}, {size - 7*testCB, 7 * testCB}} {
		d := randBytes(r, w.n)
		copy(want[w.off:], d)
		apply(t, s, new(objectstore.Transaction).Write(c, o, uint64(w.off), d))
	}
	for _, rg := range []struct{ off, n int }{{0, 0}, {testCB, directMax}, {dio.StagingSize - directPiece, 2 * dio.StagingSize}, {100, size - 200}} {
		got, err := s.Read(ctx, c, o, uint64(rg.off), uint64(rg.n))
		end := size
		if rg.n != 0 {
			end = rg.off + rg.n
		}
		if err != nil || !bytes.Equal(got, want[rg.off:end]) {
			t.Fatalf("read %d+%d: %d bytes, %v", rg.off, rg.n, len(got), err)
		}
		// ReadCRC's checksum, folded from the blocks' checksums, is that
		// of the bytes (holes included).
		got, crc, err := s.ReadCRC(ctx, c, o, uint64(rg.off), uint64(rg.n))
		if err != nil || !bytes.Equal(got, want[rg.off:end]) || crc != crc32.Checksum(got, s.table) {
			t.Fatalf("ReadCRC %d+%d: %d bytes, crc %#08x, %v", rg.off, rg.n, len(got), crc, err)
		}
	}
	if b := s.dev.staging.Get(); b == nil {
		t.Skip("no staging buffer on this system: the staged path is not used")
	} else {
		s.dev.staging.Put(b)
	}
	if counter(s, "staged_reads") == 0 || counter(s, "unstaged_reads") != 0 {
		t.Fatalf("large reads: %d staged, %d unstaged; want some staged, none unstaged", counter(s, "staged_reads"), counter(s, "unstaged_reads"))
	}
	// Flip one byte in the second window's third piece.
	bad := uint64(dio.StagingSize + 2*directPiece + 3*testCB + 17)
	s.applyMu.RLock()
	rec, err := s.record(c, o)
	s.applyMu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	u, ok := rec.Units.Get(bad / testAU)
	if !ok {
		t.Fatal("unit not mapped")
	}
	dev := int64(u.Dev + bad%testAU)
	b := []byte{0}
	if _, err := s.dev.file.ReadAt(b, dev); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	s.dev.writes.begin() // as the store's own writes do: no prefetch may keep the old byte
	_, err = s.dev.file.WriteAt(b, dev)
	s.dev.writes.end()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.dev.file.Sync(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(ctx, c, o, 0, 0)
	if !errors.Is(err, objectstore.ErrCorrupt) || got != nil {
		t.Fatalf("read of a damaged object: %d bytes, %v; want ErrCorrupt", len(got), err)
	}
	if blk := bad / testCB * testCB; !strings.Contains(err.Error(), fmt.Sprintf("offset %d ", blk)) {
		t.Fatalf("error %q does not name the block at %d", err, blk)
	}
	if _, err := s.Read(ctx, c, o, 0, dio.StagingSize); err != nil {
		t.Fatalf("read of the undamaged first window: %v", err)
	}
}

// counter returns the value of s's counter name, failing if there is none.
func counter(s *Store, name string) uint64 {
	for _, c := range s.Counters() {
		if c.Name == name {
			return c.Value
		}
	}
	panic("no counter " + name)
}
