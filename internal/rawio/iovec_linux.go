package rawio

import (
	"unsafe"

	"syscall"
)

// MaxIovecs is the most iovecs one writev or pwritev takes (IOV_MAX).
const MaxIovecs = 1024

// Iovecs appends to dst an iovec for each non-empty buffer of bufs. The
// iovecs point into the buffers, which stay reachable while they do.
func Iovecs(dst []syscall.Iovec, bufs [][]byte) []syscall.Iovec {
	for _, b := range bufs {
		if len(b) > 0 {
			v := syscall.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			dst = append(dst, v)
		}
	}
	return dst
}

// Skip drops the first n bytes, written by a short write, from iov.
func Skip(iov []syscall.Iovec, n int) []syscall.Iovec {
	for n > 0 && len(iov) > 0 {
		l := int(iov[0].Len)
		if n < l {
			iov[0].Base = (*byte)(unsafe.Add(unsafe.Pointer(iov[0].Base), n))
			iov[0].SetLen(l - n)
			return iov
		}
		n -= l
		iov = iov[1:]
	}
	return iov
}
