package mdstore

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
)

// Backtraces lead from an inode number to its primary dentry: for a file
// (its first data object in the data pool), a directory (its first
// fragment object) and a hard link's target; after a rename the old
// backtrace is found stale, and the rewritten one leads to the new name.
func TestBacktraceLookupAfterRename(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t)
		s := fs.store(t, "client.mds.a", 1, 0)
		ctx := context.Background()
		if err := s.Mkfs(ctx, fs.data, now); err != nil {
			t.Fatal(err)
		}
		tab, _ := s.LoadInoTable(ctx)
		alloc := func() mdtypes.Ino { r, _ := tab.Alloc(1); return r.Start }
		a, b, c, f := alloc(), alloc(), alloc(), alloc()
		version := map[mdtypes.Ino]uint64{mdtypes.RootIno: 1}
		write := func(dir mdtypes.Ino, create bool, set []*mdtypes.Dentry, remove ...string) {
			t.Helper()
			version[dir]++
			u := FragUpdate{Dir: dir, Header: mdtypes.FragHeader{Version: version[dir]}, Set: set, Remove: remove, Create: create}
			if err := s.WriteBack(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		fileIn := fileInode(f, fs.data, 3)
		fileIn.Nlink = 2
		// mkdir /a /a/b /c; create /a/b/f; link /c/hard -> f
		write(mdtypes.RootIno, false, []*mdtypes.Dentry{{Name: "a", Inode: dirInode(a)}, {Name: "c", Inode: dirInode(c)}})
		write(a, true, []*mdtypes.Dentry{{Name: "b", Inode: dirInode(b)}})
		write(b, true, []*mdtypes.Dentry{{Name: "f", Inode: fileIn}})
		write(c, true, []*mdtypes.Dentry{{Name: "hard", RemoteIno: f, RemoteType: mdtypes.DType(fileIn.Mode)}})
		setBT := func(ino mdtypes.Ino, dir bool, dirs []mdtypes.Ino, path ...string) {
			t.Helper()
			pool := fs.data
			if dir {
				pool = fs.meta
			}
			bt, err := Backtrace(ino, pool, dirs, path, make([]uint64, len(path)))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SetBacktrace(ctx, bt, dir); err != nil {
				t.Fatal(err)
			}
		}
		setBT(a, true, []mdtypes.Ino{1}, "a")
		setBT(b, true, []mdtypes.Ino{1, a}, "a", "b")
		setBT(c, true, []mdtypes.Ino{1}, "c")
		setBT(f, false, []mdtypes.Ino{1, a, b}, "a", "b", "f")
		// The file's backtrace is on its first data object, in the data pool.
		if _, err := fs.dataIO.GetXattr(ctx, mdtypes.FirstDataObject(f), mdtypes.BacktraceXattr); err != nil {
			t.Fatal(err)
		}
		lookup := func(ino mdtypes.Ino, want ...string) *Location {
			t.Helper()
			loc, err := s.LookupIno(ctx, ino, fs.data)
			if err != nil {
				t.Fatalf("lookup %v: %v", ino, err)
			}
			if !slices.Equal(loc.Path, want) || loc.Dentry.Inode.Ino != ino || loc.Base != mdtypes.RootIno {
				t.Fatalf("lookup %v: %+v, want %q", ino, loc, want)
			}
			return loc
		}
		lookup(b, "a", "b")
		if loc := lookup(f, "a", "b", "f"); loc.Dir != b || loc.Dentry.Inode.Nlink != 2 {
			t.Fatalf("%+v", loc)
		}
		// The hard link: its remote dentry names f; the backtrace finds
		// the primary.
		hard, err := s.ReadDentry(ctx, c, mdtypes.RootFrag, "hard")
		if err != nil || !hard.IsRemote() {
			t.Fatal(hard, err)
		}
		if loc := lookup(hard.Ino(), "a", "b", "f"); loc.Dentry.Inode.Size != 3 {
			t.Fatalf("%+v", loc)
		}
		// rename /a/b/f /c/g: the primary dentry moves; the backtrace is
		// written after.
		write(b, false, nil, "f")
		write(c, false, []*mdtypes.Dentry{{Name: "g", Inode: fileIn}})
		if _, err := s.LookupIno(ctx, f, fs.data); !errors.Is(err, ErrStaleBacktrace) {
			t.Fatalf("lookup with the old backtrace: %v", err)
		}
		setBT(f, false, []mdtypes.Ino{1, c}, "c", "g")
		lookup(f, "c", "g")
		// rename /a /c/a2: a directory moves, and with it everything below.
		// Only a's backtrace is rewritten (as the MDS does); b's still
		// says /a/b, and its parent is found by number.
		write(mdtypes.RootIno, false, nil, "a")
		write(c, false, []*mdtypes.Dentry{{Name: "a2", Inode: dirInode(a)}})
		if _, err := s.LookupIno(ctx, b, fs.data); !errors.Is(err, ErrStaleBacktrace) {
			t.Fatalf("lookup below a moved directory before its backtrace is rewritten: %v", err)
		}
		setBT(a, true, []mdtypes.Ino{1, c}, "c", "a2")
		lookup(b, "c", "a2", "b")
		// And a file three levels below, whose backtrace names /a/b.
		d := alloc()
		write(b, false, []*mdtypes.Dentry{{Name: "deep", Inode: fileInode(d, fs.data, 0)}})
		setBT(d, false, []mdtypes.Ino{1, a, b}, "a", "b", "deep")
		lookup(d, "c", "a2", "b", "deep")
		// An inode with no backtrace anywhere.
		if _, err := s.LookupIno(ctx, alloc(), fs.data); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("no backtrace: %v", err)
		}
	})
}

// A fragment object whose omap holds a value that does not decode, a key
// that names no dentry, or a header that does not decode is reported as
// damage naming the object and key, never a panic; the other
// fragments read on.
func TestDamagedFragment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t)
		s := fs.store(t, "client.mds.a", 1, 2)
		ctx := context.Background()
		if err := s.Mkfs(ctx, fs.data, now); err != nil {
			t.Fatal(err)
		}
		good := &mdtypes.Dentry{Name: "ok", Inode: fileInode(1<<40, fs.data, 0)}
		if err := s.WriteBack(ctx, FragUpdate{Dir: 1, Header: mdtypes.FragHeader{Version: 2}, Set: []*mdtypes.Dentry{good}}); err != nil {
			t.Fatal(err)
		}
		root := mdtypes.DirfragObject(mdtypes.RootIno, mdtypes.RootFrag)
		value := good.MarshalValue()
		cases := []struct {
			key   string
			value []byte
			what  string
		}{
			{"zz_head", value[:len(value)-3], ""},           // truncated
			{"zz_head", append([]byte{9, 9}, value...), ""}, // a version from the future
			{"zz_head", []byte("garbage"), ""},
			{"zz", value, ""}, // a key that names no dentry
		}
		for i, c := range cases {
			if err := fs.metaIO.SetOmap(ctx, root, map[string][]byte{c.key: c.value}); err != nil {
				t.Fatal(err)
			}
			_, err := s.ReadFrag(ctx, mdtypes.RootIno, mdtypes.RootFrag)
			var de *DamageError
			if !errors.Is(err, ErrDamaged) || !errors.As(err, &de) || de.Object != root || de.Key != c.key || de.Pool != fs.meta {
				t.Fatalf("case %d: %v", i, err)
			}
			t.Log(err)
			if c.key == "zz_head" {
				if _, err := s.ReadDentry(ctx, mdtypes.RootIno, mdtypes.RootFrag, "zz"); !errors.As(err, &de) || de.Key != c.key {
					t.Fatalf("case %d: read dentry: %v", i, err)
				}
			}
			if err := fs.metaIO.RmOmapKeys(ctx, root, c.key); err != nil {
				t.Fatal(err)
			}
		}
		// The undamaged dentry still reads, and so does the directory
		// once repaired.
		if d, err := s.ReadDentry(ctx, mdtypes.RootIno, mdtypes.RootFrag, "ok"); err != nil || d.Inode.Ino != 1<<40 {
			t.Fatal(d, err)
		}
		if fr, err := s.ReadFrag(ctx, mdtypes.RootIno, mdtypes.RootFrag); err != nil || len(fr.Dentries) != 1 {
			t.Fatal(fr, err)
		}
		// A damaged header, and a damaged inode table.
		w := rados.NewWriteOp()
		w.SetOmapHeader([]byte{1, 1, 200, 0, 0, 0})
		if err := fs.metaIO.OperateWrite(ctx, root, w); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReadFrag(ctx, mdtypes.RootIno, mdtypes.RootFrag); !errors.Is(err, ErrDamaged) {
			t.Fatalf("header: %v", err)
		}
		if err := fs.metaIO.WriteFull(ctx, mdtypes.InoTableObject(0), []byte{1, 1, 3, 0, 0, 0, 0, 1, 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LoadInoTable(ctx); !errors.Is(err, ErrDamaged) {
			t.Fatalf("inode table: %v", err)
		}
		// A stamp of the wrong length, a damaged base inode and a damaged
		// backtrace.
		if err := fs.metaIO.SetXattr(ctx, root, GuardXattr, []byte{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReadFrag(ctx, mdtypes.RootIno, mdtypes.RootFrag); !errors.Is(err, ErrDamaged) {
			t.Fatalf("stamp: %v", err)
		}
		if err := fs.metaIO.WriteFull(ctx, mdtypes.BaseInodeObject(mdtypes.RootIno), []byte{1, 1, 2, 0, 0, 0, 7, 7}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReadBaseInode(ctx, mdtypes.RootIno); !errors.Is(err, ErrDamaged) {
			t.Fatalf("base inode: %v", err)
		}
		if err := fs.dataIO.SetXattr(ctx, mdtypes.FirstDataObject(1<<40), mdtypes.BacktraceXattr, []byte("junk")); err != nil {
			t.Fatal(err)
		}
		var de *DamageError
		if _, err := s.LookupIno(ctx, 1<<40, fs.data); !errors.As(err, &de) || de.Pool != fs.data || de.Object != "10000000000.00000000" {
			t.Fatalf("backtrace: %v", err)
		}
	})
}
