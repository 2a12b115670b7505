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

// Diffs carry an image from nothing to snapshot s1, from s1 to s2 (with
// a discard and a grow), from s2 to the head (with a shrink): applied to
// another image in turn, each step leaves it equal to the source at that
// snapshot, with the snapshots made; a diff from a snapshot the target
// lacks is refused.
func TestExportImportDiff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(9, 9))
		if err := p.Create(ctx, "src", 3*mib, rbd.CreateOptions{Order: 20}); err != nil {
			t.Fatal(err)
		}
		src, err := p.Open(ctx, "src", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(src.WriteAt(ctx, random(rng, 300*kib), 100*kib))
		must(src.WriteAt(ctx, random(rng, 10*kib), 2*mib+5))
		must(src.SnapCreate(ctx, "s1"))
		must(src.WriteAt(ctx, random(rng, 8*kib), 200*kib))
		must(src.Discard(ctx, 2*mib, 1*mib)) // object 2 goes
		must(src.Resize(ctx, 5*mib, rbd.ResizeOptions{}))
		must(src.WriteAt(ctx, random(rng, 4*kib), 4*mib+kib))
		must(src.SnapCreate(ctx, "s2"))
		must(src.WriteAt(ctx, random(rng, 5), 0))
		must(src.Resize(ctx, 4*mib+100, rbd.ResizeOptions{AllowShrink: true}))

		must(p.Create(ctx, "dst", 0, rbd.CreateOptions{Order: 20}))
		dst, err := p.Open(ctx, "dst", rbd.OpenOptions{})
		must(err)
		for _, step := range []struct{ from, to string }{{"", "s1"}, {"s1", "s2"}, {"s2", ""}} {
			at := src
			if step.to != "" {
				at, err = p.Open(ctx, "src", rbd.OpenOptions{Snap: step.to})
				must(err)
			}
			var diff bytes.Buffer
			must(at.ExportDiff(ctx, step.from, &diff, rbd.TransferOptions{}))
			must(dst.ImportDiff(ctx, bytes.NewReader(diff.Bytes()), rbd.TransferOptions{}))
			want := read(t, at)
			if got := read(t, dst); !bytes.Equal(got, want) {
				t.Fatalf("after the diff %s→%s: %d bytes, want %d, equal %v", step.from, step.to, len(got), len(want), bytes.Equal(got, want))
			}
			if step.to != "" {
				snaps := dst.SnapList()
				if snaps[len(snaps)-1].Name != step.to {
					t.Fatalf("snapshots %+v", snaps)
				}
			}
			if step.from == "s1" {
				// The same diff on an image without s1 is refused.
				must(p.Create(ctx, "other", 1*mib, rbd.CreateOptions{Order: 20}))
				other, err := p.Open(ctx, "other", rbd.OpenOptions{})
				must(err)
				if err := other.ImportDiff(ctx, bytes.NewReader(diff.Bytes()), rbd.TransferOptions{}); !errors.Is(err, rbd.ErrNotFound) {
					t.Fatalf("a diff from a missing snapshot: %v", err)
				}
				must(other.Close(ctx))
			}
		}
		// The step from s1 to s2 is what changed: 8 KiB at 200 KiB, the
		// 4 KiB written at 4 MiB + 1 KiB (two blocks), a zero record.
		at, err := p.Open(ctx, "src", rbd.OpenOptions{Snap: "s2"})
		must(err)
		var diff bytes.Buffer
		must(at.ExportDiff(ctx, "s1", &diff, rbd.TransferOptions{}))
		if diff.Len() > 16*kib+200 {
			t.Fatalf("the diff s1→s2 is %d bytes", diff.Len())
		}
		// Not a diff.
		if err := dst.ImportDiff(ctx, bytes.NewReader([]byte("rbd image v1\n")), rbd.TransferOptions{}); !errors.Is(err, rbd.ErrInvalid) {
			t.Fatalf("a bad stream: %v", err)
		}
		must(dst.Close(ctx))
		must(src.Close(ctx))
	})
}
