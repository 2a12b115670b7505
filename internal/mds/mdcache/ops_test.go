package mdcache

import (
	"fmt"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// opCase is one request and the errno it must get (0: success).
type opCase struct {
	name string
	as   *tclient // nil: root
	req  wire.ClientRequest
	want syscall.Errno
}

func mk(op wire.MetaOp, path string) wire.ClientRequest {
	return wire.ClientRequest{Op: op, Path: p(path)}
}

func runCases(t *testing.T, root *tclient, cases []opCase) {
	t.Helper()
	for _, tc := range cases {
		cl := tc.as
		if cl == nil {
			cl = root
		}
		req := tc.req
		rep := cl.do(&req)
		if got := syscall.Errno(-rep.Result); got != tc.want {
			t.Errorf("%s: %v %q: errno %d (%v), want %d (%v)", tc.name, req.Op, req.Path.Path, got, got, tc.want, tc.want)
		}
	}
}

// Each operation's POSIX errno cases, as root and as an unprivileged
// user (POSIX.1-2017 for each call; Linux's choices where POSIX leaves
// one open).
func TestOpsErrno(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 1)
		c := fs.open(t, nil)
		root := &tclient{c: c, id: 1}
		user := &tclient{c: c, id: 2, uid: 1000, gid: 1000}
		other := &tclient{c: c, id: 3, uid: 1001, gid: 1001}
		long := string(make([]byte, 256))
		for i := range []byte(long) {
			long = long[:i] + "x" + long[i+1:]
		}
		withMode := func(r wire.ClientRequest, m uint32) wire.ClientRequest { r.Mode = m; return r }
		withFlags := func(r wire.ClientRequest, f uint32) wire.ClientRequest { r.OpFlags = f; return r }
		link := func(newp, oldp string) wire.ClientRequest {
			return wire.ClientRequest{Op: wire.MetaLink, Path: p(newp), Path2: p(oldp)}
		}
		rename := func(newp, oldp string, fl uint32) wire.ClientRequest {
			return wire.ClientRequest{Op: wire.MetaRename, Path: p(newp), Path2: p(oldp), OpFlags: fl}
		}
		sym := func(path, target string) wire.ClientRequest {
			return wire.ClientRequest{Op: wire.MetaSymlink, Path: p(path), Target: target}
		}
		runCases(t, root, []opCase{
			{"mkdir", nil, withMode(mk(wire.MetaMkdir, "d"), 0o755), 0},
			{"mkdir exists", nil, withMode(mk(wire.MetaMkdir, "d"), 0o755), syscall.EEXIST},
			{"mkdir no parent", nil, mk(wire.MetaMkdir, "nope/x"), syscall.ENOENT},
			{"mkdir long name", nil, mk(wire.MetaMkdir, long), syscall.ENAMETOOLONG},
			{"mkdir dot", nil, mk(wire.MetaMkdir, "d/.."), syscall.EINVAL},
			{"mkdir NUL", nil, mk(wire.MetaMkdir, "a\x00b"), syscall.EINVAL},
			{"create", nil, withMode(mk(wire.MetaCreate, "d/f"), 0o644), 0},
			{"create again", nil, withMode(mk(wire.MetaCreate, "d/f"), 0o644), 0},
			{"create excl", nil, withFlags(mk(wire.MetaCreate, "d/f"), syscall.O_EXCL), syscall.EEXIST},
			{"create under a file", nil, mk(wire.MetaCreate, "d/f/g"), syscall.ENOTDIR},
			{"mknod dir type", nil, withMode(mk(wire.MetaMknod, "d/n"), mdtypes.ModeDir|0o644), syscall.EPERM},
			{"mknod fifo", nil, withMode(mk(wire.MetaMknod, "d/fifo"), mdtypes.ModeFIFO|0o644), 0},
			{"symlink", nil, sym("d/s", "/some/where"), 0},
			{"symlink empty", nil, sym("d/s2", ""), syscall.ENOENT},
			{"rmdir not empty", nil, mk(wire.MetaRmdir, "d"), syscall.ENOTEMPTY},
			{"rmdir a file", nil, mk(wire.MetaRmdir, "d/f"), syscall.ENOTDIR},
			{"unlink a dir", nil, mk(wire.MetaUnlink, "d"), syscall.EISDIR},
			{"unlink missing", nil, mk(wire.MetaUnlink, "d/missing"), syscall.ENOENT},
			{"link", nil, link("d/f2", "d/f"), 0},
			{"link exists", nil, link("d/f2", "d/f"), syscall.EEXIST},
			{"link a dir", nil, link("d2", "d"), syscall.EPERM},
			{"rename into own subtree", nil, rename("d/sub", "d", 0), syscall.EINVAL},
			{"rename noreplace", nil, rename("d/f2", "d/f", renameNoReplace), syscall.EEXIST},
			{"rename both flags", nil, rename("d/f2", "d/f", renameNoReplace|renameExchange), syscall.EINVAL},
			{"rename exchange missing", nil, rename("d/zz", "d/f", renameExchange), syscall.ENOENT},
			{"rename file over dir", nil, rename("d", "d/f", 0), syscall.EISDIR},
			{"mkdir e", nil, withMode(mk(wire.MetaMkdir, "e"), 0o755), 0},
			{"rename dir over file", nil, rename("d/f", "e", 0), syscall.ENOTDIR},
			{"rename dir over nonempty dir", nil, rename("d", "e", 0), syscall.ENOTEMPTY},
			{"rename missing", nil, rename("x", "missing", 0), syscall.ENOENT},
			{"getxattr missing", nil, wire.ClientRequest{Op: wire.MetaGetxattr, Path: p("d/f"), Name: "user.a"}, syscall.ENODATA},
			{"setxattr replace missing", nil, wire.ClientRequest{Op: wire.MetaSetxattr, Path: p("d/f"), Name: "user.a", Value: []byte("1"), OpFlags: xattrReplace}, syscall.ENODATA},
			{"setxattr", nil, wire.ClientRequest{Op: wire.MetaSetxattr, Path: p("d/f"), Name: "user.a", Value: []byte("1")}, 0},
			{"setxattr create exists", nil, wire.ClientRequest{Op: wire.MetaSetxattr, Path: p("d/f"), Name: "user.a", Value: []byte("1"), OpFlags: xattrCreate}, syscall.EEXIST},
			{"rmxattr", nil, wire.ClientRequest{Op: wire.MetaRmxattr, Path: p("d/f"), Name: "user.a"}, 0},
			{"rmxattr again", nil, wire.ClientRequest{Op: wire.MetaRmxattr, Path: p("d/f"), Name: "user.a"}, syscall.ENODATA},
			{"user creates in root-owned dir", user, mk(wire.MetaCreate, "d/u"), syscall.EACCES},
			{"sticky dir", nil, withMode(mk(wire.MetaMkdir, "tmp"), 0o1777), 0},
			{"user creates in sticky", user, withMode(mk(wire.MetaCreate, "tmp/u"), 0o644), 0},
			{"other unlinks user's file in sticky", other, mk(wire.MetaUnlink, "tmp/u"), syscall.EPERM},
			{"other chmods user's file", other, wire.ClientRequest{Op: wire.MetaSetattr, Path: p("tmp/u"), Mask: wire.AttrMode, Mode: 0o777}, syscall.EPERM},
			{"user chowns to other", user, wire.ClientRequest{Op: wire.MetaSetattr, Path: p("tmp/u"), Mask: wire.AttrUID, SetUID: 1001}, syscall.EPERM},
			{"other sets times", other, wire.ClientRequest{Op: wire.MetaSetattr, Path: p("tmp/u"), Mask: wire.AttrMtime}, syscall.EPERM},
			{"other truncates", other, wire.ClientRequest{Op: wire.MetaSetattr, Path: p("tmp/u"), Mask: wire.AttrSize}, syscall.EACCES},
			{"user unlinks own", user, mk(wire.MetaUnlink, "tmp/u"), 0},
			{"truncate dir", nil, wire.ClientRequest{Op: wire.MetaSetattr, Path: p("d"), Mask: wire.AttrSize}, syscall.EISDIR},
			{"open dir for write", nil, withFlags(mk(wire.MetaOpen, "d"), syscall.O_WRONLY), syscall.EISDIR},
			{"open missing", nil, mk(wire.MetaOpen, "d/none"), syscall.ENOENT},
			{"rmdir e", nil, mk(wire.MetaRmdir, "e"), 0},
			{"lookup gone", nil, mk(wire.MetaGetattr, "e"), syscall.ENOENT},
		})
	})
}

// Link counts and times as Linux keeps them: a directory's nlink is 2
// plus its subdirectories; a hard link raises the file's; rename moves
// a subdirectory's link between parents.
func TestLinkCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 2)
		c := fs.open(t, nil)
		root := &tclient{c: c, id: 1}
		nlink := func(path string) uint32 {
			t.Helper()
			rep := root.do(&wire.ClientRequest{Op: wire.MetaGetattr, Path: p(path)})
			if rep.Result != 0 {
				t.Fatalf("getattr %s: %d", path, rep.Result)
			}
			return rep.Trace[len(rep.Trace)-1].Inode.Nlink
		}
		for _, r := range []wire.ClientRequest{mk(wire.MetaMkdir, "a"), mk(wire.MetaMkdir, "b"), mk(wire.MetaMkdir, "a/x"),
			mk(wire.MetaCreate, "a/f"), {Op: wire.MetaLink, Path: p("b/g"), Path2: p("a/f")}} {
			if rep := root.do(&r); rep.Result != 0 {
				t.Fatalf("%v %s: %d", r.Op, r.Path.Path, rep.Result)
			}
		}
		if n := nlink(""); n != 4 {
			t.Errorf("root nlink %d, want 4", n)
		}
		if n := nlink("a"); n != 3 {
			t.Errorf("a nlink %d, want 3", n)
		}
		if n := nlink("b/g"); n != 2 {
			t.Errorf("hard-linked file nlink %d, want 2", n)
		}
		if rep := root.do(&wire.ClientRequest{Op: wire.MetaRename, Path: p("b/x"), Path2: p("a/x")}); rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		if a, b := nlink("a"), nlink("b"); a != 2 || b != 3 {
			t.Errorf("after moving a/x to b: nlink a %d b %d, want 2 and 3", a, b)
		}
		if rep := root.do(&wire.ClientRequest{Op: wire.MetaUnlink, Path: p("a/f")}); rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		if n := nlink("b/g"); n != 1 {
			t.Errorf("after unlinking the primary: nlink %d, want 1", n)
		}
	})
}

// Quotas as CephFS sets them (ceph.quota.*): a directory's max_files
// counts the files and directories beneath it; max_bytes the bytes;
// creates and growing truncates beyond them fail with EDQUOT. Layouts
// set on a directory are inherited by its new files.
func TestQuotasAndLayouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 7)
		c := fs.open(t, nil)
		root := &tclient{c: c, id: 1}
		set := func(path, name, val string) int32 {
			return root.do(&wire.ClientRequest{Op: wire.MetaSetxattr, Path: p(path), Name: name, Value: []byte(val)}).Result
		}
		get := func(path, name string) string {
			rep := root.do(&wire.ClientRequest{Op: wire.MetaGetxattr, Path: p(path), Name: name})
			if rep.Result != 0 {
				t.Fatalf("getxattr %s %s: %d", path, name, rep.Result)
			}
			return string(rep.Data)
		}
		runCases(t, root, []opCase{
			{"mkdir q", nil, mk(wire.MetaMkdir, "q"), 0},
			{"mkdir q/sub", nil, mk(wire.MetaMkdir, "q/sub"), 0},
		})
		if r := set("q", "ceph.quota.max_files", "3"); r != 0 {
			t.Fatal(r)
		}
		if r := set("q", "ceph.quota.max_bytes", "1000"); r != 0 {
			t.Fatal(r)
		}
		runCases(t, root, []opCase{
			{"second entry", nil, mk(wire.MetaCreate, "q/sub/a"), 0},
			{"third entry", nil, mk(wire.MetaCreate, "q/b"), 0},
			{"fourth entry", nil, mk(wire.MetaCreate, "q/sub/c"), syscall.EDQUOT},
			{"within bytes", nil, wire.ClientRequest{Op: wire.MetaSetattr, Path: p("q/b"), Mask: wire.AttrSize, Size: 1000}, 0},
			{"beyond bytes", nil, wire.ClientRequest{Op: wire.MetaSetattr, Path: p("q/sub/a"), Mask: wire.AttrSize, Size: 1}, syscall.EDQUOT},
			{"quota on a file", nil, wire.ClientRequest{Op: wire.MetaSetxattr, Path: p("q/b"), Name: "ceph.quota.max_files", Value: []byte("1")}, syscall.EINVAL},
		})
		if got := get("q", "ceph.dir.rfiles"); got != "2" {
			t.Errorf("rfiles %s, want 2", got)
		}
		if got := get("q", "ceph.dir.rbytes"); got != "1000" {
			t.Errorf("rbytes %s, want 1000", got)
		}
		if r := set("q", "ceph.dir.layout", "stripe_unit=65536 stripe_count=4 object_size=1048576"); r != 0 {
			t.Fatal(r)
		}
		if r := set("q", "ceph.quota.max_files", "0"); r != 0 {
			t.Fatal(r)
		}
		if rep := root.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: p("q/sub/new")}); rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		want := "stripe_unit=65536 stripe_count=4 object_size=1048576 pool=" + fmt.Sprint(fs.data)
		if got := get("q/sub/new", "ceph.file.layout"); got != want {
			t.Errorf("inherited layout %q, want %q", got, want)
		}
		if r := set("q", "ceph.dir.layout", "stripe_unit=1000"); r != -int32(syscall.EINVAL) {
			t.Errorf("an invalid layout: %d", r)
		}
		// The quota and statistics survive a crash.
		c2 := fs.open(t, nil)
		root.c = c2
		if got := get("q", "ceph.quota.max_bytes"); got != "1000" {
			t.Errorf("max_bytes after replay %s", got)
		}
		if got := get("q", "ceph.dir.rfiles"); got != "3" {
			t.Errorf("rfiles after replay %s, want 3", got)
		}
	})
}

// POSIX ACLs are not enforced, so they are not stored either.
func TestPosixACLRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 2)
		c := fs.open(t, nil)
		root := &tclient{c: c, id: 1}
		runCases(t, root, []opCase{
			{"mknod", nil, wire.ClientRequest{Op: wire.MetaMknod, Path: p("f"), Mode: 0o644 | syscall.S_IFREG}, 0},
			{"access ACL", nil, wire.ClientRequest{Op: wire.MetaSetxattr, Path: p("f"), Name: "system.posix_acl_access", Value: []byte{2, 0, 0, 0}}, syscall.EOPNOTSUPP},
			{"default ACL", nil, wire.ClientRequest{Op: wire.MetaSetxattr, Path: p(""), Name: "system.posix_acl_default", Value: []byte{2, 0, 0, 0}}, syscall.EOPNOTSUPP},
			{"another system attribute", nil, wire.ClientRequest{Op: wire.MetaSetxattr, Path: p("f"), Name: "system.other", Value: []byte("x")}, 0},
		})
	})
}
