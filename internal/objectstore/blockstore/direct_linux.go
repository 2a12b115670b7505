package blockstore

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openDirect opens path for reading and writing with O_DIRECT,
// bypassing the page cache (nil if the file system refuses it).
func openDirect(path string) *os.File {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_DIRECT, 0)
	if err != nil {
		return nil
	}
	return f
}

// adviseRandom turns the kernel's readahead off for the file fd.
func adviseRandom(fd uintptr) {
	_ = unix.Fadvise(int(fd), 0, 0, unix.FADV_RANDOM)
}

// dropCached asks the kernel to drop the data file's cached pages of
// [off, off+n), so that the next buffered read of them goes to the device.
func (s *Store) dropCached(off uint64, n int) {
	_ = unix.Fadvise(int(s.file.Fd()), int64(off), int64(n), unix.FADV_DONTNEED)
}

// startWriteback starts the writeback of the data file's dirty pages in
// [off, off+n) without waiting for it (the data sync that follows waits).
func (s *Store) startWriteback(off, n uint64) {
	if s.direct == nil {
		return // not an OS file (vfs.NewMem in tests)
	}
	_ = unix.SyncFileRange(int(s.file.Fd()), int64(off), int64(n), unix.SYNC_FILE_RANGE_WRITE)
}

// writeVectored writes bufs, which follow each other, at offset off of the
// data file: one pwritev where the file is an OS file.
func (s *Store) writeVectored(bufs [][]byte, off uint64) error {
	if s.direct == nil {
		return s.writeEach(bufs, off) // not an OS file (tests)
	}
	fd := int(s.file.Fd())
	for len(bufs) > 0 {
		n, err := unix.Pwritev(fd, bufs, int64(off))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return err
		case n == 0:
			return io.ErrShortWrite
		}
		off += uint64(n)
		for n > 0 { // skip what was written
			if n < len(bufs[0]) {
				bufs[0] = bufs[0][n:]
				break
			}
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
	}
	return nil
}
