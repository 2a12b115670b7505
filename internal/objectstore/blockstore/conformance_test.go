package blockstore

import (
	"context"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/storetest"
	"github.com/cuttlestore/cuttle/objid"
)

func openForSuite(t *testing.T) objectstore.Store {
	opts := testOptions(vfs.NewMem())
	opts.Size = 32 << 20
	if err := Mkfs(opts); err != nil {
		t.Fatal(err)
	}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, openForSuite)
}

// TestDifferentialMemstore runs the differential stream against memstore,
// then reopens the store (whose checks include that the data file
// reaches its last unit) and runs a deep fsck.
func TestDifferentialMemstore(t *testing.T) {
	for seed := range int64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			opts := testOptions(vfs.NewMem())
			opts.Size = 32 << 20
			b := mkfsOpen(t, opts)
			m := memstore.New(memstore.Options{})
			defer m.Close()
			storetest.Differential(t, seed, 300, b, m)
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if err := mustOpen(t, opts).Close(); err != nil {
				t.Fatal(err)
			}
			rep, err := Fsck(context.Background(), opts, FsckOptions{Deep: true})
			if err != nil || !rep.Clean() {
				t.Fatalf("deep fsck: %v, %v", err, rep.Problems)
			}
		})
	}
}

// TestDifferentialOnGarbage runs the differential stream on a data file
// full of random bytes, as a reused device or freed units hold: the
// blocks of a unit that no write touched are never written (newUnit), so
// every read, partial overwrite, clone and deep fsck must take them for
// zeros rather than read or verify them.
func TestDifferentialOnGarbage(t *testing.T) {
	for seed := range int64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			fs := vfs.NewMem()
			opts := testOptions(fs)
			opts.Size = 32 << 20
			if err := Mkfs(opts); err != nil {
				t.Fatal(err)
			}
			f, err := fs.OpenReadWrite(opts.devicePath(), vfs.WriteCategoryUnspecified)
			if err != nil {
				t.Fatal(err)
			}
			garbage := make([]byte, opts.Size)
			for i := range garbage {
				garbage[i] = byte(i*131 + int(seed)*7 + 1)
			}
			if _, err := f.WriteAt(garbage, 0); err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
			b, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			m := memstore.New(memstore.Options{})
			defer m.Close()
			storetest.Differential(t, seed, 300, b, m)
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			rep, err := Fsck(context.Background(), opts, FsckOptions{Deep: true})
			if err != nil || !rep.Clean() {
				t.Fatalf("deep fsck: %v, %v", err, rep.Problems)
			}
		})
	}
}

// TestSmallObjectWritesItsBlocksOnly checks that a small write of a new
// object puts only the checksum blocks it touches on the device, not
// its whole allocation unit.
func TestSmallObjectWritesItsBlocksOnly(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	s := mkfsOpen(t, opts)
	defer s.Close()
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	for _, tc := range []struct{ off, n, want int }{
		{0, 4096, 4096}, {0, 100, 4096}, {5000, 100, 4096}, {4000, 200, 8192}, {0, testAU, testAU},
	} {
		tx := new(objectstore.Transaction).Write(pg, objid.Object(1, "", fmt.Sprint("o", tc.off, "+", tc.n)), uint64(tc.off), make([]byte, tc.n))
		// Queue, keeping the prepared transaction to look at.
		s.prepMu.Lock()
		p, err := s.prepare(tx, s.drainedLocked())
		if err == nil {
			s.enqueueLocked(p)
		}
		s.prepMu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		<-p.comp.Committed()
		got := 0
		for _, w := range append(p.writes, p.deferred...) {
			got += len(w.Data)
		}
		if got != tc.want {
			t.Errorf("write of %d bytes at %d puts %d bytes on the device, want %d", tc.n, tc.off, got, tc.want)
		}
	}
}
