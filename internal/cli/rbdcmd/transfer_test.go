package rbdcmd

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
)

// rbd import and export through files and stdin/stdout: the bytes come
// back, the zeros are not stored.
func TestRBDImportExport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRBD(t)
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(1, 1))
		src := make([]byte, 5<<20+123)
		for i := range 64 << 10 {
			src[2<<20+i] = byte(rng.Uint32()) | 1
		}
		in := filepath.Join(dir, "in.raw")
		if err := os.WriteFile(in, src, 0o644); err != nil {
			t.Fatal(err)
		}
		var rep imageReport
		if err := json.Unmarshal([]byte(s.Must("rbd", "import", in, "disk", "--object-size", "1M", "--format", "json")), &rep); err != nil || rep.Size != uint64(len(src)) {
			t.Fatalf("import json %+v %v", rep, err)
		}
		if _, err := s.RunIn(src, "rbd", "import", "-", "rbd/piped"); err != nil {
			t.Fatal(err)
		}
		var du duReport
		if err := json.Unmarshal([]byte(s.Must("rbd", "du", "--format", "json")), &du); err != nil || len(du.Images) != 2 ||
			du.Images[0].Used != 1<<20 || du.Images[1].Used != 4<<20 || du.Images[1].Provisioned != uint64(len(src)) {
			t.Fatalf("du after import %+v %v", du, err) // disk: one 1 MiB object; piped: one 4 MiB object
		}
		out := filepath.Join(dir, "out.raw")
		s.Must("rbd", "export", "disk", out)
		if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("export to a file differs (%v)", err)
		}
		if _, err := s.Run("rbd", "export", "disk", out); err == nil || !strings.HasSuffix(err.Error(), "(EEXIST)") {
			t.Fatalf("export over a file: %v", err)
		}
		if got := s.Must("rbd", "export", "piped", "-"); got != string(src) {
			t.Fatalf("export to stdout: %d bytes", len(got))
		}
		// A diff from nothing to a snapshot, applied to a new image.
		s.Must("rbd", "snap", "create", "disk@one")
		diff := filepath.Join(dir, "one.diff")
		s.Must("rbd", "export-diff", "disk@one", diff)
		s.Must("rbd", "create", "copy", "--size", "1M")
		s.Must("rbd", "import-diff", diff, "copy")
		if got := s.Must("rbd", "export", "copy@one", "-"); got != string(src) {
			t.Fatalf("the copy through a diff: %d bytes", len(got))
		}
		if _, err := s.RunIn([]byte("junk"), "rbd", "import-diff", "-", "copy"); err == nil || !strings.HasSuffix(err.Error(), "(EINVAL)") {
			t.Fatalf("import-diff of junk: %v", err)
		}
	})
}
