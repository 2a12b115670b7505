package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// The OSDs enforce the blocklist across processes: one client instance
// (HOST:0/NONCE) fenced by "osd blocklist add" is refused with
// rados.ErrBlocklisted while another process carries on; a whole-host
// entry (HOST:0: every client there) refuses the CLI's own puts with an
// error that says what to do; "rm" lifts each, and every answer comes
// as JSON too.
func TestBlocklistEnforcedAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	c := upLocalCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := rados.ConnectConf(ctx, c.conf)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io, err := conn.OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	if err := io.WriteFull(ctx, "before", []byte("1")); err != nil {
		t.Fatal(err)
	}
	type change struct {
		Addr    string `json:"addr"`
		Until   string `json:"until"`
		Removed bool   `json:"removed"`
		Epoch   uint64 `json:"epoch"`
	}
	blocklist := func(args ...string) change {
		t.Helper()
		var ch change
		out := c.cli(append([]string{"--format", "json", "osd", "blocklist"}, args...)...)
		if err := json.Unmarshal([]byte(out), &ch); err != nil || ch.Epoch == 0 {
			t.Fatalf("osd blocklist %v: %q: %v", args, out, err)
		}
		if err := conn.WaitForEpoch(ctx, ch.Epoch); err != nil {
			t.Fatal(err)
		}
		return ch
	}

	// One instance: this process's connection.
	me := fmt.Sprintf("127.0.0.1:0/%d", conn.Nonce())
	if ch := blocklist("add", me, "600"); ch.Addr != me || ch.Until == "" {
		t.Fatalf("add: %+v", ch)
	}
	err = io.WriteFull(ctx, "fenced", []byte("2"))
	if !errors.Is(err, rados.ErrBlocklisted) || !strings.Contains(err.Error(), "osd blocklist") {
		t.Fatalf("a write of the fenced instance: %v", err)
	}
	file := filepath.Join(t.TempDir(), "obj")
	if err := os.WriteFile(file, []byte("cli data"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.cli("rados", "-p", "rbd", "put", "from-cli", file) // another instance on the same host
	var ls []struct {
		Addr  string `json:"addr"`
		Until string `json:"until"`
	}
	if err := json.Unmarshal([]byte(c.cli("--format", "json", "osd", "blocklist", "ls")), &ls); err != nil || len(ls) != 1 || ls[0].Addr != me {
		t.Fatalf("ls: %+v %v", ls, err)
	}

	// The whole host's clients: the CLI's put is refused, and says so.
	blocklist("add", "127.0.0.1:0", "600")
	_, stderr, err := run(t, "--conf", c.conf, "rados", "-p", "rbd", "put", "refused", file)
	if msg := fmt.Sprint(err) + stderr; err == nil || !strings.Contains(msg, "EBLOCKLISTED") || !strings.Contains(msg, "cuttle osd blocklist ls") {
		t.Fatalf("a put from a fenced host: %v %s", err, stderr)
	}
	if ch := blocklist("rm", "127.0.0.1:0"); !ch.Removed {
		t.Fatalf("rm: %+v", ch)
	}
	c.cli("rados", "-p", "rbd", "put", "allowed", file)

	// Lifted: the same instance is served again, and nothing it was
	// refused was written.
	blocklist("rm", me)
	if err := io.WriteFull(ctx, "after", []byte("3")); err != nil {
		t.Fatalf("a write after rm: %v", err)
	}
	for name, want := range map[string]error{"fenced": rados.ErrNotFound, "refused": rados.ErrNotFound, "from-cli": nil, "allowed": nil} {
		if _, err := io.Stat(ctx, name); !errors.Is(err, want) {
			t.Errorf("stat %s: %v, want %v", name, err, want)
		}
	}
}
