package bench

import (
	"fmt"
	"os"
	"syscall"
)

// DropPageCache writes back and evicts path's pages from the kernel's page
// cache (fdatasync, then posix_fadvise POSIX_FADV_DONTNEED over the whole
// file), so the next reads go to the device, as fio's invalidate=1 does.
// When the process may (root), it then drops the whole page cache too, as
// scripts/bench-objectstore.sh does before fio's reads: DONTNEED alone
// left a just-read file partly cached on the benchmark machines.
func DropPageCache(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("fdatasync %s: %w", path, err)
	}
	const fadvDontNeed = 4
	if _, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); errno != 0 {
		return fmt.Errorf("fadvise %s: %w", path, errno)
	}
	// Best effort: an unprivileged run keeps the per-file drop above.
	_ = os.WriteFile("/proc/sys/vm/drop_caches", []byte("1"), 0)
	return nil
}
