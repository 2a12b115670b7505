package radoscmd

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/rados"
)

// mksnap, lssnap and rmsnap against real monitors, plain and JSON, with
// the refusals people meet: a name taken, a snapshot that is not there,
// a pool of the other mode.
func TestRadosPoolSnapCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRados(t)
		if got := s.must("", "rados", "-p", "rbd", "mksnap", "first"); got != "created pool rbd snap first\n" {
			t.Fatalf("mksnap: %q", got)
		}
		var made snapReport
		if err := json.Unmarshal([]byte(s.must("", "rados", "-p", "rbd", "mksnap", "second", "--format", "json")), &made); err != nil ||
			made.ID != 2 || made.Name != "second" || made.Pool != "rbd" {
			t.Fatalf("mksnap json: %+v %v", made, err)
		}
		ls := s.must("", "rados", "-p", "rbd", "lssnap")
		if !regexp.MustCompile(`^1\tfirst\t\d{4}\.\d\d\.\d\d \d\d:\d\d:\d\d\n2\tsecond\t.*\n2 snaps\n$`).MatchString(ls) {
			t.Fatalf("lssnap:\n%s", ls)
		}
		var list []snapReport
		if err := json.Unmarshal([]byte(s.must("", "rados", "-p", "rbd", "lssnap", "--format", "json")), &list); err != nil ||
			len(list) != 2 || list[1].Name != "second" || list[0].Created.IsZero() {
			t.Fatalf("lssnap json: %+v %v", list, err)
		}
		_, err := s.run("", "rados", "-p", "rbd", "mksnap", "first")
		if !errors.Is(err, rados.ErrExists) || !strings.Contains(err.Error(), "mksnap first: pool 'rbd' snap 'first' already exists (id 1)") ||
			!strings.HasSuffix(err.Error(), "(EEXIST)") {
			t.Fatalf("mksnap of a taken name: %v", err)
		}
		if got := s.must("", "rados", "-p", "rbd", "rmsnap", "first"); got != "removed pool rbd snap first\n" {
			t.Fatalf("rmsnap: %q", got)
		}
		_, err = s.run("", "rados", "-p", "rbd", "rmsnap", "first")
		if !errors.Is(err, rados.ErrNotFound) || !strings.Contains(err.Error(), "cuttle osd pool lssnap rbd lists them") {
			t.Fatalf("rmsnap of a removed snap: %v", err)
		}
		if got := s.must("", "rados", "-p", "rbd", "lssnap"); !strings.HasSuffix(got, "1 snaps\n") || strings.Contains(got, "first") {
			t.Fatalf("lssnap after rmsnap:\n%s", got)
		}
		// A pool whose client manages its snapshots refuses pool snapshots.
		ioc, err := s.conn().OpenIOContext("other")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ioc.SelfManagedSnapCreate(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, err = s.run("", "rados", "-p", "other", "mksnap", "x")
		if !errors.Is(err, rados.ErrInvalid) || !strings.Contains(err.Error(), "self-managed snaps mode") {
			t.Fatalf("mksnap on a self-managed pool: %v", err)
		}
		if _, err := s.run("", "rados", "-p", "nope", "lssnap"); err == nil || err.Error() != "pool nope does not exist" {
			t.Fatalf("lssnap of a missing pool: %v", err)
		}
	})
}

// Reads at a snapshot (-s), listsnaps and rollback through the CLI.
func TestRadosSnapshotReadsAndRollback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRados(t)
		s.must("first version", "rados", "-p", "rbd", "put", "doc", "-")
		s.must("", "rados", "-p", "rbd", "mksnap", "monday")
		s.must("second", "rados", "-p", "rbd", "put", "doc", "-")
		if got := s.must("", "rados", "-p", "rbd", "-s", "monday", "get", "doc", "-"); got != "first version" {
			t.Fatalf("get at monday: %q", got)
		}
		if got := s.must("", "rados", "-p", "rbd", "get", "doc", "-"); got != "second" {
			t.Fatalf("get of the head: %q", got)
		}
		if got := s.must("", "rados", "-p", "rbd", "listsnaps", "doc"); got != "doc:\ncloneid\tsnaps\tsize\toverlap\n1\t1\t13\t[]\nhead\t-\t6\n" {
			t.Fatalf("listsnaps:\n%s", got)
		}
		var ls struct {
			Name   string        `json:"name"`
			Seq    uint64        `json:"seq"`
			Clones []cloneReport `json:"clones"`
		}
		if err := json.Unmarshal([]byte(s.must("", "rados", "-p", "rbd", "listsnaps", "doc", "--format", "json")), &ls); err != nil ||
			ls.Seq != 1 || len(ls.Clones) != 2 || ls.Clones[0].ID != "1" || ls.Clones[1].ID != "head" || ls.Clones[0].Size != 13 {
			t.Fatalf("listsnaps json: %+v %v", ls, err)
		}
		if got := s.must("", "rados", "-p", "rbd", "rollback", "doc", "monday"); got != "rolled back pool rbd to snapshot monday\n" {
			t.Fatalf("rollback: %q", got)
		}
		if got := s.must("", "rados", "-p", "rbd", "get", "doc", "-"); got != "first version" {
			t.Fatalf("get after rollback: %q", got)
		}
		_, err := s.run("", "rados", "-p", "rbd", "-s", "tuesday", "get", "doc", "-")
		if err == nil || err.Error() != `pool rbd has no snapshot "tuesday" (cuttle rados -p rbd lssnap lists them)` {
			t.Fatalf("get at an unknown snap: %v", err)
		}
		s.must("", "rados", "-p", "rbd", "mksnap", "tuesday")
		s.must("", "rados", "-p", "rbd", "rmsnap", "tuesday")
		for _, args := range [][]string{{"rollback", "doc", "3"}, {"-s", "3", "get", "doc", "-"}} {
			_, err := s.run("", append([]string{"rados", "-p", "rbd"}, args...)...)
			if !errors.Is(err, rados.ErrNotFound) || !strings.Contains(err.Error(), "pool rbd snapshot 3 was removed") {
				t.Fatalf("%v at a removed snap: %v", args, err)
			}
		}
		if _, err := s.run("", "rados", "-p", "rbd", "-s", "monday", "get", "nothing", "-"); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("get at a snap of a missing object: %v", err)
		}
	})
}
