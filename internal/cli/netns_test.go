package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// netnsLab puts each monitor in its own network namespace, joined to
// the test's namespace by a veth pair on a bridge: taking a monitor's
// link down partitions it from everyone, as a cut cable would.
type netnsLab struct {
	t      *testing.T
	bridge string
	ns     map[string]string // monitor -> namespace
	hostIf map[string]string // monitor -> its veth end on the bridge
	ip     map[string]string // monitor -> address
}

func sh(t *testing.T, args ...string) error {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// newNetnsLab builds the namespaces, or skips the test where it cannot
// (not root, no ip command, namespaces not permitted).
func newNetnsLab(t *testing.T, names ...string) *netnsLab {
	t.Helper()
	if testing.Short() {
		t.Skip("network-namespace test")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs the ip command (iproute2)")
	}
	id := os.Getpid() % 10000
	subnet := fmt.Sprintf("10.%d.%d", 100+id/250, id%250)
	lab := &netnsLab{t: t, bridge: fmt.Sprintf("cbr%d", id), ns: map[string]string{}, hostIf: map[string]string{}, ip: map[string]string{}}
	if err := sh(t, "ip", "link", "add", lab.bridge, "type", "bridge"); err != nil {
		t.Skipf("cannot create a bridge here: %v", err)
	}
	t.Cleanup(lab.destroy)
	for _, cmd := range [][]string{
		{"ip", "addr", "add", subnet + ".254/24", "dev", lab.bridge},
		{"ip", "link", "set", lab.bridge, "up"},
	} {
		if err := sh(t, cmd...); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range names {
		ns, host, peer := fmt.Sprintf("cns%d%s", id, n), fmt.Sprintf("cvh%d%s", id, n), fmt.Sprintf("cvn%d%s", id, n)
		lab.ns[n], lab.hostIf[n], lab.ip[n] = ns, host, fmt.Sprintf("%s.%d", subnet, i+1)
		for _, cmd := range [][]string{
			{"ip", "netns", "add", ns},
			{"ip", "link", "add", host, "type", "veth", "peer", "name", peer},
			{"ip", "link", "set", peer, "netns", ns},
			{"ip", "link", "set", host, "master", lab.bridge},
			{"ip", "link", "set", host, "up"},
			{"ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"},
			{"ip", "netns", "exec", ns, "ip", "addr", "add", lab.ip[n] + "/24", "dev", peer},
			{"ip", "netns", "exec", ns, "ip", "link", "set", peer, "up"},
		} {
			if err := sh(t, cmd...); err != nil {
				t.Fatal(err)
			}
		}
	}
	return lab
}

func (l *netnsLab) destroy() {
	for _, ns := range l.ns {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
	_ = exec.Command("ip", "link", "del", l.bridge).Run()
}

func (l *netnsLab) setLink(name string, up bool) {
	l.t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	if err := sh(l.t, "ip", "link", "set", l.hostIf[name], state); err != nil {
		l.t.Fatal(err)
	}
}

// cliIn runs a cuttle command inside a monitor's namespace, as a
// separate process (a client on the far side of the partition).
func (c *procCluster) cliIn(ns string, args ...string) (string, error) {
	c.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		c.t.Fatal(err)
	}
	full := append([]string{"netns", "exec", ns, exe, "--conf", c.conf}, args...)
	cmd := exec.Command("ip", full...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A monitor cut off by the network (its namespace's link down) cannot
// commit: writes sent to it fail, while the two on the other side keep
// committing; once the link is back it catches up.
func TestMonitorNetworkPartition(t *testing.T) {
	lab := newNetnsLab(t, "a", "b", "c")
	hosts := fmt.Sprintf("a=%s:6789,b=%s:6789,c=%s:6789", lab.ip["a"], lab.ip["b"], lab.ip["c"])
	c := newProcClusterAt(t, hosts, nil, lab.ns)
	c.must("config", "set", "osd", "osd_max_backfills", "3")

	lab.setLink("c", false)
	out, err := c.cliIn(lab.ns["c"], "--mon-host", "c="+lab.ip["c"]+":6789", "--timeout", "8s",
		"config", "set", "global", "osd_recovery_max_active", "9")
	if err == nil {
		t.Fatalf("the cut-off monitor committed a write: %s", out)
	}
	majority := fmt.Sprintf("a=%s:6789,b=%s:6789", lab.ip["a"], lab.ip["b"])
	if _, err := c.cli("client.admin", "--mon-host", majority, "config", "set", "osd", "osd_max_backfills", "8"); err != nil {
		t.Fatalf("the majority refused a write: %v", err)
	}
	out, err = c.cli("client.admin", "--mon-host", majority, "config", "dump")
	if err != nil || strings.Contains(out, "osd_recovery_max_active") || !strings.Contains(out, "8") {
		t.Fatalf("majority's config during the partition: %q, %v", out, err)
	}

	lab.setLink("c", true)
	out, err = c.cli("client.admin", "--mon-host", "c="+lab.ip["c"]+":6789", "config", "get", "osd", "osd_max_backfills")
	if err != nil || !strings.Contains(out, "8") {
		t.Fatalf("the healed monitor reads %q, %v", out, err)
	}
}
