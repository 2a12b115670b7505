package bufpool

import "syscall"

// adviseHuge asks for huge pages under b (whole huge pages), now: the Go
// allocator may have touched b already, and memory touched before
// MADV_HUGEPAGE stays on small pages until khugepaged, which scans
// slowly, collapses it. MADV_COLLAPSE (Linux 6.1) does that at once.
// Both are best effort: without them the buffer works on small pages.
func adviseHuge(b []byte) {
	const madvHugepage, madvCollapse = 14, 25
	if len(b) == 0 {
		return
	}
	if syscall.Madvise(b, madvHugepage) == nil {
		_ = syscall.Madvise(b, madvCollapse)
	}
}
