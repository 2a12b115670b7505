package fusemount

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cuttlestore/cuttle/internal/fsx"
	"github.com/cuttlestore/cuttle/internal/posixtest"
	"golang.org/x/sys/unix"
)

// mountMem mounts a memFS on a temporary directory, or skips where FUSE
// cannot be used (not root, no /dev/fuse).
func mountMem(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting FUSE in tests needs root")
	}
	dir := t.TempDir()
	m, err := New(context.Background(), dir, newMemFS(), Options{AllowOther: true})
	if errors.Is(err, ErrNoFUSE) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	// Other users (posixtest's unprivileged checks) must reach it.
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The POSIX suite passes through the mount: what the kernel sends is
// translated faithfully, errnos included.
func TestPOSIXThroughMount(t *testing.T) {
	posixtest.Run(t, mountMem(t))
}

// fsx through the mount: reads, writes, truncates, mmap, fallocate and
// hole punching reach the file system and come back byte for byte.
//
// fsx runs in a child process: a page fault on a mapping of a file this
// process serves would wait for this process's FUSE server while the Go
// runtime, unable to preempt the faulting thread, waits for it to stop
// the world — a deadlock no real user meets (the mount is its own
// process).
func TestFSXThroughMount(t *testing.T) {
	if p := os.Getenv("FUSEMOUNT_FSX_FILE"); p != "" {
		res, err := fsx.Run(context.Background(), fsx.Config{Paths: []string{p}, Seed: 42, Ops: 3000, MaxSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", res)
		return
	}
	dir := mountMem(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestFSXThroughMount$", "-test.v")
	cmd.Env = append(os.Environ(), "FUSEMOUNT_FSX_FILE="+filepath.Join(dir, "fsx"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fsx on the mount: %v\n%s", err, out)
	}
}

func TestStatfsAndXattrs(t *testing.T) {
	dir := mountMem(t)
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Blocks != 1<<20 || st.Namelen != 255 {
		t.Fatalf("statfs: %+v %v", st, err)
	}
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(p, "user.a", []byte("value"), 0); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(p, "user.a", []byte("x"), unix.XATTR_CREATE); err != unix.EEXIST {
		t.Fatalf("XATTR_CREATE on an existing name: %v", err)
	}
	buf := make([]byte, 2)
	if _, err := unix.Getxattr(p, "user.a", buf); err != unix.ERANGE {
		t.Fatalf("getxattr into a small buffer: %v", err)
	}
	buf = make([]byte, 64)
	if n, err := unix.Getxattr(p, "user.a", buf); err != nil || string(buf[:n]) != "value" {
		t.Fatalf("getxattr: %q %v", buf[:n], err)
	}
	if n, err := unix.Listxattr(p, buf); err != nil || string(buf[:n]) != "user.a\x00" {
		t.Fatalf("listxattr: %q %v", buf[:n], err)
	}
	if _, err := unix.Getxattr(p, "user.none", buf); err != unix.ENODATA {
		t.Fatalf("getxattr of a missing name: %v", err)
	}
	if err := unix.Removexattr(p, "user.a"); err != nil {
		t.Fatal(err)
	}
}

func TestLocksThroughMount(t *testing.T) {
	dir := mountMem(t)
	p := filepath.Join(dir, "locked")
	a, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := unix.Flock(int(a.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("flock: %v", err)
	}
	b, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := unix.Flock(int(b.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != unix.EWOULDBLOCK {
		t.Fatalf("a second flock on a locked file: %v, want EWOULDBLOCK", err)
	}
	if err := unix.Flock(int(a.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(b.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		t.Fatalf("flock after unlock: %v", err)
	}
}

func TestReaddirPlusLarge(t *testing.T) {
	dir := mountMem(t)
	for i := range 500 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 500 {
		t.Fatalf("listed %d of 500", len(ents))
	}
	for _, e := range ents {
		if _, err := e.Info(); err != nil {
			t.Fatal(err)
		}
	}
}
