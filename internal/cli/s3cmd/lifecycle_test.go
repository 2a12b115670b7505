package s3cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/cli/clitest"
	"github.com/cuttlestore/cuttle/internal/s3gw"
	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/kv"
)

// cuttle s3 lifecycle run: no bucket with rules, then a bucket whose
// rule expires an object after a lifecycle day of one second
// (--lifecycle-day), plainly and in JSON; a missing bucket is ENOENT and
// a bad --lifecycle-day EINVAL-like refusal.
func TestLifecycleRunCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := clitest.New(t, clitest.Cluster(t, 3), AddS3Commands)
		ctx := context.Background()
		s.Must("s3", "user", "create", "alice")
		if out := s.Must("s3", "lifecycle", "run"); out != "no bucket has an enabled lifecycle rule\n" {
			t.Fatalf("no rules: %q", out)
		}
		if _, err := s.Run("s3", "lifecycle", "run", "nosuch"); err == nil || !strings.HasSuffix(err.Error(), "(ENOENT)") {
			t.Fatalf("a missing bucket: %v", err)
		}
		if _, err := s.Run("s3", "lifecycle", "run", "--lifecycle-day", "soon"); err == nil {
			t.Fatal("--lifecycle-day soon was taken")
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
		b, err := st.CreateBucket(ctx, "lcb", "alice", "us-east-1", meta.Private("alice"))
		if err != nil {
			t.Fatal(err)
		}
		ix, err := st.Index(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"old/a", "new/b"} {
			if err := ix.Put(ctx, k, meta.Entry{MTime: time.Now().Add(-time.Minute), Owner: "alice"}); err != nil {
				t.Fatal(err)
			}
		}
		rule := meta.LifecycleRule{ID: "old", Enabled: true, Filter: meta.LifecycleFilter{Prefix: "old/", SizeGreaterThan: -1, SizeLessThan: -1}, ExpirationDays: 30}
		if _, err := st.SetBucketLifecycle(ctx, b, []meta.LifecycleRule{rule}); err != nil {
			t.Fatal(err)
		}
		// Thirty days of a day: nothing yet.
		out := s.Must("s3", "lifecycle", "run")
		if !strings.Contains(out, "BUCKET") || !strings.Contains(out, "lcb") || !strings.Contains(out, "done") {
			t.Fatalf("plain: %q", out)
		}
		var res s3gw.LifecycleResult
		if err := json.Unmarshal([]byte(s.Must("s3", "lifecycle", "run", "lcb", "--lifecycle-day", "1s", "--format", "json")), &res); err != nil {
			t.Fatal(err)
		}
		if res.Expired != 1 || len(res.Buckets) != 1 || res.Buckets[0].Bucket != "lcb" || res.Buckets[0].Outcome != "done" {
			t.Fatalf("json: %+v", res)
		}
		if _, err := ix.Get(ctx, "old/a"); err == nil {
			t.Fatal("old/a is still there")
		}
		if _, err := ix.Get(ctx, "new/b"); err != nil {
			t.Fatalf("new/b: %v", err)
		}
	})
}
