package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// localCluster is a cluster of one monitor and three 256 MiB OSDs that
// cluster up started as processes, for the multi-process tests.
type localCluster struct {
	t    *testing.T
	dir  string
	conf string
}

// upLocalCluster starts one in a fresh directory.
func upLocalCluster(t *testing.T) *localCluster {
	t.Helper()
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2")
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "256M"); err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	return &localCluster{t: t, dir: dir, conf: filepath.Join(dir, "cuttle.conf")}
}

// cli runs a command against the cluster and returns its output,
// failing the test if it fails.
func (c *localCluster) cli(args ...string) string {
	c.t.Helper()
	out, stderr, err := run(c.t, append([]string{"--conf", c.conf}, args...)...)
	if err != nil {
		c.t.Fatalf("cuttle %s: %v %s", strings.Join(args, " "), err, stderr)
	}
	return out
}

// waitFor polls cond until it holds, failing after a minute with the
// cluster's health.
func (c *localCluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("still waiting for %s; health:\n%s", what, c.cli("health", "detail"))
		}
		<-tick.C
	}
}
