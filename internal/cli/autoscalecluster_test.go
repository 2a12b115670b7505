package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// The PG autoscaler on real daemons (docs/AUTOSCALER.md): three OSDs of
// 1 GiB offer 300 PG copies. A pool of 8 PGs in mode warn should have 32
// (the floor): autoscale-status suggests it and health warns
// POOL_TOO_FEW_PGS until the pool's mode is off. A pool of 16 PGs in mode
// on with bias 4 that comes to hold 160 MiB (0.156 of the raw space: 62.5
// PGs, to 64) has its pg_num raised to 64 by the monitors' leader, then
// its pgp_num, and ends active+clean with every object intact.
func TestAutoscalerOnCluster(t *testing.T) {
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
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after 3 minutes", what)
			}
			<-tick.C
		}
	}

	cut("osd", "pool", "create", "small", "8")
	if got := cut("osd", "pool", "autoscale-status"); !strings.HasSuffix(lineOf(got, "small"), "8          32  warn") {
		t.Errorf("autoscale-status:\n%s", got)
	}
	var views []struct {
		Name   string `json:"pool_name"`
		PGNum  uint32 `json:"pg_num_target"`
		Ideal  uint32 `json:"pg_num_final"`
		Adjust bool   `json:"would_adjust"`
		Mode   string `json:"pg_autoscale_mode"`
		OSDs   int    `json:"osd_count"`
	}
	if err := json.Unmarshal([]byte(cut("osd", "pool", "autoscale-status", "--format", "json")), &views); err != nil {
		t.Fatal(err)
	}
	if len(views) != 2 || views[1].Name != "small" || views[1].Ideal != 32 || !views[1].Adjust || views[1].Mode != "warn" || views[1].OSDs != 3 {
		t.Errorf("autoscale-status JSON: %+v", views)
	}
	wantWarn := "pool small has 8 placement groups, should have 32"
	waitFor("POOL_TOO_FEW_PGS", func() bool { return strings.Contains(cut("health", "detail"), wantWarn) })
	cut("osd", "pool", "set", "rbd", "target_size_bytes", "600M")
	if got := cut("osd", "pool", "get", "rbd", "target_size_bytes"); got != "target_size_bytes: 629145600\n" {
		t.Errorf("target_size_bytes: %q", got)
	}

	cut("config", "set", "mon", "pg_autoscaler_sleep_interval", "2s")
	cut("osd", "pool", "create", "meta", "16", "--autoscale-mode", "on")
	cut("osd", "pool", "set", "meta", "pg_autoscale_bias", "4")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := rados.ConnectConf(ctx, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ioc, err := conn.OpenIOContext("meta")
	if err != nil {
		t.Fatal(err)
	}
	const objects, size = 40, 4 << 20
	content := func(i int) []byte { return bytes.Repeat([]byte{byte(i + 1)}, size) }
	for i := range objects {
		if err := ioc.WriteFull(ctx, fmt.Sprint("obj-", i), content(i)); err != nil {
			t.Fatalf("put obj-%d: %v", i, err)
		}
	}
	start := time.Now()
	waitFor("pg_num 64", func() bool {
		return strings.Contains(cut("osd", "pool", "get", "meta", "pg_num"), "pg_num: 64\n")
	})
	raised := time.Since(start)
	waitFor("pgp_num 64, active+clean", func() bool {
		return cut("osd", "pool", "get", "meta", "pgp_num") == "pgp_num: 64\n" && pgsAllActiveClean(cut("pg", "stat"))
	})
	t.Logf("pg_num 16 -> 64 %v after the writes, pgp_num 64 and active+clean %v after", raised.Round(time.Second),
		time.Since(start).Round(time.Second))
	for i := range objects {
		got, err := ioc.Read(ctx, fmt.Sprint("obj-", i), 0, size)
		if err != nil || !bytes.Equal(got, content(i)) {
			t.Fatalf("obj-%d after the autoscaler's split: %d bytes, %v", i, len(got), err)
		}
	}
	if got := lineOf(cut("osd", "pool", "autoscale-status"), "meta"); !strings.HasSuffix(got, "4.0      64              on") {
		t.Errorf("meta after: %q", got)
	}

	cut("osd", "pool", "set", "small", "pg_autoscale_mode", "off")
	waitFor("POOL_TOO_FEW_PGS cleared", func() bool { return !strings.Contains(cut("health", "detail"), "POOL_TOO_FEW_PGS") })
}

// lineOf returns the line of table text that starts with name and a
// space.
func lineOf(text, name string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}
