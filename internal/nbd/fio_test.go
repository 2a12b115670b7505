package nbd_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/cuttlestore/cuttle/internal/nbd"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rbd"
)

// counted is a Backend decorator that closes a channel when the n-th
// write reaches it, so that a test acts at a known point of a client's
// run.
type counted struct {
	nbd.Backend
	mu     sync.Mutex
	writes int
	at     map[int]chan struct{}
}

func (c *counted) WriteAt(ctx context.Context, p []byte, off uint64, fua bool) error {
	c.mu.Lock()
	c.writes++
	if ch, ok := c.at[c.writes]; ok {
		close(ch)
	}
	c.mu.Unlock()
	return c.Backend.WriteAt(ctx, p, off, fua)
}

// fioArgs run fio's nbd engine on uri: 64 KiB blocks written at random
// over 16 MiB (256 writes), 16 in flight, then every block read back and
// its crc32c verified (fio fails on the first bad one).
func fioArgs(uri string, seed int) []string {
	return []string{"--name=verify", "--ioengine=nbd", "--uri=" + uri, "--rw=randwrite", "--bs=64k", "--iodepth=16",
		"--size=16M", "--verify=crc32c", "--do_verify=1", "--verify_fatal=1", "--verify_state_save=0", fmt.Sprintf("--randseed=%d", seed)}
}

// fio against exports of one cluster: across an OSD restart, and with a
// snapshot taken under it.
func TestFio(t *testing.T) {
	if testing.Short() {
		t.Skip("fio over NBD: several seconds")
	}
	needTools(t, "fio", "qemu-img")
	if out, _ := exec.Command("fio", "--enghelp").CombinedOutput(); !strings.Contains(string(out), "nbd") {
		t.Fatalf("this fio has no nbd engine:\n%s", out)
	}
	c, p := rbdCluster(t)
	t.Run("osd restart", func(t *testing.T) { testFioAcrossOSDRestart(t, c, p) })
	t.Run("snapshot", func(t *testing.T) { testSnapshotUnderFio(t, p) })
}

// fio verifies every block it wrote while an OSD was stopped (after the
// 80th write) and started again (after the 180th).
func testFioAcrossOSDRestart(t *testing.T, c *sim.Cluster, p *rbd.Pool) {
	ctx := context.Background()
	if err := p.Create(ctx, "fio", 16*mib, rbd.CreateOptions{Order: 20}); err != nil {
		t.Fatal(err)
	}
	stop, start := make(chan struct{}), make(chan struct{})
	b := &counted{Backend: nbd.NewRBD(open(t, p, "fio", rbd.OpenOptions{}), false), at: map[int]chan struct{}{80: stop, 180: start}}
	_, sock := serveExports(t, nbd.Export{Name: "fio", Backend: b})
	done := make(chan error, 1)
	var out []byte
	go func() {
		var err error
		out, err = exec.Command("fio", fioArgs("nbd+unix:///fio?socket="+sock, 41)...).CombinedOutput()
		done <- err
	}()
	for i, ch := range []chan struct{}{stop, start} {
		select {
		case <-ch:
		case err := <-done:
			t.Fatalf("fio ended before write %d: %v\n%s", []int{80, 180}[i], err, out)
		}
		if i == 0 {
			c.StopOSD(1)
		} else {
			c.StartOSD(1)
		}
	}
	// verify_fatal: fio fails on the first bad block. Its read line is
	// the verification's reads: all 16 MiB.
	if err := <-done; err != nil || !strings.Contains(string(out), "read: IOPS=") || !strings.Contains(string(out), "io=16.0MiB") {
		t.Fatalf("fio: %v\n%s", err, out)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.writes != 256 {
		t.Fatalf("%d writes reached the image, want 256 (16 MiB in 64 KiB blocks)\n%s", b.writes, out)
	}
}

// A snapshot taken through the image the server exports while fio
// writes to it (after the 128th of 256 writes) holds the image as it
// was then: the head differs from it after fio (qemu-img compare exits
// 1), fio verifies every block, and after a rollback to it the head
// and the snapshot's export compare equal.
func testSnapshotUnderFio(t *testing.T, p *rbd.Pool) {
	ctx := context.Background()
	if err := p.Create(ctx, "vm", 16*mib, rbd.CreateOptions{Order: 20}); err != nil {
		t.Fatal(err)
	}
	img := open(t, p, "vm", rbd.OpenOptions{})
	snap := make(chan struct{})
	b := &counted{Backend: nbd.NewRBD(img, false), at: map[int]chan struct{}{128: snap}}
	tcp, sock := serveExports(t, nbd.Export{Name: "vm", Backend: b})
	done := make(chan error, 1)
	var out []byte
	go func() {
		var err error
		out, err = exec.Command("fio", fioArgs("nbd+unix:///vm?socket="+sock, 7)...).CombinedOutput()
		done <- err
	}()
	select {
	case <-snap:
	case err := <-done:
		t.Fatalf("fio ended before write 128: %v\n%s", err, out)
	}
	if err := img.SnapCreate(ctx, "mid"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("fio: %v\n%s", err, out)
	}
	snapTCP, _ := serveExports(t, nbd.Export{Name: "vm@mid", Backend: nbd.NewRBD(open(t, p, "vm", rbd.OpenOptions{Snap: "mid"}), true)})
	head, at := "nbd://"+tcp+"/vm", "nbd://"+snapTCP+"/vm@mid"
	// qemu-img compare exits 1 for images that differ (2 for an error).
	var exit *exec.ExitError
	if out, err := runErr("qemu-img", "compare", "-f", "raw", "-F", "raw", head, at); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("qemu-img compare of the head and the snapshot after 128 more writes: %v\n%s", err, out)
	}
	if err := img.SnapRollback(ctx, "mid"); err != nil {
		t.Fatal(err)
	}
	run(t, "qemu-img", "compare", "-f", "raw", "-F", "raw", head, at)
}
