package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/launcher"
)

// cuttleProc runs the test binary as cuttle in a process of its own, as a
// user would run bin/cuttle, and returns its stdout and stderr.
func cuttleProc(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

// localStatus runs cluster status --format json on dir.
func localStatus(t *testing.T, dir string) map[string]launcher.Status {
	t.Helper()
	out, stderr, err := run(t, "--format", "json", "cluster", "status", "--dir", dir)
	if err != nil {
		t.Fatalf("cluster status: %v %s", err, stderr)
	}
	var rep struct {
		Daemons []launcher.Status `json:"daemons"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("cluster status is not JSON: %v\n%s", err, out)
	}
	st := map[string]launcher.Status{}
	for _, s := range rep.Daemons {
		st[s.Name] = s
	}
	return st
}

// `cuttle cluster up` as a user runs it: three monitors in processes that
// outlive the command, a configuration file other commands use, a
// monitor killed with SIGKILL restarted alone by the next up with its
// data, and down stopping everything.
func TestClusterUpDown(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "mon.b", "mon.c")

	out, stderr, err := cuttleProc(t, "cluster", "up", "--dir", dir, "--mons", "3", "--osds", "0", "--base-port", base)
	if err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	conf := filepath.Join(dir, "cuttle.conf")
	for _, want := range []string{"export CUTTLE_CONF=" + conf, "health: HEALTH_OK", "cluster down --dir " + dir} {
		if !strings.Contains(out, want) {
			t.Errorf("cluster up output lacks %q:\n%s", want, out)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "admin.keyring")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("admin keyring: %v, %v", fi.Mode(), err)
	}

	// The daemons outlived up, each in a session of its own.
	before := localStatus(t, dir)
	if len(before) != 3 {
		t.Fatalf("status: %+v", before)
	}
	for name, s := range before {
		if s.State != launcher.Running || s.PID == 0 {
			t.Fatalf("%s after up: %+v", name, s)
		}
		if sid, err := syscall.Getpgid(s.PID); err != nil || sid != s.PID {
			t.Errorf("%s: process group %d, %v; want its own", name, sid, err)
		}
	}

	// Other commands reach the cluster through the configuration file.
	cli := func(args ...string) string {
		t.Helper()
		out, stderr, err := run(t, append([]string{"--conf", conf}, args...)...)
		if err != nil {
			t.Fatalf("cuttle %s: %v %s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	cli("osd", "pool", "create", "rbd", "8")
	if out := cli("osd", "pool", "ls"); out != "rbd\n" {
		t.Fatalf("osd pool ls: %q", out)
	}

	// SIGKILL one monitor; the next up restarts it and only it.
	victim := before["mon.b"]
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for localStatus(t, dir)["mon.b"].State != launcher.Stopped {
		select {
		case <-deadline:
			t.Fatal("mon.b still counts as running after SIGKILL")
		case <-tick.C:
		}
	}
	cli("osd", "pool", "create", "data", "8") // the other two carry on
	out, stderr, err = cuttleProc(t, "cluster", "up", "--dir", dir)
	if err != nil {
		t.Fatalf("second cluster up: %v\n%s%s", err, out, stderr)
	}
	if strings.Count(stderr, "started ") != 1 || !strings.Contains(stderr, "started mon.b") {
		t.Errorf("second up should start mon.b alone:\n%s", stderr)
	}
	after := localStatus(t, dir)
	for _, name := range []string{"mon.a", "mon.c"} {
		if after[name].PID != before[name].PID {
			t.Errorf("%s was restarted: pid %d, was %d", name, after[name].PID, before[name].PID)
		}
	}
	if b := after["mon.b"]; b.State != launcher.Running || b.PID == victim.PID {
		t.Fatalf("mon.b after the second up: %+v", b)
	}
	// The restarted monitor answers alone, with everything made before
	// and while it was down.
	if out := cli("--mon-host", "b="+victim.Addr, "osd", "pool", "ls"); out != "rbd\ndata\n" {
		t.Errorf("pools from the restarted mon.b: %q", out)
	}

	out, stderr, err = cuttleProc(t, "cluster", "down", "--dir", dir)
	if err != nil {
		t.Fatalf("cluster down: %v %s", err, stderr)
	}
	for _, name := range []string{"mon.a", "mon.b", "mon.c"} {
		if !strings.Contains(out, "stopped "+name) {
			t.Errorf("cluster down output lacks %s:\n%s", name, out)
		}
	}
	for name, s := range localStatus(t, dir) {
		if s.State != launcher.Stopped || s.PID != 0 {
			t.Errorf("%s after down: %+v", name, s)
		}
		if processLives(after[name].PID) {
			t.Errorf("%s (pid %d) still runs after down", name, after[name].PID)
		}
	}
}

// processLives reports whether pid is a process that has not exited (an
// exited one may linger as a zombie until init reaps it).
func processLives(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// Commands that reach a cluster default to the local cluster's
// configuration file, and say how to start one when there is none.
func TestDefaultConfIsLocalCluster(t *testing.T) {
	if DefaultConfPath != "./.cuttle/cuttle.conf" {
		t.Errorf("DefaultConfPath = %q", DefaultConfPath)
	}
	t.Chdir(t.TempDir())
	var out bytes.Buffer
	root := NewRootCommandConf(&out, &out, DefaultConfPath)
	root.SetArgs([]string{"status"})
	err := root.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cuttle cluster up") {
		t.Errorf("status without a cluster: %v", err)
	}
}

func TestClusterStatusWithoutCluster(t *testing.T) {
	_, _, err := run(t, "cluster", "status", "--dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no cluster") {
		t.Errorf("cluster status in an empty directory: %v", err)
	}
}

// localClusterDir returns the directory and base port for a multi-process
// test's `cuttle cluster up`, and stops the cluster when the test ends,
// printing the end of each daemon's log if the test failed. Ports are
// below Linux's ephemeral range, where other tests' clients do not land;
// up skips any that are taken.
func localClusterDir(t *testing.T, daemons ...string) (dir, base string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "c")
	base = fmt.Sprint(20000 + rand.IntN(40)*250)
	t.Cleanup(func() {
		if _, _, err := run(t, "cluster", "down", "--dir", dir); err != nil {
			t.Logf("cleanup: %v", err)
		}
		if t.Failed() {
			for _, name := range daemons {
				b, _ := os.ReadFile(filepath.Join(dir, "log", name+".log"))
				t.Logf("%s log:\n%s", name, lastLines(string(b), 30))
			}
		}
	})
	return dir, base
}
