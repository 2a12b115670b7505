package rbd_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/rbd"
)

// Bad input gets errors of its class, never a panic or a changed image.
func TestBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "disk", 256*kib, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		if err := p.Create(ctx, "empty", 0, rbd.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what string
			err  error
			want error
		}{
			{"same name", p.Create(ctx, "disk", 1, rbd.CreateOptions{}), rbd.ErrExists},
			{"order 12", p.Create(ctx, "x", mib, rbd.CreateOptions{Order: 12}), rbd.ErrInvalid},
			{"order 26", p.Create(ctx, "x", mib, rbd.CreateOptions{Order: 26}), rbd.ErrInvalid},
			{"stripe unit", p.Create(ctx, "x", mib, rbd.CreateOptions{Order: 16, StripeUnit: 4096}), rbd.ErrInvalid},
			{"size", p.Create(ctx, "x", 1<<61, rbd.CreateOptions{}), rbd.ErrInvalid},
			{"name with @", p.Create(ctx, "a@b", mib, rbd.CreateOptions{}), rbd.ErrInvalid},
			{"empty name", p.Create(ctx, "", mib, rbd.CreateOptions{}), rbd.ErrInvalid},
		} {
			if !errors.Is(c.err, c.want) {
				t.Errorf("create with bad %s: %v, want %v", c.what, c.err, c.want)
			}
		}
		if _, err := p.Open(ctx, "nope", rbd.OpenOptions{}); !errors.Is(err, rbd.ErrNotFound) {
			t.Fatalf("open of an unknown image: %v", err)
		}
		if err := p.Remove(ctx, "nope"); !errors.Is(err, rbd.ErrNotFound) {
			t.Fatalf("remove of an unknown image: %v", err)
		}
		if _, err := p.Open(ctx, "disk", rbd.OpenOptions{Snap: "nope"}); !errors.Is(err, rbd.ErrNotFound) {
			t.Fatalf("open at an unknown snapshot: %v", err)
		}
		img, err := p.Open(ctx, "disk", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data := bytes.Repeat([]byte{7}, 10)
		if err := img.WriteAt(ctx, data, 256*kib-10); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what string
			err  error
		}{
			{"read past the end", img.ReadAt(ctx, make([]byte, 11), 256*kib-10)},
			{"read at the end", img.ReadAt(ctx, make([]byte, 1), 256*kib)},
			{"read far past the end", img.ReadAt(ctx, make([]byte, 1), 1<<63)},
			{"write past the end", img.WriteAt(ctx, data, 256*kib-9)},
			{"write with a wrapping offset", img.WriteAt(ctx, data, ^uint64(0)-3)},
			{"discard past the end", img.Discard(ctx, 0, 256*kib+1)},
			{"write zeroes wrapping", img.WriteZeroes(ctx, 1, ^uint64(0))},
			{"shrink without the flag", img.Resize(ctx, 128*kib, rbd.ResizeOptions{})},
			{"resize past the largest", img.Resize(ctx, 1<<61, rbd.ResizeOptions{})},
			{"protect unknown", img.SnapProtect(ctx, "nope")},
		} {
			if c.what == "protect unknown" {
				if !errors.Is(c.err, rbd.ErrNotFound) {
					t.Errorf("%s: %v", c.what, c.err)
				}
				continue
			}
			if !errors.Is(c.err, rbd.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", c.what, c.err)
			}
		}
		if err := img.SnapRollback(ctx, "nope"); !errors.Is(err, rbd.ErrNotFound) {
			t.Fatalf("rollback to an unknown snapshot: %v", err)
		}
		if err := img.ReadAt(ctx, nil, 256*kib); err != nil {
			t.Fatalf("an empty read at the end: %v", err)
		}
		got := make([]byte, 10)
		if err := img.ReadAt(ctx, got, 256*kib-10); err != nil || !bytes.Equal(got, data) || img.Size() != 256*kib {
			t.Fatalf("the image changed under bad input: %v %x size %d", err, got, img.Size())
		}
		// A zero-size image: nothing to read or write but nothing.
		empty, err := p.Open(ctx, "empty", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := empty.ReadAt(ctx, make([]byte, 1), 0); !errors.Is(err, rbd.ErrInvalid) {
			t.Fatalf("read of a zero-size image: %v", err)
		}
		if err := empty.WriteAt(ctx, []byte{1}, 0); !errors.Is(err, rbd.ErrInvalid) {
			t.Fatalf("write to a zero-size image: %v", err)
		}
		if info := empty.Stat(); info.Size != 0 || info.Objects != 0 || info.Order != rbd.DefaultOrder {
			t.Fatalf("zero-size image info %+v", info)
		}
		// Read-only opens refuse changes.
		ro, err := p.Open(ctx, "disk", rbd.OpenOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		for what, err := range map[string]error{
			"write": ro.WriteAt(ctx, data, 0), "discard": ro.Discard(ctx, 0, 1), "resize": ro.Resize(ctx, mib, rbd.ResizeOptions{}),
			"snapshot": ro.SnapCreate(ctx, "s"),
		} {
			if !errors.Is(err, rbd.ErrReadOnly) {
				t.Errorf("%s of a read-only image: %v", what, err)
			}
		}
	})
}

// List, rename and copy: names move, a copy has the same bytes (and no
// objects for its holes).
func TestListRenameCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn, p := cluster(t)
		ctx := context.Background()
		if names, err := p.List(ctx); err != nil || len(names) != 0 {
			t.Fatalf("list of an empty pool: %v %v", names, err)
		}
		for _, n := range []string{"b", "a", "c"} {
			if err := p.Create(ctx, n, mib, rbd.CreateOptions{Order: 16}); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Rename(ctx, "c", "a"); !errors.Is(err, rbd.ErrExists) {
			t.Fatalf("rename onto an existing image: %v", err)
		}
		if err := p.Rename(ctx, "nope", "d"); !errors.Is(err, rbd.ErrNotFound) {
			t.Fatalf("rename of an unknown image: %v", err)
		}
		img, err := p.Open(ctx, "c", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		data := random(rng, 100*kib)
		if err := img.WriteAt(ctx, data, 600*kib); err != nil {
			t.Fatal(err)
		}
		if err := p.Rename(ctx, "c", "d"); err != nil {
			t.Fatal(err)
		}
		if names, err := p.List(ctx); err != nil || !slices.Equal(names, []string{"a", "b", "d"}) {
			t.Fatalf("list after rename: %v %v", names, err)
		}
		d, err := p.Open(ctx, "d", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Copy(ctx, p, "e", rbd.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e, err := p.Open(ctx, "e", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(read(t, e), read(t, d)) || e.Stat().Order != 16 {
			t.Fatalf("the copy differs: %+v", e.Stat())
		}
		// 100 KiB at 600 KiB spans objects 9 and 10 of 64 KiB.
		if objs := objects(t, conn, "rbd", e.Stat().BlockNamePrefix); len(objs) != 2 {
			t.Fatalf("the copy has objects %v", objs)
		}
		if err := d.Copy(ctx, p, "a", rbd.CreateOptions{}); !errors.Is(err, rbd.ErrExists) {
			t.Fatalf("copy onto an existing image: %v", err)
		}
	})
}
