package rados_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/cuttlestore/cuttle/rados"
)

// The compound ops carry every operation to the OSD and their results
// back into the steps.
func TestCompoundOps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		_, io := c.connect(t)
		ctx := t.Context()
		w := rados.NewWriteOp()
		w.Create(true)
		w.Write([]byte("hello world"), 0)
		w.Append([]byte("!"))
		w.SetXattr("color", []byte("blue"))
		w.SetXattr("size", []byte("L"))
		w.SetOmap(map[string][]byte{"a": []byte("1"), "b": []byte("2"), "c": []byte("3")})
		w.SetOmapHeader([]byte("hdr"))
		w.Zero(0, 1)
		echo := w.Exec("test", "echo", []byte("in"))
		comp := io.OperateWriteAsync(ctx, "obj", w)
		if err := comp.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if string(echo.Output) != "echo:in" {
			t.Fatalf("exec output %q", echo.Output)
		}
		version := comp.Version()

		r := rados.NewReadOp()
		r.AssertExists()
		r.AssertVersion(version)
		r.CmpXattr("color", rados.CmpEq, []byte("blue"))
		r.CmpOmap(rados.CmpGte, map[string][]byte{"b": []byte("2")})
		data := r.Read(1, 4)
		sparse := r.SparseRead(0, 0)
		stat := r.Stat()
		color := r.GetXattr("color")
		attrs := r.GetXattrs()
		hdr := r.GetOmapHeader()
		keys := r.GetOmapKeys("", "", 2)
		vals := r.GetOmapVals("a", "", 10)
		byKeys := r.GetOmapValsByKeys("a", "c", "zz")
		if err := io.OperateRead(ctx, "obj", r); err != nil {
			t.Fatal(err)
		}
		if string(data.Data) != "ello" || stat.Size != 12 || string(color.Data) != "blue" || string(hdr.Data) != "hdr" {
			t.Fatalf("read %q size %d color %q header %q", data.Data, stat.Size, color.Data, hdr.Data)
		}
		if len(sparse.Extents) == 0 || !bytes.Equal(sparse.Data, []byte("\x00ello world!")) {
			t.Fatalf("sparse read %+v %q", sparse.Extents, sparse.Data)
		}
		if len(attrs.Attrs) != 2 || string(attrs.Attrs["size"]) != "L" {
			t.Fatalf("xattrs %v", attrs.Attrs)
		}
		if !slices.Equal(keys.Keys, []string{"a", "b"}) || !keys.More {
			t.Fatalf("keys %v more %v", keys.Keys, keys.More)
		}
		if len(vals.Pairs) != 2 || vals.Pairs[0].Key != "b" || vals.More {
			t.Fatalf("vals %+v", vals)
		}
		if m := byKeys.Map(); len(m) != 2 || string(m["c"]) != "3" {
			t.Fatalf("by keys %v", m)
		}
		st, err := io.Stat(ctx, "obj")
		if err != nil || st.Size != 12 || st.Version != version || st.ModTime.IsZero() {
			t.Fatalf("stat %+v, %v (version %d)", st, err, version)
		}

		// The shortcuts.
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(io.Truncate(ctx, "obj", 5))
		must(io.Write(ctx, "obj", []byte("!"), 5))
		must(io.Zero(ctx, "obj", 0, 1))
		if got, _ := io.Read(ctx, "obj", 0, 0); string(got) != "\x00ello!" {
			t.Fatalf("after truncate/write/zero: %q", got)
		}
		must(io.RmXattr(ctx, "obj", "size"))
		if v, err := io.GetXattr(ctx, "obj", "color"); err != nil || string(v) != "blue" {
			t.Fatalf("getxattr %q %v", v, err)
		}
		if xs, _ := io.ListXattrs(ctx, "obj"); len(xs) != 1 {
			t.Fatalf("xattrs after rm: %v", xs)
		}
		must(io.SetOmap(ctx, "obj", map[string][]byte{"d": []byte("4")}))
		must(io.RmOmapKeys(ctx, "obj", "a"))
		pairs, more, err := io.GetOmapValues(ctx, "obj", "", "", 100)
		if err != nil || more || len(pairs) != 3 || pairs[0].Key != "b" {
			t.Fatalf("omap %+v %v %v", pairs, more, err)
		}
		if m, _ := io.GetOmapValuesByKeys(ctx, "obj", "d"); string(m["d"]) != "4" {
			t.Fatalf("by keys %v", m)
		}
		must(io.CleanOmap(ctx, "obj"))
		if m, _ := io.GetOmapValuesByKeys(ctx, "obj", "b", "c", "d"); len(m) != 0 {
			t.Fatalf("omap after clean: %v", m)
		}
		if out, err := io.Exec(ctx, "obj", "test", "echo", []byte("x")); err != nil || string(out) != "echo:x" {
			t.Fatalf("exec %q %v", out, err)
		}
		must(io.Create(ctx, "other", false))
		must(io.Create(ctx, "other", false))
		must(io.Delete(ctx, "other"))
		st2, c2 := io.ReadAsync(ctx, "obj", 1, 2)
		if err := c2.Wait(ctx); err != nil || string(st2.Data) != "el" {
			t.Fatalf("read async %q %v", st2.Data, err)
		}
	})
}

// Failures come back as error classes with the errno in an *OpError,
// and a failed compound write applies nothing.
func TestErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		conn, io := c.connect(t)
		ctx := t.Context()
		if err := io.WriteFull(ctx, "obj", []byte("v")); err != nil {
			t.Fatal(err)
		}
		_, err := io.Read(ctx, "missing", 0, 0)
		var oe *rados.OpError
		if !errors.Is(err, rados.ErrNotFound) || !errors.As(err, &oe) || oe.Errno != wire.ENOENT || oe.Op != "read" || oe.Object != "missing" {
			t.Fatalf("read missing: %v (%+v)", err, oe)
		}
		if err := io.Create(ctx, "obj", true); !errors.Is(err, rados.ErrExists) {
			t.Fatalf("exclusive create: %v", err)
		}
		if _, err := io.GetXattr(ctx, "obj", "nope"); !errors.Is(err, rados.ErrNoAttr) {
			t.Fatalf("missing xattr: %v", err)
		}
		st, _ := io.Stat(ctx, "obj")
		for _, v := range []uint64{st.Version - 1, st.Version + 1} {
			w := rados.NewWriteOp()
			w.AssertVersion(v)
			w.WriteFull([]byte("changed"))
			if err := io.OperateWrite(ctx, "obj", w); !errors.Is(err, rados.ErrVersionMismatch) {
				t.Fatalf("assert version %d (have %d): %v", v, st.Version, err)
			}
		}
		w := rados.NewWriteOp()
		w.WriteFull([]byte("changed"))
		w.CmpXattr("x", rados.CmpEq, []byte("y"))
		if err := io.OperateWrite(ctx, "obj", w); !errors.Is(err, rados.ErrCompareFailed) || !errors.As(err, &oe) || oe.Index != 1 {
			t.Fatalf("cmpxattr: %v (%+v)", err, oe)
		}
		if got, _ := io.Read(ctx, "obj", 0, 0); string(got) != "v" {
			t.Fatalf("a failed write applied: %q", got)
		}
		if _, err := io.Exec(ctx, "obj", "nope", "nope", nil); !errors.Is(err, rados.ErrNotSupported) {
			t.Fatalf("unknown class: %v", err)
		}
		if err := io.Delete(ctx, "missing"); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("delete missing: %v", err)
		}
		if err := io.OperateWrite(ctx, "obj", rados.NewWriteOp()); !errors.Is(err, rados.ErrInvalid) {
			t.Fatalf("empty op: %v", err)
		}
		if err := io.WriteFull(ctx, "", nil); !errors.Is(err, rados.ErrInvalid) {
			t.Fatalf("empty name: %v", err)
		}
		if _, err := conn.OpenIOContext("nope"); !errors.Is(err, rados.ErrPoolNotFound) {
			t.Fatalf("open missing pool: %v", err)
		}
		if _, err := conn.MonCommand(ctx, "bogus", nil); !errors.Is(err, rados.ErrInvalid) || !errors.As(err, &oe) || oe.Errno != wire.EINVAL {
			t.Fatalf("bogus command: %v", err)
		}
		// A pool deleted under an IOContext.
		if err := conn.DeletePool(ctx, testPool); err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", nil); !errors.Is(err, rados.ErrPoolNotFound) {
			t.Fatalf("write to a deleted pool: %v", err)
		}
	})
}

// Pools created through the client are usable at once; MonCommand
// passes commands through.
func TestPoolsAndMonCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		conn, _ := c.connect(t)
		ctx := t.Context()
		if err := conn.CreatePool(ctx, "images", &rados.PoolOptions{PGNum: 4, Size: 2}); err != nil {
			t.Fatal(err)
		}
		id, err := conn.LookupPool("images")
		if err != nil || id != 2 {
			t.Fatalf("lookup: %d, %v", id, err)
		}
		if name, _ := conn.PoolName(id); name != "images" {
			t.Fatalf("pool name %q", name)
		}
		if got := conn.ListPools(); !slices.Equal(got, []string{testPool, "images"}) {
			t.Fatalf("pools %v", got)
		}
		io, err := conn.OpenIOContext("images")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "img", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if r, err := conn.MonCommand(ctx, "echo", map[string]string{"text": "hi"}); err != nil || r.Text != "hi" || string(r.Data) != `"hi"` {
			t.Fatalf("echo: %+v %v", r, err)
		}
		args := c.commands[0].Args
		if args["pg_num"] != "4" || args["size"] != "2" || args["pool"] != "images" || args["yes_i_really_mean_it"] != "" {
			t.Fatalf("create args %v", args)
		}
		if err := conn.CreatePool(ctx, "single", &rados.PoolOptions{PGNum: 4, Size: 1, FewCopies: true}); err != nil {
			t.Fatal(err)
		}
		if args := c.commands[2].Args; args["size"] != "1" || args["yes_i_really_mean_it"] != "true" {
			t.Fatalf("create args with FewCopies %v", args)
		}
		if conn.Epoch() != 3 || conn.FSID() == "" {
			t.Fatalf("epoch %d fsid %q", conn.Epoch(), conn.FSID())
		}
	})
}

// Many goroutines share one Conn while primaries move and sessions
// break: every write is applied once and reads back (run with -race).
func TestConcurrentUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{osds: 4, pgNum: 8})
		_, io := c.connect(t)
		ctx := t.Context()
		var mu sync.Mutex
		n := 0
		c.setScript(func(_ int32, op *wire.OSDOp) action {
			mu.Lock()
			defer mu.Unlock()
			n++
			switch n % 7 {
			case 3:
				return actApplyThenDrop
			case 5:
				return actDropBefore
			}
			return actServe
		})
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 8 {
			wg.Go(func() {
				name := fmt.Sprintf("obj-%d", g)
				for i := range 10 {
					if err := io.Append(ctx, name, []byte{byte('a' + i)}); err != nil {
						errs <- fmt.Errorf("%s append %d: %w", name, i, err)
						return
					}
				}
			})
		}
		wg.Go(func() {
			for i := range 6 {
				c.newEpoch(func(m *osdmap.Map, inc *osdmap.Incremental) {
					var s osdmap.Scratch
					pg := osdmap.PG{Pool: 1, Seed: uint32(i % 8)}
					mp, _ := m.PGToUpActing(pg, &s)
					inc.NewPrimaryTemp = map[osdmap.PG]int32{pg: mp.Acting[len(mp.Acting)-1]}
				})
				time.Sleep(time.Millisecond)
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		c.setScript(nil)
		for g := range 8 {
			name := fmt.Sprintf("obj-%d", g)
			if got, err := io.Read(ctx, name, 0, 0); err != nil || string(got) != "abcdefghij" {
				t.Errorf("%s = %q, %v", name, got, err)
			}
		}
		c.mu.Lock()
		for req, k := range maps.All(c.applies) {
			if k != 1 {
				t.Errorf("%v applied %d times", req, k)
			}
		}
		c.mu.Unlock()
	})
}
