package s3cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/cli/clitest"
	"github.com/cuttlestore/cuttle/internal/s3gw"
	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/kv"
)

// cuttle s3 bucket check: its refusals; an entry naming data that do not
// exist and a data object nothing names, reported plainly and in JSON
// with a non-zero exit; --fix records the leak but leaves the entry;
// --fix --remove-broken removes it; after cuttle s3 gc, clean.
func TestBucketCheckCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := clitest.New(t, clitest.Cluster(t, 5), AddS3Commands)
		ctx := context.Background()
		s.Must("s3", "user", "create", "alice")
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"s3", "bucket", "check"}, "or --all (EINVAL)"},
			{[]string{"s3", "bucket", "check", "b", "--all"}, "not both (EINVAL)"},
			{[]string{"s3", "bucket", "check", "b", "--remove-broken"}, "give both (EINVAL)"},
			{[]string{"s3", "bucket", "check", "nosuch"}, "(ENOENT)"},
		} {
			if out, err := s.Run(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: %v\n%s", c.args, err, out)
			}
		}
		conn, err := s.Dial(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io, err := conn.OpenIOContext(s3gw.DefaultPool)
		if err != nil {
			t.Fatal(err)
		}
		st := meta.NewStore(io, kv.Config{}, nil)
		b, err := st.CreateBucket(ctx, "cbk", "alice", "us-east-1", meta.ACL{})
		if err != nil {
			t.Fatal(err)
		}
		if out := s.Must("s3", "bucket", "check", "cbk"); !strings.HasPrefix(out, "checked 1 bucket(s) (cbk): 0 index entries, 0 upload(s) of 0 part(s), 0 data objects") || !strings.HasSuffix(out, "\nclean\n") {
			t.Fatalf("an empty bucket: %q", out)
		}
		ix, err := st.Index(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		gone := meta.NewID()
		if err := ix.Put(ctx, "broken", meta.Entry{Size: 3, ETag: "x", Extents: []meta.Extent{{ID: gone, Size: 3}}}); err != nil {
			t.Fatal(err)
		}
		leak := meta.NewID()
		if err := io.Write(ctx, fmt.Sprintf("s3.d.%016x.%08x", leak, 0), []byte("lost"), 0); err != nil {
			t.Fatal(err)
		}

		// Under the hour's grace the leak is in flight; with none, leaked.
		out, err := s.Run("s3", "bucket", "check", "cbk")
		if err == nil || !strings.Contains(err.Error(), "1 problem(s) remain, listed above (EUCLEAN)") || !strings.Contains(out, "1 data id(s) named by nothing were written within 1h0m0s") {
			t.Fatalf("check: %v\n%s", err, out)
		}
		out, err = s.Run("s3", "bucket", "check", "cbk", "--min-idle", "0s")
		for _, w := range []string{
			"entries with missing or short data: 1\n  cbk/broken version null: object s3.d." + fmt.Sprintf("%016x", gone) + ".00000000 is missing",
			"to do: the objects cannot be read whole",
			fmt.Sprintf("leaked data ids: 1\n  data %016x: 1 object(s), 4 bytes", leak),
			"to do: run again with --fix",
			"2 problem(s) remain",
		} {
			if !strings.Contains(out, w) {
				t.Errorf("check prints no %q:\n%s", w, out)
			}
		}
		if err == nil {
			t.Error("check of a broken bucket exits 0")
		}
		out, _ = s.Run("--format", "json", "s3", "bucket", "check", "--all", "--min-idle", "0s")
		var r s3gw.CheckReport
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Missing.Count != 1 || r.Leaked.Count != 1 || r.Missing.Examples[0].Key != "broken" || r.Leaked.Examples[0].Data != fmt.Sprintf("%016x", leak) || !r.LeaksChecked {
			t.Fatalf("json: %v %+v\n%s", err, r, out)
		}

		out, err = s.Run("s3", "bucket", "check", "cbk", "--fix", "--min-idle", "0s")
		if err == nil || !strings.Contains(out, "(1 fixed)") || !strings.Contains(out, "[fixed: on the garbage list]") || !strings.Contains(out, "1 problem(s) remain") {
			t.Fatalf("--fix: %v\n%s", err, out)
		}
		out = s.Must("s3", "bucket", "check", "cbk", "--fix", "--remove-broken", "--min-idle", "0s")
		if !strings.Contains(out, "[fixed: entry removed]") || !strings.HasSuffix(out, "\n1 problem(s) fixed, none remain\n") {
			t.Fatalf("--fix --remove-broken: %q", out)
		}
		var gc gcReport
		s.JSON(&gc, "s3", "gc", "--min-age", "0s")
		if gc.Removed != 2 {
			t.Fatalf("gc: %+v", gc)
		}
		if out := s.Must("s3", "bucket", "check", "--all", "--min-idle", "0s"); !strings.Contains(out, "the pool holds 0 data objects and 0 garbage records") || !strings.HasSuffix(out, "\nclean\n") {
			t.Fatalf("after gc: %q", out)
		}
	})
}
