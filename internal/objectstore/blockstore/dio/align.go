package dio

import (
	"io"
	"unsafe"
)

// Align is the alignment O_DIRECT needs of a buffer, an offset and a
// length: the largest logical block size of common devices.
const Align = 4096

// AlignedBuf returns a zeroed n-byte slice whose first byte is Align
// aligned.
func AlignedBuf(n int) []byte {
	if n > 0 && n%Align == 0 {
		// Go's allocator places objects of these sizes (its size
		// classes that are multiples of 4 KiB, and large objects) on
		// 4 KiB boundaries in practice; check rather than rely on it.
		b := make([]byte, n)
		if uintptr(unsafe.Pointer(&b[0]))&(Align-1) == 0 {
			return b
		}
	}
	b := make([]byte, n+Align)
	skip := 0
	if r := int(uintptr(unsafe.Pointer(&b[0])) & (Align - 1)); r != 0 {
		skip = Align - r
	}
	return b[skip : skip+n : skip+n]
}

// IsAligned reports whether p at off suits O_DIRECT: p is not empty, and
// its memory, its length and off are Align aligned.
func IsAligned(p []byte, off uint64) bool {
	return len(p) > 0 && off%Align == 0 && len(p)%Align == 0 &&
		uintptr(unsafe.Pointer(&p[0]))&(Align-1) == 0
}

// File is what WriteVectored writes: a file with a descriptor, such as
// an *os.File or a vfs.File on the OS's file system.
type File interface {
	io.WriterAt
	Fd() uintptr
}
