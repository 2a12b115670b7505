package blocktest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A kernel file system on an image exported by a `cuttle nbd serve`
// process while an OSD is killed mid-write: nbdfuse shows the export as a
// file, a loop device makes it a disk, mkfs.ext4 formats it; 300 files
// (about 12 MiB) are written, synced every 50, osd.1 SIGKILLed after the
// 100th and restarted meanwhile; then unmounted, fsck.ext4 -fn finds it
// clean, and a second mount reads every file back with its checksum. It
// needs root (FUSE, a loop device, mount).
func TestExt4WhileOSDKilled(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: FUSE, a loop device and mount")
	}
	needTools(t, "nbdfuse", "mkfs.ext4", "fsck.ext4", "losetup", "mount", "umount", "fusermount3")
	c := upCluster(t)
	c.cli("rbd", "create", "fs", "--size", "64M", "--object-size", "1M")
	srv := c.serve("fs")
	dir := t.TempDir()
	fuseDir, mnt := filepath.Join(dir, "fuse"), filepath.Join(dir, "mnt")
	for _, d := range []string{fuseDir, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(fuseDir, "fs")
	mountFuse(t, fuseDir, file, srv.uri("fs"))
	tool(t, "mkfs.ext4", "-q", "-F", file)
	loop := strings.TrimSpace(tool(t, "losetup", "-f", "--show", file))
	t.Cleanup(func() { _, _ = toolErr("losetup", "-d", loop) })
	mounted := false
	mount := func() { tool(t, "mount", loop, mnt); mounted = true }
	umount := func() { tool(t, "umount", mnt); mounted = false }
	t.Cleanup(func() {
		if mounted {
			_, _ = toolErr("umount", mnt)
		}
	})
	mount()

	rng := rand.New(rand.NewPCG(7, 7))
	sums := map[string][32]byte{}
	var restarted <-chan error
	for i := range 300 {
		if i == 100 {
			c.kill("osd.1")
			restarted = c.restartAsync()
		}
		d := filepath.Join(fmt.Sprintf("d%02d", i%12), fmt.Sprintf("s%d", i%3))
		name := filepath.Join(d, fmt.Sprintf("f%03d", i))
		data := make([]byte, rng.IntN(80<<10))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		if err := os.MkdirAll(filepath.Join(mnt, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mnt, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		sums[name] = sha256.Sum256(data)
		if i%50 == 49 {
			syscall.Sync() // to the export, while the OSD is down or coming back
		}
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	syscall.Sync()
	umount()
	if out, err := toolErr("fsck.ext4", "-f", "-n", loop); err != nil {
		t.Fatalf("fsck.ext4 -fn: %v\n%s", err, out)
	}
	mount()
	for name, want := range sums {
		got, err := os.ReadFile(filepath.Join(mnt, name))
		if err != nil || sha256.Sum256(got) != want {
			t.Fatalf("%s after remounting: %v (%d bytes)", name, err, len(got))
		}
	}
	umount()
}

// mountFuse runs nbdfuse (four connections: multi-conn) to show export
// uri as file, returns once it is ready (nbdfuse writes its pid file then:
// here a FIFO this test reads) and unmounts it at the test's end.
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
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close() // unblock the reader
		}
		t.Fatalf("nbdfuse exited before it was ready: %v\n%s", err, stderr.String())
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("nbdfuse not ready after a minute\n%s", stderr.String())
	}
	t.Cleanup(func() {
		if out, err := toolErr("fusermount3", "-u", dir); err != nil {
			t.Errorf("fusermount3 -u: %v\n%s", err, out)
			_ = cmd.Process.Kill()
		}
		if err := <-exited; err != nil {
			t.Errorf("nbdfuse: %v\n%s", err, stderr.String())
		}
	})
}
