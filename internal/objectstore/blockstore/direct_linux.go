package blockstore

import (
	"os"
	"syscall"
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
