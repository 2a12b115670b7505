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

// Growing a pool's pg_num used to be accepted with no PG splitting behind
// it, so most of the pool's objects stopped being readable. On a cluster
// of real daemons: a pool of 8 PGs holding objects refuses pg_num and
// pgp_num 32, with or without --yes-i-really-mean-it, keeps its 8 PGs
// (last changed when it was created), and every object reads back.
func TestPoolPGNumChangeRefusedWithObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2")
	out, stderr, err := cuttleProc(t, "cluster", "up", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "1G")
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
	before := cut("osd", "pool", "ls", "detail")

	fails("pg_num is fixed at creation (8)", "osd", "pool", "set", "p8", "pg_num", "32")
	fails("pgp_num is fixed at creation (8)", "osd", "pool", "set", "p8", "pgp_num", "32")
	fails("pg_num is fixed at creation (8)", "osd", "pool", "set", "p8", "pg_num", "32", "--yes-i-really-mean-it")
	fails("create a new pool (cuttle osd pool create NEWPOOL 32)", "osd", "pool", "set", "p8", "pg_num", "32")
	if got := cut("osd", "pool", "set", "p8", "pg_num", "8"); !strings.Contains(got, "pg_num is already 8") {
		t.Errorf("setting pg_num to its value: %q", got)
	}
	if got := cut("osd", "pool", "get", "p8", "all"); !strings.Contains(got, "pg_num: 8\npgp_num: 8\n") {
		t.Errorf("pool p8 after the refusals: %q", got)
	}
	if got := cut("osd", "pool", "ls", "detail"); got != before || !strings.Contains(got, "pg_num 8 pgp_num 8 ") {
		t.Errorf("pools after the refusals:\n%sbefore:\n%s(a refused change must leave the pool, and its last_change, alone)", got, before)
	}
	for i := range objects {
		name := fmt.Sprint("obj-", i)
		got, err := ioc.Read(ctx, name, 0, 0)
		if err != nil || string(got) != string(content(i)) {
			t.Fatalf("read %s: %q, %v; want %q", name, got, err, content(i))
		}
	}
	if got := cut("rados", "-p", "p8", "ls"); strings.Count(got, "\n") != objects {
		t.Errorf("rados ls lists %d objects, want %d", strings.Count(got, "\n"), objects)
	}
}
