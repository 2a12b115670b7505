package mdcache

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/mds/mdstore"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// A damaged fragment (an omap value that does not decode, an inode
// number that cannot be there, a missing object) read after a restart
// gives EIO for requests in that directory only, is recorded once by
// object in the damage table, and never stops the engine.
func TestDamagedFragments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		fs := newFS(t, 17)
		c := fs.open(t, nil)
		root := &tclient{c: c, id: 1}
		inos := map[string]mdtypes.Ino{}
		for _, d := range []string{"a", "b", "c", "ok"} {
			rep := root.do(&wire.ClientRequest{Op: wire.MetaMkdir, Path: p(d), Mode: 0o755})
			if rep.Result != 0 {
				t.Fatal(rep.Result)
			}
			inos[d] = mdtypes.Ino(rep.CreatedIno)
			if rep := root.do(&wire.ClientRequest{Op: wire.MetaMknod, Path: p(d + "/f"), Mode: mdtypes.ModeRegular | 0o644}); rep.Result != 0 {
				t.Fatal(rep.Result)
			}
		}
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
		frag := func(d string) string { return mdtypes.DirfragObject(inos[d], mdtypes.RootFrag) }
		// a: a value that does not decode; b: an entry holding the
		// root's inode; c: its object gone.
		if err := fs.meta.SetOmap(ctx, frag("a"), map[string][]byte{mdtypes.DentryKey("f"): {1, 2, 3}}); err != nil {
			t.Fatal(err)
		}
		bad := &mdtypes.Dentry{Name: "g", Version: 1, RemoteIno: mdtypes.RootIno, RemoteType: mdtypes.DType(mdtypes.ModeDir)}
		if err := fs.meta.SetOmap(ctx, frag("b"), map[string][]byte{mdtypes.DentryKey("g"): bad.MarshalValue()}); err != nil {
			t.Fatal(err)
		}
		if err := fs.meta.Delete(ctx, frag("c")); err != nil {
			t.Fatal(err)
		}
		c = fs.open(t, nil)
		defer c.Close(ctx)
		root = &tclient{c: c, id: 2} // another client: tids start again
		for _, tc := range []struct {
			op   wire.MetaOp
			path string
			want syscall.Errno
		}{
			{wire.MetaGetattr, "", 0},
			{wire.MetaGetattr, "a", 0}, // its inode is in the root's fragment
			{wire.MetaReaddir, "a", syscall.EIO},
			{wire.MetaGetattr, "a/f", syscall.EIO},
			{wire.MetaMknod, "a/new", syscall.EIO},
			{wire.MetaReaddir, "b", syscall.EIO},
			{wire.MetaGetattr, "b/f", syscall.EIO},
			{wire.MetaReaddir, "c", syscall.EIO},
			{wire.MetaMknod, "c/new", syscall.EIO},
			{wire.MetaRmdir, "c", syscall.EIO},
			{wire.MetaReaddir, "ok", 0},
			{wire.MetaGetattr, "ok/f", 0},
			{wire.MetaMknod, "ok/new", 0},
			{wire.MetaReaddir, "", 0},
		} {
			req := &wire.ClientRequest{Op: tc.op, Path: p(tc.path)}
			if tc.op == wire.MetaMknod {
				req.Mode = mdtypes.ModeRegular | 0o644
			}
			if rep := root.do(req); rep.Result != -int32(tc.want) {
				t.Errorf("op %d on %q: result %d, want %d", tc.op, tc.path, rep.Result, -int32(tc.want))
			}
		}
		dmg, n := c.Damage()
		if n != 3 || len(dmg) != 3 || c.Stats().Damaged != 3 {
			t.Fatalf("damage table %d entries (%d counted): %v", len(dmg), n, dmg)
		}
		for i, d := range []string{"a", "b", "c"} {
			if dmg[i].Object != frag(d) {
				t.Errorf("damage %d is %q, want %q (%v)", i, dmg[i].Object, frag(d), dmg[i].Error())
			}
		}
		if !errors.Is(&dmg[2], rados.ErrNotFound) || !errors.Is(&dmg[0], mdstore.ErrDamaged) {
			t.Errorf("damage classes: %v, %v", dmg[0].Error(), dmg[2].Error())
		}
	})
}
