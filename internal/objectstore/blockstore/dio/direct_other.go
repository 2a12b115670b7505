//go:build !linux

package dio

import "os"

// OpenDirect returns nil: direct I/O is implemented on Linux only.
func OpenDirect(string) *os.File { return nil }

// AdviseRandom does nothing: readahead advice is given on Linux only.
func AdviseRandom(uintptr) {}

// DropCached does nothing: OpenDirect returns no descriptor whose writes
// could leave stale cached pages.
func DropCached(uintptr, uint64, int) {}

// StartWriteback does nothing: the data sync that follows writes back.
func StartWriteback(uintptr, uint64, uint64) {}

// WriteVectored writes bufs, which follow each other, at offset off of
// f, one WriteAt each.
func WriteVectored(f File, bufs [][]byte, off uint64) error {
	for _, b := range bufs {
		if _, err := f.WriteAt(b, int64(off)); err != nil {
			return err
		}
		off += uint64(len(b))
	}
	return nil
}
