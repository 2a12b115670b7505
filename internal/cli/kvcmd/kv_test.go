package kvcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/cli/clitest"
	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// newSimKV runs `cuttle kv` in process against a simulated cluster with
// a pool "kv", inside the test's synctest bubble.
func newSimKV(t *testing.T) *clitest.CLI {
	c := clitest.Cluster(t, 4)
	c.Run("osd pool create", "pool", "kv", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	return clitest.New(t, c, AddKVCommands)
}

func TestKVCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimKV(t)
		var created storeReport
		s.JSON(&created, "kv", "create", "kv/users", "--k", "2")
		if created.K != 2 || created.Store != "users" {
			t.Fatalf("create: %+v", created)
		}
		if _, err := s.Run("kv", "create", "kv/users"); !errors.Is(err, kv.ErrExists) || !strings.HasSuffix(err.Error(), "(EEXIST)") {
			t.Fatalf("create again: %v", err)
		}
		for i := range 20 {
			s.Must("kv", "put", "kv/users", fmt.Sprintf("user.%02d", i), fmt.Sprintf("v%d", i))
		}
		s.Must("kv", "put", "kv/users", "group.a", "g")
		if out := s.Must("kv", "get", "kv/users", "user.07"); out != "v7\n" {
			t.Fatalf("get: %q", out)
		}
		var got pairReport
		s.JSON(&got, "kv", "get", "kv/users", "group.a")
		if got.Value != "g" {
			t.Fatalf("get json: %+v", got)
		}
		if _, err := s.Run("kv", "get", "kv/users", "nobody"); !errors.Is(err, kv.ErrNotFound) || err.Error() != `"nobody": not found (ENOENT)` {
			t.Fatalf("get of a missing key: %v", err)
		}
		s.Must("kv", "rm", "kv/users", "user.00")
		s.Must("kv", "rm", "kv/users", "user.00") // missing: not an error
		// Pages of 5 with --prefix, following next.
		var keys []string
		start := ""
		for {
			var page lsReport
			s.JSON(&page, "kv", "ls", "kv/users", "--prefix", "user.", "--limit", "5", "--start", start)
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
		if out := s.Must("kv", "ls", "kv/users", "--limit", "2", "--values"); out != "group.a\tg\nuser.01\tv1\n(more: --start \"user.01\\x00\")\n" {
			t.Fatalf("ls plain: %q", out)
		}
		var info infoReport
		s.JSON(&info, "kv", "info", "kv/users")
		if info.K != 2 || info.Entries != 20 || info.Leaves < 3 || info.Depth != 2 || info.MinLeaf < 2 || info.MaxLeaf > 4 {
			t.Fatalf("info: %+v", info)
		}
		if out := s.Must("kv", "info", "kv/users"); !strings.Contains(out, "entries: 20\n") {
			t.Fatalf("info plain: %q", out)
		}
		var check checkReport
		s.JSON(&check, "kv", "check", "kv/users")
		if check.Entries != 20 || len(check.Problems) != 0 {
			t.Fatalf("check: %+v", check)
		}
		for _, bad := range [][]string{
			{"kv", "get", "users", "k"},
			{"kv", "ls", "kv/users", "--limit", "0"},
			{"kv", "put", "kv/users", "", "v"},
		} {
			if _, err := s.Run(bad...); err == nil || !strings.Contains(err.Error(), "(EINVAL)") {
				t.Fatalf("cuttle %s: %v", strings.Join(bad, " "), err)
			}
		}
		if _, err := s.Run("kv", "info", "kv/nothing"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("info of a missing store: %v", err)
		}
		if _, err := s.Run("kv", "info", "nopool/x"); err == nil || !strings.Contains(err.Error(), "pool ls") {
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
		png := t.TempDir() + "/series.png"
		s.JSON(&r, "kv", "bench", "kv/b", "--keys", "200", "--k", "4", "--clients", "2", "--depth", "2", "--duration", "2s", "--mix", "get=2,put=1,rm=1",
			"--report-every", "60", "--plot", png)
		if r.K != 4 || r.PrefillPerSec <= 0 || r.Ops["get"].Ops == 0 || r.Ops["put"].Ops == 0 || r.Ops["rm"].Ops == 0 || r.Errors != 0 {
			t.Fatalf("bench: %+v", r)
		}
		if r.ListedKeys != int(r.EntriesAfter) || r.ProblemsAtCheck != 0 || r.LeavesAfter < 10 {
			t.Fatalf("bench: %+v", r)
		}
		if len(r.Series) != 4 || r.Series[0].Keys != 60 || r.Series[3].Keys != 200 || r.Series[3].P99Ms <= 0 || r.Series[3].PerSec <= 0 {
			t.Fatalf("series: %+v", r.Series)
		}
		if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Fatalf("plot: %d bytes, %v", len(b), err)
		}
		if _, err := s.Run("kv", "bench", "kv/d", "--plot", png); err == nil || !strings.Contains(err.Error(), "--report-every") {
			t.Fatalf("--plot without --report-every: %v", err)
		}
		if _, err := s.Run("kv", "bench", "kv/b", "--keys", "10"); !errors.Is(err, kv.ErrExists) {
			t.Fatalf("bench on an existing store: %v", err)
		}
		if _, err := s.Run("kv", "bench", "kv/c", "--mix", "get=1,scan=2"); err == nil || !strings.Contains(err.Error(), "(EINVAL)") {
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
		s.Must("kv", "create", "kv/users", "--k", "2")
		for i := range 6 {
			s.Must("kv", "put", "kv/users", fmt.Sprintf("user.%02d", i), "v")
		}
		ctx := context.Background()
		conn, err := s.Dial(ctx)
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
		s.JSON(&r, "kv", "check", "kv/users", "--repair")
		if r.Repair == nil || len(r.Repair.Removed) != 0 || len(r.Repair.Young) != 1 || r.Repair.Young[0].Leaf != orphan || r.Repair.OlderThanSeconds != 5 || len(r.Problems) != 0 {
			t.Fatalf("check --repair of a young orphan: %+v", r)
		}
		time.Sleep(2 * time.Second)
		if out := s.Must("kv", "check", "kv/users", "--repair", "--older-than", "1s"); !strings.HasPrefix(out, "removed "+orphan+": orphan leaf, never named by the index (its operation was rolled back), 2s old\nrepair: ") ||
			!strings.Contains(out, ", 1 orphans removed, 0 orphans younger than 1s left\n") {
			t.Fatalf("check --repair plain: %q", out)
		}
		if _, err := io.Stat(ctx, orphan); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("the orphan after --repair: %v", err)
		}
		s.JSON(&r, "kv", "check", "kv/users", "--repair")
		if len(r.Repair.Removed)+len(r.Repair.Young) != 0 || r.Entries != 6 || r.Repair.LeafObjects < 2 {
			t.Fatalf("check --repair again: %+v", r)
		}
		if _, err := s.Run("kv", "check", "kv/users", "--repair", "--older-than", "-1s"); !errors.Is(err, kv.ErrInvalid) {
			t.Fatalf("--older-than -1s: %v", err)
		}
	})
}

// series cuts inserts into points by order of completion: latencies and
// rates per point, the last point shorter.
func TestSeries(t *testing.T) {
	ms := time.Millisecond
	var ins []insert
	// 5 inserts completing 10 ms apart, given out of order: latencies
	// 1..5 ms.
	for _, i := range []int{3, 1, 5, 2, 4} {
		ins = append(ins, insert{lat: time.Duration(i) * ms, done: time.Duration(10*i) * ms})
	}
	got := series(ins, 2)
	want := []seriesPoint{
		{Keys: 2, PerSec: 100, P50Ms: 1, P99Ms: 2, MaxMs: 2},
		{Keys: 4, PerSec: 100, P50Ms: 3, P99Ms: 4, MaxMs: 4},
		{Keys: 5, PerSec: 100, P50Ms: 5, P99Ms: 5, MaxMs: 5},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("series: %+v, want %+v", got, want)
	}
}
