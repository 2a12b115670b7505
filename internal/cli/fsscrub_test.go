package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// cuttle fs scrub on a launched cluster: refused while an MDS holds the
// rank (EBUSY, saying to fail the file system first); clean (exit 0)
// once the file system is down; a bad omap key written with cuttle
// rados is printed as one line naming the object, what is wrong and
// what to do, in JSON too, and the command exits non-zero.
func TestFSScrubOnLaunchedCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2", "mds.a", "mds.b")
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "256M", "--auth", "none"); err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	c := &localCluster{t: t, dir: dir, conf: filepath.Join(dir, "cuttle.conf")}
	c.waitFor("rank 0 active", func() bool { _, _, state := fsHolder(t, c); return state == "active" })
	_, _, err := run(t, "--conf", c.conf, "fs", "scrub", "cephfs")
	if err == nil || !strings.Contains(err.Error(), "EBUSY") || !strings.Contains(err.Error(), "cuttle fs fail cephfs") {
		t.Fatalf("fs scrub with an active MDS: %v", err)
	}
	c.cli("fs", "fail", "cephfs")
	c.waitFor("rank 0 to have no holder", func() bool { name, _, _ := fsHolder(t, c); return name == "" })
	out := c.cli("fs", "scrub")
	if !strings.HasPrefix(out, "scrub of /: ") || !strings.HasSuffix(out, ": clean\n") {
		t.Fatalf("fs scrub of a new file system: %q", out)
	}
	c.cli("rados", "-p", "cephfs_metadata", "setomapval", "1.00000000", "junk", "x")
	out, _, err = run(t, "--conf", c.conf, "fs", "scrub", "cephfs")
	if err == nil || !strings.Contains(err.Error(), "1 problem(s) found") {
		t.Errorf("fs scrub of a damaged file system exits with %v", err)
	}
	if !strings.HasPrefix(out, `1.00000000 (/): damaged_dentry: omap key "junk": `) || !strings.Contains(out, "rmomapkey") || !strings.Contains(out, ": 1 problem (not checked: hard links") {
		t.Errorf("fs scrub of a damaged file system prints:\n%s", out)
	}
	out, _, _ = run(t, "--conf", c.conf, "--format", "json", "fs", "scrub", "cephfs")
	var rep struct {
		Problems []struct {
			Kind   string `json:"kind"`
			Object string `json:"object"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Problems) != 1 || rep.Problems[0].Kind != "damaged_dentry" || rep.Problems[0].Object != "1.00000000" {
		t.Errorf("fs scrub --format json: %v %s", err, out)
	}
	// --repair fixes a directory's link count, not a bad key.
	c.cli("rados", "-p", "cephfs_metadata", "cp", "100.00000000", "abc123.00000000")
	out, _, err = run(t, "--conf", c.conf, "fs", "scrub", "--repair")
	if err == nil || !strings.Contains(out, "repaired: abc123.00000000: orphan_dirfrag: ") || !strings.Contains(out, `damaged_dentry: omap key "junk"`) {
		t.Errorf("fs scrub --repair: %v\n%s", err, out)
	}
	c.cli("rados", "-p", "cephfs_metadata", "rmomapkey", "1.00000000", "junk")
	if out := c.cli("fs", "scrub", "cephfs", "--path", "/"); !strings.HasSuffix(out, ": clean\n") {
		t.Errorf("fs scrub after the key's removal: %q", out)
	}
}
