package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// Growing a pool's pg_num splits its PGs on real daemons: a pool of 8 PGs
// holding objects goes to 32 (the OSDs split each PG in place, pgp_num
// stays 8), then raises pgp_num so the children move to their own OSDs;
// then it shrinks back to 8, the monitors stepping pgp_num down and the
// OSDs merging the PGs. It ends active+clean with every object readable
// and listed, before and after each change.
func TestPoolPGNumGrowsWithObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2")
	out, stderr, err := cuttleProc(t, "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "1G")
	if err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	conf := filepath.Join(dir, "cuttle.conf")
	cut := func(args ...string) string {
		t.Helper()
		out, stderr, err := cuttleIn(t, nil, append([]string{"--conf", conf}, args...)...)
		if err != nil {
			t.Fatalf("cuttle %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	fails := func(want string, args ...string) {
		t.Helper()
		_, stderr, err := cuttleIn(t, nil, append([]string{"--conf", conf}, args...)...)
		if err == nil || !strings.Contains(stderr, want) {
			t.Errorf("cuttle %s: %v, stderr %q; want an error with %q", strings.Join(args, " "), err, stderr, want)
		}
	}
	// waitClean waits for every PG of the cluster (p8's and the other
	// pools') to be active+clean, p8 having pgs of them.
	others := -1
	waitClean := func(pgs int) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			stat := cut("pg", "stat")
			var total int
			if _, err := fmt.Sscanf(stat, "%d pgs:", &total); err == nil && others < 0 {
				others = total - pgs
			}
			if pgsAllActiveClean(stat) && total == pgs+others {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("PGs not %d+%d active+clean: %s", pgs, others, stat)
			}
			<-tick.C
		}
	}

	// All three OSDs share this machine: a rule over OSDs places 3 copies.
	cut("osd", "crush", "rule", "create-replicated", "by_osd", "default", "osd")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := rados.ConnectConf(ctx, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.CreatePool(ctx, "p8", &rados.PoolOptions{PGNum: 8, Size: 3, Rule: "by_osd"}); err != nil {
		t.Fatal(err)
	}
	ioc, err := conn.OpenIOContext("p8")
	if err != nil {
		t.Fatal(err)
	}
	const objects = 200
	content := func(i int) []byte { return fmt.Appendf(nil, "object %d of pool p8", i) }
	for i := range objects {
		if err := ioc.WriteFull(ctx, fmt.Sprint("obj-", i), content(i)); err != nil {
			t.Fatalf("put obj-%d: %v", i, err)
		}
	}
	readAll := func(when string) {
		t.Helper()
		for i := range objects {
			name := fmt.Sprint("obj-", i)
			got, err := ioc.Read(ctx, name, 0, 0)
			if err != nil || string(got) != string(content(i)) {
				t.Fatalf("%s: read %s: %q, %v; want %q", when, name, got, err, content(i))
			}
		}
		if got := cut("rados", "-p", "p8", "ls"); strings.Count(got, "\n") != objects {
			t.Errorf("%s: rados ls lists %d objects, want %d", when, strings.Count(got, "\n"), objects)
		}
	}
	waitClean(8)

	if got := cut("osd", "pool", "set", "p8", "pg_num", "32"); !strings.Contains(got, "the OSDs split its 8 PGs into 32") {
		t.Errorf("pg_num 32: %q", got)
	}
	if got := cut("osd", "pool", "get", "p8", "all"); !strings.Contains(got, "pg_num: 32\npgp_num: 8\n") {
		t.Errorf("pool p8 after pg_num 32: %q", got)
	}
	readAll("after the split") // the client resends what the split made stale
	waitClean(32)
	fails("pg_num must be at least 1", "osd", "pool", "set", "p8", "pg_num", "0")
	fails("pgp_num 64 is above pg_num 32", "osd", "pool", "set", "p8", "pgp_num", "64")
	cut("osd", "pool", "set", "p8", "pgp_num", "32")
	// The monitors step pgp_num toward its target (pgp_num_target 32).
	deadline := time.Now().Add(2 * time.Minute)
	for got := ""; got != "pgp_num: 32\n"; got = cut("osd", "pool", "get", "p8", "pgp_num") {
		if time.Now().After(deadline) {
			t.Fatalf("pgp_num not stepped to 32: %q", got)
		}
		waitClean(32) // a step is taken once the previous one's PGs report
	}
	waitClean(32)
	readAll("after pgp_num 32")

	// Shrinking merges: pgp_num steps down to 8, then the PGs merge.
	start := time.Now()
	if got := cut("osd", "pool", "set", "p8", "pg_num", "8"); !strings.Contains(got, "the monitors merge its 32 PGs into 8") {
		t.Errorf("pg_num 8: %q", got)
	}
	fails("pgp_num 16 is above pg_num_target 8", "osd", "pool", "set", "p8", "pgp_num", "16")
	deadline = time.Now().Add(3 * time.Minute)
	poll := time.NewTicker(200 * time.Millisecond)
	defer poll.Stop()
	for cut("osd", "pool", "get", "p8", "pg_num") != "pg_num: 8\n" {
		if time.Now().After(deadline) {
			t.Fatalf("pg_num not merged down to 8: %s", cut("osd", "pool", "get", "p8", "all"))
		}
		<-poll.C
	}
	waitClean(8)
	t.Logf("pg_num 32 -> 8 (pgp_num stepped down at target_max_misplaced_ratio 0.05, then the merge) until active+clean: %v",
		time.Since(start).Round(100*time.Millisecond))
	if got := cut("osd", "pool", "get", "p8", "all"); !strings.Contains(got, "pg_num: 8\npgp_num: 8\n") ||
		!strings.Contains(got, "merge_status: none") {
		t.Errorf("pool p8 after the merge: %q", got)
	}
	readAll("after the merge")
}
