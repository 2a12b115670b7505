package blocktest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A snapshot taken with `cuttle rbd snap create` while fio writes through
// a `cuttle nbd serve` process that holds the image's exclusive lock: the
// command asks the server for the lock, which lets its writes in flight
// finish first, so the snapshot is crash-consistent — every write fio had
// completed before it is there, and every block is whole (no torn
// block). `cuttle rbd export IMAGE@SNAP` saves it; after fio, the image
// differs from it; `cuttle rbd snap rollback` (the server still running)
// makes them identical for qemu-img compare, through the server.
func TestSnapshotUnderFio(t *testing.T) {
	needTools(t, "fio", "qemu-img")
	c := upCluster(t)
	const size = 32 * mib
	c.cli("rbd", "create", "vm", "--size", "32M", "--object-size", "1M")
	srv := c.serve("vm")
	f := startFio(t, fioArgs(srv.uri("vm"), size, 7, false)...)
	at, running := f.until(func(p fioProgress) bool { return p.Written >= size*3/8 })
	if !running {
		f.wait()
		t.Fatalf("fio ended before 12 MiB were written (%+v)", at)
	}
	c.cli("rbd", "snap", "create", "vm@mid")
	after, running := f.until(func(fioProgress) bool { return true })
	t.Logf("snapshot taken after fio had written %d KiB (%d KiB once it was taken; fio still running: %v)", at.Written>>10, after.Written>>10, running)
	file := filepath.Join(t.TempDir(), "mid.raw")
	c.cli("rbd", "export", "vm@mid", file)
	if end := f.wait(); end.Written != size {
		t.Fatalf("fio wrote %d bytes, want %d", end.Written, size)
	}
	mid, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	written, err := fioBlocks(mid)
	if err != nil {
		t.Fatalf("the snapshot: %v", err)
	}
	if int64(written)*fioBlock < at.Written {
		t.Fatalf("the snapshot holds %d blocks of 16 KiB, fewer than fio had completed before it was taken (%d bytes)", written, at.Written)
	}
	if written*fioBlock == size {
		t.Fatal("the snapshot holds all of fio's writes: it was taken after fio ended")
	}
	// qemu-img compare exits 1 for images that differ (2 for an error).
	var exit *exec.ExitError
	if out, err := toolErr("qemu-img", "compare", "-f", "raw", "-F", "raw", srv.uri("vm"), file); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("qemu-img compare of the image after fio and its snapshot: %v\n%s", err, out)
	}
	c.cli("rbd", "snap", "rollback", "vm@mid")
	tool(t, "qemu-img", "compare", "-f", "raw", "-F", "raw", srv.uri("vm"), file)
	srv.stop()
}
