package dio

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cuttlestore/cuttle/internal/rawio"
)

// OpenDirect opens path for reading and writing with O_DIRECT,
// bypassing the page cache (nil if the file system refuses it).
func OpenDirect(path string) *os.File {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_DIRECT, 0)
	if err != nil {
		return nil
	}
	return f
}

// AdviseRandom turns the kernel's readahead off for the file fd.
func AdviseRandom(fd uintptr) {
	_ = unix.Fadvise(int(fd), 0, 0, unix.FADV_RANDOM)
}

// DropCached asks the kernel to drop fd's cached pages of [off, off+n),
// so that the next buffered read of them goes to the device.
func DropCached(fd uintptr, off uint64, n int) {
	_ = unix.Fadvise(int(fd), int64(off), int64(n), unix.FADV_DONTNEED)
}

// StartWriteback starts the writeback of fd's dirty pages in
// [off, off+n) without waiting for it (a data sync that follows waits).
//
// It and WriteVectored, the applier's calls, are raw system calls, which
// the Go runtime does not treat as blocking. Ordinary ones cost small
// writes 10-15% of their IOPS: the first after the OSD idled woke the
// runtime's monitor thread, which then polled every 20 us, and a call
// that outlasted a poll (sync_file_range submits the I/O and rings the
// virtual disk's doorbell) had its P handed to another thread, which
// found nothing to do. Neither call waits for the device in the common
// case: the pages go to the cache, and writeback skips pages already
// under it. When the kernel does make one wait (a full device queue, or
// dirty-page throttling), the OSD's other goroutines wait with it if it
// runs on one P; that is rare, short, and worth the steady gain.
func StartWriteback(fd uintptr, off, n uint64) {
	_, _, _ = unix.RawSyscall6(unix.SYS_SYNC_FILE_RANGE, fd, uintptr(off), uintptr(n), unix.SYNC_FILE_RANGE_WRITE, 0, 0)
}

// WriteVectored writes bufs, which follow each other, at offset off of
// f through the page cache: one pwritev of f's descriptor, a raw call
// (see StartWriteback).
func WriteVectored(f File, bufs [][]byte, off uint64) error {
	return rawio.Pwritev(f.Fd(), bufs, off)
}
