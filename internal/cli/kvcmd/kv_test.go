package kvcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// simKV runs `cuttle kv` in process against a simulated cluster (a
// monitor and three OSDs on memnet, a pool "kv") inside the test's
// synctest bubble.
type simKV struct {
	t     *testing.T
	c     *sim.Cluster
	dials int
}

func newSimKV(t *testing.T) *simKV {
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 4, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "kv", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	return &simKV{t: t, c: c}
}

func (s *simKV) dial(ctx context.Context) (*rados.Conn, error) {
	s.dials++
	return rados.Connect(ctx, rados.Config{Mons: []string{"a=a:6789"}, Auth: "none", Network: s.c.Net.Host(fmt.Sprintf("cli%d", s.dials)), Seed: uint64(s.dials)})
}

func (s *simKV) run(args ...string) (string, error) {
	var stdout bytes.Buffer
	out := &cmdutil.Output{Format: cmdutil.FormatPlain, W: &stdout}
	root := &cobra.Command{Use: "cuttle", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().Var((*cmdutil.FormatFlag)(&out.Format), "format", "")
	AddKVCommands(root, out, s.dial)
	root.SetOut(&stdout)
	root.SetErr(&stdout)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return stdout.String(), err
}

func (s *simKV) must(args ...string) string {
	s.t.Helper()
	out, err := s.run(args...)
	if err != nil {
		s.t.Fatalf("cuttle %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (s *simKV) json(v any, args ...string) {
	s.t.Helper()
	out := s.must(append([]string{"--format", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		s.t.Fatalf("cuttle %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestKVCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimKV(t)
		var created storeReport
		s.json(&created, "kv", "create", "kv/users", "--k", "2")
		if created.K != 2 || created.Store != "users" {
			t.Fatalf("create: %+v", created)
		}
		if _, err := s.run("kv", "create", "kv/users"); !errors.Is(err, kv.ErrExists) || !strings.HasSuffix(err.Error(), "(EEXIST)") {
			t.Fatalf("create again: %v", err)
		}
		for i := range 20 {
			s.must("kv", "put", "kv/users", fmt.Sprintf("user.%02d", i), fmt.Sprintf("v%d", i))
		}
		s.must("kv", "put", "kv/users", "group.a", "g")
		if out := s.must("kv", "get", "kv/users", "user.07"); out != "v7\n" {
			t.Fatalf("get: %q", out)
		}
		var got pairReport
		s.json(&got, "kv", "get", "kv/users", "group.a")
		if got.Value != "g" {
			t.Fatalf("get json: %+v", got)
		}
		if _, err := s.run("kv", "get", "kv/users", "nobody"); !errors.Is(err, kv.ErrNotFound) || err.Error() != `"nobody": not found (ENOENT)` {
			t.Fatalf("get of a missing key: %v", err)
		}
		s.must("kv", "rm", "kv/users", "user.00")
		s.must("kv", "rm", "kv/users", "user.00") // missing: not an error
		// Pages of 5 with --prefix, following next.
		var keys []string
		start := ""
		for {
			var page lsReport
			s.json(&page, "kv", "ls", "kv/users", "--prefix", "user.", "--limit", "5", "--start", start)
			for _, p := range page.Pairs {
				keys = append(keys, p.Key)
			}
			if !page.More {
				break
			}
			start = page.Next
		}
		if len(keys) != 19 || keys[0] != "user.01" || keys[18] != "user.19" {
			t.Fatalf("ls by pages: %v", keys)
		}
		if out := s.must("kv", "ls", "kv/users", "--limit", "2", "--values"); out != "group.a\tg\nuser.01\tv1\n(more: --start \"user.01\\x00\")\n" {
			t.Fatalf("ls plain: %q", out)
		}
		var info infoReport
		s.json(&info, "kv", "info", "kv/users")
		if info.K != 2 || info.Entries != 20 || info.Leaves < 3 || info.Depth != 2 || info.MinLeaf < 2 || info.MaxLeaf > 4 {
			t.Fatalf("info: %+v", info)
		}
		if out := s.must("kv", "info", "kv/users"); !strings.Contains(out, "entries: 20\n") {
			t.Fatalf("info plain: %q", out)
		}
		var check checkReport
		s.json(&check, "kv", "check", "kv/users")
		if check.Entries != 20 || len(check.Problems) != 0 {
			t.Fatalf("check: %+v", check)
		}
		for _, bad := range [][]string{
			{"kv", "get", "users", "k"},
			{"kv", "ls", "kv/users", "--limit", "0"},
			{"kv", "put", "kv/users", "", "v"},
		} {
			if _, err := s.run(bad...); err == nil || !strings.Contains(err.Error(), "(EINVAL)") {
				t.Fatalf("cuttle %s: %v", strings.Join(bad, " "), err)
			}
		}
		if _, err := s.run("kv", "info", "kv/nothing"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("info of a missing store: %v", err)
		}
		if _, err := s.run("kv", "info", "nopool/x"); err == nil || !strings.Contains(err.Error(), "pool ls") {
			t.Fatalf("info in a missing pool: %v", err)
		}
	})
}

func TestPrefixEnd(t *testing.T) {
	for p, want := range map[string]string{"": "", "a": "b", "ab": "ac", "a\xff": "b", "\xff\xff": "", "a\x00": "a\x01"} {
		if got := prefixEnd(p); got != want {
			t.Errorf("prefixEnd(%q) = %q, want %q", p, got, want)
		}
	}
}

// A short bench in the simulator: every phase runs, the counts add up
// and the store checks clean.
func TestBench(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimKV(t)
		var r benchReport
		s.json(&r, "kv", "bench", "kv/b", "--keys", "200", "--k", "4", "--clients", "2", "--depth", "2", "--duration", "2s", "--mix", "get=2,put=1,rm=1")
		if r.K != 4 || r.PrefillPerSec <= 0 || r.Ops["get"].Ops == 0 || r.Ops["put"].Ops == 0 || r.Ops["rm"].Ops == 0 || r.Errors != 0 {
			t.Fatalf("bench: %+v", r)
		}
		if r.ListedKeys != int(r.EntriesAfter) || r.ProblemsAtCheck != 0 || r.LeavesAfter < 10 {
			t.Fatalf("bench: %+v", r)
		}
		if _, err := s.run("kv", "bench", "kv/b", "--keys", "10"); !errors.Is(err, kv.ErrExists) {
			t.Fatalf("bench on an existing store: %v", err)
		}
		if _, err := s.run("kv", "bench", "kv/c", "--mix", "get=1,scan=2"); err == nil || !strings.Contains(err.Error(), "(EINVAL)") {
			t.Fatalf("bad mix: %v", err)
		}
	})
}

// check --repair removes an orphan leaf (here one written as a client
// whose operation was rolled back would: a leaf object of the store the
// index does not name) once it is older than --older-than, not before,
// and says so in both formats.
func TestCheckRepair(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimKV(t)
		s.must("kv", "create", "kv/users", "--k", "2")
		for i := range 6 {
			s.must("kv", "put", "kv/users", fmt.Sprintf("user.%02d", i), "v")
		}
		ctx := context.Background()
		conn, err := s.dial(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io, err := conn.OpenIOContext("kv")
		if err != nil {
			t.Fatal(err)
		}
		const orphan = "kv.users.leaf.0123456789abcdef.9"
		w := rados.NewWriteOp()
		w.Create(true)
		w.SetXattr(clskv.LeafAttr, clskv.Leaf{Bounds: clskv.Bounds{Low: "user.02", High: "user.04"}, K: 2, Count: 1}.Encode())
		w.SetOmap(map[string][]byte{"user.03": []byte("stale")})
		if err := io.OperateWrite(ctx, orphan, w); err != nil {
			t.Fatal(err)
		}
		var r checkReport
		s.json(&r, "kv", "check", "kv/users", "--repair")
		if r.Repair == nil || len(r.Repair.Removed) != 0 || len(r.Repair.Young) != 1 || r.Repair.Young[0].Leaf != orphan || r.Repair.OlderThanSeconds != 5 || len(r.Problems) != 0 {
			t.Fatalf("check --repair of a young orphan: %+v", r)
		}
		time.Sleep(2 * time.Second)
		if out := s.must("kv", "check", "kv/users", "--repair", "--older-than", "1s"); !strings.HasPrefix(out, "removed "+orphan+": orphan leaf, never named by the index (its operation was rolled back), 2s old\nrepair: ") ||
			!strings.Contains(out, ", 1 orphans removed, 0 orphans younger than 1s left\n") {
			t.Fatalf("check --repair plain: %q", out)
		}
		if _, err := io.Stat(ctx, orphan); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("the orphan after --repair: %v", err)
		}
		s.json(&r, "kv", "check", "kv/users", "--repair")
		if len(r.Repair.Removed)+len(r.Repair.Young) != 0 || r.Entries != 6 || r.Repair.LeafObjects < 2 {
			t.Fatalf("check --repair again: %+v", r)
		}
		if _, err := s.run("kv", "check", "kv/users", "--repair", "--older-than", "-1s"); !errors.Is(err, kv.ErrInvalid) {
			t.Fatalf("--older-than -1s: %v", err)
		}
	})
}
