package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A pool created with the defaults on the local cluster (every OSD on one
// host) serves I/O at once: cluster up sets osd_pool_default_crush_rule
// to a rule with failure domain osd. Under replicated_rule (one copy per
// host) its PGs stayed undersized+peered and a put waited out the whole
// op timeout.
func TestClusterUpDefaultPoolServesIO(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2")
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osd-size", "256M"); err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	conf := filepath.Join(dir, "cuttle.conf")
	cli := func(args ...string) (string, error) {
		t.Helper()
		out, stderr, err := run(t, append([]string{"--conf", conf}, args...)...)
		if err != nil {
			return out, fmt.Errorf("%w\n%s", err, stderr)
		}
		return out, nil
	}
	// The rule cluster up makes (internal/cli/daemoncmd's clusterRule).
	const clusterRule = "replicated_osd"
	if _, err := cli("osd", "pool", "create", "p1", "8"); err != nil {
		t.Fatal(err)
	}
	if out, err := cli("osd", "pool", "get", "p1", "crush_rule"); err != nil || out != "crush_rule: "+clusterRule+"\n" {
		t.Fatalf("p1's rule: %q, %v", out, err)
	}
	file := filepath.Join(t.TempDir(), "greeting")
	if err := os.WriteFile(file, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// New PGs take a moment to peer; far less than the timeout.
	start := time.Now()
	if _, err := cli("--timeout", "20s", "rados", "-p", "p1", "put", "greeting", file); err != nil {
		t.Fatalf("put to a default pool: %v", err)
	}
	if out, err := cli("--timeout", "20s", "rados", "-p", "p1", "get", "greeting", "-"); err != nil || out != "hello\n" {
		t.Fatalf("get: %q, %v", out, err)
	}
	t.Logf("put and get in %v", time.Since(start).Round(time.Millisecond))
	if out, err := cli("config", "get", "global", "osd_pool_default_crush_rule"); err != nil || !strings.Contains(out, clusterRule) {
		t.Errorf("config get osd_pool_default_crush_rule: %q, %v", out, err)
	}

	// A pool under replicated_rule cannot place its copies on one host:
	// health says why its PGs are inactive, and a put that gives up says
	// which PG it waited for and in what state.
	if _, err := cli("osd", "pool", "create", "onehost", "1", "--size", "3", "--min-size", "2", "--rule", "replicated_rule"); err != nil {
		t.Fatal(err)
	}
	pool, _ := cli("osd", "pool", "ls", "detail")
	wantHealth := "1 of 3 copies up, below min_size 2; CRUSH rule replicated_rule places only 1"
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := cli("health", "detail")
		if err == nil && strings.Contains(out, wantHealth) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health detail lacks %q:\n%s%v\n%s", wantHealth, out, err, pool)
		}
		time.Sleep(100 * time.Millisecond) // polling the cluster's health, with a deadline
	}
	_, err := cli("--timeout", "3s", "rados", "-p", "onehost", "put", "stuck", file)
	for _, want := range []string{`object "stuck" waited for pg 3.0 (acting [`, "which the monitors report undersized+degraded+peered",
		"cuttle health detail and cuttle pg query 3.0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("put to an inactive PG: %v\nwant %q", err, want)
		}
	}
}

// cluster up refuses flags that cannot make a cluster before it creates
// anything: no directory, no daemon. A store too small for an OSD was
// refused only once the monitors ran, leaving them and the directory.
func TestClusterUpRefusesBadFlagsFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a")
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--osd-size", "1K"}, "--osd-size 1K is too small: an OSD's store takes at least 1 MiB"},
		{[]string{"--osd-size", "lots"}, "--osd-size: bad size"},
		{[]string{"--mons", "2"}, "--mons 2: a cluster has 1, 3 or 5 monitors"},
		{[]string{"--osds", "-1"}, "--osds -1: from 0 (monitors only) to 64"},
		{[]string{"--osds", "65"}, "--osds 65: from 0"},
		{[]string{"--auth", "kerberos"}, `--auth "kerberos": cephx or none`},
		{[]string{"--base-port", "80"}, "--base-port 80: from 1024"},
	} {
		args := append([]string{"cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--timeout", "20s"}, tc.flags...)
		out, stderr, err := cuttleProc(t, args...)
		if err == nil || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "nothing was created") {
			t.Errorf("cluster up %s: %v\n%s%s\nwant %q", strings.Join(tc.flags, " "), err, out, stderr, tc.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("cluster up %s left %s behind (%v)", strings.Join(tc.flags, " "), dir, err)
		}
	}
}

// A cluster whose port another local cluster took while it was stopped
// says which cluster holds it (its directory), not "another program".
func TestClusterUpPortTakenByAnotherCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dirA, base := localClusterDir(t, "mon.a")
	dirB := filepath.Join(t.TempDir(), "b")
	t.Cleanup(func() { _, _, _ = run(t, "cluster", "down", "--dir", dirB) })
	up := func(dir string) (string, error) {
		t.Helper()
		out, stderr, err := cuttleProc(t, "cluster", "up", "--dir", dir, "--osds", "0", "--base-port", base, "--timeout", "30s")
		return out + stderr, err
	}
	if out, err := up(dirA); err != nil {
		t.Fatalf("cluster up A: %v\n%s", err, out)
	}
	if _, stderr, err := cuttleProc(t, "cluster", "down", "--dir", dirA); err != nil {
		t.Fatalf("cluster down A: %v %s", err, stderr)
	}
	if out, err := up(dirB); err != nil { // takes A's ports, now free
		t.Fatalf("cluster up B: %v\n%s", err, out)
	}
	out, err := up(dirA)
	want := "is in use by mon.a of the Cuttle cluster in " + dirB + " (pid "
	if err == nil || !strings.Contains(out, want) || !strings.Contains(out, "cuttle cluster down --dir "+dirB) {
		t.Fatalf("cluster up A with B on its ports: %v\n%s\nwant %q", err, out, want)
	}
}

// A command no monitor answers says on stderr, once, after about two
// seconds, that it keeps retrying until --timeout, instead of staying
// silent until then: through the monitor client (status) and through the
// rados client (rados ls). The timeout leaves the message six seconds
// of margin: under the race detector on a loaded machine, three (a
// timeout of 3s) were once not enough.
func TestNoMonitorSaysRetrying(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	for _, args := range [][]string{{"status"}, {"rados", "-p", "rbd", "ls"}} {
		start := time.Now()
		_, stderr, err := run(t, append([]string{"--conf", "", "--mon-host", "a=" + addr, "--timeout", "8s"}, args...)...)
		if err == nil {
			t.Fatalf("%s with no monitor succeeded", args[0])
		}
		want := "cuttle: no monitor answers at " + addr + " yet; retrying until --timeout 8s (is the cluster up? cuttle cluster status)\n"
		if strings.Count(stderr, want) != 1 {
			t.Errorf("%s: stderr %q, want once %q", args[0], stderr, want)
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("%s took %v with --timeout 8s", args[0], took)
		}
	}
}
