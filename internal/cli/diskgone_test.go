package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cuttlestore/cuttle/internal/launcher"
)

// ext4Shutdown is EXT4_IOC_SHUTDOWN (_IOR('X', 125, __u32)) and
// ext4NoLogFlush its flag that drops what the journal has not written:
// from then on every read and write on the file system fails with EIO,
// as on a disk that is gone.
const (
	ext4Shutdown   = 0x8004587d
	ext4NoLogFlush = 2
)

// ext4Disk is a file system on a loop device that a test can make fail
// under a running process.
type ext4Disk struct {
	t        *testing.T
	img, dir string
}

// newExt4Disk makes an ext4 file system of size bytes in an image file
// and mounts it at dir, or skips the test where it cannot (not root, no
// mkfs.ext4, no loop devices).
func newExt4Disk(t *testing.T, dir, size string) *ext4Disk {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a file system")
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("needs mkfs.ext4 (e2fsprogs)")
	}
	d := &ext4Disk{t: t, img: filepath.Join(t.TempDir(), "disk.img"), dir: dir}
	for _, cmd := range [][]string{{"truncate", "-s", size, d.img}, {"mkfs.ext4", "-q", d.img}} {
		if err := sh(t, cmd...); err != nil {
			t.Fatal(err)
		}
	}
	if err := sh(t, "mount", "-o", "loop", d.img, dir); err != nil {
		t.Skipf("cannot mount a loop device here: %v", err)
	}
	// Lazily: the cluster's OSD may still run when cleanup starts.
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return d
}

// fail makes every later I/O on the file system return EIO.
func (d *ext4Disk) fail() {
	d.t.Helper()
	f, err := os.Open(d.dir)
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	if err := unix.IoctlSetPointerInt(int(f.Fd()), ext4Shutdown, ext4NoLogFlush); err != nil {
		d.t.Fatalf("shutting the file system down: %v", err)
	}
}

// replace unmounts the failed file system and mounts it again, as when
// the disk comes back: what its journal had not written is gone, as on
// a power cut, but everything synced is there.
func (d *ext4Disk) replace() {
	d.t.Helper()
	for _, cmd := range [][]string{{"umount", d.dir}, {"mount", "-o", "loop", d.img, d.dir}} {
		if err := sh(d.t, cmd...); err != nil {
			d.t.Fatal(err)
		}
	}
}

// An OSD's disk gone while clients write (its store's reads and writes
// fail with EIO): the OSD asks to be marked down and stops instead of
// hanging, writes go on without it, and once the disk is back and the
// OSD restarted, it catches up; the cluster returns to HEALTH_OK with
// every acknowledged write intact.
func TestSURFsaraDiskGone(t *testing.T) {
	s := newSURFClusterOf(t, 1, 4)
	// Move osd.3's data onto a file system of its own.
	s.kill("osd.3")
	data := filepath.Join(s.dir, "osd.3")
	if err := os.Rename(data, data+".orig"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	disk := newExt4Disk(t, data, "1G")
	// sync: the copy must be on the disk, not only in its journal, which
	// the failure below throws away.
	for _, cmd := range [][]string{{"cp", "-a", data + ".orig/.", data}, {"sync", "-f", data}} {
		if err := sh(t, cmd...); err != nil {
			t.Fatal(err)
		}
	}
	s.restart()
	s.healthOK()

	stop := s.writer()
	s.keepsWriting("before the disk fails", 50)
	disk.fail()
	s.waitFor("osd.3 to stop on its failed disk", 2*time.Minute, func() bool {
		return localStatus(t, s.dir)["osd.3"].State == launcher.Stopped
	})
	s.keepsWriting("with osd.3's disk gone", 50)
	disk.replace()
	s.restart()
	s.keepsWriting("after the disk came back", 20)
	stop()
	s.healthOK()
	s.verify()
}
