package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/pgmon"
	"github.com/cuttlestore/cuttle/rados"
)

// Guard rails across processes: with the full ratios lowered under the
// OSDs' usage, the monitors mark the OSDs nearfull, then full and the
// pool full (HEALTH_WARN, then HEALTH_ERR); a put is refused with an
// error that says why and leaves no object; rm works, frees the space,
// and the states and checks clear, so puts work again.
func TestClusterFullRefusesWritesAndRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	c := upLocalCluster(t)
	conf, cli, waitFor := c.conf, c.cli, c.waitFor
	// usedFraction returns the least used fraction among the OSDs, once
	// each reports at least atLeast bytes used.
	usedFraction := func(atLeast uint64) (float64, bool) {
		var d pgmon.DumpView
		if err := json.Unmarshal([]byte(cli("--format", "json", "pg", "dump")), &d); err != nil {
			t.Fatal(err)
		}
		least := 1.0
		for _, o := range d.OSDStats {
			if o.TotalBytes == 0 || o.UsedBytes < atLeast {
				return 0, false
			}
			least = min(least, float64(o.UsedBytes)/float64(o.TotalBytes))
		}
		return least, len(d.OSDStats) == 3
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := rados.ConnectConf(ctx, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io, err := conn.OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	const big = 16 << 20
	if err := io.WriteFull(ctx, "big", bytes.Repeat([]byte("x"), big)); err != nil {
		t.Fatal(err)
	}
	var f float64
	waitFor("every OSD to report the big object's space", func() bool {
		var ok bool
		f, ok = usedFraction(big)
		return ok
	})
	ratio := func(x float64) string { return fmt.Sprintf("%.4f", x) }

	// Nearfull: a warning.
	cli("osd", "set-nearfull-ratio", ratio(f*0.9))
	waitFor("OSD_NEARFULL", func() bool {
		h := cli("health", "detail")
		return strings.HasPrefix(h, "HEALTH_WARN") && strings.Contains(h, "OSD_NEARFULL") && strings.Contains(h, "osd.0 is near full (")
	})

	// Full: an error, and the pool refuses writes.
	cli("osd", "set-backfillfull-ratio", ratio(f*0.93))
	cli("osd", "set-full-ratio", ratio(f*0.95))
	waitFor("OSD_FULL and POOL_FULL", func() bool {
		h := cli("health", "detail")
		return strings.HasPrefix(h, "HEALTH_ERR") && strings.Contains(h, "OSD_FULL") && strings.Contains(h, "POOL_FULL") &&
			strings.Contains(h, "pool 'rbd' is full")
	})
	if dump := cli("osd", "dump"); !strings.Contains(dump, "full_ratio "+strings.TrimRight(ratio(f*0.95), "0")) ||
		!strings.Contains(dump, "flags hashpspool,full") {
		t.Fatalf("osd dump does not show the ratio and the pool's flag:\n%s", dump)
	}
	file := filepath.Join(t.TempDir(), "new")
	if err := os.WriteFile(file, []byte("new data"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := run(t, "--conf", conf, "rados", "-p", "rbd", "put", "new", file)
	if err == nil {
		t.Fatal("put into a full pool succeeded")
	}
	if msg := stderr + err.Error(); !strings.Contains(msg, "pool 'rbd' is full") || !strings.Contains(msg, "delete objects or add OSDs") {
		t.Fatalf("put into a full pool: the error does not say why and what to do: %v %s", err, stderr)
	}
	if _, err := io.Stat(ctx, "new"); err == nil {
		t.Fatal("the refused put left an object")
	}
	if b, err := io.Read(ctx, "big", 0, 1); err != nil || string(b) != "x" {
		t.Fatalf("read from a full pool: %q %v", b, err)
	}

	// Deletes pass and free the space; the states clear.
	cli("rados", "-p", "rbd", "rm", "big")
	waitFor("the full states to clear", func() bool {
		h := cli("health", "detail")
		return !strings.Contains(h, "OSD_FULL") && !strings.Contains(h, "POOL_FULL") && !strings.Contains(h, "OSD_NEARFULL")
	})
	cli("rados", "-p", "rbd", "put", "new", file)
	if b, err := io.Read(ctx, "new", 0, 0); err != nil || string(b) != "new data" {
		t.Fatalf("put after freeing space: %q %v", b, err)
	}
}
