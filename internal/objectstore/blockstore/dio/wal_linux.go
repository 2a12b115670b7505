//go:build linux && (amd64 || arm64)

package dio

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A WAL written around the page cache. Through the page cache each
// group commit's sync costs an append into cached pages, then, in the
// sync, the kernel's writeback of those pages: finding, locking and
// tagging them, a request per run, the pages' state again on
// completion. Under small writes that is a tenth of an OSD's CPU. A
// directWAL keeps the WAL's unwritten tail in an aligned buffer of its
// own and, at each sync, hands the device the tail's pages in one
// O_DIRECT write with RWF_DSYNC: the write and its durability in one AIO
// request. The last page is usually partial; it is written padded with
// zeros and written again, with more records, at the next sync. Pebble's
// WAL reader takes zeros after the last record as the log's end, as it
// does for a preallocated tail (and recycled WALs carry the log number
// in every chunk, so older records past the zeros are not replayed).
//
// Pebble's LogWriter calls Write, Sync and Close from one goroutine at a
// time, so a directWAL does not lock; it shares its AIO context, whose
// methods are safe for concurrent use, with the store's other syncs.

// directWALBuffer is the most of a WAL's tail a directWAL holds: writes
// that would overflow it write out what it holds first. Group commits of
// 4 KiB writes are tens of kilobytes.
const directWALBuffer = 1 << 20

// directWAL is a WAL file (the vfs.File Pebble opened, which keeps
// Stat and Close) whose data goes through direct, the same file opened
// with O_DIRECT.
type directWAL struct {
	vfs.File
	direct *os.File
	fd     uintptr // direct's descriptor
	aio    *AIO
	// buf[:n] is the WAL from file offset off (aligned) to its end;
	// buf[:written] is on the device already (part of the last page
	// written).
	buf     []byte
	n       int
	written int
	off     int64
	err     error // the first failed write: the WAL is unusable after it
}

// NewDirectWAL returns f, the WAL file Pebble created at path (empty,
// or recycled and written from its start), with its writes made
// through O_DIRECT and a's AIO context. It returns f itself where the
// file system refuses O_DIRECT (tmpfs, for one).
func NewDirectWAL(f vfs.File, path string, a *AIO) vfs.File {
	if a == nil {
		return f
	}
	direct := OpenDirect(path)
	if direct == nil {
		return f
	}
	return &directWAL{File: f, direct: direct, fd: direct.Fd(), aio: a, buf: AlignedBuf(directWALBuffer)}
}

// Write appends p to the buffered tail, writing out the tail first
// whenever it would overflow.
func (w *directWAL) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		if w.err != nil {
			return total - len(p), w.err
		}
		if w.n == len(w.buf) {
			if err := w.writeTail(); err != nil {
				return total - len(p), err
			}
		}
		c := copy(w.buf[w.n:], p)
		w.n += c
		p = p[c:]
	}
	return total, nil
}

// Sync makes every byte written so far durable.
func (w *directWAL) Sync() error {
	if w.err != nil {
		return w.err
	}
	if w.n == w.written {
		return nil // every byte went out durably already
	}
	return w.writeTail()
}

// SyncData is Sync: a WAL's writes need no metadata beyond what an
// O_DSYNC write makes durable.
func (w *directWAL) SyncData() error { return w.Sync() }

// SyncTo makes everything durable: there is nothing cheaper to do for a
// prefix.
func (w *directWAL) SyncTo(int64) (fullSync bool, err error) {
	return true, w.Sync()
}

// Preallocate allocates [off, off+length) and, unlike Pebble's, extends
// the file over it. ext4 completes an O_DIRECT write that extends a
// file inside io_submit, where it would hold the OSD's thread (and,
// submitted raw, its P) until the device had it: 4 KiB O_DSYNC writes
// spent 128 µs in io_submit past the file's end against 13-18 µs
// within it. Pebble's reader takes the zeros past the last record for
// the log's end.
func (w *directWAL) Preallocate(off, length int64) error {
	return syscall.Fallocate(int(w.fd), 0, off, length)
}

// Close makes the WAL durable and closes both descriptors.
func (w *directWAL) Close() error {
	err := w.Sync()
	if cerr := w.direct.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if cerr := w.File.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeTail writes the buffered tail, its last page padded with zeros,
// durably; then keeps only that last page's bytes, which the next
// write extends.
func (w *directWAL) writeTail() error {
	end := (w.n + Align - 1) &^ (Align - 1)
	clear(w.buf[w.n:end])
	if err := w.writeDurably(w.buf[:end], w.off); err != nil {
		w.err = fmt.Errorf("direct WAL write of %d bytes at %d: %w", end, w.off, err)
		return w.err
	}
	full := w.n &^ (Align - 1)
	w.n = copy(w.buf, w.buf[full:w.n])
	w.written = w.n
	w.off += int64(full)
	return nil
}

// writeDurably writes p at off through the O_DIRECT descriptor and
// returns once it is durable: one AIO request with RWF_DSYNC, or, where
// the AIO context turns it away (or there is none), a write and an
// fdatasync.
func (w *directWAL) writeDurably(p []byte, off int64) error {
	if w.aio != nil {
		err := w.aio.writeDSync(uint32(w.fd), p, off)
		if !errors.Is(err, ErrBusy) {
			return err
		}
	}
	if _, err := w.direct.WriteAt(p, off); err != nil {
		return err
	}
	return syscall.Fdatasync(int(w.fd))
}
