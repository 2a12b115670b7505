package bufpool

import "unsafe"

// HugePage is the size of a transparent huge page on the platforms
// where Huge uses them.
const HugePage = 2 << 20

// Huge returns a zeroed buffer of n bytes that starts on a HugePage
// boundary and, where the kernel allows (Linux with transparent huge
// pages in "madvise" or "always" mode), lies on huge pages. The device
// reads and writes such a buffer with O_DIRECT as a few large segments:
// a 4 MiB buffer on ordinary pages is 1,024 pages, which the kernel pins
// one by one and splits into requests of about 1 MiB, and on the
// benchmark machine 4 MiB O_DIRECT writes from it took 2-3 times the CPU
// of writes from huge pages and ran at a half to a third of their speed.
// Buffers under HugePage are plain allocations.
//
// The buffer lives in the Go heap, so the collector frees it like any
// other; the alignment costs up to HugePage of address space more.
func Huge(n int) []byte {
	if n < HugePage {
		return make([]byte, n)
	}
	b := make([]byte, n+HugePage)
	skip := (HugePage - int(uintptr(unsafe.Pointer(&b[0]))%HugePage)) % HugePage
	b = b[skip : skip+n : skip+n]
	adviseHuge(b[:n/HugePage*HugePage])
	return b
}
