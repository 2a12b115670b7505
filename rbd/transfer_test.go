package rbd_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/rbd"
)

// Import from a stream of known and of unknown length, sparse (zero
// blocks not written); export to a stream and to a file (holes not
// written), and of a snapshot: every way the bytes come back equal.
func TestImportExport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(7, 7))
		// 9 MiB + 5 bytes: data in the first 100 KiB, around 6 MiB and in
		// the last 3 bytes; zeros elsewhere.
		src := make([]byte, 9*mib+5)
		copy(src, random(rng, 100*kib))
		copy(src[6*mib-kib:], random(rng, 3*kib))
		copy(src[len(src)-3:], random(rng, 3))
		var progress []uint64
		err := rbd.Import(ctx, p, "known", bytes.NewReader(src), int64(len(src)), rbd.CreateOptions{Order: 20},
			rbd.TransferOptions{Progress: func(d uint64) { progress = append(progress, d) }})
		if err != nil {
			t.Fatal(err)
		}
		if len(progress) == 0 || progress[len(progress)-1] != uint64(len(src)) {
			t.Fatalf("progress %v", progress)
		}
		// A stream of unknown length (no Len, no Seek).
		if err := rbd.Import(ctx, p, "stream", io.MultiReader(bytes.NewReader(src)), -1, rbd.CreateOptions{Order: 20}, rbd.TransferOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"known", "stream"} {
			img, err := p.Open(ctx, name, rbd.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if img.Size() != uint64(len(src)) || !bytes.Equal(read(t, img), src) {
				t.Fatalf("%s: size %d, or bytes differ", name, img.Size())
			}
			// Objects 0, 5, 6 and 9 (1 MiB each; 9 is 5 bytes) hold data: no other was written.
			if u, err := img.DiskUsage(ctx); err != nil || u.Used != 3*mib+5 {
				t.Fatalf("%s: du %+v %v", name, u, err)
			}
			var out bytes.Buffer
			if err := img.Export(ctx, &out, rbd.TransferOptions{}); err != nil || !bytes.Equal(out.Bytes(), src) {
				t.Fatalf("%s: export to a stream differs (%v)", name, err)
			}
			if err := img.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// To a file, sparse; then of a snapshot, after the head changed.
		img, err := p.Open(ctx, "known", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := img.SnapCreate(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := img.WriteAt(ctx, random(rng, 1000), 3*mib); err != nil {
			t.Fatal(err)
		}
		at, err := p.Open(ctx, "known", rbd.OpenOptions{Snap: "s"})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "disk.raw")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		var last uint64
		if err := at.Export(ctx, f, rbd.TransferOptions{Progress: func(d uint64) { last = d }}); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, src) || last != uint64(len(src)) {
			t.Fatalf("export of the snapshot to a file: %d bytes, equal %v, progress %d (%v)", len(got), bytes.Equal(got, src), last, err)
		}
		// A file ending in a hole still has the image's size.
		if err := img.Discard(ctx, uint64(len(src)-3), 3); err != nil {
			t.Fatal(err)
		}
		path2 := filepath.Join(t.TempDir(), "hole.raw")
		f2, err := os.Create(path2)
		if err != nil {
			t.Fatal(err)
		}
		if err := img.Export(ctx, f2, rbd.TransferOptions{}); err != nil {
			t.Fatal(err)
		}
		f2.Close()
		if st, err := os.Stat(path2); err != nil || st.Size() != int64(len(src)) {
			t.Fatalf("file ending in a hole: %v %v", st.Size(), err)
		}
		for _, i := range []*rbd.Image{img, at} {
			if err := i.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}
