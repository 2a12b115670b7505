package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/rados"
)

// nsDaemon is a daemon process running in one of a netnsLab's
// namespaces.
type nsDaemon struct {
	cmd    *exec.Cmd
	log    bytes.Buffer
	exited chan error
}

// startIn runs `cuttle ARGS` as a daemon inside namespace ns.
func startIn(t *testing.T, ns string, args ...string) *nsDaemon {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := &nsDaemon{exited: make(chan error, 1)}
	// ip netns exec execs the daemon: the process is the daemon's own.
	d.cmd = exec.Command("ip", append([]string{"netns", "exec", ns, exe}, args...)...)
	d.cmd.Env = append(os.Environ(), daemonEnv+"=1")
	d.cmd.Stdout, d.cmd.Stderr = &d.log, &d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(func() {
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.exited
		if t.Failed() {
			t.Logf("%s in %s:\n%s", args[0:2], ns, d.log.String())
		}
	})
	return d
}

// An OSD cut off from everyone by the network (its namespace's link
// down) while a client writes: its peers report it, the monitors mark it
// down, and writes go on without it; when the link is back, it finds it
// was marked down, boots again, and catches up. The cluster ends
// HEALTH_OK with every acknowledged write intact.
func TestOSDNetworkPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	lab := newNetnsLab(t, "m", "o0", "o1", "o2", "o3")
	dir := t.TempDir()
	conf, keyring := filepath.Join(dir, "cuttle.conf"), filepath.Join(dir, "admin.keyring")
	kr := auth.Keyring{
		{Type: "client", ID: "admin"}: {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *", "osd": "allow *"}},
		monKeyName:                    {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *"}},
	}
	if err := auth.SaveKeyring(keyring, kr); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, "mon", "mkfs", "--id", "a", "--data", filepath.Join(dir, "mon.a"),
		"--mon-host", "a="+lab.ip["m"]+":6789", "--admin-keyring", keyring, "--conf-out", conf); err != nil {
		t.Fatalf("mon mkfs: %v %s", err, stderr)
	}
	startIn(t, lab.ns["m"], "mon", "run", "--id", "a", "--data", filepath.Join(dir, "mon.a"))
	s := &surfCluster{t: t, dir: dir, conf: conf, acked: map[string]int{}, unknown: map[string][]int{}}
	s.cli("osd", "crush", "rule", "create-replicated", "replicated_osd", "default", "osd")
	s.cli("config", "set", "global", "mon_osd_reporter_subtree_level", "osd")
	s.cli("osd", "pool", "create", "rbd", "16", "--size", "3", "--min-size", "2", "--rule", "replicated_osd")
	for i := range 4 {
		data := filepath.Join(dir, fmt.Sprint("osd.", i))
		s.cli("osd", "mkfs", "--data", data, "--size", "256M")
		ns := lab.ns[fmt.Sprint("o", i)]
		startIn(t, ns, "osd", "run", "--id", fmt.Sprint(i), "--data", data, "--conf", conf,
			"--listen", lab.ip[fmt.Sprint("o", i)]+":6800", "--cache-size", "32M")
	}
	s.healthOK()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := rados.ConnectConf(ctx, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s.conn = conn
	if s.io, err = conn.OpenIOContext("rbd"); err != nil {
		t.Fatal(err)
	}

	stop := s.writer()
	s.keepsWriting("before the partition", 50)
	lab.setLink("o1", false)
	s.waitFor("osd.1 marked down", 2*time.Minute, func() bool { return strings.Contains(s.cli("osd", "stat"), "3 up") })
	s.keepsWriting("with osd.1 cut off", 50)
	lab.setLink("o1", true)
	s.waitFor("osd.1 back up", 2*time.Minute, func() bool { return strings.Contains(s.cli("osd", "stat"), "4 up") })
	s.keepsWriting("after the partition healed", 50)
	stop()
	s.healthOK()
	s.verify()
	t.Logf("%d writes acknowledged through an OSD partition", s.acknowledged())
}
