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

// Allocated extents of fresh, written, discarded and striped images:
// exact answers where the objects are known, then random writes and
// discards checked against a model (every written byte inside a run,
// every byte outside reading as zeros, runs in order and merged).
func TestAllocatedExtents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(3, 4))
		// 256 KiB objects, no striping: 2 MiB is objects 0 to 7.
		if err := p.Create(ctx, "plain", 2*mib, rbd.CreateOptions{Order: 18}); err != nil {
			t.Fatal(err)
		}
		img, err := p.Open(ctx, "plain", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check := func(img *rbd.Image, off, n uint64, want ...rbd.Extent) {
			t.Helper()
			got, err := img.AllocatedExtents(ctx, off, n)
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = []rbd.Extent{}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("allocated extents of [%d,+%d): %v, want %v", off, n, got, want)
			}
		}
		check(img, 0, 2*mib)
		// 4 KiB at 300 KiB: object 1 holds [256 KiB, 304 KiB).
		if err := img.WriteAt(ctx, random(rng, 4*kib), 300*kib); err != nil {
			t.Fatal(err)
		}
		check(img, 0, 2*mib, rbd.Extent{Offset: 256 * kib, Length: 48 * kib})
		check(img, 260*kib, 10*kib, rbd.Extent{Offset: 260 * kib, Length: 10 * kib}) // clipped to the range asked
		check(img, 0, 256*kib)
		check(img, 304*kib, 100*kib)
		// The end of object 2 and all of object 3: one run with object 1's.
		if err := img.WriteAt(ctx, random(rng, 300*kib), 724*kib); err != nil {
			t.Fatal(err)
		}
		check(img, 0, 2*mib, rbd.Extent{Offset: 256 * kib, Length: 48 * kib}, rbd.Extent{Offset: 512 * kib, Length: 512 * kib})
		// Discarding object 2 whole removes it.
		if err := img.Discard(ctx, 512*kib, 256*kib); err != nil {
			t.Fatal(err)
		}
		check(img, 0, 2*mib, rbd.Extent{Offset: 256 * kib, Length: 48 * kib}, rbd.Extent{Offset: 768 * kib, Length: 256 * kib})
		// A snapshot keeps its objects' sizes while the head changes.
		if err := img.SnapCreate(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := img.Discard(ctx, 0, 2*mib); err != nil {
			t.Fatal(err)
		}
		if err := img.WriteAt(ctx, random(rng, kib), 2*mib-kib); err != nil {
			t.Fatal(err)
		}
		check(img, 0, 2*mib, rbd.Extent{Offset: 1792 * kib, Length: 256 * kib})
		snap, err := p.Open(ctx, "plain", rbd.OpenOptions{Snap: "s"})
		if err != nil {
			t.Fatal(err)
		}
		check(snap, 0, 2*mib, rbd.Extent{Offset: 256 * kib, Length: 48 * kib}, rbd.Extent{Offset: 768 * kib, Length: 256 * kib})
		if _, err := img.AllocatedExtents(ctx, 2*mib-kib, 2*kib); !errors.Is(err, rbd.ErrInvalid) {
			t.Fatalf("a range past the end: %v", err)
		}

		// Striped: 64 KiB units over 3 objects of 128 KiB. 100 bytes at
		// 200 KiB is unit 3, the second unit of object 0.
		if err := p.Create(ctx, "striped", 1*mib, rbd.CreateOptions{Order: 17, StripeUnit: 64 * kib, StripeCount: 3}); err != nil {
			t.Fatal(err)
		}
		st, err := p.Open(ctx, "striped", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		first := random(rng, 100)
		if err := st.WriteAt(ctx, first, 200*kib); err != nil {
			t.Fatal(err)
		}
		// Object 0 is now 64 KiB + 8 KiB + 100 bytes long: its first unit
		// (image [0, 64 KiB)) and the start of its second.
		check(st, 0, 1*mib, rbd.Extent{Offset: 0, Length: 64 * kib}, rbd.Extent{Offset: 192 * kib, Length: 8*kib + 100})

		// Random writes and discards against a model.
		model := make([]byte, 1*mib)
		copy(model[200*kib:], first)
		for range 40 {
			off := rng.IntN(len(model))
			n := 1 + rng.IntN(min(len(model)-off, 200*kib))
			if rng.IntN(3) == 0 {
				if err := st.Discard(ctx, uint64(off), uint64(n)); err != nil {
					t.Fatal(err)
				}
				clear(model[off : off+n])
			} else {
				data := random(rng, n)
				if err := st.WriteAt(ctx, data, uint64(off)); err != nil {
					t.Fatal(err)
				}
				copy(model[off:], data)
			}
			qoff := rng.IntN(len(model))
			qn := rng.IntN(len(model) - qoff + 1)
			runs, err := st.AllocatedExtents(ctx, uint64(qoff), uint64(qn))
			if err != nil {
				t.Fatal(err)
			}
			in := make([]bool, len(model))
			end := uint64(qoff)
			for i, r := range runs {
				if r.Length == 0 || r.Offset < end || (i > 0 && r.Offset == end) || r.Offset+r.Length > uint64(qoff+qn) {
					t.Fatalf("runs of [%d,+%d) out of order, touching or outside: %v", qoff, qn, runs)
				}
				end = r.Offset + r.Length
				for b := r.Offset; b < end; b++ {
					in[b] = true
				}
			}
			buf := make([]byte, qn)
			if err := st.ReadAt(ctx, buf, uint64(qoff)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, model[qoff:qoff+qn]) {
				t.Fatal("the image differs from the model")
			}
			for i := qoff; i < qoff+qn; i++ {
				if model[i] != 0 && !in[i] {
					t.Fatalf("byte %d holds data but lies in no run of %v", i, runs)
				}
			}
		}
	})
}
