package scrub_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/fsclient"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/mds/cacheengine"
	"github.com/cuttlestore/cuttle/internal/mds/journal"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/mds/scrub"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
)

// fsFixture is a simulated cluster whose file system "cephfs" was
// populated through the real MDS, which was then stopped (flushing its
// journal), as `cuttle fs scrub` wants it.
type fsFixture struct {
	c          *sim.Cluster
	conn       *rados.Conn
	meta, data *rados.IOContext
	ino        map[string]mdtypes.Ino // paths' inode numbers
}

func newFixture(t *testing.T) *fsFixture {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 11, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "cephfs_metadata", "pg_num", "8", "size", "2")
	c.Run("osd pool create", "pool", "cephfs_data", "pg_num", "8", "size", "2")
	c.Run("fs new", "fs_name", "cephfs", "metadata", "cephfs_metadata", "data", "cephfs_data")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	addr := "mds-a:6800"
	cfg := daemon.MDSConfig{Name: "a", Listen: addr, Mons: c.MonAddrs(), Nonce: 1, Network: c.Net.Host(addr),
		Logger: sim.Logger("mds.a"), Open: cacheengine.Opener()}
	go func() { done <- daemon.RunMDS(ctx, cfg) }()
	for i := 0; c.Run("mds stat").Text != "cephfs:1 {0=a=up:active}\n"; i++ {
		if i == 600 {
			t.Fatalf("mds stat %q", c.Run("mds stat").Text)
		}
		time.Sleep(100 * time.Millisecond) // virtual time: the beacons' pace
	}
	fx := &fsFixture{c: c, conn: c.Client("client.scrub"), ino: map[string]mdtypes.Ino{}}
	cl, err := fsclient.Mount(ctx, c.Client("client.a"), "cephfs", fsclient.Options{Caller: &fsclient.Caller{}})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cl.Mkdir(ctx, "/d", 0o755))
	must(cl.Mkdir(ctx, "/d/sub", 0o755))
	must(cl.Mkdir(ctx, "/e", 0o755))
	for _, p := range []string{"/d/f", "/e/g"} {
		f, err := cl.Create(ctx, p, 0o644)
		must(err)
		_, err = f.Write(ctx, []byte("some data"))
		must(err)
		must(f.Close(ctx))
	}
	must(cl.Link(ctx, "/d/f", "/e/h"))
	must(cl.Symlink(ctx, "d/f", "/s"))
	for _, p := range []string{"/d", "/d/sub", "/e", "/d/f", "/e/g", "/s"} {
		st, err := cl.Stat(ctx, p)
		must(err)
		fx.ino[p] = mdtypes.Ino(st.Ino)
	}
	fx.ino["/"] = mdtypes.RootIno
	must(cl.Close(ctx))
	cancel()
	must(<-done)
	if fx.meta, err = fx.conn.OpenIOContext("cephfs_metadata"); err != nil {
		t.Fatal(err)
	}
	if fx.data, err = fx.conn.OpenIOContext("cephfs_data"); err != nil {
		t.Fatal(err)
	}
	return fx
}

func (fx *fsFixture) scrub(t *testing.T, path string) *scrub.Report {
	t.Helper()
	rep, err := scrub.Run(context.Background(), scrub.Config{Conn: fx.conn, Meta: fx.meta, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// frag names directory p's only fragment object.
func (fx *fsFixture) frag(p string) string { return mdtypes.DirfragObject(fx.ino[p], mdtypes.RootFrag) }

// saved is an object's whole state, to put back after an injection.
type saved struct {
	io     *rados.IOContext
	name   string
	exists bool
	data   []byte
	xattrs map[string][]byte
	header []byte
	omap   map[string][]byte
}

func save(t *testing.T, io *rados.IOContext, name string) *saved {
	t.Helper()
	ctx := context.Background()
	s := &saved{io: io, name: name, omap: map[string][]byte{}}
	r := rados.NewReadOp()
	st := r.Stat()
	x := r.GetXattrs()
	h := r.GetOmapHeader()
	kv := r.GetOmapVals("", "", 1<<16)
	if err := io.OperateRead(ctx, name, r); err != nil {
		return s // did not exist
	}
	s.exists, s.xattrs, s.header = true, x.Attrs, h.Data
	for _, p := range kv.Pairs {
		s.omap[p.Key] = p.Value
	}
	var err error
	if s.data, err = io.Read(ctx, name, 0, st.Size+1); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *saved) restore(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := s.io.Delete(ctx, s.name); err != nil && !isNotFound(err) {
		t.Fatal(err)
	}
	if !s.exists {
		return
	}
	w := rados.NewWriteOp()
	w.Create(true)
	w.WriteFull(s.data)
	for k, v := range s.xattrs {
		w.SetXattr(k, v)
	}
	w.SetOmapHeader(s.header)
	if len(s.omap) > 0 {
		w.SetOmap(s.omap)
	}
	if err := s.io.OperateWrite(ctx, s.name, w); err != nil {
		t.Fatal(err)
	}
}

func isNotFound(err error) bool { return errors.Is(err, rados.ErrNotFound) }

// dentry reads name's dentry from fragment object obj.
func (fx *fsFixture) dentry(t *testing.T, obj, name string) *mdtypes.Dentry {
	t.Helper()
	m, err := fx.meta.GetOmapValuesByKeys(context.Background(), obj, mdtypes.DentryKey(name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := mdtypes.UnmarshalDentry(name, m[mdtypes.DentryKey(name)])
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (fx *fsFixture) setDentry(t *testing.T, obj string, d *mdtypes.Dentry) {
	t.Helper()
	if err := fx.meta.SetOmap(context.Background(), obj, map[string][]byte{mdtypes.DentryKey(d.Name): d.MarshalValue()}); err != nil {
		t.Fatal(err)
	}
}

// A clean file system scrubs clean, whole and as a subtree; each kind of
// damage injected through RADOS is reported on the object it is in, and
// once the object is put back the scrub is clean again.
func TestScrub(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newFixture(t)
		ctx := context.Background()
		rep := fx.scrub(t, "/")
		if !rep.Clean() || rep.Dirs < 4 || rep.Files != 3 || rep.Remotes != 1 {
			t.Fatalf("a clean file system: %s: %v", rep.Summary(), rep.Problems)
		}
		t.Log(rep.Summary())
		if rep := fx.scrub(t, "/d"); !rep.Clean() || rep.Dirs != 2 || rep.Files != 1 {
			t.Fatalf("subtree /d: %s: %v", rep.Summary(), rep.Problems)
		}
		cases := []struct {
			name   string
			saves  func() []*saved
			inject func(t *testing.T)
			kind   scrub.Kind
			object func() string
		}{
			{"corrupt dentry value", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/d"))} },
				func(t *testing.T) {
					if err := fx.meta.SetOmap(ctx, fx.frag("/d"), map[string][]byte{mdtypes.DentryKey("f"): {1, 2, 3}}); err != nil {
						t.Fatal(err)
					}
				}, scrub.DamagedDentry, func() string { return fx.frag("/d") }},
			{"bad omap key", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/e"))} },
				func(t *testing.T) {
					if err := fx.meta.SetOmap(ctx, fx.frag("/e"), map[string][]byte{"junk": {1}}); err != nil {
						t.Fatal(err)
					}
				}, scrub.DamagedDentry, func() string { return fx.frag("/e") }},
			{"bad fragment header", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/d"))} },
				func(t *testing.T) {
					w := rados.NewWriteOp()
					w.SetOmapHeader([]byte{0xff, 0xff})
					if err := fx.meta.OperateWrite(ctx, fx.frag("/d"), w); err != nil {
						t.Fatal(err)
					}
				}, scrub.DamagedObject, func() string { return fx.frag("/d") }},
			{"inode number of another file", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/e"))} },
				func(t *testing.T) {
					d := fx.dentry(t, fx.frag("/e"), "g")
					d.Inode.Ino = fx.ino["/d/f"]
					fx.setDentry(t, fx.frag("/e"), d)
				}, scrub.DuplicateIno, func() string { return fx.frag("/e") }},
			{"inode number free in the table", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/e"))} },
				func(t *testing.T) {
					d := fx.dentry(t, fx.frag("/e"), "g")
					d.Inode.Ino = 1<<40 + 1<<39
					fx.setDentry(t, fx.frag("/e"), d)
				}, scrub.InoNotAllocated, func() string { return fx.frag("/e") }},
			{"system inode number", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/e"))} },
				func(t *testing.T) {
					d := fx.dentry(t, fx.frag("/e"), "g")
					d.Inode.Ino = 0x10
					fx.setDentry(t, fx.frag("/e"), d)
				}, scrub.DamagedDentry, func() string { return fx.frag("/e") }},
			{"missing fragment", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/d/sub"))} },
				func(t *testing.T) {
					if err := fx.meta.Delete(ctx, fx.frag("/d/sub")); err != nil {
						t.Fatal(err)
					}
				}, scrub.MissingDirfrag, func() string { return fx.frag("/d/sub") }},
			{"orphan fragment", func() []*saved { return []*saved{save(t, fx.meta, "abcdef123.00000000")} },
				func(t *testing.T) {
					s := save(t, fx.meta, fx.frag("/d/sub"))
					s.name = "abcdef123.00000000"
					s.restore(t)
				}, scrub.OrphanDirfrag, func() string { return "abcdef123.00000000" }},
			{"directory link count", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/"))} },
				func(t *testing.T) {
					d := fx.dentry(t, fx.frag("/"), "d")
					d.Inode.Nlink = 7
					fx.setDentry(t, fx.frag("/"), d)
				}, scrub.DirLinkCount, func() string { return fx.frag("/") }},
			{"file link count", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/e"))} },
				func(t *testing.T) {
					d := fx.dentry(t, fx.frag("/e"), "g")
					d.Inode.Nlink = 3
					fx.setDentry(t, fx.frag("/e"), d)
				}, scrub.LinkCount, func() string { return fx.frag("/e") }},
			{"hard link's file gone", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/"))} },
				func(t *testing.T) {
					fx.setDentry(t, fx.frag("/"), &mdtypes.Dentry{Name: "ghost", Version: 1, RemoteIno: 1<<40 + 99999, RemoteType: mdtypes.DType(mdtypes.ModeRegular)})
				}, scrub.DanglingRemote, func() string { return fx.frag("/") }},
			{"header counts", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/d"))} },
				func(t *testing.T) {
					w := rados.NewWriteOp()
					w.SetOmapHeader((&mdtypes.FragHeader{Version: 99, Files: 5}).Marshal())
					if err := fx.meta.OperateWrite(ctx, fx.frag("/d"), w); err != nil {
						t.Fatal(err)
					}
				}, scrub.FragStats, func() string { return fx.frag("/d") }},
			{"directory backtrace elsewhere", func() []*saved { return []*saved{save(t, fx.meta, fx.frag("/e"))} },
				func(t *testing.T) {
					bt := &mdtypes.Backtrace{Ino: fx.ino["/e"], Pool: fx.meta.PoolID(), Ancestors: []mdtypes.Ancestor{{DirIno: fx.ino["/d"], Name: "e"}}}
					if err := fx.meta.SetXattr(ctx, fx.frag("/e"), mdtypes.BacktraceXattr, bt.Marshal()); err != nil {
						t.Fatal(err)
					}
				}, scrub.BadBacktrace, func() string { return fx.frag("/e") }},
			{"file backtrace missing", func() []*saved {
				return []*saved{save(t, fx.data, mdtypes.FirstDataObject(fx.ino["/e/g"]))}
			},
				func(t *testing.T) {
					if err := fx.data.RmXattr(ctx, mdtypes.FirstDataObject(fx.ino["/e/g"]), mdtypes.BacktraceXattr); err != nil {
						t.Fatal(err)
					}
				}, scrub.MissingBacktrace, func() string { return mdtypes.FirstDataObject(fx.ino["/e/g"]) }},
			{"data past the end", func() []*saved {
				return []*saved{save(t, fx.data, fmt.Sprintf("%x.%08x", uint64(fx.ino["/e/g"]), 1))}
			},
				func(t *testing.T) {
					if err := fx.data.WriteFull(ctx, fmt.Sprintf("%x.%08x", uint64(fx.ino["/e/g"]), 1), []byte("stale")); err != nil {
						t.Fatal(err)
					}
				}, scrub.DataPastEOF, func() string { return fmt.Sprintf("%x.%08x", uint64(fx.ino["/e/g"]), 1) }},
		}
		for _, tc := range cases {
			saves := tc.saves()
			tc.inject(t)
			rep := fx.scrub(t, "/")
			found := false
			for _, p := range rep.Problems {
				if p.Kind == tc.kind && p.Object == tc.object() {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no %s on %q in %v", tc.name, tc.kind, tc.object(), rep.Problems)
			} else {
				t.Logf("%s: %v", tc.name, rep.Problems)
			}
			for _, s := range saves {
				s.restore(t)
			}
			if rep := fx.scrub(t, "/"); !rep.Clean() {
				t.Fatalf("%s: put back, the scrub finds %v", tc.name, rep.Problems)
			}
		}
	})
}

// Repair removes orphan fragments and sets directories' link counts, and
// leaves the rest for the user: a scrub after it reports only that.
func TestRepair(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newFixture(t)
		ctx := context.Background()
		orphan := save(t, fx.meta, fx.frag("/d/sub"))
		orphan.name = "abcdef123.00000000"
		orphan.restore(t)
		for _, p := range []string{"/", "/d"} {
			if p == "/" {
				b, err := fx.meta.Read(ctx, mdtypes.BaseInodeObject(mdtypes.RootIno), 0, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				in, err := mdtypes.UnmarshalInode(b)
				if err != nil {
					t.Fatal(err)
				}
				in.Nlink = 9
				if err := fx.meta.WriteFull(ctx, mdtypes.BaseInodeObject(mdtypes.RootIno), mdtypes.MarshalInode(in)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			d := fx.dentry(t, fx.frag("/"), "d")
			d.Inode.Nlink = 2
			fx.setDentry(t, fx.frag("/"), d)
		}
		if err := fx.meta.SetOmap(ctx, fx.frag("/e"), map[string][]byte{"junk": {1}}); err != nil {
			t.Fatal(err)
		}
		rep := fx.scrub(t, "/")
		fixed, err := scrub.Repair(ctx, rep)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[scrub.Kind]int{}
		for _, p := range fixed {
			kinds[p.Kind]++
		}
		if kinds[scrub.OrphanDirfrag] != 1 || kinds[scrub.DirLinkCount] != 2 || len(fixed) != 3 {
			t.Fatalf("repaired %v (found %v)", fixed, rep.Problems)
		}
		rep = fx.scrub(t, "/")
		if len(rep.Problems) != 1 || rep.Problems[0].Kind != scrub.DamagedDentry || rep.Problems[0].Repairable {
			t.Fatalf("after the repair: %v", rep.Problems)
		}

		// An event past the journal's expire position (an MDS that died
		// before writing back): reported, and repair refused.
		w, _, err := journal.Recover(ctx, journal.Config{IO: fx.meta, Ino: uint64(mdtypes.JournalIno(0))}, func(journal.Entry) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.Append([]byte("an event")); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		rep = fx.scrub(t, "/")
		found := false
		for _, p := range rep.Problems {
			found = found || (p.Kind == scrub.JournalNotFlushed && p.Object == "200.00000000")
		}
		if !found {
			t.Fatalf("an unflushed journal: %v", rep.Problems)
		}
		if _, err := scrub.Repair(ctx, rep); !errors.Is(err, scrub.ErrNotRepairable) {
			t.Fatalf("repair with an unflushed journal: %v", err)
		}
	})
}
