package mdcache

import (
	"bytes"
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/striper"
)

// A shrinking truncate whose data is not cut before the MDS dies (the
// setattr durable, written back and its journal trimmed as far as it
// may be) is finished by the next holder of the rank: after its
// Resume (a failed cut retried at the next Tick), growing the file
// again reads zeros, not the old bytes.
func TestTruncateFinishedAfterCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 11)
		done := make(chan error, 4)
		fs.events.Truncated = func(_ uint64, err error) { done <- err }
		c := fs.open(t, nil)
		root := &tclient{c: c, id: 1}
		rep := root.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: p("f"), Mode: 0o644})
		if rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		ino := mdtypes.Ino(rep.CreatedIno)
		c.mu.Lock()
		l := *c.inodes[ino].in.Layout
		c.mu.Unlock()
		s, err := striper.New(fs.dataIO, l, striper.Options{})
		if err != nil {
			t.Fatal(err)
		}
		const size = 3 << 20 // past the first object
		old := bytes.Repeat([]byte{'x'}, size)
		ctx := context.Background()
		if err := s.WriteAt(ctx, uint64(ino), old, 0); err != nil {
			t.Fatal(err)
		}
		setSize := func(n uint64) {
			t.Helper()
			if rep := root.do(&wire.ClientRequest{Op: wire.MetaSetattr, Path: p("f"), Mask: wire.AttrSize, Size: n}); rep.Result != 0 {
				t.Fatalf("setattr size %d: %d", n, rep.Result)
			}
		}
		setSize(size)
		c.hooks = &testHooks{noTruncData: true}
		setSize(100)
		// A later change and a complete write-back: the journal is not
		// trimmed past the unfinished truncation.
		if rep := root.do(&wire.ClientRequest{Op: wire.MetaMkdir, Path: p("d"), Mode: 0o755}); rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		if err := c.WriteBack(ctx); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		pending := len(c.truncs)
		c.mu.Unlock()
		if pending != 1 {
			t.Fatalf("%d pending truncations before the crash, want 1", pending)
		}

		c = fs.open(t, nil)
		root.c = c
		c.mu.Lock()
		pending = len(c.truncs)
		c.mu.Unlock()
		if pending != 1 {
			t.Fatalf("replay found %d pending truncations, want 1", pending)
		}
		// The first cut fails; the next Tick retries it.
		c.hooks = &testHooks{failTruncData: 1}
		c.Resume()
		if err := <-done; err == nil {
			t.Fatal("a cut meant to fail succeeded")
		}
		c.Tick(time.Now())
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		setSize(size)
		got := make([]byte, size)
		if err := s.ReadAt(ctx, uint64(ino), got, 0); err != nil {
			t.Fatal(err)
		}
		want := append(bytes.Repeat([]byte{'x'}, 100), make([]byte, size-100)...)
		if !bytes.Equal(got, want) {
			i := 0
			for got[i] == want[i] {
				i++
			}
			t.Fatalf("after replay and growing the file, byte %d is %q, want %q", i, got[i], want[i])
		}

		// Recorded done: a write-back trims past it, and the next
		// holder finds nothing to finish.
		if err := c.WriteBack(ctx); err != nil {
			t.Fatal(err)
		}
		c = fs.open(t, nil)
		c.mu.Lock()
		pending = len(c.truncs)
		c.mu.Unlock()
		if pending != 0 {
			t.Fatalf("%d truncations pending after one was finished", pending)
		}
	})
}
