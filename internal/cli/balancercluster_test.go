package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/balancer"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/rados"
)

// The balancer against launched daemons: a plan made, shown and executed
// by hand lands in the OSD map as pg_upmap_items, and with the balancer on
// the monitors bring every OSD within one PG copy of its target while the
// pool's objects stay readable.
func TestBalancerOnLaunchedCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	names := []string{"mon.a", "osd.0", "osd.1", "osd.2", "osd.3", "osd.4", "osd.5"}
	dir, base := localClusterDir(t, names...)
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "6", "--osd-size", "256M"); err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	c := &localCluster{t: t, dir: dir, conf: filepath.Join(dir, "cuttle.conf")}
	c.cli("osd", "pool", "create", "bal", "64", "--size", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := rados.ConnectConf(ctx, c.conf)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io, err := conn.OpenIOContext("bal")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := io.WriteFull(ctx, fmt.Sprint("obj-", i), []byte(fmt.Sprint("content ", i))); err != nil {
			t.Fatal(err)
		}
	}
	eval := func() balancer.PoolEval {
		var ev balancer.Evaluation
		if err := json.Unmarshal([]byte(c.cli("--format", "json", "balancer", "eval", "bal")), &ev); err != nil || len(ev.Pools) != 1 {
			t.Fatalf("balancer eval: %v %+v", err, ev)
		}
		return ev.Pools[0]
	}
	before := eval()
	if before.MaxDeviation <= 1 {
		t.Fatalf("CRUSH alone is within one copy: %+v", before)
	}

	c.cli("balancer", "optimize", "p1", "bal")
	if shown := c.cli("balancer", "show", "p1"); !strings.Contains(shown, "cuttle osd pg-upmap-items 2.") {
		t.Fatalf("balancer show p1:\n%s", shown)
	}
	c.cli("balancer", "execute", "p1")
	var dump osdmon.DumpView
	if err := json.Unmarshal([]byte(c.cli("--format", "json", "osd", "dump")), &dump); err != nil || len(dump.PGUpmapItems) == 0 {
		t.Fatalf("osd dump after execute: %v, %d upmap entries", err, len(dump.PGUpmapItems))
	}
	if st := c.cli("balancer", "status"); !strings.Contains(st, "active false") || strings.Contains(st, "p1") {
		t.Fatalf("balancer status:\n%s", st)
	}

	c.cli("config", "set", "mon", "balancer_sleep_interval", "1s")
	c.cli("balancer", "on")
	c.waitFor("the balancer to even out pool bal", func() bool { return eval().MaxDeviation <= 1 })
	after := eval()
	t.Logf("pool bal: before %+v\nafter %+v", before, after)
	if after.Stddev >= before.Stddev {
		t.Fatalf("stddev %v, before %v", after.Stddev, before.Stddev)
	}
	for i := range 10 {
		if got, err := io.Read(ctx, fmt.Sprint("obj-", i), 0, 0); err != nil || string(got) != fmt.Sprint("content ", i) {
			t.Fatalf("obj-%d reads %q, %v", i, got, err)
		}
	}
}
