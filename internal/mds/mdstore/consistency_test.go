package mdstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
)

// A fragment read in many batches while another MDS process rewrites it
// returns one version of it: every dentry of a read carries the version
// of the read's header (each write-back rewrites them all). Without the
// stamp check between batches, reads would mix versions.
func TestReadFragIsOneVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t)
		ctx := context.Background()
		w := fs.store(t, "client.mds.writer", 1, 0)
		r := fs.store(t, "client.mds.reader", 1, 40)
		if err := w.Mkfs(ctx, fs.data, now); err != nil {
			t.Fatal(err)
		}
		const n = 400
		write := func(v uint64) error {
			u := FragUpdate{Dir: mdtypes.RootIno, Header: mdtypes.FragHeader{Version: v, Files: n}}
			for i := range n {
				in := fileInode(mdtypes.Ino(1<<40+i), fs.data, v)
				u.Set = append(u.Set, &mdtypes.Dentry{Name: fmt.Sprintf("f%04d", i), Version: v, Inode: in})
			}
			return w.WriteBack(ctx, u)
		}
		if err := write(2); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Go(func() {
			defer close(done)
			for v := uint64(3); v < 15; v++ {
				if err := write(v); err != nil {
					t.Error(err)
					return
				}
			}
		})
		reads, versions := 0, map[uint64]bool{}
		for finished := false; !finished; {
			select {
			case <-done:
				finished = true
			default:
			}
			fr, err := r.ReadFrag(ctx, mdtypes.RootIno, mdtypes.RootFrag)
			if err != nil {
				t.Fatal(err)
			}
			reads++
			versions[fr.Header.Version] = true
			if len(fr.Dentries) != n {
				t.Fatalf("%d dentries", len(fr.Dentries))
			}
			for _, d := range fr.Dentries {
				if d.Version != fr.Header.Version || d.Inode.Size != fr.Header.Version {
					t.Fatalf("read of version %d holds %q at version %d", fr.Header.Version, d.Name, d.Version)
				}
			}
		}
		wg.Wait()
		if len(versions) < 3 {
			t.Fatalf("%d reads saw only versions %v: the reads did not overlap the writes", reads, versions)
		}
		t.Logf("%d reads of 10 batches saw %d versions", reads, len(versions))
	})
}

// Stamps order as their numbers do, bytewise, and parse back; anything
// but 0 or 16 bytes is refused.
func FuzzStamp(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint64(1), uint64(3), []byte{1, 2})
	f.Fuzz(func(t *testing.T, i1, v1, i2, v2 uint64, raw []byte) {
		a, b := Stamp{i1, v1}, Stamp{i2, v2}
		less := i1 < i2 || (i1 == i2 && v1 < v2)
		if (string(a.bytes()) < string(b.bytes())) != less {
			t.Fatalf("%v < %v is %v, bytewise not", a, b, less)
		}
		if got, err := parseStamp(a.bytes()); err != nil || got != a {
			t.Fatal(got, err)
		}
		if _, err := parseStamp(raw); (err == nil) != (len(raw) == 0 || len(raw) == 16) {
			t.Fatalf("%d bytes: %v", len(raw), err)
		}
	})
}
