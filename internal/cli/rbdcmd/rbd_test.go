package rbdcmd

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/cli/clitest"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/rbd"
)

// newSimRBD runs `cuttle rbd` in process against a simulated cluster
// with pools "rbd" and "data", inside the test's synctest bubble.
func newSimRBD(t *testing.T) *clitest.CLI {
	c := clitest.Cluster(t, 2)
	c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "3")
	c.Run("osd pool create", "pool", "data", "pg_num", "4", "size", "2")
	c.WaitForEpoch(c.Epoch())
	return clitest.New(t, c, AddRBDCommands)
}

// Every command, plain and JSON, and the refusals people meet.
func TestRBDCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRBD(t)
		s.Must("rbd", "create", "vm1", "--size", "10M", "--object-size", "1M")
		s.Must("rbd", "create", "rbd/vm2", "--size", "1G", "--data-pool", "data", "--stripe-unit", "64K", "--stripe-count", "4")
		if got := s.Must("rbd", "ls"); got != "vm1\nvm2\n" {
			t.Fatalf("ls: %q", got)
		}
		var names []string
		if err := json.Unmarshal([]byte(s.Must("rbd", "ls", "rbd", "--format", "json")), &names); err != nil || len(names) != 2 {
			t.Fatalf("ls json: %v %v", names, err)
		}
		info := s.Must("rbd", "info", "vm1")
		for _, want := range []string{"rbd image 'vm1':\n", "\tsize 10 MiB in 10 objects\n", "\torder 20 (1 MiB objects)\n", "\tfeatures: layering, object-map\n", "\tblock_name_prefix: rbd_data."} {
			if !strings.Contains(info, want) {
				t.Fatalf("info lacks %q:\n%s", want, info)
			}
		}
		var i2 rbd.Info
		if err := json.Unmarshal([]byte(s.Must("rbd", "info", "vm2", "--format", "json")), &i2); err != nil ||
			i2.Size != 1<<30 || i2.DataPool != "data" || i2.StripeUnit != 64<<10 || i2.StripeCount != 4 || i2.Order != 22 {
			t.Fatalf("info json: %+v %v", i2, err)
		}
		// Data written through the library, a snapshot, an overwrite.
		conn, err := s.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		p, err := rbd.NewPool(conn, "rbd", rbd.Options{})
		if err != nil {
			t.Fatal(err)
		}
		img, err := p.Open(context.Background(), "vm1", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := img.WriteAt(ctx, []byte("before"), 3<<20); err != nil {
			t.Fatal(err)
		}
		s.Must("rbd", "snap", "create", "vm1@monday")
		if err := img.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if err := img.WriteAt(ctx, []byte("after!"), 3<<20); err != nil {
			t.Fatal(err)
		}
		ls := s.Must("rbd", "snap", "ls", "vm1")
		if !strings.Contains(ls, "SNAPID") || !strings.Contains(ls, "monday") || !strings.Contains(ls, "10 MiB") {
			t.Fatalf("snap ls:\n%s", ls)
		}
		var snaps []rbd.SnapInfo
		if err := json.Unmarshal([]byte(s.Must("rbd", "snap", "ls", "vm1", "--format", "json")), &snaps); err != nil || len(snaps) != 1 || snaps[0].Name != "monday" {
			t.Fatalf("snap ls json: %+v %v", snaps, err)
		}
		if got := s.Must("rbd", "info", "vm1@monday"); !strings.Contains(got, "size 10 MiB") {
			t.Fatalf("info at a snapshot:\n%s", got)
		}
		// Resize: growing is fine, shrinking needs the flag.
		if got := s.Must("rbd", "resize", "vm1", "--size", "20M"); got != "resized rbd/vm1 to 20 MiB\n" {
			t.Fatalf("resize: %q", got)
		}
		_, err = s.Run("rbd", "resize", "vm1", "--size", "1M")
		if !errors.Is(err, rbd.ErrInvalid) || !strings.Contains(err.Error(), "--allow-shrink") || !strings.HasSuffix(err.Error(), "(EINVAL)") {
			t.Fatalf("shrink without the flag: %v", err)
		}
		s.Must("rbd", "resize", "vm1", "--size", "4M", "--allow-shrink")
		// Rollback brings the bytes and the size back.
		s.Must("rbd", "snap", "rollback", "vm1@monday")
		if err := img.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if err := img.ReadAt(ctx, buf, 3<<20); err != nil || string(buf) != "before" || img.Size() != 10<<20 {
			t.Fatalf("after rollback: %q %v size %d", buf, err, img.Size())
		}
		// Refusals.
		for _, c := range []struct {
			args []string
			want string
			is   error
		}{
			{[]string{"rbd", "rm", "vm1"}, "has 1 snapshots; remove them first (EBUSY)", rbd.ErrBusy},
			{[]string{"rbd", "create", "vm1", "--size", "1M"}, `image "vm1" in pool "rbd" (EEXIST)`, rbd.ErrExists},
			{[]string{"rbd", "info", "nope"}, `no image "nope" in pool "rbd" (ENOENT)`, rbd.ErrNotFound},
			{[]string{"rbd", "snap", "rollback", "vm1@nope"}, `image "vm1" has no snapshot "nope" (ENOENT)`, rbd.ErrNotFound},
			{[]string{"rbd", "ls", "nopool"}, "cuttle osd pool ls lists the pools", rados.ErrPoolNotFound},
			{[]string{"rbd", "create", "x", "--size", "1M", "--order", "12"}, "order 12 is outside [16, 25]", rbd.ErrInvalid},
		} {
			_, err := s.Run(c.args...)
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("cuttle %s: %v; want %q", strings.Join(c.args, " "), err, c.want)
			}
		}
		for _, args := range [][]string{
			{"rbd", "create", "x"}, {"rbd", "create", "x@s", "--size", "1M"}, {"rbd", "snap", "create", "vm1"},
			{"rbd", "create", "x", "--size", "1M", "--object-size", "3M"}, {"rbd", "info", "a/b/c"},
		} {
			if _, err := s.Run(args...); err == nil || !strings.HasSuffix(err.Error(), "(EINVAL)") {
				t.Errorf("cuttle %s: %v", strings.Join(args, " "), err)
			}
		}
		// Protection, copies and renames.
		s.Must("rbd", "snap", "protect", "vm1@monday")
		if _, err := s.Run("rbd", "snap", "rm", "vm1@monday"); !errors.Is(err, rbd.ErrBusy) || !strings.Contains(err.Error(), "is protected; unprotect it first (EBUSY)") {
			t.Fatalf("snap rm of a protected snapshot: %v", err)
		}
		s.Must("rbd", "snap", "unprotect", "vm1@monday")
		s.Must("rbd", "cp", "vm1@monday", "data/copy")
		s.Must("rbd", "rename", "data/copy", "kept")
		if got := s.Must("rbd", "ls", "data"); got != "kept\n" {
			t.Fatalf("ls data after cp and rename: %q", got)
		}
		kept, err := rbd.NewPool(conn, "data", rbd.Options{})
		if err != nil {
			t.Fatal(err)
		}
		k, err := kept.Open(ctx, "kept", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := k.ReadAt(ctx, buf, 3<<20); err != nil || string(buf) != "before" || k.Size() != 10<<20 {
			t.Fatalf("the copy of monday: %q %v size %d", buf, err, k.Size())
		}
		if err := k.Close(ctx); err != nil {
			t.Fatal(err)
		}
		s.Must("rbd", "rm", "data/kept")
		s.Must("rbd", "snap", "rm", "vm1@monday")
		if _, err := s.Run("rbd", "rm", "vm1"); !errors.Is(err, rbd.ErrBusy) || !strings.Contains(err.Error(), "open by 1 watchers") {
			t.Fatalf("rm of an image open elsewhere: %v", err)
		}
		if err := img.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if got := s.Must("rbd", "rm", "vm1", "--format", "json"); !strings.Contains(got, `"image":"vm1"`) && !strings.Contains(got, `"image": "vm1"`) {
			t.Fatalf("rm json: %q", got)
		}
		s.Must("rbd", "rm", "vm2")
		if got := s.Must("rbd", "ls"); got != "" {
			t.Fatalf("ls after rm: %q", got)
		}
	})
}
