package blockstore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// Objects written one after another and read back in order are served
// from prefetches, and a prefetch of bytes that a later write replaced on
// the file is not used: the read returns the new bytes (with the stale
// prefetch it would fail its checksum).
func TestReadaheadFollowsSequentialReads(t *testing.T) {
	opts := testOptions(vfs.Default)
	opts.Path = filepath.Join(t.TempDir(), "store")
	s := mkfsOpen(t, opts)
	defer s.Close()
	if b := s.dev.staging.Get(); b == nil {
		t.Skip("no staging buffer on this system: large reads are not staged")
	} else {
		s.dev.staging.Put(b)
	}
	ctx := context.Background()
	c := objectstore.PGCollection(1, 0)
	apply(t, s, new(objectstore.Transaction).CreateCollection(c))
	r := rand.New(rand.NewPCG(7, 8))
	const n, size = 8, 1 << 20
	want := make([][]byte, n)
	obj := func(i int) objid.ID { return objid.Object(1, "", fmt.Sprint("seq", i)) }
	for i := range want {
		want[i] = randBytes(r, size)
		apply(t, s, new(objectstore.Transaction).Write(c, obj(i), 0, want[i]))
	}
	// The test needs the objects one after another on the device.
	s.applyMu.RLock()
	var next uint64
	for i := range n {
		rec, err := s.record(c, obj(i))
		if err != nil {
			s.applyMu.RUnlock()
			t.Fatal(err)
		}
		if first := rec.Units.At(0).Dev; i > 0 && first != next {
			s.applyMu.RUnlock()
			t.Skipf("object %d starts at %d, not after object %d (%d)", i, first, i-1, next)
		}
		next = rec.Units.At(rec.Units.Len()-1).Dev + s.sb.AllocUnit
	}
	s.applyMu.RUnlock()
	read := func(i int) {
		t.Helper()
		got, err := s.Read(ctx, c, obj(i), 0, 0)
		if err != nil || !bytes.Equal(got, want[i]) {
			t.Fatalf("object %d: read %d bytes (%v), want its %d", i, len(got), err, size)
		}
	}
	for i := range n {
		read(i)
	}
	// The third read starts the readahead: the fourth and later are
	// prefetched.
	if hits := s.dev.statReadahead.Load(); hits < n-3 {
		t.Fatalf("%d of %d sequential reads came from a prefetch, want %d", hits, n, n-3)
	}

	// Read 0-2 again (the readahead starts again at 2): objects 3 and 4
	// are prefetched. Overwrite a block of
	// 3 in place and wait until the file holds it (the data overlay no
	// longer does), then read 3.
	for i := range 3 {
		read(i)
	}
	patch := randBytes(r, testCB)
	copy(want[3][2*testCB:], patch)
	apply(t, s, new(objectstore.Transaction).Write(c, obj(3), 2*testCB, patch))
	s.prepMu.Lock()
	seq := s.nextSeq
	s.prepMu.Unlock()
	if err := s.pipe.waitFinished(ctx, seq); err != nil {
		t.Fatal(err)
	}
	before := s.dev.statReadahead.Load()
	read(3)
	if s.dev.statReadahead.Load() != before {
		t.Fatal("a prefetch made before the overwrite served the read")
	}
	read(4)
}

// The read-buffer pool keeps only whole aligned buffers of a class's
// capacity, and the first one kept asks for a trimmer (the trims
// themselves: bufpool).
func TestReadBufPoolKeepsWholeBuffers(t *testing.T) {
	var p readBufPool
	const n = 4 << 20
	b := p.alloc(n)
	if p.put(b[:n-4096:n-4096]) || p.put(make([]byte, n)[1:]) {
		t.Fatal("a buffer short of its class or misaligned was kept")
	}
	if !p.put(b) {
		t.Fatal("the first buffer back did not start a trimmer")
	}
	if got := p.get(n); len(got) != n || &got[0] != &b[0] {
		t.Fatal("the buffer kept was not handed out again")
	}
}
