package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// The fs and mds commands against a launched monitor: a file system
// made on two pools is listed, shown, changed, refused removal while
// joinable, failed and removed; every answer also comes as JSON, and
// errors name what to do.
func TestFSCommandsOnLaunchedCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a")
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--dir", dir, "--base-port", base, "--osds", "0"); err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	c := &localCluster{t: t, dir: dir, conf: filepath.Join(dir, "cuttle.conf")}
	c.cli("osd", "pool", "create", "cephfs_metadata", "8")
	c.cli("osd", "pool", "create", "cephfs_data", "8")
	c.cli("osd", "pool", "create", "more", "8")
	c.cli("fs", "new", "cephfs", "cephfs_metadata", "cephfs_data")
	if out := c.cli("fs", "ls"); out != "name: cephfs, metadata pool: cephfs_metadata, data pools: [cephfs_data ]\n" {
		t.Fatalf("fs ls: %q", out)
	}
	var ls []struct {
		Name      string   `json:"name"`
		DataPools []string `json:"data_pools"`
	}
	if err := json.Unmarshal([]byte(c.cli("--format", "json", "fs", "ls")), &ls); err != nil || len(ls) != 1 || ls[0].Name != "cephfs" {
		t.Fatalf("fs ls json: %v %+v", err, ls)
	}
	c.cli("fs", "set", "cephfs", "max_mds", "2")
	c.cli("fs", "add_data_pool", "cephfs", "more")
	var st struct {
		FileSystems []struct {
			MaxMDS    int      `json:"max_mds"`
			DataPools []string `json:"data_pools"`
		} `json:"filesystems"`
	}
	if err := json.Unmarshal([]byte(c.cli("--format", "json", "fs", "status", "cephfs")), &st); err != nil ||
		len(st.FileSystems) != 1 || st.FileSystems[0].MaxMDS != 2 || len(st.FileSystems[0].DataPools) != 2 {
		t.Fatalf("fs status json: %v %+v", err, st)
	}
	if out := c.cli("status"); !strings.Contains(out, "    mds: cephfs:0\n") || !strings.Contains(out, "1 filesystem is offline") {
		t.Fatalf("status without MDS daemons:\n%s", out)
	}
	_, _, err := run(t, "--conf", c.conf, "fs", "rm", "cephfs", "--yes-i-really-mean-it")
	if err == nil || !strings.Contains(err.Error(), "fs fail cephfs") || !strings.Contains(err.Error(), "EINVAL") {
		t.Fatalf("fs rm while joinable: %v", err)
	}
	_, _, err = run(t, "--conf", c.conf, "fs", "new", "other", "cephfs_metadata", "more")
	if err == nil || !strings.Contains(err.Error(), "already used by file system 'cephfs'") {
		t.Fatalf("fs new on used pools: %v", err)
	}
	c.cli("fs", "fail", "cephfs")
	c.cli("fs", "rm", "cephfs", "--yes-i-really-mean-it")
	if out := c.cli("fs", "ls"); out != "No filesystems enabled\n" {
		t.Fatalf("fs ls after rm: %q", out)
	}
	c.cli("osd", "blocklist", "add", "10.0.0.5:6800/77", "600")
	var bl []struct {
		Addr string `json:"addr"`
	}
	if err := json.Unmarshal([]byte(c.cli("--format", "json", "osd", "blocklist", "ls")), &bl); err != nil || len(bl) != 1 || bl[0].Addr != "10.0.0.5:6800/77" {
		t.Fatalf("osd blocklist ls: %v %+v", err, bl)
	}
	c.cli("osd", "blocklist", "rm", "10.0.0.5:6800/77")
	if out := c.cli("osd", "blocklist", "ls"); out != "listed 0 entries\n" {
		t.Fatalf("osd blocklist ls after rm: %q", out)
	}
	var stat struct {
		Epoch       int `json:"epoch"`
		FileSystems int `json:"filesystems"`
	}
	if err := json.Unmarshal([]byte(c.cli("--format", "json", "mds", "stat")), &stat); err != nil || stat.FileSystems != 0 || stat.Epoch != 6 {
		t.Fatalf("mds stat json: %v %+v", err, stat)
	}
}
