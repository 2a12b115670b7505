package mdcache

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// A tree bigger than the cache's bound, written back and walked twice
// by path: after each request the cache is within its bound, evicted
// names are read back, and every answer is right.
func TestEvictionBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 13)
		const bound, dirs, files = 40, 8, 10
		fs.cacheInodes = bound
		c := fs.open(t, nil)
		root := &tclient{c: c, id: 1}
		inos := map[string]uint64{}
		for i := range dirs {
			d := fmt.Sprintf("d%d", i)
			if rep := root.do(&wire.ClientRequest{Op: wire.MetaMkdir, Path: p(d), Mode: 0o755}); rep.Result != 0 {
				t.Fatal(rep.Result)
			}
			for j := range files {
				f := fmt.Sprintf("%s/f%d", d, j)
				rep := root.do(&wire.ClientRequest{Op: wire.MetaMknod, Path: p(f), Mode: mdtypes.ModeRegular | 0o600 | uint32(j)})
				if rep.Result != 0 {
					t.Fatal(rep.Result)
				}
				inos[f] = rep.CreatedIno
			}
		}
		// Everything is dirty: nothing may go yet.
		if n := c.Stats().Inodes; n < dirs*files {
			t.Fatalf("%d inodes cached before the write-back; dirty ones were evicted", n)
		}
		if err := c.WriteBack(context.Background()); err != nil {
			t.Fatal(err)
		}
		for pass := range 2 {
			for i := range dirs {
				for j := range files {
					f := fmt.Sprintf("d%d/f%d", i, j)
					rep := root.do(&wire.ClientRequest{Op: wire.MetaGetattr, Path: p(f)})
					if rep.Result != 0 {
						t.Fatalf("pass %d: getattr %s: %d", pass, f, rep.Result)
					}
					st := rep.Trace[len(rep.Trace)-1].Inode
					if st.Ino != inos[f] || st.Mode&0o7777 != 0o600|uint32(j) {
						t.Fatalf("pass %d: %s is inode %#x mode %o, want %#x %o", pass, f, st.Ino, st.Mode, inos[f], 0o600|j)
					}
					if n := c.Stats().Inodes; n > bound {
						t.Fatalf("pass %d: after getattr %s the cache holds %d inodes, above its bound %d", pass, f, n, bound)
					}
				}
			}
		}
		s := c.Stats()
		if s.Evicted < 2*dirs-2 {
			t.Fatalf("%d fragments evicted in two walks of %d directories", s.Evicted, dirs)
		}
		// A file held open pins its fragment.
		rep := root.do(&wire.ClientRequest{Op: wire.MetaOpen, Path: p("d0/f0"), OpFlags: 0, WantCaps: 1})
		if rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		for i := 1; i < dirs; i++ {
			if rep := root.do(&wire.ClientRequest{Op: wire.MetaGetattr, Path: p(fmt.Sprintf("d%d/f0", i))}); rep.Result != 0 {
				t.Fatal(rep.Result)
			}
		}
		c.mu.Lock()
		ino := mdtypes.Ino(inos["d0/f0"])
		_, cached := c.inodes[ino]
		capped := len(c.lk.Clients(locker.Ino(ino)))
		c.mu.Unlock()
		if capped == 0 || !cached {
			t.Fatalf("an open file: %d caps, cached %v", capped, cached)
		}
		if n := c.Stats().Inodes; n > bound {
			t.Fatalf("the cache holds %d inodes, above its bound %d", n, bound)
		}
	})
}
