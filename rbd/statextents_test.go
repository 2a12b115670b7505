package rbd_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/rbd"
)

// StatExtents reports the runs the data objects hold: written objects
// (cut at their length), not never-written or discarded ones, with
// striping, and at a snapshot the objects as they were.
func TestStatExtents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "plain", 8*mib, rbd.CreateOptions{Order: 20}); err != nil {
			t.Fatal(err)
		}
		if err := p.Create(ctx, "striped", 8*mib, rbd.CreateOptions{Order: 20, StripeUnit: 64 * kib, StripeCount: 4}); err != nil {
			t.Fatal(err)
		}
		img, err := p.Open(ctx, "plain", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check := func(img *rbd.Image, off, n uint64, want []rbd.StatExtent) {
			t.Helper()
			got, err := img.StatExtents(ctx, off, n)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("StatExtents(%d, %d) = %v, %v; want %v", off, n, got, err, want)
			}
		}
		check(img, 0, 8*mib, nil)
		// Object 1 written to 100 KiB past its start, object 3 whole.
		if err := img.WriteAt(ctx, make([]byte, 100*kib), mib); err != nil {
			t.Fatal(err)
		}
		if err := img.WriteAt(ctx, []byte{1}, 4*mib-1); err != nil {
			t.Fatal(err)
		}
		check(img, 0, 8*mib, []rbd.StatExtent{{Offset: mib, Length: 100 * kib}, {Offset: 3 * mib, Length: mib}})
		check(img, mib+kib, 2*mib, []rbd.StatExtent{{Offset: mib + kib, Length: 99 * kib}, {Offset: 3 * mib, Length: kib}})
		if err := img.SnapCreate(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := img.Discard(ctx, 3*mib, mib); err != nil {
			t.Fatal(err)
		}
		check(img, 0, 8*mib, []rbd.StatExtent{{Offset: mib, Length: 100 * kib}})
		at, err := p.Open(ctx, "plain", rbd.OpenOptions{Snap: "s"})
		if err != nil {
			t.Fatal(err)
		}
		check(at, 0, 8*mib, []rbd.StatExtent{{Offset: mib, Length: 100 * kib}, {Offset: 3 * mib, Length: mib}})
		if _, err := img.StatExtents(ctx, 8*mib, 1); err == nil {
			t.Fatal("StatExtents past the end succeeded")
		}

		// Striped: 64 KiB at 0 lands in object 0, the next 64 KiB in
		// object 1; a write to object 1 alone holds only its units.
		s, err := p.Open(ctx, "striped", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteAt(ctx, []byte{1}, 64*kib); err != nil {
			t.Fatal(err)
		}
		// Object 1 is 1 byte long: only byte 64 KiB is held.
		check(s, 0, 8*mib, []rbd.StatExtent{{Offset: 64 * kib, Length: 1}})
		if err := s.WriteAt(ctx, []byte{1}, 64*kib+256*kib); err != nil { // object 1's second unit
			t.Fatal(err)
		}
		check(s, 0, 8*mib, []rbd.StatExtent{{Offset: 64 * kib, Length: 64 * kib}, {Offset: 320 * kib, Length: 1}})
	})
}
