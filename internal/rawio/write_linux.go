package rawio

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// Append writes all of p at fd's file offset with raw write calls: for
// files whose writes land in the page cache and are made durable by a
// later sync, so that they do not wait for the device.
func Append(fd uintptr, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		w, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
		if err := progress("write", w, e); err != nil {
			return n, err
		}
		n += int(w)
	}
	return n, nil
}

// Pwritev writes all of bufs, which follow each other, at offset off of
// fd with raw pwritev calls (for page-cache writes, as Append).
func Pwritev(fd uintptr, bufs [][]byte, off uint64) error {
	iov := Iovecs(make([]syscall.Iovec, 0, len(bufs)), bufs)
	for len(iov) > 0 {
		n, _, e := syscall.RawSyscall6(syscall.SYS_PWRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(min(len(iov), MaxIovecs)), uintptr(off), 0, 0)
		if err := progress("pwritev", n, e); err != nil {
			return err
		}
		off += uint64(n)
		iov = Skip(iov, int(n))
	}
	return nil
}

// progress judges one write call of a loop: nil to go on (EINTR reports
// zero bytes), else the error that ends it. A call that wrote nothing
// without an error never happens for a non-empty buffer; it ends the
// loop rather than spin.
func progress(call string, n uintptr, e syscall.Errno) error {
	switch {
	case e == syscall.EINTR:
		return nil
	case e != 0:
		return os.NewSyscallError(call, e)
	case n == 0:
		return io.ErrShortWrite
	}
	return nil
}
