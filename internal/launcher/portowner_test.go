package launcher

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCuttleDaemon(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		name, dir string
		ok        bool
	}{
		{[]string{"/usr/bin/cuttle", "mon", "run", "--id", "a", "--data", "/c/mon.a", "--metrics-addr", "x"}, "mon.a", "/c", true},
		{[]string{"cuttle", "osd", "run", "--id", "2", "--data=/srv/c/osd.2/", "--conf", "/srv/c/cuttle.conf"}, "osd.2", "/srv/c", true},
		{[]string{"cuttle", "osd", "run", "--id", "2"}, "", "", false},
		{[]string{"cuttle", "rados", "run", "--data", "/c/x"}, "", "", false},
		{[]string{"nginx", "-g", "daemon off;"}, "", "", false},
		{nil, "", "", false},
	} {
		name, dir, ok := cuttleDaemon(tc.args)
		if name != tc.name || dir != tc.dir || ok != tc.ok {
			t.Errorf("%q: %q %q %v, want %q %q %v", tc.args, name, dir, ok, tc.name, tc.dir, tc.ok)
		}
	}
}

func TestIsCluster(t *testing.T) {
	dir := t.TempDir()
	if isCluster(dir) {
		t.Error("an empty directory is a cluster")
	}
	if err := os.WriteFile(filepath.Join(dir, recordFile), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !isCluster(dir) {
		t.Error("a directory with a record is not a cluster")
	}
}
