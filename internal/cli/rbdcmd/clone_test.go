package rbdcmd

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/rbd"
)

// clone, children, info's parent, flatten, plain and JSON, and the
// refusals: a clone of an unprotected snapshot, an unprotect with clones.
func TestCloneCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRBD(t)
		s.Must("rbd", "create", "base", "--size", "1M", "--object-size", "64K")
		s.Must("rbd", "snap", "create", "base@s")
		if _, err := s.Run("rbd", "clone", "base@s", "kid"); !errors.Is(err, rbd.ErrInvalid) || !strings.Contains(err.Error(), "protect") {
			t.Fatalf("clone of an unprotected snapshot: %v", err)
		}
		if _, err := s.Run("rbd", "clone", "base", "kid"); err == nil {
			t.Fatal("clone without a snapshot succeeded")
		}
		s.Must("rbd", "snap", "protect", "base@s")
		s.Must("rbd", "clone", "base@s", "kid")
		s.Must("rbd", "clone", "rbd/base@s", "data/far", "--object-size", "128K", "--format", "json")
		if got := s.Must("rbd", "children", "base@s"); got != "data/far\nrbd/kid\n" && got != "rbd/kid\ndata/far\n" {
			t.Fatalf("children: %q", got)
		}
		var kids []rbd.Child
		if err := json.Unmarshal([]byte(s.Must("rbd", "children", "base@s", "--format", "json")), &kids); err != nil || len(kids) != 2 {
			t.Fatalf("children json: %v %v", kids, err)
		}
		if got := s.Must("rbd", "info", "kid"); !strings.Contains(got, "parent: rbd/base@s\n") || !strings.Contains(got, "overlap: 1 MiB") {
			t.Fatalf("info of a clone:\n%s", got)
		}
		var info rbd.Info
		if err := json.Unmarshal([]byte(s.Must("rbd", "info", "data/far", "--format", "json")), &info); err != nil || info.Parent == nil || info.Parent.Image != "base" || info.Parent.Overlap != 1<<20 {
			t.Fatalf("info json: %+v %v", info, err)
		}
		if _, err := s.Run("rbd", "snap", "unprotect", "base@s"); !errors.Is(err, rbd.ErrBusy) || !strings.Contains(err.Error(), "rbd/kid") {
			t.Fatalf("unprotect with clones: %v", err)
		}
		var fl flattenReport
		if err := json.Unmarshal([]byte(s.Must("rbd", "flatten", "kid", "--format", "json")), &fl); err != nil || fl.Objects != 16 {
			t.Fatalf("flatten json: %+v %v", fl, err)
		}
		if got := s.Must("rbd", "flatten", "data/far"); got != "" {
			t.Fatalf("flatten prints %q", got)
		}
		if _, err := s.Run("rbd", "flatten", "kid"); !errors.Is(err, rbd.ErrInvalid) {
			t.Fatalf("flatten of a flattened image: %v", err)
		}
		if got := s.Must("rbd", "info", "kid"); strings.Contains(got, "parent") {
			t.Fatalf("info after flatten:\n%s", got)
		}
		if got := s.Must("rbd", "children", "base@s"); got != "" {
			t.Fatalf("children after flatten: %q", got)
		}
		s.Must("rbd", "snap", "unprotect", "base@s")
		s.Must("rbd", "snap", "rm", "base@s")
	})
}
