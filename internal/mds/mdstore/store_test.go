package mdstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// fsCluster is a simulated cluster with a metadata and a data pool.
type fsCluster struct {
	c              *sim.Cluster
	conn           *rados.Conn
	meta, data     int64
	metaIO, dataIO *rados.IOContext
}

func newFS(t *testing.T) *fsCluster {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 7, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "cephfs.meta", "pg_num", "8", "size", "3")
	c.Run("osd pool create", "pool", "cephfs.data", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	fs := &fsCluster{c: c, conn: c.Client("client.mds")}
	var err error
	if fs.meta, err = fs.conn.LookupPool("cephfs.meta"); err != nil {
		t.Fatal(err)
	}
	if fs.data, err = fs.conn.LookupPool("cephfs.data"); err != nil {
		t.Fatal(err)
	}
	if fs.metaIO, err = fs.conn.OpenIOContext("cephfs.meta"); err != nil {
		t.Fatal(err)
	}
	if fs.dataIO, err = fs.conn.OpenIOContext("cephfs.data"); err != nil {
		t.Fatal(err)
	}
	return fs
}

// store opens a Store for rank 0 at incarnation inc on its own connection
// (a new MDS process, as far as the cluster can tell).
func (fs *fsCluster) store(t *testing.T, name string, inc uint64, batch int) *Store {
	t.Helper()
	s, err := New(Config{Conn: fs.c.Client(name), MetaPool: fs.meta, Incarnation: inc, ReadBatch: batch, Logger: sim.Logger(name)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var now = mdtypes.Time{Sec: 1 << 33, Nsec: 42} // in the year 2242

func fileInode(ino mdtypes.Ino, pool int64, size uint64) *mdtypes.Inode {
	l := layout.Default(pool)
	return &mdtypes.Inode{Ino: ino, Version: 1, Mode: mdtypes.ModeRegular | 0o644, Nlink: 1, Size: size,
		Atime: now, Mtime: now, Ctime: now, Btime: now, Layout: &l, UID: 1000, GID: 1000}
}

func dirInode(ino mdtypes.Ino) *mdtypes.Inode {
	return &mdtypes.Inode{Ino: ino, Version: 1, Mode: mdtypes.ModeDir | 0o755, Nlink: 2, Atime: now, Mtime: now, Ctime: now, Btime: now}
}

// Mkfs creates the root, the rank's mdsdir with its ten stray
// directories and the inode table; run again (whole, or after objects
// were lost) it completes what is missing and changes nothing else.
func TestMkfsIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t)
		s := fs.store(t, "client.mds.a", 1, 0)
		ctx := context.Background()
		if err := s.Mkfs(ctx, fs.data, now); err != nil {
			t.Fatal(err)
		}
		check := func(what string) {
			t.Helper()
			root, err := s.ReadBaseInode(ctx, mdtypes.RootIno)
			if err != nil || !root.IsDir() || root.Layout == nil || root.Layout.Pool != fs.data || root.Btime != now {
				t.Fatalf("%s: root %+v %v", what, root, err)
			}
			fr, err := s.ReadFrag(ctx, mdtypes.RootIno, mdtypes.RootFrag)
			if err != nil || len(fr.Dentries) != 0 || fr.Header.Version != 1 || fr.Stamp != (Stamp{1, 1}) {
				t.Fatalf("%s: root fragment %+v %v", what, fr, err)
			}
			md, err := s.ReadFrag(ctx, mdtypes.MDSDirIno(0), mdtypes.RootFrag)
			if err != nil || len(md.Dentries) != mdtypes.NumStrays || md.Header.Subdirs != mdtypes.NumStrays {
				t.Fatalf("%s: mdsdir %+v %v", what, md, err)
			}
			for i, d := range md.Dentries {
				if d.Name != mdtypes.StrayName(i) || d.Inode.Ino != mdtypes.StrayIno(0, i) || !d.Inode.IsDir() {
					t.Fatalf("%s: mdsdir entry %d: %+v", what, i, d)
				}
				if _, err := s.ReadFrag(ctx, d.Inode.Ino, mdtypes.RootFrag); err != nil {
					t.Fatalf("%s: stray %d: %v", what, i, err)
				}
				loc, err := s.LookupIno(ctx, d.Inode.Ino)
				if err != nil || loc.Base != mdtypes.MDSDirIno(0) || !slices.Equal(loc.Path, []string{d.Name}) {
					t.Fatalf("%s: stray %d by its backtrace: %+v %v", what, i, loc, err)
				}
			}
			tab, err := s.LoadInoTable(ctx)
			if err != nil || !reflect.DeepEqual(tab, mdtypes.NewInoTable(0)) {
				t.Fatalf("%s: inode table %+v %v", what, tab, err)
			}
		}
		check("after mkfs")
		if err := s.Mkfs(ctx, fs.data, mdtypes.Time{Sec: 5}); err != nil {
			t.Fatal(err)
		}
		check("after a second mkfs")
		for _, obj := range []string{mdtypes.InoTableObject(0), mdtypes.DirfragObject(mdtypes.StrayIno(0, 3), 0), mdtypes.BaseInodeObject(mdtypes.RootIno)} {
			if err := fs.metaIO.Delete(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Mkfs(ctx, fs.data, now); err != nil {
			t.Fatal(err)
		}
		check("after a mkfs that completed lost objects")
	})
}

// A directory of 10,000 entries (files, subdirectories and hard links)
// written back in several batches reads back whole, across several read
// requests; a write-back that removes and changes entries is atomic with
// its header.
func TestLargeDirectoryRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t)
		s := fs.store(t, "client.mds.a", 1, 1000)
		ctx := context.Background()
		if err := s.Mkfs(ctx, fs.data, now); err != nil {
			t.Fatal(err)
		}
		tab, err := s.LoadInoTable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		dir, _ := tab.Alloc(1)
		if err := s.WriteBack(ctx, FragUpdate{Dir: dir.Start, Header: mdtypes.FragHeader{Version: 1}, Create: true}); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		model := map[string]*mdtypes.Dentry{}
		version := uint64(1)
		var inos []mdtypes.Ino
		mk := func(i int) *mdtypes.Dentry {
			name := fmt.Sprintf("entry-%05d-%x", i, rng.Uint32())
			switch {
			case i%10 == 9 && len(inos) > 0:
				return &mdtypes.Dentry{Name: name, Version: version, RemoteIno: inos[rng.IntN(len(inos))], RemoteType: mdtypes.DType(mdtypes.ModeRegular)}
			case i%10 == 8:
				r, _ := tab.Alloc(1)
				return &mdtypes.Dentry{Name: name, Version: version, Inode: dirInode(r.Start)}
			}
			r, _ := tab.Alloc(1)
			in := fileInode(r.Start, fs.data, rng.Uint64N(1<<40))
			in.Xattrs = map[string][]byte{"user.i": []byte(name)}
			inos = append(inos, in.Ino)
			return &mdtypes.Dentry{Name: name, Version: version, Inode: in}
		}
		header := func() mdtypes.FragHeader {
			h := mdtypes.FragHeader{Version: version}
			for _, d := range model {
				if d.Inode != nil && d.Inode.IsDir() {
					h.Subdirs++
				} else {
					h.Files++
				}
			}
			return h
		}
		for b := range 5 {
			version++
			var set []*mdtypes.Dentry
			for i := b * 2000; i < (b+1)*2000; i++ {
				d := mk(i)
				set = append(set, d)
				model[d.Name] = d
			}
			if err := s.WriteBack(ctx, FragUpdate{Dir: dir.Start, Header: header(), Set: set}); err != nil {
				t.Fatal(err)
			}
		}
		compare := func(what string) {
			t.Helper()
			fr, err := s.ReadFrag(ctx, dir.Start, mdtypes.RootFrag)
			if err != nil {
				t.Fatal(err)
			}
			if fr.Header != header() || fr.Stamp != (Stamp{1, version}) {
				t.Fatalf("%s: header %+v stamp %v, want %+v", what, fr.Header, fr.Stamp, header())
			}
			if len(fr.Dentries) != len(model) {
				t.Fatalf("%s: %d dentries, want %d", what, len(fr.Dentries), len(model))
			}
			for i, d := range fr.Dentries {
				if i > 0 && fr.Dentries[i-1].Name >= d.Name {
					t.Fatalf("%s: out of order at %d", what, i)
				}
				if !reflect.DeepEqual(d, model[d.Name]) {
					t.Fatalf("%s: %q: got %+v want %+v", what, d.Name, d, model[d.Name])
				}
			}
		}
		compare("after 5 write-backs of 2,000")
		// Remove 3,000 and change 500 in one write-back.
		version++
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range model {
				if !yield(n) {
					return
				}
			}
		})
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		u := FragUpdate{Dir: dir.Start, Remove: names[:3000]}
		for _, n := range names[:3000] {
			delete(model, n)
		}
		for _, n := range names[3000:3500] {
			d := *model[n]
			d.Version = version
			if d.Inode != nil {
				d.Inode = d.Inode.Clone()
				d.Inode.Mtime = mdtypes.Time{Sec: 1<<40 + 1, Nsec: 7}
				d.Inode.Version++
			}
			model[n] = &d
			u.Set = append(u.Set, &d)
		}
		u.Header = header()
		if err := s.WriteBack(ctx, u); err != nil {
			t.Fatal(err)
		}
		compare("after removing 3,000 and changing 500")
		// Another MDS process reads the same.
		s = fs.store(t, "client.mds.b", 1, 333)
		compare("from a second store")
	})
}

// Reference: the version guard. A write-back whose stamp is below the
// stored one (an MDS of an earlier incarnation, or an older version) is
// refused whole; an equal one (a resend, a replay) is applied.
func TestStaleWriteRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t)
		ctx := context.Background()
		old := fs.store(t, "client.mds.old", 5, 0)
		if err := old.Mkfs(ctx, fs.data, now); err != nil {
			t.Fatal(err)
		}
		f := func(name string, ino mdtypes.Ino) *mdtypes.Dentry {
			return &mdtypes.Dentry{Name: name, Version: 1, Inode: fileInode(ino, fs.data, 1)}
		}
		up := func(v uint64, set ...*mdtypes.Dentry) FragUpdate {
			return FragUpdate{Dir: mdtypes.RootIno, Header: mdtypes.FragHeader{Version: v, Files: uint64(len(set))}, Set: set}
		}
		if err := old.WriteBack(ctx, up(10, f("a", 1<<40))); err != nil {
			t.Fatal(err)
		}
		if err := old.WriteBack(ctx, up(10, f("a", 1<<40))); err != nil {
			t.Fatalf("the same stamp again: %v", err)
		}
		if err := old.WriteBack(ctx, up(9, f("b", 1<<40+1))); !errors.Is(err, ErrStale) {
			t.Fatalf("an older version: %v", err)
		}
		// A new MDS takes the rank (incarnation 6), reads the fragment and
		// writes it back.
		nw := fs.store(t, "client.mds.new", 6, 0)
		fr, err := nw.ReadFrag(ctx, mdtypes.RootIno, mdtypes.RootFrag)
		if err != nil || fr.Header.Version != 10 {
			t.Fatal(fr, err)
		}
		if err := nw.WriteBack(ctx, up(fr.Header.Version+1, f("c", 1<<40+2))); err != nil {
			t.Fatal(err)
		}
		// The old MDS, still running, cannot write over it, even with a
		// higher version.
		err = old.WriteBack(ctx, FragUpdate{Dir: mdtypes.RootIno, Header: mdtypes.FragHeader{Version: 100}, Remove: []string{"a", "c"}})
		if !errors.Is(err, ErrStale) {
			t.Fatalf("the old incarnation: %v", err)
		}
		t.Log(err)
		fr, err = nw.ReadFrag(ctx, mdtypes.RootIno, mdtypes.RootFrag)
		if err != nil || fr.Header.Version != 11 || fr.Stamp != (Stamp{6, 11}) || len(fr.Dentries) != 2 {
			t.Fatalf("after the refused writes: %+v %v", fr, err)
		}
		// The same holds for base inodes and the inode table.
		root, _ := nw.ReadBaseInode(ctx, mdtypes.RootIno)
		root.Version = 2
		if err := nw.WriteBaseInode(ctx, root); err != nil {
			t.Fatal(err)
		}
		root.Version = 50
		if err := old.WriteBaseInode(ctx, root); !errors.Is(err, ErrStale) {
			t.Fatalf("base inode: %v", err)
		}
		// A fragment that does not exist is not created by a plain
		// write-back.
		if err := nw.WriteBack(ctx, FragUpdate{Dir: 1<<40 + 9, Header: mdtypes.FragHeader{Version: 1}}); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("missing fragment: %v", err)
		}
		if err := old.RemoveFrag(ctx, mdtypes.RootIno, mdtypes.RootFrag, 1000); !errors.Is(err, ErrStale) {
			t.Fatalf("remove by the old incarnation: %v", err)
		}
	})
}

// The inode table survives its MDS: a new store instance (another
// process) reads back what the first saved, and a table older than the
// stored one is not saved over it.
func TestInoTableAcrossRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t)
		ctx := context.Background()
		a := fs.store(t, "client.mds.a", 1, 0)
		if err := a.Mkfs(ctx, fs.data, now); err != nil {
			t.Fatal(err)
		}
		tab, err := a.LoadInoTable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		own, _ := tab.Alloc(1)
		prealloc, _ := tab.Alloc(1000) // a client's preallocation
		if err := tab.Release(mdtypes.Range{Start: prealloc.Start + 500, Len: 500}); err != nil {
			t.Fatal(err)
		}
		stale := *tab
		stale.Free = slices.Clone(tab.Free)
		if err := a.SaveInoTable(ctx, tab); err != nil {
			t.Fatal(err)
		}
		next, _ := tab.Alloc(1)
		if err := a.SaveInoTable(ctx, tab); err != nil {
			t.Fatal(err)
		}
		b := fs.store(t, "client.mds.b", 2, 0)
		got, err := b.LoadInoTable(ctx)
		if err != nil || !reflect.DeepEqual(got, tab) {
			t.Fatalf("read back %+v %v, want %+v", got, err, tab)
		}
		for _, ino := range []mdtypes.Ino{own.Start, prealloc.Start, prealloc.Start + 499, next.Start} {
			if got.IsFree(ino) {
				t.Fatalf("%v free after the restart", ino)
			}
		}
		if next.Start != prealloc.Start+500 || got.IsFree(next.Start) || !got.IsFree(next.End()) || len(got.Free) != 1 {
			t.Fatalf("released numbers not free: %v", got.Free)
		}
		if err := a.SaveInoTable(ctx, &stale); !errors.Is(err, ErrStale) {
			t.Fatalf("an older table: %v", err)
		}
		// Once the new incarnation saves, the old one cannot.
		if err := b.SaveInoTable(ctx, got); err != nil {
			t.Fatal(err)
		}
		tab.Version += 10
		if err := a.SaveInoTable(ctx, tab); !errors.Is(err, ErrStale) {
			t.Fatalf("the old incarnation: %v", err)
		}
	})
}
