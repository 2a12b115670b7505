package rbd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/rbd"
)

// open opens image name of p for writing, closed at the test's end.
func open(t *testing.T, p *rbd.Pool, name string, o rbd.OpenOptions) *rbd.Image {
	t.Helper()
	img, err := p.Open(context.Background(), name, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = img.Close(context.Background()) })
	return img
}

// parentWithSnap makes image name of size bytes with random data in
// places (holes elsewhere), snapshot "s" protected, and returns the image
// and its bytes at the snapshot.
func parentWithSnap(t *testing.T, p *rbd.Pool, rng *rand.Rand, name string, size int, o rbd.CreateOptions) (*rbd.Image, []byte) {
	t.Helper()
	ctx := context.Background()
	if err := p.Create(ctx, name, uint64(size), o); err != nil {
		t.Fatal(err)
	}
	img := open(t, p, name, rbd.OpenOptions{})
	model := make([]byte, size)
	for range 8 {
		off := rng.IntN(size)
		data := random(rng, 1+rng.IntN(min(size-off, 150*kib)))
		if err := img.WriteAt(ctx, data, uint64(off)); err != nil {
			t.Fatal(err)
		}
		copy(model[off:], data)
	}
	if err := img.SnapCreate(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := img.SnapProtect(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	return img, model
}

// checkImage reads img whole, and through its allocated extents and an
// export, and compares each with want.
func checkImage(t *testing.T, img *rbd.Image, want []byte, when string) {
	t.Helper()
	ctx := context.Background()
	if got := read(t, img); img.Size() != uint64(len(want)) || !bytes.Equal(got, want) {
		t.Fatalf("%s: %s (size %d, want %d) differs from the model at %d", when, img.Stat().Name, img.Size(), len(want), firstDiff(got, want))
	}
	ext, err := img.AllocatedExtents(ctx, 0, img.Size())
	if err != nil {
		t.Fatal(err)
	}
	holes := bytes.Clone(want)
	for _, e := range ext {
		clear(holes[e.Offset : e.Offset+e.Length])
	}
	if i := bytes.IndexFunc(holes, func(r rune) bool { return r != 0 }); i >= 0 {
		t.Fatalf("%s: byte %d holds data but lies outside the allocated extents %v", when, i, ext)
	}
	var out bytes.Buffer
	if err := img.Export(ctx, &out, rbd.TransferOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("%s: the export differs from the model at %d", when, firstDiff(out.Bytes(), want))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A clone against a model: it reads as the parent's snapshot until
// written; random writes, discards and resizes of the clone (and writes
// to the parent's head, which the clone must not see) keep it equal to
// the model, read whole, through its extents and exported; a snapshot of
// the clone keeps what it was; layouts differ between parent and clone,
// and the clone may live in another pool.
func TestCloneAgainstModel(t *testing.T) {
	for i, tc := range []struct {
		name          string
		parent, child rbd.CreateOptions
		childPool     string
	}{
		{name: "same layout", parent: rbd.CreateOptions{Order: 16}},
		{name: "striped parent, plain clone in another pool", parent: rbd.CreateOptions{Order: 17, StripeUnit: 64 * kib, StripeCount: 3},
			child: rbd.CreateOptions{Order: 16}, childPool: "data"},
		{name: "striped clone", parent: rbd.CreateOptions{Order: 18}, child: rbd.CreateOptions{Order: 17, StripeUnit: 64 * kib, StripeCount: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				conn, p := cluster(t)
				ctx := context.Background()
				cp := p
				if tc.childPool != "" {
					var err error
					if cp, err = rbd.NewPool(conn, tc.childPool, rbd.Options{MaxInFlight: 4}); err != nil {
						t.Fatal(err)
					}
				}
				rng := rand.New(rand.NewPCG(uint64(i), 41))
				size := 1*mib + rng.IntN(mib)
				parent, snapData := parentWithSnap(t, p, rng, "base", size, tc.parent)
				if err := cp.Clone(ctx, p, "base", "s", "kid", tc.child); err != nil {
					t.Fatal(err)
				}
				kid := open(t, cp, "kid", rbd.OpenOptions{})
				info := kid.Stat()
				if info.Parent == nil || info.Parent.Image != "base" || info.Parent.Snap != "s" || info.Parent.Pool != "rbd" || info.Parent.Overlap != uint64(size) || info.Size != uint64(size) {
					t.Fatalf("clone info %+v parent %+v", info, info.Parent)
				}
				head := bytes.Clone(snapData)
				model := bytes.Clone(snapData)
				checkImage(t, kid, model, "new clone")
				var kidSnap []byte
				for op := range 50 {
					switch k := rng.IntN(14); {
					case k < 5: // write the clone
						off := rng.IntN(len(model))
						data := random(rng, 1+rng.IntN(min(len(model)-off, 200*kib)))
						if err := kid.WriteAt(ctx, data, uint64(off)); err != nil {
							t.Fatal(err)
						}
						copy(model[off:], data)
					case k < 7: // write the parent's head: not seen by the clone
						off := rng.IntN(len(head))
						data := random(rng, 1+rng.IntN(min(len(head)-off, 200*kib)))
						if err := parent.WriteAt(ctx, data, uint64(off)); err != nil {
							t.Fatal(err)
						}
						copy(head[off:], data)
					case k < 8: // discard the parent's head
						off := rng.IntN(len(head))
						n := 1 + rng.IntN(min(len(head)-off, 300*kib))
						if err := parent.Discard(ctx, uint64(off), uint64(n)); err != nil {
							t.Fatal(err)
						}
						clear(head[off : off+n])
					case k < 11: // discard the clone
						off := rng.IntN(len(model))
						n := 1 + rng.IntN(min(len(model)-off, 400*kib))
						if err := kid.Discard(ctx, uint64(off), uint64(n)); err != nil {
							t.Fatal(err)
						}
						clear(model[off : off+n])
					case k < 12: // resize the clone, down or up
						nsize := 64*kib + rng.IntN(2*mib)
						if err := kid.Resize(ctx, uint64(nsize), rbd.ResizeOptions{AllowShrink: true}); err != nil {
							t.Fatal(err)
						}
						if nsize < len(model) {
							model = model[:nsize]
						} else {
							model = append(model, make([]byte, nsize-len(model))...)
						}
					case k < 13 && kidSnap == nil: // a snapshot of the clone
						if err := kid.SnapCreate(ctx, "k"); err != nil {
							t.Fatal(err)
						}
						kidSnap = bytes.Clone(model)
					default: // read part of the clone
						off := rng.IntN(len(model))
						buf := bytes.Repeat([]byte{0xee}, 1+rng.IntN(min(len(model)-off, 300*kib)))
						if err := kid.ReadAt(ctx, buf, uint64(off)); err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(buf, model[off:off+len(buf)]) {
							t.Fatalf("op %d: read [%d,+%d) differs from the model at %d", op, off, len(buf), off+firstDiff(buf, model[off:]))
						}
					}
				}
				checkImage(t, kid, model, "after random ops")
				checkImage(t, parent, head, "the parent's head")
				checkObjectMap(t, conn, cp.Name(), kid.Stat().ID)
				// A diff of the clone from nothing rebuilds it in a plain image.
				var diff bytes.Buffer
				if err := kid.ExportDiff(ctx, "", &diff, rbd.TransferOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := p.Create(ctx, "copy", 64*kib, rbd.CreateOptions{Order: 16}); err != nil {
					t.Fatal(err)
				}
				cp2 := open(t, p, "copy", rbd.OpenOptions{})
				if err := cp2.ImportDiff(ctx, &diff, rbd.TransferOptions{}); err != nil {
					t.Fatal(err)
				}
				checkImage(t, cp2, model, "the clone's diff applied to a plain image")
				again := open(t, cp, "kid", rbd.OpenOptions{ReadOnly: true})
				checkImage(t, again, model, "another opener")
				if kidSnap != nil {
					at := open(t, cp, "kid", rbd.OpenOptions{Snap: "k"})
					checkImage(t, at, kidSnap, "the clone's snapshot")
					// Roll back: the clone is the snapshot again (its overlap too).
					if err := kid.SnapRollback(ctx, "k"); err != nil {
						t.Fatal(err)
					}
					checkImage(t, kid, kidSnap, "rolled back")
				}
				// Flattened (with or without a snapshot), it reads the same.
				want := model
				if kidSnap != nil {
					want = kidSnap
				}
				if err := kid.Flatten(ctx, rbd.FlattenOptions{}); err != nil {
					t.Fatal(err)
				}
				checkImage(t, kid, want, "flattened")
				checkObjectMap(t, conn, cp.Name(), kid.Stat().ID)
				if kidSnap != nil {
					checkImage(t, open(t, cp, "kid", rbd.OpenOptions{Snap: "k"}), kidSnap, "the snapshot of the flattened clone")
				}
			})
		})
	}
}

// A snapshot with clones cannot be unprotected nor removed, nor its image
// removed; the error names the clones. A clone of an unprotected
// snapshot is refused. Removing the clone frees the snapshot.
func TestCloneProtects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn, p := cluster(t)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(3, 3))
		parent, _ := parentWithSnap(t, p, rng, "base", 512*kib, rbd.CreateOptions{Order: 16})
		if err := parent.SnapCreate(ctx, "open"); err != nil {
			t.Fatal(err)
		}
		if err := p.Clone(ctx, nil, "base", "open", "x", rbd.CreateOptions{}); !errors.Is(err, rbd.ErrInvalid) {
			t.Fatalf("clone of an unprotected snapshot: %v", err)
		}
		if err := p.Clone(ctx, nil, "base", "s", "kid", rbd.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := p.Clone(ctx, nil, "base", "s", "kid", rbd.CreateOptions{}); !errors.Is(err, rbd.ErrExists) {
			t.Fatalf("a second clone named kid: %v", err)
		}
		// du counts the clone's own objects: none yet; its extents are the
		// parent's.
		kidImg := open(t, p, "kid", rbd.OpenOptions{})
		if u, err := kidImg.DiskUsage(ctx); err != nil || u.Used != 0 {
			t.Fatalf("du of a new clone: %+v %v", u, err)
		}
		if ext, err := kidImg.AllocatedExtents(ctx, 0, kidImg.Size()); err != nil || len(ext) == 0 {
			t.Fatalf("extents of a new clone: %v %v", ext, err)
		}
		if err := kidImg.Close(ctx); err != nil {
			t.Fatal(err)
		}
		data, err := rbd.NewPool(conn, "data", rbd.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := data.Clone(ctx, p, "base", "s", "far", rbd.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		kids, err := parent.Children(ctx, "s")
		if err != nil || len(kids) != 2 || !(kids[0].Pool == "rbd" && kids[0].Image == "kid" || kids[1].Pool == "rbd" && kids[1].Image == "kid") {
			t.Fatalf("children %+v %v", kids, err)
		}
		err = parent.SnapUnprotect(ctx, "s")
		if !errors.Is(err, rbd.ErrBusy) || !strings.Contains(err.Error(), "rbd/kid") || !strings.Contains(err.Error(), "data/far") {
			t.Fatalf("unprotect with clones: %v", err)
		}
		if err := parent.SnapRemove(ctx, "s"); !errors.Is(err, rbd.ErrBusy) {
			t.Fatalf("remove a snapshot with clones: %v", err)
		}
		if err := parent.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.Remove(ctx, "base"); !errors.Is(err, rbd.ErrBusy) {
			t.Fatalf("remove a parent: %v", err)
		}
		for _, rm := range []struct {
			p    *rbd.Pool
			name string
		}{{p, "kid"}, {data, "far"}} {
			if err := rm.p.Remove(ctx, rm.name); err != nil {
				t.Fatal(err)
			}
		}
		parent = open(t, p, "base", rbd.OpenOptions{})
		if kids, err := parent.Children(ctx, "s"); err != nil || len(kids) != 0 {
			t.Fatalf("children after removing them: %+v %v", kids, err)
		}
		if err := parent.SnapUnprotect(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := parent.SnapRemove(ctx, "s"); err != nil {
			t.Fatal(err)
		}
	})
}

// A grandchild (a clone of a clone's snapshot) reads through two parents;
// flattening it and its parent (which has a snapshot: it keeps its parent
// until that snapshot goes) lets each snapshot be unprotected and
// removed, and the base image removed, with every image's bytes intact.
func TestGrandchildAndFlatten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(5, 5))
		const size = 768 * kib
		base, baseSnap := parentWithSnap(t, p, rng, "base", size, rbd.CreateOptions{Order: 16, StripeUnit: 64 * kib, StripeCount: 2})
		if err := p.Clone(ctx, nil, "base", "s", "kid", rbd.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		kid := open(t, p, "kid", rbd.OpenOptions{})
		kidModel := bytes.Clone(baseSnap)
		patch := random(rng, 100*kib)
		if err := kid.WriteAt(ctx, patch, 300*kib); err != nil {
			t.Fatal(err)
		}
		copy(kidModel[300*kib:], patch)
		if err := kid.Discard(ctx, 0, 64*kib); err != nil {
			t.Fatal(err)
		}
		clear(kidModel[:64*kib])
		if err := kid.SnapCreate(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if err := kid.SnapProtect(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if err := p.Clone(ctx, nil, "kid", "k", "grandkid", rbd.CreateOptions{Order: 17}); err != nil {
			t.Fatal(err)
		}
		gk := open(t, p, "grandkid", rbd.OpenOptions{})
		gkModel := bytes.Clone(kidModel)
		patch = random(rng, 50*kib)
		if err := gk.WriteAt(ctx, patch, 700*kib); err != nil {
			t.Fatal(err)
		}
		copy(gkModel[700*kib:], patch)
		// The kid's head changes after its snapshot: not seen by the grandkid.
		if err := kid.WriteAt(ctx, random(rng, 200*kib), 100*kib); err != nil {
			t.Fatal(err)
		}
		checkImage(t, gk, gkModel, "grandchild")
		// Flattening the kid, which has a snapshot: its head no longer
		// reads the base, its snapshot still does.
		kidNow := read(t, kid)
		if err := kid.Flatten(ctx, rbd.FlattenOptions{}); err != nil {
			t.Fatal(err)
		}
		if pa := kid.Parent(); pa == nil || pa.Overlap != 0 {
			t.Fatalf("a clone flattened with a snapshot: parent %+v, want one with overlap 0", pa)
		}
		checkImage(t, kid, kidNow, "the kid flattened with a snapshot")
		checkImage(t, open(t, p, "kid", rbd.OpenOptions{Snap: "k"}), kidModel, "the kid's snapshot after the flatten")
		checkImage(t, gk, gkModel, "the grandchild after the kid's flatten")
		if err := base.SnapUnprotect(ctx, "s"); !errors.Is(err, rbd.ErrBusy) {
			t.Fatalf("unprotect while a snapshot of a flattened clone reads it: %v", err)
		}
		if err := base.Flatten(ctx, rbd.FlattenOptions{}); !errors.Is(err, rbd.ErrInvalid) {
			t.Fatalf("flatten an image that is not a clone: %v", err)
		}
		var calls, last, total uint64
		if err := gk.Flatten(ctx, rbd.FlattenOptions{Progress: func(d, n uint64) { calls, last, total = calls+1, d, n }}); err != nil {
			t.Fatal(err)
		}
		if calls == 0 || last != total || gk.Parent() != nil || gk.Stat().Parent != nil {
			t.Fatalf("flatten: %d progress calls, last %d of %d; parent %+v", calls, last, total, gk.Parent())
		}
		checkImage(t, gk, gkModel, "flattened grandchild")
		// Another opener sees the flattened header.
		checkImage(t, open(t, p, "grandkid", rbd.OpenOptions{ReadOnly: true}), gkModel, "flattened grandchild, reopened")
		if err := kid.SnapUnprotect(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if err := kid.SnapRemove(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if pa := kid.Parent(); pa != nil {
			t.Fatalf("the flattened kid keeps its parent %+v after its last snapshot went", pa)
		}
		if err := base.SnapUnprotect(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := base.SnapRemove(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := base.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.Remove(ctx, "base"); err != nil {
			t.Fatal(err)
		}
		checkImage(t, kid, kidNow, "flattened child, base removed")
		checkImage(t, gk, gkModel, "grandchild, base removed")
	})
}

// Copy-ups while OSDs stop and come back: every write to a clone's object
// that the clone lacks carries the parent's data with it, so the clone
// reads as the model after each restart.
func TestCloneCopyUpAcrossOSDRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 11, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
		for _, h := range []string{"h1", "h2", "h3"} {
			c.AddOSD(h)
		}
		c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "3", "min_size", "2")
		c.WaitForEpoch(c.Epoch())
		p, err := rbd.NewPool(c.Client("client.rbd"), "rbd", rbd.Options{MaxInFlight: 4})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(11, 11))
		const size = 1 * mib
		_, snapData := parentWithSnap(t, p, rng, "base", size, rbd.CreateOptions{Order: 16})
		if err := p.Clone(ctx, nil, "base", "s", "kid", rbd.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		kid := open(t, p, "kid", rbd.OpenOptions{})
		model := bytes.Clone(snapData)
		for _, id := range []int32{0, 1, 2} {
			c.StopOSD(id)
			for range 6 {
				off := rng.IntN(size)
				data := random(rng, 1+rng.IntN(min(size-off, 20*kib)))
				if err := kid.WriteAt(ctx, data, uint64(off)); err != nil {
					t.Fatal(err)
				}
				copy(model[off:], data)
			}
			c.StartOSD(id)
			c.WaitForEpoch(c.Epoch())
			if got := read(t, kid); !bytes.Equal(got, model) {
				t.Fatalf("after osd.%d returned: the clone differs from the model at %d", id, firstDiff(got, model))
			}
		}
	})
}

// checkObjectMap fails unless the head's object map of image id (in pool)
// says exists (or pending) for every data object that exists.
func checkObjectMap(t *testing.T, conn *rados.Conn, pool, id string) {
	t.Helper()
	io, err := conn.OpenIOContext(pool)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.Read(context.Background(), clsrbd.ObjectMapName(id, 0), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := clsrbd.DecodeObjectMap(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range objects(t, conn, pool, clsrbd.DataPrefix+id+".") {
		var no uint64
		if _, err := fmt.Sscanf(strings.TrimPrefix(name, clsrbd.DataPrefix+id+"."), "%x", &no); err != nil {
			t.Fatal(err)
		}
		if m.State(no) == clsrbd.ObjectNonexistent {
			t.Fatalf("object %s exists, and the object map says it does not", name)
		}
	}
}

// Concurrent writes to objects a clone lacks: each copy-up races the
// others (the exclusive create lets one win, the rest write in place), and
// every write lands with the parent's data around it intact.
func TestCloneConcurrentCopyUps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(8, 8))
		const size = 256 * kib
		parent, _ := parentWithSnap(t, p, rng, "base", size, rbd.CreateOptions{Order: 16})
		full := random(rng, size)
		if err := parent.WriteAt(ctx, full, 0); err != nil {
			t.Fatal(err)
		}
		if err := parent.SnapCreate(ctx, "full"); err != nil {
			t.Fatal(err)
		}
		if err := parent.SnapProtect(ctx, "full"); err != nil {
			t.Fatal(err)
		}
		if err := p.Clone(ctx, nil, "base", "full", "kid", rbd.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		kid := open(t, p, "kid", rbd.OpenOptions{})
		model := bytes.Clone(full)
		var wg sync.WaitGroup
		errs := make(chan error, 32)
		for i := range 32 { // 4 KiB pieces, 8 in each of the 4 objects
			off := (i%4)*64*kib + (i/4)*8*kib
			data := bytes.Repeat([]byte{byte(i + 1)}, 4*kib)
			copy(model[off:], data)
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- kid.WriteAt(ctx, data, uint64(off))
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		checkImage(t, kid, model, "after concurrent copy-ups")
	})
}
