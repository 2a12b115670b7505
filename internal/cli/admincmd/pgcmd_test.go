package admincmd

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
)

// `cuttle pg` and `cuttle status` in process against a simulated cluster
// (a monitor and three OSDs on memnet, whose primaries report their PGs),
// as text and as JSON.
func TestPGCommandsInProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 1, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
		for _, h := range []string{"h1", "h2", "h3"} {
			c.AddOSD(h)
		}
		// 8 PGs, below the autoscaler's 32: off, so that status says HEALTH_OK.
		c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "3", "autoscale_mode", "off")
		c.WaitForEpoch(c.Epoch())
		cf := &clusterconn.Flags{MonHost: "a=a:6789", Name: "client.admin", Timeout: time.Minute, Network: c.Net.Host("cli")}
		run := func(args ...string) (string, error) {
			var stdout bytes.Buffer
			out := &cmdutil.Output{Format: cmdutil.FormatPlain, W: &stdout}
			root := &cobra.Command{Use: "cuttle", SilenceUsage: true, SilenceErrors: true}
			root.PersistentFlags().Var((*cmdutil.FormatFlag)(&out.Format), "format", "")
			AddPGCommands(root, out, cf)
			AddMonCommands(root, out, cf)
			AddOSDCommands(root, out, cf)
			root.SetOut(&stdout)
			root.SetArgs(args)
			err := root.ExecuteContext(context.Background())
			return stdout.String(), err
		}
		must := func(args ...string) string {
			t.Helper()
			out, err := run(args...)
			if err != nil {
				t.Fatalf("cuttle %s: %v", strings.Join(args, " "), err)
			}
			return out
		}
		waitFor := func(what string, ok func() bool) {
			t.Helper()
			for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(time.Second) {
				if time.Now().After(deadline) {
					t.Fatalf("no %s after a minute: %s", what, must("pg", "stat"))
				}
			}
		}
		waitFor("clean PGs", func() bool { return strings.HasPrefix(must("pg", "stat"), "8 pgs: 8 active+clean; ") })

		conn, err := rados.Connect(context.Background(), rados.Config{Mons: []string{"a=a:6789"}, Auth: "none",
			Network: c.Net.Host("writer"), Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(context.Background(), "obj", []byte("hello")); err != nil {
			t.Fatal(err)
		}
		waitFor("the object", func() bool { return strings.Contains(must("pg", "stat"), "; 1 object, 5 B data, ") })

		// df: the pool's object, 5 bytes stored, 15 used at size 3.
		if out := must("df"); !regexp.MustCompile(`(?m)^rbd +1 +8 +5 B +1 +15 B +\S+ +\S+ \S+$`).MatchString(out) ||
			!strings.Contains(out, "--- RAW STORAGE ---\nCLASS ") || !regexp.MustCompile(`(?m)^TOTAL +3\.0 GiB `).MatchString(out) {
			t.Errorf("df:\n%s", out)
		}
		var df struct {
			Stats struct {
				Total   int64 `json:"total_bytes"`
				NumOSDs int   `json:"num_osds"`
			} `json:"stats"`
			Pools []struct {
				Name  string `json:"name"`
				Stats struct {
					Stored   int64 `json:"stored"`
					Objects  int64 `json:"objects"`
					Used     int64 `json:"bytes_used"`
					MaxAvail int64 `json:"max_avail"`
				} `json:"stats"`
			} `json:"pools"`
		}
		if err := json.Unmarshal([]byte(must("--format", "json", "df")), &df); err != nil || df.Stats.NumOSDs != 3 ||
			df.Stats.Total != 3<<30 || len(df.Pools) != 1 || df.Pools[0].Name != "rbd" || df.Pools[0].Stats.Stored != 5 ||
			df.Pools[0].Stats.Objects != 1 || df.Pools[0].Stats.Used != 15 || df.Pools[0].Stats.MaxAvail <= 0 {
			t.Errorf("df json: %+v %v", df, err)
		}
		// osd df: every OSD holds a copy of each of the 8 PGs.
		if out := must("osd", "df"); strings.Count(out, "  8      up\n") != 3 || !strings.Contains(out, "MIN/MAX VAR: ") {
			t.Errorf("osd df:\n%s", out)
		}
		var osdDF struct {
			Nodes []struct {
				ID     int32  `json:"id"`
				KB     int64  `json:"kb"`
				PGs    int    `json:"pgs"`
				Status string `json:"status"`
			} `json:"nodes"`
			Summary struct {
				TotalKB int64 `json:"total_kb"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(must("--format", "json", "osd", "df")), &osdDF); err != nil || len(osdDF.Nodes) != 3 ||
			osdDF.Summary.TotalKB != 3<<20 {
			t.Errorf("osd df json: %+v %v", osdDF, err)
		}
		for _, n := range osdDF.Nodes {
			if n.KB != 1<<20 || n.PGs != 8 || n.Status != "up" {
				t.Errorf("osd df json, osd.%d: %+v", n.ID, n)
			}
		}

		var stat struct {
			NumPGs     int `json:"num_pgs"`
			NumObjects int `json:"num_objects"`
			ByState    []struct {
				Name string `json:"name"`
				Num  int    `json:"num"`
			} `json:"num_pg_by_state"`
		}
		if err := json.Unmarshal([]byte(must("--format", "json", "pg", "stat")), &stat); err != nil ||
			stat.NumPGs != 8 || stat.NumObjects != 1 || len(stat.ByState) != 1 || stat.ByState[0].Name != "active+clean" {
			t.Errorf("pg stat json: %+v %v", stat, err)
		}
		if out := must("pg", "dump"); !strings.HasPrefix(out, "PG ") || strings.Count(out, "active+clean") != 8 || !strings.Contains(out, "osd.2") {
			t.Errorf("pg dump:\n%s", out)
		}
		if out := must("pg", "query", "1.7"); !strings.Contains(out, "state            active+clean") {
			t.Errorf("pg query:\n%s", out)
		}
		var ls struct {
			PGStats []struct {
				PGID string `json:"pgid"`
			} `json:"pg_stats"`
		}
		if err := json.Unmarshal([]byte(must("--format", "json", "pg", "ls-by-osd", "osd.1")), &ls); err != nil || len(ls.PGStats) != 8 {
			t.Errorf("pg ls-by-osd: %+v %v", ls, err)
		}
		if out := must("pg", "ls", "active", "clean"); strings.Count(out, "\n") != 9 {
			t.Errorf("pg ls active clean:\n%s", out)
		}
		if out := must("pg", "ls", "degraded"); strings.Count(out, "\n") != 1 {
			t.Errorf("pg ls degraded:\n%s", out)
		}
		if _, err := run("pg", "query", "9.0"); err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("pg query 9.0: %v", err)
		}
		if _, err := run("pg", "query"); err == nil {
			t.Error("pg query without a PGID")
		}
		if out := must("pg", "query", "1.7"); !strings.Contains(out, "last deep scrub  -") {
			t.Errorf("pg query before a deep scrub:\n%s", out)
		}
		if out := must("pg", "deep-scrub", "1.7"); !strings.HasPrefix(out, "instructing pg 1.7 on osd.") {
			t.Errorf("pg deep-scrub: %q", out)
		}
		waitFor("the deep scrub", func() bool {
			return !strings.Contains(must("pg", "query", "1.7"), "last deep scrub  -")
		})
		if _, err := run("pg", "repair", "7.0"); err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("pg repair 7.0: %v", err)
		}
		// A clean PG has nothing to give up; revert and delete are the modes.
		for _, mode := range []string{"delete", "revert"} {
			if _, err := run("pg", "mark_unfound_lost", "1.7", mode); err == nil || !strings.Contains(err.Error(), "no unfound objects") {
				t.Errorf("pg mark_unfound_lost %s on a clean PG: %v", mode, err)
			}
		}
		if _, err := run("pg", "mark_unfound_lost", "1.7", "forget"); err == nil || !strings.Contains(err.Error(), "want revert or delete") {
			t.Errorf("pg mark_unfound_lost forget: %v", err)
		}
		status := must("status")
		for _, want := range []string{"health: HEALTH_OK", "  data:\n    pools:   1 pool, 8 pgs\n    objects: 1 object, 5 B\n",
			"    pgs:     8 active+clean\n"} {
			if !strings.Contains(status, want) {
				t.Errorf("status lacks %q:\n%s", want, status)
			}
		}
	})
}
