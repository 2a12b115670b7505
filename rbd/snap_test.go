package rbd_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/rbd"
)

// read reads the whole of img.
func read(t *testing.T, img *rbd.Image) []byte {
	t.Helper()
	buf := make([]byte, img.Size())
	if err := img.ReadAt(context.Background(), buf, 0); err != nil {
		t.Fatal(err)
	}
	return buf
}

// Snapshots: data written, a snapshot, overwrites and a shrink; reads at
// each snapshot see the data as it was, a rollback brings it back, a
// protected snapshot is not removed, and the image and its objects go
// once the snapshots have.
func TestSnapshots(t *testing.T) {
	for _, dataPool := range []string{"", "data"} {
		t.Run("data pool "+dataPool, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				conn, p := cluster(t)
				ctx := context.Background()
				rng := rand.New(rand.NewPCG(1, 2))
				if err := p.Create(ctx, "vm", 1*mib, rbd.CreateOptions{Order: 16, StripeUnit: 64 * kib, StripeCount: 2, DataPool: dataPool}); err != nil {
					t.Fatal(err)
				}
				img, err := p.Open(ctx, "vm", rbd.OpenOptions{})
				if err != nil {
					t.Fatal(err)
				}
				v1 := random(rng, 1*mib)
				v1[5] = 0
				if err := img.WriteAt(ctx, v1[:700*kib], 0); err != nil { // the rest is a hole
					t.Fatal(err)
				}
				clear(v1[700*kib:])
				if err := img.SnapCreate(ctx, "one"); err != nil {
					t.Fatal(err)
				}
				if err := img.SnapCreate(ctx, "one"); !errors.Is(err, rbd.ErrExists) {
					t.Fatalf("a second snapshot named one: %v", err)
				}
				// Overwrite across object boundaries, discard, grow.
				v2 := bytes.Clone(v1)
				patch := random(rng, 200*kib)
				copy(v2[100*kib:], patch)
				if err := img.WriteAt(ctx, patch, 100*kib); err != nil {
					t.Fatal(err)
				}
				if err := img.Discard(ctx, 500*kib, 300*kib); err != nil {
					t.Fatal(err)
				}
				clear(v2[500*kib : 800*kib])
				if err := img.Resize(ctx, 2*mib, rbd.ResizeOptions{}); err != nil {
					t.Fatal(err)
				}
				tail := random(rng, 300*kib)
				if err := img.WriteAt(ctx, tail, 1700*kib); err != nil {
					t.Fatal(err)
				}
				v2 = append(v2, make([]byte, mib)...)
				copy(v2[1700*kib:], tail)
				if err := img.SnapCreate(ctx, "two"); err != nil {
					t.Fatal(err)
				}
				// Shrink below both, and overwrite.
				if err := img.Resize(ctx, 300*kib, rbd.ResizeOptions{AllowShrink: true}); err != nil {
					t.Fatal(err)
				}
				v3 := bytes.Clone(v2[:300*kib])
				copy(v3, random(rng, 300*kib))
				if err := img.WriteAt(ctx, v3, 0); err != nil {
					t.Fatal(err)
				}
				for name, want := range map[string][]byte{"one": v1, "two": v2} {
					at, err := p.Open(ctx, "vm", rbd.OpenOptions{Snap: name})
					if err != nil {
						t.Fatal(err)
					}
					if got := read(t, at); !bytes.Equal(got, want) {
						t.Fatalf("read at snapshot %s: %d bytes differ from the %d written before it", name, len(got), len(want))
					}
					if err := at.WriteAt(ctx, []byte{1}, 0); !errors.Is(err, rbd.ErrReadOnly) {
						t.Fatalf("write at a snapshot: %v", err)
					}
					if err := at.Close(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if got := read(t, img); !bytes.Equal(got, v3) {
					t.Fatal("the head differs")
				}
				list := img.SnapList()
				if len(list) != 2 || list[0].Name != "one" || list[0].Size != mib || list[1].Name != "two" || list[1].Size != 2*mib {
					t.Fatalf("snapshots %+v", list)
				}
				// Roll back to one: its bytes and size.
				if err := img.SnapRollback(ctx, "one"); err != nil {
					t.Fatal(err)
				}
				if got := read(t, img); !bytes.Equal(got, v1) {
					t.Fatal("after rollback to one the image differs from it")
				}
				// Two is intact after the rollback, and rolls forward.
				if err := img.SnapRollback(ctx, "two"); err != nil {
					t.Fatal(err)
				}
				if got := read(t, img); !bytes.Equal(got, v2) {
					t.Fatal("after rollback to two the image differs from it")
				}
				// Protection.
				if err := img.SnapProtect(ctx, "one"); err != nil {
					t.Fatal(err)
				}
				if err := img.SnapProtect(ctx, "one"); !errors.Is(err, rbd.ErrInvalid) {
					t.Fatalf("protect twice: %v", err)
				}
				if err := img.SnapRemove(ctx, "one"); !errors.Is(err, rbd.ErrBusy) {
					t.Fatalf("remove a protected snapshot: %v", err)
				}
				if err := p.Remove(ctx, "vm"); !errors.Is(err, rbd.ErrBusy) {
					t.Fatalf("remove an image with snapshots: %v", err)
				}
				if err := img.SnapUnprotect(ctx, "one"); err != nil {
					t.Fatal(err)
				}
				for _, s := range []string{"one", "two"} {
					if err := img.SnapRemove(ctx, s); err != nil {
						t.Fatal(err)
					}
				}
				if err := img.SnapRollback(ctx, "one"); !errors.Is(err, rbd.ErrNotFound) {
					t.Fatalf("rollback to a removed snapshot: %v", err)
				}
				if _, err := p.Open(ctx, "vm", rbd.OpenOptions{Snap: "one"}); !errors.Is(err, rbd.ErrNotFound) {
					t.Fatalf("open at a removed snapshot: %v", err)
				}
				if got := read(t, img); !bytes.Equal(got, v2) {
					t.Fatal("removing the snapshots changed the head")
				}
				id := img.Stat().ID
				if err := p.Remove(ctx, "vm"); !errors.Is(err, rbd.ErrBusy) {
					t.Fatalf("remove of an open image: %v", err)
				}
				if err := img.Close(ctx); err != nil {
					t.Fatal(err)
				}
				if err := p.Remove(ctx, "vm"); err != nil {
					t.Fatal(err)
				}
				for _, pool := range []string{"rbd", "data"} {
					if left := objects(t, conn, pool, "rbd_data."+id); len(left) > 0 {
						t.Fatalf("objects left after remove: %v", left)
					}
				}
			})
		})
	}
}

// Snapshots taken while writers run: each write is wholly before or
// wholly after every snapshot (it spans two objects, so a snapshot in
// the middle of one would tear it), and Flush returns once the writes
// in progress have.
func TestSnapshotsUnderWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn, _ := cluster(t)
		// One object op at a time: a write's two halves go one after the
		// other, leaving a snapshot room to fall between them.
		p, err := rbd.NewPool(conn, "rbd", rbd.Options{MaxInFlight: 1})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		const block = 96 * kib // 1.5 objects of 64 KiB: every write spans two
		const writers = 4
		if err := p.Create(ctx, "busy", writers*block, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		img, err := p.Open(ctx, "busy", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		errs := make(chan error, writers)
		for w := range writers {
			go func() {
				for gen := byte(1); ; gen++ {
					select {
					case <-stop:
						errs <- nil
						return
					default:
					}
					if err := img.WriteAt(ctx, bytes.Repeat([]byte{gen}, block), uint64(w*block)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		for i := range 5 {
			if err := img.SnapCreate(ctx, "s"+string(rune('0'+i))); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		if err := img.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for range writers {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range img.SnapList() {
			at, err := p.Open(ctx, "busy", rbd.OpenOptions{Snap: s.Name})
			if err != nil {
				t.Fatal(err)
			}
			data := read(t, at)
			for w := range writers {
				b := data[w*block : (w+1)*block]
				if !bytes.Equal(b, bytes.Repeat(b[:1], block)) {
					t.Fatalf("snapshot %s: block %d is torn", s.Name, w)
				}
			}
		}
	})
}
