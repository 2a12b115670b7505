package nbd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/nbd"
	"github.com/cuttlestore/cuttle/rbd"
)

// A clone exported over NBD as any image: it reads as its parent's
// snapshot (qemu-img compare), nbdinfo --map shows the parent's data as
// the clone's, and writes and trims through the export land in the clone
// alone (the parent's snapshot is unchanged).
func TestCloneExport(t *testing.T) {
	needTools(t, "qemu-img", "qemu-io", "nbdinfo", "nbdcopy")
	_, p := rbdCluster(t)
	ctx := context.Background()
	const size = 16 * mib
	if err := p.Create(ctx, "base", size, rbd.CreateOptions{Order: 20}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	raw := filepath.Join(dir, "base.raw")
	data := sparseFile(t, raw, size, 3)
	base := open(t, p, "base", rbd.OpenOptions{})
	if err := base.WriteAt(ctx, data, 0); err != nil {
		t.Fatal(err)
	}
	if err := base.Discard(ctx, 1*mib, 2*mib); err != nil { // zeros in data: a hole in the image
		t.Fatal(err)
	}
	if err := base.SnapCreate(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := base.SnapProtect(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := p.Clone(ctx, nil, "base", "s", "kid", rbd.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tcp, _ := serveExports(t,
		nbd.Export{Name: "base@s", Backend: nbd.NewRBD(open(t, p, "base", rbd.OpenOptions{Snap: "s"}), true)},
		nbd.Export{Name: "kid", Backend: nbd.NewRBD(open(t, p, "kid", rbd.OpenOptions{}), false)},
	)
	uri := func(export string) string { return "nbd://" + tcp + "/" + export }
	run(t, "qemu-img", "compare", "-f", "raw", "-F", "raw", raw, uri("kid"))
	parentMap := run(t, "nbdinfo", "--map", uri("base@s"))
	if got := run(t, "nbdinfo", "--map", uri("kid")); got != parentMap {
		t.Fatalf("nbdinfo --map of the clone:\n%s\nof the parent's snapshot:\n%s", got, parentMap)
	}
	run(t, "qemu-io", "-f", "raw", "-c", "write -P 0x5a 100k 8k", "-c", "discard 4M 1M", "-c", "write -z 9437184 4096", uri("kid"))
	copy(data[100<<10:], []byte(strings.Repeat("\x5a", 8<<10)))
	clear(data[4*mib : 5*mib])
	clear(data[9437184 : 9437184+4096])
	want := filepath.Join(dir, "want.raw")
	if err := os.WriteFile(want, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "qemu-img", "compare", "-f", "raw", "-F", "raw", want, uri("kid"))
	out := filepath.Join(dir, "parent.raw")
	run(t, "nbdcopy", uri("base@s"), out)
	run(t, "qemu-img", "compare", "-f", "raw", "-F", "raw", raw, out)
}
