package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cuttlestore/cuttle/internal/fsx"
	"github.com/cuttlestore/cuttle/internal/posixtest"
)

// mountFS mounts the cluster's file system on a new directory with
// `cuttle mount` (its own process, as a user runs it) and unmounts it
// when the test ends.
func mountFS(t *testing.T, conf string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := cuttleProc(t, "mount", "--conf", conf, "-o", "allow_other", "--log-file", dir+".log", dir)
	if err != nil {
		t.Fatalf("cuttle mount: %v\n%s%s", err, out, stderr)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Logf("unmount %s: %v; detaching it", dir, err)
			unix.Unmount(dir, unix.MNT_DETACH)
		}
		if t.Failed() {
			b, _ := os.ReadFile(dir + ".log")
			t.Logf("mount log:\n%s", lastLines(string(b), 40))
		}
	})
	// Other users (the POSIX suite's unprivileged checks) reach it
	// through the temporary directories.
	for _, p := range []string{filepath.Dir(filepath.Dir(dir)), filepath.Dir(dir)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func needFUSE(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root here")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
}

// Issue 38: a cluster made by cluster up, its file system mounted with
// cuttle mount; the POSIX suite and fsx pass on the mount, and a second
// mount sees what the first wrote.
func TestMountedFileSystem(t *testing.T) {
	needFUSE(t)
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2", "mds.a", "mds.b")
	out, stderr, err := cuttleProc(t, "cluster", "up", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "1G")
	if err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	conf := filepath.Join(dir, "cuttle.conf")
	a := mountFS(t, conf)
	b := mountFS(t, conf)

	t.Run("posix", func(t *testing.T) { posixtest.Run(t, a) })
	t.Run("fsx", func(t *testing.T) {
		res, err := fsx.Run(context.Background(), fsx.Config{Paths: []string{filepath.Join(a, "fsx")}, Seed: 7, Ops: 2000, MaxSize: 4 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", res)
	})
	t.Run("two mounts", func(t *testing.T) {
		p := filepath.Join(a, "shared")
		if err := os.WriteFile(p, []byte("written on a"), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(b, "shared"))
		if err != nil || string(got) != "written on a" {
			t.Fatalf("read on b: %q, %v", got, err)
		}
		if err := os.Rename(p, filepath.Join(a, "renamed")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(b, "shared")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("b still sees the old name: %v", err)
		}
		ents, err := os.ReadDir(b)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if !strings.Contains(strings.Join(names, " "), "renamed") {
			t.Fatalf("b lists %v", names)
		}
	})
}
