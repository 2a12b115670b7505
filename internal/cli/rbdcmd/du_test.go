package rbdcmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/rbd"
)

// rbd du for an image with a snapshot, for the pool, in JSON; object-map
// rebuild.
func TestRBDDu(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRBD(t)
		s.Must("rbd", "create", "a", "--size", "4M", "--object-size", "1M")
		s.Must("rbd", "create", "b", "--size", "2M", "--object-size", "1M")
		conn, err := s.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		p, err := rbd.NewPool(conn, "rbd", rbd.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		img, err := p.Open(ctx, "a", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := img.WriteAt(ctx, []byte("x"), 0); err != nil { // object 0
			t.Fatal(err)
		}
		if err := img.Close(ctx); err != nil {
			t.Fatal(err)
		}
		s.Must("rbd", "snap", "create", "a@one")
		img, err = p.Open(ctx, "a", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := img.WriteAt(ctx, []byte("y"), 3<<20); err != nil { // object 3
			t.Fatal(err)
		}
		if err := img.Close(ctx); err != nil {
			t.Fatal(err)
		}
		out := s.Must("rbd", "du", "a")
		for _, want := range []string{"NAME", "PROVISIONED", "a@one", "4 MiB", "1 MiB", "2 MiB", "<TOTAL>"} {
			if !strings.Contains(out, want) {
				t.Fatalf("du lacks %q:\n%s", want, out)
			}
		}
		var r duReport
		if err := json.Unmarshal([]byte(s.Must("rbd", "du", "--format", "json")), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Images) != 3 || r.Images[0].Snap != "one" || r.Images[0].Used != 1<<20 || r.Images[1].Used != 2<<20 ||
			r.Images[2].Name != "b" || r.Images[2].Used != 0 || r.TotalProvisioned != 6<<20 || r.TotalUsed != 3<<20 || !r.Images[1].FromObjectMap {
			t.Fatalf("du json %+v", r)
		}
		s.Must("rbd", "object-map", "rebuild", "a")
		if err := json.Unmarshal([]byte(s.Must("rbd", "du", "a@one", "--format", "json")), &r); err != nil || len(r.Images) != 1 || r.Images[0].Used != 1<<20 {
			t.Fatalf("du at a snapshot %+v %v", r, err)
		}
		if _, err := s.Run("rbd", "object-map", "rebuild", "a@one"); err == nil || !strings.HasSuffix(err.Error(), "(EINVAL)") {
			t.Fatalf("rebuild at a snapshot: %v", err)
		}
		// Without the object map (Ceph's --image-feature layering), du
		// stats the objects.
		s.Must("rbd", "create", "nomap", "--size", "2M", "--object-size", "1M", "--image-feature", "layering")
		if info := s.Must("rbd", "info", "nomap"); !strings.Contains(info, "features: layering\n") {
			t.Fatalf("info:\n%s", info)
		}
		if err := json.Unmarshal([]byte(s.Must("rbd", "du", "nomap", "--format", "json")), &r); err != nil || len(r.Images) != 1 || r.Images[0].FromObjectMap {
			t.Fatalf("du without a map %+v %v", r, err)
		}
		if _, err := s.Run("rbd", "create", "x", "--size", "1M", "--image-feature", "journaling"); err == nil || !strings.HasSuffix(err.Error(), "(EINVAL)") {
			t.Fatalf("an unknown feature: %v", err)
		}
	})
}
