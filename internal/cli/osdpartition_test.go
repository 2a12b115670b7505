package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/daemon"
)

// nsDaemon is a daemon process running in one of a netnsLab's
// namespaces.
type nsDaemon struct {
	cmd  *exec.Cmd
	log  bytes.Buffer
	done chan struct{} // closed when the process has exited
}

// startIn runs `cuttle ARGS` as a daemon inside namespace ns; the test's
// end kills it if it still runs.
func startIn(t *testing.T, ns string, args ...string) *nsDaemon {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := &nsDaemon{done: make(chan struct{})}
	// ip netns exec execs the daemon: the process is the daemon's own.
	d.cmd = exec.Command("ip", append([]string{"netns", "exec", ns, exe}, args...)...)
	d.cmd.Env = append(os.Environ(), daemonEnv+"=1")
	d.cmd.Stdout, d.cmd.Stderr = &d.log, &d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		d.kill()
		if t.Failed() {
			t.Logf("%s in %s:\n%s", args[0:2], ns, d.log.String())
		}
	})
	return d
}

// kill ends the daemon with SIGKILL and waits until it is gone.
func (d *nsDaemon) kill() {
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

// nsCluster is a cluster whose monitor and OSDs each run in a network
// namespace of their own, joined by a bridge to the test's namespace,
// where the client runs: taking an OSD's link down cuts it off from
// everyone.
type nsCluster struct {
	*surfCluster
	lab  *netnsLab
	osds []*nsDaemon // nil while stopped
	args [][]string  // each OSD's osd run command
}

// newNSCluster starts a monitor and n OSDs (256 MiB stores) in their
// namespaces, a size-3 pool rbd of 16 PGs (min_size 2) with one copy per
// OSD, and waits for HEALTH_OK.
func newNSCluster(t *testing.T, n int) *nsCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	names := []string{"m"}
	for i := range n {
		names = append(names, fmt.Sprint("o", i))
	}
	lab := newNetnsLab(t, names...)
	dir := t.TempDir()
	conf, keyring := filepath.Join(dir, "cuttle.conf"), filepath.Join(dir, "admin.keyring")
	kr := auth.Keyring{
		{Type: "client", ID: "admin"}: {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *", "osd": "allow *"}},
		daemon.MonKeyName:             {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *"}},
	}
	if err := auth.SaveKeyring(keyring, kr); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, "mon", "mkfs", "--id", "a", "--data", filepath.Join(dir, "mon.a"),
		"--mon-host", "a="+lab.ip["m"]+":6789", "--admin-keyring", keyring, "--conf-out", conf); err != nil {
		t.Fatalf("mon mkfs: %v %s", err, stderr)
	}
	startIn(t, lab.ns["m"], "mon", "run", "--id", "a", "--data", filepath.Join(dir, "mon.a"))
	c := &nsCluster{surfCluster: &surfCluster{t: t, dir: dir, conf: conf, acked: map[string]int{}, unknown: map[string][]int{}},
		lab: lab, osds: make([]*nsDaemon, n)}
	c.cli("osd", "crush", "rule", "create-replicated", "replicated_osd", "default", "osd")
	c.cli("config", "set", "global", "mon_osd_reporter_subtree_level", "osd")
	c.cli("osd", "pool", "create", "rbd", "16", "--size", "3", "--min-size", "2", "--rule", "replicated_osd")
	for i := range n {
		data := filepath.Join(dir, fmt.Sprint("osd.", i))
		c.cli("osd", "mkfs", "--data", data, "--size", "256M")
		c.args = append(c.args, []string{"osd", "run", "--id", fmt.Sprint(i), "--data", data, "--conf", conf,
			"--listen", lab.ip[fmt.Sprint("o", i)] + ":6800", "--cache-size", "32M"})
		c.start(i)
	}
	c.healthOK()
	c.connect()
	return c
}

// start runs OSD i in its namespace.
func (c *nsCluster) start(i int) {
	c.t.Helper()
	c.osds[i] = startIn(c.t, c.lab.ns[fmt.Sprint("o", i)], c.args[i]...)
}

// kill ends OSD i with SIGKILL.
func (c *nsCluster) kill(i int) {
	c.osds[i].kill()
	c.osds[i] = nil
}

// running reports whether OSD i's process runs.
func (c *nsCluster) running(i int) bool {
	if c.osds[i] == nil {
		return false
	}
	select {
	case <-c.osds[i].done:
		return false
	default:
		return true
	}
}

// cut takes OSD i's link down (true) or up again.
func (c *nsCluster) cut(i int, down bool) { c.lab.setLink(fmt.Sprint("o", i), !down) }

// upOSDs is how many OSDs the map has up.
func (c *nsCluster) upOSDs() int {
	var n, total int
	fmt.Sscanf(c.cli("osd", "stat"), "%d osds: %d up", &total, &n)
	return n
}

// An OSD cut off from everyone by the network (its namespace's link
// down) while a client writes: its peers report it, the monitors mark it
// down, and writes go on without it; when the link is back, it finds it
// was marked down, boots again, and catches up. The cluster ends
// HEALTH_OK with every acknowledged write intact.
func TestOSDNetworkPartition(t *testing.T) {
	c := newNSCluster(t, 4)
	stop := c.writer()
	c.keepsWriting("before the partition", 50)
	c.cut(1, true)
	c.waitFor("osd.1 marked down", 2*time.Minute, func() bool { return c.upOSDs() == 3 })
	c.keepsWriting("with osd.1 cut off", 50)
	c.cut(1, false)
	c.waitFor("osd.1 back up", 2*time.Minute, func() bool { return c.upOSDs() == 4 })
	c.keepsWriting("after the partition healed", 50)
	stop()
	c.healthOK()
	c.verify()
	t.Logf("%d writes acknowledged through an OSD partition", c.acknowledged())
}
