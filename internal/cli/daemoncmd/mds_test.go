package daemoncmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
)

// mds mkfs makes the data directory (auth none: no key) and refuses a
// directory that holds something; mds run's flags become the daemon's
// config, and a missing --id is an error that says so.
func TestMDSMkfsAndConfig(t *testing.T) {
	cf := &clusterconn.Flags{MonHost: "a=127.0.0.1:1"}
	dir := filepath.Join(t.TempDir(), "mds.a")
	res, err := mdsMkfs(t.Context(), cf, "a", dir)
	if err != nil || res.Auth != "none" {
		t.Fatalf("mkfs: %+v %v", res, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("no directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := mdsMkfs(t.Context(), cf, "a", dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("mkfs in a used directory: %v", err)
	}
	if _, err := mdsMkfs(t.Context(), cf, "", dir); err == nil || !strings.Contains(err.Error(), "--id and --data are required") {
		t.Fatalf("mkfs without --id: %v", err)
	}
	cfg, err := mdsConfig(cf, mdsRunFlags{id: "a", data: dir, listen: "127.0.0.1:0", joinFS: "cephfs",
		options: map[string]string{"mds_reconnect_timeout": "5s"}})
	if err != nil || cfg.Name != "a" || cfg.Auth != "none" || len(cfg.Mons) != 1 || cfg.JoinFS != "cephfs" ||
		cfg.Flags["mds_reconnect_timeout"] != "5s" || cfg.KeyringPath != "" {
		t.Fatalf("config: %+v %v", cfg, err)
	}
	if _, err := mdsConfig(cf, mdsRunFlags{}); err == nil || !strings.Contains(err.Error(), "--id is required") {
		t.Fatalf("run without --id: %v", err)
	}
}
