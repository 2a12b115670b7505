package mdcache

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// A model of the namespace: paths to files, hard links sharing one
// mfile. It predicts each operation's errno as the engine must give it
// to root (the order of the checks is the engine's where POSIX allows
// several).
type mfile struct {
	dir    bool
	mode   uint32
	size   uint64
	xattrs map[string]string
}

type model struct{ paths map[string]*mfile }

func newModel() *model { return &model{paths: map[string]*mfile{"": {dir: true}}} }

// walkErr is the errno of resolving p's parent: ENOENT for a missing
// directory on the way, ENOTDIR for a file on the way.
func (m *model) walkErr(p string) syscall.Errno {
	parts := strings.Split(p, "/")
	cur := ""
	for _, n := range parts[:len(parts)-1] {
		f := m.paths[cur]
		if f == nil {
			return syscall.ENOENT
		}
		if !f.dir {
			return syscall.ENOTDIR
		}
		cur = path.Join(cur, n)
	}
	f := m.paths[cur]
	if f == nil {
		return syscall.ENOENT
	}
	if !f.dir {
		return syscall.ENOTDIR
	}
	return 0
}

func (m *model) children(dir string) []string {
	var out []string
	for p := range m.paths {
		if p != "" && path.Dir(p) == dir || (dir == "" && p != "" && !strings.Contains(p, "/")) {
			out = append(out, path.Base(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (m *model) nlink(p string) uint32 {
	f := m.paths[p]
	if f.dir {
		n := uint32(2)
		for _, c := range m.children(p) {
			if m.paths[path.Join(p, c)].dir {
				n++
			}
		}
		return n
	}
	n := uint32(0)
	for _, g := range m.paths {
		if g == f {
			n++
		}
	}
	return n
}

// apply predicts req's errno and, if 0, applies it to the model.
func (m *model) apply(req *wire.ClientRequest) syscall.Errno {
	np := req.Path.Path
	switch req.Op {
	case wire.MetaMkdir, wire.MetaCreate:
		if e := m.walkErr(np); e != 0 {
			return e
		}
		if m.paths[np] != nil {
			return syscall.EEXIST
		}
		m.paths[np] = &mfile{dir: req.Op == wire.MetaMkdir, mode: req.Mode & 0o7777}
	case wire.MetaUnlink, wire.MetaRmdir:
		if e := m.walkErr(np); e != 0 {
			return e
		}
		f := m.paths[np]
		switch {
		case f == nil:
			return syscall.ENOENT
		case req.Op == wire.MetaRmdir && !f.dir:
			return syscall.ENOTDIR
		case req.Op == wire.MetaUnlink && f.dir:
			return syscall.EISDIR
		case f.dir && len(m.children(np)) > 0:
			return syscall.ENOTEMPTY
		}
		delete(m.paths, np)
	case wire.MetaLink:
		op := req.Path2.Path
		if e := m.walkErr(op); e != 0 {
			return e
		}
		src := m.paths[op]
		if src == nil {
			return syscall.ENOENT
		}
		if e := m.walkErr(np); e != 0 {
			return e
		}
		switch {
		case m.paths[np] != nil:
			return syscall.EEXIST
		case src.dir:
			return syscall.EPERM
		}
		m.paths[np] = src
	case wire.MetaRename:
		op := req.Path2.Path
		if e := m.walkErr(op); e != 0 {
			return e
		}
		if e := m.walkErr(np); e != 0 {
			return e
		}
		src, dst := m.paths[op], m.paths[np]
		switch {
		case src == nil:
			return syscall.ENOENT
		case src == dst:
			return 0
		case dst != nil && src.dir && !dst.dir:
			return syscall.ENOTDIR
		case dst != nil && !src.dir && dst.dir:
			return syscall.EISDIR
		case dst != nil && dst.dir && len(m.children(np)) > 0:
			return syscall.ENOTEMPTY
		case src.dir && strings.HasPrefix(np, op+"/"):
			return syscall.EINVAL
		}
		moved := map[string]*mfile{}
		for p, f := range m.paths {
			if p == op || strings.HasPrefix(p, op+"/") {
				moved[np+strings.TrimPrefix(p, op)] = f
				delete(m.paths, p)
			}
		}
		delete(m.paths, np)
		maps.Copy(m.paths, moved)
	case wire.MetaSetattr:
		if e := m.walkErr(np); e != 0 {
			return e
		}
		f := m.paths[np]
		if f == nil {
			return syscall.ENOENT
		}
		if req.Mask&wire.AttrSize != 0 {
			if f.dir {
				return syscall.EISDIR
			}
			f.size = req.Size
		}
		if req.Mask&wire.AttrMode != 0 {
			f.mode = req.Mode & 0o7777
		}
	case wire.MetaSetxattr:
		if e := m.walkErr(np); e != 0 {
			return e
		}
		f := m.paths[np]
		if f == nil {
			return syscall.ENOENT
		}
		if f.xattrs == nil {
			f.xattrs = map[string]string{}
		}
		f.xattrs[req.Name] = string(req.Value)
	}
	return 0
}

// randomOp draws an operation on a namespace of names a..d, three deep.
func randomOp(rng *rand.Rand) *wire.ClientRequest {
	name := func() string {
		depth := 1 + rng.IntN(3)
		parts := make([]string, depth)
		for i := range parts {
			parts[i] = string(rune('a' + rng.IntN(4)))
		}
		return strings.Join(parts, "/")
	}
	switch k := rng.IntN(16); {
	case k < 3:
		return &wire.ClientRequest{Op: wire.MetaMkdir, Path: p(name()), Mode: 0o755}
	case k < 6:
		return &wire.ClientRequest{Op: wire.MetaCreate, Path: p(name()), Mode: 0o644, OpFlags: syscall.O_EXCL | syscall.O_CREAT}
	case k < 8:
		return &wire.ClientRequest{Op: wire.MetaUnlink, Path: p(name())}
	case k < 9:
		return &wire.ClientRequest{Op: wire.MetaRmdir, Path: p(name())}
	case k < 10:
		return &wire.ClientRequest{Op: wire.MetaLink, Path: p(name()), Path2: p(name())}
	case k < 13:
		return &wire.ClientRequest{Op: wire.MetaRename, Path: p(name()), Path2: p(name())}
	case k < 14:
		return &wire.ClientRequest{Op: wire.MetaSetattr, Path: p(name()), Mask: wire.AttrSize | wire.AttrMode, Size: uint64(rng.IntN(1 << 20)), Mode: uint32(rng.IntN(0o777))}
	default:
		return &wire.ClientRequest{Op: wire.MetaSetxattr, Path: p(name()), Name: fmt.Sprintf("user.%d", rng.IntN(3)), Value: []byte(fmt.Sprint(rng.IntN(100)))}
	}
}

// check compares the engine's namespace with the model: every path's
// type, mode, size, link count and xattrs, every directory's listing,
// and hard links sharing one inode.
func (m *model) check(t *testing.T, tc *tclient, when string) {
	t.Helper()
	inos := map[*mfile]uint64{}
	for _, pth := range slices.Sorted(maps.Keys(m.paths)) {
		f := m.paths[pth]
		rep := tc.do(&wire.ClientRequest{Op: wire.MetaGetattr, Path: p(pth), Mask: wire.AttrXattrs})
		if rep.Result != 0 {
			t.Fatalf("%s: getattr %q: %d", when, pth, rep.Result)
		}
		st := rep.Trace[len(rep.Trace)-1].Inode
		if (st.Mode&mdtypes.ModeType == mdtypes.ModeDir) != f.dir || (pth != "" && st.Mode&0o7777 != f.mode) ||
			(!f.dir && st.Size != f.size) || st.Nlink != m.nlink(pth) {
			t.Fatalf("%s: %q is mode %o size %d nlink %d; the model has dir %v mode %o size %d nlink %d",
				when, pth, st.Mode, st.Size, st.Nlink, f.dir, f.mode, f.size, m.nlink(pth))
		}
		if prev, ok := inos[f]; ok && prev != st.Ino {
			t.Fatalf("%s: hard link %q is inode %#x, its other name %#x", when, pth, st.Ino, prev)
		}
		inos[f] = st.Ino
		for k, v := range f.xattrs {
			rep := tc.do(&wire.ClientRequest{Op: wire.MetaGetxattr, Path: p(pth), Name: k})
			if rep.Result != 0 || string(rep.Data) != v {
				t.Fatalf("%s: %q xattr %s = %q (%d), want %q", when, pth, k, rep.Data, rep.Result, v)
			}
		}
		if f.dir {
			var files, dirs uint64
			for q, g := range m.paths {
				if q != "" && (pth == "" || strings.HasPrefix(q, pth+"/")) {
					if g.dir {
						dirs++
					} else {
						files++
					}
				}
			}
			if st.RFiles != files || st.RSubdirs != dirs {
				t.Fatalf("%s: %q has rfiles %d rsubdirs %d, the model %d and %d", when, pth, st.RFiles, st.RSubdirs, files, dirs)
			}
			rep := tc.do(&wire.ClientRequest{Op: wire.MetaReaddir, Path: p(pth), MaxEntries: 2})
			var got []string
			for {
				if rep.Result != 0 {
					t.Fatalf("%s: readdir %q: %d", when, pth, rep.Result)
				}
				for _, e := range rep.Dir.Entries {
					got = append(got, e.Name)
				}
				if rep.Dir.End {
					break
				}
				rep = tc.do(&wire.ClientRequest{Op: wire.MetaReaddir, Path: p(pth), MaxEntries: 2, StartName: got[len(got)-1]})
			}
			if want := m.children(pth); !slices.Equal(got, want) {
				t.Fatalf("%s: readdir %q = %v, want %v", when, pth, got, want)
			}
		}
	}
}

// Random operations checked against the model, with the MDS crashed at
// random points (before any write-back, in the middle of one, after
// one but before its trim) and a new MDS replaying the journal: no
// acknowledged (safe) operation is lost, none is applied twice, and the
// namespace is the model's.
func TestModelWithCrashes(t *testing.T) {
	seeds, ops := 4, 300
	if testing.Short() {
		seeds, ops = 2, 150
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { modelRun(t, seed, ops, 40) })
	}
}

// The same with a crash after every operation: each create, rename
// (within and across directories), link and unlink is followed by a
// crash at one of the points and a replay.
func TestCrashAfterEveryOp(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { modelRun(t, 100+seed, 80, 1) })
	}
}

// The same with a cache bound far below the namespace's size and a
// write-back every few operations: fragments are evicted and read back
// all the time, and the answers stay the model's.
func TestModelTinyCache(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { modelRunCache(t, 200+seed, 200, 40, 14) })
	}
}

// modelRun runs ops random operations and crashes about once in
// crashEvery.
func modelRun(t *testing.T, seed uint64, ops, crashEvery int) {
	modelRunCache(t, seed, ops, crashEvery, 0)
}

// modelRunCache is modelRun with the cache bounded to cacheInodes (0:
// the default) and, when bounded, a write-back every 5 operations.
func modelRunCache(t *testing.T, seed uint64, ops, crashEvery, cacheInodes int) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, seed)
		fs.cacheInodes = cacheInodes
		rng := rand.New(rand.NewPCG(seed, 38))
		c := fs.open(t, nil)
		tc := &tclient{c: c, id: 1}
		m := newModel()
		for i := range ops {
			req := randomOp(rng)
			want := m.apply(req)
			rep := tc.do(req)
			if got := syscall.Errno(-rep.Result); got != want {
				t.Fatalf("op %d: %v %q (from %q): errno %d (%v), the model says %d (%v)", i, req.Op, req.Path.Path, req.Path2.Path, got, got, want, want)
			}
			if cacheInodes > 0 && i%5 == 4 {
				if err := c.WriteBack(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if rng.IntN(crashEvery) != 0 {
				continue
			}
			point := rng.IntN(4)
			switch point {
			case 1: // a write-back that completes, then the crash
				if err := c.WriteBack(context.Background()); err != nil {
					t.Fatal(err)
				}
			case 2: // a crash in the middle of a write-back
				c.hooks = &testHooks{failWrite: 1 + rng.IntN(6)}
				_ = c.WriteBack(context.Background())
			case 3: // written back, not trimmed
				c.hooks = &testHooks{skipTrim: true}
				if err := c.WriteBack(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			c = fs.open(t, nil)
			tc.c = c
			m.check(t, tc, fmt.Sprintf("after op %d (%v) and a crash (point %d)", i, req.Op, point))
		}
		if cacheInodes > 0 && c.Stats().Evicted == 0 {
			t.Fatal("a tiny cache evicted nothing")
		}
		if err := c.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		c = fs.open(t, nil)
		tc.c = c
		m.check(t, tc, "after a clean close")
	})
}

// Every crash point of the write-back after each kind of rename and
// link, not a random one: a namespace with a hard link across two
// directories is written back cleanly, one operation is applied, and
// the MDS crashes before its n-th object write, for every n until the
// write-back completes (then once more, written back but not trimmed).
// The replayed namespace is the model's each time: nothing the
// operation changed is lost or doubled, whichever objects reached the
// OSDs first.
func TestCrashAtEveryWriteBackPoint(t *testing.T) {
	// Requests are made afresh for each run: the engine may fill them in.
	setup := func() []*wire.ClientRequest {
		return []*wire.ClientRequest{
			{Op: wire.MetaMkdir, Path: p("a"), Mode: 0o755},
			{Op: wire.MetaMkdir, Path: p("b"), Mode: 0o755},
			{Op: wire.MetaMkdir, Path: p("a/d"), Mode: 0o755},
			{Op: wire.MetaCreate, Path: p("a/d/x"), Mode: 0o644, OpFlags: syscall.O_EXCL | syscall.O_CREAT},
			{Op: wire.MetaCreate, Path: p("a/f"), Mode: 0o644, OpFlags: syscall.O_EXCL | syscall.O_CREAT},
			{Op: wire.MetaCreate, Path: p("b/g"), Mode: 0o644, OpFlags: syscall.O_EXCL | syscall.O_CREAT},
			{Op: wire.MetaLink, Path: p("b/h"), Path2: p("a/f")}, // b/h: a second name of a/f
		}
	}
	for _, tc := range []struct {
		name string
		op   func() *wire.ClientRequest
	}{
		{"rename within a directory", func() *wire.ClientRequest {
			return &wire.ClientRequest{Op: wire.MetaRename, Path: p("a/f2"), Path2: p("a/f")}
		}},
		{"rename across directories", func() *wire.ClientRequest {
			return &wire.ClientRequest{Op: wire.MetaRename, Path: p("b/f"), Path2: p("a/f")}
		}},
		{"rename over one of two names of a file", func() *wire.ClientRequest {
			return &wire.ClientRequest{Op: wire.MetaRename, Path: p("a/f"), Path2: p("b/g")}
		}},
		{"rename of a hard-linked file over a file in another directory", func() *wire.ClientRequest {
			return &wire.ClientRequest{Op: wire.MetaRename, Path: p("b/g"), Path2: p("a/f")}
		}},
		{"rename over a file", func() *wire.ClientRequest {
			return &wire.ClientRequest{Op: wire.MetaRename, Path: p("b/g"), Path2: p("a/d/x")}
		}},
		{"rename of a hard link over its other name", func() *wire.ClientRequest {
			return &wire.ClientRequest{Op: wire.MetaRename, Path: p("a/f"), Path2: p("b/h")}
		}},
		{"rename of a directory across directories", func() *wire.ClientRequest {
			return &wire.ClientRequest{Op: wire.MetaRename, Path: p("b/d"), Path2: p("a/d")}
		}},
		{"link across directories", func() *wire.ClientRequest {
			return &wire.ClientRequest{Op: wire.MetaLink, Path: p("a/g"), Path2: p("b/g")}
		}},
		{"unlink of one of two names", func() *wire.ClientRequest { return &wire.ClientRequest{Op: wire.MetaUnlink, Path: p("a/f")} }},
		{"unlink of the last name", func() *wire.ClientRequest { return &wire.ClientRequest{Op: wire.MetaUnlink, Path: p("b/g")} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for point := 1; ; point++ {
				if completed := crashAtWriteBackPoint(t, setup(), tc.op(), point); completed {
					break
				}
			}
		})
	}
}

// crashAtWriteBackPoint runs setup, writes it back, applies op and
// crashes before the write-back's point-th object write (or, when the
// write-back has fewer writes, after it, before the trim); it checks
// the replayed namespace against the model and reports whether the
// write-back completed.
func crashAtWriteBackPoint(t *testing.T, setup []*wire.ClientRequest, op *wire.ClientRequest, point int) (completed bool) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, uint64(point))
		c := fs.open(t, nil)
		tc := &tclient{c: c, id: 1}
		m := newModel()
		apply := func(req *wire.ClientRequest) {
			want := m.apply(req)
			if got := syscall.Errno(-tc.do(req).Result); got != want {
				t.Fatalf("%v %q: errno %v, the model says %v", req.Op, req.Path.Path, got, want)
			}
		}
		for _, req := range setup {
			apply(req)
		}
		if err := c.WriteBack(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := m.apply(op); want != 0 {
			t.Fatalf("%v %q from %q fails in the model (%v): the case tests nothing", op.Op, op.Path.Path, op.Path2.Path, want)
		}
		if got := syscall.Errno(-tc.do(op).Result); got != 0 {
			t.Fatalf("%v %q from %q: errno %v", op.Op, op.Path.Path, op.Path2.Path, got)
		}
		c.hooks = &testHooks{failWrite: point, skipTrim: true}
		err := c.WriteBack(context.Background())
		if err != nil && !errors.Is(err, errCrashPoint) {
			t.Fatal(err)
		}
		completed = err == nil
		c = fs.open(t, nil)
		tc.c = c
		m.check(t, tc, fmt.Sprintf("after %v and a crash before write %d of the write-back", op.Op, point))
	})
	return completed
}
