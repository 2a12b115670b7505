package cli

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Watch/notify between two client processes of a launched cluster: `rados
// watch` in one prints the notify `rados notify` sends from another and
// answers it; the notifier gets the answer; listwatchers shows the watch
// until the watcher is interrupted, which unwatches.
func TestWatchNotifyClusterUp(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	c := upLocalCluster(t)
	file := filepath.Join(t.TempDir(), "hdr")
	if err := os.WriteFile(file, []byte("header"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.cli("rados", "-p", "rbd", "put", "hdr", file)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	watcher := exec.Command(exe, "--conf", c.conf, "--name", "client.admin", "rados", "-p", "rbd", "watch", "hdr",
		"--reply", "pong", "--format", "json")
	watcher.Env = append(os.Environ(), daemonEnv+"=1")
	var stderr strings.Builder
	watcher.Stderr = &stderr
	stdout, err := watcher.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watcher.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = watcher.Process.Kill(); _ = watcher.Wait() })
	events := json.NewDecoder(stdout)
	type event struct {
		Event    string `json:"event"`
		Cookie   uint64 `json:"cookie"`
		Notifier string `json:"notifier"`
		Payload  string `json:"payload"`
	}
	next := func() event {
		t.Helper()
		var ev event
		if err := events.Decode(&ev); err != nil {
			t.Fatalf("watcher output: %v; stderr:\n%s", err, stderr.String())
		}
		return ev
	}
	if ev := next(); ev.Event != "watching" || ev.Cookie == 0 {
		t.Fatalf("first watcher event %+v", ev)
	}

	var watchers struct {
		Watchers []struct {
			Client string `json:"client"`
			Cookie uint64 `json:"cookie"`
		} `json:"watchers"`
	}
	if err := json.Unmarshal([]byte(c.cli("rados", "-p", "rbd", "listwatchers", "hdr", "--format", "json")), &watchers); err != nil {
		t.Fatal(err)
	}
	if len(watchers.Watchers) != 1 || watchers.Watchers[0].Client != "client.admin" {
		t.Fatalf("listwatchers: %+v", watchers)
	}

	var res struct {
		Acks []struct {
			Client  string `json:"client"`
			Payload string `json:"payload"`
		} `json:"acks"`
		TimedOut []any `json:"timed_out"`
	}
	if err := json.Unmarshal([]byte(c.cli("rados", "-p", "rbd", "notify", "hdr", "hello watchers", "--format", "json")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Acks) != 1 || res.Acks[0].Payload != "pong" || len(res.TimedOut) != 0 {
		t.Fatalf("notify result %+v", res)
	}
	if ev := next(); ev.Event != "notify" || ev.Payload != "hello watchers" || ev.Notifier != "client.admin" {
		t.Fatalf("watcher got %+v", ev)
	}
	if out := c.cli("rados", "-p", "rbd", "notify", "hdr", "plain"); !strings.Contains(out, "reply from client.admin") || !strings.Contains(out, ": pong") {
		t.Fatalf("plain notify output %q", out)
	}

	if err := watcher.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	if err := watcher.Wait(); err != nil {
		t.Fatalf("watcher exit: %v; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(string(rest), "plain") {
		t.Fatalf("watcher's last output %q lacks the second notify", rest)
	}
	if out := c.cli("rados", "-p", "rbd", "listwatchers", "hdr"); strings.TrimSpace(out) != "" {
		t.Fatalf("listwatchers after the watcher stopped: %q", out)
	}
	if _, _, err := run(t, "--conf", c.conf, "rados", "-p", "rbd", "listwatchers", "nosuch"); err == nil || !strings.Contains(err.Error(), "no such object") {
		t.Fatalf("listwatchers of a missing object: %v", err)
	}
}
