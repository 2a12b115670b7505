package nbd_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/nbd"
	"github.com/cuttlestore/cuttle/rbd"
)

// A real kernel file system on an image: nbdfuse (four connections:
// multi-conn) shows the export as a file, mkfs.ext4 formats it, a loop
// device mounts it, a tree is written while an OSD is stopped and
// started again, and after unmounting fsck.ext4 -f finds it clean and a
// second mount reads the tree back. It needs root (FUSE, loop devices,
// mount).
func TestExt4OverNBDFuse(t *testing.T) {
	if testing.Short() {
		t.Skip("a kernel file system over NBD: a few seconds")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: FUSE, a loop device and mount")
	}
	needTools(t, "nbdfuse", "mkfs.ext4", "fsck.ext4", "losetup", "mount", "umount", "fusermount3")
	c, p := rbdCluster(t)
	ctx := context.Background()
	if err := p.Create(ctx, "fs", 64*mib, rbd.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, sock := serveExports(t, nbd.Export{Name: "fs", Backend: nbd.NewRBD(open(t, p, "fs", rbd.OpenOptions{}), false)})
	dir := t.TempDir()
	fuseDir, mnt := filepath.Join(dir, "fuse"), filepath.Join(dir, "mnt")
	for _, d := range []string{fuseDir, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(fuseDir, "fs")
	mountFuse(t, fuseDir, file, "nbd+unix:///fs?socket="+sock)
	run(t, "mkfs.ext4", "-q", "-F", file)
	loop := strings.TrimSpace(run(t, "losetup", "-f", "--show", file))
	t.Cleanup(func() { _, _ = runErr("losetup", "-d", loop) })
	mount := func() {
		run(t, "mount", loop, mnt)
	}
	umount := func() { run(t, "umount", mnt) }
	mount()
	mounted := true
	t.Cleanup(func() {
		if mounted {
			_, _ = runErr("umount", mnt)
		}
	})

	// The tree: 100 files of up to 128 KiB in 10 directories, an OSD
	// stopped after the first half and started after the last.
	rng := rand.New(rand.NewPCG(7, 7))
	files := map[string][]byte{}
	for i := range 100 {
		if i == 50 {
			c.StopOSD(1)
		}
		d := filepath.Join("d"+strconv.Itoa(i%10), "sub")
		name := filepath.Join(d, fmt.Sprintf("f%03d", i))
		data := make([]byte, rng.IntN(128<<10))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		if err := os.MkdirAll(filepath.Join(mnt, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mnt, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	syscall.Sync()
	c.StartOSD(1)
	umount()
	mounted = false
	if out, err := runErr("fsck.ext4", "-f", "-n", loop); err != nil {
		t.Fatalf("fsck.ext4 -f: %v\n%s", err, out)
	}
	mount()
	mounted = true
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(mnt, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s after remounting: %v (%d bytes, want %d)", name, err, len(got), len(want))
		}
	}
	umount()
	mounted = false
}

// mountFuse runs nbdfuse to show export uri as file, returns once it is
// ready (nbdfuse writes its pid file then: here a FIFO this test reads)
// and unmounts it at the test's end.
func mountFuse(t *testing.T, dir, file, uri string) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "nbdfuse.pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("nbdfuse", "-C", "4", "-P", fifo, file, uri)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ready := make(chan error, 1)
	go func() {
		_, err := os.ReadFile(fifo) // blocks until nbdfuse writes it
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case err := <-exited:
		// Unblock the reader.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatalf("nbdfuse exited before it was ready: %v\n%s", err, stderr.String())
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("nbdfuse not ready after a minute\n%s", stderr.String())
	}
	t.Cleanup(func() {
		if out, err := runErr("fusermount3", "-u", dir); err != nil {
			t.Errorf("fusermount3 -u: %v\n%s", err, out)
			_ = cmd.Process.Kill()
		}
		if err := <-exited; err != nil {
			t.Errorf("nbdfuse: %v\n%s", err, stderr.String())
		}
	})
}
