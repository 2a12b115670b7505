package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/daemon"
)

// monProc is one monitor daemon process of a multi-process test.
type monProc struct {
	name, data string
	cmd        *exec.Cmd
	log        *bytes.Buffer
	exited     chan error
}

type procCluster struct {
	t       *testing.T
	dir     string
	conf    string
	hosts   string
	mons    map[string]*monProc
	metrics map[string]string // monitor -> its metrics address
	netns   map[string]string // monitor -> the network namespace it runs in, if any
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// newProcCluster makes three monitors with cephx auth. The admin keyring
// also holds client.ro, which may only read.
func newProcCluster(t *testing.T) *procCluster {
	t.Helper()
	ports := freePorts(t, 6)
	return newProcClusterAt(t, fmt.Sprintf("a=127.0.0.1:%d,b=127.0.0.1:%d,c=127.0.0.1:%d", ports[0], ports[1], ports[2]),
		map[string]string{"a": fmt.Sprintf("127.0.0.1:%d", ports[3]), "b": fmt.Sprintf("127.0.0.1:%d", ports[4]), "c": fmt.Sprintf("127.0.0.1:%d", ports[5])}, nil)
}

// newProcClusterAt makes the three monitors at the given addresses,
// each in its network namespace if netns names one.
func newProcClusterAt(t *testing.T, hosts string, metricsAddrs, netns map[string]string) *procCluster {
	t.Helper()
	dir := t.TempDir()
	c := &procCluster{t: t, dir: dir, conf: filepath.Join(dir, "cuttle.conf"), mons: map[string]*monProc{},
		metrics: metricsAddrs, netns: netns, hosts: hosts}
	kr := auth.Keyring{
		{Type: "client", ID: "admin"}: {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *"}},
		{Type: "client", ID: "ro"}:    {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow r"}},
		daemon.MonKeyName:             {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *"}},
	}
	if err := auth.SaveKeyring(filepath.Join(dir, "admin.keyring"), kr); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, stderr, err := run(t, "mon", "mkfs", "--id", name, "--data", filepath.Join(dir, name), "--mon-host", c.hosts,
			"--admin-keyring", filepath.Join(dir, "admin.keyring"), "--conf-out", c.conf); err != nil {
			t.Fatalf("mkfs mon.%s: %v %s", name, err, stderr)
		}
		c.start(name)
	}
	t.Cleanup(func() {
		for name := range c.mons {
			c.kill(name)
		}
	})
	return c
}

func (c *procCluster) start(name string) {
	c.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		c.t.Fatal(err)
	}
	p := &monProc{name: name, data: filepath.Join(c.dir, name), log: &bytes.Buffer{}, exited: make(chan error, 1)}
	args := []string{"mon", "run", "--id", name, "--data", p.data, "--log-level", "debug"}
	if addr := c.metrics[name]; addr != "" {
		args = append(args, "--metrics-addr", addr)
	}
	p.cmd = exec.Command(exe, args...)
	if ns := c.netns[name]; ns != "" {
		// ip netns exec enters the namespace and execs the daemon, so
		// the process and its SIGKILL are the daemon's own.
		p.cmd = exec.Command("ip", append([]string{"netns", "exec", ns, exe}, args...)...)
	}
	p.cmd.Env = append(os.Environ(), daemonEnv+"=1")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	c.mons[name] = p
}

// kill ends a monitor with SIGKILL: no chance to flush or close.
func (c *procCluster) kill(name string) {
	p := c.mons[name]
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	delete(c.mons, name)
	if c.t.Failed() {
		c.t.Logf("mon.%s log:\n%s", name, lastLines(p.log.String(), 40))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// cli runs a cuttle command against the cluster as entity name.
func (c *procCluster) cli(name string, args ...string) (string, error) {
	c.t.Helper()
	full := append([]string{"--conf", c.conf, "--name", name, "--timeout", "60s"}, args...)
	stdout, stderr, err := run(c.t, full...)
	if err != nil {
		return stdout, fmt.Errorf("%w (stderr %q)", err, stderr)
	}
	return stdout, nil
}

func (c *procCluster) must(args ...string) string {
	c.t.Helper()
	out, err := c.cli("client.admin", args...)
	if err != nil {
		c.t.Fatalf("cuttle %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// leader asks the monitors which one leads. "mon stat" is answered only
// after a read index, which needs a leader, so the answer names one.
func (c *procCluster) leader() string {
	c.t.Helper()
	var st struct {
		Leader string `json:"leader"`
	}
	out := c.must("--format", "json", "mon", "stat")
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Leader == "" {
		c.t.Fatalf("mon stat: %v: %q", err, out)
	}
	return st.Leader
}

// Three monitor processes: the leader killed with SIGKILL, the other two
// keep accepting changes; the killed one restarts from its store and
// catches up; a restart of all three loses nothing.
func TestMonitorProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process monitor test")
	}
	c := newProcCluster(t)
	c.must("config", "set", "osd", "osd_max_backfills", "3")
	c.must("osd", "pool", "create", "rbd", "16", "--size", "2")
	if out := c.must("osd", "create"); strings.TrimSpace(out) != "0" {
		t.Fatalf("osd create: %q", out)
	}
	leader := c.leader()
	c.kill(leader)
	c.must("config", "set", "osd", "osd_max_backfills", "7")
	c.must("config", "set", "global", "osd_recovery_max_active", "5")
	c.must("osd", "pool", "create", "data", "8")
	c.must("osd", "set", "noout")
	c.start(leader)
	// Ask the restarted monitor alone: it answers after catching up.
	port := strings.Split(strings.Split(c.hosts, leader+"=")[1], ",")[0]
	out, err := c.cli("client.admin", "--mon-host", leader+"="+port, "config", "get", "osd", "osd_max_backfills")
	if err != nil || !strings.Contains(out, "7") {
		t.Fatalf("restarted mon.%s: %q, %v", leader, out, err)
	}
	for _, name := range []string{"a", "b", "c"} {
		c.kill(name)
	}
	for _, name := range []string{"a", "b", "c"} {
		c.start(name)
	}
	out = c.must("config", "dump")
	if !strings.Contains(out, "osd_max_backfills") || !strings.Contains(out, "7") || !strings.Contains(out, "osd_recovery_max_active") {
		t.Fatalf("after a full restart: %q", out)
	}
	if out := c.must("osd", "pool", "ls"); out != "rbd\ndata\n" {
		t.Fatalf("pools after a full restart: %q", out)
	}
	if out := c.must("health"); !strings.Contains(out, "noout flag(s) set") {
		t.Fatalf("health with noout set: %q", out)
	}
	if out := c.must("status"); !strings.Contains(out, "quorum a,b,c") {
		t.Logf("status after restart (quorum may still be forming):\n%s", out)
	}
}

// Refusals: a wrong key, an unknown entity, a forbidden command.
func TestMonitorAuthRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process monitor test")
	}
	c := newProcCluster(t)
	bad := filepath.Join(c.dir, "bad.keyring")
	if err := auth.SaveKeyring(bad, auth.Keyring{
		{Type: "client", ID: "admin"}: {Key: auth.NewSecret()},
		{Type: "client", ID: "ghost"}: {Key: auth.NewSecret()},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cli("client.admin", "--keyring", bad, "status"); err == nil || !strings.Contains(err.Error(), "proof does not match") {
		t.Errorf("wrong key: %v", err)
	}
	if _, err := c.cli("client.ghost", "--keyring", bad, "status"); err == nil || !strings.Contains(err.Error(), "unknown entity") {
		t.Errorf("unknown entity: %v", err)
	}
	if out, err := c.cli("client.ro", "status"); err != nil || !strings.Contains(out, "HEALTH") {
		t.Errorf("read-only client reading: %q, %v", out, err)
	}
	_, err := c.cli("client.ro", "config", "set", "osd", "osd_max_backfills", "2")
	if err == nil || !strings.Contains(err.Error(), "(EACCES)") {
		t.Errorf("read-only client writing: %v", err)
	}
	// Every refusal is counted; sum the monitors' counters.
	var proof, unknown, forbidden float64
	for _, addr := range c.metrics {
		page := scrape(t, addr)
		proof += metricValue(page, `cuttle_auth_refusals_total{reason="bad proof"}`)
		unknown += metricValue(page, `cuttle_auth_refusals_total{reason="unknown entity"}`)
		forbidden += metricValue(page, `cuttle_auth_refusals_total{reason="forbidden"}`)
	}
	if proof < 1 || unknown < 1 || forbidden < 1 {
		t.Errorf("refusal counters: bad proof %v, unknown entity %v, forbidden %v", proof, unknown, forbidden)
	}
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// metricValue returns the value of the series line starting with name.
func metricValue(page, name string) float64 {
	for _, line := range strings.Split(page, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}
